"""Constraints on a chart — one model.

A kinematic constraint is a function ``φ(q, u, t) = 0`` of the configuration, the
velocities and possibly the time (:class:`KinematicConstraints`, the general case,
used by Chetaev's rule).  Linear and affine constraints ``ω^a_A(q) u^A + c^a(q) = 0``
are the special case that defines a distribution D
(:class:`LinearConstraints`, obtained from kinematic constraints by
:meth:`KinematicConstraints.linear`): the one place that reads the linear part.
Virtual displacements (d'Alembert's and Chetaev's) live in
:mod:`~anholo.constraints.displacements`.
"""

from .displacements import ChetaevDisplacements, VirtualDisplacements
from .kinematic import CartesianPullback, KinematicConstraints
from .linear import LinearConstraints

__all__ = [
    "KinematicConstraints",
    "LinearConstraints",
    "CartesianPullback",
    "VirtualDisplacements",
    "ChetaevDisplacements",
]

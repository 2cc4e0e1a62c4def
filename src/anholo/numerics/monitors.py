"""Monitors: functions on TQ evaluated along a computed motion, in natural coordinates.

All monitors are evaluated at ``(q, q̇)`` of a :class:`~anholo.numerics.integrate.Trajectory`,
whatever the field's state, so they mean the same for every field:

* energy ``E_L = q̇^A ∂L/∂q̇^A − L`` (docs/theory.rst, *Lagrangian dynamics in a frame*).  Conserved by the Euler–Lagrange
  field of a time-independent L, by the nonholonomic field for linear (homogeneous)
  constraints, and by the vakonomic field (the energy of ``L + λ_a v^a`` is ``E_L``,
  docs/theory.rst, *Vakonomic dynamics*);
* constraint residuals ``φ_a(q, q̇)`` of the constraints as written.  For the
  nonholonomic field the state lies on C, so they are rounding errors of the
  evaluation of ``q̇ = X_j v^j``;
* momentum maps ``J_ξ = ∂L/∂q̇^A ξ^A(q)`` of a vector field ξ on Q (a symmetry
  generator).  For the Euler–Lagrange field and a symmetry ξ of L, ``J_ξ`` is
  conserved (Noether); for the nonholonomic field only if moreover ξ lies in D
  (otherwise ``dJ_ξ/dt`` is the multiplier term of the momentum equation).
"""

from __future__ import annotations


import numpy as np
import sympy as sp

from ..errors import AnholoError, SimulationError
from ..parsing import as_expression
from .compile import compile_functions

__all__ = ["energy", "energy_drift", "constraint_residuals", "momentum_map", "cyclic_coordinates"]


def energy(traj) -> np.ndarray:
    """``E_L(q(t), q̇(t))`` along the trajectory, shape ``(N,)``."""
    with np.errstate(all="ignore"):
        return traj.system.energy(traj.q, traj.qdot, traj._p, traj.t)


def energy_drift(traj) -> np.ndarray:
    """``|E(t) − E(0)| / |E(0)|`` (the absolute drift if ``E(0) = 0``)."""
    E = energy(traj)
    scale = abs(E[0]) if E[0] != 0 else 1.0
    return np.abs(E - E[0]) / scale


def constraint_residuals(traj) -> np.ndarray:
    """``φ_a(q(t), q̇(t))`` of the constraints as written, shape ``(k, N)``."""
    with np.errstate(all="ignore"):
        return traj.system.constraint_functions(traj.q, traj.qdot, traj._p, traj.t)


def momentum_map(traj, xi) -> np.ndarray:
    """``J_ξ = ∂L/∂q̇^A ξ^A(q)`` along the trajectory.

    ``xi`` is a coordinate name (``ξ = ∂/∂q^A``: the momentum ``∂L/∂q̇^A`` of a cyclic
    coordinate) or a sequence of n components (expressions or strings in the
    coordinates and parameters), e.g. ``["-y", "x", "1"]`` for a rotation of the plane
    together with the heading.

    Raises
    ------
    SimulationError
        If the trajectory's compiled system has no symbolic system attached (trajectories
        computed in worker processes), or ``xi`` is malformed.
    """
    ode = traj.system.ode
    if ode is None:
        raise SimulationError("momentum maps need the symbolic system; compute the trajectory in this process.")
    q = ode.coordinates
    if isinstance(xi, str):
        names = [c.name for c in q]
        if xi not in names:
            raise SimulationError(f"{xi!r} is not a coordinate; use one of {', '.join(names)} or give n components.")
        comps = [sp.S.One if c.name == xi else sp.S.Zero for c in q]
    else:
        comps = list(xi)
        if len(comps) != len(q):
            raise SimulationError(f"a vector field on Q needs {len(q)} components, got {len(comps)}.")
        names = {s.name: s for s in tuple(q) + tuple(ode.parameters)}
        try:  # the safe reader: a string is parsed, never run (sympify would execute it)
            comps = [as_expression(c, names, where=f"component {i + 1} of the vector field", allow_unknown=False)
                     for i, c in enumerate(comps)]
        except AnholoError as exc:
            raise SimulationError(f"cannot read the components of the vector field: {exc}") from None
    L = ode.lagrangian
    J = sp.Add(*[L.diff(u) * c for u, c in zip(ode.velocities, comps) if c != 0])
    f = compile_functions([J], q, ode.velocities, ode.parameters)
    with np.errstate(all="ignore"):
        return f(traj.q, traj.qdot, traj._p)[0]


def cyclic_coordinates(ode) -> tuple:
    """Names of coordinates on which neither L nor the constraints depend (``∂/∂q^A`` is a symmetry)."""
    used = ode.lagrangian.free_symbols
    for c in ode.constraints:
        used |= c.free_symbols
    return tuple(c.name for c in ode.coordinates if c not in used)

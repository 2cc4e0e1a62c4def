"""The discrete Hamel scheme in the adapted frame (Ball & Zenkov (2015); docs/integrators.rst).

Hamel's equations are the Lagrange–d'Alembert equations written in a frame ``{X_i}`` with
quasi-velocities ``q̇ = X_i(q) ξ^i``.  Ball & Zenkov (2015) discretise them by a *reconstruction*
``q_{k+1} = τ(q_k, h ξ_k)`` and a discrete Lagrangian ``l_d(q_k, ξ_k)``, and take variations
``δq_k = X_α(q_k) η_k^α`` with ``η`` in the constraint space (the discrete Hamel equations are the
frame components of the discrete variational equations).  On a Lie group with left-invariant frames
τ is the exponential or the Cayley map and the frame components bring in the structure constants
(Kobilarov, Marsden & Sukhatme (2010) for the nonholonomic case).  anholo's frames are not group
frames; the scheme implemented here, for the adapted frame of Maggi's route (``X_α = ∂_{f_α} +
C^P_α ∂_P`` spanning D, ``X_a = ∂_{P_a}``, :class:`~anholo.dynamics.maggi.MaggiSystem`), is:

* reconstruction at the midpoint: ``q_{k+1} = q_k + h (X_α(q̄_k) ξ_k^α + X_a(q̄_k) β^a(q̄_k))`` with
  ``q̄_k = (q_k + q_{k+1})/2``, where the constrained quasi-velocities are fixed by the constraint,
  ``ξ^a = β^a(q̄)`` (``κ_P β = −c``): the constraint holds in the frame exactly, and the free
  quasi-velocities are ``ξ^α = (q^{f_α}_{k+1} − q^{f_α}_k)/h``;
* discrete Lagrangian ``l_d(q_k, ξ_k) = h l(q̄_k, ξ_k)`` with ``l(q, ξ) = L(q, X(q)ξ)``;
* discrete Hamel equations: the components along ``X_α(q_k)`` of the discrete d'Alembert principle,
  ``⟨D2 l_d(k−1) + f⁺_{k−1} + D1 l_d(k) + f⁻_k, X_α(q_k)⟩ = 0`` (α = 1..m), ``f^± = (h/2)F(q̄, q̇)``,
  with holonomic constraints ``f(q_{k+1}) = 0`` and the frame at ``q_k`` adapted to ``D ∩ ker ∇f``.

Since ``X(q̄)ξ = (q_{k+1} − q_k)/h`` by the reconstruction, ``l_d(q_k, ξ_k) = L_d(q_k, q_{k+1})`` is the
midpoint discrete Lagrangian, and ``{X_α(q_k)}`` spans the d'Alembert variations at ``q_k``: the discrete
Hamel equations are the multiplier-free form of the discrete Lagrange–d'Alembert equations of
:mod:`anholo.numerics.variational` — n equations ``X_α(q_k)ᵀ(P − (h/2)G − p_k) = 0``,
``κ(q̄)v + c = 0``, ``f(q_{k+1}) = 0`` in the n unknowns ``q_{k+1}``, with no multipliers.  Both define
the same discrete flow (tested to the Newton tolerance), so the order (2), the exact discrete constraint
and the long-time behaviour are those of the DLA scheme; the Hamel form solves an n × n system instead of
an (n + k + r) × (n + k + r) one.  This midpoint form is the discrete Hamel scheme of systems without a
group structure the scheme can use; for systems on ``SE(2) × S`` (a Lagrangian and constraints invariant
under the planar motions of ``(x, y, θ)``) and for orientations in Euler angles with a left-invariant
rotational kinetic energy, ``simulate(method="hamel")`` uses the Cayley difference map of Kobilarov, Marsden
& Sukhatme (2010) instead, a genuinely different scheme (:mod:`anholo.numerics.lie_hamel`,
:mod:`anholo.numerics.lie_hamel_so3`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.linalg import qr

from ..errors import NonlinearConstraintError
from .variational import DiscreteMechanics, DLAStepper, _Buffers, march, new_arrays

__all__ = ["integrate_hamel", "adapted_basis"]


def adapted_basis(A: np.ndarray, dependent: Sequence) -> np.ndarray:
    """The basis ``X_α = e_{f_α} + C^P_α e_P`` (columns, n × m) of the kernel of ``A`` (k × n) with
    ``A_P C = −A_f`` for the dependent columns P (Maggi's adapted frame at one point)."""
    n = A.shape[1]
    dep = list(dependent)
    free = [i for i in range(n) if i not in dep]
    B = np.zeros((n, len(free)))
    B[free, range(len(free))] = 1.0
    if dep:
        B[dep, :] = -np.linalg.solve(A[:, dep], A[:, free])
    return B


def integrate_hamel(mech: DiscreteMechanics, p, t0: float, h: float, nsteps: int, q0, qdot0, progress=None,
                    inputs=None, watch=None, arrays=None) -> tuple:
    """The grid, positions ``q_k``, momenta ``p_k``, midpoint velocities and the number of evaluations of
    the discrete Hamel scheme (module docstring), from ``(q0, q̇0)`` with ``p_0 = ∂L/∂q̇(q0, q̇0)``, and None
    or the exception that ended the run early (:func:`~anholo.numerics.variational.march`: Ctrl-C, the time
    budget or a failed step; the arrays then hold the steps done).  ``inputs``, ``watch``, ``arrays``: as for
    :func:`~anholo.numerics.variational.integrate_dla`.

    Raises
    ------
    NonlinearConstraintError
        For constraints not affine in the velocities: they define no distribution, so there is no adapted
        frame (and no multiplier-free form: the Chetaev forces of the two steps meeting at ``q_k`` have
        different directions).
    """
    if mech.chetaev:
        raise NonlinearConstraintError(
            f"{mech.name!r} has a constraint not affine in the velocities: it defines no distribution, so the "
            "discrete Hamel scheme has no adapted frame; use --method variational (Chetaev's rule at the "
            "midpoint) or DOP853.")
    buf = _Buffers(mech.n, p, len(mech.inputs))
    k, r = mech.k, mech.r

    def constraint_rows(q, t):
        kap, _, fq, _ = mech.point(buf.at_q(q, t))
        return np.vstack([kap, fq]) if k + r else np.zeros((0, mech.n))

    A_init = constraint_rows(np.asarray(q0, dtype=float), t0)
    if mech.dependent is not None and r == 0:
        dependent = list(mech.dependent)  # the dependent velocities of Maggi's route
    elif k + r:
        dependent = sorted(qr(A_init, pivoting=True)[2][:k + r].tolist())  # best conditioned at q0
    else:
        dependent = []

    def frame(A):
        return adapted_basis(A, dependent)

    stepper = DLAStepper(mech, p, h, frame=frame, inputs=inputs)
    Qs, Ps, V = arrays if arrays is not None else new_arrays(mech.n, nsteps)
    Qs[0] = q0
    Ps[0] = mech.terms(buf.at(q0, qdot0, t0))[0]
    done, stop = march(stepper.step, Qs, Ps, V, t0, h, nsteps, np.asarray(q0) - h * np.asarray(qdot0), progress,
                       watch)
    return (t0 + h * np.arange(done + 1), Qs[:done + 1], Ps[:done + 1], V[:done], stepper.evaluations + 1,
            stop)

"""Virtual displacements as velocity derivatives: Talamucci's Property 1 (Talamucci (2025), eq. (33)).

A system of particles at ``r_s(q, t)`` (s = 1..N) under kinematic constraints ``φ^ν(q, q̇, t) = 0``,
solved for the dependent velocities ``q̇^{m+ν} = α_ν(q, q̇^1..q̇^m, t)`` (his eq. (24)).  A class of virtual
displacements ``β δq = 0`` gives ``δq^{m+ν} = γ_νr δq^r`` (r = 1..m; eq. (21)); the displacements of the
particles are then (eq. (31), with ``δq_j`` for the misprinted ``δq_r`` under the sum over j)

    δr_s = Σ_{j=1}^n ∂r_s/∂q^j δq^j = Σ_{r=1}^m (∂r_s/∂q^r + Σ_ν ∂r_s/∂q^{m+ν} γ_νr) δq^r.

For a holonomic system ``∂ṙ_s/∂q̇^j = ∂r_s/∂q^j``, so δr_s is also ``Σ_j ∂ṙ_s/∂q̇^j δq^j``.  With the
constraints, ``ṙ_s`` is a function of the independent velocities only,
``ṙ_s = Σ_r ∂r_s/∂q^r q̇^r + Σ_ν ∂r_s/∂q^{m+ν} α_ν + ∂r_s/∂t``, and Property 1 states

    δr_s = Σ_{r=1}^m ∂ṙ_s/∂q̇^r δq^r        (eq. (33))

when the displacements are Chetaev's, ``(∂φ^ν/∂q̇^A) δq^A = 0`` (eq. (14)), i.e. ``γ = ∂α/∂q̇_ind``
(eq. (26)).  The difference of the two sides is ``Σ_ν ∂r_s/∂q^{m+ν} (γ_νr − ∂α_ν/∂q̇^r)``: when the
positions determine the configuration (``∂r/∂q_dep`` of rank k) eq. (33) holds for Chetaev's class
and for no other — Talamucci's "the only one that extends the equivalence".

:func:`displacement_velocity_property` computes both sides of (33) for a given class: the left one from
γ, the right one by differentiating the pulled-back velocities ``ṙ_s(q, q̇)`` (no explicit α needed:
``∂α/∂q̇_ind = −(∂φ/∂q̇_dep)⁻¹ ∂φ/∂q̇_ind`` by implicit differentiation on C), and decides at random points
of C whether they agree.  docs/chetaev.rst.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import sympy as sp

from ..algebra import numeric_value, solve_square
from ..algebra.decision import NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Decision, numerical_rank, vanishes_at
from ..constraints.displacements import ChetaevDisplacements, VirtualDisplacements
from ..constraints.kinematic import CartesianPullback, KinematicConstraints
from ..errors import ArgumentError, ConstraintError

__all__ = ["DisplacementVelocityProperty", "displacement_velocity_property"]


@dataclass(frozen=True, eq=False)
class DisplacementVelocityProperty:
    """Both sides of Talamucci's eq. (33) for one class of virtual displacements.

    Attributes
    ----------
    positions : tuple of Symbol
        The Cartesian coordinates of the particles (rows of the matrices).
    independent, dependent : tuple of int
        Indices of the independent and dependent velocities.
    displacements : sympy Matrix (rows: positions, columns: independent δq^r)
        ``∂r/∂q_ind + ∂r/∂q_dep γ`` (eq. (31) with the class's ``δq_dep = γ δq_ind``).
    velocity_derivatives : sympy Matrix (same shape)
        ``∂ṙ/∂q̇_ind`` on C, ``ṙ`` with the dependent velocities on C (the right side of (33)).
    holds : bool
        The two agree at the random points of C.
    determined : bool
        ``∂r/∂q_dep`` has rank k at those points: the positions fix the dependent displacements, so (33)
        holds for exactly one class (Chetaev's).
    residual : float
        The largest ``|entry|`` of the difference at the points.
    decision : Decision
    """

    positions: tuple
    independent: tuple
    dependent: tuple
    displacements: sp.Matrix
    velocity_derivatives: sp.Matrix
    holds: bool
    determined: bool
    residual: float
    decision: Decision

    def __str__(self):
        verdict = "holds" if self.holds else "fails"
        return (f"delta r_s = sum_r (d r_s_dot / d q_dot^r) delta q^r (Talamucci 2025, eq. (33)) {verdict}; "
                f"max residual {self.residual:.1e}; {self.decision}")

    def to_dict(self) -> dict:
        return {"holds": self.holds, "determined": self.determined, "residual": self.residual,
                "displacements": [[str(e) for e in self.displacements.row(i)] for i in range(self.displacements.rows)],
                "velocity_derivatives": [[str(e) for e in self.velocity_derivatives.row(i)]
                                         for i in range(self.velocity_derivatives.rows)],
                **self.decision.to_dict()}


def displacement_velocity_property(pullback: CartesianPullback, constraints: KinematicConstraints,
                                   displacements: VirtualDisplacements | None = None, dependent: Sequence | None = None,
                                   points: int = NUMERICAL_POINTS,
                                   tolerance: float = NUMERICAL_TOLERANCE) -> DisplacementVelocityProperty:
    """Both sides of Talamucci's eq. (33) for the particles of ``pullback`` under ``constraints`` (on the same
    chart) and the class ``displacements`` (default: Chetaev's), decided at ``points`` random points of C.

    Raises
    ------
    ArgumentError
        If the pull-back and the constraints are on different charts.
    ConstraintError
        If ``∂φ/∂q̇_dep`` is singular (choose other dependent velocities).
    """
    if pullback.chart != constraints.chart:
        raise ArgumentError("displacement_velocity_property: the positions and the constraints must use the same "
                            f"chart (got {pullback.chart} and {constraints.chart}).")
    chart = constraints.chart
    cls = ChetaevDisplacements() if displacements is None else displacements
    dep = constraints.dependent if dependent is None else constraints.check_dependent(dependent)
    ind = tuple(A for A in range(chart.dim) if A not in dep)
    k = len(dep)
    gamma = cls.gamma(constraints, dep)                       # δq_dep = γ δq_ind
    # ∂α/∂q̇_ind = −J_dep⁻¹ J_ind, implicit differentiation of φ(q, q̇_ind, α) = 0
    J = constraints.jacobian
    J_dep = J.extract(list(range(k)), list(dep))
    dalpha = []
    for r in ind:
        sol = solve_square(J_dep, [-J[a, r] for a in range(k)])
        if sol is None:
            raise ConstraintError(f"the constraints cannot be solved for the dependent velocities {list(dep)} "
                                  "(∂φ/∂q̇_dep is singular); choose other dependent velocities.")
        dalpha.append(sol)
    names = tuple(pullback.positions)
    r_exprs = [pullback.positions[s] for s in names]
    rdot = [_velocity(pullback, s) for s in names]
    q, u = chart.coordinates, chart.velocities
    left = sp.Matrix(len(names), len(ind), lambda i, j: r_exprs[i].diff(q[ind[j]])
                     + sp.Add(*[r_exprs[i].diff(q[dep[nu]]) * gamma[nu, j] for nu in range(k)]))
    right = sp.Matrix(len(names), len(ind), lambda i, j: rdot[i].diff(u[ind[j]])
                      + sp.Add(*[rdot[i].diff(u[dep[nu]]) * dalpha[j][nu] for nu in range(k)]))
    diff = left - right
    residual, holds, determined = 0.0, True, True
    Rdep = sp.Matrix(len(names), k, lambda i, nu: r_exprs[i].diff(q[dep[nu]]))
    for p in constraints.points_on_C(points):
        d = np.array([[numeric_value(diff[i, j], p).real for j in range(diff.cols)] for i in range(diff.rows)])
        scale = np.array([[abs(numeric_value(left[i, j], p)) + abs(numeric_value(right[i, j], p))
                           for j in range(diff.cols)] for i in range(diff.rows)])
        residual = max(residual, float(np.max(np.abs(d), initial=0.0)))
        holds = holds and vanishes_at(d.ravel(), scale.ravel(), tolerance)
        R = np.array([[numeric_value(Rdep[i, nu], p).real for nu in range(k)] for i in range(len(names))])
        determined = determined and numerical_rank(R) == k
    return DisplacementVelocityProperty(names, ind, tuple(dep), left, right, holds, determined, residual,
                                        Decision.numerical(points, tolerance))


def _velocity(pullback: CartesianPullback, s) -> sp.Expr:
    for key, value in pullback.velocities.items():
        if key.name == f"{s.name}_dot":
            return value
    raise ArgumentError(f"no velocity for the position {s}")  # pragma: no cover - the pull-back defines one per position

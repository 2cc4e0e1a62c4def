"""Chetaev's rule for higher-order constraints, and Talamucci's energy H* (docs/chetaev.rst; Talamucci (2025)).

**Higher-order constraints.**  For ``h^ν(q, q̇, q̈, t) = 0`` the Chetaev rule extended to
second order postulates the virtual displacements ``(∂h^ν/∂q̈^A) δq^A = 0`` (Talamucci
(2025) eq. (30); Talamucci argues that the claimed derivation of this rule from the
constraints fails, so it is a postulate, as for first-order constraints).  With
non-potential forces ``F_A`` the d'Alembert–Lagrange principle gives

    E_A(L) = F_A + λ_ν ∂h^ν/∂q̈^A,        h^ν(q, q̇, q̈, t) = 0.

For h affine in the accelerations, ``h = Ψ q̈ + ψ₀``, with ``W = ∂²L/∂q̇∂q̇`` and
``E(L) = W q̈ − r`` (``r = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t``):

    [[W, −Ψᵀ], [Ψ, 0]] [q̈; λ] = [r + F; −ψ₀],

a second-order field on TQ (no invariant submanifold: h restricts the accelerations,
not the states).  If ``h = dφ/dt`` for a kinematic constraint φ, then ``Ψ = ∂φ/∂q̇`` and
the motion through a state with φ = 0 is the Chetaev motion of φ.

**The energy H*.**  For kinematic constraints solved as ``q̇^{m+ν} = α_ν(q, q̇^1..q̇^m, t)``,
``H = Σ_j q̇^j ∂L/∂q̇^j − L`` (all velocities) on C and the energy of the restricted
Lagrangian ``L* = L(q, q̇^r, α)``, ``H* = Σ_r q̇^r ∂L*/∂q̇^r − L*``, differ:

    H* = H + Σ_ν (ᾱ_ν − α_ν) ∂L/∂q̇^{m+ν},     ᾱ_ν = Σ_r q̇^r ∂α_ν/∂q̇^r

(Talamucci (2025) eqs. (42)–(44)); they coincide when every α_ν is homogeneous of
degree 1 (ᾱ = α), i.e. for constraints homogeneous in the velocities.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..algebra import reduce_if_cheap, solve_square, vanishes
from ..algebra.printing import EquationDisplay, latex
from ..constraints.higher_order import HigherOrderConstraints
from ..constraints.kinematic import KinematicConstraints
from ..errors import DimensionError, IrregularLagrangianError, UnsolvableConstraintsError
from ..parsing import as_expressions, chart_names
from .lagrangian import Lagrangian, constrained_problem

__all__ = ["HigherOrderChetaevSystem", "HigherOrderField", "RestrictedEnergy", "restricted_energy"]


@dataclass(frozen=True, eq=False)
class HigherOrderChetaevSystem:
    """A Lagrangian with acceleration constraints under Chetaev's rule of second order (module docstring).

    Parameters
    ----------
    lagrangian : Lagrangian
        Only its expression in ``(q, q_dot)`` is used.
    constraints : HigherOrderConstraints or sequence of expressions (``x_ddot`` for accelerations)
    forces : sequence, optional
        Non-potential generalized forces ``F_A(q, q̇, t)``.

    Examples
    --------
    A particle in a vertical plane under gravity with ``ẍ = y ÿ``:

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> g = sp.Symbol("g", positive=True)
    >>> chart = Chart("x y", parameters=[g])
    >>> xd, yd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2)/2 - g*chart.coordinates[1])
    >>> field = HigherOrderChetaevSystem(L, ["x_ddot - y*y_ddot"]).field()
    >>> field.multipliers
    (-g*y/(y**2 + 1),)
    """

    lagrangian: Lagrangian
    constraints: HigherOrderConstraints
    forces: tuple = None

    def __post_init__(self):
        chart, C = constrained_problem(self.lagrangian, self.constraints, HigherOrderConstraints,
                                       lambda chart, c: HigherOrderConstraints(chart, c))
        object.__setattr__(self, "constraints", C)
        forces = as_expressions((0,) * chart.dim if self.forces is None else self.forces,
                                chart_names(chart, self.lagrangian.bundle.quasi_velocities, C.time), where="forces")
        if len(forces) != chart.dim:
            raise DimensionError(f"need {chart.dim} generalized forces F_A (one per coordinate), got {len(forces)}.")
        object.__setattr__(self, "forces", forces)

    @property
    def chart(self):
        return self.lagrangian.frame.chart

    def field(self) -> "HigherOrderField":
        """``q̈(q, q̇, t)`` and ``λ(q, q̇, t)`` from the bordered system (module docstring).

        Raises
        ------
        IrregularLagrangianError
            If ``[[W, −Ψᵀ], [Ψ, 0]]`` is singular.
        """
        return self._field

    @cached_property
    def _field(self) -> "HigherOrderField":
        chart, C = self.chart, self.constraints
        q, u, t = chart.coordinates, chart.velocities, C.time
        n, k = len(q), C.count
        L = self.lagrangian.natural_expr()
        p = [L.diff(w) for w in u]
        W = sp.Matrix(n, n, lambda A, B: p[A].diff(u[B]))
        r = []
        for A in range(n):
            e = L.diff(q[A]) - sp.Add(*[p[A].diff(q[B]) * u[B] for B in range(n)]) + self.forces[A]
            if t is not None:
                e -= p[A].diff(t)
            r.append(e)
        Psi = sp.Matrix(C.jacobian)
        K = sp.zeros(n + k, n + k)
        K[:n, :n] = W
        K[:n, n:] = -Psi.T
        K[n:, :n] = Psi
        sol = solve_square(K, r + [-e for e in C.remainder])
        if sol is None:
            raise IrregularLagrangianError(
                "the equations do not determine the accelerations: [[∂²L/∂q̇∂q̇, −Ψᵀ], [Ψ, 0]] is singular "
                "(Ψ = ∂h/∂q̈); check the constraints and the Lagrangian."
            )
        return HigherOrderField(self, dict(zip(q, (reduce_if_cheap(e, 400) for e in sol[:n]))),
                                tuple(reduce_if_cheap(e, 400) for e in sol[n:]))

    def __str__(self):
        return f"Higher-order Chetaev system: L = {self.lagrangian.natural_expr()}; {self.constraints}"


@dataclass(frozen=True, eq=False)
class HigherOrderField(EquationDisplay):
    """The motion under acceleration constraints: ``{q: q̈}`` and the multipliers λ (module docstring)."""

    system: HigherOrderChetaevSystem
    accelerations: dict
    multipliers: tuple

    def equations(self) -> list:
        acc = self.system.constraints.accelerations
        return [sp.Eq(a, self.accelerations[q]) for a, q in zip(acc, self.system.chart.coordinates)]

    def constraint_forces(self) -> tuple:
        """``λ_ν ∂h^ν/∂q̈^A`` (one per coordinate)."""
        Psi = self.system.constraints.jacobian
        return tuple(sp.Add(*[lam * Psi[nu, A] for nu, lam in enumerate(self.multipliers)])
                     for A in range(self.system.chart.dim))

    def to_dict(self) -> dict:
        return {"q_ddot": {str(q): str(e) for q, e in self.accelerations.items()},
                "multipliers": [str(e) for e in self.multipliers]}


@dataclass(frozen=True)
class RestrictedEnergy:
    """``H``, ``H*`` and Talamucci's relation (44) between them (module docstring).

    Attributes
    ----------
    dependent : tuple of Symbol
        The dependent velocities ``q̇^{m+ν}``.
    alpha, alpha_bar : tuple
        ``α_ν`` and ``ᾱ_ν = Σ_r q̇^r ∂α_ν/∂q̇^r``.
    energy : sympy.Expr
        H on C, in the independent velocities.
    restricted_energy : sympy.Expr
        ``H*``, the energy of ``L* = L|_C``.
    difference : sympy.Expr
        ``Σ (ᾱ_ν − α_ν) ∂L/∂q̇^{m+ν}`` on C.
    identity_holds : bool
        ``H* − H − difference = 0`` (Talamucci (2025) eq. (44)), checked.
    homogeneous : bool
        ``ᾱ = α`` for every ν (then ``H* = H``).
    """

    dependent: tuple
    alpha: tuple
    alpha_bar: tuple
    energy: sp.Expr
    restricted_energy: sp.Expr
    difference: sp.Expr
    identity_holds: bool
    homogeneous: bool

    def __str__(self):
        rel = "H* = H (ᾱ = α)" if self.homogeneous else f"H* = H + {self.difference}"
        return f"H = {self.energy}\nH* = {self.restricted_energy}\n{rel}"

    def as_latex(self) -> str:
        return (rf"H = {latex(self.energy)},\quad H^* = {latex(self.restricted_energy)},\quad "
                rf"H^* - H = {latex(self.difference)}")

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"dependent": [s.name for s in self.dependent], "alpha": [str(a) for a in self.alpha],
                "alpha_bar": [str(a) for a in self.alpha_bar], "H": str(self.energy),
                "H_star": str(self.restricted_energy), "difference": str(self.difference),
                "identity_holds": self.identity_holds, "homogeneous": self.homogeneous}


def restricted_energy(lagrangian: Lagrangian, constraints, dependent: Sequence | None = None,
                      branch: int = 0) -> RestrictedEnergy:
    """``H``, ``H*`` and ``Σ(ᾱ − α) ∂L/∂q̇^{m+ν}`` for kinematic constraints (Talamucci (2025) eqs. (42)–(44)).

    Parameters
    ----------
    lagrangian : Lagrangian
    constraints : KinematicConstraints or sequence of expressions ``φ^ν(q, q̇, t)``
    dependent : sequence, optional
        The dependent velocities (default: :attr:`KinematicConstraints.dependent`).
    branch : int
        Which explicit solution ``q̇_dep = α`` of φ = 0 to use.

    Raises
    ------
    UnsolvableConstraintsError
        If sympy cannot solve the constraints explicitly for the dependent velocities.
    """
    chart, C = constrained_problem(lagrangian, constraints, KinematicConstraints,
                                   lambda chart, c: KinematicConstraints(chart, tuple(c)))
    sols = C.explicit_solutions(dependent)
    if not sols or branch >= len(sols):
        raise UnsolvableConstraintsError(
            "the constraints could not be solved explicitly for the dependent velocities (or the branch does not "
            "exist); H* needs q̇_dep = α(q, q̇_ind, t). Choose other dependent velocities."
        )
    sol = sols[branch]
    u = chart.velocities
    dep = tuple(s for s in u if s in sol)
    ind = tuple(s for s in u if s not in sol)
    alpha = tuple(sol[d] for d in dep)
    alpha_bar = tuple(reduce_if_cheap(sp.Add(*[v * a.diff(v) for v in ind]), 400) for a in alpha)
    L = lagrangian.natural_expr()
    H = sp.Add(*[v * L.diff(v) for v in u]) - L
    H_C = reduce_if_cheap(H.xreplace(sol), 400)
    L_star = L.xreplace(sol)
    H_star = reduce_if_cheap(sp.Add(*[v * L_star.diff(v) for v in ind]) - L_star, 400)
    diff = reduce_if_cheap(sp.Add(*[(ab - a) * L.diff(d).xreplace(sol) for a, ab, d in zip(alpha, alpha_bar, dep)]),
                           400)
    identity = vanishes(H_star - H_C - diff)
    homogeneous = all(vanishes(ab - a) for a, ab in zip(alpha, alpha_bar))
    return RestrictedEnergy(dep, alpha, alpha_bar, H_C, H_star, diff, identity, homogeneous)

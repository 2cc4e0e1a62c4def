"""Vakonomic dynamics for general kinematic constraints: the multiplication rule.

For ``φ^ν(q, u, t) = 0`` the Euler–Lagrange equations of ``L̄ = L + λ_ν φ^ν`` in
``(q, λ)`` are ``E_A(L̄) = 0`` and ``φ = 0``.  With
``Ŵ = ∂²L̄/∂u∂u = W + λ_ν ∂²φ^ν/∂u∂u`` and ``J = ∂φ/∂u``::

    Ŵ q̈ + Jᵀ λ̇ = ∂L̄/∂q − (∂²L̄/∂u∂q) u − ∂²L̄/∂u∂t,     J q̈ = −(∂φ/∂q) u − ∂φ/∂t,

a field on ``(q, u, λ)`` tangent to C (:class:`NonlinearVakonomicSystem`).  The
multiplier ``λ(t₀)`` is a free datum (Cronström & Raita 2009 as corrected in
docs/theory.rst).  For linear constraints in an adapted frame see
:mod:`anholo.dynamics.vakonomic`; the comparison with Chetaev's equations is
:mod:`anholo.analysis.comparison`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import numeric_value, random_point, solve_square
from ..algebra.implicit import ImplicitForm
from ..constraints.kinematic import KinematicConstraints
from ..errors import DimensionError, IrregularLagrangianError
from .chetaev import _inverse_times, acceleration_symbols, multiplier_symbols
from .lagrangian import Lagrangian, constrained_problem

__all__ = ["NonlinearVakonomicSystem", "VakonomicMotion", "vanishes_on_C"]


def vanishes_on_C(expr, constraints: KinematicConstraints, extra: Sequence = (), tol: float = 1e-8) -> bool:
    """True if ``expr`` vanishes at the sample points of C, with random values for the ``extra`` symbols."""
    expr = sympified(expr)
    if expr == 0:
        return True
    rng = random.Random(77)
    for p in constraints.points_on_C():
        pt = dict(p)
        pt.update(random_point(set(extra) | (expr.free_symbols - set(p)), rng))
        val = numeric_value(expr, pt)
        if val != val or abs(val) > tol:
            return False
    return True


@dataclass(frozen=True, eq=False)
class NonlinearVakonomicSystem:
    """The multiplication rule ``E_A(L + λ_ν φ^ν) = 0`` for kinematic constraints (docs/chetaev.rst).

    Parameters
    ----------
    lagrangian : Lagrangian
        Only its expression in ``(q, q_dot)`` is used (coordinates).
    constraints : KinematicConstraints or sequence of expressions
    multipliers : sequence of Symbol or str, optional
        Default ``lambda1, lambda2, …``.

    Examples
    --------
    The nonholonomic particle (docs/nonholonomic.rst, Vakonomic dynamics): ``ẍ = ẏ(λ − yẋ)/(1 + y²)``, ``ÿ = −λẋ``.

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> chart = Chart("x y z")
    >>> xd, yd, zd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2)/2)
    >>> motion = NonlinearVakonomicSystem(L, ["z_dot - y*x_dot"]).field()
    >>> x, y, z = chart.coordinates
    >>> lam = motion.system.multipliers[0]
    >>> sp.simplify(motion.accelerations[x] - yd*(lam - y*xd)/(1 + y**2)), motion.accelerations[y]
    (0, -lambda1*x_dot)
    """

    lagrangian: Lagrangian
    constraints: KinematicConstraints
    multipliers: tuple = None

    def __post_init__(self):
        L = self.lagrangian
        chart, C = constrained_problem(L, self.constraints, KinematicConstraints,
                                       lambda chart, c: KinematicConstraints(chart, tuple(c)))
        object.__setattr__(self, "constraints", C)
        names = self.multipliers or multiplier_symbols(C.count)
        if isinstance(names, str):
            names = names.replace(",", " ").split()
        lam = tuple(sp.Symbol(s, real=True) if isinstance(s, str) else s for s in names)
        if len(lam) != C.count:
            raise DimensionError(f"need {C.count} multiplier symbols (one per constraint), got {len(lam)}.")
        taken = set(chart.coordinates) | set(chart.velocities) | set(chart.parameters)
        if set(lam) & taken:
            raise DimensionError(f"multiplier names clash with other symbols: {sorted(map(str, set(lam) & taken))}.")
        object.__setattr__(self, "multipliers", lam)

    @property
    def chart(self):
        return self.lagrangian.frame.chart

    @cached_property
    def extended_lagrangian(self) -> sp.Expr:
        """``L̄ = L + λ_ν φ^ν`` in ``(q, q_dot, λ)``."""
        return self.lagrangian.natural_expr() + sp.Add(
            *[lam * phi for lam, phi in zip(self.multipliers, self.constraints.expressions)])

    def field(self) -> "VakonomicMotion":
        """``q̈(q, u, λ)`` and ``λ̇(q, u, λ)`` (valid on C).

        Raises
        ------
        IrregularLagrangianError
            If ``[[Ŵ, Jᵀ], [J, 0]]`` is singular.
        """
        return self._field

    @cached_property
    def multiplier_rate_symbols(self) -> tuple:
        """``lambda1_dot, …``: the unknowns of :meth:`implicit_form` standing for the multiplier rates."""
        return tuple(sp.Symbol(f"{lam.name}_dot", real=True) for lam in self.multipliers)

    def implicit_form(self) -> ImplicitForm:
        """The multiplication rule as the linear system ``M x = F`` it solves (no symbolic inversion).

        Unknowns ``x = (q̈, λ̇)``; with ``L̄ = L + λ_ν φ^ν``, ``Ŵ = ∂²L̄/∂u∂u`` and ``J = ∂φ/∂u``
        (the Euler–Lagrange equations of L̄ in ``(q, λ)``, Cronström & Raita 2009; docs/chetaev.rst)::

            Ŵ_AB q̈^B + J_νA λ̇_ν = ∂L̄/∂q^A − (∂²L̄/∂u^A∂q^B) u^B − ∂²L̄/∂u^A∂t
            J_νA q̈^A            = −(∂φ^ν/∂q^A) u^A − ∂φ^ν/∂t

        ``M = [[Ŵ, Jᵀ], [J, 0]]``; the solution is the field on C (:meth:`field`).
        """
        if "_implicit" in self.__dict__:
            return self.__dict__["_implicit"]
        W, r, J, s = self._parts
        n, k = W.rows, J.rows
        M = sp.zeros(n + k, n + k)
        M[:n, :n] = W
        M[:n, n:] = J.T
        M[n:, :n] = J
        form = ImplicitForm(acceleration_symbols(self.chart) + self.multiplier_rate_symbols, M, tuple(r) + tuple(s),
                            "the vakonomic field (multiplication rule) and its multiplier rates")
        self.__dict__["_implicit"] = form
        return form

    @cached_property
    def _parts(self) -> tuple:
        """``(Ŵ, r, J, s)`` of :meth:`implicit_form`: shared by the field and its implicit form."""
        chart, C = self.chart, self.constraints
        q, u = chart.coordinates, chart.velocities
        n, t = len(q), C.time
        Lb = self.extended_lagrangian
        p = [Lb.diff(w) for w in u]
        W = sp.Matrix(n, n, lambda A, B: p[A].diff(u[B]))
        r = []
        for A in range(n):
            e = Lb.diff(q[A]) - sp.Add(*[p[A].diff(q[B]) * u[B] for B in range(n)])
            if t is not None:
                e -= p[A].diff(t)
            r.append(e)
        J = C.jacobian
        s = []
        for phi in C.expressions:
            e = -sp.Add(*[phi.diff(q[B]) * u[B] for B in range(n)])
            if t is not None:
                e -= phi.diff(t)
            s.append(e)
        return W, r, J, s

    @cached_property
    def _field(self) -> "VakonomicMotion":
        q = self.chart.coordinates
        W, r, J, s = self._parts
        n, k = W.rows, J.rows
        solved = _inverse_times(W, [r] + [[J[a, A] for A in range(n)] for a in range(k)])
        if solved is not None:
            a0, Cm = solved[0], solved[1:]
            S = sp.Matrix(k, k, lambda nu, mu: sp.Add(*[J[nu, A] * Cm[mu][A] for A in range(n) if J[nu, A] != 0]))
            rhs = [sp.Add(*[J[nu, A] * a0[A] for A in range(n) if J[nu, A] != 0]) - s[nu] for nu in range(k)]
            lam_dot = solve_square(S, rhs)
            if lam_dot is not None:
                acc = tuple(a0[A] - sp.Add(*[Cm[mu][A] * lam_dot[mu] for mu in range(k)]) for A in range(n))
                return VakonomicMotion(self, dict(zip(q, acc)), tuple(lam_dot))
        K = sp.zeros(n + k, n + k)
        K[:n, :n] = W
        K[:n, n:] = J.T
        K[n:, :n] = J
        sol = solve_square(K, r + s)
        if sol is None:
            raise IrregularLagrangianError(
                "the vakonomic equations do not determine the motion: [[∂²L̄/∂u∂u, Jᵀ], [J, 0]] is singular "
                "(L̄ = L + λφ is not regular with respect to the constraints)."
            )
        return VakonomicMotion(self, dict(zip(q, sol[:n])), tuple(sol[n:]))

    def equations(self) -> list:
        """``E_A(L + λφ) = 0`` with ``q_ddot`` and ``lambda_dot`` symbols, and ``φ = 0``."""
        chart, C = self.chart, self.constraints
        q, u = chart.coordinates, chart.velocities
        qdd = acceleration_symbols(chart)
        lam_dot = tuple(sp.Symbol(f"{lam.name}_dot", real=True) for lam in self.multipliers)
        Lb = self.extended_lagrangian
        eqs = []
        for A in range(len(q)):
            pA = Lb.diff(u[A])
            e = sp.Add(*[pA.diff(u[B]) * qdd[B] + pA.diff(q[B]) * u[B] for B in range(len(q))])
            e += sp.Add(*[pA.diff(lam) * ld for lam, ld in zip(self.multipliers, lam_dot)])
            if C.time is not None:
                e += pA.diff(C.time)
            eqs.append(sp.Eq(e - Lb.diff(q[A]), 0, evaluate=False))
        return eqs + [sp.Eq(phi, 0, evaluate=False) for phi in C.expressions]


@dataclass(frozen=True, eq=False)
class VakonomicMotion:
    """The vakonomic field on ``(q, u, λ)`` (docs/chetaev.rst).

    Attributes
    ----------
    accelerations : dict
        ``{q^A: q̈^A(q, u, λ, t)}``.
    multiplier_rates : tuple
        ``λ̇_ν(q, u, λ, t)``.
    """

    system: NonlinearVakonomicSystem
    accelerations: dict
    multiplier_rates: tuple

    def implicit_form(self) -> ImplicitForm:
        """The linear system ``M x = F`` this field solves (:meth:`NonlinearVakonomicSystem.implicit_form`)."""
        return self.system.implicit_form()

    def equations(self) -> list:
        chart = self.system.chart
        eqs = [sp.Eq(d, self.accelerations[q]) for d, q in zip(acceleration_symbols(chart), chart.coordinates)]
        return eqs + [sp.Eq(sp.Symbol(f"{lam.name}_dot", real=True), r)
                      for lam, r in zip(self.system.multipliers, self.multiplier_rates)]

    def __str__(self):
        return "\n".join(f"{e.lhs} = {e.rhs}" for e in self.equations())

    def to_dict(self) -> dict:
        return {
            "multipliers": [lam.name for lam in self.system.multipliers],
            "q_ddot": {str(q): str(e) for q, e in self.accelerations.items()},
            "lambda_dot": [str(e) for e in self.multiplier_rates],
        }

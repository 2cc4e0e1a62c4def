"""Diagnostics of kinematic constraints and the Chetaev rule (Talamucci 2025 §§3–4; docs/chetaev.rst).

* :func:`homogeneity_degree` — the degree σ of positive homogeneity of φ in the
  velocities (Euler: ``Δφ = u^A ∂φ/∂u^A = σ φ``), or None.
* :func:`alpha_bar_minus_alpha` — ``ᾱ_ν − α_ν`` with ``ᾱ_ν = (∂α_ν/∂u^r) u^r``
  (Talamucci 2025, eq. (39)).  On C it needs no explicit α: with ``J = ∂φ/∂u``,
  ``ᾱ − α = −J_dep⁻¹ (J u) = −J_dep⁻¹ Δφ``.
* :func:`proposition1` — the three statements of Talamucci (2025) Prop. 1: (1) all φ^ν
  positively homogeneous in u; (2) all α_ν homogeneous of degree 1; (3) ᾱ = α.
  (2) ⇔ (3) is Euler's theorem.  (1) ⇒ (2) holds, but (2) ⇒ (1) only up to
  rewriting the constraint functions: what (2)/(3) characterise is that C is
  a cone in each fibre, and e.g. ``φ = exp(ż − yẋ) − 1`` has the homogeneous
  zero set of ``ż − yẋ`` without being homogeneous.  The result reports all three.
* :func:`energy_balance` — the power of the constraint forces on the motion,
  ``Σ R_A u^A = λ_ν β_νA u^A`` (for Chetaev ``= λ_ν Δφ^ν``), its form
  ``Σ_ν (α_ν − ᾱ_ν)(E_{m+ν}(L) − F_{m+ν})`` (Talamucci 2025, eq. (41)), and the energy
  identity ``dE_L/dt = Σ R_A u^A + F_A u^A − ∂L/∂t`` (docs/chetaev.rst).  Energy is
  conserved for stationary homogeneous constraints without forces.
* :func:`homogeneity_under_transformation` — homogeneity degrees before and after
  a change of coordinates ``q = q(q̄)`` (invariant, Talamucci (2025) Remark 6) or
  ``q = q(q̄, t)`` (not invariant in general: ``u`` gains the term ``∂q/∂t``).
* :func:`position_reduction_test` — the integrability test for a claimed
  position-level reduction ``q_dep = q_dep(q_ind)`` with ``∂q_dep/∂q_ind = γ``
  (the critique of Flannery in Talamucci (2025) §3.1): γ must not depend on velocities
  and its mixed total derivatives ``D_r γ_νs = D_s γ_νr`` must agree
  (``D_r = ∂/∂q^r + γ_μr ∂/∂q^{m+μ}``).  For ``ż = yẋ``, γ = (y, 0) is not a Jacobian.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping, Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra.expressions import dag_atoms
from ..algebra import numeric_value, random_point, reduce_if_cheap, solve_square, vanishes
from ..dynamics.chetaev import ChetaevField, ChetaevSystem
from ..constraints.kinematic import KinematicConstraints

__all__ = [
    "homogeneity_degree",
    "alpha_bar_minus_alpha",
    "vanishes_on_C",
    "Proposition1",
    "proposition1",
    "EnergyBalance",
    "energy_balance",
    "homogeneity_under_transformation",
    "PositionReductionTest",
    "position_reduction_test",
]


def homogeneity_degree(phi, velocities: Sequence):
    """The degree σ with ``φ(q, s u) = s^σ φ(q, u)`` for all s > 0, or None if φ is not homogeneous.

    Euler's theorem: φ is positively homogeneous of degree σ iff ``Δφ = σ φ`` with
    ``Δ = u^A ∂/∂u^A``.  σ is read off at a random point (a small rational) and the
    identity is then checked as a function.

    Examples
    --------
    >>> import sympy as sp
    >>> x, xd, yd, zd = sp.symbols("x x_dot y_dot z_dot", real=True)
    >>> homogeneity_degree(zd**2 - xd**2 - yd**2, [xd, yd, zd])
    2
    >>> homogeneity_degree(zd - sp.sqrt(xd**2 + yd**2), [xd, yd, zd])
    1
    >>> homogeneity_degree(zd - xd**2 - yd, [xd, yd, zd]) is None
    True
    """
    phi = sympified(phi)
    u = list(velocities)
    euler = sp.Add(*[w * phi.diff(w) for w in u])
    rng = random.Random(41)
    for _ in range(4):
        pt = random_point(phi.free_symbols, rng)
        f = numeric_value(phi, pt)
        if f != f or abs(f) < 1e-8:
            continue
        ratio = numeric_value(euler, pt) / f
        if ratio != ratio:
            return None
        sigma = sp.nsimplify(round(ratio.real * 720) / 720)
        return sigma if vanishes(euler - sigma * phi) else None
    return None


def vanishes_on_C(expr, constraints: KinematicConstraints, tol: float = 1e-8) -> bool:
    """True if ``expr`` (a function of q, u, t) vanishes at the sample points of C."""
    expr = sympified(expr)
    if expr == 0:
        return True
    rng = random.Random(43)
    for p in constraints.points_on_C():
        p = dict(p)
        p.update(random_point(dag_atoms(expr) - set(p), rng))  # symbols C does not involve
        val = numeric_value(expr, p)
        if val != val or abs(val) > tol:
            return False
    return True


def alpha_bar_minus_alpha(constraints: KinematicConstraints, dependent: Sequence | None = None) -> tuple:
    """``ᾱ_ν − α_ν`` on C in ``(q, u, t)``: ``−J_dep⁻¹ Δφ`` (implicit differentiation; Talamucci (2025) eq. (39)).

    Examples
    --------
    The counterexample ``φ = ż − ẋ² − ẏ`` (docs/chetaev.rst): ``ᾱ − α = ẋ²``.

    >>> from anholo import Chart
    >>> alpha_bar_minus_alpha(KinematicConstraints(Chart("x y z"), ["z_dot - x_dot^2 - y_dot"]))
    (x_dot**2,)
    """
    dep = constraints.dependent if dependent is None else constraints.check_dependent(dependent)
    J = constraints.jacobian
    u = constraints.chart.velocities
    euler = [sp.Add(*[J[a, A] * u[A] for A in range(len(u)) if J[a, A] != 0]) for a in range(constraints.count)]
    J_dep = J.extract(list(range(constraints.count)), list(dep))
    sol = solve_square(J_dep, [-e for e in euler])
    return tuple(reduce_if_cheap(constraints.on_C(e, dep), 400) for e in sol)


@dataclass(frozen=True)
class Proposition1:
    """The three statements of Talamucci (2025) Prop. 1 for one set of constraints.

    Attributes
    ----------
    degrees : tuple
        Homogeneity degree of each φ^ν (None: not homogeneous).  Statement (1): none is None.
    alpha : tuple of dict
        Explicit branches ``{u_dep: α}`` (empty if sympy found none).
    alpha_homogeneous : bool or None
        Statement (2), checked by scaling ``α(q, s u_ind) = s α(q, u_ind)`` on every
        explicit branch; None if no explicit α is available.
    alpha_bar_minus_alpha : tuple
        ``ᾱ − α`` on C (:func:`alpha_bar_minus_alpha`).
    alpha_bar_equals_alpha : bool
        Statement (3): ``ᾱ − α`` vanishes on C.
    """

    degrees: tuple
    alpha: tuple
    alpha_homogeneous: bool | None
    alpha_bar_minus_alpha: tuple
    alpha_bar_equals_alpha: bool

    @property
    def constraints_homogeneous(self) -> bool:
        """Statement (1)."""
        return all(d is not None for d in self.degrees)

    def verdict(self) -> str:
        """A sentence on which statements hold, and why (1) may fail while (2), (3) hold."""
        s1, s3 = self.constraints_homogeneous, self.alpha_bar_equals_alpha
        s2 = self.alpha_homogeneous
        head = f"(1) φ homogeneous: {s1}; (2) α homogeneous of degree 1: {s2}; (3) ᾱ = α on C: {s3}."
        if s1 and s3:
            return head + " All equivalent statements hold: Chetaev displacements are possible velocities."
        if not s1 and s3:
            return head + (" The constraint set C is a cone although the functions φ as written are not "
                           "homogeneous: Prop. 1's (3) ⇒ (1) holds only after rewriting φ (same zero set).")
        return head + " The constraints are not homogeneous: the constraint forces do work (Talamucci 2025, eq. (41))."


def proposition1(constraints: KinematicConstraints, dependent: Sequence | None = None) -> Proposition1:
    """Check the statements of Talamucci (2025) Prop. 1 (see :class:`Proposition1`)."""
    u = constraints.chart.velocities
    dep = constraints.dependent if dependent is None else constraints.check_dependent(dependent)
    degrees = tuple(homogeneity_degree(phi, u) for phi in constraints.expressions)
    diff = alpha_bar_minus_alpha(constraints, dep)
    equal = all(vanishes_on_C(d, constraints) for d in diff)
    branches = constraints.explicit_solutions(dep)
    homogeneous = None
    if branches:
        s = sp.Symbol("s_scale", positive=True)
        ind = [u[A] for A in range(len(u)) if A not in dep]
        scale = {w: s * w for w in ind}
        homogeneous = all(vanishes(a.xreplace(scale) - s * a) for br in branches for a in br.values())
    return Proposition1(degrees, branches, homogeneous, diff, equal)


@dataclass(frozen=True)
class EnergyBalance:
    """The energy identity of docs/chetaev.rst along a Chetaev field (all in ``(q, q_dot, t)``, valid on C).

    Attributes
    ----------
    energy : expression
        ``E_L = u^A ∂L/∂u^A − L``.
    energy_rate : expression
        ``dE_L/dt`` along the field.
    constraint_power : expression
        ``Σ_A R_A u^A = λ_ν β_νA u^A``.
    remark4_power : expression
        ``Σ_ν (α_ν − ᾱ_ν)(E_{m+ν}(L) − F_{m+ν})`` (Talamucci 2025, eq. (41); Chetaev displacements).
    force_power : expression
        ``F_A u^A``.
    explicit_time : expression
        ``−∂L/∂t``.
    conserved : bool
        True if ``dE_L/dt`` vanishes on C.
    identity_holds : bool
        True if ``dE/dt = Σ R_A u^A + F_A u^A − ∂L/∂t`` on C (a consistency check).
    """

    energy: sp.Expr
    energy_rate: sp.Expr
    constraint_power: sp.Expr
    remark4_power: sp.Expr
    force_power: sp.Expr
    explicit_time: sp.Expr
    conserved: bool
    identity_holds: bool


def energy_balance(field: ChetaevField, dependent: Sequence | None = None) -> EnergyBalance:
    """The power of the constraint forces and the energy identity along ``field`` (docs/chetaev.rst).

    Examples
    --------
    The counterexample ``φ = ż − ẋ² − ẏ`` with gravity: ``dE/dt = −λ ẋ²``, not zero.

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> g = sp.Symbol("g", positive=True)
    >>> chart = Chart("x y z", parameters=[g])
    >>> xd, yd, zd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2)/2 - g*chart.coordinates[2])
    >>> bal = energy_balance(ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"]).field())
    >>> bal.conserved, sp.factor(bal.constraint_power)
    (False, -g*x_dot**2/(2*(2*x_dot**2 + 1)))
    """
    s = field.system
    chart, C = s.chart, s.constraints
    q, u = chart.coordinates, chart.velocities
    Ln = s.natural_lagrangian
    energy = sp.Add(*[w * Ln.diff(w) for w in u]) - Ln
    acc = field.natural_accelerations()
    qdd = [acc[x] for x in q]
    rate = sp.Add(*[energy.diff(q[A]) * u[A] + energy.diff(u[A]) * qdd[A] for A in range(len(q))]) + s._dt(energy)
    R = field.constraint_forces()
    power = sp.Add(*[R[A] * u[A] for A in range(len(q))])
    force_power = sp.Add(*[s.forces[A] * u[A] for A in range(len(q))])
    explicit_time = -s._dt(Ln)
    dep = C.dependent if dependent is None else C.check_dependent(dependent)
    diff = alpha_bar_minus_alpha(C, dep)  # ᾱ − α
    E = s.euler_lagrange_expressions(qdd)
    remark4 = sp.Add(*[-d * (E[A] - s.forces[A]) for d, A in zip(diff, dep)])
    def present(e):
        return reduce_if_cheap(C.on_C(e, dep), 400)

    return EnergyBalance(
        energy=energy,
        energy_rate=present(rate),
        constraint_power=present(power),
        remark4_power=present(remark4),
        force_power=force_power,
        explicit_time=explicit_time,
        conserved=vanishes_on_C(rate, C),
        identity_holds=vanishes_on_C(rate - power - force_power - explicit_time, C),
    )


def homogeneity_under_transformation(constraints: KinematicConstraints, new_chart, old_in_new: Mapping) -> tuple:
    """``(degrees before, degrees after)`` the coordinate change ``q = q(q̄)`` or ``q = q(q̄, t)``.

    For a point transformation (no t) the degrees agree (Talamucci 2025 Remark 6): ``u = (∂q/∂q̄) ū``
    is linear in ``ū``.  A time-dependent change adds ``∂q/∂t`` to u and destroys homogeneity
    in general (linear constraints become affine).
    """
    new = constraints.point_transformation(new_chart, old_in_new)
    before = tuple(homogeneity_degree(e, constraints.chart.velocities) for e in constraints.expressions)
    after = tuple(homogeneity_degree(e, new.chart.velocities) for e in new.expressions)
    return before, after


@dataclass(frozen=True)
class PositionReductionTest:
    """Result of :func:`position_reduction_test`.

    Attributes
    ----------
    gamma : sympy Matrix
        ``γ_νr = ∂α_ν/∂u^r`` (k × m), the claimed ``∂q_dep/∂q_ind``.
    velocity_dependent : bool
        True if γ depends on the velocities (then no functions ``q_dep(q_ind, t)`` have it as Jacobian).
    obstructions : dict
        ``{(ν, r, s): D_r γ_νs − D_s γ_νr}`` (nonzero entries; indices into dependent/independent lists).
    integrable : bool
        True if γ is the Jacobian of some functions ``q_dep(q_ind, t)`` (locally).
    """

    gamma: sp.Matrix
    velocity_dependent: bool
    obstructions: dict
    integrable: bool


def position_reduction_test(constraints: KinematicConstraints, dependent: Sequence | None = None) -> PositionReductionTest:
    """Can ``δq_dep = (∂q_dep/∂q_ind) δq_ind`` with ``∂q_dep/∂q_ind = ∂α/∂u_ind`` hold (Talamucci 2025 §3.1)?

    Flannery's argument needs functions ``q_dep(q_ind, t)`` whose Jacobian is
    ``γ = ∂α/∂u_ind``.  That requires γ to be free of velocities and
    ``D_r γ_νs = D_s γ_νr`` with ``D_r = ∂/∂q^r + γ_μr ∂/∂q^{dep μ}`` (Frobenius).

    Examples
    --------
    >>> from anholo import Chart
    >>> test = position_reduction_test(KinematicConstraints(Chart("x y z"), ["z_dot - y*x_dot"]))
    >>> test.gamma, test.integrable, test.obstructions
    (Matrix([[y, 0]]), False, {(0, 0, 1): -1})
    """
    C = constraints
    dep = C.dependent if dependent is None else C.check_dependent(dependent)
    ind = [A for A in range(C.chart.dim) if A not in dep]
    J = C.jacobian
    J_dep = J.extract(list(range(C.count)), list(dep))
    cols = []
    for r in ind:
        cols.append(solve_square(J_dep, [-J[a, r] for a in range(C.count)]))
    gamma = sp.Matrix(C.count, len(ind), lambda nu, j: reduce_if_cheap(cols[j][nu], 400))
    u = set(C.chart.velocities)
    velocity_dependent = any(
        (e.free_symbols & u) and not all(vanishes(e.diff(w)) for w in u) for e in gamma
    )
    q = C.chart.coordinates
    obstructions = {}
    if not velocity_dependent:
        def D(j, f):
            return f.diff(q[ind[j]]) + sp.Add(*[gamma[mu, j] * f.diff(q[A]) for mu, A in enumerate(dep)])

        for nu in range(C.count):
            for j in range(len(ind)):
                for l in range(j + 1, len(ind)):
                    o = reduce_if_cheap(D(j, gamma[nu, l]) - D(l, gamma[nu, j]), 400)
                    if not vanishes(o):
                        obstructions[(nu, j, l)] = o
    return PositionReductionTest(gamma, bool(velocity_dependent), obstructions,
                                 not velocity_dependent and not obstructions)

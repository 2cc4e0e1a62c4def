"""Routhians of L, L̂ and L̄, the Routh procedure, and the lifted G-action on D° (docs/routh.rst).

Setting: a Chaplygin system (:class:`~anholo.analysis.chaplygin.ChaplyginSystem`) with
shape coordinates ``r^α``; its frame is ``X_α`` (horizontal lifts of ``∂/∂r^α``,
G-invariant) and ``X_a = Ẽ_a`` (fundamental fields), so ``[X_α, X_β] = R^a_αβ X_a``,
``[X_α, Ẽ_a] = 0`` and ``v^α = ṙ^α``.  Crampin & Mestdag (2010), §6.

**Routhian.**  For a G-invariant function Λ on TQ with momenta ``P_a = ∂Λ/∂v^a``
(the momentum map of the complete lifts ``Ẽ_a^C``, conserved by the Euler–Lagrange
field of Λ), the Routhian is ``R_Λ = Λ − P_a v^a``; on a level set ``P_a = μ_a``,
solved for ``v^a = v^a(q, v^α, μ)``, it is ``R^μ = Λ − μ_a v^a``
(Routh (1877); Marsden, Ratiu & Scheurle (2000); Crampin & Mestdag (2008)).

* Λ = L: ``R_L = L − p_a v^a = L̂`` — the variational Lagrangian of Prop. 5 *is* the
  Routhian of L (Crampin & Mestdag (2010), §6).
* Λ = L̂ = L − p_a v^a: ``p̂_a = ∂L̂/∂v^a = −g_ab v^b`` (``g_ab = ∂²L/∂v^a∂v^b``), so
  ``R_L̂ = L − p_a v^a + g_ab v^a v^b``; its level set ``p̂ = 0`` is C (g_ab regular) and
  ``R_L̂|_C = L_c``.
* Λ = L̄ = L + λ_a v^a on ``D° ×_Q TQ``: ``p̄_a = p_a + λ_a`` and
  ``R_L̄ = L̄ − p̄_a v^a = L − p_a v^a = L̂``: it does not depend on λ.

**Routh procedure.**  Hamel's equations of Λ for the index α read
``d/dt ∂Λ/∂v^α − X_α(Λ) + R^k_αj v^j P_k = 0``; in the Chaplygin frame only
``R^a_αβ`` survives, and on the level set ``∂R^μ/∂v^α = ∂Λ/∂v^α``,
``X_α(R^μ) = X_α(Λ)`` (the terms ``(P_a − μ_a) ∂v^a/∂·`` vanish).  When ``R^μ`` and
``μ_a R^a_αβ`` are G-invariant (G abelian, or μ = 0), they are functions on
``T(Q/G)`` and the **Routh equations** are

    d/dt ∂R^μ/∂ṙ^α − ∂R^μ/∂r^α = −μ_a R^a_αβ(r) ṙ^β            (gyroscopic term)

with the reconstruction ``q̇ = X_α ṙ^α + Ẽ_a v^a(q, ṙ, μ)``.  Compare Γ_nh on C
(docs/reduction.rst): ``d/dt ∂L_c/∂ṙ^α − ∂L_c/∂r^α = −p_a|_C R^a_αβ ṙ^β`` — the same form
with the *non-conserved* ``p_a|_C`` in place of the constant μ.

* For L̂ at ``p̂ = 0`` the Routh equations are the Euler–Lagrange equations of ``L_c``
  on Q/G (no gyroscopic term): the field of L̂ restricted to C (Prop. 6 and Cor. 3 of
  Crampin & Mestdag (2010)); it is Γ_nh iff ``p_a R^a_αβ v^β = 0`` on C.
* For L̄ the level sets are ``p_a + λ_a = ν_a`` (every vakonomic field is tangent to
  them) and on C the vakonomic equations (α) become, with ``λ = ν − p|_C``,

      d/dt ∂L_c/∂ṙ^α − ∂L_c/∂r^α = −ν_a R^a_αβ ṙ^β

  (the Routh equations of ``R_L̄ = L̂`` at level ν); ν = 0 is the section ``σ = −p``.

**The lifted action on D°.**  A covector ``ω ∈ D°`` is ``λ_a θ^a``; ``λ_a = ⟨ω, Ẽ_a⟩`` is
the linear function of the field ``Ẽ_a``.  The cotangent lift ``Z^{C*}`` of a field Z
satisfies ``Z^{C*}(⟨·, Y⟩) = ⟨·, [Z, Y]⟩``, hence
``Ẽ_b^{C*}(λ_c) = ⟨ω, [Ẽ_b, Ẽ_c]⟩ = R^d_bc λ_d`` and ``Ẽ_b^{C*}(⟨·, X_α⟩) = 0`` on D° (D is
invariant): G acts on D°, and on ``D° ×_Q TQ`` with generators

    Y_b = Ẽ_b^A ∂/∂q^A − R^k_bj v^j ∂/∂v^k + R^d_bc λ_d ∂/∂λ_c.

L̄ is invariant, ``Y_b(L̄) = 0``, and its momenta (λ a coordinate on the base) are
``p̄_b = p_b + λ_b`` (Crampin & Mestdag (2010), §6).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ..parsing import sympified
from ..algebra import reduce_if_cheap, solve_square, tidy, vanishes
from ..algebra.printing import EquationDisplay, latex, tex_text
from ..errors import ReductionError
from .hamiltonisation import _Verdicts
from .reduction import _invariant_part

__all__ = ["RouthReduction", "routh_reduction", "Routhians", "routhians", "AnnihilatorAction",
           "AnnihilatorActionCheck"]

_SOURCES = {"L": "L", "Lhat": "L̂", "Lbar": "L̄"}


def _zero(e) -> bool:
    return e == 0 or vanishes(e)


def _shape_data(ch):
    if ch.shape_coordinates is None:
        raise ReductionError(
            "the Chaplygin system has no shape coordinates (coordinates not moved by the group that "
            "parametrise D); pass shape_coordinates= to ChaplyginSystem for the Routh procedure.")
    chart = ch.frame.chart
    shape = tuple(ch.shape_coordinates)
    group = tuple(q for q in chart.coordinates if q not in shape)
    rdot = tuple(chart.velocities[chart.index(r)] for r in shape)
    return shape, group, rdot


def _level(level, k) -> tuple:
    if level is None:
        return tuple(sp.Symbol(f"mu{a + 1}", real=True) for a in range(k))
    if isinstance(level, (int, float, sp.Expr, str)):
        level = [level]
    level = tuple(sympified(x) for x in level)
    if len(level) != k:
        raise ReductionError(f"the momentum level needs {k} components (one per group generator), got {len(level)}.")
    return level


def _lambda_symbols(k) -> tuple:
    return tuple(sp.Symbol(f"lambda{a + 1}", real=True) for a in range(k))


@dataclass(frozen=True)
class Routhians:
    """The Routhians ``R_L``, ``R_L̂``, ``R_L̄`` on TQ (Hamel chart of the Chaplygin frame; module docstring).

    Attributes
    ----------
    of_L : sympy.Expr
        ``R_L = L − p_a v^a`` (equals L̂).
    of_Lhat : sympy.Expr
        ``R_L̂ = L̂ − p̂_a v^a`` with ``p̂_a = ∂L̂/∂v^a``.
    of_Lbar : sympy.Expr
        ``R_L̄ = L̄ − p̄_a v^a``, ``p̄_a = p_a + λ_a``: free of ``λ``.
    momenta_Lhat : tuple
        ``p̂_a``.
    multipliers : tuple of Symbol
        ``λ_a`` (components of ``ω ∈ D°`` w.r.t. ``θ^a``).
    lbar_free_of_lambda : bool
        ``∂R_L̄/∂λ_a = 0`` (checked).
    lhat_on_C_is_Lc : bool
        ``R_L̂|_C = L_c`` (checked).
    decision : Decision
        How the two checks were decided.
    """

    of_L: sp.Expr
    of_Lhat: sp.Expr
    of_Lbar: sp.Expr
    momenta_Lhat: tuple
    multipliers: tuple
    lbar_free_of_lambda: bool
    lhat_on_C_is_Lc: bool
    decision: object = None

    def __str__(self):
        return (f"Routhians (Crampin & Mestdag (2010) §6):\n  R_L = L − p_a v^a = {self.of_L}\n"
                f"  R_L̂ = L̂ − p̂_a v^a = {self.of_Lhat}   (p̂ = {list(self.momenta_Lhat)}; on C: L_c "
                f"{'holds' if self.lhat_on_C_is_Lc else 'FAILS'})\n"
                f"  R_L̄ = L̄ − (p_a + λ_a) v^a = {self.of_Lbar}   "
                f"({'free of λ' if self.lbar_free_of_lambda else 'depends on λ'})")

    def as_latex(self) -> str:
        return (r"\begin{aligned}R_L &= " + latex(self.of_L) + r"\\ R_{\hat L} &= " + latex(self.of_Lhat)
                + r"\\ R_{\bar L} &= " + latex(self.of_Lbar) + r"\end{aligned}")

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"of_L": str(self.of_L), "of_Lhat": str(self.of_Lhat), "of_Lbar": str(self.of_Lbar),
                "momenta_Lhat": [str(p) for p in self.momenta_Lhat],
                "lbar_free_of_lambda": self.lbar_free_of_lambda, "lhat_on_C_is_Lc": self.lhat_on_C_is_Lc,
                **(self.decision.to_dict() if self.decision is not None else {})}


def routhians(chaplygin) -> Routhians:
    """The three Routhians of Crampin & Mestdag (2010) §6 (module docstring)."""
    nh, m, n = chaplygin.nonholonomic, chaplygin.m, chaplygin.n
    v = nh.bundle.quasi_velocities
    va = v[m:]
    L = nh.lagrangian.expr
    p = chaplygin.momenta
    Lhat = chaplygin.variational_lagrangian.expr
    RL = sp.expand(L - sp.Add(*[pa * x for pa, x in zip(p, va)]))
    phat = tuple(reduce_if_cheap(Lhat.diff(x), 400) for x in va)
    RLhat = reduce_if_cheap(sp.expand(Lhat - sp.Add(*[pa * x for pa, x in zip(phat, va)])), 400)
    lam = _lambda_symbols(n - m)
    Lbar = L + sp.Add(*[l * x for l, x in zip(lam, va)])
    pbar = [Lbar.diff(x) for x in va]
    RLbar = reduce_if_cheap(sp.expand(Lbar - sp.Add(*[pa * x for pa, x in zip(pbar, va)])), 400)
    verdicts = _Verdicts()
    free = all([verdicts.zero(RLbar.diff(l)) for l in lam])
    on_C = verdicts.zero(nh.restrict(RLhat) - nh.constrained_lagrangian)
    return Routhians(RL, RLhat, RLbar, phat, lam, free, on_C, verdicts.decision)


@dataclass(frozen=True, eq=False)
class RouthReduction(EquationDisplay):
    """The Routh procedure for L, L̂ or L̄ of a Chaplygin system at a momentum level (module docstring).

    Build with :func:`routh_reduction`.

    Attributes
    ----------
    chaplygin : ChaplyginSystem
    source : str
        ``"L"``, ``"L̂"`` or ``"L̄"``.
    routhian : sympy.Expr
        The Routhian ``Λ − P_a v^a`` on TQ (Hamel chart ``(q, v^i)``; for L̄ free of λ).
    momenta : tuple
        ``P_a = ∂Λ/∂v^a`` (for L̄: ``p_a + λ_a``).
    level : tuple
        ``μ_a`` (symbols ``mu1, …`` unless given).
    group_velocities : tuple
        ``v^a`` on the level set, functions of ``(q, ṙ, μ)`` (for L̄: 0, the motion stays in C).
    reduced_routhian : sympy.Expr
        ``R^μ(r, ṙ)`` on ``T(Q/G)``.
    gyroscopic : sympy.ImmutableMatrix
        ``−μ_a R^a_αβ(r)`` (skew).
    multipliers : tuple or None
        For L̄: ``λ_a = μ_a − p_a|_C`` along the reduced motion; None otherwise.
    shape, shape_velocities, group_coordinates : tuple
    """

    chaplygin: object
    source: str
    routhian: sp.Expr
    momenta: tuple
    level: tuple
    group_velocities: tuple
    reduced_routhian: sp.Expr
    gyroscopic: sp.ImmutableMatrix
    multipliers: tuple
    shape: tuple
    shape_velocities: tuple
    group_coordinates: tuple

    @property
    def dim(self) -> int:
        return len(self.shape)

    def forces(self) -> tuple:
        """``−μ_a R^a_αβ ṙ^β``: the right-hand sides of the Routh equations."""
        B, rd = self.gyroscopic, self.shape_velocities
        return tuple(sp.Add(*[B[al, be] * rd[be] for be in range(self.dim) if B[al, be] != 0])
                     for al in range(self.dim))

    def equations(self) -> list:
        """``d/dt ∂R^μ/∂ṙ^α − ∂R^μ/∂r^α = −μ_a R^a_αβ ṙ^β`` (``r_ddot`` symbols for the accelerations)."""
        R, r, rd = self.reduced_routhian, self.shape, self.shape_velocities
        rdd = tuple(sp.Symbol(f"{s.name}_ddot", real=True) for s in r)
        out = []
        for al in range(self.dim):
            p = R.diff(rd[al])
            lhs = sp.Add(*[p.diff(rd[b]) * rdd[b] + p.diff(r[b]) * rd[b] for b in range(self.dim)]) - R.diff(r[al])
            out.append(sp.Eq(lhs, self.forces()[al], evaluate=False))
        return out

    @cached_property
    def metric(self) -> sp.ImmutableMatrix:
        """``∂²R^μ/∂ṙ^α∂ṙ^β``."""
        rd, R = self.shape_velocities, self.reduced_routhian
        return sp.ImmutableMatrix(self.dim, self.dim, lambda i, j: reduce_if_cheap(R.diff(rd[i], rd[j]), 400))

    @cached_property
    def accelerations(self) -> tuple:
        """``r̈^α(r, ṙ, μ)`` solved from the Routh equations."""
        R, r, rd = self.reduced_routhian, self.shape, self.shape_velocities
        F = self.forces()
        rhs = []
        for al in range(self.dim):
            p = R.diff(rd[al])
            rhs.append(R.diff(r[al]) - sp.Add(*[p.diff(r[b]) * rd[b] for b in range(self.dim)]) + F[al])
        sol = solve_square(self.metric, rhs)
        if sol is None:
            raise ReductionError("the reduced Routhian is singular (∂²R/∂ṙ∂ṙ not invertible): L is not regular "
                                 "with respect to D.")
        return tuple(reduce_if_cheap(e, 400) for e in sol)

    def reconstruction(self) -> dict:
        """``{g: ġ}``: ``q̇ = X_α ṙ^α + Ẽ_a v^a(q, ṙ, μ)`` for the group coordinates."""
        ch = self.chaplygin
        X, chart, m = ch.frame.vectors, ch.frame.chart, ch.m
        out = {}
        for g in self.group_coordinates:
            A = chart.index(g)
            e = sp.Add(*[X[al, A] * self.shape_velocities[al] for al in range(m)])
            e += sp.Add(*[X[m + a, A] * va for a, va in enumerate(self.group_velocities) if va != 0])
            out[g] = reduce_if_cheap(e, 400)
        return out

    def __str__(self):
        eqs = "\n".join(f"  {e.lhs} = {e.rhs}" for e in self.equations())
        lev = ", ".join(f"{P} = {mu}" for P, mu in zip(self._momentum_names(), self.level))
        text = (f"Routh procedure for {self.source} at {lev} (shape {', '.join(map(str, self.shape))}):\n"
                f"  R^μ = {self.reduced_routhian}\n{eqs}")
        if self.multipliers is not None:
            text += "\n  multipliers λ = " + str(list(self.multipliers))
        return text

    def _momentum_names(self) -> list:
        k = len(self.level)
        name = {"L": "p", "L̂": "p̂", "L̄": "p+λ"}[self.source]
        return [f"{name}_{a + 1}" for a in range(k)]

    def as_latex(self) -> str:
        head = r"R^\mu = " + latex(self.reduced_routhian) + r"\\ "
        rows = [f"{latex(e.lhs)} &= {latex(e.rhs)}" for e in self.equations()]
        return (r"\begin{aligned}\text{" + tex_text(f"Routh procedure for {self.source}") + r"}:\ " + head
                + " \\\\\n".join(rows) + r"\end{aligned}")

    def to_dict(self) -> dict:
        return {"source": self.source, "level": [str(x) for x in self.level],
                "routhian": str(self.routhian), "momenta": [str(p) for p in self.momenta],
                "group_velocities": [str(x) for x in self.group_velocities],
                "reduced_routhian": str(self.reduced_routhian),
                "gyroscopic": [[str(e) for e in row] for row in self.gyroscopic.tolist()],
                "equations": [f"{e.lhs} = {e.rhs}" for e in self.equations()],
                "reconstruction": {str(k): str(v) for k, v in self.reconstruction().items()},
                "multipliers": None if self.multipliers is None else [str(x) for x in self.multipliers]}


def routh_reduction(chaplygin, of: str = "L", level=None) -> RouthReduction:
    """The Routh procedure for ``of`` ∈ {"L", "Lhat", "Lbar"} at the momentum level ``level`` (module docstring).

    Parameters
    ----------
    chaplygin : ChaplyginSystem
        With shape coordinates.
    of : str
        ``"L"`` (the free Lagrangian, momenta ``p_a``), ``"Lhat"`` (``L̂ = L − p_a v^a``,
        momenta ``p̂_a = ∂L̂/∂v^a``) or ``"Lbar"`` (``L̄ = L + λ_a v^a``, momenta ``p_a + λ_a``,
        the vakonomic motions in C).
    level : sequence, optional
        The values ``μ_a`` of the momenta (default: symbols ``mu1, …``).

    Raises
    ------
    ReductionError
        No shape coordinates; momenta not affine in the group velocities (``v^a`` cannot be
        solved from ``P_a = μ_a``); ``R^μ`` or ``μ_a R^a_αβ`` not G-invariant (a non-abelian
        group at ``μ`` outside the fixed points of the coadjoint action, e.g. ``μ ≠ 0``).
    """
    if of not in _SOURCES:
        raise ReductionError(f"unknown Lagrangian {of!r} for the Routh procedure; use 'L', 'Lhat' or 'Lbar'.")
    ch = chaplygin
    shape, group, rdot = _shape_data(ch)
    nh, m, n = ch.nonholonomic, ch.m, ch.n
    k = n - m
    mu = _level(level, k)
    v = nh.bundle.quasi_velocities
    va = v[m:]
    to_shape = dict(zip(v[:m], rdot))
    R = ch.frame.structure
    if of == "Lbar":
        rs = routhians(ch)
        full = rs.of_Lbar
        momenta = tuple(p + l for p, l in zip(ch.momenta, rs.multipliers))
        group_v = tuple(sp.S.Zero for _ in range(k))
        level_routhian = nh.constrained_lagrangian
        lam = tuple(reduce_if_cheap(mu[a] - ch.momenta_on_C[a].xreplace(to_shape), 400) for a in range(k))
    else:
        Lam = nh.lagrangian.expr if of == "L" else ch.variational_lagrangian.expr
        P = tuple(reduce_if_cheap(Lam.diff(x), 400) for x in va)
        M = sp.Matrix(k, k, lambda a, b: reduce_if_cheap(P[a].diff(va[b]), 400))
        if any(e.has(*va) for e in M):
            raise ReductionError(
                f"the momenta of {_SOURCES[of]} are not affine in the group velocities v^a, so the level set "
                "P_a = μ_a cannot be solved for them here; the Routh procedure needs Λ quadratic in v^a.")
        base = [reduce_if_cheap(Pa.xreplace({x: 0 for x in va}), 400) for Pa in P]
        sol = solve_square(M, [mu[a] - base[a] for a in range(k)])
        if sol is None:
            raise ReductionError(
                f"the momenta of {_SOURCES[of]} cannot be solved for the group velocities (∂P_a/∂v^b singular): "
                "L is not regular with respect to the Lie algebra of G.")
        group_v = tuple(reduce_if_cheap(e, 400) for e in sol)
        full = reduce_if_cheap(sp.expand(Lam - sp.Add(*[Pa * x for Pa, x in zip(P, va)])), 400)
        momenta = P
        level_routhian = (Lam - sp.Add(*[u * x for u, x in zip(mu, va)])).xreplace(dict(zip(va, group_v)))
        lam = None
        group_v = tuple(e.xreplace(to_shape) for e in group_v)
    try:
        reduced = _invariant_part(reduce_if_cheap(sp.expand(level_routhian.xreplace(to_shape)), 400), group,
                                  f"the Routhian of {_SOURCES[of]} on the level set")
        entries = {}
        for al in range(m):
            for be in range(al + 1, m):
                e = -sp.Add(*[mu[a - m] * R[a][al][be] for a in range(m, n) if R[a][al][be] != 0])
                entries[(al, be)] = _invariant_part(tidy(e), group, "the gyroscopic term μ_a R^a_αβ")
    except ReductionError as exc:
        raise ReductionError(
            f"at the level {list(mu)} the Routh equations of {_SOURCES[of]} do not descend to the shape space "
            f"({exc.args[0].split(':')[0]}): for a non-abelian group the level set is G-invariant only at fixed "
            "points of the coadjoint action; use level=[0, …] or reduce by the isotropy group.") from None
    B = sp.ImmutableMatrix(m, m, lambda i, j: entries[(i, j)] if i < j else (-entries[(j, i)] if j < i else 0))
    return RouthReduction(ch, _SOURCES[of], full, momenta, mu, group_v, reduced, B, lam, shape, rdot, group)


# ---------------------------------------------------------------------------------------------
# The lifted action on D° ×_Q TQ
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnihilatorActionCheck:
    """Checks of the lifted action on ``D° ×_Q TQ`` (module docstring); residuals all zero when they hold.

    Attributes
    ----------
    cotangent_lift : tuple of tuples
        ``[b][c]``: ``Ẽ_b^{C*}(λ_c) − R^d_bc λ_d`` with ``Ẽ_b^{C*}`` the cotangent lift computed in
        natural coordinates ``(q, P_A)`` of T*Q at ``P = λ_a θ^a``.
    annihilator_preserved : tuple of tuples
        ``[b][α]``: ``Ẽ_b^{C*}(⟨P, X_α⟩)`` on D° (zero: the lift is tangent to D°).
    lagrangian_invariance : tuple
        ``Y_b(L̄)`` for ``L̄ = L + λ_a v^a``.
    brackets : tuple
        ``[b][c]``: the components of ``[Y_b, Y_c] − R^d_bc Y_d`` (a Lie-algebra action).
    momenta : tuple
        ``p̄_b = Y_b^V(L̄) = p_b + λ_b``.
    decision : Decision
        How the zero tests of the residuals were decided.
    """

    cotangent_lift: tuple
    annihilator_preserved: tuple
    lagrangian_invariance: tuple
    brackets: tuple
    momenta: tuple
    decision: object = None

    def _ok(self, rows) -> bool:
        return all(_zero(e) for row in rows for e in (row if isinstance(row, tuple) else (row,)))

    @property
    def holds(self) -> bool:
        return (self._ok(self.cotangent_lift) and self._ok(self.annihilator_preserved)
                and self._ok(self.lagrangian_invariance) and all(self._ok(r) for r in self.brackets))

    def __bool__(self):
        return self.holds

    def __str__(self):
        parts = [("the generators are cotangent lifts (λ_c ↦ R^d_bc λ_d)", self._ok(self.cotangent_lift)),
                 ("they are tangent to D°", self._ok(self.annihilator_preserved)),
                 ("L̄ = L + λ_a v^a is invariant", self._ok(self.lagrangian_invariance)),
                 ("[Y_b, Y_c] = R^d_bc Y_d", all(self._ok(r) for r in self.brackets))]
        lines = [f"  {'✓' if ok else '✗'} {t}" for t, ok in parts]
        tail = f" [{self.decision}]" if self.decision is not None else ""
        return ("The lifted G-action on D° ×_Q TQ" + tail + ":\n" + "\n".join(lines)
                + f"\n  momenta of L̄: {list(self.momenta)}")

    def as_latex(self) -> str:
        rel = "=" if self.holds else r"\neq"
        return rf"Y_b(\bar L) {rel} 0,\quad \bar p_b = " + latex(sp.Matrix(self.momenta).T)

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        def s(rows):
            return [[str(e) for e in r] if isinstance(r, tuple) else str(r) for r in rows]
        return {"holds": self.holds, "cotangent_lift": s(self.cotangent_lift),
                "annihilator_preserved": s(self.annihilator_preserved),
                "lagrangian_invariance": s(self.lagrangian_invariance),
                "brackets": [s(r) for r in self.brackets], "momenta": [str(p) for p in self.momenta],
                **(self.decision.to_dict() if self.decision is not None else {})}


@dataclass(frozen=True, eq=False)
class AnnihilatorAction:
    """The lifted G-action on ``D° ×_Q TQ`` with coordinates ``(q^A, v^i, λ_a)`` (module docstring).

    ``Y_b = Ẽ_b^A ∂/∂q^A − R^k_bj v^j ∂/∂v^k + R^d_bc λ_d ∂/∂λ_c`` (Crampin & Mestdag (2010), §6).

    Examples
    --------
    >>> from anholo.system import System
    >>> act = AnnihilatorAction(System.load("nonholonomic_particle").chaplygin())
    >>> act.generators[0]
    (0, 0, 1, 0, 0, 0, 0)
    >>> bool(act.check())
    True
    """

    chaplygin: object

    @property
    def multipliers(self) -> tuple:
        """``λ_a``, the fibre coordinates of D° (components w.r.t. ``θ^a``)."""
        return _lambda_symbols(self.chaplygin.n - self.chaplygin.m)

    @property
    def coordinates(self) -> tuple:
        """``(q^A, v^i, λ_a)``."""
        nh = self.chaplygin.nonholonomic
        return tuple(nh.frame.chart.coordinates) + tuple(nh.bundle.quasi_velocities) + self.multipliers

    @cached_property
    def generators(self) -> tuple:
        """The components of ``Y_b`` along ``(∂/∂q^A, ∂/∂v^i, ∂/∂λ_a)``."""
        ch = self.chaplygin
        m, n = ch.m, ch.n
        R, v, lam = ch.frame.structure, ch.nonholonomic.bundle.quasi_velocities, self.multipliers
        out = []
        for b in range(n - m):
            E = tuple(ch.action.generators[b].components)
            dv = tuple(-sp.Add(*[R[k][m + b][j] * v[j] for j in range(n) if R[k][m + b][j] != 0]) for k in range(n))
            dl = tuple(sp.Add(*[R[m + d][m + b][m + c] * lam[d] for d in range(n - m) if R[m + d][m + b][m + c] != 0])
                       for c in range(n - m))
            out.append(E + dv + dl)
        return tuple(out)

    @property
    def extended_lagrangian(self) -> sp.Expr:
        """``L̄ = L + λ_a v^a`` in the coordinates ``(q, v, λ)``."""
        ch = self.chaplygin
        va = ch.nonholonomic.bundle.quasi_velocities[ch.m:]
        return ch.nonholonomic.lagrangian.expr + sp.Add(*[l * x for l, x in zip(self.multipliers, va)])

    def apply(self, b: int, f) -> sp.Expr:
        """``Y_b(f)`` for a function f of ``(q, v, λ)``."""
        f = sympified(f)
        return sp.Add(*[c * f.diff(x) for c, x in zip(self.generators[b], self.coordinates) if c != 0])

    def check(self) -> AnnihilatorActionCheck:
        """Cotangent-lift form, tangency to D°, invariance of L̄, bracket relations (module docstring)."""
        ch = self.chaplygin
        m, n = ch.m, ch.n
        k = n - m
        chart = ch.frame.chart
        q = chart.coordinates
        X, theta, R = ch.frame.vectors, ch.frame.coframe, ch.frame.structure
        lam = self.multipliers
        P = [sp.Add(*[lam[a] * theta[m + a, A] for a in range(k)]) for A in range(n)]  # ω = λ_a θ^a
        cot, ann = [], []
        for b in range(k):
            E = ch.action.generators[b].components

            def lift(Y):  # Ẽ_b^{C*}(⟨P, Y⟩) = Ẽ^A ∂_A(Y^B) P_B − P_B ∂_A(Ẽ^B) Y^A
                return sp.Add(*[P[B] * (sp.Add(*[E[A] * sympified(Y[B]).diff(q[A]) for A in range(n)])
                                        - sp.Add(*[sympified(E[B]).diff(q[A]) * Y[A] for A in range(n)]))
                                for B in range(n)])
            cot.append(tuple(tidy(lift([X[m + c, A] for A in range(n)])
                                  - sp.Add(*[R[m + d][m + b][m + c] * lam[d] for d in range(k)])) for c in range(k)))
            ann.append(tuple(tidy(lift([X[al, A] for A in range(n)])) for al in range(m)))
        Lbar = self.extended_lagrangian
        inv = tuple(reduce_if_cheap(self.apply(b, Lbar), 400) for b in range(k))
        coords = self.coordinates
        brackets = []
        for b in range(k):
            row = []
            for c in range(k):
                Yb, Yc = self.generators[b], self.generators[c]
                br = [sp.Add(*[Yb[i] * sympified(Yc[j]).diff(coords[i]) - Yc[i] * sympified(Yb[j]).diff(coords[i])
                               for i in range(len(coords))]) for j in range(len(coords))]
                res = tuple(tidy(br[j] - sp.Add(*[R[m + d][m + b][m + c] * self.generators[d][j] for d in range(k)]))
                            for j in range(len(coords)))
                row.append(res)
            brackets.append(tuple(row))
        va = ch.nonholonomic.bundle.quasi_velocities[m:]
        momenta = tuple(reduce_if_cheap(Lbar.diff(x), 400) for x in va)
        verdicts = _Verdicts()
        for e in [e for row in cot + ann for e in row] + list(inv) + [e for rows in brackets for r in rows for e in r]:
            verdicts.zero(e)
        return AnnihilatorActionCheck(tuple(cot), tuple(ann), inv, tuple(brackets), momenta, verdicts.decision)

    def __str__(self):
        names = [str(c) for c in self.coordinates]
        lines = []
        for b, Y in enumerate(self.generators):
            terms = [f"({c})∂/∂{x}" for c, x in zip(Y, names) if c != 0]
            lines.append(f"  Y{b + 1} = " + (" + ".join(terms) if terms else "0"))
        return "Lifted G-action on D° ×_Q TQ (coordinates q, v, λ):\n" + "\n".join(lines)

    def as_latex(self) -> str:
        rows = []
        for b, Y in enumerate(self.generators):
            terms = [latex(c) + r"\,\partial_{" + latex(x) + "}" for c, x in zip(Y, self.coordinates) if c != 0]
            rows.append(f"Y_{{{b + 1}}} &= " + (" + ".join(terms) if terms else "0"))
        return r"\begin{aligned}" + r"\\ ".join(rows) + r"\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"coordinates": [str(c) for c in self.coordinates],
                "generators": [[str(c) for c in Y] for Y in self.generators]}

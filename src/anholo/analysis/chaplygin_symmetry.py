"""The symmetry of a Chaplygin system, as checks with results (docs/chaplygin.rst; Crampin & Mestdag (2010) §6).

Let G act on Q with fundamental vector fields ``Ẽ_a`` and structure constants
``[e_a, e_b] = c^d_ab e_d``, so that ``[Ẽ_a, Ẽ_b] = s c^d_ab Ẽ_d`` with ``s = −1``
for a left and ``s = +1`` for a right action (docs/chaplygin.rst).  In the
Chaplygin frame (``X_α`` horizontal, ``X_{m+a} = Ẽ_a``):

* **Coadjoint equivariance of the momenta.**  ``p_a = Ẽ_a^V(L)``; because
  ``[X^C, Y^V] = [X, Y]^V`` and ``Ẽ_b^C(L) = 0``,

      Ẽ_b^C(p_a) = [Ẽ_b, Ẽ_a]^V(L) = s c^d_ba p_d,

  the infinitesimal form of ``J ∘ TΦ_g = Ad*_{g⁻¹} ∘ J`` (for a left action
  ``Ẽ_b^C(p_a) = −(ad*_{e_b} p)_a``).  The momenta are not invariant unless G is
  abelian; the contractions ``p_a R^a_αβ`` are.
* **G-invariance of Γ_nh.**  Each ``Ẽ_b^C`` is tangent to C (D is invariant) and
  ``[Ẽ_b^C, Γ_nh] = 0`` on C: in the coordinates ``(q, v^α)`` of C,
  ``Ẽ_b^C = Ẽ_b^A ∂/∂q^A − R^α_{bβ} v^β ∂/∂v^α`` (the second term vanishes when
  the ``X_α`` are horizontal lifts of shape coordinate fields).
* **Coadjoint equivariance of the multipliers.**  ``μ_a = Γ_nh(p_a)`` and the
  two facts above give ``Ẽ_b^C(μ_a) = s c^d_ba μ_d``.
* **The vakonomic momenta.**  In the vakonomic equations (b)
  ``Γ̄(p_b) − X_b^C(L) + Λ_b + λ_a R^a_bβ v^β = 0`` one has ``X_b^C(L) = 0``
  (invariance) and ``R^a_bβ = 0`` (``[Ẽ_b, X_β] ∈ D``), so

      d/dt (λ_b + p_b) = 0

  along every vakonomic motion, whatever its multipliers.  This is why for
  Chaplygin systems weak and strong consistency of the section ``σ = −p + c``
  coincide: the vakonomic field through ``λ = −p + c`` keeps ``λ + p = c``.
  In the multipliers ``λ_ν`` of the constraints as written (``φ^ν = ω^ν_A u^A``),
  ``λ_a = λ_ν ω^ν(Ẽ_a)``, so ``λ_ν ω^ν(Ẽ_a) + Ẽ_a^A ∂L/∂u^A`` is conserved by the
  coordinate multiplication rule ``E_A(L + λ_ν φ^ν) = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..parsing import sympified
from ..algebra import reduce_if_cheap, vanishes
from ..algebra.printing import latex, tex_text
from ..dynamics.vakonomic import VakonomicSystem

__all__ = [
    "EquivarianceCheck",
    "FieldInvarianceCheck",
    "VakonomicMomentumCheck",
    "momentum_equivariance",
    "multiplier_equivariance",
    "field_invariance",
    "vakonomic_momenta",
]


def _zero(e) -> bool:
    return e == 0 or vanishes(e)


@dataclass(frozen=True)
class EquivarianceCheck:
    """``Ẽ_b^C(f_a) = s c^d_ba f_d`` for ``f = p`` or ``f = μ`` on C (module docstring).

    Attributes
    ----------
    quantity : str
        ``"p"`` (momenta) or ``"mu"`` (multipliers).
    values : tuple
        ``f_a`` on C, functions of ``(q, v^α)``.
    residuals : tuple of tuples
        ``residuals[b][a] = Ẽ_b^C(f_a) − s c^d_ba f_d``.
    holds : bool
        All residuals vanish.
    """

    quantity: str
    values: tuple
    residuals: tuple
    holds: bool

    def __bool__(self):
        return self.holds

    def __str__(self):
        name = {"p": "momenta p_a", "mu": "multipliers μ_a"}[self.quantity]
        verdict = "transform coadjointly" if self.holds else "do NOT transform coadjointly"
        return f"The {name} {verdict}: E_b^C(f_a) = s c^d_ba f_d " + (
            "holds for all a, b." if self.holds else f"fails; residuals {self._nonzero()}.")

    def _nonzero(self) -> dict:
        return {(b, a): r for b, row in enumerate(self.residuals) for a, r in enumerate(row) if not _zero(r)}

    def as_latex(self) -> str:
        f = {"p": "p", "mu": r"\mu"}[self.quantity]
        rel = "=" if self.holds else r"\neq"
        return (rf"\tilde E_b^C({f}_a) {rel} s\, c^d_{{ba}}\, {f}_d"
                + ("" if self.holds else r"\quad\text{" + tex_text(str(self._nonzero())) + "}"))

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"quantity": self.quantity, "holds": self.holds, "values": [str(v) for v in self.values],
                "residuals": [[str(r) for r in row] for row in self.residuals]}


@dataclass(frozen=True)
class FieldInvarianceCheck:
    """``[Ẽ_b^C, Γ_nh] = 0`` on C, component-wise in ``(q, v^α)`` (module docstring).

    Attributes
    ----------
    residuals : tuple of tuples
        ``residuals[b]``: the n + m components of ``[Ẽ_b^C, Γ_nh]`` (along ``∂/∂q^A``,
        then ``∂/∂v^α``).
    holds : bool
    """

    residuals: tuple
    holds: bool

    def __bool__(self):
        return self.holds

    def __str__(self):
        if self.holds:
            return "Γ_nh is G-invariant: [E_b^C, Γ_nh] = 0 on C for every generator."
        bad = [b + 1 for b, row in enumerate(self.residuals) if not all(_zero(r) for r in row)]
        return f"Γ_nh is NOT G-invariant: [E_b^C, Γ_nh] ≠ 0 for b = {bad}."

    def as_latex(self) -> str:
        return r"[\tilde E_b^C, \Gamma_{nh}] " + ("=" if self.holds else r"\neq") + r" 0 \text{ on } C"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"holds": self.holds, "residuals": [[str(r) for r in row] for row in self.residuals]}


@dataclass(frozen=True)
class VakonomicMomentumCheck:
    """``λ_a + p_a`` is a constant of motion of the vakonomic field (module docstring).

    Attributes
    ----------
    multipliers : tuple of Symbol
        The frame multipliers ``λ_a`` (components w.r.t. the connection forms ``θ^a``).
    integrals : tuple
        ``λ_a + p_a|_C`` as functions of ``(q, v^α, λ)``.
    rates : tuple
        Their derivatives along the vakonomic field tangent to C (all zero when ``holds``).
    natural_integrals : tuple
        The same integrals in ``(q, q_dot)`` and the multipliers ``λ_ν`` of the constraints
        as written: ``λ_ν ω^ν(Ẽ_a) + Ẽ_a^A ∂L/∂u^A`` (symbols of ``written_multipliers``).
    written_multipliers : tuple of Symbol
    holds : bool
    """

    multipliers: tuple
    integrals: tuple
    rates: tuple
    natural_integrals: tuple
    written_multipliers: tuple
    holds: bool

    def __bool__(self):
        return self.holds

    def equations(self) -> list:
        """``d/dt (λ_a + p_a) = rate_a``."""
        return [sp.Eq(sp.Derivative(sp.Function("J" + str(a + 1))(sp.Symbol("t")), sp.Symbol("t")), r)
                for a, r in enumerate(self.rates)]

    def __str__(self):
        lines = [f"  {lam} + p_{a + 1} = {e}" for a, (lam, e) in enumerate(zip(self.multipliers, self.integrals))]
        head = ("λ_a + p_a is conserved by every vakonomic motion:" if self.holds else
                "λ_a + p_a is NOT conserved by the vakonomic field (rates " + str(list(self.rates)) + "):")
        return "\n".join([head] + lines)

    def as_latex(self) -> str:
        rows = [rf"\frac{{d}}{{dt}}\left({latex(e)}\right) &= {latex(r)}" for e, r in zip(self.integrals, self.rates)]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"holds": self.holds, "integrals": [str(e) for e in self.integrals],
                "natural_integrals": [str(e) for e in self.natural_integrals],
                "written_multipliers": [s.name for s in self.written_multipliers],
                "rates": [str(r) for r in self.rates]}


# ---------------------------------------------------------------------------------------------


def _sign(chaplygin) -> int:
    return -1 if chaplygin.action.action == "left" else 1


def _lift_on_C(chaplygin, b: int, f) -> sp.Expr:
    """``Ẽ_b^C(f)`` for f a function of ``(q, v^α)`` on C (Chaplygin frame index m + b)."""
    nh, m = chaplygin.nonholonomic, chaplygin.m
    frame = chaplygin.frame
    R = frame.structure
    v = nh.free_velocities
    f = sympified(f)
    out = frame.apply(m + b, f)
    for al in range(m):
        coeff = sp.Add(*[R[al][m + b][be] * v[be] for be in range(m) if R[al][m + b][be] != 0])
        if coeff != 0:
            out -= coeff * f.diff(v[al])
    return out


def _equivariance(chaplygin, values, quantity) -> EquivarianceCheck:
    k, s = chaplygin.action.dim, _sign(chaplygin)
    c = chaplygin.action.structure_constants
    rows = []
    for b in range(k):
        row = []
        for a in range(k):
            expected = sp.Add(*[s * c[d][b][a] * values[d] for d in range(k) if c[d][b][a] != 0])
            r = reduce_if_cheap(_lift_on_C(chaplygin, b, values[a]) - expected, 400)
            row.append(sp.S.Zero if _zero(r) else r)
        rows.append(tuple(row))
    holds = all(r == 0 for row in rows for r in row)
    return EquivarianceCheck(quantity, tuple(values), tuple(rows), holds)


def momentum_equivariance(chaplygin) -> EquivarianceCheck:
    """``Ẽ_b^C(p_a) = s c^d_ba p_d`` on C (coadjoint equivariance of the momenta)."""
    return _equivariance(chaplygin, chaplygin.momenta_on_C, "p")


def multiplier_equivariance(chaplygin) -> EquivarianceCheck:
    """``Ẽ_b^C(μ_a) = s c^d_ba μ_d`` on C (coadjoint equivariance of the multipliers ``μ_a = Γ_nh(p_a)``)."""
    return _equivariance(chaplygin, chaplygin.multipliers(), "mu")


def field_invariance(chaplygin) -> FieldInvarianceCheck:
    """``[Ẽ_b^C, Γ_nh] = 0`` on C for every generator, in the coordinates ``(q, v^α)`` of C."""
    nh, m = chaplygin.nonholonomic, chaplygin.m
    field = nh.field()
    comps = tuple(field.velocity_field()) + tuple(field.accelerations)
    frame, R = chaplygin.frame, chaplygin.frame.structure
    v = nh.free_velocities
    rows = []
    for b in range(chaplygin.action.dim):
        E = list(frame.vectors.row(m + b))
        vert = [-sp.Add(*[R[al][m + b][be] * v[be] for be in range(m) if R[al][m + b][be] != 0]) for al in range(m)]
        Ecomps = E + vert
        row = []
        for Z, Y in zip(comps, Ecomps):
            r = reduce_if_cheap(_lift_on_C(chaplygin, b, Z) - field(Y), 400)
            row.append(sp.S.Zero if _zero(r) else r)
        rows.append(tuple(row))
    return FieldInvarianceCheck(tuple(rows), all(r == 0 for row in rows for r in row))


def vakonomic_momenta(chaplygin, multipliers=None) -> VakonomicMomentumCheck:
    """``d/dt (λ_a + p_a) = 0`` along the vakonomic field tangent to C (in the Chaplygin frame).

    The rate is ``Λ_a + q̇^A ∂(p_a|_C)/∂q^A + B^α ∂(p_a|_C)/∂v^α`` with ``(B^α, Λ_a)`` of
    :meth:`VakonomicSystem.field` (``p_a|_C`` suffices: the field is tangent to C).
    """
    nh, m = chaplygin.nonholonomic, chaplygin.m
    vak = VakonomicSystem(nh, multipliers)
    vf = vak.field()
    lam = vak.multipliers
    q = nh.frame.chart.coordinates
    qdot = nh.field().velocity_field()
    v = nh.free_velocities
    integrals, rates = [], []
    for a, p in enumerate(chaplygin.momenta_on_C):
        rate = vf.multiplier_rates[a] + sp.Add(*[qd * p.diff(qA) for qd, qA in zip(qdot, q) if qd != 0])
        rate += sp.Add(*[B * p.diff(va) for B, va in zip(vf.accelerations, v) if B != 0])
        rate = reduce_if_cheap(rate, 400)
        rates.append(sp.S.Zero if _zero(rate) else rate)
        integrals.append(lam[a] + p)
    # in (q, q_dot) and the written multipliers: λ_a = λ_ν ω^ν(Ẽ_a)
    chart = nh.frame.chart
    written = tuple(sp.Symbol(f"lambda{nu + 1}", real=True) for nu in range(nh.n - m))
    omega = sp.Matrix(nh.constraints.forms)
    Ln = nh.lagrangian.natural_expr()
    u = chart.velocities
    natural = []
    for a, g in enumerate(chaplygin.action.generators):
        lam_a = sp.Add(*[written[nu] * sp.Add(*[omega[nu, A] * g.components[A] for A in range(nh.n)])
                         for nu in range(nh.n - m)])
        natural.append(reduce_if_cheap(lam_a + sp.Add(*[g.components[A] * Ln.diff(u[A]) for A in range(nh.n)]), 400))
    return VakonomicMomentumCheck(tuple(lam), tuple(integrals), tuple(rates), tuple(natural), written,
                                  all(r == 0 for r in rates))

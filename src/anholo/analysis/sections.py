"""Sections: vakonomic multipliers on C as functions of (q, v^α), and the residuals that test them.

Setting (Crampin & Mestdag 2010, §§4–5; docs/consistency.rst): a
:class:`~anholo.dynamics.nonholonomic.NonholonomicSystem` with linear
constraints, its adapted frame (``X_α`` span D, ``X_a`` complete it), the
constraint submanifold ``C = {v^a = 0}`` with coordinates ``(q, v^α)``, the
nonholonomic field Γ_nh with multipliers ``μ_a`` and the curvature ``R^a_αβ``.
A *section* is a choice of vakonomic multipliers on C, ``λ_a = σ_a(q, v^α)``.
Its residuals:

* weak (Thm. 2): ``W_α(σ) := σ_a R^a_αβ v^β``;
* strong (Cor. 1): in addition ``S_b(σ) := Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β``.

Only linear constraints are treated (C a vector subbundle), as in the
vakonomic module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp
import symengine as se

from ..parsing import sympified
from ..algebra import invert, tidy, vanishes
from ..algebra.conditions import condition_text, essential_factors
from ..algebra.printing import latex
from ..errors import ConstraintError, DimensionError, SectionError
from ..dynamics.nonholonomic import NonholonomicSystem
from ..algebra import determinant

__all__ = ["Section", "zero_section", "as_section", "weak_residuals", "strong_residuals", "check_linear", "excluded_parameters", "parameter_factors",
           "distinct_up_to_scale"]


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------
def check_linear(nh) -> NonholonomicSystem:
    if not isinstance(nh, NonholonomicSystem):
        raise DimensionError(f"expected a NonholonomicSystem, got {type(nh).__name__}.")
    if nh.constraints.is_affine:
        raise ConstraintError(
            "consistency of the nonholonomic and vakonomic dynamics is implemented for linear "
            "constraints; these are affine (θ^a(u) = b^a(q)). Use the coordinate multiplication rule."
        )
    return nh


@dataclass(frozen=True, eq=False)
class Section:
    """Multipliers on C as functions of ``(q, v^α)``: ``λ_a = σ_a(q, v^α)`` (docs/nonholonomic.rst, Vakonomic dynamics).

    Parameters
    ----------
    system : NonholonomicSystem
        Its adapted frame fixes the meaning of the components: ``σ_a`` is the
        component of the multiplier covector along ``θ^a`` (a = m..n−1, 0-based).
    values : sequence
        The n − m functions ``σ_a`` of the coordinates, the parameters and the
        free quasi-velocities ``v^α`` (other symbols are constants).
    name : str
        A short label used in reports, e.g. ``"0"``, ``"-p"``, ``"-p + c"``.
    conditions : tuple of Eq, optional
        Parameter values for which the section is meant (a section found by
        :func:`search_sections` under a parameter condition, e.g. ``a = …``);
        the consistency checks substitute them.

    Raises
    ------
    SectionError
        Wrong number of components, or a component depends on a constrained
        quasi-velocity ``v^a`` (a section is a function on C).
    """

    system: NonholonomicSystem
    values: tuple
    name: str = "sigma"
    conditions: tuple = ()

    def __post_init__(self):
        nh = check_linear(self.system)
        k = nh.n - nh.m
        vals = tuple(sympified(s) for s in self.values)
        if len(vals) != k:
            raise SectionError(
                f"a section of this system has {k} components σ_a (one per constraint, along θ^{nh.m + 1}"
                f"..θ^{nh.n}), got {len(vals)}."
            )
        constrained = set(nh.bundle.quasi_velocities[nh.m:])
        bad = sorted({str(s) for e in vals for s in e.free_symbols & constrained})
        if bad:
            raise SectionError(
                f"a section is a function on C = {{v^a = 0}} of (q, v^α) only, but the values contain the "
                f"constrained quasi-velocities {bad}; restrict them to C (put them to 0) first."
            )
        natural = sorted({str(s) for e in vals for s in e.free_symbols & set(nh.frame.chart.velocities)})
        if natural:
            raise SectionError(
                f"the section is written in the natural velocities {natural}; write it in the free "
                f"quasi-velocities {[str(v) for v in nh.free_velocities]} of the adapted frame."
            )
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "conditions", tuple(self.conditions))

    @property
    def substitution(self) -> dict:
        """``{parameter: value}`` for the section's conditions."""
        return {e.lhs: e.rhs for e in self.conditions if e.lhs.is_Symbol}

    def written_multipliers(self) -> tuple:
        """The section as multipliers of the constraints *as written*, in ``(q, q_dot)`` on C.

        The multiplication rule ``L + Σ λ'_ν φ^ν`` and the frame form ``L + λ_a v^a``
        agree when ``λ_a = λ'_ν M^ν_a`` (``M^ν_a = ω^ν(X_a)``, the
        :attr:`~anholo.dynamics.nonholonomic.NonholonomicSystem.form_matrix`), so
        ``λ' = σ M⁻¹`` (docs/nonholonomic.rst, Vakonomic dynamics).  Evaluated at an initial state on C these are the
        initial multipliers of the vakonomic motion that starts on the image of σ
        (``anholo simulate --field vakonomic --lambda0 …``).
        """
        nh = self.system
        Minv = invert(nh.form_matrix)
        k = len(self.values)
        return tuple(
            nh.to_natural(tidy(sp.Add(*[self.values[a] * Minv[a, nu] for a in range(k)]))).xreplace(self.substitution)
            for nu in range(k)
        )

    def components(self) -> dict:
        """``{"sigma<a>": σ_a}`` with the frame index a (1-based) of each component."""
        m = self.system.m
        return {f"sigma{m + a + 1}": s for a, s in enumerate(self.values)}

    def __str__(self):
        body = ", ".join(f"{k} = {v}" for k, v in self.components().items())
        cond = f" (for {condition_text(self.conditions)})" if self.conditions else ""
        return f"section {self.name}: {body}{cond}"

    def as_latex(self) -> str:
        m = self.system.m
        rows = [f"\\sigma_{{{m + a + 1}}} &= {latex(s)}" for a, s in enumerate(self.values)]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "values": [str(s) for s in self.values],
            "conditions": [f"{e.lhs} = {e.rhs}" for e in self.conditions],
        }


def zero_section(nh: NonholonomicSystem) -> Section:
    """The zero section ``σ = 0``: weakly consistent always (Thm. 2); strongly iff ``μ ≡ 0`` (docs/consistency.rst)."""
    check_linear(nh)
    return Section(nh, (sp.S.Zero,) * (nh.n - nh.m), "0")


# ---------------------------------------------------------------------------------------------
# Residuals (docs/consistency.rst)
# ---------------------------------------------------------------------------------------------
def _rv_constrained(nh, a: int, i: int) -> sp.Expr:
    """``R^a_iβ v^β`` on C (β < m), frame indices 0-based."""
    R, v = nh.frame.structure, nh.free_velocities
    return sp.Add(*[R[a][i][be] * v[be] for be in range(nh.m) if R[a][i][be] != 0])


def weak_residuals(nh: NonholonomicSystem, values: Sequence) -> tuple:
    """``W_α(σ) = σ_a R^a_αβ v^β`` on C, α = 0..m−1 (Thm. 2 of Crampin & Mestdag (2010); docs/consistency.rst)."""
    m, n = nh.m, nh.n
    out = []
    for al in range(m):
        terms = []
        for a in range(m, n):
            s = values[a - m]
            if s != 0:
                rv = _rv_constrained(nh, a, al)
                if rv != 0:
                    terms.append(s * rv)
        out.append(sp.Add(*terms))
    return tuple(out)


def strong_residuals(nh: NonholonomicSystem, values: Sequence) -> tuple:
    """``S_b(σ) = Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β`` on C, b = m..n−1 (Cor. 1 of Crampin & Mestdag (2010); docs/consistency.rst)."""
    m, n = nh.m, nh.n
    field = nh.field()
    out = []
    for b in range(m, n):
        s_b = values[b - m]
        total = field(s_b) if s_b != 0 else sp.S.Zero
        total += field.multipliers[b - m]
        for a in range(m, n):
            s = values[a - m]
            if s != 0:
                rv = _rv_constrained(nh, a, b)
                if rv != 0:
                    total += s * rv
        out.append(total)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Parameter conditions from coefficient equations
# ---------------------------------------------------------------------------------------------
_EXCLUDED_CACHE: dict = {}


def excluded_parameters(nh) -> set:
    """Parameters whose vanishing is not a legitimate special case of the system.

    *Structural* parameters (in the frame or the constraints: their vanishing
    changes D itself) and *degenerate* ones (their vanishing makes L singular,
    ``det g ≡ 0``, or irregular with respect to D, ``det g_αβ|_C ≡ 0``; e.g. a mass).
    """
    key = id(nh)
    if key in _EXCLUDED_CACHE and _EXCLUDED_CACHE[key][0] is nh:
        return _EXCLUDED_CACHE[key][1]
    params = set(nh.frame.chart.parameters)
    out = set()
    for e in list(nh.frame.vectors) + list(nh.constraints.expressions):
        out |= sympified(e).free_symbols & params
    source = getattr(nh, "_source_lagrangian", None) or nh.lagrangian  # det g vanishes in any frame alike
    dets = [determinant(nh.hessian_D) if nh.m else sp.S.One, determinant(source.hessian)]
    for p in params - out:
        if any(det.has(p) and vanishes(det.xreplace({p: 0})) for det in dets):
            out.add(p)
    _EXCLUDED_CACHE[key] = (nh, out)
    return out


def as_section(nh, section) -> Section:
    if isinstance(section, Section):
        if section.system is not nh:
            raise SectionError("the section belongs to another NonholonomicSystem; build it on this one.")
        return section
    return Section(nh, tuple(section), "sigma")


def parameter_factors(expr, nh) -> tuple | None:
    """The factors of ``numerator(expr)`` that can vanish for legitimate parameter values of ``nh``
    (:func:`anholo.algebra.conditions.essential_factors` with :func:`excluded_parameters`)."""
    return essential_factors(expr, set(nh.frame.chart.parameters), excluded_parameters(nh))


def _scale_normal(expr):
    """``e / c`` expanded (symengine), c the rational coefficient of the term of e whose monomial
    prints first: equal for e and r·e (r a nonzero rational), so equal normal forms mean scalar multiples."""
    x = se.expand(se.sympify(expr))
    terms = [(k, c) for k, c in x.as_coefficients_dict().items() if c != 0]
    if not terms:
        return x
    _, c = min(terms, key=lambda kc: str(kc[0]))
    return se.expand(x / c)


def distinct_up_to_scale(exprs) -> list:
    """The expressions with repeats and nonzero rational multiples of earlier ones dropped (order kept).

    ``e`` and ``r·e`` (r ∈ Q, r ≠ 0) vanish for the same parameter values and have the same
    essential factors, so a list of coefficient conditions "all vanish" (Crampin & Mestdag
    (2010), Cor. 1, reduced to coefficients; docs/consistency.rst) keeps its solutions when they
    are dropped.  The normal form (:func:`_scale_normal`) is a symengine expansion, much cheaper
    than the factorisation it spares.  Sound: two expressions are merged only if their normal
    forms are equal, i.e. they are rational multiples of each other; multiples it does not
    recognise (e.g. written over different denominators) are merely kept.
    """
    out, seen = [], set()
    for e in exprs:
        try:
            key = _scale_normal(e)
        except (se.SympifyError, RuntimeError, TypeError, ValueError, NotImplementedError):  # not convertible to symengine: keep it as is
            out.append(e)
            continue
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out

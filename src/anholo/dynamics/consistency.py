"""Consistency of the nonholonomic and vakonomic dynamics (THEORY §§5–6; seed 004, Thm. 1–2, Cor. 1–2).

Setting: a :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem` with linear
constraints, its adapted frame (``X_α`` span D, ``X_a`` complete it), the
constraint submanifold ``C = {v^a = 0}`` with coordinates ``(q, v^α)``, the
nonholonomic field Γ_nh with multipliers ``μ_a`` and the curvature ``R^a_αβ``.

A *section* is a choice of vakonomic multipliers on C, ``λ_a = σ_a(q, v^α)``
(:class:`Section`).  For a section σ (THEORY §6):

* **weak consistency** (Thm. 2): ``W_α(σ) := σ_a R^a_αβ v^β = 0`` on C for all α;
  then Γ_σ = Γ_nh.  The zero section is always weakly consistent.
* **strong consistency** (Cor. 1): in addition
  ``S_b(σ) := Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0`` on C for all b; then the
  vakonomic field is tangent to the image of σ and equals Γ_nh there, and
  Γ_nh is the restriction to C of the Euler–Lagrange field of the variational
  Lagrangian ``L_σ = L + σ_a v^a`` (Cor. 2; Theorem 1 for any σ with T(σ) = 0).

Each check returns a :class:`ConsistencyVerdict` with the residual expressions
that decide it and, when they depend on symbolic parameters, the parameter
conditions under which they vanish.  :func:`search_sections` looks for
strongly consistent sections in a linear ansatz ``σ = σ0 + Σ_k c_k f_k`` with
unknown constants ``c_k``: the residuals are affine in the ``c_k``; their
coefficients of the monomials in ``v^α`` and in the functions of q are
extracted exactly (reduction modulo ``sin² + cos² = 1``), giving a linear
system whose solutions are the working sections and whose compatibility
conditions are conditions on the parameters.

Only linear constraints are treated (C a vector subbundle), as in the
vakonomic module.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import sympy as sp
from sympy.core.function import AppliedUndef

from .._algebra import (
    invert,
    reduce_if_cheap,
    size_exceeds,
    solve_generic,
    solve_square,
    tidy,
    vanishes,
    xreplace_dag,
)
from ..errors import ConstraintError, DimensionError, IrregularLagrangianError, SectionError
from ..printing import latex
from .lagrangian import Lagrangian
from .nonholonomic import NonholonomicSystem

__all__ = [
    "Section",
    "zero_section",
    "ConsistencyVerdict",
    "weak_consistency",
    "strong_consistency",
    "variational_lagrangian",
    "VariationalCheck",
    "variational_check",
    "Ansatz",
    "polynomial_ansatz",
    "SectionFamily",
    "SectionSearch",
    "search_sections",
    "ConsistencyReport",
    "consistency_report",
]

_PRESENT_LIMIT = 2000
_EXACT_LIMIT = 4000  # residuals larger than this (tree nodes) get no exact parameter analysis
_TIDY_LIMIT = 300  # residuals larger than this are reported unsimplified (tidy costs seconds)


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------
def _check_system(nh) -> NonholonomicSystem:
    if not isinstance(nh, NonholonomicSystem):
        raise DimensionError(f"expected a NonholonomicSystem, got {type(nh).__name__}.")
    if nh.constraints.is_affine:
        raise ConstraintError(
            "consistency of the nonholonomic and vakonomic dynamics is implemented for linear "
            "constraints; these are affine (θ^a(u) = b^a(q)). Use the coordinate multiplication rule."
        )
    return nh


def _condition_eq(lhs, rhs=0) -> sp.Eq:
    """``Eq(lhs, rhs)`` kept unevaluated (``Eq(a, 0)`` would be False for a positive symbol)."""
    return sp.Eq(sp.sympify(lhs), sp.sympify(rhs), evaluate=False)


def _condition_text(eqs) -> str:
    return " and ".join(f"{e.lhs} = {e.rhs}" for e in eqs)


def _alternatives_text(alternatives) -> str:
    parts = [_condition_text(alt) for alt in alternatives]
    if len(parts) > 1:
        parts = [f"({p})" if " and " in p else p for p in parts]
    return " or ".join(parts)


@dataclass(frozen=True, eq=False)
class Section:
    """Multipliers on C as functions of ``(q, v^α)``: ``λ_a = σ_a(q, v^α)`` (THEORY §5).

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
        nh = _check_system(self.system)
        k = nh.n - nh.m
        vals = tuple(sp.sympify(s) for s in self.values)
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
        ``λ' = σ M⁻¹`` (THEORY §5).  Evaluated at an initial state on C these are the
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
        cond = f" (for {_condition_text(self.conditions)})" if self.conditions else ""
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
    """The zero section ``σ = 0``: weakly consistent always (Thm. 2); strongly iff ``μ ≡ 0`` (THEORY §6)."""
    _check_system(nh)
    return Section(nh, (sp.S.Zero,) * (nh.n - nh.m), "0")


# ---------------------------------------------------------------------------------------------
# Residuals (THEORY §6)
# ---------------------------------------------------------------------------------------------
def _rv_constrained(nh, a: int, i: int) -> sp.Expr:
    """``R^a_iβ v^β`` on C (β < m), frame indices 0-based."""
    R, v = nh.frame.structure, nh.free_velocities
    return sp.Add(*[R[a][i][be] * v[be] for be in range(nh.m) if R[a][i][be] != 0])


def weak_residuals(nh: NonholonomicSystem, values: Sequence) -> tuple:
    """``W_α(σ) = σ_a R^a_αβ v^β`` on C, α = 0..m−1 (Thm. 2 of seed 004; THEORY §6)."""
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
    """``S_b(σ) = Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β`` on C, b = m..n−1 (Cor. 1 of seed 004; THEORY §6)."""
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
# Exact coefficient extraction: r(q, v^α) ≡ 0  ⇔  a list of coefficient expressions vanish
# ---------------------------------------------------------------------------------------------
_RECIPROCAL_TRIG = {
    sp.tan: lambda a: sp.sin(a) / sp.cos(a),
    sp.cot: lambda a: sp.cos(a) / sp.sin(a),
    sp.sec: lambda a: 1 / sp.cos(a),
    sp.csc: lambda a: 1 / sp.sin(a),
}


class _NotPolynomial(Exception):
    pass


def _inside_undefined(expr) -> set:
    """Symbols occurring inside undefined functions (or their derivatives) in ``expr``."""
    out = set()
    for f in expr.atoms(AppliedUndef, sp.Derivative):
        out |= f.free_symbols
    return out


def _coefficients(expr, nh: NonholonomicSystem) -> list:
    """Expressions (free of q-generators and of v^α) that vanish iff ``expr`` vanishes on C.

    ``expr`` is a function of ``(q, v^α)`` (and of parameters and unknown constants).
    ``tan``/``sec``/… are written with ``sin``/``cos``, compound arguments are
    expanded (``sin(2θ)`` → ``2 sin θ cos θ``); then ``sin(u)``, ``cos(u)`` of
    arguments containing coordinates become generators ``S_u, C_u`` and other
    functions of q become generators too.  The numerator of the rational normal
    form is reduced modulo ``S_u² + C_u² − 1`` (a Gröbner basis, so the remainder
    is canonical) and its coefficients with respect to ``v^α``, the generators and
    the coordinates are returned.  Coordinates inside undefined functions
    (``A(r2)``) stay in the coefficients, which are then functional conditions.

    Raises ``_NotPolynomial`` if the numerator is not polynomial in the generators.
    """
    expr = sp.sympify(expr)
    if expr == 0:
        return []
    coords = set(nh.frame.chart.coordinates)
    if expr.has(*_RECIPROCAL_TRIG):
        for f, rule in _RECIPROCAL_TRIG.items():
            expr = expr.replace(f, rule)
    trig = [t for t in expr.atoms(sp.sin, sp.cos) if t.args[0].free_symbols & coords
            and not t.args[0].is_Symbol]
    if trig:
        expr = xreplace_dag(expr, {t: sp.expand_trig(t) for t in trig})
    repl, relations = {}, []
    args = sorted({t.args[0] for t in expr.atoms(sp.sin, sp.cos) if t.args[0].free_symbols & coords},
                  key=sp.default_sort_key)
    for k, u in enumerate(args):
        S, C = sp.Dummy(f"S{k}"), sp.Dummy(f"C{k}")
        repl[sp.sin(u)], repl[sp.cos(u)] = S, C
        relations.append((S, C))
    others = [f for f in expr.atoms(sp.Function)
              if not isinstance(f, (AppliedUndef, sp.sin, sp.cos)) and f.free_symbols & coords]
    others += [p for p in expr.atoms(sp.Pow) if not p.exp.is_Integer and p.free_symbols & coords]
    extra = []
    for k, f in enumerate(sorted(set(others), key=sp.default_sort_key)):
        G = sp.Dummy(f"G{k}")
        repl[f] = G
        extra.append(G)
    if repl:
        expr = xreplace_dag(expr, repl)
    # undefined functions (and their derivatives) and functions of the parameters only
    # are coefficient-side generators
    moving = coords | set(nh.free_velocities)
    coef_atoms = set(expr.atoms(AppliedUndef, sp.Derivative))
    coef_atoms |= {f for f in expr.atoms(sp.Function) if not (f.free_symbols & moving)}
    coef_atoms |= {p for p in expr.atoms(sp.Pow) if not p.exp.is_Integer and not (p.free_symbols & moving)}
    back = {}
    for k, f in enumerate(sorted(coef_atoms, key=sp.default_sort_key)):
        U = sp.Dummy(f"U{k}")
        back[U] = f
    if back:
        expr = xreplace_dag(expr, {f: U for U, f in back.items()})
    inside = _inside_undefined(sp.Tuple(*back.values()))
    bare = sorted(coords - inside, key=sp.default_sort_key)
    split = list(nh.free_velocities) + [g for pair in relations for g in pair] + extra + bare
    symbols = [g for g in split if expr.has(g)]
    split_set = set(symbols)
    symbols += sorted(expr.free_symbols - split_set, key=sp.default_sort_key)
    if not split_set:
        return [expr]
    num = _numerator(expr, symbols)
    ring = num.ring
    rels = [ring(S**2 + C**2 - 1) for S, C in relations if S in split_set and C in split_set]
    if rels:
        num = num.rem(rels)  # lex order with S before C: {S² + C² − 1} is a Gröbner basis
    idx = [i for i, g in enumerate(symbols) if g in split_set]
    rest = [i for i, g in enumerate(symbols) if g not in split_set]
    groups: dict = {}
    for monom, coeff in num.terms():
        key = tuple(monom[i] for i in idx)
        term = sp.Rational(coeff.numerator, coeff.denominator) * sp.Mul(
            *[symbols[i] ** monom[i] for i in rest if monom[i]])
        groups.setdefault(key, []).append(term)
    out = []
    for terms in groups.values():
        c = sp.Add(*terms)
        if c != 0:
            out.append(c.xreplace(back) if back else c)
    return out


def _numerator(expr, symbols):
    """Numerator of ``expr`` as a sparse polynomial over QQ in ``symbols`` (cancelled rational normal form).

    Evaluated bottom-up over the expression DAG in the field ``QQ(symbols)``
    (:func:`_to_field`), much faster than ``together``/``cancel`` on the large
    unsimplified expressions of Γ_nh.
    """
    from sympy.polys.rings import ring

    P, *gens = ring(symbols, sp.QQ)
    return _to_fraction(expr, P, {s: (g, P.one) for s, g in zip(symbols, gens)})[0]


def _to_fraction(expr, P, memo: dict):
    """``expr`` as an uncancelled pair ``(numerator, denominator)`` of polynomials of the ring P.

    Like :func:`_to_field` but without the gcd computations of the field
    (equal denominators are added directly); used where only the numerator's
    vanishing matters.
    """
    stack = [(sp.sympify(expr), False)]
    root = stack[0][0]
    one = P.one
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if a.is_Number:
            r = sp.Rational(str(a)) if a.is_Float else a
            if not r.is_Rational:
                raise _NotPolynomial(f"{a} is not rational")
            memo[a] = (P(sp.QQ(int(r.p), int(r.q))), one)
            continue
        if a.is_Symbol or not a.args:
            raise _NotPolynomial(f"{a} is not a generator")
        if not expanded:
            stack.append((a, True))
            stack.extend((c, False) for c in a.args if c not in memo)
            continue
        vals = [memo[c] for c in a.args]
        if a.is_Add:
            groups: dict = {}
            for n, d in vals:
                groups[d] = groups.get(d, P.zero) + n
            items = [(n, d) for d, n in groups.items() if n]
            if not items:
                acc = (P.zero, one)
            else:
                n, d = items[0]
                for n2, d2 in items[1:]:
                    n, d = n * d2 + n2 * d, d * d2
                acc = (n, d)
        elif a.is_Mul:
            n, d = vals[0]
            for n2, d2 in vals[1:]:
                n, d = n * n2, d * d2
            acc = (n, d)
        elif a.is_Pow and a.exp.is_Integer:
            e = int(a.exp)
            n, d = vals[0]
            if e < 0:
                n, d, e = d, n, -e
            acc = (n ** e, d ** e)
        else:
            raise _NotPolynomial(f"{a} is not a rational function of the generators")
        memo[a] = acc
    return memo[root]


def _to_field(expr, K, memo: dict):
    """``expr`` as an element of the rational function field K; ``memo`` maps K's symbols to its generators.

    Each distinct subexpression is converted once; Floats are read as exact
    rationals.  Raises ``_NotPolynomial`` for anything but +, ×, integer powers
    of the generators and rational numbers.
    """
    stack = [(sp.sympify(expr), False)]
    root = stack[0][0]
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if a.is_Number:
            r = sp.Rational(str(a)) if a.is_Float else a
            if not r.is_Rational:
                raise _NotPolynomial(f"{a} is not rational")
            memo[a] = K(sp.QQ(int(r.p), int(r.q)))
            continue
        if a.is_Symbol or not a.args:
            raise _NotPolynomial(f"{a} is not a generator")
        if not expanded:
            stack.append((a, True))
            stack.extend((c, False) for c in a.args if c not in memo)
            continue
        vals = [memo[c] for c in a.args]
        if a.is_Add:
            acc = vals[0]
            for x in vals[1:]:
                acc = acc + x
        elif a.is_Mul:
            acc = vals[0]
            for x in vals[1:]:
                acc = acc * x
        elif a.is_Pow and a.exp.is_Integer:
            e = int(a.exp)
            acc = vals[0] ** e if e >= 0 else (1 / vals[0]) ** (-e)
        else:
            raise _NotPolynomial(f"{a} is not a rational function of the generators")
        memo[a] = acc
    return memo[root]


# ---------------------------------------------------------------------------------------------
# Parameter conditions from coefficient equations
# ---------------------------------------------------------------------------------------------
_EXCLUDED_CACHE: dict = {}


def _excluded_parameters(nh) -> set:
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
        out |= sp.sympify(e).free_symbols & params
    from .._algebra import determinant

    source = getattr(nh, "_source_lagrangian", None) or nh.lagrangian  # det g vanishes in any frame alike
    dets = [determinant(nh.hessian_D) if nh.m else sp.S.One, determinant(source.hessian)]
    for p in params - out:
        if any(det.has(p) and vanishes(det.xreplace({p: 0})) for det in dets):
            out.add(p)
    _EXCLUDED_CACHE[key] = (nh, out)
    return out


def _essential_factors(expr, nh) -> tuple | None:
    """The factors of ``numerator(expr)`` that can vanish; ``None`` if ``expr`` is identically zero.

    Dropped: numbers, excluded parameters (:func:`_excluded_parameters`), and
    composite factors that cannot vanish for the declared assumptions (e.g.
    ``m R² + 2C`` with positive symbols).  A bare parameter ``p`` otherwise is
    kept although parameters are declared positive: ``p = 0`` is a limiting case
    of the family of systems (e.g. ``a = 0`` for the carriage).
    """
    num = sp.fraction(sp.cancel(sp.together(expr)))[0]
    if num == 0:
        return None
    params = set(nh.frame.chart.parameters)
    excluded = _excluded_parameters(nh)
    _, factors = sp.factor_list(num)
    out = []
    for f, _mult in factors:
        if f.is_number or f in excluded:
            continue
        if f.is_Symbol and f in params:
            out.append(f)
        elif f.is_zero is not False:
            out.append(f)
    return tuple(sorted(set(out), key=sp.default_sort_key))


def _parameter_alternatives(exprs, nh, limit: int = 64):
    """Reduce "all ``exprs`` vanish" to alternatives of parameter conditions.

    Each expression gives a clause "one of its essential factors vanishes"; the
    conjunction of the clauses is expanded into a disjunction of conjunctions,
    putting bare parameters to zero first and substituting them into the rest.
    Returns ``(holds, alternatives)``: ``holds`` True (all vanish identically),
    False (some expression cannot vanish) or None (conditional); ``alternatives``
    is a tuple of tuples of ``Eq``.
    """
    params = set(nh.frame.chart.parameters)
    clauses, seen = [], set()
    for e in sorted((sp.sympify(e) for e in exprs), key=sp.count_ops):
        if e in seen:
            continue
        seen.add(e)
        fs = _essential_factors(e, nh)
        if fs is None:
            continue
        if not fs:
            return False, ()
        clauses.append(frozenset(fs))
    if not clauses:
        return True, ()

    def prune(cls):
        kept = []
        for c in sorted(set(cls), key=len):
            if not any(k <= c for k in kept):
                kept.append(c)
        return kept

    def substitute(cls, p):
        """Clauses after ``p = 0``; None if one becomes impossible."""
        out = []
        for cl in cls:
            if p not in cl and not any(f.has(p) for f in cl):
                out.append(cl)
                continue
            fs = _essential_factors(sp.Mul(*cl).xreplace({p: 0}), nh)
            if fs is None:
                continue
            if not fs:
                return None
            out.append(frozenset(fs))
        return prune(out)

    results: list = []

    def expand(cls, zeros, composites):
        if len(results) >= limit:
            return
        if not cls:
            results.append((frozenset(zeros), frozenset(composites)))
            return
        first = min(cls, key=lambda c: (not any(f.is_Symbol for f in c), len(c)))
        rest = [c for c in cls if c is not first]
        for f in sorted(first, key=lambda f: (not f.is_Symbol, sp.default_sort_key(f))):
            if f.is_Symbol and f in params:
                new = substitute(rest, f)
                comps = substitute([frozenset([g]) for g in composites], f)
                if new is not None and comps is not None:
                    expand(new, zeros | {f}, {g for c in comps for g in c})
            else:
                expand(prune([cl for cl in rest if f not in cl]), zeros, composites | {f})

    expand(prune(clauses), frozenset(), frozenset())
    alts = []
    for r in sorted(set(results), key=lambda s: (len(s[0]) + len(s[1]), sp.default_sort_key(sp.Tuple(*s[0], *s[1])))):
        if not any(a[0] <= r[0] and a[1] <= r[1] for a in alts):
            alts.append(r)
    if not alts:
        return False, ()
    out = tuple(tuple(_condition_eq(f) for f in sorted(z, key=sp.default_sort_key))
                + tuple(_condition_eq(f) for f in sorted(c, key=sp.default_sort_key)) for z, c in alts)
    return None, out


def _decide(residuals, nh, substitution=None):
    """``(holds, alternatives, residuals)`` for "all residuals vanish on C"."""
    res = tuple(xreplace_dag(r, substitution) if substitution else sp.sympify(r) for r in residuals)
    res = tuple(tidy(r) if not size_exceeds(r, _TIDY_LIMIT) else r for r in res)
    if all(vanishes(r) for r in res):
        return True, (), res
    params = set(nh.frame.chart.parameters)
    free = params
    if not any(r.free_symbols & free or r.has(AppliedUndef) for r in res):
        return False, (), res
    if any(size_exceeds(r, _EXACT_LIMIT) for r in res):
        return None, (), res  # nonzero for generic parameters; special values not analysed
    coeffs = []
    for r in sorted(res, key=sp.count_ops):
        if vanishes(r):
            continue
        try:
            cs = _coefficients(r, nh)
        except _NotPolynomial:
            cs = [r]
        if any(not (c.free_symbols & free) and not c.has(AppliedUndef) for c in cs):
            return False, (), res  # a nonzero coefficient free of parameters
        coeffs += cs
    holds, alts = _parameter_alternatives(coeffs, nh)
    return holds, alts, res


# ---------------------------------------------------------------------------------------------
# Verdicts
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConsistencyVerdict:
    """The answer to "is the section σ weakly / strongly consistent?" (THEORY §6).

    Attributes
    ----------
    kind : str
        ``"weak"`` (Thm. 2) or ``"strong"`` (Cor. 1).
    section : Section
    holds : bool or None
        True if the residuals vanish on C, False if they cannot vanish, None if
        that depends on the parameters (see ``conditions``).
    residuals : tuple
        The expressions that must vanish on C, functions of ``(q, v^α)``: first
        ``W_α = σ_a R^a_αβ v^β`` (α = 1..m); for ``"strong"`` then
        ``S_b = Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β`` (b = m+1..n).
    conditions : tuple of tuple of Eq
        When ``holds`` is None: alternatives (each a conjunction of equations on
        the parameters, or functional identities when the system has undefined
        functions) under which the residuals vanish.  Found by reducing the
        residuals to their coefficients in ``v^α`` and the functions of q.
    reason : str
        A sentence saying why.
    """

    kind: str
    section: Section
    holds: bool | None
    residuals: tuple
    conditions: tuple
    reason: str

    def __bool__(self):
        return self.holds is True

    def condition_text(self) -> str:
        """The conditions as text, e.g. ``"a = 0"``; empty if there are none."""
        return _alternatives_text(self.conditions)

    def labels(self) -> tuple:
        """Names of the residuals: ``W1..Wm`` then ``S(m+1)..Sn`` (frame indices)."""
        nh = self.section.system
        out = [f"W{al + 1}" for al in range(nh.m)]
        if self.kind == "strong":
            out += [f"S{b + 1}" for b in range(nh.m, nh.n)]
        return tuple(out)

    def __str__(self):
        lines = [f"{self.kind} consistency of the section {self.section.name}: "
                 + {True: "holds", False: "fails", None: "conditional"}[self.holds], f"  {self.reason}"]
        lines += [f"  {lab} = {r}" for lab, r in zip(self.labels(), self.residuals)]
        return "\n".join(lines)

    def as_latex(self) -> str:
        rows = []
        for lab, r in zip(self.labels(), self.residuals):
            rows.append(f"{lab[0]}_{{{lab[1:]}}} &= {latex(r)}")
        for alt in self.conditions:
            rows.append(r"\text{if } & " + r" \wedge ".join(f"{latex(e.lhs)} = {latex(e.rhs)}" for e in alt))
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "section": self.section.name,
            "holds": self.holds,
            "residuals": [str(r) for r in self.residuals],
            "conditions": [[f"{e.lhs} = {e.rhs}" for e in alt] for alt in self.conditions],
            "reason": self.reason,
        }


def _verdict(kind: str, section: Section, residuals: tuple) -> ConsistencyVerdict:
    nh = section.system
    holds, alts, res = _decide(residuals, nh, section.substitution)
    what = "σ_a R^a_αβ v^β = 0" if kind == "weak" else "σ_a R^a_αβ v^β = 0 and Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0"
    ref = "Thm. 2" if kind == "weak" else "Cor. 1"
    for_ = f" (for {_condition_text(section.conditions)})" if section.conditions else ""
    if holds is True:
        reason = f"the section {section.name}{for_} satisfies {what} on C ({ref})."
    elif holds is False:
        bad = [lab for lab, r in zip(_labels(kind, nh), res) if not vanishes(r)]
        params = set(nh.frame.chart.parameters)
        anyp = " for any parameter values" if any(r.free_symbols & params for r in res) else ""
        reason = (f"the section {section.name}{for_} is not {kind}ly consistent: the residual"
                  f"{'s' if len(bad) > 1 else ''} {', '.join(bad)} of {what} ({ref}) do"
                  f"{'' if len(bad) > 1 else 'es'} not vanish on C{anyp}.")
    elif not alts:
        reason = (f"the section {section.name}{for_} is not {kind}ly consistent for generic parameter values "
                  f"(the residuals of {what}, {ref}, do not vanish at random points of C); whether special "
                  "parameter values make them vanish was not analysed (the residuals are too large for the "
                  "exact coefficient analysis).")
    else:
        reason = (f"the section {section.name}{for_} is {kind}ly consistent iff {_alternatives_text(alts)} "
                  f"(the residuals of {what}, {ref}, vanish on C exactly then).")
    return ConsistencyVerdict(kind, section, holds, res, alts, reason)


def _labels(kind, nh):
    out = [f"W{al + 1}" for al in range(nh.m)]
    if kind == "strong":
        out += [f"S{b + 1}" for b in range(nh.m, nh.n)]
    return out


def _as_section(nh, section) -> Section:
    if isinstance(section, Section):
        if section.system is not nh:
            raise SectionError("the section belongs to another NonholonomicSystem; build it on this one.")
        return section
    return Section(nh, tuple(section), "sigma")


def weak_consistency(nh: NonholonomicSystem, section) -> ConsistencyVerdict:
    """Weak consistency of a section (Thm. 2 of seed 004; THEORY §6).

    σ is weakly consistent iff ``σ_a R^a_αβ v^β = 0`` on C for every α; then the
    section field Γ_σ equals Γ_nh.  ``section`` is a :class:`Section` or a
    sequence of the n − m values ``σ_a``.

    Examples
    --------
    The nonholonomic particle (THEORY §9): weakly consistent with σ = 0, not with σ = −p.

    >>> from anholo.system import System
    >>> nh = System.load("nonholonomic_particle").nonholonomic()
    >>> weak_consistency(nh, zero_section(nh)).holds
    True
    >>> y = nh.frame.chart.coordinates[1]
    >>> v1 = nh.free_velocities[0]
    >>> verdict = weak_consistency(nh, Section(nh, [-y*v1], "-p"))
    >>> verdict.holds, verdict.residuals
    (False, (v1*v2*y, -v1**2*y))
    """
    _check_system(nh)
    section = _as_section(nh, section)
    return _verdict("weak", section, weak_residuals(nh, section.values))


def strong_consistency(nh: NonholonomicSystem, section) -> ConsistencyVerdict:
    """Strong consistency of a section (Cor. 1 of seed 004; THEORY §6).

    σ is strongly consistent iff ``σ_a R^a_αβ v^β = 0`` (α < m) and
    ``Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0`` (b ≥ m) on C; then the vakonomic
    field is tangent to the image of σ and equals Γ_nh there.  With σ = 0 the
    second condition is ``μ ≡ 0``.

    Examples
    --------
    >>> from anholo.system import System
    >>> nh = System.load("nonholonomic_particle").nonholonomic()
    >>> verdict = strong_consistency(nh, zero_section(nh))
    >>> verdict.holds, verdict.residuals[-1]
    (False, v1*v2/(y**2 + 1))
    """
    _check_system(nh)
    section = _as_section(nh, section)
    res = weak_residuals(nh, section.values) + strong_residuals(nh, section.values)
    return _verdict("strong", section, res)


# ---------------------------------------------------------------------------------------------
# Theorem 1 / Cor. 2: the variational Lagrangian
# ---------------------------------------------------------------------------------------------
def variational_lagrangian(nh: NonholonomicSystem, section) -> Lagrangian:
    """``L_σ = L + σ_a v^a`` on TQ (Theorem 1 of seed 004; THEORY §5).

    σ is extended off C independently of the constrained quasi-velocities ``v^a``
    (in the Hamel chart of the adapted frame σ is already such a function).  The
    section's parameter conditions, if any, are substituted.
    """
    _check_system(nh)
    section = _as_section(nh, section)
    v = nh.bundle.quasi_velocities
    expr = nh.lagrangian.expr + sp.Add(*[s * v[nh.m + a] for a, s in enumerate(section.values) if s != 0])
    if section.substitution:
        expr = xreplace_dag(expr, section.substitution)
    return Lagrangian(nh.bundle, expr)


def _euler_lagrange_on_C(nh, L: Lagrangian) -> tuple:
    """The Euler–Lagrange field of L (Prop. 1, THEORY §3) restricted to C: ``Γ^i(q, v^α, 0)``.

    ``g_ij Γ^j = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i)``; g and the right-hand
    side are restricted to C before solving (the equations hold pointwise).
    """
    F, n = nh.frame, nh.n
    v = nh.bundle.quasi_velocities
    R = F.structure
    p = [L.expr.diff(vi) for vi in v]
    on_C = {v[a]: 0 for a in range(nh.m, n)}
    g = sp.Matrix(n, n, lambda i, j: reduce_if_cheap(xreplace_dag(p[i].diff(v[j]), on_C), 400))
    rhs = []
    for i in range(n):
        term = F.apply(i, L.expr)
        for k in range(n):
            if p[k] != 0:
                rv = sp.Add(*[R[k][i][j] * v[j] for j in range(nh.m) if R[k][i][j] != 0])
                if rv != 0:
                    term -= rv * p[k]
        term -= sp.Add(*[v[j] * F.apply(j, p[i]) for j in range(nh.m)])
        rhs.append(xreplace_dag(term, on_C))
    gamma = solve_square(g, rhs)
    if gamma is None:
        raise IrregularLagrangianError(
            "the variational Lagrangian L_σ = L + σ_a v^a is singular on C (its Hessian in the "
            "quasi-velocities is not invertible there), so it has no unique Euler–Lagrange field to "
            "compare with; Theorem 1 then needs the Cartan-form equations (Lagrangian."
            "euler_lagrange_field_cartan)."
        )
    return tuple(gamma)


@dataclass(frozen=True, eq=False)
class VariationalCheck:
    """Is a field on C the restriction of the Euler–Lagrange field of ``L_σ``? (Thm. 1 / Cor. 2).

    Attributes
    ----------
    section : Section
    lagrangian : Lagrangian
        ``L_σ = L + σ_a v^a``.
    target : str
        ``"section"`` (Γ_σ of Prop. 4, Theorem 1) or ``"nonholonomic"`` (Γ_nh, Cor. 2).
    accelerations : tuple
        ``Γ^i`` (i = 1..n) of the Euler–Lagrange field of ``L_σ`` on C.
    residuals : tuple
        ``Γ^α − target^α`` (α < m), then ``Γ^a`` (tangency to C).
    holds : bool
        True if all residuals vanish on C.
    """

    section: Section
    lagrangian: Lagrangian
    target: str
    accelerations: tuple
    residuals: tuple
    holds: bool

    def __bool__(self):
        return self.holds

    def natural_accelerations(self) -> dict:
        """``q̈^A = X_i^A Γ^i + v^i v^j X_j(X_i^A)`` of the Euler–Lagrange field of L_σ on C, in ``(q, v^α)``."""
        nh = self.section.system
        X, v = nh.frame.vectors, nh.free_velocities
        out = {}
        for A, q in enumerate(nh.frame.chart.coordinates):
            acc = sp.Add(*[X[i, A] * g for i, g in enumerate(self.accelerations) if X[i, A] != 0 and g != 0])
            acc += sp.Add(*[v[al] * nh._along(X[al, A]) for al in range(nh.m) if not X[al, A].is_number])
            out[q] = acc
        return out

    def __str__(self):
        verdict = "is" if self.holds else "is not"
        what = "Γ_σ" if self.target == "section" else "Γ_nh"
        return (f"{what} {verdict} the restriction to C of the Euler–Lagrange field of "
                f"L_σ = {self.lagrangian.expr} (section {self.section.name})")


def variational_check(nh: NonholonomicSystem, section, target: str = "nonholonomic") -> VariationalCheck:
    """Compare the Euler–Lagrange field of ``L_σ`` on C with Γ_σ or Γ_nh (THEORY §§5–6).

    Theorem 1: if ``T(σ) = 0`` (Prop. 4) then Γ_σ is the restriction to C of the
    Euler–Lagrange field of ``L_σ = L + σ_a v^a`` (``target="section"``).
    Cor. 2: if σ is strongly consistent, Γ_nh is (``target="nonholonomic"``).

    Raises
    ------
    IrregularLagrangianError
        If ``L_σ`` is singular on C.
    SectionError
        If ``target`` is neither ``"section"`` nor ``"nonholonomic"``.
    """
    from .vakonomic import VakonomicSystem

    _check_system(nh)
    section = _as_section(nh, section)
    if target not in ("section", "nonholonomic"):
        raise SectionError(f"target must be 'section' (Γ_σ, Theorem 1) or 'nonholonomic' (Γ_nh, Cor. 2), got {target!r}.")
    L_sigma = variational_lagrangian(nh, section)
    gamma = _euler_lagrange_on_C(nh, L_sigma)
    sub = section.substitution
    if target == "section":
        values = tuple(xreplace_dag(s, sub) for s in section.values) if sub else section.values
        expected = VakonomicSystem(nh).section_field(values).accelerations
    else:
        expected = nh.field().accelerations
    if sub:
        expected = tuple(xreplace_dag(e, sub) for e in expected)
    residuals = tuple(gamma[al] - expected[al] for al in range(nh.m)) + tuple(gamma[nh.m:])
    holds = all(vanishes(r) for r in residuals)
    return VariationalCheck(section, L_sigma, target, gamma, residuals, holds)


# ---------------------------------------------------------------------------------------------
# Section search
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Ansatz:
    """A linear family of sections ``σ_a = σ0_a + Σ_k c_{a,k} f_{a,k}(q, v^α)`` (THEORY §6).

    Parameters
    ----------
    system : NonholonomicSystem
    basis : sequence of sequences
        For each component a (n − m of them), the functions ``f_{a,k}``.
    offset : Section or sequence, optional
        The fixed part ``σ0`` (default 0), e.g. the section −p of a Chaplygin system.
    name : str, optional
        Label of the sections found; default ``"<offset name> + c"`` or ``"c"``.

    Attributes
    ----------
    unknowns : tuple of tuples of Symbol
        ``c_{a,k}``, named ``c<a>_<k>`` with the 1-based frame index a.
    """

    system: NonholonomicSystem
    basis: tuple
    offset: object = None
    name: str = None
    unknowns: tuple = None

    def __post_init__(self):
        nh = _check_system(self.system)
        k = nh.n - nh.m
        basis = tuple(tuple(sp.sympify(f) for f in comp) for comp in self.basis)
        if len(basis) != k:
            raise SectionError(f"the ansatz needs a list of basis functions for each of the {k} components, "
                               f"got {len(basis)} lists.")
        offset = self.offset
        offset_name = None
        if offset is None:
            offset = (sp.S.Zero,) * k
        elif isinstance(offset, Section):
            offset_name = offset.name
            offset = offset.values
        offset = Section(nh, tuple(offset), offset_name or "offset").values
        for comp in basis:
            Section(nh, tuple(comp[:1]) * k if comp else (0,) * k)  # validates: functions of (q, v^α)
        taken = {s.name for e in list(offset) + [f for comp in basis for f in comp] for s in e.free_symbols}
        unknowns = []
        for a, comp in enumerate(basis):
            row = []
            for j in range(len(comp)):
                name = f"c{nh.m + a + 1}_{j + 1}"
                while name in taken:
                    name = "_" + name
                row.append(sp.Symbol(name, real=True))
            unknowns.append(tuple(row))
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "unknowns", tuple(unknowns))
        if self.name is None:
            object.__setattr__(self, "name", f"{offset_name} + c" if offset_name else "c")

    @property
    def all_unknowns(self) -> tuple:
        return tuple(c for row in self.unknowns for c in row)

    @property
    def values(self) -> tuple:
        """``σ_a`` with the unknown constants as symbols."""
        return tuple(o + sp.Add(*[c * f for c, f in zip(cs, fs)])
                     for o, cs, fs in zip(self.offset, self.unknowns, self.basis))

    def __str__(self):
        m = self.system.m
        return "; ".join(f"sigma{m + a + 1} = {s}" for a, s in enumerate(self.values))


def _monomials(variables, degree: int) -> list:
    out = []
    for d in range(degree + 1):
        for combo in itertools.combinations_with_replacement(variables, d):
            out.append(sp.Mul(*combo))
    return out


def polynomial_ansatz(nh: NonholonomicSystem, functions: Sequence = (1,), degree: int = 1,
                      offset=None, name: str | None = None) -> Ansatz:
    """Sections polynomial in the free quasi-velocities with coefficients from a list of functions of q.

    Every component gets the basis ``{f(q)·M(v)}`` for f in ``functions`` and M
    the monomials in ``v^1..v^m`` of degree 0..``degree``; the section is
    ``σ = offset + Σ c_k f_k`` with unknown constants ``c_k``.

    Examples
    --------
    >>> from anholo.system import System
    >>> nh = System.load("nonholonomic_particle").nonholonomic()
    >>> print(polynomial_ansatz(nh, degree=1))
    sigma3 = c3_1 + c3_2*v1 + c3_3*v2
    """
    _check_system(nh)
    if int(degree) != degree or degree < 0:
        raise SectionError(f"degree must be a non-negative integer, got {degree!r}.")
    fs = [sp.sympify(f) for f in functions]
    mons = _monomials(nh.free_velocities, int(degree))
    basis = tuple(f * M for f in fs for M in mons)
    return Ansatz(nh, (basis,) * (nh.n - nh.m), offset, name)


@dataclass(frozen=True, eq=False)
class SectionFamily:
    """Strongly consistent sections found by :func:`search_sections`.

    Attributes
    ----------
    section : Section
        Its values contain the ``free_constants`` (arbitrary) and, if the family
        exists only for special parameter values, ``section.conditions`` lists them.
    free_constants : tuple of Symbol
    conditions : tuple of Eq
        The parameter values of this family (empty: for all parameter values).
    """

    section: Section
    free_constants: tuple
    conditions: tuple

    def __str__(self):
        free = f"; free constants {', '.join(map(str, self.free_constants))}" if self.free_constants else ""
        return f"{self.section}{free}"


@dataclass(frozen=True, eq=False)
class SectionSearch:
    """Result of :func:`search_sections`.

    Attributes
    ----------
    ansatz : Ansatz
    families : tuple of SectionFamily
        The strongly consistent sections of the ansatz: a family valid for all
        parameter values first (if any), then families for special parameter values.
    exists : bool or None
        True if a family exists for all parameter values, None if only for
        special values (``parameter_conditions``), False if none exists.
    parameter_conditions : tuple of tuple of Eq
        Alternatives of parameter conditions under which a section exists (when
        ``exists`` is None).
    equations : int
        Number of linear equations the residuals were reduced to.
    reason : str
    """

    ansatz: Ansatz
    families: tuple
    exists: bool | None
    parameter_conditions: tuple
    equations: int
    reason: str

    def __str__(self):
        lines = [f"section search {self.ansatz.name}: {self.reason}"]
        lines += [f"  {f}" for f in self.families]
        return "\n".join(lines)


def _linear_system(exprs, unknowns):
    """``(M, b)`` with ``M c = b`` for expressions affine in the unknowns; duplicate and zero rows dropped."""
    rows, seen = [], set()
    for e in exprs:
        e = sp.expand(e)
        if e == 0 or e in seen or -e in seen:
            continue
        seen.add(e)
        rows.append(e)
    if not rows:
        return sp.zeros(0, len(unknowns)), []
    M, b = sp.linear_eq_to_matrix(rows, list(unknowns))
    return M, list(b)


@dataclass(frozen=True)
class _Elimination:
    solution: dict  # pivot unknown -> expression in the free unknowns
    free: tuple
    conditions: tuple  # compatibility conditions (must vanish)
    pivots: tuple  # the pivot values divided by (their zeros are special parameter values)


def _eliminate(M, b, unknowns) -> _Elimination:
    """Gauss–Jordan elimination of ``M c = b`` over the field ``QQ(parameters)``, exactly.

    Entries are converted to a sparse rational function field (every
    operation cancelled exactly), pivots are the entries with fewest terms.
    Records the pivots, whose zeros are the parameter values where the
    generic elimination does not apply.  Raises ``_NotPolynomial`` if an entry
    is not a rational function of its symbols.
    """
    from sympy.polys.fields import field

    nrows, ncols = M.shape
    entries = list(M) + list(b)
    atoms = set()
    for e in entries:
        atoms |= e.atoms(sp.Function) | {p for p in e.atoms(sp.Pow) if not p.exp.is_Integer}
    back = {sp.Dummy(f"A{k}"): f for k, f in enumerate(sorted(atoms, key=sp.default_sort_key))}
    fwd = {f: d for d, f in back.items()}
    if fwd:
        entries = [xreplace_dag(e, fwd) for e in entries]
    symbols = sorted(set().union(*[e.free_symbols for e in entries]) if entries else set(), key=sp.default_sort_key)
    if not symbols:
        symbols = [sp.Dummy("t")]
    K, *gens = field(symbols, sp.QQ)
    memo = dict(zip(symbols, gens))
    vals = [_to_field(e, K, memo) for e in entries]
    rows = [vals[r * ncols:(r + 1) * ncols] + [vals[nrows * ncols + r]] for r in range(nrows)]
    zero = K(0)

    def size(x):
        return len(x.numer.terms()) + len(x.denom.terms())

    def to_expr(x):
        e = x.as_expr()
        return e.xreplace(back) if back else e

    pivot_row: dict = {}
    pivots = []
    used: set = set()
    for col in range(ncols):
        cands = [r for r in range(nrows) if r not in used and rows[r][col] != zero]
        if not cands:
            continue
        r0 = min(cands, key=lambda r: size(rows[r][col]))
        piv = rows[r0][col]
        pivots.append(to_expr(piv))
        rows[r0] = [x / piv if x != zero else x for x in rows[r0]]
        used.add(r0)
        pivot_row[col] = r0
        for r in range(nrows):
            if r != r0 and rows[r][col] != zero:
                f = rows[r][col]
                rows[r] = [x - f * y if y != zero else x for x, y in zip(rows[r], rows[r0])]
    conditions = tuple(to_expr(rows[r][-1]) for r in range(nrows) if r not in used and rows[r][-1] != zero)
    free = tuple(unknowns[c] for c in range(ncols) if c not in pivot_row)
    solution = {}
    for col, r in pivot_row.items():
        expr = to_expr(rows[r][-1])
        for fc in range(ncols):
            if fc not in pivot_row and rows[r][fc] != zero:
                expr -= to_expr(rows[r][fc]) * unknowns[fc]
        solution[unknowns[col]] = expr
    return _Elimination(solution, free, conditions, tuple(pivots))


def _solve_linear(M, b, unknowns, sub=None) -> _Elimination:
    """Solve ``M c = b`` after substituting ``sub``: exactly over the field when the substitution is
    rational, else with :func:`anholo._algebra.solve_generic` (numeric pivot tests, so that algebraic
    parameter values such as square roots are handled)."""
    if sub:
        M = M.applyfunc(lambda e: xreplace_dag(e, sub))
        b = [xreplace_dag(e, sub) for e in b]
    if M.rows == 0:
        return _Elimination({}, tuple(unknowns), (), ())
    algebraic = any(v.has(sp.Pow) and any(not p.exp.is_Integer for p in v.atoms(sp.Pow)) for v in (sub or {}).values())
    if not algebraic:
        try:
            return _eliminate(M, b, unknowns)
        except _NotPolynomial:
            pass
    sol = solve_generic(M, b)
    solution = {}
    for j, c in enumerate(unknowns):
        if j in sol.free_unknowns:
            continue
        expr = sol.particular[j]
        for fc, direction in zip(sol.free_unknowns, sol.free_directions):
            if direction[j] != 0:
                expr += direction[j] * unknowns[fc]
        solution[c] = expr
    return _Elimination(solution, tuple(unknowns[j] for j in sol.free_unknowns), sol.conditions, ())


def _choose_parameter(f, params, solve_for):
    cands = [p for p in (solve_for or params) if f.has(p)]
    if not cands:
        return None
    if solve_for:
        return cands[0]

    def degree(p):
        try:
            return sp.degree(f, p)
        except sp.PolynomialError:
            return 99

    return min(cands, key=lambda p: (degree(p), params.index(p)))


def _roots(f, p) -> list:
    """Real roots of ``f = 0`` for the parameter p (non-negative if p is declared positive)."""
    d = sp.Dummy(p.name, real=True)
    try:
        roots = sp.solve(f.xreplace({p: d}), d)
    except NotImplementedError:
        return []
    return [r for r in roots if not r.has(sp.I) and not (p.is_positive and r.is_negative)]


def _special_values(elim: _Elimination, nh, params, solve_for) -> list:
    """Candidate parameter substitutions where a generically incompatible system may become solvable:
    zeros of the essential factors of the compatibility conditions and of the pivots."""
    factors = []
    for e in elim.conditions + elim.pivots:
        fs = _essential_factors(e, nh) or ()
        factors += [f for f in fs if f.free_symbols & set(params)]
    subs, seen = [], set()
    for f in sorted(set(factors), key=sp.default_sort_key):
        if solve_for and not f.free_symbols & set(solve_for):
            continue
        p = f if f.is_Symbol else _choose_parameter(f, params, solve_for)
        if p is None:
            continue
        for r in ([sp.S.Zero] if f.is_Symbol else _roots(f, p)):
            key = (p, r)
            if key not in seen:
                seen.add(key)
                subs.append({p: r})
    return subs


def search_sections(nh: NonholonomicSystem, ansatz: Ansatz, *, solve_for: Sequence = None) -> SectionSearch:
    """Strongly consistent sections in a linear ansatz (THEORY §6; Cor. 1 of seed 004).

    The residuals ``W_α(σ)`` and ``S_b(σ)`` of :func:`strong_consistency` are
    affine in the unknown constants ``c_k`` of ``σ = σ0 + Σ c_k f_k``.  Each is
    reduced exactly to its coefficients (monomials in ``v^α``, in the coordinates
    and in ``sin``/``cos`` of them modulo ``sin² + cos² = 1``), a linear system
    ``M c = b`` whose entries depend on the parameters only.  It is solved at a
    generic parameter point (:func:`anholo._algebra.solve_generic`).  If that
    is incompatible, the numerators of its compatibility conditions are factored
    and each alternative (a parameter put to 0, or a factor solved for the
    parameter in ``solve_for`` — default: the parameter of lowest degree in it)
    is substituted and the system solved again.  Every family returned is
    verified by substitution into the residuals.

    Parameters
    ----------
    nh : NonholonomicSystem
    ansatz : Ansatz
        e.g. :func:`polynomial_ansatz`.
    solve_for : sequence of Symbol, optional
        Parameters to express the special parameter values by (e.g. ``[a]``).

    Raises
    ------
    SectionError
        If the residuals are not polynomial in the velocities and the functions
        of q after clearing denominators (choose another ansatz).
    """
    _check_system(nh)
    if not isinstance(ansatz, Ansatz) or ansatz.system is not nh:
        raise SectionError("the ansatz must be an Ansatz built on this NonholonomicSystem (see polynomial_ansatz).")
    params = list(nh.frame.chart.parameters)
    solve_for = [sp.sympify(p) if not isinstance(p, str) else sp.Symbol(p, positive=True) for p in (solve_for or [])]
    unknown_params = [p for p in solve_for if p not in params]
    if unknown_params:
        raise SectionError(f"solve_for names {unknown_params}, which are not parameters of the system "
                           f"({', '.join(map(str, params)) or 'none'}).")
    values = ansatz.values
    residuals = weak_residuals(nh, values) + strong_residuals(nh, values)
    coeffs = []
    for r in residuals:
        try:
            coeffs += _coefficients(r, nh)
        except _NotPolynomial as exc:
            raise SectionError(
                "the consistency residuals of this ansatz are not polynomial in the velocities and the "
                f"functions of q ({exc}); use basis functions that are polynomials in the coordinates "
                "and in sines and cosines of them."
            ) from exc
    unknowns = ansatz.all_unknowns
    M, b = _linear_system(coeffs, unknowns)
    candidates = []  # (substitution, elimination)
    generic = _solve_linear(M, b, unknowns)
    if not generic.conditions:
        candidates.append(({}, generic))
    else:
        for sub in _special_values(generic, nh, params, solve_for):
            elim = _solve_linear(M, b, unknowns, sub)
            if not elim.conditions:
                candidates.append((sub, elim))
    families = []
    for sub, elim in candidates:
        sol, free = elim.solution, elim.free
        vals = tuple(xreplace_dag(xreplace_dag(v, sol), sub) if sub else xreplace_dag(v, sol) for v in values)
        vals = tuple(tidy(v) if not size_exceeds(v, _PRESENT_LIMIT) else v for v in vals)
        conditions = tuple(_condition_eq(p, val) for p, val in sub.items())
        check = {c: sp.Rational(k + 2, 7) for k, c in enumerate(free)}
        test = [xreplace_dag(xreplace_dag(xreplace_dag(r, sol), check), sub) for r in residuals]
        assert all(vanishes(t) for t in test), "search_sections: a solution failed verification"
        section = Section(nh, vals, ansatz.name, conditions)
        families.append(SectionFamily(section, free, conditions))
    if candidates and not candidates[0][0]:
        exists, reason = True, (f"strongly consistent sections of the form {ansatz.name} exist for all parameter "
                                f"values ({len(candidates[0][1].free)} free constants).")
    elif families:
        exists = None
        texts = [_condition_text(f.conditions) for f in families]
        reason = f"strongly consistent sections of the form {ansatz.name} exist iff " + " or ".join(texts) + "."
    else:
        exists = False
        reason = f"no strongly consistent section of the form {ansatz.name} exists."
    return SectionSearch(ansatz, tuple(families), exists,
                         tuple(f.conditions for f in families) if exists is None else (), M.rows, reason)


# ---------------------------------------------------------------------------------------------
# The report: the best section known
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConsistencyReport:
    """The consistency verdict of ``anholo analyze`` (THEORY §6).

    Attributes
    ----------
    weak : bool
        True: σ = 0 is always weakly consistent (Thm. 2).
    strong : bool or None
        True if a tried section is strongly consistent for all parameter values
        (named in ``section``), None if one is only for special parameter values
        (``reason`` states them), False if every tried section fails.
    section : str
        The name of the best section (the working one, or the first conditional one).
    reason : str
    verdicts : tuple of ConsistencyVerdict
        The strong verdicts of all sections tried.
    search : SectionSearch or None
        The default search (σ polynomial of degree ≤ 1 in v^α with constant coefficients).
    """

    weak: bool
    strong: bool | None
    section: str
    reason: str
    verdicts: tuple
    search: SectionSearch | None

    def to_dict(self) -> dict:
        return {"weak": self.weak, "strong": self.strong, "section": self.section, "reason": self.reason}

    def lines(self) -> list:
        """Text lines for the report."""
        out = [f"weakly consistent: {'yes' if self.weak else 'no'} (section 0, Thm. 2)"]
        strong = {True: "yes", False: "no", None: "depends on the parameters"}[self.strong]
        out.append(f"strongly consistent: {strong} (section {self.section})")
        out.append(f"  {self.reason}")
        for v in self.verdicts:
            cond = ("works iff " + v.condition_text()) if v.conditions else "undecided (fails for generic parameters)"
            out.append(f"  section {v.section.name}: " + {True: "works", False: "fails", None: cond}[v.holds])
        return out

    def __str__(self):
        return "\n".join(self.lines())


def consistency_report(nh: NonholonomicSystem, extra_sections: Sequence = (), *, search: bool = True) -> ConsistencyReport:
    """Weak and strong consistency for the best section known (THEORY §6).

    Tried in this order: the extra sections (e.g. −p and −p + c from the
    Chaplygin analysis), the zero section, and, with ``search=True``, the
    sections found by a cheap default search (σ polynomial of degree ≤ 1 in the
    free quasi-velocities with constant coefficients).
    """
    _check_system(nh)
    sections = [_as_section(nh, s) for s in extra_sections] + [zero_section(nh)]
    verdicts = [strong_consistency(nh, s) for s in sections]
    found = None
    cheap = not any(size_exceeds(r, _EXACT_LIMIT) for r in verdicts[-1].residuals) and not any(
        r.has(AppliedUndef) for r in verdicts[-1].residuals)
    if search and cheap and not any(v.holds is True and not v.section.conditions for v in verdicts):
        found = search_sections(nh, polynomial_ansatz(nh, (1,), 1, name="c (degree <= 1 in v, constant coefficients)"))
        sections += [f.section for f in found.families]
    for s in sections[len(verdicts):]:
        verdicts.append(strong_consistency(nh, s))
    out = []
    for s, v in zip(sections, verdicts):
        if v.holds is True and s.conditions:
            v = ConsistencyVerdict(v.kind, s, None, v.residuals, (s.conditions,), v.reason)
        out.append(v)
    verdicts = out
    works = [v for v in verdicts if v.holds is True]
    conditional = [v for v in verdicts if v.holds is None]
    tried = ", ".join(v.section.name for v in verdicts)
    if works:
        v = works[0]
        return ConsistencyReport(True, True, v.section.name,
                                 f"the section {v.section.name} is strongly consistent (Cor. 1).", tuple(verdicts), found)
    if conditional:
        parts = [f"{v.section.name} iff {v.condition_text()}" if v.conditions else
                 f"{v.section.name} perhaps for special parameter values (not analysed: residuals too large)"
                 for v in conditional]
        reason = "strongly consistent with the section " + "; with ".join(parts) + f" (tried: {tried})."
        return ConsistencyReport(True, None, conditional[0].section.name, reason, tuple(verdicts), found)
    failed = [v.section.name for v in verdicts]
    reason = ("no tried section is strongly consistent (" + ", ".join(failed) + " fail"
              + ("s" if len(failed) == 1 else "") + "; σ = 0 fails iff the multipliers μ do not vanish).")
    if found is not None and not found.families:
        reason = reason[:-2] + f"; the search {found.ansatz.name} found none)."
    return ConsistencyReport(True, False, verdicts[0].section.name if verdicts else "0", reason, tuple(verdicts), found)

"""Exact coefficient extraction: "r vanishes identically in some variables" as a list of coefficient conditions.

An expression in coordinates, velocities, parameters and unknown constants is
brought to a rational normal form in which ``sin u``, ``cos u`` of arguments
containing the variables become generators ``S_u, C_u`` related by
``S_u² + C_u² = 1`` (reduced canonically: ``S^k → S^(k mod 2)(1 − C²)^(k div 2)``),
other functions of the variables become independent generators, and the
numerator is read as a polynomial in the variables and the generators; it
vanishes identically iff all its coefficients do.  Used by the section searches
of the consistency and Chaplygin analyses (docs/consistency.rst,
docs/chaplygin.rst) and by the exact elimination of :mod:`anholo.algebra.elimination`.
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp
from sympy.core.function import AppliedUndef

from ..parsing import sympified
from .expressions import xreplace_dag

__all__ = [
    "NotPolynomial",
    "coefficients_in",
    "numerator_polynomial",
    "to_fraction",
    "to_field",
    "vanishing_conditions",
    "unique_up_to_sign",
    "drop_nonzero_factors",
    "parameter_equations",
]


# ---------------------------------------------------------------------------------------------
# Exact coefficient extraction: r(q, v^α) ≡ 0  ⇔  a list of coefficient expressions vanish
# ---------------------------------------------------------------------------------------------
_RECIPROCAL_TRIG = {
    sp.tan: lambda a: sp.sin(a) / sp.cos(a),
    sp.cot: lambda a: sp.cos(a) / sp.sin(a),
    sp.sec: lambda a: 1 / sp.cos(a),
    sp.csc: lambda a: 1 / sp.sin(a),
}


class NotPolynomial(Exception):
    pass


def _inside_undefined(expr) -> set:
    """Symbols occurring inside undefined functions (or their derivatives) in ``expr``."""
    out = set()
    for f in expr.atoms(AppliedUndef, sp.Derivative):
        out |= f.free_symbols
    return out


def coefficients_in(expr, coordinates: Sequence, velocities: Sequence) -> list:
    """Expressions (free of q-generators and of the velocities) that vanish iff ``expr`` vanishes identically.

    ``expr`` is a function of ``(q, v)`` (and of parameters and unknown constants);
    on the constraint submanifold C the velocities are the free quasi-velocities ``v^α``.
    ``tan``/``sec``/… are written with ``sin``/``cos``, compound arguments are
    expanded (``sin(2θ)`` → ``2 sin θ cos θ``); then ``sin(u)``, ``cos(u)`` of
    arguments containing coordinates become generators ``S_u, C_u`` and other
    functions of q become generators too.  The numerator of the rational normal
    form is reduced modulo ``S_u² + C_u² − 1`` (a Gröbner basis, so the remainder
    is canonical) and its coefficients with respect to ``v^α``, the generators and
    the coordinates are returned.  Coordinates inside undefined functions
    (``A(r2)``) stay in the coefficients, which are then functional conditions.

    Raises ``NotPolynomial`` if the numerator is not polynomial in the generators.
    """
    expr = sympified(expr)
    if expr == 0:
        return []
    coords = set(coordinates)
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
    moving = coords | set(velocities)
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
    split = list(velocities) + [g for pair in relations for g in pair] + extra + bare
    symbols = [g for g in split if expr.has(g)]
    split_set = set(symbols)
    symbols += sorted(expr.free_symbols - split_set, key=sp.default_sort_key)
    if not split_set:
        return [expr]
    num = numerator_polynomial(expr, symbols)
    pos = {g: i for i, g in enumerate(symbols)}
    pairs = [(pos[S], pos[C]) for S, C in relations if S in split_set and C in split_set]
    if pairs:  # the remainder modulo the Gröbner basis {S² + C² − 1} (lex, S before C)
        num = pythagorean_remainder(num, pairs)
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


def pythagorean_remainder(num, pairs):
    """The canonical remainder of a polynomial modulo ``S² + C² − 1`` for each pair of generator
    indices ``(S, C)``: ``S^k → S^(k mod 2) (1 − C²)^(k div 2)``, done on the monomial dictionary
    (linear in the number of terms; the generic division ``rem`` rescans for leading terms)."""
    R = num.ring
    zero = R.domain.zero
    for iS, iC in pairs:
        if all(monom[iS] < 2 for monom in num.itermonoms()):
            continue
        acc: dict = {}
        expansions: dict = {}
        for monom, coeff in num.iterterms():
            k = monom[iS]
            if k < 2:
                acc[monom] = acc.get(monom, zero) + coeff
                continue
            j = k // 2
            if j not in expansions:  # (1 − C²)^j = Σ_r binom(j, r) (−1)^r C^(2r)
                expansions[j] = [(r, R.domain((-1) ** r * int(sp.binomial(j, r)))) for r in range(j + 1)]
            for r, b in expansions[j]:
                m2 = list(monom)
                m2[iS] = k % 2
                m2[iC] += 2 * r
                t = tuple(m2)
                acc[t] = acc.get(t, zero) + coeff * b
        num = R({m: c for m, c in acc.items() if c})
    return num


def numerator_polynomial(expr, symbols):
    """Numerator of ``expr`` as a sparse polynomial over QQ in ``symbols`` (cancelled rational normal form).

    Evaluated bottom-up over the expression DAG in the field ``QQ(symbols)``
    (:func:`to_field`), much faster than ``together``/``cancel`` on the large
    unsimplified expressions of Γ_nh.
    """
    from sympy.polys.rings import ring

    P, *gens = ring(symbols, sp.QQ)
    return to_fraction(expr, P, {s: (g, P.one) for s, g in zip(symbols, gens)})[0]


def to_fraction(expr, P, memo: dict):
    """``expr`` as an uncancelled pair ``(numerator, denominator)`` of polynomials of the ring P.

    Like :func:`to_field` but without the gcd computations of the field
    (equal denominators are added directly); used where only the numerator's
    vanishing matters.
    """
    stack = [(sympified(expr), False)]
    root = stack[0][0]
    one = P.one
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if a.is_Number:
            r = sp.Rational(str(a)) if a.is_Float else a
            if not r.is_Rational:
                raise NotPolynomial(f"{a} is not rational")
            memo[a] = (P(sp.QQ(int(r.p), int(r.q))), one)
            continue
        if a.is_Symbol or not a.args:
            raise NotPolynomial(f"{a} is not a generator")
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
            raise NotPolynomial(f"{a} is not a rational function of the generators")
        memo[a] = acc
    return memo[root]


def to_field(expr, K, memo: dict):
    """``expr`` as an element of the rational function field K; ``memo`` maps K's symbols to its generators.

    Each distinct subexpression is converted once; Floats are read as exact
    rationals.  Raises ``NotPolynomial`` for anything but +, ×, integer powers
    of the generators and rational numbers.
    """
    stack = [(sympified(expr), False)]
    root = stack[0][0]
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if a.is_Number:
            r = sp.Rational(str(a)) if a.is_Float else a
            if not r.is_Rational:
                raise NotPolynomial(f"{a} is not rational")
            memo[a] = K(sp.QQ(int(r.p), int(r.q)))
            continue
        if a.is_Symbol or not a.args:
            raise NotPolynomial(f"{a} is not a generator")
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
            raise NotPolynomial(f"{a} is not a rational function of the generators")
        memo[a] = acc
    return memo[root]


def _generators_of(expr: sp.Expr, variables: set) -> tuple[sp.Expr, dict, list]:
    """Replace the non-polynomial atoms of ``expr`` that depend on ``variables`` by symbols.

    ``sin(a)``, ``cos(a)`` become ``S, C`` (related by ``S² + C² = 1``; tan, cot, sec, csc
    are rewritten first); any other function of the variables (undefined functions and
    their derivatives, exp, non-integer powers) becomes an independent symbol.
    Returns ``(expr', back, relations)``.
    """
    if expr.has(sp.tan, sp.cot, sp.sec, sp.csc):
        expr = (expr.replace(sp.tan, lambda a: sp.sin(a) / sp.cos(a))
                .replace(sp.cot, lambda a: sp.cos(a) / sp.sin(a))
                .replace(sp.sec, lambda a: 1 / sp.cos(a))
                .replace(sp.csc, lambda a: 1 / sp.sin(a)))
    repl, back, relations = {}, {}, []
    args = sorted({f.args[0] for f in expr.atoms(sp.sin, sp.cos) if f.args[0].free_symbols & variables},
                  key=sp.default_sort_key)
    for k, a in enumerate(args):
        S, C = sp.Dummy(f"S{k}"), sp.Dummy(f"C{k}")
        repl[sp.sin(a)], repl[sp.cos(a)] = S, C
        back[S], back[C] = sp.sin(a), sp.cos(a)
        relations.append((S, C))
    expr = expr.xreplace(repl)
    others = [e for e in expr.atoms(sp.Function, sp.Derivative, sp.Pow)
              if e.free_symbols & variables and not (e.is_Pow and e.exp.is_Integer)]
    # outermost first, so that A(r)' is one generator, not a function of the generator A(r)
    others.sort(key=lambda e: -sp.count_ops(e))
    for k, e in enumerate(others):
        if e in repl or not (isinstance(e, (AppliedUndef, sp.Derivative, sp.Function)) or e.is_Pow):
            continue
        d = sp.Dummy(f"F{k}")
        expr = expr.xreplace({e: d})
        repl[e] = d
        back[d] = e
    return expr, back, relations


def vanishing_conditions(exprs: Sequence, variables: Sequence, factor: bool = True) -> list:
    """Conditions on the remaining symbols under which every expression vanishes identically in ``variables``.

    Each expression is brought over a common denominator; its numerator is
    reduced modulo ``sin² + cos² = 1`` and read as a polynomial in the variables
    and in the non-polynomial functions of them (treated as independent
    generators); the returned list holds its coefficients (expressions in the
    other symbols, e.g. parameters or unknown constants), factored (``factor=True``)
    and with numerical factors removed.  An empty list means the expressions vanish identically.  The
    conditions are sufficient; they are also necessary when the non-polynomial
    functions that occur are algebraically independent (as they are for the
    sines, cosines and undefined functions of the examples).
    """
    variables = set(variables)
    out = []
    for e in exprs:
        e = sympified(e)
        if e == 0:
            continue
        e, back, relations = _generators_of(e, variables)
        num = sp.fraction(sp.together(e))[0]
        gens = sorted((num.free_symbols & variables) | {d for d in back if num.has(d)}, key=sp.default_sort_key)
        coeffs = _reduced_coefficients(num, gens, relations) if gens else [num]
        for c in coeffs:
            c = c.xreplace(back)
            if factor and c.free_symbols:
                c = sp.factor(c)
            if c == 0:
                continue
            coeff, core = c.as_coeff_Mul()
            out.append(core if coeff.is_number and coeff != 0 else c)
    return unique_up_to_sign(out)


def unique_up_to_sign(conds) -> list:
    uniq, seen = [], set()
    for c in conds:
        if c not in seen:
            uniq.append(c)
            seen.update((c, -c))
    return uniq


def _reduced_coefficients(num: sp.Expr, gens: list, relations: list) -> list:
    """Coefficients of ``num`` as a polynomial in ``gens`` after reduction modulo ``S² + C² = 1``
    (``S^e → S^(e mod 2) (1 − C²)^(e div 2)``), done on the monomial dictionary."""
    P = sp.Poly(num, *gens)
    pos = {g: i for i, g in enumerate(gens)}
    pairs = [(pos[S], pos[C]) for S, C in relations if S in pos and C in pos]
    acc: dict = {}
    for monom, coeff in P.terms():
        terms = [(list(monom), sp.S.One)]
        for iS, iC in pairs:
            new = []
            for mon, fac in terms:
                e = mon[iS]
                if e < 2:
                    new.append((mon, fac))
                    continue
                j = e // 2
                for r in range(j + 1):  # (1 − C²)^j = Σ_r binom(j, r) (−1)^r C^(2r)
                    m2 = list(mon)
                    m2[iS] = e % 2
                    m2[iC] += 2 * r
                    new.append((m2, fac * sp.binomial(j, r) * (-1) ** r))
            terms = new
        for mon, fac in terms:
            key = tuple(mon)
            acc[key] = acc.get(key, sp.S.Zero) + fac * coeff
    out = []
    for c in acc.values():
        c = sp.expand(c)
        if c != 0:
            out.append(c)
    return out


def drop_nonzero_factors(cond: sp.Expr, variables: set) -> sp.Expr:
    """Remove from a factored condition the numbers and the factors that cannot vanish
    (positive expressions free of parameters, e.g. ``y**2 + 1``)."""
    factors = sp.Mul.make_args(sp.factor(cond))
    keep = []
    for f in factors:
        base = f.base if f.is_Pow and f.exp.is_positive else f
        if base.is_number:
            continue
        if base.free_symbols <= variables and base.is_positive:
            continue
        keep.append(base)
    return sp.Mul(*keep)


def parameter_equations(conditions: Sequence, variables: set) -> list:
    """Split conditions that still depend on the variables into conditions on the other symbols."""
    out = []
    for c in conditions:
        c = drop_nonzero_factors(c, variables)
        if c.free_symbols & variables:
            out.extend(vanishing_conditions([c], variables))
        else:
            out.append(c)
    return [c for c in out if c != 0]

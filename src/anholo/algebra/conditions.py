"""Parameter conditions: "all these expressions vanish" as alternatives of conditions on parameters.

Each expression contributes a clause "one of its essential factors vanishes"
(numbers, excluded parameters and factors that cannot vanish under the declared
assumptions are dropped); the conjunction of the clauses is expanded into a
disjunction of conjunctions, bare parameters set to zero first.  Used by the
consistency verdicts (docs/consistency.rst).
"""

from __future__ import annotations

import sympy as sp

from ..parsing import sympified

__all__ = ["condition_eq", "condition_text", "alternatives_text", "essential_factors", "parameter_alternatives"]


def condition_eq(lhs, rhs=0) -> sp.Eq:
    """``Eq(lhs, rhs)`` kept unevaluated (``Eq(a, 0)`` would be False for a positive symbol)."""
    return sp.Eq(sympified(lhs), sympified(rhs), evaluate=False)


def condition_text(eqs) -> str:
    return " and ".join(f"{e.lhs} = {e.rhs}" for e in eqs)


def alternatives_text(alternatives) -> str:
    parts = [condition_text(alt) for alt in alternatives]
    if len(parts) > 1:
        parts = [f"({p})" if " and " in p else p for p in parts]
    return " or ".join(parts)


def essential_factors(expr, params: set, excluded: set) -> tuple | None:
    """The factors of ``numerator(expr)`` that can vanish; ``None`` if ``expr`` is identically zero.

    Dropped: numbers, ``excluded`` parameters (e.g. structural ones and masses, whose
    vanishing is not a legitimate special case of the system), and
    composite factors that cannot vanish for the declared assumptions (e.g.
    ``m R² + 2C`` with positive symbols).  A bare parameter ``p`` otherwise is
    kept although parameters are declared positive: ``p = 0`` is a limiting case
    of the family of systems (e.g. ``a = 0`` for the carriage).
    """
    num = sp.fraction(sp.cancel(sp.together(expr)))[0]
    if num == 0:
        return None
    try:
        _, factors = sp.factor_list(num)
    except sp.PolynomialError:  # not a polynomial in any generators (x^(3^(-3^(-1/3)))): its own factors
        factors = [(f, 1) for f in sp.Mul.make_args(num)]
    out = []
    for f, _mult in factors:
        if f.is_number or f in excluded:
            continue
        if f.is_Symbol and f in params:
            out.append(f)
        elif f.is_zero is not False:
            out.append(f)
    return tuple(sorted(set(out), key=sp.default_sort_key))


def parameter_alternatives(exprs, params: set, excluded: set, limit: int = 64):
    """Reduce "all ``exprs`` vanish" to alternatives of parameter conditions.

    Each expression gives a clause "one of its essential factors vanishes"; the
    conjunction of the clauses is expanded into a disjunction of conjunctions,
    putting bare parameters to zero first and substituting them into the rest.
    Returns ``(holds, alternatives)``: ``holds`` True (all vanish identically),
    False (some expression cannot vanish) or None (conditional); ``alternatives``
    is a tuple of tuples of ``Eq``.
    """
    params = set(params)
    clauses, seen = [], set()
    for e in sorted((sympified(e) for e in exprs), key=sp.count_ops):
        if e in seen:
            continue
        seen.add(e)
        fs = essential_factors(e, params, excluded)
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
            fs = essential_factors(sp.Mul(*cl).xreplace({p: 0}), params, excluded)
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
    out = tuple(tuple(condition_eq(f) for f in sorted(z, key=sp.default_sort_key))
                + tuple(condition_eq(f) for f in sorted(c, key=sp.default_sort_key)) for z, c in alts)
    return None, out

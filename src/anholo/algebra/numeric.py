"""Numerical zero tests: random points, evaluation at a point, generic stand-ins for undefined functions.

A nonzero value at a random point proves an expression nonzero; a zero at several
independent random points makes it zero with probability one for the analytic
expressions that occur here.
"""

from __future__ import annotations

import random
from typing import Iterable, Mapping, Sequence

import sympy as sp

from .expressions import dag_atoms

__all__ = ["random_point", "numeric_value", "concrete_functions", "numerically_zero"]


def random_point(symbols: Iterable[sp.Symbol], rng: random.Random | None = None) -> dict:
    """A random point for the given symbols, respecting positivity assumptions.

    Values are drawn from (0.3, 1.3) for positive symbols and (-1.3, 1.3) away
    from 0 otherwise, as exact rationals with small denominators avoided (so
    special values such as 0, 1, pi/2 are hit with probability ~0).
    """
    rng = rng or random.Random()
    point = {}
    for s in sorted(symbols, key=sp.default_sort_key):
        if s.is_positive or s.is_nonnegative:
            val = rng.uniform(0.3, 1.3)
        else:
            val = rng.uniform(0.25, 1.3) * rng.choice((-1, 1))
        point[s] = sp.Float(val, 30)
    return point


def _generic_function(func, nargs: int) -> sp.Lambda:
    """A fixed random analytic function standing in for an undefined function ``func``.

    Seeded by the function's name, so every evaluation in a session uses the same
    stand-in.  An identity that holds for every function holds for it; a
    nonzero expression vanishes for it with probability zero.
    """
    rng = random.Random(f"anholo-generic-{func.__name__}-{nargs}")
    xs = sp.symbols(f"_g0:{nargs}", real=True)
    body = sp.Float(rng.uniform(0.3, 1.3), 30)
    for x in xs:
        a, b, c, d = (sp.Float(rng.uniform(0.3, 1.3), 30) for _ in range(4))
        body += a * sp.sin(b * x + c) + d * x**2 / 3
    return sp.Lambda(xs, body)


def concrete_functions(expr: sp.Expr) -> sp.Expr:
    """Replace undefined functions (``A(q)``, also inside derivatives) by generic stand-ins.

    Used only for numerical zero tests; see :func:`_generic_function`.
    """
    from sympy.core.function import AppliedUndef

    expr = sp.sympify(expr)
    if not dag_atoms(expr, AppliedUndef):
        return expr
    stand_in = {}

    def replace(app):
        key = (app.func, len(app.args))
        if key not in stand_in:
            stand_in[key] = _generic_function(app.func, len(app.args))
        return stand_in[key](*app.args)

    return expr.replace(lambda e: isinstance(e, AppliedUndef), replace).doit()


def numeric_value(expr: sp.Expr, point: Mapping) -> complex:
    """Evaluate ``expr`` at ``point`` (a dict symbol -> number) as a Python complex.

    30-digit mpmath arithmetic, each distinct subexpression evaluated once (derived
    expressions are DAGs far smaller than their trees).  Undefined functions are
    replaced by generic stand-ins first (:func:`concrete_functions`).  An
    expression that cannot be evaluated (a symbol missing from ``point``) gives
    NaN: "unknown", never "zero".
    """
    import mpmath

    try:
        expr = concrete_functions(expr)
    except (TypeError, ValueError):
        return complex("nan")
    memo: dict = {}
    with mpmath.workdps(30):
        for s, val in point.items():
            memo[s] = mpmath.mpmathify(complex(sp.sympify(val).evalf(30)))
        stack = [(expr, False)]
        try:
            while stack:
                a, expanded = stack.pop()
                if a in memo:
                    continue
                if a.is_Symbol:
                    return complex("nan")
                if a.is_Number or a.is_NumberSymbol or a is sp.I:
                    memo[a] = mpmath.mpc(0, 1) if a is sp.I else mpmath.mpf(sp.Float(a, 35))
                elif not expanded:
                    stack.append((a, True))
                    stack.extend((c, False) for c in a.args if c not in memo)
                else:
                    vals = [memo[c] for c in a.args]
                    if a.is_Add:
                        memo[a] = mpmath.fsum(vals)
                    elif a.is_Mul:
                        memo[a] = mpmath.fprod(vals)
                    elif a.is_Pow:
                        memo[a] = mpmath.power(vals[0], vals[1])
                    elif isinstance(a, sp.Function) and hasattr(mpmath, type(a).__name__):
                        memo[a] = getattr(mpmath, type(a).__name__)(*vals)
                    else:
                        memo[a] = mpmath.mpmathify(complex(a.xreplace(dict(point)).evalf(30)))
            return complex(memo[expr])
        except (TypeError, ValueError, ZeroDivisionError):
            return complex("nan")


def numerically_zero(expr: sp.Expr, points: Sequence[Mapping], tol: float = 1e-12) -> bool:
    """True if ``expr`` vanishes (to ``tol`` relative to 1) at every point.

    An expression with symbols not covered by the points is considered nonzero
    unless it is structurally zero.
    """
    expr = sp.sympify(expr)
    if expr == 0:
        return True
    for point in points:
        val = numeric_value(expr, point)
        if val != val or abs(val) > tol:  # NaN or clearly nonzero
            return False
    return True

"""Numerical zero tests: random points, evaluation at a point, generic stand-ins for undefined functions.

A nonzero value at a random point proves an expression nonzero; a zero at several
independent random points makes it zero with probability one for the analytic
expressions that occur here.
"""

from __future__ import annotations

import random
from typing import Iterable, Mapping, Sequence

import sympy as sp
from sympy.core.function import AppliedUndef

from ..parsing import sympified
from .expressions import dag_atoms

__all__ = ["random_point", "numeric_value", "concrete_functions", "numerically_zero", "numerically_dependent",
           "numerical_relations"]


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

    expr = sympified(expr)
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
            memo[s] = mpmath.mpmathify(complex(sympified(val).evalf(30)))
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
    expr = sympified(expr)
    if expr == 0:
        return True
    for point in points:
        val = numeric_value(expr, point)
        if val != val or abs(val) > tol:  # NaN or clearly nonzero
            return False
    return True


def numerical_relations(exprs: Sequence[sp.Expr], extra_points: int = 6, seed: int = 29, tol: float = 1e-9):
    """Approximate linear relations ``Σ c_j exprs_j ≡ 0`` with constant ``c``, found at random points.

    The values of the functions at ``len(exprs) + extra_points`` random points (every symbol,
    parameters included, generic) form a matrix; its right singular vectors of (relatively)
    small singular values are returned (a list of lists of complex numbers, empty if the
    functions look independent).  None if an expression cannot be evaluated ("unknown").
    A necessary test for exact relations, used to skip exact eliminations that cannot
    succeed and to narrow those that can to the functions that take part.
    """
    import numpy as np

    exprs = [sympified(e) for e in exprs]
    n = len(exprs)
    if not n:
        return []
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=sp.default_sort_key)
    rng = random.Random(seed)
    points = [random_point(symbols, rng) for _ in range(n + extra_points)]
    if n == 1:  # no scale to compare with: the zero test at 30 digits
        return [[1.0]] if numerically_zero(exprs[0], points[:3], tol=1e-10) else []
    try:  # one compiled function for all (shared subexpressions evaluated once)
        rows = _compiled_rows(symbols, exprs, points)
    except Exception:  # anything symengine or lambdify cannot take: the slower evaluation of numeric_value
        rows = [[numeric_value(e, pt) for e in exprs] for pt in points]
    if any(v != v or abs(v) == float("inf") for row in rows for v in row):
        return None
    M = np.array(rows, dtype=complex)
    scale = np.abs(M).max(axis=0)
    zero = [j for j in range(n) if scale[j] <= tol * max(scale.max(), 1.0)]
    if zero:  # functions that vanish at every point: each is a relation by itself
        return [[1.0 if i == j else 0.0 for i in range(n)] for j in zero]
    _, sv, vh = np.linalg.svd(M / scale, full_matrices=True)
    small = [k for k in range(n) if k >= len(sv) or sv[k] <= tol * sv[0]]
    return [list(vh[k].conj() / scale) for k in small]


def _compiled_rows(symbols, exprs, points) -> list:
    """The values of ``exprs`` at ``points`` (rows), by one generated function with shared subexpressions
    (:func:`~anholo.algebra.codegen.expression_function`, every point at once over numpy arrays; undefined
    functions get generic stand-ins, :func:`concrete_functions`)."""
    import numpy as np

    from .codegen import expression_function

    values = np.array([[float(pt[s]) for s in symbols] for pt in points], dtype=float).reshape(len(points), -1)
    if any(dag_atoms(e, AppliedUndef) for e in exprs):
        exprs = [concrete_functions(e) for e in exprs]
    f = expression_function(list(symbols), list(exprs))
    return [[complex(x) for x in row] for row in f.vector(values)]


def numerically_dependent(exprs: Sequence[sp.Expr], extra_points: int = 6, seed: int = 29, tol: float = 1e-9) -> bool:
    """True if the functions ``exprs`` look linearly dependent over the constants (see
    :func:`numerical_relations`; an expression that cannot be evaluated gives True, "maybe")."""
    rel = numerical_relations(exprs, extra_points, seed, tol)
    return rel is None or bool(rel)

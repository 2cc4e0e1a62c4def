"""A fast symbolic engine for large expressions: symengine behind sympy at the API boundary.

anholo's exact kernel (:mod:`anholo.algebra.kernel`) gives small canonical results on small
systems.  Large systems — a bicycle's Lagrangian has thousands of operations and its
rolling constraints carry square roots — need the opposite trade: no normal forms at all,
only differentiation, substitution, matrix products, linear solves by LU (kept as
expressions, never inverted into a normal form) and common subexpressions.  symengine
(a C++ library with Python bindings) does exactly these operations 80–225× faster than
sympy on anholo's own formulas (benchmarks/bench_symengine.py), so the large-system route
(:mod:`anholo.dynamics.maggi`) computes in it and converts back only what the user asks for.

Conversions:

* :func:`to_engine` — sympy (or a string) → symengine;
* :func:`to_sympy` — symengine → sympy, with the caller's symbols (their assumptions, e.g.
  ``real=True``, are not carried by symengine) put back by name;
* :func:`shared_to_sympy` — a ``cse`` list ``[(name, expr), …]`` and its reduced expressions
  → sympy expressions with the definitions substituted *as shared subexpressions* (a DAG:
  small in memory however large the tree; use the DAG-aware helpers of
  :mod:`anholo.algebra.expressions` on them);
* :func:`engine_cse` — common subexpressions; :func:`printed` writes them as strings named
  ``prefix0, prefix1, …``.

Two guards for expressions with square roots, ``Abs`` and ``sign``:

* :func:`engine_diff` — symengine leaves ``d|f|/dx`` and ``d sign(f)/dx`` unevaluated (``Derivative``
  and ``Subs`` nodes, which neither evaluate nor compile); they are replaced by
  ``d|f|/dx = sign(f) df/dx`` and ``d sign(f)/dx = 0``, valid wherever ``f ≠ 0`` (on each region
  where ``f`` keeps its sign, ``|f| = ±f`` and ``sign(f) = ±1``);
* :func:`nonfinite` — whether an expression holds a literal ``nan``, ``zoo`` or ``±oo``: symengine's
  automatic simplification makes them from a division by a symbolic zero (``1/sqrt(0) = zoo``,
  ``0*zoo = nan``), e.g. a square root whose argument vanishes identically after substituting the
  constraints; such an expression is undefined everywhere and must be reported, never evaluated.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

import symengine as se
import sympy as sp

__all__ = ["se", "to_engine", "to_engine_dag", "to_sympy", "shared_to_sympy", "engine_cse", "printed",
           "engine_matrix", "zero", "engine_diff", "kink_derivative", "has_kinks", "nonfinite", "NONFINITE"]

zero = se.Integer(0)

#: The literal non-finite constants of symengine (``nan``, ``zoo``, ``oo``, ``-oo``, and infinite floats).
NONFINITE = (se.nan, se.zoo, se.oo, -se.oo, se.RealDouble(float("inf")), se.RealDouble(float("-inf")))

_KINKS = (se.Abs, se.sign)


def nonfinite(expr) -> bool:
    """True if ``expr`` (symengine) contains a literal ``nan``, ``zoo``, ``oo`` or ``-oo``.

    >>> x = se.Symbol("x")
    >>> nonfinite(x * se.sqrt(x).diff(x).subs({x: 0})), nonfinite(se.sqrt(x).diff(x))
    (True, False)
    """
    if isinstance(expr, (int, float)):
        return expr != expr or expr in (float("inf"), float("-inf"))
    if expr.is_Number:
        return expr in NONFINITE or (expr.is_Float and not _finite_float(expr))
    if expr in _FINITE:  # the definitions of one field enter many programs (each analysis builds its own)
        return False
    # one walk over the number atoms (nan, zoo, ±oo are numbers; a float nan is unequal to itself)
    bad = any(a in NONFINITE or (a.is_Float and not _finite_float(a)) for a in expr.atoms(se.Number))
    if not bad:
        if len(_FINITE) >= _FINITE_SIZE:
            _FINITE.clear()
        _FINITE.add(expr)
    return bad


_FINITE: set = set()  # expressions found finite (bounded; cleared when full)
_FINITE_SIZE = 500_000


def _finite_float(x) -> bool:
    try:
        v = complex(x)
    except (RuntimeError, TypeError, ValueError):
        return False
    return v == v and abs(v) != float("inf")


def has_kinks(exprs) -> bool:
    """True if some expression uses ``Abs`` or ``sign`` (whose derivatives :func:`engine_diff` supplies)."""
    for e in exprs:
        if not e.is_Number and not e.is_Symbol and e.atoms(*_KINKS):
            return True
    return False


def engine_diff(expr, x, kinks: bool = True):
    """``∂expr/∂x`` in symengine, with ``d|f| = sign(f) df`` and ``d sign(f) = 0`` (valid where ``f ≠ 0``).

    ``kinks=False`` skips the search for ``Abs``/``sign`` (the caller knows there are none: a plain
    ``expr.diff(x)``).

    >>> x, y = se.symbols("x y")
    >>> engine_diff(y * se.Abs(se.sin(x)) + se.sign(x * y), x)
    y*cos(x)*sign(sin(x))
    """
    d = expr.diff(x)
    if not kinks or d.is_Number or d.is_Symbol:
        return d
    for kind in (se.Subs, se.Derivative):  # Subs first: it holds a Derivative of a dummy variable
        nodes = d.atoms(kind)
        if nodes:
            d = d.xreplace({node: kink_derivative(node) for node in nodes})
    return d


def kink_derivative(node):
    """The value of an unevaluated ``Derivative``/``Subs`` node of ``Abs`` or ``sign`` (what symengine's
    ``diff`` leaves for them): ``sign(f) df/dx`` or 0; TypeError for another function."""
    args = node.args
    if isinstance(node, se.Subs) and len(args) == 3:  # Subs(Derivative(f(_xi), _xi), _xi, g) = f'(g)
        inner, var, point = args
        if isinstance(inner, se.Derivative) and len(inner.args) == 2 and inner.args[1] == var:
            fn = inner.args[0]
            if isinstance(fn, _KINKS) and fn.args[0] == var:
                return se.sign(point) if isinstance(fn, se.Abs) else zero
    elif isinstance(node, se.Derivative) and len(args) == 2:
        fn, var = args
        if isinstance(fn, se.sign):
            return zero
        if isinstance(fn, se.Abs):
            return se.sign(fn.args[0]) * engine_diff(fn.args[0], var)
    raise TypeError(f"no derivative for {node}: anholo differentiates elementary functions, Abs and sign")


_RECENT: dict = {}  # the last few large sympy expressions converted (a Lagrangian is converted by the
# route that derives the field and again by the report that prints it), by identity
_RECENT_SIZE = 8


def to_engine(expr):
    """``expr`` (sympy expression, number or string) as a symengine expression.

    A large expression (one with more than a few arguments at its top) passed again as the same object
    is not converted again: the last :data:`_RECENT_SIZE` conversions are remembered."""
    if isinstance(expr, sp.Basic) and len(expr.args) > 16:
        hit = _RECENT.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        value = se.sympify(expr)
        if len(_RECENT) >= _RECENT_SIZE:
            _RECENT.pop(next(iter(_RECENT)))
        _RECENT[id(expr)] = (expr, value)
        return value
    return se.sympify(expr)


def to_engine_dag(exprs: Sequence, memo: dict | None = None) -> list:
    """sympy expressions as symengine ones, each distinct subexpression converted once.

    ``se.sympify`` walks a sympy expression as a tree; derived expressions (Γ_nh, its divergence)
    are DAGs far smaller than their trees.  Raises ``TypeError`` for a function symengine lacks
    (e.g. an undefined function's stand-in)."""
    memo = {} if memo is None else memo
    ops = {"Add": se.Add, "Mul": se.Mul, "Pow": se.Pow}
    out = []
    for e in exprs:
        stack = [(sp.sympify(e), False)]
        root = stack[0][0]
        while stack:
            a, expanded = stack.pop()
            if a in memo:
                continue
            if not a.args:
                memo[a] = se.sympify(a)
            elif not expanded:
                stack.append((a, True))
                stack.extend((c, False) for c in a.args if c not in memo)
            else:
                name = type(a).__name__
                fn = ops.get(name) or getattr(se, name, None)
                if fn is None or not isinstance(a, (sp.Add, sp.Mul, sp.Pow, sp.Function)):
                    raise TypeError(f"symengine has no {name}")
                memo[a] = fn(*[memo[c] for c in a.args])
        out.append(memo[root])
    return out


def engine_matrix(rows) -> "se.DenseMatrix":
    """A symengine matrix from nested sequences of expressions."""
    rows = [list(r) for r in rows]
    if not rows:
        return se.zeros(0, 0)
    return se.DenseMatrix(len(rows), len(rows[0]), [to_engine(e) for r in rows for e in r])


def to_sympy(expr, symbols: Iterable = ()) -> sp.Expr:
    """A symengine expression as sympy, with ``symbols`` (sympy Symbols) put back by name.

    The conversion walks the expression once per distinct subexpression (shared subtrees are
    converted once) and creates the caller's symbols directly (no substitution afterwards)."""
    return _Converter(symbols)(expr)


class _Converter:
    """symengine → sympy, memoised over shared subexpressions."""

    _FUNCTIONS = {"Add": sp.Add, "Mul": sp.Mul, "Pow": sp.Pow}

    def __init__(self, symbols: Iterable = (), env: Mapping | None = None):
        self.symbols = {s.name: s for s in symbols if isinstance(s, sp.Symbol)}
        self.env = dict(env or {})  # names of shared definitions -> sympy expressions
        self.memo: dict = {}

    def __call__(self, e):
        if not hasattr(e, "_sympy_"):
            return sp.sympify(e)
        memo = self.memo
        stack = [(e, False)]
        while stack:
            a, expanded = stack.pop()
            if a in memo:
                continue
            args = a.args
            if not args:
                memo[a] = self._atom(a)
            elif not expanded:
                stack.append((a, True))
                stack.extend((c, False) for c in args if c not in memo)
            else:
                name = type(a).__name__
                conv = [memo[c] for c in args]
                fn = self._FUNCTIONS.get(name) or getattr(sp, name, None)
                memo[a] = fn(*conv) if callable(fn) else sp.sympify(a._sympy_())
        return memo[e]

    def _atom(self, a):
        if isinstance(a, se.Symbol):
            name = str(a)
            if name in self.env:
                return self.env[name]
            return self.symbols.get(name) or sp.Symbol(name)
        return sp.sympify(a._sympy_())


def engine_cse(exprs: Sequence) -> tuple:
    """``(pairs, reduced)``: symengine's common subexpressions of ``exprs`` (in order: a later definition
    may use earlier names).  The names (``x0, x1, …``) avoid every symbol of ``exprs``; :func:`printed`
    renames them for output."""
    pairs, reduced = se.cse(list(exprs))
    return list(pairs), list(reduced)


_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def printed(pairs: Sequence, exprs: Sequence, prefix: str = "cse") -> tuple:
    """``(pairs, exprs)`` as strings, the cse names renamed ``prefix0, prefix1, …`` (sympify-able)."""
    table = {str(name): f"{prefix}{i}" for i, (name, _) in enumerate(pairs)}

    def text(e) -> str:
        return _NAME.sub(lambda mt: table.get(mt.group(0), mt.group(0)), str(e)) if table else str(e)

    return [[table[str(n)], text(v)] for n, v in pairs], _nested(exprs, text)


def _nested(x, fn):
    if isinstance(x, (list, tuple)):
        return [_nested(e, fn) for e in x]
    return fn(x)


def shared_to_sympy(pairs: Sequence, reduced: Sequence, symbols: Iterable = ()) -> list:
    """The expressions ``reduced`` of a cse list as sympy, every definition substituted once and shared.

    The result's trees may be large, but each distinct subexpression exists once in memory
    (the definitions are the shared nodes)."""
    conv = _Converter(symbols)  # one memo: a definition is converted before any use of its name
    for name, value in pairs:
        conv.env[str(name)] = conv(value)
    return [conv(e) for e in reduced]

"""Differentiation over the expression DAG: each distinct subexpression is differentiated once.

``sympy``'s ``Expr.diff`` recurses over the expression *tree*: at every node it builds a
``Derivative`` and asks for the node's ``free_symbols`` (a walk of the whole subtree),
so a subexpression shared by many terms — the rule for the frames, constrained
Lagrangians and momenta of mechanics — is walked and differentiated once per
occurrence, and the cost grows with the tree, not with the expression.
:func:`diff_dag` applies the same rules (sum, product, power and chain rule;
``Function.fdiff`` for the elementary functions) once per distinct node, in one
post-order pass with a memo, and builds the result with sympy's own constructors, so it
is the same expression as ``expr.diff(x)`` up to the order of the automatic
simplifications.  Nodes it has no rule for (``Derivative``, ``Integral``, ``Piecewise``,
undefined functions of several arguments, …) are handed to ``expr.diff(x)``.
"""

from __future__ import annotations

import sympy as sp

from ..parsing import sympified
from sympy.core.function import AppliedUndef

__all__ = ["diff_dag"]

_ZERO, _ONE = sp.S.Zero, sp.S.One
_CHAIN_RULE = sp.Function._eval_derivative


def diff_dag(expr, x: sp.Symbol) -> sp.Expr:
    """``∂expr/∂x`` for a Symbol ``x``, differentiating each distinct subexpression once.

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols("x y")
    >>> e = sp.sin(x * y) ** 2 + sp.exp(x) / (1 + x**2)
    >>> sp.simplify(diff_dag(e, x) - e.diff(x))
    0
    """
    expr = sympified(expr)
    if not isinstance(x, sp.Symbol):
        return expr.diff(x)
    has: dict = {}
    d: dict = {}
    stack = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if node in d:
            continue
        if not node.args:
            d[node] = _ONE if node == x else (_ZERO if node.is_Symbol or node.is_Number or node.is_NumberSymbol
                                              else node.diff(x))
            has[node] = node == x
            continue
        if not _has_rule(node):  # Derivative, Piecewise, undefined functions, …: sympy's diff on the node
            d[node] = node.diff(x) if x in node.free_symbols else _ZERO
            has[node] = d[node] is not _ZERO
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((c, False) for c in node.args if c not in d)
            continue
        h = any(has[c] for c in node.args)
        has[node] = h
        d[node] = _rule(node, x, d) if h else _ZERO
    return d[expr]


def _has_rule(node) -> bool:
    """Add, Mul, Pow, and functions whose derivative is the chain rule with ``fdiff`` (not ``sign``, ``Abs``, …)."""
    return node.is_Add or node.is_Mul or node.is_Pow or (
        isinstance(node, sp.Function) and not isinstance(node, AppliedUndef)
        and type(node)._eval_derivative is _CHAIN_RULE)


def _rule(node, x, d) -> sp.Expr:
    args = node.args
    if node.is_Add:
        return sp.Add(*[d[c] for c in args if d[c] is not _ZERO])
    if node.is_Mul:
        terms = []
        for i, c in enumerate(args):
            dc = d[c]
            if dc is not _ZERO:
                terms.append(sp.Mul(*args[:i], dc, *args[i + 1:]))
        return sp.Add(*terms)
    if node.is_Pow:
        b, e = args
        db, de = d[b], d[e]
        if de is _ZERO:
            return e * b ** (e - 1) * db
        return node * (de * sp.log(b) + e * db / b)
    if isinstance(node, sp.Function):
        terms = []
        for i, c in enumerate(args):
            dc = d[c]
            if dc is not _ZERO:
                try:
                    terms.append(node.fdiff(i + 1) * dc)
                except Exception:  # no derivative rule: let sympy decide (it may build a Derivative)
                    return node.diff(x)
        return sp.Add(*terms)
    return node.diff(x)

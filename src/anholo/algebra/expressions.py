"""Expression utilities: free symbols, substitution over the expression DAG, size tests."""

from __future__ import annotations

from typing import Iterable, Mapping

import sympy as sp

from ..parsing import sympified

__all__ = ["free_symbols", "xreplace_dag", "size_exceeds", "dag_size", "dag_atoms", "without_deltas"]


def xreplace_dag(expr, mapping: Mapping) -> sp.Expr:
    """``expr.xreplace(mapping)``, memoised over shared subexpressions.

    Derived fields are DAGs whose trees can be millions of nodes although they
    have only thousands of distinct subexpressions; ``xreplace`` walks the tree,
    this walks the DAG (each distinct subexpression is rebuilt once).
    """
    expr = sympified(expr)
    if not mapping:
        return expr
    memo: dict = dict(mapping)
    stack = [(expr, False)]
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if not a.args:
            memo[a] = a
        elif not expanded:
            stack.append((a, True))
            stack.extend((c, False) for c in a.args if c not in memo)
        else:
            new_args = tuple(memo[c] for c in a.args)
            memo[a] = a.func(*new_args) if any(x is not y for x, y in zip(new_args, a.args)) else a
    return memo[expr]


_BINDING = (sp.Lambda, sp.Derivative, sp.Subs, sp.Integral, sp.Sum, sp.Product)


def free_symbols(exprs: Iterable) -> set[sp.Symbol]:
    """The free symbols of ``exprs``, each distinct subexpression visited once (sympy's
    ``free_symbols`` walks the whole tree, every shared copy included)."""
    out: set[sp.Symbol] = set()
    seen: set = set()
    stack = [sympified(e) for e in exprs]
    while stack:
        a = stack.pop()
        if a in seen:
            continue
        seen.add(a)
        if a.is_Symbol:
            out.add(a)
        elif isinstance(a, _BINDING):  # bound variables: sympy's own rule
            out |= a.free_symbols
        elif a.args:
            stack.extend(a.args)
    return out


def size_exceeds(expr: sp.Expr, limit: int) -> bool:
    """True if the expression tree of ``expr`` has more than ``limit`` nodes.

    Stops walking as soon as the limit is passed, so it costs O(limit) even on
    huge trees (``count_ops`` walks the whole tree, every shared copy included).
    """
    count = 0
    for _ in sp.preorder_traversal(expr):
        count += 1
        if count > limit:
            return True
    return False


def dag_size(expr) -> int:
    """The number of distinct subexpressions of ``expr`` (the size of its DAG, not of its tree)."""
    expr = sympified(expr)
    seen = set()
    stack = [expr]
    while stack:
        a = stack.pop()
        if a in seen:
            continue
        seen.add(a)
        stack.extend(a.args)
    return len(seen)


def dag_atoms(expr, *types) -> set:
    """The subexpressions of ``expr`` that are instances of ``types`` (default: Symbols), found by
    walking its DAG (each distinct subexpression once; ``atoms``/``free_symbols``/``has`` walk the tree)."""
    types = types or (sp.Symbol,)
    expr = sympified(expr)
    seen, out = set(), set()
    stack = [expr]
    while stack:
        a = stack.pop()
        if a in seen:
            continue
        seen.add(a)
        if isinstance(a, types):
            out.add(a)
        stack.extend(a.args)
    return out


def without_deltas(expr) -> sp.Expr:
    """``expr`` with sympy's ``δ(f)`` and its derivatives set to 0 (they come from ``d sign(f)/dx = 2 δ(f) f'``
    and ``d|f|/dx = sign(f) f'`` differentiated again): the value of the expression wherever the arguments of
    ``Abs``/``sign`` do not vanish, which is where a field with ``Abs``/``sign`` in L, the constraints or
    the forces is defined (Maggi's route differentiates them that way, :func:`anholo.algebra.engine.engine_diff`)."""
    expr = sympified(expr)
    deltas = dag_atoms(expr, sp.DiracDelta)
    return xreplace_dag(expr, {d: sp.S.Zero for d in deltas}) if deltas else expr

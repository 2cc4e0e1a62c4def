"""Numerical evaluation of large sympy expressions for tests (no anholo code here).

Derived fields can be expression DAGs with millions of tree nodes but far fewer
distinct subexpressions; ``expr.xreplace(point).evalf()`` walks the whole tree
(minutes), while evaluating each distinct subexpression once with mpmath takes
well under a second.  30 significant digits guard against cancellation.
"""

from __future__ import annotations

import mpmath
import sympy as sp

_DPS = 30


def evaluate(expr, point: dict) -> complex:
    """Value of ``expr`` at ``point`` ({Symbol: number}), memoised over shared subtrees."""
    expr = sp.sympify(expr)
    memo: dict = {}
    with mpmath.workdps(_DPS):
        pt = {s: mpmath.mpmathify(complex(v)) if isinstance(v, complex) else mpmath.mpf(str(v))
              for s, v in point.items()}
        stack = [(expr, False)]
        while stack:
            a, expanded = stack.pop()
            if a in memo:
                continue
            if a.is_Symbol:
                if a not in pt:
                    raise KeyError(f"no value for symbol {a}")
                memo[a] = pt[a]
            elif a.is_Number or a.is_NumberSymbol or a is sp.I:
                memo[a] = mpmath.mpmathify(complex(a)) if a is sp.I else mpmath.mpf(sp.Float(a, _DPS + 5))
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
                    memo[a] = mpmath.mpmathify(complex(a.xreplace(point).evalf(_DPS)))
        return complex(memo[expr])

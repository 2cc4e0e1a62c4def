"""Reading constraint expressions: sympy expressions as they are, strings with the chart's names.

The one reader of the constraints package: a string is parsed by the safe
expression parser (:func:`anholo.parsing.parse_expression`) with the
chart's coordinates, velocities (``x_dot``) and parameters, and the time symbol
when the constraints may depend on time.
"""

from __future__ import annotations

import sympy as sp

from ..geometry.chart import Chart
from ..parsing import as_expression

__all__ = ["read_expression"]


def read_expression(chart: Chart, expr, where: str, time=None) -> sp.Expr:
    """``expr`` as a sympy expression (:func:`anholo.parsing.as_expression`): a string is parsed
    with the chart's names (and ``time``); a sympy symbol named like one of them is that symbol."""
    names = {s.name: s for s in chart.coordinates + chart.velocities + chart.parameters}
    if time is not None:
        names[time.name] = time
    return as_expression(expr, names, where=where)

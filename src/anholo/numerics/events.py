"""Events written by the user: ``--stop-when "abs(lean) > 1.5"`` as a terminal event of :func:`simulate`.

A condition on the time ``t``, the coordinates ``q^A`` and the natural velocities ``<coordinate>_dot`` is read
by the safe expression parser (:func:`anholo.parsing.parse_expression`, never ``sympify``) and
becomes an event function ``g(t, (q, q̇))`` marked ``natural = True`` (the same in every chart of the
motion, :mod:`anholo.numerics.switching`): for a comparison ``a > b`` (``>=``, ``<``, ``<=``) the
function ``a − b`` (``abs`` is accepted for ``Abs``) with the direction in which the condition becomes true (``+1`` for ``>``, ``−1`` for
``<``); for any other expression its sign change.  The run stops at the root of ``g`` located on the
step's interpolant (Brent's method, as :func:`scipy.integrate.solve_ivp` does).
"""

from __future__ import annotations

import sympy as sp

from ..algebra.codegen import expression_function
from ..errors import SimulationError
from ..parsing import parse_expression

__all__ = ["stop_event"]

_COMPARISONS = ((">=", 1), ("<=", -1), (">", 1), ("<", -1))


def stop_event(text: str, coordinate_names, where: str = "--stop-when"):
    """A terminal event of the natural state for the condition ``text`` (module docstring).

    Raises
    ------
    SimulationError
        If ``text`` chains comparisons or uses ``=``/``!``; the parser's own error for unknown names or
        syntax (a one-line message naming ``where``).

    Examples
    --------
    >>> import numpy as np
    >>> g = stop_event("abs(theta) > 1.5", ["x", "theta"])
    >>> g(0.0, np.array([0.0, 1.0, 0.0, 0.0])), g.direction, g.terminal
    (-0.5, 1, True)
    """
    t = sp.Symbol("t", real=True)
    coords = [sp.Symbol(c, real=True) for c in coordinate_names]
    vels = [sp.Symbol(f"{c}_dot", real=True) for c in coordinate_names]
    names = {"abs": sp.Abs, "t": t, **{s.name: s for s in coords + vels}}  # abs: Python's spelling of Abs
    expr, direction = None, 0
    for op, sign in _COMPARISONS:
        if op in text:
            left, right = text.split(op, 1)
            if any(o in right for o in "<>=!"):
                raise SimulationError(f"{where}: {text!r} is not one comparison; write e.g. \"abs(theta) > 1.5\".")
            expr = parse_expression(left, names, where=where) - parse_expression(right, names, where=where)
            direction = sign
            break
    if expr is None:
        if any(o in text for o in "=!"):
            raise SimulationError(f"{where}: {text!r} is not one comparison; write e.g. \"abs(theta) > 1.5\".")
        expr = parse_expression(text, names, where=where)
    f = expression_function([t] + coords + vels, expr)  # IEEE values: nan where undefined

    def event(tt, s):
        return float(f(float(tt), *[float(x) for x in s]))

    event.terminal, event.direction, event.natural, event.text = True, direction, True, text
    return event

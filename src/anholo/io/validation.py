"""One rule per kind of value, wherever the value comes from.

A parameter's value is checked by :func:`check_parameter_value`, whether it is written in a
file's ``[values]`` table, given by ``--set NAME=VALUE`` (``anholo analyze``, ``simulate``,
``compare``) or passed to :meth:`~anholo.io.systemfile.SystemSpec.substitute`: it must be finite,
real, and have the parameter's declared sign.  Signs are declared in the ``[signs]`` table of a
system file (``name = "positive" | "nonnegative" | "negative" | "nonpositive" | "real" |
"nonzero"``; a parameter not listed is positive), and the SymPy symbol of the parameter carries
the matching assumptions (:func:`parameter_symbol`), so that what SymPy concludes from the sign
(``sqrt(m^2) = m`` for a positive ``m``) is true of every value the parameter may take.

Numbers on the command line (``--q0``, ``--qdot0``, ``--lambda0``, ``--rtol``, ``--atol``,
``--t-end``, ``--points``) are checked by :func:`number_from_text` and :func:`check_option`:
finite, real, in range.  A parameter set twice is an error (:func:`assignments`).

Examples
--------
>>> m = parameter_symbol("m")
>>> m.is_positive
True
>>> check_parameter_value(m, 2, "values.m")
2
>>> check_parameter_value(m, 0, "values.m")
Traceback (most recent call last):
...
anholo.errors.SystemFileError: values.m: 0 is not positive, but m is declared positive (parameters are positive unless the [signs] table says otherwise, e.g. m = "real").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import sympy as sp

from anholo.parsing import sympified
from anholo.errors import SystemFileError
from anholo.parsing import parse_expression, shown

__all__ = ["SIGNS", "parameter_symbol", "declared_sign", "check_parameter_value", "number_from_text",
           "check_option", "assignments"]

#: The signs a parameter may be declared with, and the SymPy assumptions of its symbol.
SIGNS: Mapping[str, dict] = {
    "positive": {"positive": True},
    "nonnegative": {"nonnegative": True},
    "negative": {"negative": True},
    "nonpositive": {"nonpositive": True},
    "nonzero": {"real": True, "nonzero": True},
    "real": {"real": True},
}

_WORDS = {"positive": "positive", "nonnegative": "nonnegative (>= 0)", "negative": "negative",
          "nonpositive": "nonpositive (<= 0)", "nonzero": "nonzero", "real": "real"}


def parameter_symbol(name: str, sign: str = "positive") -> sp.Symbol:
    """The symbol of a parameter with the assumptions of its declared sign (see :data:`SIGNS`)."""
    if sign not in SIGNS:
        raise SystemFileError(f"unknown sign {sign!r} of {name}; use one of {', '.join(SIGNS)}.")
    return sp.Symbol(name, **SIGNS[sign])


def declared_sign(symbol: sp.Symbol) -> str:
    """The sign (a key of :data:`SIGNS`) that the assumptions of ``symbol`` declare; ``"real"`` for a
    symbol without a sign, and ``"complex"`` for one not even known to be real."""
    for sign in ("positive", "negative", "nonnegative", "nonpositive"):
        if getattr(symbol, "is_" + sign):
            return sign
    if symbol.is_real:
        return "nonzero" if symbol.is_nonzero else "real"
    return "complex"


def _holds(value: sp.Expr, sign: str):
    if sign == "nonzero":
        return value.is_nonzero
    if sign == "complex":
        return True
    return getattr(value, "is_" + sign)


def check_parameter_value(symbol: sp.Symbol, value, where: str, error=SystemFileError) -> sp.Expr:
    """``value`` (a number or an expression in other parameters) if it may be given to the parameter
    ``symbol``: finite, real and of the declared sign; otherwise ``error`` with one line saying so.

    An expression in other parameters must be *provably* of the sign (``I2 = I1`` for positive
    ``I1``, ``I2``), since every result is derived under the parameter's assumptions.
    """
    value = sympified(value)
    name = symbol.name
    if value.has(sp.nan, sp.zoo, sp.oo, sp.S.NegativeInfinity):
        raise error(f"{where}: {shown(value, 40)} is not a finite number.")
    if value.is_real is False or (value.is_number and value.is_real is None):
        raise error(f"{where}: {shown(value, 40)} is not a real number.")
    sign = declared_sign(symbol)
    holds = _holds(value, sign)
    if holds:
        return value
    declared = (f"{name} is declared {_WORDS.get(sign, sign)} (parameters are positive unless the [signs] "
                f'table says otherwise, e.g. {name} = "real")')
    if holds is False:
        raise error(f"{where}: {shown(value, 40)} is not {_WORDS.get(sign, sign)}, but {declared}.")
    raise error(f"{where}: cannot tell that {shown(value, 40)} is {_WORDS.get(sign, sign)}, but {declared}; "
                "give a number, or declare the signs of the parameters it uses.")


def number_from_text(text: str, where: str, error=SystemFileError) -> sp.Expr:
    """A finite real number written on the command line: a decimal (exact), or an expression of numbers
    (``pi/2``, ``sqrt(2)``); ``nan``, ``inf``, ``sqrt(-1)`` and names are refused with one line."""
    text = text.strip()
    try:
        as_float = float(text)
    except ValueError:
        as_float = None
    if as_float is not None and not math.isfinite(as_float):
        raise error(f"{where}: {shown(text, 40)} is not a finite number.")
    expr = parse_expression(text, {}, where=where)
    if not expr.is_number:
        raise error(f"{where}: {shown(text, 40)} is not a number.")
    if expr.is_real is not True:
        raise error(f"{where}: {shown(text, 40)} is not a real number.")
    if not math.isfinite(float(expr)):
        raise error(f"{where}: {shown(text, 40)} is too large for a floating-point number.")
    return expr


def check_option(value, option: str, error, *, low=None, low_open=False, high=None, integer=False):
    """A command-line number ``value`` if it is finite and in range (``low < value`` with ``low_open``,
    else ``low <= value``; ``value <= high``), otherwise ``error`` naming the option."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise error(f"{option} must be a finite number, got {value!r}.")
    if integer and int(value) != value:
        raise error(f"{option} must be an integer, got {value!r}.")
    if low is not None and (value <= low if low_open else value < low):
        if low == 0:
            relation = "positive" if low_open else "nonnegative"
        else:
            relation = f"greater than {low:g}" if low_open else f"at least {low:g}"
        raise error(f"{option} must be {relation}, got {value:g}.")
    if high is not None and value > high:
        raise error(f"{option} must be at most {high:g}, got {value:g}.")
    return value


def assignments(pairs: Iterable[tuple[str, str]], option: str = "--set") -> dict:
    """``[(name, value), ...]`` from repeated ``--set NAME=VALUE`` as a dict; a name given twice is an error."""
    out: dict = {}
    for name, value in pairs:
        if name in out:
            raise SystemFileError(f"{option} {name} is given twice ({name}={out[name]} and {name}={value}); "
                                  "give each parameter once.")
        out[name] = value
    return out

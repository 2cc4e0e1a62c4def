"""Resource limits on what a system file or a command line may ask for.

Every value a user writes is bounded *by design*, before any computation, so that
no input can make anholo compute for ever or exhaust memory without a clear message:

========================  =======  ==================================================================
bound                     default  what it bounds
========================  =======  ==================================================================
``expression_chars``      200000   characters of one expression (a 10 MB formula is refused at once)
``nesting``               100      depth of nested parentheses, calls and powers (a flat sum of
                                   thousands of terms is *not* nested: ``a + b + c`` has depth 1)
``digits``                400      decimal digits of every number, as written and as evaluated
                                   (``2^10000`` has 3011 digits; every float64 value fits)
``exponent``              1000     numerator and denominator of a numerical exponent
                                   (``x^1e10000``, ``x^0.0000001`` are refused)
``root_digits``           100      digits of a number under a root (``sqrt(10^99 + 1)``: SymPy
                                   looks for perfect powers, which is slow for long numbers)
``expanded_terms``        5000     terms of an expression once its powers and products of sums are
                                   multiplied out (``(a + b + c + d)^40`` has 12341, ``(a + b)^1000``
                                   times ``(c + d)^1000`` about a million; the bundled examples at
                                   most a few hundred), estimated without expanding
``coordinates``           30       coordinates of a system
``trailers``              12       ``n`` of the generated example ``n_trailer_<n>``
``points``                1000000  output times of a simulation (``--points``)
``runs``                  100000   runs of a sweep (the product of its ``NUM``), eigenvalue problems of
                                   ``linearize --sweep``
========================  =======  ==================================================================

An input beyond a bound is refused with :class:`~anholo.errors.LimitError`, whose message
names the field, the bound and how to raise it: in Python with :func:`raised_limits` or
:func:`set_limits`, on the command line with ``anholo --limits NAME=VALUE[,NAME=VALUE] …``,
or through the environment variable ``ANHOLO_LIMITS`` (same syntax).

Examples
--------
>>> current().digits
400
>>> with raised_limits(digits=5000):
...     current().digits
5000
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from dataclasses import dataclass

from anholo.errors import LimitError

__all__ = ["Limits", "current", "set_limits", "using", "raised_limits", "parse_limits", "check", "digits_of"]


@dataclass(frozen=True)
class Limits:
    """The bounds (see the module documentation); all positive integers."""

    expression_chars: int = 200_000
    nesting: int = 100
    digits: int = 400
    exponent: int = 1000
    root_digits: int = 100
    expanded_terms: int = 5_000
    coordinates: int = 30
    trailers: int = 12
    points: int = 1_000_000
    runs: int = 100_000

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LimitError(f"limit {f.name} must be a positive integer, got {value!r}.")


def parse_limits(text: str, base: Limits | None = None) -> Limits:
    """``"digits=5000,coordinates=60"`` -> a :class:`Limits` with those bounds raised (or lowered).

    >>> parse_limits("digits=5000").digits
    5000
    """
    base = base or Limits()
    names = [f.name for f in dataclasses.fields(Limits)]
    changes = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or name not in names:
            raise LimitError(f"--limits: expected NAME=VALUE with NAME one of {', '.join(names)}, got {item.strip()!r}.")
        if name in changes:
            raise LimitError(f"--limits: {name} is given twice.")
        if not value.isdigit() or len(value) > 12 or int(value) < 1:
            raise LimitError(f"--limits: {name} must be a positive integer (at most 12 digits), got {value!r}.")
        changes[name] = int(value)
    return dataclasses.replace(base, **changes)


def _initial() -> Limits:
    env = os.environ.get("ANHOLO_LIMITS", "")
    try:
        return parse_limits(env) if env.strip() else Limits()
    except LimitError:
        return Limits()  # a bad environment variable is reported by the command line, not at import


_current: list = [_initial()]


def current() -> Limits:
    """The limits in force."""
    return _current[-1]


def set_limits(limits: Limits | None = None, **changes) -> Limits:
    """Replace the limits in force (``set_limits(digits=5000)``); returns the new limits."""
    new = dataclasses.replace(limits or current(), **changes)
    _current[-1] = new
    return new


@contextmanager
def using(limits: Limits):
    """Within the block, ``limits`` are in force."""
    _current.append(limits)
    try:
        yield limits
    finally:
        _current.pop()


@contextmanager
def raised_limits(**changes):
    """Within the block, the given bounds replace the current ones."""
    _current.append(dataclasses.replace(current(), **changes))
    try:
        yield current()
    finally:
        _current.pop()


def _hint(name: str, value: int) -> str:
    return (f"raise it with anholo --limits {name}={value} COMMAND … on the command line, or "
            f"anholo.limits.raised_limits({name}={value}) in Python")


def check(name: str, value: int, where: str, what: str) -> None:
    """Raise :class:`LimitError` if ``value`` exceeds the bound ``name``."""
    bound = getattr(current(), name)
    if value > bound:
        raise LimitError(f"{where}: {what} exceeds the limit of {bound} ({name}); "
                         f"{_hint(name, max(value, 2 * bound) if value < 10 ** 12 else 2 * bound)}.")


def digits_of(n: int) -> int:
    """Decimal digits of an integer, within one, without converting it to a string (cheap for any size)."""
    return int(abs(n).bit_length() * 0.30102999566398120) + 1

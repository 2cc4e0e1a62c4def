"""Identities hidden in a straight-line program, found by evaluating it at random points.

Common-subexpression elimination shares what is *written* alike; it cannot see that two definitions
written differently have the same value.  A program formed by differentiation is full of such pairs:
in the Whipple bicycle's field the velocity of the rear contact, ``ẋ cos ψ + ẏ sin ψ`` at
``(ẋ, ẏ) = (r ω cos ψ, r ω sin ψ)``, is ``r ω (cos²ψ + sin²ψ)``, and sums built from it are ``r ω``, ``0`` or
``2`` after cancellations that no syntactic rule finds.  This module finds them the way Gonnet (1984)
decides the equivalence of expressions: evaluate every definition at a few random points, exactly enough
that a coincidence is impossible (here 200-bit MPFR arithmetic, ``POINTS`` points), and take two
definitions with equal values at every point for equal functions.

Why this is sound.  Only definitions built from ``+``, ``×``, integer powers and the functions of
``MEROMORPHIC`` (``sin``, ``cos``, ``exp``, …) are compared; they are meromorphic functions of the
program's arguments, and two meromorphic functions that differ do so on a dense open set, so they agree
at random points only with probability zero (the identity theorem; for polynomials the bound of Schwartz
(1980) and Zippel (1979)).  Every other definition — a square root, a non-integer power, ``Abs``, ``sign``,
``Max``, a function of unknown kind — is *opaque*: it gets its own random value instead of its computed
one, so that an identity found downstream holds whatever value it has (on every branch of the root, on both
sides of a kink).  Identities that need the value of an opaque definition (``sqrt(x)² = x``) are not found.

What is replaced, in program order (the first definition with given values is their representative):

* a definition whose value is a small rational ``p/r`` (``r ≤ 12``) at every point, by that number
  (``0`` included: the terms it multiplies then vanish from the program);
* a definition whose values are ``c`` times those of an earlier definition or argument ``g`` (``c = ±1``, or
  another small rational when the definition costs more than one multiplication), by ``c·g``.

The program computes the same numbers up to rounding (an identity such as ``cos²ψ + sin²ψ = 1`` holds
exactly; the arithmetic that evaluated it rounded).  The whole pass costs one evaluation of the program in
MPFR per point (0.06 s for the Whipple bicycle's field of about 550 definitions).
"""

from __future__ import annotations

import random
from fractions import Fraction

from .engine import se

__all__ = ["hidden_identities", "POINTS", "PRECISION", "MEROMORPHIC"]

#: Number of random points every definition is evaluated at.
POINTS = 3
#: Bits of the MPFR arithmetic (about 60 decimal digits).
PRECISION = 200
#: The functions under which a meromorphic definition stays meromorphic.
MEROMORPHIC = (se.sin, se.cos, se.tan, se.cot, se.exp, se.sinh, se.cosh, se.tanh)
#: Values agree when they agree to this many significant digits (of about 60 computed).
_DIGITS = 40
_TINY = se.RealMPFR("1e-45", PRECISION)


_MEROMORPHIC_TYPES = frozenset(type(f(se.Symbol("_"))) for f in MEROMORPHIC if f is not se.exp)


def _meromorphic_head(e) -> bool:
    if isinstance(e, (se.Add, se.Mul)):
        return True
    if isinstance(e, se.Pow):  # an integer power, or exp(x) (symengine writes it E**x)
        return e.args[1].is_Integer or e.args[0] == se.E
    return type(e) in _MEROMORPHIC_TYPES


def _meromorphic(e) -> bool:
    """True if ``e`` is built from its symbols by ``+``, ``×``, integer powers and ``MEROMORPHIC``."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, se.Symbol) or x.is_Number:
            continue
        if not _meromorphic_head(x):
            return False
        stack.extend(x.args[1:] if isinstance(x, se.Pow) and x.args[0] == se.E else
                     x.args[:1] if isinstance(x, se.Pow) else x.args)
    return True


def _random(rnd: random.Random):
    """A random real of ``PRECISION`` bits in ``±(0.3, 1.7)``: away from 0, where no argument is singular
    by chance."""
    x = rnd.uniform(0.3, 1.7) * rnd.choice((-1, 1))
    return se.RealMPFR(repr(x), PRECISION)


def _real(v):
    """``v`` as an MPFR real, or ``None`` if it is not a finite real number (a pole hit, a complex value)."""
    if isinstance(v, se.RealMPFR):
        return v
    if v.is_Integer or v.is_Rational:
        return v.n(PRECISION, real=True)
    return None


def _key(values) -> tuple:
    """The values (MPFR reals) as a hashable tuple, ``_DIGITS`` significant digits each."""
    return tuple("0" if abs(v) < _TINY else _significant(v) for v in values)


def _significant(v) -> str:
    """``v`` (an MPFR real) written with ``_DIGITS`` significant digits."""
    s = str(v)
    mantissa, _, exponent = s.lower().partition("e")
    sign = "-" if mantissa.startswith("-") else ""
    mantissa = mantissa.lstrip("-")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    lead = len(whole.lstrip("0")) if whole.strip("0") else -(len(frac) - len(frac.lstrip("0")))
    power = lead + (int(exponent) if exponent else 0)
    return f"{sign}{digits[:_DIGITS]}e{power}"


def _rational(values) -> Fraction | None:
    """The small rational every value equals, if there is one."""
    v0 = values[0]
    guess = Fraction(str(float(v0))).limit_denominator(12)
    exact = se.Rational(guess.numerator, guess.denominator)
    for v in values:
        if abs(v - exact) > _TINY:
            return None
    return guess


def _small(ratio):
    """The small rational ``p/r`` (``|p|, r ≤ 12``) equal to ``ratio`` (an MPFR real), or ``None``."""
    guess = Fraction(str(float(ratio))).limit_denominator(12)
    if guess == 0 or abs(guess.numerator) > 12:
        return None
    return guess if abs(ratio - se.Rational(guess.numerator, guess.denominator)) < _TINY else None


def _cost(e) -> int:
    """Operations of one definition as :func:`~anholo.algebra.codegen.operation_count` counts them (roughly)."""
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        if isinstance(x, se.Symbol) or x.is_Number:
            continue
        n += max(len(x.args) - 1, 1)
        stack.extend(x.args)
    return n


def hidden_identities(args, pairs, seed: int = 20261127) -> dict:
    """``{name: replacement}`` for the definitions of ``pairs`` (``[(name, expr), …]`` in dependency order,
    over ``args`` and earlier names) whose values at ``POINTS`` random points are a small rational, or
    ``c`` times those of an earlier definition or argument ``g`` (``c`` a small rational): replaced by the
    number, by ``±g``, or by ``c·g`` when the definition costs more than that multiplication (module
    docstring).  Deterministic: the points come from ``seed``."""
    rnd = random.Random(seed)
    values = [{a: _random(rnd) for a in args} for _ in range(POINTS)]
    first: dict = {}  # the values at the later points over the value at the first → the first name with them

    def shape(vals):
        return _key([v / vals[0] for v in vals[1:]])

    for a in args:
        first.setdefault(shape([v[a] for v in values]), a)
    found: dict = {}
    for name, expr in pairs:
        if not _meromorphic(expr) or any(s not in values[0] for s in expr.free_symbols):
            for v in values:
                v[name] = _random(rnd)  # opaque: its own random value
            continue
        computed = [_real(expr.xreplace({s: v[s] for s in expr.free_symbols})) for v in values]
        if any(c is None for c in computed):
            for v in values:
                v[name] = _random(rnd)  # not a finite real here: treated as opaque
            continue
        for v, c in zip(values, computed):
            v[name] = c
        if all(abs(c) < _TINY for c in computed):
            if not expr.is_Number:
                found[name] = se.Integer(0)
            continue
        if any(abs(c) < _TINY for c in computed):
            continue  # zero at one point only: no ratio to compare
        q = _rational(computed)
        if q is not None:
            if not expr.is_Number:
                found[name] = se.Rational(q.numerator, q.denominator)
            continue
        key = shape(computed)
        g = first.get(key)
        if g is None:
            first[key] = name
            continue
        c = _small(computed[0] / values[0][g])
        if c is None:
            continue
        same = g if c == 1 else -g if c == -1 else se.Rational(c.numerator, c.denominator) * g
        if same != expr and not isinstance(expr, se.Symbol) and (abs(c) == 1 or _cost(expr) > 1):
            # (``h = −g`` as written, or an alias ``h = h'``, which costs nothing, is no finding)
            found[name] = same
    return found

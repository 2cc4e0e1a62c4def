"""Cheap normal forms: ``tidy`` (rational normal form with reduction modulo sin² + cos² = 1),
``reduce_if_cheap`` and the zero test ``vanishes``.

Policy: no blanket ``simplify`` on hot paths; expressions are kept small with
``cancel`` (or the exact kernel, :mod:`anholo.algebra.kernel`) only.
"""

from __future__ import annotations

import random

import sympy as sp

from ..parsing import sympified
from . import kernel as _kernel
from .expressions import size_exceeds
from .numeric import numerically_zero, random_point

__all__ = ["tidy", "reduce_if_cheap", "vanishes"]


_TRIG_HYPER = (sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc, sp.sinh, sp.cosh, sp.tanh)


def _remainder_in_sine(poly: sp.Expr, S: sp.Symbol, C: sp.Symbol) -> sp.Expr:
    """Remainder of a polynomial in S (and other generators) on division by ``S^2 + C^2 − 1`` in S.

    Each ``S^k`` becomes ``S^(k mod 2) (1 − C^2)^(k div 2)``; after expansion the
    result is at most linear in S — what ``sympy.rem(poly, S**2 + C**2 - 1, S)``
    gives, without building polynomial rings.
    """
    def lower(p):
        k = int(p.exp)
        return S ** (k % 2) * (1 - C**2) ** (k // 2)

    reduced = poly.replace(lambda e: e.is_Pow and e.base == S and e.exp.is_Integer and e.exp > 1, lower)
    return sp.expand(reduced)


def _pythagorean_reduce(expr: sp.Expr) -> sp.Expr:
    """Reduce a rational function of sin(a), cos(a) modulo ``sin(a)^2 + cos(a)^2 − 1``.

    sin/cos of each argument become polynomial generators S, C; numerator and
    denominator are replaced by their remainders on division by ``S^2 + C^2 − 1``
    in S (a canonical form: at most linear in S), then ``cancel`` is applied.
    """
    # tan = sin/cos, cot = cos/sin, sec = 1/cos, csc = 1/sin, by explicit replacement:
    # ``rewrite(sp.sin)`` brings in sin(2a) and ``rewrite(sp.cos)`` turns sin(a) into cos(a − π/2).
    if expr.has(sp.tan, sp.cot, sp.sec, sp.csc):
        expr = (
            expr.replace(sp.tan, lambda a: sp.sin(a) / sp.cos(a))
            .replace(sp.cot, lambda a: sp.cos(a) / sp.sin(a))
            .replace(sp.sec, lambda a: 1 / sp.cos(a))
            .replace(sp.csc, lambda a: 1 / sp.sin(a))
        )
    args = {f.args[0] for f in expr.atoms(sp.sin, sp.cos)}
    if not args:
        return expr
    repl, back, relations = {}, {}, []
    for k, a in enumerate(sorted(args, key=sp.default_sort_key)):
        S, C = sp.Dummy(f"S{k}"), sp.Dummy(f"C{k}")
        repl[sp.sin(a)], repl[sp.cos(a)] = S, C
        back[S], back[C] = sp.sin(a), sp.cos(a)
        relations.append((S, C))
    gens = expr.xreplace(repl)
    num, den = (sp.expand(gens), sp.S.One) if _small_polynomial(gens) else sp.fraction(sp.cancel(gens))
    for S, C in relations:
        if num.has(S):
            num = _remainder_in_sine(num, S, C)
        if den.has(S):
            den = _remainder_in_sine(den, S, C)
    if den == 1:
        return sp.expand(num).xreplace(back)
    return sp.cancel(num / den).xreplace(back)


def _is_polynomial(expr: sp.Expr) -> bool:
    """True if ``expr`` is a polynomial in its symbols and function applications (no division,
    no fractional powers), so that ``expand`` is its ``cancel`` normal form."""
    return not any(p.exp.is_negative or not p.exp.is_Integer for p in expr.atoms(sp.Pow))


_EXPAND_LIMIT = 80


def _small_polynomial(expr: sp.Expr) -> bool:
    """A polynomial small enough that ``expand`` (tree arithmetic) beats ``cancel`` (whose
    polynomial-ring arithmetic wins on large products, e.g. the n-trailer's frame)."""
    return not size_exceeds(expr, _EXPAND_LIMIT) and _is_polynomial(expr)


def tidy(expr: sp.Expr) -> sp.Expr:
    """Put ``expr`` into a compact normal form, cheaply.

    ``cancel`` (rational normal form with non-polynomial parts as generators);
    if sines and cosines occur, they are reduced modulo ``sin^2 + cos^2 = 1``
    (:func:`_pythagorean_reduce`), never with ``trigsimp``.  Used once per frame
    on n^2 entries (inverse matrix, structure functions), not in dynamics loops.
    """
    expr = sympified(expr)
    if expr.is_Atom:
        return expr
    try:  # the same normal form in sparse polynomial arithmetic (anholo.algebra.kernel), when it applies
        return _kernel.tidy(expr)
    except _kernel.Unsupported:
        pass
    smaller = _without_compound_angles(expr)
    if smaller is not None:
        return smaller
    polynomial = _is_polynomial(expr)
    if polynomial and not expr.has(sp.Function):
        return sp.expand(expr)  # a polynomial: expanding is its normal form, no gcd needed
    reduced = sp.expand(expr) if polynomial and not size_exceeds(expr, _EXPAND_LIMIT) else sp.cancel(expr)
    if reduced.has(*_TRIG_HYPER):
        try:
            candidate = _pythagorean_reduce(reduced)
        except (sp.PolynomialError, sp.polys.polyerrors.PolificationFailed):
            candidate = reduced
        if sp.count_ops(candidate) <= sp.count_ops(reduced):
            reduced = candidate
    return reduced


def _integer_combination(arg) -> bool:
    """``arg`` is ``k_1 x_1 + … + k_r x_r`` with integers ``k_i`` and symbols ``x_i``, not a single symbol."""
    if arg.is_Symbol or not arg.free_symbols:
        return False
    terms = sp.Add.make_args(arg)
    for t in terms:
        coeff, rest = t.as_coeff_Mul()
        if not (coeff.is_Integer and rest.is_Symbol):
            return False
    return True


def _without_compound_angles(expr: sp.Expr):
    """The kernel's normal form of ``expr`` with ``sin``/``cos`` of integer combinations of symbols
    expanded (``sin(θ + φ) → sin θ cos φ + cos θ sin φ``), if that is no larger than ``expr``; else None.

    An adapted frame of constraints written with ``sin(θ + φ)`` has entries such as
    ``sin θ cos(θ + φ) − sin(θ + φ) cos θ``, which is ``−sin φ``: without the compound angles the
    frame falls in the exact kernel's class (small canonical results, fast derivations).  An
    expression that only gets longer (``cos(θ1 − θ2)`` itself) keeps its form.
    """
    if not expr.has(sp.sin, sp.cos) or expr.has(sp.tan, sp.cot, sp.sec, sp.csc) or size_exceeds(expr, 400):
        return None
    compound = [t for t in expr.atoms(sp.sin, sp.cos) if _integer_combination(t.args[0])]
    if not compound:
        return None
    expanded = expr.xreplace({t: sp.expand_trig(t) for t in compound})
    if any(_integer_combination(t.args[0]) for t in expanded.atoms(sp.sin, sp.cos)):
        return None
    candidate = tidy(expanded)  # the kernel's normal form (or the expression route's, when it is switched off)
    return candidate if sp.count_ops(candidate) < sp.count_ops(expr) else None


_CANCEL_LIMIT = 60


def reduce_if_cheap(expr: sp.Expr, limit: int = _CANCEL_LIMIT) -> sp.Expr:
    """``cancel(expr)`` if ``expr`` is small (at most ``limit`` operations), else ``expr``.

    ``cancel`` expands numerators; on large entries (e.g. the frame Hessian of a
    non-mechanical Lagrangian in a dense frame) that costs minutes and produces
    larger results, so large entries are carried along unexpanded instead.
    """
    if expr.is_Atom or size_exceeds(expr, 2 * limit):
        return expr
    if _small_polynomial(expr):
        return sp.expand(expr)  # what cancel returns for a polynomial, without the gcd machinery
    return sp.cancel(expr)


def vanishes(expr, seed: int = 5) -> bool:
    """True if ``expr`` is zero as a function: structurally, after ``cancel`` when small,
    or numerically at three random points (probability-one zero test)."""
    expr = sympified(expr)
    if expr == 0:
        return True
    if not size_exceeds(expr, 400):
        try:  # exact in the kernel's canonical form; its own numerical test otherwise
            K = _kernel.DiffField([expr])
            return K.is_zero(K.convert(expr))
        except _kernel.Unsupported:
            pass
        if sp.cancel(expr) == 0:
            return True
    rng = random.Random(seed)
    pts = [random_point(expr.free_symbols, rng) for _ in range(3)]
    return numerically_zero(expr, pts, tol=1e-10)

"""Exact arithmetic for the Hamel chart without expression trees: a differential field.

The frames, Lagrangians and fields of mechanics are rational functions of the
coordinates q, the (quasi-)velocities, the parameters and a few transcendental
*generators*: ``sin a``/``cos a``, ``exp a``, powers with fractional exponents and
undefined functions ``A(q)`` with their derivatives.  :class:`DiffField` holds
them as elements of the field of fractions ``K = QQ(generators)`` — SymPy's
sparse polynomials (dicts of exponent tuples, arithmetic in machine integers and
``gcd``-cancelled quotients) — together with the derivations ``∂/∂x`` of ``K``
given by the chain rule,

    ∂f/∂x = Σ_g (∂f/∂g) · ∂g/∂x,   ∂(sin a)/∂x = cos a · ∂a/∂x, …

so that frames, structure functions (docs/theory.rst, The tangent bundle in a frame), Lagrangians in quasi-velocities
and the nonholonomic field (docs/nonholonomic.rst, Prop. 2) are computed with a few
thousand dictionary operations instead of SymPy ``Expr`` construction,
``cancel`` and ``diff`` (which dominate the run time of small systems).

Normal form.  Numerator and denominator are reduced modulo ``S_a² + C_a² − 1``
(``S_a = sin a``, ``C_a = cos a``; at most linear in ``S_a``) and cancelled.  When
every transcendental generator has a distinct single symbol as argument and
there are no algebraic generators (``√x``), this form is canonical: an element is
zero iff its numerator is the zero polynomial.  Otherwise (``cos(θ1 − θ2)`` next
to ``cos θ1``, ``√x``) :meth:`DiffField.is_zero` also evaluates at random points.

Anything outside this class (``sinh``, ``log``, ``Abs``, floats, functions of
non-symbol arguments, derivatives beyond the prepared order) raises
:class:`Unsupported`; callers then fall back to the ``Expr`` route.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from functools import lru_cache
from functools import reduce as _fold
from itertools import combinations_with_replacement
from typing import Iterable, Sequence

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.polys.domains import ZZ
from sympy.polys.euclidtools import dmp_inner_gcd
from sympy.polys.fields import FracElement, FracField
from sympy.polys.orderings import lex
from sympy.polys.rings import PolyRing

from ..parsing import sympified
from .expressions import free_symbols
from .numeric import numerically_zero, random_point

__all__ = ["Unsupported", "DiffField", "expression_route"]

_DERIVATIVE_ORDER = 3  # derivatives of undefined functions prepared up to this total order
_DENSE_GCD_FROM = 80  # terms of p and q from which cancel uses the dense gcd
_DENSE_SIZE_LIMIT = 200_000  # Π (degree + 1) beyond which cancel computes no gcd
CANCEL_LIMIT = 160  # terms of p and q beyond which cancel(p, q) computes no gcd (see cancel)
TERM_LIMIT = 300  # terms of numerator + denominator beyond which the kernel gives up (see DiffField.reduce)


class Unsupported(Exception):
    """The expression lies outside the kernel's class; use the ``Expr`` route."""


_ENABLED = True


@contextmanager
def expression_route():
    """Within this block every computation takes the ``Expr`` route (the kernel is off).

    For cross-checks of the two routes, and as an escape hatch.
    """
    global _ENABLED
    saved, _ENABLED = _ENABLED, False
    try:
        yield
    finally:
        _ENABLED = saved


_POOL: dict = {}


def _pooled(kind: str, k: int) -> sp.Dummy:
    """The k-th generator symbol of a kind (reused, so SymPy's ring cache is hit)."""
    key = (kind, k)
    if key not in _POOL:
        _POOL[key] = sp.Dummy(f"{kind}{k}")
    return _POOL[key]


def _rational_exponent(e) -> bool:
    return isinstance(e, sp.Rational) and not isinstance(e, sp.Integer)


def cancel(p, q) -> tuple:
    """``p/q`` in lowest terms (``PolyElement.cancel``), the gcd taken in the subring of the
    generators that occur in p or q."""
    R = p.ring
    if not p:
        return p, R.one
    if q == R.one:
        return p, q
    if len(p) == 1 or len(q) == 1:
        return p.cancel(q)
    if len(p) + len(q) > CANCEL_LIMIT:
        # beyond this, SymPy's gcds (sparse or dense) can take seconds to minutes: leave the
        # quotient uncancelled (zero tests need only the numerator); growth then ends the
        # kernel's attempt at TERM_LIMIT and the caller takes the expression route
        return cheap_cancel(p, q)
    used = sorted({i for poly in (p, q) for m in poly.itermonoms() for i, k in enumerate(m) if k})
    if len(used) == R.ngens:
        return p.cancel(q)
    sub = _ring(tuple(R.symbols[i] for i in used))
    a, b = (sub.from_dict({tuple(m[i] for i in used): c for m, c in poly.iterterms()}) for poly in (p, q))
    if len(a) + len(b) > _DENSE_GCD_FROM:
        # SymPy's sparse division inside the heuristic gcd is quadratic in the number of terms
        # (it recomputes the leading monomial each step); the dense recursive one is not, but
        # its cost grows with the dense size Π (deg + 1): beyond a bound, no gcd at all
        dense_size = 1
        for i in range(sub.ngens):
            dense_size *= max(a.degree(i), b.degree(i)) + 1
        if dense_size > _DENSE_SIZE_LIMIT:
            return cheap_cancel(p, q)
        _, ca, cb = dmp_inner_gcd(a.to_dense(), b.to_dense(), sub.ngens - 1, ZZ)
        a, b = sub.from_dense(ca), sub.from_dense(cb)
        if b.LC < 0:
            a, b = -a, -b
    else:
        a, b = a.cancel(b)
    n = R.ngens

    def back(poly):
        out = {}
        for m, c in poly.iterterms():
            full = [0] * n
            for i, k in zip(used, m):
                full[i] = k
            out[tuple(full)] = c
        return R.from_dict(out)

    return back(a), back(b)


@lru_cache(maxsize=1024)
def _ring(symbols: tuple) -> PolyRing:
    """``ZZ[symbols]`` (lex), built once: SymPy builds a ring's monomial code afresh on every call.

    Its clones over ZZ/lex (the rings of the heuristic gcd's recursion, ``ring.drop(0)``) come
    from this cache too.
    """
    ring = PolyRing(symbols, ZZ, lex)

    def clone(new_symbols, domain, order):
        if domain in (None, ZZ) and order in (None, lex):
            return _ring(tuple(new_symbols or symbols))
        return PolyRing._clone(ring, new_symbols, domain, order)

    ring._clone = clone
    return ring


@lru_cache(maxsize=256)
def _field(symbols: tuple) -> FracField:
    """``ZZ(symbols)`` whose elements cancel with :func:`cancel`: in the subring of the
    generators actually present (SymPy's heuristic gcd recurses over every generator of the
    ring, used or not)."""
    ring = _ring(symbols)
    K = object.__new__(FracField)  # FracField.__new__ without its fresh PolyRing
    K._hash_tuple = (FracField.__name__, ring.symbols, ring.ngens, ZZ, lex)
    K._hash = hash(K._hash_tuple)
    K.ring, K.symbols, K.ngens, K.domain, K.order = ring, ring.symbols, ring.ngens, ZZ, lex
    K.dtype = _Frac(K, K.ring.zero).raw_new
    K.zero, K.one = K.dtype(K.ring.zero), K.dtype(K.ring.one)
    K.gens = K._gens()
    return K


class _Frac(FracElement):
    """A field element whose arithmetic cancels lazily: only monomial and numerical common
    factors after each operation (:func:`cheap_cancel`); the full gcd (:func:`cancel`) at
    :meth:`DiffField.reduce`, which the computations call once per result entry."""

    def new(f, numer, denom):
        return f.raw_new(*cheap_cancel(numer, denom))


def cheap_cancel(p, q) -> tuple:
    """``p/q`` without the common factors that cost no gcd: a monomial or constant numerator or
    denominator (cancelled exactly), equal polynomials; the sign made canonical."""
    R = p.ring
    if not p:
        return p, R.one
    if q == R.one:  # a polynomial: the most common case, no gcd
        return p, q
    if len(p) == 1 or len(q) == 1:
        return p.cancel(q)
    if p == q:
        return R.one, R.one
    if q.LC < 0:
        return -p, -q
    return p, q


class DiffField:
    """The differential field of a family of expressions (see the module docstring).

    Parameters
    ----------
    exprs : iterable of Expr
        Every expression that will be converted (later conversions may only use
        the generators found here, plus ``extra_symbols``).
    variables : sequence of Symbol
        The symbols with respect to which derivatives are taken (the coordinates;
        symbols such as velocities that no generator depends on need not be listed).
    extra_symbols : sequence of Symbol
        Further plain symbols to include as generators (e.g. quasi-velocities).
    canonical_only : bool
        Raise :class:`Unsupported` unless the normal form is canonical (the default: every
        computation of anholo then either is exact or takes the expression route).
    term_limit : int
        Terms (numerator + denominator) past which :meth:`reduce` gives up; :data:`TERM_LIMIT` by
        default.  A computation whose only alternative is much slower (the flag of a distribution)
        may allow more.
    """

    def __init__(self, exprs: Iterable, variables: Sequence = (), extra_symbols: Sequence = (),
                 canonical_only: bool = True, term_limit: int | None = None):
        if not _ENABLED:
            raise Unsupported("the kernel is switched off (expression_route)")
        self.term_limit = TERM_LIMIT if term_limit is None else int(term_limit)
        self.variables = tuple(variables)
        self._varset = set(self.variables)
        self._symbols: dict = {}  # Symbol -> generator symbol (itself)
        self._trig: dict = {}  # argument -> (S dummy, C dummy)
        self._others: dict = {}  # atom Expr (exp, fractional power, undefined function, Derivative) -> dummy
        self.canonical = True
        exprs = [sympified(e) for e in exprs]
        for s in extra_symbols:
            self._symbols[s] = s
        seen: set = set()
        for e in exprs:
            self._scan(e, seen)
        self._prepare_undefined_derivatives()
        self._finish()
        if canonical_only and not self.canonical:
            # cos(θ1 − θ2) next to cos θ1, √x: zero tests would need numbers, and expanding them
            # (cos θ1 cos θ2 + sin θ1 sin θ2) swells large systems; the expression route is better there
            raise Unsupported("generators related by identities the normal form does not know")

    # --- discovering the generators ------------------------------------------------------
    def _scan(self, e, seen: set) -> None:
        stack = [e]
        while stack:
            a = stack.pop()
            if a in seen:
                continue
            seen.add(a)
            if a.is_Symbol:
                self._symbols.setdefault(a, a)
            elif a.is_Rational or a in (sp.pi, sp.E):
                if a in (sp.pi, sp.E):
                    self._add_other(a)
            elif a.is_Add or a.is_Mul:
                stack.extend(a.args)
            elif a.is_Pow:
                b, x = a.args
                if x.is_Integer:
                    stack.append(b)
                elif _rational_exponent(x):
                    self._add_other(a)
                    self.canonical = False
                    stack.append(b)
                elif a.func is sp.exp or (b is sp.E):
                    self._add_other(sp.exp(x))
                    stack.append(x)
                else:
                    raise Unsupported(f"power {a}")
            elif isinstance(a, (sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc)):
                arg = a.args[0]
                if arg not in self._trig:
                    k = len(self._trig)
                    self._trig[arg] = (_pooled("S", k), _pooled("C", k))
                stack.append(arg)
            elif isinstance(a, sp.exp):
                self._add_other(a)
                stack.append(a.args[0])
            elif isinstance(a, AppliedUndef):
                if not all(x.is_Symbol for x in a.args):
                    raise Unsupported(f"undefined function of non-symbol arguments: {a}")
                self._add_other(a)
            elif isinstance(a, sp.Derivative):
                f = a.expr
                if not isinstance(f, AppliedUndef) or not all(x.is_Symbol for x in f.args):
                    raise Unsupported(f"derivative {a}")
                self._add_other(a)
                self._add_other(f)
            else:
                raise Unsupported(f"{type(a).__name__}: {a}")

    def _add_other(self, atom) -> None:
        if atom not in self._others:
            self._others[atom] = _pooled("G", len(self._others))

    def _prepare_undefined_derivatives(self) -> None:
        """Derivatives of each undefined function w.r.t. its (variable) arguments, up to the prepared order."""
        for f in [a for a in self._others if isinstance(a, AppliedUndef)]:
            args = [x for x in dict.fromkeys(f.args) if x in self._varset]
            for order in range(1, _DERIVATIVE_ORDER + 1):
                for combo in combinations_with_replacement(args, order):
                    self._add_other(sp.Derivative(f, *combo))

    def _finish(self) -> None:
        args = list(self._trig)
        if any(not a.is_Symbol for a in args):
            self.canonical = False
        if any(isinstance(a, sp.exp) and not a.args[0].is_Symbol for a in self._others):
            self.canonical = False
        gens = list(self._symbols.values())
        for S, C in self._trig.values():
            gens += [S, C]
        gens += list(self._others.values())
        self.field = _field(tuple(gens))
        self.ring = self.field.ring
        K = self.field
        index = {g: i for i, g in enumerate(gens)}
        self._gen = {g: K.gens[i] for g, i in index.items()}
        self._index = index
        self._pairs = [(index[S], index[C]) for S, C in self._trig.values()]
        self._back = {}
        for s in self._symbols:
            self._back[s] = s
        for arg, (S, C) in self._trig.items():
            self._back[S], self._back[C] = sp.sin(arg), sp.cos(arg)
        for atom, d in self._others.items():
            self._back[d] = atom
        self._memo: dict = {}
        # ∂g/∂x for every generator g depending on a variable x: {x: [(gen index, ∂g/∂x)]}
        self._derivs = {x: [] for x in self.variables}
        for x in self.variables:
            if x in self._symbols:
                self._derivs[x].append((index[x], K.one))
        for arg, (S, C) in self._trig.items():
            for x in self.variables:
                if arg.has(x):
                    da = self.convert(arg.diff(x))
                    self._derivs[x].append((index[S], self._gen[C] * da))
                    self._derivs[x].append((index[C], -self._gen[S] * da))
        for atom, d in self._others.items():
            for x in self.variables:
                if not atom.has(x):
                    continue
                i = index[d]
                if isinstance(atom, sp.exp):
                    self._derivs[x].append((i, self._gen[d] * self.convert(atom.args[0].diff(x))))
                elif atom.is_Pow:
                    b, e = atom.args
                    val = self._gen[d] * K(e.p) / K(e.q) * self.convert(b.diff(x)) / self.convert(b)
                    self._derivs[x].append((i, val))
                else:  # undefined function or a derivative of one
                    self._derivs[x].append((i, _Lazy(atom, x)))

    # --- conversion ------------------------------------------------------------------------
    def convert(self, expr):
        """The element of K for a SymPy expression (memoised over subexpressions)."""
        expr = sympified(expr)
        memo = self._memo
        if expr in memo:
            return memo[expr]
        K = self.field
        stack = [(expr, False)]
        while stack:
            a, ready = stack.pop()
            if a in memo:
                continue
            if a.is_Symbol:
                if a not in self._gen:
                    raise Unsupported(f"symbol {a} not among the generators")
                memo[a] = self._gen[a]
                continue
            if a.is_Integer:
                memo[a] = K(int(a))
                continue
            if a.is_Rational:
                memo[a] = K(int(a.p)) / K(int(a.q))
                continue
            if a in self._others:
                memo[a] = self._gen[self._others[a]]
                continue
            if isinstance(a, (sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc)):
                pair = self._trig.get(a.args[0])
                if pair is None:
                    raise Unsupported(f"{a} not among the generators")
                S, C = self._gen[pair[0]], self._gen[pair[1]]
                memo[a] = {sp.sin: S, sp.cos: C, sp.tan: S / C, sp.cot: C / S,
                           sp.sec: 1 / C, sp.csc: 1 / S}[a.func]
                continue
            if a.is_Add or a.is_Mul or (a.is_Pow and a.args[1].is_Integer):
                if not ready:
                    stack.append((a, True))
                    stack.extend((c, False) for c in a.args if c not in memo)
                    continue
                vals = [memo[c] for c in a.args]
                if a.is_Add:
                    memo[a] = _fold(lambda u, w: u + w, vals)
                elif a.is_Mul:
                    memo[a] = _fold(lambda u, w: u * w, vals)
                else:
                    memo[a] = vals[0] ** int(a.args[1])
                continue
            if a.is_Pow and a.args[0] is sp.E and a.args[1] in [x.args[0] for x in self._others if isinstance(x, sp.exp)]:
                memo[a] = self._gen[self._others[sp.exp(a.args[1])]]
                continue
            raise Unsupported(f"{type(a).__name__}: {a}")
        return memo[expr]

    def to_expr(self, f) -> sp.Expr:
        """A SymPy expression for an element: ``numerator/denominator``, both expanded."""
        back = self._back
        den = f.denom
        if den.is_ground:  # a number: distribute it (x/2 + y/3, as ``expand`` writes it)
            return self._poly_expr(f.numer, back, int(den.LC))
        num = self._poly_expr(f.numer, back)
        den = self._poly_expr(den, back)
        # Pow(den, -1) unevaluated: the same object SymPy would build, without its assumption
        # queries (is the sum zero? infinite?), which dominate conversion on a cold cache
        return sp.Mul(num, sp.Pow(den, -1, evaluate=False) if den.is_Add else sp.Pow(den, -1))

    def _poly_expr(self, p, back, divisor: int = 1) -> sp.Expr:
        gens = [back[g] for g in self.ring.symbols]
        terms = []
        for monom, coeff in p.terms():
            c = sp.Rational(int(coeff), divisor)
            factors = [c] if c != 1 else []
            for g, k in zip(gens, monom):
                if k:
                    factors.append(g if k == 1 else sp.Pow(g, k))
            terms.append(sp.Mul(*factors) if len(factors) != 1 else factors[0])
        if not terms:
            return sp.S.Zero
        return sp.Add(*terms) if len(terms) > 1 else terms[0]

    # --- normal form and zero test -----------------------------------------------------------
    def _reduce_poly(self, p):
        for iS, iC in self._pairs:
            if p.degree(iS) < 2:
                continue
            R = self.ring
            one_minus_c2 = R.one - R.gens[iC] ** 2
            out = R.zero
            powers = {}
            for monom, coeff in p.terms():
                k = monom[iS]
                if k < 2:
                    out += R({monom: coeff})
                    continue
                low = list(monom)
                low[iS] = k % 2
                j = k // 2
                if j not in powers:
                    powers[j] = one_minus_c2 ** j
                out += R({tuple(low): coeff}) * powers[j]
            p = out
        return p

    def reduce(self, f):
        """Normal form: numerator and denominator reduced modulo ``sin² + cos² − 1``, cancelled.

        Raises :class:`Unsupported` when the element has grown past ``term_limit``
        (:data:`TERM_LIMIT` by default) terms: beyond that, SymPy's multivariate gcd (run by
        every field operation) costs more than the expression route it replaces.
        """
        if len(f.numer) + len(f.denom) > self.term_limit:
            raise Unsupported(f"an intermediate result has {len(f.numer) + len(f.denom)} terms")
        num, den = f.numer, f.denom
        if self._pairs:
            num, den = self._reduce_poly(num), self._reduce_poly(den)
        if len(den) == 1 and num is f.numer and den is f.denom:
            return f  # a monomial denominator: cancelled already
        return self.field.raw_new(*cancel(num, den))

    def is_zero(self, f, points: int = 3) -> bool:
        """True if ``f`` vanishes identically (exactly in canonical form, else also numerically)."""
        f = self.reduce(f)
        if not f.numer:
            return True
        if self.canonical:
            return False
        e = self.to_expr(f)
        rng = random.Random(7)
        pts = [random_point(free_symbols([e]), rng) for _ in range(points)]
        return numerically_zero(e, pts, tol=1e-10)

    def variable_generators(self) -> set:
        """Indices of the generators that depend on the variables (the coordinates)."""
        if not hasattr(self, "_vargens"):
            self._vargens = {i for x in self.variables for i, _ in self._derivs[x]}
        return self._vargens

    def depends_on_variables(self, f) -> bool:
        """True if ``f`` involves a generator that depends on the variables."""
        dep = self.variable_generators()
        return any(k and i in dep for p in (f.numer, f.denom) for m in p.monoms() for i, k in enumerate(m))

    # --- derivations -------------------------------------------------------------------------
    def diff(self, f, x):
        """``∂f/∂x`` for a variable or plain symbol x (the chain rule through the generators)."""
        K = self.field
        if x not in self._varset:
            if x not in self._symbols:
                return K.zero
            return f.diff(self._gen[x])
        num, den = f.numer, f.denom
        out = K.zero
        ring_gens = self.ring.gens
        for i, dg in self._derivs[x]:
            dn, dd = num.diff(ring_gens[i]), den.diff(ring_gens[i])
            if not dn and not dd:
                continue
            if isinstance(dg, _Lazy):
                dg = self._lazy(dg)
            part = K.new(dn * den - num * dd, den * den)
            out += part * dg if dg != 1 else part
        return out

    def _lazy(self, lz: "_Lazy"):
        """∂/∂x of an undefined function (or derivative of one): a prepared generator."""
        atom, x = lz.atom, lz.x
        f, path = (atom.expr, list(atom.variables)) if isinstance(atom, sp.Derivative) else (atom, [])
        new = sp.Derivative(f, *sorted(path + [x], key=lambda s: f.args.index(s)))
        if new not in self._others:
            raise Unsupported(f"{new}: derivative order beyond {_DERIVATIVE_ORDER}")
        return self._gen[self._others[new]]

    def gradient_along(self, f, components: Sequence, coordinates: Sequence):
        """``Y(f) = Σ_A Y^A ∂f/∂q^A`` for a vector field with components in K."""
        out = self.field.zero
        for c, q in zip(components, coordinates):
            if c:
                out += c * self.diff(f, q)
        return out


class _Lazy:
    """∂(atom)/∂x, resolved on first use (the generator exists; its index is looked up then)."""

    __slots__ = ("atom", "x")

    def __init__(self, atom, x):
        self.atom, self.x = atom, x


# --- sizes, normal forms and linear algebra in K ------------------------------------------------
def poly_size(p) -> int:
    """Operation count of a polynomial written out expanded (as ``count_ops`` would count it)."""
    ops = max(len(p) - 1, 0)
    for monom, coeff in p.terms():
        factors = sum(1 for k in monom if k) + (coeff not in (1, -1))
        ops += max(factors - 1, 0) + sum(1 for k in monom if k > 1) + (coeff < 0)
    return ops


def size(f) -> int:
    """Operation count of ``numerator/denominator``."""
    return poly_size(f.numer) + (0 if f.denom == 1 else 1 + poly_size(f.denom))


def simplest(K: DiffField, f):
    """The smaller of the cancelled form and its Pythagorean reduction."""
    g = K.reduce(f)
    return g if g is f or size(g) <= size(f) else f


def tidy(expr: sp.Expr) -> sp.Expr:
    """``cancel`` plus Pythagorean reduction in K (see :func:`anholo.algebra.simplify.tidy`).

    Raises :class:`Unsupported` for expressions outside the kernel's class.
    """
    if expr.has(sp.tan, sp.cot, sp.sec, sp.csc):  # tan θ may be smaller than sin θ/cos θ: the Expr route decides
        raise Unsupported("tan, cot, sec or csc")
    K = DiffField([expr])
    return K.to_expr(simplest(K, K.convert(expr)))


def gauss_jordan(K: DiffField, rows: list, ncols: int):
    """Reduced row echelon form of ``rows`` (lists of elements of K) over K, in place.

    Pivots: the smallest nonzero entry of the column among the remaining rows.
    Returns the pivot columns (their number is the rank).
    """
    pivots = []
    r = 0
    nrows = len(rows)
    for c in range(ncols):
        best, best_size = None, None
        for i in range(r, nrows):
            e = rows[i][c]
            if e and not K.is_zero(e):
                s = size(e)
                if best is None or s < best_size:
                    best, best_size = i, s
        if best is None:
            for i in range(r, nrows):
                rows[i][c] = K.field.zero
            continue
        rows[r], rows[best] = rows[best], rows[r]
        piv = rows[r][c]
        if piv != 1:
            rows[r] = [K.reduce(e / piv) if e else e for e in rows[r]]
        prow = rows[r]
        for i in range(nrows):
            if i != r and rows[i][c]:
                f = rows[i][c]
                rows[i] = [K.reduce(e - f * pe) if pe else e for e, pe in zip(rows[i], prow)]
                rows[i][c] = K.field.zero
        pivots.append(c)
        r += 1
        if r == nrows:
            break
    return pivots


def inverse(K: DiffField, M: list):
    """Inverse of a square matrix over K (lists of rows), or None if it is singular."""
    n = len(M)
    F = K.field
    rows = [list(M[i]) + [F.one if j == i else F.zero for j in range(n)] for i in range(n)]
    pivots = gauss_jordan(K, rows, n)
    if len(pivots) < n:
        return None
    return [row[n:] for row in rows]


def determinant(K: DiffField, M: list):
    """Determinant over K by fraction-free-free elimination (product of pivots)."""
    n = len(M)
    rows = [list(r) for r in M]
    det = K.field.one
    for c in range(n):
        piv = next((i for i in range(c, n) if rows[i][c] and not K.is_zero(rows[i][c])), None)
        if piv is None:
            return K.field.zero
        if piv != c:
            rows[c], rows[piv] = rows[piv], rows[c]
            det = -det
        p = rows[c][c]
        det = det * p
        for i in range(c + 1, n):
            if rows[i][c]:
                f = rows[i][c] / p
                rows[i] = [K.reduce(e - f * pe) if pe else e for e, pe in zip(rows[i], rows[c])]
    return K.reduce(det)


def substitute(K: DiffField, f, mapping: dict):
    """``f`` with plain-symbol generators replaced by elements of K (a polynomial substitution)."""
    idx = {K._index[s]: val for s, val in mapping.items() if s in K._index}
    if not idx:
        return f
    return _subs_poly(K, f.numer, idx) / _subs_poly(K, f.denom, idx)


def _subs_poly(K: DiffField, p, idx: dict):
    R, F = K.ring, K.field
    out = F.zero
    powers: dict = {}
    for monom, coeff in p.terms():
        kept = tuple(0 if i in idx else e for i, e in enumerate(monom))
        term = F(R({kept: coeff}))
        for i, val in idx.items():
            k = monom[i]
            if k:
                key = (i, k)
                if key not in powers:
                    powers[key] = val ** k
                term = term * powers[key]
        out += term
    return out


def matrix(K: DiffField, M) -> list:
    """A SymPy matrix (or nested rows) as rows of elements of K."""
    if isinstance(M, sp.MatrixBase):
        return [[K.convert(M[i, j]) for j in range(M.cols)] for i in range(M.rows)]
    return [[K.convert(e) for e in row] for row in M]


def to_matrix(K: DiffField, rows: list, nrows: int | None = None, ncols: int | None = None) -> sp.ImmutableMatrix:
    """Rows of elements of K as an immutable SymPy matrix (entries in their simplest form)."""
    nrows = len(rows) if nrows is None else nrows
    ncols = (len(rows[0]) if rows else 0) if ncols is None else ncols
    return sp.ImmutableMatrix(nrows, ncols, [K.to_expr(simplest(K, e)) for row in rows for e in row])


def matmul(K: DiffField, A: list, B: list) -> list:
    """The product of two matrices over K (entries reduced)."""
    zero = K.field.zero
    cols = len(B[0]) if B else 0
    return [[K.reduce(sum((a * B[k][j] for k, a in enumerate(row) if a and B[k][j]), zero)) for j in range(cols)]
            for row in A]


def transpose(M: list) -> list:
    return [list(col) for col in zip(*M)] if M else []


def rank(K: DiffField, M: list) -> int:
    """Rank over K (exact in canonical form; zero tests by :meth:`DiffField.is_zero` otherwise)."""
    rows = [list(r) for r in M]
    return len(gauss_jordan(K, rows, len(rows[0]) if rows else 0))


def variable_part(K: DiffField, p):
    """The factor of a polynomial that depends on the variables: ``p = c · m · r`` with c, m free of
    them or a monomial, r the primitive rest; returns the variable-dependent part of ``m · r``."""
    dep = K.variable_generators()
    R = K.ring
    monoms = p.monoms()
    monom = tuple(min(m[i] for m in monoms) for i in range(R.ngens))  # the monomial common to every term
    out = R({tuple(k if i in dep else 0 for i, k in enumerate(monom)): 1})
    rest = p.quo_term((monom, R.domain.one))
    if any(k and i in dep for m in rest.monoms() for i, k in enumerate(m)):
        out = out * rest.primitive()[1]
    return out


def split(K: DiffField, f, symbols: Sequence) -> tuple:
    """``f = f_dep + f_free``: the terms of the numerator that contain one of ``symbols`` and the
    others, each over the common denominator and cancelled separately.

    For a Lagrangian and the velocities this separates ``T(q, v)`` from ``−V(q)``: the
    velocity derivatives and the Hessian then never meet V's denominators.
    """
    idx = [K._index[s] for s in symbols if s in K._index]
    dep, free = {}, {}
    for m, c in f.numer.iterterms():
        (dep if any(m[i] for i in idx) else free)[m] = c
    R, F = K.ring, K.field
    den = f.denom
    return tuple(F.raw_new(*cancel(R.from_dict(d), den)) if d else F.zero for d in (dep, free))

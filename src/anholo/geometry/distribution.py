"""The flag of a distribution and its growth vector, from the structure functions of an adapted frame.

For a distribution ``D = span{X_1, …, X_m}`` (the first m vectors of an adapted
frame ``{X_i}``, docs/theory.rst, Frames on Q) the *flag* (the Lie flag of
Bellaïche (1996) and Montgomery (2002))

    D^1 = D,   D^{k+1} = D^k + [D, D^k]

is an increasing sequence of modules of vector fields.  Its ranks at a point q,
``(dim D^1(q), dim D^2(q), …)`` until they no longer grow, are the *growth
vector* at q; q is *regular* when the growth vector is constant near q (it is
then the generic growth vector).  D is *bracket generating* when the last rank
is n = dim Q; then, by the Chow–Rashevskii theorem (Chow 1939, Rashevskii 1938;
Montgomery 2002), any two points of a connected Q are joined by a
curve tangent to D: the constraints do not confine the motion to a submanifold.
Its opposite, D integrable (Frobenius), is the growth vector ``(m)``.

Everything is computed in the frame: a vector field ``Y = Y^i X_i`` is its frame
components, and with ``[X_i, X_j] = R^k_ij X_k``

    [X_α, Y]^k = X_α(Y^k) + R^k_αj Y^j,

so the generators of ``D^{k+1}`` are those of ``D^k`` and the brackets ``[X_α, Y]``
of the generators Y of ``D^k`` (``[fX, gY] = fg[X, Y] + f X(g) Y − g Y(f) X``: the
brackets of generators suffice).  A bracket is kept when it raises the generic rank.
The kept generators ``B_1 ⊂ B_2 ⊂ …`` (``|B_k|`` = the generic rank of ``D^k``) give
a cheap sufficient condition for regularity: where the determinant of the last
``B`` (frame components) does not vanish (and the frame is regular), every ``B_k``
is independent, so the ranks there are the generic ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..algebra import determinant, generic_rank, size_exceeds, tidy
from ..algebra import kernel as _kernel
from ..errors import DimensionError
from .frame import Frame

__all__ = ["Flag", "flag_of"]

#: Components larger than this (tree nodes) are not put through ``tidy`` (kept as derived).
_TIDY_LIMIT = 2000
#: The determinant of the final generators is factored only below this size.
_DET_LIMIT = 3000
#: Terms (numerator + denominator) a bracket may reach on the exact coordinate route
#: (:func:`_grow_in_kernel`) before the frame route takes over: the n-trailer with four trailers
#: needs about 1,100 (0.9 s here, against 40--150 s on the frame route, whose ``tidy`` dominates).
_KERNEL_TERMS = 5000


def _bracket_with(frame: Frame, alpha: int, Y: tuple) -> tuple:
    """Frame components of ``[X_α, Y]``: ``X_α(Y^k) + R^k_αj Y^j``."""
    n, R = frame.dim, frame.structure
    out = []
    for k in range(n):
        e = frame.apply(alpha, Y[k]) if not Y[k].is_number else sp.S.Zero
        e += sp.Add(*[R[k][alpha][j] * Y[j] for j in range(n) if R[k][alpha][j] != 0 and Y[j] != 0])
        out.append(e if size_exceeds(e, _TIDY_LIMIT) else tidy(e))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Flag:
    """The flag ``D ⊂ D + [D, D] ⊂ …`` of the distribution spanned by the first ``m`` vectors of a frame.

    Attributes
    ----------
    frame : Frame
        The adapted frame (its first ``m`` vectors span D).
    m : int
        The rank of D.
    generators : tuple of tuples
        Kept generators in coordinate components (row i: ``Y_i^A``, ``Y_i = Y_i^A ∂/∂q^A``):
        ``generators[:growth_vector[k]]`` span ``D^{k+1}`` at a generic point (the first m are
        ``X_1..X_m``).
    levels : tuple of int
        ``levels[i]``: the step k of the flag at which generator i entered (1 for D).
    words : tuple of tuples
        ``words[i]``: the bracket that gave generator i, as frame indices (0-based):
        ``(α,)`` is ``X_α``, ``(α, β, γ)`` is ``[X_α, [X_β, X_γ]]``.
    growth_vector : tuple of int
        The ranks of ``D^1, D^2, …`` at a generic point, up to the step where they stop growing.
    """

    frame: Frame
    m: int
    generators: tuple
    levels: tuple
    words: tuple
    growth_vector: tuple

    @property
    def dimension(self) -> int:
        """n = dim Q."""
        return self.frame.dim

    @property
    def bracket_generating(self) -> bool:
        """True if the last rank of the flag is n (Chow–Rashevskii: any two points are joined by a curve tangent to D)."""
        return self.growth_vector[-1] == self.dimension

    @property
    def step(self) -> int:
        """The number of steps of the flag (1 for an integrable D)."""
        return len(self.growth_vector)

    @property
    def integrable(self) -> bool:
        """True if ``D + [D, D] = D`` (Frobenius)."""
        return self.growth_vector == (self.m,)

    def basis_matrix(self) -> sp.ImmutableMatrix:
        """The kept generators as rows, in coordinates."""
        return sp.ImmutableMatrix([list(g) for g in self.generators])

    def regularity_determinant(self) -> sp.Expr | None:
        """For a bracket-generating D: ``det`` of the kept generators in coordinates (factored when small).

        At a point where it does not vanish (and the components are defined), the growth vector
        is the generic one; the singular points lie in its zero set.  None if D is not bracket
        generating, or if the generators are too large for the determinant to be cheap.
        """
        if not self.bracket_generating:
            return None
        B = self.basis_matrix()
        if any(size_exceeds(e, _DET_LIMIT // self.dimension) for e in B):
            return None  # too large to be of use (and to compute cheaply)
        det = determinant(B)
        if not size_exceeds(det, _DET_LIMIT):
            det = sp.factor(tidy(det))
        return det

    def singular_factors(self) -> tuple | None:
        """The factors of :meth:`regularity_determinant` that can vanish (numbers and powers of
        positive parameters dropped); the singular points of the flag lie where one of them vanishes.
        None when the determinant is not available (see :meth:`regularity_determinant`)."""
        det = self.regularity_determinant()
        if det is None:
            return None
        if det.is_number:
            return ()
        out = []
        for f in sp.Mul.make_args(det):
            base = f.base if f.is_Pow and f.exp.is_number else f
            if base.is_number or base.is_positive:
                continue
            if base.free_symbols & set(self.frame.chart.coordinates):
                out.append(base)
        return tuple(dict.fromkeys(out))

    def word_text(self, i: int) -> str:
        """Generator i as a bracket of the ``X_α`` (1-based names, e.g. ``[X1, [X1, X2]]``)."""
        w = self.words[i]
        text = f"X{w[-1] + 1}"
        for a in reversed(w[:-1]):
            text = f"[X{a + 1}, {text}]"
        return text

    def __str__(self):
        verdict = "bracket generating" if self.bracket_generating else "not bracket generating"
        return f"growth vector {list(self.growth_vector)} (n = {self.dimension}): {verdict}"

    def as_latex(self) -> str:
        gv = ", ".join(map(str, self.growth_vector))
        verdict = r"\text{bracket generating}" if self.bracket_generating else r"\text{not bracket generating}"
        return rf"\mathcal{{G}}(D) = ({gv}),\quad n = {self.dimension}:\ {verdict}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"growth_vector": list(self.growth_vector), "bracket_generating": self.bracket_generating,
                "generators": [self.word_text(i) for i in range(len(self.generators))]}


def _grow(m: int, n: int, steps: int, unit: list, bracket, independent=None) -> tuple:
    """The kept generators, their levels and words: ``bracket(α, Y)`` gives ``[X_α, Y]``, and a nonzero
    candidate is kept when ``independent(kept, candidate)`` (default: it raises the generic rank)."""
    if independent is None:
        def independent(kept, cand):
            return (not all(c == 0 for c in cand)
                    and generic_rank(sp.Matrix([list(x) for x in kept] + [list(cand)])) > len(kept))
    gens, levels, words = list(unit), [1] * m, [(a,) for a in range(m)]
    growth, newest = [m], list(range(m))
    while len(growth) < steps and len(gens) < n and newest:
        added = []
        for g in newest:
            for a in range(m):
                cand = bracket(a, gens[g])
                if independent(gens, cand):
                    gens.append(cand)
                    levels.append(len(growth) + 1)
                    words.append((a,) + words[g])
                    added.append(len(gens) - 1)
                    if len(gens) == n:
                        break
            if len(gens) == n:
                break
        if not added:
            break
        growth.append(len(gens))
        newest = added
    return tuple(gens), tuple(levels), tuple(words), tuple(growth)


def _expanded(e: sp.Expr) -> sp.Expr:
    """``sin``/``cos`` of sums and multiples written with those of single symbols (``cos(θ1 − θ2)``
    becomes ``cos θ1 cos θ2 + sin θ1 sin θ2``), so that the kernel's normal form is canonical."""
    trig = [t for t in e.atoms(sp.sin, sp.cos) if not t.args[0].is_Symbol]
    return e.xreplace({t: sp.expand_trig(t) for t in trig}) if trig else e


def _rational_point(K, seed: int = 11):
    """Values of the kernel's generators at a random rational point: symbols get random rationals,
    ``sin a, cos a`` the rational point ``(2t/(1+t²), (1−t²)/(1+t²))`` of the circle; None if another
    generator occurs (undefined functions, exponentials: then the ranks are taken numerically)."""
    import random

    rng = random.Random(seed)
    back, vals, angles = K._back, [], {}
    for g in K.ring.symbols:
        e = back[g]
        if e.is_Symbol:
            vals.append(sp.QQ(rng.randint(3, 97), rng.randint(3, 97)) * (1 if e.is_positive else rng.choice((1, -1))))
        elif isinstance(e, (sp.sin, sp.cos)) and e.args[0].is_Symbol:
            t = angles.setdefault(e.args[0], sp.QQ(rng.randint(1, 97), rng.randint(3, 97)))
            vals.append(2 * t / (1 + t * t) if isinstance(e, sp.sin) else (1 - t * t) / (1 + t * t))
        else:
            return None
    return vals


def _grow_in_kernel(chart, X: list, n: int, steps: int) -> tuple:
    """:func:`_grow` for the coordinate route in the differential field of :mod:`anholo.algebra.kernel`
    (trigonometric functions of sums expanded), with exact ranks at a random rational point;
    raises ``Unsupported`` outside the kernel's class."""
    m, q = len(X), chart.coordinates
    K = _kernel.DiffField([_expanded(e) for row in X for e in row], q, term_limit=_KERNEL_TERMS)
    point = _rational_point(K)
    if point is None:
        raise _kernel.Unsupported("generators without a rational point")
    Xk = [[K.convert(_expanded(e)) for e in row] for row in X]

    def poly_value(p):
        total = sp.QQ(0)
        for monom, coeff in p.terms():
            term = sp.QQ(int(coeff))
            for v, k in zip(point, monom):
                if k:
                    term *= v ** k
            total += term
        return total

    def value(f):
        return poly_value(f.numer) / poly_value(f.denom) if f else sp.QQ(0)

    def bracket(a, Y):
        Xa = Xk[a]
        return [K.reduce(K.gradient_along(Y[A], Xa, q) - K.gradient_along(Xa[A], Y, q)) for A in range(n)]

    def rank(rows):
        return sp.Matrix([[sp.Rational(int(x.numerator), int(x.denominator)) for x in map(value, r)] for r in rows]).rank()

    gens, levels, words, growth = _grow(m, n, steps, [list(r) for r in Xk], bracket,
                                        lambda kept, cand: any(cand) and rank(list(kept) + [cand]) > len(kept))
    out = tuple(tuple(K.to_expr(_kernel.simplest(K, e)) for e in g) for g in gens)
    return out, levels, words, growth


def flag_of(frame: Frame, m: int | None = None, max_steps: int | None = None) -> Flag:
    """The flag of ``D = span{X_1..X_m}`` (m = ``frame.rank_D`` by default) and its generic growth vector.

    Parameters
    ----------
    frame : Frame
        A frame whose first m vectors span D.
    m : int, optional
        The rank of D; ``frame.rank_D`` if omitted.
    max_steps : int, optional
        Stop after this many steps (default: n − m + 1, enough for the ranks to stop growing).

    Examples
    --------
    The Heisenberg distribution ``dz − (x dy − y dx)/2 = 0``:

    >>> import sympy as sp
    >>> from anholo import Chart, Frame
    >>> x, y, z = sp.symbols("x y z", real=True)
    >>> F = Frame(Chart([x, y, z]), [[1, 0, -y/2], [0, 1, x/2], [0, 0, 1]], rank_D=2)
    >>> flag = flag_of(F)
    >>> flag.growth_vector, flag.bracket_generating
    ((2, 3), True)
    """
    m = frame.rank_D if m is None else m
    if m is None:
        raise DimensionError("give the rank m of D (the frame is not adapted: rank_D is None).")
    n = frame.dim
    if not 0 <= m <= n:
        raise DimensionError(f"the rank of D must lie in 0..{n}, got {m}.")
    steps = n - m + 1 if max_steps is None else max_steps

    X = [tuple(frame.vectors.row(a)) for a in range(m)]
    try:  # exact arithmetic in coordinates, when the brackets stay polynomials in sines and cosines
        return Flag(frame, m, *_grow_in_kernel(frame.chart, X, n, steps))
    except _kernel.Unsupported:
        pass
    # in the frame: [X_α, Y]^k = X_α(Y^k) + R^k_αj Y^j, components tidied while small
    unit = [tuple(sp.S.One if i == a else sp.S.Zero for i in range(n)) for a in range(m)]
    gens, levels, words, growth = _grow(m, n, steps, unit, lambda a, Y: _bracket_with(frame, a, Y))
    Xv = frame.vectors
    coords = tuple(tuple(tidy(sp.Add(*[g[j] * Xv[j, A] for j in range(n) if g[j] != 0 and Xv[j, A] != 0]))
                         for A in range(n)) for g in gens)
    return Flag(frame, m, coords, levels, words, growth)

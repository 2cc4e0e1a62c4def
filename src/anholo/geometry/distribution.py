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

For a large system (Maggi's route) :func:`numerical_flag` grows the same flag from the
coordinate brackets ``[X, Y]^A = X(Y^A) − Y(X^A)`` of the generators ``X_α = ∂_{f_α} + C^P_α ∂_P``,
differentiated along their shared subexpressions (forward mode, Griewank & Walther (2008)), and
decides the ranks numerically at random points (SVD with a relative tolerance; Schwartz (1980),
Zippel (1979)); the :class:`Flag` records how its ranks were decided (docs/controllability.rst).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..parsing import sympified
from ..algebra import determinant, generic_rank, size_exceeds, tidy
from ..algebra import kernel as _kernel
from ..algebra.decision import EXACT, NUMERICAL_POINTS, Decision, DomainError, Sampler, numerical_rank
from ..algebra.engine import engine_cse, se, shared_to_sympy, to_engine, zero
from ..algebra.program import Program
from ..errors import DimensionError
from .frame import Frame
from .lie_program import _Brackets

__all__ = ["Flag", "flag_of", "numerical_flag", "RANK_TOLERANCE"]

#: Components larger than this (tree nodes) are not put through ``tidy`` (kept as derived).
_TIDY_LIMIT = 2000
#: Relative tolerance of the numerical ranks of :func:`numerical_flag` (singular values of the kept
#: brackets, rows scaled to unit length, against the largest).  Measured (brackets by the written-out
#: derivative rules of :mod:`anholo.geometry.lie_program`): rows that are dependent give relative singular values below
#: 1e-15 (n-trailer with 8 trailers, Whipple bicycle) and 3e-14 (11 trailers); the smallest genuine one met
#: is 1.6e-8 (the 13 brackets of the 10-trailer, where the trailers are nearly aligned), 2e-10 at some
#: points for 11 trailers (the rank is the largest over the points).
RANK_TOLERANCE = 1e-10
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
    frame : Frame or None
        The adapted frame (its first ``m`` vectors span D); None for a flag computed from
        coordinate generators (:func:`numerical_flag`).
    m : int
        The rank of D.
    generators : tuple of tuples
        Kept generators in coordinate components (row i: ``Y_i^A``, ``Y_i = Y_i^A ∂/∂q^A``):
        ``generators[:growth_vector[k]]`` span ``D^{k+1}`` at a generic point (the first m are
        ``X_1..X_m``).  For a numerical flag they are symengine expressions over the shared
        definitions of :attr:`program`.
    levels : tuple of int
        ``levels[i]``: the step k of the flag at which generator i entered (1 for D).
    words : tuple of tuples
        ``words[i]``: the bracket that gave generator i, as frame indices (0-based):
        ``(α,)`` is ``X_α``, ``(α, β, γ)`` is ``[X_α, [X_β, X_γ]]``.
    growth_vector : tuple of int
        The ranks of ``D^1, D^2, …`` at a generic point, up to the step where they stop growing.
    decision : Decision
        How the ranks were decided: ``EXACT`` (:func:`flag_of`) or numerically at random points
        with a relative tolerance (:func:`numerical_flag`).
    program : Program or None
        For a numerical flag: the kept generators' components (row-major) as the outputs of a
        straight-line program over their shared definitions, in the coordinates and parameters.
    n : int or None
        dim Q when there is no frame.
    """

    frame: Frame | None
    m: int
    generators: tuple
    levels: tuple
    words: tuple
    growth_vector: tuple
    decision: Decision = EXACT
    program: Program | None = None
    n: int | None = None

    @property
    def dimension(self) -> int:
        """n = dim Q."""
        return self.frame.dim if self.frame is not None else self.n

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
        """The kept generators as rows, in coordinates (for a numerical flag: sympy expressions sharing
        the subexpressions of :attr:`program`, symbols without assumptions)."""
        if self.program is not None:
            p, n = self.program.pruned(), self.dimension
            out = shared_to_sympy(p.pairs, p.outputs)
            return sp.ImmutableMatrix(len(out) // n, n, out)
        return sp.ImmutableMatrix([list(g) for g in self.generators])

    def regularity_determinant(self) -> sp.Expr | None:
        """For a bracket-generating D: ``det`` of the kept generators in coordinates (factored when small).

        At a point where it does not vanish (and the components are defined), the growth vector
        is the generic one; the singular points lie in its zero set.  None if D is not bracket
        generating, if the generators are too large for the determinant to be cheap, or for a
        numerical flag (use :meth:`ranks_at` at the points of interest).
        """
        if not self.bracket_generating or self.program is not None:
            return None  # a numerical flag's generators are too large for a symbolic determinant
        B = self.basis_matrix()
        if any(size_exceeds(e, _DET_LIMIT // self.dimension) for e in B):
            return None  # too large to be of use (and to compute cheaply)
        det = determinant(B)
        if not size_exceeds(det, _DET_LIMIT):
            det = sp.factor(tidy(det))
        return det

    def ranks_at(self, point, tolerance: float | None = None) -> tuple:
        """The ranks of the kept generators of ``D^1, D^2, …`` at one point (``point``: names or symbols of the
        coordinates and parameters → numbers), by SVD with relative ``tolerance`` (:data:`RANK_TOLERANCE`).

        Where they equal :attr:`growth_vector` the point is regular (the growth vector there is the
        generic one); lower ranks mark a point where the kept brackets are dependent (a singular point,
        or one where other brackets take their place)."""
        tolerance = RANK_TOLERANCE if tolerance is None else tolerance
        n, values = self.dimension, {str(k): float(v) for k, v in dict(point).items()}
        if self.program is not None:
            missing = sorted(str(a) for a in self.program.args if str(a) not in values)
            if missing:
                raise DimensionError(f"give values for {', '.join(missing)} (coordinates and parameters).")
            flat = np.array(self.program.evaluate(values))
        else:
            symbols = set().union(*(sympified(c).free_symbols for g in self.generators for c in g))
            subs = {s: values[s.name] for s in symbols if s.name in values}
            flat = np.array([complex(sympified(c).xreplace(subs).evalf()) for g in self.generators for c in g])
        if np.any(np.abs(flat.imag) > 1e-12 * (1 + np.abs(flat.real))) or not np.all(np.isfinite(flat)):
            raise DimensionError("the generators are not finite real numbers at this point; choose a point in "
                                 "their domain and give every coordinate and parameter.")
        rows = flat.real.reshape(len(self.generators), n)
        return tuple(_independent_rows(rows[:k], tolerance) for k in self.growth_vector)

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
                "generators": [self.word_text(i) for i in range(len(self.generators))], **self.decision.to_dict()}


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
                if levels[g] == 1 and a <= g:  # [X_a, X_a] = 0, and [X_a, X_b] was tried as [X_b, X_a]
                    continue
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


# --- the flag of a large distribution: brackets over shared subexpressions, ranks at random points ----


def _independent_rows(rows: np.ndarray, tolerance: float) -> int:
    """The numerical rank of ``rows`` (one point) after scaling each row to unit length; a row shorter than
    ``tolerance`` times the longest counts as zero (rounding noise is not scaled up into a direction)."""
    norms = np.linalg.norm(rows, axis=1)
    keep = norms > tolerance * norms.max() if len(norms) else norms > 0
    return numerical_rank(rows[keep] / norms[keep, None], tolerance) if keep.any() else 0


def numerical_flag(generators, coordinates=None, max_steps: int | None = None, points: int = NUMERICAL_POINTS,
                   tolerance: float = RANK_TOLERANCE, values=None, definitions=(), seed: int = 0) -> Flag:
    """The flag of ``D = span{X_1..X_m}`` and its generic growth vector, ranks decided at random points.

    The large-system counterpart of :func:`flag_of` (Maggi's route, :mod:`anholo.dynamics.maggi`).
    The generators are coordinate vector fields ``X_α = X_α^A ∂/∂q^A`` (for a Maggi system
    ``X_α = ∂_{f_α} + C^P_α ∂_P``, the first m rows of its adapted frame); the flag
    ``D^1 = D, D^{k+1} = D^k + [D, D^k]`` is grown as in :func:`flag_of`: the brackets
    ``[X_α, Y]^A = X_α(Y^A) − Y(X_α^A)`` of the generators with the newest kept generators Y,
    computed symbolically over shared subexpressions (forward mode along the definitions, nothing
    simplified, no tree ever expanded), a bracket kept when it raises the rank.

    The ranks are decided numerically (Schwartz (1980), Zippel (1979)): every generator is evaluated at
    ``points`` random points of the real domain (:class:`~anholo.algebra.decision.Sampler`: the
    parameters at ``values`` when given, random otherwise; coordinates uniform in (0.3, 0.9)); at each
    point the rows, scaled to unit length, have as rank the number of singular values above
    ``tolerance`` times the largest (:func:`~anholo.algebra.decision.numerical_rank`), and the generic
    rank is the maximum over the points.  The flag records ``Decision.numerical(points, tolerance)``
    (the points counted are those where every kept bracket is finite).

    Parameters
    ----------
    generators : MaggiSystem or sequence of m rows of n expressions
        A Maggi system (its ``frame_vectors()[:m]`` in its coordinates, its ``values`` as the
        parameters' values), or the coordinate components ``X_α^A`` (sympy or symengine).
    coordinates : sequence of symbols
        The coordinates ``q^A`` (omit for a Maggi system).  Every other symbol is a parameter.
    max_steps : int, optional
        Stop after this many steps (default: n − m + 1).
    points, tolerance : int, float
        Random points and relative tolerance of the ranks.
    values : mapping, optional
        Parameter values (names or symbols to numbers); a Maggi system's ``values`` by default.
    definitions : sequence of (Symbol, expression), optional
        Shared definitions the generators are written with (a cse list, in order).
    seed : int
        Seed of the random points.

    Examples
    --------
    The nonholonomic particle ``ż = y ẋ``, ``D = span{∂_x + y ∂_z, ∂_y}``:

    >>> import sympy as sp
    >>> x, y, z = sp.symbols("x y z")
    >>> flag = numerical_flag([[1, 0, y], [0, 1, 0]], [x, y, z])
    >>> flag.growth_vector, flag.bracket_generating, flag.decision.to_dict()["decided"]
    ((2, 3), True, 'numerical')
    """
    if hasattr(generators, "frame_vectors"):  # a MaggiSystem (geometry does not import dynamics)
        system = generators
        m = system.m
        rows = system.frame_vectors()[:m]
        coordinates = system._cache["q"]
        if values is None:
            values = system.values
    else:
        if coordinates is None:
            raise DimensionError("give the coordinates q^A of the generators' components "
                                 "(numerical_flag(rows, coordinates)).")
        rows = [[to_engine(e) for e in row] for row in generators]
    q = [se.Symbol(str(s)) for s in coordinates]
    n, m = len(q), len(rows)
    if len(set(map(str, q))) != n:
        raise DimensionError("the coordinates must have distinct names.")
    if any(len(r) != n for r in rows):
        raise DimensionError(f"each generator needs {n} components (one per coordinate), "
                             f"got {sorted({len(r) for r in rows})}.")
    if not 0 < m <= n:
        raise DimensionError(f"need between 1 and {n} generators of D, got {m}.")
    if points < 1 or not tolerance > 0:
        raise DimensionError(f"need at least one point and a positive tolerance, got {points} and {tolerance}.")
    steps = n - m + 1 if max_steps is None else max_steps

    definitions = [(se.Symbol(str(a)), to_engine(b)) for a, b in definitions]
    flat = [e for row in rows for e in row]
    pairs, reduced = engine_cse(flat)
    if definitions:  # the given definitions stay first; cse may not reuse their names
        clash = {str(a) for a, _ in definitions}
        if clash & {str(a) for a, _ in pairs}:
            raise DimensionError("the shared definitions' names clash with generated ones (x0, x1, …); rename them.")
        pairs = definitions + pairs
    defined = {a for a, _ in pairs}
    syms = {s for e in reduced for s in e.free_symbols} | {s for _, e in pairs for s in e.free_symbols}
    params = sorted(syms - defined - set(q), key=str)
    args = tuple(q) + tuple(params)
    vals = {str(k): float(v) for k, v in (values or {}).items()}
    sampler = Sampler(Program(args, tuple(pairs), tuple(reduced) or (zero,)), vals, seed=seed)
    pts = [pt for pt, _ in sampler.samples(points)]
    lie = _Brackets(q, args, pairs, [reduced[a * n:(a + 1) * n] for a in range(m)], pts)
    gens = [lie.fields[a] for a in range(m)]
    values_at = [lie.at_points(g) for g in gens]  # (points, n) each

    def rank_of(arrays) -> int:
        M = np.stack(arrays, axis=1)  # (points, rows, n)
        good = np.all(np.isfinite(M), axis=(1, 2))
        if not good.any():
            raise DomainError("the brackets of D are not finite at any of the random points; give parameter "
                              "values ([values]) in the real domain of the constraints.")
        return max(_independent_rows(M[p], tolerance) for p in range(len(M)) if good[p])

    if rank_of(values_at) < m:
        raise DimensionError(f"the {m} generators of D are linearly dependent at random points; give independent ones.")
    field_index = {id(g): a for a, g in enumerate(gens)}  # kept generator -> its field in ``lie``

    def bracket(a, Y):
        return lie.bracket(a, field_index[id(Y)])

    def independent(kept, cand):
        if all(c is None for c in cand):  # every component an exact 0
            return False
        vals_c = lie.at_points(cand)
        if rank_of(values_at + [vals_c]) <= len(kept):
            return False
        values_at.append(vals_c)  # _grow keeps ``cand`` now
        field_index[id(cand)] = lie.add_field(cand)
        return True

    kept, levels, words, growth = _grow(m, n, steps, gens, bracket, independent)
    program, outputs = lie.outputs([c for g in kept for c in g])
    gens = [tuple(outputs[i * n:(i + 1) * n]) for i in range(len(kept))]
    used = int(np.all(np.isfinite(np.stack(values_at, axis=1)), axis=(1, 2)).sum())  # points where all are finite
    return Flag(None, m, tuple(gens), tuple(levels), tuple(words), tuple(growth),
                Decision.numerical(used, tolerance), program, n)

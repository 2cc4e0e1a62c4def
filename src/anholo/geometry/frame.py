"""Anholonomic frames on Q (docs/theory.rst, *Frames on Q*).

A frame is n pointwise independent vector fields ``X_i = X_i^A ∂/∂q^A``.  Its
dual coframe ``θ^i = θ^i_A dq^A`` satisfies ``θ^i_A X_j^A = δ^i_j``.  The object
of anholonomity (structure functions) is defined by ``[X_i, X_j] = R^k_ij X_k``::

    R^k_ij = θ^k_A ( X_i(X_j^A) − X_j(X_i^A) ),

skew in (i, j); a coordinate frame has R = 0, and ``dθ^k = −½ R^k_ij θ^i ∧ θ^j``.

An *adapted* frame for a distribution D of rank m has its first m vectors
spanning D (``Frame.rank_D = m``).  Frobenius: D is integrable iff
``R^a_αβ = 0`` for α, β < m ≤ a.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import kernel as _kernel
from ..algebra import determinant, free_symbols, generic_rank, invert, numerically_zero, random_point, tidy
from ..algebra.differentiation import diff_dag
from ..algebra.printing import combination_latex, latex
from ..errors import ArgumentError, DependentConstraintsError, DimensionError, NonlinearConstraintError, SingularFrameError, printable
from ..parsing import as_argument, as_expression, as_sequence, chart_names
from .chart import Chart
from .vector_field import VectorField

__all__ = ["Frame"]


def _matrix_rows(chart: Chart, rows, what: str) -> sp.ImmutableMatrix:
    n = chart.dim
    if isinstance(rows, sp.MatrixBase):
        rows = rows.tolist()
    rows = [r.components if isinstance(r, VectorField) else r
            for r in as_sequence(rows, what, what="rows (one list of components per field)")]
    rows = [as_sequence(r, f"{what}[{i}]", what="components") if not isinstance(r, tuple) else r
            for i, r in enumerate(rows)]
    if len(rows) != n or any(len(r) != n for r in rows):
        shape = f"{len(rows)} rows of lengths {[len(r) for r in rows]}"
        raise DimensionError(
            f"{what}: a frame on a {n}-dimensional chart needs {n} rows of {n} components "
            f"(row i = components of the i-th field in the coordinate basis); got {shape}."
        )
    names = chart.coordinates + chart.velocities + chart.parameters
    out = [[as_expression(e, names, where=f"{what}[{i}][{A}]") for A, e in enumerate(r)] for i, r in enumerate(rows)]
    velocities = set(chart.velocities)
    for i, r in enumerate(out):
        for A, e in enumerate(r):
            if e.free_symbols & velocities:
                raise DimensionError(f"{what}[{i}][{A}]: {e} depends on the velocities "
                                     f"{sorted(s.name for s in e.free_symbols & velocities)}; a frame on Q depends "
                                     "on the coordinates (and parameters) only.")
    return sp.ImmutableMatrix(out)


def _check_nonsingular(chart: Chart, mat: sp.Matrix, what: str) -> sp.Expr:
    det = determinant(mat)
    symbols = free_symbols([det])
    rng = random.Random(7)
    points = [random_point(symbols, rng) for _ in range(3)]
    if det == 0 or numerically_zero(det, points):
        raise SingularFrameError(
            f"{what} is singular: its determinant vanishes identically, so its {chart.dim} fields are "
            "linearly dependent. Replace a dependent row so the rows are independent."
        )
    return det


_MAX_DEPENDENT_CANDIDATES = 40


def _dependent_indices(kappa: sp.Matrix, chart: Chart) -> list:
    """Base indices P to solve the constraints ``κ^a_j w^j = 0`` for (adapted frames).

    Preference: a block ``κ^a_P`` whose determinant does not depend on the
    coordinates (then solving introduces no singularity: ``ż − y ẋ`` is solved for
    ``ż``, the rolling constraints ``ẋ = R cos θ φ̇, ẏ = R sin θ φ̇`` for ``ẋ, ẏ``),
    the last such indices first; failing that (or when there are too many
    candidates to try), the last indices whose block is invertible.
    """
    k, n = kappa.shape
    coords = set(chart.coordinates)
    fallback = []
    for c in reversed(range(n)):  # the last invertible choice, greedily
        trial = fallback + [c]
        if generic_rank(kappa[:, trial]) == len(trial):
            fallback = trial
        if len(fallback) == k:
            break
    fallback = sorted(fallback)
    if k > 3 or sp.binomial(n, k) > _MAX_DEPENDENT_CANDIDATES:
        return fallback
    for combo in itertools.combinations(reversed(range(n)), k):
        cols = sorted(combo)
        block = kappa[:, cols]
        if block.free_symbols & coords:
            det = tidy(determinant(block))
            if det == 0 or det.free_symbols & coords:
                continue
        if generic_rank(block) == k:
            return cols
    return fallback


def _clear_position_denominators(row: list, chart: Chart) -> tuple:
    """Multiply a D vector by the denominators of its components that depend on q.

    ``∂x + tan θ ∂y`` becomes ``cos θ ∂x + sin θ ∂y``: same span, no singularity
    where cos θ = 0 (the frame's D part stays regular where the constraints are).
    Returns ``(row, rescaled)``.
    """
    coords = set(chart.coordinates)
    factor = sp.S.One
    for e in row:
        if e.is_number or not (e.free_symbols & coords):
            continue
        den = sp.fraction(sp.cancel(e))[1]
        den_q = sp.Mul(*[f for f in sp.Mul.make_args(den) if f.free_symbols & coords])
        if den_q != 1:
            factor = sp.lcm(factor, den_q)
    if factor == 1:
        return row, False
    return [tidy(e * factor) for e in row], True


def _dependent_columns(chart: Chart, dependent: Sequence, n: int, k: int) -> list:
    cols = [c if isinstance(c, int) else chart.index(c) for c in dependent]
    if any(not 0 <= c < n for c in cols):
        raise DimensionError(
            f"dependent={list(dependent)}: give coordinates as symbols, names or "
            f"0-based indices in 0..{n - 1}."
        )
    return cols


def _adapted_in_kernel(cls, chart: Chart, omega: sp.Matrix, dependent, base: "Frame",
                       keep_adapted_base: bool = False) -> "Frame":
    """:meth:`Frame.adapted_to_constraints` over the field of rational functions (:mod:`anholo.algebra.kernel`):
    the same choices (dependent indices, normalised constraint forms, cleared denominators), with
    exact ranks and determinants.  Raises :class:`anholo.algebra.kernel.Unsupported` outside its class."""
    n, k = chart.dim, omega.rows
    coordinate_base = base.is_coordinate_frame
    K = _kernel.DiffField(list(omega) + list(base.vectors) + list(base.coframe), chart.coordinates)
    zero, one = K.field.zero, K.field.one
    Y, eta = _kernel.matrix(K, base.vectors), _kernel.matrix(K, base.coframe)
    kappa = _kernel.matrix(K, omega)
    if not coordinate_base:
        kappa = _kernel.matmul(K, kappa, _kernel.transpose(Y))
    if keep_adapted_base and dependent is None and all(K.is_zero(kappa[a][j]) for a in range(k) for j in range(n - k)):
        return base if base.rank_D == n - k else base.with_rank_D(n - k)  # its first n − k vectors span D
    rank = _kernel.rank(K, kappa)
    if rank < k:
        raise DependentConstraintsError(
            f"the {k} constraint forms are linearly dependent (generic rank {rank}); remove the redundant constraints."
        )

    def block(cols):
        return [[kappa[a][c] for c in cols] for a in range(k)]

    what = "the velocities of" if coordinate_base else "the base quasi-velocities of indices"
    if dependent is not None:
        cols = _dependent_columns(chart, dependent, n, k)
        if len(cols) != k or _kernel.rank(K, block(cols)) < k:
            shown = [chart.coordinates[c] for c in cols] if coordinate_base else cols
            raise SingularFrameError(
                f"cannot solve the constraints for {what} {shown}; "
                "choose dependent ones whose block of the constraint matrix is invertible."
            )
    else:  # as _dependent_indices: a block with a coordinate-free determinant, the last ones first
        fallback = []
        for c in reversed(range(n)):
            trial = fallback + [c]
            if _kernel.rank(K, block(trial)) == len(trial):
                fallback = trial
            if len(fallback) == k:
                break
        cols = sorted(fallback)
        if k <= 3 and sp.binomial(n, k) <= _MAX_DEPENDENT_CANDIDATES:
            for combo in itertools.combinations(reversed(range(n)), k):
                trial = sorted(combo)
                det = _kernel.determinant(K, block(trial))
                if not K.is_zero(det) and not K.depends_on_variables(det):
                    cols = trial
                    break
    free = [c for c in range(n) if c not in cols]
    block_inv = _kernel.inverse(K, block(cols))
    normalised = _kernel.matmul(K, block_inv, kappa)  # θ^a rows in the base coframe
    P = []
    rescaled = False
    for j, f in enumerate(free):
        row = [zero] * n
        row[f] = one
        for a, c in enumerate(cols):
            row[c] = -normalised[a][f]
        if dependent is None:  # keep the D part regular where D is: clear q-dependent denominators
            factor = K.ring.one
            for e in row:
                if e.denom != 1:
                    factor = factor.lcm(_kernel.variable_part(K, e.denom))
            if factor != 1:
                factor = K.field(factor)
                row = [K.reduce(e * factor) for e in row]
                rescaled = True
        P.append(row)
    for c in cols:
        row = [zero] * n
        row[c] = one
        P.append(row)
    Q = None
    if not rescaled:
        Q = [[one if c == f else zero for c in range(n)] for f in free] + normalised
    if not coordinate_base:
        P = _kernel.matmul(K, P, Y)
        Q = None if Q is None else _kernel.matmul(K, Q, eta)
    if Q is None:
        Q = _kernel.inverse(K, _kernel.transpose(P))
    det = _kernel.determinant(K, P)
    return cls._trusted(chart, _kernel.to_matrix(K, P), _kernel.to_matrix(K, Q), len(free),
                        K.to_expr(_kernel.simplest(K, det)))


@dataclass(frozen=True, eq=False)
class Frame:
    """A frame ``{X_i}`` on Q with its coframe and structure functions.

    Parameters
    ----------
    chart : Chart
        Coordinates on Q.
    vectors : sequence of VectorField or of component rows
        Row ``i`` holds ``X_i^A``, the components of ``X_i`` in ``∂/∂q^A``.
    rank_D : int, optional
        If given, the first ``rank_D`` vectors span a distribution D (the frame is
        adapted to D).
    coframe : matrix, optional
        The dual coframe (row i = θ^i_A) if already known; it is checked, not trusted.

    Raises
    ------
    DimensionError
        If the rows do not form an n×n array.
    SingularFrameError
        If the vectors are linearly dependent (determinant identically zero).

    Examples
    --------
    Polar frame on the plane, ``X1 = ∂r``, ``X2 = (1/r) ∂θ``:

    >>> import sympy as sp
    >>> r, th = sp.symbols("r theta", positive=True)
    >>> F = Frame(Chart([r, th]), [[1, 0], [0, 1/r]])
    >>> F.structure_function(1, 0, 1)      # [X1, X2] = -(1/r) X2
    -1/r
    """

    chart: Chart
    vectors: sp.ImmutableMatrix
    rank_D: int | None = None
    coframe: sp.ImmutableMatrix | None = None

    def __post_init__(self):
        if not isinstance(self.chart, Chart):
            object.__setattr__(self, "chart", Chart(self.chart))
        mat = _matrix_rows(self.chart, self.vectors, "frame")
        object.__setattr__(self, "vectors", mat)
        if self.rank_D is not None and (isinstance(self.rank_D, bool) or not isinstance(self.rank_D, int)):
            raise ArgumentError(f"rank_D must be an integer in 0..{self.chart.dim} (or None), got "
                                f"{type(self.rank_D).__name__} {printable(repr(self.rank_D))[:40]}.")
        if self.rank_D is not None and not 0 <= self.rank_D <= self.chart.dim:
            raise DimensionError(f"rank_D must lie in 0..{self.chart.dim}, got {self.rank_D}.")
        if self._init_in_kernel(mat):
            return
        det = _check_nonsingular(self.chart, mat, "frame")
        object.__setattr__(self, "_det", det)
        if self.coframe is None:
            cof = invert(mat.T, det)
        else:
            cof = _matrix_rows(self.chart, self.coframe.tolist() if isinstance(self.coframe, sp.MatrixBase)
                               else list(self.coframe), "coframe")
            check = cof * mat.T - sp.eye(self.chart.dim)
            pts = [random_point(free_symbols(check), random.Random(3)) for _ in range(2)]
            if not all(numerically_zero(e, pts) for e in check):
                raise SingularFrameError("the given coframe is not dual to the frame (θ^i(X_j) ≠ δ^i_j).")
        object.__setattr__(self, "coframe", cof)

    def _init_in_kernel(self, mat: sp.ImmutableMatrix) -> bool:
        """Determinant, nonsingularity and coframe (inverse, or the given one checked) over the
        field of rational functions (:mod:`anholo.algebra.kernel`); False if outside its class."""
        try:
            cof_in = self.coframe
            if cof_in is not None:
                cof_in = _matrix_rows(self.chart, cof_in.tolist() if isinstance(cof_in, sp.MatrixBase)
                                      else list(cof_in), "coframe")
            K = _kernel.DiffField(list(mat) + (list(cof_in) if cof_in is not None else []))
            X = _kernel.matrix(K, mat)
            det = _kernel.determinant(K, X)
            if K.is_zero(det):
                raise SingularFrameError(
                    f"frame is singular: its determinant vanishes identically, so its {self.chart.dim} fields "
                    "are linearly dependent. Replace a dependent row so the rows are independent."
                )
            if cof_in is None:
                cof = _kernel.to_matrix(K, _kernel.inverse(K, _kernel.transpose(X)))
            else:
                check = _kernel.matmul(K, _kernel.matrix(K, cof_in), _kernel.transpose(X))
                n = self.chart.dim
                if any(not K.is_zero(check[i][j] - (1 if i == j else 0)) for i in range(n) for j in range(n)):
                    raise SingularFrameError("the given coframe is not dual to the frame (θ^i(X_j) ≠ δ^i_j).")
                cof = cof_in
        except _kernel.Unsupported:
            return False
        object.__setattr__(self, "_det", K.to_expr(_kernel.simplest(K, det)))
        object.__setattr__(self, "coframe", cof)
        return True

    @classmethod
    def _trusted(cls, chart: Chart, vectors: sp.ImmutableMatrix, coframe: sp.ImmutableMatrix, rank_D, det) -> "Frame":
        """A frame whose coframe and determinant were computed exactly by the caller (no checks)."""
        obj = object.__new__(cls)
        for name, value in (("chart", chart), ("vectors", vectors), ("rank_D", rank_D), ("coframe", coframe),
                            ("_det", det)):
            object.__setattr__(obj, name, value)
        return obj

    # --- constructors -------------------------------------------------------------
    @classmethod
    def coordinate(cls, chart: Chart | Sequence) -> "Frame":
        """The holonomic frame ``X_i = ∂/∂q^i`` (R = 0)."""
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        return cls(chart, sp.eye(chart.dim), coframe=sp.eye(chart.dim))

    @classmethod
    def from_coframe(cls, chart: Chart | Sequence, rows, rank_D: int | None = None) -> "Frame":
        """The frame dual to the coframe whose row i holds ``θ^i_A`` (``θ^i = θ^i_A dq^A``).

        Example: body angular velocities of a rigid body as one-forms in the Euler
        angles give the frame of left-invariant vector fields.
        """
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        cof = _matrix_rows(chart, rows, "coframe")
        det = _check_nonsingular(chart, cof, "coframe")
        vec = invert(cof, det).T  # vectors: rows X_i with θ X^T = I
        return cls(chart, vec, rank_D=rank_D, coframe=cof)

    @classmethod
    def adapted_to_constraints(
        cls,
        chart: Chart | Sequence,
        forms,
        dependent: Sequence | None = None,
        base: "Frame | None" = None,
        keep_adapted_base: bool = False,
    ) -> "Frame":
        """A frame adapted to ``D = {u : ω^a(u) = 0}`` for constraint one-forms ``ω^a``.

        ``forms`` is a k×n array (row a = ``ω^a_A``), of rank k.  The frame is built
        from a *base* frame ``{Y_j}`` (default: the coordinate frame), in whose
        quasi-velocities ``w^j`` the constraints read ``κ^a_j w^j = 0`` with
        ``κ^a_j = ω^a(Y_j)``.  k *dependent* base indices P are picked (the last
        possible ones, or ``dependent`` if given) such that the k×k block ``κ^a_P``
        is invertible; then, with ``w^P = c^P_α w^α`` solving the constraints,

            X_α = Y_α + c^P_α Y_P   (α free, spanning D),   X_a = Y_{P_a},

        and the coframe is ``θ^α = η^α``, ``θ^a = (κ_P)^{-1} κ_j η^j`` (the constraint
        forms normalised; ``η`` is the base coframe).  Example, coordinate base:
        ``dz − y dx`` gives ``X1 = ∂x + y ∂z, X2 = ∂y, X3 = ∂z``.

        When P is chosen automatically, indices whose block ``κ^a_P`` has a
        determinant free of the coordinates are preferred (no singularity is
        introduced by solving), and a ``X_α`` whose components still have
        q-dependent denominators is multiplied by them: the knife edge
        ``sin θ ẋ − cos θ ẏ = 0`` gives ``X1 = cos θ ∂x + sin θ ∂y`` rather than
        ``∂x + tan θ ∂y`` (then ``θ^α`` is no longer ``η^α``; the coframe is the
        inverse).  An explicit ``dependent`` keeps the form above exactly.

        With ``keep_adapted_base=True`` a base whose first m vectors already span D is
        returned as it is (with ``rank_D = m``); that option needs the exact arithmetic of
        :mod:`anholo.algebra.kernel` and raises its ``Unsupported`` outside it.

        Raises
        ------
        DependentConstraintsError
            If the forms are linearly dependent.
        SingularFrameError
            If the constraints cannot be solved for the chosen ``dependent`` velocities.
        """
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        n = chart.dim
        forms = forms.tolist() if isinstance(forms, sp.MatrixBase) else [
            list(as_sequence(row, f"forms[{a}]", what="components"))
            for a, row in enumerate(as_sequence(forms, "forms", what="rows of components"))]
        if any(len(row) != n for row in forms):
            raise DimensionError(
                f"constraint forms need {n} components each (one per coordinate), got rows of lengths "
                f"{[len(row) for row in forms]}."
            )
        names = chart_names(chart)
        omega = sp.Matrix(len(forms), n, [as_expression(e, names, where=f"forms[{a}][{A}]")
                                          for a, row in enumerate(forms) for A, e in enumerate(row)])
        k = omega.rows
        base = cls.coordinate(chart) if base is None else base
        if base.chart != chart:
            raise DimensionError("the base frame lives on another chart; pass a frame on the same coordinates.")
        if k == 0:
            return base.with_rank_D(n)
        if omega.free_symbols & set(chart.velocities):
            raise NonlinearConstraintError(
                "constraint one-forms must not depend on velocities; a constraint that is not "
                "linear in the velocities cannot define a distribution."
            )
        try:
            return _adapted_in_kernel(cls, chart, omega, dependent, base, keep_adapted_base)
        except _kernel.Unsupported:
            if keep_adapted_base:
                raise
        kappa = omega if base.is_coordinate_frame else (omega * base.vectors.T).applyfunc(tidy)
        if generic_rank(kappa) < k:
            raise DependentConstraintsError(
                f"the {k} constraint forms are linearly dependent (generic rank "
                f"{generic_rank(kappa)}); remove the redundant constraints."
            )
        what = "the velocities of" if base.is_coordinate_frame else "the base quasi-velocities of indices"
        if dependent is not None:
            cols = [c if isinstance(c, int) else chart.index(c) for c in dependent]
            if any(not 0 <= c < n for c in cols):
                raise DimensionError(
                    f"dependent={list(dependent)}: give coordinates as symbols, names or "
                    f"0-based indices in 0..{n - 1}."
                )
            if len(cols) != k or generic_rank(kappa[:, cols]) < k:
                shown = [chart.coordinates[c] for c in cols] if base.is_coordinate_frame else cols
                raise SingularFrameError(
                    f"cannot solve the constraints for {what} {shown}; "
                    "choose dependent ones whose block of the constraint matrix is invertible."
                )
        else:
            cols = _dependent_indices(kappa, chart)
        free = [c for c in range(n) if c not in cols]
        block_inv = invert(kappa[:, cols])
        normalised = (block_inv * kappa).applyfunc(tidy)  # θ^a rows in the base coframe
        coeff = -normalised[:, free]  # w^P = coeff * w^free
        P = []  # row i: X_i in the base frame
        rescaled = False
        for j, f in enumerate(free):
            row = [sp.S.Zero] * n
            row[f] = sp.S.One
            for a, p in enumerate(cols):
                row[p] = coeff[a, j]
            if dependent is None:  # automatic choice: keep the D part regular where D is
                row, scaled = _clear_position_denominators(row, chart)
                rescaled = rescaled or scaled
            P.append(row)
        for p in cols:
            row = [sp.S.Zero] * n
            row[p] = sp.S.One
            P.append(row)
        P = sp.Matrix(P)
        if rescaled:
            Q = None  # the coframe of the rescaled frame: by inversion in the constructor
        else:
            Q = []  # row i: θ^i in the base coframe
            for f in free:
                row = [sp.S.Zero] * n
                row[f] = sp.S.One
                Q.append(row)
            Q.extend(normalised.tolist())
            Q = sp.Matrix(Q)
        if not base.is_coordinate_frame:
            P = (P * base.vectors).applyfunc(tidy)
            Q = None if Q is None else (Q * base.coframe).applyfunc(tidy)
        return cls(chart, sp.ImmutableMatrix(P), rank_D=len(free),
                   coframe=None if Q is None else sp.ImmutableMatrix(Q))

    @property
    def is_coordinate_frame(self) -> bool:
        """True if the vectors are the coordinate fields ``∂/∂q^A`` in order."""
        return self.vectors == sp.eye(self.dim)

    def with_rank_D(self, m: int) -> "Frame":
        """The same frame, declared adapted to D = span of its first m vectors."""
        return Frame(self.chart, self.vectors, rank_D=m, coframe=self.coframe)

    # --- basic data ------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self.chart.dim

    @property
    def determinant(self) -> sp.Expr:
        """``det(X_i^A)``; the frame is singular where it vanishes."""
        return self._det

    def vector(self, i: int) -> VectorField:
        """The vector field ``X_i`` (0-based index)."""
        return VectorField(self.chart, tuple(self.vectors.row(self._idx(i))))

    def covector(self, i: int) -> tuple:
        """Components ``θ^i_A`` of the i-th coframe one-form (0-based)."""
        return tuple(self.coframe.row(self._idx(i)))

    def _idx(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, sp.Integer)):
            raise ArgumentError(f"a frame index must be an integer in 0..{self.dim - 1}, got {type(i).__name__} "
                                f"{printable(repr(i))[:40]}.")
        i = int(i)
        if not 0 <= i < self.dim:
            raise DimensionError(f"frame index {i} out of range 0..{self.dim - 1} (indices are 0-based).")
        return i

    def apply(self, i: int, f) -> sp.Expr:
        """``X_i(f)`` for a function f (other symbols, e.g. quasi-velocities, held fixed)."""
        f = as_argument(f, lambda: chart_names(self.chart), where="f")
        row = self.vectors.row(self._idx(i))
        return sp.Add(*[c * diff_dag(f, q) for c, q in zip(row, self.chart.coordinates) if c != 0])

    def components_of(self, Y: VectorField) -> tuple:
        """Frame components ``Y^i = θ^i_A Y^A`` of a vector field."""
        if Y.chart != self.chart:
            raise DimensionError("the vector field lives on another chart.")
        comps = self.coframe * sp.Matrix(Y.components)
        return tuple(sp.cancel(c) for c in comps)

    def field(self, components: Sequence) -> VectorField:
        """The vector field ``Y^i X_i`` with the given frame components."""
        if len(components) != self.dim:
            raise DimensionError(f"need {self.dim} frame components, got {len(components)}.")
        comps = self.vectors.T * sp.Matrix([sympified(c) for c in components])
        return VectorField(self.chart, tuple(comps))

    # --- structure functions -------------------------------------------------------
    @cached_property
    def structure(self) -> tuple:
        """Nested tuple ``R[k][i][j] = R^k_ij`` with ``[X_i, X_j] = R^k_ij X_k`` (0-based)."""
        n = self.dim
        try:
            return self._structure_in_kernel()
        except _kernel.Unsupported:
            pass
        R = [[[sp.S.Zero] * n for _ in range(n)] for _ in range(n)]
        # zero test by evaluation (package policy): tidy does not catch every identity
        # (e.g. cosh² − sinh² = 1), and R = 0 decides holonomy and integrability.
        rng = random.Random(5)
        pts = [random_point(free_symbols(list(self.vectors) + list(self.coframe)), rng) for _ in range(3)]
        for i in range(n):
            for j in range(i + 1, n):
                br = [self.apply(i, self.vectors[j, A]) - self.apply(j, self.vectors[i, A]) for A in range(n)]
                if all(b == 0 for b in br):
                    continue
                for k in range(n):
                    val = tidy(sp.Add(*[self.coframe[k, A] * br[A] for A in range(n) if br[A] != 0]))
                    if val != 0 and numerically_zero(val, pts):
                        val = sp.S.Zero
                    R[k][i][j] = val
                    R[k][j][i] = -val
        return tuple(tuple(tuple(row) for row in mat) for mat in R)

    def _structure_in_kernel(self) -> tuple:
        """R^k_ij = θ^k_A (X_i(X_j^A) − X_j(X_i^A)) over the differential field of :mod:`anholo.algebra.kernel`."""
        n, q = self.dim, self.chart.coordinates
        K = _kernel.DiffField(list(self.vectors) + list(self.coframe), q)
        X, th = _kernel.matrix(K, self.vectors), _kernel.matrix(K, self.coframe)
        R = [[[sp.S.Zero] * n for _ in range(n)] for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                br = [K.gradient_along(X[j][A], X[i], q) - K.gradient_along(X[i][A], X[j], q) for A in range(n)]
                if not any(br):
                    continue
                for k in range(n):
                    val = K.reduce(sum((th[k][A] * br[A] for A in range(n) if br[A]), K.field.zero))
                    if K.is_zero(val):
                        continue
                    e = K.to_expr(_kernel.simplest(K, val))
                    R[k][i][j], R[k][j][i] = e, -e
        return tuple(tuple(tuple(row) for row in mat) for mat in R)

    def structure_function(self, k: int, i: int, j: int) -> sp.Expr:
        """``R^k_ij`` (0-based indices)."""
        return self.structure[self._idx(k)][self._idx(i)][self._idx(j)]

    def bracket(self, i: int, j: int) -> tuple:
        """Frame components of ``[X_i, X_j]``, i.e. ``(R^0_ij, …, R^{n-1}_ij)``."""
        return tuple(self.structure[k][self._idx(i)][self._idx(j)] for k in range(self.dim))

    def nonzero_structure(self) -> dict:
        """``{(k, i, j): R^k_ij}`` for i < j and R nonzero (0-based)."""
        n = self.dim
        return {
            (k, i, j): self.structure[k][i][j]
            for k in range(n)
            for i in range(n)
            for j in range(i + 1, n)
            if self.structure[k][i][j] != 0
        }

    @property
    def is_holonomic(self) -> bool:
        """True if all structure functions vanish (a coordinate-like frame)."""
        return not self.nonzero_structure()

    def is_D_integrable(self) -> bool:
        """Frobenius: D = span{X_α} is integrable iff ``R^a_αβ = 0`` (needs ``rank_D``)."""
        if self.rank_D is None:
            raise DimensionError("this frame is not adapted to a distribution (rank_D is None).")
        m = self.rank_D
        return all(self.structure[a][al][be] == 0 for a in range(m, self.dim) for al in range(m) for be in range(m))

    # --- change of frame ------------------------------------------------------------
    def change(self, P, rank_D: int | None = None) -> "Frame":
        """The frame ``X'_i = X_j P^j_i`` for an invertible matrix ``P(q)``.

        R transforms non-tensorially (derivatives of P enter); the new structure
        functions are computed afresh.
        """
        P = sp.Matrix(P)
        if P.shape != (self.dim, self.dim):
            raise DimensionError(f"P must be {self.dim}×{self.dim}, got {P.shape}.")
        det = _check_nonsingular(self.chart, P, "the change-of-frame matrix P")
        new_vectors = (P.T * self.vectors).applyfunc(sp.cancel)
        Pinv = invert(P, det)
        new_coframe = (Pinv * self.coframe).applyfunc(tidy)
        return Frame(self.chart, new_vectors, rank_D=rank_D, coframe=new_coframe)

    # --- presentation ---------------------------------------------------------------
    def __eq__(self, other):
        return isinstance(other, Frame) and self.chart == other.chart and self.vectors == other.vectors

    def __hash__(self):
        return hash((self.chart, self.vectors))

    def __str__(self):
        lines = [f"Frame on ({', '.join(q.name for q in self.chart.coordinates)})"]
        for i in range(self.dim):
            lines.append(f"  X{i + 1} = {self.vector(i)}")
        return "\n".join(lines)

    def as_latex(self) -> str:
        """The vectors ``X_i`` and nonzero ``R^k_ij`` as a LaTeX ``aligned`` block."""
        rows = []
        for i in range(self.dim):
            rows.append(f"X_{{{i + 1}}} &= " + combination_latex(
                [(c, latex(c), rf"\partial_{{{latex(q)}}}") for c, q in zip(self.vectors.row(i), self.chart.coordinates)]))
        rows += [f"R^{{{k + 1}}}_{{{i + 1}{j + 1}}} &= {latex(v)}" for (k, i, j), v in self.nonzero_structure().items()]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        """Vectors, coframe and structure functions as strings (0-based R[k][i][j])."""
        n = self.dim
        return {
            "vectors": [[str(e) for e in self.vectors.row(i)] for i in range(n)],
            "coframe": [[str(e) for e in self.coframe.row(i)] for i in range(n)],
            "structure": [[[str(self.structure[k][i][j]) for j in range(n)] for i in range(n)] for k in range(n)],
        }

    def __repr__(self):
        return f"Frame(chart={self.chart.coordinates}, vectors={self.vectors.tolist()}, rank_D={self.rank_D})"

    # --- basis protocol for differential forms (geometry.forms) -------------------------
    @property
    def basis_size(self) -> int:
        return self.dim

    def basis_derivative(self, a: int, f) -> sp.Expr:
        return self.apply(a, f)

    def basis_structure(self, c: int, a: int, b: int) -> sp.Expr:
        return self.structure[c][a][b]

    def basis_labels(self) -> tuple:
        return tuple(f"theta{i + 1}" for i in range(self.dim))

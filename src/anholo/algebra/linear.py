"""Exact linear algebra over expressions: determinants, inverses, ranks and linear solves.

Policy: no blanket ``simplify`` on hot paths.  Pivot choices and zero tests are
made by evaluating at random numerical points (:mod:`anholo.algebra.numeric`);
the exact kernel (:mod:`anholo.algebra.kernel`) is used when the entries lie in
its field of rational functions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from . import kernel as _kernel
from .expressions import free_symbols
from .numeric import numeric_value, numerically_zero, random_point
from .simplify import _CANCEL_LIMIT, reduce_if_cheap, tidy

__all__ = [
    "determinant",
    "adjugate",
    "invert",
    "generic_rank",
    "LinearSolution",
    "solve_generic",
    "solve_square",
]


def determinant(matrix) -> sp.Expr:
    """Determinant by Laplace expansion with memoised minors (division-free, no expansion).

    For the small matrices of mechanics (n ≤ 8) this is far faster than sympy's
    Berkowitz routine, which can spend a minute on a 3×3 matrix with large entries.
    """
    M = sp.Matrix(matrix)
    n = M.rows
    if n == 0:
        return sp.S.One
    entries = [[M[i, j] for j in range(n)] for i in range(n)]
    memo: dict = {}

    def minor(row: int, cols: tuple) -> sp.Expr:
        # determinant of rows row..n-1 restricted to the columns `cols`
        if row == n - 1:
            return entries[row][cols[0]]
        key = (row, cols)
        if key in memo:
            return memo[key]
        terms = []
        for k, c in enumerate(cols):
            e = entries[row][c]
            if e == 0:
                continue
            sub = minor(row + 1, cols[:k] + cols[k + 1:])
            if sub != 0:
                terms.append((-1) ** k * e * sub)
        val = sp.Add(*terms)
        memo[key] = val
        return val

    return minor(0, tuple(range(n)))


def adjugate(matrix) -> sp.Matrix:
    """Adjugate (transpose of the cofactor matrix) by Laplace expansion of each minor."""
    M = sp.Matrix(matrix)
    n = M.rows
    if n == 1:
        return sp.Matrix([[1]])
    return sp.Matrix(n, n, lambda i, j: (-1) ** (i + j) * determinant(M.minor_submatrix(j, i)))


def invert(matrix: sp.Matrix, det: sp.Expr | None = None) -> sp.ImmutableMatrix:
    """Inverse by adjugate over determinant, each entry put through :func:`tidy`.

    Avoids ``Matrix.inv``, whose invertibility check calls ``simplify``.  The
    caller is responsible for having checked that ``det`` is not identically zero.
    """
    M = sp.Matrix(matrix)
    try:  # Gauss–Jordan over the field of rational functions (anholo.algebra.kernel), when it applies
        K = _kernel.DiffField(list(M))
        inv = _kernel.inverse(K, [[K.convert(M[i, j]) for j in range(M.cols)] for i in range(M.rows)])
        if inv is not None:
            return sp.ImmutableMatrix(M.rows, M.cols, [K.to_expr(_kernel.simplest(K, e)) for row in inv for e in row])
    except _kernel.Unsupported:
        pass
    det = determinant(M) if det is None else det
    adj = adjugate(M)
    return sp.ImmutableMatrix(M.rows, M.cols, [tidy(e / det) for e in adj])


def generic_rank(matrix, seed: int = 13, tol: float = 1e-9) -> int:
    """Rank of a symbolic matrix at a random point: its generic rank, with probability one.

    Gaussian elimination with partial pivoting on the 30-digit values (pivots below
    ``tol`` times the largest entry count as zero).  Undefined functions are
    replaced by generic stand-ins (:func:`concrete_functions`).
    """
    M = sp.Matrix(matrix)
    if M.rows == 0 or M.cols == 0:
        return 0
    try:  # exact elimination over the field of rational functions (anholo.algebra.kernel), when it applies
        K = _kernel.DiffField(list(M))
        return _kernel.rank(K, _kernel.matrix(K, M))
    except _kernel.Unsupported:
        pass
    pt = random_point(free_symbols(M), random.Random(seed))
    rows = [[numeric_value(M[i, j], pt) for j in range(M.cols)] for i in range(M.rows)]
    if any(v != v for row in rows for v in row):
        raise ValueError("generic_rank: the matrix could not be evaluated numerically")
    scale = max([1.0] + [abs(v) for row in rows for v in row])
    rank = 0
    for col in range(M.cols):
        pivot = max(range(rank, len(rows)), key=lambda r: abs(rows[r][col]), default=None)
        if pivot is None or abs(rows[pivot][col]) <= tol * scale:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(rank + 1, len(rows)):
            factor = rows[r][col] / rows[rank][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank])]
        rank += 1
    return rank


def solve_square(matrix: sp.Matrix, rhs: Sequence, *, seed: int = 20261122) -> tuple | None:
    """Solve a square system ``M z = b`` with ``M`` generically nonsingular.

    Division-free: ``z = adj(M) b / det(M)`` (Berkowitz), so expression size
    stays polynomial in the size of M's entries; the factors ``adj_ij / det`` are
    cancelled only when cheap.  A diagonal M is divided directly.  Returns
    ``None`` if ``det M`` vanishes identically (checked at random points).
    """
    M = sp.Matrix(matrix)
    b = [sympified(x) for x in rhs]
    n = M.rows
    if M.is_diagonal():
        diag = [M[i, i] for i in range(n)]
        pts = [random_point(free_symbols(diag), random.Random(seed))]
        if any(d == 0 or numerically_zero(d, pts) for d in diag):
            return None
        return tuple(b[i] * reduce_if_cheap(1 / diag[i]) for i in range(n))
    det = determinant(M)
    rng = random.Random(seed)
    pts = [random_point(free_symbols([det]), rng) for _ in range(2)]
    if det == 0 or numerically_zero(det, pts):
        return None
    adj = adjugate(M)
    det_r = reduce_if_cheap(det, 4 * _CANCEL_LIMIT)
    return tuple(
        sp.Add(*[reduce_if_cheap(adj[i, j] / det_r) * b[j] for j in range(n) if adj[i, j] != 0 and b[j] != 0])
        for i in range(n)
    )


@dataclass(frozen=True)
class LinearSolution:
    """General solution of a linear system ``M z = b`` with symbolic entries.

    Attributes
    ----------
    particular : tuple
        One solution (free unknowns set to zero), valid where ``conditions`` hold.
    free_directions : tuple of tuples
        A basis of the kernel of ``M`` (at a generic point): the general solution
        is ``particular + sum_k c_k free_directions[k]`` with arbitrary ``c_k``.
    free_unknowns : tuple of int
        Indices of the unknowns that were left free (one per free direction).
    conditions : tuple
        Expressions that must vanish for the system to be solvable (the
        compatibility conditions), already reduced with ``cancel``/``factor``.
    rank : int
        Generic rank of ``M``.
    """

    particular: tuple
    free_directions: tuple
    free_unknowns: tuple
    conditions: tuple
    rank: int


def solve_generic(
    matrix: sp.Matrix,
    rhs: Sequence,
    *,
    column_order: Sequence[int] | None = None,
    seed: int = 20261122,
) -> LinearSolution:
    """Solve ``matrix * z = rhs`` at a generic point of the space of its symbols.

    Gauss–Jordan elimination whose pivots are chosen numerically nonzero at
    random points, so the rank found is the generic rank.  Columns are tried in
    ``column_order`` (default: natural order); an unknown whose column gets no
    pivot is free.  Rows left without a pivot give compatibility conditions
    ``rhs_reduced = 0``.

    Expression size: the coefficient entries (small, Hessian-like) are kept in
    ``cancel`` normal form; the right-hand side, usually much larger, only goes
    through the same row operations unsimplified, so it grows linearly with the
    number of steps.  No ``simplify`` is used.
    """
    nrows, ncols = matrix.shape
    order = list(range(ncols)) if column_order is None else list(column_order)
    rows = [[sympified(matrix[r, c]) for c in range(ncols)] for r in range(nrows)]
    b = [sympified(x) for x in rhs]
    symbols = free_symbols(e for row in rows for e in row) | free_symbols(b)
    rng = random.Random(seed)
    points = [random_point(symbols, rng) for _ in range(2)]

    pivot_of_col: dict[int, int] = {}
    used_rows: set[int] = set()
    for col in order:
        best = None
        best_ops = None
        for r in range(nrows):
            if r in used_rows:
                continue
            entry = rows[r][col]
            if entry == 0 or numerically_zero(entry, points[:1]):
                continue
            ops = 0 if entry.is_Atom else sum(1 for _ in sp.preorder_traversal(entry))
            if best is None or ops < best_ops:
                best, best_ops = r, ops
        if best is None:
            continue
        pivot_of_col[col] = best
        used_rows.add(best)
        piv = rows[best][col]
        if piv != 1:
            rows[best] = [reduce_if_cheap(e / piv) if e != 0 else e for e in rows[best]]
            b[best] = b[best] / piv
        prow = rows[best]
        for r in range(nrows):
            if r == best:
                continue
            factor = rows[r][col]
            if factor == 0:
                continue
            rows[r] = [reduce_if_cheap(e - factor * pe) if pe != 0 else e for e, pe in zip(rows[r], prow)]
            rows[r][col] = sp.S.Zero
            if b[best] != 0:
                b[r] = b[r] - factor * b[best]

    conditions = []
    for r in range(nrows):
        if r in used_rows:
            continue
        # generic rank reached: the coefficients of this row vanish identically
        residual = b[r]
        if residual != 0 and not numerically_zero(residual, points):
            coeff, core = sp.factor(reduce_if_cheap(residual, 400)).as_coeff_Mul()
            conditions.append(core if coeff.is_number and coeff != 0 else coeff * core)

    free_cols = [c for c in order if c not in pivot_of_col]
    particular = [sp.S.Zero] * ncols
    for col, r in pivot_of_col.items():
        particular[col] = reduce_if_cheap(b[r], 8 * _CANCEL_LIMIT)  # once, at the end
    directions = []
    for fc in free_cols:
        vec = [sp.S.Zero] * ncols
        vec[fc] = sp.S.One
        for col, r in pivot_of_col.items():
            coeff = rows[r][fc]
            if coeff != 0 and not numerically_zero(coeff, points):
                vec[col] = reduce_if_cheap(-coeff)
        directions.append(tuple(vec))
    return LinearSolution(
        particular=tuple(particular),
        free_directions=tuple(directions),
        free_unknowns=tuple(free_cols),
        conditions=tuple(conditions),
        rank=len(pivot_of_col),
    )

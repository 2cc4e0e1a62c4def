"""Small symbolic-algebra utilities shared by the geometry and dynamics modules.

Policy (DEVELOPERS.md): no blanket ``simplify`` on hot paths.  Zero tests and
pivot choices are made by evaluating at random numerical points (a nonzero
value proves an expression nonzero; a zero at several independent random
points makes it zero with probability one for the analytic expressions that
occur here), and expressions are kept small with ``cancel`` only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import sympy as sp

__all__ = [
    "tidy",
    "vanishes",
    "size_exceeds",
    "determinant",
    "adjugate",
    "reduce_if_cheap",
    "invert",
    "free_symbols",
    "xreplace_dag",
    "random_point",
    "numeric_value",
    "concrete_functions",
    "numerically_zero",
    "generic_rank",
    "LinearSolution",
    "solve_generic",
    "solve_square",
]

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
    expr = sp.sympify(expr)
    if expr.is_Atom:
        return expr
    from . import _kernel

    try:  # the same normal form in sparse polynomial arithmetic (anholo._kernel), when it applies
        return _kernel.tidy(expr)
    except _kernel.Unsupported:
        pass
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
    from . import _kernel

    try:  # Gauss–Jordan over the field of rational functions (anholo._kernel), when it applies
        K = _kernel.DiffField(list(M))
        inv = _kernel.inverse(K, [[K.convert(M[i, j]) for j in range(M.cols)] for i in range(M.rows)])
        if inv is not None:
            return sp.ImmutableMatrix(M.rows, M.cols, [K.to_expr(_kernel.simplest(K, e)) for row in inv for e in row])
    except _kernel.Unsupported:
        pass
    det = determinant(M) if det is None else det
    adj = adjugate(M)
    return sp.ImmutableMatrix(M.rows, M.cols, [tidy(e / det) for e in adj])


def xreplace_dag(expr, mapping: Mapping) -> sp.Expr:
    """``expr.xreplace(mapping)``, memoised over shared subexpressions.

    Derived fields are DAGs whose trees can be millions of nodes although they
    have only thousands of distinct subexpressions; ``xreplace`` walks the tree,
    this walks the DAG (each distinct subexpression is rebuilt once).
    """
    expr = sp.sympify(expr)
    if not mapping:
        return expr
    memo: dict = dict(mapping)
    stack = [(expr, False)]
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if not a.args:
            memo[a] = a
        elif not expanded:
            stack.append((a, True))
            stack.extend((c, False) for c in a.args if c not in memo)
        else:
            new_args = tuple(memo[c] for c in a.args)
            memo[a] = a.func(*new_args) if any(x is not y for x, y in zip(new_args, a.args)) else a
    return memo[expr]


def free_symbols(exprs: Iterable) -> set[sp.Symbol]:
    out: set[sp.Symbol] = set()
    for e in exprs:
        out |= sp.sympify(e).free_symbols
    return out


def random_point(symbols: Iterable[sp.Symbol], rng: random.Random | None = None) -> dict:
    """A random point for the given symbols, respecting positivity assumptions.

    Values are drawn from (0.3, 1.3) for positive symbols and (-1.3, 1.3) away
    from 0 otherwise, as exact rationals with small denominators avoided (so
    special values such as 0, 1, pi/2 are hit with probability ~0).
    """
    rng = rng or random.Random()
    point = {}
    for s in sorted(symbols, key=sp.default_sort_key):
        if s.is_positive or s.is_nonnegative:
            val = rng.uniform(0.3, 1.3)
        else:
            val = rng.uniform(0.25, 1.3) * rng.choice((-1, 1))
        point[s] = sp.Float(val, 30)
    return point


def _generic_function(func, nargs: int) -> sp.Lambda:
    """A fixed random analytic function standing in for an undefined function ``func``.

    Seeded by the function's name, so every evaluation in a session uses the same
    stand-in.  An identity that holds for every function holds for it; a
    nonzero expression vanishes for it with probability zero.
    """
    rng = random.Random(f"anholo-generic-{func.__name__}-{nargs}")
    xs = sp.symbols(f"_g0:{nargs}", real=True)
    body = sp.Float(rng.uniform(0.3, 1.3), 30)
    for x in xs:
        a, b, c, d = (sp.Float(rng.uniform(0.3, 1.3), 30) for _ in range(4))
        body += a * sp.sin(b * x + c) + d * x**2 / 3
    return sp.Lambda(xs, body)


def concrete_functions(expr: sp.Expr) -> sp.Expr:
    """Replace undefined functions (``A(q)``, also inside derivatives) by generic stand-ins.

    Used only for numerical zero tests; see :func:`_generic_function`.
    """
    from sympy.core.function import AppliedUndef

    expr = sp.sympify(expr)
    if not expr.has(AppliedUndef):
        return expr
    stand_in = {}

    def replace(app):
        key = (app.func, len(app.args))
        if key not in stand_in:
            stand_in[key] = _generic_function(app.func, len(app.args))
        return stand_in[key](*app.args)

    return expr.replace(lambda e: isinstance(e, AppliedUndef), replace).doit()


def numeric_value(expr: sp.Expr, point: Mapping) -> complex:
    """Evaluate ``expr`` at ``point`` (a dict symbol -> number) as a Python complex.

    30-digit mpmath arithmetic, each distinct subexpression evaluated once (derived
    expressions are DAGs far smaller than their trees).  Undefined functions are
    replaced by generic stand-ins first (:func:`concrete_functions`).  An
    expression that cannot be evaluated (a symbol missing from ``point``) gives
    NaN: "unknown", never "zero".
    """
    import mpmath

    try:
        expr = concrete_functions(expr)
    except (TypeError, ValueError):
        return complex("nan")
    memo: dict = {}
    with mpmath.workdps(30):
        for s, val in point.items():
            memo[s] = mpmath.mpmathify(complex(sp.sympify(val).evalf(30)))
        stack = [(expr, False)]
        try:
            while stack:
                a, expanded = stack.pop()
                if a in memo:
                    continue
                if a.is_Symbol:
                    return complex("nan")
                if a.is_Number or a.is_NumberSymbol or a is sp.I:
                    memo[a] = mpmath.mpc(0, 1) if a is sp.I else mpmath.mpf(sp.Float(a, 35))
                elif not expanded:
                    stack.append((a, True))
                    stack.extend((c, False) for c in a.args if c not in memo)
                else:
                    vals = [memo[c] for c in a.args]
                    if a.is_Add:
                        memo[a] = mpmath.fsum(vals)
                    elif a.is_Mul:
                        memo[a] = mpmath.fprod(vals)
                    elif a.is_Pow:
                        memo[a] = mpmath.power(vals[0], vals[1])
                    elif isinstance(a, sp.Function) and hasattr(mpmath, type(a).__name__):
                        memo[a] = getattr(mpmath, type(a).__name__)(*vals)
                    else:
                        memo[a] = mpmath.mpmathify(complex(a.xreplace(dict(point)).evalf(30)))
            return complex(memo[expr])
        except (TypeError, ValueError, ZeroDivisionError):
            return complex("nan")


def generic_rank(matrix, seed: int = 13, tol: float = 1e-9) -> int:
    """Rank of a symbolic matrix at a random point: its generic rank, with probability one.

    Gaussian elimination with partial pivoting on the 30-digit values (pivots below
    ``tol`` times the largest entry count as zero).  Undefined functions are
    replaced by generic stand-ins (:func:`concrete_functions`).
    """
    M = sp.Matrix(matrix)
    if M.rows == 0 or M.cols == 0:
        return 0
    from . import _kernel

    try:  # exact elimination over the field of rational functions (anholo._kernel), when it applies
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


def numerically_zero(expr: sp.Expr, points: Sequence[Mapping], tol: float = 1e-12) -> bool:
    """True if ``expr`` vanishes (to ``tol`` relative to 1) at every point.

    An expression with symbols not covered by the points is considered nonzero
    unless it is structurally zero.
    """
    expr = sp.sympify(expr)
    if expr == 0:
        return True
    for point in points:
        val = numeric_value(expr, point)
        if val != val or abs(val) > tol:  # NaN or clearly nonzero
            return False
    return True


_CANCEL_LIMIT = 60


def size_exceeds(expr: sp.Expr, limit: int) -> bool:
    """True if the expression tree of ``expr`` has more than ``limit`` nodes.

    Stops walking as soon as the limit is passed, so it costs O(limit) even on
    huge trees (``count_ops`` walks the whole tree, every shared copy included).
    """
    count = 0
    for _ in sp.preorder_traversal(expr):
        count += 1
        if count > limit:
            return True
    return False


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


def solve_square(matrix: sp.Matrix, rhs: Sequence, *, seed: int = 20261122) -> tuple | None:
    """Solve a square system ``M z = b`` with ``M`` generically nonsingular.

    Division-free: ``z = adj(M) b / det(M)`` (Berkowitz), so expression size
    stays polynomial in the size of M's entries; the factors ``adj_ij / det`` are
    cancelled only when cheap.  A diagonal M is divided directly.  Returns
    ``None`` if ``det M`` vanishes identically (checked at random points).
    """
    M = sp.Matrix(matrix)
    b = [sp.sympify(x) for x in rhs]
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


def vanishes(expr, seed: int = 5) -> bool:
    """True if ``expr`` is zero as a function: structurally, after ``cancel`` when small,
    or numerically at three random points (probability-one zero test)."""
    expr = sp.sympify(expr)
    if expr == 0:
        return True
    if not size_exceeds(expr, 400):
        from . import _kernel

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
    rows = [[sp.sympify(matrix[r, c]) for c in range(ncols)] for r in range(nrows)]
    b = [sp.sympify(x) for x in rhs]
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

"""Exact elimination for ansatz searches: linear systems in unknown constants over QQ(parameters).

A search writes its unknowns' coefficient equations as ``M c = b`` (entries
rational functions of the parameters); :func:`eliminate` solves it by
Gauss–Jordan elimination in a sparse rational function field, recording the
pivots (whose zeros are the special parameter values) and the compatibility
conditions; :func:`solve_in_blocks` splits a system into independent blocks
first.  Used by the section searches of the consistency and Chaplygin analyses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import random

import sympy as sp

from ..parsing import sympified
from .coefficients import NotPolynomial, to_field
from .expressions import free_symbols, xreplace_dag
from .linear import LinearSolution, generic_rank, solve_generic
from .numeric import random_point
from .simplify import vanishes

__all__ = ["linear_system", "Elimination", "eliminate", "solve_linear", "BlockSolution", "solve_in_blocks",
           "NumericSystem"]


def linear_system(exprs, unknowns):
    """``(M, b)`` with ``M c = b`` for expressions affine in the unknowns; duplicate and zero rows dropped."""
    rows, seen = [], set()
    for e in exprs:
        e = sp.expand(e)
        if e == 0 or e in seen or -e in seen:
            continue
        seen.add(e)
        rows.append(e)
    if not rows:
        return sp.zeros(0, len(unknowns)), []
    M, b = sp.linear_eq_to_matrix(rows, list(unknowns))
    return M, list(b)


@dataclass(frozen=True)
class Elimination:
    solution: dict  # pivot unknown -> expression in the free unknowns
    free: tuple
    conditions: tuple  # compatibility conditions (must vanish)
    pivots: tuple  # the pivot values divided by (their zeros are special parameter values)


def eliminate(M, b, unknowns) -> Elimination:
    """Gauss–Jordan elimination of ``M c = b`` over the field ``QQ(parameters)``, exactly.

    Entries are converted to a sparse rational function field (every
    operation cancelled exactly), pivots are the entries with fewest terms.
    Records the pivots, whose zeros are the parameter values where the
    generic elimination does not apply.  Raises ``NotPolynomial`` if an entry
    is not a rational function of its symbols.
    """
    from sympy.polys.fields import field

    nrows, ncols = M.shape
    entries = list(M) + list(b)
    atoms = set()
    for e in entries:
        atoms |= e.atoms(sp.Function) | {p for p in e.atoms(sp.Pow) if not p.exp.is_Integer}
    back = {sp.Dummy(f"A{k}"): f for k, f in enumerate(sorted(atoms, key=sp.default_sort_key))}
    fwd = {f: d for d, f in back.items()}
    if fwd:
        entries = [xreplace_dag(e, fwd) for e in entries]
    symbols = sorted(set().union(*[e.free_symbols for e in entries]) if entries else set(), key=sp.default_sort_key)
    if not symbols:
        symbols = [sp.Dummy("t")]
    K, *gens = field(symbols, sp.QQ)
    memo = dict(zip(symbols, gens))
    vals = [to_field(e, K, memo) for e in entries]
    rows = [vals[r * ncols:(r + 1) * ncols] + [vals[nrows * ncols + r]] for r in range(nrows)]
    zero = K(0)

    def size(x):
        return len(x.numer.terms()) + len(x.denom.terms())

    def to_expr(x):
        e = x.as_expr()
        return e.xreplace(back) if back else e

    pivot_row: dict = {}
    pivots = []
    used: set = set()
    for col in range(ncols):
        cands = [r for r in range(nrows) if r not in used and rows[r][col] != zero]
        if not cands:
            continue
        r0 = min(cands, key=lambda r: size(rows[r][col]))
        piv = rows[r0][col]
        pivots.append(to_expr(piv))
        rows[r0] = [x / piv if x != zero else x for x in rows[r0]]
        used.add(r0)
        pivot_row[col] = r0
        for r in range(nrows):
            if r != r0 and rows[r][col] != zero:
                f = rows[r][col]
                rows[r] = [x - f * y if y != zero else x for x, y in zip(rows[r], rows[r0])]
    conditions = tuple(to_expr(rows[r][-1]) for r in range(nrows) if r not in used and rows[r][-1] != zero)
    free = tuple(unknowns[c] for c in range(ncols) if c not in pivot_row)
    solution = {}
    for col, r in pivot_row.items():
        expr = to_expr(rows[r][-1])
        for fc in range(ncols):
            if fc not in pivot_row and rows[r][fc] != zero:
                expr -= to_expr(rows[r][fc]) * unknowns[fc]
        solution[unknowns[col]] = expr
    return Elimination(solution, free, conditions, tuple(pivots))


def solve_linear(M, b, unknowns, sub=None) -> Elimination:
    """Solve ``M c = b`` after substituting ``sub``: exactly over the field when the substitution is
    rational, else with :func:`anholo.algebra.solve_generic` (numeric pivot tests, so that algebraic
    parameter values such as square roots are handled)."""
    if sub:
        M = M.applyfunc(lambda e: xreplace_dag(e, sub))
        b = [xreplace_dag(e, sub) for e in b]
    if M.rows == 0:
        return Elimination({}, tuple(unknowns), (), ())
    algebraic = any(v.has(sp.Pow) and any(not p.exp.is_Integer for p in v.atoms(sp.Pow)) for v in (sub or {}).values())
    if not algebraic:
        try:
            return eliminate(M, b, unknowns)
        except NotPolynomial:
            pass
    sol = solve_generic(M, b)
    solution = {}
    for j, c in enumerate(unknowns):
        if j in sol.free_unknowns:
            continue
        expr = sol.particular[j]
        for fc, direction in zip(sol.free_unknowns, sol.free_directions):
            if direction[j] != 0:
                expr += direction[j] * unknowns[fc]
        solution[c] = expr
    return Elimination(solution, tuple(unknowns[j] for j in sol.free_unknowns), sol.conditions, ())


@dataclass(frozen=True)
class BlockSolution:
    """Solutions of the independent blocks of a linear system (see :func:`solve_in_blocks`)."""

    columns: tuple      # per block: its unknown indices
    rows: tuple         # per block: its equation indices
    solutions: tuple    # per block: LinearSolution
    ncols: int
    inconsistent: tuple  # equations without unknowns and with a nonzero right side

    @property
    def conditions(self) -> tuple:
        return self.inconsistent + tuple(c for s in self.solutions for c in s.conditions)

    def combined(self) -> tuple:
        """``(particular, free_directions)`` of the whole system."""
        particular = [sp.S.Zero] * self.ncols
        free = []
        for cols, sol in zip(self.columns, self.solutions):
            for c, val in zip(cols, sol.particular):
                particular[c] = val
            for d in sol.free_directions:
                vec = [sp.S.Zero] * self.ncols
                for c, val in zip(cols, d):
                    vec[c] = val
                free.append(tuple(vec))
        return tuple(particular), tuple(free)

    def at(self, A: sp.Matrix, b: Sequence, sub: dict) -> "BlockSolution":
        """The solution at special parameter values ``sub``.  With rational values every block that
        depends on them is solved again exactly (:func:`eliminate`).  With algebraic values (square
        roots) a block is solved again if it has solvability conditions, if its rank drops there
        (checked numerically) or if a denominator of its generic solution vanishes there; otherwise
        the generic solution is specialised."""
        sols = []
        params = set(sub)
        algebraic = any(p.exp.is_Rational and not p.exp.is_Integer
                        for v in sub.values() for p in sympified(v).atoms(sp.Pow))
        for cols, rows, sol in zip(self.columns, self.rows, self.solutions):
            block = A.extract(list(rows), list(cols))
            if not free_symbols(list(block) + [b[r] for r in rows]) & params:
                sols.append(sol)
                continue
            if not algebraic:  # rational values: exact elimination over QQ(parameters) again, cheaper than any test
                sols.append(_solve_block(block.xreplace(sub), [b[r].xreplace(sub) for r in rows]))
                continue
            dens = [sp.fraction(sp.cancel(e))[1] for e in sol.particular if e != 0]
            dens += [sp.fraction(sp.cancel(e))[1] for d in sol.free_directions for e in d if e != 0]
            special = block.xreplace(sub)
            if (sol.conditions or generic_rank(special) < sol.rank
                    or any(vanishes(d.xreplace(sub)) for d in dens if d.free_symbols & params)):
                sols.append(solve_generic(special, [b[r].xreplace(sub) for r in rows]))
            else:
                sols.append(type(sol)(tuple(e.xreplace(sub) for e in sol.particular),
                                      tuple(tuple(e.xreplace(sub) for e in d) for d in sol.free_directions),
                                      sol.free_unknowns, (), sol.rank))
        return BlockSolution(self.columns, self.rows, tuple(sols), self.ncols,
                              tuple(e.xreplace(sub) for e in self.inconsistent if e.xreplace(sub) != 0))


class NumericSystem:
    """``A z = b`` compiled once for numerical solvability tests at parameter values (a filter before
    exact eliminations that cannot succeed, e.g. at the special parameter values of a search)."""

    def __init__(self, A: sp.Matrix, b: Sequence):
        from .codegen import compiled

        self.shape = A.shape
        entries = sorted((rc, e) for rc, e in A.todok().items() if e != 0)  # the nonzero entries only
        self.cells = [rc for rc, _ in entries]
        self.exprs = [e for _, e in entries] + [sympified(x) for x in b]
        self.symbols = sorted(free_symbols(self.exprs), key=sp.default_sort_key)
        self._f = compiled(self.symbols, self.exprs, real=False)

    def solvable(self, sub: dict, seeds=(3, 4), tol: float = 1e-6) -> bool:
        """False only if ``A z = b`` with the values ``sub`` is clearly inconsistent at two random points
        of the other symbols (least-squares residual above ``tol`` relative to ``b``); True otherwise
        (also when the values cannot be evaluated)."""
        import numpy as np

        from .numeric import numeric_value

        if self._f is None:
            return True
        others = (set(self.symbols) | free_symbols(list(sub.values()))) - set(sub)
        for seed in seeds:
            point = random_point(others, random.Random(seed))
            vals = {s: complex(float(v)) for s, v in point.items()}
            for p, v in sub.items():
                vals[p] = numeric_value(sympified(v), point)
            args = [vals.get(s, 0.3) for s in self.symbols] or [0.0]
            if any(x != x for x in args):
                return True
            with np.errstate(all="ignore"):
                out = np.ravel(np.asarray(self._f(args), dtype=complex))
            if not np.all(np.isfinite(out)):
                return True
            A = np.zeros(self.shape, dtype=complex)
            for (r, c), x in zip(self.cells, out):
                A[r, c] = x
            rhs = out[len(self.cells):]
            norm = np.linalg.norm(rhs)
            if norm == 0:
                return True
            scale = np.linalg.norm(A, axis=0)
            scale[scale == 0] = 1.0
            z = np.linalg.lstsq(A / scale, rhs, rcond=1e-10)[0]
            if np.linalg.norm((A / scale) @ z - rhs) <= tol * norm:
                return True
        return False


def solve_in_blocks(A: sp.Matrix, b: Sequence) -> BlockSolution:
    """``solve_generic`` on the independent blocks of ``A z = b`` (unknowns linked by shared
    equations); Gauss–Jordan elimination is cubic, so small blocks are much cheaper."""
    nrows, ncols = A.shape
    parent = list(range(ncols))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rows_cols = [[] for _ in range(nrows)]
    for (r, c), e in sorted(A.todok().items()):  # the nonzero entries only (A is large and sparse)
        if e != 0:
            rows_cols[r].append(c)
    for cols in rows_cols:
        for c in cols[1:]:
            parent[find(c)] = find(cols[0])
    blocks: dict = {}
    for c in range(ncols):
        blocks.setdefault(find(c), []).append(c)
    inconsistent = tuple(b[r] for r, cols in enumerate(rows_cols) if not cols and b[r] != 0)
    columns, rows_of, sols = [], [], []
    for cols in blocks.values():
        rows = [r for r in range(nrows) if rows_cols[r] and find(rows_cols[r][0]) == find(cols[0])]
        columns.append(tuple(cols))
        rows_of.append(tuple(rows))
        sols.append(_solve_block(A.extract(rows, cols), [b[r] for r in rows]))
    return BlockSolution(tuple(columns), tuple(rows_of), tuple(sols), ncols, inconsistent)


def _solve_block(A: sp.Matrix, b: Sequence) -> LinearSolution:
    """``solve_generic`` for one block, by exact elimination over ``QQ(symbols)`` (:func:`eliminate`)
    when the entries are rational functions; with numeric pivot tests otherwise."""
    unknowns = [sp.Dummy(f"z{j}") for j in range(A.cols)]
    try:
        elim = eliminate(A, list(b), unknowns)
    except NotPolynomial:
        return solve_generic(A, b)
    index = {z: j for j, z in enumerate(unknowns)}
    free = [index[z] for z in elim.free]
    zero = {unknowns[j]: 0 for j in free}
    particular = tuple(elim.solution[z].xreplace(zero) if z in elim.solution else sp.S.Zero for z in unknowns)
    directions = []
    for j in free:
        unit = {unknowns[k]: (1 if k == j else 0) for k in free}
        directions.append(tuple(
            (elim.solution[z].xreplace(unit) - particular[i]) if z in elim.solution else sp.S(unit[z])
            for i, z in enumerate(unknowns)))
    conditions = tuple(sp.factor(c) for c in elim.conditions)
    return LinearSolution(particular, tuple(directions), tuple(free), conditions, A.cols - len(free))

"""Implicit linear systems ``M(z) x = F(z)``: the form in which dynamics scales.

The equations of motion of a mechanical system are linear in the accelerations:
``M(q) ẋ = F(q, v)`` with ``M`` the (frame) Hessian block of the Lagrangian and
``F`` the rest of Hamel's equations.  Solving them symbolically (an inverse or an
adjugate over a determinant) multiplies the size of the expressions by the
number of terms of the determinant; keeping the *implicit form* and solving it
numerically at each step costs one ``LU`` factorisation (LAPACK) instead.  This is
the design of Kane's method in sympy (``mass_matrix_full``/``forcing_full``, Kane &
Levinson 1985) and of PyDy's code generation (Gede, Peterson, Sinha & Moore 2013).

:class:`ImplicitForm` holds ``M``, ``F`` and the unknowns ``x``; it prints itself,
writes shared subexpressions (``cse``), compiles ``M`` and ``F`` to numerical
functions (with ``cse``), solves numerically (``numpy.linalg.solve``) and, on
request and under a size budget, symbolically (:meth:`ImplicitForm.explicit`:
triangular systems by substitution, others by the division-free adjugate formula
``x = adj(M) F / det M`` — never a blanket ``simplify``/``cancel``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..parsing import sympified
from ..errors import ExpressionBudgetError, IrregularLagrangianError
from .expressions import dag_size, free_symbols, size_exceeds, xreplace_dag
from .linear import solve_square
from .numeric import numeric_value, numerically_zero, random_point
from .printing import EquationDisplay

__all__ = ["ImplicitForm", "EXPLICIT_SIZE_LIMIT"]

#: Default budget of :meth:`ImplicitForm.explicit`: the largest number of distinct subexpressions
#: (DAG nodes) of the explicit solution.
EXPLICIT_SIZE_LIMIT = 200_000


def _sym_matrix(M) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix(M)


@dataclass(frozen=True, eq=False)
class ImplicitForm(EquationDisplay):
    """The linear system ``M x = F`` for the unknowns ``x`` (``M`` square, generically nonsingular).

    Parameters
    ----------
    unknowns : tuple of Symbol
        ``x`` (e.g. the rates ``v1_dot, …`` of the free quasi-velocities, and multipliers).
    matrix : Matrix
        ``M``, functions of the state and parameters only (not of ``x``).
    rhs : tuple
        ``F``.
    description : str
        What the system is (printed in the title of its renderings).

    Examples
    --------
    >>> import sympy as sp
    >>> a, b, x1, x2 = sp.symbols("a b x1 x2")
    >>> form = ImplicitForm((x1, x2), sp.Matrix([[a, 0], [1, b]]), (1, 0))
    >>> form.explicit()
    (1/a, -1/(a*b))
    >>> print(form)
    a*x1 = 1
    b*x2 + x1 = 0
    """

    unknowns: tuple
    matrix: sp.ImmutableMatrix
    rhs: tuple
    description: str = "M x = F"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        M = _sym_matrix(self.matrix)
        object.__setattr__(self, "matrix", M)
        object.__setattr__(self, "unknowns", tuple(self.unknowns))
        object.__setattr__(self, "rhs", tuple(sympified(e) for e in self.rhs))
        if M.rows != M.cols or M.rows != len(self.rhs) or len(self.unknowns) != M.rows:
            raise ValueError(f"an implicit form needs a square M ({M.rows}x{M.cols}) with as many right-hand "
                             f"sides ({len(self.rhs)}) and unknowns ({len(self.unknowns)}) as rows.")

    # --- basic views ----------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return len(self.unknowns)

    @property
    def mass_matrix(self) -> sp.ImmutableMatrix:
        """``M`` (the name of sympy's ``KanesMethod``)."""
        return self.matrix

    @property
    def forcing(self) -> sp.ImmutableMatrix:
        """``F`` as a column (the name of sympy's ``KanesMethod``)."""
        return sp.ImmutableMatrix(self.dim, 1, list(self.rhs))

    def expressions(self) -> list:
        """Every entry of ``M`` (row by row) and of ``F``."""
        return list(self.matrix) + list(self.rhs)

    def size(self) -> int:
        """Distinct subexpressions of ``M`` and ``F`` together (their DAG's size)."""
        return dag_size(sp.Tuple(*self.expressions()))

    def equations(self) -> list:
        """``[Eq(Σ_j M_ij x_j, F_i)]`` (unevaluated)."""
        M, x = self.matrix, self.unknowns
        return [sp.Eq(sp.Add(*[M[i, j] * x[j] for j in range(self.dim) if M[i, j] != 0]), self.rhs[i],
                      evaluate=False) for i in range(self.dim)]

    def residuals(self, solution: Sequence) -> tuple:
        """``M x − F`` at ``x = solution`` (expressions)."""
        M = self.matrix
        return tuple(sp.Add(*[M[i, j] * solution[j] for j in range(self.dim) if M[i, j] != 0]) - self.rhs[i]
                     for i in range(self.dim))

    def subs(self, mapping: Mapping) -> "ImplicitForm":
        """The same system with ``mapping`` substituted in ``M`` and ``F`` (over the DAG)."""
        M = self.matrix.applyfunc(lambda e: xreplace_dag(e, mapping))
        return ImplicitForm(self.unknowns, M, tuple(xreplace_dag(e, mapping) for e in self.rhs), self.description)

    # --- shared subexpressions ----------------------------------------------------------------
    def cse(self, prefix: str = "x_") -> tuple:
        """``(pairs, M, F)``: common subexpressions ``[(name, expr), …]`` (in order) and ``M``, ``F`` written with them."""
        key = ("cse", prefix)
        if key not in self._cache:
            exprs = self.expressions()
            pairs, reduced = sp.cse(exprs, symbols=sp.numbered_symbols(prefix, real=True), order="none")
            k = self.dim
            M = sp.ImmutableMatrix(k, k, reduced[:k * k])
            self._cache[key] = (tuple(pairs), M, tuple(reduced[k * k:]))
        return self._cache[key]

    # --- explicit solution, on request and under a budget --------------------------------------
    def explicit(self, max_size: int | None = EXPLICIT_SIZE_LIMIT) -> tuple:
        """``x = M⁻¹ F`` symbolically, without simplification, under a size budget.

        Lower- or upper-triangular ``M``: substitution (``x_i = (F_i − Σ M_ij x_j)/M_ii``);
        otherwise the division-free adjugate formula of
        :func:`~anholo.algebra.linear.solve_square` (``x = adj(M) F / det M``, entries
        cancelled only when small).

        Raises
        ------
        IrregularLagrangianError
            If ``M`` is singular (at random points).
        ExpressionBudgetError
            If the solution has more than ``max_size`` distinct subexpressions (use the
            implicit form, :meth:`numeric_solve` or :meth:`lambdify` instead).
        """
        key = ("explicit",)
        if key in self._cache:
            return self._cache[key]
        M, F, k = self.matrix, self.rhs, self.dim
        if k == 0:
            return ()
        order = None
        if M.is_lower:
            order = range(k)
        elif M.is_upper:
            order = range(k - 1, -1, -1)
        if order is not None:
            diag = [M[i, i] for i in range(k)]
            pts = [random_point(free_symbols(diag), random.Random(7))]
            if any(d == 0 or numerically_zero(d, pts) for d in diag):
                raise self._singular()
            x = [None] * k
            for i in order:
                acc = F[i] - sp.Add(*[M[i, j] * x[j] for j in range(k) if j != i and M[i, j] != 0])
                x[i] = acc if M[i, i] == 1 else acc / M[i, i]
            sol = tuple(x)
        else:
            sol = solve_square(M, F)
            if sol is None:
                raise self._singular()
        if max_size is not None:
            total = dag_size(sp.Tuple(*sol))
            if total > max_size:
                raise ExpressionBudgetError(
                    f"the explicit solution of {self.description} has {total} distinct subexpressions "
                    f"(budget {max_size}); use the implicit form (M, F), or raise max_size.")
        self._cache[key] = sol
        return sol

    def _singular(self):
        return IrregularLagrangianError(
            f"the matrix M of {self.description} is singular, so the unknowns are not determined; check "
            "that the kinetic energy is positive on every allowed velocity.")

    # --- numerics ------------------------------------------------------------------------------
    def lambdify(self, args: Sequence, modules="numpy"):
        """``f(*args) -> (M, F)`` as numpy arrays, generated once with common subexpressions.

        ``args``: the symbols (states and parameters) ``M`` and ``F`` depend on.  The code is the
        project's one generator (:func:`~anholo.algebra.codegen.expression_function`): every shared
        subexpression evaluated once per call; numpy arrays of points give arrays ``(k, k, …)`` and
        ``(k, …)``.  ``modules`` is accepted for compatibility and ignored (the code is always the
        generator's).
        """
        from .codegen import expression_function

        key = ("lambdify", tuple(args))
        if key not in self._cache:
            k = self.dim
            raw = expression_function(list(args), list(self.matrix) + list(self.rhs))

            def evaluate(*vals):
                out = raw(*vals)
                return out[:k * k].reshape((k, k) + out.shape[1:]), out[k * k:]

            evaluate.raw = raw
            self._cache[key] = evaluate
        return self._cache[key]

    def numeric_solve(self, values: Mapping) -> np.ndarray:
        """``x`` at a point (``values``: every symbol of ``M`` and ``F`` → a number), by LU (LAPACK)."""
        args = sorted(free_symbols(self.expressions()), key=sp.default_sort_key)
        missing = [s for s in args if s not in values]
        if missing:
            raise ValueError(f"numeric_solve: no value for {', '.join(map(str, missing))}")
        M, F = self.lambdify(args)(*[float(values[s]) for s in args])
        return np.linalg.solve(M, F) if self.dim else np.zeros(0)

    def check_against(self, solution: Sequence, points: int = 3, seed: int = 0, tol: float = 1e-9) -> float:
        """Largest ``|M x − F|`` (relative to ``max(1, |F|)``) over random points, for a candidate ``solution``."""
        res = self.residuals(solution)
        rng = random.Random(seed)
        worst = 0.0
        syms = free_symbols(list(res) + list(self.rhs))
        for _ in range(points):
            pt = random_point(syms, rng)
            for r, f in zip(res, self.rhs):
                val, scale = abs(numeric_value(r, pt)), max(1.0, abs(numeric_value(f, pt)))
                worst = max(worst, val / scale) if val == val else float("inf")
        return worst

    # --- rendering -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """``{"unknowns": […], "M": [[…]], "F": […]}`` with sympify-able strings."""
        k = self.dim
        return {"unknowns": [str(x) for x in self.unknowns],
                "M": [[str(self.matrix[i, j]) for j in range(k)] for i in range(k)],
                "F": [str(f) for f in self.rhs]}

    def payload(self) -> dict:
        """As :meth:`to_dict` with sympy leaves (for a report block, which writes shared subexpressions)."""
        k = self.dim
        return {"unknowns": list(self.unknowns),
                "M": [[self.matrix[i, j] for j in range(k)] for i in range(k)],
                "F": list(self.rhs)}

    def is_large(self, limit: int) -> bool:
        return any(size_exceeds(e, limit) for e in self.expressions())

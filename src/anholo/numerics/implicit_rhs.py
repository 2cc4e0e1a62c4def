"""Numerical right-hand sides from the implicit form ``M(s) ẋ = F(s)``: nothing symbolic is inverted.

For a field given as a linear system in its accelerations (the nonholonomic field
on C in ``(q, v^α)``: ``q̇ = X_j v^j``, ``g_αβ v̇^β = F_α``; the Euler–Lagrange field
likewise), :func:`compile_implicit` writes ``q̇``, ``M`` and ``F`` as one straight-line
:class:`~anholo.algebra.program.Program` (their common subexpressions one local each) and
hands it to the one code generator (:func:`anholo.algebra.codegen.generate` with
``solve=(n, k)``) — the scheme of PyDy's code generation (Gede, Peterson, Sinha & Moore 2013):

* the single-state function ``rhs(t, y)`` evaluates the program and solves ``M v̇ = F``
  inside the same generated function by Gaussian elimination with partial pivoting
  (``P M = L U``, then ``L z = P F`` and ``U v̇ = z``; Golub & Van Loan (2013),
  Alg. 3.4.1 and 3.1.1–3.1.2): C built at run time where a compiler works (cached),
  else Python with :mod:`math` (``ANHOLO_CODEGEN``); the parameters are run-time
  arguments, so one generation serves every set of values;
* the batch function evaluates the same program over numpy arrays of ``N`` states
  (:meth:`~anholo.algebra.program.Program.function_source`, one ufunc call per
  operation) and the same elimination with partial pivoting elementwise, each
  state choosing its own pivots.

Partial pivoting is backward stable in practice for any nonsingular ``M`` (Golub & Van
Loan (2013), §3.4.6), symmetric or not, definite or not.  The generated code does not
check that ``M`` is positive definite (the unrolled ``L D Lᵀ`` of earlier versions did,
through the signs of its pivots): a mass matrix that is indefinite but nonsingular is
solved all the same.  Where ``M`` is singular (a zero pivot) or an entry is not finite,
``M⁻¹F`` is ``nan`` (the kinematic rates unchanged), where LAPACK's solve would raise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..algebra.codegen import expressions_program, generate
from ..algebra.expressions import without_deltas
from ..algebra.implicit import ImplicitForm
from ..errors import MissingParameterError

__all__ = ["ImplicitRHS", "compile_implicit"]


def _eliminate(A: list, b: list, k: int) -> list:
    """``M⁻¹F`` at many states: ``A`` (``k × k``, row-major) and ``b`` (``k``) lists of arrays of values at the
    states, or numbers (entries that do not depend on the state); Gaussian elimination with partial pivoting
    elementwise — each state its own pivot rows (the first largest entry of a column), the operations of
    :func:`anholo.algebra.program.pivoted_solve` in the same order — ``nan`` where ``M`` is singular.  A column
    of numbers is pivoted once for all states."""
    A = [[A[i * k + c] for c in range(k)] + [b[i]] for i in range(k)]  # rows [M_i0 … M_ik-1, F_i]
    bad = False
    for j in range(k):
        column = [A[i][j] for i in range(j, k)]
        if not any(isinstance(e, np.ndarray) for e in column):  # the same pivot row at every state
            piv = j + max(range(len(column)), key=lambda i: (abs(column[i]), -i))
            A[j], A[piv] = A[piv], A[j]
        elif len(column) > 1:
            piv = np.argmax(np.abs(np.stack(np.broadcast_arrays(*column))), axis=0)  # the first largest
            for off in range(1, len(column)):
                swap = piv == off
                if swap.any():
                    i = j + off
                    for c in range(j, k + 1):
                        A[j][c], A[i][c] = np.where(swap, A[i][c], A[j][c]), np.where(swap, A[j][c], A[i][c])
        if isinstance(A[j][j], np.ndarray):
            best = np.abs(A[j][j])
            bad = bad | ~(best > 0.0) | ~np.isfinite(best)
        elif not 0.0 < abs(A[j][j]) < math.inf:  # a zero pivot at every state
            return [np.nan] * k
        inv = 1.0 / A[j][j]
        for i in range(j + 1, k):
            li = A[i][j] * inv
            if not isinstance(li, np.ndarray) and not li:  # as pivoted_solve: nothing to eliminate
                continue
            for c in range(j + 1, k + 1):
                A[i][c] = A[i][c] - li * A[j][c]
    x = [None] * k
    for i in reversed(range(k)):
        s = A[i][k]
        for c in range(i + 1, k):
            s = s - A[i][c] * x[c]
        x[i] = s / A[i][i]
    return [np.where(bad, np.nan, xi) for xi in x] if bad is not False and bad.any() else x


@dataclass(frozen=True, eq=False)
class ImplicitRHS:
    """``ṡ = (q̇(s), M(s)⁻¹ F(s))`` for the state ``s = (q, v)``, compiled from an implicit form.

    Attributes
    ----------
    states : tuple of Symbol
        The state ``(q^1..q^n, v^1..v^m)``.
    parameters : tuple of Symbol
        The parameters, in the order :meth:`rhs` and :meth:`batch` take their values.
    form : ImplicitForm
        ``M v̇ = F``.
    kinematics : tuple
        ``q̇^A`` as expressions of the state.
    source : str
        The generated source: the single-state function (C where it is built, else Python) and the
        batch function (Python over numpy arrays).
    """

    states: tuple
    parameters: tuple
    form: ImplicitForm
    kinematics: tuple
    source: str = field(default="", init=False)
    _generated: object = field(default=None, init=False, repr=False)
    _batch: object = field(default=None, init=False, repr=False)

    def __post_init__(self):
        M, F = self.form.matrix, list(self.form.rhs)
        n, k = len(self.kinematics), M.rows
        exprs = [*self.kinematics, *(M[i, j] for i in range(k) for j in range(k)), *F]
        program = expressions_program((*self.states, *self.parameters),
                                      [without_deltas(sp.sympify(e)) for e in exprs])  # δ(f) = 0 off f = 0
        groups = [("t", []), ("y", self.states), ("p", self.parameters)]
        generated = generate(program, groups, solve=(n, k))
        lines = program.function_source("_outputs", [("y", self.states), ("p", self.parameters)])
        ns = {"numpy": np}
        exec(compile("\n".join(lines), "<anholo implicit batch>", "exec"), ns)  # noqa: S102 - generated code
        outputs = ns["_outputs"]

        def batch(Y, p):
            out = np.empty(Y.shape[:1] + (n + k,))
            with np.errstate(all="ignore"):
                values = outputs(Y.T, p)
                for i, v in enumerate(values[:n] + tuple(_eliminate(values[n:n + k * k], values[n + k * k:], k))):
                    out[:, i] = v
            return out

        object.__setattr__(self, "_generated", generated)
        object.__setattr__(self, "_batch", batch)
        object.__setattr__(self, "source", generated.source + "\n" + "\n".join(lines) + "\n")

    @property
    def dim(self) -> int:
        return len(self.states)

    @property
    def backend(self) -> str:
        """``"c"`` or ``"python"``: the code :meth:`rhs` runs."""
        return self._generated.backend

    def parameter_vector(self, values: Mapping) -> tuple:
        """The parameter values in the order of :attr:`parameters` (keys: symbols or names)."""
        by_name = {str(k): v for k, v in values.items()}
        missing = [p.name for p in self.parameters if p.name not in by_name]
        if missing:
            raise MissingParameterError(f"no value for the parameter(s) {', '.join(missing)}; give them "
                                        "in the system file's [values] table or as values={...}.")
        return tuple(float(by_name[p.name]) for p in self.parameters)

    def rhs(self, p: Sequence) -> callable:
        """``rhs(t, y)`` (a float array) for :func:`scipy.integrate.solve_ivp` at the parameter values ``p``.

        ``y`` is a float array (or a sequence); ``M v̇ = F`` is solved inside the generated
        function (see the module docstring)."""
        return self._generated.bind(tuple(float(x) for x in p))

    def batch_function(self, p: Sequence) -> callable:
        """``batch(Y)``: ``ṡ`` for the states ``Y`` (shape ``(N, dim)``, floats) at the parameter values ``p``;
        the result has the shape of ``Y``.  Vectorised over the states (numpy ufuncs)."""
        p = tuple(float(x) for x in p)
        return lambda Y: self._batch(np.asarray(Y, dtype=float), p)

    def batch(self, Y, p: Sequence) -> np.ndarray:
        """``ṡ`` for many states at once: ``Y`` of shape ``(N, dim)``, the result of the same shape."""
        return self.batch_function(p)(Y)


def compile_implicit(field_source) -> ImplicitRHS:
    """Compile the nonholonomic field of a :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem`
    (state ``(q, v^α)`` on C) or the Euler–Lagrange field of a :class:`~anholo.dynamics.lagrangian.Lagrangian`
    (state ``(q, v)``) from its implicit form (:meth:`implicit_form`; no symbolic solve).

    Affine constraints (``v^a = β^a(q) ≠ 0``) are supported: their rates are not state
    components.  Parameters: every other symbol of the expressions, sorted by name.
    """
    if hasattr(field_source, "velocities_on_C"):  # a NonholonomicSystem
        nh = field_source
        form = nh.implicit_form(multipliers=False)
        X, vC = nh.frame.vectors, nh.velocities_on_C
        kin = tuple(sp.Add(*[X[j, A] * vC[j] for j in range(nh.n) if X[j, A] != 0 and vC[j] != 0])
                    for A in range(nh.n))
        states = tuple(nh.frame.chart.coordinates) + tuple(nh.free_velocities)
    else:  # a Lagrangian
        L = field_source
        form = L.implicit_form()
        b = L.bundle
        X, v = b.frame.vectors, b.quasi_velocities
        kin = tuple(sp.Add(*[X[j, A] * v[j] for j in range(b.dim) if X[j, A] != 0]) for A in range(b.dim))
        states = tuple(b.chart.coordinates) + tuple(v)
    free = set().union(*(sp.sympify(e).free_symbols for e in list(kin) + form.expressions()))
    params = tuple(sorted(free - set(states), key=lambda s: s.name))
    return ImplicitRHS(states, params, form, kin)

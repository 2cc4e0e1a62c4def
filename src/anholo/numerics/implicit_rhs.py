"""Numerical right-hand sides from the implicit form ``M(s) ẋ = F(s)``: nothing symbolic is inverted.

For a field given as a linear system in its accelerations (the nonholonomic field
on C in ``(q, v^α)``: ``q̇ = X_j v^j``, ``g_αβ v̇^β = F_α``; the Euler–Lagrange field
likewise), :func:`compile_implicit` generates one function evaluating ``q̇``, the
entries of ``M`` and of ``F`` with their common subexpressions computed once
(``sympy.lambdify(cse=True)``), and solves ``M v̇ = F`` per call with LAPACK
(``numpy.linalg.solve``) — the scheme of PyDy's code generation (Gede, Peterson,
Sinha & Moore 2013).  A batch of states is evaluated at once with numpy arrays and a
stacked solve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..algebra.implicit import ImplicitForm
from ..errors import MissingParameterError

__all__ = ["ImplicitRHS", "compile_implicit"]


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
    """

    states: tuple
    parameters: tuple
    form: ImplicitForm
    kinematics: tuple
    _scalar: object = None
    _vector: object = None

    def __post_init__(self):
        args = list(self.states) + list(self.parameters)
        exprs = list(self.kinematics) + list(self.form.matrix) + list(self.form.rhs)
        scalar = sp.lambdify(args, exprs, modules="math", cse=True)
        object.__setattr__(self, "_scalar", lambda *a: list(scalar(*a)))
        object.__setattr__(self, "_vector", sp.lambdify(args, exprs, modules="numpy", cse=True))

    @property
    def dim(self) -> int:
        return len(self.states)

    def parameter_vector(self, values: Mapping) -> tuple:
        """The parameter values in the order of :attr:`parameters` (keys: symbols or names)."""
        by_name = {str(k): v for k, v in values.items()}
        missing = [p.name for p in self.parameters if p.name not in by_name]
        if missing:
            raise MissingParameterError(f"no value for the parameter(s) {', '.join(missing)}; give them "
                                        "in the system file's [values] table or as values={...}.")
        return tuple(float(by_name[p.name]) for p in self.parameters)

    def rhs(self, p: Sequence) -> callable:
        """``rhs(t, y)`` (a list) for :func:`scipy.integrate.solve_ivp` at the parameter values ``p``.

        ``M v̇ = F`` is solved per call: by Cramer's rule in floats for ``dim M ≤ 2`` (cheaper
        than a LAPACK call), else by ``numpy.linalg.solve``."""
        f, p = self._scalar, tuple(float(x) for x in p)
        n, k = len(self.kinematics), self.form.dim
        solve, array = np.linalg.solve, np.array

        if k == 1:
            def rhs(t, y):
                vals = f(*y, *p)
                return vals[:n] + [vals[n + 1] / vals[n]]
        elif k == 2:  # Cramer's rule in floats: a LAPACK call costs more than the arithmetic
            def rhs(t, y):
                vals = f(*y, *p)
                a, b, c, d, e, g = vals[n:n + 6]
                det = a * d - b * c
                return vals[:n] + [(e * d - b * g) / det, (a * g - c * e) / det]
        else:
            def rhs(t, y):
                vals = f(*y, *p)
                M = array(vals[n:n + k * k]).reshape(k, k)
                return vals[:n] + list(solve(M, vals[n + k * k:]))

        return rhs

    def batch(self, Y, p: Sequence) -> np.ndarray:
        """``ṡ`` for many states at once: ``Y`` of shape ``(N, dim)``; one stacked LAPACK solve."""
        Y = np.asarray(Y, dtype=float)
        N = Y.shape[0]
        n, k = len(self.kinematics), self.form.dim
        vals = self._vector(*Y.T, *[float(x) for x in p])
        cols = [np.broadcast_to(np.asarray(v, dtype=float), (N,)) for v in vals]
        out = np.empty((N, n + k))
        out[:, :n] = np.stack(cols[:n], axis=1) if n else out[:, :0]
        M = np.stack(cols[n:n + k * k], axis=1).reshape(N, k, k)
        F = np.stack(cols[n + k * k:], axis=1)
        out[:, n:] = np.linalg.solve(M, F[..., None])[..., 0]
        return out


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

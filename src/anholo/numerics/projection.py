"""Keeping motions on the configuration manifold of holonomic constraints (docs/forces.rst).

Holonomic constraints ``f_ν(q, t) = 0`` enter the fields differentiated, as the kinematic
constraints ``∂f_ν/∂q^A q̇^A + ∂f_ν/∂t = 0``; an integrator then keeps them only up to its
local error, and ``f`` drifts.  The *standard projection method* (Hairer, Lubich & Wanner
2006, Geometric Numerical Integration, §IV.4) removes the drift: after every accepted step
the coordinates are projected back onto ``{f(q, t) = 0}`` by the simplified Newton iteration
of the minimal-norm correction

    q ← q − Jᵀ (J Jᵀ)⁻¹ f(q, t),   J = ∂f/∂q,

and, for a state in natural velocities ``(q, q̇)``, the velocities onto the tangent space,
``q̇ ← q̇ − Jᵀ (J Jᵀ)⁻¹ (J q̇ + ∂f/∂t)``.  A state on the constraint submanifold C in an
adapted frame, ``(q, v^α)``, needs only the first projection: its velocities ``X_α v^α``
lie in D at every q.

:func:`integrate_projected` steps a :mod:`scipy.integrate` solver (``DOP853``, ``RK45``, …),
projects after each step and restarts the solver's derivative there; output times are
interpolated with each step's dense output, and the residual ``max|f|`` is monitored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import DOP853, RK23, RK45

from ..errors import IntegrationError

__all__ = ["integrate_projected", "ProjectedResult", "Projector"]

_SOLVERS = {"DOP853": DOP853, "RK45": RK45, "RK23": RK23}  # one-step explicit methods: restartable after a projection


@dataclass
class Projector:
    """Projection onto ``f(q, t) = 0`` (and the tangent space for natural velocities).

    ``f(t, q) -> (k,)``, ``jac(t, q) -> (k, n)``, ``ft(t, q) -> (k,)`` (``∂f/∂t``); ``n`` coordinates
    lead the state; ``velocities`` is True if the next n entries are the natural velocities.
    """

    f: object
    jac: object
    ft: object
    n: int
    velocities: bool = False
    tol: float = 1e-14
    max_iterations: int = 20

    def __call__(self, t: float, y: np.ndarray) -> np.ndarray:
        y = np.array(y, dtype=float)
        n = self.n
        q = y[:n]
        scale = 1.0 + float(np.max(np.abs(q)))
        for _ in range(self.max_iterations):
            r = np.asarray(self.f(t, q), float)
            if np.max(np.abs(r)) <= self.tol * scale:
                break
            J = np.asarray(self.jac(t, q), float)
            q = q - J.T @ np.linalg.solve(J @ J.T, r)
        else:
            raise IntegrationError(
                "the projection onto the holonomic constraints did not converge (the constraints are "
                "singular along the motion, or the step left their surface too far); use smaller tolerances.")
        y[:n] = q
        if self.velocities:
            J = np.asarray(self.jac(t, q), float)
            u = y[n:2 * n]
            y[n:2 * n] = u - J.T @ np.linalg.solve(J @ J.T, J @ u + np.asarray(self.ft(t, q), float))
        return y

    def residual(self, t: float, q: np.ndarray) -> float:
        return float(np.max(np.abs(np.asarray(self.f(t, q), float)))) if len(q) else 0.0


@dataclass
class ProjectedResult:
    """What :func:`scipy.integrate.solve_ivp` returns, for :func:`integrate_projected` (no events)."""

    t: np.ndarray
    y: np.ndarray
    status: int
    message: str
    nfev: int
    sol: object = None
    t_events: list = None
    y_events: list = None
    max_residual: float = 0.0


def integrate_projected(rhs, t_span, y0, project: Projector, *, method: str = "DOP853", rtol: float = 1e-10,
                        atol: float = 1e-12, t_eval=None, max_steps: int = 10_000_000) -> ProjectedResult:
    """Integrate ``y' = rhs(t, y)`` projecting onto the holonomic constraints after every step (module docstring).

    Returns a :class:`ProjectedResult` with the outputs at ``t_eval`` (default: every step) and
    ``max_residual``, the largest ``|f(q, t)|`` at the accepted (projected) steps.
    """
    if method not in _SOLVERS:
        raise IntegrationError(f"keeping holonomic constraints needs a one-step explicit method; use one of "
                               f"{', '.join(_SOLVERS)} (or project=False).")
    t0, t1 = float(t_span[0]), float(t_span[1])
    nfev = [0]

    def fun(t, y):
        nfev[0] += 1
        return rhs(t, y)

    y = project(t0, np.asarray(y0, float))
    solver = _SOLVERS[method](fun, t0, y, t1, rtol=rtol, atol=atol)
    ts, ys = [t0], [y.copy()]
    out_t = None if t_eval is None else np.asarray(t_eval, float)
    direction = np.sign(t1 - t0)
    k = 0
    if out_t is not None:
        res_t, res_y = [], []
        while k < len(out_t) and (out_t[k] - t0) * direction <= 0:
            res_t.append(out_t[k])
            res_y.append(y.copy())
            k += 1
    worst = project.residual(t0, y[:project.n])
    steps = 0
    status, message = 0, "The solver successfully reached the end of the integration interval."
    while solver.status == "running":
        t_prev = solver.t
        msg = solver.step()
        steps += 1
        if solver.status == "failed":
            status, message = -1, msg or "step failed"
            break
        interp = solver.dense_output() if out_t is not None else None
        y_new = project(solver.t, solver.y)
        worst = max(worst, project.residual(solver.t, y_new[:project.n]))
        if out_t is not None:
            while k < len(out_t) and (out_t[k] - solver.t) * direction <= 0:
                tk = out_t[k]
                res_t.append(tk)
                res_y.append(y_new.copy() if tk == solver.t else project(tk, interp(tk)))
                k += 1
        else:
            ts.append(solver.t)
            ys.append(y_new.copy())
        if solver.status == "running":
            # restart from the projected state (the derivative cached by the method is refreshed)
            solver.y = y_new
            if hasattr(solver, "f"):
                solver.f = fun(solver.t, y_new)
            if hasattr(solver, "K"):
                solver.K[0] = solver.f
        if steps > max_steps or solver.t == t_prev:
            status, message = -1, "too many steps"
            break
    if out_t is None:
        T, Y = np.array(ts), np.array(ys).T
    else:
        T, Y = np.array(res_t), (np.array(res_y).T if res_y else np.zeros((len(y), 0)))
    return ProjectedResult(T, Y, status, message, nfev[0], max_residual=worst)

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
                        atol: float = 1e-12, t_eval=None, progress=None, deadline=None) -> ProjectedResult:
    """Integrate ``y' = rhs(t, y)`` projecting onto the holonomic constraints after every step (module docstring).

    The steps are those of the step loop of :mod:`anholo.numerics.stepping` (the projection is its
    ``project`` hook), so a run here has what every run has: Ctrl-C keeps the steps taken (``status`` 1,
    ``message`` ``"interrupted at t = …"``), a collapse of the step size, a state that is not finite or a
    right-hand side that cannot be evaluated stops the run with its steps kept (``status`` −1 and why),
    progress (``progress(t)``) and the pace check of a ``deadline``.

    Returns a :class:`ProjectedResult` with the outputs at ``t_eval`` (default: every step) and
    ``max_residual``, the largest ``|f(q, t)|`` at the outputs.
    """
    from .stepping import Stop, append_last, run_steps

    if method not in _SOLVERS:
        raise IntegrationError(f"keeping holonomic constraints needs a one-step explicit method; use one of "
                               f"{', '.join(_SOLVERS)} (or project=False).")
    t0, t1 = float(t_span[0]), float(t_span[1])

    class _Chart:
        first = True

    chart = _Chart()
    chart.rhs = rhs

    def monitor(ch, t, y, h, stalled, solver):
        if not np.all(np.isfinite(y)):
            raise Stop(f"the state is no longer finite at t = {t:.10g}")
        if stalled:
            raise Stop(f"the step size collapsed to {h:.3g} at t = {t:.10g}")

    with np.errstate(all="ignore"):
        res = run_steps(chart, t0, y0, t1, method=method, rtol=rtol, atol=atol, t_eval=t_eval, progress=progress,
                        monitor=monitor, deadline=deadline, project=project)
    seg = res["segment"]
    if res["status"] == "interrupted" and res["solver"] is not None:
        append_last(seg, res["t"], res["y"], np.sign(t1 - t0))  # the last accepted step
    T, Y = seg.arrays(len(np.asarray(y0)))
    keep = np.all(np.isfinite(Y), axis=0)
    T, Y = T[keep], Y[:, keep]
    status = {"finished": 0, "interrupted": 1}.get(res["status"], -1)
    if res["status"] == "finished":
        message = "The solver successfully reached the end of the integration interval."
    elif res["status"] == "interrupted":
        message = f"interrupted at t = {float(res['t'])!r}"
        if res["interruption"] is not None:
            raise res["interruption"]
    else:
        message = str(res["message"]) or "step failed"
    worst = max((project.residual(t, y[:project.n]) for t, y in zip(T, Y.T)), default=0.0)
    return ProjectedResult(T, Y, status, message, seg.nfev, max_residual=worst)

"""The step loop behind :func:`~anholo.numerics.simulate`: scipy's one-step solvers driven step by step.

:func:`scipy.integrate.solve_ivp` is a loop over ``OdeSolver.step()``; this module runs the same loop
(the same solver, the same steps, the same output at ``t_eval`` from each step's interpolant, the same
event location: a sign change of ``g(t, y)`` over a step, then Brent's method on the step's
interpolant), so a motion computed here equals ``solve_ivp``'s to the last bit, and adds what a loop of
one's own allows:

* after every accepted step a *monitor* looks at the chart (:mod:`anholo.numerics.charts`): when the
  frame or the pivot degenerates, the motion continues from the state reached in a better chart;
* a step size that collapses (the integrator grinding, ``h < STALL_STEP · |t1 − t0|`` for
  ``STALL_STEPS`` accepted steps in a row) or a state that is no longer finite is a singularity: the
  chart is changed if it is the frame's, otherwise the run stops with a one-line message (t, the
  state, the monitors);
* Ctrl-C (``KeyboardInterrupt``) ends the loop and keeps every accepted step: the result says
  ``interrupted at t = …``;
* progress on a stream about once a second.

The output is a list of :class:`Segment` s, one per chart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import DOP853, LSODA, RK23, RK45, BDF, OdeSolution, Radau
from scipy.optimize import brentq

__all__ = ["Segment", "run_steps", "SOLVERS", "STALL_STEP", "STALL_STEPS"]

SOLVERS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF, "LSODA": LSODA}
STALL_STEP = 1e-9
STALL_STEPS = 500
_EPS = np.finfo(float).eps


@dataclass
class Segment:
    """The part of a motion computed in one chart: output times, states of that chart, interpolants."""

    chart: object  # the driver's chart (see integrate._Chart)
    t: list = field(default_factory=list)
    y: list = field(default_factory=list)
    step_times: list = field(default_factory=list)
    interpolants: list = field(default_factory=list)
    nfev: int = 0
    t_end: float = None

    def arrays(self, dim: int) -> tuple:
        if not self.t:
            return np.zeros(0), np.zeros((dim, 0))
        return np.hstack([np.atleast_1d(x) for x in self.t]), np.hstack(
            [np.asarray(y).reshape(dim, -1) for y in self.y])

    def dense(self):
        """The step interpolants as one :class:`scipy.integrate.OdeSolution` (None if none were kept)."""
        if not self.interpolants:
            return None
        return OdeSolution(self.step_times, self.interpolants)


class Stop(Exception):
    """Raised by a monitor to end the run (a singular motion); carries the one-line reason."""


class Switch(Exception):
    """Raised by a monitor: continue from ``(t, y)`` (the chart's own state) in another chart."""

    def __init__(self, t, y, reason: str):
        super().__init__(reason)
        self.t, self.y, self.reason = t, y, reason


def _event_props(events):
    terminal = [int(getattr(e, "terminal", 0) or 0) for e in events]
    direction = np.array([float(getattr(e, "direction", 0) or 0) for e in events])
    return terminal, direction


def _roots(events, active, sol, t_old, t):
    out = []
    for i in active:
        try:
            out.append(brentq(lambda tt: events[i](tt, sol(tt)), t_old, t, xtol=4 * _EPS, rtol=4 * _EPS))
        except ValueError:  # no sign change on the interpolant: keep the end of the step
            out.append(t)
    return np.array(out)


def run_steps(chart, t0: float, y0, t1: float, *, method, rtol, atol, t_eval=None, events=None,
              dense_output: bool = False, options: dict | None = None, progress=None, monitor=None):
    """Integrate ``chart.rhs`` from ``(t0, y0)`` towards ``t1`` step by step (module docstring).

    ``monitor(chart, t, y, h)`` is called after every accepted step; it may raise :class:`Switch` (the
    loop returns with ``switch`` set) or :class:`Stop`.  Returns a dict with the :class:`Segment`, the
    status (``"finished"``, ``"event"``, ``"switch"``, ``"interrupted"``, ``"failed"``), the message,
    the events found ``(t_events, y_events)`` and, for a switch, the exception."""
    solver_cls = SOLVERS.get(method, method) if isinstance(method, str) else method
    events = [] if events is None else [events] if callable(events) else list(events)
    terminal, direction = _event_props(events)
    seg = Segment(chart)
    solver = solver_cls(chart.rhs, t0, np.asarray(y0, float), t1, rtol=rtol, atol=atol, **(options or {}))
    sign = solver.direction
    t_eval_i = 0
    if t_eval is not None:
        t_eval = np.asarray(t_eval, float)
        side = "left" if chart.first else "right"  # a later segment's t0 was the last one's end
        t_eval_i = int(np.searchsorted(sign * t_eval, sign * t0, side=side))
    elif chart.first:
        seg.t.append(np.array([t0]))
        seg.y.append(np.asarray(y0, float).reshape(-1, 1))
    if dense_output:
        seg.step_times.append(t0)
    g = [e(t0, solver.y) for e in events]
    t_events = [[] for _ in events]
    y_events = [[] for _ in events]
    status, message, switch, stop_t, y = None, "", None, None, None
    small = 0
    span = abs(t1 - t0)
    last_report = time.monotonic()
    steps = 0
    try:
        while status is None:
            msg = solver.step()
            steps += 1
            if solver.status == "failed":
                status, message = "failed", msg or "the step size became too small"
                break
            t_old, t, y = solver.t_old, solver.t, solver.y
            sol = None
            stop_t = None
            if events:
                g_new = [e(t, y) for e in events]
                up = (np.sign(g) != np.sign(g_new))
                active = [i for i in range(len(events)) if up[i] and (
                    direction[i] == 0 or (direction[i] > 0 and g_new[i] > g[i]) or (direction[i] < 0 and g_new[i] < g[i]))]
                if active:
                    sol = solver.dense_output()
                    roots = _roots(events, active, sol, t_old, t)
                    order = np.argsort(sign * roots)
                    for j in order:
                        i = active[j]
                        t_events[i].append(roots[j])
                        y_events[i].append(sol(roots[j]))
                        if terminal[i]:
                            stop_t = roots[j]
                            break
                g = g_new
            if stop_t is not None:
                t, y = stop_t, sol(stop_t)
                status = "event"
            elif solver.status == "finished":
                status = "finished"
            if t_eval is None:
                seg.t.append(np.array([t]))
                seg.y.append(np.asarray(y, float).reshape(-1, 1))
            else:
                new_i = int(np.searchsorted(sign * t_eval, sign * t, side="right"))
                step_t = t_eval[t_eval_i:new_i]
                if step_t.size:
                    if sol is None:
                        sol = solver.dense_output()
                    seg.t.append(step_t)
                    seg.y.append(np.asarray(sol(step_t)).reshape(len(y), -1))
                    t_eval_i = new_i
            if dense_output:
                seg.step_times.append(t)
                seg.interpolants.append(sol if sol is not None else solver.dense_output())
            if status is not None:
                break
            # --- the chart's health ---
            h = abs(t - t_old)
            small = small + 1 if h < STALL_STEP * max(span, abs(t)) else 0
            if monitor is not None:
                monitor(chart, t, y, h, small >= STALL_STEPS, solver)
            elif small >= STALL_STEPS:
                raise Stop(f"the step size collapsed to {h:.3g} at t = {t:.10g}")
            if progress is not None and steps % 32 == 0:
                now = time.monotonic()
                if now - last_report > 1.0:
                    last_report = now
                    progress(t)
    except Switch as exc:
        status, switch, message = "switch", exc, exc.reason
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted"
    seg.nfev = solver.nfev
    t_end, y_end = (stop_t, y) if status == "event" else (solver.t, solver.y)
    return {"segment": seg, "status": status, "message": message, "switch": switch, "t": t_end,
            "y": y_end, "t_events": t_events, "y_events": y_events, "solver": solver}

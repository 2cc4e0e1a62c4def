"""The step loop behind :func:`~anholo.numerics.simulate`: scipy's one-step solvers driven step by step.

:func:`scipy.integrate.solve_ivp` is a loop over ``OdeSolver.step()``; this module runs the same loop
(the same solver, the same steps, the same output at ``t_eval`` from each step's interpolant, the same
event location: a sign change of ``g(t, y)`` over a step, then Brent's method on the step's
interpolant), so a motion computed here equals ``solve_ivp``'s to the last bit, and adds what a loop of
one's own allows:

* after every accepted step a *monitor* looks at the chart (:mod:`anholo.numerics.charts`): when the
  frame or the pivot degenerates, the motion continues from the state reached in a better chart;
* a step size that collapses (the integrator grinding, ``h < STALL_STEP · |t1 − t0|`` and
  ``h < COLLAPSE · h_max``, the largest step of the run, for ``STALL_STEPS`` accepted steps in a row:
  a long run whose steps are all short is not a collapse) or a state that is no longer finite is a singularity: the
  chart is changed if it is the frame's, otherwise the run stops with a one-line message (t, the
  state, the monitors);
* a right-hand side that is not finite at the initial state stops the run with that reason (generated C
  gives ``inf``/``nan`` where Python code raises ZeroDivisionError);
* a solver whose initial step size is not a number (``atol = 0`` with a state component that is 0:
  scipy's error scale is then 0 and its step loop never ends) is stopped before its first step;
* with a ``deadline`` (a ``time.monotonic()`` value: the command line's time budget), a run whose pace
  over three consecutive seconds says it would need more than ``GRIND_FACTOR`` times the time left is
  stopped at once with its steps kept, instead of grinding on until the budget runs out (a step size
  that shrinks without end, e.g. a motion driven by ``exp(1000 t)``);
* Ctrl-C (``KeyboardInterrupt``) ends the loop and keeps every accepted step: the result says
  ``interrupted at t = …``; any other interrupt that is not an ``Exception`` (the command line's time
  budget raises one from SIGALRM) ends it the same way, and is handed back to be raised again;
* a monitor's :class:`Stop` or a right-hand side that cannot be evaluated ends the loop with the steps
  kept (status ``"stopped"``), so that the caller can report the motion computed so far;
* with a ``project`` map (holonomic constraints kept by projection, :mod:`anholo.numerics.projection`)
  the state is projected after every accepted step and the solver restarted from it (Hairer, Lubich &
  Wanner 2006, §IV.4); the outputs are projected too;
* progress on a stream about once a second.

The output is a list of :class:`Segment` s, one per chart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import DOP853, LSODA, RK23, RK45, BDF, OdeSolution, Radau
from scipy.optimize import brentq

__all__ = ["Segment", "run_steps", "SOLVERS", "STALL_STEP", "STALL_STEPS", "GRIND_FACTOR"]

SOLVERS = {"RK23": RK23, "RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF, "LSODA": LSODA}
STALL_STEP = 1e-9
STALL_STEPS = 500
#: With a deadline: stop when the run's pace says it needs more than GRIND_FACTOR times the time left.
GRIND_FACTOR = 4.0
#: ... for this many consecutive one-second looks.
GRIND_LOOKS = 3
#: Such a stop is called a collapse of the step size if the step is below COLLAPSE times the largest one taken.
COLLAPSE = 1e-3
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
    """Raised by a monitor: continue from ``(t, y)`` (the chart's own state) in another chart: ``frame`` one of
    the system's frames (``(condition, label, compiled, parameters, state)`` at that point), else the chart of
    Maggi's equations with the best pivot there."""

    def __init__(self, t, y, reason: str, frame=None):
        super().__init__(reason)
        self.t, self.y, self.reason, self.frame = t, y, reason, frame


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
              dense_output: bool = False, options: dict | None = None, progress=None, monitor=None,
              deadline: float | None = None, project=None):
    """Integrate ``chart.rhs`` from ``(t0, y0)`` towards ``t1`` step by step (module docstring).

    ``monitor(chart, t, y, h)`` is called after every accepted step; it may raise :class:`Switch` (the
    loop returns with ``switch`` set) or :class:`Stop`.  Returns a dict with the :class:`Segment`, the
    status (``"finished"``, ``"event"``, ``"switch"``, ``"interrupted"``, ``"failed"`` (the solver
    failed), ``"stopped"`` (a :class:`Stop` or an error of the right-hand side, in ``error``)), the
    message, the events found ``(t_events, y_events)``, for a switch the exception, and for an
    interrupt that is not Ctrl-C the exception (``interruption``) to be raised again by the caller."""
    solver_cls = SOLVERS.get(method, method) if isinstance(method, str) else method
    events = [] if events is None else [events] if callable(events) else list(events)
    terminal, direction = _event_props(events)
    seg = Segment(chart)
    extra = [0]
    y0 = np.asarray(y0, float) if project is None else project(t0, np.asarray(y0, float))
    try:
        solver = solver_cls(chart.rhs, t0, y0, t1, rtol=rtol, atol=atol, **(options or {}))
    except (ZeroDivisionError, OverflowError, ValueError) as exc:  # the right-hand side at the start
        return {"segment": seg, "status": "stopped", "message": str(exc), "switch": None, "t": t0, "y": y0,
                "t_events": [[] for _ in events], "y_events": [[] for _ in events], "solver": None,
                "error": exc, "interruption": None}
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
    error, interruption = None, None
    small = 0
    span = abs(t1 - t0)
    last_report = time.monotonic()
    look = {"wall": last_report, "t": t0, "strikes": 0, "h_max": 0.0}
    steps = 0
    try:
        h0 = getattr(solver, "h_abs", 1.0)
        f0 = getattr(solver, "f", None)
        if f0 is not None and not np.all(np.isfinite(f0)):  # compiled code gives inf/nan where Python raised
            raise Stop(f"the right-hand side is not finite at the initial state (t = {t0:g}): the frame, the "
                       "Hessian or a coordinate chart is singular there; start elsewhere or choose other coordinates")
        if h0 is not None and not np.isfinite(h0):
            raise Stop(f"the initial step size is not a number at t = {t0:g}: with atol = 0 a state component "
                       "that is 0 cannot be controlled by the relative tolerance alone; give a positive atol")
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
            if project is not None:  # back onto f(q, t) = 0, and the solver restarted from there
                if sol is None and (t_eval is not None or dense_output):
                    sol = solver.dense_output()  # the step's interpolant, before the restart changes its data
                y = project(t, y)
                if status is None:
                    solver.y = y
                    if hasattr(solver, "f"):
                        solver.f = chart.rhs(t, y)
                        extra[0] += 1
                    if hasattr(solver, "K"):
                        solver.K[0] = solver.f
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
                    out = np.asarray(sol(step_t)).reshape(len(y), -1)
                    if project is not None:
                        out = np.column_stack([y if tk == t else project(tk, out[:, i])
                                               for i, tk in enumerate(step_t)])
                    seg.y.append(out)
                    t_eval_i = new_i
            if dense_output:
                seg.step_times.append(t)
                seg.interpolants.append(sol if sol is not None else solver.dense_output())
            if status is not None:
                break
            # --- the chart's health ---
            h = abs(t - t_old)
            if h > look["h_max"]:
                look["h_max"] = h
            small = small + 1 if h < STALL_STEP * max(span, abs(t)) and h < COLLAPSE * look["h_max"] else 0
            if monitor is not None:
                monitor(chart, t, y, h, small >= STALL_STEPS, solver)
            elif small >= STALL_STEPS:
                raise Stop(f"the step size collapsed to {h:.3g} at t = {t:.10g}")
            if (progress is not None or deadline is not None) and steps % 32 == 0:
                now = time.monotonic()
                if now - last_report > 1.0:
                    last_report = now
                    if progress is not None:
                        progress(t)
                    if deadline is not None:
                        _pace(look, now, t, t1, h, deadline)
    except Switch as exc:
        status, switch, message = "switch", exc, exc.reason
    except Stop as exc:
        status, message, error = "stopped", str(exc), exc
    except (ZeroDivisionError, OverflowError, ValueError) as exc:  # the right-hand side cannot be evaluated
        status, message, error = "stopped", str(exc), exc
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted"
    except BaseException as exc:  # another interrupt (the time budget's SIGALRM): keep the steps, raise it later
        if isinstance(exc, (Exception, SystemExit, GeneratorExit)):
            raise
        status, message, interruption = "interrupted", "interrupted", exc
    seg.nfev = solver.nfev + extra[0]
    t_end, y_end = (stop_t, y) if status == "event" else (solver.t, solver.y)
    return {"segment": seg, "status": status, "message": message, "switch": switch, "t": t_end,
            "y": y_end, "t_events": t_events, "y_events": y_events, "solver": solver, "error": error,
            "interruption": interruption}


def _pace(look: dict, now: float, t: float, t1: float, h: float, deadline: float) -> None:
    """Raise :class:`Stop` when, for GRIND_LOOKS looks in a row, the time still needed at the pace of the last
    look (integration time per second of wall time) exceeds GRIND_FACTOR times the time left."""
    dt, dwall = abs(t - look["t"]), now - look["wall"]
    look["t"], look["wall"] = t, now
    left = max(deadline - now, 1e-3)
    need = abs(t1 - t) * dwall / dt if dt > 0 else float("inf")
    look["strikes"] = look["strikes"] + 1 if need > GRIND_FACTOR * left else 0
    if look["strikes"] >= GRIND_LOOKS:
        pace = (f"at this pace the run would need about {need:.3g} s more, over {GRIND_FACTOR:g} times the "
                f"{left:.3g} s left of its time budget")
        if h < COLLAPSE * look["h_max"]:
            raise Stop(f"the step size collapsed to {h:.3g} (from {look['h_max']:.3g}) at t = {t:.10g}: {pace} (a "
                       "motion that runs away or blows up, or a tolerance too tight; shorten the time or check the "
                       "inputs and parameters)")
        raise Stop(f"the run is too long for its time budget: at t = {t:.10g}, {pace}; raise the budget or "
                   "shorten the time")


def append_last(seg, t, y, sign) -> None:
    """After a run that ended early: its last good (accepted) state as the last output, if later than the
    last output time (with output times, the motion up to the last accepted step is kept)."""
    y = np.asarray(y, float)
    if not np.all(np.isfinite(y)):
        return
    if seg.t and sign * float(np.atleast_1d(seg.t[-1])[-1]) >= sign * t:
        seg.t_end = float(np.atleast_1d(seg.t[-1])[-1])
        return
    seg.t.append(np.array([float(t)]))
    seg.y.append(y.reshape(-1, 1).copy())
    seg.t_end = float(t)


class Reporter:
    """Progress of the step loop (:mod:`anholo.numerics.stepping`): ``t`` on a stream, about once a second."""

    def __init__(self, t0: float, t1: float, stream, label: str):
        self.t0, self.t1, self.stream, self.label = t0, t1, stream, label
        self.shown = False

    def __call__(self, t):
        frac = (t - self.t0) / (self.t1 - self.t0)
        print(f"\r{self.label}: t = {t:.6g} of {self.t1:g} ({100 * frac:.0f}%)", end="", file=self.stream,
              flush=True)
        self.shown = True

    def close(self):
        if self.shown:
            print(file=self.stream, flush=True)
            self.shown = False

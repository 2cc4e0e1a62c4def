"""A motion through frame singularities: the step loop with its monitors and the change of chart.

:func:`integrate_charts` integrates a compiled field step by step (:mod:`anholo.numerics.stepping`)
and watches its chart after every accepted step (:mod:`anholo.numerics.charts`):

1. In the field's own chart (the frame route, ``(q, v^α)`` with ``q̇ = X_α v^α + β``) the frame
   condition ``κ_X`` is read; when it exceeds ``max(FRAME_SWITCH, START_FACTOR κ_X(t0))`` and the frame
   and pivot conditions of Maggi's equations for the dependent velocities with the best pivot at ``q``
   (QR with column pivoting of ``κ(q)``) are ``BETTER`` times smaller, or the step size collapses, or the state
   stops being finite, the motion goes on in those Maggi's equations, from the natural velocities ``q̇``
   of the last good state — or in the system's own adapted frame (:meth:`ChartAtlas.own_frame
   <anholo.numerics.charts.ChartAtlas.own_frame>`) when its frame condition there is at least as good and
   ``BETTER`` times smaller than the chart's (a user's choice of dependent velocities with a pole on the
   motion).  (The cost of a step grows with ``κ_X`` well before the frame fails: on the
   Veselova system the evaluations per unit time triple between ``κ_X = 3`` and ``κ_X = 12``.)  On C both charts describe the same motion, so
   nothing is lost but rounding.
2. In a chart of Maggi's equations, the pivot condition ``‖κ‖ / σ_min(κ_P(q))``: above ``PIVOT_SWITCH`` (and
   ``PIVOT_BETTER`` times the best's) the dependent velocities are chosen again, the same way (or the run
   goes on in the system's own frame, if its frame condition is better than that best pivot); and the mass
   condition ``cond g``: above ``SINGULAR_MASS`` (or when the steps collapse in the best chart) the
   motion itself is singular, and the run stops with :class:`~anholo.errors.IntegrationError`: t, the
   state, and why.

Without an atlas (a compiled field alone) nothing is switched: a collapse of the step size stops the
run with the same kind of message instead of grinding on.  Nothing computed is lost: Ctrl-C (and any
other interrupt) keeps the motion up to the last accepted step, and a run that stops (a singular motion,
a failure of the solver) returns its motion up to the last good state with the reason in ``error``, for
:func:`~anholo.numerics.integrate.simulate` to raise with that motion attached.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import AnholoError, IntegrationError, SimulationError
from .charts import FRAME_SWITCH, PIVOT_BETTER, PIVOT_SWITCH, SINGULAR_MASS, frame_condition, frame_rows
from .stepping import Stop, Switch, append_last as _append_last, run_steps

__all__ = ["integrate_charts", "START_FACTOR"]

#: A frame chart is left when its condition exceeds FRAME_SWITCH and START_FACTOR times its value at the start.
START_FACTOR = 5.0
#: A frame chart is left for Maggi's equations only if their frame and pivot conditions are BETTER times smaller.
#: As for a change of dependent velocities (PIVOT_BETTER): every look at which a chart four times better is
#: passed over lets the frame approach its pole further at a growing cost per step.  At 10 the Chaplygin sleigh
#: written in the spatial velocities of SE(2) (tests/numerics/data/sleigh_spatial_frame.toml) stayed in its frame
#: until the condition was 24 and needed 2.15 times the evaluations of its regular body frame over T = 20; at 4 it
#: leaves at 10 and needs 1.85 times (benchmarks/bench_frame_singularity.py, the held-out table).
BETTER = 4.0
#: Accepted steps between two looks at the chart (sooner when the step size halves).
CHECK_EVERY = 16
#: Look every step past this share of the logarithmic way from the start to the threshold, every 4 steps past
#: the second (:func:`integrate_charts`, ``pace``).
PACE = (0.4, 0.0)


@dataclass
class _Chart:
    """A chart in use: its compiled field, parameter vector and right-hand side; Maggi charts carry the
    atlas's record (dependent coordinates, mass block)."""

    compiled: object
    p: tuple
    rhs: object
    t0: float
    label: str
    maggi: object = None
    first: bool = False
    threshold: float = FRAME_SWITCH
    start: float = 1.0  # the frame condition at the start of the run (the frame chart)
    inputs: dict = None  # the inputs' callables reading this chart's state (None: those of the run)


def _state_text(names, y) -> str:
    return "(" + ", ".join(f"{n} = {float(v):.6g}" for n, v in zip(names, y)) + ")"


def _natural(chart: _Chart, t, y) -> tuple:
    c = chart.compiled
    y = np.asarray(y, float)
    with np.errstate(all="ignore"):
        u = c.natural_velocities(y.reshape(-1, 1), chart.p, t)[:, 0]
    return y[:c.n], u


def _state_in(target, params: dict, q, u, t) -> tuple:
    """``(parameter vector, state)`` of the natural state ``(q, q̇)`` in the chart of the compiled field
    ``target`` (the constraints are not checked again: the state came from a chart of the same motion)."""
    pc = target.parameter_vector({k: v for k, v in params.items() if k in target.parameters})
    with np.errstate(all="ignore"):
        return pc, target.initial_state(q, u, None, pc, constraint_tol=np.inf, t0=t)


def _params(compiled, p) -> dict:
    return dict(zip(compiled.parameters, (float(x) for x in p)))


def integrate_charts(compiled, rhs, y0, t0, t1, p, pdict, *, method, rtol, atol, t_eval, events, dense_output,
                     options, atlas, inputs, progress, deadline=None, project=None, written_inputs=None) -> dict:
    """Integrate from ``y0`` (the state of ``compiled``) over ``[t0, t1]``, changing chart when the monitors
    say so (module docstring).  Returns ``{"segments", "t_events", "y_events", "nfev", "message", "notes"}``.

    Raises
    ------
    IntegrationError
        A singular motion (with t, the state and why), or a failure of the solver.
    """
    params = {**pdict}
    if project is not None:
        atlas = None
    if atlas is not None and inputs and getattr(compiled, "control_names", ()) and (
            written_inputs is None or written_inputs.callables):
        atlas = None  # a Python callable reads the state of the first chart: watch, but do not switch
    if atlas is not None and compiled.kind != ("nonholonomic" if atlas.k else "euler-lagrange"):
        atlas = None  # the atlas's charts are of another field (vakonomic, Chetaev, or constraints ignored)
    first_maggi = atlas.adopted(compiled) if atlas is not None else None
    chart = _Chart(compiled, tuple(p), rhs, t0, "frame" if first_maggi is None else _maggi_label(first_maggi),
                   maggi=first_maggi, first=True)
    if atlas is not None and first_maggi is None:
        with np.errstate(all="ignore"):
            start = frame_condition(compiled, y0, p, t0)
        chart.threshold = max(FRAME_SWITCH, START_FACTOR * start) if np.isfinite(start) else float("inf")
        chart.start = start
    names = compiled.coordinate_names
    last = {"t": t0, "y": np.asarray(y0, float)}

    def describe(ch, t, y) -> str:
        q, u = _natural(ch, t, y)
        return (f"at t = {t:.10g}, q = {_state_text(names, q)}, q_dot = "
                f"{_state_text([n + '_dot' for n in names], u)}")

    watch = {"since": CHECK_EVERY, "h": float("inf"), "every": CHECK_EVERY}

    def due(h, stalled, finite) -> bool:
        """Look at the chart every ``watch["every"]`` steps (CHECK_EVERY while it is well conditioned, more
        often as its condition nears the threshold: :func:`pace`), and at once when the step shrank to half
        the step of the last look (a singularity ahead makes the steps shrink), the steps stalled or the state
        broke."""
        watch["since"] += 1
        if watch["since"] >= watch["every"] or h < 0.5 * watch["h"] or stalled or not finite:
            watch["since"], watch["h"] = 0, h
            return True
        return False

    def pace(cond, threshold, base) -> None:
        """Look every step once the condition has gone ``PACE[0]`` (40 %) of the way from ``base`` (its value at
        the start of a frame chart; 1, the best, in Maggi's equations) to its threshold on a logarithmic scale,
        every 4 steps once it is above ``base`` (``PACE[1]``): a chart's condition can grow from a few to hundreds within CHECK_EVERY smooth steps
        (the knife edge solved for ẋ near θ = π), and every step taken near the pole of a chart costs."""
        base = max(base, 1.0) if np.isfinite(base) else 1.0
        way = np.log(max(cond, base) / base) / np.log(max(threshold / base, 1.0 + 1e-9))
        watch["every"] = 1 if way > PACE[0] else (4 if way > PACE[1] else CHECK_EVERY)

    def monitor(ch, t, y, h, stalled, solver):
        finite = bool(np.all(np.isfinite(y)))
        if not due(h, stalled, finite):
            last["t"], last["y"] = t, np.array(y)
            return
        if ch.maggi is None:  # the frame route
            if atlas is None:
                if not finite or stalled:
                    why = "the state is no longer finite" if not finite else f"the step size collapsed to {h:.3g}"
                    cond = frame_condition(ch.compiled, last["y"], ch.p, last["t"])
                    raise Stop(f"{why} {describe(ch, last['t'], last['y'])}; the frame condition there is "
                               f"{cond:.3g} (a singular frame or Hessian): simulate the System itself "
                               "(simulate(System.load(...), ...)) or use `anholo simulate`, which change chart")
                last["t"], last["y"] = t, np.array(y)
                return
            if not finite:
                raise Switch(last["t"], last["y"], "the state of the frame chart became non-finite")
            cond = frame_condition(ch.compiled, y, ch.p, t)
            pace(cond, ch.threshold, ch.start)
            if stalled:
                raise Switch(t, np.array(y), f"the step size collapsed to {h:.3g} (frame condition {cond:.3g})")
            if cond > ch.threshold:
                frame = _frame_candidate(ch, t, y)
                other = _alternative(ch, t, y)
                if frame is not None and frame[0] * BETTER < cond and (other is None or frame[0] <= other):
                    raise Switch(t, np.array(y), f"frame condition {cond:.3g}, {frame[0]:.3g} in {frame[1]}",
                                 frame=frame)
                if other is not None and other * BETTER < cond:
                    raise Switch(t, np.array(y), f"frame condition {cond:.3g}, {other:.3g} in Maggi's equations")
                ch.threshold = 2 * cond  # no better chart here: look again when it has doubled
            last["t"], last["y"] = t, np.array(y)
            return
        # a chart of Maggi's equations
        if not finite:
            raise Stop(f"the state is no longer finite after {describe(ch, last['t'], last['y'])}")
        q = np.asarray(y[:ch.compiled.n], float)
        piv = atlas.pivot_condition(ch.maggi.dependent, q, params, t)
        pace(piv, PIVOT_SWITCH, 1.0)
        if piv > PIVOT_SWITCH or stalled:
            best = atlas.best(q, params, t)
            other = atlas.pivot_condition(best, q, params, t) if best != ch.maggi.dependent else float("inf")
            frame = _frame_candidate(ch, t, y)
            if frame is not None and frame[0] * PIVOT_BETTER < piv and frame[0] <= other:
                raise Switch(t, np.array(y), f"pivot condition {piv:.3g}, frame condition {frame[0]:.3g} in "
                             f"{frame[1]}", frame=frame)
            if other * PIVOT_BETTER < piv:
                raise Switch(t, np.array(y), f"pivot condition {piv:.3g}")
        mass = atlas.mass_condition(ch.maggi, y, params, t)
        if mass > SINGULAR_MASS or stalled:
            best = atlas.best(q, params, t)  # singular in this chart: is it the chart's fault?
            if best != ch.maggi.dependent and atlas.pivot_condition(best, q, params, t) < piv:
                raise Switch(t, np.array(y), f"mass condition {mass:.3g} with pivot condition {piv:.3g}")
            why = (f"the step size collapsed to {h:.3g}; " if stalled else "") + (
                f"the kinetic-energy form on D is singular there (condition {mass:.3g} of the mass block "
                f"g = X^T W X in the best choice of dependent velocities, "
                f"{', '.join(ch.maggi.dependent) or 'none'}; pivot condition {piv:.3g}): the coordinates are "
                "singular there (e.g. Euler angles at gimbal lock) or the Lagrangian is degenerate; choose "
                "other coordinates")
            raise Stop(f"the motion is singular {describe(ch, t, y)}: {why}")
        last["t"], last["y"] = t, np.array(y)

    def _alternative(ch, t, y):
        """How good the best chart of Maggi's equations is at the same point: the larger of its frame and its
        pivot conditions (None if there is none)."""
        q, u = _natural(ch, t, y)
        try:
            new = atlas.chart(atlas.best(q, params, t))
            pc, y_new = _state_in(new.compiled, params, q, u, t)
        except SimulationError:
            return None
        return max(frame_condition(new.compiled, y_new, pc, t), atlas.pivot_condition(new.dependent, q, params, t))

    def _frame_candidate(ch, t, y):
        """The system's own frame (:meth:`~anholo.numerics.charts.ChartAtlas.own_frame`) at the state ``y`` of
        ``ch``: ``(frame condition, label, compiled, parameters, state)``, or None (no such frame, or it is the
        chart's own)."""
        own = atlas.own_frame()
        if own is None or own is ch.compiled:
            return None
        q, u = _natural(ch, t, y)
        try:
            pc, y_new = _state_in(own, params, q, u, t)
        except (AnholoError, ZeroDivisionError, OverflowError, ValueError):
            return None
        if not np.all(np.isfinite(y_new)):
            return None
        with np.errstate(all="ignore"):
            if ch.maggi is None and ch.compiled.dim == own.dim and np.allclose(
                    frame_rows(ch.compiled, y, ch.p, t), frame_rows(own, y_new, pc, t), rtol=1e-12, atol=1e-12):
                return None  # the chart's own frame
            return frame_condition(own, y_new, pc, t), "the system's frame", own, pc, y_new

    def _other_chart(ch, t, y) -> bool:
        """Whether the best chart at the state ``y`` of ``ch`` is another one than ``ch``."""
        if ch.maggi is None:
            return True
        q, _ = _natural(ch, t, y)
        try:
            return atlas.best(q, params, t) != ch.maggi.dependent
        except (SimulationError, ValueError, np.linalg.LinAlgError):
            return False

    segments, notes = [], []
    t_events = [[] for _ in (events if isinstance(events, (list, tuple)) else ([events] if events else []))]
    y_events = [[] for _ in t_events]
    nfev, message = 0, ""
    t_start, y_start = t0, np.asarray(y0, float)
    error = None
    step_options = options
    while True:
        with np.errstate(all="ignore"):
            res = run_steps(chart, t_start, y_start, t1, method=method, rtol=rtol, atol=atol, t_eval=t_eval,
                            events=_in_chart(events, chart), dense_output=dense_output, options=step_options,
                            progress=progress, monitor=monitor, deadline=deadline, project=project)
        seg = res["segment"]
        seg.t_end = res["t"]
        nfev += seg.nfev
        if (res["status"] == "stopped" and atlas is not None and not isinstance(res["error"], Stop)
                and last["t"] != chart.t0 and _other_chart(chart, last["t"], last["y"])):
            # the right-hand side cannot be evaluated beyond the last good state (a pole of this chart's
            # frame or pivot that a step landed on): go on from that state in the best chart there
            frame = _frame_candidate(chart, last["t"], last["y"])
            res = dict(res, status="switch", switch=Switch(last["t"], np.array(last["y"]),
                                                           f"the field could not be evaluated: {res['error']}",
                                                           frame=frame if frame and frame[0] < FRAME_SWITCH else None))
        for i, (te, ye) in enumerate(zip(res["t_events"], res["y_events"])):
            t_events[i] += te
            y_events[i] += ye
        segments.append(seg)
        status = res["status"]
        if status == "switch":
            sw = res["switch"]
            _trim(seg, sw.t, np.sign(t1 - t0))
            seg.t_end = sw.t
            q, u = _natural(chart, sw.t, sw.y)
            try:
                if sw.frame is not None:  # one of the system's frames, its state computed at the same point
                    new, (_, label, target, pc, y_new) = None, sw.frame
                else:
                    new = atlas.chart(atlas.best(q, params, sw.t))
                    target = new.compiled
                    pc, y_new = _state_in(target, params, q, u, sw.t)
                with np.errstate(all="ignore"):
                    new_inputs = (written_inputs.functions(target, p, pc)
                                  if written_inputs is not None and target.control_names else None)
                    rhs_new = target.rhs(pc, new_inputs)
            except SimulationError as exc:
                _close(progress)
                raise IntegrationError(f"the integration stopped {describe(chart, sw.t, sw.y)}: {sw.reason} and "
                                       f"no other chart is available ({exc}).") from None
            if not np.all(np.isfinite(y_new)):
                _close(progress)
                raise IntegrationError(f"the integration stopped {describe(chart, sw.t, sw.y)}: {sw.reason}, and "
                                       "the state is not finite in the best chart.")
            label = _maggi_label(new) if new is not None else label
            notes.append(f"changed chart at t = {sw.t:.10g} ({sw.reason}): {chart.label} -> {label}")
            chart = _Chart(target, tuple(pc), rhs_new, sw.t, label, maggi=new, inputs=new_inputs)
            if new is None:  # a frame chart again: watched from its condition here, as a run's first chart
                with np.errstate(all="ignore"):
                    chart.start = frame_condition(target, y_new, pc, sw.t)
                chart.threshold = max(FRAME_SWITCH, START_FACTOR * chart.start)
            t_start, y_start = sw.t, y_new
            last["t"], last["y"] = sw.t, y_new
            h_last = getattr(res["solver"], "step_size", None)
            if h_last and np.isfinite(h_last) and "first_step" not in (options or {}):
                # the new chart starts with the step the old one last took (the same motion, the same
                # scale of time) instead of estimating one from scratch
                step_options = dict(options or {}, first_step=min(abs(h_last), abs(t1 - sw.t)))
            watch["since"], watch["h"], watch["every"] = CHECK_EVERY, float("inf"), CHECK_EVERY
            continue
        if status == "failed":
            error = (f"the integration stopped: {res['message']} {describe(chart, res['t'], res['y'])}; the frame, "
                     "the Hessian or a coordinate chart is singular there.")
            _keep_finite(seg, last["t"], np.sign(t1 - t0))
            _append_last(seg, last["t"], last["y"], np.sign(t1 - t0))
            message = f"stopped at t = {float(seg.t_end)!r}"
        elif status == "stopped":
            exc = res["error"]
            if isinstance(exc, Stop):
                error = f"the integration stopped: {exc}."
            else:
                error = (f"the right-hand side of the {compiled.kind} field could not be evaluated ({exc}) beyond "
                         f"the last good state {describe(chart, last['t'], last['y'])}; the frame, the Hessian, a "
                         "coordinate chart or an input is singular along the motion.")
            _keep_finite(seg, last["t"], np.sign(t1 - t0))
            _append_last(seg, last["t"], last["y"], np.sign(t1 - t0))
            message = f"stopped at t = {float(seg.t_end)!r}"
        elif status == "interrupted":
            if res["solver"] is not None and np.all(np.isfinite(res["y"])):
                _append_last(seg, res["t"], res["y"], np.sign(t1 - t0))  # the last accepted step
            message = f"interrupted at t = {float(seg.t_end)!r}"
        elif status == "event":
            message = f"stopped by an event at t = {seg.t_end:.10g}"
        else:
            message = "The solver successfully reached the end of the integration interval."
        break
    _close(progress)
    return {"segments": segments, "t_events": [np.array(x) for x in t_events],
            "y_events": [np.array(x) for x in y_events], "nfev": nfev, "message": message, "notes": notes,
            "error": error, "interruption": res.get("interruption")}


def _keep_finite(seg, t_good, sign) -> None:
    """After a stop: keep the outputs up to the last good state ``t_good`` and drop any that are not finite."""
    _trim(seg, t_good, sign)
    keep_t, keep_y = [], []
    for t, y in zip(seg.t, seg.y):
        y = np.asarray(y, float)
        mask = np.all(np.isfinite(y), axis=0)
        if mask.any():
            keep_t.append(np.atleast_1d(t)[mask])
            keep_y.append(y[:, mask])
    seg.t, seg.y = keep_t, keep_y
    seg.t_end = float(keep_t[-1][-1]) if keep_t else seg.t_end


def _in_chart(events, chart):
    """The events as functions of the chart's state: those marked ``natural = True`` are functions
    ``g(t, (q, q̇))`` of the natural state and are evaluated through ``q̇ = X_α v^α + β``; the others get
    the chart's state (its first n entries are the coordinates in every chart)."""
    if events is None:
        return None
    out = []
    for e in ([events] if callable(events) else list(events)):
        if getattr(e, "natural", False):
            def g(t, y, e=e):
                q, u = _natural(chart, t, y)
                return e(t, np.concatenate([q, u]))

            g.terminal, g.direction = getattr(e, "terminal", False), getattr(e, "direction", 0)
            out.append(g)
        else:
            out.append(e)
    return out


def _maggi_label(chart) -> str:
    return f"Maggi's equations, dependent {', '.join(chart.dependent)}" if chart.dependent else \
        "natural velocities"


def _trim(seg, t_end, sign) -> None:
    """Drop the outputs of a segment after ``t_end`` (a state that was not finite)."""
    keep_t, keep_y = [], []
    for t, y in zip(seg.t, seg.y):
        t = np.atleast_1d(t)
        mask = sign * t <= sign * t_end
        if mask.any():
            keep_t.append(t[mask])
            keep_y.append(np.asarray(y)[:, mask])
    seg.t, seg.y = keep_t, keep_y
    while seg.step_times and sign * seg.step_times[-1] > sign * t_end:
        seg.step_times.pop()
        seg.interpolants.pop()


def _close(progress) -> None:
    if progress is not None:
        progress.close()

"""Integrating a field: :func:`simulate` on scipy's solvers (those of :func:`scipy.integrate.solve_ivp`, stepped
by :mod:`anholo.numerics.stepping`, changing chart where a frame degenerates: :mod:`anholo.numerics.switching`)
and its :class:`Trajectory`.

Defaults: the explicit Runge–Kutta method ``DOP853`` (order 8) with ``rtol = 1e-10``
and ``atol = 1e-12`` (:data:`DEFAULT_METHOD`, :data:`DEFAULT_RTOL`,
:data:`DEFAULT_ATOL`).  With these, energy is conserved to a relative 1e-8 or
better over 1000 time units on the conservative catalogue examples that were
checked (``tests/numerics``); use ``method="Radau"`` or ``"LSODA"`` for stiff
problems.  Every other keyword is passed to ``solve_ivp`` (``first_step``,
``max_step``, ``vectorized`` is not supported by the compiled right-hand side).

States are those of the field (:mod:`anholo.numerics.ode`): ``(q, v^α)`` on C for
the nonholonomic field, so the constraints hold to rounding along the whole
motion; initial data are given in natural velocities and converted.
"""

from __future__ import annotations

import csv
import sys
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import AnholoError, IntegrationError, SimulationError
from .compile import CompiledSystem, compile_system
from .monitors import energy
from .stepping import Reporter as _Reporter
from .monitors import energy_drift
from .monitors import constraint_residuals

__all__ = ["simulate", "Trajectory", "DEFAULT_METHOD", "DEFAULT_RTOL", "DEFAULT_ATOL", "as_compiled"]

DEFAULT_METHOD = "DOP853"
DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-12
_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def as_compiled(system) -> CompiledSystem:
    """A :class:`CompiledSystem` from a compiled system, a FirstOrderSystem or a field."""
    return system if isinstance(system, CompiledSystem) else compile_system(system)


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A motion computed by :func:`simulate`.

    Attributes
    ----------
    t : ndarray
        Times, shape ``(N,)``.
    states : ndarray
        The field's state along the motion (``state_names``), shape ``(dim, N)``.
    q, qdot : ndarray
        Coordinates and natural velocities, shape ``(n, N)``.
    multipliers : ndarray
        Shape ``(k, N)``: multipliers of the constraints as written (nonholonomic: ``E_A(L) = λ_a ∂φ_a/∂q̇^A``;
        vakonomic: ``λ'`` of ``L + λ'_a φ_a``); empty for the Euler–Lagrange field.
    system : CompiledSystem
    parameters : dict
        The parameter values used ``{name: value}``.
    sol : scipy OdeSolution or None
        Dense output (``dense_output=True``); call the trajectory to evaluate it.
    t_events, y_events : list
        As returned by ``solve_ivp`` for ``events``.
    nfev : int
        Number of right-hand-side evaluations.
    method : str
    wall_time : float
        Seconds spent integrating.
    message : str
        How the run ended: the solver's message, ``"interrupted at t = …"`` (Ctrl-C) or
        ``"stopped by an event at t = …"``.
    notes : tuple of str
        One line per change of chart (docs/simulation.rst, *Frame singularities*).
    segments : tuple of dict
        After a change of chart: ``{"chart", "t0", "t1"}`` for each chart used; then :attr:`states` holds
        the natural ``(q, q̇)`` (:attr:`state_names`) and the dense output returns them too.
    """

    t: np.ndarray
    states: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    multipliers: np.ndarray
    system: CompiledSystem
    parameters: dict
    sol: object = None
    t_events: list = None
    y_events: list = None
    nfev: int = 0
    method: str = DEFAULT_METHOD
    wall_time: float = 0.0
    message: str = ""
    notes: tuple = ()
    segments: tuple = ()

    @property
    def state_names(self) -> tuple:
        """Names of the rows of :attr:`states`: the field's state, or ``(q, q̇)`` after a change of chart."""
        if self.segments:
            return self.coordinate_names + tuple(f"{c}_dot" for c in self.coordinate_names)
        return self.system.state_names

    @property
    def interrupted(self) -> bool:
        """True if the run was stopped by Ctrl-C (KeyboardInterrupt); the motion is kept up to then."""
        return self.message.startswith("interrupted")

    @property
    def kind(self) -> str:
        return self.system.kind

    @property
    def coordinate_names(self) -> tuple:
        return self.system.coordinate_names

    @property
    def multiplier_names(self) -> tuple:
        return self.system.multiplier_names

    @property
    def _p(self) -> tuple:
        return tuple(self.parameters[p] for p in self.system.parameters)

    def __call__(self, t) -> np.ndarray:
        """The state at time(s) t from the dense output (requires ``dense_output=True``): the field's state,
        or ``(q, q̇)`` after a change of chart (:attr:`state_names`)."""
        if self.sol is None:
            raise SimulationError("this trajectory has no dense output; simulate with dense_output=True.")
        return self.sol(t)

    def coordinate(self, name: str) -> np.ndarray:
        """The values of one coordinate (by name) or natural velocity (``<name>_dot``)."""
        names = self.coordinate_names
        if name in names:
            return self.q[names.index(name)]
        if name.endswith("_dot") and name[:-4] in names:
            return self.qdot[names.index(name[:-4])]
        if name in self.multiplier_names:
            return self.multipliers[self.multiplier_names.index(name)]
        raise SimulationError(
            f"{name!r} is not a coordinate, velocity or multiplier of this trajectory; use one of "
            f"{', '.join(names + tuple(f'{c}_dot' for c in names) + self.multiplier_names)}."
        )

    # --- monitors ------------------------------------------------------------------------------
    def energy(self) -> np.ndarray:
        """``E_L(q, q̇)`` along the motion (see :func:`anholo.numerics.monitors.energy`)."""
        return energy(self)

    def energy_drift(self) -> np.ndarray:
        """Relative energy drift ``|E(t) − E(0)| / |E(0)|`` (absolute if ``E(0) = 0``)."""
        return energy_drift(self)

    def constraint_residuals(self) -> np.ndarray:
        """``φ_a(q, q̇)`` along the motion, shape ``(k, N)``."""
        return constraint_residuals(self)

    def holonomic_residuals(self) -> np.ndarray:
        """``f_ν(q, t)`` of the holonomic constraints along the motion, shape ``(k, N)`` (the residual monitor
        of :mod:`anholo.numerics.projection`; empty without holonomic constraints)."""
        with np.errstate(all="ignore"):
            return self.system.holonomic_functions(self.q, self._p, self.t)

    # --- output ----------------------------------------------------------------------------
    def columns(self, multipliers: bool | None = None) -> dict:
        """``{"t": t, <coordinate>: q, …, <coordinate>_dot: q̇, …, lambda1: …}`` (multipliers for vakonomic runs
        by default)."""
        out = {"t": self.t}
        for name, row in zip(self.coordinate_names, self.q):
            out[name] = row
        for name, row in zip(self.coordinate_names, self.qdot):
            out[f"{name}_dot"] = row
        if multipliers if multipliers is not None else self.kind == "vakonomic":
            for a, row in enumerate(self.multipliers):
                out[f"lambda{a + 1}"] = row
        return out

    def to_csv(self, path, multipliers: bool | None = None) -> None:
        """Write ``t``, each coordinate, each ``<coordinate>_dot`` and, for vakonomic runs (or with
        ``multipliers=True``), ``lambda1…`` (multipliers of the constraints as written) as CSV.  The file
        is written under a temporary name and renamed when complete (:func:`anholo.files.atomic_output`):
        an interrupted write leaves no truncated file.  An unwritable path raises SimulationError."""
        cols = self.columns(multipliers)
        from ..files import atomic_output

        with atomic_output(path, newline="", error=SimulationError) as fh:
            writer = csv.writer(fh)
            writer.writerow(list(cols))
            for row in zip(*cols.values()):
                writer.writerow([repr(float(x)) for x in row])

    def _repr_html_(self) -> str:
        """A summary table for Jupyter: the final state and the monitors."""
        import html

        rows = "".join(f"<tr><td>{html.escape(n)}</td><td>{q:.10g}</td><td>{u:.10g}</td></tr>"
                       for n, q, u in zip(self.coordinate_names, self.q[:, -1], self.qdot[:, -1]))
        res = self.constraint_residuals()
        monitors = f"max relative energy drift {float(np.max(self.energy_drift())):.3g}"
        if res.size:
            monitors += f", max |constraint residual| {float(np.max(np.abs(res))):.3g}"
        return (f"<p>{html.escape(repr(self))}</p><table><thead><tr><th>coordinate</th><th>value at "
                f"t = {self.t[-1]:g}</th><th>velocity</th></tr></thead><tbody>{rows}</tbody></table>"
                f"<p>{monitors}</p>")

    def __repr__(self):
        return (f"Trajectory({self.kind}, {len(self.t)} points, t in [{self.t[0]:g}, {self.t[-1]:g}], "
                f"nfev={self.nfev}, method={self.method})")


def simulate(system, t_span, q0: Sequence, qdot0: Sequence, lambda0: Sequence | None = None, *,
             parameters: Mapping | None = None, method: str = DEFAULT_METHOD, rtol: float = DEFAULT_RTOL,
             atol: float = DEFAULT_ATOL, t_eval=None, points: int | None = None, events=None,
             dense_output: bool = False, constraint_tol: float = 1e-9, progress: bool = False,
             progress_stream=None, inputs: Mapping | None = None, project: bool = True, atlas=None,
             deadline: float | None = None, **options) -> Trajectory:
    """Integrate a field from natural initial data.

    Parameters
    ----------
    system : CompiledSystem, FirstOrderSystem, a field of anholo, or a System
        Compiled on the fly if needed (compile once with :func:`compile_system` for many runs).  A
        :class:`~anholo.system.System` gives its nonholonomic field (Euler–Lagrange without constraints)
        with its :class:`~anholo.numerics.charts.ChartAtlas`: the run then goes through frame singularities.
    t_span : float or (t0, t1)
        A number T means ``(0, T)``.
    q0, qdot0 : sequences of n numbers
        Initial coordinates and natural velocities (must satisfy the constraints for
        constrained fields, to ``constraint_tol·(1 + max|q̇0|)``).
    lambda0 : sequence, optional
        Vakonomic only: initial multipliers of the constraints as written (default 0).
    parameters : mapping, optional
        Parameter values (names or Symbols), over the system's defaults (``[values]``).
    method, rtol, atol
        Passed to ``solve_ivp``; defaults ``"DOP853"``, ``1e-10``, ``1e-12``.  The implicit methods (Radau, BDF,
        LSODA) get the Jacobian generated from the right-hand side's program where it is small
        (:func:`~anholo.numerics.batch_loop.jacobian_function`), else their finite differences.
    t_eval : array, optional
        Output times; or ``points`` equally spaced output times over ``t_span``; default:
        the solver's steps.
    events, dense_output, **options
        As for ``solve_ivp`` (the same solvers, stepped by :mod:`anholo.numerics.stepping`).  Event
        functions are called as ``event(t, state)`` with the state of the chart in use (its first n
        entries are the coordinates in every chart), or as ``event(t, (q, q̇))`` if they have the
        attribute ``natural = True``.  The message of a run stopped by a terminal event says
        ``stopped by an event at t = …``.
    progress : bool
        Report the integration time on stderr (about once a second).
    project : bool
        With holonomic constraints ``f(q, t) = 0`` (a system file's ``holonomic``): project the state
        onto them after every step (default; :mod:`anholo.numerics.projection`), so that
        ``max|f|`` stays at round-off (:meth:`Trajectory.holonomic_residuals`).  Needs an explicit
        one-step method (DOP853, RK45, RK23) and no events.
    inputs : mapping, optional
        Control inputs of a system with ``inputs``: name → callable ``u(t, state)`` (the
        state of the compiled system, e.g. ``(q, v^α)`` on C), a number (docs/forces.rst), or an expression —
        a string such as ``"0.2*sin(t) - k*theta_dot"`` or a SymPy expression in ``t``, the coordinates, their
        velocities ``<q>_dot`` and the parameters (:func:`anholo.numerics.inputs.control_inputs`; the
        RK methods).
    atlas : ChartAtlas, optional
        The charts of Maggi's equations of the system (:mod:`anholo.numerics.charts`): where the
        frame of ``system`` degenerates along the motion (frame condition), the run continues in
        Maggi's equations with the dependent velocities of best pivot at ``q``, and chooses them again
        as needed (:mod:`anholo.numerics.switching`, docs/simulation.rst, *Frame singularities*).
        The trajectory's ``notes`` list the changes; its ``states`` are then ``(q, q̇)``.

    deadline : float, optional
        A ``time.monotonic()`` value by which the run should be over (the command line's time budget): a run
        whose pace says, three seconds in a row, that it would need more than four times the time left stops
        with IntegrationError (step size collapsed) instead of grinding on (:mod:`anholo.numerics.stepping`).

    Raises
    ------
    SimulationError
        ``rtol`` below ``100 ε`` (2.2e-14, what double precision can deliver; scipy would raise it silently),
        a negative or non-finite tolerance.
    MissingParameterError, InitialStateError
        Missing parameter values; bad initial data.
    IntegrationError
        If the solver fails, the state becomes non-finite, the step size collapses or (with an atlas)
        the motion is singular in the best chart: one line with t, q, q̇ and why.  The motion computed up
        to the last good step is kept: the exception's ``partial`` attribute is that
        :class:`Trajectory` (``message`` ``"stopped at t = …"``), or None if no step was taken.

    Notes
    -----
    Ctrl-C (KeyboardInterrupt) during the integration ends it and returns what was computed up to the
    last accepted step, with ``message`` ``"interrupted at t = …"`` (:attr:`Trajectory.interrupted`).
    Another interrupt that is not an ``Exception`` (e.g. raised by a SIGALRM handler, as the command
    line's time budget does) is raised again once the steps are kept, with that trajectory as its
    ``partial`` attribute.

    Examples
    --------
    The nonholonomic particle from ``y = 0`` with ``ẋ = 1, ẏ = 1, ż = 0``:

    >>> from anholo.system import System
    >>> from anholo.numerics import simulate
    >>> traj = simulate(System.load("nonholonomic_particle").nonholonomic().field(), 2.0,
    ...                 [0, 0, 0], [1, 1, 0], points=3)
    >>> traj.t
    array([0., 1., 2.])
    >>> float(abs(traj.constraint_residuals()).max()) < 1e-14
    True
    """
    if method in ("variational", "hamel"):  # fixed-step structure-preserving schemes (docs/integrators.rst)
        from .structured import simulate_structured
        if lambda0 is not None:
            raise SimulationError(f"the {method} method integrates the nonholonomic field; lambda0 is for vakonomic runs.")
        return simulate_structured(system, t_span, q0, qdot0, method=method, parameters=parameters, t_eval=t_eval,
                                   points=points, constraint_tol=constraint_tol, events=events,
                                   dense_output=dense_output, inputs=inputs, trajectory=Trajectory,
                                   progress=progress, progress_stream=progress_stream, **options)
    if options.get("step") is not None:
        raise SimulationError(f"step is the fixed step of the variational and hamel methods; {method} chooses "
                              "its steps itself (use rtol/atol, or method='variational').")
    options.pop("step", None)
    if callable(getattr(system, "maggi", None)) and hasattr(system, "has_constraints"):  # a System
        from .charts import ChartAtlas
        from .ode import from_system

        atlas = atlas if atlas is not None else ChartAtlas(system)
        system = from_system(system, "nonholonomic" if system.has_constraints else "euler-lagrange")
    compiled = as_compiled(system)
    if method not in _METHODS and not isinstance(method, type):
        raise SimulationError(f"unknown integration method {method!r}; use one of {', '.join(_METHODS)}, "
                              "variational or hamel.")
    _check_tolerances(rtol, atol)
    if options.get("vectorized"):
        raise SimulationError("vectorized=True is not supported by the compiled right-hand side; leave it off.")
    p = compiled.parameter_vector(parameters)
    pdict = dict(zip(compiled.parameters, p))
    written = None  # the inputs as written, when no Python callable reads the chart's state: a change of chart
    if inputs is not None:  # inputs written as expressions (as ``--input NAME=EXPR``): callables for this run
        from .inputs import ControlInputs, control_inputs

        if isinstance(inputs, ControlInputs) or any(isinstance(v, str) or hasattr(v, "free_symbols")
                                                    for v in dict(inputs).values()):
            written = control_inputs(compiled, inputs)
            inputs = written.functions(compiled, p)
        elif not any(callable(v) for v in dict(inputs).values()):
            written = control_inputs(compiled, inputs)  # numbers
    if np.ndim(t_span) == 0:
        t_span = (0.0, float(t_span))
    t0, t1 = (float(x) for x in t_span)
    if not (np.isfinite(t0) and np.isfinite(t1)) or t1 == t0:
        raise SimulationError(f"t_span must be two different finite times, got {t_span!r}.")
    if points is not None:
        if t_eval is not None:
            raise SimulationError("give either t_eval or points, not both.")
        if int(points) < 2:
            raise SimulationError(f"points must be at least 2, got {points}.")
        t_eval = np.linspace(t0, t1, int(points))
    try:
        with np.errstate(all="ignore"):
            y0 = compiled.initial_state(q0, qdot0, lambda0, p, constraint_tol=constraint_tol, t0=t0)
            rhs = compiled.rhs(p, inputs)
            f0 = np.asarray(rhs(t0, y0), dtype=float)  # one evaluation: generated C gives inf/nan where Python raises
        if not np.all(np.isfinite(f0)):
            raise ZeroDivisionError("the right-hand side is not finite there")
    except (ArithmeticError, ValueError) as exc:  # ZeroDivisionError, OverflowError, a math domain error
        hint = "a zero mass or inertia?"
        if atlas is not None and atlas.k and not atlas.unavailable:
            try:  # a chart solved for velocities whose block of the constraints is singular at q0?
                best = atlas.best(np.asarray(q0, dtype=float), pdict, t0)
                hint += f" dependent velocities singular here? the best conditioned choice here: {', '.join(best)}"
            except (AnholoError, ArithmeticError, ValueError, np.linalg.LinAlgError):
                pass
        raise IntegrationError(
            f"the {compiled.kind} field cannot be evaluated at these parameter values or this initial state "
            f"({exc}): the Hessian, the frame or an input is singular there ({hint})."
        ) from exc
    projecting = project and compiled.kind != "euler-lagrange" and compiled.holonomic_count
    if method in ("Radau", "BDF", "LSODA") and options.get("jac") is None and inputs is None and not projecting:
        from .batch_loop import jacobian_function  # the Jacobian from the right-hand side's own program

        jac = jacobian_function(compiled, p)
        if jac is not None:
            options = dict(options, jac=jac)
    projector = compiled.projector(p) if project and compiled.kind != "euler-lagrange" else None
    if projector is not None and (events is not None or dense_output or options):
        raise SimulationError("with holonomic constraints kept by projection, events, dense_output and extra "
                              "solver options are not available; pass project=False to integrate without it.")
    if projector is not None and method not in ("DOP853", "RK45", "RK23"):
        raise SimulationError(f"keeping holonomic constraints by projection needs a one-step explicit method; use "
                              f"DOP853, RK45 or RK23 instead of {method!r} (or project=False).")
    stream = progress_stream or sys.stderr
    label = f"integrating {compiled.kind}"
    start = time.perf_counter()
    from .switching import integrate_charts

    out = integrate_charts(compiled, rhs, y0, t0, t1, p, pdict, method=method, rtol=rtol, atol=atol,
                           t_eval=t_eval, events=events, dense_output=dense_output, options=options,
                           atlas=atlas, inputs=inputs, written_inputs=written, deadline=deadline, project=projector,
                           progress=_Reporter(t0, t1, stream, label) if progress else None)
    wall = time.perf_counter() - start
    if events is None:
        out["t_events"] = out["y_events"] = None
    if out["error"] is not None or out["interruption"] is not None:
        partial = _assemble(compiled, out, p, pdict, inputs, method, wall, dense_output)
        if out["interruption"] is not None:
            exc = out["interruption"]
            exc.partial = partial
            raise exc
        exc = IntegrationError(out["error"])
        exc.partial = partial
        raise exc
    return _assemble(compiled, out, p, pdict, inputs, method, wall, dense_output)


def _check_tolerances(rtol, atol) -> None:
    """Refuse tolerances the solvers cannot honour (scipy raises ``rtol`` below ``100 ε`` with a warning)."""
    floor = 100 * np.finfo(float).eps
    for name, value in (("rtol", rtol), ("atol", atol)):
        arr = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise SimulationError(f"{name} must be a finite number >= 0, got {value!r}.")
    if np.any(np.asarray(rtol, dtype=float) < floor):
        raise SimulationError(f"rtol = {rtol!r} is below what double precision can deliver (100 x machine epsilon "
                              f"= {floor:.3g}); the step size would collapse - give rtol >= {floor:.2g}, e.g. 1e-13.")


def _assemble(compiled, out, p, pdict, inputs, method, wall, dense_output):
    """The trajectory of :func:`integrate_charts`'s result (None if no output time was reached)."""
    if sum(len(seg.t) for seg in out["segments"]) == 0:
        return None
    if len(out["segments"]) == 1:
        seg = out["segments"][0]
        T, Y = seg.arrays(compiled.dim)
        return _single(compiled, T, Y, p, pdict, inputs, seg.dense() if dense_output else None,
                       out["t_events"], out["y_events"], out["nfev"], method, wall, out["message"],
                       notes=out["notes"])
    return _switched(compiled, out, p, pdict, inputs, method, wall, dense_output)


def _single(compiled, T, Y, p, pdict, inputs, sol, t_events, y_events, nfev, method, wall, message,
            notes=()) -> Trajectory:
    """A trajectory computed in the chart of ``compiled`` only."""
    if Y.size and not np.all(np.isfinite(Y)):
        bad = int(np.argmax(~np.all(np.isfinite(Y), axis=0)))
        raise IntegrationError(
            f"the state became non-finite at t = {T[bad]:g}: the frame or the Hessian is singular there "
            "(e.g. an adapted frame with 1/cos θ). Choose other dependent velocities or another frame."
        )
    with np.errstate(all="ignore"):
        qdot = compiled.natural_velocities(Y, p, T)
        mult = compiled.multipliers(Y, p, T, inputs)
    return Trajectory(t=T, states=Y, q=Y[:compiled.n], qdot=qdot, multipliers=mult, system=compiled,
                      parameters=pdict, sol=sol, t_events=t_events, y_events=y_events, nfev=nfev,
                      method=method if isinstance(method, str) else method.__name__, wall_time=wall,
                      message=message, notes=tuple(notes))


def _switched(compiled, out, p, pdict, inputs, method, wall, dense_output) -> Trajectory:
    """A trajectory computed in several charts: its states are the natural ``(q, q̇)``."""
    Ts, Qs, Us, Ms, parts, dense = [], [], [], [], [], []
    for seg in out["segments"]:
        c, pc = seg.chart.compiled, seg.chart.p
        T, Y = seg.arrays(c.dim)
        with np.errstate(all="ignore"):
            U = c.natural_velocities(Y, pc, T) if T.size else np.zeros((c.n, 0))
            chart_inputs = inputs if seg.chart.inputs is None else seg.chart.inputs
            M = c.multipliers(Y, pc, T, chart_inputs) if T.size else np.zeros((len(c.multiplier_names), 0))
        Ts.append(T), Qs.append(Y[:c.n]), Us.append(U), Ms.append(M)
        parts.append({"chart": seg.chart.label, "t0": seg.chart.t0, "t1": seg.t_end})
        if dense_output:
            dense.append((seg.chart.t0, seg.t_end, seg.dense(), c, pc))
    T = np.concatenate(Ts)
    Q, U = np.hstack(Qs), np.hstack(Us)
    k = max(M.shape[0] for M in Ms)
    mult = np.hstack([M if M.shape[0] == k else np.full((k, M.shape[1]), np.nan) for M in Ms])
    return Trajectory(t=T, states=np.vstack([Q, U]), q=Q, qdot=U, multipliers=mult, system=compiled,
                      parameters=pdict, sol=_NaturalDense(dense) if dense_output else None,
                      t_events=out["t_events"], y_events=out["y_events"], nfev=out["nfev"],
                      method=method if isinstance(method, str) else method.__name__, wall_time=wall,
                      message=out["message"], notes=tuple(out["notes"]), segments=tuple(parts))


class _NaturalDense:
    """Dense output over several charts: ``(q, q̇)`` at times t (each chart's interpolant, converted)."""

    def __init__(self, pieces):
        self.pieces = pieces

    def __call__(self, t):
        scalar = np.ndim(t) == 0
        ts = np.atleast_1d(np.asarray(t, float))
        n = self.pieces[0][3].n
        out = np.full((2 * n, ts.size), np.nan)
        for j, tt in enumerate(ts):
            for a, b, sol, c, pc in self.pieces:
                if min(a, b) <= tt <= max(a, b) and sol is not None:
                    y = np.asarray(sol(tt), float).reshape(-1, 1)
                    with np.errstate(all="ignore"):
                        out[:n, j] = y[:n, 0]
                        out[n:, j] = c.natural_velocities(y, pc, tt)[:, 0]
                    break
        return out[:, 0] if scalar else out

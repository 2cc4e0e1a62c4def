"""``simulate(method="variational" | "hamel", step=h)``: the fixed-step structure-preserving schemes.

Dispatches to the discrete Lagrange–d'Alembert scheme (:mod:`anholo.numerics.variational`) or the
discrete Hamel scheme (:mod:`anholo.numerics.discrete_hamel`, :mod:`anholo.numerics.lie_hamel`,
:mod:`anholo.numerics.lie_hamel_so3`), checks the
initial state, and samples the grid at the output times (cubic Hermite interpolation with the velocity
projected onto the constraints, see :mod:`anholo.numerics.variational`); docs/integrators.rst.

Control inputs are forces: their values ``u(t̄, q̄, v)`` enter ``F`` at the midpoint of every step (each
Newton iteration evaluates them at its iterate; their derivatives are left out of the Jacobian, so an
input that depends on the state makes the iteration converge linearly, at the rate ``O(h)``).  Events
``g(t, (q, q̇))`` are evaluated at every grid point with the constraint-consistent velocity there; a sign
change in the event's direction is located by Brent's method on the cubic Hermite interpolant of the step
(the output's), whose interpolation error, ``O(h⁴)``, is below the scheme's ``O(h²)``: the event time
converges at order 2 (docs/integrators.rst).
"""

from __future__ import annotations

import sys
import time as _time
from typing import Mapping, Sequence

import numpy as np

from ..errors import InitialStateError, IntegrationError, SimulationError
from .discrete_hamel import integrate_hamel
from .lie_hamel import integrate_lie_hamel
from .lie_hamel_so3 import group_scheme
from .variational import (DiscreteMechanics, _Buffers, _hermite, _project_velocity, check_initial,
                          discrete_mechanics, integrate_dla, legendre_on_constraints, new_arrays, sample)

__all__ = ["STRUCTURED_METHODS", "simulate_structured"]

#: The ``simulate`` methods of the structure-preserving integrators (fixed step, ``step=h``).
STRUCTURED_METHODS = ("variational", "hamel")


def _times(t_span, step, t_eval, points) -> tuple:
    if np.ndim(t_span) == 0:
        t_span = (0.0, float(t_span))
    t0, t1 = (float(x) for x in t_span)
    if not (np.isfinite(t0) and np.isfinite(t1)) or t1 <= t0:
        raise SimulationError(f"t_span must be two finite times t0 < t1 for the fixed-step methods, got {t_span!r}.")
    if step is None:
        raise SimulationError("the variational and hamel methods integrate at a fixed step: give step=H "
                              "(--step H on the command line).")
    h = float(step)
    if not np.isfinite(h) or h <= 0:
        raise SimulationError(f"the step must be a positive number, got {step!r}.")
    nsteps = int(np.ceil((t1 - t0) / h - 1e-9))
    if nsteps < 1:
        raise SimulationError(f"the step {h:g} is longer than the time span [{t0:g}, {t1:g}]; take a smaller step.")
    h = (t1 - t0) / nsteps  # the grid ends at t1 exactly
    if points is not None:
        if t_eval is not None:
            raise SimulationError("give either t_eval or points, not both.")
        if int(points) < 2:
            raise SimulationError(f"points must be at least 2, got {points}.")
        t_eval = np.linspace(t0, t1, int(points))
    return t0, t1, h, nsteps, t_eval


def _scheme_note(method: str, mech, group) -> str:
    """Which discrete scheme ran, for the run's message (docs/integrators.rst)."""
    if method == "variational":
        return ("discrete Lagrange–d'Alembert, midpoint; Chetaev forces at the midpoint" if mech.chetaev
                else "discrete Lagrange–d'Alembert, midpoint")
    if group is not None:
        return f"discrete Hamel: {group.describe(mech.coordinate_names)}"
    return "discrete Hamel: midpoint form in the adapted frame"


def _input_values(mech, given, p):
    """``values(t, q, q̇)`` of the control inputs in the order of ``mech.inputs`` (None without inputs): the
    inputs read by :func:`~anholo.numerics.inputs.control_inputs` (expressions in ``t``, the coordinates,
    ``<q>_dot`` and the parameters, numbers, or callables ``u(t, (q, q̇))`` of the natural state)."""
    import types

    from .inputs import control_inputs

    n = mech.n
    shim = types.SimpleNamespace(control_names=mech.inputs, coordinate_names=mech.coordinate_names,
                                 parameters=mech.parameters,
                                 natural_velocities=lambda Y, p_, t: np.asarray(Y)[n:2 * n])
    ci = control_inputs(shim, given)  # an unknown or missing input, a bad expression: InputError, one line
    if ci is None:
        return None
    funcs = ci.functions(shim, p)
    order = [funcs[name] for name in mech.inputs]
    y = np.empty(2 * n)

    def values(t, q, v):
        y[:n], y[n:] = q, v
        return [float(f(t, y)) for f in order]

    return values


class _EventWatch:
    """Events of a fixed-step run (``march``'s ``watch``): the event functions ``g(t, (q, q̇))`` at every grid
    point (``q̇`` the constraint-consistent velocity there); where one changes sign in its direction (the
    rule of :func:`scipy.integrate.solve_ivp`), its root is located on the step's interpolant — the cubic
    Hermite polynomial of the positions and velocities at the two grid points, the velocity projected onto
    the constraints (the output's interpolant, :func:`~anholo.numerics.variational.sample`) — by Brent's
    method.  A terminal event ends the run at the first grid point past its root; the output ends at the
    root."""

    def __init__(self, events, mech, p, t0, h, Qs, velocity_at, q0, qdot0):
        self.events, self.mech, self.t0, self.h, self.Qs, self.vel = events, mech, t0, h, Qs, velocity_at
        self.buf = _Buffers(mech.n, p, len(mech.inputs))
        self.terminal = [bool(getattr(e, "terminal", False)) for e in events]
        self.direction = [float(getattr(e, "direction", 0) or 0) for e in events]
        self.g = [float(e(t0, np.concatenate([q0, qdot0]))) for e in events]
        self.t_events = [np.empty(0) for _ in events]
        self.y_events = [np.empty((0, 2 * mech.n)) for _ in events]
        self.stop_t = None

    def state(self, j, t):
        """``(q, q̇)`` at t in ``[t_{j−1}, t_j]`` on the interpolant."""
        ta, tb = self.t0 + (j - 1) * self.h, self.t0 + j * self.h
        q, u = _hermite(t, ta, tb, self.Qs[j - 1], self.Qs[j], self.vel(j - 1), self.vel(j))
        return np.concatenate([q, _project_velocity(self.mech, self.buf, q, u, t)])

    def __call__(self, j) -> bool:
        from scipy.optimize import brentq

        tj = self.t0 + j * self.h
        y = np.concatenate([self.Qs[j], self.vel(j)])
        g_new = [float(e(tj, y)) for e in self.events]
        found = []
        for i, (a, b) in enumerate(zip(self.g, g_new)):
            d = self.direction[i]
            if np.sign(a) != np.sign(b) and (d == 0 or (d > 0 and b > a) or (d < 0 and b < a)):
                ta = tj - self.h
                f = (lambda tt, e=self.events[i]: float(e(tt, self.state(j, tt))))
                try:
                    root = brentq(f, ta, tj, xtol=1e-14 * max(1.0, abs(tj)), rtol=4 * np.finfo(float).eps)
                except ValueError:  # no sign change on the interpolant: the grid point
                    root = tj
                found.append((root, i))
        self.g = g_new
        for root, i in sorted(found):
            self.t_events[i] = np.append(self.t_events[i], root)
            self.y_events[i] = np.vstack([self.y_events[i], self.state(j, root)])
            if self.terminal[i]:
                self.stop_t = root
                return True
        return False


def simulate_structured(system, t_span, q0: Sequence, qdot0: Sequence, *, method: str = "variational",
                        step: float | None = None, parameters: Mapping | None = None, t_eval=None,
                        points: int | None = None, constraint_tol: float = 1e-9, trajectory=None, **options):
    """Integrate a :class:`~anholo.system.System` with a structure-preserving fixed-step scheme.

    ``method="variational"``: the discrete Lagrange–d'Alembert scheme (this module);
    ``method="hamel"``: the discrete Hamel scheme in the adapted frame
    (:mod:`anholo.numerics.discrete_hamel`).  ``step`` is the fixed step h (shortened so that the grid
    ends at ``t_span[1]``).  Output at ``t_eval`` or ``points`` equally spaced times (default: every grid
    point), sampled as described in the module docstring.  Returns a
    :class:`~anholo.numerics.integrate.Trajectory` (the class is passed as ``trajectory`` by
    :func:`~anholo.numerics.integrate.simulate`) whose ``nfev`` counts evaluations of the compiled step
    function (one per Newton iteration).  ``progress=True`` reports ``t`` on stderr (or ``progress_stream``)
    about once a second.

    ``inputs``: the control inputs of a system with ``inputs`` (name → expression in ``t``, the coordinates,
    ``<q>_dot`` and the parameters, a number, or a callable ``u(t, (q, q̇))`` of the natural state), evaluated
    at the midpoint ``(t̄, q̄, v)`` of every step like the other forces.  ``events``: functions
    ``g(t, (q, q̇))`` with scipy's ``terminal`` and ``direction`` attributes, checked at every grid point and
    located on the step's interpolant (module docstring); a terminal event ends the output at its time
    (``message`` ``"stopped by an event at t = …"``, ``t_events``/``y_events`` as scipy's).

    A run that ends early keeps its steps: Ctrl-C returns the trajectory up to the last completed step
    (``message`` ``"interrupted at t = …"``); a failed Newton step or another interrupt (the command line's
    time budget) is raised with that trajectory as its ``partial`` attribute (``"stopped at t = …"``).

    Raises
    ------
    SimulationError
        For a missing or bad step, a system that is not a :class:`~anholo.system.System` or
        :class:`DiscreteMechanics`, or options these methods do not take.
    InitialStateError, IntegrationError
    """
    if method not in STRUCTURED_METHODS:
        raise SimulationError(f"unknown structure-preserving method {method!r}; use one of "
                              f"{', '.join(STRUCTURED_METHODS)}.")
    progress = options.pop("progress", False)
    stream = options.pop("progress_stream", None)
    given_inputs = options.pop("inputs", None)
    events = options.pop("events", None)
    events = [] if events is None else [events] if callable(events) else list(events)
    options.pop("deadline", None)  # the fixed grid's cost is known in advance: no pace check
    ignored = ("rtol", "atol", "project")  # adaptive-step options, not used
    bad = sorted(k for k, v in options.items() if k not in ignored and (v is not None and v is not False and
                                                                         not (isinstance(v, Mapping) and not v)))
    if bad:
        raise SimulationError(f"the {method} method does not take {', '.join(bad)}; it integrates at the fixed step "
                              "and samples the output at t_eval/points.")
    if isinstance(system, DiscreteMechanics):
        mech = system
    elif hasattr(system, "lagrangian") and hasattr(system, "chart") and hasattr(system, "holonomic"):
        mech = discrete_mechanics(system)
    else:
        raise SimulationError(f"the {method} method integrates a System (System.load(...)) or a DiscreteMechanics, "
                              f"not a {type(system).__name__}; pass the system itself.")
    t0, t1, h, nsteps, t_eval = _times(t_span, step, t_eval, points)
    p = mech.parameter_vector(parameters)
    q0 = np.asarray(q0, dtype=float).ravel()
    qdot0 = np.asarray(qdot0, dtype=float).ravel()
    if q0.size != mech.n or qdot0.size != mech.n:
        raise InitialStateError(f"expected {mech.n} initial coordinates and velocities "
                                f"({', '.join(mech.coordinate_names)}), got {q0.size} and {qdot0.size}.")
    check_initial(mech, p, q0, qdot0, t0, constraint_tol)
    inputs = _input_values(mech, given_inputs, p)
    from .stepping import Reporter as _Reporter

    start = _time.perf_counter()
    reporter = _Reporter(t0, t1, stream or sys.stderr, f"integrating ({method}, step {h:g})") if progress else None
    with np.errstate(all="ignore"):
        group = None
        if method == "hamel":
            if mech.chetaev:  # no distribution, no adapted frame: one line (discrete_hamel.integrate_hamel)
                integrate_hamel(mech, p, t0, h, 0, q0, qdot0)
            group = mech.group if isinstance(system, DiscreteMechanics) else group_scheme(system, mech)
        arrays = new_arrays(mech.n, nsteps)
        Qs, Ps, V = arrays
        buf = _Buffers(mech.n, p, len(mech.inputs))
        cache = {0: qdot0}

        def velocity_at(j):  # the constraint-consistent velocity at grid point j (kept for the output)
            if j not in cache:
                cache[j] = legendre_on_constraints(mech, buf, Qs[j], Ps[j], t0 + j * h, V[j - 1])
            return cache[j]

        watch = _EventWatch(events, mech, p, t0, h, Qs, velocity_at, q0, qdot0) if events else None
        try:
            if group is not None:  # the Cayley difference map on SO(3) or SE(2) (Kobilarov et al. 2010)
                grid_t, Qs, Ps, V, evals, stop = integrate_lie_hamel(mech, group, p, t0, h, nsteps, q0, qdot0,
                                                                     progress=reporter, watch=watch, arrays=arrays)
            else:
                integrate = integrate_dla if method == "variational" else integrate_hamel
                grid_t, Qs, Ps, V, evals, stop = integrate(mech, p, t0, h, nsteps, q0, qdot0, progress=reporter,
                                                           inputs=inputs, watch=watch, arrays=arrays)
        finally:
            if reporter is not None:
                reporter.close()

        t_out = grid_t if t_eval is None else np.asarray(t_eval, dtype=float)
        if t_out.size and (t_out.min() < t0 - 1e-12 * max(1, abs(t0)) or t_out.max() > t1 + 1e-12 * max(1, abs(t1))):
            raise SimulationError(f"output times must lie in [{t0:g}, {t1:g}].")
        t_event = watch.stop_t if watch is not None else None
        if t_event is not None:  # a terminal event: output up to its time, and that time
            t_out = np.append(t_out[t_out < t_event - 1e-12 * max(1.0, abs(t_event))], t_event)
        elif stop is not None:  # the steps done: output up to the last grid point reached, and that point
            t_out = t_out[t_out <= grid_t[-1] + 1e-12 * max(1.0, abs(grid_t[-1]))]
            if not t_out.size or t_out[-1] < grid_t[-1] - 1e-12 * max(1.0, abs(grid_t[-1])):
                t_out = np.append(t_out, grid_t[-1])
        if len(grid_t) == 1:
            Qo, Uo = Qs[:1].T.copy(), np.asarray(qdot0, float).reshape(-1, 1)
            t_out = grid_t
        else:
            Qo, Uo = sample(mech, p, grid_t, Qs, Ps, V, t_out, velocity_at)
    wall = _time.perf_counter() - start
    finite = np.all(np.isfinite(Qo), axis=0) & np.all(np.isfinite(Uo), axis=0)
    if not finite.all() and stop is None:
        stop = IntegrationError(f"the motion became non-finite at t = {t_out[int(np.argmin(finite))]:g}; take a "
                                "smaller step.")
    if not finite.all():
        keep = int(np.argmin(finite))
        t_out, Qo, Uo = t_out[:keep], Qo[:, :keep], Uo[:, :keep]
    done = len(grid_t) - 1
    reached = float(grid_t[-1])
    scheme = _scheme_note(method, mech, group)
    if stop is None and t_event is not None:
        message = f"stopped by an event at t = {t_event:.10g} ({done} steps of {h:g}; {scheme})"  # as solve_ivp's
    elif stop is None:
        message = f"{nsteps} steps of {h:g} ({scheme})"
    elif isinstance(stop, KeyboardInterrupt):
        message = f"interrupted at t = {reached:.10g} ({done} of {nsteps} steps of {h:g})"
    else:
        message = f"stopped at t = {reached:.10g} ({done} of {nsteps} steps of {h:g})"
    traj = trajectory(t=t_out, states=np.vstack([Qo, Uo]), q=Qo, qdot=Uo, multipliers=np.zeros((0, len(t_out))),
                      system=mech, parameters=dict(zip(mech.parameters, p)), nfev=evals, method=method,
                      wall_time=wall, message=message,
                      t_events=watch.t_events if watch is not None else None,
                      y_events=watch.y_events if watch is not None else None) if len(t_out) else None
    if stop is None or isinstance(stop, KeyboardInterrupt):
        return traj
    stop.partial = traj  # a failed step or another interrupt (the time budget): raised with the steps done
    raise stop

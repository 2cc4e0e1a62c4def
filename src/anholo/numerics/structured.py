"""``simulate(method="variational" | "hamel", step=h)``: the fixed-step structure-preserving schemes.

Dispatches to the discrete Lagrange–d'Alembert scheme (:mod:`anholo.numerics.variational`) or the
discrete Hamel scheme (:mod:`anholo.numerics.discrete_hamel`), checks the initial state, and samples the
grid at the output times (cubic Hermite interpolation with the velocity projected onto the constraints,
see :mod:`anholo.numerics.variational`); docs/integrators.rst.
"""

from __future__ import annotations

import sys
import time as _time
from typing import Mapping, Sequence

import numpy as np

from ..errors import InitialStateError, IntegrationError, SimulationError
from .discrete_hamel import integrate_hamel
from .lie_hamel import integrate_lie_hamel, lie_group_scheme
from .variational import (DiscreteMechanics, _Buffers, check_initial, discrete_mechanics, integrate_dla,
                          legendre_on_constraints, sample)

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
    from .stepping import Reporter as _Reporter

    start = _time.perf_counter()
    reporter = _Reporter(t0, t1, stream or sys.stderr, f"integrating ({method}, step {h:g})") if progress else None
    with np.errstate(all="ignore"):
        group = None
        if method == "hamel":
            group = mech.group if isinstance(system, DiscreteMechanics) else lie_group_scheme(system, mech)
        try:
            if group is not None:  # the Cayley difference map on an SE(2) factor (Kobilarov et al. 2010)
                grid_t, Qs, Ps, V, evals, stop = integrate_lie_hamel(mech, group, p, t0, h, nsteps, q0, qdot0,
                                                                     progress=reporter)
            else:
                integrate = integrate_dla if method == "variational" else integrate_hamel
                grid_t, Qs, Ps, V, evals, stop = integrate(mech, p, t0, h, nsteps, q0, qdot0, progress=reporter)
        finally:
            if reporter is not None:
                reporter.close()
        buf = _Buffers(mech.n, p)

        def velocity_at(j):
            if j == 0:
                return qdot0
            guess = V[j - 1]
            return legendre_on_constraints(mech, buf, Qs[j], Ps[j], grid_t[j], guess)

        t_out = grid_t if t_eval is None else np.asarray(t_eval, dtype=float)
        if t_out.size and (t_out.min() < t0 - 1e-12 * max(1, abs(t0)) or t_out.max() > t1 + 1e-12 * max(1, abs(t1))):
            raise SimulationError(f"output times must lie in [{t0:g}, {t1:g}].")
        if stop is not None:  # the steps done: output up to the last grid point reached, and that point
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
    if stop is None:
        message = f"{nsteps} steps of {h:g}" + (
            f" (Cayley map on SE(2) of {', '.join(mech.coordinate_names[i] for i in group.factor)})"
            if group is not None else "")
    elif isinstance(stop, KeyboardInterrupt):
        message = f"interrupted at t = {reached:.10g} ({done} of {nsteps} steps of {h:g})"
    else:
        message = f"stopped at t = {reached:.10g} ({done} of {nsteps} steps of {h:g})"
    traj = trajectory(t=t_out, states=np.vstack([Qo, Uo]), q=Qo, qdot=Uo, multipliers=np.zeros((0, len(t_out))),
                      system=mech, parameters=dict(zip(mech.parameters, p)), nfev=evals, method=method,
                      wall_time=wall, message=message) if len(t_out) else None
    if stop is None or isinstance(stop, KeyboardInterrupt):
        return traj
    stop.partial = traj  # a failed step or another interrupt (the time budget): raised with the steps done
    raise stop

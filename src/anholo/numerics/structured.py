"""``simulate(method="variational" | "hamel", step=h)``: the fixed-step structure-preserving schemes.

Dispatches to the discrete Lagrange–d'Alembert scheme (:mod:`anholo.numerics.variational`) or the
discrete Hamel scheme (:mod:`anholo.numerics.discrete_hamel`), checks the initial state, and samples the
grid at the output times (cubic Hermite interpolation with the velocity projected onto the constraints,
see :mod:`anholo.numerics.variational`); docs/integrators.rst.
"""

from __future__ import annotations

import time as _time
from typing import Mapping, Sequence

import numpy as np

from ..errors import InitialStateError, IntegrationError, SimulationError
from .discrete_hamel import integrate_hamel
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
    function (one per Newton iteration).

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
    ignored = ("rtol", "atol", "progress", "progress_stream", "project")  # adaptive-step options, not used
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
    start = _time.perf_counter()
    with np.errstate(all="ignore"):
        if method == "variational":
            grid_t, Qs, Ps, V, evals = integrate_dla(mech, p, t0, h, nsteps, q0, qdot0)
        else:
            grid_t, Qs, Ps, V, evals = integrate_hamel(mech, p, t0, h, nsteps, q0, qdot0)
        buf = _Buffers(mech.n, p)

        def velocity_at(j):
            if j == 0:
                return qdot0
            guess = V[j - 1]
            return legendre_on_constraints(mech, buf, Qs[j], Ps[j], grid_t[j], guess)

        t_out = grid_t if t_eval is None else np.asarray(t_eval, dtype=float)
        if t_out.size and (t_out.min() < t0 - 1e-12 * max(1, abs(t0)) or t_out.max() > t1 + 1e-12 * max(1, abs(t1))):
            raise SimulationError(f"output times must lie in [{t0:g}, {t1:g}].")
        Qo, Uo = sample(mech, p, grid_t, Qs, Ps, V, t_out, velocity_at)
    wall = _time.perf_counter() - start
    if not (np.all(np.isfinite(Qo)) and np.all(np.isfinite(Uo))):
        raise IntegrationError("the motion became non-finite; take a smaller step.")
    return trajectory(t=t_out, states=np.vstack([Qo, Uo]), q=Qo, qdot=Uo, multipliers=np.zeros((0, len(t_out))),
                      system=mech, parameters=dict(zip(mech.parameters, p)), nfev=evals, method=method,
                      wall_time=wall, message=f"{nsteps} steps of {h:g}")

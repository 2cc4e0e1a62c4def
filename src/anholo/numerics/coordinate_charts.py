"""Coordinate charts along a holonomic motion: leave a chart where its coordinates degenerate.

The Euler–Lagrange field ``W(q) q̈ = ∂L/∂q − (∂²L/∂q̇∂q) q̇`` of a system written in coordinates that
are singular somewhere on the configuration manifold (the spherical pendulum in ``(θ, φ)`` at the poles
θ = 0, π, where ``W = m l² diag(1, sin² θ)``) is regular as a motion but not in that chart: near the
pole ``φ̇`` grows like ``1/sin² θ`` and an adaptive integrator grinds (a pass at ``10⁻⁴`` of the pole
costs thousands of steps; closer, it stops as a singular motion).  No chart of the sphere covers it, so
the cure is an *atlas*: further charts of the same manifold, each a system file with its own coordinates,
and the transition maps ``q_base = ψ_i(q_i)`` and ``q_i = ψ_i^{-1}(q_base)``.  Along the motion the
*mass condition* ``cond W(q)`` of the current chart is watched (a terminal event of the integration); when
it exceeds :data:`CHART_SWITCH` the state is carried to the chart where ``cond W`` is smallest,

    q_j = ψ_j^{-1}(ψ_i(q_i)),   q̇_j = Dψ_j^{-1} · Dψ_i · q̇_i,

and the motion continues there (the Euler–Lagrange equations are covariant under changes of
coordinates, so the motion is the same).  The output is given in the base chart's coordinates (``ψ_i``
applied at the output times; near its own singular set their velocities are large, as they are in the motion).

The transition maps are sympy expressions (``acos``, ``atan2``, …) differentiated once; angles are
returned by the map's own branch (the base azimuth may jump by 2π at the branch cut of ``atan2``).
docs/simulation.rst, *Coordinate singularities of holonomic systems*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..algebra.codegen import expression_function
from ..errors import SimulationError

__all__ = ["CoordinateChart", "ChartedMotion", "simulate_in_charts", "CHART_SWITCH", "SWITCH_GAIN"]

#: The mass condition ``cond W`` above which a chart is left (for one at least :data:`SWITCH_GAIN` × better):
#: low, because the cost of a chart grows long before it is singular (the pendulum passing its pole at
#: ``cond W = 25`` costs four times as much in ``(θ, φ)`` as in a regular chart).
CHART_SWITCH = 10.0
#: How much smaller ``cond W`` of another chart must be for a switch.
SWITCH_GAIN = 4.0



def _of_vector(args, exprs):
    """``f(x)``: ``exprs`` (a list or a matrix) at the argument vector ``x`` (one generated function,
    :func:`~anholo.algebra.codegen.expression_function`)."""
    f = expression_function(args, exprs)
    return lambda x, f=f: f(*[float(v) for v in x])

@dataclass(frozen=True)
class CoordinateChart:
    """One chart of an atlas: a :class:`~anholo.system.System` (the same Lagrangian written in this chart's
    coordinates) and its transition maps to and from the base chart.

    Parameters
    ----------
    system : System
    to_base : sequence of str or sympy expressions
        The base chart's coordinates as functions of this chart's (None for the base chart itself).
    from_base : sequence of str or sympy expressions
        This chart's coordinates as functions of the base chart's (None for the base chart).
    """

    system: object
    to_base: tuple | None = None
    from_base: tuple | None = None


@dataclass(frozen=True)
class ChartedMotion:
    """A motion integrated in an atlas: times, base-chart coordinates and velocities (rows), the total number
    of right-hand-side evaluations, the chart switches ``(t, from_index, to_index)``, and the wall time of the
    integrations (the charts' compilation not included)."""

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    nfev: int
    switches: tuple
    message: str
    wall_time: float = 0.0
    system: object = None  # the base chart's CompiledSystem (energy and the output's columns)

    def trajectory(self):
        """The motion as a :class:`~anholo.numerics.integrate.Trajectory` of the base chart (its monitors,
        ``to_csv`` and figures), with one note per chart switch."""
        from .integrate import Trajectory

        notes = tuple(f"changed coordinate chart at t = {t:.10g}: chart {a} -> chart {b} (mass condition above "
                      f"{CHART_SWITCH:g})" for t, a, b in self.switches)
        params = dict(zip(self.system.parameters, self.system.parameter_vector())) if self.system is not None else {}
        return Trajectory(t=self.t, states=np.vstack([self.q, self.qdot]), q=self.q, qdot=self.qdot,
                          multipliers=np.zeros((0, len(self.t))), system=self.system, parameters=params,
                          nfev=self.nfev, method="DOP853", wall_time=self.wall_time, message=self.message,
                          notes=notes)


class _Chart:
    """Compiled pieces of one chart: its field, ``cond W``, and the maps to and from the base chart."""

    def __init__(self, chart: CoordinateChart, base_names: Sequence[str], parameters: Mapping):
        from . import compile_system, from_system

        system = chart.system
        self.compiled = compile_system(from_system(system, "euler-lagrange"))
        self.p = self.compiled.parameter_vector(parameters)
        coords = list(system.chart.coordinates)
        vels = list(system.chart.velocities)
        self.n = len(coords)
        values = {**{str(k): float(v) for k, v in (system.values or {}).items()},
                  **{str(k): float(v) for k, v in (parameters or {}).items()}}
        subs = {s: values[s.name] for s in system.chart.parameters if s.name in values}
        L = sp.sympify(system.lagrangian.natural_expr()).xreplace(subs)
        W = sp.Matrix(self.n, self.n, lambda i, j: sp.diff(L, vels[i], vels[j]))
        self._W = _of_vector(coords + vels, W)
        base = [sp.Symbol(b, real=True) for b in base_names]
        local = {s.name: s for s in coords}
        if chart.to_base is None:
            self.to_base = self.from_base = None
            return
        if len(chart.to_base) != len(base_names) or len(chart.from_base) != self.n:
            raise SimulationError("a chart's to_base needs one expression per base coordinate and from_base one per "
                                  "coordinate of the chart.")
        to_b = [sp.sympify(e, locals=local) if isinstance(e, str) else sp.sympify(e) for e in chart.to_base]
        blocal = {s.name: s for s in base}
        from_b = [sp.sympify(e, locals=blocal) if isinstance(e, str) else sp.sympify(e) for e in chart.from_base]
        to_b = [e.xreplace(subs) for e in to_b]
        from_b = [e.xreplace(subs) for e in from_b]
        self.to_base = _of_vector(coords, to_b)
        self.to_base_J = _of_vector(coords, sp.Matrix(to_b).jacobian(coords))
        self.from_base = _of_vector(base, from_b)
        self.from_base_J = _of_vector(base, sp.Matrix(from_b).jacobian(base))

    def condition(self, q, qdot=None) -> float:
        W = np.asarray(self._W(list(q) + list(qdot if qdot is not None else np.zeros(self.n))), dtype=float)
        if not np.all(np.isfinite(W)):
            return np.inf
        return float(np.linalg.cond(W))

    def base_state(self, q, qdot):
        if self.to_base is None:
            return np.asarray(q, float), np.asarray(qdot, float)
        qb = np.asarray(self.to_base(list(q)), dtype=float)
        return qb, np.asarray(self.to_base_J(list(q)), dtype=float) @ qdot

    def from_base_state(self, qb, qbdot):
        if self.from_base is None:
            return np.asarray(qb, float), np.asarray(qbdot, float)
        q = np.asarray(self.from_base(list(qb)), dtype=float)
        return q, np.asarray(self.from_base_J(list(qb)), dtype=float) @ qbdot


def simulate_in_charts(charts: Sequence[CoordinateChart], t_span, q0, qdot0, *, t_eval=None,
                       points: int | None = None, parameters: Mapping | None = None, rtol: float = 1e-9,
                       atol: float = 1e-12, switch: float = CHART_SWITCH, max_switches: int = 1000) -> ChartedMotion:
    """Integrate a holonomic (or unconstrained) system in an atlas of coordinate charts (module docstring).
    Ctrl-C ends the run and keeps the motion up to the last accepted step (``message`` ``"interrupted at
    t = …"``).

    ``charts[0]`` is the base chart (its ``to_base``/``from_base`` None); ``q0, qdot0`` and the output are in
    its coordinates.  Each chart is integrated with DOP853 (``rtol``, ``atol``) until ``cond W`` exceeds
    ``switch``; then the motion continues in the chart with the smallest ``cond W`` at that state, if it is
    at least :data:`SWITCH_GAIN` × smaller (else in the same chart: the motion itself is singular there, and the integration
    reports it as for one chart).

    Raises
    ------
    SimulationError
        For charts without transition maps, an empty atlas or bad times.
    """
    from . import simulate

    if not charts:
        raise SimulationError("simulate_in_charts needs at least the base chart.")
    if charts[0].to_base is not None:
        raise SimulationError("the first chart is the base chart: give it without to_base/from_base.")
    base_names = [c.name for c in charts[0].system.chart.coordinates]
    compiled = [_Chart(c, base_names, parameters or {}) for c in charts]
    if np.ndim(t_span) == 0:
        t_span = (0.0, float(t_span))
    t0, t1 = (float(x) for x in t_span)
    if not t1 > t0:
        raise SimulationError(f"t_span must be t0 < t1, got {t_span!r}.")
    if t_eval is None:
        t_eval = np.linspace(t0, t1, int(points) if points else 1001)
    t_eval = np.asarray(t_eval, dtype=float)
    qb, qbd = np.asarray(q0, float), np.asarray(qdot0, float)
    current = 0
    q, qd = qb, qbd
    t = t0
    T, Q, QD = [], [], []
    nfev, switches, wall, interrupted = 0, [], 0.0, None
    while True:
        chart = compiled[current]

        def event(_t, y, chart=chart):
            c = chart.condition(y[:chart.n], y[chart.n:])
            return np.log10(switch) - (np.log10(c) if np.isfinite(c) else 300.0)

        event.terminal = True
        event.direction = -1
        here = t_eval[(t_eval >= t - 1e-12) & (t_eval <= t1 + 1e-12)]
        if not here.size or here[0] > t + 1e-12:
            here = np.concatenate([[t], here])
        started_singular = event(t, np.concatenate([q, qd])) < 0
        tr = simulate(chart.compiled, (t, t1), q, qd, t_eval=here, method="DOP853", rtol=rtol, atol=atol,
                      events=None if started_singular else event, parameters=parameters)
        nfev += int(tr.nfev)
        wall += float(tr.wall_time)
        hit = (tr.t_events is not None and len(tr.t_events) and len(tr.t_events[0]))
        keep = tr.t <= (tr.t_events[0][0] if hit else t1) + 1e-12
        for tt, qq, qqd in zip(tr.t[keep], tr.q.T[keep], tr.qdot.T[keep]):
            if T and tt <= T[-1] + 1e-12:
                continue
            a, b = chart.base_state(qq, qqd)
            T.append(tt)
            Q.append(a)
            QD.append(b)
        if tr.interrupted:  # Ctrl-C: keep the motion up to the last accepted step
            interrupted = float(tr.t[-1])
            break
        if not hit:
            break
        t = float(tr.t_events[0][0])
        y = np.asarray(tr.y_events[0][0], dtype=float)
        qq, qqd = y[:chart.n], y[chart.n:]
        base_q, base_qd = chart.base_state(qq, qqd)
        best, best_c = current, chart.condition(qq, qqd)
        for j, other in enumerate(compiled):
            if j == current:
                continue
            oq, oqd = other.from_base_state(base_q, base_qd)
            c = other.condition(oq, oqd)
            if c * SWITCH_GAIN < best_c:
                best, best_c, q, qd = j, c, oq, oqd
        if best == current or len(switches) >= max_switches:
            # no better chart: continue here without the event (a singular motion is reported by simulate)
            tr = simulate(chart.compiled, (t, t1), qq, qqd, t_eval=t_eval[t_eval > t + 1e-12], method="DOP853",
                          rtol=rtol, atol=atol, parameters=parameters)
            nfev += int(tr.nfev)
            wall += float(tr.wall_time)
            for tt, a_, b_ in zip(tr.t, tr.q.T, tr.qdot.T):
                a, b = chart.base_state(a_, b_)
                T.append(tt)
                Q.append(a)
                QD.append(b)
            interrupted = float(tr.t[-1]) if tr.interrupted else None
            break
        switches.append((t, current, best))
        current = best
    keep = np.isin(np.round(np.asarray(T), 12), np.round(t_eval, 12))
    if interrupted is not None:
        keep[-1] = True  # the last accepted step
    T, Q, QD = np.asarray(T)[keep], np.asarray(Q)[keep].T, np.asarray(QD)[keep].T
    message = f"{len(switches)} chart switch(es)" if switches else "no chart switch"
    if interrupted is not None:
        message = f"interrupted at t = {interrupted:.10g} ({message})"
    return ChartedMotion(T, Q, QD, nfev, tuple(switches), message, wall, compiled[0].compiled)

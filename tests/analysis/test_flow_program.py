"""FlowProgram (anholo.analysis.flow_program): Γ_nh(f) and div Γ_nh of Maggi's route against the coordinate
multiplier method written in the test (tests/analysis/flow_oracle.py), at random points.

Oracle: the state (q, v^α = q̇^{f_α}) of C, the dependent velocities solved from the constraints, q̈ and λ
from ``W q̈ − κᵀλ = F``, ``κ q̈ = −(∂φ/∂q) q̇`` (numpy), ``Γ_nh(f) = ∂f/∂q q̇ + ∂f/∂v v̇`` with sympy's
derivatives of f, and the divergence by central differences of ``(q, v) ↦ (q̇, v̇)``.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import sympy as sp

sys.path.insert(0, os.path.dirname(__file__))
from flow_oracle import CoordinateFlow  # noqa: E402

from anholo.analysis.flow_program import FlowProgram  # noqa: E402
from anholo.errors import DimensionError  # noqa: E402
from anholo.system import System  # noqa: E402

SYSTEMS = ["nonholonomic_particle", "chaplygin_sleigh", "vertical_rolling_disk", "n_trailer_2",
           "sphere_on_turntable"]  # the last: affine constraints (β ≠ 0)


def _setup(name):
    M = System.load(name).maggi()
    flow = FlowProgram.of(M)
    ch = M.chart
    oracle = CoordinateFlow(M.lagrangian, ch.coordinates, ch.velocities, M.constraints, M.free_coordinates,
                            ch.parameters, forces=M.forces)
    return M, flow, oracle


def _state(M, point):
    qv = [point[s.name] for s in M.chart.coordinates]
    v = [point[s.name] for s in M.free_velocities]
    pv = [point[s.name] if s.name in point else 0.5 for s in M.chart.parameters]
    return qv, v, pv


def _test_functions(M):
    q, v = M.chart.coordinates, M.free_velocities
    return [sp.sin(q[0]) * v[0] ** 2 + q[1] * v[-1], v[0] * v[-1] * sp.cos(q[-1]) + q[-1] ** 2, q[-2] * v[0]]


@pytest.mark.parametrize("name", SYSTEMS)
def test_lie_derivative_against_coordinate_equations(name):
    M, flow, oracle = _setup(name)
    fs = _test_functions(M)
    prog = flow.along(fs)
    q, v = list(M.chart.coordinates), list(M.free_velocities)
    grads = [sp.lambdify(q + v, [sp.diff(f, x) for x in q + v]) for f in fs]
    for point, values in flow.sampler(prog, seed=3).samples(4):
        qv, vv, pv = _state(M, point)
        qdot, vdot = oracle.rates(qv, vv, pv)
        rates = np.concatenate([qdot, vdot])
        for f_value, grad in zip(values, grads):
            g = np.array(grad(*qv, *vv), dtype=float)
            expected = g @ rates
            assert abs(f_value - expected) <= 1e-9 * (1 + np.abs(g * rates).sum())
            # the comparison can fail: reversing the accelerations changes the value (v̇ ≠ 0 here)
            wrong = g[: len(qv)] @ qdot - g[len(qv):] @ vdot
            if abs(g[len(qv):] @ vdot) > 1e-6:
                assert abs(f_value - wrong) > 1e-9 * (1 + np.abs(g * rates).sum())


@pytest.mark.parametrize("name", SYSTEMS)
def test_divergence_against_finite_differences(name):
    M, flow, oracle = _setup(name)
    div = flow.divergence()
    terms = flow.divergence_terms()
    st = flow.sampler(terms, seed=5)
    for point, values in flow.sampler(div, seed=5).samples(4):
        qv, vv, pv = _state(M, point)
        expected = oracle.divergence(qv, vv, pv)
        assert abs(values[0] - expected) <= 1e-6 * (1 + abs(expected))
        assert abs(st.at(point).sum() - values[0]) <= 1e-12 * (1 + abs(values[0]))


def test_divergence_is_not_the_velocity_part_alone():
    """For the Chaplygin sleigh in Maggi's coordinates ``∂q̇/∂q`` contributes: a divergence that left it
    out would fail the finite-difference comparison above (this checks that the comparison sees it)."""
    M, flow, oracle = _setup("chaplygin_sleigh")
    point, values = flow.sampler(flow.divergence(), seed=1).samples(1)[0]
    qv, vv, pv = _state(M, point)
    h, n = 1e-5, len(qv)
    v_part = 0.0
    for al in range(len(vv)):
        e = np.zeros(len(vv))
        e[al] = h
        v_part += (oracle.rates(qv, np.array(vv) + e, pv)[1][al] - oracle.rates(qv, np.array(vv) - e, pv)[1][al]) / (2 * h)
    assert abs(oracle.divergence(qv, vv, pv) - v_part) > 1e-3
    assert abs(values[0] - v_part) > 1e-3


def test_along_with_natural_velocities_on_C():
    """``f(q, q̇)`` through :meth:`on_C` (q̇ = X v + β): Γ_nh(½|q̇|²) of the nonholonomic particle is
    ``q̇·q̈``, with q̈ from the oracle; a natural velocity given directly is a user error."""
    M, flow, oracle = _setup("nonholonomic_particle")
    u = M.chart.velocities
    f = sum(x ** 2 for x in u) / 2
    prog = flow.along(flow.on_C([f]))
    for point, values in flow.sampler(prog, seed=2).samples(3):
        qv, vv, pv = _state(M, point)
        ud = oracle.velocities(qv, vv, pv)
        qdd, _ = oracle.accelerations(qv, ud, pv)
        assert abs(values[0] - ud @ qdd) <= 1e-10 * (1 + np.abs(ud * qdd).sum())
    with pytest.raises(DimensionError, match="on_C"):
        flow.along([f])


def test_time_dependent_field_gets_the_time_derivative():
    """A function of the time alone: Γ_nh(t²) = 2t (∂f/∂t) on a system whose Lagrangian depends on t."""
    from anholo import Chart
    from anholo.dynamics.maggi import MaggiSystem

    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    x, y, z = chart.coordinates
    t = sp.Symbol("t", real=True)
    M = MaggiSystem(chart, (xd ** 2 + yd ** 2 + zd ** 2) / 2 + t * x, [zd - y * xd], time=t)
    flow = FlowProgram.of(M)
    prog = flow.along([t ** 2])
    for point, values in flow.sampler(prog).samples(2):
        assert abs(values[0] - 2 * point["t"]) < 1e-12

"""Linearisation about steady motions, from the implicit form.

Oracles: central finite differences of the coordinate multiplier method built by
hand (tests/oracles.py, ``constrained_coordinate_solution``), carried to the
states ``(q, v^α)`` with the frame's coframe (``v̇^α = θ^α_A q̈^A + ∂_B θ^α_A u^B u^A``);
and the classical stability bound of a rolling thin disk: upright rolling at spin
rate ω is linearly stable iff ``ω² > g/(3r)`` (Neimark & Fufaev, Dynamics of
Nonholonomic Systems, 1972; Bloch, Nonholonomic Mechanics and Control, 2003).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution

from anholo.analysis.linearization import LinearizationProblem, linearize
from anholo.errors import DimensionError, MissingParameterError
from anholo.examples import load_example
from anholo.system import System


def _oracle_rates(spec, nh, state: dict, params: dict) -> dict:
    """(q̇, v̇^α) at a state (q, v^α) by the coordinate multiplier method."""
    X, th = nh.frame.vectors, nh.frame.coframe
    q, u = spec.coordinates, spec.velocities
    n = len(q)
    vC = [state.get(v.name, 0.0) for v in nh.free_velocities] + [0.0] * (n - nh.m)
    pt = {s: sp.Float(state.get(s.name, 0.0), 30) for s in q} | {s: sp.Float(params[s.name], 30) for s in spec.parameters}
    ud = [float(sum(X[j, A] * vC[j] for j in range(n)).xreplace(pt)) for A in range(n)]
    pt |= {s: sp.Float(x, 30) for s, x in zip(u, ud)}
    qdd, _ = constrained_coordinate_solution(spec.lagrangian, q, u, spec.constraints, pt)
    out = {s.name: x for s, x in zip(q, ud)}
    for al, v in enumerate(nh.free_velocities):
        rate = sum(float(th[al, A].xreplace(pt)) * qdd[A] for A in range(n))
        rate += sum(float(th[al, A].diff(q[B]).xreplace(pt)) * ud[B] * ud[A] for A in range(n) for B in range(n))
        out[v.name] = rate
    return out


@pytest.mark.parametrize("spin", [1.0, 4.0])
def test_rolling_disk_matrix_against_finite_differences_of_the_coordinate_method(spin):
    spec = load_example("rolling_disk")
    nh = System.from_spec(spec).nonholonomic()
    params = {s.name: float(v) for s, v in spec.values.items()}
    states = ["lean", "v1", "v2", "v3"]
    ref = {"lean": 0.0, "v3": spin}
    lin = linearize(nh, ref, params, states=states)
    assert lin.is_equilibrium
    h = 1e-5
    A = np.zeros((4, 4))
    for j, z in enumerate(states):
        plus = _oracle_rates(spec, nh, {**ref, z: ref.get(z, 0.0) + h}, params)
        minus = _oracle_rates(spec, nh, {**ref, z: ref.get(z, 0.0) - h}, params)
        A[:, j] = [(plus[s] - minus[s]) / (2 * h) for s in states]
    np.testing.assert_allclose(lin.A, A, rtol=1e-6, atol=1e-6)


def test_rolling_disk_stability_bound():
    spec = load_example("rolling_disk")
    nh = System.from_spec(spec).nonholonomic()
    params = {s.name: float(v) for s, v in spec.values.items()}
    critical = math.sqrt(params["g"] / (3 * params["r"]))
    problem = LinearizationProblem(nh, ["lean", "v1", "v2", "v3"])
    below, above = problem.sweep("v3", [0.95 * critical, 1.05 * critical], {"lean": 0.0}, params)
    assert not below.stable and max(below.eigenvalues.real) > 1e-3
    assert above.verdict == "marginal" and max(abs(above.eigenvalues.imag)) > 1e-3  # 0, 0, ±iω
    assert not above.stable and below.verdict == "unstable"


def test_bad_states_and_missing_parameters_are_user_errors():
    spec = load_example("rolling_disk")
    nh = System.from_spec(spec).nonholonomic()
    with pytest.raises(DimensionError):
        LinearizationProblem(nh, ["lean", "nope"])
    with pytest.raises(MissingParameterError):
        linearize(nh, {"lean": 0.0}, {"m": 1.0}, states=["lean", "v1"])


def _forced_rates(s, state: dict, params: dict) -> np.ndarray:
    """(q̇, q̈) of the sleigh with its motor torque at a natural state, by the coordinate multiplier method with
    the file's generalized forces (tests/oracles.py)."""
    from oracles import nonlinear_constrained_solution

    q, u = s.chart.coordinates, s.chart.velocities
    pt = {x: sp.Float(state[x.name], 30) for x in q + u}
    pt |= {p: sp.Float(v, 30) for p, v in params.items()}
    L = s.lagrangian.natural_expr()
    Q = [f.xreplace(pt) for f in s.forces.total]
    qdd, _ = nonlinear_constrained_solution(L, q, u, s.constraints, pt, forces=Q)
    return qdd


@pytest.mark.parametrize("route", ["exact", "maggi"])
def test_input_matrix_against_finite_differences(route):
    """B = ∂ż/∂τ for the sleigh's motor torque: finite differences of the coordinate multiplier method."""
    s = System.load("sleigh_with_motor")
    nh = s.nonholonomic(route=route)
    params = {p: float(v) for p, v in s.values.items()}
    by_name = {p.name: p for p in s.chart.parameters} | {w.name: w for w in s.inputs}
    problem = LinearizationProblem(nh, [v.name for v in nh.free_velocities])
    assert [w.name for w in problem.inputs] == ["tau"]
    ref_v = {v.name: 0.3 + 0.2 * i for i, v in enumerate(nh.free_velocities)}
    values = {p.name: v for p, v in params.items()} | {"tau": 0.1}
    lin = problem.at({**ref_v, "theta": 0.4}, values)
    assert lin.B.shape == (len(nh.free_velocities), 1)
    # the free velocities' rates from the oracle's q̈ (free quasi-velocities of either route, at theta = 0.4)
    q = s.chart.coordinates
    h = 1e-6
    out = []
    for tau in (0.1 + h, 0.1 - h):
        # the natural state of (theta, v): q̇ from the route's kinematics
        qdot = _kinematics(nh, {**ref_v, "theta": 0.4}, values)
        state = {x.name: (0.4 if x.name == "theta" else 0.0) for x in q}
        state |= {u.name: val for u, val in zip(s.chart.velocities, qdot)}
        pars = {by_name[k]: v for k, v in values.items() if k in by_name} | {by_name["tau"]: tau}
        out.append(_free_rates(nh, _forced_rates(s, state, pars), state, values))
    fd = (out[0] - out[1]) / (2 * h)
    np.testing.assert_allclose(lin.B[:, 0], fd, rtol=1e-6, atol=1e-7)
    assert np.abs(lin.B).max() > 1e-3


def _kinematics(nh, state, values):
    X = nh.frame_vectors() if hasattr(nh, "frame_vectors") else None
    if X is None:
        Xs = nh.frame.vectors
        vC = [state.get(v.name, 0.0) for v in nh.free_velocities] + [0.0] * (nh.n - nh.m)
        pt = {x: state.get(x.name, 0.0) for x in nh.frame.chart.coordinates}
        pt |= {p: values[p.name] for p in nh.frame.chart.parameters}
        return [float(sum(Xs[j, A] * vC[j] for j in range(nh.n)).xreplace(pt)) for A in range(nh.n)]
    from anholo.algebra.engine import to_sympy
    rows = [[to_sympy(e) for e in row] for row in X]
    vC = [state.get(v.name, 0.0) for v in nh.free_velocities] + [0.0] * (nh.n - nh.m)
    names = {**{x.name: state.get(x.name, 0.0) for x in nh.chart.coordinates}, **values}
    return [float(sum(rows[j][A] * vC[j] for j in range(nh.n)).subs({sp.Symbol(k): v for k, v in names.items()}))
            for A in range(nh.n)]


def _free_rates(nh, qdd, state, values):
    """v̇^α from q̈: θ^α(q̈) + (∂_B θ^α_A) q̇^B q̇^A (the Maggi route: v^α = q̇^{f_α})."""
    if hasattr(nh, "free_coordinates"):
        names = [x.name for x in nh.chart.coordinates]
        return np.array([qdd[names.index(c.name)] for c in nh.free_coordinates])
    th = nh.frame.coframe
    q = nh.frame.chart.coordinates
    pt = {x: state[x.name] for x in q} | {p: values[p.name] for p in nh.frame.chart.parameters}
    ud = [state[u.name] for u in nh.frame.chart.velocities]
    out = []
    for al in range(nh.m):
        r = sum(float(th[al, A].xreplace(pt)) * qdd[A] for A in range(nh.n))
        r += sum(float(th[al, A].diff(q[B]).xreplace(pt)) * ud[B] * ud[A] for A in range(nh.n) for B in range(nh.n))
        out.append(r)
    return np.array(out)

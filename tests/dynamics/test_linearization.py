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
    assert above.stable and max(abs(above.eigenvalues.imag)) > 1e-3


def test_bad_states_and_missing_parameters_are_user_errors():
    spec = load_example("rolling_disk")
    nh = System.from_spec(spec).nonholonomic()
    with pytest.raises(DimensionError):
        LinearizationProblem(nh, ["lean", "nope"])
    with pytest.raises(MissingParameterError):
        linearize(nh, {"lean": 0.0}, {"m": 1.0}, states=["lean", "v1"])

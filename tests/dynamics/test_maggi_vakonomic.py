"""The vakonomic field of Maggi's route against the coordinate multiplication rule written here.

Oracle (independent of anholo's derivation): the Euler–Lagrange equations of ``L + λ_a φ_a`` in
coordinates, ``W q̈ + κᵀ λ̇ = F + Q + λ_a(∂φ_a/∂q − d/dt κ_a)`` with the constraints differentiated
once, ``κ q̈ + (∂φ/∂q) q̇ + ∂φ/∂t = 0``, formed by plain differentiation of L and φ (symengine, whole
expressions) and solved numerically at random states on C.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import symengine as se

from anholo.algebra.program import Program
from anholo.dynamics.maggi_vakonomic import MaggiVakonomic
from anholo.system import System


def _oracle(system, point):
    """``(q̈, λ̇)`` of the multiplication rule at ``point`` (names → floats; q̇ on C)."""
    chart = system.chart
    q = [se.Symbol(s.name) for s in chart.coordinates]
    u = [se.Symbol(s.name) for s in chart.velocities]
    t = se.Symbol(system.time.name) if system.time is not None else None
    L = se.sympify(system.lagrangian.natural_expr())
    phi = [se.sympify(c) for c in system.constraints]
    Q = [se.sympify(e) for e in system.forces.total] if system.forces is not None else [0] * len(q)
    n, k = len(q), len(phi)
    lam = [se.Symbol(f"lambda{a + 1}") for a in range(k)]
    env = {se.Symbol(a): v for a, v in point.items()}

    def val(e):
        return float(se.sympify(e).xreplace(env).evalf())

    def dt(e):  # total time derivative of a function of (t, q) along q̇
        out = sum((e.diff(qA) * uA for qA, uA in zip(q, u)), se.Integer(0))
        return out + (e.diff(t) if t is not None else 0)

    W = np.array([[val(L.diff(uA).diff(uB)) for uB in u] for uA in u])
    F = []
    for A in range(n):
        p = L.diff(u[A])
        e = L.diff(q[A]) - sum((p.diff(q[B]) * u[B] for B in range(n)), se.Integer(0)) + Q[A]
        if t is not None:
            e -= p.diff(t)
        for a in range(k):
            kappa_aA = phi[a].diff(u[A])
            e += lam[a] * (phi[a].diff(q[A]) - dt(kappa_aA))
        F.append(val(e))
    K = np.array([[val(c.diff(uA)) for uA in u] for c in phi])
    r = [-val(sum((c.diff(qB) * uB for qB, uB in zip(q, u)), se.Integer(0)) + (c.diff(t) if t is not None else 0))
         for c in phi]
    A = np.block([[W, K.T], [K, np.zeros((k, k))]])
    x = np.linalg.solve(A, np.array(F + r))
    return x[:n], x[n:]


def _state_on_C(system, vak, rng):
    """Random q, parameters, λ, t and free velocities; the dependent velocities solved from φ = 0."""
    nh = vak.nh
    chart = system.chart
    point = {s.name: rng.uniform(0.3, 0.9) for s in chart.coordinates + chart.parameters}
    point.update({str(k): float(v) for k, v in (system.values or {}).items()})
    point.update({lam.name: rng.uniform(-1, 1) for lam in vak.multipliers})
    if system.time is not None:
        point[system.time.name] = rng.uniform(0.3, 0.9)
    for u in system.inputs:
        point[u.name] = rng.uniform(-1, 1)
    u = [se.Symbol(s.name) for s in chart.velocities]
    free = {chart.velocities[chart.coordinates.index(c)].name for c in nh.free_coordinates}
    for s in chart.velocities:
        if s.name in free:
            point[s.name] = rng.uniform(-1, 1)
    env = {se.Symbol(a): v for a, v in point.items()}
    phi = [se.sympify(c).xreplace(env) for c in system.constraints]
    dep = [s for s in chart.velocities if s.name not in free]
    K = np.array([[float(c.diff(se.Symbol(d.name)).evalf()) for d in dep] for c in phi])
    c0 = np.array([float(c.xreplace({se.Symbol(d.name): 0 for d in dep}).evalf()) for c in phi])
    for d, value in zip(dep, np.linalg.solve(K, -c0)):
        point[d.name] = float(value)
    return point


def _anholo(vak, point):
    pairs, res = vak.shared()
    prog = Program((), tuple(pairs), tuple(res["q_ddot"]) + tuple(res["lambda_dot"]))
    out = np.array(prog.evaluate(point)).real
    n = vak.nh.n
    return out[:n], out[n:]


SYSTEMS = ["nonholonomic_particle", "chaplygin_sleigh", "vertical_rolling_disk", "knife_edge", "n_trailer_2",
           "sphere_on_turntable", "tilted_knife_edge", "sleigh_with_motor", "rolling_disk", "snakeboard"]


@pytest.mark.parametrize("name", SYSTEMS)
def test_vakonomic_field_equals_the_coordinate_multiplication_rule(name):
    system = System.load(name)
    vak = MaggiVakonomic(system.maggi())
    rng = random.Random(hash(name) % 1000)
    for _ in range(3):
        point = _state_on_C(system, vak, rng)
        qdd, rates = _anholo(vak, point)
        qdd_o, rates_o = _oracle(system, point)
        scale = 1 + np.abs(qdd_o).max() + np.abs(rates_o).max()
        assert np.abs(qdd - qdd_o).max() < 1e-9 * scale
        assert np.abs(rates - rates_o).max() < 1e-9 * scale


def test_the_check_can_fail():
    """A wrong sign of the multiplier force is seen by the oracle."""
    system = System.load("nonholonomic_particle")
    vak = MaggiVakonomic(system.maggi())
    point = _state_on_C(system, vak, random.Random(1))
    qdd, rates = _anholo(vak, point)
    point["lambda1"] = -point["lambda1"]
    qdd_o, rates_o = _oracle(system, point)
    assert np.abs(qdd - qdd_o).max() + np.abs(rates - rates_o).max() > 1e-3


@pytest.mark.slow
def test_the_whipple_bicycle():
    system = System.load("whipple_bicycle")
    vak = MaggiVakonomic(system.maggi())
    rng = random.Random(7)
    point = _state_on_C(system, vak, rng)
    qdd, rates = _anholo(vak, point)
    qdd_o, rates_o = _oracle(system, point)
    scale = 1 + np.abs(qdd_o).max() + np.abs(rates_o).max()
    assert np.abs(qdd - qdd_o).max() < 1e-8 * scale
    assert np.abs(rates - rates_o).max() < 1e-8 * scale


def test_implicit_form_solves_to_the_explicit_field():
    """M x = F in (v̇, λ̇) holds for the explicit v̇ and λ̇ (the multiplier columns are −κ_Pᵀ)."""
    system = System.load("n_trailer_2")
    vak = MaggiVakonomic(system.maggi())
    pairs, res = vak.shared()
    m, k = vak.nh.m, len(vak.multipliers)
    # v is the free natural velocity: evaluate at a state on C in (q, v, λ)
    point = _state_on_C(system, vak, random.Random(3))
    for v, c in zip(vak.nh.free_velocities, vak.nh.free_coordinates):
        point[v.name] = point[c.name + "_dot"]
    flat = [e for row in res["M"] for e in row] + list(res["F"]) + list(res["v_dot"]) + list(res["lambda_dot"])
    out = np.array(Program((), tuple(pairs), tuple(flat)).evaluate(point)).real
    size = m + k
    M = out[:size * size].reshape(size, size)
    F = out[size * size:size * size + size]
    x = out[size * size + size:]
    assert np.allclose(M @ x, F, atol=1e-10 * (1 + np.abs(F).max()))


def test_undefined_functions_are_refused_with_a_clear_error():
    """The class of Crampin & Mestdag (2010) with undefined A_i(r2) stays on the exact route; Maggi's
    route (numerical programs) says why it cannot take it."""
    from anholo.errors import UndefinedFunctionError

    system = System.load("crampin_mestdag_class")
    assert system.route[0] == "exact"
    with pytest.raises(UndefinedFunctionError, match="A1, A2 are undefined functions"):
        system.maggi()

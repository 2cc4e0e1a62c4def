"""Numerical right-hand sides compiled from the implicit form ``M v̇ = F``.

Oracles: the coordinate multiplier method built by hand (tests/oracles.py,
``constrained_coordinate_solution``), carried to ``(q, v^α)`` with the frame's
coframe; the closed form of the Chaplygin sleigh (Bloch, Nonholonomic Mechanics and
Control, §1.7: ``u̇ = a θ̇²``, ``(I + m a²) θ̈ = −m a u θ̇``); and conservation of the
energy along a numerical solution (``scipy.integrate.solve_ivp``).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution, dependent_velocities, point_on_constraints
from scipy.integrate import solve_ivp

from anholo.examples import load_example
from anholo.numerics.implicit_rhs import compile_implicit
from anholo.system import System


def _state_and_oracle(spec, nh, seed):
    dep = dependent_velocities(spec, list(spec.constraints))
    pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, dep, seed)
    qdd, _ = constrained_coordinate_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints, pt)
    th = nh.frame.coframe
    v = [float(sum(th[al, A] * pt[u] for A, u in enumerate(spec.velocities)).xreplace(pt)) for al in range(nh.m)]
    y = [float(pt[q]) for q in spec.coordinates] + v
    return pt, y, qdd


@pytest.mark.parametrize("name", ["chaplygin_sleigh", "rolling_disk", "two_wheeled_carriage", "roller_racer",
                                  "chaplygin_ball", "sphere_on_turntable"])
def test_compiled_implicit_rhs_against_the_coordinate_method(name):
    spec = load_example(name)
    nh = System.from_spec(spec).nonholonomic()
    f = compile_implicit(nh)
    X = nh.frame.vectors
    q = spec.coordinates
    states = []
    for seed in (1, 2):
        pt, y, qdd = _state_and_oracle(spec, nh, seed)
        p = [float(pt[s]) for s in f.parameters]
        dy = np.asarray(f.rhs(p)(0.0, y))
        # q̇ = X^T v on C, and q̈^A = X_i^A v̇^i + v^i v^j X_j(X_i^A) (affine rates included)
        sub = {**{s: sp.Float(val, 20) for s, val in zip(f.states, y)}, **{s: pt[s] for s in f.parameters}}
        np.testing.assert_allclose(dy[:len(q)], [float(pt[u]) for u in spec.velocities], rtol=1e-9, atol=1e-10)
        rates = list(dy[len(q):]) + [float(sp.sympify(nh._along(b)).xreplace(sub)) for b in nh.constrained_values]
        vC = [float(sp.sympify(e).xreplace(sub)) for e in nh.velocities_on_C]
        acc = []
        for A in range(len(q)):
            a = sum(float(X[i, A].xreplace(sub)) * rates[i] for i in range(nh.n))
            a += sum(vC[i] * vC[j] * float(sum(X[j, B] * X[i, A].diff(q[B]) for B in range(len(q))).xreplace(sub))
                     for i in range(nh.n) for j in range(nh.n))
            acc.append(a)
        np.testing.assert_allclose(acc, qdd, rtol=1e-8, atol=1e-9)
        states.append(y)
    # the batch evaluation gives the same numbers
    Y = np.array(states)
    np.testing.assert_allclose(f.batch(Y, p), np.array([f.rhs(p)(0.0, y) for y in states]), rtol=1e-12, atol=1e-14)


def test_chaplygin_sleigh_closed_form_and_energy_along_a_solution():
    spec = load_example("chaplygin_sleigh")
    system = System.from_spec(spec)
    nh = system.nonholonomic()
    f = compile_implicit(nh)
    p = f.parameter_vector(spec.values)
    vals = {s.name: float(spec.values[s]) for s in f.parameters}
    m, I, a = (vals[n] for n in ("m", "I", "a"))
    x, y, th = 0.1, -0.2, 0.3
    xd, yd = 0.7 * np.cos(th), 0.7 * np.sin(th)  # on C: no sideways slip of the contact point (a behind the CoM)
    thd = 0.4
    # sideways velocity of the contact point: -sin θ ẋ + cos θ ẏ − a θ̇ = 0 ⇒ shift ẋ, ẏ accordingly
    xd, yd = xd - np.sin(th) * a * thd, yd + np.cos(th) * a * thd
    th_rows = nh.frame.coframe
    pt = dict(zip(spec.coordinates, (x, y, th))) | dict(zip(spec.velocities, (xd, yd, thd)))
    pt |= {s: vals[s.name] for s in f.parameters}
    assert abs(float(sp.sympify(spec.constraints[0]).xreplace(pt))) < 1e-12
    v = [float(sum(th_rows[al, A] * pt[u] for A, u in enumerate(spec.velocities)).xreplace(pt)) for al in range(nh.m)]
    y0 = [x, y, th] + v
    sol = solve_ivp(f.rhs(p), (0, 3), y0, rtol=1e-10, atol=1e-12, dense_output=True)
    assert sol.success
    # closed form at the end point: u = cos θ ẋ + sin θ ẏ, ω = θ̇ obey u̇ = a ω², (I + m a²) ω̇ = −m a u ω
    yT = sol.y[:, -1]
    dy = np.asarray(f.rhs(p)(0.0, yT))
    qd = dy[:3]
    u = np.cos(yT[2]) * qd[0] + np.sin(yT[2]) * qd[1]
    omega = qd[2]
    eps = 1e-6
    d2 = (np.asarray(f.rhs(p)(0.0, yT + eps * dy))[:3] - qd) / eps
    udot = -np.sin(yT[2]) * omega * qd[0] + np.cos(yT[2]) * omega * qd[1] + np.cos(yT[2]) * d2[0] + np.sin(yT[2]) * d2[1]
    assert udot == pytest.approx(a * omega**2, rel=1e-4)
    assert d2[2] == pytest.approx(-m * a * u * omega / (I + m * a**2), rel=1e-4)
    # the energy of the free motion is conserved: E = m (ẋ² + ẏ²)/2 + I θ̇²/2 (about the CoM)
    E = [sp.sympify(spec.lagrangian).xreplace(dict(zip(spec.coordinates, s[:3])) | dict(zip(spec.velocities, f.rhs(p)(0.0, s)[:3]))
                                             | {q: vals[q.name] for q in f.parameters}) for s in sol.y.T[::20]]
    assert max(E) - min(E) < 1e-8

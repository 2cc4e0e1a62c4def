"""The Whipple bicycle through anholo's own field (Maggi's equations, the bundled whipple_bicycle file).

Oracles:
* the published linearised lean/steer state matrix of the benchmark bicycle (Meijaard, Papadopoulos,
  Ruina & Schwab 2007), as sympy's test_kane3.py holds it, for v = 0…10 m/s, and the published weave and
  capsize speeds 4.2924 and 6.0243 m/s;
* ``sympy.physics.mechanics.KanesMethod`` on sympy's own bicycle (tests/mechanics_models.py): its
  accelerations at random points of C (tests/mechanics/kane_oracle.py);
* the coordinate multiplier method by hand (tests/oracles.py) for the printed JSON report, which is read
  back with sympy (its ``cse`` definitions in order) and evaluated at a point of C.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution
from scipy.optimize import brentq

from anholo import from_mechanics
from anholo.analysis.linearization import LinearizationProblem
from anholo.cli import main
from anholo.system import System

from mechanics_models import whipple_bicycle
from mechanics.kane_oracle import compare
from mechanics.states import upright_state

pytestmark = pytest.mark.slow

WRrad = 0.3


def published(v):
    """The state matrix in (lean, steer, lean rate, steer rate) of sympy's test_kane3.py (Meijaard et al. 2007)."""
    return np.array([
        [0, 0, 1.0, 0],
        [0, 0, 0, 1.0],
        [9.48977444677355, -0.891197738059089 * v**2 - 0.571523173729245, -0.105522449805691 * v,
         -0.330515398992311 * v],
        [11.7194768719633, -1.97171508499972 * v**2 + 30.9087533932407, 3.67680523332152 * v,
         -3.08486552743311 * v]])


@pytest.fixture(scope="module")
def bicycle():
    s = System.load("whipple_bicycle")
    nh = s.nonholonomic()
    problem = LinearizationProblem(nh, ["lean", "steer", "v1", "v2"])
    return s, nh, problem, {str(k): float(v) for k, v in s.values.items()}


def test_free_velocities_are_lean_steer_and_rear_wheel(bicycle):
    s, nh, _, _ = bicycle
    assert [c.name for c in nh.free_coordinates] == ["lean", "steer", "rear_wheel"]
    assert [c.name for c in nh.dependent_coordinates] == ["yaw", "pitch", "front_wheel", "x", "y"]
    assert nh.distribution_is_integrable() is False


def test_linearised_state_matrix_equals_the_published_one(bicycle):
    _, _, problem, params = bicycle
    worst = 0.0
    for v in np.linspace(0.0, 10.0, 21):
        lin = problem.at({"v3": v / WRrad}, params)
        assert lin.is_equilibrium
        worst = max(worst, np.abs(lin.A - published(v)).max())
    assert worst < 1e-8, worst
    lin = problem.at({"v3": 5.0 / WRrad}, {**params, "Iframe31": -2.0})  # the check can fail
    assert np.abs(lin.A - published(5.0)).max() > 1e-3


def test_weave_and_capsize_speeds(bicycle):
    _, _, problem, params = bicycle

    def growth(v, oscillatory):
        ev = problem.at({"v3": v / WRrad}, params).eigenvalues
        chosen = [e.real for e in ev if (abs(e.imag) > 1e-9) == oscillatory]
        return max(chosen)

    weave = brentq(lambda v: growth(v, True), 3.0, 5.0, xtol=1e-12)
    capsize = brentq(lambda v: growth(v, False), 5.5, 6.5, xtol=1e-12)
    assert abs(weave - 4.2924) < 1e-4 and abs(capsize - 6.0243) < 1e-4, (weave, capsize)
    for v, stable in ((3.0, False), (5.0, True), (7.0, False)):
        assert problem.at({"v3": v / WRrad}, params).stable is stable


def test_accelerations_equal_kanes_method():
    KM, values = whipple_bicycle()
    model = from_mechanics(KM, values=values)
    assert compare(model, KM, values, count=3, seed=2, spread=0.5, route="maggi",
                   dependent=["q1", "q4", "q6", "x", "y"]) < 1e-9


def test_cli_linearize_json_equals_the_published_matrix():
    import io
    out = io.StringIO()
    assert main(["linearize", "whipple_bicycle", "--states", "lean,steer,v1,v2", "--sweep", "v3=0:33.333333333333336:3",
                 "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    for v3, result in zip(data["values"], data["results"]):
        assert np.abs(np.array(result["A"]) - published(v3 * WRrad)).max() < 1e-8


def _read_block(block, names):
    """The JSON block's expressions as numbers at a point: cse definitions first, in order (sympy)."""
    env = dict(names)

    def num(text):
        return complex(sp.sympify(text, locals=env).evalf(subs={}))

    for name, text in block["cse"]:
        value = num(text)
        assert abs(value.imag) < 1e-12
        env[name] = sp.Float(value.real, 30)
    return num


def test_json_report_is_complete_and_correct():
    import io
    out = io.StringIO()
    assert main(["analyze", "whipple_bicycle", "--json", "--sections", "nonholonomic"], out=out) == 0
    data = json.loads(out.getvalue())
    block = data["nonholonomic"]
    for key in ("constraints", "rank_D", "integrable", "affine", "frame", "quasi_velocities_on_C", "v_dot", "q_ddot",
                "multipliers", "frame_multipliers", "implicit", "cse"):
        assert key in block
    assert block["rank_D"] == 3 and block["integrable"] is False
    # a point of C (benchmark values, random configuration and free velocities), and the oracle there
    s = System.load("whipple_bicycle")
    nh = s.nonholonomic()
    q, u = s.chart.coordinates, s.chart.velocities
    rng = random.Random(3)
    pt = {p: sp.Float(v, 30) for p, v in s.values.items()}
    for c in q:
        pt[c] = sp.Float(rng.uniform(-0.3, 0.3), 30)
    for c in nh.free_coordinates:
        pt[u[q.index(c)]] = sp.Float(rng.uniform(-1, 1), 30)
    dep = [u[q.index(c)] for c in nh.dependent_coordinates]
    A = sp.Matrix(s.constraints).jacobian(dep).xreplace(pt).evalf(30)
    b = -sp.Matrix(s.constraints).xreplace({d: 0 for d in dep}).xreplace(pt).evalf(30)
    for d, val in zip(dep, A.LUsolve(b)):
        pt[d] = val
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr)
    qdd, lam = nonlinear_constrained_solution(L, q, u, s.constraints, pt)
    names = {str(k): v for k, v in pt.items()}
    names.update({v.name: pt[u[q.index(c)]] for v, c in zip(nh.free_velocities, nh.free_coordinates)})
    num = _read_block(block, names)
    got = np.array([num(block["q_ddot"][c.name]).real for c in q])
    assert np.abs(got - qdd).max() < 1e-8 * max(1.0, np.abs(qdd).max())
    got_lam = np.array([num(e).real for e in block["multipliers"]])
    assert np.abs(got_lam - lam).max() < 1e-8 * max(1.0, np.abs(lam).max())
    # the implicit form: M x = F with x = (free accelerations, μ = κ_Pᵀ λ)
    free = [q.index(c) for c in nh.free_coordinates]
    KP = np.array(A.tolist(), dtype=float)
    x = np.concatenate([qdd[free], KP.T @ lam])
    M = np.array([[num(e).real for e in row] for row in block["implicit"]["M"]])
    F = np.array([num(e).real for e in block["implicit"]["F"]])
    assert np.abs(M @ x - F).max() < 1e-8 * max(1.0, np.abs(F).max())


def test_text_report_finishes_and_stays_small():
    import io
    out = io.StringIO()
    code = main(["analyze", "whipple_bicycle", "--sections", "nonholonomic,vakonomic,consistency"], out=out)
    text = out.getvalue()
    assert code in (0, 3) and len(text) < 50_000
    assert "not integrable" in text and "Maggi" in text
    full = io.StringIO()
    assert main(["analyze", "whipple_bicycle", "--full", "--sections", "nonholonomic"], out=full) == 0
    assert "Shared subexpressions:" in full.getvalue() and "v1_dot = cse" in full.getvalue()


def _upright_state(s, speed, lean):
    """A state on C of the bicycle file: rolling straight at ``speed`` with a small lean (tests/mechanics/states.py)."""
    values = {p: float(v) for p, v in s.values.items()}
    q0, qd0, names, _, _ = upright_state(s.chart.coordinates, s.chart.velocities, s.holonomic[0], s.constraints, values,
                                         lean="lean", pitch="pitch", rear_wheel="rear_wheel",
                                         free=("lean", "steer", "rear_wheel"), speed=speed, lean_angle=lean,
                                         radius=WRrad)
    return q0, qd0, names


def test_simulation_equals_the_multiplier_method_and_is_self_stable():
    """anholo simulate on Maggi's route against the coordinate multiplier method of sympy's model
    (from_mechanics(...).ode_function(route="multipliers")), integrated from the same state."""
    from scipy.integrate import solve_ivp

    from anholo.numerics import compile_system, from_system, simulate

    s = System.load("whipple_bicycle")
    compiled = compile_system(from_system(s, "nonholonomic"))
    q0, qd0, names = _upright_state(s, 5.0, 0.01)
    traj = simulate(compiled, 2.0, q0, qd0, points=41, progress=False, rtol=1e-10, atol=1e-12)
    KM, values = whipple_bicycle()
    model = from_mechanics(KM, values=values)
    rename = {"q1": "yaw", "q2": "lean", "q4": "pitch", "q5": "steer", "q3": "rear_wheel", "q6": "front_wheel",
              "x": "x", "y": "y"}
    order = [names.index(rename[c.name]) for c in model.chart.coordinates]
    f = model.ode_function(route="multipliers")
    ref = solve_ivp(f, (0, 2.0), np.concatenate([q0[order], qd0[order]]), t_eval=traj.t, rtol=1e-10, atol=1e-12)
    n = len(names)
    assert np.abs(traj.q[order] - ref.y[:n]).max() < 1e-6
    assert np.abs(traj.qdot[order] - ref.y[n:]).max() < 1e-6
    assert traj.constraint_residuals().max() < 1e-8
    long = simulate(compiled, 6.0, q0, qd0, points=61, progress=False)
    lean = long.q[names.index("lean")]
    assert np.abs(lean[-10:]).max() < 0.005  # self-stable at 5 m/s (Meijaard et al. 2007)

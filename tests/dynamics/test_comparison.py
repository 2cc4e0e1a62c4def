"""Vakonomic dynamics for general constraints and the comparison with Chetaev/d'Alembert
(THEORY §§5, 6, 8, 10; seeds 002, 003).

Oracles: the multiplication rule built by hand (tests/oracles.py,
``nonlinear_multiplication_rule_solution`` and, for affine constraints,
``multiplication_rule_solution``); anholo's frame-wise VakonomicSystem (THEORY §5) for linear
constraints; the seed 003 projection −λ Π_W(W⁻¹ M u) evaluated here with numpy from a(q);
numpy null spaces for the compatible velocities; numerical integration with scipy for the
trajectory claims; the closed forms of THEORY §10 for the sphere on a turntable.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import (
    multiplication_rule_solution,
    nonlinear_multiplication_rule_solution,
    point_on_nonlinear_constraints,
    values,
)
from scipy.integrate import solve_ivp

from anholo import Chart, Frame, Lagrangian, NonholonomicSystem, VakonomicSystem
from anholo.dynamics.chetaev import ChetaevSystem
from anholo.analysis.comparison import NonlinearVakonomicSystem, compare_methods, frobenius_data
from anholo.constraints.kinematic import KinematicConstraints
from anholo.system import System

g, c, kk = sp.symbols("g c k", positive=True)


def free_particle(names="x y z", params=(), potential=0):
    chart = Chart(names, parameters=list(params))
    L = sp.Add(*[w**2 for w in chart.velocities]) / 2 - potential
    return chart, Lagrangian(Frame.coordinate(chart), L)


def check_vakonomic_against_oracle(chart, L, cons, seeds=(1, 2), oracle=nonlinear_multiplication_rule_solution):
    V = NonlinearVakonomicSystem(L, cons)
    mot = V.field()
    q, u = chart.coordinates, chart.velocities
    exprs = [mot.accelerations[a] for a in q] + list(mot.multiplier_rates)
    dep = [u[A] for A in V.constraints.dependent]
    for seed in seeds:
        pt = point_on_nonlinear_constraints(q, u, V.constraints.expressions, chart.parameters, dep, seed,
                                            extra=V.multipliers)
        qdd, lam_dot = oracle(L.natural_expr(), q, u, V.constraints.expressions, V.multipliers, pt)
        np.testing.assert_allclose(values(exprs, pt).real, np.concatenate([qdd, lam_dot]), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("cons", [["z_dot - x_dot^2 - y_dot"], ["z_dot^2 - k^2*(x_dot^2 + y_dot^2)"],
                                  ["x*z_dot - y*x_dot^2 - x_dot*y_dot"]])
def test_nonlinear_vakonomic_matches_hand_oracle(cons):
    chart, L = free_particle(params=(g, kk), potential=g * sp.Symbol("z", real=True))
    check_vakonomic_against_oracle(chart, L, cons)


def test_linear_vakonomic_matches_framewise_vakonomic_and_oracle():
    chart, L = free_particle()
    cons = ["z_dot - y*x_dot"]
    check_vakonomic_against_oracle(chart, L, cons, oracle=multiplication_rule_solution)
    qdd_frame, rate_frame = VakonomicSystem(NonholonomicSystem(L, cons)).field().in_written_multipliers()
    mot = NonlinearVakonomicSystem(L, cons).field()
    for q in chart.coordinates:
        assert sp.simplify(mot.accelerations[q] - qdd_frame[q]) == 0
    assert sp.simplify(mot.multiplier_rates[0] - rate_frame[0]) == 0


def test_accelerations_agree_at_zero_multiplier_for_nonlinear_constraints():
    chart, L = free_particle(params=(g,), potential=g * sp.Symbol("z", real=True))
    cmp = compare_methods(L, ["z_dot - x_dot^2 - y_dot"])
    assert cmp.agree_at_zero_multiplier and not cmp.agree_for_every_multiplier
    assert cmp.frobenius is None


# --------------------------------------------------------------------------------------
# one linear constraint: seed 003, corrected
# --------------------------------------------------------------------------------------

ONE_LINEAR = {
    "heisenberg": ("x y z", "z_dot - y*x_dot"),
    "knife_edge": ("x y theta", "sin(theta)*x_dot - cos(theta)*y_dot"),
    "darboux_class3": ("x y z w", "w_dot - y*x_dot"),
    "darboux_class4": ("x y z w", "x*y_dot + z*w_dot"),
    "conformal": ("x y z", "x*y_dot - y*x_dot"),
}


def seed003_projection_numeric(a_exprs, chart, point, lam):
    """−λ Π_W(W⁻¹ M u) with W = I (unit masses), M_AB = ∂_B a_A − ∂_A a_B, evaluated with numpy."""
    q, u = chart.coordinates, chart.velocities
    n = len(q)
    f = lambda e: float(sp.sympify(e).xreplace(point))  # noqa: E731
    a = np.array([f(e) for e in a_exprs])
    M = np.array([[f(sp.diff(a_exprs[A], q[B]) - sp.diff(a_exprs[B], q[A])) for B in range(n)] for A in range(n)])
    x = M @ np.array([f(w) for w in u])
    return -lam * (x - a * (a @ x) / (a @ a))


@pytest.mark.parametrize("case", sorted(ONE_LINEAR))
def test_difference_of_accelerations_is_the_cronstrom_raita_projection(case):
    names, cons = ONE_LINEAR[case]
    chart, L = free_particle(names)
    cmp = compare_methods(L, [cons])
    phi = cmp.chetaev.system.constraints.expressions[0]
    a_exprs = [phi.diff(w) for w in chart.velocities]
    lam = cmp.vakonomic.system.multipliers[0]
    q, u = chart.coordinates, chart.velocities
    dep = [u[A] for A in cmp.chetaev.system.constraints.dependent]
    for seed in (3, 4):
        pt = point_on_nonlinear_constraints(q, u, [phi], [], dep, seed, extra=[lam])
        expected = seed003_projection_numeric(a_exprs, chart, pt, float(pt[lam]))
        np.testing.assert_allclose(values([cmp.acceleration_difference[x] for x in q], pt).real, expected,
                                   rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(values([cmp.projection_formula[x] for x in q], pt).real, expected,
                                   rtol=1e-9, atol=1e-11)
    integrable = case == "conformal"
    assert cmp.frobenius.integrable is integrable
    assert cmp.agree_for_every_multiplier is integrable


def test_frobenius_data():
    chart = Chart("x y z")
    heis = frobenius_data(KinematicConstraints(chart, ["z_dot - y*x_dot"]))
    assert heis.obstruction == {(0, 1, 2): 1} and not heis.integrable and not heis.closed
    exact = frobenius_data(KinematicConstraints(chart, ["z_dot - 2*x*x_dot"]))
    assert exact.closed and exact.integrable and exact.integrating_factor is None
    conf = frobenius_data(KinematicConstraints(chart, ["x*y_dot - y*x_dot"]))
    x, y, z = chart.coordinates
    assert conf.integrable and not conf.closed
    Phi = conf.integrating_factor
    one_form = [Phi * e for e in (-y, x, 0)]
    M = [[sp.simplify(sp.diff(one_form[A], chart.coordinates[B]) - sp.diff(one_form[B], chart.coordinates[A]))
          for B in range(3)] for A in range(3)]
    assert all(e == 0 for row in M for e in row)  # d(Φ a) = 0, checked by hand
    two = frobenius_data(KinematicConstraints(Chart("x y z w"), ["z_dot - y*x_dot", "w_dot - x*y_dot"]))
    assert not two.integrable


@pytest.mark.parametrize("case,dim", [("darboux_class3", 1), ("darboux_class4", 1), ("heisenberg", 0)])
def test_compatible_velocities(case, dim):
    """Compatible u ∈ ker a with (Mu)_A a_B − (Mu)_B a_A = 0 (THEORY §6): the library's conditions vanish
    exactly on the numpy null space {u : a·u = 0, P_⊥a M u = 0}, whose dimension is stated by hand:
    ẇ − yẋ in R⁴ → span ∂z; x ẏ + z ẇ (da of rank 4) → the line of M⁻¹a; Heisenberg → {0}."""
    names, cons = ONE_LINEAR[case]
    chart = Chart(names)
    K = KinematicConstraints(chart, [cons])
    conds = frobenius_data(K).compatibility
    q, u = chart.coordinates, chart.velocities
    n = len(q)
    a_exprs = [K.expressions[0].diff(w) for w in u]
    rng = np.random.default_rng(5)
    qpt = {s: rng.uniform(0.3, 1.2) for s in q}
    a = np.array([float(sp.sympify(e).xreplace(qpt)) for e in a_exprs])
    M = np.array([[float((sp.diff(a_exprs[A], q[B]) - sp.diff(a_exprs[B], q[A])).xreplace(qpt)) for B in range(n)]
                  for A in range(n)])
    P = np.eye(n) - np.outer(a, a) / (a @ a)
    stack = np.vstack([a, P @ M])
    _, sv, Vt = np.linalg.svd(stack)
    null = Vt[np.sum(sv > 1e-10):]
    assert len(null) == dim
    for vec in null:
        pt = {**qpt, **{w: vec[i] for i, w in enumerate(u)}}
        assert all(abs(float(cnd.xreplace(pt))) < 1e-10 for cnd in conds)
    # a generic constrained velocity is not compatible
    v = P @ rng.uniform(-1, 1, n)
    pt = {**qpt, **{w: v[i] for i, w in enumerate(u)}}
    assert max(abs(float(cnd.xreplace(pt))) for cnd in conds) > 1e-3


# --------------------------------------------------------------------------------------
# trajectories (numerical integration)
# --------------------------------------------------------------------------------------


def flows(chart, L, cons):
    ch = ChetaevSystem(L, cons).field().first_order_system()
    V = NonlinearVakonomicSystem(L, cons)
    mot = V.field()
    q, u = chart.coordinates, chart.velocities
    state_v = list(q) + list(u) + list(V.multipliers)
    rhs_v = sp.lambdify(state_v, list(u) + [mot.accelerations[x] for x in q] + list(mot.multiplier_rates), "numpy")
    rhs_c = sp.lambdify(list(ch.state), list(ch.rhs), "numpy")
    return (lambda _t, y: rhs_c(*y)), (lambda _t, y: rhs_v(*y))


def solve(f, y0, t_end):
    sol = solve_ivp(f, (0, t_end), y0, rtol=1e-12, atol=1e-13, dense_output=True, method="DOP853")
    assert sol.success
    return sol


@pytest.mark.parametrize("cons,potential", [("x*y_dot - y*x_dot", "x^2 + 2*y^2 + 1/(x^2 + y^2) + z"),
                                            ("z_dot - 2*x*x_dot", "y^2 + z")])
def test_integrable_constraints_vakonomic_equals_dalembert_for_every_initial_multiplier(cons, potential):
    chart = Chart("x y z")
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    V = sp.sympify(potential.replace("^", "**"), locals={"x": x, "y": y, "z": z})
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - V)
    fc, fv = flows(chart, L, [cons])
    q0 = np.array([0.8, 0.5, 0.1])
    if cons.startswith("x*"):
        u0 = np.array([0.4, 0.25, -0.3])  # radial: x ẏ − y ẋ = 0
    else:
        u0 = np.array([0.3, -0.2, 2 * 0.8 * 0.3])
    ref = solve(fc, np.concatenate([q0, u0]), 1.5)
    for lam0 in (0.0, 0.7, -1.3):
        vak = solve(fv, np.concatenate([q0, u0, [lam0]]), 1.5)
        np.testing.assert_allclose(vak.sol(1.5)[:3], ref.sol(1.5)[:3], rtol=1e-8, atol=1e-9)


def test_truly_nonholonomic_trajectories_differ_at_third_order():
    """Heisenberg with a potential: λ(0) = 0 gives q_vak − q_nh = c t³ + O(t⁴) with the reported c;
    λ(0) ≠ 0 gives a difference of order t²."""
    chart = Chart("x y z")
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - x**2 / 2 - y)
    cons = ["z_dot - y*x_dot"]
    fc, fv = flows(chart, L, cons)
    cmp = compare_methods(L, cons)
    q0, u0 = np.array([0.3, 0.6, 0.1]), np.array([0.5, -0.4, 0.6 * 0.5])
    point = {**dict(zip(chart.coordinates, q0)), **dict(zip(chart.velocities, u0))}
    coeff = np.array([float(cmp.third_order_difference[s].xreplace(point)) for s in chart.coordinates])
    assert np.max(np.abs(coeff)) > 1e-3
    ref = solve(fc, np.concatenate([q0, u0]), 0.1)
    vak0 = solve(fv, np.concatenate([q0, u0, [0.0]]), 0.1)
    for h in (0.02, 0.01):
        diff = vak0.sol(h)[:3] - ref.sol(h)[:3]
        np.testing.assert_allclose(diff / h**3, coeff, rtol=0.1, atol=1e-4)
    vak1 = solve(fv, np.concatenate([q0, u0, [0.8]]), 0.1)
    d1, d2 = (np.linalg.norm(vak1.sol(h)[:3] - ref.sol(h)[:3]) for h in (0.02, 0.01))
    assert 3.5 < d1 / d2 < 4.5  # O(t²)


# --------------------------------------------------------------------------------------
# seed 002: the sphere on a turntable
# --------------------------------------------------------------------------------------


def test_sphere_on_turntable_nonholonomic_sign_and_seed002_217_wrong():
    S = System.load("sphere_on_turntable")
    x, y = S.chart.coordinates[:2]
    xd, yd = S.chart.velocities[:2]
    m, a, k, Om = S.chart.parameters
    mu = k**2 * Om / (a**2 + k**2)
    acc = S.chetaev().field().natural_accelerations()
    assert sp.simplify(acc[x] - (-mu * yd)) == 0 and sp.simplify(acc[y] - mu * xd) == 0
    # seed 002 (2.17): x_dot = mu*y, y_dot = -mu*x, hence x_ddot = mu*y_dot: opposite sign
    assert sp.simplify(acc[x] - mu * yd) != 0


@pytest.mark.slow
def test_sphere_on_turntable_vakonomic_matches_oracle_and_seed002_221_is_not_a_solution():
    S = System.load("sphere_on_turntable")
    chart = S.chart
    check_vakonomic_against_oracle(chart, S.lagrangian, S.constraints, seeds=(1,), oracle=multiplication_rule_solution)
    V = NonlinearVakonomicSystem(S.lagrangian, S.constraints)
    mot = V.field()
    x, y, ph, th, ps = chart.coordinates
    xd, yd, phd, thd, psd = chart.velocities
    m, a, k, Om = chart.parameters
    l1, l2 = V.multipliers
    vals = {m: 1, a: 1, k: sp.Rational(3, 5), Om: 1, x: sp.Rational(3, 10), y: sp.Rational(-1, 5),
            ph: sp.Rational(1, 3), th: sp.Rational(7, 10), ps: sp.Rational(1, 5)}
    mu = (k**2 * Om / (a**2 + k**2)).xreplace(vals)
    t = sp.Symbol("t")
    X, Y = sp.symbols("X Y")
    # (2.21) as printed: x_dot = F1(t, x, y), y_dot = F2(t, x, y)
    den = 1 - (mu * t) ** 2
    F1 = ((mu**2 - mu * Om) * t * X + ((mu * t) ** 2 * Om - mu) * Y) / den
    F2 = ((mu - (mu * t) ** 2 * Om) * X - (mu**2 - mu * Om) * t * Y) / den
    F1, F2 = F1.xreplace(vals), F2.xreplace(vals)
    at0 = {t: 0, X: vals[x], Y: vals[y]}
    xd0, yd0 = F1.xreplace(at0), F2.xreplace(at0)
    xdd = (F1.diff(t) + F1.diff(X) * F1 + F1.diff(Y) * F2).xreplace(at0)
    ydd = (F2.diff(t) + F2.diff(X) * F1 + F2.diff(Y) * F2).xreplace(at0)
    # the seed's own initial data p(0) = 0 (its L − λφ): m x_dot(0) = λ1_seed = −l1, m y_dot(0) = −l2;
    # ω_x, ω_y follow from the constraints, ω_z is free
    wx, wy, wz = (vals[x] * vals[Om] - yd0) / vals[a], (xd0 + vals[y] * vals[Om]) / vals[a], sp.Rational(2, 5)
    P, T = vals[ph], vals[th]
    A = sp.Matrix([[0, sp.cos(P), sp.sin(T) * sp.sin(P)], [0, sp.sin(P), -sp.sin(T) * sp.cos(P)],
                   [1, 0, sp.cos(T)]])
    rates = A.solve(sp.Matrix([wx, wy, wz]))
    pt = {**vals, xd: xd0, yd: yd0, phd: rates[0], thd: rates[1], psd: rates[2], l1: -xd0, l2: -yd0}
    assert all(abs(sp.N(cn.xreplace(pt))) < 1e-20 for cn in S.constraints)
    got = [sp.N(mot.accelerations[x].xreplace(pt)), sp.N(mot.accelerations[y].xreplace(pt))]
    assert abs(got[0] - sp.N(xdd)) > 1e-2 or abs(got[1] - sp.N(ydd)) > 1e-2


# --------------------------------------------------------------------------------------
# command line: anholo compare, anholo analyze with nonlinear constraints
# --------------------------------------------------------------------------------------


def run_cli(argv):
    import io

    from anholo.cli import main

    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def test_cli_compare_text_and_json():
    import json

    code, text = run_cli(["compare", "conformal_constraint"])
    assert code == 0 and "integrating factor 1/(x**2 + y**2)" in text
    assert "coincide for every initial multiplier" in text
    code, out = run_cli(["compare", "nonholonomic_particle", "--json"])
    data = json.loads(out)
    assert code == 0 and data["frobenius"]["integrable"] is False and not data["agree_for_every_multiplier"]
    x, y = sp.symbols("x y", real=True)
    xd, yd = sp.symbols("x_dot y_dot", real=True)
    lam = sp.Symbol("lambda1", real=True)
    got = sp.sympify(data["acceleration_difference"]["y"], locals={"x_dot": xd, "lambda1": lam})
    assert sp.simplify(got + lam * xd) == 0
    assert run_cli(["compare", "rigid_body"])[0] == 2


def test_cli_analyze_reports_chetaev_for_nonlinear_constraints():
    import json

    code, out = run_cli(["analyze", "nonhomogeneous_counterexample", "--json"])
    assert code == 0
    data = json.loads(out)["chetaev"]
    names = {s: sp.Symbol(s, real=True) for s in ("x_dot", "y_dot", "z_dot")}
    names["g"] = sp.Symbol("g", positive=True)
    lam = sp.sympify(data["multipliers"][0], locals=names)
    assert sp.simplify(lam - names["g"] / (2 + 4 * names["x_dot"] ** 2)) == 0
    xdd = sp.sympify(data["q_ddot"]["x"], locals=names)
    assert sp.simplify(xdd + 2 * lam * names["x_dot"]) == 0
    assert data["homogeneity_degrees"] == [None] and data["energy_conserved"] is False
    code, text = run_cli(["analyze", "appell_hamel"])
    assert code == 0 and "homogeneous of degree 1" in text and "Energy conserved: yes" in text


def test_small_identities_are_printed_simplified():
    """Oracle: sin² + cos² = 1 — the printed compatibility condition of the sleigh is −θ̇ (not
    −θ̇ sin²θ − θ̇ cos²θ), and every printed form equals the computed expression (simplify of the difference)."""
    import sympy as sp

    from anholo.analysis.comparison import _show
    from anholo.system import System

    s = System.load("chaplygin_sleigh")
    cmp = compare_methods(s.lagrangian, s.kinematic_constraints())
    for c in cmp.frobenius.compatibility:
        assert sp.simplify(_show(c) - c) == 0
    assert "-theta_dot = 0" in cmp.to_text()
    theta = sp.Symbol("theta")
    assert _show(-sp.sin(theta) ** 2 - sp.cos(theta) ** 2) == -1

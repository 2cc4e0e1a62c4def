"""Chaplygin reduction and Chaplygin's reducing multiplier.

Oracles (independent of anholo):
* the coordinate multiplier method (tests/oracles.py) on the unreduced system: its shape
  accelerations at random points of C, and its trajectories integrated with scipy;
* the constrained Lagrangian l(r, ṙ) obtained here by substituting the solved constraints into L;
* the Hamiltonian system of H̃(r, p̃) = ½ p̃ g⁻¹ p̃ / N² + V built here from that l, integrated with
  scipy in the new time τ (dτ = N dt) and compared with the unreduced motion;
* for ż = f(x, y) ẋ (L = ½|u|²) the coordinate equations solved by hand with sympy, and the
  divergence of the reduced field in (x, y, ẋ, ẏ) differentiated directly: a density ρ(x, y) with
  div(ρX) = 0 must have ∇ ln ρ = −(coefficients of ẋ, ẏ in div X), which is closed iff a
  multiplier exists.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution, coordinate_vector_fields, point_on_constraints
from scipy.integrate import solve_ivp

from anholo import Chart, Frame, Lagrangian
from anholo.analysis.chaplygin import ChaplyginSystem
from anholo.analysis.reduction import ChaplyginReduction
from anholo.errors import ReductionError
from anholo.system import System

CASES = {
    "nonholonomic_particle": {},
    "vertical_rolling_disk": {"m": 1.3, "R": 0.7, "I": 0.4, "J": 0.9},
    "knife_edge": {"m": 1.1, "J": 0.6, "g": 9.81, "alpha": 0.4},
    "two_wheeled_carriage": {"m": 2.0, "m0": 1.0, "a": 0.5, "J": 1.0, "C": 0.1, "R": 0.3, "c": 0.5},
}


def load(name):
    S = System.load(name)
    vals = {p: CASES[name].get(p.name, 1.0) for p in S.chart.parameters}
    return S, S.chaplygin().reduction(), vals


@pytest.mark.parametrize("name", list(CASES))
def test_reduced_accelerations_are_the_shape_accelerations_of_the_unreduced_system(name):
    S, red, vals = load(name)
    q, u = S.chart.coordinates, S.chart.velocities
    cons = [e.xreplace(vals) for e in S.constraints]
    Ln = S.lagrangian.natural_expr().xreplace(vals)
    dep = [S.chart.velocities[S.chart.index(g)] for g in red.group_coordinates]
    idx = [S.chart.index(r) for r in red.shape]
    for seed in (1, 2, 3):
        pt = point_on_constraints(q, u, cons, [], dep, seed)
        qdd, _ = constrained_coordinate_solution(Ln, q, u, cons, pt)
        lib = [float(e.xreplace(vals).xreplace(pt)) for e in red.accelerations]
        np.testing.assert_allclose(lib, qdd[idx], rtol=1e-9, atol=1e-10)
        # reconstruction: the group velocities of the point on C
        for gq, rate in red.reconstruction().items():
            assert abs(float(rate.xreplace(vals).xreplace(pt)) - float(pt[u[S.chart.index(gq)]])) < 1e-10
    # the gyroscopic matrix is skew and G-invariant (no group coordinates)
    B = red.gyroscopic
    assert all(sp.simplify(B[i, j] + B[j, i]) == 0 for i in range(red.dim) for j in range(red.dim))
    assert not (set().union(*(e.free_symbols for e in B)) & set(red.group_coordinates))


def hand_reduced_lagrangian(S, red, vals):
    """l = L with the constraints solved for the group velocities (sympy.solve, here)."""
    u = S.chart.velocities
    dep = [u[S.chart.index(g)] for g in red.group_coordinates]
    sol = sp.solve([e.xreplace(vals) for e in S.constraints], dep, dict=True)[0]
    l = sp.expand(S.lagrangian.natural_expr().xreplace(vals).xreplace(sol))
    return l.xreplace({g: 0 for g in red.group_coordinates})


@pytest.mark.parametrize("name", ["nonholonomic_particle", "knife_edge", "two_wheeled_carriage"])
def test_hamiltonised_flow_in_the_new_time_is_the_unreduced_motion(name):
    S, red, vals = load(name)
    rm = red.reducing_multiplier()
    assert rm.exists and rm.multiplier is not None
    r, rd = red.shape, red.shape_velocities
    l = hand_reduced_lagrangian(S, red, vals)
    diff = sp.lambdify(list(r) + list(rd), l - red.reduced_lagrangian.xreplace(vals))
    assert all(abs(diff(*np.random.default_rng(s).uniform(-1, 1, 4))) < 1e-12 for s in range(3))
    g = sp.hessian(l, rd)
    V = -l.xreplace({s: 0 for s in rd})
    N = rm.multiplier.xreplace(vals)
    pt = sp.symbols("P0:2", real=True)
    H = (sp.Matrix(pt).T * g.inv() * sp.Matrix(pt))[0] / (2 * N**2) + V
    ham = sp.lambdify(list(r) + list(pt), [H.diff(pt[0]), H.diff(pt[1]), -H.diff(r[0]), -H.diff(r[1])], "numpy")
    # the unreduced motion (coordinate multiplier method) with τ(t) = ∫ N dt
    q, u = S.chart.coordinates, S.chart.velocities
    cons = [e.xreplace(vals) for e in S.constraints]
    nh, _, _ = coordinate_vector_fields(S.lagrangian.natural_expr().xreplace(vals), q, u, cons, {})
    idx = [S.chart.index(s) for s in r]
    fN = sp.lambdify(list(r), N, "numpy")
    n = len(q)

    def full(t, x):
        return np.concatenate([nh(t, x[:-1]), [fN(*x[idx])]])

    dep = [u[S.chart.index(gq)] for gq in red.group_coordinates]
    p0 = point_on_constraints(q, u, cons, [], dep, 4)
    x0 = [float(p0[s]) for s in q] + [float(p0[s]) for s in u] + [0.0]
    T = 0.6 if name == "knife_edge" else 2.0   # the knife edge's shape chart (x, θ) is singular at cos θ = 0
    sol = solve_ivp(full, (0, T), x0, rtol=1e-11, atol=1e-12, dense_output=True)
    assert sol.success
    # initial p̃ = N g ṙ
    fg = sp.lambdify(list(r), g, "numpy")
    r0 = np.array([x0[i] for i in idx])
    rd0 = np.array([x0[n + i] for i in idx])
    ptil0 = fN(*r0) * np.array(fg(*r0), dtype=float) @ rd0
    tau_end = sol.y[-1, -1]
    ts = np.linspace(0, T, 9)
    taus = sol.sol(ts)[-1]
    hsol = solve_ivp(lambda tau, y: np.array(ham(*y), dtype=float), (0, tau_end), np.concatenate([r0, ptil0]),
                     rtol=1e-11, atol=1e-12, dense_output=True)
    assert hsol.success
    np.testing.assert_allclose(hsol.sol(taus)[:2].T, sol.sol(ts)[idx].T, atol=1e-7)
    # the motion is not trivial: the shape velocities change
    assert np.ptp(sol.y[[n + i for i in idx]]) > 1e-3 or name == "two_wheeled_carriage"


def _particle_family(f_text):
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)
    return ChaplyginReduction(ChaplyginSystem(L, [f"z_dot - ({f_text})*x_dot"], [[0, 0, 1]]))


@pytest.mark.parametrize("f_text, exists", [("y", True), ("x*y", False), ("sin(y)", True), ("x + y**2", False)])
def test_multiplier_exists_iff_the_hand_divergence_condition_is_closed(f_text, exists):
    x, y, z, xd, yd = sp.symbols("x y z x_dot y_dot", real=True)
    f = sp.sympify(f_text, locals={"x": x, "y": y})
    xdd, ydd, zdd, lam = sp.symbols("xdd ydd zdd lam")
    # E(L) = λ ω, ω = (−f, 0, 1); differentiated constraint
    sol = sp.solve([xdd + lam * f, ydd, zdd - lam, zdd - (f.diff(x) * xd + f.diff(y) * yd) * xd - f * xdd],
                   [xdd, ydd, zdd, lam], dict=True)[0]
    X = [sp.simplify(sol[xdd]), sp.simplify(sol[ydd])]
    divX = sp.expand(sp.simplify(X[0].diff(xd) + X[1].diff(yd)))
    grad_log_rho = [-divX.coeff(xd), -divX.coeff(yd)]
    assert sp.simplify(divX - (-grad_log_rho[0] * xd - grad_log_rho[1] * yd)) == 0
    closed = sp.simplify(grad_log_rho[0].diff(y) - grad_log_rho[1].diff(x)) == 0
    assert closed is exists
    red = _particle_family(f_text)
    np.testing.assert_allclose(
        [float(e.xreplace({x: 0.3, y: -0.7, xd: 0.2, yd: 1.1})) for e in red.accelerations],
        [float(e.xreplace({x: 0.3, y: -0.7, xd: 0.2, yd: 1.1})) for e in X], atol=1e-12)
    rm = red.reducing_multiplier()
    assert rm.exists is exists
    if exists:
        # the invariant measure N det g (w.r.t. dr dṙ) is the ρ of the hand computation, up to a constant
        rho = rm.measure_density
        assert sp.simplify(rho.diff(x) / rho - grad_log_rho[0]) == 0
        assert sp.simplify(rho.diff(y) / rho - grad_log_rho[1]) == 0
        assert "Hamiltonian" in str(rm) and rm.to_dict()["exists"] is True
    else:
        assert rm.multiplier is None and "No reducing multiplier" in str(rm)


def test_class_multiplier_is_inverse_square_root_of_the_inertia():
    """§7.1 class: l = ½ J(r2) ṙ1² + ½ I2 ṙ2², J = I1 + Σ m_i A_i²; the multiplier is J^(−1/2)
    (so the invariant density N det g = I2 √J), derived by hand from g_2γ w_1 − g_1γ w_2 = C_γ with
    B_12 = Σ m_i A_i A_i′ ṙ1."""
    from anholo.examples import crampin_mestdag_class

    S = System.from_spec(crampin_mestdag_class(["tan(r2)"]))
    red = ChaplyginReduction(ChaplyginSystem(S.lagrangian, S.constraints, [[0, 0, 1]]))
    P = {p.name: p for p in S.chart.parameters}
    r2 = S.chart.coordinates[1]
    J = P["I1"] + P["m1"] * sp.tan(r2) ** 2
    rm = red.reducing_multiplier()
    assert sp.simplify(rm.multiplier * sp.sqrt(J) / sp.sqrt(P["I1"])) == 1 or \
        sp.simplify((rm.multiplier**2 * J).diff(r2)) == 0
    assert sp.simplify((rm.measure_density**2 / J).diff(r2)) == 0


def test_reduction_errors():
    with pytest.raises(ReductionError, match="two shape degrees"):
        chart = Chart("x y z w")
        xd, yd, zd, wd = chart.velocities
        L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2 + wd**2) / 2)
        ChaplyginReduction(ChaplyginSystem(L, ["w_dot - y*x_dot"], [[0, 0, 0, 1]])).reducing_multiplier()
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 + xd)
    with pytest.raises(ReductionError, match="linear in the shape velocities"):
        ChaplyginReduction(ChaplyginSystem(L, ["z_dot - y*x_dot"], [[0, 0, 1]])).reducing_multiplier()

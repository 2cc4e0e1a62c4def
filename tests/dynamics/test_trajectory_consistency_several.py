"""Consistency along one motion for several linear constraints: the rolling coin on an inclined plane
(Lemos 2021) and the two-wheeled carriage.

Oracles (independent of anholo): the coordinate multiplier method and the coordinate multiplication
rule ``E_A(L + μ_ν φ^ν) = 0`` built by hand (tests/oracles.py) and integrated with scipy; a vakonomic
verdict is checked by integrating the multiplication rule from the initial multipliers found and
comparing with the nonholonomic motion, a negative verdict by minimising, over μ(0), the distance of
the vakonomic motion from the nonholonomic one (scipy.optimize). The closed-form coin motions are
derived by hand (θ = ωt, (J + mR²) φ̈ = m g R sin α cos θ).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import coordinate_vector_fields
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

from anholo import Chart
from anholo.analysis.trajectory_consistency import TrajectoryConsistency
from anholo.system import System

t = sp.Symbol("t", real=True)
m, R, I, J, g = 1.0, 0.5, 0.3, 0.2, 9.81


def coin(alpha):
    chart = Chart("x y theta phi")
    x, y, th, ph = chart.coordinates
    xd, yd, thd, phd = chart.velocities
    L = m * (xd**2 + yd**2) / 2 + I * thd**2 / 2 + J * phd**2 / 2 + m * g * np.sin(alpha) * x
    cons = [xd - R * sp.cos(th) * phd, yd - R * sp.sin(th) * phd]
    return chart, sp.nsimplify(L, rational=False), cons


def sample_motion(chart, L, cons, s0, T=1.5, count=301):
    q, u = chart.coordinates, chart.velocities
    nh, vak, lam = coordinate_vector_fields(L, q, u, cons, {})
    ts = np.linspace(0, T, count)
    sol = solve_ivp(nh, (0, T), s0, t_eval=ts, rtol=1e-11, atol=1e-12)
    n = len(q)
    Q, U = sol.y[:n].T, sol.y[n:].T
    lams = np.array([lam(a, b) for a, b in zip(Q, U)])
    return ts, Q, U, lams, vak


def vakonomic_distance(vak, s0, mu0, ts, Q, rtol=1e-11):
    sol = solve_ivp(vak, (ts[0], ts[-1]), list(s0) + list(mu0), t_eval=ts, rtol=rtol, atol=rtol / 10)
    return (sol.y[: Q.shape[1]].T - Q).ravel()


def coin_state(theta0, omega, phidot=1.2):
    return [0.0, 0.0, theta0, 0.0, R * np.cos(theta0) * phidot, R * np.sin(theta0) * phidot, omega, phidot]


def test_forms_are_the_written_constraints():
    chart, L, cons = coin(0.3)
    con = TrajectoryConsistency(chart, cons)
    assert sp.Matrix(con.forms) == sp.Matrix(cons).jacobian(chart.velocities)
    assert con.compatible_velocities().dimension == 0          # only u = 0 is compatible


@pytest.mark.parametrize("theta0, omega", [(0.4, 1.3), (0.0, 2.0), (0.9, 0.0)])
def test_coin_on_incline_turning_or_oblique_motions_are_not_vakonomic(theta0, omega):
    """Lemos (2021): on the incline no nontrivial nonholonomic motion is vakonomic."""
    chart, L, cons = coin(0.3)
    s0 = coin_state(theta0, omega)
    ts, Q, U, lams, vak = sample_motion(chart, L, cons, s0)
    verdict = TrajectoryConsistency(chart, cons).is_vakonomic_sampled(ts, Q, U, lams)
    assert not verdict and not verdict.compatible
    # independent: no initial multiplier makes the multiplication rule follow this motion
    short = slice(0, 121, 4)                                   # t ≤ 0.6
    for start in ([0.0, 0.0], [-0.6, 0.0]):
        best = least_squares(lambda mu: vakonomic_distance(vak, s0, mu, ts[short], Q[short], 1e-9), start,
                             max_nfev=40)
        assert np.max(np.abs(best.fun)) > 1e-3


def test_coin_rolling_straight_down_the_incline_is_vakonomic_with_a_line_of_multipliers():
    chart, L, cons = coin(0.3)
    s0 = coin_state(0.0, 0.0)
    ts, Q, U, lams, vak = sample_motion(chart, L, cons, s0)
    verdict = TrajectoryConsistency(chart, cons).is_vakonomic_sampled(ts, Q, U, lams)
    assert verdict and not verdict.compatible
    assert len(verdict.free_directions) == 1                   # μ(0) = ν (cos θ0, sin θ0), ν free
    d = np.array(verdict.free_directions[0])
    assert abs(d[1]) < 1e-6
    for shift in (0.0, 0.8):
        mu0 = np.array(verdict.initial_multipliers) + shift * d
        assert np.max(np.abs(vakonomic_distance(vak, s0, mu0, ts, Q))) < 1e-7


def test_coin_on_a_horizontal_plane_is_vakonomic():
    chart, L, cons = coin(0.0)
    s0 = coin_state(0.3, 1.7)
    ts, Q, U, lams, vak = sample_motion(chart, L, cons, s0)
    verdict = TrajectoryConsistency(chart, cons).is_vakonomic_sampled(ts, Q, U, lams)
    assert verdict and len(verdict.free_directions) == 0
    # μ = −m R φ̇ (cos θ, sin θ) by hand; it reproduces the motion, and the sampled estimate is close to it
    exact = [-m * R * s0[7] * np.cos(0.3), -m * R * s0[7] * np.sin(0.3)]
    assert np.max(np.abs(vakonomic_distance(vak, s0, exact, ts, Q))) < 1e-7
    np.testing.assert_allclose(verdict.initial_multipliers, exact, atol=1e-4)
    assert np.max(np.abs(vakonomic_distance(vak, s0, verdict.initial_multipliers, ts, Q))) < 1e-4


def test_symbolic_coin_motions():
    """θ = ωt, φ̇ = c + k sin(ωt)/ω with k = m g R sin α/(J + m R²); x, y by quadrature (by hand)."""
    omega, c0 = 1.5, 1.0
    chart = Chart("x y theta phi")
    xd, yd, thd, phd = chart.velocities
    for sin_a, expected in ((sp.Rational(3, 10), False), (0, True)):
        L = m * (xd**2 + yd**2) / 2 + I * thd**2 / 2 + J * phd**2 / 2 + m * g * sin_a * chart.coordinates[0]
        k = m * g * R * sin_a / (J + m * R**2)
        phidot = c0 + k * sp.sin(omega * t) / omega
        phi = sp.integrate(phidot, (t, 0, t))
        x = sp.integrate(R * phidot * sp.cos(omega * t), (t, 0, t))
        y = sp.integrate(R * phidot * sp.sin(omega * t), (t, 0, t))
        con = TrajectoryConsistency(chart, ["x_dot - R*cos(theta)*phi_dot".replace("R", str(R)),
                                          "y_dot - R*sin(theta)*phi_dot".replace("R", str(R))])
        verdict = con.is_vakonomic(L, [x, y, omega * t, phi], t)
        assert verdict.vakonomic is expected and not verdict.compatible


@pytest.mark.slow
def test_carriage_with_a_zero_is_vakonomic_and_the_found_multipliers_reproduce_it():
    """a = 0: σ = −p is strongly consistent, so every nonholonomic motion is vakonomic (three constraints)."""
    from anholo.examples import example_path
    from anholo.io.systemfile import parse_system

    # a = 0 is a value of the offset only once it is declared nonnegative (parameters are positive)
    text = example_path("two_wheeled_carriage").read_text() + '\n[signs]\na = "nonnegative"\n'
    S = System.from_spec(parse_system(text).substitute({"a": 0}))
    vals = {p: {"m": 2.0, "m0": 1.0, "J": 1.0, "C": 0.1, "R": 0.3, "c": 0.5}[p.name] for p in S.chart.parameters}
    cons = [e.xreplace(vals) for e in S.constraints]
    L = S.lagrangian.natural_expr().xreplace(vals)
    q, u = S.chart.coordinates, S.chart.velocities
    s0 = [0.1, -0.2, 0.3, 0.0, 0.0]
    w1, w2 = 1.1, -0.4
    th = s0[2]
    s0 += [0.15 * np.cos(th) * (w1 + w2), 0.15 * np.sin(th) * (w1 + w2), 0.3 * (w2 - w1), w1, w2]
    ts, Q, U, lams, vak = sample_motion(S.chart, L, cons, s0, T=1.0, count=201)
    verdict = TrajectoryConsistency(S.chart, cons).is_vakonomic_sampled(ts, Q, U, lams)
    assert verdict
    assert np.max(np.abs(vakonomic_distance(vak, s0, verdict.initial_multipliers, ts, Q))) < 1e-6

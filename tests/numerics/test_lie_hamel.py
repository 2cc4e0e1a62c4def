"""The discrete Hamel scheme with the Cayley map on SE(2) (``simulate(method="hamel")`` on SE(2) systems).

Oracles: the coordinate multiplier equations built with sympy in :func:`tests.oracles.multiplier_ode`
(scipy DOP853 at tight tolerance) for the order; the inverse Cayley map written out here for the discrete
constraint in the Lie algebra; the midpoint discrete Lagrange–d'Alembert scheme for the claim that the two
schemes differ (at order h²)."""

import math

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.numerics import simulate
from anholo.numerics.lie_hamel import se2_factor
from anholo.system import System

from oracles import multiplier_ode, rolling_disk_ode

A, M, INERTIA = 0.5, 1.0, 1.0


def sleigh_start(theta=0.3, u=0.8, w=0.7):
    return [0.0, 0.0, theta], [u * math.cos(theta) - A * w * math.sin(theta),
                                u * math.sin(theta) + A * w * math.cos(theta), w]


def sleigh_oracle():
    x, y, th, xd, yd, thd = sp.symbols("x y th xd yd thd")
    L = M * (xd**2 + yd**2) / 2 + INERTIA * thd**2 / 2
    return multiplier_ode(L, [x, y, th], [xd, yd, thd], [-sp.sin(th) * xd + sp.cos(th) * yd - A * thd])


def test_the_se2_factor_is_found_where_l_and_d_are_invariant(tmp_path):
    assert se2_factor(System.load("chaplygin_sleigh")) == (0, 1, 2)
    assert se2_factor(System.load("rolling_disk")) == (0, 1, 2)
    assert se2_factor(System.load("nonholonomic_particle")) is None
    # a potential that depends on the position breaks the symmetry: no group scheme
    path = tmp_path / "sleigh_in_a_well.toml"
    path.write_text('name = "s"\ncoordinates = ["x", "y", "theta"]\nparameters = ["a"]\n'
                    'lagrangian = "(x_dot^2 + y_dot^2 + theta_dot^2)/2 - x^2/2"\n'
                    'constraints = ["-sin(theta)*x_dot + cos(theta)*y_dot - a*theta_dot"]\n[values]\na = 0.5\n')
    assert se2_factor(System.load(str(path))) is None


def test_order_two_on_the_sleigh_against_the_multiplier_equations():
    sleigh = System.load("chaplygin_sleigh")
    q0, qd0 = sleigh_start()
    times = np.linspace(0, 5, 6)
    ref = solve_ivp(sleigh_oracle(), (0, 5), [*q0, *qd0], method="DOP853", rtol=1e-12, atol=1e-13, t_eval=times).y
    errors = []
    for h in (0.05, 0.025):
        tr = simulate(sleigh, (0, 5), q0, qd0, method="hamel", step=h, t_eval=times)
        assert "Cayley" in tr.message
        errors.append(np.abs(tr.q - ref[:3]).max())
    order = math.log2(errors[0] / errors[1])
    assert 1.9 < order < 2.1, (errors, order)


def _lie_algebra_residual(Q, h):
    """``h u₂ − a h ω`` of consecutive grid points through the inverse Cayley map on SE(2)."""
    th0, dth = Q[2, :-1], np.diff(Q[2])
    dx, dy = np.diff(Q[0]), np.diff(Q[1])
    d1 = np.cos(th0) * dx + np.sin(th0) * dy
    d2 = -np.sin(th0) * dx + np.cos(th0) * dy
    w = 2 * np.tan(dth / 2)
    return d2 - w * d1 / 2 - A * w


def test_the_discrete_constraint_holds_in_the_lie_algebra_to_round_off():
    sleigh = System.load("chaplygin_sleigh")
    q0, qd0 = sleigh_start(w=2.0)
    h = 0.1
    hamel = simulate(sleigh, (0, 20), q0, qd0, method="hamel", step=h)  # output at the grid points
    assert np.abs(_lie_algebra_residual(hamel.q, h)).max() < 1e-12
    midpoint = simulate(sleigh, (0, 20), q0, qd0, method="variational", step=h)
    assert np.abs(_lie_algebra_residual(midpoint.q, h)).max() > 1e-6  # another discrete constraint


def test_a_different_scheme_from_the_midpoint_rule_by_order_h2():
    sleigh = System.load("chaplygin_sleigh")
    q0, qd0 = sleigh_start(w=2.0)
    gaps = []
    for h in (0.04, 0.02):
        a = simulate(sleigh, (0, 4), q0, qd0, method="hamel", step=h, t_eval=[4.0]).q[:, -1]
        b = simulate(sleigh, (0, 4), q0, qd0, method="variational", step=h, t_eval=[4.0]).q[:, -1]
        gaps.append(np.abs(a - b).max())
    assert gaps[1] > 1e-7
    assert 3.3 < gaps[0] / gaps[1] < 4.8, gaps


def test_rolling_disk_order_two_with_shape_coordinates():
    disk = System.load("rolling_disk")
    r = 0.5
    f = rolling_disk_ode(1.0, r, 9.81)
    q0 = [0.0, 0.0, 0.4, 0.2, 0.0]
    spin_d, yaw_d = 4.0, 1.5
    qd0 = [r * math.cos(0.4) * spin_d, r * math.sin(0.4) * spin_d, yaw_d, 0.3, spin_d]
    times = np.linspace(0, 1, 3)
    ref = solve_ivp(f, (0, 1), [*q0, *qd0], method="DOP853", rtol=1e-12, atol=1e-13, t_eval=times).y
    errors = []
    for h in (0.01, 0.005):
        tr = simulate(disk, (0, 1), q0, qd0, method="hamel", step=h, t_eval=times)
        assert "Cayley" in tr.message
        errors.append(np.abs(tr.q - ref[:5]).max())
        assert np.abs(tr.constraint_residuals()).max() < 1e-10
    order = math.log2(errors[0] / errors[1])
    assert 1.9 < order < 2.1, (errors, order)

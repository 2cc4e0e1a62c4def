"""Higher-order constraints under Chetaev's rule (Talamucci 2025, eq. (30)) and the energy H* (eqs. (42)–(44)).

Oracles: the equations ``E_A(L) = λ ∂h/∂q̈^A``, h = 0 solved by hand here with sympy; for h = dφ/dt
the coordinate multiplier method of φ (tests/oracles.py); a scipy integration checking that h stays
zero and that φ stays zero when it starts at zero; H and H* of the counterexample φ = ż − ẋ² − ẏ
written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution, point_on_constraints
from scipy.integrate import solve_ivp

from anholo import Chart, Frame, Lagrangian
from anholo.dynamics.higher_order import HigherOrderChetaevSystem, restricted_energy
from anholo.errors import ConstraintError, NonlinearConstraintError


def test_genuinely_second_order_constraint_by_hand():
    g = sp.Symbol("g", positive=True)
    chart = Chart("x y", parameters=[g])
    x, y = chart.coordinates
    xd, yd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2) / 2 - g * y)
    f = HigherOrderChetaevSystem(L, ["x_ddot - y*y_ddot"]).field()
    # by hand: ẍ = λ, ÿ + g = −yλ, ẍ − yÿ = 0  ⇒  λ = −g y/(1 + y²)
    a, b, lam = sp.symbols("a b lam")
    sol = sp.solve([a - lam, b + g + y * lam, a - y * b], [a, b, lam], dict=True)[0]
    assert sp.simplify(f.accelerations[x] - sol[a]) == 0
    assert sp.simplify(f.accelerations[y] - sol[b]) == 0
    assert sp.simplify(f.multipliers[0] - sol[lam]) == 0
    assert [sp.simplify(e) for e in f.constraint_forces()] == [sp.simplify(sol[lam]), sp.simplify(-y * sol[lam])]
    # along an integrated motion h = ẍ − y ÿ stays zero
    fa = sp.lambdify([x, y, xd, yd], [f.accelerations[x].subs(g, 9.81), f.accelerations[y].subs(g, 9.81)])
    sol_t = solve_ivp(lambda t, s: [s[2], s[3], *fa(*s)], (0, 2), [0.1, 0.5, 0.3, -0.2], rtol=1e-11, atol=1e-12)
    for s in sol_t.y.T:
        ax, ay = fa(*s)
        assert abs(ax - s[1] * ay) < 1e-12


@pytest.mark.parametrize("phi", ["z_dot - y*x_dot", "z_dot - sin(x)*y_dot"])
def test_time_derivative_of_a_kinematic_constraint_gives_the_chetaev_motion(phi):
    chart = Chart("x y z")
    q, u = chart.coordinates, chart.velocities
    x, y, z = q
    xd, yd, zd = u
    Ln = (xd**2 + 2 * yd**2 + zd**2) / 2 - x * z
    phi_e = sp.sympify(phi, locals={s.name: s for s in q + u})
    acc = sp.symbols("x_ddot y_ddot z_ddot", real=True)
    h = sum(phi_e.diff(qA) * uA for qA, uA in zip(q, u)) + sum(phi_e.diff(uA) * aA for uA, aA in zip(u, acc))
    field = HigherOrderChetaevSystem(Lagrangian(Frame.coordinate(chart), Ln), [h]).field()
    for seed in (1, 2):
        pt = point_on_constraints(q, u, [phi_e], [], [zd], seed)
        qdd, lam = constrained_coordinate_solution(Ln, q, u, [phi_e], pt)
        lib = [float(field.accelerations[qA].xreplace(pt)) for qA in q]
        np.testing.assert_allclose(lib, qdd, atol=1e-10)
        assert abs(float(field.multipliers[0].xreplace(pt)) - lam[0]) < 1e-10


def test_parser_and_errors():
    chart = Chart("x y")
    xd, yd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2) / 2)
    with pytest.raises(ConstraintError, match="contains no accelerations"):
        HigherOrderChetaevSystem(L, ["x_dot - y_dot"])
    with pytest.raises(NonlinearConstraintError, match="not affine"):
        HigherOrderChetaevSystem(L, ["x_ddot^2 - y_ddot"])


def test_restricted_energy_of_the_counterexample_by_hand():
    g = sp.Symbol("g", positive=True)
    chart = Chart("x y z", parameters=[g])
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - g * z)
    r = restricted_energy(L, ["z_dot - x_dot^2 - y_dot"])
    alpha = xd**2 + yd
    H = (xd**2 + yd**2 + alpha**2) / 2 + g * z
    Lstar = (xd**2 + yd**2 + alpha**2) / 2 - g * z
    Hstar = xd * Lstar.diff(xd) + yd * Lstar.diff(yd) - Lstar
    assert sp.simplify(r.energy - H) == 0 and sp.simplify(r.restricted_energy - Hstar) == 0
    # eq. (44): H* − H = (ᾱ − α) ∂L/∂ż = x_dot² (x_dot² + y_dot)
    assert sp.simplify(Hstar - H - xd**2 * alpha) == 0
    assert sp.simplify(r.difference - xd**2 * alpha) == 0
    assert r.identity_holds and not r.homogeneous
    assert sp.simplify(r.alpha_bar[0] - (2 * xd**2 + yd)) == 0
    assert "H* = H +" in str(r) and r.to_dict()["homogeneous"] is False


def test_restricted_energy_homogeneous_constraint_coincides():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)
    r = restricted_energy(L, ["z_dot - sqrt(x_dot^2 + y_dot^2)"])       # homogeneous of degree 1
    assert r.homogeneous and sp.simplify(r.restricted_energy - r.energy) == 0
    # by hand: on C, H = ½(ẋ² + ẏ² + ẋ² + ẏ²)
    assert sp.simplify(r.energy - (xd**2 + yd**2)) == 0

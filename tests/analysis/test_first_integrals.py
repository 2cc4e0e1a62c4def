"""First integrals and the nonholonomic momentum equation.

Oracles: the coordinate multiplier method built by hand (tests/oracles.py,
``[[W, −Aᵀ], [A, 0]] [q̈; λ] = [F; −(∂φ/∂q) u]``): the derivative of each reported integral
along it, ``dF/dt = ∂F/∂q u + ∂F/∂u q̈``, vanishes at random points of C; a long simulation of
that field (scipy DOP853) keeps the integrals to 1e-9; the momentum equation of Bloch et al.
(1996) for the snakeboard is compared with the derivative of the momentum along that field.
"""

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.analysis.first_integrals import first_integrals, momentum_equations
from anholo.system import System
from oracles import constrained_coordinate_solution, point_on_constraints


def _rate_along_oracle(s, F, point):
    q, u = list(s.chart.coordinates), list(s.chart.velocities)
    qdd, _ = constrained_coordinate_solution(s.lagrangian.natural_expr(), q, u, s.constraints, point)
    grad = [sp.diff(F, x).xreplace(point) for x in q + u]
    vals = [point[x] for x in u] + list(qdd)
    return float(sum(g * v for g, v in zip(grad, vals)))


def _dependent(s, nh):
    """The velocities the adapted frame solved the constraints for (the coordinate fields X_a)."""
    u = s.chart.velocities
    return [u[list(nh.frame.vectors.row(a)).index(1)] for a in range(nh.m, nh.n)]


def test_integrals_are_conserved_along_the_coordinate_field():
    for name, expected in (("nonholonomic_particle", 2), ("vertical_rolling_disk", 3), ("snakeboard", 3)):
        s = System.load(name)
        nh = s.nonholonomic()
        res = first_integrals(nh.field())
        assert len(res.integrals) == expected and res.integrals[0].kind == "energy"
        dep = _dependent(s, nh)
        for seed in range(3):
            pt = point_on_constraints(s.chart.coordinates, s.chart.velocities, s.constraints,
                                      s.chart.parameters, dep, seed)
            for F in res.integrals:
                assert abs(_rate_along_oracle(s, F.natural, pt)) < 1e-9, (name, F)


def test_energy_of_the_sphere_on_a_turntable_is_not_conserved():
    s = System.load("sphere_on_turntable")
    res = first_integrals(s.nonholonomic().field())
    assert not res.energy_conserved and res.energy_rate != 0
    assert all(F.kind != "energy" for F in res.integrals)


def test_long_simulation_keeps_the_integrals():
    s = System.load("nonholonomic_particle")
    res = first_integrals(s.nonholonomic().field())
    q, u = list(s.chart.coordinates), list(s.chart.velocities)
    L = s.lagrangian.natural_expr()
    W = sp.Matrix(3, 3, lambda A, B: sp.diff(L, u[A], u[B]))
    Fv = sp.Matrix([sp.diff(L, x) for x in q])
    phi = sp.Matrix(s.constraints)
    Am = phi.jacobian(u)
    K = W.row_join(-Am.T).col_join(Am.row_join(sp.zeros(1, 1)))
    rhs = Fv.col_join(-phi.jacobian(q) * sp.Matrix(u))
    Kf, rf = sp.lambdify(q + u, K), sp.lambdify(q + u, rhs)

    def f(t, y):
        sol = np.linalg.solve(np.array(Kf(*y), dtype=float), np.array(rf(*y), dtype=float).ravel())
        return np.concatenate([y[3:], sol[:3]])

    y0 = np.array([0.1, 0.3, -0.2, 0.8, -0.6, 0.3 * 0.8])  # z_dot = y x_dot
    sol = solve_ivp(f, (0, 50), y0, method="DOP853", rtol=1e-13, atol=1e-13, dense_output=False)
    ints = [sp.lambdify(q + u, F.natural) for F in res.integrals]
    for g in ints:
        assert abs(g(*sol.y[:, -1]) - g(*y0)) <= 1e-9


def test_snakeboard_momentum_equation():
    s = System.load("snakeboard")
    nh = s.nonholonomic()
    x, y = s.chart.coordinates[:2]
    gens = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [-y, x, 1, 0, 0]]
    eqs = momentum_equations(nh.field(), gens)
    assert len(eqs) == 1 and not eqs[0].conserved  # generators not all in D: a genuine momentum equation
    J, rate = nh.to_natural(eqs[0].momentum), nh.to_natural(eqs[0].rate)
    dep = _dependent(s, nh)
    for seed in range(3):
        pt = point_on_constraints(s.chart.coordinates, s.chart.velocities, s.constraints, s.chart.parameters,
                                  dep, seed)
        assert abs(_rate_along_oracle(s, J, pt) - float(rate.xreplace(pt))) < 1e-9


def test_quadratic_search_returns_only_integrals():
    s = System.load("knife_edge")
    nh = s.nonholonomic()
    res = first_integrals(nh.field(), quadratic=True)
    dep = _dependent(s, nh)
    assert [F.kind for F in res.integrals][:2] == ["energy", "linear"]
    for seed in range(2):
        pt = point_on_constraints(s.chart.coordinates, s.chart.velocities, s.constraints, s.chart.parameters,
                                  dep, seed)
        for F in res.integrals:
            assert abs(_rate_along_oracle(s, F.natural, pt)) < 1e-9, F


def test_rolling_disk_momentum_equations():
    """Rigid motions of the plane and rotations about the disk's axis (Bloch et al. 1996): two
    sections of g^q (the rotation about the vertical through the contact point and the rolling)."""
    s = System.load("rolling_disk")
    nh = s.nonholonomic()
    x, y = s.chart.coordinates[:2]
    gens = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [-y, x, 1, 0, 0], [0, 0, 0, 0, 1]]
    eqs = momentum_equations(nh.field(), gens)
    assert len(eqs) == 2
    dep = _dependent(s, nh)
    for seed in range(2):
        pt = point_on_constraints(s.chart.coordinates, s.chart.velocities, s.constraints, s.chart.parameters,
                                  dep, seed)
        for e in eqs:
            J, rate = nh.to_natural(e.momentum), nh.to_natural(e.rate)
            assert abs(_rate_along_oracle(s, J, pt) - float(rate.xreplace(pt))) < 1e-9

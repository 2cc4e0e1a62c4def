"""Euler–Lagrange field in frames (THEORY §3, Prop. 1 of seed 004).

Oracle: the coordinate Euler–Lagrange equations W q̈ = ∂L/∂q − (∂²L/∂u∂q) u,
built and solved in tests/oracles.py with plain sympy/numpy; Euler's equations
of the rigid body (textbook form).
"""

import random

import numpy as np
import pytest
import sympy as sp

from anholo import Chart, Frame, IrregularLagrangianError, Lagrangian, TangentBundle
from oracles import coordinate_accelerations, quasi_point, random_points, values


def random_frame(n, seed):
    """(I + U(q)) C with U strictly upper triangular (polynomial/trig), C constant invertible."""
    rng = random.Random(seed)
    q = sp.symbols(f"q1:{n + 1}", real=True)
    chart = Chart(q)
    U = sp.zeros(n, n)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = rng.randrange(n), rng.randrange(n)
            U[i, j] = rng.choice([q[a], q[a] * q[b], sp.sin(q[a]), sp.cos(q[a]) * q[b], q[a] ** 2 - q[b], 0])
    while True:
        C = sp.Matrix(n, n, lambda i, j: rng.randint(-2, 2))
        if C.det() != 0:
            break
    return Frame(chart, (sp.eye(n) + U) * C)


def random_lagrangian(q, u, seed, cross_terms=True):
    """A non-mechanical, regular-near-the-test-points Lagrangian in natural velocities."""
    rng = random.Random(seed)
    n = len(q)
    L = sum((2 + q[A] ** 2) * u[A] ** 2 for A in range(n)) / 2
    for A in range(n if cross_terms else 0):
        for B in range(A + 1, n):
            L += sp.Rational(rng.randint(-2, 2), 5) * rng.choice([sp.sin(q[A]), q[B], 1]) * u[A] * u[B]
    L += sum(rng.choice([q[(A + 1) % n], sp.cos(q[A]), q[A] * q[(A + 2) % n]]) * u[A] for A in range(n))  # gyroscopic
    L += u[0] ** 4 / 12 + sp.Rational(1, 7) * u[-1] ** 3 * q[0]  # not quadratic in the velocities
    L -= q[0] ** 2 * q[-1] + sp.cos(q[1])  # potential
    return L


def assert_matches_coordinate_el(F, L, Lnat, seed, count=2):
    """Natural accelerations of the frame-wise field equal the coordinate EL ones at random
    (q, u); the library's field is evaluated in the Hamel chart at v = (X^T)^{-1} u."""
    q, u = F.chart.coordinates, F.chart.velocities
    acc = L.euler_lagrange_field().natural_accelerations(natural=False)
    for pt in random_points(q + u + tuple(sorted(L.expr.free_symbols - set(q) - set(L.bundle.quasi_velocities),
                                                     key=str)), count, seed=100 + seed, low=-0.6, high=0.6):
        expected = coordinate_accelerations(Lnat, q, u, pt)
        got = values([acc[qa] for qa in q], quasi_point(F.vectors, q, u, pt, L.bundle.quasi_velocities))
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-9), (got, expected)


@pytest.mark.parametrize("n,seed,cross", [(3, 1, True), (3, 2, True), (3, 3, True), (4, 4, False), (4, 5, False)])
def test_frame_wise_field_equals_coordinate_euler_lagrange(n, seed, cross):
    F = random_frame(n, seed)
    q, u = F.chart.coordinates, F.chart.velocities
    Lnat = random_lagrangian(q, u, seed, cross_terms=cross)
    assert_matches_coordinate_el(F, Lagrangian(F, Lnat), Lnat, seed)


@pytest.mark.slow
def test_frame_wise_field_dense_four_dimensional_case():
    F = random_frame(4, 4)
    q, u = F.chart.coordinates, F.chart.velocities
    Lnat = random_lagrangian(q, u, 4)
    assert_matches_coordinate_el(F, Lagrangian(F, Lnat), Lnat, 4, count=1)


@pytest.mark.parametrize("seed", [7, 8])
def test_lagrangian_given_in_quasi_velocities(seed):
    """L written in v: the oracle rewrites it in u with an inverse computed here."""
    F = random_frame(3, seed)
    q, u = F.chart.coordinates, F.chart.velocities
    TQ = TangentBundle(F)
    v = TQ.quasi_velocities
    Lq = (3 * v[0] ** 2 + 2 * v[1] ** 2 + v[2] ** 2) / 2 + q[1] * v[0] * v[2] / 4 + sp.sin(q[0]) * v[1] - q[2] ** 2
    theta = F.vectors.T.inv()  # independent inverse: u = X^T v  =>  v = (X^T)^{-1} u
    v_of_u = dict(zip(v, theta * sp.Matrix(u)))
    Lnat = Lq.xreplace(v_of_u)
    assert_matches_coordinate_el(F, Lagrangian(TQ, Lq), Lnat, seed)


def test_polar_frame_particle_in_central_field():
    r, th = sp.symbols("r theta", positive=True)
    m, k = sp.symbols("m k", positive=True)
    chart = Chart([r, th])
    rd, thd = chart.velocities
    F = Frame(chart, [[1, 0], [0, 1 / r]])
    Lnat = m * (rd**2 + r**2 * thd**2) / 2 + k / r
    acc = Lagrangian(F, Lnat).euler_lagrange_field().natural_accelerations()
    # textbook: r'' = r θ'^2 − k/(m r^2),  θ'' = −2 r' θ'/r
    assert sp.simplify(acc[r] - (r * thd**2 - k / (m * r**2))) == 0
    assert sp.simplify(acc[th] + 2 * rd * thd / r) == 0


@pytest.fixture(scope="module")
def rigid_body():
    phi, th, psi = sp.symbols("phi theta psi", real=True)
    I1, I2, I3 = sp.symbols("I1 I2 I3", positive=True)
    chart = Chart([phi, th, psi])
    pd, td, sd = chart.velocities
    body = [[sp.sin(th) * sp.sin(psi), sp.cos(psi), 0], [sp.sin(th) * sp.cos(psi), -sp.sin(psi), 0], [sp.cos(th), 0, 1]]
    F = Frame.from_coframe(chart, body)
    Omega = sp.Matrix(body) * sp.Matrix([pd, td, sd])
    Lnat = (I1 * Omega[0] ** 2 + I2 * Omega[1] ** 2 + I3 * Omega[2] ** 2) / 2
    return F, Lnat, (I1, I2, I3)


def test_rigid_body_hamel_equations_are_eulers_equations(rigid_body):
    F, Lnat, (I1, I2, I3) = rigid_body
    TQ = TangentBundle(F)
    v1, v2, v3 = TQ.quasi_velocities
    L = Lagrangian(TQ, (I1 * v1**2 + I2 * v2**2 + I3 * v3**2) / 2)
    w1, w2, w3 = TQ.quasi_velocity_rates
    euler = [I1 * w1 - (I2 - I3) * v2 * v3, I2 * w2 - (I3 - I1) * v3 * v1, I3 * w3 - (I1 - I2) * v1 * v2]
    for eq, expected in zip(L.hamel_equations(), euler):
        assert sp.expand(eq.lhs - eq.rhs - expected) == 0
    # the same L given in Euler-angle rates gives the same Hamel equations
    L2 = Lagrangian(TQ, Lnat)
    for eq, expected in zip(L2.hamel_equations(), euler):
        assert sp.simplify(eq.lhs - eq.rhs - expected) == 0


def test_rigid_body_natural_accelerations_match_coordinates(rigid_body):
    F, Lnat, params = rigid_body
    q, u = F.chart.coordinates, F.chart.velocities
    acc = Lagrangian(F, Lnat).euler_lagrange_field().natural_accelerations()  # in (q, q_dot)
    for pt in random_points(q + u + params, 3, seed=11):
        assert np.allclose(values([acc[a] for a in q], pt), coordinate_accelerations(Lnat, q, u, pt), rtol=1e-9)


def test_energy_is_conserved_by_the_field():
    F = random_frame(3, 21)
    q, u = F.chart.coordinates, F.chart.velocities
    L = Lagrangian(F, random_lagrangian(q, u, 21, cross_terms=False))
    G = L.euler_lagrange_field()
    dE = G(L.energy)
    pts = random_points(q + L.bundle.quasi_velocities, 3, seed=5, low=-0.5, high=0.5)
    assert np.allclose(values([dE], pts[0]), 0, atol=1e-9)
    assert all(abs(values([dE], p)[0]) < 1e-9 for p in pts)


def test_momenta_hessian_energy_definitions():
    x, y = sp.symbols("x y", real=True)
    F = Frame(Chart([x, y]), [[1, 0], [y, 1]])
    TQ = TangentBundle(F)
    v1, v2 = TQ.quasi_velocities
    L = Lagrangian(TQ, v1**2 * v2 + x * v2 + v2**2 / 2)
    assert L.momenta == (2 * v1 * v2, v1**2 + x + v2)
    assert L.hessian == sp.Matrix([[2 * v2, 2 * v1], [2 * v1, 1]])
    assert sp.expand(L.energy - (2 * v1**2 * v2 + v2**2 / 2)) == 0


def test_irregular_lagrangian_raises_clear_error():
    x, y = sp.symbols("x y", real=True)
    TQ = TangentBundle(Frame.coordinate(Chart([x, y])))
    v1, v2 = TQ.quasi_velocities
    L = Lagrangian(TQ, v1**2 / 2 + x * v2)
    assert not L.is_regular()
    with pytest.raises(IrregularLagrangianError, match="not regular"):
        L.euler_lagrange_field()

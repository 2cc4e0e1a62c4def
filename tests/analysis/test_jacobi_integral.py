"""The Jacobi integral E − Ω J_z of bodies on a turntable rotating at the rate Ω, found by the report's
first-integral search.

Oracles, independent of anholo: the Lagrangian and the affine constraints written here with sympy, the
coordinate multiplier method ``W q̈ + (∂p/∂q) q̇ − ∂L/∂q = Aᵀ λ``, ``A q̈ = −(∂φ/∂q) q̇`` (φ = A q̇ + c(q))
integrated with scipy's DOP853 at rtol = atol = 1e-12, and the closed form of the moving energy
(Fassò & Sansonetto 2016): for constraints ``q̇ ∈ D + Z`` with the affine part ``Z = Ω(−y ∂_x + x ∂_y)``
a symmetry of L, ``E − p·Z = E − Ω m (x ẏ − y ẋ)`` is conserved.  For the vertical disk on a turntable
it also follows by hand: on C it is ``(I + m R²) φ̇²/2 + J θ̇²/2 − m Ω² (x² + y²)/2`` and
``(I + m R²) φ̈ = m R Ω² (x cos θ + y sin θ)``.
"""

import itertools

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.analysis.first_integrals import first_integrals, search_jacobi_integrals
from anholo.analysis.flow_summaries import FirstIntegralsSummary
from anholo.analysis.invariant_measure import product_function_ansatz
from anholo.system import System


def _simulate(L, q, u, phi, params, y0, T):
    n, k = len(q), len(phi)
    Lp = L.xreplace(params)
    phi = sp.Matrix(phi).xreplace(params)
    W = sp.Matrix(n, n, lambda A, B: sp.diff(Lp, u[A], u[B]))
    p = sp.Matrix([sp.diff(Lp, x) for x in u])
    rest = p.jacobian(q) * sp.Matrix(u) - sp.Matrix([sp.diff(Lp, x) for x in q])
    A = phi.jacobian(u)
    K = W.row_join(-A.T).col_join(A.row_join(sp.zeros(k, k)))
    rhs = (-rest).col_join(-phi.jacobian(q) * sp.Matrix(u))
    Kf, rf = sp.lambdify(q + u, K), sp.lambdify(q + u, rhs)

    def f(t, y):
        sol = np.linalg.solve(np.array(Kf(*y), dtype=float), np.array(rf(*y), dtype=float).ravel())
        return np.concatenate([y[n:], sol[:n]])

    sol = solve_ivp(f, (0, T), y0, method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)
    assert sol.success
    return sol


def _state(phi, q, u, params, q0, free0, free):
    """A state on the constraints with the given coordinates and free velocities."""
    sub = dict(zip(q, q0)) | dict(zip(free, free0))
    dep = [x for x in u if x not in free]
    sol = sp.solve(list(sp.Matrix(phi).xreplace(params).xreplace(sub)), dep, dict=True)[0]
    return np.array([float(x) for x in q0] + [float(sub.get(x, sol.get(x, 0))) for x in u])


def _values(exprs, q, u, params, states):
    fs = [sp.lambdify(q + u, sp.sympify(e).xreplace(params)) for e in exprs]
    return np.array([[float(g(*y)) for g in fs] for y in states])


def _rank(V, tol=1e-9):
    s = np.linalg.svd(V, compute_uv=False)
    return int(np.sum(s > tol * s[0]))


def _parse(expr, names):
    return sp.sympify(str(expr), locals=names)


# --- the vertical disk on a turntable --------------------------------------------------------------
m, R, I, J, Om = sp.symbols("m R I J Omega")
X, Y, TH, PH = sp.symbols("x y theta phi")
Q = [X, Y, TH, PH]
U = list(sp.symbols("x_dot y_dot theta_dot phi_dot"))
L_DISK = m * (U[0] ** 2 + U[1] ** 2) / 2 + J * U[2] ** 2 / 2 + I * U[3] ** 2 / 2
PHI_DISK = [U[0] - R * sp.cos(TH) * U[3] + Om * Y, U[1] - R * sp.sin(TH) * U[3] - Om * X]
P_DISK = {m: sp.Rational(13, 10), R: sp.Rational(7, 10), I: sp.Rational(2, 5), J: sp.Rational(3, 10),
          Om: sp.Rational(6, 5)}
NAMES = {str(s): s for s in Q + U + [m, R, I, J, Om]}
E_DISK = sum(x * sp.diff(L_DISK, x) for x in U) - L_DISK
JACOBI_DISK = E_DISK - Om * m * (X * U[1] - Y * U[0])


def _disk_states(count, seed):
    rng = np.random.default_rng(seed)
    return [_state(PHI_DISK, Q, U, P_DISK, rng.uniform(-1.5, 1.5, 4), rng.uniform(-1.5, 1.5, 2), [U[2], U[3]])
            for _ in range(count)]


@pytest.fixture(scope="module")
def disk_report():
    nh = System.load("disk_on_turntable").nonholonomic()
    return FirstIntegralsSummary.of(nh).result  # the report's search, with its CPU budget


def test_disk_on_turntable_integrals_are_conserved_along_the_multiplier_equations(disk_report):
    found = [_parse(i.natural, NAMES) for i in disk_report.integrals]
    assert not disk_report.energy_conserved and len(found) >= 2
    y0 = _state(PHI_DISK, Q, U, P_DISK, [0.8, -0.3, 0.4, 0.1], [0.9, -1.1], [U[2], U[3]])
    sol = _simulate(L_DISK, Q, U, PHI_DISK, P_DISK, y0, T=6.0)
    states = [sol.sol(t) for t in np.linspace(0, 6.0, 7)]
    V = _values(found + [JACOBI_DISK, E_DISK], Q, U, P_DISK, states)
    drift = np.abs(V - V[0]).max(axis=0) / np.maximum(1, np.abs(V[0]))
    assert drift[:-1].max() <= 1e-9                      # the integrals found and the Jacobi integral
    assert drift[-1] > 1e-3                              # the energy is not conserved: the test can fail


def test_disk_on_turntable_jacobi_integral_is_found(disk_report):
    """E − Ω J_z is in the span of the integrals found and the products of the linear ones (the search
    leaves out the products: here ``θ̇²``), up to a constant factor and additive combinations."""
    found = [_parse(i.natural, NAMES) for i in disk_report.integrals]
    linear = [F for F, i in zip(found, disk_report.integrals) if i.kind == "linear"]
    products = [F * G for F, G in itertools.combinations_with_replacement(linear, 2)]
    pts = _disk_states(16, 3)
    Vf = _values(found + products + [sp.S.One], Q, U, P_DISK, pts)
    r = _rank(Vf)
    assert _rank(np.hstack([Vf, _values([JACOBI_DISK], Q, U, P_DISK, pts)])) == r
    # the hand-reduced form on C is the same function there
    reduced = (I + m * R ** 2) * U[3] ** 2 / 2 + J * U[2] ** 2 / 2 - m * Om ** 2 * (X ** 2 + Y ** 2) / 2
    assert np.allclose(_values([JACOBI_DISK], Q, U, P_DISK, pts), _values([reduced], Q, U, P_DISK, pts), atol=1e-12)
    # a wrong rate of the table, and the energy alone, are not in the span
    wrong = E_DISK - sp.Rational(11, 10) * Om * m * (X * U[1] - Y * U[0])
    assert _rank(np.hstack([Vf, _values([wrong], Q, U, P_DISK, pts)])) == r + 1
    assert _rank(np.hstack([Vf, _values([E_DISK], Q, U, P_DISK, pts)])) == r + 1
    assert any("coordinates x, y together" in s for s in disk_report.searched)


def test_jacobi_ansatz_alone_gives_the_heading_rate_and_the_jacobi_integral():
    nh = System.load("disk_on_turntable").nonholonomic()
    field = nh.field()
    th = nh.frame.chart.coordinates[2]
    X_, Y_ = nh.frame.chart.coordinates[:2]
    basis = search_jacobi_integrals(field, product_function_ansatz([th], {th}, 0), [X_, Y_])
    found = [_parse(nh.to_natural(F), NAMES) for F in basis]
    pts = _disk_states(16, 5)
    V = _values(found + [sp.S.One], Q, U, P_DISK, pts)
    closed = _values([U[2], U[2] ** 2, JACOBI_DISK, sp.S.One], Q, U, P_DISK, pts)
    assert _rank(V) == _rank(closed) == _rank(np.hstack([V, closed])) == 4


# --- the sphere on a turntable ----------------------------------------------------------------------
def test_sphere_on_turntable_jacobi_integral_is_a_function_of_the_integrals_found():
    ms, a, k, Oms = sp.symbols("m a k Omega")
    x, y, ph, th, ps = sp.symbols("x y phi theta psi")
    q = [x, y, ph, th, ps]
    u = list(sp.symbols("x_dot y_dot phi_dot theta_dot psi_dot"))
    xd, yd, phd, thd, psd = u
    wx = thd * sp.cos(ph) + psd * sp.sin(th) * sp.sin(ph)
    wy = thd * sp.sin(ph) - psd * sp.sin(th) * sp.cos(ph)
    L = ms * (xd ** 2 + yd ** 2) / 2 + ms * k ** 2 * (phd ** 2 + thd ** 2 + psd ** 2 + 2 * phd * psd * sp.cos(th)) / 2
    phi = [xd - a * wy + Oms * y, yd + a * wx - Oms * x]
    params = {ms: sp.Rational(6, 5), a: sp.Rational(9, 10), k: sp.Rational(3, 5), Oms: sp.Rational(7, 10)}
    E = sum(v * sp.diff(L, v) for v in u) - L
    jacobi = E - Oms * ms * (x * yd - y * xd)
    names = {str(s): s for s in q + u + [ms, a, k, Oms]}
    res = FirstIntegralsSummary.of(System.load("sphere_on_turntable").nonholonomic()).result
    found = [_parse(i.natural, names) for i in res.integrals]
    linear = [F for F, i in zip(found, res.integrals) if i.kind == "linear"]
    span = found + [F * G for F, G in itertools.combinations_with_replacement(linear, 2)] + [sp.S.One]
    rng = np.random.default_rng(7)
    pts = [_state(phi, q, u, params, [*rng.uniform(-1, 1, 3), rng.uniform(0.5, 2.5), rng.uniform(-1, 1)],
                  rng.uniform(-1, 1, 3), [phd, thd, psd]) for _ in range(30)]
    Vs = _values(span, q, u, params, pts)
    r = _rank(Vs)
    assert _rank(np.hstack([Vs, _values([jacobi], q, u, params, pts)])) == r
    assert _rank(np.hstack([Vs, _values([E], q, u, params, pts)])) == r + 1
    # and the integrals found are conserved along the multiplier equations
    y0 = pts[0]
    sol = _simulate(L, q, u, phi, params, y0, T=4.0)
    V = _values(found + [jacobi], q, u, params, [y0, sol.y[:, -1]])
    assert (np.abs(V[1] - V[0]) / np.maximum(1, np.abs(V[0]))).max() <= 1e-9

"""Consistency along one motion for one linear constraint a·u = 0 (THEORY §6, seed 003 as corrected in §10).

Oracles: the exterior derivative and the compatibility condition written out by hand
here; nonholonomic motions integrated with scipy from the coordinate multiplier method
(``E(L) = λ a`` with the differentiated constraint) and vakonomic motions from the
coordinate multiplication rule (Euler–Lagrange equations of ``L + μ a·u`` in (q, μ)),
both built here with sympy and lambdified — no anholo dynamics.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo import Chart
from anholo.analysis.trajectory_consistency import SingleConstraintConsistency
from anholo.errors import ConstraintError

t = sp.Symbol("t", real=True)


def systems(L, q, u, a):
    """Lambdified right-hand sides of the nonholonomic and the vakonomic equations (coordinates)."""
    n = len(q)
    W = sp.Matrix(n, n, lambda A, B: L.diff(u[A], u[B]))
    F = sp.Matrix([L.diff(q[A]) - sum(L.diff(u[A], q[B]) * u[B] for B in range(n)) for A in range(n)])
    a = sp.Matrix(a)
    da_u = sp.Matrix([sum(a[A].diff(q[B]) * u[B] for B in range(n)) for A in range(n)])
    M = sp.Matrix(n, n, lambda A, B: a[A].diff(q[B]) - a[B].diff(q[A]))
    mu = sp.Symbol("mu")
    # nonholonomic: W q̈ − λ a = F, a·q̈ = −(da/dt)·u
    K_nh = W.row_join(-a).col_join(a.T.row_join(sp.zeros(1, 1)))
    r_nh = F.col_join(sp.Matrix([-(da_u.T * sp.Matrix(u))[0]]))
    # vakonomic: E(L) = −μ̇ a − μ M u, i.e. W q̈ + μ̇ a = F − μ M u, a·q̈ = −(da/dt)·u
    K_vk = W.row_join(a).col_join(a.T.row_join(sp.zeros(1, 1)))
    r_vk = (F - mu * M * sp.Matrix(u)).col_join(sp.Matrix([-(da_u.T * sp.Matrix(u))[0]]))
    args = list(q) + list(u)
    fK, fr = sp.lambdify(args, K_nh, "numpy"), sp.lambdify(args, r_nh, "numpy")
    gK, gr = sp.lambdify(args, K_vk, "numpy"), sp.lambdify(args + [mu], r_vk, "numpy")

    def nh(_, s):
        sol = np.linalg.solve(np.array(fK(*s), dtype=float), np.array(fr(*s), dtype=float).ravel())
        return np.concatenate([s[n:], sol[:n]])

    def nh_lambda(s):
        return np.linalg.solve(np.array(fK(*s), dtype=float), np.array(fr(*s), dtype=float).ravel())[n]

    def vk(_, s):
        sol = np.linalg.solve(np.array(gK(*s[:2 * n]), dtype=float),
                              np.array(gr(*s), dtype=float).ravel())
        return np.concatenate([s[n:2 * n], sol[:n], [sol[n]]])

    return nh, nh_lambda, vk


def integrate_nonholonomic(L, q, u, a, s0, T=1.5):
    nh, nh_lambda, _ = systems(L, q, u, a)
    ts = np.linspace(0, T, 301)
    sol = solve_ivp(nh, (0, T), s0, t_eval=ts, rtol=1e-11, atol=1e-12)
    n = len(q)
    lam = np.array([nh_lambda(s) for s in sol.y.T])
    return ts, sol.y[:n].T, sol.y[n:].T, lam


def integrate_vakonomic(L, q, u, a, s0, mu0, T=1.5):
    _, _, vk = systems(L, q, u, a)
    ts = np.linspace(0, T, 301)
    sol = solve_ivp(vk, (0, T), list(s0) + [mu0], t_eval=ts, rtol=1e-11, atol=1e-12)
    n = len(q)
    return sol.y[:n].T, sol.y[2 * n]


# --- pointwise: a ∧ da and the compatible velocities ----------------------------------------------

def test_curl_by_hand_and_frobenius():
    c = Chart("x y z")
    x, y, z = c.coordinates
    heis = SingleConstraintConsistency(c, "z_dot - y*x_dot")          # a = (−y, 0, 1)
    M = sp.Matrix([[0, -1, 0], [1, 0, 0], [0, 0, 0]])        # M_xy = ∂_y a_x − ∂_x a_y = −1
    assert heis.curl == M
    # a ∧ da = (−y dx + dz) ∧ (dx ∧ dy) = dx∧dy∧dz
    assert heis.a_wedge_da() == {(0, 1, 2): 1}
    knife = SingleConstraintConsistency(Chart("x y theta"), "sin(theta)*x_dot - cos(theta)*y_dot")
    assert not knife.a_wedge_da_vanishes()
    radial = SingleConstraintConsistency(c, "x*y_dot - y*x_dot")
    assert radial.a_wedge_da_vanishes()                        # = (x²+y²) dθ: conformally holonomic


@pytest.mark.parametrize("coords, constraint, dim", [
    ("x y z", "z_dot - y*x_dot", 0),                            # Heisenberg / nonholonomic particle
    ("x y theta", "sin(theta)*x_dot - cos(theta)*y_dot", 0),    # knife edge
    ("x y z", "x*y_dot - y*x_dot", 2),                          # conformally holonomic: all of ker a
    ("x y z w", "w_dot - y*x_dot", 1),                          # Darboux type in R^4
])
def test_compatible_subspace(coords, constraint, dim):
    con = SingleConstraintConsistency(Chart(coords), constraint)
    comp = con.compatible_velocities()
    assert comp.dimension == dim
    N = len(coords.split())
    assert (dim == N - 1) is con.a_wedge_da_vanishes()          # a ∧ da = 0 iff every velocity compatible
    a, M = sp.Matrix(con.covector), con.curl
    for b in comp.basis:                                        # each basis vector: a·u = 0 and Mu ∥ a
        u = sp.Matrix(b)
        assert sp.simplify((a.T * u)[0]) == 0
        assert sp.simplify((M * u).cross(a) if N == 3 else (M * u) * a.T - a * (M * u).T) == sp.zeros(*(
            (3, 1) if N == 3 else (N, N)))


def test_darboux_compatible_direction_is_dz():
    c = Chart("x y z w")
    con = SingleConstraintConsistency(c, "w_dot - y*x_dot")
    (b,) = con.compatible_velocities().basis
    assert b[0] == b[1] == b[3] == 0 and b[2] != 0
    x, y, z, w = c.coordinates
    # a velocity with u_x ≠ 0 in ker a: M u = (−u_y, u_x, 0, 0) is not parallel to a = (−y, 0, 0, 1)
    assert any(sp.simplify(r) != 0 for r in con.compatibility_residuals([1, 0, 0, y]))


# --- along motions -------------------------------------------------------------------------------

def test_heisenberg_line_with_zero_multiplier_is_vakonomic():
    c = Chart("x y z")
    xd, yd, zd = c.velocities
    L = (xd**2 + yd**2 + zd**2) / 2
    con = SingleConstraintConsistency(c, "z_dot - y*x_dot")
    verdict = con.is_vakonomic(L, [sp.Rational(1, 2), 2 + t, 3], t)   # x = const: λ = 0
    assert verdict.vakonomic and not verdict.compatible and verdict.multiplier == 0


def test_knife_edge_circle_is_not_vakonomic():
    c = Chart("x y theta")
    xd, yd, thd = c.velocities
    L = (xd**2 + yd**2 + thd**2) / 2
    con = SingleConstraintConsistency(c, "sin(theta)*x_dot - cos(theta)*y_dot")
    path = [sp.sin(t), 1 - sp.cos(t), t]                 # rolling on the unit circle
    lam, residual = con.nonholonomic_multiplier(L, path, t)
    assert all(sp.simplify(r) == 0 for r in residual) and sp.simplify(lam) != 0
    assert not con.is_vakonomic(L, path, t)
    with pytest.raises(ConstraintError, match="violates"):
        con.is_vakonomic(L, [t, 0, sp.pi / 4], t)


def test_heisenberg_generic_motion_is_not_vakonomic_and_vakonomic_motions_separate():
    c = Chart("x y z")
    q, u = c.coordinates, c.velocities
    L = sum(v**2 for v in u) / 2
    a = [-q[1], 0, 1]
    s0 = [0.0, 0.3, 0.0, 1.0, 0.5, 0.3]                    # z_dot = y x_dot
    ts, Q, U, lam = integrate_nonholonomic(L, q, u, a, s0)
    con = SingleConstraintConsistency(c, "z_dot - y*x_dot")
    assert not con.is_vakonomic_sampled(ts, Q, U, lam)
    for mu0 in (-0.5, 0.0, 0.5):                             # no multiplier curve reproduces it
        Qv, _ = integrate_vakonomic(L, q, u, a, s0, mu0)
        assert np.max(np.abs(Qv - Q)) > 1e-3


def test_conformally_holonomic_motion_is_vakonomic_with_free_initial_multiplier():
    c = Chart("x y z")
    q, u = c.coordinates, c.velocities
    g = sp.Rational(1, 2)
    L = sum(v**2 for v in u) / 2 + g * q[0]                  # a force along x, so λ ≠ 0
    a = [-q[1], q[0], 0]
    s0 = [1.0, 0.5, 0.0, 0.4, 0.2, 0.3]                      # radial: x y_dot − y x_dot = 0
    ts, Q, U, lam = integrate_nonholonomic(L, q, u, a, s0)
    assert np.max(np.abs(lam)) > 1e-2
    con = SingleConstraintConsistency(c, "x*y_dot - y*x_dot")
    for mu0 in (0.0, 0.7):
        verdict = con.is_vakonomic_sampled(ts, Q, U, lam, mu0=mu0)
        assert verdict.vakonomic and verdict.compatible
        Qv, MUv = integrate_vakonomic(L, q, u, a, s0, mu0)
        np.testing.assert_allclose(Qv, Q, atol=1e-7)       # the same motion for every μ(0)
        np.testing.assert_allclose(verdict.multiplier, MUv, atol=1e-4)


def test_symbolic_compatible_motion_has_the_multiplier_equation():
    c = Chart("x y z")
    u = c.velocities
    L = sum(v**2 for v in u) / 2
    con = SingleConstraintConsistency(c, "x*y_dot - y*x_dot")
    verdict = con.is_vakonomic(L, [t, t, 0], t)              # radial line with constant speed: λ = 0
    assert verdict.vakonomic and verdict.compatible
    mu = sp.Function("mu")
    # μ̇ = −λ − κ μ with κ = a·Mu/|a|² (a = (−t, t, 0), Mu = 2(−u_y, u_x, 0) = (−2, 2, 0)): κ = 2/t
    assert sp.simplify(verdict.multiplier_equation.rhs - (-2 * mu(t) / t)) == 0

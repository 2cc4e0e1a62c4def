"""Routhians of L, L̂, L̄ and the Routh procedure (anholo.analysis.routh).

Oracles (independent of anholo):
* the unreduced motions integrated with scipy in natural coordinates: the coordinate
  Euler–Lagrange equations of L and of L̂ = L − p_a v^a (L̂ written here from L, the generators
  and the connection form v^a = [(ω Ẽ)^{-1} ω u]_a solved here), and the coordinate
  multiplication rule E_A(L + λ_ν φ^ν) = 0 for L̄ (tests/oracles.py);
* the Routhians and Routh equations derived by hand for small systems;
* the lifted action on D° from brackets of the generators computed here.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import coordinate_el_system, coordinate_vector_fields, point_on_constraints
from scipy.integrate import solve_ivp

from anholo import Chart, Frame, Lagrangian
from anholo.analysis.chaplygin import ChaplyginSystem
from anholo.analysis.routh import AnnihilatorAction, routh_reduction, routhians
from anholo.errors import ReductionError


def coupled_particle():
    """L = ½(ẋ²+ẏ²) + ½(2+x²)ż² + ½ẏż − ½(x²+2y²), ż = y ẋ, translations in z."""
    chart = Chart("x y z")
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    L = (xd**2 + yd**2) / 2 + (2 + x**2) * zd**2 / 2 + yd * zd / 2 - (x**2 + 2 * y**2) / 2
    cons = [zd - y * xd]
    gens = [[0, 0, 1]]
    ch = ChaplyginSystem(Lagrangian(Frame.coordinate(chart), L), cons, gens)
    return ch, chart, L, cons, gens


def carriage():
    """The two-wheeled carriage (Crampin & Mestdag (2010) §7.2) with numbers for the parameters."""
    chart = Chart("x y theta psi1 psi2")
    x, y, th, p1, p2 = chart.coordinates
    xd, yd, thd, p1d, p2d = chart.velocities
    m, m0, a, J, C, R, c = (2, 1, sp.Rational(1, 2), 1, sp.Rational(1, 10), sp.Rational(3, 10), sp.Rational(1, 2))
    L = (m * (xd**2 + yd**2) / 2 + m0 * a * thd * (yd * sp.cos(th) - xd * sp.sin(th)) + J * thd**2 / 2
         + C * (p1d**2 + p2d**2) / 2)
    cons = [xd - R / 2 * sp.cos(th) * (p1d + p2d), yd - R / 2 * sp.sin(th) * (p1d + p2d),
            thd - R / (2 * c) * (p2d - p1d)]
    gens = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [-y, x, 1, 0, 0]]
    ch = ChaplyginSystem(Lagrangian(Frame.coordinate(chart), L), cons, gens)
    return ch, chart, L, cons, gens


def connection_form(chart, cons, gens):
    """v^a(q, u) = [(ω Ẽ)^{-1} ω u]_a, the components along Ẽ_a of u in D ⊕ span Ẽ."""
    u = chart.velocities
    om = sp.Matrix(len(cons), len(u), lambda i, A: sp.diff(cons[i], u[A]))
    E = sp.Matrix(gens).T
    return list((om * E).inv() * om * sp.Matrix(u)), om, E


def natural_momenta(L, chart, gens):
    u = chart.velocities
    return [sum(sp.sympify(g[A]) * sp.diff(L, u[A]) for A in range(len(u))) for g in gens]


def integrate_natural(Lam, chart, x0, T):
    q, u = chart.coordinates, chart.velocities
    W, rhs = coordinate_el_system(Lam, q, u)
    fW, fr = sp.lambdify(list(q) + list(u), W, "numpy"), sp.lambdify(list(q) + list(u), rhs, "numpy")
    n = len(q)

    def f(t, s):
        return np.concatenate([s[n:], np.linalg.solve(np.array(fW(*s), float), np.array(fr(*s), float).ravel())])
    sol = solve_ivp(f, (0, T), x0, rtol=1e-11, atol=1e-12, dense_output=True)
    assert sol.success
    return sol


def integrate_reduced(rr, chart, q0, T):
    """Routh equations + reconstruction; state (q, ṙ)."""
    q = chart.coordinates
    r, rd = rr.shape, rr.shape_velocities
    acc = sp.lambdify(list(q) + list(rd), list(rr.accelerations), "numpy")
    rec = rr.reconstruction()
    qdot = [rd[r.index(s)] if s in r else rec[s] for s in q]
    fq = sp.lambdify(list(q) + list(rd), qdot, "numpy")
    n = len(q)

    def f(t, s):
        return np.concatenate([np.array(fq(*s), float), np.array(acc(*s), float)])
    idx = [chart.index(s) for s in r]
    sol = solve_ivp(f, (0, T), list(q0[:n]) + [q0[n + i] for i in idx], rtol=1e-11, atol=1e-12, dense_output=True)
    assert sol.success
    return sol


@pytest.mark.parametrize("of", ["L", "Lhat"])
def test_routh_reduction_of_L_and_Lhat_reconstructs_the_unreduced_motion(of):
    ch, chart, L, cons, gens = coupled_particle()
    q, u = chart.coordinates, chart.velocities
    va, _, _ = connection_form(chart, cons, gens)
    p = natural_momenta(L, chart, gens)
    Lam = L if of == "L" else sp.expand(L - sum(pa * v for pa, v in zip(p, va)))
    P = natural_momenta(Lam, chart, gens)
    x0 = [0.3, -0.4, 0.1, 0.5, 0.2, -0.3]  # off C: the free motions of L and L̂ leave D
    pt = dict(zip(list(q) + list(u), x0))
    mu = [float(e.xreplace(pt)) for e in P]
    assert abs(mu[0]) > 0.1
    rr = routh_reduction(ch, of, level=mu)
    T = 3.0
    full = integrate_natural(Lam, chart, x0, T)
    red = integrate_reduced(rr, chart, x0, T)
    ts = np.linspace(0, T, 13)
    np.testing.assert_allclose(red.sol(ts)[:3].T, full.sol(ts)[:3].T, atol=1e-7)
    assert np.ptp(full.sol(ts)[1]) > 0.1  # y moves: not a trivial motion
    # the momentum level is conserved by the unreduced motion (Noether)
    fP = sp.lambdify(list(q) + list(u), P[0], "numpy")
    assert abs(fP(*full.sol(T)) - mu[0]) < 1e-8
    # a wrong level gives another motion
    wrong = integrate_reduced(routh_reduction(ch, of, level=[mu[0] + 0.1]), chart, x0, T)
    assert np.abs(wrong.sol(T)[:3] - full.sol(T)[:3]).max() > 1e-3


def test_vakonomic_routh_reduction_reconstructs_the_multiplication_rule():
    ch, chart, L, cons, gens = coupled_particle()
    q, u = chart.coordinates, chart.velocities
    nu = 0.7
    rr = routh_reduction(ch, "Lbar", level=[nu])
    pt0 = point_on_constraints(q, u, cons, [], [u[2]], 3)
    q0 = [float(pt0[s]) for s in q] + [float(pt0[s]) for s in u]
    # λ_a = λ_ν ω^ν(Ẽ_a) = ν_a − p_a|_C: here ω(Ẽ) = 1
    p = natural_momenta(L, chart, gens)[0]
    lam0 = nu - float(p.xreplace(pt0))
    _, vak, _ = coordinate_vector_fields(L, q, u, cons, {})
    T = 2.5
    full = solve_ivp(vak, (0, T), q0 + [lam0], rtol=1e-11, atol=1e-12, dense_output=True)
    assert full.success
    red = integrate_reduced(rr, chart, q0, T)
    ts = np.linspace(0, T, 11)
    np.testing.assert_allclose(red.sol(ts)[:3].T, full.sol(ts)[:3].T, atol=1e-7)
    # the multipliers along the motion: λ = ν − p|_C
    flam = sp.lambdify(list(q) + list(rr.shape_velocities), rr.multipliers[0], "numpy")
    for t in ts:
        s = red.sol(t)
        assert abs(flam(*s) - full.sol(t)[6]) < 1e-7
    # ν = 0 (σ = −p) differs from ν = 0.7 here, the gyroscopic term ν R^a_αβ is felt
    other = integrate_reduced(routh_reduction(ch, "Lbar", level=[0]), chart, q0, T)
    assert np.abs(other.sol(T)[:3] - full.sol(T)[:3]).max() > 1e-3


@pytest.mark.parametrize("of", ["L", "Lhat"])
def test_non_abelian_routh_reduction_at_level_zero(of):
    ch, chart, L, cons, gens = carriage()
    q, u = chart.coordinates, chart.velocities
    va, _, _ = connection_form(chart, cons, gens)
    p = natural_momenta(L, chart, gens)
    Lam = L if of == "L" else sp.expand(L - sum(pa * v for pa, v in zip(p, va)))
    P = natural_momenta(Lam, chart, gens)
    # a state on the level P = 0: shape velocities free, the group velocities solved
    base = {q[0]: 0.2, q[1]: -0.1, q[2]: 0.4, q[3]: 0.0, q[4]: 0.0, u[3]: 1.1, u[4]: -0.6}
    sol = sp.solve([e.xreplace(base) for e in P], [u[0], u[1], u[2]], dict=True)[0]
    x0 = [float(base[s]) for s in q] + [float(base.get(s, sol.get(s, 0))) for s in u]
    rr = routh_reduction(ch, of, level=[0, 0, 0])
    T = 2.0
    full = integrate_natural(Lam, chart, x0, T)
    red = integrate_reduced(rr, chart, x0, T)
    ts = np.linspace(0, T, 9)
    np.testing.assert_allclose(red.sol(ts)[:5].T, full.sol(ts)[:5].T, atol=1e-7)
    with pytest.raises(ReductionError, match="non-abelian"):
        routh_reduction(ch, of, level=[1, 0, 0])


def test_routhians_and_routh_equations_by_hand():
    ch, chart, L, cons, gens = coupled_particle()
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    mu = sp.Symbol("mu")
    # hand: p_z = (2+x²)ż + ẏ/2 = μ; R^μ = L − μ(ż − y ẋ) on the level set
    zsol = (mu - yd / 2) / (2 + x**2)
    R_hand = (L - mu * (zd - y * xd)).xreplace({zd: zsol})
    rr = routh_reduction(ch, "L", level=[mu])
    assert sp.simplify(rr.reduced_routhian - R_hand) == 0
    # [X_x, X_y] = [∂x + y∂z, ∂y] = −∂z, so R^z_xy = −1 and the gyroscopic term is −μ R^z_xy = μ
    B_hand = sp.Matrix([[0, mu], [-mu, 0]])
    assert sp.simplify(sp.Matrix(rr.gyroscopic) - B_hand) == sp.zeros(2, 2)
    # Routh equations solved by hand: d/dt ∂R/∂ṙ − ∂R/∂r = B ṙ
    rd, r = [xd, yd], [x, y]
    g = sp.hessian(R_hand, rd)
    rhs = sp.Matrix([R_hand.diff(r[i]) - sum(R_hand.diff(rd[i], r[j]) * rd[j] for j in range(2))
                     + sum(B_hand[i, j] * rd[j] for j in range(2)) for i in range(2)])
    acc = g.LUsolve(rhs)
    rng = np.random.default_rng(3)
    for _ in range(4):
        pt = dict(zip([x, y, xd, yd, mu], rng.uniform(-1, 1, 5)))
        np.testing.assert_allclose([float(e.xreplace(pt)) for e in rr.accelerations],
                                   [float(e.xreplace(pt)) for e in acc], atol=1e-12)
    # the reconstruction: ż from the level set
    assert sp.simplify(rr.reconstruction()[z] - zsol) == 0
    # Routhians on TQ (Hamel chart v1 = ẋ, v2 = ẏ, v3 = ż − y ẋ)
    v1, v2, v3 = ch.nonholonomic.bundle.quasi_velocities
    Lh = L.xreplace({zd: v3 + y * v1, xd: v1, yd: v2})
    p3 = Lh.diff(v3)
    rs = routhians(ch)
    assert sp.simplify(rs.of_L - (Lh - p3 * v3)) == 0
    Lhat = Lh - p3 * v3
    assert sp.simplify(rs.of_Lhat - (Lhat - Lhat.diff(v3) * v3)) == 0
    assert sp.simplify(Lhat.diff(v3) + Lh.diff(v3, 2) * v3) == 0          # p̂ = −g_ab v^b
    assert sp.simplify(rs.of_Lbar - rs.of_L) == 0 and rs.lbar_free_of_lambda and rs.lhat_on_C_is_Lc
    assert sp.simplify(rs.of_Lhat.xreplace({v3: 0}) - Lh.xreplace({v3: 0})) == 0   # R_L̂|_C = L_c
    d = rr.to_dict()
    assert d["source"] == "L" and len(d["equations"]) == 2 and "R^μ" in str(rr) and "aligned" in rr.as_latex()


def test_lhat_routhian_of_the_class_by_hand():
    """s_a' = A_a(r2) r1', L = ½(I1 r1'² + I2 r2'² + Σ m_a s_a'²): R̂^μ̂ = ½(I1 + Σ m A²) r1'² + ½ I2 r2'²
    + Σ μ̂²/(2 m_a) with gyroscopic term μ̂_a A_a′ (hand)."""
    chart = Chart("r1 r2 s1 s2")
    r1, r2, s1, s2 = chart.coordinates
    r1d, r2d, s1d, s2d = chart.velocities
    I1, I2, m1, m2 = 2, 3, sp.Rational(1, 2), sp.Rational(3, 2)
    A = [sp.cos(r2), r2**2]
    L = (I1 * r1d**2 + I2 * r2d**2 + m1 * s1d**2 + m2 * s2d**2) / 2
    ch = ChaplyginSystem(Lagrangian(Frame.coordinate(chart), L), [s1d - A[0] * r1d, s2d - A[1] * r1d],
                         [[0, 0, 1, 0], [0, 0, 0, 1]])
    mh = sp.symbols("muh1 muh2")
    rr = routh_reduction(ch, "Lhat", level=mh)
    R_hand = ((I1 + m1 * A[0]**2 + m2 * A[1]**2) * r1d**2 / 2 + I2 * r2d**2 / 2
              + mh[0]**2 / (2 * m1) + mh[1]**2 / (2 * m2))
    assert sp.simplify(rr.reduced_routhian - R_hand) == 0
    b = mh[0] * A[0].diff(r2) + mh[1] * A[1].diff(r2)
    assert sp.simplify(rr.gyroscopic[0, 1] - b) == 0
    # group velocities on the level set: v^a = −μ̂_a/m_a, so ṡ_a = A_a ṙ1 − μ̂_a/m_a
    rec = rr.reconstruction()
    assert sp.simplify(rec[s1] - (A[0] * r1d - mh[0] / m1)) == 0
    # at μ̂ = 0 the Routh equations are those of L_c with no gyroscopic term: Prop. 6's field
    rr0 = routh_reduction(ch, "Lhat", level=[0, 0])
    assert rr0.gyroscopic == sp.zeros(2, 2)


def test_annihilator_action_from_brackets_computed_here():
    ch, chart, L, cons, gens = carriage()
    q, u = chart.coordinates, chart.velocities
    act = AnnihilatorAction(ch)
    k, n = 3, 5
    E = [sp.Matrix(g) for g in gens]

    def bracket(X, Y):
        return Y.jacobian(q) * X - X.jacobian(q) * Y
    lam = act.multipliers
    Emat = sp.Matrix.hstack(*E)
    for b in range(k):
        assert tuple(act.generators[b][:n]) == tuple(sp.sympify(e) for e in gens[b])
        for c in range(k):
            coeff = sp.simplify((Emat.T * Emat).inv() * Emat.T * bracket(E[b], E[c]))   # [Ẽ_b, Ẽ_c] = k^d Ẽ_d
            expected = sum(coeff[d] * lam[d] for d in range(k))
            assert sp.simplify(act.generators[b][2 * n + c] - expected) == 0
    # invariance of L̄ = L + λ_a v^a in natural coordinates, with Ẽ^C = Ẽ^A ∂_A + u^B ∂_B Ẽ^A ∂/∂u^A
    va, _, _ = connection_form(chart, cons, gens)
    Lbar = L + sum(l * v for l, v in zip(lam, va))

    def Y(b, f, sign=1):
        g = E[b]
        out = sum(g[A] * f.diff(q[A]) for A in range(n))
        out += sum(sum(u[B] * g[A].diff(q[B]) for B in range(n)) * f.diff(u[A]) for A in range(n))
        out += sign * sum(act.generators[b][2 * n + c] * f.diff(lam[c]) for c in range(k))
        return sp.simplify(out)
    assert all(Y(b, Lbar) == 0 for b in range(k))
    assert any(Y(b, Lbar, sign=-1) != 0 for b in range(k))   # the λ-part matters (non-abelian)
    check = act.check()
    assert check.holds and "tangent to D°" in str(check) and check.to_dict()["holds"] is True
    assert "Y1" in str(act) and "partial" in act.as_latex()


def test_routh_errors():
    ch, *_ = coupled_particle()
    with pytest.raises(ReductionError, match="unknown Lagrangian"):
        routh_reduction(ch, "H")
    with pytest.raises(ReductionError, match="1 components"):
        routh_reduction(ch, "L", level=[1, 2])


def test_routh_needs_momenta_affine_in_the_group_velocities():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 + zd**4 / 4)
    ch = ChaplyginSystem(L, ["z_dot - y*x_dot"], [[0, 0, 1]])
    with pytest.raises(ReductionError, match="not affine"):
        routh_reduction(ch, "L", level=[1])
    # L̄ needs no solving: its level sets are λ = ν − p
    assert routh_reduction(ch, "Lbar", level=[1]).multipliers is not None


@pytest.mark.parametrize("of", ["L", "Lhat"])
def test_routh_reduction_of_the_roller_racer(of):
    """A bundled example (abelian R², shape (θ, φ)) at a nonzero momentum level, parameters substituted."""
    from anholo.system import System

    S = System.load("roller_racer")
    vals = dict(zip(S.chart.parameters, (1.0, 0.7, 0.4, 1.1, 0.8)))
    ch = S.chaplygin()
    chart = S.chart
    q, u = chart.coordinates, chart.velocities
    L = S.lagrangian.natural_expr().xreplace(vals)
    cons = [sp.sympify(c).xreplace(vals) for c in S.constraints]
    gens = [[sp.sympify(c) for c in g.components] for g in ch.action.generators]
    va, _, _ = connection_form(chart, cons, gens)
    p = natural_momenta(L, chart, gens)
    Lam = L if of == "L" else L - sum(pa * v for pa, v in zip(p, va))
    x0 = [0.1, -0.2, 0.3, 0.9, 0.4, -0.3, 0.5, -0.2]
    pt = dict(zip(list(q) + list(u), x0))
    mu = [float(e.xreplace(pt)) for e in natural_momenta(Lam, chart, gens)]
    rr = routh_reduction(ch, of, level=mu)
    sub = vals

    class Numeric:   # the reduction with the parameter values put in
        shape, shape_velocities = rr.shape, rr.shape_velocities
        accelerations = tuple(e.xreplace(sub) for e in rr.accelerations)

        @staticmethod
        def reconstruction():
            return {k: v.xreplace(sub) for k, v in rr.reconstruction().items()}
    T = 1.5
    full = integrate_natural(Lam, chart, x0, T)
    red = integrate_reduced(Numeric, chart, x0, T)
    ts = np.linspace(0, T, 7)
    np.testing.assert_allclose(red.sol(ts)[:4].T, full.sol(ts)[:4].T, atol=1e-7)

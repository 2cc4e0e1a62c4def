"""Regression tests for the four wrong or misleading answers of issue #27.

Oracles (all written here with sympy/numpy/scipy, no anholo dynamics):

* the two-wheeled carriage (Crampin & Mestdag (2010), §7.2): the coordinate multiplier
  method for the nonholonomic motion (``W q̈ − ∂L/∂q + (∂²L/∂q̇∂q) q̇ = Aᵀ Λ``, ``A q̈ + Ȧ q̇ = 0``)
  and the coordinate multiplication rule ``E(L + σ_a θ^a(q̇)) = 0`` for the vakonomic motion with
  multipliers σ(t); the Lagrange–d'Alembert equations projected on D for the invariant density;
* the nonholonomic particle ``ż = y ẋ``: the vakonomic equations
  ``E(L) = −μ̇ ω − μ M q̇`` and the nonholonomic ones ``E(L) = λ ω`` written out by hand;
* two particles with parallel velocities (Talamucci (2025), Example 2 (i)): Chetaev's equations
  ``M q̈ = −∇V + Σ_a λ_a ∂φ_a/∂q̇`` with all three components of ``u₁ × u₂ = 0`` (rank 2 on C),
  solved by least squares, and a scipy integration of them.
"""

from __future__ import annotations

import functools
import pathlib
import random

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo import Chart, Frame, Lagrangian
from anholo.analysis.consistency import Section, strong_consistency
from anholo.analysis.diagnostics import proposition1
from anholo.analysis.trajectory_consistency import SingleConstraintConsistency
from anholo.constraints.kinematic import KinematicConstraints
from anholo.dynamics.chetaev import ChetaevSystem
from anholo.errors import ConstraintError, DependentConstraintsError, UnsolvableConstraintsError
from anholo.system import System

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


# =====================================================================================================
# 1. The carriage's sections −p + c at a = ±a* (docs/chaplygin.rst)
# =====================================================================================================
m, m0, a, J, C, R, c = sp.symbols("m m0 a J C R c", positive=True)
x, y, th, p1, p2 = sp.symbols("x y theta psi1 psi2", real=True)
Q5 = [x, y, th, p1, p2]
U5 = sp.symbols("x_dot y_dot theta_dot psi1_dot psi2_dot", real=True)
A5 = sp.symbols("x_ddot y_ddot theta_ddot psi1_ddot psi2_ddot", real=True)
L_CARRIAGE = (m * (U5[0] ** 2 + U5[1] ** 2) / 2 + m0 * a * U5[2] * (U5[1] * sp.cos(th) - U5[0] * sp.sin(th))
              + J * U5[2] ** 2 / 2 + C * (U5[3] ** 2 + U5[4] ** 2) / 2)
# frame rows X1, X2 (span D), X3 = ∂x, X4 = ∂y, X5 = −y∂x + x∂y + ∂θ (the SE(2) generators)
FRAME5 = sp.Matrix([[R * sp.cos(th) / 2, R * sp.sin(th) / 2, -R / (2 * c), 1, 0],
                    [R * sp.cos(th) / 2, R * sp.sin(th) / 2, R / (2 * c), 0, 1],
                    [1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [-y, x, 1, 0, 0]])
A_STAR = sp.sqrt((2 * C + m * R**2) * (2 * C * c**2 + J * R**2)) / (m0 * R**2)


def documented_c(sign_c1=+1, sign_c2=-1):
    """c1, c2 of docs/chaplygin.rst (corrected: +h in c1, −h in c2) as functions of (θ, ψ̇1, ψ̇2)."""
    k, h = C / R + m * R / 2, m0 * a * R / (2 * c)
    v1, v2 = U5[3], U5[4]
    return (k * sp.cos(th) * (v1 + v2) + sign_c1 * h * sp.sin(th) * (v1 - v2),
            k * sp.sin(th) * (v1 + v2) + sign_c2 * h * sp.cos(th) * (v1 - v2))


def vakonomic_residual_along_nonholonomic(c_pair, values, seed):
    """max |E(L + σ_a θ^a)| at a random state of C, along the nonholonomic motion, with σ = −p + (c1, c2, 0)."""
    rng = np.random.default_rng(seed)
    Lv = L_CARRIAGE.xreplace(values)
    Xm = FRAME5.xreplace(values)
    coframe = Xm.T.inv()                                      # rows θ^i: θ^i(X_j) = δ^i_j
    A = coframe[2:, :]                                        # D = ker θ^3, θ^4, θ^5 (A q̇ = 0)
    n = 5
    W = sp.Matrix(n, n, lambda i, j: Lv.diff(U5[i], U5[j]))
    rest = sp.Matrix([sum(Lv.diff(U5[i], Q5[j]) * U5[j] for j in range(n)) - Lv.diff(Q5[i]) for i in range(n)])
    Adot_u = sp.Matrix([sum(A[r, i].diff(Q5[j]) * U5[j] * U5[i] for i in range(n) for j in range(n)) for r in range(3)])
    E = W * sp.Matrix(A5) + rest                              # E_A(L) with q̈ = A5
    # σ_a(q, q̇) = −X_a(∂L/∂q̇) + c_a
    pmom = [sum(Xm[a_, i] * Lv.diff(U5[i]) for i in range(n)) for a_ in (2, 3, 4)]
    cs = [e.xreplace(values) for e in c_pair] + [sp.S.Zero]
    sigma = [-pmom[i] + cs[i] for i in range(3)]
    # a random state on C: q, v1, v2, q̇ = v1 X1 + v2 X2
    qv = {x: rng.uniform(-1, 1), y: rng.uniform(-1, 1), th: rng.uniform(-3, 3), p1: rng.uniform(-1, 1),
          p2: rng.uniform(-1, 1)}
    v = rng.uniform(-1, 1, 2)
    Xn = np.array(Xm.xreplace(qv).evalf(), dtype=float)
    un = v[0] * Xn[0] + v[1] * Xn[1]
    pt = {**qv, **dict(zip(U5, un))}
    # nonholonomic accelerations: [W −Aᵀ; A 0] (q̈, Λ) = (−rest, −Ȧ q̇)
    Wn = np.array(W.xreplace(pt).evalf(), dtype=float)
    An = np.array(A.xreplace(pt).evalf(), dtype=float)
    K = np.block([[Wn, -An.T], [An, np.zeros((3, 3))]])
    rhs = np.concatenate([-np.array(rest.xreplace(pt).evalf(), dtype=float).ravel(),
                          -np.array(Adot_u.xreplace(pt).evalf(), dtype=float).ravel()])
    qdd = np.linalg.solve(K, rhs)[:n]
    full = {**pt, **dict(zip(A5, qdd))}

    def ddt(f):                                               # d/dt along the motion
        return sum(f.diff(Q5[j]) * U5[j] + f.diff(U5[j]) * A5[j] for j in range(n))

    res = []
    for i in range(n):
        term = E[i]
        for r in range(3):
            term += ddt(sigma[r] * A[r, i]) - sigma[r] * sum(A[r, j].diff(Q5[i]) * U5[j] for j in range(n))
        res.append(abs(float(term.xreplace(full).evalf())))
    return max(res)


CARRIAGE_VALUES = {m: 2, m0: 1, J: 1, C: sp.Rational(1, 10), R: sp.Rational(3, 10), c: sp.Rational(1, 2)}


@pytest.mark.parametrize("root", [+1, -1])
def test_documented_carriage_section_is_vakonomic_along_every_nonholonomic_motion(root):
    values = {**CARRIAGE_VALUES, a: root * A_STAR.xreplace(CARRIAGE_VALUES)}
    for seed in (1, 2):
        assert vakonomic_residual_along_nonholonomic(documented_c(), values, seed) < 1e-9
    # the signs printed before (−h in c1, +h in c2) fail, and so does the formula at another a
    assert vakonomic_residual_along_nonholonomic(documented_c(-1, +1), values, 1) > 1e-3
    other = {**CARRIAGE_VALUES, a: sp.Rational(1, 2)}
    assert vakonomic_residual_along_nonholonomic(documented_c(), other, 1) > 1e-3


def test_chaplygin_page_prints_the_corrected_signs():
    text = (DOCS / "chaplygin.rst").read_text()
    assert r"c_1 &= k\cos\theta\,(v^1 + v^2) + h\sin\theta\,(v^1 - v^2)" in text
    assert r"c_2 &= k\sin\theta\,(v^1 + v^2) - h\cos\theta\,(v^1 - v^2)" in text
    assert r"h = m_0 a R/(2c)" in text and r"k = C/R + mR/2" in text


@pytest.mark.slow
def test_momentum_section_search_agrees_with_the_documented_formula():
    ch = System.load("two_wheeled_carriage").chaplygin()
    found = ch.momentum_sections(ch.default_ansatz(), solve_for="a")
    P = {s.name: s for s in ch.frame.chart.parameters}
    to_lib = {m: P["m"], m0: P["m0"], a: P["a"], J: P["J"], C: P["C"], R: P["R"], c: P["c"]}
    qs = {s.name: s for s in ch.frame.chart.coordinates}
    v1, v2 = ch.nonholonomic.free_velocities
    (special,) = [s for s in found.sections if s.parameter_values.get(P["a"], 0) != 0]
    a_val = special.parameter_values[P["a"]]
    assert sp.simplify(a_val - A_STAR.xreplace(to_lib)) == 0
    rename = {**to_lib, th: qs["theta"], U5[3]: v1, U5[4]: v2}
    for mine, theirs in zip(documented_c(), special.c[:2]):
        diff = (mine.xreplace(rename) - theirs).xreplace({P["a"]: a_val})
        rng = random.Random(5)
        for _ in range(3):
            pt = {s: rng.uniform(0.2, 1.5) for s in diff.free_symbols}
            assert abs(complex(diff.evalf(subs=pt))) < 1e-10


# =====================================================================================================
# 2. is_vakonomic reads the Lagrangian in natural velocities
# =====================================================================================================
t = sp.Symbol("t", real=True)


def _particle():
    system = System.load("nonholonomic_particle")
    return system.nonholonomic().lagrangian, SingleConstraintConsistency(Chart("x y z"), "z_dot - y*x_dot")


def _vakonomic_equations(path):
    """E(L) + μ̇ ω + μ M q̇ for L = |q̇|²/2, ω = (−y, 0, 1), M q̇ = (−ẏ, ẋ, 0) (by hand)."""
    mu = sp.Function("mu")(t)
    X, Y, Z = path
    return [X.diff(t, 2) - mu.diff(t) * Y - mu * Y.diff(t),
            Y.diff(t, 2) + mu * X.diff(t),
            Z.diff(t, 2) + mu.diff(t)], mu


def test_quasi_velocity_expression_is_refused_and_the_lagrangian_object_accepted():
    L, con = _particle()
    path = [2 * t, sp.Rational(1, 2), t]
    with pytest.raises(ConstraintError, match="none of the velocities"):
        con.is_vakonomic(L.expr, path, t)                      # written in v1, v2, v3
    with pytest.raises(ConstraintError, match="cannot read"):
        con.is_vakonomic(object(), path, t)
    assert con.is_vakonomic(L, path, t).vakonomic             # the Lagrangian object works


def test_non_motion_is_not_declared_vakonomic():
    L, con = _particle()
    path = [t**3, t, 3 * t**4 / 4]                             # satisfies ż = y ẋ
    assert sp.simplify(path[2].diff(t) - path[1] * path[0].diff(t)) == 0
    # oracle: the y-equation forces μ = −ÿ/ẋ = 0, then the z-equation reads z̈ = 9t² = 0: no μ(t)
    eqs, mu = _vakonomic_equations(path)
    mu_sol = sp.solve(eqs[1], mu)[0]
    assert mu_sol == 0 and sp.simplify(eqs[2].subs(mu, mu_sol).doit()) != 0
    # nor is it a nonholonomic motion: E(L) = (6t, 0, 9t²) is not parallel to ω = (−t, 0, 1)
    assert sp.simplify(6 * t * 1 - 9 * t**2 * (-t)) != 0
    for lagrangian in (L, L.natural_expr()):
        with pytest.raises(ConstraintError, match="not a nonholonomic one"):
            con.is_vakonomic(lagrangian, path, t)


def test_nonholonomic_motions_vakonomic_or_not_against_the_multiplier_rule():
    L, con = _particle()
    # ẏ = 1, ẋ = 1/√(1+y²), z = √(1+y²): a nonholonomic motion (v̇1 = −y v1 v2/(1+y²), v̇2 = 0)
    curved = [sp.asinh(t), t, sp.sqrt(1 + t**2)]
    E = [e.diff(t, 2) for e in curved]
    lam = E[2]                                                 # E(L) = λ (−y, 0, 1)
    assert all(sp.simplify(e) == 0 for e in (E[0] + lam * t, E[1]))
    eqs, mu = _vakonomic_equations(curved)
    mu_sol = sp.solve(eqs[1], mu)[0]                           # μ ẋ = 0 ⇒ μ = 0, then ẍ = 0 fails
    assert mu_sol == 0 and sp.simplify(eqs[0].subs(mu, 0).doit()) != 0
    for lagrangian in (L, L.natural_expr()):
        assert not con.is_vakonomic(lagrangian, curved, t).vakonomic
    # the straight line y = 1/2: μ ≡ 0 solves the vakonomic equations
    line = [2 * t, sp.Rational(1, 2), t]
    eqs, mu = _vakonomic_equations(line)
    assert all(sp.simplify(e.subs(mu, 0).doit()) == 0 for e in eqs)
    verdict = con.is_vakonomic(L, line, t)
    assert verdict.vakonomic and verdict.multiplier == 0


# =====================================================================================================
# 3. Parallel velocities, u₁ × u₂ = 0 (Talamucci (2025), Example 2 (i))
# =====================================================================================================
m1, m2, g, kk = sp.symbols("m1 m2 g k", positive=True)
CHART6 = Chart("q1 q2 q3 q4 q5 q6", parameters=[m1, m2, g, kk])
Q6, U6 = CHART6.coordinates, CHART6.velocities
CROSS = [U6[1] * U6[5] - U6[2] * U6[4], U6[2] * U6[3] - U6[0] * U6[5], U6[0] * U6[4] - U6[1] * U6[3]]
V6 = m1 * g * Q6[2] + m2 * g * Q6[5] + kk * sum((Q6[i] - Q6[i + 3]) ** 2 for i in range(3)) / 2
T6 = (m1 * sum(w**2 for w in U6[:3]) + m2 * sum(w**2 for w in U6[3:])) / 2
VALUES6 = {m1: 1.0, m2: 2.0, g: 9.81, kk: 3.0}


@functools.lru_cache(maxsize=None)
def _oracle_functions():
    """∇V(q; m1, m2, g, k) and ∂φ/∂q̇ of the three components, lambdified once."""
    grad = sp.lambdify(list(Q6) + [m1, m2, g, kk], [V6.diff(s) for s in Q6], "numpy")
    jac = sp.lambdify(list(U6), [[phi.diff(w) for w in U6] for phi in CROSS], "numpy")
    return grad, jac


def _oracle_acceleration(q, u):
    """Chetaev with all three components: M q̈ = −∇V + Jᵀλ, J q̈ = 0 (φ has no q): least squares (J rank 2)."""
    Mm = np.diag([VALUES6[m1]] * 3 + [VALUES6[m2]] * 3)
    grad_f, jac_f = _oracle_functions()
    gradV = np.array(grad_f(*q, VALUES6[m1], VALUES6[m2], VALUES6[g], VALUES6[kk]), dtype=float)
    Jn = np.array(jac_f(*u), dtype=float)
    K = np.block([[Mm, -Jn.T], [Jn, np.zeros((3, 3))]])
    b = np.concatenate([-gradV, np.zeros(3)])
    sol = np.linalg.lstsq(K, b, rcond=1e-9)[0]                # rank 8 of 9: the force is unique, λ is not
    assert np.linalg.norm(K @ sol - b) < 1e-6 * np.linalg.norm(b)
    return sol[:6]


@functools.lru_cache(maxsize=None)
def _library_accelerations():
    """The Chetaev field of anholo for the reduced list, q̈(q, q̇) lambdified at VALUES6."""
    K = KinematicConstraints.independent(CHART6, CROSS)
    L = Lagrangian(Frame.coordinate(CHART6), T6 - V6)
    acc = ChetaevSystem(L, K).field().natural_accelerations()
    return sp.lambdify(list(Q6) + list(U6), [acc[s].xreplace(VALUES6) for s in Q6], "numpy")


def test_independent_components_keep_the_full_constraint_set():
    K = KinematicConstraints.independent(CHART6, CROSS)
    assert K.count == 2 and len(K.dropped) == 1
    assert "further components" in K.note
    # the spurious branch: both velocities horizontal, not parallel, kills the two kept components only
    spurious = dict(zip(U6, [1.0, 0.3, 0.0, -0.2, 0.8, 0.0]))
    assert all(float(e.xreplace(spurious)) == 0 for e in K.expressions)
    assert float(K.dropped[0].xreplace(spurious)) != 0
    # every sample point of C has parallel velocities
    for p in K.points_on_C():
        u1 = np.array([float(p[w]) for w in U6[:3]])
        u2 = np.array([float(p[w]) for w in U6[3:]])
        assert np.linalg.norm(np.cross(u1, u2)) < 1e-10 * max(1.0, np.linalg.norm(u1) * np.linalg.norm(u2))


def test_proposition1_and_dependent_velocities_on_parallel_velocities():
    K = KinematicConstraints.independent(CHART6, CROSS)
    prop = proposition1(K)
    # by hand: on C, u₂ = (u₄/u₁) u₁ — e.g. u₅ = u₂u₄/u₁, u₆ = u₃u₄/u₁ — homogeneous of degree 1
    assert prop.constraints_homogeneous and prop.degrees == (2, 2)
    assert prop.alpha_bar_equals_alpha and prop.alpha_homogeneous
    (branch,) = prop.alpha                                    # the spurious branch is not among them
    assert set(branch) == {U6[4], U6[5]}
    for dep, alpha in branch.items():
        partner = U6[U6.index(dep) - 3]                       # the same component of the first particle
        assert sp.simplify(alpha - partner * U6[3] / U6[0]) == 0
    # a rejected choice suggests a different one, which is accepted
    with pytest.raises(UnsolvableConstraintsError) as err:
        K.check_dependent(["q3", "q6"])
    message = str(err.value)
    suggested = message.split("e.g. ")[1].rstrip(".")
    names = [s.strip(" '[]") for s in suggested.split(",")]
    assert sorted(names) != ["q3_dot", "q6_dot"]
    assert K.check_dependent(names)
    proposition1(K, names)
    with pytest.raises(DependentConstraintsError):
        KinematicConstraints(CHART6, CROSS)


def test_chetaev_field_of_parallel_velocities_against_the_three_component_oracle():
    f = _library_accelerations()
    rng = np.random.default_rng(7)
    for _ in range(4):
        q = rng.uniform(-1, 1, 6)
        w = rng.uniform(-1, 1, 3)
        u = np.concatenate([w, rng.uniform(-2, 2) * w])         # parallel velocities
        np.testing.assert_allclose(np.array(f(*q, *u), dtype=float), _oracle_acceleration(q, u),
                                   rtol=1e-8, atol=1e-9)
    # perturbing the oracle's masses breaks the agreement (the comparison can fail)
    q, u = rng.uniform(-1, 1, 6), np.concatenate([w, 0.5 * w])
    VALUES6[m2] = 2.5
    try:
        assert np.max(np.abs(np.array(f(*q, *u), dtype=float) - _oracle_acceleration(q, u))) > 1e-3
    finally:
        VALUES6[m2] = 2.0


def test_integrated_oracle_keeps_velocities_parallel_and_matches_the_field():
    f = _library_accelerations()
    w = np.array([0.6, -0.4, 0.9])
    s0 = np.concatenate([[0.1, 0.2, 0.3, 1.0, -0.5, 0.2], w, 0.7 * w])
    ts = np.linspace(0, 0.6, 7)
    ref = solve_ivp(lambda _, s: np.concatenate([s[6:], _oracle_acceleration(s[:6], s[6:])]), (0, 0.6), s0,
                    t_eval=ts, rtol=1e-10, atol=1e-12)
    lib = solve_ivp(lambda _, s: np.concatenate([s[6:], np.array(f(*s), dtype=float)]), (0, 0.6), s0,
                    t_eval=ts, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(np.cross(ref.y[6:9].T, ref.y[9:12].T))) < 1e-7
    np.testing.assert_allclose(lib.y, ref.y, atol=1e-7)


# =====================================================================================================
# 4. Consistent verdicts and pages
# =====================================================================================================
def test_carriage_chaplygin_verdict_excludes_frame_parameters_like_the_consistency_module():
    system = System.load("two_wheeled_carriage")
    P = {s.name: s for s in system.chart.parameters}
    # by hand: on C, p_a R^a_12 = (R²/2c)(sinθ p_x − cosθ p_y) = −(R²/2c) m0 a θ̇, θ̇ = (R/2c)(v2 − v1);
    # R and c enter the frame (their vanishing changes D), so only a*m0 is a condition
    hand = -(R**2 / (2 * c)) * m0 * a * (R / (2 * c))
    factors = {f for f in sp.Mul.make_args(sp.factor(hand)) if f.free_symbols and not f.is_number}
    conditions = {f.base if f.is_Pow else f for f in factors} - {R, c}
    assert conditions == {a, m0}
    verdict = system.chaplygin().consistency()
    assert verdict.holds is None
    assert {f for cnd in verdict.conditions for f in sp.Mul.make_args(cnd)} == {P["a"], P["m0"]}
    assert "R = 0" not in verdict.reason
    nh = system.nonholonomic()
    v = nh.bundle.quasi_velocities
    minus_p = Section(nh, [-nh.restrict(nh.lagrangian.expr.diff(va)) for va in v[2:]], "-p")
    assert verdict.reason.endswith(strong_consistency(nh, minus_p).condition_text())


def test_carriage_density_by_the_lagrange_dalembert_equations_and_the_pages_agree():
    v1, v2 = sp.symbols("v1 v2", real=True)
    u = FRAME5[0, :] * v1 + FRAME5[1, :] * v2                 # q̇ = v1 X1 + v2 X2 on C
    on_C = dict(zip(U5, u))
    vd = sp.symbols("v1_dot v2_dot", real=True)
    thd = u[2]
    # q̈ = X1 v̇1 + X2 v̇2 + v^α dX_α/dt (X_α depend on θ only)
    qdd = FRAME5[0, :] * vd[0] + FRAME5[1, :] * vd[1] + (FRAME5[0, :] * v1 + FRAME5[1, :] * v2).diff(th) * thd
    n = 5
    E = [sum(L_CARRIAGE.diff(U5[i], U5[j]) * qdd[j] + L_CARRIAGE.diff(U5[i], Q5[j]) * U5[j] for j in range(n))
         - L_CARRIAGE.diff(Q5[i]) for i in range(n)]
    E = [e.xreplace(on_C) for e in E]
    rows = [sum(FRAME5[al, i] * E[i] for i in range(n)) for al in (0, 1)]   # X_α · E(L) = 0
    kappa = R**3 * a * m0 / (2 * (2 * C * c**2 + J * R**2))
    rng = random.Random(11)
    for _ in range(3):
        pt = {s_: sp.Float(rng.uniform(0.2, 1.5), 30) for s_ in (m, m0, a, J, C, R, c, th)}
        rows_at = [sp.expand(r.xreplace(pt)) for r in rows]   # still in v1, v2, v̇1, v̇2
        Mx = sp.Matrix(2, 2, lambda r, j: rows_at[r].diff(vd[j]))
        rhs = sp.Matrix([-r.xreplace({vd[0]: 0, vd[1]: 0}) for r in rows_at])
        vdot = Mx.LUsolve(rhs)                                # v̇^α(v) on C at this (θ, parameters)
        div = vdot[0].diff(v1) + vdot[1].diff(v2)             # ∂q̇^A/∂q^A = 0: X_α depend on θ only
        # N = exp(κ(ψ1 + ψ2)) is invariant iff Γ(N)/N + div = κ(ψ̇1 + ψ̇2) + div = κ(v1 + v2) + div = 0
        vals = {v1: rng.uniform(-1, 1), v2: rng.uniform(-1, 1)}
        k_at = kappa.xreplace(pt)
        assert abs(float((k_at * (v1 + v2) + div).xreplace(vals))) < 1e-12 * max(1.0, abs(float(div.xreplace(vals))))
        scale = abs(float((k_at * (v1 + v2)).xreplace(vals)))
        assert scale > 1e-6
        assert abs(float((-k_at * (v1 + v2) + div).xreplace(vals))) > scale     # exp(−κ(ψ1 + ψ2)) is not
    inv = (DOCS / "invariants.rst").read_text()
    red = (DOCS / "reduction.rst").read_text()
    formula = r"\kappa = R^3 a m_0 / (2(2Cc^2 + JR^2))"
    assert formula in inv and formula.replace(" / ", "/") in red
    assert "Chaplygin sleigh and the two-wheeled carriage: none" not in inv


def test_bibliography_calls_the_preprint_the_earlier_version():
    bib = (DOCS / "references.bib").read_text()
    entry = bib[bib.index("@unpublished{TalamucciPreprint"):]
    entry = entry[: entry.index("\n}")]
    assert "earlier version" in entry and "longer companion" not in entry
    assert "Prop. 2" in entry and "(36)--(40)" in entry and "(40)--(44)" in entry

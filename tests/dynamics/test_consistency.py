"""Weak/strong consistency, variational Lagrangians and the section search (THEORY §§5–6, 9).

Oracles:
* the coordinate multiplication rule (tests/oracles.py ``multiplication_rule_solution``:
  Euler–Lagrange equations of L + λ·φ in (q, λ)) against the coordinate multiplier
  method (``constrained_coordinate_solution``): a section σ is strongly consistent
  iff, with λ = σ on C, the vakonomic q̈ equals the nonholonomic q̈ and λ̇ equals the
  derivative of σ along the motion;
* the coordinate Euler–Lagrange equations of L_σ (``coordinate_accelerations``) for
  Theorem 1 / Cor. 2;
* seed 004 §7 as reconstructed in THEORY §9 (−p consistent iff Σ m_i A_i A_i' = 0;
  the carriage iff a = 0, and −p + c at one special a, computed by hand in the docs).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import (
    constrained_coordinate_solution,
    coordinate_accelerations,
    multiplication_rule_solution,
    point_on_constraints,
)

from anholo import ConstraintError, IrregularLagrangianError, VakonomicSystem
from anholo.analysis.consistency import (
    Section,
    polynomial_ansatz,
    search_sections,
    strong_consistency,
    variational_check,
    variational_lagrangian,
    weak_consistency,
    zero_section,
    consistency_report,
)
from anholo.errors import SectionError
from anholo.examples import crampin_mestdag_class
from anholo.system import System


def load(name, dependent=None):
    S = System.load(name)
    dep = None if dependent is None else [S.chart.coordinates[S.chart.coordinates.index(sp.Symbol(d, real=True))]
                                          for d in dependent]
    return S, S.nonholonomic(dependent=dep)


def minus_p(nh):
    """σ_a = −p_a|_C, p_a = ∂L/∂v^a in the adapted frame (X_a the symmetry directions)."""
    v = nh.bundle.quasi_velocities
    return Section(nh, [-nh.restrict(nh.lagrangian.expr.diff(va)) for va in v[nh.m:]], "-p")


def natural_section(nh, section, sub=None):
    """λ' of the multiplication rule with the constraints as written: λ' = σ M^{-1}, in (q, q_dot)."""
    M = sp.Matrix(nh.form_matrix)
    lam = sp.Matrix([list(section.values)]) * M.inv()
    out = [nh.to_natural(e) for e in lam]
    return [e.xreplace(sub) for e in out] if sub else out


def vakonomic_agrees(S, nh, section, seeds=(1, 2), sub=None):
    """The oracle: vakonomic motion with λ = σ equals the nonholonomic one and keeps λ = σ."""
    spec_q, spec_u = S.chart.coordinates, S.chart.velocities
    L = S.lagrangian.natural_expr()
    cons = list(S.constraints)
    params = S.chart.parameters
    if sub:
        L, cons = L.xreplace(sub), [c.xreplace(sub) for c in cons]
        params = [p for p in params if p not in sub]
    lam_nat = natural_section(nh, section, sub)
    lam_syms = sp.symbols(f"lam1:{len(cons) + 1}", real=True)
    dep = [spec_u[spec_q.index(q)] for q in _dependent_coords(nh)]
    ok = True
    for seed in seeds:
        pt = point_on_constraints(spec_q, spec_u, cons, params, dep, seed, low=-1.0, high=1.0)
        lam_vals = [sp.Float(complex(e.xreplace(pt).evalf(30)).real, 30) for e in lam_nat]
        pt_l = dict(pt)
        pt_l.update(zip(lam_syms, lam_vals))
        qdd_v, lamdot = multiplication_rule_solution(L, spec_q, spec_u, cons, lam_syms, pt_l)
        qdd_n, _ = constrained_coordinate_solution(L, spec_q, spec_u, cons, pt)
        # dλ'/dt along the nonholonomic motion, by the chain rule in (q, u)
        rates = []
        for e in lam_nat:
            grad = sum(e.diff(q) * pt[u] for q, u in zip(spec_q, spec_u))
            val = complex(grad.xreplace(pt).evalf(30)).real
            val += sum(complex(e.diff(u).xreplace(pt).evalf(30)).real * a for u, a in zip(spec_u, qdd_n))
            rates.append(val)
        ok &= np.allclose(qdd_v, qdd_n, atol=1e-9) and np.allclose(lamdot, rates, atol=1e-9)
    return ok


def _dependent_coords(nh):
    """Coordinates whose velocities the adapted frame solves for (columns of X_a that are unit vectors)."""
    X, n, m = nh.frame.vectors, nh.n, nh.m
    out = []
    for a in range(m, n):
        row = [X[a, A] for A in range(n)]
        nz = [A for A in range(n) if row[A] != 0]
        out.append(nh.frame.chart.coordinates[nz[-1]])
    return out


# --- seed 004 §7.1: the class s_i' = A_i(r2) r1' ---------------------------------------------
@pytest.mark.parametrize("A,masses,consistent", [
    (["R*cos(r2)", "R*sin(r2)"], ["m", "m"], True),   # vertical rolling disk
    (["tan(r2)"], None, False),                        # knife edge
    (["r2"], None, False),                             # nonholonomic particle
])
def test_crampin_mestdag_class_minus_p(A, masses, consistent):
    S = System.from_spec(crampin_mestdag_class(A, masses))
    nh = S.nonholonomic()
    sec = minus_p(nh)
    strong, weak = strong_consistency(nh, sec), weak_consistency(nh, sec)
    assert strong.holds is consistent and weak.holds is consistent  # Chaplygin: weak ⇔ strong
    assert weak_consistency(nh, zero_section(nh)).holds is True
    assert vakonomic_agrees(S, nh, sec) is consistent


def test_crampin_mestdag_class_condition_is_sum_m_A_dA():
    """A = (cos r2, sin r2) with masses m1, m2: Σ m_i A_i A_i' = (m2 − m1) sin cos, so iff m1 = m2."""
    S = System.from_spec(crampin_mestdag_class(["cos(r2)", "sin(r2)"], ["m1", "m2"]))
    nh = S.nonholonomic()
    verdict = strong_consistency(nh, minus_p(nh))
    assert verdict.holds is None
    (alt,) = verdict.conditions
    (eq,) = alt
    m1, m2 = sp.symbols("m1 m2", positive=True)
    assert sp.simplify(eq.lhs.xreplace({m2: m1})) == 0 and eq.lhs.xreplace({m2: 2 * m1}) != 0


def test_crampin_mestdag_class_generic_functions_condition():
    """Undefined A1, A2: the condition is the functional identity m1 A1 A1' + m2 A2 A2' = 0."""
    S = System.load("crampin_mestdag_class")
    nh = S.nonholonomic()
    verdict = strong_consistency(nh, minus_p(nh))
    assert verdict.holds is None and len(verdict.conditions) == 1
    (eq,) = verdict.conditions[0]
    r2 = S.chart.coordinates[1]
    A1, A2 = (sp.Function(n, real=True)(r2) for n in ("A1", "A2"))
    m1, m2 = sp.symbols("m1 m2", positive=True)
    target = m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)
    assert sp.simplify(sp.cancel(eq.lhs / target)).is_number


@pytest.mark.parametrize("name,dependent,consistent", [
    ("vertical_rolling_disk", ["x", "y"], True),
    ("knife_edge", ["y"], False),
    ("nonholonomic_particle", None, False),
])
def test_bundled_examples_minus_p_and_zero(name, dependent, consistent):
    S, nh = load(name, dependent)
    assert strong_consistency(nh, minus_p(nh)).holds is consistent
    assert weak_consistency(nh, zero_section(nh)).holds is True
    zero = strong_consistency(nh, zero_section(nh))
    assert zero.holds is False  # μ ≢ 0 (for every allowed parameter value)
    assert vakonomic_agrees(S, nh, zero_section(nh)) is False


def test_particle_published_residuals():
    """THEORY §9: μ = v1 v2/(1+y²); with σ = −p = −y v1 and R^3_12 = −1 the weak residuals are (y v1 v2, −y v1²)."""
    S, nh = load("nonholonomic_particle")
    x, y, z = S.chart.coordinates
    v1, v2 = nh.free_velocities
    zero = strong_consistency(nh, zero_section(nh))
    assert sp.simplify(zero.residuals[-1] - v1 * v2 / (1 + y**2)) == 0
    w = weak_consistency(nh, minus_p(nh))
    assert sp.simplify(w.residuals[0] - y * v1 * v2) == 0 and sp.simplify(w.residuals[1] + y * v1**2) == 0


def test_strong_residual_is_tangency_residual_when_weakly_consistent():
    """Cor. 1 vs Prop. 4: if W(σ) = 0 then Γ_σ = Γ_nh and T_b(σ) = S_b(σ)."""
    for name, dep in (("vertical_rolling_disk", ["x", "y"]), ("nonholonomic_particle", None)):
        S, nh = load(name, dep)
        for sec in (zero_section(nh), minus_p(nh)):
            if not weak_consistency(nh, sec):
                continue
            T = VakonomicSystem(nh).section_field(sec.values).tangency_residual
            S_res = strong_consistency(nh, sec).residuals[nh.m:]
            for t, s in zip(T, S_res):
                assert sp.simplify(t - s) == 0


# --- the two-wheeled carriage (seed 004 §7.2) ------------------------------------------------
def carriage():
    S = System.load("two_wheeled_carriage")
    nh = S.nonholonomic()
    P = {p.name: p for p in S.chart.parameters}
    return S, nh, P


def test_carriage_minus_p_iff_a_zero():
    S, nh, P = carriage()
    verdict = strong_consistency(nh, minus_p(nh))
    assert verdict.holds is None
    assert ((sp.Eq(P["a"], 0, evaluate=False),) in verdict.conditions)
    assert "a = 0" in verdict.reason
    assert vakonomic_agrees(S, nh, minus_p(nh), seeds=(1,)) is False
    assert vakonomic_agrees(S, nh, minus_p(nh), seeds=(1,), sub={P["a"]: 0}) is True


def special_a(P):
    m, C, J, R, c, m0 = (P[k] for k in ("m", "C", "J", "R", "c", "m0"))
    return sp.sqrt((m * R**2 + 2 * C) * (J * R**2 + 2 * C * c**2)) / (m0 * R**2)


def test_carriage_search_finds_a_zero_and_the_special_a():
    S, nh, P = carriage()
    th = S.chart.coordinates[2]
    ansatz = polynomial_ansatz(nh, [1, sp.cos(th), sp.sin(th)], 1, offset=minus_p(nh))
    found = search_sections(nh, ansatz, solve_for=[P["a"]])
    assert found.exists is None
    values = sorted((f.conditions[0].rhs for f in found.families), key=lambda e: e != 0)
    assert values[0] == 0
    assert sp.simplify(values[1] ** 2 - special_a(P) ** 2) == 0 and values[1].is_positive
    fam = [f for f in found.families if f.conditions[0].rhs != 0][0]
    # substitution: strongly consistent at a = a*, and the vakonomic motion with λ = σ is nonholonomic
    assert strong_consistency(nh, fam.section).holds is True  # with the section's condition a = a* substituted
    fixed = Section(nh, [v.xreplace(dict.fromkeys(fam.free_constants, 0)) for v in fam.section.values],
                    "-p + c", fam.section.conditions)
    sub = {P["a"]: fam.conditions[0].rhs}
    assert strong_consistency(nh, fixed).holds is True
    assert strong_consistency(nh, Section(nh, fixed.values, "-p + c")).holds is not True  # a left symbolic
    assert vakonomic_agrees(S, nh, fixed, seeds=(3,), sub=sub) is True
    # the documented c: c3 = k s cosθ + h (v1 − v2) sinθ with k = (mR² + 2C)/(2R), h = m0 a R/(2c)
    m, C, R, c, m0 = (P[k] for k in ("m", "C", "R", "c", "m0"))
    v1, v2 = nh.free_velocities
    p = [nh.restrict(nh.lagrangian.expr.diff(va)) for va in nh.bundle.quasi_velocities[nh.m:]]
    k, h = (m * R**2 + 2 * C) / (2 * R), m0 * sub[P["a"]] * R / (2 * c)
    c3 = k * (v1 + v2) * sp.cos(th) + h * (v1 - v2) * sp.sin(th)
    c4 = k * (v1 + v2) * sp.sin(th) - h * (v1 - v2) * sp.cos(th)
    assert sp.simplify(fixed.values[0] + p[0].xreplace(sub) - c3) == 0
    assert sp.simplify(fixed.values[1] + p[1].xreplace(sub) - c4) == 0


def test_carriage_default_search_finds_nothing():
    S, nh, P = carriage()
    found = search_sections(nh, polynomial_ansatz(nh, (1,), 1))
    assert found.exists is False and not found.families


# --- Theorem 1 / Cor. 2 ----------------------------------------------------------------------
def el_oracle(S, nh, section, point_seed=1):
    """Coordinate EL accelerations of L_σ (built by hand in natural velocities) at a point of C."""
    q, u = S.chart.coordinates, S.chart.velocities
    th = nh.frame.coframe
    v_free = {va: sum(th[al, A] * u[A] for A in range(nh.n)) for al, va in enumerate(nh.free_velocities)}
    Lsig = S.lagrangian.natural_expr() + sum(
        s.xreplace(v_free) * sum(th[nh.m + a, A] * u[A] for A in range(nh.n)) for a, s in enumerate(section.values))
    cons = list(S.constraints)
    dep = [u[q.index(c)] for c in _dependent_coords(nh)]
    pt = point_on_constraints(q, u, cons, S.chart.parameters, dep, point_seed, low=-1.0, high=1.0)
    expected = coordinate_accelerations(Lsig, q, u, pt)
    vpt = dict(pt)
    vpt.update({va: v_free[va].xreplace(pt) for va in nh.free_velocities})
    return expected, vpt


@pytest.mark.parametrize("name,dependent,target,holds", [
    ("vertical_rolling_disk", ["x", "y"], "nonholonomic", True),   # Cor. 2
    ("nonholonomic_particle", None, "section", True),              # Thm. 1: T(−p) = 0, Γ_σ ≠ Γ_nh
    ("nonholonomic_particle", None, "nonholonomic", False),
])
def test_variational_lagrangian_of_minus_p(name, dependent, target, holds):
    S, nh = load(name, dependent)
    sec = minus_p(nh)
    check = variational_check(nh, sec, target)
    assert check.holds is holds
    expected, vpt = el_oracle(S, nh, sec)
    got = [complex(e.xreplace(vpt).evalf(30)).real for e in check.natural_accelerations().values()]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    L_sigma = variational_lagrangian(nh, sec)
    assert L_sigma.bundle is nh.bundle


def test_theorem1_fails_without_tangency():
    """σ = 0 on the particle: T(0) = μ ≠ 0, L_0 = L whose free motion leaves C."""
    S, nh = load("nonholonomic_particle")
    check = variational_check(nh, zero_section(nh), "section")
    assert check.holds is False and check.residuals[-1] != 0


# --- report ----------------------------------------------------------------------------------
def test_consistency_report_with_extra_sections():
    S, nh = load("vertical_rolling_disk", ["x", "y"])
    rep = consistency_report(nh, [minus_p(nh)])
    assert rep.to_dict() == {"weak": True, "strong": True, "section": "-p", "reason": rep.reason, "decided": "exact"}
    S, nh, P = carriage()
    rep = consistency_report(nh, [minus_p(nh)])
    assert rep.strong is None and rep.section == "-p" and "a = 0" in rep.reason
    S, nh = load("nonholonomic_particle")
    rep = consistency_report(nh)
    assert rep.strong is False and rep.weak is True and "0" in rep.reason


def test_consistency_report_without_search_budget_says_the_search_was_not_run():
    # the zero section of the particle is not strongly consistent, so the report would search; with no
    # CPU time for the search it keeps the verdicts of the sections tried and says why it did not search
    S, nh = load("nonholonomic_particle")
    rep = consistency_report(nh, search_budget=0)
    assert rep.search is None and rep.weak is True and rep.strong is False
    assert "was not run" in rep.reason and "search_sections" in rep.reason and "was 0 s" in rep.reason


# --- errors ----------------------------------------------------------------------------------
def test_bad_sections_raise():
    S, nh = load("nonholonomic_particle")
    v1, v2, v3 = nh.bundle.quasi_velocities
    with pytest.raises(SectionError, match="components"):
        Section(nh, [0, 0])
    with pytest.raises(SectionError, match="constrained"):
        Section(nh, [v3])
    with pytest.raises(SectionError, match="natural"):
        Section(nh, [S.chart.velocities[0]])
    with pytest.raises(SectionError, match="target"):
        variational_check(nh, zero_section(nh), "vakonomic")
    with pytest.raises(SectionError, match="not parameters"):
        search_sections(nh, polynomial_ansatz(nh), solve_for=["a"])
    with pytest.raises(SectionError, match="polynomial"):
        search_sections(nh, polynomial_ansatz(nh, [sp.sqrt(v1**2 + 1)], 0))


def test_singular_variational_lagrangian_raises():
    S, nh = load("nonholonomic_particle")
    y = S.chart.coordinates[1]
    v1 = nh.free_velocities[0]
    sec = Section(nh, [(sp.sqrt(1 + y**2) - y) * v1])  # g_13 + ∂σ/∂v1 makes det g = 0 on C
    with pytest.raises(IrregularLagrangianError, match="singular"):
        variational_check(nh, sec)


def test_affine_constraints_rejected():
    nh = System.load("sphere_on_turntable").nonholonomic()
    with pytest.raises(ConstraintError, match="affine"):
        zero_section(nh)


@pytest.mark.parametrize("name", ["vertical_rolling_disk", "two_wheeled_carriage", "nonholonomic_particle"])
def test_written_multipliers_are_sigma_times_inverse_form_matrix(name):
    """Section.written_multipliers against sympy's own inverse of M (test helper natural_section)."""
    S, nh = load(name)
    sec = minus_p(nh)
    got = sec.written_multipliers()
    want = natural_section(nh, sec)
    rng = np.random.default_rng(3)
    syms = sorted(set().union(*(sp.sympify(e).free_symbols for e in list(got) + list(want))), key=str)
    for _ in range(3):
        pt = {s: rng.uniform(0.3, 1.2) for s in syms}
        for g, w in zip(got, want):
            assert abs(complex(sp.sympify(g).xreplace(pt).evalf()) - complex(sp.sympify(w).xreplace(pt).evalf())) < 1e-9


def test_vakonomic_motion_from_written_minus_p_is_the_nonholonomic_one():
    """Vertical disk (strongly consistent with −p): the vakonomic run started at λ'(0) from
    Section.written_multipliers follows the nonholonomic run (numerical integration)."""
    from anholo.numerics import from_system, simulate

    S, nh = load("vertical_rolling_disk")
    names = {s.name: s for s in S.chart.coordinates + S.chart.velocities + S.chart.parameters}
    q0, u0 = [0.1, -0.2, 0.3, 0.0], None
    th, phid = 0.3, 1.1
    u0 = [np.cos(th) * phid, np.sin(th) * phid, 0.7, phid]  # R = 1 in [values]
    state = {**{names[n]: v for n, v in zip(["x", "y", "theta", "phi"], q0)},
             **{names[n]: v for n, v in zip(["x_dot", "y_dot", "theta_dot", "phi_dot"], u0)},
             **{S.chart.parameters[i]: S.values[S.chart.parameters[i]] for i in range(len(S.chart.parameters))}}
    lam0 = [float(sp.sympify(e).xreplace(state)) for e in minus_p(nh).written_multipliers()]
    nh_run = simulate(from_system(S, "nonholonomic"), 10, q0, u0, points=20)
    vak_run = simulate(from_system(S, "vakonomic"), 10, q0, u0, lam0, points=20)
    assert np.max(np.abs(nh_run.q - vak_run.q)) < 1e-7
    wrong = simulate(from_system(S, "vakonomic"), 10, q0, u0, [0.0, 0.0], points=20)
    assert np.max(np.abs(nh_run.q - wrong.q)) > 1e-3

"""Chaplygin systems (THEORY §7, seed 004 §§6–7).

Oracles: brackets of vector fields and complete lifts differentiated by hand here;
the coordinate multiplier method (tests/oracles.py, ``constrained_coordinate_solution``)
for Γ_nh and its multipliers; the coordinate Euler–Lagrange equations
(``coordinate_accelerations``) of the variational Lagrangian L̂ = L − p_a ϑ^a built
here in coordinates (p_a = Ẽ_a^A ∂L/∂u^A, ϑ the connection form solved from the
constraints); the published results of THEORY §9.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from oracles import coordinate_accelerations, constrained_coordinate_solution, point_on_constraints

from anholo import Chart, Frame, Lagrangian
from anholo.analysis.chaplygin import ChaplyginSystem, LieGroupAction
from anholo.errors import (
    NonFreeActionError,
    NonInvariantDistributionError,
    NonInvariantLagrangianError,
    NotPrincipalConnectionError,
    StructureConstantsError,
)
from anholo.examples import crampin_mestdag_class
from anholo.system import System


def same(a, b) -> bool:
    return sp.simplify(sp.sympify(a) - sp.sympify(b)) == 0


def bracket(X, Y, q):
    """[X, Y]^A = X(Y^A) − Y(X^A), by hand."""
    return [sp.expand(sum(X[B] * sp.diff(Y[A], q[B]) - Y[B] * sp.diff(X[A], q[B]) for B in range(len(q))))
            for A in range(len(q))]


# --- the group action and its sign convention ----------------------------------------------------

def test_se2_structure_constants_left_convention():
    c = Chart("x y theta")
    x, y, th = c.coordinates
    gens = [[1, 0, 0], [0, 1, 0], [-y, x, 1]]
    G = LieGroupAction(c, gens)
    # se(2): [e3, e1] = e2, [e3, e2] = -e1, [e1, e2] = 0
    expected = {(1, 2, 0): 1, (0, 2, 1): -1}
    for d in range(3):
        for a in range(3):
            for b in range(3):
                want = expected.get((d, a, b), -expected.get((d, b, a), 0))
                assert G.structure_constants[d][a][b] == want
    # left action: [Ẽ_a, Ẽ_b] = −c^d_ab Ẽ_d, checked with brackets differentiated here
    for a in range(3):
        for b in range(3):
            br = bracket(gens[a], gens[b], [x, y, th])
            rhs = [-sum(G.structure_constants[d][a][b] * gens[d][A] for d in range(3)) for A in range(3)]
            assert all(same(u, w) for u, w in zip(br, rhs))


def test_right_convention_and_declared_constants():
    c = Chart("x y theta")
    x, y, th = c.coordinates
    gens = [[1, 0, 0], [0, 1, 0], [-y, x, 1]]
    left = LieGroupAction(c, gens).structure_constants
    right = LieGroupAction(c, gens, action="right").structure_constants
    assert all(right[d][a][b] == -left[d][a][b] for d in range(3) for a in range(3) for b in range(3))
    LieGroupAction(c, gens, structure_constants=left)          # accepted
    with pytest.raises(StructureConstantsError, match="action='right'"):
        LieGroupAction(c, gens, structure_constants=right)      # declared for the other side


def test_so3_on_so3_is_free_and_antihomomorphic():
    """Left multiplication on SO(3) in Euler angles: the fundamental fields are the right-invariant
    fields; the group is non-abelian with so(3) constants ε_abc, and [Ẽ_a, Ẽ_b] = −ε_abc Ẽ_c."""
    phi, th, psi = sp.symbols("phi theta psi", real=True)
    c = Chart([phi, th, psi])
    # spatial angular velocity one-forms (Z-X-Z Euler angles); their dual fields generate the left action
    spatial = [[0, sp.cos(phi), sp.sin(th) * sp.sin(phi)],
               [0, sp.sin(phi), -sp.sin(th) * sp.cos(phi)],
               [1, 0, sp.cos(th)]]
    gens = (sp.Matrix(spatial).inv().T).applyfunc(sp.simplify).tolist()
    G = LieGroupAction(c, gens)
    eps = sp.LeviCivita
    signs = {G.structure_constants[d][a][b] * eps(a, b, d) for a in range(3) for b in range(3) for d in range(3)
             if eps(a, b, d) != 0}
    assert len(signs) == 1 and abs(signs.pop()) == 1
    for a in range(3):
        for b in range(3):
            br = bracket(gens[a], gens[b], [phi, th, psi])
            rhs = [-sum(G.structure_constants[d][a][b] * gens[d][A] for d in range(3)) for A in range(3)]
            assert all(same(u, w) for u, w in zip(br, rhs))


def test_rotations_of_space_are_not_free():
    c = Chart("x y z")
    x, y, z = c.coordinates
    with pytest.raises(NonFreeActionError, match="not free"):
        LieGroupAction(c, [[0, -z, y], [z, 0, -x], [-y, x, 0]])


def test_generators_must_close_with_constant_coefficients():
    c = Chart("x y")
    x, y = c.coordinates
    with pytest.raises(StructureConstantsError, match="non-constant"):
        LieGroupAction(c, [[1, 0], [0, x]])


# --- bad Chaplygin data ---------------------------------------------------------------------------

def particle(L=None):
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = (xd**2 + yd**2 + zd**2) / 2 if L is None else L
    return chart, Lagrangian(Frame.coordinate(chart), L)


def test_non_invariant_lagrangian():
    S = System.load("knife_edge")             # gravity along x: not invariant under x-translations
    with pytest.raises(NonInvariantLagrangianError, match="not invariant"):
        ChaplyginSystem(S.lagrangian, S.constraints, [[1, 0, 0]])
    ChaplyginSystem(S.lagrangian, S.constraints, [[0, 1, 0]])   # y is horizontal: fine


def test_non_invariant_distribution():
    chart, L = particle()
    with pytest.raises(NonInvariantDistributionError, match="not invariant"):
        ChaplyginSystem(L, ["z_dot - z*x_dot"], [[0, 0, 1]])


def test_distribution_not_complementary():
    chart, L = particle()
    with pytest.raises(NotPrincipalConnectionError, match="lies in D"):
        ChaplyginSystem(L, ["z_dot - y*x_dot"], [[0, 1, 0]])
    with pytest.raises(NotPrincipalConnectionError, match="rank D"):
        ChaplyginSystem(L, ["z_dot - y*x_dot"], [[0, 0, 1], [1, 0, 0]])


def test_non_free_generators_in_a_chaplygin_system():
    chart, L = particle()
    with pytest.raises(NonFreeActionError):
        ChaplyginSystem(L, ["z_dot - y*x_dot", "x_dot"], [[0, 0, 1], [0, 0, 2]])


# --- the carriage (seed 004 §7.2) ------------------------------------------------------------------

def carriage(spec=None):
    S = System.from_spec(spec) if spec is not None else System.load("two_wheeled_carriage")
    x, y = S.chart.coordinates[:2]
    return S, ChaplyginSystem(S.lagrangian, S.constraints, [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [-y, x, 1, 0, 0]])


def test_carriage_frame_and_curvature():
    S, ch = carriage()
    names = {p.name: p for p in S.chart.parameters}
    R, c = names["R"], names["c"]
    th = S.chart.coordinates[2]
    assert ch.shape_coordinates == S.chart.coordinates[3:]
    assert ch.horizontal_is_invariant()
    assert ch.frame.vectors == sp.Matrix(S.frame.vectors)      # the file's frame is the Chaplygin frame
    curv = ch.curvature()
    expected = (R**2 * sp.sin(th) / (2 * c), -R**2 * sp.cos(th) / (2 * c), 0)
    for a in range(3):
        assert same(curv.get((2 + a, 0, 1), 0), expected[a])


def test_carriage_multipliers_are_the_rate_of_momentum():
    """μ_a = Γ_nh(p_a) equals E(L)(Ẽ_a) of the coordinate multiplier method."""
    S, ch = carriage()
    q, u = S.chart.coordinates, S.chart.velocities
    Ln = S.lagrangian.natural_expr()
    cons = list(S.constraints)
    mu = [ch.nonholonomic.to_natural(e) for e in ch.multipliers()]
    gens = ch.action.matrix
    Aphi = sp.Matrix(cons).jacobian(u)
    for seed in (1, 2):
        pt = point_on_constraints(q, u, cons, S.chart.parameters, u[:3], seed)
        _, lam = constrained_coordinate_solution(Ln, q, u, cons, pt)
        E = np.array((Aphi.T.xreplace(pt)).evalf(), dtype=float) @ lam
        for a in range(3):
            want = float(sum(gens[a, A].xreplace(pt) * E[A] for A in range(5)))
            assert abs(float(mu[a].xreplace(pt)) - want) < 1e-9


def test_carriage_consistent_with_minus_p_iff_a_zero():
    S, ch = carriage()
    a = {p.name: p for p in S.chart.parameters}["a"]
    verdict = ch.consistency()
    assert verdict.holds is None and any(f == a for c in verdict.conditions for f in sp.Mul.make_args(c))
    _, ch0 = carriage(S_spec_with(a=0))
    assert ch0.consistency().holds is True
    assert ch0.check_variational_lagrangian().equals_nonholonomic


def S_spec_with(**values):
    """The carriage with some parameters set; a = 0 is allowed by declaring the offset a nonnegative
    (parameters are positive by default, and a value must have the declared sign)."""
    from anholo.examples import example_path
    from anholo.io import parse_system

    text = example_path("two_wheeled_carriage").read_text() + '\n[signs]\na = "nonnegative"\n'
    return parse_system(text, source="two_wheeled_carriage").substitute(values)


@pytest.mark.slow
def test_carriage_section_search_finds_the_special_value_of_a():
    """σ = −p + c, c constants of motion linear in v: a² m0² R⁴ = (2C + m R²)(2C c² + J R²).

    Each section found is verified here independently: c is a constant of motion of the
    coordinate multiplier method, and (c_a − p_a) R^a_12 = 0 with p_a = Ẽ_a^A ∂L/∂u^A."""
    S, ch = carriage()
    P = {p.name: p for p in S.chart.parameters}
    a, m, m0, J, C, R, c = (P[k] for k in ("a", "m", "m0", "J", "C", "R", "c"))
    search = ch.momentum_sections(ch.default_ansatz(), solve_for="a")
    special = {s.parameter_values[a] for s in search.sections}
    assert any(v == 0 for v in special)
    nonzero = [v for v in special if v != 0]
    assert nonzero and all(same(v**2 * m0**2 * R**4, (2 * C + m * R**2) * (2 * C * c**2 + J * R**2)) for v in nonzero)
    q, u = S.chart.coordinates, S.chart.velocities
    th = q[2]
    for s in search.sections:
        if s.parameter_values[a] == 0:
            continue
        sub = dict(s.parameter_values)
        sub.update({f: 0 for f in s.free_constants})
        Ln = S.lagrangian.natural_expr().xreplace(sub)
        cons = [e.xreplace(sub) for e in S.constraints]
        cvals = [ch.nonholonomic.to_natural(e.xreplace(sub)) for e in s.c]
        p = [sum(ch.action.matrix[k, A] * Ln.diff(u[A]) for A in range(5)) for k in range(3)]
        weak = (cvals[0] - p[0]) * sp.sin(th) - (cvals[1] - p[1]) * sp.cos(th)
        params = [x for x in S.chart.parameters if x != a]
        for seed in (3, 4):
            pt = point_on_constraints(q, u, cons, params, u[:3], seed)
            qdd, _ = constrained_coordinate_solution(Ln, q, u, cons, pt)
            for ci in cvals:
                rate = sum(float(ci.diff(q[A]).xreplace(pt)) * float(pt[u[A]]) + float(ci.diff(u[A]).xreplace(pt)) * qdd[A]
                           for A in range(5))
                assert abs(rate) < 1e-9
            assert abs(float(weak.xreplace(pt))) < 1e-9


# --- the class of seed 004 §7.1 ----------------------------------------------------------------------

def member(A, masses=None, functions=()):
    spec = crampin_mestdag_class(A, masses, functions=functions)
    S = System.from_spec(spec)
    k = len(spec.coordinates) - 2
    gens = [[0, 0] + [1 if i == j else 0 for i in range(k)] for j in range(k)]
    return S, ChaplyginSystem(S.lagrangian, S.constraints, gens)


def test_class_residual_is_sum_m_A_A_prime():
    S, ch = member(["A1(r2)", "A2(r2)"], functions=["A1", "A2"])
    r2 = S.chart.coordinates[1]
    P = {p.name: p for p in S.chart.parameters}
    A1, A2 = (sp.Function(n, real=True)(r2) for n in ("A1", "A2"))
    s = P["m1"] * A1 * A1.diff(r2) + P["m2"] * A2 * A2.diff(r2)
    v1, v2 = ch.nonholonomic.free_velocities
    res = ch.chaplygin_condition()
    assert same(res[0], -s * v1 * v2) and same(res[1], s * v1**2)
    assert ch.consistency().holds is None


@pytest.mark.parametrize("A, masses, consistent", [
    (["R*cos(r2)", "R*sin(r2)"], ["m", "m"], True),       # vertical rolling disk
    (["tan(r2)"], None, False),                            # knife edge
    (["r2"], None, False),                                 # nonholonomic particle
    (["cos(r2)/sqrt(m1)", "sin(r2)/sqrt(m2)"], None, True),  # Σ m A A' = 0 with unequal masses
])
def test_class_consistency_iff_sum_m_A_A_prime_vanishes(A, masses, consistent):
    S, ch = member(A, masses)
    assert ch.consistency().holds is consistent
    assert ch.check_variational_lagrangian().equals_nonholonomic is consistent


# --- Prop. 5 and 6 against coordinate computations ----------------------------------------------------

def coordinate_variational_lagrangian(S, generators):
    """L̂ = L − p_a ϑ^a in coordinates: p_a = Ẽ_a^A ∂L/∂u^A, ϑ = (ω(Ẽ))^{-1} ω(u)."""
    u = S.chart.velocities
    L = S.lagrangian.natural_expr()
    Emat = sp.Matrix(generators)
    omega = sp.Matrix(list(S.constraints)).jacobian(u)
    theta = (omega * Emat.T).inv() * omega * sp.Matrix(u)
    p = [sum(Emat[a, A] * L.diff(u[A]) for A in range(len(u))) for a in range(Emat.rows)]
    return L - sum(pa * th for pa, th in zip(p, theta))


@pytest.mark.parametrize("name, generators, equal", [
    ("vertical_rolling_disk", [[1, 0, 0, 0], [0, 1, 0, 0]], True),
    ("nonholonomic_particle", [[0, 0, 1]], False),
])
def test_prop5_prop6_against_coordinate_euler_lagrange(name, generators, equal):
    S = System.load(name)
    ch = ChaplyginSystem(S.lagrangian, S.constraints, generators)
    check = ch.check_variational_lagrangian()
    assert check.invariant and check.mixed_block_vanishes and check.regular_D and check.regular_g
    assert check.tangent_to_C and check.equals_nonholonomic is equal
    q, u = S.chart.coordinates, S.chart.velocities
    Lhat = coordinate_variational_lagrangian(S, generators)
    assert same(check.lagrangian.natural_expr(), Lhat)
    field = check.lagrangian.euler_lagrange_field().natural_accelerations()
    cons = list(S.constraints)
    dep = [u[A] for A in range(len(q)) if any(g[A] != 0 for g in generators)]
    Ln = S.lagrangian.natural_expr()
    for seed in (1, 2, 3):
        pt = point_on_constraints(q, u, cons, S.chart.parameters, dep, seed)
        el = coordinate_accelerations(Lhat, q, u, pt)
        lib = np.array([float(field[qA].xreplace(pt)) for qA in q])
        np.testing.assert_allclose(lib, el, rtol=1e-9, atol=1e-10)
        # tangent to C: the constraints' time derivatives vanish along the coordinate EL field of L̂
        for phi in cons:
            rate = sum(float(phi.diff(q[A]).xreplace(pt)) * float(pt[u[A]]) + float(phi.diff(u[A]).xreplace(pt)) * el[A]
                       for A in range(len(q)))
            assert abs(rate) < 1e-9
        nh_qdd, _ = constrained_coordinate_solution(Ln, q, u, cons, pt)
        assert np.allclose(el, nh_qdd, atol=1e-9) is equal


def test_prop6_difference_is_g_inverse_p_R_v():
    """On C, g_αβ (Γ̂^β − Γ_nh^β) = p_a R^a_αβ v^β (derived in the module docstring)."""
    S = System.load("nonholonomic_particle")
    ch = ChaplyginSystem(S.lagrangian, S.constraints, [[0, 0, 1]])
    check = ch.check_variational_lagrangian()
    g = ch.nonholonomic.hessian_D
    lhs = g * sp.Matrix(check.difference)
    for l, r in zip(lhs, ch.chaplygin_condition()):
        assert same(l, r)


# --- system files and the report ------------------------------------------------------------------

@pytest.mark.parametrize("name, holds", [("vertical_rolling_disk", True), ("knife_edge", False),
                                         ("nonholonomic_particle", False)])
def test_bundled_symmetry_tables_and_report(name, holds):
    from anholo.io.report import analyze

    S = System.load(name)
    ch = S.chaplygin()
    assert ch.consistency().holds is holds
    out = analyze(S).to_dict()
    assert out["chaplygin"]["minus_p"]["holds"] is holds
    assert out["chaplygin"]["variational_lagrangian"]["tangent_to_C"] is True
    assert out["consistency"]["strong"] is (True if holds else out["consistency"]["strong"])
    if holds:
        assert out["consistency"]["section"] == "-p"


def test_section_in_another_adapted_frame_is_the_same_covector():
    """σ' = σ T with T^a_b = θ^a(X'_b): the multiplier covectors σ_a θ^a and σ'_b θ'^b agree on C."""
    S = System.load("knife_edge")
    ch, nh = S.chaplygin(), S.nonholonomic(dependent=["x"])   # complement d/dx instead of d/dy
    assert ch.frame.vectors != nh.frame.vectors
    sigma = ch.momentum_section()
    sigma2 = ch.section_in(nh, sigma)
    cov = sp.Matrix([list(sigma)]) * ch.frame.coframe[ch.m:, :]
    cov2 = sp.Matrix([list(sigma2)]) * nh.frame.coframe[nh.m:, :]
    # evaluate both on the same velocity of D (natural components)
    u = S.chart.velocities
    to_u1 = {v: ch.nonholonomic.to_natural(v) for v in ch.nonholonomic.free_velocities}
    to_u2 = {v: nh.to_natural(v) for v in nh.free_velocities}
    x, y, th = S.chart.coordinates
    on_D = {u[1]: sp.tan(th) * u[0]}                    # ẏ = tanθ ẋ
    for A in range(3):
        assert same(cov[A].xreplace(to_u1).xreplace(on_D), cov2[A].xreplace(to_u2).xreplace(on_D))

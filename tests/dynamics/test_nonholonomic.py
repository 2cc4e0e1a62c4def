"""Nonholonomic (Lagrange–d'Alembert) dynamics, Γ_nh and multipliers (THEORY §4, Prop. 2 of seed 004).

Oracles: the coordinate multiplier method built by hand (tests/oracles.py,
``constrained_coordinate_solution``: [[W, −Aᵀ], [A, 0]] [q̈; λ] = [F; −(∂φ/∂q)u]),
sympy.physics.mechanics.LagrangesMethod with ``nonhol_coneqs`` (same file), the
published results of THEORY §9–10 (nonholonomic particle, vertical disk, carriage,
sphere on a turntable), and numerical integration with scipy (energy, constraints).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from oracles import (
    concrete,
    constrained_coordinate_solution,
    dependent_velocities,
    function_stand_ins,
    lagranges_method_solution,
    point_on_constraints,
    values,
)
from scipy.integrate import solve_ivp

from anholo import (
    Chart,
    ConstraintError,
    DependentConstraintsError,
    Frame,
    FrameNotAdaptedError,
    IrregularLagrangianError,
    Lagrangian,
    LinearConstraints,
    NonholonomicSystem,
    NonlinearConstraintError,
    UnknownSymbolError,
    compare_dynamics,
)
from anholo.examples import example_names, n_trailer, resolve_system, crampin_mestdag_class
from anholo.system import System

CONSTRAINED = [name for name in example_names(large=False) if resolve_system(name).constraints
               and resolve_system(name).time is None  # time-dependent ones: tests/test_time_dependent.py
               and not resolve_system(name).has_loads  # forces: tests/dynamics/test_forces.py
               and System.load(name).kinematic_constraints().is_linear]  # nonlinear ones: test_chetaev.py
SEED004_A = [["R*cos(r2)", "R*sin(r2)"], ["tan(r2)"], ["r2"], ["r2^2", "sin(r2)", "c*exp(r2/2)"]]


def same(a, b) -> bool:
    return sp.simplify(a - b) == 0


def spec_of(key):
    if isinstance(key, tuple):
        return crampin_mestdag_class(list(key))
    return resolve_system(key)


def assert_matches_oracle(spec, field, seeds=(1, 2), oracle=constrained_coordinate_solution):
    """Natural accelerations and coordinate multipliers equal the oracle's at random points of C."""
    q, u = spec.coordinates, spec.velocities
    L, cons = concrete(spec)
    repl = function_stand_ins(spec)
    acc = field.natural_accelerations()
    lam = field.coordinate_multipliers()
    got_exprs = [acc[a] for a in q] + list(lam)
    if repl:
        got_exprs = [sp.sympify(e).subs(repl).doit() for e in got_exprs]
    dep = dependent_velocities(spec, cons)
    for seed in seeds:
        pt = point_on_constraints(q, u, cons, spec.parameters, dep, seed, low=-1.0, high=1.0)
        qdd, mult = oracle(L, q, u, cons, pt)
        got = values(got_exprs, pt)
        np.testing.assert_allclose(got.real, np.concatenate([qdd, mult]), rtol=1e-8, atol=1e-9)
        assert np.allclose(got.imag, 0)


# --------------------------------------------------------------------------------------
# the catalogue against the coordinate multiplier method
# --------------------------------------------------------------------------------------
CASES = CONSTRAINED + ["n_trailer_1", "n_trailer_2"] + [tuple(A) for A in SEED004_A]


@pytest.mark.parametrize("key", CASES, ids=[str(c) for c in CASES])
def test_catalogue_matches_coordinate_multiplier_method(key):
    spec = spec_of(key)
    field = System.from_spec(spec).nonholonomic().field()
    assert_matches_oracle(spec, field)


@pytest.mark.parametrize("name", ["nonholonomic_particle", "knife_edge", "sphere_on_turntable", "chaplygin_sleigh"])
def test_small_examples_match_lagranges_method(name):
    spec = resolve_system(name)
    field = System.from_spec(spec).nonholonomic().field()
    assert_matches_oracle(spec, field, seeds=(3,), oracle=lagranges_method_solution)


@pytest.mark.slow
def test_n_trailer_3_matches_coordinate_multiplier_method():
    spec = n_trailer(3)
    assert_matches_oracle(spec, System.from_spec(spec).nonholonomic().field(), seeds=(4,))


# --------------------------------------------------------------------------------------
# random systems on R^4: random constraints, frames and Lagrangians
# --------------------------------------------------------------------------------------
def random_problem(seed, k):
    rng = random.Random(seed)
    q = sp.symbols("q1:5", real=True)
    chart = Chart(q)
    u = chart.velocities
    pick = lambda: rng.choice([q[rng.randrange(4)], sp.sin(q[rng.randrange(4)]), 1, 2, -1, 0])  # noqa: E731
    forms = [[pick() for _ in range(4)] for _ in range(k)]
    for a in range(k):  # keep the forms generically independent: the block of u4, u3, .. is triangular
        forms[a][3 - a] = 2 + q[a] ** 2
        for b in range(a + 1, k):
            forms[a][3 - b] = 0
    affine = [rng.choice([0, q[1], sp.cos(q[0])]) for _ in range(k)]
    cons = [sum(w * ui for w, ui in zip(row, u)) + c for row, c in zip(forms, affine)]
    L = sum((1 + q[(A + 1) % 4] ** 2 / 2) * u[A] ** 2 for A in range(4)) / 2
    L += sp.Rational(1, 3) * u[0] * u[1] * sp.cos(q[2]) + q[3] * u[2]  # cross and gyroscopic terms
    L -= q[0] ** 2 / 2 + sp.sin(q[1]) * q[2]
    return chart, L, cons


@pytest.mark.parametrize("seed,k", [(1, 1), (2, 1), (3, 2), (4, 2), (5, 2)])
def test_random_constrained_systems_match_oracle(seed, k):
    chart, L, cons = random_problem(seed, k)
    nh = NonholonomicSystem(Lagrangian(Frame.coordinate(chart), L), cons)
    field = nh.field()
    q, u = chart.coordinates, chart.velocities
    dep = [u[3 - a] for a in range(k)]
    for s in (seed, seed + 10):
        pt = point_on_constraints(q, u, cons, [], dep, s, low=-0.8, high=0.8)
        qdd, lam = constrained_coordinate_solution(L, q, u, cons, pt)
        acc = field.natural_accelerations()
        got = values([acc[a] for a in q] + list(field.coordinate_multipliers()), pt)
        np.testing.assert_allclose(got.real, np.concatenate([qdd, lam]), rtol=1e-8, atol=1e-9)


# --------------------------------------------------------------------------------------
# published results (THEORY §9, §10)
# --------------------------------------------------------------------------------------
def test_nonholonomic_particle_published_field_and_multiplier():
    nh = System.load("nonholonomic_particle").nonholonomic()
    x, y, z = nh.frame.chart.coordinates
    v1, v2, v3 = nh.bundle.quasi_velocities
    f = nh.field()
    assert same(f.accelerations[0], -y * v1 * v2 / (1 + y**2))
    assert f.accelerations[1] == 0
    assert same(f.multipliers[0], v1 * v2 / (1 + y**2))
    assert not nh.distribution_is_integrable()
    assert nh.curvature() == {(2, 0, 1): -1}  # [X1, X2] = −∂z: R^3_12 = −1


def test_vertical_rolling_disk_closed_form():
    nh = System.load("vertical_rolling_disk").nonholonomic()
    x, y, theta, phi = nh.frame.chart.coordinates
    f = nh.field()
    acc = f.natural_accelerations(natural=False)
    qd = dict(zip(nh.frame.chart.coordinates, f.velocity_field()))
    R = sp.Symbol("R", positive=True)
    # heading and rolling rates constant; the contact point turns with the heading
    assert same(acc[theta], 0) and same(acc[phi], 0)
    assert same(acc[x], -R * sp.sin(theta) * qd[theta] * qd[phi])
    assert same(acc[y], R * sp.cos(theta) * qd[theta] * qd[phi])


def test_two_wheeled_carriage_structure_and_accelerations_proportional_to_a():
    S = System.load("two_wheeled_carriage")
    nh = S.nonholonomic()
    assert nh.frame == S.frame  # the file's frame is adapted: X1, X2 span D
    x, y, theta, psi1, psi2 = S.chart.coordinates
    R, c, a = (sp.Symbol(s, positive=True) for s in ("R", "c", "a"))
    expected = {(2, 0, 1): R**2 * sp.sin(theta) / (2 * c), (3, 0, 1): -(R**2) * sp.cos(theta) / (2 * c)}
    got = {key: val for key, val in nh.curvature().items()}
    assert set(got) == set(expected) and all(same(got[k], expected[k]) for k in expected)
    f = nh.field()
    for G in f.accelerations:
        assert G != 0 and same(G.subs(a, 0), 0)  # constant wheel speeds for a = 0
        assert same(G.diff(a, 2).subs(a, 0), 0)  # Γ = a·(…) + O(a³): vanishes linearly in a


def test_sphere_on_turntable_centre_circles_at_the_corrected_rate():
    """THEORY §10: ẍ = −μ ẏ, ÿ = μ ẋ with μ = k²Ω/(a²+k²) (seed 002's (2.17) has the wrong sign)."""
    nh = System.load("sphere_on_turntable").nonholonomic()
    assert nh.constraints.is_affine
    x, y = nh.frame.chart.coordinates[:2]
    k, Om, a = (sp.Symbol(s, positive=True) for s in ("k", "Omega", "a"))
    mu = k**2 * Om / (a**2 + k**2)
    f = nh.field()
    acc = f.natural_accelerations(natural=False)
    qd = dict(zip(nh.frame.chart.coordinates, f.velocity_field()))
    assert same(acc[x], -mu * qd[y])
    assert same(acc[y], mu * qd[x])
    assert not same(acc[x], mu * qd[y])  # the printed sign of seed 002 is not what anholo gives


# --------------------------------------------------------------------------------------
# frame independence (THEORY §4): Γ_nh depends only on D
# --------------------------------------------------------------------------------------
def random_invertible(rng, size, q):
    while True:
        P = sp.Matrix(size, size, lambda i, j: rng.choice([0, 1, -1, 2, q[rng.randrange(len(q))]]))
        if P.det() != 0 and sp.Matrix(P.subs({s: 0.37 for s in q if s.is_Symbol})).det() != 0:
            return P


@pytest.mark.parametrize("name,seed", [("nonholonomic_particle", 1), ("knife_edge", 2),
                                       ("two_wheeled_carriage", 3), ("sphere_on_turntable", 4),
                                       ("chaplygin_sleigh", 5)])
def test_field_is_independent_of_the_adapted_frame(name, seed):
    S = System.load(name)
    nh = S.nonholonomic()
    rng = random.Random(seed)
    n, m, q = nh.n, nh.m, nh.frame.chart.coordinates
    # new basis of D and new complement mixed with D; q-dependent where that stays cheap
    variable = q[:2] if n <= 3 else [sp.Integer(3)]
    P = random_invertible(rng, m, variable)
    Q = random_invertible(rng, n - m, variable[:1])
    S_mix = sp.Matrix(n - m, m, lambda i, j: rng.choice([0, 1, variable[0]]))
    X = nh.frame.vectors
    rows = [sum((P[j, i] * X.row(j) for j in range(m)), sp.zeros(1, n)) for i in range(m)]
    rows += [sum((Q[j, i] * X.row(m + j) for j in range(n - m)), sp.zeros(1, n))
             + sum((S_mix[i, j] * X.row(j) for j in range(m)), sp.zeros(1, n)) for i in range(n - m)]
    other = Frame(nh.frame.chart, [list(r) for r in rows])
    nh2 = NonholonomicSystem(S.lagrangian, nh.constraints, frame=other)
    result = compare_dynamics(nh.field(), nh2.field())
    assert result.agree, result.max_deviation
    # the multipliers of the constraints as written do not depend on the frame either
    lam1, lam2 = nh.field().coordinate_multipliers(), nh2.field().coordinate_multipliers()
    u_on_C = dict(zip(nh.frame.chart.velocities, nh.field().velocity_field()))
    pts = [{s: sp.Float(rng.uniform(0.3, 1.2), 20) for s in sp.Tuple(*lam1, *lam2).free_symbols | set(q)
            | set(nh.free_velocities)} for _ in range(2)]
    for l1, l2 in zip(lam1, lam2):
        diff = l2.xreplace(u_on_C) - l1.xreplace(u_on_C)
        for pt in pts:
            assert abs(values([diff], pt)[0]) < 1e-9


def test_compare_dynamics_detects_a_different_distribution():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 + chart.coordinates[0] * zd)
    f1 = NonholonomicSystem(L, ["z_dot - y*x_dot"]).field()
    f2 = NonholonomicSystem(L, ["z_dot - x*y_dot"]).field()
    assert not compare_dynamics(f1, f2).agree


def test_distribution_given_by_vector_fields_or_forms_gives_the_same_field():
    chart = Chart("x y z")
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - z**2 / 2)
    by_fields = LinearConstraints.from_distribution(chart, [[1, 0, y], [0, 1, 0]])
    by_forms = LinearConstraints.from_forms(chart, [[-y, 0, 1]])
    nh1, nh2 = NonholonomicSystem(L, by_fields), NonholonomicSystem(L, by_forms)
    assert nh1.frame.vector(0).components == (1, 0, y)  # the given fields come first
    assert compare_dynamics(nh1.field(), nh2.field()).agree


# --------------------------------------------------------------------------------------
# constrained Lagrangian, X̃_α and the Hamel form
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["nonholonomic_particle", "sphere_on_turntable", "chaplygin_sleigh"])
def test_constrained_hamel_form_and_tilde_fields(name):
    nh = System.load(name).nonholonomic()
    f = nh.field()
    vdot = nh.bundle.quasi_velocity_rates
    sub = dict(zip(vdot, f.accelerations))
    for eq in nh.constrained_hamel_equations():
        assert same(eq.lhs.xreplace(sub) - eq.rhs, 0)
    v = nh.bundle.quasi_velocities
    for Xt in nh.tilde_fields():  # tangent to C: X̃_α(v^a − β^a) = 0 on C
        for a, beta in enumerate(nh.constrained_values):
            assert same(nh.restrict(Xt(v[nh.m + a] - beta)), 0)
    assert nh.constrained_lagrangian.free_symbols.isdisjoint(v[nh.m:])


# --------------------------------------------------------------------------------------
# numerical sanity: integrate Γ_nh in (q, v^α)
# --------------------------------------------------------------------------------------
def integrate(nh, values_, y0, t_end):
    f = nh.field()
    q, va = nh.frame.chart.coordinates, nh.free_velocities
    state = list(q) + list(va)
    rhs = [e.xreplace(values_) for e in list(f.velocity_field()) + list(f.accelerations)]
    fun = sp.lambdify(state, rhs, modules="numpy", cse=True)
    sol = solve_ivp(lambda t, s: fun(*s), (0, t_end), y0, method="DOP853", rtol=1e-11, atol=1e-12, dense_output=True)
    assert sol.success
    return sol, state


@pytest.mark.parametrize("name,t_end", [("nonholonomic_particle", 20), ("two_wheeled_carriage", 20),
                                        ("vertical_rolling_disk", 20), ("knife_edge", 5)])
def test_integration_conserves_energy_and_keeps_constraints(name, t_end):
    S = System.load(name)
    nh = S.nonholonomic()
    vals = dict(S.values)
    rng = random.Random(7)
    y0 = [rng.uniform(-1, 1) for _ in range(nh.n + nh.m)]
    sol, state = integrate(nh, vals, y0, t_end)
    L_nat = S.lagrangian.natural_expr().xreplace(vals)
    u = S.chart.velocities
    energy_nat = sum(ui * L_nat.diff(ui) for ui in u) - L_nat
    u_on_C = [e.xreplace(vals) for e in nh.field().velocity_field()]
    E = sp.lambdify(state, energy_nat.xreplace(dict(zip(u, u_on_C))), "numpy")
    phis = sp.lambdify(state, [c.xreplace(vals).xreplace(dict(zip(u, u_on_C))) for c in S.constraints], "numpy")
    ts = np.linspace(0, t_end, 50)
    Es = np.array([E(*sol.sol(t)) for t in ts])
    assert np.max(np.abs(Es - Es[0])) <= 1e-8 * max(1.0, abs(Es[0]))
    residuals = np.array([phis(*sol.sol(t)) for t in ts])
    assert np.max(np.abs(residuals)) < 1e-12  # exact by construction (states in C)


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------
def particle():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    return chart, Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)


def test_dependent_constraints_raise():
    chart, L = particle()
    with pytest.raises(DependentConstraintsError, match="remove the redundant"):
        NonholonomicSystem(L, ["z_dot - y*x_dot", "2*z_dot - 2*y*x_dot"])


def test_nonlinear_constraint_raises():
    chart, L = particle()
    with pytest.raises(NonlinearConstraintError, match="not linear in the velocities.*Chetaev"):
        NonholonomicSystem(L, ["z_dot - x_dot^2"])


def test_position_constraint_raises():
    chart, L = particle()
    with pytest.raises(ConstraintError, match="no velocity terms"):
        NonholonomicSystem(L, ["x - y"])


def test_too_many_constraints_raise():
    chart, L = particle()
    with pytest.raises(DependentConstraintsError, match="at most 2"):
        NonholonomicSystem(L, ["x_dot", "y_dot", "z_dot"])


def test_lagrangian_not_regular_with_respect_to_D_raises():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), zd**2 / 2 + xd**2 / 2)  # no kinetic energy along ∂y ∈ D
    nh = NonholonomicSystem(L, ["z_dot - y*x_dot"])
    assert not nh.is_regular()
    with pytest.raises(IrregularLagrangianError, match="not regular with respect to the constraint distribution"):
        nh.field()


def test_frame_not_adapted_raises():
    chart, L = particle()
    with pytest.raises(FrameNotAdaptedError, match="X1 violates constraint 0"):
        NonholonomicSystem(L, ["z_dot - y*x_dot"], frame=Frame.coordinate(chart))


def test_unknown_name_in_a_constraint_string_is_reported():
    chart, L = particle()
    with pytest.raises(UnknownSymbolError) as info:
        NonholonomicSystem(L, ["z_dot - w*x_dot"])
    assert "w" in str(info.value) and "constraints[0]" in str(info.value)

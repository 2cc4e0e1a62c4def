"""Chetaev dynamics for kinematic constraints (THEORY §8; seed 000 §2.3), frame-wise and in Maggi form.

Oracles: the coordinate multiplier method built by hand for nonlinear constraints
(tests/oracles.py, ``nonlinear_constrained_solution``: [[W, −βᵀ], [J, 0]] [q̈; λ] =
[F; −(∂φ/∂q)u − ∂φ/∂t]); for linear constraints also ``constrained_coordinate_solution``
and anholo's independent Γ_nh (THEORY §4); the hand solution of the counterexample
``φ = ż − ẋ² − ẏ`` (λ = g/(2 + 4ẋ²)); and numerical integration with scipy
(constraint residuals, energy, the drift E − ẋ²/4).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import (
    concrete,
    constrained_coordinate_solution,
    dependent_velocities,
    function_stand_ins,
    nonlinear_constrained_solution,
    point_on_constraints,
    point_on_nonlinear_constraints,
    values,
)
from scipy.integrate import solve_ivp

from anholo import (
    Chart,
    ConstraintError,
    DependentConstraintsError,
    DimensionError,
    Frame,
    IrregularLagrangianError,
    Lagrangian,
    NonlinearConstraintError,
    UnsolvableConstraintsError,
)
from anholo.dynamics.chetaev import ChetaevSystem
from anholo.constraints.displacements import (
    ChetaevDisplacements,
    HolonomicDisplacements,
    LinearDisplacements,
    MatrixDisplacements,
)
from anholo.constraints.kinematic import CartesianPullback, KinematicConstraints
from anholo.examples import example_names, n_trailer, resolve_system
from anholo.system import System

g, c, k_damp = sp.symbols("g c k", positive=True)
t = sp.Symbol("t", real=True)


def particle(params=(g,), potential=None):
    chart = Chart("x y z", parameters=list(params))
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    V = g * z if potential is None else potential
    return chart, Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - V)


def assert_matches_hand_oracle(system, seeds=(1, 2, 3), dependent=None, extra=(), rtol=1e-8):
    """Natural accelerations and multipliers of the Chetaev field equal the hand-built oracle at points of C."""
    chart = system.chart
    q, u = chart.coordinates, chart.velocities
    field = system.field()
    acc = field.natural_accelerations()
    got_exprs = [acc[a] for a in q] + list(field.natural_multipliers())
    L = system.lagrangian.natural_expr()
    cons = system.constraints.expressions
    dep = [u[A] for A in (system.constraints.dependent if dependent is None else dependent)]
    beta = None if isinstance(system.displacements, ChetaevDisplacements) else system.beta
    for seed in seeds:
        pt = point_on_nonlinear_constraints(q, u, cons, chart.parameters, dep, seed, extra=extra)
        qdd, lam = nonlinear_constrained_solution(L, q, u, cons, pt, forces=system.forces, beta=beta,
                                                  time=system.time)
        got = values(got_exprs, pt)
        np.testing.assert_allclose(got.real, np.concatenate([qdd, lam]), rtol=rtol, atol=1e-9)


# --------------------------------------------------------------------------------------
# linear constraints: Chetaev = Lagrange–d'Alembert = Γ_nh across the catalogue
# --------------------------------------------------------------------------------------

LINEAR = [name for name in example_names(large=False)
          if resolve_system(name).constraints and resolve_system(name).time is None
          and not resolve_system(name).has_loads  # forces: tests/dynamics/test_forces.py
          and System.load(name).kinematic_constraints().is_linear]


# time-dependent constraints (rotating_knife_edge) have their own oracle: tests/test_time_dependent.py
NONLINEAR = [name for name in example_names(large=False) if resolve_system(name).constraints and name not in LINEAR
             and resolve_system(name).time is None and not resolve_system(name).has_loads]


@pytest.mark.parametrize("name", NONLINEAR)
def test_bundled_nonlinear_examples_match_hand_oracle(name):
    assert_matches_hand_oracle(System.load(name).chetaev(), seeds=(1, 2))


@pytest.mark.parametrize("name", LINEAR + ["n_trailer_1"])
def test_linear_catalogue_chetaev_equals_nonholonomic_and_oracle(name):
    spec = n_trailer(1) if name == "n_trailer_1" else resolve_system(name)
    S = System.from_spec(spec)
    field = ChetaevSystem(S.lagrangian, S.constraints).field()  # in the file's frame
    nh = S.nonholonomic().field()
    q, u = spec.coordinates, spec.velocities
    acc, acc_nh = field.natural_accelerations(), nh.natural_accelerations()
    exprs = [acc[a] for a in q] + list(field.natural_multipliers())
    exprs_nh = [acc_nh[a] for a in q] + list(nh.coordinate_multipliers())
    repl = function_stand_ins(spec)
    if repl:
        exprs = [sp.sympify(e).subs(repl).doit() for e in exprs]
        exprs_nh = [sp.sympify(e).subs(repl).doit() for e in exprs_nh]
    L, cons = concrete(spec)
    dep = dependent_velocities(spec, cons)
    for seed in (4, 5):
        pt = point_on_constraints(q, u, cons, spec.parameters, dep, seed, low=-1.0, high=1.0)
        qdd, lam = constrained_coordinate_solution(L, q, u, cons, pt)
        np.testing.assert_allclose(values(exprs, pt).real, np.concatenate([qdd, lam]), rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(values(exprs, pt).real, values(exprs_nh, pt).real, rtol=1e-8, atol=1e-9)


def test_linear_displacements_equal_chetaev_and_reject_nonlinear():
    chart, L = particle()
    lin = ChetaevSystem(L, ["z_dot - y*x_dot"], displacements=LinearDisplacements())
    assert_matches_hand_oracle(lin)
    with pytest.raises(NonlinearConstraintError, match="affine in the velocities"):
        ChetaevSystem(L, ["z_dot - x_dot^2"], displacements=LinearDisplacements()).field()


# --------------------------------------------------------------------------------------
# nonlinear constraints: multiplier form = Maggi form = hand-built oracle
# --------------------------------------------------------------------------------------


def test_counterexample_closed_form():
    """φ = ż − ẋ² − ẏ: by hand ẍ = −2λẋ, ÿ = −λ, z̈ + g = λ and ż̈ = 2ẋẍ + ÿ give λ = g/(2 + 4ẋ²)."""
    chart, L = particle()
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    field = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"]).field()
    lam = g / (2 + 4 * xd**2)
    acc = field.natural_accelerations()
    assert sp.simplify(field.natural_multipliers()[0] - lam) == 0
    for expr, expected in ((acc[x], -2 * lam * xd), (acc[y], -lam), (acc[z], lam - g)):
        assert sp.simplify(expr - expected) == 0


NONLINEAR_CASES = {
    "counterexample": (lambda: particle(), ["z_dot - x_dot^2 - y_dot"]),
    "appell_hamel_square": (lambda: particle((g, c)), ["z_dot^2 - c^2*(x_dot^2 + y_dot^2)"]),
    "appell_hamel_root": (lambda: particle((g, c)), ["z_dot - c*sqrt(x_dot^2 + y_dot^2)"]),
    "quadratic_in_positions": (lambda: particle(), ["x*z_dot - y*x_dot^2 - x_dot*y_dot"]),
}


@pytest.mark.parametrize("case", sorted(NONLINEAR_CASES))
def test_nonlinear_multiplier_form_matches_oracle_and_maggi(case):
    make, cons = NONLINEAR_CASES[case]
    chart, L = make()
    S = ChetaevSystem(L, cons)
    assert_matches_hand_oracle(S)
    # Maggi form on C by implicit differentiation, and on each explicit branch
    field_acc = S.field().natural_accelerations()
    maggi = S.maggi()
    m_acc = maggi.accelerations()
    q, u = chart.coordinates, chart.velocities
    dep = [u[A] for A in maggi.dependent]
    for seed in (7, 8):
        pt = point_on_nonlinear_constraints(q, u, S.constraints.expressions, chart.parameters, dep, seed)
        np.testing.assert_allclose(values([m_acc[a] for a in q], pt).real,
                                   values([field_acc[a] for a in q], pt).real, rtol=1e-9, atol=1e-10)
    for b, branch in enumerate(maggi.explicit_solutions):
        red = maggi.reduced_accelerations(b)
        for seed in (9, 10):
            pt = point_on_nonlinear_constraints(q, u, [], chart.parameters, [], seed)
            for d in dep:
                pt[d] = sp.Float(complex(sp.sympify(branch[d]).xreplace(pt).evalf(30)).real, 30)
            np.testing.assert_allclose(values([red[q[r]] for r in maggi.independent], pt).real,
                                       values([field_acc[q[r]] for r in maggi.independent], pt).real,
                                       rtol=1e-9, atol=1e-10)


def test_appell_hamel_square_and_root_forms_give_the_same_motion():
    """ż² = c²(ẋ² + ẏ²) and ż = c√(ẋ² + ẏ²) have the same Chetaev displacements on the branch ż > 0."""
    chart, L = particle((g, c))
    sq = ChetaevSystem(L, ["z_dot^2 - c^2*(x_dot^2 + y_dot^2)"]).field().natural_accelerations()
    rt = ChetaevSystem(L, ["z_dot - c*sqrt(x_dot^2 + y_dot^2)"]).field().natural_accelerations()
    xd, yd, zd = chart.velocities
    for seed in (1, 2):
        pt = point_on_nonlinear_constraints(chart.coordinates, chart.velocities, [], chart.parameters, [], seed)
        pt[zd] = sp.Float(sp.sqrt(pt[c] ** 2 * (pt[xd] ** 2 + pt[yd] ** 2)), 30)
        q = chart.coordinates
        np.testing.assert_allclose(values([sq[a] for a in q], pt).real, values([rt[a] for a in q], pt).real,
                                   rtol=1e-10)


def test_dependent_velocity_choice_does_not_change_the_maggi_accelerations():
    chart, L = particle()
    S = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"])
    a_z, a_y = S.maggi(["z"]).accelerations(), S.maggi(["y_dot"]).accelerations()
    for e1, e2 in zip(a_z.values(), a_y.values()):
        assert sp.simplify((e1 - e2).xreplace({chart.velocities[2]: chart.velocities[0] ** 2 + chart.velocities[1]})) == 0


def test_time_dependent_constraint_and_forces_match_oracle():
    chart, L = particle((g, k_damp))
    C = KinematicConstraints(chart, ["z_dot - t*x_dot^2 - sin(t)*y_dot"], time=t)
    forces = [-k_damp * u for u in chart.velocities]
    S = ChetaevSystem(L, C, forces=forces)
    assert_matches_hand_oracle(S, extra=(t,))
    maggi = S.maggi().accelerations()
    acc = S.field().natural_accelerations()
    q, u = chart.coordinates, chart.velocities
    pt = point_on_nonlinear_constraints(q, u, C.expressions, chart.parameters, [u[2]], 3, extra=(t,))
    np.testing.assert_allclose(values([maggi[a] for a in q], pt).real, values([acc[a] for a in q], pt).real,
                               rtol=1e-9)


def test_user_displacements_match_oracle_and_differ_from_chetaev():
    """A user matrix β (seed 000 eq. 20) that is not ∂φ/∂u changes the motion; the oracle agrees."""
    chart, L = particle()
    beta = [[-1, -1, 1]]  # δz = δx + δy instead of δz = 2ẋ δx + δy
    S = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"], displacements=MatrixDisplacements(beta))
    assert_matches_hand_oracle(S)
    acc_beta = S.field().natural_accelerations()
    acc_chetaev = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"]).field().natural_accelerations()
    x = chart.coordinates[0]
    assert sp.simplify(acc_beta[x] - acc_chetaev[x]) != 0
    maggi = S.maggi().accelerations()
    q, u = chart.coordinates, chart.velocities
    pt = point_on_nonlinear_constraints(q, u, S.constraints.expressions, chart.parameters, [u[2]], 5)
    np.testing.assert_allclose(values([maggi[a] for a in q], pt).real, values([acc_beta[a] for a in q], pt).real,
                               rtol=1e-9)


def test_holonomic_displacements_for_a_differentiated_position_constraint():
    """z = x y as φ = ḟ: holonomic displacements ∂f/∂q coincide with the Chetaev ones (seed 000 eq. 13–14)."""
    chart, L = particle()
    x, y, z = chart.coordinates
    f = z - x * y
    C = KinematicConstraints.from_positions(chart, [f])
    holo = ChetaevSystem(L, C, displacements=HolonomicDisplacements((f,))).field().natural_accelerations()
    chet = ChetaevSystem(L, C).field().natural_accelerations()
    assert all(sp.simplify(holo[a] - chet[a]) == 0 for a in chart.coordinates)
    assert_matches_hand_oracle(ChetaevSystem(L, C, displacements=HolonomicDisplacements((f,))))


# --------------------------------------------------------------------------------------
# frame-wise: the Chetaev field in a non-coordinate frame
# --------------------------------------------------------------------------------------


def test_chetaev_field_is_frame_independent_for_nonlinear_constraints():
    """Polar frame X1 = ∂r, X2 = (1/r)∂θ on (r, θ, z), constraint ż² = c²(ṙ² + r²θ̇²) (Appell–Hamel in polar)."""
    r, th = sp.symbols("r theta", positive=True)
    z = sp.Symbol("z", real=True)
    chart = Chart([r, th, z], parameters=[g, c])
    rd, thd, zd = chart.velocities
    Lnat = (rd**2 + r**2 * thd**2 + zd**2) / 2 - g * z
    cons = ["z_dot^2 - c^2*(r_dot^2 + r^2*theta_dot^2)"]
    polar = Frame(chart, [[1, 0, 0], [0, 1 / r, 0], [0, 0, 1]])
    f_polar = ChetaevSystem(Lagrangian(polar, Lnat), cons)
    f_coord = ChetaevSystem(Lagrangian(Frame.coordinate(chart), Lnat), cons)
    assert_matches_hand_oracle(f_polar)
    a1, a2 = f_polar.field().natural_accelerations(), f_coord.field().natural_accelerations()
    assert all(sp.simplify(a1[q] - a2[q]) == 0 for q in chart.coordinates)


def test_cartesian_pullback_of_a_speed_constraint():
    """A particle in polar coordinates whose Cartesian speed is fixed by ż = c|ṙ_xy| (pulled back through r(q))."""
    r, th = sp.symbols("r theta", positive=True)
    z = sp.Symbol("z", real=True)
    X, Y, Z = sp.symbols("X Y Z", real=True)
    chart = Chart([r, th, z], parameters=[g, c])
    P = CartesianPullback(chart, {X: r * sp.cos(th), Y: r * sp.sin(th), Z: z})
    C = P.constraints(["Z_dot^2 - c^2*(X_dot^2 + Y_dot^2)"])
    rd, thd, zd = chart.velocities
    assert sp.simplify(C.expressions[0] - (zd**2 - c**2 * (rd**2 + r**2 * thd**2))) == 0
    T = P.kinetic_energy({X: 1, Y: 1, Z: 1})
    assert sp.simplify(T - (rd**2 + r**2 * thd**2 + zd**2) / 2) == 0
    assert_matches_hand_oracle(ChetaevSystem(Lagrangian(Frame.coordinate(chart), T - g * z), C))


# --------------------------------------------------------------------------------------
# numerical integration
# --------------------------------------------------------------------------------------


def integrate(field, y0, params, t_end=2.0):
    sysd = field.first_order_system()
    args = list(sysd.state) + list(sysd.parameters)
    rhs = sp.lambdify(args, list(sysd.rhs), "numpy")
    pvals = [params[p] for p in sysd.parameters]
    sol = solve_ivp(lambda _t, y: rhs(*y, *pvals), (0, t_end), y0, rtol=1e-11, atol=1e-12, dense_output=True)
    assert sol.success
    return sysd, sol


def test_integration_counterexample_keeps_phi_and_conserves_E_minus_xdot2_over_4():
    """E = |u|²/2 + g z is not conserved; E − ẋ²/4 is (dE/dt = −λẋ² = d(ẋ²/4)/dt), checked numerically."""
    chart, L = particle()
    field = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"]).field()
    x0 = [0.1, -0.2, 0.3, 0.7, -0.4, 0.7**2 - 0.4]
    sysd, sol = integrate(field, x0, {g: 9.81})
    ts = np.linspace(0, 2.0, 21)
    Y = sol.sol(ts)
    xd, yd, zd = Y[3], Y[4], Y[5]
    phi = zd - xd**2 - yd
    assert np.max(np.abs(phi)) < 1e-8
    E = (xd**2 + yd**2 + zd**2) / 2 + 9.81 * Y[2]
    assert np.ptp(E) > 0.05  # energy drifts
    assert np.max(np.abs((E - xd**2 / 4) - (E[0] - xd[0] ** 2 / 4))) < 1e-7


def test_integration_homogeneous_stationary_constraint_conserves_energy():
    chart, L = particle((g, c))
    field = ChetaevSystem(L, ["z_dot^2 - c^2*(x_dot^2 + y_dot^2)"]).field()
    xd0, yd0, cv = 0.6, -0.3, 0.8
    x0 = [0.0, 0.1, 0.2, xd0, yd0, cv * np.hypot(xd0, yd0)]
    sysd, sol = integrate(field, x0, {g: 9.81, c: cv})
    Y = sol.sol(np.linspace(0, 2.0, 21))
    phi = Y[5] ** 2 - cv**2 * (Y[3] ** 2 + Y[4] ** 2)
    E = (Y[3] ** 2 + Y[4] ** 2 + Y[5] ** 2) / 2 + 9.81 * Y[2]
    assert np.max(np.abs(phi)) < 1e-8
    assert np.max(np.abs(E - E[0])) < 1e-8


def test_reduced_first_order_system_on_C():
    """The Maggi reduction u_dep = α gives a state (q, u_ind) whose solutions match the full field's."""
    chart, L = particle()
    S = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"])
    red = S.maggi().reduced_system()
    assert red.state == chart.coordinates + chart.velocities[:2]
    rhs = sp.lambdify(list(red.state) + list(red.parameters), list(red.rhs), "numpy")
    sol = solve_ivp(lambda _t, y: rhs(*y, 9.81), (0, 1.5), [0.1, -0.2, 0.3, 0.7, -0.4], rtol=1e-11, atol=1e-12)
    _, full = integrate(S.field(), [0.1, -0.2, 0.3, 0.7, -0.4, 0.7**2 - 0.4], {g: 9.81}, t_end=1.5)
    np.testing.assert_allclose(sol.y[:3, -1], full.sol(1.5)[:3], rtol=1e-7, atol=1e-8)


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------


def test_errors():
    chart, L = particle()
    with pytest.raises(ConstraintError, match="contains no velocities"):
        ChetaevSystem(L, ["z - x*y"])
    with pytest.raises(DependentConstraintsError, match="independent"):
        ChetaevSystem(L, ["z_dot - y*x_dot", "2*z_dot - 2*y*x_dot"])
    with pytest.raises(UnsolvableConstraintsError, match="cannot be solved for"):
        ChetaevSystem(L, ["z_dot - x_dot^2"]).maggi(["y"])
    with pytest.raises(DimensionError, match="generalized forces"):
        ChetaevSystem(L, ["z_dot - x_dot^2"], forces=[0, 0])
    with pytest.raises(DependentConstraintsError, match="rank"):
        ChetaevSystem(L, ["z_dot - x_dot^2"], displacements=MatrixDisplacements([[0, 0, 0]])).field()
    with pytest.raises(DimensionError, match="dependent velocities"):
        ChetaevSystem(L, ["z_dot - x_dot^2"]).maggi(["x", "y"])
    with pytest.raises(ConstraintError, match="real points"):
        KinematicConstraints(chart, ["x_dot^2 + 1"])
    degenerate = Lagrangian(Frame.coordinate(chart), chart.velocities[0] ** 2 / 2)
    with pytest.raises(IrregularLagrangianError, match="positive on the allowed velocities"):
        ChetaevSystem(degenerate, ["z_dot - x_dot^2 - y_dot"]).field()


def test_rank_deficient_list_reduced_with_message():
    """Seed 000 Example 2 (i): u1 × u2 = 0 has three components but rank 2 on C."""
    chart = Chart("x1 y1 z1 x2 y2 z2")
    cross = ["y1_dot*z2_dot - z1_dot*y2_dot", "z1_dot*x2_dot - x1_dot*z2_dot", "x1_dot*y2_dot - y1_dot*x2_dot"]
    with pytest.raises(DependentConstraintsError, match="rank ∂φ/∂q_dot = 2 < 3"):
        KinematicConstraints(chart, cross)
    K = KinematicConstraints.independent(chart, cross)
    assert K.count == 2 and len(K.dropped) == 1 and "rank 2" in K.note
    # near a point of C (parallel velocities) the kept constraints imply the dropped one: perturb the
    # velocities and project back onto the kept constraints (Gauss–Newton); the dropped one still holds
    rng = np.random.default_rng(3)
    u = chart.velocities
    w = rng.uniform(-1, 1, 3)
    vel = np.concatenate([w, 0.7 * w]) + 1e-3 * rng.uniform(-1, 1, 6)
    J = K.jacobian
    for _ in range(30):
        pt = {s: float(x) for s, x in zip(u, vel)}
        f = np.array([float(e.xreplace(pt)) for e in K.expressions])
        Jn = np.array(J.xreplace(pt).tolist(), dtype=float)
        vel = vel - np.linalg.lstsq(Jn, f, rcond=None)[0]
    pt = {s: float(x) for s, x in zip(u, vel)}
    assert max(abs(float(e.xreplace(pt))) for e in K.expressions) < 1e-12
    assert abs(float(K.dropped[0].xreplace(pt))) < 1e-10

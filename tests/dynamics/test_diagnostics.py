"""Diagnostics of seed 000 (THEORY §8): homogeneity, ᾱ − α, Prop. 1, constraint power and energy,
point transformations, and the integrability test for a claimed position-level reduction.

Oracles: homogeneity checked by direct scaling φ(q, s u) = s^σ φ(q, u) (not Euler's identity
that the library uses); ᾱ − α from explicit α = u_dep(q, u_ind) differentiated by hand; the
power of the constraint forces computed from the hand-built coordinate solution
(tests/oracles.py, ``nonlinear_constrained_solution``) as Σ λ_ν (∂φ^ν/∂u^A) u^A; the
counterexample's energy drift derived by hand (dE/dt = −λẋ² = d(ẋ²/4)/dt); mixed partials
computed by hand for the Flannery test.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution, point_on_nonlinear_constraints

from anholo import Chart, Frame, Lagrangian
from anholo.dynamics.chetaev import ChetaevSystem
from anholo.analysis.diagnostics import (
    alpha_bar_minus_alpha,
    energy_balance,
    homogeneity_degree,
    homogeneity_under_transformation,
    position_reduction_test,
    proposition1,
    vanishes_on_C,
)
from anholo.constraints.kinematic import KinematicConstraints

g, c = sp.symbols("g c", positive=True)
CHART6 = Chart("q1 q2 q3 q4 q5 q6")
Q = CHART6.coordinates
U = CHART6.velocities

# Seed 000 Example 2, with (vi) corrected (the printed q1 − q2 must be q1 − q4); degrees 1 or 2.
EXAMPLE2 = {
    "i_parallel": ([U[1] * U[5] - U[2] * U[4], U[2] * U[3] - U[0] * U[5], U[0] * U[4] - U[1] * U[3]], 2),
    "ii_perpendicular": ([U[0] * U[3] + U[1] * U[4] + U[2] * U[5]], 2),
    "iii_same_speed": ([sp.sqrt(U[0] ** 2 + U[1] ** 2 + U[2] ** 2) - sp.sqrt(U[3] ** 2 + U[4] ** 2 + U[5] ** 2)], 1),
    "iv_midpoint_parallel": ([(Q[2] - Q[5]) * (U[1] + U[4]) - (Q[1] - Q[4]) * (U[2] + U[5]),
                              (Q[0] - Q[3]) * (U[2] + U[5]) - (Q[2] - Q[5]) * (U[0] + U[3]),
                              (Q[1] - Q[4]) * (U[0] + U[3]) - (Q[0] - Q[3]) * (U[1] + U[4])], 1),
    "v_midpoint_perpendicular": ([(Q[0] - Q[3]) * (U[0] + U[3]) + (Q[1] - Q[4]) * (U[1] + U[4])
                                  + (Q[2] - Q[5]) * (U[2] + U[5])], 1),
    "vi_perpendicular_to_line": ([(Q[0] - Q[3]) * U[0] + (Q[1] - Q[4]) * U[1] + (Q[2] - Q[5]) * U[2],
                                  (Q[0] - Q[3]) * U[3] + (Q[1] - Q[4]) * U[4] + (Q[2] - Q[5]) * U[5]], 1),
}


def scaling_degree_holds(phi, velocities, sigma, seed=0):
    """φ(q, s u) = s^σ φ(q, u) at random points and scales s > 0 (independent of Euler's identity)."""
    rng = np.random.default_rng(seed)
    syms = sorted(sp.sympify(phi).free_symbols, key=str)
    for _ in range(3):
        pt = {x: rng.uniform(0.3, 1.3) * rng.choice([-1, 1]) for x in syms}
        s = rng.uniform(0.2, 3.0)
        scaled = {**pt, **{w: s * pt[w] for w in velocities if w in pt}}
        lhs, rhs = complex(sp.sympify(phi).evalf(subs=scaled)), s**sigma * complex(sp.sympify(phi).evalf(subs=pt))
        if abs(lhs - rhs) > 1e-9 * max(1, abs(rhs)):
            return False
    return True


@pytest.mark.parametrize("name", sorted(EXAMPLE2))
def test_example2_constraints_are_homogeneous_of_the_stated_degree(name):
    exprs, sigma = EXAMPLE2[name]
    for phi in exprs:
        assert homogeneity_degree(phi, U) == sigma
        assert scaling_degree_holds(phi, U, sigma)


def test_non_homogeneous_constraints_have_no_degree():
    x, y, z = sp.symbols("x y z", real=True)
    xd, yd, zd = sp.symbols("x_dot y_dot z_dot", real=True)
    for phi in (zd - xd**2 - yd, zd - y * xd - 1, sp.exp(zd - y * xd) - 1):
        assert homogeneity_degree(phi, [xd, yd, zd]) is None
        assert not any(scaling_degree_holds(phi, [xd, yd, zd], s) for s in (0, 1, 2))


def test_alpha_bar_minus_alpha_against_explicit_alpha():
    """ᾱ − α by differentiating explicit α (oracle) vs the library's implicit −J_dep⁻¹ Δφ on C."""
    chart = Chart("x y z", parameters=[c])
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    cases = [("z_dot - x_dot^2 - y_dot", xd**2 + yd), ("z_dot - c*sqrt(x_dot^2 + y_dot^2)", c * sp.sqrt(xd**2 + yd**2)),
             ("z_dot - y*x_dot - x^2", y * xd + x**2), ("z_dot*(1 + z_dot^2) - x_dot", None)]
    for phi, alpha in cases:
        K = KinematicConstraints(chart, [phi])
        (lib,) = alpha_bar_minus_alpha(K)
        if alpha is not None:
            oracle = xd * alpha.diff(xd) + yd * alpha.diff(yd) - alpha
            assert sp.simplify(lib.xreplace({zd: alpha}) - oracle) == 0
        else:  # no explicit α: ∂α/∂ẋ = 1/(1 + 3ż²) by implicit differentiation by hand, ∂α/∂ẏ = 0
            oracle = xd / (1 + 3 * zd**2) - zd
            assert vanishes_on_C(lib - oracle, K)
    (counter,) = alpha_bar_minus_alpha(KinematicConstraints(chart, ["z_dot - x_dot^2 - y_dot"]))
    assert sp.simplify(counter - xd**2) == 0


def test_proposition1_statements():
    chart = Chart("x y z", parameters=[c])
    hom = proposition1(KinematicConstraints(chart, ["z_dot^2 - c^2*(x_dot^2 + y_dot^2)"]))
    assert hom.constraints_homogeneous and hom.alpha_bar_equals_alpha and hom.alpha_homogeneous
    assert hom.degrees == (2,)
    counter = proposition1(KinematicConstraints(chart, ["z_dot - x_dot^2 - y_dot"]))
    assert not counter.constraints_homogeneous and not counter.alpha_bar_equals_alpha
    assert counter.alpha_homogeneous is False
    # audit of Prop. 1: a non-homogeneous φ with a homogeneous zero set (a cone): (1) fails, (2) and (3) hold
    cone = proposition1(KinematicConstraints(chart, ["exp(z_dot - y*x_dot) - 1"]))
    assert cone.degrees == (None,)
    assert cone.alpha_bar_equals_alpha and cone.alpha_homogeneous
    assert "only after rewriting" in cone.verdict()


def test_constraint_power_and_energy_identity_against_oracle():
    """Σ R_A u^A = Σ λ_ν ∂φ^ν/∂u^A u^A from the hand oracle equals the library's power and Remark 4's form."""
    chart = Chart("x y z", parameters=[g])
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    Lnat = (xd**2 + yd**2 + zd**2) / 2 - g * z + x * y  # a potential too
    for phi in ("z_dot - x_dot^2 - y_dot", "z_dot*x - y*x_dot^2 - x_dot*y_dot"):
        S = ChetaevSystem(Lagrangian(Frame.coordinate(chart), Lnat), [phi])
        bal = energy_balance(S.field())
        assert bal.identity_holds
        assert vanishes_on_C(bal.constraint_power - bal.remark4_power, S.constraints)
        phi_e = S.constraints.expressions[0]
        for seed in (1, 2):
            pt = point_on_nonlinear_constraints(chart.coordinates, chart.velocities, [phi_e], [g], [zd], seed)
            qdd, lam = nonlinear_constrained_solution(Lnat, chart.coordinates, chart.velocities, [phi_e], pt)
            power = lam[0] * sum(float(phi_e.diff(w).xreplace(pt)) * float(pt[w]) for w in chart.velocities)
            assert complex(bal.constraint_power.xreplace(pt).evalf()).real == pytest.approx(power, rel=1e-9, abs=1e-12)


def test_energy_conserved_for_homogeneous_stationary_constraints():
    chart = Chart("x y z", parameters=[g, c])
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - g * chart.coordinates[2])
    for phi in ("z_dot^2 - c^2*(x_dot^2 + y_dot^2)", "z_dot - c*sqrt(x_dot^2 + y_dot^2)", "z_dot - y*x_dot"):
        bal = energy_balance(ChetaevSystem(L, [phi]).field())
        assert bal.conserved and bal.identity_holds


def test_counterexample_energy_drift_and_the_conserved_quantity():
    """dE/dt = −λẋ² with λ = g/(2 + 4ẋ²) (by hand), and E − ẋ²/4 is conserved: d(ẋ²/4)/dt = ẋẍ/2 = −λẋ²."""
    chart = Chart("x y z", parameters=[g])
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - g * chart.coordinates[2])
    S = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"])
    field = S.field()
    bal = energy_balance(field)
    assert not bal.conserved and bal.identity_holds
    assert sp.simplify(bal.energy_rate - (-g / (2 + 4 * xd**2) * xd**2)) == 0
    assert vanishes_on_C(field(bal.energy - xd**2 / 4), S.constraints)


def test_homogeneity_invariant_under_point_transformations_not_time_dependent_ones():
    x, y, z = sp.symbols("x y z", real=True)
    r, th = sp.symbols("r theta", positive=True)
    t, w = sp.symbols("t omega", real=True)
    K = KinematicConstraints(Chart([x, y, z], parameters=[c]), ["z_dot^2 - c^2*(x_dot^2 + y_dot^2)", ])
    cyl = Chart([r, th, z], parameters=[c])
    before, after = homogeneity_under_transformation(K, cyl, {x: r * sp.cos(th), y: r * sp.sin(th), z: z})
    assert before == after == (2,)
    K1 = KinematicConstraints(Chart([x, y, z], parameters=[c]), ["z_dot - y*x_dot"], time=t)
    X, Y = sp.symbols("X Y", real=True)
    rotating = Chart([X, Y, z])
    b1, a1 = homogeneity_under_transformation(
        K1, rotating, {x: X * sp.cos(w * t) - Y * sp.sin(w * t), y: X * sp.sin(w * t) + Y * sp.cos(w * t), z: z})
    assert b1 == (1,) and a1 == (None,)


def test_position_reduction_test_flannery():
    chart = Chart("x y z")
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    # ż = y ẋ: γ = (y, 0); D_y γ_x − D_x γ_y = 1 ≠ 0 by hand
    heis = position_reduction_test(KinematicConstraints(chart, ["z_dot - y*x_dot"]))
    assert heis.gamma == sp.Matrix([[y, 0]]) and not heis.integrable and not heis.velocity_dependent
    assert list(heis.obstructions.values()) == [-1]
    # ż = 2 x ẋ + ẏ comes from z = x² + y: integrable
    assert position_reduction_test(KinematicConstraints(chart, ["z_dot - 2*x*x_dot - y_dot"])).integrable
    # x ẏ − y ẋ = 0 solved for ẏ: γ = (y/x, 0) with D including ∂/∂y; integrable (y = C x)
    conf = position_reduction_test(KinematicConstraints(chart, ["x*y_dot - y*x_dot"]), ["y"])
    assert conf.integrable and sp.simplify(conf.gamma[0, 0] - y / x) == 0
    # nonlinear: γ = (2ẋ, 1) depends on velocities: no position-level functions at all
    nl = position_reduction_test(KinematicConstraints(chart, ["z_dot - x_dot^2 - y_dot"]))
    assert nl.velocity_dependent and not nl.integrable

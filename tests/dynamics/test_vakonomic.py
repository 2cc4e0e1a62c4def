"""Vakonomic dynamics (THEORY §5): the field tangent to C and sections (Prop. 4).

Oracle: the coordinate multiplication rule built by hand (tests/oracles.py,
``multiplication_rule_solution``: Euler–Lagrange equations of L + λ·φ in (q, λ)
with the differentiated constraints), and THEORY §5's published equations of the
nonholonomic particle.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from oracles import (
    concrete,
    dependent_velocities,
    function_stand_ins,
    multiplication_rule_solution,
    point_on_constraints,
    values,
)

from anholo import ConstraintError, DimensionError, VakonomicSystem
from anholo.examples import resolve_system, crampin_mestdag_class
from anholo.system import System

LINEAR = ["nonholonomic_particle", "vertical_rolling_disk", "knife_edge", "chaplygin_sleigh",
          "two_wheeled_carriage", "crampin_mestdag_class", "rolling_disk", "n_trailer_1", ("tan(r2)",), ("r2", "sin(r2)")]


def same(a, b) -> bool:
    return sp.simplify(a - b) == 0


@pytest.mark.parametrize("key", LINEAR, ids=[str(k) for k in LINEAR])
def test_vakonomic_field_matches_the_multiplication_rule(key):
    spec = crampin_mestdag_class(list(key)) if isinstance(key, tuple) else resolve_system(key)
    vak = VakonomicSystem(System.from_spec(spec).nonholonomic())
    qdd_expr, rates_expr = vak.field().in_written_multipliers()
    q, u = spec.coordinates, spec.velocities
    L, cons = concrete(spec)
    repl = function_stand_ins(spec)
    exprs = [qdd_expr[a] for a in q] + list(rates_expr)
    if repl:
        exprs = [sp.sympify(e).subs(repl).doit() for e in exprs]
    dep = dependent_velocities(spec, cons)
    rng = random.Random(5)
    for seed in (1, 2):
        pt = point_on_constraints(q, u, cons, spec.parameters, dep, seed, low=-1.0, high=1.0)
        pt.update({lam: sp.Float(rng.uniform(-1, 1), 30) for lam in vak.multipliers})
        qdd, lam_dot = multiplication_rule_solution(L, q, u, cons, vak.multipliers, pt)
        got = values(exprs, pt)
        np.testing.assert_allclose(got.real, np.concatenate([qdd, lam_dot]), rtol=1e-8, atol=1e-9)


def test_nonholonomic_particle_published_vakonomic_equations():
    """THEORY §5: ẍ = ẏ(λ − yẋ)/(1+y²), ÿ = −λẋ, λ̇ = −ẏ(ẋ + yλ)/(1+y²)."""
    S = System.load("nonholonomic_particle")
    vak = VakonomicSystem(S.nonholonomic())
    x, y, z = S.chart.coordinates
    xd, yd, zd = S.chart.velocities
    (lam,) = vak.multipliers
    qdd, (lam_dot,) = vak.field().in_written_multipliers()
    assert same(qdd[x], yd * (lam - y * xd) / (1 + y**2))
    assert same(qdd[y], -lam * xd)
    assert same(lam_dot, -yd * (xd + y * lam) / (1 + y**2))


def test_zero_section_is_tangent_iff_nonholonomic_multiplier_vanishes():
    """Prop. 4 with σ = 0: T_b(0) = −Λ_b(0) = μ_b, and Γ_0 = Γ_nh (weak consistency of σ = 0)."""
    for name, tangent in (("nonholonomic_particle", False), ("vertical_rolling_disk", False)):
        nh = System.load(name).nonholonomic()
        vak = VakonomicSystem(nh)
        sec = vak.section_field([0] * (nh.n - nh.m))
        for G, Gnh in zip(sec.accelerations, nh.field().accelerations):
            assert same(G, Gnh)
        for T, mu in zip(sec.tangency_residual, nh.field().multipliers):
            assert same(T, mu)
        assert all(same(T, 0) for T in sec.tangency_residual) is tangent


def test_section_residual_vanishes_for_the_vertical_disk_minus_momentum():
    """Chaplygin section σ = −p on the vertical rolling disk (THEORY §9: consistent) is tangent: T(σ) = 0."""
    nh = System.load("vertical_rolling_disk").nonholonomic()
    vak = VakonomicSystem(nh)
    sigma = [-p for p in nh._momenta_on_C[nh.m:]]
    sec = vak.section_field(sigma)
    assert all(same(T, 0) for T in sec.tangency_residual)


def test_bad_input():
    # affine constraints are accepted now (tests/dynamics/test_vakonomic_affine.py)
    nh = System.load("nonholonomic_particle").nonholonomic()
    with pytest.raises(DimensionError, match="1 multiplier"):
        VakonomicSystem(nh, multipliers=["a", "b"])
    with pytest.raises(DimensionError, match="clash"):
        VakonomicSystem(nh, multipliers=["x"])
    with pytest.raises(DimensionError, match="section needs 1"):
        VakonomicSystem(nh).section_field([0, 0])


def _coordinate_vakonomic_rates(nh, lam, rates):
    """Independent oracle (THEORY §5, coordinates): Euler–Lagrange equations of L + λ_a θ^a_A u^A in q with
    λ̇ = Λ given, solved for ü; then v̇^i = θ^i_A ü^A + ∂_B θ^i_A u^B u^A, on C (u = X_α v^α)."""
    chart = nh.frame.chart
    q, u = chart.coordinates, chart.velocities
    n, m = nh.n, nh.m
    th = sp.Matrix(nh.frame.coframe)
    L = nh._source_lagrangian.natural_expr()
    W = sp.Matrix(n, n, lambda A, B: L.diff(u[A], u[B]))
    rhs = []
    for A in range(n):
        r = L.diff(q[A]) - sum(L.diff(u[A], q[B]) * u[B] for B in range(n))
        for a in range(m, n):
            la, La = lam[a - m], rates[a - m]
            r -= La * th[a, A]
            r -= la * sum((th[a, A].diff(q[B]) - th[a, B].diff(q[A])) * u[B] for B in range(n))
        rhs.append(r)
    udd = W.LUsolve(sp.Matrix(rhs))
    vdot = [sum(th[i, A] * udd[A] for A in range(n))
            + sum(th[i, A].diff(q[B]) * u[B] * u[A] for A in range(n) for B in range(n)) for i in range(n)]
    X = nh.frame.vectors
    v = nh.bundle.quasi_velocities
    on_C = {u[A]: sum(X[al, A] * v[al] for al in range(m)) for A in range(n)}
    return [sp.sympify(e).xreplace(on_C) for e in vdot]


@pytest.mark.parametrize("name", ["nonholonomic_particle", "vertical_rolling_disk", "chaplygin_sleigh"])
def test_prop3_rates_determine_the_field_as_the_coordinate_multiplication_rule(name):
    nh = System.load(name).nonholonomic()
    vak = VakonomicSystem(nh)
    assert vak.is_regular_perp()
    k = nh.n - nh.m
    rates = sp.symbols(f"Lam1:{k + 1}", real=True)
    B = vak.field_for_rates(rates)
    oracle = _coordinate_vakonomic_rates(nh, vak.multipliers, rates)
    rng = random.Random(11)
    syms = set().union(*(sp.sympify(e).free_symbols for e in list(B) + oracle))
    for _ in range(3):
        pt = {s: sp.Float(rng.uniform(0.3, 1.2)) for s in syms}
        for b, o in zip(B, oracle):
            assert abs(complex(sp.sympify(b).xreplace(pt).evalf()) - complex(sp.sympify(o).xreplace(pt).evalf())) < 1e-9
    # the rates of the field tangent to C give B^a = 0 and the tangent accelerations (uniqueness, Prop. 3)
    fld = vak.field()
    B0 = vak.field_for_rates(fld.multiplier_rates)
    pt = {s: sp.Float(rng.uniform(0.3, 1.2)) for s in syms | set().union(*(sp.sympify(e).free_symbols for e in B0))}
    for i, b in enumerate(B0):
        want = fld.accelerations[i] if i < nh.m else 0
        assert abs(complex(sp.sympify(b - want).xreplace(pt).evalf())) < 1e-9


def test_irregular_with_respect_to_D_perp_is_a_clear_error():
    """No kinetic energy along the constrained direction z: the Schur complement vanishes."""
    from anholo import Chart, Frame, Lagrangian, NonholonomicSystem
    from anholo.errors import IrregularLagrangianError

    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    nh = NonholonomicSystem(Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2) / 2), ["z_dot - y*x_dot"])
    vak = VakonomicSystem(nh)
    assert not vak.is_regular_perp()
    assert vak.schur_complement() == sp.zeros(1, 1)
    with pytest.raises(IrregularLagrangianError, match="D\\^⊥"):
        vak.field_for_rates([0])
    vak.field()  # the field tangent to C (B^a = 0) needs only regularity with respect to D

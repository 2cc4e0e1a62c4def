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
from anholo.examples import resolve_system, seed004_class
from anholo.system import System

LINEAR = ["nonholonomic_particle", "vertical_rolling_disk", "knife_edge", "chaplygin_sleigh",
          "two_wheeled_carriage", "seed004_class", "rolling_disk", "n_trailer_1", ("tan(r2)",), ("r2", "sin(r2)")]


def same(a, b) -> bool:
    return sp.simplify(a - b) == 0


@pytest.mark.parametrize("key", LINEAR, ids=[str(k) for k in LINEAR])
def test_vakonomic_field_matches_the_multiplication_rule(key):
    spec = seed004_class(list(key)) if isinstance(key, tuple) else resolve_system(key)
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
    S = System.load("sphere_on_turntable")
    with pytest.raises(ConstraintError, match="affine"):
        VakonomicSystem(S.nonholonomic())
    nh = System.load("nonholonomic_particle").nonholonomic()
    with pytest.raises(DimensionError, match="1 multiplier"):
        VakonomicSystem(nh, multipliers=["a", "b"])
    with pytest.raises(DimensionError, match="clash"):
        VakonomicSystem(nh, multipliers=["x"])
    with pytest.raises(DimensionError, match="section needs 1"):
        VakonomicSystem(nh).section_field([0, 0])

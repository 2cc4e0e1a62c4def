"""Invariant measures of the nonholonomic field.

Oracles: (1) the coordinate multiplier method solved symbolically by hand here
(``W q̈ = Aᵀλ``, differentiated constraints) and the divergence of N·Γ taken by direct
coordinate differentiation (the class of Crampin & Mestdag (2010), §7.1, whose density
is √(I₁ + Σ m_i A_i²)); (2) Liouville's theorem checked numerically: the volume of a cloud
of states (the determinant of the finite-difference Jacobian of the time-t flow, scipy
DOP853) times N(end)/N(start) stays 1 (the Chaplygin ball); (3) the closed form of the
ball's density, ∝ sin²θ √det(I + m r²(1 − γγᵀ)) (Chaplygin 1903; Borisov & Mamaev 2001:
ρ = det(J)^(-1/2) in (M, γ), i.e. det(J)^(1/2) in (ω, γ)).
"""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.analysis.invariant_measure import divergence, is_invariant_density, search_invariant_density
from anholo.system import System


def test_seed004_class_density_by_coordinate_differentiation():
    s = System.load("seed004_class")
    r1, r2, s1, s2 = q = list(s.chart.coordinates)
    I1, I2, m1, m2 = s.chart.parameters
    from sympy.core.function import AppliedUndef

    A1, A2 = sorted(s.frame.vectors.atoms(AppliedUndef), key=str)  # the file's functions A1(r2), A2(r2)
    u1, u2 = sp.symbols("u1 u2")
    # coordinate multiplier method by hand: m_i s_i'' = λ_i, I1 r1'' = -Σ λ_i A_i, I2 r2'' = 0,
    # s_i'' = A_i r1'' + A_i' r2' r1'  =>  (I1 + Σ m A²) r1'' = -Σ m A A' r1' r2'
    r1dd = -(m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)) * u1 * u2 / (I1 + m1 * A1**2 + m2 * A2**2)
    qdot = [u1, u2, A1 * u1, A2 * u1]
    vdot = [r1dd, 0]
    N = sp.sqrt(I1 + m1 * A1**2 + m2 * A2**2)
    div_N = sum(sp.diff(N * e, x) for e, x in zip(qdot, q)) + sum(sp.diff(N * e, x) for e, x in zip(vdot, (u1, u2)))
    assert sp.simplify(div_N) == 0
    nh = s.nonholonomic()
    field = nh.field()
    v1, v2 = nh.free_velocities  # v1 = r1_dot, v2 = r2_dot in the Chaplygin frame of the file
    div_oracle = sum(sp.diff(e, x) for e, x in zip(qdot, q)) + sp.diff(r1dd, u1)
    assert sp.simplify(divergence(field) - div_oracle.xreplace({u1: v1, u2: v2})) == 0
    found = search_invariant_density(field)
    assert found.density is not None and not found.divergence_free
    assert sp.simplify(found.density / N).free_symbols.isdisjoint(q)
    assert is_invariant_density(field, N) and not is_invariant_density(field, 1)
    # constant density iff Σ m_i A_i A_i' = 0
    cond = found.constant_density_conditions
    assert len(cond) == 1 and sp.simplify(cond[0] / (m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)) + 1) == 0 \
        or sp.simplify(cond[0] / (m1 * A1 * A1.diff(r2) + m2 * A2 * A2.diff(r2)) - 1) == 0


def test_vertical_rolling_disk_is_divergence_free_and_sleigh_has_no_density():
    disk = System.load("vertical_rolling_disk").nonholonomic().field()
    assert search_invariant_density(disk).divergence_free
    sleigh = search_invariant_density(System.load("chaplygin_sleigh").nonholonomic().field())
    assert sleigh.density is None and sleigh.searched and sleigh.complete
    a, m = sp.symbols("a m", positive=True)
    assert [sp.factor(c) for c in sleigh.constant_density_conditions] in ([a * m], [-a * m])


def _flow(field, values):
    nh = field.system
    q, v = list(nh.frame.chart.coordinates), list(nh.free_velocities)
    rhs = [e.xreplace(values) for e in list(field.velocity_field()) + list(field.accelerations)]
    f = sp.lambdify(q + v, rhs, modules="numpy", cse=True)
    return (lambda t, y: np.array(f(*y), dtype=float)), q, v


@pytest.mark.slow
def test_chaplygin_ball_density_by_liouville():
    s = System.load("chaplygin_ball")
    values = {p: sp.nsimplify(s.values[p]) for p in s.chart.parameters}
    nh = s.nonholonomic()
    field = nh.field()
    found = search_invariant_density(field)
    assert found.density is not None
    # closed form: sin²θ √det(I + m r²(1 − γγᵀ)), γ = (sinθ sinψ, sinθ cosψ, cosθ)
    phi, th, psi = s.chart.coordinates[2:]
    m, r, I1, I2, I3 = s.chart.parameters
    g = sp.Matrix([sp.sin(th) * sp.sin(psi), sp.sin(th) * sp.cos(psi), sp.cos(th)])
    J = sp.diag(I1, I2, I3) + m * r**2 * (sp.eye(3) - g * g.T)
    closed = sp.sin(th) ** 2 * sp.sqrt(J.det())
    rng = np.random.default_rng(1)
    ratios = []
    for _ in range(4):
        pt = {x: float(rng.uniform(0.2, 1.3)) for x in s.chart.coordinates} | {p: float(rng.uniform(0.5, 1.5)) for p in s.chart.parameters}
        if len(ratios) == 0:
            base = pt
        ratios.append(float(sp.N((found.density / closed).xreplace(pt | {p: base[p] for p in s.chart.parameters}))))
    assert np.allclose(ratios, ratios[0], rtol=1e-9)
    # Liouville: det(D flow_t) * N(end) / N(start) = 1
    F, q, v = _flow(field, values)
    N = sp.lambdify(q, found.density.xreplace(values), modules="numpy")
    y0 = np.array([0.1, -0.2, 0.3, 1.1, 0.4, 0.7, -0.5, 0.9])
    T, h = 2.0, 1e-5

    def end(y):
        return solve_ivp(F, (0, T), y, method="DOP853", rtol=1e-12, atol=1e-13).y[:, -1]

    Jac = np.column_stack([(end(y0 + h * e) - end(y0 - h * e)) / (2 * h) for e in np.eye(len(y0))])
    yT = end(y0)
    vol = np.linalg.det(Jac)
    assert abs(vol * N(*yT[:5]) / N(*y0[:5]) - 1) < 1e-6
    assert abs(vol - 1) > 1e-3  # the constant density is not invariant: the check can fail

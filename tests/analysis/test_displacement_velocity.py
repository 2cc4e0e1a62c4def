"""Talamucci's Property 1 (Talamucci (2025), eq. (33)): with Chetaev's virtual displacements
``δr_s = Σ_r ∂ṙ_s/∂q̇^r δq^r`` over the independent velocities.

Oracles, independent of anholo: the positions ``r_s(q)`` and their velocities ``ṙ = (∂r/∂q) q̇`` written
here with sympy; the explicit solution ``α`` of the constraint (cylindrical coordinates); for the paper's
two-particle examples (Example 2: parallel, perpendicular velocities) the derivatives ``∂ṙ/∂q̇^r`` along C
by central finite differences, the dependent velocities re-solved with scipy at each step, and the
Cartesian Chetaev rule ``Σ_s ∂ψ/∂ṙ_s · δr_s = 0``.
"""

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import fsolve

from anholo.analysis.displacement_velocity import displacement_velocity_property
from anholo.constraints.displacements import MatrixDisplacements
from anholo.constraints.kinematic import CartesianPullback
from anholo.errors import ArgumentError
from anholo.geometry.chart import Chart
from anholo.system import System


def _num(M, point):
    return np.array(sp.Matrix(M).xreplace(point).evalf(), dtype=float)


def test_cylindrical_particle_with_the_nonhomogeneous_constraint_by_hand():
    # z' = x'^2 + y' (Talamucci 2025, §4) for a particle at (ρ cos θ, ρ sin θ, z)
    ch = Chart("rho theta z")
    rho, th, z = ch.coordinates
    rd, thd, zd = ch.velocities
    P = CartesianPullback(ch, {"x": rho * sp.cos(th), "y": rho * sp.sin(th), "zz": z})
    C = P.constraints(["zz_dot - x_dot**2 - y_dot"])
    res = displacement_velocity_property(P, C, dependent=[zd])
    assert res.holds and res.determined and res.independent == (0, 1)
    # by hand: ẋ, ẏ and α = ż on C in the independent velocities (ρ̇, θ̇)
    xd = rd * sp.cos(th) - rho * thd * sp.sin(th)
    yd = rd * sp.sin(th) + rho * thd * sp.cos(th)
    rdot = sp.Matrix([xd, yd, xd ** 2 + yd])
    hand = rdot.jacobian([rd, thd])
    rng = np.random.default_rng(0)
    for _ in range(4):
        pt = dict(zip([rho, th, z, rd, thd], rng.uniform(-2, 2, 5)))
        pt[zd] = float((xd ** 2 + yd).xreplace(pt))
        assert np.allclose(_num(res.displacements, pt), _num(hand, pt), atol=1e-12)
        assert np.allclose(_num(res.velocity_derivatives, pt), _num(hand, pt), atol=1e-12)
    # another class (δz = 0): (31) and (33) differ, and the positions fix δz, so it cannot hold
    other = displacement_velocity_property(P, C, MatrixDisplacements(((0, 0, 1),)), dependent=[zd])
    assert not other.holds and other.determined and other.residual > 1e-3


def _fd_derivatives(phi_f, rdot_f, q0, u0, ind, dep, eps=1e-6):
    """∂ṙ/∂q̇^r along C by central differences, the dependent velocities re-solved by fsolve."""
    cols = []
    for r in ind:
        vals = []
        for s in (+1, -1):
            u = u0.copy()
            u[r] += s * eps

            def res(ud, u=u):
                uu = u.copy()
                uu[list(dep)] = ud
                return phi_f(q0, uu)

            ud = fsolve(res, u0[list(dep)], xtol=1e-12)
            u[list(dep)] = ud
            assert np.max(np.abs(phi_f(q0, u))) < 1e-11
            vals.append(rdot_f(q0, u))
        cols.append((vals[0] - vals[1]) / (2 * eps))
    return np.column_stack(cols)


CASES = {
    # Example 2 (i), planar: the velocities of two particles parallel; q = (X, Y, r, θ) centre and relative polar
    "parallel_velocities": ("X Y r theta", lambda X, Y, r, t: {
        "x1": X + r * sp.cos(t) / 2, "y1": Y + r * sp.sin(t) / 2,
        "x2": X - r * sp.cos(t) / 2, "y2": Y - r * sp.sin(t) / 2}),
    # Example 2 (ii) and (v): perpendicular velocities, midpoint velocity ⟂ joining line; q = centre and half-difference
    "two_particles_perpendicular": ("X Y Z a b c", lambda X, Y, Z, a, b, c: {
        "x1": X + a, "y1": Y + b, "z1": Z + c, "x2": X - a, "y2": Y - b, "z2": Z - c}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_talamucci_examples_in_other_coordinates(name):
    coords, positions = CASES[name]
    system = System.load(name)
    ch = Chart(coords)
    pos = {sp.Symbol(k, real=True): v for k, v in positions(*ch.coordinates).items()}
    P = CartesianPullback(ch, pos)
    psi = [str(e) for e in system.constraints]                 # in the Cartesian positions and velocities
    C = P.constraints(psi)
    res = displacement_velocity_property(P, C)
    assert res.holds and res.determined
    # the oracle: r(q), ṙ = (∂r/∂q) q̇, φ = ψ(r, ṙ), all written here
    q, u = list(ch.coordinates), list(ch.velocities)
    names = list(pos)
    r = sp.Matrix([pos[s] for s in names])
    rdot = r.jacobian(q) * sp.Matrix(u)
    cart_v = [sp.Symbol(f"{s.name}_dot", real=True) for s in names]
    psi_exprs = [sp.sympify(p, locals={str(s): s for s in names + cart_v}) for p in psi]
    phi = sp.Matrix([e.xreplace(dict(zip(cart_v, rdot))).xreplace(dict(zip(names, r))) for e in psi_exprs])
    grad = sp.Matrix([[sp.diff(e, v) for v in cart_v] for e in psi_exprs])   # ∂ψ/∂ṙ
    fq = sp.lambdify([q, u], phi, "numpy")
    fr = sp.lambdify([q, u], rdot, "numpy")
    phi_f = lambda qq, uu: np.array(fq(qq, uu), dtype=float).ravel()      # noqa: E731
    rdot_f = lambda qq, uu: np.array(fr(qq, uu), dtype=float).ravel()     # noqa: E731
    wrong = MatrixDisplacements(tuple(tuple(1 if j == i else 0 for j in range(len(q)))
                                      for i in res.dependent))               # δq_dep = 0
    bad = displacement_velocity_property(P, C, wrong)
    assert not bad.holds
    for pt in C.points_on_C(3, seed=11):
        q0 = np.array([float(pt[s]) for s in q])
        u0 = np.array([float(pt[s]) for s in u])
        fd = _fd_derivatives(phi_f, rdot_f, q0, u0, res.independent, res.dependent)
        left = _num(res.displacements, pt)
        assert np.allclose(left, fd, atol=1e-6 * max(1, np.abs(fd).max()))           # eq. (33)
        assert np.allclose(_num(res.velocity_derivatives, pt), fd, atol=1e-6 * max(1, np.abs(fd).max()))
        cart_pt = dict(zip(names, _num(r, pt).ravel())) | dict(zip(cart_v, _num(rdot, pt).ravel()))
        G = _num(grad, cart_pt)
        assert np.allclose(G @ left, 0, atol=1e-9)                                    # Chetaev in Cartesian form
        assert not np.allclose(_num(bad.displacements, pt), fd, atol=1e-6)


def test_charts_must_agree():
    P = CartesianPullback(Chart("r theta"), {"x": "r*cos(theta)"})
    C = CartesianPullback(Chart("a b"), {"x": "a"}).constraints(["x_dot"])
    with pytest.raises(ArgumentError):
        displacement_velocity_property(P, C)

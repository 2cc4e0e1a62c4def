"""The example catalogue against independent oracles (no anholo derivation code).

Oracles (tests/oracles.py): the coordinate multiplier method built by hand
(``constrained_coordinate_solution``) and sympy.physics.mechanics'
``LagrangesMethod`` (``lagranges_method_solution``); for the rolling disk also
an independent ``KanesMethod`` model (the rolling disc of the sympy
documentation); and closed-form results from the literature: the vertical
rolling disk (constant heading and rolling rates), the knife edge on an
inclined plane, the Chaplygin sleigh, the sphere on a turntable
(THEORY.md §10: x_ddot = -mu*y_dot, y_ddot = mu*x_dot, mu = k^2*Omega/(a^2 + k^2))
and the two-wheeled carriage with a = 0 (constant wheel speeds, THEORY.md §9).
Only anholo.examples (the catalogue, i.e. system-file data) is used from anholo.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import (
    concrete,
    constrained_coordinate_solution,
    dependent_velocities,
    lagranges_method_solution,
    point_on_constraints,
)

from anholo.examples import example_names, load_example, n_trailer, crampin_mestdag_class

RTOL, ATOL = 1e-8, 1e-10
SEEDS = (11, 12)

SEED004_A = [
    ["R*cos(r2)", "R*sin(r2)"],  # vertical rolling disk
    ["tan(r2)"],  # knife edge
    ["r2"],  # nonholonomic particle
    ["r2^2", "sin(r2)", "c*exp(r2/2)"],  # three s-coordinates, an extra parameter
]

def solve_at(spec, seed, L=None, cons=None):
    L0, cons0 = concrete(spec)
    L = L0 if L is None else L
    cons = cons0 if cons is None else cons
    dep = dependent_velocities(spec, cons)
    pt = point_on_constraints(spec.coordinates, spec.velocities, cons, spec.parameters, dep, seed)
    for c in cons:  # the point lies on the constraints
        assert abs(float(c.xreplace(pt))) < 1e-20
    qdd, lam = constrained_coordinate_solution(L, spec.coordinates, spec.velocities, cons, pt)
    return pt, qdd, lam


def _affine(name):
    """Examples whose constraints are affine in the velocities (nonlinear ones: tests/dynamics/test_chetaev.py)."""
    spec = load_example(name)
    if spec.time is not None:  # time-dependent constraints: tests/test_time_dependent.py
        return False
    if spec.has_loads or spec.holonomic:  # tests/dynamics/test_forces.py, test_holonomic.py
        return False
    return all(sp.diff(c, a, b) == 0 for c in spec.constraints for a in spec.velocities for b in spec.velocities)


CATALOGUE = (
    [(name, (lambda name=name: load_example(name))) for name in example_names(large=False) if _affine(name)]
    + [(f"n_trailer_{n}", (lambda n=n: n_trailer(n))) for n in (0, 1, 2, 3)]
    + [(f"crampin_mestdag_class{A}", (lambda A=A: crampin_mestdag_class(A))) for A in SEED004_A]
)


@pytest.mark.parametrize("make", [m for _, m in CATALOGUE], ids=[i for i, _ in CATALOGUE])
def test_two_oracles_agree(make):
    spec = make()
    L, cons = concrete(spec)
    for seed in SEEDS:
        dep = dependent_velocities(spec, cons)
        pt = point_on_constraints(spec.coordinates, spec.velocities, cons, spec.parameters, dep, seed)
        qdd1, lam1 = constrained_coordinate_solution(L, spec.coordinates, spec.velocities, cons, pt)
        qdd2, lam2 = lagranges_method_solution(L, spec.coordinates, spec.velocities, cons, pt)
        assert qdd1.shape == (len(spec.coordinates),) and lam1.shape == (len(cons),)
        np.testing.assert_allclose(qdd2, qdd1, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(lam2, lam1, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("make", [m for _, m in CATALOGUE], ids=[i for i, _ in CATALOGUE])
def test_oracle_solution_is_consistent(make):
    """q̈ keeps the constraints (dφ/dt = 0), E(L) = Aᵀλ, and stationary linear
    constraints conserve the energy."""
    spec = make()
    q, u = spec.coordinates, spec.velocities
    L, cons = concrete(spec)
    pt, qdd, lam = solve_at(spec, 5)
    n = len(q)
    num = lambda e: float(sp.sympify(e).xreplace(pt))  # noqa: E731
    for c in cons:
        rate = sum(num(c.diff(q[A])) * num(u[A]) + num(c.diff(u[A])) * qdd[A] for A in range(n))
        assert abs(rate) < 1e-9
    for A in range(n):
        pA = L.diff(u[A])
        E_A = sum(num(pA.diff(q[B])) * num(u[B]) + num(pA.diff(u[B])) * qdd[B] for B in range(n)) - num(L.diff(q[A]))
        assert E_A == pytest.approx(sum(lam[a] * num(cons[a].diff(u[A])) for a in range(len(cons))), rel=1e-8, abs=1e-9)
    homogeneous = all(sp.expand(c - sum(c.diff(v) * v for v in u)) == 0 for c in cons)
    if homogeneous and not any(s.name == "Omega" for s in spec.parameters):
        energy = sum(u[A] * L.diff(u[A]) for A in range(n)) - L
        dE = sum(num(energy.diff(q[A])) * num(u[A]) + num(energy.diff(u[A])) * qdd[A] for A in range(n))
        assert abs(dE) < 1e-9


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_vertical_rolling_disk_closed_form(seed):
    spec = load_example("vertical_rolling_disk")
    x, y, theta, phi = spec.coordinates
    xd, yd, thetad, phid = spec.velocities
    m, R, I, J = spec.parameters
    pt, qdd, lam = solve_at(spec, seed)
    f = lambda e: float(e.xreplace(pt))  # noqa: E731
    # heading and rolling rates are constant; the contact point turns with the heading
    np.testing.assert_allclose(
        qdd,
        [f(-R * sp.sin(theta) * thetad * phid), f(R * sp.cos(theta) * thetad * phid), 0, 0],
        rtol=RTOL,
        atol=ATOL,
    )
    # E_x(L) = m x_ddot = λ1, E_y(L) = m y_ddot = λ2 (constraints x_dot - ..., y_dot - ...)
    np.testing.assert_allclose(lam, [f(m) * qdd[0], f(m) * qdd[1]], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_knife_edge_closed_form(seed):
    """θ̈ = 0 and the speed along the blade grows with the slope component of gravity."""
    spec = load_example("knife_edge")
    x, y, theta = spec.coordinates
    xd, yd, thetad = spec.velocities
    m, J, g, alpha = spec.parameters
    pt, qdd, lam = solve_at(spec, seed)
    f = lambda e: float(e.xreplace(pt))  # noqa: E731
    assert qdd[2] == pytest.approx(0, abs=ATOL)
    # u = cos θ ẋ + sin θ ẏ: u̇ = g sin α cos θ
    udot = f(-sp.sin(theta) * thetad * xd + sp.cos(theta) * thetad * yd) + f(sp.cos(theta)) * qdd[0] + f(sp.sin(theta)) * qdd[1]
    assert udot == pytest.approx(f(g * sp.sin(alpha) * sp.cos(theta)), rel=RTOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_chaplygin_sleigh_closed_form(seed):
    """With u = cos θ ẋ + sin θ ẏ (forward velocity of the centre of mass) and the
    contact point a behind it: u̇ = a θ̇², (I + m a²) θ̈ = −m a u θ̇ (Bloch,
    Nonholonomic Mechanics and Control, §1.7; rederived from the body-frame
    Newton–Euler equations with the lateral contact force at −a e1)."""
    spec = load_example("chaplygin_sleigh")
    x, y, theta = spec.coordinates
    xd, yd, thetad = spec.velocities
    m, I, a = spec.parameters
    pt, qdd, lam = solve_at(spec, seed)
    f = lambda e: float(e.xreplace(pt))  # noqa: E731
    u = f(sp.cos(theta) * xd + sp.sin(theta) * yd)
    w = f(thetad)
    udot = f(-sp.sin(theta) * thetad * xd + sp.cos(theta) * thetad * yd) + f(sp.cos(theta)) * qdd[0] + f(sp.sin(theta)) * qdd[1]
    assert udot == pytest.approx(f(a) * w**2, rel=RTOL)
    assert qdd[2] == pytest.approx(-f(m * a) * u * w / f(I + m * a**2), rel=RTOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_sphere_on_turntable_centre_circles(seed):
    """THEORY.md §10: ẍ = −μẏ, ÿ = μẋ, μ = k²Ω/(a² + k²) (seed 002 has the sign wrong)."""
    spec = load_example("sphere_on_turntable")
    xd, yd = spec.velocities[:2]
    m, a, k, Omega = spec.parameters
    pt, qdd, lam = solve_at(spec, seed)
    mu = float((k**2 * Omega / (a**2 + k**2)).xreplace(pt))
    np.testing.assert_allclose(qdd[:2], [-mu * float(pt[yd]), mu * float(pt[xd])], rtol=RTOL, atol=ATOL)
    # the LagrangesMethod oracle agrees on this affine system
    qdd2, lam2 = lagranges_method_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints, pt)
    np.testing.assert_allclose(qdd2, qdd, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_two_wheeled_carriage_with_a_zero_has_constant_wheel_speeds(seed):
    spec = load_example("two_wheeled_carriage")
    a = dict((s.name, s) for s in spec.parameters)["a"]
    L0 = spec.lagrangian.subs(a, 0)
    pt, qdd, lam = solve_at(spec, seed, L=L0)
    np.testing.assert_allclose(qdd[3:], [0, 0], atol=ATOL)
    # ... but not for a != 0 (so the check above has teeth)
    pt, qdd, lam = solve_at(spec, seed)
    assert np.max(np.abs(qdd[3:])) > 1e-3


def test_n_trailer_0_is_a_unicycle():
    """Without trailers the car keeps its heading rate and its speed."""
    spec = n_trailer(0)
    x, y, theta0 = spec.coordinates
    xd, yd, thetad = spec.velocities
    pt, qdd, lam = solve_at(spec, 3)
    f = lambda e: float(e.xreplace(pt))  # noqa: E731
    assert qdd[2] == pytest.approx(0, abs=ATOL)
    udot = f(-sp.sin(theta0) * thetad * xd + sp.cos(theta0) * thetad * yd) + f(sp.cos(theta0)) * qdd[0] + f(sp.sin(theta0)) * qdd[1]
    assert udot == pytest.approx(0, abs=ATOL)


def test_crampin_mestdag_disk_member_is_the_vertical_rolling_disk():
    """crampin_mestdag_class(R cos, R sin; masses m, m) is the vertical disk with r1 = phi,
    r2 = theta, s = (x, y), I1 = I, I2 = J: same accelerations at the same state."""
    disk = load_example("vertical_rolling_disk")
    member = crampin_mestdag_class(["R*cos(r2)", "R*sin(r2)"], masses=["m", "m"])
    x, y, theta, phi = disk.coordinates
    r1, r2, s1, s2 = member.coordinates
    P = {p.name: p for p in disk.parameters}
    Q = {p.name: p for p in member.parameters}
    pt, qdd, lam = solve_at(disk, 4)
    rename = {r1: phi, r2: theta, s1: x, s2: y, Q["I1"]: P["I"], Q["I2"]: P["J"], Q["m"]: P["m"], Q["R"]: P["R"]}
    rename.update(zip(member.velocities, [disk.velocities[i] for i in (3, 2, 0, 1)]))
    L = member.lagrangian.xreplace(rename)
    cons = [c.xreplace(rename) for c in member.constraints]
    qdd2, lam2 = constrained_coordinate_solution(L, disk.coordinates, disk.velocities, cons, pt)
    np.testing.assert_allclose(qdd2, qdd, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(lam2, lam, rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------
# Rolling disk: an independent KanesMethod model
# ---------------------------------------------------------------------------


def _kane_rolling_disc():
    """The rolling disc of the sympy.physics.mechanics documentation (Kane's
    method, generalized speeds = angular velocity of the disk in the lean
    frame L; the contact point has zero velocity).  Returns a function
    (q, qdot, params) -> q̈ for q = (yaw, lean, spin)."""
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dot, dynamicsymbols, inertia

    q1, q2, q3 = dynamicsymbols("q1:4")
    u1, u2, u3 = dynamicsymbols("u1:4")
    m, r, g = sp.symbols("m r g", positive=True)
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L]
    forces = [(Dmc, -m * g * Y.z)]
    disc = RigidBody("disc", Dmc, R, m, (I, Dmc))
    km = KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    km.kanes_equations([disc], forces)
    qs, us = [q1, q2, q3], [u1, u2, u3]
    t = sp.Symbol("t")
    qdots = [qq.diff(t) for qq in qs]
    # u in terms of (q, qdot) from the kinematic equations, and qdot(q, u)
    u_of_qd = sp.solve(kd, us, dict=True)[0]
    qd_of_u = km.kindiffdict()
    M, F = km.mass_matrix, km.forcing  # M u̇ = F, functions of (q, u)
    fq = sp.Matrix([qd_of_u[qd] for qd in qdots])
    Jq, Ju = fq.jacobian(qs), fq.jacobian(us)

    def accelerations(q_vals, qd_vals, params):
        state = {**dict(zip(qdots, map(sp.Float, qd_vals))), **dict(zip(qs, map(sp.Float, q_vals)))}
        u_vals = [float(u_of_qd[uu].xreplace(state)) for uu in us]
        point = dict(zip(qs, q_vals))
        point.update(zip(us, u_vals))
        point.update({m: params["m"], r: params["r"], g: params["g"]})
        Mn = np.array(M.xreplace(point).evalf().tolist(), dtype=float)
        Fn = np.array(F.xreplace(point).evalf().tolist(), dtype=float).reshape(-1)
        udot = np.linalg.solve(Mn, Fn)
        Jqn = np.array(Jq.xreplace(point).evalf().tolist(), dtype=float)
        Jun = np.array(Ju.xreplace(point).evalf().tolist(), dtype=float)
        return Jqn @ np.array(qd_vals, dtype=float) + Jun @ udot

    return accelerations


@pytest.mark.parametrize("seed", SEEDS)
def test_rolling_disk_matches_kanes_method(seed):
    spec = load_example("rolling_disk")
    x, y, yaw, lean, spin = spec.coordinates
    xd, yd, yawd, leand, spind = spec.velocities
    pt, qdd, lam = solve_at(spec, seed)
    params = {p.name: float(pt[p]) for p in spec.parameters}
    kane = _kane_rolling_disc()
    expected = kane([float(pt[s]) for s in (yaw, lean, spin)], [float(pt[s]) for s in (yawd, leand, spind)], params)
    np.testing.assert_allclose(qdd[2:], expected, rtol=1e-8, atol=ATOL)
    # the contact point: x_dot = r cos(yaw) spin_dot, y_dot = r sin(yaw) spin_dot, differentiated
    r = float(pt[[p for p in spec.parameters if p.name == "r"][0]])
    c, s = np.cos(float(pt[yaw])), np.sin(float(pt[yaw]))
    w, sd = float(pt[yawd]), float(pt[spind])
    np.testing.assert_allclose(
        qdd[:2], [r * (c * expected[2] - s * w * sd), r * (s * expected[2] + c * w * sd)], rtol=1e-8, atol=ATOL
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_nonholonomic_particle_multiplier(seed):
    """THEORY §9: with v1 = x_dot, v2 = y_dot, v̇1 = −y v1 v2/(1+y²), v̇2 = 0 and
    μ = v1 v2/(1+y²) w.r.t. θ³ = dz − y dx, which is the constraint z_dot − y x_dot."""
    spec = load_example("nonholonomic_particle")
    x, y, z = spec.coordinates
    xd, yd, zd = spec.velocities
    pt, qdd, lam = solve_at(spec, seed)
    Y, v1, v2 = float(pt[y]), float(pt[xd]), float(pt[yd])
    assert qdd[0] == pytest.approx(-Y * v1 * v2 / (1 + Y**2), rel=RTOL)
    assert qdd[1] == pytest.approx(0, abs=ATOL)
    assert lam == pytest.approx([v1 * v2 / (1 + Y**2)], rel=RTOL)

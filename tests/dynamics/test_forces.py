"""Forces, dissipation and control inputs in every field (docs/forces.rst).

Oracles, none of which uses anholo's derivation code:

* the coordinate multiplier method with generalized forces, built by hand in
  tests/oracles.py (``nonlinear_constrained_solution``):
  ``[[W, −Aᵀ], [A, 0]] [q̈; λ] = [F + Q; −(∂φ/∂q)·q̇]``;
* the coordinate multiplication rule with forces, ``E(L + λφ) = Q``
  (``nonlinear_multiplication_rule_solution``), for the vakonomic convention;
* ``sympy.physics.mechanics.KanesMethod`` with the same loads (a force at the
  centre of mass, torques on the bodies): the Chaplygin sleigh with viscous
  friction and a motor torque, and the rolling disc of the sympy documentation
  driven by a motor torque about its axis;
* a hand-written scipy integration of the coordinate multiplier method, for the
  numerics with an input given as a function of time.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import coordinate_el_system, nonlinear_constrained_solution, nonlinear_multiplication_rule_solution, point_on_constraints

from anholo import Chart, Frame, Lagrangian, NonholonomicSystem
from anholo.dynamics.forces import Forces, control_affine
from anholo.dynamics.vakonomic import VakonomicSystem
from anholo.errors import InputError, SystemFileError
from anholo.examples import resolve_system
from anholo.io.systemfile import parse_system
from anholo.system import System

SEEDS = (0, 1, 2)

SLEIGH = """
name = "Chaplygin sleigh with friction and a motor"
coordinates = ["x", "y", "theta"]
parameters = ["m", "I", "a", "c", "k"]
inputs = ["tau"]
lagrangian = "m*(x_dot^2 + y_dot^2)/2 + I*theta_dot^2/2"
frame = [["cos(theta)", "sin(theta)", "0"], ["-sin(theta)", "cos(theta)", "0"], ["0", "0", "1"]]
constraints = ["-sin(theta)*x_dot + cos(theta)*y_dot - a*theta_dot"]
forces = ["0", "0", "tau"]
dissipation = "c*(x_dot^2 + y_dot^2)/2 + k*theta_dot^2/2"
[values]
m = 1
I = 1
a = 0.5
c = 0.1
k = 0.05
"""


def _sleigh():
    spec = parse_system(SLEIGH)
    return spec, System.from_spec(spec)


def _numbers(exprs, point):
    return np.array([float(sp.sympify(e).xreplace(point)) for e in exprs])


def _sleigh_point(spec, seed, extra=()):
    x, y, th = spec.coordinates
    xd, yd, thd = spec.velocities
    pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, [yd], seed)
    rng = np.random.default_rng(seed)
    for s in extra:
        pt[s] = sp.Float(rng.uniform(-1, 1), 30)
    return pt


def _sleigh_forces(spec):
    xd, yd, thd = spec.velocities
    m, I, a, c, k = spec.parameters
    (tau,) = spec.inputs
    return [-c * xd, -c * yd, tau - k * thd]


@pytest.mark.parametrize("seed", SEEDS)
def test_sleigh_nonholonomic_with_forces_matches_the_multiplier_method(seed):
    spec, system = _sleigh()
    field = system.nonholonomic().field()
    pt = _sleigh_point(spec, seed, spec.inputs)
    qdd, lam = nonlinear_constrained_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints,
                                              pt, forces=_sleigh_forces(spec))
    acc = field.natural_accelerations()
    np.testing.assert_allclose(_numbers([acc[q] for q in spec.coordinates], pt), qdd, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(_numbers(field.coordinate_multipliers(), pt), lam, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("seed", SEEDS)
def test_sleigh_chetaev_and_euler_lagrange_with_forces(seed):
    """Chetaev's rule (here = Lagrange–d'Alembert) and the free field with the same forces."""
    spec, system = _sleigh()
    pt = _sleigh_point(spec, seed, spec.inputs)
    Q = _sleigh_forces(spec)
    qdd, lam = nonlinear_constrained_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints,
                                              pt, forces=Q)
    ch = system.chetaev().field()
    acc = ch.natural_accelerations()
    np.testing.assert_allclose(_numbers([acc[q] for q in spec.coordinates], pt), qdd, rtol=1e-9, atol=1e-11)
    W, rhs = coordinate_el_system(spec.lagrangian, spec.coordinates, spec.velocities)
    free = np.linalg.solve(np.array(W.xreplace(pt).evalf(), dtype=float),
                           np.array((rhs + sp.Matrix(Q)).xreplace(pt).evalf(), dtype=float).reshape(-1))
    el = system.euler_lagrange_field().natural_accelerations()
    np.testing.assert_allclose(_numbers([el[q] for q in spec.coordinates], pt), free, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("seed", SEEDS)
def test_sleigh_vakonomic_with_forces_is_the_forced_multiplication_rule(seed):
    """Convention: E(L + λφ) = Q (forces added to the Euler–Lagrange equations of the extended Lagrangian)."""
    spec, system = _sleigh()
    vak = VakonomicSystem(system.nonholonomic())
    fld = vak.field()
    lam_w = sp.Symbol("lamw", real=True)
    pt = _sleigh_point(spec, seed, spec.inputs + (lam_w,))
    qdd, lamdot = nonlinear_multiplication_rule_solution(spec.lagrangian, spec.coordinates, spec.velocities,
                                                         spec.constraints, [lam_w], pt, forces=_sleigh_forces(spec))
    nh = vak.constrained
    # the frame multiplier of the written one: λ = λ' M (M = ω(X_b)); state (q, v^α, λ)
    M = nh.form_matrix
    th = nh.frame.coframe
    state = {s: pt[s] for s in spec.coordinates}
    state.update({s: pt[s] for s in spec.parameters + spec.inputs})
    for al, v in enumerate(nh.free_velocities):
        state[v] = sp.Float(sum(float(th[al, A].xreplace(pt)) * float(pt[u]) for A, u in enumerate(spec.velocities)))
    state[vak.multipliers[0]] = pt[lam_w] * M[0, 0].xreplace(pt)
    acc = fld.natural_accelerations(natural=False)
    np.testing.assert_allclose(_numbers([acc[q] for q in spec.coordinates], state), qdd, rtol=1e-8, atol=1e-10)
    lam_written_rate = float((fld.multiplier_rates[0] / M[0, 0]).xreplace(state))
    assert lam_written_rate == pytest.approx(lamdot[0], rel=1e-8, abs=1e-10)


# --- KanesMethod with the same loads ---------------------------------------------------------------
def _kane_sleigh():
    """The sleigh in KanesMethod: speeds (ẋ, θ̇) independent, ẏ dependent; loads −c v_G at G and
    (τ − k θ̇) N.z on the body.  Returns (q, qdot, params, tau) -> q̈."""
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dot, dynamicsymbols, inertia

    x, y, th = dynamicsymbols("x y theta")
    ux, uy, uth = dynamicsymbols("u_x u_y u_theta")
    m, I, a, c, k = sp.symbols("m I a c k", positive=True)
    tau = sp.Symbol("tau", real=True)
    t = dynamicsymbols._t
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Axis", [th, N.z])
    B.set_ang_vel(N, uth * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    G = O.locatenew("G", x * N.x + y * N.y)
    G.set_vel(N, ux * N.x + uy * N.y)
    P = G.locatenew("P", -a * B.x)
    P.v2pt_theory(G, N, B)
    cons = [dot(P.vel(N), B.y)]
    kd = [ux - x.diff(t), uy - y.diff(t), uth - th.diff(t)]
    body = RigidBody("sleigh", G, B, m, (inertia(B, 0, 0, I), G))
    loads = [(G, -c * (ux * N.x + uy * N.y)), (B, (tau - k * uth) * N.z)]
    km = KanesMethod(N, q_ind=[x, y, th], u_ind=[ux, uth], u_dependent=[uy], kd_eqs=kd, velocity_constraints=cons)
    km.kanes_equations([body], loads)
    Mf, Ff = km.mass_matrix_full, km.forcing_full
    qs, us = [x, y, th], [ux, uy, uth]

    def accelerations(q_vals, qd_vals, params, tau_val):
        point = dict(zip(qs, q_vals))
        point.update(zip(us, qd_vals))
        point.update({m: params["m"], I: params["I"], a: params["a"], c: params["c"], k: params["k"], tau: tau_val})
        Mn = np.array(Mf.xreplace(point).evalf().tolist(), dtype=float)
        Fn = np.array(Ff.xreplace(point).evalf().tolist(), dtype=float).reshape(-1)
        sol = np.linalg.solve(Mn, Fn)
        return sol[3:]  # u̇ = (ẍ, ÿ, θ̈), in the order of km.u (independent first)

    return accelerations, km


@pytest.mark.parametrize("seed", SEEDS)
def test_sleigh_matches_kanes_method_with_the_same_loads(seed):
    spec, system = _sleigh()
    kane, km = _kane_sleigh()
    pt = _sleigh_point(spec, seed, spec.inputs)
    params = {p.name: float(pt[p]) for p in spec.parameters}
    expected = kane([float(pt[q]) for q in spec.coordinates], [float(pt[u]) for u in spec.velocities], params,
                    float(pt[spec.inputs[0]]))
    order = [str(u).split("(")[0] for u in km.u]  # u_x, u_theta, u_y
    by_name = dict(zip(order, expected))
    acc = system.nonholonomic().field().natural_accelerations()
    got = _numbers([acc[q] for q in spec.coordinates], pt)
    np.testing.assert_allclose(got, [by_name["u_x"], by_name["u_y"], by_name["u_theta"]], rtol=1e-9, atol=1e-11)


def _kane_motor_disc():
    """The rolling disc of the sympy documentation (speeds: the disc's angular velocity in L; the contact
    point at rest) driven by a motor torque T about the disc's axis L.y.  Returns (q, qdot, params, T) -> q̈
    for q = (yaw, lean, spin)."""
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dot, dynamicsymbols, inertia

    q1, q2, q3 = dynamicsymbols("q1:4")
    u1, u2, u3 = dynamicsymbols("u1:4")
    m, r, g = sp.symbols("m r g", positive=True)
    T = sp.Symbol("T", real=True)
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
    loads = [(Dmc, -m * g * Y.z), (R, T * L.y)]
    disc = RigidBody("disc", Dmc, R, m, (I, Dmc))
    km = KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    km.kanes_equations([disc], loads)
    qs, us = [q1, q2, q3], [u1, u2, u3]
    t = dynamicsymbols._t
    qdots = [qq.diff(t) for qq in qs]
    u_of_qd = sp.solve(kd, us, dict=True)[0]
    qd_of_u = km.kindiffdict()
    M, F = km.mass_matrix, km.forcing
    fq = sp.Matrix([qd_of_u[qd] for qd in qdots])
    Jq, Ju = fq.jacobian(qs), fq.jacobian(us)

    def accelerations(q_vals, qd_vals, params, T_val):
        state = {**dict(zip(qdots, map(sp.Float, qd_vals))), **dict(zip(qs, map(sp.Float, q_vals)))}
        u_vals = [float(u_of_qd[uu].xreplace(state)) for uu in us]
        point = dict(zip(qs, q_vals))
        point.update(zip(us, u_vals))
        point.update({m: params["m"], r: params["r"], g: params["g"], T: T_val})
        Mn = np.array(M.xreplace(point).evalf().tolist(), dtype=float)
        Fn = np.array(F.xreplace(point).evalf().tolist(), dtype=float).reshape(-1)
        udot = np.linalg.solve(Mn, Fn)
        Jqn = np.array(Jq.xreplace(point).evalf().tolist(), dtype=float)
        Jun = np.array(Ju.xreplace(point).evalf().tolist(), dtype=float)
        return Jqn @ np.array(qd_vals, dtype=float) + Jun @ udot

    return accelerations


def _motor_disc_system():
    """The bundled rolling disk with a motor torque T about the disc's axis, by its frame component:
    in the coordinate frame ⟨Q, ∂/∂spin⟩ = T and ⟨Q, ∂/∂yaw⟩ = T sin(lean) (the axis' component of ∂/∂yaw's
    angular velocity); here written as generalized forces."""
    text = open(resolve_system("rolling_disk").source, encoding="utf-8").read()
    text = text.replace("[values]", 'inputs = ["T"]\nforces = ["0", "0", "T*sin(lean)", "0", "T"]\n\n[values]')
    spec = parse_system(text)
    return spec, System.from_spec(spec)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_rolling_disc_with_a_motor_matches_kanes_method(seed):
    spec, system = _motor_disc_system()
    x, y, yaw, lean, spin = spec.coordinates
    xd, yd, yawd, leand, spind = spec.velocities
    pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, [xd, yd], seed)
    pt[spec.inputs[0]] = sp.Float(0.7 - 0.3 * seed, 30)
    acc = system.nonholonomic().field().natural_accelerations()
    got = _numbers([acc[q] for q in spec.coordinates], pt)
    params = {p.name: float(pt[p]) for p in spec.parameters}
    kane = _kane_motor_disc()
    expected = kane([float(pt[s]) for s in (yaw, lean, spin)], [float(pt[s]) for s in (yawd, leand, spind)], params,
                    float(pt[spec.inputs[0]]))
    np.testing.assert_allclose(got[2:], expected, rtol=1e-8, atol=1e-10)
    qdd, lam = nonlinear_constrained_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints,
                                              pt, forces=system.forces.total)
    np.testing.assert_allclose(got, qdd, rtol=1e-8, atol=1e-10)


# --- the API ------------------------------------------------------------------------------------
def test_frame_components_and_their_inverse():
    """Q_A = θ^i_A F_i: a torque τ about the body axis and a traction f along it, given as frame
    components of the sleigh's body frame, are f cos θ, f sin θ, τ in coordinates (by hand)."""
    chart = Chart("x y theta")
    x, y, th = chart.coordinates
    f, tau = sp.symbols("f tau", real=True)
    frame = Frame(chart, [[sp.cos(th), sp.sin(th), 0], [-sp.sin(th), sp.cos(th), 0], [0, 0, 1]])
    from anholo.geometry.tangent import TangentBundle

    b = TangentBundle(frame)
    F = Forces.from_frame_components(b, [f, 0, tau], inputs=[f, tau])
    assert [sp.simplify(a - e) for a, e in zip(F.total, [f * sp.cos(th), f * sp.sin(th), tau])] == [0, 0, 0]
    assert [sp.simplify(a - e) for a, e in zip(F.frame_components(b), [f, 0, tau])] == [0, 0, 0]
    assert sp.simplify(F.power() - (f * (sp.cos(th) * chart.velocities[0] + sp.sin(th) * chart.velocities[1])
                                    + tau * chart.velocities[2])) == 0


def test_control_affine_split_of_the_sleigh_field():
    """Γ_nh = f0 + τ g with g = (0, a/(I + m a²)) in (v1, v2) on C: the torque drives the turning rate only
    (by hand: (I + m a²) v̇2 = a τ + … in the adapted frame X2 = −sin θ ∂x + cos θ ∂y + ∂θ/a)."""
    spec, system = _sleigh()
    field = system.nonholonomic().field()
    m, I, a, c, k = spec.parameters
    f0, (g,) = control_affine(field.accelerations, spec.inputs)
    assert sp.simplify(g[0]) == 0
    assert sp.simplify(g[1] - a / (I + m * a**2)) == 0
    with pytest.raises(InputError, match="not affine"):
        control_affine([spec.inputs[0] ** 2], spec.inputs)


def test_forces_need_one_entry_per_coordinate():
    with pytest.raises(SystemFileError, match="expected an array of 3 expressions"):
        parse_system(SLEIGH.replace('forces = ["0", "0", "tau"]', 'forces = ["tau"]'))
    with pytest.raises(SystemFileError, match="already declared"):
        parse_system(SLEIGH.replace('inputs = ["tau"]', 'inputs = ["m"]'))
    with pytest.raises(SystemFileError, match="not the Lagrangian"):
        parse_system(SLEIGH.replace('I*theta_dot^2/2"', 'I*theta_dot^2/2 + tau"'))


# --- numerics with an input as a function of (t, state) ---------------------------------------------
def _oracle_trajectory(spec, tau_of_t, q0, u0, t_end, values):
    """Integrate [[W, −Aᵀ], [A, 0]] [q̈; λ] = [F + Q; −(∂φ/∂q)·q̇] with scipy (all by hand)."""
    from scipy.integrate import solve_ivp

    q, u = list(spec.coordinates), list(spec.velocities)
    n = len(q)
    (tau,) = spec.inputs
    sub = {p: sp.Rational(values[p.name]) for p in spec.parameters}
    L = spec.lagrangian.xreplace(sub)
    cons = [c.xreplace(sub) for c in spec.constraints]
    Q = [e.xreplace(sub) for e in _sleigh_forces(spec)]
    W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
    F = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n)) + Q[A] for A in range(n)])
    Am = sp.Matrix(cons).jacobian(u)
    rc = sp.Matrix([-sum(sp.diff(c, q[B]) * u[B] for B in range(n)) for c in cons])
    K = W.row_join(-Am.T).col_join(Am.row_join(sp.zeros(1, 1)))
    fK = sp.lambdify(q + u, K, "numpy")
    fr = sp.lambdify(q + u + [tau], F.col_join(rc), "numpy")

    def rhs(t, s):
        sol = np.linalg.solve(np.array(fK(*s), float), np.array(fr(*s, tau_of_t(t)), float).reshape(-1))
        return np.concatenate([s[n:], sol[:n]])

    res = solve_ivp(rhs, (0, t_end), np.concatenate([q0, u0]), method="DOP853", rtol=1e-11, atol=1e-12)
    return res.y[:, -1]


def test_simulation_with_an_input_matches_the_hand_integrated_multiplier_method():
    from anholo.numerics import simulate

    spec, system = _sleigh()
    values = {"m": "1", "I": "1", "a": "1/2", "c": "1/10", "k": "1/20"}
    q0, u0 = np.array([0.0, 0.0, 0.3]), None
    a = 0.5
    xd0, thd0 = 1.0, 0.4
    yd0 = (np.sin(0.3) * xd0 + a * thd0) / np.cos(0.3)
    u0 = np.array([xd0, yd0, thd0])

    def tau(t):
        return 0.3 * np.sin(2 * t)

    expected = _oracle_trajectory(spec, tau, q0, u0, 6.0, values)
    for kind in ("nonholonomic", "chetaev"):
        from anholo.numerics.ode import from_system

        traj = simulate(from_system(system, kind), (0.0, 6.0), q0, u0, inputs={"tau": lambda t, s: tau(t)},
                        rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(traj.q[:, -1], expected[:3], rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(traj.qdot[:, -1], expected[3:], rtol=1e-7, atol=1e-8)
        assert np.max(np.abs(traj.constraint_residuals())) < 1e-8
    with pytest.raises(InputError, match="no value for the input"):
        simulate(from_system(system, "nonholonomic"), 1.0, q0, u0)


def test_bundled_sleigh_with_motor_obeys_newton_euler():
    """Newton–Euler by hand (lateral contact force λ at the blade, a behind the centre of mass):
    m(u̇ − wω) = −c u, m(ẇ + uω) = −c w + λ, I ω̇ = τ − kω − aλ with w = aω give
    m u̇ = m a ω² − c u and (I + m a²) ω̇ = τ − kω − m a u ω − c a² ω."""
    system = System.load("sleigh_with_motor")
    nh = system.nonholonomic(dependent=[1])
    u, om = nh.free_velocities
    assert (u.name, om.name) == ("u", "omega")
    m, I, a, c, k = system.chart.parameters
    (tau,) = system.inputs
    ud, omd = nh.field().accelerations
    assert sp.simplify(ud - (a * om**2 - c * u / m)) == 0
    assert sp.simplify(omd - (tau - k * om - m * a * u * om - c * a**2 * om) / (I + m * a**2)) == 0


def test_chaplygin_block_does_not_apply_with_forces(capsys):
    """The Chaplygin reduction is for unforced systems: with forces the block says so (not a failure, exit 0)."""
    from anholo.cli import main

    text = open(resolve_system("nonholonomic_particle").source, encoding="utf-8").read()
    assert "[symmetry]" in text
    head, tail = text.split("[symmetry]", 1)
    if "[values]" in head:
        head = head.replace("[values]", 'forces = ["-x_dot", "0", "0"]\n\n[values]', 1)
    else:
        head = head + 'forces = ["-x_dot", "0", "0"]\n\n'
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="anholo-forces-"), "particle.toml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head + "[symmetry]" + tail)
    code = main(["analyze", path, "--quiet", "--sections", "nonholonomic,chaplygin"])
    out = capsys.readouterr().out
    assert code == 0
    assert "chaplygin: does not apply" in out and "Forces:" in out

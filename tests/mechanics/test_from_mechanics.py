"""from_mechanics: models of sympy.physics.mechanics as anholo systems.

Oracles (independent of anholo's dynamics):

* ``sympy.physics.mechanics.KanesMethod`` — the rolling discs of sympy's test_kane.py and
  test_kane5.py, built as sympy builds them (tests/mechanics_models.py): KanesMethod's
  ``mass_matrix_full``/``forcing_full`` solved numerically, ``q̈ = d/dt q̇(q, u)``, compared with
  anholo's Γ_nh at random points of C (tests/mechanics/kane_oracle.py);
* KanesMethod's generalized active forces ``F_r`` for the generalized forces of loads
  (``F_r = Σ_A Q_A ∂q̇^A/∂u_r`` for a holonomic model);
* ``LagrangesMethod`` with the same loads for a damped, driven pendulum (its forcing);
* sympy's own ``kinetic_energy`` — equal to anholo's T on C (anholo computes T from positions,
  sympy from the model's velocities);
* closed forms written here (a particle in gravity).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import (KanesMethod, LagrangesMethod, Particle, Point, ReferenceFrame, RigidBody,
                                     dynamicsymbols, inertia, kinetic_energy)

import anholo
from anholo import MechanicsModelError, from_mechanics
from anholo.io import parse_system
from anholo.algebra import numeric_value

from mechanics_models import rolling_disc, rolling_disc_contact
from mechanics.kane_oracle import compare


@pytest.fixture(scope="module")
def disc():
    KM, values = rolling_disc()
    return KM, values, from_mechanics(KM, values=values)


def test_disc_completed_with_contact_coordinates(disc):
    KM, values, model = disc
    names = [q.name for q in model.chart.coordinates]
    assert names == ["q1", "q2", "q3", "x", "y"]  # z of the contact point removed: its velocity is 0
    assert len(model.constraints) == 2
    q1, q3, x, y = (sp.Symbol(s, real=True) for s in ("q1", "q3", "x", "y"))
    r = next(p for p in model.chart.parameters if p.name == "r")
    xd, yd, q3d = (model.chart.velocities[names.index(s)] for s in ("x", "y", "q3"))
    # no slip: the contact point moves with r*q3_dot along the heading (cos q1, sin q1)
    sol = sp.solve(list(model.constraints), [xd, yd])
    assert sp.simplify(sol[xd] - r * q3d * sp.cos(q1)) == 0
    assert sp.simplify(sol[yd] - r * q3d * sp.sin(q1)) == 0


def test_disc_accelerations_equal_kanes(disc):
    KM, values, model = disc
    assert compare(model, KM, values, count=4, seed=3) < 1e-9


def test_disc_with_contact_coordinates_equal_kanes():
    KM, values = rolling_disc_contact()
    model = from_mechanics(KM, values=values)
    assert [q.name for q in model.chart.coordinates] == ["q1", "q2", "q3", "q4", "q5"]  # the ground point is fixed
    assert [q.name for q in model.dependent] == ["q4", "q5"]  # Kane's dependent speeds u4 = q4', u5 = q5'
    assert compare(model, KM, values, count=4, seed=5) < 1e-9


def test_kinetic_energy_is_sympys_on_C(disc):
    KM, values, model = disc
    t = dynamicsymbols._t
    T_sympy = kinetic_energy(KM._inertial, *KM.bodies)
    T_sympy = model.convert(T_sympy)  # speeds -> (q, q_dot)
    names = [q.name for q in model.chart.coordinates]
    xd, yd = (model.chart.velocities[names.index(s)] for s in ("x", "y"))
    on_C = sp.solve(list(model.constraints), [xd, yd])
    diff = (model.kinetic_energy - T_sympy).xreplace(on_C)
    rng = random.Random(2)
    for _ in range(3):
        pt = {s: rng.uniform(-1, 1) for s in diff.free_symbols}
        assert abs(numeric_value(diff, pt)) < 1e-12
    # off C they differ: sympy's velocities have the rolling built in, anholo's T is the free one
    pt = {s: rng.uniform(-1, 1) for s in (model.kinetic_energy - T_sympy).free_symbols}
    assert abs(numeric_value(model.kinetic_energy - T_sympy, pt)) > 1e-6


def test_gravity_is_a_potential(disc):
    KM, values, model = disc
    q2 = sp.Symbol("q2", real=True)
    m, g, r = (next(p for p in model.chart.parameters if p.name == s) for s in ("m", "g", "r"))
    assert sp.simplify(model.potential_energy - m * g * r * sp.cos(q2)) == 0
    assert not model.has_forces


def test_particle_closed_form():
    x, y = dynamicsymbols("x y")
    m, g = sp.symbols("m g")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    model = from_mechanics(N, bodies=[Particle("p", P, m)], loads=[(P, -m * g * N.y)], coordinates=[x, y])
    X, Y = sp.symbols("x y", real=True)
    M, G = sp.symbols("m g", real=True)
    Xd, Yd = sp.symbols("x_dot y_dot", real=True)
    assert sp.simplify(model.lagrangian.natural_expr() - (M * (Xd**2 + Yd**2) / 2 - M * G * Y)) == 0
    assert model.constraints == ()


def _pendulum(with_loads=True):
    """A pendulum with a viscous damper torque, a constant force along N.x and air drag at the bob."""
    th, w = dynamicsymbols("theta omega")
    m, l, g, c, F, k = sp.symbols("m l g c F k")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, w * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -l * A.y)
    P.v2pt_theory(O, N, A)
    bob = Particle("bob", P, m)
    loads = [(P, -m * g * N.y), (A, -c * w * N.z), (P, F * N.x), (P, -k * P.vel(N))]
    KM = KanesMethod(N, q_ind=[th], u_ind=[w], kd_eqs=[th.diff() - w])
    KM.kanes_equations([bob], loads)
    return KM, loads


def test_generalized_forces_equal_kanes_active_forces():
    KM, loads = _pendulum()
    model = from_mechanics(KM)
    assert model.has_forces
    q = model.chart.coordinates[0]
    # Kane's generalized active force of all loads (u = q̇ here) = Q - ∂V/∂q
    kane = model.convert(KM._form_fr(loads)[0])
    assert sp.simplify(model.forces[0] - model.potential_energy.diff(q) - kane) == 0
    # gravity and the constant force became V; the damper and the drag stay forces
    mm, ll, gg, FF = (next(p for p in model.chart.parameters if p.name == s) for s in ("m", "l", "g", "F"))
    assert sp.simplify(model.potential_energy + mm * gg * ll * sp.cos(q) + FF * ll * sp.sin(q)) == 0
    assert "F" not in {s.name for s in model.forces[0].free_symbols}


def test_generalized_forces_equal_lagranges_forcing():
    th = dynamicsymbols("theta")
    m, l, g, c, F = sp.symbols("m l g c F")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -l * A.y)
    P.v2pt_theory(O, N, A)
    bob = Particle("bob", P, m)
    loads = [(A, -c * th.diff() * N.z), (P, F * N.x)]
    LM = LagrangesMethod(sp.S.Zero, [th], forcelist=loads, frame=N)
    LM.form_lagranges_equations()
    model = from_mechanics(N, bodies=[bob], loads=loads, coordinates=[th])
    # with L = 0, LagrangesMethod's forcing is exactly the generalized force of the loads, Q - ∂V/∂q
    q = model.chart.coordinates[0]
    assert sp.simplify(model.forces[0] - model.potential_energy.diff(q) - model.convert(LM.forcing[0])) == 0


def test_forces_reach_the_field_or_say_why():
    KM, _ = _pendulum()
    model = from_mechanics(KM)
    try:
        fld = model.field()
    except MechanicsModelError as e:
        assert "forces" in str(e)
        return
    # with forces in the field: θ̈ = (Q - m g l sin θ)/(m l²) on the free pendulum
    q, qd = model.chart.coordinates[0], model.chart.velocities[0]
    mm, ll, gg = (next(p for p in model.chart.parameters if p.name == s) for s in ("m", "l", "g"))
    acc = fld.natural_accelerations()[q]
    V = model.potential_energy
    assert sp.simplify(acc - (model.forces[0] - V.diff(q)) / (mm * ll**2)) == 0


def test_pydy_form_solves_to_the_field(disc):
    KM, values, model = disc
    M, F = model.mass_matrix_full, model.forcing_full
    fld = model.field()
    rhs = list(fld.velocity_field()) + list(fld.accelerations)
    rng = random.Random(4)
    syms = set(model.states) | set(model.chart.parameters)
    for _ in range(2):
        pt = {s: rng.uniform(0.3, 1.2) for s in syms}
        Mv = np.array([[complex(numeric_value(e, pt)).real for e in row] for row in M.tolist()])
        Fv = np.array([complex(numeric_value(e, pt)).real for e in F])
        x = np.linalg.solve(Mv, Fv)
        assert np.allclose(x, [complex(numeric_value(e, pt)).real for e in rhs], atol=1e-10)


def test_ode_function_integrates_and_keeps_energy(disc):
    from scipy.integrate import solve_ivp

    KM, values, model = disc
    f = model.ode_function()
    n = model.chart.dim
    x0 = np.array([0.1, 0.2, 0.0, 0.0, 0.0, 0.3, 2.0, -0.4][: n + model._system.m], float)
    sol = solve_ivp(f, (0, 2), x0, rtol=1e-10, atol=1e-12)
    assert sol.success
    E = model._system.restrict(model._system.lagrangian.energy)  # E_L on C, in (q, v^α)
    pv = model._values(None)
    Ef = sp.lambdify(model.states, E.xreplace(pv))
    energies = [Ef(*sol.y[:, i]) for i in range(sol.y.shape[1])]
    assert max(energies) - min(energies) < 1e-7


def test_toml_round_trip(disc):
    KM, values, model = disc
    spec = parse_system(model.to_toml())
    assert [s.name for s in spec.coordinates] == [q.name for q in model.chart.coordinates]
    L = spec.lagrangian
    names = {s.name: s for s in L.free_symbols}
    mine = model.lagrangian.natural_expr()
    sub = {s: names[s.name] for s in mine.free_symbols if s.name in names}
    rng = random.Random(1)
    pt = {s: rng.uniform(0.2, 1.0) for s in L.free_symbols}
    assert abs(numeric_value(mine.xreplace(sub) - L, pt)) < 1e-12
    assert len(spec.constraints) == 2


def test_speed_without_coordinate_and_not_a_rotation_is_an_error():
    q, u, s = dynamicsymbols("q u s")
    m = sp.symbols("m")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", q * N.x)
    P.set_vel(N, u * N.x + s * N.y)
    with pytest.raises(MechanicsModelError, match="speeds"):
        from_mechanics(N, bodies=[Particle("p", P, m)], coordinates=[q], speeds=[u, s], kd_eqs=[q.diff() - u])


def test_inconsistent_angular_velocity_is_an_error():
    q, u = dynamicsymbols("q u")
    m = sp.symbols("m")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    A.set_ang_vel(N, 2 * u * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    body = RigidBody("B", O, A, m, (inertia(A, 1, 1, 1), O))
    with pytest.raises(MechanicsModelError, match="angular velocity"):
        from_mechanics(N, bodies=[body], coordinates=[q], speeds=[u], kd_eqs=[q.diff() - u])


def test_disc_model_through_the_multiplier_method(disc):
    KM, values, model = disc
    assert compare(model, KM, values, count=3, seed=8, route="multipliers") < 1e-9


def test_from_a_sympy_system_equals_kanes():
    """The test_kane5 rolling disc collected in a ``sympy.physics.mechanics.System`` instead."""
    from sympy.physics.mechanics import System
    from sympy.physics.mechanics.tests.test_kane5 import _create_rolling_disc

    props = _create_rolling_disc()
    system = System(props["frame"])
    system.add_coordinates(*props["q_ind"])
    system.add_speeds(*props["u_ind"])
    system.add_speeds(*props["u_dep"], independent=False)
    system.add_kdes(*props["kdes"])
    system.add_nonholonomic_constraints(*props["fnh"])
    system.add_bodies(*props["bodies"])
    system.add_loads(*props["loads"])
    model = from_mechanics(system)
    KM = KanesMethod(props["frame"], props["q_ind"], props["u_ind"], props["kdes"], u_dependent=props["u_dep"],
                     velocity_constraints=props["fnh"], bodies=props["bodies"], forcelist=props["loads"],
                     constraint_solver="LU")
    KM.kanes_equations()
    g, r, m = sp.symbols("g r m")
    assert compare(model, KM, {g: 9.81, r: 0.26, m: 3.43}, count=3, seed=11) < 1e-9


def test_disc_motor_forces_are_kanes_active_forces_on_D():
    """``F_r = Σ_A (Q_A − ∂V/∂q^A) ∂q̇^A/∂u_r`` on C: Kane's generalized active forces of a rolling disc with a
    motor torque and a drag, from anholo's generalized forces and potential."""
    KM, values = rolling_disc(motor=True)
    model = from_mechanics(KM, values=values)
    assert model.has_forces
    t = dynamicsymbols._t
    us = sp.symbols("s1:4", real=True)  # Kane's speeds as plain symbols
    to_s = dict(zip(KM.u, us))

    def kane_expr(e):
        return e.xreplace(to_s).xreplace(model.symbols)

    kdd = KM.kindiffdict()
    names = [q.name for q in model.chart.coordinates]
    vel = dict(zip(names, model.chart.velocities))
    qdot = {vel[q.func.__name__]: kane_expr(kdd[q.diff(t)]) for q in KM.q}
    on_C = sp.solve([c.xreplace(qdot) for c in model.constraints], [vel["x"], vel["y"]], dict=True)[0]
    qdot.update(on_C)
    gen = [model.forces[A] - model.potential_energy.diff(q) for A, q in enumerate(model.chart.coordinates)]
    fr_kane = KM._form_fr(KM.loads)
    rng = random.Random(0)
    for r_, s in enumerate(us):
        mine = sp.Add(*[g.xreplace(qdot) * qdot[v].diff(s) for g, v in zip(gen, model.chart.velocities)])
        diff = mine - kane_expr(fr_kane[r_])
        for _ in range(2):
            pt = {x: rng.uniform(-1, 1) for x in diff.free_symbols}
            assert abs(numeric_value(diff, pt)) < 1e-10


def test_disc_motor_field_equals_kanes():
    KM, values = rolling_disc(motor=True)
    model = from_mechanics(KM, values=values)
    try:
        model.field()
    except MechanicsModelError as e:
        pytest.skip(f"this anholo's nonholonomic field has no forces yet: {e}")
    assert compare(model, KM, values, count=3, seed=9) < 1e-9


def test_toml_with_forces_reads_back():
    from anholo.errors import SystemFileError

    KM, values = rolling_disc(motor=True)
    model = from_mechanics(KM, values=values)
    text = model.to_toml()
    assert "forces = [" in text
    try:
        spec = parse_system(text)
    except SystemFileError as e:
        if "forces" in str(e):
            pytest.skip(f"this anholo's system files have no forces yet: {e}")
        raise
    forces = spec.forces
    assert len(forces) == model.chart.dim
    rng = random.Random(6)
    for mine, read in zip(model.forces, forces):
        by_name = {s.name: s for s in read.free_symbols}
        d = mine.xreplace({s: by_name[s.name] for s in mine.free_symbols if s.name in by_name}) - read
        pt = {s: rng.uniform(0.2, 1.0) for s in d.free_symbols}
        assert abs(numeric_value(d, pt)) < 1e-12


def _nonminimal_pendulum():
    """A particle on a circle of radius l in Cartesian coordinates: y dependent, x² + y² − l² = 0."""
    x, y, ux, uy = dynamicsymbols("x y u_x u_y")
    m, l, g = sp.symbols("m l g")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y)
    KM = KanesMethod(N, q_ind=[x], u_ind=[ux], kd_eqs=[x.diff() - ux, y.diff() - uy], q_dependent=[y],
                     configuration_constraints=[x**2 + y**2 - l**2], u_dependent=[uy],
                     velocity_constraints=[x * ux + y * uy])
    KM.kanes_equations([Particle("p", P, m)], [(P, -m * g * N.y)])
    return KM, {m: 1.3, l: 1.0, g: 9.81}


def test_nonminimal_pendulum_equals_kanes_and_keeps_its_holonomic_constraint():
    KM, values = _nonminimal_pendulum()
    model = from_mechanics(KM, values=values)
    assert [q.name for q in model.chart.coordinates] == ["x", "y"]
    assert len(model.holonomic) == 1 and len(model.constraints) == 1
    assert model.nonholonomic_constraints == ()  # the velocity constraint is the derivative of the holonomic one
    text = model.to_toml()
    assert "holonomic = [" in text and "constraints = [" not in text
    assert compare(model, KM, values, count=3, seed=2, spread=0.8) < 1e-9


def test_added_coordinates_avoid_the_models_names():
    """A length called ``x`` in the model: the contact point's coordinates get other names."""
    q1, q2, q3, u1, u2, u3 = dynamicsymbols("q1 q2 q3 u1 u2 u3")
    x, m, g = sp.symbols("x m g")  # the disc's radius is called x here
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    C = Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", x * L.z)
    Dmc.v2pt_theory(C, N, R)
    disc = RigidBody("disc", Dmc, R, m, (inertia(L, m * x**2 / 4, m * x**2 / 2, m * x**2 / 4), Dmc))
    model = from_mechanics(N, bodies=[disc], loads=[(Dmc, -m * g * N.z)], coordinates=[q1, q2, q3])
    names = [q.name for q in model.chart.coordinates]
    assert names[:3] == ["q1", "q2", "q3"] and "x" not in names and len(names) == 5
    assert "x" in [p.name for p in model.chart.parameters]


def test_model_renders_itself(disc):
    KM, values, model = disc
    text = str(model)
    assert "added x: x-coordinate of the point C in N" in text and "constraint q3_dot*r*cos(q1) - x_dot = 0" in text
    d = model.to_dict()
    assert d["coordinates"] == ["q1", "q2", "q3", "x", "y"] and len(d["constraints"]) == 2
    assert sp.sympify(d["potential_energy"]).free_symbols  # g*m*r*cos(q2), as text
    assert model.as_latex().startswith("\\begin{aligned}") and "x_{dot}" not in model.as_latex()


def test_ode_function_needs_values():
    KM, values = rolling_disc()
    model = from_mechanics(KM)  # no values
    with pytest.raises(MechanicsModelError, match="no values for the parameters"):
        model.ode_function()


def test_multiplier_form_equals_kanes(disc):
    KM, values, model = disc
    assert compare(model, KM, values, count=3, seed=12, route="form") < 1e-9
    M, F, x = model.multiplier_form()
    assert M.shape == (12, 12) and [s.name for s in x[-2:]] == ["lambda_1", "lambda_2"]


def test_multiplier_ode_function_follows_the_field(disc):
    """Both ODE routes from the same point of C agree after a short time (the field's route is checked
    against KanesMethod above; here the numerical multiplier route is checked against it)."""
    from scipy.integrate import solve_ivp

    KM, values, model = disc
    f_field, f_mult = model.ode_function(), model.ode_function(route="multipliers")
    x0 = np.array([0.1, 0.2, 0.0, 0.0, 0.0, 0.3, 2.0, -0.4])
    vf = sp.lambdify(model.states, [e.xreplace(model._values(None)) for e in model.field().velocity_field()])
    y0 = np.concatenate([x0[:5], vf(*x0)])
    a = solve_ivp(f_field, (0, 0.5), x0, rtol=1e-11, atol=1e-12).y[:5, -1]
    b = solve_ivp(f_mult, (0, 0.5), y0, rtol=1e-11, atol=1e-12).y[:5, -1]
    assert np.allclose(a, b, atol=1e-7)


def test_inconsistent_angular_velocity_of_a_position_frame_is_an_error():
    """A frame used only to write a position (not a body's frame) is checked too."""
    q, u = dynamicsymbols("q u")
    m, l = sp.symbols("m l")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    A.set_ang_vel(N, 3 * u * N.z)  # q' = u, so this is wrong
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * A.x)
    with pytest.raises(MechanicsModelError, match="angular velocity of A"):
        from_mechanics(N, bodies=[Particle("p", P, m)], coordinates=[q], speeds=[u], kd_eqs=[q.diff() - u])


def test_system_with_gravity_and_an_actuator_equals_kanes():
    """A damped pendulum as a ``System``: uniform gravity and a ``TorqueActuator`` (its loads are read)."""
    from sympy.physics.mechanics import System, TorqueActuator

    th, w = dynamicsymbols("theta omega")
    m, l, g, c = sp.symbols("m l g c")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, w * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -l * A.y)
    P.v2pt_theory(O, N, A)
    bob = Particle("bob", P, m)
    system = System(N, O)
    system.add_coordinates(th)
    system.add_speeds(w)
    system.add_kdes(th.diff() - w)
    system.add_bodies(bob)
    system.apply_uniform_gravity(-g * N.y)
    system.add_actuators(TorqueActuator(-c * w, N.z, A, N))
    model = from_mechanics(system)
    KM = KanesMethod(N, q_ind=[th], u_ind=[w], kd_eqs=[th.diff() - w])
    KM.kanes_equations([bob], [(P, -m * g * N.y), (A, -c * w * N.z), (N, c * w * N.z)])
    q = model.chart.coordinates[0]
    kane = model.convert(KM._form_fr(KM.loads)[0])
    assert sp.simplify(model.forces[0] - model.potential_energy.diff(q) - kane) == 0

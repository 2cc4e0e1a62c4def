"""The round trip sympy.physics.mechanics → anholo → the user's symbols (MechanicsModel.in_user_symbols).

Oracles (independent of anholo): sympy's own KanesMethod / LagrangesMethod for the same model —
``mass_matrix_full``, ``forcing_full``, ``kindiffdict()``, ``rhs()``, ``linearize()`` — evaluated at random
points (of C where the model has constraints, the dependent speeds from KanesMethod's ``_Ars``, the dependent
rates projected onto the kernel of LagrangesMethod's constraint matrix); PyDy's integration of the returned
form against anholo's own simulation (``MechanicsModel.ode_function`` with scipy); the system-file reader for
the ``[signs]`` of ``to_toml``.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import (KanesMethod, LagrangesMethod, Particle, Point, ReferenceFrame,
                                     dynamicsymbols)

from anholo import MechanicsModelError, System, from_mechanics
from anholo.errors import AnholoError, ArgumentError

from mechanics_models import (incline_disc, lagrange_sleigh, nonminimal_pendulum_lagrange, rolling_disc,
                              rolling_disc_contact)


def _kane_points(KM, values, count, seed):
    """``count`` points ``(q, u)`` of C of a KanesMethod: q and the independent u random, ``u_d = A_rs u_i``."""
    rng = random.Random(seed)
    p = len(KM.u) - len(KM._udep)
    Ars = sp.lambdify(list(KM.q) + list(values), KM._Ars) if KM._udep else None
    out = []
    for _ in range(count):
        q = [rng.uniform(-1, 1) for _ in KM.q]
        ui = [rng.uniform(-1, 1) for _ in range(p)]
        ud = list(np.array(Ars(*q, *values.values()), float) @ ui) if Ars else []
        out.append(q + ui + ud)
    return out


def _evaluate(exprs, args, values):
    f = sp.lambdify(list(args) + list(values), exprs, cse=True, modules="numpy")
    return lambda point: [np.array(x, float) for x in f(*point, *values.values())]


@pytest.fixture(scope="module")
def disc():
    KM, values = rolling_disc()
    model = from_mechanics(KM, values=values)
    return KM, values, model, model.in_user_symbols()


def test_disc_in_the_users_symbols_has_sympys_shape(disc):
    KM, values, model, view = disc
    assert list(view.q) == list(KM.q) and list(view.u) == list(KM.u)
    assert view.mass_matrix_full.shape == KM.mass_matrix_full.shape == (6, 6)
    assert model.chart.dim == 5  # anholo's own state is longer: the contact point (x, y) was added
    assert [str(k) for k in view.added_rates] == ["x(t)", "y(t)"]
    assert view.mass_matrix_full.free_symbols <= {sp.Symbol("m"), sp.Symbol("r"), dynamicsymbols._t}


def test_disc_matrices_equal_kanes_entrywise(disc):
    """No dependent speeds: KanesMethod's mass_matrix_full / forcing_full entry by entry at random points."""
    KM, values, model, view = disc
    f = _evaluate([view.mass_matrix_full, view.forcing_full, KM.mass_matrix_full, KM.forcing_full],
                  list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 3, seed=1):
        M, F, Ms, Fs = f(point)
        assert np.abs(Ms).max() > 0.1 and np.abs(Fs).max() > 0.1
        assert np.allclose(M, Ms, atol=1e-12) and np.allclose(F, Fs, atol=1e-12)


def test_disc_kindiffdict_rhs_and_contact_rates(disc):
    """kindiffdict and rhs() (anholo's Γ_nh) equal KanesMethod's; the contact point, which sympy's model never
    positions, moves along the heading ``(cos q1, sin q1)`` at the rolling speed ``r q̇3`` (q̇3 from
    KanesMethod's kindiffdict)."""
    KM, values, model, view = disc
    kd, kd_s = view.kindiffdict(), KM.kindiffdict()
    assert set(kd) == set(kd_s)
    qd = list(KM.q.diff(dynamicsymbols._t))
    rates = view.added_rates
    x, y = (dynamicsymbols(s) for s in "xy")
    q1, q2, q3 = KM.q
    rolling = sp.Symbol("r") * kd_s[q3.diff()] * sp.Matrix([sp.cos(q1), sp.sin(q1)])
    f = _evaluate([sp.Matrix([kd[d] for d in qd]), sp.Matrix([kd_s[d] for d in qd]), view.rhs(), KM.rhs(),
                   sp.Matrix([rates[x], rates[y]]), rolling], list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 3, seed=2):
        a, b, R, Rs, rc, expected = f(point)
        assert np.allclose(a, b, atol=1e-12)
        assert np.allclose(R, Rs, atol=1e-10)
        assert np.abs(expected).max() > 1e-3 and np.allclose(rc, expected, atol=1e-12)


def test_disc_with_a_motor_and_drag_equals_kanes_entrywise():
    KM, values = rolling_disc(motor=True)
    view = from_mechanics(KM, values=values).in_user_symbols()
    f = _evaluate([view.mass_matrix_full, view.forcing_full, KM.mass_matrix_full, KM.forcing_full, view.rhs(),
                   KM.rhs()], list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 2, seed=3):
        M, F, Ms, Fs, R, Rs = f(point)
        assert np.allclose(M, Ms, atol=1e-12) and np.allclose(F, Fs, atol=1e-12)
        assert np.allclose(R, Rs, atol=1e-10)


def test_contact_disc_with_dependent_speeds_solves_as_kanes():
    """test_kane5's disc (contact coordinates, dependent speeds u4, u5, implicit kinematics): sympy's 10×10 shape
    and implicit kinematic block; M⁻¹F equal to KanesMethod's at points of C (the dynamic rows differ from
    KanesMethod's by multiples of the constraints, see the module docstring of anholo.io.mechanics_roundtrip)."""
    KM, values = rolling_disc_contact()
    view = from_mechanics(KM, values=values).in_user_symbols()
    assert view.mass_matrix_full.shape == KM.mass_matrix_full.shape == (10, 10)
    assert list(view.u) == list(KM.u) and view._udep == list(KM._udep)
    f = _evaluate([view.mass_matrix_full, view.forcing_full, KM.mass_matrix_full, KM.forcing_full, view.rhs(),
                   view.mass_matrix_kin, KM.mass_matrix_kin], list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 3, seed=4):
        M, F, Ms, Fs, R, K, Ks = f(point)
        expected = np.linalg.solve(Ms, Fs.ravel())
        assert np.allclose(np.linalg.solve(M, F.ravel()), expected, atol=1e-10)
        assert np.allclose(R.ravel(), expected, atol=1e-10)
        assert np.allclose(K, Ks, atol=1e-12)
        assert not np.allclose(K, np.eye(5))  # the implicit form, as the user asked for


def test_linearize_equals_kanes(disc):
    """KanesMethod.linearize and the form's linearize (sympy's Linearizer on anholo's equations) at a random
    operating point (with its u̇ from KanesMethod's rhs)."""
    KM, values, model, view = disc
    rng = random.Random(5)
    op = {s: rng.uniform(-1, 1) for s in list(KM.q) + list(KM.u)}
    rhs = KM.rhs().xreplace(op).xreplace(values)
    op.update({u.diff(): rhs[3 + i] for i, u in enumerate(KM.u)})
    op.update(values)
    A1, B1, r1 = KM.linearize(op_point=op, A_and_B=True)
    A2, B2, r2 = view.linearize(op_point=op, A_and_B=True)
    A1, A2 = (np.array(A.xreplace(values), float) for A in (A1, A2))
    assert A1.shape == A2.shape == (6, 6) and np.abs(A1).max() > 0.1
    assert np.allclose(A1, A2, atol=1e-10)
    assert list(r1) == list(r2) == []


def test_pydy_integrates_the_form_as_anholo_simulates():
    """pydy.System(form) integrated (its own code generation, odeint) = anholo's field integrated with scipy
    from the same state, in the user's q and u after 1.5 s (the motor disc: forces too)."""
    pydy_system = pytest.importorskip("pydy.system")
    from scipy.integrate import solve_ivp

    KM, values = rolling_disc(motor=True)
    model = from_mechanics(KM, values=values)
    view = model.in_user_symbols()
    q0, u0 = [0.1, 0.2, 0.0], [0.3, 2.0, -0.4]
    times = np.linspace(0, 1.5, 16)
    sysm = pydy_system.System(view, constants=values, times=times,
                              initial_conditions=dict(zip(list(KM.q) + list(KM.u), q0 + u0)))
    x_pydy = sysm.integrate(rtol=1e-11, atol=1e-11)
    # anholo's state (q̃, v^α): the contact point at the origin, v^α solved from q̇ = velocity_field(q̃, v)
    pv = {p: values[next(k for k in values if str(k) == p.name)] for p in model.chart.parameters}
    kd = sp.lambdify(list(KM.q) + list(KM.u), [view.kindiffdict()[q.diff()].xreplace(values) for q in KM.q])
    rates = sp.lambdify(list(KM.q) + list(KM.u), [e.xreplace(values) for e in view.added_rates.values()])
    qtilde = q0 + [0.0, 0.0]
    qdot = list(kd(*q0, *u0)) + list(rates(*q0, *u0))
    vf = sp.lambdify(model.states, [e.xreplace(pv) for e in model.field().velocity_field()])
    n = model.chart.dim
    Jv = np.array([[vf(*qtilde, *np.eye(3)[a])[A] for a in range(3)] for A in range(n)])
    v0 = np.linalg.lstsq(Jv, np.array(qdot), rcond=None)[0]
    assert np.allclose(Jv @ v0, qdot, atol=1e-12)
    sol = solve_ivp(model.ode_function(), (0, 1.5), qtilde + list(v0), t_eval=times, rtol=1e-11, atol=1e-12)
    speeds = sp.lambdify(list(model.chart.coordinates) + list(model.chart.velocities),
                         [model.speeds[u.func.__name__].xreplace(pv) for u in KM.u])
    for i in range(len(times)):
        x = sol.y[:, i]
        qd = vf(*x)
        assert np.allclose(x_pydy[i, :3], x[:3], atol=1e-7)
        assert np.allclose(x_pydy[i, 3:], speeds(*x[:n], *qd), atol=1e-7)
    assert abs(x_pydy[-1, 2] - q0[2]) > 0.5  # it moved


def test_pydy_ode_function_of_the_contact_disc():
    """PyDy's generate_ode_function on the form's full matrices (dependent speeds) = KanesMethod's rhs on C."""
    codegen = pytest.importorskip("pydy.codegen.ode_function_generators")
    KM, values = rolling_disc_contact()
    view = from_mechanics(KM, values=values).in_user_symbols()
    consts = list(values)
    f = codegen.generate_ode_function(view.forcing_full, list(view.q), list(view.u), consts,
                                      mass_matrix=view.mass_matrix_full)
    oracle = _evaluate([KM.mass_matrix_full, KM.forcing_full], list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 2, seed=6):
        Ms, Fs = oracle(point)
        got = f(np.array(point), 0.0, np.array([values[c] for c in consts]))
        assert np.allclose(got, np.linalg.solve(Ms, Fs.ravel()), atol=1e-10)


# --- LagrangesMethod -----------------------------------------------------------------------------------

def _lagrange_points(LM, values, count, seed):
    """Points ``(q, q̇)`` of C: q random, q̇ random projected onto the kernel of ∂coneqs/∂q̇."""
    rng = random.Random(seed)
    qd = list(LM.q.diff(dynamicsymbols._t))
    A = sp.lambdify(list(LM.q) + list(values), LM.coneqs.jacobian(qd)) if len(LM.coneqs) else None
    out = []
    for _ in range(count):
        q = [rng.uniform(-1, 1) for _ in LM.q]
        v = np.array([rng.uniform(-1, 1) for _ in LM.q])
        if A is not None:
            Av = np.array(A(*q, *values.values()), float)
            v = v - np.linalg.pinv(Av) @ (Av @ v)
        out.append(q + list(v))
    return out


@pytest.mark.parametrize("build", [incline_disc, lagrange_sleigh, nonminimal_pendulum_lagrange])
def test_lagranges_method_round_trip(build):
    """from_mechanics(LagrangesMethod) → anholo → LagrangesMethod's layout: mass_matrix_full and forcing_full entry
    by entry, and rhs() (anholo's q̈ and multipliers) equal to LagrangesMethod.rhs() at points of C."""
    LM, values = build()
    model = from_mechanics(LM, values=values)
    view = model.in_user_symbols()
    assert view.mass_matrix_full.shape == LM.mass_matrix_full.shape
    args = list(LM.q) + list(LM.q.diff(dynamicsymbols._t))
    f = _evaluate([view.mass_matrix_full, view.forcing_full, LM.mass_matrix_full, LM.forcing_full, view.rhs(),
                   LM.rhs()], args, values)
    for point in _lagrange_points(LM, values, 3, seed=7):
        M, F, Ms, Fs, R, Rs = f(point)
        assert np.allclose(M, Ms, atol=1e-12) and np.allclose(F, Fs, atol=1e-12)
        assert np.allclose(R, Rs, atol=1e-10)
        assert np.abs(Rs[len(LM.q):]).max() > 1e-3


def test_lagranges_method_field_is_anholos():
    """The sleigh read from a LagrangesMethod: anholo's nonholonomic field conserves nothing it should not — with
    the damping torque the energy decreases at the rate −c θ̇² (its power), checked on the field."""
    LM, values = lagrange_sleigh()
    model = from_mechanics(LM, values=values)
    assert [q.name for q in model.chart.coordinates] == ["x", "y", "theta"] and model.has_forces
    fld = model.field()
    s = model._system
    E = s.restrict(s.lagrangian.energy)
    c = next(p for p in model.chart.parameters if p.name == "c")
    theta_dot = fld.velocity_field()[2]
    rng = random.Random(8)
    d = fld(E) + c * theta_dot**2
    for _ in range(3):
        pt = {x: rng.uniform(-1, 1) for x in d.free_symbols}
        assert abs(float(d.xreplace(pt))) < 1e-12


def test_lagranges_method_linearize_equals_sympys():
    LM, values = lagrange_sleigh()
    view = from_mechanics(LM, values=values).in_user_symbols()
    x, y, th = LM.q
    xd, yd, thd = LM.q.diff(dynamicsymbols._t)
    point = _lagrange_points(LM, values, 1, seed=9)[0]
    op = dict(zip(list(LM.q) + [xd, yd, thd], point))
    rhs = LM.rhs().xreplace(op).xreplace(values)
    op.update(dict(zip(list(LM.q.diff(dynamicsymbols._t, 2)) + list(LM.lam_vec), rhs[3:])))
    op.update(values)
    kw = dict(q_ind=[x, y, th], qd_ind=[xd, thd], qd_dep=[yd], op_point=op, A_and_B=True)
    A1, B1, r1 = LM.linearize(**kw)
    A2, B2, r2 = view.linearize(**kw)
    A1, A2 = (np.array(A.xreplace(values), float) for A in (A1, A2))
    assert np.abs(A1).max() > 0.1 and np.allclose(A1, A2, atol=1e-10)


# --- system files keep signs --------------------------------------------------------------------------

def _driven_pendulum():
    th, w = dynamicsymbols("theta omega")
    m, l, g = sp.symbols("m l g", positive=True)
    tau_l, c = sp.symbols("tau_l", real=True), sp.symbols("c")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, w * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", -l * A.y)
    P.v2pt_theory(O, N, A)
    KM = KanesMethod(N, q_ind=[th], u_ind=[w], kd_eqs=[th.diff() - w])
    KM.kanes_equations([Particle("bob", P, m)], [(P, -m * g * N.y), (A, (tau_l - c * w) * N.z)])
    return KM, {m: 1.0, l: 0.5, g: 9.81, tau_l: 0.3, c: 0.1}


def test_to_toml_keeps_signs(tmp_path):
    """A load symbol declared real=True stays real in the system file, so a negative value is accepted by the
    reader; without the [signs] line the same value is refused (the parameter would be positive)."""
    KM, values = _driven_pendulum()
    model = from_mechanics(KM, values=values)
    assert model.signs == {"tau_l": "real", "c": "real"}
    text = model.to_toml()
    assert '[signs]\nc = "real"\ntau_l = "real"' in text
    path = tmp_path / "pendulum.toml"
    path.write_text(text)
    system = System.load(str(path), {"tau_l": -0.3})
    forces = system.forces.generalized[0]  # −c θ̇ + τ_l with τ_l = −0.3 substituted
    assert "tau_l" not in {s.name for s in forces.free_symbols}
    assert abs(float(forces.xreplace({s: 0 for s in forces.free_symbols})) + 0.3) < 1e-15
    stripped = tmp_path / "no_signs.toml"
    stripped.write_text(text.replace('tau_l = "real"\n', ""))
    with pytest.raises(AnholoError):
        System.load(str(stripped), {"tau_l": -0.3})


def test_declared_signs_are_kept_and_positive_ones_are_not_listed():
    q = dynamicsymbols("q")
    m = sp.Symbol("m", positive=True)
    k = sp.Symbol("k", nonnegative=True)
    e = sp.Symbol("e", negative=True)
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", q * N.x)
    model = from_mechanics(N, bodies=[Particle("p", P, m)], loads=[(P, (e - k * q) * N.x)], coordinates=[q])
    assert model.signs == {"k": "nonnegative", "e": "negative"}
    assert 'e = "negative"' in model.to_toml() and 'm = "' not in model.to_toml()


# --- errors ---------------------------------------------------------------------------------------------

def test_unsupported_sources_are_one_line_errors():
    with pytest.raises(ArgumentError, match="KanesMethod, a LagrangesMethod") as e:
        from_mechanics(42)
    assert "\n" not in str(e.value)
    LM, _ = incline_disc()
    with pytest.raises(ArgumentError, match="drop the keywords"):
        from_mechanics(LM, coordinates=list(LM.q))


def test_model_without_speeds_has_no_user_form():
    x = dynamicsymbols("x")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    model = from_mechanics(N, bodies=[Particle("p", O.locatenew("P", x * N.x), sp.Symbol("m"))], coordinates=[x])
    with pytest.raises(MechanicsModelError, match="no speeds of its own"):
        model.in_user_symbols()


def test_lagranges_method_errors():
    q1, q2 = dynamicsymbols("q1 q2")
    q1d, q2d = dynamicsymbols("q1 q2", 1)
    F = dynamicsymbols("F")
    with pytest.raises(MechanicsModelError, match="redundant"):
        from_mechanics(LagrangesMethod((q1d**2 + q2d**2) / 2, [q1, q2], nonhol_coneqs=[q1d - q2d, 2 * q1d - 2 * q2d]))
    with pytest.raises(MechanicsModelError, match="specified inputs"):
        from_mechanics(LagrangesMethod((q1d**2 + q2d**2) / 2 + F * q1, [q1, q2]))
    with pytest.raises(MechanicsModelError, match="affine"):
        from_mechanics(LagrangesMethod((q1d**2 + q2d**2) / 2, [q1, q2], nonhol_coneqs=[q1d - 1]))


@pytest.mark.slow
def test_bicycle_in_the_users_symbols_solves_as_kanes():
    """The Whipple bicycle of sympy's test_kane3 (wheel angles and the rear contact added by anholo, a holonomic
    pitch constraint, three dependent speeds): KanesMethod's 10×10 shape in the user's q and u, and ``M⁻¹F`` equal
    to KanesMethod's ``(q̇, u̇)`` at points of C (the pitch solved from the configuration constraint)."""
    from mechanics.kane_oracle import kane_points
    from mechanics_models import whipple_bicycle

    KM, values = whipple_bicycle()
    view = from_mechanics(KM, values=values).in_user_symbols()
    assert view.mass_matrix_full.shape == KM.mass_matrix_full.shape == (10, 10)
    assert list(view.q) == list(KM.q) and list(view.u) == list(KM.u)
    assert sorted(str(k) for k in view.added_rates) == ["q3(t)", "q6(t)", "x(t)", "y(t)"]
    f = _evaluate([view.mass_matrix_full, view.forcing_full], list(KM.q) + list(KM.u), values)
    name = lambda s: s.func.__name__  # noqa: E731
    for qv, uv, qdv, _qdd, udv in kane_points(KM, values, 2, seed=1, spread=0.5):
        M, F = f([qv[name(q)] for q in KM.q] + [uv[name(u)] for u in KM.u])
        expected = [qdv[name(q)] for q in KM.q] + [udv[name(u)] for u in KM.u]
        assert np.allclose(np.linalg.solve(M, F.ravel()), expected, rtol=1e-8, atol=1e-8)


def test_form_of_a_sympy_system_solves_as_kanes():
    """The test_kane5 disc collected in a ``sympy.physics.mechanics.System``: the same user form."""
    from sympy.physics.mechanics import System as MechanicsSystem
    from sympy.physics.mechanics.tests.test_kane5 import _create_rolling_disc

    props = _create_rolling_disc()
    system = MechanicsSystem(props["frame"])
    system.add_coordinates(*props["q_ind"])
    system.add_speeds(*props["u_ind"])
    system.add_speeds(*props["u_dep"], independent=False)
    system.add_kdes(*props["kdes"])
    system.add_nonholonomic_constraints(*props["fnh"])
    system.add_bodies(*props["bodies"])
    system.add_loads(*props["loads"])
    view = from_mechanics(system).in_user_symbols()
    KM = KanesMethod(props["frame"], props["q_ind"], props["u_ind"], props["kdes"], u_dependent=props["u_dep"],
                     velocity_constraints=props["fnh"], bodies=props["bodies"], forcelist=props["loads"],
                     constraint_solver="LU")
    KM.kanes_equations()
    assert list(view.q) == list(KM.q) and list(view.u) == list(KM.u)
    g, r, m = sp.symbols("g r m")
    values = {g: 9.81, r: 0.26, m: 3.43}
    f = _evaluate([view.mass_matrix_full, view.forcing_full, KM.mass_matrix_full, KM.forcing_full],
                  list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 2, seed=10):
        M, F, Ms, Fs = f(point)
        assert np.allclose(np.linalg.solve(M, F.ravel()), np.linalg.solve(Ms, Fs.ravel()), atol=1e-10)


def test_form_of_a_model_given_by_keywords():
    """test_kane5's disc given to from_mechanics as keywords (speeds, kd_eqs, velocity_constraints): the last speeds
    are the dependent ones, as in KanesMethod's ``u``; the form solves as KanesMethod."""
    from sympy.physics.mechanics.tests.test_kane5 import _create_rolling_disc

    props = _create_rolling_disc()
    view = from_mechanics(props["frame"], bodies=props["bodies"], loads=props["loads"],
                          coordinates=props["q_ind"], speeds=list(props["u_ind"]) + list(props["u_dep"]),
                          kd_eqs=props["kdes"], velocity_constraints=props["fnh"]).in_user_symbols()
    KM = KanesMethod(props["frame"], props["q_ind"], props["u_ind"], props["kdes"], u_dependent=props["u_dep"],
                     velocity_constraints=props["fnh"], bodies=props["bodies"], forcelist=props["loads"],
                     constraint_solver="LU")
    KM.kanes_equations()
    assert view._udep == list(props["u_dep"]) and view.mass_matrix_full.shape == (10, 10)
    g, r, m = sp.symbols("g r m")
    values = {g: 9.81, r: 0.26, m: 3.43}
    f = _evaluate([view.mass_matrix_full, view.forcing_full, KM.mass_matrix_full, KM.forcing_full],
                  list(KM.q) + list(KM.u), values)
    for point in _kane_points(KM, values, 2, seed=11):
        M, F, Ms, Fs = f(point)
        assert np.allclose(np.linalg.solve(M, F.ravel()), np.linalg.solve(Ms, Fs.ravel()), atol=1e-10)

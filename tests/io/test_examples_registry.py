"""Tests of the bundled examples and their registry, anholo.examples."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp

from anholo.errors import AnholoError, SystemFileError, UnknownExampleError
from anholo.examples import (
    example_names,
    example_path,
    list_examples,
    load_example,
    n_trailer,
    n_trailer_toml,
    resolve_system,
    crampin_mestdag_class,
    crampin_mestdag_class_toml,
)
from anholo.io import SystemSpec, parse_system

# The example files and their titles.
EXPECTED = {
    "chaplygin_sleigh": "Chaplygin sleigh",
    "knife_edge": "Knife edge on an inclined plane",
    "nonholonomic_particle": "Nonholonomic particle",
    "polar_particle": "Particle in a central potential (polar coordinates)",
    "rigid_body": "Free rigid body",
    "rolling_disk": "Rolling disk",
    "rotating_knife_edge": "Knife edge with a driven blade",
    "crampin_mestdag_class": "Crampin-Mestdag class (s_i_dot = A_i(r2)*r1_dot)",
    "sphere_on_turntable": "Sphere on a turntable",
    "spherical_pendulum": "Spherical pendulum",
    "two_wheeled_carriage": "Two-wheeled carriage",
    "vertical_rolling_disk": "Vertical rolling disk",
    "appell_hamel": "Appell-Hamel constraint",
    "conformal_constraint": "Conformally holonomic constraint",
    "darboux_4d": "Four-dimensional Darboux-type constraint",
    "nonhomogeneous_counterexample": "Non-homogeneous nonlinear constraint (counterexample)",
    "parallel_velocities": "Two particles with parallel velocities (Benenti type)",
    "two_particles_perpendicular": "Two particles with perpendicular velocities (Talamucci 2025, Example 2)",
    "chaplygin_ball": "Chaplygin ball (Euler angles)",
    "roller_racer": "Roller racer",
    "snakeboard": "Snakeboard",
    "sleigh_with_motor": "Chaplygin sleigh with friction and a motor",
    "nonminimal_pendulum": "Non-minimal pendulum",
    "tilted_knife_edge": "Knife edge on a periodically tilted plane",
    "whipple_bicycle": "Whipple bicycle",
    "rattleback": "Rattleback",
    "whipple_bicycle_pitch_rate": "Whipple bicycle (pitch-rate constraint)",
    "routh_sphere": "Routh sphere",
    "disk_on_turntable": "Vertical disk on a turntable",
}
# Generated families, listed once by list_examples.
FAMILIES = {
    "n_trailer_<n>": "n-trailer system: a car towing n trailers (any n >= 0, e.g. n_trailer_2)",
}


def same(a, b) -> bool:
    return sp.simplify(a - b) == 0


def test_list_examples():
    listing = list_examples()
    assert listing == sorted(listing)
    assert dict(listing) == {**EXPECTED, **FAMILIES}
    assert len(listing) == len(EXPECTED) + len(FAMILIES)
    assert example_names() == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_example_loads(name):
    spec = load_example(name)
    assert isinstance(spec, SystemSpec)
    assert spec.name == EXPECTED[name]
    assert spec.description.strip()
    assert len(spec.velocities) == len(spec.coordinates)
    if spec.frame is not None:
        n = len(spec.coordinates)
        assert len(spec.frame) == n and all(len(row) == n for row in spec.frame)
    assert set(spec.values) <= set(spec.parameters)


def test_example_path():
    path = example_path("rigid_body")
    assert path.name == "rigid_body.toml"
    assert path.is_file()
    assert 'name = "Free rigid body"' in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("bad", ["nope", "../errors", "rigid_body.toml", ""])
def test_example_path_unknown(bad):
    with pytest.raises(UnknownExampleError) as info:
        example_path(bad)
    for name in [*EXPECTED, *FAMILIES]:
        assert name in str(info.value)


def test_rigid_body():
    s = load_example("rigid_body")
    phi, theta, psi = s.coordinates
    phid, thetad, psid = s.velocities
    I1, I2, I3 = s.parameters
    assert [str(q) for q in s.coordinates] == ["phi", "theta", "psi"]
    omega = [
        phid * sp.sin(theta) * sp.sin(psi) + thetad * sp.cos(psi),
        phid * sp.sin(theta) * sp.cos(psi) - thetad * sp.sin(psi),
        phid * sp.cos(theta) + psid,
    ]
    expected_L = (I1 * omega[0] ** 2 + I2 * omega[1] ** 2 + I3 * omega[2] ** 2) / 2
    assert same(s.lagrangian, expected_L)
    # Omega_j(X_i) = delta_ij: the frame is dual to the body one-forms.
    W = sp.Matrix([[sp.diff(w, v) for v in s.velocities] for w in omega])
    F = sp.Matrix(s.frame)
    assert (W * F.T).applyfunc(sp.simplify) == sp.eye(3)
    assert dict(s.values) == {I1: 1, I2: 2, I3: 3}
    assert s.constraints == ()


def test_polar_particle():
    s = load_example("polar_particle")
    r, theta = s.coordinates
    rd, thetad = s.velocities
    m, k = s.parameters
    assert same(s.lagrangian, m * (rd**2 + r**2 * thetad**2) / 2 + k / r)
    assert s.frame == ((1, 0), (0, 1 / r))
    assert dict(s.values) == {m: 1, k: 1}
    # orthonormal: the kinetic metric evaluated on the frame is m * identity
    G = sp.hessian(s.lagrangian, s.velocities)
    F = sp.Matrix(s.frame)
    assert (F * G * F.T).applyfunc(sp.simplify) == m * sp.eye(2)


def test_nonholonomic_particle():
    s = load_example("nonholonomic_particle")
    x, y, z = s.coordinates
    xd, yd, zd = s.velocities
    assert s.parameters == ()
    assert same(s.lagrangian, (xd**2 + yd**2 + zd**2) / 2)
    assert s.frame == ((1, 0, y), (0, 1, 0), (0, 0, 1))
    assert len(s.constraints) == 1
    assert same(s.constraints[0], zd - y * xd)
    # X1 and X2 satisfy the constraint, X3 does not.
    c = s.constraints[0]
    for row, expected in zip(s.frame, [0, 0, 1]):
        value = c.xreplace(dict(zip(s.velocities, row)))
        assert same(value, expected)


def test_spherical_pendulum():
    s = load_example("spherical_pendulum")
    theta, phi = s.coordinates
    thetad, phid = s.velocities
    m, l, g = s.parameters
    expected = m * l**2 * (thetad**2 + sp.sin(theta) ** 2 * phid**2) / 2 + m * g * l * sp.cos(theta)
    assert same(s.lagrangian, expected)
    assert s.frame is None
    assert dict(s.values) == {m: 1, l: 1, g: sp.Rational(981, 100)}


def test_resolve_system_by_name():
    s = resolve_system("polar_particle")
    assert s == load_example("polar_particle")


def test_resolve_system_by_name_with_suffix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no file of that name here
    assert resolve_system("spherical_pendulum.toml").name == "Spherical pendulum"


def test_resolve_system_by_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'name = "Mine"\ncoordinates = ["q"]\nlagrangian = "q_dot^2/2"\n', encoding="utf-8"
    )
    s = resolve_system(str(path))
    assert s.name == "Mine"
    assert s.source == str(path)
    assert resolve_system(path).name == "Mine"


def test_resolve_system_file_shadows_example(tmp_path, monkeypatch):
    (tmp_path / "rigid_body").write_text(
        'name = "Local"\ncoordinates = ["q"]\nlagrangian = "q_dot^2/2"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert resolve_system("rigid_body").name == "Local"


def test_resolve_system_invalid_file_is_a_file_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "Bad"\n', encoding="utf-8")
    with pytest.raises(SystemFileError, match="coordinates"):
        resolve_system(str(path))


@pytest.mark.parametrize("bad", ["no_such_system", "missing/dir/file.toml"])
def test_resolve_system_unknown(bad):
    with pytest.raises(UnknownExampleError) as info:
        resolve_system(bad)
    msg = str(info.value)
    assert repr(bad) in msg
    for name in [*EXPECTED, *FAMILIES]:
        assert name in msg
    assert isinstance(info.value, AnholoError)


def test_resolve_system_directory_is_not_a_file(tmp_path):
    with pytest.raises(UnknownExampleError):
        resolve_system(str(tmp_path))


# ---------------------------------------------------------------------------
# Every example, files and generated: well-formed, affine and independent
# constraints, nonsingular frames.
# ---------------------------------------------------------------------------

GENERATED = {
    "n_trailer_0": lambda: n_trailer(0),
    "n_trailer_1": lambda: n_trailer(1),
    "n_trailer_2": lambda: n_trailer(2),
    "n_trailer_3": lambda: n_trailer(3),
    "crampin_mestdag_disk": lambda: crampin_mestdag_class(["R*cos(r2)", "R*sin(r2)"], masses=["m", "m"]),
    "crampin_mestdag_knife": lambda: crampin_mestdag_class(["tan(r2)"]),
    "crampin_mestdag_particle": lambda: crampin_mestdag_class(["r2"]),
    "crampin_mestdag_functions": lambda: crampin_mestdag_class(["A1(r2)", "A2(r2)", "A3(r2)"], functions=["A1", "A2", "A3"]),
}
ALL = {**{name: (lambda name=name: load_example(name)) for name in EXPECTED}, **GENERATED}

def _numeric_points(spec, count=3, seed=20240601):
    """Random numerical substitutions (undefined functions replaced by concrete ones)."""
    rng_points = np.random.default_rng(seed)
    out = []
    for k in range(count):
        pt = {}
        for s in (*spec.coordinates, *spec.velocities):
            pt[s] = sp.Float(rng_points.uniform(-1.2, 1.2))
        for s in spec.parameters:
            pt[s] = sp.Float(rng_points.uniform(0.5, 1.5))
        if spec.time is not None:
            pt[spec.time] = sp.Float(rng_points.uniform(0, 2))
        out.append(pt)
    return out


def _concrete(expr, spec):
    if not spec.functions:
        return expr
    r2 = spec.coordinates[1]
    return expr.subs({f: sp.Lambda(r2, sp.cos((j + 2) * r2) + j + 1) for j, f in enumerate(spec.functions)})


#: Examples without a [values] table on purpose (every parameter symbolic).
WITHOUT_VALUES = {"whipple_bicycle_pitch_rate"}


@pytest.mark.parametrize("name", sorted(ALL))
def test_example_is_well_formed(name):
    spec = ALL[name]()
    assert spec.description.strip()
    assert spec.name.strip()
    # every parameter has a default value (but in the files that show symbolic parameters), positive unless
    # [signs] declares another sign (the bicycle's product of inertia Iframe31 < 0)
    assert set(spec.values) == (set() if name in WITHOUT_VALUES else set(spec.parameters))
    assert all(v > 0 for p, v in spec.values.items() if p.is_positive)
    assert all(p.is_positive or p.is_real for p in spec.parameters)
    names = set(spec.coordinates) | set(spec.velocities) | set(spec.parameters)
    names |= set(spec.inputs) | set(spec.quasi_velocities or ())
    # a Lagrangian depends on time only if the file declares it
    assert spec.lagrangian.free_symbols <= names | {spec.time} - {None}
    for c in spec.constraints:
        assert c.free_symbols <= names | {spec.time} - {None}
        assert c.free_symbols & (set(spec.velocities) | set(spec.quasi_velocities or ())), f"{c} has no velocity"


# Examples with constraints nonlinear in the velocities (Chetaev dynamics, THEORY §8).
NONLINEAR_EXAMPLES = {"appell_hamel", "nonhomogeneous_counterexample", "parallel_velocities",
                      "two_particles_perpendicular"}


@pytest.mark.parametrize("name", sorted(NONLINEAR_EXAMPLES))
def test_nonlinear_constraints_are_nonlinear_and_independent_on_C(name):
    from anholo.system import System

    K = System.load(name).kinematic_constraints()  # raises unless rank ∂φ/∂q_dot = k on C
    assert not K.is_linear and K.rank == K.count


@pytest.mark.parametrize("name", sorted(set(ALL) - NONLINEAR_EXAMPLES))
def test_constraints_affine_and_independent(name):
    spec = ALL[name]()
    u = spec.velocities
    if spec.quasi_velocities:  # constraints in the frame's quasi-velocities: in q_dot as the System reads them
        from anholo.system import System

        spec = dataclasses.replace(spec, constraints=System.from_spec(spec).constraints)
    for c in spec.constraints:
        for a in u:
            for b in u:
                assert sp.simplify(c.diff(a, b)) == 0, f"{c} is not affine in the velocities"
    if not spec.constraints:
        return
    A = sp.Matrix(spec.constraints).jacobian(u)
    for pt in _numeric_points(spec):
        An = np.array(_concrete(A, spec).xreplace(pt).evalf().tolist(), dtype=float)
        assert np.linalg.matrix_rank(An, tol=1e-8) == len(spec.constraints)


@pytest.mark.parametrize("name", sorted(ALL))
def test_frame_nonsingular_and_lagrangian_regular(name):
    spec = ALL[name]()
    n = spec.dimension
    L = spec.lagrangian
    if spec.quasi_velocities:  # written in the frame's quasi-velocities: the natural L of the System
        from anholo.system import System

        L = System.from_spec(spec).lagrangian.natural_expr()
    hessian = sp.hessian(L, spec.velocities)
    for pt in _numeric_points(spec):
        Wn = np.array(hessian.xreplace(pt).evalf().tolist(), dtype=float)
        assert abs(np.linalg.det(Wn)) > 1e-8
        if spec.frame is not None:
            assert len(spec.frame) == n and all(len(row) == n for row in spec.frame)
            Fn = np.array(_concrete(sp.Matrix(spec.frame), spec).xreplace(pt).evalf().tolist(), dtype=float)
            assert abs(np.linalg.det(Fn)) > 1e-6


# ---------------------------------------------------------------------------
# The new examples, one by one
# ---------------------------------------------------------------------------


def _bracket(X, Y, q):
    """Lie bracket of vector fields given by component lists in the coordinates q."""
    return [sp.simplify(sum(X[B] * sp.diff(Y[A], q[B]) - Y[B] * sp.diff(X[A], q[B]) for B in range(len(q)))) for A in range(len(q))]


def test_vertical_rolling_disk():
    s = load_example("vertical_rolling_disk")
    x, y, theta, phi = s.coordinates
    xd, yd, thetad, phid = s.velocities
    m, R, I, J = s.parameters
    assert same(s.lagrangian, m * (xd**2 + yd**2) / 2 + J * thetad**2 / 2 + I * phid**2 / 2)
    assert s.frame is None
    assert len(s.constraints) == 2
    assert same(s.constraints[0], xd - R * sp.cos(theta) * phid)
    assert same(s.constraints[1], yd - R * sp.sin(theta) * phid)


def test_knife_edge():
    s = load_example("knife_edge")
    x, y, theta = s.coordinates
    xd, yd, thetad = s.velocities
    m, J, g, alpha = s.parameters
    assert same(s.lagrangian, m * (xd**2 + yd**2) / 2 + J * thetad**2 / 2 + m * g * sp.sin(alpha) * x)
    assert s.constraints == (sp.sin(theta) * xd - sp.cos(theta) * yd,)


def test_chaplygin_sleigh_constraint_from_the_contact_point():
    s = load_example("chaplygin_sleigh")
    x, y, theta = s.coordinates
    xd, yd, thetad = s.velocities
    m, I, a = s.parameters
    assert same(s.lagrangian, m * (xd**2 + yd**2) / 2 + I * thetad**2 / 2)
    # contact point a behind the centre of mass; its velocity has no lateral component
    P = sp.Matrix([x - a * sp.cos(theta), y - a * sp.sin(theta)])
    Pdot = P.jacobian([x, y, theta]) * sp.Matrix([xd, yd, thetad])
    lateral = sp.Matrix([-sp.sin(theta), sp.cos(theta)])
    assert same(s.constraints[0], (lateral.T * Pdot)[0])
    # the body frame: X1 forward, X2 lateral, X3 = d/dtheta
    F = sp.Matrix(s.frame)
    assert F == sp.Matrix([[sp.cos(theta), sp.sin(theta), 0], [-sp.sin(theta), sp.cos(theta), 0], [0, 0, 1]])
    # in the quasi-velocities of the frame the constraint is v2 - a*v3 = 0
    v = sp.symbols("v1:4")
    u_of_v = F.T * sp.Matrix(v)
    c = s.constraints[0].xreplace(dict(zip(s.velocities, u_of_v)))
    assert same(c, v[1] - a * v[2])


def test_two_wheeled_carriage():
    s = load_example("two_wheeled_carriage")
    x, y, theta, psi1, psi2 = q = s.coordinates
    xd, yd, thetad, psi1d, psi2d = s.velocities
    m, m0, a, J, C, R, c = s.parameters
    expected = (
        m * (xd**2 + yd**2) / 2
        + m0 * a * thetad * (yd * sp.cos(theta) - xd * sp.sin(theta))
        + J * thetad**2 / 2
        + C * (psi1d**2 + psi2d**2) / 2
    )
    assert same(s.lagrangian, expected)
    # THEORY §9: X1, X2 span D; SE(2) generators complete the frame
    X1 = [R / 2 * sp.cos(theta), R / 2 * sp.sin(theta), -R / (2 * c), 1, 0]
    X2 = [R / 2 * sp.cos(theta), R / 2 * sp.sin(theta), R / (2 * c), 0, 1]
    X3, X4, X5 = [1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [-y, x, 1, 0, 0]
    F = sp.Matrix(s.frame)
    assert (F - sp.Matrix([X1, X2, X3, X4, X5])).applyfunc(sp.simplify) == sp.zeros(5, 5)
    assert sp.simplify(F.det()) == 1
    for row in (X1, X2):
        for con in s.constraints:
            assert same(con.xreplace(dict(zip(s.velocities, row))), 0)
    # the constraint equations of the brief: D is exactly span{X1, X2}
    assert same(s.constraints[0], xd - R / 2 * sp.cos(theta) * (psi1d + psi2d))
    assert same(s.constraints[1], yd - R / 2 * sp.sin(theta) * (psi1d + psi2d))
    assert same(s.constraints[2], thetad - R / (2 * c) * (psi2d - psi1d))
    # [X1, X2] = R^a_12 X_a with R^a_12 = (R^2 sin/2c, -R^2 cos/2c, 0) (THEORY §9)
    br = sp.Matrix(_bracket(X1, X2, q))
    coeffs = (F.T).solve(br).applyfunc(sp.simplify)
    assert list(coeffs) == [0, 0, R**2 * sp.sin(theta) / (2 * c), -(R**2) * sp.cos(theta) / (2 * c), 0]


def test_crampin_mestdag_class_file():
    s = load_example("crampin_mestdag_class")
    r1, r2, s1, s2 = s.coordinates
    r1d, r2d, s1d, s2d = s.velocities
    I1, I2, m1, m2 = s.parameters
    A1, A2 = s.functions
    assert same(s.lagrangian, (I1 * r1d**2 + I2 * r2d**2 + m1 * s1d**2 + m2 * s2d**2) / 2)
    assert s.constraints == (s1d - A1(r2) * r1d, s2d - A2(r2) * r1d)
    assert sp.Matrix(s.frame) == sp.Matrix([[1, 0, A1(r2), A2(r2)], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    # X1, X2 span the constraint distribution
    for row in s.frame[:2]:
        for con in s.constraints:
            assert con.xreplace(dict(zip(s.velocities, row))) == 0


def test_sphere_on_turntable():
    s = load_example("sphere_on_turntable")
    x, y, phi, theta, psi = s.coordinates
    xd, yd, phid, thetad, psid = s.velocities
    m, a, k, Omega = s.parameters
    # space angular velocity of the ZXZ Euler angles R = Rz(phi) Rx(theta) Rz(psi):
    # omega = phi_dot e_z + theta_dot Rz(phi) e_x + psi_dot Rz(phi) Rx(theta) e_z
    Rz = lambda t: sp.Matrix([[sp.cos(t), -sp.sin(t), 0], [sp.sin(t), sp.cos(t), 0], [0, 0, 1]])  # noqa: E731
    Rx = lambda t: sp.Matrix([[1, 0, 0], [0, sp.cos(t), -sp.sin(t)], [0, sp.sin(t), sp.cos(t)]])  # noqa: E731
    ez, ex = sp.Matrix([0, 0, 1]), sp.Matrix([1, 0, 0])
    omega = phid * ez + thetad * Rz(phi) * ex + psid * Rz(phi) * Rx(theta) * ez
    # ... which is also the axial vector of Rdot R^T
    Rot = Rz(phi) * Rx(theta) * Rz(psi)
    Rdot = sum((Rot.diff(qq) * qd for qq, qd in zip((phi, theta, psi), (phid, thetad, psid))), sp.zeros(3, 3))
    Wm = (Rdot * Rot.T).applyfunc(sp.simplify)
    assert (sp.Matrix([Wm[2, 1], Wm[0, 2], Wm[1, 0]]) - omega).applyfunc(sp.simplify) == sp.zeros(3, 1)
    stated = sp.Matrix([
        thetad * sp.cos(phi) + psid * sp.sin(theta) * sp.sin(phi),
        thetad * sp.sin(phi) - psid * sp.sin(theta) * sp.cos(phi),
        phid + psid * sp.cos(theta),
    ])
    assert (omega - stated).applyfunc(sp.simplify) == sp.zeros(3, 1)
    assert same(s.lagrangian, m * (xd**2 + yd**2) / 2 + m * k**2 * (omega.T * omega)[0] / 2)
    # rolling on the table: v_centre + omega x (-a e_z) = Omega e_z x r at the contact point
    v_centre = sp.Matrix([xd, yd, 0])
    v_contact = v_centre + omega.cross(-a * ez)
    v_table = (Omega * ez).cross(sp.Matrix([x, y, 0]))
    slip = v_contact - v_table
    assert same(slip[2], 0)
    assert same(s.constraints[0], slip[0])
    assert same(s.constraints[1], slip[1])
    # the frame is dual to the coframe (dx, dy, omega_x, omega_y, omega_z)
    coframe = sp.Matrix([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0]]).col_join(omega.jacobian(s.velocities))
    assert (coframe * sp.Matrix(s.frame).T).applyfunc(sp.simplify) == sp.eye(5)


def _mechanics_rolling_disk(spec):
    """T - V and the contact velocity of the rolling disk, from sympy.physics.mechanics."""
    from sympy.physics.mechanics import Point, ReferenceFrame, cross, dot, dynamicsymbols, inertia

    names = ["x", "y", "yaw", "lean", "spin"]
    qf = dynamicsymbols(names)
    m, r, g = spec.parameters
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [qf[2], N.z])
    L = Y.orientnew("L", "Axis", [qf[3], Y.x])
    R = L.orientnew("R", "Axis", [qf[4], L.y])
    O = Point("O")
    O.set_vel(N, 0)
    C = O.locatenew("C", qf[0] * N.x + qf[1] * N.y)
    D = C.locatenew("D", r * L.z)
    vD = D.pos_from(O).dt(N)
    w = R.ang_vel_in(N)
    I = inertia(L, m * r**2 / 4, m * r**2 / 2, m * r**2 / 4)
    T = m * dot(vD, vD) / 2 + dot(w, dot(I, w)) / 2
    V = m * g * dot(D.pos_from(O), N.z)
    v_contact = vD + cross(w, C.pos_from(D))
    t = dynamicsymbols._t
    back = {f.diff(t): v for f, v in zip(qf, spec.velocities)}
    back.update(zip(qf, spec.coordinates))
    lag = (T - V).xreplace(back)
    slip = [dot(v_contact, e).xreplace(back) for e in (N.x, N.y, N.z)]
    return lag, slip


def test_rolling_disk_from_mechanics():
    s = load_example("rolling_disk")
    lag, slip = _mechanics_rolling_disk(s)
    assert same(s.lagrangian, lag)
    assert same(slip[2], 0)
    assert same(s.constraints[0], slip[0])
    assert same(s.constraints[1], slip[1])


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_n_trailer_from_axle_positions(n):
    s = n_trailer(n)
    q = s.coordinates
    u = s.velocities
    x, y, thetas = q[0], q[1], q[2:]
    assert [str(t) for t in thetas] == [f"theta{i}" for i in range(n + 1)]
    P = {p.name: p for p in s.parameters}
    assert list(P) == ["m0", "J0"] + [f"{k}{i}" for i in range(1, n + 1) for k in ("m", "J", "d")]
    d = [None] + [P[f"d{i}"] for i in range(1, n + 1)]
    total = lambda e: sum(e.diff(qq) * uu for qq, uu in zip(q, u))  # noqa: E731
    lag = P["m0"] * (u[0] ** 2 + u[1] ** 2) / 2 + P["J0"] * u[2] ** 2 / 2
    assert len(s.constraints) == n + 1
    for i in range(n + 1):
        xi = x - sum(d[j] * sp.cos(thetas[j]) for j in range(1, i + 1))
        yi = y - sum(d[j] * sp.sin(thetas[j]) for j in range(1, i + 1))
        xid, yid = total(xi), total(yi)
        assert same(s.constraints[i], -xid * sp.sin(thetas[i]) + yid * sp.cos(thetas[i]))
        if i:
            lag += P[f"m{i}"] * (xid**2 + yid**2) / 2 + P[f"J{i}"] * u[2 + i] ** 2 / 2
    assert same(s.lagrangian, lag)
    assert s.frame is None
    assert s == parse_system(n_trailer_toml(n), source=f"<generated n_trailer_{n}>")


# ---------------------------------------------------------------------------
# The generated families in the registry
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 4])
def test_n_trailer_by_name(n, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = n_trailer(n)
    assert load_example(f"n_trailer_{n}") == spec
    assert resolve_system(f"n_trailer_{n}") == spec
    assert resolve_system(f"n_trailer_{n}.toml") == spec
    assert spec.dimension == n + 3
    assert spec.source == f"<generated n_trailer_{n}>"


@pytest.mark.parametrize("bad", ["n_trailer_x", "n_trailer_-1", "n_trailer_01", "n_trailer_", "n_trailer", "n_trailer_1.5", "n_trailer_²"])
def test_n_trailer_bad_names(bad):
    for call in (load_example, resolve_system):
        with pytest.raises(UnknownExampleError) as info:
            call(bad)
        msg = str(info.value)
        assert repr(bad) in msg
        assert "n_trailer_<n>" in msg and "non-negative integer" in msg


def test_n_trailer_has_no_file():
    with pytest.raises(UnknownExampleError, match="generated"):
        example_path("n_trailer_2")


def test_n_trailer_python_errors():
    with pytest.raises(ValueError, match="non-negative"):
        n_trailer(-1)
    with pytest.raises(TypeError, match="integer"):
        n_trailer(1.0)
    with pytest.raises(TypeError, match="integer"):
        n_trailer_toml("2")
    assert n_trailer(np.int64(1)) == n_trailer(1)


def test_n_trailer_file_shadows_nothing_but_files(tmp_path, monkeypatch):
    (tmp_path / "n_trailer_2").write_text('name = "Local"\ncoordinates = ["q"]\nlagrangian = "q_dot^2/2"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert resolve_system("n_trailer_2").name == "Local"
    assert load_example("n_trailer_2").name == "n-trailer system, n = 2"


def test_crampin_mestdag_class_generator():
    s = crampin_mestdag_class(["R*cos(r2)", "R*sin(r2)"], masses=["m", "m"], values={"R": 0.5})
    r1, r2, s1, s2 = s.coordinates
    I1, I2, m, R = s.parameters
    assert [str(p) for p in s.parameters] == ["I1", "I2", "m", "R"]
    assert dict(s.values) == {I1: 1, I2: 1, m: 1, R: sp.Rational(1, 2)}
    assert same(s.lagrangian, (I1 * s.velocities[0] ** 2 + I2 * s.velocities[1] ** 2 + m * s.velocities[2] ** 2 + m * s.velocities[3] ** 2) / 2)
    assert sp.Matrix(s.frame)[0, :] == sp.Matrix([[1, 0, R * sp.cos(r2), R * sp.sin(r2)]])
    default = crampin_mestdag_class(["tan(r2)"])
    assert [str(p) for p in default.parameters] == ["I1", "I2", "m1"]
    assert default.constraints == (default.velocities[2] - sp.tan(default.coordinates[1]) * default.velocities[0],)
    # the text is a valid system file
    assert parse_system(crampin_mestdag_class_toml(["r2"]), source="<generated crampin_mestdag_class>") == crampin_mestdag_class(["r2"])
    # undefined functions
    f = crampin_mestdag_class(["A1(r2)"], functions=["A1"])
    assert f.functions and f.constraints[0].has(f.functions[0](f.coordinates[1]))
    # a parameter named in A only
    assert "c" in {p.name for p in crampin_mestdag_class(["c*r2"]).parameters}


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ([[]], {}, ValueError, "at least one"),
        ([["r1"]], {}, ValueError, r"A\[0\].*depends on r1"),
        ([["r2", "s1*r2"]], {}, ValueError, r"A\[1\].*depends on s1"),
        ([["r2_dot"]], {}, ValueError, "r2_dot"),
        ([["A1(r1)"]], {"functions": ["A1"]}, ValueError, "r1"),
        ([["r2"]], {"masses": ["r2"]}, ValueError, r"masses\[0\]"),
        ([["r2"]], {"masses": ["m", "m"]}, ValueError, "one mass per"),
        ([["r2 +"]], {}, SystemFileError, r"A\[0\]"),
        ([["r2"]], {"values": {"Q": 1}}, SystemFileError, "Q"),
        ([["r2"]], {"values": {"I1": -1}}, SystemFileError, "positive"),
    ],
)
def test_crampin_mestdag_class_errors(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        crampin_mestdag_class(*args, **kwargs)

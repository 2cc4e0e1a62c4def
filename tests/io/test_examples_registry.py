"""Tests of the bundled examples and their registry, anholo.examples."""

from __future__ import annotations

import pytest
import sympy as sp

from anholo.errors import AnholoError, SystemFileError, UnknownExampleError
from anholo.examples import (
    example_names,
    example_path,
    list_examples,
    load_example,
    resolve_system,
)
from anholo.io import SystemSpec

EXPECTED = {
    "nonholonomic_particle": "Nonholonomic particle",
    "polar_particle": "Particle in a central potential (polar coordinates)",
    "rigid_body": "Free rigid body",
    "spherical_pendulum": "Spherical pendulum",
}


def same(a, b) -> bool:
    return sp.simplify(a - b) == 0


def test_list_examples():
    listing = list_examples()
    assert listing == sorted(listing)
    assert dict(listing) == EXPECTED
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
    for name in EXPECTED:
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
    for name in EXPECTED:
        assert name in msg
    assert isinstance(info.value, AnholoError)


def test_resolve_system_directory_is_not_a_file(tmp_path):
    with pytest.raises(UnknownExampleError):
        resolve_system(str(tmp_path))

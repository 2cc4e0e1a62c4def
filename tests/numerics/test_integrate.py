"""Integration against closed-form solutions and conservation laws.

Oracles: the closed-form motion of the vertical rolling disk (θ, φ linear in t;
x, y on circles) and of the centre of the sphere on a turntable (THEORY §10:
the velocity of the centre rotates at the rate μ = k²Ω/(a²+k²)); conservation of
energy; the constraints as written, evaluated in natural velocities.
"""

import csv
import math

import numpy as np
import pytest

from anholo.errors import InitialStateError, IntegrationError, SimulationError
from anholo.numerics import DEFAULT_ATOL, DEFAULT_METHOD, DEFAULT_RTOL, simulate

from numerics_cases import compiled


def disk_initial(R=1.0, th0=0.2, w=0.7, Om=1.3):
    q0 = [0.1, -0.2, th0, 0.3]
    return q0, [R * math.cos(th0) * Om, R * math.sin(th0) * Om, w, Om]


def test_defaults_are_stated():
    assert (DEFAULT_METHOD, DEFAULT_RTOL, DEFAULT_ATOL) == ("DOP853", 1e-10, 1e-12)


def test_vertical_disk_closed_form_over_100():
    c = compiled("vertical_rolling_disk", "nonholonomic")
    R, th0, w, Om = 1.0, 0.2, 0.7, 1.3
    q0, u0 = disk_initial(R, th0, w, Om)
    traj = simulate(c, 100.0, q0, u0, points=2001)
    t = traj.t
    th = th0 + w * t
    exact = np.array([q0[0] + R * Om / w * (np.sin(th) - math.sin(th0)),
                      q0[1] - R * Om / w * (np.cos(th) - math.cos(th0)), th, q0[3] + Om * t])
    assert np.max(np.abs(traj.q - exact)) < 1e-9
    exact_u = np.array([R * Om * np.cos(th), R * Om * np.sin(th), np.full_like(t, w), np.full_like(t, Om)])
    assert np.max(np.abs(traj.qdot - exact_u)) < 1e-9


def test_sphere_on_turntable_centre_circles():
    c = compiled("sphere_on_turntable", "nonholonomic")
    a, k, Om = 1.0, 0.6, 1.0
    mu = k**2 * Om / (a**2 + k**2)
    q0 = [0.3, -0.2, 0.4, 1.1, 0.2]
    # natural velocities on C: choose ẋ, ẏ, φ̇; the constraints fix θ̇, ψ̇
    phi, theta = q0[2], q0[3]
    xd, yd, phid = 0.4, -0.1, 0.3
    wy = (xd + Om * q0[1]) / a
    wx = -(yd - Om * q0[0]) / a
    # ω_x = θ̇ cos φ + ψ̇ sin θ sin φ, ω_y = θ̇ sin φ − ψ̇ sin θ cos φ
    thd = wx * math.cos(phi) + wy * math.sin(phi)
    psid = (wx * math.sin(phi) - wy * math.cos(phi)) / math.sin(theta)
    traj = simulate(c, 20.0, q0, [xd, yd, phid, thd, psid], points=401)
    z = (xd + 1j * yd) * np.exp(1j * mu * traj.t)
    assert np.max(np.abs(traj.qdot[0] - z.real)) < 1e-9
    assert np.max(np.abs(traj.qdot[1] - z.imag)) < 1e-9
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-13


@pytest.mark.parametrize("name, q0, u0", [
    ("rigid_body", [0.3, 1.0, 0.2], [0.4, 0.3, 0.5]),
    ("chaplygin_sleigh", [0.0, 0.0, 0.0], [1.0, 0.25, 0.5]),
])
def test_energy_drift_over_1000_with_defaults(name, q0, u0):
    field = "nonholonomic" if name == "chaplygin_sleigh" else "euler-lagrange"
    traj = simulate(compiled(name, field), 1000.0, q0, u0)
    assert traj.t[-1] == 1000.0
    assert np.max(traj.energy_drift()) < 1e-8


@pytest.mark.parametrize("name, q0, u0", [
    ("vertical_rolling_disk",) + disk_initial(),
    ("chaplygin_sleigh", [0.0, 0.0, 0.3], [math.cos(0.3) - 0.25 * math.sin(0.3), math.sin(0.3) + 0.25 * math.cos(0.3), 0.5]),
    ("two_wheeled_carriage", [0.2, 0.1, 0.1, 0, 0],
     [0.375 * math.cos(0.1), 0.375 * math.sin(0.1), 0.15, 1.0, 1.5]),
])
def test_constraint_residual_at_rounding_level(name, q0, u0):
    traj = simulate(compiled(name, "nonholonomic"), 50.0, q0, u0, points=501)
    scale = 1 + np.max(np.abs(traj.qdot))
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-14 * scale
    assert np.max(traj.energy_drift()) < 1e-8


def test_initial_velocities_must_satisfy_constraints():
    c = compiled("nonholonomic_particle", "nonholonomic")
    with pytest.raises(InitialStateError, match="violate constraint 1"):
        simulate(c, 1.0, [0, 1, 0], [1, 0, 0.5])
    simulate(c, 1.0, [0, 1, 0], [1, 0, 1 + 1e-12])  # within the stated tolerance
    with pytest.raises(InitialStateError, match="expected 3 values"):
        simulate(c, 1.0, [0, 1], [1, 0, 1])
    with pytest.raises(InitialStateError, match="only used by the vakonomic field"):
        simulate(c, 1.0, [0, 1, 0], [1, 0, 1], [0.5])


def test_bad_options_are_errors():
    c = compiled("nonholonomic_particle", "nonholonomic")
    with pytest.raises(SimulationError, match="unknown integration method"):
        simulate(c, 1.0, [0, 0, 0], [1, 0, 0], method="Euler")
    with pytest.raises(SimulationError, match="t_span"):
        simulate(c, 0.0, [0, 0, 0], [1, 0, 0])
    with pytest.raises(SimulationError, match="either t_eval or points"):
        simulate(c, 1.0, [0, 0, 0], [1, 0, 0], points=3, t_eval=[0, 1])


def test_singular_frame_is_reported():
    """The rigid body's Euler-angle frame is singular at θ = 0: starting there cannot be integrated."""
    c = compiled("rigid_body", "euler-lagrange")
    with pytest.raises(IntegrationError, match="singular"):
        simulate(c, 1.0, [0.1, 0.0, 0.2], [0.4, 0.3, 0.5])


def test_events_dense_output_and_methods():
    c = compiled("vertical_rolling_disk", "nonholonomic")
    q0, u0 = disk_initial()

    def heading_reaches_pi(t, s):
        return s[2] - math.pi

    traj = simulate(c, 10.0, q0, u0, events=heading_reaches_pi, dense_output=True)
    assert abs(traj.t_events[0][0] - (math.pi - 0.2) / 0.7) < 1e-9
    np.testing.assert_allclose(traj(2.5)[:4], traj(np.array([2.5]))[:4, 0])
    assert abs(traj(2.5)[2] - (0.2 + 0.7 * 2.5)) < 1e-9
    radau = simulate(c, 10.0, q0, u0, method="Radau", rtol=1e-8, atol=1e-10, points=11)
    assert radau.method == "Radau"
    assert np.max(np.abs(radau.q[2] - (0.2 + 0.7 * radau.t))) < 1e-7


def test_csv_columns_and_values(tmp_path):
    c = compiled("vertical_rolling_disk", "nonholonomic")
    traj = simulate(c, 1.0, *disk_initial(), points=5)
    path = tmp_path / "out.csv"
    traj.to_csv(path)
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["t", "x", "y", "theta", "phi", "x_dot", "y_dot", "theta_dot", "phi_dot"]
    data = np.array(rows[1:], dtype=float)
    assert data.shape == (5, 9)
    np.testing.assert_array_equal(data[:, 1:5], traj.q.T)
    assert traj.coordinate("theta_dot")[0] == 0.7
    with pytest.raises(SimulationError, match="not a coordinate"):
        traj.coordinate("psi")


def test_vakonomic_csv_has_written_multipliers(tmp_path):
    c = compiled("nonholonomic_particle", "vakonomic")
    traj = simulate(c, 1.0, [0, 0.5, 0], [1, 0.5, 0.5], [0.25], points=3)
    path = tmp_path / "vak.csv"
    traj.to_csv(path)
    rows = list(csv.reader(open(path)))
    assert rows[0][-1] == "lambda1" and len(rows[0]) == 8
    assert float(rows[1][-1]) == 0.25

"""A holonomic motion through the pole of its chart: the spherical pendulum in (θ, φ) with an atlas.

Oracle: the pendulum in Cartesian coordinates, ``r̈ = −g e_z + λ r`` with ``λ = (g z − |ṙ|²)/l²`` from
the differentiated constraint ``|r|² = l²`` (scipy DOP853), compared as positions; and the cost of the same
motion in a chart regular along it."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from anholo.errors import IntegrationError
from anholo.numerics import simulate
from anholo.numerics.coordinate_charts import CoordinateChart, simulate_in_charts
from anholo.system import System

G = 9.81
SIDE = """
name = "Spherical pendulum, chart with the pole along x"
coordinates = ["alpha", "beta"]
parameters = ["m", "l", "g"]
lagrangian = "m*l^2*(alpha_dot^2 + sin(alpha)^2*beta_dot^2)/2 - m*g*l*sin(alpha)*sin(beta)"
[values]
m = 1
l = 1
g = 9.81
"""
# base (θ, φ): r = (sin θ cos φ, sin θ sin φ, −cos θ); side (α, β): r = (cos α, sin α cos β, sin α sin β)
TO_BASE = ("acos(-sin(alpha)*sin(beta))", "atan2(sin(alpha)*cos(beta), cos(alpha))")
FROM_BASE = ("acos(sin(theta)*cos(phi))", "atan2(-cos(theta), sin(theta)*sin(phi))")


def position(theta, phi):
    return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), -np.cos(theta)])


def cartesian(times, theta0, phi0, thetad0, phid0):
    r0 = position(theta0, phi0)
    v0 = np.array([np.cos(theta0) * np.cos(phi0) * thetad0 - np.sin(theta0) * np.sin(phi0) * phid0,
                   np.cos(theta0) * np.sin(phi0) * thetad0 + np.sin(theta0) * np.cos(phi0) * phid0,
                   np.sin(theta0) * thetad0])

    def f(t, s):
        r, v = s[:3], s[3:]
        lam = (G * r[2] - v @ v) / (r @ r)
        return np.concatenate([v, lam * r - np.array([0.0, 0.0, G])])

    return solve_ivp(f, (times[0], times[-1]), np.concatenate([r0, v0]), t_eval=times, method="DOP853",
                     rtol=1e-12, atol=1e-13).y[:3]


@pytest.fixture(scope="module")
def atlas(tmp_path_factory):
    path = tmp_path_factory.mktemp("charts") / "side.toml"
    path.write_text(SIDE)
    base = System.load("spherical_pendulum")
    side = System.load(str(path))
    return base, side, [CoordinateChart(base), CoordinateChart(side, TO_BASE, FROM_BASE)]


def test_one_chart_stalls_at_the_pole(atlas):
    base, _, _ = atlas
    with pytest.raises(IntegrationError, match="singular"):
        simulate(base, 3.0, [0.5, 0.0], [-1.0, 1e-6], points=7)


@pytest.mark.parametrize("phid0", [1e-6, 1e-3, 0.0, 0.3, -2.0])
def test_through_the_pole_in_the_atlas_matches_the_cartesian_pendulum(atlas, phid0):
    base, side, charts = atlas
    times = np.linspace(0, 3.0, 31)
    motion = simulate_in_charts(charts, (0, 3.0), [0.5, 0.0], [-1.0, phid0], t_eval=times)
    if phid0:  # the planar swing (φ̇ = 0) crosses θ = 0 in the base chart itself (θ < 0): no switch needed
        assert motion.switches and motion.switches[0][1:] == (0, 1)
    assert np.array_equal(motion.t, times)
    ref = cartesian(times, 0.5, 0.0, -1.0, phid0)
    assert np.abs(position(*motion.q) - ref).max() < 1e-7
    # the cost: at most twice that of the same motion in the side chart, regular along it
    r0 = position(0.5, 0.0)
    alpha0, beta0 = math.acos(r0[0]), math.atan2(r0[2], r0[1])
    side_chart = simulate_in_charts([CoordinateChart(side)], (0, 3.0), [alpha0, beta0],
                                    _side_velocity(0.5, 0.0, -1.0, phid0), t_eval=times)
    assert np.abs(_side_position(*side_chart.q) - ref).max() < 1e-7
    assert motion.nfev <= 2 * side_chart.nfev, (motion.nfev, side_chart.nfev)


def _side_position(alpha, beta):
    return np.array([np.cos(alpha), np.sin(alpha) * np.cos(beta), np.sin(alpha) * np.sin(beta)])


def _side_velocity(theta, phi, thetad, phid, h=1e-7):
    """(α̇, β̇) of the base motion by central differences of the transition map along it."""
    def ab(t):
        th, ph = theta + t * thetad, phi + t * phid
        r = position(th, ph)
        return np.array([math.acos(r[0]), math.atan2(r[2], r[1])])

    return (ab(h) - ab(-h)) / (2 * h)


def test_cli_chart_option_carries_the_motion_through_the_pole(capsys, tmp_path):
    from cli_helpers import read_csv, run

    side = tmp_path / "side.toml"
    side.write_text(SIDE)
    path = tmp_path / "p.csv"
    argv = ["simulate", "spherical_pendulum", "--q0=0.5,0", "--qdot0=-1,1e-6", "--t-end", 3, "--points", 31,
            "--chart", side, "--to-base", "; ".join(TO_BASE), "--from-base", "; ".join(FROM_BASE)]
    code, out, err = run(capsys, *argv, "--csv", path)
    assert code == 0, err
    assert "changed coordinate chart at t = " in err and "1 chart switch" in out
    header, data = read_csv(path)
    assert header == ["t", "theta", "phi", "theta_dot", "phi_dot"]
    ref = cartesian(data[:, 0], 0.5, 0.0, -1.0, 1e-6)
    assert np.abs(position(data[:, 1], data[:, 2]) - ref).max() < 1e-7
    code, out, err = run(capsys, *argv[:-2])  # --from-base missing
    assert code == 2 and "--from-base" in err
    code, out, err = run(capsys, "simulate", "chaplygin_sleigh", "--q0=0,0,0", "--qdot0=1,0,0", "--t-end", 1,
                         "--chart", side, "--to-base", "a", "--from-base", "b")
    assert code == 2 and "constraints" in err


def test_ctrl_c_keeps_the_motion_in_the_atlas(atlas, monkeypatch):
    from cli_helpers import interrupt_after

    _, _, charts = atlas
    times = np.linspace(0, 3.0, 31)
    full = simulate_in_charts(charts, (0, 3.0), [0.5, 0.0], [-1.0, 1e-6], t_eval=times)
    interrupt_after(monkeypatch, 400)  # after the switch (about 200 evaluations before it)
    part = simulate_in_charts(charts, (0, 3.0), [0.5, 0.0], [-1.0, 1e-6], t_eval=times)
    monkeypatch.undo()
    assert part.message.startswith("interrupted at t = ") and part.switches
    t_int = float(part.message.split("= ")[1].split(" ")[0])
    assert abs(part.t[-1] - t_int) < 1e-9 and 0 < t_int < 3.0
    k = len(part.t) - 1
    assert np.array_equal(part.t[:k], full.t[:k]) and np.allclose(part.q[:, :k], full.q[:, :k], atol=1e-12)
    ref = cartesian(part.t, 0.5, 0.0, -1.0, 1e-6)
    assert np.abs(position(*part.q) - ref).max() < 1e-7
    assert part.trajectory().interrupted

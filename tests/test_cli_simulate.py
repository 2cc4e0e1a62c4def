"""``anholo simulate``: CSV columns and values, figures, parameters, errors as messages.

Oracles: the closed-form motion of the vertical rolling disk (θ̇, φ̇ constant,
ẋ = R cos θ φ̇, ẏ = R sin θ φ̇), the multiplication rule's initial multipliers as
given, and the relation ``ẍ = g sin α`` of the knife edge started along the
slope (a one-dimensional fall: θ = 0, the blade points down the slope).
"""

import math
import subprocess
import sys

import numpy as np
import pytest

from cli_helpers import read_csv, run


def test_vertical_disk_csv_matches_closed_form(capsys, tmp_path):
    path = tmp_path / "disk.csv"
    code, out, err = run(capsys, "simulate", "vertical_rolling_disk", "--q0", "0,0,0.2,0",
                         "--qdot0", "1.3*cos(0.2),1.3*sin(0.2),0.7,1.3", "--t-end", 100, "--csv", path)
    assert code == 0, err
    header, data = read_csv(path)
    assert header == ["t", "x", "y", "theta", "phi", "x_dot", "y_dot", "theta_dot", "phi_dot"]
    t = data[:, 0]
    assert len(t) == 1001 and t[-1] == 100.0
    th = 0.2 + 0.7 * t
    assert np.max(np.abs(data[:, 1] - 1.3 / 0.7 * (np.sin(th) - math.sin(0.2)))) < 1e-9
    assert np.max(np.abs(data[:, 6] - 1.3 * np.sin(th))) < 1e-9
    assert "max |constraint residual|" in out and "deriving the nonholonomic field" in err
    assert "wrote" in err


def test_vakonomic_csv_has_multiplier_columns_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    csv_path, png = tmp_path / "vak.csv", tmp_path / "vak.png"
    code, out, err = run(capsys, "simulate", "nonholonomic_particle", "--field", "vakonomic", "--q0", "0,0.5,0",
                         "--qdot0", "1,0.5,0.5", "--lambda0", "-0.5", "--t-end", 2, "--points", 21,
                         "--csv", csv_path, "--plot", png)
    assert code == 0, err
    header, data = read_csv(csv_path)
    assert header[-1] == "lambda1" and len(header) == 8
    assert data.shape == (21, 8) and data[0, -1] == -0.5
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_set_numeric_and_expression_values(capsys, tmp_path):
    """Knife edge started down the slope (θ = 0): x(t) = v0 t + ½ g sin α t²."""
    path = tmp_path / "knife.csv"
    code, _, err = run(capsys, "simulate", "knife_edge", "--q0", "0,0,0", "--qdot0", "0.5,0,0", "--t-end", 1,
                       "--points", 11, "--set", "g=2", "--set", "alpha=pi/6", "--csv", path, "--quiet")
    assert code == 0, err
    assert err == ""
    _, data = read_csv(path)
    t = data[:, 0]
    np.testing.assert_allclose(data[:, 1], 0.5 * t + 0.5 * 2 * 0.5 * t**2, atol=1e-10)


def test_negative_values_and_euler_lagrange_default(capsys):
    code, out, err = run(capsys, "simulate", "spherical_pendulum", "--q0", "-1,0", "--qdot0", "-0.3,1.2",
                         "--t-end", 1, "--points", 3)
    assert code == 0, err
    assert "euler-lagrange field" in out


@pytest.mark.parametrize("argv, message", [
    (["nonholonomic_particle", "--q0", "0,0,0", "--qdot0", "1,0,1", "--t-end", 1], "violate constraint 1"),
    (["nonholonomic_particle", "--q0", "0,0", "--qdot0", "1,0,0", "--t-end", 1], "expected 3 comma-separated"),
    (["nonholonomic_particle", "--q0", "0,0,a", "--qdot0", "1,0,0", "--t-end", 1], "unknown name 'a'"),
    (["nonholonomic_particle", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1, "--lambda0", "1"],
     "only used with --field vakonomic"),
    (["polar_particle", "--field", "nonholonomic", "--q0", "1,0", "--qdot0", "0,1", "--t-end", 1], "no constraints"),
    (["crampin_mestdag_class", "--q0", "0,0,0,0", "--qdot0", "0,0,0,0", "--t-end", 1], "undefined functions"),
    (["knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1, "--set", "mass=2"], "not a parameter"),
    (["knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1, "--method", "Euler"], "unknown integration"),
    (["knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", -1], "--t-end must be positive"),
    (["knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1, "--plot", "out.jpeg"], ".png, .pdf or .svg"),
    (["knife_edge", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1, "--dependent", "q"], "not coordinates"),
    # a coordinate velocity of a system written in its body frame: Maggi's equations solved for x_dot, whose
    # pivot -sin(theta) vanishes at the initial state
    (["sleigh_with_motor", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1, "--dependent", "x", "--input",
      "tau=0.1"], "dependent velocities singular here? the best conditioned choice here: y"),
    # Maggi's equations name a short constraint as written
    (["sleigh_with_motor", "--q0", "0,0,0", "--qdot0", "1,0.5,0", "--t-end", 1, "--dependent", "x", "--input",
      "tau=0.1"], "violate constraint 1 (-a*theta_dot - x_dot*sin(theta) + y_dot*cos(theta) = 0)"),
    (["no_such_example", "--q0", "0", "--qdot0", "0", "--t-end", 1], "no_such_example"),
])
def test_errors_are_messages(capsys, argv, message):
    code, out, err = run(capsys, "simulate", *argv)
    assert code == 2
    assert "anholo: error:" in err and message in err
    assert "Traceback" not in err


def test_chetaev_field_or_clear_error(capsys, tmp_path):
    """φ = ż − ẋ² − ẏ (THEORY §8): the Chetaev motion keeps the constraint; energy is not conserved."""
    path = tmp_path / "chetaev.toml"
    path.write_text('name = "Chetaev counterexample"\ncoordinates = ["x", "y", "z"]\nparameters = ["g"]\n'
                    'lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2 - g*z"\nconstraints = ["z_dot - x_dot^2 - y_dot"]\n'
                    '[values]\ng = 9.81\n')
    out_csv = tmp_path / "c.csv"
    code, out, err = run(capsys, "simulate", path, "--field", "chetaev", "--q0", "0,0,0", "--qdot0", "1,0.5,1.5",
                         "--t-end", 1, "--points", 11, "--csv", out_csv)
    try:
        import anholo.dynamics.chetaev  # noqa: F401
    except ImportError:
        assert code == 2 and "not available" in err
        return
    assert code == 0, err
    _, data = read_csv(out_csv)
    x_dot, y_dot, z_dot = data[:, 4], data[:, 5], data[:, 6]
    assert np.max(np.abs(z_dot - x_dot**2 - y_dot)) < 1e-8
    code, _, err = run(capsys, "simulate", path, "--q0", "0,0,0", "--qdot0", "1,0.5,1.5", "--t-end", 1)
    assert code == 2 and "not linear" in err


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "anholo.cli", "simulate", "nonholonomic_particle", "--q0", "0,0,0",
                           "--qdot0", "1,0,0", "--t-end", "1", "--points", "2", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Nonholonomic particle: nonholonomic field" in proc.stdout

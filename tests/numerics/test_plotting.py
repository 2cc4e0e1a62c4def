"""Figures are written as valid PNG/PDF files (oracle: the files' magic bytes), errors are messages."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from anholo import plotting
from anholo.errors import PlotError
from anholo.numerics import simulate

from numerics_cases import compiled


@pytest.fixture(scope="module")
def runs():
    q0, u0 = [0.0, 0.5, 0.0], [1.0, 0.5, 0.5]
    nh = simulate(compiled("nonholonomic_particle", "nonholonomic"), 5.0, q0, u0, points=51)
    vak = simulate(compiled("nonholonomic_particle", "vakonomic"), 5.0, q0, u0, [-0.5], points=51)
    return nh, vak


def test_every_figure_saves(tmp_path, runs):
    nh, vak = runs
    figures = {
        "trajectory.png": plotting.plot_trajectory(nh, "x,y"),
        "comparison.pdf": plotting.plot_comparison([nh, vak], ["nonholonomic", "vakonomic"], ["x", "y"]),
        "drift.png": plotting.plot_drift(vak),
        "phase.png": plotting.plot_phase_portrait([nh, vak], "x", "y", labels=["nh", "vak"]),
        "summary.png": plotting.summary_figure(vak, title="particle"),
    }
    for name, fig in figures.items():
        path = plotting.save_figure(fig, tmp_path / name)
        head = path.read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if name.endswith(".png") else head.startswith(b"%PDF")


def test_plot_errors(tmp_path, runs):
    nh, vak = runs
    with pytest.raises(PlotError, match=r"\.png, \.pdf or \.svg"):
        plotting.save_figure(plotting.plot_drift(nh), tmp_path / "x.jpeg")
    with pytest.raises(PlotError, match="one label per trajectory"):
        plotting.plot_comparison([nh, vak], ["only one"])


def test_names_are_latex_with_units():
    assert plotting.tex_name("theta_dot") == r"$\dot{\theta}$ [rad/s]"
    assert plotting.tex_name("psi1") == r"$\psi_{1}$ [rad]"
    assert plotting.tex_name("x", {"x": "m"}) == "$x$ [m]"
    assert plotting.tex_name("x_dot", {"x": "m"}) == r"$\dot{x}$ [m/s]"
    assert plotting.tex_name("lambda1") == r"$\lambda_{1}$"


def test_exact_zeros_are_not_drawn_at_an_invented_floor(runs):
    """Oracle: the residual of the nonholonomic particle's field on C is exactly 0 (its state is (q, v) on C);
    no plotted value may be a made-up positive floor, and the zeros are labelled as such."""
    nh, _ = runs
    assert (nh.constraint_residuals() == 0).all()
    fig = plotting.plot_drift(nh)
    ax = fig.axes[0]
    data_lines = [l for l in ax.lines if l.get_transform() == ax.transData]
    for line in data_lines:
        y = line.get_ydata()
        assert np.all(np.isnan(y) | (y >= 1e-16)), "a value below rounding level was invented"
    assert any("(exactly 0" in l.get_label() for l in ax.lines)


def test_summary_has_path_and_wrapped_angles(tmp_path):
    """Oracle: a rolling disk (θ and φ grow past 2π); the wrapped angles must lie in [−π, π], equal the angles
    modulo 2π, and the x–y path panel must plot the coordinates x, y themselves."""
    c = compiled("vertical_rolling_disk", "nonholonomic")
    traj = simulate(c, 20.0, [0, 0, 0, 0], [1, 0, 1, 1], points=401)
    assert traj.q[2, -1] > 2 * np.pi and traj.q[3, -1] > 2 * np.pi
    fig = plotting.summary_figure(traj)
    angle_ax = [ax for ax in fig.axes if ax.get_ylabel() == "$q$ [rad]"][0]
    for line, k in zip(angle_ax.lines, (2, 3)):
        y = line.get_ydata()
        assert np.nanmax(np.abs(y)) <= np.pi + 1e-12 and np.isnan(y).any()  # wrapped, broken where it wraps
        ok = ~np.isnan(y)
        np.testing.assert_allclose(np.cos(y[ok]), np.cos(traj.q[k][ok]), atol=1e-12)
        np.testing.assert_allclose(np.sin(y[ok]), np.sin(traj.q[k][ok]), atol=1e-12)
    path_ax = [ax for ax in fig.axes if ax.get_xlabel() == "$x$"][0]
    np.testing.assert_array_equal(path_ax.lines[0].get_xdata(), traj.q[0])
    np.testing.assert_array_equal(path_ax.lines[0].get_ydata(), traj.q[1])
    assert plotting.save_figure(fig, tmp_path / "s.svg").read_bytes().lstrip().startswith(b"<?xml")


def test_comparison_figure_and_sweep_plot(tmp_path, runs):
    nh, vak = runs
    fig = plotting.comparison_figure([nh, vak], ["nonholonomic", "vakonomic"])
    gap_ax = [ax for ax in fig.axes if ax.get_ylabel().startswith("gap")][0]
    gap = gap_ax.lines[0].get_ydata()  # from the second point (at t = 0 the runs share their state)
    np.testing.assert_allclose(np.nan_to_num(gap), np.max(np.abs(vak.q - nh.q), axis=0)[1:])
    plotting.save_figure(fig, tmp_path / "c.png")
    from anholo.numerics.sweep import sweep

    res = sweep(compiled("nonholonomic_particle", "nonholonomic"), {"qdot0.y": [0.0, 0.5, 1.0]}, [0, 0, 0],
                [1, 0, 0], 1.0, workers=1)
    fig = plotting.plot_sweep(res)
    assert fig.axes[0].get_xlabel() == r"$\dot{y}$$(0)$"
    assert plotting.save_figure(fig, tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(PlotError, match="at least two"):
        plotting.comparison_figure([nh])


def test_cli_overlay(tmp_path, capsys):
    from anholo import cli

    out = tmp_path / "cmp.png"
    code = cli.main(["simulate", "nonholonomic_particle", "--q0", "0,0,0", "--qdot0", "1,0.5,0", "--t-end", "2",
                     "--points", "21", "--plot", str(out), "--overlay", "vakonomic", "--quiet"])
    assert code == 0 and out.read_bytes()[:4] == b"\x89PNG"
    code = cli.main(["simulate", "nonholonomic_particle", "--q0", "0,0,0", "--qdot0", "1,0.5,0", "--t-end", "2",
                     "--overlay", "vakonomic", "--quiet"])
    assert code == 2 and "give --plot" in capsys.readouterr().err

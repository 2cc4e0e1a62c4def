"""Figures are written as valid PNG/PDF files (oracle: the files' magic bytes), errors are messages."""

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

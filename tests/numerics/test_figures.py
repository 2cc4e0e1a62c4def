"""Figures for a paper: one-column size, units from the system file on every axis, no panel for a monitor
that is 0 everywhere, eigenvalue branches followed through crossings, the stable range shaded.

Oracles: the system files' ``[units]`` tables (read with the file reader, not with the plotting code), the
PNG header's pixel size, closed-form spectra (straight lines crossing between sweep points; a free particle's
A = [[0, 1], [0, 0]], a damped oscillator's −c/2 ± i√(k − c²/4), an inverted pendulum's ±√k).
"""

import struct
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from anholo import plotting
from anholo.examples import resolve_system
from anholo.numerics.sweep import SweepResult


class _Run:
    """A motion with the interface the figures read (coordinates, velocities, multipliers, monitors)."""

    def __init__(self, names, q, t, multipliers=2):
        self.coordinate_names = tuple(names)
        self.t = t
        self.q = q
        self.qdot = np.gradient(q, t, axis=1)
        self.multiplier_names = tuple(f"lambda{k + 1}" for k in range(multipliers))
        self.multipliers = np.vstack([np.sin((k + 1) * t) for k in range(multipliers)]) if multipliers else \
            np.zeros((0, len(t)))

    def coordinate(self, name):
        if name in self.coordinate_names:
            return self.q[self.coordinate_names.index(name)]
        if name.endswith("_dot") and name[:-4] in self.coordinate_names:
            return self.qdot[self.coordinate_names.index(name[:-4])]
        return self.multipliers[self.multiplier_names.index(name)]

    def energy_drift(self):
        return 1e-12 * self.t

    def constraint_residuals(self):
        return np.zeros((len(self.multiplier_names), len(self.t)))


def _run(names, t_end=5.0, points=201, still=()):
    t = np.linspace(0, t_end, points)
    q = np.vstack([np.zeros_like(t) if n in still else np.sin((k + 1) * 0.7 * t) + 0.3 * k * t
                   for k, n in enumerate(names)])
    return _Run(names, q, t)


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _axis_of(fig, label):
    """The axes whose legend or lines name ``label`` (mathtext of a quantity)."""
    for ax in fig.axes:
        if any(line.get_label() == label for line in ax.lines):
            return ax
    raise AssertionError(f"no axes draws {label}")


@pytest.mark.parametrize("example", ["whipple_bicycle", "rattleback"])
def test_summary_axes_carry_the_files_units(example, tmp_path):
    spec = resolve_system(example)
    units = dict(spec.units)
    names = [c.name for c in spec.coordinates]
    fig = plotting.summary_figure(_run(names), title=example, units=spec)
    w, h = fig.get_size_inches()
    assert w == pytest.approx(plotting.COLUMN_WIDTH) and h <= plotting.MAX_HEIGHT + 1e-9
    px = _png_size(plotting.save_figure(fig, tmp_path / "s.png"))
    assert px[0] <= 600 and px[1] <= 900, px
    fig = plotting.summary_figure(_run(names), title=example, units=spec)
    assert [ax.get_xlabel() for ax in fig.axes].count(f"$t$ [{units['t']}]") == 1  # the bottom panel's
    # x and y move in both directions: the path, labelled with the file's length unit
    path = [ax for ax in fig.axes if ax.get_xlabel().startswith("$x$")]
    assert path and path[0].get_xlabel() == f"$x$ [{units['x']}]" and path[0].get_ylabel() == f"$y$ [{units['y']}]"
    # velocities in rad/s and m/s on separate axes, each labelled with its unit
    rate = _axis_of(fig, "yaw rate")
    speed = _axis_of(fig, r"$\dot{x}$")
    assert rate is not speed
    assert rate.get_ylabel().endswith(f"[{units['yaw_dot']}]") and speed.get_ylabel().endswith("[m/s]")
    assert not any(line.get_label() == r"$\dot{x}$" for line in rate.lines)
    # the angles (unit rad in the file) share the wrapped panel
    angle = _axis_of(fig, "roll" if example == "rattleback" else "lean")
    assert angle.get_ylabel().endswith("[rad]") and _axis_of(fig, "yaw") is angle


def test_summary_without_units_and_a_path_that_does_not_move():
    """y never moves: no path panel (x(t) is drawn instead); without [units] the time axis is plain t."""
    fig = plotting.summary_figure(_run(["x", "y", "theta"], still=("y",)))
    assert not any(ax.get_xlabel().startswith("$x$") for ax in fig.axes)
    assert _axis_of(fig, "$x$") is _axis_of(fig, "$y$")
    assert any(ax.get_xlabel() == "$t$" for ax in fig.axes)
    assert _axis_of(fig, r"$\theta$").get_ylabel() == r"$\theta$ [rad]"
    moving = plotting.summary_figure(_run(["x", "y", "theta"]))
    assert any(ax.get_xlabel() == "$x$" for ax in moving.axes)  # the check can fail


def test_legends_are_outside_the_data():
    fig = plotting.summary_figure(_run(["x", "y", "a", "b"]), units={"a": "rad", "b": "rad", "t": "s"})
    fig.canvas.draw()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, frame = legend.get_window_extent(), ax.get_window_extent()
        assert box.x0 >= frame.x1 - 1, "a legend over the data"


def _sweep(residual):
    rows = tuple((v, 1e-10 * (1 + v), r, 5, "ok") for v, r in zip([0.0, 0.5, 1.0], residual))
    return SweepResult(("p",), ("p", "energy_drift", "constraint_residual", "nfev", "status"), rows,
                       "nonholonomic", "toy", 2.0)


def test_sweep_figure_has_no_panel_for_a_monitor_that_is_zero_everywhere(tmp_path):
    fig = plotting.plot_sweep(_sweep([0.0, 0.0, 0.0]), units={"p": "kg", "t": "s"})
    assert len(fig.axes) == 1 and "energy" not in fig.get_suptitle()
    assert "constraint residual = 0 exactly everywhere" in fig.get_suptitle()
    assert fig.axes[0].get_xlabel() == "$p$ [kg]" and "[0, 2] s" in fig.get_suptitle()
    assert fig.get_size_inches()[0] == pytest.approx(plotting.COLUMN_WIDTH)
    assert len(plotting.plot_sweep(_sweep([0.0, 1e-14, 0.0])).axes) == 2  # a nonzero residual: its panel


def _crossing(s):
    """Two real eigenvalues s and 0.105 − s crossing at s = 0.0525 (between the sweep points), and a pair
    −0.2 ± i(1 + s); returned as a solver does, by decreasing real part."""
    ev = np.array([s, 0.105 - s, -0.2 + 1j * (1 + s), -0.2 - 1j * (1 + s)])
    return ev[np.lexsort((-ev.imag, -ev.real))]


def test_branches_are_followed_through_a_crossing():
    s = np.linspace(-0.5, 0.5, 11)
    spectra = [_crossing(x) for x in s]
    sorted_real = np.array([sp.real for sp in spectra])
    assert np.abs(np.diff(sorted_real[:, 0], 2)).max() > 0.1  # sorted by real part: a kink at the crossing
    branches = plotting.track_branches(spectra)
    for k in range(branches.shape[1]):
        b = branches[:, k]
        assert np.isfinite(b).all()
        assert np.abs(np.diff(b, 2)).max() < 1e-12, f"branch {k} is not continuous"  # each branch a line
    exact = {tuple(np.round(f(s), 12)) for f in (lambda x: x + 0j, lambda x: 0.105 - x + 0j,
                                                 lambda x: -0.2 + 1j * (1 + x), lambda x: -0.2 - 1j * (1 + x))}
    assert {tuple(np.round(branches[:, k], 12)) for k in range(4)} == exact


def _lin(ev):
    from anholo.analysis.linear_problem import stability_verdict

    ev = np.asarray(ev, complex)
    return SimpleNamespace(eigenvalues=ev, verdict=stability_verdict(ev))


def test_eigenvalue_plot_tracks_shades_and_states_the_threshold(tmp_path):
    s = np.linspace(-0.5, 0.5, 11)
    lins = [_lin(_crossing(x) - 0.33) for x in s]  # max Re = max(x, 0.105 − x) − 0.33 < 0 for |x − 0.05| < 0.28
    fig = plotting.eigenvalue_plot(s, lins, "speed", units={"speed": "m/s", "t": "s"}, title="toy")
    re_ax = fig.axes[0]
    assert re_ax.get_ylabel() == r"Re $\lambda$ [1/s]" and fig.axes[1].get_xlabel() == "speed [m/s]"
    for line in re_ax.lines[:4]:  # the branches as lines, continuous
        y = np.asarray(line.get_ydata(), float)
        assert np.abs(np.diff(y, 2)).max() < 1e-12
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["stable: max Re λ < −1e-09"]
    spans = [p for p in re_ax.patches]
    assert len(spans) == 1
    x0, x1 = spans[0].get_x(), spans[0].get_x() + spans[0].get_width()
    top = np.array([max(_crossing(x).real) - 0.33 for x in s])
    inside = (s > x0) & (s < x1)
    assert (top[inside] < 0).all() and (top[~inside] > 0).all()
    w, h = fig.get_size_inches()
    assert w == pytest.approx(plotting.COLUMN_WIDTH) and h <= plotting.MAX_HEIGHT
    px = _png_size(plotting.save_figure(fig, tmp_path / "e.png"))
    assert px[0] <= 600 and px[1] <= 900
    zero = plotting.eigenvalue_plot([0.0, 1.0], [_lin([0.0, 0.0]), _lin([0.0, 0.0])], "k")  # all zero: marginal
    assert [t.get_text() for t in zero.legends[0].get_texts()] == ["marginal: |max Re λ| ≤ 1e-09"]


SPRING = """
name = "spring"
coordinates = ["x"]
parameters = ["k"]
lagrangian = "x_dot^2/2 {sign} k*x^2/2"
[values]
k = 4
"""


@pytest.mark.parametrize("sign, verdict, expected", [("-", "marginal", [2j, -2j]), ("+", "unstable", [2.0, -2.0])])
def test_verdicts_against_closed_form_spectra(tmp_path, sign, verdict, expected):
    """An oscillator x¨ = −k x: ±i√k on the imaginary axis (marginal); inverted, x¨ = k x: ±√k (unstable)."""
    from anholo.analysis.linearization import linearize
    from anholo.system import System

    path = tmp_path / "spring.toml"
    path.write_text(SPRING.format(sign=sign))
    lin = linearize(System.load(str(path)).lagrangian, {"x": 0.0}, {"k": 4.0}, states=["x", "v1"])
    got = sorted(lin.eigenvalues, key=lambda z: (z.real, z.imag))
    np.testing.assert_allclose(got, sorted(expected, key=lambda z: (np.real(z), np.imag(z))), atol=1e-10)
    assert lin.verdict == verdict and lin.stable is False and lin.to_dict()["verdict"] == verdict


def test_damped_sleigh_at_rest_is_stable():
    """The sleigh with motor at rest (τ = 0): m u̇ = −c u and (I + m a²) ω̇ = −(k + c a²) ω (the closed form in
    its file), so the eigenvalues are −c/m and −(k + c a²)/(I + m a²), both negative: stable."""
    from anholo.analysis.linearization import linearize
    from anholo.system import System

    s = System.load("sleigh_with_motor")
    p = {k.name: float(v) for k, v in s.values.items()}
    lin = linearize(s.nonholonomic(), {"u": 0.0, "w": 0.0}, {**p, "tau": 0.0}, states=["u", "w"])
    expected = sorted([-p["c"] / p["m"], -(p["k"] + p["c"] * p["a"] ** 2) / (p["I"] + p["m"] * p["a"] ** 2)])
    np.testing.assert_allclose(sorted(lin.eigenvalues.real), expected, atol=1e-12)
    assert lin.verdict == "stable" and lin.stable and lin.to_dict()["stable"] is True


def test_free_particle_is_marginal_not_stable(tmp_path):
    """A free particle: A = [[0, 1], [0, 0]], both eigenvalues 0 (δx grows linearly): marginal."""
    import io
    import json

    from anholo.cli import main

    path = tmp_path / "free.toml"
    path.write_text('name = "free particle"\ncoordinates = ["x"]\nparameters = ["m"]\n'
                    'lagrangian = "m*x_dot^2/2"\n[values]\nm = 2\n')
    out = io.StringIO()
    assert main(["linearize", str(path), "--states", "x,v1", "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    result = data["results"][0]
    np.testing.assert_allclose(result["A"], [[0, 1], [0, 0]], atol=1e-12)
    assert result["verdict"] == "marginal" and result["stable"] is False
    assert data["stability"].startswith("stable: max Re λ < -1e-09")
    out = io.StringIO()
    assert main(["linearize", str(path), "--states", "x,v1"], out=out) == 0
    assert "linear verdict: marginal" in out.getvalue() and "yes" not in out.getvalue()


def test_raw_sympy_results_display_velocities_dotted():
    import sympy as sp

    from anholo.algebra.printing import display_latex

    xd, th = sp.Symbol("x_dot", real=True), sp.Symbol("theta_dot", real=True)
    text = display_latex((xd**2 / 2, [th, {xd: 1}]))
    assert r"\dot{x}^{2}" in text and r"\dot{\theta}" in text and "dot}" not in text
    assert "x_{dot}" in sp.latex(xd)  # sympy alone: the check can fail

"""Figures of computed motions, sweeps and spectra, sized for a paper (matplotlib, installed with anholo).

Every function draws on a given matplotlib ``Axes`` (or makes a figure) and returns the figure;
:func:`save_figure` writes PNG, PDF or SVG by the file's extension.  The Agg backend is used unless
pyplot was already imported (e.g. Jupyter's inline backend).

Conventions of every figure (docs/figures.rst):

* **size**: one column of a two-column paper, :data:`COLUMN_WIDTH` = 3.5 in wide, at most
  :data:`MAX_HEIGHT` = 6 in high, fonts of 7 pt; saved at :data:`DPI` = 150 dots per inch, a raster figure is
  at most 525 × 900 px;
* **units**: from the system file's ``[units]`` (``units=system`` or a mapping): ``x = "m"`` labels
  ``x`` as "x [m]" and ``x_dot`` as "ẋ [m/s]" (the unit of the time ``t`` if the file gives one, else s);
  the time axis is "t [s]" only if the file gives ``t = "s"``, else "t".  A coordinate in ``rad`` or
  ``deg``, or named by a Greek letter, is an angle; angles without a unit are in rad;
* quantities are named in LaTeX (``theta`` → θ, ``psi1`` → ψ₁, ``theta_dot`` → θ̇, ``rear_wheel`` →
  "rear_wheel", ``rear_wheel_dot`` → "rear_wheel rate");
* one axis per unit: lengths, angles (wrapped to (−π, π], the line broken where it wraps) and velocities of
  different units are never drawn on one axis;
* legends are outside the data (right of the panel);
* the path in the plane is drawn only if there are coordinates ``x`` and ``y`` that both move (the smaller
  extent at least :data:`PATH_EXTENT` of the larger: a straight segment says nothing that x(t), y(t) do not);
* drift and residuals are on a log scale; values that are exactly 0 cannot be drawn there, so they are
  marked as a band on the bottom edge labelled "(exactly 0)" — never drawn at an invented floor such as
  1e-17; a monitor that is 0 everywhere gets no panel, the title says so;
* eigenvalues over a sweep are followed as continuous branches (:func:`track_branches`), and the sweep
  values where the linearisation is stable (``max Re λ < −τ``) or marginal (``|max Re λ| ≤ τ``) are shaded, τ =
  :data:`~anholo.analysis.linear_problem.STABILITY_THRESHOLD` stated in the legend.

Functions: :func:`plot_trajectory`, :func:`plot_angles`, :func:`plot_path`,
:func:`plot_comparison`, :func:`plot_drift`, :func:`plot_phase_portrait`,
:func:`summary_figure` (``anholo simulate --plot``), :func:`comparison_figure`
(nonholonomic vs vakonomic, ``anholo simulate --overlay vakonomic``), :func:`plot_sweep`
(``anholo sweep --plot``), :func:`eigenvalue_plot` (``anholo linearize --sweep ... --plot``),
:func:`track_branches`, :func:`save_figure`.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .errors import PlotError

__all__ = [
    "tex_name",
    "plot_trajectory",
    "plot_angles",
    "plot_path",
    "plot_comparison",
    "plot_drift",
    "plot_phase_portrait",
    "summary_figure",
    "comparison_figure",
    "plot_sweep",
    "save_figure",
    "eigenvalue_plot",
    "track_branches",
    "COLUMN_WIDTH",
    "MAX_HEIGHT",
    "DPI",
]

#: Width of a figure in inches: one column of a two-column journal (3.5 in ≈ 89 mm).
COLUMN_WIDTH = 3.5
#: Largest height of a figure in inches (900 px at :data:`DPI`).
MAX_HEIGHT = 6.0
#: Resolution of saved raster figures, dots per inch (3.5 in → 525 px).
DPI = 150
#: The path in the plane is drawn if its smaller extent is at least this fraction of the larger one.
PATH_EXTENT = 0.02
#: Height of one time-series panel, inches.
PANEL_HEIGHT = 0.9

_FORMATS = (".png", ".pdf", ".svg")
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
          "kappa", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega",
          "lambda", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
_ANGLE_UNITS = {"rad", "deg", "°", "degree", "degrees"}
_STYLES = ["-", "--", ":", "-."]
_PAPER = {"font.size": 7, "axes.labelsize": 7, "axes.titlesize": 7, "figure.titlesize": 7.5,
          "xtick.labelsize": 6, "ytick.labelsize": 6, "legend.fontsize": 6, "lines.linewidth": 1.0,
          "lines.markersize": 3, "axes.linewidth": 0.6, "grid.linewidth": 0.4, "xtick.major.width": 0.6,
          "ytick.major.width": 0.6, "legend.handlelength": 1.6, "legend.borderaxespad": 0.3,
          "legend.labelspacing": 0.3, "figure.constrained_layout.h_pad": 0.02,
          "figure.constrained_layout.w_pad": 0.02, "figure.constrained_layout.hspace": 0.03}


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotError(
            "plotting needs matplotlib, which is not installed; install it with pip install matplotlib."
        ) from None
    import sys

    if "matplotlib.pyplot" not in sys.modules:  # keep a backend the user chose (e.g. Jupyter's inline)
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def _paper():
    """matplotlib's settings of a paper figure (7 pt fonts, thin lines) while a figure is built."""
    plt = _pyplot()
    with plt.rc_context(_PAPER):
        yield plt


def _paper_style(function):
    """Build the whole figure under :func:`_paper`'s settings (fonts are fixed when a text is made)."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with _paper():
            return function(*args, **kwargs)

    return wrapper


def _axes(ax, rows: int = 1, figsize=None):
    plt = _pyplot()
    if ax is not None:
        return ax.figure, [ax] if rows == 1 else ax
    figsize = figsize or (COLUMN_WIDTH, min(MAX_HEIGHT, 0.5 + 1.3 * rows))
    with plt.rc_context(_PAPER):
        fig, axes = plt.subplots(rows, 1, figsize=figsize, squeeze=False, constrained_layout=True)
    return fig, [a[0] for a in axes]


def _units(units) -> dict:
    """A units mapping from a mapping, a :class:`~anholo.system.System` or a system spec (their ``units``), or
    None; the unit of the file's time name is also given under ``t``."""
    if units is None:
        return {}
    if isinstance(units, Mapping):
        return dict(units)
    table = dict(getattr(units, "units", None) or {})
    time = getattr(units, "time", None)
    if time is not None and getattr(time, "name", None) in table:
        table.setdefault("t", table[time.name])
    return table


def _names(traj, names) -> list:
    if names is None:
        return list(traj.coordinate_names)
    if isinstance(names, str):
        return [s.strip() for s in names.split(",") if s.strip()]
    return list(names)


def _split(name: str) -> tuple:
    """``"psi1_dot"`` → ``("psi1", 1)`` (base name and number of time derivatives)."""
    dots = 0
    while name.endswith("_dot"):
        name, dots = name[:-4], dots + 1
    return name, dots


def _base_tex(base: str) -> str:
    """A name as mathtext: a letter or a Greek name with an index as sympy writes it (``psi1`` → ψ₁); None for
    a word (``rear_wheel``: written as text, never sympy's rear_{wheel})."""
    head = base.rstrip("0123456789")
    digits = base[len(head):]
    if len(head.rstrip("_")) <= 1 or head.rstrip("_") in _GREEK:
        import sympy as sp

        return sp.latex(sp.Symbol(base))
    return None  # a word: written as text


def tex_name(name: str, units: Mapping | None = None) -> str:
    """A quantity's name as matplotlib mathtext, with its unit: ``tex_name("theta_dot")`` is
    ``$\\dot{\\theta}$ [rad/s]``; ``tex_name("x", {"x": "m"})`` is ``$x$ [m]``.

    >>> print(tex_name("psi1_dot"))
    $\\dot{\\psi}_{1}$ [rad/s]
    >>> print(tex_name("rear_wheel_dot", {"rear_wheel": "rad", "t": "s"}))
    rear_wheel rate [rad/s]
    """
    base, dots = _split(name)
    tex = _base_tex(base)
    unit = _unit(name, units)
    if tex is None:  # a word such as rear_wheel: upright text, its derivatives "rate" and "acceleration"
        text = base + {0: "", 1: " rate", 2: " acceleration"}.get(dots, f" (derivative {dots})")
        return text + (f" [{unit}]" if unit else "")
    if dots:
        accent = {1: r"\dot", 2: r"\ddot"}.get(dots, r"\dddot")
        head, sep, sub = tex.partition("_")
        tex = f"{accent}{{{head}}}{sep}{sub}"
    return f"${tex}$" + (f" [{unit}]" if unit else "")


def _symbol(name: str) -> str:
    """A quantity's name without its unit (legend entries: the unit is on the axis)."""
    return tex_name(name, {name: ""})


def _is_angle(name: str, angles=None, units: Mapping | None = None) -> bool:
    """An angle: listed in ``angles``; else a unit rad or deg in ``units``; else (no unit) a Greek name."""
    base, _ = _split(name)
    if angles is not None:
        return base in angles
    if units and base in units:
        return units[base].strip() in _ANGLE_UNITS
    return base.rstrip("0123456789_") in _GREEK and not base.startswith(("lambda", "mu"))


def _time_unit(units: Mapping | None) -> str | None:
    return (units or {}).get("t")


def _unit(name: str, units: Mapping | None) -> str | None:
    """The unit of a name: given, else its coordinate's unit per unit of time (s if the time has none), else rad
    (and rad/s) for a Greek-named angle."""
    base, dots = _split(name)
    if units and name in units:
        return units[name]
    per = _time_unit(units) or "s"
    power = "" if dots == 1 else f"$^{dots}$"
    if units and base in units:
        u = units[base]
        return u if dots == 0 else f"{u}/{per}{power}"
    if _is_angle(name) and not name.startswith(("lambda", "mu")):
        return "rad" if dots == 0 else f"rad/{per}{power}"
    return None


def _time_label(units: Mapping | None) -> str:
    unit = _time_unit(units)
    return "$t$" + (f" [{unit}]" if unit else "")


def _ylabel(names: Sequence[str], units, fallback: str) -> str:
    if len(names) == 1:
        return tex_name(names[0], units)
    found = {_unit(n, units) for n in names}
    return fallback + (f" [{found.pop()}]" if len(found) == 1 and None not in found else "")


def _wrapped(values: np.ndarray) -> np.ndarray:
    """Values wrapped to (−π, π], with NaN inserted where they wrap (so no vertical line is drawn)."""
    w = np.angle(np.exp(1j * np.asarray(values, float)))
    jumps = np.abs(np.diff(w)) > math.pi
    out = w.copy()
    out[1:][jumps] = np.nan
    return out


def _pi_ticks(ax) -> None:
    ax.set_ylim(-math.pi * 1.08, math.pi * 1.08)
    ax.set_yticks([-math.pi, 0, math.pi])
    ax.set_yticklabels([r"$-\pi$", "0", r"$\pi$"])


def _legend_outside(ax, entries_per_column: int = 6, **kwargs) -> None:
    """The panel's legend right of its axes (never over the data), in columns of at most ``entries_per_column``."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
                  ncol=max(1, math.ceil(len(handles) / entries_per_column)), **kwargs)


def _finish(ax, legend: bool = True) -> None:
    ax.grid(True, alpha=0.3)
    if legend:
        _legend_outside(ax)


@_paper_style
def plot_trajectory(traj, names: Sequence[str] | str | None = None, ax=None, label: str | None = None,
                    units=None, wrap: bool = False, **style):
    """Plot coordinates, ``<coordinate>_dot`` or multipliers (by name; default all coordinates) against t.

    ``units``: a mapping or a system (its file's ``[units]``); ``wrap=True`` wraps every plotted quantity to
    (−π, π] (for angles)."""
    units = _units(units)
    fig, (ax,) = _axes(ax)
    names = _names(traj, names)
    for name in names:
        y = traj.coordinate(name)
        ax.plot(traj.t, _wrapped(y) if wrap else y,
                label=_symbol(name) if label is None else f"{_symbol(name)} ({label})", **style)
    ax.set_xlabel(_time_label(units))
    ax.set_ylabel(_ylabel(names, units, "value"))
    if wrap:
        _pi_ticks(ax)
    _finish(ax, legend=len(names) > 1 or label is not None)
    return fig


@_paper_style
def plot_angles(traj, names: Sequence[str] | str | None = None, ax=None, angles=None, wrap: bool = True,
                units=None):
    """The angle coordinates against t, wrapped to (−π, π] (default) in their own panel."""
    units = _units(units)
    names = [n for n in _names(traj, names) if _is_angle(n, angles, units)] if names is None or angles is not None \
        else _names(traj, names)
    if not names:
        raise PlotError("this trajectory has no angle coordinates; name them with angles=[...].")
    fig = plot_trajectory(traj, names, ax=ax, wrap=wrap, units={**units, **{n: "rad" for n in names}})
    ax = ax or fig.axes[0]
    ax.set_ylabel("$q$ [rad]" if len(names) > 1 else tex_name(names[0], {names[0]: "rad"}))
    return fig


@_paper_style
def plot_path(trajectories, x: str = "x", y: str = "y", labels: Sequence[str] | None = None, ax=None,
              units=None):
    """The path in the plane of two position coordinates (equal aspect), start ``o`` and end ``x`` marked."""
    units = _units(units)
    trajectories = [trajectories] if not isinstance(trajectories, (list, tuple)) else list(trajectories)
    labels = list(labels) if labels is not None else [None] * len(trajectories)
    fig, (ax,) = _axes(ax, figsize=(COLUMN_WIDTH, COLUMN_WIDTH))
    for k, (traj, lab) in enumerate(zip(trajectories, labels)):
        px, py = traj.coordinate(x), traj.coordinate(y)
        line, = ax.plot(px, py, _STYLES[k % len(_STYLES)], label=lab)
        ax.plot(px[:1], py[:1], "o", ms=3, color=line.get_color())
        ax.plot(px[-1:], py[-1:], "x", ms=4, color=line.get_color())
    ax.set_xlabel(tex_name(x, units))
    ax.set_ylabel(tex_name(y, units))
    ax.set_aspect("equal", adjustable="datalim")
    _finish(ax, legend=any(lab is not None for lab in labels))
    return fig


@_paper_style
def plot_comparison(trajectories: Sequence, labels: Sequence[str] | None = None,
                    names: Sequence[str] | str | None = None, ax=None, units=None):
    """Overlay several trajectories (same coordinates), one colour per quantity, one line style per run.

    Typical use: the nonholonomic and the vakonomic motion from the same initial state.
    """
    units = _units(units)
    if not trajectories:
        raise PlotError("plot_comparison needs at least one trajectory.")
    labels = list(labels) if labels is not None else [t.kind for t in trajectories]
    if len(labels) != len(trajectories):
        raise PlotError(f"{len(trajectories)} trajectories but {len(labels)} labels; give one label per trajectory.")
    fig, (ax,) = _axes(ax)
    colours = {}
    names = _names(trajectories[0], names)
    for k, (traj, lab) in enumerate(zip(trajectories, labels)):
        for name in names:
            line, = ax.plot(traj.t, traj.coordinate(name), _STYLES[k % len(_STYLES)], color=colours.get(name),
                            label=f"{_symbol(name)} ({lab})")
            colours.setdefault(name, line.get_color())
    ax.set_xlabel(_time_label(units))
    ax.set_ylabel(_ylabel(names, units, "coordinate"))
    ax.grid(True, alpha=0.3)
    _legend_outside(ax, entries_per_column=8)
    return fig


def _honest_log(ax, x, values, label: str, **style) -> bool:
    """``values`` ≥ 0 on a log axis: positive values as a line; exact zeros as a band on the bottom edge
    (x in data, y in axes coordinates).  Returns True if some value was positive."""
    values = np.asarray(values, float)
    zero = values == 0
    positive = values > 0
    line, = ax.plot(x, np.where(positive, values, np.nan), label=label if positive.any() else None, **style)
    if zero.any():
        marks = "marker" in style  # points (a sweep): a marker per zero; a time series: a band
        ax.plot(x, np.where(zero, 0.015, np.nan), color=line.get_color(), transform=ax.get_xaxis_transform(),
                clip_on=False, label=f"{label} (exactly 0" + (", all)" if zero.all() else ")"),
                **({"marker": "v", "ms": 4, "linestyle": "none"} if marks else {"lw": 3, "solid_capstyle": "butt"}))
    ax.set_yscale("log")
    return bool(positive.any())


def _all_zero(ax, what: str) -> None:
    """A log axis with nothing positive on it: no invented scale, a statement instead."""
    ax.set_ylim(1e-16, 1e-14)
    ax.set_yticks([])
    ax.minorticks_off()
    ax.text(0.5, 0.5, f"{what} = 0 exactly everywhere", transform=ax.transAxes, ha="center", va="center")


def _swept_label(name: str, units: Mapping | None = None) -> str:
    """``q0.y`` → y(0), ``qdot0.y`` → ẏ(0), a parameter → its name (mathtext), with its unit."""
    if name.startswith("q0."):
        tex, _, unit = tex_name(name[3:], units).partition(" ")
        return tex + "$(0)$" + (f" {unit}" if unit else "")
    if name.startswith("qdot0."):
        tex, _, unit = tex_name(name[6:] + "_dot", units).partition(" ")
        return tex + "$(0)$" + (f" {unit}" if unit else "")
    return tex_name(name, units)


@_paper_style
def plot_drift(traj, ax=None, units=None):
    """Relative energy drift ``|E − E(0)|/|E(0)|`` and ``max_a |φ_a|`` against t on a log scale; exact
    zeros are shown as a band on the bottom edge (they have no place on a log axis)."""
    units = _units(units)
    fig, (ax,) = _axes(ax)
    # E − E(0) = 0 at t = 0 by definition: drawn from the second point on (no band for that zero)
    shown = _honest_log(ax, traj.t[1:], traj.energy_drift()[1:], r"$|\Delta E|/|E_0|$")
    res = traj.constraint_residuals()
    if res.size:
        shown = _honest_log(ax, traj.t, np.max(np.abs(res), axis=0), r"$\mathrm{max}_a|\varphi_a|$") or shown
    if not shown:  # nothing positive: an empty log axis would pick arbitrary limits
        _all_zero(ax, "drift and residual")
    ax.set_xlabel(_time_label(units))
    ax.set_ylabel("drift")
    ax.grid(True, which="major", alpha=0.3)
    _legend_outside(ax)
    return fig


@_paper_style
def plot_phase_portrait(trajectories, x: str, y: str, labels: Sequence[str] | None = None, ax=None,
                        units=None):
    """``y`` against ``x`` (names of coordinates, ``<coordinate>_dot`` or multipliers) for one or more runs."""
    units = _units(units)
    trajectories = [trajectories] if not isinstance(trajectories, (list, tuple)) else list(trajectories)
    labels = list(labels) if labels is not None else [None] * len(trajectories)
    fig, (ax,) = _axes(ax, figsize=(COLUMN_WIDTH, COLUMN_WIDTH))
    for traj, lab in zip(trajectories, labels):
        ax.plot(traj.coordinate(x), traj.coordinate(y), label=lab)
        ax.plot(traj.coordinate(x)[:1], traj.coordinate(y)[:1], "o", ms=3, color=ax.lines[-1].get_color())
    ax.set_xlabel(tex_name(x, units))
    ax.set_ylabel(tex_name(y, units))
    _finish(ax, legend=any(lab is not None for lab in labels))
    return fig


def path_is_informative(trajectories, x: str = "x", y: str = "y") -> bool:
    """True if the runs have coordinates ``x`` and ``y`` and the path moves in both: its smaller extent is at
    least :data:`PATH_EXTENT` of the larger and above rounding (else it is a point or a straight segment)."""
    trajectories = trajectories if isinstance(trajectories, (list, tuple)) else [trajectories]
    for traj in trajectories:
        if x not in traj.coordinate_names or y not in traj.coordinate_names:
            return False
    px = np.concatenate([np.asarray(t.coordinate(x), float) for t in trajectories])
    py = np.concatenate([np.asarray(t.coordinate(y), float) for t in trajectories])
    ok = np.isfinite(px) & np.isfinite(py)
    if not ok.any():
        return False
    ex, ey = np.ptp(px[ok]), np.ptp(py[ok])
    scale = max(ex, ey, 1e-300)
    floor = 1e-9 * max(1.0, float(np.max(np.abs(px[ok]))), float(np.max(np.abs(py[ok]))))
    return min(ex, ey) >= PATH_EXTENT * scale and min(ex, ey) > floor


def _path_height(trajectories) -> float:
    """Height of the path panel for an equal aspect at the panels' width, within [1.1, 1.8] in."""
    trajectories = trajectories if isinstance(trajectories, (list, tuple)) else [trajectories]
    ex = np.ptp(np.concatenate([t.coordinate("x") for t in trajectories]))
    ey = np.ptp(np.concatenate([t.coordinate("y") for t in trajectories]))
    return float(np.clip((COLUMN_WIDTH - 1.6) * ey / max(ex, 1e-300) + 0.5, 1.1, 1.8))


def _groups(names: Sequence[str], units: Mapping, angles=None) -> list:
    """The coordinates (or velocities) grouped for one axis each: ``[(kind, unit, names)]`` with kind
    ``"angle"`` (one wrapped panel for all angle coordinates) or ``"plain"`` (one panel per unit)."""
    out, by_unit = [], {}
    ang = [n for n in names if _split(n)[1] == 0 and _is_angle(n, angles, units)]
    for n in names:
        if n in ang:
            continue
        by_unit.setdefault(_unit(n, units), []).append(n)
    for unit, group in by_unit.items():
        out.append(("plain", unit, group))
    if ang:
        out.append(("angle", "rad", ang))
    return out


def _layout(plt, heights: Sequence[float], title: str | None):
    """A one-column figure with panels of the given heights (scaled down to :data:`MAX_HEIGHT`)."""
    total = sum(heights) + (0.25 if title else 0.0) + 0.3
    scale = min(1.0, MAX_HEIGHT / total)
    fig = plt.figure(figsize=(COLUMN_WIDTH, min(MAX_HEIGHT, total)), constrained_layout=True)
    grid = fig.add_gridspec(len(heights), 1, height_ratios=[h * scale for h in heights])
    return fig, grid


@_paper_style
def summary_figure(traj, title: str | None = None, units=None, angles=None):
    """The figure of ``anholo simulate --plot``, one column wide (:data:`COLUMN_WIDTH`, at most
    :data:`MAX_HEIGHT` high): the path in the plane (only if x and y both move, :func:`path_is_informative`),
    the other coordinates (one axis per unit), the angles (wrapped, own panel), the velocities (one axis per
    unit), the multipliers and the drift; every axis with its unit from ``units`` (a mapping or a system:
    the file's ``[units]``)."""
    units = _units(units)
    with _paper() as plt:
        coords = list(traj.coordinate_names)
        planar = path_is_informative(traj)
        shown = [c for c in coords if not (planar and c in ("x", "y"))]  # x(t), y(t) are in the path
        panels = [("coord", kind, unit, group) for kind, unit, group in _groups(shown, units, angles)]
        panels += [("vel", kind, unit, group) for kind, unit, group in
                   _groups([f"{c}_dot" for c in coords], units, angles)]
        if traj.multipliers.size:
            panels.append(("mult", "plain", None, list(traj.multiplier_names)))
        panels.append(("drift", None, None, None))
        heights = ([_path_height(traj)] if planar else []) + [PANEL_HEIGHT] * len(panels)
        fig, grid = _layout(plt, heights, title)
        first = 1 if planar else 0
        axes = [fig.add_subplot(grid[k + first, 0]) for k in range(len(panels))]
        for ax, (what, kind, unit, names) in zip(axes, panels):
            if what == "drift":
                plot_drift(traj, ax=ax, units=units)
            elif kind == "angle":
                plot_angles(traj, names, ax=ax, angles=names, units=units)
            else:
                plot_trajectory(traj, names, ax=ax, units=units)
                fallback = {"coord": "$q$", "vel": r"$\dot q$", "mult": r"$\lambda$"}[what]
                ax.set_ylabel(_ylabel(names, units, fallback))
        for ax in axes[:-1]:
            ax.sharex(axes[-1])
            ax.set_xlabel("")
            ax.tick_params(labelbottom=False)
        if planar:
            plot_path(traj, ax=fig.add_subplot(grid[0, 0]), units=units)
        if title:
            fig.suptitle(title)
    return fig


@_paper_style
def comparison_figure(trajectories: Sequence, labels: Sequence[str] | None = None, title: str | None = None,
                      units=None):
    """Nonholonomic vs vakonomic (or any runs of one system from the same state), one column wide: the paths in
    the plane (if x and y move), the coordinates overlaid (one axis per unit; colour = quantity, line style =
    run, the runs' styles in the legend below), and ``max_A |q^A_k − q^A_0|`` of each run against the first on
    a log scale (exact zeros shown as such)."""
    units = _units(units)
    if len(trajectories) < 2:
        raise PlotError("comparison_figure needs at least two trajectories (e.g. nonholonomic and vakonomic).")
    labels = list(labels) if labels is not None else [t.kind for t in trajectories]
    if len(labels) != len(trajectories):
        raise PlotError(f"{len(trajectories)} trajectories but {len(labels)} labels; give one label per trajectory.")
    first = trajectories[0]
    if any(t.coordinate_names != first.coordinate_names or len(t.t) != len(first.t) or not np.allclose(t.t, first.t)
           for t in trajectories[1:]):
        raise PlotError("the trajectories to compare must have the same coordinates and output times.")
    with _paper() as plt:
        planar = path_is_informative(list(trajectories))
        coords = [c for c in first.coordinate_names if not (planar and c in ("x", "y"))]
        groups = _groups(coords, units)
        heights = ([_path_height(list(trajectories))] if planar else []) + [PANEL_HEIGHT] * (len(groups) + 1)
        fig, grid = _layout(plt, heights, title)
        top = 1 if planar else 0
        axes = [fig.add_subplot(grid[k + top, 0]) for k in range(len(groups) + 1)]
        for ax, (kind, unit, names) in zip(axes, groups):
            colours = {}
            for k, traj in enumerate(trajectories):
                for name in names:
                    y = traj.coordinate(name)
                    line, = ax.plot(traj.t, _wrapped(y) if kind == "angle" else y, _STYLES[k % len(_STYLES)],
                                    color=colours.get(name), label=_symbol(name) if k == 0 else None)
                    colours.setdefault(name, line.get_color())
            if kind == "angle":
                _pi_ticks(ax)
            ax.set_ylabel(_ylabel(names, {**units, **{n: "rad" for n in names}} if kind == "angle" else units, "$q$"))
            ax.grid(True, alpha=0.3)
            if len(names) > 1:  # one quantity: its name is the axis label
                _legend_outside(ax)
        gap = axes[-1]
        for k, (traj, lab) in enumerate(zip(trajectories[1:], labels[1:])):
            # from the same initial state the gap at t = 0 is 0 by construction: drawn from the second point on
            _honest_log(gap, first.t[1:], np.max(np.abs(traj.q - first.q), axis=0)[1:], lab,
                        linestyle=_STYLES[(k + 1) % len(_STYLES)], color="k")
        gap.set_xlabel(_time_label(units))
        gap.set_ylabel(r"gap $\mathrm{max}_A|\Delta q^A|$")
        gap.grid(True, which="major", alpha=0.3)
        if len(trajectories) > 2 or any("exactly" in line.get_label() for line in gap.lines):
            _legend_outside(gap)
        for ax in axes[:-1]:
            ax.sharex(gap)
            ax.tick_params(labelbottom=False)
        if planar:
            plot_path(list(trajectories), ax=fig.add_subplot(grid[0, 0]), units=units)  # runs: legend below
        from matplotlib.lines import Line2D

        fig.legend([Line2D([], [], color="k", linestyle=_STYLES[k % len(_STYLES)]) for k in range(len(labels))],
                   labels, loc="outside lower center", ncol=len(labels), frameon=False)
        if title:
            fig.suptitle(title)
    return fig


_MONITOR_TITLES = {"energy_drift": r"$\mathrm{max}_t\,|E-E_0|/|E_0|$",
                   "constraint_residual": r"$\mathrm{max}_{t,a}\,|\varphi_a|$",
                   "nh_vak_gap": r"$\mathrm{max}_t\,|q_{\mathrm{nh}} - q_{\mathrm{vak}}|$"}
_MONITOR_WORDS = {"energy_drift": "energy drift", "constraint_residual": "constraint residual",
                  "nh_vak_gap": "nh-vak gap"}


@_paper_style
def plot_sweep(result, monitors: Sequence[str] | None = None, x: str | None = None, ax=None, units=None):
    """The monitors of a :class:`~anholo.numerics.sweep.SweepResult` against a swept name on a log scale
    (one line per value of a second swept name, up to 8; exact zeros shown as such; failed runs are gaps),
    one column wide.  A monitor that is exactly 0 in every run gets no panel: the title says "= 0 everywhere"
    (if every monitor is, one panel says so).  The swept name's axis has its unit from ``units``."""
    units = _units(units)
    monitors = list(monitors) if monitors is not None else [
        c for c in result.columns if c in ("energy_drift", "constraint_residual", "nh_vak_gap")]
    x = x or result.names[0]
    if x not in result.names:
        raise PlotError(f"{x!r} is not a swept name; the swept names are {', '.join(result.names)}.")
    for name in monitors:
        if name not in result.columns:
            raise PlotError(f"{name!r} is not a column of this sweep; its columns are {', '.join(result.columns)}.")

    def zero_everywhere(name):
        values = result.column(name)
        finite = values[np.isfinite(values)]
        return finite.size > 0 and bool(np.all(finite == 0))

    zeros = [m for m in monitors if zero_everywhere(m)]
    drawn = [m for m in monitors if m not in zeros] or monitors[:1]
    others = [n for n in result.names if n != x]
    fig, axes = _axes(ax, rows=len(drawn), figsize=(COLUMN_WIDTH, min(MAX_HEIGHT, 0.55 + 1.25 * len(drawn))))
    xs = result.column(x)
    groups = [(None, np.ones(len(result), bool))]
    if others:
        key = result.column(others[0])
        values = sorted(set(key.tolist()))
        if len(values) > 8:
            values = values[:: math.ceil(len(values) / 8)]
        groups = [(v, key == v) for v in values]
    for axm, name in zip(axes, drawn):
        ys = result.column(name)
        shown = False
        for k, (value, mask) in enumerate(groups):
            order = np.argsort(xs[mask], kind="stable")
            lab = _MONITOR_TITLES.get(name, name) if value is None else \
                f"{_swept_label(others[0], units)} = {value:.4g}"
            shown = _honest_log(axm, xs[mask][order], ys[mask][order], lab, marker="o", ms=3,
                                linestyle=_STYLES[k % len(_STYLES)]) or shown
        if not shown:
            _all_zero(axm, " and ".join(_MONITOR_WORDS.get(m, m) for m in zeros) if name in zeros else
                      _MONITOR_TITLES.get(name, name))
        axm.set_ylabel(_MONITOR_TITLES.get(name, name))
        axm.grid(True, which="major", alpha=0.3)
        if axm.get_legend_handles_labels()[0] and (others or any("exactly" in l.get_label() for l in axm.lines)):
            _legend_outside(axm)
    for axm in axes:
        axm.set_xlabel(_swept_label(x, units))
    if ax is None:
        per = _time_unit(units)
        head = f"{result.system}: {result.kind} field, $t$ in [0, {result.t_end:g}]" + (f" {per}" if per else "")
        said = [m for m in zeros if m not in drawn]
        if said:
            head += "\n" + ", ".join(_MONITOR_WORDS.get(m, m) for m in said) + " = 0 exactly everywhere"
        fig.suptitle(head)
    return fig


def save_figure(fig, path, dpi: int = DPI) -> Path:
    """Save ``fig`` as PNG, PDF or SVG (by the extension of ``path``; raster at ``dpi``, default :data:`DPI`)
    and close it."""
    path = Path(path)
    if path.suffix.lower() not in _FORMATS:
        raise PlotError(f"cannot save a figure as {path.name!r}: use a file name ending in .png, .pdf or .svg.")
    plt = _pyplot()
    try:
        fig.savefig(path, dpi=dpi)
    except OSError as exc:
        raise PlotError(f"cannot write the figure to {path}: {exc.strerror or exc}.") from exc
    finally:
        plt.close(fig)
    return path


def track_branches(spectra: Sequence) -> np.ndarray:
    """Eigenvalues over a sweep as continuous branches: ``out[i, k]`` is branch ``k`` at sweep point ``i``
    (NaN where a point has fewer eigenvalues); :func:`anholo.analysis.linear_problem.track_branches` (the
    analysis lists a sweep's eigenvalues by the same branches, :func:`~anholo.analysis.linear_problem.follow_branches`).

    >>> b = track_branches([[1, -1], [0.5, -0.5], [-0.01, 0.01], [-0.5, 0.5]])
    >>> b[:, 0].real.round(2).tolist()
    [1.0, 0.5, -0.01, -0.5]
    """
    from .analysis.linear_problem import track_branches as track

    return track(spectra)


def _intervals(values: np.ndarray, mask: np.ndarray) -> list:
    """Contiguous ranges of sorted sweep values where ``mask`` holds, widened to the midpoints between points
    (half a step at the ends)."""
    n = len(values)
    edges = np.empty(n + 1)
    if n == 1:
        edges[:] = [values[0] - 0.5, values[0] + 0.5]
    else:
        mid = (values[1:] + values[:-1]) / 2
        edges[1:-1] = mid
        edges[0] = values[0] - (mid[0] - values[0])
        edges[-1] = values[-1] + (values[-1] - mid[-1])
    out, start = [], None
    for i in range(n):
        if mask[i] and start is None:
            start = i
        if start is not None and (i == n - 1 or not mask[i + 1]):
            out.append((edges[start], edges[i + 1]))
            start = None
    return out


@_paper_style
def eigenvalue_plot(values, linearizations, name: str, ax=None, unit: str | None = None, title: str | None = None,
                    units=None, threshold: float | None = None):
    """Real (top) and imaginary (bottom, ``|Im λ|``) parts of the eigenvalues of linearisations over a sweep of
    ``name`` (:meth:`anholo.analysis.linearization.LinearizationProblem.sweep`), one column wide; the branches
    followed continuously (:func:`track_branches`; a complex-conjugate pair in one colour), the values where the
    linearisation is stable (``max Re λ < −τ``) shaded green and marginal ones (``|max Re λ| ≤ τ``) grey, τ =
    ``threshold`` (default :data:`~anholo.analysis.linear_problem.STABILITY_THRESHOLD`) stated in the legend.
    The axis of ``name`` carries ``unit`` (or ``units[name]``), the eigenvalues 1/(the time's unit) if known."""
    from .analysis.linear_problem import STABILITY_THRESHOLD, stability_verdict

    units = _units(units)
    tau = STABILITY_THRESHOLD if threshold is None else float(threshold)
    x = np.asarray(values, float)
    if len(x) != len(linearizations):
        raise PlotError(f"{len(x)} sweep values but {len(linearizations)} linearisations; give one value per "
                        "linearisation.")
    order = np.argsort(x, kind="stable")
    x = x[order]
    lins = [linearizations[i] for i in order]
    branches = track_branches([r.eigenvalues for r in lins])
    verdicts = np.array([stability_verdict(r.eigenvalues, tau) for r in lins])
    with _paper():
        if ax is None:
            fig, axes = _axes(None, rows=2, figsize=(COLUMN_WIDTH, 3.4 + (0.2 if title else 0.0)))
            re_ax, im_ax = axes
            im_ax.sharex(re_ax)
            re_ax.tick_params(labelbottom=False)
        else:
            fig, re_ax, im_ax = ax.figure, ax, None
        colours, colour_of = [], {}
        for k in range(branches.shape[1]):
            b = branches[:, k]
            for j in range(k):  # the conjugate of an earlier branch: its colour
                ok = np.isfinite(b) & np.isfinite(branches[:, j])
                if ok.any() and np.allclose(b[ok], np.conj(branches[ok, j]), atol=1e-9, rtol=1e-9) \
                        and np.any(np.abs(b[ok].imag) > 1e-9):
                    colour_of[k] = colour_of[j]
                    break
            else:
                colour_of[k] = f"C{len(set(colour_of.values())) % 10}"
            style = {"marker": "o", "ms": 2.5} if len(x) < 3 else {}
            re_ax.plot(x, b.real, color=colour_of[k], **style)
            if im_ax is not None:
                im_ax.plot(x, np.abs(b.imag), color=colour_of[k], **style)
        for target in [a for a in (re_ax, im_ax) if a is not None]:
            for kind, colour, hatch in (("stable", "tab:green", None), ("marginal", "0.6", "///")):
                for k, (lo, hi) in enumerate(_intervals(x, verdicts == kind)):
                    target.axvspan(lo, hi, color=colour, alpha=0.18 if hatch is None else 0.12, lw=0,
                                   hatch=hatch, zorder=0,
                                   label=(f"stable: max Re λ < −{tau:g}" if kind == "stable" else
                                          f"marginal: |max Re λ| ≤ {tau:g}") if k == 0 and target is re_ax else None)
            target.axhline(0.0, color="k", lw=0.5)
            target.grid(True, alpha=0.3)
        per = _time_unit(units)
        rate = f" [1/{per}]" if per else ""
        re_ax.set_ylabel(r"Re $\lambda$" + rate)
        label_unit = unit if unit is not None else units.get(name)
        xlabel = tex_name(name, {name: label_unit} if label_unit else {}) if name.isidentifier() else \
            name + (f" [{label_unit}]" if label_unit else "")
        if im_ax is not None:
            im_ax.set_ylabel(r"$|$Im $\lambda|$" + rate)
            im_ax.set_xlabel(xlabel)
        else:
            re_ax.set_xlabel(xlabel)
        handles, labels = re_ax.get_legend_handles_labels()
        if not handles:  # nothing shaded: say why
            from matplotlib.patches import Patch

            handles, labels = [Patch(color="none")], [f"unstable everywhere (max Re λ > {tau:g})"]
        if ax is None:
            fig.legend(handles, labels, loc="outside lower center", ncol=1, frameon=False)
        else:
            _legend_outside(re_ax)
        if title:
            (fig.suptitle if ax is None else re_ax.set_title)(title)
    return fig

"""Figures of computed motions and sweeps, fit for a paper (matplotlib, installed with anholo).

Every function draws on a given matplotlib ``Axes`` (or makes a figure) and returns
the figure; :func:`save_figure` writes PNG, PDF or SVG by the file's extension.  The
Agg backend is used unless pyplot was already imported (e.g. Jupyter's inline backend).

Conventions of every figure:

* quantities are named in LaTeX (``theta`` → θ, ``psi1`` → ψ₁, ``theta_dot`` → θ̇,
  ``lambda1`` → λ₁), with their unit in brackets where one is known: ``units={"x": "m"}``;
  angles (coordinates named by a Greek letter, or listed in ``angles=``) are in rad;
* angles get their own panel, wrapped to (−π, π] (the line is broken where it wraps),
  so that a spinning wheel does not flatten the other coordinates;
* with planar position coordinates ``x`` and ``y`` the path in the plane is drawn
  (equal aspect);
* drift and residuals are on a log scale; values that are exactly 0 cannot be drawn
  there, so they are marked as a band on the bottom edge labelled "= 0 exactly" —
  never drawn at an invented floor such as 1e-17.

Functions: :func:`plot_trajectory`, :func:`plot_angles`, :func:`plot_path`,
:func:`plot_comparison`, :func:`plot_drift`, :func:`plot_phase_portrait`,
:func:`summary_figure` (``anholo simulate --plot``), :func:`comparison_figure`
(nonholonomic vs vakonomic, ``anholo simulate --overlay vakonomic``), :func:`plot_sweep`
(``anholo sweep --plot``), :func:`save_figure`.
"""

from __future__ import annotations

import math
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
]

_FORMATS = (".png", ".pdf", ".svg")
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
          "kappa", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega"}
_STYLES = ["-", "--", ":", "-."]


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


def _axes(ax, rows: int = 1, figsize=(7, 4)):
    plt = _pyplot()
    if ax is not None:
        return ax.figure, [ax] if rows == 1 else ax
    fig, axes = plt.subplots(rows, 1, figsize=figsize, squeeze=False, constrained_layout=True)
    return fig, [a[0] for a in axes]


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
    import sympy as sp

    return sp.latex(sp.Symbol(base))


def tex_name(name: str, units: Mapping | None = None) -> str:
    """A quantity's name as matplotlib mathtext, with its unit: ``tex_name("theta_dot")`` is
    ``$\\dot{\\theta}$``; ``tex_name("x", {"x": "m"})`` is ``$x$ [m]``.

    >>> print(tex_name("psi1_dot"))
    $\\dot{\\psi}_{1}$ [rad/s]
    """
    base, dots = _split(name)
    tex = _base_tex(base)
    if dots:
        accent = {1: r"\dot", 2: r"\ddot"}.get(dots, r"\dddot")
        head, sep, sub = tex.partition("_")
        tex = f"{accent}{{{head}}}{sep}{sub}"
    unit = _unit(name, units)
    return f"${tex}$" + (f" [{unit}]" if unit else "")


def _is_angle(name: str, angles=None) -> bool:
    base, _ = _split(name)
    if angles is not None:
        return base in angles
    return base.rstrip("0123456789_").lower() in _GREEK and not base.startswith(("lambda", "mu"))


def _unit(name: str, units: Mapping | None) -> str | None:
    base, dots = _split(name)
    if units and name in units:
        return units[name]
    if units and base in units:
        u = units[base]
        return u if dots == 0 else f"{u}/s" if dots == 1 else f"{u}/s$^{dots}$"
    if _is_angle(name) and not name.startswith(("lambda", "mu")):
        return "rad" if dots == 0 else "rad/s" if dots == 1 else None
    return None


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
    ax.set_yticks([-math.pi, -math.pi / 2, 0, math.pi / 2, math.pi])
    ax.set_yticklabels([r"$-\pi$", r"$-\pi/2$", "0", r"$\pi/2$", r"$\pi$"])


def _finish(ax, legend: bool = True) -> None:
    ax.grid(True, alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")


def plot_trajectory(traj, names: Sequence[str] | str | None = None, ax=None, label: str | None = None,
                    units: Mapping | None = None, wrap: bool = False, **style):
    """Plot coordinates, ``<coordinate>_dot`` or multipliers (by name; default all coordinates) against t.

    ``wrap=True`` wraps every plotted quantity to (−π, π] (for angles)."""
    fig, (ax,) = _axes(ax)
    names = _names(traj, names)
    for name in names:
        y = traj.coordinate(name)
        ax.plot(traj.t, _wrapped(y) if wrap else y,
                label=tex_name(name) if label is None else f"{tex_name(name)} ({label})", **style)
    ax.set_xlabel("$t$" + (f" [{units['t']}]" if units and "t" in units else ""))
    ax.set_ylabel(_ylabel(names, units, "value"))
    if wrap:
        _pi_ticks(ax)
    _finish(ax, legend=len(names) > 1 or label is not None)
    return fig


def plot_angles(traj, names: Sequence[str] | str | None = None, ax=None, angles=None, wrap: bool = True):
    """The angle coordinates against t, wrapped to (−π, π] (default) in their own panel."""
    names = [n for n in _names(traj, names) if _is_angle(n, angles)] if names is None or angles is not None \
        else _names(traj, names)
    if not names:
        raise PlotError("this trajectory has no angle coordinates; name them with angles=[...].")
    fig = plot_trajectory(traj, names, ax=ax, wrap=wrap, units={n: "rad" for n in names})
    ax = ax or fig.axes[0]
    ax.set_ylabel("angle [rad]" + (", wrapped" if wrap else "") if len(names) > 1 else tex_name(names[0], {names[0]: "rad"}))
    return fig


def plot_path(trajectories, x: str = "x", y: str = "y", labels: Sequence[str] | None = None, ax=None,
              units: Mapping | None = None):
    """The path in the plane of two position coordinates (equal aspect), start ``o`` and end ``x`` marked."""
    trajectories = [trajectories] if not isinstance(trajectories, (list, tuple)) else list(trajectories)
    labels = list(labels) if labels is not None else [None] * len(trajectories)
    fig, (ax,) = _axes(ax, figsize=(5, 5))
    for k, (traj, lab) in enumerate(zip(trajectories, labels)):
        px, py = traj.coordinate(x), traj.coordinate(y)
        line, = ax.plot(px, py, _STYLES[k % len(_STYLES)], lw=1.2, label=lab)
        ax.plot(px[:1], py[:1], "o", ms=4, color=line.get_color())
        ax.plot(px[-1:], py[-1:], "x", ms=5, color=line.get_color())
    ax.set_xlabel(tex_name(x, units))
    ax.set_ylabel(tex_name(y, units))
    ax.set_aspect("equal", adjustable="datalim")
    _finish(ax, legend=any(lab is not None for lab in labels))
    return fig


def plot_comparison(trajectories: Sequence, labels: Sequence[str] | None = None,
                    names: Sequence[str] | str | None = None, ax=None, units: Mapping | None = None):
    """Overlay several trajectories (same coordinates), one colour per quantity, one line style per run.

    Typical use: the nonholonomic and the vakonomic motion from the same initial state.
    """
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
                            label=f"{tex_name(name)} ({lab})")
            colours.setdefault(name, line.get_color())
    ax.set_xlabel("$t$")
    ax.set_ylabel(_ylabel(names, units, "coordinate"))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small", ncol=len(trajectories))
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
                clip_on=False, label=f"{label} = 0 exactly" + (" (all)" if zero.all() else ""),
                **({"marker": "v", "ms": 6, "linestyle": "none"} if marks else {"lw": 4, "solid_capstyle": "butt"}))
    ax.set_yscale("log")
    return bool(positive.any())


def _all_zero(ax, what: str) -> None:
    """A log axis with nothing positive on it: no invented scale, a statement instead."""
    ax.set_ylim(1e-16, 1e-14)
    ax.set_yticks([])
    ax.minorticks_off()
    ax.text(0.5, 0.5, f"{what} = 0 exactly everywhere", transform=ax.transAxes, ha="center", va="center",
            fontsize="small")


def _swept_label(name: str) -> str:
    """``q0.y`` → y(0), ``qdot0.y`` → ẏ(0), a parameter → its name (mathtext)."""
    if name.startswith("q0."):
        return tex_name(name[3:]) + "$(0)$"
    if name.startswith("qdot0."):
        return tex_name(name[6:] + "_dot") + "$(0)$"
    return tex_name(name)


def plot_drift(traj, ax=None):
    """Relative energy drift ``|E − E(0)|/|E(0)|`` and ``max_a |φ_a|`` against t on a log scale; exact
    zeros are shown as a band on the bottom edge (they have no place on a log axis)."""
    fig, (ax,) = _axes(ax)
    shown = _honest_log(ax, traj.t, traj.energy_drift(), r"$|E-E_0|/|E_0|$")
    res = traj.constraint_residuals()
    if res.size:
        shown = _honest_log(ax, traj.t, np.max(np.abs(res), axis=0), r"$\mathrm{max}_a\,|\varphi_a|$") or shown
    if not shown:  # nothing positive: an empty log axis would pick arbitrary limits
        _all_zero(ax, "drift and residual")
    ax.set_xlabel("$t$")
    ax.set_ylabel("drift / residual")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="x-small", frameon=False)
    return fig


def plot_phase_portrait(trajectories, x: str, y: str, labels: Sequence[str] | None = None, ax=None,
                        units: Mapping | None = None):
    """``y`` against ``x`` (names of coordinates, ``<coordinate>_dot`` or multipliers) for one or more runs."""
    trajectories = [trajectories] if not isinstance(trajectories, (list, tuple)) else list(trajectories)
    labels = list(labels) if labels is not None else [None] * len(trajectories)
    fig, (ax,) = _axes(ax, figsize=(5, 5))
    for traj, lab in zip(trajectories, labels):
        ax.plot(traj.coordinate(x), traj.coordinate(y), label=lab, lw=1)
        ax.plot(traj.coordinate(x)[:1], traj.coordinate(y)[:1], "o", ms=3, color=ax.lines[-1].get_color())
    ax.set_xlabel(tex_name(x, units))
    ax.set_ylabel(tex_name(y, units))
    _finish(ax, legend=any(lab is not None for lab in labels))
    return fig


def _planar(traj) -> bool:
    return "x" in traj.coordinate_names and "y" in traj.coordinate_names


def summary_figure(traj, title: str | None = None, units: Mapping | None = None, angles=None):
    """The figure of ``anholo simulate --plot``: the path in the plane (if there are coordinates x and y),
    the other coordinates, the angles (wrapped, own panel), the velocities, the multipliers and the drift."""
    plt = _pyplot()
    coords = list(traj.coordinate_names)
    ang = [c for c in coords if _is_angle(c, angles)]
    lin = [c for c in coords if c not in ang]
    panels = [("lin", lin)] if lin else []
    if ang:
        panels.append(("ang", ang))
    panels.append(("vel", [f"{c}_dot" for c in coords]))
    if traj.multipliers.size:
        panels.append(("mult", list(traj.multiplier_names)))
    panels.append(("drift", None))
    planar = _planar(traj)
    rows = len(panels)
    fig = plt.figure(figsize=(10 if planar else 7, 2.3 * rows + 0.4), constrained_layout=True)
    grid = fig.add_gridspec(rows, 2 if planar else 1, width_ratios=[1.5, 1] if planar else None)
    axes = [fig.add_subplot(grid[k, 0]) for k in range(rows)]
    for ax, (kind, names) in zip(axes, panels):
        if kind == "lin":
            plot_trajectory(traj, names, ax=ax, units=units)
            ax.set_ylabel(_ylabel(names, units, "coordinate"))
        elif kind == "ang":
            plot_angles(traj, names, ax=ax, angles=names)
        elif kind == "vel":
            plot_trajectory(traj, names, ax=ax, units=units)
            ax.set_ylabel("velocity" if len(names) > 1 else ax.get_ylabel())
        elif kind == "mult":
            plot_trajectory(traj, names, ax=ax)
            ax.set_ylabel("multiplier" if len(names) > 1 else ax.get_ylabel())
        else:
            plot_drift(traj, ax=ax)
    for ax in axes[:-1]:
        ax.sharex(axes[-1])
        ax.set_xlabel("")
    if planar:
        plot_path(traj, ax=fig.add_subplot(grid[:, 1]), units=units)
    if title:
        fig.suptitle(title)
    return fig


def comparison_figure(trajectories: Sequence, labels: Sequence[str] | None = None, title: str | None = None,
                      units: Mapping | None = None):
    """Nonholonomic vs vakonomic (or any runs of one system from the same state): the paths in the plane
    (if there are coordinates x and y), the coordinates overlaid, and ``max_A |q^A_k − q^A_0|`` of each run
    against the first on a log scale (exact zeros shown as such)."""
    if len(trajectories) < 2:
        raise PlotError("comparison_figure needs at least two trajectories (e.g. nonholonomic and vakonomic).")
    labels = list(labels) if labels is not None else [t.kind for t in trajectories]
    if len(labels) != len(trajectories):
        raise PlotError(f"{len(trajectories)} trajectories but {len(labels)} labels; give one label per trajectory.")
    first = trajectories[0]
    if any(t.coordinate_names != first.coordinate_names or len(t.t) != len(first.t) or not np.allclose(t.t, first.t)
           for t in trajectories[1:]):
        raise PlotError("the trajectories to compare must have the same coordinates and output times.")
    plt = _pyplot()
    planar = _planar(first)
    coords = list(first.coordinate_names)
    ang = [c for c in coords if _is_angle(c)]
    lin = [c for c in coords if c not in ang]
    groups = [g for g in (lin, ang) if g]
    rows = len(groups) + 1
    fig = plt.figure(figsize=(10 if planar else 7, 2.4 * rows + 0.4), constrained_layout=True)
    grid = fig.add_gridspec(rows, 2 if planar else 1, width_ratios=[1.5, 1] if planar else None)
    axes = [fig.add_subplot(grid[k, 0]) for k in range(rows)]
    for ax, names in zip(axes, groups):
        plot_comparison(trajectories, labels, names, ax=ax, units=units)
    for traj, lab in zip(trajectories[1:], labels[1:]):
        _honest_log(axes[-1], first.t, np.max(np.abs(traj.q - first.q), axis=0),
                    rf"$\mathrm{{max}}_A\,|q^A_{{\mathrm{{{lab}}}}} - q^A_{{\mathrm{{{labels[0]}}}}}|$")
    axes[-1].set_xlabel("$t$")
    axes[-1].set_ylabel("gap")
    axes[-1].grid(True, which="both", alpha=0.3)
    axes[-1].legend(loc="lower right", fontsize="x-small")
    for ax in axes[:-1]:
        ax.sharex(axes[-1])
        ax.set_xlabel("")
    if planar:
        plot_path(trajectories, labels=labels, ax=fig.add_subplot(grid[:, 1]), units=units)
    if title:
        fig.suptitle(title)
    return fig


def plot_sweep(result, monitors: Sequence[str] | None = None, x: str | None = None, ax=None):
    """The monitors of a :class:`~anholo.numerics.sweep.SweepResult` against a swept name on a log scale
    (one line per value of a second swept name, up to 8; exact zeros shown as such; failed runs are gaps)."""
    monitors = list(monitors) if monitors is not None else [
        c for c in result.columns if c in ("energy_drift", "constraint_residual", "nh_vak_gap")]
    x = x or result.names[0]
    if x not in result.names:
        raise PlotError(f"{x!r} is not a swept name; the swept names are {', '.join(result.names)}.")
    others = [n for n in result.names if n != x]
    fig, axes = _axes(ax, rows=len(monitors), figsize=(7, 2.6 * len(monitors) + 0.3))
    xs = result.column(x)
    groups = [(None, np.ones(len(result), bool))]
    if others:
        key = result.column(others[0])
        values = sorted(set(key.tolist()))
        if len(values) > 8:
            values = values[:: math.ceil(len(values) / 8)]
        groups = [(v, key == v) for v in values]
    titles = {"energy_drift": r"$\mathrm{max}_t\,|E-E_0|/|E_0|$", "constraint_residual": r"$\mathrm{max}_{t,a}\,|\varphi_a|$",
              "nh_vak_gap": r"$\mathrm{max}_t\,|q_{\mathrm{nh}} - q_{\mathrm{vak}}|$"}
    for axm, name in zip(axes, monitors):
        ys = result.column(name)
        shown = False
        for k, (value, mask) in enumerate(groups):
            order = np.argsort(xs[mask], kind="stable")
            lab = titles.get(name, name) if value is None else f"{_swept_label(others[0])} = {value:.4g}"
            shown = _honest_log(axm, xs[mask][order], ys[mask][order], lab, marker="o", ms=3,
                                linestyle=_STYLES[k % len(_STYLES)]) or shown
        if not shown:
            _all_zero(axm, titles.get(name, name))
        axm.set_ylabel(titles.get(name, name))
        axm.grid(True, which="both", alpha=0.3)
        if axm.get_legend_handles_labels()[0] and (others or any(l.get_label().endswith("exactly") or
                                                                  "exactly" in l.get_label() for l in axm.lines)):
            axm.legend(loc="best", fontsize="small")
    for axm in axes:
        axm.set_xlabel(_swept_label(x))
    if ax is None:
        fig.suptitle(f"{result.system}: {result.kind} field, t in [0, {result.t_end:g}]")
    return fig


def save_figure(fig, path) -> Path:
    """Save ``fig`` as PNG, PDF or SVG (by the extension of ``path``) and close it."""
    path = Path(path)
    if path.suffix.lower() not in _FORMATS:
        raise PlotError(f"cannot save a figure as {path.name!r}: use a file name ending in .png, .pdf or .svg.")
    plt = _pyplot()
    try:
        fig.savefig(path, dpi=150)
    except OSError as exc:
        raise PlotError(f"cannot write the figure to {path}: {exc.strerror or exc}.") from exc
    finally:
        plt.close(fig)
    return path


def eigenvalue_plot(values, linearizations, name: str, ax=None, unit: str | None = None, title: str | None = None):
    """Real and imaginary parts of the eigenvalues of linearisations over a sweep of ``name``
    (:meth:`anholo.analysis.linearization.LinearizationProblem.sweep`), the axis labelled ``name [unit]``;
    returns the figure."""
    fig, axes = _axes(ax, rows=1)
    a = axes[0]
    for k in range(max((len(r.eigenvalues) for r in linearizations), default=0)):
        re = [r.eigenvalues[k].real if k < len(r.eigenvalues) else float("nan") for r in linearizations]
        im = [abs(r.eigenvalues[k].imag) if k < len(r.eigenvalues) else float("nan") for r in linearizations]
        a.plot(values, re, "o", ms=3, color="C0", label="Re" if k == 0 else None)
        a.plot(values, im, "x", ms=3, color="C1", label="|Im|" if k == 0 else None)
    a.axhline(0.0, color="k", lw=0.5)
    a.set_xlabel(f"{name} [{unit}]" if unit else name)
    a.set_ylabel("eigenvalues")
    if title:
        a.set_title(title)
    a.legend()
    return fig

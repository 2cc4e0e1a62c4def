"""Figures of computed motions (matplotlib, an optional dependency: ``pip install "anholo[plot]"``).

Every function draws on a given matplotlib ``Axes`` (or makes a figure) and returns
the figure; :func:`save_figure` writes PNG or PDF by the file's extension.  The Agg
backend is used, so nothing needs a display.

* :func:`plot_trajectory` — coordinates (and/or velocities, multipliers) against time;
* :func:`plot_comparison` — several trajectories of the same system overlaid, e.g. the
  nonholonomic and the vakonomic motion from the same initial state;
* :func:`plot_drift` — relative energy drift and constraint residuals on a log scale;
* :func:`plot_phase_portrait` — one quantity against another (``"x"`` vs ``"y"``, or
  ``"theta"`` vs ``"theta_dot"``) for one or several trajectories;
* :func:`summary_figure` — the figure of ``anholo simulate --plot``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import PlotError

__all__ = [
    "plot_trajectory",
    "plot_comparison",
    "plot_drift",
    "plot_phase_portrait",
    "summary_figure",
    "save_figure",
    "eigenvalue_plot",
]

_FORMATS = (".png", ".pdf", ".svg")
_FLOOR = 1e-17


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotError(
            "plotting needs matplotlib, which is not installed; install it with pip install \"anholo[plot]\" "
            "(or pip install matplotlib)."
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


def plot_trajectory(traj, names: Sequence[str] | str | None = None, ax=None, label: str | None = None, **style):
    """Plot coordinates, ``<coordinate>_dot`` or multipliers (by name; default all coordinates) against t."""
    fig, (ax,) = _axes(ax)
    for name in _names(traj, names):
        ax.plot(traj.t, traj.coordinate(name), label=f"{name}" if label is None else f"{name} ({label})", **style)
    ax.set_xlabel("t")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def plot_comparison(trajectories: Sequence, labels: Sequence[str] | None = None,
                    names: Sequence[str] | str | None = None, ax=None):
    """Overlay several trajectories (same coordinates), one colour per quantity, one line style per run.

    Typical use: the nonholonomic and the vakonomic motion from the same initial state.
    """
    if not trajectories:
        raise PlotError("plot_comparison needs at least one trajectory.")
    labels = list(labels) if labels is not None else [t.kind for t in trajectories]
    if len(labels) != len(trajectories):
        raise PlotError(f"{len(trajectories)} trajectories but {len(labels)} labels; give one label per trajectory.")
    fig, (ax,) = _axes(ax)
    styles = ["-", "--", ":", "-."]
    colours = {}
    for k, (traj, lab) in enumerate(zip(trajectories, labels)):
        for name in _names(trajectories[0], names):
            line, = ax.plot(traj.t, traj.coordinate(name), styles[k % len(styles)], color=colours.get(name),
                            label=f"{name} ({lab})")
            colours.setdefault(name, line.get_color())
    ax.set_xlabel("t")
    ax.legend(loc="best", fontsize="small", ncol=len(trajectories))
    ax.grid(True, alpha=0.3)
    return fig


def plot_drift(traj, ax=None):
    """Relative energy drift ``|E − E(0)|/|E(0)|`` and ``max_a |φ_a|`` against t (log scale; exact zeros
    are drawn at 1e-17, below the rounding error of double precision)."""
    fig, (ax,) = _axes(ax)
    floor = _FLOOR
    ax.semilogy(traj.t, np.maximum(traj.energy_drift(), floor), label="relative energy drift")
    res = traj.constraint_residuals()
    if res.size:
        ax.semilogy(traj.t, np.maximum(np.max(np.abs(res), axis=0), floor), label="max |constraint residual|")
    ax.set_ylim(bottom=floor / 2)
    ax.set_xlabel("t")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return fig


def plot_phase_portrait(trajectories, x: str, y: str, labels: Sequence[str] | None = None, ax=None):
    """``y`` against ``x`` (names of coordinates, ``<coordinate>_dot`` or multipliers) for one or more runs."""
    trajectories = [trajectories] if not isinstance(trajectories, (list, tuple)) else list(trajectories)
    labels = list(labels) if labels is not None else [None] * len(trajectories)
    fig, (ax,) = _axes(ax, figsize=(5, 5))
    for traj, lab in zip(trajectories, labels):
        ax.plot(traj.coordinate(x), traj.coordinate(y), label=lab, lw=1)
        ax.plot(traj.coordinate(x)[:1], traj.coordinate(y)[:1], "o", ms=3, color=ax.lines[-1].get_color())
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if any(lab is not None for lab in labels):
        ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def summary_figure(traj, title: str | None = None):
    """Coordinates against t, natural velocities (and multipliers) against t, and the drift panel."""
    panels = 3 + (1 if traj.multipliers.size else 0)
    fig, axes = _axes(None, rows=panels, figsize=(7, 2.4 * panels))
    plot_trajectory(traj, ax=axes[0])
    plot_trajectory(traj, [f"{c}_dot" for c in traj.coordinate_names], ax=axes[1])
    k = 2
    if traj.multipliers.size:
        plot_trajectory(traj, list(traj.multiplier_names), ax=axes[k])
        k += 1
    plot_drift(traj, ax=axes[k])
    if title:
        fig.suptitle(title)
    return fig


def save_figure(fig, path) -> Path:
    """Save ``fig`` as PNG, PDF or SVG (by the extension of ``path``) and close it."""
    path = Path(path)
    if path.suffix.lower() not in _FORMATS:
        raise PlotError(f"cannot save a figure as {path.name!r}: use a file name ending in .png, .pdf or .svg.")
    plt = _pyplot()
    try:
        fig.savefig(path, dpi=120)
    except OSError as exc:
        raise PlotError(f"cannot write the figure to {path}: {exc.strerror or exc}.") from exc
    finally:
        plt.close(fig)
    return path


def eigenvalue_plot(values, linearizations, name: str, ax=None):
    """Real and imaginary parts of the eigenvalues of linearisations over a sweep of ``name``
    (:meth:`anholo.analysis.linearization.LinearizationProblem.sweep`); returns the figure."""
    fig, axes = _axes(ax, rows=1)
    a = axes[0]
    for k in range(max((len(r.eigenvalues) for r in linearizations), default=0)):
        re = [r.eigenvalues[k].real if k < len(r.eigenvalues) else float("nan") for r in linearizations]
        im = [abs(r.eigenvalues[k].imag) if k < len(r.eigenvalues) else float("nan") for r in linearizations]
        a.plot(values, re, "o", ms=3, color="C0", label="Re" if k == 0 else None)
        a.plot(values, im, "x", ms=3, color="C1", label="|Im|" if k == 0 else None)
    a.axhline(0.0, color="k", lw=0.5)
    a.set_xlabel(name)
    a.set_ylabel("eigenvalues")
    a.legend()
    return fig

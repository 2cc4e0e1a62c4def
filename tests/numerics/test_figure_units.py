"""The units of the catalogue's ``[units]`` tables on the README's figures and in ``linearize``.

Oracles: the system file's ``[units]`` table read with the file reader (not with the plotting code), and, for a
velocity state, the kinematics stated in the file (the rolling disk's ``x_dot = r cos(yaw) spin_dot``: the free
quasi-velocities of its adapted frame are ``yaw_dot``, ``lean_dot`` and ``spin_dot``, in rad/s).
"""

from __future__ import annotations

import io
import json
import shlex

import pytest
from readme_helpers import readme_commands

pytest.importorskip("matplotlib")

from anholo import plotting
from anholo.cli import main
from anholo.examples import resolve_system


def _figures(monkeypatch):
    """Run the command line keeping the figures it saves (they are saved as usual too)."""
    kept, save = [], plotting.save_figure

    def keep(fig, path, *args, **kwargs):
        kept.append([(ax.get_xlabel(), ax.get_ylabel(), [line.get_label() for line in ax.lines]) for ax in fig.axes])
        return save(fig, path, *args, **kwargs)

    monkeypatch.setattr(plotting, "save_figure", keep)
    return kept


def _axis(axes, label):
    return next(a for a in axes if label in a[2])


def test_readme_simulate_figure_carries_the_files_units(tmp_path, monkeypatch):
    command = next(c for c in readme_commands() if c.startswith("anholo simulate vertical_rolling_disk"))
    monkeypatch.chdir(tmp_path)
    kept = _figures(monkeypatch)
    assert main(shlex.split(command)[1:], out=io.StringIO()) == 0
    assert (tmp_path / "disk.png").exists() and len(kept) == 1
    axes = kept[0]
    units = resolve_system("vertical_rolling_disk").units
    assert units["t"] == "s" and units["x"] == units["y"] == "m" and units["theta"] == units["phi"] == "rad"
    assert [a[0] for a in axes].count(f"$t$ [{units['t']}]") == 1            # the bottom panel's time axis
    path = next(a for a in axes if a[0].startswith("$x$"))
    assert path[0] == f"$x$ [{units['x']}]" and path[1] == f"$y$ [{units['y']}]"
    assert _axis(axes, r"$\dot{x}$")[1].endswith(f"[{units['x']}/{units['t']}]")    # ẋ in m/s
    assert _axis(axes, r"$\dot{\theta}$")[1].endswith(f"[{units['theta']}/{units['t']}]")  # θ̇ in rad/s
    assert _axis(axes, r"$\dot{x}$") is not _axis(axes, r"$\dot{\theta}$")
    assert _axis(axes, r"$\theta$")[1].endswith(f"[{units['theta']}]")


def test_linearize_gives_velocity_states_the_unit_of_their_rates(tmp_path, monkeypatch):
    out = io.StringIO()
    assert main(["linearize", "rolling_disk", "--states", "lean,v1,v2,v3", "--sweep", "v3=0:5:3", "--json"],
                out=out) == 0
    units = json.loads(out.getvalue())["units"]
    file_units = resolve_system("rolling_disk").units
    rate = f"{file_units['spin']}/{file_units['t']}"
    assert units == {"lean": file_units["lean"], "v1": rate, "v2": rate, "v3": rate}
    out = io.StringIO()
    assert main(["linearize", "rolling_disk", "--states", "lean,v1,v2,v3", "--sweep", "v3=0:5:3"], out=out) == 0
    assert out.getvalue().splitlines()[0].endswith(f"over v3 [{rate}]")
    monkeypatch.chdir(tmp_path)
    kept = _figures(monkeypatch)
    assert main(["linearize", "rolling_disk", "--states", "lean,v1,v2,v3", "--sweep", "v3=0:5:3", "--plot", "e.png"],
                out=io.StringIO()) == 0
    labels = [(a[0], a[1]) for a in kept[0]]
    assert ("", r"Re $\lambda$ [1/s]") in labels and any(x.endswith(f"[{rate}]") for x, _ in labels)
    # the sleigh's adapted frame: v1 forward, v2 the lateral velocity (theta_dot = v2/a), both in m/s from
    # the components cos(theta), sin(theta) of their rows
    out = io.StringIO()
    assert main(["linearize", "chaplygin_sleigh", "--at", "v1=1", "--json"], out=out) == 0
    assert json.loads(out.getvalue())["units"] == {"v1": "m/s", "v2": "m/s"}


def test_no_unit_is_invented():
    """The nonholonomic particle declares none (a dimensionless model): no state gets a unit."""
    out = io.StringIO()
    assert main(["linearize", "nonholonomic_particle", "--states", "y,v1,v2", "--at", "v1=1", "--json"],
                out=out) == 0
    assert json.loads(out.getvalue())["units"] == {}

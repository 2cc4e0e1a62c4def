"""The gallery example docs/gallery/parallel_parking.py runs and shows what it claims.

Oracles: its printed figures are checked against the statements of its docstring — the nonholonomic field
integrated by anholo's simulate under the optimal inputs retraces the optimal motion; the energy-optimal
path of the kinematic problem is a vakonomic motion (sub-Riemannian geodesic; Bloch (2003), Ch. 7) to the
collocation accuracy, with the error shrinking like h^4; the nonholonomic motion with the same initial
velocity is far from it.  (The same statements are tested against equations written in the test itself in
test_optimal_control.py.)
"""

import runpy
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("casadi")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "gallery" / "parallel_parking.py"


@pytest.mark.slow
def test_parallel_parking_gallery_example(capsys):
    plt.close("all")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "FigureCanvasAgg is non-interactive", UserWarning)
        ns = runpy.run_path(str(SCRIPT), run_name="__main__")
    assert plt.get_fignums()
    plt.close("all")
    out = capsys.readouterr().out
    assert "Solve_Succeeded" in out and "vakonomic path" in out
    parked = ns["parked"]
    assert np.abs(parked.q[:, -1] - [0.0, 0.5, 0.0, 0.0]).max() < 1e-12
    assert ns["replay_gap"] < 1e-3
    gaps = {n: ns["results"][n][2] for n in (40, 80)}
    assert gaps[40] < 1e-3 and gaps[80] < gaps[40] / 8        # fourth order: about 16
    assert 3.5 < ns["order"] < 4.5
    assert ns["separation"] > 1.0
    geodesic = ns["geodesic"]
    assert abs(geodesic.q[1, -1] - 0.5) < 1e-12

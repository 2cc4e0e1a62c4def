"""Parameter sweeps (``anholo.numerics.sweep``, ``anholo sweep``).

Oracles: every row is recomputed by an independent serial loop — one call of
:func:`simulate` per grid point, the monitors taken directly with numpy from the
trajectory's energy and constraint functions — and the rows must agree bit for bit,
in a local process pool and on a ``distributed.LocalCluster``.  Physics: energy is
conserved by the spherical pendulum (drift at the integrator's tolerance); the
nonholonomic and vakonomic motions of the nonholonomic particle coincide on the
straight line y = 0 and differ once y changes (Cronström & Raita (2009)).
"""

import csv
import math
import sys

import numpy as np
import pytest

from anholo import cli
from anholo.errors import SimulationError
from anholo.numerics import simulate
from anholo.numerics.sweep import grid, parse_range, sweep

from numerics_cases import compiled

T_END = 3.0
RANGES = {"g": (1.0, 9.81, 3), "qdot0.phi": [0.5, 1.0]}
Q0, QDOT0 = [0.8, 0.0], [0.0, 1.0]


def _serial_rows():
    c = compiled("spherical_pendulum", "euler-lagrange")
    rows = []
    for g in np.linspace(1.0, 9.81, 3):
        for w in (0.5, 1.0):
            traj = simulate(c, T_END, Q0, [0.0, w], parameters={"g": float(g)}, points=201)
            E = c.energy(traj.q, traj.qdot, traj._p)
            drift = float(np.max(np.abs(E - E[0]) / abs(E[0])))
            rows.append((float(g), w, drift, 0.0) + tuple(float(x) for x in traj.q[:, -1]) + (traj.nfev, "ok"))
    return rows


@pytest.fixture(scope="module")
def local():
    # the per-run route, whatever the backend (with C the compiled loop agrees to the tolerance, not bit for bit)
    return sweep(compiled("spherical_pendulum", "euler-lagrange"), RANGES, Q0, QDOT0, T_END, workers=2, loop="runs")


def test_local_pool_equals_serial_runs_bit_for_bit(local):
    assert local.columns[:4] == ("g", "qdot0.phi", "energy_drift", "constraint_residual")
    assert list(local.rows) == _serial_rows()
    assert local.column("energy_drift").max() < 1e-8  # energy is conserved (integrator error only)
    assert len({r[5] for r in local.rows}) == 6  # different g, different motions


def test_in_process_equals_pool(local):
    one = sweep(compiled("spherical_pendulum", "euler-lagrange"), RANGES, Q0, QDOT0, T_END, workers=1, loop="runs")
    assert one.rows == local.rows


@pytest.mark.slow
def test_dask_local_cluster_equals_local_pool(local, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl:
        remote = sweep(compiled("spherical_pendulum", "euler-lagrange"), RANGES, Q0, QDOT0, T_END,
                       scheduler=cl.scheduler_address, loop="runs")
        assert remote.rows == local.rows
        out = tmp_path / "dask.csv"
        code = cli.main(["sweep", "spherical_pendulum", "--param", "g=1:9.81:3", "--param", "qdot0.phi=0.5:1:2",
                         "--q0", "0.8,0", "--qdot0", "0,1", "--t-end", str(T_END), "--csv", str(out),
                         "--scheduler", cl.scheduler_address, "--quiet", "--field", "euler-lagrange", "--loop", "runs"])
    assert code == 0
    with open(out) as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:4] == ["g", "qdot0.phi", "energy_drift", "constraint_residual"]
    assert [[float(x) for x in r[:7]] for r in rows[1:]] == [list(r[:7]) for r in local.rows]


def test_gap_column_nonholonomic_vs_vakonomic():
    nh = compiled("nonholonomic_particle", "nonholonomic")
    vak = compiled("nonholonomic_particle", "vakonomic")
    res = sweep(nh, {"qdot0.y": [0.0, 0.5]}, [0, 0, 0], [1, 0, 0], 3.0, compare_with=vak, workers=1)
    gap = res.column("nh_vak_gap")
    assert gap[0] < 1e-12  # on y = 0 both motions are the straight line x = t
    assert gap[1] > 0.1   # the constraint is not integrable: the motions part
    assert np.all(res.column("constraint_residual") < 1e-12)


def test_failed_run_is_a_row_not_an_abort():
    nh = compiled("nonholonomic_particle", "nonholonomic")
    res = sweep(nh, {"q0.y": [0.0, 1.0]}, [0, 0, 0], [1, 0, 0], 1.0, workers=1)
    assert res.column("status")[0] == "ok"
    assert "violate" in res.column("status")[1] and math.isnan(res.column("energy_drift")[1])
    assert res.failed == 1


def test_outputs_and_renderings(local, tmp_path):
    local.to_csv(tmp_path / "s.csv")
    with open(tmp_path / "s.csv") as fh:
        back = list(csv.reader(fh))
    assert [float(x) for x in back[1][:7]] == list(local.rows[0][:7])
    pq = pytest.importorskip("pyarrow.parquet")
    local.to_parquet(tmp_path / "s.parquet")
    table = pq.read_table(tmp_path / "s.parquet")
    assert table.column("energy_drift").to_pylist() == local.column("energy_drift").tolist()
    assert "energy_drift" in str(local) and "<table>" in local._repr_html_()
    assert local._repr_latex_().startswith(r"\begin{tabular}")


def test_grid_and_ranges():
    assert parse_range("m = -1:1:3") == ("m", (-1.0, 1.0, 3))
    assert parse_range("m=2") == ("m", (2.0, 2.0, 1))
    names, points = grid({"a": (0, 1, 2), "b": [5.0, 6.0, 7.0]})
    assert names == ("a", "b") and len(points) == 6 and points[1] == (0.0, 6.0)
    for bad in ("m", "m=1:2", "m=1:2:x", "m=1:2:0", "=1:2:3"):
        with pytest.raises(SimulationError, match="--param"):
            parse_range(bad)


def test_errors():
    c = compiled("spherical_pendulum", "euler-lagrange")
    with pytest.raises(SimulationError, match="neither a parameter"):
        sweep(c, {"k": [1.0]}, Q0, QDOT0, 1.0, workers=1)
    with pytest.raises(SimulationError, match="not a coordinate"):
        sweep(c, {"q0.z": [1.0]}, Q0, QDOT0, 1.0, workers=1)
    with pytest.raises(SimulationError, match="cannot connect to the Dask scheduler"):
        sweep(c, {"g": [1.0]}, Q0, QDOT0, 1.0, scheduler="tcp://127.0.0.1:9")


def test_cli_without_dask_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)
    code = cli.main(["sweep", "spherical_pendulum", "--param", "g=1:2:2", "--q0", "0.8,0", "--qdot0", "0,1",
                     "--t-end", "1", "--scheduler", "tcp://127.0.0.1:8786", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("anholo: error: running on a Dask cluster needs dask.distributed")
    assert len(err.strip().splitlines()) == 1


def test_cli_bad_param_is_one_line(capsys):
    code = cli.main(["sweep", "spherical_pendulum", "--param", "g=1:2", "--q0", "0.8,0", "--qdot0", "0,1",
                     "--t-end", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("anholo: error: --param") and len(err.strip().splitlines()) == 1

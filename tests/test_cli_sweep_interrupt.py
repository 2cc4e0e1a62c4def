"""An interrupted sweep keeps every finished row, stops its workers, and resumes.

Real subprocesses receive SIGINT / SIGTERM while the sweep runs; the tables are read back.  Oracle for
the resumed table: the same runs computed here in this process by the Python API (rows are the same
deterministic computation wherever they run, bit for bit)."""

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from anholo.numerics.sweep import sweep
from anholo.system import System

ARGS = ["sweep", "spherical_pendulum", "--param", "g=1:10:40", "--q0=0.8,0", "--qdot0=0,1", "--t-end", "6",
        "--workers", "2", "--quiet"]


def _children(pid: int) -> set:
    out = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _rows(path) -> list:
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def _interrupt(tmp_path, sig):
    out = tmp_path / "table.csv"
    proc = subprocess.Popen([sys.executable, "-m", "anholo", *ARGS, "--csv", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    partial = Path(str(out) + ".partial")
    children = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        children |= _children(proc.pid)
        if partial.exists() and len(partial.read_text().splitlines()) >= 4:  # header + 3 finished rows
            break
        time.sleep(0.05)
    else:  # pragma: no cover
        proc.kill()
        pytest.fail("the sweep wrote no rows in time")
    finished_before = len(partial.read_text().splitlines()) - 1
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    stopped = time.monotonic()
    while any(_alive(c) for c in children) and time.monotonic() - stopped < 2.0:
        time.sleep(0.05)
    return proc.returncode, err, out, partial, finished_before, children


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_sweep_keeps_rows_and_stops_workers(tmp_path, sig):
    code, err, out, partial, before, children = _interrupt(tmp_path, sig)
    assert code == 130, err
    assert "Traceback" not in err and "finished rows" in err
    rows = _rows(out)
    assert rows[0][0] == "g" and len(rows) - 1 >= before  # every row finished before the signal
    assert all(r[-1] == "ok" for r in rows[1:]) and len(rows) - 1 < 40
    assert not partial.exists()
    assert children and not any(_alive(c) for c in children)  # no worker outlives the command by 2 s


@pytest.mark.slow
def test_resume_finishes_the_table_with_the_same_rows(tmp_path):
    code, err, out, _, _, _ = _interrupt(tmp_path, signal.SIGINT)
    assert code == 130
    first = {r[0]: r for r in _rows(out)[1:]}
    res = subprocess.run([sys.executable, "-m", "anholo", *ARGS, "--csv", str(out), "--resume"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    table = _rows(out)
    assert len(table) == 41
    for g, row in first.items():  # the resumed rows are the earlier ones, unchanged
        assert {r[0]: r for r in table[1:]}[g] == row
    # two rows against the Python API in this process
    g_values = [float(table[1][0]), float(table[-1][0])]
    api = sweep(System.load("spherical_pendulum"), {"g": g_values}, [0.8, 0], [0, 1], 6.0, workers=1)
    for row_api, row_cli in zip(api.rows, (table[1], table[-1])):
        assert [repr(x) if isinstance(x, float) else str(x) for x in row_api] == row_cli


def test_output_problems_are_refused_before_the_run(tmp_path, capsys):
    from anholo import cli
    from anholo.examples import example_path

    system = tmp_path / "mine.toml"
    system.write_text(example_path("spherical_pendulum").read_text())
    base = ["sweep", str(system), "--param", "g=1:2:2", "--q0=0.8,0", "--qdot0=0,1", "--t-end", "1"]
    before = system.read_text()
    assert cli.main(base + ["--csv", str(system)]) == 2
    assert "input file" in capsys.readouterr().err and system.read_text() == before
    assert cli.main(base + ["--plot", str(tmp_path / "fig.xyz")]) == 2
    assert ".png" in capsys.readouterr().err
    assert cli.main(base + ["--csv", str(tmp_path / "missing" / "t.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli.main(base + ["--resume"]) == 2
    assert "--csv" in capsys.readouterr().err


def test_grid_and_negative_values_are_refused(capsys):
    from anholo import cli

    base = ["sweep", "spherical_pendulum", "--q0=0.8,0", "--qdot0=0,1", "--t-end", "1"]
    assert cli.main(base + ["--param", "g=1:2:1000000000"]) == 2
    assert "runs" in capsys.readouterr().err
    assert cli.main(base + ["--param", "g=1:2:1000", "--param", "m=1:2:1000"]) == 2
    assert "runs" in capsys.readouterr().err


def test_swept_values_follow_the_rule_of_set(capsys):
    from anholo import cli

    base = ["sweep", "spherical_pendulum", "--q0=0.8,0", "--qdot0=0,1", "--t-end", "1"]
    assert cli.main(base + ["--param", "m=-1:1:5"]) == 2
    err = capsys.readouterr().err
    assert "--param m" in err and "positive" in err


def test_resume_refuses_the_rows_of_a_run_with_other_settings(tmp_path, capsys):
    """OUT.csv.run.json records what a row depends on besides its swept values: --resume with another
    initial state is refused (one line naming it) instead of mixing two runs' rows; the same command resumes."""
    from anholo import cli

    out = tmp_path / "t.csv"
    base = ["sweep", "spherical_pendulum", "--param", "g=1:2:2", "--q0=0.8,0", "--t-end", "0.5", "--workers", "1",
            "--quiet", "--csv", str(out)]
    assert cli.main(base + ["--qdot0=0,1"]) == 0
    capsys.readouterr()
    rows = out.read_text()
    assert cli.main(base + ["--qdot0=0,1.5", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "qdot0" in err and "other settings" in err and len(err.strip().splitlines()) == 1
    assert out.read_text() == rows  # the earlier table untouched
    assert cli.main(base + ["--qdot0=0,1", "--resume"]) == 0
    assert out.read_text() == rows


def test_a_stopped_worker_ends_without_a_traceback():
    """The parent stops its workers with SIGTERM; a worker must not run the SIGTERM handler it inherited from
    the command line (which raises KeyboardInterrupt: an idle worker, waiting for a task, prints a traceback
    of its own).  Busy and idle workers, five times each."""
    code = r'''
import signal, sys, time
from concurrent.futures import ProcessPoolExecutor, wait
from anholo.numerics.batch import _init_worker, _stop

def busy(seconds):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        sum(range(1000))

def terminate(signum, frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, terminate)
for k in range(10):
    pool = ProcessPoolExecutor(max_workers=2, initializer=_init_worker, initargs=(None,))
    futures = [pool.submit(busy, 30 if k % 2 else 0.01) for i in range(2)]
    if k % 2 == 0:
        wait(futures)  # the workers are idle, waiting for the next task
    time.sleep(0.3)
    _stop(pool)
print("stopped")
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "stopped", out.stderr
    assert "Traceback" not in out.stderr, out.stderr

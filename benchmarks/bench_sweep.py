#!/usr/bin/env python
"""Benchmark: scaling of parameter sweeps (anholo.numerics.sweep) with the number of workers.

One sweep — the Euler–Lagrange field of the spherical pendulum over a grid of the
gravity ``g`` and the initial azimuthal velocity ``phi_dot(0)`` (a motion that keeps
oscillating, so the cost of a run grows with T), each run over ``[0, T]`` with DOP853,
rtol 1e-10, atol 1e-12 — executed by four routes, side by side:

* ``serial``        — ``workers=1`` (in this process; the baseline);
* ``pool-2``        — a local ``ProcessPoolExecutor`` with 2 processes (the default route);
* ``dask-1``/``dask-2`` — a ``distributed.LocalCluster`` with 1 or 2 worker processes
  (1 thread each), given to the sweep by its scheduler address like a remote cluster.

Reported per route: wall time of the sweep (median of ``--repeat``), speed-up and
parallel efficiency against ``serial``, and whether the rows equal the serial rows bit
for bit; the share of a core the serial run actually got (CPU time / wall time) shows how
busy the machine was.  Cluster start-up is timed separately (it is paid once per session, not per
sweep).  The machine's load average is recorded: other processes compete for the cores.

Then (``--bicycle N``, default 1,000; 0 skips it) a sweep of the Whipple bicycle (Maggi's route) over a grid of
``g`` and the frame mass ``mframe``, every run 10 s at 5 m/s from a slightly leaned upright state, through the
compiled loop of :mod:`anholo.numerics.batch_loop` (all runs in generated C, 64 per task, on the local
process pool): its wall time, and four of its rows against the per-run route (``loop="runs"``: scipy's
DOP853 per run) — the final coordinates to 1e-8.

Then (``--motor N``, default 1,000; 0 skips it) a sweep of the Chaplygin sleigh with a motor (the exact route's
nonholonomic field) over a grid of the friction coefficients ``c`` and ``k``, every run 10 s with the control input
``tau = 0.3*sin(2*t) - k*theta_dot + 0.05*x*cos(theta)`` given as an expression, by both routes on the local
process pool: the compiled loop (the input's definitions compiled into the generated C) and one ``simulate``
per run (``loop="runs"``: scipy's DOP853, the input evaluated by generated Python at every stage); runs per
second of each and the largest difference of their final coordinates over all rows.

Run from the repository root::

    python benchmarks/bench_sweep.py            # 16 runs, T = 150, 2 repeats; 1,000 bicycle runs
    python benchmarks/bench_sweep.py --quick    # 16 runs, T = 20, 1 repeat
    python benchmarks/bench_sweep.py --skip-pendulum --bicycle 0   # only the 1,000-run sweep of the motor sleigh

Results are printed as a table and written to ``benchmarks/results/sweep.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anholo.numerics import compile_system, from_system  # noqa: E402
from anholo.numerics.sweep import sweep  # noqa: E402
from anholo.system import System  # noqa: E402
from _common import _source_digest, machine_info, print_aligned  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "sweep.json"
OPTIONS = dict(method="DOP853", rtol=1e-10, atol=1e-12)


def _timed(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def bicycle_sweep(runs: int) -> dict:
    """The compiled-loop sweep of ``runs`` bicycle runs of 10 s (module docstring)."""
    import numpy as np
    sys.path.insert(0, str(HERE.parent / "tests"))
    from bench_codegen import upright
    from anholo.algebra import codegen
    from anholo.numerics.batch_loop import compiled_loop, lanes

    if codegen.find_compiler() is None:
        print("bicycle sweep: no C compiler, skipped")
        return {"skipped": "no C compiler"}
    os.environ.pop("ANHOLO_CODEGEN", None)
    load = os.getloadavg()
    t0 = time.perf_counter()
    s = System.load("whipple_bicycle")
    compiled = compile_system(s.maggi())
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled_loop(compiled)  # generated and built (or loaded from the cache) once
    build = time.perf_counter() - t0
    q0, qd0 = upright(s)
    n_g = max(1, runs // 25)
    ranges = {"g": (9.0, 10.5, n_g), "mframe": (75.0, 95.0, runs // n_g)}
    t0 = time.perf_counter()
    res = sweep(compiled, ranges, list(q0), list(qd0), 10.0, points=201, loop="compiled", **OPTIONS)
    wall = time.perf_counter() - t0
    picks = [0, len(res.rows) // 3, 2 * len(res.rows) // 3, len(res.rows) - 1]
    ends = [res.columns.index(c) for c in res.columns if c.endswith("_end")]
    worst = 0.0
    for k in picks:
        mine = res.rows[k]
        other = sweep(compiled, {"g": [mine[0]], "mframe": [mine[1]]}, list(q0), list(qd0), 10.0, points=201,
                      loop="runs", workers=1, **OPTIONS).rows[0]
        worst = max(worst, max(abs(mine[c] - other[c]) for c in ends))
    drift = float(np.nanmax(res.column("energy_drift")))
    print(f"bicycle sweep: {len(res)} runs of 10 s ({res.failed} failed) through the compiled loop "
          f"({lanes()[0]} lanes) in {wall:.1f} s on {os.cpu_count()} CPUs ({wall / len(res) * 1e3:.1f} ms per run); "
          f"set-up {setup:.1f} s, loop build/load {build:.1f} s; load average {load[0]:.2f}; max energy drift "
          f"{drift:.2g}; final coordinates vs per-run scipy DOP853 (4 runs): max difference {worst:.2g}")
    return {"runs": len(res), "failed": res.failed, "wall_s": wall, "ms_per_run": wall / len(res) * 1e3,
            "setup_s": setup, "loop_build_s": build, "load_average": load, "max_energy_drift": drift,
            "max_end_difference_vs_per_run": worst, "lanes": lanes()[0]}


MOTOR_INPUT = "0.3*sin(2*t) - k*theta_dot + 0.05*x*cos(theta)"


def motor_sweep(runs: int) -> dict:
    """The sweep of ``runs`` runs of the sleigh with a motor, by the compiled loop and one simulate per run
    (module docstring)."""
    import numpy as np
    from anholo.algebra import codegen
    from anholo.numerics.batch_loop import compiled_loop, lanes
    from anholo.numerics.inputs import control_inputs

    if codegen.find_compiler() is None:
        print("motor sweep: no C compiler, skipped")
        return {"skipped": "no C compiler"}
    os.environ.pop("ANHOLO_CODEGEN", None)
    load = os.getloadavg()
    t0 = time.perf_counter()
    compiled = compile_system(from_system(System.load("sleigh_with_motor"), "nonholonomic"))
    inputs = {"tau": MOTOR_INPUT}
    compiled_loop(compiled, control_inputs(compiled, inputs))  # generated and built (or loaded) once
    setup = time.perf_counter() - t0
    n_c = max(1, runs // 25)
    ranges = {"c": (0.05, 0.2, n_c), "k": (0.01, 0.2, runs // n_c)}
    q0, qd0 = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]
    walls, results = {}, {}
    for route in ("compiled", "runs"):
        t0 = time.perf_counter()
        results[route] = sweep(compiled, ranges, q0, qd0, 10.0, points=201, loop=route, inputs=inputs, **OPTIONS)
        walls[route] = time.perf_counter() - t0
    fast, slow = results["compiled"], results["runs"]
    ends = [fast.columns.index(c) for c in fast.columns if c.endswith("_end")]
    worst = max(abs(a[i] - b[i]) for a, b in zip(fast.rows, slow.rows) for i in ends)
    load_end = os.getloadavg()
    rate = {r: len(results[r]) / walls[r] for r in walls}
    print(f"motor sweep: sleigh_with_motor nonholonomic, {len(fast)} runs of 10 s with the input tau = {MOTOR_INPUT} "
          f"({fast.failed} + {slow.failed} failed), on {os.cpu_count()} CPUs (local pool), load average "
          f"{load[0]:.2f} at start, {load_end[0]:.2f} at end; set-up and loop build {setup:.1f} s")
    print_aligned([["route", "wall [s]", "runs/s", "ms per run"]] + [
        [r, f"{walls[r]:.2f}", f"{rate[r]:.0f}", f"{walls[r] / len(results[r]) * 1e3:.2f}"] for r in walls])
    print(f"compiled loop ({lanes()[0]} lanes) {walls['runs'] / walls['compiled']:.1f}x the per-run route; final "
          f"coordinates of the two routes: max difference {worst:.2g} over all rows")
    return {"runs": len(fast), "failed": [fast.failed, slow.failed], "input": MOTOR_INPUT, "t_end": 10.0,
            "wall_s": walls, "runs_per_s": rate, "speedup": walls["runs"] / walls["compiled"],
            "setup_s": setup, "load_average_start": load, "load_average_end": load_end,
            "max_end_difference": worst, "lanes": lanes()[0], "cpus": os.cpu_count(),
            "max_energy_drift": float(np.nanmax(fast.column("energy_drift")))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--quick", action="store_true", help="16 runs, T = 20, 1 repeat")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="where to write the results")
    parser.add_argument("--bicycle", type=int, default=1000, help="bicycle runs of the compiled-loop sweep (0: skip)")
    parser.add_argument("--motor", type=int, default=1000,
                        help="runs of the sweep of the sleigh with a motor and an input (0: skip)")
    parser.add_argument("--skip-pendulum", action="store_true", help="only the bicycle and motor sweeps")
    args = parser.parse_args()
    if args.skip_pendulum:
        out = {}
        if args.bicycle:
            out["bicycle"] = bicycle_sweep(args.bicycle)
        if args.motor:
            out["motor"] = motor_sweep(args.motor)
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        old = json.loads(Path(args.json).read_text()) if Path(args.json).exists() else {}
        old.update(out)
        Path(args.json).write_text(json.dumps(old, indent=2) + "\n")
        print(f"wrote {args.json}")
        return 0
    load = os.getloadavg()
    digest = _source_digest()
    n_a, n_m, t_end, repeat = (8, 2, 20.0, 1) if args.quick else (8, 2, 150.0, 2)
    compiled = compile_system(from_system(System.load("spherical_pendulum"), "euler-lagrange"))
    ranges = {"g": (1.0, 20.0, n_a), "qdot0.phi": (0.5, 1.5, n_m)}
    base_q0, base_qdot0 = [0.8, 0.0], [0.0, 1.0]
    runs = n_a * n_m

    def run(**kw):
        return sweep(compiled, ranges, base_q0, base_qdot0, t_end, points=201, **OPTIONS, **kw)

    table, records = [["route", "workers", "wall [s]", "speed-up", "efficiency", "rows = serial"]], []
    cpu0 = time.process_time()
    base_time, base_times, base = _timed(lambda: run(workers=1), repeat)
    cpu_share = (time.process_time() - cpu0) / sum(base_times)  # < 1: other processes took the core
    assert base.failed == 0, [r[-1] for r in base.rows if r[-1] != "ok"][:1]
    per_run = base_time / runs
    results = [("serial", 1, base_time, True)]
    t, _, res = _timed(lambda: run(workers=2), repeat)
    results.append(("pool-2", 2, t, res.rows == base.rows))
    startup = {}
    try:
        from distributed import LocalCluster
    except ImportError:
        LocalCluster = None
    if LocalCluster is not None:
        for n in (1, 2):
            t0 = time.perf_counter()
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0") as cl:
                startup[n] = time.perf_counter() - t0
                t, _, res = _timed(lambda: run(scheduler=cl.scheduler_address), repeat)
            results.append((f"dask-{n}", n, t, res.rows == base.rows))
    for route, workers, wall, same in results:
        speed = base_time / wall
        table.append([route, str(workers), f"{wall:.2f}", f"{speed:.2f}", f"{speed / workers:.0%}",
                      "yes" if same else "NO"])
        records.append({"route": route, "workers": workers, "wall_s": wall, "speedup": speed,
                        "efficiency": speed / workers, "rows_equal_serial": same})
    print(f"sweep: spherical_pendulum euler-lagrange, {runs} runs, t in [0, {t_end:g}], "
          f"{per_run * 1e3:.1f} ms per run serially; median of {repeat}; load average at start "
          f"{load[0]:.2f} on {os.cpu_count()} CPUs; the serial run got {cpu_share:.0%} of a core")
    print_aligned(table)
    if startup:
        print("LocalCluster start-up (once per session): " +
              ", ".join(f"{n} worker(s) {s:.2f} s" for n, s in startup.items()))
    out = {"machine": machine_info(digest, load), "system": "spherical_pendulum", "field": "euler-lagrange",
           "runs": runs, "t_end": t_end, "repeat": repeat, "serial_ms_per_run": per_run * 1e3,
           "serial_cpu_share": cpu_share,
           "routes": records, "cluster_startup_s": {str(k): v for k, v in startup.items()}}
    if args.bicycle:
        out["bicycle"] = bicycle_sweep(args.bicycle)
    if args.motor:
        out["motor"] = motor_sweep(args.motor)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0 if all(r["rows_equal_serial"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())

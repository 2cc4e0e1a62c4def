#!/usr/bin/env python
"""Benchmark: the default report of the n-trailer (every block), n = 1…10, against KanesMethod per trailer.

* **report** — ``anholo.io.report.analyze(System.load("n_trailer_<n>")).to_text()`` in a fresh process:
  every block that applies (frame, Euler–Lagrange, nonholonomic, controllability, invariant measure,
  first integrals, vakonomic, consistency), the route chosen by cost (``System.route``), printed;
* **field** — the nonholonomic field alone on the route the report takes (``System.nonholonomic()``
  and its implicit form), to show what the whole report costs relative to it;
* **KanesMethod** — ``kanes_equations`` and ``mass_matrix_full``/``forcing_full`` of the same system
  built in ``sympy.physics.mechanics`` (:func:`bench_ntrailer.kane_model`).

Each run is a fresh subprocess (empty caches); the child imports sympy, its mechanics and anholo (not
timed), then times the work in CPU seconds; memory is the peak resident set size added by the work.
Median of ``--repeats`` runs.  Growth per trailer: the geometric mean of ``t(n+1)/t(n)`` over
n = 2…nmax (``growth_per_trailer``), and over the n where the report takes Maggi's route (n = 4…nmax for
the n-trailer: every n the same algorithms; ``growth_per_trailer_maggi``, with its range).

Run from the repository root::

    python benchmarks/bench_report_growth.py              # n = 1..10, 3 repeats
    python benchmarks/bench_report_growth.py --nmax 6 --repeats 1

Results: a printed table and ``benchmarks/results/report_growth.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

from bench_ntrailer import _rss_kib, growth, kane_implicit  # noqa: E402


def report(n: int):
    from anholo.io.report import analyze
    from anholo.system import System

    r = analyze(System.load(f"n_trailer_{n}"), budget=None)
    text = r.to_text()
    if not r.complete:
        raise RuntimeError(f"n_trailer_{n}: the report is not complete:\n{text}")
    return text


def field(n: int):
    from anholo.system import System

    nh = System.load(f"n_trailer_{n}").nonholonomic()
    return nh.implicit_form()


METHODS = {"report": report, "field": field, "kane": kane_implicit}


def child(method: str, n: int) -> None:
    import sympy.physics.mechanics  # noqa: F401  (imports are not timed)
    import anholo.io.report  # noqa: F401

    base = _rss_kib("VmRSS")
    c0 = time.process_time()
    METHODS[method](n)
    cpu = time.process_time() - c0
    print(json.dumps({"cpu_s": cpu, "peak_added_MiB": (_rss_kib("VmHWM") - base) / 1024}))


def run_child(method: str, n: int, limit: float) -> dict | None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    try:
        p = subprocess.run([sys.executable, __file__, "--child", method, str(n)], env=env, capture_output=True,
                           text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"{method} n = {n} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--child", nargs=2, metavar=("METHOD", "N"))
    ap.add_argument("--nmax", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=float, default=300.0, help="seconds after which a run is stopped")
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    import sympy as sp

    from anholo.system import System

    out = {"machine": {"python": sys.version.split()[0], "sympy": sp.__version__, "cpus": os.cpu_count(),
                       "load_before": os.getloadavg()},
           "timing": "CPU seconds after the imports, one fresh subprocess per run; median of the runs",
           "memory": "peak RSS (VmHWM) minus RSS after the imports, MiB", "rows": []}
    print(f"{'n':>3} {'route':>6} | {'report s':>9} {'MiB':>6} | {'field s':>8} | {'Kane s':>7} {'MiB':>6} | "
          f"{'report/Kane':>11} {'report/field':>12}")
    for n in range(1, args.nmax + 1):
        row = {"n": n, "route": System.load(f"n_trailer_{n}").route[0]}
        for method in METHODS:
            runs = [r for r in (run_child(method, n, args.limit) for _ in range(args.repeats)) if r is not None]
            row[f"{method}_cpu_s"] = statistics.median(r["cpu_s"] for r in runs) if runs else None
            row[f"{method}_MiB"] = max(r["peak_added_MiB"] for r in runs) if runs else None
        out["rows"].append(row)

        def f(v, fmt):
            return format(v, fmt) if v is not None else "stopped"

        rk = row["report_cpu_s"] / row["kane_cpu_s"] if row["report_cpu_s"] and row["kane_cpu_s"] else None
        rf = row["report_cpu_s"] / row["field_cpu_s"] if row["report_cpu_s"] and row["field_cpu_s"] else None
        print(f"{n:3d} {row['route']:>6} | {f(row['report_cpu_s'], '9.2f')} {f(row['report_MiB'], '6.0f')} | "
              f"{f(row['field_cpu_s'], '8.2f')} | {f(row['kane_cpu_s'], '7.2f')} {f(row['kane_MiB'], '6.0f')} | "
              f"{f(rk, '11.2f')} {f(rf, '12.1f')}", flush=True)
    rows = [r for r in out["rows"] if r["n"] >= 2]
    out["growth_per_trailer"] = {"report_cpu": growth(rows, "report_cpu_s"), "kane_cpu": growth(rows, "kane_cpu_s"),
                                 "field_cpu": growth(rows, "field_cpu_s"), "report_MiB": growth(rows, "report_MiB")}
    g = out["growth_per_trailer"]
    print(f"growth per trailer (geometric mean of t(n+1)/t(n), n >= 2): report {g['report_cpu'] or float('nan'):.2f}x, "
          f"KanesMethod {g['kane_cpu'] or float('nan'):.2f}x, field {g['field_cpu'] or float('nan'):.2f}x")
    maggi = [r for r in out["rows"] if r["route"] == "maggi"]
    if len(maggi) >= 2:
        gm = {"n": [maggi[0]["n"], maggi[-1]["n"]], "report_cpu": growth(maggi, "report_cpu_s"),
              "kane_cpu": growth(maggi, "kane_cpu_s"), "field_cpu": growth(maggi, "field_cpu_s"),
              "report_MiB": growth(maggi, "report_MiB")}
        out["growth_per_trailer_maggi"] = gm
        print(f"growth per trailer on Maggi's route (n = {gm['n'][0]}..{gm['n'][1]}): "
              f"report {gm['report_cpu'] or float('nan'):.2f}x, KanesMethod {gm['kane_cpu'] or float('nan'):.2f}x, "
              f"field {gm['field_cpu'] or float('nan'):.2f}x")
    out["machine"]["load_after"] = os.getloadavg()
    path = HERE / "results" / "report_growth.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Benchmark: ``anholo analyze NAME`` (text and ``--json``) as whole processes, on the catalogue.

For every bundled example and ``n_trailer_1`` … ``n_trailer_4`` the command is run as a
separate process (``python -m anholo.cli analyze NAME --quiet`` and the same with ``--json``);
measured are its CPU time (user + system of the child, from ``getrusage``: what the machine's
other load does not inflate much), its wall time, the size of what it prints and its exit status
(0 complete, 3 a block failed or ran over the report's time budget).  Medians of ``--repeats``
runs; a run longer than ``--limit`` seconds is stopped and reported as ``>limit``.

Targets (issue "Scale to real systems"): at most 10 s and at most 50 kB of text per example;
the JSON keeps every key.  Prints a table and writes ``benchmarks/results/reports.json``.
Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_reports.py [--repeats N] [--limit S] [names ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from _common import HERE, _source_digest, machine_info, print_aligned

from anholo.examples import example_names

N_TRAILERS = ["n_trailer_1", "n_trailer_2", "n_trailer_3", "n_trailer_4"]


def run_once(name: str, mode: list, limit: float) -> dict:
    """One whole process ``anholo analyze NAME [--json]``: CPU and wall seconds, output bytes, exit code."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine: anholo's modules compiled once
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "anholo.cli", "analyze", name, "--quiet", *mode],
                              capture_output=True, env=env, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"timed_out": True}
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = {"cpu": cpu, "wall": wall, "bytes": len(proc.stdout), "rc": proc.returncode}
    if mode == ["--json"] and proc.returncode in (0, 3):
        try:
            data = json.loads(proc.stdout)
            out["keys"] = sorted(data)
            out["failed_blocks"] = sorted(k for k, v in data.items() if isinstance(v, dict) and "error" in v)
            out["not_computed"] = sorted(k for k, v in data.items() if isinstance(v, dict) and "not_computed" in v)
        except json.JSONDecodeError:
            out["keys"] = None
    return out


def measure(name: str, mode: list, repeats: int, limit: float) -> dict:
    runs = []
    for _ in range(repeats):
        r = run_once(name, mode, limit)
        runs.append(r)
        if r.get("timed_out"):
            break
    done = [r for r in runs if not r.get("timed_out")]
    row = {"runs": runs, "timed_out": len(done) < len(runs)}
    if done:
        row.update({"cpu": statistics.median(r["cpu"] for r in done),
                    "wall": statistics.median(r["wall"] for r in done),
                    "bytes": done[-1]["bytes"], "rc": done[-1]["rc"]})
        if "keys" in done[-1]:
            row["keys"] = done[-1]["keys"]
            row["failed_blocks"] = done[-1].get("failed_blocks")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement (median; default 3)")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds after which a run is stopped")
    ap.add_argument("--json", default=str(HERE / "results" / "reports.json"), help="where to write the results")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    digest = _source_digest()
    load = tuple(os.getloadavg())
    names = args.names or example_names() + N_TRAILERS
    rows = []
    table = [["system", "text CPU [s]", "text wall [s]", "text [kB]", "json CPU [s]", "json wall [s]",
              "json [kB]", "exit", "target met"]]
    for name in names:
        text = measure(name, [], args.repeats, args.limit)
        js = measure(name, ["--json"], args.repeats, args.limit)
        ok = (not text["timed_out"] and not js["timed_out"] and text["cpu"] <= 10 and js["cpu"] <= 10
              and text["bytes"] <= 50_000 and text["rc"] == 0 and js["rc"] == 0)
        rows.append({"system": name, "text": text, "json": js, "target_met": ok})

        def cell(m, key, fmt):
            return f">{args.limit:g}" if m["timed_out"] else fmt.format(m[key])

        table.append([name, cell(text, "cpu", "{:.2f}"), cell(text, "wall", "{:.2f}"),
                      cell(text, "bytes", "{:.0f}") if text["timed_out"] else f"{text['bytes'] / 1000:.1f}",
                      cell(js, "cpu", "{:.2f}"), cell(js, "wall", "{:.2f}"),
                      "-" if js["timed_out"] else f"{js['bytes'] / 1000:.1f}",
                      "-" if text["timed_out"] else f"{text['rc']}/{js.get('rc', '-')}", "yes" if ok else "no"])
        print(f"{name:30s} text {table[-1][1]:>7s} s {table[-1][3]:>7s} kB   json {table[-1][4]:>7s} s "
              f"{table[-1][6]:>7s} kB  exit {table[-1][7]}", flush=True)
    print()
    print(f"anholo analyze as whole processes: CPU seconds (median of {args.repeats}), output size; "
          f"load average at start {load[0]:.2f}")
    print_aligned(table)
    out = {"machine": machine_info(digest, load), "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
           "repeats": args.repeats, "limit_s": args.limit, "rows": rows}
    path = os.path.abspath(args.json)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(out, fh, indent=2, default=str)
    print(f"\nwritten {path}")


if __name__ == "__main__":
    main()

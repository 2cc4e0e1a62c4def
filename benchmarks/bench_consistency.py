#!/usr/bin/env python
"""Benchmark: consistency analysis of the two-wheeled carriage (THEORY §§6, 9), including the search.

Steps, each timed from a fresh ``System.load("two_wheeled_carriage").nonholonomic()``
(sympy's cache cleared before every repeat; median of ``--repeats`` runs):

* ``field``: Γ_nh and its multipliers (``nh.field()``);
* ``zero``: strong consistency of the zero section;
* ``-p``: strong consistency of σ = −p (the verdict "iff a = 0 or m0 = 0");
* ``search -p+c``: :func:`search_sections` with σ = −p + c, c linear in v^1, v^2 with
  coefficients 1, cos θ, sin θ (27 unknown constants), ``solve_for=[a]`` — finds
  a = 0 and the special a;
* ``report``: :func:`consistency_report` with the extra section −p (what ``anholo
  analyze`` does, default search included).

Each result is checked before it is reported (the verdicts and the two values of a).
Run from the repository root::

    python benchmarks/bench_consistency.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import sympy as sp
from sympy.core.cache import clear_cache

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anholo.analysis.consistency import (  # noqa: E402
    Section, consistency_report, polynomial_ansatz, search_sections, strong_consistency, zero_section)
from anholo.system import System  # noqa: E402
from _common import _source_digest, machine_info, print_aligned  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "consistency.json"


def one_run() -> dict:
    clear_cache()
    times = {}
    t0 = time.perf_counter()
    S = System.load("two_wheeled_carriage")
    nh = S.nonholonomic()
    nh.field()
    times["field"] = time.perf_counter() - t0
    P = {p.name: p for p in S.chart.parameters}
    v = nh.bundle.quasi_velocities
    minus_p = Section(nh, [-nh.restrict(nh.lagrangian.expr.diff(va)) for va in v[nh.m:]], "-p")

    t = time.perf_counter()
    zero = strong_consistency(nh, zero_section(nh))
    times["zero"] = time.perf_counter() - t
    assert zero.holds is not True

    t = time.perf_counter()
    verdict = strong_consistency(nh, minus_p)
    times["-p"] = time.perf_counter() - t
    assert verdict.holds is None and "a = 0" in verdict.condition_text()

    t = time.perf_counter()
    th = S.chart.coordinates[2]
    found = search_sections(nh, polynomial_ansatz(nh, [1, sp.cos(th), sp.sin(th)], 1, offset=minus_p),
                            solve_for=[P["a"]])
    times["search -p+c"] = time.perf_counter() - t
    values = sorted((f.conditions[0].rhs for f in found.families), key=lambda e: e != 0)
    m, C, J, R, c, m0 = (P[k] for k in ("m", "C", "J", "R", "c", "m0"))
    special = sp.sqrt((m * R**2 + 2 * C) * (J * R**2 + 2 * C * c**2)) / (m0 * R**2)
    assert values[0] == 0 and sp.simplify(values[1] ** 2 - special**2) == 0

    t = time.perf_counter()
    report = consistency_report(nh, [minus_p])
    times["report"] = time.perf_counter() - t
    assert report.strong is None
    times["total"] = sum(times.values())
    return {"times": times, "equations": found.equations, "unknowns": len(found.ansatz.all_unknowns)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = ap.parse_args(argv)
    load = os.getloadavg()
    digest = _source_digest()
    runs = [one_run() for _ in range(args.repeats)]
    steps = list(runs[0]["times"])
    med = {k: statistics.median(r["times"][k] for r in runs) for k in steps}
    table = [["step", "median s", "min s", "max s"]]
    for k in steps:
        vals = [r["times"][k] for r in runs]
        table.append([k, f"{med[k]:.2f}", f"{min(vals):.2f}", f"{max(vals):.2f}"])
    print(f"two_wheeled_carriage consistency ({args.repeats} runs; search: {runs[0]['unknowns']} unknowns, "
          f"{runs[0]['equations']} linear equations)")
    print_aligned(table)
    out = {"system": "two_wheeled_carriage", "repeats": args.repeats, "median_seconds": med,
           "runs": [r["times"] for r in runs], "search_unknowns": runs[0]["unknowns"],
           "search_equations": runs[0]["equations"], "machine": machine_info(digest, load)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

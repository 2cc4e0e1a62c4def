#!/usr/bin/env python
"""Benchmark: the report blocks on the geometry of the nonholonomic flow, on the catalogue.

For every bundled example with linear constraints (and ``n_trailer_1`` … ``n_trailer_3``) the
three blocks of ``anholo analyze`` are timed as the report computes them, after the nonholonomic
field (timed apart, "field"):

* ``controllability`` — the flag of D and its growth vector (:func:`anholo.geometry.distribution.flag_of`);
* ``invariant_measure`` — the search of a density N(q) (:mod:`anholo.analysis.invariant_measure`);
* ``first_integrals`` — energy, momentum equations of the file's symmetry and linear integrals
  (:mod:`anholo.analysis.first_integrals`).

Peers in the same run: the nonholonomic field itself.  Each block runs under a time limit.
Prints a table and writes ``benchmarks/results/flow.json``.  Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_flow.py [--limit SECONDS] [names ...]
"""

from __future__ import annotations

import argparse
import json
import os
import time

from _common import HERE, TimeLimitExceeded, machine_info, run_limited

from anholo.analysis.flow_summaries import ControllabilitySummary, FirstIntegralsSummary, InvariantMeasureSummary
from anholo.errors import AnholoError
from anholo.examples import example_names
from anholo.system import System


def _timed(fn, limit):
    t0 = time.perf_counter()
    try:
        out = run_limited(fn, limit)
    except TimeLimitExceeded:
        return None, f">{limit:g}s"
    except AnholoError as exc:
        return None, f"n/a ({type(exc).__name__})"
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    names = args.names or [n for n in example_names()] + ["n_trailer_1", "n_trailer_2", "n_trailer_3"]
    rows = []
    for name in names:
        s = System.load(name)
        try:
            s.linear_constraints()
        except AnholoError:
            continue
        if not s.constraints:
            continue
        nh, t_field = _timed(lambda: (s.nonholonomic(), s.nonholonomic().field())[0], args.limit)
        if nh is None:
            rows.append({"system": name, "field": t_field})
            continue
        row = {"system": name, "field": t_field}
        ctl, row["controllability"] = _timed(lambda: ControllabilitySummary.of(nh), args.limit)
        inv, row["invariant_measure"] = _timed(lambda: InvariantMeasureSummary.of(nh), args.limit)
        gens = (s.symmetry or {}).get("generators", ())
        fi, row["first_integrals"] = _timed(lambda: FirstIntegralsSummary.of(nh, generators=gens), args.limit)
        row["growth_vector"] = list(ctl.flag.growth_vector) if ctl else None
        row["density_found"] = None if inv is None else inv.result.density is not None
        row["integrals"] = None if fi is None else [i.kind for i in fi.result.integrals]
        rows.append(row)
        fmt = lambda x: f"{x:8.2f}" if isinstance(x, float) else f"{x:>8}"  # noqa: E731
        print(f"{name:28s} field {fmt(row['field'])}  ctl {fmt(row['controllability'])}  "
              f"inv {fmt(row['invariant_measure'])}  fi {fmt(row['first_integrals'])}  "
              f"growth {row['growth_vector']}  N {row['density_found']}  integrals {row['integrals']}", flush=True)
    out = {"machine": machine_info("", tuple(os.getloadavg())), "limit_s": args.limit, "rows": rows}
    (HERE / "results" / "flow.json").write_text(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()

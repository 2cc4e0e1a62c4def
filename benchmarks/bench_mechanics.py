#!/usr/bin/env python
"""Benchmark: sympy.physics.mechanics models read by ``anholo.from_mechanics``, beside KanesMethod.

For the models of sympy's own tests (tests/mechanics_models.py: the rolling disc of test_kane.py,
the rolling disc with contact coordinates of test_kane5.py, the Whipple bicycle of test_kane3.py)
the steps are timed in one run each (with a time limit):

* ``kane``: building the sympy objects and ``KanesMethod.kanes_equations`` (the peer: what a sympy
  user already pays);
* ``model``: ``anholo.from_mechanics(KM)`` (the completed configuration manifold, T, V, constraints);
* ``frame``: ``model.nonholonomic()`` (the adapted frame and L in its quasi-velocities);
* ``field``: ``.field()`` (Γ_nh on C);
* ``multiplier form``: ``model.multiplier_form()`` (``M ẋ = F`` in ``(q, q̇, λ)``, no adapted frame).

Before a row is reported, the model's q̈ (coordinate multiplier method on its L and constraints,
tests/mechanics/kane_oracle.py) is compared with KanesMethod's at 2 random points of C, and, if the
field finished, anholo's Γ_nh as well; a mismatch aborts the script.  If the field does not finish
in the time limit, the call is profiled (``--profile``) and the anholo functions with the largest
cumulative time are printed: where the time goes.

Run from the repository root::

    python benchmarks/bench_mechanics.py                     # about 2 min + the time limit for the bicycle
    python benchmarks/bench_mechanics.py --systems disc --time-limit 60 --json /tmp/m.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import anholo  # noqa: E402
from _common import TimeLimitExceeded, _source_digest, machine_info, print_aligned, profile_call, run_limited  # noqa: E402
from mechanics.kane_oracle import compare  # noqa: E402
from mechanics_models import rolling_disc, rolling_disc_contact, whipple_bicycle  # noqa: E402

SYSTEMS = {"disc": (rolling_disc, 1.0), "disc_contact": (rolling_disc_contact, 1.0),
           "bicycle": (whipple_bicycle, 0.5)}
DEFAULT_JSON = HERE / "results" / "mechanics.json"


def _timed(fn, limit):
    t0 = time.perf_counter()
    try:
        return run_limited(fn, limit), time.perf_counter() - t0, False
    except TimeLimitExceeded:
        return None, time.perf_counter() - t0, True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--json", default=str(DEFAULT_JSON))
    ap.add_argument("--profile", action="store_true", help="profile a field that does not finish")
    args = ap.parse_args(argv)
    digest, load = _source_digest(), os.getloadavg()
    rows, out = [], {"systems": {}}
    for name in args.systems.split(","):
        build, spread = SYSTEMS[name]
        rec = {}
        (KM, values), rec["kane"], _ = _timed(build, args.time_limit)
        model, rec["model"], _ = _timed(lambda: anholo.from_mechanics(KM, values=values), args.time_limit)
        dev_model = compare(model, KM, values, count=2, seed=1, spread=spread, route="multipliers")
        _, rec["multiplier_form"], _ = _timed(model.multiplier_form, args.time_limit)
        if dev_model > 1e-8:
            raise SystemExit(f"{name}: the model's accelerations differ from KanesMethod's by {dev_model:.2e}")
        nh, rec["frame"], frame_out = _timed(model.nonholonomic, args.time_limit)
        field_out = frame_out
        if not frame_out:
            _, rec["field"], field_out = _timed(nh.field, args.time_limit)
        rec["timed_out"] = field_out
        if not field_out:
            model.__dict__["_system"] = nh
            dev = compare(model, KM, values, count=2, seed=1, spread=spread)
            if dev > 1e-8:
                raise SystemExit(f"{name}: anholo's field differs from KanesMethod's by {dev:.2e}")
            rec["field_deviation"] = dev
        elif args.profile:
            prof = profile_call(model.nonholonomic if frame_out else nh.field, args.time_limit, top=12)
            rec["profile"] = prof
            print(f"{name}: where the time goes (anholo functions by cumulative time, "
                  f"{prof['profiled_seconds']} s profiled):")
            for r in prof["anholo_by_cumtime"]:
                print(f"  {r['cumtime']:9.2f} s  {r['calls']:7d}  {r['function']}")
        rec["model_deviation"] = dev_model
        rec["coordinates"] = [q.name for q in model.chart.coordinates]
        rec["constraints"] = len(model.constraints)
        out["systems"][name] = rec

        def fmt(key):
            v = rec.get(key)
            return "—" if v is None else f"{v:.1f}"

        field = ("not reached" if frame_out else f">{args.time_limit:.0f} (stopped)" if rec["timed_out"]
                 else fmt("field"))
        rows.append([name, str(len(model.chart.coordinates)), str(len(model.constraints)), fmt("kane"),
                     fmt("model"), fmt("frame") if not (frame_out) else f">{args.time_limit:.0f} (stopped)",
                     field, fmt("multiplier_form"), f"{dev_model:.1e}", f"{rec.get('field_deviation', float('nan')):.1e}"])
        print(f"{name}: done", flush=True)
    print_aligned([["system", "n", "k", "KanesMethod [s]", "from_mechanics [s]", "adapted frame [s]",
                    "field [s]", "multiplier form [s]", "model vs Kane", "field vs Kane"]] + rows)
    out["machine"] = machine_info(digest, load)
    out["time_limit"] = args.time_limit
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

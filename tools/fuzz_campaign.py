"""The long fuzzing campaign: the hostile corpus plus N seeded mutations of the bundled examples.

Every input is run as an in-process CLI call in a forked child (``anholo.cli.main``; a hang is ended by
killing the child), every mutated file is also read through the API (``parse_system``) and compared
with an independent reading (tests/fuzz/mutator.py), and a sample runs as a real subprocess.  Prints
the counts (inputs tried, clean errors, accepted, reports with a failed/over-budget section,
tracebacks, internal errors, malformed errors, hangs, silent misreadings) and writes them as JSON.

    PYTHONPATH=src python tools/fuzz_campaign.py --count 2000 --seed 1 --jobs 2 --json benchmarks/results/fuzz.json

Exit status 0 if there is no traceback, internal error, malformed error, hang or misreading; else 1.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fuzz"))
sys.path.insert(0, str(HERE.parent / "src"))

import harness  # noqa: E402
from corpus import CASES, Case  # noqa: E402
from mutator import mutants  # noqa: E402

_lock = threading.Lock()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000, help="mutated inputs (besides the corpus)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per input before it counts as a hang")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--subprocess-every", type=int, default=50, help="also run every k-th input as a subprocess")
    ap.add_argument("--json", default=None, help="write the counts and the failures here")
    ap.add_argument("--no-corpus", action="store_true")
    args = ap.parse_args(argv)

    import anholo.cli  # noqa: F401 - import once; children are forked from here
    import anholo.system  # noqa: F401
    import sympy.parsing.sympy_parser  # noqa: F401

    inputs = [] if args.no_corpus else list(CASES)
    inputs += [Case(id, tuple(argv), {"s.toml": text}, "any") for id, text, argv in mutants(args.count, args.seed)]
    counts = collections.Counter()
    failures = []
    slowest = []
    t0 = time.monotonic()

    def one(k_case):
        k, case = k_case
        with tempfile.TemporaryDirectory() as d:
            argv = harness.materialize(case, d)
            outcome = harness.run_cli(argv, timeout=args.timeout)
            found, api_kind = [], None
            text = case.files.get("s.toml")
            if isinstance(text, str) and case.id.startswith("mutant"):
                api, found = harness.run_api_reading(text, os.path.join(d, "s.toml"), timeout=args.timeout)
                api_kind = api.kind if not api.ok else None
            sub = None
            if args.subprocess_every and k % args.subprocess_every == 0:
                sub = harness.run_subprocess(argv, timeout=args.timeout + 30)
        bad = harness.check_case(case, outcome)
        with _lock:
            counts["inputs"] += 1
            counts[outcome.kind] += 1
            if sub is not None:
                counts["subprocess runs"] += 1
                if not sub.ok:
                    counts["subprocess " + sub.kind] += 1
                    failures.append({"id": case.id, "argv": argv, "kind": "subprocess " + sub.kind,
                                     "detail": sub.detail[:500], "file": (case.files.get("s.toml") or "")[:3000]})
            if api_kind:
                counts["api " + api_kind] += 1
            if found:
                counts["silent misreadings"] += 1
            slowest.append((outcome.seconds, case.id))
            if bad or found or api_kind:
                text = case.files.get("s.toml", "")
                failures.append({"id": case.id, "argv": argv, "kind": outcome.kind, "detail": (bad or "")[:800],
                                 "misreadings": found, "api": api_kind,
                                 "file": text[:3000] if isinstance(text, str) else repr(text[:200])})
            done = counts["inputs"]
            if done % 100 == 0:
                print(f"  {done}/{len(inputs)} inputs, {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(one, enumerate(inputs)))
    wall = time.monotonic() - t0
    bad_kinds = (harness.TRACEBACK, harness.INTERNAL, harness.BAD_ERROR, harness.HANG)
    rows = [("inputs tried", counts["inputs"]), ("  hostile corpus", 0 if args.no_corpus else len(CASES)),
            ("  mutations", args.count), ("accepted (exit 0)", counts[harness.ACCEPTED]),
            ("clean errors (exit 2, one line)", counts[harness.CLEAN_ERROR]),
            ("report with a failed or over-budget section (exit 3)", counts[harness.OVER_BUDGET]),
            ("tracebacks", counts[harness.TRACEBACK]), ("internal errors in a section", counts[harness.INTERNAL]),
            ("malformed error output", counts[harness.BAD_ERROR]), (f"hangs (> {args.timeout:g} s)", counts[harness.HANG]),
            ("silent misreadings", counts["silent misreadings"]),
            ("expectation failures (corpus)", sum(1 for f in failures if not f["id"].startswith("mutant")
                                                  and f["kind"] not in bad_kinds)),
            ("subprocess runs (real interpreter)", counts["subprocess runs"]),
            ("  of which not clean", sum(v for k, v in counts.items() if k.startswith("subprocess ") and k != "subprocess runs")),
            ("wall time (s)", round(wall)), ("slowest input (s)", round(max(slowest)[0], 1) if slowest else 0)]
    width = max(len(r[0]) for r in rows)
    print(f"fuzz campaign: seed {args.seed}, timeout {args.timeout:g} s, jobs {args.jobs}")
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value}")
    for f in failures[:40]:
        print(f"FAIL {f['id']}: {f['kind']}: {f['detail'][:300]} {f['misreadings'] if 'misreadings' in f else ''}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"seed": args.seed, "timeout": args.timeout, "counts": dict(rows),
                                               "slowest": sorted(slowest)[-10:], "failures": failures}, indent=1,
                                              ensure_ascii=False))
    broken = (counts[harness.TRACEBACK] + counts[harness.INTERNAL] + counts[harness.BAD_ERROR] + counts[harness.HANG]
              + counts["silent misreadings"] + len(failures))
    return 0 if broken == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Benchmark: the Whipple bicycle, anholo against sympy.physics.mechanics, whole processes in one run.

Rows (each a fresh Python process, timed from outside; CPU = user + system time of the child, and
wall-clock time; medians over ``--repeats`` interleaved runs):

* ``anholo analyze``: ``anholo analyze whipple_bicycle --json --sections nonholonomic`` — reads the
  bundled system file (27 symbolic parameters), derives Γ_nh by Maggi's equations with its
  accelerations, multipliers, adapted frame and structure functions, and prints the JSON report;
* ``KanesMethod``: a script that builds sympy's test_kane3.py bicycle and calls ``kanes_equations``
  (the peer: ``mass_matrix_full``/``forcing_full``, implicit only);
* the same for the bicycle written the other ways a user may write it: ``whipple_bicycle_pitch_rate``
  (the front-contact constraint differentiated, its square root explicit, no ``[values]``) and
  ``whipple_bicycle`` without its ``[values]`` table (a copy in a temporary directory);
* ``KanesMethod (pitch rate)``: the KanesMethod script with the differentiated front-contact constraint
  among the velocity constraints (``whipple_bicycle(pitch_rate=True)``);
* ``anholo analyze (all blocks)``: the default report (every block: nonholonomic, vakonomic, consistency,
  controllability, invariant measure, first integrals, the free field) of ``whipple_bicycle``,
  ``whipple_bicycle_pitch_rate``, ``rattleback`` and ``n_trailer_8``;
* ``anholo linearize``: ``anholo linearize whipple_bicycle --states lean,steer,v1,v2 --sweep
  v3=0:33.3333:21 --json`` — the lean/steer state matrix at 21 speeds 0…10 m/s;
* ``KanesMethod.linearize`` (``--kane-linearize``, about a minute): sympy's test_kane3.py linearisation
  (one symbolic A in v, with ``linear_solver="CRAMER"``).

Before timing, the anholo linearisation is checked against the published matrix (sympy's test_kane3.py,
Meijaard et al. 2007) to 1e-8; a mismatch aborts the script.

Run from the repository root::

    python benchmarks/bench_bicycle.py                 # about 1 min
    python benchmarks/bench_bicycle.py --repeats 7 --kane-linearize
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

KANE_SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT / 'tests')!r})
from mechanics_models import whipple_bicycle
KM, values = whipple_bicycle()
"""

KANE_PITCH_RATE = KANE_SCRIPT.replace("whipple_bicycle()", "whipple_bicycle(pitch_rate=True)")

KANE_LINEARIZE = KANE_SCRIPT + """
from sympy import symbols
from sympy.physics.mechanics import dynamicsymbols
v = symbols('v')
q1, q2, q4, q5 = dynamicsymbols('q1 q2 q4 q5')
u1, u2, u3, u4, u5, u6 = dynamicsymbols('u1 u2 u3 u4 u5 u6')
op = {u.diff(): 0 for u in (u1, u2, u3, u4, u5, u6)}
op.update({u1: 0, u2: 0, u3: v / 0.3, u4: 0, u5: 0, u6: v / 0.35, q1: 0, q2: 0, q4: 0, q5: 0})
A, B, _ = KM.linearize(A_and_B=True, op_point=op, linear_solver="CRAMER")
"""


def published(v):
    import numpy as np
    return np.array([
        [0, 0, 1.0, 0], [0, 0, 0, 1.0],
        [9.48977444677355, -0.891197738059089 * v**2 - 0.571523173729245, -0.105522449805691 * v,
         -0.330515398992311 * v],
        [11.7194768719633, -1.97171508499972 * v**2 + 30.9087533932407, 3.67680523332152 * v,
         -3.08486552743311 * v]])


def child_env() -> dict:
    """The children's environment: anholo from src/, and Python's bytecode cache allowed (as on a user's
    machine: without it every process would recompile anholo's modules, about 0.3 s, while sympy's
    installed modules come compiled)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(cmd: list) -> tuple:
    """(cpu seconds, wall seconds, stdout) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=child_env())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--kane-linearize", action="store_true", help="also time KanesMethod.linearize (about 1 min)")
    ap.add_argument("--json", default=str(HERE / "results" / "bench_bicycle.json"))
    args = ap.parse_args()
    py = sys.executable
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(KANE_SCRIPT)
        kane = f.name
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(KANE_PITCH_RATE)
        kane_pitch = f.name
    text = (ROOT / "src" / "anholo" / "examples" / "whipple_bicycle.toml").read_text()
    symbolic = Path(tempfile.mkdtemp()) / "whipple_bicycle_symbolic.toml"
    symbolic.write_text(text[:text.index("[values]")])
    cmds = {
        "anholo analyze --json --sections nonholonomic": [py, "-m", "anholo.cli", "analyze", "whipple_bicycle",
                                                          "--json", "--sections", "nonholonomic"],
        "  pitch-rate bicycle (no [values])": [py, "-m", "anholo.cli", "analyze", "whipple_bicycle_pitch_rate",
                                               "--json", "--sections", "nonholonomic"],
        "  whipple_bicycle without [values]": [py, "-m", "anholo.cli", "analyze", str(symbolic),
                                               "--json", "--sections", "nonholonomic"],
        "KanesMethod (build + kanes_equations)": [py, kane],
        "KanesMethod, pitch-rate constraint": [py, kane_pitch],
        "anholo analyze (all blocks) whipple_bicycle": [py, "-m", "anholo.cli", "analyze", "whipple_bicycle"],
        "anholo analyze (all blocks) whipple_bicycle_pitch_rate": [py, "-m", "anholo.cli", "analyze",
                                                                   "whipple_bicycle_pitch_rate"],
        "anholo analyze (all blocks) rattleback": [py, "-m", "anholo.cli", "analyze", "rattleback"],
        "anholo analyze (all blocks) n_trailer_8": [py, "-m", "anholo.cli", "analyze", "n_trailer_8"],
        "anholo linearize (21 speeds)": [py, "-m", "anholo.cli", "linearize", "whipple_bicycle", "--states",
                                         "lean,steer,v1,v2", "--sweep", "v3=0:33.333333333333336:21", "--json"],
    }
    # correctness first: the linearisation against the published matrix
    import numpy as np
    _, _, text = run(cmds["anholo linearize (21 speeds)"])
    data = json.loads(text)
    worst = max(np.abs(np.array(r["A"]) - published(v3 * 0.3)).max() for v3, r in zip(data["values"], data["results"]))
    if worst > 1e-8:
        raise SystemExit(f"the linearised matrix deviates from the published one by {worst:.3g}")
    for cmd in cmds.values():  # warm-up: bytecode caches written, files in the page cache
        run(cmd)
    samples = {k: [] for k in cmds}
    for _ in range(args.repeats):  # interleaved: the load of the machine affects every row alike
        for k, cmd in cmds.items():
            samples[k].append(run(cmd)[:2])
    if args.kane_linearize:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(KANE_LINEARIZE)
        samples["KanesMethod.linearize (symbolic A in v)"] = [run([py, f.name])[:2]]
    rows = {k: {"cpu_median": statistics.median(c for c, _ in s), "wall_median": statistics.median(w for _, w in s),
                "runs": len(s)} for k, s in samples.items()}
    kane_cpu = rows["KanesMethod (build + kanes_equations)"]["cpu_median"]
    ratio = rows["anholo analyze --json --sections nonholonomic"]["cpu_median"] / kane_cpu
    ratios = {k: rows[k]["cpu_median"] / kane_cpu for k in rows if "bicycle" in k or k.startswith("anholo analyze --")}
    # the pitch-rate file against KanesMethod given the same (pitch-rate) constraint: the same formulation
    own = rows["  pitch-rate bicycle (no [values])"]["cpu_median"] / rows["KanesMethod, pitch-rate constraint"]["cpu_median"]
    print(f"Whipple bicycle, whole processes (medians of {args.repeats}; load average "
          f"{os.getloadavg()[0]:.2f}); linearisation = published to {worst:.1e}")
    print(f"{'':52}{'CPU s':>8}{'wall s':>9}")
    for k, r in rows.items():
        print(f"{k:52}{r['cpu_median']:8.2f}{r['wall_median']:9.2f}")
    print(f"ratio anholo analyze / KanesMethod (CPU): {ratio:.2f}")
    for k, r in ratios.items():
        print(f"  ratio {k.strip()} / KanesMethod: {r:.2f}")
    print(f"  ratio pitch-rate bicycle / KanesMethod with the same pitch-rate constraint: {own:.2f}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"rows": rows, "ratio_cpu": ratio, "ratios_cpu": ratios, "ratio_pitch_rate_same_constraint": own, "linearization_error": worst,
                                           "loadavg": os.getloadavg()[0]}, indent=2))
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Benchmark: the implicit form at work — reports, implicit Γ_nh of the n-trailer, compiled right-hand sides.

Three tables, peers measured in the same run:

1. ``anholo analyze EXAMPLE`` as a whole process for every bundled example (and
   ``n_trailer_3``): CPU seconds (user + sys of the child), wall seconds, the size of
   the default text report and of ``--json``.  Target: ≤ 10 s and ≤ 50 kB of text.
2. The n-trailer, n = 1…N: anholo's implicit Γ_nh (``NonholonomicSystem.implicit_form``,
   from the system file: frame, adapted frame, M and F; no solve) against sympy's
   ``LagrangesMethod(..., nonhol_coneqs=...)`` implicit equations (``form_lagranges_equations``,
   ``mass_matrix_full``, ``forcing_full``) from the same Lagrangian and constraints:
   CPU seconds and peak memory (tracemalloc), and the growth factor per trailer.
3. Right-hand sides of the Chaplygin sleigh in anholo's state ``(x, y, θ, v1, v2)``:
   evaluations per second of anholo's explicit compiled RHS (``compile_system``), of the
   RHS compiled from the implicit form (``compile_implicit``: the one code generator, ``M v̇ = F`` solved
   inside by elimination with partial pivoting),
   of a hand-written scalar ``math`` RHS (as written, on the numpy scalars of ``y``, and
   on Python floats after ``y.tolist()``), of a hand-written numpy RHS and of
   sympy.physics.mechanics' own (``KanesMethod``; ``mass_matrix_full`` and
   ``forcing_full`` lambdified with cse, ``numpy.linalg.solve`` per call, as PyDy's
   lambdify generator does); and for a batch of 1,000 states: the implicit form's
   vectorised evaluation, the hand-written numpy RHS vectorised, and the hand-written
   ``math`` RHS in a loop.  Medians of 41 short interleaved rounds in shuffled order.

Run from the repository root::

    python benchmarks/bench_implicit.py            # all three tables, n-trailer up to 6
    python benchmarks/bench_implicit.py --quick    # n-trailer up to 4, fewer RHS calls
    python benchmarks/bench_implicit.py --rhs-only # table 3 only (merged into the JSON)

Results: printed tables and ``benchmarks/results/implicit.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import sympy as sp  # noqa: E402
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols  # noqa: E402

from anholo.examples import list_examples, n_trailer  # noqa: E402
from anholo.numerics import compile_system, from_system  # noqa: E402
from anholo.numerics.implicit_rhs import compile_implicit  # noqa: E402
from anholo.system import System  # noqa: E402


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def report_table(timeout: float) -> list:
    names = [n for n, _ in list_examples() if "<" not in n] + ["n_trailer_3"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    rows = []
    for name in names:
        row = {"example": name}
        for mode, extra in (("text", []), ("json", ["--json"])):
            c0, w0 = _child_cpu(), time.perf_counter()
            try:
                p = subprocess.run([sys.executable, "-m", "anholo.cli", "analyze", name, "--quiet", *extra],
                                   env=env, capture_output=True, timeout=timeout)
                size, rc = len(p.stdout), p.returncode
            except subprocess.TimeoutExpired:
                size, rc = None, "timeout"
            row[f"{mode}_cpu_s"] = round(_child_cpu() - c0, 2)
            row[f"{mode}_wall_s"] = round(time.perf_counter() - w0, 2)
            row[f"{mode}_bytes"] = size
            row[f"{mode}_exit"] = rc
        rows.append(row)
        print(f"  {name:32s} cpu {row['text_cpu_s']:6.2f} s  wall {row['text_wall_s']:6.2f} s  "
              f"text {row['text_bytes'] or 0:>8} B  exit {row['text_exit']}  | json cpu {row['json_cpu_s']:6.2f} s "
              f"{row['json_bytes'] or 0:>9} B", flush=True)
    return rows


def _anholo_implicit(n: int):
    system = System.from_spec(n_trailer(n))
    return system.nonholonomic().implicit_form()


def _lagranges_implicit(n: int):
    spec = n_trailer(n)
    t = dynamicsymbols._t
    qf = dynamicsymbols(" ".join(f"q{i}" for i in range(len(spec.coordinates))))
    qf = qf if isinstance(qf, (list, tuple)) else [qf]
    sub = {**dict(zip(spec.coordinates, qf)), **{u: q.diff(t) for u, q in zip(spec.velocities, qf)}}
    L = sp.sympify(spec.lagrangian).xreplace(sub)
    cons = [sp.sympify(c).xreplace(sub) for c in spec.constraints]
    LM = LagrangesMethod(L, qf, nonhol_coneqs=cons)
    LM.form_lagranges_equations()
    return LM.mass_matrix_full, LM.forcing_full


def _measure(fn, n):
    tracemalloc.start()
    c0 = time.process_time()
    fn(n)
    cpu = time.process_time() - c0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    sp.core.cache.clear_cache()
    return cpu, peak / 2**20


def trailer_table(nmax: int) -> list:
    rows = []
    for n in range(1, nmax + 1):
        a_cpu, a_mem = _measure(_anholo_implicit, n)
        l_cpu, l_mem = _measure(_lagranges_implicit, n)
        rows.append({"n": n, "anholo_implicit_cpu_s": round(a_cpu, 3), "anholo_peak_MiB": round(a_mem, 1),
                     "lagranges_method_cpu_s": round(l_cpu, 3), "lagranges_peak_MiB": round(l_mem, 1)})
        print(f"  n = {n:2d}: anholo implicit {a_cpu:7.3f} s {a_mem:7.1f} MiB | LagrangesMethod {l_cpu:7.3f} s "
              f"{l_mem:7.1f} MiB", flush=True)
    for key in ("anholo_implicit_cpu_s", "lagranges_method_cpu_s"):
        vals = [r[key] for r in rows if r[key] > 0]
        if len(vals) >= 3:
            growth = (vals[-1] / vals[1]) ** (1 / (len(vals) - 2))
            print(f"  growth per trailer ({key}, n = 2..{nmax}): {growth:.2f}x")
    return rows


def _rates(candidates: dict, calls: int, rounds: int = 41) -> dict:
    """Median over ``rounds`` of calls/s per candidate; the candidates interleaved within each round.

    Rounds are short (milliseconds) so that the median discards the rounds in which the
    process was descheduled on a shared machine; the order is shuffled per round."""
    samples = {k: [] for k in candidates}
    order = list(candidates)
    shuffle = random.Random(0).shuffle
    for _ in range(rounds):
        shuffle(order)  # no candidate always runs right after the slow one
        for name in order:
            fn = candidates[name]
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append(calls / (time.perf_counter() - t0))
    return {k: statistics.median(v) for k, v in samples.items()}


def _kane_sleigh(m: float, I: float, a: float):
    """The Chaplygin sleigh in ``sympy.physics.mechanics`` (KanesMethod, u = q̇, ẏ dependent) and a
    PyDy-style RHS: ``mass_matrix_full`` and ``forcing_full`` lambdified with cse, ``numpy.linalg.solve``."""
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

    x, y, th = dynamicsymbols("x y theta")
    u1, u2, u3 = dynamicsymbols("u1 u2 u3")
    ms, Is, as_ = sp.symbols("m I a")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, u3 * N.z)
    G = Point("G")
    G.set_vel(N, u1 * N.x + u2 * N.y)
    P = G.locatenew("P", -as_ * A.x)  # the knife edge, a behind the centre of mass
    P.v2pt_theory(G, N, A)
    km = KanesMethod(N, q_ind=[x, y, th], u_ind=[u1, u3], u_dependent=[u2],
                     kd_eqs=[x.diff() - u1, y.diff() - u2, th.diff() - u3],
                     velocity_constraints=[P.vel(N).dot(A.y)])
    km.kanes_equations([RigidBody("B", G, A, ms, (inertia(A, 0, 0, Is), G))], [])
    args = list(km.q) + list(km.u) + [ms, Is, as_]
    Mf = sp.lambdify(args, km.mass_matrix_full, modules="numpy", cse=True)
    Ff = sp.lambdify(args, km.forcing_full, modules="numpy", cse=True)
    solve = np.linalg.solve

    def rhs(t, z):
        return solve(Mf(*z, m, I, a), Ff(*z, m, I, a)).ravel()

    return rhs, [str(s.func) for s in km.u]


def rhs_table(calls: int) -> dict:
    system = System.load("chaplygin_sleigh")
    nh = system.nonholonomic()
    vals = {str(k): float(v) for k, v in system.values.items()}
    m, I, a = vals["m"], vals["I"], vals["a"]

    def hand_math(t, y):
        x, yy, th, v1, v2 = y
        c, s = math.cos(th), math.sin(th)
        return [v1 * c - v2 * s, v1 * s + v2 * c, v2 / a, v2 * v2 / a, -a * m * v1 * v2 / (I + a * a * m)]

    def hand_math_floats(t, y):  # the same on Python floats (numpy scalars are slower to compute with)
        x, yy, th, v1, v2 = y.tolist()
        c, s = math.cos(th), math.sin(th)
        return [v1 * c - v2 * s, v1 * s + v2 * c, v2 / a, v2 * v2 / a, -a * m * v1 * v2 / (I + a * a * m)]

    def hand_numpy(t, y):
        th, v1, v2 = y[2], y[3], y[4]
        c, s = np.cos(th), np.sin(th)
        return np.array([v1 * c - v2 * s, v1 * s + v2 * c, v2 / a, v2 * v2 / a, -a * m * v1 * v2 / (I + a * a * m)])

    compiled = compile_system(from_system(system))
    explicit = compiled.rhs(compiled.parameter_vector(system.values))
    imp = compile_implicit(nh)
    implicit = imp.rhs(imp.parameter_vector(vals))
    kane, kane_u = _kane_sleigh(m, I, a)
    y = np.array([0.1, -0.2, 0.3, 0.7, 0.4])
    ref = np.array(hand_math(0.0, y))
    for f in (explicit, implicit, hand_numpy, hand_math_floats):
        assert np.allclose(f(0.0, y), ref, rtol=1e-12), "the right-hand sides disagree"
    # KanesMethod's state (x, y, θ, ẋ, θ̇, ẏ) at the same point of C: q̇ from anholo's kinematics
    z = np.array([*y[:3], ref[0], ref[2], ref[1]])
    kz = kane(0.0, z)
    assert kane_u == ["u1", "u3", "u2"] and np.isclose(kz[4], ref[4] / a, rtol=1e-12), "KanesMethod disagrees"
    single = _rates({"anholo compile_system (explicit)": lambda: explicit(0.0, y),
                     "anholo compile_implicit (program + pivoted solve)": lambda: implicit(0.0, y),
                     "hand-written math": lambda: hand_math(0.0, y),
                     "hand-written math on floats (y.tolist())": lambda: hand_math_floats(0.0, y),
                     "hand-written numpy": lambda: hand_numpy(0.0, y),
                     "sympy KanesMethod M, F lambdified + solve": lambda: kane(0.0, z)}, calls)
    rng = np.random.default_rng(0)
    Y = rng.uniform(-1, 1, (1000, 5))
    p = imp.parameter_vector(vals)
    assert np.allclose(imp.batch(Y, p), np.array([hand_math(0.0, row) for row in Y]), rtol=1e-12)
    batch_calls = max(calls // 200, 5)
    batch_fn = imp.batch_function(p)
    batch = _rates({"anholo compile_implicit batch (vectorised)": lambda: batch_fn(Y),
                    "hand-written numpy, vectorised": lambda: hand_numpy(0.0, Y.T)}, batch_calls)
    # the 40× slower loop in rounds of its own (interleaved, it slows the candidate run after it)
    batch |= _rates({"hand-written math, loop": lambda: [hand_math(0.0, row) for row in Y]}, 1, rounds=11)
    batch = {k: v * 1000 for k, v in batch.items()}
    for title, table in (("single state", single), ("batch of 1,000 states", batch)):
        print(f"  {title} (median of 41 interleaved rounds; ratio to the hand-written peer):")
        ref_rate = table.get("hand-written math", table.get("hand-written numpy, vectorised"))
        for k, v in table.items():
            print(f"    {k:48s} {v:12,.0f} states/s  {v / ref_rate:5.2f}x")
    return {"single": single, "batch_1000": batch}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-reports", action="store_true")
    ap.add_argument("--rhs-only", action="store_true", help="only the right-hand sides (merged into the JSON)")
    args = ap.parse_args()
    out = {"machine": {"python": sys.version.split()[0], "sympy": sp.__version__, "cpus": os.cpu_count(),
                       "load": os.getloadavg()}}
    print("Right-hand sides (Chaplygin sleigh):")
    out["rhs"] = rhs_table(500 if args.quick else 2_000)
    path = ROOT / "benchmarks" / "results" / "implicit.json"
    if args.rhs_only:
        old = json.loads(path.read_text()) if path.exists() else {}
        old.update(rhs=out["rhs"], rhs_machine=out["machine"])
        path.write_text(json.dumps(old, indent=2))
        return
    print("Implicit Γ_nh of the n-trailer vs LagrangesMethod's implicit equations:")
    out["n_trailer"] = trailer_table(4 if args.quick else 6)
    if not args.skip_reports:
        print("anholo analyze (whole process):")
        out["reports"] = report_table(300)
    path = ROOT / "benchmarks" / "results" / "implicit.json"
    path.write_text(json.dumps(out, indent=2))
    print(f"written {path}")


if __name__ == "__main__":
    main()

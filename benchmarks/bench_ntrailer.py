#!/usr/bin/env python
"""Benchmark: growth of the implicit Γ_nh of the n-trailer, n = 1…10, against KanesMethod's implicit equations.

Two derivations of the same mechanical system (anholo's built-in n-trailer,
:func:`anholo.examples.n_trailer`: a kinematic car with mass ``m0`` and inertia ``J0``
about its rear-axle centre ``(x, y)``, pulling ``n`` trailers hitched at the previous
axle centre, trailer ``i`` with mass ``m_i`` at its axle, inertia ``J_i`` about it and
hitch-to-axle length ``d_i``; every axle rolls without slipping sideways):

* **anholo** — ``System.from_spec(n_trailer(n)).nonholonomic().implicit_form()``:
  frame, adapted frame, ``M`` and ``F`` of ``g_αβ v̇^β = F_α`` with the multipliers (no solve);
* **maggi** — Maggi's equations (anholo.dynamics.maggi: no normal forms, symengine, shared
  subexpressions; the result converted to sympy) from the file's natural Lagrangian and constraints;
* **KanesMethod** — the same system built in ``sympy.physics.mechanics`` (a rigid body per
  axle, the generalised speeds ``u = q̇``, the ``n + 1`` no-slip conditions as velocity
  constraints with the dependent speeds ``ẏ, θ̇1, …, θ̇n``), ``kanes_equations`` and then
  ``mass_matrix_full`` and ``forcing_full`` (Kane & Levinson 1985; sympy's implicit form).

Timing is **in-process in a fresh subprocess** per (method, n, repeat): the child imports
sympy and anholo (not timed), then times the derivation alone (CPU seconds of the
process, ``time.process_time``, and wall seconds), so every run starts with empty sympy
and anholo caches.  Memory: the child's peak resident set size (``VmHWM``) minus its
resident size after the imports, i.e. the memory the derivation added.  Median of
``--repeats`` runs where a run takes under 10 s, else one run.  A method whose run at
some n exceeds ``--budget`` seconds (default 120) is stopped and not run at larger n
(shown as ``skipped``).

Before timing, the two derivations are checked against each other at a random state on
the constraint manifold for n ≤ 3: anholo's natural accelerations ``q̈`` (from the
field) against the solution of KanesMethod's ``mass_matrix_full · ẋ = forcing_full``.

Growth per trailer: the geometric mean of ``t(n+1)/t(n)`` over the measured n ≥ 2
(the same n range for both methods).

Run from the repository root::

    python benchmarks/bench_ntrailer.py               # n = 1..10, budget 120 s per run
    python benchmarks/bench_ntrailer.py --nmax 6 --repeats 1

Results: a printed table and ``benchmarks/results/ntrailer.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


# --- the two derivations -------------------------------------------------------------------------
def anholo_implicit(n: int):
    from anholo.examples import n_trailer
    from anholo.system import System

    return System.from_spec(n_trailer(n)).nonholonomic().implicit_form()


def maggi_implicit(n: int):
    """Maggi's route from the file's data (the natural Lagrangian and constraints of the spec: it needs
    neither the frame nor the normalised Lagrangian that ``System.from_spec`` builds for the exact route)."""
    from anholo.dynamics.maggi import MaggiSystem
    from anholo.examples import n_trailer
    from anholo.geometry.chart import Chart

    spec = n_trailer(n)
    chart = Chart(spec.coordinates, velocities=spec.velocities, parameters=spec.parameters)
    return MaggiSystem(chart, spec.lagrangian, spec.constraints).implicit_form()


def kane_model(n: int):
    """KanesMethod for the n-trailer; returns (KanesMethod, q, u, parameters by name, constraints)."""
    import sympy as sp
    from sympy.physics.mechanics import (KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols,
                                         inertia)

    q = dynamicsymbols("x y " + " ".join(f"theta{i}" for i in range(n + 1)))
    u = dynamicsymbols("ux uy " + " ".join(f"w{i}" for i in range(n + 1)))
    x, y, th = q[0], q[1], q[2:]
    m = sp.symbols(" ".join(f"m{i}" for i in range(n + 1)), seq=True)
    J = sp.symbols(" ".join(f"J{i}" for i in range(n + 1)), seq=True)
    d = (None,) + tuple(sp.symbols(" ".join(f"d{i}" for i in range(1, n + 1)), seq=True)) if n else (None,)
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    frames, points, bodies = [], [], []
    P = O.locatenew("P0", x * N.x + y * N.y)
    P.set_vel(N, u[0] * N.x + u[1] * N.y)
    for i in range(n + 1):
        A = N.orientnew(f"A{i}", "Axis", [th[i], N.z])
        A.set_ang_vel(N, u[2 + i] * N.z)
        if i > 0:
            P = points[-1].locatenew(f"P{i}", -d[i] * A.x)
            P.v2pt_theory(points[-1], N, A)
        frames.append(A)
        points.append(P)
        bodies.append(RigidBody(f"B{i}", P, A, m[i], (inertia(A, 0, 0, J[i]), P)))
    kd = [qi.diff() - ui for qi, ui in zip(q, u)]
    # no side slip of axle i: v_Pi · A_i.y = 0
    cons = [points[i].vel(N).dot(frames[i].y) for i in range(n + 1)]
    u_dep = [u[1]] + list(u[3:])
    u_ind = [u[0], u[2]]
    km = KanesMethod(N, q_ind=q, u_ind=u_ind, u_dependent=u_dep, kd_eqs=kd, velocity_constraints=cons)
    km.kanes_equations(bodies, [])
    params = {s.name: s for s in (*m, *J, *d[1:])}
    return km, q, u, params, cons


def kane_implicit(n: int):
    km, *_ = kane_model(n)
    return km.mass_matrix_full, km.forcing_full


METHODS = {"anholo": anholo_implicit, "maggi": maggi_implicit, "kane": kane_implicit}


# --- the child process ---------------------------------------------------------------------------
def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child(method: str, n: int) -> None:
    import sympy  # noqa: F401  (imports are not timed)
    import sympy.physics.mechanics  # noqa: F401
    import anholo.system  # noqa: F401

    base = _rss_kib("VmRSS")
    c0, w0 = time.process_time(), time.perf_counter()
    METHODS[method](n)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    peak = _rss_kib("VmHWM")
    print(json.dumps({"cpu_s": cpu, "wall_s": wall, "peak_added_MiB": (peak - base) / 1024,
                      "peak_rss_MiB": peak / 1024}))


def run_child(method: str, n: int, budget: float):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    try:
        p = subprocess.run([sys.executable, __file__, "--child", method, str(n)], env=env, capture_output=True,
                           text=True, timeout=budget + 30)  # + the imports
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"{method} n = {n} failed:\n{p.stderr[-2000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return None if out["wall_s"] > budget else out


# --- the check -----------------------------------------------------------------------------------
def check(n: int, seed: int = 0, route: str = "exact") -> float:
    """Max relative difference of q̈ (anholo field, exact or Maggi route, vs KanesMethod) at a random state on C."""
    import numpy as np
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    from anholo.examples import n_trailer
    from anholo.system import System

    rng = np.random.default_rng(seed + n)
    km, q, u, params, cons = kane_model(n)
    pvals = {name: float(rng.uniform(0.5, 2.0)) for name in params}
    qv = rng.uniform(-0.6, 0.6, len(q))
    # free speeds ẋ, θ̇0; the dependent ones from the constraints (linear in u)
    uind = {u[0]: float(rng.uniform(-1, 1)), u[2]: float(rng.uniform(-1, 1))}
    sub_q = {**dict(zip(q, qv)), **{params[k]: v for k, v in pvals.items()}}
    cons = [c.xreplace(sub_q).xreplace(uind) for c in cons]
    udep = [u[1]] + list(u[3:])
    sol = sp.solve([sp.sympify(c) for c in cons], udep, dict=True)[0]
    uv = [float(uind.get(ui, sol.get(ui, 0.0))) for ui in u]
    sub = {**sub_q, **dict(zip(u, uv))}
    Mf = np.array(km.mass_matrix_full.xreplace(sub).evalf(), dtype=float)
    Ff = np.array(km.forcing_full.xreplace(sub).evalf(), dtype=float).ravel()
    xdot = np.linalg.solve(Mf, Ff)
    rates = dict(zip(km.u, xdot[len(q):]))  # KanesMethod orders u as (independent, dependent)
    kane_qdd = [rates[ui] for ui in u]  # u̇ = q̈

    system = System.from_spec(n_trailer(n))
    names = [s.name for s in system.chart.coordinates]
    if route == "maggi":
        ms = system.nonholonomic(route="maggi")
        vals = {**dict(zip(names, qv)), **{f"{a}_dot": b for a, b in zip(names, uv)}, **pvals}
        vals.update({v.name: vals[c.name + "_dot"] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
        got = ms.evaluate(vals)["q_ddot"]
        return max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(got, kane_qdd))
    nh = system.nonholonomic()
    acc = nh.field().natural_accelerations()
    chart = nh.frame.chart
    by_name = {s.name: s for e in acc.values() for s in e.free_symbols}
    names = [s.name for s in chart.coordinates]
    vals = {}
    for name, qq in zip(names, qv):
        vals[name] = qq
    for name, uu in zip(names, uv):
        vals[name + "_dot"] = uu
    vals.update(pvals)
    worst = 0.0
    for A, qs in enumerate(chart.coordinates):
        a = float(acc[qs].xreplace({by_name[k]: v for k, v in vals.items() if k in by_name}))
        worst = max(worst, abs(a - kane_qdd[A]) / max(1.0, abs(kane_qdd[A])))
    return worst


# --- the table -----------------------------------------------------------------------------------
def growth(rows, key):
    pairs = [(a[key], b[key]) for a, b in zip(rows, rows[1:]) if a["n"] >= 2 and a[key] and b[key]]
    if not pairs:
        return None
    return math.exp(statistics.fmean(math.log(b / a) for a, b in pairs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--child", nargs=2, metavar=("METHOD", "N"))
    ap.add_argument("--nmax", type=int, default=10)
    ap.add_argument("--budget", type=float, default=120.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    import sympy as sp

    out = {"machine": {"python": sys.version.split()[0], "sympy": sp.__version__, "cpus": os.cpu_count(),
                       "load_before": os.getloadavg()},
           "timing": "in-process, after the imports, one fresh subprocess per run (empty caches); CPU seconds",
           "memory": "peak RSS (VmHWM) minus RSS after the imports, MiB", "budget_s": args.budget}
    if not args.no_check:
        out["check"] = {}
        for n in (1, 2, 3):
            for route in ("exact", "maggi"):
                err = check(n, route=route)
                out["check"][f"{route} {n}"] = err
                print(f"check n = {n}: max relative difference of q̈ (anholo {route} route vs KanesMethod) "
                      f"{err:.1e}", flush=True)
                if err > 1e-9:
                    raise SystemExit("anholo and KanesMethod disagree: not timing different systems")
    rows = []
    stopped = {m: False for m in METHODS}
    for n in range(1, args.nmax + 1):
        row = {"n": n}
        for method in METHODS:
            runs = []
            if not stopped[method]:
                for _ in range(args.repeats):
                    r = run_child(method, n, args.budget)
                    if r is None:
                        stopped[method] = True
                        runs = []
                        break
                    runs.append(r)
                    if r["wall_s"] > 10:
                        break
            if runs:
                row[f"{method}_cpu_s"] = statistics.median(r["cpu_s"] for r in runs)
                row[f"{method}_wall_s"] = statistics.median(r["wall_s"] for r in runs)
                row[f"{method}_MiB"] = max(r["peak_added_MiB"] for r in runs)
                row[f"{method}_runs"] = len(runs)
            else:
                row[f"{method}_cpu_s"] = row[f"{method}_wall_s"] = row[f"{method}_MiB"] = None
                row[f"{method}_runs"] = 0
        rows.append(row)

        def f(v, fmt):
            return format(v, fmt) if v is not None else "skipped"

        print(f"n = {n:2d}  anholo {f(row['anholo_cpu_s'], '8.3f')} s {f(row['anholo_MiB'], '7.1f')} MiB  | "
              f"Maggi {f(row['maggi_cpu_s'], '8.3f')} s {f(row['maggi_MiB'], '7.1f')} MiB  | "
              f"KanesMethod {f(row['kane_cpu_s'], '8.3f')} s {f(row['kane_MiB'], '7.1f')} MiB  | ratio "
              f"{f(row['anholo_cpu_s'] / row['kane_cpu_s'] if row['anholo_cpu_s'] and row['kane_cpu_s'] else None, '6.2f')}",
              flush=True)
    both = [r for r in rows if r["anholo_cpu_s"] and r["kane_cpu_s"]]
    out["rows"] = rows
    out["growth_per_trailer"] = {
        "n_range": [max(2, both[0]["n"]), both[-1]["n"]] if both else None,  # ratios t(n+1)/t(n) from n = 2
        "anholo_cpu": growth(both, "anholo_cpu_s"), "kane_cpu": growth(both, "kane_cpu_s"),
        "anholo_MiB": growth(both, "anholo_MiB"), "kane_MiB": growth(both, "kane_MiB"),
        "anholo_cpu_all": growth(rows, "anholo_cpu_s"), "kane_cpu_all": growth(rows, "kane_cpu_s"),
        "maggi_cpu_all": growth(rows, "maggi_cpu_s"), "maggi_MiB_all": growth(rows, "maggi_MiB"),
        "kane_MiB_all": growth(rows, "kane_MiB")}
    g = out["growth_per_trailer"]
    print(f"growth per trailer (geometric mean of t(n+1)/t(n), n = {g['n_range'][0]}..{g['n_range'][1]}): anholo "
          f"{g['anholo_cpu'] or float('nan'):.2f}x, KanesMethod {g['kane_cpu'] or float('nan'):.2f}x; memory anholo "
          f"{g['anholo_MiB'] or float('nan'):.2f}x, KanesMethod {g['kane_MiB'] or float('nan'):.2f}x")
    print(f"over every measured n >= 2: Maggi route {g['maggi_cpu_all'] or float('nan'):.2f}x, KanesMethod "
          f"{g['kane_cpu_all'] or float('nan'):.2f}x; memory Maggi {g['maggi_MiB_all'] or float('nan'):.2f}x, "
          f"KanesMethod {g['kane_MiB_all'] or float('nan'):.2f}x")
    out["machine"]["load_after"] = os.getloadavg()
    path = ROOT / "benchmarks" / "results" / "ntrailer.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

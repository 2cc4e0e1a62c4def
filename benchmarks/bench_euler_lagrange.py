#!/usr/bin/env python
"""Benchmark: deriving the Euler–Lagrange field frame-wise (anholo) or in coordinates (sympy).

Routes timed for each system, starting from the same data (a frame and a
Lagrangian for anholo; the same Lagrangian in natural velocities for sympy):

* anholo, frame-wise (THEORY §3, Prop. 1 of seed 004):
  ``Frame(...)`` / ``Frame.from_coframe(...)`` → ``Lagrangian(frame, L)`` →
  ``.euler_lagrange_field()`` (the "field" time), then
  ``.natural_accelerations()`` (the "incl. q̈" time is the sum of both);
* coordinate route with plain sympy: ``W = ∂²L/∂u∂u``,
  ``rhs = ∂L/∂q − (∂²L/∂u∂q)·u`` and ``q̈ = W.LUsolve(rhs)``;
* ``sympy.physics.mechanics.LagrangesMethod(L, q)``:
  ``form_lagranges_equations()`` then ``rhs()`` (L built from dynamicsymbols).

Each timing is the median of 3 runs (1 with ``--quick``), with sympy's cache
cleared before every run.  Before anything is reported, the natural
accelerations of all routes are compared at random numerical points (relative
tolerance 1e-8); a disagreement aborts the script.  Result sizes are
``sympy.count_ops`` of the natural accelerations (computed by a memoised copy
of count_ops, see ``count_ops_dag``, because the coordinate results are trees
of tens of millions of operations that share subtrees).

Run from the repository root::

    python benchmarks/bench_euler_lagrange.py            # full run
    python benchmarks/bench_euler_lagrange.py --quick    # one run per timing

See benchmarks/README.md for what is measured and how to read the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import mpmath
import sympy as sp
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _common, also when imported from elsewhere

import anholo  # noqa: E402
from anholo import Chart, Frame, Lagrangian  # noqa: E402
from _common import (  # noqa: E402  (shared with bench_nonholonomic.py)
    _source_digest,
    count_ops_dag,
    evaluate,
    fmt_ops,
    fmt_time,
    machine_info,
    print_aligned,
    profile_call,
    random_values,
    time_route,
    xreplace_dag,
)

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "euler_lagrange.json"
REL_TOL = 1e-8
ABS_TOL = 1e-12  # only matters where an acceleration is exactly zero (system 4: q̈ = 0)
EVAL_DIGITS = 50


# --------------------------------------------------------------------------------------
# Systems
# --------------------------------------------------------------------------------------
@dataclass
class System:
    """One benchmark problem.

    ``make_frame`` builds the anholo frame (timed: it is part of anholo's work);
    ``anholo_lagrangian`` is L as handed to ``Lagrangian(frame, ·)`` (in the
    quasi-velocities v1..vn or in the natural velocities); ``natural_lagrangian``
    is the same function in (q, q_dot) for the coordinate routes.
    """

    key: str
    title: str
    chart: Chart
    make_frame: Callable[[], Frame]
    anholo_lagrangian: sp.Expr
    natural_lagrangian: sp.Expr
    note: str = ""
    positive: tuple = ()

    @property
    def n(self) -> int:
        return self.chart.dim


def quasi_velocities(n: int) -> tuple:
    """The default quasi-velocity symbols of anholo's TangentBundle (v1..vn, real)."""
    return tuple(sp.Symbol(f"v{i + 1}", real=True) for i in range(n))


def rigid_body() -> System:
    phi, theta, psi = sp.symbols("phi theta psi", real=True)
    chart = Chart([phi, theta, psi])
    I = sp.symbols("I1:4", positive=True)
    # body angular velocities as one-forms in ZXZ Euler angles: row i = Ω_i(d/dq)
    body = [
        [sp.sin(theta) * sp.sin(psi), sp.cos(psi), 0],
        [sp.sin(theta) * sp.cos(psi), -sp.sin(psi), 0],
        [sp.cos(theta), 0, 1],
    ]
    v = quasi_velocities(3)
    u = sp.Matrix(chart.velocities)
    omega = sp.Matrix(body) * u
    return System(
        key="rigid_body",
        title="free rigid body (ZXZ Euler angles)",
        chart=chart,
        make_frame=lambda: Frame.from_coframe(chart, body),
        anholo_lagrangian=sum(Ii * vi**2 for Ii, vi in zip(I, v)) / 2,
        natural_lagrangian=sum(Ii * wi**2 for Ii, wi in zip(I, omega)) / 2,
        note="Frame.from_coframe(body angular velocities); L = ½ Σ I_i v_i² in quasi-velocities",
    )


def polar_particle() -> System:
    r = sp.Symbol("r", positive=True)
    th = sp.Symbol("theta", real=True)
    chart = Chart([r, th])
    m, k = sp.symbols("m k", positive=True)
    r_dot, th_dot = chart.velocities
    L = m * (r_dot**2 + r**2 * th_dot**2) / 2 + k / r
    return System(
        key="polar",
        title="particle, polar coordinates",
        chart=chart,
        make_frame=lambda: Frame(chart, [[1, 0], [0, 1 / r]]),
        anholo_lagrangian=L,
        natural_lagrangian=L,
        note="orthonormal frame X1 = ∂r, X2 = (1/r)∂θ; L given in natural velocities "
        "(anholo rewrites it in quasi-velocities)",
    )


def random_frame_6d(seed: int = 6):
    """X_i = ∂_i + Σ_{j>i} c_ij ∂_j on R^6, c_ij = 1–2 random monomials of degree 1–2.

    Returns the chart, the frame matrix (row i = X_i), the coframe θ = (X^T)^{-1}
    computed independently of anholo (forward substitution, expanded), and the
    random generator (to draw the potential from the same stream).
    """
    rng = random.Random(seed)
    n = 6
    chart = Chart([f"q{i}" for i in range(1, n + 1)])
    q = chart.coordinates

    def monomial(max_degree):
        degree = rng.randint(1, max_degree)
        return rng.choice((-2, -1, 1, 2)) * sp.Mul(*[rng.choice(q) for _ in range(degree)])

    X = sp.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            X[i, j] = sp.Add(*[monomial(2) for _ in range(rng.randint(1, 2))])
    X = sp.ImmutableMatrix(X)
    # θ X^T = I with X^T lower unitriangular: θ is lower unitriangular, by forward substitution
    theta = sp.zeros(n, n)
    for i in range(n):
        theta[i, i] = sp.S.One
        for A in reversed(range(i)):
            # (θ X^T)[i, A] = Σ_{B=A..i} θ[i,B] X[A,B] = 0 for A < i, with X[A,A] = 1
            theta[i, A] = sp.expand(-sp.Add(*[theta[i, B] * X[A, B] for B in range(A + 1, i + 1)]))
    assert (theta * X.T - sp.eye(n)).applyfunc(sp.expand) == sp.zeros(n, n)
    return chart, X, sp.ImmutableMatrix(theta), rng


def random_6d_diagonal() -> System:
    chart, X, theta, rng = random_frame_6d()
    q = chart.coordinates
    n = chart.dim
    V = sp.Add(*[rng.choice((-3, -1, 1, 2)) * sp.Mul(*[rng.choice(q) for _ in range(rng.randint(1, 3))])
                 for _ in range(4)])
    m = sp.symbols("m1:7", positive=True)
    v = quasi_velocities(n)
    v_natural = theta * sp.Matrix(chart.velocities)  # v = θ u
    return System(
        key="random6d_diag",
        title="random 6-D frame, L = ½Σ m_i v_i² − V",
        chart=chart,
        make_frame=lambda: Frame(chart, X),
        anholo_lagrangian=sum(mi * vi**2 for mi, vi in zip(m, v)) / 2 - V,
        natural_lagrangian=sum(mi * wi**2 for mi, wi in zip(m, v_natural)) / 2 - V,
        note=f"frame X = {X.tolist()}; V = {V}",
    )


def random_6d_dense() -> System:
    chart, X, _theta, _rng = random_frame_6d()
    L = sum(u**2 for u in chart.velocities) / 2
    return System(
        key="random6d_dense",
        title="random 6-D frame, L = ½|u|²",
        chart=chart,
        make_frame=lambda: Frame(chart, X),
        anholo_lagrangian=L,
        natural_lagrangian=L,
        note="same frame as random6d_diag; L in natural velocities, so g = X Xᵀ is dense in the frame",
    )


SYSTEMS = (rigid_body, polar_particle, random_6d_diagonal, random_6d_dense)


# --------------------------------------------------------------------------------------
# Routes.  Each returns (step timings, natural accelerations in the order of the chart).
# --------------------------------------------------------------------------------------
def route_anholo(system: System):
    t0 = time.perf_counter()
    frame = system.make_frame()
    t1 = time.perf_counter()
    lagrangian = Lagrangian(frame, system.anholo_lagrangian)
    t2 = time.perf_counter()
    field_ = lagrangian.euler_lagrange_field()
    t3 = time.perf_counter()
    acc = field_.natural_accelerations()
    t4 = time.perf_counter()
    steps = {"frame": t1 - t0, "lagrangian": t2 - t1, "euler_lagrange_field": t3 - t2,
             "natural_accelerations": t4 - t3, "field": t3 - t0, "total": t4 - t0}
    return steps, [acc[q] for q in system.chart.coordinates]


def route_coordinates(system: System):
    L = system.natural_lagrangian
    q, u = system.chart.coordinates, system.chart.velocities
    n = system.n
    t0 = time.perf_counter()
    dL_du = [L.diff(uA) for uA in u]
    W = sp.Matrix(n, n, lambda A, B: dL_du[A].diff(u[B]))
    rhs = sp.Matrix([L.diff(q[A]) - sp.Add(*[dL_du[A].diff(q[B]) * u[B] for B in range(n)]) for A in range(n)])
    t1 = time.perf_counter()
    acc = W.LUsolve(rhs)
    t2 = time.perf_counter()
    return {"form_W_rhs": t1 - t0, "LUsolve": t2 - t1, "total": t2 - t0}, list(acc)


def lagranges_method_input(system: System):
    """L(q(t), q'(t)) with dynamicsymbols, and the map back to plain symbols (untimed)."""
    qt = dynamicsymbols(" ".join(f"{s.name}_t" for s in system.chart.coordinates))
    qt = list(qt) if isinstance(qt, (list, tuple)) else [qt]
    t = dynamicsymbols._t
    to_t = {}
    back = {}
    for s, u, f in zip(system.chart.coordinates, system.chart.velocities, qt):
        to_t[s], to_t[u] = f, f.diff(t)
        back[f.diff(t)], back[f] = u, s
    return system.natural_lagrangian.xreplace(to_t), qt, back


def route_lagranges_method(system: System, prepared):
    L_t, qt, back = prepared
    n = system.n
    t0 = time.perf_counter()
    lm = LagrangesMethod(L_t, qt)
    lm.form_lagranges_equations()
    t1 = time.perf_counter()
    rhs = lm.rhs()
    t2 = time.perf_counter()
    acc = xreplace_dag(list(rhs[n:]), back)  # rhs = (q', q''); untimed conversion to symbols
    return {"form_lagranges_equations": t1 - t0, "rhs": t2 - t1, "total": t2 - t0}, acc


# --------------------------------------------------------------------------------------
# Correctness check
# --------------------------------------------------------------------------------------
def random_points(system: System, count: int, seed: int = 2024) -> list[dict]:
    params = set().union(*(sp.sympify(e).free_symbols for e in (system.anholo_lagrangian,
                                                                 system.natural_lagrangian)))
    return random_values(params | set(system.chart.coordinates) | set(system.chart.velocities), count, seed)


def verify(system: System, results: dict[str, list], points: list[dict]) -> dict:
    """Assert that all routes give the same q̈ at the points (against the coordinate route).

    A component passes if ``|a − b| ≤ 1e-8·max(|a|, |b|)`` or ``|a − b| ≤ 1e-12`` (the
    latter only matters where q̈ is exactly zero).  Returns the largest relative
    deviation (over components with a nonzero reference value) and the largest
    absolute deviation where the reference value is zero.
    """
    names = sorted((k for k, v in results.items() if v is not None), key=lambda k: k != "coordinate")
    worst = {"max_relative_deviation": None, "max_abs_deviation_where_zero": None}
    if len(names) < 2:
        return worst
    with mpmath.workdps(EVAL_DIGITS):
        for pt in points:
            values = {k: [evaluate(sp.sympify(e), pt) for e in results[k]] for k in names}
            ref = values[names[0]]
            for k in names[1:]:
                for A, (a, b) in enumerate(zip(ref, values[k])):
                    diff = abs(a - b)
                    scale = max(abs(a), abs(b))
                    ok = diff <= max(REL_TOL * scale, ABS_TOL)
                    assert ok, (
                        f"{system.key}: q̈ of {system.chart.coordinates[A]} differs between "
                        f"{names[0]} ({mpmath.nstr(a, 15)}) and {k} ({mpmath.nstr(b, 15)})"
                    )
                    key, dev = (("max_relative_deviation", float(diff / abs(a))) if a != 0
                                else ("max_abs_deviation_where_zero", float(diff)))
                    worst[key] = max(worst[key] or 0.0, dev)
    return worst


# --------------------------------------------------------------------------------------
# Profiling
# --------------------------------------------------------------------------------------
def profile_anholo(system: System, limit: float, top: int = 10) -> dict:
    """One anholo run under cProfile (within the time limit); the top functions."""
    return profile_call(lambda: route_anholo(system), limit, top)


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------
def print_table(rows: list[dict], limit: float) -> None:
    headers = ["system", "n", "anholo frame-wise field [s]", "anholo incl. q̈ [s]",
               "coordinate route [s]", "LagrangesMethod [s]", "ops anholo", "ops coordinate"]
    table = [headers]
    for r in rows:
        table.append([r["system"], str(r["n"]), r["cells"]["field"], r["cells"]["total"],
                      r["cells"]["coordinate"], r["cells"]["lagranges"],
                      fmt_ops(r["ops"]["anholo"]), fmt_ops(r["ops"]["coordinate"])])
    print_aligned(table)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run per timing instead of the median of 3")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH",
                        help=f"where to write the results (default {DEFAULT_JSON.relative_to(HERE.parent)})")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="a run longer than this is abandoned and the route reported as too slow (default 60)")
    parser.add_argument("--no-profile", action="store_true",
                        help="skip the cProfile run made when anholo takes more than 1 s")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 3
    limit = args.time_limit
    source_digest = _source_digest()
    load_at_start = os.getloadavg()

    print(f"anholo {anholo.__version__}, sympy {sp.__version__}, Python {platform.python_version()}, "
          f"{platform.platform()}; {'1 run' if repeats == 1 else f'median of {repeats} runs'}, "
          f"time limit {limit:g} s per run; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
          flush=True)

    rows, records = [], []
    for make_system in SYSTEMS:
        system = make_system()
        print(f"\n[{system.key}] {system.title} (n = {system.n})", flush=True)
        lm_input = lagranges_method_input(system)
        timings = {
            "anholo": time_route(lambda: route_anholo(system), repeats, limit),
            "coordinate": time_route(lambda: route_coordinates(system), repeats, limit),
            "lagranges_method": time_route(lambda: route_lagranges_method(system, lm_input), repeats, limit),
        }
        for name, t in timings.items():
            status = ("timed out" if t.timed_out else t.error) if (t.timed_out or t.error) else \
                ", ".join(f"{k} {v:.3f}" for k, v in t.medians().items())
            print(f"  {name:17s} {status}", flush=True)

        results = {k: t.result for k, t in timings.items()}
        points = random_points(system, 2)
        deviation = verify(system, results, points)
        agreeing = [k for k, v in results.items() if v is not None]
        if len(agreeing) > 1:
            devs = ", ".join(f"{k.replace('_', ' ')} {v:.1e}" for k, v in deviation.items() if v is not None)
            print(f"  verified: {', '.join(agreeing)} agree at {len(points)} random points ({devs})", flush=True)
        else:
            print("  NOT verified: fewer than two routes finished", flush=True)

        ops = {k: (count_ops_dag(v) if v is not None else None) for k, v in results.items()}
        for k, v in results.items():  # the memoised count is sympy.count_ops: check where that is cheap
            if v is not None and ops[k] < 50_000:
                assert ops[k] == sp.count_ops(v), (system.key, k, ops[k], sp.count_ops(v))

        profile = None
        slow = timings["anholo"].timed_out or (timings["anholo"].median() or 0) > 1.0
        if slow and not args.no_profile:
            # cProfile slows sympy ~3x: give a run that finished unprofiled room to finish
            profile_limit = limit if timings["anholo"].timed_out else max(limit, 5 * timings["anholo"].median())
            profile = profile_anholo(system, profile_limit)
            print(f"  cProfile of one anholo run ({'complete' if profile['complete'] else 'cut off at the time limit'},"
                  f" {profile['profiled_seconds']:.1f} s profiled), anholo functions by cumulative time:")
            for r in profile["anholo_by_cumtime"]:
                print(f"    {r['cumtime']:8.2f} s  {r['calls']:>8}  {r['function']}")
            print("  all functions by own time:")
            for r in profile["all_by_tottime"]:
                print(f"    {r['tottime']:8.2f} s  {r['calls']:>8}  {r['function']}")

        cells = {
            "field": fmt_time(timings["anholo"], "field", limit),
            "total": fmt_time(timings["anholo"], "total", limit),
            "coordinate": fmt_time(timings["coordinate"], "total", limit),
            "lagranges": fmt_time(timings["lagranges_method"], "total", limit),
        }
        rows.append({"system": system.key, "n": system.n, "cells": cells, "ops": ops})
        records.append({
            "system": system.key,
            "title": system.title,
            "n": system.n,
            "description": system.note,
            "seconds": {
                "anholo_field": timings["anholo"].median("field"),
                "anholo_total": timings["anholo"].median("total"),
                "coordinate": timings["coordinate"].median("total"),
                "lagranges_method": timings["lagranges_method"].median("total"),
            },
            "steps_median_seconds": {k: t.medians() for k, t in timings.items()},
            "runs": {k: t.runs for k, t in timings.items()},
            "timed_out": {k: t.timed_out for k, t in timings.items()},
            "errors": {k: t.error for k, t in timings.items() if t.error},
            "count_ops": ops,
            "verified_routes": agreeing if len(agreeing) > 1 else [],
            **deviation,
            "anholo_profile": profile,
        })

    print()
    print_table(rows, limit)
    payload = {
        "benchmark": "euler_lagrange",
        "machine": machine_info(source_digest, load_at_start),
        "settings": {"repeats": repeats, "statistic": "median", "time_limit_seconds": limit,
                     "cache_cleared_between_runs": True, "verification_rel_tol": REL_TOL,
                     "verification_abs_tol": ABS_TOL, "verification_points": 2},
        "columns": {
            "anholo_field": "Frame(...) + Lagrangian(frame, L) + euler_lagrange_field()",
            "anholo_total": "anholo_field + natural_accelerations()",
            "coordinate": "W = d2L/du du, rhs = dL/dq - (d2L/du dq) u, W.LUsolve(rhs)",
            "lagranges_method": "LagrangesMethod(L, q).form_lagranges_equations() + .rhs()",
            "count_ops": "sympy.count_ops of the natural accelerations (sum over components)",
        },
        "results": records,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

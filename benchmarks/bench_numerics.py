#!/usr/bin/env python
"""Benchmark: numerical integration of the derived fields (anholo.numerics), side by side.

For each catalogue example (its nonholonomic field if it has constraints, else its
Euler–Lagrange field), from one system file:

* anholo: ``from_system`` → ``compile_system`` (derive + compile time), then the
  right-hand side ``rhs(t, y)`` on the state ``(q, v^α)`` (evaluations per second,
  at one state, best of several loops) and ``simulate`` over ``[0, T]`` with
  DOP853, rtol 1e-10, atol 1e-12 (wall time, RHS evaluations);
* sympy.physics.mechanics: ``LagrangesMethod(L, q, nonhol_coneqs=constraints)`` →
  ``form_lagranges_equations()`` → ``rhs()`` (state ``(q, q̇)`` plus the multipliers),
  lambdified with ``sympy.lambdify(..., cse=True)`` (numpy); derive time, evaluations
  per second, and ``solve_ivp`` with the same method and tolerances from the same
  ``(q0, q̇0)`` (the first 2n components of ``rhs``);
* a hand-written numpy right-hand side for a few examples (the practical limit),
  integrated the same way.

Before reporting, the final natural state of each route is compared with anholo's.
A batch of runs (one example, many initial states) is timed with 1 and 2 worker
processes (:func:`anholo.numerics.batch.simulate_batch`).

Run from the repository root::

    python benchmarks/bench_numerics.py            # all examples, T = 1000, 200 000 RHS calls, batch of 16
    python benchmarks/bench_numerics.py --quick    # T = 200, 20 000 RHS calls, batch of 8

Results are printed as a table and written to ``benchmarks/results/numerics.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anholo.examples import resolve_system  # noqa: E402
from anholo.numerics import compile_system, from_system, simulate  # noqa: E402
from anholo.numerics.batch import simulate_batch  # noqa: E402
from anholo.system import System  # noqa: E402
from _common import TimeLimitExceeded, _source_digest, machine_info, print_aligned, run_limited  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "numerics.json"
SYSTEMS = ("nonholonomic_particle", "vertical_rolling_disk", "chaplygin_sleigh", "knife_edge",
           "two_wheeled_carriage", "rolling_disk", "sphere_on_turntable", "n_trailer_1", "n_trailer_2",
           "rigid_body", "spherical_pendulum", "polar_particle")
OPTIONS = dict(method="DOP853", rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------------------------
# Hand-written right-hand sides (state: q and the independent natural velocities)
# --------------------------------------------------------------------------------------------
def hand_particle(values):
    def rhs(t, s):
        x, y, z, xd, yd = s
        xdd = -y * xd * yd / (1 + y * y)
        return np.array([xd, yd, y * xd, xdd, 0.0])

    return rhs, lambda q, u: np.array([*q, u[0], u[1]]), lambda s: np.array([s[3], s[4], s[1] * s[3]])


def hand_disk(values):
    R = values["R"]

    def rhs(t, s):
        x, y, th, ph, thd, phd = s
        return np.array([R * np.cos(th) * phd, R * np.sin(th) * phd, thd, phd, 0.0, 0.0])

    def u_of(s):
        return np.array([R * np.cos(s[2]) * s[5], R * np.sin(s[2]) * s[5], s[4], s[5]])

    return rhs, lambda q, u: np.array([*q, u[2], u[3]]), u_of


def hand_sleigh(values):
    m, I, a = values["m"], values["I"], values["a"]

    def rhs(t, s):  # forward speed v, heading rate w
        x, y, th, v, w = s
        c, sn = np.cos(th), np.sin(th)
        return np.array([v * c - a * w * sn, v * sn + a * w * c, w, a * w * w, -m * a * v * w / (I + m * a * a)])

    def s_of(q, u):
        return np.array([*q, math.cos(q[2]) * u[0] + math.sin(q[2]) * u[1], u[2]])

    def u_of(s):
        c, sn = np.cos(s[2]), np.sin(s[2])
        return np.array([s[3] * c - a * s[4] * sn, s[3] * sn + a * s[4] * c, s[4]])

    return rhs, s_of, u_of


def hand_pendulum(values):
    g, l = values["g"], values["l"]

    def rhs(t, s):
        th, ph, thd, phd = s
        sn, c = np.sin(th), np.cos(th)
        return np.array([thd, phd, sn * c * phd * phd - g / l * sn, -2 * thd * phd * c / sn])

    return rhs, lambda q, u: np.array([*q, *u]), lambda s: s[2:]


HAND = {"nonholonomic_particle": hand_particle, "vertical_rolling_disk": hand_disk,
        "chaplygin_sleigh": hand_sleigh, "spherical_pendulum": hand_pendulum}


# --------------------------------------------------------------------------------------------
def rate(fn, y, calls: int) -> float:
    """RHS evaluations per second: best of 3 loops of ``calls // 3`` calls."""
    best = float("inf")
    per = max(1, calls // 3)
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(per):
            fn(0.0, y)
        best = min(best, time.perf_counter() - t0)
    return per / best


def initial_data(compiled, name: str):
    """(q0, q̇0) on C: fixed coordinates away from chart singularities, free velocities 0.3..0.9."""
    n = compiled.n
    q0 = np.array([0.35 + 0.1 * k for k in range(n)])
    if name == "spherical_pendulum":
        q0 = np.array([1.0, 0.0])
    s = np.concatenate([q0, np.linspace(0.9, 0.3, compiled.dim - n)])
    p = compiled.parameter_vector()
    u0 = compiled.natural_velocities(s[:, None], p)[:, 0]
    return q0, u0


def mechanics_route(name: str, limit: float):
    """LagrangesMethod → rhs() → lambdify(cse=True); returns (derive seconds, f(t, y) on (q, q̇), error)."""
    spec = resolve_system(name)
    values = {p: sp.Float(v) for p, v in spec.values.items()}
    t = dynamicsymbols._t
    qt = [dynamicsymbols(f"{s.name}_t") for s in spec.coordinates]
    to_t = {}
    for s, u, f in zip(spec.coordinates, spec.velocities, qt):
        to_t[s], to_t[u] = f, f.diff(t)
    L_t = sp.sympify(spec.lagrangian).xreplace(to_t)
    cons_t = [sp.sympify(c).xreplace(to_t) for c in spec.constraints]

    def derive():
        t0 = time.perf_counter()
        lm = LagrangesMethod(L_t, qt, nonhol_coneqs=cons_t) if cons_t else LagrangesMethod(L_t, qt)
        lm.form_lagranges_equations()
        rhs = lm.rhs()
        q_syms = sp.symbols(f"_q0:{len(qt)}")
        u_syms = sp.symbols(f"_u0:{len(qt)}")
        back = {f.diff(t): u for f, u in zip(qt, u_syms)}
        back.update(dict(zip(qt, q_syms)))
        exprs = list(rhs[: 2 * len(qt)])
        exprs = [e.xreplace(back).xreplace(values) for e in exprs]
        f = sp.lambdify([q_syms + u_syms], exprs, modules="numpy", cse=True)
        return time.perf_counter() - t0, f

    try:
        seconds, f = run_limited(derive, limit)
    except TimeLimitExceeded:
        return None, None, f">{limit:g} s"
    except Exception as exc:  # reported, not fatal
        return None, None, f"{type(exc).__name__}"

    def fun(tt, y):
        return np.array(f(y), dtype=float)

    return seconds, fun, None


def integrate(fun, y0, T):
    t0 = time.perf_counter()
    res = solve_ivp(fun, (0.0, T), y0, **OPTIONS)
    return time.perf_counter() - t0, res


def bench_system(name: str, args) -> dict:
    system = System.load(name)
    field = "nonholonomic" if system.has_constraints else "euler-lagrange"
    row = {"system": name, "field": field, "n": system.chart.dim}
    t0 = time.perf_counter()
    compiled = compile_system(from_system(system, field))
    row["anholo_derive_compile_s"] = time.perf_counter() - t0
    row["state_dim"] = compiled.dim
    p = compiled.parameter_vector()
    q0, u0 = initial_data(compiled, name)
    y0 = compiled.initial_state(q0, u0, None, p)
    rhs = compiled.rhs(p)
    row["anholo_rhs_per_s"] = rate(rhs, y0, args.calls)
    traj = simulate(compiled, args.t_end, q0, u0, **OPTIONS)
    row["anholo_integrate_s"] = traj.wall_time
    row["anholo_nfev"] = int(traj.nfev)
    q_end, u_end = traj.q[:, -1], traj.qdot[:, -1]
    row["anholo_energy_drift"] = float(np.max(traj.energy_drift()))
    # sympy.physics.mechanics
    seconds, fun, error = mechanics_route(name, args.time_limit)
    row["mechanics_derive_s"] = seconds
    row["mechanics_error"] = error
    if fun is not None:
        ym = np.concatenate([q0, u0])
        row["mechanics_rhs_per_s"] = rate(fun, ym, max(3, args.calls // 10))
        wall, res = integrate(fun, ym, args.t_end)
        row["mechanics_integrate_s"] = wall
        row["mechanics_nfev"] = int(res.nfev)
        n = compiled.n
        row["mechanics_final_deviation"] = float(max(np.max(np.abs(res.y[:n, -1] - q_end)),
                                                     np.max(np.abs(res.y[n:2 * n, -1] - u_end))))
    # hand-written
    if name in HAND:
        values = {s.name: float(v) for s, v in system.values.items()}
        hrhs, s_of, u_of = HAND[name](values)
        yh = s_of(q0, u0)
        row["hand_rhs_per_s"] = rate(hrhs, yh, args.calls)
        wall, res = integrate(hrhs, yh, args.t_end)
        row["hand_integrate_s"] = wall
        row["hand_nfev"] = int(res.nfev)
        n = compiled.n
        row["hand_final_deviation"] = float(max(np.max(np.abs(res.y[:n, -1] - q_end)),
                                                np.max(np.abs(u_of(res.y[:, -1]) - u_end))))
    return row


def bench_batch(args) -> dict:
    compiled = compile_system(from_system(System.load("spherical_pendulum"), "euler-lagrange"))
    states = [([1.0, 0.0], [0.1 * k, 1.0 + 0.05 * k]) for k in range(args.batch)]
    out = {"system": "spherical_pendulum", "runs": args.batch, "t_end": args.batch_t_end}
    for workers in (1, 2):
        t0 = time.perf_counter()
        simulate_batch(compiled, args.batch_t_end, states, workers=workers, **OPTIONS)
        out[f"wall_s_{workers}_workers"] = time.perf_counter() - t0
    out["speed_up"] = out["wall_s_1_workers"] / out["wall_s_2_workers"]
    return out


def fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="T = 200, 20 000 RHS calls, batch of 8 runs")
    parser.add_argument("--systems", default=None, help="comma-separated example names")
    parser.add_argument("--json", default=str(DEFAULT_JSON))
    parser.add_argument("--time-limit", type=float, default=None, help="limit for the LagrangesMethod derivation (s)")
    args = parser.parse_args(argv)
    args.t_end = 200.0 if args.quick else 1000.0
    args.calls = 20_000 if args.quick else 200_000
    args.batch = 8 if args.quick else 16
    args.batch_t_end = 200.0 if args.quick else 500.0
    args.time_limit = args.time_limit or (60.0 if args.quick else 300.0)
    systems = args.systems.split(",") if args.systems else list(SYSTEMS)
    digest = _source_digest()
    load = os.getloadavg()
    rows = []
    for name in systems:
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(bench_system(name, args))
    batch = bench_batch(args)
    table = [["system", "field", "n", "derive+compile s", "anholo RHS/s", "mechanics RHS/s", "hand RHS/s",
              "anholo int. s", "mechanics int. s", "hand int. s", "mech. derive s", "max |Δ| final"]]
    for r in rows:
        dev = max([r.get("mechanics_final_deviation") or 0.0, r.get("hand_final_deviation") or 0.0])
        table.append([r["system"], r["field"], str(r["n"]), fmt(r["anholo_derive_compile_s"], ".2f"),
                      fmt(r["anholo_rhs_per_s"], ",.0f"), fmt(r.get("mechanics_rhs_per_s"), ",.0f"),
                      fmt(r.get("hand_rhs_per_s"), ",.0f"), fmt(r["anholo_integrate_s"], ".3f"),
                      fmt(r.get("mechanics_integrate_s"), ".3f") if not r["mechanics_error"] else r["mechanics_error"],
                      fmt(r.get("hand_integrate_s"), ".3f"), fmt(r["mechanics_derive_s"], ".2f"), fmt(dev, ".1e")])
    print_aligned(table)
    print(f"\nbatch: {batch['runs']} runs of the spherical pendulum over [0, {batch['t_end']:g}]: "
          f"{batch['wall_s_1_workers']:.2f} s with 1 worker, {batch['wall_s_2_workers']:.2f} s with 2 "
          f"(speed-up {batch['speed_up']:.2f})")
    result = {"benchmark": "numerics", "machine": machine_info(digest, load),
              "settings": {"quick": args.quick, "t_end": args.t_end, "rhs_calls": args.calls, **OPTIONS,
                           "mechanics": "LagrangesMethod(...).rhs() lambdified with cse=True, numpy"},
              "results": rows, "batch": batch}
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2))
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

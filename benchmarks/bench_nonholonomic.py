#!/usr/bin/env python
"""Benchmark: nonholonomic (Lagrange–d'Alembert) dynamics with anholo or sympy's LagrangesMethod.

For every bundled example with constraints and the n-trailer systems
``n_trailer_1`` … ``n_trailer_6``, two routes are timed side by side, from the
same system file (``anholo.examples.resolve_system``):

* anholo: ``System.from_spec(spec)`` → ``.nonholonomic()`` (adapted frame, L in
  its quasi-velocities) → ``.field()``; the accelerations on C,
  ``field.accelerations`` (Γ^α = dv^α/dt as functions of q and the free
  quasi-velocities v^α), are then put through ``anholo.algebra.tidy``
  (``cancel`` + reduction modulo sin² + cos² = 1).  "derive" is everything up to
  the field, "simplify" the ``tidy`` calls.
* ``sympy.physics.mechanics.LagrangesMethod(L, q, nonhol_coneqs=constraints)``
  (dynamicsymbols) → ``.form_lagranges_equations()`` → ``.rhs()``; then reduced
  to C in anholo's variables: q(t) → q and q̇ → Σ_j X_j v^j (the motions in C,
  parametrised by the free quasi-velocities of anholo's adapted frame X, with
  v^a = β^a(q) for the constrained ones) and projected on the adapted coframe θ,
  Γ^α = θ^α_A q̈^A + ∂_B θ^α_A q̇^A q̇^B; then the same ``tidy``.

The two routes run in turn (anholo, LagrangesMethod, anholo, …); the speed-up is the median
of the ratios of the i-th runs, so that a slow spell of the shared machine falls on both.
Both routes end with the same objects — Γ^α(q, v) simplified — and the natural
accelerations q̈(q, v) on C are simplified as well (timed apart, not part of the
totals) for a second size column.  Before anything is reported, Γ and q̈ of both
routes (simplified, and unsimplified where a simplification was cut off) are
compared at 2 random points of C with 50-digit arithmetic, and q̈ with the
hand-built coordinate multiplier method of ``tests/oracles.py``
(``constrained_coordinate_solution``); a mismatch aborts the script.

Run from the repository root::

    python benchmarks/bench_nonholonomic.py            # full run (median of 3 runs per timing)
    python benchmarks/bench_nonholonomic.py --quick --systems knife_edge,n_trailer_1
    python benchmarks/bench_nonholonomic.py --repeats 7 --systems chaplygin_sleigh,knife_edge

See benchmarks/README.md for what is measured and how to read the table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import mpmath
import numpy as np
import sympy as sp
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _common, also when imported from elsewhere

import anholo  # noqa: E402
from anholo.algebra import tidy  # noqa: E402
from anholo.examples import example_names, resolve_system  # noqa: E402
from anholo.system import System  # noqa: E402
from _common import (  # noqa: E402  (shared with bench_euler_lagrange.py)
    TimeLimitExceeded,
    Timing,
    _source_digest,
    count_ops_dag,
    evaluate,
    fmt_ops,
    machine_info,
    print_aligned,
    profile_call,
    random_values,
    run_limited,
    xreplace_dag,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_JSON = HERE / "results" / "nonholonomic.json"
N_TRAILERS = tuple(f"n_trailer_{k}" for k in range(1, 7))
REL_TOL = 1e-8  # between the symbolic routes (50-digit evaluation)
ABS_TOL = 1e-12  # where a value is exactly zero (e.g. θ̈ = 0 for the vertical rolling disk)
ORACLE_RTOL, ORACLE_ATOL = 1e-8, 1e-10  # against the oracle (a numpy solve in double precision)
EVAL_DIGITS = 50
PROFILE_THRESHOLD = 0.2  # seconds of anholo total (derive + simplify)
POINT_SEED = 2024


def load_oracles():
    """tests/oracles.py, imported by path (the tests directory is not a package)."""
    spec = importlib.util.spec_from_file_location("anholo_test_oracles", ROOT / "tests" / "oracles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_systems() -> list[str]:
    """The bundled examples with time-independent linear or affine constraints and no loads (forces, inputs,
    dissipation, holonomic constraints: the LagrangesMethod route is built from the Lagrangian and the
    constraints alone), then n_trailer_1 … n_trailer_6."""
    def linear(name):
        spec = resolve_system(name)
        return (bool(spec.constraints) and spec.time is None and not spec.has_loads and not spec.holonomic
                and System.from_spec(spec).kinematic_constraints().is_linear)

    return [name for name in example_names() if linear(name)] + list(N_TRAILERS)


# --------------------------------------------------------------------------------------
# Problems: the spec, and (untimed) what the LagrangesMethod route and the check need
# --------------------------------------------------------------------------------------
@dataclass
class Problem:
    """One constrained system, prepared outside the timings.

    ``frame`` (rows X_i), ``coframe`` (θ, v = θ q̇), ``velocities_on_C``
    (v^1..v^m, β^1..β^k) and ``u_on_C`` (q̇ = Σ_j X_j v^j on C) come from one anholo
    derivation made here: they define the variables of C that both routes use.
    """

    name: str
    spec: object
    n: int
    m: int
    frame: sp.ImmutableMatrix
    coframe: sp.ImmutableMatrix
    free_velocities: tuple
    velocities_on_C: tuple
    u_on_C: tuple
    lm_input: tuple  # (L(t), q(t), constraints(t), map back to plain symbols with q̇ → u_on_C)
    concrete: dict  # undefined function -> Lambda, for the numerical check only

    @property
    def title(self) -> str:
        return str(self.spec.name or self.name)


def prepare(name: str) -> Problem:
    spec = resolve_system(name)
    nh = System.from_spec(spec).nonholonomic()
    X, vC = nh.frame.vectors, nh.velocities_on_C
    n, m = nh.n, nh.m
    u_on_C = tuple(sp.Add(*[X[j, A] * vC[j] for j in range(n) if X[j, A] != 0 and vC[j] != 0]) for A in range(n))
    # LagrangesMethod input: plain symbols -> dynamicsymbols (as tests/oracles.py::lagranges_method_solution)
    t = dynamicsymbols._t
    qt = [dynamicsymbols(f"{s.name}_t") for s in spec.coordinates]
    to_t, back = {}, {}
    for s, u, f, uC in zip(spec.coordinates, spec.velocities, qt, u_on_C):
        to_t[s], to_t[u] = f, f.diff(t)
        back[f.diff(t)], back[f] = uC, s
    L_t = sp.sympify(spec.lagrangian).xreplace(to_t)
    cons_t = [sp.sympify(c).xreplace(to_t) for c in spec.constraints]
    # generic concrete stand-ins for undefined functions (crampin_mestdag_class: A1, A2), for evaluation only
    concrete = {}
    for k, func in enumerate(getattr(spec, "functions", ()) or ()):
        arity = {len(a.args) for a in sp.sympify(spec.lagrangian).atoms(func)}
        for c in spec.constraints:
            arity |= {len(a.args) for a in sp.sympify(c).atoms(func)}
        for row in (spec.frame or ()):
            for e in row:
                arity |= {len(a.args) for a in sp.sympify(e).atoms(func)}
        xs = sp.symbols(f"_x0:{max(arity or {1})}", real=True)
        s = sp.Add(*xs)
        concrete[func] = sp.Lambda(xs, k + 2 + sp.cos(s) + s**2 / (k + 3))
    return Problem(name=name, spec=spec, n=n, m=m, frame=X, coframe=nh.frame.coframe,
                   free_velocities=tuple(nh.free_velocities), velocities_on_C=tuple(vC), u_on_C=u_on_C,
                   lm_input=(L_t, qt, cons_t, back), concrete=concrete)


# --------------------------------------------------------------------------------------
# Routes.  Each fills ``steps`` (seconds) and ``out`` (expressions) as it goes, so that
# what was done before a time limit cut it off is kept.
# --------------------------------------------------------------------------------------
def route_anholo(problem: Problem, steps: dict, out: dict) -> None:
    t0 = time.perf_counter()
    system = System.from_spec(problem.spec)
    t1 = time.perf_counter()
    nh = system.nonholonomic()  # adapted frame; L in its quasi-velocities
    t2 = time.perf_counter()
    fld = nh.field()
    t3 = time.perf_counter()
    steps.update({"from_spec": t1 - t0, "nonholonomic": t2 - t1, "field": t3 - t2, "derive": t3 - t0})
    out["field"] = fld
    out["gamma_raw"] = list(fld.accelerations)
    gamma = [tidy(g) for g in fld.accelerations]
    t4 = time.perf_counter()
    steps.update({"simplify": t4 - t3, "total": t4 - t0})
    out["gamma"] = gamma


def route_anholo_qdd(fld, steps: dict, out: dict) -> None:
    """q̈ on C in (q, v^α) from a field already derived, then ``tidy`` (not part of the anholo total)."""
    t0 = time.perf_counter()
    nat = fld.natural_accelerations(natural=False)
    t1 = time.perf_counter()
    steps["natural_accelerations"] = t1 - t0
    out["qdd_raw"] = [nat[q] for q in fld.system.frame.chart.coordinates]
    qdd = [tidy(e) for e in out["qdd_raw"]]
    t2 = time.perf_counter()
    steps.update({"simplify": t2 - t1, "total": t2 - t0})
    out["qdd"] = qdd


def route_lagranges_method(problem: Problem, steps: dict, out: dict) -> None:
    L_t, qt, cons_t, back = problem.lm_input
    n, m = problem.n, problem.m
    q, th, uC = problem.spec.coordinates, problem.coframe, problem.u_on_C
    t0 = time.perf_counter()
    lm = LagrangesMethod(L_t, qt, nonhol_coneqs=cons_t)
    lm.form_lagranges_equations()
    t1 = time.perf_counter()
    rhs = lm.rhs()  # (q̇, q̈, λ): LUsolve of mass_matrix_full (2n + k rows)
    t2 = time.perf_counter()
    steps.update({"form_lagranges_equations": t1 - t0, "rhs": t2 - t1, "form_rhs": t2 - t0})
    # reduce to C: q(t) -> q, q̇ -> Σ_j X_j v^j (with v^a = β^a), in one memoised pass
    qdd = xreplace_dag(list(rhs[n:2 * n]), back)
    out["qdd_raw"] = qdd
    # Γ^α = dv^α/dt = θ^α_A q̈^A + ∂_B θ^α_A q̇^A q̇^B on C
    gamma = []
    for al in range(m):
        quad = sp.Add(*[th[al, A].diff(q[B]) * uC[A] * uC[B] for A in range(n) for B in range(n)
                        if not th[al, A].is_number and uC[A] != 0 and uC[B] != 0])
        gamma.append(sp.Add(*[th[al, A] * qdd[A] for A in range(n) if th[al, A] != 0]) + quad)
    t3 = time.perf_counter()
    steps["reduce"] = t3 - t2
    out["gamma_raw"] = gamma
    gamma = [tidy(g) for g in gamma]
    t4 = time.perf_counter()
    steps.update({"simplify": t4 - t3, "reduce_simplify": t4 - t2, "total": t4 - t0})
    out["gamma"] = gamma


def route_lm_qdd(qdd_raw: list, steps: dict, out: dict) -> None:
    """``tidy`` of LagrangesMethod's q̈ reduced to C (not part of the LM total)."""
    t0 = time.perf_counter()
    qdd = [tidy(e) for e in qdd_raw]
    steps["simplify"] = steps["total"] = time.perf_counter() - t0
    out["qdd"] = qdd


# --------------------------------------------------------------------------------------
# Timing: median of repeated runs; a run cut off by the time limit keeps its partial steps
# --------------------------------------------------------------------------------------
@dataclass
class RouteTiming(Timing):
    partial: dict | None = None  # steps completed by the run that hit the time limit
    outputs: dict = field(default_factory=dict)  # expressions of the last (possibly cut-off) run
    not_run: str | None = None  # why the route was not attempted


def time_stepped(route, repeats: int, limit: float) -> RouteTiming:
    """``repeats`` runs of one route (stopped at its first time-out or failure)."""
    return time_alternating([route], repeats, limit)[0]


def time_alternating(routes: list, repeats: int, limit: float) -> list:
    """Several routes run in turn (A, B, A, B, …), each ``repeats`` times: a slow spell of the
    machine then falls on both, and the ratio of the i-th runs (:func:`paired_speedup`) is much less
    noisy than the ratio of medians taken minutes apart.  A route that times out or fails stops; the
    others go on."""
    timings = [RouteTiming() for _ in routes]
    for _ in range(repeats):
        for route, timing in zip(routes, timings):
            if timing.timed_out or timing.error:
                continue
            steps, out = {}, {}
            try:
                run_limited(lambda: route(steps, out), limit)
            except TimeLimitExceeded:
                timing.timed_out, timing.partial, timing.outputs = True, steps, out
                continue
            except Exception as exc:  # e.g. LagrangesMethod refusing the input: reported, not fatal
                timing.error, timing.outputs = f"{type(exc).__name__}: {exc}", out
                continue
            timing.runs.append(steps)
            timing.outputs = out
    return timings


def paired_speedup(fast: RouteTiming, slow: RouteTiming) -> float | None:
    """Median over the alternating runs of ``slow_i / fast_i`` (total times)."""
    if fast.timed_out or slow.timed_out or fast.error or slow.error or not fast.runs or not slow.runs:
        return None
    return statistics.median(b["total"] / a["total"] for a, b in zip(fast.runs, slow.runs) if a["total"] > 0)


def step_value(t: RouteTiming, step: str):
    """Median of a step, or its value in the cut-off run (None if that run did not reach it)."""
    if t.runs and not t.timed_out and not t.error:
        return statistics.median(r[step] for r in t.runs)
    if t.partial is not None:
        return t.partial.get(step)
    return None


def cell(t: RouteTiming, step: str, limit: float, before: str | None = None) -> str:
    """Table cell of a step: seconds, or ``>x`` when the limit cut it off (x = limit − earlier steps)."""
    if t.not_run:
        return "not run"
    if t.error:
        return "error"
    value = step_value(t, step)
    if value is not None:
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    if t.timed_out:
        done = step_value(t, before) if before else None
        if done is not None:
            return f">{limit - done:.0f}"
        return f">{limit:g}"
    return "-"


# --------------------------------------------------------------------------------------
# Correctness check
# --------------------------------------------------------------------------------------
def concretize(problem: Problem, exprs):
    if not problem.concrete:
        return [sp.sympify(e) for e in exprs]
    return [sp.sympify(e).subs(problem.concrete).doit() for e in exprs]


def points_on_C(problem: Problem, count: int = 2) -> list[dict]:
    """Random values of q, the free quasi-velocities v^α and the parameters: points of C."""
    spec = problem.spec
    symbols = set(spec.coordinates) | set(problem.free_velocities) | set(spec.parameters)
    return random_values(symbols, count, POINT_SEED)


def _close(a, b, rtol, atol) -> bool:
    return abs(a - b) <= max(rtol * max(abs(a), abs(b)), atol)


def verify(problem: Problem, candidates: dict, oracle) -> dict:
    """Assert that every available version of Γ and q̈ agrees, and q̈ with the oracle.

    ``candidates`` maps ``("gamma" | "qdd", label)`` to a list of expressions in
    (q, v^α, parameters).  The reference for Γ is the first candidate, for q̈ the
    oracle (the coordinate multiplier method, solved numerically at the point,
    with q̇ = Σ_j X_j v^j on C; the constraints are checked to vanish there).
    Returns the largest deviations found.
    """
    spec = problem.spec
    L, *cons = concretize(problem, [spec.lagrangian, *spec.constraints])
    u_on_C = concretize(problem, problem.u_on_C)
    th = problem.coframe
    cand = {k: concretize(problem, v) for k, v in candidates.items()}
    worst = {"max_relative_deviation": 0.0, "max_abs_deviation_where_zero": 0.0,
             "max_relative_deviation_oracle": 0.0, "max_abs_deviation_oracle_where_zero": 0.0}
    gamma_keys = [k for k in cand if k[0] == "gamma"]
    qdd_keys = [k for k in cand if k[0] == "qdd"]
    with mpmath.workdps(EVAL_DIGITS):
        for pt in points_on_C(problem):
            # the state (q, q̇) on C and the oracle's q̈ there
            u_val = [evaluate(e, pt) if e != 0 else mpmath.mpf(0) for e in u_on_C]
            state = {s: sp.Float(pt[s], 30) for s in pt}
            state.update({u: sp.Float(val, 30) for u, val in zip(spec.velocities, u_val)})
            for c in cons:
                residual = abs(complex(c.xreplace(state).evalf(30)))
                assert residual < 1e-20, f"{problem.name}: the point is not on C (constraint {c} = {residual})"
            qdd_o, _lam = oracle.constrained_coordinate_solution(L, spec.coordinates, spec.velocities, cons, state)
            # oracle Γ^α = θ^α_A q̈^A + ∂_B θ^α_A q̇^A q̇^B at the point
            th_c = concretize(problem, list(th))
            thv = [[evaluate(th_c[al * problem.n + A], pt) for A in range(problem.n)] for al in range(problem.m)]
            dth = [[[evaluate(sp.diff(th_c[al * problem.n + A], q), pt) for q in spec.coordinates]
                    for A in range(problem.n)] for al in range(problem.m)]
            gamma_o = [sum(thv[al][A] * qdd_o[A] for A in range(problem.n))
                       + sum(dth[al][A][B] * u_val[A] * u_val[B] for A in range(problem.n) for B in range(problem.n))
                       for al in range(problem.m)]
            values = {k: [evaluate(e, pt) for e in v] for k, v in cand.items()}
            for kind, keys, ref_oracle in (("Γ", gamma_keys, gamma_o), ("q̈", qdd_keys, list(qdd_o))):
                for k in keys:
                    for i, (a, b) in enumerate(zip(ref_oracle, values[k])):
                        a = mpmath.mpf(float(a)) if not isinstance(a, mpmath.mpf) else a
                        assert _close(a, b, ORACLE_RTOL, ORACLE_ATOL), (
                            f"{problem.name}: {kind}[{i}] of {k[1]} ({mpmath.nstr(b, 15)}) differs from the "
                            f"oracle ({mpmath.nstr(a, 15)})")
                        key, dev = (("max_relative_deviation_oracle", float(abs(a - b) / abs(a))) if abs(a) > ORACLE_ATOL
                                    else ("max_abs_deviation_oracle_where_zero", float(abs(a - b))))
                        worst[key] = max(worst[key], dev)
                if len(keys) > 1:  # the symbolic versions among themselves, at 50 digits
                    ref = values[keys[0]]
                    for k in keys[1:]:
                        for i, (a, b) in enumerate(zip(ref, values[k])):
                            assert _close(a, b, REL_TOL, ABS_TOL), (
                                f"{problem.name}: {kind}[{i}] differs between {keys[0][1]} ({mpmath.nstr(a, 15)}) "
                                f"and {k[1]} ({mpmath.nstr(b, 15)})")
                            # a reference value within ABS_TOL of 0 is a zero (an unsimplified
                            # expression evaluates to ~1e-50 where the simplified one gives 0)
                            key, dev = (("max_relative_deviation", float(abs(a - b) / abs(a))) if abs(a) > ABS_TOL
                                        else ("max_abs_deviation_where_zero", float(abs(a - b))))
                            worst[key] = max(worst[key], dev)
    return worst


# --------------------------------------------------------------------------------------
# Profiling
# --------------------------------------------------------------------------------------
# (label, file, function, caller file or None): candidate hot spots, reported with their share
WATCH = (
    ("System.from_spec (Lagrangian in the file's frame)", "anholo/system.py", "from_spec", None),
    ("System.nonholonomic (adapted frame + L in it)", "anholo/system.py", "nonholonomic", None),
    ("  LinearConstraints.adapted_frame", "anholo/geometry/constraints.py", "adapted_frame", None),
    ("  Lagrangian.in_frame", "anholo/dynamics/lagrangian.py", "in_frame", None),
    ("NonholonomicSystem.field (Γ_nh)", "anholo/dynamics/nonholonomic.py", "_field", None),
    ("  Frame.structure (structure functions)", "anholo/geometry/frame.py", "structure", None),
    ("  solve_square", "anholo/_algebra.py", "solve_square", None),
    ("Frame.__post_init__ (frame construction)", "anholo/geometry/frame.py", "__post_init__", None),
    ("  determinant", "anholo/_algebra.py", "determinant", None),
    ("  invert", "anholo/_algebra.py", "invert", None),
    ("Lagrangian.__post_init__", "anholo/dynamics/lagrangian.py", "__post_init__", None),
    ("  TangentBundle.to_quasi", "anholo/geometry/tangent.py", "to_quasi", None),
    ("Frame.apply (X_i(f))", "anholo/geometry/frame.py", "apply", None),
    ("tidy, all calls", "anholo/_algebra.py", "tidy", None),
    ("tidy called by the benchmark (simplify step)", "anholo/_algebra.py", "tidy", "bench_nonholonomic.py"),
    ("  _pythagorean_reduce", "anholo/_algebra.py", "_pythagorean_reduce", None),
    ("reduce_if_cheap (cancel)", "anholo/_algebra.py", "reduce_if_cheap", None),
    ("random-point zero tests: numerically_zero", "anholo/_algebra.py", "numerically_zero", None),
    ("random-point evaluation: numeric_value", "anholo/_algebra.py", "numeric_value", None),
    ("  generic_rank", "anholo/_algebra.py", "generic_rank", None),
    ("  vanishes", "anholo/_algebra.py", "vanishes", None),
    ("sympy evalf", "sympy/core/evalf.py", "evalf", None),
    ("sympy cancel", "sympy/polys/polytools.py", "cancel", None),
)


def profile_anholo(problem: Problem, limit: float, top: int = 15) -> dict:
    """One anholo run (derive + simplify) under cProfile; top functions, callers of the top 8, WATCH."""
    return profile_call(lambda: route_anholo(problem, {}, {}), limit, top, callers_of=8, watch=WATCH)


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------
def ops_cell(ops: dict, key: str) -> str:
    if ops.get(key) is not None:
        return fmt_ops(ops[key])
    if ops.get(key + "_raw") is not None:
        return fmt_ops(ops[key + "_raw"]) + "*"
    return "-"


def speedup(anholo_total, lm_total, limit: float) -> str:
    if anholo_total is not None and lm_total is not None:
        return f"{lm_total / anholo_total:.1f}"
    if anholo_total is not None:
        return f">{limit / anholo_total:.0f}"
    if lm_total is not None:
        return f"<{lm_total / limit:.2f}"
    return "-"


HEADERS = ["system", "n", "m", "anholo derive [s]", "anholo simplify [s]", "anholo total [s]",
           "LM form+rhs [s]", "LM reduce+simplify [s]", "LM total [s]", "speed-up",
           "ops Γ anholo", "ops Γ LM", "ops q̈ anholo", "ops q̈ LM"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run per timing instead of the median of 3")
    parser.add_argument("--repeats", type=int, default=None, metavar="N",
                        help="median of N runs per timing (default 3; more for the small examples, whose "
                             "times of a few milliseconds are noise-dominated)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH",
                        help=f"where to write the results (default {DEFAULT_JSON.relative_to(ROOT)})")
    parser.add_argument("--time-limit", type=float, default=120.0, metavar="SECONDS",
                        help="a run longer than this is abandoned and the route reported as too slow (default 120)")
    parser.add_argument("--systems", default=None, metavar="A,B,C",
                        help="comma-separated system names (default: the constrained examples and n_trailer_1..6)")
    parser.add_argument("--no-profile", action="store_true",
                        help=f"skip the cProfile run made when anholo takes more than {PROFILE_THRESHOLD} s")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else (args.repeats or 3)
    if repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    limit = args.time_limit
    names = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems else default_systems()
    source_digest = _source_digest()
    load_at_start = os.getloadavg()
    oracle = load_oracles()
    started = time.perf_counter()
    # git commit and working-tree state when the measured modules were imported (another
    # engineer may commit while the benchmark runs; the source digest identifies the code)
    machine = machine_info(source_digest, load_at_start)

    print(f"anholo {anholo.__version__}, sympy {sp.__version__}, Python {platform.python_version()}, "
          f"{platform.platform()}; {'1 run' if repeats == 1 else f'median of {repeats} runs'}, "
          f"time limit {limit:g} s per run; load average {load_at_start[0]:.2f} on {os.cpu_count()} CPUs",
          flush=True)

    rows, records = [], []
    for name in names:
        problem = prepare(name)
        if not problem.spec.constraints:
            raise SystemExit(f"{name} has no constraints")
        if problem.spec.has_loads or problem.spec.holonomic:
            raise SystemExit(f"{name} has forces, inputs, dissipation or holonomic constraints: this benchmark "
                             "compares the unforced equations (LagrangesMethod from L and the constraints alone)")
        print(f"\n[{name}] {problem.title} (n = {problem.n}, m = {problem.m}; "
              f"load {os.getloadavg()[0]:.2f})", flush=True)

        t_an, t_lm = time_alternating([lambda s, o: route_anholo(problem, s, o),
                                       lambda s, o: route_lagranges_method(problem, s, o)], repeats, limit)
        fld = t_an.outputs.get("field")
        if fld is not None:
            assert fld.system.frame.vectors == problem.frame, f"{name}: anholo's adapted frame changed between runs"
        if "gamma" in t_an.outputs:
            t_an_q = time_stepped(lambda s, o: route_anholo_qdd(fld, s, o), repeats, limit)
        else:
            t_an_q = RouteTiming(not_run="Γ not simplified within the limit")
            if fld is not None:  # the unsimplified q̈, for the check only
                nat = fld.natural_accelerations(natural=False)
                t_an_q.outputs["qdd_raw"] = [nat[q] for q in problem.spec.coordinates]

        if "gamma" in t_lm.outputs:
            qdd_raw = t_lm.outputs["qdd_raw"]
            t_lm_q = time_stepped(lambda s, o: route_lm_qdd(qdd_raw, s, o), repeats, limit)
        else:
            t_lm_q = RouteTiming(not_run="Γ not simplified within the limit")
        t_lm_q.outputs.setdefault("qdd_raw", t_lm.outputs.get("qdd_raw"))

        timings = {"anholo": t_an, "anholo_qdd": t_an_q, "lagranges_method": t_lm, "lagranges_method_qdd": t_lm_q}
        for label, t in timings.items():
            if t.not_run:
                status = f"not run ({t.not_run})"
            elif t.error:
                status = t.error
            else:
                steps = t.partial if t.timed_out else {k: step_value(t, k) for k in t.runs[0]}
                status = ", ".join(f"{k} {v:.3f}" for k, v in steps.items())
                if t.timed_out:
                    status = f"TIMED OUT after {limit:g} s (completed: {status or 'nothing'})"
            print(f"  {label:21s} {status}", flush=True)

        # correctness: every version of Γ and q̈ that exists, against each other and the oracle
        candidates = {}
        for kind, route_t, qdd_t, label in (("anholo", t_an, t_an_q, "anholo"),
                                            ("lm", t_lm, t_lm_q, "LagrangesMethod")):
            for key, source in (("gamma", route_t), ("qdd", qdd_t)):
                if source.outputs.get(key) is not None:
                    candidates[(key, label)] = source.outputs[key]
                if source.outputs.get(key + "_raw") is not None:
                    candidates[(key, label + " unsimplified")] = source.outputs[key + "_raw"]
        deviation = verify(problem, candidates, oracle)
        checked = sorted({label for _, label in candidates})
        print(f"  verified at 2 random points of C against the oracle and each other: {', '.join(checked)} "
              f"(rel. dev. {deviation['max_relative_deviation']:.1e} between routes, "
              f"{deviation['max_relative_deviation_oracle']:.1e} to the oracle)", flush=True)

        ops = {}
        for key, source in (("anholo_gamma", t_an), ("anholo_qdd", t_an_q), ("lm_gamma", t_lm),
                            ("lm_qdd", t_lm_q)):
            what = key.split("_", 1)[1]
            for suffix in ("", "_raw"):
                exprs = source.outputs.get(what + suffix)
                if exprs is not None:
                    ops[key + suffix] = count_ops_dag(exprs)
                    if ops[key + suffix] < 50_000:  # the memoised count is sympy.count_ops: check where cheap
                        assert ops[key + suffix] == sp.count_ops(exprs), (name, key + suffix)

        profile = None
        an_total = step_value(t_an, "total") if not t_an.timed_out else None
        slow = t_an.timed_out or (an_total or 0) > PROFILE_THRESHOLD
        if slow and not args.no_profile:
            profile_limit = limit if t_an.timed_out else max(limit, 5 * an_total)
            profile = profile_anholo(problem, profile_limit)
            print(f"  cProfile of one anholo run ({'complete' if profile['complete'] else 'cut off at the time limit'},"
                  f" {profile['profiled_seconds']:.1f} s profiled), anholo functions by cumulative time:")
            for r in profile["anholo_by_cumtime"]:
                print(f"    {r['cumtime']:8.2f} s  {r['calls']:>8}  {r['function']}")
                for c in r.get("callers", [])[:2]:
                    print(f"               {c['cumtime']:8.2f} s from {c['function']}")
            print("  all functions by own time:")
            for r in profile["all_by_tottime"]:
                print(f"    {r['tottime']:8.2f} s  {r['calls']:>8}  {r['function']}")
            print("  watched functions (cumulative time, share of the profiled run; shares overlap):")
            for r in profile["watched"]:
                print(f"    {r['cumtime']:8.2f} s  {100 * (r['share'] or 0):5.1f} %  {r['calls']:>8}  {r['label']}")

        lm_total = step_value(t_lm, "total") if not t_lm.timed_out else None
        paired = paired_speedup(t_an, t_lm)
        rows.append([
            name, str(problem.n), str(problem.m),
            cell(t_an, "derive", limit), cell(t_an, "simplify", limit, before="derive"), cell(t_an, "total", limit),
            cell(t_lm, "form_rhs", limit), cell(t_lm, "reduce_simplify", limit, before="form_rhs"),
            cell(t_lm, "total", limit),
            (f"{paired:.1f}" if paired is not None else speedup(an_total, lm_total, limit))
            if not (t_an.error or t_lm.error) else "-",
            ops_cell(ops, "anholo_gamma"), ops_cell(ops, "lm_gamma"),
            ops_cell(ops, "anholo_qdd"), ops_cell(ops, "lm_qdd"),
        ])
        records.append({
            "system": name,
            "title": problem.title,
            "n": problem.n,
            "m": problem.m,
            "adapted_frame": str(problem.frame.tolist()),
            "velocities_on_C": [str(v) for v in problem.velocities_on_C],
            "seconds": {
                "anholo_derive": step_value(t_an, "derive"),
                "anholo_simplify": None if t_an.timed_out else step_value(t_an, "simplify"),
                "anholo_total": an_total,
                "anholo_qdd_simplify": None if t_an_q.timed_out else step_value(t_an_q, "total"),
                "lagranges_method_form_rhs": step_value(t_lm, "form_rhs"),
                "lagranges_method_reduce_simplify": None if t_lm.timed_out else step_value(t_lm, "reduce_simplify"),
                "lagranges_method_total": lm_total,
                "lagranges_method_qdd_simplify": None if t_lm_q.timed_out else step_value(t_lm_q, "total"),
            },
            "speedup_paired_median": paired,
            "table_row": dict(zip(HEADERS, rows[-1])),
            "steps_median_seconds": {k: ({s: step_value(t, s) for s in t.runs[0]} if t.runs and not t.timed_out
                                         else {}) for k, t in timings.items()},
            "runs": {k: t.runs for k, t in timings.items()},
            "timed_out": {k: t.timed_out for k, t in timings.items()},
            "steps_before_time_limit": {k: t.partial for k, t in timings.items() if t.timed_out},
            "not_run": {k: t.not_run for k, t in timings.items() if t.not_run},
            "errors": {k: t.error for k, t in timings.items() if t.error},
            "count_ops": ops,
            "verified": [f"{k[0]}: {k[1]}" for k in candidates] + ["qdd: oracle (coordinate multiplier method)"],
            **deviation,
            "anholo_profile": profile,
        })

    print()
    print_aligned([HEADERS] + rows)
    print("\n* unsimplified size (the simplification did not finish within the time limit)")
    at_end = machine_info(source_digest, load_at_start)
    machine["anholo_source_changed_during_run"] = at_end["anholo_source_changed_during_run"]
    if at_end["git_commit"] != machine["git_commit"]:
        machine["git_commit_at_end"] = at_end["git_commit"]
    machine["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    machine["wall_seconds"] = round(time.perf_counter() - started, 1)
    payload = {
        "benchmark": "nonholonomic",
        "machine": machine,
        "settings": {"repeats": repeats, "statistic": "median", "time_limit_seconds": limit,
                     "cache_cleared_between_runs": True, "verification_rel_tol": REL_TOL,
                     "verification_abs_tol": ABS_TOL, "oracle_rtol": ORACLE_RTOL, "oracle_atol": ORACLE_ATOL,
                     "verification_points": 2, "profile_threshold_seconds": PROFILE_THRESHOLD},
        "columns": {
            "anholo_derive": "System.from_spec(spec) + .nonholonomic() + .field()",
            "anholo_simplify": "anholo.algebra.tidy of each Γ^α = field.accelerations",
            "anholo_total": "anholo_derive + anholo_simplify",
            "anholo_qdd_simplify": "field.natural_accelerations(natural=False) + tidy (not in the total)",
            "lagranges_method_form_rhs": "LagrangesMethod(L, q, nonhol_coneqs=constraints)"
                                         ".form_lagranges_equations() + .rhs()",
            "lagranges_method_reduce_simplify": "q(t) -> q, q̇ -> Σ_j X_j v^j on C (anholo's adapted frame), "
                                                "Γ^α = θ^α_A q̈^A + ∂_B θ^α_A q̇^A q̇^B, then tidy of each Γ^α",
            "lagranges_method_total": "lagranges_method_form_rhs + lagranges_method_reduce_simplify",
            "lagranges_method_qdd_simplify": "tidy of LagrangesMethod's q̈ on C in (q, v^α) (not in the total)",
            "speed_up": "LagrangesMethod total / anholo total",
            "count_ops": "sympy.count_ops of the simplified Γ^α and q̈^A (summed over components); "
                         "*_raw: before simplification",
        },
        "results": records,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

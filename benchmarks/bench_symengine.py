#!/usr/bin/env python
"""Benchmark: sympy against symengine on anholo's own hot operations (measure before adopting).

Nothing here wires symengine into anholo: the script times the operations anholo's
derivations spend their time in, once in sympy and once in symengine (the C++ library
behind ``python -m pip install symengine``), with the conversion both ways timed
separately, and checks at a random numerical point that both give the same values.

Data (built by anholo, then timed):

* the **Whipple bicycle** Lagrangian (``--bicycle``, default the bundled
  ``src/anholo/examples/whipple_bicycle.toml``: a system file written by ``anholo.from_mechanics``
  from sympy's ``test_kane3.py`` model, tools/make_whipple_bicycle.py; 26 kB of text): parse the ``lagrangian`` string (anholo's safe parser vs ``symengine.sympify``),
  the 36 second derivatives ``∂²L/∂q̇^A∂q̇^B``, the gradient ``∂L/∂q^A``, and ``cse`` of both;
* the **n-trailer**, n = 3, 4, 5 (``anholo.examples.n_trailer``): differentiation of the
  Lagrangian along the frame (``X_i(L) = X_i^A ∂L/∂q^A`` and ``∂L/∂v``), substitution of the
  constrained velocities (``xreplace`` of ``L`` onto C), the matrix product ``X · θ`` of the
  frame and its coframe, ``cse`` of the implicit form ``M, F`` of Γ_nh, and numerical
  evaluation of ``F`` at a point (substitution of numbers and ``evalf``).

Every timing is the median of ``--repeats`` runs (default 5) with sympy's cache cleared
before each sympy run (anholo calls these operations on fresh expressions).  Import times
are whole processes (``python -c "import X"`` minus ``python -c pass``), median of 5.

Run from the repository root::

    python benchmarks/bench_symengine.py              # about 3 min
    python benchmarks/bench_symengine.py --quick      # n-trailer 3 only, 3 repeats

Results: a printed table and ``benchmarks/results/symengine.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import symengine as se  # noqa: E402
import sympy as sp  # noqa: E402
from sympy.core.cache import clear_cache  # noqa: E402

from anholo.algebra.differentiation import diff_dag  # noqa: E402
from anholo.examples import n_trailer  # noqa: E402
from anholo.parsing import parse_expression  # noqa: E402
from anholo.system import System  # noqa: E402

REPEATS = 5


def timed(fn, sympy_side: bool):
    """(median seconds, result) over REPEATS runs."""
    times, out = [], None
    for _ in range(REPEATS):
        if sympy_side:
            clear_cache()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def to_se(exprs):
    return [se.sympify(e) for e in exprs]


def to_sp(exprs, names):
    """symengine → sympy, with anholo's symbols (and their assumptions) restored by name."""
    out = [e._sympy_() for e in exprs]
    sub = {sp.Symbol(k): v for k, v in names.items()}
    return [e.xreplace(sub) for e in out]


def agree(a_sp, b_se, symbols, rng) -> float:
    """Max |a − b| (relative) of the two lists at a random point."""
    pt = {s: sp.Float(rng.uniform(0.3, 1.2), 30) for s in symbols}
    pt_se = {se.Symbol(s.name): se.RealDouble(float(v)) for s, v in pt.items()}
    worst = 0.0
    for a, b in zip(a_sp, b_se):
        va = float(sp.sympify(a).xreplace(pt).evalf(30))
        vb = float(se.sympify(b).xreplace(pt_se).n(real=True))
        worst = max(worst, abs(va - vb) / max(1.0, abs(va)))
    return worst


ROWS: list = []


def row(data: str, op: str, t_sp: float, t_se: float, conv_in: float = 0.0, conv_out: float = 0.0,
        check: float | None = None, note: str = ""):
    r = {"data": data, "operation": op, "sympy_s": t_sp, "symengine_s": t_se, "to_symengine_s": conv_in,
         "to_sympy_s": conv_out, "speedup": t_sp / t_se if t_se else None,
         "speedup_incl_conversion": t_sp / (t_se + conv_in + conv_out) if t_se + conv_in + conv_out else None,
         "max_rel_difference": check, "note": note}
    ROWS.append(r)
    chk = "" if check is None else f"  diff {check:.0e}"
    print(f"  {data:12s} {op:42s} sympy {t_sp * 1e3:10.2f} ms  symengine {t_se * 1e3:9.3f} ms  "
          f"({r['speedup']:7.1f}x; with conversion {conv_in * 1e3:8.2f}+{conv_out * 1e3:8.2f} ms: "
          f"{r['speedup_incl_conversion']:6.1f}x){chk} {note}", flush=True)


# --- the bicycle ---------------------------------------------------------------------------------
def bicycle(path: Path, rng):
    spec = tomllib.loads(path.read_text())
    text = spec["lagrangian"]
    coords = spec["coordinates"]
    names = {c: sp.Symbol(c, real=True) for c in coords}
    names |= {c + "_dot": sp.Symbol(c + "_dot", real=True) for c in coords}
    names |= {p: sp.Symbol(p, real=True) for p in spec["parameters"]}
    t_sp, L = timed(lambda: parse_expression(text, names, where="lagrangian"), True)
    t_se, Lse = timed(lambda: se.sympify(text), False)
    syms = sorted(L.free_symbols, key=lambda s: s.name)
    row("bicycle", f"parse lagrangian ({len(text) // 1000} kB text)", t_sp, t_se,
        check=agree([L], [Lse], syms, rng),
        note="symengine: ^ is power; decimals would become floats, symbols lose real=True")
    q = [names[c] for c in coords]
    u = [names[c + "_dot"] for c in coords]
    qs, us = [se.Symbol(c) for c in coords], [se.Symbol(c + "_dot") for c in coords]
    t_in, (Lse,) = timed(lambda: to_se([L]), False)

    def hess_sp():
        g = [L.diff(ui) for ui in u]
        return [g[i].diff(u[j]) for i in range(len(u)) for j in range(i, len(u))]

    def hess_se():
        g = [Lse.diff(ui) for ui in us]
        return [g[i].diff(us[j]) for i in range(len(us)) for j in range(i, len(us))]

    t_sp, H = timed(hess_sp, True)
    t_se, Hse = timed(hess_se, False)
    t_out, _ = timed(lambda: to_sp(Hse, names), False)
    row("bicycle", "∂²L/∂q̇∂q̇ (36 entries)", t_sp, t_se, t_in, t_out, agree(H, Hse, syms, rng))
    t_sp, G = timed(lambda: [L.diff(qi) for qi in q], True)
    t_dag, G2 = timed(lambda: [diff_dag(L, qi) for qi in q], True)
    t_se, Gse = timed(lambda: [Lse.diff(qi) for qi in qs], False)
    t_out, _ = timed(lambda: to_sp(Gse, names), False)
    row("bicycle", "∂L/∂q (8 entries)", t_sp, t_se, t_in, t_out, agree(G, Gse, syms, rng))
    row("bicycle", "∂L/∂q, sympy column: anholo diff_dag", t_dag, t_se, t_in, t_out, agree(G2, Gse, syms, rng))
    t_in2, HGse = timed(lambda: to_se(H + G), False)
    t_sp, (r_sp, e_sp) = timed(lambda: sp.cse(H + G), True)
    t_se, (r_se, e_se) = timed(lambda: se.cse(HGse), False)
    t_out, _ = timed(lambda: to_sp([e for _, e in r_se] + list(e_se), names), False)
    row("bicycle", f"cse of ∂²L/∂q̇∂q̇ and ∂L/∂q ({len(r_sp)} | {len(r_se)} subexpr.)", t_sp, t_se, t_in2, t_out)


# --- the n-trailer -------------------------------------------------------------------------------
def trailer(n: int, rng):
    nh = System.from_spec(n_trailer(n)).nonholonomic()
    form = nh.implicit_form(multipliers=False)
    L = nh.lagrangian.expr
    X, th = nh.frame.vectors, nh.frame.coframe
    q = list(nh.frame.chart.coordinates)
    v = list(nh.bundle.quasi_velocities)
    nat = list(nh.frame.chart.velocities)
    # the natural velocities on C as functions of the free quasi-velocities: u^A = X_j^A v^j
    on_C = {u: sp.Add(*[X[j, A] * nh.velocities_on_C[j] for j in range(nh.n)]) for A, u in enumerate(nat)}
    data = f"n-trailer {n}"
    names = {s.name: s for s in sp.Tuple(L, *X, *th, *form.expressions(), *on_C.values()).free_symbols}
    syms = sorted(names.values(), key=lambda s: s.name)
    qs = [se.Symbol(s.name) for s in q]
    t_in, (Lse, *Xse) = timed(lambda: to_se([L, *X]), False)

    def frame_diff_sp():
        dL = [L.diff(qa) for qa in q]
        return [sp.Add(*[X[i, A] * dL[A] for A in range(len(q)) if X[i, A] != 0]) for i in range(len(q))]

    Xm = [[Xse[i * len(q) + A] for A in range(len(q))] for i in range(len(q))]

    def frame_diff_se():
        dL = [Lse.diff(qa) for qa in qs]
        return [se.Add(*[Xm[i][A] * dL[A] for A in range(len(q))]) for i in range(len(q))]

    def frame_diff_dag():
        dL = [diff_dag(L, qa) for qa in q]
        return [sp.Add(*[X[i, A] * dL[A] for A in range(len(q)) if X[i, A] != 0]) for i in range(len(q))]

    t_sp, D = timed(frame_diff_sp, True)
    t_dag, D2 = timed(frame_diff_dag, True)
    t_se, Dse = timed(frame_diff_se, False)
    t_out, _ = timed(lambda: to_sp(Dse, names), False)
    row(data, "X_i(L) = X_i^A ∂L/∂q^A (all i)", t_sp, t_se, t_in, t_out, agree(D, Dse, syms, rng))
    row(data, "X_i(L), sympy column: anholo diff_dag", t_dag, t_se, t_in, t_out, agree(D2, Dse, syms, rng))

    sub_se = {se.Symbol(k.name): se.sympify(e) for k, e in on_C.items()}
    t_in2, _ = timed(lambda: {se.Symbol(k.name): se.sympify(e) for k, e in on_C.items()}, False)
    t_sp, Lc = timed(lambda: L.xreplace(on_C), True)
    t_se, Lcse = timed(lambda: Lse.xreplace(sub_se), False)
    t_out, _ = timed(lambda: to_sp([Lcse], names), False)
    row(data, "L|_C: xreplace of q̇ by X_j v^j", t_sp, t_se, t_in + t_in2, t_out, agree([Lc], [Lcse], syms, rng))

    vfree = [se.Symbol(s.name) for s in v[:nh.m]]
    t_sp, P = timed(lambda: [Lc.diff(s).diff(t) for s in v[:nh.m] for t in v[:nh.m]], True)
    t_se, Pse = timed(lambda: [Lcse.diff(s).diff(t) for s in vfree for t in vfree], False)
    t_out, _ = timed(lambda: to_sp(Pse, names), False)
    row(data, "g_αβ = ∂²L_c/∂v^α∂v^β", t_sp, t_se, 0.0, t_out, agree(P, Pse, syms, rng))

    Xsp, thsp = sp.Matrix(X), sp.Matrix(th)
    t_in3, (Xd, thd) = timed(lambda: (se.DenseMatrix(Xsp), se.DenseMatrix(thsp)), False)
    t_sp, XT = timed(lambda: Xsp * thsp, True)
    t_se, XTse = timed(lambda: Xd * thd, False)
    t_out, _ = timed(lambda: to_sp(list(XTse), names), False)
    row(data, f"matrix product X·θ ({len(q)}×{len(q)})", t_sp, t_se, t_in3, t_out,
        agree(list(XT), list(XTse), syms, rng))

    exprs = form.expressions()
    t_in4, Ese = timed(lambda: to_se(exprs), False)
    t_sp, (r_sp, _) = timed(lambda: sp.cse(exprs), True)
    t_se, (r_se, e_se) = timed(lambda: se.cse(Ese), False)
    t_out, _ = timed(lambda: to_sp([e for _, e in r_se] + list(e_se), names), False)
    row(data, f"cse of implicit Γ_nh: M, F ({len(r_sp)} | {len(r_se)} subexpr.)", t_sp, t_se, t_in4, t_out)

    pt = {s: sp.Float(rng.uniform(0.3, 1.2)) for s in syms}
    pt_se = {se.Symbol(s.name): se.RealDouble(float(val)) for s, val in pt.items()}
    F = list(form.rhs)
    Fse = Ese[len(exprs) - len(F):]
    t_sp, vals = timed(lambda: [float(f.xreplace(pt).evalf()) for f in F], True)
    t_se, vals_se = timed(lambda: [float(f.xreplace(pt_se)) for f in Fse], False)
    err = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(vals, vals_se))
    row(data, "F at a numerical point (substitute, evaluate)", t_sp, t_se, t_in4 * len(F) / len(exprs), 0.0, err)


def import_times() -> dict:
    def run(code):
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    base = run("pass")
    out = {"python -c pass (s)": base, "import symengine (s)": run("import symengine") - base,
           "import sympy (s)": run("import sympy") - base, "import anholo (s)": run("import anholo") - base}
    for k, v in out.items():
        print(f"  {k:28s} {v:7.3f}")
    return out


def main():
    global REPEATS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--bicycle", default=str(Path(__file__).resolve().parents[1] / "src" / "anholo" / "examples"
                                              / "whipple_bicycle.toml"))
    args = ap.parse_args()
    REPEATS = 3 if args.quick else args.repeats
    rng = random.Random(1)
    out = {"machine": {"python": sys.version.split()[0], "sympy": sp.__version__, "symengine": se.__version__,
                       "cpus": os.cpu_count(), "load_before": os.getloadavg()},
           "timing": f"median of {REPEATS} runs per operation; sympy's cache cleared before each sympy run"}
    print("Import (whole process, median of 5):")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    os.environ.update(env)
    out["import"] = import_times()
    print("Operations (median; speedup = sympy / symengine; conversion = sympy→symengine + symengine→sympy):")
    path = Path(args.bicycle)
    if path.exists():
        bicycle(path, rng)
    else:
        print(f"  bicycle skipped: {path} not found")
    for n in ((3,) if args.quick else (3, 4, 5)):
        trailer(n, rng)
    out["rows"] = ROWS
    out["machine"]["load_after"] = os.getloadavg()
    res = ROOT / "benchmarks" / "results" / "symengine.json"
    res.write_text(json.dumps(out, indent=2))
    print(f"wrote {res.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Benchmark: the code generators on the Whipple bicycle's right-hand side (Maggi's program).

The program is ``System.load("whipple_bicycle").maggi().program()`` (outputs ``q̇`` (8), ``g`` (3 × 3) and
``F`` (3) over about 1,460 shared definitions).  Rows, each the cost of one evaluation of ``ẋ = (q̇, g⁻¹F)``
at the same state, parameters as runtime arguments:

* ``python (before)``: the code the Maggi route generated before anholo.algebra.codegen (Python with
  ``math``, one local per definition, then ``numpy.linalg.solve``), rebuilt here from the same program;
* ``codegen python``: :func:`anholo.algebra.codegen.generate` with ``backend="python"`` (the fallback:
  the same code, the 3 × 3 solve by elimination in Python);
* ``symengine llvm``: ``symengine.Lambdify(args, outputs, cse=True, backend="llvm")`` on the program's
  outputs (the shared definitions substituted, symengine keeps them shared), plus ``numpy.linalg.solve``;
* ``numba``: listed when installed (it is not a dependency of anholo);
* ``codegen c (ctypes)``: :func:`generate` with ``backend="c"`` called from Python through its bound
  form (what the integrators call);
* ``C reference``: the same C function timed by a C driver loop (built here with the same compiler and
  flags, and with ``-O3``) — the measured limit the Python-callable is compared against.

Then a 10 s simulation at 5 m/s from a slightly leaned upright state (:func:`anholo.numerics.simulate`,
DOP853, rtol 1e-8 and the default 1e-10) with the Python and the C right-hand sides, after set-up.

Run from the repository root::

    python benchmarks/bench_codegen.py            # about a minute (the C build, the LLVM build)
    python benchmarks/bench_codegen.py --no-llvm

Writes benchmarks/results/codegen.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from anholo.algebra import codegen  # noqa: E402
from anholo.algebra.codegen import c_source, find_compiler, generate  # noqa: E402
from anholo.algebra.program import MATH_NAMESPACE  # noqa: E402
from anholo.system import System  # noqa: E402


def per_call(fn, seconds: float = 0.5, repeats: int = 5) -> float:
    """Seconds per call: the best of ``repeats`` batches of about ``seconds`` each."""
    n, start = 1, time.perf_counter()
    while time.perf_counter() - start < 0.05:
        fn()
        n += 1
    rate = (time.perf_counter() - start) / n
    number = max(1, int(seconds / max(rate, 1e-9)))
    return min(timeit.repeat(fn, number=number, repeat=repeats)) / number


def python_before(prog, state, params, n, m):
    """The generator of the Maggi route before codegen: Python scalars, then numpy.linalg.solve."""
    lines, outs = prog.body({**{str(s): f"_y{i}" for i, s in enumerate(state)},
                             **{str(s): f"_p{i}" for i, s in enumerate(params)}})
    K, M, F = outs[:n], outs[n:n + m * m], outs[n + m * m:]
    src = ["def make_rhs(p):", "    " + ", ".join(f"_p{i}" for i in range(len(params))) + ", = p",
           "    def _f(t, y):", "        " + ", ".join(f"_y{i}" for i in range(len(state))) + ", = y.tolist()"]
    src += ["        " + x for x in lines]
    src += [f"        _g = _array(({', '.join(M)},)).reshape({m}, {m})",
            f"        _vd = _solve(_g, _array(({', '.join(F)},)))",
            f"        return numpy.concatenate((_array(({', '.join(K)},)), _vd))", "    return _f"]
    ns = dict(MATH_NAMESPACE, numpy=np, _array=np.array, _solve=np.linalg.solve)
    exec(compile("\n".join(src), "<before>", "exec"), ns)  # noqa: S102
    return ns["make_rhs"]


DRIVER = r"""
#include <stdio.h>
#include <time.h>
int anholo_f(double t, const double *y, const double *p, double *out);
int main(int argc, char **argv) {
    double y[%(ny)d] = {%(y)s}; double p[%(np)d] = {%(p)s}; double out[%(no)d]; double acc = 0.0;
    long N = %(N)d; double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < N; ++i) { y[0] += 1e-15; anholo_f(0.0, y, p, out); acc += out[%(last)d]; }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / N / 1e3;
        if (us < best) best = us;
    }
    printf("%%.4f %%.17g\n", best, acc);
    return 0;
}
"""


def c_reference(src: str, y, p, size: int, flags: list) -> tuple:
    """(µs per call, compile seconds) of the C function in a C driver loop."""
    cc = find_compiler()
    with tempfile.TemporaryDirectory() as d:
        Path(d, "f.c").write_text(src)
        Path(d, "main.c").write_text(DRIVER % {"ny": len(y), "y": ", ".join(repr(float(v)) for v in y),
                                               "np": max(len(p), 1), "p": ", ".join(repr(float(v)) for v in p) or "0",
                                               "no": size, "last": size - 1, "N": 100000})
        t0 = time.perf_counter()
        subprocess.run([cc, *flags, "-c", "-o", str(Path(d, "f.o")), str(Path(d, "f.c"))], check=True)
        built = time.perf_counter() - t0
        subprocess.run([cc, "-O2", "-o", str(Path(d, "bench")), str(Path(d, "main.c")), str(Path(d, "f.o")), "-lm"],
                       check=True)
        out = subprocess.run([str(Path(d, "bench"))], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), built


def upright(s, speed=5.0, lean=0.01):
    from mechanics.states import upright_state
    values = {p: float(v) for p, v in s.values.items()}
    q0, qd0, names, _, _ = upright_state(s.chart.coordinates, s.chart.velocities, s.holonomic[0], s.constraints, values,
                                         lean="lean", pitch="pitch", rear_wheel="rear_wheel",
                                         free=("lean", "steer", "rear_wheel"), speed=speed, lean_angle=lean, radius=0.3)
    return q0, qd0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-llvm", action="store_true", help="skip symengine's LLVM backend (its build is slow)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "codegen.json"))
    args = ap.parse_args(argv)
    os.environ["ANHOLO_CACHE"] = tempfile.mkdtemp(prefix="anholo-bench-codegen-")  # a fresh cache: builds measured

    t0 = time.perf_counter()
    s = System.load("whipple_bicycle")
    nh = s.maggi()
    prog = nh.program(multipliers=False)
    n, m = nh.n, nh.m
    state, params = list(prog.args[:n + m]), list(prog.args[n + m:])
    setup = time.perf_counter() - t0
    values = {str(k): float(v) for k, v in s.values.items()}
    p = [values[str(a)] for a in params]
    q0, qd0 = upright(s)
    names = [c.name for c in s.chart.coordinates]
    y = np.concatenate([q0, [qd0[names.index(c.name)] for c in nh.free_coordinates]])
    groups = [("y", state), ("p", params)]
    rows, ref = [], None

    def row(name, seconds, build=None, note=""):
        rows.append({"generator": name, "us_per_call": None if seconds is None else seconds * 1e6,
                     "build_s": build, "note": note})

    before = python_before(prog, state, params, n, m)(p)
    ref = before(0.0, y)
    row("python (before)", per_call(lambda: before(0.0, y)))
    t0 = time.perf_counter()
    gp = generate(prog, groups, (n, m), backend="python")
    build = time.perf_counter() - t0
    fp = gp.bind(p)
    assert np.allclose(fp(0.0, y), ref, rtol=1e-10, atol=1e-12)
    row("codegen python", per_call(lambda: fp(0.0, y)), build)
    if not args.no_llvm:
        import symengine as se
        env = {}
        for name, v in prog.pruned().pairs:
            env[name] = v.xreplace(env) if env else v
        outs = [o.xreplace(env) for o in prog.outputs]
        t0 = time.perf_counter()
        try:
            lam = se.Lambdify(list(prog.args), outs, cse=True, backend="llvm")
        except Exception as exc:  # noqa: BLE001 - symengine built without LLVM
            row("symengine llvm", None, note=f"unavailable: {exc}")
        else:
            build = time.perf_counter() - t0
            xv = np.concatenate([y, p])

            def llvm_rhs():
                o = lam(xv)
                return np.concatenate([o[:n], np.linalg.solve(o[n:n + m * m].reshape(m, m), o[n + m * m:])])

            assert np.allclose(llvm_rhs(), ref, rtol=1e-9, atol=1e-12)
            row("symengine llvm", per_call(llvm_rhs), build, "evaluation by LLVM, solve by numpy")
    try:
        import numba  # noqa: F401
        row("numba", None, note="installed, not measured (no numba code generator in anholo)")
    except ImportError:
        row("numba", None, note="not installed")
    cc = find_compiler()
    sim = {}
    if cc:
        codegen._LIBRARIES.clear()
        codegen._GENERATED.clear()
        src = c_source(prog, groups, (n, m))
        t0 = time.perf_counter()
        gc_ = generate(prog, groups, (n, m), backend="c")
        build = time.perf_counter() - t0
        fc = gc_.bind(p)
        assert np.allclose(fc(0.0, y), ref, rtol=1e-10, atol=1e-12)
        row("codegen c (ctypes)", per_call(lambda: fc(0.0, y)), build, f"{cc} {' '.join(codegen._CFLAGS)}")
        for flags in (list(codegen._CFLAGS[:1]) + ["-fno-math-errno"], ["-O3", "-fno-math-errno"]):
            us, built = c_reference(src, y, p, n + m, flags)
            row("C reference " + " ".join(flags), us * 1e-6, built, "C driver loop, same source")
    else:
        row("codegen c (ctypes)", None, note="no C compiler")

    # a 10 s simulation at 5 m/s after set-up
    from anholo.numerics import compile_system, simulate
    for backend in (["python", "c"] if cc else ["python"]):
        os.environ["ANHOLO_CODEGEN"] = backend
        compiled = compile_system(nh)
        compiled.rhs(compiled.parameter_vector())  # build (or load) before timing
        for rtol, atol in ((1e-8, 1e-10), (1e-10, 1e-12)):
            t0 = time.perf_counter()
            traj = simulate(compiled, 10.0, q0, qd0, points=201, progress=False, rtol=rtol, atol=atol)
            sim[f"{backend} rtol={rtol:g}"] = {"seconds": time.perf_counter() - t0,
                                               "lean_end": float(traj.q[names.index("lean")][-1]),
                                               "max_constraint_residual": float(traj.constraint_residuals().max())}
    os.environ.pop("ANHOLO_CODEGEN", None)

    print(f"Whipple bicycle, Maggi program: {len(prog.pruned().pairs)} definitions, state {n + m}, "
          f"{len(params)} parameters (set-up {setup:.1f} s)")
    print(f"{'generator':<34}{'µs/call':>10}{'build s':>10}  note")
    for r in rows:
        us = "-" if r["us_per_call"] is None else f"{r['us_per_call']:.2f}"
        b = "-" if r["build_s"] is None else f"{r['build_s']:.2f}"
        print(f"{r['generator']:<34}{us:>10}{b:>10}  {r['note']}")
    print("10 s simulation at 5 m/s (simulate, DOP853), after set-up:")
    for k, v in sim.items():
        print(f"  {k:<22} {v['seconds']:.3f} s   lean(10 s) = {v['lean_end']:.2e}   "
              f"max |constraint| = {v['max_constraint_residual']:.1e}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                                          "cpus": os.cpu_count(), "load_average": load, "rows": rows,
                                          "simulation_10s": sim}, indent=2) + "\n")
    print(f"load average {load}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

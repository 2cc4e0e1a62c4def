#!/usr/bin/env python
"""Benchmark: the code generators on the Whipple bicycle's right-hand side (Maggi's program).

The program is ``System.load("whipple_bicycle").maggi().program()`` (outputs ``q̇`` (8), ``g`` (3 × 3) and
``F`` (3) over shared definitions: the smaller of the two formations of ``MaggiSystem.programs()``).  Rows, each the cost of one evaluation of ``ẋ = (q̇, g⁻¹F)``
at the same state, parameters as runtime arguments:

* ``python (before)``: the code the Maggi route generated before anholo.algebra.codegen (Python with
  ``math``, one local per definition, then ``numpy.linalg.solve``), rebuilt here from the same program;
* ``codegen python``: :func:`anholo.algebra.codegen.generate` with ``backend="python"`` (the fallback:
  the same code, the 3 × 3 solve by elimination in Python);
* ``symengine llvm``: ``symengine.Lambdify(args, outputs, cse=True, backend="llvm")`` on the program's
  outputs (the shared definitions substituted, symengine keeps them shared), plus ``numpy.linalg.solve``;
* ``numba``: listed when installed (it is not a dependency of anholo);
* ``codegen c (bound)``: :func:`generate` with ``backend="c"`` called from Python through its bound
  form (what the integrators call: the CPython wrapper built into the library, else ctypes);
* ``C reference``: the same C function timed by a C driver loop (built here with the same compiler and
  flags, and with ``-O3``) — the measured limit the Python-callable is compared against.

Then the vectorised kernel of :mod:`anholo.numerics.batch_loop` (states per second, one call for 8,192
states, its lanes checked bit for bit against the scalar C function) and one 10 s run in the compiled loop;
the operation count of the field programs (:func:`anholo.algebra.codegen.operation_count`) of the bicycle
(both files), the rattleback and ``n_trailer_1/3/5/8``, each formed both ways of
:meth:`~anholo.dynamics.maggi.MaggiSystem.programs` (``"expressions"``: the second derivatives of L as
expressions; ``"program"``: L differentiated along its own program), with the one ``program()`` keeps; whole processes (``--repeats``): ``anholo simulate whipple_bicycle`` against
PyDy's ``generate_ode_function`` on sympy's KanesMethod bicycle with the ``lambdify`` and ``cython``
generators (where installed).

Then a 10 s simulation at 5 m/s from a slightly leaned upright state (:func:`anholo.numerics.simulate`,
DOP853, rtol 1e-8 and the default 1e-10) with the Python and the C right-hand sides, after set-up.

Run from the repository root::

    python benchmarks/bench_codegen.py            # about a minute (the C build, the LLVM build)
    python benchmarks/bench_codegen.py --no-llvm
    python benchmarks/bench_codegen.py --operations   # the operation counts only (about half a minute)

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


def hamel_program(ms):
    """The field program of Hamel's form of the constrained Lagrangian ``l(q, v) = L(q, X v + β)``
    (Voronets' equations; Neimark & Fufaev (1972); Bloch (2015), §5), formed with the sweeps of
    :mod:`anholo.dynamics.maggi_field` — measured against :meth:`MaggiSystem.program`, not used by anholo:

        ∂²l/∂v^α∂v^β v̇^β = X_α(l) − ∂²l/∂v^α∂q^B q̇^B − p_a R^a_αβ v^β,   [X_α, X_β] = R^a_αβ X_a,

    ``X_α(l)`` and ``∂l/∂v`` by a reverse sweep over the frame, the kinematics and L; the mixed term by a tangent
    sweep along ``q̇``; ``p_a = ∂L/∂q̇^{P_a}`` by a reverse sweep of L alone; ``R^a_αβ v^β = X_α((X v)^{P_a}) −
    (X v)(X_α^{P_a})`` by tangent sweeps of the frame; ``∂²l/∂v∂v`` by tangent sweeps along ``v``.  Scleronomic
    systems without forces only (the bicycle, the n-trailer)."""
    import symengine as se
    from anholo.algebra.engine import engine_cse
    from anholo.dynamics import maggi_field as mf

    C, P = ms._cache, ms._parts
    q, u, dep = C["q"], C["u"], C["dep"]
    n, m, k = ms.n, ms.m, len(dep)
    v, S, beta = P["v"], P["S"], P["beta"]
    args = ms.program_args()
    fresh = mf._Names([str(a) for a in args] + [str(x) for x in q + u + v], "h")
    ud = [fresh() for _ in range(n)]
    groups = [S[A, al] for al in range(m) for A in range(n)] + [beta[a, 0] for a in range(k)]
    pairs, red = engine_cse(groups + [C["L"].xreplace(dict(zip(u, ud)))])
    ren = {a: fresh() for a, _ in pairs}
    base, red = [(ren[a], b.xreplace(ren)) for a, b in pairs], [e.xreplace(ren) for e in red]
    X = [[red[al * n + A] for A in range(n)] for al in range(m)]
    kin = [(ud[A], se.Add(*[X[al][A] * v[al] for al in range(m)]) + (red[m * n + dep.index(A)] if A in dep else 0))
           for A in range(n)]
    ordered = mf._ordered(dict(base + kin))
    adj, grad = mf.reverse_sweep(ordered, red[-1], list(q) + list(v), fresh)
    adj_L, grad_L = mf.reverse_sweep(base, red[-1], ud, fresh)
    named = []

    def name(e):
        if mf._atomic(e):
            return e
        s = fresh()
        named.append((s, e))
        return s

    dl_dq, dl_dv, p = [name(grad[x]) for x in q], [name(grad[x]) for x in v], [name(grad_L[x]) for x in ud]
    body = ordered + adj + adj_L + named
    tp, tan = mf.tangent_sweep(body, {q[A]: ud[A] for A in range(n)}, fresh)
    more, F, M = [], [], [[None] * m for _ in range(m)]
    for al in range(m):
        new, along = mf.tangent_sweep(ordered, {q[A]: X[al][A] for A in range(n) if X[al][A] != 0}, fresh)
        more += new
        Rv = [along(ud[Pc]) - tan(X[al][Pc]) for Pc in dep]  # R^a_αβ v^β
        F.append(se.Add(*[X[al][A] * dl_dq[A] for A in range(n) if X[al][A] != 0]) - tan(dl_dv[al])
                 - se.Add(*[p[Pc] * R for Pc, R in zip(dep, Rv)]))
    for be in range(m):
        new, along = mf.tangent_sweep(body, {v[be]: se.Integer(1)}, fresh)
        more += new
        for al in range(be + 1):
            M[al][be] = M[be][al] = along(dl_dv[al])
    outputs = [e for _, e in kin] + [M[i][j] for i in range(m) for j in range(m)] + F
    return mf.global_cse(args, body + tp + more, outputs, fresh)


def same_field(a, b, n, m, seed=3) -> float:
    """Largest deviation of v̇ = M⁻¹F of two field programs at random states (relative to max(1, |v̇|))."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(3):
        pt = {str(x): rng.uniform(-0.5, 0.5) for x in a.args}
        va, vb = (np.linalg.solve(o[n:n + m * m].reshape(m, m), o[n + m * m:n + m * m + m])
                  for o in (np.array(p.evaluate(pt)).real for p in (a, b)))
        worst = max(worst, np.abs(va - vb).max() / max(1.0, np.abs(va).max()))
    return worst


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


PYDY_SCRIPT = r'''
import sys, time
GEN = sys.argv[1]
sys.path.insert(0, %(tests)r)
import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.optimize import brentq
from mechanics_models import whipple_bicycle
from pydy.codegen.ode_function_generators import generate_ode_function
KM, values = whipple_bicycle()
q, u = list(KM.q), list(KM.u)
consts = list(values)
rhs = generate_ode_function(KM.forcing_full, q, u, consts, mass_matrix=KM.mass_matrix_full, generator=GEN)
p = np.array([float(values[c]) for c in consts])
qv = {q[0]: 0.0, q[1]: 0.01, q[2]: 0.0}  # q_ind = (yaw q1, lean q2, steer q5), q_dep = pitch q4
fh = sp.lambdify(q[3], KM._f_h[0].xreplace(values).xreplace(qv))
pitch = brentq(lambda x: float(fh(x)), -0.5, 0.5)
qv[q[3]] = pitch
ui = {u[0]: 0.0, u[1]: float(sys.argv[2]) / 0.3, u[2]: 0.0}  # u_ind = (lean rate u2, rear wheel u3, steer rate u5)
Ars = np.array(KM._Ars.xreplace(values).xreplace(qv).evalf().tolist(), float)  # u_dep = Ars u_ind
ud = Ars @ np.array([float(ui[s]) for s in u[:3]])
x0 = np.array([float(qv[s]) for s in q] + [float(ui.get(s, 0.0)) for s in u[:3]] + list(ud))
sol = solve_ivp(lambda t, x: rhs(x, t, p), (0.0, 10.0), x0, method="DOP853", rtol=1e-10, atol=1e-12,
                t_eval=np.linspace(0, 10, 1001))
print(GEN, sol.status, sol.nfev, float(sol.y[1, -1]))
'''


def kane_operations(ops: dict) -> dict:
    """The peer's size on the same bicycles: sympy's KanesMethod (tests/mechanics_models.py, sympy's test_kane3
    bicycle; with the pitch-rate constraint for the second file) counted two ways — with the same counter as
    anholo's field (:func:`anholo.algebra.codegen.operation_count` after one cse of ``mass_matrix_full`` and
    ``forcing_full``: the whole first-order field, the kinematics included), and as symbrim counts the 1,909 and
    2,198 of its issue #104 (``sympy.count_ops(sympy.cse(fr + frstar))``: Kane's dynamical equations only, the
    dependent speeds as given symbols) — and anholo's field program by ``sympy.count_ops`` of its definitions and
    outputs (that convention counts a negation and a subtraction as operations)."""
    import sympy as sm

    from anholo.algebra.engine import engine_cse, to_engine
    from anholo.algebra.program import Program
    from mechanics_models import whipple_bicycle

    out = {}
    for name, pitch_rate in (("whipple_bicycle", False), ("whipple_bicycle_pitch_rate", True)):
        KM, _ = whipple_bicycle(pitch_rate=pitch_rate)
        fr, frstar = KM._fr, KM._frstar
        if fr is None:
            fr, frstar = KM.kanes_equations()
        names = list(KM.q) + list(KM.u) + [u.diff() for u in KM.u]
        sub = {a: sm.Symbol(f"_a{i}") for i, a in enumerate(names)}
        exprs = [to_engine(e.xreplace(sub)) for e in list(KM.mass_matrix_full) + list(KM.forcing_full)]
        pairs, reduced = engine_cse(exprs)
        full = codegen.operation_count(Program(tuple(to_engine(s) for s in sub.values()), tuple(pairs), tuple(reduced)))
        symbrim = int(sm.count_ops(sm.cse(fr + frstar)))
        prog = System.load(name).maggi().program(multipliers=False).pruned()
        ours_sympy = sum(int(sm.count_ops(sm.sympify(str(e)))) for e in [b for _, b in prog.pairs] + list(prog.outputs))
        out[name] = {"kane_full_operation_count": full["total"], "kane_fr_frstar_count_ops_cse": symbrim,
                     "anholo_operation_count": ops[name]["program"]["total"] if "program" in ops.get(name, {}) else None,
                     "anholo_count_ops": ours_sympy}
        print(f"peer on the same bicycle ({name}): KanesMethod {full['total']} operations (same counter, whole "
              f"field), {symbrim} by symbrim's count_ops(cse(fr + frstar)); anholo {out[name]['anholo_operation_count']}"
              f" (same counter), {ours_sympy} by sympy.count_ops")
    return out


def whole_process(q0, qd0, repeats: int) -> dict:
    """Whole processes timed from outside, interleaved, medians of wall and CPU (user + system) seconds:
    ``anholo simulate whipple_bicycle`` (10 s at 5 m/s, DOP853 rtol 1e-10, 1001 output times; the C library
    cached by an earlier run, as on any second use) against PyDy's ``generate_ode_function`` on sympy's
    KanesMethod bicycle (``mass_matrix_full``, ``forcing_full``; the same state, scipy's DOP853, the same
    tolerances and output times) with its ``lambdify`` and ``cython`` generators (PyDy compiles the Cython
    code in every process: it has no cache)."""
    import resource
    import statistics
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("ANHOLO_CODEGEN", None)
    fmt = lambda v: ",".join(repr(float(x)) for x in v)  # noqa: E731
    cmds = {"anholo simulate": [sys.executable, "-m", "anholo", "simulate", "whipple_bicycle", "--q0", fmt(q0),
                                "--qdot0", fmt(qd0), "--t-end", "10", "--points", "1001", "--quiet"]}
    script = Path(tempfile.mkdtemp(prefix="anholo-pydy-")) / "pydy_bicycle.py"
    script.write_text(PYDY_SCRIPT % {"tests": str(ROOT / "tests")})
    have = {}
    for gen in ("lambdify", "cython"):
        try:
            import pydy  # noqa: F401
            if gen == "cython":
                import Cython  # noqa: F401
            have[gen] = True
        except ImportError:
            have[gen] = False
        if have[gen]:
            cmds[f"PyDy {gen}"] = [sys.executable, str(script), gen, "5.0"]
    subprocess.run(cmds["anholo simulate"], env=env, capture_output=True, check=True)  # fills the cache
    times = {k: [] for k in cmds}
    outputs = {}
    for _ in range(repeats):
        for name, cmd in cmds.items():
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0:
                outputs[name] = "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
                continue
            outputs[name] = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            times[name].append((wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)))
    out = {}
    for name, ts in times.items():
        if ts:
            out[name] = {"wall_s": statistics.median(t[0] for t in ts), "cpu_s": statistics.median(t[1] for t in ts),
                         "runs": len(ts), "last_line": outputs.get(name, "")}
        else:
            out[name] = {"wall_s": None, "cpu_s": None, "runs": 0, "last_line": outputs.get(name, "")}
    return out


def upright(s, speed=5.0, lean=0.01):
    from mechanics.states import upright_state
    values = {p: float(v) for p, v in s.values.items()}
    q0, qd0, names, _, _ = upright_state(s.chart.coordinates, s.chart.velocities, s.holonomic[0], s.constraints, values,
                                         lean="lean", pitch="pitch", rear_wheel="rear_wheel",
                                         free=("lean", "steer", "rear_wheel"), speed=speed, lean_angle=lean, radius=0.3)
    return q0, qd0


def operation_tables(nh) -> tuple:
    """The size of the field: operations after cse (sympy's count_ops convention) of both formations of
    ``MaggiSystem.programs()`` and the one ``program()`` keeps, for the bicycles, the rattleback and the
    n-trailers; the peer (KanesMethod) on the same bicycles; Hamel's form of the bicycle and the 3-trailer."""
    ops = {}
    for name in ["whipple_bicycle", "whipple_bicycle_pitch_rate", "rattleback"] + [f"n_trailer_{k}" for k in (1, 3, 5, 8)]:
        nk = nh if name == "whipple_bicycle" and nh is not None else System.load(name).maggi()
        t0 = time.perf_counter()
        both = nk.programs(multipliers=False)
        built = time.perf_counter() - t0
        ops[name] = {key: codegen.operation_count(p) for key, p in both.items() if p is not None}
        ops[name]["used"] = next(key for key, p in both.items() if p is nk.program(multipliers=False))
        ops[name]["build_s"] = built
    for name, c in ops.items():
        parts = []
        for key in ("expressions", "program"):
            if key in c:
                o = c[key]
                parts.append(f"{key} {o['total']} ({o['add']} add, {o['mul']} mul, {o['div']} div, {o['pow']} pow, "
                             f"{o['function']} functions; {o['definitions']} definitions)")
        print(f"operations of the field program, {name}: " + "; ".join(parts) + f" — uses {c['used']}"
              f" (formed in {c['build_s']:.2f} s)")
    peers = kane_operations(ops)
    hamel = {}
    for name in ("whipple_bicycle", "n_trailer_3"):
        nk = System.load(name).maggi()
        hp = hamel_program(nk)
        dev = same_field(nk.program(multipliers=False), hp, nk.n, nk.m)
        assert dev < 1e-9, (name, dev)
        hamel[name] = codegen.operation_count(hp)
        print(f"Hamel's form of l(q, v) = L(q, X v) formed with the same sweeps, {name}: {hamel[name]['total']} "
              f"operations ({hamel[name]['definitions']} definitions; v̇ equal to the field's to {dev:.1e})")
    return ops, peers, hamel


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-llvm", action="store_true", help="skip symengine's LLVM backend (its build is slow)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="whole-process runs of anholo simulate and of PyDy's routes (0: skip; default 3)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "codegen.json"))
    ap.add_argument("--operations", action="store_true",
                    help="only the operation counts (anholo's field programs, KanesMethod on the same bicycles, "
                         "Hamel's form); writes benchmarks/results/codegen_operations.json")
    args = ap.parse_args(argv)
    os.environ["ANHOLO_CACHE"] = tempfile.mkdtemp(prefix="anholo-bench-codegen-")  # a fresh cache: builds measured
    if args.operations:
        ops, peers, hamel = operation_tables(None)
        out = ROOT / "benchmarks" / "results" / "codegen_operations.json"
        out.write_text(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                                   "operations": ops, "operations_hamel_form": hamel, "operations_kane": peers},
                                  indent=2) + "\n")
        print(f"wrote {out}")
        return 0

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
        row("codegen c (bound)", per_call(lambda: fc(0.0, y)), build,
            f"{cc} {' '.join(codegen._CFLAGS)}; " + ("CPython wrapper" if gc_._ext is not None else "ctypes"))
        for flags in (["-O2", "-fno-math-errno", "-ffp-contract=off"], ["-O3", "-fno-math-errno", "-ffp-contract=off"]):
            us, built = c_reference(src, y, p, n + m, flags)
            row("C reference " + " ".join(flags), us * 1e-6, built, "C driver loop, same source")
        for key, other in nh.programs(multipliers=False).items():  # the formation program() does not use
            if other is None or other is prog:
                continue
            flags = ["-O2", "-fno-math-errno", "-ffp-contract=off"]
            us, built = c_reference(c_source(other, groups, (n, m)), y, p, n + m, flags)
            row(f"C reference -O2 ({key} formation)", us * 1e-6, built,
                f"{codegen.operation_count(other)['total']} operations against {codegen.operation_count(prog)['total']}")
    else:
        row("codegen c (bound)", None, note="no C compiler")

    # many states at once: the vectorised kernel (anholo.numerics.batch_loop), one call for N states
    batch = {}
    from anholo.numerics import compile_system, simulate
    if cc:
        from anholo.numerics.batch_loop import compiled_loop, lanes
        os.environ["ANHOLO_CODEGEN"] = "c"
        compiled = compile_system(nh)
        t0 = time.perf_counter()
        loop = compiled_loop(compiled)
        batch["build_s"] = time.perf_counter() - t0
        w, vflags = lanes()
        batch["lanes"], batch["flags"] = w, " ".join(vflags)
        rng = np.random.default_rng(0)
        N = 8192
        Y = y + rng.uniform(-0.05, 0.05, (N, n + m))
        pv = np.array(p)
        got = loop.rhs_batch(Y, pv)
        one = compiled.rhs(pv)
        batch["bitwise_equal_to_scalar"] = bool(all(np.array_equal(got[i], one(0.0, Y[i])) for i in range(0, N, 97)))
        sec = per_call(lambda: loop.rhs_batch(Y, pv), seconds=1.0)
        batch["states_per_s"] = N / sec
        batch["us_per_state"] = sec / N * 1e6
        cpu = []  # per CPU second of this process (the machine is shared: wall time counts other processes)
        for _ in range(5):
            c0 = time.process_time()
            for _ in range(20):
                loop.rhs_batch(Y, pv)
            cpu.append((time.process_time() - c0) / 20)
        batch["states_per_cpu_s"] = N / min(cpu)
        # one 10 s run in the compiled loop (201 output times, projection onto the holonomic constraint)
        pv2 = np.array(compiled.parameter_vector())
        y0 = compiled.initial_state(q0, qd0, None, pv2)
        tout = np.linspace(0.0, 10.0, 201)
        res = loop.run(y0[None, :], pv2, 0.0, 10.0, tout, rtol=1e-10, atol=1e-12)
        t_loop = per_call(lambda: loop.run(y0[None, :], pv2, 0.0, 10.0, tout, rtol=1e-10, atol=1e-12),
                          seconds=1.0, repeats=5)
        batch["loop_10s_run_s"] = t_loop
        batch["loop_10s_nfev"] = int(res["nfev"][0])
        batch["loop_lean_end"] = float(res["y"][0, -1, names.index("lean")])
        os.environ.pop("ANHOLO_CODEGEN", None)

    # a 10 s simulation at 5 m/s after set-up
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
    if batch:
        print(f"batch kernel ({batch['lanes']} lanes, {batch['flags'] or 'no vector flags'}): "
              f"{batch['states_per_s'] / 1e6:.2f} M states/s ({batch['us_per_state']:.3f} µs per state; "
              f"{batch['states_per_cpu_s'] / 1e6:.2f} M per CPU second), lanes = "
              f"scalar bit for bit: {batch['bitwise_equal_to_scalar']}; one 10 s run in the compiled loop "
              f"{batch['loop_10s_run_s'] * 1e3:.1f} ms ({batch['loop_10s_nfev']} evaluations, lean(10 s) = "
              f"{batch['loop_lean_end']:.6e})")
    ops, peers, hamel = operation_tables(nh)
    whole = whole_process(q0, qd0, args.repeats) if args.repeats else {}
    for name, r in whole.items():
        wall = "-" if r["wall_s"] is None else f"{r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU"
        print(f"whole process {name:<18} {wall}   ({r['last_line']})")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                                          "cpus": os.cpu_count(), "load_average": load, "rows": rows,
                                          "simulation_10s": sim, "batch": batch, "operations": ops,
                                          "operations_hamel_form": hamel, "operations_kane": peers,
                                          "whole_process": whole}, indent=2) + "\n")
    print(f"load average {load}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

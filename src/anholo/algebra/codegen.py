"""One code generator: a straight-line :class:`~anholo.algebra.program.Program` to a fast callable.

:func:`generate` turns a program (definitions ``t_i = f_i(args, t_1..t_{i-1})`` and outputs) into
``f(t, y, p) -> array`` — the time, a state vector and a parameter vector as *runtime arguments*,
so one compilation serves every set of parameter values.  With ``solve=(r, k)`` the outputs are read
as an implicit right-hand side: ``r`` explicit rates ``ẋ_0..ẋ_{r-1}`` (e.g. the kinematics
``q̇ = X_α v^α + β``), then a ``k × k`` matrix ``M`` (row-major) and ``k`` entries ``F``; the callable
returns ``(ẋ_0..ẋ_{r-1}, M⁻¹F)``, the small linear system solved *inside* the generated code by
Gaussian elimination with partial pivoting (``P M = L U``, then ``L z = P F`` and ``U x = z``;
Golub & Van Loan (2013), Alg. 3.4.1 and 3.1.1–3.1.2), so one call gives ``ẋ``.  Nothing symbolic is
inverted: the program's shared subexpressions become one local each (the code generation of PyDy,
Gede, Peterson, Sinha & Moore (2013)).

Backends, chosen by availability (``backend=`` or the environment variable ``ANHOLO_CODEGEN`` =
``auto`` | ``c`` | ``python``):

* ``"c"``: C source (``math.h``; one ``const double`` per definition), built at run time by the system C
  compiler (``$CC``, else ``cc``, ``gcc`` or ``clang``) with ``-O2`` into a shared library cached under
  ``$ANHOLO_CACHE`` (default ``~/.cache/anholo/codegen``, else a temporary directory), keyed by the
  SHA-256 of the source, the flags, the compiler and the platform — a second process (or a worker of
  a batch) loads it without compiling.  The bound form (:meth:`GeneratedFunction.bind`, what the
  integrators call) goes through a CPython wrapper built into the same library (``METH_FASTCALL``, the
  arrays read through the buffer protocol) where Python's headers exist (``ANHOLO_NO_EXTENSION=1`` leaves it
  out), else through :mod:`ctypes` with
  the state copied into a preallocated buffer (docs/benchmarks.rst, *Code generation*, for the costs).
* ``"python"``: the same program as Python with :mod:`math` (one local per definition), the same
  elimination (unrolled up to :data:`UNROLL` unknowns, else a loop) — no compiler needed (the fallback;
  ``auto`` uses it when no compiler works).

A singular ``M`` (a zero pivot) or a non-finite entry gives ``nan`` for ``M⁻¹F`` (where LAPACK's
solve would raise), the explicit rates unchanged.

:func:`expression_function` is the same generator for every other numerical use (monitors, events, charts,
random-point tests, Newton residuals): sympy or symengine expressions of given argument symbols (one, a list,
a matrix, nested) to one callable of floats or of numpy arrays of points, with IEEE values (``nan``) where an
expression is undefined.  Nothing else in anholo turns expressions into callables (``sympy.lambdify`` and
symengine's ``Lambdify`` are not used; a test keeps it so).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import SimulationError
from .engine import se
from .extension import build_with_extension
from .program import _KNOWN_TEXT, MATH_NAMESPACE, ExpressionPrinter, Program, argument_locals, pivoted_solve, untranslated

__all__ = ["GeneratedFunction", "generate", "ExpressionFunction", "expression_function", "expressions_program", "compiled", "generate_jacobian", "build_library", "vector_flags", "operation_count", "from_sources", "c_source", "c_text", "python_source", "find_compiler", "BACKENDS", "chosen_backend"]

BACKENDS = ("auto", "c", "python")
_CFLAGS = ("-O2", "-shared", "-fPIC", "-fno-math-errno", "-ffp-contract=off")


# --- C ------------------------------------------------------------------------------------------------
#: Lanes of the vectorised kernel (``anholo_f_block``): one GCC/Clang vector of this many doubles per quantity.
LANES = 4

_C_PRELUDE = """#include <math.h>
static inline double _sign(double x) { return (double)((x > 0.0) - (x < 0.0)); }
static inline double _heaviside(double x, double h) { return x > 0.0 ? 1.0 : x < 0.0 ? 0.0 : x == 0.0 ? h : NAN; }
/* A x = b (A row-major k x k, overwritten) by elimination with partial pivoting; 1 (x = nan) if singular. */
static int _elim(int k, double *A, double *b, double *x) {
    for (int j = 0; j < k; ++j) {
        int piv = j; double best = fabs(A[j * k + j]);
        for (int i = j + 1; i < k; ++i) if (fabs(A[i * k + j]) > best) { best = fabs(A[i * k + j]); piv = i; }
        if (!(best > 0.0) || !isfinite(best)) { for (int i = 0; i < k; ++i) x[i] = NAN; return 1; }
        if (piv != j) {
            for (int c = j; c < k; ++c) { double s = A[j * k + c]; A[j * k + c] = A[piv * k + c]; A[piv * k + c] = s; }
            double s = b[j]; b[j] = b[piv]; b[piv] = s;
        }
        const double inv = 1.0 / A[j * k + j];
        for (int i = j + 1; i < k; ++i) {
            const double l = A[i * k + j] * inv;
            for (int c = j + 1; c < k; ++c) A[i * k + c] -= l * A[j * k + c];
            b[i] -= l * b[j];
        }
    }
    for (int i = k - 1; i >= 0; --i) {
        double s = b[i];
        for (int c = i + 1; c < k; ++c) s -= A[i * k + c] * x[c];
        x[i] = s / A[i * k + i];
    }
    return 0;
}
"""

_C_LANES = """typedef double _vd __attribute__((vector_size(%(bytes)d)));
static inline _vd _bc(double x) { _vd r; for (int i = 0; i < %(w)d; ++i) r[i] = x; return r; }
#define _LANE1(NAME, F) static inline _vd _v_##NAME(_vd a) { _vd r; for (int i = 0; i < %(w)d; ++i) r[i] = F(a[i]); return r; }
#define _LANE2(NAME, F) static inline _vd _v_##NAME(_vd a, _vd b) { _vd r; for (int i = 0; i < %(w)d; ++i) r[i] = F(a[i], b[i]); return r; }
_LANE1(sin, sin) _LANE1(cos, cos) _LANE1(tan, tan) _LANE1(asin, asin) _LANE1(acos, acos) _LANE1(atan, atan)
_LANE1(sinh, sinh) _LANE1(cosh, cosh) _LANE1(tanh, tanh) _LANE1(asinh, asinh) _LANE1(acosh, acosh)
_LANE1(atanh, atanh) _LANE1(exp, exp) _LANE1(log, log) _LANE1(sqrt, sqrt) _LANE1(fabs, fabs) _LANE1(sign, _sign)
_LANE2(atan2, atan2) _LANE2(pow, pow) _LANE2(fmax, fmax) _LANE2(fmin, fmin) _LANE1(floor, floor) _LANE1(ceil, ceil)
_LANE2(heaviside, _heaviside)
"""


def _layout(program: Program, groups: Sequence) -> dict:
    """Argument name → ``(group, index)`` for the groups ``[(name, symbols)]`` (``"t"``: the time)."""
    where = {}
    for gname, symbols in groups:
        for i, s in enumerate(symbols):
            where[str(s)] = (gname, i)
    missing = [str(a) for a in program.args if str(a) not in where]
    used = {str(s) for _, v in program.pruned().pairs for s in v.free_symbols} | {
        str(s) for o in program.outputs for s in o.free_symbols}
    missing = [a for a in missing if a in used]
    if missing:
        raise SimulationError(f"no runtime argument for {', '.join(missing)} in the generated code; pass them as "
                              "states or parameters.")
    return where


def c_source(program: Program, groups: Sequence, solve: tuple | None = None, name: str = "anholo_f",
             lanes: int = 0, prelude: bool = True) -> str:
    """C source of ``int name(double t, const double *y, const double *p, double *out)``.

    ``groups`` = ``[("t", [time]), ("y", state), ("p", parameters)]`` (any of them may be empty).
    Without ``solve`` the outputs are written to ``out``; with ``solve=(r, k)`` the first ``r`` outputs,
    then ``M⁻¹F`` (module docstring).  Returns 0, or 1 where ``M`` is singular (``out`` then ``nan``).

    With ``lanes = w > 0`` the source also has the vectorised kernel ``int name_block(const double *t,
    const double *y, const double *p, double *out)`` — ``w`` points at once, point ``l`` at ``t[l]``,
    ``y[l·ny …]``, ``p[l·np …]``, its result at ``out[l·size …]`` — whose every definition is one vector of
    ``w`` doubles (the same IEEE operations lane by lane, the functions of :mod:`math` applied to each
    lane, the solve per lane by the same elimination: a lane gives the bits of ``name`` at its point), and
    ``long name_batch(long N, const double *t, long ts, const double *Y, const double *P, long ps,
    double *OUT)``: ``N`` points (``t[i·ts]``, ``Y[i·ny …]``, ``P[i·ps …]``; ``ts = 0`` or ``ps = 0``:
    shared) through the kernel, returning the number of points where ``M⁻¹F`` is not a number (a singular
    ``M``).  ``prelude=False`` leaves out the
    helpers (``_sign``, ``_elim``) for a second function in the same source."""
    where = _layout(program, groups)
    table = {}
    for arg, (g, i) in where.items():
        table[arg] = "t" if g == "t" else f"{g}[{i}]"
    pairs = program.pruned().pairs
    for i, (nm, _) in enumerate(pairs):
        table[str(nm)] = f"c{i}"
    pr = ExpressionPrinter(table, language="c")
    gdict = {g: list(v) for g, v in groups}
    ny, np_ = len(gdict.get("y", ())), len(gdict.get("p", ()))
    lines = [_C_PRELUDE if prelude else "",
             f"int {name}(double t, const double *y, const double *p, double *out) {{",
             "    (void)t; (void)y; (void)p;"]
    lines += [f"    const double c{i} = {pr(v)};" for i, (_, v) in enumerate(pairs)]
    outs = [pr(o) for o in program.outputs]
    r, k = solve if solve is not None else (len(outs), 0)
    if len(outs) != r + k * k + k:
        raise SimulationError(f"the program has {len(outs)} outputs, not the {r} + {k}² + {k} of an implicit "
                              "right-hand side.")
    lines += [f"    out[{i}] = {o};" for i, o in enumerate(outs[:r])]
    if k:
        lines += [f"    double A[{k * k}] = {{" + ", ".join(outs[r:r + k * k]) + "};",
                  f"    double b[{k}] = {{" + ", ".join(outs[r + k * k:]) + "};",
                  f"    return _elim({k}, A, b, out + {r});"]
    else:
        lines += ["    return 0;"]
    lines += ["}"]
    if lanes:
        lines += [_lanes_source(program, pairs, where, solve=(r, k), name=name, lanes=lanes, ny=ny, np_=np_)]
    return "\n".join(lines) + "\n"


def _lanes_source(program, pairs, where, *, solve, name, lanes, ny, np_) -> str:
    """The vectorised kernel and the batch loop of :func:`c_source` (``lanes`` > 0)."""
    w = int(lanes)
    r, k = solve
    size = r + k
    table = {}
    for arg, (g, i) in where.items():
        table[arg] = "_t" if g == "t" else f"_{g}{i}"
    for i, (nm, _) in enumerate(pairs):
        table[str(nm)] = f"c{i}"
    pr = ExpressionPrinter(table, language="cvec")

    def vec(e):
        return pr(e) if e.free_symbols else f"_bc({pr(e)})"

    used = {str(s) for _, v in pairs for s in v.free_symbols} | {str(s) for o in program.outputs for s in o.free_symbols}
    lines = [_C_LANES % {"w": w, "bytes": 8 * w},
             f"int {name}_block(const double *t, const double *y, const double *p, double *out) {{",
             "    (void)t; (void)y; (void)p; int status = 0;"]
    for arg, (g, i) in where.items():
        if arg not in used:
            continue
        if g == "t":
            lines.append("    const _vd _t = {" + ", ".join(f"t[{l}]" for l in range(w)) + "};")
        else:
            stride = ny if g == "y" else np_
            lines.append(f"    const _vd _{g}{i} = {{" + ", ".join(f"{g}[{l * stride + i}]" for l in range(w)) + "};")
    lines += [f"    const _vd c{i} = {vec(v)};" for i, (_, v) in enumerate(pairs)]
    outs = list(program.outputs)
    lines += [f"    const _vd o{i} = {vec(o)};" for i, o in enumerate(outs)]
    lines += [f"    for (int l = 0; l < {w}; ++l) {{"]
    lines += [f"        out[l * {size} + {i}] = o{i}[l];" for i in range(r)]
    if k:
        lines += [f"        double A[{k * k}] = {{" + ", ".join(f"o{r + j}[l]" for j in range(k * k)) + "};",
                  f"        double b[{k}] = {{" + ", ".join(f"o{r + k * k + j}[l]" for j in range(k)) + "};",
                  f"        status += _elim({k}, A, b, out + l * {size} + {r});"]
    lines += ["    }", "    return status;", "}",
              f"long {name}_batch(long N, const double *t, long ts, const double *Y, const double *P, long ps, "
              "double *OUT) {",
              f"    double tl[{w}], yl[{w * max(ny, 1)}], pl[{w * max(np_, 1)}], ol[{w * max(size, 1)}]; long bad = 0;",
              f"    for (long i0 = 0; i0 < N; i0 += {w}) {{",
              f"        for (int l = 0; l < {w}; ++l) {{",
              "            const long i = (i0 + l < N) ? i0 + l : N - 1;  /* the last block is padded */",
              "            tl[l] = t[i * ts];",
              f"            for (int j = 0; j < {ny}; ++j) yl[l * {max(ny, 1)} + j] = Y[i * {ny} + j];",
              f"            for (int j = 0; j < {np_}; ++j) pl[l * {max(np_, 1)} + j] = P[i * ps + j];",
              "        }",
              f"        {name}_block(tl, yl, pl, ol);",
              f"        for (int l = 0; l < {w} && i0 + l < N; ++l) {{",
              f"            for (int j = 0; j < {size}; ++j) OUT[(i0 + l) * {size} + j] = ol[l * {size} + j];",
              f"            if ({k} > 0 && isnan(ol[l * {size} + {r}])) ++bad;",
              "        }",
              "    }",
              "    return bad;",
              "}"]
    return "\n".join(lines)


def c_text(program: Program, groups: Sequence, solve: tuple | None = None) -> str:
    """:func:`c_source`, or ``""`` where the program has a function without a C translation (the Python
    code is used then)."""
    try:
        return c_source(program, groups, solve)
    except (SimulationError, TypeError, ValueError, RuntimeError):  # e.g. a complex constant
        return ""


def find_compiler() -> str | None:
    """The C compiler: ``$CC`` if set (and found), else ``cc``, ``gcc`` or ``clang`` on the path; None if none."""
    env = os.environ.get("CC")
    for cand in ([env] if env else []) + ["cc", "gcc", "clang"]:
        path = shutil.which(cand)
        if path:
            return path
    return None


#: The files of the code cache this module writes (the compiled libraries), as glob patterns.
CACHE_FILES = ("anholo_*.so",)


def cache_directory(required: bool = True) -> Path | None:
    """The code cache: ``$ANHOLO_CACHE``, else ``~/.cache/anholo/codegen``, else a temporary directory — the
    first that is writable; without one, SimulationError (``required``) or None."""
    base = os.environ.get("ANHOLO_CACHE")
    candidates = [Path(base)] if base else []
    candidates += [Path.home() / ".cache" / "anholo" / "codegen", Path(tempfile.gettempdir()) / "anholo-codegen"]
    for d in candidates:
        try:
            d.mkdir(parents=True, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    if required:
        raise SimulationError("no writable directory for the compiled code; set ANHOLO_CACHE to one.")
    return None


def store_json(path: Path, data) -> None:
    """Write ``data`` as JSON to ``path`` in the code cache atomically (a temporary file, then a rename: a
    concurrent reader sees the old file or the new one, never a part); a failure leaves no file."""
    import json

    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


_LIBRARIES: dict = {}  # digest -> ctypes.CDLL (per process)


#: Callables ``notify(message)`` told before a C build starts (the command line registers its progress line).
BUILD_NOTICES: list = []


def vector_flags() -> tuple:
    """Extra compiler flags for the vectorised kernel on this CPU: ``-mavx512f`` where the processor has
    AVX-512 (8 doubles in one register), ``-mavx2`` where it has AVX2 (4), else none (SSE2) — read from
    Linux's ``/proc/cpuinfo``.  Never
    ``-march=native`` or FMA: a cached library must run on this CPU type and give the bits of the scalar
    code (``-ffp-contract=off``)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    if platform.machine() not in ("x86_64", "AMD64"):
                        return ()
                    words = set(line.split())
                    return ("-mavx512f",) if "avx512f" in words else ("-mavx2",) if "avx2" in words else ()
    except OSError:
        pass
    return ()


def build_library(source: str, extra_flags: Sequence = ()) -> ctypes.CDLL:
    """The shared library of C ``source`` (:func:`c_source` and code built on it, e.g. the compiled
    integrators of :mod:`anholo.numerics.batch_loop`): loaded from the cache, else compiled into it.

    Raises
    ------
    SimulationError
        If no C compiler is found or the build fails (one line from the compiler)."""
    compiler = find_compiler()
    if compiler is None:
        raise SimulationError("no C compiler found (looked for $CC, cc, gcc, clang); install one or use "
                              "ANHOLO_CODEGEN=python.")
    try:
        return _build(source, compiler, tuple(extra_flags))
    except (OSError, subprocess.SubprocessError) as exc:
        raise SimulationError(f"the C compiler {compiler} failed on the generated code ({exc}); use "
                              "ANHOLO_CODEGEN=python.") from None


def _build(source: str, compiler: str, extra_flags: tuple = ()) -> ctypes.CDLL:
    """The shared library of ``source``: loaded from the cache, else compiled into it (atomically)."""
    flags = tuple(_CFLAGS) + tuple(extra_flags)
    key = "\0".join([source, " ".join(flags), compiler, platform.machine(), platform.system()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    lib = _LIBRARIES.get(digest)
    if lib is not None:
        return lib
    d = cache_directory()
    target = d / f"anholo_{digest}.so"
    if not target.exists():
        for notify in BUILD_NOTICES:  # the command line says why it waits (a bicycle takes seconds)
            notify(f"compiling the generated code with {compiler} (once on this machine; cached in {d}) ...")
        fd, tmp_c = tempfile.mkstemp(suffix=".c", dir=d)
        with os.fdopen(fd, "w") as fh:
            fh.write(source)
        tmp_so = tmp_c[:-2] + ".so"
        try:
            proc = subprocess.run([compiler, *flags, "-o", tmp_so, tmp_c, "-lm"], capture_output=True, text=True,
                                  timeout=600)
            if proc.returncode != 0:
                raise OSError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "compiler failed")
            os.replace(tmp_so, target)
        finally:
            for f in (tmp_c, tmp_so):
                if os.path.exists(f):
                    os.unlink(f)
    lib = ctypes.CDLL(str(target))
    _LIBRARIES[digest] = lib
    return lib


def operation_count(program: Program) -> dict:
    """The arithmetic of the straight-line program as generated (its pruned definitions and outputs):
    ``{"add": …, "mul": …, "div": …, "pow": …, "function": …, "total": …, "definitions": …}``.

    Counted as :func:`sympy.count_ops` counts a cse'd expression: an ``Add`` of ``k`` terms is ``k − 1``
    additions or subtractions, a ``Mul`` of ``k`` factors ``k − 1`` multiplications, a factor ``−1`` being a
    sign (no operation), a small integer power ``x^m`` ``|m| − 1`` multiplications (and a division if
    ``m < 0``), any other power or function one operation.  The solve of an implicit form is not counted."""
    c = {"add": 0, "mul": 0, "div": 0, "pow": 0, "function": 0}
    p = program.pruned()
    stack = [v for _, v in p.pairs] + list(p.outputs)
    while stack:
        e = stack.pop()
        if isinstance(e, se.Symbol) or e.is_Number:
            continue
        args = e.args
        if isinstance(e, se.Add):
            c["add"] += len(args) - 1
        elif isinstance(e, se.Mul):
            c["mul"] += len(args) - 1 - (1 if args[0] == -1 else 0)
        elif isinstance(e, se.Pow):
            base, ex = args
            if ex.is_Integer and 0 < abs(int(ex)) <= 4:
                c["mul"] += abs(int(ex)) - 1
                c["div"] += 1 if int(ex) < 0 else 0
            else:
                c["pow"] += 1
            stack.append(base)
            continue
        else:
            c["function"] += 1
        stack.extend(args)
    c["total"] = sum(c.values())
    c["definitions"] = len(p.pairs)
    return c


# --- Python ----------------------------------------------------------------------------------------
#: Up to this many unknowns the Python code solves ``M x = F`` unrolled (straight-line, one local per entry), beyond
#: it through :func:`~anholo.algebra.program.pivoted_solve` (a loop).
UNROLL = 4


def _unrolled_solve(k: int, head: str, m: list, f: list) -> list:
    """Python lines ending in ``return [head…, x…]`` with ``M x = F`` solved by the elimination with partial
    pivoting of :func:`~anholo.algebra.program.pivoted_solve` unrolled: the same operations in the same order (so
    the same values), the pivot rows chosen by ``if`` statements."""
    a = [[f"_m{i}_{c}" for c in range(k)] for i in range(k)]
    lines = [f"{a[i][c]} = {m[i * k + c]}" for i in range(k) for c in range(k)] + [f"_b{i} = {f[i]}" for i in range(k)]
    for j in range(k):
        lines.append(f"_p, _v = {j}, abs({a[j][j]})")
        for i in range(j + 1, k):
            lines += [f"if abs({a[i][j]}) > _v:", f"    _p, _v = {i}, abs({a[i][j]})"]
        lines += ["if not _v > 0.0 or _v == _INF:", f"    return [{head}" + "nan, " * k + "]"]
        for i in range(j + 1, k):
            row_j, row_i = ", ".join(a[j][j:] + [f"_b{j}"]), ", ".join(a[i][j:] + [f"_b{i}"])
            lines += [f"if _p == {i}:", f"    {row_j}, {row_i} = {row_i}, {row_j}"]
        lines += [f"_inv = 1.0 / {a[j][j]}"] if j + 1 < k else []
        for i in range(j + 1, k):
            lines += [f"_l = {a[i][j]} * _inv", "if _l:"]
            lines += [f"    {a[i][c]} = {a[i][c]} - _l * {a[j][c]}" for c in range(j + 1, k)]
            lines.append(f"    _b{i} = _b{i} - _l * _b{j}")
    for i in reversed(range(k)):
        lines.append(f"_x{i} = (_b{i}" + "".join(f" - {a[i][c]} * _x{c}" for c in range(i + 1, k)) + f") / {a[i][i]}")
    return lines + [f"return [{head}" + "".join(f"_x{i}, " for i in range(k)) + "]"]


def python_source(program: Program, groups: Sequence, solve: tuple | None = None, name: str = "_f") -> str:
    """Python source of ``name(t, y, p)`` returning a list (the same contract as :func:`c_source`)."""
    names, unpack = argument_locals(groups, used=_layout(program, groups))
    lines, outs = program.body(names)
    body = unpack + lines
    if solve is None:
        body.append("return [" + ", ".join(outs) + "]")
    else:
        r, k = solve
        if len(outs) != r + k * k + k:
            raise SimulationError(f"the program has {len(outs)} outputs, not the {r} + {k}² + {k} of an implicit "
                                  "right-hand side.")
        head = "".join(o + ", " for o in outs[:r])
        if k > UNROLL:
            body.append(f"return [{head}] + _gauss([{''.join(o + ', ' for o in outs[r:r + k * k])}], "
                        f"[{''.join(o + ', ' for o in outs[r + k * k:])}], {k})")
        else:
            body += _unrolled_solve(k, head, outs[r:r + k * k], outs[r + k * k:])
    return "\n".join([f"def {name}(t, y, p):"] + ["    " + x for x in body]) + "\n"


# --- the callable ------------------------------------------------------------------------------------
def chosen_backend(backend: str | None = None) -> str:
    """``backend`` or ``$ANHOLO_CODEGEN`` (default ``auto``), checked."""
    b = (backend or os.environ.get("ANHOLO_CODEGEN") or "auto").strip().lower()
    if b not in BACKENDS:
        raise SimulationError(f"unknown code generator backend {b!r}; choose one of {', '.join(BACKENDS)} "
                              "(argument backend= or the environment variable ANHOLO_CODEGEN).")
    return b


@dataclass(frozen=True, eq=False)
class GeneratedFunction:
    """``f(t, y, p) -> numpy array`` generated from a program (:func:`generate`).

    Attributes
    ----------
    backend : str
        ``"c"`` or ``"python"`` (the one that was built).
    size : int
        Length of the result.
    source : str
        The generated source (C or Python).
    """

    backend: str
    size: int
    source: str
    n_state: int
    n_params: int
    _fn: object = field(default=None, repr=False)
    _ext: object = field(default=None, repr=False)  # the same function as a CPython builtin (no ctypes)
    _bound: object = field(default=None, repr=False)  # bound(p, t, y) -> a new array (numpy's C API)

    def __reduce__(self):  # pickles as its source (rebuilt, or loaded from the cache, on unpickling)
        return (_restore, (self.backend, self.size, self.source, self.n_state, self.n_params))

    def __call__(self, t, y, p) -> np.ndarray:
        """The outputs at time ``t``, state ``y`` and parameters ``p`` (sequences of floats)."""
        if self.backend == "c":
            y = np.ascontiguousarray(y, dtype=float)
            p = np.ascontiguousarray(p, dtype=float)
            out = np.empty(self.size)
            self._fn(float(t), y.ctypes.data, p.ctypes.data, out.ctypes.data)
            return out
        return np.array(self._fn(float(t), list(map(float, y)), list(map(float, p))), dtype=float)

    def bind(self, p: Sequence):
        """``g(t, y)`` with the parameter values ``p`` fixed: the fast form for an integrator (the state
        is copied into a preallocated buffer; each call returns a new array)."""
        p = [float(x) for x in p]
        if len(p) != self.n_params:
            raise SimulationError(f"{len(p)} parameter values given, the generated function takes {self.n_params}.")
        if self.backend == "python":
            fn = self._fn

            def g(t, y):
                return np.array(fn(t, y.tolist() if type(y) is np.ndarray else list(y), p))

            g.backend = "python"
            return g
        pbuf = np.array(p + [0.0], dtype=float)  # never empty: a valid pointer
        ybuf = np.zeros(max(self.n_state, 1))
        obuf = np.zeros(max(self.size, 1))
        fn, pa, ya, oa, size = self._fn, pbuf.ctypes.data, ybuf.ctypes.data, obuf.ctypes.data, self.size
        keep = (pbuf, ybuf, obuf)

        ext = self._ext
        if self._bound is not None and size == len(obuf):
            g = functools.partial(self._bound, pbuf)  # the state converted (when it must be) in C
        elif ext is not None and size == len(obuf):
            def g(t, y, _keep=keep):
                if not ext(t, y, pbuf, obuf):  # not a contiguous float64 array of the state's length
                    ybuf[:] = y
                    fn(t, ya, pa, oa)
                return obuf.copy()
        elif size == len(obuf):
            def g(t, y, _keep=keep):
                ybuf[:] = y
                fn(t, ya, pa, oa)
                return obuf.copy()  # (a slice and its copy cost 0.3 µs more)
        else:
            def g(t, y, _keep=keep):
                ybuf[:] = y
                fn(t, ya, pa, oa)
                return obuf[:size].copy()

        g.backend = "c"
        return g


def generate(program: Program, groups: Sequence, solve: tuple | None = None,
             backend: str | None = None) -> GeneratedFunction:
    """Generate ``f(t, y, p)`` from ``program`` (module docstring).

    Parameters
    ----------
    program : Program
    groups : sequence of (name, symbols)
        ``("t", [time])``, ``("y", state)``, ``("p", parameters)``: where each argument of the program is
        read at run time.
    solve : (r, k) or None
        Read the outputs as ``r`` rates, ``M`` (k × k) and ``F`` and return the rates and ``M⁻¹F``.
    backend : {"auto", "c", "python"} or None
        None: ``$ANHOLO_CODEGEN`` (default ``auto``: C where a compiler builds it, else Python).

    Raises
    ------
    SimulationError
        If ``backend="c"`` and no C compiler is found or the build fails, or an argument has no place.
    """
    b = chosen_backend(backend)
    gdict = {g: list(s) for g, s in groups}
    n_state, n_params = len(gdict.get("y", ())), len(gdict.get("p", ()))
    size = len(program.outputs) if solve is None else solve[0] + solve[1]
    c_src = c_text(program, groups, solve) if b != "python" and find_compiler() is not None else ""
    return from_sources(c_src, python_source(program, groups, solve), size, n_state, n_params, b)


def generate_jacobian(program: Program, groups: Sequence, solve: tuple | None = None,
                      backend: str | None = None) -> GeneratedFunction:
    """``f(t, y, p) -> (ẋ, J)`` flattened (``n + n²`` entries, ``J`` row-major, ``J_ij = ∂ẋ_i/∂y_j``): the
    right-hand side of :func:`generate` and its Jacobian with respect to the state, from the same program.

    The derivatives of the outputs are :meth:`Program.derivatives` (forward mode along the shared
    definitions, nothing expanded).  For an implicit right-hand side (``solve=(r, k)``: rates ``K``, then
    ``M``, ``F``, ``ẋ = (K, x)`` with ``M x = F``) the Jacobian of ``x`` is ``∂x/∂y_j = M⁻¹ (∂F/∂y_j −
    (∂M/∂y_j) x)`` (differentiating ``M x = F``), each column solved by the same elimination as ``x`` —
    the Jacobian an implicit integrator (Radau, BDF) or a linearisation needs, at the cost of about
    ``n`` derivative sweeps of the program, with no finite differences."""
    b = chosen_backend(backend)
    gdict = {g: list(s) for g, s in groups}
    state = gdict.get("y", [])
    ny, n_params = len(state), len(gdict.get("p", ()))
    dprog, _ = program.derivatives(state)
    n_out = len(program.outputs)
    r, k = solve if solve is not None else (n_out, 0)
    if r + k != ny:
        raise SimulationError(f"a Jacobian needs as many rates as states ({r} + {k} for {ny} states).")
    size = ny + ny * ny
    c_src = ""
    if b != "python" and find_compiler() is not None:
        try:
            body = c_source(dprog, groups, None, name="anholo_o")
        except (SimulationError, TypeError, ValueError, RuntimeError):
            body = ""
        if body:
            c_src = body + _JAC_C % {"n_all": len(dprog.outputs), "n_out": n_out, "r": r, "k": k, "ny": ny,
                                     "kk": max(k * k, 1), "k1": max(k, 1)}
    py = python_source(dprog, groups, None, name="_o") + _JAC_PY % {"n_out": n_out, "r": r, "k": k, "ny": ny}
    return from_sources(c_src, py, size, ny, n_params, b)


_JAC_C = """
int anholo_f(double t, const double *y, const double *p, double *out) {
    double o[%(n_all)d], A[%(kk)d], b[%(k1)d], x[%(k1)d], z[%(k1)d];
    int status = 0;
    anholo_o(t, y, p, o);
    const double *D = o + %(n_out)d;  /* D[i * NY + j] = d out_i / d y_j */
    for (int i = 0; i < %(r)d; ++i) {
        out[i] = o[i];
        for (int j = 0; j < %(ny)d; ++j) out[%(ny)d + i * %(ny)d + j] = D[i * %(ny)d + j];
    }
    if (%(k)d > 0) {
        for (int i = 0; i < %(k)d * %(k)d; ++i) A[i] = o[%(r)d + i];
        for (int i = 0; i < %(k)d; ++i) b[i] = o[%(r)d + %(k)d * %(k)d + i];
        status = _elim(%(k)d, A, b, x);
        for (int a = 0; a < %(k)d; ++a) out[%(r)d + a] = x[a];
        for (int j = 0; j < %(ny)d; ++j) {
            for (int i = 0; i < %(k)d * %(k)d; ++i) A[i] = o[%(r)d + i];
            for (int a = 0; a < %(k)d; ++a) {
                double s = D[(%(r)d + %(k)d * %(k)d + a) * %(ny)d + j];
                for (int c = 0; c < %(k)d; ++c) s -= D[(%(r)d + a * %(k)d + c) * %(ny)d + j] * x[c];
                b[a] = s;
            }
            status |= _elim(%(k)d, A, b, z);
            for (int a = 0; a < %(k)d; ++a) out[%(ny)d + (%(r)d + a) * %(ny)d + j] = z[a];
        }
    }
    return status;
}
"""

_JAC_PY = """
def _f(t, y, p):
    o = _o(t, y, p)
    n_out, r, k, ny = %(n_out)d, %(r)d, %(k)d, %(ny)d
    D = o[n_out:]
    head = o[:r]
    J = [D[i * ny:(i + 1) * ny] for i in range(r)]
    if k:
        M = o[r:r + k * k]
        x = _gauss(M, o[r + k * k:r + k * k + k], k)
        head = head + x
        cols = []
        for j in range(ny):
            rhs = [D[(r + k * k + a) * ny + j] - sum(D[(r + a * k + c) * ny + j] * x[c] for c in range(k))
                   for a in range(k)]
            cols.append(_gauss(M, rhs, k))
        J += [[cols[j][a] for j in range(ny)] for a in range(k)]
    return head + [v for row in J for v in row]
"""


_GENERATED: dict = {}  # (digest of the sources, backend) -> GeneratedFunction (per process)


def from_sources(c_src: str, py_src: str, size: int, n_state: int, n_params: int,
                 backend: str | None = None) -> GeneratedFunction:
    """The callable of already generated sources (:func:`c_source`, :func:`python_source` named ``_f``):
    the C one built (cached) when the backend allows and a compiler works, else the Python one.  Used by
    code that keeps its sources as text (:class:`~anholo.numerics.compile.CompiledSystem` pickles as its
    source)."""
    b = chosen_backend(backend)
    key = (hashlib.sha256((c_src + "\0" + py_src).encode()).hexdigest(), b)
    hit = _GENERATED.get(key)
    if hit is not None:
        return hit
    out = None
    if b in ("auto", "c"):
        compiler = find_compiler()
        if b == "c" and compiler is None:
            raise SimulationError("no C compiler found (looked for $CC, cc, gcc, clang); install one or use "
                                  "ANHOLO_CODEGEN=python.")
        if b == "c" and not c_src:
            raise SimulationError("no C source was generated for this function; use ANHOLO_CODEGEN=python.")
        if compiler is not None and c_src:
            lib, ext, bound = build_with_extension(c_src, compiler, n_state, size, _build, cache_directory())
            if lib is None:
                try:
                    lib = _build(c_src, compiler)
                except (OSError, subprocess.SubprocessError, SimulationError) as exc:
                    if b == "c":
                        raise SimulationError(f"the C compiler {compiler} failed on the generated code ({exc}); "
                                              "use ANHOLO_CODEGEN=python.") from None
            if lib is not None:
                fn = lib.anholo_f
                fn.restype = ctypes.c_int
                fn.argtypes = (ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
                out = GeneratedFunction("c", size, c_src, n_state, n_params, fn, ext, bound)
    if out is None:
        ns = dict(MATH_NAMESPACE, _gauss=pivoted_solve, _INF=math.inf)
        exec(compile(py_src, "<anholo generated>", "exec"), ns)  # noqa: S102 - generated code
        out = GeneratedFunction("python", size, py_src, n_state, n_params, ns["_f"])
    _GENERATED[key] = out
    return out


def _restore(backend: str, size: int, source: str, n_state: int, n_params: int) -> GeneratedFunction:
    if backend == "c":
        return from_sources(source, "", size, n_state, n_params, "c")
    return from_sources("", source, size, n_state, n_params, "python")


# --- expressions to a numerical function (every numerical use outside the integrators' programs) ----------
_SCALAR_TYPES = frozenset({float, int, np.float64, np.int64})
#: Up to this many points :meth:`ExpressionFunction.vector` loops over the one-point code, beyond it the numpy
#: code runs once over all points (measured on 28 expressions of the rolling disk: 20 points 0.10 ms by the loop,
#: 0.29 ms by numpy; 200 points 0.61 ms against 0.18 ms — numpy pays about a microsecond per operation).
_LOOP_POINTS = 32


def _engine_exprs(exprs: list, memo: dict | None = None) -> list:
    """sympy or symengine expressions as symengine ones (sympy DAGs converted once per distinct node)."""
    from .engine import to_engine_dag

    out, memo = [], {} if memo is None else memo
    for e in exprs:
        if isinstance(e, se.Basic):
            out.append(e)
            continue
        try:
            out.append(to_engine_dag([e], memo)[0])
        except (TypeError, AttributeError):  # e.g. a Piecewise: symengine's tree conversion
            out.append(se.sympify(e))
    return out


def _check_functions(exprs: list) -> None:
    """Raise SimulationError naming the first function of ``exprs`` the printer cannot translate (before any
    code is generated; :func:`~anholo.algebra.program.untranslated`)."""
    seen, stack = set(), list(exprs)
    while stack:
        e = stack.pop()
        if e in seen or isinstance(e, se.Symbol) or e.is_Number:
            continue
        seen.add(e)
        label = untranslated(e)
        if label is not None:
            raise SimulationError(f"the expression holds the function {label}, which the code generator cannot "
                                  f"evaluate (known: {_KNOWN_TEXT}); give it a closed form "
                                  "(undefined functions: anholo.algebra.numeric.concrete_functions).")
        stack.extend(e.args)


def _template(obj):
    """``(flat expressions, rebuild)`` of an expression, a sequence or a matrix of them (nested)."""
    if hasattr(obj, "shape") and hasattr(obj, "tolist") and not isinstance(obj, np.ndarray) or (
            isinstance(obj, np.ndarray) and obj.dtype == object):
        rows = [list(r) for r in obj.tolist()]
        shape = (len(rows), len(rows[0]) if rows else 0)
        flat = [e for r in rows for e in r]
        return flat, lambda vals, shape=shape: np.asarray(vals).reshape(shape + np.shape(vals)[1:])
    if isinstance(obj, (list, tuple)):
        parts = [_template(x) for x in obj]
        if all(p[1] is None for p in parts):  # a vector of expressions
            return [p[0][0] for p in parts], lambda vals: np.asarray(vals)
        flat, cuts = [], []
        for f, _ in parts:
            cuts.append((len(flat), len(flat) + len(f)))
            flat.extend(f)

        def rebuild(vals, parts=parts, cuts=cuts):
            return [b(vals[i:j]) if b is not None else np.asarray(vals[i])[()]
                    for (f, b), (i, j) in zip(parts, cuts)]
        return flat, rebuild
    return [obj], None


@dataclass(frozen=True, eq=False)
class ExpressionFunction:
    """Expressions of ``args`` as one generated function (:func:`expression_function`).

    ``f(*values)``: one value per argument — floats (one point: the scalar code, C or :mod:`math`) or
    numpy arrays of points broadcast together (the Python code over :mod:`numpy`, every shared
    subexpression one array); the result has the form of the expressions given (a float, an array, an
    array per matrix, a list for a nested sequence), the points on the trailing axes.
    ``f.vector(x)``: the flat outputs at ``x`` = the argument vector (``(len(args),)``, or ``(N, len(args))``
    for N points, giving ``(N, size)``).  Values follow IEEE arithmetic in every backend: ``sqrt`` of a
    negative number is ``nan``, a division by zero ``±inf`` (no exception)."""

    args: tuple
    size: int
    backend: str
    _rebuild: object = field(repr=False)
    _point: object = field(repr=False)  # 1-D float array of the arguments -> array of the outputs
    _array: object = field(repr=False)  # arrays -> list of arrays
    dtype: type = float
    _scalar: object = field(default=None, repr=False)  # the Python code at one point: floats -> list

    def _flat(self, values) -> np.ndarray:
        if self.dtype is float and all(isinstance(v, (float, int, np.floating, np.integer)) for v in values):
            try:
                return self._point(np.array(values, dtype=float))
            except (ValueError, ZeroDivisionError, OverflowError):  # math's domain errors: IEEE values instead
                pass
        arrays = np.broadcast_arrays(*[np.asarray(v, dtype=self.dtype) for v in values]) if values else []
        shape = arrays[0].shape if arrays else ()
        with np.errstate(all="ignore"):
            out = self._array(*arrays)
        return np.array([np.broadcast_to(np.asarray(o, dtype=self.dtype), shape) for o in out], dtype=self.dtype).reshape(
            (self.size,) + shape)

    def __call__(self, *values):
        if len(values) != len(self.args):
            raise SimulationError(f"{len(values)} values given, the function takes {len(self.args)} "
                                  f"({', '.join(map(str, self.args))}).")
        if self._scalar is not None and _SCALAR_TYPES.issuperset(map(type, values)):  # one point, Python
            try:
                flat = self._scalar(*values)
                return flat[0] if self._rebuild is None else self._rebuild(flat)
            except (ValueError, ZeroDivisionError, OverflowError):
                pass
        flat = self._flat(values)
        return flat[0][()] if self._rebuild is None else self._rebuild(flat)

    def vector(self, x, out: np.ndarray | None = None) -> np.ndarray:
        """The flat outputs at the argument vector ``x`` (or the rows of ``x``); into ``out`` if given."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim == 1 and self.dtype is float:
            try:
                res = self._point(x)
            except (ValueError, ZeroDivisionError, OverflowError):
                res = self._flat(list(x))
        elif x.ndim == 1:
            res = self._flat(list(x))
        elif self.dtype is float and len(x) <= _LOOP_POINTS:  # few points: the scalar code point by point
            res = np.empty((len(x), self.size))
            for i, row in enumerate(x):
                try:
                    res[i] = self._point(row)
                except (ValueError, ZeroDivisionError, OverflowError):
                    res[i] = self._flat(list(row))
        else:
            res = self._flat(list(x.T))
            res = np.broadcast_to(res.reshape(self.size, -1), (self.size, x.shape[0])).T
        if out is not None:
            out.reshape(res.shape)[...] = res
            return out
        return res


def expressions_program(args: Sequence, exprs: Sequence, memo: dict | None = None) -> Program:
    """The straight-line program of sympy or symengine ``exprs`` (their common subexpressions shared) as
    functions of the symbols ``args`` (matched by name); ``memo``: a dictionary shared by several calls, so that
    a sympy subexpression common to them is converted once.

    Raises
    ------
    SimulationError
        If an expression holds a function without a translation, or a symbol that is not among ``args``."""
    eargs = tuple(se.Symbol(str(a)) for a in args)
    eexprs = _engine_exprs(list(exprs), memo)
    _check_functions(eexprs)
    stray = sorted({str(s) for e in eexprs for s in e.free_symbols} - {str(a) for a in eargs})
    if stray:
        raise SimulationError(f"the expressions use {', '.join(stray)}, which are not arguments of the generated "
                              "function; give them values first or pass them as arguments.")
    return Program.from_expressions(eargs, eexprs)


def expression_function(args: Sequence, exprs, backend: str | None = "python",
                        dtype: type = float) -> ExpressionFunction:
    """The one numerical form of expressions: ``exprs`` (sympy or symengine; one expression, a sequence, a
    matrix, or a sequence of these) as functions of the symbols ``args`` (matched by name), generated from one
    straight-line :class:`~anholo.algebra.program.Program` with the common subexpressions of all outputs
    (each computed once per call; the code generation of PyDy, Gede, Peterson, Sinha & Moore (2013)).

    ``backend``: ``"python"`` (default: :mod:`math` at one point, :mod:`numpy` over arrays of points — no
    build), ``"c"`` or ``"auto"`` (the C code of :func:`generate` at one point, built once and cached: for
    functions called many thousand times, e.g. inside an integrator's Newton loop), ``None``:
    ``$ANHOLO_CODEGEN``.  Parameters are simply further ``args``: one generation serves every set of values.
    ``dtype=complex``: complex arguments and values (the :mod:`numpy` code only; ``sqrt(-1) = 1j``).

    Raises
    ------
    SimulationError
        If an expression holds a function without a translation (e.g. an undefined function ``f(x)``: give
        it a closed form first), or a symbol that is not among ``args``.
    """
    flat, rebuild = _template(exprs)
    program = expressions_program(args, flat)
    eargs = program.args
    local = {str(a): f"a{i}" for i, a in enumerate(eargs)}
    header = "def _g(" + ", ".join(f"a{i}" for i in range(len(eargs))) + "):"
    lines, outs = program.body(local, module="numpy.")
    ns = {"numpy": np}
    exec(compile("\n".join([header] + ["    " + x for x in lines] + ["    return [" + ", ".join(outs) + "]"]),
                 "<anholo expressions>", "exec"), ns)  # noqa: S102 - generated code
    array_fn = ns["_g"]
    b = "python" if dtype is complex else chosen_backend(backend)
    point, used = None, "python"
    if b != "python" and find_compiler() is not None:
        try:
            g = generate(program, [("y", eargs)], backend=b).bind([])
            if g.backend == "c":
                point, used = (lambda x, g=g: g(0.0, x)), "c"
        except SimulationError:
            if b == "c":
                raise
    scalar = None
    if point is None:
        scalar = program.compile()
        point = lambda x, fn=scalar: np.array(fn(*x.tolist()), dtype=float)  # noqa: E731
    return ExpressionFunction(eargs, len(flat), used, rebuild, point, array_fn, dtype,
                              scalar if dtype is float else None)


def compiled(symbols: Sequence, exprs: Sequence, real: bool = True):
    """``f(values) -> array`` of sympy ``exprs`` at the argument list ``values`` of the sympy ``symbols`` (by
    name): the project's one code generator (:func:`expression_function`, common
    subexpressions shared, the DAG-aware conversion), complex arguments and values where ``real`` is False;
    None if it cannot take them (an undefined function, two symbols of one name)."""
    if len({s.name for s in symbols}) != len(symbols):
        return None
    try:
        f = expression_function([se.Symbol(s.name) for s in symbols] or [se.Symbol("_unused")],
                                list(exprs), dtype=float if real else complex)
    except (TypeError, RuntimeError, NotImplementedError, SimulationError):
        return None
    return f.vector

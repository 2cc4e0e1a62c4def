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
  a batch) loads it without compiling.  Called through :mod:`ctypes` with the state copied into a
  preallocated buffer (docs/benchmarks.rst, *Code generation*, for the measured costs).
* ``"python"``: the same program as Python with :mod:`math` (one local per definition), the same
  elimination in a small Python function — no compiler needed (the fallback; ``auto`` uses it when no
  compiler works).

A singular ``M`` (a zero pivot) or a non-finite entry gives ``nan`` for ``M⁻¹F`` (where LAPACK's
solve would raise), the explicit rates unchanged.
"""

from __future__ import annotations

import ctypes
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
from .engine import kink_derivative, se
from .program import MATH_NAMESPACE, Program

__all__ = ["GeneratedFunction", "generate", "from_sources", "c_source", "c_text", "python_source", "find_compiler", "BACKENDS",
           "chosen_backend"]

BACKENDS = ("auto", "c", "python")
_CFLAGS = ("-O2", "-shared", "-fPIC", "-fno-math-errno")


# --- the C printer ---------------------------------------------------------------------------------
_C_FUNCS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
            "atan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh",
            "acosh": "acosh", "atanh": "atanh", "exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "fabs"}
_RECIPROCAL = {"sec": "cos", "csc": "sin", "cot": "tan"}


class _CPrinter:
    """symengine expressions as C over local names (``double``; small integer powers multiplied out)."""

    def __init__(self, names: dict):
        self.names = names

    def __call__(self, e) -> str:
        if isinstance(e, se.Symbol):
            try:
                return self.names[str(e)]
            except KeyError:
                raise SimulationError(f"the generated code has no value for the symbol {e}; give it as a "
                                      "parameter or state of the program.") from None
        if e.is_Number:
            return _c_float(float(e))
        if isinstance(e, se.Add):
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if isinstance(e, se.Mul):
            return "(" + "*".join(self(a) for a in e.args) + ")"
        if isinstance(e, se.Pow):
            base, ex = e.args
            if ex == se.Rational(1, 2):
                return f"sqrt({self(base)})"
            if ex == se.Rational(-1, 2):
                return f"(1.0/sqrt({self(base)}))"
            if ex.is_Integer and abs(int(ex)) <= 4:
                k = int(ex)
                b = self(base)
                body = "*".join([b] * abs(k))
                return f"({body})" if k > 0 else f"(1.0/({body}))"
            return f"pow({self(base)}, {self(ex)})"
        if isinstance(e, (se.Derivative, se.Subs)):  # d|f|, d sign(f) left unevaluated by a plain diff
            return self(kink_derivative(e))
        name = type(e).__name__.lower()
        if name in _RECIPROCAL:
            return f"(1.0/{_RECIPROCAL[name]}({self(e.args[0])}))"
        if name == "sign":
            a = self(e.args[0])
            return f"_sign({a})"
        if name in _C_FUNCS:
            return f"{_C_FUNCS[name]}(" + ", ".join(self(a) for a in e.args) + ")"
        if e == se.pi:
            return _c_float(math.pi)
        if e == se.E:
            return _c_float(math.e)
        if e.is_Function:
            raise SimulationError(f"the function {type(e).__name__} has no C translation; simulate with "
                                  "ANHOLO_CODEGEN=python or rewrite it with elementary functions.")
        return _c_float(float(e))


def _c_float(x: float) -> str:
    text = repr(float(x))
    return text if any(c in text for c in ".en") else text + ".0"


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


# --- C ---------------------------------------------------------------------------------------------
def c_source(program: Program, groups: Sequence, solve: tuple | None = None, name: str = "anholo_f") -> str:
    """C source of ``int name(double t, const double *y, const double *p, double *out)``.

    ``groups`` = ``[("t", [time]), ("y", state), ("p", parameters)]`` (any of them may be empty).
    Without ``solve`` the outputs are written to ``out``; with ``solve=(r, k)`` the first ``r`` outputs,
    then ``M⁻¹F`` (module docstring).  Returns 0, or 1 where ``M`` is singular (``out`` then ``nan``)."""
    where = _layout(program, groups)
    table = {}
    for arg, (g, i) in where.items():
        table[arg] = "t" if g == "t" else f"{g}[{i}]"
    pairs = program.pruned().pairs
    for i, (nm, _) in enumerate(pairs):
        table[str(nm)] = f"c{i}"
    pr = _CPrinter(table)
    lines = ["#include <math.h>",
             "static inline double _sign(double x) { return (double)((x > 0.0) - (x < 0.0)); }",
             f"int {name}(double t, const double *y, const double *p, double *out) {{",
             "    (void)t; (void)y; (void)p;"]
    lines += [f"    const double c{i} = {pr(v)};" for i, (_, v) in enumerate(pairs)]
    outs = [pr(o) for o in program.outputs]
    if solve is None:
        lines += [f"    out[{i}] = {o};" for i, o in enumerate(outs)]
        lines += ["    return 0;", "}"]
        return "\n".join(lines) + "\n"
    r, k = solve
    if len(outs) != r + k * k + k:
        raise SimulationError(f"the program has {len(outs)} outputs, not the {r} + {k}² + {k} of an implicit "
                              "right-hand side.")
    lines += [f"    out[{i}] = {o};" for i, o in enumerate(outs[:r])]
    if k:
        lines += [f"    double A[{k}][{k}] = {{" + ", ".join(
            "{" + ", ".join(outs[r + i * k + j] for j in range(k)) + "}" for i in range(k)) + "};",
                  f"    double b[{k}] = {{" + ", ".join(outs[r + k * k + i] for i in range(k)) + "};",
                  f"    for (int j = 0; j < {k}; ++j) {{",
                  "        int piv = j; double best = fabs(A[j][j]);",
                  f"        for (int i = j + 1; i < {k}; ++i) if (fabs(A[i][j]) > best) {{ best = fabs(A[i][j]); piv = i; }}",
                  "        if (!(best > 0.0) || !isfinite(best)) {",
                  f"            for (int i = 0; i < {k}; ++i) out[{r} + i] = NAN;",
                  "            return 1;",
                  "        }",
                  "        if (piv != j) {",
                  f"            for (int c = j; c < {k}; ++c) {{ double s = A[j][c]; A[j][c] = A[piv][c]; A[piv][c] = s; }}",
                  "            double s = b[j]; b[j] = b[piv]; b[piv] = s;",
                  "        }",
                  "        const double inv = 1.0 / A[j][j];",
                  f"        for (int i = j + 1; i < {k}; ++i) {{",
                  "            const double l = A[i][j] * inv;",
                  f"            for (int c = j + 1; c < {k}; ++c) A[i][c] -= l * A[j][c];",
                  "            b[i] -= l * b[j];",
                  "        }",
                  "    }",
                  f"    for (int i = {k - 1}; i >= 0; --i) {{",
                  "        double s = b[i];",
                  f"        for (int c = i + 1; c < {k}; ++c) s -= A[i][c] * out[{r} + c];",
                  f"        out[{r} + i] = s / A[i][i];",
                  "    }"]
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


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


def _cache_dir() -> Path:
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
    raise SimulationError("no writable directory for the compiled code; set ANHOLO_CACHE to one.")


_LIBRARIES: dict = {}  # digest -> ctypes.CDLL (per process)


#: Callables ``notify(message)`` told before a C build starts (the command line registers its progress line).
BUILD_NOTICES: list = []


def _build(source: str, compiler: str) -> ctypes.CDLL:
    """The shared library of ``source``: loaded from the cache, else compiled into it (atomically)."""
    key = "\0".join([source, " ".join(_CFLAGS), compiler, platform.machine(), platform.system()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    lib = _LIBRARIES.get(digest)
    if lib is not None:
        return lib
    d = _cache_dir()
    target = d / f"anholo_{digest}.so"
    if not target.exists():
        for notify in BUILD_NOTICES:  # the command line says why it waits (a bicycle takes seconds)
            notify(f"compiling the generated code with {compiler} (once on this machine; cached in {d}) ...")
        fd, tmp_c = tempfile.mkstemp(suffix=".c", dir=d)
        with os.fdopen(fd, "w") as fh:
            fh.write(source)
        tmp_so = tmp_c[:-2] + ".so"
        try:
            proc = subprocess.run([compiler, *_CFLAGS, "-o", tmp_so, tmp_c, "-lm"], capture_output=True, text=True,
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


# --- Python ----------------------------------------------------------------------------------------
def python_source(program: Program, groups: Sequence, solve: tuple | None = None, name: str = "_f") -> str:
    """Python source of ``name(t, y, p)`` returning a list (the same contract as :func:`c_source`)."""
    where = _layout(program, groups)
    unpack, names = [], {}
    for gname, symbols in groups:
        if gname == "t":
            names.update({str(s): "t" for s in symbols})
            continue
        local = [f"_{gname}{i}" for i in range(len(symbols))]
        names.update({str(s): x for s, x in zip(symbols, local)})
        if local and any(str(s) in where for s in symbols):
            unpack.append(", ".join(local) + ("," if len(local) == 1 else "") + f" = {gname}")
    lines, outs = program.body(names)
    body = unpack + lines
    if solve is None:
        body.append("return [" + ", ".join(outs) + "]")
    else:
        r, k = solve
        if len(outs) != r + k * k + k:
            raise SimulationError(f"the program has {len(outs)} outputs, not the {r} + {k}² + {k} of an implicit "
                                  "right-hand side.")
        body.append(f"return [{''.join(o + ', ' for o in outs[:r])}] + _gauss("
                    f"[{''.join(o + ', ' for o in outs[r:r + k * k])}], [{''.join(o + ', ' for o in outs[r + k * k:])}], {k})")
    return "\n".join([f"def {name}(t, y, p):"] + ["    " + x for x in body]) + "\n"


def _gauss(A: list, b: list, k: int) -> list:
    """``A⁻¹ b`` (``A`` row-major, ``k × k``) by elimination with partial pivoting; ``nan`` if singular."""
    A = [A[i * k:(i + 1) * k] for i in range(k)]
    b = list(b)
    for j in range(k):
        piv = max(range(j, k), key=lambda i: abs(A[i][j]))
        best = abs(A[piv][j])
        if not best > 0.0 or not math.isfinite(best):
            return [math.nan] * k
        if piv != j:
            A[j], A[piv] = A[piv], A[j]
            b[j], b[piv] = b[piv], b[j]
        inv = 1.0 / A[j][j]
        for i in range(j + 1, k):
            li = A[i][j] * inv
            if li:
                row, rj = A[i], A[j]
                for c in range(j + 1, k):
                    row[c] -= li * rj[c]
                b[i] -= li * b[j]
    x = [0.0] * k
    for i in reversed(range(k)):
        s = b[i]
        for c in range(i + 1, k):
            s -= A[i][c] * x[c]
        x[i] = s / A[i][i]
    return x


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
            try:
                lib = _build(c_src, compiler)
            except (OSError, subprocess.SubprocessError, SimulationError) as exc:
                if b == "c":
                    raise SimulationError(f"the C compiler {compiler} failed on the generated code ({exc}); use "
                                          "ANHOLO_CODEGEN=python.") from None
            else:
                fn = lib.anholo_f
                fn.restype = ctypes.c_int
                fn.argtypes = (ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
                out = GeneratedFunction("c", size, c_src, n_state, n_params, fn)
    if out is None:
        ns = dict(MATH_NAMESPACE, _gauss=_gauss)
        exec(compile(py_src, "<anholo generated>", "exec"), ns)  # noqa: S102 - generated code
        out = GeneratedFunction("python", size, py_src, n_state, n_params, ns["_f"])
    _GENERATED[key] = out
    return out


def _restore(backend: str, size: int, source: str, n_state: int, n_params: int) -> GeneratedFunction:
    if backend == "c":
        return from_sources(source, "", size, n_state, n_params, "c")
    return from_sources("", source, size, n_state, n_params, "python")

"""Helpers shared by the benchmark scripts (bench_euler_lagrange.py, bench_nonholonomic.py).

* timing with a time limit: :func:`run_limited` (SIGALRM), :class:`Timing`, :func:`time_route`;
* expression size and numerical values computed over the expression DAG, not the
  tree: :func:`count_ops_dag` (= ``sympy.count_ops``), :func:`xreplace_dag`,
  :func:`evaluate` (mpmath);
* seeded random points (:func:`random_values`);
* profiling (:func:`profile_call`) and reporting (:func:`machine_info`,
  :func:`fmt_time`, :func:`fmt_ops`, :func:`print_aligned`).

Not a benchmark itself; the scripts import it from their own directory.
"""

from __future__ import annotations

import cProfile
import datetime
import gc
import hashlib
import os
import platform
import pstats
import random
import signal
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import mpmath
import sympy as sp
from sympy.core.cache import clear_cache
from sympy.core.function import _coeff_isneg
from sympy.core.operations import LatticeOp
from sympy.external.gmpy import GROUND_TYPES
from sympy.simplify.radsimp import fraction

import anholo

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------------------
# Timing with a time limit
# --------------------------------------------------------------------------------------
class TimeLimitExceeded(BaseException):
    """Raised by SIGALRM; a BaseException so sympy's ``except Exception`` cannot swallow it."""


def _alarm(signum, frame):
    raise TimeLimitExceeded()


def run_limited(fn, limit: float):
    """Call fn() with sympy's cache cleared; raise TimeLimitExceeded after ``limit`` s."""
    clear_cache()
    gc.collect()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Timing:
    runs: list = field(default_factory=list)  # list of step dicts
    result: list | None = None  # natural accelerations of the last run
    timed_out: bool = False
    error: str | None = None

    def median(self, step: str = "total") -> float | None:
        if self.timed_out or self.error or not self.runs:
            return None
        return statistics.median(r[step] for r in self.runs)

    def medians(self) -> dict:
        if not self.runs or self.timed_out or self.error:
            return {}
        return {k: statistics.median(r[k] for r in self.runs) for k in self.runs[0]}


def time_route(fn, repeats: int, limit: float) -> Timing:
    timing = Timing()
    for _ in range(repeats):
        try:
            steps, result = run_limited(fn, limit)
        except TimeLimitExceeded:
            timing.timed_out = True
            timing.result = None
            break
        except Exception as exc:  # e.g. LagrangesMethod refusing the input: reported, not fatal
            timing.error = f"{type(exc).__name__}: {exc}"
            break
        timing.runs.append(steps)
        timing.result = result
    return timing


# --------------------------------------------------------------------------------------
# Result size and numerical agreement — both linear in the DAG, not the tree
# --------------------------------------------------------------------------------------
def _count_ops_node(a):
    """Operations counted at node ``a`` by ``sympy.count_ops`` and the subexpressions it descends into.

    A line-by-line copy of the Expr branch of sympy.core.function.count_ops (sympy 1.12–1.14);
    count_ops visits a tree, which for the nested output of LUsolve means ~10^7 nodes
    and ~10 minutes, whereas memoising on shared subexpressions takes seconds.
    """
    ops = 0
    if a.is_Rational:
        if a is not S_ONE:
            return int(a.p < 0) + int(a.q != 1), ()
        return 0, ()
    if a.is_Mul:
        if _coeff_isneg(a):
            ops += 1
            a = a.as_two_terms()[1] if a.args[0] is sp.S.NegativeOne else -a
        n, d = fraction(a)
        if n.is_Integer:
            return ops + 1 + int(bool(n < 0)), (d,)
        if d is not S_ONE:
            return ops + 1, ((d, n) if not d.is_Integer else (n,))
    elif a.is_Add:
        args = a.args
        children = []
        negs = 0
        for i, ai in enumerate(args):
            if _coeff_isneg(ai):
                negs += 1
                children.append(-ai)
            else:
                children.append(ai)
            if i > 0:
                ops += 1  # ADD or SUB
        if negs == len(args):
            ops += 1  # NEG
        return ops, tuple(children)
    if a.is_Pow and a.exp is sp.S.NegativeOne:
        return ops + 1, (a.base,)
    if a == sp.S.Exp1:
        return ops + 1, ()
    if a.is_Pow and a.base == sp.S.Exp1:
        return ops + 1, (a.exp,)
    if a.is_Mul or isinstance(a, LatticeOp):
        ops += len(a.args) - 1
    elif a.args and (a.is_Pow or a.is_Function or isinstance(a, (sp.Derivative, sp.Integral, sp.Sum))):
        ops += 1
    return ops, (() if a.is_Symbol else a.args)


S_ONE = sp.S.One


def count_ops_dag(exprs) -> int:
    """``sympy.count_ops(exprs)`` (tree count), computed with memoisation over shared subtrees."""
    memo: dict = {}

    def count(root):
        stack = [(root, False)]
        while stack:
            a, expanded = stack.pop()
            if a in memo:
                continue
            if not expanded:
                local, children = _count_ops_node(a)
                memo_children[a] = (local, children)
                stack.append((a, True))
                stack.extend((c, False) for c in children if c not in memo)
            else:
                local, children = memo_children.pop(a)
                memo[a] = local + sum(memo[c] for c in children)
        return memo[root]

    memo_children: dict = {}
    return sum(count(sp.sympify(e)) for e in exprs)


def xreplace_dag(exprs: list, mapping: dict) -> list:
    """``[e.xreplace(mapping) for e in exprs]``, memoised over shared subtrees.

    ``xreplace`` rebuilds a tree; on LagrangesMethod's LU output for the 6-D system
    that takes minutes, against a second here.
    """
    memo = dict(mapping)
    stack = [(e, False) for e in exprs]
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if not a.args:
            memo[a] = a
        elif not expanded:
            stack.append((a, True))
            stack.extend((c, False) for c in a.args if c not in memo)
        else:
            new_args = tuple(memo[c] for c in a.args)
            memo[a] = a.func(*new_args) if any(x is not y for x, y in zip(new_args, a.args)) else a
    return [memo[e] for e in exprs]


def evaluate(expr, point: dict) -> mpmath.mpc:
    """Numerical value of ``expr`` at ``point`` ({Symbol: mpf}), memoised over shared subtrees."""
    memo: dict = {}
    stack = [(expr, False)]
    while stack:
        a, expanded = stack.pop()
        if a in memo:
            continue
        if a.is_Symbol:
            memo[a] = point[a]
        elif a.is_Number:
            memo[a] = mpmath.mpf(a.p) / a.q if a.is_Rational else mpmath.mpf(a)
        elif not expanded:
            stack.append((a, True))
            stack.extend((c, False) for c in a.args if c not in memo)
        else:
            vals = [memo[c] for c in a.args]
            if a.is_Add:
                memo[a] = mpmath.fsum(vals)
            elif a.is_Mul:
                memo[a] = mpmath.fprod(vals)
            elif a.is_Pow:
                memo[a] = mpmath.power(vals[0], vals[1])
            elif isinstance(a, sp.Function) and hasattr(mpmath, type(a).__name__):
                memo[a] = getattr(mpmath, type(a).__name__)(*vals)
            else:
                raise TypeError(f"cannot evaluate {type(a).__name__} numerically")
    return memo[expr]


def random_values(symbols, count: int, seed: int) -> list[dict]:
    """``count`` seeded random points ({Symbol: mpf}) for ``symbols`` (sorted by name).

    Positive symbols (parameters, radii) get values in (0.5, 2); all others values in
    ±(0.25, 1.3), away from 0 (θ = 0 is the singularity of Euler angles and of
    several frames) and from ±π/2.
    """
    rng = random.Random(seed)
    symbols = sorted(set(symbols), key=sp.default_sort_key)
    points = []
    for _ in range(count):
        pt = {}
        for s in symbols:
            if s.is_positive:
                pt[s] = mpmath.mpf(rng.uniform(0.5, 2.0))
            else:  # away from 0 (θ = 0 is the gimbal-lock singularity of the Euler angles)
                pt[s] = mpmath.mpf(rng.uniform(0.25, 1.3) * rng.choice((-1, 1)))
        points.append(pt)
    return points


# --------------------------------------------------------------------------------------
# Profiling
# --------------------------------------------------------------------------------------
def profile_call(fn, limit: float, top: int = 10, callers_of: int = 0, watch=()) -> dict:
    """One call of ``fn()`` under cProfile (within the time limit); the top functions.

    Returns the anholo functions with the largest cumulative time, all functions
    with the largest own time, and — for the first ``callers_of`` of the anholo
    functions — who called them, with the cumulative time spent on behalf of each
    caller (so that, e.g., ``tidy`` called by the benchmark is told apart from
    ``tidy`` called inside anholo).

    ``watch`` is a sequence of ``(label, file suffix, function name, caller file
    suffix or None)``: for each, the cumulative time of that function (restricted
    to calls from the given file if a caller suffix is given) and its share of the
    profiled time are reported under ``"watched"`` (shares overlap: one watched
    function may call another).
    """
    profiler = cProfile.Profile()

    def target():
        profiler.enable()
        try:
            return fn()
        finally:
            profiler.disable()

    try:
        run_limited(target, limit)
        complete = True
    except TimeLimitExceeded:
        complete = False
    stats = pstats.Stats(profiler)
    rows = []
    for key, (cc, nc, tt, ct, callers) in stats.stats.items():
        filename, line, name = key
        rows.append({"function": f"{_short(filename)}:{line}({name})", "calls": nc,
                     "tottime": round(tt, 3), "cumtime": round(ct, 3),
                     "anholo": f"{os.sep}anholo{os.sep}" in filename, "_callers": callers})
    by_cum = sorted((r for r in rows if r["anholo"]), key=lambda r: -r["cumtime"])[:top]
    by_tot = sorted(rows, key=lambda r: -r["tottime"])[:top]
    total = max((r["cumtime"] for r in rows), default=0.0)
    for k, r in enumerate(by_cum[:callers_of]):
        calls = sorted(r["_callers"].items(), key=lambda kv: -kv[1][3])[:4]
        r["callers"] = [{"function": f"{_short(f)}:{ln}({nm})", "calls": v[1], "cumtime": round(v[3], 3)}
                        for (f, ln, nm), v in calls]
    watched = []
    for label, suffix, func, caller_suffix in watch:
        best = None  # the matching function with the largest cumulative time (no double counting)
        for (filename, _line, name), (cc, nc, tt, ct, callers) in stats.stats.items():
            if name != func or not filename.replace(os.sep, "/").endswith(suffix):
                continue
            if caller_suffix is not None:
                picked = [v for (f, _l, _n), v in callers.items() if f.replace(os.sep, "/").endswith(caller_suffix)]
                nc, ct = sum(v[1] for v in picked), sum(v[3] for v in picked)
            if best is None or ct > best[1]:
                best = (nc, ct)
        if best is not None:
            watched.append({"label": label, "calls": best[0], "cumtime": round(best[1], 3),
                            "share": round(best[1] / total, 3) if total else None})
    for r in rows:
        del r["anholo"], r["_callers"]
    return {"complete": complete, "profiled_seconds": round(total, 3),
            "anholo_by_cumtime": by_cum, "all_by_tottime": by_tot, "watched": watched}

def _short(filename: str) -> str:
    for marker in (f"{os.sep}anholo{os.sep}", f"{os.sep}sympy{os.sep}"):
        if marker in filename:
            return marker.strip(os.sep) + os.sep + filename.split(marker, 1)[1]
    return os.path.basename(filename)


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------
def machine_info(source_digest: str, load_at_start: tuple) -> dict:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE.parent, capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=HERE.parent,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "sympy": sp.__version__,
        "mpmath": mpmath.__version__,
        "sympy_ground_types": GROUND_TYPES,
        "anholo": anholo.__version__,
        "anholo_source_sha256": source_digest,
        "anholo_source_changed_during_run": _source_digest() != source_digest,
        "git_commit": commit,
        "src_has_uncommitted_changes": dirty,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load_at_start],  # other processes competing for CPU
    }


def _source_digest() -> str:
    """SHA-256 over anholo's .py sources: identifies the code measured even when uncommitted.

    Taken at start-up, when the modules are imported; if the files change while the
    benchmark runs, the JSON says so (``anholo_source_changed_during_run``).
    """
    root = Path(anholo.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def fmt_time(timing: Timing, step: str, limit: float) -> str:
    if timing.timed_out:
        return f">{limit:g} (skipped)"
    if timing.error:
        return "error"
    value = timing.median(step)
    return f"{value:.3f}" if value is not None else "-"


def fmt_ops(ops) -> str:
    return f"{ops:,}" if isinstance(ops, int) else "-"


def print_aligned(table: list[list[str]]) -> None:
    """Print rows of cells: the first column left-aligned, the others right-aligned, a rule under the header."""
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
    line = "  ".join("-" * w for w in widths)
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(w) if c == 0 else cell.rjust(w) for c, (cell, w) in enumerate(zip(row, widths))))
        if i == 0:
            print(line)

"""Numerical right-hand sides from the implicit form ``M(s) ẋ = F(s)``: nothing symbolic is inverted.

For a field given as a linear system in its accelerations (the nonholonomic field
on C in ``(q, v^α)``: ``q̇ = X_j v^j``, ``g_αβ v̇^β = F_α``; the Euler–Lagrange field
likewise), :func:`compile_implicit` generates Python source once — the scheme of
PyDy's code generation (Gede, Peterson, Sinha & Moore 2013) — with

* the parameter-only subexpressions computed once per parameter set (in a factory),
  the remaining common subexpressions of ``q̇``, ``M`` and ``F`` once per call (``sympy.cse``);
* the solve of ``M v̇ = F`` unrolled into the same function: for a structurally
  symmetric ``M`` (a Hessian of the kinetic energy) the square-root-free Cholesky
  factorisation ``M = L D Lᵀ`` (Golub & Van Loan 2013, Alg. 4.1.2), its structural
  zeros skipped at generation time, then ``L z = F``, ``D w = z``, ``Lᵀ v̇ = w``.  Without
  pivoting this is backward stable exactly when ``M`` is positive definite, which the
  generated code checks through the signs of the pivots ``d_i``; otherwise (an indefinite
  or singular ``M``, NaN) it falls back to LAPACK's partially pivoted LU
  (``numpy.linalg.solve``).  A non-symmetric ``M`` of size 2 is solved by Cramer's rule,
  a larger one by LAPACK;
* the single-state function works on Python floats with :mod:`math` (``y.tolist()``)
  and returns a list (``solve_ivp`` converts it); the batch function evaluates the same
  code on numpy arrays of ``N`` states (one ufunc call per operation, the factorisation
  element-wise, a stacked LAPACK solve only as the fallback).
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from ..algebra.implicit import ImplicitForm
from ..algebra import xreplace_dag
from ..algebra.expressions import without_deltas
from ..errors import MissingParameterError
from .compile import _execute, _hoist_constants, _lines, _Names

__all__ = ["ImplicitRHS", "compile_implicit"]


# --- code generation ----------------------------------------------------------------------------
def _structurally_symmetric(M) -> bool:
    return all(M[i, j] == M[j, i] for i in range(M.rows) for j in range(i + 1, M.rows))


def _cramer_lines() -> tuple[list, list, list]:
    """``M x = F`` for a general 2×2 ``M`` (names ``_m<i>_<j>``, ``_f<i>``) by Cramer's rule in floats."""
    return ["_det = _m0_0 * _m1_1 - _m0_1 * _m1_0",
            "_x0 = (_f0 * _m1_1 - _m0_1 * _f1) / _det",
            "_x1 = (_m0_0 * _f1 - _m1_0 * _f0) / _det"], [], ["_x0", "_x1"]


def _ldl_lines(k: int, zero: set) -> tuple[list, list, list]:
    """Unrolled ``M = L D Lᵀ`` and the two triangular solves; ``zero`` = {(i, j), i ≤ j: M_ij ≡ 0}."""
    lines = []
    Lz = {}  # (i, j), i > j -> True if L_ij is structurally zero

    def term(*factors):
        return " * ".join(factors)

    for j in range(k):
        parts = [term(f"_l{j}_{p}", f"_l{j}_{p}", f"_d{p}") for p in range(j) if not Lz[(j, p)]]
        lines.append(f"_d{j} = _m{j}_{j}" + "".join(" - " + x for x in parts))
        lines.append(f"@guard _d{j}")  # replaced by the check of the pivot's sign
        for i in range(j + 1, k):
            parts = [term(f"_l{i}_{p}", f"_l{j}_{p}", f"_d{p}") for p in range(j) if not Lz[(i, p)] and not Lz[(j, p)]]
            if (j, i) in zero and not parts:
                Lz[(i, j)] = True
                continue
            Lz[(i, j)] = False
            num = ("0.0" if (j, i) in zero else f"_m{j}_{i}") + "".join(" - " + x for x in parts)
            lines.append(f"_l{i}_{j} = ({num}) / _d{j}")
    for i in range(k):  # L z = F
        parts = [f"_l{i}_{p} * _z{p}" for p in range(i) if not Lz[(i, p)]]
        lines.append(f"_z{i} = _f{i}" + "".join(" - " + x for x in parts))
    for i in reversed(range(k)):  # D w = z, L^T x = w
        parts = [f"_l{p}_{i} * _x{p}" for p in range(i + 1, k) if not Lz[(p, i)]]
        lines.append(f"_x{i} = _z{i} / _d{i}" + "".join(" - " + x for x in parts))
    return lines, [f"_d{j}" for j in range(k)], [f"_x{i}" for i in range(k)]


def _guarded(lines: list, check, fallback: list) -> list:
    """Replace the ``@guard _d<j>`` markers by ``if not check(d): <fallback>``."""
    out = []
    for line in lines:
        if line.startswith("@guard "):
            out += [f"if not {check(line.split()[1])}:"] + ["    " + x for x in fallback]
        else:
            out.append(line)
    return out


def _implicit_source(states, params, kin, M, F) -> str:
    """Source of ``make_rhs(p)`` (returning ``rhs(t, y)``) and ``make_batch(p)`` (returning ``batch(Y)``)."""
    k, n = M.rows, len(kin)
    symmetric = k >= 2 and _structurally_symmetric(M)
    if k == 0:
        entries = []
    elif symmetric:
        entries = [(f"_m{i}_{j}", M[i, j]) for i in range(k) for j in range(i, k)]
    else:
        entries = [(f"_m{i}_{j}", M[i, j]) for i in range(k) for j in range(k)]
    entries += [(f"_f{i}", F[i]) for i in range(k)]
    targets = [f"_r{A}" for A in range(n)] + [name for name, _ in entries]
    exprs = list(kin) + [e for _, e in entries]
    zero = {(i, j) for i in range(k) for j in range(i, k) if M[i, j] == 0} if symmetric else set()
    if k == 0:
        solve, pivots, unknowns = [], [], []
    elif k == 1:
        solve, pivots, unknowns = ["_x0 = _f0 / _m0_0"], [], ["_x0"]
    elif symmetric:
        solve, pivots, unknowns = _ldl_lines(k, zero)
    elif k == 2:
        solve, pivots, unknowns = _cramer_lines()
    else:
        solve, pivots, unknowns = [], [], [f"_x{i}" for i in range(k)]
    def mname(i, j):
        return f"_m{min(i, j)}_{max(i, j)}" if symmetric else f"_m{i}_{j}"

    flat = "[" + ", ".join(mname(i, j) for i in range(k) for j in range(k)) + "]"
    rhsvec = "[" + ", ".join(f"_f{i}" for i in range(k)) + "]"

    out = []
    for vector in (False, True):
        names = _Names()
        ys = names.add(states, "_y")
        ps = names.add(params, "_p")
        param_syms = {names.mapping[s] for s in params}
        ex = [without_deltas(xreplace_dag(sp.sympify(e), names.mapping)) for e in exprs]  # δ(f) = 0 off f = 0
        ex, hoisted = _hoist_constants(ex, param_syms)
        printer = NumPyPrinter({"fully_qualified_modules": True}) if vector else PythonCodePrinter(
            {"fully_qualified_modules": True})
        const_lines = []
        if hoisted:
            k_repl, k_exprs = sp.cse([e for _, e in hoisted], symbols=sp.numbered_symbols("_q"), order="none")
            const_lines = _lines(k_repl, printer) + [f"{s.name} = {printer.doprint(e)}"
                                                     for (s, _), e in zip(hoisted, k_exprs)]
        repl, reduced = sp.cse(ex, symbols=sp.numbered_symbols("_c"), order="none") if ex else ([], [])
        body = _lines(repl, printer) + [f"{t} = {printer.doprint(e)}" for t, e in zip(targets, reduced)]
        unpack_p = [f"{', '.join(ps)}, = p"] if ps else []
        if not vector:
            unpack = [f"{', '.join(ys)}, = y.tolist() if type(y) is _ndarray else y"] if ys else []
            result = "[" + ", ".join([f"_r{A}" for A in range(n)] + unknowns) + "]"
            fallback = f"return _lapack([{''.join(f'_r{A}, ' for A in range(n))}], {flat}, {rhsvec})"
            if k and not solve:  # non-symmetric, k > 2: LAPACK
                tail = [fallback]
            else:  # L D L^T: valid for positive pivots (M positive definite), else LAPACK
                tail = _guarded(solve, lambda d: f"{d} > 0.0", [fallback]) + [f"return {result}"]
            lines = ["def make_rhs(p):"] + ["    " + x for x in unpack_p + const_lines]
            lines += ["    def rhs(t, y):"] + ["        " + x for x in unpack + body + tail]
            lines += ["    return rhs"]
        else:
            unpack = [f"{', '.join(ys)}, = Y.T"] if ys else []
            setup = ["_N = Y.shape[0]"]
            alloc = [f"_out = _empty(({n + k}, _N))"] + [f"_out[{A}] = _r{A}" for A in range(n)]
            lap = [f"_lapack_batch(_out[{n}:], {flat}, {rhsvec})"] if k else []
            results = [f"_r{A}" for A in range(n)] + [f"_x{i}" for i in range(k)]
            if k and solve:
                tail = _guarded(solve, lambda d: f"_positive({d})", alloc + lap + ["return _out.T"])
                arrays = _array_names(set(ys), repl, targets, reduced, solve)
                if all(r in arrays for r in results):  # one copy into the result, no per-row stores
                    tail += [f"return _array([{', '.join(results)}]).T"]
                else:  # some entries are constants: broadcast row by row
                    tail += alloc + [f"_out[{n + i}] = _x{i}" for i in range(k)] + ["return _out.T"]
            else:
                tail = alloc + lap + ["return _out.T"]
            lines = ["def make_batch(p):"] + ["    " + x for x in unpack_p + const_lines]
            lines += ["    def batch(Y):"] + ["        " + x for x in setup + unpack + body + tail]
            lines += ["    return batch"]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _array_names(states: set, repl, targets, reduced, solve) -> set:
    """The generated names that hold arrays (depend on the state) in the batch function."""
    arrays = set(states)
    for s, e in repl:
        if any(a.name in arrays for a in e.free_symbols):
            arrays.add(s.name)
    for t, e in zip(targets, reduced):
        if any(a.name in arrays for a in e.free_symbols):
            arrays.add(t)
    for line in solve:
        if not line.startswith("@"):
            name, rhs = line.split(" = ", 1)
            if any(tok in arrays for tok in _NAME.findall(rhs)):
                arrays.add(name)
    return arrays


_NAME = re.compile(r"_[a-z]\d+(?:_\d+)?")


def _lapack(r: list, M: list, F: list) -> list:
    """``r + M⁻¹F`` by LAPACK's partially pivoted LU (``M`` flattened row by row)."""
    k = len(F)
    return r + np.linalg.solve(np.array(M, dtype=float).reshape(k, k), np.array(F, dtype=float)).tolist()


def _lapack_batch(out: np.ndarray, M: list, F: list) -> None:
    """``out[:, j] = M_j⁻¹ F_j`` for the states ``j`` (entries: arrays of ``N`` values or scalars); one stacked solve."""
    k, N = len(F), out.shape[1]
    Ms = np.stack([np.broadcast_to(np.asarray(e, dtype=float), (N,)) for e in M], axis=1).reshape(N, k, k)
    Fs = np.stack([np.broadcast_to(np.asarray(e, dtype=float), (N,)) for e in F], axis=1)
    out[:] = np.linalg.solve(Ms, Fs[..., None])[..., 0].T


def _positive(d) -> bool:
    """``d > 0`` for a pivot that is a number or an array of values (all of them)."""
    return d > 0.0 if d.__class__ is float or d.__class__ is int else bool((np.asarray(d) > 0.0).all())


_EXTRA = {"_ndarray": np.ndarray, "_empty": np.empty, "_array": np.array, "_positive": _positive, "_lapack": _lapack,
          "_lapack_batch": _lapack_batch}


@dataclass(frozen=True, eq=False)
class ImplicitRHS:
    """``ṡ = (q̇(s), M(s)⁻¹ F(s))`` for the state ``s = (q, v)``, compiled from an implicit form.

    Attributes
    ----------
    states : tuple of Symbol
        The state ``(q^1..q^n, v^1..v^m)``.
    parameters : tuple of Symbol
        The parameters, in the order :meth:`rhs` and :meth:`batch` take their values.
    form : ImplicitForm
        ``M v̇ = F``.
    kinematics : tuple
        ``q̇^A`` as expressions of the state.
    source : str
        The generated Python source (``make_rhs(p)`` and ``make_batch(p)``).
    """

    states: tuple
    parameters: tuple
    form: ImplicitForm
    kinematics: tuple
    source: str = ""
    _ns: dict = field(default=None, repr=False)

    def __post_init__(self):
        if not self.source:
            src = _implicit_source(self.states, self.parameters, self.kinematics, self.form.matrix, self.form.rhs)
            object.__setattr__(self, "source", src)
        ns = _execute(self.source, _EXTRA)
        object.__setattr__(self, "_ns", ns)

    @property
    def dim(self) -> int:
        return len(self.states)

    def parameter_vector(self, values: Mapping) -> tuple:
        """The parameter values in the order of :attr:`parameters` (keys: symbols or names)."""
        by_name = {str(k): v for k, v in values.items()}
        missing = [p.name for p in self.parameters if p.name not in by_name]
        if missing:
            raise MissingParameterError(f"no value for the parameter(s) {', '.join(missing)}; give them "
                                        "in the system file's [values] table or as values={...}.")
        return tuple(float(by_name[p.name]) for p in self.parameters)

    def rhs(self, p: Sequence) -> callable:
        """``rhs(t, y)`` (a list of floats) for :func:`scipy.integrate.solve_ivp` at the parameter values ``p``.

        ``y`` is a float array (or a sequence); ``M v̇ = F`` is solved inside the generated
        function (see the module docstring)."""
        return self._ns["make_rhs"](tuple(float(x) for x in p))

    def batch_function(self, p: Sequence) -> callable:
        """``batch(Y)``: ``ṡ`` for the states ``Y`` (shape ``(N, dim)``, floats) at the parameter values ``p``;
        the result has the shape of ``Y``.  Vectorised over the states (numpy ufuncs)."""
        return self._ns["make_batch"](tuple(float(x) for x in p))

    def batch(self, Y, p: Sequence) -> np.ndarray:
        """``ṡ`` for many states at once: ``Y`` of shape ``(N, dim)``, the result of the same shape."""
        return self.batch_function(p)(np.asarray(Y, dtype=float))


def compile_implicit(field_source) -> ImplicitRHS:
    """Compile the nonholonomic field of a :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem`
    (state ``(q, v^α)`` on C) or the Euler–Lagrange field of a :class:`~anholo.dynamics.lagrangian.Lagrangian`
    (state ``(q, v)``) from its implicit form (:meth:`implicit_form`; no symbolic solve).

    Affine constraints (``v^a = β^a(q) ≠ 0``) are supported: their rates are not state
    components.  Parameters: every other symbol of the expressions, sorted by name.
    """
    if hasattr(field_source, "velocities_on_C"):  # a NonholonomicSystem
        nh = field_source
        form = nh.implicit_form(multipliers=False)
        X, vC = nh.frame.vectors, nh.velocities_on_C
        kin = tuple(sp.Add(*[X[j, A] * vC[j] for j in range(nh.n) if X[j, A] != 0 and vC[j] != 0])
                    for A in range(nh.n))
        states = tuple(nh.frame.chart.coordinates) + tuple(nh.free_velocities)
    else:  # a Lagrangian
        L = field_source
        form = L.implicit_form()
        b = L.bundle
        X, v = b.frame.vectors, b.quasi_velocities
        kin = tuple(sp.Add(*[X[j, A] * v[j] for j in range(b.dim) if X[j, A] != 0]) for A in range(b.dim))
        states = tuple(b.chart.coordinates) + tuple(v)
    free = set().union(*(sp.sympify(e).free_symbols for e in list(kin) + form.expressions()))
    params = tuple(sorted(free - set(states), key=lambda s: s.name))
    return ImplicitRHS(states, params, form, kin)

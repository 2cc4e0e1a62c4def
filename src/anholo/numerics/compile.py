"""Compiling a first-order system to fast numerical functions.

:func:`compile_system` turns a :class:`~anholo.numerics.ode.FirstOrderSystem` into
source, generated once and executed once, by the one code generator
(:mod:`anholo.algebra.codegen`): every function is a straight-line
:class:`~anholo.algebra.program.Program` of its expressions (their common
subexpressions one local each; the code generation of PyDy, Gede, Peterson, Sinha &
Moore 2013) printed by the one printer
(:class:`~anholo.algebra.program.ExpressionPrinter`):

* the right-hand side ``F(s)`` as a *factory* ``make_rhs(p)`` that takes the
  parameter values and returns ``rhs(t, y)`` for :func:`scipy.integrate.solve_ivp`:
  C built at run time where a compiler works (cached by its digest), else Python
  with :mod:`math`.  Parameters are run-time arguments, never substituted and
  re-derived: a sweep over parameter values reuses the same compiled code;
* vectorised read-outs on arrays of states (the program printed over :mod:`numpy`,
  :meth:`~anholo.algebra.program.Program.function_source`): the natural velocities
  ``q̇(s)``, the multipliers, the map from natural initial data to the state, and
  functions of ``(q, q̇)`` — energy ``E_L = q̇^A ∂L/∂q̇^A − L``, the constraint
  functions ``φ_a`` — used by the monitors.

sympy's ``δ(f)`` (from differentiating ``sign`` or ``|f|``) is 0 off ``f = 0``
(:func:`~anholo.algebra.expressions.without_deltas`); a function the generator has no
translation for is a :class:`~anholo.errors.SimulationError` naming it.  The compiled
object pickles as its source, so it can be sent to worker processes
(:mod:`anholo.numerics.batch`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from ..algebra.codegen import c_text, expressions_program, find_compiler, from_sources, python_source
from ..algebra.engine import se
from ..algebra.expressions import dag_atoms, free_symbols, without_deltas
from ..algebra.program import MATH_NAMESPACE
from ..dynamics.maggi import MaggiSystem
from ..errors import InitialStateError, InputError, MissingParameterError, SimulationError
from .ode import FirstOrderSystem
from .projection import Projector
from .ode import first_order_system

__all__ = ["CompiledSystem", "compile_system", "compile_functions"]

_NAMESPACE = {"_generated": from_sources, "math": math, "numpy": np, **MATH_NAMESPACE}
_CACHE: dict = {}  # source digest -> executed namespace (per process)

def _is_time(s: sp.Symbol) -> bool:
    return s.name == "t"

def _check_numeric(exprs, what: str) -> None:
    undefined = set()
    for e in exprs:  # over the DAG: large fields share their subexpressions
        found = dag_atoms(e, AppliedUndef, sp.Derivative)
        undefined |= {type(a).__name__ for a in found if isinstance(a, AppliedUndef)}
        if any(isinstance(a, sp.Derivative) for a in found):
            undefined.add("a Derivative")
    if undefined:
        raise SimulationError(
            f"the {what} contains undefined functions ({', '.join(sorted(undefined))}); numerics need concrete "
            "functions. Write them out in the system file (e.g. anholo.examples.crampin_mestdag_class([...]) builds a "
            "member of the Crampin & Mestdag (2010) §7.1 class with given A_i)."
        )

# --- code generation ----------------------------------------------------------------------------
def _program(args: Sequence, exprs: Sequence, memo: dict):
    """The straight-line program of sympy ``exprs`` (δ(f) = 0 off f = 0) in the symbols ``args``."""
    return expressions_program(args, [without_deltas(sp.sympify(e)) for e in exprs], memo)


def _readout(fname: str, exprs: Sequence, groups: Sequence, memo: dict) -> str:
    """Source of ``def fname(<group names>)`` evaluating ``exprs`` elementwise over numpy arrays; ``groups`` =
    ``[(argname, symbols)]`` (``"t"``: the time)."""
    program = _program([s for _, symbols in groups for s in symbols], exprs, memo)
    return "\n".join(program.function_source(fname, [(g, [str(s) for s in symbols]) for g, symbols in groups])) + "\n"


def _execute(source: str, extra: Mapping | None = None) -> dict:
    """Execute generated source once per process (cached by its digest) in ``_NAMESPACE`` (+ ``extra``)."""
    key = hashlib.sha256(source.encode()).hexdigest()
    ns = _CACHE.get(key)
    if ns is None:
        ns = dict(_NAMESPACE, **(extra or {}))
        exec(compile(source, f"<anholo-compiled-{key[:8]}>", "exec"), ns)
        _CACHE[key] = ns
    return ns

# --- the compiled system ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CompiledSystem:
    """Numerical functions of a :class:`~anholo.numerics.ode.FirstOrderSystem`.

    Attributes
    ----------
    kind, name : str
    source : str
        The generated Python source (readable; pickled instead of the functions).
    parameters : tuple of str
        Parameter names, in the order of parameter vectors.
    values : dict
        Default parameter values ``{name: float}``.
    state_names, coordinate_names, multiplier_names : tuple of str
    n_inputs : int
        Number of initial multipliers the user may give (vakonomic: k).
    ode : FirstOrderSystem or None
        The symbolic system compiled (not pickled: None in worker processes).
    control_names : tuple of str
        Control inputs; :meth:`rhs` then needs their values as callables of ``(t, state)``.
    """

    kind: str
    name: str
    source: str
    parameters: tuple
    values: dict
    state_names: tuple
    coordinate_names: tuple
    multiplier_names: tuple
    n_inputs: int
    ode: FirstOrderSystem = field(default=None, repr=False)
    _ns: dict = field(default=None, repr=False)
    control_names: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "_ns", _execute(self.source))

    def __reduce__(self):
        return (CompiledSystem, (self.kind, self.name, self.source, self.parameters, dict(self.values),
                                 self.state_names, self.coordinate_names, self.multiplier_names, self.n_inputs,
                                 None, None, self.control_names))

    def controls(self, inputs: Mapping | None) -> tuple:
        """The control callables ``u_k(t, state)`` in the order of :attr:`control_names` (numbers are
        constant controls).

        Raises
        ------
        InputError
            If an input has no value, or ``inputs`` names an unknown input.
        """
        inputs = dict(inputs or {})
        given = {}
        for k, v in inputs.items():
            name = k.name if isinstance(k, sp.Symbol) else str(k)
            if name not in self.control_names:
                raise InputError(f"{name!r} is not an input of this system; its inputs are "
                                 f"{', '.join(self.control_names) or '(none)'}.")
            given[name] = v if callable(v) else (lambda t, y, c=float(v): c)
        missing = [u for u in self.control_names if u not in given]
        if missing:
            raise InputError(f"no value for the input(s) {', '.join(missing)}; give them as inputs={{name: "
                             "function of (t, state) or number} (--input NAME=EXPR on the command line).")
        return tuple(given[u] for u in self.control_names)

    @property
    def dim(self) -> int:
        return len(self.state_names)

    @property
    def n(self) -> int:
        return len(self.coordinate_names)

    # --- parameters ---------------------------------------------------------------------------
    def parameter_vector(self, values: Mapping | None = None) -> tuple:
        """Parameter values in order: ``values`` (names or Symbols as keys) over the defaults.

        Raises
        ------
        MissingParameterError
            If a parameter has no value, or ``values`` names an unknown parameter.
        """
        given = {}
        for k, v in (values or {}).items():
            name = k.name if isinstance(k, sp.Symbol) else str(k)
            if name not in self.parameters:
                raise MissingParameterError(
                    f"{name!r} is not a parameter of this system; its parameters are "
                    f"{', '.join(self.parameters) or '(none)'}."
                )
            given[name] = float(v)
        merged = {**self.values, **given}
        missing = [p for p in self.parameters if p not in merged]
        if missing:
            raise MissingParameterError(
                f"no value for the parameter(s) {', '.join(missing)}; give them with parameters={{...}} in "
                f"Python or --set NAME=VALUE on the command line (or a [values] table in the system file)."
            )
        return tuple(merged[p] for p in self.parameters)

    # --- functions ---------------------------------------------------------------------------
    def rhs(self, p: Sequence, inputs: Mapping | None = None) -> callable:
        """``rhs(t, y)`` (a 1-D float array ``y``) for the parameter vector ``p``; with control inputs,
        ``inputs`` maps each input name to a callable ``u(t, y)`` (or a number)."""
        f = self._ns["make_rhs"](tuple(float(x) for x in p))
        if not self.control_names:
            return f
        controls = self.controls(inputs)

        def rhs(t, y):
            return f(t, y, np.array([float(c(t, y)) for c in controls]))

        return rhs

    def control_values(self, Y, T, inputs: Mapping | None) -> np.ndarray:
        """The inputs along states ``Y`` (``(dim, N)``) at times ``T``: an array ``(k, N)``."""
        controls = self.controls(inputs)
        Y, T = np.asarray(Y, float), np.broadcast_to(np.asarray(T, float), np.shape(Y)[1:])
        return np.array([[float(c(T[j], Y[:, j])) for j in range(Y.shape[1])] for c in controls]).reshape(
            len(controls), Y.shape[1])

    def _with_controls(self, args, Y, T, inputs):
        return args + ((self.control_values(Y, T, inputs),) if self.control_names else ())

    def natural_velocities(self, Y, p, T=0.0) -> np.ndarray:
        """``q̇`` at states ``Y`` (shape ``(dim, N)``) and times ``T``; returns ``(n, N)``."""
        return _stack(self._ns["natural_velocities"](np.asarray(T, float), np.asarray(Y, float), p),
                      np.shape(Y)[1:], self.n)

    def multipliers(self, Y, p, T=0.0, inputs: Mapping | None = None) -> np.ndarray:
        """Multipliers at states ``Y`` and times ``T`` (with the control ``inputs``, if any); returns
        ``(k, N)`` (``k`` = len(multiplier_names))."""
        args = self._with_controls((np.asarray(T, float), np.asarray(Y, float)), Y, T, inputs)
        return _stack(self._ns["multipliers"](*args, p), np.shape(Y)[1:], len(self.multiplier_names))

    def energy(self, Q, U, p, T=0.0) -> np.ndarray:
        """``E_L(q, q̇, t) = q̇^A ∂L/∂q̇^A − L`` at natural states (arrays ``(n, N)``) and times ``T``
        (a time-dependent L: E is not conserved, ``dE/dt = −∂L/∂t + Q·q̇``, docs/forces.rst)."""
        return _stack(self._ns["energy"](np.asarray(T, float), np.asarray(Q, float), np.asarray(U, float), p),
                      np.shape(Q)[1:], 1)[0]

    def constraint_functions(self, Q, U, p, T=0.0) -> np.ndarray:
        """``φ_a(q, q̇, t)`` of the constraints as written at times ``T`` (scalar or ``(N,)``);
        returns ``(k, N)``."""
        return _stack(self._ns["constraints"](np.asarray(T, float), np.asarray(Q, float), np.asarray(U, float), p),
                      np.shape(Q)[1:], self._ns["_n_constraints"])

    @property
    def constraint_count(self) -> int:
        return self._ns["_n_constraints"]

    @property
    def holonomic_count(self) -> int:
        """Number of holonomic constraints ``f(q, t) = 0`` kept by projection."""
        return self._ns.get("_n_holonomic", 0)

    def holonomic_functions(self, Q, p, T=0.0) -> np.ndarray:
        """``f_ν(q, t)`` at coordinates ``Q`` (``(n, N)``) and times ``T``; returns ``(k, N)``."""
        if not self.holonomic_count:
            return np.zeros((0,) + np.shape(Q)[1:])
        return _stack(self._ns["holonomic"](np.asarray(T, float), np.asarray(Q, float), p), np.shape(Q)[1:],
                      self.holonomic_count)

    def projector(self, p):
        """The :class:`~anholo.numerics.projection.Projector` onto the holonomic constraints (or None)."""
        k, n = self.holonomic_count, self.n
        if not k:
            return None
        ns = self._ns

        def col(x):
            return np.asarray(x, float).reshape(-1, 1)

        def scalars(vals):
            return np.array([float(np.asarray(v, float).reshape(-1)[0]) for v in vals])

        def f(t, q):
            return scalars(ns["holonomic"](t, col(q), p))

        def jac(t, q):
            return scalars(ns["holonomic_jacobian"](t, col(q), p)).reshape(k, n)

        def ft(t, q):
            return scalars(ns["holonomic_rate"](t, col(q), p))

        natural = self.kind in ("chetaev",) or self.state_names[n:2 * n] == tuple(f"{c}_dot" for c in
                                                                                 self.coordinate_names)
        return Projector(f, jac, ft, n, velocities=natural)

    def initial_state(self, q0: Sequence, qdot0: Sequence, lambda0: Sequence | None = None, p=None,
                      constraint_tol: float = 1e-9, t0: float = 0.0) -> np.ndarray:
        """The state of natural initial data ``(q0, q̇0[, λ'0])``.

        For constrained fields the velocities must satisfy the constraints:
        ``max_a |φ_a(q0, q̇0)| ≤ constraint_tol · (1 + max_A |q̇0_A|)`` (default 1e-9);
        ``λ'0`` (vakonomic: multipliers of the constraints as written) defaults to 0.

        Raises
        ------
        InitialStateError
            Wrong lengths, non-finite values, or velocities that violate the constraints.
        """
        p = self.parameter_vector() if p is None else p
        q0 = _vector(q0, self.n, "q0", self.coordinate_names)
        u0 = _vector(qdot0, self.n, "qdot0", tuple(f"{c}_dot" for c in self.coordinate_names))
        if lambda0 is None or len(lambda0) == 0:
            lam0 = np.zeros(self.n_inputs)
        elif self.n_inputs == 0:
            raise InitialStateError(
                f"initial multipliers (lambda0) are only used by the vakonomic field; this is a {self.kind} field."
            )
        else:
            lam0 = _vector(lambda0, self.n_inputs, "lambda0", self.multiplier_names)
        if self.constraint_count and self.kind != "euler-lagrange":
            res = self.constraint_functions(q0[:, None], u0[:, None], p, t0)[:, 0]
            scale = 1.0 + float(np.max(np.abs(u0))) if len(u0) else 1.0
            if np.max(np.abs(res)) > constraint_tol * scale:
                worst = int(np.argmax(np.abs(res)))
                raise InitialStateError(
                    f"the initial velocities violate constraint {worst + 1} "
                    f"({self._ns['_constraint_text'][worst]} = 0): its value is {res[worst]:.3g}, allowed "
                    f"{constraint_tol:.0e}·(1 + max|q̇0|) = {constraint_tol * scale:.2g}. Give q̇0 on the "
                    "constraint submanifold (solve the constraints for the dependent velocities)."
                )
        s0 = self._ns["initial_state"](q0, u0, lam0, p)
        return np.array([float(x) for x in s0])

def _vector(values, n: int, what: str, names: Sequence) -> np.ndarray:
    try:
        arr = np.array([float(x) for x in values], dtype=float)
    except (TypeError, ValueError) as exc:
        raise InitialStateError(f"{what}: expected {n} numbers ({', '.join(names)}), got {values!r}.") from exc
    if arr.shape != (n,):
        raise InitialStateError(
            f"{what}: expected {n} values, one for each of {', '.join(names)}; got {len(arr)}."
        )
    if not np.all(np.isfinite(arr)):
        raise InitialStateError(f"{what}: values must be finite, got {values!r}.")
    return arr

def _stack(results, shape, count: int) -> np.ndarray:
    if count == 0:
        return np.zeros((0,) + tuple(shape))
    return np.array([np.broadcast_to(np.asarray(r, dtype=float), shape) for r in results])

def compile_system(system) -> CompiledSystem:
    """Compile a field (or a :class:`~anholo.numerics.ode.FirstOrderSystem`) to numerical functions.

    Parameters
    ----------
    system : FirstOrderSystem or a field of anholo
        Fields are converted with :func:`~anholo.numerics.ode.first_order_system`.

    Raises
    ------
    SimulationError
        If the expressions contain undefined functions.

    Examples
    --------
    The nonholonomic particle (docs/theory.rst, *Worked examples*): ``v̇1 = −y v1 v2/(1+y²)``, ``v̇2 = 0``.

    >>> import numpy as np
    >>> from anholo.system import System
    >>> from anholo.numerics import compile_system
    >>> c = compile_system(System.load("nonholonomic_particle").nonholonomic().field())
    >>> c.state_names
    ('x', 'y', 'z', 'v1', 'v2')
    >>> rhs = c.rhs(c.parameter_vector())
    >>> rhs(0.0, np.array([0.0, 1.0, 0.0, 2.0, 3.0]))  # (ẋ, ẏ, ż, v̇1, v̇2) at y = 1, v = (2, 3)
    array([ 2.,  3.,  2., -3.,  0.])
    """
    if isinstance(system, CompiledSystem):
        return system
    if isinstance(system, MaggiSystem):  # a large system: from its straight-line programs
        from .maggi_compile import maggi_source
        meta = maggi_source(system, values=getattr(system, "values", None))
        return CompiledSystem(name=getattr(system, "name", ""), ode=None, **meta)
    ode = system if isinstance(system, FirstOrderSystem) else first_order_system(system)
    _check_numeric(ode.rates + ode.natural_velocities + ode.multipliers + ode.initial_state, f"{ode.kind} field")
    q, u = ode.coordinates, ode.velocities
    L = ode.lagrangian
    energy = sp.Add(*[ui * L.diff(ui) for ui in u]) - L
    hol_t = ode.time if ode.time is not None else sp.Symbol("t", real=True)
    jac = [f.diff(qA) for f in ode.holonomic for qA in q]
    rate = [f.diff(hol_t) for f in ode.holonomic]
    # the time: ode.time and every symbol named t (one run-time argument)
    everything = [*ode.rates, *ode.natural_velocities, *ode.multipliers, energy, *ode.constraints, *ode.holonomic]
    time = sorted({s.name for s in free_symbols(everything) if s == ode.time or _is_time(s)} | {hol_t.name})
    time = [se.Symbol(x) for x in time]
    params = list(ode.parameters)
    memo: dict = {}  # sympy subexpressions shared by the functions: converted once
    state = [("t", time), ("y", ode.state)] + ([("w", ode.inputs)] if ode.inputs else []) + [("p", params)]
    natural = [("t", time), ("q", q), ("u", u), ("p", params)]
    sources = [
        _generated_rhs(ode, time, memo),  # C where a compiler works, else Python
        _readout("natural_velocities", ode.natural_velocities, [("t", time), ("y", ode.state), ("p", params)], memo),
        _readout("multipliers", ode.multipliers, state, memo),
        _readout("initial_state", ode.initial_state,
                 [("q", q), ("u", u), ("lam", ode.multiplier_inputs), ("p", params)], memo),
        _readout("energy", [energy], natural, memo),
        _readout("constraints", ode.constraints, natural, memo),
        f"_n_constraints = {len(ode.constraints)}\n_constraint_text = {tuple(str(c) for c in ode.constraints)!r}\n",
    ]
    if ode.holonomic:  # f(q, t), ∂f/∂q and ∂f/∂t for the projection (anholo.numerics.projection)
        groups = [("t", time), ("q", q), ("p", params)]
        sources += [_readout("holonomic", ode.holonomic, groups, memo),
                    _readout("holonomic_jacobian", jac, groups, memo),
                    _readout("holonomic_rate", rate, groups, memo)]
    sources.append(f"_n_holonomic = {len(ode.holonomic)}\n")
    values = {p.name: v for p, v in ode.values.items()}
    return CompiledSystem(ode.kind, ode.name, "\n".join(sources), tuple(p.name for p in ode.parameters), values,
                          ode.state_names, ode.coordinate_names, ode.multiplier_names, len(ode.multiplier_inputs), ode,
                          control_names=tuple(u.name for u in ode.inputs))


def _generated_rhs(ode: FirstOrderSystem, time: list, memo: dict) -> str:
    """Source of ``make_rhs(p)``: the rates as a straight-line program of ``(t, state, parameters[, inputs])``
    (:mod:`anholo.algebra.codegen`), C built at run time where a compiler works (cached by its digest), else
    Python with :mod:`math`; the parameters, then the inputs' values, are run-time arguments."""
    state, params = list(ode.state), [*ode.parameters, *ode.inputs]
    program = _program(time + state + params, ode.rates, memo)
    groups = (("t", time), ("y", [se.Symbol(s.name) for s in state]), ("p", [se.Symbol(s.name) for s in params]))
    c_src = c_text(program, groups) if find_compiler() is not None else ""
    py_src = python_source(program, groups)
    dim, k = len(state), len(params)
    lines = [f"_RHS_C = {c_src!r}", f"_RHS_PY = {py_src!r}", "def make_rhs(p):",
             f"    f = _generated(_RHS_C, _RHS_PY, {dim}, {dim}, {k})"]
    if ode.inputs:  # rhs(t, y, w): the inputs' values w after the parameters
        lines += ["    p = list(p)", "    return lambda t, y, w: f(t, y, p + [float(x) for x in w])"]
    else:
        lines += ["    return f.bind(p)"]
    return "\n".join(lines) + "\n"


def compile_functions(exprs: Sequence, coordinates: Sequence, velocities: Sequence, parameters: Sequence):
    """Vectorised ``f(Q, U, p)`` for expressions in ``(q, q̇)`` and parameters (used by the monitors).

    Returns a function of arrays ``Q, U`` (shape ``(n, N)``) and a parameter vector,
    giving an array ``(len(exprs), N)``.
    """
    exprs = [sp.sympify(e) for e in exprs]
    _check_numeric(exprs, "monitored expression")
    src = _readout("f", exprs, [("q", tuple(coordinates)), ("u", tuple(velocities)), ("p", tuple(parameters))], {})
    fn = _execute(src)["f"]
    count = len(exprs)

    def evaluate(Q, U, p):
        Q = np.asarray(Q, float)
        return _stack(fn(Q, np.asarray(U, float), p), Q.shape[1:], count)

    return evaluate

r"""Trajectory optimisation of a nonholonomic system: its implicit equations handed to CasADi/IPOPT.

The problem (docs/optimal_control.rst): on ``[0, T]`` (``T`` fixed) find a motion and its inputs that::

    minimise   J = ∫_0^T ℓ(t, q, v, u) dt
    subject to q̇ = K(t, q, v)                  (q̇ = X_α(q) v^α + β(q): the motion stays in D)
               M(t, q, v) v̇ = F(t, q, v, u)     (the Lagrange–d'Alembert equations with the forces of u)
               boundary values of q (and v) at t = 0 and t = T, bounds on q, v, u.

``x = (q, v)`` is the state anholo simulates (:func:`~anholo.numerics.ode.from_system`): ``v`` the free
(quasi-)velocities of the adapted frame, ``K`` the kinematics on the constraint set C, and ``M v̇ = F`` the
implicit form — Maggi's (:meth:`~anholo.dynamics.maggi.MaggiSystem.program`, ``M = g_αβ``, no inversion)
for a large system, ``M = 1`` and ``F = Γ^α`` for the exact route's explicit field.  The inputs enter
through the system file's forces (``inputs = [...]``, docs/forces.rst).

*Kinematic mode* (``mode="kinematic"``): the free velocities themselves are the controls, ``q̇ = X_α(q) u^α``
— the driftless control system of the distribution D.  With the cost ``ℓ = L(q, X_α u^α)`` of a kinetic
energy ``L = ½ g(q̇, q̇)`` (``cost="lagrangian"``) this is the sub-Riemannian energy problem of
``(D, g|_D)``; its normal extremals are the sub-Riemannian geodesics, which are the vakonomic motions of
``L`` with the constraints (the multiplication rule ``L + λ_a φ_a``; Bloch (2003), Ch. 7; Montgomery (2002);
Arnold, Kozlov & Neishtadt (1988)) — docs/optimal_control.rst shows the comparison.

Transcription (Betts (2010); Kelly (2017)): a uniform mesh ``t_k = k h``, ``h = T/N``; the state,
inputs and (dynamic mode) the accelerations ``a = v̇`` are unknowns at the mesh points and, for
Hermite–Simpson, at the interval midpoints ``t_c``; the implicit equations ``M a = F`` are imposed at every
such point (the equations handed over as they are, never solved for ``v̇``), and with ``f = (K, a)`` (or
``f = K`` in kinematic mode)

* Hermite–Simpson (separated form, error O(h⁴)):
  ``x_c = (x_k + x_{k+1})/2 + h/8 (f_k − f_{k+1})``, ``x_{k+1} − x_k = h/6 (f_k + 4 f_c + f_{k+1})``,
  cost by Simpson's rule;
* trapezoidal (O(h²)): ``x_{k+1} − x_k = h/2 (f_k + f_{k+1})``, cost by the trapezoidal rule.

The expressions are converted once to CasADi ``SX`` with their shared subexpressions
(:class:`~anholo.numerics.casadi_bridge.SXConverter`), and IPOPT (Wächter & Biegler (2006)), bundled with
CasADi (Andersson et al. (2019)), solves the sparse NLP with exact derivatives.  CasADi is an optional
dependency: ``pip install "anholo[optimal]"``.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from numbers import Real
from typing import Mapping

import numpy as np
import sympy as sp

from ..algebra.engine import to_engine, to_engine_dag
from ..algebra.printing import latex as _latex
from ..dynamics.maggi import MaggiSystem
from ..errors import AnholoError, ArgumentError, MissingParameterError, printable
from ..parsing import as_expression
from .casadi_bridge import (CasadiMissingError, OptimalControlError, SolverFailedError, SXConverter,
                            require_casadi)
from .ode import FirstOrderSystem, from_system

__all__ = ["optimal_control", "OptimalTrajectory", "MODES", "METHODS", "OptimalControlError", "CasadiMissingError",
           "SolverFailedError"]

MODES = ("dynamic", "kinematic")
METHODS = ("hermite-simpson", "trapezoidal")
MAX_NODES = 5000


# --- the result ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class OptimalTrajectory:
    """An optimal motion and its inputs, as IPOPT returned them.

    Attributes
    ----------
    t : ndarray
        Shape ``(P,)``: the collocation grid: the mesh points and, for Hermite–Simpson, the interval midpoints
        (``P = 2N + 1``; ``N + 1`` for the trapezoidal rule).
    q : ndarray
        Shape ``(n, P)``: the coordinates.
    v : ndarray
        Shape ``(m, P)``: the free (quasi-)velocities (in kinematic mode: the controls).
    u : ndarray
        Shape ``(r, P)``: the inputs (in kinematic mode: the controls, the same as ``v``).
    qdot : ndarray
        Shape ``(n, P)``: the natural velocities ``q̇ = K(t, q, v)`` along the motion.
    cost : float
        ``J`` by the quadrature of the method.
    status : str
        IPOPT's return status (``Solve_Succeeded`` or ``Solved_To_Acceptable_Level``).
    max_violation : float
        The largest violation of the collocation, dynamics and boundary equations at the solution.
    costate : ndarray
        Shape ``(dim x, N)``: the costate ``p`` of Pontryagin's principle (``H = ℓ + p·f``, ``ṗ = −∂H/∂x``) at the interval
        midpoints :attr:`t_costate`, read from IPOPT's multipliers ``μ_k`` of the collocation defects:
        ``p ≈ −μ_k`` (the discrete adjoint of the trapezoidal and Hermite–Simpson rules; Hager (2000);
        docs/optimal_control.rst).  For the kinematic problem with ``cost="lagrangian"``, ``−p = ∂L/∂q̇ + λ_a κ_a`` holds
        the vakonomic multipliers ``λ`` (docs/optimal_control.rst).
    """

    name: str
    mode: str
    method: str
    T: float
    nodes: int
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    u: np.ndarray
    qdot: np.ndarray
    coordinate_names: tuple
    velocity_names: tuple
    input_names: tuple
    natural_names: tuple
    cost: float
    cost_expression: sp.Expr
    status: str
    iterations: int
    max_violation: float
    wall: float
    costate: np.ndarray = None
    start: tuple = ()
    end: tuple = ()
    values: dict = field(default_factory=dict)

    @property
    def states(self) -> np.ndarray:
        """``x = (q, v)`` on the grid (kinematic mode: ``q``)."""
        return self.q if self.mode == "kinematic" else np.vstack([self.q, self.v])

    @property
    def t_costate(self) -> np.ndarray:
        """The interval midpoints ``(k + ½) T/N``, where :attr:`costate` is given."""
        h = self.T / self.nodes
        return (np.arange(self.nodes) + 0.5) * h

    @property
    def mesh(self) -> np.ndarray:
        """The mesh points ``t_k = k T/N`` (without the midpoints)."""
        return self.t[::2] if self.method == "hermite-simpson" else self.t

    def control(self, t) -> np.ndarray:
        """The inputs at times ``t`` as the method represents them: on each mesh interval the quadratic
        through ``u_k, u_c, u_{k+1}`` (Hermite–Simpson), the line through ``u_k, u_{k+1}`` (trapezoidal).
        Returns ``(r,)`` for a scalar ``t``, ``(r, len(t))`` for an array."""
        scalar = np.ndim(t) == 0
        tt = np.clip(np.atleast_1d(np.asarray(t, float)), 0.0, self.T)
        h = self.T / self.nodes
        k = np.minimum((tt / h).astype(int), self.nodes - 1)
        s = (tt - k * h) / h  # in [0, 1]
        if self.method == "hermite-simpson":
            u0, uc, u1 = self.u[:, 2 * k], self.u[:, 2 * k + 1], self.u[:, 2 * k + 2]
            out = u0 * (2 * s - 1) * (s - 1) + uc * 4 * s * (1 - s) + u1 * s * (2 * s - 1)
        else:
            out = self.u[:, k] * (1 - s) + self.u[:, k + 1] * s
        return out[:, 0] if scalar else out

    def final(self) -> dict:
        """The state at ``t = T``: ``{name: value}`` for the coordinates and velocities."""
        names = self.coordinate_names + self.velocity_names
        vals = np.concatenate([self.q[:, -1], self.v[:, -1]])
        return dict(zip(names, (float(x) for x in vals)))

    def _cost_text(self) -> str:
        return str(self.cost_expression)

    def __str__(self) -> str:
        what = ("kinematic (the free velocities are the controls, q_dot = X_alpha u^alpha)" if self.mode == "kinematic"
                else "dynamic (the Lagrange-d'Alembert equations with the inputs)")
        lines = [f"Optimal trajectory{': ' + self.name if self.name else ''}",
                 f"  mode: {what}",
                 f"  transcription: {self.method}, {self.nodes} intervals on [0, {self.T:g}]",
                 f"  cost: J = integral of {self._cost_text()} dt = {self.cost:.10g}",
                 f"  IPOPT: {self.status} after {self.iterations} iterations ({self.wall:.2f} s); "
                 f"largest constraint violation {self.max_violation:.2e}"]
        if self.start:
            lines.append("  start: " + ", ".join(f"{k} = {v:g}" for k, v in self.start))
        if self.end:
            lines.append("  end:   " + ", ".join(f"{k} = {v:g}" for k, v in self.end))
        fin = self.final()
        lines.append("  reached: " + ", ".join(f"{k} = {v:.6g}" for k, v in fin.items()))
        peak = np.abs(self.u).max(axis=1) if self.u.size else []
        if len(peak):
            lines.append("  largest |input|: " + ", ".join(f"{k} {p:.4g}" for k, p in zip(self.input_names, peak)))
        return "\n".join(lines)

    def as_latex(self) -> str:
        """The problem and its solution as LaTeX (``aligned``)."""
        ell = _latex(self.cost_expression)
        rows = [rf"\min J &= \int_0^{{{self.T:g}}} \left({ell}\right) dt = {self.cost:.8g}"]
        if self.mode == "kinematic":
            rows.append(r"\text{subject to } \dot q &= X_\alpha(q)\, u^\alpha \quad (\dot q \in D)")
        else:
            rows.append(r"\text{subject to } \dot q &= K(q, v),\quad M(q, v)\,\dot v = F(q, v, u)")

        def cond(pairs, at):
            return ",\\ ".join(rf"{_latex(sp.Symbol(k))}({at}) = {v:g}" for k, v in pairs)

        if self.start:
            rows.append(r"&" + cond(self.start, "0"))
        if self.end:
            rows.append(r"&" + cond(self.end, f"{self.T:g}"))
        rows.append(rf"&\text{{{self.method}, }} N = {self.nodes}\text{{; IPOPT: {self.status.replace('_', ' ')}}}")
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self) -> str:
        return "$\\displaystyle " + self.as_latex() + "$"

    def to_dict(self) -> dict:
        """A JSON-ready payload: the problem, the solver's verdict and the trajectory on the grid."""
        return {
            "name": self.name, "mode": self.mode, "method": self.method, "T": self.T, "nodes": self.nodes,
            "cost": {"integrand": str(self.cost_expression), "value": self.cost},
            "solver": {"name": "ipopt", "status": self.status, "iterations": self.iterations,
                       "max_violation": self.max_violation, "seconds": self.wall},
            "start": dict(self.start), "end": dict(self.end),
            "t": self.t.tolist(),
            "q": {k: row.tolist() for k, row in zip(self.coordinate_names, self.q)},
            "v": {k: row.tolist() for k, row in zip(self.velocity_names, self.v)},
            "u": {k: row.tolist() for k, row in zip(self.input_names, self.u)},
            "qdot": {k: row.tolist() for k, row in zip(self.natural_names, self.qdot)},
        }


# --- the model: the equations as CasADi functions ---------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Model:
    name: str
    coordinates: tuple   # names
    velocities: tuple    # names of the free (quasi-)velocities
    naturals: tuple      # names of the natural velocities q_dot
    inputs: tuple        # names of the inputs
    time: str
    kin: object          # casadi Function (q, v, t) -> q_dot
    dyn: object          # casadi Function (q, v, u, t) -> (M, F)
    env: dict            # name -> SX: q, v, u, t, parameters (numbers)
    qdot: object         # SX: q_dot in (q, v, t)
    lagrangian: object   # SX: L on C in (q, v, t)
    symbols: dict        # name -> sympy Symbol (for parsing a user cost)
    L_expr: sp.Expr      # L in (q, q_dot), sympy (for printing)
    holonomic: object    # casadi Function (q, t) -> f(q, t) (holonomic constraints), or None


def _source(system, dependent):
    """The first-order system (exact route) or MaggiSystem (large systems) whose equations are transcribed."""
    if isinstance(system, (FirstOrderSystem, MaggiSystem)):
        if dependent is not None:
            raise ArgumentError("optimal_control: dependent= chooses the frame of a System; a FirstOrderSystem or "
                                "MaggiSystem comes with its own (leave dependent out).")
        return system
    if hasattr(system, "nonholonomic") and hasattr(system, "has_constraints"):
        field_ = "nonholonomic" if system.has_constraints else "euler-lagrange"
        return from_system(system, field_, dependent=dependent)
    raise ArgumentError(f"optimal_control: expected a System (System.load(...)), a FirstOrderSystem or a "
                        f"MaggiSystem, got {type(system).__name__}.")


def _parameter_values(params, defaults, values) -> dict:
    out = {str(k): v for k, v in (defaults or {}).items()}
    names = [p.name for p in params]
    for k, v in (values or {}).items():
        if str(k) not in names:
            raise ArgumentError(f"optimal_control: values names {printable(str(k))!r}, which is not a parameter of the "
                                f"system; its parameters are {', '.join(names) or 'none'}.")
        out[str(k)] = _number(v, f"values[{str(k)!r}]")
    result = {}
    for p in params:
        if p.name not in out:
            raise MissingParameterError(f"the parameter {p.name} has no value; give it with values={{'{p.name}': ...}}.")
        result[p.name] = float(out[p.name])
    return result


def _build_model(src, values) -> _Model:
    ca = require_casadi()
    if isinstance(src, MaggiSystem):
        chart = src.chart
        q, v = list(chart.coordinates), list(src.free_velocities)
        qd = list(chart.velocities)
        inputs = list(src.inputs)
        t = src.time if src.time is not None else sp.Symbol("t", real=True)
        params = [p for p in chart.parameters if p not in set(inputs)]
        L = src.lagrangian
        name = src.name
        pvals = _parameter_values(params, src.values, values)
    else:
        if src.kind not in ("nonholonomic", "euler-lagrange"):
            raise ArgumentError(f"optimal_control: the {src.kind} field cannot be transcribed; pass the System, or "
                                "its nonholonomic first-order system (from_system(system, 'nonholonomic')).")
        n = src.n
        q, v, qd = list(src.coordinates), list(src.state[n:]), list(src.velocities)
        inputs = list(src.inputs)
        t = src.time if src.time is not None else sp.Symbol("t", real=True)
        params = list(src.parameters)
        L = src.lagrangian
        name = src.name
        pvals = _parameter_values(params, src.values, values)
    n, m = len(q), len(v)
    Q = ca.SX.sym("q", n)
    V = ca.SX.sym("v", m)
    U = ca.SX.sym("u", len(inputs))
    Tm = ca.SX.sym("t")
    env = {s.name: Q[i] for i, s in enumerate(q)}
    env.update({s.name: V[i] for i, s in enumerate(v)})
    env.update({s.name: U[i] for i, s in enumerate(inputs)})
    env[t.name] = Tm
    env.update(pvals)
    try:
        if isinstance(src, MaggiSystem):
            conv = SXConverter(env, ca)
            outs = conv.program(src.program(multipliers=False))
            K, Mflat, F = outs[:n], outs[n:n + m * m], outs[n + m * m:]
            M = ca.reshape(ca.vertcat(*Mflat), m, m).T if m else ca.SX(0, 0)
        else:
            conv = SXConverter(env, ca)
            eng = to_engine_dag(list(src.rates))
            outs = conv.many(eng)
            K, F = outs[:n], outs[n:]
            M = ca.SX.eye(m)
        Lconv = SXConverter({**env, **{s.name: K[i] for i, s in enumerate(qd)}}, ca)
        Lsx = Lconv(to_engine_dag([L])[0])
        hol = [SXConverter(env, ca)(e) for e in to_engine_dag(list(src.holonomic))] if src.holonomic else []
    except TypeError as exc:
        raise OptimalControlError(f"the equations hold a function CasADi cannot represent ({exc}); rewrite the "
                                  "system with elementary functions.") from None
    Ksx = ca.vertcat(*K) if n else ca.SX(0, 1)
    Fsx = ca.vertcat(*F) if m else ca.SX(0, 1)
    kin = ca.Function("kin", [Q, V, Tm], [Ksx])
    dyn = ca.Function("dyn", [Q, V, U, Tm], [M, Fsx])
    holonomic = ca.Function("hol", [Q, Tm], [ca.vertcat(*hol)]) if hol else None
    symbols = {s.name: s for s in (*q, *v, *qd, *inputs, *params, t)}
    return _Model(name, tuple(s.name for s in q), tuple(s.name for s in v), tuple(s.name for s in qd),
                  tuple(s.name for s in inputs), t.name, kin, dyn, env, Ksx, Lsx, symbols, sp.sympify(L), holonomic)


# --- arguments -----------------------------------------------------------------------------------------------
def _number(x, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (Real, np.floating, np.integer)) or not math.isfinite(float(x)):
        raise ArgumentError(f"optimal_control: {what} must be a finite real number, got {printable(repr(x))[:60]}.")
    return float(x)


def _conditions(given, model: _Model, mode: str, which: str) -> dict:
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ArgumentError(f"optimal_control: {which} must be a dict name -> value (e.g. {{'x': 0, 'y': 1}}), got "
                            f"{type(given).__name__}.")
    out = {}
    for k, val in given.items():
        key = _known_name(k, model, mode, which)
        out[key] = _number(val, f"{which}[{key!r}]")
    return out


def _known_name(name, model: _Model, mode: str, which: str) -> str:
    """``str(name)`` if it names a coordinate, a velocity (or, in the dynamic mode, an input); else the
    ArgumentError that lists the names ``which`` (a keyword of :func:`optimal_control`) accepts."""
    known = set(model.coordinates) | set(model.velocities) | set(model.naturals)
    if mode == "dynamic":
        known |= set(model.inputs)
    key = str(name)
    if key not in known:
        raise ArgumentError(f"optimal_control: {which} names {printable(key)!r}, which is not a coordinate, "
                            f"velocity{' or input' if mode == 'dynamic' else ''} of the system; use "
                            f"{', '.join(sorted(known))}.")
    return key


def _bounds(given, model: _Model, mode: str) -> dict:
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ArgumentError("optimal_control: bounds must be a dict name -> (lower, upper), e.g. {'phi': (-0.5, 0.5)}, "
                            f"got {type(given).__name__}.")
    out = {}
    for k, pair in given.items():
        key = _known_name(k, model, mode, "bounds")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ArgumentError(f"optimal_control: bounds[{key!r}] must be a pair (lower, upper) (None for no bound), "
                                f"got {printable(repr(pair))[:60]}.")
        lo = -math.inf if pair[0] is None else _number(pair[0], f"the lower bound of {key}")
        hi = math.inf if pair[1] is None else _number(pair[1], f"the upper bound of {key}")
        if lo > hi:
            raise ArgumentError(f"optimal_control: bounds[{key!r}] = ({lo:g}, {hi:g}) has lower > upper; swap them.")
        out[key] = (lo, hi)
    return out


def _cost(cost, model: _Model, mode: str, ca):
    """``(ℓ as a casadi Function (q, v, u, t) -> scalar, ℓ as a sympy expression for printing)``."""
    controls = model.velocities if mode == "kinematic" else model.inputs
    V = ca.vertcat(*[model.env[s] for s in model.velocities]) if model.velocities else ca.SX(0, 1)
    U = ca.vertcat(*[model.env[s] for s in model.inputs]) if model.inputs else ca.SX(0, 1)
    Q = ca.vertcat(*[model.env[s] for s in model.coordinates])
    Tm = model.env[model.time]
    if cost is None or (isinstance(cost, str) and cost == "effort"):
        sym = [model.symbols[s] for s in controls]
        expr = sp.Rational(1, 2) * sp.Add(*[s ** 2 for s in sym])
        ell = 0.5 * ca.sumsqr(V if mode == "kinematic" else U)
    elif isinstance(cost, str) and cost == "lagrangian":
        expr = model.L_expr
        ell = model.lagrangian
    elif isinstance(cost, (str, sp.Expr)):
        try:
            expr = as_expression(cost, model.symbols, where="the cost", allow_unknown=False)
        except AnholoError as exc:
            raise ArgumentError(f"optimal_control: {exc}") from None
        used = sorted(s.name for s in expr.free_symbols if s.name in model.inputs)
        if mode == "kinematic" and used:
            raise ArgumentError(f"optimal_control: the cost uses the inputs {', '.join(used)}, which the kinematic "
                                "problem does not have (its controls are the free velocities "
                                f"{', '.join(model.velocities)}); write the cost in those, or use mode='dynamic'.")
        conv = SXConverter({**model.env, **{s: model.qdot[i] for i, s in enumerate(model.naturals)}}, ca)
        try:
            ell = conv(to_engine(expr))
        except OptimalControlError as exc:
            raise ArgumentError(f"optimal_control: the cost: {exc}") from None
    else:
        raise ArgumentError(f"optimal_control: cost must be None or 'effort' (1/2 |u|^2), 'lagrangian' (L on D), or an "
                            f"expression (string or sympy) in the states, inputs and parameters, got "
                            f"{type(cost).__name__}.")
    return ca.Function("ell", [Q, V, U, Tm], [ell]), expr


# --- the transcription ---------------------------------------------------------------------------------------------
def optimal_control(system, T, start, end, *, mode: str = "dynamic", cost=None, nodes: int = 40,
                    method: str = "hermite-simpson", bounds: Mapping | None = None, values: Mapping | None = None,
                    guess: OptimalTrajectory | None = None, dependent=None, tol: float = 1e-8,
                    max_iter: int = 3000, verbose: bool = False) -> OptimalTrajectory:
    """A motion of ``system`` on ``[0, T]`` from ``start`` to ``end`` that minimises ``∫ ℓ dt`` (the module docstring).

    Parameters
    ----------
    system : System, FirstOrderSystem or MaggiSystem
        A System is transcribed as anholo simulates it (:func:`~anholo.numerics.ode.from_system`: the exact
        route's state ``(q, v^α)`` in its adapted frame, or Maggi's implicit form for a large system).
    T : float
        The final time (fixed).
    start, end : dict
        Boundary values at ``t = 0`` and ``t = T``: name → number for coordinates, free velocities, natural
        velocities (``x_dot``: imposed on ``K(q, v)``) and (dynamic mode) inputs.  Names left out are free.
    mode : ``"dynamic"`` or ``"kinematic"``
        Dynamic: state ``(q, v)``, controls the system's inputs.  Kinematic: state ``q``, controls the free
        velocities ``v^α`` (``q̇ = X_α v^α``: the driftless system of D).
    cost : None, ``"effort"``, ``"lagrangian"`` or expression
        The integrand ℓ: ``"effort"`` (default) ``½ Σ u_k²`` over the controls; ``"lagrangian"`` L on C
        (for a kinetic energy, ``½ g(X_α v^α, X_β v^β)``: the sub-Riemannian energy in kinematic mode); or an
        expression (string or sympy) in the coordinates, velocities, natural velocities, inputs, parameters
        and ``t``.
    nodes : int
        Mesh intervals N (uniform).
    method : ``"hermite-simpson"`` or ``"trapezoidal"``
    bounds : dict, optional
        name → ``(lower, upper)`` (``None`` for no bound) on coordinates, velocities, natural velocities or
        inputs, imposed at every collocation point.
    values : dict, optional
        Parameter values (default: the system's ``[values]``).
    guess : OptimalTrajectory, optional
        An initial guess (e.g. the solution of a neighbouring problem), interpolated onto the grid; default:
        coordinates linear between the given boundary values, everything else zero.
    dependent : sequence, optional
        Dependent velocities of the adapted frame (:func:`~anholo.numerics.ode.from_system`).
    tol, max_iter, verbose :
        IPOPT's tolerance, iteration limit and printing.

    Raises
    ------
    CasadiMissingError
        CasADi is not installed (``pip install "anholo[optimal]"``).
    SolverFailedError
        IPOPT did not converge (its status is ``error.status``).
    ArgumentError, MissingParameterError
        Bad arguments, a parameter without a value.
    """
    if mode not in MODES:
        raise ArgumentError(f"optimal_control: mode must be one of {', '.join(MODES)}, got {printable(repr(mode))[:40]}.")
    if method not in METHODS:
        raise ArgumentError(f"optimal_control: method must be one of {', '.join(METHODS)}, got "
                            f"{printable(repr(method))[:40]}.")
    T = _number(T, "T")
    if T <= 0:
        raise ArgumentError(f"optimal_control: the final time T must be positive, got {T:g}.")
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or not 2 <= nodes <= MAX_NODES:
        raise ArgumentError(f"optimal_control: nodes must be an integer from 2 to {MAX_NODES}, got "
                            f"{printable(repr(nodes))[:40]}.")
    if values is not None and not isinstance(values, Mapping):
        raise ArgumentError(f"optimal_control: values must be a dict parameter -> number, got {type(values).__name__}.")
    if guess is not None and not isinstance(guess, OptimalTrajectory):
        raise ArgumentError(f"optimal_control: guess must be an OptimalTrajectory (a previous solution), got "
                            f"{type(guess).__name__}.")
    tol = _number(tol, "tol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ArgumentError(f"optimal_control: max_iter must be a positive integer, got {printable(repr(max_iter))[:40]}.")
    ca = require_casadi()
    model = _build_model(_source(system, dependent), values)
    if mode == "dynamic" and not model.inputs:
        raise ArgumentError("optimal_control: the system has no control inputs, so there is nothing to optimise in "
                            "dynamic mode; declare inputs = [...] and the forces they drive in the system file, or "
                            "use mode='kinematic' (the free velocities as controls).")
    if not model.velocities and mode == "kinematic":
        raise ArgumentError("optimal_control: the constraints leave no free velocity, so nothing moves.")
    start = _conditions(start, model, mode, "start")
    end = _conditions(end, model, mode, "end")
    box = _bounds(bounds, model, mode)
    for which, given in (("start", start), ("end", end)):
        for name, value in given.items():
            lo, hi = box.get(name, (-math.inf, math.inf))
            if not lo <= value <= hi:
                raise ArgumentError(f"optimal_control: {which}[{name!r}] = {value:g} lies outside its bounds "
                                    f"({lo:g}, {hi:g}); widen the bounds or change the boundary value.")
    ell, expr = _cost(cost, model, mode, ca)
    if guess is not None and (guess.mode != mode or guess.coordinate_names != model.coordinates
                              or guess.velocity_names != model.velocities):
        raise ArgumentError("optimal_control: the guess is a trajectory of another problem (other mode, coordinates or "
                            "velocities); pass a solution of the same system in the same mode.")
    t0 = _time.perf_counter()
    out = _solve(ca, model, mode, method, T, int(nodes), start, end, box, ell, guess, tol, int(max_iter), verbose)
    wall = _time.perf_counter() - t0
    return OptimalTrajectory(name=model.name, mode=mode, method=method, T=T, nodes=int(nodes), cost_expression=expr,
                             coordinate_names=model.coordinates, velocity_names=model.velocities,
                             input_names=model.velocities if mode == "kinematic" else model.inputs,
                             natural_names=model.naturals, wall=wall, start=tuple(start.items()),
                             end=tuple(end.items()), values={k: v for k, v in model.env.items()
                                                             if isinstance(v, float)}, **out)


def _solve(ca, model, mode, method, T, N, start, end, box, ell, guess, tol, max_iter, verbose) -> dict:
    n, m, r = len(model.coordinates), len(model.velocities), len(model.inputs)
    dynamic = mode == "dynamic"
    nx = n + m if dynamic else n
    nu = r if dynamic else m
    na = m if dynamic else 0
    hs = method == "hermite-simpson"
    P = 2 * N + 1 if hs else N + 1
    h = T / N
    times = np.linspace(0.0, T, P)
    width = nx + nu + na
    w = ca.SX.sym("w", P * width)
    X = [w[j * width:j * width + nx] for j in range(P)]
    U = [w[j * width + nx:j * width + nx + nu] for j in range(P)]
    A = [w[j * width + nx + nu:(j + 1) * width] for j in range(P)]
    empty = ca.SX(0, 1)

    def qv(j):
        if dynamic:
            return X[j][:n], X[j][n:], U[j]
        return X[j], U[j], empty

    g, lbg, ubg = [], [], []

    def equal(e, value=0.0):
        g.append(e)
        lbg.extend([value] * e.numel())
        ubg.extend([value] * e.numel())
        return len(lbg) - e.numel()

    defects = []  # first row of each interval's quadrature defect: its multipliers give the costate

    f, L = [], []
    for j in range(P):
        q, v, u = qv(j)
        K = model.kin(q, v, times[j])
        f.append(ca.vertcat(K, A[j]) if dynamic else K)
        L.append(ell(q, v, u, times[j]))
        if dynamic:
            M, F = model.dyn(q, v, u, times[j])
            equal(ca.mtimes(M, A[j]) - F)
    J = 0
    if hs:
        for k in range(N):
            a, c, b = 2 * k, 2 * k + 1, 2 * k + 2
            equal(X[c] - (X[a] + X[b]) / 2 - h / 8 * (f[a] - f[b]))
            defects.append(equal(X[b] - X[a] - h / 6 * (f[a] + 4 * f[c] + f[b])))
            J = J + h / 6 * (L[a] + 4 * L[c] + L[b])
    else:
        for k in range(N):
            defects.append(equal(X[k + 1] - X[k] - h / 2 * (f[k] + f[k + 1])))
            J = J + h / 2 * (L[k] + L[k + 1])
    # where each name lives in a point's block of w
    slot = {s: i for i, s in enumerate(model.coordinates)}
    if dynamic:
        slot.update({s: n + i for i, s in enumerate(model.velocities)})
        slot.update({s: nx + i for i, s in enumerate(model.inputs)})
    else:
        slot.update({s: nx + i for i, s in enumerate(model.velocities)})
    natural = {s: i for i, s in enumerate(model.naturals)}
    lbx = np.full(P * width, -np.inf)
    ubx = np.full(P * width, np.inf)
    for name, (lo, hi) in box.items():
        if name in slot:
            lbx[slot[name]::width] = lo
            ubx[slot[name]::width] = hi
        else:
            for j in range(P):
                g.append(f[j][natural[name]])
                lbg.append(lo)
                ubg.append(hi)
    if model.holonomic is not None:  # f(q, t) = 0 at t = 0; D (with df/dt = 0 among the constraints) keeps it
        equal(model.holonomic(qv(0)[0], times[0]))
    for j, given in ((0, start), (P - 1, end)):
        for name, value in given.items():
            if name in slot:
                lbx[j * width + slot[name]] = ubx[j * width + slot[name]] = value
            else:
                equal(f[j][natural[name]], value)
    x0 = _initial_guess(model, mode, times, width, nx, nu, slot, start, end, guess)
    x0 = np.clip(x0, lbx, ubx)
    opts = {"ipopt.print_level": 5 if verbose else 0, "print_time": bool(verbose), "ipopt.sb": "yes",
            "ipopt.tol": tol, "ipopt.max_iter": max_iter, "ipopt.honor_original_bounds": "yes"}
    solver = ca.nlpsol("anholo_ocp", "ipopt", {"x": w, "f": J, "g": ca.vertcat(*g)}, opts)
    res = solver(x0=x0, lbx=lbx, ubx=ubx, lbg=np.array(lbg), ubg=np.array(ubg))
    stats = solver.stats()
    status, iterations = str(stats.get("return_status", "unknown")), int(stats.get("iter_count", 0))
    if not stats.get("success", False):
        raise SolverFailedError(
            f"IPOPT did not solve the problem: {status} after {iterations} iterations; the boundary values or bounds "
            "may not be reachable in time T, or the problem needs a better initial guess (guess=...), more "
            "iterations (max_iter=...) or more nodes.", status, iterations)
    sol = np.asarray(res["x"], float).ravel()
    gval = np.asarray(res["g"], float).ravel()
    viol = float(max(np.max(np.maximum(np.array(lbg) - gval, 0.0), initial=0.0),
                     np.max(np.maximum(gval - np.array(ubg), 0.0), initial=0.0)))
    blocks = sol.reshape(P, width).T
    Xs, Us = blocks[:nx], blocks[nx:nx + nu]
    qs = Xs[:n]
    vs = Xs[n:] if dynamic else Us
    qdot = np.column_stack([np.asarray(model.kin(qs[:, j], vs[:, j], times[j]), float).ravel() for j in range(P)]) \
        if P else np.zeros((n, 0))
    lam = np.asarray(res["lam_g"], float).ravel()
    costate = np.column_stack([-lam[i:i + nx] for i in defects])
    return dict(t=times, q=qs, v=vs, u=Us, qdot=qdot, cost=float(res["f"]), status=status, iterations=iterations,
                max_violation=viol, costate=costate)


def _initial_guess(model, mode, times, width, nx, nu, slot, start, end, guess) -> np.ndarray:
    P = len(times)
    blocks = np.zeros((width, P))
    T = times[-1]
    if guess is not None:
        rows = list(guess.q) + (list(guess.v) if mode == "dynamic" else []) + list(guess.u)
        for i, row in enumerate(rows):
            blocks[i] = np.interp(times, guess.t, row)
        return blocks.T.ravel()
    # A small smooth perturbation, zero at the ends: at rest (v = 0) on a straight line the linearised
    # constraints of a nonholonomic system lose the directions out of D (a car cannot move sideways to first
    # order), and IPOPT's restoration phase may then declare a reachable target infeasible.
    bump = np.sin(np.pi * times / T)
    rng = np.random.default_rng(20250101)
    for i in range(width):
        blocks[i] = 0.1 * rng.uniform(-1.0, 1.0) * bump
    for name, i in slot.items():
        a, b = start.get(name), end.get(name)
        if a is not None and b is not None:
            blocks[i] += a + (b - a) * times / T
        elif a is not None or b is not None:
            blocks[i] += a if a is not None else b
    return blocks.T.ravel()

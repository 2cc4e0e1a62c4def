"""Structure-preserving integrators: the discrete Lagrange–d'Alembert (nonholonomic variational) scheme.

The scheme of Cortés & Martínez (2001) and McLachlan & Perlmutter (2006) with the midpoint discrete
Lagrangian (docs/integrators.rst).  For ``L(q, q̇, t)``, forces ``F(q, q̇, t)``, nonholonomic
constraints ``φ(q, q̇, t) = κ(q) q̇ + c(q, t) = 0`` (k of them) and holonomic constraints
``f(q, t) = 0`` (r of them), at the fixed step h::

    L_d(q0, q1) = h L(q̄, v),   q̄ = (q0 + q1)/2,   v = (q1 − q0)/h,   t̄ = t0 + h/2
    D2L_d(q_{k−1}, q_k) + f⁺_{k−1} + D1L_d(q_k, q_{k+1}) + f⁻_k = κ(q_k)ᵀ λ_k + ∇f(q_k)ᵀ μ_k
    κ(q̄_k) v_k + c(q̄_k, t̄_k) = 0,   f(q_{k+1}, t_{k+1}) = 0

with the discrete forces ``f⁻ = f⁺ = (h/2) F(q̄, v, t̄)``.  Writing ``P = ∂L/∂q̇`` and ``G = ∂L/∂q + F``
at ``(q̄, v, t̄)`` the discrete momenta are ``p⁺ = D2L_d + f⁺ = P + (h/2) G`` and
``−D1L_d − f⁻ = P − (h/2) G``, so one step from ``(q_k, p_k)`` solves, for ``(q_{k+1}, λ_k, μ_k)``,

    P − (h/2) G + κ(q_k)ᵀ λ_k + ∇f(q_k)ᵀ μ_k = p_k,   κ(q̄)v + c = 0,   f(q_{k+1}) = 0,

by Newton's method with the exact Jacobian (the second derivatives ``∂P/∂q̇ = W``, ``∂P/∂q``, ``∂G/∂q``,
``∂G/∂q̇`` and ``∂φ/∂q`` are differentiated once with symengine and compiled with common subexpressions;
no symbolic work is done per step), then sets ``p_{k+1} = P + (h/2) G``.  The initial momentum is
``p_0 = ∂L/∂q̇(q_0, q̇_0)`` (the discrete momentum matching of Marsden & West (2001)).  The holonomic
constraints are imposed on positions with the multiplier on ``∇f(q_k)`` (as in SHAKE, Ryckaert, Ciccotti
& Berendsen (1977)); their differentiated forms, which the system file appends to its constraints, are
not imposed a second time.

Properties (docs/integrators.rst): order 2 (the midpoint rule is symmetric); the discrete constraint
``κ(q̄)(q_{k+1} − q_k)/h + c = 0`` and ``f(q_k) = 0`` hold to the Newton tolerance (round-off);
for a holonomic system it is the symplectic, momentum-conserving midpoint variational integrator
(Marsden & West 2001), whose energy error stays bounded over exponentially long times; for nonholonomic
systems energy is not conserved exactly, and its error stays bounded on the reversible test problems
(McLachlan & Perlmutter 2006) — Modin & Verdier (2020) show that reversibility, not the discrete
principle, is the mechanism, and that it may fail without it.

Constraints not affine in the velocities, ``φ(q, q̇, t) = 0`` (Chetaev's rule, the constraint forces
``λ_a ∂φ_a/∂q̇``; :attr:`DiscreteMechanics.chetaev`): the discrete constraint and the discrete Chetaev
force are both taken at the midpoint, the force shared between the two ends of the step like ``f^±``::

    φ(q̄_k, v_k, t̄_k) = 0,   P − (h/2) G + ½ J_kᵀλ_k + ∇f(q_k)ᵀμ_k = p_k,   p_{k+1} = P + (h/2) G − ½ J_kᵀλ_k

with ``J_k = ∂φ/∂q̇(q̄_k, v_k, t̄_k)`` — a symmetric generalisation of the midpoint scheme (not one from the
literature), used for all the written constraints once one is not affine; measured order 2
(docs/integrators.rst).  Control inputs enter ``F`` with their values at the midpoint of the step
(:class:`DLAStepper`'s ``inputs``).

Output: the velocity at a grid point ``q_k`` is the constraint-consistent discrete Legendre transform:
``u`` with ``∂L/∂q̇(q_k, u) − p_k ∈ span(∂φ/∂q̇(q_k, u)ᵀ, ∇f(q_k)ᵀ)`` and ``φ(q_k, u) = 0``, ``ḟ(q_k, u) = 0``
(independent of which of the two discrete momenta at ``q_k`` is used, since they differ by
``κ(q_k)ᵀλ_k``).  Output times between grid points are interpolated by the cubic Hermite polynomial
of ``(q_k, u_k)`` and ``(q_{k+1}, u_{k+1})``; the interpolated velocity is then projected onto the
constraints at the interpolated position (the Euclidean projection), so ``φ = 0`` holds to round-off
at every output time; ``f(q) = 0`` holds to round-off at grid points and to ``O(h⁴)`` between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from scipy.linalg.lapack import dgesv as _dgesv

from ..algebra.codegen import expression_function
from ..algebra.engine import engine_diff, se, to_engine
from ..errors import InitialStateError, IntegrationError, MissingParameterError, SimulationError

__all__ = ["DiscreteMechanics", "discrete_mechanics", "DLAStepper", "integrate_dla", "march", "new_arrays"]

_NEWTON_TOL = 1e-9  # on |Newton update of q| (2-norm), relative to 1 + max|q|; its error is quadratic
_NEWTON_MAX = 25


def _compiled_function(args, exprs, backend=None):
    """``f(x, out=None)`` of the flat argument vector ``x = args`` (symengine symbols; or the rows of an
    ``(N, len(args))`` array) returning the flat ``exprs``: the project's one code generator
    (:func:`~anholo.algebra.codegen.expression_function`, common subexpressions shared; the C backend where
    ``$ANHOLO_CODEGEN`` allows — called once per Newton iteration of every step)."""
    exprs = list(exprs) or [se.Integer(0)]
    return expression_function(args, exprs, backend=backend).vector


@dataclass(frozen=True, eq=False)
class DiscreteMechanics:
    """The compiled ingredients of the structure-preserving schemes for one system (built by
    :func:`discrete_mechanics`); also the ``system`` of the :class:`~anholo.numerics.integrate.Trajectory`
    they return (its monitors: :meth:`energy`, :meth:`constraint_functions`, :meth:`holonomic_functions`).

    Attributes
    ----------
    name, kind : str
    coordinate_names, parameters : tuple of str
    values : dict
        Default parameter values ``{name: float}``.
    n, k, r : int
        Coordinates, nonholonomic constraints (the written ones, without the differentiated holonomic
        ones), holonomic constraints.
    dependent : tuple of int
        Indices of the dependent coordinates of the adapted frame ``X_α = ∂_{f_α} + C^P_α ∂_P`` (the
        frame of Maggi's route, :class:`~anholo.dynamics.maggi.MaggiSystem`; used by the discrete Hamel
        scheme).
    chetaev : bool
        True if a constraint is not affine in the velocities: the midpoint Chetaev form of the scheme (module
        docstring) is used, and the discrete Hamel scheme refuses the system.
    inputs : tuple of str
        The control inputs, whose values follow the parameters in the arguments of the compiled step.
    group : LieGroupScheme or None
        The compiled Cayley discrete Hamel scheme of an SO(3) or SE(2) factor
        (:mod:`anholo.numerics.lie_hamel_so3`, :mod:`anholo.numerics.lie_hamel`) when attached
        (``dataclasses.replace(mech, group=group_scheme(system))``); ``method="hamel"`` then uses it.
    """

    name: str
    kind: str
    coordinate_names: tuple
    parameters: tuple
    values: dict
    n: int
    k: int
    r: int
    dependent: tuple
    _terms: object = field(repr=False)  # (q, u, t, p) -> P, G, W, Pq, Gq, Gu, C, Cq, κ
    _point: object = field(repr=False)  # (q, t, p) -> κ(q), f(q, t), ∇f(q, t), ∂f/∂t
    _energy: object = field(repr=False)
    _phi: object = field(repr=False)    # the constraints as written (with the differentiated holonomic ones)
    _newton: object = field(repr=False, default=None)  # fused residual/Jacobian of one step (newton_source)
    multiplier_names: tuple = ()
    control_names: tuple = ()
    ode: object = None
    chetaev: bool = False  # a constraint not affine in the velocities: the midpoint Chetaev form (docstring)
    inputs: tuple = ()     # the control inputs (names), arguments of the compiled functions after the parameters
    group: object = None  # the Cayley scheme on SO(3) or SE(2) (anholo.numerics.lie_hamel_so3), built on request

    # --- parameters and monitors (the interface of CompiledSystem used by Trajectory) ---------------
    def parameter_vector(self, values: Mapping | None = None) -> tuple:
        """Parameter values in order: ``values`` (names or Symbols as keys) over the defaults.

        Raises
        ------
        MissingParameterError
            If a parameter has no value, or ``values`` names an unknown parameter.
        """
        given = {}
        for key, v in (values or {}).items():
            name = key.name if isinstance(key, sp.Symbol) else str(key)
            if name not in self.parameters:
                raise MissingParameterError(f"{name!r} is not a parameter of this system; its parameters are "
                                            f"{', '.join(self.parameters) or '(none)'}.")
            given[name] = float(v)
        merged = {**self.values, **given}
        missing = [p for p in self.parameters if p not in merged]
        if missing:
            raise MissingParameterError(
                f"no value for the parameter(s) {', '.join(missing)}; give them with parameters={{...}} in "
                "Python or --set NAME=VALUE on the command line (or a [values] table in the system file).")
        return tuple(merged[p] for p in self.parameters)

    def _batch(self, fn, Q, U, p, T):
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        N = Q.shape[1]
        cols = [Q.T]
        if U is not None:
            cols.append(np.atleast_2d(np.asarray(U, dtype=float)).T)
        cols.append(np.broadcast_to(np.asarray(T, dtype=float), (N,))[:, None])
        cols.append(np.broadcast_to(np.asarray(p, dtype=float), (N, len(self.parameters))))
        out = np.asarray(fn(np.ascontiguousarray(np.hstack(cols))))
        return out.reshape(N, -1).T

    def energy(self, Q, U, p, T=0.0) -> np.ndarray:
        """``E_L = q̇·∂L/∂q̇ − L`` at the columns of ``Q, U``."""
        return self._batch(self._energy, Q, U, p, T)[0]

    def constraint_functions(self, Q, U, p, T=0.0) -> np.ndarray:
        """The constraints as written (with the differentiated holonomic ones), shape ``(k + r, N)``."""
        if self.k + self.r == 0:
            return np.zeros((0, np.shape(Q)[1]))
        return self._batch(self._phi, Q, U, p, T)

    def holonomic_functions(self, Q, p, T=0.0) -> np.ndarray:
        """``f(q, t)`` of the holonomic constraints, shape ``(r, N)``."""
        if self.r == 0:
            return np.zeros((0, np.shape(Q)[1]))
        out = self._batch(self._point, Q, None, p, T)
        return out[self.k * self.n: self.k * self.n + self.r]

    # --- pointwise pieces used by the steppers ---------------------------------------------------------
    def terms(self, buf: np.ndarray) -> tuple:
        """``(P, G, W, Pq, Gq, Gu, C, Cq, κ)`` at the argument vector ``buf = (q, u, t, p)``."""
        n, k = self.n, self.k
        out = np.asarray(self._terms(buf)).ravel()
        i = 0
        parts = []
        for size, shape in ((n, (n,)), (n, (n,)), (n * n, (n, n)), (n * n, (n, n)), (n * n, (n, n)),
                            (n * n, (n, n)), (k, (k,)), (k * n, (k, n)), (k * n, (k, n))):
            parts.append(out[i:i + size].reshape(shape))
            i += size
        return tuple(parts)

    def point(self, buf: np.ndarray) -> tuple:
        """``(κ(q), f(q, t), ∇f(q, t), ∂f/∂t)`` at ``buf = (q, t, p)``."""
        n, k, r = self.n, self.k, self.r
        out = np.asarray(self._point(buf)).ravel()
        kap = out[:k * n].reshape(k, n)
        f = out[k * n:k * n + r]
        fq = out[k * n + r:k * n + r + r * n].reshape(r, n)
        ft = out[k * n + r + r * n:k * n + 2 * r + r * n]
        return kap, f, fq, ft


def discrete_mechanics(system) -> DiscreteMechanics:
    """Compile L, its first and second derivatives, the forces and the constraints of a
    :class:`~anholo.system.System` for the structure-preserving schemes.

    Raises
    ------
    SimulationError
        If the Lagrangian or a constraint depends on a control input (inputs enter the forces only).
    """
    chart = system.chart
    qs, us, ps = chart.coordinates, chart.velocities, chart.parameters
    tsym = system.time if getattr(system, "time", None) is not None else sp.Symbol("t", real=True)
    inputs = tuple(getattr(system, "inputs", ()) or ())
    n = len(qs)
    r = len(system.holonomic)
    written = tuple(system.constraints)[:len(system.constraints) - r]
    k = len(written)
    Q = [se.Symbol(s.name) for s in qs]
    U = [se.Symbol(s.name) for s in us]
    T = se.Symbol(tsym.name)
    Pm = [se.Symbol(s.name) for s in ps]
    Uin = [se.Symbol(str(s)) for s in inputs]  # the inputs' values: arguments after the parameters
    conv = {**{s: se.Symbol(s.name) for s in (*qs, *us, *ps, tsym)}}
    conv.update({s: se.Symbol(str(s)) for s in inputs if isinstance(s, sp.Symbol)})

    def eng(e):
        e = sp.sympify(e)
        e = e.xreplace({s: sp.Symbol(s.name) for s in e.free_symbols if s in conv})
        return to_engine(e)

    L = eng(system.lagrangian.natural_expr())
    in_names = {str(s) for s in inputs}
    if in_names & {str(s) for s in L.free_symbols}:
        raise SimulationError(f"the Lagrangian of {system.name!r} depends on an input; the variational and hamel "
                              "methods take inputs in the forces only: use --method DOP853.")
    forces = system.forces.total if getattr(system, "forces", None) is not None else (0,) * n
    F = [eng(f) for f in forces]
    P = [engine_diff(L, u) for u in U]
    G = [engine_diff(L, q) + f for q, f in zip(Q, F)]
    W = [engine_diff(Pi, u) for Pi in P for u in U]
    Pq = [engine_diff(Pi, q) for Pi in P for q in Q]
    Gq = [engine_diff(Gi, q) for Gi in G for q in Q]
    Gu = [engine_diff(Gi, u) for Gi in G for u in U]
    C = [eng(c) for c in written]
    if any(in_names & {str(x) for x in c.free_symbols} for c in C):
        raise SimulationError(f"a constraint of {system.name!r} depends on an input; the variational and hamel "
                              "methods take inputs in the forces only: use --method DOP853.")
    kap = [engine_diff(c, u) for c in C for u in U]
    chetaev = any(engine_diff(kj, u) != 0 for kj in kap for u in U)  # not affine: Chetaev's rule at the midpoint
    Cq = [engine_diff(c, q) for c in C for q in Q]
    hol = [eng(f) for f in system.holonomic]
    fq = [engine_diff(f, q) for f in hol for q in Q]
    ft = [engine_diff(f, T) for f in hol]
    zero_u = {u: se.Integer(0) for u in U}
    # κ(q) of affine constraints (for nonlinear ones ∂φ/∂q̇ depends on q̇ and is taken from terms(): zeros here)
    kap_q = [se.Integer(0)] * len(kap) if chetaev else [e.xreplace(zero_u) for e in kap]
    args_qu = Q + U + [T] + Pm + Uin
    args_mon = Q + U + [T] + Pm
    args_q = Q + [T] + Pm
    E = sum((u * Pi for u, Pi in zip(U, P)), se.Integer(0)) - L
    phi = [eng(c) for c in system.constraints]
    try:
        dep = tuple(chart.coordinates.index(c) for c in system.maggi().dependent_coordinates) if k else ()
    except Exception:  # the frame of the discrete Hamel scheme is then chosen at the initial point
        dep = None
    newton = _newton_function(Q, U, T, Pm + Uin, P, G, W, Pq, Gq, Gu, C, Cq, kap, kap_q, hol, fq, chetaev)
    return DiscreteMechanics(
        name=system.name, kind="nonholonomic" if k + r else "euler-lagrange",
        coordinate_names=tuple(s.name for s in qs), parameters=tuple(s.name for s in ps),
        values={(key.name if isinstance(key, sp.Symbol) else str(key)): float(v)
                for key, v in (system.values or {}).items()},
        n=n, k=k, r=r, dependent=dep,
        _terms=_compiled_function(args_qu, P + G + W + Pq + Gq + Gu + C + Cq + kap),
        _point=_compiled_function(args_q, kap_q + hol + fq + ft),
        _energy=_compiled_function(args_mon, [E], "python"),  # monitors: arrays of points, no build
        _phi=_compiled_function(args_mon, phi, "python"),
        _newton=newton, chetaev=chetaev, inputs=tuple(str(s) for s in inputs),
    )


def _newton_function(Q, U, T, Pm, P, G, W, Pq, Gq, Gu, C, Cq, kap, kap_q, hol, fq, chetaev=False):
    """One compiled function of ``(q0, q1, p0, λ, t0, h, parameters, inputs)`` returning the residual R and
    the Jacobian J of one step of the discrete Lagrange–d'Alembert equations (module docstring), then
    ``p⁺ = P + (h/2)G`` (with ``chetaev``: ``− ½ J(q̄, v)ᵀλ``) and its derivative along ``q1``: every
    Newton iteration is one call."""
    n, k, r = len(Q), len(C), len(hol)
    Q0 = [se.Symbol(f"_q0_{i}") for i in range(n)]
    Q1 = [se.Symbol(f"_q1_{i}") for i in range(n)]
    P0 = [se.Symbol(f"_p0_{i}") for i in range(n)]
    LAM = [se.Symbol(f"_lam_{i}") for i in range(k + r)]
    t0, h = se.Symbol("_t0"), se.Symbol("_h")
    half = se.Rational(1, 2)
    mid = {**{Q[i]: half * (Q0[i] + Q1[i]) for i in range(n)}, **{U[i]: (Q1[i] - Q0[i]) / h for i in range(n)},
           T: t0 + half * h}
    at0 = {**{Q[i]: Q0[i] for i in range(n)}, T: t0}
    at1 = {**{Q[i]: Q1[i] for i in range(n)}, T: t0 + h}

    def sub(e, rep):
        return e.xreplace(rep) if not e.is_Number else e

    Pm_, Gm = [sub(e, mid) for e in P], [sub(e, mid) for e in G]
    Wm, Pqm, Gqm, Gum = ([sub(e, mid) for e in M] for M in (W, Pq, Gq, Gu))
    Cm, Cqm, kapm = [sub(e, mid) for e in C], [sub(e, mid) for e in Cq], [sub(e, mid) for e in kap]
    A0 = [sub(e, at0) for e in kap_q] + [sub(e, at0) for e in fq]  # rows of κ(q0), ∇f(q0)
    dim = n + k + r
    if chetaev:  # the Chetaev force ½ ∂φ/∂q̇(q̄, v)ᵀλ on both ends of the step, the holonomic one at q0
        S = [sum((LAM[a] * kap[a * n + i] for a in range(k)), se.Integer(0)) for i in range(n)]
        Sq = [sub(engine_diff(Si, q), mid) for Si in S for q in Q]
        Su = [sub(engine_diff(Si, u), mid) for Si in S for u in U]
        A0 = [half * e for e in kapm] + A0[k * n:]
        dS = [half * (half * Sq[m] + Su[m] / h) for m in range(n * n)]  # ∂(½ Jᵀλ)/∂q1
    else:
        dS = [se.Integer(0)] * (n * n)
    R = [Pm_[i] - half * h * Gm[i] - P0[i] + sum((A0[a * n + i] * LAM[a] for a in range(k + r)), se.Integer(0))
         for i in range(n)]
    R += Cm + [sub(f, at1) for f in hol]
    J = [[se.Integer(0)] * dim for _ in range(dim)]
    for i in range(n):
        for j in range(n):
            J[i][j] = (half * (Pqm[i * n + j] - half * h * Gqm[i * n + j]) + (Wm[i * n + j] - half * h * Gum[i * n + j]) / h
                       + dS[i * n + j])
        for a in range(k + r):
            J[i][n + a] = A0[a * n + i]
    for a in range(k):
        for j in range(n):
            J[n + a][j] = half * Cqm[a * n + j] + kapm[a * n + j] / h
    for b in range(r):
        for j in range(n):
            J[n + k + b][j] = sub(fq[b * n + j], at1)
    Pplus = [Pm_[i] + half * h * Gm[i] for i in range(n)]
    Jp = [half * (Pqm[i * n + j] + half * h * Gqm[i * n + j]) + (Wm[i * n + j] + half * h * Gum[i * n + j]) / h
          for i in range(n) for j in range(n)]
    if chetaev:  # p⁺ = P + (h/2)G − ½ J(q̄, v)ᵀλ
        Pplus = [Pplus[i] - sum((A0[a * n + i] * LAM[a] for a in range(k)), se.Integer(0)) for i in range(n)]
        Jp = [Jp[m] - dS[m] for m in range(n * n)]
    return _compiled_function(Q0 + Q1 + P0 + LAM + [t0, h] + Pm, R + [e for row in J for e in row] + Pplus + Jp)


class _Buffers:
    """Argument vectors ``(q, u, t, p)`` and ``(q, t, p)`` reused across calls."""

    def __init__(self, n: int, p: Sequence, extra: int = 0):
        self.n = n
        self.qu = np.zeros(2 * n + 1 + len(p) + extra)  # (q, u, t, p, inputs): the inputs' values 0 unless set
        self.qu[2 * n + 1:2 * n + 1 + len(p)] = p
        self.q = np.empty(n + 1 + len(p))
        self.q[n + 1:] = p

    def at(self, q, u, t):
        n = self.n
        self.qu[:n] = q
        self.qu[n:2 * n] = u
        self.qu[2 * n] = t
        return self.qu

    def at_q(self, q, t):
        n = self.n
        self.q[:n] = q
        self.q[n] = t
        return self.q


class DLAStepper:
    """One step of the discrete Lagrange–d'Alembert scheme (module docstring) for a
    :class:`DiscreteMechanics` at the parameter vector ``p``: Newton's method on the fused compiled residual
    and Jacobian (one call per iteration, counted in :attr:`evaluations`).  ``frame=True`` solves instead
    the multiplier-free discrete Hamel form (:mod:`anholo.numerics.discrete_hamel`)."""

    def __init__(self, mech: DiscreteMechanics, p: Sequence, h: float, frame=None, inputs=None):
        n, k, r = mech.n, mech.k, mech.r
        self.mech, self.h, self.n, self.dim = mech, float(h), n, n + k + r
        self.args = np.zeros(3 * n + k + r + 2 + len(p) + len(mech.inputs))
        self.args[3 * n + k + r] = np.nan
        self.args[3 * n + k + r + 1] = self.h
        self.args[3 * n + k + r + 2:3 * n + k + r + 2 + len(p)] = p
        self.inputs = inputs  # (t, q, q̇) -> the inputs' values, evaluated at the midpoint of every iterate
        self.input_slice = slice(3 * n + k + r + 2 + len(p), None)
        self.out = np.empty(self.dim + self.dim ** 2 + n + n * n)
        d = self.dim
        self.R, self.J = self.out[:d], self.out[d:d + d * d].reshape(d, d)
        self.Pplus, self.Jp = self.out[d + d * d:d + d * d + n], self.out[d + d * d + n:].reshape(n, n)
        self.evaluations = 0
        self.frame = frame  # constraint rows at q0 -> basis of their kernel (n × m), for the Hamel form

    def step(self, q0, p0, t0, guess):
        n, h, a = self.n, self.h, self.args
        a[:n], a[n:2 * n], a[2 * n:3 * n] = q0, guess, p0
        a[3 * n:3 * n + self.dim - n] = 0.0
        a[3 * n + self.dim - n] = t0
        tol2 = (_NEWTON_TOL * (1.0 + float(np.abs(q0).max()))) ** 2
        fn, out, R, J = self.mech._newton, self.out, self.R, self.J
        B = None
        k, inputs = self.mech.k, self.inputs
        dl = None
        for _ in range(_NEWTON_MAX):
            if inputs is not None:  # frozen within an iteration: a quasi-Newton step in the inputs' dependence
                q1 = a[n:2 * n]
                a[self.input_slice] = inputs(t0 + 0.5 * h, 0.5 * (q0 + q1), (q1 - q0) / h)
            fn(a, out=out)
            self.evaluations += 1
            if self.frame is not None and B is None:  # the constraint rows at q0 are J's upper-right block
                B = self.frame(J[:n, n:].T)
            if B is None:
                lu, piv, dz, info = _dgesv(J, -R)
                dq, dl = dz[:n], dz[n:n + k]
                a[n:2 * n] += dq
                a[3 * n:3 * n + self.dim - n] += dz[n:]
            else:  # the frame components along X_α(q0) and the constraint rows: n equations in q1
                m = B.shape[1]
                JH = np.empty((n, n))
                RH = np.empty(n)
                JH[:m] = B.T @ J[:n, :n]
                RH[:m] = B.T @ R[:n]
                JH[m:] = J[n:, :n]
                RH[m:] = R[n:]
                lu, piv, dq, info = _dgesv(JH, -RH)
                a[n:2 * n] += dq
            d2 = float(dq @ dq)  # one reduction: NaN fails the next test as well as inf
            if info != 0 or not d2 < np.inf:
                raise IntegrationError(f"the Newton matrix of the step at t = {t0:g} is singular (a singular mass "
                                       f"matrix or constraints?); take a smaller --step (now {h:g}).")
            if d2 <= tol2:
                # p⁺ = P + (h/2) G at the updated q1 to first order in dq (the error is O(|dq|²), below
                # round-off at this tolerance)
                p1 = self.Pplus + self.Jp @ dq
                if self.mech.chetaev and dl is not None:  # p⁺ carries −½ J(q̄, v)ᵀλ
                    p1 -= J[:n, n:n + k] @ dl
                break
        else:
            raise IntegrationError(
                f"the discrete step at t = {t0:g} did not converge in {_NEWTON_MAX} Newton iterations; take a "
                f"smaller --step (now {h:g}).")
        return a[n:2 * n].copy(), p1


def legendre_on_constraints(mech: DiscreteMechanics, buf: _Buffers, q, pk, t, guess) -> np.ndarray:
    """The velocity ``u`` at ``q`` with ``∂L/∂q̇(q, u) − p ∈ span(∂φ/∂q̇(q, u)ᵀ, ∇f(q)ᵀ)``, ``φ(q, u) = 0``
    and ``∇f(q)u + ∂f/∂t = 0`` (the constraint-consistent discrete Legendre transform; Newton, exact after
    one iteration when L is quadratic in the velocities and the constraints are affine; for constraints
    not affine in the velocities the term of ``∂²φ/∂q̇²`` is left out of the Jacobian: its multiplier is
    ``O(h²)``)."""
    n, k, r = mech.n, mech.k, mech.r
    _, _, fq, ft = mech.point(buf.at_q(q, t))
    u = np.array(guess, dtype=float)
    dim = n + k + r
    J = np.zeros((dim, dim))
    J[:n, n + k:] = -fq.T
    J[n + k:, :n] = fq
    R = np.empty(dim)
    for _ in range(_NEWTON_MAX):
        Pv, _, W, *_rest = mech.terms(buf.at(q, u, t))
        C, kap = _rest[3], _rest[5]
        R[:n] = Pv - pk
        R[n:n + k] = C
        R[n + k:] = fq @ u + ft
        J[:n, :n] = W
        J[:n, n:n + k] = -kap.T
        J[n:n + k, :n] = kap
        dz = np.linalg.solve(J, -R)
        u = u + dz[:n]
        if np.max(np.abs(dz[:n])) <= 1e-14 * (1.0 + np.max(np.abs(u))):
            break
    return u


def _project_velocity(mech: DiscreteMechanics, buf: _Buffers, q, u, t) -> np.ndarray:
    """The Euclidean projection of ``u`` onto ``κ(q)u + c = 0``, ``∇f(q)u + ∂f/∂t = 0``."""
    n, k, r = mech.n, mech.k, mech.r
    if k + r == 0:
        return u
    _, _, fq, ft = mech.point(buf.at_q(q, t))
    for _ in range(_NEWTON_MAX if mech.chetaev else 1):  # Gauss–Newton for constraints not affine in q̇
        terms = mech.terms(buf.at(q, u, t))
        C, kap = terms[6], terms[8]
        A = np.vstack([kap, fq])
        res = np.concatenate([C, fq @ u + ft])
        du = A.T @ np.linalg.solve(A @ A.T, res)
        u = u - du
        if np.max(np.abs(du), initial=0.0) <= 1e-14 * (1.0 + np.max(np.abs(u))):
            break
    return u


def check_initial(mech: DiscreteMechanics, p, q0, qdot0, t0, tol: float) -> None:
    """Raise :class:`InitialStateError` if ``(q0, q̇0)`` violates the constraints (scaled tolerance)."""
    if mech.k + mech.r == 0:
        return
    res = mech.constraint_functions(np.asarray(q0)[:, None], np.asarray(qdot0)[:, None], p, t0)[:, 0]
    if not np.all(np.isfinite(res)) or np.max(np.abs(res)) > tol * (1.0 + np.max(np.abs(qdot0))):
        raise InitialStateError(f"the initial velocities violate the constraints (residuals {np.round(res, 12)}); "
                                "give q_dot0 on the constraints.")
    if mech.r:
        f = mech.holonomic_functions(np.asarray(q0)[:, None], p, t0)[:, 0]
        if np.max(np.abs(f)) > tol * (1.0 + np.max(np.abs(q0))):
            raise InitialStateError(f"the initial coordinates violate the holonomic constraints (f = {f}); give "
                                    "q0 on them.")


def _hermite(t, ta, tb, qa, qb, ua, ub):
    """Cubic Hermite interpolation of position and its derivative at t in [ta, tb]."""
    h = tb - ta
    s = (t - ta) / h
    h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
    d00, d10, d01, d11 = (6 * s**2 - 6 * s) / h, 3 * s**2 - 4 * s + 1, (-6 * s**2 + 6 * s) / h, 3 * s**2 - 2 * s
    q = h00 * qa + h10 * h * ua + h01 * qb + h11 * h * ub
    u = d00 * qa + d10 * ua + d01 * qb + d11 * ub
    return q, u


def sample(mech, p, grid_t, Qs, Ps, Vs, t_out, velocity_at) -> tuple:
    """Positions and constraint-consistent velocities at ``t_out`` from the grid (module docstring).
    ``velocity_at(j)`` is the velocity at grid point j."""
    buf = _Buffers(mech.n, p, len(mech.inputs))
    t0, h = grid_t[0], grid_t[1] - grid_t[0]
    N = len(grid_t) - 1
    cache = {}

    def vel(j):
        if j not in cache:
            cache[j] = velocity_at(j)
        return cache[j]

    Qo = np.empty((mech.n, len(t_out)))
    Uo = np.empty_like(Qo)
    for i, t in enumerate(t_out):
        x = (t - t0) / h
        j = int(np.clip(np.floor(x + 1e-9), 0, N))
        if abs(x - round(x)) <= 1e-9 * max(1.0, abs(x)):
            j = int(np.clip(round(x), 0, N))
            Qo[:, i], Uo[:, i] = Qs[j], vel(j)
            continue
        j = min(j, N - 1)
        q, u = _hermite(t, grid_t[j], grid_t[j + 1], Qs[j], Qs[j + 1], vel(j), vel(j + 1))
        Qo[:, i], Uo[:, i] = q, _project_velocity(mech, buf, q, u, t)
    return Qo, Uo


def march(step, Qs, Ps, V, t0: float, h: float, nsteps: int, prev, progress=None, watch=None) -> tuple:
    """Run ``nsteps`` fixed steps ``(q_{j+1}, p_{j+1}) = step(q_j, p_j, t_j, guess)`` into the rows of ``Qs``,
    ``Ps`` (row 0 given) and the midpoint velocities ``V``, with the guess ``2 q_j − q_{j−1}``.

    Returns ``(done, stop)``: the number of steps completed and None, or the exception that ended the run
    early with every completed step kept — an :class:`~anholo.errors.IntegrationError` of a step, Ctrl-C
    (``KeyboardInterrupt``) or another interrupt that is not an ``Exception`` (the command line's time
    budget).  ``progress(t)`` is called about once a second.  ``watch(j)``, called after step j (grid point
    j reached), ends the run there when it returns True (a terminal event: ``done < nsteps``, stop None)."""
    import time

    last = time.monotonic()
    done = 0
    try:
        for j in range(nsteps):
            q = Qs[j]
            Qs[j + 1], Ps[j + 1] = step(q, Ps[j], t0 + j * h, 2 * q - prev)
            V[j] = (Qs[j + 1] - q) / h
            prev = q
            done = j + 1
            if watch is not None and watch(done):
                return done, None
            if progress is not None and j % 64 == 63:
                now = time.monotonic()
                if now - last > 1.0:
                    last = now
                    progress(t0 + (j + 1) * h)
        return nsteps, None
    except IntegrationError as exc:
        return done, exc
    except BaseException as exc:
        if isinstance(exc, (Exception, SystemExit, GeneratorExit)):
            raise
        return done, exc  # Ctrl-C or the time budget: the completed steps are kept


def integrate_dla(mech: DiscreteMechanics, p, t0: float, h: float, nsteps: int, q0, qdot0, progress=None,
                  inputs=None, watch=None, arrays=None) -> tuple:
    """The grid ``t_k``, positions ``q_k`` and momenta ``p_k`` (rows), the midpoint velocities
    ``v_k = (q_{k+1} − q_k)/h``, the number of evaluations of the discrete Lagrange–d'Alembert scheme, and
    None or the exception that ended the run early (:func:`march`; the arrays then hold the steps done).
    ``inputs(t, q, q̇)``: the control inputs' values, evaluated at the midpoint of the step; ``watch``: see
    :func:`march`; ``arrays``: the ``(Qs, Ps, V)`` to fill (:func:`new_arrays`), which ``watch`` may read."""
    stepper = DLAStepper(mech, p, h, inputs=inputs)
    buf = _Buffers(mech.n, p, len(mech.inputs))
    Qs, Ps, V = arrays if arrays is not None else new_arrays(mech.n, nsteps)
    Qs[0] = q0
    Ps[0] = mech.terms(buf.at(q0, qdot0, t0))[0]
    done, stop = march(stepper.step, Qs, Ps, V, t0, h, nsteps, q0 - h * qdot0, progress, watch)
    grid_t = t0 + h * np.arange(done + 1)
    return grid_t, Qs[:done + 1], Ps[:done + 1], V[:done], stepper.evaluations + 1, stop


def new_arrays(n: int, nsteps: int) -> tuple:
    """Empty ``(Qs, Ps, V)`` for ``nsteps`` steps of a system with n coordinates (:func:`march`)."""
    Qs = np.empty((nsteps + 1, n))
    return Qs, np.empty_like(Qs), np.empty((nsteps, n))

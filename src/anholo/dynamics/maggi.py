"""Maggi's equations: the Lagrange–d'Alembert field of a large system, without symbolic inversion.

For a system too large for the exact route of :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem`
(whose adapted frame, coframe and structure functions are put in normal form), the same field Γ_nh is
computed in the velocity-projection form of the Lagrange–d'Alembert equations (Maggi's equations; the
form behind Kane's method, Kane & Levinson (1985)):

Solve the constraints ``φ_a = κ_aA(q) q̇^A + c_a(q) = 0`` for k dependent velocities ``q̇^P``:
``q̇^P = C^P_α v^α + β^P`` with ``κ_P C = −κ_f``, ``κ_P β = −c``, and the free velocities
``v^α = q̇^{f_α}``.  This is the adapted frame of docs/theory.rst with a coordinate base,

    X_α = ∂_{f_α} + C^P_α ∂_P  (spanning D),   X_a = ∂_{P_a},
    θ^α = dq^{f_α},            θ^a = dq^{P_a} − C^{P_a}_α dq^{f_α}  (the normalised constraint forms),

and Γ_nh is Hamel's equations projected on D, ``X_α^A E_A(L) = X_α^A Q_A`` on C, with
``E_A(L) = W_AB q̈^B − ∂L/∂q^A + ∂²L/∂q̇^A∂q^B q̇^B + ∂²L/∂q̇^A∂t``, ``W = ∂²L/∂q̇∂q̇``, and
``q̈ = X_α v̇^α + w`` where ``κ_P w^P = −(d/dt κ) q̇ − ċ`` (the constraints differentiated once).
So, in the implicit form (unknowns ``v̇^α`` and the frame multipliers ``μ_a = (E(L) − Q)(X_a)``)::

    g_αβ v̇^β            = X_α^A (F_A − W_AB w^B)          g_αβ = X_α^A W_AB X_β^B
    μ_a − (W X_β)_{P_a} v̇^β = (W w − F)_{P_a}             F_A = ∂L/∂q^A − ∂²L/∂q̇^A∂q^B q̇^B − ∂²L/∂q̇^A∂t + Q_A

everything evaluated at ``q̇ = X_α v^α + β``.  The multipliers of the constraints as written,
``E(L) − Q = λ_a dφ_a/dq̇``, are ``λ = κ_P^{-T} μ``.  The structure functions of the frame are
``R^a_αβ = X_α(C^{P_a}_β) − X_β(C^{P_a}_α)`` and ``R^a_αb = −∂C^{P_a}_α/∂q^{P_b}`` (all others zero).

Every ``κ_P^{-1}`` above is an LU solve whose result stays an expression (shared subexpressions, no
normal form); the computation runs in symengine (:mod:`anholo.algebra.engine`) and converts to sympy only
on request.  The field program that simulations compile (:meth:`MaggiSystem.program`) is the smaller of
this form and the same equations with L differentiated along its own straight-line program
(:mod:`anholo.dynamics.maggi_field`: reverse and tangent sweeps instead of the ``n²`` second derivatives
as expressions).

Square roots, ``Abs`` and ``sign`` may appear anywhere (L, the constraints, the forces): ``Abs`` and
``sign`` are differentiated as ``d|f| = sign(f) df`` and ``d sign(f) = 0`` (valid where ``f ≠ 0``,
:func:`~anholo.algebra.engine.engine_diff`).  A division by a symbolic zero — a square root or a
denominator that vanishes identically, e.g. ``∂²L/∂ẏ²`` of ``√(ẏ² + ż²)`` on ``ẏ = ż = 0`` —
makes symengine write ``zoo`` or ``nan`` (``0·zoo``); such a quantity is undefined everywhere, so
no program is built from it: :class:`~anholo.errors.NonFiniteExpressionError` names the quantity and
the term of L, constraint or force it comes from.  The numerical checks (rank of the constraints,
regularity, Frobenius) are decided at random points of the real domain of their expressions
(:class:`~anholo.algebra.decision.Sampler`, with the ``values`` given).  The accelerations are those of the exact route for the same adapted frame (tested on the
catalogue), and the coordinate multiplier method's (tested on the Whipple bicycle against
``sympy.physics.mechanics.KanesMethod``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import numpy as np
import sympy as sp

from ..algebra.decision import DomainError, Sampler, numerical_rank
from ..algebra.engine import engine_cse, engine_diff, has_kinks, nonfinite, se, shared_to_sympy, to_engine, zero
from ..algebra.expressions import dag_atoms, free_symbols
from ..algebra.implicit import ImplicitForm
from ..algebra.program import Program
from sympy.core.function import AppliedUndef

from ..errors import (ArgumentError, ConstraintError, DependentConstraintsError, DimensionError, IrregularLagrangianError,
                      NonFiniteExpressionError, NonlinearConstraintError, SingularFrameError,
                      UndefinedFunctionError)
from ..geometry.chart import Chart
from ..parsing import as_expression, as_expressions, chart_names

__all__ = ["MaggiSystem", "LARGE_SYSTEM", "lagrange_terms"]

#: Tree nodes of L and the constraints together above which ``System.nonholonomic()`` uses
#: :class:`MaggiSystem` instead of the exact route (which puts the adapted frame and every result in
#: a normal form).  The bundled examples have at most about 1,000 (the 5-trailer), the Whipple
#: bicycle about 10,000.
LARGE_SYSTEM = 5000


def _engine_symbols(symbols) -> list:
    return [se.Symbol(s.name) for s in symbols]


def _short(e, limit: int = 160) -> str:
    text = str(e)
    return text if len(text) <= limit else text[:limit] + " ..."


class _Cramer:
    """``A⁻¹ = adj(A)/det(A)`` with the adjugate and determinant formed over symbols that stand for the
    entries of ``A`` (cofactor expansion of a small sparse matrix), then the entries put back: the only
    division is by ``det A``, which vanishes only where ``A`` is singular (an LU without pivoting can
    divide by a pivot that vanishes where ``A`` is invertible, e.g. at a bicycle's upright state)."""

    LIMIT = 6  # larger blocks: LU (symengine's), whose pivots are not guarded

    def __init__(self, A):
        k = A.rows
        self.k, self.A = k, A
        if k > self.LIMIT:
            self.det = None
            return
        table, S = {}, se.zeros(k, k)
        for i in range(k):
            for j in range(k):
                e = A[i, j]
                if e.is_Number:
                    S[i, j] = e
                else:
                    sym = se.Symbol(f"_k{i}_{j}")
                    S[i, j], table[sym] = sym, e
        self.det = S.det().xreplace(table) if table else S.det()
        if self.det == 0:  # else every entry of A⁻¹ would be zoo (or nan)
            raise SingularFrameError(
                "the constraints cannot be solved for the chosen dependent velocities: the determinant of their "
                "block of the constraint matrix vanishes identically; choose other dependent velocities.")
        adj = se.zeros(k, k)
        for i in range(k):
            for j in range(k):
                if k == 1:
                    cof = se.Integer(1)
                else:
                    minor = se.DenseMatrix(k - 1, k - 1, [S[r, c] for r in range(k) if r != i for c in range(k) if c != j])
                    cof = minor.det() * (-1 if (i + j) % 2 else 1)
                adj[j, i] = cof.xreplace(table) if table else cof
        self.adj = adj

    def solve(self, B):
        """``A⁻¹ B``."""
        if self.det is None:
            return self.A.LUsolve(B)
        return (self.adj * B) / self.det

    def solve_transposed(self, B):
        """``A⁻ᵀ B``."""
        if self.det is None:
            return self.A.T.LUsolve(B)
        return (self.adj.T * B) / self.det


def lagrange_terms(L, q, u, t=None, Q=None, kinks: bool = False) -> tuple:
    """``(p, W, F)`` of the Euler–Lagrange equations ``W q̈ = F`` in coordinates (symengine, nothing
    normalised): ``p_A = ∂L/∂q̇^A``, ``W_AB = ∂²L/∂q̇^A∂q̇^B`` (symmetric: each entry differentiated once)
    and ``F_A = ∂L/∂q^A − ∂²L/∂q̇^A∂q^B q̇^B − ∂²L/∂q̇^A∂t + Q_A``; with ``kinks`` (Abs or sign in L) the
    derivatives are :func:`~anholo.algebra.engine.engine_diff`'s.  Shared by Maggi's and Chetaev's routes."""
    n = len(q)

    def d(e, x):
        return engine_diff(e, x, kinks) if kinks else e.diff(x)

    p = [d(L, uA) for uA in u]
    W = [[None] * n for _ in range(n)]
    for A in range(n):
        for B in range(A, n):
            W[A][B] = W[B][A] = d(p[A], u[B])
    F = []
    for A in range(n):
        e = d(L, q[A]) - sum((d(p[A], q[B]) * u[B] for B in range(n)), zero)
        if t is not None:
            e = e - d(p[A], t)
        if Q is not None:
            e = e + Q[A]
        F.append(e)
    return p, W, F


@dataclass(frozen=True, eq=False)
class MaggiSystem:
    """The Lagrange–d'Alembert problem in the velocity-projection (Maggi) form, for large systems.

    Parameters
    ----------
    chart : Chart
    lagrangian : expression
        ``L(t, q, q̇)`` in the natural velocities of ``chart``.
    constraints : sequence of expressions
        ``φ_a(t, q, q̇) = 0``, linear or affine in ``q̇`` (for instance rolling contacts, and the
        time derivatives of holonomic constraints).
    forces : sequence, optional
        Generalized forces ``Q_A`` (one per coordinate, in ``t, q, q̇``).
    time : Symbol, optional
        The time, if L, the constraints or the forces depend on it.
    dependent : sequence, optional
        The coordinates whose velocities are solved for (names or symbols); by default the last
        ones whose block of the constraint matrix is invertible.
    holonomic : sequence, optional
        Holonomic constraints ``f(q) = 0`` the motion also obeys (their derivatives must be among
        the constraints); kept for linearisation and simulations.
    quasi_velocities : sequence of Symbol, optional
        Names of the free velocities ``v^1..v^m`` (default ``v1, …``).
    values : dict, optional
        Default parameter values (numerics), e.g. a system file's ``[values]``.
    name : str, optional
        A title for reports and plots.
    inputs : sequence of Symbol, optional
        Control inputs the forces use (linearisation gives their matrix ``B``).
    engine_forces : sequence, optional
        More generalized forces, as symengine expressions in ``(t, q, q̇)`` and other symbols (added to
        ``forces`` without a conversion to sympy; the vakonomic field of
        :mod:`anholo.dynamics.maggi_vakonomic` passes its multiplier terms here).

    Examples
    --------
    The nonholonomic particle (``ż = y ẋ``): the same field as the exact route's.

    >>> import sympy as sp
    >>> from anholo import Chart
    >>> chart = Chart("x y z")
    >>> xd, yd, zd = chart.velocities
    >>> y = chart.coordinates[1]
    >>> nh = MaggiSystem(chart, (xd**2 + yd**2 + zd**2) / 2, [zd - y * xd])
    >>> [sp.simplify(e) for e in nh.accelerations()]
    [-v1*v2*y/(y**2 + 1), 0]
    """

    chart: Chart
    lagrangian: sp.Expr
    constraints: tuple
    forces: tuple = None
    time: sp.Symbol = None
    dependent: tuple = None
    holonomic: tuple = ()
    quasi_velocities: tuple = None
    values: dict = None
    name: str = ""
    inputs: tuple = ()
    engine_forces: tuple = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        chart = self.chart if isinstance(self.chart, Chart) else Chart(self.chart)
        object.__setattr__(self, "chart", chart)
        if self.time is not None and not isinstance(self.time, sp.Symbol):
            raise ArgumentError(f"MaggiSystem: time must be a sympy Symbol, got {type(self.time).__name__}.")
        names = chart_names(chart, self.time, self.inputs)
        object.__setattr__(self, "lagrangian", as_expression(self.lagrangian, names, where="the Lagrangian"))
        object.__setattr__(self, "constraints", as_expressions(self.constraints, names, where="constraints",
                                                                    label=lambda a: f"constraint {a + 1}"))
        if self.forces is not None:
            Q = as_expressions(self.forces, names, where="forces",
                               label=lambda A: f"the generalized force Q_{A + 1}")
            if len(Q) != chart.dim:
                raise DimensionError(f"need {chart.dim} generalized forces Q_A, one per coordinate, got {len(Q)}.")
            object.__setattr__(self, "forces", None if all(e == 0 for e in Q) else Q)
        object.__setattr__(self, "holonomic", as_expressions(self.holonomic, names, where="holonomic"))
        undefined = sorted({str(f.func) for e in (self.lagrangian, *self.constraints, *(self.forces or ()))
                            for f in dag_atoms(e, AppliedUndef)})
        if undefined:
            raise UndefinedFunctionError(
                f"Maggi's route computes with explicit expressions only, and {', '.join(undefined)} "
                f"{'is an undefined function' if len(undefined) == 1 else 'are undefined functions'}; use the "
                "exact route (System.nonholonomic(route='exact')), or give the function explicitly.")
        k, n = len(self.constraints), chart.dim
        if k >= n:
            raise DependentConstraintsError(
                f"{k} constraints on a {n}-dimensional configuration space leave no motion; give at most "
                f"{n - 1} independent constraints.")
        if self.quasi_velocities is None:
            names = {s.name for s in chart.coordinates + chart.velocities + chart.parameters}
            prefix = "v"
            while any(nm.startswith(prefix) and nm[len(prefix):].isdigit() for nm in names):
                prefix = "w" if prefix == "v" else prefix + "v"
            qv = tuple(sp.Symbol(f"{prefix}{i + 1}", real=True) for i in range(n))
            object.__setattr__(self, "quasi_velocities", qv)
        else:
            object.__setattr__(self, "quasi_velocities", tuple(self.quasi_velocities))
        self._setup()

    # --- the constraints solved for the dependent velocities ----------------------------------
    def _setup(self) -> None:
        chart, n = self.chart, self.chart.dim
        q, u = _engine_symbols(chart.coordinates), _engine_symbols(chart.velocities)
        t = se.Symbol(self.time.name) if self.time is not None else None
        phi = [to_engine(c) for c in self.constraints]
        L = to_engine(self.lagrangian)
        Q = [to_engine(e) for e in self.forces] if self.forces is not None else []
        for what, e in [("the Lagrangian", L)] + [(f"constraint {a + 1}", c) for a, c in enumerate(phi)] + [
                (f"the generalized force Q_{A + 1}", e) for A, e in enumerate(Q)]:
            if nonfinite(e):
                raise NonFiniteExpressionError(f"{what} holds a non-finite constant (nan, zoo or oo) as written: "
                                               f"{_short(e)}; rewrite it so that it is defined.")
        kinks = has_kinks([L] + phi + Q)  # Abs/sign somewhere: differentiate them (engine_diff)
        k = len(phi)
        kappa = [[engine_diff(c, uA, kinks) for uA in u] for c in phi]
        for a in range(k):
            for A in range(n):
                if nonfinite(kappa[a][A]):
                    raise NonFiniteExpressionError(
                        f"the coefficient of {chart.velocities[A]} in constraint {a + 1} is undefined (it holds "
                        f"{_short(kappa[a][A])}: a division by a symbolic zero); rewrite the constraint.")
            if any(engine_diff(kappa[a][A], uB, kinks) != 0 for A in range(n) for B, uB in enumerate(u)):
                raise NonlinearConstraintError(
                    f"constraint {a + 1} is not linear in the velocities; Chetaev's rule handles nonlinear "
                    "constraints (anholo analyze reports it under 'chetaev').")
        cterm = [c.subs({uA: zero for uA in u}) for c in phi]
        for a, c in enumerate(cterm):
            if nonfinite(c):
                raise NonFiniteExpressionError(
                    f"constraint {a + 1} is undefined at zero velocities (its velocity-free part is {_short(c)}: "
                    "a velocity divides or sits under a square root); write it as kappa(q) q_dot + c(q) = 0.")
        flat = [kappa[a][A] for a in range(k) for A in range(n)]
        kv = []
        if k:
            try:
                args = sorted({x for e in flat for x in e.free_symbols}, key=str)
                samples = Sampler(Program.from_expressions(args, flat), values=self.values, seed=11).samples(2)
            except DomainError as exc:
                raise ConstraintError(f"the velocity coefficients of the constraints: {exc}.") from None
            kv = [vals.reshape(k, n) for _, vals in samples]
        for a in range(k):
            if all(np.abs(K[a]).max() == 0 for K in kv):
                raise ConstraintError(
                    f"constraint {a + 1} has no velocity terms: a position-level (holonomic) constraint is not "
                    "a kinematic one; give it under `holonomic`, or its time derivative.")
        if k and numerical_rank(kv[0]) < k:
            raise DependentConstraintsError(
                f"the {k} constraints are linearly dependent in the velocities (rank "
                f"{numerical_rank(kv[0])} < {k}); remove the redundant ones.")
        if self.dependent is not None:
            names = [str(d) for d in self.dependent]
            by_name = {s.name: i for i, s in enumerate(chart.coordinates)}
            by_name.update({s.name: i for i, s in enumerate(chart.velocities)})
            bad = [d for d in names if d not in by_name]
            if bad or len(names) != k:
                raise DimensionError(f"dependent={names}: give {k} of the coordinates "
                                     f"{', '.join(s.name for s in chart.coordinates)}.")
            cols = sorted(by_name[d] for d in names)
            if numerical_rank(kv[0][:, cols]) < k:
                raise SingularFrameError(
                    f"cannot solve the constraints for the velocities of {names}; choose dependent ones whose "
                    "block of the constraint matrix is invertible.")
        else:  # the last columns whose block is invertible (the exact route's fallback choice)
            cols = []
            for c in reversed(range(n)):
                if len(cols) == k:
                    break
                if numerical_rank(kv[0][:, cols + [c]]) == len(cols) + 1:
                    cols.append(c)
            cols = sorted(cols)
        free = [c for c in range(n) if c not in cols]
        self._cache.update(q=q, u=u, t=t, kappa=kappa, c=cterm, dep=cols, free=free, kinks=kinks, L=L, Q=Q)

    @property
    def n(self) -> int:
        return self.chart.dim

    @property
    def m(self) -> int:
        """Rank of D."""
        return self.n - len(self.constraints)

    @property
    def dependent_coordinates(self) -> tuple:
        return tuple(self.chart.coordinates[c] for c in self._cache["dep"])

    @property
    def free_coordinates(self) -> tuple:
        """The coordinates whose velocities are the free quasi-velocities ``v^α = q̇^{f_α}``."""
        return tuple(self.chart.coordinates[c] for c in self._cache["free"])

    @property
    def free_velocities(self) -> tuple:
        return self.quasi_velocities[: self.m]

    @property
    def quasi_velocity_rates(self) -> tuple:
        return tuple(sp.Symbol(f"{v.name}_dot", real=True) for v in self.quasi_velocities)

    @property
    def velocities_on_C(self) -> tuple:
        """``(v^1..v^m, β^1..β^k)`` with ``β^a = θ^a(q̇)`` on C — zero: C is ``{v^a = 0}`` in this frame
        (the affine part of the constraints is carried by the dependent velocities)."""
        return self.free_velocities + (sp.S.Zero,) * (self.n - self.m)

    @property
    def is_affine(self) -> bool:
        return any(c != 0 for c in self._cache["c"])

    # --- the engine computation ------------------------------------------------------------
    @cached_property
    def _parts(self) -> dict:
        """Every quantity of the module docstring as symengine expressions (shared, not normalised)."""
        C = self._cache
        q, u, t, kappa, cterm, dep, free = (C[k] for k in ("q", "u", "t", "kappa", "c", "dep", "free"))
        n, m, k = self.n, self.m, len(dep)
        v = _engine_symbols(self.free_velocities)
        KP = se.DenseMatrix(k, k, [kappa[a][P] for a in range(k) for P in dep])
        Kf = se.DenseMatrix(k, m, [kappa[a][f] for a in range(k) for f in free])
        inv = _Cramer(KP) if k else None
        Cm = inv.solve(-Kf) if k else se.zeros(0, m)
        beta = inv.solve(se.DenseMatrix(k, 1, [-e for e in cterm])) if k else se.zeros(0, 1)
        S = se.zeros(n, m)  # columns: X_α in coordinates
        for al, f in enumerate(free):
            S[f, al] = 1
        for a, P in enumerate(dep):
            for al in range(m):
                S[P, al] = Cm[a, al]
        qdot = [sum((S[A, al] * v[al] for al in range(m)), zero) for A in range(n)]
        for a, P in enumerate(dep):
            qdot[P] = qdot[P] + beta[a, 0]
        on_C = dict(zip(u, qdot))
        L, kinks = C["L"], C["kinks"]
        Q = [zero] * n
        for extra in (C["Q"] if self.forces is not None else None, self.engine_forces):
            if extra is not None:
                Q = [a + b for a, b in zip(Q, extra)]
        p, W, F = lagrange_terms(L, q, u, t, Q, kinks)

        def d(e, x):
            return engine_diff(e, x, kinks)

        # (d/dt κ) q̇ + ċ: the constraints differentiated once, less κ q̈
        r = []
        for a in range(k):
            e = zero
            for B in range(n):
                dk = sum((d(kappa[a][A], q[B]) * u[A] for A in range(n)), zero) + d(cterm[a], q[B])
                e = e + dk * u[B]
            if t is not None:
                e = e + sum((d(kappa[a][A], t) * u[A] for A in range(n)), zero) + d(cterm[a], t)
            r.append(e)
        wP = inv.solve(se.DenseMatrix(k, 1, [-e for e in r])) if k else se.zeros(0, 1)
        w = [zero] * n
        for a, P in enumerate(dep):
            w[P] = wP[a, 0]
        W0, F0 = W, F  # in (q, q̇): kept to name the source of an undefined expression (_diagnose)
        W = [[e.xreplace(on_C) for e in row] for row in W]
        F = [e.xreplace(on_C) for e in F]
        w = [e.xreplace(on_C) for e in w]
        WS = [[sum((W[A][B] * S[B, al] for B in range(n) if S[B, al] != 0), zero) for al in range(m)]
              for A in range(n)]
        g = [[sum((S[A, al] * WS[A][be] for A in range(n) if S[A, al] != 0), zero) for be in range(m)]
             for al in range(m)]
        Ww = [sum((W[A][B] * w[B] for B in range(n) if w[B] != 0), zero) for A in range(n)]
        rhs = [sum((S[A, al] * (F[A] - Ww[A]) for A in range(n) if S[A, al] != 0), zero) for al in range(m)]
        Prow = [[WS[P][be] for be in range(m)] for P in dep]  # μ_a − Prow v̇ = Qrow
        Qrow = [Ww[P] - F[P] for P in dep]
        return dict(v=v, KP=KP, inv=inv, C=Cm, beta=beta, S=S, qdot=qdot, W=W, F=F, w=w, g=g, rhs=rhs, P=Prow, Q=Qrow,
                    p=p, r=r, W0=W0, F0=F0)

    def _symbols(self) -> tuple:
        return (tuple(self.chart.coordinates) + tuple(self.chart.velocities) + tuple(self.chart.parameters)
                + tuple(self.quasi_velocities) + tuple(self.quasi_velocity_rates)
                + ((self.time,) if self.time is not None else ()) + tuple(free_symbols(self.forces or ())))

    # --- results as sympy (shared subexpressions) ------------------------------------------------
    def engine_implicit(self) -> tuple:
        """``(M, F)`` of :meth:`implicit_form` as symengine expressions (fast numerics, no conversion)."""
        P = self._parts
        m, k = self.m, len(P["P"])
        M = se.zeros(m + k, m + k)
        for al in range(m):
            for be in range(m):
                M[al, be] = P["g"][al][be]
        for a in range(k):
            for be in range(m):
                M[m + a, be] = -P["P"][a][be]
            M[m + a, m + a] = 1
        return M, list(P["rhs"]) + list(P["Q"])

    @cached_property
    def multiplier_symbols(self) -> tuple:
        taken = {s.name for s in self._symbols()}
        prefix = "mu"
        while any(t.startswith(prefix) for t in taken):
            prefix = "_" + prefix
        return tuple(sp.Symbol(f"{prefix}{a + 1}", real=True) for a in range(self.n - self.m))

    def implicit_form(self, multipliers: bool = True) -> ImplicitForm:
        """Γ_nh (and the frame multipliers μ) as ``M x = F``: see the module docstring.  The entries are
        sympy expressions sharing their subexpressions (use the DAG-aware helpers on them)."""
        key = ("implicit", multipliers)
        if key not in self._cache:
            M, F = self.engine_implicit()
            m = self.m
            size = M.rows if multipliers else m
            exprs = [M[i, j] for i in range(size) for j in range(size)] + F[:size]
            pairs, reduced = engine_cse(exprs)
            out = shared_to_sympy(pairs, reduced, self._symbols())
            Ms = sp.ImmutableMatrix(size, size, out[: size * size])
            unknowns = self.quasi_velocity_rates[:m] + (self.multiplier_symbols if multipliers else ())
            what = "the nonholonomic field and its multipliers" if multipliers else "the nonholonomic field (g v_dot = F)"
            self._cache[key] = ImplicitForm(unknowns, Ms, tuple(out[size * size:]), what)
        return self._cache[key]

    @cached_property
    def _base(self) -> tuple:
        """One cse pass over the frame, the implicit form, ``κ_P``, ``w`` and ``β``: ``(pairs, {group: reduced})``."""
        P = self._parts
        m, n, k = self.m, self.n, len(self._cache["dep"])
        M, F = self.engine_implicit()
        groups = {"frame": [e for row in self.frame_vectors() for e in row],
                  "M": [M[i, j] for i in range(m + k) for j in range(m + k)], "F": list(F),
                  "KP": [P["KP"][a, b] for a in range(k) for b in range(k)], "w": list(P["w"]),
                  "beta": [P["beta"][a, 0] for a in range(k)]}
        R = self.engine_structure()
        groups["R"] = [R[a][i][j] for a in range(n) for i in range(n) for j in range(n)]
        pairs, reduced = engine_cse([e for name in groups for e in groups[name]])
        if any(nonfinite(e) for _, e in pairs) or any(nonfinite(e) for e in reduced):
            self._diagnose()
        red, pos = {}, 0
        for name in groups:
            red[name], pos = reduced[pos:pos + len(groups[name])], pos + len(groups[name])
        return pairs, red

    def _diagnose(self) -> None:
        """Raise :class:`NonFiniteExpressionError` naming the first quantity (in the order of the computation)
        that holds a literal ``nan``/``zoo``/``oo``: each is checked over its common subexpressions (a tree
        walk of the unshared expressions would cost minutes on a bicycle)."""
        P, C = self._parts, self._cache
        n, chart = self.n, self.chart
        qd = [s.name for s in chart.velocities]
        qn = [s.name for s in chart.coordinates]
        k = len(C["dep"])
        checks = [(f"dL/d{qd[A]} (the Lagrangian)", [P["p"][A]]) for A in range(n)]
        checks += [(f"d2L/d{qd[A]}d{qd[B]} (the Lagrangian's Hessian)", [P["W0"][A][B]]) for A in range(n) for B in range(n)]
        checks += [(f"dL/d{qn[A]} - d2L/d{qd[A]}dq q_dot" + (f" + Q_{A + 1}" if self.forces is not None else "")
                    + " (the Lagrangian and forces)", [P["F0"][A]]) for A in range(n)]
        checks += [(f"the time derivative of constraint {a + 1}", [P["r"][a]]) for a in range(k)]
        checks += [("the dependent velocities solved from the constraints (a determinant of the constraint "
                    f"matrix in {', '.join(s.name for s in self.dependent_coordinates)} that vanishes identically)",
                    [e for e in P["C"]] + [e for e in P["beta"]])]
        checks += [(f"d2L/d{qd[A]}d{qd[B]} on the constraint set (the velocities solved from the constraints "
                    "substituted)", [P["W"][A][B]]) for A in range(n) for B in range(n)]
        checks += [(f"the Lagrangian's and forces' term of {qn[A]} on the constraint set (the velocities solved "
                    "from the constraints substituted)", [P["F"][A]]) for A in range(n)]
        checks += [("the constraint accelerations w (the constraints differentiated, on the constraint set)",
                    list(P["w"]))]
        R = self.engine_structure()
        checks += [("the structure functions R^a_ij of the adapted frame",
                    [R[a][i][j] for a in range(n) for i in range(n) for j in range(n)])]
        for what, exprs in checks:
            if any(e == 0 for e in exprs) and all(e.is_Number for e in exprs):
                continue
            pairs, reduced = engine_cse(exprs)
            bad = [e for _, e in pairs if nonfinite(e)] + [e for e in reduced if nonfinite(e)]
            if bad:
                raise NonFiniteExpressionError(
                    f"{what} holds a non-finite constant ({_short(bad[0])}): a division by a symbolic zero, e.g. a "
                    "square root or a denominator that vanishes identically there; rewrite the Lagrangian, "
                    "constraints or forces so that it is defined (or choose other dependent velocities).")
        raise NonFiniteExpressionError(
            "the equations of motion hold a non-finite constant (nan, zoo or oo: a division by a symbolic zero); "
            "rewrite the Lagrangian, constraints or forces so that every quantity is defined.")

    def program_args(self) -> tuple:
        """The inputs of :meth:`program`: ``q``, the free ``v``, then the other symbols by name (parameters,
        the time, inputs of the forces)."""
        q, v = self._cache["q"], _engine_symbols(self.free_velocities)
        pairs, red = self._base
        syms = {s for _, e in pairs for s in e.free_symbols} | {s for es in red.values() for e in es
                                                                for s in e.free_symbols}
        syms -= {a for a, _ in pairs}
        rest = sorted(syms - set(q) - set(v), key=str)
        return tuple(q) + tuple(v) + tuple(rest)

    def program(self, multipliers: bool = False) -> Program:
        """A :class:`~anholo.algebra.program.Program` with outputs ``q̇^A`` (n, the kinematics on C),
        then ``M`` (row-major) and ``F`` of the implicit form (with or without the multiplier rows).

        Without the multiplier rows (the field that :func:`anholo.numerics.simulate` compiles), the smaller
        (:func:`~anholo.algebra.codegen.operation_count`) of the two programs of :meth:`programs`; with them,
        the program of the second derivatives of L as expressions (whose size :attr:`System.route` reads)."""
        key = ("program", multipliers)
        if key not in self._cache:
            if multipliers:
                self._cache[key] = self._expressions_program(True)
            else:
                from ..algebra.codegen import operation_count

                both = self.programs(False)
                size = {name: operation_count(prog)["total"] for name, prog in both.items() if prog is not None}
                self._cache[key] = both[min(size, key=lambda name: (size[name], name != "expressions"))]
        return self._cache[key]

    def programs(self, multipliers: bool = False) -> dict:
        """The program of :meth:`program` formed two ways (same arguments, same outputs up to rounding):

        * ``"expressions"``: ``g = Xᵀ W X`` and ``F = Xᵀ(F − W w)`` of the module docstring from the second
          derivatives of L written as expressions (``W`` and the ``n²`` mixed ones), one common-subexpression
          pass over them;
        * ``"program"``: the same quantities with L differentiated along its own program (the gradient by a
          reverse sweep, ``∂p/∂q q̇`` by a tangent sweep; :func:`anholo.dynamics.maggi_field.field_program`),
          or None where that program cannot be formed."""
        key = ("programs", multipliers)
        if key not in self._cache:
            from .maggi_field import stored_field_program

            self._cache[key] = {"expressions": self._expressions_program(multipliers),
                                "program": stored_field_program(self, multipliers)}
        return self._cache[key]

    def _expressions_program(self, multipliers: bool) -> Program:
        key = ("expressions program", multipliers)
        if key not in self._cache:
            pairs, red = self._base
            m, n, dep = self.m, self.n, self._cache["dep"]
            k = len(dep)
            v = _engine_symbols(self.free_velocities)
            X = red["frame"]
            K = [sum((X[al * n + A] * v[al] for al in range(m)), zero) for A in range(n)]
            for a, Pc in enumerate(dep):
                K[Pc] = K[Pc] + red["beta"][a]
            size = m + k if multipliers else m
            M = [red["M"][i * (m + k) + j] for i in range(size) for j in range(size)]
            self._cache[key] = Program(self.program_args(), tuple(pairs), tuple(K + M + list(red["F"][:size])))
        return self._cache[key]

    def shared(self) -> tuple:
        """``(pairs, results)``: every result as symengine expressions over one list of shared
        subexpressions ``pairs = [(name, expr), …]`` (in order; later ones use earlier names).

        ``results`` has ``frame`` (rows ``X_i^A``), ``structure`` (``R[k][i][j]``), ``M``/``F`` (the implicit form with multipliers),
        ``v_dot`` (Γ^α), ``mu`` (frame multipliers), in ``(q, v)``; and ``q_ddot`` (natural accelerations
        on C) and ``lambda`` (multipliers of the constraints as written), in ``(q, q̇)``; ``lambda_v`` the
        same multipliers in ``(q, v)``.  The explicit
        ones are LU solutions of the small systems written with the shared names (nothing is expanded);
        the natural forms (``v^α = q̇^{f_α}``) copy only the shared definitions that depend on ``v``."""
        if "shared" in self._cache:
            return self._cache["shared"]
        P = self._parts
        m, n, dep, free = self.m, self.n, self._cache["dep"], self._cache["free"]
        k = len(dep)
        pairs, red = self._base
        reduced = [e for key in red for e in red[key]]
        # natural copies: v^α → q̇^{f_α} in the definitions that depend on v (the others are shared)
        nat = {vv: self._cache["u"][f] for vv, f in zip(P["v"], free)}
        copies = []
        taken = {str(s) for e in reduced for s in e.free_symbols} | {str(a) for a, _ in pairs}
        count = 0

        def natural_form(e):
            hit = {s: nat[s] for s in e.free_symbols if s in nat}
            return e.xreplace(hit) if hit else e

        for name, value in pairs:
            new_value = natural_form(value)
            if new_value is not value:
                while f"n{count}" in taken:
                    count += 1
                new = se.Symbol(f"n{count}")
                count += 1
                copies.append((new, new_value))
                nat[name] = new
        natural = {key: [natural_form(e) for e in red[key]] for key in ("M", "F", "w", "frame")}

        def solve(Mflat, Fflat):
            """v̇ and μ from the block lower-triangular M x = F (LU of the m × m block g)."""
            g = se.DenseMatrix(m, m, [Mflat[i * (m + k) + j] for i in range(m) for j in range(m)])
            vd = g.LUsolve(se.DenseMatrix(m, 1, Fflat[:m])) if m else se.zeros(0, 1)
            vd = [vd[i, 0] for i in range(m)]
            mu = [Fflat[m + a] - sum((Mflat[(m + a) * (m + k) + be] * vd[be] for be in range(m)), zero)
                  for a in range(k)]
            return vd, mu

        vd, mu = solve(red["M"], red["F"])
        vd_n, mu_n = solve(natural["M"], natural["F"])
        Xn, w_n = natural["frame"], natural["w"]
        qdd = [sum((Xn[al * n + A] * vd_n[al] for al in range(m)), zero) + w_n[A] for A in range(n)]
        KP = se.DenseMatrix(k, k, red["KP"])
        lam = _Cramer(KP).solve_transposed(se.DenseMatrix(k, 1, mu_n)) if k else se.zeros(0, 1)
        lam = [lam[a, 0] for a in range(k)]
        lam_v = _Cramer(KP).solve_transposed(se.DenseMatrix(k, 1, mu)) if k else se.zeros(0, 1)
        lam_v = [lam_v[a, 0] for a in range(k)]
        more, explicit = engine_cse(vd + mu + qdd + lam + lam_v)
        taken |= {str(a) for a, _ in copies}
        fresh, count = {}, 0
        for name, _ in more:  # the second pass's names may repeat the first's: rename them
            while f"e{count}" in taken:
                count += 1
            fresh[name] = se.Symbol(f"e{count}")
            count += 1
        more = [(fresh[a], b.xreplace(fresh)) for a, b in more]
        explicit = [e.xreplace(fresh) for e in explicit]
        results = {"frame": [red["frame"][i * n:(i + 1) * n] for i in range(n)],
                   "structure": [[red["R"][(a * n + i) * n:(a * n + i + 1) * n] for i in range(n)] for a in range(n)],
                   "M": [red["M"][i * (m + k):(i + 1) * (m + k)] for i in range(m + k)], "F": red["F"],
                   "v_dot": explicit[:m], "mu": explicit[m:m + k], "q_ddot": explicit[m + k:m + k + n],
                   "lambda": explicit[m + k + n:m + 2 * k + n], "lambda_v": explicit[m + 2 * k + n:]}
        out = (list(pairs) + copies + list(more), results)
        self._cache["shared"] = out
        return out

    def engine_explicit(self) -> dict:
        """The explicit results of :meth:`shared` with the shared subexpressions substituted (symengine)."""
        if "explicit" not in self._cache:
            pairs, res = self.shared()
            env = {}
            for name, value in pairs:
                env[name] = value.xreplace(env) if env else value
            self._cache["explicit"] = {key: [e.xreplace(env) for e in res[key]]
                                       for key in ("v_dot", "mu", "q_ddot", "lambda")}
        return self._cache["explicit"]

    def evaluate(self, values: Mapping) -> dict:
        """The explicit results at one point of C, numerically: ``{"v_dot", "mu", "q_ddot", "lambda"}``.

        ``values`` maps names (or symbols) to numbers: the coordinates, the parameters, the free
        quasi-velocities ``v^α`` (for ``v_dot``, ``mu``) and the velocities ``q̇`` (for ``q_ddot``,
        ``lambda``; on C, ``q̇^{f_α} = v^α``)."""
        pairs, res = self.shared()
        keys = ("v_dot", "mu", "q_ddot", "lambda")
        prog = Program((), tuple(pairs), tuple(e for key in keys for e in res[key]))
        out = np.array(prog.evaluate({str(k): float(v) for k, v in values.items()}))
        if np.any(np.abs(out.imag) > 1e-12 * (1 + np.abs(out.real))):
            raise DimensionError("the point is outside the real domain of the expressions (a square root of a "
                                 "negative number?); choose another point.")
        if not np.all(np.isfinite(out)):
            raise DimensionError("the accelerations are undefined at this point (a division by zero: a singular "
                                 "constraint matrix or a vanishing square root there); choose another point.")
        out, pos, result = out.real, 0, {}
        for key in keys:
            result[key] = out[pos:pos + len(res[key])]
            pos += len(res[key])
        return result

    def field_expressions(self) -> dict:
        """``{"q_dot", "v_dot", "lambda"}`` as sympy expressions of ``(q, v)`` sharing their subexpressions:
        the kinematics ``q̇ = X_α v^α + β`` on C, Γ^α and the multipliers of the constraints as written."""
        if "field_expressions" not in self._cache:
            pairs, res = self.shared()
            _, red = self._base
            m, n, dep = self.m, self.n, self._cache["dep"]
            v = _engine_symbols(self.free_velocities)
            X = red["frame"]
            K = [sum((X[al * n + A] * v[al] for al in range(m)), zero) for A in range(n)]
            for a, Pc in enumerate(dep):
                K[Pc] = K[Pc] + red["beta"][a]
            out = shared_to_sympy(pairs, K + list(res["v_dot"]) + list(res["lambda_v"]), self._symbols())
            self._cache["field_expressions"] = {"q_dot": tuple(out[:n]), "v_dot": tuple(out[n:n + m]),
                                                "lambda": tuple(out[n + m:])}
        return self._cache["field_expressions"]

    def accelerations(self) -> tuple:
        """``Γ^α = v̇^α`` as sympy expressions (shared subexpressions)."""
        pairs, res = self.shared()
        return tuple(shared_to_sympy(pairs, res["v_dot"], self._symbols()))

    def frame_vectors(self) -> list:
        """Rows ``X_i^A`` of the adapted frame as symengine expressions (``X_α`` then ``X_a = ∂_{P_a}``)."""
        P, n, m = self._parts, self.n, self.m
        rows = [[P["S"][A, al] for A in range(n)] for al in range(m)]
        for Pc in self._cache["dep"]:
            rows.append([se.Integer(1) if A == Pc else zero for A in range(n)])
        return rows

    def engine_structure(self) -> list:
        """``R[k][i][j] = R^k_ij`` of the adapted frame (module docstring) as symengine expressions."""
        if "structure" in self._cache:
            return self._cache["structure"]
        P, n, m = self._parts, self.n, self.m
        q, dep, free = self._cache["q"], self._cache["dep"], self._cache["free"]
        k = len(dep)
        Cm = P["C"]
        kappa = self._cache["kappa"]
        dC = []  # ∂C/∂q^B = κ_P^{-1}(−∂κ_f/∂q^B − ∂κ_P/∂q^B C)
        for B in range(n if k else 0):
            kinks = self._cache["kinks"]
            dKP = se.DenseMatrix(k, k, [engine_diff(kappa[a][Pc], q[B], kinks) for a in range(k) for Pc in dep])
            dKf = se.DenseMatrix(k, m, [engine_diff(kappa[a][f], q[B], kinks) for a in range(k) for f in free])
            rhs = -dKf - dKP * Cm
            dC.append(None if all(e == 0 for e in rhs) else P["inv"].solve(rhs))
        R = [[[zero] * n for _ in range(n)] for _ in range(n)]

        def X(al, a, be):  # X_α(C^{P_a}_β)
            out = dC[free[al]][a, be] if dC[free[al]] is not None else zero
            for b, Pc in enumerate(dep):
                if dC[Pc] is not None and Cm[b, al] != 0:
                    out = out + Cm[b, al] * dC[Pc][a, be]
            return out

        for a in range(k):
            for al in range(m):
                for be in range(al + 1, m):
                    val = X(al, a, be) - X(be, a, al)
                    R[m + a][al][be], R[m + a][be][al] = val, -val
                for b, Pc in enumerate(dep):
                    val = -dC[Pc][a, al] if dC[Pc] is not None else zero
                    R[m + a][al][m + b], R[m + a][m + b][al] = val, -val
        self._cache["structure"] = R
        return R

    def structure(self) -> tuple:
        """``R^k_ij`` as sympy expressions (shared subexpressions)."""
        R, n = self.engine_structure(), self.n
        flat = [R[a][i][j] for a in range(n) for i in range(n) for j in range(n)]
        pairs, reduced = engine_cse(flat)
        out = shared_to_sympy(pairs, reduced, self._symbols())
        return tuple(tuple(tuple(out[(a * n + i) * n + j] for j in range(n)) for i in range(n)) for a in range(n))

    @cached_property
    def _checks(self):
        """The program of ``g_αβ`` and the curvature ``R^a_αβ``, evaluated at points by the checks below."""
        pairs, red = self._base
        m, n = self.m, self.n
        g = [red["M"][i * n + j] for i in range(m) for j in range(m)]
        R = [red["R"][(a * n + al) * n + be] for a in range(m, n) for al in range(m) for be in range(al + 1, m)]
        prog = Program(self.program_args(), tuple(pairs), tuple(g + R))
        return prog, [str(a) for a in prog.args], len(g), any(e != 0 for e in R)

    def _check_samples(self, count: int, seed: int, values: Mapping | None = None) -> list:
        """``g_αβ`` and ``R^a_αβ`` at ``count`` random points of their real domain (:class:`Sampler`;
        ``values`` fixes some arguments, e.g. the parameters)."""
        prog, _, _, _ = self._checks
        fixed = {str(k): float(v) for k, v in (values if values is not None else self.values or {}).items()}
        try:
            return [vals for _, vals in Sampler(prog, values=fixed, seed=seed).samples(count)]
        except DomainError as exc:
            raise DimensionError(f"the Hessian on the constraint distribution: {exc}.") from None

    def distribution_is_integrable(self, points: int = 3, tol: float = 1e-9) -> bool:
        """Frobenius (``R^a_αβ = 0``), decided at random points (a nonzero value proves non-integrability)."""
        _, _, ng, nonzero = self._checks
        if not nonzero:
            return True
        for vals in self._check_samples(points, 3):
            if np.any(np.abs(vals[ng:]) > tol):
                return False
        return True

    def check_regular(self, values: Mapping | None = None) -> None:
        """Raise :class:`IrregularLagrangianError` if ``g_αβ`` is singular at a random point."""
        _, _, ng, _ = self._checks
        if not self.m:
            return
        g = self._check_samples(1, 5, values)[0][:ng].reshape(self.m, self.m)
        if np.linalg.cond(g) > 1e14:
            raise IrregularLagrangianError(
                "the Lagrangian is not regular with respect to the constraint distribution D: the block "
                "g_αβ of its Hessian on C is singular; every allowed velocity must carry kinetic energy.")

    def __str__(self):
        return (f"MaggiSystem: {self.n} coordinates, {len(self.constraints)} constraints (D of rank {self.m}); "
                f"free velocities of {', '.join(s.name for s in self.free_coordinates)}")

"""Chetaev's equations for large systems with nonlinear constraints: coordinates, shared subexpressions.

For kinematic constraints ``φ^ν(t, q, q̇) = 0`` (ν = 1..k, not necessarily linear in q̇) with
Chetaev's virtual displacements ``(∂φ^ν/∂q̇^A) δq^A = 0`` and generalized forces ``Q_A``, the
d'Alembert–Lagrange principle gives (Talamucci (2025), and the references there;
docs/theory.rst, *Nonlinear constraints and Chetaev's rule*; docs/chetaev.rst)

    E_A(L) = d/dt ∂L/∂q̇^A − ∂L/∂q^A = Q_A + λ_ν ∂φ^ν/∂q̇^A,        φ^ν = 0.

With the constraints differentiated once, ``J q̈ = −(∂φ/∂q) q̇ − ∂φ/∂t`` (J = ∂φ/∂q̇), the
accelerations and the multipliers solve, on C = {φ = 0}, the bordered linear system

    [[W, −Jᵀ], [J, 0]] [q̈; λ] = [F; s],
    W_AB = ∂²L/∂q̇^A∂q̇^B,   F_A = ∂L/∂q^A − ∂²L/∂q̇^A∂q^B q̇^B − ∂²L/∂q̇^A∂t + Q_A,
    s_ν  = −∂φ^ν/∂q^B q̇^B − ∂φ^ν/∂t,

everything in (t, q, q̇).  It is solved by block elimination (the Schur complement),

    Y = W⁻¹ [F | Jᵀ],    (J W⁻¹ Jᵀ) λ = s − J W⁻¹ F,    q̈ = W⁻¹ F + W⁻¹ Jᵀ λ,

where every solve is a Gaussian elimination written as a straight-line program: each
multiplier, updated entry and back-substituted unknown is a named definition over the common
subexpressions of W, F, J and s (:func:`~anholo.algebra.engine.engine_cse`).  Nothing is
normalised, expanded or inverted in closed form: the program has O(n³) short definitions
however large L is (the route of :class:`~anholo.dynamics.maggi.MaggiSystem` for linear
constraints).  The pivot rows are those of partial pivoting at a random point of C, so the
pivots are nonzero there and hence at almost every point (they are analytic functions).

The verdicts are decided numerically (:mod:`anholo.algebra.decision`):

* the rank of J on C (numerical SVD rank at random points of C; below k raises
  :class:`~anholo.errors.DependentConstraintsError`), and the regularity of W (numerical rank at a
  random point; singular raises :class:`~anholo.errors.IrregularLagrangianError`);
* the homogeneity degree of each φ^ν in the velocities: the d with φ(q, s·u) = s^d φ(q, u) for
  s = 2 and s = 3 at random (q, u) off C (Euler's theorem for positively homogeneous functions), or
  None;
* energy: along the motion ``dE/dt = P + Q_A q̇^A − ∂L/∂t`` with ``E = q̇^A ∂L/∂q̇^A − L`` and the
  power of the constraint forces ``P = λ_ν (∂φ^ν/∂q̇^A) q̇^A`` (contract the equations with q̇);
  both are decided at random points of C.  For stationary constraints homogeneous of degree d,
  ``P = d λ_ν φ^ν = 0`` on C (Euler), so the energy of a conservative system is conserved
  (Talamucci (2025), Prop. 1 and §4; the converse fails for ``ż − ẋ² − ẏ``).

Points of C: random t, q, parameters and all but k velocities, the remaining k velocities (the
columns of J chosen from the last backwards whose block is invertible) solved from φ = 0 by
Newton's method (:func:`scipy.optimize.fsolve` with the Jacobian J) from a random start, redrawn
when it fails or lands where J has rank below k.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Mapping

import numpy as np
import sympy as sp

from ..algebra.decision import (NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Decision, DomainError, Sampler,
                                numerical_rank, vanishes_at)
from ..algebra.engine import engine_cse, has_kinks, se, shared_to_sympy, to_engine, zero
from .maggi import lagrange_terms
from ..algebra.program import Program
from ..errors import ArgumentError, ConstraintError, DependentConstraintsError, DimensionError, IrregularLagrangianError
from ..geometry.chart import Chart
from ..parsing import as_expression, as_expressions, chart_names

__all__ = ["MaggiChetaev", "ChetaevVerdicts"]

#: Relative size below which a singular value of W or J counts as zero (numerical rank).
RANK_TOLERANCE = 1e-9


class _Writer:
    """Appends named definitions ``c0 = …, c1 = …`` to a straight-line program (names avoid ``used``)."""

    def __init__(self, used: set, prefix: str = "c"):
        self.used, self.prefix, self.count, self.pairs = used, prefix, 0, []

    def name(self, expr):
        if expr.is_Number or isinstance(expr, se.Symbol):
            return expr
        while f"{self.prefix}{self.count}" in self.used:
            self.count += 1
        s = se.Symbol(f"{self.prefix}{self.count}")
        self.used.add(str(s))
        self.pairs.append((s, expr))
        return s


def _eliminate(writer: _Writer, A: list, B: list, Anum: np.ndarray, Bnum: np.ndarray) -> list:
    """``X = A⁻¹ B`` (A: n × n, B: n × r, lists of engine expressions) by Gaussian elimination written
    as named definitions; the pivot rows are those of partial pivoting on the numerical values ``Anum``,
    ``Bnum`` of A and B at one point (A must be regular there)."""
    n = len(A)
    r = len(B[0]) if n else 0
    rows = [list(A[i]) + list(B[i]) for i in range(n)]
    num = np.hstack([np.asarray(Anum, float).reshape(n, n), np.asarray(Bnum, float).reshape(n, r)])
    order = list(range(n))
    for j in range(n):
        p = max(range(j, n), key=lambda i: abs(num[order[i], j]))
        order[j], order[p] = order[p], order[j]
        pr = order[j]
        piv = rows[pr][j]
        for i in range(j + 1, n):
            ri = order[i]
            if rows[ri][j] == 0:
                continue
            f = writer.name(rows[ri][j] / piv)
            fnum = num[ri, j] / num[pr, j]
            for c in range(j + 1, n + r):
                if rows[pr][c] != 0:
                    rows[ri][c] = writer.name(rows[ri][c] - f * rows[pr][c])
            num[ri, j:] -= fnum * num[pr, j:]
            rows[ri][j] = zero
    X = [[zero] * r for _ in range(n)]
    for j in reversed(range(n)):
        pr = order[j]
        for c in range(r):
            e = rows[pr][n + c]
            for col in range(j + 1, n):
                if rows[pr][col] != 0 and X[col][c] != 0:
                    e = e - rows[pr][col] * X[col][c]
            X[j][c] = writer.name(e / rows[pr][j]) if e != 0 else zero
    return X


@dataclass(frozen=True)
class ChetaevVerdicts:
    """The numerical verdicts of :meth:`MaggiChetaev.verdicts`.

    Attributes
    ----------
    degrees : tuple
        Homogeneity degree of each φ^ν in the velocities (int, a Fraction, or None).
    constraint_power_vanishes : bool
        ``P = λ_ν (∂φ^ν/∂q̇^A) q̇^A = 0`` on C.
    energy_conserved : bool
        ``dE/dt = P + Q_A q̇^A − ∂L/∂t = 0`` on C.
    decision : Decision
        How both were decided (random points, relative tolerance).
    """

    degrees: tuple
    constraint_power_vanishes: bool
    energy_conserved: bool
    decision: Decision


@dataclass(frozen=True, eq=False)
class MaggiChetaev:
    """Chetaev's equations of a large system, as a straight-line program (module docstring).

    Parameters
    ----------
    chart : Chart
    lagrangian : expression
        ``L(t, q, q̇)`` in the natural velocities of ``chart``.
    constraints : sequence of expressions
        ``φ^ν(t, q, q̇) = 0``, linear or not in the velocities (at least one velocity in each).
    forces : sequence, optional
        Generalized forces ``Q_A(t, q, q̇)``, one per coordinate.
    time : Symbol, optional
        The time, if L, the constraints or the forces depend on it.
    name : str, optional

    Examples
    --------
    The counterexample of Talamucci (2025), §4: a unit particle under gravity with
    ``φ = ż − ẋ² − ẏ``; the multiplier is ``λ = g/(2 + 4ẋ²)`` on C and the energy is not conserved.

    >>> import sympy as sp
    >>> from anholo import Chart
    >>> g = sp.Symbol("g", positive=True)
    >>> chart = Chart("x y z", parameters=[g])
    >>> xd, yd, zd = chart.velocities
    >>> ch = MaggiChetaev(chart, (xd**2 + yd**2 + zd**2)/2 - g*chart.coordinates[2], [zd - xd**2 - yd])
    >>> qdd, lam = ch.natural()
    >>> sp.simplify(lam[0].subs(zd, xd**2 + yd) - g/(2 + 4*xd**2))
    0
    >>> v = ch.verdicts()
    >>> v.degrees, v.energy_conserved
    ((None,), False)
    """

    chart: Chart
    lagrangian: sp.Expr
    constraints: tuple
    forces: tuple = None
    time: sp.Symbol = None
    name: str = ""
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        chart = self.chart if isinstance(self.chart, Chart) else Chart(self.chart)
        object.__setattr__(self, "chart", chart)
        if self.time is not None and not isinstance(self.time, sp.Symbol):
            raise ArgumentError(f"MaggiChetaev: time must be a sympy Symbol, got {type(self.time).__name__}.")
        names = chart_names(chart, self.time)
        object.__setattr__(self, "lagrangian", as_expression(self.lagrangian, names, where="the Lagrangian"))
        object.__setattr__(self, "constraints", as_expressions(self.constraints, names, where="constraints",
                                                                    label=lambda a: f"constraint {a + 1}"))
        n, k = chart.dim, len(self.constraints)
        if self.forces is not None:
            Q = as_expressions(self.forces, names, where="forces",
                               label=lambda A: f"the generalized force Q_{A + 1}")
            if len(Q) != n:
                raise DimensionError(f"need {n} generalized forces Q_A, one per coordinate, got {len(Q)}.")
            object.__setattr__(self, "forces", None if all(e == 0 for e in Q) else Q)
        if k == 0:
            raise ConstraintError("no constraints: Chetaev's equations need at least one constraint phi(q, q_dot) = 0; "
                                  "use the Euler-Lagrange field for a free system.")
        if k >= n:
            raise DependentConstraintsError(
                f"{k} constraints on a {n}-dimensional configuration space leave no motion; give at most "
                f"{n - 1} independent constraints.")
        u = [se.Symbol(s.name) for s in chart.velocities]
        for a, c in enumerate(self.constraints):
            if not any(to_engine(c).diff(uA) != 0 for uA in u):
                raise ConstraintError(
                    f"constraint {a + 1} has no velocity terms: a position-level (holonomic) constraint is not "
                    "a kinematic one; give it under `holonomic`, or its time derivative.")

    @property
    def n(self) -> int:
        return self.chart.dim

    @property
    def k(self) -> int:
        return len(self.constraints)

    def _symbols(self) -> tuple:
        """The sympy symbols of the problem (for conversions and for choosing fresh names)."""
        syms = set(self.chart.coordinates) | set(self.chart.velocities) | set(self.chart.parameters)
        for e in (self.lagrangian, *self.constraints, *(self.forces or ())):
            syms |= e.free_symbols
        if self.time is not None:
            syms.add(self.time)
        return tuple(sorted(syms, key=lambda s: s.name))

    @cached_property
    def multiplier_symbols(self) -> tuple:
        """``lambda1..lambdak`` (prefixed by ``_`` while they clash with a name of the problem)."""
        taken = {s.name for s in self._symbols()}
        prefix = "lambda"
        while any(t.startswith(prefix) for t in taken):
            prefix = "_" + prefix
        return tuple(sp.Symbol(f"{prefix}{a + 1}", real=True) for a in range(self.k))

    @property
    def acceleration_symbols(self) -> tuple:
        """``q_ddot`` symbols: the unknowns of the implicit form besides the multipliers."""
        return tuple(sp.Symbol(f"{q.name}_ddot", real=True) for q in self.chart.coordinates)

    # --- the coordinate quantities --------------------------------------------------------------
    @cached_property
    def _base(self) -> dict:
        """W, F, J, s, φ, Q, ∂L/∂t of the module docstring over one cse list, and the program of them."""
        chart, n, k = self.chart, self.n, self.k
        q = [se.Symbol(s.name) for s in chart.coordinates]
        u = [se.Symbol(s.name) for s in chart.velocities]
        t = se.Symbol(self.time.name) if self.time is not None else None
        L = to_engine(self.lagrangian)
        Q = [to_engine(e) for e in self.forces] if self.forces is not None else [zero] * n
        _, W, F = lagrange_terms(L, q, u, t, Q, has_kinks([L] + Q))
        W = [[W[A][B] if B >= A else None for B in range(n)] for A in range(n)]  # the upper triangle is used
        phi = [to_engine(c) for c in self.constraints]
        J = [[c.diff(uA) for uA in u] for c in phi]
        s = []
        for c in phi:
            e = -sum((c.diff(q[B]) * u[B] for B in range(n)), zero)
            if t is not None:
                e = e - c.diff(t)
            s.append(e)
        dLdt = L.diff(t) if t is not None else zero
        groups = {"W": [W[A][B] for A in range(n) for B in range(A, n)], "F": F,
                  "J": [J[a][A] for a in range(k) for A in range(n)], "s": s, "phi": phi, "Q": Q, "dLdt": [dLdt]}
        pairs, reduced = engine_cse([e for g in groups.values() for e in g])
        red, pos = {}, 0
        for key, g in groups.items():
            red[key], pos = reduced[pos:pos + len(g)], pos + len(g)
        Wfull, it = [[None] * n for _ in range(n)], iter(red["W"])
        for A in range(n):
            for B in range(A, n):
                Wfull[A][B] = Wfull[B][A] = next(it)
        red["W"] = [e for row in Wfull for e in row]
        syms = {x for _, e in pairs for x in e.free_symbols} | {x for g in red.values() for e in g
                                                                 for x in e.free_symbols}
        syms -= {a for a, _ in pairs}
        rest = sorted(syms - set(q) - set(u), key=str)
        args = tuple(q) + tuple(u) + tuple(rest)
        keys = ("phi", "J", "W", "F", "s", "Q", "dLdt")
        prog = Program(args, tuple(pairs), tuple(e for key in keys for e in red[key]))
        sizes, pos, slices = {key: len(red[key]) for key in keys}, 0, {}
        for key in keys:
            slices[key], pos = slice(pos, pos + sizes[key]), pos + sizes[key]
        return {"pairs": pairs, "red": red, "q": q, "u": u, "t": t, "args": args, "program": prog,
                "slices": slices, "names": [str(a) for a in args]}

    @cached_property
    def _sampler(self) -> Sampler:
        return Sampler(self._base["program"], seed=7)

    def _values(self, point: Mapping) -> dict:
        """The base quantities at ``point`` (name → float) as numpy arrays (DomainError off the domain)."""
        out = self._sampler.at(point)
        n, k, sl = self.n, self.k, self._base["slices"]
        return {"phi": out[sl["phi"]], "J": out[sl["J"]].reshape(k, n), "W": out[sl["W"]].reshape(n, n),
                "F": out[sl["F"]], "s": out[sl["s"]], "Q": out[sl["Q"]], "dLdt": out[sl["dLdt"]][0]}

    # --- points of C ------------------------------------------------------------------------------
    @cached_property
    def dependent(self) -> tuple:
        """Indices of the k velocities solved from φ = 0 to find points of C: the columns of J, from the last
        backwards, whose block is invertible at a random point of C."""
        self.points_on_C(1)
        return self._cache["dependent"]

    def points_on_C(self, count: int, seed: int = 0, tries: int = 40) -> list:
        """``count`` random points of C (argument name → float), each with rank J = k.

        Raises
        ------
        DependentConstraintsError
            If J has rank below k at a point of C.
        ConstraintError
            If no point of C is found (φ = 0 has no real solution near random velocities).
        """
        from scipy.optimize import fsolve

        base = self._base
        names, n, k = base["names"], self.n, self.k
        uname = [str(x) for x in base["u"]]
        rng = np.random.default_rng(seed)
        out = []
        failures = 0
        while len(out) < count:
            if failures >= tries:
                raise ConstraintError(
                    f"no point of the constraint set C = {{phi = 0}} found in {tries} random tries; check that "
                    "the constraints have real solutions for velocities near (0.3, 0.9) (or rewrite them).")
            pt = {a: float(rng.uniform(0.3, 0.9)) for a in names}
            dep = self._cache.get("dependent")
            try:
                vals = self._values(pt)
            except DomainError:
                failures += 1
                continue
            if dep is None:
                if numerical_rank(vals["J"], RANK_TOLERANCE) < k:
                    self._check_rank_on_C(pt)
                    failures += 1
                    continue
                dep = []
                for c in reversed(range(n)):
                    if len(dep) < k and numerical_rank(vals["J"][:, dep + [c]], RANK_TOLERANCE) == len(dep) + 1:
                        dep.append(c)
                dep = sorted(dep)

            def residual(x, pt=pt, dep=dep):
                trial = dict(pt)
                trial.update({uname[c]: float(xi) for c, xi in zip(dep, x)})
                try:
                    v = self._values(trial)
                except DomainError:
                    return np.full(k, 1e6), np.eye(k)
                return v["phi"], v["J"][:, dep]

            x0 = np.array([pt[uname[c]] for c in dep])
            try:
                x, info, ier, _ = fsolve(lambda x: residual(x)[0], x0, fprime=lambda x: residual(x)[1],
                                         full_output=True, xtol=1e-13)
            except (ValueError, np.linalg.LinAlgError):
                failures += 1
                continue
            pt.update({uname[c]: float(xi) for c, xi in zip(dep, x)})
            try:
                vals = self._values(pt)
            except DomainError:
                failures += 1
                continue
            scale = 1.0 + float(np.max(np.abs(x)))
            if ier != 1 or np.max(np.abs(vals["phi"])) > 1e-10 * scale:
                failures += 1
                continue
            if numerical_rank(vals["J"], RANK_TOLERANCE) < k:
                raise DependentConstraintsError(self._rank_message(numerical_rank(vals["J"], RANK_TOLERANCE)))
            if numerical_rank(vals["J"][:, dep], RANK_TOLERANCE) < k:
                failures += 1
                continue
            self._cache.setdefault("dependent", tuple(dep))
            out.append(pt)
        return out

    def _rank_message(self, r: int) -> str:
        return (f"the {self.k} constraints are dependent: their velocity Jacobian dphi/dq_dot has rank {r} < {self.k} "
                "at a point of C (decided numerically); remove the redundant ones.")

    def _check_rank_on_C(self, pt: dict) -> None:
        """J has rank below k at a random point: project it onto C (least squares over all velocities) and
        raise DependentConstraintsError if the rank is still below k there."""
        from scipy.optimize import least_squares

        uname = [str(x) for x in self._base["u"]]

        def res(x):
            trial = dict(pt)
            trial.update(dict(zip(uname, map(float, x))))
            try:
                return self._values(trial)["phi"]
            except DomainError:
                return np.full(self.k, 1e6)

        sol = least_squares(res, np.array([pt[a] for a in uname]), xtol=1e-14, ftol=1e-14, gtol=1e-14)
        if np.max(np.abs(sol.fun)) > 1e-9:
            return
        trial = dict(pt)
        trial.update(dict(zip(uname, map(float, sol.x))))
        try:
            J = self._values(trial)["J"]
        except DomainError:
            return
        r = numerical_rank(J, RANK_TOLERANCE)
        if r < self.k:
            raise DependentConstraintsError(self._rank_message(r))

    # --- the solution ---------------------------------------------------------------------------
    def shared(self) -> tuple:
        """``(pairs, results)``: every result as symengine expressions over one list of definitions.

        ``results``: ``q_ddot`` (n) and ``lambda`` (k, the multipliers of the constraints as written),
        in ``(t, q, q̇)`` and valid on C; ``M`` (rows of ``[[W, −Jᵀ], [J, 0]]``) and ``rhs`` (``[F; s]``) of
        the implicit form in the unknowns ``(q̈, λ)``.

        Raises
        ------
        IrregularLagrangianError
            If W, or ``J W⁻¹ Jᵀ``, is singular at a random point of C.
        DependentConstraintsError
            If J has rank below k there.
        """
        if "shared" in self._cache:
            return self._cache["shared"]
        base = self._base
        n, k, red = self.n, self.k, base["red"]
        pt = self.points_on_C(1, seed=101)[0]
        vals = self._values(pt)
        if numerical_rank(vals["W"], RANK_TOLERANCE) < n:
            raise IrregularLagrangianError(
                "the Lagrangian is not regular: its Hessian W = d2L/dq_dot2 is singular (decided numerically at a "
                "random point); every velocity must carry kinetic energy.")
        W = [red["W"][A * n:(A + 1) * n] for A in range(n)]
        J = [red["J"][a * n:(a + 1) * n] for a in range(k)]
        used = {str(a) for a, _ in base["pairs"]} | {str(x) for x in base["args"]}
        used |= {s.name for s in self._symbols()}
        writer = _Writer(used)
        B = [[red["F"][A]] + [J[a][A] for a in range(k)] for A in range(n)]
        Bnum = np.column_stack([vals["F"], vals["J"].T])
        Y = _eliminate(writer, W, B, vals["W"], Bnum)
        Ynum = np.linalg.solve(vals["W"], Bnum)
        S = [[writer.name(sum((J[a][A] * Y[A][1 + b] for A in range(n) if J[a][A] != 0), zero)) for b in range(k)]
             for a in range(k)]
        r = [[writer.name(red["s"][a] - sum((J[a][A] * Y[A][0] for A in range(n) if J[a][A] != 0), zero))]
             for a in range(k)]
        Snum = vals["J"] @ Ynum[:, 1:]
        rnum = vals["s"] - vals["J"] @ Ynum[:, 0]
        if numerical_rank(Snum, RANK_TOLERANCE) < k:
            raise IrregularLagrangianError(
                "Chetaev's equations do not determine the motion: J W^-1 J^T (J = dphi/dq_dot, W = d2L/dq_dot2) "
                "is singular at a random point of C; the kinetic energy must be positive on the virtual "
                "displacements.")
        lam = [row[0] for row in _eliminate(writer, S, r, Snum, rnum.reshape(k, 1))]
        qdd = [writer.name(Y[A][0] + sum((Y[A][1 + a] * lam[a] for a in range(k) if Y[A][1 + a] != 0), zero))
               for A in range(n)]
        M = [list(W[A]) + [-J[a][A] for a in range(k)] for A in range(n)]
        M += [list(J[a]) + [zero] * k for a in range(k)]
        results = {"q_ddot": qdd, "lambda": lam, "M": M, "rhs": list(red["F"]) + list(red["s"])}
        out = (list(base["pairs"]) + writer.pairs, results)
        self._cache["shared"] = out
        return out

    def program(self) -> Program:
        """The :class:`~anholo.algebra.program.Program` with outputs ``q̈`` (n) then ``λ`` (k), in the
        arguments ``q, q̇`` and the other symbols by name (parameters, the time)."""
        if "program" not in self._cache:
            pairs, res = self.shared()
            self._cache["program"] = Program(self._base["args"], tuple(pairs),
                                             tuple(res["q_ddot"]) + tuple(res["lambda"])).pruned()
        return self._cache["program"]

    @cached_property
    def _compiled(self):
        return self.program().compile()

    def evaluate(self, values: Mapping) -> dict:
        """``{"q_ddot", "lambda"}`` at one point of C (``values``: names → numbers for the coordinates, the
        velocities, the parameters and the time)."""
        names = [str(a) for a in self.program().args]
        given = {str(key): float(v) for key, v in values.items()}
        missing = [a for a in names if a not in given]
        if missing:
            raise DimensionError(f"no value for {', '.join(missing)}; give every coordinate, velocity and parameter.")
        out = np.array([complex(x) for x in self._compiled(*[given[a] for a in names])])
        if np.any(np.abs(out.imag) > 1e-12 * (1 + np.abs(out.real))) or not np.all(np.isfinite(out)):
            raise DimensionError("the point is outside the real domain of the expressions (a square root of a "
                                 "negative number?); choose another point.")
        return {"q_ddot": out.real[:self.n], "lambda": out.real[self.n:]}

    def natural(self) -> tuple:
        """``(q_ddot, lambda)`` as sympy expressions in ``(t, q, q̇)`` sharing their subexpressions (valid on C)."""
        pairs, res = self.shared()
        out = shared_to_sympy(pairs, list(res["q_ddot"]) + list(res["lambda"]), self._symbols())
        return tuple(out[:self.n]), tuple(out[self.n:])

    # --- verdicts -------------------------------------------------------------------------------------
    def homogeneity_degrees(self, points: int = NUMERICAL_POINTS, tolerance: float = NUMERICAL_TOLERANCE) -> tuple:
        """The degree d of each φ^ν with ``φ(t, q, s·u) = s^d φ(t, q, u)`` (s = 2 and s = 3) at ``points``
        random (q, u) off C: an int (or a Fraction with denominator ≤ 12), None if φ^ν is not positively
        homogeneous in the velocities."""
        base = self._base
        sampler, sl = self._sampler, base["slices"]
        uname = [str(x) for x in base["u"]]
        degrees = [None] * self.k
        samples = []
        rng = random.Random(13)
        while len(samples) < points:
            pt = sampler.point()
            pt.update({a: rng.uniform(0.3, 0.9) for a in uname})
            try:
                vals = [sampler.at({**pt, **{a: s * pt[a] for a in uname}})[sl["phi"]] for s in (1.0, 2.0, 3.0)]
            except DomainError:
                continue
            samples.append(vals)
        for a in range(self.k):
            f1 = [sm[0][a] for sm in samples]
            if all(abs(f) < 1e-12 for f in f1):  # φ vanishes identically at these velocities: undecided
                continue
            i = max(range(len(f1)), key=lambda j: abs(f1[j]))
            ratio = samples[i][1][a] / f1[i]
            if ratio <= 0:
                continue
            d = Fraction(float(np.log2(ratio))).limit_denominator(12)
            ok = all(vanishes_at([sm[1][a] - 2.0 ** float(d) * sm[0][a], sm[2][a] - 3.0 ** float(d) * sm[0][a]],
                                 [abs(sm[1][a]) + abs(sm[0][a]) * 2.0 ** float(d),
                                  abs(sm[2][a]) + abs(sm[0][a]) * 3.0 ** float(d)], tolerance) for sm in samples)
            if ok:
                degrees[a] = int(d) if d.denominator == 1 else d
        return tuple(degrees)

    def verdicts(self, points: int = NUMERICAL_POINTS, tolerance: float = NUMERICAL_TOLERANCE) -> ChetaevVerdicts:
        """Homogeneity degrees, whether the constraint forces do no work and whether the energy is conserved,
        each decided at ``points`` random points (of C for the last two) with relative ``tolerance``."""
        key = ("verdicts", points, tolerance)
        if key in self._cache:
            return self._cache[key]
        degrees = self.homogeneity_degrees(points, tolerance)
        u = [str(x) for x in self._base["u"]]
        power_zero = energy_zero = True
        for pt in self.points_on_C(points, seed=202):
            vals = self._values(pt)
            lam = self.evaluate(pt)["lambda"]
            ud = np.array([pt[a] for a in u])
            terms = (lam[:, None] * vals["J"]) * ud[None, :]
            P, Pscale = float(terms.sum()), float(np.abs(terms).sum())
            Qu = vals["Q"] * ud
            rate = P + float(Qu.sum()) - vals["dLdt"]
            scale = Pscale + float(np.abs(Qu).sum()) + abs(vals["dLdt"])
            power_zero = power_zero and vanishes_at([P], [Pscale], tolerance)
            energy_zero = energy_zero and vanishes_at([rate], [scale], tolerance)
        out = ChetaevVerdicts(degrees, power_zero, energy_zero, Decision.numerical(points, tolerance))
        self._cache[key] = out
        return out

    def __str__(self):
        return (f"MaggiChetaev: {self.n} coordinates, {self.k} constraints (Chetaev's rule, coordinates, "
                "shared subexpressions)")

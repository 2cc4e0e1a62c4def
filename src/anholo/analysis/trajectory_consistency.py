"""Consistency along one motion: linear constraints ``ω^a_A(q) u^A = 0`` on R^N (docs/consistency.rst).

The end of §5 of Crampin & Mestdag (2010) and Cronström & Raita (2009) (as corrected in
docs/theory.rst): a nonholonomic motion is vakonomic iff a *multiplier curve* exists
along it.  For a Lagrangian L and k constraints ``ω^a(u) = 0`` (the one model of linear
constraints, :class:`~anholo.constraints.linear.LinearConstraints`), write
``E_A(L) = d/dt ∂L/∂u^A − ∂L/∂q^A`` and

    (M^a)_AB = ∂_B ω^a_A − ∂_A ω^a_B        (so that ``dω^a(u, w) = −u^A (M^a)_AB w^B``).

* Nonholonomic motions: ``E_A(L) = λ_a ω^a_A``, ``ω(u) = 0``.
* Vakonomic motions (multiplication rule ``L + μ_a ω^a(u)``):
  ``E_A(L) = −μ̇_a ω^a_A − μ_a (M^a u)_A``.

So a nonholonomic motion is vakonomic iff some μ(t) satisfies
``ωᵀ(λ + μ̇) + Σ_a μ_a M^a u = 0``.  Splitting ``M^a u = ωᵀ κ_{·a} + w^a`` with ``w^a``
orthogonal (Euclidean) to the rows of ω, ``κ = (ω ωᵀ)⁻¹ ω M u``:

    μ̇ = −λ − κ μ         (the component along the rows of ω: an ODE)
    W μ = 0               (the component in D: ``W`` the N × k matrix of the ``w^a``)

In frame language (Crampin & Mestdag (2010) §5) ``W μ = 0`` is ``μ_a R^a_αβ v^β = 0``
for all α and the ODE is equation (b) of the vakonomic field with ``B = Γ_nh``.

* If ``W = 0`` along the motion (every velocity of it *compatible*), every solution of the
  ODE works: the initial value ``μ(t0)`` is a free datum (Cronström & Raita 2009 omit
  it; docs/theory.rst, corrections to the literature).
* Otherwise the solution of the ODE from ``μ(t0)`` must stay in ``ker W``: writing
  ``μ(t) = Φ(t) μ(t0) + ψ(t)`` (``Φ̇ = −κΦ``, ``ψ̇ = −λ − κψ``), the conditions
  ``W(t)(Φ(t) μ(t0) + ψ(t)) = 0`` for all t are linear in ``μ(t0)``; the motion is
  vakonomic iff they are solvable, and their solution set is the set of admissible
  initial multipliers.  They are solved here by least squares over the samples of the
  motion.  For one constraint ``W = w`` is a vector: ``μ`` must vanish wherever
  ``w ≠ 0``, so (for analytic motions) the motion is vakonomic iff ``λ ≡ 0``.

Pointwise, a velocity ``u ∈ D`` is *compatible* iff ``M^a u ∈ span(ω)`` for all a (W = 0),
i.e. ``R^a_αβ v^β = 0``: a linear condition, so the compatible velocities form a
subspace; for one constraint it is ``(Mu)_A a_B − (Mu)_B a_A = 0``, and ``a ∧ da = 0``
(Frobenius) iff every constrained velocity is compatible.  The multipliers admissible at a
state form ``ker W(q, u)`` (:meth:`TrajectoryConsistency.admissible_multipliers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import free_symbols, solve_generic, tidy, vanishes
from ..algebra.printing import tex_text
from ..constraints.linear import LinearConstraints
from ..dynamics.lagrangian import Lagrangian
from ..algebra.codegen import expression_function
from ..errors import ConstraintError, DimensionError
from ..geometry.chart import Chart

__all__ = ["TrajectoryConsistency", "SingleConstraintConsistency", "CompatibleVelocities", "TrajectoryVerdict"]


@dataclass(frozen=True)
class CompatibleVelocities:
    """The subspace of velocities ``u ∈ D`` with ``M^a u ∈ span(ω)`` for all a, at a generic point.

    Attributes
    ----------
    basis : tuple of tuples
        A basis (vectors in coordinate components, functions of q); empty if only
        ``u = 0`` is compatible.
    dimension : int
        Its generic dimension (``rank D`` iff D is integrable).
    """

    basis: tuple
    dimension: int

    def to_dict(self) -> dict:
        return {"dimension": self.dimension, "basis": [[str(e) for e in b] for b in self.basis]}


@dataclass(frozen=True)
class TrajectoryVerdict:
    """Whether a nonholonomic motion is vakonomic for some multiplier curve.

    Attributes
    ----------
    vakonomic : bool
    compatible : bool
        ``W = 0`` all along the motion (every initial multiplier works).
    nonholonomic_multiplier : object
        λ(t) with ``E(L) = λ_a ω^a`` (an expression in t or an array of samples; for one
        constraint a scalar, else a tuple / a (T, k) array).
    multiplier : object
        A multiplier curve μ(t) (symbolic when found in closed form, else samples), or None.
    multiplier_equation : object
        ``μ̇ = −λ − κ μ`` when the motion is compatible (``Eq`` or list of them), else None.
    reason : str
    initial_multipliers : tuple or None
        An admissible ``μ(t0)`` (numbers) found by least squares, None when none exists or
        when every value works (``compatible``).
    free_directions : tuple
        Directions along which ``initial_multipliers`` may be moved (the admissible set is
        ``initial_multipliers + span(free_directions)``).
    residual : float or None
        Relative least-squares residual of ``W(Φ μ(t0) + ψ) = 0`` over the samples.
    """

    vakonomic: bool
    compatible: bool
    nonholonomic_multiplier: object
    multiplier: object
    multiplier_equation: object
    reason: str
    initial_multipliers: tuple = None
    free_directions: tuple = ()
    residual: float = None

    def __bool__(self):
        return self.vakonomic

    def __str__(self):
        head = "vakonomic" if self.vakonomic else "NOT vakonomic"
        out = f"The motion is {head}: {self.reason}"
        if self.initial_multipliers is not None and not self.compatible:
            out += f"; admissible μ(t0) = {list(self.initial_multipliers)}"
            if self.free_directions:
                out += f" + span{[list(d) for d in self.free_directions]}"
        return out

    def as_latex(self) -> str:
        head = "vakonomic" if self.vakonomic else "not vakonomic"
        return r"\text{" + tex_text(f"The motion is {head}: {self.reason}") + "}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"vakonomic": self.vakonomic, "compatible": self.compatible, "reason": self.reason,
                "initial_multipliers": None if self.initial_multipliers is None else
                [float(x) for x in self.initial_multipliers],
                "free_directions": [[float(x) for x in d] for d in self.free_directions],
                "residual": self.residual}


def _as_linear(chart: Chart, constraints) -> LinearConstraints:
    if isinstance(constraints, LinearConstraints):
        C = constraints
    else:
        items = list(constraints)
        if not items:
            raise ConstraintError("no constraints given.")
        exprs = [e for e in items if isinstance(e, (str, sp.Expr))]
        if exprs and len(exprs) != len(items):
            raise ConstraintError("give the constraints either all as expressions or all as covector rows.")
        if exprs:
            C = LinearConstraints.from_expressions(chart, exprs)
        else:
            rows = [tuple(sympified(e) for e in r) for r in items]
            if any(len(r) != chart.dim for r in rows):
                raise DimensionError(f"each covector needs {chart.dim} components.")
            if free_symbols([e for r in rows for e in r]) & set(chart.velocities):
                raise ConstraintError("the covectors ω^a_A(q) must not depend on the velocities.")
            if any(all(vanishes(e) for e in r) for r in rows):
                raise ConstraintError("a covector vanishes identically: there is no constraint.")
            C = LinearConstraints.from_forms(chart, rows)
    if C.is_affine:
        raise ConstraintError("the constraints must be linear (ω(u) = 0), not affine.")
    return C


class TrajectoryConsistency:
    """Consistency of the nonholonomic and vakonomic dynamics along motions, for linear constraints
    ``ω^a_A(q) u^A = 0`` on a chart (module docstring).  Not a constraint model of its own: the constraints
    are one :class:`~anholo.constraints.linear.LinearConstraints` (:attr:`constraints`); this object holds
    what the analysis along motions derives from them (the curls ``M^a``, the split ``M^a u = ωᵀκ + w^a``).

    Parameters
    ----------
    chart : Chart
    constraints : LinearConstraints, or a sequence of expressions linear in the velocities
        (e.g. ``"x_dot - R*cos(theta)*phi_dot"``), or a sequence of covector rows ``ω^a_A(q)``.

    Raises
    ------
    ConstraintError
        Affine or velocity-dependent constraints, a vanishing covector.
    DependentConstraintsError
        From :class:`LinearConstraints` if the covectors are dependent.

    Examples
    --------
    The rolling coin: only the velocity 0 is compatible, and at a moving state the admissible
    multipliers form a line:

    >>> coin = TrajectoryConsistency(Chart("x y theta phi"),
    ...     ["x_dot - cos(theta)*phi_dot", "y_dot - sin(theta)*phi_dot"])
    >>> coin.compatible_velocities().dimension
    0
    >>> len(coin.admissible_multipliers([0, 0, 0.3, 0], [0.5, 0.5 * 0.30933624960962325, 0.2, 0.52]))
    1
    """

    def __init__(self, chart, constraints):
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        self.chart = chart
        self.constraints = _as_linear(chart, constraints)

    @property
    def dim(self) -> int:
        return self.chart.dim

    @property
    def count(self) -> int:
        """k, the number of constraints."""
        return self.constraints.count

    @cached_property
    def forms(self) -> sp.ImmutableMatrix:
        """ω (k × N), row a = ``ω^a_A``."""
        return sp.ImmutableMatrix(self.constraints.forms)

    @cached_property
    def curls(self) -> tuple:
        """``M^a_AB = ∂_B ω^a_A − ∂_A ω^a_B`` for each constraint (skew)."""
        q, N = self.chart.coordinates, self.dim
        out = []
        for a in range(self.count):
            w = self.forms.row(a)
            out.append(sp.ImmutableMatrix(N, N, lambda A, B: tidy(w[A].diff(q[B]) - w[B].diff(q[A]))))
        return tuple(out)

    @cached_property
    def _D_basis(self) -> tuple:
        frame = self.constraints.adapted_frame()
        return tuple(tuple(frame.vectors.row(al)) for al in range(self.constraints.rank_D))

    def compatible_velocities(self) -> CompatibleVelocities:
        """The subspace ``{u : ω(u) = 0, X_α·M^a u = 0 for all a, α}`` (X_α a basis of D) at a generic point."""
        N = self.dim
        rows = [list(self.forms.row(a)) for a in range(self.count)]
        for M in self.curls:
            for X in self._D_basis:
                rows.append([sp.Add(*[X[A] * M[A, C] for A in range(N) if X[A] != 0]) for C in range(N)])
        sol = solve_generic(sp.Matrix(rows), [0] * len(rows))
        basis = tuple(tuple(tidy(e) for e in d) for d in sol.free_directions)
        return CompatibleVelocities(basis, len(basis))

    # --- the split M^a u = ωᵀ κ + w^a --------------------------------------------------------------
    def split(self, u, on=None) -> tuple:
        """``(κ, W)`` with ``M^a u = ωᵀ κ_{·a} + w^a``, ``w^a ⊥ rows of ω``; W is N × k (columns ``w^a``).

        ``on`` substitutes the coordinates (e.g. along a path)."""
        N, k = self.dim, self.count
        om = sp.Matrix(self.forms)
        curls = [sp.Matrix(M) for M in self.curls]
        if on:
            om = om.xreplace(on)
            curls = [M.xreplace(on) for M in curls]
        u = sp.Matrix([sympified(e) for e in u])
        G = om * om.T
        Ginv = G.inv() if k > 1 else sp.Matrix([[1 / G[0, 0]]])
        kappa = sp.zeros(k, k)
        W = sp.zeros(N, k)
        for a, M in enumerate(curls):
            Mu = M * u
            col = Ginv * (om * Mu)
            kappa[:, a] = col
            W[:, a] = Mu - om.T * col
        return kappa, W

    def admissible_multipliers(self, q_values: Sequence, u_values: Sequence, tol: float = 1e-9) -> tuple:
        """A basis of ``ker W(q, u)`` at a numerical state: the multiplier covectors μ with
        ``μ_a R^a_αβ v^β = 0`` (all of R^k when u is compatible)."""
        import numpy as np

        sub = dict(zip(self.chart.coordinates, [sp.Float(x) for x in q_values]))
        _, W = self.split([sp.Float(x) for x in u_values], sub)
        Wn = np.array(W.evalf(), dtype=float)
        _, s, vt = np.linalg.svd(Wn)
        rank = int(np.sum(s > tol * max(1.0, s[0] if len(s) else 0.0)))
        return tuple(tuple(float(x) for x in row) for row in vt[rank:])

    # --- along a motion --------------------------------------------------------------------------------
    def nonholonomic_multiplier(self, lagrangian, path: Sequence, t: sp.Symbol):
        """``λ(t)`` with ``E(L) = λ_a ω^a`` along ``q(t) = path`` (least squares ``(ωωᵀ)⁻¹ ω E``), and
        the residual ``E(L) − ωᵀλ`` (zero iff the motion is a nonholonomic one)."""
        lam, residual = self._multiplier(lagrangian, path, t)
        return tuple(lam), residual

    def natural_lagrangian(self, lagrangian) -> sp.Expr:
        """L as a function of ``(q, q_dot)`` on this chart, the form the motion's ``E_A(L)`` needs.

        A :class:`~anholo.dynamics.lagrangian.Lagrangian` (on a chart with the same coordinates)
        is converted from its quasi-velocities through its bundle (``v = θ u``); an expression
        must be written in the natural velocities ``q_dot``.

        Raises
        ------
        DimensionError
            If the Lagrangian lives on a chart with other coordinates.
        ConstraintError
            If the expression cannot be read, or contains none of the velocities ``q_dot`` (e.g.
            ``Lagrangian.expr``, written in quasi-velocities: along a path it cannot be read as a
            function of q and q̇, and every ``∂L/∂q̇`` would vanish).
        """
        if isinstance(lagrangian, Lagrangian):
            if tuple(lagrangian.frame.chart.coordinates) != tuple(self.chart.coordinates):
                raise DimensionError(
                    f"the Lagrangian lives on the coordinates {lagrangian.frame.chart.coordinates}, the constraints "
                    f"on {self.chart.coordinates}; use the same chart for both.")
            return lagrangian.natural_expr()
        try:
            L = sympified(lagrangian)
        except (sp.SympifyError, TypeError, ValueError):
            raise ConstraintError(
                f"cannot read the Lagrangian {lagrangian!r}: give a Lagrangian object or an expression in the "
                "coordinates and the natural velocities q_dot.") from None
        if not isinstance(L, sp.Expr) or not L.free_symbols & set(self.chart.velocities):
            names = ", ".join(u.name for u in self.chart.velocities)
            raise ConstraintError(
                f"the Lagrangian contains none of the velocities {names}: write it in the natural velocities "
                "(an expression in quasi-velocities, such as Lagrangian.expr, cannot be read along a path), or "
                "pass the Lagrangian object itself, which is converted through its frame.")
        return L

    def _multiplier(self, lagrangian, path, t):
        q, u = self.chart.coordinates, self.chart.velocities
        L = self.natural_lagrangian(lagrangian)
        path = [sympified(e) for e in path]
        if len(path) != self.dim:
            raise DimensionError(f"the motion needs {self.dim} components q^A(t), got {len(path)}.")
        on = dict(zip(q, path))
        on.update(zip(u, [e.diff(t) for e in path]))
        E = sp.Matrix([sp.diff(L.diff(uA).xreplace(on), t) - L.diff(qA).xreplace(on) for qA, uA in zip(q, u)])
        om = sp.Matrix(self.forms).xreplace(on)
        G = om * om.T
        lam = (G.inv() if self.count > 1 else sp.Matrix([[1 / G[0, 0]]])) * (om * E)
        lam = lam.applyfunc(tidy) if self.count > 1 else lam
        return list(lam), list(E - om.T * lam)

    def _check_motion(self, lagrangian, path, t):
        path = [sympified(e) for e in path]
        lam, residual = self._multiplier(lagrangian, path, t)
        on = dict(zip(self.chart.coordinates, path))
        vel = [e.diff(t) for e in path]
        om = sp.Matrix(self.forms).xreplace(on)
        if not all(vanishes(e) for e in om * sp.Matrix(vel)):
            raise ConstraintError("the motion violates the constraints ω(u) = 0.")
        if not all(vanishes(r) for r in residual):
            raise ConstraintError("the motion is not a nonholonomic one: E(L) is not a combination of the "
                                  "constraint covectors along it.")
        kappa, W = self.split(vel, on)
        return path, lam, kappa, W

    def is_vakonomic(self, lagrangian, path: Sequence, t: sp.Symbol, mu0=None, window: float = 1.0,
                     samples: int = 201, tol: float = 1e-7) -> TrajectoryVerdict:
        """Decide whether the nonholonomic motion ``q(t) = path`` (expressions in t) is vakonomic.

        ``lagrangian`` is a :class:`~anholo.dynamics.lagrangian.Lagrangian` or an expression in
        ``(q, q_dot)`` (:meth:`natural_lagrangian`); the path is first checked to satisfy the
        constraints and ``E(L) = λ_a ω^a`` (a nonholonomic motion).

        Exact when the motion is compatible (``W ≡ 0``: the multiplier ODE is returned and,
        for one constraint, solved) or ``λ ≡ 0`` (μ ≡ 0 works).  Otherwise the conditions
        ``W(Φ μ(t0) + ψ) = 0`` are solved by least squares on ``samples`` points of
        ``[0, window]``, with Φ, ψ integrated by scipy (relative residual ≤ ``tol``).

        Raises
        ------
        ConstraintError
            If the path violates the constraints or is not a nonholonomic motion, or the
            Lagrangian is an expression without natural velocities.
        """
        path, lam, kappa, W = self._check_motion(lagrangian, path, t)
        k = self.count
        mu = sp.Function("mu")
        mus = [mu(t)] if k == 1 else [sp.Function(f"mu{a + 1}")(t) for a in range(k)]
        if all(vanishes(x) for x in W):
            rhs = [tidy(-lam[b] - sp.Add(*[kappa[b, a] * mus[a] for a in range(k)])) for b in range(k)]
            eqs = [sp.Eq(m.diff(t), r) for m, r in zip(mus, rhs)]
            curve = None
            if k == 1:
                mu0 = sp.Symbol("mu0", real=True) if mu0 is None else sympified(mu0)
                try:
                    curve = sp.dsolve(eqs[0], mus[0], ics={mus[0].subs(t, 0): mu0}).rhs
                except (NotImplementedError, ValueError):
                    curve = None
            return TrajectoryVerdict(True, True, lam[0] if k == 1 else tuple(lam), curve,
                                     eqs[0] if k == 1 else eqs,
                                     "every velocity of the motion is compatible (M^a u ∈ span ω): μ̇ = −λ − κμ "
                                     "has a solution for every μ(t0)")
        lam_out = lam[0] if k == 1 else tuple(lam)
        if all(vanishes(x) for x in lam):
            zero = sp.S.Zero if k == 1 else (sp.S.Zero,) * k
            return TrajectoryVerdict(True, False, lam_out, zero, None,
                                     "W ≠ 0 restricts μ, but λ ≡ 0, so μ ≡ 0 works", (0.0,) * k)
        return self._decide_symbolic(lam, kappa, W, t, window, samples, tol, lam_out)

    def _decide_symbolic(self, lam, kappa, W, t, window, samples, tol, lam_out):
        import numpy as np
        from scipy.integrate import solve_ivp

        k, N = self.count, self.dim
        fk = expression_function([t], kappa)
        fl = expression_function([t], list(lam))
        fW = expression_function([t], W)

        def rhs(tt, y):
            K = np.array(fk(float(tt)), dtype=float).reshape(k, k)
            Phi = y[: k * k].reshape(k, k)
            psi = y[k * k:]
            return np.concatenate([(-K @ Phi).ravel(), -np.array(fl(float(tt)), dtype=float).reshape(-1) - K @ psi])

        ts = np.linspace(0.0, window, samples)
        y0 = np.concatenate([np.eye(k).ravel(), np.zeros(k)])
        sol = solve_ivp(rhs, (0.0, window), y0, t_eval=ts, rtol=1e-11, atol=1e-13)
        if not sol.success:
            raise ConstraintError(f"the multiplier equations could not be integrated along the motion: {sol.message}")
        Phis = sol.y[: k * k].T.reshape(-1, k, k)
        psis = sol.y[k * k:].T
        Ws = np.array([np.array(fW(float(tt)), dtype=float).reshape(N, k) for tt in ts])
        return _least_squares_verdict(ts, Ws, Phis, psis, lam_out, tol, k)

    def is_vakonomic_sampled(self, times, positions, velocities, multipliers, mu0=0.0,
                             tol: float = 1e-8, fit_tol: float = 1e-3) -> TrajectoryVerdict:
        """The same decision for a sampled motion: arrays of times (T,), ``q`` and ``u`` (T, N), λ ((T,) or (T, k)).

        Compatibility ``W = 0`` is tested at every sample (relative to ``|M u|``); if it holds,
        ``μ̇ = −λ − κ μ`` is integrated from ``mu0`` (trapezoidal rule).  Otherwise Φ and ψ are
        integrated by the trapezoidal rule and ``W(Φ μ(t0) + ψ) = 0`` is solved by least squares
        (relative residual ≤ ``fit_tol``, which must exceed the discretisation error).
        """
        import numpy as np

        times = np.asarray(times, dtype=float)
        q, u = np.asarray(positions, dtype=float), np.asarray(velocities, dtype=float)
        lam = np.asarray(multipliers, dtype=float)
        N, k, T = self.dim, self.count, len(times)
        lam2 = lam.reshape(T, k) if lam.size == T * k else None
        if q.shape != (T, N) or u.shape != q.shape or lam2 is None:
            raise DimensionError(f"need samples of shape (T,), (T, {N}), (T, {N}), (T, {k}).")
        om_f = expression_function(self.chart.coordinates, self.forms)
        M_f = [expression_function(self.chart.coordinates, M) for M in self.curls]
        kappas, Ws, compatible = [], [], True
        for qi, ui in zip(q, u):
            om = np.array(om_f(*qi), dtype=float).reshape(k, N)
            Mu = np.array([np.array(f(*qi), dtype=float) @ ui for f in M_f]).T  # N × k
            K = np.linalg.solve(om @ om.T, om @ Mu)
            Wi = Mu - om.T @ K
            if np.linalg.norm(Wi) > tol * max(1.0, np.linalg.norm(Mu)):
                compatible = False
            kappas.append(K)
            Ws.append(Wi)
        kap, Ws = np.array(kappas), np.array(Ws)
        lam_out = lam if lam.ndim == 1 and k == 1 else lam2
        I = np.eye(k)
        if compatible:
            mu = np.empty((T, k))
            mu[0] = np.broadcast_to(np.asarray(mu0, dtype=float), (k,))
            for i in range(1, T):  # trapezoid for μ̇ = −λ − κμ (implicit in μ_i)
                h = times[i] - times[i - 1]
                rhs = (I - h / 2 * kap[i - 1]) @ mu[i - 1] - h / 2 * (lam2[i - 1] + lam2[i])
                mu[i] = np.linalg.solve(I + h / 2 * kap[i], rhs)
            return TrajectoryVerdict(True, True, lam_out, mu[:, 0] if k == 1 else mu, None,
                                     "W = 0 at every sample: μ integrated from mu0")
        Phis, psis = np.empty((T, k, k)), np.empty((T, k))
        Phis[0], psis[0] = I, 0.0
        for i in range(1, T):
            h = times[i] - times[i - 1]
            A = np.linalg.inv(I + h / 2 * kap[i])
            Phis[i] = A @ (I - h / 2 * kap[i - 1]) @ Phis[i - 1]
            psis[i] = A @ ((I - h / 2 * kap[i - 1]) @ psis[i - 1] - h / 2 * (lam2[i - 1] + lam2[i]))
        return _least_squares_verdict(times, Ws, Phis, psis, lam_out, fit_tol, k)

    def __str__(self):
        return f"{self.count} Pfaffian constraint(s) on ({', '.join(map(str, self.chart.coordinates))})"


def _least_squares_verdict(ts, Ws, Phis, psis, lam_out, tol, k) -> TrajectoryVerdict:
    """Solve ``W_i(Φ_i μ0 + ψ_i) = 0`` for μ0 in the least-squares sense and decide."""
    import numpy as np

    A = np.concatenate([W @ P for W, P in zip(Ws, Phis)])
    b = -np.concatenate([W @ p for W, p in zip(Ws, psis)])
    scale = np.linalg.norm(b)
    if scale <= 1e-14 * max(1.0, np.linalg.norm(A)):
        mu0 = np.zeros(k)
        res = 0.0
    else:
        mu0, *_ = np.linalg.lstsq(A, b, rcond=None)
        res = float(np.linalg.norm(A @ mu0 - b) / scale)
    _, s, vt = np.linalg.svd(A)
    rank = int(np.sum(s > 1e-8 * max(1.0, s[0] if len(s) else 0.0)))
    free = tuple(tuple(float(x) for x in row) for row in vt[rank:])
    curve = np.array([P @ mu0 + p for P, p in zip(Phis, psis)])
    if res <= tol:
        return TrajectoryVerdict(True, False, lam_out, curve[:, 0] if k == 1 else curve, None,
                                 "W ≠ 0 restricts μ, and the multiplier ODE keeps μ(t) in ker W for the initial "
                                 "values found", tuple(float(x) for x in mu0), free, res)
    return TrajectoryVerdict(False, False, lam_out, None, None,
                             f"no multiplier curve: the solutions of μ̇ = −λ − κμ cannot stay in ker W (relative "
                             f"least-squares residual {res:.2e})", None, (), res)


class SingleConstraintConsistency(TrajectoryConsistency):
    """One linear constraint ``a_A(q) u^A = 0`` (Cronström & Raita 2009; docs/consistency.rst).

    The special case k = 1 of :class:`TrajectoryConsistency`, with the covector ``a``, its
    curl ``M`` and the Frobenius form ``a ∧ da``.

    Parameters
    ----------
    chart : Chart
    covector : sequence of expressions, or one expression linear in the velocities
        ``a_A(q)``, or the constraint written with ``q_dot`` (e.g. ``"z_dot - y*x_dot"``).

    Examples
    --------
    >>> import sympy as sp
    >>> from anholo import Chart
    >>> heis = SingleConstraintConsistency(Chart("x y z"), "z_dot - y*x_dot")
    >>> heis.a_wedge_da_vanishes(), heis.compatible_velocities().dimension
    (False, 0)
    >>> radial = SingleConstraintConsistency(Chart("x y z"), "x*y_dot - y*x_dot")    # conformally holonomic
    >>> radial.a_wedge_da_vanishes(), radial.compatible_velocities().dimension
    (True, 2)
    """

    def __init__(self, chart, covector):
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        item = covector if isinstance(covector, (str, sp.Expr)) else tuple(covector)
        if not isinstance(item, (str, sp.Expr)) and len(item) != chart.dim:
            raise DimensionError(f"the covector a needs {chart.dim} components, got {len(item)}.")
        super().__init__(chart, [item])

    @property
    def covector(self) -> tuple:
        """``a_A(q)``."""
        return tuple(self.forms.row(0))

    @property
    def curl(self) -> sp.ImmutableMatrix:
        """``M_AB = ∂_B a_A − ∂_A a_B`` (skew; ``da(u, w) = −u^A M_AB w^B``)."""
        return self.curls[0]

    def a_wedge_da(self) -> dict:
        """Components ``(a ∧ da)_{ABC}`` (A < B < C, nonzero) with ``(da)_{BC} = ∂_B a_C − ∂_C a_B``:
        ``a_A (da)_{BC} + a_B (da)_{CA} + a_C (da)_{AB}``."""
        a, M, N = self.covector, self.curl, self.dim
        out = {}
        for A in range(N):
            for B in range(A + 1, N):
                for C in range(B + 1, N):
                    val = tidy(-(a[A] * M[B, C] + a[B] * M[C, A] + a[C] * M[A, B]))
                    if not vanishes(val):
                        out[(A, B, C)] = val
        return out

    def a_wedge_da_vanishes(self) -> bool:
        """Frobenius: ``a ∧ da = 0`` iff the constraint is (conformally) holonomic."""
        return not self.a_wedge_da()

    def compatibility_residuals(self, u: Sequence) -> tuple:
        """``(Mu)_A a_B − (Mu)_B a_A`` for A < B: all zero iff ``M u ∥ a``."""
        a, M, N = self.covector, self.curl, self.dim
        Mu = [sp.Add(*[M[A, B] * sympified(u[B]) for B in range(N)]) for A in range(N)]
        return tuple(Mu[A] * a[B] - Mu[B] * a[A] for A in range(N) for B in range(A + 1, N))

    def nonholonomic_multiplier(self, lagrangian, path: Sequence, t: sp.Symbol):
        """``λ(t)`` with ``E(L) = λ a`` along ``q(t) = path``, and the residual ``E(L) − λ a``."""
        lam, residual = self._multiplier(lagrangian, path, t)
        return lam[0], residual

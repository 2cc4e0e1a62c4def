"""Consistency along one motion: one linear constraint ``a·u = 0`` on R^N (docs/consistency.rst, Cronström & Raita (2009) as corrected in §10).

For a Lagrangian L and one constraint ``φ = a_A(q) u^A = 0``, write
``E_A(L) = d/dt ∂L/∂u^A − ∂L/∂q^A`` and

    M_AB = ∂_B a_A − ∂_A a_B        (so that ``da(u, w) = −u^A M_AB w^B``).

* Nonholonomic motions: ``E_A(L) = λ a_A``, ``a·u = 0``.
* Vakonomic motions (multiplication rule ``L + μ a·u``):
  ``E_A(L) = −μ̇ a_A − μ (M u)_A``.

A nonholonomic motion is vakonomic iff a multiplier curve μ(t) exists with
``μ (M u)_A = −(λ + μ̇) a_A`` along it.  Splitting ``M u = κ a + w`` with
``w ⊥ a`` (``κ = a·Mu/|a|²``):

* if ``w = 0`` along the motion (every velocity of it *compatible*), every
  solution of the linear equation ``μ̇ = −λ − κ μ`` works: the initial value
  ``μ(t0)`` is a free datum (Cronström & Raita 2009 omits it; docs/theory.rst (corrections to the literature));
* otherwise μ must vanish wherever ``w ≠ 0``, hence (for analytic motions)
  everywhere, and the motion is vakonomic iff ``λ ≡ 0`` (then ``μ ≡ 0``).

Pointwise, a velocity ``u ∈ ker a`` is *compatible* iff ``M u ∥ a``, i.e.
``(Mu)_A a_B − (Mu)_B a_A = 0`` — a linear condition, so the compatible
velocities form a subspace.  ``a ∧ da = 0`` (Frobenius) iff every constrained
velocity is compatible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..algebra import free_symbols, solve_generic, tidy, vanishes
from ..errors import ConstraintError, DimensionError
from ..constraints.linear import LinearConstraints
from ..geometry.chart import Chart

__all__ = ["PfaffianConstraint", "CompatibleVelocities", "TrajectoryVerdict"]


@dataclass(frozen=True)
class CompatibleVelocities:
    """The subspace of velocities ``u ∈ ker a`` with ``M u ∥ a`` at a generic point.

    Attributes
    ----------
    basis : tuple of tuples
        A basis (vectors in coordinate components, functions of q); empty if only
        ``u = 0`` is compatible.
    dimension : int
        Its generic dimension (``N − 1`` iff ``a ∧ da = 0``).
    """

    basis: tuple
    dimension: int


@dataclass(frozen=True)
class TrajectoryVerdict:
    """Whether a nonholonomic motion is vakonomic for some multiplier curve.

    Attributes
    ----------
    vakonomic : bool
    compatible : bool
        ``M u ∥ a`` all along the motion.
    nonholonomic_multiplier : object
        λ(t) with ``E(L) = λ a`` (an expression in t, or an array for sampled motions).
    multiplier : object
        A multiplier curve μ(t) (for ``mu0`` when compatible; 0 when λ ≡ 0), or None.
    multiplier_equation : sympy.Eq or None
        ``μ̇ = −λ − κ μ`` when the motion is compatible (μ(t0) free).
    reason : str
    """

    vakonomic: bool
    compatible: bool
    nonholonomic_multiplier: object
    multiplier: object
    multiplier_equation: object
    reason: str

    def __bool__(self):
        return self.vakonomic


@dataclass(frozen=True, eq=False)
class PfaffianConstraint:
    """One linear constraint ``a_A(q) u^A = 0`` on a chart (Cronström & Raita 2009; docs/consistency.rst).

    Parameters
    ----------
    chart : Chart
    covector : sequence of expressions, or one expression linear in the velocities
        ``a_A(q)``, or the constraint written with ``q_dot`` (e.g. ``"z_dot - y*x_dot"``).

    Examples
    --------
    >>> import sympy as sp
    >>> from anholo import Chart
    >>> heis = PfaffianConstraint(Chart("x y z"), "z_dot - y*x_dot")
    >>> heis.a_wedge_da_vanishes(), heis.compatible_velocities().dimension
    (False, 0)
    >>> radial = PfaffianConstraint(Chart("x y z"), "x*y_dot - y*x_dot")    # conformally holonomic
    >>> radial.a_wedge_da_vanishes(), radial.compatible_velocities().dimension
    (True, 2)
    """

    chart: Chart
    covector: tuple
    constraints: LinearConstraints = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        chart = self.chart if isinstance(self.chart, Chart) else Chart(self.chart)
        object.__setattr__(self, "chart", chart)
        a = self.covector
        if isinstance(a, (str, sp.Expr)):
            C = LinearConstraints.from_expressions(chart, [a])
            if C.is_affine:
                raise ConstraintError("the constraint must be linear (a·u = 0), not affine.")
            a = tuple(C.forms.row(0))
        a = tuple(sp.sympify(e) for e in a)
        if len(a) != chart.dim:
            raise DimensionError(f"the covector a needs {chart.dim} components, got {len(a)}.")
        if free_symbols(a) & set(chart.velocities):
            raise ConstraintError("the covector a_A(q) must not depend on the velocities.")
        if all(vanishes(e) for e in a):
            raise ConstraintError("the covector a vanishes identically: there is no constraint.")
        object.__setattr__(self, "covector", a)
        # the constraint in the package's one model of linear constraints
        object.__setattr__(self, "constraints", LinearConstraints.from_forms(chart, [a]))

    @property
    def dim(self) -> int:
        return self.chart.dim

    @cached_property
    def curl(self) -> sp.ImmutableMatrix:
        """``M_AB = ∂_B a_A − ∂_A a_B`` (skew; ``da(u, w) = −u^A M_AB w^B``)."""
        q, a, N = self.chart.coordinates, self.covector, self.dim
        return sp.ImmutableMatrix(N, N, lambda A, B: tidy(a[A].diff(q[B]) - a[B].diff(q[A])))

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
        Mu = [sp.Add(*[M[A, B] * sp.sympify(u[B]) for B in range(N)]) for A in range(N)]
        return tuple(Mu[A] * a[B] - Mu[B] * a[A] for A in range(N) for B in range(A + 1, N))

    def compatible_velocities(self) -> CompatibleVelocities:
        """The subspace ``{u : a·u = 0, (Mu)_A a_B − (Mu)_B a_A = 0}`` at a generic point."""
        a, M, N = self.covector, self.curl, self.dim
        rows = [list(a)]
        for A in range(N):
            for B in range(A + 1, N):
                rows.append([M[A, C] * a[B] - M[B, C] * a[A] for C in range(N)])
        sol = solve_generic(sp.Matrix(rows), [0] * len(rows))
        basis = tuple(tuple(tidy(e) for e in d) for d in sol.free_directions)
        return CompatibleVelocities(basis, len(basis))

    # --- along a motion ------------------------------------------------------------------------
    def _split(self, u) -> tuple:
        """``(κ, w)`` with ``M u = κ a + w``, ``w ⊥ a`` (Euclidean)."""
        a, M, N = self.covector, self.curl, self.dim
        Mu = [sp.Add(*[M[A, B] * u[B] for B in range(N)]) for A in range(N)]
        aa = sp.Add(*[x**2 for x in a])
        kappa = sp.Add(*[x * y for x, y in zip(a, Mu)]) / aa
        return kappa, [m - kappa * x for m, x in zip(Mu, a)]

    def nonholonomic_multiplier(self, lagrangian, path: Sequence, t: sp.Symbol):
        """``λ(t)`` with ``E(L) = λ a`` along ``q(t) = path``, and the residual ``E(L) − λ a``
        (zero iff the motion is a nonholonomic one)."""
        q, u = self.chart.coordinates, self.chart.velocities
        path = [sp.sympify(e) for e in path]
        if len(path) != self.dim:
            raise DimensionError(f"the motion needs {self.dim} components q^A(t), got {len(path)}.")
        on = dict(zip(q, path))
        on.update(zip(u, [e.diff(t) for e in path]))
        L = sp.sympify(lagrangian)
        E = [sp.diff(L.diff(uA).xreplace(on), t) - L.diff(qA).xreplace(on) for qA, uA in zip(q, u)]
        a = [x.xreplace(on) for x in self.covector]
        aa = sp.Add(*[x**2 for x in a])
        lam = sp.Add(*[x * e for x, e in zip(a, E)]) / aa
        return lam, [e - lam * x for e, x in zip(E, a)]

    def is_vakonomic(self, lagrangian, path: Sequence, t: sp.Symbol, mu0=None) -> TrajectoryVerdict:
        """Decide whether the nonholonomic motion ``q(t) = path`` is vakonomic (module docstring).

        Parameters
        ----------
        lagrangian : expression in q and ``q_dot``
        path : expressions ``q^A(t)``
        t : Symbol
        mu0 : optional
            The free initial value μ(0) for the multiplier curve (default: a symbol ``mu0``).

        Raises
        ------
        ConstraintError
            If the path violates the constraint or is not a nonholonomic motion
            (``E(L)`` not parallel to a).
        """
        path = [sp.sympify(e) for e in path]
        lam, residual = self.nonholonomic_multiplier(lagrangian, path, t)
        on = dict(zip(self.chart.coordinates, path))
        vel = [e.diff(t) for e in path]
        a = [x.xreplace(on) for x in self.covector]
        if not vanishes(sp.Add(*[x * v for x, v in zip(a, vel)])):
            raise ConstraintError("the motion violates the constraint a·u = 0.")
        if not all(vanishes(r) for r in residual):
            raise ConstraintError("the motion is not a nonholonomic one: E(L) is not parallel to a along it.")
        kappa, w = self._split([sp.sympify(v) for v in vel])
        kappa = kappa.xreplace(on)
        w = [x.xreplace(on) for x in w]
        mu = sp.Function("mu")
        if all(vanishes(x) for x in w):
            eq = sp.Eq(mu(t).diff(t), -lam - kappa * mu(t))
            mu0 = sp.Symbol("mu0", real=True) if mu0 is None else sp.sympify(mu0)
            try:
                curve = sp.dsolve(eq, mu(t), ics={mu(0): mu0}).rhs
            except (NotImplementedError, ValueError):
                curve = None
            return TrajectoryVerdict(True, True, lam, curve, eq,
                                     "M u ∥ a along the motion: μ̇ = −λ − κμ has a solution for every μ(0)")
        if vanishes(lam):
            return TrajectoryVerdict(True, False, lam, sp.S.Zero, None,
                                     "M u is not parallel to a, so μ ≡ 0; λ ≡ 0, so μ ≡ 0 works")
        return TrajectoryVerdict(False, False, lam, None, None,
                                 "M u is not parallel to a (so μ ≡ 0 is forced) but λ ≢ 0: not vakonomic")

    def is_vakonomic_sampled(self, times, positions, velocities, multipliers, mu0: float = 0.0,
                             tol: float = 1e-8) -> TrajectoryVerdict:
        """The same decision for a sampled motion: arrays of times, ``q``, ``u`` and λ.

        Compatibility ``w = 0`` is tested at every sample (relative to ``|M u|``); if it
        holds, ``μ̇ = −λ − κ μ`` is integrated from ``mu0`` (trapezoidal rule) and the
        samples of μ are returned; otherwise the motion is vakonomic iff ``|λ| ≤ tol``.
        """
        import numpy as np

        times = np.asarray(times, dtype=float)
        q, u = np.asarray(positions, dtype=float), np.asarray(velocities, dtype=float)
        lam = np.asarray(multipliers, dtype=float)
        N = self.dim
        if q.shape != (len(times), N) or u.shape != q.shape or lam.shape != times.shape:
            raise DimensionError(f"need samples of shape (T,), (T, {N}), (T, {N}), (T,).")
        a_f = sp.lambdify(self.chart.coordinates, list(self.covector), "numpy")
        M_f = sp.lambdify(self.chart.coordinates, self.curl, "numpy")
        kappas, compatible = [], True
        for qi, ui in zip(q, u):
            a = np.array(a_f(*qi), dtype=float)
            Mu = np.array(M_f(*qi), dtype=float) @ ui
            k = a @ Mu / (a @ a)
            w = Mu - k * a
            if np.linalg.norm(w) > tol * max(1.0, np.linalg.norm(Mu)):
                compatible = False
            kappas.append(k)
        if compatible:
            kap = np.array(kappas)
            mu = np.empty_like(times)
            mu[0] = mu0
            for i in range(1, len(times)):  # trapezoid for μ̇ = −λ − κμ (implicit in μ_i)
                h = times[i] - times[i - 1]
                rhs = mu[i - 1] + h / 2 * (-lam[i - 1] - kap[i - 1] * mu[i - 1] - lam[i])
                mu[i] = rhs / (1 + h / 2 * kap[i])
            return TrajectoryVerdict(True, True, lam, mu, None, "M u ∥ a at every sample: μ integrated from mu0")
        if np.all(np.abs(lam) <= tol):
            return TrajectoryVerdict(True, False, lam, np.zeros_like(times), None, "λ ≡ 0: μ ≡ 0 works")
        return TrajectoryVerdict(False, False, lam, None, None,
                                 "M u is not parallel to a at some samples and λ ≠ 0: not vakonomic")

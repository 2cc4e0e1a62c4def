"""General kinematic constraints ``φ^ν(q, u, t) = 0`` (docs/chetaev.rst; Talamucci (2025) §2.2).

k constraints on the natural velocities ``u = q̇``, linear or not, possibly
depending on time.  They are *independent* if the Jacobian ``∂φ/∂u`` (k × n)
has rank k **on** the constraint set ``C = {φ = 0}`` (Talamucci 2025, condition (9)).
The rank is taken at points of C, not at generic points of TQ: the three
components of ``u₁ × u₂ = 0`` (parallel velocities, Talamucci (2025) Example 2 (i)) have
a Jacobian of rank 3 off C but of rank 2 on C, so only two of them are
independent.  Points of C are found numerically (Gauss–Newton on the
velocities at random configurations), so every rank is a generic rank on C
with probability one.  A reduced list remembers the constraints it dropped: C stays the
zero set of *all* of them, because the kept ones alone may vanish on further components
(for ``u₁ × u₂ = 0`` any two components also vanish when both velocities are horizontal
and not parallel); points of C, ranks, the choice of dependent velocities and the explicit
branches ``u_dep = α`` are all taken on the full set.

* :class:`KinematicConstraints` — the constraint functions, the rank check, the
  reduction of a rank-deficient list to an independent subset (with a message),
  and the choice of dependent velocities ``u^{m+ν}`` with the check
  ``det(∂φ/∂u_dep) ≠ 0`` on C (Talamucci 2025, condition (25)).
* :class:`CartesianPullback` — constraints stated on particles' Cartesian
  positions and velocities ``ψ(r, ṙ, t) = 0``, pulled back through
  ``r_s = r_s(q, t)``, ``ṙ_s = (∂r_s/∂q) u + ∂r_s/∂t`` (Talamucci 2025, eqs. (5), (8)–(10)).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..parsing import sympified
from ..algebra import free_symbols, numeric_value, random_point, vanishes, xreplace_dag
from ..algebra.printing import latex
from ..errors import (
    ArgumentError,
    ConstraintError,
    DependentConstraintsError,
    DimensionError,
    UnsolvableConstraintsError,
)
from ..geometry.chart import Chart, velocity_symbol
from .linear import LinearConstraints, stationary_linear_constraints
from .reading import read_expression
from ..parsing import as_argument, as_expression, as_sequence

__all__ = ["KinematicConstraints", "CartesianPullback"]

_RANK_TOL = 1e-7


def _velocity_indices(chart: Chart, chosen) -> tuple:
    """Indices of velocities given as indices, velocity symbols, coordinates or names."""
    out = []
    for c in chosen:
        if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
            if not 0 <= c < chart.dim:
                raise DimensionError(f"velocity index {c} out of range 0..{chart.dim - 1}.")
            out.append(int(c))
            continue
        name = c.name if isinstance(c, sp.Symbol) else str(c)
        for A, (q, u) in enumerate(zip(chart.coordinates, chart.velocities)):
            if name in (q.name, u.name):
                out.append(A)
                break
        else:
            raise DimensionError(
                f"{c!r} is neither a coordinate nor a velocity of the chart {chart.coordinates}; "
                "name dependent velocities by their coordinate, their velocity symbol or their index."
            )
    if len(set(out)) != len(out):
        raise DimensionError(f"dependent velocities must be distinct, got {list(chosen)}.")
    return tuple(out)


@dataclass(frozen=True, eq=False)
class KinematicConstraints:
    """Constraints ``φ^ν(q, u, t) = 0``, ν = 1..k, in the natural velocities (docs/chetaev.rst).

    Parameters
    ----------
    chart : Chart
    expressions : sequence of expressions or strings
        The functions ``φ^ν`` as written (strings are parsed with the chart's names).
    time : Symbol, optional
        The time symbol, if the constraints depend on time explicitly.
    dropped : tuple, optional
        Constraints removed from a longer list as dependent (set by :meth:`independent`).
    note : str, optional
        Message explaining a reduction (set by :meth:`independent`).

    Raises
    ------
    ConstraintError
        If some ``φ^ν`` contains no velocity (a position-level constraint: give its
        time derivative, see :meth:`from_positions`).
    DependentConstraintsError
        If ``rank ∂φ/∂u < k`` on C; :meth:`independent` reduces such a list instead.

    Examples
    --------
    The Appell–Hamel constraint ``ż² = c²(ẋ² + ẏ²)``:

    >>> import sympy as sp
    >>> chart = Chart("x y z", parameters=[sp.Symbol("c", positive=True)])
    >>> K = KinematicConstraints(chart, ["z_dot^2 - c^2*(x_dot^2 + y_dot^2)"])
    >>> K.rank, K.m, K.is_linear
    (1, 2, False)
    >>> K.dependent
    (2,)
    """

    chart: Chart
    expressions: tuple
    time: sp.Symbol = None
    dropped: tuple = ()
    note: str = ""

    def __post_init__(self):
        if not isinstance(self.chart, Chart):
            object.__setattr__(self, "chart", Chart(self.chart))
        chart = self.chart
        if self.time is not None and not isinstance(self.time, sp.Symbol):
            raise ArgumentError(f"KinematicConstraints: time must be a sympy Symbol, got {type(self.time).__name__}.")
        exprs = tuple(read_expression(chart, e, f"constraints[{a}]", self.time) for a, e in enumerate(
            as_sequence(self.expressions, "constraints", what="constraint expressions")))
        object.__setattr__(self, "expressions", exprs)
        k, n = len(exprs), chart.dim
        if k == 0:
            raise ConstraintError("no constraints given; use the Lagrangian's Euler–Lagrange field instead.")
        if k >= n:
            raise DependentConstraintsError(
                f"{k} kinematic constraints on a {n}-dimensional configuration space leave no motion; "
                f"give at most {n - 1} independent constraints."
            )
        u = set(chart.velocities)
        for a, phi in enumerate(exprs):
            if not phi.free_symbols & u or all(vanishes(phi.diff(ui)) for ui in chart.velocities):
                raise ConstraintError(
                    f"constraint {a} ({phi} = 0) contains no velocities: it is a position-level (holonomic) "
                    "constraint f(q, t) = 0, not a kinematic one. Pass its time derivative df/dt instead "
                    "(KinematicConstraints.from_positions does this), or eliminate a coordinate."
                )
        if self.time is not None and not isinstance(self.time, sp.Symbol):
            raise DimensionError(f"time must be a sympy Symbol, got {self.time!r}.")
        if self.rank < k:
            keep = self._independent_rows()
            raise DependentConstraintsError(
                f"the {k} constraints are not independent on the constraint set: rank ∂φ/∂q_dot = {self.rank} "
                f"< {k} at points where all of them hold. Constraints {list(keep)} are independent and imply "
                f"the others near C; keep those (KinematicConstraints.independent does this for you)."
            )

    # --- constructors -----------------------------------------------------------------
    @classmethod
    def independent(cls, chart: Chart | Sequence, expressions: Sequence, time=None) -> "KinematicConstraints":
        """The constraints reduced to an independent subset, with a message in :attr:`note`.

        Rows of ``∂φ/∂u`` are kept greedily (in the given order) while they raise the
        rank at a point of C (the zero set of all the constraints).  Near a generic point of
        C the kept constraints define C (implicit function theorem: they vanish on C and
        their differentials are independent there), but their common zero set may have
        further components: points are sampled on the kept constraints alone and, if a
        dropped constraint fails at one of them, :attr:`note` says so.  Either way the
        result keeps :attr:`dropped` as part of the definition of C (module docstring), so
        every later rank, choice of dependent velocities and explicit branch is taken on C.

        Examples
        --------
        Parallel velocities of two particles, ``u₁ × u₂ = 0`` (Talamucci 2025 Example 2 (i)):

        >>> chart = Chart("x1 y1 z1 x2 y2 z2")
        >>> K = KinematicConstraints.independent(chart, [
        ...     "y1_dot*z2_dot - z1_dot*y2_dot", "z1_dot*x2_dot - x1_dot*z2_dot",
        ...     "x1_dot*y2_dot - y1_dot*x2_dot"])
        >>> K.rank, len(K.dropped)
        (2, 1)
        """
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        exprs = tuple(read_expression(chart, e, f"constraints[{a}]", time) for a, e in enumerate(expressions))
        probe = object.__new__(cls)
        for name, val in (("chart", chart), ("expressions", exprs), ("time", time), ("dropped", ()), ("note", "")):
            object.__setattr__(probe, name, val)
        if probe.rank == len(exprs):
            return cls(chart, exprs, time)
        keep = probe._independent_rows()
        dropped = tuple(exprs[a] for a in range(len(exprs)) if a not in keep)
        kept = tuple(exprs[a] for a in keep)
        note = (
            f"the {len(exprs)} constraints have rank {probe.rank} on the constraint set; kept constraints "
            f"{list(keep)}, dropped {[str(d) for d in dropped]}: near the points of C the kept ones imply the "
            "dropped ones."
        )
        if _spurious_components(chart, kept, dropped, time):
            note += (" The kept constraints alone also vanish on further components where the dropped ones do "
                     "not hold; C remains the zero set of all of them (the dropped ones select it).")
        return cls(chart, kept, time, dropped, note)

    @classmethod
    def from_positions(cls, chart: Chart | Sequence, functions: Sequence, time=None) -> "KinematicConstraints":
        """The time derivatives ``ḟ^ν = (∂f^ν/∂q) u + ∂f^ν/∂t`` of position constraints ``f^ν(q, t) = 0``
        (Talamucci 2025, eq. (13)): holonomic constraints in kinematic form."""
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        fs = [read_expression(chart, f, f"functions[{a}]", time) for a, f in enumerate(functions)]
        for a, f in enumerate(fs):
            if f.free_symbols & set(chart.velocities):
                raise ConstraintError(f"position constraint {a} ({f}) depends on velocities; give f(q, t) only.")
        return cls(chart, tuple(_total_derivative(chart, f, time) for f in fs), time)

    # --- basic data -------------------------------------------------------------------
    @property
    def count(self) -> int:
        """k, the number of constraints."""
        return len(self.expressions)

    @property
    def m(self) -> int:
        """m = n − k, the number of independent velocities."""
        return self.chart.dim - self.count

    @cached_property
    def jacobian(self) -> sp.ImmutableMatrix:
        """``∂φ^ν/∂u^A`` (k × n): the Chetaev displacement matrix (docs/chetaev.rst)."""
        u = self.chart.velocities
        return sp.ImmutableMatrix(self.count, len(u), lambda a, A: self.expressions[a].diff(u[A]))

    @cached_property
    def is_linear(self) -> bool:
        """True if every ``φ^ν`` is affine in the velocities (zero second derivatives)."""
        u = self.chart.velocities
        J = self.jacobian
        return all(
            not (J[a, A].free_symbols & set(u)) or all(vanishes(J[a, A].diff(w)) for w in u)
            for a in range(self.count) for A in range(len(u))
        )

    @property
    def is_stationary(self) -> bool:
        """True if no constraint depends on time explicitly."""
        return self.time is None or not any(e.has(self.time) for e in self.expressions)

    def symbols(self) -> set:
        """All symbols of the constraints other than the velocities, with the chart's coordinates and
        parameters (q, parameters, t)."""
        return (free_symbols(self.defining_functions) - set(self.chart.velocities)) | set(self.chart.coordinates) \
            | set(self.chart.parameters)

    @property
    def defining_functions(self) -> tuple:
        """The functions whose common zero set is C: the constraints and the :attr:`dropped` ones."""
        return tuple(self.expressions) + tuple(self.dropped)

    @cached_property
    def _full_jacobian(self) -> sp.ImmutableMatrix:
        u = self.chart.velocities
        fs = self.defining_functions
        return sp.ImmutableMatrix(len(fs), len(u), lambda a, A: fs[a].diff(u[A]))

    # --- points of C and ranks ----------------------------------------------------------
    def points_on_C(self, count: int = 3, seed: int = 2024) -> tuple:
        """``count`` random points of C as dicts ``{symbol: Float}`` (q, u, parameters, t).

        Configurations and parameters are drawn at random; velocities start at
        random and are moved onto ``φ = 0`` by Gauss–Newton steps
        ``u ← u − (∂φ/∂u)⁺ φ`` (minimum-norm, so rank-deficient lists converge too),
        with φ all the :attr:`defining_functions` (the dropped constraints too).

        Raises
        ------
        ConstraintError
            If no real point of C is found (e.g. ``ẋ² + 1 = 0``).
        """
        if (count, seed) in self._point_cache:
            return self._point_cache[(count, seed)]
        out = _points_on(self.chart, self.defining_functions, self._full_jacobian, self.symbols(), count, seed)
        if len(out) < count:
            raise ConstraintError(
                "could not find real points where all the constraints hold (Gauss–Newton from random "
                f"velocities failed); check that {[str(e) for e in self.defining_functions]} = 0 has real solutions."
            )
        self._point_cache[(count, seed)] = tuple(out)
        return tuple(out)

    @cached_property
    def _point_cache(self) -> dict:
        return {}

    def jacobian_at(self, point: Mapping) -> np.ndarray:
        """``∂φ/∂u`` at a point, as a float array."""
        J = self.jacobian
        return np.array([[numeric_value(J[a, A], point).real for A in range(self.chart.dim)]
                         for a in range(self.count)])

    @cached_property
    def rank(self) -> int:
        """Rank of ``∂φ/∂u`` on C (the largest rank at random points of C)."""
        return max(_numeric_rank(self.jacobian_at(p)) for p in self.points_on_C())

    def _independent_rows(self) -> tuple:
        best = max(self.points_on_C(), key=lambda p: _numeric_rank(self.jacobian_at(p)))
        Jn = self.jacobian_at(best)
        keep: list = []
        for a in range(self.count):
            if _numeric_rank(Jn[keep + [a], :]) == len(keep) + 1:
                keep.append(a)
        return tuple(keep)

    # --- dependent velocities -------------------------------------------------------------
    @cached_property
    def dependent(self) -> tuple:
        """Indices of default dependent velocities: chosen greedily from the last velocity backwards
        (Talamucci 2025 numbers them ``u^{m+1}..u^n``) so that ``∂φ/∂u_dep`` is invertible at every
        sample point of C; if the greedy choice fails, the first such choice in that order.

        Raises
        ------
        UnsolvableConstraintsError
            If no k velocities give an invertible ``∂φ/∂u_dep`` at all the sample points of C.
        """
        mats = self._jacobians_on_C()
        chosen: list = []
        for A in reversed(range(self.chart.dim)):
            if len(chosen) == self.count:
                break
            if all(_numeric_rank(Jn[:, chosen + [A]]) == len(chosen) + 1 for Jn in mats):
                chosen.append(A)
        if len(chosen) == self.count:
            return tuple(sorted(chosen))
        found = self._solvable_choices(limit=1)
        if not found:
            raise UnsolvableConstraintsError(
                "no choice of dependent velocities makes det ∂φ/∂u_dep nonzero at all the sampled points of the "
                "constraint set: C has branches needing different choices; split the constraints by branch."
            )
        return found[0]

    def _jacobians_on_C(self) -> list:
        return [self.jacobian_at(p) for p in self.points_on_C()]

    def _solvable_choices(self, exclude: tuple = (), limit: int = 1) -> list:
        """Up to ``limit`` sorted index tuples ``dep`` (not ``exclude``), in the order of
        :attr:`dependent`'s search, with ``∂φ/∂u_dep`` invertible at every sample point of C."""
        from itertools import combinations

        mats = self._jacobians_on_C()
        out = []
        for combo in combinations(reversed(range(self.chart.dim)), self.count):
            dep = tuple(sorted(combo))
            if dep == tuple(exclude):
                continue
            if all(_numeric_rank(Jn[:, list(dep)]) == self.count for Jn in mats):
                out.append(dep)
                if len(out) == limit:
                    break
        return out

    def check_dependent(self, dependent: Sequence) -> tuple:
        """Validate a choice of dependent velocities; returns their indices (sorted).

        Raises
        ------
        UnsolvableConstraintsError
            If ``det ∂φ/∂u_dep`` vanishes at the points of C (Talamucci 2025, condition (25)); the
            message suggests another choice that works at all of them, if there is one.
        DimensionError
            If the number of dependent velocities is not k.
        """
        idx = _velocity_indices(self.chart, dependent)
        if len(idx) != self.count:
            raise DimensionError(
                f"{self.count} constraints need {self.count} dependent velocities, got {len(idx)} ({list(dependent)})."
            )
        for Jn in self._jacobians_on_C():
            if _numeric_rank(Jn[:, list(idx)]) < self.count:
                names = [self.chart.velocities[A].name for A in idx]
                other = self._solvable_choices(exclude=tuple(sorted(idx)), limit=1)
                hint = (f"Choose other dependent velocities, e.g. {[self.chart.velocities[A].name for A in other[0]]}."
                        if other else "No choice of dependent velocities works at all the sampled points of C.")
                raise UnsolvableConstraintsError(
                    f"the constraints cannot be solved for {names}: det ∂φ/∂({', '.join(names)}) vanishes on the "
                    f"constraint set. {hint}"
                )
        return tuple(sorted(idx))

    def independent_velocities(self, dependent: Sequence | None = None) -> tuple:
        """Indices of the independent velocities (the complement of ``dependent``)."""
        dep = self.dependent if dependent is None else self.check_dependent(dependent)
        return tuple(A for A in range(self.chart.dim) if A not in dep)

    def explicit_solutions(self, dependent: Sequence | None = None) -> tuple:
        """Branches ``{u_dep: α(q, u_ind, t)}`` of ``φ = 0`` that sympy solves explicitly (may be empty);
        a branch on which a :attr:`dropped` constraint does not vanish is not part of C and is left out.

        Examples
        --------
        >>> KinematicConstraints(Chart("x y z"), ["z_dot - x_dot^2 - y_dot"]).explicit_solutions()
        ({z_dot: x_dot**2 + y_dot},)
        """
        dep = self.dependent if dependent is None else self.check_dependent(dependent)
        if dep not in self._solution_cache:
            names = [self.chart.velocities[A] for A in dep]
            try:
                sols = sp.solve(list(self.expressions), names, dict=True)
            except (NotImplementedError, ValueError, TypeError):
                sols = []
            out = tuple({d: s[d] for d in names} for s in sols
                        if set(s) == set(names) and not free_symbols(s.values()) & set(names)
                        and all(vanishes(xreplace_dag(e, s)) for e in self.dropped))  # branches of C only
            self._solution_cache[dep] = out
        return self._solution_cache[dep]

    @cached_property
    def _solution_cache(self) -> dict:
        return {}

    def on_C(self, expr, dependent: Sequence | None = None) -> sp.Expr:
        """A function on C written in the independent velocities, if the constraints have exactly one
        explicit branch ``u_dep = α``; otherwise ``expr`` unchanged (valid on C as it stands)."""
        sols = self.explicit_solutions(dependent)
        if len(sols) != 1:
            return sympified(expr)
        return xreplace_dag(sympified(expr), sols[0])

    # --- rewriting --------------------------------------------------------------------------
    def point_transformation(self, new_chart: Chart, old_in_new: Mapping) -> "KinematicConstraints":
        """The same constraints in new coordinates ``q̄`` with ``q = q(q̄)`` or ``q = q(q̄, t)``.

        ``old_in_new`` maps each old coordinate to its expression in the new ones; the
        velocities transform by ``u = (∂q/∂q̄) ū + ∂q/∂t``.  (Used to test that
        homogeneity in the velocities is invariant under point transformations,
        Talamucci (2025) Remark 6, and is destroyed by time-dependent ones.)
        """
        old_q = self.chart.coordinates
        missing = [q for q in old_q if q not in old_in_new]
        if missing:
            raise DimensionError(f"old_in_new must give every old coordinate; missing {missing}.")
        sub = {q: sympified(old_in_new[q]) for q in old_q}
        for q, u in zip(old_q, self.chart.velocities):
            sub[u] = _total_derivative(new_chart, sub[q], self.time)
        return KinematicConstraints(new_chart, tuple(e.xreplace(sub) for e in self.expressions), self.time)

    def linear(self) -> LinearConstraints:
        """The same constraints as linear/affine ones ``ω^a_A(q) u^A + c^a(q) = 0`` defining the
        distribution D (:class:`~anholo.constraints.linear.LinearConstraints`), for the
        Lagrange–d'Alembert, vakonomic and consistency analyses.

        Raises
        ------
        ConstraintError
            If the constraints depend on the time (D would move; use Chetaev's treatment).
        NonlinearConstraintError
            If some constraint is not affine in the velocities.
        """
        return stationary_linear_constraints(self.chart, self.expressions, self.time)

    def __str__(self):
        return "\n".join(f"{e} = 0" for e in self.expressions)

    def as_latex(self) -> str:
        """``0 = φ_a(q, q̇)`` as a LaTeX ``aligned`` block (dotted velocity names)."""
        return "\\begin{aligned}\n" + " \\\\\n".join(f"0 &= {latex(e)}" for e in self.expressions) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"expressions": [str(e) for e in self.expressions], "rank": self.rank,
                "linear": self.is_linear, "dropped": [str(d) for d in self.dropped], "note": self.note}


def _numeric_rank(M: np.ndarray) -> int:
    if M.size == 0:
        return 0
    scale = max(1.0, float(np.max(np.abs(M))))
    return int(np.linalg.matrix_rank(M, tol=_RANK_TOL * scale))


def _total_derivative(chart: Chart, f, time=None) -> sp.Expr:
    """``(∂f/∂q) u + ∂f/∂t``."""
    f = sympified(f)
    out = sp.Add(*[f.diff(q) * u for q, u in zip(chart.coordinates, chart.velocities)])
    if time is not None:
        out += f.diff(time)
    return out


def _points_on(chart: Chart, functions: Sequence, J, symbols, count: int, seed: int) -> list:
    """Up to ``count`` real points ``{symbol: Float}`` where all ``functions`` vanish (J their Jacobian in
    the velocities): random configurations and parameters, velocities moved onto the zero set by
    minimum-norm Gauss–Newton steps ``u ← u − J⁺ φ``."""
    rng = random.Random(seed)
    u = chart.velocities
    k = len(functions)
    out = []
    for _ in range(12 * count):
        if len(out) == count:
            break
        pt = random_point(symbols, rng)
        vel = np.array([rng.uniform(0.3, 1.2) * rng.choice((-1, 1)) for _ in u])
        for _ in range(40):
            pt.update({s: sp.Float(float(x), 30) for s, x in zip(u, vel)})
            f = np.array([numeric_value(e, pt) for e in functions])
            if not np.all(np.isfinite(f)) or np.max(np.abs(f.imag)) > 1e-9:
                break
            Jn = np.array([[numeric_value(J[a, A], pt) for A in range(len(u))] for a in range(k)])
            if np.max(np.abs(f.real)) < 1e-13:
                if np.all(np.isfinite(Jn)) and np.max(np.abs(Jn.imag)) < 1e-9:
                    out.append(dict(pt))
                break
            if not np.all(np.isfinite(Jn)):
                break  # overflow (e.g. a constraint raised to a high power): try another start
            try:
                vel = vel - np.linalg.lstsq(Jn.real, f.real, rcond=None)[0]
            except np.linalg.LinAlgError:
                break
    return out


def _spurious_components(chart: Chart, kept: Sequence, dropped: Sequence, time=None, count: int = 12) -> bool:
    """True if, at some of ``count`` random points of the zero set of ``kept`` alone, a ``dropped``
    function does not vanish: the kept constraints have components besides C."""
    u = chart.velocities
    J = sp.ImmutableMatrix(len(kept), len(u), lambda a, A: sympified(kept[a]).diff(u[A]))
    symbols = (free_symbols(tuple(kept) + tuple(dropped)) - set(u)) | set(chart.coordinates) | set(chart.parameters)
    for pt in _points_on(chart, kept, J, symbols, count, 4048):
        values = [abs(numeric_value(d, pt)) for d in dropped]
        scale = max(1.0, max(abs(float(pt[w])) for w in u) ** 2)
        if any(v != v or v > 1e-8 * scale for v in values):
            return True
    return False


@dataclass(frozen=True, eq=False)
class CartesianPullback:
    """Particles' Cartesian positions ``r_s(q, t)`` and the pull-back of functions of ``(r, ṙ, t)``.

    Parameters
    ----------
    chart : Chart
        The generalized coordinates q.
    positions : mapping
        Cartesian coordinate symbol (e.g. ``x1``) → its expression in ``q`` (and ``t``).
        The Cartesian velocity of ``x1`` is the symbol ``x1_dot``.
    time : Symbol, optional

    Examples
    --------
    A particle on a plane in polar coordinates, velocity constrained to be radial
    (``ṙ ∥ r``: ``x ẏ − y ẋ = 0``):

    >>> import sympy as sp
    >>> r, th = sp.symbols("r theta", positive=True)
    >>> x, y = sp.symbols("x y", real=True)
    >>> P = CartesianPullback(Chart([r, th]), {x: r*sp.cos(th), y: r*sp.sin(th)})
    >>> sp.simplify(P.pull_back(x*sp.Symbol("y_dot", real=True) - y*sp.Symbol("x_dot", real=True)))
    r**2*theta_dot
    """

    chart: Chart
    positions: Mapping
    time: sp.Symbol = None

    def __post_init__(self):
        if not isinstance(self.chart, Chart):
            raise ArgumentError(f"CartesianPullback: the first argument must be a Chart, got {type(self.chart).__name__}.")
        if not isinstance(self.positions, Mapping):
            raise ArgumentError("CartesianPullback: positions must be a dict Cartesian coordinate -> r(q, t), e.g. "
                                f"{{'x': 'r*cos(theta)'}}, got {type(self.positions).__name__}.")
        names = {s.name: s for s in self.chart.coordinates + self.chart.velocities + self.chart.parameters}
        if self.time is not None:
            names[self.time.name] = self.time
        pos = {}
        for s, e in dict(self.positions).items():
            s = sp.Symbol(s, real=True) if isinstance(s, str) and s.isidentifier() else s
            if not isinstance(s, sp.Symbol):
                raise ArgumentError(f"CartesianPullback: the key {s!r} of positions is not a name or a Symbol.")
            e = as_expression(e, names, where=f"positions[{s.name}]")
            if e.free_symbols & set(self.chart.velocities):
                raise DimensionError(f"the position {s} = {e} depends on velocities; positions are r(q, t).")
            pos[s] = e
        object.__setattr__(self, "positions", pos)

    @cached_property
    def velocities(self) -> dict:
        """``ṙ`` symbol → ``(∂r/∂q) u + ∂r/∂t``."""
        return {velocity_symbol(s): _total_derivative(self.chart, e, self.time) for s, e in self.positions.items()}

    def pull_back(self, expr) -> sp.Expr:
        """A function of ``(r, ṙ, t)`` written in ``(q, u, t)``."""
        sub = dict(self.positions)
        sub.update(self.velocities)
        return as_argument(expr, lambda: {s.name: s for s in (*sub, *self.chart.parameters)}, where="expr").xreplace(sub)

    def constraints(self, expressions: Sequence, independent: bool = False) -> KinematicConstraints:
        """``φ(q, u, t) = ψ(r(q, t), ṙ(q, u, t), t)`` for Cartesian constraints ``ψ = 0`` (Talamucci 2025, eq. (10)).

        With ``independent=True`` a rank-deficient list is reduced (see
        :meth:`KinematicConstraints.independent`) instead of rejected.
        """
        names = {s.name: s for s in list(self.positions) + list(self.velocities)}
        names.update({p.name: p for p in self.chart.parameters})
        if self.time is not None:
            names[self.time.name] = self.time
        exprs = []
        for a, e in enumerate(as_sequence(expressions, "constraints", what="constraint expressions")):
            exprs.append(self.pull_back(as_expression(e, names, where=f"constraints[{a}]")))
        make = KinematicConstraints.independent if independent else KinematicConstraints
        return make(self.chart, tuple(exprs), self.time)

    def kinetic_energy(self, masses: Mapping) -> sp.Expr:
        """``T = ½ Σ m_c ċ²`` over the Cartesian coordinates c, with ``masses`` {c: m_c}."""
        out = sp.S.Zero
        for s, m in masses.items():
            s = sp.Symbol(s, real=True) if isinstance(s, str) else s
            out += sympified(m) * self.velocities[velocity_symbol(s)] ** 2 / 2
        return out

"""Linear and affine constraints on the velocities, the distribution D and C (docs/nonholonomic.rst).

k constraints ``φ_a(q, u) = ω^a_A(q) u^A + c^a(q) = 0`` (a = 1..k), with the
one-forms ``ω^a`` pointwise independent.  Their linear parts annihilate the
*constraint distribution* ``D = {u : ω^a(u) = 0}`` of rank ``m = n − k``; the
*constraint submanifold* ``C ⊂ TQ`` is the set of velocities that satisfy them,
an affine subbundle (a vector subbundle, D itself, when every ``c^a = 0``).

In a frame adapted to D (``X_α`` span D, ``X_a`` complete it) the constraints read
``M^a_b v^b + c^a = 0`` with ``M^a_b = ω^a(X_b)`` invertible, so
``C = {v^a = β^a(q)}``, ``β = −M^{-1} c``.  D is integrable (the constraints are
holonomic) iff ``R^a_αβ = 0`` (Frobenius).

Constraints can be given three ways:

* :meth:`LinearConstraints.from_expressions` — expressions in ``q`` and ``q_dot``
  (``"z_dot - y*x_dot"``), linear or affine in the velocities;
* :meth:`LinearConstraints.from_forms` — the rows ``ω^a_A`` (and optional ``c^a``);
* :meth:`LinearConstraints.from_distribution` — vector fields spanning D (the
  forms are then the annihilator, read off the completed frame's coframe).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from ..algebra import kernel as _kernel
from ..algebra import free_symbols, generic_rank, tidy, vanishes
from ..errors import (
    ArgumentError,
    ConstraintError,
    DependentConstraintsError,
    DimensionError,
    FrameNotAdaptedError,
    NonlinearConstraintError,
)
from ..geometry.chart import Chart
from ..parsing import as_sequence
from .reading import read_expression
from ..geometry.frame import Frame
from ..geometry.vector_field import VectorField
from ..algebra.printing import latex

__all__ = ["LinearConstraints", "stationary_linear_constraints"]


def _affine_parts_in_kernel(chart: Chart, exprs: list):
    """``φ_a = ω^a_A u^A + c^a`` read off the numerators over the field of :mod:`anholo.algebra.kernel`:
    ``(rows ω, c)``, or None when some ``φ_a`` is not visibly affine there (a denominator or a
    power of the velocities; the ``Expr`` route then decides and explains) or lies outside the kernel."""
    u = chart.velocities
    try:
        K = _kernel.DiffField(exprs, extra_symbols=u)
    except _kernel.Unsupported:
        return None
    idx = [K._index[x] for x in u]
    R = K.ring
    rows, c = [], []
    for phi in exprs:
        f = K.convert(phi)
        if any(f.denom.degree(i) > 0 for i in idx):
            return None
        parts = [dict() for _ in range(len(u) + 1)]
        for m, coeff in f.numer.iterterms():
            hit = [k for k, i in enumerate(idx) if m[i]]
            if len(hit) > 1 or (hit and m[idx[hit[0]]] > 1):
                return None
            key = hit[0] if hit else len(u)
            mm = list(m)
            if hit:
                mm[idx[hit[0]]] = 0
            parts[key][tuple(mm)] = coeff
        vals = [K.to_expr(K.field.raw_new(*_kernel.cancel(R.from_dict(d), f.denom))) if d else sp.S.Zero
                for d in parts]
        rows.append(vals[:-1])
        c.append(vals[-1])
    return rows, c


def _completed_frame(chart: Chart, rows: list) -> Frame:
    """The frame whose first vectors are ``rows`` (independent), completed by coordinate
    fields ``∂/∂q^A`` (the last possible ones), with ``rank_D = len(rows)``."""
    n, m = chart.dim, len(rows)
    completion = []
    for A in reversed(range(n)):
        if len(completion) == n - m:
            break
        unit = [sp.S.One if B == A else sp.S.Zero for B in range(n)]
        if generic_rank(sp.Matrix(list(rows) + completion + [unit])) == m + len(completion) + 1:
            completion.append(unit)
    return Frame(chart, list(rows) + completion[::-1], rank_D=m)


@dataclass(frozen=True, eq=False)
class LinearConstraints:
    """Constraints ``φ_a = ω^a_A(q) u^A + c^a(q) = 0``, linear or affine in the velocities.

    Parameters
    ----------
    chart : Chart
    forms : matrix (k × n)
        Row a holds ``ω^a_A``.
    inhomogeneous : sequence of k expressions in q, optional
        ``c^a(q)``; zero (linear constraints) by default.
    expressions : sequence of k expressions, optional
        The constraints as the user wrote them (functions of q and ``q_dot``);
        default ``ω^a_A u^A + c^a``.  Multipliers "for the constraints as written"
        refer to these.
    distribution : sequence of VectorField, optional
        Fields spanning D, if D was given that way (they become the first vectors
        of the adapted frame).

    Raises
    ------
    DependentConstraintsError
        If the forms are linearly dependent.
    ConstraintError
        If a form vanishes identically (a constraint free of velocities).

    Examples
    --------
    >>> C = LinearConstraints.from_expressions(Chart("x y z"), ["z_dot - y*x_dot"])
    >>> C.forms
    Matrix([[-y, 0, 1]])
    >>> C.rank_D, C.is_affine
    (2, False)
    """

    chart: Chart
    forms: sp.ImmutableMatrix
    inhomogeneous: tuple = None
    expressions: tuple = None
    distribution: tuple = None

    def __post_init__(self):
        if not isinstance(self.chart, Chart):
            raise ArgumentError(f"LinearConstraints: the first argument must be a Chart, got "
                                f"{type(self.chart).__name__}.")
        n = self.chart.dim
        rows = self.forms.tolist() if isinstance(self.forms, sp.MatrixBase) else [
            list(as_sequence(r, f"forms[{a}]", what="components"))
            for a, r in enumerate(as_sequence(self.forms, "forms", what="rows of components"))]
        if any(len(r) != n for r in rows):
            raise DimensionError(
                f"constraint forms need {n} components each (one per coordinate), got rows of lengths "
                f"{[len(r) for r in rows]}."
            )
        k = len(rows)
        if k >= n:
            raise DependentConstraintsError(
                f"{k} constraints on a {n}-dimensional configuration space leave no motion (D would have "
                f"rank {n - k}); give at most {n - 1} independent constraints."
            )
        forms = sp.ImmutableMatrix(k, n, [read_expression(self.chart, e, f"forms[{a}][{A}]") for a, r in enumerate(rows)
                                          for A, e in enumerate(r)]) if k else sp.ImmutableMatrix(0, n, [])
        if forms.free_symbols & set(self.chart.velocities):
            raise NonlinearConstraintError(
                "constraint one-forms must not depend on the velocities; a constraint that is not "
                "linear in the velocities does not define a distribution."
            )
        try:  # zero rows and rank in one field of the kernel
            K = _kernel.DiffField(list(forms))
            rows_k = _kernel.matrix(K, forms)
            zero_rows = [a for a in range(k) if all(K.is_zero(e) for e in rows_k[a])]
            rank = None if zero_rows else _kernel.rank(K, rows_k)
        except _kernel.Unsupported:
            zero_rows = [a for a in range(k) if all(vanishes(e) for e in forms.row(a))]
            rank = None
        for a in zero_rows[:1]:
            raise ConstraintError(
                f"constraint {a} has no velocity terms (its one-form vanishes): a position-level "
                "(holonomic) constraint is not a kinematic one; eliminate a coordinate instead, or give "
                "its time derivative."
            )
        rank = generic_rank(forms) if rank is None else rank
        if rank < k:
            raise DependentConstraintsError(
                f"the {k} constraints are linearly dependent in the velocities (rank {rank} < {k}); "
                "remove the redundant ones."
            )
        given = (0,) * k if self.inhomogeneous is None else as_sequence(self.inhomogeneous, "inhomogeneous")
        c = tuple(read_expression(self.chart, e, f"inhomogeneous[{a}]") for a, e in enumerate(given or (0,) * k))
        if len(c) != k:
            raise DimensionError(f"need {k} inhomogeneous terms c^a, got {len(c)}.")
        if free_symbols(c) & set(self.chart.velocities):
            raise NonlinearConstraintError("the inhomogeneous terms c^a(q) must not depend on the velocities.")
        u = self.chart.velocities
        exprs = self.expressions
        if exprs is None:
            exprs = tuple(
                sp.Add(*[forms[a, A] * u[A] for A in range(n) if forms[a, A] != 0]) + c[a] for a in range(k)
            )
        exprs = tuple(read_expression(self.chart, e, f"expressions[{a}]")
                      for a, e in enumerate(as_sequence(exprs, "expressions")))
        if len(exprs) != k:
            raise DimensionError(f"need {k} constraint expressions, got {len(exprs)}.")
        object.__setattr__(self, "forms", forms)
        object.__setattr__(self, "inhomogeneous", c)
        object.__setattr__(self, "expressions", exprs)
        if self.distribution is not None:
            object.__setattr__(self, "distribution", tuple(self.distribution))

    # --- constructors ------------------------------------------------------------------
    @classmethod
    def from_expressions(cls, chart: Chart | Sequence, expressions: Sequence) -> "LinearConstraints":
        """Constraints written as expressions ``φ_a(q, q_dot)`` that vanish, linear or affine in ``q_dot``.

        Strings are parsed safely with the chart's names (coordinates, ``q_dot``
        velocities, parameters).

        Raises
        ------
        NonlinearConstraintError
            If some ``φ_a`` is not affine in the velocities (a nonzero second derivative).
        ConstraintError
            If some ``φ_a`` contains no velocity (a holonomic constraint).
        """
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        u = chart.velocities
        exprs = [read_expression(chart, e, f"constraints[{a}]")
                 for a, e in enumerate(as_sequence(expressions, "constraints", what="constraint expressions"))]
        split = _affine_parts_in_kernel(chart, exprs)
        if split is not None:
            rows, c = split
            return cls(chart, sp.ImmutableMatrix(rows) if rows else sp.ImmutableMatrix(0, chart.dim, []),
                       tuple(c), tuple(exprs))
        rows, c = [], []
        for a, phi in enumerate(exprs):
            grad = [phi.diff(ui) for ui in u]
            for A, gA in enumerate(grad):
                if free_symbols([gA]) & set(u) and not all(vanishes(gA.diff(uj)) for uj in u):
                    raise NonlinearConstraintError(
                        f"constraint {a} ({phi} = 0) is not linear in the velocities: its derivative by "
                        f"{u[A]} is {gA}. Lagrange–d'Alembert dynamics needs linear (or affine) constraints; "
                        "use the Chetaev treatment for nonlinear ones."
                    )
            grad = [tidy(g) if free_symbols([g]) & set(u) else g for g in grad]
            rest = tidy(phi - sp.Add(*[g * ui for g, ui in zip(grad, u)]))
            rows.append(grad)
            c.append(rest)
        return cls(chart, sp.ImmutableMatrix(rows) if rows else sp.ImmutableMatrix(0, chart.dim, []),
                   tuple(c), tuple(exprs))

    @classmethod
    def from_forms(cls, chart: Chart | Sequence, forms, inhomogeneous: Sequence | None = None) -> "LinearConstraints":
        """Constraints ``ω^a(u) + c^a = 0`` from the rows ``ω^a_A`` (and optional ``c^a(q)``)."""
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        return cls(chart, forms, inhomogeneous)

    @classmethod
    def from_distribution(cls, chart: Chart | Sequence, fields: Sequence) -> "LinearConstraints":
        """Linear constraints whose distribution D is spanned by the given vector fields.

        The fields (VectorFields or component rows) are completed to a frame by
        coordinate fields (the last possible ones); the constraint forms are the
        last ``k = n − m`` coframe rows, which annihilate D.  The given fields
        remain the first vectors of :meth:`adapted_frame`.
        """
        chart = chart if isinstance(chart, Chart) else Chart(chart)
        n = chart.dim
        rows = [f.components if isinstance(f, VectorField) else
                tuple(read_expression(chart, e, f"fields[{i}][{A}]") for A, e in enumerate(as_sequence(f, f"fields[{i}]")))
                for i, f in enumerate(as_sequence(fields, "fields", what="vector fields"))]
        if any(len(r) != n for r in rows):
            raise DimensionError(f"each field spanning D needs {n} components, got {[len(r) for r in rows]}.")
        m = len(rows)
        if m == 0 or generic_rank(sp.Matrix(rows)) < m:
            raise DependentConstraintsError(
                f"the {m} fields given to span D are not linearly independent; give a basis of D."
            )
        frame = _completed_frame(chart, rows)
        forms = frame.coframe[m:, :]
        return cls(chart, forms, distribution=tuple(VectorField(chart, r) for r in rows))

    # --- basic data ------------------------------------------------------------------------
    @property
    def count(self) -> int:
        """k, the number of constraints."""
        return self.forms.rows

    @property
    def rank_D(self) -> int:
        """m = n − k, the rank of the distribution D."""
        return self.chart.dim - self.count

    @property
    def is_affine(self) -> bool:
        """True if some inhomogeneous term ``c^a`` is not identically zero."""
        return any(not vanishes(c) for c in self.inhomogeneous)

    def form_values(self, frame: Frame) -> sp.Matrix:
        """``κ^a_i = ω^a(X_i)``: the constraints' linear parts in the quasi-velocities of ``frame``."""
        if frame.chart != self.chart:
            raise DimensionError("the frame lives on another chart.")
        try:
            K = _kernel.DiffField(list(self.forms) + list(frame.vectors))
            prod = _kernel.matmul(K, _kernel.matrix(K, self.forms), _kernel.transpose(_kernel.matrix(K, frame.vectors)))
            return sp.Matrix(_kernel.to_matrix(K, prod, self.count, self.chart.dim))
        except _kernel.Unsupported:
            pass
        return (sp.Matrix(self.forms) * frame.vectors.T).applyfunc(tidy)

    def is_adapted(self, frame: Frame) -> bool:
        """True if the first ``m`` vectors of ``frame`` lie in D (so they span it)."""
        kappa = self.form_values(frame)
        return all(vanishes(kappa[a, al]) for a in range(self.count) for al in range(self.rank_D))

    def adapted_frame(self, base: Frame | None = None, dependent: Sequence | None = None) -> Frame:
        """A frame adapted to D (first m vectors span D), with ``rank_D = m``.

        * If ``base`` is given and already adapted (its first m vectors lie in D), it is used as is.
        * Else, if D was given by spanning fields and no base is given, those fields come first.
        * Else the frame is built from ``base`` (default: the coordinate frame) by
          :meth:`Frame.adapted_to_constraints` — the constraints are solved for
          ``dependent`` base quasi-velocities (chosen automatically if not given).
        """
        if base is not None and dependent is None:
            try:  # built in the kernel, which also notices a base that is adapted already
                return Frame.adapted_to_constraints(self.chart, self.forms, base=base, keep_adapted_base=True)
            except _kernel.Unsupported:
                pass
            if self.is_adapted(base):
                return base if base.rank_D == self.rank_D else base.with_rank_D(self.rank_D)
        if base is None and dependent is None and self.distribution is not None:
            return _completed_frame(self.chart, [f.components for f in self.distribution])
        return Frame.adapted_to_constraints(self.chart, self.forms, dependent=dependent, base=base)

    def check_adapted(self, frame: Frame) -> None:
        """Raise :class:`FrameNotAdaptedError` unless the first m vectors of ``frame`` lie in D."""
        kappa = self.form_values(frame)
        bad = [
            (al, a)
            for al in range(self.rank_D)
            for a in range(self.count)
            if not vanishes(kappa[a, al])
        ]
        if bad:
            al, a = bad[0]
            raise FrameNotAdaptedError(
                f"the frame is not adapted to the constraints: X{al + 1} violates constraint {a} "
                f"(ω({'X'}{al + 1}) = {kappa[a, al]}). Put {self.rank_D} vectors spanning D first, or let "
                "anholo build an adapted frame (LinearConstraints.adapted_frame)."
            )

    def __str__(self):
        return "\n".join(f"{e} = 0" for e in self.expressions)

    def _repr_latex_(self):
        rows = [f"{latex(e)} &= 0" for e in self.expressions]
        return "$\\begin{aligned}" + " \\\\ ".join(rows) + "\\end{aligned}$"

    def to_dict(self) -> dict:
        return {
            "expressions": [str(e) for e in self.expressions],
            "forms": [[str(e) for e in self.forms.row(a)] for a in range(self.count)],
            "inhomogeneous": [str(c) for c in self.inhomogeneous],
            "rank_D": self.rank_D,
        }


def stationary_linear_constraints(chart: Chart, expressions: Sequence, time=None) -> LinearConstraints:
    """Kinematic constraints ``φ(q, u, t) = 0`` read as linear/affine ones defining a distribution D.

    The one place where a kinematic constraint is recognised as linear: it must not
    depend on the time (D would move) and must be affine in the velocities
    (:meth:`LinearConstraints.from_expressions`).

    Raises
    ------
    ConstraintError
        If a constraint depends on ``time``.
    NonlinearConstraintError
        If a constraint is not affine in the velocities.
    """
    expressions = as_sequence(expressions, "constraints", what="constraint expressions")
    if time is not None and any(time in read_expression(chart, e, f"constraints[{a}]").free_symbols
                                for a, e in enumerate(expressions) if not isinstance(e, str)):
        raise ConstraintError(
            f"the constraints depend on the time {time}; the Lagrange–d'Alembert field in an "
            "adapted frame needs time-independent constraints. Use the Chetaev treatment "
            "(System.chetaev(), which `anholo analyze` uses for such systems)."
        )
    return LinearConstraints.from_expressions(chart, expressions)

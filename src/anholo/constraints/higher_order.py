"""Higher-order (acceleration) constraints ``h^ν(q, q̇, q̈, t) = 0`` (docs/chetaev.rst; Talamucci (2025) eq. (30)).

The accelerations are written ``x_ddot`` in strings (real symbols ``<q>_ddot``).  Only
the model of the constraints lives here; the dynamics with Chetaev's rule extended to
second order (virtual displacements ``∂h^ν/∂q̈^A δq^A = 0``) is
:class:`anholo.dynamics.higher_order.HigherOrderChetaevSystem`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ..algebra import free_symbols, generic_rank, vanishes
from ..errors import ConstraintError, DimensionError, NonlinearConstraintError
from ..geometry.chart import Chart
from ..parsing import as_expression, as_sequence

__all__ = ["HigherOrderConstraints", "acceleration_symbols"]


def acceleration_symbols(chart: Chart) -> tuple:
    """The natural accelerations ``q_ddot`` (real symbols named ``<q>_ddot``)."""
    return tuple(sp.Symbol(f"{q.name}_ddot", real=True) for q in chart.coordinates)


@dataclass(frozen=True, eq=False)
class HigherOrderConstraints:
    """Constraints ``h^ν(q, q̇, q̈, t) = 0`` affine in the accelerations: ``h = Ψ(q, q̇, t) q̈ + ψ₀(q, q̇, t)``.

    Parameters
    ----------
    chart : Chart
    expressions : sequence of expressions or strings (``x_ddot`` for accelerations)
    time : Symbol, optional

    Raises
    ------
    ConstraintError
        If some ``h^ν`` contains no acceleration (give it as a kinematic constraint).
    NonlinearConstraintError
        If some ``h^ν`` is not affine in the accelerations (not treated here).
    DimensionError
        If ``Ψ`` has rank < k (dependent constraints) or k ≥ n.

    Examples
    --------
    >>> H = HigherOrderConstraints(Chart("x y"), ["x_ddot - y*y_ddot"])
    >>> H.jacobian
    Matrix([[1, -y]])
    """

    chart: Chart
    expressions: tuple
    time: sp.Symbol = None

    def __post_init__(self):
        chart = self.chart if isinstance(self.chart, Chart) else Chart(self.chart)
        object.__setattr__(self, "chart", chart)
        acc = acceleration_symbols(chart)
        names = {s.name: s for s in chart.coordinates + chart.velocities + chart.parameters + acc}
        if self.time is not None:
            names[self.time.name] = self.time
        exprs = tuple(as_expression(e, names, where=f"constraints[{a}]")
                      for a, e in enumerate(as_sequence(self.expressions, "constraints", what="constraint expressions")))
        object.__setattr__(self, "expressions", exprs)
        k, n = len(exprs), chart.dim
        if k == 0:
            raise ConstraintError("no constraints given.")
        if k >= n:
            raise DimensionError(f"{k} acceleration constraints on a {n}-dimensional configuration space leave no "
                                 f"motion; give at most {n - 1}.")
        for a, h in enumerate(exprs):
            if not h.free_symbols & set(acc):
                raise ConstraintError(f"constraint {a} ({h} = 0) contains no accelerations (q_ddot): it is a "
                                      "kinematic constraint; use KinematicConstraints / ChetaevSystem for it.")
            if any(not vanishes(h.diff(x, y)) for x in acc for y in acc if h.has(x) and h.has(y)):
                raise NonlinearConstraintError(
                    f"constraint {a} ({h} = 0) is not affine in the accelerations; only h = Ψ(q, q̇, t) q̈ + ψ₀ "
                    "is treated (the motion is then a vector field on TQ)."
                )
        if generic_rank(self.jacobian) < k:
            raise DimensionError("the constraints are dependent: rank ∂h/∂q̈ < k. Drop the dependent ones.")

    @property
    def accelerations(self) -> tuple:
        return acceleration_symbols(self.chart)

    @property
    def count(self) -> int:
        return len(self.expressions)

    @cached_property
    def jacobian(self) -> sp.ImmutableMatrix:
        """``Ψ = ∂h/∂q̈`` (k × n): also the rows of the Chetaev virtual displacements (Talamucci (2025) eq. (30))."""
        return sp.ImmutableMatrix([[h.diff(a) for a in self.accelerations] for h in self.expressions])

    @cached_property
    def remainder(self) -> tuple:
        """``ψ₀ = h|_{q̈=0}``."""
        zero = {a: 0 for a in self.accelerations}
        return tuple(h.xreplace(zero) for h in self.expressions)

    def symbols(self) -> set:
        return free_symbols(self.expressions)

    def __str__(self):
        return "\n".join(f"{h} = 0" for h in self.expressions)

    def to_dict(self) -> dict:
        return {"expressions": [str(h) for h in self.expressions]}

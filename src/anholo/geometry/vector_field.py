"""Vector fields on Q in coordinate components (docs/theory.rst, Frames on Q).

``X = X^A(q) ∂/∂q^A`` acts on functions by ``X(f) = X^A ∂f/∂q^A``; the Lie
bracket is ``[X, Y]^A = X(Y^A) − Y(X^A)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from ..errors import ArgumentError
from ..parsing import as_argument, as_expression, as_sequence, chart_names
from ..algebra.differentiation import diff_dag

from ..algebra import vanishes
from ..algebra.printing import latex
from ..errors import DimensionError

__all__ = ["VectorField"]


@dataclass(frozen=True)
class VectorField:
    """A vector field ``X = X^A ∂/∂q^A`` on the chart's domain.

    Immutable; supports ``X + Y``, ``X - Y``, ``f * X`` (f a function on Q),
    ``X(f)`` (derivative of f along X) and :meth:`bracket`.

    Examples
    --------
    >>> from anholo import Chart
    >>> c = Chart("x y")
    >>> x, y = c.coordinates
    >>> X = VectorField(c, (1, 0)); Y = VectorField(c, (0, x))
    >>> X.bracket(Y).components
    (0, 1)
    """

    chart: object  # the Chart (anholo.geometry.chart, which imports this module for its coordinate fields)
    components: tuple

    def __post_init__(self):
        if not hasattr(self.chart, "coordinates"):
            raise ArgumentError(f"VectorField: the first argument must be a Chart, got {type(self.chart).__name__}.")
        names = chart_names(self.chart)
        comps = tuple(as_expression(c, names, where=f"components[{A}]") for A, c in
                      enumerate(as_sequence(self.components, "components", what="components")))
        if len(comps) != self.chart.dim:
            raise DimensionError(
                f"a vector field on a {self.chart.dim}-dimensional chart needs {self.chart.dim} "
                f"components, got {len(comps)}."
            )
        object.__setattr__(self, "components", comps)

    def __call__(self, f) -> sp.Expr:
        """``X(f) = X^A ∂f/∂q^A`` (other symbols in f, e.g. velocities, are held fixed)."""
        f = as_argument(f, lambda: chart_names(self.chart), where="f")
        terms = ((c, diff_dag(f, q)) for c, q in zip(self.components, self.chart.coordinates) if c != 0)
        return sp.Add(*[c * d for c, d in terms if d != 0])  # over the DAG; zero derivatives skipped

    def bracket(self, other: "VectorField") -> "VectorField":
        """Lie bracket ``[X, Y]^A = X(Y^A) − Y(X^A)``."""
        self._check(other)
        return VectorField(
            self.chart, tuple(self(b) - other(a) for a, b in zip(self.components, other.components))
        )

    def _check(self, other):
        if not isinstance(other, VectorField) or other.chart != self.chart:
            raise DimensionError("vector fields must live on the same chart.")

    def __add__(self, other):
        self._check(other)
        return VectorField(self.chart, tuple(a + b for a, b in zip(self.components, other.components)))

    def __sub__(self, other):
        self._check(other)
        return VectorField(self.chart, tuple(a - b for a, b in zip(self.components, other.components)))

    def __neg__(self):
        return VectorField(self.chart, tuple(-a for a in self.components))

    def __rmul__(self, f):
        f = as_argument(f, lambda: chart_names(self.chart), where="factor")
        return VectorField(self.chart, tuple(f * a for a in self.components))

    __mul__ = __rmul__

    def is_zero(self) -> bool:
        """True if every component vanishes identically (cancel, or numerically at random points)."""
        return all(vanishes(c) for c in self.components)

    def __str__(self):
        terms = [
            f"({c})*d/d{q}" for c, q in zip(self.components, self.chart.coordinates) if c != 0
        ]
        return " + ".join(terms) if terms else "0"

    def _repr_latex_(self):
        terms = [
            rf"\left({latex(c)}\right)\frac{{\partial}}{{\partial {latex(q)}}}"
            for c, q in zip(self.components, self.chart.coordinates)
            if c != 0
        ]
        return "$" + (" + ".join(terms) if terms else "0") + "$"

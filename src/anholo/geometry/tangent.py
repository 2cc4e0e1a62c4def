"""The tangent bundle TQ in the Hamel chart ``(q^A, v^i)`` (docs/theory.rst, The tangent bundle in a frame; docs/theory.rst, Lagrangian dynamics in a frame).

Quasi-velocities of a frame are ``v^i = θ^i_A(q) u^A``, so ``u^A = X_i^A v^i``.
All vector fields on TQ are stored by their components in the Hamel chart's
coordinate basis ``{∂/∂q^A (v fixed), ∂/∂v^i}`` (plus optional extra fibre
coordinates, e.g. multipliers λ of the vakonomic problem), and can be read in
the lifted frame ``{X_i^C, X_i^V}``:

* vertical lift ``X_i^V = ∂/∂v^i``;
* complete lift ``X_i^C = X_i^A ∂/∂q^A − R^k_ij v^j ∂/∂v^k``;
* for ``Y = Y^i X_i``: ``Y^V = Y^i X_i^V``, ``Y^C = Y^i X_i^C + Ẏ^i X_i^V``;
* dual coframe ``{θ^i, ψ^i}``, ``ψ^i = dv^i + R^i_jk v^k θ^j``;
* Liouville field ``Δ = v^i ∂/∂v^i``;
* a second-order field (SODE) ``Γ = v^i X_i^C + Γ^i X_i^V``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping, Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import vanishes, xreplace_dag
from ..errors import ArgumentError, DimensionError
from ..parsing import as_argument, as_expression, as_sequence, chart_names
from ..algebra.printing import EquationDisplay
from .forms import Form
from .frame import Frame
from .vector_field import VectorField

__all__ = ["TangentBundle", "TangentField", "SecondOrderField"]


def _symbols(names, default_prefix: str, n: int) -> tuple:
    if names is None:
        return tuple(sp.Symbol(f"{default_prefix}{i + 1}", real=True) for i in range(n))
    if isinstance(names, str):
        names = names.replace(",", " ").split()
    if isinstance(names, sp.Basic) or not hasattr(names, "__iter__"):
        raise ArgumentError(f"{default_prefix}: expected a list of names or symbols, got {type(names).__name__}.")
    out = tuple(sp.Symbol(s, real=True) if isinstance(s, str) else s for s in names)
    bad = [s for s in out if not isinstance(s, sp.Symbol)]
    if bad:
        raise ArgumentError(f"{default_prefix}: expected names or sympy Symbols, got {bad[0]!r} "
                            f"({type(bad[0]).__name__}).")
    if len(out) != n:
        raise DimensionError(f"expected {n} symbols for {default_prefix}, got {len(out)}.")
    return out


def _bundle_names(bundle) -> dict:
    """name -> symbol for the coordinates of the Hamel chart (q, q_dot, parameters, v, extra)."""
    return chart_names(bundle.chart, bundle.quasi_velocities, bundle.extra)


@dataclass(frozen=True, eq=False)
class TangentBundle:
    """TQ (optionally fibred with extra coordinates) in the Hamel chart of a frame.

    Parameters
    ----------
    frame : Frame
        The frame whose quasi-velocities are the fibre coordinates.
    quasi_velocities : sequence of Symbol or str, optional
        Names of ``v^i``; default ``v1..vn``.
    extra : sequence of Symbol or str, optional
        Further coordinates with no dynamics of their own (e.g. the multipliers
        ``λ_a`` of the vakonomic problem on ``D° ×_Q TQ``).  They commute with
        all lifts; their coordinate fields ``∂/∂λ`` complete the frame.

    Examples
    --------
    >>> from anholo import Frame, Chart
    >>> TQ = TangentBundle(Frame.coordinate(Chart("x y")))
    >>> TQ.quasi_velocities
    (v1, v2)
    """

    frame: Frame
    quasi_velocities: tuple = None
    extra: tuple = ()

    def __post_init__(self):
        if not isinstance(self.frame, Frame):
            from .chart import Chart

            hint = ("TangentBundle(Frame.coordinate(chart))" if isinstance(self.frame, Chart)
                    else "TangentBundle(Frame(chart, rows)) or TangentBundle(Frame.coordinate(chart))")
            raise ArgumentError(f"TangentBundle: the first argument must be a Frame, got "
                                f"{type(self.frame).__name__}; write {hint}.")
        n = self.frame.dim
        v = _symbols(self.quasi_velocities, "v", n)
        extra = _symbols(self.extra, "extra", len(self.extra)) if self.extra else ()
        object.__setattr__(self, "quasi_velocities", v)
        object.__setattr__(self, "extra", extra)
        taken = set(self.chart.coordinates) | set(self.chart.velocities) | set(self.chart.parameters)
        clash = (set(v) | set(extra)) & taken
        if clash or len(set(v) | set(extra)) != len(v) + len(extra):
            raise DimensionError(
                f"quasi-velocity/extra symbols clash with chart symbols: {sorted(s.name for s in clash)}; "
                "pass other names via quasi_velocities=..."
            )

    # --- coordinates -----------------------------------------------------------------
    @property
    def chart(self):
        return self.frame.chart

    @property
    def dim(self) -> int:
        """n, the dimension of Q."""
        return self.frame.dim

    @property
    def coordinates(self) -> tuple:
        """All coordinates of the Hamel chart: ``(q, v, extra)``."""
        return self.chart.coordinates + self.quasi_velocities + self.extra

    @property
    def size(self) -> int:
        """Dimension of the total space (2n + number of extra coordinates)."""
        return 2 * self.dim + len(self.extra)

    @cached_property
    def quasi_velocity_rates(self) -> tuple:
        """Symbols ``v1_dot, …`` standing for ``dv^i/dt`` in Hamel's equations."""
        return tuple(sp.Symbol(f"{v.name}_dot", real=True) for v in self.quasi_velocities)

    # --- conversions -------------------------------------------------------------------
    @cached_property
    def _u_in_v(self) -> dict:
        X = self.frame.vectors
        v = self.quasi_velocities
        return {
            u: sp.Add(*[X[i, A] * v[i] for i in range(self.dim) if X[i, A] != 0])
            for A, u in enumerate(self.chart.velocities)
        }

    @cached_property
    def _v_in_u(self) -> dict:
        th = self.frame.coframe
        u = self.chart.velocities
        return {
            v: sp.Add(*[th[i, A] * u[A] for A in range(self.dim) if th[i, A] != 0])
            for i, v in enumerate(self.quasi_velocities)
        }

    def to_quasi(self, expr):
        """Rewrite an expression in natural velocities ``u^A`` in quasi-velocities: ``u = X v``."""
        return xreplace_dag(expr, self._u_in_v)

    def to_natural(self, expr):
        """Rewrite an expression in quasi-velocities in natural ones: ``v^i = θ^i_A u^A``."""
        return xreplace_dag(expr, self._v_in_u)

    def quasi_velocities_of(self, u: Sequence) -> tuple:
        """Quasi-velocity values ``v^i = θ^i_A u^A`` of natural velocities ``u``."""
        if len(u) != self.dim:
            raise DimensionError(f"need {self.dim} velocity components, got {len(u)}.")
        return tuple(self.frame.coframe * sp.Matrix([sympified(x) for x in u]))

    def natural_velocities_of(self, v: Sequence) -> tuple:
        """Natural velocity values ``u^A = X_i^A v^i`` of quasi-velocities ``v``."""
        if len(v) != self.dim:
            raise DimensionError(f"need {self.dim} quasi-velocity components, got {len(v)}.")
        return tuple(self.frame.vectors.T * sp.Matrix([sympified(x) for x in v]))

    def total_derivative(self, f) -> sp.Expr:
        """``ḟ = v^i X_i(f)`` for a function f on Q (docs/theory.rst, The tangent bundle in a frame)."""
        return sp.Add(*[v * self.frame.apply(i, f) for i, v in enumerate(self.quasi_velocities)])

    # --- structure of the lifted frame -------------------------------------------------
    @cached_property
    def _R(self):
        return self.frame.structure

    @cached_property
    def _R_dot(self) -> tuple:
        """``Ṙ^k_ij = v^l X_l(R^k_ij)``."""
        n = self.dim
        return tuple(
            tuple(tuple(self.total_derivative(self._R[k][i][j]) if self._R[k][i][j] != 0 else sp.S.Zero
                        for j in range(n)) for i in range(n))
            for k in range(n)
        )

    def _rv(self, k: int, i: int) -> sp.Expr:
        """``R^k_ij v^j``."""
        R = self._R
        return sp.Add(*[R[k][i][j] * vj for j, vj in enumerate(self.quasi_velocities) if R[k][i][j] != 0])

    # --- fields on TQ ----------------------------------------------------------------
    def field(self, components: Sequence) -> "TangentField":
        """A field from Hamel-chart components ``(∂/∂q^A …, ∂/∂v^i …, ∂/∂extra …)``."""
        return TangentField(self, tuple(components))

    def field_from_frame(self, A: Sequence, B: Sequence, extra: Sequence = ()) -> "TangentField":
        """The field ``A^i X_i^C + B^i X_i^V + c_r ∂/∂extra_r``."""
        n = self.dim
        if len(A) != n or len(B) != n:
            raise DimensionError(f"need {n} components for A and for B.")
        extra = tuple(extra) or (sp.S.Zero,) * len(self.extra)
        X = self.frame.vectors
        a = [sp.Add(*[X[i, C] * A[i] for i in range(n)]) for C in range(n)]
        b = [B[k] - sp.Add(*[A[i] * self._rv(k, i) for i in range(n) if A[i] != 0]) for k in range(n)]
        return TangentField(self, tuple(a) + tuple(b) + tuple(extra))

    def vertical_lift(self, Y: VectorField | int) -> "TangentField":
        """``Y^V = Y^i X_i^V = Y^i ∂/∂v^i`` (an int i means the frame vector ``X_i``)."""
        Yc = self._frame_components(Y)
        zero = (sp.S.Zero,) * self.dim
        return self.field_from_frame(zero, Yc)

    def complete_lift(self, Y: VectorField | int) -> "TangentField":
        """``Y^C = Y^i X_i^C + Ẏ^i X_i^V`` with ``Ẏ^i = v^j X_j(Y^i)`` (an int i means ``X_i``)."""
        Yc = self._frame_components(Y)
        return self.field_from_frame(Yc, tuple(self.total_derivative(c) for c in Yc))

    def _frame_components(self, Y) -> tuple:
        if isinstance(Y, int):
            self.frame._idx(Y)
            return tuple(sp.S.One if j == Y else sp.S.Zero for j in range(self.dim))
        if not isinstance(Y, VectorField):
            raise DimensionError(f"expected a VectorField on Q or a frame index, got {type(Y).__name__}.")
        return self.frame.components_of(Y)

    def liouville(self) -> "TangentField":
        """The Liouville field ``Δ = v^i ∂/∂v^i``."""
        zero = (sp.S.Zero,) * self.dim
        return TangentField(self, zero + self.quasi_velocities + (sp.S.Zero,) * len(self.extra))

    def second_order_field(self, accelerations: Sequence, extra_rates: Sequence = ()) -> "SecondOrderField":
        """The SODE ``Γ = v^i X_i^C + Γ^i X_i^V`` (Hamel chart: ``v^i X_i^A ∂_A + Γ^i ∂/∂v^i``)."""
        return SecondOrderField(self, tuple(accelerations), tuple(extra_rates))

    # --- basis protocol for differential forms on TQ -------------------------------------
    @property
    def basis_size(self) -> int:
        return self.size

    def basis_derivative(self, a: int, f) -> sp.Expr:
        """Action of the a-th field of ``{X_i^C, X_i^V, ∂/∂extra}`` on f."""
        n = self.dim
        f = as_argument(f, lambda: _bundle_names(self), where="f")
        if a < n:
            v = self.quasi_velocities
            out = self.frame.apply(a, f)
            for k in range(n):
                rv = self._rv(k, a)
                if rv != 0:
                    out -= rv * f.diff(v[k])
            return out
        if a < 2 * n:
            return f.diff(self.quasi_velocities[a - n])
        return f.diff(self.extra[a - 2 * n])

    def basis_structure(self, c: int, a: int, b: int) -> sp.Expr:
        """``C^c_ab`` of the lifted frame: ``[X_i^C, X_j^C] = R^k_ij X_k^C + Ṙ^k_ij X_k^V``,
        ``[X_i^C, X_j^V] = R^k_ij X_k^V``, ``[X^V, X^V] = 0``, extra coordinates commute."""
        n = self.dim
        if max(a, b, c) >= 2 * n:
            return sp.S.Zero
        if a < n and b < n:
            return self._R[c][a][b] if c < n else self._R_dot[c - n][a][b]
        if c < n:
            return sp.S.Zero
        if a < n <= b:
            return self._R[c - n][a][b - n]
        if b < n <= a:
            return -self._R[c - n][b][a - n]
        return sp.S.Zero

    def basis_labels(self) -> tuple:
        n = self.dim
        return (
            tuple(f"theta{i + 1}" for i in range(n))
            + tuple(f"psi{i + 1}" for i in range(n))
            + tuple(f"d{s.name}" for s in self.extra)
        )

    def coframe_forms(self):
        """The lifted coframe ``(θ^1..θ^n, ψ^1..ψ^n, dλ…)`` as 1-forms on TQ."""
        return tuple(Form.basis_one_form(self, a) for a in range(self.size))


@dataclass(frozen=True, eq=False)
class TangentField:
    """A vector field on TQ, by components in the Hamel chart's coordinate basis.

    ``components`` lists the coefficients of ``∂/∂q^A`` (v fixed), then of
    ``∂/∂v^i``, then of the extra coordinates.  ``Y(f)`` differentiates f.
    """

    bundle: TangentBundle
    components: tuple

    def __post_init__(self):
        if not isinstance(self.bundle, TangentBundle):
            raise ArgumentError(f"TangentField: the first argument must be a TangentBundle, got "
                                f"{type(self.bundle).__name__}.")
        names = _bundle_names(self.bundle)
        comps = tuple(as_expression(c, names, where=f"components[{a}]") for a, c in
                      enumerate(as_sequence(self.components, "components", what="components")))
        if len(comps) != self.bundle.size:
            raise DimensionError(f"a field on this bundle needs {self.bundle.size} components, got {len(comps)}.")
        object.__setattr__(self, "components", comps)

    def __call__(self, f) -> sp.Expr:
        f = as_argument(f, lambda: _bundle_names(self.bundle), where="f")
        return sp.Add(*[c * f.diff(x) for c, x in zip(self.components, self.bundle.coordinates) if c != 0])

    def bracket(self, other: "TangentField") -> "TangentField":
        """Lie bracket, computed in the Hamel chart's coordinates."""
        return TangentField(
            self.bundle, tuple(self(b) - other(a) for a, b in zip(self.components, other.components))
        )

    def frame_components(self) -> tuple[tuple, tuple, tuple]:
        """``(A, B, extra)`` with ``Y = A^i X_i^C + B^i X_i^V + extra_r ∂/∂extra_r``:
        ``A^i = θ^i_A a^A``, ``B^k = b^k + R^k_ij A^i v^j``."""
        n = self.bundle.dim
        a = sp.Matrix(self.components[:n])
        A = tuple(sp.cancel(x) for x in self.bundle.frame.coframe * a)
        b = self.components[n:2 * n]
        B = tuple(
            b[k] + sp.Add(*[A[i] * self.bundle._rv(k, i) for i in range(n) if A[i] != 0]) for k in range(n)
        )
        return A, B, self.components[2 * n:]

    def is_vertical(self) -> bool:
        """True if the ``∂/∂q`` components vanish."""
        return all(vanishes(c) for c in self.components[: self.bundle.dim])

    def is_zero(self) -> bool:
        """True if every component vanishes identically."""
        return all(vanishes(c) for c in self.components)

    def __add__(self, other):
        return TangentField(self.bundle, tuple(a + b for a, b in zip(self.components, other.components)))

    def __sub__(self, other):
        return TangentField(self.bundle, tuple(a - b for a, b in zip(self.components, other.components)))

    def __neg__(self):
        return TangentField(self.bundle, tuple(-a for a in self.components))

    def __rmul__(self, f):
        f = as_argument(f, lambda: _bundle_names(self.bundle), where="factor")
        return TangentField(self.bundle, tuple(f * a for a in self.components))

    __mul__ = __rmul__

    def __str__(self):
        terms = [f"({c})*d/d{x}" for c, x in zip(self.components, self.bundle.coordinates) if c != 0]
        return " + ".join(terms) if terms else "0"


@dataclass(frozen=True, eq=False)
class SecondOrderField(EquationDisplay):
    """A second-order field ``Γ = v^i X_i^C + Γ^i X_i^V`` on TQ (docs/theory.rst, Lagrangian dynamics in a frame).

    Along its integral curves ``q̇^A = X_i^A v^i`` and ``v̇^i = Γ^i``.  If the
    bundle has extra coordinates, ``extra_rates`` are their time derivatives.

    Attributes
    ----------
    bundle : TangentBundle
    accelerations : tuple
        ``Γ^i`` as functions of (q, v, extra).
    extra_rates : tuple
        Time derivatives of the extra coordinates (empty if none).
    """

    bundle: TangentBundle
    accelerations: tuple
    extra_rates: tuple = ()

    def __post_init__(self):
        if not isinstance(self.bundle, TangentBundle):
            raise ArgumentError(f"SecondOrderField: the first argument must be a TangentBundle, got "
                                f"{type(self.bundle).__name__}.")
        n = self.bundle.dim
        names = _bundle_names(self.bundle)
        acc = tuple(as_expression(a, names, where=f"accelerations[{i}]") for i, a in
                    enumerate(as_sequence(self.accelerations, "accelerations", what="accelerations")))
        if len(acc) != n:
            raise DimensionError(f"a second-order field needs {n} accelerations, got {len(acc)}.")
        rates = tuple(as_expression(a, names, where=f"extra_rates[{i}]") for i, a in
                      enumerate(as_sequence(self.extra_rates, "extra_rates", what="rates")))
        if rates and len(rates) != len(self.bundle.extra):
            raise DimensionError(f"need {len(self.bundle.extra)} extra rates, got {len(rates)}.")
        object.__setattr__(self, "accelerations", acc)
        object.__setattr__(self, "extra_rates", rates or (sp.S.Zero,) * len(self.bundle.extra))

    def as_tangent_field(self) -> TangentField:
        """The same field as a :class:`TangentField` (Hamel-chart components)."""
        b = self.bundle
        X = b.frame.vectors
        q_rates = tuple(sp.Add(*[X[i, A] * b.quasi_velocities[i] for i in range(b.dim)]) for A in range(b.dim))
        return TangentField(b, q_rates + self.accelerations + self.extra_rates)

    def __call__(self, f) -> sp.Expr:
        """``Γ(f)``: the time derivative of f along the integral curves."""
        return self.as_tangent_field()(f)

    def natural_accelerations(self, natural: bool = True) -> dict:
        """``q̈^A = X_i^A Γ^i + v^j X_j(X_i^A) v^i`` (docs/theory.rst, Lagrangian dynamics in a frame).

        Returns ``{q^A: q̈^A}``; with ``natural=True`` (default) expressed in the
        natural velocities ``q_dot`` (``v^i = θ^i_A u^A``), else in (q, v).
        """
        b = self.bundle
        X = b.frame.vectors
        v = b.quasi_velocities
        out = {}
        for A, q in enumerate(b.chart.coordinates):
            acc = sp.Add(*[X[i, A] * self.accelerations[i] for i in range(b.dim) if X[i, A] != 0])
            acc += sp.Add(*[v[i] * b.total_derivative(X[i, A]) for i in range(b.dim) if not X[i, A].is_number])
            out[q] = b.to_natural(acc) if natural else acc
        return out

    def equations(self) -> list:
        """``[Eq(v_i_dot, Γ^i), …]`` (and ``Eq(extra_dot, rate)`` for extra coordinates)."""
        b = self.bundle
        eqs = [sp.Eq(d, g) for d, g in zip(b.quasi_velocity_rates, self.accelerations)]
        for s, r in zip(b.extra, self.extra_rates):
            eqs.append(sp.Eq(sp.Symbol(f"{s.name}_dot", real=True), r))
        return eqs

    def simplified(self) -> "SecondOrderField":
        """The same field with every component passed through ``sympy.simplify`` (slow; optional)."""
        return SecondOrderField(
            self.bundle,
            tuple(sp.simplify(a) for a in self.accelerations),
            tuple(sp.simplify(a) for a in self.extra_rates),
        )

    def to_dict(self) -> dict:
        return {
            "accelerations": [str(a) for a in self.accelerations],
            "natural_accelerations": {str(k): str(v) for k, v in self.natural_accelerations().items()},
        }

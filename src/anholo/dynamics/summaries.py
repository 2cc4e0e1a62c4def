"""The dynamics of a system as report blocks: its frame, the Euler–Lagrange field, the
nonholonomic (Lagrange–d'Alembert) field and the vakonomic field.

Each block is computed from the derivation objects of this layer (nothing is
derived here) and renders itself under a :class:`~anholo.algebra.presentation.Presenter`
(text, LaTeX, JSON entries); ``anholo analyze`` orders the blocks and applies the
budgets (:mod:`anholo.io.report`).  Formulas: Hamel's equations and the
Euler–Lagrange field, Prop. 1; the nonholonomic field, Prop. 2; the vakonomic
field, Prop. 3 of Crampin & Mestdag (2010); docs/theory.rst.
"""

from __future__ import annotations

from dataclasses import dataclass


import sympy as sp

from ..algebra.presentation import Presenter, ReportBlock, align, vector_latex, vector_text
from ..algebra.printing import dotted, latex
from ..geometry.frame import Frame
from ..errors import IrregularLagrangianError
from .forces import forcing_terms
from .lagrangian import Lagrangian
from .nonholonomic import NonholonomicSystem
from .vakonomic import VakonomicSystem

__all__ = ["sides", "FrameSummary", "EulerLagrangeSummary", "NonholonomicSummary", "VakonomicSummary"]


def _structure_rows(frame: Frame) -> list:
    return [(k, i, j, v) for (k, i, j), v in frame.nonzero_structure().items()]


def sides(e) -> tuple:
    """``(lhs, rhs)`` of an equation; an equation sympy evaluated to True (both sides equal, e.g.
    ``0 = 0`` for a coordinate L does not depend on) is ``(0, 0)``."""
    if isinstance(e, sp.Equality):
        return e.lhs, e.rhs
    if e is sp.true:
        return sp.S.Zero, sp.S.Zero
    raise TypeError(f"not an equation: {e!r}")


@dataclass(frozen=True, eq=False)
class FrameSummary(ReportBlock):
    """The frame ``X_i`` of the system file (or the coordinate frame) and its structure
    functions ``[X_i, X_j] = R^k_ij X_k``."""

    frame: Frame
    quasi_velocities: tuple

    key = "frame"
    title = "Frame and structure functions"

    def payload(self, p: Presenter) -> dict:
        F, n = self.frame, self.frame.dim
        return {"frame": {
            "vectors": [[p.present(F.vectors[i, A]) for A in range(n)] for i in range(n)],
            "coframe": [[p.present(F.coframe[i, A]) for A in range(n)] for i in range(n)],
            "structure": [[[p.present(F.structure[k][i][j]) for j in range(n)] for i in range(n)] for k in range(n)],
            "holonomic": F.is_holonomic,
        }}

    def text_lines(self, p: Presenter) -> list:
        F = self.frame
        q = F.chart.coordinates
        lines = ["Frame (X_i in the coordinate basis; quasi-velocities "
                 + ", ".join(str(v) for v in self.quasi_velocities) + "):"]
        lines += [f"  X{i + 1} = {vector_text(p, F.vectors.row(i), q)}" for i in range(F.dim)]
        lines.append("Structure functions [X_i, X_j] = R^k_ij X_k (nonzero, i < j):")
        rows = _structure_rows(F)
        lines += [f"  R^{k + 1}_{i + 1}{j + 1} = {p.text(v)}" for k, i, j, v in rows] or [
            "  none: the frame is holonomic"]
        return lines

    def latex_lines(self, p: Presenter) -> list:
        F = self.frame
        q = F.chart.coordinates
        rows = [f"X_{{{i + 1}}} &= {vector_latex(p, F.vectors.row(i), q)}" for i in range(F.dim)]
        rows += [f"R^{{{k + 1}}}_{{{i + 1}{j + 1}}} &= {p.latex(v)}" for k, i, j, v in _structure_rows(F)]
        return align(rows) + ([] if F.nonzero_structure() else ["The frame is holonomic."])

    def summary(self) -> list:
        return ["frame: holonomic" if self.frame.is_holonomic else
                f"frame: anholonomic ({len(self.frame.nonzero_structure())} nonzero R^k_ij, i < j)"]


@dataclass(frozen=True, eq=False)
class EulerLagrangeSummary(ReportBlock):
    """L in quasi-velocities, Hamel's equations and the Euler–Lagrange field (Prop. 1), or, for a
    singular L, the general solution of the Cartan equation ``i_Γ dθ_L = −dE_L``.

    ``constrained`` marks the block of a system with constraints: there the
    unconstrained field is reported after the constrained dynamics, not as the headline.
    """

    lagrangian: Lagrangian
    regular: bool
    hamel: tuple
    v_dot: tuple = None
    q_ddot: dict = None
    cartan: object = None
    constrained: bool = False

    key = "euler_lagrange"
    title = "Hamel equations and the Euler–Lagrange field"

    @classmethod
    def of(cls, L: Lagrangian, constrained: bool = False, forces=None, time=None) -> "EulerLagrangeSummary":
        """``forces`` (:class:`~anholo.dynamics.forces.Forces`) and ``time`` add ``F_i − ∂p_i/∂t`` to the
        right-hand sides of Hamel's equations and to the field (docs/forces.rst)."""
        regular = L.is_regular()
        hamel = tuple(L.hamel_equations())
        if forces is not None or time is not None:
            F = forces.frame_components(L.bundle) if forces is not None and not forces.is_zero else None
            phi = forcing_terms(F, L.momenta, time if time is not None else getattr(forces, "time", None))
            hamel = tuple(sp.Eq(sides(e)[0], sides(e)[1] + f, evaluate=False) if f != 0 else e
                          for e, f in zip(hamel, phi))
        if regular:
            field = L.euler_lagrange_field(forces=forces, time=time)
            return cls(L, True, hamel, tuple(field.accelerations), dict(field.natural_accelerations()),
                       constrained=constrained)
        if forces is not None or time is not None:
            raise IrregularLagrangianError(
                "the Lagrangian is singular and has forces or depends on time; the general solution of the "
                "Cartan equation is implemented for the unforced, time-independent problem only.")
        return cls(L, False, hamel, cartan=L.euler_lagrange_field_cartan(), constrained=constrained)

    def payload(self, p: Presenter) -> dict:
        out = {
            "lagrangian_quasi": p.present(self.lagrangian.expr),
            "regular": self.regular,
            "hamel_equations": [{"lhs": p.present(sides(e)[0]), "rhs": p.present(sides(e)[1])} for e in self.hamel],
        }
        if self.regular:
            out["euler_lagrange"] = {"q_ddot": {q.name: p.present(e) for q, e in self.q_ddot.items()},
                                     "v_dot": [p.present(e) for e in self.v_dot], "decided": "exact"}
        else:
            out["euler_lagrange"] = {"q_ddot": None, "cartan": self.cartan.to_dict(show=p.present),
                                     "decided": "exact"}
        return out

    def text_lines(self, p: Presenter) -> list:
        b = self.lagrangian.bundle
        lines = []
        if self.constrained:
            lines.append("(the free system, without the constraints)")
        lines.append(f"L in quasi-velocities: {p.text(self.lagrangian.expr)}")
        lines.append("Hamel equations  d/dt p_i = X_i(L) - R^k_ij v^j p_k:")
        lines += [f"  {p.equation_text(*sides(e))}" for e in self.hamel]
        lines.append("Euler-Lagrange field:")
        if self.regular:
            lines += [f"  {v} = {p.text(e)}" for v, e in zip(b.quasi_velocity_rates, self.v_dot)]
            lines.append("Natural accelerations:")
            lines += [f"  {q.name}_ddot = {p.text(e)}" for q, e in self.q_ddot.items()]
        else:
            lines.append("  the Lagrangian is singular; general solution of i_G dtheta_L = -dE_L:")
            lines += ["    " + line for line in self.cartan.text_lines(show=p.text)]
        return lines

    def latex_lines(self, p: Presenter) -> list:
        b = self.lagrangian.bundle
        out = [r"\paragraph{Hamel's equations}"] + align(
            p.equation_latex(*sides(e)) for e in self.hamel)
        if self.regular:
            out += [r"\paragraph{Euler--Lagrange field}"] + align(
                [f"{latex(v)} &= {p.latex(e)}" for v, e in zip(b.quasi_velocity_rates, self.v_dot)]
                + [rf"{dotted(q, 2)} &= {p.latex(e)}" for q, e in self.q_ddot.items()])
        else:
            out += [r"\paragraph{Singular Lagrangian: general solution of the Cartan equation}"] + align(
                self.cartan.latex_rows(show=p.latex))
        return out

    def summary(self) -> list:
        return ["Lagrangian: regular" if self.regular else
                "Lagrangian: singular (Euler-Lagrange field from the Cartan equation, see below)"]


@dataclass(frozen=True, eq=False)
class NonholonomicSummary(ReportBlock):
    """The Lagrange–d'Alembert problem on C (Prop. 2): D and its adapted frame, the constrained
    Hamel equations, Γ_nh, the natural accelerations and the multipliers of the constraints as written."""

    system: NonholonomicSystem
    written: tuple
    velocities_on_C: tuple
    hamel: tuple
    v_dot: tuple
    q_ddot: dict
    multipliers: tuple
    mu: tuple
    integrable: bool
    implicit: object = None  # the ImplicitForm M x = F (v_dot and the multipliers μ)

    key = "nonholonomic"
    title = "Nonholonomic (Lagrange-d'Alembert) dynamics"

    @classmethod
    def of(cls, nh: NonholonomicSystem, written=()) -> "NonholonomicSummary":
        field = nh.field()
        return cls(nh, tuple(written) or tuple(nh.constraints.expressions), tuple(nh.velocities_on_C),
                   tuple(nh.constrained_hamel_equations()), tuple(field.accelerations),
                   dict(field.natural_accelerations()), tuple(field.coordinate_multipliers()),
                   tuple(field.multipliers), nh.distribution_is_integrable(), nh.implicit_form())

    def payload(self, p: Presenter) -> dict:
        F, n = self.system.frame, self.system.frame.dim
        return {"nonholonomic": {
            "constraints": list(self.written),
            "rank_D": self.system.m,
            "integrable": self.integrable,
            "affine": self.system.constraints.is_affine,
            "frame": {
                "vectors": [[p.present(F.vectors[i, A]) for A in range(n)] for i in range(n)],
                "structure": [[[p.present(F.structure[k][i][j]) for j in range(n)] for i in range(n)]
                              for k in range(n)],
            },
            "quasi_velocities_on_C": [p.present(e) for e in self.velocities_on_C],
            "v_dot": [p.present(e) for e in self.v_dot],
            "q_ddot": {q.name: p.present(e) for q, e in self.q_ddot.items()},
            "multipliers": [p.present(e) for e in self.multipliers],
            "frame_multipliers": [p.present(e) for e in self.mu],
            **({} if self.implicit is None else {"implicit": self.implicit.payload()}),
            "decided": "exact",
        }}

    def _kind(self) -> str:
        nh = self.system
        kind = "integrable: the constraints are holonomic" if self.integrable else "not integrable (nonholonomic)"
        return f"D: rank {nh.m} of {nh.frame.dim}, {kind}" + ("; affine constraints" if nh.constraints.is_affine else "")

    def text_lines(self, p: Presenter) -> list:
        nh = self.system
        F, m = nh.frame, nh.m
        v = nh.bundle.quasi_velocities
        q = F.chart.coordinates
        lines = ["Constraints:"] + [f"  {p.text(c)} = 0" for c in self.written]
        lines.append(self._kind())
        lines.append(f"Adapted frame (X1..X{m} span D; the quasi-velocities below refer to it):")
        lines += [f"  X{i + 1} = {vector_text(p, F.vectors.row(i), q)}" for i in range(F.dim)]
        lines.append("Structure functions R^k_ij (nonzero, i < j):")
        lines += [f"  R^{k + 1}_{i + 1}{j + 1} = {p.text(val)}" for (k, i, j), val in F.nonzero_structure().items()] \
            or ["  none"]
        on_C = ", ".join(f"{v[m + a]} = {p.text(b)}" for a, b in enumerate(self.velocities_on_C[m:]))
        lines.append(f"Constraint submanifold C: {on_C}")
        lines.append("Hamel equations on C  d/dt dL_c/dv^alpha = X_alpha(L_c) - R^k_alpha,j v^j p_k|_C:")
        lines += [f"  {p.equation_text(*sides(e))}" for e in self.hamel]
        if self.implicit is not None:
            form = self.implicit
            lines.append(f"Implicit form M x = F in x = ({', '.join(map(str, form.unknowns))}): "
                         f"{form.size()} distinct subexpressions (JSON: nonholonomic.implicit)")
        lines.append("Nonholonomic field on C:")
        lines += [f"  {d} = {p.text(e)}" for d, e in zip(nh.bundle.quasi_velocity_rates, self.v_dot)]
        lines.append("Natural accelerations on C:")
        lines += [f"  {qq.name}_ddot = {p.text(e)}" for qq, e in self.q_ddot.items()]
        lines.append("Multipliers of the constraints as written (E(L) = sum_a lambda_a dphi_a/dq_dot):")
        lines += [f"  lambda{a + 1} = {p.text(e)}" for a, e in enumerate(self.multipliers)]
        return lines

    def latex_lines(self, p: Presenter) -> list:
        nh = self.system
        F, m = nh.frame, nh.m
        q = F.chart.coordinates
        out = [r"\paragraph{Constraints}"] + align(f"0 &= {p.latex(c)}" for c in self.written)
        out.append(self._kind().replace("D:", "$D$:") + ".")
        out.append(rf"\paragraph{{Adapted frame}} $X_1, \dots, X_{{{m}}}$ span $D$; the quasi-velocities refer to it.")
        out += align([f"X_{{{i + 1}}} &= {vector_latex(p, F.vectors.row(i), q)}" for i in range(F.dim)]
                     + [f"R^{{{k + 1}}}_{{{i + 1}{j + 1}}} &= {p.latex(val)}"
                        for (k, i, j), val in F.nonzero_structure().items()])
        v = nh.bundle.quasi_velocities
        out.append(r"\paragraph{Constraint submanifold} $C = \{" + ", ".join(
            f"{latex(v[m + a])} = {p.latex(b)}" for a, b in enumerate(self.velocities_on_C[m:])) + r"\}$.")
        out += [r"\paragraph{Constrained Hamel equations}"] + align(
            p.equation_latex(*sides(e)) for e in self.hamel)
        out += [r"\paragraph{Nonholonomic field on $C$ and multipliers of the constraints as written}"] + align(
            [f"{latex(d)} &= {p.latex(e)}" for d, e in zip(nh.bundle.quasi_velocity_rates, self.v_dot)]
            + [rf"{dotted(qq, 2)}\big|_{{C}} &= {p.latex(e)}" for qq, e in self.q_ddot.items()]
            + [rf"\lambda_{{{a + 1}}} &= {p.latex(e)}" for a, e in enumerate(self.multipliers)])
        return out

    def summary(self) -> list:
        return [self._kind()]


@dataclass(frozen=True, eq=False)
class VakonomicSummary(ReportBlock):
    """The vakonomic field tangent to C for the multiplication rule ``L + Σ λ_a φ_a`` (Prop. 3),
    in the multipliers of the constraints as written."""

    multipliers: tuple
    q_ddot: dict
    lambda_dot: tuple
    forced: bool = False
    implicit: object = None  # the ImplicitForm M x = F (v_dot and the rates of the written multipliers)

    key = "vakonomic"
    title = "Vakonomic dynamics"
    _FORCES_NOTE = ("with the forces added, E(L + lambda*phi) = Q: a convention, forces do not come from a "
                    "variational principle (docs/forces.rst)")

    @classmethod
    def of(cls, nh: NonholonomicSystem) -> "VakonomicSummary":
        vak = VakonomicSystem(nh)
        qdd, rates = vak.field().in_written_multipliers()
        forced = getattr(nh, "forces", None) is not None and not nh.forces.is_zero
        return cls(tuple(vak.multipliers), dict(qdd), tuple(rates), forced, vak.implicit_form(written=True))

    def payload(self, p: Presenter) -> dict:
        return {"vakonomic": {
            "multipliers": [lam.name for lam in self.multipliers],
            "q_ddot": {q.name: p.present(e) for q, e in self.q_ddot.items()},
            "lambda_dot": [p.present(e) for e in self.lambda_dot],
            **({"forces": self._FORCES_NOTE} if self.forced else {}),
            **({} if self.implicit is None else {"implicit": self.implicit.payload()}),
            "decided": "exact",
        }}

    def _rule(self) -> str:
        return " + ".join(f"{lam}*phi{a + 1}" for a, lam in enumerate(self.multipliers))

    def text_lines(self, p: Presenter) -> list:
        lines = [f"Euler-Lagrange equations of L + {self._rule()}, on C:"]
        if self.forced:
            lines.insert(0, f"({self._FORCES_NOTE})")
        lines += [f"  {q.name}_ddot = {p.text(e)}" for q, e in self.q_ddot.items()]
        lines += [f"  {lam}_dot = {p.text(e)}" for lam, e in zip(self.multipliers, self.lambda_dot)]
        if self.implicit is not None:
            form = self.implicit
            lines.append(f"Implicit form M x = F in x = ({', '.join(map(str, form.unknowns))}), quasi-velocities "
                         f"of the adapted frame: {form.size()} distinct subexpressions (JSON: vakonomic.implicit)")
        return lines

    def latex_lines(self, p: Presenter) -> list:
        rule = " + ".join(rf"{latex(lam)}\,\varphi_{{{a + 1}}}" for a, lam in enumerate(self.multipliers))
        return [rf"Euler--Lagrange equations of $L + {rule}$, on $C$:"] + align(
            [rf"{dotted(q, 2)} &= {p.latex(e)}" for q, e in self.q_ddot.items()]
            + [rf"{dotted(lam)} &= {p.latex(e)}" for lam, e in zip(self.multipliers, self.lambda_dot)])

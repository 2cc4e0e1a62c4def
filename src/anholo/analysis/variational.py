"""The variational Lagrangian of a section and the check of Theorem 1 / Corollary 2.

For a section σ (:mod:`anholo.analysis.sections`), ``L_σ = L + σ_a v^a``
(Crampin & Mestdag 2010, Thm. 1; docs/consistency.rst): when σ is strongly
consistent, Γ_nh is the restriction to C of the Euler–Lagrange field of L_σ
(Cor. 2).  :func:`variational_check` computes that field on C independently and
compares it with Γ_nh (or with the section's own field).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..parsing import sympified
from ..algebra import reduce_if_cheap, solve_square, vanishes, xreplace_dag
from ..algebra.printing import tex_text
from ..errors import IrregularLagrangianError, SectionError
from ..dynamics.lagrangian import Lagrangian
from ..dynamics.nonholonomic import NonholonomicSystem

from .sections import Section, as_section, check_linear
from ..dynamics.vakonomic import VakonomicSystem

__all__ = ["variational_lagrangian", "VariationalCheck", "variational_check", "ConverseCheck", "converse_check"]


# ---------------------------------------------------------------------------------------------
# Theorem 1 / Cor. 2: the variational Lagrangian
# ---------------------------------------------------------------------------------------------
def variational_lagrangian(nh: NonholonomicSystem, section) -> Lagrangian:
    """``L_σ = L + σ_a v^a`` on TQ (Theorem 1 of Crampin & Mestdag (2010); docs/nonholonomic.rst, Vakonomic dynamics).

    σ is extended off C independently of the constrained quasi-velocities ``v^a``
    (in the Hamel chart of the adapted frame σ is already such a function).  The
    section's parameter conditions, if any, are substituted.
    """
    check_linear(nh)
    section = as_section(nh, section)
    v = nh.bundle.quasi_velocities
    expr = nh.lagrangian.expr + sp.Add(*[s * v[nh.m + a] for a, s in enumerate(section.values) if s != 0])
    if section.substitution:
        expr = xreplace_dag(expr, section.substitution)
    return Lagrangian(nh.bundle, expr)


def _euler_lagrange_on_C(nh, L: Lagrangian) -> tuple:
    """The Euler–Lagrange field of L (Prop. 1, docs/theory.rst, Lagrangian dynamics in a frame) restricted to C: ``Γ^i(q, v^α, 0)``.

    ``g_ij Γ^j = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i)``; g and the right-hand
    side are restricted to C before solving (the equations hold pointwise).
    """
    F, n = nh.frame, nh.n
    v = nh.bundle.quasi_velocities
    R = F.structure
    p = [L.expr.diff(vi) for vi in v]
    on_C = {v[a]: 0 for a in range(nh.m, n)}
    g = sp.Matrix(n, n, lambda i, j: reduce_if_cheap(xreplace_dag(p[i].diff(v[j]), on_C), 400))
    rhs = []
    for i in range(n):
        term = F.apply(i, L.expr)
        for k in range(n):
            if p[k] != 0:
                rv = sp.Add(*[R[k][i][j] * v[j] for j in range(nh.m) if R[k][i][j] != 0])
                if rv != 0:
                    term -= rv * p[k]
        term -= sp.Add(*[v[j] * F.apply(j, p[i]) for j in range(nh.m)])
        rhs.append(xreplace_dag(term, on_C))
    gamma = solve_square(g, rhs)
    if gamma is None:
        raise IrregularLagrangianError(
            "the variational Lagrangian L_σ = L + σ_a v^a is singular on C (its Hessian in the "
            "quasi-velocities is not invertible there), so it has no unique Euler–Lagrange field to "
            "compare with; Theorem 1 then needs the Cartan-form equations (Lagrangian."
            "euler_lagrange_field_cartan)."
        )
    return tuple(gamma)


@dataclass(frozen=True, eq=False)
class VariationalCheck:
    """Is a field on C the restriction of the Euler–Lagrange field of ``L_σ``? (Thm. 1 / Cor. 2).

    Attributes
    ----------
    section : Section
    lagrangian : Lagrangian
        ``L_σ = L + σ_a v^a``.
    target : str
        ``"section"`` (Γ_σ of Prop. 4, Theorem 1) or ``"nonholonomic"`` (Γ_nh, Cor. 2).
    accelerations : tuple
        ``Γ^i`` (i = 1..n) of the Euler–Lagrange field of ``L_σ`` on C.
    residuals : tuple
        ``Γ^α − target^α`` (α < m), then ``Γ^a`` (tangency to C).
    holds : bool
        True if all residuals vanish on C.
    """

    section: Section
    lagrangian: Lagrangian
    target: str
    accelerations: tuple
    residuals: tuple
    holds: bool

    def __bool__(self):
        return self.holds

    def natural_accelerations(self) -> dict:
        """``q̈^A = X_i^A Γ^i + v^i v^j X_j(X_i^A)`` of the Euler–Lagrange field of L_σ on C, in ``(q, v^α)``."""
        nh = self.section.system
        X, v = nh.frame.vectors, nh.free_velocities
        out = {}
        for A, q in enumerate(nh.frame.chart.coordinates):
            acc = sp.Add(*[X[i, A] * g for i, g in enumerate(self.accelerations) if X[i, A] != 0 and g != 0])
            acc += sp.Add(*[v[al] * nh._along(X[al, A]) for al in range(nh.m) if not X[al, A].is_number])
            out[q] = acc
        return out

    def __str__(self):
        verdict = "is" if self.holds else "is not"
        what = "Γ_σ" if self.target == "section" else "Γ_nh"
        return (f"{what} {verdict} the restriction to C of the Euler–Lagrange field of "
                f"L_σ = {self.lagrangian.expr} (section {self.section.name})")


def variational_check(nh: NonholonomicSystem, section, target: str = "nonholonomic") -> VariationalCheck:
    """Compare the Euler–Lagrange field of ``L_σ`` on C with Γ_σ or Γ_nh (docs/nonholonomic.rst, Vakonomic dynamics; docs/consistency.rst).

    Theorem 1: if ``T(σ) = 0`` (Prop. 4) then Γ_σ is the restriction to C of the
    Euler–Lagrange field of ``L_σ = L + σ_a v^a`` (``target="section"``).
    Cor. 2: if σ is strongly consistent, Γ_nh is (``target="nonholonomic"``).

    Raises
    ------
    IrregularLagrangianError
        If ``L_σ`` is singular on C.
    SectionError
        If ``target`` is neither ``"section"`` nor ``"nonholonomic"``.
    """
    check_linear(nh)
    section = as_section(nh, section)
    if target not in ("section", "nonholonomic"):
        raise SectionError(f"target must be 'section' (Γ_σ, Theorem 1) or 'nonholonomic' (Γ_nh, Cor. 2), got {target!r}.")
    L_sigma = variational_lagrangian(nh, section)
    gamma = _euler_lagrange_on_C(nh, L_sigma)
    sub = section.substitution
    if target == "section":
        values = tuple(xreplace_dag(s, sub) for s in section.values) if sub else section.values
        expected = VakonomicSystem(nh).section_field(values).accelerations
    else:
        expected = nh.field().accelerations
    if sub:
        expected = tuple(xreplace_dag(e, sub) for e in expected)
    residuals = tuple(gamma[al] - expected[al] for al in range(nh.m)) + tuple(gamma[nh.m:])
    holds = all(vanishes(r) for r in residuals)
    return VariationalCheck(section, L_sigma, target, gamma, residuals, holds)


# ---------------------------------------------------------------------------------------------
# The converse of Theorem 1
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConverseCheck:
    """The converse of Theorem 1 of Crampin & Mestdag (2010) for ``L_ρ = L + ρ_a v^a`` (docs/consistency.rst).

    If the Euler–Lagrange field Γ of ``L_ρ`` (ρ_a any functions on TQ) is tangent to C, then with
    ``σ = ρ|_C`` its restriction to C is a solution of the vakonomic problem on the image of σ:
    ``Γ^α|_C = Γ_σ^α`` and ``T(σ) = 0``.

    Attributes
    ----------
    lagrangian : Lagrangian
        ``L_ρ``.
    section : tuple
        ``σ = ρ|_C``.
    accelerations : tuple
        ``Γ^i`` of the Euler–Lagrange field of ``L_ρ`` on C.
    tangent_to_C : bool
        ``Γ^a = 0`` on C (the hypothesis).
    difference : tuple
        ``Γ^α − Γ_σ^α`` (α < m).
    tangency_residual : tuple
        ``T_b(σ)`` of Prop. 4.
    holds : bool
        The conclusion holds (meaningful when ``tangent_to_C``).
    """

    lagrangian: Lagrangian
    section: tuple
    accelerations: tuple
    tangent_to_C: bool
    difference: tuple
    tangency_residual: tuple
    holds: bool

    def __bool__(self):
        return self.holds

    def __str__(self):
        if not self.tangent_to_C:
            return "The Euler–Lagrange field of L_rho is not tangent to C: the converse of Theorem 1 does not apply."
        verdict = "is" if self.holds else "is NOT"
        return (f"The Euler–Lagrange field of L_rho is tangent to C and its restriction {verdict} the vakonomic "
                f"field of the section σ = rho|_C = {list(self.section)}, tangent to its image (T(σ) = 0).")

    def as_latex(self) -> str:
        return r"\text{" + tex_text(str(self)) + "}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"tangent_to_C": self.tangent_to_C, "holds": self.holds, "section": [str(s) for s in self.section],
                "difference": [str(d) for d in self.difference],
                "tangency_residual": [str(r) for r in self.tangency_residual]}


def converse_check(nh: NonholonomicSystem, rho) -> ConverseCheck:
    """Check the converse of Theorem 1 for ``L_ρ = L + ρ_a v^a`` (:class:`ConverseCheck`).

    Parameters
    ----------
    nh : NonholonomicSystem
    rho : sequence of k expressions in the Hamel chart ``(q, v)`` of ``nh`` (they may depend on the
        constrained quasi-velocities ``v^a``, e.g. ``ρ = −p`` for Chaplygin's ``L̂``).

    Raises
    ------
    SectionError
        If ``rho`` has the wrong length.
    IrregularLagrangianError
        If ``L_ρ`` is singular on C.
    """
    check_linear(nh)
    rho = tuple(sympified(r) for r in rho)
    k = nh.n - nh.m
    if len(rho) != k:
        raise SectionError(f"ρ needs {k} components (one per constraint), got {len(rho)}.")
    v = nh.bundle.quasi_velocities
    L_rho = Lagrangian(nh.bundle, nh.lagrangian.expr + sp.Add(*[r * v[nh.m + a] for a, r in enumerate(rho)]))
    gamma = _euler_lagrange_on_C(nh, L_rho)
    tangent = all(vanishes(g) for g in gamma[nh.m:])
    sigma = tuple(reduce_if_cheap(nh.restrict(r), 400) for r in rho)
    field = VakonomicSystem(nh).section_field(sigma)
    diff = tuple(reduce_if_cheap(g - a, 400) for g, a in zip(gamma[: nh.m], field.accelerations))
    holds = tangent and all(vanishes(d) for d in diff) and all(vanishes(r) for r in field.tangency_residual)
    return ConverseCheck(L_rho, sigma, tuple(gamma), tangent, diff, tuple(field.tangency_residual), holds)

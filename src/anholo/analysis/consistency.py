"""Consistency of the nonholonomic and vakonomic dynamics (docs/nonholonomic.rst, Vakonomic dynamics; docs/consistency.rst; Crampin & Mestdag (2010), Thm. 1–2, Cor. 1–2).

Setting: a :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem` with linear
constraints, its adapted frame (``X_α`` span D, ``X_a`` complete it), the
constraint submanifold ``C = {v^a = 0}`` with coordinates ``(q, v^α)``, the
nonholonomic field Γ_nh with multipliers ``μ_a`` and the curvature ``R^a_αβ``.

A *section* is a choice of vakonomic multipliers on C, ``λ_a = σ_a(q, v^α)``
(:class:`Section`).  For a section σ (docs/consistency.rst):

* **weak consistency** (Thm. 2): ``W_α(σ) := σ_a R^a_αβ v^β = 0`` on C for all α;
  then Γ_σ = Γ_nh.  The zero section is always weakly consistent.
* **strong consistency** (Cor. 1): in addition
  ``S_b(σ) := Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0`` on C for all b; then the
  vakonomic field is tangent to the image of σ and equals Γ_nh there, and
  Γ_nh is the restriction to C of the Euler–Lagrange field of the variational
  Lagrangian ``L_σ = L + σ_a v^a`` (Cor. 2; Theorem 1 for any σ with T(σ) = 0).

Each check returns a :class:`ConsistencyVerdict` with the residual expressions
that decide it and, when they depend on symbolic parameters, the parameter
conditions under which they vanish; :func:`consistency_report` gives the verdict
for the best section known.  The pieces live in their own modules and are
re-exported here: sections and their residuals (:mod:`anholo.analysis.sections`),
the variational Lagrangian (:mod:`anholo.analysis.variational`) and the search of
sections in an ansatz (:mod:`anholo.analysis.section_search`).

Only linear constraints are treated (C a vector subbundle), as in the
vakonomic module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sympy as sp
from sympy.core.function import AppliedUndef

from ..parsing import sympified
from ..algebra import size_exceeds, tidy, vanishes, xreplace_dag
from ..algebra.coefficients import NotPolynomial, coefficients_in
from ..algebra.conditions import alternatives_text, condition_text, parameter_alternatives
from ..algebra.presentation import Presenter, ReportBlock
from ..algebra.printing import latex, tex_text
from ..dynamics.nonholonomic import NonholonomicSystem
from ..algebra.budget import OverBudget, cpu_budget
from .section_search import SectionSearch, polynomial_ansatz, search_sections
from .sections import (Section, as_section, check_linear, distinct_up_to_scale, excluded_parameters, strong_residuals,
                       weak_residuals, zero_section)

# the names of the whole topic stay importable from here (re-exports, not used in this module)
from .section_search import Ansatz, SectionFamily  # noqa: E402,F401
from .variational import VariationalCheck, variational_check, variational_lagrangian  # noqa: E402,F401

__all__ = [
    "ConsistencyVerdict",
    "weak_consistency",
    "strong_consistency",
    "ConsistencyReport",
    "consistency_report",
]

_EXACT_LIMIT = 4000  # residuals larger than this (tree nodes) get no exact parameter analysis
_TIDY_LIMIT = 300  # residuals larger than this are reported unsimplified (tidy costs seconds)


def _decide(residuals, nh, substitution=None):
    """``(holds, alternatives, residuals)`` for "all residuals vanish on C"."""
    res = tuple(xreplace_dag(r, substitution) if substitution else sympified(r) for r in residuals)
    res = tuple(tidy(r) if not size_exceeds(r, _TIDY_LIMIT) else r for r in res)
    if all(vanishes(r) for r in res):
        return True, (), res
    params = set(nh.frame.chart.parameters)
    free = params
    if not any(r.free_symbols & free or r.has(AppliedUndef) for r in res):
        return False, (), res
    if any(size_exceeds(r, _EXACT_LIMIT) for r in res):
        return None, (), res  # nonzero for generic parameters; special values not analysed
    coeffs = []
    for r in sorted(res, key=sp.count_ops):
        if vanishes(r):
            continue
        try:
            cs = coefficients_in(r, nh.frame.chart.coordinates, nh.free_velocities)
        except NotPolynomial:
            cs = [r]
        if any(not (c.free_symbols & free) and not c.has(AppliedUndef) for c in cs):
            return False, (), res  # a nonzero coefficient free of parameters
        coeffs += cs
    coeffs = distinct_up_to_scale(coeffs)  # rational multiples have the same factors: factor each once
    holds, alts = parameter_alternatives(coeffs, set(nh.frame.chart.parameters), excluded_parameters(nh))
    return holds, alts, res


# ---------------------------------------------------------------------------------------------
# Verdicts
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConsistencyVerdict:
    """The answer to "is the section σ weakly / strongly consistent?" (docs/consistency.rst).

    Attributes
    ----------
    kind : str
        ``"weak"`` (Thm. 2) or ``"strong"`` (Cor. 1).
    section : Section
    holds : bool or None
        True if the residuals vanish on C, False if they cannot vanish, None if
        that depends on the parameters (see ``conditions``).
    residuals : tuple
        The expressions that must vanish on C, functions of ``(q, v^α)``: first
        ``W_α = σ_a R^a_αβ v^β`` (α = 1..m); for ``"strong"`` then
        ``S_b = Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β`` (b = m+1..n).
    conditions : tuple of tuple of Eq
        When ``holds`` is None: alternatives (each a conjunction of equations on
        the parameters, or functional identities when the system has undefined
        functions) under which the residuals vanish.  Found by reducing the
        residuals to their coefficients in ``v^α`` and the functions of q.
    reason : str
        A sentence saying why.
    """

    kind: str
    section: Section
    holds: bool | None
    residuals: tuple
    conditions: tuple
    reason: str

    def __bool__(self):
        return self.holds is True

    def condition_text(self) -> str:
        """The conditions as text, e.g. ``"a = 0"``; empty if there are none."""
        return alternatives_text(self.conditions)

    def labels(self) -> tuple:
        """Names of the residuals: ``W1..Wm`` then ``S(m+1)..Sn`` (frame indices)."""
        nh = self.section.system
        out = [f"W{al + 1}" for al in range(nh.m)]
        if self.kind == "strong":
            out += [f"S{b + 1}" for b in range(nh.m, nh.n)]
        return tuple(out)

    def __str__(self):
        lines = [f"{self.kind} consistency of the section {self.section.name}: "
                 + {True: "holds", False: "fails", None: "conditional"}[self.holds], f"  {self.reason}"]
        lines += [f"  {lab} = {r}" for lab, r in zip(self.labels(), self.residuals)]
        return "\n".join(lines)

    def as_latex(self) -> str:
        rows = []
        for lab, r in zip(self.labels(), self.residuals):
            rows.append(f"{lab[0]}_{{{lab[1:]}}} &= {latex(r)}")
        for alt in self.conditions:
            rows.append(r"\text{if } & " + r" \wedge ".join(f"{latex(e.lhs)} = {latex(e.rhs)}" for e in alt))
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "section": self.section.name,
            "holds": self.holds,
            "residuals": [str(r) for r in self.residuals],
            "conditions": [[f"{e.lhs} = {e.rhs}" for e in alt] for alt in self.conditions],
            "reason": self.reason,
        }


def _verdict(kind: str, section: Section, residuals: tuple) -> ConsistencyVerdict:
    nh = section.system
    holds, alts, res = _decide(residuals, nh, section.substitution)
    what = "σ_a R^a_αβ v^β = 0" if kind == "weak" else "σ_a R^a_αβ v^β = 0 and Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0"
    ref = "Thm. 2" if kind == "weak" else "Cor. 1"
    for_ = f" (for {condition_text(section.conditions)})" if section.conditions else ""
    if holds is True:
        reason = f"the section {section.name}{for_} satisfies {what} on C ({ref})."
    elif holds is False:
        bad = [lab for lab, r in zip(_labels(kind, nh), res) if not vanishes(r)]
        params = set(nh.frame.chart.parameters)
        anyp = " for any parameter values" if any(r.free_symbols & params for r in res) else ""
        reason = (f"the section {section.name}{for_} is not {kind}ly consistent: the residual"
                  f"{'s' if len(bad) > 1 else ''} {', '.join(bad)} of {what} ({ref}) do"
                  f"{'' if len(bad) > 1 else 'es'} not vanish on C{anyp}.")
    elif not alts:
        reason = (f"the section {section.name}{for_} is not {kind}ly consistent for generic parameter values "
                  f"(the residuals of {what}, {ref}, do not vanish at random points of C); whether special "
                  "parameter values make them vanish was not analysed (the residuals are too large for the "
                  "exact coefficient analysis).")
    else:
        reason = (f"the section {section.name}{for_} is {kind}ly consistent iff {alternatives_text(alts)} "
                  f"(the residuals of {what}, {ref}, vanish on C exactly then).")
    return ConsistencyVerdict(kind, section, holds, res, alts, reason)


def _labels(kind, nh):
    out = [f"W{al + 1}" for al in range(nh.m)]
    if kind == "strong":
        out += [f"S{b + 1}" for b in range(nh.m, nh.n)]
    return out


def weak_consistency(nh: NonholonomicSystem, section) -> ConsistencyVerdict:
    """Weak consistency of a section (Thm. 2 of Crampin & Mestdag (2010); docs/consistency.rst).

    σ is weakly consistent iff ``σ_a R^a_αβ v^β = 0`` on C for every α; then the
    section field Γ_σ equals Γ_nh.  ``section`` is a :class:`Section` or a
    sequence of the n − m values ``σ_a``.

    Examples
    --------
    The nonholonomic particle (docs/gallery): weakly consistent with σ = 0, not with σ = −p.

    >>> from anholo.system import System
    >>> nh = System.load("nonholonomic_particle").nonholonomic()
    >>> weak_consistency(nh, zero_section(nh)).holds
    True
    >>> y = nh.frame.chart.coordinates[1]
    >>> v1 = nh.free_velocities[0]
    >>> verdict = weak_consistency(nh, Section(nh, [-y*v1], "-p"))
    >>> verdict.holds, verdict.residuals
    (False, (v1*v2*y, -v1**2*y))
    """
    check_linear(nh)
    section = as_section(nh, section)
    return _verdict("weak", section, weak_residuals(nh, section.values))


def strong_consistency(nh: NonholonomicSystem, section) -> ConsistencyVerdict:
    """Strong consistency of a section (Cor. 1 of Crampin & Mestdag (2010); docs/consistency.rst).

    σ is strongly consistent iff ``σ_a R^a_αβ v^β = 0`` (α < m) and
    ``Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0`` (b ≥ m) on C; then the vakonomic
    field is tangent to the image of σ and equals Γ_nh there.  With σ = 0 the
    second condition is ``μ ≡ 0``.

    Examples
    --------
    >>> from anholo.system import System
    >>> nh = System.load("nonholonomic_particle").nonholonomic()
    >>> verdict = strong_consistency(nh, zero_section(nh))
    >>> verdict.holds, verdict.residuals[-1]
    (False, v1*v2/(y**2 + 1))
    """
    check_linear(nh)
    section = as_section(nh, section)
    res = weak_residuals(nh, section.values) + strong_residuals(nh, section.values)
    return _verdict("strong", section, res)


# ---------------------------------------------------------------------------------------------
# The report: the best section known
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConsistencyReport(ReportBlock):
    """The consistency verdict of ``anholo analyze`` (docs/consistency.rst).

    Attributes
    ----------
    weak : bool
        True: σ = 0 is always weakly consistent (Thm. 2).
    strong : bool or None
        True if a tried section is strongly consistent for all parameter values
        (named in ``section``), None if one is only for special parameter values
        (``reason`` states them), False if every tried section fails.
    section : str
        The name of the best section (the working one, or the first conditional one).
    reason : str
    verdicts : tuple of ConsistencyVerdict
        The strong verdicts of all sections tried.
    search : SectionSearch or None
        The default search (σ polynomial of degree ≤ 1 in v^α with constant coefficients).
    """

    weak: bool
    strong: bool | None
    section: str
    reason: str
    verdicts: tuple
    search: SectionSearch | None

    def to_dict(self) -> dict:
        return {"weak": self.weak, "strong": self.strong, "section": self.section, "reason": self.reason,
                "decided": "exact"}

    def lines(self) -> list:
        """Text lines for the report."""
        out = [f"weakly consistent: {'yes' if self.weak else 'no'} (section 0, Thm. 2)"]
        strong = {True: "yes", False: "no", None: "depends on the parameters"}[self.strong]
        out.append(f"strongly consistent: {strong} (section {self.section})")
        out.append(f"  {self.reason}")
        for v in self.verdicts:
            cond = ("works iff " + v.condition_text()) if v.conditions else "undecided (fails for generic parameters)"
            out.append(f"  section {v.section.name}: " + {True: "works", False: "fails", None: cond}[v.holds])
        return out

    def __str__(self):
        return "\n".join(self.lines())

    # --- as a block of a report ------------------------------------------------------
    key = "consistency"
    title = "Consistency of the nonholonomic and vakonomic dynamics"

    def payload(self, p: Presenter) -> dict:
        return {"consistency": self.to_dict()}

    def text_lines(self, p: Presenter) -> list:
        return self.lines()

    def latex_lines(self, p: Presenter) -> list:
        strong = {True: "yes", False: "no", None: "depends on the parameters"}[self.strong]
        out = [r"\begin{itemize}",
               rf"\item weakly consistent: {'yes' if self.weak else 'no'} (section $\sigma = 0$, Thm.~2);",
               rf"\item strongly consistent: {strong} (section {tex_text(self.section)}).",
               r"\end{itemize}", tex_text(self.reason)]
        for v in self.verdicts:
            cond = ("works iff " + v.condition_text()) if v.conditions else "undecided (fails for generic parameters)"
            out.append(r"\paragraph{Section " + tex_text(v.section.name) + "} "
                       + tex_text({True: "works", False: "fails", None: cond}[v.holds]) + ".")
            rows = [f"{lab[0]}_{{{lab[1:]}}} &= {p.latex(r)}" for lab, r in zip(v.labels(), v.residuals)]
            if rows:
                out += [r"\begin{align*}"] + [r + (r" \\" if k < len(rows) - 1 else "") for k, r in enumerate(rows)] \
                    + [r"\end{align*}"]
        return out

    def summary(self) -> list:
        strong = {True: "yes", False: "no", None: "depends on the parameters"}[self.strong]
        return [f"weakly consistent: {'yes' if self.weak else 'no'}; strongly consistent: {strong} "
                f"(section {self.section})"]




def consistency_report(nh: NonholonomicSystem, extra_sections: Sequence = (), *, search: bool = True,
                       search_budget: float | None = None) -> ConsistencyReport:
    """Weak and strong consistency for the best section known (docs/consistency.rst).

    Tried in this order: the extra sections (e.g. −p and −p + c from the
    Chaplygin analysis), the zero section, and, with ``search=True``, the
    sections found by a cheap default search (σ polynomial of degree ≤ 1 in the
    free quasi-velocities with constant coefficients), stopped after ``search_budget``
    seconds of CPU time if given (the verdict then says so).
    """
    check_linear(nh)
    sections = [as_section(nh, s) for s in extra_sections] + [zero_section(nh)]
    verdicts = [strong_consistency(nh, s) for s in sections]
    found = None
    stopped = ""
    cheap = not any(size_exceeds(r, _EXACT_LIMIT) for r in verdicts[-1].residuals) and not any(
        r.has(AppliedUndef) for r in verdicts[-1].residuals)
    wanted = search and cheap and not any(v.holds is True and not v.section.conditions for v in verdicts)
    if wanted and search_budget is not None and search_budget <= 0:
        stopped = (" The default search of sections (degree <= 1 in v) was not run: its budget of CPU time "
                   "was 0 s; run anholo.analysis.section_search.search_sections in Python to do it.")
    elif wanted:
        try:
            with cpu_budget(search_budget):
                found = search_sections(nh, polynomial_ansatz(nh, (1,), 1,
                                                              name="c (degree <= 1 in v, constant coefficients)"))
            sections += [f.section for f in found.families]
        except OverBudget:
            stopped = (f" The default search of sections (degree <= 1 in v) was not decided within its "
                       f"{search_budget:g} s of CPU time (the sections it may find are not tried here); run "
                       "anholo.analysis.section_search.search_sections in Python to complete it.")
    for s in sections[len(verdicts):]:
        verdicts.append(strong_consistency(nh, s))
    out = []
    for s, v in zip(sections, verdicts):
        if v.holds is True and s.conditions:
            v = ConsistencyVerdict(v.kind, s, None, v.residuals, (s.conditions,), v.reason)
        out.append(v)
    verdicts = out
    works = [v for v in verdicts if v.holds is True]
    conditional = [v for v in verdicts if v.holds is None]
    tried = ", ".join(v.section.name for v in verdicts)
    if works:
        v = works[0]
        return ConsistencyReport(True, True, v.section.name,
                                 f"the section {v.section.name} is strongly consistent (Cor. 1).", tuple(verdicts), found)
    if conditional:
        parts = [f"{v.section.name} iff {v.condition_text()}" if v.conditions else
                 f"{v.section.name} perhaps for special parameter values (not analysed: residuals too large)"
                 for v in conditional]
        reason = "strongly consistent with the section " + "; with ".join(parts) + f" (tried: {tried})." + stopped
        return ConsistencyReport(True, None, conditional[0].section.name, reason, tuple(verdicts), found)
    failed = [v.section.name for v in verdicts]
    reason = ("no tried section is strongly consistent (" + ", ".join(failed) + " fail"
              + ("s" if len(failed) == 1 else "") + "; σ = 0 fails iff the multipliers μ do not vanish).")
    if found is not None and not found.families:
        reason = reason[:-2] + f"; the search {found.ansatz.name} found none)."
    reason += stopped
    return ConsistencyReport(True, False, verdicts[0].section.name if verdicts else "0", reason, tuple(verdicts), found)

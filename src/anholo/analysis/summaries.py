"""Analyses of a system as report blocks: Chetaev's treatment of nonlinear constraints with
its diagnostics, and the Chaplygin analysis.

Each block is computed from the objects of the analyses (nothing is derived
here) and renders itself under a :class:`~anholo.algebra.presentation.Presenter`;
``anholo analyze`` orders the blocks and applies the budgets (:mod:`anholo.io.report`).
The consistency block is :class:`~anholo.analysis.consistency.ConsistencyReport`.
References: Talamucci (2025) for Chetaev's rule, the homogeneity diagnostics and
the energy; Crampin & Mestdag (2010), §6 and Props. 5–6 for Chaplygin systems;
docs/chetaev.rst, docs/chaplygin.rst.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..parsing import sympified
from ..algebra.budget import OverBudget, cpu_budget
from ..algebra.presentation import Presenter, ReportBlock, align, vector_latex, vector_text
from ..algebra.printing import dotted, latex, tex_text
from ..dynamics.chetaev import ChetaevSystem
from ..dynamics.nonholonomic import NonholonomicSystem
from ..dynamics.summaries import sides
from .chaplygin import ChaplyginSystem
from .diagnostics import alpha_bar_minus_alpha, energy_balance, homogeneity_degree
from .sections import Section

__all__ = ["ChetaevSummary", "ChaplyginSummary"]


@dataclass(frozen=True, eq=False)
class ChetaevSummary(ReportBlock):
    """Chetaev equations for nonlinear (or time-dependent) constraints: ``E_A(L) = Σ λ_ν ∂φ_ν/∂q̇^A``,
    ``φ = 0``; natural accelerations and multipliers on C; the homogeneity degrees of the
    constraints, ``ᾱ − α`` and whether the energy is conserved (Talamucci 2025)."""

    written: tuple
    rank: int
    dependent: tuple
    degrees: tuple
    alpha_bar_minus_alpha: tuple
    equations: tuple
    q_ddot: dict
    multipliers: tuple
    energy_conserved: bool
    implicit: object = None  # the ImplicitForm M x = F (v_dot in the file's frame and the multipliers)

    key = "chetaev"
    title = "Chetaev dynamics (nonlinear constraints)"

    @classmethod
    def of(cls, problem: ChetaevSystem, written=()) -> "ChetaevSummary":
        C = problem.constraints
        field = problem.field()
        u = C.chart.velocities
        return cls(
            tuple(written) or tuple(C.expressions), C.rank, tuple(u[A] for A in C.dependent),
            tuple(homogeneity_degree(e, u) for e in C.expressions), tuple(alpha_bar_minus_alpha(C)),
            tuple(problem.equations_with_multipliers()),
            {q: C.on_C(e) for q, e in field.natural_accelerations().items()},
            tuple(C.on_C(e) for e in field.natural_multipliers()),
            energy_balance(field).conserved,
            problem.implicit_form(),
        )

    def payload(self, p: Presenter) -> dict:
        return {"chetaev": {
            "constraints": list(self.written),
            "rank": self.rank,
            "dependent_velocities": [u.name for u in self.dependent],
            "homogeneity_degrees": [None if d is None else sympified(d) for d in self.degrees],
            "alpha_bar_minus_alpha": [p.present(e) for e in self.alpha_bar_minus_alpha],
            "q_ddot": {q.name: p.present(e) for q, e in self.q_ddot.items()},
            "multipliers": [p.present(e) for e in self.multipliers],
            "energy_conserved": self.energy_conserved,
            **({} if self.implicit is None else {"implicit": self.implicit.payload()}),
        }}

    def text_lines(self, p: Presenter) -> list:
        lines = ["Constraints (virtual displacements dphi/dq_dot . dq = 0):"]
        for c, d in zip(self.written, self.degrees):
            kind = f"homogeneous of degree {d}" if d is not None else "not homogeneous"
            lines.append(f"  {p.text(c)} = 0   ({kind} in the velocities)")
        lines.append(f"Rank on C: {self.rank}; dependent velocities: {', '.join(u.name for u in self.dependent)}")
        lines += self._homogeneity_lines(p)
        lines.append("Equations E_A(L) = sum_nu lambda_nu dphi_nu/dq_dot_A, phi = 0:")
        lines += [f"  {p.text(sides(e)[0])} = {p.text(sides(e)[1])}" for e in self.equations]
        lines.append("Natural accelerations on C:")
        lines += [f"  {q.name}_ddot = {p.text(e)}" for q, e in self.q_ddot.items()]
        lines.append("Multipliers of the constraints as written:")
        lines += [f"  lambda{a + 1} = {p.text(e)}" for a, e in enumerate(self.multipliers)]
        if self.implicit is not None:
            form = self.implicit
            lines.append(f"Implicit form M x = F in x = ({', '.join(map(str, form.unknowns))}), quasi-velocities "
                         f"of the file's frame: {form.size()} distinct subexpressions (JSON: chetaev.implicit)")
        lines += self.summary()
        return lines

    def _homogeneous(self) -> bool:
        return all(sp.sympify(e) == 0 for e in self.alpha_bar_minus_alpha)

    def _homogeneity_lines(self, p: Presenter) -> list:
        """What ``alpha_bar - alpha`` says (Talamucci (2025), Prop. 1; docs/theory.rst): with the dependent
        velocities solved as u^(m+nu) = alpha_nu(q, u) and alpha_bar_nu = u^r d(alpha_nu)/du^r, the power of
        the constraint forces on a motion is (alpha_nu - alpha_bar_nu) E_(m+nu)(L)."""
        where = ("(u^(m+nu) = alpha_nu(q, u) solves the constraints for the dependent velocities, "
                 "alpha_bar_nu = u^r d(alpha_nu)/du^r)")
        if self._homogeneous():
            return [f"Homogeneity: alpha_bar - alpha = 0 {where}: the constraints are homogeneous of degree one "
                    "in the velocities, and the constraint forces do no work (their power "
                    "(alpha - alpha_bar) E(L) vanishes)"]
        return ["Homogeneity: alpha_bar - alpha = " + ", ".join(p.text(e) for e in self.alpha_bar_minus_alpha)
                + f", not 0 {where}: the constraints are not homogeneous of degree one in the velocities, "
                "and the constraint forces have the power (alpha_nu - alpha_bar_nu) E_(m+nu)(L) on a motion"]

    def latex_lines(self, p: Presenter) -> list:
        out = [r"\paragraph{Constraints}"] + align(f"0 &= {p.latex(c)}" for c in self.written)
        out += [r"\paragraph{Chetaev equations}"] + align(f"{p.latex(sides(e)[0])} &= {p.latex(sides(e)[1])}" for e in self.equations)
        out += [r"\paragraph{On $C$}"] + align(
            [rf"{dotted(q, 2)} &= {p.latex(e)}" for q, e in self.q_ddot.items()]
            + [rf"\lambda_{{{a + 1}}} &= {p.latex(e)}" for a, e in enumerate(self.multipliers)]
            + [rf"\bar\alpha_{{{a + 1}}} - \alpha_{{{a + 1}}} &= {p.latex(e)}"
               for a, e in enumerate(self.alpha_bar_minus_alpha)])
        out.append(tex_text(self.summary()[0]) + ".")
        out.append((r"The constraints are homogeneous of degree one in the velocities ($\bar\alpha = \alpha$): "
                    r"the constraint forces do no work." if self._homogeneous() else
                    r"The constraints are not homogeneous of degree one in the velocities "
                    r"($\bar\alpha \neq \alpha$): the constraint forces have the power "
                    r"$(\alpha_\nu - \bar\alpha_\nu) E_{m+\nu}(L)$ on a motion.")
                   + r" (Talamucci (2025), Prop.~1.)")
        return out

    def summary(self) -> list:
        return ["Energy conserved: " + ("yes" if self.energy_conserved else "no (the constraint forces do work)")]


def _coupling_parameter(system, verdict):
    """The parameter to express a special value of, for sections −p + c: one whose vanishing makes −p
    consistent (a factor ``p`` of the −p condition) and that enters neither the constraints nor the
    frame — the carriage's offset ``a`` (with ``m0``, which always multiplies it, the later declared
    is taken: geometric parameters are usually declared after the masses); None if there is none."""
    cons = set().union(*(sympified(c).free_symbols for c in system.constraints)) if system.constraints else set()
    cons |= set(system.frame.vectors.free_symbols)
    factors = set()
    for c in getattr(verdict, "conditions", ()) or ():
        factors |= {f for f in sp.Mul.make_args(sp.factor(c)) if f.is_Symbol}
    candidates = [p for p in system.chart.parameters if p in factors and p not in cons]
    return candidates[-1] if candidates else None


#: CPU seconds the report gives the search of sections −p + c (``ChaplyginSystem.momentum_sections``):
#: the catalogue's searches finish within it (crampin_mestdag_class's, the longest, in about 1.8 s on the
#: project's machine) or take many times as long (the carriage's default ansatz of 18 functions about
#: 16 s), so a larger budget only delays the report.
SEARCH_BUDGET = 3.0
#: CPU seconds the report gives the consistency block's default search of sections (degree ≤ 1 in v).
CONSISTENCY_SEARCH_BUDGET = 1.5
#: CPU seconds of the report's two optional searches together (SEARCH_BUDGET for the Chaplygin block,
#: CONSISTENCY_SEARCH_BUDGET for the consistency block, each its own: a verdict does not depend on the
#: order of the blocks).
REPORT_SEARCH_BUDGET = SEARCH_BUDGET + CONSISTENCY_SEARCH_BUDGET
#: Unknowns κ_ak per CPU second of budget beyond which the search of sections −p + c is not started:
#: its cost grows with the number of unknowns (one per component of c and function of the ansatz) and the
#: linear system they give.  Measured on the project's machine with the default ansatz: the catalogue's
#: searches with ≤ 12 unknowns finish in ≤ 0.9 s (crampin_mestdag_class, knife_edge,
#: nonholonomic_particle), those with ≥ 54 need ≥ 3.5 s (two_wheeled_carriage 54 unknowns: 5.8 s, roller_racer
#: 60: 3.7 s, routh_sphere 90: 4.0 s, chaplygin_ball 126: over 6 s), so with the 3 s budget a search of
#: more than 48 unknowns would only stop at its budget.
UNKNOWNS_PER_SECOND = 16


@dataclass(frozen=True)
class SearchNotFinished:
    """A search of sections −p + c stopped at its CPU-time budget (no sections: none were verified)."""

    seconds: float
    ansatz_size: int
    sections: tuple = ()
    unknowns: int | None = None  # set when the search was not started (predicted over its budget)

    @property
    def reason(self) -> str:
        call = ("ch = anholo.system.System.load(FILE).chaplygin(); ch.momentum_sections(ch.default_ansatz())")
        if self.unknowns is not None:
            return (f"Sections -p + c (default ansatz of {self.ansatz_size} functions, {self.unknowns} unknowns): "
                    f"search not started, predicted to need more than its budget of {self.seconds:g} s of CPU "
                    f"time (more than {UNKNOWNS_PER_SECOND} unknowns per second); run {call} in Python to do it")
        return (f"Sections -p + c (default ansatz of {self.ansatz_size} functions): search not finished within "
                f"its budget of {self.seconds:g} s of CPU time; run {call} in Python to complete it")

    def to_dict(self) -> dict:
        return {"completed": False, "started": self.unknowns is None, "reason": self.reason, "sections": []}


@dataclass(frozen=True, eq=False)
class ChaplyginSummary(ReportBlock):
    """The Chaplygin analysis of a system with a declared symmetry: the Chaplygin frame and its
    curvature, the momenta p_a and the multipliers μ_a = Γ_nh(p_a), the verdict for the section
    σ = −p, the variational Lagrangian L̂ = L − p_a v^a with Props. 5–6, and, when −p fails, a
    search of sections −p + c (Crampin & Mestdag 2010, §6).  ``sections`` are −p and the −p + c
    found, as sections of the nonholonomic system of the report, for the consistency block."""

    system: ChaplyginSystem
    verdict: object
    momenta: tuple
    multipliers: tuple
    check: object
    search: object
    sections: tuple

    key = "chaplygin"
    title = "Chaplygin system"

    @classmethod
    def of(cls, ch: ChaplyginSystem, nh: NonholonomicSystem, system,
           search_budget: float | None = SEARCH_BUDGET) -> "ChaplyginSummary":
        """The block; the search of sections −p + c gets ``search_budget`` seconds of CPU time (None: no limit)."""
        verdict = ch.consistency()
        sections = [Section(nh, ch.section_in(nh, ch.momentum_section()), "-p")]
        search = None
        if verdict.holds is not True:
            ansatz = ch.default_ansatz()
            unknowns = (ch.n - ch.m) * len(ansatz)
            if search_budget is not None and unknowns > UNKNOWNS_PER_SECOND * search_budget:
                search = SearchNotFinished(search_budget, len(ansatz), unknowns=unknowns)
            else:
                try:
                    with cpu_budget(search_budget):
                        search = ch.momentum_sections(ansatz, solve_for=_coupling_parameter(system, verdict))
                except OverBudget:
                    search = SearchNotFinished(search_budget, len(ansatz))
            for k, found in enumerate(search.sections):
                zero = {c: 0 for c in found.free_constants}
                c = [e.xreplace(zero) for e in found.c]
                if all(e == 0 for e in c):
                    continue
                values = [e.xreplace(zero) for e in found.section]
                conds = tuple(sp.Eq(p, v) for p, v in found.parameter_values.items())
                if any(cond is sp.false for cond in conds):
                    continue  # a special value excluded by the parameter's sign (e.g. a negative root)
                conds = tuple(cond for cond in conds if cond is not sp.true)
                sections.append(Section(nh, ch.section_in(nh, values), f"-p + c ({k + 1})", conds))
        return cls(ch, verdict, tuple(ch.nonholonomic.to_natural(p) for p in ch.momenta_on_C),
                   tuple(ch.nonholonomic.to_natural(m) for m in ch.multipliers()),
                   ch.check_variational_lagrangian(), search, tuple(sections))

    def payload(self, p: Presenter) -> dict:
        sysc, F = self.system, self.system.frame
        G, n = sysc.action, F.dim
        return {"chaplygin": {
            "group_dimension": G.dim,
            "action": G.action,
            "generators": [list(g.components) for g in G.generators],
            "structure_constants": [[[sympified(e) for e in row] for row in mat] for mat in G.structure_constants],
            "shape_coordinates": None if sysc.shape_coordinates is None else [q.name for q in sysc.shape_coordinates],
            "frame": [[p.present(F.vectors[i, A]) for A in range(n)] for i in range(n)],
            "curvature": {f"R^{a + 1}_{al + 1}{be + 1}": p.present(v) for (a, al, be), v in sysc.curvature().items()},
            "momenta": [p.present(m) for m in self.momenta],
            "multipliers": [p.present(m) for m in self.multipliers],
            "minus_p": self.verdict.to_dict(),
            "variational_lagrangian": self.check.to_dict(),
            "search": None if self.search is None else self.search.to_dict(),
        }}

    def _check_line(self, words: bool = False) -> str:
        """Props. 5-6 checked; ``words``: the answers as yes/no (for LaTeX), else as Python's True/False."""
        c = self.check

        def w(v):
            return ("yes" if v is True or v is sp.true else "no" if v is False or v is sp.false else v) if words else v

        return ("Variational Lagrangian L^ = L - p_a v^a (Props. 5-6): "
                f"invariant {w(c.invariant)}, Hessian block-diagonal on C {w(c.mixed_block_vanishes)}, "
                f"regular w.r.t. D {w(c.regular_D)} and g {w(c.regular_g)}, "
                + (f"EL field tangent to C {w(c.tangent_to_C)}, equal to Gamma_nh on C {w(c.equals_nonholonomic)}"
                   if c.accelerations_on_C is not None else
                   "L^ is singular, so its Euler-Lagrange field is not unique (Prop. 6 does not apply)"))

    def _search_lines(self) -> list:
        if self.search is None:
            return []
        if isinstance(self.search, SearchNotFinished):
            return [self.search.reason]
        found = self.search.sections
        if not found:
            return ["Sections -p + c (c constants of motion, default ansatz): none found"]
        out = []
        for s in found:
            where = ", ".join(f"{k} = {v}" for k, v in s.parameter_values.items()) or "all parameter values"
            out.append(f"Section -p + c for {where}: c = ({', '.join(map(str, s.c))})")
        return out

    def text_lines(self, p: Presenter) -> list:
        sysc = self.system
        G, F, m = sysc.action, sysc.frame, sysc.m
        q = F.chart.coordinates
        lines = [f"{G.action} action of a {G.dim}-dimensional group:"]
        lines += [f"  E{a + 1} = {vector_text(p, g.components, q)}" for a, g in enumerate(G.generators)]
        shape = sysc.shape_coordinates
        lines.append("Chaplygin frame (X1..X%d horizontal%s, then the generators):"
                     % (m, "" if shape is None else " lifts of d/" + ", d/".join(s.name for s in shape)))
        lines += [f"  X{i + 1} = {vector_text(p, F.vectors.row(i), q)}" for i in range(F.dim)]
        lines.append("Curvature R^a_alpha,beta:")
        lines += [f"  R^{a + 1}_{al + 1}{be + 1} = {p.text(v)}" for (a, al, be), v in sysc.curvature().items()] \
            or ["  none"]
        lines.append("Momenta p_a = X_a^V(L) on C, and multipliers mu_a = Gamma_nh(p_a):")
        lines += [f"  p{a + 1} = {p.text(x)}" for a, x in enumerate(self.momenta)]
        lines += [f"  mu{a + 1} = {p.text(mu)}" for a, mu in enumerate(self.multipliers)]
        lines.append(f"Section sigma = -p: {self.verdict.reason}")
        lines.append(self._check_line())
        return lines + self._search_lines()

    def latex_lines(self, p: Presenter) -> list:
        sysc = self.system
        G, F = sysc.action, sysc.frame
        q = F.chart.coordinates
        out = [rf"A {G.action} action of a {G.dim}-dimensional group; the Chaplygin frame and its curvature:"]
        out += align([rf"\tilde E_{{{a + 1}}} &= {vector_latex(p, g.components, q)}" for a, g in enumerate(G.generators)]
                     + [f"X_{{{i + 1}}} &= {vector_latex(p, F.vectors.row(i), q)}" for i in range(F.dim)]
                     + [f"R^{{{a + 1}}}_{{{al + 1}{be + 1}}} &= {p.latex(v)}"
                        for (a, al, be), v in sysc.curvature().items()]
                     + [f"p_{{{a + 1}}} &= {p.latex(x)}" for a, x in enumerate(self.momenta)]
                     + [rf"\mu_{{{a + 1}}} &= {p.latex(x)}" for a, x in enumerate(self.multipliers)])
        out.append(r"Section $\sigma = -p$: " + tex_text(self.verdict.reason) + ".")
        out.append(tex_text(self._check_line(words=True)) + ".")
        out += [tex_text(line) + "." for line in self._search_lines()]
        return out

    def summary(self) -> list:
        return [f"Chaplygin section sigma = -p: {self.verdict.reason}"]


"""The geometry of the nonholonomic flow as report blocks: controllability of D (growth vector),
invariant measure of Γ_nh, first integrals.

Each block is computed from the objects of :mod:`anholo.geometry.distribution`,
:mod:`anholo.analysis.invariant_measure` and :mod:`anholo.analysis.first_integrals`
(nothing is derived here) and renders itself under a
:class:`~anholo.algebra.presentation.Presenter`; ``anholo analyze`` orders the blocks and applies
the budgets (:mod:`anholo.io.report`).  References: Chow (1939), Rashevskii (1938), Montgomery
(2002) for the flag; Crampin & Mestdag (2010), §7.1, Fedorov & Jovanović (2004) for invariant
measures; Bloch, Krishnaprasad, Marsden & Murray (1996) for the momentum equation;
docs/controllability.rst, docs/invariants.rst.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

import sympy as sp

from ..algebra.conditions import alternatives_text, essential_factors, parameter_alternatives
from ..algebra.decision import EXACT, NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Decision
from ..algebra.presentation import Presenter, ReportBlock, align
from ..algebra.printing import latex, tex_text
from ..dynamics.maggi import MaggiSystem
from ..dynamics.nonholonomic import NonholonomicSystem
from ..geometry.distribution import Flag, flag_of, numerical_flag
from .first_integrals import FirstIntegrals, first_integrals
from .flow_integrals import numerical_first_integrals
from .flow_numerical import numerical_invariant_density
from .flow_written import Written, write
from .invariant_measure import InvariantDensity, search_invariant_density

__all__ = ["ControllabilitySummary", "InvariantMeasureSummary", "FirstIntegralsSummary"]


@dataclass(frozen=True, eq=False)
class ControllabilitySummary(ReportBlock):
    """The flag ``D ⊂ D + [D, D] ⊂ …`` of the constraint distribution: its growth vector at a generic
    point, the bracket-generating verdict (Chow–Rashevskii), how the ranks were decided (exactly, or
    numerically at random points for a large system) and, when cheap, a determinant whose zeros
    contain the singular points."""

    flag: Flag
    singular: tuple | None

    key = "controllability"
    title = "Controllability of D (growth vector)"

    @classmethod
    def of(cls, nh: NonholonomicSystem) -> "ControllabilitySummary":
        """The block of the exact route: :func:`~anholo.geometry.distribution.flag_of` (ranks decided exactly)."""
        flag = flag_of(nh.frame, nh.m)
        return cls(flag, flag.singular_factors() if flag.bracket_generating else None)

    @classmethod
    def of_maggi(cls, maggi) -> "ControllabilitySummary":
        """The block of a large system (Maggi's route, docs/implicit.rst): the flag of
        ``D = span{X_α = ∂_{f_α} + C^P_α ∂_P}`` with brackets over shared subexpressions and ranks decided
        numerically at random points (:func:`~anholo.geometry.distribution.numerical_flag`); no
        regularity determinant (``regular_where_nonzero`` is null)."""
        return cls(numerical_flag(maggi), None)

    def payload(self, p: Presenter) -> dict:
        f = self.flag
        return {"controllability": {
            "growth_vector": list(f.growth_vector),
            "bracket_generating": f.bracket_generating,
            "dimension": f.dimension,
            "rank_D": f.m,
            "generators": [f.word_text(i) for i in range(len(f.generators))],
            "regular_where_nonzero": None if self.singular is None else [p.present(e) for e in self.singular],
            **f.decision.to_dict(),
        }}

    def _verdict(self) -> str:
        f = self.flag
        if f.bracket_generating:
            return (f"growth vector {tuple(f.growth_vector)} at a generic point: D is bracket generating "
                    f"(step {f.step}); by Chow-Rashevskii any two configurations are joined by a motion in D")
        if f.integrable:
            return f"growth vector {tuple(f.growth_vector)}: D is integrable (the constraints are holonomic)"
        return (f"growth vector {tuple(f.growth_vector)} at a generic point: D is not bracket generating; "
                f"motions in D stay in leaves of dimension {f.growth_vector[-1]} < {f.dimension}")

    def _singular_line(self) -> str | None:
        if self.singular is None:
            return None
        if not self.singular:
            return "regular everywhere the frame is (the kept brackets are independent there)"
        return "regular where these do not vanish: " + ", ".join(str(e) for e in self.singular)

    def _decided(self) -> str:
        d = self.flag.decision
        if d.is_exact:
            return "Ranks decided exactly"
        return (f"Ranks decided numerically at {d.points} random points (relative tolerance {d.tolerance:g} "
                "of the singular values)")

    def text_lines(self, p: Presenter) -> list:
        f = self.flag
        lines = [self._verdict(), self._decided(), "Brackets spanning the flag (in the adapted frame):"]
        lines += [f"  step {f.levels[i]}: {f.word_text(i)}" for i in range(len(f.generators))]
        if self.singular is not None:
            lines.append("Regular points: " + (", ".join(p.text(e) + " != 0" for e in self.singular)
                                               or "everywhere the frame is regular"))
        return lines

    def latex_lines(self, p: Presenter) -> list:
        out = [tex_text(self._verdict()) + ".", tex_text(self._decided()) + "."]
        if self.singular:
            out.append("Regular where " + ", ".join(f"${p.latex(e)} \\neq 0$" for e in self.singular) + ".")
        return out

    def summary(self) -> list:
        f = self.flag
        return [f"controllability: growth vector {list(f.growth_vector)}, "
                + ("bracket generating" if f.bracket_generating else "not bracket generating")
                + ("" if f.decision.is_exact else " (decided numerically)")]


_STOPPED = (" (search stopped at its CPU-time budget; run anholo.analysis.invariant_measure."
            "search_invariant_density(field, budget=None) in Python to complete it)")
#: The sentence of the first-integrals block when its search stopped at its CPU-time budget.
_INTEGRALS_STOPPED = ("The search stopped at its CPU-time budget; run anholo.analysis.first_integrals."
                      "first_integrals(field, budget=None) in Python to complete it.")


@dataclass(frozen=True, eq=False)
class InvariantMeasureSummary(ReportBlock):
    """Invariant measure ``N(q) dq ∧ dv^1 ∧ … ∧ dv^m`` of Γ_nh on C, the divergence of Γ_nh and the
    conditions for a constant density.

    Exact route (:meth:`of`): coordinates of the nonholonomic block's adapted frame, the density
    searched in the default ansatz in normal forms.  Large systems (:meth:`of_maggi`): coordinates
    ``v^α = q̇^{f_α}`` of Maggi's frame, ``N = 1``, ``det(g)^s`` and products of powers tried and the
    verdicts decided at random points (:func:`~anholo.analysis.flow_numerical.numerical_invariant_density`;
    ``det(g)^{1/2}``: Fedorov & Jovanović (2004), Crampin & Mestdag (2010), §7.1).  The JSON block says
    how it was decided (``"decided"``, with ``"points"`` and ``"tolerance"`` when numerical)."""

    result: InvariantDensity
    velocities: tuple
    written: Written | None = None
    #: Parameters whose vanishing is not a special case of the system (they enter the frame or the
    #: constraints, or make L singular: :func:`~anholo.analysis.sections.excluded_parameters`), dropped
    #: from the conditions for a constant density as the consistency and Chaplygin verdicts drop them.
    excluded: frozenset = frozenset()
    parameters: tuple = ()

    key = "invariant_measure"
    title = "Invariant measure of the nonholonomic field"

    @classmethod
    def of(cls, nh: NonholonomicSystem, budget: float = 2.0) -> "InvariantMeasureSummary":
        """The block; the search gets ``budget`` seconds of CPU time (no further ansatz is started after it;
        the catalogue's searches take under 1 s, the n-trailer's from n = 3 on longer)."""
        from .sections import excluded_parameters

        return cls(search_invariant_density(nh.field(), budget=budget), tuple(nh.free_velocities),
                   excluded=frozenset(excluded_parameters(nh)), parameters=tuple(nh.frame.chart.parameters))

    @classmethod
    def of_maggi(cls, maggi: MaggiSystem, points: int = NUMERICAL_POINTS,
                 tolerance: float = NUMERICAL_TOLERANCE) -> "InvariantMeasureSummary":
        """The block of a large system (Maggi's route), decided numerically at random points."""
        r = numerical_invariant_density(maggi, points, tolerance)
        flow = r.flow
        written = write(flow, [r.divergence_program, flow.program_of(flow.hessian())])
        return cls(r, tuple(maggi.free_velocities), written)

    @property
    def decision(self) -> Decision:
        return getattr(self.result, "decision", EXACT)

    def payload(self, p: Presenter) -> dict:
        r = self.result
        if self.written is not None:
            return {"invariant_measure": self._maggi_payload(p)}
        return {"invariant_measure": {
            "density": None if r.density is None else p.present(r.density),
            "measure": "N dq ∧ " + " ∧ ".join(f"d{v}" for v in self.velocities) + " on C",
            "divergence": p.present(r.divergence),
            "divergence_free": r.divergence_free,
            "constant_density": self._constant(),
            "constant_density_conditions": [p.present(c) for c in self._admissible()[1]],
            "found_in": r.family,
            "searched": list(r.searched),
            "search_complete": r.complete,
            **self.decision.to_dict(),
        }}

    def _maggi_payload(self, p: Presenter) -> dict:
        r, w = self.result, self.written
        M = r.flow.maggi
        m = M.m
        out = {
            "density": None if r.density is None else (self._large_density() if w.large else p.present(r.density)),
            "measure": r.measure,
            "divergence": w.json(p, 0),
            "divergence_free": r.divergence_free,
            "constant_density": r.divergence_free,
            "constant_density_conditions": [],
            "found_in": r.family,
            "searched": list(r.searched),
            "search_complete": True,
            "exponent_of_det_g": None if r.exponent is None else str(r.exponent),
            "residual": r.residual,
            "route": "maggi",
            **self.decision.to_dict(),
        }
        if w.large:
            out["hessian"] = [[w.json(p, 1 + i * m + j) for j in range(m)] for i in range(m)]
            out["cse"] = w.cse
        return out

    def _large_density(self) -> str:
        """``det(g)**s * (product of powers)``, g the block's ``"hessian"`` (written with its shared subexpressions)."""
        r = self.result
        if not r.exponent:
            return str(r.density)
        return str(sp.Function("det")(sp.Symbol("g")) ** r.exponent * r.factors)

    def _verdict(self) -> str:
        r = self.result
        if r.divergence_free:
            return "Gamma_nh is divergence free: the measure dq dv is invariant (constant density)"
        if r.density is None:
            return "no invariant density in the ansatz searched (below)" + ("" if r.complete else _STOPPED)
        return "invariant density found"

    def _admissible(self) -> tuple:
        """``(possible, conditions, alternatives)``: whether the constant density can be invariant for admissible
        parameter values, the conditions ``c = 0`` for it without the factors of :attr:`excluded` (and without
        factors that cannot vanish), and, when the conditions are on the parameters only, their alternatives
        (:func:`~anholo.algebra.conditions.parameter_alternatives`, as in the consistency verdicts)."""
        r = self.result
        raw = list(r.constant_density_conditions)
        if not raw or any(c.is_number and c != 0 for c in raw):
            return False, [], None
        params = set(self.parameters)
        conds = [c for c in raw if not c.is_number]
        if not params or any(not c.free_symbols <= params for c in conds):
            return True, conds, None  # conditions on functions or coordinates: as they are
        kept = []
        for c in conds:
            fs = essential_factors(c, params, set(self.excluded))
            if fs is None:
                continue
            if not fs:
                return False, [], None
            kept.append(sp.Mul(*fs))
        holds, alternatives = parameter_alternatives(kept, params, set(self.excluded))
        if holds is False:
            return False, [], None
        return True, kept, alternatives

    def _constant(self):
        """True (div Γ_nh = 0), False (never), or "conditional" (under the conditions listed)."""
        r = self.result
        if r.divergence_free:
            return True
        possible, conds, _ = self._admissible()
        return "conditional" if possible and conds else False

    def _conditions(self) -> str | None:
        r = self.result
        if r.divergence_free or self.written is not None:
            return None
        possible, conds, alternatives = self._admissible()
        if not possible or not conds:
            return "the constant density is not invariant"
        if alternatives:
            return "the constant density is invariant iff " + alternatives_text(alternatives)
        return "the constant density is invariant iff " + " and ".join(f"{c} = 0" for c in conds)

    def _density_text(self, p: Presenter) -> str:
        r, w = self.result, self.written
        if w is not None and w.large:
            return self._large_density() + "  (g: the Hessian of L_c in the free velocities, in the JSON report)"
        return p.text(r.density)

    def text_lines(self, p: Presenter) -> list:
        r, w = self.result, self.written
        if w is not None:
            M = r.flow.maggi
            coords = ", ".join(f"{v} = {c.name}_dot" for v, c in zip(self.velocities, M.free_coordinates))
            lines = [self._verdict() + ".", f"Measure N dq dv on C in the coordinates (q, {coords}) of Maggi's "
                     f"frame; div Gamma_nh = {w.text(p, 0)}"]
            if r.density is not None and not r.divergence_free:
                lines.append(f"  N = {self._density_text(p)}   (ansatz: {r.family})")
            if r.density is None:
                lines.append("Searched: " + "; ".join(r.searched))
            lines.append(f"Large system (Maggi's route): {self.decision}.")
            return lines
        vs = ", ".join(str(v) for v in self.velocities)
        lines = [self._verdict() + ".", f"Measure N dq dv on C in the coordinates (q, {vs}); div Gamma_nh = "
                 + p.text(r.divergence)]
        if r.density is not None and not r.divergence_free:
            lines.append(f"  N = {p.text(r.density)}   (ansatz: {r.family})")
        cond = self._conditions()
        if cond:
            lines.append(cond)
        if r.density is None:
            lines.append("Searched: " + "; ".join(r.searched))
        lines.append(f"Verdicts {self.decision} (normal forms).")
        return lines

    def latex_lines(self, p: Presenter) -> list:
        r, w = self.result, self.written
        div = w.latex(p, 0) if w is not None else p.latex(r.divergence)
        rows = [rf"\operatorname{{div}}\Gamma_{{nh}} &= {div}"]
        if r.density is not None:
            dens = (tex_text(self._large_density()) if w is not None and w.large else p.latex(r.density))
            rows.append(f"N &= {dens}")
        out = [tex_text(self._verdict()) + "."] + align(rows)
        cond = self._conditions()
        if cond:
            out.append(tex_text(cond) + ".")
        out.append(tex_text(f"Verdicts {self.decision}."))
        return out

    def summary(self) -> list:
        r = self.result
        how = "" if self.decision.is_exact else " (decided numerically)"
        if r.density is None:
            return ["invariant measure: none in the ansatz searched, " + _density_ansatz(r.searched) + how]
        if r.divergence_free:
            return ["invariant measure: constant density" + how]
        dens = self._large_density() if self.written is not None and self.written.large else str(r.density)
        if len(dens) > 80:  # a summary line is read at a glance: the density itself is in its block
            return ["invariant measure: a density N(q) exists (given in the invariant-measure block)" + how]
        return ["invariant measure: " + f"density N = {dens}" + how]


def _density_ansatz(searched) -> str:
    """The densities searched, in short: their forms (B^k F, the exponential) and the largest degree of F."""
    forms = []
    if any(s.startswith("N = F") for s in searched):
        forms.append("F(q)")
    if any(s.startswith("N = det(g)") for s in searched):
        forms.append("det(g)^k F(q)")
    degrees = [int(d) for s in searched for d in re.findall(r"degree <= (\d+)", s)]
    out = "N = " + " or ".join(forms) if forms else ""
    if forms:
        out += (f" with F a polynomial of degree <= {max(degrees)} (sin, cos for angles)" if degrees
                else " with F constant")
    if any(s.startswith("exp(") for s in searched):
        out += ("; " if out else "") + "exp(c_A q^A)" + (" det(g)^k" if any("det(g)" in s and s.startswith("exp(")
                                                                         for s in searched) else "")
    return out or "; ".join(searched) or "nothing (time budget)"


def _integral_ansatz(searched) -> str:
    """The first integrals searched, in short: degrees in the velocities and of the coefficients."""
    kinds = []
    if any(s.startswith("linear") for s in searched):
        kinds.append("linear")
    if any(s.startswith("quadratic") for s in searched):
        kinds.append("quadratic")
    if any(s.startswith("polynomials of degree <= 2") for s in searched):
        kinds.append("degree <= 2 in velocities and positions")
    if not kinds:
        return "nothing searched (time budget)"
    degrees = [int(d) for s in searched for d in re.findall(r"powers <= (\d+)", s)]
    coeff = f"coefficients of degree <= {max(degrees)} per coordinate" if degrees else "constant coefficients"
    return " and ".join(kinds) + " in the velocities, " + coeff


@dataclass(frozen=True, eq=False)
class FirstIntegralsSummary(ReportBlock):
    """First integrals of Γ_nh: the energy (or its rate), the momentum equations of a declared
    symmetry (Bloch et al. 1996) and integrals linear and quadratic in the velocities with coefficients
    depending on the configuration (the product ansatz of :func:`~anholo.analysis.first_integrals.first_integrals`).

    Exact route (:meth:`of`): zero tests in normal forms and an ansatz search.  Large systems
    (:meth:`of_maggi`): the energy and the momenta ``J_ξ = p_A ξ^A`` of the generators, their rates as
    programs sharing the field's definitions, "conserved" decided at random points
    (:func:`~anholo.analysis.flow_integrals.numerical_first_integrals`).  The JSON details say how it
    was decided (``"decided"``, with ``"points"`` and ``"tolerance"`` when numerical)."""

    result: FirstIntegrals
    written: Written | None = None

    key = "first_integrals"
    title = "First integrals of the nonholonomic field"

    @classmethod
    def of(cls, nh: NonholonomicSystem, generators=(), budget: float = 2.5) -> "FirstIntegralsSummary":
        """The block; the ansatz search starts no further ansatz after ``budget`` seconds of CPU time."""
        return cls(first_integrals(nh.field(), generators=generators, budget=budget))

    @classmethod
    def of_maggi(cls, maggi: MaggiSystem, generators=(), points: int = NUMERICAL_POINTS,
                 tolerance: float = NUMERICAL_TOLERANCE) -> "FirstIntegralsSummary":
        """The block of a large system (Maggi's route), decided numerically at random points."""
        r = numerical_first_integrals(maggi, generators, points, tolerance)
        rates = [] if r.energy_conserved else [r.energy_rate_program]
        rates += [mo.rate_program for mo in r.momentum if not mo.conserved]
        natural = [i.natural for i in r.integrals] + [mo.momentum for mo in r.momentum]
        return cls(r, write(r.flow, rates, natural))

    @property
    def decision(self) -> Decision:
        return getattr(self.result, "decision", EXACT)

    def _exprs(self, p: Presenter | None):
        """``(integrals, energy_rate, [(momentum, rate)])`` as JSON leaves (``p``) or text (``p`` None: see _texts)."""
        r, w = self.result, self.written
        if w is None:
            return ([p.present(i.natural) for i in r.integrals], p.present(r.energy_rate),
                    [(p.present(mo.momentum), p.present(mo.rate)) for mo in r.momentum])
        nrates = (0 if r.energy_conserved else 1) + sum(1 for mo in r.momentum if not mo.conserved)
        pos = nrates
        integrals = [w.json(p, pos + k) for k in range(len(r.integrals))]
        pos += len(r.integrals)
        momenta = [w.json(p, pos + k) for k in range(len(r.momentum))]
        k = 0
        energy_rate = sp.S.Zero
        if not r.energy_conserved:
            energy_rate, k = w.json(p, 0), 1
        out = []
        for mo, J in zip(r.momentum, momenta):
            if mo.conserved:
                out.append((J, sp.S.Zero))
            else:
                out.append((J, w.json(p, k)))
                k += 1
        return integrals, energy_rate, out

    def _texts(self, p: Presenter):
        """The same as text: ``(integrals, energy_rate, [(momentum, rate)])``."""
        r, w = self.result, self.written
        if w is None:
            return ([p.text(i.natural) for i in r.integrals], p.text(r.energy_rate),
                    [(p.text(mo.momentum), p.text(mo.rate)) for mo in r.momentum])
        nrates = (0 if r.energy_conserved else 1) + sum(1 for mo in r.momentum if not mo.conserved)
        integrals = [w.text(p, nrates + k) for k in range(len(r.integrals))]
        momenta = [w.text(p, nrates + len(r.integrals) + k) for k in range(len(r.momentum))]
        k, energy_rate = 0, "0"
        if not r.energy_conserved:
            energy_rate, k = w.text(p, 0), 1
        out = []
        for mo, J in zip(r.momentum, momenta):
            if mo.conserved:
                out.append((J, "0"))
            else:
                out.append((J, w.text(p, k)))
                k += 1
        return integrals, energy_rate, out

    def payload(self, p: Presenter) -> dict:
        r, w = self.result, self.written
        integrals, energy_rate, momenta = self._exprs(p)
        details = {
            "kinds": [i.kind for i in r.integrals],
            "energy_conserved": r.energy_conserved,
            "energy_rate": energy_rate,
            "momentum_equations": [{"coefficients": [p.present(c) for c in mo.coefficients],
                                    "momentum": J, "rate": rate, "conserved": mo.conserved}
                                   for mo, (J, rate) in zip(r.momentum, momenta)],
            "searched": list(r.searched),
            "search_complete": r.complete,
            **self.decision.to_dict(),
        }
        if w is not None:
            details["route"] = "maggi"
            if w.large:
                details["cse"] = w.cse
        return {"first_integrals": integrals, "first_integrals_details": details}

    def text_lines(self, p: Presenter) -> list:
        r = self.result
        integrals, energy_rate, momenta = self._texts(p)
        lines = ["Conserved by Gamma_nh (in q, q_dot, valid on C):"]
        lines += [f"  {i.kind}: {t}" for i, t in zip(r.integrals, integrals)] or (
            ["  none in the ansatz searched (below)"] if self.written is None else ["  none found"])
        if not r.energy_conserved:
            lines.append(f"Energy not conserved: dE/dt = {energy_rate}")
        if r.momentum:
            lines.append("Nonholonomic momentum equations d/dt J = rate (Bloch et al. 1996):")
            lines += [f"  d/dt ({J}) = {rate}" for J, rate in momenta]
        if self.written is not None:
            lines.append("Large system (Maggi's route): the energy and the momenta of the symmetry generators, no "
                         f"ansatz search; {self.decision}.")
        else:
            lines.append("Searched: " + ("; ".join(r.searched) or "nothing (time budget)"))
            if not r.complete:
                lines.append(_INTEGRALS_STOPPED)
            lines.append(f"Verdicts {self.decision} (normal forms).")
        return lines

    def latex_lines(self, p: Presenter) -> list:
        r, w = self.result, self.written
        if w is None:
            rows = [f"F_{{{k + 1}}} &= {p.latex(i.natural)}" for k, i in enumerate(r.integrals)]
            if not r.energy_conserved:
                rows.append(rf"\dot E &= {p.latex(r.energy_rate)}")
            rows += [rf"\frac{{d}}{{dt}}\left({p.latex(m.momentum)}\right) &= {p.latex(m.rate)}" for m in r.momentum]
        else:
            nrates = (0 if r.energy_conserved else 1) + sum(1 for mo in r.momentum if not mo.conserved)
            rows = [f"F_{{{k + 1}}} &= {w.latex(p, nrates + k)}" for k in range(len(r.integrals))]
            if not r.energy_conserved:
                rows.append(rf"\dot E &= {w.latex(p, 0)}")
        stopped = [tex_text(_INTEGRALS_STOPPED)] if w is None and not r.complete else []
        return (["First integrals (" + ", ".join(tex_text(i.kind) for i in r.integrals) + "):"] + align(rows)
                + stopped + [tex_text(f"Verdicts {self.decision}.")])

    def summary(self) -> list:
        r = self.result
        kinds = [i.kind for i in r.integrals]
        how = "" if self.decision.is_exact else ", decided numerically"
        if not kinds and self.written is None:
            return ["first integrals: none in the ansatz searched, " + _integral_ansatz(r.searched)]
        return [f"first integrals: {len(kinds)} found" + (f" ({', '.join(kinds)})" if kinds else "") + how]

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

from dataclasses import dataclass

import sympy as sp

from ..algebra.presentation import Presenter, ReportBlock, align
from ..algebra.printing import latex, tex_text
from ..dynamics.nonholonomic import NonholonomicSystem
from ..geometry.distribution import Flag, flag_of, numerical_flag
from .first_integrals import FirstIntegrals, first_integrals
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


@dataclass(frozen=True, eq=False)
class InvariantMeasureSummary(ReportBlock):
    """Invariant measure ``N(q) dq ∧ dv^1 ∧ … ∧ dv^m`` of Γ_nh on C (coordinates of the nonholonomic
    block's adapted frame), searched in the default ansatz; the divergence of Γ_nh and the
    conditions for a constant density."""

    result: InvariantDensity
    velocities: tuple

    key = "invariant_measure"
    title = "Invariant measure of the nonholonomic field"

    @classmethod
    def of(cls, nh: NonholonomicSystem, budget: float = 2.0) -> "InvariantMeasureSummary":
        """The block; the search gets ``budget`` seconds of CPU time (no further ansatz is started after it;
        the catalogue's searches take under 1 s, the n-trailer's from n = 3 on longer)."""
        return cls(search_invariant_density(nh.field(), budget=budget), tuple(nh.free_velocities))

    def payload(self, p: Presenter) -> dict:
        r = self.result
        return {"invariant_measure": {
            "density": None if r.density is None else p.present(r.density),
            "measure": "N dq ∧ " + " ∧ ".join(f"d{v}" for v in self.velocities) + " on C",
            "divergence": p.present(r.divergence),
            "divergence_free": r.divergence_free,
            "constant_density": self._constant(),
            "constant_density_conditions": [p.present(c) for c in r.constant_density_conditions if not c.is_number],
            "found_in": r.family,
            "searched": list(r.searched),
            "search_complete": r.complete,
        }}

    def _verdict(self) -> str:
        r = self.result
        if r.divergence_free:
            return "Gamma_nh is divergence free: the measure dq dv is invariant (constant density)"
        if r.density is None:
            return "no invariant density N(q) found in the searched ansatz" + ("" if r.complete else _STOPPED)
        return "invariant density found"

    def _constant(self):
        """True (div Γ_nh = 0), False (never), or "conditional" (under the conditions listed)."""
        r = self.result
        if r.divergence_free:
            return True
        conds = r.constant_density_conditions
        if not conds or any(c.is_number and c != 0 for c in conds):
            return False
        return "conditional"

    def _conditions(self) -> str | None:
        r = self.result
        if r.divergence_free:
            return None
        conds = [c for c in r.constant_density_conditions if not c.is_number]
        if any(c.is_number and c != 0 for c in r.constant_density_conditions) or not conds:
            return "the constant density is not invariant"
        return "the constant density is invariant iff " + " and ".join(f"{c} = 0" for c in conds)

    def text_lines(self, p: Presenter) -> list:
        r = self.result
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
        return lines

    def latex_lines(self, p: Presenter) -> list:
        r = self.result
        rows = [rf"\operatorname{{div}}\Gamma_{{nh}} &= {p.latex(r.divergence)}"]
        if r.density is not None:
            rows.append(f"N &= {p.latex(r.density)}")
        out = [tex_text(self._verdict()) + "."] + align(rows)
        cond = self._conditions()
        if cond:
            out.append(tex_text(cond) + ".")
        return out

    def summary(self) -> list:
        r = self.result
        if r.density is None:
            return ["invariant measure: none found in the default ansatz"]
        return ["invariant measure: " + ("constant density" if r.divergence_free else f"density N = {r.density}")]


@dataclass(frozen=True, eq=False)
class FirstIntegralsSummary(ReportBlock):
    """First integrals of Γ_nh: the energy (or its rate), the momentum equations of a declared
    symmetry (Bloch et al. 1996) and integrals linear in the velocities with constant coefficients."""

    result: FirstIntegrals

    key = "first_integrals"
    title = "First integrals of the nonholonomic field"

    @classmethod
    def of(cls, nh: NonholonomicSystem, generators=(), budget: float = 2.0) -> "FirstIntegralsSummary":
        """The block; the ansatz search starts no further ansatz after ``budget`` seconds of CPU time."""
        return cls(first_integrals(nh.field(), generators=generators, budget=budget))

    def payload(self, p: Presenter) -> dict:
        r = self.result
        return {
            "first_integrals": [p.present(i.natural) for i in r.integrals],
            "first_integrals_details": {
                "kinds": [i.kind for i in r.integrals],
                "energy_conserved": r.energy_conserved,
                "energy_rate": p.present(r.energy_rate),
                "momentum_equations": [{"coefficients": [p.present(c) for c in m.coefficients],
                                        "momentum": p.present(m.momentum), "rate": p.present(m.rate),
                                        "conserved": m.conserved} for m in r.momentum],
                "searched": list(r.searched),
                "search_complete": r.complete,
            },
        }

    def text_lines(self, p: Presenter) -> list:
        r = self.result
        lines = ["Conserved by Gamma_nh (in q, q_dot, valid on C):"]
        lines += [f"  {i.kind}: {p.text(i.natural)}" for i in r.integrals] or ["  none found"]
        if not r.energy_conserved:
            lines.append(f"Energy not conserved: dE/dt = {p.text(r.energy_rate)}")
        if r.momentum:
            lines.append("Nonholonomic momentum equations d/dt J = rate (Bloch et al. 1996):")
            lines += [f"  d/dt ({p.text(m.momentum)}) = {p.text(m.rate)}" for m in r.momentum]
        lines.append("Searched: " + ("; ".join(r.searched) or "nothing (time budget)"))
        return lines

    def latex_lines(self, p: Presenter) -> list:
        r = self.result
        rows = [f"F_{{{k + 1}}} &= {p.latex(i.natural)}" for k, i in enumerate(r.integrals)]
        if not r.energy_conserved:
            rows.append(rf"\dot E &= {p.latex(r.energy_rate)}")
        rows += [rf"\frac{{d}}{{dt}}\left({p.latex(m.momentum)}\right) &= {p.latex(m.rate)}" for m in r.momentum]
        return ["First integrals (" + ", ".join(tex_text(i.kind) for i in r.integrals) + "):"] + align(rows)

    def summary(self) -> list:
        r = self.result
        kinds = [i.kind for i in r.integrals]
        return [f"first integrals: {len(kinds)} found" + (f" ({', '.join(kinds)})" if kinds else "")]

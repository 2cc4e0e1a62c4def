"""The Chaplygin analysis of a large system with a symmetry of translations, from Maggi's programs.

A Chaplygin system (Crampin & Mestdag (2010), §6; docs/chaplygin.rst): a group acts freely on Q, L
and the constraint distribution D are invariant and D is the horizontal distribution of a principal
connection.  For a group of *translations* of some coordinates ``q^P`` (generators ``Ẽ_a = ∂/∂q^{P_a}``,
an abelian action, structure constants zero) this needs no normal form:

* invariance of L and D is exact: ``q^P`` does not occur in L, nor in the constraint coefficients
  ``κ_aA, c_a`` (a check of free symbols);
* Maggi's adapted frame with the ``q̇^P`` dependent (:class:`~anholo.dynamics.maggi.MaggiSystem`) *is*
  the Chaplygin frame: ``X_α = ∂_{f_α} + C^P_α ∂_P`` are the horizontal lifts of the shape coordinate
  fields and ``X_a = ∂_P = Ẽ_a``; its structure functions ``R^a_αβ`` are the curvature;
* the momenta are ``p_a = ∂L/∂q̇^{P_a}`` on C and the multipliers ``μ_a = Γ_nh(p_a)`` (the momentum
  equation, Bloch, Krishnaprasad, Marsden & Murray (1996));
* the natural section ``σ = −p`` is (weakly ⇔ strongly) consistent iff ``p_a R^a_αβ v^β = 0`` on C, and
  then (Prop. 6) the Euler–Lagrange field of ``L̂ = L − p_a v^a`` restricted to C is Γ_nh; this is
  decided at random points (:func:`~anholo.analysis.consistency_numerical.numerical_consistency`,
  whose section −p is this one).  ``L̂`` is regular near C iff L is regular with respect to D and to
  the group directions (``g_ab = ∂²L/∂q̇^{P_a}∂q̇^{P_b}`` nonsingular on C), Prop. 5 — decided at a
  random point.

Other groups (rotations, SE(2) acting on a carriage) need the exact route's Chaplygin frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algebra.decision import EXACT, Sampler
from ..algebra.engine import printed, se, to_engine
from ..algebra.presentation import Presenter, ReportBlock
from ..algebra.program import Program
from ..algebra.printing import tex_text
from ..dynamics.maggi import MaggiSystem
from ..errors import SymmetryError
from .consistency_numerical import NumericalConsistency, numerical_consistency

__all__ = ["TranslationChaplygin", "translation_chaplygin"]


@dataclass(frozen=True, eq=False)
class TranslationChaplygin(ReportBlock):
    """The Chaplygin block of a large system (module docstring).

    Attributes
    ----------
    system : MaggiSystem
        With the translated coordinates as its dependent ones.
    consistency : NumericalConsistency
        Its section −p is the Chaplygin section.
    regular_g : bool
        ``g_ab`` nonsingular at a random point of C (so ``L̂`` is regular near C, Prop. 5).
    """

    system: MaggiSystem
    consistency: NumericalConsistency
    regular_g: bool

    key = "chaplygin"
    title = "Chaplygin system"

    @property
    def holds(self) -> bool:
        return self.consistency.tried[0][1]

    def _reason(self) -> str:
        worst = self.consistency.tried[0][2]
        if self.holds:
            return (f"p_a R^a_αβ v^β = 0 on C ({self.consistency.decision}): σ = −p is consistent (weakly and "
                    "strongly), and L^ = L − p_a v^a is a variational Lagrangian for Γ_nh (Props. 5–6)")
        return (f"p_a R^a_αβ v^β ≠ 0 on C (largest relative residual {worst:.1e}; {self.consistency.decision}): "
                "σ = −p is not consistent")

    def _expressions(self) -> tuple:
        """``(cse, frame rows, curvature {label: expr}, momenta, multipliers)`` written with one cse list."""
        nh = self.system
        n, m, k = nh.n, nh.m, nh.n - nh.m
        pairs, res = nh.shared()
        _, red = nh._base
        R = red["R"]
        curv = {}
        for a in range(k):
            for al in range(m):
                for be in range(al + 1, m):
                    e = R[((m + a) * n + al) * n + be]
                    if e != 0:
                        curv[f"R^{a + 1}_{al + 1}{be + 1}"] = e
        L = to_engine(nh.lagrangian)
        u = nh._cache["u"]
        momenta = [L.diff(u[P]) for P in nh._cache["dep"]]
        KP = red["KP"]
        mu = [sum((KP[b * k + a] * res["lambda"][b] for b in range(k)), se.Integer(0)) for a in range(k)]
        frame = res["frame"][:m]
        labels = list(curv)
        cse, out = printed(pairs, [frame, [curv[x] for x in labels], momenta, mu], "cse")
        return cse, out[0], dict(zip(labels, out[1])), out[2], out[3]

    def payload(self, p: Presenter) -> dict:
        nh = self.system
        cse, frame, curv, momenta, mu = self._expressions()
        gens = [[1 if c == P else 0 for c in range(nh.n)] for P in nh._cache["dep"]]
        k = len(gens)
        return {"chaplygin": {
            "group_dimension": k,
            "action": "left",
            "generators": gens,
            "structure_constants": [[[0] * k for _ in range(k)] for _ in range(k)],
            "shape_coordinates": [q.name for q in nh.free_coordinates],
            "frame": frame,
            "curvature": curv,
            "momenta": momenta,
            "multipliers": mu,
            "minus_p": {"kind": "strong", "section": "-p", "holds": self.holds, "residuals": [],
                        "conditions": [], "reason": self._reason(), **self.consistency.decision.to_dict()},
            "variational_lagrangian": {"invariant": True, "mixed_block_vanishes": True,
                                       "regular_D": True, "regular_g": self.regular_g,
                                       "tangent_to_C": self.regular_g or None,
                                       "equals_nonholonomic": self.holds if self.regular_g else None,
                                       "by": "Props. 5-6 of Crampin & Mestdag (2010): for a Chaplygin system "
                                             "the Hessian of L^ on C is diag(g_αβ, −g_ab) and its field equals "
                                             "Γ_nh on C iff p_a R^a_αβ v^β = 0"},
            "search": {"completed": False, "sections": [],
                       "reason": "the search of sections -p + c (constants of motion c) needs the exact route; "
                                 "on Maggi's route the consistency block searches s(-p) + c with constant c"},
            "invariance": EXACT.to_dict(),
            "route": "maggi",
            "cse": cse,
            **self.consistency.decision.to_dict(),
        }}

    def text_lines(self, p: Presenter) -> list:
        nh = self.system
        lines = [f"Translations of {', '.join(c.name for c in nh.dependent_coordinates)} (an abelian group of "
                 f"dimension {nh.n - nh.m}); L and D invariant (decided exactly: the coordinates do not occur)",
                 "Chaplygin frame: Maggi's frame with these velocities dependent (X_alpha horizontal lifts of d/"
                 + ", d/".join(c.name for c in nh.free_coordinates) + ", X_a = the generators); curvature, momenta "
                 "p_a = dL/d(q_dot^P) and multipliers mu_a = Gamma_nh(p_a) in the JSON report (--json)",
                 f"Section sigma = -p: {self._reason()}",
                 "Variational Lagrangian L^ = L - p_a v^a: regular near C "
                 + ("yes" if self.regular_g else "no (g_ab singular)") + " (Prop. 5)"]
        return lines

    def latex_lines(self, p: Presenter) -> list:
        return [tex_text(line) + "." for line in self.text_lines(p)]

    def summary(self) -> list:
        return [f"Chaplygin section sigma = -p: {self._reason()}"]


def translation_chaplygin(nh: MaggiSystem, seed: int = 0) -> TranslationChaplygin:
    """The Chaplygin analysis of ``nh`` for the translations of its dependent coordinates (module docstring).

    Raises
    ------
    SymmetryError
        If L or a constraint depends on a translated coordinate (the action is not a symmetry).
    """
    dep = [nh.chart.coordinates[P] for P in nh._cache["dep"]]
    names = {q.name for q in dep}
    exprs = [to_engine(nh.lagrangian)] + [to_engine(c) for c in nh.constraints]
    used = {str(s) for e in exprs for s in e.free_symbols} & names
    if used:
        raise SymmetryError(f"the translations of {', '.join(sorted(names))} are not a symmetry: "
                            f"{', '.join(sorted(used))} occurs in L or in the constraints")
    k = nh.n - nh.m
    prog = nh.program(multipliers=True)
    L = to_engine(nh.lagrangian)
    u = nh._cache["u"]
    on_C = dict(zip(u, nh._parts["qdot"]))
    dep_i = nh._cache["dep"]
    gab = [L.diff(u[P]).diff(u[Q]).xreplace(on_C) for P in dep_i for Q in dep_i]
    sampler = Sampler(Program(prog.args, prog.pairs, ()).with_outputs(gab, prefix="gab"), seed=seed)
    (_, vals), = sampler.samples(1)
    regular_g = bool(np.linalg.cond(np.asarray(vals).reshape(k, k)) < 1e12) if k else True
    return TranslationChaplygin(nh, numerical_consistency(nh, seed=seed), regular_g)


"""First integrals of the nonholonomic field of a large system: the energy and momenta, decided numerically.

On Maggi's route (:class:`~anholo.dynamics.maggi.MaggiSystem`) Γ_nh is a straight-line program in
the coordinates ``(q, v^α = q̇^{f_α})`` of C (:mod:`anholo.analysis.flow_program`).  A function F on C
is a first integral iff ``Γ_nh(F) = 0``; here

* the energy ``E = p_A q̇^A − L``, ``p_A = ∂L/∂q̇^A`` (a function of ``(t, q, q̇)``, restricted to C by
  ``q̇ = X_α v^α + β``).  Along the motions (the constraint forces ``λ_a κ_a`` do the work
  ``λ_a κ_a·q̇ = −λ_a c_a``)

      dE/dt = Γ_nh(E) = Q_A q̇^A − ∂L/∂t − λ_a c_a,

  so E is conserved for linear constraints, a time-independent L and no forces; otherwise the rate
  is reported;
* for infinitesimal symmetries ``ξ = ξ^A(q) ∂_A`` (e.g. a system file's ``[symmetry]`` generators),
  the momentum ``J_ξ = p_A ξ^A`` and its rate ``Γ_nh(J_ξ)``: the nonholonomic momentum equation of
  Bloch, Krishnaprasad, Marsden & Murray (1996) — J_ξ is conserved when ξ is a symmetry of L lying in D,
  and in general changes at the rate of the constraint forces' work along ξ.

The rates are programs sharing the field's definitions; "conserved" is decided at random points
(:class:`~anholo.algebra.decision.Decision`): ``|Γ_nh(F)|`` at most the tolerance times the size of
its terms ``∂F/∂q^A q̇^A``, ``∂F/∂v^α Γ^α`` at every point.  The exact route
(:func:`anholo.analysis.first_integrals.first_integrals`) also searches integrals in an ansatz,
for small systems.  docs/invariants.rst.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy as sp

from ..parsing import sympified
from ..algebra.decision import NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Decision, vanishes_at
from ..algebra.engine import engine_cse, se, shared_to_sympy, to_engine, zero
from ..algebra.program import Program
from ..dynamics.maggi import MaggiSystem
from ..errors import DimensionError
from .first_integrals import FirstIntegral
from .flow_numerical import sample_points
from .flow_program import FlowProgram

__all__ = ["NumericalMomentum", "NumericalFirstIntegrals", "numerical_first_integrals"]


@dataclass(frozen=True, eq=False)
class NumericalMomentum:
    """``d/dt J = rate`` for the momentum ``J = p_A ξ^A`` of a generator ξ (coordinate components).

    ``momentum`` is J in ``(q, q̇)`` (valid on C); ``rate`` a program sharing the field's definitions
    (sympy on request: :attr:`rate`); ``conserved`` decided at random points."""

    coefficients: tuple
    momentum: object
    rate_program: Program
    conserved: bool
    flow: FlowProgram

    @cached_property
    def rate(self):
        """``Γ_nh(J)`` as a sympy expression in ``(q, v)`` sharing its subexpressions (0 if conserved)."""
        return sp.S.Zero if self.conserved else self.flow.to_sympy(self.rate_program)[0]

    def __str__(self):
        return f"d/dt ({self.momentum}) = " + ("0" if self.conserved else "Gamma_nh(J) (not zero)")


@dataclass(frozen=True, eq=False)
class NumericalFirstIntegrals:
    """The result of :func:`numerical_first_integrals` (the fields of
    :class:`~anholo.analysis.first_integrals.FirstIntegrals` that apply, and how it was decided).

    Attributes
    ----------
    integrals : tuple of FirstIntegral
        The energy (if conserved) and the conserved momenta, ``natural`` in ``(q, q̇)``.
    energy : sympy expression
        ``E = p_A q̇^A − L`` in ``(t, q, q̇)``.
    energy_rate_program : Program
        ``Γ_nh(E)`` on C (shared definitions); :attr:`energy_rate` converts it to sympy.
    momentum : tuple of NumericalMomentum
    decision : Decision
    """

    flow: FlowProgram
    integrals: tuple
    energy: object
    energy_rate_program: Program
    energy_conserved: bool
    momentum: tuple
    decision: Decision

    searched = ()
    complete = True

    @cached_property
    def energy_rate(self):
        """``dE/dt = Γ_nh(E)`` as a sympy expression in ``(q, v)`` sharing its subexpressions (0 if conserved)."""
        return sp.S.Zero if self.energy_conserved else self.flow.to_sympy(self.energy_rate_program)[0]

    def __str__(self):
        lines = [str(i) for i in self.integrals] or ["no first integral found"]
        return "\n".join(lines + [str(self.decision)])

    def to_dict(self) -> dict:
        return {"first_integrals": [str(i.natural) for i in self.integrals], "kinds": [i.kind for i in self.integrals],
                "energy_conserved": self.energy_conserved,
                "momentum_conserved": [m.conserved for m in self.momentum], **self.decision.to_dict()}


def _natural(exprs, symbols) -> list:
    """symengine expressions as sympy ones (common subexpressions shared)."""
    pairs, reduced = engine_cse(list(exprs))
    return shared_to_sympy(pairs, reduced, symbols)


def numerical_first_integrals(maggi: MaggiSystem, generators=(), points: int = NUMERICAL_POINTS,
                              tolerance: float = NUMERICAL_TOLERANCE, *, values=None,
                              seed: int = 0) -> NumericalFirstIntegrals:
    """The energy and the momenta ``J_ξ = p_A ξ^A`` of ``generators`` of a large system, their rates along
    Γ_nh (programs) and whether they are conserved (decided at ``points`` random points, relative
    ``tolerance``; parameters from ``values`` or the system's ``values``, else random).

    ``generators``: coordinate components ``ξ^A(q)`` (sympy expressions or strings in the coordinates and
    parameters), one sequence of length n per generator."""
    flow = FlowProgram.of(maggi)
    n = maggi.n
    u = maggi._cache["u"]
    L = to_engine(maggi.lagrangian)
    p = [L.diff(x) for x in u]
    E = sum((x * pa for x, pa in zip(u, p)), zero) - L
    names = {s.name: s for s in maggi.chart.coordinates + maggi.chart.parameters}
    xi = []
    for g in generators:
        g = tuple(g)
        if len(g) != n:
            raise DimensionError(f"a symmetry generator needs {n} components (one per coordinate "
                                 f"{', '.join(s.name for s in maggi.chart.coordinates)}), got {len(g)}.")
        xi.append([to_engine(sympified(c, "generators", names)) for c in g])
    J = [sum((pa * c for pa, c in zip(p, g) if c != 0), zero) for g in xi]
    fs = flow.on_C([E] + J)
    terms = flow.along_terms(fs)
    width = len(terms.outputs) // len(fs)
    sampler = flow.sampler(terms, values=values, seed=seed)
    rows = [vals for _, (vals,) in sample_points([sampler], points)]
    conserved = []
    for i in range(len(fs)):
        block = [r[i * width:(i + 1) * width] for r in rows]
        conserved.append(vanishes_at([float(np.sum(b)) for b in block], [float(np.sum(np.abs(b))) for b in block],
                                     tolerance))
    rates = [Program(terms.args, terms.pairs, (sum(terms.outputs[i * width:(i + 1) * width], zero),)).pruned()
             for i in range(len(fs))]
    symbols = maggi._symbols()
    natural = _natural([E] + J, symbols)
    decision = Decision.numerical(points, tolerance)
    momenta = tuple(NumericalMomentum(tuple(sympified(c, "generators", names) for c in g), natural[1 + a], rates[1 + a],
                                      conserved[1 + a], flow) for a, g in enumerate(generators))
    integrals = []
    if conserved[0]:
        integrals.append(FirstIntegral(natural[0], natural[0], "energy"))
    for mo in momenta:
        if mo.conserved and mo.momentum != 0:
            integrals.append(FirstIntegral(mo.momentum, mo.momentum, "momentum"))
    return NumericalFirstIntegrals(flow, tuple(integrals), natural[0], rates[0], conserved[0], momenta, decision)

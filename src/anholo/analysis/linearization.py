"""Linearisation of a field about an equilibrium or a steady motion (a relative equilibrium).

``δż = A δz`` in chosen states ``z`` from the implicit form ``q̇ = K(s)``, ``M(s) v̇ = F(s)``:

    A = [[∂K/∂z], [M⁻¹ (∂F/∂z − (∂M/∂z) v̇₀)]]   at s₀,   v̇₀ = M⁻¹ F (s₀)

(:class:`~anholo.analysis.linear_problem.LinearizationProblem`, no symbolic inverse), in states for which it is a
linearisation of the motion: the coordinates the field does not depend on are dropped and, about a steady
motion, velocities invariant under them are chosen (:mod:`anholo.analysis.relative_equilibria`).  The
eigenvalues of ``A`` decide linear stability, e.g. the weave and capsize speeds of the Whipple bicycle
(Meijaard, Papadopoulos, Ruina & Schwab 2007) and the spin-dependent growth rates of the rattleback
(Kane & Levinson 1982).  docs/implicit.rst, *Linearisation and stability*.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .linear_problem import Linearization, LinearizationProblem, _complex_text
from .relative_equilibria import check_states, choose_states

__all__ = ["Linearization", "LinearizationProblem", "linearize"]


def linearize(source, reference: Mapping, parameters: Mapping, states: Sequence | None = None,
              holonomic: Sequence | None = None) -> Linearization:
    """``δż = A δz`` of a field about a reference state (see the module docstring and :class:`LinearizationProblem`).

    Without ``states`` the states are chosen for a relative equilibrium: the coordinates the field does not
    depend on (ignorable) are dropped (:func:`~anholo.analysis.relative_equilibria.choose_states`); given
    ``states`` whose field depends on a dropped coordinate are refused
    (:func:`~anholo.analysis.relative_equilibria.check_states`, :class:`~anholo.errors.DimensionError`).

    Examples
    --------
    A thin disk rolling upright at spin rate ``v3`` (``r = 0.5``, ``g = 9.81``) is unstable below
    ``v3² = g/(3r)``, i.e. ``v3 < 2.557…``; above, its eigenvalues are on the imaginary axis (0, 0, ±iω): marginal,
    the linearisation does not decide (:func:`~anholo.analysis.linear_problem.stability_verdict`):

    >>> from anholo.system import System
    >>> s = System.load("rolling_disk")
    >>> values = {str(k): v for k, v in s.values.items()}
    >>> [linearize(s.nonholonomic(), {"v3": w}, values, states=["lean", "v1", "v2", "v3"]).verdict for w in (2.5, 2.6)]
    ['unstable', 'marginal']
    """
    hol = tuple(holonomic if holonomic is not None else getattr(source, "holonomic", ()))
    if states is None:
        source, choice, reference = choose_states(lambda dep: source, reference, parameters, hol,
                                                  dependent_given=True)
        return LinearizationProblem(source, choice.states, hol).at(reference, parameters)
    problem = LinearizationProblem(source, states, hol)
    check_states(source, [z.name for z in problem.states], reference, parameters, hol)
    return problem.at(reference, parameters)

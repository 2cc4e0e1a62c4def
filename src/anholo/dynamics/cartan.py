"""The Cartan-form equation ``i_Γ dθ_L = −dE_L`` for regular and singular L (docs/theory.rst, *Lagrangian dynamics in a frame*).

For a general field ``Γ = A^i X_i^C + B^i X_i^V (+ Λ_r ∂/∂λ_r)`` the equation is
linear in the unknowns ``z = (A, B, Λ)``: with W the matrix of ``dθ_L`` in the
lifted coframe, ``i_Γ dθ_L = Wᵀ z``, so ``Wᵀ z = −dE_L``.  Evaluating on
``X_j^V`` and ``X_j^C`` gives::

    g_ij (A^i − v^i) = 0,
    Γ(p_j) − X_j^C(L) − (A^i − v^i) X_j^C(p_i) + R^i_jk (A^k − v^k) p_i = 0.

For regular L the solution is the unique SODE of Prop. 1.  For singular L
(e.g. the vakonomic Lagrangian ``L + λ_a v^a``) the system may be
under-determined, or solvable only where some functions vanish: the solver
returns both, never fails.  Unknowns are eliminated in the order A, B, Λ, so
the free unknowns are the last ones possible (Λ before B before A).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

import random

from ..algebra import free_symbols, numerically_zero, random_point, solve_generic
from ..errors import IrregularLagrangianError
from ..geometry.tangent import SecondOrderField, TangentField
from ..algebra.printing import latex

__all__ = ["CartanSolution", "solve_cartan_equation"]


@dataclass(frozen=True, eq=False)
class CartanSolution:
    """General solution of ``i_Γ dθ_L = −dE_L``.

    Attributes
    ----------
    lagrangian : Lagrangian
    particular : TangentField
        One solution (free unknowns set to zero), valid where ``conditions`` vanish.
    free_directions : tuple of TangentField
        Fields K with ``i_K dθ_L = 0``: every ``particular + Σ c_k K_k`` (c_k arbitrary
        functions) is a solution.
    free_unknowns : tuple of str
        Names of the unknowns left free, e.g. ``("lambda1_rate",)`` or ``("B2",)``.
    conditions : tuple
        Functions that must vanish where a solution exists (empty: everywhere).
    restriction : dict
        The substitution that defined the submanifold solved on (``on=``).
    """

    lagrangian: object
    particular_components: tuple
    free_components: tuple
    free_unknowns: tuple
    conditions: tuple
    restriction: dict

    def _field(self, z) -> TangentField:
        b = self.lagrangian.bundle
        n, N = b.dim, b.size
        return b.field_from_frame(z[:n], z[n:2 * n], z[2 * n:N])

    @property
    def particular(self) -> TangentField:
        """The particular solution as a field on TQ."""
        return self._field(self.particular_components)

    @property
    def free_directions(self) -> tuple:
        """Kernel directions K (``i_K dθ_L = 0``) as fields on TQ."""
        return tuple(self._field(z) for z in self.free_components)

    @property
    def unknown_names(self) -> list:
        """The names of the unknowns, in the order of ``particular_components``: ``A1 … An``, ``B1 … Bn``
        (the components along the complete and vertical lifts ``X_i^C``, ``X_i^V``) and ``<λ>_rate``."""
        return _unknown_names(self.lagrangian.bundle)

    def frame_components(self) -> tuple:
        """``(A, B, Λ)`` of the particular solution in the lifted frame."""
        z, n = self.particular_components, self.lagrangian.bundle.dim
        return z[:n], z[n:2 * n], z[2 * n:]

    @property
    def is_unique(self) -> bool:
        """True if there are no free directions."""
        return not self.free_components

    @property
    def is_everywhere_solvable(self) -> bool:
        """True if there are no solvability conditions."""
        return not self.conditions

    def is_second_order(self) -> bool:
        """True if the particular solution has ``A^i = v^i`` (on the restriction)."""
        A, _, _ = self.frame_components()
        v = self.lagrangian.bundle.quasi_velocities
        diffs = [a - vi.xreplace(self.restriction) for a, vi in zip(A, v)]
        pts = [random_point(free_symbols(diffs), random.Random(s)) for s in (1, 2)]
        return all(numerically_zero(d, pts) for d in diffs)

    def field(self) -> SecondOrderField:
        """The unique solution as a :class:`SecondOrderField`.

        Raises
        ------
        IrregularLagrangianError
            If the solution is not unique, not everywhere solvable or not second order.
        """
        if not self.is_unique or self.conditions or not self.is_second_order():
            raise IrregularLagrangianError(
                "the Cartan equation has no unique second-order solution here: "
                f"free unknowns {list(self.free_unknowns)}, conditions {[str(c) for c in self.conditions]}. "
                "Inspect .particular, .free_directions and .conditions."
            )
        _, B, extra = self.frame_components()
        return SecondOrderField(self.lagrangian.bundle, B, extra)

    def text_lines(self, show=str) -> list:
        """The particular solution, free unknowns and conditions as lines of text, every expression
        written by ``show`` (``str``; a report passes its budgeted printer)."""
        lines = [f"{name} = {show(val)}" for name, val in zip(self.unknown_names, self.particular_components)]
        if self.free_unknowns:
            lines.append(f"free unknowns: {', '.join(self.free_unknowns)}")
        if self.conditions:
            lines.append("solvable only where: " + ", ".join(f"{show(c)} = 0" for c in self.conditions))
        return lines

    def latex_rows(self, show=latex) -> list:
        """``name &= value`` rows of the particular solution and ``0 &= condition`` rows, as LaTeX."""
        rows = [f"\\mathrm{{{n.replace('_', '')}}} &= {show(v)}"
                for n, v in zip(self.unknown_names, self.particular_components)]
        return rows + [f"0 &= {show(c)}" for c in self.conditions]

    def __str__(self):
        return "\n".join(["Solution of i_Γ dθ_L = −dE_L:"] + ["  " + line for line in self.text_lines()])

    def as_latex(self) -> str:
        """The particular solution, free unknowns and conditions as LaTeX."""
        return "\\begin{aligned}\n" + " \\\\\n".join(self.latex_rows()) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self, show=str) -> dict:
        """``particular`` (name → value), ``free_unknowns`` and ``conditions``, every expression written by
        ``show`` (``str``; a report passes its presenter, and writes the block with shared subexpressions)."""
        return {
            "particular": {n: show(v) for n, v in zip(self.unknown_names, self.particular_components)},
            "free_unknowns": list(self.free_unknowns),
            "conditions": [show(c) for c in self.conditions],
        }


def _unknown_names(bundle) -> list:
    n = bundle.dim
    return (
        [f"A{i + 1}" for i in range(n)]
        + [f"B{i + 1}" for i in range(n)]
        + [f"{s.name}_rate" for s in bundle.extra]
    )


def solve_cartan_equation(lagrangian, on=None) -> CartanSolution:
    """Solve ``i_Γ dθ_L = −dE_L`` for ``Γ = A^i X_i^C + B^i X_i^V + Λ_r ∂/∂λ_r`` (docs/theory.rst, *Lagrangian dynamics in a frame*).

    ``on`` restricts the problem to a submanifold given as a graph
    ``{symbol: expression}`` (e.g. the constraint submanifold ``{v3: 0}``).
    """
    bundle = lagrangian.bundle
    restriction = dict(on or {})
    W = lagrangian.cartan_two_form.as_matrix()
    dE = lagrangian.energy_differential.as_vector()
    if restriction:
        W = W.xreplace(restriction)
        dE = dE.xreplace(restriction)
    sol = solve_generic(W.T, list(-dE))
    names = _unknown_names(bundle)
    return CartanSolution(
        lagrangian=lagrangian,
        particular_components=sol.particular,
        free_components=sol.free_directions,
        free_unknowns=tuple(names[k] for k in sol.free_unknowns),
        conditions=sol.conditions,
        restriction=restriction,
    )

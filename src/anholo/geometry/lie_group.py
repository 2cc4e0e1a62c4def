"""Lie group actions on Q by their fundamental vector fields.

A Lie group G acts on Q; it is declared by its *fundamental vector fields*
``Ẽ_a`` (a = 1..dim G).  Sign convention for the structure constants (stated
once, tested): ``[e_a, e_b] = c^d_ab e_d`` in the Lie algebra 𝔤 of
*left*-invariant vector fields on G.  For a **left** action the map ξ ↦ ξ_Q is
an anti-homomorphism, ``[Ẽ_a, Ẽ_b] = −c^d_ab Ẽ_d``; for a **right** action it is
a homomorphism, ``[Ẽ_a, Ẽ_b] = +c^d_ab Ẽ_d``.  Example: SE(2) acting on itself
(x, y, θ) by left multiplication has ``Ẽ = (∂x, ∂y, −y∂x + x∂y + ∂θ)``,
``[e_3, e_1] = e_2`` and indeed ``[Ẽ_3, Ẽ_1] = −Ẽ_2``.  Used by Chaplygin systems
(docs/chaplygin.rst).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ..parsing import sympified
from ..parsing import as_expression, chart_names
from ..algebra.differentiation import diff_dag

from ..algebra import generic_rank, solve_generic, tidy, vanishes
from ..errors import DimensionError, NonFreeActionError, StructureConstantsError, SymmetryError
from .chart import Chart
from .vector_field import VectorField

__all__ = ["LieGroupAction"]


def _as_field(chart: Chart, g, index: int) -> VectorField:
    if isinstance(g, VectorField):
        if g.chart != chart:
            raise DimensionError(f"generator {index} lives on another chart.")
        return g
    comps = tuple(g)
    if len(comps) != chart.dim:
        raise DimensionError(
            f"generator {index} needs {chart.dim} components (one per coordinate "
            f"{', '.join(q.name for q in chart.coordinates)}), got {len(comps)}."
        )
    return VectorField(chart, comps)


@dataclass(frozen=True, eq=False)
class LieGroupAction:
    """An action of a Lie group G on Q, given by its fundamental vector fields ``Ẽ_a``.

    Parameters
    ----------
    chart : Chart
    generators : sequence of VectorField or of component rows
        ``Ẽ_a = Ẽ_a^A ∂/∂q^A``, row a = components in coordinate order.
    structure_constants : nested sequence, optional
        ``c[d][a][b] = c^d_ab`` with ``[e_a, e_b] = c^d_ab e_d`` in 𝔤 (0-based).  If
        given they are checked against the brackets of the generators; if not,
        they are computed from them.
    action : "left" or "right"
        The convention: ``[Ẽ_a, Ẽ_b] = −c^d_ab Ẽ_d`` for a left action,
        ``+c^d_ab Ẽ_d`` for a right action (module docstring).

    Raises
    ------
    NonFreeActionError
        If the generators are not pointwise independent (generic rank < dim G).
    StructureConstantsError
        If the brackets of the generators are not constant combinations of them
        (no Lie algebra action), or the declared constants do not match.

    Examples
    --------
    SE(2) acting on itself (x, y, θ) by left multiplication:

    >>> import sympy as sp
    >>> from anholo import Chart
    >>> c = Chart("x y theta")
    >>> x, y, th = c.coordinates
    >>> G = LieGroupAction(c, [[1, 0, 0], [0, 1, 0], [-y, x, 1]])
    >>> G.structure_constants[1][2][0]          # [e3, e1] = e2
    1
    >>> G.bracket(2, 0).components              # [Ẽ3, Ẽ1] = −Ẽ2 (left action)
    (0, -1, 0)
    """

    chart: Chart
    generators: tuple
    structure_constants: tuple = None
    action: str = "left"

    def __post_init__(self):
        if not isinstance(self.chart, Chart):
            object.__setattr__(self, "chart", Chart(self.chart))
        if self.action not in ("left", "right"):
            raise SymmetryError(f"action must be 'left' or 'right', got {self.action!r}.")
        gens = tuple(_as_field(self.chart, g, a) for a, g in enumerate(self.generators))
        if not gens:
            raise DimensionError("a group action needs at least one generator (fundamental vector field).")
        object.__setattr__(self, "generators", gens)
        k = len(gens)
        rank = generic_rank(self.matrix)
        if rank < k:
            raise NonFreeActionError(
                f"the {k} generators are linearly dependent at a generic point (rank {rank}): the action is "
                "not free (or the generators are redundant). Give dim G pointwise independent fundamental "
                "vector fields."
            )
        computed = self._structure_from_brackets()
        given = self.structure_constants
        if given is None:
            object.__setattr__(self, "structure_constants", computed)
            return
        try:
            given = tuple(tuple(tuple(as_expression(given[d][a][b], chart_names(self.chart),
                                                    where=f"structure_constants[{d}][{a}][{b}]")
                                      for b in range(k)) for a in range(k)) for d in range(k))
        except (IndexError, TypeError, KeyError):
            raise DimensionError(
                f"structure_constants must be a {k}×{k}×{k} nested list c[d][a][b] = c^d_ab."
            ) from None
        if any(len(given[d]) != k for d in range(k)) or len(given) != k:
            raise DimensionError(f"structure_constants must be {k}×{k}×{k}.")

        def agrees(c):
            return all(vanishes(given[d][a][b] - c[d][a][b]) for d in range(k) for a in range(k) for b in range(k))

        if not agrees(computed):
            other = "right" if self.action == "left" else "left"
            flipped = tuple(tuple(tuple(-e for e in row) for row in mat) for mat in computed)
            if agrees(flipped):
                raise StructureConstantsError(
                    f"the structure constants match the brackets of the generators for a {other} action, "
                    f"not a {self.action} one (convention: [Ẽ_a, Ẽ_b] = ∓c^d_ab Ẽ_d for left/right). Pass "
                    f"action='{other}' or negate the constants."
                )
            raise StructureConstantsError(
                "the declared structure constants do not match the brackets of the generators; for a "
                f"{self.action} action they are c[d][a][b] = {[[list(r) for r in m] for m in computed]}."
            )
        object.__setattr__(self, "structure_constants", given)

    @property
    def dim(self) -> int:
        """dim G."""
        return len(self.generators)

    @cached_property
    def matrix(self) -> sp.ImmutableMatrix:
        """``Ẽ_a^A``: row a = components of ``Ẽ_a``."""
        return sp.ImmutableMatrix([list(g.components) for g in self.generators])

    def bracket(self, a: int, b: int) -> VectorField:
        """``[Ẽ_a, Ẽ_b]`` as a vector field."""
        return self.generators[a].bracket(self.generators[b])

    def _structure_from_brackets(self) -> tuple:
        k, n = self.dim, self.chart.dim
        E = self.matrix
        sign = -1 if self.action == "left" else 1
        c = [[[sp.S.Zero] * k for _ in range(k)] for _ in range(k)]
        for a in range(k):
            for b in range(a + 1, k):
                br = self.bracket(a, b).components
                if all(e == 0 or vanishes(e) for e in br):
                    continue
                sol = solve_generic(E.T, list(br))
                if sol.conditions:
                    raise StructureConstantsError(
                        f"[Ẽ{a + 1}, Ẽ{b + 1}] = {tuple(br)} is not a combination of the generators: they do "
                        "not span the Lie algebra of a group action. Add the missing generators or check them."
                    )
                for d, coeff in enumerate(sol.particular):
                    coeff = tidy(coeff)
                    if any(not vanishes(coeff.diff(q)) for q in self.chart.coordinates if coeff.has(q)):
                        raise StructureConstantsError(
                            f"[Ẽ{a + 1}, Ẽ{b + 1}] has the non-constant coefficient {coeff} along Ẽ{d + 1}: "
                            "the generators do not span a Lie algebra (structure constants must be constants)."
                        )
                    c[d][a][b] = sign * coeff
                    c[d][b][a] = -sign * coeff
        return tuple(tuple(tuple(row) for row in mat) for mat in c)

    def moves(self, q) -> bool:
        """True if some generator has a component along ``∂/∂q`` (the group moves the coordinate q)."""
        A = q if isinstance(q, int) else self.chart.index(q)
        return any(not vanishes(self.matrix[a, A]) for a in range(self.dim))

    def complete_lift(self, a: int, f) -> sp.Expr:
        """``Ẽ_a^C(f)`` for f in natural coordinates ``(q, q_dot)``:
        ``Ẽ^A ∂f/∂q^A + u^B ∂_B(Ẽ^A) ∂f/∂u^A`` (docs/theory.rst, The tangent bundle in a frame)."""
        f = sympified(f)
        g = self.generators[a]
        q, u = self.chart.coordinates, self.chart.velocities
        out = g(f)
        for A, EA in enumerate(g.components):
            if EA.is_number:
                continue
            rate = sp.Add(*[uB * EA.diff(qB) for uB, qB in zip(u, q)])
            if rate != 0:
                du = diff_dag(f, u[A])
                if du != 0:
                    out += rate * du
        return out

    def __str__(self):
        gens = "\n".join(f"  E{a + 1} = {g}" for a, g in enumerate(self.generators))
        return f"{self.action} action of a {self.dim}-dimensional group on ({', '.join(map(str, self.chart.coordinates))}):\n{gens}"

"""Classes of virtual displacements for kinematic constraints (Talamucci 2025 §2.3, eq. (20); docs/chetaev.rst).

A class of virtual displacements is a k × n matrix ``β_νA`` of full rank k:
``δq`` is virtual iff ``β_νA δq^A = 0``.  With ideal constraints the
d'Alembert–Lagrange principle then gives (Talamucci 2025, eq. (19) with (20))

    E_A(L) = F_A + λ_ν β_νA,        φ^ν(q, u, t) = 0,

and, solving ``β δq = 0`` for the dependent displacements,
``δq_dep = γ δq_ind`` with ``γ = −β_dep⁻¹ β_ind`` (eq. (21)), the
multiplier-free equations ``E_r + γ_νr E_{m+ν} = F_r + γ_νr F_{m+ν}`` (eq. (22)).

The classes:

* :class:`ChetaevDisplacements` — ``β = ∂φ/∂u`` (the Chetaev rule, eq. (14));
* :class:`LinearDisplacements` — for constraints affine in the velocities,
  ``β = ω`` with ``φ = ω(q) u + c(q)``: δq in the distribution D (docs/nonholonomic.rst);
* :class:`HolonomicDisplacements` — position constraints ``f(q, t) = 0``,
  ``β = ∂f/∂q`` (eq. (12));
* :class:`MatrixDisplacements` — any user-given matrix β (eq. (20)).

For linear constraints the first two coincide, and for ``φ = ḟ`` all of the
first three do (``∂ḟ/∂u = ∂f/∂q``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import sympy as sp

from ..parsing import sympified
from ..algebra import numeric_value, solve_square, vanishes
from ..errors import ConstraintError, DependentConstraintsError, DimensionError, NonlinearConstraintError
from .kinematic import KinematicConstraints, _numeric_rank

__all__ = [
    "VirtualDisplacements",
    "ChetaevDisplacements",
    "LinearDisplacements",
    "HolonomicDisplacements",
    "MatrixDisplacements",
]


class VirtualDisplacements:
    """Base class: a rule giving the matrix ``β_νA`` of the virtual displacements ``β δq = 0``."""

    name = "virtual displacements"

    def raw_matrix(self, constraints: KinematicConstraints) -> sp.ImmutableMatrix:  # pragma: no cover - abstract
        raise NotImplementedError

    def matrix(self, constraints: KinematicConstraints) -> sp.ImmutableMatrix:
        """``β`` (k × n), checked to have rank k on the constraint set C."""
        beta = sp.ImmutableMatrix(self.raw_matrix(constraints))
        k, n = constraints.count, constraints.chart.dim
        if beta.shape != (k, n):
            raise DimensionError(
                f"{self.name}: need a {k} × {n} matrix (one row per constraint, one column per coordinate), "
                f"got {beta.shape[0]} × {beta.shape[1]}."
            )
        for p in constraints.points_on_C():
            M = np.array([[numeric_value(e, p).real for e in beta.row(a)] for a in range(k)])
            if _numeric_rank(M) < k:
                raise DependentConstraintsError(
                    f"{self.name}: the matrix β has rank < {k} on the constraint set, so its rows do not define "
                    f"{k} independent conditions β δq = 0. Give {k} independent rows."
                )
        return beta

    def gamma(self, constraints: KinematicConstraints, dependent: Sequence | None = None) -> sp.Matrix:
        """``γ = −β_dep⁻¹ β_ind`` (k × m): ``δq_dep = γ δq_ind`` (Talamucci 2025, eq. (21)).

        For Chetaev displacements this is ``∂α/∂u_ind`` by implicit differentiation
        of ``φ(q, u_ind, α) = 0`` (eq. (23)).
        """
        beta = self.matrix(constraints)
        dep = constraints.dependent if dependent is None else constraints.check_dependent(dependent)
        ind = [A for A in range(constraints.chart.dim) if A not in dep]
        B_dep = beta.extract(list(range(constraints.count)), list(dep))
        cols = []
        for r in ind:
            sol = solve_square(B_dep, [-beta[a, r] for a in range(constraints.count)])
            if sol is None:
                raise ConstraintError(
                    f"{self.name}: β restricted to the dependent coordinates {list(dep)} is singular; "
                    "choose other dependent velocities."
                )
            cols.append(sol)
        return sp.Matrix(constraints.count, len(ind), lambda nu, j: cols[j][nu])

    def __repr__(self):
        return f"{type(self).__name__}()"


@dataclass(frozen=True, repr=False)
class ChetaevDisplacements(VirtualDisplacements):
    """The Chetaev rule ``(∂φ^ν/∂u^A) δq^A = 0`` (Talamucci 2025, eq. (14))."""

    name = "Chetaev displacements"

    def raw_matrix(self, constraints: KinematicConstraints) -> sp.ImmutableMatrix:
        return constraints.jacobian


@dataclass(frozen=True, repr=False)
class LinearDisplacements(VirtualDisplacements):
    """``ω_νA δq^A = 0`` for constraints ``φ^ν = ω_νA(q, t) u^A + c^ν(q, t)`` (δq ∈ D; docs/nonholonomic.rst).

    Raises
    ------
    NonlinearConstraintError
        If a constraint is not affine in the velocities.
    """

    name = "linear (d'Alembert) displacements"

    def raw_matrix(self, constraints: KinematicConstraints) -> sp.ImmutableMatrix:
        if not constraints.is_linear:
            raise NonlinearConstraintError(
                "linear displacements (δq in the distribution D) need constraints affine in the velocities; "
                "use ChetaevDisplacements or MatrixDisplacements for nonlinear constraints."
            )
        return constraints.jacobian


@dataclass(frozen=True, repr=False)
class HolonomicDisplacements(VirtualDisplacements):
    """``(∂f^ν/∂q^A) δq^A = 0`` for position constraints ``f^ν(q, t) = 0`` (Talamucci 2025, eq. (12)).

    Parameters
    ----------
    functions : sequence of expressions
        ``f^ν(q, t)``, one per kinematic constraint (typically the constraints are
        ``φ = ḟ``, see :meth:`KinematicConstraints.from_positions`).
    """

    functions: tuple = ()
    name = "holonomic displacements"

    def raw_matrix(self, constraints: KinematicConstraints) -> sp.ImmutableMatrix:
        fs = tuple(sympified(f) for f in self.functions)
        chart = constraints.chart
        if len(fs) != constraints.count:
            raise DimensionError(f"{constraints.count} constraints need {constraints.count} functions f, got {len(fs)}.")
        for a, f in enumerate(fs):
            if f.free_symbols & set(chart.velocities):
                raise ConstraintError(f"holonomic displacements: f[{a}] = {f} depends on velocities; give f(q, t).")
            if all(vanishes(f.diff(q)) for q in chart.coordinates):
                raise ConstraintError(f"holonomic displacements: f[{a}] = {f} does not depend on the coordinates.")
        return sp.ImmutableMatrix(len(fs), chart.dim, lambda a, A: fs[a].diff(chart.coordinates[A]))


@dataclass(frozen=True, repr=False)
class MatrixDisplacements(VirtualDisplacements):
    """Virtual displacements ``β_νA δq^A = 0`` for a user-given matrix β (Talamucci 2025, eq. (20)).

    Parameters
    ----------
    beta : k × n matrix
        Entries may depend on ``(q, u, t)``.
    """

    beta: tuple = ()
    name = "user-given displacements"

    def raw_matrix(self, constraints: KinematicConstraints) -> sp.ImmutableMatrix:
        rows = self.beta.tolist() if isinstance(self.beta, sp.MatrixBase) else [list(r) for r in self.beta]
        if not rows:
            raise DimensionError("MatrixDisplacements needs a nonempty matrix beta.")
        return sp.ImmutableMatrix([[sympified(e) for e in r] for r in rows])

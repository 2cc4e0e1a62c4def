"""Chaplygin systems: nonholonomic systems with a principal-connection symmetry (docs/chaplygin.rst, Crampin & Mestdag (2010) §6).

A Lie group G acts freely (and properly) on Q; it is declared by its
*fundamental vector fields* ``Ẽ_a`` (a = 1..dim G).  The system is *Chaplygin*
if

* L is G-invariant: ``Ẽ_a^C(L) = 0`` (complete lifts, docs/theory.rst, The tangent bundle in a frame);
* the constraint distribution D is G-invariant: ``[Ẽ_a, D] ⊂ D``;
* D is the horizontal distribution of a principal connection:
  ``D ⊕ span{Ẽ_a} = TQ`` (rank D + dim G = n and no combination of the
  ``Ẽ_a`` lies in D).

Sign convention for the structure constants (stated once, tested):
``[e_a, e_b] = c^d_ab e_d`` in the Lie algebra 𝔤 of *left*-invariant vector
fields on G.  For a **left** action the map ξ ↦ ξ_Q is an anti-homomorphism,
``[Ẽ_a, Ẽ_b] = −c^d_ab Ẽ_d``; for a **right** action it is a homomorphism,
``[Ẽ_a, Ẽ_b] = +c^d_ab Ẽ_d``.  Example: SE(2) acting on itself (x, y, θ) by
left multiplication has ``Ẽ = (∂x, ∂y, −y∂x + x∂y + ∂θ)``, ``[e_3, e_1] = e_2``
and indeed ``[Ẽ_3, Ẽ_1] = −Ẽ_2``.

The Chaplygin frame: ``X_α`` (α < m) the horizontal lifts of the coordinate
fields of *shape coordinates* (coordinates the group does not move:
``Ẽ_a(r^α) = 0``), i.e. the fields in D with ``dr^β(X_α) = δ^β_α``; ``X_a`` = the
``Ẽ_a``.  Then ``[X_α, X_β] = R^a_αβ X_a`` (the curvature, vertical),
``[X_α, Ẽ_a] = 0`` and the dual ``θ^a`` is the connection form, so the
quasi-velocities ``v^a`` vanish exactly on C.  With ``p_a = X_a^V(L)``:

* Γ_nh solves ``d/dt ∂L_c/∂v^α − X_α(L_c) + R^γ_αβ v^β ∂L_c/∂v^γ + R^a_αβ v^β p_a|_C = 0``;
* the multipliers are ``μ_a = Γ_nh(p_a)`` (momentum is not conserved);
* the section ``σ_a = −p_a|_C``: weak ⇔ strong consistency ⇔
  ``p_a R^a_αβ v^β = 0`` on C (the *Chaplygin condition*);
* ``σ = −p + c`` is strongly consistent iff c are constants of motion of
  Γ_nh (``Γ_nh(c_a) = 0``) and ``(c_a − p_a) R^a_αβ v^β = 0``
  (:meth:`ChaplyginSystem.momentum_sections` searches them in an ansatz);
* the variational Lagrangian ``L̂ = L − p_a v^a`` (Prop. 5): G-invariant, its
  Hessian on C is ``diag(g_αβ, −g_ab)``, regular near C iff L is regular w.r.t.
  D and 𝔤, its Euler–Lagrange field is tangent to C; Prop. 6: that field on C
  is Γ_nh iff the Chaplygin condition holds.  On C,
  ``g_αβ (Γ̂^β − Γ_nh^β) = p_a R^a_αβ v^β``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import (
    adjugate,
    determinant,
    free_symbols,
    generic_rank,
    numerically_zero,
    random_point,
    reduce_if_cheap,
    tidy,
    vanishes,
    xreplace_dag,
)
from ..algebra.expressions import size_exceeds
from ..algebra.coefficients import (NotPolynomial, coefficients_in, drop_nonzero_factors, parameter_equations,
                                   unique_up_to_sign, vanishing_conditions)
from ..algebra.elimination import NumericSystem, solve_in_blocks
from ..constraints.linear import LinearConstraints
from ..errors import (
    IrregularLagrangianError,
    DimensionError,
    NonInvariantDistributionError,
    NonInvariantLagrangianError,
    NotPrincipalConnectionError,
    SymmetryError,
)
from ..geometry.frame import Frame
from ..geometry.lie_group import LieGroupAction
from ..dynamics.lagrangian import Lagrangian, constrained_problem
from ..dynamics.nonholonomic import NonholonomicSystem
from .chaplygin_symmetry import field_invariance, momentum_equivariance, multiplier_equivariance, vakonomic_momenta
from .reduction import ChaplyginReduction
from .sections import excluded_parameters

__all__ = [
    "ChaplyginSystem",
    "ChaplyginVerdict",
    "VariationalLagrangianCheck",
    "MomentumSection",
    "MomentumSectionSearch",
]


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChaplyginVerdict:
    """Consistency of Γ_nh with the vakonomic problem for the section ``σ = −p`` (docs/chaplygin.rst).

    For a Chaplygin system weak and strong consistency coincide for this section:
    both hold iff ``p_a R^a_αβ v^β = 0`` on C.

    Attributes
    ----------
    holds : bool or None
        True if the condition holds identically, False if it fails for every value of
        the parameters, None if it holds only under ``conditions``.
    residuals : tuple
        ``p_a|_C R^a_αβ v^β`` for α < m, functions of ``(q, v^α)``.
    conditions : tuple
        Expressions that must all vanish (in the parameters, or in q for undefined
        functions), empty when ``holds`` is True.
    reason : str
    """

    holds: bool | None
    residuals: tuple
    conditions: tuple
    reason: str

    def __bool__(self):
        return bool(self.holds)

    def to_dict(self) -> dict:
        return {"holds": self.holds, "residuals": [str(r) for r in self.residuals],
                "conditions": [str(c) for c in self.conditions], "reason": self.reason}


@dataclass(frozen=True)
class VariationalLagrangianCheck:
    """Prop. 5 and Prop. 6 of Crampin & Mestdag (2010) for ``L̂ = L − p_a v^a`` (docs/chaplygin.rst).

    Attributes
    ----------
    lagrangian : Lagrangian
        L̂ in the Hamel chart of the Chaplygin frame.
    invariance_residuals : tuple
        ``Ẽ_a^C(L̂)`` (natural coordinates); all zero: L̂ is G-invariant.
    hessian_on_C : sympy.ImmutableMatrix
        The frame Hessian of L̂ on C; Prop. 5: ``diag(g_αβ, −g_ab)``.
    mixed_block_vanishes : bool
        ``∂²L̂/∂v^α∂v^a = 0`` on C.
    regular_D, regular_g : bool
        L regular w.r.t. D (``g_αβ|_C``) and w.r.t. 𝔤 (``g_ab|_C``).
    accelerations_on_C : tuple or None
        ``Γ̂^i`` of the Euler–Lagrange field of L̂ on C (n entries); None if L̂ is singular
        (then the three entries below are None too: Prop. 6 does not apply).
    tangent_to_C : bool or None
        ``Γ̂^a = 0`` on C.
    difference : tuple or None
        ``Γ̂^α − Γ_nh^α`` on C.
    equals_nonholonomic : bool or None
        Prop. 6: the field on C is Γ_nh (iff the Chaplygin condition holds).
    """

    lagrangian: Lagrangian
    invariance_residuals: tuple
    hessian_on_C: sp.ImmutableMatrix
    mixed_block_vanishes: bool
    regular_D: bool
    regular_g: bool
    accelerations_on_C: tuple
    tangent_to_C: bool
    difference: tuple
    equals_nonholonomic: bool

    @property
    def invariant(self) -> bool:
        return all(r == 0 for r in self.invariance_residuals)

    def to_dict(self) -> dict:
        return {
            "lagrangian": str(self.lagrangian.natural_expr()),
            "invariant": self.invariant,
            "hessian_block_diagonal_on_C": self.mixed_block_vanishes,
            "regular_D": self.regular_D,
            "regular_g": self.regular_g,
            "tangent_to_C": self.tangent_to_C,
            "equals_nonholonomic": self.equals_nonholonomic,
        }


@dataclass(frozen=True)
class MomentumSection:
    """A strongly consistent section ``σ = −p + c`` (c constants of motion of Γ_nh), found by the search.

    Attributes
    ----------
    c : tuple
        ``c_a(q, v^α)``, possibly with free constants ``free_constants``.
    section : tuple
        ``σ_a = −p_a|_C + c_a``.
    parameter_values : dict
        Parameter values under which the section works (empty: for all values).
    free_constants : tuple
        Symbols that may take any value.
    verified : bool
        The consistency conditions were checked by substitution.
    """

    c: tuple
    section: tuple
    parameter_values: dict
    free_constants: tuple
    verified: bool

    def to_dict(self) -> dict:
        return {"c": [str(e) for e in self.c], "section": [str(e) for e in self.section],
                "parameter_values": {str(k): str(v) for k, v in self.parameter_values.items()},
                "free_constants": [str(s) for s in self.free_constants], "verified": self.verified}


@dataclass(frozen=True)
class MomentumSectionSearch:
    """Result of :meth:`ChaplyginSystem.momentum_sections`.

    Attributes
    ----------
    ansatz : tuple
        The functions ``f_k(q, v^α)``; ``c_a = Σ_k κ_ak f_k``.
    conditions : tuple
        Conditions on the parameters for a solution to exist (empty if one exists
        for generic parameter values), polynomial numerators.
    sections : tuple of MomentumSection
        The sections found (for generic parameters, or at the special values).
    """

    ansatz: tuple
    conditions: tuple
    sections: tuple

    def to_dict(self) -> dict:
        return {"ansatz": [str(f) for f in self.ansatz], "conditions": [str(c) for c in self.conditions],
                "sections": [s.to_dict() for s in self.sections]}


# ---------------------------------------------------------------------------------------------
# The Chaplygin system
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ChaplyginSystem:
    """A Chaplygin system: invariant L, invariant D, D a principal connection (docs/chaplygin.rst).

    Parameters
    ----------
    lagrangian : Lagrangian
    constraints : LinearConstraints or sequence of expressions
        Linear constraints (their distribution is D).
    action : LieGroupAction or sequence of generator rows
        The fundamental vector fields ``Ẽ_a`` (rows are read as a left action
        with computed structure constants).
    shape_coordinates : sequence, optional
        Coordinates not moved by the group whose horizontal lifts form the
        ``X_α``; by default all coordinates with ``Ẽ_a(q) = 0``.  If there are
        not ``m`` of them the ``X_α`` are another basis of D (Γ_nh, p_a, μ_a, the
        section −p and L̂ do not depend on that choice; only ``[X_α, Ẽ_a] = 0``
        may fail).

    Raises
    ------
    NotPrincipalConnectionError
        If ``rank D + dim G ≠ n`` or some combination of generators lies in D.
    NonInvariantLagrangianError
        If ``Ẽ_a^C(L) ≠ 0``.
    NonInvariantDistributionError
        If ``[Ẽ_a, X] ∉ D`` for some X in D.
    NonFreeActionError, StructureConstantsError
        From :class:`LieGroupAction`.

    Examples
    --------
    The vertical rolling disk, translations in (x, y):

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> chart = Chart("x y theta phi")
    >>> x, y, th, ph = chart.coordinates
    >>> xd, yd, thd, phd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + thd**2 + phd**2) / 2)
    >>> disk = ChaplyginSystem(L, ["x_dot - cos(theta)*phi_dot", "y_dot - sin(theta)*phi_dot"],
    ...                        [[1, 0, 0, 0], [0, 1, 0, 0]])
    >>> disk.shape_coordinates
    (theta, phi)
    >>> disk.consistency().holds            # p_a R^a_αβ v^β = 0: σ = −p works
    True
    """

    lagrangian: Lagrangian
    constraints: LinearConstraints
    action: LieGroupAction
    shape_coordinates: tuple = None
    nonholonomic: NonholonomicSystem = field(default=None, init=False, repr=False)

    def __post_init__(self):
        L = self.lagrangian
        chart, C = constrained_problem(L, self.constraints, LinearConstraints,
                                       lambda chart, c: LinearConstraints.from_expressions(chart, list(c)))
        object.__setattr__(self, "constraints", C)
        if C.is_affine:
            raise NotPrincipalConnectionError(
                "the constraints are affine (θ^a(u) = b^a(q)); a Chaplygin system has linear constraints whose "
                "distribution D is a principal connection."
            )
        G = self.action
        if not isinstance(G, LieGroupAction):
            G = LieGroupAction(chart, list(G))
            object.__setattr__(self, "action", G)
        if G.chart != chart:
            raise DimensionError("the group action lives on another chart than the Lagrangian.")
        n, m, k = chart.dim, C.rank_D, G.dim
        if m + k != n:
            raise NotPrincipalConnectionError(
                f"D ⊕ vertical = TQ needs rank D + dim G = n, but rank D = {m}, dim G = {k}, n = {n}. A Chaplygin "
                "system has as many constraints as group generators."
            )
        omega_E = sp.Matrix(C.forms) * G.matrix.T
        if generic_rank(omega_E) < k:
            raise NotPrincipalConnectionError(
                "some combination of the generators lies in D (the matrix ω^a(Ẽ_b) is singular), so D is not "
                "complementary to the orbits: D is not a principal connection for this action."
            )
        self._check_lagrangian_invariant(L, G)
        base = C.adapted_frame()
        self._check_distribution_invariant(C, G, [base.vector(al) for al in range(m)])
        shape = self._shape(chart, C, G, m)
        object.__setattr__(self, "shape_coordinates", shape)
        if shape is not None:
            group_coords = [q for q in chart.coordinates if q not in shape]
            horizontal = Frame.adapted_to_constraints(chart, C.forms, dependent=group_coords)
            free = [q for q in chart.coordinates if q in shape]  # the X_α come in this (chart) order
            rows = [list(horizontal.vectors.row(free.index(s))) for s in shape]
        else:
            rows = [list(base.vectors.row(al)) for al in range(m)]
        rows += [list(g.components) for g in G.generators]
        frame = Frame(chart, rows, rank_D=m)
        nh = NonholonomicSystem(L, C, frame=frame)
        object.__setattr__(self, "nonholonomic", nh)

    # --- checks -------------------------------------------------------------------------------
    @staticmethod
    def _check_lagrangian_invariant(L: Lagrangian, G: LieGroupAction) -> None:
        Ln = L.natural_expr()
        for a in range(G.dim):
            r = G.complete_lift(a, Ln)
            if not vanishes(r):
                raise NonInvariantLagrangianError(
                    f"the Lagrangian is not invariant under the group: E{a + 1}^C(L) = {tidy(r)} ≠ 0 "
                    f"(E{a + 1} = {G.generators[a]}). A Chaplygin system needs a G-invariant Lagrangian; check "
                    "the generators, or drop the symmetry."
                )

    @staticmethod
    def _check_distribution_invariant(C: LinearConstraints, G: LieGroupAction, spanning) -> None:
        forms = sp.Matrix(C.forms)
        for a, E in enumerate(G.generators):
            for al, Y in enumerate(spanning):
                br = sp.Matrix(E.bracket(Y).components)
                vals = forms * br
                if not all(vanishes(e) for e in vals):
                    raise NonInvariantDistributionError(
                        f"the constraint distribution D is not invariant under the group: [E{a + 1}, Y{al + 1}] "
                        f"leaves D for Y{al + 1} = {Y} in D (ω([E, Y]) = {tuple(tidy(e) for e in vals)}). The "
                        "constraints of a Chaplygin system must be G-invariant."
                    )

    def _shape(self, chart, C, G, m):
        if self.shape_coordinates is not None:
            shape = tuple(chart.coordinates[chart.index(s)] if isinstance(s, (str, sp.Symbol)) else
                          chart.coordinates[s] for s in self.shape_coordinates)
            if len(shape) != m:
                raise DimensionError(f"need {m} shape coordinates (rank D), got {len(shape)}.")
            moved = [s for s in shape if G.moves(s)]
            if moved:
                raise SymmetryError(
                    f"shape coordinates must not be moved by the group, but {moved[0]} is "
                    "(some generator has a component along it)."
                )
        else:
            shape = tuple(q for q in chart.coordinates if not G.moves(q))
            if len(shape) != m:
                return None
        cols = [chart.coordinates.index(q) for q in chart.coordinates if q not in shape]
        if generic_rank(sp.Matrix(C.forms)[:, cols]) < len(cols):
            if self.shape_coordinates is not None:
                raise NotPrincipalConnectionError(
                    f"the constraints cannot be solved for the velocities of {[chart.coordinates[c] for c in cols]}, "
                    "so the shape coordinates given do not parametrise D."
                )
            return None
        return shape

    # --- basic data ------------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        """The Chaplygin frame: ``X_α`` horizontal, then ``X_{m+a} = Ẽ_a``."""
        return self.nonholonomic.frame

    @property
    def m(self) -> int:
        return self.nonholonomic.m

    @property
    def n(self) -> int:
        return self.nonholonomic.n

    @property
    def bundle(self):
        return self.nonholonomic.bundle

    def horizontal_is_invariant(self) -> bool:
        """``[X_α, Ẽ_a] = 0`` for all α, a (true for horizontal lifts of shape coordinate fields)."""
        R, m, n = self.frame.structure, self.m, self.n
        return all(R[k][al][a] == 0 for k in range(n) for al in range(m) for a in range(m, n))

    def curvature(self) -> dict:
        """Nonzero ``R^a_αβ`` (``[X_α, X_β]`` vertical part), 0-based keys ``(a, α, β)``, α < β."""
        return self.nonholonomic.curvature()

    @cached_property
    def momenta(self) -> tuple:
        """``p_a = X_a^V(L) = ∂L/∂v^a`` on TQ (a = m..n−1, i.e. along the generators)."""
        return self.nonholonomic.lagrangian.momenta[self.m:]

    @cached_property
    def momenta_on_C(self) -> tuple:
        """``p_a|_C`` as functions of ``(q, v^α)``."""
        return tuple(reduce_if_cheap(self.nonholonomic.restrict(p), 400) for p in self.momenta)

    def multipliers(self) -> tuple:
        """``μ_a = Γ_nh(p_a)`` on C (docs/chaplygin.rst; equals the multipliers of :meth:`NonholonomicSystem.field`)."""
        f = self.nonholonomic.field()
        return tuple(reduce_if_cheap(f(p), 400) for p in self.momenta)

    def momentum_section(self) -> tuple:
        """The natural section ``σ_a = −p_a|_C``."""
        return tuple(-p for p in self.momenta_on_C)

    # --- consistency with σ = −p ----------------------------------------------------------------
    def chaplygin_condition(self) -> tuple:
        """``p_a|_C R^a_αβ v^β`` for α < m: the residuals of weak (= strong) consistency with σ = −p."""
        return self._weak_residuals(self.momenta_on_C, sign=1)

    def _weak_residuals(self, sigma_like, sign, reduce: bool = True) -> tuple:
        R, m, n = self.frame.structure, self.m, self.n
        v = self.nonholonomic.free_velocities
        out = []
        for al in range(m):
            terms = [sign * sigma_like[a - m] * R[a][al][be] * v[be]
                     for a in range(m, n) for be in range(m) if R[a][al][be] != 0 and sigma_like[a - m] != 0]
            out.append(tidy(sp.Add(*terms)) if reduce else sp.Add(*terms))
        return tuple(out)

    @cached_property
    def _variables(self) -> set:
        return set(self.frame.chart.coordinates) | set(self.nonholonomic.free_velocities)

    def consistency(self) -> ChaplyginVerdict:
        """Weak = strong consistency with σ = −p: ``p_a R^a_αβ v^β = 0`` on C (docs/chaplygin.rst, Prop. 6).

        Returns a verdict with the residuals; if they vanish only for special
        parameter values, ``holds`` is None and ``conditions`` lists the equations
        (with their factors, e.g. ``a*m0``) that must vanish.
        """
        from sympy.core.function import AppliedUndef

        raw = self._weak_residuals(self.momenta_on_C, sign=1, reduce=False)
        res = tuple(r if size_exceeds(r, 400) else tidy(r) for r in raw)  # shown in the verdict
        variables = self._variables
        try:  # exact coefficients over the expression DAG: parameter-only, cheap to factor
            coords, v = self.frame.chart.coordinates, self.nonholonomic.free_velocities
            coeffs = unique_up_to_sign([c for r in raw for c in coefficients_in(r, coords, v)])
        except NotPolynomial:
            coeffs = None
        if coeffs is not None and not any(c.has(AppliedUndef) for c in coeffs):
            if not coeffs:
                return ChaplyginVerdict(True, res, (), "p_a R^a_αβ v^β = 0 on C: σ = −p is strongly consistent")
            conds = _drop_implied(unique_up_to_sign(self._admissible([drop_nonzero_factors(c, variables)
                                                                       for c in coeffs])))
            if not conds or any(c.is_number for c in conds):
                return ChaplyginVerdict(False, res, (), "p_a R^a_αβ v^β ≠ 0 on C for all parameter values: "
                                        "σ = −p is not consistent")
            return ChaplyginVerdict(None, res, conds, "σ = −p is consistent iff " + _describe(conds))
        # functional conditions (undefined functions of q) or a residual outside the polynomial class
        if all(vanishes(r) for r in res):
            return ChaplyginVerdict(True, res, (), "p_a R^a_αβ v^β = 0 on C: σ = −p is strongly consistent")
        by_velocity = vanishing_conditions(res, set(self.nonholonomic.free_velocities))
        if any(c.has(AppliedUndef) for c in by_velocity):
            conds = tuple(drop_nonzero_factors(c, variables) for c in by_velocity)
            text = " and ".join(f"{c} = 0" for c in conds)
            return ChaplyginVerdict(None, res, conds, f"σ = −p is consistent iff {text}")
        conds = tuple(unique_up_to_sign(self._admissible(parameter_equations(by_velocity, variables))))
        if not conds or any(c.is_number for c in conds):
            return ChaplyginVerdict(False, res, (), "p_a R^a_αβ v^β ≠ 0 on C for all parameter values: "
                                    "σ = −p is not consistent")
        return ChaplyginVerdict(None, res, conds, "σ = −p is consistent iff " + _describe(conds))

    def _admissible(self, conds) -> list:
        """Drop from each condition the parameter factors p whose vanishing is not a legitimate
        special case: the parameters the consistency verdicts exclude
        (:func:`anholo.analysis.sections.excluded_parameters`: those entering the frame or the
        constraints, whose vanishing changes D, and those making L singular or irregular w.r.t. D),
        and those making L irregular w.r.t. 𝔤 (the Chaplygin theory assumes regularity w.r.t. D
        and 𝔤, Prop. 5 of Crampin & Mestdag (2010)).  A condition left without factors cannot
        hold: it becomes the number 1."""
        excluded = excluded_parameters(self.nonholonomic)
        out = []
        for c in conds:
            keep = []
            for f in sp.Mul.make_args(sp.factor(c)):
                base = f.base if f.is_Pow and f.exp.is_positive else f
                if base.is_Symbol and base in self.frame.chart.parameters:
                    if base in excluded or not self._regular_at({base: 0}):
                        continue
                keep.append(base)
            out.append(sp.Mul(*keep))
        return out

    @cached_property
    def _regularity_cache(self) -> dict:
        return {}

    def _regular_at(self, sub: dict) -> bool:
        """L stays regular w.r.t. D and 𝔤 at the parameter values ``sub`` (Prop. 5's assumptions)."""
        key = tuple(sorted(sub.items(), key=lambda kv: kv[0].name))
        if key not in self._regularity_cache:
            self._regularity_cache[key] = self._regular_at_uncached(sub)
        return self._regularity_cache[key]

    def _regular_at_uncached(self, sub: dict) -> bool:
        nh, m = self.nonholonomic, self.m
        blocks = [nh.hessian_D, nh.lagrangian.hessian.applyfunc(nh.restrict)[m:, m:]]
        try:
            return all(generic_rank(B.xreplace(sub)) == B.rows for B in blocks)
        except ValueError:  # a division by zero: the value is outside the system's domain
            return False

    # --- the variational Lagrangian ---------------------------------------------------------------
    @cached_property
    def variational_lagrangian(self) -> Lagrangian:
        """``L̂ = L − p_a v^a`` on TQ (Prop. 5 of Crampin & Mestdag (2010)), in the Chaplygin frame's Hamel chart."""
        nh = self.nonholonomic
        v = nh.bundle.quasi_velocities
        expr = nh.lagrangian.expr - sp.Add(*[p * v[self.m + a] for a, p in enumerate(self.momenta)])
        return Lagrangian(nh.bundle, sp.expand(expr))

    def check_variational_lagrangian(self) -> VariationalLagrangianCheck:
        """Prop. 5 (invariance, Hessian on C, regularity, tangency to C) and Prop. 6 for L̂.

        Raises
        ------
        IrregularLagrangianError
            If L̂ is not regular on C (L not regular w.r.t. D or 𝔤).
        """
        nh, m, n = self.nonholonomic, self.m, self.n
        Lhat = self.variational_lagrangian
        G = self.action
        Ln = Lhat.natural_expr()
        inv = tuple(sp.S.Zero if vanishes(r) else tidy(r) for r in (G.complete_lift(a, Ln) for a in range(G.dim)))
        H = Lhat.hessian.applyfunc(lambda e: reduce_if_cheap(nh.restrict(e), 400))
        mixed = all(vanishes(H[al, a]) for al in range(m) for a in range(m, n))
        regular_D = generic_rank(H[:m, :m]) == m
        gab = nh.lagrangian.hessian.applyfunc(nh.restrict)[m:, m:]
        regular_g = generic_rank(gab) == n - m
        try:
            field = Lhat.euler_lagrange_field()
        except IrregularLagrangianError:  # L̂ singular (L not regular w.r.t. 𝔤): Prop. 6 does not apply
            return VariationalLagrangianCheck(Lhat, inv, sp.ImmutableMatrix(H), mixed, regular_D, regular_g,
                                              None, None, None, None)
        acc = tuple(reduce_if_cheap(nh.restrict(a), 400) for a in field.accelerations)
        tangent = all(vanishes(a) for a in acc[m:])
        gamma_nh = nh.field().accelerations
        diff = tuple(a - g for a, g in zip(acc[:m], gamma_nh))
        equal = all(vanishes(d) for d in diff)
        return VariationalLagrangianCheck(Lhat, inv, sp.ImmutableMatrix(H), mixed, regular_D, regular_g,
                                          acc, tangent, diff, equal)

    # --- sections −p + c -----------------------------------------------------------------------------
    def momentum_sections(self, ansatz: Sequence, solve_for=None) -> MomentumSectionSearch:
        """Search strongly consistent sections ``σ = −p + c`` with ``c_a = Σ_k κ_ak f_k`` (docs/chaplygin.rst).

        The conditions are (docs/consistency.rst with ``μ_b = Γ_nh(p_b)`` and ``R^a_bβ = 0``):
        ``Γ_nh(c_b) = 0`` (c constants of motion) and ``(c_a − p_a) R^a_αβ v^β = 0`` on
        C.  They are linear in the unknown constants ``κ``; their coefficients of the
        monomials in ``(q, v^α, sin, cos, …)`` (see :func:`vanishing_conditions`) give a
        linear system solved at a generic parameter point.  If it is solvable only
        for special parameter values, the solvability conditions are returned and,
        for the parameter ``solve_for`` (default: each parameter of the conditions
        in turn until one gives a section), the special values are found, the system
        re-solved there, and every section verified by substitution.

        Parameters
        ----------
        ansatz : sequence of expressions
            Functions ``f_k`` of ``(q, v^α)``, e.g. ``[v1, v2, cos(theta)*v1, …]``.
        solve_for : Symbol or str, optional
            The parameter to solve the solvability conditions for.
        """
        nh = self.nonholonomic
        chart = self.frame.chart
        funcs = tuple(sympified(f) for f in ansatz)
        k = self.n - self.m
        kappa = [[sp.Dummy(f"kappa{a}_{j}") for j in range(len(funcs))] for a in range(k)]
        c = [sp.Add(*[kk * f for kk, f in zip(kappa[a], funcs)]) for a in range(k)]
        unknowns = [s for row in kappa for s in row]
        residuals = self._section_residuals(c)
        eqs = self._coefficient_equations(residuals)
        A, b = sp.linear_eq_to_matrix(eqs, unknowns)
        sol = solve_in_blocks(A, list(b))
        params = [p for p in chart.parameters]
        if not sol.conditions:
            found = [self._section_from(sol, kappa, c, {})]
            return MomentumSectionSearch(funcs, (), tuple(s for s in found if s is not None))
        conds = tuple(dict.fromkeys(sp.factor(sp.fraction(sp.cancel(x))[0]) for x in sol.conditions))
        conds = tuple(unique_up_to_sign(self._admissible(
            [drop_nonzero_factors(x, self._variables) for x in conds])))
        if solve_for is not None:
            targets = [chart.parameters[[p.name for p in params].index(str(solve_for))]]
        else:
            targets = [p for p in params if any(x.has(p) for x in conds)]
        sections = []
        numeric = NumericSystem(A, list(b))
        for p in targets:
            for value in self._special_values(p, conds, sol):
                sub = {p: value}
                if not numeric.solvable(sub) or not self._regular_at(sub):
                    continue  # no solution there (numerically clear), or outside Prop. 5's assumptions
                sol2 = sol.at(A, b, sub)
                if sol2.conditions:
                    continue
                s = self._section_from(sol2, kappa, [e.xreplace(sub) for e in c], sub)
                if s is not None:
                    sections.append(s)
            if sections:
                break
        return MomentumSectionSearch(funcs, conds, tuple(sections))

    def _coefficient_equations(self, residuals) -> list:
        """The coefficients of the residuals in ``(q, v^α, sin, cos, …)``: exact, over the expression DAG
        (:func:`coefficients_in`; no tree expansion), or by :func:`vanishing_conditions` outside its class."""
        coords, v = self.frame.chart.coordinates, self.nonholonomic.free_velocities
        try:
            eqs = []
            for r in residuals:
                eqs += coefficients_in(r, coords, v)
            return unique_up_to_sign(eqs)
        except NotPolynomial:
            return vanishing_conditions(residuals, self._variables, factor=False)

    @cached_property
    def _scaled_field(self) -> tuple:
        """``(det g, det g · Γ^α, q̇^A)`` on C from the implicit form ``g Γ = F`` of Γ_nh:
        ``det g · Γ = adj(g) F`` is polynomial in the entries of ``g`` and ``F`` (no division)."""
        nh = self.nonholonomic
        form = nh.implicit_form(multipliers=False)
        g, F, m = form.matrix, form.rhs, nh.m
        det, adj = determinant(g), adjugate(g)
        num = tuple(sp.Add(*[adj[al, be] * F[be] for be in range(m) if adj[al, be] != 0 and F[be] != 0])
                    for al in range(m))
        X, vC = nh.frame.vectors, nh.velocities_on_C
        qdot = tuple(sp.Add(*[X[j, A] * vC[j] for j in range(nh.n) if X[j, A] != 0 and vC[j] != 0])
                     for A in range(nh.n))
        return det, num, qdot

    def _scaled_rate(self, f) -> sp.Expr:
        """``det g · Γ_nh(f)`` on C for a function f of ``(q, v^α)``: it vanishes iff ``Γ_nh(f)`` does."""
        nh = self.nonholonomic
        det, num, qdot = self._scaled_field
        q, v = nh.frame.chart.coordinates, nh.free_velocities
        along = sp.Add(*[qd * f.diff(x) for qd, x in zip(qdot, q) if qd != 0])
        return det * along + sp.Add(*[G * f.diff(va) for G, va in zip(num, v) if G != 0])

    def _section_residuals(self, c) -> list:
        weak = self._weak_residuals([ci - p for ci, p in zip(c, self.momenta_on_C)], sign=1, reduce=False)
        return list(weak) + [self._scaled_rate(sympified(ci)) for ci in c]

    @staticmethod
    def _special_values(p, conds, sol) -> list:
        real = sp.Dummy(p.name, real=True)
        vals = []
        factors = dict.fromkeys(f for x in conds for f in _factors_in(sp.factor(x), p))
        # zeros of denominators of the generic solution: pivots that may vanish there
        dens = dict.fromkeys(sp.fraction(sp.cancel(e))[1] for e in sol.combined()[0] if e != 0 and e.has(p))
        for den in dens:
            factors.update(dict.fromkeys(_factors_in(sp.factor(den), p)))
        for fct in factors:
            vals.extend(_real_roots(fct.xreplace({p: real}), real))
        out = []
        for v in vals:
            v = v.xreplace({real: p})
            if p.is_positive and v.is_negative:
                continue  # excluded by the parameter's sign (zero stays, as a limiting case)
            if v not in out:
                out.append(v)
        return out

    def _section_from(self, sol, kappa, c, sub) -> MomentumSection | None:
        k = len(kappa)
        unknowns = [s for row in kappa for s in row]
        particular, directions = sol.combined()
        free = [sp.Symbol(f"c_free{j + 1}", real=True) for j in range(len(directions))]
        values = list(particular)
        for s, d in zip(free, directions):
            values = [v + s * e for v, e in zip(values, d)]
        assign = {u: val if val.is_Atom else sp.cancel(val) for u, val in zip(unknowns, values)}
        cvals = tuple(sp.collect(sp.expand(xreplace_dag(ci, assign)), free) if free else
                      sp.expand(xreplace_dag(ci, assign)) for ci in c)
        residuals = [xreplace_dag(r, sub) for r in self._section_residuals(list(cvals))]
        rng = random.Random(11)
        points = [random_point(free_symbols(residuals), rng) for _ in range(3)]
        ok = all(numerically_zero(r, points, tol=1e-10) for r in residuals)
        if not ok:
            return None
        momenta = tuple(p.xreplace(sub) for p in self.momenta_on_C)
        section = tuple(ci - p for ci, p in zip(cvals, momenta))
        used = tuple(s for s in free if any(ci.has(s) for ci in cvals))
        return MomentumSection(cvals, section, dict(sub), used, ok)

    def section_in(self, nh: NonholonomicSystem, values: Sequence) -> tuple:
        """The components of a section ``σ_a`` (this Chaplygin frame) in the adapted frame of ``nh``.

        Both coframes' last rows span D°: ``θ^a = T^a_b θ'^b`` with ``T^a_b = θ^a(X'_b)``, so
        ``σ'_b = σ_a T^a_b``; on C, ``v^α = θ^α(X'_β) v'^β`` rewrites the functions of
        ``(q, v^α)`` in the other frame's free quasi-velocities.
        """
        if nh.frame.chart != self.frame.chart or nh.m != self.m:
            raise DimensionError("the other system must have the same chart and the same rank of D.")
        m, n = self.m, self.n
        th, X2 = self.frame.coframe, nh.frame.vectors
        v, v2 = self.nonholonomic.free_velocities, nh.free_velocities
        sub = {v[al]: sp.Add(*[tidy(sum(th[al, A] * X2[be, A] for A in range(n))) * v2[be] for be in range(m)])
               for al in range(m)}
        vals = [xreplace_dag(sympified(e), sub) for e in values]
        T = [[tidy(sum(th[a, A] * X2[b, A] for A in range(n))) for b in range(m, n)] for a in range(m, n)]
        return tuple(reduce_if_cheap(sp.Add(*[vals[a] * T[a][b] for a in range(n - m) if T[a][b] != 0]), 400)
                     for b in range(n - m))

    def default_ansatz(self) -> tuple:
        """Functions for :meth:`momentum_sections`: the free velocities times
        ``{1, sin q, cos q (q in trigonometric terms)} ∪ {moved coordinates} ∪`` their products."""
        chart = self.frame.chart
        exprs = list(self.frame.vectors) + [self.nonholonomic.lagrangian.expr]
        trig_args = sorted({f.args[0] for e in exprs for f in sympified(e).atoms(sp.sin, sp.cos)
                            if f.args[0].free_symbols & set(chart.coordinates)}, key=sp.default_sort_key)
        base = [sp.S.One] + [g(a) for a in trig_args for g in (sp.cos, sp.sin)]
        moved = [q for q in chart.coordinates if self.action.moves(q)
                 and not any(a.has(q) for a in trig_args)]
        funcs = base + [q * b for q in moved for b in base]
        return tuple(f * v for f in funcs for v in self.nonholonomic.free_velocities)

    # --- symmetry and reduction (docs/reduction.rst) ------------------------------------------------
    def symmetry_checks(self) -> tuple:
        """``(momentum_equivariance, multiplier_equivariance, field_invariance, vakonomic_momenta)`` of
        :mod:`anholo.analysis.chaplygin_symmetry` for this system."""
        return (momentum_equivariance(self), multiplier_equivariance(self), field_invariance(self),
                vakonomic_momenta(self))

    def reduction(self) -> ChaplyginReduction:
        """The reduced equations on the shape space (:class:`~anholo.analysis.reduction.ChaplyginReduction`)."""
        return ChaplyginReduction(self)

    def __str__(self):
        return f"Chaplygin system: {self.nonholonomic}; {self.action}"


def _factors_in(expr, p) -> list:
    """The factors of a factored expression that contain ``p`` (powers by their bases)."""
    out = []
    for f in sp.Mul.make_args(expr):
        f = f.base if f.is_Pow and f.exp.is_Integer else f
        if f.has(p):
            out.append(f)
    return out


def _real_roots(f, x) -> list:
    """Roots of ``f`` in ``x``: linear and quadratic factors by formula (no ``solve`` with its
    simplification), others by :func:`sympy.roots`, else ``solve`` without simplification."""
    try:
        poly = sp.Poly(f, x)
    except sp.PolynomialError:
        return list(sp.solve(f, x, simplify=False))
    if poly.degree() == 1:
        c1, c0 = poly.all_coeffs()
        return [sp.cancel(-c0 / c1)]
    found = sp.roots(poly, filter=None)
    if sum(found.values()) == poly.degree():
        return list(found)
    return list(sp.solve(f, x, simplify=False))


def _drop_implied(conds) -> tuple:
    """The conditions without those implied by another one: ``c`` is dropped when the (square-free)
    factors of another condition are among its own (then that one vanishing makes ``c`` vanish)."""
    factors = [frozenset(f.base if f.is_Pow else f for f in sp.Mul.make_args(c) if not f.is_number) for c in conds]
    keep = []
    for i, c in enumerate(conds):
        implied = any(j != i and factors[j] <= factors[i] and (factors[j] != factors[i] or j < i)
                      for j in range(len(conds)))
        if not implied:
            keep.append(c)
    return tuple(keep)


def _describe(conds) -> str:
    parts = []
    for c in conds:
        factors = [f.base if f.is_Pow else f for f in sp.Mul.make_args(sp.factor(c))]
        factors = [f for f in factors if not f.is_number]
        parts.append(" or ".join(f"{f} = 0" for f in factors) if len(factors) > 1 else f"{c} = 0")
    return " and ".join(f"({p})" if " or " in p and len(parts) > 1 else p for p in parts)

"""Vakonomic (variational nonholonomic) dynamics in an adapted frame (§4 of Crampin & Mestdag (2010); docs/theory.rst, *Vakonomic dynamics*).

The extended Lagrangian ``L̄ = L + λ_a v^a`` on ``D° ×_Q TQ`` (λ_a the components
of a covector in D° with respect to the coframe ``θ^a``; in coordinates the
multiplication rule ``L + λ_a θ^a(u)``) is singular; its Euler–Lagrange
solutions live on C = {v^a = 0}.  On C, for ``Γ̄ = v^β X_β^C + B^i X_i^V + Λ_a ∂/∂λ_a``
(``Λ_a = dλ_a/dt``), with ``Γ̄(p_j) = v^β X_β(p_j) + B^i g_ij`` and
``X_j^C(L)|_C = X_j(L) − R^k_jβ v^β p_k``::

    (α)  Γ̄(p_α) − X_α^C(L) + λ_a R^a_αβ v^β = 0
    (b)  Γ̄(p_b) − X_b^C(L) + Λ_b + λ_a R^a_bβ v^β = 0

The field tangent to C has ``B^a = 0``; then (α) fixes ``B^α`` (L regular w.r.t. D)
and (b) fixes ``Λ``: this is :meth:`VakonomicSystem.field`, a field on
``(q, v^α, λ)``.  For a *section* ``λ_a = σ_a(q, v^α)`` the same equations with
``λ = σ`` give ``Γ_σ`` (Prop. 4), which is tangent to the image of σ iff

    T_b(σ) := Γ_σ(σ_b) + Γ_σ(p_b) − X_b^C(L) + σ_a R^a_bβ v^β = 0  on C.

Only linear constraints are treated here (C a vector subbundle).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import sympy as sp

from ..algebra import generic_rank, invert, reduce_if_cheap, solve_square, xreplace_dag
from ..algebra.differentiation import diff_dag
from ..algebra.implicit import ImplicitForm
from ..errors import ArgumentError, ConstraintError, DimensionError, IrregularLagrangianError
from ..parsing import as_expressions, as_sequence, chart_names
from ..algebra.printing import EquationDisplay
from .nonholonomic import NonholonomicSystem

__all__ = ["VakonomicSystem", "VakonomicField"]


@dataclass(frozen=True, eq=False)
class VakonomicSystem:
    """The vakonomic problem of a constrained Lagrangian system (docs/theory.rst, *Vakonomic dynamics*).

    Affine constraints ``v^a = β^a(q)`` (a ball on a rotating table) are treated by the same
    multiplication rule with the extended Lagrangian ``L + λ_b (v^b − β^b)``: each equation gains
    the term ``λ_b X_j(β^b)``, and the motion runs on C, where ``v^a = β^a``, with
    ``v^j = (v^α, β^a)``.

    Parameters
    ----------
    constrained : NonholonomicSystem
        L, linear constraints and the adapted frame.
    multipliers : sequence of Symbol or str, optional
        Names of the multipliers ``λ_a`` (frame components, w.r.t. ``θ^a``);
        default ``lambda1, lambda2, …``.

    Examples
    --------
    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian, NonholonomicSystem
    >>> chart = Chart("x y z")
    >>> xd, yd, zd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)
    >>> vak = VakonomicSystem(NonholonomicSystem(L, ["z_dot - y*x_dot"]))
    >>> field = vak.field()
    >>> field.accelerations
    ((lambda1*v2 - v1*v2*y)/(y**2 + 1), -lambda1*v1)
    >>> field.multiplier_rates
    ((-lambda1*v2*y - v1*v2)/(y**2 + 1),)
    """

    constrained: NonholonomicSystem
    multipliers: tuple = None

    def __post_init__(self):
        nh = self.constrained
        if not isinstance(nh, NonholonomicSystem):
            raise ArgumentError(f"VakonomicSystem: expected a NonholonomicSystem, got {type(nh).__name__}.")
        k = nh.n - nh.m
        names = self.multipliers or tuple(f"lambda{a + 1}" for a in range(k))
        if isinstance(names, str):
            names = names.replace(",", " ").split()
        lam = tuple(sp.Symbol(s, real=True) if isinstance(s, str) else s for s in as_sequence(names, "multipliers"))
        if any(not isinstance(s, sp.Symbol) for s in lam):
            raise ArgumentError("multipliers: expected names or sympy Symbols, one per constraint.")
        if len(lam) != k:
            raise DimensionError(f"need {k} multiplier symbols (one per constraint), got {len(lam)}.")
        taken = set(nh.bundle.coordinates) | set(nh.frame.chart.velocities) | set(nh.frame.chart.parameters)
        if set(lam) & taken:
            raise DimensionError(f"multiplier names clash with other symbols: {sorted(map(str, set(lam) & taken))}.")
        object.__setattr__(self, "multipliers", lam)

    def _names(self) -> dict:
        """The symbols an expression given to this system may use by name: q, q_dot, parameters, v, λ."""
        nh = self.constrained
        return chart_names(nh.frame.chart, nh.bundle.quasi_velocities, self.multipliers)

    @property
    def m(self) -> int:
        return self.constrained.m

    @property
    def n(self) -> int:
        return self.constrained.n

    @cached_property
    def _hessian_columns_D(self) -> sp.Matrix:
        """``g_iβ|_C = ∂(p_i|_C)/∂v^β`` (n × m; for linear constraints restriction and ∂/∂v^β commute)."""
        nh = self.constrained
        p, v = nh._momenta_on_C, nh.free_velocities
        gD = nh.hessian_D
        return sp.Matrix(self.n, self.m, lambda i, be: gD[i, be] if i < self.m
                         else reduce_if_cheap(diff_dag(p[i], v[be]), 400))

    def _equation_terms(self, j: int, lam: Sequence) -> sp.Expr:
        """``v^β X_β(p_j) − X_j^C(L)|_C + λ_a R^a_jβ v^β`` (everything in (α)/(b) but the B- and Λ-terms)."""
        nh = self.constrained
        m = self.m
        out = nh._along(nh._momenta_on_C[j]) - nh._force_terms(j)
        for b, beta in enumerate(nh.constrained_values):  # affine constraints: −X_j(L̄) ∋ λ_b X_j(β^b)
            if beta != 0 and lam[b] != 0:
                out += lam[b] * nh.frame.apply(j, beta)
        if nh._forcing is not None:  # forces added to E(L + λφ) = Q (docs/forces.rst), and −∂p_j/∂t
            out -= nh._forcing[j]
        for a in range(m, self.n):
            rv = nh._rv(a, j)
            if rv != 0 and lam[a - m] != 0:
                out += lam[a - m] * rv
        return out

    @cached_property
    def _terms(self) -> tuple:
        """``_equation_terms(j, λ)`` for the multiplier symbols ``λ`` (j < n): shared by the field and its implicit form."""
        return tuple(self._equation_terms(j, self.multipliers) for j in range(self.n))

    def _solve(self, lam: Sequence) -> tuple:
        """``(B^α, Λ_b)`` of the field tangent to C for multiplier values ``lam`` (docs/theory.rst, *Vakonomic dynamics*)."""
        m, n = self.m, self.n
        g = self._hessian_columns_D
        terms = self._terms if tuple(lam) == self.multipliers else None
        rest = [terms[al] if terms is not None else self._equation_terms(al, lam) for al in range(m)]
        B = solve_square(self.constrained.hessian_D, [-r for r in rest]) if m else ()
        if B is None:
            raise IrregularLagrangianError(
                "the Lagrangian is not regular with respect to D (g_αβ on C is singular); the vakonomic "
                "field tangent to C is not determined."
            )
        Lam = []
        for b in range(m, n):
            gB = sp.Add(*[g[b, be] * B[be] for be in range(m) if g[b, be] != 0])
            Lam.append(reduce_if_cheap(-((terms[b] if terms is not None else self._equation_terms(b, lam)) + gB), 200))
        return tuple(B), tuple(Lam)

    def field(self) -> "VakonomicField":
        """The vakonomic field tangent to C on ``(q, v^α, λ)``: ``v̇^α = B^α``, ``λ̇_b = Λ_b`` (Prop. 3 with B^a = 0)."""
        B, Lam = self._solve(self.multipliers)
        return VakonomicField(self, B, Lam)

    @cached_property
    def multiplier_rate_symbols(self) -> tuple:
        """``lambda1_dot, …``: the unknowns of :meth:`implicit_form` standing for the multiplier rates."""
        return tuple(sp.Symbol(f"{lam.name}_dot", real=True) for lam in self.multipliers)

    def implicit_form(self, written: bool = False) -> ImplicitForm:
        """The vakonomic field tangent to C as the linear system ``M x = F`` it solves (no symbolic inversion).

        Unknowns ``x = (v̇^1..v̇^m, λ̇_1..λ̇_k)``; with ``B^a = 0`` (tangency to C) the
        equations (α), (b) of Prop. 3 of Crampin & Mestdag (2010) (docs/theory.rst) read::

            g_αβ v̇^β       = −(v^j X_j(p_α) − X_α^C(L)|_C + λ_a R^a_αj v^j)       (α < m)
            g_bβ v̇^β + λ̇_b = −(v^j X_j(p_b) − X_b^C(L)|_C + λ_a R^a_bj v^j)       (b ≥ m)

        with ``g_iβ = ∂(p_i|_C)/∂v^β``, ``p_i = ∂L/∂v^i`` on C and ``v^j = (v^α, β^a)``.  Affine
        constraints ``v^a = β^a(q)`` add ``λ_b X_i(β^b)`` inside each bracket (the extended
        Lagrangian ``L + λ_b (v^b − β^b)``); forces ``F_i`` and an explicit
        time add ``F_i|_C − ∂(p_i|_C)/∂t`` to the right-hand sides, as in :meth:`field`
        (the convention ``E(L + λφ) = Q`` of docs/forces.rst).  ``M`` is block lower-triangular.

        With ``written=True`` the multipliers are those of the multiplication rule
        ``L + λ'_a φ_a`` for the constraints as written: ``λ_b = λ'_c M^c_b``
        (``M^c_b = ω^c(X_b)``, :attr:`NonholonomicSystem.form_matrix`), so
        ``λ̇_b = λ̇'_c M^c_b + λ'_c Ṁ^c_b`` (``Ṁ`` the derivative along the motion) and the
        rows b become ``g_bβ v̇^β + M^c_b λ̇'_c = −(…)|_{λ = λ'M} − λ'_c Ṁ^c_b``; the symbols
        ``λ'`` are the same Symbols as the frame multipliers (as in
        :meth:`VakonomicField.in_written_multipliers`).
        """
        key = "_implicit_written" if written else "_implicit_frame"
        if key in self.__dict__:
            return self.__dict__[key]
        nh, m, n = self.constrained, self.m, self.n
        k = n - m
        g = self._hessian_columns_D
        A = sp.Matrix(nh.form_matrix)
        if not written or A == sp.eye(k):
            terms = self._terms
            corner = sp.eye(k)
            extra = (sp.S.Zero,) * k
        else:
            # frame multipliers λ = λ' M, substituted at once (the terms are linear in λ)
            frame_of_written = dict(zip(self.multipliers, sp.Matrix([list(self.multipliers)]) * A))
            terms = tuple(xreplace_dag(t, frame_of_written) for t in self._terms)
            corner = A.T
            Adot = A.applyfunc(nh._along)
            extra = tuple(sp.Add(*[self.multipliers[c] * Adot[c, b] for c in range(k) if Adot[c, b] != 0])
                          for b in range(k))
        M = sp.zeros(n, n)
        for i in range(n):
            for be in range(m):
                M[i, be] = g[i, be]
        M[m:, m:] = corner
        rhs = tuple(-t for t in terms[:m]) + tuple(-terms[m + b] - extra[b] for b in range(k))
        vdot = nh.bundle.quasi_velocity_rates[:m]
        what = "written" if written else "frame"
        form = ImplicitForm(tuple(vdot) + self.multiplier_rate_symbols, M, rhs,
                            f"the vakonomic field on C and its multiplier rates ({what} multipliers)")
        self.__dict__[key] = form
        return form

    @cached_property
    def hessian_on_C(self) -> sp.ImmutableMatrix:
        """The full frame Hessian ``g_ij = ∂²L/∂v^i∂v^j`` on C (n × n)."""
        nh = self.constrained
        v = nh.bundle.quasi_velocities
        gD = self._hessian_columns_D
        n, m = self.n, self.m

        def entry(i, j):
            if j < m:
                return gD[i, j]
            if i < m:
                return gD[j, i]
            return reduce_if_cheap(nh.restrict(nh.lagrangian.expr.diff(v[i], v[j])), 400)

        return sp.ImmutableMatrix(n, n, entry)

    def schur_complement(self) -> sp.ImmutableMatrix:
        """``S_bc = g_bc − g_bα g^αβ g_βc`` on C (k × k): L is regular with respect to D^⊥ iff S is
        nonsingular (docs/theory.rst, *Vakonomic dynamics*; with g_αβ regular, equivalently the full g is nonsingular on C)."""
        g, m, n = self.hessian_on_C, self.m, self.n
        gDD = g[:m, :m]
        cols = [solve_square(gDD, [g[al, c] for al in range(m)]) if m else () for c in range(m, n)]
        if any(col is None for col in cols):
            raise IrregularLagrangianError("the Lagrangian is not regular with respect to D (g_αβ on C is singular).")
        return sp.ImmutableMatrix(n - m, n - m, lambda b, c: reduce_if_cheap(
            g[m + b, m + c] - sp.Add(*[g[m + b, al] * cols[c][al] for al in range(m)]), 400))

    def is_regular_perp(self) -> bool:
        """True if L is regular with respect to D^⊥ (the Schur complement is generically nonsingular)."""
        S = self.schur_complement()
        return generic_rank(S) == S.rows if S.rows else True

    def field_for_rates(self, rates: Sequence) -> tuple:
        """Prop. 3: for given multiplier rates ``Λ_b`` the vakonomic equations (α), (b) fix all ``B^i``.

        Solves ``g_ij B^j = −(v^β X_β(p_i) − X_i^C(L) + λ_a R^a_iβ v^β) − [i ≥ m] Λ_i`` on C with the
        full Hessian g (docs/theory.rst, *Vakonomic dynamics*).  ``B^a ≠ 0`` means the motion leaves C: only the rates of
        :meth:`field` keep it on C.  Returns ``(B^1..B^n)``.

        Raises
        ------
        IrregularLagrangianError
            If L is not regular with respect to D^⊥ (then Λ does not determine B).
        """
        rates = as_expressions(rates, self._names(), where="rates")
        if len(rates) != self.n - self.m:
            raise DimensionError(f"need {self.n - self.m} multiplier rates, got {len(rates)}.")
        if not self.is_regular_perp():
            raise IrregularLagrangianError(
                "the Lagrangian is not regular with respect to D^⊥: the Schur complement "
                "g_bc − g_bα g^αβ g_βc of its Hessian on C is singular, so given multiplier rates do not "
                "determine the vakonomic field (Prop. 3). Check that L carries kinetic energy in the "
                "constrained directions."
            )
        m = self.m
        rhs = [-self._equation_terms(i, self.multipliers) - (rates[i - m] if i >= m else 0) for i in range(self.n)]
        B = solve_square(self.hessian_on_C, rhs)
        return tuple(B)

    def section_field(self, sigma: Sequence) -> "SectionField":
        """``Γ_σ`` for a section ``λ_a = σ_a(q, v^α)`` and its tangency residual ``T(σ)`` (Prop. 4)."""
        sigma = as_expressions(sigma, self._names(), where="sigma")
        if len(sigma) != self.n - self.m:
            raise DimensionError(f"a section needs {self.n - self.m} components, got {len(sigma)}.")
        B, Lam = self._solve(sigma)
        nh = self.constrained
        v = nh.free_velocities
        residual = []
        for b, s in enumerate(sigma):  # T_b(σ) = Γ_σ(σ_b) − Λ_b(σ)
            rate = nh._along(s) + sp.Add(*[Bi * s.diff(vi) for Bi, vi in zip(B, v) if Bi != 0])
            residual.append(reduce_if_cheap(rate - Lam[b], 200))
        return SectionField(self, sigma, B, tuple(residual))

    def coordinate_multipliers(self) -> tuple:
        """``λ'`` of the multiplication rule ``L + λ'_a φ_a`` for the constraints as written, in terms of
        the frame multipliers: ``λ_b = λ'_a M^a_b``, so ``λ' = λ M^{-1}``."""
        M = self.constrained.form_matrix
        lam = sp.Matrix([list(self.multipliers)])
        return tuple(lam if M == sp.eye(M.rows) else lam * invert(M))


@dataclass(frozen=True, eq=False)
class VakonomicField(EquationDisplay):
    """The vakonomic field tangent to C, on ``(q, v^α, λ)`` (docs/theory.rst, *Vakonomic dynamics*).

    Attributes
    ----------
    accelerations : tuple
        ``v̇^α = B^α(q, v^α, λ)``.
    multiplier_rates : tuple
        ``λ̇_b = Λ_b(q, v^α, λ)`` (frame multipliers).
    """

    system: VakonomicSystem
    accelerations: tuple
    multiplier_rates: tuple

    def natural_accelerations(self, natural: bool = True) -> dict:
        """``q̈^A = X_i^A v̇^i + v^i v^j X_j(X_i^A)`` on C (``v^a = β^a``, ``v̇^a = v^j X_j(β^a)``); in
        ``(q, q_dot, λ)`` with ``natural=True``."""
        nh = self.system.constrained
        X, n = nh.frame.vectors, self.system.n
        vC = nh.velocities_on_C
        rates = tuple(self.accelerations) + tuple(nh._along(b) if b != 0 else sp.S.Zero for b in nh.constrained_values)
        out = {}
        for A, q in enumerate(nh.frame.chart.coordinates):
            acc = sp.Add(*[X[i, A] * rates[i] for i in range(n) if X[i, A] != 0 and rates[i] != 0])
            acc += sp.Add(*[vC[i] * nh._along(X[i, A]) for i in range(n) if not X[i, A].is_number and vC[i] != 0])
            out[q] = self.system.constrained.to_natural(acc) if natural else acc
        return out

    def in_written_multipliers(self, natural: bool = True) -> tuple:
        """The field for the multiplication rule ``L + λ'_a φ_a`` with the constraints as written.

        The frame multipliers are ``λ_b = λ'_a M^a_b`` (``M^a_b = ω^a(X_b)``), so
        ``λ̇' = (Λ − λ' Ṁ) M^{-1}`` with ``Ṁ`` the derivative along the motion.  The
        symbols ``λ'_a`` are the same Symbols as the frame multipliers.  Returns
        ``(q_ddot, lambda_dot)``: a dict ``{q^A: q̈^A}`` and a tuple, in
        ``(q, q_dot, λ')`` with ``natural=True`` (valid on C), else in ``(q, v^α, λ')``.
        """
        vak, nh = self.system, self.system.constrained
        M = sp.Matrix(nh.form_matrix)
        lam = sp.Matrix([list(vak.multipliers)])
        qdd = self.natural_accelerations(natural=False)
        if M == sp.eye(M.rows):
            rates = tuple(self.multiplier_rates)
        else:
            frame_of_written = dict(zip(vak.multipliers, lam * M))
            qdd = {q: xreplace_dag(e, frame_of_written) for q, e in qdd.items()}
            Lam = sp.Matrix([[xreplace_dag(e, frame_of_written) for e in self.multiplier_rates]])
            Mdot = M.applyfunc(nh._along)
            Mi, k = invert(M), M.rows  # (Λ − λ'Ṁ) M⁻¹ summed by hand (sympy's product distributes numbers over sums)
            row = [Lam[0, b] - sp.Add(*[lam[0, a] * Mdot[a, b] for a in range(k) if Mdot[a, b] != 0])
                   for b in range(k)]
            rates = tuple(reduce_if_cheap(sp.Add(*[sp.Mul(row[b], Mi[b, a]) for b in range(k)
                                                   if Mi[b, a] != 0 and row[b] != 0]), 400) for a in range(k))
        if natural:
            qdd = {q: self.system.constrained.to_natural(e) for q, e in qdd.items()}
            rates = tuple(self.system.constrained.to_natural(e) for e in rates)
        return qdd, rates

    def implicit_form(self, written: bool = False) -> ImplicitForm:
        """The linear system ``M x = F`` this field solves (:meth:`VakonomicSystem.implicit_form`)."""
        return self.system.implicit_form(written)

    def equations(self) -> list:
        """``[Eq(v_α_dot, B^α), …, Eq(lambda_b_dot, Λ_b), …]``."""
        nh = self.system.constrained
        vdot = nh.bundle.quasi_velocity_rates
        eqs = [sp.Eq(vdot[al], B) for al, B in enumerate(self.accelerations)]
        eqs += [sp.Eq(d, r) for d, r in zip(self.system.multiplier_rate_symbols, self.multiplier_rates)]
        return eqs

    def to_dict(self) -> dict:
        return {
            "accelerations": [str(a) for a in self.accelerations],
            "multiplier_rates": [str(a) for a in self.multiplier_rates],
            "q_ddot": {str(k): str(v) for k, v in self.natural_accelerations().items()},
        }


@dataclass(frozen=True, eq=False)
class SectionField:
    """``Γ_σ`` for a section ``λ = σ(q, v^α)`` and its tangency residual (Prop. 4 of Crampin & Mestdag (2010); docs/theory.rst, *Vakonomic dynamics*).

    Attributes
    ----------
    section : tuple
        ``σ_a``.
    accelerations : tuple
        ``v̇^α`` of ``Γ_σ``.
    tangency_residual : tuple
        ``T_b(σ)``; ``Γ̄`` is tangent to the image of σ iff all vanish on C.
    """

    system: VakonomicSystem
    section: tuple
    accelerations: tuple
    tangency_residual: tuple

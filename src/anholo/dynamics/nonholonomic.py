"""Nonholonomic (Lagrange–d'Alembert) dynamics in an adapted frame (Prop. 2 of Crampin & Mestdag (2010); docs/theory.rst, *Nonholonomic dynamics*).

Setting: a Lagrangian L on TQ and constraints ``φ_a = ω^a(u) + c^a(q) = 0``
(:class:`~anholo.constraints.linear.LinearConstraints`); a frame adapted to
the constraint distribution D (``X_α``, α < m, span D; ``X_a`` complete it).  In
its quasi-velocities the constraint submanifold is ``C = {v^a = β^a(q)}``
(``β = 0`` for linear constraints), with coordinates ``(q, v^α)``.

Γ_nh is the unique second-order field on C, tangent to C, with
``Γ(X_α^V L) − X_α^C(L) = 0`` on C.  Writing ``L_c = L|_C`` (a function of
``q, v^α``), ``p_a|_C = (∂L/∂v^a)|_C`` and ``v^j`` for ``(v^α, β^a)``, these are
the constrained Hamel equations (docs/theory.rst, *Nonholonomic dynamics*; the β-terms vanish for linear
constraints)::

    d/dt ∂L_c/∂v^α − X_α(L_c) + R^γ_αj v^j ∂L_c/∂v^γ + (R^a_αj v^j + X_α(β^a)) p_a|_C = 0,

solved as ``g_αβ Γ^β = X_α(L_c) − R^γ_αj v^j ∂L_c/∂v^γ − (R^a_αj v^j + X_α β^a) p_a|_C
− v^j X_j(∂L_c/∂v^α)`` with ``g_αβ = ∂²L_c/∂v^α∂v^β`` (L must be *regular w.r.t. D*:
``g_αβ|_C`` nonsingular).  Tangency fixes ``Γ^a = v^j X_j(β^a)``.  The multipliers

    μ_a = [Γ(X_a^V L) − X_a^C(L)]|_C = d/dt(p_a|_C) − X_a(L)|_C + R^k_aj v^j p_k|_C

are those of the coordinate method with respect to the adapted coframe:
``E_A(L) = d/dt ∂L/∂u^A − ∂L/∂q^A = μ_a θ^a_A``.  For the constraints as written,
``E_A(L) = λ_a ∂φ_a/∂u^A`` with ``λ = μ M^{-1}``, ``M^a_b = ω^a(X_b)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from ..parsing import sympified
from ..algebra.presentation import problem_latex
from ..algebra import kernel as _kernel
from ..algebra.kernel import Unsupported
from ..algebra.differentiation import diff_dag
from ..algebra.implicit import ImplicitForm
from ..algebra import (
    size_exceeds,
    free_symbols,
    invert,
    numeric_value,
    random_point,
    reduce_if_cheap,
    solve_generic,
    solve_square,
    tidy,
    xreplace_dag,
)
from ..errors import ArgumentError, DimensionError, IrregularLagrangianError
from ..constraints.linear import LinearConstraints
from ..geometry.frame import Frame
from ..geometry.tangent import SecondOrderField, TangentBundle
from .forces import Forces, forcing_terms
from .frame_language import adapted_names, dependent_indices, natural_constraints
from .lagrangian import Lagrangian, constrained_problem, hamel_implicit_in_kernel, hamel_in_kernel
from ..algebra.printing import latex

__all__ = ["NonholonomicSystem", "NonholonomicField", "DynamicsComparison", "compare_dynamics"]


@dataclass(frozen=True, eq=False)
class NonholonomicSystem:
    """A Lagrangian with linear or affine constraints, in a frame adapted to D.

    Parameters
    ----------
    lagrangian : Lagrangian
        L in the Hamel chart of any frame.
    constraints : LinearConstraints or sequence of expressions
        Expressions are read with :meth:`LinearConstraints.from_expressions`.
    frame : Frame, optional
        An adapted frame to use (its first m vectors must span D; checked).  By
        default the Lagrangian's frame is used if it is adapted, and otherwise an
        adapted frame is built from it (:meth:`LinearConstraints.adapted_frame`
        with ``base`` = the Lagrangian's frame).
    dependent : sequence, optional
        Base quasi-velocities (indices, names, or coordinates for a coordinate base) to
        solve the constraints for when the adapted frame is built.
    free : sequence, optional
        Alternatively the base quasi-velocities to keep free (by name or index).
    forces : Forces or sequence, optional
        Non-potential forces (:class:`~anholo.dynamics.forces.Forces`, or the generalized
        forces ``Q_A``, one per coordinate): Lagrange–d'Alembert with forces,
        ``Γ(X_α^V L) − X_α^C(L) = F_α`` on C, ``F_i = X_i^A Q_A`` (docs/forces.rst).
    time : Symbol, optional
        The time, if L (or the forces) depend on it: ``d/dt p_i`` then includes ``∂p_i/∂t``
        (default: the forces' time).

    Attributes
    ----------
    frame : Frame
        The adapted frame (``rank_D = m``).
    lagrangian : Lagrangian
        L in the Hamel chart of the adapted frame (same quasi-velocity names).

    Raises
    ------
    FrameNotAdaptedError
        If ``frame`` is given and is not adapted to D.

    Examples
    --------
    The nonholonomic particle (docs/theory.rst, *Worked examples*):

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> x, y, z = sp.symbols("x y z", real=True)
    >>> chart = Chart([x, y, z])
    >>> xd, yd, zd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)
    >>> nh = NonholonomicSystem(L, ["z_dot - y*x_dot"])
    >>> nh.frame.vector(0).components, nh.distribution_is_integrable()
    ((1, 0, y), False)
    >>> field = nh.field()
    >>> field.accelerations
    (-v1*v2*y/(y**2 + 1), 0)
    >>> field.multipliers
    (v1*v2/(y**2 + 1),)
    """

    lagrangian: Lagrangian
    constraints: LinearConstraints
    frame: Frame = None
    dependent: tuple = None
    _source_lagrangian: Lagrangian = field(default=None, repr=False)
    forces: Forces = None
    time: sp.Symbol = None
    free: tuple = None

    def __post_init__(self):
        L = self.lagrangian
        if self.frame is not None and not isinstance(self.frame, Frame):
            raise ArgumentError(f"NonholonomicSystem: frame= must be a Frame adapted to the constraints (or None), "
                                f"got {type(self.frame).__name__}.")
        if self.time is not None and not isinstance(self.time, sp.Symbol):
            raise ArgumentError(f"NonholonomicSystem: time= must be a sympy Symbol, got {type(self.time).__name__}.")
        for key in ("dependent", "free"):
            value = getattr(self, key)
            if value is not None and not hasattr(value, "__iter__"):
                raise ArgumentError(f"NonholonomicSystem: {key}= must be a list of names, symbols or indices, "
                                    f"got {type(value).__name__} {value!r}.")
        if isinstance(L, Lagrangian) and not isinstance(self.constraints, LinearConstraints):
            # constraints in the frame's quasi-velocities (e.g. "w - a*omega") are rewritten in q_dot
            object.__setattr__(self, "constraints", natural_constraints(L.bundle, self.constraints))
        chart, C = constrained_problem(L, self.constraints, LinearConstraints,
                                       lambda chart, c: LinearConstraints.from_expressions(chart, list(c)))
        object.__setattr__(self, "constraints", C)
        if self.forces is not None and not isinstance(self.forces, Forces):
            object.__setattr__(self, "forces", Forces(chart, self.forces, time=self.time))
        if self.time is None and self.forces is not None:
            object.__setattr__(self, "time", self.forces.time)
        if self.frame is not None:
            C.check_adapted(self.frame)
            frame = self.frame if self.frame.rank_D == C.rank_D else self.frame.with_rank_D(C.rank_D)
        else:
            dep = dependent_indices(L.bundle, self.dependent, self.free)
            frame = C.adapted_frame(base=L.frame, dependent=dep)
        object.__setattr__(self, "frame", frame)
        object.__setattr__(self, "_source_lagrangian", L)
        if frame is not L.frame and frame != L.frame:
            # names that keep their meaning (positional for the default v1..vn)
            bundle = TangentBundle(frame, quasi_velocities=adapted_names(L.bundle, frame))
            try:  # in the kernel, whose field and elements Γ_nh then reuses
                L, context = L._in_frame_in_kernel(bundle, extra=C.inhomogeneous)
                self.__dict__["_kernel_context"] = context
            except Unsupported:
                L = L.in_frame(frame, quasi_velocities=bundle.quasi_velocities)
        object.__setattr__(self, "lagrangian", L)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_kernel_context", None)  # the kernel's field is a cache, rebuilt when needed
        return state

    # --- the geometry of C -----------------------------------------------------------------
    @property
    def bundle(self) -> TangentBundle:
        return self.lagrangian.bundle

    @property
    def m(self) -> int:
        """Rank of D (number of independent quasi-velocities on C)."""
        return self.constraints.rank_D

    @property
    def n(self) -> int:
        return self.frame.dim

    @property
    def free_velocities(self) -> tuple:
        """``v^1..v^m``: the quasi-velocities that coordinatise C's fibres."""
        return self.bundle.quasi_velocities[: self.m]

    @cached_property
    def form_matrix(self) -> sp.ImmutableMatrix:
        """``M^a_b = ω^a(X_b)`` (k × k, invertible): the constraints read ``M v^{(a)} + c = 0``."""
        return sp.ImmutableMatrix(self.constraints.form_values(self.frame)[:, self.m:])

    @cached_property
    def constrained_values(self) -> tuple:
        """``β^a(q)``: C is ``{v^a = β^a}`` (all zero for linear constraints)."""
        c = self.constraints.inhomogeneous
        if all(e == 0 for e in c):
            return (sp.S.Zero,) * len(c)
        beta = -invert(self.form_matrix) * sp.Matrix(c)
        return tuple(tidy(e) for e in beta)

    @cached_property
    def restriction(self) -> dict:
        """The substitution ``{v^a: β^a}`` that restricts functions on TQ to C."""
        v = self.bundle.quasi_velocities
        return {v[self.m + a]: b for a, b in enumerate(self.constrained_values)}

    def restrict(self, expr) -> sp.Expr:
        """``f|_C``: put ``v^a = β^a(q)``."""
        return xreplace_dag(expr, self.restriction)

    @cached_property
    def velocities_on_C(self) -> tuple:
        """``(v^1..v^m, β^1..β^k)``: the quasi-velocities of a motion in C."""
        return self.free_velocities + self.constrained_values

    def to_natural(self, expr) -> sp.Expr:
        """A function on C in ``(q, v^α)`` written in ``(q, q_dot)``: ``v^α = θ^α_A u^A`` (valid on C)."""
        th, u = self.frame.coframe, self.frame.chart.velocities
        sub = {v: sp.Add(*[th[al, A] * u[A] for A in range(self.n) if th[al, A] != 0])
               for al, v in enumerate(self.free_velocities)}
        return xreplace_dag(expr, sub)

    def distribution_is_integrable(self) -> bool:
        """Frobenius: D is integrable (the constraints are holonomic) iff ``R^a_αβ = 0``."""
        return self.frame.is_D_integrable()

    def curvature(self) -> dict:
        """Nonzero ``R^a_αβ`` (α < β < m ≤ a), 0-based keys ``(a, α, β)``: the obstruction to integrability."""
        m, n, R = self.m, self.n, self.frame.structure
        return {(a, al, be): R[a][al][be] for a in range(m, n) for al in range(m) for be in range(al + 1, m)
                if R[a][al][be] != 0}

    # --- the constrained Lagrangian -----------------------------------------------------------
    @cached_property
    def constrained_lagrangian(self) -> sp.Expr:
        """``L_c = L|_C`` as a function of ``(q, v^α)``."""
        return self.restrict(self.lagrangian.expr)

    @cached_property
    def _momenta_on_C(self) -> tuple:
        """``p_i|_C``: ``∂L_c/∂v^α`` for α < m, ``(∂L/∂v^a)|_C`` for a ≥ m."""
        v = self.bundle.quasi_velocities
        Lc = self.constrained_lagrangian
        free = tuple(reduce_if_cheap(diff_dag(Lc, v[al]), 400) for al in range(self.m))
        rest = tuple(reduce_if_cheap(self.restrict(diff_dag(self.lagrangian.expr, v[a])), 400)
                     for a in range(self.m, self.n))
        return free + rest

    @cached_property
    def hessian_D(self) -> sp.ImmutableMatrix:
        """``g_αβ|_C = ∂²L_c/∂v^α∂v^β``; L is regular w.r.t. D iff it is nonsingular."""
        v, p = self.free_velocities, self._momenta_on_C
        return sp.ImmutableMatrix(self.m, self.m, lambda al, be: reduce_if_cheap(diff_dag(p[al], v[be]), 400))

    def is_regular(self) -> bool:
        """True if L is regular with respect to D (``g_αβ|_C`` generically nonsingular)."""
        return solve_generic(self.hessian_D, [0] * self.m).rank == self.m

    def _along(self, f) -> sp.Expr:
        """``v^j X_j(f)`` on C: the derivative of f along ``q̇ = X_j v^j`` with v fixed."""
        F = self.frame
        return sp.Add(*[vj * F.apply(j, f) for j, vj in enumerate(self.velocities_on_C) if vj != 0])

    def _rv(self, k: int, i: int) -> sp.Expr:
        """``R^k_ij v^j`` on C."""
        R = self.frame.structure
        return sp.Add(*[R[k][i][j] * vj for j, vj in enumerate(self.velocities_on_C) if R[k][i][j] != 0 and vj != 0])

    def _force_terms(self, i: int) -> sp.Expr:
        """``X_i(L)|_C − R^k_ij v^j p_k|_C``, i.e. ``X_i^C(L)|_C`` (using ``X_i(L)|_C = X_i(L_c) − p_a|_C X_i(β^a)``)."""
        F, m, p = self.frame, self.m, self._momenta_on_C
        out = F.apply(i, self.constrained_lagrangian)
        for a, beta in enumerate(self.constrained_values):
            if beta != 0 and p[m + a] != 0:
                out -= p[m + a] * F.apply(i, beta)
        for k in range(self.n):
            if p[k] != 0:
                rv = self._rv(k, i)
                if rv != 0:
                    out -= rv * p[k]
        return out

    @cached_property
    def _forcing(self):
        """``φ_i = F_i|_C − ∂(p_i|_C)/∂t`` (i < n), or None without forces and time dependence:
        the terms forces and an explicit time add to the Hamel equations (docs/forces.rst)."""
        if self.forces is None and self.time is None:
            return None
        F = None
        if self.forces is not None and not self.forces.is_zero:
            F = tuple(self.restrict(f) for f in self.forces.frame_components(self.bundle))
        phi = forcing_terms(F, self._momenta_on_C, self.time)
        return None if all(e == 0 for e in phi) else phi

    def _forced(self, base: "NonholonomicField") -> "NonholonomicField":
        """Γ_nh with the forcing terms φ: ``Γ^α += g^αβ φ_β``, ``μ_a += δΓ^α ∂p_a/∂v^α − φ_a``
        (the equations are linear in their right-hand sides)."""
        phi, m = self._forcing, self.m
        if phi is None:
            return base
        dG = solve_square(self.hessian_D, list(phi[:m])) if m else ()
        if dG is None:
            raise self._irregular()
        v, p = self.free_velocities, self._momenta_on_C

        def clean(e):  # one normal form for the sum (the forcing terms come from another route)
            return tidy(e) if not size_exceeds(e, 1500) else reduce_if_cheap(e, 400)

        gamma = tuple(clean(G + d) for G, d in zip(base.accelerations, dG))
        mu = []
        for a, mu_a in enumerate(base.multipliers):
            pa = p[m + a]
            extra = sp.Add(*[d * pa.diff(va) for d, va in zip(dG, v) if d != 0]) - phi[m + a]
            mu.append(clean(mu_a + extra))
        return NonholonomicField(self, gamma, base.constrained_rates, tuple(mu))

    # --- Γ_nh --------------------------------------------------------------------------------
    def constrained_hamel_equations(self) -> list:
        """The equations of Γ_nh in constrained-Lagrangian Hamel form (docs/theory.rst, *Nonholonomic dynamics*), with ``v_dot`` symbols:

        ``d/dt ∂L_c/∂v^α = X_α(L_c) − R^γ_αj v^j ∂L_c/∂v^γ − (R^a_αj v^j + X_α β^a) p_a|_C``,
        the left side written out as ``g_αβ v̇^β + v^j X_j(∂L_c/∂v^α)``.
        """
        vdot = self.bundle.quasi_velocity_rates
        g, p = self.hessian_D, self._momenta_on_C
        eqs = []
        for al in range(self.m):
            lhs = sp.Add(*[g[al, be] * vdot[be] for be in range(self.m)]) + self._along(p[al])
            rhs = self._force_terms(al) + (self._forcing[al] if self._forcing is not None else 0)
            eqs.append(sp.Eq(lhs, rhs, evaluate=False))
        return eqs

    def field(self) -> "NonholonomicField":
        """Γ_nh, the Lagrange–d'Alembert field on C (Prop. 2 of Crampin & Mestdag (2010); docs/theory.rst, *Nonholonomic dynamics*).

        Raises
        ------
        IrregularLagrangianError
            If L is not regular with respect to D.
        """
        return self._field

    @cached_property
    def _field(self) -> "NonholonomicField":
        try:
            base = self._field_in_kernel()
        except Unsupported:
            base = self._field_in_expressions()
        return self._forced(base)

    def _irregular(self) -> IrregularLagrangianError:
        return IrregularLagrangianError(
            "the Lagrangian is not regular with respect to the constraint distribution D: the block "
            f"g_αβ = ∂²L/∂v^α∂v^β of its Hessian on C has rank {solve_generic(self.hessian_D, [0] * self.m).rank} "
            f"< m = {self.m}, so the nonholonomic field is not determined. Check the Lagrangian's kinetic "
            "energy along D (every allowed velocity must carry kinetic energy)."
        )

    def _kernel_problem(self) -> tuple:
        """``(K, (q, v, X, θ, (T, −V), m, β))``: the problem stated over the differential field of
        :mod:`anholo.algebra.kernel` (raises ``Unsupported`` outside its class)."""
        F, m = self.frame, self.m
        q, v = F.chart.coordinates, self.bundle.quasi_velocities
        beta = self.constrained_values
        try:  # the field in which L was carried to the adapted frame
            K, X, th, Lt = self.__dict__["_kernel_context"]
            bk = [K.convert(b) for b in beta]
        except (KeyError, Unsupported):
            K = _kernel.DiffField([self.lagrangian.expr, *F.vectors, *F.coframe, *beta], q, extra_symbols=v)
            X, th = _kernel.matrix(K, F.vectors), _kernel.matrix(K, F.coframe)
            bk = [K.convert(b) for b in beta]
            Lt = _kernel.split(K, K.convert(self.lagrangian.expr), v)
        return K, (q, v, X, th, Lt, m, bk)

    def _implicit_parts(self) -> tuple:
        """``(g, F, P, Q)`` of :meth:`implicit_form` as expressions: over the kernel's field when the
        problem lies in it (small canonical entries), else by differentiating expressions."""
        if "_implicit_parts_cache" in self.__dict__:
            return self.__dict__["_implicit_parts_cache"]
        try:
            K, args = self._kernel_problem()
            g, F, P, Q, _ = hamel_implicit_in_kernel(K, *args)

            def expr(e):
                if not e:
                    return sp.S.Zero
                try:
                    return K.to_expr(_kernel.simplest(K, e))
                except Unsupported:
                    return K.to_expr(e)
            out = (sp.ImmutableMatrix([[expr(e) for e in row] for row in g]) if g else sp.ImmutableMatrix(0, 0, []),
                   tuple(expr(e) for e in F), [[expr(e) for e in row] for row in P], tuple(expr(e) for e in Q))
        except Unsupported:
            m, n, p = self.m, self.n, self._momenta_on_C
            v = self.free_velocities
            out = (self.hessian_D, self.hamel_rhs,
                   [[diff_dag(p[a], v[be]) for be in range(m)] for a in range(m, n)],
                   self._multiplier_rhs)
        phi = self._forcing  # forces and an explicit time: F_α += φ_α, and μ_a = … − φ_a
        if phi is not None:
            g, F, P, Q = out
            m = self.m
            out = (g, tuple(f + e for f, e in zip(F, phi[:m])), P, tuple(r - e for r, e in zip(Q, phi[m:])))
        self.__dict__["_implicit_parts_cache"] = out
        return out

    def _field_in_kernel(self) -> "NonholonomicField":
        """Γ_nh and μ as in :meth:`_field_in_expressions`, computed in the differential field of
        rational functions (:mod:`anholo.algebra.kernel`): the same formulas, without expression trees."""
        K, args = self._kernel_problem()
        solved = hamel_in_kernel(K, *args)
        if solved is None:
            raise self._irregular()
        gamma, rates, mu = solved
        out = [tuple(K.to_expr(_kernel.simplest(K, e)) for e in es) for es in (gamma, rates, mu)]
        return NonholonomicField(self, *out)

    @cached_property
    def _multiplier_rhs(self) -> tuple:
        """``v^j X_j(p_a) − X_a^C(L)|_C`` (a ≥ m): μ_a minus its acceleration terms, and the
        right-hand side of the multiplier rows of :meth:`implicit_form`."""
        p = self._momenta_on_C
        return tuple(self._along(p[a]) - self._force_terms(a) for a in range(self.m, self.n))

    # --- the implicit form M ẋ = F: the single place where the right-hand side is assembled ---
    @cached_property
    def hamel_rhs(self) -> tuple:
        """``F_α = X_α^C(L)|_C − v^j X_j(p_α)`` (α < m): the right-hand side of ``g_αβ Γ^β = F_α``.

        With ``X_α^C(L)|_C = X_α(L_c) − p_a|_C X_α(β^a) − R^k_αj v^j p_k|_C``
        (:meth:`_force_terms`; Prop. 2 of Crampin & Mestdag (2010), docs/theory.rst).  Forces
        acting on the system enter here (and in :meth:`_force_terms` for the multipliers).
        """
        p = self._momenta_on_C
        return tuple(self._force_terms(al) - self._along(p[al]) for al in range(self.m))

    @cached_property
    def multiplier_symbols(self) -> tuple:
        """``mu1, …, mu_k``: the unknowns of the implicit form standing for the multipliers ``μ_a``."""
        taken = {s.name for s in free_symbols([self.lagrangian.expr, *self.frame.vectors])}
        taken |= {s.name for s in self.bundle.quasi_velocities + self.bundle.quasi_velocity_rates}
        prefix = "mu"
        while any(t.startswith(prefix) for t in taken):
            prefix = "_" + prefix
        return tuple(sp.Symbol(f"{prefix}{a + 1}", real=True) for a in range(self.n - self.m))

    def implicit_form(self, multipliers: bool = True) -> ImplicitForm:
        """Γ_nh as the linear system ``M x = F`` it solves (no symbolic inversion).

        Unknowns ``x = (v̇^1..v̇^m, μ_1..μ_k)``; rows (Prop. 2 of Crampin & Mestdag (2010))::

            g_αβ v̇^β               = X_α^C(L)|_C − v^j X_j(p_α)        (α < m)
            −(∂p_a/∂v^β) v̇^β + μ_a = v^j X_j(p_a) − X_a^C(L)|_C         (a ≥ m)

        with ``g_αβ = ∂²L_c/∂v^α∂v^β``, ``p_α = ∂L_c/∂v^α``, ``p_a = (∂L/∂v^a)|_C``,
        ``v^j = (v^α, β^a)`` (docs/theory.rst).  ``M`` is block lower-triangular.  With
        ``multipliers=False`` only the first block (``g v̇ = F``).  The constrained
        rates ``Γ^a = v^j X_j(β^a)`` are explicit (:attr:`NonholonomicField.constrained_rates`).
        """
        key = "_implicit_full" if multipliers else "_implicit_free"
        if key in self.__dict__:
            return self.__dict__[key]
        m, n = self.m, self.n
        vdot = self.bundle.quasi_velocity_rates[:m]
        g, F, P, Q = self._implicit_parts()
        if not multipliers:
            form = ImplicitForm(vdot, g, F, "the nonholonomic field (g v_dot = F)")
        else:
            k = n - m
            M = sp.zeros(n, n)
            M[:m, :m] = g
            for a in range(k):
                for be in range(m):
                    M[m + a, be] = -P[a][be]
                M[m + a, m + a] = sp.S.One
            form = ImplicitForm(tuple(vdot) + self.multiplier_symbols, M, tuple(F) + tuple(Q),
                                "the nonholonomic field and its multipliers")
        self.__dict__[key] = form
        return form

    def _field_in_expressions(self) -> "NonholonomicField":
        m, p = self.m, self._momenta_on_C
        gamma = solve_square(self.hessian_D, self.hamel_rhs) if m else ()
        if gamma is None:
            raise self._irregular()
        gamma = tuple(gamma)
        constrained_rates = tuple(self._along(b) if b != 0 else sp.S.Zero for b in self.constrained_values)
        # μ_a = d/dt(p_a|_C) − X_a^C(L)|_C
        v = self.free_velocities
        mu = []
        for a in range(m, self.n):
            dp = sp.Add(*[G * d for G, d in ((G, diff_dag(p[a], va)) for G, va in zip(gamma, v) if G != 0) if d != 0])
            mu.append(reduce_if_cheap(self._multiplier_rhs[a - m] + dp, 200))
        return NonholonomicField(self, gamma, constrained_rates, tuple(mu))

    def tilde_fields(self) -> tuple:
        """``X̃_α = X_α^C + (R^a_αj v^j + X_α(β^a)) X_a^V``: lifts of ``X_α`` tangent to C (docs/theory.rst, *Nonholonomic dynamics*)."""
        b, n, m = self.bundle, self.n, self.m
        out = []
        for al in range(m):
            A = [sp.S.One if i == al else sp.S.Zero for i in range(n)]
            B = [sp.S.Zero] * n
            for a in range(m, n):
                B[a] = self._rv(a, al) + self.frame.apply(al, self.constrained_values[a - m])
            out.append(b.field_from_frame(A, B))
        return tuple(out)

    def __str__(self):
        return f"Nonholonomic system: {self.lagrangian}, constraints {', '.join(f'{e} = 0' for e in self.constraints.expressions)}"

    def as_latex(self) -> str:
        """The Lagrangian (in natural velocities) and the constraints ``0 = φ_a`` as a LaTeX ``aligned`` block."""
        return problem_latex(self.lagrangian.natural_expr(), self.constraints.expressions)

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"


@dataclass(frozen=True, eq=False)
class NonholonomicField:
    """Γ_nh on C in the coordinates ``(q, v^α)`` (docs/theory.rst, *Nonholonomic dynamics*).

    Attributes
    ----------
    system : NonholonomicSystem
    accelerations : tuple
        ``Γ^α = dv^α/dt`` (α < m), functions of ``(q, v^α)``.
    constrained_rates : tuple
        ``Γ^a = dv^a/dt = v^j X_j(β^a)`` (zero for linear constraints): tangency to C.
    multipliers : tuple
        ``μ_a``, with ``E_A(L) = μ_a θ^a_A`` (adapted coframe).
    """

    system: NonholonomicSystem
    accelerations: tuple
    constrained_rates: tuple
    multipliers: tuple

    @property
    def bundle(self) -> TangentBundle:
        return self.system.bundle

    def velocity_field(self) -> tuple:
        """``q̇^A = X_j^A v^j`` on C, as functions of ``(q, v^α)``."""
        X, vC = self.system.frame.vectors, self.system.velocities_on_C
        n = self.system.n
        return tuple(sp.Add(*[X[j, A] * vC[j] for j in range(n) if X[j, A] != 0 and vC[j] != 0]) for A in range(n))

    def __call__(self, f) -> sp.Expr:
        """``Γ_nh(f)`` on C for a function f of ``(q, v)`` (or of ``(q, v^α)``): its time derivative."""
        s = self.system
        f = sympified(f)
        v = self.bundle.quasi_velocities
        pairs = [(qd, diff_dag(f, q)) for qd, q in zip(self.velocity_field(), s.frame.chart.coordinates) if qd != 0]
        rates = self.accelerations + self.constrained_rates
        pairs += [(r, diff_dag(f, vi)) for r, vi in zip(rates, v) if r != 0]
        # zero derivatives skipped: 0 * expr asks whether expr could be infinite (assumptions on a large tree)
        return s.restrict(sp.Add(*[a * d for a, d in pairs if d != 0]))

    def as_second_order_field(self) -> SecondOrderField:
        """A second-order field on TQ (adapted frame) whose restriction to C is Γ_nh."""
        return SecondOrderField(self.bundle, self.accelerations + self.constrained_rates)

    def natural_accelerations(self, natural: bool = True) -> dict:
        """``q̈^A = X_i^A Γ^i + v^i v^j X_j(X_i^A)`` on C (docs/theory.rst, *Lagrangian dynamics in a frame*).

        Returns ``{q^A: q̈^A}`` in ``(q, q_dot)`` (``v^α = θ^α_A u^A``; valid on C) with
        ``natural=True``, else in ``(q, v^α)``.
        """
        s = self.system
        X = s.frame.vectors
        vC = s.velocities_on_C
        rates = self.accelerations + self.constrained_rates
        out = {}
        for A, q in enumerate(s.frame.chart.coordinates):
            acc = sp.Add(*[X[i, A] * rates[i] for i in range(s.n) if X[i, A] != 0 and rates[i] != 0])
            acc += sp.Add(*[vC[i] * s._along(X[i, A]) for i in range(s.n) if not X[i, A].is_number and vC[i] != 0])
            out[q] = self.system.to_natural(acc) if natural else acc
        return out

    def coordinate_multipliers(self, natural: bool = True) -> tuple:
        """``λ_a`` with ``E_A(L) = Σ_a λ_a ∂φ_a/∂u^A`` for the constraints ``φ_a`` as written.

        ``λ = μ M^{-1}`` with ``M^a_b = ω^a(X_b)`` (``ω^a = ∂φ_a/∂u``).  In ``(q, q_dot)``
        with ``natural=True`` (valid on C), else in ``(q, v^α)``.
        """
        M, mu = self.system.form_matrix, self.multipliers
        if M == sp.eye(M.rows):
            lam = mu
        else:  # λ_a = Σ_b μ_b (M^{-1})^b_a, summed by hand (sympy's matrix product distributes numbers over sums)
            Mi = invert(M)
            lam = [sp.Add(*[sp.Mul(mu[b], Mi[b, a]) for b in range(M.rows) if Mi[b, a] != 0 and mu[b] != 0])
                   for a in range(M.cols)]
        out = tuple(reduce_if_cheap(e, 200) for e in lam)
        return tuple(self.system.to_natural(e) for e in out) if natural else out

    def equations(self) -> list:
        """``[Eq(v_α_dot, Γ^α)]`` for α < m, then ``v_a_dot`` for the constrained velocities if nonzero."""
        vdot = self.bundle.quasi_velocity_rates
        m = self.system.m
        eqs = [sp.Eq(vdot[al], g) for al, g in enumerate(self.accelerations)]
        eqs += [sp.Eq(vdot[m + a], r) for a, r in enumerate(self.constrained_rates) if r != 0]
        return eqs

    def kinematic_equations(self) -> list:
        """``q̇^A = X_j^A v^j`` on C as ``Eq(q_dot, …)``."""
        return [sp.Eq(u, e) for u, e in zip(self.system.frame.chart.velocities, self.velocity_field())]

    def hamel_equations(self) -> list:
        """The constrained Hamel equations (see :meth:`NonholonomicSystem.constrained_hamel_equations`)."""
        return self.system.constrained_hamel_equations()

    def implicit_form(self, multipliers: bool = True) -> ImplicitForm:
        """The linear system ``M x = F`` this field solves (:meth:`NonholonomicSystem.implicit_form`)."""
        return self.system.implicit_form(multipliers)

    def __str__(self):
        lines = [f"{e.lhs} = {e.rhs}" for e in self.equations()]
        lines += [f"mu{a + 1} = {mu}" for a, mu in enumerate(self.multipliers)]
        return "\n".join(lines)

    def as_latex(self) -> str:
        """The equations ``v̇^α = Γ^α`` and the multipliers as a LaTeX ``aligned`` block."""
        rows = [f"{latex(e.lhs)} &= {latex(e.rhs)}" for e in self.equations()]
        rows += [f"\\mu_{{{a + 1}}} &= {latex(mu)}" for a, mu in enumerate(self.multipliers)]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {
            "accelerations": [str(a) for a in self.accelerations],
            "multipliers_frame": [str(m) for m in self.multipliers],
            "q_ddot": {str(k): str(v) for k, v in self.natural_accelerations().items()},
            "multipliers": [str(m) for m in self.coordinate_multipliers()],
        }


@dataclass(frozen=True)
class DynamicsComparison:
    """Result of :func:`compare_dynamics`.

    Attributes
    ----------
    agree : bool
        True if the natural accelerations agree at every sample point of C.
    residuals : dict
        ``{q^A: q̈^A(second) − q̈^A(first)}`` as functions of the first system's ``(q, v^α)`` on C.
    max_deviation : float
        Largest absolute residual at the sample points.
    """

    agree: bool
    residuals: dict
    max_deviation: float

    def __bool__(self):
        return self.agree


def compare_dynamics(first: NonholonomicField, second: NonholonomicField, points: int = 3,
                     seed: int = 0, tol: float = 1e-9) -> DynamicsComparison:
    """Compare two nonholonomic fields of the same constrained system (e.g. built in different frames).

    Γ_nh depends only on D (docs/theory.rst, *Nonholonomic dynamics*): the natural accelerations ``q̈(q, u)`` of both
    must agree at every ``u`` in C.  The second field's ``q̈`` (in ``q, q_dot``) is
    evaluated on the first one's parametrisation ``u = X_j v^j`` of C, and the residual
    checked at random points.
    """
    s1, s2 = first.system, second.system
    if s1.frame.chart != s2.frame.chart:
        raise DimensionError("the two fields live on different charts.")
    acc1 = first.natural_accelerations(natural=False)
    acc2 = second.natural_accelerations(natural=True)
    u_on_C = dict(zip(s1.frame.chart.velocities, first.velocity_field()))
    residuals = {q: acc2[q].xreplace(u_on_C) - acc1[q] for q in acc1}
    rng = random.Random(seed)
    symbols = free_symbols(residuals.values())
    worst = 0.0
    for _ in range(points):
        pt = random_point(symbols, rng)
        for r in residuals.values():
            val = numeric_value(r, pt)
            worst = max(worst, abs(val)) if val == val else float("inf")
    return DynamicsComparison(worst <= tol, residuals, worst)

"""Chetaev dynamics for kinematic constraints ``φ^ν(q, u, t) = 0``, frame-wise (docs/chetaev.rst; Talamucci (2025)–002).

With virtual displacements ``β_νA δq^A = 0`` (Chetaev: ``β = ∂φ/∂u``, see
:mod:`anholo.constraints.displacements`) and non-potential generalized forces
``F_A(q, u, t)``, the d'Alembert–Lagrange principle gives

    E_A(L) := d/dt ∂L/∂u^A − ∂L/∂q^A = F_A + λ_ν β_νA,        φ^ν = 0.

**Frame-wise.**  In the Hamel chart ``(q, v)`` of any frame ``X_i`` (``u = X_i v^i``),
contracting with ``X_i^A`` turns ``E_A(L)`` into ``Γ(X_i^V L) − X_i^C(L)``
(Prop. 1 of Crampin & Mestdag (2010), docs/theory.rst, Lagrangian dynamics in a frame), and the Chetaev field is the second-order
field Γ with

    Γ(X_i^V L) − X_i^C(L) = F_i + λ_ν B_νi,     Γ(φ^ν) = 0,

``F_i = X_i^A F_A``, ``B_νi = β_νA X_i^A`` (for Chetaev ``B_νi = X_i^V(φ^ν) = ∂φ^ν/∂v^i``).
Written out, with ``g_ij = ∂²L/∂v^i∂v^j`` and ``Φ_νi = ∂φ^ν/∂v^i``::

    g_ij Γ^j − B_νi λ_ν = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i) − ∂p_i/∂t + F_i
    Φ_νi Γ^i = −v^j X_j(φ^ν) − ∂φ^ν/∂t                       (Γ tangent to C)

solved by the Schur complement ``(Φ g⁻¹ Bᵀ) λ = …`` when g is regular, else as one
bordered system.  The second group makes every level set of φ invariant, so C
is invariant.  For linear constraints this is Γ_nh of
:class:`~anholo.dynamics.nonholonomic.NonholonomicSystem` (docs/nonholonomic.rst).

**Maggi form (coordinates).**  Solving ``φ = 0`` for dependent velocities
``u^{m+ν} = α_ν(q, u^1..u^m, t)`` (explicitly when sympy can, else implicitly:
``∂α/∂u_ind = −(∂φ/∂u_dep)⁻¹ ∂φ/∂u_ind`` on C), with ``γ = −β_dep⁻¹ β_ind``
(``= ∂α/∂u_ind`` for Chetaev):

    E_r(L) + γ_νr E_{m+ν}(L) = F_r + γ_νr F_{m+ν},   r = 1..m          (Talamucci 2025, eq. (27))

— multiplier-free; with the differentiated constraints it fixes ``q̈``
(:class:`MaggiEquations`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import sympy as sp

import numpy as np

from ..parsing import sympified
from ..algebra.presentation import problem_latex
from ..algebra.implicit import ImplicitForm
from ..algebra import (
    adjugate,
    determinant,
    free_symbols,
    numeric_value,
    numerically_zero,
    random_point,
    reduce_if_cheap,
    solve_square,
    xreplace_dag,
)
from ..errors import ConstraintError, DimensionError, IrregularLagrangianError
from ..geometry.tangent import TangentBundle
from ..parsing import as_expressions, chart_names
from ..algebra.printing import EquationDisplay
from ..constraints.displacements import ChetaevDisplacements, VirtualDisplacements
from ..constraints.kinematic import KinematicConstraints, _numeric_rank
from .lagrangian import Lagrangian, constrained_problem

__all__ = ["ChetaevSystem", "ChetaevField", "MaggiEquations", "ODESystem", "acceleration_symbols"]


def acceleration_symbols(chart) -> tuple:
    """Symbols ``q_ddot`` standing for the natural accelerations in displayed equations."""
    return tuple(sp.Symbol(f"{q.name}_ddot", real=True) for q in chart.coordinates)


def _is_singular(expr) -> bool:
    expr = sympified(expr)
    if expr == 0:
        return True
    pts = [random_point(free_symbols([expr]), random.Random(s)) for s in (31, 32)]
    return numerically_zero(expr, pts)


def _inverse_times(M: sp.Matrix, columns: Sequence) -> tuple | None:
    """``M⁻¹ c`` for several columns c, sharing one determinant and adjugate; None if det M ≡ 0."""
    M = sp.Matrix(M)
    n = M.rows
    if M.is_diagonal():
        diag = [M[i, i] for i in range(n)]
        if any(_is_singular(d) for d in diag):
            return None
        return tuple(tuple(reduce_if_cheap(c[i] / diag[i], 400) for i in range(n)) for c in columns)
    det = determinant(M)
    if _is_singular(det):
        return None
    adj = adjugate(M)
    det = reduce_if_cheap(det, 240)
    return tuple(
        tuple(sp.Add(*[reduce_if_cheap(adj[i, j] / det) * c[j] for j in range(n) if adj[i, j] != 0 and c[j] != 0])
              for i in range(n))
        for c in columns
    )


@dataclass(frozen=True)
class ODESystem:
    """A first-order ODE ``ẋ = f(x, t)`` ready to be compiled for numerical integration.

    Attributes
    ----------
    state : tuple of Symbol
        The state symbols, e.g. ``(q…, q_dot…)`` or ``(q…, independent q_dot…)``.
    rhs : tuple
        ``f``: expressions in the state, ``time`` and ``parameters``.
    parameters : tuple of Symbol
        The remaining free symbols (masses, lengths), which need numerical values.
    time : Symbol or None
    invariants : tuple
        Functions of the state that must stay zero along solutions (the constraints φ).
    multipliers : tuple
        The multipliers ``λ_ν`` as functions of the state (for the constraints as written).
    """

    state: tuple
    rhs: tuple
    parameters: tuple
    time: sp.Symbol = None
    invariants: tuple = ()
    multipliers: tuple = ()


@dataclass(frozen=True, eq=False)
class ChetaevSystem:
    """A Lagrangian with kinematic constraints, virtual displacements and forces (docs/chetaev.rst).

    Parameters
    ----------
    lagrangian : Lagrangian
        L in the Hamel chart of any frame (the field is computed in that frame).
    constraints : KinematicConstraints or sequence of expressions
        ``φ^ν(q, u, t)``; expressions are read with :class:`KinematicConstraints`.
    displacements : VirtualDisplacements, optional
        Default :class:`~anholo.constraints.displacements.ChetaevDisplacements`.
    forces : sequence, optional
        Non-potential generalized forces ``F_A(q, u, t)`` (one per coordinate).

    Examples
    --------
    The counterexample of docs/chetaev.rst: a unit particle under gravity with
    ``φ = ż − ẋ² − ẏ``:

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> g = sp.Symbol("g", positive=True)
    >>> chart = Chart("x y z", parameters=[g])
    >>> xd, yd, zd = chart.velocities
    >>> L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2)/2 - g*chart.coordinates[2])
    >>> field = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"]).field()
    >>> field.natural_multipliers()
    (g/(4*x_dot**2 + 2),)
    >>> sp.factor(field.natural_accelerations()[chart.coordinates[0]])
    -g*x_dot/(2*x_dot**2 + 1)
    """

    lagrangian: Lagrangian
    constraints: KinematicConstraints
    displacements: VirtualDisplacements = None
    forces: tuple = None

    def __post_init__(self):
        L = self.lagrangian
        chart, C = constrained_problem(L, self.constraints, KinematicConstraints,
                                       lambda chart, c: KinematicConstraints(chart, c))
        object.__setattr__(self, "constraints", C)
        if self.displacements is None:
            object.__setattr__(self, "displacements", ChetaevDisplacements())
        elif not isinstance(self.displacements, VirtualDisplacements):
            raise DimensionError(
                f"displacements must be a VirtualDisplacements instance, got {type(self.displacements).__name__}."
            )
        forces = as_expressions((0,) * chart.dim if self.forces is None else self.forces,
                                chart_names(chart, L.bundle.quasi_velocities, C.time), where="forces")
        if len(forces) != chart.dim:
            raise DimensionError(f"need {chart.dim} generalized forces F_A (one per coordinate), got {len(forces)}.")
        object.__setattr__(self, "forces", forces)

    # --- basic objects ----------------------------------------------------------------------
    @property
    def bundle(self) -> TangentBundle:
        return self.lagrangian.bundle

    @property
    def chart(self):
        return self.lagrangian.frame.chart

    @property
    def time(self):
        return self.constraints.time

    @property
    def k(self) -> int:
        return self.constraints.count

    @cached_property
    def beta(self) -> sp.ImmutableMatrix:
        """The displacement matrix ``β_νA`` in coordinates (checked: rank k on C)."""
        return self.displacements.matrix(self.constraints)

    def _dt(self, f) -> sp.Expr:
        t = self.time
        return sympified(f).diff(t) if t is not None else sp.S.Zero

    @cached_property
    def constraint_functions(self) -> tuple:
        """``φ^ν`` in the Hamel chart ``(q, v, t)``."""
        return tuple(self.bundle.to_quasi(e) for e in self.constraints.expressions)

    @cached_property
    def _frame_data(self) -> dict:
        """``Φ_νi = ∂φ^ν/∂v^i``, ``B_νi = β_νA X_i^A``, ``F_i = X_i^A F_A`` in (q, v, t)."""
        b, X = self.bundle, self.lagrangian.frame.vectors
        n, v = b.dim, b.quasi_velocities
        phi = self.constraint_functions
        Phi = sp.Matrix(self.k, n, lambda a, i: phi[a].diff(v[i]))
        if isinstance(self.displacements, ChetaevDisplacements):
            B = Phi
        else:
            beta = self.beta
            B = sp.Matrix(self.k, n, lambda a, i: b.to_quasi(sp.Add(*[beta[a, A] * X[i, A] for A in range(n)
                                                                      if X[i, A] != 0 and beta[a, A] != 0])))
        Fi = [b.to_quasi(sp.Add(*[X[i, A] * self.forces[A] for A in range(n) if X[i, A] != 0 and self.forces[A] != 0]))
              for i in range(n)]
        return {"Phi": Phi, "B": B, "F": Fi}

    @cached_property
    def _rows(self) -> tuple:
        """``(r, s)``: the right-hand sides ``r_i`` of the dynamic rows (:meth:`_free_rhs`) and
        ``s_ν = −v^j X_j(φ^ν) − ∂φ^ν/∂t`` of the tangency rows; shared by the field and its implicit form."""
        F, n, v = self.lagrangian.frame, self.bundle.dim, self.bundle.quasi_velocities
        phi = self.constraint_functions
        s = [-(sp.Add(*[v[j] * F.apply(j, phi[a]) for j in range(n)]) + self._dt(phi[a])) for a in range(self.k)]
        return tuple(self._free_rhs()), tuple(s)

    @cached_property
    def multiplier_symbols(self) -> tuple:
        """``lambda1, …, lambda_k`` (prefixed by ``_`` while they clash with a symbol of the problem):
        the unknowns of :meth:`implicit_form` standing for the multipliers."""
        taken = {s.name for s in free_symbols([self.lagrangian.expr, *self.lagrangian.frame.vectors,
                                               *self.constraint_functions, *self.forces])}
        taken |= {s.name for s in self.bundle.quasi_velocities + self.bundle.quasi_velocity_rates}
        prefix = "lambda"
        while any(t.startswith(prefix) for t in taken):
            prefix = "_" + prefix
        return tuple(sp.Symbol(f"{prefix}{a + 1}", real=True) for a in range(self.k))

    def implicit_form(self) -> ImplicitForm:
        """The Chetaev field as the linear system ``M x = F`` it solves (no symbolic inversion).

        Unknowns ``x = (v̇^1..v̇^n, λ_1..λ_k)`` in the Hamel chart of the Lagrangian's frame;
        the bordered system of the d'Alembert–Lagrange principle with Chetaev's rule
        (Talamucci 2025; frame-wise by Prop. 1 of Crampin & Mestdag (2010), docs/chetaev.rst)::

            g_ij v̇^j − B_νi λ_ν = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i) − ∂p_i/∂t + F_i    (i ≤ n)
            Φ_νi v̇^i            = −v^j X_j(φ^ν) − ∂φ^ν/∂t                               (ν ≤ k)

        with ``g_ij = ∂²L/∂v^i∂v^j``, ``Φ_νi = ∂φ^ν/∂v^i``, ``B_νi = β_νA X_i^A`` (``= Φ_νi``
        for Chetaev displacements), ``F_i = X_i^A F_A`` the non-potential forces, and
        ``λ_ν`` the multipliers of the constraints as written (``E_A(L) = F_A + λ_ν β_νA``).
        ``M = [[g, −Bᵀ], [Φ, 0]]`` depends on the velocities when φ is nonlinear; the
        solution is the field on C (:meth:`field` solves the same rows through the null
        spaces of Φ and B).
        """
        if "_implicit" in self.__dict__:
            return self.__dict__["_implicit"]
        n, k = self.bundle.dim, self.k
        data = self._frame_data
        Phi, B = data["Phi"], data["B"]
        r, s = self._rows
        g = self.lagrangian.hessian
        M = sp.zeros(n + k, n + k)
        M[:n, :n] = g
        for nu in range(k):
            for i in range(n):
                M[i, n + nu] = -B[nu, i]
                M[n + nu, i] = Phi[nu, i]
        form = ImplicitForm(tuple(self.bundle.quasi_velocity_rates) + self.multiplier_symbols, M, r + s,
                            "the Chetaev field and its multipliers")
        self.__dict__["_implicit"] = form
        return form

    def _free_rhs(self) -> list:
        """``X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i) − ∂p_i/∂t + F_i`` (the Prop. 1 terms plus forces)."""
        L, F = self.lagrangian, self.lagrangian.frame
        b = self.bundle
        n, v, p, R = b.dim, b.quasi_velocities, L.momenta, F.structure
        forces = self._frame_data["F"]
        out = []
        for i in range(n):
            term = F.apply(i, L.expr) + forces[i] - self._dt(p[i])
            for k in range(n):
                if p[k] == 0:
                    continue
                rv = sp.Add(*[R[k][i][j] * v[j] for j in range(n) if R[k][i][j] != 0])
                if rv != 0:
                    term -= rv * p[k]
            term -= sp.Add(*[v[j] * F.apply(j, p[i]) for j in range(n)])
            out.append(term)
        return out

    # --- the field -------------------------------------------------------------------------------
    def field(self) -> "ChetaevField":
        """The Chetaev field: accelerations ``Γ^i(q, v, t)`` and multipliers ``λ_ν`` (valid on C).

        Raises
        ------
        IrregularLagrangianError
            If the bordered matrix ``[[g, −Bᵀ], [Φ, 0]]`` is singular (L not regular
            with respect to the constraints and displacements).
        """
        return self._field

    def _quasi_points(self) -> list:
        """The sample points of C with the quasi-velocities ``v = θ u`` added."""
        b = self.bundle
        th, u = b.frame.coframe, b.chart.velocities
        out = []
        for p in self.constraints.points_on_C():
            pt = dict(p)
            for i, v in enumerate(b.quasi_velocities):
                pt[v] = sp.Float(sum(numeric_value(th[i, A], p).real * float(p[u[A]]) for A in range(b.dim)), 30)
            out.append(pt)
        return out

    def _split(self, matrix: sp.Matrix) -> tuple:
        """Column indices ``dep`` (k of them, chosen from the last backwards) with ``matrix[:, dep]``
        invertible on C, and the null-space basis ``N`` (n × m): ``N_ind = I``, ``N_dep = −M_dep⁻¹ M_ind``."""
        n, k = self.bundle.dim, self.k
        pts = self._quasi_points()
        num = [np.array([[numeric_value(matrix[a, i], p).real for i in range(n)] for a in range(k)]) for p in pts]
        dep: list = []
        for i in reversed(range(n)):
            if len(dep) == k:
                break
            if all(_numeric_rank(M[:, dep + [i]]) == len(dep) + 1 for M in num):
                dep.append(i)
        if len(dep) < k:
            raise IrregularLagrangianError(
                "the displacement or constraint matrix has rank < k on C in this frame; the Chetaev equations "
                "are not determined."
            )
        dep = sorted(dep)
        ind = [i for i in range(n) if i not in dep]
        M_dep = matrix.extract(list(range(k)), dep)
        cols = _inverse_times(M_dep, [[-matrix[a, j] for a in range(k)] for j in ind])
        N = sp.zeros(n, len(ind))
        for j, i in enumerate(ind):
            N[i, j] = 1
            for nu, d in enumerate(dep):
                N[d, j] = cols[j][nu]
        return dep, ind, M_dep, N

    @cached_property
    def _field(self) -> "ChetaevField":
        # Γ = Γ_p + N_Φ w with Φ Γ_p = s (tangency), and N_Bᵀ (g Γ − r) = 0 (d'Alembert along the
        # virtual displacements, which span ker B): an m × m system, like g_αβ of Γ_nh (docs/nonholonomic.rst).
        n, k = self.bundle.dim, self.k
        data = self._frame_data
        Phi, B = data["Phi"], data["B"]
        r, s = self._rows
        g = self.lagrangian.hessian
        dep, ind, Phi_dep, N = self._split(Phi)
        (sp_dep,) = _inverse_times(Phi_dep, [s])
        gamma_p = [sp.S.Zero] * n
        for nu, d in enumerate(dep):
            gamma_p[d] = sp_dep[nu]
        if B is Phi:
            depB, NB = dep, N
        else:
            depB, _, _, NB = self._split(B)
        m = len(ind)
        g_gp = [sp.Add(*[g[i, j] * gamma_p[j] for j in range(n) if g[i, j] != 0 and gamma_p[j] != 0]) for i in range(n)]
        gN = [[sp.Add(*[g[i, l] * N[l, j] for l in range(n) if g[i, l] != 0 and N[l, j] != 0]) for j in range(m)]
              for i in range(n)]
        A = sp.Matrix(m, m, lambda a, j: reduce_if_cheap(
            sp.Add(*[NB[i, a] * gN[i][j] for i in range(n) if NB[i, a] != 0 and gN[i][j] != 0]), 400))
        rhs = [sp.Add(*[NB[i, a] * (r[i] - g_gp[i]) for i in range(n) if NB[i, a] != 0]) for a in range(m)]
        w = solve_square(A, rhs) if m else ()
        if w is None:
            raise IrregularLagrangianError(
                "the Chetaev equations do not determine the motion: the kinetic-energy matrix restricted to "
                "the virtual displacements (N_βᵀ g N_φ, with N_β, N_φ bases of ker β and ker ∂φ/∂v) is singular "
                "on C. The kinetic energy must be positive on the allowed velocities."
            )
        gamma = [gamma_p[i] + sp.Add(*[N[i, j] * w[j] for j in range(m) if N[i, j] != 0]) for i in range(n)]
        # λ from the rows depB: Σ_ν B_νi λ_ν = (g Γ − r)_i
        resid = [sp.Add(*[g[i, j] * gamma[j] for j in range(n) if g[i, j] != 0]) - r[i] for i in depB]
        BT = sp.Matrix(k, k, lambda a, nu: B[nu, depB[a]])
        lam = solve_square(BT, resid)
        return ChetaevField(self, tuple(reduce_if_cheap(e, 400) for e in gamma),
                            tuple(reduce_if_cheap(e, 400) for e in lam))

    # --- coordinate equations ----------------------------------------------------------------------
    @cached_property
    def natural_lagrangian(self) -> sp.Expr:
        """L in ``(q, u)``."""
        return self.lagrangian.natural_expr()

    def euler_lagrange_expressions(self, accelerations: Sequence | None = None) -> tuple:
        """``E_A(L) = W_AB q̈^B + (∂²L/∂u^A∂q^B) u^B + ∂²L/∂u^A∂t − ∂L/∂q^A`` in coordinates.

        ``accelerations`` are the expressions to use for ``q̈`` (default: the symbols ``q_ddot``).
        """
        chart, Ln = self.chart, self.natural_lagrangian
        q, u = chart.coordinates, chart.velocities
        qdd = acceleration_symbols(chart) if accelerations is None else tuple(accelerations)
        out = []
        for A in range(len(q)):
            pA = Ln.diff(u[A])
            e = sp.Add(*[pA.diff(u[B]) * qdd[B] + pA.diff(q[B]) * u[B] for B in range(len(q))])
            out.append(e + self._dt(pA) - Ln.diff(q[A]))
        return tuple(out)

    def equations_with_multipliers(self, multipliers: Sequence | None = None) -> list:
        """``E_A(L) = F_A + λ_ν β_νA`` (with ``q_ddot`` symbols) and ``φ^ν = 0`` as ``Eq`` objects."""
        lam = multiplier_symbols(self.k) if multipliers is None else tuple(multipliers)
        E = self.euler_lagrange_expressions()
        beta = self.beta
        eqs = [sp.Eq(E[A], self.forces[A] + sp.Add(*[lam[a] * beta[a, A] for a in range(self.k)]), evaluate=False)
               for A in range(self.chart.dim)]
        return eqs + [sp.Eq(phi, 0, evaluate=False) for phi in self.constraints.expressions]

    def maggi(self, dependent: Sequence | None = None) -> "MaggiEquations":
        """The multiplier-free (Maggi) equations for the given dependent velocities (Talamucci 2025, eq. (22)/(27)).

        Raises
        ------
        UnsolvableConstraintsError
            If ``∂φ/∂u_dep`` is singular on C.
        """
        dep = self.constraints.dependent if dependent is None else self.constraints.check_dependent(dependent)
        return MaggiEquations(self, dep)

    def __str__(self):
        return f"Chetaev system: {self.lagrangian}, constraints {', '.join(f'{e} = 0' for e in self.constraints.expressions)}"

    def as_latex(self) -> str:
        """The Lagrangian (in natural velocities) and the constraints ``0 = φ_a`` as a LaTeX ``aligned`` block."""
        return problem_latex(self.lagrangian.natural_expr(), self.constraints.expressions)

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"


def _to_natural(bundle: TangentBundle, expr) -> sp.Expr:
    """``v^i = θ^i_A u^A`` substituted over the expression DAG (derived fields are large trees)."""
    th, u = bundle.frame.coframe, bundle.chart.velocities
    sub = {v: sp.Add(*[th[i, A] * u[A] for A in range(bundle.dim) if th[i, A] != 0])
           for i, v in enumerate(bundle.quasi_velocities)}
    return xreplace_dag(expr, sub)


def multiplier_symbols(k: int) -> tuple:
    """``lambda1..lambdak`` (real symbols)."""
    return tuple(sp.Symbol(f"lambda{a + 1}", real=True) for a in range(k))


@dataclass(frozen=True, eq=False)
class ChetaevField(EquationDisplay):
    """The Chetaev field in the Hamel chart of the Lagrangian's frame (docs/chetaev.rst).

    Attributes
    ----------
    system : ChetaevSystem
    accelerations : tuple
        ``Γ^i = dv^i/dt`` as functions of ``(q, v, t)``, valid on C.
    multipliers : tuple
        ``λ_ν`` with ``E_A(L) = F_A + λ_ν β_νA`` for the constraints as written.
    """

    system: ChetaevSystem
    accelerations: tuple
    multipliers: tuple

    @property
    def bundle(self) -> TangentBundle:
        return self.system.bundle

    def __call__(self, f) -> sp.Expr:
        """``Γ(f)`` for f in ``(q, v, t)`` or ``(q, q_dot, t)``: the time derivative along motions
        (in the same velocities as f; valid on C)."""
        b = self.bundle
        f = sympified(f)
        if f.free_symbols & set(b.chart.velocities):
            return _to_natural(b, self(b.to_quasi(f)))
        X, v = b.frame.vectors, b.quasi_velocities
        out = sp.Add(*[X[i, A] * v[i] * f.diff(q) for A, q in enumerate(b.chart.coordinates)
                       for i in range(b.dim) if X[i, A] != 0])
        out += sp.Add(*[G * f.diff(vi) for G, vi in zip(self.accelerations, v) if G != 0])
        return out + self.system._dt(f)

    def natural_accelerations(self, natural: bool = True) -> dict:
        """``q̈^A = X_i^A Γ^i + v^i v^j X_j(X_i^A)`` (docs/theory.rst, Lagrangian dynamics in a frame); in ``(q, q_dot, t)`` with ``natural=True``."""
        b = self.bundle
        X, v = b.frame.vectors, b.quasi_velocities
        out = {}
        for A, q in enumerate(b.chart.coordinates):
            acc = sp.Add(*[X[i, A] * self.accelerations[i] for i in range(b.dim) if X[i, A] != 0])
            acc += sp.Add(*[v[i] * b.total_derivative(X[i, A]) for i in range(b.dim) if not X[i, A].is_number])
            out[q] = _to_natural(b, acc) if natural else acc
        return out

    def natural_multipliers(self) -> tuple:
        """``λ_ν`` in ``(q, q_dot, t)`` (valid on C), for the constraints as written."""
        return tuple(_to_natural(self.bundle, lam) for lam in self.multipliers)

    def constraint_forces(self) -> tuple:
        """``R_A = λ_ν β_νA`` in ``(q, q_dot, t)``: the generalized constraint forces."""
        beta, lam = self.system.beta, self.natural_multipliers()
        return tuple(sp.Add(*[lam[a] * beta[a, A] for a in range(self.system.k)]) for A in range(beta.cols))

    def first_order_system(self) -> ODESystem:
        """``(q, q_dot)' = (q_dot, q̈(q, q_dot, t))`` with the constraints as invariants (for numerics)."""
        chart = self.system.chart
        acc = self.natural_accelerations()
        state = chart.coordinates + chart.velocities
        rhs = chart.velocities + tuple(acc[q] for q in chart.coordinates)
        lam = self.natural_multipliers()
        t = self.system.time
        params = tuple(sorted(free_symbols(rhs + lam) - set(state) - ({t} if t is not None else set()),
                              key=sp.default_sort_key))
        return ODESystem(state, rhs, params, t, self.system.constraints.expressions, lam)

    def implicit_form(self) -> ImplicitForm:
        """The linear system ``M x = F`` this field solves (:meth:`ChetaevSystem.implicit_form`)."""
        return self.system.implicit_form()

    def equations(self) -> list:
        """``[Eq(v_i_dot, Γ^i), …]`` followed by ``[Eq(lambda_ν, …)]``."""
        b = self.bundle
        eqs = [sp.Eq(d, G) for d, G in zip(b.quasi_velocity_rates, self.accelerations)]
        return eqs + [sp.Eq(s, lam) for s, lam in zip(multiplier_symbols(self.system.k), self.multipliers)]

    def to_dict(self) -> dict:
        return {
            "q_ddot": {str(q): str(e) for q, e in self.natural_accelerations().items()},
            "multipliers": [str(lam) for lam in self.natural_multipliers()],
        }


@dataclass(frozen=True, eq=False)
class MaggiEquations(EquationDisplay):
    """The multiplier-free equations for chosen dependent velocities (Talamucci 2025, eqs. (22), (27)).

    Attributes
    ----------
    system : ChetaevSystem
    dependent : tuple of int
        Indices of the dependent velocities ``u^{m+ν}``.
    """

    system: ChetaevSystem
    dependent: tuple

    @property
    def independent(self) -> tuple:
        return tuple(A for A in range(self.system.chart.dim) if A not in self.dependent)

    @cached_property
    def gamma(self) -> sp.Matrix:
        """``γ = −β_dep⁻¹ β_ind`` (k × m); for Chetaev displacements ``∂α/∂u_ind`` on C."""
        return self.system.displacements.gamma(self.system.constraints, self.dependent)

    @property
    def explicit_solutions(self) -> tuple:
        """The branches ``{u_dep: α(q, u_ind, t)}`` of ``φ = 0`` that sympy finds explicitly (may be empty)."""
        return self.system.constraints.explicit_solutions(self.dependent)

    def equations(self) -> list:
        """``E_r(L) + γ_νr E_{m+ν}(L) = F_r + γ_νr F_{m+ν}`` (``q_ddot`` symbols), r independent."""
        s = self.system
        E, F, gam = s.euler_lagrange_expressions(), s.forces, self.gamma
        out = []
        for j, r in enumerate(self.independent):
            lhs = E[r] + sp.Add(*[gam[nu, j] * E[A] for nu, A in enumerate(self.dependent)])
            rhs = F[r] + sp.Add(*[gam[nu, j] * F[A] for nu, A in enumerate(self.dependent)])
            out.append(sp.Eq(lhs, rhs, evaluate=False))
        return out

    def accelerations(self) -> dict:
        """``q̈(q, u, t)`` on C from the m Maggi equations and the k differentiated constraints
        ``(∂φ/∂u) q̈ = −(∂φ/∂q) u − ∂φ/∂t`` (no multipliers involved)."""
        s = self.system
        chart = s.chart
        q, u = chart.coordinates, chart.velocities
        qdd = acceleration_symbols(chart)
        rows = [e.lhs - e.rhs for e in self.equations()]
        for phi in s.constraints.expressions:
            rows.append(sp.Add(*[phi.diff(u[A]) * qdd[A] + phi.diff(q[A]) * u[A] for A in range(len(q))]) + s._dt(phi))
        M = sp.Matrix(len(rows), len(q), lambda i, A: rows[i].diff(qdd[A]))
        rhs = [-xreplace_dag(r, dict.fromkeys(qdd, 0)) for r in rows]
        sol = solve_square(M, rhs)
        if sol is None:
            raise IrregularLagrangianError(
                "the Maggi equations with the differentiated constraints do not determine the accelerations "
                "(singular system); the Lagrangian is not regular on the virtual displacements."
            )
        return dict(zip(q, sol))

    def reduced_accelerations(self, branch: int = 0) -> dict:
        """``q̈_ind(q, u_ind, t)`` on the branch ``u_dep = α(q, u_ind, t)`` (explicit α required).

        ``u_dep`` is replaced by α and ``q̈_dep`` by ``α̇ = (∂α/∂q) u + (∂α/∂u_ind) q̈_ind + ∂α/∂t``;
        for Chetaev displacements ``γ = ∂α/∂u_ind`` is differentiated directly (eq. (23)).

        Raises
        ------
        ConstraintError
            If sympy found no explicit solution for the dependent velocities.
        """
        sols = self.explicit_solutions
        if not sols:
            raise ConstraintError(
                "sympy could not solve the constraints explicitly for the dependent velocities; use "
                "MaggiEquations.accelerations(), which works on C with implicit differentiation."
            )
        if not 0 <= branch < len(sols):
            raise DimensionError(f"branch {branch} out of range: {len(sols)} explicit solution(s).")
        s = self.system
        chart = s.chart
        q, u = chart.coordinates, chart.velocities
        qdd = acceleration_symbols(chart)
        alpha = sols[branch]
        ind = self.independent
        on_branch = dict(alpha)
        adot = {}
        for A in self.dependent:
            a = alpha[u[A]]
            rate = sp.Add(*[a.diff(q[B]) * xreplace_dag(u[B], on_branch) for B in range(len(q))])
            rate += sp.Add(*[a.diff(u[r]) * qdd[r] for r in ind]) + s._dt(a)
            adot[qdd[A]] = rate
        if isinstance(s.displacements, ChetaevDisplacements):
            gam = sp.Matrix(s.k, len(ind), lambda nu, j: alpha[u[self.dependent[nu]]].diff(u[ind[j]]))
        else:
            gam = self.gamma.applyfunc(lambda e: xreplace_dag(e, on_branch))
        E = [xreplace_dag(xreplace_dag(e, on_branch), adot) for e in s.euler_lagrange_expressions()]
        F = [xreplace_dag(f, on_branch) for f in s.forces]
        rows = []
        for j, r in enumerate(ind):
            rows.append(E[r] - F[r] + sp.Add(*[gam[nu, j] * (E[A] - F[A]) for nu, A in enumerate(self.dependent)]))
        M = sp.Matrix(len(rows), len(ind), lambda i, j: rows[i].diff(qdd[ind[j]]))
        rhs = [-xreplace_dag(r, dict.fromkeys(qdd, 0)) for r in rows]
        sol = solve_square(M, rhs)
        if sol is None:
            raise IrregularLagrangianError("the reduced Maggi equations are singular on this branch.")
        return {q[r]: e for r, e in zip(ind, sol)}

    def reduced_system(self, branch: int = 0) -> ODESystem:
        """The motion on C in the state ``(q, u_ind)``: ``q̇_ind = u_ind``, ``q̇_dep = α``, ``u̇_ind = q̈_ind``."""
        s = self.system
        chart = s.chart
        q, u = chart.coordinates, chart.velocities
        alpha = self.explicit_solutions[branch] if self.explicit_solutions else None
        acc = self.reduced_accelerations(branch)
        state = q + tuple(u[r] for r in self.independent)
        qdot = tuple(alpha[u[A]] if A in self.dependent else u[A] for A in range(len(q)))
        rhs = qdot + tuple(acc[q[r]] for r in self.independent)
        t = s.time
        params = tuple(sorted(free_symbols(rhs) - set(state) - ({t} if t is not None else set()),
                              key=sp.default_sort_key))
        return ODESystem(state, rhs, params, t, ())

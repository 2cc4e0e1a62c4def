"""Lagrangians in the Hamel chart, Cartan forms and the Euler–Lagrange field (docs/theory.rst, *Lagrangian dynamics in a frame*).

With ``p_i = ∂L/∂v^i = X_i^V(L)`` and the frame Hessian ``g_ij = ∂²L/∂v^i∂v^j``:

* energy ``E_L = Δ(L) − L = v^i p_i − L``;
* Cartan 1-form ``θ_L = p_i θ^i`` and 2-form ``dθ_L``;
* Euler–Lagrange field (Prop. 1 of Crampin & Mestdag (2010)): the unique SODE with
  ``Γ(X_i^V L) − X_i^C(L) = 0``, i.e. ``g_ij Γ^j = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i)``;
* Hamel's equations ``d/dt p_i − X_i(L) + R^k_ij v^j p_k = 0``, ``q̇^A = X_i^A v^i``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from ..algebra import generic_rank, size_exceeds, solve_generic, solve_square, tidy
from ..algebra import kernel as _kernel
from ..algebra.differentiation import diff_dag
from ..algebra.expressions import free_symbols as dag_free_symbols
from ..algebra.implicit import ImplicitForm
from ..errors import ArgumentError, DimensionError, IrregularLagrangianError
from ..parsing import as_expression
from ..geometry.forms import Form
from ..geometry.frame import Frame
from ..geometry.tangent import SecondOrderField, TangentBundle
from .cartan import solve_cartan_equation
from .forces import forcing_terms
from ..algebra.printing import latex

__all__ = ["Lagrangian", "HamelEquations"]

_INPUT_TIDY_LIMIT = 600


def _worth_reducing(expr: sp.Expr, coordinates) -> bool:
    """True if ``expr`` has positive powers of sums (unexpanded squares of velocities, as in the n-trailer's
    kinetic energy; a potential ``1/(x² + y²)`` is left as written) or trigonometric functions of the coordinates: then one ``tidy`` on input pays off."""
    coords = set(coordinates)
    if any(p.base.is_Add and p.exp.is_positive for p in expr.atoms(sp.Pow)):
        return True
    return any(f.free_symbols & coords for f in expr.atoms(sp.sin, sp.cos, sp.tan))


def _names(bundle: TangentBundle) -> tuple:
    """The symbols an expression on ``bundle`` may use by name: q, q_dot, parameters, v, extra."""
    chart = bundle.chart
    return chart.coordinates + chart.velocities + chart.parameters + bundle.quasi_velocities + bundle.extra


@dataclass(frozen=True, eq=False)
class Lagrangian:
    """A Lagrangian ``L(q, v)`` on TQ in the Hamel chart of a frame.

    Parameters
    ----------
    bundle : TangentBundle or Frame
        The Hamel chart (a Frame is wrapped in ``TangentBundle(frame)``).
    expr : sympy expression
        L in the coordinates q and either the quasi-velocities ``v^i`` or the
        natural velocities ``q_dot`` (these are rewritten with ``u = X v``).
    reduce : bool
        Put L given in natural velocities into a compact normal form on input (``tidy``; default).
        ``False`` keeps it as written: for a system whose dynamics take Maggi's route, which never
        uses the normal form (:attr:`anholo.system.System.route`).

    Examples
    --------
    Free rigid body in Euler angles with body angular velocities (docs/theory.rst, *Lagrangian dynamics in a frame*):

    >>> import sympy as sp
    >>> from anholo import Chart, Frame, Lagrangian
    >>> phi, th, psi = sp.symbols("phi theta psi", real=True)
    >>> I1, I2, I3 = sp.symbols("I1 I2 I3", positive=True)
    >>> body = [[sp.sin(th)*sp.sin(psi), sp.cos(psi), 0],
    ...         [sp.sin(th)*sp.cos(psi), -sp.sin(psi), 0],
    ...         [sp.cos(th), 0, 1]]
    >>> F = Frame.from_coframe(Chart([phi, th, psi]), body)
    >>> L = Lagrangian(F, (I1*sp.Symbol("v1", real=True)**2 + I2*sp.Symbol("v2", real=True)**2
    ...                    + I3*sp.Symbol("v3", real=True)**2) / 2)
    >>> L.hamel_equations()[0]
    Eq(I1*v1_dot, I2*v2*v3 - I3*v2*v3)
    """

    bundle: TangentBundle
    expr: sp.Expr
    reduce: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.bundle, Frame):
            object.__setattr__(self, "bundle", TangentBundle(self.bundle))
        if not isinstance(self.bundle, TangentBundle):
            raise ArgumentError(f"Lagrangian: the first argument must be a Frame or a TangentBundle, got "
                                f"{type(self.bundle).__name__}; e.g. Lagrangian(Frame.coordinate(chart), L).")
        expr = as_expression(self.expr, _names(self.bundle), where="Lagrangian")
        if dag_free_symbols([expr]) & set(self.bundle.chart.velocities):
            # given in natural velocities: rewrite with u = X v and reduce once, on input
            # (e.g. the rigid body's I1*(sin(psi)**2 + cos(psi)**2)*v1**2/2 -> I1*v1**2/2)
            # In a coordinate frame u = v is a renaming: an expression that is already a sum of
            # monomials without trigonometric functions of q is kept as written.
            coordinate = self.bundle.frame.is_coordinate_frame
            if not coordinate:
                try:
                    object.__setattr__(self, "expr", self._quasi_in_kernel(expr))
                    return
                except _kernel.Unsupported:
                    pass
            natural = expr
            expr = self.bundle.to_quasi(expr)
            if self.reduce and (not coordinate or _worth_reducing(expr, self.bundle.chart.coordinates)) and \
                    not size_exceeds(expr, 2 * _INPUT_TIDY_LIMIT):
                expr = tidy(expr)
            elif coordinate:  # kept as written: the natural form is the input (no renaming back)
                self.__dict__["_natural"] = natural
        object.__setattr__(self, "expr", expr)

    @classmethod
    def from_natural(cls, bundle, expr) -> "Lagrangian":
        """L given in the natural velocities ``q_dot`` (same as the constructor)."""
        return cls(bundle, expr)

    # --- basic objects -----------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.bundle.frame

    @cached_property
    def momenta(self) -> tuple:
        """``p_i = ∂L/∂v^i``."""
        return tuple(diff_dag(self.expr, v) for v in self.bundle.quasi_velocities)

    @cached_property
    def hessian(self) -> sp.ImmutableMatrix:
        """Frame Hessian ``g_ij = ∂²L/∂v^i∂v^j``."""
        v = self.bundle.quasi_velocities
        return sp.ImmutableMatrix(len(v), len(v), lambda i, j: diff_dag(self.momenta[i], v[j]))

    def is_regular(self) -> bool:
        """True if ``det g`` is not identically zero (checked at random points)."""
        return self.hessian_rank() == self.bundle.dim

    def hessian_rank(self, block=None) -> int:
        """Generic rank of the Hessian (or of ``g[block, block]`` for an index list)."""
        g = self.hessian if block is None else self.hessian.extract(list(block), list(block))
        return generic_rank(g)  # exact at a random point when the kernel applies; no symbolic elimination

    @cached_property
    def energy(self) -> sp.Expr:
        """``E_L = v^i p_i − L``."""
        return sp.Add(*[v * p for v, p in zip(self.bundle.quasi_velocities, self.momenta)]) - self.expr

    def natural_expr(self) -> sp.Expr:
        """L in the natural velocities ``q_dot`` (computed once)."""
        if "_natural" not in self.__dict__:
            self.__dict__["_natural"] = self.bundle.to_natural(self.expr)
        return self.__dict__["_natural"]

    def in_frame(self, frame: Frame, **bundle_kwargs) -> "Lagrangian":
        """The same function on TQ in the Hamel chart of another frame.

        With ``X'_i = P_i^j X_j`` (``P = X' θᵀ``, docs/theory.rst, *Frames on Q*) the old
        quasi-velocities are ``v^j = P_i^j v'^i``; L is rewritten by that linear
        substitution, without passing through the natural velocities (a body
        frame's cos θ, sin θ never enter when the change of frame is constant).
        """
        if frame.chart != self.frame.chart:
            raise DimensionError("the new frame lives on another chart than the Lagrangian.")
        bundle = TangentBundle(frame, **bundle_kwargs)
        try:
            return self._in_frame_in_kernel(bundle)[0]
        except _kernel.Unsupported:
            pass
        if self.frame.is_coordinate_frame:
            return Lagrangian(bundle, self.natural_expr())
        P = (frame.vectors * self.frame.coframe.T).applyfunc(tidy)
        old, new = self.bundle.quasi_velocities, bundle.quasi_velocities
        n = len(old)
        sub = {old[j]: sp.Add(*[P[i, j] * new[i] for i in range(n) if P[i, j] != 0]) for j in range(n)}
        expr = self.expr.xreplace(sub)
        if not size_exceeds(expr, 2 * _INPUT_TIDY_LIMIT):
            expr = tidy(expr)
        return Lagrangian(bundle, expr)

    def _in_frame_in_kernel(self, bundle: TangentBundle, extra=()) -> tuple:
        """:meth:`in_frame` over the differential field of :mod:`anholo.algebra.kernel`:
        ``v^j = P_i^j v'^i`` with ``P = X' θᵀ`` substituted in the polynomial arithmetic.

        Returns ``(Lagrangian, (K, X', θ', (T, V)))`` — the field and the new frame, coframe and
        Lagrangian (its velocity-dependent and velocity-free parts) as its elements, for callers that go on computing in K (``extra``
        expressions are included among its generators).
        """
        frame = bundle.frame
        old_v, new_v = self.bundle.quasi_velocities, bundle.quasi_velocities
        K = _kernel.DiffField([self.expr, *frame.vectors, *frame.coframe, *self.frame.coframe, *extra],
                              frame.chart.coordinates, extra_symbols=tuple(old_v) + tuple(new_v))
        X, th = _kernel.matrix(K, frame.vectors), _kernel.matrix(K, frame.coframe)
        P = X if self.frame.is_coordinate_frame else _kernel.matmul(
            K, X, _kernel.transpose(_kernel.matrix(K, self.frame.coframe)))
        n = len(old_v)
        vk = [K.convert(v) for v in new_v]
        sub = {old_v[j]: sum((P[i][j] * vk[i] for i in range(n) if P[i][j]), K.field.zero) for j in range(n)}
        Lk = _kernel.substitute(K, K.convert(self.expr), sub)
        T, V = (_kernel.simplest(K, e) for e in _kernel.split(K, Lk, new_v))  # T(q, v), −V(q)
        L = Lagrangian._trusted(bundle, K.to_expr(T) + K.to_expr(V))
        return L, (K, X, th, (T, V))

    def _quasi_in_kernel(self, expr: sp.Expr) -> sp.Expr:
        """``u = X v`` substituted over the field of :mod:`anholo.algebra.kernel`, in normal form as
        ``T(q, v) + (−V(q))`` (what ``to_quasi`` and ``tidy`` give, without expression trees)."""
        b = self.bundle
        frame, u, v = b.frame, b.chart.velocities, b.quasi_velocities
        K = _kernel.DiffField([expr, *frame.vectors], extra_symbols=tuple(u) + tuple(v))
        X = _kernel.matrix(K, frame.vectors)
        vk = [K.convert(s) for s in v]
        n = len(u)
        sub = {u[A]: sum((X[j][A] * vk[j] for j in range(n) if X[j][A]), K.field.zero) for A in range(n)}
        Lk = _kernel.substitute(K, K.convert(expr), sub)
        T, V = (_kernel.simplest(K, e) for e in _kernel.split(K, Lk, v))
        return K.to_expr(T) + K.to_expr(V)

    @classmethod
    def _trusted(cls, bundle: TangentBundle, expr: sp.Expr) -> "Lagrangian":
        """A Lagrangian already in the quasi-velocities of ``bundle`` and in normal form (no input pass)."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "bundle", bundle)
        object.__setattr__(obj, "expr", expr)
        return obj

    # --- forms ----------------------------------------------------------------------------
    @cached_property
    def cartan_one_form(self) -> Form:
        """``θ_L = p_i θ^i`` (pulled back to TQ), in the lifted coframe."""
        return Form(self.bundle, 1, {(i,): p for i, p in enumerate(self.momenta)})

    @cached_property
    def cartan_two_form(self) -> Form:
        """``dθ_L = dp_i ∧ θ^i + p_i dθ^i``."""
        return self.cartan_one_form.d()

    @cached_property
    def energy_differential(self) -> Form:
        """``dE_L = X_j^C(E) θ^j + X_j^V(E) ψ^j`` (+ extra coordinates)."""
        return Form.function(self.bundle, self.energy).d()

    # --- Euler–Lagrange field -----------------------------------------------------------
    @cached_property
    def _prop1_rhs(self) -> tuple:
        b, F = self.bundle, self.frame
        n, v, p = b.dim, b.quasi_velocities, self.momenta
        R = F.structure
        rhs = []
        for i in range(n):
            term = F.apply(i, self.expr)
            for k in range(n):
                if p[k] == 0:
                    continue
                rv = sp.Add(*[R[k][i][j] * v[j] for j in range(n) if R[k][i][j] != 0])
                if rv != 0:
                    term -= rv * p[k]
            term -= sp.Add(*[v[j] * F.apply(j, p[i]) for j in range(n)])
            rhs.append(term)
        return tuple(rhs)

    def implicit_form(self, forces=None, time=None) -> ImplicitForm:
        """The Euler–Lagrange field as the linear system ``g_ij v̇^j = F_i`` (no symbolic inversion).

        ``g_ij = ∂²L/∂v^i∂v^j``, ``F_i = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i)`` (Prop. 1 of
        Crampin & Mestdag (2010); docs/theory.rst), plus ``F_i − ∂p_i/∂t`` with ``F_i = X_i^A Q_A``
        for ``forces`` (a :class:`~anholo.dynamics.forces.Forces`) and an explicit ``time``
        (docs/forces.rst).  The time defaults to the forces' time.
        """
        rhs = tuple(self._prop1_rhs)
        if forces is not None or time is not None:
            if time is None and forces is not None:
                time = forces.time
            F = forces.frame_components(self.bundle) if forces is not None and not forces.is_zero else None
            phi = forcing_terms(F, self.momenta, time)
            rhs = tuple(r + e for r, e in zip(rhs, phi))
        return ImplicitForm(self.bundle.quasi_velocity_rates, self.hessian, rhs,
                            "the Euler-Lagrange field (g v_dot = F)")

    def euler_lagrange_field(self, forces=None, time=None) -> SecondOrderField:
        """The Euler–Lagrange field, frame-wise (Prop. 1 of Crampin & Mestdag (2010); docs/theory.rst, *Lagrangian dynamics in a frame*).

        Solves ``g_ij Γ^j = X_i(L) − R^k_ij v^j p_k − v^j X_j(p_i)``; with ``forces`` (a
        :class:`~anholo.dynamics.forces.Forces`) and/or an explicit ``time`` the right-hand side
        gets ``+ F_i − ∂p_i/∂t`` with ``F_i = X_i^A Q_A`` (Hamel's equations with forces,
        docs/forces.rst).  The time defaults to the forces' time.

        Raises
        ------
        IrregularLagrangianError
            If g is singular; use :meth:`euler_lagrange_field_cartan` for singular L.
        """
        try:
            gamma = self._euler_lagrange_in_kernel()
        except _kernel.Unsupported:
            gamma = solve_square(self.hessian, self._prop1_rhs)
        if gamma is None:
            raise IrregularLagrangianError(
                f"the Lagrangian is not regular: its Hessian in the quasi-velocities has rank "
                f"{self.hessian_rank()} < {self.bundle.dim}, so the Euler–Lagrange field is not unique. "
                "Use Lagrangian.euler_lagrange_field_cartan() to get the general solution and "
                "its solvability conditions."
            )
        if forces is not None or time is not None:
            gamma = self._forced_accelerations(gamma, forces, time)
        return SecondOrderField(self.bundle, gamma)

    def _forced_accelerations(self, gamma, forces, time) -> tuple:
        """``Γ^i + g^ij φ_j`` with ``φ_j = F_j − ∂p_j/∂t`` (:func:`~anholo.dynamics.forces.forcing_terms`)."""
        if time is None and forces is not None:
            time = forces.time
        F = forces.frame_components(self.bundle) if forces is not None and not forces.is_zero else None
        phi = forcing_terms(F, self.momenta, time)
        if all(e == 0 for e in phi):
            return tuple(gamma)
        d = solve_square(self.hessian, list(phi))
        return tuple(G + e for G, e in zip(gamma, d))

    def _euler_lagrange_in_kernel(self):
        """Γ^i of Prop. 1 by :func:`hamel_in_kernel` with every quasi-velocity free (None if g is singular)."""
        b, F = self.bundle, self.frame
        q, v = F.chart.coordinates, b.quasi_velocities
        K = _kernel.DiffField([self.expr, *F.vectors, *F.coframe], q, extra_symbols=v)
        X, th = _kernel.matrix(K, F.vectors), _kernel.matrix(K, F.coframe)
        solved = hamel_in_kernel(K, q, v, X, th, _kernel.split(K, K.convert(self.expr), v), len(v))
        if solved is None:
            return None
        return tuple(K.to_expr(_kernel.simplest(K, e)) for e in solved[0])

    def euler_lagrange_field_cartan(self, on=None):
        """Solve ``i_Γ dθ_L = −dE_L`` for a general field Γ (docs/theory.rst, *Lagrangian dynamics in a frame*).

        Returns a :class:`~anholo.dynamics.cartan.CartanSolution`: a particular
        field, the free directions and the conditions on TQ where solutions
        exist.  ``on`` (a dict symbol → expression) restricts to a submanifold
        given as a graph, e.g. ``{v3: 0}``.
        """
        return solve_cartan_equation(self, on=on)

    def hamel_equations(self) -> list:
        """Hamel's equations as ``Eq(d/dt p_i, X_i(L) − R^k_ij v^j p_k)`` in ``v_dot`` symbols.

        ``d/dt p_i`` is written out as ``g_ij v̇^j + v^j X_j(p_i)``; the kinematic
        equations ``q̇^A = X_i^A v^i`` are :meth:`kinematic_equations`.
        """
        return list(self.hamel().equations)

    def hamel(self) -> "HamelEquations":
        """Hamel's equations as a result object (printing, LaTeX, dict)."""
        b, F = self.bundle, self.frame
        n, v, p = b.dim, b.quasi_velocities, self.momenta
        vdot = b.quasi_velocity_rates
        eqs = []
        for i in range(n):
            lhs = sp.Add(*[self.hessian[i, j] * vdot[j] for j in range(n)])
            lhs += sp.Add(*[v[j] * F.apply(j, p[i]) for j in range(n)])
            rhs = F.apply(i, self.expr) - sp.Add(
                *[F.structure[k][i][j] * v[j] * p[k] for k in range(n) for j in range(n)
                  if F.structure[k][i][j] != 0]
            )
            eqs.append(sp.Eq(sp.expand(lhs), sp.expand(rhs), evaluate=False))
        return HamelEquations(self, tuple(eqs), tuple(self.kinematic_equations()))

    def kinematic_equations(self) -> list:
        """``q̇^A = X_i^A v^i`` as ``Eq(q_dot, …)``."""
        b = self.bundle
        X = b.frame.vectors
        return [
            sp.Eq(u, sp.Add(*[X[i, A] * b.quasi_velocities[i] for i in range(b.dim)]))
            for A, u in enumerate(b.chart.velocities)
        ]

    def __str__(self):
        return f"L = {self.expr}"

    def as_latex(self) -> str:
        return f"L = {latex(self.expr)}"

    def _repr_latex_(self):
        return f"${self.as_latex()}$"

    def to_dict(self) -> dict:
        return {"quasi": str(self.expr), "natural": str(self.natural_expr()), "regular": self.is_regular()}


@dataclass(frozen=True, eq=False)
class HamelEquations:
    """Hamel's equations ``d/dt p_i − X_i(L) + R^k_ij v^j p_k = 0`` with the kinematics."""

    lagrangian: Lagrangian
    equations: tuple
    kinematics: tuple

    def __iter__(self):
        return iter(self.equations)

    def __len__(self):
        return len(self.equations)

    def __getitem__(self, i):
        return self.equations[i]

    def __str__(self):
        return "\n".join(f"{e.lhs} = {e.rhs}" for e in self.equations + self.kinematics)

    def as_latex(self) -> str:
        rows = [f"{latex(e.lhs)} &= {latex(e.rhs)}" for e in self.equations + self.kinematics]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {
            "equations": [{"lhs": str(e.lhs), "rhs": str(e.rhs)} for e in self.equations],
            "kinematics": [{"lhs": str(e.lhs), "rhs": str(e.rhs)} for e in self.kinematics],
        }


def hamel_implicit_in_kernel(K, q, v, X, th, L_parts, m: int, beta=()) -> tuple:
    """The (constrained) Hamel equations in implicit form over the differential field K of
    :mod:`anholo.algebra.kernel` — nothing is solved.

    ``X``, ``th``: the frame and coframe as rows of elements of K; ``L_parts = (T, −V)``, the
    Lagrangian in the quasi-velocities ``v`` split by :func:`anholo.algebra.kernel.split`; the first
    ``m`` quasi-velocities are free and ``v^a = β^a`` (elements of K) for a ≥ m.  With
    ``v^j`` standing for ``(v^α, β^a)`` and ``L_c = L|_C`` (Props. 1 and 2 of Crampin & Mestdag (2010)):

        g_αβ Γ^β = F_α,   F_α = X_α(L_c) − p_a X_α(β^a) − R^k_αj v^j p_k − v^j X_j(p_α),
        −P_aβ Γ^β + μ_a = Q_a,   P_aβ = ∂p_a/∂v^β,   Q_a = v^j X_j(p_a) − [X_a(L_c) − p_b X_a(β^b) − R^k_aj v^j p_k],
        Γ^a = v^j X_j(β^a),

    with ``g_αβ = ∂²L_c/∂v^α∂v^β``, ``p_α = ∂L_c/∂v^α``, ``p_a = (∂L/∂v^a)|_C``.  ``force(i)``
    below (``X_i^C(L)|_C``) is where the right-hand sides are assembled.

    Returns ``(g, F, P, Q, Γ^a)`` as (lists of lists of) elements of K.
    """
    n = len(v)
    zero = K.field.zero
    vk = [K.convert(s) for s in v]
    vC = vk[:m] + list(beta)
    on_C = dict(zip(v[m:], beta))
    T, Vm = L_parts  # L = T + (−V) kept apart: velocity derivatives never meet V's denominators
    Tc = _kernel.substitute(K, T, on_C)

    def Xf(i, f):
        return K.gradient_along(f, X[i], q)

    def along(f):
        out = zero
        for j, vj in enumerate(vC):
            if vj:
                out += vj * Xf(j, f)
        return out

    # R^k_ij v^j on C, from [X_i, X_j] = R^k_ij X_k (docs/theory.rst, *The tangent bundle in a frame*)
    rv = [[zero] * n for _ in range(n)]  # rv[k][i]
    for i in range(n):
        for j in range(n):
            if i == j or not vC[j]:
                continue
            br = [Xf(i, X[j][A]) - Xf(j, X[i][A]) for A in range(n)]
            if not any(br):
                continue
            for k in range(n):
                val = K.reduce(sum((th[k][A] * br[A] for A in range(n) if br[A]), zero))
                if val:
                    rv[k][i] += val * vC[j]
    p = [K.reduce(K.diff(Tc, v[al])) for al in range(m)]
    p += [K.reduce(_kernel.substitute(K, K.diff(T, v[a]), on_C)) for a in range(m, n)]
    g = [[K.reduce(K.diff(p[al], v[be])) for be in range(m)] for al in range(m)]

    def force(i):
        """``X_i^C(L)|_C = X_i(L_c) − p_a X_i(β^a) − R^k_ij v^j p_k``."""
        out = Xf(i, Tc) + Xf(i, Vm)
        for a, b in enumerate(beta):
            if b and p[m + a]:
                out -= p[m + a] * Xf(i, b)
        for k in range(n):
            if p[k] and rv[k][i]:
                out -= rv[k][i] * p[k]
        return out

    F = [force(al) - along(p[al]) for al in range(m)]
    P = [[K.reduce(K.diff(p[a], v[al])) for al in range(m)] for a in range(m, n)]
    Q = [K.reduce(along(p[a]) - force(a)) for a in range(m, n)]
    rates = [K.reduce(along(b)) if b else zero for b in beta]
    return g, F, P, Q, rates


def hamel_in_kernel(K, q, v, X, th, L_parts, m: int, beta=()):
    """The (constrained) Hamel equations solved over the differential field K of :mod:`anholo.algebra.kernel`:
    :func:`hamel_implicit_in_kernel`, then ``g Γ = F`` solved (Gauss–Jordan over K) and ``μ_a = Q_a + P_aα Γ^α``.

    For m = n (no constraints) Γ is the Euler–Lagrange field.  Returns ``(Γ^α, Γ^a, μ_a)``
    (elements of K, reduced), or None if g is singular.
    """
    zero = K.field.zero
    g, F, P, Q, rates = hamel_implicit_in_kernel(K, q, v, X, th, L_parts, m, beta)
    gamma = []
    if m:  # Gauss–Jordan on [g | F]: Γ itself, not g⁻¹ (whose entries have different denominators) times F
        rows = [list(g[al]) + [F[al]] for al in range(m)]
        if len(_kernel.gauss_jordan(K, rows, m)) < m:
            return None
        gamma = [K.reduce(row[m]) for row in rows]
    mu = [K.reduce(Qa + sum((G * Pa[al] for al, G in enumerate(gamma) if G and Pa[al]), zero))
          for Pa, Qa in zip(P, Q)]
    return gamma, rates, mu


def constrained_problem(lagrangian, constraints, kind, build) -> tuple:
    """Check a (Lagrangian, constraints) pair: returns ``(chart, constraints)``.

    ``constraints`` that are not yet a ``kind`` instance (e.g. a list of expressions or
    strings) are built with ``build(chart, constraints)``; both must live on the
    Lagrangian's chart.  Shared by the nonholonomic, Chetaev, vakonomic-comparison and
    Chaplygin problems.
    """
    if not isinstance(lagrangian, Lagrangian):
        raise ArgumentError(f"expected a Lagrangian as the first argument, got {type(lagrangian).__name__}; "
                            "build one with Lagrangian(Frame.coordinate(chart), L).")
    chart = lagrangian.frame.chart
    if not isinstance(constraints, kind):
        constraints = build(chart, constraints)
    if constraints.chart != chart:
        raise DimensionError("the constraints live on another chart than the Lagrangian.")
    return chart, constraints

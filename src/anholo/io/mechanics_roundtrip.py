"""The way back to sympy.physics.mechanics: a :func:`~anholo.io.mechanics.from_mechanics` model in its user's
own symbols and states (:meth:`~anholo.io.mechanics.MechanicsModel.in_user_symbols`).

anholo completes a Kane model (contact coordinates, wheel angles; docs/mechanics_interop.rst), so its state
``(q̃, v^α)`` is longer than the user's ``(q, u)``.  The added coordinates are ignorable — they enter neither
T, V, the forces nor the constraints' coefficients — so the equations close on the user's state; their rates
are reported in :attr:`KaneForm.added_rates`.

:class:`KaneForm` (a model with speeds ``u``).  With ``q̇ = h(q, u)`` solved from the user's kinematic
differential equations and ``h̃`` the rates of all of anholo's coordinates (``θ̇ = s`` for a wheel angle,
``ṙ_0 = v_P − d/dt r_{P/0}`` for a root point), the partial velocities ``V_{Ar} = ∂h̃^A/∂u_r`` and, with
dependent speeds ``u_d = A_rs u_i`` from the user's velocity constraints ``B u + f = 0``
(``A_rs = −B_d⁻¹ B_i``), ``Ṽ_r = V_r + Σ_s V_s A_sr``.  Kane's equations (Kane & Levinson (1985) §6.1) are the
projections of Lagrange's,

    ``Σ_A Ṽ_{Ar} (E_A(L) − Q_A) = 0``,  ``E_A(L) = d/dt ∂L/∂q̇^A − ∂L/∂q^A`` at ``q̃̇ = h̃(q, u)``,

``q̃̈ = ∂h̃/∂q h + ∂h̃/∂u u̇``; so ``mass_matrix = [Ṽᵀ W V; B]`` (``W = ∂²L/∂q̇²``) and
``forcing = [−Ṽᵀ E|_{u̇=0}; −∂(B u + f)/∂q · h]`` (the velocity constraints differentiated once), the layout of
KanesMethod's ``mass_matrix``/``forcing``; ``mass_matrix_full``/``forcing_full`` add the kinematic rows
(``1, h`` or, for ``explicit_kinematics=False``, the user's ``∂k/∂q̇, −k|_{q̇=0}``).  Where the model's
velocities hold for all values of the speeds (no dependent speeds) these are KanesMethod's matrices entry by
entry (``M_rs = ∂²T/∂u_r∂u_s``); with dependent speeds KanesMethod differentiates the velocities as the model
states them (the rolling built in), anholo the true ones, so the dynamic rows differ by multiples of the
constraints and the solutions ``(q̇, u̇)`` are the same.

:meth:`KaneForm.rhs` is anholo's own field Γ_nh in the user's state: ``u̇_s = d/dt g_s(q̃, q̃̇)`` with
``u = g(q̃, q̃̇)`` and ``q̃̈`` the natural accelerations of Γ_nh (docs/nonholonomic.rst), not a solve of the
matrices above.  :meth:`KaneForm.linearize` hands the equations to sympy's ``Linearizer`` in KanesMethod's
general form (Peterson, Gede & Hubbard (2014)), with the same semantics as ``KanesMethod.linearize``.

:class:`LagrangeForm` (a LagrangesMethod): state ``(q, q̇, λ)``; ``mass_matrix_full = [[1, 0, 0], [0, W, −Aᵀ],
[0, A, 0]]``, ``forcing_full = (q̇, ∂L/∂q − (∂²L/∂q̇∂q) q̇ + Q, −(∂φ/∂q) q̇)`` with the user's constraints φ
(LagrangesMethod's ``coneqs``, ``A = ∂φ/∂q̇``); ``rhs()`` from Γ_nh (``q̈`` and the multipliers of the
constraints as written).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ..errors import MechanicsModelError

__all__ = ["UserModel", "KaneForm", "LagrangeForm"]


def _me():
    import sympy.physics.mechanics as me

    return me


def _name(f) -> str:
    return f.func.__name__ if isinstance(f, sp.core.function.AppliedUndef) else str(f)


@dataclass(frozen=True, eq=False)
class UserModel:
    """The model as its user wrote it (sympy dynamic symbols), kept by :func:`~anholo.io.mechanics.from_mechanics`.

    ``form`` is ``"kane"`` (speeds) or ``"lagrange"`` (a LagrangesMethod); ``u`` lists the independent speeds
    first (``independent`` of them); ``velocity_constraints`` are in ``(q, u)`` (Kane) or ``(q, q̇)`` (the
    ``nonhol_coneqs`` of a LagrangesMethod); ``added_rates`` maps each coordinate anholo added (its anholo symbol)
    to its rate in the user's dynamic symbols.
    """

    form: str
    q: tuple
    u: tuple
    independent: int
    kd_eqs: tuple
    velocity_constraints: tuple
    holonomic: tuple
    dependent_coordinates: tuple
    explicit_kinematics: bool
    added_rates: dict


def _solve(A: sp.Matrix, B: sp.Matrix) -> sp.Matrix:
    """``A⁻¹ B`` for a small square A: by rows for a diagonal A, else Cramer's rule ``adj(A) B / det(A)``
    (Berkowitz: division-free, no pivot chosen by a symbolic zero test — sympy's LUsolve can take a pivot
    its zero test misjudges on expressions with square roots, the bicycle's front contact)."""
    if A.is_diagonal():
        return sp.Matrix(B.rows, B.cols, lambda i, j: B[i, j] / A[i, i])
    det = A.det(method="berkowitz")
    adj = A.adjugate(method="berkowitz")
    return sp.Matrix(B.rows, B.cols, lambda i, j: sp.Add(*[adj[i, k] * B[k, j] for k in range(A.rows)]) / det)


class _Translation:
    """Between the user's dynamic symbols and anholo's plain symbols (parameters: the user's symbols ↔ real ones)."""

    def __init__(self, model):
        t = _me().dynamicsymbols._t
        self.t = t
        self.model = model
        self.params = {k: v for k, v in model.symbols.items() if k in model.chart.parameters or v in
                       model.chart.parameters}
        self.to_user = {v: k for k, v in model.symbols.items()}

    def back(self, e):
        return sp.sympify(e).xreplace(self.to_user)

    def back_matrix(self, M):
        return sp.Matrix(M).applyfunc(self.back)


class KaneForm:
    """A :class:`~anholo.io.mechanics.MechanicsModel` with speeds, in its user's symbols (see the module docstring).

    Attributes as KanesMethod's: ``q``, ``u`` (column matrices of the user's dynamic symbols, independent speeds
    first), ``mass_matrix``, ``forcing``, ``mass_matrix_kin``, ``forcing_kin``, ``mass_matrix_full``,
    ``forcing_full``, ``kindiffdict()``, ``rhs()``, ``linearize()``, ``to_linearizer()``; and the private
    ``_qdot``, ``_udot``, ``_uaux``, ``_qdep``, ``_udep`` that ``pydy.System`` reads, so ``pydy.System(form)``
    integrates it.  ``added_rates``: ``{added coordinate (a dynamic symbol): its rate in (q, u)}``.
    """

    def __init__(self, model):
        me = _me()
        self.model = model
        user = model.user
        self._user = user
        self._tr = _Translation(model)
        t = self._tr.t
        self.q = sp.Matrix(list(user.q))
        self.u = sp.Matrix(list(user.u))
        self._qdot = self.q.diff(t)
        self._udot = self.u.diff(t)
        self._uaux = sp.Matrix()
        self._qdep = list(user.dependent_coordinates)
        self._udep = list(user.u[user.independent:])
        self.explicit_kinematics = user.explicit_kinematics
        self._U = [sp.Dummy(_name(s), real=True) for s in user.u]
        self._Ud = [sp.Dummy(_name(s) + "_dot", real=True) for s in user.u]
        self._plain = {s: U for s, U in zip(user.u, self._U)}
        self._plain.update({q: model.symbols[q] for q in user.q})
        self._plain.update(self._tr.params)
        self._tr.to_user.update({U: s for U, s in zip(self._U, user.u)})
        self._tr.to_user.update({D: s.diff(t) for D, s in zip(self._Ud, user.u)})
        self._me = me

    # --- kinematics ---------------------------------------------------------------------------
    @cached_property
    def _kinematics(self) -> tuple:
        """``(K, k0, h)``: the user's ``K q̇ + k0 = 0`` (``K = ∂k/∂q̇``) and ``q̇ = h(q, u)``, in dynamic symbols."""
        kd = sp.Matrix(list(self._user.kd_eqs))
        qd = list(self._qdot)
        if kd.rows != len(qd):
            raise MechanicsModelError(f"{kd.rows} kinematic differential equations for the {len(qd)} coordinates "
                                      f"{[_name(q) for q in self.q]}; give one per coordinate.")
        K = kd.jacobian(qd)
        if any(k.has(*qd) for k in K):
            raise MechanicsModelError("the kinematic differential equations are not linear in the coordinates' rates.")
        k0 = kd.xreplace(dict.fromkeys(qd, 0))
        h = list(_solve(K, -k0))
        return K, k0, h

    def kindiffdict(self) -> dict:
        """``{q̇: h(q, u)}`` from the user's kinematic differential equations (KanesMethod's ``kindiffdict``)."""
        return dict(zip(self._qdot, self._kinematics[2]))

    def _to_plain(self, e):
        """A user expression in ``(q, q̇, u)`` in anholo's symbols, ``q̇ = h(q, u)`` substituted."""
        return sp.sympify(e).xreplace(self.kindiffdict()).xreplace(self._plain)

    @cached_property
    def _rates(self) -> list:
        """``h̃^A(q, u)`` for every coordinate of anholo's chart, in anholo's symbols (speeds as stand-ins)."""
        m = self.model
        by_symbol = {m.symbols[q]: h for q, h in zip(self.q, self._kinematics[2])}
        out = []
        for c in m.chart.coordinates:
            if c in by_symbol:
                out.append(self._to_plain(by_symbol[c]))
            elif c in self._user.added_rates:
                out.append(self._to_plain(self._user.added_rates[c]))
            else:
                raise MechanicsModelError(f"no rate for the coordinate {c} in the user's speeds; this model cannot be "
                                          "written in the user's state.")
        allowed = {m.symbols[q] for q in self.q} | set(self._U) | set(m.chart.parameters)
        stray = set().union(*(e.free_symbols for e in out)) - allowed
        if stray:
            raise MechanicsModelError(f"the rates of the coordinates depend on {sorted(map(str, stray))}, which are "
                                      "not the user's coordinates or speeds.")
        return out

    @property
    def added_rates(self) -> dict:
        """``{added coordinate (dynamic symbol): rate in the user's (q, u)}`` (wheel angles, contact points)."""
        m = self.model
        return {self._tr.back(c): self._tr.back(e) for c, e in zip(m.chart.coordinates, self._rates) if c in m.added}

    # --- Kane's equations ---------------------------------------------------------------------
    @cached_property
    def _equations(self) -> tuple:
        """``(M, F)`` of the module docstring in anholo's symbols: ``M u̇ = F``, o rows (p dynamic, m constraint)."""
        m = self.model
        qs, vs = list(m.chart.coordinates), list(m.chart.velocities)
        h = self._rates
        on = dict(zip(vs, h))
        n, U = len(qs), self._U
        L = m.lagrangian.natural_expr()
        Lv = [L.diff(v) for v in vs]
        W = [[Lv[A].diff(vs[B]).xreplace(on) if B >= A else None for B in range(n)] for A in range(n)]
        for A in range(n):
            for B in range(A):
                W[A][B] = W[B][A]
        V = [[h[A].diff(s) for s in U] for A in range(n)]
        qdd0 = [sp.Add(*[h[B].diff(qs[C]) * h[C] for C in range(n)]) for B in range(n)]
        E0 = []
        for A in range(n):
            e = sp.Add(*[W[A][B] * qdd0[B] for B in range(n) if W[A][B] != 0])
            e += sp.Add(*[Lv[A].diff(qs[B]).xreplace(on) * h[B] for B in range(n)])
            E0.append(e - L.diff(qs[A]).xreplace(on) - m.forces[A].xreplace(on))
        p = self._user.independent
        cons = [self._to_plain(c) for c in self._user.velocity_constraints]
        Bm = sp.Matrix([[c.diff(s) for s in U] for c in cons]) if cons else sp.zeros(0, len(U))
        if any(b.has(*U) for b in Bm):
            raise MechanicsModelError("the velocity constraints are not linear in the speeds.")
        Vt = [[V[A][r] for r in range(p)] for A in range(n)]
        if cons:
            Ars = -_solve(Bm[:, p:], Bm[:, :p])
            for A in range(n):
                for r in range(p):
                    Vt[A][r] += sp.Add(*[V[A][p + s] * Ars[s, r] for s in range(len(U) - p)])
        WV = [[sp.Add(*[W[A][B] * V[B][s] for B in range(n) if W[A][B] != 0 and V[B][s] != 0])
               for s in range(len(U))] for A in range(n)]
        M = sp.zeros(len(U), len(U))
        F = sp.zeros(len(U), 1)
        for r in range(p):
            for s in range(len(U)):
                M[r, s] = sp.Add(*[Vt[A][r] * WV[A][s] for A in range(n) if Vt[A][r] != 0])
            F[r] = -sp.Add(*[Vt[A][r] * E0[A] for A in range(n) if Vt[A][r] != 0])
        for i, c in enumerate(cons):
            M[p + i, :] = Bm[i, :]
            F[p + i] = -sp.Add(*[c.diff(qs[C]) * h[C] for C in range(n)])
        added = set(m.added) & (M.free_symbols | F.free_symbols)
        if added:
            raise MechanicsModelError(f"the coordinates {sorted(map(str, added))} that anholo added enter the "
                                      "equations (they are not ignorable), so the model has no form in the user's state alone.")
        return M, F

    @property
    def mass_matrix(self) -> sp.Matrix:
        """The o×o matrix of ``u̇``: Kane's dynamic equations (p rows), then the differentiated velocity
        constraints (KanesMethod's ``mass_matrix``)."""
        return self._tr.back_matrix(self._equations[0])

    @property
    def forcing(self) -> sp.Matrix:
        """The right side of ``mass_matrix · u̇ = forcing`` (KanesMethod's ``forcing``)."""
        return self._tr.back_matrix(self._equations[1])

    @property
    def mass_matrix_kin(self) -> sp.Matrix:
        """``1`` (explicit kinematics) or the user's ``∂k/∂q̇`` (``explicit_kinematics=False``)."""
        return sp.eye(len(self.q)) if self.explicit_kinematics else self._kinematics[0]

    @property
    def forcing_kin(self) -> sp.Matrix:
        return sp.Matrix(self._kinematics[2]) if self.explicit_kinematics else -self._kinematics[1]

    @property
    def mass_matrix_full(self) -> sp.Matrix:
        """``diag(mass_matrix_kin, mass_matrix)`` for the state ``(q, u)`` (KanesMethod's ``mass_matrix_full``)."""
        n, o = len(self.q), len(self.u)
        return self.mass_matrix_kin.row_join(sp.zeros(n, o)).col_join(sp.zeros(o, n).row_join(self.mass_matrix))

    @property
    def forcing_full(self) -> sp.Matrix:
        return self.forcing_kin.col_join(self.forcing)

    # --- anholo's field -----------------------------------------------------------------------
    def rhs(self) -> sp.Matrix:
        """``(q̇, u̇)`` of anholo's Γ_nh in the user's state (valid where the velocity constraints hold):
        ``q̇ = h(q, u)``,
        ``u̇_s = Σ_A ∂g_s/∂q̇^A q̈^A + ∂g_s/∂q^A q̇^A`` with ``u = g(q̃, q̃̇)`` and ``q̈`` the field's natural
        accelerations (KanesMethod's ``rhs()``)."""
        m = self.model
        qs, vs = list(m.chart.coordinates), list(m.chart.velocities)
        acc = m.field().natural_accelerations()
        on = dict(zip(vs, self._rates))
        out = list(self._kinematics[2])
        for s in self._user.u:
            g = m.speeds[_name(s)]
            e = sp.Add(*[g.diff(v) * acc[q] for q, v in zip(qs, vs)]) + sp.Add(*[g.diff(q) * v for q, v in zip(qs, vs)])
            out.append(self._tr.back(e.xreplace(on)))
        return sp.Matrix(out)

    # --- linearisation ------------------------------------------------------------------------
    def to_linearizer(self, linear_solver="LU"):
        """sympy's ``Linearizer`` of these equations in KanesMethod's general form: ``f_0 + f_1 = q̇ − h``,
        ``f_2 + f_3 = forcing − mass_matrix · u̇`` (dynamic rows), ``f_c`` the holonomic constraints, ``f_v`` the
        velocity constraints, ``f_a`` their derivatives (as ``KanesMethod.to_linearizer``)."""
        me = self._me
        p = self._user.independent
        M, F = self.mass_matrix, self.forcing
        ud = sp.Matrix(self._udot)
        f_0 = sp.Matrix(self._qdot)
        f_1 = -sp.Matrix(self._kinematics[2])
        f_2 = -M[:p, :] * ud
        f_3 = F[:p, :]
        f_4 = sp.zeros(p, 1)
        f_c = sp.Matrix(list(self._user.holonomic)) if self._user.holonomic else sp.Matrix()
        cons = [sp.sympify(c).xreplace(self.kindiffdict()) for c in self._user.velocity_constraints]
        f_v = sp.Matrix(cons) if cons else sp.Matrix()
        f_a = (M[p:, :] * ud - F[p:, :]) if cons else sp.Matrix()
        q_d = sp.Matrix(self._qdep) if self._qdep else sp.Matrix()
        q_i = sp.Matrix([x for x in self.q if x not in self._qdep])
        u_i = sp.Matrix(list(self.u[:p]))
        u_d = sp.Matrix(self._udep) if self._udep else sp.Matrix()
        known = set(self.q) | set(self.u) | set(self._qdot) | set(self._udot)
        r = sorted(me.find_dynamicsymbols(F, known), key=sp.default_sort_key)
        from sympy.physics.mechanics.linearize import Linearizer

        return Linearizer(f_0, f_1, f_2, f_3, f_4, f_c, f_v, f_a, self.q, self.u, q_i, q_d, u_i, u_d, sp.Matrix(r),
                          linear_solver=linear_solver)

    def linearize(self, *, linear_solver="LU", **kwargs):
        """``Linearizer.linearize(**kwargs)`` of :meth:`to_linearizer` (as ``KanesMethod.linearize``: e.g.
        ``op_point={...}, A_and_B=True`` gives ``(A, B, r)`` in the independent states, else ``(M, A, B, r)``).

        The operating point needs ``u̇`` too where the mass matrix depends on q (as for KanesMethod).  Without
        dependent speeds the equations are KanesMethod's and so is the result (tested on sympy's rolling disc).
        With dependent speeds the dynamic rows differ from KanesMethod's by multiples of the constraints; at an
        operating point that is not an equilibrium the Linearizer's result depends on that form (on test_kane5's
        disc neither KanesMethod's nor this form's A equals a finite-difference Jacobian of the reduced field).
        """
        linearizer = self.to_linearizer(linear_solver=linear_solver)
        return linearizer.linearize(**kwargs) + (linearizer.r,)

    def __repr__(self):
        return (f"KaneForm(q={list(self.q)}, u={list(self.u)}, added={list(self.added_rates)})")


class LagrangeForm:
    """A model read from a LagrangesMethod, in its user's symbols and LagrangesMethod's layout (module docstring).

    ``q``, ``u`` (= ``q̇``), ``lam_vec``, ``coneqs``, ``mass_matrix`` (``[W, −Aᵀ]``), ``forcing``,
    ``mass_matrix_full``, ``forcing_full``, ``rhs()`` (anholo's Γ_nh: ``q̇, q̈, λ``), ``linearize()``.
    """

    def __init__(self, model):
        me = _me()
        self.model = model
        user = model.user
        self._user = user
        self._me = me
        self._tr = _Translation(model)
        t = self._tr.t
        self.q = sp.Matrix(list(user.q))
        self._qdots = self.q.diff(t)
        self.u = self._qdots
        self._qdoubledots = self._qdots.diff(t)
        hol = sp.Matrix(list(user.holonomic)) if user.holonomic else sp.Matrix()
        non = sp.Matrix(list(user.velocity_constraints)) if user.velocity_constraints else sp.Matrix()
        self._hol_coneqs = hol
        self.coneqs = sp.Matrix([hol.diff(t), non]) if (hol or non) else sp.Matrix()
        k = len(self.coneqs)
        self.lam_vec = sp.Matrix(me.dynamicsymbols(f"lam1:{k + 1}")) if k else sp.Matrix()
        self._Qdd = [sp.Dummy(f"{_name(x)}_ddot", real=True) for x in user.q]
        self._tr.to_user.update({D: x for D, x in zip(self._Qdd, self._qdoubledots)})

    @cached_property
    def _parts(self) -> tuple:
        """``(W, F, A, r)`` in anholo's symbols: ``W q̈ − Aᵀλ = F``, ``A q̈ = r``, A and r from the user's
        ``coneqs``."""
        m = self.model
        qs, vs = list(m.chart.coordinates), list(m.chart.velocities)
        n = len(qs)
        L = m.lagrangian.natural_expr()
        Lv = [L.diff(v) for v in vs]
        W = sp.Matrix(n, n, lambda A, B: Lv[A].diff(vs[B]))
        F = sp.Matrix([L.diff(qs[A]) - sp.Add(*[Lv[A].diff(qs[B]) * vs[B] for B in range(n)]) + m.forces[A]
                       for A in range(n)])
        to_plain = {d: v for d, v in zip(self._qdots, vs)}
        to_plain.update({x: c for x, c in zip(self.q, qs)})
        to_plain.update(self._tr.params)
        cons = [sp.sympify(c).xreplace(to_plain) for c in self.coneqs]
        A = sp.Matrix(len(cons), n, lambda a, B: cons[a].diff(vs[B])) if cons else sp.zeros(0, n)
        r = sp.Matrix([-sp.Add(*[c.diff(qs[B]) * vs[B] for B in range(n)]) for c in cons]) if cons else sp.zeros(0, 1)
        return W, F, A, r

    @property
    def mass_matrix(self) -> sp.Matrix:
        W, _F, A, _r = self._parts
        M = W.row_join(-A.T) if A.rows else W
        return self._tr.back_matrix(M)

    @property
    def forcing(self) -> sp.Matrix:
        return self._tr.back_matrix(self._parts[1])

    @property
    def mass_matrix_full(self) -> sp.Matrix:
        """``[[1, 0, 0], [0, W, −Aᵀ], [0, A, 0]]`` (LagrangesMethod's ``mass_matrix_full``)."""
        n, k = len(self.q), len(self.coneqs)
        W, _F, A, _r = self._parts
        out = sp.zeros(2 * n + k, 2 * n + k)
        out[:n, :n] = sp.eye(n)
        out[n:2 * n, n:2 * n] = W
        if k:
            out[n:2 * n, 2 * n:] = -A.T
            out[2 * n:, n:2 * n] = A
        return self._tr.back_matrix(out)

    @property
    def forcing_full(self) -> sp.Matrix:
        _W, F, _A, r = self._parts
        return sp.Matrix(list(self._qdots)).col_join(self._tr.back_matrix(F)).col_join(self._tr.back_matrix(r))

    def rhs(self) -> sp.Matrix:
        """``(q̇, q̈, λ)`` of anholo's Γ_nh (valid where the constraints hold): the natural accelerations and the
        multipliers of the constraints as written (LagrangesMethod's ``rhs()``)."""
        m = self.model
        fld = m.field()
        acc = fld.natural_accelerations()
        lam = fld.coordinate_multipliers() if len(self.coneqs) else ()
        out = list(self._qdots) + [self._tr.back(acc[q]) for q in m.chart.coordinates]
        return sp.Matrix(out + [self._tr.back(x) for x in lam])

    def to_linearizer(self, q_ind=None, qd_ind=None, q_dep=None, qd_dep=None, linear_solver="LU"):
        """sympy's ``Linearizer`` in LagrangesMethod's general form (``LagrangesMethod.to_linearizer``):
        ``f_2 + f_3 + f_4 = W q̈ − F − Aᵀλ`` … with the same arguments."""
        from sympy.physics.mechanics.linearize import Linearizer

        W, F, A, _r = (self._tr.back_matrix(x) for x in self._parts)
        q, u = self.q, self._qdots
        ud = self._qdoubledots
        lam = self.lam_vec
        f_2 = W * ud
        f_3 = -F
        f_4 = A.T * lam if len(lam) else sp.zeros(len(q), 1)  # LagrangesMethod's −term3 = −(−A)ᵀλ
        mat = lambda x: sp.Matrix(list(x)) if x else sp.Matrix()  # noqa: E731
        f_c = self._hol_coneqs
        f_v = self.coneqs
        f_a = f_v.diff(self._tr.t) if len(f_v) else sp.Matrix()
        q_i, q_d, u_i, u_d = mat(q_ind or list(q)), mat(q_dep), mat(qd_ind or list(u)), mat(qd_dep)
        if len(q_d) != len(f_c) or len(u_d) != len(f_v):
            raise MechanicsModelError(f"linearize needs {len(f_c)} dependent coordinates (q_dep=) and {len(f_v)} "
                                      "dependent rates (qd_dep=), as LagrangesMethod.linearize.")
        return Linearizer(u, -u, f_2, f_3, f_4, f_c, f_v, f_a, q, u, q_i, q_d, u_i, u_d, sp.Matrix(), lam,
                          linear_solver=linear_solver)

    def linearize(self, q_ind=None, qd_ind=None, q_dep=None, qd_dep=None, *, linear_solver="LU", **kwargs):
        """``Linearizer.linearize(**kwargs)`` of :meth:`to_linearizer` and its ``r`` (as
        ``LagrangesMethod.linearize``)."""
        linearizer = self.to_linearizer(q_ind, qd_ind, q_dep, qd_dep, linear_solver=linear_solver)
        return linearizer.linearize(**kwargs) + (linearizer.r,)

    def __repr__(self):
        return f"LagrangeForm(q={list(self.q)}, constraints={len(self.coneqs)})"

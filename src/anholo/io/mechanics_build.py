"""The steps of :func:`anholo.io.mechanics.from_mechanics`: a sympy.physics.mechanics model completed to a
configuration manifold (see the docstring of :mod:`anholo.io.mechanics`), and the numerical helpers it uses
(independent constraints by the rank of their coefficient rows at a random point).

:class:`_Builder` reads ``ReferenceFrame``/``Point``/``RigidBody``/``Particle`` objects with kinematic
differential equations (Kane & Levinson (1985) §4.6; Bloch (2003) §1.3 for T on all of TQ);
:func:`build_from_lagranges` reads a ``LagrangesMethod`` (its Lagrangian, coordinates, holonomic and
nonholonomic constraints and loads).  Both return the fields of a :class:`~anholo.io.mechanics.MechanicsModel`.
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import Mapping

import numpy as np
import sympy as sp

from ..algebra import dag_size, numeric_value, random_point, size_exceeds, tidy
from ..dynamics.lagrangian import Lagrangian
from ..errors import MechanicsModelError
from ..geometry.chart import Chart, velocity_symbol
from ..geometry.frame import Frame
from .mechanics_roundtrip import UserModel

_TIDY_LIMIT = 3000
_RANK_TOL = 1e-8


def _mech():
    """The sympy.physics.mechanics module (imported on use: it is an optional, heavy import)."""
    import sympy.physics.mechanics as me

    return me


def _name(f) -> str:
    """``q1`` for the dynamic symbol ``q1(t)``."""
    return f.func.__name__ if isinstance(f, sp.core.function.AppliedUndef) else str(f)


def _vmap(vec, fn):
    """Apply ``fn`` to every component of a sympy Vector (or Dyadic-free vector expression)."""
    me = _mech()
    return me.Vector([(M.applyfunc(fn), F) for M, F in vec.args]) if vec.args else me.Vector(0)


def _vsub(vec, mapping: Mapping):
    return _vmap(vec, lambda e: e.xreplace(mapping))



class _Builder:
    """The steps of :func:`from_mechanics`, in the order of the module docstring."""

    def __init__(self, frame, bodies, loads, coordinates, speeds, kd_eqs, velocity_constraints,
                 holonomic_constraints, name, values, origin, expected, dependent_speeds=(), dependent_coordinates=(),
                 explicit_kinematics=True):
        me = _mech()
        self.me, self.N, self.t = me, frame, me.dynamicsymbols._t
        self.bodies, self.loads = list(bodies), list(loads)
        self.q = list(coordinates)
        self.u = [s for s in speeds]
        self.kd = [sp.sympify(e) for e in kd_eqs]
        self.vel = [sp.sympify(e) for e in velocity_constraints]
        self.hol = [sp.sympify(e) for e in holonomic_constraints]
        self.name, self.values, self.origin, self.expected = name, values, origin, expected
        self.dependent_speeds = list(dependent_speeds)
        self.user_q = tuple(coordinates)
        self.dependent_coordinates = tuple(dependent_coordinates)
        self.explicit_kinematics = bool(explicit_kinematics)
        self.added = {}
        self.rng = random.Random(1)

    # --- symbols ------------------------------------------------------------------------------
    def _taken(self) -> set:
        names = {_name(q) for q in self.q} | {_name(s) for s in self.u} | {q.name for q in self.added}
        return names | {f"{n}_dot" for n in names}

    def _new_coordinate(self, preferred: str, fallback: str):
        taken = self._taken() | {s.name for s in self._parameter_names}
        nm = preferred if preferred not in taken else fallback
        while nm in taken:
            nm += "_"
        return self.me.dynamicsymbols(nm)

    @cached_property
    def _parameter_names(self) -> set:
        """Symbols of the model (masses, inertias, lengths in positions, loads), so added coordinates avoid them."""
        me = self.me

        def of_vector(v):
            return set().union(*(M.free_symbols for M, _F in v.args)) if v.args else set()

        out = set()
        for b in self.bodies:
            P = b.masscenter
            out |= sp.sympify(b.mass).free_symbols
            for X in self._tree(P):
                for v in X._pos_dict.values():
                    out |= of_vector(v)
            if isinstance(b, me.RigidBody):
                out |= set().union(*(sp.sympify(c).free_symbols for c, _a, _b in b.central_inertia.args))
        for load in self.loads:
            out |= of_vector(load[1])
        for e in self.kd + self.vel + self.hol:
            out |= e.free_symbols
        return {s for s in out if isinstance(s, sp.Symbol)} - {self.t}

    # --- speeds -------------------------------------------------------------------------------
    def _solve_kd(self) -> dict:
        """``u = g(q, q̇)`` from the kinematic differential equations (for the speeds they contain)."""
        if not self.kd:
            return {}
        s_kd = [s for s in self.u if any(e.has(s) for e in self.kd)]
        if len(s_kd) != len(self.kd):
            raise MechanicsModelError(
                f"the {len(self.kd)} kinematic differential equations contain {len(s_kd)} speeds "
                f"{[_name(s) for s in s_kd]}; give one equation per speed that has a coordinate.")
        A = sp.Matrix([[e.diff(s) for s in s_kd] for e in self.kd])
        if any(a.has(*s_kd) for a in A):
            raise MechanicsModelError("the kinematic differential equations are not linear in the speeds.")
        b = -sp.Matrix([e.xreplace({s: 0 for s in s_kd}) for e in self.kd])
        if A.is_diagonal():
            sol = [b[i] / A[i, i] for i in range(len(s_kd))]
        else:
            try:
                sol = list(A.LUsolve(b))
            except (ValueError, ZeroDivisionError):
                raise MechanicsModelError("the kinematic differential equations cannot be solved for the speeds "
                                          f"{[_name(s) for s in s_kd]}.") from None
        return dict(zip(s_kd, sol))

    def _body_axes(self, b) -> list:
        """The frames in whose axes a body's kinetic energy may be written: its own frame (when oriented) and
        the frames of its central inertia's components (a wheel's inertia is often given in its carrier's
        frame); the inertial frame for a particle or when none is oriented."""
        if isinstance(b, self.me.RigidBody):
            frames = [b.frame] + [term[k].args[0][1] for term in b.central_inertia.args for k in (1, 2)
                                  if term[k].args]
            known = [F for F in dict.fromkeys(frames) if self._dcm_known(F)]
            if known:
                return known
        return [self.N]

    def _kinetic_energy(self, b, v, conv, vconv):
        """``½ m v·v + ½ ωᵀ I ω`` of one body, with the components of ``v`` and ``ω`` in the body's axes
        (of the frames of :meth:`_body_axes` the one that gives the smallest expression), written as a sum
        of squares and not multiplied out, as one writes it by hand.  The expression keeps the structure of
        the bodies (each velocity component a subexpression shared by its square and by the derivatives of
        L), so the programs formed from L are small: for the Whipple bicycle the field of Maggi's equations
        after cse has 2,181 operations against 3,141 with ``v.dot(v)``, which sympy.physics.vector multiplies
        out across the frames (docs/benchmarks.rst)."""
        best = None
        for F in self._body_axes(b):
            vm = [conv(e) for e in v.to_matrix(F)]
            T = conv(b.mass) * sp.Add(*[e ** 2 for e in vm]) / 2
            if isinstance(b, self.me.RigidBody):
                w = sp.Matrix([conv(e) for e in vconv(b.frame.ang_vel_in(self.N)).to_matrix(F)])
                inertia = b.central_inertia.to_matrix(F).applyfunc(conv)
                T += (w.T * inertia * w)[0] / 2
            size = dag_size(T)
            if best is None or size < best[0]:
                best = (size, T)
        return best[1]

    def _dcm_known(self, F) -> bool:
        try:
            F.dcm(self.N)
            return True
        except ValueError:
            return False

    def _body_frames(self) -> list:
        return [b.frame for b in self.bodies if isinstance(b, self.me.RigidBody)]

    def _wheel_angles(self, umap: dict) -> None:
        """Speeds without kinematic equation: the rate ``s`` of a frame about an axis fixed in its parent."""
        left = [s for s in self.u if s not in umap]
        for B in self._body_frames():
            if not left or self._dcm_known(B):
                continue
            for A, w in B._ang_vel_dict.items():
                if A is B or not self._dcm_known(A):
                    continue
                comps = w.to_matrix(A)
                hit = [s for s in left if any(c.has(s) for c in comps)]
                if len(hit) != 1:
                    continue
                s = hit[0]
                axis = (comps / s).applyfunc(sp.simplify)
                if axis.has(self.t) or any(a.has(s) for a in axis):
                    continue
                nm = _name(s)
                theta = self._new_coordinate("q" + nm[1:] if nm.startswith("u") else f"{B.name}_angle",
                                             f"{B.name}_angle")
                umap[s] = theta.diff(self.t)
                self.q.append(theta)
                self.added[theta] = f"angle of {B.name} about an axis fixed in {A.name} (rate {nm})"
                left.remove(s)
                break
        if left:
            raise MechanicsModelError(
                f"the speeds {[_name(s) for s in left]} have no kinematic differential equation and are not the "
                "rate of a body's frame about an axis fixed in a frame with known orientation; give them "
                "coordinates (kd_eqs).")

    # --- points -------------------------------------------------------------------------------
    @staticmethod
    def _point(body):
        return body.masscenter

    def _tree(self, P) -> list:
        seen, todo = [P], [P]
        while todo:
            X = todo.pop(0)
            for Y in X._pos_dict:
                if Y not in seen:
                    seen.append(Y)
                    todo.append(Y)
        return seen

    def _roots(self) -> dict:
        """``{mass centre: root point}``; each connected tree of points has one root."""
        out, roots = {}, []
        for b in self.bodies:
            P = self._point(b)
            if P in out:
                continue
            tree = self._tree(P)
            if self.origin is not None and self.origin in tree:
                root = self.origin
            else:
                still = [X for X in tree if self.N in X._vel_dict and X._vel_dict[self.N] == self.me.Vector(0)]
                root = still[0] if still else P
            roots.append(root)
            for X in tree:
                out[X] = root
        return out

    def build(self) -> dict:
        """The fields of a :class:`~anholo.io.mechanics.MechanicsModel` (see the module docstring of
        :mod:`anholo.io.mechanics` for the steps)."""
        me, N, t = self.me, self.N, self.t
        umap = self._solve_kd()
        self._wheel_angles(umap)
        roots = self._roots()
        root_list = list(dict.fromkeys(roots.values()))
        names = ("x", "y", "z")
        r0 = {}
        for R in root_list:
            comps = []
            for k, c in enumerate(names):
                pre = c if len(root_list) == 1 else f"{R.name}_{c}"
                X = self._new_coordinate(pre, f"{R.name}_{c}")
                self.q.append(X)
                self.added[X] = f"{c}-coordinate of the point {R.name} in {N.name}"
                comps.append(X)
            r0[R] = comps[0] * N.x + comps[1] * N.y + comps[2] * N.z

        # symbols of the chart
        qs = self.q
        sym = {}
        for q in qs:
            sym[q.diff(t)] = velocity_symbol(sp.Symbol(_name(q), real=True))
            sym[q] = sp.Symbol(_name(q), real=True)
        self.sym = sym

        def conv(e):
            return sp.sympify(e).xreplace(umap).xreplace(sym)

        def vconv(v):
            return _vmap(v, conv)

        def true_velocity(P):
            R = roots[P]
            return vconv(r0[R].dt(N) + P.pos_from(R).dt(N))

        def position(P):
            R = roots[P]
            return vconv(r0[R] + P.pos_from(R))

        # the angular velocities the model sets must be the derivatives of the orientations
        self._check_angular_velocities(conv)

        T, cons = sp.S.Zero, []
        for b in self.bodies:
            P = self._point(b)
            v = true_velocity(P)
            T += self._kinetic_energy(b, v, conv, vconv)
            c = vconv(P.vel(N)) - v
            cons += [e for e in (conv(e) for e in c.to_matrix(N)) if e != 0]
        V = sp.S.Zero
        for b in self.bodies:
            V += conv(getattr(b, "potential_energy", 0) or 0)
        Q = [sp.S.Zero] * len(qs)
        qdots = [sym[q.diff(t)] for q in qs]
        mass_centres = {self._point(b) for b in self.bodies}
        state = set(qdots) | {sym[q] for q in qs}
        for load in self.loads:
            loc, vec = load[0], load[1]
            if isinstance(loc, me.ReferenceFrame):
                w = vconv(loc.ang_vel_in(N))
                tau = vconv(vec)
                for A, qd in enumerate(qdots):
                    Q[A] += conv(tau.dot(w.diff(qd, N)))
                continue
            F = vconv(vec)
            constant = not any(conv(e).free_symbols & state or conv(e).has(t) for e in F.to_matrix(N))
            if constant and loc in roots and (loc in mass_centres or self._consistent(loc, true_velocity, vconv, conv)):
                V -= conv(F.dot(position(loc)))
                continue
            # partial velocities: of the true velocity at a mass centre (equal to the model's on D, and
            # right off D too, where the multipliers live), of the model's velocity elsewhere (a material
            # point of a body, such as a wheel's contact point)
            v = true_velocity(loc) if loc in mass_centres else vconv(loc.vel(N))
            for A, qd in enumerate(qdots):
                Q[A] += conv(F.dot(v.diff(qd, N)))

        chart_q = [sym[q] for q in qs]
        velocity_cons = [conv(e) for e in self.vel]
        hol = [conv(e) for e in self.hol]
        hol_dot = [sp.Add(*[h.diff(qq) * qd for qq, qd in zip(chart_q, qdots)]) for h in hol]
        cons = sorted(cons, key=dag_size)
        candidates = velocity_cons + hol_dot + cons
        params = self._parameters(T, V, candidates, Q, hol, set(chart_q) | set(qdots))
        psub = {p: sp.Symbol(p.name, real=True) for p in params}
        T, V = T.xreplace(psub), V.xreplace(psub)
        candidates = [c.xreplace(psub) for c in candidates]
        Q = [f.xreplace(psub) for f in Q]
        hol = [h.xreplace(psub) for h in hol]
        point = random_point(set(chart_q) | set(psub.values()), self.rng)

        # independent constraints; root coordinates whose velocity they force to vanish are removed
        kept = _independent(candidates, qdots, point)
        root_syms = [sym[X] for R in root_list for X in self.q if X in self.added and "-coordinate" in self.added[X]]
        drop = [x for x in root_syms if _implied(kept, qdots, point, qdots[chart_q.index(x)])]
        if drop:
            zero = {x: 0 for x in drop}
            zero.update({qdots[chart_q.index(x)]: 0 for x in drop})
            T, V = T.xreplace(zero), V.xreplace(zero)
            idx = [i for i, x in enumerate(chart_q) if x not in drop]
            chart_q = [chart_q[i] for i in idx]
            qdots = [qdots[i] for i in idx]
            Q = [Q[i].xreplace(zero) for i in idx]
            kept = _independent([c.xreplace(zero) for c in kept], qdots, point)
            dropped_dyn = [q for q in self.q if sym[q] in drop]
            for q in dropped_dyn:
                self.added.pop(q)
            self.q = [q for q in self.q if sym[q] not in drop]
        # square roots (a contact point on an ellipsoid) make cancel's generators explode: kept as written
        kept = [tidy(c) if not size_exceeds(c, _TIDY_LIMIT) and not _has_roots(c) else c for c in kept]
        if any(c.xreplace({u: 0 for u in qdots}) != 0 and not _numerically_zero(c.xreplace({u: 0 for u in qdots}), point)
               for c in kept):
            raise MechanicsModelError("a velocity constraint has terms free of velocities (affine constraints, "
                                      "e.g. a moving support) — not read from sympy models yet.")
        for e in [T, V] + kept + Q:
            if e.has(t):
                raise MechanicsModelError("the model depends on the time explicitly (a driven support or a "
                                          "time-dependent load); from_mechanics reads autonomous models only.")
        n, k = len(chart_q), len(kept)
        if self.expected is not None and n - k != self.expected:
            raise MechanicsModelError(
                f"the model has {self.expected} independent speeds but its constraints leave {n - k} free velocities "
                f"on the {n} coordinates {[s.name for s in chart_q]}; check the velocity constraints.")
        chart = Chart(chart_q, velocities=qdots, parameters=sorted(psub.values(), key=lambda s: s.name))
        # a Lagrangian with square roots (a contact point on an ellipsoid) is kept as written, as the constraints:
        # the normal form of Lagrangian's input would put the body's sums of squares over one denominator
        L = Lagrangian(Frame.coordinate(chart), T - V, reduce=not _has_roots(T - V))
        speeds = {_name(s): conv(g).xreplace(psub) for s, g in umap.items()}
        dependent = [sym[X] for X in self.q if X in self.added and "-coordinate" in self.added[X]]
        dependent += [conv(umap[s]) for s in self.dependent_speeds if s in umap]
        dependent = [chart_q[qdots.index(d)] if d in qdots else d for d in dependent]
        dependent = tuple(dependent) if len(set(dependent)) == k and set(dependent) <= set(chart_q) else None
        symbols = dict(sym)
        symbols.update(psub)
        user = self._user_model(roots, r0, umap, sym, chart_q)
        return dict(
            name=self.name, chart=chart, lagrangian=L, kinetic_energy=T, potential_energy=V,
            constraints=tuple(kept), holonomic=tuple(hol), forces=tuple(Q), speeds=speeds,
            added={sym[q]: why for q, why in self.added.items()}, symbols=symbols,
            values=_named_values(self.values), dynamic_speeds=dict(umap), dependent=dependent,
            signs=_signs(psub, self._load_symbols()), user=user)

    def _user_model(self, roots, r0, umap, sym, chart_q) -> UserModel:
        """The model as its user wrote it, and the rates of the added coordinates in the user's dynamic
        symbols: ``θ̇ = s`` for a wheel angle, ``ṙ_0 = v_P − d/dt r_{P/0}`` for a root point (``v_P`` the
        velocity the model states for a mass centre P of its tree, ``r_{P/0}`` P's position from the root)."""
        N, t = self.N, self.t
        rates = {}
        for X, why in self.added.items():
            if X not in self.q:
                continue
            s = next((s for s, d in umap.items() if d == X.diff(t)), None)
            if s is not None:
                rates[sym[X]] = s
        for R, vec in r0.items():
            P = next(self._point(b) for b in self.bodies if roots[self._point(b)] is R)
            rate = (P.vel(N) - P.pos_from(R).dt(N)).to_matrix(N)
            for k, comp in enumerate(vec.to_matrix(N)):
                if comp in self.q:
                    rates[sym[comp]] = rate[k]
        dep = list(self.dependent_speeds)
        if not dep and self.vel:  # keywords: the last speeds are the dependent ones, as in KanesMethod's u
            dep = list(self.u[len(self.u) - len(self.vel):])
        u = [s for s in self.u if s not in dep] + [s for s in self.u if s in dep]
        return UserModel(form="kane", q=self.user_q, u=tuple(u), independent=len(u) - len(dep),
                         kd_eqs=tuple(self.kd), velocity_constraints=tuple(self.vel), holonomic=tuple(self.hol),
                         dependent_coordinates=self.dependent_coordinates,
                         explicit_kinematics=self.explicit_kinematics, added_rates=rates)

    def _load_symbols(self) -> set:
        """Symbols of the loads that are not also masses, inertias or lengths of positions (a torque, a damping
        coefficient, g): their sign is not implied by the model."""
        me = self.me
        of_loads = set()
        for load in self.loads:
            for M, _F in load[1].args:
                of_loads |= M.free_symbols
        geometry = set()
        for b in self.bodies:
            geometry |= sp.sympify(b.mass).free_symbols
            for X in self._tree(b.masscenter):
                for v in X._pos_dict.values():
                    for M, _F in v.args:
                        geometry |= M.free_symbols
            if isinstance(b, me.RigidBody):
                for c, _a, _b in b.central_inertia.args:
                    geometry |= sp.sympify(c).free_symbols
        return {s for s in of_loads - geometry if isinstance(s, sp.Symbol)} - {self.t}

    def _consistent(self, P, true_velocity, vconv, conv) -> bool:
        """True if the model's velocity of P is the derivative of its position (at a random point)."""
        d = [conv(e) for e in (vconv(P.vel(self.N)) - true_velocity(P)).to_matrix(self.N)]
        syms = set().union(*(e.free_symbols for e in d))
        pt = random_point(syms, self.rng)
        return all(abs(numeric_value(e, pt)) < 1e-10 for e in d)

    def _check_angular_velocities(self, conv) -> None:
        """``ω_B`` as the model sets it equals ``(Ṙ Rᵀ)^∨`` (``R = N.dcm(B)``), at a random point, for the
        bodies' frames and the frames in which positions are written (their derivatives use ``ω``)."""
        t = self.t
        frames = list(self._body_frames())
        for b in self.bodies:
            for X in self._tree(b.masscenter):
                for v in X._pos_dict.values():
                    frames += [F for _M, F in v.args]
        for B in dict.fromkeys(frames):
            if not self._dcm_known(B):
                continue
            R = self.N.dcm(B)
            W = R.diff(t) * R.T
            true = [W[2, 1], W[0, 2], W[1, 0]]
            model = list(B.ang_vel_in(self.N).to_matrix(self.N))
            d = [conv(a - b) for a, b in zip(model, true)]
            syms = set().union(*(e.free_symbols for e in d))
            pt = random_point(syms, self.rng)
            if any(abs(numeric_value(e, pt)) > 1e-9 for e in d):
                raise MechanicsModelError(
                    f"the angular velocity of {B.name} in {self.N.name} is not the time derivative of its orientation "
                    "once the speeds are replaced by the kinematic differential equations; set it consistently.")

    def _parameters(self, T, V, cons, Q, hol, chart_symbols) -> list:
        out = set()
        for e in [T, V, *cons, *Q, *hol]:
            out |= sp.sympify(e).free_symbols
        out -= set(chart_symbols) | {self.t}
        return sorted(out, key=lambda s: s.name)


def _signs(psub: Mapping, load_symbols=frozenset()) -> dict:
    """``{parameter name: sign}`` for a system file's ``[signs]`` table: the sign the user declared for the
    symbol (``real=True`` → ``"real"``, ``negative=True`` → ``"negative"``, …); a load symbol declared without
    a sign is ``"real"`` (a torque may be negative); a symbol declared positive, or a geometric one without
    a declaration, keeps the system files' default (positive) and is not listed."""
    out = {}
    for orig, new in psub.items():
        if orig.is_positive:
            continue
        for sign, test in (("nonnegative", orig.is_nonnegative), ("negative", orig.is_negative),
                           ("nonpositive", orig.is_nonpositive), ("real", orig.is_real)):
            if test:
                out[new.name] = sign
                break
        else:
            if orig in load_symbols:
                out[new.name] = "real"
    return out


def _named_values(values) -> dict | None:
    if not values:
        return None
    return {(k if isinstance(k, str) else str(k)): v for k, v in values.items()}


def _numerically_zero(e, point) -> bool:
    syms = e.free_symbols - set(point)
    pt = dict(point)
    pt.update(random_point(syms, random.Random(3)))
    return abs(numeric_value(e, pt)) < 1e-10


def _rows(exprs, velocities, point) -> np.ndarray:
    """The coefficient rows ``∂φ/∂q̇`` at a random point (velocities set to random values too)."""
    syms = set().union(*(e.free_symbols for e in exprs)) - set(point) - set(velocities) if exprs else set()
    pt = dict(point)
    pt.update(random_point(syms, random.Random(7)))
    return np.array([[complex(numeric_value(e.diff(u), pt)).real for u in velocities] for e in exprs], float)


def _rank(M: np.ndarray) -> int:
    if M.size == 0:
        return 0
    s = np.linalg.svd(M, compute_uv=False)
    return int((s > _RANK_TOL * max(1.0, s[0])).sum())


def _independent(exprs, velocities, point) -> list:
    """A maximal independent sublist of the linear constraints ``exprs`` (greedy, in order)."""
    kept, rows = [], np.zeros((0, len(velocities)))
    for e in exprs:
        if e == 0:
            continue
        row = _rows([e], velocities, point)
        trial = np.vstack([rows, row])
        if _rank(trial) > rows.shape[0]:
            kept.append(e)
            rows = trial
    return kept


def _implied(kept, velocities, point, velocity) -> bool:
    """True if ``velocity = 0`` follows from the constraints ``kept``."""
    rows = _rows(kept, velocities, point) if kept else np.zeros((0, len(velocities)))
    unit = np.array([[1.0 if u == velocity else 0.0 for u in velocities]])
    return _rank(np.vstack([rows, unit])) == _rank(rows)


def _has_roots(expr) -> bool:
    """True if ``expr`` has a power with a non-integer exponent of a non-symbol (``(…)^(3/2)``)."""
    return any(not p.exp.is_Integer and not p.base.is_Symbol for p in expr.atoms(sp.Pow))


def build_from_lagranges(lm, name: str, values) -> dict:
    """The fields of a :class:`~anholo.io.mechanics.MechanicsModel` read off a ``LagrangesMethod``: its Lagrangian
    ``L(q, q̇)`` as written (``T = L − L|_{q̇=0}``, ``V = −L|_{q̇=0}``), its holonomic constraints ``f(q) = 0``
    (differentiated, ``ḟ = ∂f/∂q q̇``) and nonholonomic ones ``φ(q, q̇) = 0`` (LagrangesMethod's ``coneqs``, in its
    order), and the generalized forces of its ``forcelist``, ``Q_A = Σ F·∂v_P/∂q̇^A + Σ τ·∂ω_B/∂q̇^A`` in its
    inertial frame (Lagrange's equations with multipliers, Neimark & Fufaev (1972) Ch. III)."""
    me = _mech()
    t = me.dynamicsymbols._t
    q = list(lm.q)
    qd = [x.diff(t) for x in q]
    sym = {}
    for x in q:
        sym[x.diff(t)] = velocity_symbol(sp.Symbol(_name(x), real=True))
        sym[x] = sp.Symbol(_name(x), real=True)
    chart_q, qdots = [sym[x] for x in q], [sym[x] for x in qd]
    known = set(q) | set(qd)

    def conv(e, what):
        e = sp.sympify(e)
        other = me.find_dynamicsymbols(e) - known
        if other:
            raise MechanicsModelError(f"the {what} of the LagrangesMethod contains {sorted(map(str, other))}, which "
                                      "are not its coordinates or their rates (specified inputs are not read yet).")
        return e.xreplace(sym)

    L = conv(lm._L[0], "Lagrangian")
    hol = [conv(e, "holonomic constraints") for e in lm._hol_coneqs]
    nonhol = [conv(e, "nonholonomic constraints") for e in lm.coneqs[len(hol):]]
    hol_dot = [sp.Add(*[h.diff(x) * v for x, v in zip(chart_q, qdots)]) for h in hol]
    Q = [sp.S.Zero] * len(q)
    loads = list(lm.forcelist or ())
    if loads:
        N = lm.inertial
        if N is None:
            raise MechanicsModelError("the LagrangesMethod has loads but no frame; give frame=N to LagrangesMethod.")
        for loc, vec in loads:
            vel = loc.ang_vel_in(N) if isinstance(loc, me.ReferenceFrame) else loc.vel(N)
            for A, d in enumerate(qd):
                Q[A] += conv(vec.dot(vel.diff(d, N)), "loads")
    params = set()
    for e in [L, *hol, *nonhol, *Q]:
        params |= e.free_symbols
    params -= set(chart_q) | set(qdots) | {t}
    psub = {p: sp.Symbol(p.name, real=True) for p in sorted(params, key=lambda s: s.name)}
    L, hol, Q = L.xreplace(psub), [h.xreplace(psub) for h in hol], [f.xreplace(psub) for f in Q]
    cons = [c.xreplace(psub) for c in hol_dot + nonhol]
    zero = {v: 0 for v in qdots}
    for c in cons:
        if any(c.diff(v).has(*qdots) for v in qdots):
            raise MechanicsModelError(f"the constraint {c} = 0 is not linear in the velocities; anholo reads linear "
                                      "constraints from a LagrangesMethod (see docs/chetaev.rst for nonlinear ones).")
        if c.xreplace(zero) != 0:
            raise MechanicsModelError(f"the constraint {c} = 0 has terms free of velocities (affine constraints) — "
                                      "not read from sympy models yet.")
    for e in [L] + cons + Q:
        if e.has(t):
            raise MechanicsModelError("the model depends on the time explicitly; from_mechanics reads autonomous "
                                      "models only.")
    point = random_point(set(chart_q) | set(psub.values()), random.Random(1))
    if len(_independent(cons, qdots, point)) < len(cons):
        raise MechanicsModelError("the constraints of the LagrangesMethod (its coneqs: the derivatives of hol_coneqs, "
                                  "then nonhol_coneqs) are not independent; remove the redundant ones.")
    chart = Chart(chart_q, velocities=qdots, parameters=sorted(psub.values(), key=lambda s: s.name))
    V = -L.xreplace(zero)
    load_syms = set().union(*(sp.sympify(f).free_symbols for f in Q)) if loads else set()
    load_syms = {p for p in psub if psub[p] in load_syms and not L.has(psub[p])}
    symbols = dict(sym)
    symbols.update(psub)
    user = UserModel(form="lagrange", q=tuple(q), u=(), independent=len(q) - len(cons), kd_eqs=(),
                     velocity_constraints=tuple(lm.coneqs[len(hol):]), holonomic=tuple(lm._hol_coneqs),
                     dependent_coordinates=(), explicit_kinematics=True, added_rates={})
    return dict(
        name=name, chart=chart, lagrangian=Lagrangian(Frame.coordinate(chart), L), kinetic_energy=L + V,
        potential_energy=V, constraints=tuple(cons), holonomic=tuple(hol), forces=tuple(Q), speeds={}, added={},
        symbols=symbols, values=_named_values(values), dynamic_speeds={}, dependent=None,
        signs=_signs(psub, load_syms), user=user)

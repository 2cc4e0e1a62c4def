"""The discrete Hamel scheme on a Lie group: the Cayley difference map on SE(2) (docs/integrators.rst).

Ball & Zenkov (2015) discretise Hamel's equations by discrete quasi-velocities defined through a
*difference map* ``q_{k+1} = τ(q_k, h ξ_k)`` and a discrete Lagrangian ``l_d(q_k, ξ_k)``; on a Lie group G
with left-invariant frames Kobilarov, Marsden & Sukhatme (2010) take ``g_{k+1} = g_k τ(h ξ_k)`` with τ the
exponential or the Cayley map, ``ξ_k ∈ 𝔤`` the discrete body velocity, and impose the constraint on ``ξ_k``
in the Lie algebra.  This module implements that scheme for systems whose configuration is ``SE(2) × S``
(a planar position and heading ``(x, y, θ)`` and shape coordinates ``r``) with a Lagrangian and linear
constraints invariant under the left action of SE(2) — the Chaplygin sleigh, the vertical rolling disk,
the rolling disk, the two-wheeled carriage, the roller racer, the snakeboard and the rattleback (contact
point and yaw); the Chaplygin ball and the Routh sphere have one too (contact point and the Euler angle φ
about the vertical) but are given the SO(3) scheme of :mod:`anholo.numerics.lie_hamel_so3`.  The SE(2)
factor is found by checking the invariance numerically (:func:`se2_factor`).

Scheme, at the fixed step h, with ``Ω(w) = [[0, −w], [w, 0]]``:

* the Cayley difference map ``cay(A) = (I − A/2)^{-1}(I + A/2)`` on SE(2): for ``g_k^{-1} g_{k+1}`` with
  rotation ``Δθ`` and translation ``d = R(−θ_k)(x_{k+1} − x_k, y_{k+1} − y_k)`` the discrete body
  velocity is ``h ω_k = 2 tan(Δθ/2)``, ``h u_k = (I − Ω(hω_k)/2) d`` (the inverse Cayley map); the shape
  moves by differences, ``ṙ_k = (r_{k+1} − r_k)/h`` at ``r̄_k = (r_k + r_{k+1})/2``;
* the discrete Lagrangian ``l_d = h l(r̄_k, ξ_k, ṙ_k)`` with ``l(r, ξ, ṙ) = L(g, r, X(g)ξ, ṙ)``, where
  ``X(g)ξ = (R(θ)u, ω)`` is the left-invariant frame of SE(2) — the same value at every g by invariance;
* the discrete constraint in the Lie algebra, ``K(r̄_k)(ξ_k, ṙ_k) = 0`` (``K`` the constraint forms in the
  body frame, the same at every g), i.e. the written constraints at ``(g_k, r̄_k)`` with the velocity
  ``(X(g_k)ξ_k, ṙ_k)``;
* the discrete Hamel equations: the components along a basis ``X_α(q_k)`` of the constraint distribution
  of the discrete Lagrange–d'Alembert principle, ``⟨D_2 L_d(q_{k−1}, q_k) + D_1 L_d(q_k, q_{k+1}),
  X_α(q_k)⟩ = 0``, where ``L_d(q_k, q_{k+1}) = l_d`` through the difference map.

In momentum form, with ``p_k = D_2 L_d(q_{k−1}, q_k)`` (``p_0 = ∂L/∂q̇(q_0, q̇_0)``), a step solves the n
equations ``X_α(q_k)ᵀ(p_k + D_1 L_d(q_k, q_{k+1})) = 0`` and ``K(r̄_k)(ξ_k, ṙ_k) = 0`` for ``q_{k+1}`` by
Newton's method with the exact Jacobian, then sets ``p_{k+1} = D_2 L_d(q_k, q_{k+1})``.  Differentiating
``L_d`` through the inverse Cayley map is where the group enters: written in the body frame these
derivatives are ``(dτ^{-1}_{hξ})^*`` applied to ``∂l/∂ξ`` — the discrete counterpart of the structure
coefficients of Hamel's equations (Kobilarov, Marsden & Sukhatme (2010); Ball & Zenkov (2015)).
``L_d`` and its first and second derivatives are built once with symengine and compiled.

Properties (docs/integrators.rst): order 2 (``cay(−A) = cay(A)^{-1}``: the scheme is symmetric); the
discrete constraint holds exactly in the Lie algebra (to the Newton tolerance), so a sleigh whose discrete
body velocity has no lateral component moves along a discrete curve of SE(2) with that property; the
scheme is SE(2)-equivariant; and it is a different scheme from the midpoint discrete Lagrange–d'Alembert
scheme (:mod:`anholo.numerics.variational`), whose discrete constraint ``κ(q̄)(q_{k+1} − q_k)/h = 0`` is not
the one in the Lie algebra: the two discrete motions differ by ``O(h²)`` over a fixed time (tested).
Systems whose orientation is a rigid rotation in Euler angles (the rigid body, the Chaplygin ball, the Routh
sphere) get the Cayley map on SO(3) instead (:mod:`anholo.numerics.lie_hamel_so3`, which shares this
module's compiled step :class:`CayleyStep` and :func:`integrate_lie_hamel`); the rattleback, whose
rotational kinetic energy about the contact point is not left-invariant, gets the SE(2) scheme on its
contact point and yaw, its other angles moving by differences; systems without either factor (or with
forces, inputs, holonomic or affine constraints) are integrated with the midpoint form of
:mod:`anholo.numerics.discrete_hamel`.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp
from scipy.linalg import qr
from scipy.linalg.lapack import dgesv as _dgesv

from ..algebra.engine import engine_diff, has_kinks, se, to_engine
from ..errors import IntegrationError
from .variational import _NEWTON_MAX, _NEWTON_TOL, _Buffers, _compiled_function, march, new_arrays

_EPS = float(np.finfo(float).eps)

__all__ = ["CayleyStep", "LieGroupScheme", "se2_factor", "lie_group_scheme", "integrate_lie_hamel", "engine_symbols"]


def _symbols(system):
    chart = system.chart
    qs, us, ps = chart.coordinates, chart.velocities, chart.parameters
    return qs, us, ps


def _gate(system, mech, constrained: bool):
    """``(mech, buffers)`` for a system the Cayley schemes take, or None: no forces or inputs, no holonomic
    or non-affine constraints, no explicit time dependence, parameters with values (and, if
    ``constrained``, at least one constraint).  ``mech`` is built if not given."""
    from .variational import discrete_mechanics

    if tuple(system.holonomic) or tuple(getattr(system, "inputs", ())):
        return None
    if constrained and not tuple(system.constraints):
        return None
    if getattr(system, "forces", None) is not None and any(sp.sympify(f) != 0 for f in system.forces.total):
        return None
    tsym = system.time if getattr(system, "time", None) is not None else None
    if tsym is not None and (sp.sympify(system.lagrangian.natural_expr()).has(tsym)
                             or any(sp.sympify(c).has(tsym) for c in system.constraints)):
        return None
    mech = mech if mech is not None else discrete_mechanics(system)
    if mech.chetaev:  # constraints not affine in the velocities: no distribution to be invariant
        return None
    try:
        p = np.asarray(mech.parameter_vector(), dtype=float)
    except Exception:  # parameters without values: no numbers to decide with
        return None
    return mech, _Buffers(mech.n, p)


def _samples(mech, buf, points: int, draw, tol: float = 1e-9):
    """``points`` states ``(q, u, terms, c0)`` drawn by ``draw() -> (q, u)`` (up to 5 draws a point) at which
    the compiled terms of ``mech`` (``P, G, W, …, κ``) are finite, ``c0`` the constraints at ``u = 0``; None
    if too few are finite, or if a constraint is affine (``|c0| > tol``)."""
    n = mech.n
    samples = []
    for _ in range(points * 5):
        q, u = draw()
        with np.errstate(all="ignore"):
            terms = tuple(np.array(a, copy=True) for a in mech.terms(buf.at(q, u, 0.0)))
            c0 = mech.terms(buf.at(q, np.zeros(n), 0.0))[6].copy()
        Pv, G, C, Cq, kap = terms[0], terms[1], terms[6], terms[7], terms[8]
        if all(np.all(np.isfinite(a)) for a in (Pv, G, C, Cq, kap, terms[2])):
            samples.append((q, u, terms, c0))
        if len(samples) == points:
            break
    if len(samples) < points:
        return None
    if mech.k and max(np.abs(c0).max() for *_, c0 in samples) > tol:
        return None  # affine constraints
    return samples


def se2_factor(system, mech=None, points: int = 4, tol: float = 1e-9, seed: int = 7):
    """Indices ``(i_x, i_y, i_θ)`` of coordinates on which SE(2) acts by ``(x, y, θ) ↦ (R(α)(x, y) + b,
    θ + α)`` leaving the Lagrangian and the constraint distribution invariant, or None.

    Decided numerically at ``points`` random states (``points`` points at relative tolerance ``tol``, as a
    :class:`~anholo.algebra.decision.Decision` would record it) with the compiled derivatives of
    ``mech`` (:func:`~anholo.numerics.variational.discrete_mechanics`, built if not given):
    ``∂L/∂x = ∂L/∂y = 0``, the complete lift of the rotation ``−y∂_x + x∂_y + ∂_θ − ẏ∂_ẋ + ẋ∂_ẏ``
    annihilates L, the constraint forms do not depend on x, y, and the body-frame constraint matrix
    ``κ(q)·diag(R(θ), 1, I)`` has a row space independent of θ.  Systems with forces or inputs, holonomic,
    affine or nonlinear constraints, explicit time dependence or no constraints are not taken."""
    if len(system.chart.coordinates) < 3:
        return None
    gate = _gate(system, mech, constrained=True)
    if gate is None:
        return None
    mech, buf = gate
    n, k = mech.n, mech.k
    rng = np.random.default_rng(seed)
    samples = _samples(mech, buf, points, lambda: (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)), tol)
    if samples is None:
        return None
    samples = [(q, u, terms[1], terms[0], terms[7], c0) for q, u, terms, c0 in samples]
    for ix, iy, it in itertools.permutations(range(n), 3):
        ok = True
        for q, u, Lq, Lu, Cq, _ in samples:
            scale = 1.0 + np.abs(Lq).max() + np.abs(Lu).max()
            rot = Lq[it] - u[iy] * Lu[ix] + u[ix] * Lu[iy] - q[iy] * Lq[ix] + q[ix] * Lq[iy]
            if abs(Lq[ix]) > tol * scale or abs(Lq[iy]) > tol * scale or abs(rot) > tol * scale:
                ok = False
                break
            if np.abs(Cq[:, [ix, iy]]).max() > tol * (1.0 + np.abs(Cq).max()):  # ∂(κ u)/∂x, ∂(κ u)/∂y
                ok = False
                break
            rows = []
            for th in (q[it], q[it] + 0.7):  # the body-frame constraint matrix at two headings
                qq = q.copy()
                qq[it] = th
                K = mech.point(buf.at_q(qq, 0.0))[0]
                T = np.eye(n)
                c, s_ = np.cos(th), np.sin(th)
                T[np.ix_([ix, iy], [ix, iy])] = [[c, -s_], [s_, c]]
                rows.append(K @ T)
            sv = np.linalg.svd(np.vstack(rows), compute_uv=False)
            if sv[0] == 0 or (len(sv) > k and sv[k] > tol * sv[0]) \
                    or np.linalg.matrix_rank(rows[0], tol=tol * sv[0]) != k:
                ok = False
                break
        if ok:
            return ix, iy, it
    return None


def engine_symbols(system) -> tuple:
    """Symengine symbols ``(Q, U, Pm)`` of the coordinates, velocities and parameters of ``system`` and
    ``eng(expr)``, a sympy expression of the system converted to symengine in those symbols."""
    qs, us, ps = _symbols(system)
    names = set((*qs, *us, *ps))

    def eng(e):
        e = sp.sympify(e)
        e = e.xreplace({s: sp.Symbol(s.name) for s in e.free_symbols if s in names})
        return to_engine(e)

    return ([se.Symbol(s.name) for s in qs], [se.Symbol(s.name) for s in us], [se.Symbol(s.name) for s in ps],
            eng)


class CayleyStep:
    """The compiled discrete Lagrangian of a Cayley discrete Hamel scheme: built from the symengine
    expressions of ``L_d(q_0, q_1)`` and the discrete constraints in the symbols ``Q0, Q1`` (the two ends of
    the step), ``h`` and the parameters ``Pm``; one compiled function of ``(q0, q1, h, parameters)`` returning
    ``D_1L_d``, ``∂(D_1L_d)/∂q_1``, ``D_2L_d``, the discrete constraint, its derivative along ``q_1`` and
    ``∂(D_2L_d)/∂q_1`` (:meth:`evaluate`), used by :func:`integrate_lie_hamel`.  Subclasses build the two
    expressions through their difference map and give :meth:`describe`."""

    factor: tuple = ()

    @staticmethod
    def _inputs(system) -> tuple:
        """``(Q, U, Pm, L, C, Q0, Q1, h)``: the system's symbols (:func:`engine_symbols`), its Lagrangian and
        constraints in symengine, the two ends of a step and the step size, for a subclass's difference map."""
        Q, U, Pm, eng = engine_symbols(system)
        n = len(Q)
        L = eng(system.lagrangian.natural_expr())
        C = [eng(c) for c in system.constraints]
        Q0 = [se.Symbol(f"_g0_{i}") for i in range(n)]
        Q1 = [se.Symbol(f"_g1_{i}") for i in range(n)]
        return Q, U, Pm, L, C, Q0, Q1, se.Symbol("_h")

    def _compile(self, Q0, Q1, h, Pm, Ld, Cd) -> None:
        n = len(Q0)
        self.n, self.k = n, len(Cd)
        kinks = has_kinks([Ld, *Cd])  # Abs or sign: their derivatives supplied (searched for once, here)
        D1 = [engine_diff(Ld, q, kinks) for q in Q0]
        D2 = [engine_diff(Ld, q, kinks) for q in Q1]
        J1 = [engine_diff(e, q, kinks) for e in D1 for q in Q1]
        JC = [engine_diff(e, q, kinks) for e in Cd for q in Q1]
        J2 = [engine_diff(e, q, kinks) for e in D2 for q in Q1]
        self._fn = _compiled_function(list(Q0) + list(Q1) + [h] + list(Pm), D1 + J1 + D2 + list(Cd) + JC + J2)
        self._size = n + n * n + n + self.k + self.k * n + n * n

    def evaluate(self, args: np.ndarray, out: np.ndarray) -> tuple:
        n, k = self.n, self.k
        self._fn(args, out=out)
        i = 0
        D1 = out[i:i + n]; i += n
        J1 = out[i:i + n * n].reshape(n, n); i += n * n
        D2 = out[i:i + n]; i += n
        Cd = out[i:i + k]; i += k
        JC = out[i:i + k * n].reshape(k, n); i += k * n
        J2 = out[i:i + n * n].reshape(n, n)
        return D1, J1, D2, Cd, JC, J2


class LieGroupScheme(CayleyStep):
    """The compiled discrete Lagrangian of the Cayley scheme on SE(2) × S for one system (module docstring;
    :class:`CayleyStep`)."""

    def __init__(self, system, factor):
        Q, U, Pm, L, C, Q0, Q1, h = self._inputs(system)
        n = len(Q)
        ix, iy, it = factor
        self.factor = tuple(factor)
        half = se.Rational(1, 2)
        c0, s0 = se.cos(Q0[it]), se.sin(Q0[it])
        dx, dy = Q1[ix] - Q0[ix], Q1[iy] - Q0[iy]
        d1, d2 = c0 * dx + s0 * dy, -s0 * dx + c0 * dy
        w = 2 * se.tan(half * (Q1[it] - Q0[it]))       # h ω, the inverse Cayley map of the rotation
        hu1, hu2 = d1 + half * w * d2, d2 - half * w * d1  # h u = (I − Ω(hω)/2) d
        point, vel = {}, {}
        for i in range(n):
            if i in factor:
                point[Q[i]] = Q0[i]
            else:
                point[Q[i]] = half * (Q0[i] + Q1[i])
                vel[U[i]] = (Q1[i] - Q0[i]) / h
        vel[U[ix]] = (c0 * hu1 - s0 * hu2) / h
        vel[U[iy]] = (s0 * hu1 + c0 * hu2) / h
        vel[U[it]] = w / h
        rep = {**point, **vel}
        self._compile(Q0, Q1, h, Pm, h * L.xreplace(rep), [c.xreplace(rep) for c in C])

    def describe(self, names) -> str:
        """``Cayley map on SE(2) of x, y, theta`` (the run's message names the scheme)."""
        return f"Cayley map on SE(2) of {', '.join(names[i] for i in self.factor)}"


def lie_group_scheme(system, mech=None):
    """The :class:`LieGroupScheme` of a :class:`~anholo.system.System` with an SE(2) factor
    (:func:`se2_factor`; ``mech`` its :class:`~anholo.numerics.variational.DiscreteMechanics` if at hand),
    or None."""
    factor = se2_factor(system, mech)
    return None if factor is None else LieGroupScheme(system, factor)


def integrate_lie_hamel(mech, scheme: CayleyStep, p, t0: float, h: float, nsteps: int, q0, qdot0,
                        progress=None, watch=None, arrays=None) -> tuple:
    """The grid, positions ``q_k``, momenta ``p_k``, difference velocities ``(q_{k+1} − q_k)/h``, the number of
    evaluations of a Cayley discrete Hamel scheme (``scheme``: the SE(2) one of this module's docstring or the
    SO(3) one of :mod:`anholo.numerics.lie_hamel_so3`), and None or the exception that ended the run early
    (:func:`~anholo.numerics.variational.march`; ``watch``, ``arrays``: as there).  Systems with forces (and
    so with inputs) are not taken (:func:`se2_factor`, :func:`~anholo.numerics.lie_hamel_so3.so3_factor`)."""
    from .discrete_hamel import adapted_basis

    n = mech.n
    buf = _Buffers(n, p)
    args = np.zeros(2 * n + 1 + len(p))
    args[2 * n] = h
    args[2 * n + 1:] = p
    out = np.empty(scheme._size)
    count = [0]
    dependent = None
    # the Newton tolerance is relative to the size of the coordinates, except angles (``scheme.angles``), which
    # wind up without their size saying anything of the precision wanted: for them a few units in the last place
    sized = [i for i in range(n) if i not in getattr(scheme, "angles", ())]

    def step(q0_, p0_, t, guess):
        nonlocal dependent
        kap = mech.point(buf.at_q(q0_, t))[0]
        if not mech.k:  # no constraints: the discrete Euler–Lagrange equations p_k + D_1L_d = 0
            dependent = []
        elif dependent is None or np.linalg.cond(kap[:, dependent]) > 1e8:  # re-pivot where it degenerates
            dependent = sorted(qr(kap, pivoting=True)[2][:mech.k].tolist())
        B = adapted_basis(kap, dependent)
        m = B.shape[1]
        args[:n] = q0_
        args[n:2 * n] = guess
        tol2 = (_NEWTON_TOL * (1.0 + (float(np.abs(q0_[sized]).max()) if sized else 0.0))
                + 8 * _EPS * float(np.abs(q0_).max())) ** 2
        JH = np.empty((n, n))
        RH = np.empty(n)
        for _ in range(_NEWTON_MAX):
            D1, J1, D2, Cd, JC, J2 = scheme.evaluate(args, out)
            count[0] += 1
            RH[:m] = B.T @ (p0_ + D1)
            JH[:m] = B.T @ J1
            RH[m:] = Cd
            JH[m:] = JC
            lu, piv, dq, info = _dgesv(JH, -RH)
            d2 = float(dq @ dq)
            if info != 0 or not d2 < np.inf:
                raise IntegrationError(f"the Newton matrix of the step at t = {t:g} is singular; take a smaller "
                                       f"--step (now {h:g}).")
            args[n:2 * n] += dq
            if d2 <= tol2:
                # p_{k+1} = D_2L_d at the updated q_{k+1} to first order in dq (error O(|dq|²), below round-off)
                p1 = D2 + J2 @ dq
                break
        else:
            raise IntegrationError(f"the discrete step at t = {t:g} did not converge in {_NEWTON_MAX} Newton "
                                   f"iterations; take a smaller --step (now {h:g}).")
        return args[n:2 * n].copy(), p1

    Qs, Ps, V = arrays if arrays is not None else new_arrays(n, nsteps)
    Qs[0] = q0
    Ps[0] = mech.terms(buf.at(q0, qdot0, t0))[0]
    done, stop = march(step, Qs, Ps, V, t0, h, nsteps, np.asarray(q0) - h * np.asarray(qdot0), progress, watch)
    return t0 + h * np.arange(done + 1), Qs[:done + 1], Ps[:done + 1], V[:done], count[0] + 1, stop

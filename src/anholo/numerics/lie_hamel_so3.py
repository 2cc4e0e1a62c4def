"""The discrete Hamel scheme on SO(3): the Cayley difference map on an orientation in Euler angles.

Kobilarov, Marsden & Sukhatme (2010) discretise nonholonomic systems on a Lie group G by the difference map
``g_{k+1} = g_k cay(h ξ_k)`` with ``ξ_k ∈ 𝔤`` the discrete body velocity, a discrete Lagrangian
``h l(ξ_k)`` and the constraint imposed on ``ξ_k``; Ball & Zenkov (2015) set this in the general frame of
the discrete Hamel equations.  :mod:`anholo.numerics.lie_hamel` implements it on SE(2); this module does it
for systems whose orientation is a rigid rotation written in Euler (or Tait–Bryan) angles — the free rigid
body, the Veselova and Suslov problems, the Chaplygin ball and the Routh sphere.

**Detection** (:func:`so3_factor`): an ordered triple ``a = (q^{i_1}, q^{i_2}, q^{i_3})`` of the coordinates
and one of the twelve axis sequences (``ZXZ``, …, ``ZYX``) with ``R(a) = R_{s_1}(a_1) R_{s_2}(a_2)
R_{s_3}(a_3)`` (body → space) such that the rotational kinetic energy is left-invariant: with ``E(a)`` the
matrix ``ȧ ↦ Ω`` of the body angular velocity (``RᵀṘ = Ω̂``), the angle block ``W_aa`` of
``W = ∂²L/∂q̇∂q̇`` has a constant body form ``E^{-T} W_aa E^{-1}`` — checked at a few random states (all
coordinates and velocities random, the middle angle away from the gimbal lock) at relative tolerance 1e-9.
The same restrictions as on SE(2) apply (no forces or inputs, no holonomic, affine or non-affine
constraints, no explicit time dependence); systems without constraints are taken.

**Scheme**, at the fixed step h, for ``q = (a, r)`` (r the other coordinates):

* the Cayley difference map on SO(3): ``cay(A) = (I − A/2)^{-1}(I + A/2)``, and the discrete body velocity
  ``hΞ_k = cay^{-1}(R(a_k)ᵀR(a_{k+1}))`` with ``cay^{-1}(F) = 2(F + I)^{-1}(F − I)``, which for a rotation
  F is the skew matrix of ``2 vee(F − Fᵀ)/(1 + tr F)`` (the rotation by α about n gives
  ``2 tan(α/2) n``); the other coordinates move by differences, ``ṙ_k = (r_{k+1} − r_k)/h``;
* the discrete Lagrangian ``L_d = h L(q̄_k, ȧ_k, ṙ_k)`` with ``ȧ_k = E(ā_k)^{-1}Ξ_k``, the angle rates
  whose body angular velocity at ``ā_k`` is ``Ξ_k``, and ``q̄_k = (q_k + q_{k+1})/2`` the coordinate
  midpoint (below);
* the discrete constraint, the written constraints at the same point and velocity:
  ``κ(q̄_k)(ȧ_k, ṙ_k) = 0`` — in the body frame ``⟨K(q̄_k), (Ξ_k, ṙ_k)⟩ = 0``;
* the discrete Lagrange–d'Alembert equations in momentum form, as on SE(2)
  (:func:`~anholo.numerics.lie_hamel.integrate_lie_hamel`): ``X_α(q_k)ᵀ(p_k + D_1L_d(q_k, q_{k+1})) = 0``
  along a basis of ``D(q_k)`` and the k discrete constraints, n equations for ``q_{k+1}`` solved by Newton's
  method with the exact Jacobian, then ``p_{k+1} = D_2L_d(q_k, q_{k+1})``; ``p_0 = ∂L/∂q̇(q_0, q̇_0)``.

**The midpoint.**  ``L_d`` needs a point at which to turn ``Ξ`` into angle rates.  For the part of L that is
left-invariant (the free rigid body's ``½⟨IΩ, Ω⟩``, the Chaplygin ball's rotational energy)
``L(q̄, E(ā)^{-1}Ξ)`` does not depend on the point at all, so ``L_d`` depends on ``R_k, R_{k+1}`` only
through ``R_kᵀR_{k+1}``: it is SO(3)-invariant whatever the point, and the discrete Noether theorem gives
exact conservation of the spatial angular momentum ``R I Ω`` (Marsden & West 2001, Theorem 1.3.3).  The
point matters only for what is not invariant (a potential, a constraint such as Veselova's
``⟨Ω, Rᵀe_3⟩ = 0``, the coupling with the other coordinates).  The coordinate midpoint is taken because it
makes the discrete Lagrangian and constraint symmetric — exchanging ``q_k, q_{k+1}`` and ``h → −h`` maps
``Ξ → Ξ`` (``cay^{-1}(Fᵀ) = −cay^{-1}(F)``) and fixes ``q̄`` — so the scheme is symmetric and of order 2;
the group midpoint ``R_k cay(hΞ_k/2)`` is not symmetric (``cay(A) cay(−A/2) ≠ cay(A/2)``: the Cayley map is
not a one-parameter group), and reading Euler angles back from a rotation brings branch cuts.  It is
equivariant under shifts of the first and last angle — the rotations about the spatial and body axes of
the sequence, the symmetries of the Veselova system, the Chaplygin ball and the Routh sphere.

**Properties** (docs/integrators.rst): order 2 (symmetric); the discrete constraint holds to the Newton
tolerance; for a left-invariant L (the free rigid body) the spatial angular momentum is conserved to
round-off — the midpoint discrete Lagrange–d'Alembert scheme in Euler angles conserves only its component
about the first axis (the cyclic angle); a different scheme from that midpoint scheme (the discrete motions
differ by ``O(h²)``).  Like every computation in the Euler-angle chart it degenerates at the gimbal lock
(``E(ā)`` singular: ``sin a_2 = 0`` for proper Euler, ``cos a_2 = 0`` for Tait–Bryan sequences).

**Priority** (:func:`group_scheme`): a system with both an SO(3) and an SE(2) factor — the Chaplygin ball
and the Routh sphere, whose contact point and heading also form one — gets the SO(3) scheme, with the
contact point moving by differences: it is the Cayley map on the whole orientation, where the SE(2) scheme
takes the two other Euler angles as shape coordinates moving by differences.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import sympy as sp

from ..algebra.engine import se, to_engine
from .lie_hamel import CayleyStep, _gate, _samples, lie_group_scheme

__all__ = ["SEQUENCES", "rotation", "body_rates", "so3_factor", "So3Scheme", "group_scheme"]

#: The twelve axis sequences of Euler (first = last axis) and Tait–Bryan angles, in the order tried (the
#: common ones first: sequences related by a constant rotation of the axes, as ZYX and XZY, define the same
#: scheme, and the run's message names the first that fits).
SEQUENCES = ("ZXZ", "ZYZ", "ZYX", "XYZ", "ZXY", "YXZ", "XZY", "YZX", "XYX", "XZX", "YXY", "YZY")
_AXIS = {"X": 0, "Y": 1, "Z": 2}


def _axis_rotation(axis: int, c, s) -> list:
    """The rotation by the angle with cosine c and sine s about the coordinate axis ``axis`` (nested lists)."""
    j, k = (axis + 1) % 3, (axis + 2) % 3
    M = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
    M[axis][axis] = 1
    M[j][j], M[k][k], M[k][j], M[j][k] = c, c, s, -s
    return M


def _mul(A, B) -> list:
    return [[sum(A[i][m] * B[m][j] for m in range(3)) for j in range(3)] for i in range(3)]


def _transpose(A) -> list:
    return [[A[j][i] for j in range(3)] for i in range(3)]


def rotation(seq: str, angles, cos=np.cos, sin=np.sin) -> list:
    """``R(a) = R_{s_1}(a_1) R_{s_2}(a_2) R_{s_3}(a_3)`` (body → space) as nested lists, for numbers (numpy's
    ``cos``/``sin``) or expressions (their ``cos``/``sin``)."""
    R = None
    for ax, a in zip(seq, angles):
        Ri = _axis_rotation(_AXIS[ax], cos(a), sin(a))
        R = Ri if R is None else _mul(R, Ri)
    return R


def body_rates(seq: str, angles, cos=np.cos, sin=np.sin) -> list:
    """``E(a)`` (rows, nested lists) with ``Ω = E(a) ȧ`` the body angular velocity of :func:`rotation`
    (``RᵀṘ = Ω̂``): its columns are ``R_3ᵀR_2ᵀ e_{s_1}``, ``R_3ᵀ e_{s_2}``, ``e_{s_3}``."""
    R2 = _axis_rotation(_AXIS[seq[1]], cos(angles[1]), sin(angles[1]))
    R3 = _axis_rotation(_AXIS[seq[2]], cos(angles[2]), sin(angles[2]))
    R3t, R32t = _transpose(R3), _transpose(_mul(R2, R3))
    i, j, k = (_AXIS[a] for a in seq)
    cols = [[R32t[r][i] for r in range(3)], [R3t[r][j] for r in range(3)], [1 if r == k else 0 for r in range(3)]]
    return [[cols[c][r] for c in range(3)] for r in range(3)]


def _body_rates_batch(seq: str, angles: np.ndarray) -> np.ndarray:
    """:func:`body_rates` at many points at once: ``angles`` of shape (P, 3), result (P, 3, 3)."""
    def axis_rotations(axis, a):
        j, k = (axis + 1) % 3, (axis + 2) % 3
        M = np.zeros((len(a), 3, 3))
        c, s = np.cos(a), np.sin(a)
        M[:, axis, axis] = 1.0
        M[:, j, j], M[:, k, k], M[:, k, j], M[:, j, k] = c, c, s, -s
        return M

    i, j, k = (_AXIS[a] for a in seq)
    R3t = np.transpose(axis_rotations(k, angles[:, 2]), (0, 2, 1))
    R2t = np.transpose(axis_rotations(j, angles[:, 1]), (0, 2, 1))
    E = np.zeros((len(angles), 3, 3))
    E[:, :, 0] = (R3t @ R2t[:, :, i, None])[:, :, 0]
    E[:, :, 1] = R3t[:, :, j]
    E[:, k, 2] = 1.0
    return E


@functools.lru_cache(maxsize=None)
def _inverse_rates(seq: str) -> tuple:
    """``(a, E(a)^{-1})`` in sympy: the angle rates of a body angular velocity, simplified once (nine small
    trigonometric entries)."""
    a = sp.symbols("_a1 _a2 _a3", real=True)
    E = sp.Matrix(body_rates(seq, a, sp.cos, sp.sin))
    det = sp.trigsimp(E.det())
    adj = E.adjugate().applyfunc(sp.trigsimp)
    return a, adj / det


def _constant(x: np.ndarray, tol: float) -> bool:
    scale = float(np.abs(x).max())
    return scale > 0 and float(np.ptp(x)) <= tol * scale


def so3_factor(system, mech=None, points: int = 4, tol: float = 1e-9, seed: int = 11):
    """``((i_1, i_2, i_3), seq)``: coordinates that are Euler angles of the sequence ``seq`` (one of
    :data:`SEQUENCES`) of a rotation making the rotational kinetic energy left-invariant, or None (module
    docstring).

    Decided numerically at ``points`` random states with the compiled ``W = ∂²L/∂q̇∂q̇`` of ``mech``
    (:func:`~anholo.numerics.variational.discrete_mechanics`, built if not given): the body form
    ``E(a)^{-T} W_aa E(a)^{-1}`` of the angle block is the same positive definite matrix at every point (relative
    tolerance ``tol``).  Triples are tried in the order of the coordinates, sequences in the order of
    :data:`SEQUENCES` (a sequence and one that differs from it by a constant rotation of the body frame, as
    ``ZXZ`` and ``ZYZ``, give the same scheme)."""
    n = len(system.chart.coordinates)
    if n < 3:
        return None
    gate = _gate(system, mech, constrained=False)
    if gate is None:
        return None
    mech, buf = gate
    rng = np.random.default_rng(seed)

    def draw():  # |q| in [0.3, 1.2]: sin and cos of a middle angle both at least 0.29
        q = rng.uniform(0.3, 1.2, n) * rng.choice([-1.0, 1.0], n)
        return q, rng.uniform(-1, 1, n)

    samples = _samples(mech, buf, points, draw, tol)
    if samples is None:
        return None
    W = np.array([terms[2] for _, _, terms, _ in samples])  # (points, n, n)
    Q = np.array([q for q, *_ in samples])
    for tri in itertools.permutations(range(n), 3):
        blocks = W[:, tri][:, :, tri]
        if not np.all(np.isfinite(blocks)):
            continue
        angles = Q[:, tri]
        # a cheap necessary condition first: det W_aa = det(I) det(E)², |det E| = |sin a_2| (Euler sequences)
        # or |cos a_2| (Tait–Bryan)
        det = np.linalg.det(blocks)
        kinds = {kind: _constant(det / f(angles[:, 1]) ** 2, 1e3 * tol) for kind, f in (("euler", np.sin),
                                                                                         ("tait-bryan", np.cos))}
        for seq in SEQUENCES:
            if not kinds["euler" if seq[0] == seq[2] else "tait-bryan"]:
                continue
            Einv = np.linalg.inv(_body_rates_batch(seq, angles))  # at every point at once
            forms = np.transpose(Einv, (0, 2, 1)) @ blocks @ Einv
            scale = np.abs(forms[0]).max()
            if scale > 0 and np.abs(forms - forms[0]).max() <= tol * scale \
                    and np.linalg.eigvalsh((forms[0] + forms[0].T) / 2).min() > tol * scale:
                return tuple(tri), seq
    return None


class So3Scheme(CayleyStep):
    """The compiled discrete Lagrangian of the Cayley scheme on SO(3) × R^{n−3} for one system (module
    docstring; :class:`~anholo.numerics.lie_hamel.CayleyStep`); ``factor = ((i_1, i_2, i_3), seq)``."""

    def __init__(self, system, factor):
        tri, seq = factor
        self.factor, self.angles, self.sequence = (tuple(tri), seq), tuple(tri), seq
        Q, U, Pm, L, C, Q0, Q1, h = self._inputs(system)
        n = len(Q)
        half = se.Rational(1, 2)
        R0 = rotation(seq, [Q0[i] for i in tri], se.cos, se.sin)
        R1 = rotation(seq, [Q1[i] for i in tri], se.cos, se.sin)
        F = _mul(_transpose(R0), R1)
        den = 1 + F[0][0] + F[1][1] + F[2][2]
        hxi = [2 * (F[2][1] - F[1][2]) / den, 2 * (F[0][2] - F[2][0]) / den, 2 * (F[1][0] - F[0][1]) / den]
        mid = [half * (Q0[i] + Q1[i]) for i in range(n)]
        a, Einv = _inverse_rates(seq)
        at_mid = {se.Symbol(s.name): mid[i] for s, i in zip(a, tri)}
        Einv = [[to_engine(Einv[r, c]).xreplace(at_mid) for c in range(3)] for r in range(3)]
        rep = {Q[i]: mid[i] for i in range(n)}
        for i in range(n):
            if i not in tri:
                rep[U[i]] = (Q1[i] - Q0[i]) / h
        for r, i in enumerate(tri):  # ȧ = E(ā)^{-1} Ξ
            rep[U[i]] = sum((Einv[r][c] * hxi[c] for c in range(3)), se.Integer(0)) / h
        self._compile(Q0, Q1, h, Pm, h * L.xreplace(rep), [c.xreplace(rep) for c in C])

    def describe(self, names) -> str:
        """``Cayley map on SO(3) of phi, theta, psi (ZXZ)`` (the run's message names the scheme)."""
        return f"Cayley map on SO(3) of {', '.join(names[i] for i in self.angles)} ({self.sequence})"


def group_scheme(system, mech=None):
    """The Cayley discrete Hamel scheme of a :class:`~anholo.system.System`: on SO(3) where
    :func:`so3_factor` finds an orientation (:class:`So3Scheme`), else on SE(2) where
    :func:`~anholo.numerics.lie_hamel.se2_factor` finds a planar motion
    (:class:`~anholo.numerics.lie_hamel.LieGroupScheme`), else None (the midpoint form then runs)."""
    factor = so3_factor(system, mech)
    if factor is not None:
        return So3Scheme(system, factor)
    return lie_group_scheme(system, mech)

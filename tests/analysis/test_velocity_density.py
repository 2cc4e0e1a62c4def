"""Invariant densities depending on the velocities, N = |P(q, v)|^k (search_velocity_density).

Oracle, independent of anholo: the Chaplygin sleigh's equations derived here by the coordinate multiplier
method (``W q̈ = ∂L/∂q + Aᵀ λ``, ``A q̈ + Ȧ q̇ = 0``) and written in the coordinates ``(x, y, θ, u, w)`` of C
(u the forward velocity of the centre of mass, w = a θ̇ its lateral velocity: anholo's v1, v2); the
divergence of ``N Γ`` differentiated here with sympy.  The sleigh has no smooth invariant measure (Zenkov &
Bloch 2003), but ``N = 1/|w|`` is invariant on ``w ≠ 0``.
"""

import numpy as np
import sympy as sp

from anholo.analysis.invariant_measure import search_velocity_density
from anholo.system import System

m, I, a = sp.symbols("m I a", positive=True)
x, y, th, u, w = sp.symbols("x y theta u w", real=True)


def _sleigh_field():
    """(q̇, u̇, ẇ) on C in the coordinates (x, y, θ, u, w), by the multiplier method."""
    q = sp.Matrix([x, y, th])
    qd = sp.Matrix(sp.symbols("xd yd thd", real=True))
    qdd = sp.Matrix(sp.symbols("xdd ydd thdd", real=True))
    lam = sp.Symbol("lam")
    A = sp.Matrix([[-sp.sin(th), sp.cos(th), -a]])
    W = sp.diag(m, m, I)
    Adot = A.jacobian(q) * qd
    eqs = list(W * qdd - A.T * lam) + [(A * qdd)[0] + (Adot.T * qd)[0]]
    sol = sp.solve(eqs, list(qdd) + [lam], dict=True)[0]
    on_C = {qd[0]: u * sp.cos(th) - w * sp.sin(th), qd[1]: u * sp.sin(th) + w * sp.cos(th), qd[2]: w / a}
    acc = [sol[s].xreplace(on_C) for s in qdd]
    # u = cos θ ẋ + sin θ ẏ, w = −sin θ ẋ + cos θ ẏ: their time derivatives
    udot = sp.cos(th) * acc[0] + sp.sin(th) * acc[1] + (w / a) * (-sp.sin(th) * on_C[qd[0]] + sp.cos(th) * on_C[qd[1]])
    wdot = -sp.sin(th) * acc[0] + sp.cos(th) * acc[1] - (w / a) * (sp.cos(th) * on_C[qd[0]] + sp.sin(th) * on_C[qd[1]])
    return [on_C[qd[0]], on_C[qd[1]], on_C[qd[2]], sp.simplify(udot), sp.simplify(wdot)]


def _divergence(N, field):
    coords = [x, y, th, u, w]
    return sp.simplify(sum(sp.diff(N * f, c) for f, c in zip(field, coords)))


def test_sleigh_field_oracle_is_the_known_one():
    f = _sleigh_field()
    assert sp.simplify(f[3] - w ** 2 / a) == 0
    assert sp.simplify(f[4] + a * m * u * w / (I + a ** 2 * m)) == 0


def test_sleigh_velocity_density_found_and_invariant():
    field = _sleigh_field()
    nh = System.load("chaplygin_sleigh").nonholonomic()
    found = search_velocity_density(nh.field())
    assert len(found) == 1 and found[0].exponent == -1
    v1, v2 = nh.free_velocities
    names = {str(s): s for s in (m, I, a)}
    N = sp.sympify(str(found[0].density), locals=names).xreplace({sp.Symbol(str(v1)): u, sp.Symbol(str(v2)): w})
    assert N.free_symbols <= {u, w, m, I, a} and _divergence(N, field) == 0        # invariant on w != 0
    assert sp.simplify(N * w).is_number                                         # N = c/w
    # the test can fail: other powers of w, and 1/u, are not invariant
    for wrong in (1 / w ** 2, 1 / u, sp.S.One):
        assert _divergence(wrong, field) != 0
    assert "|P|^k" in found[0].ansatz


def test_no_velocity_density_when_the_only_candidates_are_first_integrals():
    # the vertical disk on a turntable: div Γ = 0 and θ' is a first integral; nothing non-trivial is returned
    nh = System.load("disk_on_turntable").nonholonomic()
    assert search_velocity_density(nh.field()) == ()

"""The converse of Theorem 1 of Crampin & Mestdag (2010): an Euler–Lagrange field of L + ρ_a v^a tangent to C
is, on C, the vakonomic field of the section σ = ρ|_C, tangent to its image.

Oracles: the coordinate Euler–Lagrange equations of L̂ = L − p_a ϑ^a built here in coordinates
(tests/oracles.py ``coordinate_accelerations``) and the coordinate multiplication rule (tests/oracles.py
``coordinate_vector_fields``) evaluated at the same state with μ = σ: the accelerations agree and μ̇
equals the rate of σ along the motion (tangency to the image of σ).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from oracles import coordinate_accelerations, coordinate_vector_fields, point_on_constraints

from anholo.analysis.variational import converse_check
from anholo.system import System


def test_chaplygin_minus_p_satisfies_the_converse_and_matches_the_multiplication_rule():
    S = System.load("nonholonomic_particle")
    ch = S.chaplygin()
    nh = ch.nonholonomic
    check = converse_check(nh, [-p for p in ch.momenta])
    assert check.tangent_to_C and check.holds and "tangent to its image" in str(check)
    q, u = S.chart.coordinates, S.chart.velocities
    x, y, z = q
    xd, yd, zd = u
    L = S.lagrangian.natural_expr()
    Lhat = L - zd * (zd - y * xd)                # p_z = ż, ϑ = dz − y dx, by hand
    _, vak, _ = coordinate_vector_fields(L, q, u, [zd - y * xd], {})
    for seed in (1, 2, 3):
        pt = point_on_constraints(q, u, [zd - y * xd], [], [zd], seed)
        el = coordinate_accelerations(Lhat, q, u, pt)
        state = np.array([float(pt[s]) for s in q] + [float(pt[s]) for s in u] + [-float(pt[zd])])
        rates = vak(0.0, state)
        np.testing.assert_allclose(rates[3:6], el, atol=1e-10)      # same accelerations
        assert abs(rates[6] - (-el[2])) < 1e-10                      # μ̇ = d/dt(−ż): tangent to the image of σ


def test_zero_rho_is_not_tangent_to_C():
    S = System.load("nonholonomic_particle")
    check = converse_check(S.chaplygin().nonholonomic, [0])
    assert not check.tangent_to_C and not check.holds and "does not apply" in str(check)

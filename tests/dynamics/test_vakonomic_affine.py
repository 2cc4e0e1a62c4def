"""Vakonomic dynamics for affine constraints (a sphere rolling on a rotating table).

Oracle: the coordinate multiplication rule built by hand in tests/oracles.py
(``multiplication_rule_solution``: Euler–Lagrange equations of ``L + λ_a φ_a`` with the
affine constraints φ as written and their time derivative), at random points of C.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import multiplication_rule_solution, point_on_constraints

from anholo.dynamics.vakonomic import VakonomicSystem
from anholo.examples import resolve_system
from anholo.numerics import simulate
from anholo.numerics.ode import from_system
from anholo.system import System


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_sphere_on_turntable_vakonomic_matches_the_multiplication_rule(seed):
    spec = resolve_system("sphere_on_turntable")
    system = System.from_spec(spec)
    vak = VakonomicSystem(system.nonholonomic())
    qdd_w, rates_w = vak.field().in_written_multipliers(natural=True)
    xd, yd = spec.velocities[:2]
    pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, [xd, yd], seed)
    rng = np.random.default_rng(seed)
    for lam in vak.multipliers:
        pt[lam] = sp.Float(rng.uniform(-1, 1), 30)
    qdd, lamdot = multiplication_rule_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints,
                                               list(vak.multipliers), pt)
    np.testing.assert_allclose([float(qdd_w[q].xreplace(pt)) for q in spec.coordinates], qdd, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose([float(r.xreplace(pt)) for r in rates_w], lamdot, rtol=1e-8, atol=1e-10)


def test_affine_vakonomic_simulation_stays_on_C_and_is_in_the_report(capsys):
    from anholo.cli import main

    system = System.load("sphere_on_turntable")
    ode = from_system(system, "vakonomic")
    q0 = [1.0, 0.0, 0.3, 1.0, 0.2]
    # constraints: x_dot = a*omega_y - Omega*y, y_dot = -a*omega_x + Omega*x; pick theta_dot, psi_dot, phi_dot
    th, ph, ps = 1.0, 0.3, 0.2
    thd, psd, phd = 0.4, -0.3, 0.5
    wx = thd * np.cos(ph) + psd * np.sin(th) * np.sin(ph)
    wy = thd * np.sin(ph) - psd * np.sin(th) * np.cos(ph)
    u0 = [wy - 0.0, -wx + 1.0, phd, thd, psd]
    traj = simulate(ode, 3.0, q0, u0, [0.2, -0.1], points=301)
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-9
    assert main(["analyze", "sphere_on_turntable", "--quiet", "--sections", "vakonomic"]) == 0
    assert "lambda1_dot" in capsys.readouterr().out

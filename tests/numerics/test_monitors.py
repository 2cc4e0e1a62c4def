"""Monitors against hand-written formulas and Noether's theorem.

Oracles: ``E = ½ m l² (θ̇² + sin²θ φ̇²) − m g l cos θ`` and ``p_φ = m l² sin²θ φ̇``
for the spherical pendulum (conserved: φ is cyclic); the multiplier of the
nonholonomic particle ``λ = ẋ ẏ/(1+y²)`` (THEORY §9).
"""

import numpy as np
import pytest

from anholo.errors import SimulationError
from anholo.numerics import simulate
from anholo.numerics.monitors import cyclic_coordinates, momentum_map

from numerics_cases import compiled


def test_energy_and_momentum_of_the_spherical_pendulum():
    c = compiled("spherical_pendulum", "euler-lagrange")
    traj = simulate(c, 20.0, [1.0, 0.0], [0.3, 1.2], points=201)
    th, thd, phd = traj.q[0], traj.qdot[0], traj.qdot[1]
    m, l, g = 1.0, 1.0, 9.81
    E = 0.5 * m * l**2 * (thd**2 + np.sin(th) ** 2 * phd**2) - m * g * l * np.cos(th)
    np.testing.assert_allclose(traj.energy(), E, rtol=1e-12)
    p_phi = momentum_map(traj, "phi")
    np.testing.assert_allclose(p_phi, m * l**2 * np.sin(th) ** 2 * phd, rtol=1e-12)
    assert np.max(np.abs(p_phi - p_phi[0])) < 1e-8
    assert cyclic_coordinates(c.ode) == ("phi",)
    np.testing.assert_allclose(momentum_map(traj, ["0", "1"]), p_phi, rtol=1e-14)


def test_momentum_map_errors():
    traj = simulate(compiled("spherical_pendulum", "euler-lagrange"), 1.0, [1.0, 0.0], [0.3, 1.2], points=3)
    with pytest.raises(SimulationError, match="not a coordinate"):
        momentum_map(traj, "psi")
    with pytest.raises(SimulationError, match="needs 2 components"):
        momentum_map(traj, ["1"])


def test_nonholonomic_multiplier_along_the_motion():
    traj = simulate(compiled("nonholonomic_particle", "nonholonomic"), 3.0, [0, 0.5, 0], [1, 0.5, 0.5], points=31)
    x_dot, y_dot, y = traj.qdot[0], traj.qdot[1], traj.q[1]
    np.testing.assert_allclose(traj.multipliers[0], x_dot * y_dot / (1 + y**2), rtol=1e-12)
    assert np.max(traj.energy_drift()) < 1e-8

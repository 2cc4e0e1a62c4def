"""Abs and sign in a constraint, simulated on the exact route: sympy differentiates ``sign`` into
``DiracDelta``, which the compiled right-hand side takes as 0 off the kink (it failed to print before).

Oracle: the coordinate multiplier equations of the particle with ``ż = |y| ẋ`` written here by hand,
``q̈ = λ a`` with ``a = (−|y|, 0, 1)`` and ``λ = sign(y) ẏ ẋ / (1 + y²)`` (the constraint differentiated)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from anholo.numerics import simulate
from anholo.system import System

TOML = '''
name = "particle with a kink"
coordinates = ["x", "y", "z"]
lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2"
constraints = ["z_dot - sign(y)*y*x_dot"]
'''


def oracle(t, s):
    x, y, z, xd, yd, zd = s
    lam = np.sign(y) * yd * xd / (1 + y * y)
    return [xd, yd, zd, -abs(y) * lam, 0.0, lam]


@pytest.mark.parametrize("y0, ydot0", [(1.0, 0.3), (-1.0, -0.4)])
def test_sign_constraint_simulates_as_the_coordinate_equations(tmp_path, y0, ydot0):
    path = tmp_path / "kink.toml"
    path.write_text(TOML)
    system = System.load(str(path))
    xd0 = 1.0
    zd0 = abs(y0) * xd0
    traj = simulate(system.nonholonomic().field(), 1.0, [0, y0, 0], [xd0, ydot0, zd0], points=11)
    ref = solve_ivp(oracle, (0, 1), [0, y0, 0, xd0, ydot0, zd0], rtol=1e-12, atol=1e-12, t_eval=traj.t)
    assert np.max(np.abs(traj.q - ref.y[:3])) < 1e-8
    assert np.max(np.abs(traj.qdot - ref.y[3:])) < 1e-8
    assert abs(traj.q[1, -1] - (y0 + ydot0)) < 1e-9  # the motion moved away from y0 (not a trivial run)

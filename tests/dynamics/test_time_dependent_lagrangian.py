"""Time-dependent Lagrangians and forces (``time = "t"``), docs/forces.rst.

Oracles: the coordinate Euler–Lagrange equations written by hand with the explicit
time term, ``W q̈ = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t + Q`` (with constraints the
multiplier method of tests/oracles.py, ``nonlinear_constrained_solution(time=t)``);
the energy balance ``dE/dt = −∂L/∂t + Q·q̇`` along motions, checked numerically on
a trajectory (finite differences of E along the integrated motion) and at random
points; and the closed-form motion of a particle under a periodic force.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution, point_on_constraints

from anholo.cli import main
from anholo.io.systemfile import parse_system
from anholo.numerics import simulate
from anholo.numerics.ode import from_system
from anholo.system import System

TILTED = """
name = "Knife edge on a periodically tilted plane"
coordinates = ["x", "y", "theta"]
parameters = ["m", "I", "g", "e", "w", "c"]
time = "t"
lagrangian = "m*(x_dot^2 + y_dot^2)/2 + I*theta_dot^2/2 - m*g*sin(e*sin(w*t))*x"
constraints = ["sin(theta)*x_dot - cos(theta)*y_dot"]
forces = ["-c*x_dot", "-c*y_dot", "cos(w*t)"]
[values]
m = 1
I = 0.5
g = 9.81
e = 0.3
w = 2
c = 0.1
"""

PENDULUM = """
name = "Pendulum with a vertically driven support"
coordinates = ["theta"]
parameters = ["m", "l", "g", "A", "w"]
time = "t"
lagrangian = "m*(l^2*theta_dot^2 + 2*l*theta_dot*A*w*cos(w*t)*sin(theta) + A^2*w^2*cos(w*t)^2)/2 + m*g*l*cos(theta) - m*g*A*sin(w*t)"
[values]
m = 1
l = 1
g = 9.81
A = 0.1
w = 5
"""


def _num(e, pt):
    return float(sp.sympify(e).xreplace(pt))


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_tilted_knife_edge_matches_the_multiplier_method_with_time(seed):
    spec = parse_system(TILTED)
    system = System.from_spec(spec)
    t = spec.time
    x, y, th = spec.coordinates
    xd, yd, thd = spec.velocities
    pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, [yd], seed)
    pt[t] = sp.Float(0.37 + seed, 30)
    qdd, lam = nonlinear_constrained_solution(spec.lagrangian, spec.coordinates, spec.velocities, spec.constraints,
                                              pt, forces=spec.forces, time=t)
    for field in (system.nonholonomic().field(), system.chetaev().field()):
        acc = field.natural_accelerations()
        np.testing.assert_allclose([_num(acc[q], pt) for q in spec.coordinates], qdd, rtol=1e-9, atol=1e-11)
    lam_nh = system.nonholonomic().field().coordinate_multipliers()
    assert _num(lam_nh[0], pt) == pytest.approx(lam[0], rel=1e-9, abs=1e-11)


def test_driven_pendulum_euler_lagrange_field_matches_coordinate_equations():
    """With the support at height A sin(wt): θ̈ = −(g + ÿ_s) sin θ / l, ÿ_s = −A w² sin(wt) (by hand)."""
    spec = parse_system(PENDULUM)
    system = System.from_spec(spec)
    (th,), (thd,) = spec.coordinates, spec.velocities
    m, l, g, A, w = spec.parameters
    t = spec.time
    acc = system.euler_lagrange_field().natural_accelerations()[th]
    expected = -(g - A * w**2 * sp.sin(w * t)) * sp.sin(th) / l
    assert sp.simplify(acc - expected) == 0
    # and the free field ignores nothing: without the time term the result would differ
    wrong = system.lagrangian.euler_lagrange_field().natural_accelerations()[th]
    assert sp.simplify(wrong - expected) != 0


def test_energy_balance_along_a_simulated_motion():
    """dE/dt = −∂L/∂t + Q·q̇ on a trajectory of the tilted knife edge (E from the integrated states)."""
    spec = parse_system(TILTED)
    system = System.from_spec(spec)
    ode = from_system(system, "nonholonomic")
    theta0 = 0.4
    traj = simulate(ode, (0.0, 4.0), [0, 0, theta0], [np.cos(theta0), np.sin(theta0), 0.5], points=4001,
                    rtol=1e-12, atol=1e-12)
    vals = {p: sp.Float(v) for p, v in zip(spec.parameters, (1, 0.5, 9.81, 0.3, 2, 0.1))}
    L = spec.lagrangian.xreplace(vals)
    u = spec.velocities
    E = sum(ui * L.diff(ui) for ui in u) - L
    rate = -L.diff(spec.time) + sum(Q.xreplace(vals) * ui for Q, ui in zip(spec.forces, u))
    args = list(spec.coordinates) + list(u) + [spec.time]
    fE, fr = sp.lambdify(args, E, "numpy"), sp.lambdify(args, rate, "numpy")
    Es = fE(*traj.q, *traj.qdot, traj.t)
    rs = fr(*traj.q, *traj.qdot, traj.t)
    dE = np.gradient(Es, traj.t, edge_order=2)
    assert np.max(np.abs(dE[5:-5] - rs[5:-5])) < 1e-4 * (1 + np.max(np.abs(rs)))
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-9


def test_periodically_forced_particle_has_the_closed_form_motion():
    """m ẍ = F0 cos(wt) from rest: x = F0 (1 − cos wt)/(m w²)."""
    spec = parse_system("""
name = "Forced particle"
coordinates = ["x"]
parameters = ["m", "F0", "w"]
time = "t"
lagrangian = "m*x_dot^2/2"
forces = ["F0*cos(w*t)"]
[values]
m = 2
F0 = 3
w = 1.5
""")
    traj = simulate(from_system(System.from_spec(spec), "euler-lagrange"), 5.0, [0.0], [0.0], points=11)
    np.testing.assert_allclose(traj.q[0], 3 * (1 - np.cos(1.5 * traj.t)) / (2 * 1.5**2), rtol=1e-8, atol=1e-10)


def test_cli_analyzes_and_simulates_a_time_dependent_lagrangian(tmp_path, capsys):
    path = tmp_path / "tilted.toml"
    path.write_text(TILTED)
    assert main(["analyze", str(path), "--quiet", "--sections", "euler_lagrange,nonholonomic"]) == 0
    out = capsys.readouterr().out
    assert "Nonholonomic field on C" in out and "cos(t*w)" in out.replace("cos(w*t)", "cos(t*w)")
    assert main(["simulate", str(path), "--q0", "0,0,0.4", "--qdot0", f"{np.cos(0.4)},{np.sin(0.4)},0.5",
                 "--t-end", "1", "--quiet"]) == 0

"""Holonomic constraints ``f(q, t) = 0`` (the ``holonomic`` key), docs/forces.rst.

Oracles: ``sympy.physics.mechanics.LagrangesMethod`` with ``hol_coneqs`` (the
non-minimal pendulum of the sympy documentation); the coordinate multiplier method
built by hand (tests/oracles.py) with the differentiated constraint; the bundled
rolling disk (itself checked against KanesMethod) for the disk written with its
centre height z and the holonomic constraint ``z = r cos(lean)``; and the
geometry of the surface along long simulations (``max |f| ≤ 1e-10``).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution

from anholo.errors import SystemFileError
from anholo.examples import resolve_system
from anholo.io.systemfile import parse_system
from anholo.numerics import simulate
from anholo.numerics.ode import from_system
from anholo.system import System

PENDULUM = """
name = "Non-minimal pendulum"
coordinates = ["x", "y"]
parameters = ["m", "l", "g"]
lagrangian = "m*(x_dot^2 + y_dot^2)/2 + m*g*x"
holonomic = ["x^2 + y^2 - l^2"]
[values]
m = 1
l = 1
g = 9.81
"""


def _point_on_circle(seed, length, extra):
    rng = np.random.default_rng(seed)
    phi, w = rng.uniform(-1.2, 1.2), rng.uniform(-1.5, 1.5)
    x, y = length * np.cos(phi), length * np.sin(phi)
    return x, y, -length * np.sin(phi) * w, length * np.cos(phi) * w


def _lagranges_method(spec, point):
    """q̈ from LagrangesMethod(L, q, hol_coneqs=[f]) at ``point`` (dict of floats by symbol)."""
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    q, u = list(spec.coordinates), list(spec.velocities)
    t = dynamicsymbols._t
    qf = [dynamicsymbols(s.name) for s in q]
    to_dyn = dict(zip(q, qf))
    to_dyn.update(zip(u, [f.diff(t) for f in qf]))
    lm = LagrangesMethod(spec.lagrangian.xreplace(to_dyn), qf,
                         hol_coneqs=[f.xreplace(to_dyn) for f in spec.holonomic])
    lm.form_lagranges_equations()
    n = len(q)
    back = {fq: point[s] for s, fq in zip(q, qf)}
    back.update({fq.diff(t): point[s] for s, fq in zip(u, qf)})
    back.update({k: v for k, v in point.items() if k not in set(q) | set(u)})
    M = np.array(lm.mass_matrix_full[n:, n:].xreplace(back).evalf().tolist(), dtype=float)
    F = np.array(lm.forcing_full[n:, :].xreplace(back).evalf().tolist(), dtype=float).reshape(-1)
    return np.linalg.solve(M, F)[:n]


@pytest.mark.parametrize("seed", (0, 1, 2))
def test_pendulum_matches_lagranges_method_with_hol_coneqs(seed):
    spec = parse_system(PENDULUM)
    system = System.from_spec(spec)
    m, l, g = spec.parameters
    vals = {m: 1.3, l: 0.9, g: 9.81}
    x, y, xd, yd = _point_on_circle(seed, vals[l], None)
    pt = {**vals, spec.coordinates[0]: x, spec.coordinates[1]: y, spec.velocities[0]: xd, spec.velocities[1]: yd}
    pt = {k: sp.Float(v, 30) for k, v in pt.items()}
    expected = _lagranges_method(spec, pt)
    for field in (system.nonholonomic().field(), system.chetaev().field()):
        acc = field.natural_accelerations()
        got = [float(acc[s].xreplace(pt)) for s in spec.coordinates]
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)
    qdd, lam = nonlinear_constrained_solution(spec.lagrangian, spec.coordinates, spec.velocities, system.constraints, pt)
    lam_nh = system.nonholonomic().field().coordinate_multipliers()[0]
    assert float(lam_nh.xreplace(pt)) == pytest.approx(lam[0], rel=1e-9)


@pytest.mark.parametrize("kind", ("nonholonomic", "chetaev", "vakonomic"))
def test_long_simulations_stay_on_the_surface(kind):
    system = System.from_spec(parse_system(PENDULUM))
    phi = 0.5
    traj = simulate(from_system(system, kind), 300.0, [np.cos(phi), np.sin(phi)],
                    [-np.sin(phi) * 0.3, np.cos(phi) * 0.3], points=3001)
    assert np.max(np.abs(traj.holonomic_residuals())) <= 1e-10
    assert np.max(np.abs(traj.constraint_residuals())) <= 1e-10
    assert np.max(traj.energy_drift()) < 1e-7
    if kind == "nonholonomic":  # without the projection the surface is left (the monitor sees it)
        free = simulate(from_system(system, kind), 300.0, [np.cos(phi), np.sin(phi)],
                        [-np.sin(phi) * 0.3, np.cos(phi) * 0.3], points=3001, project=False, rtol=1e-8, atol=1e-10)
        assert np.max(np.abs(free.holonomic_residuals())) > 1e-8


def test_time_dependent_holonomic_constraint():
    """A pendulum whose length is driven, l(t) = l0 (1 + e sin wt): Chetaev route, against the multiplier
    method with ∂f/∂t, and a simulation that follows the moving circle."""
    spec = parse_system(PENDULUM.replace('parameters = ["m", "l", "g"]', 'parameters = ["m", "l", "g", "e", "w"]')
                        .replace('holonomic = ["x^2 + y^2 - l^2"]',
                                 'time = "t"\nholonomic = ["x^2 + y^2 - l^2*(1 + e*sin(w*t))^2"]')
                        .replace("g = 9.81", "g = 9.81\ne = 0.1\nw = 3"))
    system = System.from_spec(spec)
    assert system.is_time_dependent
    t = spec.time
    m, l, g, e, w = spec.parameters
    vals = {m: 1.0, l: 1.0, g: 9.81, e: 0.1, w: 3.0, t: 0.4}
    L_t = 1.0 * (1 + 0.1 * np.sin(1.2))
    Ldot = 0.1 * 3.0 * np.cos(1.2)
    phi, om = 0.3, 0.7
    x, y = L_t * np.cos(phi), L_t * np.sin(phi)
    xd = Ldot * np.cos(phi) - L_t * np.sin(phi) * om
    yd = Ldot * np.sin(phi) + L_t * np.cos(phi) * om
    pt = {k: sp.Float(v, 30) for k, v in {**vals, spec.coordinates[0]: x, spec.coordinates[1]: y,
                                           spec.velocities[0]: xd, spec.velocities[1]: yd}.items()}
    qdd, _ = nonlinear_constrained_solution(spec.lagrangian, spec.coordinates, spec.velocities, system.constraints,
                                            pt, time=t)
    acc = system.chetaev().field().natural_accelerations()
    np.testing.assert_allclose([float(acc[s].xreplace(pt)) for s in spec.coordinates], qdd, rtol=1e-9, atol=1e-11)
    x0, y0 = np.cos(phi), np.sin(phi)
    traj = simulate(from_system(system, "chetaev"), 50.0, [x0, y0], [0.1 * 3 * x0 - y0 * om, 0.1 * 3 * y0 + x0 * om],
                    points=501)
    assert np.max(np.abs(traj.holonomic_residuals())) <= 1e-10
    r = np.hypot(traj.q[0], traj.q[1])
    np.testing.assert_allclose(r, 1 + 0.1 * np.sin(3 * traj.t), atol=1e-10)


def test_rolling_disk_with_its_height_as_a_coordinate():
    """The rolling disk written with the centre height z and z = r cos(lean) gives the bundled disk's
    accelerations (the bundled file is checked against KanesMethod)."""
    base = parse_system(open(resolve_system("rolling_disk").source, encoding="utf-8").read())
    x, y, yaw, lean, spin = base.coordinates
    xd, yd, yawd, leand, spind = base.velocities
    m, r, g = base.parameters
    text = """
name = "Rolling disk with its height"
coordinates = ["x", "y", "z", "yaw", "lean", "spin"]
parameters = ["m", "r", "g"]
lagrangian = \"\"\"
m*( (x_dot + r*(lean_dot*sin(yaw)*cos(lean) + yaw_dot*cos(yaw)*sin(lean)))^2
  + (y_dot - r*(lean_dot*cos(yaw)*cos(lean) - yaw_dot*sin(yaw)*sin(lean)))^2
  + z_dot^2 )/2
+ m*r^2*( lean_dot^2 + 2*(spin_dot + yaw_dot*sin(lean))^2 + yaw_dot^2*cos(lean)^2 )/8
- m*g*z
\"\"\"
constraints = ["x_dot - r*cos(yaw)*spin_dot", "y_dot - r*sin(yaw)*spin_dot"]
holonomic = ["z - r*cos(lean)"]
"""
    spec = parse_system(text)
    system = System.from_spec(spec)
    rng = np.random.default_rng(3)
    vals = {"m": 1.2, "r": 0.6, "g": 9.81, "yaw": rng.uniform(-1, 1), "lean": rng.uniform(-0.8, 0.8),
            "yaw_dot": rng.uniform(-1, 1), "lean_dot": rng.uniform(-1, 1), "spin_dot": rng.uniform(-1, 1),
            "x": 0.3, "y": -0.2}
    vals["x_dot"] = vals["r"] * np.cos(vals["yaw"]) * vals["spin_dot"]
    vals["y_dot"] = vals["r"] * np.sin(vals["yaw"]) * vals["spin_dot"]
    vals["z"] = vals["r"] * np.cos(vals["lean"])
    vals["z_dot"] = -vals["r"] * np.sin(vals["lean"]) * vals["lean_dot"]
    names = {s.name: s for s in spec.coordinates + spec.velocities + spec.parameters}
    pt = {names[k]: sp.Float(v, 30) for k, v in vals.items()}
    acc = system.nonholonomic().field().natural_accelerations()
    got = {s.name: float(acc[s].xreplace(pt)) for s in spec.coordinates}
    base_acc = System.from_spec(base).nonholonomic().field().natural_accelerations()
    bnames = {s.name: s for s in base.coordinates + base.velocities + base.parameters}
    bpt = {bnames[k]: sp.Float(v, 30) for k, v in vals.items() if k in bnames}
    for s in base.coordinates:
        assert got[s.name] == pytest.approx(float(base_acc[s].xreplace(bpt)), rel=1e-9, abs=1e-11)


def test_holonomic_constraints_are_checked():
    with pytest.raises(SystemFileError, match="uses the velocity x_dot"):
        parse_system(PENDULUM.replace("x^2 + y^2 - l^2", "x_dot*y"))
    with pytest.raises(SystemFileError, match="does not depend on the coordinates"):
        parse_system(PENDULUM.replace("x^2 + y^2 - l^2", "l - 1"))

"""The rattleback (bundled rattleback.toml) through anholo's Maggi route, against independent computations.

The file is written by tools/make_rattleback.py from the sympy.physics.mechanics model of
tests/mechanics_models.py (Kane & Levinson (1982); values as in Autolev's rattleback sample problem).
Oracles, none of them anholo's derivation:

* ``sympy.physics.mechanics.KanesMethod`` on that model: ``mass_matrix_full · ẋ = forcing_full`` solved
  numerically at random points of C (tests/mechanics/kane_oracle.py), with Kane & Levinson's values and
  with random ones;
* the height of the mass centre written by hand from the ellipsoid's support function,
  ``z_G = sqrt(a² n1² + b² n2² + c² n3²) − h n3``, n the upward vertical in body axes;
* the energy ``T + V`` of the KanesMethod model (sympy's ``RigidBody.kinetic_energy``, its mass centre's
  height), conserved along a numerical integration of anholo's field (scipy's DOP853 through
  anholo.numerics.simulate);
* the spin reversal (Kane & Levinson (1982); Garcia & Hubbard (1988)): from the initial state of
  Autolev's rattleback sample problem (spin 5 rad/s about the body's vertical axis, roll 0.5°,
  pitch −0.5°) the spin reverses within 5 s, and spun the other way it keeps its sign much longer.
"""

from __future__ import annotations

import io
import json
import random

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

from anholo.cli import main
from anholo.system import System

from mechanics_models import rattleback
from mechanics.kane_oracle import kane_points


@pytest.fixture(scope="module")
def kane():
    return rattleback()


@pytest.fixture(scope="module")
def system():
    return System.load("rattleback")


def _has_root(expr) -> bool:
    return any(p.exp.is_Rational and not p.exp.is_Integer and p.base.free_symbols for p in expr.atoms(sp.Pow))


def _random_values(seed):
    """Random positive parameters of a rattleback-like body (long axis a, centre of mass below the centre)."""
    rng = random.Random(seed)
    a, b = rng.uniform(0.1, 0.3), rng.uniform(0.03, 0.08)
    c = rng.uniform(0.02, 0.05)
    return {"a": a, "b": b, "c": c, "h": rng.uniform(0.2, 0.8) * c, "m": rng.uniform(0.5, 2.0),
            "A": rng.uniform(1e-4, 5e-4), "B": rng.uniform(1e-3, 3e-3), "C": rng.uniform(1e-3, 3e-3),
            "D": rng.uniform(1e-5, 5e-5), "g": rng.uniform(9.0, 10.0)}


def _by_symbol(KM, named):
    syms = {s.name: s for s in set().union(*(e.free_symbols for e in KM.mass_matrix_full))
            | set().union(*(e.free_symbols for e in KM.forcing_full)) if isinstance(s, sp.Symbol)}
    return {syms[k]: v for k, v in named.items() if k in syms}


def _worst_deviation(ms, KM, named, seed, count=3, spread=0.6, anholo_values=None):
    """Largest relative deviation of anholo's q̈ (Maggi) from KanesMethod's at ``count`` random points of C
    (KanesMethod at the parameter values ``named``, anholo at ``anholo_values``, by default the same)."""
    coords = [c.name for c in ms.chart.coordinates]
    worst = 0.0
    for qv, _uv, qdv, qddv, _udv in kane_points(KM, _by_symbol(KM, named), count, seed, spread):
        vals = dict(anholo_values or named)
        vals.update(qv)
        vals.update({f"{c}_dot": qdv[c] for c in coords})
        vals.update({v.name: qdv[c.name] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
        got = ms.evaluate(vals)["q_ddot"]
        for c, g in zip(coords, got):
            worst = max(worst, abs(g - qddv[c]) / max(1.0, abs(qddv[c])))
    return worst


def test_file_is_a_large_system_with_square_roots(system):
    assert [c.name for c in system.chart.coordinates] == ["yaw", "roll", "pitch", "x", "y"]
    assert len(system.constraints) == 2 and not system.holonomic
    assert all(_has_root(e) for e in (system.lagrangian.expr, *system.constraints))  # the support function
    assert system.is_large  # L and the constraints have more tree nodes than anholo.dynamics.maggi.LARGE_SYSTEM
    ms = system.maggi()
    assert [c.name for c in ms.free_coordinates] == ["yaw", "roll", "pitch"]
    assert [c.name for c in ms.dependent_coordinates] == ["x", "y"]


def test_potential_is_the_support_function(system):
    """V = m g z_G with z_G = sqrt(a² n1² + b² n2² + c² n3²) − h n3 (z_G = c − h at rest)."""
    q = {c.name: c for c in system.chart.coordinates}
    p = {s.name: s for s in system.chart.parameters}
    V = -system.lagrangian.natural_expr().xreplace({v: 0 for v in system.chart.velocities})
    roll, pitch = q["roll"], q["pitch"]
    n1, n2, n3 = -sp.sin(pitch) * sp.cos(roll), sp.sin(roll), sp.cos(pitch) * sp.cos(roll)
    a, b, c, h, m, g = (p[k] for k in "abchmg")
    expected = m * g * (sp.sqrt(a**2 * n1**2 + b**2 * n2**2 + c**2 * n3**2) - h * n3)
    swapped = m * g * (sp.sqrt(b**2 * n1**2 + a**2 * n2**2 + c**2 * n3**2) - h * n3)  # a and b swapped
    rng = random.Random(5)
    for _ in range(5):
        pt = {s: rng.uniform(-1.2, 1.2) for s in system.chart.coordinates}
        pt.update({s: rng.uniform(0.01, 0.3) for s in system.chart.parameters})
        assert abs(float(V.xreplace(pt)) - float(expected.xreplace(pt))) < 1e-12
        assert abs(float(V.xreplace(pt)) - float(swapped.xreplace(pt))) > 1e-6  # the check can fail
    rest = {s: 0 for s in system.chart.coordinates}
    assert sp.simplify(V.xreplace(rest) - m * g * (c - h)) == 0


def test_field_equals_kanes_method_with_kane_levinson_values(kane, system):
    KM, _ = kane
    ms = system.maggi()
    named = {str(k): float(v) for k, v in system.values.items()}
    assert _worst_deviation(ms, KM, named, seed=1) < 1e-9


@pytest.mark.parametrize("seed", [2, 3])
def test_field_equals_kanes_method_with_random_values(kane, system, seed):
    KM, _ = kane
    ms = system.maggi()
    named = _random_values(seed)
    assert _worst_deviation(ms, KM, named, seed=seed) < 1e-9
    wrong = dict(named, D=named["D"] * 1.5)  # the comparison can fail: another product of inertia
    assert _worst_deviation(ms, KM, named, seed=seed, count=1, anholo_values=wrong) > 1e-4


# --- simulation -------------------------------------------------------------------------------------

def _kane_energy(KM, values):
    """``T + V`` of the KanesMethod model as a numerical function of ``(q, q̇)`` (its speeds are the q̇):
    sympy's kinetic energy of the body, and ``V = m g z_G`` with ``z_G`` the height of G above the contact
    point P (a point of the ground plane)."""
    t = dynamicsymbols._t
    body, N = KM.bodies[0], KM._inertial
    G = body.masscenter
    path, X = [], G
    while X.name != "P":  # G is located from the ellipsoid's centre, located from the contact point P
        X = next(iter(X._pos_dict))
        path.append(X)
    P = path[-1]
    q, u = list(KM.q), list(KM.u)
    T = body.kinetic_energy(N).xreplace({x.diff(t): s for x, s in zip(q, u)})
    g = next(s for s in values if s.name == "g")
    E = (T + body.mass * g * G.pos_from(P).dot(N.z)).xreplace(values)
    qs, us = sp.symbols("q0:5"), sp.symbols("u0:5")
    E = E.xreplace(dict(zip(u, us))).xreplace(dict(zip(q, qs)))
    return sp.lambdify([qs, us], E, modules="numpy")


def _initial_state(system, spin, roll, pitch):
    """A state of C with angular velocity ``spin`` about the body's z axis (no other component), the given
    roll and pitch: the angle rates from the body rates (sympy.physics.mechanics), ẋ, ẏ from the
    constraints (a numpy solve)."""
    from sympy.physics.mechanics import ReferenceFrame
    t = dynamicsymbols._t
    ang = dynamicsymbols("yaw roll pitch")
    N, R = ReferenceFrame("N"), ReferenceFrame("R")
    R.orient_body_fixed(N, ang, "zxy")
    J = R.ang_vel_in(N).to_matrix(R).jacobian([a.diff(t) for a in ang])
    J = J.subs({ang[1]: roll, ang[2]: pitch, ang[0]: 0})
    q0 = np.array([0.0, roll, pitch, 0.0, 0.0])
    qd0 = np.zeros(5)
    qd0[:3] = np.linalg.solve(np.array(J.evalf(), float), [0.0, 0.0, spin])
    vals = {p: float(v) for p, v in system.values.items()}
    A = sp.Matrix([[c.diff(v) for v in system.chart.velocities] for c in system.constraints])
    Av = np.array(A.xreplace(vals).xreplace(dict(zip(system.chart.coordinates, q0))).evalf(), float)
    qd0[3:] = np.linalg.solve(Av[:, 3:], -Av[:, :3] @ qd0[:3])
    return q0, qd0


@pytest.fixture(scope="module")
def compiled(system):
    from anholo.numerics import compile_system, from_system
    return compile_system(from_system(system, "nonholonomic"))


def test_energy_is_conserved_and_the_spin_reverses(kane, system, compiled):
    """Autolev's rattleback sample problem: ω = 5 rad/s about the body's vertical axis, roll 0.5°, pitch
    −0.5°, integrated over 5 s: the KanesMethod energy stays constant (relative drift < 1e-7), the rolling
    constraints hold, and the spin about the vertical reverses (after about 2.6 s)."""
    from anholo.numerics import simulate
    KM, values = kane
    energy = _kane_energy(KM, values)
    q0, qd0 = _initial_state(system, 5.0, np.radians(0.5), np.radians(-0.5))
    traj = simulate(compiled, 5.0, q0, qd0, points=501, progress=False)
    E = np.array([energy(traj.q[:, i], traj.qdot[:, i]) for i in range(traj.t.size)])
    assert np.abs(E - E[0]).max() < 1e-7 * abs(E[0])
    assert traj.constraint_residuals().max() < 1e-8
    yaw_rate = traj.qdot[0]
    assert yaw_rate[0] > 4.9
    reversed_at = traj.t[np.argmax(yaw_rate < 0)]
    assert yaw_rate.min() < -4.0 and 1.0 < reversed_at < 4.0, reversed_at
    assert np.abs(traj.q[1]).max() > 0.1  # it rocks (roll) while reversing
    # the check can fail: the energy of a body with another product of inertia varies along this motion
    other = _kane_energy(KM, {k: (2 * v if k.name == "D" else v) for k, v in values.items()})
    E_other = np.array([other(traj.q[:, i], traj.qdot[:, i]) for i in range(traj.t.size)])
    assert np.abs(E_other - E_other[0]).max() > 1e-4 * abs(E_other[0])


def test_spin_the_other_way_lasts_longer(system, compiled):
    """Spun clockwise seen from above (ω = −5 rad/s) from the same tilt, the rattleback keeps its spin over
    the first 5 s (without dissipation it reverses too, later: after about 11.5 s)."""
    from anholo.numerics import simulate
    q0, qd0 = _initial_state(system, -5.0, np.radians(0.5), np.radians(-0.5))
    traj = simulate(compiled, 5.0, q0, qd0, points=501, progress=False)
    assert traj.qdot[0].max() < 0 and traj.qdot[0].min() < -4.9


def test_cli_nonholonomic_block(kane, system):
    """``anholo analyze rattleback --sections nonholonomic --json``: the block is complete, and its q̈ (read
    back with sympy, the shared subexpressions in order) is KanesMethod's at a point of C."""
    out = io.StringIO()
    assert main(["analyze", "rattleback", "--sections", "nonholonomic", "--json"], out=out) == 0
    block = json.loads(out.getvalue())["nonholonomic"]
    assert block["rank_D"] == 3 and block["integrable"] is False
    for key in ("constraints", "frame", "v_dot", "q_ddot", "multipliers", "cse"):
        assert key in block
    assert set(block["q_ddot"]) == {"yaw", "roll", "pitch", "x", "y"}
    KM, _ = kane
    named = {str(k): float(v) for k, v in system.values.items()}
    (qv, _uv, qdv, qddv, _udv), = kane_points(KM, _by_symbol(KM, named), 1, 7, 0.6)
    env = {k: sp.Float(v, 30) for k, v in named.items()}
    env.update({k: sp.Float(v, 30) for k, v in qv.items()})
    env.update({f"{k}_dot": sp.Float(v, 30) for k, v in qdv.items()})
    ms = system.maggi()
    env.update({v.name: env[f"{c.name}_dot"] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
    for name, text in block["cse"]:
        env[name] = sp.sympify(text, locals=dict(env)).evalf(30)
    for c, text in block["q_ddot"].items():
        got = complex(sp.sympify(text, locals=dict(env)).evalf(30))
        assert abs(got.imag) < 1e-20 and abs(got.real - qddv[c]) < 1e-9 * max(1.0, abs(qddv[c])), c


def test_from_mechanics_file_loads_within_the_limits_and_equals_kanes_method(kane, tmp_path):
    """from_mechanics writes the body's kinetic energy in its axes as a sum of squares, with its square roots
    kept as written (no normal form on input: it would put the sum over one denominator, a Lagrangian past the
    reader's ``expanded_terms`` limit).  The written file reads under the default limits, and its field is
    KanesMethod's at random points of C (with Kane & Levinson's values and with random ones)."""
    from anholo import from_mechanics

    KM, values = kane
    text = from_mechanics(KM, values=values, name="Rattleback").to_toml()
    assert len(text) < 20_000, len(text)
    path = tmp_path / "rattleback_from_mechanics.toml"
    path.write_text(text)
    ms = System.load(str(path)).maggi()
    named = {str(k): float(v) for k, v in values.items()}
    assert _worst_deviation(ms, KM, named, seed=21) < 1e-9
    assert _worst_deviation(ms, KM, _random_values(22), seed=23) < 1e-9

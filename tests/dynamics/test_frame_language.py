"""Constraints written in quasi-velocities, free quasi-velocities chosen by name, names that keep their meaning.

Oracles: the coordinate multiplier method built by hand (tests/oracles.py) with the
constraint rewritten in natural velocities by hand (the sleigh's ``w − aω = 0`` is
``−sin θ ẋ + cos θ ẏ − a θ̇ = 0``); the meaning of a name is checked directly: a
quasi-velocity called ``w`` in the adapted frame is the same function of ``(q, q̇)``
(its coframe row) as ``w`` of the user's frame.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution, point_on_constraints

from anholo import Chart, Frame, Lagrangian, NonholonomicSystem
from anholo.errors import ConstraintError, SystemFileError
from anholo.geometry.tangent import TangentBundle
from anholo.io.systemfile import parse_system
from anholo.system import System

FILE = """
name = "Sleigh in frame language"
coordinates = ["x", "y", "theta"]
parameters = ["m", "I", "a"]
quasi_velocities = ["u", "w", "omega"]
lagrangian = "m*(u^2 + w^2)/2 + I*omega^2/2"
frame = [["cos(theta)", "sin(theta)", "0"], ["-sin(theta)", "cos(theta)", "0"], ["0", "0", "1"]]
constraints = ["w - a*omega"]
"""


def _by_hand(spec):
    x, y, th = spec.coordinates
    xd, yd, thd = spec.velocities
    m, I, a = spec.parameters
    L = m * (xd**2 + yd**2) / 2 + I * thd**2 / 2
    phi = -sp.sin(th) * xd + sp.cos(th) * yd - a * thd
    return L, phi


@pytest.mark.parametrize("seed", (0, 1))
@pytest.mark.parametrize("choice", ({}, {"dependent": ["w"]}, {"free": ["u", "omega"]}, {"dependent": ["omega"]}))
def test_frame_language_constraint_gives_the_sleigh(seed, choice):
    spec = parse_system(FILE)
    system = System.from_spec(spec)
    L, phi = _by_hand(spec)
    assert sp.simplify(system.constraints[0] - phi) == 0
    nh = NonholonomicSystem(system.lagrangian, ["w - a*omega"], **choice)
    pt = point_on_constraints(spec.coordinates, spec.velocities, [phi], spec.parameters, [spec.velocities[1]], seed)
    qdd, lam = nonlinear_constrained_solution(L, spec.coordinates, spec.velocities, [phi], pt)
    acc = nh.field().natural_accelerations()
    np.testing.assert_allclose([float(acc[q].xreplace(pt)) for q in spec.coordinates], qdd, rtol=1e-9, atol=1e-11)
    assert float(nh.field().coordinate_multipliers()[0].xreplace(pt)) == pytest.approx(lam[0], rel=1e-9)


@pytest.mark.parametrize("choice", ({}, {"dependent": ["w"]}, {"free": ["u", "omega"]}))
def test_names_keep_their_meaning_in_the_adapted_frame(choice):
    spec = parse_system(FILE)
    system = System.from_spec(spec)
    base = system.bundle
    nh = NonholonomicSystem(system.lagrangian, ["w - a*omega"], **choice)
    by_name = {v.name: i for i, v in enumerate(base.quasi_velocities)}
    kept = 0
    for i, v in enumerate(nh.bundle.quasi_velocities):
        if v.name in by_name:  # the same function of q_dot as in the user's frame
            j = by_name[v.name]
            assert all(sp.simplify(nh.frame.coframe[i, A] - base.frame.coframe[j, A]) == 0 for A in range(3))
            kept += 1
    assert kept == 2  # u and one of w, omega
    free_names = {v.name for v in nh.free_velocities}
    if choice.get("dependent") == ["w"] or choice.get("free"):
        assert free_names == {"u", "omega"}
        # and the dynamics in those names: u̇ = a ω², (I + m a²) ω̇ = −m a u ω (the sleigh, by hand)
        m, I, a = spec.parameters
        u, om = (v for v in nh.free_velocities)
        ud, omd = nh.field().accelerations
        assert sp.simplify(ud - a * om**2) == 0 and sp.simplify(omd + m * a * u * om / (I + m * a**2)) == 0


def test_unknown_names_are_reported():
    spec = parse_system(FILE)
    system = System.from_spec(spec)
    with pytest.raises(ConstraintError, match="not a quasi-velocity"):
        NonholonomicSystem(system.lagrangian, ["w - a*omega"], free=["u", "nope"])
    # a coordinate's name is the coordinate velocity only in a coordinate frame: here x would have been read as
    # the first quasi-velocity u (and refused as a singular choice, u not being solvable)
    with pytest.raises(ConstraintError, match="'x' is a coordinate, and this system's velocities are the quasi-"):
        NonholonomicSystem(system.lagrangian, ["w - a*omega"], dependent=["x"]).frame
    with pytest.raises(SystemFileError, match="expected an array of 3 names"):
        parse_system(FILE.replace('["u", "w", "omega"]', '["u", "w"]'))
    with pytest.raises(SystemFileError, match="already declared"):
        parse_system(FILE.replace('["u", "w", "omega"]', '["u", "x", "omega"]'))


def test_default_names_stay_positional():
    """With the default names v1..vn the adapted frame's quasi-velocities are labelled v1..vn in order
    (the report says they refer to the adapted frame)."""
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)
    nh = NonholonomicSystem(L, ["z_dot - y*x_dot"])
    assert [v.name for v in nh.bundle.quasi_velocities] == ["v1", "v2", "v3"]
    b = TangentBundle(Frame.coordinate(chart), quasi_velocities=["a1", "a2", "a3"])
    nh2 = NonholonomicSystem(Lagrangian(b, (xd**2 + yd**2 + zd**2) / 2), ["a3 - y*a1"])
    names = [v.name for v in nh2.bundle.quasi_velocities]
    assert "a1" in names or "a2" in names

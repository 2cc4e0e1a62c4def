"""Control inputs on Maggi's route, and a change of chart with inputs (issue #24: every system of the
catalogue simulates through a frame singularity, ``sleigh_with_motor`` included).

Oracle: the motor sleigh in its body velocities written by hand from Newton's laws
(``tests/oracles.py::sleigh_reference``), integrated by ``solve_ivp`` — not anholo's right-hand sides.
"""

import math

import numpy as np
import pytest

from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics import switching as sw
from anholo.numerics.charts import ChartAtlas
from anholo.system import System

from oracles import sleigh_reference

Q0, U0, W0 = [0.1, 0.2, 0.3], 0.5, 0.2
VALUES = dict(m=1.0, I=1.0, a=0.5, c=0.1, k=0.05)  # sleigh_with_motor's [values]
TIMES = np.linspace(0.0, 5.0, 11)


def _natural(th=Q0[2], u=U0, w=W0, a=VALUES["a"]):
    return [u * math.cos(th) - a * w * math.sin(th), u * math.sin(th) + a * w * math.cos(th), w]


@pytest.fixture(scope="module")
def sleigh():
    return System.load("sleigh_with_motor")


@pytest.fixture
def forced(monkeypatch):
    """Change chart at the first look (the motion itself is regular: any chart must give it)."""
    for name in ("FRAME_SWITCH", "START_FACTOR", "BETTER"):
        monkeypatch.setattr(sw, name, 0.0)


def _reference(tau):
    return sleigh_reference(TIMES, Q0, U0, W0, tau=tau, **VALUES)


def test_maggi_route_simulates_inputs(sleigh):
    """Maggi's equations of the sleigh with the motor torque given as an expression in t."""
    compiled = compile_system(sleigh.maggi())
    assert compiled.control_names == ("tau",)
    run = simulate(compiled, (0.0, 5.0), Q0, _natural(), inputs={"tau": "0.3*sin(t)"}, t_eval=TIMES,
                   rtol=1e-11, atol=1e-12)
    ref = _reference(lambda t: 0.3 * math.sin(t))
    assert np.abs(run.q - ref[:3]).max() < 1e-8
    wrong = _reference(lambda t: -0.3 * math.sin(t))  # the torque's sign matters
    assert np.abs(run.q - wrong[:3]).max() > 1e-3


@pytest.mark.parametrize("tau, torque", [("0.3*sin(t)", lambda t: 0.3 * math.sin(t)), (0.2, lambda t: 0.2)])
def test_change_of_chart_keeps_the_inputs(sleigh, forced, tau, torque):
    """The frame chart left at the first look for Maggi's equations: the inputs follow into the new chart."""
    compiled = compile_system(from_system(sleigh, "nonholonomic"))
    run = simulate(compiled, (0.0, 5.0), Q0, _natural(), inputs={"tau": tau}, t_eval=TIMES, rtol=1e-11,
                   atol=1e-12, atlas=ChartAtlas(sleigh))
    assert run.notes and "changed chart" in run.notes[0]
    ref = _reference(torque)
    assert np.abs(run.q - ref[:3]).max() < 1e-8
    # the multiplier of the constraint as written (w − a ω = 0, w the lateral velocity of the centre of
    # mass): the knife edge's lateral force, from Newton's law across the blade m (a ω̇ + u ω) = λ − c a ω
    # (the friction −c (ẋ, ẏ) acts at the centre of mass), with the oracle's body velocities
    m, a, c, k, inertia = (VALUES[x] for x in ("m", "a", "c", "k", "I"))
    u, om = ref[3], ref[4]
    om_dot = (np.array([torque(t) for t in TIMES]) - k * om - m * a * u * om - c * a**2 * om) / (inertia + m * a**2)
    lam = m * (a * om_dot + u * om) + c * a * om
    assert np.abs(run.multipliers[0] - lam).max() < 1e-7
    assert np.abs(run.multipliers[0] - (lam - c * a * om)).max() > 1e-3  # the friction term matters


def test_inputs_reading_the_state_through_the_change_of_chart(sleigh, forced):
    """An input that reads the velocities (a damper on θ̇ and a push along ẋ) is evaluated in the chart in
    use: against the same run without a change of chart."""
    compiled = compile_system(from_system(sleigh, "nonholonomic"))
    inputs = {"tau": "0.3*sin(t) - k*theta_dot + 0.1*x_dot"}
    changed = simulate(compiled, (0.0, 5.0), Q0, _natural(), inputs=inputs, t_eval=TIMES, rtol=1e-11,
                       atol=1e-12, atlas=ChartAtlas(sleigh))
    assert changed.notes
    plain = simulate(compiled, (0.0, 5.0), Q0, _natural(), inputs=inputs, t_eval=TIMES, rtol=1e-11, atol=1e-12)
    assert np.abs(changed.q - plain.q).max() < 1e-8
    assert np.abs(changed.qdot - plain.qdot).max() < 1e-8


def test_python_callables_keep_their_chart(sleigh, forced):
    """A Python callable reads the state of the chart it was written for: no change of chart then."""
    compiled = compile_system(from_system(sleigh, "nonholonomic"))
    run = simulate(compiled, (0.0, 5.0), Q0, _natural(), inputs={"tau": lambda t, y: 0.3 * math.sin(t)},
                   t_eval=TIMES, rtol=1e-11, atol=1e-12, atlas=ChartAtlas(sleigh))
    assert not run.notes
    assert np.abs(run.q - _reference(lambda t: 0.3 * math.sin(t))[:3]).max() < 1e-8

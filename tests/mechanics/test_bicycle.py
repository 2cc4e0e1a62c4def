"""The Whipple bicycle of sympy's test_kane3.py, read by from_mechanics in one call.

Oracle: ``sympy.physics.mechanics.KanesMethod`` on the same objects (the test's own construction,
tests/mechanics_models.py, with the benchmark values of Meijaard et al. (2007)): its
``mass_matrix_full``/``forcing_full`` solved numerically, ``q̈ = d/dt q̇(q, u)``, at random points of C
(the dependent pitch solved from the configuration constraint).  anholo's side is the model's
Lagrangian and constraints through the coordinate multiplier method (tests/mechanics/kane_oracle.py),
which checks the model (T from positions, V, the completed configuration manifold, the rolling
constraints read off the velocities) independently of anholo's own field, and the model's own
multiplier form.

Published values: the benchmark bicycle is self-stable between 4.29 and 6.02 m/s (Meijaard et al.
(2007), Table 2 and Fig. 3): a small lean dies out at 5 m/s and grows at 2 m/s in a simulation of the
model's ODE (``ode_function(route="multipliers")``), which also stays on the constraints.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo import from_mechanics

from mechanics_models import whipple_bicycle
from mechanics.kane_oracle import compare
from mechanics.states import upright_state


@pytest.fixture(scope="module")
def bicycle():
    KM, values = whipple_bicycle()
    return KM, values, from_mechanics(KM, values=values)


@pytest.mark.slow
def test_bicycle_is_one_call_and_completed(bicycle):
    KM, values, model = bicycle
    assert [q.name for q in model.chart.coordinates] == ["q1", "q2", "q5", "q4", "q3", "q6", "x", "y"]
    assert len(model.constraints) == 5  # rear no-slip (2, read off the velocities) + front contact (3)
    assert len(model.holonomic) == 1
    assert not model.has_forces  # gravity is a potential
    # the rear contact moves with WRrad*(q3_dot + q4_dot) along the heading (cos q1, sin q1)
    names = [q.name for q in model.chart.coordinates]
    u = dict(zip(names, model.chart.velocities))
    q1 = model.chart.coordinates[0]
    WRrad = next(p for p in model.chart.parameters if p.name == "WRrad")
    sol = sp.solve([c for c in model.constraints if c.has(u["x"]) or c.has(u["y"])], [u["x"], u["y"]])
    assert sp.simplify(sol[u["x"]] - WRrad * (u["q3"] + u["q4"]) * sp.cos(q1)) == 0
    assert sp.simplify(sol[u["y"]] - WRrad * (u["q3"] + u["q4"]) * sp.sin(q1)) == 0


@pytest.mark.slow
def test_bicycle_accelerations_equal_kanes(bicycle):
    KM, values, model = bicycle
    assert compare(model, KM, values, count=3, seed=1, spread=0.5, route="multipliers") < 1e-9


@pytest.mark.slow
def test_bicycle_multiplier_form_equals_kanes(bicycle):
    """The model's own PyDy-style multiplier form ``M ẋ = F`` (no adapted frame needed) against Kane."""
    KM, values, model = bicycle
    assert compare(model, KM, values, count=2, seed=4, spread=0.5, route="form") < 1e-9


def _upright(model, v, lean):
    """A state on C: rolling straight at speed v with a small lean (pitch from the holonomic constraint)."""
    q0, qd0, names, A, fh = upright_state(model.chart.coordinates, model.chart.velocities, model.holonomic[0],
                                          model.constraints, model._values(None), lean="q2", pitch="q4",
                                          rear_wheel="q3", free=("q2", "q3", "q5"), speed=v, lean_angle=lean)
    return np.concatenate([q0, qd0]), names, A, fh


@pytest.mark.slow
def test_bicycle_is_self_stable_at_5_and_falls_at_2_metres_per_second(bicycle):
    KM, values, model = bicycle
    f = model.ode_function(route="multipliers")
    n = model.chart.dim
    leans = {}
    for v in (5.0, 2.0):
        x0, names, A, fh = _upright(model, v, 0.01)
        sol = solve_ivp(f, (0, 4), x0, rtol=1e-8, atol=1e-10, max_step=0.05)
        assert sol.success
        lean = sol.y[names.index("q2")]
        leans[v] = np.abs(lean[sol.t > 3]).max()
        if v == 5.0:  # on the constraints to the integrator's accuracy
            end = sol.y[:, -1]
            assert np.abs(np.array(A(*end[:n]), float) @ end[n:]).max() < 1e-8
            assert abs(fh(*end[:n])) < 1e-8
    assert leans[5.0] < 0.01 and leans[2.0] > 0.1


@pytest.mark.slow
def test_bicycle_with_a_steer_torque_equals_kanes():
    """A steer torque between frame and fork (a load, not a potential) reaches the generalized forces:
    the model's L, constraints and forces give KanesMethod's accelerations with the same loads, and
    without the forces they do not."""
    KM, values = whipple_bicycle(steer_torque=True)
    model = from_mechanics(KM, values=values)
    assert model.has_forces
    assert compare(model, KM, values, count=2, seed=3, spread=0.5, route="multipliers") < 1e-9
    unforced = from_mechanics(whipple_bicycle()[0], values=values)
    assert compare(unforced, KM, values, count=2, seed=3, spread=0.5, route="multipliers") > 1e-6

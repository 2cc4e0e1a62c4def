"""The Whipple bicycle of sympy's test_kane3.py, read by from_mechanics in one call.

Oracle: ``sympy.physics.mechanics.KanesMethod`` on the same objects (the test's own construction,
tests/mechanics_models.py, with the benchmark values of Meijaard et al. (2007)): its
``mass_matrix_full``/``forcing_full`` solved numerically, ``q̈ = d/dt q̇(q, u)``, at random points of C
(the dependent pitch solved from the configuration constraint).  anholo's side is the model's
Lagrangian and constraints through the coordinate multiplier method (tests/mechanics/kane_oracle.py),
which checks the model (T from positions, V, the completed configuration manifold, the rolling
constraints read off the velocities) independently of anholo's own field.
"""

from __future__ import annotations

import pytest
import sympy as sp

from anholo import from_mechanics

from mechanics_models import whipple_bicycle
from mechanics.kane_oracle import compare


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

"""Batch runs reproduce single runs (oracle: :func:`simulate` called one run at a time)."""

import io

import numpy as np
import pytest

from anholo.errors import SimulationError
from anholo.numerics import simulate
from anholo.numerics.batch import simulate_batch

from numerics_cases import compiled


def test_parameter_sweep_in_processes_matches_serial_runs(monkeypatch):
    monkeypatch.setenv("ANHOLO_CODEGEN", "python")  # the per-run route (C: the compiled loop, equal to tolerance)
    c = compiled("spherical_pendulum", "euler-lagrange")
    sweep = [{"g": g} for g in (1.0, 4.0, 9.81, 20.0)]
    state = ([0.8, 0.0], [0.0, 1.0])
    stream = io.StringIO()
    batch = simulate_batch(c, 2.0, [state], sweep, workers=2, points=5, progress=True, progress_stream=stream)
    for params, traj in zip(sweep, batch):
        single = simulate(c, 2.0, *state, parameters=params, points=5)
        np.testing.assert_array_equal(traj.states, single.states)
        assert traj.parameters["g"] == params["g"]
    assert "batch: 4/4 runs" in stream.getvalue()
    # different g, different motions
    assert len({round(float(t.q[0, -1]), 8) for t in batch}) == 4


def test_initial_state_sweep_serial():
    c = compiled("nonholonomic_particle", "nonholonomic")
    states = [([0, y, 0], [1, 0.3, y]) for y in (0.0, 0.5, 1.0)]
    runs = simulate_batch(c, 1.0, states, workers=1, points=3)
    assert [float(r.q[1, 0]) for r in runs] == [0.0, 0.5, 1.0]


def test_batch_errors():
    c = compiled("nonholonomic_particle", "nonholonomic")
    with pytest.raises(SimulationError, match="2 initial states but 3 parameter sets"):
        simulate_batch(c, 1.0, [([0, 0, 0], [1, 0, 0])] * 2, [{}] * 3)
    with pytest.raises(SimulationError, match="workers must be at least 1"):
        simulate_batch(c, 1.0, [([0, 0, 0], [1, 0, 0])], workers=0)

"""The Whipple bicycle written with the pitch-rate constraint (the bundled whipple_bicycle_pitch_rate).

The holonomic constraint of whipple_bicycle (the front wheel touches the ground) is replaced by its time
derivative among the velocity constraints, its square root explicit, and the file has no ``[values]``.

Oracles:
* ``sympy.physics.mechanics.KanesMethod`` on sympy's test_kane3.py bicycle built with the same pitch-rate
  velocity constraint (tests/mechanics_models.py, ``pitch_rate=True``): its accelerations at random points
  with random parameter values (tests/mechanics/kane_oracle.py, no anholo code);
* the bundled whipple_bicycle (holonomic constraint given as such) at the same (q, q̇) on the surface where
  the front wheel touches the ground: the two fields must agree there.
"""

from __future__ import annotations

import io
import json
import random

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

from anholo.cli import main
from anholo.system import System

from mechanics_models import whipple_bicycle
from mechanics.kane_oracle import kane_points

NAME = "whipple_bicycle_pitch_rate"
#: sympy's coordinates and speeds (kd: q_i' = u_i) → the file's coordinates; u3, u6 are the wheel rates
#: relative to frame and fork (the file's rear_wheel_dot, front_wheel_dot).
COORDINATES = {"q1": "yaw", "q2": "lean", "q4": "pitch", "q5": "steer"}
SPEEDS = {"u1": "yaw", "u2": "lean", "u4": "pitch", "u5": "steer", "u3": "rear_wheel", "u6": "front_wheel"}


@pytest.fixture(scope="module")
def kane():
    return whipple_bicycle(pitch_rate=True)


@pytest.fixture(scope="module")
def pitch_rate():
    s = System.load(NAME)
    return s, s.maggi()


def _random_parameters(values, seed):
    """The benchmark values, each scaled by a random factor in (0.8, 1.2)."""
    rng = random.Random(seed)
    return {k: v * rng.uniform(0.8, 1.2) for k, v in values.items()}


def _evaluate(s, ms, q, qdot, params):
    """anholo's q̈ (the file's coordinate order) at (q, q̇) by name, parameters by name."""
    vals = {**params, **q, **{f"{c}_dot": v for c, v in qdot.items()}}
    vals.update({v.name: qdot[c.name] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
    return dict(zip([c.name for c in s.chart.coordinates], ms.evaluate(vals)["q_ddot"]))


def test_file_has_no_values_and_the_free_velocities_of_kane(pitch_rate):
    s, ms = pitch_rate
    assert not s.values and not s.holonomic and len(s.constraints) == 5
    assert any("sqrt" in str(c) for c in s.constraints)
    assert [c.name for c in ms.free_coordinates] == ["lean", "steer", "rear_wheel"]
    assert ms.distribution_is_integrable() is False


@pytest.mark.slow
def test_accelerations_equal_kanes_method_at_random_parameters(kane, pitch_rate):
    KM, benchmark = kane
    s, ms = pitch_rate
    worst, perturbed = 0.0, 0.0
    for seed in (1, 2):
        values = _random_parameters(benchmark, seed)
        params = {str(k): v for k, v in values.items()}
        for qv, uv, qd, qdd, ud in kane_points(KM, values, 2, seed, spread=0.6):
            rng = random.Random(seed)
            q = {COORDINATES[k]: v for k, v in qv.items()}
            q.update({c: rng.uniform(-3, 3) for c in ("rear_wheel", "front_wheel", "x", "y")})
            qdot = {SPEEDS[k]: v for k, v in uv.items()}
            expect = {COORDINATES[k]: v for k, v in qdd.items()}
            expect.update(rear_wheel=ud["u3"], front_wheel=ud["u6"])
            got = _evaluate(s, ms, q, qdot, params)
            worst = max(worst, max(abs(got[c] - v) / max(1.0, abs(v)) for c, v in expect.items()))
            wrong = _evaluate(s, ms, q, qdot, {**params, "mfork": params["mfork"] * 1.1})  # the check can fail
            perturbed = max(perturbed, max(abs(wrong[c] - v) / max(1.0, abs(v)) for c, v in expect.items()))
    assert worst < 1e-9, worst
    assert perturbed > 1e-4, perturbed


def test_field_equals_the_bundled_bicycle_on_the_contact_surface(pitch_rate):
    """At points where the front wheel touches the ground (the pitch solved from whipple_bicycle's holonomic
    constraint), with the same free velocities and random parameter values, both files give the same q̈."""
    s, ms = pitch_rate
    b = System.load("whipple_bicycle")
    mb = b.maggi()
    q_syms = b.chart.coordinates
    names = [c.name for c in q_syms]
    for seed in (3, 4):
        params = {str(k): float(v) for k, v in _random_parameters(b.values, seed).items()}
        f = sp.lambdify(q_syms, b.holonomic[0].xreplace({p: params[p.name] for p in b.chart.parameters}))
        rng = random.Random(seed)
        q = {c: rng.uniform(-0.5, 0.5) for c in names}

        def height(x):
            return f(*[x if c == "pitch" else q[c] for c in names])

        q["pitch"] = brentq(height, -0.6, 0.6)
        free = {c: rng.uniform(-1, 1) for c in ("lean", "steer", "rear_wheel")}
        qdot = dict(free)
        for c in ("yaw", "pitch", "front_wheel", "x", "y"):
            qdot[c] = 0.0  # not used: q̈ depends on q and the free velocities only
        got = _evaluate(s, ms, q, qdot, params)
        ref = _evaluate(b, mb, q, qdot, params)
        scale = max(1.0, max(abs(v) for v in ref.values()))
        assert max(abs(got[c] - ref[c]) for c in names) < 1e-9 * scale, (got, ref)
        # another front-wheel radius in one of them breaks the agreement (the check can fail)
        wrong = _evaluate(s, ms, q, qdot, {**params, "WFrad": params["WFrad"] * 1.05})
        assert max(abs(wrong[c] - ref[c]) for c in names) > 1e-4 * scale


def test_cli_linearize_with_set_values_gives_the_published_matrix():
    """``anholo linearize`` with the benchmark values given by --set (the file has none): the published
    lean/steer state matrix of Meijaard et al. (2007) (as sympy's test_kane3.py holds it)."""
    from mechanics.test_bicycle_maggi import published

    benchmark = System.load("whipple_bicycle").values
    sets = [a for k, v in benchmark.items() for a in ("--set", f"{k}={float(v)!r}")]
    out = io.StringIO()
    assert main(["linearize", NAME, "--states", "lean,steer,v1,v2", "--sweep", "v3=0:33.333333333333336:3",
                 "--json", *sets], out=out) == 0
    data = json.loads(out.getvalue())
    for v3, result in zip(data["values"], data["results"]):
        assert np.abs(np.array(result["A"]) - published(v3 * 0.3)).max() < 1e-8
    assert np.abs(np.array(data["results"][1]["A"]) - published(6.0)).max() > 1e-3  # the check can fail


def test_cli_analyze_json_gives_the_nonholonomic_block():
    out = io.StringIO()
    assert main(["analyze", NAME, "--sections", "nonholonomic", "--json"], out=out) == 0
    block = json.loads(out.getvalue())["nonholonomic"]
    assert "error" not in block
    assert block["rank_D"] == 3 and block["integrable"] is False
    assert block["free"] == ["lean", "steer", "rear_wheel"]
    assert set(block["q_ddot"]) == {"lean", "steer", "rear_wheel", "yaw", "pitch", "front_wheel", "x", "y"}
    assert block["cse"] and all("nan" not in text and "zoo" not in text for _, text in block["cse"])

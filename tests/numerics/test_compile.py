"""The compiled right-hand sides against hand-written numpy right-hand sides.

Oracle: natural accelerations written by hand from the coordinate equations
(THEORY §9 and §10 for the particle and the sphere on the turntable; elementary
mechanics for the others).  The library's state is frame-dependent, so the
comparison is made in natural terms at random states s: the first n rates must
equal ``q̇(s)``, and ``q̈ = Dq̇(s)·F(s)`` (a central difference along F) must equal
the hand-written ``q̈(q, q̇)``.
"""

import math

import numpy as np
import pytest

from anholo.errors import MissingParameterError, SimulationError
from anholo.numerics import FirstOrderSystem, compile_system, from_system
from anholo.system import System

from numerics_cases import compiled


def particle(q, u, p):  # THEORY §9: v̇1 = −y v1 v2/(1+y²), z = y x
    x, y, z = q
    xd, yd, zd = u
    xdd = -y * xd * yd / (1 + y**2)
    return np.array([xdd, 0.0, yd * xd + y * xdd])


def vertical_disk(q, u, p):  # θ̈ = φ̈ = 0, ẋ = R cos θ φ̇, ẏ = R sin θ φ̇
    x, y, th, ph = q
    _, _, thd, phd = u
    R = p["R"]
    return np.array([-R * math.sin(th) * thd * phd, R * math.cos(th) * thd * phd, 0.0, 0.0])


def sleigh(q, u, p):  # forward speed s, ω: ṡ = a ω², ω̇ = −m a s ω/(I + m a²)
    x, y, th = q
    xd, yd, w = u
    m, I, a = p["m"], p["I"], p["a"]
    s = math.cos(th) * xd + math.sin(th) * yd
    sd, wd = a * w**2, -m * a * s * w / (I + m * a**2)
    xdd = sd * math.cos(th) - s * w * math.sin(th) - a * wd * math.sin(th) - a * w**2 * math.cos(th)
    ydd = sd * math.sin(th) + s * w * math.cos(th) + a * wd * math.cos(th) - a * w**2 * math.sin(th)
    return np.array([xdd, ydd, wd])


def spherical_pendulum(q, u, p):
    th, ph = q
    thd, phd = u
    g, l = p["g"], p["l"]
    return np.array([math.sin(th) * math.cos(th) * phd**2 - g / l * math.sin(th),
                     -2 * thd * phd * math.cos(th) / math.sin(th)])


def turntable_centre(q, u, p):  # THEORY §10: ẍ = −μ ẏ, ÿ = μ ẋ, μ = k²Ω/(a²+k²)
    mu = p["k"] ** 2 * p["Omega"] / (p["a"] ** 2 + p["k"] ** 2)
    return np.array([-mu * u[1], mu * u[0]])


CASES = [
    ("nonholonomic_particle", "nonholonomic", particle, None),
    ("vertical_rolling_disk", "nonholonomic", vertical_disk, None),
    ("chaplygin_sleigh", "nonholonomic", sleigh, None),
    ("spherical_pendulum", "euler-lagrange", spherical_pendulum, None),
    ("sphere_on_turntable", "nonholonomic", turntable_centre, 2),  # only x, y have a closed form
]


def natural_acceleration(c, s, p, h=1e-5):
    rhs = c.rhs(p)
    F = rhs(0.0, s)
    up = c.natural_velocities((s + h * F)[:, None], p)[:, 0]
    dn = c.natural_velocities((s - h * F)[:, None], p)[:, 0]
    return F, (up - dn) / (2 * h)


@pytest.mark.parametrize("name, field, oracle, count", CASES, ids=[c[0] for c in CASES])
def test_rhs_matches_hand_written(name, field, oracle, count):
    c = compiled(name, field)
    rng = np.random.default_rng(7)
    pvals = dict(zip(c.parameters, c.parameter_vector()))
    for _ in range(5):
        s = rng.uniform(-1.2, 1.2, c.dim)
        s[: c.n] = rng.uniform(0.3, 1.2, c.n)  # away from sin θ = 0 (pendulum, Euler angles)
        p = c.parameter_vector()
        F, qdd = natural_acceleration(c, s, p)
        u = c.natural_velocities(s[:, None], p)[:, 0]
        np.testing.assert_allclose(F[: c.n], u, rtol=1e-13, atol=1e-13)
        expected = oracle(s[: c.n], u, pvals)
        k = count or c.n
        np.testing.assert_allclose(qdd[:k], expected[:k], rtol=1e-6, atol=1e-7)


def test_parameters_are_values_not_rederived():
    """One compiled pendulum, two values of g: accelerations scale as the hand-written ones."""
    c = compiled("spherical_pendulum", "euler-lagrange")
    s = np.array([0.7, 0.1, 0.3, 0.9])
    for g in (9.81, 1.62):
        p = c.parameter_vector({"g": g})
        rates = c.rhs(p)(0.0, s)
        expected = spherical_pendulum(s[:2], s[2:], {"g": g, "l": 1.0})
        np.testing.assert_allclose(rates[2:], expected, rtol=1e-13)


def test_missing_and_unknown_parameters():
    system = System.load("two_wheeled_carriage")
    ode = from_system(system, "nonholonomic")
    bare = FirstOrderSystem(ode.kind, ode.coordinates, ode.velocities, ode.state, ode.rates,
                            ode.natural_velocities, ode.initial_state, ode.lagrangian, ode.constraints)
    c = compile_system(bare)
    with pytest.raises(MissingParameterError, match="no value for the parameter"):
        c.parameter_vector()
    with pytest.raises(MissingParameterError, match="'mass' is not a parameter"):
        compiled("two_wheeled_carriage", "nonholonomic").parameter_vector({"mass": 1})


def test_undefined_functions_are_refused():
    with pytest.raises(SimulationError, match="undefined functions"):
        compile_system(from_system(System.load("crampin_mestdag_class"), "nonholonomic"))


def test_compiled_system_pickles_as_source():
    import pickle

    c = compiled("chaplygin_sleigh", "nonholonomic")
    d = pickle.loads(pickle.dumps(c))
    s = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    p = c.parameter_vector()
    np.testing.assert_array_equal(c.rhs(p)(0.0, s), d.rhs(p)(0.0, s))
    assert d.ode is None and d.source == c.source


def test_regular_frame_for_rolling_disk():
    """Dependent velocities with a constant block determinant: the frame has no 1/cos θ."""
    from anholo.numerics import regular_nonholonomic

    nh = regular_nonholonomic(System.load("vertical_rolling_disk"))
    X = nh.frame.vectors
    assert all(not any(d.is_Pow and d.exp < 0 for d in e.atoms(__import__("sympy").Pow)) for e in X)

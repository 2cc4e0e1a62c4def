"""``simulate(inputs={name: expression})``: an input written as a string or a SymPy expression gives the
same run as the same law written as a Python callable of (t, state), and a different law a different run."""

import numpy as np
import pytest
import sympy as sp

from anholo.errors import InputError
from anholo.numerics import compile_system, from_system, simulate
from anholo.system import System


@pytest.fixture(scope="module")
def sleigh():
    return compile_system(from_system(System.load("sleigh_with_motor"), "nonholonomic"))


def _callable(c, k):
    a = c.parameter_vector()[list(c.parameters).index("a")]

    def tau(t, y):  # state (x, y, theta, u, w) with theta_dot = w / a
        return 0.2 * np.sin(t) - k * y[4] / a
    return tau


def test_string_and_sympy_inputs_equal_the_callable(sleigh):
    k = float(sleigh.parameter_vector()[list(sleigh.parameters).index("k")])
    q0, v0 = [0.0, 0.0, 0.0], [0.4, 0.1, 0.2]  # on D: y_dot = a theta_dot (a = 0.5)
    ref = simulate(sleigh, 3.0, q0, v0, points=31, rtol=1e-11, atol=1e-12, inputs={"tau": _callable(sleigh, k)})
    text = simulate(sleigh, 3.0, q0, v0, points=31, rtol=1e-11, atol=1e-12,
                    inputs={"tau": "0.2*sin(t) - k*theta_dot"})
    t, kk, thd = sp.symbols("t k theta_dot", real=True)
    expr = simulate(sleigh, 3.0, q0, v0, points=31, rtol=1e-11, atol=1e-12,
                    inputs={"tau": sp.Rational(1, 5) * sp.sin(t) - kk * thd})
    assert np.max(np.abs(text.states - ref.states)) < 1e-9 and np.max(np.abs(expr.states - ref.states)) < 1e-9
    other = simulate(sleigh, 3.0, q0, v0, points=31, rtol=1e-11, atol=1e-12,
                     inputs={"tau": "0.2*sin(t) + k*theta_dot"})
    assert np.max(np.abs(other.states - ref.states)) > 1e-4


def test_an_input_in_an_unknown_name_is_one_line(sleigh):
    with pytest.raises(InputError) as exc:
        simulate(sleigh, 1.0, [0, 0, 0], [1, 0, 0], inputs={"tau": "0.2*sin(s)"})
    assert "\n" not in str(exc.value) and "'s'" in str(exc.value)

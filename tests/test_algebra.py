"""The normal forms of ``anholo.algebra`` against sympy's own polynomial arithmetic."""

import random

import pytest
import sympy as sp

from anholo.algebra import reduce_if_cheap, tidy
from anholo.algebra.simplify import _remainder_in_sine


@pytest.mark.parametrize("seed", range(5))
def test_remainder_in_sine_equals_polynomial_remainder(seed):
    S, C, x, y = sp.symbols("S C x y")
    rng = random.Random(seed)
    terms = [rng.randint(-3, 3) * S**rng.randint(0, 7) * C**rng.randint(0, 5) * x**rng.randint(0, 2) * y**rng.randint(0, 1)
             for _ in range(6)]
    p = sp.expand(sp.Add(*terms))
    got = _remainder_in_sine(p, S, C)
    assert sp.expand(got - sp.rem(p, S**2 + C**2 - 1, S)) == 0
    assert sp.degree(got, S) <= 1


@pytest.mark.parametrize("expr, expected", [
    ("m*(cos(t)**2 + sin(t)**2)*v**2/2", "m*v**2/2"),
    ("(sin(t)**4 - cos(t)**4)/(sin(t)**2 - cos(t)**2)", "1"),
    ("sin(t)**3*cos(t) + sin(t)*cos(t)**3 - sin(t)*cos(t)", "0"),
    ("tan(t)*cos(t) - sin(t)", "0"),
    ("(x + y)**3 - x**3", "3*x**2*y + 3*x*y**2 + y**3"),
])
def test_tidy_reduces_pythagorean_identities(expr, expected):
    assert tidy(sp.sympify(expr)) == sp.sympify(expected)


def test_reduce_if_cheap_expands_polynomials_like_cancel():
    x, y, t = sp.symbols("x y t")
    e = (x + y * sp.sin(t)) ** 2 - x * (x - 1)
    assert sp.expand(reduce_if_cheap(e) - sp.cancel(e)) == 0
    assert reduce_if_cheap(e) == sp.expand(e)

"""The catalogue's ``[units]`` tables: every example with physical quantities declares them, and the declared
units make its equations dimensionally homogeneous.

Oracle: a scaling test independent of anholo's plotting and unit display.  Every unit is read as a power
product of the base dimensions length, mass and time (``m``, ``kg``, ``s``; ``rad`` is dimensionless; ``N`` and
``J`` are ``kg*m/s^2`` and ``kg*m^2/s^2``); scaling each base dimension by a random factor λ scales every
quantity by ``λ^(its exponents)`` (a velocity ``q_dot`` by its coordinate's unit per second, the time by s), and
an expression is homogeneous of dimension D exactly when it scales by ``λ^D`` at every point.  A Lagrangian
must scale like an energy (or an energy per unit mass, for the catalogue's unit-mass particles), each
constraint homogeneously, a force ``Q_A`` times its coordinate like the Lagrangian, a dissipation function like
the Lagrangian per unit of time; a velocity whose unit is declared must have its coordinate's unit per
second.  A wrong unit fails (checked below).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp

from anholo.examples import list_examples, resolve_system

BASE = {"m": (1, 0, 0), "kg": (0, 1, 0), "s": (0, 0, 1), "rad": (0, 0, 0), "1": (0, 0, 0),
        "N": (1, 1, -2), "J": (2, 1, -2)}
ENERGY = (2, 1, -2)

#: Examples without [units], and why: mathematical models whose equations are homogeneous in no choice of
#: physical units (they fix a unit length, or add quantities of different dimensions).
DIMENSIONLESS = {
    "nonholonomic_particle": "z_dot = y*x_dot: homogeneous only with a unit length absorbed (Heisenberg model)",
    "conformal_constraint": "V = (x^2 + y^2) + 1/(x^2 + y^2) adds a length^2 and a length^-2",
    "nonhomogeneous_counterexample": "z_dot = x_dot^2 + y_dot adds a velocity and its square",
    "darboux_4d": "a normal form of a one-form on R^4, no physical model",
    "crampin_mestdag_class": "arbitrary functions A_i(r2) of unstated dimension",
}
#: Forces with a unit amplitude left implicit in the file (the check of their dimension is skipped).
IMPLICIT_AMPLITUDE = {("tilted_knife_edge", "theta"): "the torque cos(w*t) has the amplitude 1 N*m"}


def dimension(unit: str) -> np.ndarray:
    """The exponents (length, mass, time) of a unit such as ``kg*m^2/s``, ``m/s^2``, ``1/s``, ``N*m``."""
    total = np.zeros(3)
    text = unit.replace(" ", "").replace("**", "^")
    for k, part in enumerate(re.split(r"(?=[*/])", text)):
        sign = -1 if part.startswith("/") else 1
        part = part.lstrip("*/")
        name, _, power = part.partition("^")
        if name not in BASE:
            raise AssertionError(f"unit {unit!r}: {name!r} is not one of {sorted(BASE)}")
        total += sign * float(power or 1) * np.array(BASE[name])
    return total


def _scales(spec) -> dict:
    """Symbol → exponents, for every name of the file (undeclared names are dimensionless)."""
    units = dict(spec.units)
    T = dimension(units.get("t", "s")) if "t" in units else np.array([0, 0, 1.0])
    out = {}
    names = [c for c in spec.coordinates] + list(spec.parameters) + list(spec.inputs) + \
        list(spec.quasi_velocities or ())
    for s in names:
        out[s.name] = dimension(units[s.name]) if s.name in units else np.zeros(3)
    for c in spec.coordinates:
        out[f"{c.name}_dot"] = dimension(units[f"{c.name}_dot"]) if f"{c.name}_dot" in units else \
            out[c.name] - T
    if spec.time is not None:
        out[spec.time.name] = T
    return out


def _scaling(expr, scales: dict, rng) -> np.ndarray | None:
    """D with ``expr(λ-scaled point) = λ^D expr(point)`` at random points and factors, or None if none does."""
    expr = sp.sympify(expr)
    if expr == 0:
        return np.zeros(3) * np.nan
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    for s in symbols:
        assert s.name in scales, f"{s.name} has no dimension"

    def value(point, lam):
        sub = {s: sp.Float(point[s] * float(np.prod(lam ** scales[s.name])), 30) for s in symbols}
        return complex(expr.xreplace(sub).evalf(30))

    found = None
    for _ in range(3):
        point = {s: rng.uniform(0.3, 1.2) for s in symbols}
        base = value(point, np.ones(3))
        if abs(base) < 1e-12:
            continue
        D = np.array([np.log(abs(value(point, np.where(np.arange(3) == k, 2.0, 1.0)) / base)) / np.log(2.0)
                      for k in range(3)])
        lam = rng.uniform(0.5, 3.0, 3)
        predicted = base * float(np.prod(lam ** D))
        if not np.isclose(value(point, lam), predicted, rtol=1e-9, atol=0):
            return None
        if found is not None and not np.allclose(D, found, atol=1e-9):
            return None
        found = D
    return found


def _declares_units(name: str) -> bool:
    return bool(resolve_system(name).units)


TOML_EXAMPLES = [name for name, _ in list_examples() if not name.startswith("n_trailer")]


@pytest.mark.parametrize("name", TOML_EXAMPLES)
def test_examples_declare_units_that_make_their_equations_homogeneous(name):
    spec = resolve_system(name)
    if name in DIMENSIONLESS:
        assert not spec.units, f"{name} is listed as dimensionless but declares [units]"
        return
    assert spec.units, f"{name} has physical quantities but no [units] table"
    assert "t" in spec.units or (spec.time is not None and spec.time.name in spec.units)
    for c in spec.coordinates:
        assert c.name in spec.units, f"{name}: no unit for the coordinate {c.name}"
    rng = np.random.default_rng(3)
    scales = _scales(spec)
    big = False
    if not big:
        D = _scaling(spec.lagrangian, scales, rng)
        assert D is not None, f"{name}: the Lagrangian is not homogeneous in the declared units"
        assert np.allclose(D, ENERGY) or np.allclose(D, np.array(ENERGY) - [0, 1, 0]), (name, D)
        for k, f in enumerate(spec.constraints):
            assert _scaling(f, scales, rng) is not None, f"{name}: constraints[{k}] is not homogeneous"
        for k, f in enumerate(spec.holonomic):
            assert _scaling(f, scales, rng) is not None, f"{name}: holonomic[{k}] is not homogeneous"
        for c, Q in zip(spec.coordinates, spec.forces or ()):
            if Q != 0 and (name, c.name) not in IMPLICIT_AMPLITUDE:
                DQ = _scaling(Q, scales, rng)
                assert DQ is not None and np.allclose(DQ + scales[c.name], D), (name, c, DQ)
        if spec.dissipation is not None:
            assert np.allclose(_scaling(spec.dissipation, scales, rng), D - [0, 0, 1]), name
    for key, unit in spec.units.items():  # a declared velocity: its coordinate's unit per unit of time
        if key.endswith("_dot") and key[:-4] in spec.units:
            assert np.allclose(dimension(unit), dimension(spec.units[key[:-4]]) - [0, 0, 1]), key
    for q, expr in spec.quantities.items():
        if q in spec.units and not big:
            assert np.allclose(_scaling(expr, scales, rng), dimension(spec.units[q])), q


def test_the_scaling_test_can_fail():
    """A wrong unit is caught: the vertical rolling disk with its radius declared in kg."""
    import dataclasses

    spec = resolve_system("vertical_rolling_disk")
    rng = np.random.default_rng(0)
    assert _scaling(spec.constraints[0], _scales(spec), rng) is not None
    wrong = dataclasses.replace(spec, units={**spec.units, "R": "kg"})
    assert _scaling(wrong.constraints[0], _scales(wrong), rng) is None
    assert np.allclose(dimension("kg*m^2/s^2"), ENERGY) and np.allclose(dimension("N*m"), ENERGY)
    assert np.allclose(dimension("1/s^2"), [0, 0, -2])

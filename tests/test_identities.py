"""Identities found at random points (anholo.algebra.identities).

Oracles: each identity the pass reports is checked by sympy's ``simplify`` of the difference (the
definitions written out); programs before and after the pass are evaluated by numpy at random points and
must agree; the pass must not report the non-identities that agree on part of the space (``sqrt(x²) = x``
for x > 0, ``|x| = x``) or that differ only far beyond double precision.
"""

from __future__ import annotations

import random

import numpy as np
import sympy as sp

from anholo.algebra.codegen import operation_count
from anholo.algebra.engine import se, to_engine
from anholo.algebra.identities import hidden_identities
from anholo.algebra.program import Program
from anholo.dynamics.maggi_field import _Names, global_cse

x, y, z = (se.Symbol(s) for s in "xyz")
h = [se.Symbol(f"h{i}") for i in range(12)]


def _written_out(pairs, e):
    """``e`` with the definitions substituted (sympy), for the symbolic oracle."""
    env = {}
    for a, b in pairs:
        env[a] = b.xreplace(env)
    return sp.sympify(str(e.xreplace(env)))


def test_identities_found_are_true():
    pairs = [
        (h[0], se.sin(x) ** 2),
        (h[1], se.cos(x) ** 2),
        (h[2], h[0] + h[1]),                                   # 1
        (h[3], x * se.cos(y) + z * se.sin(y)),
        (h[4], -z * se.sin(y) - x * se.cos(y)),                # −h3
        (h[5], (x * se.cos(y)) * 2 + 2 * z * se.sin(y)),       # 2·h3
        (h[6], h[2] * y - y),                                  # 0
        (h[7], se.cosh(y) ** 2 * z - se.sinh(y) ** 2 * z),       # z
        (h[8], se.sin(2 * x) - 2 * se.sin(x) * se.cos(x)),     # 0
        (h[9], (x + y) ** 2 - x ** 2 - 2 * x * y),             # y²: no earlier name has it
        (h[10], (se.exp(x) + 1) ** 2 - se.exp(2 * x) - 2 * se.exp(x) - 1),  # 0 (symengine writes exp as E**x)
    ]
    found = hidden_identities([x, y, z], pairs)
    assert found == {h[2]: 1, h[4]: -h[3], h[5]: 2 * h[3], h[6]: 0, h[7]: z, h[8]: 0, h[10]: 0}
    defs = dict(pairs)
    for name, value in found.items():
        assert sp.simplify(_written_out(pairs, defs[name]) - _written_out(pairs, value)) == 0, name


def test_non_identities_are_not_reported():
    """Opaque definitions (roots, Abs) get their own random values, so a relation that holds on one branch or
    one side of a kink is never taken for an identity; a difference of 1e-25 is seen."""
    pairs = [
        (h[0], se.sqrt(x ** 2)),            # |x|, not x
        (h[1], h[0] - x),
        (h[2], se.Abs(y) * se.Abs(y)),      # y² in fact, but Abs is opaque
        (h[3], h[2] - y ** 2),
        (h[4], se.sin(x) ** 2 + se.cos(x) ** 2 + se.Rational(1, 10 ** 25) * y),
        (h[5], x * y + se.Rational(1, 10 ** 25)),
        (h[6], y * x),
    ]
    assert hidden_identities([x, y, z], pairs) == {}


def test_global_cse_with_identities_keeps_the_values_and_removes_work():
    X = [se.Symbol(f"X{i}") for i in range(2)]
    pairs = [(h[0], se.cos(z) * x + se.sin(z) * y), (h[1], -se.sin(z) * x + se.cos(z) * y),
             (h[2], h[0] * se.cos(z) - h[1] * se.sin(z)),           # x: a rotation and its inverse
             (h[3], (h[2] - x) * se.exp(y) + X[0] * h[0]),
             (h[4], h[3] * X[1] + h[2] ** 2)]
    outputs = [h[4], h[3] - h[2]]
    args = (x, y, z, *X)
    before = Program(args, tuple(pairs), tuple(outputs))
    fresh = _Names([str(a) for a in args] + [str(a) for a, _ in pairs], "g")
    after = global_cse(args, pairs, outputs, fresh)
    plain = global_cse(args, pairs, outputs, _Names([str(a) for a in args] + [str(a) for a, _ in pairs], "g"),
                       identities=False)
    rng = random.Random(3)
    for _ in range(4):
        pt = {str(a): rng.uniform(-2, 2) for a in args}
        a, b = (np.array(p.evaluate(pt)).real for p in (before, after))
        assert np.allclose(a, b, rtol=1e-13, atol=1e-13)
    assert operation_count(after)["total"] < operation_count(plain)["total"]


def test_bicycle_field_has_no_hidden_identity_left_and_equals_the_program_without_the_pass():
    """The kept field of the Whipple bicycle: no identity the pass could find is left in it, and it gives the
    numbers of the program formed with the pass off (the sweeps are the same) at random states."""
    from anholo import System
    from anholo.dynamics import maggi_field

    ms = System.load("whipple_bicycle").maggi()
    prog = maggi_field.field_program(ms)
    assert hidden_identities(prog.args, prog.pairs) == {}
    original = maggi_field.global_cse
    try:
        maggi_field.global_cse = lambda *a, **k: original(*a, **{**k, "identities": False})
        plain = maggi_field.field_program(ms)
    finally:
        maggi_field.global_cse = original
    assert operation_count(prog)["total"] < operation_count(plain)["total"]
    values = {str(k): float(v) for k, v in System.load("whipple_bicycle").values.items()}
    rng = random.Random(11)
    for _ in range(3):
        pt = {str(a): rng.uniform(-0.5, 0.5) for a in prog.args}
        pt.update({k: v * rng.uniform(0.9, 1.1) for k, v in values.items() if k in pt})
        a, b = (np.array(p.evaluate(pt)).real for p in (prog, plain))
        assert np.abs(a - b).max() < 1e-10 * max(1.0, np.abs(a).max())


def test_meromorphic_functions_of_sympy_round_trip():
    """sympy expressions converted by the engine keep the functions the pass treats as meromorphic."""
    e = to_engine(sp.sin(sp.Symbol("x")) ** 2 + sp.cos(sp.Symbol("x")) ** 2)
    assert hidden_identities([x], [(h[0], e)]) == {h[0]: 1}

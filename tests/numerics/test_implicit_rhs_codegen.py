"""The generated solve of ``M v̇ = F`` (elimination with partial pivoting inside the generated code) and the batch
path.

Oracles: the hand-written right-hand side of the Chaplygin sleigh (Bloch, Nonholonomic
Mechanics and Control, §1.7: ``v̇1 = v2²/a``, ``(I + m a²)/a² · v̇2 = −m v1 v2/a`` in the
frame of the system file); LAPACK's partially pivoted LU (``numpy.linalg.solve``) on
``M`` and ``F`` evaluated by ``sympy.lambdify`` (an independent code path) for
matrices chosen to exercise every branch; and the explicit compiled field
(``compile_system``, which solves the constraints symbolically) at random states.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from anholo.algebra import codegen
from anholo.algebra.implicit import ImplicitForm
from anholo.numerics import compile_system, from_system
from anholo.numerics.implicit_rhs import ImplicitRHS, compile_implicit
from anholo.system import System

x1, x2, x3, x4 = sp.symbols("x1 x2 x3 x4", real=True)
a, b = sp.symbols("a b", real=True)
UNKNOWNS = sp.symbols("w1:5")


def _oracle(form, states, params, Y, p):
    Mf = sp.lambdify([*states, *params], form.matrix, modules="numpy")
    Ff = sp.lambdify([*states, *params], list(form.rhs), modules="numpy")
    return np.array([np.linalg.solve(np.array(Mf(*y, *p), dtype=float), np.array(Ff(*y, *p), dtype=float))
                     for y in Y])


def _check(M, F, Y=None, p=(1.3, 0.7)):
    Y = STATES if Y is None else Y
    k = len(F)
    form = ImplicitForm(UNKNOWNS[:k], sp.Matrix(M), F)
    states, params = (x1, x2, x3, x4), (a, b)
    f = ImplicitRHS(states, params, form, (x2, -x1))  # two kinematic rates, then the k unknowns
    expected = _oracle(form, states, params, Y, p)
    rhs = f.rhs(p)
    single = np.array([rhs(0.0, y)[2:] for y in Y])
    np.testing.assert_allclose(single, expected, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose([rhs(0.0, list(y))[2:] for y in Y], expected, rtol=1e-11, atol=1e-13)  # a list
    out = f.batch(Y, p)
    assert out.shape == (len(Y), 2 + k)
    np.testing.assert_allclose(out[:, 2:], expected, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(out[:, :2], np.stack([Y[:, 1], -Y[:, 0]], axis=1), rtol=0, atol=0)
    return f


STATES = np.random.default_rng(7).uniform(-1, 1, (25, 4))


def test_symmetric_positive_definite_4x4_with_structural_zeros():
    # M = A Aᵀ + diag(2): positive definite everywhere; some entries vanish identically
    A = sp.Matrix([[1 + x1**2, 0, sp.sin(x2), 0], [0, a, 0, x3], [x4, 0, b, 0], [0, sp.cos(x1), 0, 1]])
    M = A * A.T + 2 * sp.eye(4)
    F = [x1 * x2 + a, sp.exp(x3) * b, x4**2 - x1, sp.cos(x2 * x3)]
    _check(M, F, STATES)


def test_symmetric_indefinite_is_solved():
    # M = [[x1, 2], [2, 1]]: the first pivot is negative for x1 < 0 (and d2 = 1 − 4/x1 < 0 for 0 < x1 < 4)
    M = [[x1, 2 + x2], [2 + x2, 1 + a]]
    F = [x3 + 1, x4 - b]
    Y = STATES.copy()
    Y[:, 0] = np.where(np.arange(len(Y)) % 2 == 0, 0.5 + abs(Y[:, 0]), -0.5 - abs(Y[:, 0]))
    _check(M, F, Y)
    _check(M, F, Y[Y[:, 0] > 0])  # every state through the same branch
    _check(M, F, Y[Y[:, 0] < 0])


def test_nonsymmetric_2x2_and_3x3():
    _check([[2 + x1**2, x2], [x3, 3 + b]], [x4, a * x1])
    _check([[3 + x1**2, x2, 0], [x3, 4 + b, 1], [0, x4, 5]], [x4, a * x1, sp.sin(x2)])


@pytest.mark.parametrize("backend", ["python", pytest.param("c", marks=pytest.mark.skipif(
    codegen.find_compiler() is None, reason="no C compiler"))])
def test_zero_leading_entries_need_the_pivots(backend, monkeypatch, tmp_path):
    # M_00 ≡ 0 and M_11 = 0 at x1 = 0: elimination without row exchanges (or L D Lᵀ) divides by zero here
    monkeypatch.setenv("ANHOLO_CODEGEN", backend)
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    M = [[0, 2 + x2**2, x3], [1 + x4**2, x1, 0], [x2, 1, 3 + a]]
    F = [x1 + b, sp.cos(x3), x4 * a]
    Y = STATES.copy()
    Y[::3, 0] = 0.0
    f = _check(M, F, Y)
    assert f.backend == backend


def test_a_singular_matrix_gives_nan_and_keeps_the_kinematic_rates():
    form = ImplicitForm(UNKNOWNS[:2], sp.Matrix([[2, x2], [2, x2]]), [x3, x4])  # equal rows: a zero pivot exactly
    f = ImplicitRHS((x1, x2, x3, x4), (a, b), form, (x2, -x1))
    y = STATES[0]
    single, rows = f.rhs((1.0, 1.0))(0.0, y), f.batch(STATES[:5], (1.0, 1.0))
    assert np.all(np.isnan(single[2:])) and np.all(np.isnan(rows[:, 2:]))
    np.testing.assert_array_equal(single[:2], [y[1], -y[0]])
    np.testing.assert_array_equal(rows[:, :2], np.stack([STATES[:5, 1], -STATES[:5, 0]], axis=1))


def test_one_unknown_and_constant_matrix():
    _check([[2 + x1**2]], [x3 * x4])
    _check([[a, 0, 0], [0, b, 0], [0, 0, a + b]], [x1, x2, x3])  # pivots independent of the state


def test_chaplygin_sleigh_against_the_hand_written_rhs_at_random_states():
    system = System.load("chaplygin_sleigh")
    f = compile_implicit(system.nonholonomic())
    vals = {str(k): float(v) for k, v in system.values.items()}
    m, I, a_ = vals["m"], vals["I"], vals["a"]
    p = f.parameter_vector(vals)

    def hand(y):
        _, _, th, v1, v2 = y
        c, s = math.cos(th), math.sin(th)
        return [v1 * c - v2 * s, v1 * s + v2 * c, v2 / a_, v2 * v2 / a_, -a_ * m * v1 * v2 / (I + a_ * a_ * m)]

    Y = np.random.default_rng(3).uniform(-2, 2, (50, 5))
    expected = np.array([hand(y) for y in Y])
    rhs = f.rhs(p)
    np.testing.assert_allclose(np.array([rhs(0.0, y) for y in Y]), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(f.batch(Y, p), expected, rtol=1e-12, atol=1e-14)
    assert isinstance(rhs(0.0, Y[0]), np.ndarray)


@pytest.mark.parametrize("name", ["rolling_disk", "two_wheeled_carriage", "chaplygin_ball"])
def test_against_the_explicit_compiled_field_at_random_states(name):
    system = System.load(name)
    nh = system.nonholonomic()
    f = compile_implicit(nh)
    explicit = compile_system(from_system(system))
    assert [s.name for s in f.states] == list(explicit.state_names)
    rng = np.random.default_rng(11)
    vals = {p: float(rng.uniform(0.5, 1.5)) for p in explicit.parameters}
    rhs_e = explicit.rhs(explicit.parameter_vector(vals))
    p = f.parameter_vector(vals)
    rhs_i = f.rhs(p)
    Y = rng.uniform(-1, 1, (20, f.dim))
    expected = np.array([rhs_e(0.0, y) for y in Y])
    np.testing.assert_allclose(np.array([rhs_i(0.0, y) for y in Y]), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(f.batch(Y, p), expected, rtol=1e-10, atol=1e-12)

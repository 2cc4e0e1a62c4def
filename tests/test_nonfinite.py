"""No literal nan/zoo/oo in programs; derivatives of Abs and sign; square roots, Abs and sign in Maggi's route.

Oracles: finite differences (numpy) for the derivatives of Abs and sign; the coordinate multiplier method
written with sympy and solved numerically (as in tests/mechanics/kane_oracle.py) for Maggi's accelerations of
systems with Abs, sign and square roots in L, the constraints and the forces; ``math`` for compiled
reciprocal trigonometric functions.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import sympy as sp

from anholo import Chart
from anholo.algebra.engine import engine_diff, has_kinks, nonfinite, se
from anholo.algebra.program import Program
from anholo.dynamics.maggi import MaggiSystem
from anholo.errors import AnholoError, DimensionError, NonFiniteExpressionError


x, y = se.symbols("x y")


def test_symengine_makes_zoo_and_nan_from_a_square_root_at_a_symbolic_zero():
    """The mechanism: d√y/dy = 1/(2√y) with y replaced by a symbolic 0 is zoo, and 0·zoo is nan."""
    d = (x * se.sqrt(y)).diff(y)
    assert not nonfinite(d)
    assert nonfinite(d.subs({y: 0})) and nonfinite(d.subs({y: 0}).subs({x: 0}))
    assert str(d.subs({y: 0}).subs({x: 0})) == "nan"
    assert nonfinite(x - se.oo) and nonfinite(se.nan) and not nonfinite(se.Integer(3)) and not nonfinite(x)
    assert nonfinite(x + se.RealDouble(float("nan"))) and nonfinite(x * se.RealDouble(float("-inf")))
    assert not nonfinite(x + se.RealDouble(1.5))


def test_program_with_a_nonfinite_definition_or_output_is_refused():
    bad = (x * se.sqrt(y)).diff(y).subs({y: 0})  # zoo*x
    a = se.Symbol("a")
    with pytest.raises(NonFiniteExpressionError, match=r"shared subexpression a = "):
        Program((x, y), ((a, bad),), (a + y,))
    with pytest.raises(NonFiniteExpressionError, match="output 1"):
        Program((x, y), (), (x, (y * bad).subs({y: 0}) + x))
    with pytest.raises(NonFiniteExpressionError):
        Program.from_expressions((x, y), [x + bad])
    ok = Program((x, y), ((a, (x * se.sqrt(y)).diff(y)),), (a,))  # the same before the substitution: fine
    assert abs(ok.evaluate({"x": 2.0, "y": 4.0})[0] - 0.5) < 1e-15


def test_evaluate_gives_nan_where_a_division_by_zero_happens_at_the_point():
    p = Program.from_expressions((x, y), [x / se.sqrt(y), se.sqrt(y)])
    out = p.evaluate({"x": 0.0, "y": 0.0})
    assert math.isnan(out[0].real) and out[1] == 0
    assert abs(p.evaluate({"x": 1.0, "y": 4.0})[0] - 0.5) < 1e-15


def _finite_difference(f, x0, h=1e-6):
    return (f(x0 + h) - f(x0 - h)) / (2 * h)


@pytest.mark.parametrize("expr", [
    se.Abs(se.sin(x)) * y,
    se.Abs(x * y - 1) ** 3,
    se.sign(se.cos(x)) * x**2,
    se.Abs(se.Abs(x) - y) * se.sqrt(x**2 + 1),
    se.sign(x * y) + se.Abs(se.cos(x)) ** 2,
])
def test_engine_diff_of_abs_and_sign_equals_finite_differences(expr):
    d = engine_diff(expr, x)
    assert not d.atoms(se.Derivative, se.Subs)
    f = Program.from_expressions((x, y), [expr]).compile()
    g = Program.from_expressions((x, y), [d]).compile()
    rng = random.Random(4)
    for _ in range(5):
        x0, y0 = rng.uniform(-2, 2), rng.uniform(-2, 2)
        fd = _finite_difference(lambda t: f(t, y0)[0], x0)
        assert abs(g(x0, y0)[0] - fd) < 1e-6 * max(1.0, abs(fd)), (x0, y0)
    wrong = Program.from_expressions((x, y), [d + 0.01]).compile()  # the check can fail
    assert abs(wrong(0.3, 0.7)[0] - _finite_difference(lambda t: f(t, 0.7)[0], 0.3)) > 1e-3
    assert has_kinks([expr]) and not has_kinks([x * y])


def test_compiled_reciprocal_trigonometric_functions():
    p = Program.from_expressions((x,), [se.sec(x) + 2 * se.csc(x) + 3 * se.cot(x)])
    expected = 1 / math.cos(0.7) + 2 / math.sin(0.7) + 3 / math.tan(0.7)
    assert abs(p.compile()(0.7)[0] - expected) < 1e-12
    lines, outs = p.body({"x": "a"}, "numpy.")
    assert abs(eval(outs[0], {"numpy": np, "a": 0.7}) - expected) < 1e-12  # noqa: S307 - generated code


# --- Maggi's route ----------------------------------------------------------------------------

chart = Chart("x y z")
X, Y, Z = chart.coordinates
XD, YD, ZD = chart.velocities
T = (XD**2 + YD**2 + ZD**2) / 2
c = sp.Symbol("c", positive=True)


def test_maggi_names_the_hessian_term_that_is_undefined_on_the_constraint_set():
    """L with c x √(ẏ² + ż²) and constraints ẏ = ż = 0: ∂²L/∂ẏ² = c x (1/√(ẏ²+ż²) − ẏ²/(ẏ²+ż²)^(3/2)) is
    0/0 on C (symengine: 1 + nan·c·x); the error says so instead of evaluating nan."""
    ms = MaggiSystem(chart, T + c * X * sp.sqrt(YD**2 + ZD**2), [YD, ZD])
    with pytest.raises(NonFiniteExpressionError, match=r"d2L/dy_dotdy_dot .*on the constraint set"):
        ms.program()
    with pytest.raises(NonFiniteExpressionError):
        ms.check_regular()


def test_maggi_names_the_force_that_is_undefined_on_the_constraint_set():
    """Coulomb friction −c ẏ/√(ẏ² + …) with ẏ = 0 on C: 0/0."""
    Q = [0, -c * YD / sp.sqrt(YD**2 + ZD**2 - Y**2 * XD**2), 0]
    ms = MaggiSystem(chart, T, [YD, ZD - Y * XD], forces=Q)
    with pytest.raises(NonFiniteExpressionError, match=r"forces' term of y on the constraint set") as err:
        ms.evaluate({"x": 0.1, "y": 0.2, "z": 0.3, "c": 1.0, "x_dot": 0.5, "v1": 0.5})
    assert isinstance(err.value, AnholoError)


def test_maggi_refuses_a_constraint_undefined_at_zero_velocity():
    with pytest.raises(NonFiniteExpressionError, match="constraint 1"):
        MaggiSystem(chart, T, [ZD - Y * XD + sp.zoo])


def test_maggi_evaluate_outside_the_domain_is_a_clear_error():
    ms = MaggiSystem(chart, T, [ZD - Y * XD / X])  # the constraint matrix is undefined at x = 0
    with pytest.raises(DimensionError, match="undefined at this point"):
        ms.evaluate({"x": 0.0, "y": 0.2, "z": 0.3, "x_dot": 0.5, "y_dot": 0.1, "v1": 0.5, "v2": 0.1})


def multiplier_accelerations(L, q, qd, p, constraints, forces=None):
    """``q̈(q, q̇, p)`` of the coordinate multiplier method ``[[W, −Aᵀ], [A, 0]] [q̈; λ] = [F + Q; −(∂(A q̇)/∂q) q̇]``
    (``W = ∂²L/∂q̇²``, ``F = ∂L/∂q − ∂²L/∂q̇∂q q̇``), sympy's derivatives evaluated numerically; the Dirac
    deltas sympy writes for d sign(f) are 0 away from f = 0."""
    n, m = len(q), len(constraints)
    Lu = [L.diff(u) for u in qd]
    W = sp.Matrix(n, n, lambda A, B: Lu[A].diff(qd[B]))
    F = sp.Matrix([L.diff(q[A]) - sum(Lu[A].diff(q[B]) * qd[B] for B in range(n)) for A in range(n)])
    if forces is not None:
        F += sp.Matrix(list(forces))
    Amat = sp.Matrix(m, n, lambda a, A: constraints[a].diff(qd[A]))
    rc = sp.Matrix([-sum(e.diff(q[B]) * qd[B] for B in range(n)) for e in constraints])
    f = sp.lambdify((q, qd, p), [W, F, Amat, rc], modules=[{"DiracDelta": lambda t: 0.0}, "numpy"])

    def acc(qv, qdv, pv):
        Wv, Fv, Av, rv = (np.array(a, dtype=float) for a in f(qv, qdv, pv))
        K = np.block([[Wv, -Av.T], [Av, np.zeros((m, m))]])
        return np.linalg.solve(K, np.concatenate([Fv.ravel(), rv.ravel()]))[:n]

    return acc


CASES = {
    # name: (L, constraints, forces)
    "Abs and sqrt in L": (T + c * sp.Abs(YD) * X + c * Y * sp.sqrt(1 - sp.sin(X)**2), [ZD - Y * XD], None),
    "sign in the constraint": (T, [ZD - sp.sign(sp.cos(Y)) * Y * XD / sp.sqrt(1 - sp.sin(X)**2)], None),
    "Coulomb friction": (T, [ZD - Y * XD], [-c * sp.sign(XD), -c * YD * sp.sqrt(XD**2 + YD**2), 0]),
    "Abs mass": (T + c * sp.Abs(sp.cos(Y)) * XD**2 / 2, [ZD - sp.Abs(Y) * XD], None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_maggi_with_abs_sign_and_square_roots_equals_the_multiplier_method(name):
    L, cons, Q = CASES[name]
    ms = MaggiSystem(chart, L, cons, forces=Q)
    ms.check_regular()
    q, qd = list(chart.coordinates), list(chart.velocities)
    acc = multiplier_accelerations(L, q, qd, [c], cons, Q)
    rng = random.Random(7)
    worst = 0.0
    for sgn in (1, -1, 1, -1):  # both sides of the kinks
        qv = [sgn * rng.uniform(0.2, 1.2) for _ in q]
        free = {qd[chart.coordinates.index(f)]: sgn * rng.uniform(0.2, 1.2) for f in ms.free_coordinates}
        dep = [u for u in qd if u not in free]
        pt = dict(zip(q, qv)) | free | {c: 0.7}
        sol = sp.solve([e.xreplace(pt) for e in cons], dep, dict=True)[0]
        qdv = [float(pt.get(u, sol.get(u, 0))) for u in qd]
        expect = np.array(acc(qv, qdv, [0.7]), dtype=float)
        vals = {s.name: v for s, v in zip(q + qd, qv + qdv)} | {"c": 0.7}
        vals.update({v.name: vals[f.name + "_dot"] for v, f in zip(ms.free_velocities, ms.free_coordinates)})
        got = ms.evaluate(vals)["q_ddot"]
        worst = max(worst, np.abs(got - expect).max() / max(1.0, np.abs(expect).max()))
    assert worst < 1e-10, worst
    wrong = multiplier_accelerations(L + c * XD * YD, q, qd, [c], cons, Q)  # the check can fail
    assert np.abs(np.array(wrong(qv, qdv, [0.7]), dtype=float) - got).max() > 1e-3


def test_cramer_refuses_a_block_whose_determinant_vanishes_identically():
    from anholo.dynamics.maggi import _Cramer
    from anholo.errors import SingularFrameError

    with pytest.raises(SingularFrameError, match="vanishes identically"):
        _Cramer(se.DenseMatrix(2, 2, [x, y, 2 * x, 2 * y]))
    inv = _Cramer(se.DenseMatrix(2, 2, [x, y, 2 * x, 3 * y]))  # det = x y: fine
    sol = inv.solve(se.DenseMatrix(2, 1, [x + y, 2 * x + 3 * y]))
    assert all(abs(float(e.subs({x: 0.7, y: 1.3})) - 1) < 1e-12 for e in sol)


def test_compiled_program_of_a_plain_symengine_derivative_of_abs_and_sign():
    """symengine's own diff leaves Derivative/Subs nodes for Abs and sign; the compiler writes their values."""
    p = Program.from_expressions((x, y), [(se.Abs(se.sin(x)) * y).diff(x), se.sign(x * y).diff(x)])
    assert p.outputs[0].atoms(se.Derivative)
    for x0 in (0.5, 2.5, -0.5):
        h = 1e-6
        fd = (abs(math.sin(x0 + h)) - abs(math.sin(x0 - h))) * 2.0 / (2 * h)
        got = p.compile()(x0, 2.0)
        assert abs(got[0] - fd) < 1e-6 and got[1] == 0.0

"""The differential field of rational functions (anholo.algebra.kernel) against SymPy.

Oracles: SymPy's own ``diff``, ``Matrix.det``/``inv`` and numerical evaluation
(tests/numeric.py) at random points; the expression route of anholo
(``expression_route()``) for frames, structure functions and Γ_nh of the catalogue.
"""

from __future__ import annotations

import random

import pytest
import sympy as sp
from numeric import evaluate

from anholo.algebra import kernel as _kernel
from anholo.algebra import concrete_functions, tidy
from anholo.algebra.kernel import DiffField, Unsupported, expression_route
from anholo.examples import example_names, resolve_system
from anholo.system import System

x, y, th, ph = sp.symbols("x y theta phi", real=True)
a, b = sp.symbols("a b", positive=True)
A = sp.Function("A")

SAMPLES = [
    x**2 * sp.sin(th) / (1 + y**2) + a * sp.cos(th) ** 3,
    sp.tan(th) * x + sp.sec(ph) - sp.csc(th) * y / a,
    sp.exp(x) * sp.sin(ph) + sp.exp(-y) / (x + a),
    sp.sqrt(1 + x**2) * y + sp.sqrt(a) * x,
    A(x) * sp.cos(th) + A(x) ** 2 * y + sp.pi * x,
    sp.cos(th - ph) * x + sp.sin(2 * th) * y,
    (x + y) ** 4 / (x - y) ** 2 - sp.Rational(3, 7) * x * y,
]


def _point(expr, seed):
    rng = random.Random(seed)
    return {s: rng.uniform(0.3, 1.2) for s in expr.free_symbols}


def _values_agree(e1, e2, seed=0, tol=1e-20):
    e1, e2 = concrete_functions(e1), concrete_functions(e2)  # generic stand-ins for A(q)
    for k in range(3):
        pt = _point(e1 + e2, seed + k)
        if abs(evaluate(e1, pt) - evaluate(e2, pt)) > tol * (1 + abs(evaluate(e2, pt))):
            return False
    return True


@pytest.mark.parametrize("expr", SAMPLES)
def test_round_trip_preserves_the_function(expr):
    K = DiffField([expr], [x, y, th, ph], canonical_only=False)
    back = K.to_expr(K.reduce(K.convert(expr)))
    if expr.has(A):
        back, expr = (e.subs(A(x), sp.cos(x) + 2) for e in (back, expr))
    assert _values_agree(back, expr)


@pytest.mark.parametrize("expr", SAMPLES)
@pytest.mark.parametrize("var", [x, th])
def test_derivation_is_sympy_diff(expr, var):
    K = DiffField([expr], [x, y, th, ph], canonical_only=False)
    got = K.to_expr(K.diff(K.convert(expr), var))
    want = sp.diff(expr, var)
    if expr.has(A):
        stand_in = sp.Lambda(x, sp.cos(x) + x**2 + 2)
        got, want = (e.subs(A, stand_in).doit() for e in (got, want))
    assert _values_agree(got, want)


def test_derivatives_of_an_undefined_function_are_generators():
    K = DiffField([A(x) * sp.sin(th)], [x, th])
    f = K.convert(A(x) * sp.sin(th) ** 3)
    assert sp.simplify(K.to_expr(K.diff(K.diff(f, x), x)) - sp.sin(th) ** 3 * A(x).diff(x, 2)) == 0
    with pytest.raises(Unsupported):  # beyond the prepared order
        K.diff(K.diff(K.diff(K.diff(f, x), x), x), x)


def test_pythagorean_normal_form_is_canonical():
    K = DiffField([sp.sin(th), sp.cos(ph)], [th, ph])
    zero = K.convert(sp.sin(th) ** 4 + 2 * sp.sin(th) ** 2 * sp.cos(th) ** 2 + sp.cos(th) ** 4 - 1)
    assert K.canonical and K.is_zero(zero) and not K.reduce(zero).numer
    assert not K.is_zero(K.convert(sp.sin(th) * sp.cos(ph)))
    f = K.reduce(K.convert(sp.sin(th) ** 5))
    assert f.numer.degree(K._index[K._trig[th][0]]) <= 1


def test_non_canonical_generators_are_tested_numerically():
    expr = sp.cos(th / 2) ** 2 - (1 + sp.cos(th)) / 2  # half angles are generators of their own
    with pytest.raises(Unsupported):  # by default only canonical normal forms are used
        DiffField([expr], [th, ph])
    K = DiffField([expr], [th, ph], canonical_only=False)
    f = K.convert(expr)
    assert not K.canonical and f.numer  # not zero as a polynomial in the generators …
    assert K.is_zero(f)  # … but zero as a function
    assert not K.is_zero(K.convert(sp.cos(th / 2) - sp.cos(th)))


@pytest.mark.parametrize("bad", [sp.sinh(x), x + sp.Float(0.5), sp.Abs(x), sp.log(x), sp.I * x,
                                 sp.Function("B")(x + y)])
def test_outside_the_class_is_unsupported(bad):
    with pytest.raises(Unsupported):
        DiffField([bad], [x])


def test_expression_route_switches_the_kernel_off():
    with expression_route():
        with pytest.raises(Unsupported):
            DiffField([x])
    DiffField([x])


def test_cancel_in_a_subring_is_polynomial_cancel():
    K = DiffField([x, y, a, b, th], [x])
    R = K.ring
    rng = random.Random(3)
    for _ in range(5):
        g = K.convert(x + a * y + rng.randint(1, 5)).numer
        p = K.convert((x - y) ** 2 * b + rng.randint(1, 5)).numer * g
        q = K.convert(x**2 + a + 1).numer * g
        assert _kernel.cancel(p, q) == p.cancel(q)
        assert _kernel.cancel(p, q)[0].ring is R


def test_linear_algebra_matches_sympy():
    M = sp.Matrix([[sp.cos(th), -x * sp.sin(th), 0], [sp.sin(th), x * sp.cos(th), 0], [y, 1, a]])
    K = DiffField(list(M), [x, y, th])
    Mk = _kernel.matrix(K, M)
    det = K.to_expr(_kernel.determinant(K, Mk))
    assert sp.simplify(det - M.det()) == 0
    inv = _kernel.to_matrix(K, _kernel.inverse(K, Mk))
    assert sp.simplify(inv * M - sp.eye(3)) == sp.zeros(3)
    assert _kernel.rank(K, Mk) == 3
    singular = _kernel.matrix(K, [[x, y], [2 * x, 2 * y]])
    assert _kernel.rank(K, singular) == 1 and _kernel.inverse(K, singular) is None


def test_tidy_is_a_normal_form_no_larger_than_cancel():
    for expr in SAMPLES[:4]:
        t = tidy(expr)  # the kernel's, or the expression route's for tan/sec/csc
        assert _values_agree(t, expr)
        assert sp.count_ops(t) <= sp.count_ops(sp.cancel(expr))


# --- the two routes of anholo agree on the catalogue ----------------------------------------
def _linear_examples():
    out = []
    for name in example_names(large=False):
        spec = resolve_system(name)
        if spec.constraints and spec.time is None and System.from_spec(spec).kinematic_constraints().is_linear:
            out.append(name)
    return out


@pytest.mark.parametrize("name", _linear_examples())
def test_kernel_route_equals_expression_route(name):
    S = System.load(name)
    nh = S.nonholonomic()
    fld = nh.field()
    with expression_route():
        S2 = System.load(name)
        nh2 = S2.nonholonomic()
        fld2 = nh2.field()
        R2 = nh2.frame.structure
        cof2 = nh2.frame.coframe
    assert nh.frame.vectors == nh2.frame.vectors
    n = nh.n
    for i in range(n):
        for j in range(n):
            assert _values_agree(nh.frame.coframe[i, j], cof2[i, j], seed=i + j, tol=1e-15)
            for k in range(n):
                assert _values_agree(nh.frame.structure[k][i][j], R2[k][i][j], seed=k, tol=1e-15)
    assert _values_agree(nh.lagrangian.expr, nh2.lagrangian.expr, tol=1e-15)
    for e1, e2 in zip(fld.accelerations + fld.multipliers, fld2.accelerations + fld2.multipliers):
        assert _values_agree(e1, e2, tol=1e-15)


def test_split_separates_velocity_terms():
    u = sp.symbols("u1 u2", real=True)
    L = (u[0] ** 2 + x * u[0] * u[1]) / 2 - 1 / (x**2 + y**2) + a * y
    K = DiffField([L], [x, y], extra_symbols=u)
    T, V = _kernel.split(K, K.convert(L), u)
    assert sp.simplify(K.to_expr(T) - (u[0] ** 2 + x * u[0] * u[1]) / 2) == 0
    assert sp.simplify(K.to_expr(V) - (a * y - 1 / (x**2 + y**2))) == 0


def test_lazy_cancellation_is_completed_by_reduce():
    K = DiffField([x, y], [x, y])
    f = K.convert((x**2 - y**2) / (x + y + 1)) * K.convert((x + y + 1) / (x - y))
    g = K.reduce(f)
    assert g.denom == 1 and K.to_expr(g) == x + y
    assert K.is_zero(K.convert(x / (x + y)) - K.convert(x**2 / (x**2 + x * y)))


CONSTRAINTS = [
    ["z_dot - y*x_dot"],
    ["x_dot*sin(theta) - y_dot*cos(theta)", "z_dot - x*theta_dot + 2"],
    ["(x_dot + a*y_dot)/(1 + x**2) - b*cos(theta)"],
]


@pytest.mark.parametrize("exprs", CONSTRAINTS)
def test_constraint_parts_equal_the_expression_route(exprs):
    from anholo import Chart, LinearConstraints

    z = sp.Symbol("z", real=True)
    chart = Chart([x, y, z, th], parameters=[a, b])
    C = LinearConstraints.from_expressions(chart, exprs)
    with expression_route():
        C2 = LinearConstraints.from_expressions(chart, exprs)
    for e1, e2 in zip(list(C.forms) + list(C.inhomogeneous), list(C2.forms) + list(C2.inhomogeneous)):
        assert sp.simplify(e1 - e2) == 0


def test_nonlinear_constraint_still_rejected():
    from anholo import Chart, LinearConstraints, NonlinearConstraintError

    z = sp.Symbol("z", real=True)
    with pytest.raises(NonlinearConstraintError, match="not linear in the velocities"):
        LinearConstraints.from_expressions(Chart([x, y, z]), ["z_dot - x_dot*y_dot"])
    with pytest.raises(NonlinearConstraintError):
        LinearConstraints.from_expressions(Chart([x, y, z]), ["z_dot - 1/(1 + x_dot**2)"])


def test_lagrangian_in_frame_equals_the_expression_route():
    from anholo import Chart, Frame, Lagrangian

    chart = Chart([x, y, th])
    xd, yd, thd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), a * (xd**2 + yd**2) / 2 + b * thd**2 / 2 + a * x * sp.sin(th)
                   - 1 / (1 + x**2))
    F = Frame(chart, [[sp.cos(th), sp.sin(th), 0], [-sp.sin(th), sp.cos(th), 1 / a], [0, 0, 1]])
    G = Frame(chart, [[1, y, 0], [0, 1, 0], [x, 0, 1]])
    L1, L2 = L.in_frame(F), L.in_frame(F).in_frame(G)
    with expression_route():
        M1, M2 = L.in_frame(F), L.in_frame(F).in_frame(G)
    assert _values_agree(L1.expr, M1.expr, tol=1e-15) and _values_agree(L2.expr, M2.expr, tol=1e-15)


def test_a_system_with_a_kernel_context_pickles():
    import pickle

    nh = System.load("knife_edge").nonholonomic()
    assert "_kernel_context" in nh.__dict__
    again = pickle.loads(pickle.dumps(nh))
    assert "_kernel_context" not in again.__dict__
    for e1, e2 in zip(again.field().accelerations, nh.field().accelerations):
        assert sp.simplify(e1 - e2) == 0


@pytest.mark.parametrize("name", ["rigid_body", "spherical_pendulum", "polar_particle"])
def test_euler_lagrange_field_kernel_equals_expression_route(name):
    L = System.load(name).lagrangian
    fld = L.euler_lagrange_field()
    with expression_route():
        L2 = System.load(name).lagrangian
        fld2 = L2.euler_lagrange_field()
    assert L.bundle.quasi_velocities == L2.bundle.quasi_velocities
    for e1, e2 in zip(fld.accelerations, fld2.accelerations):
        assert _values_agree(e1, e2, tol=1e-15)


def test_trigonometric_functions_of_sums_are_generators_of_their_own():
    with pytest.raises(Unsupported):
        DiffField([sp.cos(th - ph), sp.cos(th)], [th, ph])
    K = DiffField([sp.cos(th - ph), sp.sin(2 * th), sp.cos(th), sp.sin(ph)], [th, ph], canonical_only=False)
    assert not K.canonical
    f = K.convert(sp.cos(th - ph) - sp.cos(th) * sp.cos(ph) - sp.sin(th) * sp.sin(ph))
    assert K.reduce(f).numer and K.is_zero(f)
    d = K.to_expr(K.diff(K.convert(sp.sin(2 * th)), th))
    assert sp.simplify(d - 2 * sp.cos(2 * th)) == 0

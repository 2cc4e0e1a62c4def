"""The fast paths added for the heavy reports, each against an independent computation.

* compound angles in ``tidy``: values at random points, and the expected short forms;
* ``NumericSystem.solvable``: small linear systems whose solvability is known by hand;
* ``numerical_relations`` (compiled by symengine): known identities, and the fallback for
  undefined functions;
* the roots of the special-value search: substituted back;
* the roller racer's Chaplygin frame in the exact kernel, its nonholonomic field against the
  coordinate multiplier method (tests/oracles.py).
"""

import random

import pytest
import sympy as sp

from anholo.algebra import tidy
from anholo.algebra.elimination import NumericSystem
from anholo.algebra.numeric import numerical_relations
from anholo.analysis.chaplygin import _real_roots

th, ph, d, x, y = sp.symbols("theta phi d x y")


def _agree(a, b, n=4):
    rng = random.Random(7)
    syms = sorted(sp.sympify(a).free_symbols | sp.sympify(b).free_symbols, key=str)
    for _ in range(n):
        pt = {s: rng.uniform(0.2, 1.3) for s in syms}
        if abs(complex(sp.N(a.xreplace(pt) - b.xreplace(pt), 20))) > 1e-12:
            return False
    return True


@pytest.mark.parametrize("expr, expected", [
    ((sp.sin(th) * sp.cos(ph + th) - sp.sin(ph + th) * sp.cos(th)) / d, -sp.sin(ph) / d),
    (sp.cos(th - ph) * sp.cos(th) + sp.sin(th - ph) * sp.sin(th), sp.cos(ph)),
    (sp.sin(2 * th) / sp.cos(th), 2 * sp.sin(th)),
])
def test_tidy_removes_compound_angles_when_that_shortens(expr, expected):
    got = tidy(expr)
    assert _agree(got, expr)
    assert sp.simplify(got - expected) == 0
    assert sp.count_ops(got) <= sp.count_ops(expected)


@pytest.mark.parametrize("expr", [sp.cos(th - ph), sp.sin(th + ph) * d, sp.cos(th - ph) / (1 + sp.cos(th - ph))])
def test_tidy_keeps_compound_angles_that_expansion_would_lengthen(expr):
    got = tidy(expr)
    assert _agree(got, expr)
    assert got.has(sp.cos(th - ph)) or got.has(sp.sin(th + ph))


def test_numeric_solvability_of_specialised_linear_systems():
    p, q = sp.symbols("p q", positive=True)
    # p z1 + z2 = 1, p z1 + z2 = p: solvable iff p = 1
    A = sp.Matrix([[p, 1], [p, 1]])
    b = [1, p]
    ns = NumericSystem(A, b)
    assert ns.solvable({p: 1})
    assert not ns.solvable({p: 2})
    assert not ns.solvable({p: q + 1})  # a value depending on another parameter, generic there
    assert ns.solvable({p: sp.sqrt(q) ** 2 / q})  # = 1, written with a square root
    # a regular system is solvable for every value
    B = sp.Matrix([[p, 1], [1, q]])
    assert NumericSystem(B, [1, 2]).solvable({p: 3})


def test_numerical_relations_compiled_by_symengine():
    s, c = sp.sin(th), sp.cos(th)
    rel = numerical_relations([s**2 * x, c**2 * x, x])
    assert len(rel) == 1
    r = rel[0]
    assert abs(r[0] - r[1]) < 1e-9 * abs(r[0]) and abs(r[0] + r[2]) < 1e-9 * abs(r[0])
    assert numerical_relations([s, c, x * y]) == []
    f = sp.Function("f")
    rel = numerical_relations([f(x) * y, 3 * f(x) * y])  # undefined functions: sympy's lambdify
    assert len(rel) == 1 and abs(rel[0][0] + 3 * rel[0][1]) < 1e-9 * abs(rel[0][0])


@pytest.mark.parametrize("f", [
    "a*m - b", "(m - a)*(m + b)", "m**2*a - b*c", "m**3 - a", "m**2 + m*a - b",
])
def test_roots_of_special_value_factors_solve_them(f):
    m = sp.Symbol("m", real=True)
    a, b, c = sp.symbols("a b c", positive=True)
    f = sp.sympify(f, locals={"m": m, "a": a, "b": b, "c": c})
    roots = _real_roots(f, m)
    assert roots
    for r in roots:
        assert sp.simplify(f.xreplace({m: r})) == 0


def test_roller_racer_chaplygin_frame_is_exact_and_its_field_agrees_with_the_multiplier_method():
    from anholo.system import System
    from tests.oracles import constrained_coordinate_solution, point_on_constraints

    S = System.load("roller_racer")
    ch = S.chaplygin()
    nh = ch.nonholonomic
    frame = list(nh.frame.vectors)
    assert not any(t.args[0].is_Add for e in frame for t in e.atoms(sp.sin, sp.cos))  # no compound angles left
    nh._kernel_problem()  # the exact kernel accepts the problem (raises Unsupported otherwise)
    acc = nh.field().natural_accelerations()
    q, u = S.chart.coordinates, S.chart.velocities
    Ln = S.lagrangian.natural_expr()
    cons = list(S.constraints)
    for seed in (1, 2):
        pt = point_on_constraints(q, u, cons, list(S.chart.parameters), [u[0], u[1]], seed)
        qdd, _ = constrained_coordinate_solution(Ln, q, u, cons, pt)
        for A, qa in enumerate(q):
            assert abs(float(acc[qa].xreplace(pt)) - qdd[A]) < 1e-9

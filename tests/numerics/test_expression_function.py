"""The one code generator for every numerical use (:func:`anholo.algebra.codegen.expression_function`) and the
sites routed through it, each checked against sympy's own evaluation (``subs``/``evalf``) at random points."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from anholo.algebra.codegen import expression_function, find_compiler
from anholo.errors import SimulationError

x, y, z = sp.symbols("x y z", real=True)
# sqrt, Abs, sign, Piecewise (with And/Not), sec, atan2, a power that is not small, exp/log
EXPRS = [sp.sqrt(x**2 + 1) * sp.sin(y) + sp.Abs(z) * sp.sign(x - y),
         sp.Piecewise((x**2 * y, sp.And(x < 0.3, sp.Not(sp.Eq(y, 1)))), (sp.sec(z), y > 0.5), (sp.atan2(y, z), True)),
         sp.exp(x) * sp.log(y**2 + 2) / (1 + z**2) + (x**2 + 2) ** sp.Rational(7, 3),
         sp.sqrt(x**2 + 1) * sp.sin(y) * sp.cosh(z)]  # shares sqrt(x**2+1)*sin(y) with the first
BACKENDS = ["python"] + (["c"] if find_compiler() else [])


def _reference(exprs, point):
    return np.array([complex(sp.N(e.subs(point), 30)).real for e in exprs])


def _points(n=12, seed=3):
    rng = random.Random(seed)
    return [{x: rng.uniform(-1.5, 1.5), y: rng.uniform(-1.5, 1.5), z: rng.uniform(-1.5, 1.5)} for _ in range(n)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_and_array_calls_agree_with_sympy(backend):
    f = expression_function([x, y, z], EXPRS, backend=backend)
    assert f.backend == backend
    pts = _points()
    ref = np.array([_reference(EXPRS, p) for p in pts])
    one = np.array([f(p[x], p[y], p[z]) for p in pts])
    assert np.allclose(one, ref, rtol=1e-12, atol=1e-12)
    cols = [np.array([p[s] for p in pts]) for s in (x, y, z)]
    assert np.allclose(f(*cols).T, ref, rtol=1e-12, atol=1e-12)  # numpy over arrays of points
    rows = np.array([[p[x], p[y], p[z]] for p in pts])
    assert np.allclose(f.vector(rows), ref, rtol=1e-12, atol=1e-12)
    out = np.empty(len(EXPRS))
    f.vector(rows[0], out=out)
    assert np.allclose(out, ref[0], rtol=1e-12)
    assert not np.allclose(one, ref + 1e-6 * np.abs(ref).max(), rtol=1e-12, atol=1e-12)  # the test can fail


def test_shapes_follow_the_expressions():
    M = sp.Matrix([[x, y], [x * y, sp.cos(x)]])
    f = expression_function([x, y], [M, [x + y, x - y], x**2])
    m, v, s = f(0.5, 2.0)
    assert m.shape == (2, 2) and np.allclose(m, [[0.5, 2.0], [1.0, np.cos(0.5)]])
    assert np.allclose(v, [2.5, -1.5]) and float(s) == 0.25
    assert expression_function([x], x**3)(2.0) == 8.0
    m, v, s = f(np.array([0.5, 1.0]), 2.0)  # the points on the trailing axis
    assert m.shape == (2, 2, 2) and np.allclose(m[:, :, 1], [[1.0, 2.0], [2.0, np.cos(1.0)]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_undefined_values_are_ieee_in_every_backend(backend):
    f = expression_function([x], [sp.sqrt(x), 1 / x, sp.log(x)], backend=backend)
    v = f(-1.0)
    assert np.isnan(v[0]) and np.isnan(v[2]) and v[1] == -1.0
    assert np.isinf(f(0.0)[1])


def test_complex_values():
    f = expression_function([x, y], [sp.sqrt(x) * y, x + y], dtype=complex)
    assert np.allclose(f.vector([-4.0, 3.0]), [6j, -1.0])


def test_what_cannot_be_generated_raises():
    with pytest.raises(SimulationError, match="function F"):
        expression_function([x], [sp.Function("F")(x)])
    with pytest.raises(SimulationError, match="DiracDelta"):  # (Heaviside is generated: test_codegen_kinks.py)
        expression_function([x], [sp.DiracDelta(x)])
    with pytest.raises(SimulationError, match="not arguments"):
        expression_function([x], [x * y])


def test_parameters_are_runtime_arguments():
    a = sp.Symbol("a")
    f = expression_function([x, a], sp.sin(a * x))
    for av in (0.5, 2.0):
        assert f(0.7, av) == pytest.approx(float(sp.sin(av * 0.7)), rel=1e-14)


# --- the converted sites ------------------------------------------------------------------------------------
def test_compiled_real_and_complex():
    from anholo.algebra.codegen import compiled

    f = compiled([x, y, z], EXPRS)
    for p in _points(4):
        assert np.allclose(f([p[x], p[y], p[z]]), _reference(EXPRS, p), rtol=1e-12, atol=1e-12)
    g = compiled([x, y], [sp.sqrt(x) * y], real=False)
    assert np.allclose(g([-1.0 + 0j, 2.0]), [2j])


def test_numeric_rows_with_undefined_functions():
    from anholo.algebra.numeric import _compiled_rows, concrete_functions

    F = sp.Function("F")
    exprs = [F(x) * y + sp.sqrt(x**2 + 1), sp.diff(F(x), x) * z]
    pts = _points(5)
    rows = np.array(_compiled_rows([x, y, z], exprs, pts))
    ref = np.array([_reference([concrete_functions(e) for e in exprs], p) for p in pts])
    assert np.allclose(rows.real, ref, rtol=1e-10, atol=1e-12)


def test_implicit_form_lambdify():
    from anholo.algebra.implicit import ImplicitForm

    M = sp.Matrix([[1 + x**2, sp.sin(y)], [sp.sin(y), 2 + sp.Abs(z)]])
    F = sp.Matrix([x * y, sp.sqrt(1 + z**2)])
    form = ImplicitForm(unknowns=sp.symbols("w1 w2"), matrix=sp.ImmutableMatrix(M), rhs=tuple(F))
    fn = form.lambdify([x, y, z])
    for p in _points(4):
        m, f = fn(p[x], p[y], p[z])
        assert np.allclose(m, np.array(M.subs(p).evalf(), dtype=float), rtol=1e-13)
        assert np.allclose(f, np.array(F.subs(p).evalf(), dtype=float).ravel(), rtol=1e-13)
    sol = form.numeric_solve({x: 0.3, y: 0.4, z: -0.2})
    ref = np.array(M.subs({x: 0.3, y: 0.4, z: -0.2}).evalf().LUsolve(F.subs({x: 0.3, y: 0.4, z: -0.2})), dtype=float)
    assert np.allclose(sol, ref.ravel(), rtol=1e-12)


def test_stop_event():
    from anholo.numerics.events import stop_event

    g = stop_event("sqrt(x**2 + theta_dot**2) > 1.5", ["x", "theta"])
    s = np.array([0.3, 0.1, -0.4, 0.8])
    assert g(0.0, s) == pytest.approx(np.sqrt(0.3**2 + 0.8**2) - 1.5, rel=1e-14)
    h = stop_event("sqrt(x) > 1", ["x"])
    assert np.isnan(h(0.0, np.array([-1.0, 0.0])))  # undefined there: nan, no exception


def test_discrete_mechanics_energy_and_constraints():
    from anholo.numerics.variational import discrete_mechanics
    from anholo.system import System

    system = System.load("rolling_disk")
    mech = discrete_mechanics(system)
    chart = system.chart
    L = sp.sympify(system.lagrangian.natural_expr())
    u = list(chart.velocities)
    E = sum(v * sp.diff(L, v) for v in u) - L  # E_L = q̇ ∂L/∂q̇ − L written here
    p = mech.parameter_vector({})
    pv = dict(zip(mech.parameters, p))
    rng = np.random.default_rng(1)
    Q, U = rng.uniform(-1, 1, (mech.n, 3)), rng.uniform(-1, 1, (mech.n, 3))
    got = mech.energy(Q, U, p)
    for j in range(3):
        point = {**{q: Q[i, j] for i, q in enumerate(chart.coordinates)}, **{v: U[i, j] for i, v in enumerate(u)},
                 **{s: pv[s.name] for s in chart.parameters if s.name in pv}}
        assert got[j] == pytest.approx(float(E.subs(point)), rel=1e-12, abs=1e-12)


# --- the rule: one code generator -------------------------------------------------------------------------
ALLOWED = {"algebra/codegen.py", "algebra/program.py", "geometry/distribution.py"}
PATTERN = re.compile(r"(\b(sp|sympy|se|symengine)\.(lambdify|Lambdify)\(|import[^\n]*\b(lambdify|Lambdify)\b|"
                     r"\butilities\.lambdify\b)")


def test_no_lambdify_outside_the_code_generator():
    root = Path(__file__).resolve().parents[2] / "src" / "anholo"
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ALLOWED:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if PATTERN.search(line):
                found.append(f"{rel}:{i}: {line.strip()}")
    assert not found, ("expressions become callables through anholo.algebra.codegen.expression_function only:\n"
                       + "\n".join(found))
    assert PATTERN.search("f = sp.lambdify(x, e)") and PATTERN.search("from sympy import lambdify")


PRINTERS = re.compile(r"\b(NumPyPrinter|PythonCodePrinter|SciPyPrinter|MpmathPrinter|C\d*CodePrinter|CodePrinter|pycode|"
                      r"ccode)\b|\bsympy\.printing\.(pycode|numpy|codeprinter|c|lambdarepr)\b")


def test_no_sympy_code_printer_in_the_package():
    # code is generated from straight-line programs by anholo.algebra.program.ExpressionPrinter only
    root = Path(__file__).resolve().parents[2] / "src" / "anholo"
    found = [f"{path.relative_to(root).as_posix()}:{i}: {line.strip()}" for path in sorted(root.rglob("*.py"))
             for i, line in enumerate(path.read_text().splitlines(), 1) if PRINTERS.search(line)]
    assert not found, "code is printed by anholo.algebra.program.ExpressionPrinter only:\n" + "\n".join(found)
    for line in ("from sympy.printing.numpy import NumPyPrinter", "from sympy.printing.pycode import "
                 "PythonCodePrinter", "src = sp.pycode(e)", "import sympy.printing.pycode"):
        assert PRINTERS.search(line), line
    assert not PRINTERS.search("from sympy.printing.latex import translate")


def test_kinematics_of_the_exact_route():
    from anholo.analysis.relative_equilibria import Kinematics, _coordinates
    from anholo.system import System

    field = System.load("chaplygin_sleigh").nonholonomic()
    X, vel = ((field.frame.vectors, field.velocities_on_C) if hasattr(field, "velocities_on_C")
              else (field.bundle.frame.vectors, field.bundle.quasi_velocities))
    coords = _coordinates(field)
    kin = [sp.Add(*[X[j, A] * vel[j] for j in range(len(vel))]) for A in range(len(coords))]
    syms = sorted(set().union(*(sp.sympify(e).free_symbols for e in kin)), key=str)
    rng = random.Random(7)
    at = {s: rng.uniform(0.5, 1.5) for s in syms}
    got = Kinematics(field)({s.name: v for s, v in at.items()}, {})
    for c, e in zip(coords, kin):  # q̇^A = Σ_j X_j^A v^j, evaluated here by sympy
        assert got[c.name] == pytest.approx(float(e.subs(at)), rel=1e-12, abs=1e-12)
    assert any(abs(v) > 1e-3 for v in got.values())


def test_chart_maps():
    from anholo.numerics.coordinate_charts import _of_vector

    th, ph = sp.symbols("theta phi", real=True)
    to_b = [sp.sin(th) * sp.cos(ph), sp.sin(th) * sp.sin(ph), sp.cos(th)]
    J = _of_vector([th, ph], sp.Matrix(to_b).jacobian([th, ph]))
    m = J([0.4, -1.1])
    assert m.shape == (3, 2)
    assert np.allclose(m, np.array(sp.Matrix(to_b).jacobian([th, ph]).subs({th: 0.4, ph: -1.1}).evalf(), dtype=float),
                       rtol=1e-14)

"""The one code generator (anholo.algebra.codegen) and the Maggi right-hand side built with it.

Oracles (none of them anholo's generated code):
* sympy's own numerical evaluation (``evalf`` at a point) of the same expressions, written here;
* ``numpy.linalg.solve`` (LAPACK) of ``M x = F`` with ``M`` and ``F`` evaluated by sympy here;
* the coordinate multiplier method built by hand (tests/oracles.py ``nonlinear_constrained_solution``:
  ``[[W, −Jᵀ], [J, 0]] [q̈; λ] = [F + Q; −(∂φ/∂q)·q̇ − ∂φ/∂t]``) at random points of C, for the right-hand
  side of :func:`~anholo.numerics.compile_system` on Maggi's route, with the C and the Python backends;
* for the Whipple bicycle, symengine's substitution of the program (``Program.evaluate``, no generated code)
  and LAPACK's solve.
Each backend is forced through ``ANHOLO_CODEGEN`` (the fallback without a compiler is the Python one).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution, point_on_constraints

from anholo.algebra import codegen
from anholo.algebra.codegen import from_sources, generate, python_source
from anholo.algebra.engine import se
from anholo.algebra.program import Program
from anholo.errors import SimulationError
from anholo.numerics import compile_system
from anholo.system import System

HAVE_CC = codegen.find_compiler() is not None
BACKENDS = ["python", pytest.param("c", marks=pytest.mark.skipif(not HAVE_CC, reason="no C compiler"))]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path_factory.getbasetemp() / "codegen-cache"))


# --- the generator on expressions with every function it translates -----------------------------------
x, y, a, b, t = sp.symbols("x y a b t", real=True)
EXPRS = [sp.sin(x) * sp.cos(y) + a * x**3, sp.sqrt(1 + x**2) / (2 + sp.cos(b * y)), sp.atan2(y, x + 3),
         sp.Abs(x - y) * sp.sign(a - x), sp.exp(-t * x) + sp.log(2 + y**2), sp.sec(x) + sp.cot(1 + y**2),
         (1 + x**2)**sp.Rational(3, 2) - (2 + y**2)**sp.Rational(-1, 2) + x**(-3), sp.tanh(a) * sp.asinh(b) * t,
         (x**2 + 1)**a]


def _program(exprs):
    return Program.from_expressions([se.Symbol(s.name) for s in (t, x, y, a, b)], [se.sympify(e) for e in exprs])


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
def test_bound_c_function_returns_new_arrays_and_reads_any_state():
    """The bound C form (numpy's C API allocates the result, ``functools.partial`` binds the parameters) gives
    the bits of the unbound call for a float64 array, a list, a float32 array and a strided view; each call
    returns its own array (an integrator keeps the previous one); a state of the wrong length is a ValueError."""
    f = generate(_program(EXPRS), [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]),
                                   ("p", [se.Symbol("a"), se.Symbol("b")])], backend="c")
    g = f.bind([0.7, 1.1])
    want = f(0.3, [0.5, 0.75], [0.7, 1.1])  # a state float32 holds exactly
    wide = np.array([0.5, 5.0, 0.75, 6.0])
    for state in (np.array([0.5, 0.75]), [0.5, 0.75], np.array([0.5, 0.75], dtype=np.float32), wide[::2]):
        assert np.array_equal(g(0.3, state), want)
    first, second = g(0.3, np.array([0.5, 0.75])), g(0.3, np.array([0.25, 0.75]))
    assert first is not second and np.array_equal(first, want) and not np.array_equal(second, want)
    with pytest.raises(ValueError, match="2"):
        g(0.3, np.array([0.4, 0.9, 1.0]))
    assert g.backend == "c" and (f._bound is None or isinstance(g, __import__("functools").partial))


@pytest.mark.parametrize("backend", BACKENDS)
def test_generated_outputs_equal_sympy_evaluation(backend):
    f = generate(_program(EXPRS), [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]),
                                   ("p", [se.Symbol("a"), se.Symbol("b")])], backend=backend)
    assert f.backend == backend
    rng = np.random.default_rng(1)
    for _ in range(5):
        tv, xv, yv, av, bv = rng.uniform(0.2, 1.3, 5)
        got = f(tv, [xv, yv], [av, bv])
        want = [float(e.evalf(30, subs={t: tv, x: xv, y: yv, a: av, b: bv})) for e in EXPRS]
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12), (got, want)
        # the bound form (parameters fixed once) and a pickled copy give the same numbers
        assert np.array_equal(pickle.loads(pickle.dumps(f))(tv, [xv, yv], [av, bv]), got)
        assert np.array_equal(f.bind([av, bv])(tv, np.array([xv, yv])), got)
        assert abs(got[0] - want[0] * 1.0001) > 1e-9  # the comparison can fail


@pytest.mark.parametrize("backend", BACKENDS)
def test_generated_jacobian_equals_sympy_derivatives(backend):
    """A Jacobian (``Program.derivatives``, forward mode along the definitions) through the same generator,
    against sympy's ``diff`` of the expressions evaluated by ``evalf``."""
    exprs = EXPRS[:4] + EXPRS[5:7]
    prog, shape = _program(exprs).derivatives([se.Symbol("x"), se.Symbol("y")])
    f = generate(prog, [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]),
                        ("p", [se.Symbol("a"), se.Symbol("b")])], backend=backend)
    pt = {t: 0.4, x: 0.7, y: -0.3, a: 1.1, b: 0.6}
    got = f(pt[t], [pt[x], pt[y]], [pt[a], pt[b]])[len(exprs):].reshape(shape)
    want = np.array([[float(sp.diff(e, z).evalf(30, subs=pt)) for z in (x, y)] for e in exprs])
    assert np.allclose(got, want, rtol=1e-11, atol=1e-12), np.abs(got - want).max()


def _implicit(Mexpr, Fexpr, rates):
    k = len(Fexpr)
    flat = [Mexpr[i][j] for i in range(k) for j in range(k)]
    return Program.from_expressions([se.Symbol(s.name) for s in (x, y, a)],
                                    [se.sympify(e) for e in list(rates) + flat + list(Fexpr)])


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_inside_equals_lapack_with_pivoting(backend):
    """M with a zero leading entry needs the row exchange; the result against LAPACK on sympy's M, F."""
    M = [[sp.Integer(0), 1 + x**2, a], [2 + y, x, 1], [sp.sin(x), 3, y * a]]
    F = [x * y, sp.cos(a), 1 + x]
    rates = [x + y, a * x]
    f = generate(_implicit(M, F, rates), [("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a")])],
                 solve=(2, 3), backend=backend)
    rng = np.random.default_rng(2)
    for _ in range(5):
        xv, yv, av = rng.uniform(-1, 1, 3)
        pt = {x: xv, y: yv, a: av}
        Mn = np.array([[float(sp.sympify(e).subs(pt)) for e in row] for row in M])
        Fn = np.array([float(sp.sympify(e).subs(pt)) for e in F])
        want = np.concatenate([[float(r.subs(pt)) for r in rates], np.linalg.solve(Mn, Fn)])
        got = f.bind([av])(0.0, np.array([xv, yv]))
        assert np.allclose(got, want, rtol=1e-11, atol=1e-12), (got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_matrix_gives_nan(backend):
    M = [[x, 2 * x], [a, 2 * a]]  # rank one everywhere
    f = generate(_implicit(M, [1 + 0 * x, y], [x]), [("y", [se.Symbol("x"), se.Symbol("y")]),
                                                     ("p", [se.Symbol("a")])], solve=(1, 2), backend=backend)
    out = f(0.0, [0.5, 0.3], [0.7])
    assert out[0] == 0.5 and np.isnan(out[1:]).all()


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_unrolled_python_solve_equals_the_loop_and_the_c_code(k, tmp_path, monkeypatch):
    """The unrolled elimination of the Python code (k ≤ UNROLL) gives the bits of the loop (pivoted_solve) and
    of the C code (when a compiler works), with row exchanges (zero and small leading entries) and a singular
    case; the solution against LAPACK."""
    from anholo.algebra.program import pivoted_solve

    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    names = [se.Symbol(f"e{i}") for i in range(k * k + k)]
    prog = Program.from_expressions(names, [se.Integer(7)] + names)  # one rate, then M and F as given
    groups = [("y", names)]
    py = generate(prog, groups, solve=(1, k), backend="python")
    assert ("_gauss(" in py.source) == (k > codegen.UNROLL)
    c = generate(prog, groups, solve=(1, k), backend="c") if codegen.find_compiler() else None
    rng = np.random.default_rng(k)
    for trial in range(40):
        M = rng.uniform(-1, 1, (k, k)) * (rng.uniform(size=(k, k)) > 0.3)
        M[0, 0] = 0.0 if trial % 2 else M[0, 0]
        if trial == 39 and k > 1:
            M[1] = M[0]  # equal rows: a zero pivot exactly
        F = rng.uniform(-1, 1, k)
        y = np.concatenate([M.ravel(), F])
        got = py(0.0, y, [])
        loop = pivoted_solve(list(M.ravel()), list(F), k)
        np.testing.assert_array_equal(got[1:], loop)
        assert got[0] == 7.0
        if c is not None:
            np.testing.assert_array_equal(c(0.0, y, []), got)
        if abs(np.linalg.det(M)) > 1e-6:
            np.testing.assert_allclose(got[1:], np.linalg.solve(M, F), rtol=1e-8, atol=1e-10)
        elif trial == 39 and k > 1:
            assert np.isnan(got[1:]).all()


def test_user_errors(monkeypatch):
    prog = _program(EXPRS[:1])
    groups = [("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a")])]
    with pytest.raises(SimulationError, match="unknown code generator backend"):
        generate(prog, groups, backend="fortran")
    monkeypatch.setattr(codegen, "find_compiler", lambda: None)
    with pytest.raises(SimulationError, match="no C compiler"):
        generate(prog, groups, backend="c")
    assert generate(prog, groups, backend="auto").backend == "python"  # auto without a compiler: the fallback
    with pytest.raises(SimulationError, match="no runtime argument for b"):
        generate(_program([x + b]), groups, backend="python")
    with pytest.raises(SimulationError, match="parameter values given"):
        generate(prog, groups, backend="python").bind([1.0, 2.0])


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
def test_compiled_library_is_cached_by_source(tmp_path, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    prog = _program([x * y + 0.123456789])
    groups = [("y", [se.Symbol("x"), se.Symbol("y")])]
    f = generate(prog, groups, backend="c")
    libs = list(tmp_path.glob("anholo_*.so"))
    assert len(libs) == 1 and f(0.0, [2.0, 3.0], []) == pytest.approx(6.123456789)
    monkeypatch.setattr(codegen, "_LIBRARIES", {})
    monkeypatch.setattr(codegen, "_GENERATED", {})
    monkeypatch.setattr(codegen.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rebuilt")))
    assert generate(prog, groups, backend="c")(0.0, [1.0, 1.0], []) == pytest.approx(1.123456789)


def test_a_broken_c_source_falls_back_to_python_under_auto():
    if not HAVE_CC:
        pytest.skip("no C compiler")
    py = python_source(_program([x + 1]), [("y", [se.Symbol("x"), se.Symbol("y")])])
    f = from_sources("int anholo_f(this is not C", py, 1, 2, 0, "auto")
    assert f.backend == "python" and f(0.0, [1.0, 0.0], [])[0] == 2.0
    with pytest.raises(SimulationError, match="failed on the generated code"):
        from_sources("int anholo_f(this is not C!", py, 1, 2, 0, "c")


# --- Maggi's route: the compiled right-hand side against the coordinate multiplier method --------------
SYSTEMS = ["rolling_disk", "chaplygin_sleigh", "roller_racer", "snakeboard", "nonholonomic_particle"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", SYSTEMS)
def test_maggi_rhs_equals_the_multiplier_method(name, backend, monkeypatch):
    monkeypatch.setenv("ANHOLO_CODEGEN", backend)
    s = System.load(name)
    ms = s.maggi()
    compiled = compile_system(ms)
    q, u = s.chart.coordinates, s.chart.velocities
    dep = [u[q.index(c)] for c in ms.dependent_coordinates]
    params = list(s.chart.parameters) + ([s.time] if s.time is not None else [])
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr)
    Q = s.forces.total if s.forces is not None else None
    free = [q.index(c) for c in ms.free_coordinates]
    for seed in (3, 4):
        pt = point_on_constraints(q, u, s.constraints, params, dep, seed, low=-0.9, high=0.9)
        qdd, _ = nonlinear_constrained_solution(L, q, u, s.constraints, pt, forces=Q, time=ms.time)
        p = compiled.parameter_vector({str(k): float(v) for k, v in pt.items() if str(k) in compiled.parameters})
        rhs = compiled.rhs(p)
        assert rhs.backend == backend
        y0 = np.array([float(pt[c]) for c in q] + [float(pt[u[i]]) for i in free])
        tv = float(pt[s.time]) if s.time is not None else 0.0
        got = rhs(tv, y0)
        want = np.concatenate([[float(pt[v]) for v in u], qdd[free]])
        assert np.allclose(got, want, rtol=1e-9, atol=1e-10), (name, got, want)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_bicycle_rhs_equals_symengine_substitution_and_lapack(backend, monkeypatch):
    """The bicycle's right-hand side at random states: every output against the program substituted by
    symengine (``Program.evaluate``) and ``numpy.linalg.solve`` of ``g v̇ = F``."""
    monkeypatch.setenv("ANHOLO_CODEGEN", backend)
    s = System.load("whipple_bicycle")
    ms = s.maggi()
    compiled = compile_system(ms)
    prog = ms.program(multipliers=False)
    n, m = ms.n, ms.m
    rhs = compiled.rhs(compiled.parameter_vector())
    assert rhs.backend == backend
    rng = np.random.default_rng(5)
    values = {str(k): float(v) for k, v in s.values.items()}
    for _ in range(3):
        y0 = np.concatenate([rng.uniform(-0.3, 0.3, n), rng.uniform(-2, 2, m)])
        y0[compiled.state_names.index("pitch")] = math.pi / 10  # a real point of the front contact
        point = dict(values, **dict(zip(compiled.state_names, y0)))
        out = np.array(prog.evaluate(point)).real
        g = out[n:n + m * m].reshape(m, m)
        want = np.concatenate([out[:n], np.linalg.solve(g, out[n + m * m:])])
        got = rhs(0.0, y0)
        assert np.allclose(got, want, rtol=1e-9, atol=1e-9), np.abs(got - want).max()


# --- from_mechanics(...).ode_function: generated once, parameters at run time --------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_ode_function_equals_sympy_evaluation_for_any_values(backend, monkeypatch):
    """Both routes of the rolling disc's ``ode_function`` against sympy: the field's Γ_nh evaluated by
    ``evalf``, and the multiplier route's q̈ from LAPACK on ``[[W, −Aᵀ], [A, 0]]`` evaluated by sympy
    (the model's own ``multiplier_form``); a second set of parameter values reuses the generated code."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from mechanics_models import rolling_disc

    from anholo import from_mechanics

    monkeypatch.setenv("ANHOLO_CODEGEN", backend)
    KM, values = rolling_disc()
    model = from_mechanics(KM, values=values)
    rng = np.random.default_rng(7)
    fld = model.field()
    exprs = list(fld.velocity_field()) + list(fld.accelerations)
    M, F, xs = model.multiplier_form()
    q, u = list(model.chart.coordinates), list(model.chart.velocities)
    n = len(q)
    for scale in (1.0, 1.7):
        vals = {p: float(v) * scale for p, v in model._values(None).items()}
        f = model.ode_function(values={p.name: v for p, v in vals.items()})
        g = model.ode_function(values={p.name: v for p, v in vals.items()}, route="multipliers")
        assert len(model.__dict__["_generated_cache"]) == 2
        x0 = rng.uniform(-0.8, 0.8, len(model.states))
        pt = {**vals, **dict(zip(model.states, x0))}
        want = [float(sp.sympify(e).evalf(30, subs=pt)) for e in exprs]
        assert np.allclose(f(0.0, x0), want, rtol=1e-10, atol=1e-12)
        y0 = rng.uniform(-0.8, 0.8, 2 * n)
        pt = {**vals, **dict(zip(q + u, y0))}
        Mn = np.array(M.evalf(subs=pt).tolist(), dtype=float)[n:, n:]
        Fn = np.array(F.evalf(subs=pt).tolist(), dtype=float).ravel()[n:]
        acc = np.linalg.solve(Mn, Fn)[:n]
        assert np.allclose(g(0.0, y0), np.concatenate([y0[n:], acc]), rtol=1e-9, atol=1e-11)


def test_maggi_route_without_a_compiler_uses_the_python_code(monkeypatch):
    """``auto`` where no compiler exists: the same right-hand side from the Python code."""
    monkeypatch.delenv("ANHOLO_CODEGEN", raising=False)
    monkeypatch.setattr(codegen, "find_compiler", lambda: None)
    monkeypatch.setattr(codegen, "_GENERATED", {})
    ms = System.load("rolling_disk").maggi()
    compiled = compile_system(ms)
    rhs = compiled.rhs(compiled.parameter_vector({p: 0.7 for p in compiled.parameters}))
    assert rhs.backend == "python"
    assert np.isfinite(rhs(0.0, np.full(compiled.dim, 0.3))).all()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["python", "no-compiler"])
def test_cli_simulates_the_bicycle_without_c(mode, monkeypatch):
    """``anholo simulate whipple_bicycle`` with the Python code (forced, or for want of a compiler); the
    summary's constraint residual shows the field stays on C."""
    import io

    from anholo.cli import main
    if mode == "python":
        monkeypatch.setenv("ANHOLO_CODEGEN", "python")
    else:
        monkeypatch.delenv("ANHOLO_CODEGEN", raising=False)
        monkeypatch.setattr(codegen, "find_compiler", lambda: None)
    monkeypatch.setattr(codegen, "_GENERATED", {})
    out = io.StringIO()
    code = main(["simulate", "whipple_bicycle", "--q0=0.01,0,0,0,0,0,0,0",
                 "--qdot0=0,0,16.666666666666668,0,0,14.285714285714288,5,0", "--t-end", "1", "--points", "11",
                 "--quiet"], out=out)
    text = out.getvalue()
    assert code == 0, text
    residual = float(text.split("max |constraint residual|:")[1].split()[0])
    assert residual < 1e-8
    assert all(g.backend == "python" for g in codegen._GENERATED.values()) and codegen._GENERATED

"""Max, Min, floor, ceiling and Heaviside in every form of the one code generator (anholo.algebra.codegen).

Each generated form — Python with :mod:`math` at one point, numpy over arrays of points, C at one point, the C
kernel's vector lanes — is compared with sympy's own evaluation of the same expressions (``evalf`` with the
values substituted), at random points and at the points where the functions switch (ties of Max/Min, the
jump of Heaviside, integers for floor/ceiling); a function without a translation is a one-line
SimulationError that names it, never a NameError of the generated code."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from anholo.algebra import codegen
from anholo.algebra.codegen import expression_function, generate
from anholo.algebra.engine import se, to_engine
from anholo.algebra.program import Program
from anholo.errors import SimulationError

HAVE_CC = codegen.find_compiler() is not None
BACKENDS = ["python", pytest.param("c", marks=pytest.mark.skipif(not HAVE_CC, reason="no C compiler"))]

x, y, a, b, t = sp.symbols("x y a b t", real=True)
EXPRS = [sp.Max(x, y, a) + 2 * sp.Min(x, 1 - y), sp.Max(x, 0) * sp.cos(y), sp.floor(3 * x) + sp.ceiling(2 * y - a),
         sp.Heaviside(x - y) * b, sp.Heaviside(x - y, 1) + 2 * sp.Heaviside(a - x, 0),
         sp.Min(sp.Max(x * t, -a), a) + sp.Abs(y - b)]
ARGS = (t, x, y, a, b)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path_factory.getbasetemp() / "codegen-cache"))


def _points(count=9, seed=5):
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-1.3, 1.3, (count, 5))
    pts[0] = [0.5, 0.25, 0.25, 0.7, -0.3]  # Heaviside(x - y) at its jump, Max/Min of equal arguments
    pts[1] = [1.0, 1.0, 0.5, 1.0, 0.5]  # floor(3x) and ceiling(2y - a) at integers, Heaviside(a - x) at 0
    pts[2] = [-0.5, 0.0, -0.0, 0.2, 0.0]  # signed zeros
    return pts


def _sympy_values(point):
    subs = dict(zip(ARGS, (sp.Rational(float(v)) if float(v) == round(float(v), 6) else float(v) for v in point)))
    return [float(e.subs(subs).evalf(30)) for e in EXPRS]


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_code_equals_sympy_evaluation(backend):
    prog = Program.from_expressions([se.Symbol(s.name) for s in ARGS], [to_engine(e) for e in EXPRS])
    f = generate(prog, [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]),
                        ("p", [se.Symbol("a"), se.Symbol("b")])], backend=backend)
    assert f.backend == backend
    for point in _points():
        got = f(point[0], point[1:3], point[3:])
        want = _sympy_values(point)
        assert np.allclose(got, want, rtol=1e-13, atol=1e-13), (point, got, want)
    assert not np.allclose(f(*_split(_points()[0])), np.array(_sympy_values(_points()[0])) + 1e-6, atol=1e-9)


def _split(point):
    return point[0], point[1:3], point[3:]


def test_numpy_code_over_many_points_equals_sympy_evaluation():
    """Beyond a few dozen points :meth:`ExpressionFunction.vector` runs the numpy code once over all of them
    (``numpy.maximum``/``minimum`` for Max/Min of several arguments, ``numpy.heaviside``)."""
    fn = expression_function(ARGS, EXPRS)
    pts = np.vstack([_points(count=60, seed=s) for s in (1, 2)])
    got = fn.vector(pts)  # rows: points
    assert got.shape == (len(pts), len(EXPRS))
    for j in (0, 1, 2, 7, 60, 119):
        assert np.allclose(got[j], _sympy_values(pts[j]), rtol=1e-13, atol=1e-13), j
    one = np.array([fn.vector(p) for p in pts[:5]])  # the one-point code agrees with the numpy code
    assert np.allclose(one, got[:5], rtol=1e-15, atol=0)


@pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
def test_vector_lanes_give_the_bits_of_the_scalar_c_function():
    import ctypes

    from anholo.numerics.batch_loop import lanes

    prog = Program.from_expressions([se.Symbol(s.name) for s in ARGS], [to_engine(e) for e in EXPRS])
    groups = [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a"), se.Symbol("b")])]
    w, flags = lanes()
    lib = codegen.build_library(codegen.c_source(prog, groups, None, lanes=w), flags)
    pts = _points(count=2 * w + 3)
    T, Y, P = pts[:, 0].copy(), pts[:, 1:3].copy(), pts[:, 3:].copy()
    batch = lib.anholo_f_batch
    batch.restype = ctypes.c_long
    batch.argtypes = (ctypes.c_long, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long,
                      ctypes.c_void_p)
    out = np.empty((len(pts), len(EXPRS)))
    batch(len(pts), T.ctypes.data, 1, Y.ctypes.data, P.ctypes.data, 2, out.ctypes.data)
    scalar = lib.anholo_f
    scalar.argtypes = (ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    for i in range(len(pts)):
        one = np.empty(len(EXPRS))
        scalar(T[i], Y[i].ctypes.data, P[i].ctypes.data, one.ctypes.data)
        assert np.array_equal(out[i].view(np.int64), one.view(np.int64)), i
        assert np.allclose(one, _sympy_values(pts[i]), rtol=1e-13, atol=1e-13), i


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_without_translation_is_named(backend):
    prog = Program.from_expressions([se.Symbol("x")], [to_engine(sp.DiracDelta(x) + x)])
    with pytest.raises(SimulationError, match="DiracDelta"):
        generate(prog, [("y", [se.Symbol("x")])], backend=backend)(0.0, [0.5], [])
    with pytest.raises(SimulationError, match="DiracDelta"):
        expression_function([x], sp.DiracDelta(x) + x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_elementary_function_outside_the_table_is_named_at_generation(backend):
    """symengine's ``erf`` is a function class of its own, not a PyFunction: the Python code used to print it
    as a name the generated code does not have (a NameError when called); every language now checks the one
    table of translations before generating."""
    prog = Program.from_expressions([se.Symbol("x")], [se.erf(se.Symbol("x")) + se.Symbol("x")])
    with pytest.raises(SimulationError, match="erf"):
        generate(prog, [("y", [se.Symbol("x")])], backend=backend)
    with pytest.raises(SimulationError, match="erf"):
        expression_function([x], sp.erf(x))

"""Many runs in one compiled loop (anholo.numerics.batch_loop) and the vectorised kernel (codegen lanes).

Oracles (none of them the compiled loop itself):
* the scalar generated function at each point (the kernel's lanes must give its bits) and sympy's ``evalf``
  of the same expressions;
* the same run integrated alone (a run's numbers must not depend on the runs that share its batch);
* the spherical pendulum's Euler–Lagrange equations and the non-minimal pendulum's ``l φ̈ = −g sin φ``
  written here and integrated by scipy's ``solve_ivp`` (DOP853);
* :func:`anholo.numerics.simulate` (scipy's DOP853 stepping) at the same tolerance.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.algebra import codegen
from anholo.algebra.engine import se
from anholo.algebra.extension import python_include
from anholo.algebra.program import Program
from anholo.errors import SimulationError
from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.batch import simulate_batch
from anholo.numerics.batch_loop import CompiledLoop, compiled_loop, lanes
from anholo.numerics.sweep import sweep
from anholo.system import System

pytestmark = pytest.mark.skipif(codegen.find_compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def _c(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path_factory.getbasetemp() / "codegen-cache"))
    monkeypatch.setenv("ANHOLO_CODEGEN", "c")


x, y, a, b, t = sp.symbols("x y a b t", real=True)
EXPRS = [sp.sin(x) * sp.cos(y) + a * x**3, sp.sqrt(1 + x**2) / (2 + sp.cos(b * y)), sp.atan2(y, x + 3),
         sp.Abs(x - y) * sp.sign(a - x), sp.exp(-t * x) + sp.log(2 + y**2), sp.sec(x) + sp.cot(1 + y**2),
         (1 + x**2)**sp.Rational(3, 2) - (2 + y**2)**sp.Rational(-1, 2) + x**(-3), (x**2 + 1)**a, sp.pi * x + 2]


def _kernel(exprs, solve=None):
    prog = Program.from_expressions([se.Symbol(s.name) for s in (t, x, y, a, b)], [se.sympify(e) for e in exprs])
    groups = [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a"), se.Symbol("b")])]
    w, flags = lanes()
    lib = codegen.build_library(codegen.c_source(prog, groups, solve, lanes=w), flags)
    return prog, groups, lib


def _batch(lib, T, Y, P, size):
    import ctypes
    fn = lib.anholo_f_batch
    fn.restype = ctypes.c_long
    fn.argtypes = (ctypes.c_long, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long,
                   ctypes.c_void_p)
    out = np.empty((len(Y), size))
    bad = fn(len(Y), T.ctypes.data, 1, Y.ctypes.data, P.ctypes.data, 2, out.ctypes.data)
    return out, bad


def test_kernel_lanes_give_the_bits_of_the_scalar_function_and_sympy_values():
    _, _, lib = _kernel(EXPRS)
    import ctypes
    f = lib.anholo_f
    f.argtypes = (ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    rng = np.random.default_rng(3)
    N = 4 * lanes()[0] + 3  # a padded last block
    T, Y, P = rng.uniform(0.2, 1.3, N), rng.uniform(0.2, 1.3, (N, 2)), rng.uniform(0.2, 1.3, (N, 2))
    Y[0, 0] = -0.0  # signed zeros and exact values go through the lanes unchanged
    Y[1] = [0.0, -0.0]
    out, _ = _batch(lib, T, Y, P, len(EXPRS))
    for i in range(N):
        one = np.empty(len(EXPRS))
        f(T[i], Y[i].ctypes.data, P[i].ctypes.data, one.ctypes.data)
        assert np.array_equal(out[i].view(np.int64), one.view(np.int64)), i
    for i in (2, 5, N - 1):
        subs = {t: T[i], x: Y[i, 0], y: Y[i, 1], a: P[i, 0], b: P[i, 1]}
        want = [float(e.evalf(30, subs=subs)) for e in EXPRS]
        assert np.allclose(out[i], want, rtol=1e-12, atol=1e-12)
        assert not np.allclose(out[i] * (1 + 1e-9), want, rtol=1e-12, atol=0)  # the comparison can fail


def test_kernel_solves_the_implicit_form_per_lane():
    """Outputs ``r`` rates, then M (2 × 2) and F: the kernel returns ``M⁻¹F`` per point (numpy's solve of the
    sympy-evaluated M and F), NaN for a singular M, and counts the singular points."""
    M = [[2 + sp.cos(x), a * y], [y, 3 + sp.sin(x) ** 2]]
    F = [sp.exp(y) * b, x - t]
    exprs = [x * y] + [M[i][j] for i in range(2) for j in range(2)] + F
    _, _, lib = _kernel(exprs, solve=(1, 2))
    rng = np.random.default_rng(4)
    N = 11
    T, Y, P = rng.uniform(-1, 1, N), rng.uniform(-1, 1, (N, 2)), rng.uniform(0.5, 1.5, (N, 2))
    out, bad = _batch(lib, T, Y, P, 3)
    assert bad == 0
    for i in range(N):
        subs = {t: T[i], x: Y[i, 0], y: Y[i, 1], a: P[i, 0], b: P[i, 1]}
        Mv = np.array([[float(e.evalf(subs=subs)) for e in row] for row in M])
        Fv = np.array([float(e.evalf(subs=subs)) for e in F])
        assert np.allclose(out[i], [Y[i, 0] * Y[i, 1], *np.linalg.solve(Mv, Fv)], rtol=1e-12, atol=1e-13)
    _, _, lib2 = _kernel([x] + [x - x, a, b, y] + [1, 1], solve=(1, 2))  # M = [[0, a], [b, y]] singular at a = b = 0
    out2, bad2 = _batch(lib2, T[:3], Y[:3], np.array([[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]), 3)
    assert bad2 == 2 and np.isnan(out2[0, 1:]).all() and np.isnan(out2[2, 1:]).all()
    assert np.allclose(out2[1, 1:], np.linalg.solve([[0.0, 1.0], [2.0, Y[1, 1]]], [1.0, 1.0]))


def _pendulum_el(g, l=1.0):
    """The spherical pendulum (θ from the downward vertical, azimuth φ; m = 1): the Euler–Lagrange equations of
    ``L = l²(θ̇² + sin²θ φ̇²)/2 + g l cos θ`` written here."""
    def f(_, s):
        th, ph, thd, phd = s
        return [thd, phd, np.sin(th) * np.cos(th) * phd**2 - g / l * np.sin(th),
                -2.0 * np.cos(th) / np.sin(th) * thd * phd]
    return f


def test_runs_equal_each_run_alone_bit_for_bit_and_agree_with_scipy():
    c = compile_system(from_system(System.load("spherical_pendulum"), "euler-lagrange"))
    loop = compiled_loop(c)
    assert isinstance(loop, CompiledLoop)
    rng = np.random.default_rng(5)
    N = 2 * lanes()[0] + 1
    p0 = dict(zip(c.parameters, c.parameter_vector()))
    P = np.array([c.parameter_vector({"g": g}) for g in rng.uniform(1, 15, N)])
    states = [([th, 0.0], [0.1 * k, w]) for k, (th, w) in enumerate(rng.uniform(0.4, 1.2, (N, 2)))]
    Y0 = np.array([c.initial_state(q, u, None, P[i]) for i, (q, u) in enumerate(states)])
    times = np.linspace(0.0, 3.0, 31)
    res = loop.run(Y0, P, 0.0, 3.0, times, rtol=1e-10, atol=1e-12)
    assert (res["status"] == 0).all()
    for i in range(N):
        alone = loop.run(Y0[i:i + 1], P[i], 0.0, 3.0, times, rtol=1e-10, atol=1e-12)
        assert np.array_equal(alone["y"][0], res["y"][i]) and alone["nfev"][0] == res["nfev"][i]
    # against the equations written here, integrated by scipy
    i = 3
    g = dict(zip(c.parameters, P[i]))["g"]
    ref = solve_ivp(_pendulum_el(g, p0.get("l", 1.0)), (0, 3), [*states[i][0], *states[i][1]], method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=times)
    assert np.allclose(res["y"][i].T, ref.y, atol=2e-8)
    assert not np.allclose(res["y"][i + 1].T, ref.y, atol=2e-8)  # another run differs
    # built without vector instructions (a worker without AVX): the same bits
    plain = CompiledLoop(loop.source, loop.n_state, loop.n_params, ())
    assert np.array_equal(plain.run(Y0, P, 0.0, 3.0, times, rtol=1e-10, atol=1e-12)["y"], res["y"])
    # a pickled loop (as sent to a worker) gives the same bits
    again = pickle.loads(pickle.dumps(loop)).run(Y0[:2], P[:2], 0.0, 3.0, times, rtol=1e-10, atol=1e-12)
    assert np.array_equal(again["y"], res["y"][:2])


@pytest.mark.parametrize("route", ["exact", "maggi"])
def test_holonomic_projection_keeps_the_circle_and_the_pendulum_law(route):
    """The non-minimal pendulum (x down, y horizontal, x² + y² = l²): the runs of the loop keep the circle to
    round-off (projection after every step) and follow ``l φ̈ = −g sin φ`` (written here, scipy)."""
    s = System.load("nonminimal_pendulum")
    c = compile_system(s.maggi() if route == "maggi" else from_system(s, "nonholonomic"))
    assert c.holonomic_count == 1
    phis, rates = [0.3, 0.9, 1.4], [0.0, -0.5, 1.0]
    runs = [([np.cos(ph), np.sin(ph)], [-np.sin(ph) * w, np.cos(ph) * w]) for ph, w in zip(phis, rates)]
    trajs = simulate_batch(c, 4.0, runs, workers=1, points=41, loop="compiled")
    for (ph, w), tr in zip(zip(phis, rates), trajs):
        assert np.max(np.abs(tr.q[0] ** 2 + tr.q[1] ** 2 - 1.0)) < 1e-13
        ref = solve_ivp(lambda _, z: [z[1], -9.81 * np.sin(z[0])], (0, 4), [ph, w], method="DOP853", rtol=1e-12,
                        atol=1e-12, t_eval=tr.t)
        assert np.allclose(tr.q[0], np.cos(ref.y[0]), atol=1e-7) and np.allclose(tr.q[1], np.sin(ref.y[0]), atol=1e-7)
        serial = simulate(c, 4.0, *runs[phis.index(ph)], points=41)
        assert np.allclose(serial.q, tr.q, atol=1e-8)
    without = simulate_batch(c, 4.0, runs[:1], workers=1, points=41, loop="compiled")
    assert np.array_equal(without[0].q, trajs[0].q)  # alone or in a batch: the same bits


def test_simulate_batch_routes_and_errors(monkeypatch):
    c = compile_system(from_system(System.load("spherical_pendulum"), "euler-lagrange"))
    runs = [([0.8, 0.0], [0.0, w]) for w in (0.5, 1.0, 1.5)]
    fast = simulate_batch(c, 2.0, runs, workers=1, points=21, loop="compiled")
    slow = simulate_batch(c, 2.0, runs, workers=1, points=21, loop="runs")
    pooled = simulate_batch(c, 2.0, runs, workers=2, points=21)
    for f, s_, p_ in zip(fast, slow, pooled):
        assert np.allclose(f.states, s_.states, atol=1e-8)
        assert np.array_equal(f.states, p_.states)  # the default route here is the loop, in any process
    with pytest.raises(SimulationError, match="compiled loop"):
        simulate_batch(c, 2.0, runs, workers=1, loop="compiled")  # no output times
    with pytest.raises(SimulationError, match="compiled loop"):
        simulate_batch(c, 2.0, runs, workers=1, points=5, method="RK45", loop="compiled")
    with pytest.raises(SimulationError, match="compiled loop"):
        simulate_batch(c, (2.0, 0.0), runs, workers=1, points=5, loop="compiled")  # backwards in time
    back = simulate_batch(c, (2.0, 0.0), runs[:1], workers=1, points=5)  # auto: the per-run route
    assert np.array_equal(back[0].q, simulate(c, (2.0, 0.0), *runs[0], points=5).q)
    monkeypatch.setenv("ANHOLO_CODEGEN", "python")
    with pytest.raises(SimulationError, match="compiled loop"):
        simulate_batch(c, 2.0, runs, workers=1, points=5, loop="compiled")
    assert len(simulate_batch(c, 2.0, runs, workers=1, points=5)) == 3  # auto: the per-run route


def test_sweep_loop_rows_are_the_same_in_any_process_and_agree_with_per_run_rows():
    s = System.load("spherical_pendulum")
    args = (s, {"g": (1.0, 9.81, 3), "qdot0.phi": [0.5, 1.0]}, [0.8, 0.0], [0.0, 1.0], 2.0)
    one = sweep(*args, workers=1, field="euler-lagrange", loop="compiled")
    two = sweep(*args, workers=2, field="euler-lagrange")
    runs = sweep(*args, workers=1, field="euler-lagrange", loop="runs")
    assert one.rows == two.rows and one.failed == 0
    k = one.columns.index("theta_end")
    assert np.allclose([r[k] for r in one.rows], [r[k] for r in runs.rows], atol=1e-8)
    assert max(r[one.columns.index("energy_drift")] for r in one.rows) < 1e-9


@pytest.mark.slow
def test_whipple_bicycle_batch_equals_serial_runs_bit_for_bit():
    """Eight bicycle runs (different frame masses) in one loop equal each run alone bit for bit, agree with
    :func:`simulate` (scipy's DOP853) to the tolerance, and keep the holonomic constraint to round-off."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_codegen import upright

    s = System.load("whipple_bicycle")
    c = compile_system(s.maggi())
    q0, qd0 = upright(s)
    loop = compiled_loop(c)
    P = np.array([c.parameter_vector({"mframe": m}) for m in np.linspace(80, 90, 8)])
    Y0 = np.array([c.initial_state(q0, qd0, None, p) for p in P])
    times = np.linspace(0, 3.0, 31)
    res = loop.run(Y0, P, 0.0, 3.0, times, rtol=1e-10, atol=1e-12)
    for i in (0, 5):
        alone = loop.run(Y0[i:i + 1], P[i], 0.0, 3.0, times, rtol=1e-10, atol=1e-12)
        assert np.array_equal(alone["y"][0], res["y"][i])
    ser = simulate(c, 3.0, q0, qd0, parameters={"mframe": 80.0}, points=31)
    assert np.allclose(ser.states, res["y"][0].T, atol=1e-8)
    Ys = loop.rhs_batch(res["y"][:, -1], P)
    one = c.rhs(P[3])(3.0, res["y"][3, -1])
    assert np.array_equal(Ys[3], one)  # the kernel's lane = the scalar C function


@pytest.mark.parametrize("backend", ["python", "c"])
def test_generated_jacobian_of_an_implicit_rhs_equals_sympy(backend):
    """``(ẋ, ∂ẋ/∂y)`` of ``ẋ = (x y, M⁻¹F)`` from the same program (:func:`codegen.generate_jacobian`) against
    sympy: ``M.LUsolve(F)`` differentiated by ``diff`` and evaluated by ``evalf``."""
    M = sp.Matrix([[2 + sp.cos(x), a * y], [y, 3 + sp.sin(x) ** 2]])
    F = sp.Matrix([sp.exp(y) * b, x - t])
    args = [se.Symbol(s_.name) for s_ in (t, x, y, a, b)]
    groups = [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a"), se.Symbol("b")])]
    # ẋ = M⁻¹F (no explicit rates): the state (x, y) is the solution of M ẋ = F
    f = codegen.generate_jacobian(Program.from_expressions(args, [se.sympify(e) for e in list(M) + list(F)]),
                                  groups, (0, 2), backend=backend)
    assert f.backend == backend
    xs = M.LUsolve(F)
    Jx = xs.jacobian([x, y])
    pt = {t: 0.3, x: 0.7, y: -0.4, a: 1.2, b: 0.8}
    got = f(pt[t], [pt[x], pt[y]], [pt[a], pt[b]])
    want = [float(v.evalf(30, subs=pt)) for v in xs] + [float(v.evalf(30, subs=pt)) for v in Jx]
    assert np.allclose(got, want, rtol=1e-12, atol=1e-13)
    assert not np.allclose(got[2:] * 1.001, want[2:], rtol=1e-9, atol=0)
    # explicit outputs only: the Jacobian of (x y, x − y²)
    g = codegen.generate_jacobian(Program.from_expressions(args, [se.sympify(x * y), se.sympify(x - y**2)]), groups,
                                  backend=backend)
    assert np.allclose(g(0.3, [0.7, -0.4], [1.2, 0.8]), [0.7 * -0.4, 0.7 - 0.16, -0.4, 0.7, 1.0, 0.8])


def test_implicit_methods_get_the_generated_jacobian(monkeypatch):
    """The Jacobian generated from the field's program equals central differences of the right-hand side, and
    Radau uses it: the motion is the one of the equations written here (scipy, DOP853)."""
    from anholo.numerics.batch_loop import jacobian_function

    c = compile_system(from_system(System.load("spherical_pendulum"), "euler-lagrange"))
    p = c.parameter_vector()
    jac = jacobian_function(c, p)
    assert jac is not None
    y0 = np.array([0.8, 0.0, 0.0, 1.0])
    f = c.rhs(p)
    eps = 1e-6
    fd = np.array([(f(0.0, y0 + eps * e) - f(0.0, y0 - eps * e)) / (2 * eps) for e in np.eye(4)]).T
    assert np.allclose(jac(0.0, y0), fd, atol=1e-7)
    with_jac = simulate(c, 2.0, [0.8, 0.0], [0.0, 1.0], method="Radau", rtol=1e-9, atol=1e-11, points=11)
    g = dict(zip(c.parameters, p))["g"]
    ref = solve_ivp(_pendulum_el(g, dict(zip(c.parameters, p)).get("l", 1.0)), (0, 2), y0, method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=with_jac.t)
    assert np.allclose(with_jac.states, ref.y, atol=1e-6)
    calls = []
    real = jacobian_function

    def counted(*a, **k):
        j = real(*a, **k)
        return lambda t_, y_: calls.append(t_) or j(t_, y_)

    monkeypatch.setattr("anholo.numerics.batch_loop.jacobian_function", counted)
    again = simulate(c, 2.0, [0.8, 0.0], [0.0, 1.0], method="Radau", rtol=1e-9, atol=1e-11, points=11)
    assert calls and np.array_equal(again.states, with_jac.states)  # the solver used the generated Jacobian


def test_cli_sweep_loop_option(tmp_path, capsys, monkeypatch):
    """``anholo sweep --loop compiled`` writes the rows of ``sweep(..., loop="compiled")``; ``--loop compiled``
    without a compiler's route (ANHOLO_CODEGEN=python) is a one-line error."""
    import csv
    from anholo import cli

    out = tmp_path / "t.csv"
    args = ["sweep", "spherical_pendulum", "--param", "g=1:9:3", "--q0", "0.8,0", "--qdot0", "0,1", "--t-end", "1",
            "--workers", "1", "--quiet", "--loop", "compiled"]
    assert cli.main(args + ["--csv", str(out)]) == 0
    api = sweep(System.load("spherical_pendulum"), {"g": (1.0, 9.0, 3)}, [0.8, 0.0], [0.0, 1.0], 1.0, workers=1,
                loop="compiled")
    with open(out, newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    assert [[repr(x) if isinstance(x, float) else str(x) for x in r] for r in api.rows] == rows
    capsys.readouterr()
    monkeypatch.setenv("ANHOLO_CODEGEN", "python")
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "compiled loop" in err and len(err.strip().splitlines()) == 1


def test_euler_lagrange_field_is_not_projected():
    """The non-minimal pendulum's Euler–Lagrange field (no constraints in its motion: a free fall) is not
    projected onto the circle by the loop, as ``simulate`` does not project it: x(t) = x0 + g t²/2."""
    c = compile_system(from_system(System.load("nonminimal_pendulum"), "euler-lagrange"))
    tr = simulate_batch(c, 0.5, [([1.0, 0.0], [0.0, 0.0])], workers=1, points=6, loop="compiled")[0]
    assert np.allclose(tr.q[0], 1.0 + 9.81 * tr.t**2 / 2, atol=1e-10) and np.allclose(tr.q[1], 0.0)


def test_bound_c_function_through_the_extension_and_its_fallbacks():
    """The bound C function (a CPython builtin reading the arrays' buffers) gives the bits of the ctypes call,
    also for states that are not contiguous float64 arrays (copied first), and evalf's values."""
    prog = Program.from_expressions([se.Symbol(s_.name) for s_ in (t, x, y, a, b)], [se.sympify(e) for e in EXPRS])
    groups = [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a"), se.Symbol("b")])]
    f = codegen.generate(prog, groups, backend="c")
    if python_include() is not None:
        assert f._ext is not None
    g = f.bind([1.1, 0.6])
    want = f(0.4, [0.7, -0.3], [1.1, 0.6])
    wide = np.array([[0.7, 9.0], [-0.3, 9.0]])
    for state in (np.array([0.7, -0.3]), [0.7, -0.3], wide[:, 0], np.array([0.7, -0.3], dtype=np.float32)):
        got = g(0.4, state)
        if isinstance(state, np.ndarray) and state.dtype == np.float32:
            assert np.array_equal(got, f(0.4, state.astype(float), [1.1, 0.6]))
        else:
            assert np.array_equal(got, want)
    subs = {t: 0.4, x: 0.7, y: -0.3, a: 1.1, b: 0.6}
    assert np.allclose(want, [float(e.evalf(30, subs=subs)) for e in EXPRS], rtol=1e-12)
    assert g(0.4, np.array([0.7, -0.3])) is not g(0.4, np.array([0.7, -0.3]))  # a new array per call


def test_bound_c_function_without_the_extension(monkeypatch):
    """Without the CPython wrapper (no Python headers: ANHOLO_NO_EXTENSION) the bound function is the ctypes
    one, with the same bits."""
    prog = Program.from_expressions([se.Symbol(s_.name) for s_ in (t, x, y, a, b)], [se.sympify(e) for e in EXPRS])
    groups = [("t", [se.Symbol("t")]), ("y", [se.Symbol("x"), se.Symbol("y")]), ("p", [se.Symbol("a"), se.Symbol("b")])]
    with_ext = codegen.generate(prog, groups, backend="c").bind([1.1, 0.6])(0.4, np.array([0.7, -0.3]))
    monkeypatch.setenv("ANHOLO_NO_EXTENSION", "1")
    monkeypatch.setattr(codegen, "_GENERATED", {})
    f = codegen.generate(prog, groups, backend="c")
    assert f._ext is None
    assert np.array_equal(f.bind([1.1, 0.6])(0.4, np.array([0.7, -0.3])), with_ext)

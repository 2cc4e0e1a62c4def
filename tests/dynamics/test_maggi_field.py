"""The field program of Maggi's route formed by differentiating L along its program (anholo.dynamics.maggi_field).

Oracles:
* the sweeps against sympy's ``diff`` of the expression written out (gradient, tangent);
* the coordinate multiplier method built by hand (tests/oracles.py ``nonlinear_constrained_solution``,
  ``[[W, −Jᵀ], [J, 0]] [q̈; λ] = [F + Q; −(∂φ/∂q)·q̇ − ∂φ/∂t]``: forces, time, affine constraints) at random
  points of C for the catalogue systems: ``M v̇ = F`` solved by the oracle's free accelerations, the
  multiplier rows by ``μ = κ_Pᵀ λ``, the kinematics by the point's velocities;
* ``sympy.physics.mechanics.KanesMethod`` on sympy's bicycle (tests/mechanics_models.py), with the holonomic
  pitch and with the differentiated pitch constraint (tests/mechanics/kane_oracle.py, no anholo code);
* the program of the second derivatives as expressions (the other formation, itself tested against the
  same oracles in tests/dynamics/test_maggi.py) at random states: the same numbers to round-off.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution, point_on_constraints

from anholo.algebra.codegen import operation_count
from anholo.algebra.engine import engine_cse, se, to_engine
from anholo.dynamics.maggi_field import (_Names, factored, field_program, formed_field_program, global_cse,
                                         reverse_sweep, tangent_sweep)
from anholo.errors import NonlinearConstraintError
from anholo.examples import LARGE_EXAMPLES, example_names, load_example
from anholo.system import System

SMALL = [name for name in example_names() if name not in LARGE_EXAMPLES and load_example(name).constraints
         and not load_example(name).functions]


def _maggi(name):
    try:
        return System.load(name).maggi()
    except NonlinearConstraintError:
        return None


def test_sweeps_equal_sympy_derivatives():
    x, y, z, a, b = sp.symbols("x y z a b", real=True)
    expr = sp.sin(x * y) * sp.sqrt(1 + z**2) + x**3 * sp.cos(y + z) / (2 + y**2) + sp.Abs(x - z) * y
    pairs, (out,) = engine_cse([to_engine(expr)])
    fresh = _Names([str(s) for s in "xyzab"] + [str(p) for p, _ in pairs], "t")
    X, Y, Z, A, B = (se.Symbol(s) for s in "xyzab")
    adjoint, grad = reverse_sweep(pairs, out, [X, Y, Z], fresh, kinks=True)
    dots, tan = tangent_sweep(pairs, {X: A, Y: B, Z: A * B}, fresh, kinks=True)
    from anholo.algebra.program import Program
    prog = Program((X, Y, Z, A, B), tuple(pairs) + tuple(adjoint) + tuple(dots),
                   tuple([grad[X], grad[Y], grad[Z], tan(out)]))
    rng = random.Random(0)
    for _ in range(3):
        pt = {s: rng.uniform(-1, 1) for s in (x, y, z, a, b)}
        got = np.array(prog.evaluate({str(k): v for k, v in pt.items()})).real
        g = [float(sp.diff(expr, s).subs(pt)) for s in (x, y, z)]
        t = g[0] * pt[a] + g[1] * pt[b] + g[2] * pt[a] * pt[b]
        assert np.allclose(got, g + [t], rtol=1e-12, atol=1e-12), (got, g, t)
    assert abs(got[3] - (g[0] * pt[a] + g[1] * pt[b])) > 1e-6  # the check can fail (the z term counts)


def test_factoring_and_global_cse_keep_the_values():
    """``factored`` equals the sum it factors (sympy's expand of the difference is zero) and takes out the
    common factor; ``global_cse`` gives the outputs of the program it is given, with fewer operations."""
    a, b, c, d, x = sp.symbols("a b c d x")
    expr = a * b + a * c + 2 * a * d * b + x * sp.sin(a * b + a * c)
    got = factored(to_engine(expr))
    assert sp.expand(sp.sympify(str(got)) - expr) == 0
    assert str(got).count("a") < str(to_engine(expr)).count("a")
    A, B, C, D, X = (se.Symbol(s) for s in "abcdx")
    t0, t1 = se.Symbol("t0"), se.Symbol("t1")
    pairs = [(t0, A * B + A * C + A * D), (t1, (A * B + A * C) * X + t0 * se.sin(A * B + A * C))]
    outputs = [t1 + t0 * A * B, t1 - A * C * D]
    from anholo.algebra.program import Program
    before = Program((A, B, C, D, X), tuple(pairs), tuple(outputs))
    after = global_cse(before.args, pairs, outputs, _Names(["a", "b", "c", "d", "x", "t0", "t1"], "g"))
    rng = random.Random(1)
    for _ in range(3):
        pt = {s: rng.uniform(-1, 1) for s in "abcdx"}
        assert np.allclose(np.array(before.evaluate(pt)).real, np.array(after.evaluate(pt)).real, rtol=1e-13)
    assert operation_count(after)["total"] < operation_count(before)["total"]


def _values(s, ms, pt):
    values = {str(k): float(v) for k, v in pt.items()}
    values.update({v.name: values[c.name + "_dot"] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
    return values


@pytest.mark.parametrize("tangents", [False, True], ids=["W-entries", "hessian-vector"])
@pytest.mark.parametrize("name", SMALL)
def test_field_program_equals_the_multiplier_method(name, tangents):
    """Both formations of ``W X_β`` (and of ``W w`` in the multiplier rows), whichever is kept."""
    ms = _maggi(name)
    if ms is None:
        pytest.skip("nonlinear constraints (Chetaev)")
    s = System.load(name)
    n, m = ms.n, ms.m
    progs = [formed_field_program(ms, False, tangents), formed_field_program(ms, True, tangents)]
    assert all(p is not None for p in progs) and progs[0].args == ms.program_args()
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr)
    Q = s.forces.total if s.forces is not None else None
    q, u = s.chart.coordinates, s.chart.velocities
    dep = [u[q.index(c)] for c in ms.dependent_coordinates]
    params = list(s.chart.parameters) + ([s.time] if s.time is not None else []) + list(s.inputs)
    free = [q.index(c) for c in ms.free_coordinates]
    kappa = sp.Matrix([[sp.diff(c, u[q.index(P)]) for P in ms.dependent_coordinates] for c in s.constraints])
    worst = 0.0
    for seed in (1, 2):
        pt = point_on_constraints(q, u, s.constraints, params, dep, seed, low=-0.9, high=0.9)
        qdd, lam = nonlinear_constrained_solution(L, q, u, s.constraints, pt, forces=Q, time=ms.time)
        values = _values(s, ms, pt)
        out = np.array(progs[0].evaluate(values)).real
        qdot = np.array([values[c.name] for c in u])
        M, F = out[n:n + m * m].reshape(m, m), out[n + m * m:]
        scale = max(1.0, np.abs(qdd).max())
        worst = max(worst, np.abs(out[:n] - qdot).max() / max(1.0, np.abs(qdot).max()),
                    np.abs(np.linalg.solve(M, F) - qdd[free]).max() / scale)
        # with the multiplier rows: M x = F at x = (q̈ of the free coordinates, μ = κ_Pᵀ λ)
        out = np.array(progs[1].evaluate(values)).real
        KP = np.array(kappa.xreplace(pt).evalf().tolist(), dtype=float)
        x = np.concatenate([qdd[free], KP.T @ lam])
        M, F = out[n:n + n * n].reshape(n, n), out[n + n * n:]
        worst = max(worst, np.abs(M @ x - F).max() / scale)
    assert worst < 1e-9, worst


def test_field_program_check_can_fail():
    """A wrong oracle value (the mass of the trailer changed at the point) is seen."""
    s = System.load("n_trailer_1")
    ms = s.maggi()
    prog = field_program(ms)
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr)
    q, u = s.chart.coordinates, s.chart.velocities
    dep = [u[q.index(c)] for c in ms.dependent_coordinates]
    pt = point_on_constraints(q, u, s.constraints, list(s.chart.parameters), dep, 3, low=-0.9, high=0.9)
    wrong = dict(pt)
    m1 = next(p for p in s.chart.parameters if p.name == "m1")
    wrong[m1] = pt[m1] * 1.2
    qdd, _ = nonlinear_constrained_solution(L, q, u, s.constraints, wrong)
    out = np.array(prog.evaluate(_values(s, ms, pt))).real
    n, m = ms.n, ms.m
    vd = np.linalg.solve(out[n:n + m * m].reshape(m, m), out[n + m * m:])
    assert np.abs(vd - qdd[[q.index(c) for c in ms.free_coordinates]]).max() > 1e-6


def _state(prog, rng, values):
    pt = {str(a): rng.uniform(-0.5, 0.5) for a in prog.args}
    pt.update({k: v * rng.uniform(0.8, 1.2) for k, v in values.items() if k in pt})
    return pt


@pytest.mark.parametrize("name", ["whipple_bicycle", "whipple_bicycle_pitch_rate", "rattleback", "n_trailer_3", "n_trailer_8"])
def test_program_is_the_smaller_and_equals_the_expressions_program(name):
    s = System.load(name)
    ms = s.maggi()
    both = ms.programs()
    size = {key: operation_count(p)["total"] for key, p in both.items()}
    assert size["program"] < size["expressions"] and ms.program() is both["program"]
    values = {str(k): float(v) for k, v in (s.values or {}).items()}
    if not values:  # the pitch-rate file has none: the bicycle's
        values = {str(k): float(v) for k, v in System.load("whipple_bicycle").values.items()}
    rng = random.Random(5)
    n, m = ms.n, ms.m
    for _ in range(3):
        pt = _state(both["expressions"], rng, values)
        a, b = (np.array(both[key].evaluate(pt)).real for key in ("expressions", "program"))
        assert np.abs(a - b).max() < 1e-12 * max(1.0, np.abs(a).max()), np.abs(a - b).max()
        va, vb = (np.linalg.solve(x[n:n + m * m].reshape(m, m), x[n + m * m:]) for x in (a, b))
        assert np.abs(va - vb).max() < 1e-10 * max(1.0, np.abs(va).max())
    if name.startswith("whipple_bicycle"):  # issue #28's bound: symbrim's best published Whipple bicycle
        assert size["program"] <= 1909 and size["program"] < 0.55 * size["expressions"], size


#: sympy's coordinates and speeds (kd: q_i' = u_i) → the bicycle files' coordinates (tests/mechanics)
COORDINATES = {"q1": "yaw", "q2": "lean", "q4": "pitch", "q5": "steer"}


@pytest.mark.slow
@pytest.mark.parametrize("pitch_rate", [False, True])
def test_bicycle_field_program_equals_kanes_method(pitch_rate):
    """v̇ = (lean, steer, rear-wheel rates)˙ of the program against KanesMethod's (u2, u5, u3)˙ at random
    points of C (the pitch solved from the holonomic constraint, or free with its rate constraint)."""
    from mechanics.kane_oracle import kane_points
    from mechanics_models import whipple_bicycle

    KM, values = whipple_bicycle(pitch_rate=pitch_rate)
    s = System.load("whipple_bicycle_pitch_rate" if pitch_rate else "whipple_bicycle")
    ms = s.maggi()
    prog = ms.program()
    assert prog is ms.programs()["program"]
    n, m = ms.n, ms.m
    params = {str(k): float(v) for k, v in values.items()}
    worst, perturbed = 0.0, 0.0
    for qv, uv, _, _, ud in kane_points(KM, values, 3, 7, spread=0.6):
        rng = random.Random(7)
        pt = {COORDINATES[key]: val for key, val in qv.items() if key in COORDINATES}
        pt.update({c: rng.uniform(-3, 3) for c in ("rear_wheel", "front_wheel", "x", "y")})
        pt.update({"v1": uv["u2"], "v2": uv["u5"], "v3": uv["u3"]})
        expect = np.array([ud["u2"], ud["u5"], ud["u3"]])
        for changed, sink in ((None, "worst"), ("mframe", "perturbed")):
            p = dict(params)
            if changed:
                p[changed] *= 1.1  # the check can fail
            out = np.array(prog.evaluate({**pt, **p})).real
            got = np.linalg.solve(out[n:n + m * m].reshape(m, m), out[n + m * m:])
            dev = np.abs(got - expect).max() / max(1.0, np.abs(expect).max())
            if sink == "worst":
                worst = max(worst, dev)
            else:
                perturbed = max(perturbed, dev)
    assert worst < 1e-9, worst
    assert perturbed > 1e-4, perturbed


def test_stored_program_is_read_back_and_equals_the_formed_one(tmp_path, monkeypatch):
    """The second MaggiSystem of the same file reads the program from the cache (forming it would fail here),
    with the same outputs as the program formed now; another system has another entry; a Lagrangian with a
    floating constant is not stored (its text would round it)."""
    import anholo.dynamics.maggi_field as mf

    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    first = System.load("n_trailer_3").maggi().program()
    stored = sorted(tmp_path.glob("maggi-field-*.json"))
    assert len(stored) == 1
    formed = field_program(System.load("n_trailer_3").maggi())

    def fail(*args, **kwargs):
        raise AssertionError("formed again")

    monkeypatch.setattr(mf, "field_program", fail)
    again = System.load("n_trailer_3").maggi().program()
    assert [str(a) for a, _ in again.pairs] == [str(a) for a, _ in first.pairs]
    rng = random.Random(2)
    pt = {str(a): rng.uniform(-0.5, 0.5) for a in first.args}
    a, b, c = (np.array(p.evaluate(pt)).real for p in (first, again, formed))
    assert np.array_equal(a, b) and np.allclose(a, c, rtol=1e-13, atol=1e-14)
    with pytest.raises(AssertionError, match="formed again"):
        System.load("n_trailer_1").maggi().program()
    monkeypatch.undo()
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    System.load("n_trailer_1").maggi().program()
    assert len(list(tmp_path.glob("maggi-field-*.json"))) == 2
    from anholo import Chart
    from anholo.dynamics.maggi import MaggiSystem

    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    y = chart.coordinates[1]
    floating = MaggiSystem(chart, (xd**2 + sp.Float(1.0 / 3.0) * yd**2 + zd**2) / 2 + y * zd, [zd - y * xd])
    prog = floating.programs()["program"]
    assert any(a.is_Float for e in prog.outputs for a in e.atoms(se.Number))
    assert len(list(tmp_path.glob("maggi-field-*.json"))) == 2
    # a parameter named I (the parser's imaginary unit): not stored, and the program keeps the symbol
    I = sp.Symbol("I", positive=True)
    named = MaggiSystem(chart, (xd**2 + I * yd**2 + zd**2) / 2 + y * zd, [zd - y * xd])
    prog = named.programs()["program"]
    assert se.Symbol("I") in {s for e in prog.outputs for s in e.free_symbols} | {
        s for _, e in prog.pairs for s in e.free_symbols}
    assert len(list(tmp_path.glob("maggi-field-*.json"))) == 2

"""Control inputs given as expressions, compiled into the batch loop (anholo.numerics.inputs, batch, batch_loop).

Oracles (none of them the compiled loop itself):
* :func:`anholo.numerics.simulate` one run at a time with the same inputs written here as Python callables
  (scipy's DOP853 stepping, the input evaluated in Python);
* the Chaplygin sleigh with a motor written here in coordinates — L = m(ẋ² + ẏ²)/2 + I θ̇²/2, the knife edge
  ``−sin θ ẋ + cos θ ẏ − a θ̇ = 0``, the forces ``(0, 0, τ) − ∂R/∂q̇`` of the Rayleigh function
  ``R = c(ẋ² + ẏ²)/2 + k θ̇²/2`` — by the coordinate multiplier method (M q̈ = Q + λ Aᵀ, A q̈ + Ȧ q̇ = 0, solved
  by sympy) and integrated by scipy's ``solve_ivp`` (the Chaplygin sleigh of Bloch (2003));
* the same run alone and inside a batch (a run's bits must not depend on the runs beside it).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.algebra import codegen
from anholo.errors import InputError, SimulationError
from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.batch import loop_eligible, loop_refusal, simulate_batch
from anholo.numerics.inputs import control_inputs
from anholo.numerics.sweep import sweep
from anholo.system import System

pytestmark = pytest.mark.skipif(codegen.find_compiler() is None, reason="no C compiler")

TOL = dict(rtol=1e-10, atol=1e-12)
#: The input of the tests: in the time, a coordinate, a velocity and two parameters.
TAU = "0.3*sin(2*t) - k*theta_dot + 0.05*x*cos(theta) + c/10"
VALUES = {"m": 1.0, "I": 1.0, "a": 0.5, "c": 0.1, "k": 0.05}


@pytest.fixture(autouse=True)
def _c(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path_factory.getbasetemp() / "codegen-cache"))
    monkeypatch.setenv("ANHOLO_CODEGEN", "c")


@pytest.fixture(scope="module")
def sleigh():
    return System.load("sleigh_with_motor")


@pytest.fixture(scope="module")
def nh(sleigh):
    return compile_system(from_system(sleigh, "nonholonomic"))


def _state(theta, u, thetadot, a=0.5):
    """Natural initial data on the knife-edge constraint: forward speed u, turning rate θ̇ (lateral w = a θ̇)."""
    w = a * thetadot
    return [0.0, 0.0, theta], [u * np.cos(theta) - w * np.sin(theta), u * np.sin(theta) + w * np.cos(theta), thetadot]


def _tau(compiled, p, sign=1.0):
    """The input TAU as a Python callable of (t, state), written out here; θ̇ and ẋ from the field's own
    natural velocities at the state."""
    pd = dict(zip(compiled.parameters, p))

    def tau(t, y):
        qd = compiled.natural_velocities(np.asarray(y, float).reshape(-1, 1), p, t)[:, 0]
        return sign * (0.3 * np.sin(2 * t) - pd["k"] * qd[2] + 0.05 * y[0] * np.cos(y[2]) + pd["c"] / 10)

    return tau


RUNS = [_state(th, u, w) for th, u, w in ((0.0, 1.0, 0.0), (0.3, 0.8, 0.4), (-0.5, 1.4, -0.2), (1.0, 0.5, 0.9),
                                           (0.2, 1.1, 0.1), (-1.2, 0.9, 0.6))]
PARAMS = [{"c": c, "k": k} for c, k in ((0.1, 0.05), (0.2, 0.0), (0.05, 0.1), (0.15, 0.02), (0.0, 0.3), (0.3, 0.07))]


def test_expression_inputs_take_the_compiled_loop_and_agree_with_callable_runs(nh):
    """Loop runs with the input as an expression = serial simulate runs with the input as a callable (1e-8
    relative at rtol 1e-10); the multipliers too.  With the callable of the other sign they disagree."""
    assert loop_eligible(nh, {"points": 41, "inputs": {"tau": TAU}}) is not None
    batch = simulate_batch(nh, 8.0, RUNS, PARAMS, inputs={"tau": TAU}, points=41, workers=1, loop="compiled", **TOL)
    worst = 0.0
    for (q0, qd0), params, traj in zip(RUNS, PARAMS, batch):
        p = nh.parameter_vector(params)
        ref = simulate(nh, 8.0, q0, qd0, parameters=params, inputs={"tau": _tau(nh, p)}, points=41, **TOL)
        worst = max(worst, np.max(np.abs(traj.states - ref.states) / (1 + np.abs(ref.states))))
        np.testing.assert_allclose(traj.multipliers, ref.multipliers, rtol=1e-7, atol=1e-9)
        wrong = simulate(nh, 8.0, q0, qd0, parameters=params, inputs={"tau": _tau(nh, p, -1.0)}, points=41, **TOL)
        assert np.max(np.abs(traj.states - wrong.states)) > 1e-3  # the comparison can fail
    assert worst < 1e-8
    # the motions differ from run to run (the inputs' parameters are each run's own)
    assert len({round(float(t.q[2, -1]), 6) for t in batch}) == len(RUNS)


def test_a_run_alone_equals_the_same_run_inside_a_batch_bit_for_bit(nh):
    inputs = {"tau": TAU}
    batch = simulate_batch(nh, 5.0, RUNS * 12, PARAMS * 12, inputs=inputs, points=11, workers=1, loop="compiled",
                           **TOL)
    for k in (0, 3, 5, 40, 71):
        alone = simulate_batch(nh, 5.0, [RUNS[k % 6]], [PARAMS[k % 6]], inputs=inputs, points=11, workers=1,
                               loop="compiled", **TOL)[0]
        assert np.array_equal(alone.states, batch[k].states)
        assert alone.nfev == batch[k].nfev


def test_worker_processes_give_the_same_bits(nh):
    """The inputs travel to worker processes with the options (chunks of 64 runs in 2 processes)."""
    one = simulate_batch(nh, 3.0, RUNS * 12, PARAMS * 12, inputs={"tau": TAU}, points=7, workers=1, **TOL)
    two = simulate_batch(nh, 3.0, RUNS * 12, PARAMS * 12, inputs={"tau": TAU}, points=7, workers=2, **TOL)
    assert all(np.array_equal(a.states, b.states) for a, b in zip(one, two))


def _coordinate_sleigh(tau_sign: float):
    """The sleigh with a motor in coordinates (module docstring), the multiplier eliminated by sympy:
    ``f(t, (q, q̇), p) -> (q̇, q̈)`` with ``p = (m, I, a, c, k)``."""
    t = sp.Symbol("t", real=True)
    x, y, th, xd, yd, thd, m, I, a, c, k = sp.symbols("x y theta xd yd thd m I a c k", real=True)
    qd = sp.Matrix([xd, yd, thd])
    M = sp.diag(m, m, I)
    A = sp.Matrix([[-sp.sin(th), sp.cos(th), -a]])
    Adot_qd = (A.diff(th) * thd * qd)[0]
    tau = tau_sign * (sp.Rational(3, 10) * sp.sin(2 * t) - k * thd + sp.Rational(5, 100) * x * sp.cos(th) + c / 10)
    Q = sp.Matrix([-c * xd, -c * yd, tau - k * thd])
    acc = sp.Matrix(sp.symbols("ax ay ath", real=True))
    lam = sp.Symbol("lam", real=True)
    eqs = list(M * acc - Q - lam * A.T) + [(A * acc)[0] + Adot_qd]
    sol = sp.solve(eqs, list(acc) + [lam], dict=True)[0]
    f = sp.lambdify([t, (x, y, th, xd, yd, thd), (m, I, a, c, k)], [xd, yd, thd] + [sol[s] for s in acc], "numpy")
    return f


def test_loop_with_inputs_agrees_with_the_coordinate_equations_integrated_by_scipy(sleigh, nh):
    """Independent oracle: Lagrange's equations with a multiplier in the coordinates (x, y, θ), written here."""
    right, wrong = _coordinate_sleigh(1.0), _coordinate_sleigh(-1.0)
    times = np.linspace(0.0, 8.0, 41)
    batch = simulate_batch(nh, 8.0, RUNS[:4], PARAMS[:4], inputs={"tau": TAU}, t_eval=times, workers=1,
                           loop="compiled", **TOL)
    for (q0, qd0), params, traj in zip(RUNS, PARAMS, batch):
        p = tuple({**VALUES, **params}[s] for s in ("m", "I", "a", "c", "k"))
        for f, good in ((right, True), (wrong, False)):
            ref = solve_ivp(lambda t, z: f(t, z, p), (0.0, 8.0), list(q0) + list(qd0), method="DOP853",
                            t_eval=times, rtol=1e-12, atol=1e-13)
            err = np.max(np.abs(traj.q - ref.y[:3])) + np.max(np.abs(traj.qdot - ref.y[3:]))
            assert (err < 1e-7) if good else (err > 1e-3), err


def test_chetaev_and_vakonomic_fields_read_velocities_from_their_own_state(sleigh):
    """The same expression in every field: ``theta_dot`` is the Chetaev state's own velocity, the vakonomic
    field's expression of its state; loop = per-run route in both."""
    for field in ("chetaev", "vakonomic"):
        c = compile_system(from_system(sleigh, field))
        kw = dict(inputs={"tau": TAU}, points=21, workers=1, **TOL)
        fast = simulate_batch(c, 4.0, RUNS[:3], PARAMS[:3], loop="compiled", **kw)
        slow = simulate_batch(c, 4.0, RUNS[:3], PARAMS[:3], loop="runs", **kw)
        for f, s in zip(fast, slow):
            assert np.max(np.abs(f.states - s.states) / (1 + np.abs(s.states))) < 1e-8


def test_callable_inputs_take_one_simulate_per_run(nh):
    p = nh.parameter_vector()
    call = {"tau": _tau(nh, p)}
    why = loop_refusal(nh, {"points": 5, "inputs": call})
    assert "callable" in why and loop_eligible(nh, {"points": 5, "inputs": call}) is None
    with pytest.raises(SimulationError, match="Python callables"):
        simulate_batch(nh, 2.0, RUNS[:2], inputs=call, points=5, workers=1, loop="compiled")
    auto = simulate_batch(nh, 2.0, RUNS[:2], inputs=call, points=5, workers=1, **TOL)
    for (q0, qd0), traj in zip(RUNS, auto):
        assert np.array_equal(traj.states, simulate(nh, 2.0, q0, qd0, inputs=call, points=5, **TOL).states)
    # a number is a constant input: compiled
    const = simulate_batch(nh, 2.0, RUNS[:1], inputs={"tau": 0.2}, points=5, workers=1, loop="compiled", **TOL)[0]
    ref = simulate(nh, 2.0, *RUNS[0], inputs={"tau": 0.2}, points=5, **TOL)
    assert np.allclose(const.states, ref.states, rtol=1e-8, atol=1e-10)


def test_input_errors(nh):
    with pytest.raises(InputError, match="no value for the input"):
        simulate_batch(nh, 1.0, RUNS[:1], points=3, workers=1)
    with pytest.raises(InputError, match="'power' is not an input"):
        simulate_batch(nh, 1.0, RUNS[:1], points=3, workers=1, inputs={"tau": "0", "power": "1"})
    with pytest.raises(InputError, match="unknown name 'omega'.*<q>_dot"):
        control_inputs(nh, {"tau": "omega"})
    with pytest.raises(InputError, match="Heaviside"):
        control_inputs(nh, {"tau": sp.Heaviside(sp.Symbol("t"))})
    with pytest.raises(InputError, match="symbol 'z'"):
        control_inputs(nh, {"tau": sp.Symbol("z")})


def test_sweep_with_inputs_compiled_and_per_run_rows_agree_and_the_gap_runs(sleigh, nh):
    kw = dict(workers=1, points=21, inputs={"tau": TAU}, **TOL)
    ranges = {"k": (0.0, 0.2, 3), "c": [0.0, 0.3]}
    q0, qd0 = _state(0.0, 1.0, 0.0)
    fast = sweep(nh, ranges, q0, qd0, 4.0, loop="compiled", **kw)
    slow = sweep(nh, ranges, q0, qd0, 4.0, loop="runs", **kw)
    ends = [fast.columns.index(f"{c}_end") for c in ("x", "y", "theta")]
    assert fast.failed == 0 and slow.failed == 0
    for a, b in zip(fast.rows, slow.rows):
        assert max(abs(a[i] - b[i]) for i in ends) < 1e-8
    gap = sweep(nh, {"k": [0.0, 0.1]}, q0, qd0, 2.0, compare_with=compile_system(from_system(sleigh, "vakonomic")),
                **kw)
    assert gap.failed == 0 and np.all(np.isfinite(gap.column("nh_vak_gap")))


def test_cli_sweep_input_runs_in_the_compiled_loop(tmp_path, capsys, nh):
    from anholo import cli

    base = ["sweep", "sleigh_with_motor", "--param", "k=0.01:0.2:3", "--q0", "0,0,0", "--qdot0", "1,0,0",
            "--t-end", "3", "--workers", "1", "--quiet", "--input", f"tau={TAU}"]
    rows = {}
    for route in ("compiled", "runs"):
        out = tmp_path / f"{route}.csv"
        assert cli.main(base + ["--loop", route, "--csv", str(out)]) == 0
        with open(out, newline="") as fh:
            rows[route] = list(csv.reader(fh))
    head = rows["compiled"][0]
    for a, b in zip(rows["compiled"][1:], rows["runs"][1:]):
        for name in ("x_end", "y_end", "theta_end"):
            i = head.index(name)
            assert abs(float(a[i]) - float(b[i])) < 1e-8
    api = sweep(nh, {"k": (0.01, 0.2, 3)}, [0, 0, 0], [1, 0, 0], 3.0, workers=1, loop="compiled",
                inputs={"tau": TAU}, **TOL)
    assert [[repr(x) if isinstance(x, float) else str(x) for x in r] for r in api.rows] == rows["compiled"][1:]
    capsys.readouterr()
    assert cli.main(base[:-2] + ["--input", "tau=0.2*sin(t) - thta"]) == 2
    err = capsys.readouterr().err
    assert "unknown name 'thta'" in err and "Did you mean 'theta'" in err and len(err.strip().splitlines()) == 1
    assert cli.main(base[:-2]) == 2
    assert "no value for the input(s) tau" in capsys.readouterr().err


def test_inputs_pickle_and_evaluate_the_expression_with_each_runs_parameters(nh):
    """The per-run evaluator (generated Python) after a round trip through pickle (as in a worker process), at a
    state written here: τ = 0.3 sin 2t − k θ̇ + 0.05 x cos θ + c/10 with θ̇ = w/a."""
    import pickle

    ci = pickle.loads(pickle.dumps(control_inputs(nh, {"tau": TAU})))
    y = [0.7, -0.2, 0.4, 1.1, 0.3]
    for params in PARAMS[:3]:
        pd = {**VALUES, **params}
        tau = ci.functions(nh, nh.parameter_vector(params))["tau"]
        want = 0.3 * np.sin(2 * 1.3) - pd["k"] * 0.3 / pd["a"] + 0.05 * 0.7 * np.cos(0.4) + pd["c"] / 10
        assert tau(1.3, np.array(y)) == pytest.approx(want, rel=1e-14, abs=1e-15)

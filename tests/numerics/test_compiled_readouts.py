"""The read-outs of a compiled exact-route system, generated from straight-line programs by the one code generator.

Oracle: sympy's own evaluation (``xreplace`` + ``evalf`` at 20 digits) of the first-order system's expressions —
the right-hand side, the natural velocities, the multipliers, the map of natural initial data, the constraint
functions, the holonomic constraints with their Jacobian and time derivative (``sympy.diff`` here) — and of the
energy ``E_L = q̇^A ∂L/∂q̇^A − L`` formed here from the Lagrangian, at random states, parameters and times:
time-dependent (rotating knife edge, Chetaev field), holonomic (non-minimal pendulum), with control inputs (sleigh with motor)
and vakonomic (multipliers as inputs).  Functions with kinks (Abs, sign, Max, Min, Heaviside, Piecewise, the
δ of a differentiated sign) through :func:`~anholo.numerics.compile.compile_functions`, over arrays of points."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
import sympy as sp

from anholo.errors import SimulationError
from anholo.numerics import compile_functions, compile_system
from anholo.numerics.ode import from_system
from anholo.system import System


def _value(e, sub) -> float:
    v = sp.sympify(e).xreplace({k: sp.Float(x, 20) for k, x in sub.items()})
    return float(sp.sympify(v).evalf(20))


def _close(got, expected):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float), rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name, field", [("rotating_knife_edge", "chetaev"), ("nonminimal_pendulum", "nonholonomic"),
                                         ("sleigh_with_motor", "nonholonomic"), ("rolling_disk", "vakonomic")])
def test_every_read_out_equals_sympy_evaluation(name, field):
    ode = from_system(System.load(name), field)
    c = pickle.loads(pickle.dumps(compile_system(ode)))  # as a worker process gets it: from its source
    rng = random.Random(3)
    time = ode.time if ode.time is not None else sp.Symbol("t", real=True)
    assert (name == "rotating_knife_edge") == (time in sp.Add(*ode.rates).free_symbols)
    for _ in range(2):
        pv = {p: rng.uniform(0.5, 1.5) for p in ode.parameters}
        p, t0 = tuple(pv[s] for s in ode.parameters), rng.uniform(0.1, 1.0)
        y = [rng.uniform(-1, 1) for _ in ode.state]
        w = {u: rng.uniform(-1, 1) for u in ode.inputs}
        sub = {**dict(zip(ode.state, y)), **pv, time: t0, **w}
        inputs = {u.name: v for u, v in w.items()} or None
        f = c.rhs(p, inputs) if inputs else c.rhs(p)
        _close(f(t0, np.array(y)), [_value(e, sub) for e in ode.rates])
        Y = np.array(y)[:, None]
        _close(c.natural_velocities(Y, p, t0)[:, 0], [_value(e, sub) for e in ode.natural_velocities])
        _close(c.multipliers(Y, p, t0, inputs)[:, 0], [_value(e, sub) for e in ode.multipliers])
        q0, u0 = [rng.uniform(-1, 1) for _ in ode.coordinates], [rng.uniform(-1, 1) for _ in ode.velocities]
        lam = [rng.uniform(-1, 1) for _ in ode.multiplier_inputs]
        nat = {**dict(zip(ode.coordinates, q0)), **dict(zip(ode.velocities, u0)), **pv, time: t0,
               **dict(zip(ode.multiplier_inputs, lam))}
        _close([float(x) for x in c._ns["initial_state"](np.array(q0), np.array(u0), np.array(lam), p)],
               [_value(e, nat) for e in ode.initial_state])
        L = ode.lagrangian
        energy = sum((u * sp.diff(L, u) for u in ode.velocities), sp.S.Zero) - L
        Q, U = np.array(q0)[:, None], np.array(u0)[:, None]
        _close(c.energy(Q, U, p, t0), [_value(energy, nat)])
        _close(c.constraint_functions(Q, U, p, t0)[:, 0], [_value(e, nat) for e in ode.constraints])
        assert c.holonomic_count == len(ode.holonomic) == (1 if name == "nonminimal_pendulum" else 0)
        if ode.holonomic:
            _close(c.holonomic_functions(Q, p, t0)[:, 0], [_value(h, nat) for h in ode.holonomic])
            proj = c.projector(p)
            _close(proj.jacobian(t0, np.array(q0)).ravel() if hasattr(proj, "jacobian") else
                   [float(np.asarray(v).reshape(-1)[0]) for v in c._ns["holonomic_jacobian"](t0, Q, p)],
                   [_value(sp.diff(h, q), nat) for h in ode.holonomic for q in ode.coordinates])
            _close([float(np.asarray(v).reshape(-1)[0]) for v in c._ns["holonomic_rate"](t0, Q, p)],
                   [_value(sp.diff(h, time), nat) for h in ode.holonomic])
    # over arrays of states: column by column the one-state values
    YY = np.array([[rng.uniform(-1, 1) for _ in range(4)] for _ in ode.state])
    V = c.natural_velocities(YY, p, t0)
    assert V.shape == (len(ode.coordinates), 4)
    for j in range(4):
        _close(V[:, j], c.natural_velocities(YY[:, j:j + 1], p, t0)[:, 0])


x, y, a = sp.symbols("x y a", real=True)
KINKED = [sp.Abs(x - y) * a, sp.sign(y) * x, sp.Max(x, y, a / 2) - sp.Min(x, 2 * y),
          sp.Heaviside(x) * y + sp.Heaviside(y - x, 1), sp.Piecewise((x**2, x < y), (a * y, True)),
          sp.diff(sp.sign(x) * x**2, x, 2)]  # 2 sign(x) + 4 x δ(x) + ...: δ(x) = 0 off x = 0


def test_kinks_in_the_vectorised_read_outs_equal_sympy_evaluation():
    assert KINKED[-1].has(sp.DiracDelta)
    f = compile_functions(KINKED, [x], [y], [a])
    pts = np.random.default_rng(4).uniform(-1.5, 1.5, (2, 40))
    pts[:, 0] = [0.4, 0.4]  # Abs, Max at a tie
    pts[:, 1] = [0.3, 0.0]  # sign(y) and Heaviside at 0 (Heaviside(0) = 1/2, Heaviside(0, 1) = 1)
    got = f(pts[:1], pts[1:], (0.8,))
    assert got.shape == (len(KINKED), 40)
    for j in range(pts.shape[1]):
        sub = {x: pts[0, j], y: pts[1, j], a: 0.8}
        expected = [_value(e.replace(sp.DiracDelta, lambda *args: sp.S.Zero), sub) for e in KINKED]
        _close(got[:, j], expected)


def test_a_function_without_translation_is_named():
    with pytest.raises(SimulationError, match="gamma"):
        compile_functions([sp.gamma(x) + y], [x], [y], [])

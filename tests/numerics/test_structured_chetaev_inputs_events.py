"""The fixed-step schemes (``method="variational" | "hamel"``) on constraints not affine in the velocities,
with control inputs, and with events.

Oracles, all independent of anholo's derivations:

* two particles with perpendicular velocities (Talamucci 2025, Example 2; ``two_particles_perpendicular``):
  the coordinate equations with Chetaev's multipliers written here by hand,
  ``m1 a1 = −m1 g e_z + λ1 v2 + λ2 d``, ``m2 a2 = −m2 g e_z + λ1 v1 + λ2 d`` (``d = P1 − P2``; the
  gradients ``∂φ/∂q̇`` of ``φ1 = v1·v2`` and ``φ2 = d·(v1 + v2)``), λ from the differentiated constraints,
  integrated by scipy's DOP853: order 2 by step halving; the discrete constraint ``φ(q̄_k, v_k) = 0``
  evaluated here from its formula; the energy (conserved: homogeneous constraints);
* the Appell–Hamel particle ``ż = c√(ẋ² + ẏ²)`` in gravity: Chetaev's equations solved in closed form here
  (``λ = g/(1 + c²)``, the horizontal speed falls at the constant rate ``c g/(1 + c²)``);
* two particles with parallel velocities tied by a spring: energy (conserved) over 10⁴ steps;
* the Chaplygin sleigh with friction and a motor: its body-velocity equations written by hand with the torque
  (``oracles.sleigh_reference``, and a feedback torque written here), DOP853;
* events: the time at which the Chaplygin sleigh's ``y`` reaches 0.3, from DOP853's event location on the
  sleigh's hand-written equations.
"""

import csv
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from anholo.errors import InputError, NonlinearConstraintError
from anholo.numerics import simulate
from anholo.numerics.events import stop_event
from anholo.numerics.variational import discrete_mechanics
from anholo.system import System

from oracles import sleigh_reference

G = 9.81


# --- constraints not affine in the velocities (Chetaev's rule) -------------------------------------------------
M1, M2 = 1.0, 2.0  # two_particles_perpendicular's [values]


def perpendicular_rhs(t, s):
    """Chetaev's equations of the two particles, by hand (module docstring)."""
    P1, P2, v1, v2 = s[0:3], s[3:6], s[6:9], s[9:12]
    d = P1 - P2
    F1, F2 = np.array([0, 0, -M1 * G]), np.array([0, 0, -M2 * G])
    # a1 = (F1 + λ1 v2 + λ2 d)/m1, a2 = (F2 + λ1 v1 + λ2 d)/m2 in φ1' = a1·v2 + v1·a2 = 0,
    # φ2' = (v1 − v2)·(v1 + v2) + d·(a1 + a2) = 0
    A = np.array([[v2 @ v2 / M1 + v1 @ v1 / M2, d @ v2 / M1 + d @ v1 / M2],
                  [d @ v2 / M1 + d @ v1 / M2, d @ d / M1 + d @ d / M2]])
    b = np.array([-(F1 @ v2 / M1 + F2 @ v1 / M2), -((v1 - v2) @ (v1 + v2) + d @ F1 / M1 + d @ F2 / M2)])
    lam = np.linalg.solve(A, b)
    return np.concatenate([v1, v2, (F1 + lam[0] * v2 + lam[1] * d) / M1, (F2 + lam[0] * v1 + lam[1] * d) / M2])


def perpendicular_start():
    P1, P2, v1 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.2]), np.array([0.3, 1.0, 0.2])
    d = P1 - P2
    e1 = np.cross(v1, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(v1, e1)
    e2 /= np.linalg.norm(e2)
    beta = 0.4  # v2 = α e1 + β e2 ⊥ v1 with d·(v1 + v2) = 0
    v2 = (-d @ v1 - beta * (d @ e2)) / (d @ e1) * e1 + beta * e2
    return np.concatenate([P1, P2]), np.concatenate([v1, v2])


@pytest.fixture(scope="module")
def perpendicular():
    return discrete_mechanics(System.load("two_particles_perpendicular"))


def test_chetaev_order_two_and_discrete_constraint(perpendicular):
    assert perpendicular.chetaev
    q0, qd0 = perpendicular_start()
    times = np.linspace(0, 1, 5)
    ref = solve_ivp(perpendicular_rhs, (0, 1), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-13, atol=1e-14,
                    t_eval=times)
    errors = []
    for h in (0.02, 0.01, 0.005):
        tr = simulate(perpendicular, (0, 1), q0, qd0, method="variational", step=h, t_eval=times)
        errors.append(max(np.abs(tr.q - ref.y[:6]).max(), np.abs(tr.qdot - ref.y[6:]).max()))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2) < 0.1), (errors, orders)
    assert errors[-1] < 1e-3
    # the discrete constraint φ(q̄_k, (q_{k+1} − q_k)/h) = 0 at every step, from the grid (output at the grid)
    h = 0.01
    tr = simulate(perpendicular, (0, 1), q0, qd0, method="variational", step=h)
    Q = tr.q
    qbar, v = (Q[:, 1:] + Q[:, :-1]) / 2, (Q[:, 1:] - Q[:, :-1]) / h
    phi1 = np.einsum("ik,ik->k", v[:3], v[3:])
    phi2 = np.einsum("ik,ik->k", qbar[:3] - qbar[3:], v[:3] + v[3:])
    assert max(np.abs(phi1).max(), np.abs(phi2).max()) < 1e-11
    # the velocities at the output times are on the constraints; the energy (conserved by the motion) is kept
    # at the grid points to O(h⁴) here (observed: 16.4 and 16.1 for the ratios at h = 0.02/0.01/0.005)
    assert np.abs(tr.constraint_residuals()).max() < 1e-12
    drift = [simulate(perpendicular, (0, 1), q0, qd0, method="variational", step=hh, points=26).energy_drift().max()
             for hh in (0.02, 0.01)]
    assert drift[0] / drift[1] > 12 and drift[1] < 1e-6, drift


def test_appell_hamel_constant_deceleration_closed_form():
    """Chetaev's motion of the Appell–Hamel particle has constant accelerations (module docstring); the midpoint
    scheme reproduces such motions to round-off — at the grid and, through the cubic interpolant, between."""
    c = 0.5
    mech = discrete_mechanics(System.load("appell_hamel"))
    q0, s0, d = np.array([0.1, 0.2, 0.3]), 3.0, np.array([0.6, 0.8])
    qd0 = [s0 * d[0], s0 * d[1], c * s0]
    rate = c * G / (1 + c * c)  # the horizontal speed falls at this rate; ż̇ = −c² g/(1 + c²)
    t = np.linspace(0, 0.5, 11)
    dist = s0 * t - rate * t ** 2 / 2
    Q = np.array([q0[0] + d[0] * dist, q0[1] + d[1] * dist, q0[2] + c * s0 * t - c * c * G / (1 + c * c) * t ** 2 / 2])
    V = np.array([d[0] * (s0 - rate * t), d[1] * (s0 - rate * t), c * s0 - c * c * G / (1 + c * c) * t])
    tr = simulate(mech, (0, 0.5), q0, qd0, method="variational", step=0.03, t_eval=t)
    assert np.abs(tr.q - Q).max() < 1e-12 and np.abs(tr.qdot - V).max() < 1e-12
    # a wrong multiplier (the vakonomic or the unconstrained fall) would be far off
    assert np.abs(Q[2] - (q0[2] + c * s0 * t - G * t ** 2 / 2)).max() > 0.1


def test_energy_bounded_for_homogeneous_nonlinear_constraint():
    """Two particles with parallel velocities and a spring (homogeneous constraint of degree 2: energy conserved
    under Chetaev's rule): the relative energy error over 10⁴ steps stays in its band."""
    mech = discrete_mechanics(System.load("parallel_velocities"))
    q0, qd0 = [1.0, 0.0, -0.5, 0.3], [0.2, 0.5, 0.4, 1.0]
    tr = simulate(mech, (0, 500), q0, qd0, method="variational", step=0.05, points=2001)
    E = tr.energy()
    err = np.abs(E - E[0]) / abs(E[0])
    first, last = err[:400].max(), err[-400:].max()
    assert last < 1e-7 and last < 1.05 * first, (first, last)
    assert np.abs(tr.constraint_residuals()).max() < 1e-12


def test_hamel_refuses_nonlinear_constraints_in_one_line():
    q0, qd0 = [0, 0, 0], [1.0, 0, 0.5]
    with pytest.raises(NonlinearConstraintError, match="no adapted frame") as info:
        simulate(System.load("appell_hamel"), 1.0, q0, qd0, method="hamel", step=0.01)
    assert "\n" not in str(info.value)


# --- control inputs ----------------------------------------------------------------------------------------------
MM, II, AA, CC, KK = 1.0, 1.0, 0.5, 0.1, 0.05  # sleigh_with_motor's [values]


def motor_start(th0=0.3, u0=1.0, w0=0.4):
    q0 = [0.1, -0.2, th0]
    qd0 = [u0 * math.cos(th0) - AA * w0 * math.sin(th0), u0 * math.sin(th0) + AA * w0 * math.cos(th0), w0]
    return q0, qd0, u0, w0


@pytest.fixture(scope="module")
def motor():
    return discrete_mechanics(System.load("sleigh_with_motor"))


@pytest.mark.parametrize("method", ["variational", "hamel"])
def test_time_dependent_torque_order_two(motor, method):
    q0, qd0, u0, w0 = motor_start()
    times = np.linspace(0, 5, 11)
    ref = sleigh_reference(times, q0, u0, w0, MM, II, AA, CC, KK, tau=lambda t: 0.2 * math.sin(t) + 0.1 * math.cos(3 * t))
    errors = []
    for h in (0.04, 0.02, 0.01):
        tr = simulate(motor, (0, 5), q0, qd0, method=method, step=h, t_eval=times,
                      inputs={"tau": "0.2*sin(t) + 0.1*cos(3*t)"})
        errors.append(np.abs(tr.q - ref[:3]).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2) < 0.1), (errors, orders)
    unforced = simulate(motor, (0, 5), q0, qd0, method=method, step=0.01, t_eval=times, inputs={"tau": 0})
    assert np.abs(unforced.q - ref[:3]).max() > 100 * errors[-1]  # the torque matters


def test_feedback_torque_in_the_velocities_against_the_hand_equations(motor):
    """``τ = 0.3 − 0.4 θ̇ + 0.1 x`` (a velocity, a coordinate): the sleigh's equations with this torque by hand;
    the expression and a callable of ``(t, (q, q̇))`` give the same discrete motion."""
    q0, qd0, u0, w0 = motor_start()

    def f(t, s):
        x, y, th, u, w = s
        tau = 0.3 - 0.4 * w + 0.1 * x
        return [u * math.cos(th) - AA * w * math.sin(th), u * math.sin(th) + AA * w * math.cos(th), w,
                AA * w ** 2 - CC * u / MM, (tau - KK * w - MM * AA * u * w - CC * AA ** 2 * w) / (II + MM * AA ** 2)]

    times = np.linspace(0, 4, 9)
    ref = solve_ivp(f, (0, 4), [*q0, u0, w0], t_eval=times, rtol=1e-13, atol=1e-14, method="DOP853").y
    errors = []
    for h in (0.02, 0.01):
        tr = simulate(motor, (0, 4), q0, qd0, method="variational", step=h, t_eval=times,
                      inputs={"tau": "0.3 - 0.4*theta_dot + 0.1*x"})
        errors.append(np.abs(tr.q - ref[:3]).max())
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.1 and errors[1] < 1e-4, errors
    same = simulate(motor, (0, 4), q0, qd0, method="variational", step=0.01, t_eval=times,
                    inputs={"tau": lambda t, y: 0.3 - 0.4 * y[5] + 0.1 * y[0]})
    assert np.abs(same.q - tr.q).max() < 1e-9


def test_inputs_missing_or_unknown_are_one_line_errors(motor):
    q0, qd0, *_ = motor_start()
    with pytest.raises(InputError, match="no value for the input"):
        simulate(motor, 1.0, q0, qd0, method="variational", step=0.1)
    with pytest.raises(InputError, match="not an input"):
        simulate(motor, 1.0, q0, qd0, method="hamel", step=0.1, inputs={"tau": 0, "torque": 1})


# --- events ------------------------------------------------------------------------------------------------------
def sleigh_event_reference(q0, u0, w0, a=0.5):
    def f(t, s):
        x, y, th, u, w = s
        return [u * math.cos(th) - a * w * math.sin(th), u * math.sin(th) + a * w * math.cos(th), w, a * w * w,
                -a * u * w / (1 + a * a)]

    def ev(t, s):
        return s[1] - 0.3

    ev.terminal, ev.direction = True, 1
    return solve_ivp(f, (0, 10), [*q0, u0, w0], events=ev, rtol=1e-13, atol=1e-14, method="DOP853").t_events[0][0]


@pytest.mark.parametrize("method", ["variational", "hamel"])
def test_stop_when_event_time_converges_at_order_two(method):
    th0, u0, w0 = 0.3, 0.2, 1.0
    q0 = [0.1, -0.2, th0]
    qd0 = [u0 * math.cos(th0) - 0.5 * w0 * math.sin(th0), u0 * math.sin(th0) + 0.5 * w0 * math.cos(th0), w0]
    t_ref = sleigh_event_reference(q0, u0, w0)
    system = System.load("chaplygin_sleigh")
    g = stop_event("y > 0.3", ["x", "y", "theta"])
    errors = []
    for h in (0.04, 0.02, 0.01):
        tr = simulate(system, (0, 10), q0, qd0, method=method, step=h, points=101, events=[g])
        errors.append(abs(tr.t[-1] - t_ref))
        assert tr.message.startswith(f"stopped by an event at t = {tr.t[-1]:.10g}")
        assert abs(tr.q[1, -1] - 0.3) < 1e-12 and tr.t_events[0][0] == tr.t[-1]
        assert np.all(np.diff(tr.t) > 0) and np.allclose(tr.t[:-1], np.linspace(0, 10, 101)[:len(tr.t) - 1])
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2) < 0.15) and errors[-1] < 5e-5, (errors, orders)


def test_event_direction_and_non_terminal_events():
    """A non-terminal event is recorded at each crossing and the run goes on; a terminal event in the other
    direction does not stop a crossing the wrong way."""
    system = discrete_mechanics(System.load("chaplygin_sleigh"))
    q0, qd0 = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]  # straight ahead: x = t

    def passing(t, y):
        return y[0] - 0.55

    passing.terminal = False
    down = stop_event("x < 0.75", ["x", "y", "theta"])  # x only grows: never triggered
    tr = simulate(system, (0, 2), q0, qd0, method="variational", step=0.1, points=5, events=[passing, down])
    assert tr.t[-1] == 2.0 and not tr.message.startswith("stopped")
    assert abs(tr.t_events[0][0] - 0.55) < 1e-12 and tr.t_events[1].size == 0
    assert abs(tr.y_events[0][0][3] - 1.0) < 1e-12  # x_dot at the event


# --- the command line --------------------------------------------------------------------------------------------
def test_cli_inputs_stop_when_and_the_scheme_note(capsys, tmp_path):
    from anholo.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    path = tmp_path / "motor.csv"
    code, out, err = run("simulate", "sleigh_with_motor", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 5,
                         "--method", "hamel", "--step", 0.01, "--input", "tau=0.2*sin(t) - k*theta_dot",
                         "--stop-when", "theta > 0.1", "--points", 51, "--csv", path)
    assert code == 0, err
    assert "discrete Hamel: midpoint form in the adapted frame" in out and "stopped by an event at t = " in out
    rows = np.array(list(csv.reader(open(path)))[1:], dtype=float)
    assert abs(rows[-1, 3] - 0.1) < 1e-12 and rows[-2, 3] < 0.1  # theta at the event, and before it
    assert "stopped at t = " in err and "theta > 0.1" in err
    code, out, err = run("simulate", "chaplygin_sleigh", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1,
                         "--method", "hamel", "--step", 0.1, "--quiet")
    assert code == 0 and "Cayley map on SE(2) of x, y, theta" in out
    code, out, err = run("simulate", "appell_hamel", "--q0", "0,0,0", "--qdot0", "3,0,1.5", "--t-end", 0.5,
                         "--method", "variational", "--step", 0.05, "--quiet")
    assert code == 0 and "Chetaev forces at the midpoint" in out, err
    code, out, err = run("simulate", "appell_hamel", "--q0", "0,0,0", "--qdot0", "3,0,1.5", "--t-end", 0.5,
                         "--method", "hamel", "--step", 0.05, "--quiet")
    assert code != 0 and "no adapted frame" in err and len(err.strip().splitlines()) == 1


def test_chaplygin_ball_gets_the_cayley_scheme_on_its_se2_factor():
    """docs/integrators.rst: the ball's contact point and heading angle form an SE(2) factor (its other Euler
    angles are shape coordinates); ``--method hamel`` runs the Cayley scheme on its SO(3) factor, which
    takes priority (tests/numerics/test_lie_hamel_so3.py)."""
    from anholo.numerics.lie_hamel import se2_factor

    ball = System.load("chaplygin_ball")
    names = [c.name for c in ball.chart.coordinates]
    assert [names[i] for i in se2_factor(ball)] == ["x", "y", "phi"]


PARALLEL_ON_A_CIRCLE = """
name = "Parallel velocities, the first particle on the unit circle"
coordinates = ["x1", "y1", "x2", "y2"]
parameters = ["k"]
lagrangian = "(x1_dot^2 + y1_dot^2 + x2_dot^2 + y2_dot^2)/2 - k*((x1 - x2)^2 + (y1 - y2)^2)/2"
constraints = ["x1_dot*y2_dot - y1_dot*x2_dot"]
holonomic = ["x1^2 + y1^2 - 1"]
[values]
k = 1
"""


def test_nonlinear_with_a_holonomic_constraint_order_two(tmp_path):
    """Parallel velocities (Chetaev) and ``x1² + y1² = 1`` (position-level, multiplier on ∇f): against
    ``q̈ = F + λJ + μ∇f`` by hand, ``J = (ẏ2, −ẋ2, −ẏ1, ẋ1)``, ``∇f = (2x1, 2y1, 0, 0)``, with λ, μ from
    ``J·q̈ = 0`` (φ is bilinear in the velocities, free of q) and ``2|ṗ1|² + ∇f·q̈ = 0``."""
    path = tmp_path / "parallel_circle.toml"
    path.write_text(PARALLEL_ON_A_CIRCLE)
    mech = discrete_mechanics(System.load(str(path)))
    assert mech.chetaev and (mech.k, mech.r) == (1, 1)

    def rhs(t, s):
        x1, y1, x2, y2, a, b, c, d = s
        F = np.array([-(x1 - x2), -(y1 - y2), x1 - x2, y1 - y2])
        J = np.array([d, -c, -b, a])
        N = np.array([2 * x1, 2 * y1, 0.0, 0.0])
        lam, mu = np.linalg.solve([[J @ J, J @ N], [N @ J, N @ N]], [-J @ F, -2 * (a * a + b * b) - N @ F])
        return np.concatenate([[a, b, c, d], F + lam * J + mu * N])

    q0, qd0 = [1.0, 0.0, -0.5, 0.3], [0.0, 0.5, 0.0, 1.0]
    times = np.linspace(0, 2, 5)
    ref = solve_ivp(rhs, (0, 2), q0 + qd0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=times).y
    errors = []
    for h in (0.02, 0.01):
        tr = simulate(mech, (0, 2), q0, qd0, method="variational", step=h, t_eval=times)
        errors.append(max(np.abs(tr.q - ref[:4]).max(), np.abs(tr.qdot - ref[4:]).max()))
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.1 and errors[1] < 1e-3, errors
    grid = simulate(mech, (0, 2), q0, qd0, method="variational", step=0.01)
    assert np.abs(grid.holonomic_residuals()).max() < 1e-12
    v = np.diff(grid.q, axis=1) / 0.01
    assert np.abs(v[0] * v[3] - v[1] * v[2]).max() < 1e-10  # the discrete constraint φ(v_k) = 0

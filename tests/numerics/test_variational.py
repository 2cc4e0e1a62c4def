"""The discrete Lagrange–d'Alembert integrator (``simulate(method="variational", step=h)``).

Oracles, all independent of anholo's derivations:

* the Chaplygin sleigh's equations written here by hand (``u̇ = a θ̇²``, ``(I + m a²) θ̈ = −m a u θ̇``,
  ``ẋ = u cos θ − a θ̇ sin θ``, ``ẏ = u sin θ + a θ̇ cos θ``) integrated by scipy's DOP853 at tight
  tolerance: the order measured by step halving is 2;
* the McLachlan–Perlmutter contact oscillator (constraint ``ẋ + y ż = 0``,
  ``H = ½(|q̇|² + |q|² + ε x² z²)``) by its coordinate multiplier equations written here, and its
  conserved quantities in closed form, ``H − H_y`` and ``H_y = ½(ẏ² + y²)``;
* the pendulum ``l φ̈ = −g sin φ`` for the Cartesian pendulum with the holonomic constraint
  ``x² + y² = l²``;
* the discrete constraint ``κ(q̄)(q_{k+1} − q_k)/h + c = 0`` evaluated here from the constraint as written.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from anholo.errors import InitialStateError, SimulationError
from anholo.numerics import simulate
from anholo.numerics.variational import discrete_mechanics
from anholo.system import System

from oracles import CONTACT_OSCILLATOR, contact_integral, contact_reference, sleigh_reference


M, INERTIA, A = 1.0, 1.0, 0.5  # the sleigh's [values]


@pytest.fixture(scope="module")
def sleigh():
    return discrete_mechanics(System.load("chaplygin_sleigh"))


@pytest.fixture(scope="module")
def contact(tmp_path_factory):
    path = tmp_path_factory.mktemp("systems") / "contact.toml"
    path.write_text(CONTACT_OSCILLATOR)
    return System.load(str(path))


def sleigh_state(th=0.3, u=1.0, w=0.7):
    qd = [math.cos(th) * u - math.sin(th) * A * w, math.sin(th) * u + math.cos(th) * A * w, w]
    return [0.1, -0.2, th], qd


def sleigh_solution(q0, qd0, times):
    """Positions and velocities of the sleigh by its body-velocity equations (``oracles.sleigh_reference``)."""
    th0 = q0[2]
    u0 = math.cos(th0) * qd0[0] + math.sin(th0) * qd0[1]
    x, y, th, u, w = sleigh_reference(times, q0, u0, qd0[2], M, INERTIA, A)
    return np.array([x, y, th]), np.array([u * np.cos(th) - A * w * np.sin(th), u * np.sin(th) + A * w * np.cos(th), w])


@pytest.mark.parametrize("method", ["variational", "hamel"])
def test_order_two_by_step_halving_on_the_sleigh(sleigh, method):
    q0, qd0 = sleigh_state()
    times = np.linspace(0, 4, 9)
    Qref, Uref = sleigh_solution(q0, qd0, times)
    errors = []
    for h in (0.04, 0.02, 0.01):
        tr = simulate(sleigh, (0, 4), q0, qd0, method=method, step=h, t_eval=times)
        errors.append(max(np.abs(tr.q - Qref).max(), np.abs(tr.qdot - Uref).max()))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2) < 0.1), (errors, orders)
    assert errors[-1] < 1e-4


def test_discrete_constraint_holds_to_round_off(sleigh):
    q0, qd0 = sleigh_state(th=1.1, u=2.0, w=-1.5)
    h = 0.05
    tr = simulate(sleigh, (0, 20), q0, qd0, method="variational", step=h)  # every grid point
    assert len(tr.t) == 401
    x, y, th = tr.q
    thm = 0.5 * (th[1:] + th[:-1])
    discrete = (-np.sin(thm) * np.diff(x) + np.cos(thm) * np.diff(y) - A * np.diff(th)) / h
    assert np.abs(discrete).max() < 1e-12
    # and the output velocities lie on the constraint
    assert np.abs(tr.constraint_residuals()).max() < 1e-12
    # a perturbed scheme (the constraint at the left point instead of the midpoint) violates it
    left = (-np.sin(th[:-1]) * np.diff(x) + np.cos(th[:-1]) * np.diff(y) - A * np.diff(th)) / h
    assert np.abs(left).max() > 1e-4


def test_sleigh_energy_bounded_and_the_asymptotic_motion(sleigh):
    """Energy ½m(u² + a²θ̇²) + ½Iθ̇² is conserved; the sleigh ends in straight motion u → √(2E/m)."""
    q0, qd0 = sleigh_state(u=0.2, w=2.0)
    tr = simulate(sleigh, (0, 500), q0, qd0, method="variational", step=0.05, points=2001)  # 10^4 steps
    E = tr.energy()
    assert np.abs(E / E[0] - 1).max() < 1e-3
    n = len(E) // 2
    assert np.abs(E[n:] / E[0] - 1).max() < 2 * np.abs(E[:n] / E[0] - 1).max() + 1e-12  # no drift
    th, w = tr.q[2, -1], tr.qdot[2, -1]
    u = math.cos(th) * tr.qdot[0, -1] + math.sin(th) * tr.qdot[1, -1]
    assert abs(w) < 1e-3 and abs(u - math.sqrt(2 * E[0] / M)) < 1e-3


def contact_integrals(tr, eps=0.1):
    y, yd = tr.q[1], tr.qdot[1]
    return contact_integral(tr.q, tr.qdot, eps), 0.5 * (yd ** 2 + y ** 2)


def test_contact_oscillator_order_and_bounded_integrals(contact):
    q0, qd0 = [0.0, 1.0, 1.0], [-1.0, 0.5, 1.0]
    times = np.linspace(0, 5, 6)
    Qref, Uref = contact_reference(q0, qd0, times)
    errors = []
    for h in (0.05, 0.025):
        tr = simulate(contact, (0, 5), q0, qd0, method="variational", step=h, t_eval=times)
        errors.append(max(np.abs(tr.q - Qref).max(), np.abs(tr.qdot - Uref).max()))
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.15, errors
    # 10^4 steps: the conserved H − H_y stays within a band that does not grow; H_y (a harmonic
    # oscillator, integrated by the midpoint rule) to round-off
    tr = simulate(contact, (0, 1000), q0, qd0, method="variational", step=0.1, points=2001)
    I, Hy = contact_integrals(tr)
    err = np.abs(I - I[0])
    n = len(err) // 2
    assert err.max() < 0.02
    assert err[n:].max() < 1.2 * err[:n].max()
    assert np.abs(Hy - Hy[0]).max() < 1e-12


def test_holonomic_pendulum_on_the_circle_and_order_two():
    system = System.load("nonminimal_pendulum")  # m = 1, l = 1, g = 9.81; x down
    phi0, w0 = 0.8, 0.0
    q0 = [math.cos(phi0), math.sin(phi0)]
    qd0 = [-math.sin(phi0) * w0, math.cos(phi0) * w0]
    times = np.linspace(0, 2, 5)
    sol = solve_ivp(lambda t, s: [s[1], -9.81 * math.sin(s[0])], (0, 2), [phi0, w0], method="DOP853",
                    rtol=1e-13, atol=1e-14, t_eval=times)
    ref = np.array([np.cos(sol.y[0]), np.sin(sol.y[0])])
    errors = []
    for h in (0.01, 0.005):
        tr = simulate(system, (0, 2), q0, qd0, method="variational", step=h, t_eval=times)
        errors.append(np.abs(tr.q - ref).max())
        assert np.abs(tr.holonomic_residuals()).max() < 1e-12  # grid points: f(q) = 0 to round-off
        assert np.abs(tr.constraint_residuals()).max() < 1e-12
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.15, errors


def test_hamel_and_dla_give_the_same_discrete_flow(contact):
    q0, qd0 = [0.2, -0.4, 0.3], [0.4 * 0.7, 0.1, 0.7]
    a = simulate(contact, (0, 30), q0, qd0, method="variational", step=0.05, points=31)
    b = simulate(contact, (0, 30), q0, qd0, method="hamel", step=0.05, points=31)
    assert np.abs(a.q - b.q).max() < 1e-10 and np.abs(a.qdot - b.qdot).max() < 1e-10


def test_unconstrained_oscillator_is_the_implicit_midpoint_map(tmp_path):
    """Without constraints and with L = ½(ẋ² − x²) the scheme is the implicit midpoint rule for
    (x, p): the Cayley map (I − hA/2)^{-1}(I + hA/2), A = [[0, 1], [−1, 0]], which conserves ½(p² + x²)."""
    path = tmp_path / "osc.toml"
    path.write_text('name = "oscillator"\ncoordinates = ["x"]\nlagrangian = "(x_dot^2 - x^2)/2"\n')
    h, N = 0.3, 1000
    tr = simulate(System.load(str(path)), (0, N * h), [1.0], [0.0], method="variational", step=h)
    Amat = np.array([[0.0, 1.0], [-1.0, 0.0]])
    cayley = np.linalg.solve(np.eye(2) - h * Amat / 2, np.eye(2) + h * Amat / 2)
    z = np.array([1.0, 0.0])
    xs = [z[0]]
    for _ in range(N):
        z = cayley @ z
        xs.append(z[0])
    assert np.abs(tr.q[0] - np.array(xs)).max() < 1e-11
    E = tr.energy()
    assert np.abs(E - 0.5).max() < 1e-12


@pytest.mark.parametrize("method", ["variational", "hamel"])
def test_forces_and_time_dependence_knife_edge_on_a_tilting_plane(method):
    """L depending on t, viscous forces and a periodic torque (``tilted_knife_edge``: m = 1, I = 0.5,
    g = 9.81, e = 0.3, w = 2, c = 0.1).  With the blade velocity u (ẋ = u cos θ, ẏ = u sin θ):
    m u̇ = −m g sin(e sin wt) cos θ − c u, I θ̈ = cos wt; the discrete forces (h/2)F keep order 2."""
    m, inertia, g, e, w, c = 1.0, 0.5, 9.81, 0.3, 2.0, 0.1

    def rhs(t, s):
        x, y, th, u, om = s
        return [u * math.cos(th), u * math.sin(th), om,
                -g * math.sin(e * math.sin(w * t)) * math.cos(th) - c * u / m, math.cos(w * t) / inertia]

    th0, u0, om0 = 0.4, 0.5, -0.3
    times = np.linspace(0, 3, 4)
    ref = solve_ivp(rhs, (0, 3), [0.0, 0.0, th0, u0, om0], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=times).y
    system = System.load("tilted_knife_edge")
    errors = []
    for h in (0.02, 0.01):
        tr = simulate(system, (0, 3), [0.0, 0.0, th0], [u0 * math.cos(th0), u0 * math.sin(th0), om0], method=method,
                      step=h, t_eval=times)
        errors.append(max(np.abs(tr.q - ref[:3]).max(), np.abs(tr.qdot[2] - ref[4]).max()))
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.15, errors
    assert errors[-1] < 1e-3


def test_errors_are_specific(sleigh):
    q0, qd0 = sleigh_state()
    with pytest.raises(SimulationError, match="fixed step"):
        simulate(sleigh, 1.0, q0, qd0, method="variational")
    with pytest.raises(SimulationError, match="positive"):
        simulate(sleigh, 1.0, q0, qd0, method="variational", step=-0.1)
    with pytest.raises(InitialStateError):
        simulate(sleigh, 1.0, q0, [1.0, 1.0, 0.0], method="variational", step=0.1)
    with pytest.raises(SimulationError, match="step"):
        simulate(System.load("chaplygin_sleigh").nonholonomic().field(), 1.0, q0, qd0, step=0.1)
    with pytest.raises(SimulationError, match="System"):
        simulate(System.load("chaplygin_sleigh").nonholonomic().field(), 1.0, q0, qd0, method="hamel", step=0.1)
    with pytest.raises(SimulationError, match="dense_output"):
        simulate(sleigh, 1.0, q0, qd0, method="variational", step=0.1, dense_output=True)


def test_cli_keeps_the_csv_contract(capsys, tmp_path):
    """``anholo simulate --method variational|hamel --step H``: the columns t, coordinates,
    <coordinate>_dot at --points times; the sleigh started straight ahead moves straight ahead."""
    import csv

    from anholo.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    for method in ("variational", "hamel"):
        path = tmp_path / f"{method}.csv"
        code, out, err = run("simulate", "chaplygin_sleigh", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 2,
                             "--method", method, "--step", 0.03, "--points", 7, "--csv", path)
        assert code == 0, err
        rows = list(csv.reader(open(path)))
        assert rows[0] == ["t", "x", "y", "theta", "x_dot", "y_dot", "theta_dot"]
        data = np.array(rows[1:], dtype=float)
        assert np.allclose(data[:, 0], np.linspace(0, 2, 7))
        assert np.allclose(data[:, 1], data[:, 0], atol=1e-12) and np.allclose(data[:, 4], 1.0, atol=1e-12)
    code, out, err = run("simulate", "chaplygin_sleigh", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 2,
                         "--method", "variational")
    assert code != 0 and "--step" in err
    code, out, err = run("simulate", "chaplygin_sleigh", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 2,
                         "--method", "hamel", "--step", 0.1, "--field", "vakonomic")
    assert code != 0 and "nonholonomic field" in err


@pytest.mark.slow
def test_rattleback_large_system_converges_to_the_field_solution():
    """The rattleback (Maggi's route, a square root in L and the constraints): the variational scheme
    converges at order 2 to the DOP853 solution of anholo's nonholonomic field (a cross-check of two
    routes; the oracle of the field itself is tests/dynamics), and keeps its energy."""
    from anholo.numerics import compile_system, from_system

    system = System.load("rattleback")
    mech = discrete_mechanics(system)
    t = math.radians(0.5)
    q0, qd0 = [0.0, t, t, 0.0, 0.0], [-5.0, 0.0, 0.0, 0.0, 0.0]
    qd0[3:] = [0.0, 0.0]
    p = mech.parameter_vector()
    base = mech.constraint_functions(np.array(q0)[:, None], np.array(qd0)[:, None], p)[:, 0]
    cols = [mech.constraint_functions(np.array(q0)[:, None], (np.array(qd0) + e)[:, None], p)[:, 0] - base
            for e in np.eye(5)[3:]]
    qd0[3:] = np.linalg.solve(np.column_stack(cols), -base)
    times = np.linspace(0, 1, 3)
    ref = simulate(compile_system(from_system(system)), (0, 1), q0, qd0, rtol=1e-12, atol=1e-13, t_eval=times)
    errors = []
    for h in (0.002, 0.001):
        tr = simulate(mech, (0, 1), q0, qd0, method="variational", step=h, t_eval=times)
        errors.append(np.abs(tr.q - ref.q).max())
        assert np.abs(tr.constraint_residuals()).max() < 1e-12
    assert abs(math.log2(errors[0] / errors[1]) - 2) < 0.2, errors

"""Trajectory optimisation (anholo.numerics.optimal_control): the optimal motions obey the equations they claim.

Oracles, all written here and independent of anholo's derivations:

* the car-like robot's Lagrange–d'Alembert equations in coordinates by the multiplier method,
  ``W q̈ = Q(u) + κᵀλ``, ``κ q̈ + κ̇ q̇ = 0`` (Neimark & Fufaev (1972); docs/nonholonomic.rst), integrated
  with scipy's ``solve_ivp`` under the NLP's inputs (interpolated by a cubic spline written here): the
  simulated motion must retrace the NLP's states;
* the constraints ``κ(q) q̇ = 0`` and the boundary values, checked on the returned arrays;
* the vakonomic (sub-Riemannian geodesic) equations of the nonholonomic particle, derived here with
  sympy from the multiplication rule ``L + λ(ż − y ẋ)`` (Arnold, Kozlov & Neishtadt (1988)): the
  kinematic energy-optimal path is one of their solutions (shot from its initial point to its end
  point), and differs from the nonholonomic motion with the same initial velocity;
* the cost recomputed by quadrature of the spline of the inputs.
"""

import builtins
import json
import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline
from scipy.optimize import least_squares

ca = pytest.importorskip("casadi")

from anholo.errors import AnholoError, ArgumentError, MissingParameterError  # noqa: E402
from anholo.numerics.optimal_control import (CasadiMissingError, OptimalTrajectory, SolverFailedError,  # noqa: E402
                                             optimal_control)
from anholo.system import System  # noqa: E402

CAR = """
name = "Car-like robot"
description = "Rear axle midpoint (x, y), heading theta, steering angle phi, wheelbase l."
coordinates = ["x", "y", "theta", "phi"]
parameters = ["m", "I", "J", "l"]
inputs = ["drive", "steer"]
lagrangian = "m*(x_dot^2 + y_dot^2)/2 + I*theta_dot^2/2 + J*phi_dot^2/2"
constraints = [
    "-sin(theta)*x_dot + cos(theta)*y_dot",
    "-sin(theta + phi)*x_dot + cos(theta + phi)*y_dot + l*cos(phi)*theta_dot",
]
forces = ["drive*cos(theta)", "drive*sin(theta)", "0", "steer"]

[values]
m = 1
I = 0.5
J = 0.1
l = 1
"""
m_, I_, J_, l_ = 1.0, 0.5, 0.1, 1.0
T = 6.0
REST0 = {"x": 0, "y": 0, "theta": 0, "phi": 0}
PARKED = {"x": 0, "y": 0.5, "theta": 0, "phi": 0}


@pytest.fixture(scope="module")
def car(tmp_path_factory):
    path = tmp_path_factory.mktemp("car") / "car.toml"
    path.write_text(CAR)
    return System.load(str(path))


@pytest.fixture(scope="module")
def parked(car):
    """Parallel parking with the motor force and the steering torque, from rest to rest."""
    return optimal_control(car, T, {**REST0, "v1": 0, "v2": 0}, {**PARKED, "v1": 0, "v2": 0},
                           bounds={"phi": (-0.6, 0.6)}, nodes=40)


def kappa(q):
    th, ph = q[2], q[3]
    return np.array([[-math.sin(th), math.cos(th), 0.0, 0.0],
                     [-math.sin(th + ph), math.cos(th + ph), l_ * math.cos(ph), 0.0]])


def car_rhs(inputs):
    """The multiplier method in coordinates: W q̈ = Q + κᵀλ, κ q̈ = −κ̇ q̇ (solved numerically)."""
    W = np.diag([m_, m_, I_, J_])

    def rhs(t, s):
        q, qd = s[:4], s[4:]
        th, ph = q[2], q[3]
        thd, phd = qd[2], qd[3]
        drive, steer = inputs(t)
        Q = np.array([drive * math.cos(th), drive * math.sin(th), 0.0, steer])
        K = kappa(q)
        Kdot = np.array([[-math.cos(th) * thd, -math.sin(th) * thd, 0.0, 0.0],
                         [-math.cos(th + ph) * (thd + phd), -math.sin(th + ph) * (thd + phd),
                          -l_ * math.sin(ph) * phd, 0.0]])
        A = np.block([[W, -K.T], [K, np.zeros((2, 2))]])
        b = np.concatenate([Q, -Kdot @ qd])
        qdd = np.linalg.solve(A, b)[:4]
        return np.concatenate([qd, qdd])

    return rhs


def quadratic_inputs(traj, k, scale=1.0):
    """The inputs on mesh interval k: the quadratic through the values at t_k, the midpoint and t_{k+1}."""
    h = traj.T / traj.nodes
    ua, uc, ub = (scale * traj.u[:, j] for j in (2 * k, 2 * k + 1, 2 * k + 2))

    def u(t):
        s = (t - k * h) / h
        return ua * (2 * s - 1) * (s - 1) + uc * 4 * s * (1 - s) + ub * s * (2 * s - 1)

    return u


def local_errors(traj, scale=1.0):
    """From the NLP's state at each mesh point, integrate the coordinate equations over one interval under the
    interpolated inputs; the largest distance to the NLP's state at the end of the interval."""
    h = traj.T / traj.nodes
    worst = 0.0
    for k in range(traj.nodes):
        s0 = np.concatenate([traj.q[:, 2 * k], traj.qdot[:, 2 * k]])
        sol = solve_ivp(car_rhs(quadratic_inputs(traj, k, scale)), (k * h, (k + 1) * h), s0, rtol=1e-12, atol=1e-13,
                        method="DOP853")
        worst = max(worst, np.abs(sol.y[:4, -1] - traj.q[:, 2 * k + 2]).max(),
                    np.abs(sol.y[4:, -1] - traj.qdot[:, 2 * k + 2]).max())
    return worst


def simulate_car(traj, scale=1.0):
    """The whole motion open loop, from the NLP's initial state, under the inputs interpolated by quadratics on
    the mesh intervals (a cubic spline through all the collocation values does worse: the midpoint values of
    Hermite–Simpson are less smooth than the states)."""
    h = traj.T / traj.nodes
    pieces = [quadratic_inputs(traj, k, scale) for k in range(traj.nodes)]

    def inputs(t):
        return pieces[min(int(t / h), traj.nodes - 1)](t)

    sol = solve_ivp(car_rhs(inputs), (0, traj.T), np.concatenate([traj.q[:, 0], traj.qdot[:, 0]]),
                    t_eval=traj.t, rtol=1e-11, atol=1e-12, method="DOP853")
    assert sol.success
    return sol.y


def test_parking_solves_and_meets_its_boundary_values(parked):
    assert parked.status == "Solve_Succeeded"
    assert parked.max_violation < 1e-8
    assert parked.t.shape == (81,) and parked.q.shape == (4, 81) and parked.u.shape == (2, 81)
    for i, name in enumerate(parked.coordinate_names):
        assert abs(parked.q[i, 0] - REST0[name]) < 1e-12 and abs(parked.q[i, -1] - PARKED[name]) < 1e-12
    assert np.abs(parked.qdot[:, [0, -1]]).max() < 1e-12          # at rest at both ends
    assert np.abs(parked.q[3]).max() <= 0.6 + 1e-12               # the steering bound
    assert np.abs(parked.q[1]).max() > 0.49                       # it did move sideways: nonholonomic manoeuvre


def test_parking_motion_keeps_the_rolling_constraints(parked):
    residual = max(np.abs(kappa(parked.q[:, j]) @ parked.qdot[:, j]).max() for j in range(parked.t.size))
    assert residual < 1e-12   # the state lies on C by construction (q_dot = X_alpha v^alpha)


def test_parking_motion_solves_the_lagrange_dalembert_equations_with_its_inputs(parked):
    """Interval by interval, the coordinate equations under the NLP's inputs carry the NLP's state at t_k to
    its state at t_{k+1} (to the local error of the collocation); inputs 1 % off do not."""
    err = local_errors(parked)
    assert err < 3e-5, err
    assert local_errors(parked, scale=1.01) > 10 * err


def test_parking_motion_open_loop(parked):
    """The whole manoeuvre open loop: the simulated motion parks the car where the NLP says; 1 % more input
    does not."""
    y = simulate_car(parked)
    gap = np.abs(y[:4] - parked.q).max()
    assert gap < 1e-3, gap
    assert np.abs(y[:4, -1] - [0.0, 0.5, 0.0, 0.0]).max() < 1e-3     # it parks
    assert np.abs(simulate_car(parked, 1.01)[:4] - parked.q).max() > 10 * gap


def test_local_error_shrinks_with_h(car, parked):
    """Hermite–Simpson: halving h divides the local error by about 10-16 (at least 6 here)."""
    coarse = optimal_control(car, T, {**REST0, "v1": 0, "v2": 0}, {**PARKED, "v1": 0, "v2": 0},
                             bounds={"phi": (-0.6, 0.6)}, nodes=20)
    assert local_errors(parked) < local_errors(coarse) / 6


def test_cost_is_the_integral_of_half_the_squared_inputs(parked):
    h = parked.T / parked.nodes
    ell = 0.5 * (parked.u ** 2).sum(axis=0)
    simpson = sum(h / 6 * (ell[2 * k] + 4 * ell[2 * k + 1] + ell[2 * k + 2]) for k in range(parked.nodes))
    assert abs(simpson - parked.cost) < 1e-10 * parked.cost
    fine = np.linspace(0, T, 4001)
    u = CubicSpline(parked.t, parked.u, axis=1)(fine)
    J = np.trapezoid(0.5 * (u ** 2).sum(axis=0), fine)
    assert abs(J - parked.cost) < 1e-2 * parked.cost


def test_control_interpolates_the_collocation_values(parked):
    assert np.allclose(parked.control(parked.t), parked.u, atol=1e-13)
    h = parked.T / parked.nodes
    for k in (0, 7, parked.nodes - 1):
        tt = k * h + np.array([0.1, 0.3, 0.77]) * h
        expected = np.column_stack([quadratic_inputs(parked, k)(x) for x in tt])
        assert np.abs(parked.control(tt) - expected).max() < 1e-12
    assert parked.control(1.0).shape == (2,)


def test_maggi_route_and_trapezoidal_rule_reach_the_same_optimum(car, parked):
    """The same problem in Maggi's implicit form (free velocities x_dot, phi_dot, M = g_D: an implicit
    transcription) and by the trapezoidal rule: the optimal cost is a property of the problem."""
    maggi = car.maggi()
    names = [v.name for v in maggi.free_velocities]
    other = optimal_control(maggi, T, {**REST0, **{n: 0 for n in names}}, {**PARKED, **{n: 0 for n in names}},
                            bounds={"phi": (-0.6, 0.6)}, nodes=40)
    assert abs(other.cost - parked.cost) < 1e-3 * parked.cost
    assert local_errors(other) < 3e-5
    trap = optimal_control(car, T, {**REST0, "v1": 0, "v2": 0}, {**PARKED, "v1": 0, "v2": 0},
                           bounds={"phi": (-0.6, 0.6)}, nodes=80, method="trapezoidal", guess=parked)
    assert trap.t.shape == (81,)
    assert abs(trap.cost - parked.cost) < 2e-2 * parked.cost


def test_natural_velocity_boundary_values_and_user_cost(car):
    traj = optimal_control(car, 3.0, REST0, {"x": 1.0, "y": 0.2, "x_dot": 0.0}, mode="kinematic",
                           cost="x_dot^2 + y_dot^2 + theta_dot^2 + phi_dot^2", nodes=30)
    assert abs(traj.qdot[0, -1]) < 1e-9 and abs(traj.q[0, -1] - 1.0) < 1e-12
    assert traj.cost_expression.free_symbols == {sp.Symbol(s, real=True) for s in
                                                 ("x_dot", "y_dot", "theta_dot", "phi_dot")}
    ell = (traj.qdot ** 2).sum(axis=0)
    h = traj.T / traj.nodes
    J = sum(h / 6 * (ell[2 * k] + 4 * ell[2 * k + 1] + ell[2 * k + 2]) for k in range(traj.nodes))
    assert abs(J - traj.cost) < 1e-10 * traj.cost


def test_holonomic_constraints_hold_along_the_optimal_motion():
    """A pendulum written with a holonomic constraint x² + y² = l² (its derivative is the kinematic
    constraint): the constraint is imposed at t = 0 and carried by the motion in D."""
    pendulum = System.load("nonminimal_pendulum")
    l = float({str(k): v for k, v in pendulum.values.items()}["l"])
    traj = optimal_control(pendulum, 1.0, {"y": 0.0}, {"y": 0.5 * l}, mode="kinematic", nodes=20)
    f = traj.q[0] ** 2 + traj.q[1] ** 2 - l ** 2
    assert abs(f[0]) < 1e-9 and np.abs(f).max() < 1e-6
    assert abs(abs(traj.q[0, 0]) - l) < 1e-9 and abs(traj.q[1, -1] - 0.5 * l) < 1e-12


# --- the sub-Riemannian comparison: the nonholonomic particle (Heisenberg group) --------------------------------------
def vakonomic_particle_rhs():
    """``L = |q̇|²/2`` with ``ż = y ẋ`` by the multiplication rule, derived here: the Euler–Lagrange
    equations of ``L + λ(ż − y ẋ)`` and the constraint differentiated once, solved for ``(q̈, λ̇)``."""
    t = sp.Symbol("t")
    x, y, z, lam = (sp.Function(s)(t) for s in ("x", "y", "z", "lam"))
    q = [x, y, z]
    Lt = sum(c.diff(t) ** 2 for c in q) / 2 + lam * (z.diff(t) - y * x.diff(t))
    eqs = [sp.diff(Lt.diff(c.diff(t)), t) - Lt.diff(c) for c in q]
    eqs.append(sp.diff(z.diff(t) - y * x.diff(t), t))
    acc = [c.diff(t, 2) for c in q] + [lam.diff(t)]
    sol = sp.solve(eqs, acc, dict=True)[0]
    S = sp.symbols("x y z xd yd zd lam")
    table = {c.diff(t): s for c, s in zip(q, S[3:6])}
    table.update({c: s for c, s in zip(q, S[:3])})
    table[lam] = S[6]
    exprs = [sol[a].subs(table) for a in acc]
    f = sp.lambdify(S, exprs, "math")

    def rhs(_t, s):
        out = f(*s)
        return [s[3], s[4], s[5], *out]

    return rhs


def nonholonomic_particle_rhs():
    """Lagrange–d'Alembert for ``ż = y ẋ``: ``q̈ = λ κ``, ``κ = (−y, 0, 1)``, ``d/dt(ż − y ẋ) = 0``."""
    def rhs(_t, s):
        x, y, z, xd, yd, zd = s
        k = np.array([-y, 0.0, 1.0])
        lam = yd * xd / (1 + y * y)     # from κ·q̈ = ẏ ẋ
        return [xd, yd, zd, *(lam * k)]

    return rhs


@pytest.fixture(scope="module")
def geodesic():
    particle = System.load("nonholonomic_particle")
    return optimal_control(particle, 1.0, {"x": 0, "y": 0, "z": 0}, {"x": 1, "y": 0, "z": 0.3}, mode="kinematic",
                           cost="lagrangian", nodes=40)


def shoot(traj, rhs):
    q0 = traj.q[:, 0]

    def run(p, t_eval):
        xd, yd, lam = p
        s0 = [*q0, xd, yd, q0[1] * xd, lam]
        return solve_ivp(rhs, (0, traj.T), s0, t_eval=t_eval, rtol=1e-12, atol=1e-13, method="DOP853").y

    return run


def test_energy_optimal_path_is_a_vakonomic_motion(geodesic):
    """The kinematic problem with cost ∫ L: its optimal path is a sub-Riemannian geodesic, i.e. a solution of
    the vakonomic equations, to the collocation accuracy; the multiplier read from the NLP's costate starts
    the shooting within 1e-2 of the fitted one."""
    assert geodesic.status == "Solve_Succeeded"
    assert abs(geodesic.q[2, -1] - 0.3) < 1e-12
    run = shoot(geodesic, vakonomic_particle_rhs())
    # λ from the costate: −p = ∂L/∂q̇ + λ κ, κ = (−y, 0, 1) at t = 0 (extrapolated from the midpoints)
    p0 = (3 * geodesic.costate[:, 0] - geodesic.costate[:, 1]) / 2
    qd0 = geodesic.qdot[:, 0]
    k0 = np.array([-geodesic.q[1, 0], 0.0, 1.0])
    lam_costate = float(np.dot(-p0 - qd0, k0) / np.dot(k0, k0))
    fit = least_squares(lambda p: run(p, [geodesic.T])[:3, -1] - geodesic.q[:, -1],
                        [qd0[0], qd0[1], lam_costate], xtol=1e-15, ftol=1e-15, gtol=1e-15)
    assert np.abs(fit.fun).max() < 1e-10
    assert abs(fit.x[2] - lam_costate) < 1e-2
    path = run(fit.x, geodesic.t)
    gap = np.abs(path[:3] - geodesic.q).max()
    assert gap < 1e-5, gap
    assert np.abs(path[3:6] - geodesic.qdot).max() < 2e-3    # the controls are less accurate than the states
    # the nonholonomic motion with the same initial velocity is another curve
    nh = solve_ivp(nonholonomic_particle_rhs(), (0, 1.0), [*path[:6, 0]], t_eval=geodesic.t, rtol=1e-12, atol=1e-13).y
    assert np.abs(nh[:3] - geodesic.q).max() > 100 * gap
    # and the NLP does not solve the wrong equations: a perturbed multiplier misses the path
    wrong = run(fit.x + [0, 0, 0.05], geodesic.t)
    assert np.abs(wrong[:3] - geodesic.q).max() > 100 * gap


def test_costate_satisfies_the_maximum_condition(geodesic):
    """Pontryagin's principle for ℓ = |q̇|²/2, q̇ = X_α u^α, H = ℓ + p·q̇: ∂H/∂u^α = 0, i.e.
    g(q̇, X_α) + p(X_α) = 0 with X_1 = ∂x + y∂z, X_2 = ∂y — checked on the costate read from IPOPT."""
    tc = geodesic.t_costate
    q = np.array([np.interp(tc, geodesic.t, row) for row in geodesic.q])
    qd = np.array([np.interp(tc, geodesic.t, row) for row in geodesic.qdot])
    p = geodesic.costate
    X1 = np.vstack([np.ones_like(tc), np.zeros_like(tc), q[1]])
    X2 = np.vstack([np.zeros_like(tc), np.ones_like(tc), np.zeros_like(tc)])
    for X in (X1, X2):
        balance = (qd * X).sum(axis=0) + (p * X).sum(axis=0)    # g(q̇, X_α) + p(X_α) = 0
        assert np.abs(balance).max() < 5e-3


# --- rendering -----------------------------------------------------------------------------------------------
def test_result_renders_as_text_latex_and_json(parked):
    text = str(parked)
    assert "Solve_Succeeded" in text and "hermite-simpson" in text and "drive" in text
    tex = parked.as_latex()
    assert tex.startswith("\\begin{aligned}") and "\\min J" in tex and "\\phi" in tex
    assert parked._repr_latex_().startswith("$")
    payload = json.loads(json.dumps(parked.to_dict()))
    assert payload["solver"]["status"] == "Solve_Succeeded"
    assert len(payload["q"]["y"]) == parked.t.size and payload["end"]["y"] == 0.5
    assert isinstance(parked, OptimalTrajectory)
    with pytest.raises(Exception):
        parked.cost = 0.0                               # frozen


# --- errors ---------------------------------------------------------------------------------------------------
def test_missing_casadi_says_how_to_install_it(car, monkeypatch):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "casadi" or name.startswith("casadi."):
            raise ImportError("No module named 'casadi'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(CasadiMissingError, match=r"anholo\[optimal\]"):
        optimal_control(car, T, REST0, PARKED)


@pytest.mark.parametrize("kwargs, match", [
    ({"T": -1.0}, "positive"),
    ({"T": float("nan")}, "finite"),
    ({"nodes": 1}, "nodes"),
    ({"nodes": 2.5}, "nodes"),
    ({"mode": "dynamical"}, "mode"),
    ({"method": "euler"}, "method"),
    ({"start": {"w": 0}}, "'w'"),
    ({"start": [0, 0, 0, 0]}, "dict"),
    ({"end": {"x": "one"}}, "finite real"),
    ({"bounds": {"phi": 0.5}}, "pair"),
    ({"bounds": {"phi": (0.5, -0.5)}}, "lower > upper"),
    ({"bounds": {"x": (0.1, 1.0)}}, "outside its bounds"),
    ({"cost": 3}, "cost"),
    ({"cost": "x_dot + nonsense"}, "nonsense"),
    ({"guess": "previous"}, "guess"),
    ({"values": [1, 2]}, "values"),
    ({"values": {"mass": 2}}, "not a parameter"),
    ({"values": {"m": "heavy"}}, "finite real"),
    ({"max_iter": 0}, "max_iter"),
])
def test_bad_arguments_raise_argument_error(car, kwargs, match):
    args = {"T": T, "start": REST0, "end": PARKED, **kwargs}
    Tv, start, end = args.pop("T"), args.pop("start"), args.pop("end")
    with pytest.raises(ArgumentError, match=match):
        optimal_control(car, Tv, start, end, **args)


def test_wrong_system_and_missing_inputs(car):
    with pytest.raises(ArgumentError, match="System"):
        optimal_control("car", T, REST0, PARKED)
    with pytest.raises(ArgumentError, match="no control inputs"):
        optimal_control(System.load("nonholonomic_particle"), 1.0, {"x": 0}, {"x": 1})
    with pytest.raises(ArgumentError, match="inputs"):   # kinematic mode: the inputs are not controls
        optimal_control(car, T, REST0, PARKED, mode="kinematic", cost="drive^2")
    with pytest.raises(MissingParameterError, match="m"):
        optimal_control(car.maggi().__class__(car.maggi().chart, car.maggi().lagrangian, car.maggi().constraints,
                                              forces=car.maggi().forces, inputs=car.maggi().inputs),
                        T, REST0, PARKED)


def test_solver_failure_reports_ipopts_status(car):
    with pytest.raises(SolverFailedError, match="Maximum_Iterations_Exceeded") as info:
        optimal_control(car, T, {**REST0, "v1": 0, "v2": 0}, {**PARKED, "v1": 0, "v2": 0}, max_iter=2)
    assert info.value.status == "Maximum_Iterations_Exceeded" and isinstance(info.value, AnholoError)
    particle = System.load("nonholonomic_particle")
    # y held at 0 makes z_dot = y x_dot = 0: z cannot reach 1
    with pytest.raises(SolverFailedError, match="Infeasible") as info:
        optimal_control(particle, 1.0, {"x": 0, "y": 0, "z": 0}, {"x": 1, "y": 0, "z": 1}, mode="kinematic",
                        bounds={"y": (0, 0)}, nodes=10)
    assert "Infeasible" in info.value.status

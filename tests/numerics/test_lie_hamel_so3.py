"""The discrete Hamel scheme with the Cayley map on SO(3) (``simulate(method="hamel")`` on Euler angles).

Oracles, all written here: the rotation matrices ``R_z(φ)R_x(θ)R_z(ψ)`` and the body angular velocity of the
rigid body in ZXZ angles; the free rigid body's equations in a rotation matrix, ``Ṙ = R Ω̂``,
``IΩ̇ = IΩ × Ω`` (scipy DOP853 at tight tolerance); the coordinate multiplier equations of
:func:`tests.oracles.multiplier_ode` for the Veselova system, the Chaplygin ball and the Routh sphere, with L
and the constraints derived in the test from R, Ω (and the Routh sphere's mass centre) with sympy; the
inverse Cayley map ``2(F + I)^{-1}(F − I)`` by a matrix inverse; the body angular velocity by differentiating
R numerically; the midpoint discrete Lagrange–d'Alembert scheme for what it conserves and for the claim that
the schemes differ (by O(h²))."""

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.numerics import simulate
from anholo.numerics.lie_hamel_so3 import SEQUENCES, So3Scheme, _body_rates_batch, body_rates, rotation, so3_factor
from anholo.numerics.variational import discrete_mechanics
from anholo.system import System

from cli_helpers import run
from oracles import multiplier_ode

INERTIA = np.array([1.0, 2.0, 3.0])  # rigid_body and the Veselova file
VESELOVA = "tests/numerics/data/veselova_frame.toml"


def Rz(a):
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def Rx(a):
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def R_zxz(q):
    return Rz(q[0]) @ Rx(q[1]) @ Rz(q[2])


def omega_zxz(q, qd):
    """The body angular velocity of ``R_zxz`` (Goldstein's formulas)."""
    ph, th, ps = q
    phd, thd, psd = qd
    return np.array([phd * math.sin(th) * math.sin(ps) + thd * math.cos(ps),
                     phd * math.sin(th) * math.cos(ps) - thd * math.sin(ps), phd * math.cos(th) + psd])


def hat(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def vee(A):
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


def cayley_inverse(F):
    return 2 * np.linalg.solve(F + np.eye(3), F - np.eye(3))


@pytest.fixture(scope="module")
def rigid():
    """The catalogue's free rigid body and its DiscreteMechanics with the SO(3) scheme attached (built once)."""
    body = System.load("rigid_body")
    mech = discrete_mechanics(body)
    return body, dataclasses.replace(mech, group=So3Scheme(body, so3_factor(body, mech)))


@pytest.fixture(scope="module")
def veselova():
    system = System.load(VESELOVA)
    mech = discrete_mechanics(system)
    return system, dataclasses.replace(mech, group=So3Scheme(system, so3_factor(system, mech)))


def test_rotations_and_body_rates_of_all_twelve_sequences():
    """``rotation`` is the product of axis rotations (ZXZ against the matrices written here), and ``E(a)ȧ``
    is the body angular velocity: ``vee(RᵀṘ)`` with Ṙ by central differences."""
    q = np.array([0.4, 0.9, -0.6])
    assert np.allclose(np.array(rotation("ZXZ", q), float), R_zxz(q), atol=1e-15)
    assert np.allclose(np.array(body_rates("ZXZ", q), float) @ [0.3, -0.2, 0.5], omega_zxz(q, [0.3, -0.2, 0.5]))
    qd, eps = np.array([0.3, -0.7, 1.1]), 1e-6
    for seq in SEQUENCES:
        R = np.array(rotation(seq, q), float)
        assert np.allclose(R.T @ R, np.eye(3), atol=1e-14) and abs(np.linalg.det(R) - 1) < 1e-14
        Rdot = (np.array(rotation(seq, q + eps * qd), float) - np.array(rotation(seq, q - eps * qd), float)) / (2 * eps)
        assert np.abs(vee(R.T @ Rdot) - np.array(body_rates(seq, q), float) @ qd).max() < 1e-8, seq
        many = np.array([q, q + 0.3, -q])  # the detection's batch form: the same matrices
        assert np.allclose(_body_rates_batch(seq, many), [np.array(body_rates(seq, a), float) for a in many],
                           atol=1e-15), seq


TAIT_BRYAN_BODY = """
name = "Rigid body in yaw, pitch, roll"
coordinates = ["yaw", "pitch", "roll"]
parameters = ["I1", "I2", "I3"]
lagrangian = \"\"\"
( I1*(roll_dot - yaw_dot*sin(pitch))^2
+ I2*(pitch_dot*cos(roll) + yaw_dot*cos(pitch)*sin(roll))^2
+ I3*(-pitch_dot*sin(roll) + yaw_dot*cos(pitch)*cos(roll))^2 )/2
\"\"\"
[values]
I1 = 1
I2 = 2
I3 = 3
"""


def test_the_factor_is_found_where_the_rotational_energy_is_left_invariant(tmp_path):
    assert so3_factor(System.load("rigid_body")) == ((0, 1, 2), "ZXZ")
    assert so3_factor(System.load(VESELOVA)) == ((0, 1, 2), "ZXZ")
    assert so3_factor(System.load("chaplygin_ball")) == ((2, 3, 4), "ZXZ")
    assert so3_factor(System.load("chaplygin_sleigh")) is None  # no orientation in SO(3)
    # R = Rz(yaw) Ry(pitch) Rx(roll): the body rates written by hand (not in anholo) make it a ZYX body
    path = tmp_path / "ypr.toml"
    path.write_text(TAIT_BRYAN_BODY)
    assert so3_factor(System.load(str(path))) == ((0, 1, 2), "ZYX")
    # the same angles with a kinetic energy that is not a rigid body's: no factor
    path.write_text(TAIT_BRYAN_BODY.replace("I1*(roll_dot - yaw_dot*sin(pitch))^2", "I1*roll_dot^2"))
    assert so3_factor(System.load(str(path))) is None


def spatial_momentum(Q, U, inertia=INERTIA):
    return np.array([R_zxz(q) @ (inertia * omega_zxz(q, u)) for q, u in zip(Q.T, U.T)])


def test_free_rigid_body_conserves_the_spatial_angular_momentum(rigid):
    """Discrete Noether: L_d depends on R_k, R_{k+1} only through R_kᵀR_{k+1}, so ``R I Ω`` at the grid
    points is conserved to round-off; the midpoint scheme in Euler angles conserves only its z component
    (φ is cyclic).  Energy error bounded (no drift between the first and the last quarter)."""
    _, mech = rigid
    q0, qd0 = [0.3, 1.0, 0.5], [0.4, -0.7, 1.1]
    tr = simulate(mech, (0, 60), q0, qd0, method="hamel", step=0.05)
    assert "Cayley map on SO(3) of phi, theta, psi (ZXZ)" in tr.message
    pi = spatial_momentum(tr.q, tr.qdot)
    assert np.abs(pi - pi[0]).max() < 1e-12 * np.abs(pi[0]).max()
    # the check can fail: the same momenta read with another inertia are not conserved
    wrong = spatial_momentum(tr.q, tr.qdot, INERTIA * [1.0, 1.01, 1.0])
    assert np.abs(wrong - wrong[0]).max() > 1e-4
    midpoint = simulate(mech, (0, 60), q0, qd0, method="variational", step=0.05)
    pm = spatial_momentum(midpoint.q, midpoint.qdot)
    assert np.abs(pm[:, :2] - pm[0, :2]).max() > 1e-3        # x, y: not conserved
    assert np.abs(pm[:, 2] - pm[0, 2]).max() < 1e-12          # z: φ cyclic
    energy = np.array([omega_zxz(q, u) @ (INERTIA * omega_zxz(q, u)) / 2 for q, u in zip(tr.q.T, tr.qdot.T)])
    err = np.abs(energy - energy[0])
    quarter = len(err) // 4
    assert err.max() < 2e-3 * energy[0] and err[-quarter:].max() < 1.5 * err[:quarter].max()


def rigid_body_reference(q0, qd0, times):
    """R(t) from ``Ṙ = R Ω̂``, ``IΩ̇ = IΩ × Ω`` (DOP853)."""
    def f(t, y):
        R, w = y[:9].reshape(3, 3), y[9:]
        return np.concatenate([(R @ hat(w)).ravel(), np.cross(INERTIA * w, w) / INERTIA])

    y0 = np.concatenate([R_zxz(q0).ravel(), omega_zxz(q0, qd0)])
    sol = solve_ivp(f, (times[0], times[-1]), y0, method="DOP853", rtol=1e-12, atol=1e-13, t_eval=times)
    return sol.y[:9].T.reshape(-1, 3, 3)


def test_order_two_on_the_free_rigid_body_against_eulers_equations(rigid):
    _, mech = rigid
    q0, qd0 = [0.3, 1.0, 0.5], [0.4, -0.7, 1.1]
    times = np.linspace(0, 4, 5)
    ref = rigid_body_reference(q0, qd0, times)
    errors = []
    for h in (0.04, 0.02):
        tr = simulate(mech, (0, 4), q0, qd0, method="hamel", step=h, t_eval=times)
        errors.append(max(np.abs(R_zxz(q) - Rr).max() for q, Rr in zip(tr.q.T, ref)))
    order = math.log2(errors[0] / errors[1])
    assert 1.9 < order < 2.1, (errors, order)


def veselova_oracle():
    """The multiplier equations of the Veselova system: ``L = ½⟨IΩ, Ω⟩``, constraint ``⟨Ω, Rᵀe_3⟩ = 0``,
    both from R and Ω written here in sympy."""
    q = sp.symbols("ph th ps")
    u = sp.symbols("phd thd psd")
    rz = lambda a: sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])
    rx = lambda a: sp.Matrix([[1, 0, 0], [0, sp.cos(a), -sp.sin(a)], [0, sp.sin(a), sp.cos(a)]])
    R = rz(q[0]) * rx(q[1]) * rz(q[2])
    Rdot = sum((R.diff(qi) * ui for qi, ui in zip(q, u)), sp.zeros(3, 3))
    W = R.T * Rdot
    Om = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
    L = sum(float(I) * w**2 for I, w in zip(INERTIA, Om)) / 2
    gamma = R.T * sp.Matrix([0, 0, 1])
    return multiplier_ode(L, q, u, [sp.expand((Om.T * gamma)[0])])


VES_Q0 = [0.1, 1.0, 0.3]
VES_QD0 = [-math.cos(1.0) * 0.7, 0.4, 0.7]  # φ̇ = −cos θ ψ̇: ⟨Ω, γ⟩ = 0


def _discrete_constraint(Q, h):
    """``⟨Ξ_k, γ(q̄_k)⟩`` with ``hΞ_k = vee(cay^{-1}(R_kᵀR_{k+1}))`` and γ = Rᵀe_3 at the coordinate midpoint."""
    out = []
    for a, b in zip(Q.T[:-1], Q.T[1:]):
        xi = vee(cayley_inverse(R_zxz(a).T @ R_zxz(b))) / h
        out.append(xi @ (R_zxz((a + b) / 2).T @ [0, 0, 1]))
    return np.array(out)


def test_veselova_order_two_discrete_constraint_and_a_different_scheme(veselova):
    _, mech = veselova
    times = np.linspace(0, 4, 5)
    ref = solve_ivp(veselova_oracle(), (0, 4), VES_Q0 + VES_QD0, method="DOP853", rtol=1e-12, atol=1e-13,
                    t_eval=times).y
    errors, gaps = [], []
    for h in (0.04, 0.02):
        tr = simulate(mech, (0, 4), VES_Q0, VES_QD0, method="hamel", step=h, t_eval=times)
        assert "SO(3)" in tr.message
        errors.append(np.abs(tr.q - ref[:3]).max())
        mid = simulate(mech, (0, 4), VES_Q0, VES_QD0, method="variational", step=h, t_eval=[4.0])
        gaps.append(np.abs(tr.q[:, -1] - mid.q[:, -1]).max())
    order = math.log2(errors[0] / errors[1])
    assert 1.9 < order < 2.1, (errors, order)
    assert gaps[1] > 1e-6 and 3.3 < gaps[0] / gaps[1] < 4.8, gaps  # another scheme, O(h²) apart
    h = 0.1
    tr = simulate(mech, (0, 20), VES_Q0, VES_QD0, method="hamel", step=h)  # output at the grid points
    assert np.abs(_discrete_constraint(tr.q, h)).max() < 1e-10
    assert np.abs(tr.constraint_residuals()).max() < 1e-10
    midpoint = simulate(mech, (0, 20), VES_Q0, VES_QD0, method="variational", step=h)
    assert np.abs(_discrete_constraint(midpoint.q, h)).max() > 1e-5  # its discrete constraint is another


def rolling_oracle(m, r, inertia, s=0.0, g=0.0):
    """The multiplier equations of a ball rolling on the plane ``z = 0``: centre ``c = (x, y, r)``, body
    ``R = R_z(φ)R_x(θ)R_z(ψ)`` (in sympy), mass centre ``c + s R e_3``, central inertia ``diag(inertia)``,
    gravity g: ``L = m|ċ + s Ṙe_3|²/2 + ½⟨IΩ, Ω⟩ − m g (r + s (Re_3)_z)``; rolling: the contact point
    ``c − r e_z`` at rest, ``ċ + ω × (−r e_z) = 0`` with ``ω = RΩ`` — the Chaplygin ball (s = 0) and the
    Routh sphere."""
    q = sp.symbols("x y ph th ps")
    u = sp.symbols("xd yd phd thd psd")
    rz = lambda a: sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])
    rx = lambda a: sp.Matrix([[1, 0, 0], [0, sp.cos(a), -sp.sin(a)], [0, sp.sin(a), sp.cos(a)]])
    R = rz(q[2]) * rx(q[3]) * rz(q[4])
    Rdot = sum((R.diff(qi) * ui for qi, ui in zip(q[2:], u[2:])), sp.zeros(3, 3))
    Wb = R.T * Rdot
    Om = sp.Matrix([Wb[2, 1], Wb[0, 2], Wb[1, 0]])
    w = R * Om
    vG = sp.Matrix([u[0], u[1], 0]) + s * Rdot[:, 2]
    L = m * (vG.T * vG)[0] / 2 + sum(I * o**2 for I, o in zip(inertia, Om)) / 2 - m * g * (r + s * R[2, 2])
    contact = sp.Matrix([u[0], u[1], 0]) + w.cross(sp.Matrix([0, 0, -r]))
    return multiplier_ode(L, q, u, [contact[0], contact[1]])


ROLLING = {"chaplygin_ball": dict(m=1.0, r=1.0, inertia=(0.4, 0.5, 0.6)),
           "routh_sphere": dict(m=1.0, r=1.0, inertia=(0.5, 0.5, 0.6), s=-0.3, g=9.81)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ROLLING))
def test_rolling_balls_run_on_so3_at_order_two(name):
    """The Chaplygin ball and the Routh sphere have both factors; the SO(3) one is taken (the whole orientation
    on the group, the contact point by differences) and converges at order 2 to the multiplier equations."""
    system = System.load(name)
    mech = discrete_mechanics(system)
    assert so3_factor(system, mech) == ((2, 3, 4), "ZXZ")
    mech = dataclasses.replace(mech, group=So3Scheme(system, so3_factor(system, mech)))
    q0 = [0.0, 0.0, 0.2, 1.1, -0.4]
    phd, thd, psd = 0.5, -0.8, 1.2
    th, ph = q0[3], q0[2]
    wx = thd * math.cos(ph) + psd * math.sin(th) * math.sin(ph)
    wy = thd * math.sin(ph) - psd * math.sin(th) * math.cos(ph)
    qd0 = [wy, -wx, phd, thd, psd]  # r = 1: ẋ = r ω_y, ẏ = −r ω_x
    times = np.linspace(0, 3, 4)
    ref = solve_ivp(rolling_oracle(**ROLLING[name]), (0, 3), q0 + qd0, method="DOP853", rtol=1e-12, atol=1e-13,
                    t_eval=times).y
    errors = []
    for h in (0.04, 0.02):
        tr = simulate(mech, (0, 3), q0, qd0, method="hamel", step=h, t_eval=times)
        assert "Cayley map on SO(3) of phi, theta, psi (ZXZ)" in tr.message
        errors.append(np.abs(tr.q - ref[:5]).max())
        assert np.abs(tr.constraint_residuals()).max() < 1e-10
    order = math.log2(errors[0] / errors[1])
    assert 1.9 < order < 2.1, (errors, order)


def test_the_command_line_names_the_so3_scheme(capsys):
    code, out, err = run(capsys, "simulate", "rigid_body", "--q0", "0.3,1,0.5", "--qdot0", "0.4,-0.7,1.1",
                         "--t-end", 0.5, "--method", "hamel", "--step", 0.1, "--quiet")
    assert code == 0, err
    assert "discrete Hamel: Cayley map on SO(3) of phi, theta, psi (ZXZ)" in out

"""Simulations through frame singularities (issue #24): the change of chart, events, Ctrl-C, singular motions.

Oracles, all independent of anholo's right-hand sides:

* the Veselova system (Veselov & Veselova 1986) integrated by ``solve_ivp`` from the coordinate
  multiplier equations written here with sympy: ``L(q, q̇)`` of the rigid body in ZXZ Euler angles, the
  constraint ``a(q)·q̇ = φ̇ + cos θ ψ̇ = 0`` (``⟨Ω, γ⟩ = 0``), and at each step the linear system
  ``W q̈ − λ a = ∂L/∂q − (∂²L/∂q̇∂q) q̇``, ``a·q̈ = −ȧ·q̇`` solved numerically for ``q̈, λ``;
* the closed-form motion of the free rigid body turning about a principal axis through the gimbal lock
  of the Euler angles (θ = θ0 − t, φ and ψ constant);
* the point with kinetic energy ``x ẋ²/2`` and potential ``x``: from rest at ``x = 1``,
  ``x ẋ²/2 + x = 1`` gives ``t(x = 0) = ∫_0^1 dx/√(2(1 − x)/x) = π/(2√2)``, where ẋ blows up;
* ``solve_ivp`` itself for the step loop (same solver, same output: equal to the last bit).
"""

import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.errors import IntegrationError
from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.charts import ChartAtlas, frame_condition
from anholo.system import System

from cli_helpers import interrupt_after, read_csv, run

DATA = Path(__file__).parent / "data"
VESELOVA = DATA / "veselova_frame.toml"
Q0 = [0.1, 1.0, 0.3]
QDOT0 = [-0.3782116141076978, 0.4, 0.7]  # φ̇ = −cos θ ψ̇
INERTIA = (1.0, 2.0, 3.0)


def veselova_reference(t_eval, q0=Q0, qdot0=QDOT0, inertia=INERTIA):
    """q(t) of the Veselova system from the coordinate multiplier equations (module docstring)."""
    ph, th, ps, phd, thd, psd = sp.symbols("ph th ps phd thd psd", real=True)
    I1, I2, I3 = inertia
    O1 = phd * sp.sin(th) * sp.sin(ps) + thd * sp.cos(ps)
    O2 = phd * sp.sin(th) * sp.cos(ps) - thd * sp.sin(ps)
    O3 = phd * sp.cos(th) + psd
    L = (I1 * O1**2 + I2 * O2**2 + I3 * O3**2) / 2
    q, u = [ph, th, ps], [phd, thd, psd]
    a = sp.Matrix([[1, 0, sp.cos(th)]])
    W = sp.hessian(L, u)
    rhs = sp.Matrix([L.diff(qA) for qA in q]) - sp.Matrix([[L.diff(uA).diff(qB) for qB in q] for uA in u]) * sp.Matrix(u)
    adot_u = sum(a[0, A].diff(q[B]) * u[B] * u[A] for A in range(3) for B in range(3))
    fW, fr, fa, fad = (sp.lambdify([q + u], e, "numpy") for e in (W, rhs, a, adot_u))

    def f(t, y):
        Wn, rn, an = np.array(fW(y), float), np.array(fr(y), float).ravel(), np.array(fa(y), float).ravel()
        A = np.zeros((4, 4))
        A[:3, :3], A[:3, 3], A[3, :3] = Wn, -an, an
        sol = np.linalg.solve(A, np.concatenate([rn, [-float(fad(y))]]))
        return np.concatenate([y[3:], sol[:3]])

    res = solve_ivp(f, (t_eval[0], t_eval[-1]), np.array(q0 + qdot0, float), method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=t_eval)
    assert res.success
    return res.y


@pytest.fixture(scope="module")
def veselova():
    return System.load(str(VESELOVA))


def test_frame_of_the_file_degenerates_at_theta_half_pi(veselova):
    """The premise: the adapted frame's rows turn parallel as cos θ → 0 (the frame condition grows like
    1/|cos θ|), although the motion is regular there."""
    c = compile_system(from_system(veselova))
    p = c.parameter_vector()
    conds = [frame_condition(c, np.array([0.1, th, 0.3, 0.4, 0.5]), p) for th in (1.0, 1.5, 1.57, 1.5707)]
    assert conds[0] < 10 and conds[-1] > 1e3 and all(a < b for a, b in zip(conds, conds[1:]))


def test_veselova_through_the_frame_singularity_matches_coordinate_multipliers(veselova):
    t_eval = np.linspace(0.0, 6.0, 61)
    traj = simulate(veselova, (0.0, 6.0), Q0, QDOT0, t_eval=t_eval)
    assert any("changed chart" in n for n in traj.notes)  # θ crossed π/2 (at t ≈ 1.17)
    theta = traj.q[1]
    assert theta.min() < math.pi / 2 < theta.max()
    ref = veselova_reference(t_eval)
    assert np.max(np.abs(traj.q - ref[:3])) < 1e-6
    assert np.max(np.abs(traj.qdot - ref[3:])) < 1e-6
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-12
    assert traj.energy_drift().max() < 1e-8
    # the oracle can tell: another inertia gives another motion
    other = veselova_reference(t_eval, inertia=(1.0, 2.0, 3.1))
    assert np.max(np.abs(traj.q - other[:3])) > 1e-3


def test_dense_output_after_the_switch(veselova):
    traj = simulate(veselova, 3.0, Q0, QDOT0, dense_output=True)
    assert traj.segments and traj.state_names == ("phi", "theta", "psi", "phi_dot", "theta_dot", "psi_dot")
    times = np.array([0.3, 1.0, 1.5707, 2.2, 2.9])
    ref = veselova_reference(np.concatenate([[0.0], times]))[:, 1:]
    assert np.max(np.abs(traj(times) - ref)) < 1e-6
    assert np.max(np.abs(traj(2.2) - ref[:, 3])) < 1e-6


def test_other_dependent_velocities_switch_too(veselova):
    """Solved for Ω1 (``--dependent phi`` in the issue) the frame degenerates elsewhere (t ≈ 4.5): the
    switch there gives the same motion."""
    c = compile_system(from_system(veselova, dependent=[0]))
    t_eval = np.linspace(0.0, 8.0, 41)
    traj = simulate(c, (0.0, 8.0), Q0, QDOT0, t_eval=t_eval, atlas=ChartAtlas(veselova))
    assert len(traj.segments) >= 2
    assert np.max(np.abs(traj.q - veselova_reference(t_eval)[:3])) < 1e-6


def test_without_an_atlas_a_stall_is_a_message_not_a_hang(veselova):
    c = compile_system(from_system(veselova))
    with pytest.raises(IntegrationError, match=r"step size collapsed.*t = 1\.167.*theta = 1\.5707"):
        simulate(c, 2.0, Q0, QDOT0)


def test_the_step_loop_equals_solve_ivp_on_a_regular_chart():
    """Catalogue runs are unchanged: no switch where the frame is regular, and the same numbers as
    ``solve_ivp`` with the same solver."""
    disk = System.load("vertical_rolling_disk")
    c = compile_system(from_system(disk))
    q0, qd0 = [0, 0, 0.2, 0], [1.3 * math.cos(0.2), 1.3 * math.sin(0.2), 0.7, 1.3]
    traj = simulate(c, 20.0, q0, qd0, points=101, atlas=ChartAtlas(disk))
    assert not traj.segments and not traj.notes
    y0 = c.initial_state(q0, qd0)
    ref = solve_ivp(c.rhs(c.parameter_vector()), (0, 20.0), y0, method="DOP853", rtol=1e-10, atol=1e-12,
                    t_eval=np.linspace(0, 20.0, 101))
    assert np.array_equal(traj.states, ref.y) and traj.nfev == ref.nfev


def test_gimbal_lock_crossed_by_a_principal_rotation():
    """The free rigid body turning about its first axis with ψ = 0: θ = 0.5 − t passes θ = 0, where the
    Euler angles are singular; the motion in them is regular (φ = ψ = 0)."""
    body = System.load("rigid_body")
    traj = simulate(body, 1.0, [0.0, 0.5, 0.0], [0.0, -1.0, 0.0], points=11)
    assert np.allclose(traj.q[1], 0.5 - traj.t, atol=1e-9)
    assert np.allclose(traj.q[[0, 2]], 0.0, atol=1e-9)


def test_a_singular_motion_stops_with_where_and_why():
    with pytest.raises(IntegrationError) as info:
        simulate(System.load(str(DATA / "degenerate_mass.toml")), 3.0, [1.0], [0.0])
    text = str(info.value)
    assert "\n" not in text
    t_stop = float(text.split("at t = ")[1].split(",")[0])
    assert abs(t_stop - math.pi / (2 * math.sqrt(2))) < 1e-3
    assert "x = " in text and "x_dot = " in text and "singular" in text


def test_stop_when_event_on_natural_velocities(veselova):
    def tilted(t, s):  # a function of (q, q̇) in every chart
        return s[1] - 1.6

    tilted.terminal, tilted.direction, tilted.natural = True, 1, True
    traj = simulate(veselova, 10.0, Q0, QDOT0, events=[tilted], points=501)
    t_hit = traj.t_events[0][0]
    assert traj.message.startswith("stopped by an event") and traj.t[-1] <= t_hit
    ref = veselova_reference(np.array([0.0, t_hit]))
    assert abs(ref[1, -1] - 1.6) < 1e-8


def test_keyboard_interrupt_keeps_the_motion(veselova, monkeypatch):
    c = compile_system(from_system(veselova))
    interrupt_after(monkeypatch, 400)
    atlas = ChartAtlas(veselova)
    traj = simulate(c, 10.0, Q0, QDOT0, points=1001, atlas=atlas)
    assert traj.interrupted and traj.message.startswith("interrupted at t = ")
    t_int = float(traj.message.split("= ")[1])
    assert 0 < traj.t[-1] <= t_int < 10.0
    monkeypatch.undo()
    full = simulate(c, 10.0, Q0, QDOT0, points=1001, atlas=atlas)
    k = len(traj.t) - 1  # the output times reached, then the last accepted step (at t_int) is kept too
    assert traj.t[-1] == t_int and np.array_equal(traj.t[:k], full.t[:k])
    assert np.array_equal(traj.q[:, :k], full.q[:, :k])
    assert np.allclose(traj.qdot[:, :k], full.qdot[:, :k], rtol=1e-14, atol=0)


# --- the command line ---------------------------------------------------------------------------------
def test_cli_simulates_the_issue_command(capsys, tmp_path):
    path = tmp_path / "v.csv"
    code, out, err = run(capsys, "simulate", VESELOVA, "--q0=0.1,1.0,0.3", "--qdot0=-0.3782116141076978,0.4,0.7",
                         "--t-end", 2, "--budget", 60, "--points", 21, "--csv", path)
    assert code == 0, err
    assert "changed chart at t = " in err and "-> Maggi's equations, dependent phi" in err
    header, data = read_csv(path)
    assert header == ["t", "phi", "theta", "psi", "phi_dot", "theta_dot", "psi_dot"]
    assert data.shape == (21, 7) and data[-1, 0] == 2.0
    ref = veselova_reference(data[:, 0])
    assert np.max(np.abs(data[:, 1:].T - ref)) < 1e-6


def test_cli_changes_chart_with_inputs(capsys, tmp_path):
    """``--input`` with ``--dependent``: the inputs written as expressions are read in the new chart's state,
    so the command line watches and changes charts for controlled systems too (it ran them unwatched)."""
    path, out_csv = tmp_path / "knife_torque.toml", tmp_path / "k.csv"
    path.write_text('name = "knife edge with a damping torque"\ncoordinates = ["x", "y", "theta"]\n'
                    'inputs = ["tau"]\nlagrangian = "(x_dot^2 + y_dot^2 + theta_dot^2)/2"\n'
                    'constraints = ["sin(theta)*x_dot - cos(theta)*y_dot"]\nforces = ["0", "0", "tau"]\n')
    q0, qdot0 = [0.35, 0.45, 0.55], [0.9 * math.cos(0.55), 0.9 * math.sin(0.55), 0.6]
    code, out, err = run(capsys, "simulate", path, "--dependent", "y", "--q0=" + ",".join(map(repr, q0)),
                         "--qdot0=" + ",".join(map(repr, qdot0)), "--t-end", 8, "--points", 17,
                         "--input", "tau=-0.05*theta_dot", "--csv", out_csv)
    assert code == 0, err
    assert "changed chart at t = " in err, err
    from oracles import multiplier_ode

    x, y, th, xd, yd, thd = sp.symbols("x y theta x_dot y_dot theta_dot")
    f = multiplier_ode((xd**2 + yd**2 + thd**2) / 2, [x, y, th], [xd, yd, thd], [sp.sin(th) * xd - sp.cos(th) * yd],
                       forces=[0, 0, -thd / 20])
    header, data = read_csv(out_csv)
    ref = solve_ivp(f, (0, 8), [*q0, *qdot0], t_eval=data[:, 0], rtol=1e-12, atol=1e-13, method="DOP853")
    assert np.abs(data[:, 1:4].T - ref.y[:3]).max() < 1e-6
    assert abs(data[-1, 6] - 0.6 * math.exp(-0.4)) < 1e-6  # θ̈ = −θ̇/20: the torque was applied


def test_cli_stop_when(capsys, tmp_path):
    path = tmp_path / "v.csv"
    code, out, err = run(capsys, "simulate", VESELOVA, "--q0=0.1,1.0,0.3", "--qdot0=-0.3782116141076978,0.4,0.7",
                         "--t-end", 20, "--stop-when", "theta > 1.6", "--csv", path)
    assert code == 0, err
    t_stop = float(err.split("stopped at t = ")[1].split(":")[0])
    ref = veselova_reference(np.array([0.0, t_stop]))
    assert abs(ref[1, -1] - 1.6) < 1e-8
    header, data = read_csv(path)
    assert data[-1, 0] <= t_stop and np.all(data[:, 2] <= 1.6 + 1e-12)
    assert "stopped by an event at t =" in out


def test_cli_stop_when_rejects_unsafe_or_chained(capsys):
    code, out, err = run(capsys, "simulate", VESELOVA, "--q0=0.1,1.0,0.3", "--qdot0=-0.3782116141076978,0.4,0.7",
                         "--t-end", 2, "--stop-when", "__import__('os') > 1")
    assert code != 0 and "--stop-when" in err and "Traceback" not in err
    code, out, err = run(capsys, "simulate", VESELOVA, "--q0=0.1,1.0,0.3", "--qdot0=-0.3782116141076978,0.4,0.7",
                         "--t-end", 2, "--stop-when", "0 < theta < 1")
    assert code != 0 and "--stop-when" in err


def test_cli_singular_motion_is_one_line(capsys):
    code, out, err = run(capsys, "simulate", DATA / "degenerate_mass.toml", "--q0=1", "--qdot0=0", "--t-end", 3)
    assert code != 0
    line = [x for x in err.splitlines() if "error" in x]
    assert len(line) == 1 and "t = 1.1107" in line[0] and "Traceback" not in err


def test_cli_interrupt_writes_what_was_computed(capsys, tmp_path, monkeypatch):
    interrupt_after(monkeypatch, 300)
    path = tmp_path / "v.csv"
    code, out, err = run(capsys, "simulate", VESELOVA, "--q0=0.1,1.0,0.3", "--qdot0=-0.3782116141076978,0.4,0.7",
                         "--t-end", 20, "--csv", path)
    assert code == 130
    assert "interrupted at t = " in err and "interrupted at t = " in out
    header, data = read_csv(path)
    assert 1 < len(data) < 1001 and data[-1, 0] < 20
    ref = veselova_reference(data[:, 0])
    assert np.max(np.abs(data[:, 1:].T - ref)) < 1e-6


def test_stop_event_parses_abs_velocities_and_sign_changes(veselova):
    from anholo.errors import AnholoError
    from anholo.numerics.events import stop_event

    names = ("phi", "theta", "psi")
    g = stop_event("abs(psi - 0.3) > 0.5", names)
    traj = simulate(veselova, 10.0, Q0, QDOT0, events=[g], points=101)
    t_hit = traj.t_events[0][0]
    assert abs(veselova_reference(np.array([0.0, t_hit]))[2, -1] - 0.8) < 1e-8
    h = stop_event("theta_dot - 0.45", names)  # no comparison: its sign change
    assert h.direction == 0 and h(0.0, np.array(Q0 + QDOT0)) == pytest.approx(0.4 - 0.45)
    for bad in ("theta == 1", "0 < theta < 1", "theta_ddot > 1", "__import__('os') > 1"):
        with pytest.raises(AnholoError, match="--stop-when"):
            stop_event(bad, names)


def _rotation(ph, th, ps):
    """Body → space rotation of ZXZ Euler angles, R = Rz(φ) Rx(θ) Rz(ψ) (Goldstein's convention)."""
    def rz(a):
        return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])

    def rx(a):
        return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])

    return rz(ph) @ rx(th) @ rz(ps)


def test_rigid_body_near_gimbal_lock_changes_chart_and_keeps_the_motion():
    """θ comes within 1e-3 of the gimbal lock (θ_min ≈ 4.4e-4): the Euler-angle frame degenerates and the run changes to
    natural velocities.  Oracle: Euler's equations ``I Ω̇ = (I Ω) × Ω`` with ``Ṙ = R [Ω]×`` by solve_ivp,
    compared as rotation matrices (no angle wrapping)."""
    body = System.load("rigid_body")
    q0, qd0 = [0.0, 0.2, 0.7], [0.0, -1.0, 0.0]
    t_eval = np.linspace(0.0, 3.0, 31)
    traj = simulate(body, (0.0, 3.0), q0, qd0, t_eval=t_eval)
    assert traj.notes and "natural velocities" in traj.notes[0]
    assert traj.q[1].min() < 1e-3
    inertia = np.array([1.0, 2.0, 3.0])
    ph, th, ps = q0
    phd, thd, psd = qd0
    omega = np.array([phd * np.sin(th) * np.sin(ps) + thd * np.cos(ps),
                      phd * np.sin(th) * np.cos(ps) - thd * np.sin(ps), phd * np.cos(th) + psd])

    def f(t, y):
        R, w = y[:9].reshape(3, 3), y[9:]
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        return np.concatenate([(R @ W).ravel(), np.cross(inertia * w, w) / inertia])

    def gap(moments):
        inertia[:] = moments
        ref = solve_ivp(f, (0, 3.0), np.concatenate([_rotation(*q0).ravel(), omega]), method="DOP853",
                        rtol=1e-12, atol=1e-12, t_eval=t_eval)
        return max(np.abs(_rotation(*traj.q[:, j]) - ref.y[:9, j].reshape(3, 3)).max() for j in range(len(t_eval)))

    assert gap([1.0, 2.0, 3.0]) < 1e-6
    assert gap([1.0, 2.0, 3.05]) > 1e-3  # the oracle can tell


# --- a singular choice of dependent velocities (a Voronets frame with a pole on the motion) ---------------
def _coordinate_reference(system, q0, qdot0, times):
    """The catalogue system's coordinate multiplier equations (tests/oracles.py), its [values] substituted,
    integrated by solve_ivp: independent of anholo's charts."""
    from oracles import multiplier_ode

    sub = {s: system.values[s] for s in system.chart.parameters if s in system.values}
    L = system.lagrangian.natural_expr().subs(sub)
    cons = [sp.sympify(c).subs(sub) for c in system.constraints]
    f = multiplier_ode(L, system.chart.coordinates, system.chart.velocities, cons)
    sol = solve_ivp(f, (times[0], times[-1]), [*q0, *qdot0], t_eval=times, rtol=1e-12, atol=1e-13, method="DOP853")
    return sol.y[:len(q0)]


@pytest.mark.parametrize("name, dependent, q0, qdot0, t_end", [
    # ẋ = cot θ ẏ: the frame ∂_θ, cot θ ∂_x + ∂_y has a pole at θ = π, crossed at t ≈ 8.6
    ("knife_edge", ["x"], [0.35, 0.45, 0.55], [0.9 * math.cos(0.55), 0.9 * math.sin(0.55), 0.3], 12.0),
    # ẏ = tan θ ẋ: poles at θ = π/2 (crossed at t ≈ 3.4) and 3π/2
    ("knife_edge", ["y"], [0.35, 0.45, 0.55], [0.9 * math.cos(0.55), 0.9 * math.sin(0.55), 0.3], 20.0),
    # ẋ and φ̇ solved from the rolling constraints: a pole where the disk heads along the y axis
    ("vertical_rolling_disk", ["x", "phi"], [0.35, 0.45, 0.55, 0.65], None, 12.0),
    # a system written in its body frame, solved for the coordinate velocity ẏ (Maggi's equations in coordinate
    # velocities: ẏ = tan θ ẋ + a θ̇ / cos θ, a pole at θ = π/2, crossed at t ≈ 2.4)
    ("chaplygin_sleigh", ["y"], [0.35, 0.45, 0.55], "own frame", 12.0),
])
def test_a_singular_choice_of_dependent_velocities_is_left_in_time(name, dependent, q0, qdot0, t_end):
    """The user's dependent velocities have a pole on the motion: the run changes chart before it and
    agrees with the coordinate multiplier equations (before this, the knife edge ground through the pole
    with an error of 1e-2 and the disk stopped with a division by zero)."""
    system = System.load(name)
    compiled = compile_system(from_system(system, "nonholonomic", dependent=dependent))
    if qdot0 is not None and not isinstance(qdot0, list):  # free velocities 0.9, 0.3 in the system's own frame
        own = compile_system(from_system(system, "nonholonomic"))
        s = np.concatenate([q0, np.linspace(0.9, 0.3, own.dim - len(q0))])
        qdot0 = list(own.natural_velocities(s[:, None], own.parameter_vector())[:, 0])
    if qdot0 is None:  # free velocities (θ̇, φ̇... in the chart's order) 0.9, 0.3 on C
        s = np.concatenate([q0, np.linspace(0.9, 0.3, compiled.dim - len(q0))])
        qdot0 = list(compiled.natural_velocities(s[:, None], compiled.parameter_vector())[:, 0])
    times = np.linspace(0.0, t_end, 61)
    run = simulate(compiled, (0.0, t_end), q0, qdot0, t_eval=times, atlas=ChartAtlas(system))
    assert run.notes and "changed chart" in run.notes[0]
    ref = _coordinate_reference(system, q0, qdot0, times)
    assert np.abs(run.q - ref).max() < 1e-6
    without = simulate(compile_system(from_system(system, "nonholonomic")), (0.0, t_end), q0, qdot0, t_eval=times)
    assert np.abs(without.q - ref).max() < 1e-6  # the oracle agrees with the catalogue's regular frame too


def test_a_singular_choice_goes_on_in_the_systems_own_frame():
    """Where the user's dependent velocities degenerate and the system's own adapted frame does not (the
    knife edge's ``cos θ ∂x + sin θ ∂y, ∂θ`` has no pole), the run goes on in that frame rather than in
    Maggi's equations, whose every choice of one dependent velocity has two poles per turn; a frame-language
    system whose own frame is the one that degenerates (Veselova's) goes to Maggi's equations instead."""
    system = System.load("knife_edge")
    q0, qdot0 = [0.35, 0.45, 0.55], [0.9 * math.cos(0.55), 0.9 * math.sin(0.55), 0.3]
    times = np.linspace(0.0, 20.0, 41)
    chosen = compile_system(from_system(system, "nonholonomic", dependent=["y"]))
    run = simulate(chosen, (0.0, 20.0), q0, qdot0, t_eval=times, atlas=ChartAtlas(system))
    assert len(run.notes) == 1 and run.notes[0].endswith("-> the system's frame"), run.notes
    assert np.abs(run.q - _coordinate_reference(system, q0, qdot0, times)).max() < 1e-6
    veselova = System.load(str(VESELOVA))
    c = compile_system(from_system(veselova, "nonholonomic"))
    traj = simulate(c, (0.0, 2.0), Q0, QDOT0, atlas=ChartAtlas(veselova))
    assert traj.notes and "-> Maggi's equations" in traj.notes[0], traj.notes

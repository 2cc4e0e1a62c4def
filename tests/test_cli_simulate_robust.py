"""``anholo simulate`` never loses work, never hangs, never writes a broken file (issues #24, #25).

Reproducers of the issues, as real subprocesses where a signal or a hang is involved (each with a
``timeout`` and a measured elapsed time), in-process otherwise.  The motion kept by a run that ended
early is checked against an independent integration of the coordinate equations written here:

* the particle in a central potential, ``L = m(ṙ² + r²θ̇²)/2 + k/r``:
  ``r̈ = r θ̇² − k/(m r²)``, ``θ̈ = −2 ṙ θ̇ / r``;
* the sleigh with a motor (its file's description): ``m u̇ = m a ω² − c u``,
  ``(I + m a²) ω̇ = τ − k ω − m a u ω − c a² ω``, ``ẋ = u cos θ − a ω sin θ``,
  ``ẏ = u sin θ + a ω cos θ``, ``θ̇ = ω``;
* the non-minimal pendulum ``x = l cos φ``, ``y = l sin φ``: ``l φ̈ = −g sin φ``.
"""

import csv
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from anholo.examples import example_path

from cli_helpers import interrupt_after, run
from oracles import polar_reference, sleigh_reference

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def anholo(*argv, timeout=120):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "anholo", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, env=ENV)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start


def read_rows(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert all(len(r) == len(header) for r in rows[1:])  # whole rows only
    return header, np.array(rows[1:], dtype=float)


def no_temporaries(directory):
    return not [p for p in Path(directory).iterdir() if p.name.endswith(".tmp") or p.name.endswith(".partial")]


def sleigh_with_motor_reference(t, tau):
    """sleigh_with_motor from rest at the origin with u = 1 (its [values]: c = 0.1, k = 0.05)."""
    return sleigh_reference(t, [0, 0, 0], 1.0, 0.0, c=0.1, k=0.05, tau=tau)


# --- the hang reproducers stop at once, with one line saying why ------------------------------------------
def test_unreachable_tolerance_is_refused_before_the_run():
    code, out, err, elapsed = anholo("simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--t-end", 10,
                                     "--atol", 0, "--rtol", 1e-16, timeout=60)
    assert code == 2 and elapsed < 30, (code, elapsed)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--rtol" in lines[0] and "2.22e-14" in lines[0] and "deriving" not in err


def test_zero_atol_with_a_zero_state_component_stops_at_once():
    """atol = 0 and θ = 0: scipy's error scale is 0, its first step size NaN, and its step loop never ends."""
    code, out, err, elapsed = anholo("simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--t-end", 10,
                                     "--atol", 0, "--quiet", timeout=60)
    assert code != 0 and elapsed < 30, (code, elapsed)
    assert "atol" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_runaway_input_stops_promptly_and_keeps_its_motion(tmp_path):
    """``tau = exp(1000 t)`` spins the sleigh up until its steps collapse: the run stops within seconds (not at the
    600 s budget), exit 3, one error line naming t, and the CSV holds the motion up to the last accepted step."""
    path = tmp_path / "run.csv"
    code, out, err, elapsed = anholo("simulate", "sleigh_with_motor", "--q0", "0,0,0", "--qdot0", "1,0,0",
                                     "--t-end", 10, "--input", "tau=exp(1000*t)", "--csv", path, "--quiet",
                                     timeout=120)
    assert code == 3 and elapsed < 60, (code, elapsed, err)
    errors = [x for x in err.splitlines() if "error" in x]
    assert len(errors) == 1 and "step size collapsed" in errors[0] and "Traceback" not in err
    t_stop = float(errors[0].split("stopped at t = ")[1].split(":")[0])
    header, data = read_rows(path)
    assert header == ["t", "x", "y", "theta", "x_dot", "y_dot", "theta_dot"]
    assert 0.01 < t_stop < 0.71 and abs(data[-1, 0] - t_stop) <= 1e-9 * t_stop  # ends at the last accepted step
    assert np.all(np.diff(data[:, 0]) > 0) and no_temporaries(tmp_path)
    early = data[data[:, 0] <= 0.02]  # before the spin-up: compare with the independent equations
    ref = sleigh_with_motor_reference(early[:, 0], lambda t: math.exp(1000 * t))
    x, y, th, u, w = ref
    assert np.max(np.abs(early[:, 1:4].T - ref[:3]) / (1 + np.abs(ref[:3]))) < 1e-6
    assert np.max(np.abs(early[:, 6] - w) / (1 + np.abs(w))) < 1e-6


# --- output files are checked before the run -----------------------------------------------------------
@pytest.fixture
def mine(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(example_path("polar_particle").read_text())
    return path


BASE = ("--q0", "1,0", "--qdot0", "0.2,1.1", "--t-end", 5)


def test_csv_over_the_system_file_is_refused_before_the_run(capsys, mine):
    before = mine.read_bytes()
    code, out, err = run(capsys, "simulate", mine, *BASE, "--csv", mine)
    assert code == 2 and "input file" in err and "deriving" not in err
    assert mine.read_bytes() == before
    code, out, err = run(capsys, "simulate", mine, *BASE, "--plot", mine.with_suffix(".png"), "--csv",
                         mine.parent / "ok.csv", "--overlay", "euler-lagrange", "--quiet")
    assert code == 0, err  # the same system file with other outputs runs


@pytest.mark.parametrize("extra", [("--plot", "out.xyz"), ("--overlay", "vakonomic"), ("--plot", "nodir/out.png")])
def test_bad_figure_options_are_refused_before_the_csv_is_written(capsys, tmp_path, mine, extra):
    csv_path = tmp_path / "keep.csv"
    csv_path.write_text("an earlier result\n")
    args = [str(tmp_path / a) if a.endswith(".png") else a for a in extra]
    code, out, err = run(capsys, "simulate", mine, *BASE, "--csv", csv_path, *args)
    assert code == 2 and "deriving" not in err and "error" in err
    assert csv_path.read_text() == "an earlier result\n"


def test_csv_is_written_atomically(tmp_path, monkeypatch):
    """An interrupt while the table is written leaves the earlier file as it was and no temporary file."""
    from anholo.numerics import simulate
    from anholo.system import System

    traj = simulate(System.load("polar_particle"), 2.0, [1, 0], [0.2, 1.1], points=50)
    path = tmp_path / "out.csv"
    path.write_text("an earlier result\n")
    real = csv.writer

    class Breaking:
        def __init__(self, fh):
            self.w, self.n = real(fh), 0

        def writerow(self, row):
            self.n += 1
            if self.n > 20:
                raise KeyboardInterrupt
            self.w.writerow(row)

    monkeypatch.setattr(csv, "writer", Breaking)
    with pytest.raises(KeyboardInterrupt):
        traj.to_csv(path)
    assert path.read_text() == "an earlier result\n" and no_temporaries(tmp_path)
    monkeypatch.undo()
    traj.to_csv(path)
    header, data = read_rows(path)
    assert data.shape == (50, 5) and no_temporaries(tmp_path)


# --- early ends keep the work: Ctrl-C, the time budget ------------------------------------------------
def test_sigint_keeps_whole_rows_up_to_the_last_accepted_step(tmp_path):
    path = tmp_path / "long.csv"
    proc = subprocess.Popen([sys.executable, "-m", "anholo", "simulate", "polar_particle", "--q0", "1,0",
                             "--qdot0", "0.2,1.1", "--t-end", "1e7", "--points", "100001", "--budget", "300",
                             "--csv", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        line = ""
        deadline = time.monotonic() + 90
        while "derived and compiled" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        time.sleep(1.5)  # integrating
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted at t = " in out
    t_int = float(out.split("interrupted at t = ")[1].split()[0])
    header, data = read_rows(path)
    assert header == ["t", "r", "theta", "r_dot", "theta_dot"]
    assert data[-1, 0] == t_int and 0 < t_int < 1e7 and len(data) >= 2 and no_temporaries(tmp_path)
    ref = polar_reference(data[:, 0][data[:, 0] <= 200], [1, 0], [0.2, 1.1])
    got = data[data[:, 0] <= 200, 1:].T
    assert got.shape[1] >= 2 and np.max(np.abs(got - ref)) < 1e-6


def test_budget_keeps_the_motion_computed(capsys, tmp_path, monkeypatch):
    """The budget's SIGALRM inside the step loop: the accepted steps are written, exit status 3."""
    from anholo.numerics import stepping

    monkeypatch.setattr(stepping, "GRIND_LOOKS", 10**9)  # let the budget itself end the run
    path = tmp_path / "b.csv"
    start = time.monotonic()
    code, out, err = run(capsys, "simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0.2,1.1", "--t-end", 1e7,
                         "--points", 100001, "--budget", 3, "--csv", path, "--quiet")
    assert code == 3 and time.monotonic() - start < 30
    errors = [x for x in err.splitlines() if "error" in x]
    assert len(errors) == 1 and "time budget of 3 s" in errors[0]
    t_stop = float(errors[0].split("stopped at t = ")[1].split(":")[0])
    header, data = read_rows(path)
    assert abs(data[-1, 0] - t_stop) <= 1e-9 * t_stop and len(data) >= 2 and no_temporaries(tmp_path)
    sel = data[:, 0] <= 200
    assert np.max(np.abs(data[sel, 1:].T - polar_reference(data[sel, 0], [1, 0], [0.2, 1.1]))) < 1e-6


def test_too_long_for_the_budget_stops_early_with_its_work(capsys, tmp_path):
    """A run whose pace says it needs far more than its budget stops after a few seconds, keeping its steps."""
    path = tmp_path / "p.csv"
    start = time.monotonic()
    code, out, err = run(capsys, "simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0.2,1.1", "--t-end", 1e9,
                         "--points", 1001, "--budget", 60, "--csv", path, "--quiet")
    assert code == 3 and time.monotonic() - start < 40
    assert "too long for its time budget" in err
    header, data = read_rows(path)
    assert data[-1, 0] > 0 and data[-1, 0] < 1e9


# --- holonomic constraints (the projection route) ----------------------------------------------------
def test_interrupted_projected_run_keeps_its_steps(monkeypatch):
    from anholo.numerics import simulate
    from anholo.system import System

    system = System.load("nonminimal_pendulum")
    phi0 = 0.4
    q0, qdot0 = [math.cos(phi0), math.sin(phi0)], [-math.sin(phi0) * 0.3, math.cos(phi0) * 0.3]
    interrupt_after(monkeypatch, 3000)
    traj = simulate(system, 100.0, q0, qdot0, points=1001)
    monkeypatch.undo()
    assert traj.interrupted and 0 < traj.t[-1] < 100
    assert traj.t[-1] == float(traj.message.split("= ")[1])
    assert np.max(np.abs(traj.holonomic_residuals())) <= 1e-12
    sol = solve_ivp(lambda t, s: [s[1], -9.81 * math.sin(s[0])], (0, traj.t[-1]), [phi0, 0.3], t_eval=traj.t,
                    rtol=1e-12, atol=1e-12, method="DOP853")
    assert np.max(np.abs(traj.q - np.vstack([np.cos(sol.y[0]), np.sin(sol.y[0])]))) < 1e-7


# --- the fixed-step methods -------------------------------------------------------------------------
def test_fixed_step_interrupt_keeps_the_steps_done(monkeypatch):
    from anholo.numerics import simulate
    from anholo.numerics import variational
    from anholo.system import System

    system = System.load("polar_particle")
    full = simulate(system, 20.0, [1, 0], [0.2, 1.1], method="variational", step=0.01)
    real = variational.DLAStepper.step
    calls = {"n": 0}

    def step(self, *a):
        calls["n"] += 1
        if calls["n"] > 700:
            raise KeyboardInterrupt
        return real(self, *a)

    monkeypatch.setattr(variational.DLAStepper, "step", step)
    part = simulate(system, 20.0, [1, 0], [0.2, 1.1], method="variational", step=0.01)
    assert part.interrupted and len(part.t) == 701 and part.t[-1] == pytest.approx(7.0)
    assert np.array_equal(part.q, full.q[:, :701]) and np.allclose(part.qdot, full.qdot[:, :701], rtol=1e-13,
                                                                    atol=1e-13)
    ref = polar_reference(part.t, [1, 0], [0.2, 1.1])
    assert np.max(np.abs(part.q - ref[:2])) < 1e-3  # second order at h = 0.01


def test_fixed_step_budget_keeps_the_steps_done(capsys, tmp_path):
    path = tmp_path / "h.csv"
    code, out, err = run(capsys, "simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0.2,1.1", "--t-end", 1e6,
                         "--method", "hamel", "--step", 0.01, "--budget", 3, "--csv", path)
    assert code == 3 and "time budget of 3 s" in err
    assert "integrating (hamel, step 0.01): t = " in err  # progress on stderr
    header, data = read_rows(path)
    t_stop = float([x for x in err.splitlines() if "error" in x][0].split("stopped at t = ")[1].split(":")[0])
    assert data[-1, 0] == pytest.approx(t_stop, rel=1e-12) and 0 < t_stop < 1e6
    assert round(t_stop / 0.01) == pytest.approx(t_stop / 0.01, abs=1e-6)  # a grid point: a completed step


def test_fixed_step_run_derives_no_ode_field(capsys, monkeypatch):
    """The fixed-step schemes compile their own functions: the command derives no ODE field for them."""
    import anholo.numerics as numerics

    def refuse(*a, **k):
        raise AssertionError("the ODE field was compiled for a fixed-step run")

    monkeypatch.setattr(numerics, "compile_system", refuse)
    monkeypatch.setattr(numerics, "from_system", refuse)
    code, out, err = run(capsys, "simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0.2,1.1", "--t-end", 1,
                         "--method", "variational", "--step", 0.01, "--quiet")
    assert code == 0, err
    assert "deriving" not in err


def test_integrate_projected_keeps_its_steps_on_ctrl_c():
    """The projection route's own entry point: a pendulum in natural velocities on x² + y² = 1 (x down,
    ``ẍ = g − λx``, ``ÿ = −λy``, ``λ = ẋ² + ẏ² + g x``), interrupted; the steps kept agree with ``φ̈ = −g sin φ``."""
    from anholo.numerics.projection import Projector, integrate_projected

    g, phi0, calls = 9.81, 0.4, {"n": 0}

    def rhs(t, s):
        calls["n"] += 1
        if calls["n"] > 2000:
            raise KeyboardInterrupt
        x, y, u, v = s
        lam = u * u + v * v + g * x
        return np.array([u, v, g - lam * x, -lam * y])

    proj = Projector(f=lambda t, q: np.array([q[0]**2 + q[1]**2 - 1]), jac=lambda t, q: np.array([[2 * q[0], 2 * q[1]]]),
                     ft=lambda t, q: np.array([0.0]), n=2, velocities=True)
    res = integrate_projected(rhs, (0, 100), [math.cos(phi0), math.sin(phi0), 0, 0], proj,
                              t_eval=np.linspace(0, 100, 1001))
    assert res.status == 1 and res.message.startswith("interrupted at t = ")
    assert 1 < len(res.t) < 1001 and res.t[-1] == float(res.message.split("= ")[1]) and res.max_residual < 1e-14
    sol = solve_ivp(lambda t, s: [s[1], -g * math.sin(s[0])], (0, res.t[-1]), [phi0, 0], t_eval=res.t, rtol=1e-12,
                    atol=1e-12, method="DOP853")
    assert np.max(np.abs(res.y[:2] - np.vstack([np.cos(sol.y[0]), np.sin(sol.y[0])]))) < 1e-8


def test_non_finite_right_hand_side_stops_at_once_with_its_motion():
    """An input that turns NaN at t = 0.3 stops the run there (not at a budget), naming t; the motion before is
    kept as the error's ``partial`` and agrees with the sleigh's equations with τ = 0."""
    from anholo.errors import IntegrationError
    from anholo.numerics import compile_system, from_system, simulate
    from anholo.system import System

    c = compile_system(from_system(System.load("sleigh_with_motor"), "nonholonomic"))
    start = time.monotonic()
    with pytest.raises(IntegrationError, match=r"t = 0\.3\b") as info:
        simulate(c, 10.0, [0, 0, 0], [1, 0, 0], points=101, inputs={"tau": lambda t, y: math.nan if t > 0.3 else 0.0})
    assert time.monotonic() - start < 10
    part = info.value.partial
    assert part.message.startswith("stopped at t = ") and part.t[-1] == pytest.approx(0.3, abs=1e-9)
    ref = sleigh_with_motor_reference(part.t, lambda t: 0.0)
    assert np.max(np.abs(part.q - ref[:3])) < 1e-8


def test_input_in_velocities_and_parameters_equals_the_callable_run(tmp_path):
    """``--input tau=0.2*sin(t) - k*theta_dot`` (a damping law in a velocity and a parameter) gives the motion of
    the same law written as a Python callable of (t, state) in the API; ``+ k*theta_dot`` does not."""
    from anholo.numerics import compile_system, from_system, simulate
    from anholo.system import System

    c = compile_system(from_system(System.load("sleigh_with_motor"), "nonholonomic"))
    a, k = (float(c.parameter_vector()[list(c.parameters).index(n)]) for n in ("a", "k"))

    def tau(t, y):  # state (x, y, theta, u, w): theta_dot = w / a
        return 0.2 * math.sin(t) - k * y[4] / a

    ref = simulate(c, 3.0, [0, 0, 0], [1, 0, 0], points=31, rtol=1e-11, atol=1e-12, inputs={"tau": tau})
    rows = {}
    for sign in ("-", "+"):
        path = tmp_path / f"run{sign == '+'}.csv"
        code, out, err, _ = anholo("simulate", "sleigh_with_motor", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 3,
                                   "--points", 31, "--rtol", 1e-11, "--atol", 1e-12, "--input",
                                   f"tau=0.2*sin(t) {sign} k*theta_dot", "--csv", path, "--quiet")
        assert code == 0, err
        rows[sign] = read_rows(path)[1]
    assert np.max(np.abs(rows["-"][:, 1:4] - ref.q.T)) < 1e-8
    assert np.max(np.abs(rows["+"][:, 1:4] - ref.q.T)) > 1e-4
    code, out, err, _ = anholo("simulate", "sleigh_with_motor", "--q0", "0,0,0", "--qdot0", "1,0,0", "--t-end", 1,
                               "--input", "tau=s*t", "--quiet")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "'s'" in err

"""Held-out frame-language systems whose adapted frame degenerates on a natural motion (issue #24).

Each file in tests/numerics/data writes its Lagrangian and constraint in the quasi-velocities of a frame in
which no coefficient of the constraint is constant; the adapted frame solves it for the last quasi-velocity,
whose coefficient (the pivot) vanishes somewhere on the motion while the distribution D and the coordinates
stay regular:

* the Suslov problem (Suslov 1902) in the space angular velocities: pivot ``(R a)_3``, zero when the Suslov
  axis ``a`` is horizontal;
* the Chaplygin sleigh in the spatial velocities of SE(2) (Murray, Li & Sastry 1994): pivot
  ``x cos θ + y sin θ − a``;
* the nonholonomic oscillator (Bloch 2003) in axes rotated against the coordinates: pivot ``(1 − 2y)/3``.

Oracle: the coordinate multiplier equations (tests/oracles.py ``multiplier_ode``) of L and the constraint
rewritten here BY HAND in the natural velocities (Euler-angle body rates ``Ω1 = φ̇ sin θ sin ψ + θ̇ cos ψ``, …;
the sleigh's and the particle's kinetic energy in ``ẋ, ẏ, …``), integrated by ``solve_ivp`` (DOP853,
rtol 1e-12), independent of anholo's frames and right-hand sides.
"""

import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from anholo.errors import IntegrationError
from anholo.numerics import compile_system, from_system, simulate
from anholo.numerics.charts import ChartAtlas
from anholo.system import System

from cli_helpers import read_csv, run
from oracles import multiplier_ode

DATA = Path(__file__).parent / "data"


def _suslov(inertia=(1.0, 2.0, 3.0), gamma=0.5):
    ph, th, ps, phd, thd, psd = sp.symbols("phi theta psi phi_dot theta_dot psi_dot")
    O1 = phd * sp.sin(th) * sp.sin(ps) + thd * sp.cos(ps)  # body angular velocity, ZXZ Euler angles
    O2 = phd * sp.sin(th) * sp.cos(ps) - thd * sp.sin(ps)
    O3 = phd * sp.cos(th) + psd
    L = (inertia[0] * O1**2 + inertia[1] * O2**2 + inertia[2] * O3**2) / 2
    cons = [math.cos(gamma) * O1 + math.sin(gamma) * O3]  # <Ω, a> = 0, a = (cos γ, 0, sin γ)
    q0, thd0, psd0 = [0.2, 1.0, 0.3], 0.5, 0.5
    # φ̇ from the constraint at q0: cos γ (φ̇ sin θ sin ψ + θ̇ cos ψ) + sin γ (φ̇ cos θ + ψ̇) = 0
    s, c = math.sin, math.cos
    phd0 = -(c(gamma) * thd0 * c(q0[2]) + s(gamma) * psd0) / (c(gamma) * s(q0[1]) * s(q0[2]) + s(gamma) * c(q0[1]))

    def pivot(q):  # (R a)_3, the coefficient of w3
        return c(gamma) * np.sin(q[1]) * np.sin(q[2]) + s(gamma) * np.cos(q[1])

    return L, [ph, th, ps], [phd, thd, psd], cons, q0, [phd0, thd0, psd0], pivot


def _sleigh(m=1.0, inertia=1.0, a=0.5):
    x, y, th, xd, yd, thd = sp.symbols("x y theta x_dot y_dot theta_dot")
    L = m * (xd**2 + yd**2) / 2 + inertia * thd**2 / 2  # (x, y) the centre of mass
    cons = [-sp.sin(th) * xd + sp.cos(th) * yd - a * thd]  # no lateral velocity of the contact point
    q0, u0, w0 = [-1.0, 0.3, 0.2], 1.0, 0.8  # forward speed u0, turning rate w0
    qd0 = [u0 * math.cos(0.2) - a * w0 * math.sin(0.2), u0 * math.sin(0.2) + a * w0 * math.cos(0.2), w0]

    def pivot(q):
        return q[0] * np.cos(q[2]) + q[1] * np.sin(q[2]) - a

    return L, [x, y, th], [xd, yd, thd], cons, q0, qd0, pivot


def _oscillator(m=1.0, k=1.0):
    x, y, z, xd, yd, zd = sp.symbols("x y z x_dot y_dot z_dot")
    L = m * (xd**2 + yd**2 + zd**2) / 2 - k * y**2 / 2
    cons = [zd - y * xd]
    q0 = [0.1, -0.2, 0.3]
    qd0 = [0.5, 1.0, q0[1] * 0.5]

    def pivot(q):
        return (1 - 2 * q[1]) / 3

    return L, [x, y, z], [xd, yd, zd], cons, q0, qd0, pivot


#: (file, oracle, t_end, regular chart: a file or Maggi's dependent velocities)
CASES = {
    "suslov": ("suslov_space_frame.toml", _suslov, 8.0),
    "sleigh": ("sleigh_spatial_frame.toml", _sleigh, 6.0),
    "oscillator": ("oscillator_rotated_frame.toml", _oscillator, 10.0),
}
PERTURBED = {"suslov": dict(inertia=(1.0, 2.0, 3.05)), "sleigh": dict(a=0.52), "oscillator": dict(k=1.05)}


def reference(oracle, times, **kw):
    L, q, u, cons, q0, qd0, _ = oracle(**kw)
    f = multiplier_ode(L, q, u, cons)
    sol = solve_ivp(f, (times[0], times[-1]), [*q0, *qd0], t_eval=times, rtol=1e-12, atol=1e-13, method="DOP853")
    assert sol.success
    return sol.y


@pytest.fixture(scope="module", params=[pytest.param("suslov", marks=pytest.mark.slow), "sleigh", "oscillator"])
def case(request):
    name = request.param
    path, oracle, t_end = CASES[name]
    system = System.load(str(DATA / path))
    return name, system, oracle, t_end


def test_the_pivot_is_crossed_and_the_frame_fails_there(case):
    """The premise: along the motion the pivot changes sign, and there the two solved frame vectors of the
    file's frame are parallel (rank 1), while the constraint one-form in natural velocities is nonzero."""
    name, system, oracle, t_end = case
    times = np.linspace(0.0, t_end, 401)
    ref = reference(oracle, times)
    L, q, u, cons, q0, qd0, pivot = oracle()
    piv = pivot(ref[:3])
    assert np.any(np.sign(piv[1:]) != np.sign(piv[:-1])), name
    j = int(np.argmin(np.abs(piv)))
    at = {**{str(k): float(v) for k, v in system.values.items()}, **{str(c): x for c, x in zip(q, ref[:3, j])}}
    frame = system.nonholonomic().frame.vectors[:2, :]
    X = np.array(frame.subs({s: at[s.name] for s in frame.free_symbols}).evalf(), dtype=float)
    s = np.linalg.svd(X / np.linalg.norm(X, axis=1)[:, None], compute_uv=False)
    assert s[-1] / s[0] < 20 * abs(piv[j]) + 1e-6  # σ_min/σ_max of the unit rows ~ |pivot|
    form = np.array([float(sp.diff(cons[0], v).subs(dict(zip(q, ref[:3, j])))) for v in u])
    assert np.linalg.norm(form) > 0.3  # D is regular there


def test_through_the_frame_singularity_with_the_atlas(case):
    name, system, oracle, t_end = case
    compiled = compile_system(from_system(system))
    times = np.linspace(0.0, t_end, 41)
    L, q, u, cons, q0, qd0, _ = oracle()
    traj = simulate(compiled, (0.0, t_end), q0, qd0, t_eval=times, atlas=ChartAtlas(system))
    assert traj.notes and "changed chart" in traj.notes[0] and "-> Maggi's equations" in traj.notes[0], traj.notes
    ref = reference(oracle, times)
    assert np.abs(traj.q - ref[:3]).max() < 1e-6
    assert np.abs(traj.qdot - ref[3:]).max() < 1e-6
    assert np.abs(traj.constraint_residuals()).max() < 1e-10
    other = reference(oracle, times, **PERTURBED[name])  # the oracle can tell another system
    assert np.abs(traj.q - other[:3]).max() > 1e-3
    # without the atlas the frame chart grinds to a stall at the pivot, and says so
    with pytest.raises(IntegrationError, match="step size collapsed"):
        simulate(compiled, (0.0, t_end), q0, qd0, t_eval=times)


def test_the_command_line_changes_chart(case, capsys, tmp_path):
    name, system, oracle, t_end = case
    L, q, u, cons, q0, qd0, _ = oracle()
    out_csv = tmp_path / "run.csv"
    code, out, err = run(capsys, "simulate", DATA / CASES[name][0], "--q0=" + ",".join(map(repr, q0)),
                         "--qdot0=" + ",".join(map(repr, qd0)), "--t-end", t_end, "--points", 21, "--csv", out_csv)
    assert code == 0, err
    assert "changed chart at t = " in err, err
    header, data = read_csv(out_csv)
    assert data.shape == (21, 7)
    ref = reference(oracle, data[:, 0])
    assert np.abs(data[:, 1:].T - ref).max() < 1e-6

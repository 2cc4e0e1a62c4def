"""What a user calls first is importable from ``anholo`` (loaded on first use: ``import anholo`` stays light)."""

import subprocess
import sys

import numpy as np

import anholo


def test_lazy_exports_are_the_library_objects():
    from anholo.analysis.linearization import linearize
    from anholo.numerics import compile_system, simulate
    from anholo.system import System

    assert anholo.System is System and anholo.simulate is simulate
    assert anholo.linearize is linearize and anholo.compile_system is compile_system
    assert {"System", "simulate", "linearize", "sweep"} <= set(dir(anholo)) & set(anholo.__all__)


def test_unknown_attribute_is_an_attribute_error():
    try:
        anholo.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_the_numerics():
    code = "import sys, anholo; print('scipy' in sys.modules, 'anholo.numerics' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.split() == ["False", "False"]


def test_top_level_simulation_of_the_sleigh():
    """The sleigh's heading against its reduced equations (Chaplygin 1911; Neimark & Fufaev 1972):
    ``u̇ = a ω²``, ``(I + m a²) ω̇ = −m a u ω``, ``θ̇ = ω``."""
    from scipy.integrate import solve_ivp

    system = anholo.System.load("chaplygin_sleigh")
    m, inertia, a = 1.0, 0.7, 0.5
    u0, w0 = 0.3, 1.0  # at theta = 0: x_dot = u, y_dot = a*omega (no sideways slip of the contact)
    traj = anholo.simulate(system.nonholonomic().field(), 2.0, [0, 0, 0], [u0, a * w0, w0],
                           parameters={"m": m, "I": inertia, "a": a}, points=9)
    ref = solve_ivp(lambda t, s: [a * s[1] ** 2, -m * a * s[0] * s[1] / (inertia + m * a * a), s[1]], (0, 2),
                    [u0, w0, 0.0], rtol=1e-12, atol=1e-12, t_eval=traj.t)
    assert np.max(np.abs(traj.q[2] - ref.y[2])) < 1e-8
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-9

"""``anholo linearize``: the eigenvalue table over a sweep, JSON, and user errors.

Oracle: the classical stability bound of a rolling thin disk, upright rolling at
spin rate ω stable iff ``ω² > g/(3r)`` (Neimark & Fufaev 1972), here
``√(9.81/1.5) = 2.557…`` for the bundled disk (r = 0.5).
"""

from __future__ import annotations

import io
import json

from anholo.cli import main


def test_sweep_table_changes_stability_at_the_classical_bound():
    out = io.StringIO()
    assert main(["linearize", "rolling_disk", "--at", "lean=0", "--states", "lean,v1,v2,v3",
                 "--sweep", "v3=2.4:2.7:4"], out=out) == 0
    lines = out.getvalue().splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[-2:] == ["verdict", "eigenvalues"])
    rows = [line.split() for line in lines[header + 1:]]
    verdicts = {float(r[0]): r[1] for r in rows}
    # above the bound the spectrum is 0, 0, ±iω: marginal (not "stable"), below a real pair ±σ: unstable
    assert verdicts[2.4] == verdicts[2.5] == "unstable" and verdicts[2.6] == verdicts[2.7] == "marginal"
    assert "stable: max Re λ < -1e-09" in "\n".join(lines[:header])


def test_json_and_errors(capsys):
    out = io.StringIO()
    assert main(["linearize", "rolling_disk", "--at", "v3=3", "--states", "lean,v1,v2,v3", "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    assert data["results"][0]["verdict"] == "marginal" and not data["results"][0]["stable"]
    assert len(data["results"][0]["A"]) == 4 and "marginal: |max Re λ| ≤ 1e-09" in data["stability"]
    assert main(["linearize", "rolling_disk", "--states", "lean,nope"], out=io.StringIO()) == 2
    assert "anholo: error:" in capsys.readouterr().err
    assert main(["linearize", "rolling_disk", "--sweep", "v3=1:2"], out=io.StringIO()) == 2


def test_inputs_give_the_input_matrix(capsys):
    """The sleigh's motor: (I + m a²) ω̇ = τ − k ω − m a u ω − c a² ω and m u̇ = m a ω² − c u (the closed form
    of its Lagrange–d'Alembert equations in the file's description); the free quasi-velocities are u and
    w = a ω (the constraint is solved for ω), so ∂u̇/∂τ = 0 and ∂ẇ/∂τ = a/(I + m a²)."""
    import json

    from anholo.system import System

    assert main(["linearize", "sleigh_with_motor", "--at", "u=0.5,tau=0.1", "--states", "u,w", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    result = data["results"][0]
    assert result["inputs"] == ["tau"]
    vals = {p.name: float(v) for p, v in System.load("sleigh_with_motor").values.items()}
    B = result["B"]
    assert abs(B[0][0]) < 1e-12
    assert abs(B[1][0] - vals["a"] / (vals["I"] + vals["m"] * vals["a"] ** 2)) < 1e-12


def test_unconstrained_linearisation_keeps_the_dissipation(tmp_path, capsys):
    """m ẍ = −k x − c ẋ: λ = −c/2m ± i sqrt(k/m − c²/4m²) (the free field was linearised without its forces)."""
    import json

    from anholo.cli import main

    path = tmp_path / "spring.toml"
    path.write_text('name = "damped spring"\ncoordinates = ["x"]\nparameters = ["m", "k", "c"]\n'
                    'lagrangian = "m*x_dot^2/2 - k*x^2/2"\ndissipation = "c*x_dot^2/2"\n'
                    '[values]\nm = 2\nk = 8\nc = 0.4\n')
    assert main(["linearize", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["results"][0]
    eig = sorted((complex(re, im) for re, im in result["eigenvalues"]), key=lambda z: z.imag)
    m, k, c = 2.0, 8.0, 0.4
    want = sorted([complex(-c / (2 * m), s * (k / m - c * c / (4 * m * m)) ** 0.5) for s in (1, -1)], key=lambda z: z.imag)
    assert max(abs(a - b) for a, b in zip(eig, want)) < 1e-9
    assert result["verdict"] == "stable"


# --- the exact route chooses states that carry the reference motion ------------------------------------
def _disk_file(tmp_path, order):
    """The bundled rolling disk with its constraints in body form and the coordinates in ``order``: on the
    exact route its default frame cannot carry the motions below (its dependent velocities are those of y
    and spin, its free velocity x_dot rotates with the yaw)."""
    import re

    from anholo.examples import example_path

    text = example_path("rolling_disk").read_text().replace(
        '"x_dot - r*cos(yaw)*spin_dot",', '"cos(yaw)*x_dot + sin(yaw)*y_dot - r*spin_dot",').replace(
        '"y_dot - r*sin(yaw)*spin_dot",', '"-sin(yaw)*x_dot + cos(yaw)*y_dot",')
    path = tmp_path / "disk.toml"
    path.write_text(re.sub(r"coordinates = \[.*\]", f"coordinates = [{order}]", text))
    return path


def _disk_oracle(m=1.0, r=0.5, g=9.81):
    """The rolling disk's accelerations in the invariant states ``z = (lean, lean_dot, yaw_dot, spin_dot)``
    from the coordinate multiplier equations (``oracles.multiplier_ode``), at yaw = 0 (x, y, yaw and spin
    do not enter): ``ż = g(z)``."""
    import numpy as np

    from oracles import rolling_disk_ode

    f = rolling_disk_ode(m, r, g)

    def rates(z):
        le, led, yd_, sd = z
        s = f(0.0, np.array([0.0, 0.0, 0.0, le, 0.0, r * sd, 0.0, yd_, led, sd]))
        return np.array([led, s[8], s[7], s[9]])

    return rates


def _nonzero_eigenvalues(rates, z0, step=1e-6):
    import numpy as np

    J = np.column_stack([(rates(z0 + step * e) - rates(z0 - step * e)) / (2 * step) for e in np.eye(len(z0))])
    v = np.linalg.eigvals(J)
    return np.sort_complex(v[np.abs(v) > 1e-6])


def _eigenvalues(data):
    import numpy as np

    v = np.array([complex(e[0], e[1]) if isinstance(e, (list, tuple)) else complex(e)
                  for e in data["results"][0]["eigenvalues"]])
    return np.sort_complex(v[np.abs(v) > 1e-6])


def test_exact_route_rechooses_dependent_velocities_that_carry_the_reference(tmp_path):
    """Upright straight rolling at spin_dot = 6: the file's default dependent velocities cannot set spin_dot
    (the command refused); the dependent velocities are re-chosen and the eigenvalues are those of the
    independent equations (±8.41i, the weave of the upright disk)."""
    import numpy as np

    out = io.StringIO()
    path = _disk_file(tmp_path, '"y", "spin", "yaw", "lean", "x"')
    assert main(["linearize", str(path), "--at", "spin_dot=6", "--json"], out=out) == 0
    data = json.loads(out.getvalue())
    assert data["choice"]["dependent"] is not None
    want = _nonzero_eigenvalues(_disk_oracle(), np.array([0.0, 0.0, 0.0, 6.0]))
    assert len(want) == 2 and abs(want[0].imag) > 8
    assert np.allclose(_eigenvalues(data), want, atol=1e-6), (data["results"][0]["eigenvalues"], want)


def test_exact_route_switches_states_on_steady_turning_instead_of_refusing(tmp_path):
    """Steady turning (lean α, yaw rate 1.5, spin rate 5; α from the independent equations, lean_ddot = 0): the
    yaw moves, so states with x_dot, which rotates with it, are no equilibrium.  The exact route now re-chooses
    the dependent velocities (those of x and y, as Maggi's route does); the states are invariant and the
    eigenvalues are those of the finite-difference Jacobian of the independent equations in
    (lean, lean_dot, yaw_dot, spin_dot)."""
    import numpy as np
    from scipy.optimize import brentq

    rates = _disk_oracle()
    yaw_dot, spin_dot = 1.5, 5.0
    lean = brentq(lambda a: rates(np.array([a, 0.0, yaw_dot, spin_dot]))[1], -1.0, 1.0)
    assert np.abs(rates(np.array([lean, 0.0, yaw_dot, spin_dot]))).max() < 1e-9  # a steady motion
    path = _disk_file(tmp_path, '"y", "spin", "yaw", "lean", "x"')
    out = io.StringIO()
    code = main(["linearize", str(path), "--at", f"yaw=0.3,lean={lean!r},yaw_dot=1.5,spin_dot=5", "--json"], out=out)
    assert code == 0
    data = json.loads(out.getvalue())
    assert "yaw" not in data["states"] and "x" not in data["states"]
    want = _nonzero_eigenvalues(rates, np.array([lean, 0.0, yaw_dot, spin_dot]))
    assert len(want) >= 2
    assert np.allclose(_eigenvalues(data), want, atol=1e-5), (data["results"][0]["eigenvalues"], want)

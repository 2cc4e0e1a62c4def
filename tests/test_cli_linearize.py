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
    rows = [line.split() for line in out.getvalue().splitlines()[2:]]
    verdicts = {float(r[0]): r[1] for r in rows}
    # above the bound the spectrum is 0, 0, ±iω: marginal (not "stable"), below a real pair ±σ: unstable
    assert verdicts[2.4] == verdicts[2.5] == "unstable" and verdicts[2.6] == verdicts[2.7] == "marginal"
    assert "stable: max Re λ < -1e-09" in out.getvalue().splitlines()[0]


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

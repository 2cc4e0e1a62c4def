"""The reproducers of the "real mechanics" issue: degenerate Lagrangians and crashes of ``anholo analyze``.

Oracles: the vakonomic field of the Heisenberg/Brockett system derived here by hand
from the multiplication rule (Euler–Lagrange equations of
``L + λ (ż − (x ẏ − y ẋ)/2)`` solved by sympy in the test: ẍ = −λẏ, ÿ = λẋ,
z̈ = λ(xẋ + yẏ)/2, λ̇ = 0); the exit-status contract of ``anholo analyze``
(0 complete, 3 printed with a failed section, 2 user error) and the report's blocks.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from anholo.cli import main
from anholo.dynamics.vakonomic import VakonomicSystem
from anholo.examples import resolve_system
from anholo.io.systemfile import parse_system
from anholo.system import System

HEISENBERG = """
name = "Heisenberg"
coordinates = ["x", "y", "z"]
lagrangian = "(x_dot^2 + y_dot^2)/2"
constraints = ["z_dot - (x*y_dot - y*x_dot)/2"]
"""

_W1 = "(phi_dot*sin(theta)*sin(psi) + theta_dot*cos(psi))"
_W2 = "(phi_dot*sin(theta)*cos(psi) - theta_dot*sin(psi))"
SUSLOV = f"""
name = "Suslov problem with a product of inertia"
coordinates = ["phi", "theta", "psi"]
parameters = ["I1", "I2", "I3", "I12"]
lagrangian = "(I1*{_W1}^2 + I2*{_W2}^2 + I3*(phi_dot*cos(theta) + psi_dot)^2)/2 + I12*{_W1}*{_W2}"
constraints = ["phi_dot*cos(theta) + psi_dot"]
"""


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _hand_heisenberg():
    """q̈ and λ̇ of E(L + λφ) = 0, φ = ż − (xẏ − yẋ)/2, with the differentiated constraint: by sympy here."""
    t = sp.Symbol("t")
    x, y, z, lam = (sp.Function(n)(t) for n in ("x", "y", "z", "lam"))
    Lb = (x.diff(t) ** 2 + y.diff(t) ** 2) / 2 + lam * (z.diff(t) - (x * y.diff(t) - y * x.diff(t)) / 2)
    eqs = [sp.diff(Lb.diff(s.diff(t)), t) - Lb.diff(s) for s in (x, y, z)]
    eqs.append(sp.diff(z.diff(t) - (x * y.diff(t) - y * x.diff(t)) / 2, t))
    unknowns = [x.diff(t, 2), y.diff(t, 2), z.diff(t, 2), lam.diff(t)]
    sol = sp.solve(eqs, unknowns, dict=True)[0]
    X, Y, Z, XD, YD, ZD, L = sp.symbols("x y z x_dot y_dot z_dot lambda", real=True)
    back = {x.diff(t): XD, y.diff(t): YD, z.diff(t): ZD, x: X, y: Y, z: Z, lam: L}
    return [sp.simplify(sol[u].subs(back)) for u in unknowns], (X, Y, Z, XD, YD, ZD, L)


def test_heisenberg_vakonomic_field_is_the_normal_geodesic_flow(capsys):
    spec = parse_system(HEISENBERG)
    system = System.from_spec(spec)
    vak = VakonomicSystem(system.nonholonomic())
    field = vak.field()
    expected, (X, Y, Z, XD, YD, ZD, L) = _hand_heisenberg()
    # the closed form the issue states
    assert [sp.simplify(e - f) for e, f in zip(expected, [-L * YD, L * XD, L * (X * XD + Y * YD) / 2, 0])] == [0] * 4
    # anholo's field in natural terms: q̈(q, q̇, λ) with λ the multiplier of the constraint as written
    nh = vak.constrained
    M = nh.form_matrix
    lam_frame = vak.multipliers[0]
    acc = field.natural_accelerations(natural=True)
    x, y, z = spec.coordinates
    xd, yd, zd = spec.velocities
    sub = {lam_frame: L * M[0, 0], x: X, y: Y, z: Z, xd: XD, yd: YD, zd: ZD}
    for q, e in zip((x, y, z), expected[:3]):
        assert sp.simplify(acc[q].xreplace(sub) - e) == 0
    rate = nh.to_natural(field.multiplier_rates[0] / M[0, 0])
    assert sp.simplify(rate.xreplace(sub)) == 0
    # and the report prints its vakonomic block (it used to crash: 'BooleanTrue' object has no attribute 'lhs')
    code, out, err = _run(capsys, "analyze", "--quiet", "--json", _tmp(HEISENBERG))
    assert code == 0, err
    data = json.loads(out)
    assert "error" not in data["vakonomic"] and "error" not in data["nonholonomic"]


def _tmp(text, _counter=[0]):
    import tempfile, os

    _counter[0] += 1
    path = os.path.join(tempfile.mkdtemp(prefix="anholo-i14-"), f"system{_counter[0]}.toml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _cartan_equation_residuals(spec, frame, quasi, particular, point):
    """The Cartan equation ``i_Γ dθ_L = −dE_L`` in natural coordinates, built here from the file's L(q, q̇),
    at ``point`` (values of q, the quasi-velocities and the parameters) for the field
    ``Γ = A^i X_i^C + B^i X_i^V``: with ``a = A^i X_i``, ``b^A = A^i ∂_B X_i^A u^B + B^i X_i^A`` and
    ``u = v^i X_i``, the ``du`` part is ``W (a − u) = 0`` and the ``dq^A`` part
    ``(∂²L/∂u^A∂q^B − ∂²L/∂u^B∂q^A) a^B + W_AB b^B + u^B ∂²L/∂u^B∂q^A − ∂L/∂q^A = 0``."""
    q, u, n = list(spec.coordinates), list(spec.velocities), len(spec.coordinates)
    X = frame.xreplace(point)
    dX = [frame.diff(qb).xreplace(point) for qb in q]
    v = [point[s] for s in quasi]
    uu = [sum(v[i] * X[i, A] for i in range(n)) for A in range(n)]
    Avals = [particular[f"A{i + 1}"] for i in range(n)]
    Bvals = [particular[f"B{i + 1}"] for i in range(n)]
    a = [sum(Avals[i] * X[i, A] for i in range(n)) for A in range(n)]
    b = [sum(Avals[i] * dX[B][i, A] * uu[B] for i in range(n) for B in range(n)) + sum(Bvals[i] * X[i, A] for i in range(n))
         for A in range(n)]
    L = sp.sympify(spec.lagrangian)
    at = {**{s: point[s] for s in q if s in point}, **{s: val for s, val in zip(u, uu)},
          **{s: point[s] for s in spec.parameters if s in point}}
    W = [[L.diff(u[A], u[B]).xreplace(at) for B in range(n)] for A in range(n)]
    Luq = [[L.diff(u[A], q[B]).xreplace(at) for B in range(n)] for A in range(n)]
    Lq = [L.diff(q[A]).xreplace(at) for A in range(n)]
    du_part = [sum(W[A][B] * (a[B] - uu[B]) for B in range(n)) for A in range(n)]
    dq_part = [sum((Luq[A][B] - Luq[B][A]) * a[B] + W[A][B] * b[B] + uu[B] * Luq[B][A] for B in range(n)) - Lq[A]
               for A in range(n)]
    return du_part + dq_part


@pytest.mark.slow
def test_carriage_with_a_singular_free_lagrangian_is_analysed(capsys):
    """m J = m0² a²: the free L is singular, L is regular on D: the constrained blocks are computed and the
    Euler–Lagrange block gives the Cartan general solution; the report is complete (exit 0), written with
    shared subexpressions in JSON and under the size budget in text (printing it in full took 98 s)."""
    sets = ["--set", "m=2", "--set", "m0=2", "--set", "J=2", "--set", "a=1"]
    code, out, err = _run(capsys, "analyze", "two_wheeled_carriage", *sets, "--quiet", "--json", "--sections",
                          "euler_lagrange,nonholonomic,vakonomic")
    assert code == 0, err
    assert len(out) < 200_000
    data = json.loads(out)
    assert data["regular"] is False
    el = data["euler_lagrange"]
    assert el["q_ddot"] is None and el["cartan"]["free_unknowns"]
    for key in ("nonholonomic", "vakonomic"):
        assert "error" not in data[key]
    # the particular solution as written solves the Cartan equation built here from the file's L(q, q̇)
    spec = resolve_system("two_wheeled_carriage").substitute({"m": 2, "m0": 2, "J": 2, "a": 1})
    system = System.from_spec(spec)
    quasi = list(system.bundle.quasi_velocities)
    rng = np.random.default_rng(7)
    point = {s: sp.Rational(int(rng.integers(1, 9)), int(rng.integers(2, 7)))
             for s in list(spec.coordinates) + quasi + list(spec.parameters)}
    names = {s.name: s for s in point}
    values = dict(point)  # the shared subexpressions evaluated in order (50 digits), never substituted as trees
    for name, expr in el.get("cse", []):
        values[sp.Symbol(name)] = sp.N(sp.sympify(expr, locals=names).xreplace(values), 50)
    particular = {k: sp.N(sp.sympify(e, locals=names).xreplace(values), 50)
                  for k, e in el["cartan"]["particular"].items()}
    residuals = _cartan_equation_residuals(spec, system.frame.vectors, quasi, particular, point)
    assert max(abs(sp.N(r, 30)) for r in residuals) < 1e-25, residuals
    code, out, err = _run(capsys, "analyze", "two_wheeled_carriage", *sets, "--quiet", "--sections",
                          "euler_lagrange,chaplygin")
    assert code == 0, err
    assert "the Lagrangian is singular" in out and "L^ is singular" in out and "FAILED" not in out
    assert len(out) < 50_000 and "free unknowns: B4, B5" in out


def test_suslov_with_a_product_of_inertia_keeps_its_report(capsys):
    """It used to lose the whole report: 'search_sections: a solution failed verification' (the special value
    I1 = I12²/I2 makes L irregular on D: no section is reported there)."""
    code, out, err = _run(capsys, "analyze", _tmp(SUSLOV), "--quiet", "--json")
    assert code == 0, err
    data = json.loads(out)
    for key in ("nonholonomic", "vakonomic", "consistency"):
        assert "error" not in data[key]


def test_failed_section_gives_exit_status_3_and_an_error_entry(capsys, monkeypatch):
    from anholo.dynamics import summaries

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(summaries.VakonomicSummary, "of", classmethod(lambda cls, *a, **k: boom()))
    code, out, err = _run(capsys, "analyze", "nonholonomic_particle", "--quiet", "--json")
    assert code == 3
    data = json.loads(out)
    assert "boom" in data["vakonomic"]["error"] and "error" not in data["nonholonomic"]
    code, out, err = _run(capsys, "analyze", "no_such_example_xyz", "--quiet")
    assert code == 2 and err.startswith("anholo: error:")

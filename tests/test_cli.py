"""The `anholo` command line (analyze, examples, --json/--latex/--set, errors).

Oracle for the JSON accelerations: the coordinate Euler–Lagrange equations of the
Lagrangian read straight from the TOML file with tomllib + sympify (not through
anholo's parser), compared at random numeric points.
"""

import functools
import io
import json
import subprocess
import sys
import tomllib

import numpy as np
import pytest
import sympy as sp

from anholo.cli import main
from anholo.examples import example_path
from oracles import coordinate_accelerations, random_points


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_examples_lists_bundled_systems(capsys):
    code, out, _ = run(capsys, "examples")
    assert code == 0
    for name in ("rigid_body", "polar_particle", "nonholonomic_particle", "spherical_pendulum"):
        assert name in out


@pytest.mark.parametrize("example", ["rigid_body", "polar_particle", "spherical_pendulum", "nonholonomic_particle"])
def test_json_accelerations_match_coordinate_euler_lagrange(capsys, example):
    code, out, _ = run(capsys, "analyze", example, "--json")
    assert code == 0
    report = json.loads(out)
    for key in ("name", "coordinates", "velocities", "frame", "euler_lagrange"):
        assert key in report
    assert {"vectors", "structure"} <= set(report["frame"])
    raw = tomllib.loads(example_path(example).read_text())
    names = {n: sp.Symbol(n, real=True) for n in raw["coordinates"]}
    names.update({f"{n}_dot": sp.Symbol(f"{n}_dot", real=True) for n in raw["coordinates"]})
    names.update({n: sp.Symbol(n, positive=True) for n in raw.get("parameters", [])})
    q = [names[n] for n in raw["coordinates"]]
    u = [names[f"{n}_dot"] for n in raw["coordinates"]]
    L = sp.sympify(raw["lagrangian"].replace("^", "**"), locals=names)
    qdd = {k: sp.sympify(v, locals=names) for k, v in report["euler_lagrange"]["q_ddot"].items()}
    assert list(qdd) == raw["coordinates"]
    params = [names[n] for n in raw.get("parameters", [])]
    for pt in random_points(q + u + params, 2, seed=3, low=0.3, high=1.2):
        expected = coordinate_accelerations(L, q, u, pt)
        got = [complex(qdd[n].xreplace(pt).evalf()) for n in raw["coordinates"]]
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-12)
    n = len(q)
    R = report["frame"]["structure"]
    assert len(R) == n and all(len(R[k]) == n and all(len(r) == n for r in R[k]) for k in range(n))


def test_rigid_body_report_structure_and_euler_equations(capsys):
    code, out, _ = run(capsys, "analyze", "rigid_body", "--json")
    report = json.loads(out)
    R = report["frame"]["structure"]
    assert sp.sympify(R[2][0][1]) == 1 and sp.sympify(R[0][1][2]) == 1 and sp.sympify(R[1][2][0]) == 1
    I1, I2, I3, v1, v2, v3, w1 = sp.symbols("I1 I2 I3 v1 v2 v3 v1_dot")
    eq = report["hamel_equations"][0]
    lhs, rhs = sp.sympify(eq["lhs"]), sp.sympify(eq["rhs"])
    assert sp.expand(lhs - rhs - (I1 * w1 - (I2 - I3) * v2 * v3)) == 0


def test_text_and_latex_reports(capsys):
    code, out, _ = run(capsys, "analyze", "rigid_body")
    assert code == 0 and "R^3_12 = 1" in out and "Hamel equations" in out
    code, out, _ = run(capsys, "analyze", "nonholonomic_particle", "--latex")
    assert code == 0 and r"\begin{align*}" in out and r"\dot{v}_{1}" in out


def test_set_substitutes_parameters(capsys):
    code, out, _ = run(capsys, "analyze", "polar_particle", "--json", "--set", "m=2", "--set", "k=3")
    assert code == 0
    report = json.loads(out)
    r, th, rd, thd = sp.symbols("r theta r_dot theta_dot")
    acc = sp.sympify(report["euler_lagrange"]["q_ddot"]["r"], locals={"r": r, "theta": th, "r_dot": rd, "theta_dot": thd})
    assert sp.simplify(acc - (r * thd**2 - sp.Rational(3, 2) / r**2)) == 0
    assert report["parameters"] == []


def test_singular_lagrangian_reports_cartan_solution(tmp_path, capsys):
    f = tmp_path / "singular.toml"
    f.write_text('name = "Singular"\ncoordinates = ["x", "y"]\nlagrangian = "x_dot^2/2 + x*y_dot"\n')
    code, out, _ = run(capsys, "analyze", str(f), "--json")
    assert code == 0
    el = json.loads(out)["euler_lagrange"]
    assert el["q_ddot"] is None
    assert [sp.sympify(c) for c in el["cartan"]["conditions"]] == [sp.Symbol("v1")]
    code, out, _ = run(capsys, "analyze", str(f))
    assert "singular" in out and "v1 = 0" in out


@pytest.mark.parametrize(
    "content,fragment",
    [
        ('name = "x"\ncoordinates = ["x"]\nlagrangian = "x_dot^2/2 + zz"\n', "zz"),
        ('name = "x"\ncoordinates = ["x"\nlagrangian = "1"\n', "line"),
        ('name = "x"\ncoordinates = ["x", "y"]\nlagrangian = "x_dot^2"\nframe = [["1", "x"], ["2", "2*x"]]\n', "singular"),
        ('name = "x"\ncoordinates = ["x", "y"]\nlagrangian = "x_dot^2"\nframe = [["1", "0"]]\n', "frame"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path, capsys, content, fragment):
    f = tmp_path / "bad.toml"
    f.write_text(content)
    code, out, err = run(capsys, "analyze", str(f))
    assert code == 2
    assert err.startswith("anholo: error:") and fragment in err
    assert "Traceback" not in err


def test_unknown_target_and_unknown_parameter(capsys):
    code, _, err = run(capsys, "analyze", "no_such_system")
    assert code == 2 and "rigid_body" in err  # lists the bundled examples
    code, _, err = run(capsys, "analyze", "polar_particle", "--set", "mass=2")
    assert code == 2 and "mass" in err


def test_console_script_runs_in_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "anholo.cli", "analyze", "polar_particle"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Natural accelerations" in proc.stdout


# --------------------------------------------------------------------------------------
# nonholonomic block (issue: Lagrange–d'Alembert dynamics); oracle: the hand-built
# coordinate multiplier method on the file read with tomllib + sympify
# --------------------------------------------------------------------------------------
def _raw_system(example):
    from oracles import SEED004_FUNCTIONS

    raw = tomllib.loads(example_path(example).read_text())
    names = {n: sp.Symbol(n, real=True) for n in raw["coordinates"]}
    names.update({f"{n}_dot": sp.Symbol(f"{n}_dot", real=True) for n in raw["coordinates"]})
    names.update({n: sp.Symbol(n, positive=True) for n in raw.get("parameters", [])})
    funcs = {}
    if raw.get("functions"):
        r2 = names[raw["coordinates"][1]]
        funcs = {f: sp.Lambda(r2, sp.sympify(e.replace("^", "**"), locals={"r2": r2}))
                 for f, e in zip(raw["functions"], SEED004_FUNCTIONS)}
    parse = lambda text: sp.sympify(text.replace("^", "**"), locals={**names, **funcs}).doit()  # noqa: E731
    return raw, names, parse


@functools.lru_cache(maxsize=None)
def _json_report(example):
    """``anholo analyze EXAMPLE --json``, run once per example for the tests below."""
    buffer = io.StringIO()
    assert main(["analyze", example, "--json"], out=buffer) == 0
    return buffer.getvalue()


def _dependent(q, u, cons, params):
    """Velocities the constraints can be solved for (the last ones possible, checked at a point)."""
    A = sp.Matrix(cons).jacobian(u).subs({s: 0.4 for s in list(q) + list(params)})
    chosen = []
    for j in reversed(range(len(u))):
        if len(chosen) < len(cons) and A[:, chosen + [j]].rank() == len(chosen) + 1:
            chosen.append(j)
    return [u[j] for j in sorted(chosen)]


CONSTRAINED_EXAMPLES = ["nonholonomic_particle", "vertical_rolling_disk", "knife_edge", "chaplygin_sleigh",
                        "two_wheeled_carriage", "crampin_mestdag_class", "sphere_on_turntable", "rolling_disk"]


@pytest.mark.parametrize("example", CONSTRAINED_EXAMPLES)
def test_json_nonholonomic_block_matches_coordinate_multiplier_method(capsys, example):
    from oracles import constrained_coordinate_solution, point_on_constraints

    block = json.loads(_json_report(example))["nonholonomic"]
    raw, names, parse = _raw_system(example)
    q = [names[n] for n in raw["coordinates"]]
    u = [names[f"{n}_dot"] for n in raw["coordinates"]]
    params = [names[n] for n in raw.get("parameters", [])]
    L = parse(raw["lagrangian"])
    cons = [parse(c) for c in raw["constraints"]]
    assert list(block["q_ddot"]) == raw["coordinates"] and len(block["multipliers"]) == len(cons)
    qdd = [parse(block["q_ddot"][n]) for n in raw["coordinates"]]
    lam = [parse(e) for e in block["multipliers"]]
    dep = _dependent(q, u, cons, params)
    for seed in (1, 2):
        pt = point_on_constraints(q, u, cons, params, dep, seed, low=-1.0, high=1.0)
        expected_qdd, expected_lam = constrained_coordinate_solution(L, q, u, cons, pt)
        got = [complex(e.xreplace(pt).evalf(30)) for e in qdd + lam]
        np.testing.assert_allclose(np.real(got), np.concatenate([expected_qdd, expected_lam]), rtol=1e-8, atol=1e-9)
    assert block["rank_D"] == len(q) - len(cons) and block["integrable"] is False


def test_nonholonomic_text_and_latex(capsys):
    code, out, _ = run(capsys, "analyze", "nonholonomic_particle")
    assert code == 0
    assert "D: rank 2 of 3, not integrable" in out and "lambda1 = x_dot*y_dot/(y**2 + 1)" in out
    code, out, _ = run(capsys, "analyze", "nonholonomic_particle", "--latex")
    assert code == 0 and r"\lambda_{1}" in out and r"\dot{x} \dot{y}" in out


@pytest.mark.parametrize("constraint,fragment", [
    ('"z_dot - x_dot^2", "2*z_dot - 2*x_dot^2"', "not independent on the constraint set"),  # nonlinear: Chetaev
    ('"z_dot - y*x_dot", "2*z_dot - 2*y*x_dot"', "linearly dependent"),
    ('"x - y"', "no velocity terms"),
])
def test_bad_constraints_give_one_line_errors(tmp_path, capsys, constraint, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(f'name = "bad"\ncoordinates = ["x", "y", "z"]\nlagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2"\n'
                    f"constraints = [{constraint}]\n")
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 2 and fragment in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("example", ["nonholonomic_particle", "two_wheeled_carriage", "knife_edge"])
def test_json_vakonomic_block_matches_the_multiplication_rule(capsys, example):
    """Oracle: Euler–Lagrange equations of L + Σ λ_a φ_a in (q, λ), built by hand (tests/oracles.py)."""
    from oracles import multiplication_rule_solution, point_on_constraints

    block = json.loads(_json_report(example))["vakonomic"]
    raw, names, parse = _raw_system(example)
    lams = [sp.Symbol(f"lambda{a + 1}", real=True) for a in range(len(raw["constraints"]))]
    assert block["multipliers"] == [lam.name for lam in lams]
    names.update({lam.name: lam for lam in lams})
    q = [names[n] for n in raw["coordinates"]]
    u = [names[f"{n}_dot"] for n in raw["coordinates"]]
    params = [names[n] for n in raw.get("parameters", [])]
    L = parse(raw["lagrangian"])
    cons = [parse(c) for c in raw["constraints"]]
    exprs = [parse(block["q_ddot"][n]) for n in raw["coordinates"]] + [parse(e) for e in block["lambda_dot"]]
    dep = _dependent(q, u, cons, params)
    pt = point_on_constraints(q, u, cons, params, dep, 3, low=-1.0, high=1.0)
    pt.update({lam: sp.Float(0.3 + 0.2 * a, 30) for a, lam in enumerate(lams)})
    qdd, lam_dot = multiplication_rule_solution(L, q, u, cons, lams, pt)
    got = [complex(e.xreplace(pt).evalf(30)) for e in exprs]
    np.testing.assert_allclose(np.real(got), np.concatenate([qdd, lam_dot]), rtol=1e-8, atol=1e-9)

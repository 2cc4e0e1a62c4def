"""Resource limits, the one rule for values, signed parameters, and readings that must not change meaning.

Oracles: expressions are compared with SymPy objects built directly (``sp.Add(*terms)``, ``Rational``),
never with anholo's output; the sign rule with SymPy's own assumptions (``Symbol(..., real=True)``);
determinism by running the real command line under different ``PYTHONHASHSEED`` values and comparing
the bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import sympy as sp

from anholo.cli import main
from anholo.errors import AnholoWarning, LimitError, NonFreeActionError, SystemFileError
from anholo.io import parse_expression, parse_system
from anholo.limits import Limits, parse_limits, raised_limits
from anholo.io.validation import check_parameter_value, parameter_symbol
from anholo.system import System

x, y = sp.symbols("x y", real=True)
NAMES = {"x": x, "y": y}


def _file(extra="", lagrangian="m*(x_dot^2 + y_dot^2)/2 - k*(x^2 + y^2)/2", params='["m", "k"]', constraints=""):
    return (f'name = "T"\ncoordinates = ["x", "y"]\nparameters = {params}\nlagrangian = "{lagrangian}"\n'
            f"{constraints}{extra}")


# --- readings -----------------------------------------------------------------------------------------

def test_flat_sum_of_many_terms_is_not_nested():
    terms = [sp.Integer(i) * x ** (i % 7) for i in range(1, 2001)]
    text = " + ".join(f"{i}*x^{i % 7}" for i in range(1, 2001))
    assert parse_expression(text, NAMES, where="t") == sp.Add(*terms)
    text = " - ".join(f"{i}*x" for i in range(1, 600)) + " * y / 3"
    assert sp.expand(parse_expression(text, NAMES, where="t") - (x - sum(i * x for i in range(2, 599))
                                                                  - sp.Integer(599) * x * y / 3)) == 0


def test_deep_nesting_is_refused_with_the_bound():
    with pytest.raises(LimitError, match="nesting"):
        parse_expression("-" * 150 + "x", NAMES, where="t")
    with raised_limits(nesting=400):
        assert parse_expression("-" * 150 + "x", NAMES, where="t") == x


def test_hash_is_an_error_not_a_comment():
    with pytest.raises(SystemFileError, match="#"):
        parse_expression("x^2/2 # - y^2/2", NAMES, where="t")


@pytest.mark.parametrize("text", ["ｘ^2", "𝐱 + y", "x + ｙ"])
def test_look_alike_names_are_refused(text):
    with pytest.raises(SystemFileError, match="Python would read it as"):
        parse_expression(text, NAMES, where="t")


def test_a_distinct_non_ascii_name_stays_distinct():
    a_latin, a_cyrillic = sp.Symbol("a"), sp.Symbol("а")
    e = parse_expression("а - a", {"a": a_latin, "а": a_cyrillic}, where="t")
    assert e == a_cyrillic - a_latin and e != 0


@pytest.mark.parametrize("text, bound", [
    ("1e10000*x", "digits"), ("x^(10^10000)", "exponent"), ("((2^300)^300)^300*x", "digits"),
    ("sqrt(10^200 + 1)*x", "root_digits"), ("x^0.0000001", "exponent"), ("sin(x)^1e10000", "digits"),
    ("0." + "1" * 100_000, "digits"), ("1" * 5000 + "*x", "digits"), ("x" + " + x" * 60_000, "expression_chars"),
    ("2^(-100000)*x", "exponent"), ("(sqrt(2)^999)^999", "digits"), ("(x + y + 1 + x*y)^40", "expanded_terms"),
    ("(x + y)^999*(x - y)^999", "expanded_terms"),
])
def test_numbers_and_sizes_are_bounded(text, bound):
    with pytest.raises(LimitError, match=rf"\({bound}\).*--limits {bound}="):
        parse_expression(text, NAMES, where="lagrangian")


def test_raising_a_bound_accepts_the_input_exactly():
    with raised_limits(digits=600):
        assert parse_expression("1e500*x", NAMES, where="t") == sp.Integer(10) ** 500 * x
    with raised_limits(exponent=5000):
        assert parse_expression("x^2000", NAMES, where="t") == x**2000


def test_limits_option_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(_file(lagrangian="1e500*x_dot^2 + y_dot^2"))
    assert main(["analyze", str(path), "--sections", "frame"]) == 2
    assert "digits" in capsys.readouterr().err
    assert main(["--limits", "digits=600", "analyze", str(path), "--sections", "frame"]) == 0
    with pytest.raises(LimitError):
        parse_limits("digits=0")
    with pytest.raises(LimitError):
        parse_limits("colour=3")
    assert parse_limits("digits=7, points=9") == Limits(digits=7, points=9)


def test_coordinates_and_trailers_are_bounded():
    text = ('name = "Many"\ncoordinates = [' + ", ".join(f'"q{i}"' for i in range(40)) + ']\nlagrangian = "'
            + " + ".join(f"q{i}_dot^2" for i in range(40)) + '"\n')
    with pytest.raises(LimitError, match="coordinates"):
        parse_system(text)
    with raised_limits(coordinates=40):
        assert len(parse_system(text).coordinates) == 40
    from anholo.examples import resolve_system

    with pytest.raises(LimitError, match="trailers"):
        resolve_system("n_trailer_99999999999999999999")


# --- one rule for values ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sign, good, bad", [
    ("positive", [1, sp.Rational(1, 3)], [0, -1]), ("nonnegative", [0, 2], [-1]), ("negative", [-2], [0, 1]),
    ("nonpositive", [0, -3], [1]), ("real", [-1, 0, 5], []), ("nonzero", [-1, 1], [0]),
])
def test_sign_rule_matches_sympy_assumptions(sign, good, bad):
    symbol = parameter_symbol("c", sign)
    oracle = sp.Symbol("c", **{"nonzero": {"real": True, "nonzero": True}}.get(sign, {sign: True}))
    assert symbol == oracle  # the symbol carries exactly the assumptions of the declared sign
    for value in good:
        assert check_parameter_value(symbol, value, "w") == value
    for value in bad + [sp.nan, sp.oo, sp.I]:
        with pytest.raises(SystemFileError, match="^w: "):
            check_parameter_value(symbol, value, "w")


def test_signs_table_values_and_set_share_the_rule():
    spec = parse_system(_file('[signs]\nk = "real"\n[values]\nk = -2\n'))
    k = spec.parameters[1]
    assert k.is_real and k.is_positive is None and spec.values[k] == -2
    assert sp.expand(spec.substitute({"k": "-3/2"}).lagrangian - spec.lagrangian.subs(k, sp.Rational(-3, 2))) == 0
    with pytest.raises(SystemFileError, match="not negative"):
        parse_system(_file('[signs]\nk = "negative"\n[values]\nk = 2\n'))
    with pytest.raises(SystemFileError, match="not negative"):
        parse_system(_file('[signs]\nk = "negative"\n')).substitute({"k": 2})
    with pytest.raises(SystemFileError, match="not positive"):
        parse_system(_file()).substitute({"m": -1})
    with pytest.raises(SystemFileError, match="not positive"):
        parse_system(_file('[values]\nm = -1\n'))
    with pytest.raises(SystemFileError, match="finite"):
        parse_system(_file()).substitute({"m": "nan"})
    # an expression in other parameters must provably have the sign
    assert parse_system(_file()).substitute({"m": "2*k"}).parameters[0].name == "k"
    with pytest.raises(SystemFileError, match="cannot tell"):
        parse_system(_file('[signs]\nk = "real"\n')).substitute({"m": "k"})
    with pytest.raises(SystemFileError, match="signs.k"):
        parse_system(_file('[signs]\nk = "imaginary"\n'))


def test_set_twice_and_bad_numbers_on_the_command_line(capsys):
    assert main(["analyze", "knife_edge", "--set", "m=1", "--set", "m=2"]) == 2
    assert "twice" in capsys.readouterr().err
    for extra in (["--rtol", "nan"], ["--rtol", "-1"], ["--atol", "inf"], ["--points", "1000000000"],
                  ["--t-end", "nan"]):
        argv = ["simulate", "polar_particle", "--q0", "1,0", "--qdot0", "0,1", "--t-end", "0.1", "--quiet", *extra]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and extra[0] in err
    assert main(["simulate", "polar_particle", "--q0=sqrt(-1),0", "--qdot0", "0,1", "--t-end", "0.1"]) == 2
    assert "not a real number" in capsys.readouterr().err


# --- tables that are not used ----------------------------------------------------------------------------

def test_symmetry_is_validated_without_constraints_and_warned_about():
    bad = _file('[symmetry]\ngenerators = [["1", "0"], ["0", "1"], ["1", "1"]]\n')
    with pytest.raises(NonFreeActionError, match=r"\[symmetry\]"):
        System.from_spec(parse_system(bad))
    good = _file('[symmetry]\ngenerators = [["1", "0"]]\n')
    with pytest.warns(AnholoWarning, match="not used"):
        System.from_spec(parse_system(good))
    with_constraint = good.replace('lagrangian', 'constraints = ["x_dot - y*y_dot"]\nlagrangian')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        System.from_spec(parse_system(with_constraint))


def test_quasi_velocity_names_never_clash_by_name():
    spec = parse_system(_file(params='["v1", "w1", "nu1", "qv1", "v2", "w2", "nu2", "qv2"]',
                              lagrangian="(x_dot^2 + y_dot^2)/2"))
    system = System.from_spec(spec)
    taken = {s.name for s in spec.parameters + spec.coordinates + spec.velocities}
    names = [v.name for v in system.bundle.quasi_velocities]
    assert not taken & (set(names) | {n + "_dot" for n in names}) and len(set(names)) == 2


# --- determinism -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("example", ["knife_edge", "chaplygin_sleigh"])
def test_json_is_byte_identical_across_hash_seeds(example):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.path.abspath(src))
        proc = subprocess.run([sys.executable, "-m", "anholo.cli", "analyze", example, "--json"],
                              capture_output=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.add(proc.stdout)
    assert len(outs) == 1


def test_integer_literals_of_every_base_are_read_exactly():
    e = parse_expression("0xee + 1_000 + 0o7 + 0b11 + 1.5e-3", NAMES, where="t")
    assert e == sp.Integer(238 + 1000 + 7 + 3) + sp.Rational(3, 2000)

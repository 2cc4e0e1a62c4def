"""Tests of the safe expression parser anholo.parsing."""

from __future__ import annotations

import pytest
import sympy as sp

from anholo.errors import SystemFileError, UnknownSymbolError
from anholo.io import parse_expression
from anholo.parsing import STANDARD_FUNCTIONS

x, y, z = sp.symbols("x y z", real=True)
x_dot, y_dot, z_dot = sp.symbols("x_dot y_dot z_dot", real=True)
m, g = sp.symbols("m g", positive=True)
A1 = sp.Function("A1")
NAMES = {
    "x": x,
    "y": y,
    "z": z,
    "x_dot": x_dot,
    "y_dot": y_dot,
    "z_dot": z_dot,
    "m": m,
    "g": g,
}
FNAMES = NAMES | {"A1": A1}


def P(text: str, names=FNAMES, where: str = "test") -> sp.Expr:
    return parse_expression(text, names, where=where)


def same(a: sp.Expr, b: sp.Expr) -> bool:
    return sp.simplify(a - b) == 0


# ---------------------------------------------------------------------------
# accepted constructs
# ---------------------------------------------------------------------------


def test_integer_literal_is_exact_integer():
    e = P("42")
    assert e == sp.Integer(42)
    assert isinstance(e, sp.Integer)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.5", sp.Rational(1, 2)),
        ("1e-3", sp.Rational(1, 1000)),
        ("2.5e2", sp.Integer(250)),
        (".25", sp.Rational(1, 4)),
        ("9.81", sp.Rational(981, 100)),
        ("0.1", sp.Rational(1, 10)),
        ("1_000.5", sp.Rational(2001, 2)),
    ],
)
def test_decimal_literals_are_exact_rationals(text, expected):
    e = P(text)
    assert e == expected
    assert isinstance(e, sp.Rational)
    assert not e.has(sp.Float)


def test_decimal_in_expression_is_exact():
    assert P("0.1*x + 0.2*x") == sp.Rational(3, 10) * x


def test_names_and_constants():
    assert P("x") == x
    assert P("m") == m
    assert P("pi") == sp.pi
    assert P("E") == sp.E
    assert P("x_dot") == x_dot


@pytest.mark.parametrize(
    "text, expected",
    [
        ("x + y", x + y),
        ("x - y", x - y),
        ("x*y", x * y),
        ("x/y", x / y),
        ("x**2", x**2),
        ("-x", -x),
        ("+x", x),
        ("(x + y)*z", (x + y) * z),
        ("x - (y - z)", x - y + z),
        ("2/3", sp.Rational(2, 3)),
        ("m*g*x", m * g * x),
    ],
)
def test_arithmetic(text, expected):
    assert same(P(text), expected)


def test_caret_is_power():
    assert P("x^2") == x**2
    assert P("x^2") == P("x**2")


def test_caret_binds_like_power_not_like_xor():
    # In Python, ^ binds more loosely than +; here it must bind like **.
    assert same(P("x^2 + 1"), x**2 + 1)
    assert same(P("2*x^2"), 2 * x**2)
    assert same(P("-x^2"), -(x**2))
    assert same(P("x^y^2"), x ** (y**2))
    assert same(P("m*(x_dot^2 + x^2*y_dot^2)/2"), m * (x_dot**2 + x**2 * y_dot**2) / 2)


@pytest.mark.parametrize("name", sorted(set(STANDARD_FUNCTIONS) - {"atan2"}))
def test_every_one_argument_standard_function(name):
    expected = STANDARD_FUNCTIONS[name](x)
    assert P(f"{name}(x)") == expected


def test_atan2_and_log_with_base():
    assert P("atan2(y, x)") == sp.atan2(y, x)
    assert same(P("log(x, 2)"), sp.log(x) / sp.log(2))


def test_nested_calls():
    assert same(P("sqrt(sin(x)^2 + cos(x)^2)"), sp.Integer(1))
    assert P("exp(log(m))") == m


def test_declared_function_call():
    assert P("A1(x)") == A1(x)
    assert same(P("A1(x)^2*m + A1(y + 1)"), A1(x) ** 2 * m + A1(y + 1))


def test_multiline_text_and_surrounding_whitespace():
    text = """
    ( m*x_dot^2
    + m*y_dot^2 )/2
    """
    assert same(P(text), m * (x_dot**2 + y_dot**2) / 2)


def test_declared_name_shadows_builtin_constant():
    e_sym = sp.Symbol("E")
    assert P("E", {"E": e_sym}) == e_sym


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_unknown_name_message():
    with pytest.raises(UnknownSymbolError) as info:
        parse_expression("zz_dot - y*x_dot", NAMES, where="constraints[0]")
    msg = str(info.value)
    assert msg.startswith("constraints[0]: unknown name 'zz_dot'")
    assert '"zz_dot - y*x_dot"' in msg
    assert "Declared names: x, y, z, x_dot, y_dot, z_dot, m, g." in msg
    assert "parameters" in msg


def test_unknown_name_is_a_system_file_error():
    with pytest.raises(SystemFileError):
        P("w + 1")


def test_unknown_name_suggests_close_spelling():
    with pytest.raises(UnknownSymbolError, match="Did you mean 'x_dot'"):
        P("x_dto + 1")


def test_unknown_function_is_unknown_symbol():
    with pytest.raises(UnknownSymbolError, match="'foo'.*functions"):
        P("foo(x)")


def test_dunder_import_is_unknown_name():
    with pytest.raises(UnknownSymbolError, match="__import__"):
        P("__import__('os')")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("x.__class__", "attribute"),
        ("sin.__globals__", "attribute"),
        ("x[0]", "indexing"),
        ("x < y", "comparison"),
        ("x == y", "comparison"),
        ("x and y", "'and'"),
        ("x or y", "'or'"),
        ("not x", "'not'"),
        ("~x", "'~'"),
        ("lambda: 1", "lambda"),
        ("x if y else z", "conditional"),
        ("'abc'", "string"),
        ("b'abc'", "string"),
        ("f'{x}'", "string"),
        ("True", "not a number"),
        ("None", "not a number"),
        ("2j", "complex"),
        ("[x for x in y]", "comprehension"),
        ("(t for t in y)", "generator"),
        ("(w := 1)", "':='"),
        ("[x, y]", "list"),
        ("{x: y}", "dictionar"),
        ("x, y", "tuple"),
        ("x % 2", "'%'"),
        ("x // 2", "'//'"),
        ("x @ y", "'@'"),
        ("x & y", "'&'"),
        ("x | y", "'|'"),
        ("x << 1", "'<<'"),
        ("A1(x)(y)", "named functions"),
        ("A1(*[x])", "starred"),
    ],
)
def test_disallowed_constructs(text, fragment):
    with pytest.raises(SystemFileError) as info:
        P(text, where="frame[1][2]")
    msg = str(info.value)
    assert msg.startswith("frame[1][2]: ")
    assert fragment in msg
    assert not isinstance(info.value, UnknownSymbolError)


def test_attribute_error_names_text_and_column():
    with pytest.raises(SystemFileError) as info:
        P("x.__class__", where="lagrangian")
    msg = str(info.value)
    assert '"x.__class__"' in msg
    assert "column 2" in msg


def test_keyword_arguments_rejected():
    with pytest.raises(SystemFileError, match="keyword arguments"):
        P("sin(x=1)")
    with pytest.raises(SystemFileError, match="keyword arguments"):
        P("A1(x, evaluate=False)")


@pytest.mark.parametrize("text", ["x +", "(x", "x)", "x y", "2x", "x +* y", "sin x", "x = 1"])
def test_syntax_errors(text):
    with pytest.raises(SystemFileError) as info:
        P(text, where="lagrangian")
    msg = str(info.value)
    assert msg.startswith("lagrangian: cannot parse")
    assert f'"{text}"' in msg
    assert "column" in msg or "end of the expression" in msg


def test_syntax_error_reports_column_and_missing_star_hint():
    with pytest.raises(SystemFileError) as info:
        P("m*x_dot y")
    msg = str(info.value)
    assert "column 9" in msg
    assert "'*' missing" in msg


def test_syntax_error_column_counts_original_text_with_caret():
    # '^' is rewritten as '**' internally; the column refers to the user's text.
    with pytest.raises(SystemFileError, match="column 7"):
        P("x^2 + ) ")


def test_syntax_error_in_multiline_text_gives_line():
    with pytest.raises(SystemFileError, match="line 2"):
        P("x +\n y y")


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_empty_expression(text):
    with pytest.raises(SystemFileError, match="empty"):
        P(text, where="lagrangian")


def test_non_string_text():
    with pytest.raises(SystemFileError, match="string"):
        parse_expression(3, NAMES, where="lagrangian")  # type: ignore[arg-type]


def test_calling_a_symbol_is_an_error():
    with pytest.raises(SystemFileError, match="'x' is not a function"):
        P("x(2)")


@pytest.mark.parametrize("text", ["sin + 1", "2*A1", "sqrt"])
def test_function_used_as_value_is_an_error(text):
    with pytest.raises(SystemFileError, match="is a function"):
        P(text)


@pytest.mark.parametrize(
    "text", ["sin(x, y)", "sin()", "atan2(x)", "sqrt(x, y)", "log()", "log(x, y, z)", "exp(x, 2)"]
)
def test_wrong_arity_of_standard_function(text):
    with pytest.raises(SystemFileError, match="argument"):
        P(text)


def test_wrong_arity_of_declared_function_with_fixed_nargs():
    f = sp.Function("f", nargs=1)
    with pytest.raises(SystemFileError, match="cannot apply f"):
        parse_expression("f(x, y)", {"x": x, "y": y, "f": f}, where="lagrangian")


@pytest.mark.parametrize("text", ["1/0", "x/0", "log(0)"])
def test_division_by_zero(text):
    with pytest.raises(SystemFileError, match="infinite or undefined"):
        P(text)


def test_huge_numeric_power_is_refused_quickly():
    with pytest.raises(SystemFileError, match="exceeds the limit"):
        P("9^9^9")
    with pytest.raises(SystemFileError, match="exceeds the limit"):
        P("1e999999")


def test_where_prefixes_every_message():
    for text in ["zz", "x.y", "(", ""]:
        with pytest.raises(SystemFileError) as info:
            P(text, where="constraints[3]")
        assert str(info.value).startswith("constraints[3]: ")

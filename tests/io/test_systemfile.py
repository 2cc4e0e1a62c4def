"""Tests of TOML system files: anholo.io.systemfile."""

from __future__ import annotations

import copy
import json
import pickle
import textwrap

import pytest
import sympy as sp

from anholo.errors import AnholoError, SystemFileError, UnknownSymbolError
from anholo.io import KNOWN_FIELDS, SystemSpec, load_system_file, parse_expression, parse_system

FULL = textwrap.dedent(
    """
    name = "Test system"
    description = "Just a test."
    coordinates = ["x", "y", "z"]
    parameters = ["m", "g"]
    functions = ["A1"]
    lagrangian = "m*(x_dot^2 + y_dot^2 + z_dot^2)/2 - m*g*z + A1(y)*x_dot"
    frame = [["1", "0", "y"], ["0", "1", 0], [0, 0, 1]]
    constraints = ["z_dot - y*x_dot"]

    [values]
    m = 2
    g = 9.81
    """
)


def same(a, b) -> bool:
    return sp.simplify(a - b) == 0


def make(**fields) -> str:
    """A minimal valid file with some fields replaced (value None removes it)."""
    base = {
        "name": '"Minimal"',
        "coordinates": '["x", "y"]',
        "parameters": '["m"]',
        "lagrangian": '"m*(x_dot^2 + y_dot^2)/2"',
    }
    base.update(fields)
    return "\n".join(f"{k} = {v}" for k, v in base.items() if v is not None) + "\n"


def spec_full() -> SystemSpec:
    return parse_system(FULL, source="full.toml")


# ---------------------------------------------------------------------------
# the happy path
# ---------------------------------------------------------------------------


def test_full_file_fields():
    s = spec_full()
    x, y, z = sp.symbols("x y z", real=True)
    xd, yd, zd = sp.symbols("x_dot y_dot z_dot", real=True)
    m, g = sp.symbols("m g", positive=True)
    A1 = sp.Function("A1", real=True)
    assert s.name == "Test system"
    assert s.description == "Just a test."
    assert s.coordinates == (x, y, z)
    assert s.velocities == (xd, yd, zd)
    assert s.parameters == (m, g)
    assert s.functions == (A1,)
    assert same(s.lagrangian, m * (xd**2 + yd**2 + zd**2) / 2 - m * g * z + A1(y) * xd)
    assert s.frame == ((1, 0, y), (0, 1, 0), (0, 0, 1))
    assert len(s.constraints) == 1 and same(s.constraints[0], zd - y * xd)
    assert dict(s.values) == {m: sp.Integer(2), g: sp.Rational(981, 100)}
    assert s.source == "full.toml"
    assert s.dimension == 3


def test_symbol_assumptions():
    s = spec_full()
    assert all(q.is_real for q in s.coordinates + s.velocities)
    assert all(p.is_positive for p in s.parameters)
    assert s.functions[0](s.coordinates[0]).is_real


def test_values_are_exact_and_read_only():
    s = spec_full()
    g = sp.Symbol("g", positive=True)
    assert isinstance(s.values[g], sp.Rational)
    assert not s.values[g].has(sp.Float)
    with pytest.raises(TypeError):
        s.values[g] = 1  # type: ignore[index]


def test_spec_is_frozen():
    s = spec_full()
    with pytest.raises(AttributeError):
        s.name = "other"  # type: ignore[misc]


def test_names_property():
    s = spec_full()
    assert list(s.names) == ["x", "y", "z", "x_dot", "y_dot", "z_dot", "m", "g", "A1"]
    assert s.names["A1"] is s.functions[0]
    assert s.names["y_dot"] == s.velocities[1]


def test_defaults_of_optional_fields():
    s = parse_system(make(parameters=None, lagrangian='"(x_dot^2 + y_dot^2)/2"'))
    assert s.description == ""
    assert s.parameters == ()
    assert s.functions == ()
    assert s.frame is None
    assert s.constraints == ()
    assert dict(s.values) == {}
    assert s.source == "<string>"


def test_numbers_accepted_for_lagrangian_and_frame():
    s = parse_system(make(lagrangian="0.5", frame='[[1, 0.5], ["0", 2]]'))
    assert s.lagrangian == sp.Rational(1, 2)
    assert s.frame == ((1, sp.Rational(1, 2)), (0, 2))


def test_frame_may_use_parameters_and_functions():
    s = parse_system(
        make(functions='["f"]', frame='[["m*f(x)", "0"], ["0", "1/m"]]')
    )
    x = s.coordinates[0]
    m = s.parameters[0]
    f = s.functions[0]
    assert same(s.frame[0][0], m * f(x))
    assert same(s.frame[1][1], 1 / m)


def test_to_dict_is_json_and_round_trips():
    s = spec_full()
    d = s.to_dict()
    json.dumps(d)
    assert d["coordinates"] == ["x", "y", "z"]
    assert d["velocities"] == ["x_dot", "y_dot", "z_dot"]
    assert d["parameters"] == ["m", "g"]
    assert d["functions"] == ["A1"]
    assert d["values"] == {"m": "2", "g": "981/100"}
    assert same(parse_expression(d["lagrangian"], s.names, where="t"), s.lagrangian)
    assert same(parse_expression(d["frame"][0][2], s.names, where="t"), s.frame[0][2])
    assert same(parse_expression(d["constraints"][0], s.names, where="t"), s.constraints[0])


def test_str_and_repr():
    s = spec_full()
    text = str(s)
    assert "Test system" in text and "full.toml" in text
    assert "X1" in text and "= 0" in text
    r = repr(s)
    assert r.startswith("SystemSpec(") and "Test system" in r


def test_equality_hash_pickle_copy():
    a, b = spec_full(), spec_full()
    assert a == b
    assert hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a


def test_load_system_file(tmp_path):
    path = tmp_path / "sys.toml"
    path.write_text(FULL, encoding="utf-8")
    s = load_system_file(path)
    assert s.source == str(path)
    assert s == parse_system(FULL, source=str(path))


def test_load_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(SystemFileError, match="nope.toml.*cannot read"):
        load_system_file(path)


def test_load_non_utf8_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes(b'name = "\xff\xfe"\n')
    with pytest.raises(SystemFileError, match="UTF-8"):
        load_system_file(path)


# ---------------------------------------------------------------------------
# substitute
# ---------------------------------------------------------------------------


def test_substitute_numbers_and_expressions():
    s = spec_full()
    x, y, z = s.coordinates
    xd, yd, zd = s.velocities
    m, g = s.parameters
    A1 = s.functions[0]
    t = s.substitute({"m": 3, "g": "2*pi"})
    assert t.parameters == ()
    assert dict(t.values) == {}
    assert same(t.lagrangian, 3 * (xd**2 + yd**2 + zd**2) / 2 - 6 * sp.pi * z + A1(y) * xd)
    assert t.frame == s.frame
    assert t.constraints == s.constraints
    # the original is unchanged
    assert s.parameters == (m, g)


def test_substitute_decimal_is_exact_and_keeps_other_values():
    s = spec_full()
    m, g = s.parameters
    t = s.substitute({"g": 0.5})
    assert t.parameters == (m,)
    assert dict(t.values) == {m: 2}
    assert t.lagrangian.coeff(s.coordinates[2]) == -m / 2
    assert not t.lagrangian.has(sp.Float)


def test_substitute_expression_in_other_parameter():
    s = spec_full()
    m, g = s.parameters
    t = s.substitute({"g": "m^2"})
    assert t.parameters == (m,)
    assert same(t.lagrangian - s.lagrangian.xreplace({g: m**2}), 0)


def test_substitute_applies_to_frame_and_constraints():
    s = parse_system(
        make(frame='[["m", "0"], ["0", "1"]]', constraints='["y_dot - m*x_dot"]')
    )
    t = s.substitute({"m": "1/2"})
    x_dot, y_dot = s.velocities
    assert t.frame[0][0] == sp.Rational(1, 2)
    assert same(t.constraints[0], y_dot - x_dot / 2)


def test_substitute_unknown_name_lists_parameters():
    s = spec_full()
    with pytest.raises(SystemFileError, match=r"'k' is not a parameter.*Parameters: m, g"):
        s.substitute({"k": 1})


def test_substitute_coordinate_is_refused():
    s = spec_full()
    with pytest.raises(SystemFileError, match="'x' is a coordinate"):
        s.substitute({"x": 1})


def test_substitute_bad_values():
    s = spec_full()
    with pytest.raises(UnknownSymbolError):
        s.substitute({"m": "q + 1"})
    with pytest.raises(SystemFileError, match="cannot parse"):
        s.substitute({"m": "2 +"})
    with pytest.raises(SystemFileError, match="also being set"):
        s.substitute({"m": "g", "g": 1})
    with pytest.raises(SystemFileError, match="also being set"):
        s.substitute({"m": "2*m"})
    with pytest.raises(SystemFileError):
        s.substitute({"m": True})  # type: ignore[dict-item]
    with pytest.raises(SystemFileError):
        s.substitute({"m": [1]})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------
# file-level errors
# ---------------------------------------------------------------------------


def test_malformed_toml_reports_line():
    text = 'name = "X"\ncoordinates = ["x"]\nlagrangian = x_dot^2\n'
    with pytest.raises(SystemFileError) as info:
        parse_system(text, source="bad.toml")
    msg = str(info.value)
    assert msg.startswith("bad.toml: malformed TOML")
    assert "line 3" in msg


def test_known_fields_constant():
    assert "lagrangian" in KNOWN_FIELDS and "values" in KNOWN_FIELDS
    assert "symmetry" in KNOWN_FIELDS


def test_typo_in_field_name_is_rejected_with_suggestion():
    text = make(lagrangian=None) + 'lagrangain = "x_dot^2"\n'
    with pytest.raises(SystemFileError) as info:
        parse_system(text, source="typo.toml")
    msg = str(info.value)
    assert msg.startswith("typo.toml: unknown field 'lagrangain'")
    assert "Did you mean 'lagrangian'" in msg
    for known in KNOWN_FIELDS:
        assert known in msg


def test_unknown_table_is_rejected():
    text = make() + "\n[symmetries]\ngroup = 'SO3'\n"
    with pytest.raises(SystemFileError, match=r"unknown table \[symmetries\].*Known fields"):
        parse_system(text)


def test_known_fields_are_extensible(monkeypatch):
    import anholo.io.systemfile_format as sf

    monkeypatch.setattr(sf, "KNOWN_FIELDS", sf.KNOWN_FIELDS + ("extension",))
    parse_system(make() + "\n[extension]\ngroup = 'SO3'\n")


@pytest.mark.parametrize("missing", ["name", "coordinates", "lagrangian"])
def test_missing_required_field(missing):
    with pytest.raises(SystemFileError) as info:
        parse_system(make(**{missing: None}), source="f.toml")
    assert str(info.value).startswith(f"f.toml: {missing}: missing required field")


@pytest.mark.parametrize(
    "field, value, fragment",
    [
        ("name", "3", "expected a string"),
        ("name", '""', "empty"),
        ("description", "[1]", "expected a string"),
        ("coordinates", '"x y"', "array of strings"),
        ("coordinates", '["x", 1]', "array of strings"),
        ("coordinates", "[]", "at least one"),
        ("parameters", '"m"', "array of strings"),
        ("functions", "[[1]]", "array of strings"),
        ("lagrangian", "true", "expected a string or a number"),
        ("lagrangian", '["x"]', "expected a string or a number"),
        ("constraints", '"x_dot"', "expected an array of strings"),
        ("constraints", "[1]", "expected a string"),
        ("frame", '"1"', "array of arrays"),
        ("frame", '["1", "0"]', "array of arrays"),
        ("frame", '[["1", true], ["0", "1"]]', "expected a string or a number"),
        ("values", "3", "expected a table"),
    ],
)
def test_wrong_types(field, value, fragment):
    with pytest.raises(SystemFileError) as info:
        parse_system(make(**{field: value}), source="f.toml")
    msg = str(info.value)
    assert msg.startswith(f"f.toml: {field}")
    assert fragment in msg


@pytest.mark.parametrize(
    "fields, fragment",
    [
        ({"coordinates": '["x", "x"]'}, "listed twice"),
        ({"parameters": '["m", "m"]'}, "listed twice"),
        ({"parameters": '["x"]'}, "already declared as coordinates[0]"),
        ({"parameters": '["x_dot"]'}, "velocity"),
        ({"functions": '["y_dot"]'}, "velocity"),
        ({"functions": '["m"]'}, "already declared as parameters[0]"),
        ({"coordinates": '["x", "2y"]'}, "not a valid name"),
        ({"coordinates": '["x", "y-1"]'}, "not a valid name"),
        ({"coordinates": '["x", ""]'}, "not a valid name"),
        ({"coordinates": '["x", "lambda"]'}, "Python keyword"),
        ({"parameters": '["None"]'}, "Python keyword"),
        ({"coordinates": '["x", "y_dot"]'}, "'_dot'"),
        ({"coordinates": '["x", "sin"]'}, "standard function"),
        ({"parameters": '["sqrt"]'}, "standard function"),
        ({"parameters": '["pi"]'}, "constant"),
        ({"functions": '["E"]'}, "constant"),
    ],
)
def test_bad_names(fields, fragment):
    with pytest.raises(SystemFileError) as info:
        parse_system(make(**fields), source="f.toml")
    msg = str(info.value)
    assert msg.startswith("f.toml: ")
    assert fragment in msg


@pytest.mark.parametrize(
    "frame, fragment",
    [
        ('[["1", "0"]]', "expected 2 rows"),
        ('[["1", "0"], ["0", "1"], ["0", "0"]]', "expected 2 rows"),
        ('[["1", "0"], ["1"]]', "frame[1]: expected 2 entries"),
        ('[["1", "0", "0"], ["0", "1"]]', "frame[0]: expected 2 entries"),
        ("[]", "expected 2 rows"),
    ],
)
def test_frame_shape_errors(frame, fragment):
    with pytest.raises(SystemFileError) as info:
        parse_system(make(frame=frame), source="f.toml")
    msg = str(info.value)
    assert msg.startswith("f.toml: frame")
    assert fragment in msg


def test_frame_shape_error_mentions_expected_shape():
    with pytest.raises(SystemFileError, match=r"d/dx, d/dy"):
        parse_system(make(frame='[["1"]]'))


def test_velocity_in_frame_is_rejected():
    with pytest.raises(SystemFileError) as info:
        parse_system(make(frame='[["1", "0"], ["0", "x_dot"]]'), source="f.toml")
    msg = str(info.value)
    assert msg.startswith("f.toml: frame[1][1]")
    assert "x_dot" in msg and "coordinates and parameters only" in msg


def test_velocity_inside_function_in_frame_is_rejected():
    with pytest.raises(SystemFileError, match="velocity y_dot"):
        parse_system(make(functions='["f"]', frame='[["f(y_dot)", "0"], ["0", "1"]]'))


def test_unknown_symbol_in_lagrangian_names_field_and_source():
    with pytest.raises(UnknownSymbolError) as info:
        parse_system(make(lagrangian='"m*zz_dot^2"'), source="f.toml")
    msg = str(info.value)
    assert msg.startswith("f.toml: lagrangian: unknown name 'zz_dot'")
    assert "Declared names: x, y, x_dot, y_dot, m." in msg


def test_unknown_symbol_in_constraint_names_index():
    text = make(constraints='["x_dot", "zz_dot - y*x_dot"]')
    with pytest.raises(UnknownSymbolError, match=r"^f\.toml: constraints\[1\]: unknown name 'zz_dot'"):
        parse_system(text, source="f.toml")


def test_syntax_error_in_frame_entry_names_indices():
    with pytest.raises(SystemFileError, match=r"^f\.toml: frame\[0\]\[1\]: cannot parse"):
        parse_system(make(frame='[["1", "x +"], ["0", "1"]]'), source="f.toml")


@pytest.mark.parametrize(
    "values, fragment",
    [
        ("k = 1", "'k' is not a declared parameter"),
        ("x = 1", "'x' is a coordinate"),
        ('m = "1"', "expected a number"),
        ("m = true", "expected a number"),
        ("m = [1]", "expected a number"),
        ("m = nan", "not a finite number"),
        ("m = inf", "not a finite number"),
        ("m = 0", "not positive"),
        ("m = -1.5", "not positive"),
        ("[values.m]\nx = 1", "expected a number"),
    ],
)
def test_bad_values(values, fragment):
    text = make() + "[values]\n" + values + "\n"
    with pytest.raises(SystemFileError) as info:
        parse_system(text, source="f.toml")
    msg = str(info.value)
    assert msg.startswith("f.toml: values")
    assert fragment in msg


def test_all_errors_are_anholo_errors():
    for text in ["name = ", make(frame="[[1]]"), make(lagrangian='"q"')]:
        with pytest.raises(AnholoError):
            parse_system(text)


# --- the [symmetry] table (Chaplygin systems) ---------------------------------------------------

SYMMETRIC = """
name = "Nonholonomic particle"
coordinates = ["x", "y", "z"]
lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2"
constraints = ["z_dot - y*x_dot"]
"""


def test_symmetry_table_is_read():
    spec = parse_system(SYMMETRIC + '[symmetry]\ngenerators = [["0", "0", "1"]]\n')
    assert spec.symmetry["generators"] == ((0, 0, 1),)
    assert spec.symmetry["action"] == "left" and spec.symmetry["structure_constants"] is None
    assert parse_system(SYMMETRIC).symmetry is None


def test_symmetry_unknown_name_is_the_unknown_symbol_error():
    with pytest.raises(UnknownSymbolError, match=r"symmetry.generators\[0\]\[2\]"):
        parse_system(SYMMETRIC + '[symmetry]\ngenerators = [["0", "0", "w"]]\n')


@pytest.mark.parametrize("table, where", [
    ('generators = [["0", "1"]]', "symmetry.generators[0]"),
    ('generators = []', "symmetry.generators"),
    ('generators = [["0", "0", "1"]]\naction = "up"', "symmetry.action"),
    ('generators = [["0", "0", "1"]]\nstructure_constants = [[0]]', "symmetry.structure_constants"),
    ('generators = [["0", "0", "z_dot"]]', "symmetry.generators[0][2]"),
    ('generators = [["0", "0", "1"]]\norder = 1', "symmetry.order"),
])
def test_symmetry_table_errors_name_the_field(table, where):
    with pytest.raises(SystemFileError) as info:
        parse_system(SYMMETRIC + "[symmetry]\n" + table + "\n")
    assert where in str(info.value)

"""Issue #25 (part 1): no code runs from a string, strings mean the chart's symbols, system files are read
exactly and safely, and echoed text cannot drive a terminal.

Oracles (independent of anholo's reading): the coordinate Euler–Lagrange equations written here with
sympy (``d/dt ∂L/∂q̇ − ∂L/∂q = 0``); the Lie brackets of the frame vectors computed here from the
inverse of the coframe; Python's :class:`fractions.Fraction` for the exact value of a decimal literal;
canaries (a file in ``tmp_path``, an attribute of :mod:`builtins`) that code would create if it ran.
"""

from __future__ import annotations

import builtins
import io
import os
import random
import unicodedata
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import pytest
import sympy as sp

from anholo import Chart, Forces, Frame, KinematicConstraints, Lagrangian, LinearConstraints, NonholonomicSystem
from anholo import TangentBundle, VectorField
from anholo.cli import main
from anholo.constraints.higher_order import HigherOrderConstraints
from anholo.constraints.kinematic import CartesianPullback
from anholo.dynamics.maggi import MaggiSystem
from anholo.errors import AnholoError, ArgumentError, LimitError, SystemFileError, UnknownSymbolError, printable
from anholo.geometry.forms import Form
from anholo.geometry.tangent import SecondOrderField, TangentField
from anholo.parsing import sympified
from anholo.io.systemfile import parse_system
from anholo.system import System

# --- strings and plain symbols mean the chart's symbols -------------------------------------------


def _coordinate_accelerations(L, q, qd):
    """q̈ from the coordinate Euler–Lagrange equations of L (written here, with sympy only)."""
    t = sp.Symbol("t")
    qf = [sp.Function(s.name)(t) for s in q]
    sub = {**{a: f for a, f in zip(q, qf)}, **{a: f.diff(t) for a, f in zip(qd, qf)}}
    Lt = L.xreplace(sub)
    eqs = [sp.diff(Lt.diff(f.diff(t)), t) - Lt.diff(f) for f in qf]
    acc = sp.solve(eqs, [f.diff(t, 2) for f in qf], dict=True)[0]
    back = {f.diff(t): v for f, v in zip(qf, qd)} | {f: s for f, s in zip(qf, q)}
    return [acc[f.diff(t, 2)].subs(back) for f in qf]


def _anholo_accelerations(lag: Lagrangian):
    eqs = lag.hamel_equations()
    rates = lag.bundle.quasi_velocity_rates
    sol = sp.solve([e.lhs - e.rhs for e in eqs], rates, dict=True)[0]
    back = dict(zip(lag.bundle.quasi_velocities, lag.bundle.chart.velocities))  # coordinate frame: v = q̇
    return [sol[r].xreplace(back) for r in rates]


CHART = Chart("x y", parameters=["k"])
X, Y = CHART.coordinates
XD, YD = CHART.velocities
K = CHART.parameters[0]
TQ = TangentBundle(Frame.coordinate(CHART))
L_TRUE = (XD**2 + 2 * YD**2) / 2 - K * X**2 / 2 - X * Y


@pytest.mark.parametrize("given", [
    "(x_dot^2 + 2*y_dot^2)/2 - k*x^2/2 - x*y",
    (sp.Symbol("x_dot")**2 + 2 * sp.Symbol("y_dot")**2) / 2 - sp.Symbol("k") * sp.Symbol("x")**2 / 2
    - sp.Symbol("x") * sp.Symbol("y"),  # plain symbols, no real=True
    (sp.Symbol("x_dot", positive=True)**2 + 2 * YD**2) / 2 - K * X**2 / 2 - X * Y,
], ids=["string", "plain-symbols", "other-assumptions"])
def test_lagrangian_by_name_gives_the_coordinate_equations(given):
    ours = _anholo_accelerations(Lagrangian(TQ, given))
    oracle = _coordinate_accelerations(L_TRUE, CHART.coordinates, CHART.velocities)
    assert all(sp.simplify(a - b) == 0 for a, b in zip(ours, oracle))
    assert oracle[0] != 0 and oracle[1] != 0  # the equations are not 0 = 0
    wrong = _coordinate_accelerations(L_TRUE + X**3, CHART.coordinates, CHART.velocities)
    assert any(sp.simplify(a - b) != 0 for a, b in zip(ours, wrong))  # the comparison can fail


def test_string_coframe_entries_give_the_brackets():
    """θ^1 = dx, θ^2 = −y dx + dy as strings: structure functions from the brackets of X = (θ^{-1})^T."""
    C = Chart("x y")
    x, y = C.coordinates
    F = Frame.from_coframe(C, [["1", "0"], ["-y", "1"]])
    theta = sp.Matrix([[1, 0], [-y, 1]])
    Xv = theta.inv().T  # rows: X_i in the coordinate basis
    brackets = {}
    for i in range(2):
        for j in range(2):
            b = [sum(Xv[i, B] * sp.diff(Xv[j, A], (x, y)[B]) - Xv[j, B] * sp.diff(Xv[i, A], (x, y)[B])
                     for B in range(2)) for A in range(2)]
            brackets[i, j] = list(theta * sp.Matrix(b))  # R^k_ij = θ^k([X_i, X_j])
    R = F.structure
    assert all(sp.simplify(R[k][i][j] - brackets[i, j][k]) == 0 for k in range(2) for i in range(2) for j in range(2))
    assert R[1][0][1] != 0  # the frame is anholonomic: a structure of {} (all zero) would fail here


def test_python_numbers_keep_their_value():
    """A Decimal is exact (as the same text in a string is), a Fraction too; a float keeps its value."""
    from decimal import Decimal

    assert Lagrangian(TQ, Decimal("0.1")).expr == sp.Rational(1, 10)
    assert sp.Float(0.1) != sp.Rational(1, 10)  # so the comparison above can fail
    assert Lagrangian(TQ, Fraction(1, 3)).expr == sp.Rational(1, 3)
    assert Lagrangian(TQ, 0.5).expr == 0.5


def test_forces_given_as_strings_and_as_one_string():
    C = Chart("x y", parameters=["c"])
    xd = C.velocities[0]
    c = C.parameters[0]
    F = Forces(C, ["-c*x_dot", "tau"], inputs=["tau"])
    assert F.generalized == (-c * xd, sp.Symbol("tau", real=True))
    with pytest.raises(ArgumentError, match="a string"):
        Forces(C, "ab")  # not two forces a and b
    with pytest.raises(ArgumentError):
        NonholonomicSystem(Lagrangian(Frame.coordinate(C), "x_dot^2/2 + y_dot^2/2"), ["y_dot - x*x_dot"],
                           forces="ab")


def test_from_mechanics_coordinates_by_name():
    from sympy.physics import mechanics as me

    from anholo import from_mechanics

    qx, qy = me.dynamicsymbols("qx qy")
    N, O = me.ReferenceFrame("N"), me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", qx * N.x + qy * N.y)
    m, g = sp.symbols("m g")
    by_symbol = from_mechanics(N, bodies=[me.Particle("p", P, m)], loads=[(P, -m * g * N.y)], coordinates=[qx, qy])
    by_name = from_mechanics(N, bodies=[me.Particle("p", P, m)], loads=[(P, -m * g * N.y)],
                             coordinates=["qx", "qy"])
    a, b = by_symbol.lagrangian.natural_expr(), by_name.lagrangian.natural_expr()
    s = {x.name: x for x in a.free_symbols | b.free_symbols}
    expected = s["m"] * (s["qx_dot"]**2 + s["qy_dot"]**2) / 2 - s["g"] * s["m"] * s["qy"]  # T − V, written here
    assert sp.simplify(a - expected) == 0 and sp.simplify(b - expected) == 0


# --- no code runs from a string -------------------------------------------------------------------


def _canaries(tmp_path):
    target = tmp_path / "PWNED"
    return [
        f"__import__('pathlib').Path({str(target)!r}).touch()",
        f"open({str(target)!r}, 'w')",
        "exec('import builtins; builtins.ANHOLO_CANARY = 1')",
        "eval('__import__(\"builtins\").__setattr__(\"ANHOLO_CANARY\", 1)')",
        "globals().__setitem__('ANHOLO_CANARY', 1)",
        f"(lambda: __import__('os').system('touch {target}'))()",
        "x.__class__.__init__.__globals__",
        f"Symbol('x').func.__globals__['__builtins__']['exec']('open({str(target)!r}, \"w\")')",
        "[c for c in ().__class__.__base__.__subclasses__()]",
        f"x_dot**2 + __import__('os').system('touch {target}')",
    ]


def _string_parameters():
    """Every public place that accepts an expression string: a function of the string."""
    C = Chart("x y z", parameters=["m"])
    F = Frame.coordinate(C)
    TQ3 = TangentBundle(F)
    L3 = Lagrangian(TQ3, "(x_dot^2 + y_dot^2 + z_dot^2)/2")
    nh = NonholonomicSystem(L3, ["z_dot - y*x_dot"])
    from anholo import VakonomicSystem

    vak = VakonomicSystem(nh)
    eye = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    return {
        "Lagrangian": lambda s: Lagrangian(TQ3, s),
        "Frame.rows": lambda s: Frame(C, [[1, 0, 0], [0, 1, 0], [0, 0, s]]),
        "Frame.coframe": lambda s: Frame(C, eye, coframe=[[1, 0, 0], [0, 1, 0], [0, 0, s]]),
        "Frame.from_coframe": lambda s: Frame.from_coframe(C, [[1, 0, 0], [0, 1, 0], [s, 0, 1]]),
        "Frame.adapted_to_constraints": lambda s: Frame.adapted_to_constraints(C, [[s, 0, 1]]),
        "Frame.apply": lambda s: F.apply(0, s),
        "VectorField": lambda s: VectorField(C, [s, 0, 0]),
        "VectorField.call": lambda s: VectorField(C, [1, 0, 0])(s),
        "TangentField": lambda s: TangentField(TQ3, [s, 0, 0, 0, 0, 0]),
        "SecondOrderField": lambda s: SecondOrderField(TQ3, [s, 0, 0]),
        "Form": lambda s: Form(F, 1, {(0,): s}),
        "Forces": lambda s: Forces(C, [s, 0, 0]),
        "Forces.dissipation": lambda s: Forces(C, [0, 0, 0], dissipation=s),
        "Forces.from_frame_components": lambda s: Forces.from_frame_components(TQ3, [s, 0, 0]),
        "LinearConstraints.from_expressions": lambda s: LinearConstraints.from_expressions(C, [s]),
        "LinearConstraints.forms": lambda s: LinearConstraints(C, [[s, 0, 1]]),
        "LinearConstraints.inhomogeneous": lambda s: LinearConstraints(C, [[0, 0, 1]], [s]),
        "LinearConstraints.from_distribution": lambda s: LinearConstraints.from_distribution(C, [[1, 0, s]]),
        "KinematicConstraints": lambda s: KinematicConstraints(C, [s]),
        "HigherOrderConstraints": lambda s: HigherOrderConstraints(C, [s]),
        "CartesianPullback.positions": lambda s: CartesianPullback(C, {"X": s}),
        "CartesianPullback.constraints": lambda s: CartesianPullback(C, {"X": "x"}).constraints([s]),
        "NonholonomicSystem.constraints": lambda s: NonholonomicSystem(L3, [s]),
        "NonholonomicSystem.quasi": lambda s: NonholonomicSystem(L3, ["v3 - y*v1 + 0*(" + s + ")"]),
        "NonholonomicSystem.forces": lambda s: NonholonomicSystem(L3, ["z_dot - y*x_dot"], forces=[s, 0, 0]),
        "VakonomicSystem.section_field": lambda s: vak.section_field([s]),
        "MaggiSystem.lagrangian": lambda s: MaggiSystem(C, s, ["z_dot - y*x_dot"]),
        "MaggiSystem.constraints": lambda s: MaggiSystem(C, "x_dot^2", [s]),
        "MaggiSystem.forces": lambda s: MaggiSystem(C, "x_dot^2", ["z_dot - y*x_dot"], forces=[s, 0, 0]),
        "System.load.assignments": lambda s: System.load("knife_edge", {"m": s}),
        "parse_system": lambda s: parse_system(f'name = "c"\ncoordinates = ["x"]\nlagrangian = {s!r}\n'),
        "sympified": lambda s: sympified(s),
    }


@pytest.mark.parametrize("parameter", sorted(_string_parameters()))
def test_no_string_parameter_runs_code(parameter, tmp_path):
    call = _string_parameters()[parameter]
    for canary in _canaries(tmp_path):
        out = io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(out):
                call(canary)
        except AnholoError:
            pass  # refused with anholo's error: fine
        else:
            pytest.fail(f"{parameter}: the code string {canary!r} was accepted")
        assert not (tmp_path / "PWNED").exists(), f"{parameter}: {canary!r} ran"
        assert not hasattr(builtins, "ANHOLO_CANARY"), f"{parameter}: {canary!r} ran"


def test_the_canary_would_notice(tmp_path):
    """The canaries do what the test assumes when they are executed (so their absence means something)."""
    for canary in _canaries(tmp_path)[:3]:
        eval(canary)  # noqa: S307 - the point of this test
    assert (tmp_path / "PWNED").exists() and builtins.ANHOLO_CANARY == 1
    del builtins.ANHOLO_CANARY


# --- system files: exact numbers, bounded sizes, real constants ----------------------------------

HEAD = 'name = "T"\ncoordinates = ["x", "y"]\nparameters = ["m"]\nlagrangian = "m*(x_dot^2 + y_dot^2)/2"\n'


def test_toml_decimals_are_exact():
    for literal in ("1.00000000000000000001", "0.1", "2.5e-30", "1_000.000_001", "-7e3"):
        spec = parse_system(HEAD + f'[signs]\nm = "real"\n[values]\nm = {literal}\n')
        value = spec.values[spec.parameters[0]]
        assert Fraction(int(value.p), int(value.q)) == Fraction(literal.replace("_", ""))
    spec = parse_system(HEAD.replace('"m*(', '"1.00000000000000000001*m*(') + "\n")
    m, (xd, yd) = spec.parameters[0], spec.velocities
    exact = Fraction("1.00000000000000000001")
    assert sp.expand(spec.lagrangian - sp.Rational(exact.numerator, exact.denominator) * m * (xd**2 + yd**2) / 2) == 0
    assert sp.expand(spec.lagrangian - m * (xd**2 + yd**2) / 2) != 0  # float64 would read 1.0


@pytest.mark.parametrize("text, match", [
    ("[values]\nm = " + "1" * 5000 + "\n", "4300"),
    ("[values]\nm = " + "1" * 4000 + "\n", "digits"),
    ('frame = [[' + "1" * 4000 + ', 0], [0, 1]]\n', "digits"),
    ("[values]\nm = 1e10000\n", "digits"),
    ("[values]\nm = 0." + "1" * 500 + "\n", "digits"),
    ("deep = " + "[" * 3000 + "]" * 3000 + "\n", "nested"),
    ("deep = " + "[" * 150 + "]" * 150 + "\n", "nesting"),
    ("deep = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "nested"),
])
def test_toml_numbers_and_nesting_are_bounded(text, match):
    with pytest.raises(LimitError, match=match):
        parse_system(HEAD + text)


@pytest.mark.parametrize("value", ['["real"]', "[]", "{a = 1}", "1", "true"])
def test_signs_values_are_checked(value):
    with pytest.raises(SystemFileError, match="expected one of"):
        parse_system(HEAD + f"[signs]\nm = {value}\n")


@pytest.mark.parametrize("expr", ["log(x, 0)", "log(x, 1)", "log(x, -2)", "asin(2)*x", "sqrt(-1)*x", "I*x",
                                  "acos(3)*x", "log(-1)*x", "(-8)^(1/3)*x", "atanh(2)*x"])
def test_complex_constants_and_bad_log_bases_are_refused(expr):
    with pytest.raises(SystemFileError):
        parse_system(HEAD.replace('"m*(x_dot^2 + y_dot^2)/2"', f'"m*(x_dot^2 + y_dot^2)/2 + {expr}"'))


def test_real_constants_are_kept():
    spec = parse_system(HEAD.replace('"m*(x_dot^2 + y_dot^2)/2"', '"m*(x_dot^2 + y_dot^2)/2 + log(x, 2) + asin(1/2)"'))
    x = spec.coordinates[0]
    assert sp.simplify(spec.lagrangian - (spec.parameters[0] * sum(v**2 for v in spec.velocities) / 2
                                          + sp.log(x) / sp.log(2) + sp.pi / 6)) == 0


@pytest.mark.parametrize("entry, word", [("u", "quasi-velocity"), ("tau", "input"), ("x_dot", "velocity")])
def test_frame_entries_refuse_quasi_velocities_and_inputs(entry, word):
    text = HEAD + ('quasi_velocities = ["u", "w"]\ninputs = ["tau"]\nforces = ["tau", "0"]\n'
                   f'frame = [["1", "0"], ["0", "{entry}"]]\n')
    with pytest.raises(SystemFileError, match=word):
        parse_system(text)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_nested_rational_powers_analyse_without_internal_error(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "P"\ncoordinates = ["x", "y"]\nconstraints = ["y_dot - x*x_dot"]\n'
                    'lagrangian = "x_dot^2/2 + y_dot^2/2 - x^(1/3)^(1/3)^(1/3)^(1/3)"\n')
    status, out, err = _cli(["analyze", str(path), "--budget", "30"])
    assert "internal error" not in out + err and "Traceback" not in err
    assert status == 0 and "Consistency" in out


# --- text safe for a terminal ----------------------------------------------------------------------


def _controls(text):
    return [c for c in text if not c.isprintable() and c != "\n"]


@pytest.mark.parametrize("name", ["T\x1b]0;PWNED\x07", "T\x1b[2J", "T\rX", "T\u202eX"])
def test_control_characters_in_the_name_are_refused_and_escaped(name, tmp_path):
    path = tmp_path / "n.toml"
    escaped = name.encode("unicode_escape").decode().replace("\\x", "\\u00")
    path.write_text(f'name = "{escaped}"\ncoordinates = ["x"]\nlagrangian = "x_dot^2/2"\n')
    status, out, err = _cli(["analyze", str(path)])
    assert status == 2 and err.startswith("anholo: error: ") and err.count("\n") == 1
    assert _controls(out + err) == []


def test_a_refused_expression_is_echoed_escaped(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text('name = "E"\ncoordinates = ["x"]\nlagrangian = "x_dot^2/2 + \\u001b[2J\\u0007"\n')
    status, out, err = _cli(["analyze", str(path)])
    assert status == 2 and _controls(out + err) == [] and "\\x1b" in err


def test_printable_escapes_every_control_character():
    rng = random.Random(5)
    for _ in range(200):
        text = "".join(chr(rng.choice([rng.randrange(0, 0x20), 0x7f, 0x85, 0x2028, 0x200b, rng.randrange(0x20, 0x3000)]))
                       for _ in range(20))
        shown = printable(text)
        assert not [c for c in shown if unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp")]
        if "\\" not in text:  # the escapes can be read back
            assert shown.encode("ascii", "backslashreplace").decode("unicode_escape") == text
    assert printable("plain text (x_dot^2)") == "plain text (x_dot^2)"


def test_momentum_map_components_are_never_run(tmp_path):
    """A string component of the vector field of a momentum map is parsed, never executed."""
    from anholo.errors import SimulationError
    from anholo.numerics import from_system, simulate
    from anholo.numerics.monitors import momentum_map
    from anholo.system import System

    system = System.load("spherical_pendulum")
    traj = simulate(from_system(system, "euler-lagrange"), 0.5, [0.8, 0.0], [0.0, 1.0], points=3)
    canary = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(canary)!r}).touch()"
    with pytest.raises(SimulationError):
        momentum_map(traj, [code, "0"])
    assert not canary.exists()
    values = momentum_map(traj, ["0", "1"])  # J = dL/dphi_dot = m l^2 sin(theta)^2 phi_dot, conserved
    import math  # m = l = 1 in the file: J = sin(0.8)^2 * 1 at the start, conserved along the motion
    assert abs(values[0] - values[-1]) < 1e-8 and abs(values[0] - math.sin(0.8) ** 2) < 1e-9

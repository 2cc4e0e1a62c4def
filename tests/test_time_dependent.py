"""Time-dependent constraints in system files (``time = "t"``), THEORY §8.

Oracle: the knife edge with a driven blade (bundled ``rotating_knife_edge``).  The
blade points along e(t) = (cos wt, sin wt) and the constraint force is normal to
it, so the speed s = e·q̇ is constant and, from q(0) = 0, q̇(0) = (s, 0),

    x = (s/w) sin wt,   y = (s/w)(1 − cos wt),   λ = −m w s

(the multiplier of ``sin(wt) ẋ − cos(wt) ẏ`` as written, from m q̈ = λ ∂φ/∂q̇).
The accelerations on C are checked against m q̈ = λ ∂φ/∂q̇ with the constraint
differentiated in time *including* ∂φ/∂t, solved by hand.
"""

import csv
import json
import math
import random

import numpy as np
import pytest
import sympy as sp

from anholo.cli import main
from anholo.errors import ConstraintError, SystemFileError
from anholo.io.systemfile import parse_system
from anholo.system import System

BASE = """
name = "Driven blade"
coordinates = ["x", "y"]
parameters = ["m", "w"]
lagrangian = "m*(x_dot^2 + y_dot^2)/2"
"""


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_time_field_declares_a_time_symbol_for_constraints():
    spec = parse_system(BASE + 'time = "t"\nconstraints = ["sin(w*t)*x_dot - cos(w*t)*y_dot"]\n')
    t = spec.time
    assert t == sp.Symbol("t", real=True)
    assert t in spec.constraints[0].free_symbols
    assert spec.names["t"] is t
    assert spec.to_dict()["time"] == "t"
    assert "time: t" in str(spec)
    assert parse_system(BASE).time is None


@pytest.mark.parametrize(
    "extra, message",
    [
        ('time = "t"\nframe = [["1", "0"], ["0", "1 + t^2"]]', "a frame must not depend on time"),
        ('time = "x"', "already declared"),
        ('time = "2t"', "not a valid name"),
        ("time = 3", "expected a string"),
    ],
)
def test_bad_time_declarations(extra, message):
    text = BASE
    with pytest.raises(SystemFileError, match=message):
        parse_system(text + extra + "\n")


def test_undeclared_time_is_an_unknown_symbol():
    from anholo.errors import UnknownSymbolError

    with pytest.raises(UnknownSymbolError):
        parse_system(BASE + 'constraints = ["sin(w*t)*x_dot - cos(w*t)*y_dot"]\n')


def test_linear_time_dependent_constraints_are_not_nonholonomic():
    system = System.load("rotating_knife_edge")
    assert system.is_time_dependent
    with pytest.raises(ConstraintError, match="Chetaev"):
        system.nonholonomic()


def _hand_accelerations(x_dot, y_dot, t, m, w):
    """m q̈ = λ (sin wt, −cos wt) and d/dt φ = 0, φ = sin(wt) ẋ − cos(wt) ẏ."""
    S, C = math.sin(w * t), math.cos(w * t)
    # d/dt φ = w C ẋ + w S ẏ + S ẍ − C ÿ = 0 with ẍ = λ S/m, ÿ = −λ C/m  =>  λ/m = −w (C ẋ + S ẏ)
    lam = -m * w * (C * x_dot + S * y_dot)
    return lam * S / m, -lam * C / m, lam


def test_chetaev_accelerations_match_the_hand_multiplier_method():
    ch = System.load("rotating_knife_edge").chetaev()
    fld = ch.field()
    nat = fld.natural_accelerations() if callable(getattr(fld, "natural_accelerations", None)) else None
    assert nat is not None
    x, y, t = sp.symbols("x y t", real=True)
    x_dot, y_dot = sp.symbols("x_dot y_dot", real=True)
    m, w = sp.symbols("m w", positive=True)
    rng = random.Random(7)
    for _ in range(3):
        tv, mv, wv, s = rng.uniform(0, 3), rng.uniform(0.5, 2), rng.uniform(0.5, 2), rng.uniform(-2, 2)
        xd, yd = s * math.cos(wv * tv), s * math.sin(wv * tv)  # a velocity on C at time tv
        point = {x: rng.uniform(-1, 1), y: rng.uniform(-1, 1), t: tv, m: mv, w: wv, x_dot: xd, y_dot: yd}
        ax, ay, _ = _hand_accelerations(xd, yd, tv, mv, wv)
        got = {str(k): complex(sp.sympify(v).xreplace(point).evalf()) for k, v in nat.items()}
        assert abs(got["x"] - ax) < 1e-9 and abs(got["y"] - ay) < 1e-9, (got, ax, ay)


def test_analyze_json_reports_chetaev_equations(capsys):
    code, out, err = run(capsys, "analyze", "rotating_knife_edge", "--json")
    assert code == 0, err
    ch = json.loads(out)["chetaev"]
    names = {s: sp.Symbol(s, real=True) for s in ("x", "y", "t", "x_dot", "y_dot", "lambda1")}
    names.update(m=sp.Symbol("m", positive=True), w=sp.Symbol("w", positive=True))
    qdd = {k: sp.sympify(v, locals=names) for k, v in ch["q_ddot"].items()}
    tv, mv, wv, s = 0.4, 1.3, 0.8, 1.7
    xd, yd = s * math.cos(wv * tv), s * math.sin(wv * tv)
    pt = {names["t"]: tv, names["m"]: mv, names["w"]: wv, names["x_dot"]: xd, names["y_dot"]: yd,
          names["x"]: 0.3, names["y"]: -0.2}
    ax, ay, lam = _hand_accelerations(xd, yd, tv, mv, wv)
    assert abs(float(qdd["x"].xreplace(pt)) - ax) < 1e-9
    assert abs(float(qdd["y"].xreplace(pt)) - ay) < 1e-9
    (mult,) = ch["multipliers"]
    assert abs(float(sp.sympify(mult, locals=names).xreplace(pt)) - lam) < 1e-9


def test_simulate_chetaev_follows_the_circle(capsys, tmp_path):
    path = tmp_path / "blade.csv"
    s, w, m = 1.0, 2.0, 1.0  # [values] of the example
    code, out, err = run(capsys, "simulate", "rotating_knife_edge", "--field", "chetaev", "--q0", "0,0",
                         "--qdot0", f"{s},0", "--t-end", 3, "--csv", path)
    assert code == 0, err
    rows = list(csv.reader(open(path)))
    assert rows[0][:5] == ["t", "x", "y", "x_dot", "y_dot"]
    data = np.array(rows[1:], dtype=float)
    t = data[:, 0]
    assert np.max(np.abs(data[:, 1] - s / w * np.sin(w * t))) < 1e-7
    assert np.max(np.abs(data[:, 2] - s / w * (1 - np.cos(w * t)))) < 1e-7


def test_simulate_api_multiplier_and_constraint_from_a_later_start():
    """Started at t0 = 0.5 (the constraint is checked at t0), λ = −m w s throughout."""
    from anholo.numerics import from_system, simulate

    s, w, m, t0 = 1.5, 2.0, 1.0, 0.5
    ode = from_system(System.load("rotating_knife_edge"), "chetaev")
    traj = simulate(ode, (t0, 2.0), [0, 0], [s * math.cos(w * t0), s * math.sin(w * t0)], points=50)
    assert np.max(np.abs(traj.multipliers[0] + m * w * s)) < 1e-6
    assert np.max(np.abs(traj.constraint_residuals())) < 1e-8
    with pytest.raises(Exception, match="violate"):
        simulate(ode, (t0, 2.0), [0, 0], [s, 0.0])  # (s, 0) is not along the blade at t0


def test_simulate_nonholonomic_field_is_refused_with_a_message(capsys):
    code, out, err = run(capsys, "simulate", "rotating_knife_edge", "--field", "nonholonomic", "--q0", "0,0",
                         "--qdot0", "1,0", "--t-end", 1)
    assert code == 2 and "Chetaev" in err and "Traceback" not in err

"""Plausible wrong calls of the public Python API: each raises a specific anholo error, on one line.

Oracle: the contract of anholo.errors — a user error raises a subclass of ``AnholoError`` (here the
one named in the table, never the base class and never a raw ``TypeError``/``AttributeError`` from
deep inside), whose message is one line that names the argument.  Each row is a call that a user
could plausibly write: a string where a list is expected, a Chart where a Frame is, ``None``, a list
of the wrong length, an equation where an expression is, a non-finite or complex number, code in a
string.  The test fails if the call succeeds, raises another class, or prints more than one line.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
import sympy as sp
from sympy.physics import mechanics as me

from anholo import Chart, Forces, Frame, KinematicConstraints, Lagrangian, LinearConstraints, NonholonomicSystem
from anholo import TangentBundle, VakonomicSystem, from_mechanics
from anholo.dynamics.maggi import MaggiSystem
from anholo.geometry.forms import Form
from anholo.errors import (AnholoError, ArgumentError, LimitError, ConstraintError, DependentConstraintsError, DimensionError,
                           MechanicsModelError, NonFiniteExpressionError, NonlinearConstraintError, SingularFrameError, SystemFileError,
                           UnknownExampleError, UnknownSymbolError)
from anholo.parsing import parse_expression
from anholo.io.systemfile import parse_system
from anholo.system import System

C = Chart("x y", parameters=["m"])
x, y = C.coordinates
xd, yd = C.velocities
F = Frame.coordinate(C)
TQ = TangentBundle(F)
L = Lagrangian(TQ, (xd**2 + yd**2) / 2)
CODE = "__import__('os').system('echo PWNED')"

N = me.ReferenceFrame("N")
O = me.Point("O")
O.set_vel(N, 0)
qx, qy = me.dynamicsymbols("qx qy")
P = O.locatenew("P", qx * N.x + qy * N.y)
PARTICLE = me.Particle("p", P, sp.Symbol("mp"))

# (id, call, expected error class)
CASES = [
    # --- Chart -------------------------------------------------------------------------------
    ("chart-none", lambda: Chart(None), ArgumentError),
    ("chart-int", lambda: Chart(42), ArgumentError),
    ("chart-numbers", lambda: Chart([1, 2]), ArgumentError),
    ("chart-repeated", lambda: Chart(["x", "x"]), DimensionError),
    ("chart-empty", lambda: Chart([]), DimensionError),
    ("chart-velocities-length", lambda: Chart("x y", velocities="a"), DimensionError),
    ("chart-parameters-int", lambda: Chart("x y", parameters=5), ArgumentError),
    ("chart-not-a-name", lambda: Chart(["x-y"]), ArgumentError),
    ("chart-expression", lambda: Chart([sp.Symbol("x") + 1]), ArgumentError),
    ("chart-parameter-clash", lambda: Chart("x y", parameters=["x"]), DimensionError),
    ("chart-dict", lambda: Chart({"x": 1}), ArgumentError),
    # --- Frame -------------------------------------------------------------------------------
    ("frame-none", lambda: Frame(C, None), ArgumentError),
    ("frame-string", lambda: Frame(C, "abc"), ArgumentError),
    ("frame-one-row", lambda: Frame(C, [[1, 0]]), DimensionError),
    ("frame-short-row", lambda: Frame(C, [[1, 0], [0]]), DimensionError),
    ("frame-singular", lambda: Frame(C, [[1, 0], [0, 0]]), SingularFrameError),
    ("frame-velocity", lambda: Frame(C, [[1, 0], [0, "x_dot"]]), DimensionError),
    ("frame-syntax", lambda: Frame(C, [[1, 0], [0, "1/"]]), SystemFileError),
    ("frame-entry-none", lambda: Frame(C, [[1, 0], [0, None]]), ArgumentError),
    ("frame-entry-list", lambda: Frame(C, [[1, 0], [0, [1]]]), ArgumentError),
    ("frame-row-string", lambda: Frame(C, ["10", "01"]), ArgumentError),
    ("frame-code", lambda: Frame(C, [[1, 0], [0, CODE]]), SystemFileError),
    ("frame-complex", lambda: Frame(C, [[1, 0], [0, sp.I]]), ArgumentError),
    ("frame-equation", lambda: Frame(C, [[1, 0], [0, sp.Eq(x, 1)]]), ArgumentError),
    ("frame-rank-D", lambda: Frame(C, [[1, 0], [0, 1]], rank_D=5), DimensionError),
    ("coframe-string", lambda: Frame.from_coframe(C, "dx dy"), ArgumentError),
    ("coframe-nan", lambda: Frame.from_coframe(C, [[1, 0], [0, sp.nan]]), NonFiniteExpressionError),
    ("coframe-unknown-name", lambda: Frame.from_coframe(C, [[1, 0], [0, "zz"]]), UnknownSymbolError),
    ("coframe-code", lambda: Frame.from_coframe(C, [[1, 0], [CODE, 1]]), SystemFileError),
    ("coordinate-int", lambda: Frame.coordinate(42), ArgumentError),
    # --- TangentBundle -----------------------------------------------------------------------
    ("bundle-chart", lambda: TangentBundle(C), ArgumentError),
    ("bundle-none", lambda: TangentBundle(None), ArgumentError),
    ("bundle-names-length", lambda: TangentBundle(F, quasi_velocities=["a"]), DimensionError),
    ("bundle-names-numbers", lambda: TangentBundle(F, quasi_velocities=[1, 2]), ArgumentError),
    ("bundle-names-clash", lambda: TangentBundle(F, quasi_velocities=["x", "w"]), DimensionError),
    ("bundle-names-int", lambda: TangentBundle(F, quasi_velocities=5), ArgumentError),
    # --- Lagrangian --------------------------------------------------------------------------
    ("lagrangian-chart", lambda: Lagrangian(C, "x_dot^2"), ArgumentError),
    ("lagrangian-none-bundle", lambda: Lagrangian(None, "x_dot^2"), ArgumentError),
    ("lagrangian-none", lambda: Lagrangian(TQ, None), ArgumentError),
    ("lagrangian-list", lambda: Lagrangian(TQ, [1, 2]), ArgumentError),
    ("lagrangian-syntax", lambda: Lagrangian(TQ, "x_dot^2 +"), SystemFileError),
    ("lagrangian-code", lambda: Lagrangian(TQ, CODE + " + x_dot**2"), SystemFileError),
    ("lagrangian-unknown", lambda: Lagrangian(TQ, "k*x_dot^2"), UnknownSymbolError),
    ("lagrangian-equation", lambda: Lagrangian(TQ, sp.Eq(xd, 1)), ArgumentError),
    ("lagrangian-infinite", lambda: Lagrangian(TQ, sp.oo * xd), NonFiniteExpressionError),
    ("lagrangian-bool", lambda: Lagrangian(TQ, True), ArgumentError),
    ("lagrangian-comment", lambda: Lagrangian(TQ, "x_dot^2/2 # - x^2"), SystemFileError),
    ("lagrangian-matrix", lambda: Lagrangian(TQ, sp.Matrix([xd])), ArgumentError),
    ("lagrangian-complex", lambda: Lagrangian(TQ, 1 + 2j), ArgumentError),
    ("lagrangian-huge-integer", lambda: Lagrangian(TQ, 10**5000), LimitError),
    ("lagrangian-huge-decimal", lambda: Lagrangian(TQ, Decimal("1e5000")), LimitError),
    ("lagrangian-imaginary", lambda: Lagrangian(TQ, "x_dot^2 + sqrt(-1)*x"), SystemFileError),
    # --- Forces ------------------------------------------------------------------------------
    ("forces-string", lambda: Forces(C, "abc"), ArgumentError),
    ("forces-length", lambda: Forces(C, [0]), DimensionError),
    ("forces-bundle", lambda: Forces(TQ, [0, 0]), ArgumentError),
    ("forces-code", lambda: Forces(C, [0, "open('f', 'w')"]), UnknownSymbolError),
    ("forces-dissipation-list", lambda: Forces(C, [0, 0], dissipation=[1]), ArgumentError),
    ("forces-inputs-int", lambda: Forces(C, [0, 0], inputs=5), ArgumentError),
    ("forces-input-not-name", lambda: Forces(C, [0, 0], inputs=["1a"]), ArgumentError),
    ("forces-unknown-name", lambda: Forces(C, [0, "tau"]), UnknownSymbolError),
    ("forces-time-int", lambda: Forces(C, [0, 0], time=5), ArgumentError),
    ("forces-frame-components-chart", lambda: Forces.from_frame_components(C, [0, 0]), ArgumentError),
    # --- constraints -------------------------------------------------------------------------
    ("linear-string", lambda: LinearConstraints.from_expressions(C, "y_dot - x*x_dot"), ArgumentError),
    ("linear-none-entry", lambda: LinearConstraints.from_expressions(C, [None]), ArgumentError),
    ("linear-dependent", lambda: LinearConstraints.from_expressions(C, ["y_dot - x*x_dot", "2*y_dot - 2*x*x_dot"]),
     DependentConstraintsError),
    ("linear-holonomic", lambda: LinearConstraints.from_expressions(C, ["x^2 + y"]), ConstraintError),
    ("linear-nonlinear", lambda: LinearConstraints.from_expressions(C, ["x_dot^2 - y_dot"]),
     NonlinearConstraintError),
    ("linear-forms-string", lambda: LinearConstraints(C, "ab"), ArgumentError),
    ("linear-forms-code", lambda: LinearConstraints(C, [["1", CODE]]), SystemFileError),
    ("linear-bundle", lambda: LinearConstraints(TQ, [[1, 0]]), ArgumentError),
    ("linear-distribution-string", lambda: LinearConstraints.from_distribution(C, "ab"), ArgumentError),
    ("kinematic-string", lambda: KinematicConstraints(C, "x_dot"), ArgumentError),
    ("kinematic-no-velocity", lambda: KinematicConstraints(C, [5]), ConstraintError),
    ("kinematic-nested", lambda: KinematicConstraints(C, [[1]]), ArgumentError),
    # --- dynamics ----------------------------------------------------------------------------
    ("nonholonomic-string", lambda: NonholonomicSystem(L, "y_dot - x*x_dot"), ArgumentError),
    ("nonholonomic-lagrangian-string", lambda: NonholonomicSystem("x_dot^2", ["y_dot"]), ArgumentError),
    ("nonholonomic-forces-string", lambda: NonholonomicSystem(L, ["y_dot - x*x_dot"], forces="ab"), ArgumentError),
    ("nonholonomic-forces-length", lambda: NonholonomicSystem(L, ["y_dot - x*x_dot"], forces=[0]), DimensionError),
    ("nonholonomic-frame-string", lambda: NonholonomicSystem(L, ["y_dot - x*x_dot"], frame="abc"), ArgumentError),
    ("nonholonomic-time-int", lambda: NonholonomicSystem(L, ["y_dot - x*x_dot"], time=5), ArgumentError),
    ("nonholonomic-dependent-int", lambda: NonholonomicSystem(L, ["y_dot - x*x_dot"], dependent=7), ArgumentError),
    ("nonholonomic-free-int", lambda: NonholonomicSystem(L, ["y_dot - x*x_dot"], free=3), ArgumentError),
    ("frame-rank-D-string", lambda: F.with_rank_D("1"), ArgumentError),
    ("frame-apply-index-string", lambda: F.apply("a", "x"), ArgumentError),
    ("form-degree-string", lambda: Form(F, "a"), ArgumentError),
    ("vakonomic-none", lambda: VakonomicSystem(None), ArgumentError),
    ("maggi-constraints-string", lambda: MaggiSystem(C, "x_dot^2/2", "y_dot"), ArgumentError),
    ("maggi-forces-string", lambda: MaggiSystem(C, "x_dot^2/2 + y_dot^2/2", ["y_dot - x*x_dot"], forces="ab"),
     ArgumentError),
    ("maggi-lagrangian-none", lambda: MaggiSystem(C, None, ["y_dot - x*x_dot"]), ArgumentError),
    ("maggi-code", lambda: MaggiSystem(C, CODE, ["y_dot - x*x_dot"]), SystemFileError),
    # --- System ------------------------------------------------------------------------------
    ("load-int", lambda: System.load(42), ArgumentError),
    ("load-none", lambda: System.load(None), ArgumentError),
    ("load-list", lambda: System.load(["knife_edge"]), ArgumentError),
    ("load-assignments-list", lambda: System.load("knife_edge", [1]), ArgumentError),
    ("load-unknown", lambda: System.load("no_such_example"), UnknownExampleError),
    ("load-assignment-code", lambda: System.load("knife_edge", {"m": CODE}), SystemFileError),
    ("load-assignment-unknown", lambda: System.load("knife_edge", {"nope": 1}), SystemFileError),
    ("load-assignment-nan", lambda: System.load("knife_edge", {"m": float("nan")}), SystemFileError),
    ("from-spec-string", lambda: System.from_spec("knife_edge"), ArgumentError),
    ("parse-system-int", lambda: parse_system(42), SystemFileError),
    ("parse-expression-int", lambda: parse_expression(42, {}, where="x"), SystemFileError),
    # --- from_mechanics ----------------------------------------------------------------------
    ("mechanics-no-frame", lambda: from_mechanics(coordinates=["q1"]), MechanicsModelError),
    ("mechanics-source-int", lambda: from_mechanics(42), ArgumentError),
    ("mechanics-bodies-string", lambda: from_mechanics(N, bodies="p"), ArgumentError),
    ("mechanics-coordinates-not-names", lambda: from_mechanics(N, bodies=[PARTICLE], coordinates=["qx qy"]),
     ArgumentError),
    ("mechanics-coordinates-numbers", lambda: from_mechanics(N, bodies=[PARTICLE], coordinates=[1]), ArgumentError),
    ("mechanics-coordinates-string", lambda: from_mechanics(N, bodies=[PARTICLE], coordinates="qx"), ArgumentError),
    ("mechanics-load-point", lambda: from_mechanics(N, bodies=[PARTICLE], loads=[P], coordinates=[qx, qy]),
     ArgumentError),
    ("mechanics-kd-string", lambda: from_mechanics(N, bodies=[PARTICLE], coordinates=[qx, qy], kd_eqs=["qx"]),
     ArgumentError),
    ("mechanics-values-list", lambda: from_mechanics(N, bodies=[PARTICLE], coordinates=[qx, qy], values=[1]),
     ArgumentError),
    ("mechanics-frame-string", lambda: from_mechanics(frame="N", bodies=[PARTICLE]), ArgumentError),
]


@pytest.mark.parametrize("call, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_call_raises_a_specific_anholo_error(call, expected, capsys):
    with pytest.raises(AnholoError) as info:
        call()
    assert type(info.value) is expected, f"{type(info.value).__name__}: {info.value}"
    message = str(info.value)
    assert message and "\n" not in message and len(message) < 3000
    assert "PWNED" not in capsys.readouterr().out  # the code in CODE never ran (it would echo)


def test_the_table_is_large_enough():
    assert len(CASES) >= 80

"""The implicit forms ``M x = F`` of the vakonomic, multiplication-rule and Chetaev fields.

Oracles (tests/oracles.py, no anholo code), solved with numpy at random points of C,
on every catalogue example with such a field:

* vakonomic field (linear and affine constraints): the coordinate multiplication rule,
  the Euler–Lagrange equations of ``L + λ_a φ^a`` in ``(q, λ)`` with the differentiated
  constraints, ``[[Ŵ, Jᵀ], [J, 0]] [q̈; λ̇] = [∂L̄/∂q − (∂²L̄/∂u∂q)u − ∂²L̄/∂u∂t + Q; −(∂φ/∂q)u]``
  (``nonlinear_multiplication_rule_solution``; the forces added as ``E(L + λφ) = Q``);
* Chetaev field: the coordinate multiplier method ``W q̈ = ∂L/∂q − (∂²L/∂u∂q)u − ∂²L/∂u∂t
  + Q + λ_ν ∂φ^ν/∂u`` with ``dφ^ν/dt = 0`` (``nonlinear_constrained_solution``);
* multiplication rule for nonlinear constraints: ``nonlinear_multiplication_rule_solution``.

The implicit form is solved numerically (LU) and carried to ``q̈`` with the kinematic
identity ``q̈^A = X_i^A v̇^i + v^i v^j X_j(X_i^A)``; independently, each explicit field is
checked to satisfy its implicit form at points of C.  The problem data given to the
oracles are the system's L, constraints and generalized forces in natural velocities.
A perturbed ``M`` (a wrong sign of the multiplier column, a scaled entry) must fail.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from oracles import (
    dependent_velocities,
    function_stand_ins,
    nonlinear_constrained_solution,
    nonlinear_multiplication_rule_solution,
    point_on_constraints,
    point_on_nonlinear_constraints,
)

from numeric import evaluate

from anholo import Chart, Frame, ImplicitForm, Lagrangian, NonholonomicSystem
from anholo.dynamics.chetaev import ChetaevField, ChetaevSystem
from anholo.dynamics.multiplication_rule import NonlinearVakonomicSystem
from anholo.dynamics.vakonomic import VakonomicField, VakonomicSystem
from anholo.examples import example_names, load_example
from anholo.system import System


def _kind(name) -> str | None:
    """"linear" (vakonomic field on C), "nonlinear" (Chetaev field) or None, from the file alone."""
    spec = load_example(name)
    if not spec.constraints and not getattr(spec, "holonomic", ()):
        return None
    cons = [sp.sympify(c) for c in spec.constraints]
    vel = list(spec.velocities) + list(getattr(spec, "quasi_velocities", None) or ())
    timed = spec.time is not None and any(spec.time in c.free_symbols for c in cons)
    linear = all(sp.diff(c, a, b) == 0 for c in cons for a in vel for b in vel)
    return "linear" if linear and not timed else "nonlinear"


VAKONOMIC = [n for n in example_names(large=False) if _kind(n) == "linear"]
CHETAEV = [n for n in example_names(large=False) if _kind(n) == "nonlinear"]


def test_the_catalogue_has_both_kinds():
    assert len(VAKONOMIC) >= 10 and len(CHETAEV) >= 4
    assert "sphere_on_turntable" in VAKONOMIC and "sleigh_with_motor" in VAKONOMIC
    assert "rotating_knife_edge" in CHETAEV


# --- helpers -------------------------------------------------------------------------------------

def _concrete(e, repl):
    e = sp.sympify(e)
    return e.subs(repl).doit() if repl else e


def _concrete_form(form: ImplicitForm, repl) -> ImplicitForm:
    if not repl:
        return form
    return ImplicitForm(form.unknowns, form.matrix.applyfunc(lambda e: _concrete(e, repl)),
                        tuple(_concrete(e, repl) for e in form.rhs))


def _num(e, values, repl=None) -> float:
    """The value at a point, each distinct subexpression evaluated once (30 digits, tests/numeric.py)."""
    return complex(evaluate(_concrete(e, repl), values)).real


def _problem(system, repl):
    """(L, φ, Q, t) in natural velocities, with the file's undefined functions made concrete."""
    L = _concrete(system.lagrangian.natural_expr(), repl)
    cons = [_concrete(c, repl) for c in system.constraints]
    forces = None if system.forces is None else [_concrete(f, repl) for f in system.forces.total]
    return L, cons, forces, system.time


def _extra_symbols(system, exprs, known):
    """Symbols of the problem that are neither states nor declared parameters (e.g. control inputs)."""
    out = set().union(*(sp.sympify(e).free_symbols for e in exprs)) - set(known)
    return sorted(out, key=sp.default_sort_key)


def _residual(form: ImplicitForm, solution, values, repl=None) -> float:
    """Largest ``|M x − F|`` at ``values`` for a candidate solution (expressions)."""
    return max(abs(_num(r, values, repl)) for r in form.residuals(solution))


# --- the vakonomic field (linear and affine constraints) ---------------------------------------

def _vakonomic_case(name):
    spec = load_example(name)
    system = System.from_spec(spec)
    repl = function_stand_ins(spec)
    vak = VakonomicSystem(system.nonholonomic())
    return spec, system, repl, vak


def _vakonomic_points(spec, system, vak, repl, seeds=(3, 4)):
    """Points of C: ``(oracle point in (q, u, λ', t, params), values in (q, v^α, λ', t, params))``."""
    nh = vak.constrained
    L, cons, forces, t = _problem(system, repl)
    q, u = system.chart.coordinates, system.chart.velocities
    params = list(system.chart.parameters)
    states = list(q) + list(u) + params + list(vak.multipliers) + ([t] if t is not None else [])
    extra = _extra_symbols(system, [L, *cons, *(forces or ())], states)
    dep = dependent_velocities(spec, cons)
    th = nh.frame.coframe
    out = []
    for seed in seeds:
        rng = random.Random(100 + seed)
        pt = point_on_constraints(q, u, cons, params, dep, seed, low=-1.0, high=1.0)
        for s in list(vak.multipliers) + extra + ([t] if t is not None else []):
            pt[s] = sp.Float(rng.uniform(-1, 1), 30)
        values = {s: v for s, v in pt.items() if s not in u}
        for al, v in enumerate(nh.free_velocities):
            values[v] = sp.Float(_num(sp.Add(*[th[al, A] * u[A] for A in range(len(u))]), pt, repl), 30)
        out.append((pt, values))
    return out


def _vakonomic_oracle(system, vak, repl, pt):
    L, cons, forces, t = _problem(system, repl)
    q, u = system.chart.coordinates, system.chart.velocities
    return nonlinear_multiplication_rule_solution(L, q, u, cons, list(vak.multipliers), pt,
                                                  time=system.lagrangian_time, forces=forces)


def _vakonomic_from_form(form, vak, repl, values):
    """``(q̈, λ̇')`` from the numerical solution of the written-multiplier implicit form."""
    nh, m = vak.constrained, vak.m
    x = _concrete_form(form, repl).numeric_solve({s: float(v) for s, v in values.items()})
    a = sp.symbols(f"_a0:{m}")
    generic = VakonomicField(vak, a, ())  # only the kinematics q̈ = X_i v̇^i + v^i v^j X_j(X_i) is used
    qdd = generic.natural_accelerations(natural=False)
    sub = {**values, **{s: sp.Float(float(val), 30) for s, val in zip(a, x[:m])}}
    return np.array([_num(qdd[A], sub, repl) for A in nh.frame.chart.coordinates]), np.asarray(x[m:])


@pytest.mark.parametrize("name", VAKONOMIC)
def test_vakonomic_implicit_form_against_the_coordinate_multiplication_rule(name):
    spec, system, repl, vak = _vakonomic_case(name)
    form = vak.implicit_form(written=True)
    m, k = vak.m, vak.n - vak.m
    assert form.dim == m + k and form.unknowns[m:] == vak.multiplier_rate_symbols
    for pt, values in _vakonomic_points(spec, system, vak, repl):
        qdd_o, lamdot_o = _vakonomic_oracle(system, vak, repl, pt)
        qdd, lamdot = _vakonomic_from_form(form, vak, repl, values)
        np.testing.assert_allclose(qdd, qdd_o, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(lamdot, lamdot_o, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("name", VAKONOMIC)
def test_explicit_vakonomic_field_satisfies_its_implicit_forms(name):
    spec, system, repl, vak = _vakonomic_case(name)
    field = vak.field()
    frame_form = field.implicit_form()
    assert frame_form is vak.implicit_form(written=False)
    written = vak.implicit_form(written=True)
    _, rates_w = field.in_written_multipliers(natural=False)
    # the written multipliers λ' are the same Symbols: frame multipliers λ = λ' M in the accelerations
    frame_of_written = dict(zip(vak.multipliers, sp.Matrix([list(vak.multipliers)]) * vak.constrained.form_matrix))
    acc_w = tuple(sp.sympify(e).xreplace(frame_of_written) for e in field.accelerations)
    for pt, values in _vakonomic_points(spec, system, vak, repl, seeds=(5,)):
        scale = 1 + max(abs(_num(f, values, repl)) for f in frame_form.rhs)
        assert _residual(frame_form, field.accelerations + field.multiplier_rates, values, repl) < 1e-9 * scale
        assert _residual(written, acc_w + tuple(rates_w), values, repl) < 1e-9 * scale
        # and the explicit field solved numerically from the form
        x = _concrete_form(frame_form, repl).numeric_solve({s: float(v) for s, v in values.items()})
        want = [_num(e, values, repl) for e in field.accelerations + field.multiplier_rates]
        np.testing.assert_allclose(x, want, rtol=1e-8, atol=1e-9)


def test_perturbed_vakonomic_form_fails_the_oracle():
    spec, system, repl, vak = _vakonomic_case("sphere_on_turntable")
    form = vak.implicit_form(written=True)
    (pt, values), = _vakonomic_points(spec, system, vak, repl, seeds=(7,))
    qdd_o, lamdot_o = _vakonomic_oracle(system, vak, repl, pt)
    qdd, lamdot = _vakonomic_from_form(form, vak, repl, values)
    np.testing.assert_allclose(np.concatenate([qdd, lamdot]), np.concatenate([qdd_o, lamdot_o]), rtol=1e-8, atol=1e-9)
    n, m = form.dim, vak.m
    # the frame form (λ̇ in place of λ̇', i.e. M^c_b dropped) and a sign error in the multiplier block
    wrong_corner = sp.Matrix(form.matrix)
    wrong_corner[m:, m:] = sp.eye(n - m)
    flipped = sp.Matrix(form.matrix)
    flipped[m:, m:] = -flipped[m:, m:]
    scaled = sp.Matrix(form.matrix)
    scaled[0, 0] = scaled[0, 0] * sp.Rational(11, 10)
    for M in (wrong_corner, flipped, scaled):
        bad = ImplicitForm(form.unknowns, M, form.rhs)
        qdd_b, lamdot_b = _vakonomic_from_form(bad, vak, repl, values)
        got = np.concatenate([qdd_b, lamdot_b])
        assert not np.allclose(got, np.concatenate([qdd_o, lamdot_o]), rtol=1e-6, atol=1e-8)


def _particle():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    return chart, Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2)


def test_vakonomic_implicit_form_carries_the_forces():
    """A damped nonholonomic particle: the forces enter M x = F as E(L + λφ) = Q."""
    c = sp.Symbol("c", positive=True)
    chart, L = _particle()
    xd, yd, zd = chart.velocities
    Q = (-c * xd, -c * yd + 1, -c * zd)
    forced = VakonomicSystem(NonholonomicSystem(L, ["z_dot - y*x_dot"], forces=Q))
    free = VakonomicSystem(NonholonomicSystem(L, ["z_dot - y*x_dot"]))
    form = forced.implicit_form(written=True)
    q, u = chart.coordinates, chart.velocities
    y = q[1]
    nh = forced.constrained
    for seed in (1, 2):
        rng = random.Random(seed)
        cons = [u[2] - y * u[0]]
        pt = point_on_constraints(q, u, cons, [c], [u[2]], seed)
        pt[forced.multipliers[0]] = sp.Float(rng.uniform(-1, 1), 30)
        qdd_o, lamdot_o = nonlinear_multiplication_rule_solution(L.natural_expr(), q, u, cons, list(forced.multipliers),
                                                                 pt, forces=Q)
        th = nh.frame.coframe
        values = {s: v for s, v in pt.items() if s not in u}
        for al, v in enumerate(nh.free_velocities):
            values[v] = sp.Float(_num(sp.Add(*[th[al, A] * u[A] for A in range(3)]), pt), 30)
        qdd, lamdot = _vakonomic_from_form(form, forced, None, values)
        np.testing.assert_allclose(qdd, qdd_o, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(lamdot, lamdot_o, rtol=1e-8, atol=1e-9)
        qdd_f, lamdot_f = _vakonomic_from_form(free.implicit_form(written=True), free, None, values)
        assert not np.allclose(np.concatenate([qdd_f, lamdot_f]), np.concatenate([qdd_o, lamdot_o]), atol=1e-6)
    f = forced.field()
    assert _residual(forced.implicit_form(), f.accelerations + f.multiplier_rates, values) < 1e-9


# --- the Chetaev field ------------------------------------------------------------------------------

def _chetaev_points(system, problem, seeds=(3, 4)):
    """Points of C: ``(oracle point in (q, u, t, params), values in (q, v, t, params))``."""
    L, cons, forces, t = _problem(system, None)
    q, u = system.chart.coordinates, system.chart.velocities
    params = list(system.chart.parameters)
    spec_like = type("S", (), {"coordinates": q, "velocities": u, "parameters": params + ([t] if t is not None else [])})
    dep = dependent_velocities(spec_like, cons)
    th = problem.bundle.frame.coframe
    out = []
    for seed in seeds:
        pt = point_on_nonlinear_constraints(q, u, cons, params, dep, seed, extra=(t,) if t is not None else ())
        values = {s: v for s, v in pt.items() if s not in u}
        for i, v in enumerate(problem.bundle.quasi_velocities):
            values[v] = sp.Float(_num(sp.Add(*[th[i, A] * u[A] for A in range(len(u))]), pt), 30)
        out.append((pt, values))
    return out


def _chetaev_from_form(form, problem, values):
    """``(q̈, λ)`` from the numerical solution of the Chetaev implicit form."""
    n = problem.bundle.dim
    x = form.numeric_solve({s: float(v) for s, v in values.items()})
    a = sp.symbols(f"_a0:{n}")
    qdd = ChetaevField(problem, a, ()).natural_accelerations(natural=False)  # kinematics only
    sub = {**values, **{s: sp.Float(float(val), 30) for s, val in zip(a, x[:n])}}
    return np.array([_num(qdd[A], sub) for A in problem.chart.coordinates]), np.asarray(x[n:])


def _chetaev_oracle(problem, pt, forces=None):
    L = problem.natural_lagrangian
    q, u = problem.chart.coordinates, problem.chart.velocities
    return nonlinear_constrained_solution(L, q, u, list(problem.constraints.expressions), pt,
                                          forces=forces, time=problem.time)


@pytest.mark.parametrize("name", CHETAEV)
def test_chetaev_implicit_form_against_the_coordinate_multiplier_method(name):
    system = System.load(name)
    problem = system.chetaev()
    form = problem.implicit_form()
    n, k = problem.bundle.dim, problem.k
    assert form.dim == n + k and form.unknowns[n:] == problem.multiplier_symbols
    forces = None if system.forces is None else list(system.forces.total)
    field = problem.field()
    assert field.implicit_form() is form
    for pt, values in _chetaev_points(system, problem):
        qdd_o, lam_o = _chetaev_oracle(problem, pt, forces)
        qdd, lam = _chetaev_from_form(form, problem, values)
        np.testing.assert_allclose(qdd, qdd_o, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(lam, lam_o, rtol=1e-8, atol=1e-9)
        # the explicit field satisfies the form on C and is its numerical solution
        scale = 1 + max(abs(_num(f, values)) for f in form.rhs)
        assert _residual(form, tuple(field.accelerations) + tuple(field.multipliers), values) < 1e-9 * scale
        want = [_num(e, values) for e in tuple(field.accelerations) + tuple(field.multipliers)]
        np.testing.assert_allclose(form.numeric_solve({s: float(v) for s, v in values.items()}), want,
                                   rtol=1e-8, atol=1e-9)


def _counterexample(forces=None):
    g = sp.Symbol("g", positive=True)
    chart = Chart("x y z", parameters=[g])
    xd, yd, zd = chart.velocities
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - g * chart.coordinates[2])
    return ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"], forces=forces)


def test_chetaev_implicit_form_carries_the_forces_and_a_perturbed_form_fails():
    """The counterexample ``φ = ż − ẋ² − ẏ`` under gravity, with viscous friction ``Q = −c u + (0, sin x, 0)``,
    in a non-coordinate frame (the forces enter through ``F_i = X_i^A Q_A``)."""
    c, g = sp.Symbol("c", positive=True), sp.Symbol("g", positive=True)
    chart = Chart("x y z", parameters=[g, c])
    x, y, z = chart.coordinates
    xd, yd, zd = chart.velocities
    frame = Frame(chart, [[1, 0, 0], [0, 1, 1], [sp.sin(x), 0, 1]])
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + zd**2) / 2 - g * z).in_frame(frame)
    Q = (-c * xd, -c * yd + sp.sin(x), -c * zd)
    forced = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"], forces=Q)
    free = ChetaevSystem(L, ["z_dot - x_dot^2 - y_dot"])
    system = type("S", (), {"chart": chart, "constraints": forced.constraints.expressions,
                            "lagrangian": L, "forces": None, "time": None})
    form = forced.implicit_form()
    for pt, values in _chetaev_points(system, forced):
        qdd_o, lam_o = _chetaev_oracle(forced, pt, Q)
        qdd, lam = _chetaev_from_form(form, forced, values)
        np.testing.assert_allclose(qdd, qdd_o, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(lam, lam_o, rtol=1e-8, atol=1e-9)
        f = forced.field()
        assert _residual(form, tuple(f.accelerations) + tuple(f.multipliers), values) < 1e-9
        # without the forces the form is another one
        qdd_f, lam_f = _chetaev_from_form(free.implicit_form(), free, values)
        assert not np.allclose(np.concatenate([qdd_f, lam_f]), np.concatenate([qdd_o, lam_o]), atol=1e-6)
        # a sign error in the multiplier column (E(L) = Q − λβ) and a scaled entry of g both fail
        n = forced.bundle.dim
        flipped = sp.Matrix(form.matrix)
        flipped[:n, n:] = -flipped[:n, n:]
        scaled = sp.Matrix(form.matrix)
        scaled[0, 0] = scaled[0, 0] * sp.Rational(11, 10)
        for M in (flipped, scaled):
            qdd_b, lam_b = _chetaev_from_form(ImplicitForm(form.unknowns, M, form.rhs), forced, values)
            assert not np.allclose(np.concatenate([qdd_b, lam_b]), np.concatenate([qdd_o, lam_o]),
                                   rtol=1e-6, atol=1e-8)


# --- the multiplication rule for nonlinear constraints ------------------------------------------

@pytest.mark.parametrize("name", CHETAEV + ["nonholonomic_particle"])
def test_multiplication_rule_implicit_form_against_the_coordinate_equations(name):
    system = System.load(name)
    if system.forces is not None:
        pytest.skip("the multiplication rule for kinematic constraints takes no forces")
    problem = system.chetaev()
    vak = NonlinearVakonomicSystem(system.lagrangian, system.kinematic_constraints())
    form = vak.implicit_form()
    n = len(system.chart.coordinates)
    assert form.dim == n + len(vak.multipliers) and form.unknowns[n:] == vak.multiplier_rate_symbols
    motion = vak.field()
    assert motion.implicit_form() is form
    q = system.chart.coordinates
    explicit = tuple(motion.accelerations[A] for A in q) + tuple(motion.multiplier_rates)
    rng = random.Random(11)
    for pt, _ in _chetaev_points(system, problem):
        for lam in vak.multipliers:
            pt[lam] = sp.Float(rng.uniform(-1, 1), 30)
        qdd_o, lamdot_o = nonlinear_multiplication_rule_solution(
            problem.natural_lagrangian, q, system.chart.velocities, list(problem.constraints.expressions),
            list(vak.multipliers), pt, time=problem.time)
        x = form.numeric_solve({s: float(v) for s, v in pt.items()})
        np.testing.assert_allclose(x, np.concatenate([qdd_o, lamdot_o]), rtol=1e-8, atol=1e-9)
        assert _residual(form, explicit, pt) < 1e-9 * (1 + max(abs(_num(f, pt)) for f in form.rhs))


# --- the report ------------------------------------------------------------------------------------

def test_report_blocks_carry_the_implicit_forms():
    from anholo.analysis.summaries import ChetaevSummary
    from anholo.algebra.presentation import Presenter
    from anholo.dynamics.summaries import VakonomicSummary

    p = Presenter()
    system = System.load("sphere_on_turntable")
    block = VakonomicSummary.of(system.nonholonomic())
    data = block.payload(p)["vakonomic"]
    assert {"multipliers", "q_ddot", "lambda_dot", "implicit"} <= set(data)
    assert data["implicit"]["unknowns"][-2:] == [sp.Symbol("lambda1_dot", real=True), sp.Symbol("lambda2_dot", real=True)]
    assert any("vakonomic.implicit" in line for line in block.text_lines(p))
    ch = System.load("nonhomogeneous_counterexample")
    block = ChetaevSummary.of(ch.chetaev(), tuple(ch.constraints))
    data = block.payload(p)["chetaev"]
    assert {"q_ddot", "multipliers", "energy_conserved", "implicit"} <= set(data)
    M = sp.Matrix(data["implicit"]["M"])
    assert M.shape == (4, 4) and M[3, 3] == 0

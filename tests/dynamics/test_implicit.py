"""The implicit forms ``M ẋ = F`` of the Euler–Lagrange and nonholonomic fields.

Oracles: the coordinate multiplier method built by hand (tests/oracles.py,
``constrained_coordinate_solution``: ``[[W, −Aᵀ], [A, 0]] [q̈; λ] = [F; −φ_q u]``
solved with numpy) and the coordinate Euler–Lagrange equations
(``coordinate_accelerations``), at random points of C on the whole catalogue.  The
implicit form is solved numerically (LU) and its solution carried to ``q̈`` and
to the multipliers of the constraints as written; independently, the explicit
field (the kernel's exact solution) is checked to satisfy ``M x = F``.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import (
    constrained_coordinate_solution,
    coordinate_accelerations,
    dependent_velocities,
    point_on_constraints,
    random_points,
)

from anholo import ImplicitForm
from anholo.dynamics.nonholonomic import NonholonomicField
from anholo.errors import ExpressionBudgetError, IrregularLagrangianError
from anholo.examples import example_names, load_example, n_trailer
from anholo.system import System


def _linear(spec) -> bool:
    """Linear constraints in the natural velocities, no forces, inputs or holonomic constraints (the oracle's
    setting; forced implicit forms are tested in tests/dynamics/test_forces.py)."""
    extras = ("quasi_velocities", "forces", "frame_forces", "dissipation", "inputs", "holonomic")
    return spec.time is None and not spec.functions and not any(getattr(spec, k, None) for k in extras) and all(
        sp.diff(c, a, b) == 0 for c in spec.constraints for a in spec.velocities for b in spec.velocities)


CONSTRAINED = [n for n in example_names(large=False) if load_example(n).constraints and _linear(load_example(n))]
FREE = [n for n in example_names(large=False) if not load_example(n).constraints and not load_example(n).functions]


def _spec(name):
    return n_trailer(int(name.rsplit("_", 1)[1])) if name.startswith("n_trailer_") else load_example(name)


@pytest.mark.parametrize("name", CONSTRAINED + ["n_trailer_2"])
def test_nonholonomic_implicit_form_against_coordinate_multipliers(name):
    spec = _spec(name)
    system = System.from_spec(spec)
    nh = system.nonholonomic()
    form = nh.implicit_form()
    m, k = nh.m, nh.n - nh.m
    assert form.dim == m + k and form.unknowns[m:] == nh.multiplier_symbols
    # a field whose accelerations and multipliers are unknowns: its q̈ and λ are linear in them
    a = sp.symbols(f"_a0:{m}")
    mu = sp.symbols(f"_mu0:{k}")
    generic = NonholonomicField(nh, a, tuple(nh._along(b) if b != 0 else sp.S.Zero for b in nh.constrained_values), mu)
    qdd = generic.natural_accelerations(natural=False)
    lam = generic.coordinate_multipliers(natural=False)
    th = nh.frame.coframe
    dep = dependent_velocities(spec, list(spec.constraints))
    for seed in (3, 4):
        pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, dep, seed)
        qdd_o, lam_o = constrained_coordinate_solution(spec.lagrangian, spec.coordinates, spec.velocities,
                                                       spec.constraints, pt)
        values = {s: float(v) for s, v in pt.items() if s not in spec.velocities}
        for al, v in enumerate(nh.free_velocities):
            values[v] = float(sum(th[al, A] * pt[u] for A, u in enumerate(spec.velocities)).xreplace(pt))
        x = form.numeric_solve(values)
        sub = {**{s: sp.Float(val, 20) for s, val in values.items()}, **dict(zip(a + mu, map(sp.Float, x)))}
        got_q = [complex(e.xreplace(sub).evalf(20)).real for e in qdd.values()]
        got_l = [complex(e.xreplace(sub).evalf(20)).real for e in lam]
        np.testing.assert_allclose(got_q, qdd_o, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(got_l, lam_o, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("name", CONSTRAINED)
def test_explicit_field_satisfies_the_implicit_form(name):
    nh = System.from_spec(load_example(name)).nonholonomic()
    f = nh.field()
    form = nh.implicit_form()
    assert form.check_against(f.accelerations + f.multipliers) < 1e-12
    # and the budgeted explicit solution of the implicit form is the same function
    free = nh.implicit_form(multipliers=False)
    assert free.check_against(free.explicit()) < 1e-12


@pytest.mark.parametrize("name", FREE)
def test_euler_lagrange_implicit_form_against_coordinate_equations(name):
    spec = load_example(name)
    system = System.from_spec(spec)
    L = system.lagrangian
    try:
        form = L.implicit_form()
        form.explicit()
    except IrregularLagrangianError:
        pytest.skip("singular Lagrangian")
    X = system.frame.vectors
    pt = random_points(list(spec.coordinates) + list(spec.velocities) + list(spec.parameters), 1, 9)[0]
    qdd_o = coordinate_accelerations(spec.lagrangian, spec.coordinates, spec.velocities, pt)
    # quasi-velocities v = (Xᵀ)⁻¹ u
    Xn = np.array(X.xreplace(pt).evalf(), dtype=float)
    v = np.linalg.solve(Xn.T, np.array([float(pt[u]) for u in spec.velocities]))
    vs = system.bundle.quasi_velocities
    values = {s: float(val) for s, val in pt.items() if s not in spec.velocities}
    values.update(dict(zip(vs, v)))
    vdot = form.numeric_solve(values)
    # q̈^A = X_i^A v̇^i + v^i v^j X_j(X_i^A)
    n = len(vs)
    qdd = []
    q = spec.coordinates
    for A in range(n):
        acc = sum(X[i, A] * vdot[i] for i in range(n))
        acc += sum(vs[i] * vs[j] * sum(X[j, B] * X[i, A].diff(q[B]) for B in range(n)) for i in range(n) for j in range(n))
        qdd.append(float(sp.sympify(acc).xreplace({s: sp.Float(val, 20) for s, val in values.items()})))
    np.testing.assert_allclose(qdd, qdd_o, rtol=1e-8, atol=1e-9)


def test_explicit_solution_budget_and_singular_matrix():
    a, b, x1, x2 = sp.symbols("a b x1 x2")
    dense = ImplicitForm((x1, x2), sp.Matrix([[a, b], [b, a]]), (1, a * b))
    sol = dense.explicit()
    assert sp.simplify(sol[0] - (a - a * b**2) / (a**2 - b**2)) == 0
    with pytest.raises(ExpressionBudgetError):
        ImplicitForm((x1, x2), sp.Matrix([[a, b], [b, a]]), (1, a * b)).explicit(max_size=3)
    with pytest.raises(IrregularLagrangianError):
        ImplicitForm((x1, x2), sp.Matrix([[a, b], [a, b]]), (1, 0)).explicit()
    assert np.allclose(dense.numeric_solve({a: 2.0, b: 1.0}), np.linalg.solve([[2, 1], [1, 2]], [1, 2]))
    pairs, M, F = ImplicitForm((x1,), sp.Matrix([[sp.sin(a) ** 2 + 1]]), ((sp.sin(a) ** 2 + 1) * b,)).cse()
    assert pairs and M[0, 0] == pairs[0][0]

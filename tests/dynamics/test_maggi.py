"""Maggi's equations (the large-system route, anholo.dynamics.maggi) against independent oracles.

Oracles:
* the coordinate multiplier method built by hand (tests/oracles.py ``nonlinear_constrained_solution``:
  ``[[W, −Jᵀ], [J, 0]] [q̈; λ] = [F + Q; −(∂φ/∂q)·q̇ − ∂φ/∂t]``, which covers linear and affine constraints,
  forces and time): natural accelerations q̈ and the multipliers λ of the constraints as written, at
  random points of C, for every catalogue system with linear or affine constraints;
* the frame multipliers μ_a = E(L)(X_a) − Q(X_a) recomputed from that oracle's λ (μ = κ_Pᵀ λ);
* the structure functions [X_i, X_j] = R^k_ij X_k of the adapted frame computed here by hand with sympy
  (brackets of coordinate vector fields, expressed in the frame by a linear solve);
* the implicit form M x = F checked by substituting the oracle's accelerations.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from oracles import nonlinear_constrained_solution, point_on_constraints

from anholo import Chart
from anholo.dynamics.maggi import MaggiSystem
from anholo.errors import DimensionError, NonlinearConstraintError, SingularFrameError
from anholo.examples import LARGE_EXAMPLES, example_names, load_example
from anholo.system import System

#: Catalogue systems with linear or affine constraints (the route of System.nonholonomic()).
LINEAR = [pytest.param(name, marks=pytest.mark.slow) if name == "rattleback" else name for name in example_names()
          if (name not in LARGE_EXAMPLES or name == "rattleback") and load_example(name).constraints
          and not load_example(name).functions]  # the rattleback's sympy oracle takes about 20 s


def _linear(name) -> bool:
    s = System.load(name)
    try:
        s.maggi()
        return True
    except NonlinearConstraintError:
        return False


def _point(s: System, ms: MaggiSystem, seed: int) -> dict:
    q, u = s.chart.coordinates, s.chart.velocities
    dep = [u[s.chart.coordinates.index(c)] for c in ms.dependent_coordinates]
    params = list(s.chart.parameters) + ([s.time] if s.time is not None else []) + list(s.inputs)
    return point_on_constraints(q, u, s.constraints, params, dep, seed, low=-0.9, high=0.9)


@pytest.mark.parametrize("name", LINEAR)
def test_maggi_accelerations_and_multipliers_equal_the_multiplier_method(name):
    s = System.load(name)
    if not _linear(name):
        pytest.skip("nonlinear constraints (Chetaev)")
    ms = s.maggi()
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr)
    Q = s.forces.total if s.forces is not None else None
    time = ms.time
    q, u = s.chart.coordinates, s.chart.velocities
    worst = 0.0
    for seed in (1, 2):
        pt = _point(s, ms, seed)
        qdd, lam = nonlinear_constrained_solution(L, q, u, s.constraints, pt, forces=Q, time=time)
        values = {str(k): float(v) for k, v in pt.items()}
        values.update({v.name: values[c.name + "_dot"] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
        got = ms.evaluate(values)
        worst = max(worst, np.abs(got["q_ddot"] - qdd).max() / max(1.0, np.abs(qdd).max()))
        if len(lam):
            worst = max(worst, np.abs(got["lambda"] - lam).max() / max(1.0, np.abs(lam).max()))
            # μ = κ_Pᵀ λ: the covector E(L) − Q on the dependent coordinate vectors X_a = ∂_P
            kappa = sp.Matrix([[sp.diff(c, u[q.index(P)]) for P in ms.dependent_coordinates] for c in s.constraints])
            KP = np.array(kappa.xreplace(pt).evalf().tolist(), dtype=float)
            worst = max(worst, np.abs(got["mu"] - KP.T @ lam).max() / max(1.0, np.abs(lam).max()))
        # the free accelerations are q̈ of the free coordinates
        free = [q.index(c) for c in ms.free_coordinates]
        worst = max(worst, np.abs(got["v_dot"] - qdd[free]).max() / max(1.0, np.abs(qdd).max()))
    assert worst < 1e-9, worst


@pytest.mark.parametrize("name", ["nonholonomic_particle", "knife_edge", "rolling_disk", "chaplygin_sleigh",
                                  "roller_racer"])
def test_implicit_form_is_solved_by_the_oracle(name):
    """M x = F at random points with x = (q̈ of the free coordinates, μ) from the multiplier method."""
    s = System.load(name)
    ms = s.maggi()
    form = ms.implicit_form()
    L = s.lagrangian.bundle.to_natural(s.lagrangian.expr)
    q, u = s.chart.coordinates, s.chart.velocities
    pt = _point(s, ms, 4)
    qdd, lam = nonlinear_constrained_solution(L, q, u, s.constraints, pt)
    free = [q.index(c) for c in ms.free_coordinates]
    kappa = sp.Matrix([[sp.diff(c, u[q.index(P)]) for P in ms.dependent_coordinates] for c in s.constraints])
    KP = np.array(kappa.xreplace(pt).evalf().tolist(), dtype=float)
    x = np.concatenate([qdd[free], KP.T @ lam])
    sub = {**pt, **{v: pt[u[q.index(c)]] for v, c in zip(ms.free_velocities, ms.free_coordinates)}}
    M = np.array(form.matrix.xreplace(sub).evalf().tolist(), dtype=float)
    F = np.array([float(f.xreplace(sub).evalf()) for f in form.rhs])
    assert np.abs(M @ x - F).max() < 1e-9
    M[0, 0] *= 1.01  # the check can fail
    assert np.abs(M @ x - F).max() > 1e-6


def _brackets_in_frame(rows, coords):
    """R[k][i][j] of the frame with rows X_i (sympy), by hand: [X_i, X_j]^A = X_i(X_j^A) − X_j(X_i^A)."""
    n = len(coords)
    X = sp.Matrix(rows)
    R = [[[0] * n for _ in range(n)] for _ in range(n)]
    for i in range(n):
        for j in range(n):
            br = [sum(X[i, B] * sp.diff(X[j, A], coords[B]) - X[j, B] * sp.diff(X[i, A], coords[B])
                      for B in range(n)) for A in range(n)]
            comp = X.T.LUsolve(sp.Matrix(br))  # br = Σ_k R^k_ij X_k
            for k in range(n):
                R[k][i][j] = comp[k]
    return R


@pytest.mark.parametrize("name", ["nonholonomic_particle", "rolling_disk", "roller_racer", "snakeboard"])
def test_structure_functions_against_brackets(name):
    s = System.load(name)
    ms = s.maggi()
    q = s.chart.coordinates
    frame = ms.frame_vectors()
    from anholo.algebra.engine import to_sympy
    rows = [[to_sympy(e, ms._symbols()) for e in row] for row in frame]
    R_oracle = _brackets_in_frame(rows, q)
    R = ms.structure()
    rng = random.Random(2)
    syms = sorted(set().union(*(sp.sympify(e).free_symbols for row in rows for e in row)) | set(s.chart.parameters),
                  key=str)
    n = len(q)
    for _ in range(2):
        pt = {x: rng.uniform(0.2, 0.8) for x in syms}
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    a = complex(sp.sympify(R[k][i][j]).xreplace(pt).evalf())
                    b = complex(sp.sympify(R_oracle[k][i][j]).xreplace(pt).evalf())
                    assert abs(a - b) < 1e-9, (k, i, j, a, b)
    assert ms.distribution_is_integrable() is False


def test_exact_small_result_and_route_choice():
    """The particle through Maggi's route gives the exact route's field; small systems keep the exact route."""
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    y = chart.coordinates[1]
    ms = MaggiSystem(chart, (xd**2 + yd**2 + zd**2) / 2, [zd - y * xd])
    v1, v2 = ms.free_velocities[:2]
    acc = ms.accelerations()
    assert sp.simplify(acc[0] + v1 * v2 * y / (1 + y**2)) == 0 and sp.simplify(acc[1]) == 0
    assert type(System.load("nonholonomic_particle").nonholonomic()).__name__ == "NonholonomicSystem"
    assert type(System.load("whipple_bicycle").nonholonomic()).__name__ == "MaggiSystem"
    assert type(System.load("rolling_disk").nonholonomic(route="maggi")).__name__ == "MaggiSystem"


def test_user_errors():
    chart = Chart("x y z")
    xd, yd, zd = chart.velocities
    y = chart.coordinates[1]
    L = (xd**2 + yd**2 + zd**2) / 2
    with pytest.raises(NonlinearConstraintError):
        MaggiSystem(chart, L, [zd**2 - y * xd])
    with pytest.raises(SingularFrameError):
        MaggiSystem(chart, L, [zd - y * xd], dependent=["y"])
    with pytest.raises(DimensionError):
        MaggiSystem(chart, L, [zd - y * xd], dependent=["w"])


def test_maggis_route_compiles_control_inputs():
    """Maggi's route takes the inputs as run-time values (simulated against an independent oracle in
    tests/numerics/test_maggi_inputs.py); a run without them is a one-line error naming them."""
    from anholo.errors import InputError
    from anholo.numerics import compile_system, simulate

    compiled = compile_system(System.load("sleigh_with_motor").nonholonomic(route="maggi"))
    assert compiled.control_names == ("tau",)
    with pytest.raises(InputError, match="tau"):
        simulate(compiled, 1.0, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0])

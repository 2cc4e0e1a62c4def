"""The Cartan-form equation i_Γ dθ_L = −dE_L (THEORY §3).

Oracles: for regular L, the coordinate Euler–Lagrange equations (tests/oracles.py);
for singular L, solutions derived by hand in the docstrings below.
"""

import numpy as np
import pytest
import sympy as sp

from anholo import Chart, Frame, IrregularLagrangianError, Lagrangian, TangentBundle
from oracles import coordinate_accelerations, quasi_point, random_points, values
from test_euler_lagrange import random_frame, random_lagrangian


@pytest.mark.parametrize("seed", [1, 4])
def test_cartan_field_equals_coordinate_euler_lagrange(seed):
    F = random_frame(3, seed)
    q, u = F.chart.coordinates, F.chart.velocities
    Lnat = random_lagrangian(q, u, seed, cross_terms=False)
    L = Lagrangian(F, Lnat)
    sol = L.euler_lagrange_field_cartan()
    assert sol.is_unique and sol.is_everywhere_solvable and sol.is_second_order()
    acc = sol.field().natural_accelerations(natural=False)
    for pt in random_points(q + u, 2, seed=seed, low=-0.6, high=0.6):
        got = values([acc[a] for a in q], quasi_point(F.vectors, q, u, pt, L.bundle.quasi_velocities))
        assert np.allclose(got, coordinate_accelerations(Lnat, q, u, pt), rtol=1e-8)


def test_singular_lagrangian_linear_in_one_velocity():
    """L = ½ẋ² + x ẏ.  By hand: θ_L = ẋ dx + x dy, dθ_L = dẋ∧dx + dx∧dy, E = ½ẋ².
    i_Γ dθ_L = −dE with Γ = A1 ∂x + A2 ∂y + B1 ∂ẋ + B2 ∂ẏ gives
    A1 = ẋ, A1 = 0, B1 = A2: solutions only where ẋ = 0; A2 and B2 free (B1 = A2)."""
    x, y = sp.symbols("x y", real=True)
    TQ = TangentBundle(Frame.coordinate(Chart([x, y])))
    v1, v2 = TQ.quasi_velocities
    sol = Lagrangian(TQ, v1**2 / 2 + x * v2).euler_lagrange_field_cartan()
    assert len(sol.conditions) == 1 and sp.simplify(sol.conditions[0] / v1).is_number
    assert len(sol.free_directions) == 2
    # the kernel of dθ_L is spanned by ∂y + ∂ẋ and ∂ẏ: check by contraction and by span
    for K in sol.free_directions:
        assert L_two_form_kills(TQ, v1**2 / 2 + x * v2, K)
    kernel = sp.Matrix([list(K.components) for K in sol.free_directions])
    expected = sp.Matrix([[0, 1, 1, 0], [0, 0, 0, 1]])
    assert kernel.col_join(expected).rank() == 2
    with pytest.raises(IrregularLagrangianError):
        sol.field()
    # on the submanifold ẋ = 0 there is no condition left
    on = Lagrangian(TQ, v1**2 / 2 + x * v2).euler_lagrange_field_cartan(on={v1: 0})
    assert on.conditions == ()


def L_two_form_kills(TQ, expr, K):
    return Lagrangian(TQ, expr).cartan_two_form.interior(K).is_zero()


def test_vakonomic_type_lagrangian_has_solutions_only_on_constraint():
    """L̄ = ½(ẋ²+ẏ²+ż²) + λ(ż − y ẋ) on TQ × R (THEORY §5): solutions exist only on
    C = {ż = yẋ}; on C, for each λ̇ the field is determined (one free unknown).
    Oracle: the coordinate multiplication rule of THEORY §5,
    ẍ = ẏ(λ − yẋ)/(1+y²), ÿ = −λẋ, λ̇ = −ẏ(ẋ + yλ)/(1+y²), for the SODE solution."""
    x, y, z = sp.symbols("x y z", real=True)
    chart = Chart([x, y, z])
    F = Frame(chart, [[1, 0, y], [0, 1, 0], [0, 0, 1]])
    lam = sp.Symbol("lambda1", real=True)
    TQ = TangentBundle(F, extra=[lam])
    v1, v2, v3 = TQ.quasi_velocities
    Lbar = Lagrangian(TQ, (chart.velocities[0] ** 2 + chart.velocities[1] ** 2 + chart.velocities[2] ** 2) / 2 + lam * v3)
    sol = Lbar.euler_lagrange_field_cartan()
    assert any(sp.simplify(c / v3).is_number for c in sol.conditions)
    onC = Lbar.euler_lagrange_field_cartan(on={v3: 0})
    assert onC.conditions == ()
    assert onC.free_unknowns == ("lambda1_rate",)
    # the tangent solution: pick the free λ̇ such that B3 = 0 (Γ tangent to C)
    A, B, rates = onC.frame_components()
    K = onC.free_components[0]
    c = sp.solve(B[2] + sp.Symbol("c") * K[5], sp.Symbol("c"))[0]
    B = [sp.cancel(B[i] + c * K[3 + i]) for i in range(3)]
    lam_dot = sp.cancel(rates[0] + c * K[6])
    xd, yd = v1, v2  # on C: ẋ = v1, ẏ = v2
    assert sp.simplify(B[0] - yd * (lam - y * xd) / (1 + y**2)) == 0  # ẍ = v̇1
    assert sp.simplify(B[1] + lam * xd) == 0
    assert sp.simplify(lam_dot + yd * (xd + y * lam) / (1 + y**2)) == 0

"""The exponential ansatz of search_invariant_density: the two-wheeled carriage (Crampin & Mestdag 2010,
§7.2) preserves ``exp(κ (ψ1 + ψ2)) dq dψ̇1 dψ̇2`` on C, ``κ = R³ a m0 / (2 (2 C c² + J R²))``, which no
density ``det(g)^k F(q)`` with F polynomial gives.

Oracle, independent of anholo: the coordinate multiplier equations written here with sympy, solved for
``q̈`` on C (coordinates ``(q, ψ̇1, ψ̇2)``, the velocities of the wheels being anholo's free velocities), and
``div(N Γ) = Σ ∂(N q̇^A)/∂q^A + Σ ∂(N ψ̈_i)/∂ψ̇_i`` differentiated here and evaluated at random points.
"""

import random

import sympy as sp

from anholo.analysis.invariant_measure import search_invariant_density
from anholo.system import System

x, y, th, p1, p2 = Q = sp.symbols("x y theta psi1 psi2")
xd, yd, thd, p1d, p2d = U = sp.symbols("x_dot y_dot theta_dot psi1_dot psi2_dot")
m, m0, a, J, C, R, c = sp.symbols("m m0 a J C R c")


def _field_on_C():
    """``(q̇(q, ψ̇), ψ̈(q, ψ̇))``: ``q̇ = S(q) ψ̇`` solves the constraints, and the multiplier equations
    ``W q̈ + (∂p/∂q) q̇ − ∂L/∂q = Aᵀ λ`` projected on the columns of S (``Sᵀ Aᵀ = 0``) give
    ``(Sᵀ W S) ψ̈ = −Sᵀ (W Ṡ ψ̇ + (∂p/∂q) q̇ − ∂L/∂q)`` (Maggi 1896)."""
    L = (m * (xd ** 2 + yd ** 2) / 2 + m0 * a * thd * (yd * sp.cos(th) - xd * sp.sin(th)) + J * thd ** 2 / 2
         + C * (p1d ** 2 + p2d ** 2) / 2)
    S = sp.Matrix([[R / 2 * sp.cos(th)] * 2, [R / 2 * sp.sin(th)] * 2, [-R / (2 * c), R / (2 * c)], [1, 0], [0, 1]])
    w = sp.Matrix([p1d, p2d])
    qdot = S * w
    on_C = dict(zip(U, qdot))
    W = sp.Matrix(5, 5, lambda i, j: sp.diff(L, U[i], U[j])).xreplace(on_C)
    p = sp.Matrix([sp.diff(L, u) for u in U])
    rest = (p.jacobian(Q) * sp.Matrix(U) - sp.Matrix([sp.diff(L, q) for q in Q])).xreplace(on_C)
    Sdot = sp.Matrix(5, 2, lambda i, j: sum(sp.diff(S[i, j], q) * f for q, f in zip(Q, qdot)))
    acc = (S.T * W * S).LUsolve(-S.T * (W * Sdot * w + rest))
    return list(qdot), [acc[0], acc[1]]


def _divergence_of(N):
    """``div(N Γ) / N`` (zero iff N dq dψ̇ is invariant)."""
    qdot, acc = _field_on_C()
    div = sum(sp.diff(N * f, q) for f, q in zip(qdot, Q)) + sum(sp.diff(N * g, v) for g, v in zip(acc, (p1d, p2d)))
    return div / N


def _at_random_points(expr, count=8):
    rng = random.Random(3)
    syms = sorted(expr.free_symbols, key=str)
    f = sp.lambdify(syms, expr, cse=True)
    return max(abs(float(f(*[rng.uniform(0.3, 1.8) for _ in syms]))) for _ in range(count))


def test_carriage_exponential_density_is_found_and_invariant():
    s = System.load("two_wheeled_carriage")
    res = search_invariant_density(s.nonholonomic().field())
    assert res.found and "exp" in res.family
    names = {str(t): t for t in (x, y, th, p1, p2, m, m0, a, J, C, R, c)}
    N = sp.sympify(str(res.density), locals=names)
    assert _at_random_points(_divergence_of(N)) < 1e-10
    kappa = R ** 3 * a * m0 / (2 * (2 * C * c ** 2 + J * R ** 2))
    assert _at_random_points(_divergence_of(sp.exp(kappa * (p1 + p2)))) < 1e-10  # the published density
    assert _at_random_points(_divergence_of(sp.exp(11 * kappa / 10 * (p1 + p2)))) > 1e-4  # the test can fail
    assert _at_random_points(_divergence_of(N * sp.exp(kappa * p1 / 10))) > 1e-4


def test_none_message_names_the_exponential_ansatz():
    s = System.load("chaplygin_sleigh")  # no smooth invariant measure (Zenkov & Bloch 2003)
    res = search_invariant_density(s.nonholonomic().field())
    assert not res.found and any(w.startswith("exp(c_A q^A)") for w in res.searched)
    assert "exp(c_A q^A)" in str(res)

"""The flag of a distribution and its growth vector.

Oracles: iterated Lie brackets of hand-written coordinate vector fields spanning D,
computed here with plain sympy differentiation and ranked at random rational points
(no anholo code); published growth vectors: Heisenberg (2, 3); the car with n trailers,
a Goursat distribution (2, 3, ..., n + 3) (Sørdalen 1993);
the ball rolling on a plane without slipping or twisting (2, 3, 5) (Bryant & Hsu 1993).
"""

import random

import pytest
import sympy as sp

from anholo import Chart, Frame, Lagrangian
from anholo.dynamics.nonholonomic import NonholonomicSystem
from anholo.geometry.distribution import flag_of
from anholo.system import System


def _bracket(q, X, Y):
    return [sp.expand(sum(X[B] * sp.diff(Y[A], q[B]) - Y[B] * sp.diff(X[A], q[B]) for B in range(len(q))))
            for A in range(len(q))]


def _hand_growth(q, fields, seed=3):
    """Growth vector of span(fields) from all iterated brackets, ranks at a random point."""
    rng = random.Random(seed)
    pt = {s: sp.Rational(rng.randint(5, 95), 97) for s in set().union(*(sp.Matrix(f).free_symbols for f in fields))}

    def rank(vs):
        return sp.Matrix([[sp.N(sp.sympify(c).xreplace(pt), 40) for c in v] for v in vs]).rank(
            iszerofunc=lambda x: abs(x) < 1e-25)

    level, allf, growth = list(fields), list(fields), [rank(fields)]
    while growth[-1] < len(q):
        new = [_bracket(q, X, Y) for X in fields for Y in level]
        allf += new
        level = new
        r = rank(allf)
        if r == growth[-1]:
            break
        growth.append(r)
    return tuple(growth)


def test_heisenberg():
    x, y, z = sp.symbols("x y z", real=True)
    F = Frame(Chart([x, y, z]), [[1, 0, -y / 2], [0, 1, x / 2], [0, 0, 1]], rank_D=2)
    flag = flag_of(F)
    assert flag.growth_vector == (2, 3) == _hand_growth([x, y, z], [[1, 0, -y / 2], [0, 1, x / 2]])
    assert flag.bracket_generating and flag.singular_factors() == ()


def test_integrable_distribution():
    x, y, z = sp.symbols("x y z", real=True)
    F = Frame(Chart([x, y, z]), [[1, 0, 0], [0, 1, 0], [0, 0, 1]], rank_D=2)
    flag = flag_of(F)
    assert flag.growth_vector == (2,) and flag.integrable and not flag.bracket_generating


@pytest.mark.parametrize("n", [0, 1, 2, pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)])
def test_n_trailer_is_goursat(n):
    s = System.load(f"n_trailer_{n}")
    nh = s.nonholonomic(route="exact")  # from four trailers on the default route is Maggi's
    flag = flag_of(nh.frame)
    assert flag.growth_vector == tuple(range(2, n + 4))
    if n <= 3:  # the hand oracle takes every iterated bracket: beyond three trailers, minutes
        X = [list(nh.frame.vectors.row(a)) for a in range(2)]
        assert _hand_growth(list(s.chart.coordinates), X) == flag.growth_vector


@pytest.mark.parametrize("case", ["n_trailer_1", "ball"])
def test_frame_route_gives_the_same_flag(monkeypatch, case):
    """The route in the frame (taken when the exact coordinate route is out of reach) against the
    hand-computed brackets."""
    from anholo.algebra import kernel
    from anholo.geometry import distribution

    def unsupported(*args, **kwargs):
        raise kernel.Unsupported("forced for the test")

    monkeypatch.setattr(distribution, "_grow_in_kernel", unsupported)
    if case == "ball":
        nh, q, fields = _rolling_ball(True)
    else:
        s = System.load(case)
        nh, q = s.nonholonomic(), list(s.chart.coordinates)
        fields = [list(nh.frame.vectors.row(a)) for a in range(2)]
    assert flag_of(nh.frame).growth_vector == _hand_growth(q, fields)


def _rolling_ball(no_twist: bool):
    x, y, phi, th, psi = q = sp.symbols("x y phi theta psi", real=True)
    r = sp.Symbol("r", positive=True)
    chart = Chart(list(q), parameters=[r])
    xd, yd, phd, thd, psd = chart.velocities
    wx = thd * sp.cos(phi) + psd * sp.sin(th) * sp.sin(phi)
    wy = thd * sp.sin(phi) - psd * sp.sin(th) * sp.cos(phi)
    wz = phd + psd * sp.cos(th)
    cons = [xd - r * wy, yd + r * wx] + ([wz] if no_twist else [])
    L = Lagrangian(Frame.coordinate(chart), (xd**2 + yd**2 + wx**2 + wy**2 + wz**2) / 2)
    nh = NonholonomicSystem(L, cons)
    # D by hand: theta_dot and psi_dot free (phi_dot = -psi_dot cos(theta) without twisting)
    if no_twist:
        fields = []
        for td, sd in ((1, 0), (0, 1)):
            pd = -sd * sp.cos(th)
            sub = {thd: td, psd: sd, phd: pd}
            fields.append([r * wy.subs(sub), -r * wx.subs(sub), pd, td, sd])
    else:
        fields = []
        for pd, td, sd in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
            sub = {thd: td, psd: sd, phd: pd}
            fields.append([r * wy.subs(sub), -r * wx.subs(sub), pd, td, sd])
    return nh, list(q), fields


def test_ball_without_slipping_or_twisting():
    nh, q, fields = _rolling_ball(True)
    flag = flag_of(nh.frame)
    assert flag.growth_vector == (2, 3, 5) == _hand_growth(q, fields)
    assert flag.bracket_generating


def test_ball_without_slipping():
    nh, q, fields = _rolling_ball(False)
    assert flag_of(nh.frame).growth_vector == (3, 5) == _hand_growth(q, fields)


def test_kept_generators_are_brackets_of_D():
    """The kept generators, in coordinates, are the brackets their words name (hand-computed)."""
    s = System.load("n_trailer_1")
    nh = s.nonholonomic()
    flag = flag_of(nh.frame)
    q = list(s.chart.coordinates)
    X = [list(nh.frame.vectors.row(a)) for a in range(2)]
    for i, w in enumerate(flag.words):
        Y = X[w[-1]]
        for a in reversed(w[:-1]):
            Y = _bracket(q, X[a], Y)
        diff = [sp.simplify(sp.sympify(g) - h) for g, h in zip(flag.generators[i], Y)]
        assert all(d == 0 for d in diff), (flag.word_text(i), diff)


def test_singular_points_of_the_two_trailer_system_lie_in_the_zero_set():
    """With the first trailer at a right angle to the car the ranks drop (Jean 1996: the singular
    configurations of the car with two trailers): the regularity determinant must vanish there,
    and not at a generic point nor with only the last trailer at a right angle."""
    s = System.load("n_trailer_2")
    flag = flag_of(s.nonholonomic().frame)
    det = flag.regularity_determinant()
    assert det is not None
    th0, th1, th2 = sp.symbols("theta0 theta1 theta2", real=True)
    params = {p: 1 for p in s.chart.parameters}
    generic = det.xreplace({th0: sp.Rational(1, 3), th1: sp.Rational(1, 5), th2: sp.Rational(-1, 7)} | params)
    special = det.xreplace({th0: sp.Rational(1, 3), th1: sp.Rational(1, 3) + sp.pi / 2, th2: sp.Rational(1, 5)} | params)
    last = det.xreplace({th0: sp.Rational(1, 3), th1: sp.Rational(1, 5), th2: sp.Rational(1, 5) + sp.pi / 2} | params)
    assert abs(sp.N(generic)) > 1e-6 and abs(sp.N(last)) > 1e-6
    assert abs(sp.N(special, 30)) < 1e-20

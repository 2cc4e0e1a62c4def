"""Tests of the lifts to TQ in the Hamel chart (anholo.geometry.tangent, THEORY §2–3).

The independent oracle is natural coordinates (q^A, u^A) on TQ, where
``X^C = X^A ∂/∂q^A + u^B ∂_B X^A ∂/∂u^A``, ``X^V = X^A ∂/∂u^A``,
``Δ = u^A ∂/∂u^A`` and a SODE is ``u^A ∂/∂q^A + a^A ∂/∂u^A``.  A function
f(q, u) is carried to the Hamel chart by the substitution ``u = Xᵀ v``, written
out in this file.  Everything is compared numerically at seeded random points.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
import sympy as sp

from anholo import Chart, DimensionError, Frame, SecondOrderField, TangentBundle, TangentField, VectorField

TOL = 1e-8


# --------------------------------------------------------------------------------------
# independent helpers
# --------------------------------------------------------------------------------------
def rand_entry(rng, q, trig=True, terms=(1, 2)):
    kinds = ["lin", "quad", "sin", "cos"] if trig else ["lin", "quad", "const"]
    out = []
    for _ in range(rng.randint(*terms)):
        c = rng.choice([-2, -1, 1, 2, sp.Rational(1, 2), 3])
        a, b = rng.choice(q), rng.choice(q)
        kind = rng.choice(kinds)
        out.append({"lin": c * a, "quad": c * a * b, "const": c, "sin": c * sp.sin(a), "cos": c * sp.cos(a) * b}[kind])
    return sp.Add(*out)


def rand_frame_matrix(rng, q, trig=True, mix=False):
    n = len(q)
    X = sp.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            X[i, j] = rand_entry(rng, q, trig, terms=(1, 1))
    if mix:
        while True:
            M = sp.Matrix(n, n, lambda i, j: rng.randint(-1, 1))
            if M.det() != 0:
                break
        X = M * X
    return X


def rand_function_qu(rng, q, u):
    """A random function of (q, u): polynomial in u (degree ≤ 2) with polynomial/trig coefficients."""
    n = len(q)
    terms = [rand_entry(rng, q, terms=(1, 1)) * u[rng.randrange(n)] for _ in range(2)]
    terms.append(rand_entry(rng, q, terms=(1, 1)) * u[rng.randrange(n)] * u[rng.randrange(n)])
    terms.append(rand_entry(rng, q, terms=(1, 1)))
    return sp.Add(*terms)


def rand_points(symbols, count, seed):
    rng = random.Random(seed)
    return [{s: rng.uniform(-1.2, 1.2) for s in symbols} for _ in range(count)]


def nvals(exprs, symbols, pts):
    """Values of a list of expressions at a list of points (dicts), as an array [point, expr]."""
    f = sp.lambdify(list(symbols), list(exprs), "numpy")
    out = []
    for pt in pts:
        vals = f(*[pt[s] for s in symbols])
        out.append(np.broadcast_to(np.array(vals, dtype=float), (len(exprs),)))
    return np.array(out)


def assert_close(a, b, symbols, pts, tol=TOL):
    a = [sp.sympify(x) for x in a]
    b = [sp.sympify(x) for x in b]
    assert len(a) == len(b)
    va, vb = nvals(a, symbols, pts), nvals(b, symbols, pts)
    scale = 1 + np.abs(vb).max()
    assert np.abs(va - vb).max() <= tol * scale, np.abs(va - vb).max()


def natural_complete(q, u, X, f):
    """X^C(f) in natural coordinates: X^A ∂f/∂q^A + u^B ∂_B X^A ∂f/∂u^A."""
    n = len(q)
    return sp.Add(*[X[A] * sp.diff(f, q[A]) for A in range(n)]) + sp.Add(
        *[u[B] * sp.diff(X[A], q[B]) * sp.diff(f, u[A]) for A in range(n) for B in range(n)]
    )


def natural_vertical(q, u, X, f):
    return sp.Add(*[X[A] * sp.diff(f, u[A]) for A in range(len(q))])


def natural_liouville(q, u, f):
    return sp.Add(*[u[A] * sp.diff(f, u[A]) for A in range(len(q))])


def to_hamel(f, u, v, Xmat):
    """f(q, u) ↦ f(q, Xᵀ v), written out here (u^A = X_i^A v^i)."""
    n = len(u)
    return sp.sympify(f).xreplace({u[A]: sp.Add(*[Xmat[i, A] * v[i] for i in range(n)]) for A in range(n)})


def hand_bracket(q, X, Y):
    n = len(q)
    return [sp.Add(*[X[B] * sp.diff(Y[A], q[B]) - Y[B] * sp.diff(X[A], q[B]) for B in range(n)]) for A in range(n)]


# --------------------------------------------------------------------------------------
# setups: (seed, trig, mix)
# --------------------------------------------------------------------------------------
CASES = [(8, True, True), (3, False, True), (1, True, False)]
CASE_PARAMS = [pytest.param(c, marks=pytest.mark.slow) if c == (1, True, False) else c for c in CASES]


@functools.lru_cache(maxsize=None)
def setup(case):
    seed, trig, mix = case
    rng = random.Random(500 + seed)
    q = sp.symbols("q0:3", real=True)
    chart = Chart(q)
    Xmat = rand_frame_matrix(rng, q, trig=trig, mix=mix)
    F = Frame(chart, Xmat)
    TQ = TangentBundle(F)
    Xf = VectorField(chart, [rand_entry(rng, q, terms=(1, 1)) for _ in range(3)])
    Yf = VectorField(chart, [rand_entry(rng, q, terms=(1, 1)) for _ in range(3)])
    return dict(q=q, u=chart.velocities, v=TQ.quasi_velocities, X=Xmat, F=F, TQ=TQ, Xf=Xf, Yf=Yf, rng_seed=seed,
                lifts={})


def lift(S, kind, name):
    """Cached S["TQ"].complete_lift / vertical_lift of S[name] (name "Xf" or "Yf")."""
    key = (kind, name)
    if key not in S["lifts"]:
        TQ = S["TQ"]
        S["lifts"][key] = (TQ.complete_lift if kind == "C" else TQ.vertical_lift)(S[name])
    return S["lifts"][key]


@pytest.fixture(params=CASE_PARAMS, ids=lambda c: f"s{c[0]}" + ("-trig" if c[1] else "-poly") + ("-mix" if c[2] else ""))
def S(request):
    return setup(request.param)


def qv_points(S, count=3, seed=0):
    syms = list(S["q"]) + list(S["v"])
    return syms, rand_points(syms, count, 900 + seed)


# --------------------------------------------------------------------------------------
# bracket relations
# --------------------------------------------------------------------------------------
def test_vectorfield_bracket_is_hand_bracket(S):
    Xf, Yf = S["Xf"], S["Yf"]
    hand = hand_bracket(S["q"], Xf.components, Yf.components)
    assert all(sp.expand(a - b) == 0 for a, b in zip(Xf.bracket(Yf).components, hand))


def test_complete_complete_bracket(S):
    TQ, Xf, Yf = S["TQ"], S["Xf"], S["Yf"]
    lhs = lift(S, "C", "Xf").bracket(lift(S, "C", "Yf"))
    rhs = TQ.complete_lift(VectorField(Xf.chart, hand_bracket(S["q"], Xf.components, Yf.components)))
    syms, pts = qv_points(S, 3, 1)
    assert_close(lhs.components, rhs.components, syms, pts)


def test_complete_vertical_bracket(S):
    TQ, Xf, Yf = S["TQ"], S["Xf"], S["Yf"]
    lhs = lift(S, "C", "Xf").bracket(lift(S, "V", "Yf"))
    rhs = TQ.vertical_lift(VectorField(Xf.chart, hand_bracket(S["q"], Xf.components, Yf.components)))
    syms, pts = qv_points(S, 3, 2)
    assert_close(lhs.components, rhs.components, syms, pts)


def test_vertical_vertical_bracket(S):
    br = lift(S, "V", "Xf").bracket(lift(S, "V", "Yf"))
    syms, pts = qv_points(S, 3, 3)
    assert_close(br.components, [0] * 6, syms, pts)


def test_frame_vector_lift_brackets(S):
    """[X_i^C, X_j^C] and [X_i^C, X_j^V] for frame vectors against the lifts of
    [X_i, X_j] computed by hand in coordinates."""
    TQ, q, X = S["TQ"], S["q"], S["X"]
    syms, pts = qv_points(S, 2, 4)
    for i, j in [(0, 1), (1, 2), (2, 0)]:
        br = VectorField(TQ.chart, hand_bracket(q, X.row(i), X.row(j)))
        assert_close(TQ.complete_lift(i).bracket(TQ.complete_lift(j)).components,
                     TQ.complete_lift(br).components, syms, pts)
        assert_close(TQ.complete_lift(i).bracket(TQ.vertical_lift(j)).components,
                     TQ.vertical_lift(br).components, syms, pts)


# --------------------------------------------------------------------------------------
# lifts of f X
# --------------------------------------------------------------------------------------
def test_lift_of_function_times_field(S):
    TQ, q, v, X, Xf = S["TQ"], S["q"], S["v"], S["X"], S["Xf"]
    f = q[0] * sp.cos(q[1]) + q[2] ** 2
    fX = f * Xf
    # ḟ = u^A ∂f/∂q^A with u = Xᵀ v, by hand
    fdot = sp.Add(*[X[i, A] * v[i] * sp.diff(f, q[A]) for i in range(3) for A in range(3)])
    syms, pts = qv_points(S, 3, 5)
    assert_close([TQ.total_derivative(f)], [fdot], syms, pts)
    lhs = TQ.complete_lift(fX)
    rhs = f * lift(S, "C", "Xf") + fdot * lift(S, "V", "Xf")
    assert_close(lhs.components, rhs.components, syms, pts)
    assert_close(TQ.vertical_lift(fX).components, (f * lift(S, "V", "Xf")).components, syms, pts)


def test_integer_index_means_frame_vector(S):
    TQ, F = S["TQ"], S["F"]
    syms, pts = qv_points(S, 2, 6)
    for i in range(3):
        assert_close(TQ.complete_lift(i).components, TQ.complete_lift(F.vector(i)).components, syms, pts)
        assert_close(TQ.vertical_lift(i).components, TQ.vertical_lift(F.vector(i)).components, syms, pts)
        # X_i^V = ∂/∂v^i exactly
        assert [sp.sympify(c) for c in TQ.vertical_lift(i).components] == [0, 0, 0] + [int(k == i) for k in range(3)]


# --------------------------------------------------------------------------------------
# SODEs
# --------------------------------------------------------------------------------------
def _random_sode(S, seed):
    rng = random.Random(seed)
    q, v = S["q"], S["v"]
    acc = [rand_entry(rng, q, terms=(1, 1)) * v[rng.randrange(3)] * v[rng.randrange(3)]
           + rand_entry(rng, q, terms=(1, 1)) for _ in range(3)]
    return acc, S["TQ"].second_order_field(acc)


def test_sode_components(S):
    TQ, q, v, X = S["TQ"], S["q"], S["v"], S["X"]
    acc, G = _random_sode(S, 7)
    assert isinstance(G, SecondOrderField)
    comps = G.as_tangent_field().components
    hand = [sp.Add(*[X[i, A] * v[i] for i in range(3)]) for A in range(3)] + acc
    syms, pts = qv_points(S, 2, 7)
    assert_close(comps, hand, syms, pts)


def test_complete_lift_bracket_with_sode_is_vertical(S):
    TQ, Xf = S["TQ"], S["Xf"]
    acc, G = _random_sode(S, 8)
    Gt = G.as_tangent_field()
    syms, pts = qv_points(S, 3, 8)
    br = lift(S, "C", "Xf").bracket(Gt)
    assert_close(br.components[:3], [0, 0, 0], syms, pts)
    # the test can fail: [X^V, Γ] is not vertical, its horizontal part is X itself
    brv = lift(S, "V", "Xf").bracket(Gt)
    assert_close(brv.components[:3], Xf.components, syms, pts)
    assert np.abs(nvals(Xf.components, syms, pts)).max() > 1e-3


def test_sode_in_natural_coordinates(S):
    """Γ acts on f(q, u) as u^A ∂f/∂q^A + a^A ∂f/∂u^A with a^A = d/dt(X_i^A v^i) written out here;
    also checks SecondOrderField.natural_accelerations."""
    TQ, q, u, v, X = S["TQ"], S["q"], S["u"], S["v"], S["X"]
    acc, G = _random_sode(S, 9)
    n = 3
    qdot = [sp.Add(*[X[i, A] * v[i] for i in range(n)]) for A in range(n)]
    a = [sp.Add(*[X[i, A] * acc[i] for i in range(n)])
         + sp.Add(*[sp.diff(X[i, A], q[B]) * qdot[B] * v[i] for i in range(n) for B in range(n)]) for A in range(n)]
    f = rand_function_qu(random.Random(10), q, u)
    nat = sp.Add(*[u[A] * sp.diff(f, q[A]) + sp.Symbol(f"a{A}") * sp.diff(f, u[A]) for A in range(n)])
    nat_h = to_hamel(nat, u, v, X).xreplace({sp.Symbol(f"a{A}"): a[A] for A in range(n)})
    syms, pts = qv_points(S, 3, 9)
    assert_close([G(to_hamel(f, u, v, X))], [nat_h], syms, pts)
    na = G.natural_accelerations(natural=False)
    assert_close([na[qa] for qa in q], a, syms, pts)
    # natural=True: the same in natural velocities
    na_u = G.natural_accelerations()
    assert_close([to_hamel(na_u[qa], u, v, X) for qa in q], a, syms, pts)


# --------------------------------------------------------------------------------------
# the lifts do not depend on the frame: natural-coordinate oracle
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("fseed", [0, 1])
def test_complete_lift_matches_natural_coordinates(S, fseed):
    TQ, q, u, v, X, Xf = S["TQ"], S["q"], S["u"], S["v"], S["X"], S["Xf"]
    f = rand_function_qu(random.Random(20 + fseed), q, u)
    fh = to_hamel(f, u, v, X)
    syms, pts = qv_points(S, 3, 10 + fseed)
    lhs = lift(S, "C", "Xf")(fh)
    rhs = to_hamel(natural_complete(q, u, Xf.components, f), u, v, X)
    assert_close([lhs], [rhs], syms, pts)
    # and the library's own conversion agrees with the substitution
    assert_close([lift(S, "C", "Xf")(TQ.to_quasi(f))], [TQ.to_quasi(natural_complete(q, u, Xf.components, f))],
                 syms, pts)
    # frame vectors: X_i^C = X_i^A ∂_A − R^k_ij v^j ∂/∂v^k, checked through the same oracle
    for i in range(3):
        assert_close([TQ.complete_lift(i)(fh)], [to_hamel(natural_complete(q, u, X.row(i), f), u, v, X)], syms, pts)


def test_vertical_lift_and_liouville_match_natural_coordinates(S):
    TQ, q, u, v, X, Xf = S["TQ"], S["q"], S["u"], S["v"], S["X"], S["Xf"]
    f = rand_function_qu(random.Random(30), q, u)
    fh = to_hamel(f, u, v, X)
    syms, pts = qv_points(S, 3, 12)
    assert_close([lift(S, "V", "Xf")(fh)], [to_hamel(natural_vertical(q, u, Xf.components, f), u, v, X)],
                 syms, pts)
    assert_close([TQ.liouville()(fh)], [to_hamel(natural_liouville(q, u, f), u, v, X)], syms, pts)
    for i in range(3):
        assert_close([TQ.vertical_lift(i)(fh)], [to_hamel(natural_vertical(q, u, X.row(i), f), u, v, X)], syms, pts)


def test_complete_lift_on_quasi_velocity(S):
    """X_i^C(v^k) = −R^k_ij v^j with R computed independently (coordinate brackets, numpy inverse)."""
    TQ, q, v, X = S["TQ"], S["q"], S["v"], S["X"]
    syms, pts = qv_points(S, 2, 13)
    Xl = sp.lambdify(q, X.tolist(), "numpy")
    brs = [[hand_bracket(q, X.row(i), X.row(j)) for j in range(3)] for i in range(3)]
    brl = sp.lambdify(q, brs, "numpy")
    for pt in pts:
        qs = [pt[s] for s in q]
        theta = np.linalg.inv(np.array(Xl(*qs), dtype=float).T)
        R = np.einsum("kA,ijA->kij", theta, np.array(brl(*qs), dtype=float))
        vv = np.array([pt[s] for s in v])
        for i in range(3):
            lib = nvals([TQ.complete_lift(i)(vk) for vk in v], syms, [pt])[0]
            assert np.allclose(lib, -R[:, i, :] @ vv, atol=1e-9)


# --------------------------------------------------------------------------------------
# conversions and round trips
# --------------------------------------------------------------------------------------
def test_quasi_natural_conversion(S):
    TQ, q, u, v, X = S["TQ"], S["q"], S["u"], S["v"], S["X"]
    f = rand_function_qu(random.Random(40), q, u)
    syms_qu = list(q) + list(u)
    syms_qv = list(q) + list(v)
    pts_qu = rand_points(syms_qu, 3, 41)
    pts_qv = rand_points(syms_qv, 3, 42)
    assert_close([TQ.to_quasi(f)], [to_hamel(f, u, v, X)], syms_qv, pts_qv)
    assert_close([TQ.to_natural(TQ.to_quasi(f))], [f], syms_qu, pts_qu)
    g = sp.sin(q[0]) * v[0] * v[2] + q[1] * v[1]
    assert_close([TQ.to_quasi(TQ.to_natural(g))], [g], syms_qv, pts_qv)
    Xl = sp.lambdify(q, X.tolist(), "numpy")
    for pt in pts_qv:
        Xn = np.array(Xl(*[pt[s] for s in q]), dtype=float)
        vv = np.array([pt[s] for s in v])
        u_lib = nvals(TQ.natural_velocities_of(v), syms_qv, [pt])[0]
        assert np.allclose(u_lib, Xn.T @ vv, atol=1e-10)
        # quasi-velocities of natural ones: numpy inverse
        uu = Xn.T @ vv
        v_lib = nvals(TQ.quasi_velocities_of(list(sp.Float(x) for x in uu)), syms_qv, [pt])[0]
        assert np.allclose(v_lib, vv, atol=1e-10)
        v_lib2 = nvals(TQ.quasi_velocities_of(TQ.natural_velocities_of(v)), syms_qv, [pt])[0]
        assert np.allclose(v_lib2, vv, atol=1e-10)
    # v^i = θ^i_A u^A, i.e. to_natural(v) against a numpy inverse
    for pt in pts_qu:
        Xn = np.array(Xl(*[pt[s] for s in q]), dtype=float)
        uu = np.array([pt[s] for s in u])
        assert np.allclose(nvals([TQ.to_natural(vi) for vi in v], syms_qu, [pt])[0],
                           np.linalg.solve(Xn.T, uu), atol=1e-10)


def test_frame_components_round_trip(S):
    TQ, q, v = S["TQ"], S["q"], S["v"]
    rng = random.Random(50)
    A = [rand_entry(rng, q, terms=(1, 1)) * v[rng.randrange(3)] for _ in range(3)]
    B = [rand_entry(rng, q, terms=(1, 1)) + v[rng.randrange(3)] ** 2 for _ in range(3)]
    Y = TQ.field_from_frame(A, B)
    assert isinstance(Y, TangentField)
    A2, B2, extra = Y.frame_components()
    syms, pts = qv_points(S, 3, 14)
    assert_close(A2, A, syms, pts)
    assert_close(B2, B, syms, pts)
    assert tuple(extra) == ()
    # the other direction: arbitrary Hamel-chart components
    comps = [rand_entry(rng, q, terms=(1, 1)) * v[rng.randrange(3)] for _ in range(6)]
    Z = TQ.field(comps)
    A3, B3, _ = Z.frame_components()
    assert_close(TQ.field_from_frame(A3, B3).components, comps, syms, pts)


def test_field_from_frame_matches_natural_oracle(S):
    """(A^i X_i^C + B^i X_i^V)(f) with each X_i^C, X_i^V from the natural-coordinate formulas."""
    TQ, q, u, v, X = S["TQ"], S["q"], S["u"], S["v"], S["X"]
    rng = random.Random(60)
    A = [rand_entry(rng, q, terms=(1, 1)) * v[rng.randrange(3)] for _ in range(3)]
    B = [rand_entry(rng, q, terms=(1, 1)) for _ in range(3)]
    f = rand_function_qu(random.Random(61), q, u)
    expected = sp.Add(*[A[i] * to_hamel(natural_complete(q, u, X.row(i), f), u, v, X)
                        + B[i] * to_hamel(natural_vertical(q, u, X.row(i), f), u, v, X) for i in range(3)])
    syms, pts = qv_points(S, 3, 15)
    assert_close([TQ.field_from_frame(A, B)(to_hamel(f, u, v, X))], [expected], syms, pts)


def test_extra_coordinates():
    x, y = sp.symbols("x y", real=True)
    F = Frame(Chart([x, y]), [[1, y], [0, 1]])
    TQ = TangentBundle(F, extra=["lam"])
    lam = TQ.extra[0]
    assert TQ.size == 5 and TQ.coordinates[-1] == lam
    XC = TQ.complete_lift(0)
    assert XC.components[-1] == 0
    Y = TQ.field_from_frame([x, 1], [y, 0], extra=[lam**2])
    A, B, extra = Y.frame_components()
    assert [sp.simplify(a - b) for a, b in zip(A, [x, 1])] == [0, 0]
    assert [sp.simplify(a - b) for a, b in zip(B, [y, 0])] == [0, 0]
    assert [sp.simplify(e - lam**2) for e in extra] == [0]
    # ∂/∂λ commutes with lifts (their components do not involve λ)
    dl = TQ.field([0, 0, 0, 0, 1])
    assert dl.bracket(XC).is_zero()


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------
def test_tangent_errors():
    S = setup(CASES[0])
    TQ = S["TQ"]
    with pytest.raises(DimensionError):
        TQ.field([0] * 5)
    with pytest.raises(DimensionError):
        TQ.field_from_frame([0, 0], [0, 0, 0])
    with pytest.raises(DimensionError):
        TQ.complete_lift(3)
    with pytest.raises(DimensionError):
        TQ.vertical_lift([1, 0, 0])
    with pytest.raises(DimensionError):
        TQ.second_order_field([0, 0])
    with pytest.raises(DimensionError):
        TQ.quasi_velocities_of([1, 2])
    with pytest.raises(DimensionError):
        TQ.natural_velocities_of([1, 2, 3, 4])
    other = VectorField(Chart("a b c"), [1, 0, 0])
    with pytest.raises(DimensionError):
        TQ.complete_lift(other)
    with pytest.raises(DimensionError) as exc:
        TangentBundle(S["F"], quasi_velocities=["q0", "w1", "w2"])
    assert str(exc.value).strip()

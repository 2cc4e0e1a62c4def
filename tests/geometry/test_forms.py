"""Tests of anholo.geometry.forms (THEORY §1–2).

Oracles: galgebra 0.6.0 (outer product and left contraction in a Euclidean
algebra, multivectors built here from the component dicts), hand formulas
(evaluation of wedges as determinants, Pfaffian), and coordinate exterior
derivatives computed with plain sympy, with structure functions R computed
independently from coordinate brackets and a numpy inverse.
"""

from __future__ import annotations

import functools
import itertools
import random
from functools import reduce

import numpy as np
import pytest
import sympy as sp

from anholo import Chart, DimensionError, Form, Frame, TangentBundle, exterior_derivative
from anholo import AnholoError, interior_product, wedge
from anholo.geometry.forms import import_galgebra

try:  # through anholo's importer, which undoes galgebra's global change of sympy's __repr__
    galgebra_ga = import_galgebra()
except AnholoError:  # pragma: no cover - galgebra is a test dependency
    pytest.skip("galgebra is not installed", allow_module_level=True)
Ga = galgebra_ga.Ga


# --------------------------------------------------------------------------------------
# galgebra side (independent construction of multivectors)
# --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def ga_algebra(N):
    ga, *e = Ga.build(" ".join(f"e{a + 1}" for a in range(N)), g=[1] * N)
    return ga, tuple(e)


def ga_blade(e, I):
    if not I:
        return 1
    return reduce(lambda x, y: x ^ y, [e[i] for i in I])


def ga_from_dict(N, comps):
    """Σ_I c_I e_{i1} ∧ … ∧ e_{ik} (keys need not be sorted)."""
    ga, e = ga_algebra(N)
    out = ga.mv(0, "scalar")
    for I, c in comps.items():
        out = out + c * ga_blade(e, I)
    return out


def ga_coefficients(mv, N, k):
    """{sorted I: coefficient} of the grade-k part of a galgebra multivector."""
    ga, e = ga_algebra(N)
    keys = list(itertools.combinations(range(N), k))
    if k == 0:
        return {(): mv.scalar()}
    coefs = mv.blade_coefs([ga_blade(e, I) for I in keys])
    return dict(zip(keys, coefs))


def assert_same_components(form, expected: dict, N):
    """Every coefficient of `form` equals `expected` (missing keys = 0), by expand."""
    keys = set(expected) | set(form.components)
    for I in keys:
        a = form.components.get(I, 0)
        b = expected.get(I, 0)
        assert sp.expand(sp.sympify(a) - sp.sympify(b)) == 0, (I, a, b)


# --------------------------------------------------------------------------------------
# random forms
# --------------------------------------------------------------------------------------
SYMS = sp.symbols("a0:4", real=True)


def rand_coeff(rng, symbolic):
    if not symbolic:
        return rng.choice([-3, -2, -1, 1, 2, 3, sp.Rational(1, 2), sp.Rational(-5, 3)])
    a, b = rng.choice(SYMS), rng.choice(SYMS)
    return rng.choice([a, a * b - 2, sp.sin(a) * b, 3 * a + b, sp.cos(b), a**2])


def rand_components(rng, N, k, symbolic, density=None):
    keys = list(itertools.combinations(range(N), k))
    if density is None:  # keep about a dozen terms at most (galgebra is slow with many symbolic terms)
        density = min(0.5, 12 / len(keys))
    comps = {}
    for I in keys:
        if rng.random() < density:
            J = list(I)
            rng.shuffle(J)  # unsorted keys: the sign must be applied
            comps[tuple(J)] = rand_coeff(rng, symbolic)
    if not comps:
        comps[keys[0]] = rand_coeff(rng, symbolic)
    return comps


def _perm_sign(J):
    J = list(J)
    sign = 1
    for i in range(len(J)):
        for j in range(i + 1, len(J)):
            if J[i] > J[j]:
                sign = -sign
    return sign, tuple(sorted(J))


def sorted_dict(comps):
    out = {}
    for J, c in comps.items():
        s, I = _perm_sign(J)
        out[I] = out.get(I, 0) + s * c
    return out


@functools.lru_cache(maxsize=None)
def coordinate_basis(N):
    return Frame.coordinate(Chart(sp.symbols(f"x0:{N}", real=True)))


GA_CASES = [
    (N, p, r, symbolic, seed)
    for seed, (N, p, r) in enumerate([(3, 1, 1), (3, 1, 2), (4, 2, 2), (5, 2, 1), (5, 3, 2), (6, 3, 3),
                                      (7, 1, 3), (8, 2, 3), (8, 3, 3), (8, 1, 1)])
    for symbolic in (False, True)
]


# --------------------------------------------------------------------------------------
# wedge and interior against galgebra
# --------------------------------------------------------------------------------------
def test_unsorted_keys_apply_signs():
    B = coordinate_basis(4)
    w = Form.from_components(B, 2, {(1, 0): 5, (2, 3): 1, (3, 2): 2, (1, 1): 7})
    # (1,0) ↦ −(0,1); (2,3) + (3,2) = (1 − 2)(2,3); repeated index: zero
    assert dict(w.components) == {(0, 1): -5, (2, 3): -1}
    assert w[(1, 0)] == 5 and w[(0, 1)] == -5 and w[(1, 1)] == 0 and w[(0, 2)] == 0
    # galgebra agrees: e2^e1 = −e1^e2
    ga_w = ga_from_dict(4, {(1, 0): 5, (2, 3): 1, (3, 2): 2})
    assert sp.expand(ga_coefficients(ga_w, 4, 2)[(0, 1)] + 5) == 0


@pytest.mark.parametrize("N,p,r,symbolic,seed", GA_CASES)
def test_wedge_matches_galgebra(N, p, r, symbolic, seed):
    rng = random.Random(seed * 7 + symbolic)
    B = coordinate_basis(N)
    ca, cb = rand_components(rng, N, p, symbolic), rand_components(rng, N, r, symbolic)
    alpha, beta = Form.from_components(B, p, ca), Form.from_components(B, r, cb)
    w = alpha ^ beta
    assert w.degree == p + r
    expected = ga_coefficients(ga_from_dict(N, ca) ^ ga_from_dict(N, cb), N, p + r)
    assert_same_components(w, expected, N)
    assert_same_components(wedge(alpha, beta), expected, N)
    # graded commutativity, also against galgebra
    expected_ba = ga_coefficients(ga_from_dict(N, cb) ^ ga_from_dict(N, ca), N, p + r)
    assert_same_components(beta.wedge(alpha), expected_ba, N)


@pytest.mark.parametrize("N,p,r,symbolic,seed", GA_CASES[::3])
def test_triple_wedge_matches_galgebra(N, p, r, symbolic, seed):
    rng = random.Random(100 + seed)
    B = coordinate_basis(N)
    cs = [rand_components(rng, N, k, symbolic) for k in (1, 1, min(2, N - 2))]
    forms = [Form.from_components(B, len(next(iter(c))), c) for c in cs]
    w = wedge(*forms)
    expected = ga_coefficients(reduce(lambda x, y: x ^ y, [ga_from_dict(N, c) for c in cs]), N, w.degree)
    assert_same_components(w, expected, N)


@pytest.mark.parametrize("N,p,r,symbolic,seed", GA_CASES)
def test_interior_matches_galgebra_left_contraction(N, p, r, symbolic, seed):
    rng = random.Random(1000 + seed * 3 + symbolic)
    B = coordinate_basis(N)
    k = max(p, r)
    comps = rand_components(rng, N, k, symbolic)
    omega = Form.from_components(B, k, comps)
    X = [rand_coeff(rng, symbolic) if rng.random() < 0.7 else 0 for _ in range(N)]
    ga, e = ga_algebra(N)
    Xmv = sum((x * e[a] for a, x in enumerate(X)), ga.mv(0, "scalar"))
    expected = ga_coefficients(Xmv < ga_from_dict(N, comps), N, k - 1)
    i_X = omega.interior(X)
    assert i_X.degree == k - 1
    assert_same_components(i_X, expected, N)
    assert_same_components(interior_product(X, omega), expected, N)


@pytest.mark.parametrize("N", [3, 5, 8])
def test_to_galgebra_matches_independent_build(N):
    rng = random.Random(N)
    B = coordinate_basis(N)
    ga, e = ga_algebra(N)
    for k in (1, 2, 3):
        comps = rand_components(rng, N, k, True)
        ga2, mv = Form.from_components(B, k, comps).to_galgebra(ga)
        assert ga2 is ga
        diff = ga_coefficients(mv - ga_from_dict(N, comps), N, k)
        assert all(sp.expand(c) == 0 for c in diff.values())
    # without a given algebra: compare coefficient lists of the grade-2 part
    comps = rand_components(rng, N, 2, False)
    ga3, mv = Form.from_components(B, 2, comps).to_galgebra()
    keys = list(itertools.combinations(range(N), 2))
    e3 = ga3.mv()
    got = mv.blade_coefs([e3[i] ^ e3[j] for i, j in keys])
    exp = ga_coefficients(ga_from_dict(N, comps), N, 2)
    assert [sp.sympify(g) for g in got] == [sp.sympify(exp[I]) for I in keys]


def _dot(alpha_comps, X):
    return sp.Add(*[c * X[I[0]] for I, c in alpha_comps.items()])


@pytest.mark.parametrize("N", [3, 5])
def test_evaluation_convention(N):
    """(α∧β)(X,Y) = α(X)β(Y) − α(Y)β(X) (no ½), (α∧β∧γ)(X,Y,Z) = det[α,β,γ](X,Y,Z);
    i_X = galgebra's left contraction X < ω with the Euclidean metric (so ω(X,Y) = Y < (X < ω))."""
    rng = random.Random(50 + N)
    B = coordinate_basis(N)
    ga, e = ga_algebra(N)
    c = [sorted_dict(rand_components(rng, N, 1, True, density=0.8)) for _ in range(3)]
    al, be, gm = [Form.from_components(B, 1, ci) for ci in c]
    X, Y, Z = [[rand_coeff(rng, False) for _ in range(N)] for _ in range(3)]
    aX, aY, bX, bY = _dot(c[0], X), _dot(c[0], Y), _dot(c[1], X), _dot(c[1], Y)
    hand2 = aX * bY - aY * bX
    assert sp.expand((al ^ be)(X, Y) - hand2) == 0
    assert sp.expand(al(X) - aX) == 0
    # galgebra: Y < (X < (α∧β)) is the same scalar
    mv = lambda comps: ga_from_dict(N, comps)  # noqa: E731
    vec = lambda V: sum((v * e[a] for a, v in enumerate(V)), ga.mv(0, "scalar"))  # noqa: E731
    ga_val = (vec(Y) < (vec(X) < (mv(c[0]) ^ mv(c[1])))).scalar()
    assert sp.expand(ga_val - hand2) == 0
    hand3 = sp.Matrix(3, 3, lambda i, j: _dot(c[i], [X, Y, Z][j])).det()
    assert sp.expand(wedge(al, be, gm)(X, Y, Z) - hand3) == 0
    assert sp.expand((gm ^ al ^ be)(X, Y, Z) - hand3) == 0  # cyclic permutation: even


@pytest.mark.parametrize("N,seed", [(4, 0), (4, 1), (5, 2), (6, 3), (8, 4)])
def test_omega_wedge_omega(N, seed):
    rng = random.Random(200 + seed)
    B = coordinate_basis(N)
    comps = sorted_dict(rand_components(rng, N, 2, seed % 2 == 1, density=0.7))
    omega = Form.from_components(B, 2, comps)
    ww = omega ^ omega
    assert_same_components(ww, ga_coefficients(ga_from_dict(N, comps) ^ ga_from_dict(N, comps), N, 4), N)
    W = lambda a, b: comps.get((a, b), 0) if a < b else -comps.get((b, a), 0)  # noqa: E731
    if N == 4:  # ω∧ω = 2 Pf(W) e^0123
        pf = W(0, 1) * W(2, 3) - W(0, 2) * W(1, 3) + W(0, 3) * W(1, 2)
        assert sp.expand(ww[(0, 1, 2, 3)] - 2 * pf) == 0
    # a 1-form wedged with itself vanishes
    one = Form.from_components(B, 1, rand_components(rng, N, 1, True))
    assert (one ^ one).is_zero()


@pytest.mark.parametrize("N,symbolic", [(3, False), (5, True), (8, True)])
def test_two_form_matrix(N, symbolic):
    rng = random.Random(300 + N)
    B = coordinate_basis(N)
    comps = sorted_dict(rand_components(rng, N, 2, symbolic, density=0.6))
    omega = Form.from_components(B, 2, comps)
    W = omega.as_matrix()
    Whand = sp.zeros(N, N)
    for (a, b), c in comps.items():
        Whand[a, b], Whand[b, a] = c, -c
    assert (W - Whand).applyfunc(sp.expand) == sp.zeros(N, N)
    assert (W + W.T).applyfunc(sp.expand) == sp.zeros(N, N)
    # ω(E_a, E_b) = W_ab
    for a, b in [(0, 1), (1, 0), (N - 1, 0), (2, 2)]:
        Ea = [int(i == a) for i in range(N)]
        Eb = [int(i == b) for i in range(N)]
        assert sp.expand(omega(Ea, Eb) - Whand[a, b]) == 0
    # i_X ω = Wᵀ X, against galgebra
    ga, e = ga_algebra(N)
    X = [rand_coeff(rng, symbolic) for _ in range(N)]
    Xmv = sum((x * e[a] for a, x in enumerate(X)), ga.mv(0, "scalar"))
    exp = ga_coefficients(Xmv < ga_from_dict(N, comps), N, 1)
    WtX = Whand.T * sp.Matrix(X)
    for a in range(N):
        assert sp.expand(WtX[a] - exp[(a,)]) == 0
        assert sp.expand(omega.interior(X)[(a,)] - exp[(a,)]) == 0
    # round trip through from_matrix
    assert_same_components(Form.from_matrix(B, Whand), comps, N)
    one = Form.one_form(B, X)
    assert (one.as_vector() - sp.Matrix(X)).applyfunc(sp.expand) == sp.zeros(N, 1)


def test_linear_operations():
    B = coordinate_basis(3)
    a, b = SYMS[:2]
    w1 = Form.from_components(B, 2, {(0, 1): a, (1, 2): 1})
    w2 = Form.from_components(B, 2, {(0, 1): -a, (0, 2): b})
    s = w1 + w2
    assert dict(s.components) == {(1, 2): 1, (0, 2): b}
    assert dict((w1 - w1).components) == {}
    assert dict((b * w1).components) == {(0, 1): a * b, (1, 2): b}
    assert dict((w1 * 2).components) == {(0, 1): 2 * a, (1, 2): 2}
    assert dict((-w2).components) == {(0, 1): a, (0, 2): -b}
    with pytest.raises(TypeError):
        w1 * w2


# --------------------------------------------------------------------------------------
# exterior derivative
# --------------------------------------------------------------------------------------
def rand_entry(rng, q, trig=True):
    kinds = ["lin", "quad", "sin", "cos"] if trig else ["lin", "quad", "const"]
    c = rng.choice([-2, -1, 1, 2, sp.Rational(1, 2), 3])
    a, b = rng.choice(q), rng.choice(q)
    return {"lin": c * a, "quad": c * a * b, "const": c, "sin": c * sp.sin(a), "cos": c * sp.cos(a) * b}[
        rng.choice(kinds)]


def rand_frame_matrix(rng, q, trig=True, mix=True):
    n = len(q)
    X = sp.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            X[i, j] = rand_entry(rng, q, trig) + (rand_entry(rng, q, trig) if rng.random() < 0.3 else 0)
    if mix:
        while True:
            M = sp.Matrix(n, n, lambda i, j: rng.randint(-1, 1))
            if M.det() != 0:
                break
        X = M * X
    return X


# (seed, n, trig, mix)
Q_CASES = [(1, 3, True, True), (2, 4, False, False), (3, 3, True, False)]
TQ_CASES = [(4, 2, True, False), (5, 3, True, False)]


@functools.lru_cache(maxsize=None)
def q_frame(case):
    seed, n, trig, mix = case
    rng = random.Random(700 + seed)
    q = sp.symbols(f"q0:{n}", real=True)
    X = rand_frame_matrix(rng, q, trig, mix)
    return q, X, Frame(Chart(q), X)


@functools.lru_cache(maxsize=None)
def tq_bundle(case):
    q, X, F = q_frame(case)
    return q, X, F, TangentBundle(F)


def lam(symbols, exprs):
    return sp.lambdify(list(symbols), exprs, "numpy")


def rand_points(symbols, count, seed):
    rng = random.Random(seed)
    return [{s: rng.uniform(-1.2, 1.2) for s in symbols} for _ in range(count)]


def independent_R(q, X, pt):
    """R[k, i, j] at pt from coordinate brackets and a numpy inverse (no anholo)."""
    n = len(q)
    br = [[[sp.Add(*[X[i, B] * sp.diff(X[j, A], q[B]) - X[j, B] * sp.diff(X[i, A], q[B]) for B in range(n)])
            for A in range(n)] for j in range(n)] for i in range(n)]
    vals = [pt[s] for s in q]
    Xn = np.array(lam(q, X.tolist())(*vals), dtype=float)
    brn = np.array(lam(q, br)(*vals), dtype=float)
    return np.einsum("kA,ijA->kij", np.linalg.inv(Xn.T), brn)


def form_values(form, symbols, pt):
    """{key: float} of the components at pt."""
    keys = list(form.components)
    if not keys:
        return {}
    vals = lam(symbols, [form.components[k] for k in keys])(*[pt[s] for s in symbols])
    return dict(zip(keys, np.array(vals, dtype=float).reshape(-1)))


def rand_Q_form(rng, q, n, k):
    comps = {}
    for I in itertools.combinations(range(n), k):
        if rng.random() < 0.6 or not comps:
            comps[I] = rand_entry(rng, q) * (rand_entry(rng, q) if rng.random() < 0.3 else 1)
    return comps


def rand_TQ_coeff(rng, q, v):
    return rand_entry(rng, q) * rng.choice(v) + rand_entry(rng, q) * rng.choice(v) * rng.choice(v) + rng.choice(
        [0, rand_entry(rng, q)])


@pytest.mark.parametrize("case", Q_CASES)
@pytest.mark.parametrize("k", [0, 1, 2])
def test_dd_zero_on_Q(case, k):
    q, X, F = q_frame(case)
    n = len(q)
    rng = random.Random(10 * k + case[0])
    omega = Form.from_components(F, k, rand_Q_form(rng, q, n, k))
    d1 = omega.d()
    dd = exterior_derivative(d1)
    assert dd.degree == k + 2
    pts = rand_points(q, 3, 11)
    assert any(abs(v) > 1e-6 for pt in pts for v in form_values(d1, q, pt).values()), "trivial test"
    for pt in pts:
        assert all(abs(v) < 1e-9 for v in form_values(dd, q, pt).values())


@pytest.mark.parametrize("case", TQ_CASES)
@pytest.mark.parametrize("k", [0, 1, 2])
def test_dd_zero_on_TQ(case, k):
    q, X, F, TQ = tq_bundle(case)
    n = len(q)
    v = TQ.quasi_velocities
    rng = random.Random(20 * k + case[0])
    N = TQ.basis_size
    keys = list(itertools.combinations(range(N), k))
    comps = {I: rand_TQ_coeff(rng, q, v) for I in rng.sample(keys, min(len(keys), 3))}
    omega = Form.from_components(TQ, k, comps)
    d1 = omega.d()
    dd = d1.d()
    syms = list(q) + list(v)
    pts = rand_points(syms, 3, 21)
    assert any(abs(x) > 1e-6 for pt in pts for x in form_values(d1, syms, pt).values()), "trivial test"
    for pt in pts:
        assert all(abs(x) < 1e-8 for x in form_values(dd, syms, pt).values())


@pytest.mark.parametrize("case", TQ_CASES)
def test_df_on_TQ(case):
    """df = X_j^C(f) θ^j + X_j^V(f) ψ^j; independently: df = f_q dq + f_v dv with
    dq^A = X_j^A θ^j and dv^i = ψ^i − R^i_jk v^k θ^j."""
    q, X, F, TQ = tq_bundle(case)
    n = len(q)
    v = TQ.quasi_velocities
    rng = random.Random(30 + case[0])
    f = rand_TQ_coeff(rng, q, v) + rand_TQ_coeff(rng, q, v)
    df = Form.function(TQ, f).d()
    syms = list(q) + list(v)
    fq = lam(syms, [sp.diff(f, s) for s in q])
    fv = lam(syms, [sp.diff(f, s) for s in v])
    Xl = lam(q, X.tolist())
    for pt in rand_points(syms, 3, 31):
        vals = [pt[s] for s in syms]
        R = independent_R(q, X, pt)
        Xn = np.array(Xl(*[pt[s] for s in q]), dtype=float)
        vv = np.array([pt[s] for s in v])
        dfq, dfv = np.array(fq(*vals), dtype=float), np.array(fv(*vals), dtype=float)
        theta_part = Xn @ dfq - np.einsum("i,ijk,k->j", dfv, R, vv)
        lib = form_values(df, syms, pt)
        got = np.array([lib.get((a,), 0.0) for a in range(2 * n)])
        assert np.allclose(got, np.concatenate([theta_part, dfv]), atol=1e-9)
        # and the complete/vertical lifts of the frame vectors give the same coefficients
        assert np.allclose([float(lam(syms, TQ.complete_lift(j)(f))(*vals)) for j in range(n)], theta_part,
                           atol=1e-9)


@pytest.mark.parametrize("case", Q_CASES)
def test_d_theta(case):
    """dθ^k(X_i, X_j) = −R^k_ij (R independent); and dθ^k computed in coordinates
    ((dθ^k)_AB = ∂_A θ^k_B − ∂_B θ^k_A, θ from sympy's own inverse) agrees."""
    q, X, F = q_frame(case)
    n = len(q)
    theta = X.T.inv()  # independent symbolic coframe
    dtheta = [sp.Matrix(n, n, lambda A, B: sp.diff(theta[k, B], q[A]) - sp.diff(theta[k, A], q[B]))
              for k in range(n)]
    dth_l = lam(q, [m.tolist() for m in dtheta])
    Xl = lam(q, X.tolist())
    forms = [Form.basis_one_form(F, k).d() for k in range(n)]
    for pt in rand_points(q, 3, 41):
        R = independent_R(q, X, pt)
        Xn = np.array(Xl(*[pt[s] for s in q]), dtype=float)
        coord = np.einsum("iA,kAB,jB->kij", Xn, np.array(dth_l(*[pt[s] for s in q]), dtype=float), Xn)
        assert np.allclose(coord, -R, atol=1e-9)
        for k in range(n):
            vals = form_values(forms[k], q, pt)
            lib = np.zeros((n, n))
            for (i, j), c in vals.items():
                lib[i, j], lib[j, i] = c, -c
            assert np.allclose(lib, -R[k], atol=1e-9)
    # evaluation on VectorField arguments goes through the coframe
    i, j = 0, n - 1
    for k in range(n):
        val = forms[k](F.vector(i), F.vector(j))
        for pt in rand_points(q, 2, 42):
            R = independent_R(q, X, pt)
            assert abs(float(lam(q, val)(*[pt[s] for s in q])) + R[k, i, j]) < 1e-9


@pytest.mark.parametrize("case", Q_CASES)
def test_d_one_form_against_coordinates(case):
    """α = a_i θ^i; α_A = a_i θ^i_A; (dα)_AB = ∂_A α_B − ∂_B α_A vs dα(∂_A, ∂_B)."""
    q, X, F = q_frame(case)
    n = len(q)
    rng = random.Random(50 + case[0])
    a = [rand_entry(rng, q) * (rand_entry(rng, q) if rng.random() < 0.5 else 1) for _ in range(n)]
    theta = X.T.inv()
    alpha_coord = [sp.Add(*[a[i] * theta[i, A] for i in range(n)]) for A in range(n)]
    d_coord = [[sp.diff(alpha_coord[B], q[A]) - sp.diff(alpha_coord[A], q[B]) for B in range(n)] for A in range(n)]
    dl = lam(q, d_coord)
    th_l = lam(q, theta.tolist())
    dalpha = Form.one_form(F, a).d()
    pts = rand_points(q, 3, 51)
    for pt in pts:
        vals = [pt[s] for s in q]
        hand = np.array(dl(*vals), dtype=float)
        W = np.zeros((n, n))
        for (i, j), c in form_values(dalpha, q, pt).items():
            W[i, j], W[j, i] = c, -c
        th = np.array(th_l(*vals), dtype=float)  # ∂_A = θ^i_A X_i
        assert np.allclose(th.T @ W @ th, hand, atol=1e-9)
    # the same through VectorField arguments ∂_A, ∂_B
    for A, B in [(0, 1), (n - 1, 0)]:
        val = dalpha(F.chart.coordinate_field(A), F.chart.coordinate_field(B))
        for pt in pts[:2]:
            vals = [pt[s] for s in q]
            assert abs(float(lam(q, val)(*vals)) - float(dl(*vals)[A][B])) < 1e-9


@pytest.mark.parametrize("case", TQ_CASES)
def test_d_one_form_on_TQ_against_coordinates(case):
    """α = a_j θ^j + b_j ψ^j on TQ; in the coordinates (q, v):
    α = (a_j + b_i R^i_jk v^k) θ^j_A dq^A + b_i dv^i; compare dα with the coordinate
    exterior derivative, contracting with the frame components of ∂/∂q^A, ∂/∂v^i:
    ∂/∂q^A = θ^j_A (X_j^C + R^k_jl v^l X_k^V), ∂/∂v^i = X_i^V.
    This checks the lifted structure functions, including Ṙ."""
    q, X, F, TQ = tq_bundle(case)
    n = len(q)
    v = TQ.quasi_velocities
    syms = list(q) + list(v)
    rng = random.Random(60 + case[0])
    a = [rand_TQ_coeff(rng, q, v) for _ in range(n)]
    b = [rand_TQ_coeff(rng, q, v) for _ in range(n)]
    theta = X.T.inv()
    # independent symbolic R (sympy inverse + coordinate brackets)
    br = [[[sp.Add(*[X[i, B] * sp.diff(X[j, A], q[B]) - X[j, B] * sp.diff(X[i, A], q[B]) for B in range(n)])
            for A in range(n)] for j in range(n)] for i in range(n)]
    R = [[[sp.Add(*[theta[k, A] * br[i][j][A] for A in range(n)]) for j in range(n)] for i in range(n)]
         for k in range(n)]
    coef_theta = [a[j] + sp.Add(*[b[i] * R[i][j][k] * v[k] for i in range(n) for k in range(n)]) for j in range(n)]
    alpha = [sp.Add(*[coef_theta[j] * theta[j, A] for j in range(n)]) for A in range(n)] + list(b)
    d_coord = [[sp.diff(alpha[y], syms[x]) - sp.diff(alpha[x], syms[y]) for y in range(2 * n)] for x in range(2 * n)]
    dl = lam(syms, d_coord)
    th_l = lam(q, theta.tolist())
    R_l = lam(q, R)
    dalpha = Form.one_form(TQ, list(a) + list(b)).d()
    for pt in rand_points(syms, 3, 61):
        vals = [pt[s] for s in syms]
        th = np.array(th_l(*[pt[s] for s in q]), dtype=float)
        Rn = np.array(R_l(*[pt[s] for s in q]), dtype=float)
        vv = np.array([pt[s] for s in v])
        E = np.zeros((2 * n, 2 * n))  # row x: lifted-frame components of the coordinate field ∂/∂x
        E[:n, :n] = th.T
        E[:n, n:] = th.T @ np.einsum("kjl,l->jk", Rn, vv)
        E[n:, n:] = np.eye(n)
        W = np.zeros((2 * n, 2 * n))
        for (i, j), c in form_values(dalpha, syms, pt).items():
            W[i, j], W[j, i] = c, -c
        assert np.allclose(E @ W @ E.T, np.array(dl(*vals), dtype=float), atol=1e-8)


def test_d_function_on_Q_and_polar_example():
    r, th = sp.symbols("r theta", positive=True)
    F = Frame(Chart([r, th]), [[1, 0], [0, 1 / r]])
    f = r**2 * sp.sin(th)
    df = Form.function(F, f).d()
    # df = f_r dr + f_θ dθ = f_r θ^1 + (f_θ / r) θ^2
    assert sp.simplify(df[(0,)] - sp.diff(f, r)) == 0
    assert sp.simplify(df[(1,)] - sp.diff(f, th) / r) == 0
    # θ^2 = r dθ: dθ^2 = dr ∧ dθ = (1/r) θ^1 ∧ θ^2
    assert sp.simplify(Form.basis_one_form(F, 1).d()[(0, 1)] - 1 / r) == 0


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------
def test_form_errors():
    B = coordinate_basis(3)
    one = Form.basis_one_form(B, 0)
    two = Form.from_components(B, 2, {(0, 1): 1})
    with pytest.raises(DimensionError) as exc:
        one + two
    assert str(exc.value).strip()
    with pytest.raises(DimensionError):
        one - two
    with pytest.raises(DimensionError):
        Form.from_components(B, 2, {(0, 3): 1})
    with pytest.raises(DimensionError):
        Form.from_components(B, 2, {(-1, 0): 1})
    with pytest.raises(DimensionError):
        Form.from_components(B, 2, {(0,): 1})
    with pytest.raises(DimensionError):
        Form.one_form(B, [1, 2])
    with pytest.raises(DimensionError):
        Form.basis_one_form(B, 3)
    with pytest.raises(DimensionError):
        Form.from_matrix(B, sp.zeros(2, 2))
    with pytest.raises(DimensionError):
        two.interior([1, 2])
    with pytest.raises(DimensionError):
        two([1, 0, 0])
    with pytest.raises(DimensionError):
        one.as_matrix()
    with pytest.raises(DimensionError):
        two.as_vector()
    with pytest.raises(DimensionError):
        wedge()
    other = Form.basis_one_form(coordinate_basis(4), 0)
    with pytest.raises(DimensionError):
        one + other
    with pytest.raises(DimensionError):
        one ^ other


def test_vector_field_on_Q_into_form_on_TQ():
    """A VectorField on Q is not a vector on TQ: DimensionError (not AttributeError); its lifts work."""
    q, X, F, TQ = tq_bundle(TQ_CASES[0])
    theta0 = Form.basis_one_form(TQ, 0)
    with pytest.raises(DimensionError) as exc:
        theta0.interior(F.vector(0))
    assert "lift" in str(exc.value)
    # θ^i(X_j^C) = δ^i_j, ψ^i(X_j^C) = 0, ψ^i(X_j^V) = δ^i_j
    n = len(q)
    for i in range(TQ.basis_size):
        e = Form.basis_one_form(TQ, i)
        for j in range(n):
            assert sp.simplify(e(TQ.complete_lift(j)) - (1 if i == j else 0)) == 0
            assert sp.simplify(e(TQ.vertical_lift(j)) - (1 if i == n + j else 0)) == 0


def test_galgebra_import_leaves_sympy_printing_alone():
    """galgebra 0.6 replaces sympy's __repr__ on import; anholo's importer undoes it."""
    x = sp.Symbol("x")
    A = sp.Function("A")
    assert repr(A(x)) == "A(x)" and repr(sp.Matrix([[A(x)]])) == "Matrix([[A(x)]])"

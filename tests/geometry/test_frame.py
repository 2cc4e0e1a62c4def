"""Tests of anholo.geometry.frame (THEORY §1).

Every expected value is computed independently in this file: structure
functions from ``R^k_ij = θ^k_A (X_i(X_j^A) − X_j(X_i^A))`` with plain sympy
derivatives and a numpy matrix inverse for the coframe, Lie brackets by hand in
coordinates, hand-derived results (polar frame, rigid body).  Comparisons are
numerical at seeded random points, or ``simplify(a - b) == 0`` when cheap.
"""

from __future__ import annotations

import functools
import itertools
import random

import numpy as np
import pytest
import sympy as sp

import anholo
from anholo import Chart, DimensionError, Frame, SingularFrameError, VectorField

TOL = 1e-9


# --------------------------------------------------------------------------------------
# independent helpers (plain sympy / numpy, no anholo)
# --------------------------------------------------------------------------------------
def rand_entry(rng, q, trig=True):
    """A random function of q: one or two terms, polynomial and possibly sin/cos."""
    kinds = ["lin", "quad", "sin", "cos"] if trig else ["lin", "quad", "const"]
    terms = []
    for _ in range(rng.randint(1, 2)):
        c = rng.choice([-2, -1, 1, 2, sp.Rational(1, 2), 3])
        a, b = rng.choice(q), rng.choice(q)
        kind = rng.choice(kinds)
        terms.append(
            {"lin": c * a, "quad": c * a * b, "const": c, "sin": c * sp.sin(a), "cos": c * sp.cos(a) * b}[kind]
        )
    return sp.Add(*terms)


def rand_frame_matrix(rng, q, trig=True, diag=False, mix=True):
    """Rows X_i = rows of (I + U(q)) (optionally with a nowhere-vanishing diagonal),
    possibly multiplied (left or right) by a random invertible integer matrix.
    The determinant never vanishes."""
    n = len(q)
    X = sp.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < 0.8:
                X[i, j] = rand_entry(rng, q, trig)
        if diag:
            X[i, i] = 2 + sp.sin(rng.choice(q)) if trig else 1 + rng.choice(q) ** 2
    if mix:
        while True:
            M = sp.Matrix(n, n, lambda i, j: rng.randint(-2, 2))
            if M.det() != 0:
                break
        X = X * M if rng.random() < 0.5 else M * X
    return X


def rand_points(symbols, count, seed, low=-1.2, high=1.2):
    rng = random.Random(seed)
    pts = []
    for _ in range(count):
        pts.append({s: sp.Float(rng.uniform(0.4, 1.4) if s.is_positive else rng.uniform(low, high), 20)
                    for s in symbols})
    return pts


def num(expr, pt) -> complex:
    return complex(sp.sympify(expr).xreplace(pt).evalf(20))


def num_matrix(M, pt) -> np.ndarray:
    M = sp.Matrix(M)
    return np.array([[num(M[i, j], pt) for j in range(M.cols)] for i in range(M.rows)])


def coordinate_bracket(q, Xi, Xj):
    """[X, Y]^A = X^B ∂_B Y^A − Y^B ∂_B X^A, by hand."""
    n = len(q)
    return [sp.Add(*[Xi[B] * sp.diff(Xj[A], q[B]) - Xj[B] * sp.diff(Xi[A], q[B]) for B in range(n)])
            for A in range(n)]


_R_CACHE: dict = {}


def _independent_R_functions(q, X):
    """Lambdified X(q) and the coordinate brackets [X_i, X_j]^A (plain sympy derivatives)."""
    key = (tuple(q), sp.ImmutableMatrix(X))
    if key not in _R_CACHE:
        n = len(q)
        X = sp.Matrix(X)
        brackets = [[coordinate_bracket(q, X.row(i), X.row(j)) for j in range(n)] for i in range(n)]
        _R_CACHE[key] = (sp.lambdify(q, X.tolist(), "numpy"), sp.lambdify(q, brackets, "numpy"))
    return _R_CACHE[key]


def values_at(q, pt):
    return [float(pt[s]) for s in q]


def independent_R(q, X, pt) -> np.ndarray:
    """Numerical R[k, i, j] at pt: θ^k_A (X_i(X_j^A) − X_j(X_i^A)) with θ = (X^T)^{-1} by numpy."""
    fX, fbr = _independent_R_functions(q, X)
    vals = values_at(q, pt)
    Xn = np.array(fX(*vals), dtype=float)
    br = np.array(fbr(*vals), dtype=float)  # br[i, j, A]
    theta = np.linalg.inv(Xn.T)
    return np.einsum("kA,ijA->kij", theta, br)


def library_R(frame, pt) -> np.ndarray:
    f = sp.lambdify(frame.chart.coordinates, [[list(row) for row in mat] for mat in frame.structure], "numpy")
    return np.array(f(*values_at(frame.chart.coordinates, pt)), dtype=float)


# --------------------------------------------------------------------------------------
# random frames (seed, n, trig, diag, mix), chosen to build quickly
# --------------------------------------------------------------------------------------
FRAME_CASES = [
    (1, 3, True, False, True),
    (2, 3, True, False, True),
    (3, 3, True, False, True),
    (4, 3, True, True, False),
    (5, 4, False, False, True),
    (6, 4, True, False, False),
    (7, 3, False, True, True),
]


@functools.lru_cache(maxsize=None)
def random_frame(case):
    seed, n, trig, diag, mix = case
    rng = random.Random(1000 + seed)
    q = sp.symbols(f"q0:{n}", real=True)
    X = rand_frame_matrix(rng, q, trig=trig, diag=diag, mix=mix)
    return q, X, Frame(Chart(q), X)


def case_id(case):
    seed, n, trig, diag, mix = case
    return f"s{seed}-R{n}" + ("-trig" if trig else "-poly") + ("-diag" if diag else "") + ("-mix" if mix else "")


@pytest.fixture(params=FRAME_CASES, ids=case_id)
def rframe(request):
    return random_frame(request.param)


# --------------------------------------------------------------------------------------
# coframe, structure functions, brackets
# --------------------------------------------------------------------------------------
def test_random_frames_are_really_anholonomic(rframe):
    """Sanity of the generator: at least one bracket [X_i, X_j] is nonzero somewhere."""
    q, X, _ = rframe
    pts = rand_points(q, 2, 5)
    assert any(np.abs(independent_R(q, X, p)).max() > 1e-6 for p in pts)


def test_vectors_are_the_given_rows(rframe):
    q, X, F = rframe
    for i in range(len(q)):
        Xi = F.vector(i)
        assert isinstance(Xi, VectorField)
        for A in range(len(q)):
            assert sp.simplify(Xi.components[A] - X[i, A]) == 0


def test_coframe_is_dual(rframe):
    q, X, F = rframe
    n = len(q)
    for pt in rand_points(q, 3, 11):
        th = num_matrix(F.coframe, pt)
        Xn = num_matrix(X, pt)
        assert np.allclose(th @ Xn.T, np.eye(n), atol=TOL)
        # and it is the unique dual: compare with an independent numerical inverse
        assert np.allclose(th, np.linalg.inv(Xn.T), atol=TOL)
        for i in range(n):
            assert np.allclose([num(c, pt) for c in F.covector(i)], th[i], atol=TOL)


def test_structure_functions_match_independent_formula(rframe):
    q, X, F = rframe
    for pt in rand_points(q, 3, 12):
        assert np.allclose(library_R(F, pt), independent_R(q, X, pt), atol=1e-8)


def test_structure_functions_skew(rframe):
    q, X, F = rframe
    n = len(q)
    for k in range(n):
        for i in range(n):
            assert F.structure_function(k, i, i) == 0
            for j in range(n):
                assert sp.expand(F.structure_function(k, i, j) + F.structure_function(k, j, i)) == 0


def test_bracket_reproduces_coordinate_lie_bracket(rframe):
    """Σ_k bracket(i,j)[k] X_k^A equals the hand-computed [X_i, X_j]^A."""
    q, X, F = rframe
    n = len(q)
    pts = rand_points(q, 2, 13)
    for i in range(n):
        for j in range(n):
            hand = coordinate_bracket(q, X.row(i), X.row(j))
            comps = F.bracket(i, j)
            assert len(comps) == n
            for pt in pts:
                Xn = num_matrix(X, pt)
                lib = np.array([num(c, pt) for c in comps]) @ Xn
                assert np.allclose(lib, [num(h, pt) for h in hand], atol=1e-8)


def test_vectorfield_bracket_is_coordinate_bracket(rframe):
    q, X, F = rframe
    n = len(q)
    pts = rand_points(q, 2, 14)
    for i, j in [(0, 1), (1, n - 1), (n - 1, 0)]:
        lib = F.vector(i).bracket(F.vector(j)).components
        hand = coordinate_bracket(q, X.row(i), X.row(j))
        for pt in pts:
            assert np.allclose([num(c, pt) for c in lib], [num(h, pt) for h in hand], atol=1e-9)


def test_components_of_and_field_round_trip(rframe):
    q, X, F = rframe
    n = len(q)
    rng = random.Random(15)
    Y = VectorField(F.chart, [rand_entry(rng, q) for _ in range(n)])
    comps = F.components_of(Y)
    back = F.field(comps)
    for pt in rand_points(q, 2, 16):
        # independent: Y^i = θ^i_A Y^A with a numpy inverse
        expected = np.linalg.inv(num_matrix(X, pt).T) @ np.array([num(c, pt) for c in Y.components])
        assert np.allclose([num(c, pt) for c in comps], expected, atol=1e-9)
        assert np.allclose([num(c, pt) for c in back.components], [num(c, pt) for c in Y.components], atol=1e-9)


def test_apply_is_directional_derivative(rframe):
    q, X, F = rframe
    n = len(q)
    w = sp.Symbol("w", real=True)  # a non-coordinate symbol is held fixed
    f = q[0] ** 2 * sp.sin(q[n - 1]) + w * q[1] * q[0] + sp.cos(q[1])
    for i in range(n):
        hand = sp.Add(*[X[i, A] * sp.diff(f, q[A]) for A in range(n)])
        assert sp.expand(F.apply(i, f) - hand) == 0


# --------------------------------------------------------------------------------------
# holonomic frames
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_coordinate_frame_has_zero_structure(n):
    q = sp.symbols(f"x0:{n}", real=True)
    F = Frame.coordinate(Chart(q))
    assert F.vectors == sp.eye(n)
    assert F.coframe == sp.eye(n)
    assert all(F.structure_function(k, i, j) == 0 for k in range(n) for i in range(n) for j in range(n))
    assert F.is_holonomic
    assert F.nonzero_structure() == {}


def test_coordinate_frame_of_another_chart_is_holonomic():
    """∂/∂s = ∂x + 2x∂y, ∂/∂t = ∂y for (s, t) = (x, y − x²): holonomic but not the given chart's."""
    x, y = sp.symbols("x y", real=True)
    F = Frame(Chart([x, y]), [[1, 2 * x], [0, 1]])
    assert coordinate_bracket((x, y), (1, 2 * x), (0, 1)) == [0, 0]
    assert F.is_holonomic
    # a non-holonomic variation is detected
    G = Frame(Chart([x, y]), [[1, 2 * y], [0, 1]])
    assert not G.is_holonomic


def test_constant_frame_is_holonomic():
    q = sp.symbols("q0:3", real=True)
    F = Frame(Chart(q), [[1, 2, 0], [0, 1, -1], [3, 0, 1]])
    assert F.is_holonomic


# --------------------------------------------------------------------------------------
# polar frame and rigid body
# --------------------------------------------------------------------------------------
def test_polar_frame():
    r, th = sp.symbols("r theta", positive=True)
    F = Frame(Chart([r, th]), [[1, 0], [0, 1 / r]])
    # by hand: [∂r, (1/r)∂θ] = −(1/r²)∂θ = −(1/r) X2
    hand = coordinate_bracket((r, th), (1, 0), (0, 1 / r))
    assert sp.simplify(hand[1] + 1 / r**2) == 0 and hand[0] == 0
    assert sp.simplify(F.structure_function(1, 0, 1) + 1 / r) == 0
    assert sp.simplify(F.structure_function(1, 1, 0) - 1 / r) == 0
    assert F.structure_function(0, 0, 1) == 0
    b = F.bracket(0, 1)
    assert b[0] == 0 and sp.simplify(b[1] + 1 / r) == 0
    # coframe θ1 = dr, θ2 = r dθ
    assert sp.simplify(F.coframe - sp.Matrix([[1, 0], [0, r]])) == sp.zeros(2, 2)
    assert not F.is_holonomic


@pytest.fixture(scope="module")
def rigid_body():
    ph, th, ps = sp.symbols("phi theta psi", real=True)
    # body angular velocities (ZXZ Euler angles) as one-forms in (dφ, dθ, dψ)
    rows = [
        [sp.sin(th) * sp.sin(ps), sp.cos(ps), 0],
        [sp.sin(th) * sp.cos(ps), -sp.sin(ps), 0],
        [sp.cos(th), 0, 1],
    ]
    return (ph, th, ps), sp.Matrix(rows), Frame.from_coframe(Chart([ph, th, ps]), rows)


def test_rigid_body_coframe_and_frame(rigid_body):
    q, Om, F = rigid_body
    assert F.coframe == Om  # the given coframe is kept
    for pt in rand_points(q, 3, 20, low=0.3, high=1.3):  # sin θ ≠ 0
        # the frame is the inverse transpose of the coframe, computed independently
        assert np.allclose(num_matrix(F.vectors, pt), np.linalg.inv(num_matrix(Om, pt)).T, atol=1e-9)


def test_rigid_body_structure_constants(rigid_body):
    """R^3_12 = R^1_23 = R^2_31 = 1 (and skew), all others 0 — by the hand formula
    dΩ^k(X_i, X_j) = −R^k_ij, with dΩ^k computed in coordinates and X = Ω^{-T}."""
    q, Om, F = rigid_body
    n = 3
    expected = np.zeros((3, 3, 3))
    for k, i, j in [(2, 0, 1), (0, 1, 2), (1, 2, 0)]:
        expected[k, i, j] = 1
        expected[k, j, i] = -1
    dOm = [sp.Matrix(n, n, lambda A, B: sp.diff(Om[k, B], q[A]) - sp.diff(Om[k, A], q[B])) for k in range(n)]
    for pt in rand_points(q, 3, 22, low=0.3, high=1.3):
        X = np.linalg.inv(num_matrix(Om, pt)).T
        hand = np.array([-(X @ num_matrix(dOm[k], pt) @ X.T) for k in range(n)])  # hand[k, i, j]
        assert np.allclose(hand, expected, atol=1e-9)
    # the library's R are the exact constants
    for k in range(n):
        for i in range(n):
            for j in range(n):
                assert F.structure_function(k, i, j) == int(expected[k, i, j])


def test_rigid_body_numeric_cross_check(rigid_body):
    q, Om, F = rigid_body
    pts = rand_points(q, 3, 21, low=0.3, high=1.3)  # sin θ ≠ 0
    for pt in pts:
        assert np.allclose(library_R(F, pt), independent_R(q, F.vectors, pt), atol=1e-9)


# --------------------------------------------------------------------------------------
# change of frame
# --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _change_case():
    q, X, F = random_frame((2, 3, True, False, True))
    q0, q1, q2 = q
    P = sp.Matrix([[1, q2, 0], [0, 1, 0], [sp.sin(q1), 0, 1]])  # det P = 1, depends on q
    return q, X, F, P, F.change(P)


def test_change_of_frame_vectors_and_coframe():
    q, X, F, P, G = _change_case()
    # X'_i = X_j P^j_i, by hand
    hand = sp.Matrix(3, 3, lambda i, A: sp.Add(*[X[j, A] * P[j, i] for j in range(3)]))
    for pt in rand_points(q, 3, 31):
        Xn = num_matrix(G.vectors, pt)
        assert np.allclose(Xn, num_matrix(hand, pt), atol=1e-9)
        assert np.allclose(num_matrix(G.coframe, pt) @ Xn.T, np.eye(3), atol=1e-9)


def test_change_of_frame_structure_is_recomputed_and_non_tensorial():
    q, X, F, P, G = _change_case()
    Xnew = (P.T * X)  # independent new vectors
    n = 3
    dP = [[[sp.diff(P[l, j], qa) for qa in q] for j in range(n)] for l in range(n)]
    nontensorial_seen = False
    for pt in rand_points(q, 3, 32):
        Rnew = independent_R(q, Xnew, pt)
        assert np.allclose(library_R(G, pt), Rnew, atol=1e-8)
        # tensorial transform of the old R
        R = independent_R(q, X, pt)
        Pn = num_matrix(P, pt)
        Pinv = np.linalg.inv(Pn)
        tensorial = np.einsum("kl,lmn,mi,nj->kij", Pinv, R, Pn, Pn)
        # plus the derivative terms: (P^-1)^k_l (X'_i(P^l_j) − X'_j(P^l_i))
        Xn_new = num_matrix(Xnew, pt)
        dPn = np.array([[[num(dP[l][j][A], pt) for A in range(n)] for j in range(n)] for l in range(n)])
        deriv = np.einsum("iA,ljA->lij", Xn_new, dPn)
        full = tensorial + np.einsum("kl,lij->kij", Pinv, deriv - deriv.transpose(0, 2, 1))
        assert np.allclose(Rnew, full, atol=1e-8)
        if np.abs(Rnew - tensorial).max() > 1e-4:
            nontensorial_seen = True
    assert nontensorial_seen, "P depends on q: R' must differ from the tensorially transformed R"


def test_change_of_frame_constant_P_is_tensorial():
    q, X, F = random_frame((1, 3, True, False, True))
    P = sp.Matrix([[1, 2, 0], [0, 1, 0], [-1, 0, 3]])
    G = F.change(P)
    for pt in rand_points(q, 2, 33):
        R = independent_R(q, X, pt)
        Pn = num_matrix(P, pt).real
        tensorial = np.einsum("kl,lmn,mi,nj->kij", np.linalg.inv(Pn), R, Pn, Pn)
        assert np.allclose(library_R(G, pt), tensorial, atol=1e-8)


def test_change_of_frame_rank_D():
    x, y = sp.symbols("x y", real=True)
    F = Frame(Chart([x, y]), [[1, y], [0, 1]])
    G = F.change([[1, 0], [x, 1]], rank_D=1)
    assert G.rank_D == 1
    # X'_1 = X_1 + x X_2 = ∂x + (x + y)∂y, X'_2 = ∂y; [X'_1, X'_2] = −∂y = −X'_2 (by hand)
    assert sp.expand(G.vectors[0, 1] - (x + y)) == 0
    assert coordinate_bracket((x, y), (1, x + y), (0, 1)) == [0, -1]
    assert G.structure_function(1, 0, 1) == -1 and G.structure_function(0, 0, 1) == 0
    assert G.is_D_integrable()


# --------------------------------------------------------------------------------------
# frames adapted to constraints
# --------------------------------------------------------------------------------------
def test_adapted_nonholonomic_particle():
    x, y, z = sp.symbols("x y z", real=True)
    F = Frame.adapted_to_constraints(Chart([x, y, z]), [[-y, 0, 1]])  # ω = dz − y dx
    expected = sp.Matrix([[1, 0, y], [0, 1, 0], [0, 0, 1]])
    assert sp.simplify(F.vectors - expected) == sp.zeros(3, 3)
    assert F.rank_D == 2
    assert not F.is_D_integrable()
    # [X1, X2] = [∂x + y∂z, ∂y] = −∂z = −X3, by hand
    assert coordinate_bracket((x, y, z), expected.row(0), expected.row(1)) == [0, 0, -1]
    assert sp.simplify(F.structure_function(2, 0, 1) + 1) == 0


def test_adapted_integrable():
    x, y, z = sp.symbols("x y z", real=True)
    F = Frame.adapted_to_constraints(Chart([x, y, z]), [[-y, -x, 1]])  # ω = d(z − xy)
    assert F.rank_D == 2
    assert F.is_D_integrable()
    for al in range(2):
        assert sp.simplify(-y * F.vectors[al, 0] - x * F.vectors[al, 1] + F.vectors[al, 2]) == 0


@pytest.mark.parametrize(
    "coeff_x",
    ["sec", "inv_cos", "one_plus_tan"],
)
def test_adapted_integrable_with_tan(coeff_x):
    """ω = d(z − y tan x) = dz − tan x dy − y sec²x dx, with sec²x written three ways.
    R^3_12 = X1(tan x) − X2(y sec²x) = sec²x − sec²x = 0 (zero only modulo sin² + cos² = 1)."""
    x, y, z = sp.symbols("x y z", real=True)
    sec2 = {"sec": sp.sec(x) ** 2, "inv_cos": 1 / sp.cos(x) ** 2, "one_plus_tan": 1 + sp.tan(x) ** 2}[coeff_x]
    F = Frame.adapted_to_constraints(Chart([x, y, z]), [[-y * sec2, -sp.tan(x), 1]])
    # D regular where it is: tan x ∂z is not left in a D vector (X2 = cos x ∂y + sin x ∂z)
    assert all(not e.has(sp.tan, sp.sec) and sp.fraction(sp.cancel(e))[1] == 1 for e in F.vectors[:2, :])
    for pt in rand_points((x, y, z), 2, 97):  # independent: R^3_12 vanishes numerically, R matches
        R = independent_R((x, y, z), F.vectors, pt)
        assert abs(R[2, 0, 1]) < 1e-9
        assert np.abs(R - library_R(F, pt)).max() < 1e-9
    assert F.is_D_integrable()
    # a non-integrable relative: dz − tan x dy
    G = Frame.adapted_to_constraints(Chart([x, y, z]), [[0, -sp.tan(x), 1]])
    assert not G.is_D_integrable()


@pytest.mark.parametrize("kind", ["cosh", "double_angle"])
def test_adapted_integrable_other_identities(kind):
    """Integrable D whose R^3_12 vanishes only by identities tidy() does not use:
    ω = d(z − y tanh x) with sech² written 1/cosh², and ω = d(z − y sin 2x) with sin 2x = 2 sin x cos x."""
    x, y, z = sp.symbols("x y z", real=True)
    forms = {
        "cosh": [[-y / sp.cosh(x) ** 2, -sp.tanh(x), 1]],
        "double_angle": [[-2 * y * sp.cos(2 * x), -2 * sp.sin(x) * sp.cos(x), 1]],
    }[kind]
    F = Frame.adapted_to_constraints(Chart([x, y, z]), forms)
    for pt in rand_points((x, y, z), 2, 98):
        assert np.abs(independent_R((x, y, z), F.vectors, pt)).max() < 1e-9
    assert F.is_D_integrable()
    assert F.nonzero_structure() == {}


def test_adapted_accepts_matrix_input():
    x, y, z = sp.symbols("x y z", real=True)
    F = Frame.adapted_to_constraints(Chart([x, y, z]), sp.Matrix([[-y, 0, 1]]))
    assert F.vectors == sp.ImmutableMatrix([[1, 0, y], [0, 1, 0], [0, 0, 1]])


def test_is_D_integrable_needs_rank_D():
    x, y = sp.symbols("x y", real=True)
    with pytest.raises(DimensionError) as exc:
        Frame.coordinate(Chart([x, y])).is_D_integrable()
    assert str(exc.value)


def _random_constraints(seed, n, k, trig=True, integrable=False):
    rng = random.Random(seed)
    q = sp.symbols(f"q0:{n}", real=True)
    if integrable:
        # ω^a = h_a d g^a, g^a = q^{n-1-a} + (functions): D = level sets of the g^a, integrable
        gs = [q[n - 1 - a] + rand_entry(rng, q[: n - k], trig) + rand_entry(rng, q, trig) * rng.choice([0, 1])
              for a in range(k)]
        hs = [1 + q[0] ** 2, 2 + sp.cos(q[1]) if trig else 3 + q[1] ** 2]
        forms = [[hs[a] * sp.diff(g, qa) for qa in q] for a, g in enumerate(gs)]
    else:
        # ω = h(q) · M · [−C(q) | I]: M constant invertible k×k, C random, h nowhere zero;
        # the columns are then shuffled so that the dependent coordinates are not always the last
        C = [[rand_entry(rng, q, trig) if rng.random() < 0.7 else 0 for _ in range(n - k)] for _ in range(k)]
        while True:
            M = sp.Matrix(k, k, lambda i, j: rng.randint(-2, 2))
            if M.det() != 0:
                break
        h = 1 + q[0] ** 2 if rng.random() < 0.5 else 1
        base = M * sp.Matrix([[-c for c in row] + [1 if b == a else 0 for b in range(k)] for a, row in enumerate(C)])
        perm = list(range(n))
        rng.shuffle(perm)
        forms = [[h * base[a, perm[A]] for A in range(n)] for a in range(k)]
    return q, forms


CONSTRAINT_CASES = [(s, n, k) for s, (n, k) in enumerate([(3, 1), (3, 2), (4, 1), (4, 2), (4, 3), (3, 1)])]


@pytest.mark.parametrize("seed,n,k", CONSTRAINT_CASES)
def test_adapted_frame_annihilates_constraints(seed, n, k):
    q, forms = _random_constraints(50 + seed, n, k, trig=seed % 2 == 0)
    F = Frame.adapted_to_constraints(Chart(q), forms)
    m = n - k
    assert F.rank_D == m
    # ω^a(X_α) = 0 symbolically
    for a in range(k):
        for al in range(m):
            val = sp.Add(*[forms[a][A] * F.vectors[al, A] for A in range(n)])
            assert sp.simplify(val) == 0
    # nonsingular at random points, coframe dual, constraint part of the coframe annihilates D
    for pt in rand_points(q, 3, 60 + seed):
        Xn = num_matrix(F.vectors, pt)
        assert abs(np.linalg.det(Xn)) > 1e-8
        th = num_matrix(F.coframe, pt)
        assert np.allclose(th @ Xn.T, np.eye(n), atol=1e-9)
        # span{θ^a} = span{ω^a}: the ω rows are combinations of the θ^a rows
        W = num_matrix(sp.Matrix(forms), pt)
        coef = W @ Xn[m:].T  # ω^a(X_b)
        assert np.allclose(W, coef @ th[m:], atol=1e-9)


@pytest.mark.parametrize("seed,n,k", [(0, 3, 1), (1, 4, 2), (2, 4, 1)])
def test_adapted_frame_dependent_honoured(seed, n, k):
    q, forms = _random_constraints(70 + seed, n, k, trig=False)
    # several dependent sets whose block of ω is invertible (checked numerically here)
    pt = rand_points(q, 1, 80 + seed)[0]
    W = num_matrix(sp.Matrix(forms), pt)
    choices = [c for c in itertools.combinations(range(n), k) if abs(np.linalg.det(W[:, list(c)])) > 1e-3]
    assert choices
    for dep in choices[:3]:
        F = Frame.adapted_to_constraints(Chart(q), forms, dependent=[q[c] for c in dep])
        F2 = Frame.adapted_to_constraints(Chart(q), forms, dependent=list(dep))
        assert F.vectors == F2.vectors
        free = [c for c in range(n) if c not in dep]
        m = len(free)
        for a, p in enumerate(sorted(dep)):  # complement = coordinate fields of the dependent coordinates
            assert list(F.vectors.row(m + a)) == [1 if A == p else 0 for A in range(n)]
        for al, f in enumerate(free):  # X_α = ∂_f + (dependent components only)
            for A in free:
                assert F.vectors[al, A] == (1 if A == f else 0)
            val = [sp.Add(*[forms[a][A] * F.vectors[al, A] for A in range(n)]) for a in range(k)]
            assert all(sp.simplify(v) == 0 for v in val)


@pytest.mark.parametrize("seed,n,k,trig", [(0, 3, 1, False), (1, 4, 2, False), (2, 4, 1, True), (3, 4, 2, True)])
def test_adapted_random_integrable(seed, n, k, trig):
    q, forms = _random_constraints(90 + seed, n, k, trig=trig, integrable=True)
    F = Frame.adapted_to_constraints(Chart(q), forms)
    assert F.is_D_integrable()
    # independent check of the hypothesis: R^a_αβ = 0 numerically
    m = n - k
    for pt in rand_points(q, 2, 95):
        R = independent_R(q, F.vectors, pt)
        assert np.abs(R[m:, :m, :m]).max() < 1e-9


@pytest.mark.parametrize("seed,n,k", [(0, 3, 1), (1, 4, 2), (2, 4, 1)])
def test_adapted_random_nonintegrable(seed, n, k):
    q, forms = _random_constraints(50 + 7 * seed, n, k, trig=False)
    F = Frame.adapted_to_constraints(Chart(q), forms)
    m = n - k
    R = max(np.abs(independent_R(q, F.vectors, pt)[m:, :m, :m]).max() for pt in rand_points(q, 2, 96))
    assert F.is_D_integrable() == (R < 1e-9)


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------
ACTION_WORDS = ("replace", "remove", "choose", "need", "give", "pass", "use", "must")


def _assert_helpful(exc):
    msg = str(exc.value)
    assert msg.strip()
    assert any(w in msg.lower() for w in ACTION_WORDS), msg


def test_singular_frame_error():
    x, y, z = sp.symbols("x y z", real=True)
    row1 = [1, y, sp.sin(z)]
    with pytest.raises(SingularFrameError) as exc:
        Frame(Chart([x, y, z]), [row1, [x * e for e in row1], [0, 0, 1]])
    _assert_helpful(exc)
    assert isinstance(exc.value, anholo.AnholoError)


def test_singular_coframe_error():
    x, y = sp.symbols("x y", real=True)
    with pytest.raises(SingularFrameError) as exc:
        Frame.from_coframe(Chart([x, y]), [[1, x], [y, x * y]])
    _assert_helpful(exc)


@pytest.mark.parametrize(
    "rows",
    [
        [[1, 0], [0, 1]],  # 2×2 on R^3
        [[1, 0, 0], [0, 1, 0]],  # 2×3
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]],  # 4×3
        [[1, 0, 0], [0, 1, 0], [0, 0]],  # ragged
    ],
)
def test_wrong_shape_frame(rows):
    x, y, z = sp.symbols("x y z", real=True)
    with pytest.raises(DimensionError) as exc:
        Frame(Chart([x, y, z]), rows)
    _assert_helpful(exc)
    with pytest.raises(DimensionError):
        Frame.from_coframe(Chart([x, y, z]), rows)


def test_dependent_constraint_forms():
    x, y, z = sp.symbols("x y z", real=True)
    with pytest.raises(anholo.DependentConstraintsError) as exc:
        Frame.adapted_to_constraints(Chart([x, y, z]), [[-y, 0, 1], [-x * y, 0, x]])
    _assert_helpful(exc)


@pytest.mark.parametrize("dependent", [["y"], [1], ["x", "z"]])
def test_impossible_dependent_choice(dependent):
    x, y, z = sp.symbols("x y z", real=True)
    with pytest.raises(SingularFrameError) as exc:
        Frame.adapted_to_constraints(Chart([x, y, z]), [[-y, 0, 1]], dependent=dependent)
    _assert_helpful(exc)


@pytest.mark.parametrize("dependent", [[5], [-1], ["w"]])
def test_dependent_not_a_coordinate(dependent):
    """An index out of range or an unknown name is a user error (DimensionError), not an IndexError."""
    x, y, z = sp.symbols("x y z", real=True)
    with pytest.raises(DimensionError) as exc:
        Frame.adapted_to_constraints(Chart([x, y, z]), [[-y, 0, 1]], dependent=dependent)
    assert str(exc.value).strip()


@pytest.mark.parametrize("forms", [[[-1, 0]], [[0, 0, 1], [1, 0]]])
def test_constraint_forms_wrong_shape(forms):
    x, y, z = sp.symbols("x y z", real=True)
    with pytest.raises(DimensionError) as exc:
        Frame.adapted_to_constraints(Chart([x, y, z]), forms)
    _assert_helpful(exc)


def test_singular_change_of_frame():
    q, X, F = random_frame((1, 3, True, False, True))
    x = q[0]
    with pytest.raises(SingularFrameError) as exc:
        F.change([[1, 0, 2], [x, 0, 2 * x], [0, 1, 0]])
    _assert_helpful(exc)
    with pytest.raises(DimensionError):
        F.change([[1, 0], [0, 1]])


def test_index_errors():
    q, X, F = random_frame((1, 3, True, False, True))
    for args in [(3, 0, 0), (0, -1, 0), (0, 0, 7)]:
        with pytest.raises(DimensionError):
            F.structure_function(*args)
    with pytest.raises(DimensionError):
        F.bracket(0, 3)
    with pytest.raises(DimensionError):
        F.vector(3)
    with pytest.raises(DimensionError):
        F.field([1, 2])


def test_given_coframe_is_checked():
    x, y = sp.symbols("x y", real=True)
    with pytest.raises(SingularFrameError):
        Frame(Chart([x, y]), [[1, y], [0, 1]], coframe=[[1, 0], [0, 1]])
    F = Frame(Chart([x, y]), [[1, y], [0, 1]], coframe=[[1, 0], [-y, 1]])
    # [∂x + y∂y, ∂y] = −∂y = −X2, by hand
    assert coordinate_bracket((x, y), (1, y), (0, 1)) == [0, -1]
    assert F.structure_function(1, 0, 1) == -1 and F.structure_function(0, 0, 1) == 0

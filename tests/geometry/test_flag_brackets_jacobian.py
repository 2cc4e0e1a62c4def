"""The brackets of ``numerical_flag`` against brackets written here with plain sympy.

Oracle (no anholo code in it): D = ker κ(q) of a system's constraints, solved here for the dependent
velocities with ``sympy.linsolve`` (the free velocities are those the Maggi route chose, an input), the
fields ``X_α = ∂_{f_α} + C^P_α ∂_P`` as sympy matrices, and their iterated brackets

    [X, Y] = (∂Y/∂q) X − (∂X/∂q) Y        (``Matrix.jacobian``)

along the words the flag reports.  Checked: every kept generator equals the bracket its word names at
random points; the ranks of those hand brackets give the published growth vectors — the car with n
trailers (2, 3, …, n + 3) (Sørdalen 1993; a Goursat distribution), the vertical rolling disk (2, 3, 4)
and the rolling disk (3, 4, 5) (Bloch 2003, §1.4 and §6.6), the nonholonomic particle (2, 3)
(Bloch 2003, §1.3); and at each step every bracket of a kept generator with an ``X_α`` lies in the
next span (so the growth vector is not only a lower bound).  Perturbed fields give other values and
another growth vector (the comparison can fail).
"""

import pickle
import random

import numpy as np
import pytest
import sympy as sp

from anholo.geometry.distribution import numerical_flag
from anholo.system import System


def _hand_fields(system):
    """D = span{X_α}: the constraints solved for the dependent velocities (free ones: the Maggi route's)."""
    q, u = list(system.chart.coordinates), list(system.chart.velocities)
    free = [q.index(next(c for c in q if c.name == f.name)) for f in system.maggi().free_coordinates]
    dep = [A for A in range(len(q)) if A not in free]
    (sol,) = sp.linsolve(list(system.constraints), [u[P] for P in dep])
    rows = []
    for f in free:
        row = [sp.S.Zero] * len(q)
        row[f] = sp.S.One
        for j, P in enumerate(dep):
            row[P] = sp.diff(sol[j], u[f])
        rows.append(sp.Matrix(row))
    return q, rows


def _bracket(X, Y, q):
    return Y.jacobian(q) * X - X.jacobian(q) * Y


def _word_field(word, X, q, memo):
    """``(a,)`` is X_a, ``(a,) + w`` is [X_a, Y_w]."""
    if word not in memo:
        memo[word] = X[word[0]] if len(word) == 1 else _bracket(X[word[0]], _word_field(word[1:], X, q, memo), q)
    return memo[word]


def _points(system, q, count, seed, fields=()):
    """Random points: coordinates in (0.3, 0.9), the system's parameter values, other parameters in (0.5, 1.5)."""
    rng = random.Random(seed)
    params = {str(k): float(v) for k, v in (system.values or {}).items()} if system is not None else {}
    free = sorted({s.name for X in fields for e in X for s in e.free_symbols} - {s.name for s in q} - set(params))
    out = []
    for _ in range(count):
        pt = params | {s.name: rng.uniform(0.3, 0.9) for s in q}
        out.append(pt | {name: rng.uniform(0.5, 1.5) for name in free})
    return out


def _at(expr_rows, point):
    subs = {s: point[s.name] for row in expr_rows for e in row for s in sp.sympify(e).free_symbols}
    return np.array([[float(sp.sympify(e).xreplace(subs)) for e in row] for row in expr_rows])


def _rank(rows, tol=1e-9):
    rows = np.asarray(rows, dtype=float)
    norms = np.linalg.norm(rows, axis=1)
    keep = norms > tol * norms.max()  # zero rows (e.g. [X_a, X_a]) dropped
    rows = rows[keep] / norms[keep, None]
    s = np.linalg.svd(rows, compute_uv=False)
    return int((s > tol * s[0]).sum())


def _check_flag_against_hand(flag, q, X, points):
    """Kept generators = hand brackets of their words; hand ranks = the growth vector; every further
    bracket of a kept generator lies in the next span (hand)."""
    n, memo = len(q), {}
    hand = [_word_field(w, X, q, memo) for w in flag.words]
    for pt in points:
        got = np.array(flag.program.evaluate(pt), dtype=complex).reshape(len(flag.words), n)
        assert np.abs(got.imag).max() < 1e-12
        got = got.real
        want = _at([list(h) for h in hand], pt)
        assert np.allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max()), (got - want)
        for k, r in enumerate(flag.growth_vector):
            assert _rank(want[:r]) == r
            level = [i for i in range(r) if flag.levels[i] == k + 1]
            cands = [_word_field((a,) + flag.words[i], X, q, memo) for i in level for a in range(len(X))]
            spanned = flag.growth_vector[k + 1] if k + 1 < len(flag.growth_vector) else r
            rows = np.vstack([want[:spanned], _at([list(c) for c in cands], pt)])
            assert _rank(rows) == spanned, (k, flag.word_text(level[0]))


@pytest.mark.parametrize("n", [1, 2, pytest.param(3, marks=pytest.mark.slow)])  # n = 3: sympy takes 20 s
def test_n_trailer_generators_are_the_jacobian_brackets(n):
    s = System.load(f"n_trailer_{n}")
    flag = numerical_flag(s.maggi())
    assert flag.growth_vector == tuple(range(2, n + 4))  # Goursat (Sørdalen 1993)
    q, X = _hand_fields(s)
    _check_flag_against_hand(flag, q, X, _points(s, q, 2, seed=n, fields=X))


@pytest.mark.parametrize("name, growth", [("nonholonomic_particle", (2, 3)), ("vertical_rolling_disk", (2, 3, 4)),
                                          ("rolling_disk", (3, 4, 5)), ("knife_edge", (2, 3))])
def test_published_growth_vectors_and_their_brackets(name, growth):
    s = System.load(name)
    flag = numerical_flag(s.maggi())
    assert flag.growth_vector == growth and flag.bracket_generating
    q, X = _hand_fields(s)
    _check_flag_against_hand(flag, q, X, _points(s, q, 2, seed=7, fields=X))


def test_every_derivative_rule_against_the_jacobian():
    """Fields with exp, log, sqrt, powers with a symbolic exponent, tan, atan, cosh, Abs and a quotient:
    brackets to depth 3 (second derivatives of every function) equal the jacobian brackets."""
    x, y, z, w = q = sp.symbols("x y z w", real=True)  # d|u| = sign(u) du
    X = [sp.Matrix([1, 0, sp.exp(y) * sp.sin(z) + sp.sqrt(1 + x ** 2), sp.log(2 + sp.cos(w)) * sp.atan(x * y)]),
         sp.Matrix([0, 1, sp.tan(x / 3) * sp.Abs(z - 2) + x ** y, sp.cosh(z) * w / (1 + x * z)])]
    flag = numerical_flag([list(r) for r in X], q)
    assert flag.growth_vector == (2, 3, 4)
    _check_flag_against_hand(flag, list(q), X, _points(None, q, 3, seed=1))


def test_perturbed_fields_are_noticed():
    """The comparison fails on a perturbed field, and a perturbed D has another growth vector."""
    s = System.load("n_trailer_2")
    flag = numerical_flag(s.maggi())
    q, X = _hand_fields(s)
    pts = _points(s, q, 1, seed=3, fields=X)
    eps = sp.Rational(1, 1000)
    bent = [X[0] + sp.Matrix([0, 0, 0, eps * sp.sin(q[2]), 0]), X[1]]
    with pytest.raises(AssertionError):
        _check_flag_against_hand(flag, q, bent, pts)
    # the hand fields give the same flag; without the second trailer's hitch they do not
    assert numerical_flag([list(r) for r in X], q, values=s.values).growth_vector == (2, 3, 4, 5)
    cut = [X[0].copy(), X[1]]
    cut[0][4] = 0
    assert numerical_flag([list(r) for r in cut], q, values=s.values).growth_vector == (2, 3, 4)
    # the nonholonomic particle made integrable: z' = y' (a holonomic constraint)
    x, y, z = sp.symbols("x y z")
    assert numerical_flag([[1, 0, 0], [0, 1, 1]], [x, y, z]).growth_vector == (2,)


def test_the_program_of_the_kept_brackets_is_made_when_read():
    """The symbolic definitions are made on first use; the values equal the hand brackets, and the program
    pickles as a plain one with the same values."""
    s = System.load("n_trailer_2")
    flag = numerical_flag(s.maggi())
    assert "pairs" not in vars(flag.program)  # not made yet
    q, X = _hand_fields(s)
    (pt,) = _points(s, q, 1, seed=9, fields=X)
    _check_flag_against_hand(flag, q, X, [pt])
    assert flag.program.pairs and len(flag.program.pruned().pairs) == len(flag.program.pairs)
    again = pickle.loads(pickle.dumps(flag.program))
    assert type(again).__name__ == "Program"
    assert np.allclose(np.array(again.evaluate(pt)).real, np.array(flag.program.evaluate(pt)).real)


def test_fields_written_with_shared_definitions():
    """Generators written with definitions (a cse list) give the brackets of the substituted fields."""
    x, y, z = q = sp.symbols("x y z")
    w0, w1 = sp.symbols("w0 w1")
    defs = [(w0, sp.exp(x) * y ** 2), (w1, sp.sin(w0) + x)]
    flag = numerical_flag([[1, 0, w1], [0, 1, 0]], q, definitions=defs)
    assert flag.growth_vector == (2, 3)
    X = [sp.Matrix([1, 0, sp.sin(sp.exp(x) * y ** 2) + x]), sp.Matrix([0, 1, 0])]
    _check_flag_against_hand(flag, list(q), X, _points(None, q, 2, seed=4))
    with pytest.raises(AssertionError):  # another field: the check fails
        _check_flag_against_hand(flag, list(q), [sp.Matrix([1, 0, sp.cos(sp.exp(x) * y ** 2) + x]), X[1]],
                                 _points(None, q, 1, seed=4))

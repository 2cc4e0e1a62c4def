"""The skew normal form of Cronström & Raita (2009), Appendix A (corrected), and the velocities
compatible with both dynamics (their eq. (37)).

Oracles: matrices and solutions derived by hand here; numpy's SVD and eigenvalues (the singular values of
a skew matrix are its κ's, each twice; its eigenvalues ±iκ); the printed construction (A.7) carried out
literally, which fails for a repeated κ.
"""

import numpy as np
import pytest
import sympy as sp

from anholo.analysis.skew_normal_form import compatible_velocities, constraint_curl, skew_normal_form
from anholo.errors import ArgumentError, DimensionError

x, y, z, w = sp.symbols("x y z w", real=True)
JJ = np.array([[0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1], [0, 0, -1, 0]], dtype=float)


def _check_relations(nf, tol=1e-10):
    """(A.9)–(A.11): orthonormal basis, M b_{2ν−1} = κ b_{2ν}, M b_{2ν} = −κ b_{2ν−1}, M b_ν = 0 beyond 2p."""
    M, B = nf.matrix, nf.basis
    assert np.allclose(B.T @ B, np.eye(len(M)), atol=tol)
    for nu, k in enumerate(nf.kappas):
        assert np.allclose(M @ B[:, 2 * nu], k * B[:, 2 * nu + 1], atol=tol)
        assert np.allclose(M @ B[:, 2 * nu + 1], -k * B[:, 2 * nu], atol=tol)
    assert np.allclose(M @ nf.kernel, 0, atol=tol)


def test_nonholonomic_particle_curl_and_normal_form_by_hand():
    # ż − y ẋ = 0: a = (−y, 0, 1); M_AB = ∂a_A/∂q^B − ∂a_B/∂q^A has M_12 = −1, M_21 = 1
    M = constraint_curl([-y, 0, 1], [x, y, z])
    assert M == sp.Matrix([[0, -1, 0], [1, 0, 0], [0, 0, 0]])
    nf = skew_normal_form(np.array(M, dtype=float))
    assert nf.rank == 2 and np.allclose(nf.kappas, [1.0])
    assert np.allclose(np.abs(nf.kernel[:, 0]), [0, 0, 1])
    _check_relations(nf)
    # the matrix of M in the basis b: entries (b_μ, M b_ν), blocks [[0, −κ], [κ, 0]] (transpose of (A.12))
    assert np.allclose(nf.normal_matrix(), [[0, -1, 0], [1, 0, 0], [0, 0, 0]], atol=1e-12)


def test_random_skew_matrices_against_numpy():
    rng = np.random.default_rng(4)
    for N, rank in ((5, 4), (6, 6), (6, 2), (3, 2)):
        A = rng.normal(size=(N, rank))
        Bm = rng.normal(size=(N, rank))
        M = A @ Bm.T - Bm @ A.T                     # skew, rank ≤ 2·rank, generically min(N, 2 rank) rounded even
        nf = skew_normal_form(M)
        sv = np.sort(np.linalg.svd(M, compute_uv=False))[::-1]
        expected_rank = int(np.sum(sv > 1e-9 * sv[0]))
        assert nf.rank == expected_rank
        assert np.allclose(np.sort(np.repeat(nf.kappas, 2))[::-1], sv[:nf.rank])
        eig = np.sort(np.abs(np.linalg.eigvals(M).imag))[::-1]
        assert np.allclose(eig[:nf.rank], np.sort(np.repeat(nf.kappas, 2))[::-1])
        _check_relations(nf)
        N_ = nf.normal_matrix()
        for nu, k in enumerate(nf.kappas):
            assert np.isclose(N_[2 * nu, 2 * nu + 1], -k) and np.isclose(N_[2 * nu + 1, 2 * nu], k)


def test_repeated_kappa_breaks_the_printed_construction_not_this_one():
    # (A.7) as printed: b_{2μ−1} = e_μ, b_{2μ} = M e_μ / κ_μ for the first p eigenvectors of M² (here M² = −1)
    w_, E = np.linalg.eigh(JJ @ JJ)
    printed = np.column_stack([E[:, 0], JJ @ E[:, 0], E[:, 1], JJ @ E[:, 1]])
    assert np.linalg.matrix_rank(printed, tol=1e-9) < 4          # b_3 = ±b_2: not a basis
    Q, _ = np.linalg.qr(np.random.default_rng(2).normal(size=(4, 4)))
    for M in (JJ, Q @ JJ @ Q.T):
        nf = skew_normal_form(M)
        assert np.allclose(nf.kappas, [1.0, 1.0])
        _check_relations(nf)


def test_solve_by_the_normal_form():
    rng = np.random.default_rng(8)
    A, Bm = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    M = A @ Bm.T - Bm @ A.T                          # rank 4 in R^5
    nf = skew_normal_form(M)
    r = M @ rng.normal(size=5)                        # in the range
    xs = nf.solve(r)
    assert np.allclose(M @ xs, r, atol=1e-10) and np.allclose(nf.kernel.T @ xs, 0, atol=1e-10)
    assert nf.solve(r + nf.kernel[:, 0]) is None      # a kernel component is not in the range (M skew)
    assert nf.solve(r + 1e-3 * nf.kernel[:, 0]) is None


def test_compatible_velocities_by_hand():
    # nonholonomic particle: Γ = 0 from the third row, then ẋ = ẏ = 0 and ż = 0 from a·q̇ = 0
    assert compatible_velocities([-y, 0, 1], [x, y, z], {x: 0.3, y: 0.7}).dimension == 0
    # x ẏ − y ẋ = 0 (integrating factor): M q̇ = Γ a gives q̇ = (Γ x/2, Γ y/2, ż), all constrained velocities
    cv = compatible_velocities([-y, x, 0], [x, y, z], {x: 0.3, y: 0.7})
    assert cv.dimension == 2
    hand = np.array([[0.3, 0.7, 0.0], [0, 0, 1.0]]).T
    assert np.linalg.matrix_rank(np.hstack([cv.basis, hand]), tol=1e-9) == 2
    # Darboux a = x dy + z dw: M = −(J ⊕ J), κ = (1, 1) repeated, the line of M⁻¹ a = (x, 0, z, 0)
    cv = compatible_velocities([0, x, 0, z], [x, y, z, w], {x: 0.4, z: -1.3})
    assert cv.dimension == 1 and np.allclose(cv.normal_form.kappas, [1, 1])
    line = np.array([0.4, 0, -1.3, 0]) / np.linalg.norm([0.4, 0, -1.3, 0])
    assert np.isclose(abs(cv.basis[:, 0] @ line), 1.0)
    assert not np.isclose(abs(cv.basis[:, 0] @ np.array([0, 1.0, 0, 0])), 1.0)


def test_errors():
    with pytest.raises(ArgumentError, match="skew"):
        skew_normal_form([[0, 1], [1, 0]])
    with pytest.raises(DimensionError):
        skew_normal_form([[0, 1, 2]])
    with pytest.raises(DimensionError):
        constraint_curl([x, y], [x, y, z])
    with pytest.raises(ArgumentError, match="values"):
        compatible_velocities([-y, 0, 1], [x, y, z], {x: 0.3})

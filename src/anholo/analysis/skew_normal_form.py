"""The normal form of a skew matrix (Cronström & Raita (2009), Appendix A, corrected) and the
velocities compatible with both the d'Alembert and the variational equations of one linear constraint.

For one constraint ``a_A(q) q̇^A = 0`` Cronström & Raita (2009) set (their eq. (25))

    M_AB(q) = ∂a_A/∂q^B − ∂a_B/∂q^A        (the components of −da),

and show that a motion solving both the d'Alembert equations ``E_A(L) = λ a_A`` and the variational
ones ``E_A(L) = μ̇ a_A + μ M_AB q̇^B`` must satisfy (their eq. (37), ``Γ = (λ − μ̇)/μ``)

    M_AB q̇^B = Γ a_A.

They solve it with the normal form of the skew matrix M (Greub 1967): M² is symmetric and negative
semi-definite, with eigenvalues ``−κ²``; the rank of M is ``2p``; there is an orthonormal basis
``b_1, …, b_N`` with (eq. (A.10), (A.11))

    M b_{2ν−1} = κ_ν b_{2ν},   M b_{2ν} = −κ_ν b_{2ν−1}   (ν = 1..p, κ_ν > 0),   M b_ν = 0 (ν > 2p).

Two corrections to the appendix as printed:

* (A.7) takes ``b_{2μ−1} = e_μ`` and ``b_{2μ} = κ_μ⁻¹ M e_μ`` for the first p vectors ``e_μ`` of an
  orthonormal eigenbasis of M².  Every nonzero eigenvalue of M² has even multiplicity (``e`` and ``M e``
  share it), so the first p eigenvectors may lie in one pair's eigenplane: for ``M = J ⊕ J``
  (``J = [[0, 1], [−1, 0]]``) ``b_3 = e_2 = ±b_2`` and the "basis" is degenerate.  The construction that
  works picks the vectors one at a time: ``b_{2ν−1}`` a unit eigenvector of M² (eigenvalue ``−κ_ν²``)
  orthogonal to all the ``b`` chosen so far, ``b_{2ν} = κ_ν⁻¹ M b_{2ν−1}`` (then ``M b_{2ν} = −κ_ν b_{2ν−1}``
  and both are orthogonal to the earlier ones, M being skew).  κ is indexed by the pairs (ν = 1..p), not
  by ``1..2p`` as in (A.5).
* With (A.10) the matrix of M in the basis b, ``(b_μ, M b_ν)``, has the blocks ``[[0, −κ_ν], [κ_ν, 0]]``:
  the transpose of the blocks printed in (A.12) (which is the matrix of ``(M b_μ, b_ν)``, i.e. of ``Mᵀ``).

With the normal form, a right-hand side ``r = Σ (α_ν b_{2ν−1} + β_ν b_{2ν}) + Σ γ_ν b_ν`` ((A.13)–(A.15))
is in the range of M iff all ``γ_ν = 0``, and then the solutions of ``M x = r`` are

    x = Σ_ν (β_ν b_{2ν−1} − α_ν b_{2ν}) / κ_ν + Σ_{ν > 2p} c_ν b_ν.

Everything here is numerical (at one configuration; eigenvectors of a symbolic matrix are not
formulas worth having).  docs/chetaev.rst.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import ArgumentError, DimensionError
from ..parsing import sympified

__all__ = ["SkewNormalForm", "skew_normal_form", "constraint_curl", "CompatibleVelocities",
           "compatible_velocities"]

_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class SkewNormalForm:
    """The normal form of a real skew matrix M (module docstring).

    Attributes
    ----------
    matrix : ndarray (N × N)
        M.
    basis : ndarray (N × N)
        Orthonormal columns ``b_1, …, b_N``: the pairs ``(b_{2ν−1}, b_{2ν})`` first, then the kernel.
    kappas : tuple of float
        ``κ_1, …, κ_p > 0``.
    """

    matrix: np.ndarray
    basis: np.ndarray
    kappas: tuple

    @property
    def p(self) -> int:
        return len(self.kappas)

    @property
    def rank(self) -> int:
        """``2p``, the rank of M."""
        return 2 * self.p

    def normal_matrix(self) -> np.ndarray:
        """``Bᵀ M B``: the entries ``(b_μ, M b_ν)``, blocks ``[[0, −κ_ν], [κ_ν, 0]]`` then zeros."""
        B = self.basis
        return B.T @ self.matrix @ B

    def components(self, vector) -> tuple:
        """``(α, β, γ)`` of a vector (eq. (A.14), (A.15)): ``α_ν = (b_{2ν−1}, v)``, ``β_ν = (b_{2ν}, v)``,
        ``γ_ν = (b_ν, v)`` for ``ν > 2p``."""
        c = self.basis.T @ np.asarray(vector, dtype=float)
        return c[0:self.rank:2], c[1:self.rank:2], c[self.rank:]

    @property
    def kernel(self) -> np.ndarray:
        """The columns ``b_{2p+1}, …, b_N`` (an orthonormal basis of ker M)."""
        return self.basis[:, self.rank:]

    def solve(self, rhs):
        """A particular solution of ``M x = rhs`` orthogonal to ker M, or None if rhs is not in the range
        of M (some ``γ_ν ≠ 0``, relative tolerance 1e-9); the general solution adds :attr:`kernel`."""
        rhs = np.asarray(rhs, dtype=float)
        alpha, beta, gamma = self.components(rhs)
        scale = max(1.0, float(np.linalg.norm(rhs)))
        if gamma.size and np.max(np.abs(gamma)) > _TOL * scale:
            return None
        x = np.zeros(len(rhs))
        for nu, k in enumerate(self.kappas):
            x += (beta[nu] * self.basis[:, 2 * nu] - alpha[nu] * self.basis[:, 2 * nu + 1]) / k
        return x


def skew_normal_form(matrix, tolerance: float = _TOL) -> SkewNormalForm:
    """The normal form of the real skew matrix ``matrix`` (module docstring; Cronström & Raita (2009),
    Appendix A, with the sequential choice of the eigenvectors).

    ``tolerance``: eigenvalues of M² below ``tolerance · max(1, |M|²)`` in size count as zero, and
    eigenvalues closer than that are one eigenvalue.

    Raises
    ------
    DimensionError
        If the matrix is not square.
    ArgumentError
        If it is not skew (``M + Mᵀ ≠ 0``) or has non-finite entries.
    """
    M = np.asarray(matrix, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise DimensionError(f"skew_normal_form needs a square matrix, got shape {M.shape}.")
    if not np.all(np.isfinite(M)):
        raise ArgumentError("skew_normal_form: the matrix has non-finite entries; evaluate it at a regular point.")
    size = max(1.0, float(np.max(np.abs(M))) if M.size else 1.0)
    if np.max(np.abs(M + M.T), initial=0.0) > tolerance * size:
        raise ArgumentError("skew_normal_form needs a skew matrix (M_AB = -M_BA); this one is not: "
                            "pass M - M.T over 2 if that is meant.")
    N = M.shape[0]
    w, E = np.linalg.eigh(M @ M)            # eigenvalues −κ², ascending: the largest κ first
    zero = tolerance * size ** 2
    chosen, kappas = [], []
    for i in range(N):
        if -w[i] <= zero:
            continue
        e = E[:, i] - sum((b @ E[:, i]) * b for b in chosen)
        if np.linalg.norm(e) < 1e-6:         # in the span of the pairs chosen in this eigenplane
            continue
        e = e / np.linalg.norm(e)
        k = float(np.linalg.norm(M @ e))     # = sqrt(−w[i]), exactly the length of M e
        f = M @ e / k
        chosen += [e, f]
        kappas.append(k)
    kernel = [E[:, i] for i in range(N) if -w[i] <= zero]
    B = np.column_stack(chosen + kernel) if N else np.zeros((0, 0))
    return SkewNormalForm(M, B, tuple(kappas))


def constraint_curl(a, coordinates) -> sp.Matrix:
    """``M_AB = ∂a_A/∂q^B − ∂a_B/∂q^A`` for the one-form ``a = a_A dq^A`` (Cronström & Raita (2009), eq. (25))."""
    q = list(coordinates)
    a = [sympified(x) for x in a]
    if len(a) != len(q):
        raise DimensionError(f"the constraint needs {len(q)} components a_A (one per coordinate), got {len(a)}.")
    return sp.Matrix(len(q), len(q), lambda A, B: sp.diff(a[A], q[B]) - sp.diff(a[B], q[A]))


@dataclass(frozen=True, eq=False)
class CompatibleVelocities:
    """The velocities at one configuration with ``a·q̇ = 0`` and ``M q̇ = Γ a`` for some Γ (Cronström &
    Raita (2009), eq. (37) with (23)): the only initial velocities at which a motion can solve both the
    d'Alembert and the variational equations.  ``basis``: orthonormal columns spanning them (a linear
    space: Γ enters linearly); ``dimension`` its dimension, against ``N − 1`` for all constrained velocities;
    ``normal_form`` the normal form of M used."""

    basis: np.ndarray
    normal_form: SkewNormalForm

    @property
    def dimension(self) -> int:
        return self.basis.shape[1]


def compatible_velocities(a, coordinates, point) -> CompatibleVelocities:
    """:class:`CompatibleVelocities` of the constraint ``a_A q̇^A = 0`` at ``point`` ({symbol: value}, the
    coordinates and the parameters).  With the normal form: ``Γ = 0`` gives ker M; ``Γ ≠ 0`` needs a in
    the range of M and adds ``Γ x_a`` with ``M x_a = a``; then ``a·q̇ = 0`` is imposed on the span."""
    q = list(coordinates)
    Ms = constraint_curl(a, q)
    values = {sp.Symbol(str(k), real=True) if isinstance(k, str) else k: sp.sympify(v) for k, v in dict(point).items()}

    def num(e):
        e = sympified(e).xreplace(values)
        if e.free_symbols:
            raise ArgumentError(f"compatible_velocities: give values for {sorted(map(str, e.free_symbols))}.")
        return float(e)

    M = np.array([[num(Ms[A, B]) for B in range(len(q))] for A in range(len(q))])
    av = np.array([num(x) for x in a])
    nf = skew_normal_form(M)
    span = [nf.kernel[:, j] for j in range(nf.kernel.shape[1])]
    xa = nf.solve(av)
    if xa is not None:
        span.append(xa)
    if not span:
        return CompatibleVelocities(np.zeros((len(q), 0)), nf)
    S = np.column_stack(span)
    # a·(S c) = 0: the null space of the row (a S)
    row = (av @ S).reshape(1, -1)
    _, s, Vt = np.linalg.svd(row)
    r = int(np.sum(s > _TOL * max(1.0, float(np.max(np.abs(row))))))
    C = Vt[r:].T
    V = S @ C
    if V.size:
        U, sv, _ = np.linalg.svd(V, full_matrices=False)
        V = U[:, sv > _TOL]
    return CompatibleVelocities(V, nf)

"""Chaplygin Hamiltonisation of a reduced Chaplygin system in any number of shape degrees of freedom (docs/routh.rst).

The reduced equations of a Chaplygin system (docs/reduction.rst) are

    d/dt ∂l/∂ṙ^α − ∂l/∂r^α = B_αβ ṙ^β,    l = ½ g_αβ(r) ṙ^α ṙ^β − V(r),

with ``p_α = g_αβ ṙ^β``, ``H = ½ g^αβ p_α p_β + V`` and a gyroscopic term ``B_αβ`` skew
and linear in ṙ.  **Chaplygin's ansatz** (Chaplygin (1911)): a new time
``dτ = N(r) dt`` and new momenta ``p̃_α = N(r) p_α``; the system is then *Hamiltonian*
for the canonical bracket in ``(r, p̃)`` with ``H̃(r, p̃) = H(r, p̃/N)`` iff
(differentiate ``p̃`` along the flow and compare with ``−∂H̃/∂r``, ``w = ∇ ln N``)

    B_αβ ṙ^β = (p_β ṙ^β) w_α − p_α (w_β ṙ^β)      for all ṙ, α.                 (H)

(H) is a polynomial identity in ṙ: its coefficients of ``ṙ^β ṙ^γ`` are
``m · m(m+1)/2`` linear equations for the m unknowns ``w_α(r)``.  The map
``w ↦ (p·ṙ) w − p (w·ṙ)`` is injective for definite g (take ṙ ⊥ w), so ``w`` is unique when it exists.
A multiplier exists (locally) iff

1. the linear system is consistent (for ``m = 2`` always: it is then equivalent to the
   two equations ``B_12 = p_2 w_1 − p_1 w_2``), and
2. ``w`` is closed, ``∂_α w_β − ∂_β w_α = 0`` (then ``N = exp ∫ w``).

For ``m = 2`` this is Chaplygin's reducing-multiplier theorem (Chaplygin (1911));
Fedorov & Jovanović (2004) study the same ansatz for ``m > 2`` (multidimensional
Veselova and LR systems), where the equations with ``γ ∉ {α, β}`` are extra
conditions.  Ehlers, Koiller, Montgomery & Rios (2005) phrase it as conformal
symplecticity: the almost-symplectic form of the reduced system (``dr^α ∧ dp_α`` plus
the gyroscopic "JK" term ``½ B_αβ dr^α ∧ dr^β`` with its sign convention) becomes
closed after multiplication by N when the stronger 2-form identity
``B_αβ = p_β w_α − p_α w_β`` holds; (H) only needs it contracted with ṙ (both are
reported).  For the Chaplygin ball the classical multiplier (Chaplygin (1903)) needs a
further reduction by the rotations about the vertical at zero momentum; Borisov &
Mamaev (2001, 2008) Hamiltonise the general case outside this ansatz.

Consequences: the Hamiltonian flow preserves ``dr ∧ dp̃ = N^m dr ∧ dp``, so the
original flow preserves ``N^(m−1) dr ∧ dp = N^(m−1) det g dr ∧ dṙ`` — an invariant
measure with density depending on r only (for ``m = 2``: ``N det g``, Chaplygin's
theorem).

**Certificates.**  When (1) fails the equations left over by the unique candidate ``w``
(solved from m independent ones) are returned: they do not vanish, so **no** factor
``N(r)`` of Chaplygin's ansatz exists — not only none in a finite family.  When (2)
fails the curl of ``w`` is returned.  The stated ansatz is Chaplygin's: a time change
by a function of the shape and momenta rescaled by the same function, with the
canonical bracket; Hamiltonisations outside it (other brackets, momentum-dependent
time changes, e.g. Borisov & Mamaev's for the Chaplygin ball at non-zero momentum)
are not decided here.

When w is closed, N is sought in closed form as ``(det g)^s`` (the classical
multipliers are powers of det g), then as ``F^t`` with ``t = ±1/2, ±1`` and F in the
product function ansatz of degree 2 of :mod:`anholo.analysis.invariant_measure` (``t ∇F = F w``
is linear in the coefficients of F), then by line integration of a small ``w``; each is
checked by differentiation.  If none is found, ``exists`` stays True (``w`` is closed) and
``multiplier`` is None.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..algebra import (adjugate, determinant, free_symbols, random_point, reduce_if_cheap, solve_square, tidy,
                       vanishes)
from ..algebra import kernel as _kernel
from ..algebra.decision import EXACT, Decision
from ..algebra.expressions import size_exceeds
from ..algebra.printing import latex, tex_text
from ..errors import ReductionError
from .reduction import ChaplyginReduction

__all__ = ["Hamiltonisation", "hamiltonise"]

_CRITERION = ("dτ = N(r) dt, p̃ = N(r) p, H̃ = H(r, p̃/N), canonical bracket in (r, p̃): Hamiltonian iff "
              "B_αβ ṙ^β = (p·ṙ) w_α − p_α (w·ṙ) with w = ∇ ln N (Chaplygin (1911) for two shape degrees of "
              "freedom; Fedorov & Jovanović (2004) for more)")


@dataclass(frozen=True)
class Hamiltonisation:
    """Result of :func:`hamiltonise` (module docstring).

    Attributes
    ----------
    exists : bool
        A multiplier ``N(r)`` of Chaplygin's ansatz exists (locally).
    criterion : str
        The criterion decided, with its literature.
    shape : tuple
        The shape coordinates ``r``.
    log_gradient : tuple or None
        ``w = ∇ ln N`` (the unique candidate), None if the linear system for it is inconsistent.
    algebraic_obstruction : tuple
        The equations of (H) left nonzero by the candidate ``w`` (coefficients of ``ṙ^β ṙ^γ``):
        the certificate that the linear system is inconsistent; empty if it is consistent.
    curl : tuple
        ``∂_α w_β − ∂_β w_α`` for α < β (all zero iff w is closed); empty if there is no ``w``.
    multiplier : sympy.Expr or None
        ``N(r)`` in closed form (None if none exists or the integral was not found).
    hamiltonian : sympy.Expr or None
        ``H̃(r, p̃)`` in the symbols ``momenta``.
    momenta : tuple of Symbol
        ``p̃_α`` (named ``pt_<r>``).
    measure_density : sympy.Expr or None
        ``N^(m−1) det g``: density of an invariant measure of the reduced flow w.r.t. ``dr dṙ``.
    two_form : bool or None
        The stronger identity ``B_αβ = p_β w_α − p_α w_β`` (``N Ω_nh`` closed, Ehlers, Koiller,
        Montgomery & Rios (2005)); None if there is no ``w``.
    decision : Decision
        How the verdict was decided.
    closed_form_ansatz : str
        What was tried to write N in closed form (when w is closed).
    """

    exists: bool
    criterion: str
    shape: tuple
    log_gradient: tuple
    algebraic_obstruction: tuple
    curl: tuple
    multiplier: sp.Expr
    hamiltonian: sp.Expr
    momenta: tuple
    measure_density: sp.Expr
    two_form: bool
    decision: Decision
    closed_form_ansatz: str = ""

    def __bool__(self):
        return self.exists

    def __str__(self):
        if self.log_gradient is None:
            return ("No Chaplygin multiplier N(r) exists: the conditions B_αβ ṙ^β = (p·ṙ) w_α − p_α (w·ṙ) are "
                    f"inconsistent for w; left over: {list(self.algebraic_obstruction)} ≠ 0 "
                    f"[{self.decision}].")
        if not self.exists:
            return (f"No Chaplygin multiplier N(r) exists: ∇ ln N would be {list(self.log_gradient)}, whose curl "
                    f"{list(self.curl)} does not vanish [{self.decision}].")
        N = self.multiplier if self.multiplier is not None else "exp(∫ w)"
        text = (f"Chaplygin multiplier N = {N} (w = ∇ ln N = {list(self.log_gradient)}): with dτ = N dt and "
                f"p̃ = N p the reduced system is Hamiltonian")
        if self.hamiltonian is not None:
            text += f", H̃ = {self.hamiltonian}; invariant measure N^(m−1) det g = {self.measure_density} (dr dṙ)"
        return text + f" [{self.decision}]."

    def as_latex(self) -> str:
        if self.log_gradient is None:
            return (r"\text{no Chaplygin multiplier: }" + latex(sp.Matrix(self.algebraic_obstruction).T)
                    + r"\neq 0")
        if not self.exists:
            return r"\text{no Chaplygin multiplier: } dw = " + latex(sp.Matrix(self.curl).T) + r"\neq 0"
        N = latex(self.multiplier) if self.multiplier is not None else r"e^{\int w}"
        H = latex(self.hamiltonian) if self.hamiltonian is not None else r"\text{" + tex_text("not found") + "}"
        return rf"N = {N},\quad d\tau = N\,dt,\quad \tilde H = {H}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        def s(x):
            return None if x is None else str(x)
        return {"exists": self.exists, "criterion": self.criterion, "shape": [str(r) for r in self.shape],
                "log_gradient": None if self.log_gradient is None else [str(w) for w in self.log_gradient],
                "algebraic_obstruction": [str(e) for e in self.algebraic_obstruction],
                "curl": [str(c) for c in self.curl], "multiplier": s(self.multiplier),
                "hamiltonian": s(self.hamiltonian), "measure_density": s(self.measure_density),
                "two_form": self.two_form,
                "closed_form_ansatz": self.closed_form_ansatz, **self.decision.to_dict()}


class _Verdicts:
    """Zero tests that remember whether each was decided exactly (a normal form) or numerically
    (:func:`anholo.algebra.vanishes` falls back to three random points, tolerance 1e-10)."""

    def __init__(self):
        self.exact = True

    def zero(self, e) -> bool:
        e = sp.sympify(e)
        if e == 0:
            return True
        if not size_exceeds(e, 400):
            try:
                K = _kernel.DiffField([e])
                return K.is_zero(K.convert(e))
            except _kernel.Unsupported:
                pass
            if sp.cancel(e) == 0:
                return True
        self.exact = False
        return vanishes(e)

    @property
    def decision(self) -> Decision:
        return EXACT if self.exact else Decision.numerical(3, 1e-10)


def _mechanical(red: ChaplyginReduction):
    """``(g, V)`` of ``l = ½ g(ṙ, ṙ) − V``, or a ReductionError."""
    rd = red.shape_velocities
    g, l = red.metric, red.reduced_lagrangian
    if any(e.has(*rd) for e in g):
        raise ReductionError("the reduced Lagrangian is not quadratic in the shape velocities; Chaplygin's "
                             "Hamiltonisation needs l = ½ g(r)(ṙ, ṙ) − V(r).")
    if any(not vanishes(l.diff(s).xreplace({x: 0 for x in rd})) for s in rd):
        raise ReductionError("the reduced Lagrangian has terms linear in the shape velocities; Chaplygin's "
                             "Hamiltonisation here assumes l = ½ g(ṙ, ṙ) − V(r).")
    V = -l.xreplace({s: 0 for s in rd})
    return g, V


def _independent_rows(A: sp.Matrix, symbols, m: int, seed: int = 7) -> list:
    """Indices of m rows of A independent at a random point (greedy, by numerical rank)."""
    from sympy.core.function import AppliedUndef

    rng = random.Random(seed)
    # undefined functions f(r) and their derivatives: independent random numbers at a point
    opaque = sorted({e for x in A for e in x.atoms(sp.Derivative, AppliedUndef)}, key=sp.default_sort_key)
    opaque.sort(key=lambda e: -sp.count_ops(e))  # derivatives before the functions inside them
    for _ in range(5):
        pt = random_point(symbols, rng)
        try:
            At = A.xreplace({e: sp.Float(rng.uniform(0.3, 0.9)) for e in opaque})
            An = np.array(At.xreplace(pt).evalf(), dtype=float)
        except (TypeError, ValueError):
            continue
        if not np.all(np.isfinite(An)):
            continue
        rows = []
        for i in range(An.shape[0]):
            trial = rows + [i]
            if np.linalg.matrix_rank(An[trial], tol=1e-9 * max(1.0, np.abs(An).max())) == len(trial):
                rows = trial
            if len(rows) == m:
                return rows
    raise ReductionError("the conditions for ∇ ln N have no m independent equations: the reduced metric is "
                         "degenerate (L is not regular with respect to D).")


_EXPONENTS = (sp.Rational(-1, 2), sp.S.NegativeOne, sp.Rational(1, 2), sp.S.One)


def _angles(exprs, coordinates) -> set:
    coords = set(coordinates)
    return {x for e in exprs for t in sp.sympify(e).atoms(sp.sin, sp.cos, sp.tan) for x in t.args[0].free_symbols
            if x in coords}


def _power_of_det(w, r, det_g):
    """``N = (det g)^s`` (s constant) if ``w = s ∇ ln det g``, else None."""
    logdet = [tidy(det_g.diff(x) / det_g) for x in r]
    idx = next((i for i, d in enumerate(logdet) if not vanishes(d)), None)
    if idx is None:
        return None
    s = tidy(w[idx] / logdet[idx])
    if s.free_symbols & set(r) or not all(vanishes(wi - s * d) for wi, d in zip(w, logdet)):
        return None
    base = sp.factor(det_g)
    if base.is_Pow and base.exp.is_Integer:   # (b^k)^s = b^(k s): the classical multipliers are b^(−1/2)
        return base.base ** (base.exp * s)
    return base ** s


def _power_of_ansatz(w, r, ansatz):
    """``N = F^t`` with ``F = Σ c_j b_j`` in ``ansatz`` and ``t`` in ±1/2, ±1: ``t ∇F = F w`` is linear in c;
    its coefficients in r (sin/cos reduced) give a linear system whose null space is F.  Checked by
    differentiation."""
    from ..algebra.coefficients import vanishing_conditions

    c = [sp.Dummy(f"c{j}") for j in range(len(ansatz.basis))]
    F = sp.Add(*[cj * b for cj, b in zip(c, ansatz.basis)])
    for t in _EXPONENTS:
        eqs = vanishing_conditions([t * F.diff(x) - F * wi for x, wi in zip(r, w)], r, factor=False)
        if not eqs:
            continue
        A, _ = sp.linear_eq_to_matrix(eqs, c)
        params = sorted(free_symbols(list(A)), key=sp.default_sort_key)
        pt = random_point(params, random.Random(3))
        try:
            An = np.array(A.xreplace(pt).evalf(), dtype=float)
        except (TypeError, ValueError):
            continue
        if An.shape[0] and np.linalg.matrix_rank(An, tol=1e-9 * max(1.0, np.abs(An).max())) == len(c):
            continue   # only F = 0
        null = A.nullspace(simplify=False)
        for vec in null:
            Fv = tidy(sp.Add(*[e * b for e, b in zip(vec, ansatz.basis)]))
            if Fv != 0 and all(vanishes(t * Fv.diff(x) - Fv * wi) for x, wi in zip(r, w)):
                return Fv ** t
    return None


def _multiplier(w, r, det_g, exprs):
    """``N`` with ``∇ ln N = w`` (w closed) in closed form, or None, and a description of what was tried:
    ``(det g)^s``; ``F^t`` with F in :func:`~anholo.analysis.invariant_measure.product_function_ansatz`
    of degree 2 and ``t`` in ±1/2, ±1; line integration of small ``w``.  Each is checked by
    differentiation."""
    from .invariant_measure import product_function_ansatz

    if all(vanishes(wi) for wi in w):
        return sp.S.One, "N = 1"
    N = _power_of_det(w, r, det_g)
    ansatz = product_function_ansatz(r, _angles(exprs, r), 2)
    tried = f"N = (det g)^s; N = F^t (t = ±1/2, ±1), F in {ansatz.description}; ∫ w"
    if N is not None:
        return N, tried
    N = _power_of_ansatz(w, r, ansatz)
    if N is not None:
        return N, tried
    if sum(sp.count_ops(wi) for wi in w) > 60:   # sympy's integrator can take minutes on large integrands
        return None, tried
    f = sp.S.Zero
    try:
        for i, x in enumerate(r):
            rest = tidy(w[i] - f.diff(x))
            if not vanishes(rest):
                f = f + sp.integrate(rest, x, manual=True)
    except (NotImplementedError, ValueError, TypeError):
        return None, tried
    if f.has(sp.Integral) or not all(vanishes(f.diff(x) - wi) for x, wi in zip(r, w)):
        return None, tried
    return sp.powsimp(sp.exp(f)), tried


def hamiltonise(system) -> Hamiltonisation:
    """Decide Chaplygin Hamiltonisation of the reduced system (module docstring).

    Parameters
    ----------
    system : ChaplyginSystem or ChaplyginReduction

    Raises
    ------
    ReductionError
        If the system has no shape coordinates, ``l`` is not ``½ g(ṙ, ṙ) − V(r)``, or ``B`` is not
        linear in ṙ.

    Examples
    --------
    >>> from anholo.system import System
    >>> h = hamiltonise(System.load("nonholonomic_particle").chaplygin())
    >>> h.multiplier
    1/sqrt(y**2 + 1)
    """
    red = system if isinstance(system, ChaplyginReduction) else ChaplyginReduction(system)
    r, rd, m = red.shape, red.shape_velocities, red.dim
    g, V = _mechanical(red)
    B = red.gyroscopic
    if any(not vanishes(sp.expand(B[i, j]) - sum(sp.expand(B[i, j]).diff(s) * s for s in rd))
           or any(sp.expand(B[i, j]).diff(s).has(*rd) for s in rd) for i in range(m) for j in range(m)):
        raise ReductionError("the gyroscopic term B is not linear in the shape velocities.")
    W = [sp.Dummy(f"w{a}") for a in range(m)]
    p = [sp.Add(*[g[a, b] * rd[b] for b in range(m)]) for a in range(m)]
    pr = sp.Add(*[p[a] * rd[a] for a in range(m)])
    wr = sp.Add(*[W[a] * rd[a] for a in range(m)])
    eqs = []
    for al in range(m):
        S = sp.expand(sp.Add(*[B[al, be] * rd[be] for be in range(m)]) - pr * W[al] + p[al] * wr)
        poly = sp.Poly(S, *rd)
        eqs.extend(poly.coeffs())
    A, b = sp.linear_eq_to_matrix(eqs, W)
    symbols = sorted(free_symbols(list(A) + list(b)), key=sp.default_sort_key)
    rows = _independent_rows(A, symbols, m)
    w = solve_square(A.extract(rows, list(range(m))), [b[i] for i in rows])
    w = tuple(tidy(e) for e in w)
    left = [tidy(sp.Add(*[A[i, j] * w[j] for j in range(m)]) - b[i]) for i in range(A.rows) if i not in rows]
    verdicts = _Verdicts()
    obstruction = tuple(e for e in left if not verdicts.zero(e))
    pt = tuple(sp.Symbol(f"pt_{s.name}", real=True) for s in r)
    if obstruction:
        return Hamiltonisation(False, _CRITERION, r, None, obstruction, (), None, None, pt, None, None,
                               verdicts.decision)
    curl = tuple(tidy(w[j].diff(r[i]) - w[i].diff(r[j])) for i in range(m) for j in range(i + 1, m))
    closed = all([verdicts.zero(c) for c in curl])
    two_form = all(vanishes(B[a, c] - (p[c] * w[a] - p[a] * w[c])) for a in range(m) for c in range(a + 1, m))
    if not closed:
        return Hamiltonisation(False, _CRITERION, r, w, (), curl, None, None, pt, None, two_form, verdicts.decision)
    curl = tuple(sp.S.Zero for _ in curl)
    det_g = reduce_if_cheap(determinant(g), 400)
    N, tried = _multiplier(w, r, det_g, list(g) + list(B))
    H = density = None
    if N is not None:
        adj = adjugate(g)
        kinetic = sp.Add(*[adj[i, j] * pt[i] * pt[j] for i in range(m) for j in range(m)]) / (2 * det_g)
        H = reduce_if_cheap(kinetic, 400) / N**2 + V
        density = sp.powsimp(N ** (m - 1) * det_g)
    return Hamiltonisation(True, _CRITERION, r, w, (), curl, N, H, pt, density, two_form, verdicts.decision, tried)

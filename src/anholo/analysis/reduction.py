"""Chaplygin reduction to the shape space Q/G and Chaplygin's reducing multiplier (docs/reduction.rst).

**Reduced equations.**  For a Chaplygin system (:class:`ChaplyginSystem`) whose
frame is made of the horizontal lifts ``X_α`` of shape coordinate fields
``∂/∂r^α`` and the fundamental fields ``Ẽ_a``, the quasi-velocities on C are
``v^α = ṙ^α`` (``θ^α = dr^α``).  The constrained Lagrangian ``L_c`` is
G-invariant, so it is a function ``l(r, ṙ)`` on ``T(Q/G)``, and Γ_nh projects to

    d/dt ∂l/∂ṙ^α − ∂l/∂r^α = B_αβ ṙ^β,     B_αβ = −p_a|_C R^a_αβ

(Koiller (1992); Bloch, Krishnaprasad, Marsden & Murray (1996); Bloch (2003) §5.8;
Crampin & Mestdag (2010) §6).  ``B`` is skew (the *gyroscopic* or curvature
term: it does no work, ``ṙ^α B_αβ ṙ^β = 0``); ``p_a R^a_αβ`` is G-invariant although
neither ``p_a`` nor ``R^a_αβ`` is for a non-abelian group (they transform
coadjointly and adjointly).  The group motion is reconstructed from ``v^a = 0``:
``q̇ = X_α ṙ^α``.

**Chaplygin's reducing multiplier (two shape degrees of freedom).**  Let
``l = ½ g_αβ(r) ṙ^α ṙ^β − V(r)``, ``p_α = g_αβ ṙ^β``, ``H = ½ g^αβ p_α p_β + V``.
With a new time ``dτ = N(r) dt`` and momenta ``p̃ = N p`` the reduced system is
Hamiltonian with ``H̃(r, p̃) = H(r, p̃/N)`` iff

    B_αβ = p_β ∂_α ln N − p_α ∂_β ln N

(differentiate ``p̃`` along the flow and compare with ``−∂H̃/∂r``).  For ``dim Q/G = 2``
``B`` has the single entry ``B_12 = C_γ(r) ṙ^γ`` and the condition is the linear system
``g_2γ w_1 − g_1γ w_2 = C_γ`` (γ = 1, 2; determinant ``det g ≠ 0``) for
``w = ∇ ln N``: a multiplier exists iff this ``w`` is closed, ``∂_1 w_2 = ∂_2 w_1``
(Chaplygin (1911); Fedorov & Jovanović (2004); Ehlers, Koiller, Montgomery & Rios
(2005)).  Then the Hamiltonian flow preserves ``dr ∧ dp̃`` and the original flow the
measure ``N dr ∧ dp = N det g dr ∧ dṙ`` — an invariant measure with a density
depending on r only; conversely Chaplygin's theorem obtains the multiplier from such
a measure.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from ..parsing import sympified
from ..algebra import free_symbols, numerically_zero, random_point, reduce_if_cheap, solve_square, tidy, vanishes
from ..algebra.printing import EquationDisplay, latex
from ..errors import ReductionError

__all__ = ["ChaplyginReduction", "ReducingMultiplier"]


def _invariant_part(expr, group_coordinates, what: str):
    """``expr`` with the group coordinates put to 0, after checking numerically that it does not
    depend on them (a G-invariant function of (q, v^α) on C depends on the shape only)."""
    expr = sympified(expr)
    moved = [g for g in group_coordinates if expr.has(g)]
    if not moved:
        return expr
    rng = random.Random(41)
    pts = [random_point(free_symbols([expr]), rng) for _ in range(3)]
    for g in moved:
        if not numerically_zero(expr.diff(g), pts, tol=1e-9):
            raise ReductionError(
                f"{what} depends on the group coordinate {g}: it is not G-invariant, so it does not descend to "
                "the shape space. Check the symmetry (generators) of the system."
            )
    return reduce_if_cheap(expr.xreplace({g: 0 for g in moved}), 400)


@dataclass(frozen=True)
class ReducingMultiplier:
    """Chaplygin's reducing multiplier for two shape degrees of freedom (module docstring).

    Attributes
    ----------
    exists : bool
        ``w`` is closed: a multiplier ``N(r)`` exists (locally).
    log_gradient : tuple
        ``w = ∇ ln N`` solved from ``g_2γ w_1 − g_1γ w_2 = C_γ``.
    curl : sympy.Expr
        ``∂_1 w_2 − ∂_2 w_1`` (zero iff ``exists``).
    multiplier : sympy.Expr or None
        ``N(r)`` (normalised to ``exp(∫w)``), None if no multiplier exists or the
        integral was not found in closed form.
    time_change : str
        ``"dτ = N dt"``.
    hamiltonian : sympy.Expr or None
        ``H̃(r, p̃) = H(r, p̃/N)`` in the symbols ``momenta``.
    momenta : tuple of Symbol
        ``p̃_α`` (named ``pt_<r>``).
    measure_density : sympy.Expr or None
        ``N det g``: density of the invariant measure of the reduced flow w.r.t. ``dr ∧ dṙ``.
    """

    exists: bool
    log_gradient: tuple
    curl: sp.Expr
    multiplier: sp.Expr
    time_change: str
    hamiltonian: sp.Expr
    momenta: tuple
    measure_density: sp.Expr

    def __bool__(self):
        return self.exists

    def __str__(self):
        if not self.exists:
            return (f"No reducing multiplier N(r): ∇ ln N would be {list(self.log_gradient)}, whose curl "
                    f"{self.curl} does not vanish.")
        N = self.multiplier if self.multiplier is not None else "exp(∫ w)"
        return (f"Chaplygin's reducing multiplier N = {N}: with {self.time_change} and p̃ = N p the reduced "
                f"system is Hamiltonian, H̃ = {self.hamiltonian}; invariant measure density N det g = "
                f"{self.measure_density} (w.r.t. dr dṙ).")

    def as_latex(self) -> str:
        if not self.exists:
            return r"\text{no reducing multiplier: } \partial_1 w_2 - \partial_2 w_1 = " + latex(self.curl)
        N = latex(self.multiplier) if self.multiplier is not None else r"e^{\int w}"
        return rf"N = {N},\quad d\tau = N\,dt,\quad \tilde H = {latex(self.hamiltonian)}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {"exists": self.exists, "log_gradient": [str(w) for w in self.log_gradient],
                "curl": str(self.curl),
                "multiplier": None if self.multiplier is None else str(self.multiplier),
                "time_change": self.time_change,
                "hamiltonian": None if self.hamiltonian is None else str(self.hamiltonian),
                "measure_density": None if self.measure_density is None else str(self.measure_density)}


@dataclass(frozen=True, eq=False)
class ChaplyginReduction(EquationDisplay):
    """The reduced equations of a Chaplygin system on Q/G (module docstring).

    Parameters
    ----------
    chaplygin : ChaplyginSystem
        With shape coordinates (its frame made of horizontal lifts of ``∂/∂r^α``).

    Raises
    ------
    ReductionError
        If the system has no shape coordinates, or ``L_c`` / the gyroscopic term
        depend on the group coordinates (the symmetry is not one of the system).

    Examples
    --------
    The nonholonomic particle ``ż = y ẋ`` with the translations in z (shape (x, y)):

    >>> from anholo.system import System
    >>> red = ChaplyginReduction(System.load("nonholonomic_particle").chaplygin())
    >>> red.reduced_lagrangian
    x_dot**2*y**2/2 + x_dot**2/2 + y_dot**2/2
    >>> red.gyroscopic[0, 1]
    x_dot*y
    >>> red.reducing_multiplier().multiplier
    1/sqrt(y**2 + 1)
    """

    chaplygin: object
    shape: tuple = field(init=False)
    group_coordinates: tuple = field(init=False)
    shape_velocities: tuple = field(init=False)

    def __post_init__(self):
        ch = self.chaplygin
        if ch.shape_coordinates is None:
            raise ReductionError(
                "the Chaplygin system has no shape coordinates (coordinates not moved by the group that "
                "parametrise D); pass shape_coordinates= to ChaplyginSystem to reduce it."
            )
        chart = ch.frame.chart
        shape = tuple(ch.shape_coordinates)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "group_coordinates", tuple(q for q in chart.coordinates if q not in shape))
        object.__setattr__(self, "shape_velocities", tuple(chart.velocities[chart.index(r)] for r in shape))

    @property
    def dim(self) -> int:
        """dim Q/G."""
        return len(self.shape)

    @cached_property
    def _to_shape(self) -> dict:
        return dict(zip(self.chaplygin.nonholonomic.free_velocities, self.shape_velocities))

    @cached_property
    def reduced_lagrangian(self) -> sp.Expr:
        """``l(r, ṙ) = L_c`` with ``v^α = ṙ^α``."""
        Lc = self.chaplygin.nonholonomic.constrained_lagrangian.xreplace(self._to_shape)
        return _invariant_part(sp.expand(Lc), self.group_coordinates, "the constrained Lagrangian L_c")

    @cached_property
    def gyroscopic(self) -> sp.ImmutableMatrix:
        """``B_αβ = −p_a|_C R^a_αβ`` as functions of ``(r, ṙ)`` (skew)."""
        ch, m, n = self.chaplygin, self.chaplygin.m, self.chaplygin.n
        R, p = ch.frame.structure, ch.momenta_on_C
        entries = {}
        for al in range(m):
            for be in range(al + 1, m):
                e = -sp.Add(*[p[a - m] * R[a][al][be] for a in range(m, n) if R[a][al][be] != 0])
                e = _invariant_part(tidy(e.xreplace(self._to_shape)), self.group_coordinates,
                                    "the gyroscopic term p_a R^a_αβ")
                entries[(al, be)] = e
        return sp.ImmutableMatrix(m, m, lambda i, j: entries[(i, j)] if i < j else (-entries[(j, i)] if j < i else 0))

    @cached_property
    def metric(self) -> sp.ImmutableMatrix:
        """``∂²l/∂ṙ^α∂ṙ^β``."""
        rd, l = self.shape_velocities, self.reduced_lagrangian
        return sp.ImmutableMatrix(self.dim, self.dim, lambda i, j: reduce_if_cheap(l.diff(rd[i], rd[j]), 400))

    def forces(self) -> tuple:
        """``B_αβ ṙ^β``: the right-hand sides of the reduced equations."""
        B, rd = self.gyroscopic, self.shape_velocities
        return tuple(sp.Add(*[B[al, be] * rd[be] for be in range(self.dim) if B[al, be] != 0]) for al in range(self.dim))

    def equations(self) -> list:
        """``d/dt ∂l/∂ṙ^α − ∂l/∂r^α = B_αβ ṙ^β`` with ``r_ddot`` symbols for the accelerations."""
        l, r, rd = self.reduced_lagrangian, self.shape, self.shape_velocities
        rdd = tuple(sp.Symbol(f"{s.name}_ddot", real=True) for s in r)
        out = []
        for al in range(self.dim):
            p = l.diff(rd[al])
            lhs = sp.Add(*[p.diff(rd[b]) * rdd[b] + p.diff(r[b]) * rd[b] for b in range(self.dim)]) - l.diff(r[al])
            out.append(sp.Eq(lhs, self.forces()[al], evaluate=False))
        return out

    @cached_property
    def accelerations(self) -> tuple:
        """``r̈^α(r, ṙ)`` solved from the reduced equations."""
        l, r, rd = self.reduced_lagrangian, self.shape, self.shape_velocities
        rhs = []
        for al in range(self.dim):
            p = l.diff(rd[al])
            rhs.append(l.diff(r[al]) - sp.Add(*[p.diff(r[b]) * rd[b] for b in range(self.dim)]) + self.forces()[al])
        sol = solve_square(self.metric, rhs)
        if sol is None:
            raise ReductionError("the reduced Lagrangian is singular (∂²l/∂ṙ∂ṙ not invertible): L is not regular "
                                 "with respect to D.")
        return tuple(reduce_if_cheap(e, 400) for e in sol)

    def reconstruction(self) -> dict:
        """``{g: ġ}`` for the group coordinates: ``q̇ = X_α ṙ^α`` (the connection, ``v^a = 0``)."""
        ch = self.chaplygin
        X, chart = ch.frame.vectors, ch.frame.chart
        return {g: sp.Add(*[X[al, chart.index(g)] * self.shape_velocities[al] for al in range(self.dim)])
                for g in self.group_coordinates}

    # --- Hamiltonisation ---------------------------------------------------------------------------
    def reducing_multiplier(self) -> ReducingMultiplier:
        """Chaplygin's reducing multiplier for ``dim Q/G = 2`` (module docstring).

        Raises
        ------
        ReductionError
            If ``dim Q/G ≠ 2``, or ``l`` is not of the form ``½ g(r)(ṙ, ṙ) − V(r)``, or
            ``B_12`` is not linear in ``ṙ``.
        """
        if self.dim != 2:
            raise ReductionError(
                f"Chaplygin's reducing multiplier theorem is for two shape degrees of freedom; this system has "
                f"{self.dim}. (For more, a multiplier needs extra conditions; see Fedorov & Jovanović (2004).)"
            )
        r, rd = self.shape, self.shape_velocities
        g = self.metric
        l = self.reduced_lagrangian
        if any(e.has(*rd) for e in g):
            raise ReductionError("the reduced Lagrangian is not quadratic in the shape velocities.")
        V = -l.xreplace({s: 0 for s in rd})
        linear = [l.diff(s).xreplace({x: 0 for x in rd}) for s in rd]
        if any(not vanishes(e) for e in linear):
            raise ReductionError("the reduced Lagrangian has terms linear in the shape velocities (gyroscopic "
                                 "terms of l); the reducing-multiplier test here assumes l = ½ g(ṙ, ṙ) − V(r).")
        B12 = sp.expand(self.gyroscopic[0, 1])
        C = [B12.diff(s) for s in rd]
        if any(c.has(*rd) for c in C) or not vanishes(B12 - C[0] * rd[0] - C[1] * rd[1]):
            raise ReductionError("the gyroscopic term B_12 is not linear in the shape velocities.")
        # g_2γ w_1 − g_1γ w_2 = C_γ
        M = sp.Matrix([[g[1, 0], -g[0, 0]], [g[1, 1], -g[0, 1]]])
        w = solve_square(M, C)
        w = tuple(tidy(e) for e in w)
        curl = tidy(w[1].diff(r[0]) - w[0].diff(r[1]))
        exists = vanishes(curl)
        time_change = "dτ = N dt"
        if not exists:
            return ReducingMultiplier(False, w, curl, None, time_change, None, (), None)
        det_g = reduce_if_cheap(g.det(), 400)
        logN = _potential(w, r, det_g)
        N = None if logN is None else sp.powsimp(sp.exp(logN))
        pt = tuple(sp.Symbol(f"pt_{s.name}", real=True) for s in r)
        H_tilde = density = None
        if N is not None:
            ginv = g.inv()
            kinetic = reduce_if_cheap(sp.Add(*[ginv[i, j] * pt[i] * pt[j] for i in range(2) for j in range(2)]) / 2, 400)
            H_tilde = kinetic / N**2 + V
            density = sp.powsimp(N * det_g)
        return ReducingMultiplier(True, w, sp.S.Zero, N, time_change, H_tilde, pt, density)

    def __str__(self):
        eqs = "\n".join(f"  {e.lhs} = {e.rhs}" for e in self.equations())
        return f"Chaplygin reduction to the shape space ({', '.join(map(str, self.shape))}):\n{eqs}"

    def to_dict(self) -> dict:
        return {"shape": [str(s) for s in self.shape], "reduced_lagrangian": str(self.reduced_lagrangian),
                "gyroscopic": [[str(e) for e in row] for row in self.gyroscopic.tolist()],
                "equations": [f"{e.lhs} = {e.rhs}" for e in self.equations()],
                "reconstruction": {str(k): str(v) for k, v in self.reconstruction().items()}}


def _potential(w, r, det_g):
    """f with ``∂f/∂r^α = w_α`` (w closed), or None if none is found in closed form.

    First the Chaplygin form ``f = s ln det g`` (s a constant: the classical densities are powers
    of det g), then sympy's manual integration, each checked by differentiation."""
    logdet = [tidy(det_g.diff(x) / det_g) for x in r]
    idx = next((i for i, d in enumerate(logdet) if not vanishes(d)), None)
    if idx is not None:
        s = tidy(w[idx] / logdet[idx])
        if not s.free_symbols & set(r) and all(vanishes(wi - s * d) for wi, d in zip(w, logdet)):
            return s * sp.log(det_g)
    try:
        f1 = sp.integrate(w[0], r[0], manual=True)
        rest = tidy(w[1] - f1.diff(r[1]))
        f2 = sp.integrate(rest, r[1], manual=True)
    except (NotImplementedError, ValueError, TypeError):
        return None
    f = f1 + f2
    if f.has(sp.Integral) or not all(vanishes(f.diff(x) - wi) for x, wi in zip(r, w)):
        return None
    return f

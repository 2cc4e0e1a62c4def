"""Invariant measures of the nonholonomic field of a large system, decided numerically.

On Maggi's route (:class:`~anholo.dynamics.maggi.MaggiSystem`) the field Γ_nh is a straight-line
program in the coordinates ``(q^A, v^α)`` of C with ``v^α = q̇^{f_α}`` — the free velocities of
Maggi's frame (:mod:`anholo.analysis.flow_program`).  A measure ``N dq^1 ∧ … ∧ dq^n ∧ dv^1 ∧ … ∧ dv^m``,
i.e. ``N dq ∧ dq̇^{f_1} ∧ … ∧ dq̇^{f_m}``, is invariant iff (Liouville)

    Γ_nh(N) + N div Γ_nh = 0,        div Γ_nh = Σ_A ∂q̇^A/∂q^A + Σ_α ∂Γ^α/∂v^α.

Densities are therefore relative to these coordinates: in another frame of D (another choice of
free velocities, or quasi-velocities ``v' = A(q) v``) the same measure has the density ``N / |det A|``.
The density ``det(g)^{1/2}``, with ``g_αβ`` the Hessian of the constrained Lagrangian in the free
velocities, is the same in every frame (``g' = A^{-T} g A^{-1}``): it is the invariant density of
the Chaplygin systems of the class of Crampin & Mestdag (2010), §7.1 (see also Fedorov & Jovanović
(2004)).  For the Chaplygin ball in Euler angles it is ``det(g)^{1/2} sin θ``, ``sin θ`` being the
density of the Haar measure of SO(3) in these angles (Chaplygin (1903), Borisov & Mamaev (2001)).

:func:`numerical_invariant_density` tries

1. the constant density: ``div Γ_nh = 0``;
2. ``N = det(g)^s``, ``N = Π_j b_j^{k_j}`` and ``N = det(g)^s Π_j b_j^{k_j}`` (times a constant),
   ``b_j`` the coordinates the field depends on (``sin q``, ``cos q`` for an angle):
   ``Γ_nh(ln N) + div Γ_nh = 0`` reads

       s tr(g⁻¹ Γ_nh(g)) + Σ_j k_j Γ_nh(b_j)/b_j = −div Γ_nh,

   linear in the exponents (``Γ_nh(ln det g) = tr(g⁻¹ Γ_nh(g))``); they are the least-squares solution
   over the random points, accepted if they are fractions with small denominators and the residual
   vanishes at every point; of several solutions the one with the fewest factors.

Every verdict is decided at random points (:class:`~anholo.algebra.decision.Decision`): a value
vanishes if it is at most the tolerance times the size of the terms it is the sum of (the terms
``∂q̇^A/∂q^A``, ``∂Γ^α/∂v^α``, ``s tr(g⁻¹ Γ_nh(g))``, ``k_j Γ_nh(b_j)/b_j``).  The exact route
(:func:`anholo.analysis.invariant_measure.search_invariant_density`, small systems) searches
``B^k F`` with F a polynomial in an ansatz, in normal forms.  docs/invariants.rst.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
import sympy as sp

from ..parsing import sympified
from ..algebra.decision import NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Decision, DomainError, vanishes_at
from ..algebra.program import Program
from ..dynamics.maggi import MaggiSystem
from ..errors import DimensionError, IrregularLagrangianError
from .flow_program import FlowProgram

__all__ = ["NumericalInvariantDensity", "numerical_invariant_density", "shared_determinant"]

#: Largest m for which det g is written by cofactors (else it is reported as ``det(g)``).
_COFACTOR_LIMIT = 4
#: Largest exponent of a factor of a density (the catalogue's are at most 2).
_MAX_EXPONENT = 4


def shared_determinant(entries, m: int):
    """``det`` of the m × m matrix of ``entries`` (row-major sympy expressions, possibly large and sharing
    subexpressions) by cofactors of symbols standing for the entries, the entries put back once each."""
    stand = [sp.Dummy(f"g{i}") for i in range(m * m)]
    table = {s: e for s, e in zip(stand, entries)}
    det = sp.Matrix(m, m, stand).det(method="laplace") if m else sp.S.One
    return det.xreplace(table)


def sample_points(samplers, count: int, tries: int = 20) -> list:
    """``[(point, [outputs of each sampler])]`` at ``count`` points drawn by the first sampler where every
    sampler's outputs are finite real numbers (a point outside a domain is redrawn)."""
    first, out = samplers[0], []
    for _ in range(count):
        for _ in range(tries):
            pt = first.point()
            try:
                out.append((pt, [s.at(pt) for s in samplers]))
                break
            except DomainError:
                continue
        else:
            raise DimensionError(f"no point of the real domain of the nonholonomic field found in {tries} random "
                                 "draws; give parameter values ([values]) in their domain.")
    return out


@dataclass(frozen=True, eq=False)
class NumericalInvariantDensity:
    """The result of :func:`numerical_invariant_density` (the fields of
    :class:`~anholo.analysis.invariant_measure.InvariantDensity` that apply, and how it was decided).

    Attributes
    ----------
    flow : FlowProgram
    density : sympy expression or None
        N with ``N dq ∧ dv^1 ∧ … ∧ dv^m`` invariant (``v^α = q̇^{f_α}``), up to a constant factor:
        1, ``det(g)^s Π b_j^{k_j}`` (det by cofactors of g's shared entries; ``det(g)`` named for m > 4),
        or None if no candidate is invariant.
    exponent : sympy Rational or None
        s of ``N = det(g)^s Π b_j^{k_j}`` (0 for the constant density).
    factors : sympy expression or None
        ``Π b_j^{k_j}`` (1 if none).
    divergence_free : bool
    searched : tuple of str
    family : str or None
        Where the density was found.
    residual : float
        The largest relative residual of the accepted (or best) candidate at the points.
    decision : Decision
    """

    flow: FlowProgram
    density: object
    exponent: object
    factors: object
    divergence_free: bool
    searched: tuple
    family: str | None
    residual: float
    decision: Decision

    constant_density_conditions = ()
    complete = True

    @property
    def found(self) -> bool:
        return self.density is not None

    @cached_property
    def divergence_program(self) -> Program:
        return self.flow.divergence()

    @cached_property
    def divergence(self):
        """``div Γ_nh`` as a sympy expression sharing its subexpressions (converted on first use)."""
        return self.flow.to_sympy(self.divergence_program)[0]

    @cached_property
    def hessian(self) -> sp.Matrix:
        """``g_αβ`` (sympy, shared subexpressions)."""
        m = self.flow.maggi.m
        return sp.Matrix(m, m, self.flow.to_sympy(self.flow.program_of(self.flow.hessian())))

    @property
    def measure(self) -> str:
        M = self.flow.maggi
        return "N dq ∧ " + " ∧ ".join(f"d{v}" for v in M.free_velocities) + " on C, " + ", ".join(
            f"{v} = {c.name}_dot" for v, c in zip(M.free_velocities, M.free_coordinates))

    def __str__(self):
        head = ("div Gamma_nh = 0: the constant density" if self.divergence_free else
                (f"invariant density N = {self.density}" if self.found else
                 "no invariant density in: " + "; ".join(self.searched)))
        return f"{head} ({self.decision})"

    def to_dict(self) -> dict:
        return {"density": None if self.density is None else str(self.density),
                "exponent": None if self.exponent is None else str(self.exponent),
                "divergence_free": self.divergence_free, "searched": list(self.searched), "family": self.family,
                "residual": self.residual, **self.decision.to_dict()}


def numerical_invariant_density(maggi: MaggiSystem, points: int = NUMERICAL_POINTS,
                                tolerance: float = NUMERICAL_TOLERANCE, *, values=None, seed: int = 0,
                                max_denominator: int = 4) -> NumericalInvariantDensity:
    """Search an invariant density of Γ_nh of a large system, decided at random points.

    The candidates, in order: ``N = 1`` (``div Γ_nh = 0``); ``N = det(g)^s``; ``N = Π_j b_j^{k_j}``;
    ``N = det(g)^s Π_j b_j^{k_j}``, with ``g_αβ`` the Hessian of the constrained Lagrangian in the free
    velocities and ``b_j`` the coordinates the field depends on (``sin q`` and ``cos q`` for an angle).
    Liouville's equation ``Γ_nh(ln N) = −div Γ_nh`` is linear in the exponents,

        s tr(g⁻¹ Γ_nh(g)) + Σ_j k_j Γ_nh(b_j)/b_j = −div Γ_nh,

    solved by least squares over the points; a solution is accepted if every exponent is a fraction
    with at most ``max_denominator`` as denominator and the residual with these exponents vanishes at
    every point (relative to the size of its terms).

    The coordinates of C are those of Maggi's frame, ``(q, v^α = q̇^{f_α})``, so the density is relative
    to ``dq ∧ dq̇^{f_1} ∧ … ∧ dq̇^{f_m}`` (module docstring); ``det(g)^{1/2}`` is the density of
    Fedorov & Jovanović (2004) and Crampin & Mestdag (2010), §7.1, in any frame.

    Parameters
    ----------
    maggi : MaggiSystem
    points : int
        Random points for the divergence verdict; the exponent fits use ``points`` more than the number
        of exponents (the decision records the largest number used).
    tolerance : float
        Relative tolerance of a vanishing value.
    values : dict, optional
        Parameter values (by name); default the system's ``values`` (others are random).
    seed : int
    max_denominator : int
    """
    flow = FlowProgram.of(maggi)
    m, n = maggi.m, maggi.n
    terms = flow.divergence_terms()
    g = flow.hessian()
    kin = Program(flow.args, flow.field.pairs, flow.q_dot).pruned()
    joint = flow.joined(terms, flow.program_of(g), flow.along(g), kin)
    factors = _factors(flow)
    count = max(points, 1 + len(factors) + points)
    sampler = flow.sampler(joint, values=values, seed=seed)
    pts = sample_points([sampler], count)
    nt = len(terms.outputs)
    rows = [vals for _, (vals,) in pts]
    divs = np.array([float(np.sum(r[:nt])) for r in rows])
    div_scales = np.array([float(np.sum(np.abs(r[:nt]))) for r in rows])
    searched = ["constant density (div Gamma_nh = 0)"]
    if vanishes_at(divs[:points], div_scales[:points], tolerance):
        return NumericalInvariantDensity(flow, sp.S.One, sp.S.Zero, sp.S.One, True, tuple(searched), "constants",
                                         _worst(divs[:points], div_scales[:points]), Decision.numerical(points, tolerance))
    decision = Decision.numerical(count, tolerance)
    # the columns: Γ(ln det g) = tr(g⁻¹ Γ(g)), then Γ(ln b_j) = (∂b_j/∂q^A q̇^A)/b_j
    cols, col_scales = [], []
    for pt, r in zip(pts, rows):
        G = r[nt:nt + m * m].reshape(m, m)
        try:
            S = np.linalg.solve(G, r[nt + m * m:nt + 2 * m * m].reshape(m, m))
        except np.linalg.LinAlgError:
            raise IrregularLagrangianError(
                "the Hessian g of the Lagrangian in the free velocities is singular at a random point of C: "
                "every allowed velocity must carry kinetic energy (check the Lagrangian and the constraints).") from None
        qd = r[nt + 2 * m * m:nt + 2 * m * m + n]
        qv = pt[0]
        row = [float(np.trace(S))] + [f.log_rate(qv, qd) for f in factors]
        cols.append(row)
        col_scales.append([float(np.sum(np.abs(np.diag(S))))] + [abs(x) for x in row[1:]])
    cols, col_scales = np.array(cols), np.array(col_scales)
    families = [("det(g)^s, g = the Hessian of L_c in the free velocities", [0])]
    if factors:
        names = ", ".join(f.text for f in factors)
        families += [(f"products of powers of {names}", list(range(1, 1 + len(factors)))),
                     (f"det(g)^s times products of powers of {names}", list(range(1 + len(factors))))]
    worst = _worst(divs, div_scales)
    for label, idx in families:
        searched.append(label)
        found = _fit(cols[:, idx], col_scales[:, idx], divs, div_scales, tolerance, max_denominator)
        if found is None:
            continue
        exps, worst = found
        if all(e == 0 for e in exps):
            continue
        # fewer factors if they suffice (a product of powers that is a first integral can be left out)
        for j in reversed(range(len(idx))):
            if exps[j] == 0 or sum(1 for e in exps if e != 0) == 1:
                continue
            keep = [i for i in range(len(idx)) if i != j and exps[i] != 0]
            fewer = _fit(cols[:, [idx[i] for i in keep]], col_scales[:, [idx[i] for i in keep]], divs, div_scales,
                         tolerance, max_denominator)
            if fewer is not None and any(e != 0 for e in fewer[0]):
                exps = [sp.S.Zero] * len(idx)
                for i, e in zip(keep, fewer[0]):
                    exps[i] = e
                worst = fewer[1]
        ex = dict(zip(idx, exps))
        product = sp.Mul(*[factors[j - 1].expr ** e for j, e in ex.items() if j])
        N = _density(flow, ex.get(0, sp.S.Zero)) * product
        return NumericalInvariantDensity(flow, N, ex.get(0, sp.S.Zero), product, False, tuple(searched), label,
                                         worst, decision)
    return NumericalInvariantDensity(flow, None, None, None, False, tuple(searched), None, worst, decision)


@dataclass(frozen=True)
class _Factor:
    """A factor ``b(q)`` of the product ansatz: a coordinate, or the sine or cosine of an angle."""

    index: int
    kind: str  # "q", "sin", "cos"
    expr: object
    text: str

    def log_rate(self, point: dict, qdot) -> float:
        """``Γ_nh(ln b) = b'(q) q̇/b``."""
        x = point[self.text.split("(")[-1].rstrip(")")]
        rate = float(qdot[self.index])
        if self.kind == "q":
            return rate / x
        if self.kind == "sin":
            return rate * np.cos(x) / np.sin(x)
        return -rate * np.sin(x) / np.cos(x)


def _factors(flow: FlowProgram) -> list:
    """The factors ``b_j`` for the coordinates the field depends on: ``q`` or, for an angle (a coordinate
    inside a sine or cosine of L or of the constraints), ``sin q`` and ``cos q``."""
    M = flow.maggi
    used = {s for _, e in flow.field.pairs for s in e.free_symbols} | {s for e in flow.field.outputs
                                                                       for s in e.free_symbols}
    angles = set()
    for e in (M.lagrangian, *M.constraints):
        for f in sympified(e).atoms(sp.sin, sp.cos, sp.tan):
            angles |= {s.name for s in f.args[0].free_symbols}
    out = []
    for i, (qe, qs) in enumerate(zip(flow.q, M.chart.coordinates)):
        if qe not in used:
            continue
        if qs.name in angles:
            out += [_Factor(i, "sin", sp.sin(qs), f"sin({qs.name})"), _Factor(i, "cos", sp.cos(qs), f"cos({qs.name})")]
        else:
            out.append(_Factor(i, "q", qs, qs.name))
    return out


def _fit(A, A_scales, divs, div_scales, tolerance, max_denominator):
    """``(exponents, worst residual)`` of ``A k = −div`` (least squares, rationalised), or None.  A column
    that vanishes at every point (a factor constant along the flow) gets the exponent 0."""
    live = [j for j in range(A.shape[1]) if not vanishes_at(A[:, j], A_scales[:, j], tolerance)]
    if not live:
        return None
    k = np.zeros(A.shape[1])
    k[live], *_ = np.linalg.lstsq(A[:, live], -divs, rcond=None)
    exps = []
    for x in k:
        frac = Fraction(float(x)).limit_denominator(max_denominator)
        if abs(float(frac) - x) > 1e-6 * max(1.0, abs(x)) or abs(frac) > _MAX_EXPONENT:
            return None
        exps.append(sp.Rational(frac.numerator, frac.denominator))
    kf = np.array([float(e) for e in exps])
    resid = A @ kf + divs
    scales = np.maximum(np.abs(A_scales) @ np.abs(kf), div_scales)
    if not vanishes_at(resid, scales, tolerance):
        return None
    return exps, _worst(resid, scales)


def _worst(values, scales) -> float:
    return float(max((abs(v) / max(1.0, abs(s)) for v, s in zip(values, scales)), default=0.0))


def _density(flow: FlowProgram, s) -> sp.Expr:
    """``det(g)^s``: the determinant by cofactors of g's shared entries for m ≤ 4, else ``det(g)`` named."""
    m = flow.maggi.m
    if s == 0:
        return sp.S.One
    if m > _COFACTOR_LIMIT:
        return sp.Function("det")(sp.Symbol("g")) ** s
    entries = flow.to_sympy(flow.program_of(flow.hessian()))
    return shared_determinant(entries, m) ** s

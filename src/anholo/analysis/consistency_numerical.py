"""Consistency of the nonholonomic and vakonomic dynamics of a large system, decided at random points.

The conditions are those of :mod:`anholo.analysis.consistency` (Crampin & Mestdag (2010), Thm. 2 and
Cor. 1; docs/consistency.rst), in the adapted frame of Maggi's route
(:class:`~anholo.dynamics.maggi.MaggiSystem`: ``X_α = ∂_{f_α} + C^P_α ∂_P``, ``X_a = ∂_{P_a}``,
coordinates ``(q, v^α)`` on C).  For a section ``λ_a = σ_a(q, v)`` (frame components, w.r.t. the
constraint forms ``θ^a = dq^{P_a} − C^{P_a}_α dq^{f_α}``):

* weak (Thm. 2): ``W_α(σ) = σ_a R^a_αβ v^β = 0`` on C — always true for ``σ = 0``;
* strong (Cor. 1): in addition ``S_b(σ) = Γ_nh(σ_b) + μ_b + σ_a R^a_bβ v^β = 0`` on C,

with ``μ_b`` the frame multipliers and ``R`` the structure functions of the frame.  The residuals
are evaluated from the straight-line program of Γ_nh (no explicit solution is formed: ``v̇`` and
``μ`` come from an LU solve of the implicit form at each point), at random points of C (the parameters
at the system file's ``[values]`` when it gives them, random otherwise).  The sections tried are ``σ = −p`` (``p_a = ∂L/∂q̇^{P_a}`` on C, the natural
section of a Chaplygin system), ``σ = 0`` (strong iff ``μ ≡ 0``), and a search in the ansatz
``σ_a = s (−p_a) + c_a + c_aβ v^β`` with constants ``s, c``: the residuals are affine in the
constants, so the search is one least-squares problem over the stacked points (a section exists
iff its residual vanishes).  Verdicts say they were decided numerically
(:class:`~anholo.algebra.decision.Decision`): a nonzero residual at a point proves "not strongly
consistent" for that section (for generic parameters); vanishing at every point is the
probabilistic "holds" of the Schwartz–Zippel argument.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ..algebra.decision import Decision, NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Sampler, DomainError
from ..algebra.engine import se, to_engine
from ..algebra.presentation import Presenter, ReportBlock
from ..algebra.printing import tex_text
from ..algebra.program import Program
from ..dynamics.maggi import MaggiSystem
from ..errors import ConstraintError

__all__ = ["NumericalConsistency", "numerical_consistency"]


def _evaluator(nh: MaggiSystem):
    """A program with outputs q̇ (n), M, F (with multipliers), R^a_{iβ} (k × n × m), p_a on C (k) and
    ∂p_a/∂(q, v) (k × (n + m)); returns ``(program, layout)``."""
    n, m = nh.n, nh.m
    k = n - m
    base = nh.program(multipliers=True)
    pairs, red = nh._base
    P = nh._parts
    dep = nh._cache["dep"]
    u = nh._cache["u"]
    L = to_engine(nh.lagrangian)
    on_C = dict(zip(u, P["qdot"]))
    p = [L.diff(u[Pc]).xreplace(on_C) for Pc in dep]
    R = red["R"]
    Rrows = [R[(a * n + i) * n + be] for a in range(m, n) for i in range(n) for be in range(m)]
    q = list(nh._cache["q"])
    v = [se.Symbol(s.name) for s in nh.free_velocities]
    t = nh._cache["t"]
    variables = q + v + ([t] if t is not None else [])
    extra = Program(base.args, tuple(pairs), ()).with_outputs(p, prefix="pc")
    dprog, _ = extra.derivatives(variables)
    outputs = tuple(base.outputs) + tuple(Rrows) + tuple(dprog.outputs)
    # base's pairs are _base's pairs (the same list); dprog adds derivative definitions after them
    prog = Program(base.args, tuple(dprog.pairs), outputs)
    layout = {"qdot": n, "M": (m + k) ** 2, "F": m + k, "R": k * n * m, "p": k, "dp": k * len(variables)}
    return prog, layout, len(variables)


@dataclass(frozen=True)
class _Sample:
    v: np.ndarray
    qdot: np.ndarray
    vdot: np.ndarray
    mu: np.ndarray
    R: np.ndarray  # R[a, i, β]
    p: np.ndarray
    dp_along: np.ndarray  # Γ_nh(p_a)


def _samples(nh: MaggiSystem, count: int, seed: int) -> list:
    prog, lay, nvar = _evaluator(nh)
    n, m = nh.n, nh.m
    k = n - m
    free = {str(a) for a in prog.args[:nh.n + nh.m]}  # q and v random; parameters at the [values] if given
    sampler = Sampler(prog, {k: v for k, v in (nh.values or {}).items() if str(k) not in free}, seed=seed)
    vnames = [s.name for s in nh.free_velocities]
    out = []
    for point, vals in sampler.samples(count):
        pos = 0
        chunks = {}
        for key in ("qdot", "M", "F", "R", "p", "dp"):
            chunks[key] = vals[pos:pos + lay[key]]
            pos += lay[key]
        M = chunks["M"].reshape(m + k, m + k)
        x = np.linalg.solve(M, chunks["F"])
        vdot, mu = x[:m], x[m:]
        dp = chunks["dp"].reshape(k, nvar)
        rates = np.concatenate([chunks["qdot"], vdot, [1.0] * (nvar - n - m)])
        out.append(_Sample(np.array([point[a] for a in vnames]), chunks["qdot"], vdot, mu,
                           chunks["R"].reshape(k, n, m), chunks["p"], dp @ rates))
    return out


def _residual_rows(s: _Sample, m: int, k: int, columns: list) -> tuple:
    """``(A, b, scale)`` at one sample: the residuals ``(W_α, S_b)`` of the section ``Σ_j c_j σ^(j)`` are
    ``A c + b`` (``b``: the μ term of S_b); ``columns`` are the basis sections, each a function of the
    sample giving ``(σ_a, Γ_nh(σ_a))``."""
    A = np.zeros((m + k, len(columns)))
    for j, col in enumerate(columns):
        sig, rate = col(s)
        # W_α = σ_a R^a_αβ v^β ; S_b = Γ(σ_b) + σ_a R^a_bβ v^β   (frame index of X_b is m + b)
        Rv = s.R @ s.v  # (k, n): R^a_{i β} v^β
        A[:m, j] = sig @ Rv[:, :m]
        A[m:, j] = rate + sig @ Rv[:, m:]
    b = np.concatenate([np.zeros(m), s.mu])
    scale = np.abs(b).max(initial=0.0) + np.abs(A).max(initial=0.0)
    return A, b, scale


@dataclass(frozen=True, eq=False)
class NumericalConsistency(ReportBlock):
    """The consistency verdict of a large system (module docstring), decided at random points.

    Attributes
    ----------
    weak : bool
        True: ``σ = 0`` is weakly consistent (Thm. 2; exact, not sampled).
    strong : bool
        True if a tried section is strongly consistent at every point, False if none is.
    section : str
        The working section, or the first one tried.
    reason : str
    tried : tuple of (name, holds, largest relative residual)
    decision : Decision
    """

    weak: bool
    strong: bool
    section: str
    reason: str
    tried: tuple
    decision: Decision

    key = "consistency"
    title = "Consistency of the nonholonomic and vakonomic dynamics"

    def to_dict(self) -> dict:
        return {"weak": self.weak, "strong": self.strong, "section": self.section, "reason": self.reason,
                "sections_tried": [{"section": nm, "holds": h, "largest_relative_residual": r}
                                   for nm, h, r in self.tried],
                "route": "maggi", **self.decision.to_dict()}

    def payload(self, p: Presenter) -> dict:
        return {"consistency": self.to_dict()}

    def lines(self) -> list:
        out = ["weakly consistent: yes (section 0, Thm. 2)",
               f"strongly consistent: {'yes' if self.strong else 'no'} (section {self.section}); {self.decision}",
               f"  {self.reason}"]
        out += [f"  section {nm}: {'works' if h else 'fails'} (largest relative residual {r:.1e})"
                for nm, h, r in self.tried]
        return out

    def text_lines(self, p: Presenter) -> list:
        return self.lines()

    def latex_lines(self, p: Presenter) -> list:
        return [r"\begin{itemize}", r"\item weakly consistent: yes (section $\sigma = 0$, Thm.~2);",
                rf"\item strongly consistent: {'yes' if self.strong else 'no'} (section {tex_text(self.section)}; "
                f"{tex_text(str(self.decision))}).", r"\end{itemize}", tex_text(self.reason)]

    def summary(self) -> list:
        return [f"weakly consistent: yes; strongly consistent: {'yes' if self.strong else 'no'} "
                f"(section {self.section}; decided numerically)"]


def numerical_consistency(nh: MaggiSystem, points: int = NUMERICAL_POINTS, tolerance: float = NUMERICAL_TOLERANCE,
                          seed: int = 0) -> NumericalConsistency:
    """Weak and strong consistency of a large system (module docstring), decided at random points.

    Raises
    ------
    ConstraintError
        For affine constraints (consistency is decided for linear ones, as on the exact route).
    """
    if nh.is_affine:
        raise ConstraintError("consistency is decided for linear constraints; these are affine")
    n, m = nh.n, nh.m
    k = n - m
    if k == 0:
        raise ConstraintError("the system has no constraints: there is nothing to compare")
    columns = [lambda s: (-s.p, -s.dp_along)]  # −p
    names = ["-p"]
    for a in range(k):
        e = np.eye(k)[a]
        columns.append(lambda s, e=e: (e, np.zeros(k)))
        names.append(f"c{a + 1}")
        for be in range(m):
            columns.append(lambda s, e=e, be=be: (e * s.v[be], e * s.vdot[be]))
            names.append(f"c{a + 1}_{be + 1}")
    unknowns = len(columns)
    count = max(points, -(-2 * unknowns // (m + k)))
    try:
        samples = _samples(nh, count, seed)
    except DomainError as exc:
        raise ConstraintError(f"consistency could not be decided numerically: {exc}") from None
    rows = [_residual_rows(s, m, k, columns) for s in samples]
    decision = Decision.numerical(len(samples), tolerance)

    def check(c):
        worst = 0.0
        for A, b, scale in rows:
            r = A @ c + b
            worst = max(worst, np.abs(r).max(initial=0.0) / max(1.0, scale))
        return worst <= tolerance, worst

    tried = []
    minus_p = np.zeros(unknowns)
    minus_p[0] = 1.0
    for name, c in (("-p", minus_p), ("0", np.zeros(unknowns))):
        holds, worst = check(c)
        tried.append((name, bool(holds), float(worst)))
    works = [t for t in tried if t[1]]
    if works:
        name = works[0][0]
        return NumericalConsistency(True, True, name, f"the section {name} is strongly consistent (Cor. 1) at "
                                    f"{len(samples)} random points of C.", tuple(tried), decision)
    A = np.vstack([r[0] for r in rows])
    b = np.concatenate([r[1] for r in rows])
    c, *_ = np.linalg.lstsq(A, -b, rcond=None)
    holds, worst = check(c)
    search = "s(-p) + c (c of degree <= 1 in v, constant coefficients)"
    if holds:
        terms = [f"{c[j]:.12g}*{nm}" for j, nm in enumerate(names) if abs(c[j]) > 1e-12]
        name = "section " + (" + ".join(terms) or "0")
        tried.append((search, True, float(worst)))
        return NumericalConsistency(True, True, search, f"a strongly consistent section was found in the ansatz "
                                    f"{search}: {name} (least squares over {len(samples)} random points; the "
                                    "coefficients c_a multiply the frame multiplier directions, c_a_b also v^b).",
                                    tuple(tried), decision)
    tried.append((search, False, float(worst)))
    return NumericalConsistency(
        True, False, "-p",
        "no tried section is strongly consistent (-p and 0 fail; σ = 0 fails iff the multipliers μ do not "
        f"vanish; the search {search} found none: its least-squares residual does not vanish)"
        + (" at the parameters' [values]." if nh.values else " for generic parameter values (random)."),
        tuple(tried), decision)

"""Linearisation of a field about an equilibrium or a steady motion, from its implicit form.

A field on C in the state ``s = (q, v^α)`` (the nonholonomic field; the
Euler–Lagrange field with every quasi-velocity free) reads ``q̇ = K(s)``,
``M(s) v̇ = F(s)`` (:meth:`~anholo.dynamics.nonholonomic.NonholonomicSystem.implicit_form`).
About a reference state ``s₀`` — an equilibrium, or a steady motion such as
upright straight running at speed v, where the ignored (cyclic) coordinates move
but the chosen states are stationary — the variational equation in the chosen
states ``z ⊂ s`` is ``δż = A δz`` with

    A = [[∂K/∂z], [M⁻¹ (∂F/∂z − (∂M/∂z) v̇₀)]]   at s₀,   v̇₀ = M⁻¹ F (s₀),

which needs no symbolic inverse: ``∂M/∂z`` and ``∂F/∂z`` are differentiated
symbolically (and compiled), ``M`` is solved numerically at ``s₀``.  The
eigenvalues of ``A`` decide linear stability (e.g. the weave and capsize speeds of
the Whipple bicycle, Meijaard, Papadopoulos, Ruina & Schwab 2007).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..algebra.codegen import expression_function
from ..algebra.expressions import free_symbols
from ..algebra.program import Program
from ..parsing import sympified
from ..dynamics.maggi import MaggiSystem
from ..errors import (DimensionError, InitialStateError, IrregularLagrangianError, MissingParameterError,
                      SingularFrameError)

__all__ = ["Linearization", "LinearizationProblem", "STABILITY_THRESHOLD", "stability_verdict", "stability_criterion",
           "eigenvalue_order", "track_branches", "follow_branches"]

#: Threshold τ on the real parts of the eigenvalues for a verdict (absolute, in 1/time): a real part within τ of 0
#: counts as 0 (rounding of ``numpy.linalg.eigvals`` is about 1e-15 times the size of ``A``).
STABILITY_THRESHOLD = 1e-9


def stability_verdict(eigenvalues, threshold: float = STABILITY_THRESHOLD) -> str:
    """The linear verdict of a spectrum: ``"stable"`` if ``max Re λ < −τ`` (every small perturbation decays
    exponentially: asymptotic stability of the chosen states), ``"unstable"`` if
    ``max Re λ > τ`` (one grows exponentially), else ``"marginal"``: an eigenvalue on the imaginary axis (within τ),
    e.g. all eigenvalues zero or a conserved quantity's zero eigenvalue next to an oscillation — the linearisation
    does not decide (Bloch (2003), Ch. 8; the stable speed range of the Whipple bicycle, Meijaard et al. (2007),
    is the range where every real part is negative).

    >>> stability_verdict([-1.0, -2.0 + 1j, -2.0 - 1j]), stability_verdict([0.0, 0.0]), stability_verdict([1e-3])
    ('stable', 'marginal', 'unstable')
    """
    ev = np.asarray(eigenvalues, complex)
    if ev.size == 0:
        return "marginal"
    top = float(np.max(ev.real))
    return "stable" if top < -threshold else "unstable" if top > threshold else "marginal"


def stability_criterion(threshold: float = STABILITY_THRESHOLD) -> str:
    """The rule of :func:`stability_verdict` as one line (tables, JSON, figure legends)."""
    return (f"stable: max Re λ < -{threshold:g}; marginal: |max Re λ| ≤ {threshold:g}; "
            f"unstable: max Re λ > {threshold:g}")


def eigenvalue_order(eigenvalues, threshold: float = STABILITY_THRESHOLD) -> np.ndarray:
    """The order in which a spectrum is listed: decreasing real part, real parts within ``threshold`` (τ of
    :func:`stability_verdict`) of the largest of their group counted equal, then decreasing imaginary part —
    so that rounding of real parts that are 0 (``±1e-16``) does not reorder an oscillation's pair ``±iω``
    and the zero eigenvalues from one point to the next.

    >>> ev = np.array([1e-17, -2e-16 + 2j, 0.5, 3e-17 - 2j])
    >>> [complex(round(e.real, 3) + 0.0, round(e.imag, 3)) for e in ev[eigenvalue_order(ev)]]
    [(0.5+0j), 2j, 0j, -2j]
    """
    ev = np.asarray(eigenvalues, complex).ravel()
    if ev.size == 0:
        return np.zeros(0, dtype=int)
    by_real = np.argsort(-ev.real, kind="stable")
    key = np.empty(ev.size)
    head = None
    for i in by_real:  # groups of real parts within τ of the group's largest
        if head is None or head - ev.real[i] > threshold:
            head = ev.real[i]
        key[i] = head
    return np.lexsort((-ev.imag, -key))


def track_branches(spectra: Sequence) -> np.ndarray:
    """Eigenvalues over a sweep as continuous branches: ``out[i, k]`` is branch ``k`` at sweep point ``i``
    (NaN where a point has fewer eigenvalues).

    The eigenvalues of point ``i`` are assigned to the branches by minimum total distance
    ``Σ_k |λ_k(i) − p_k|`` (the Hungarian method, ``scipy.optimize.linear_sum_assignment``; Kuhn (1955)), with
    ``p_k`` the branch's value predicted by linear extrapolation from its last two points (its last point at
    the start), so that two branches crossing between sweep points are followed through the crossing, not
    swapped — sorting by real part, as an eigenvalue solver's output is, jumps between branches whenever two
    real parts cross.  Ties go to the value nearer the branch's extrapolation one step further (two branches
    predicted to meet cross), then to the listing order of :func:`eigenvalue_order` at the point (a real pair
    turning into a complex pair ``±iω``, both equally near: ``+iω`` stays on the first branch).

    >>> b = track_branches([[1, -1], [0.5, -0.5], [-0.01, 0.01], [-0.5, 0.5]])
    >>> b[:, 0].real.round(2).tolist()
    [1.0, 0.5, -0.01, -0.5]
    """
    from scipy.optimize import linear_sum_assignment

    rows = [np.asarray(s, complex).ravel() for s in spectra]
    width = max((r.size for r in rows), default=0)
    out = np.full((len(rows), width), np.nan + 0j, dtype=complex)
    if not rows or width == 0:
        return out
    first = rows[0]
    out[0, :first.size] = first
    for i in range(1, len(rows)):
        cur = rows[i]
        prev = out[i - 1]
        pred, ahead = prev.copy(), prev.copy()
        if i >= 2:
            back = out[i - 2]
            ok = np.isfinite(back) & np.isfinite(prev)
            pred[ok] = 2 * prev[ok] - back[ok]
            ahead[ok] = 3 * prev[ok] - 2 * back[ok]
        known = np.isfinite(pred)
        if cur.size == 0:
            continue
        cost = np.abs(cur[:, None] - np.where(known, pred, 0)[None, :])
        # tie-breaks far below any distance that matters: first the value one step further along the branch
        # (two branches meeting at one predicted value cross rather than bounce), then the listing order (the
        # k-th listed eigenvalue prefers branch k: a real pair turning into ±iω keeps +iω first)
        cost = cost + 1e-6 * np.abs(cur[:, None] - np.where(known, ahead, 0)[None, :])
        rank = np.empty(cur.size)
        rank[eigenvalue_order(cur)] = np.arange(cur.size)
        scale = max(float(np.max(np.abs(cur))), 1.0)
        cost = cost + 1e-12 * scale * np.abs(rank[:, None] - np.arange(width)[None, :]) / max(width, 1)
        cost[:, ~known] = 1e300  # a branch without a value is taken last
        rr, cc = linear_sum_assignment(cost)
        out[i, cc] = cur[rr]
    return out


def follow_branches(linearizations: Sequence) -> list:
    """Linearisations over a sweep with their eigenvalues listed branch by branch (:func:`track_branches`):
    the k-th eigenvalue of every point lies on one continuous branch, the first point's in the order of
    :func:`eigenvalue_order` — a table's column, or a JSON list's k-th entry, follows one eigenvalue through
    the sweep instead of jumping between branches where real parts cross or are 0.  The points are taken in the
    order given (the order of the sweep); the verdicts do not depend on the order."""
    import dataclasses

    lins = list(linearizations)
    if len(lins) < 2 or len({np.asarray(r.eigenvalues).size for r in lins}) != 1:
        return lins
    branches = track_branches([r.eigenvalues for r in lins])
    return [dataclasses.replace(r, eigenvalues=branches[i].copy()) for i, r in enumerate(lins)]


@dataclass(frozen=True)
class Linearization:
    """``δż = A δz`` at one reference state: the matrix, its eigenvalues and the residual rates.

    Attributes
    ----------
    states : tuple of Symbol
        ``z``, the chosen states.
    A : ndarray
    eigenvalues : ndarray
        At one point in the order of :func:`eigenvalue_order` (decreasing real part, real parts within
        :data:`STABILITY_THRESHOLD` counted equal, then decreasing imaginary part); over a sweep
        (:meth:`LinearizationProblem.sweep`, :func:`follow_branches`) branch by branch.
    rates : ndarray
        ``ż`` at the reference state (zero for an equilibrium of the chosen states).
    reference : dict
        The reference state and parameter values (the inputs' values among them).
    B : ndarray or None
        ``∂ż/∂w`` for the control inputs ``w`` (``δż = A δz + B δw``), None without inputs.
    inputs : tuple of Symbol
        The inputs ``w`` of ``B``.
    """

    states: tuple
    A: np.ndarray
    eigenvalues: np.ndarray
    rates: np.ndarray
    reference: dict
    B: np.ndarray = None
    inputs: tuple = ()

    @property
    def verdict(self) -> str:
        """``"stable"``, ``"marginal"`` or ``"unstable"`` by :func:`stability_verdict` (threshold
        :data:`STABILITY_THRESHOLD`)."""
        return stability_verdict(self.eigenvalues)

    @property
    def stable(self) -> bool:
        """True if ``max Re λ < −1e-9`` (asymptotic linear stability); a marginal spectrum (an eigenvalue on the
        imaginary axis, e.g. all zero) is not stable: see :attr:`verdict`."""
        return self.verdict == "stable"

    @property
    def is_equilibrium(self) -> bool:
        """True if the chosen states are stationary at the reference (``|ż| ≤ 1e-9``)."""
        return bool(np.all(np.abs(self.rates) <= 1e-9))

    def __str__(self):
        rows = [", ".join(f"{x: .6g}" for x in row) for row in self.A]
        ev = ", ".join(_complex_text(e) for e in self.eigenvalues)
        text = ("A (states " + ", ".join(map(str, self.states)) + "):\n  " + "\n  ".join(rows)
                + f"\neigenvalues: {ev}")
        if self.B is not None:
            text += ("\nB (inputs " + ", ".join(map(str, self.inputs)) + "):\n  "
                     + "\n  ".join(", ".join(f"{x: .6g}" for x in row) for row in self.B))
        return text

    def to_dict(self) -> dict:
        return {"states": [str(s) for s in self.states], "A": self.A.tolist(),
                "eigenvalues": [[float(e.real), float(e.imag)] for e in self.eigenvalues],
                "rates": self.rates.tolist(), "stable": self.stable, "verdict": self.verdict,
                "max_real": float(np.max(self.eigenvalues.real)) if self.eigenvalues.size else None,
                "equilibrium": self.is_equilibrium,
                "reference": {str(k): float(v) for k, v in self.reference.items()},
                **({} if self.B is None else {"inputs": [str(w) for w in self.inputs], "B": self.B.tolist()})}


def _complex_text(e, tiny: float = 1e-12) -> str:
    re = 0.0 if abs(e.real) <= tiny else e.real
    if abs(e.imag) <= tiny:
        return f"{re:.6g}"
    return f"{re:.6g}{'+' if e.imag >= 0 else '-'}{abs(e.imag):.6g}i"


class LinearizationProblem:
    """The compiled pieces of a linearisation in the states ``z`` (reusable across reference states and parameters).

    For a :class:`~anholo.dynamics.maggi.MaggiSystem` (large systems) the derivatives are taken in
    forward mode along the shared subexpressions of its implicit form
    (:class:`~anholo.algebra.program.Program`), never expanding a tree.

    Parameters
    ----------
    source : NonholonomicSystem, MaggiSystem or Lagrangian
        The field: Γ_nh on C in ``(q, v^α)``, or the Euler–Lagrange field in ``(q, v)``.
    states : sequence of Symbol or str, optional
        The chosen states ``z`` (coordinates and free quasi-velocities); default all.
    holonomic : sequence of expressions, optional
        Holonomic constraints ``f(q) = 0`` (default: the source's ``holonomic``, if any).  A coordinate
        they tie to the chosen ones moves with them: for a chosen coordinate ``z`` the derivative is
        ``∂/∂z + (∂q^d/∂z) ∂/∂q^d`` with ``∂q^d/∂z = −(∂f/∂q^d)⁻¹ ∂f/∂z`` at the reference state
        (implicit function theorem), e.g. the pitch of a bicycle following its lean and steer.
    """

    def __init__(self, source, states: Sequence | None = None, holonomic: Sequence | None = None):
        maggi = isinstance(source, MaggiSystem)
        if maggi:
            coords, vel = tuple(source.chart.coordinates), tuple(source.free_velocities)
        elif hasattr(source, "velocities_on_C"):
            nh = source
            coords, vel = tuple(nh.frame.chart.coordinates), tuple(nh.free_velocities)
        else:
            coords, vel = tuple(source.bundle.chart.coordinates), tuple(source.bundle.quasi_velocities)
        self.all_states = coords + vel
        by_name = {s.name: s for s in self.all_states}
        if states is None:
            chosen = self.all_states
        else:
            chosen = []
            for s in states:
                name = str(s)
                if name not in by_name:
                    raise DimensionError(f"{name!r} is not a state of the field; the states are "
                                         f"{', '.join(by_name)} (coordinates and free quasi-velocities).")
                chosen.append(by_name[name])
            chosen = tuple(chosen)
        self.states = chosen
        names = {str(x): x for x in list(coords) + list(getattr(getattr(source, "chart", None), "parameters", ()))}
        hol = tuple(sympified(f, "a holonomic constraint", names)
                    for f in (holonomic if holonomic is not None else getattr(source, "holonomic", ())))
        tied = [c for c in coords if c not in chosen and any(c in free_symbols([f]) for f in hol)]
        self._tied = tuple(tied)
        self._hol = hol
        forces = getattr(source, "forces", None)
        self.inputs = tuple(getattr(source, "inputs", ()) if maggi else (forces.inputs if forces is not None and
                                                                        hasattr(forces, "inputs") else ()))
        variables = chosen + tuple(tied) + self.inputs
        self._kin_idx = [coords.index(z) for z in chosen if z in coords]
        self._vel_idx = [vel.index(z) for z in chosen if z in vel]
        self._coords = coords
        self._nz, self._nv = len(chosen), len(chosen) + len(tied)
        if maggi:
            self._build_program(source, variables, hol)
        else:
            self._build_sympy(source, variables, hol)

    def _build_sympy(self, source, variables, hol) -> None:
        if hasattr(source, "velocities_on_C"):
            nh = source
            form = nh.implicit_form(multipliers=False)
            X, vC = nh.frame.vectors, nh.velocities_on_C
            kin = [sp.Add(*[X[j, A] * vC[j] for j in range(nh.n) if X[j, A] != 0 and vC[j] != 0])
                   for A in range(nh.n)]
        else:
            L = source
            form = L.implicit_form()
            b = L.bundle
            X, v = b.frame.vectors, b.quasi_velocities
            kin = [sp.Add(*[X[j, A] * v[j] for j in range(b.dim) if X[j, A] != 0]) for A in range(b.dim)]
        M, F = form.matrix, list(form.rhs)
        k = form.dim
        K = [kin[i] for i in self._kin_idx]
        dK = [e.diff(z) for e in K for z in variables]
        dF = [F[i].diff(z) for i in range(k) for z in variables]
        dM = [M[i, j].diff(z) for z in variables for i in range(k) for j in range(k)]
        df = [f.diff(z) for f in hol for z in variables]
        exprs = K + dK + list(M) + F + dF + dM + list(hol) + df
        free = free_symbols(exprs) if exprs else set()
        self.parameters = tuple(sorted(free - set(self.all_states), key=lambda s: s.name))
        raw = expression_function(list(self.all_states) + list(self.parameters), exprs) if exprs else (
            lambda *v: np.zeros(0))
        nk, nv, nh_ = len(K), len(variables), len(hol)

        def evaluate(vals):
            out, pos = raw(*vals), 0

            def take(count, shape):
                nonlocal pos
                arr = np.array(out[pos:pos + count], dtype=float).reshape(shape)
                pos += count
                return arr
            parts = (take(nk, (nk,)), take(nk * nv, (nk, nv)), take(k * k, (k, k)), take(k, (k,)),
                     take(k * nv, (k, nv)), take(nv * k * k, (nv, k, k)))
            return parts + (take(nh_, (nh_,)), take(nh_ * nv, (nh_, nv)))

        self._k, self._evaluate = k, evaluate

    def _build_program(self, source, variables, hol) -> None:
        from ..algebra.engine import se, to_engine

        prog = source.program(multipliers=False)
        n, k = len(self._coords), source.m
        hol_e = [to_engine(f) for f in hol]
        names = {str(a) for a in prog.args}
        extra = sorted({s for f in hol_e for s in f.free_symbols if str(s) not in names}, key=str)
        base = Program(prog.args + tuple(extra), prog.pairs, prog.outputs + tuple(hol_e))
        full, (rows, nv) = base.derivatives([se.Symbol(z.name) for z in variables])
        f = full.compile()
        arg_names = [str(a) for a in full.args]
        state_names = {s.name for s in self.all_states}
        self.parameters = tuple(sp.Symbol(a, real=True) for a in arg_names if a not in state_names)
        kin_idx, nh_ = self._kin_idx, len(hol)

        def evaluate(vals):
            # vals: all_states then parameters (by name), mapped onto the program's arguments
            by_name = dict(zip([s.name for s in self.all_states] + [p.name for p in self.parameters], vals))
            out = np.array(f(*[by_name[a] for a in arg_names]), dtype=float)
            vals0, jac = out[:rows], out[rows:].reshape(rows, nv)
            K, dK = vals0[:n][kin_idx], jac[:n][kin_idx]
            M, F = vals0[n:n + k * k].reshape(k, k), vals0[n + k * k:n + k * k + k]
            dM = jac[n:n + k * k].reshape(k, k, nv).transpose(2, 0, 1)
            dF = jac[n + k * k:n + k * k + k]
            return K, dK, M, F, dF, dM, vals0[rows - nh_:], jac[rows - nh_:]

        self._k, self._evaluate = k, evaluate

    def at(self, reference: Mapping, parameters: Mapping) -> Linearization:
        """``A`` at a reference state (``reference``: state → value, missing ones 0) and parameter values."""
        ref = {str(k): float(v) for k, v in reference.items()}
        par = {str(k): float(v) for k, v in parameters.items()}
        unknown = [k for k in ref if k not in {s.name for s in self.all_states}]
        if unknown:
            raise DimensionError(f"{unknown[0]!r} is not a state of the field; the states are "
                                 f"{', '.join(s.name for s in self.all_states)}.")
        missing = [p.name for p in self.parameters if p.name not in par]
        if missing:
            raise MissingParameterError(f"no value for the parameter(s) {', '.join(missing)}; give them with "
                                        "--set NAME=VALUE or in the system file's [values] table.")
        try:
            K, dK, M, F, dF, dM, f, df = parts = self._evaluate(
                [ref.get(s.name, 0.0) for s in self.all_states] + [par[p.name] for p in self.parameters])
            if not all(np.all(np.isfinite(a)) for a in parts):  # generated code: IEEE nan/inf where undefined
                raise ValueError("undefined")
        except (ZeroDivisionError, ValueError, OverflowError):
            raise SingularFrameError(
                f"the field is undefined at the reference state {ref or '(every state 0)'} (a division by zero or a square root of a "
                "negative number there: e.g. the constraints cannot be solved for the dependent velocities at "
                "it); choose another reference state, or other dependent velocities.") from None
        k, nz = self._k, self._nz
        if k and not np.all(np.isfinite(M)) or k and np.linalg.cond(M) > 1e14:
            raise IrregularLagrangianError(
                "the matrix M of the implicit form is singular (or undefined) at the reference state "
                f"{ref}; choose another reference state (a coordinate singularity of the chart?).")
        if len(f) and np.abs(f).max() > 1e-8:
            raise InitialStateError(
                f"the reference state violates the holonomic constraints (residual {np.abs(f).max():.3g}); "
                "give the tied coordinates values that satisfy them.")
        nv = self._nv  # columns: chosen states, tied coordinates, then the inputs
        vdot = np.linalg.solve(M, F) if k else F

        def rates_derivative(dK_, dF_, dM_):
            rhs = dF_ - np.einsum("zij,j->iz", dM_, vdot) if k else dF_
            dV = np.linalg.solve(M, rhs) if k else rhs
            return np.vstack([dK_, dV[self._vel_idx]])

        T = self._tie(df[:, :nv])  # total derivatives: columns z + (∂q^d/∂z) columns d
        A = rates_derivative(dK[:, :nv] @ T, dF[:, :nv] @ T, np.einsum("vij,vz->zij", dM[:nv], T)) if nz \
            else np.zeros((0, 0))
        B = rates_derivative(dK[:, nv:], dF[:, nv:], dM[nv:]) if self.inputs else None
        rates = np.concatenate([K, vdot[self._vel_idx]])
        ev = np.linalg.eigvals(A) if nz else np.zeros(0, dtype=complex)
        ev = ev[eigenvalue_order(ev)]
        return Linearization(self.states, A, ev, rates, {**ref, **par}, B, self.inputs)

    def _tie(self, df: np.ndarray) -> np.ndarray:
        """``T`` (variables × chosen): the identity on the chosen states, and ``∂q^d/∂z`` on the tied
        coordinates, from ``f_d ∂q^d/∂z = −f_z`` (the tied coordinates least-squares if not all are needed)."""
        nz, nv = self._nz, self._nv
        T = np.zeros((nv, nz))
        T[:nz, :nz] = np.eye(nz)
        if nv > nz and df.size:
            fz, fd = df[:, :nz], df[:, nz:]
            if np.linalg.matrix_rank(fd) < fd.shape[0]:
                raise DimensionError(
                    "the holonomic constraints do not determine the coordinates tied to the chosen states "
                    f"({', '.join(s.name for s in self._tied)}) at this reference state; choose other states.")
            T[nz:, :] = -np.linalg.pinv(fd) @ fz
        return T

    def sweep(self, name: str, values: Sequence, reference: Mapping, parameters: Mapping) -> list:
        """:meth:`at` for each value of a state or parameter ``name`` (e.g. the forward speed), the eigenvalues
        listed branch by branch over the values (:func:`follow_branches`)."""
        states = {s.name for s in self.all_states}
        out = []
        for x in values:
            ref, par = dict(reference), dict(parameters)
            (ref if name in states else par)[name] = float(x)
            out.append(self.at(ref, par))
        return follow_branches(out)

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

from ..errors import DimensionError, IrregularLagrangianError, MissingParameterError

__all__ = ["Linearization", "LinearizationProblem", "linearize"]


@dataclass(frozen=True)
class Linearization:
    """``δż = A δz`` at one reference state: the matrix, its eigenvalues and the residual rates.

    Attributes
    ----------
    states : tuple of Symbol
        ``z``, the chosen states.
    A : ndarray
    eigenvalues : ndarray
        Sorted by decreasing real part.
    rates : ndarray
        ``ż`` at the reference state (zero for an equilibrium of the chosen states).
    reference : dict
        The reference state and parameter values.
    """

    states: tuple
    A: np.ndarray
    eigenvalues: np.ndarray
    rates: np.ndarray
    reference: dict

    @property
    def stable(self) -> bool:
        """True if every eigenvalue has a real part ≤ 1e-9 (linear stability in the weak sense)."""
        return bool(np.all(self.eigenvalues.real <= 1e-9))

    @property
    def is_equilibrium(self) -> bool:
        """True if the chosen states are stationary at the reference (``|ż| ≤ 1e-9``)."""
        return bool(np.all(np.abs(self.rates) <= 1e-9))

    def __str__(self):
        rows = [", ".join(f"{x: .6g}" for x in row) for row in self.A]
        ev = ", ".join(_complex_text(e) for e in self.eigenvalues)
        return ("A (states " + ", ".join(map(str, self.states)) + "):\n  " + "\n  ".join(rows)
                + f"\neigenvalues: {ev}")

    def to_dict(self) -> dict:
        return {"states": [str(s) for s in self.states], "A": self.A.tolist(),
                "eigenvalues": [[float(e.real), float(e.imag)] for e in self.eigenvalues],
                "rates": self.rates.tolist(), "stable": self.stable,
                "reference": {str(k): float(v) for k, v in self.reference.items()}}


def _complex_text(e, tiny: float = 1e-12) -> str:
    re = 0.0 if abs(e.real) <= tiny else e.real
    if abs(e.imag) <= tiny:
        return f"{re:.6g}"
    return f"{re:.6g}{'+' if e.imag >= 0 else '-'}{abs(e.imag):.6g}i"


class LinearizationProblem:
    """The compiled pieces of a linearisation in the states ``z`` (reusable across reference states and parameters).

    Parameters
    ----------
    source : NonholonomicSystem or Lagrangian
        The field: Γ_nh on C in ``(q, v^α)``, or the Euler–Lagrange field in ``(q, v)``.
    states : sequence of Symbol or str, optional
        The chosen states ``z`` (coordinates and free quasi-velocities); default all.
    """

    def __init__(self, source, states: Sequence | None = None):
        if hasattr(source, "velocities_on_C"):
            nh = source
            form = nh.implicit_form(multipliers=False)
            X, vC = nh.frame.vectors, nh.velocities_on_C
            kin = [sp.Add(*[X[j, A] * vC[j] for j in range(nh.n) if X[j, A] != 0 and vC[j] != 0])
                   for A in range(nh.n)]
            coords, vel = tuple(nh.frame.chart.coordinates), tuple(nh.free_velocities)
        else:
            L = source
            form = L.implicit_form()
            b = L.bundle
            X, v = b.frame.vectors, b.quasi_velocities
            kin = [sp.Add(*[X[j, A] * v[j] for j in range(b.dim) if X[j, A] != 0]) for A in range(b.dim)]
            coords, vel = tuple(b.chart.coordinates), tuple(v)
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
        kin_idx = [coords.index(z) for z in chosen if z in coords]
        vel_idx = [vel.index(z) for z in chosen if z in vel]
        self._kin_idx, self._vel_idx = kin_idx, vel_idx
        M, F = form.matrix, list(form.rhs)
        k = form.dim
        K = [kin[i] for i in kin_idx]
        dK = [[e.diff(z) for z in chosen] for e in K]
        dF = [[F[i].diff(z) for z in chosen] for i in range(k)]
        dM = [[[M[i, j].diff(z) for j in range(k)] for i in range(k)] for z in chosen]
        exprs = K + [e for row in dK for e in row] + list(M) + F + [e for row in dF for e in row] \
            + [e for mat in dM for row in mat for e in row]
        free = set().union(*(sp.sympify(e).free_symbols for e in exprs)) if exprs else set()
        self.parameters = tuple(sorted(free - set(self.all_states), key=lambda s: s.name))
        self._f = sp.lambdify(list(self.all_states) + list(self.parameters), exprs, modules="math", cse=True)
        self._k, self._nz, self._nk = k, len(chosen), len(K)

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
        vals = self._f(*[ref.get(s.name, 0.0) for s in self.all_states], *[par[p.name] for p in self.parameters])
        k, nz, nk = self._k, self._nz, self._nk
        pos = 0

        def take(count):
            nonlocal pos
            out = np.array(vals[pos:pos + count], dtype=float)
            pos += count
            return out

        K = take(nk)
        dK = take(nk * nz).reshape(nk, nz)
        M = take(k * k).reshape(k, k)
        F = take(k)
        dF = take(k * nz).reshape(k, nz)
        dM = take(nz * k * k).reshape(nz, k, k)
        if k and not np.all(np.isfinite(M)) or k and np.linalg.cond(M) > 1e14:
            raise IrregularLagrangianError(
                "the matrix M of the implicit form is singular (or undefined) at the reference state "
                f"{ref}; choose another reference state (a coordinate singularity of the chart?).")
        vdot = np.linalg.solve(M, F) if k else F
        rhs = dF - np.einsum("zij,j->iz", dM, vdot) if k else dF
        dV = np.linalg.solve(M, rhs) if k else rhs
        A = np.vstack([dK, dV[self._vel_idx]]) if nz else np.zeros((0, 0))
        rates = np.concatenate([K, vdot[self._vel_idx]])
        ev = np.linalg.eigvals(A) if nz else np.zeros(0, dtype=complex)
        ev = ev[np.lexsort((-ev.imag, -ev.real))]
        return Linearization(self.states, A, ev, rates, {**ref, **par})

    def sweep(self, name: str, values: Sequence, reference: Mapping, parameters: Mapping) -> list:
        """:meth:`at` for each value of a state or parameter ``name`` (e.g. the forward speed)."""
        states = {s.name for s in self.all_states}
        out = []
        for x in values:
            ref, par = dict(reference), dict(parameters)
            (ref if name in states else par)[name] = float(x)
            out.append(self.at(ref, par))
        return out


def linearize(source, reference: Mapping, parameters: Mapping, states: Sequence | None = None) -> Linearization:
    """``δż = A δz`` of a field about a reference state (see the module docstring and :class:`LinearizationProblem`).

    Examples
    --------
    A thin disk rolling upright at spin rate ``v3`` (``r = 0.5``, ``g = 9.81``) is stable iff
    ``v3² > g/(3r)``, i.e. ``v3 > 2.557…``:

    >>> from anholo.system import System
    >>> s = System.load("rolling_disk")
    >>> values = {str(k): v for k, v in s.values.items()}
    >>> [linearize(s.nonholonomic(), {"v3": w}, values, states=["lean", "v1", "v2", "v3"]).stable for w in (2.5, 2.6)]
    [False, True]
    """
    return LinearizationProblem(source, states).at(reference, parameters)

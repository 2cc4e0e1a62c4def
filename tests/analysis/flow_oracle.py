"""An independent oracle for the flow tests: the coordinate multiplier method, by hand with sympy and numpy.

For ``L(q, q̇)``, constraints ``φ_a = κ_a(q)·q̇ + c_a(q) = 0`` and forces ``Q(q, q̇)``:

    W q̈ − κᵀ λ = ∂L/∂q − (∂²L/∂q̇∂q) q̇ + Q,     κ q̈ = −(∂φ/∂q) q̇,

solved numerically.  The state of C in Maggi's coordinates is ``(q, v)`` with ``v^α = q̇^{f_α}`` for
given free coordinates; the dependent velocities are solved from the constraints (numpy).  Nothing of
anholo is used.
"""

from __future__ import annotations

import numpy as np
import sympy as sp


class CoordinateFlow:
    """``(q, v) ↦ (q̇, v̇)`` of the Lagrange–d'Alembert equations in the coordinates ``(q, v^α = q̇^{f_α})``."""

    def __init__(self, L, q, u, constraints, free, params, forces=None):
        q, u = list(q), list(u)
        n, k = len(q), len(constraints)
        self.q, self.u, self.free, self.n = q, u, [q.index(f) for f in free], n
        W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
        F = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n)) for A in range(n)])
        if forces is not None:
            F += sp.Matrix(forces)
        kap = sp.Matrix(k, n, lambda a, A: sp.diff(constraints[a], u[A]))
        c = sp.Matrix([constraints[a] - sum(kap[a, A] * u[A] for A in range(n)) for a in range(k)]).expand()
        rc = sp.Matrix([-sum(sp.diff(phi, q[B]) * u[B] for B in range(n)) for phi in constraints])
        args = q + u + list(params)
        self.params = list(params)
        self._W = sp.lambdify(args, W, "numpy")
        self._F = sp.lambdify(args, F, "numpy")
        self._kap = sp.lambdify(args, kap, "numpy")
        self._c = sp.lambdify(args, c, "numpy")
        self._rc = sp.lambdify(args, rc, "numpy")
        self.k = k

    def velocities(self, qv, v, pv):
        """``q̇`` on C with ``q̇^{f_α} = v^α`` (the constraints solved for the others)."""
        n, k = self.n, self.k
        dep = [A for A in range(n) if A not in self.free]
        args = list(qv) + [0.0] * n + list(pv)
        K = np.array(self._kap(*args), dtype=float).reshape(k, n)
        c = np.array(self._c(*args), dtype=float).reshape(k)
        u = np.zeros(n)
        u[self.free] = v
        if k:
            u[dep] = np.linalg.solve(K[:, dep], -c - K[:, self.free] @ np.asarray(v, dtype=float))
        return u

    def accelerations(self, qv, u, pv):
        """``(q̈, λ)`` of the multiplier method at ``(q, q̇)``."""
        n, k = self.n, self.k
        args = list(qv) + list(u) + list(pv)
        W = np.array(self._W(*args), dtype=float).reshape(n, n)
        F = np.array(self._F(*args), dtype=float).reshape(n)
        if not k:
            return np.linalg.solve(W, F), np.zeros(0)
        K = np.array(self._kap(*args), dtype=float).reshape(k, n)
        r = np.array(self._rc(*args), dtype=float).reshape(k)
        big = np.block([[W, -K.T], [K, np.zeros((k, k))]])
        sol = np.linalg.solve(big, np.concatenate([F, r]))
        return sol[:n], sol[n:]

    def rates(self, qv, v, pv):
        """``(q̇, v̇)`` at the point ``(q, v)`` of C."""
        u = self.velocities(qv, v, pv)
        qdd, _ = self.accelerations(qv, u, pv)
        return u, qdd[self.free]

    def divergence(self, qv, v, pv, h=1e-5):
        """``Σ ∂q̇^A/∂q^A + Σ ∂v̇^α/∂v^α`` by central differences (step h)."""
        qv, v = np.asarray(qv, dtype=float), np.asarray(v, dtype=float)
        out = 0.0
        for A in range(self.n):
            e = np.zeros(self.n)
            e[A] = h
            out += (self.rates(qv + e, v, pv)[0][A] - self.rates(qv - e, v, pv)[0][A]) / (2 * h)
        for al in range(len(v)):
            e = np.zeros(len(v))
            e[al] = h
            out += (self.rates(qv, v + e, pv)[1][al] - self.rates(qv, v - e, pv)[1][al]) / (2 * h)
        return out

"""Independent computations used as oracles by the tests (no anholo code here).

* :func:`coordinate_accelerations` — the coordinate Euler–Lagrange equations
  ``W q̈ = ∂L/∂q − (∂²L/∂u∂q) u`` with ``W = ∂²L/∂u∂u``, solved numerically.
* :func:`random_points` — seeded random numeric points.
"""

from __future__ import annotations

import random

import numpy as np
import sympy as sp


def coordinate_el_system(L, q, u):
    """Symbolic ``(W, rhs)`` of the coordinate Euler–Lagrange equations ``W q̈ = rhs``."""
    n = len(q)
    W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
    rhs = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n)) for A in range(n)])
    return W, rhs


def coordinate_accelerations(L, q, u, point):
    """Numerical q̈ at ``point`` (dict symbol -> float) from the coordinate EL equations."""
    W, rhs = coordinate_el_system(L, q, u)
    Wn = np.array(W.xreplace(point).evalf(), dtype=float)
    rn = np.array(rhs.xreplace(point).evalf(), dtype=float).reshape(-1)
    return np.linalg.solve(Wn, rn)


def random_points(symbols, count, seed, low=-1.2, high=1.2):
    """``count`` dicts mapping each symbol to a random float (positive symbols in (0.4, 1.4))."""
    rng = random.Random(seed)
    pts = []
    for _ in range(count):
        pt = {}
        for s in symbols:
            if s.is_positive:
                pt[s] = sp.Float(rng.uniform(0.4, 1.4), 20)
            else:
                pt[s] = sp.Float(rng.uniform(low, high), 20)
        pts.append(pt)
    return pts


def values(exprs, point):
    return np.array([complex(sp.sympify(e).xreplace(point).evalf()) for e in exprs])


def quasi_point(frame_rows, q, u, point, v_symbols):
    """Extend ``point`` (values of q, u) by v = (X^T)^{-1} u, solved numerically with numpy."""
    X = np.array(sp.Matrix(frame_rows).xreplace(point).evalf(), dtype=float)
    un = np.array([float(point[s]) for s in u])
    v = np.linalg.solve(X.T, un)
    out = dict(point)
    out.update({s: sp.Float(val, 20) for s, val in zip(v_symbols, v)})
    return out

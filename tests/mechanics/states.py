"""Points of C of a rolling bicycle, computed with sympy and numpy only (no anholo code): upright
straight running at a given speed with a small lean, the pitch solved from the holonomic constraint
(bracketing) and the dependent velocities from the velocity constraints (a numerical solve)."""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.optimize import brentq


def upright_state(q, u, holonomic, constraints, values, *, lean, pitch, rear_wheel, free, speed, lean_angle,
                  radius=0.3):
    """``(q0, q̇0, names, A, f)``: the state, the coordinate names, and ``A(q)`` (the constraint matrix) and
    ``f(q)`` (the holonomic constraint) as numerical functions.  ``lean``, ``pitch``, ``rear_wheel`` and
    ``free`` name coordinates; the rear wheel rolls at ``speed`` (radius ``radius``)."""
    names = [s.name for s in q]
    fh = sp.lambdify(q, sp.sympify(holonomic).xreplace(values))
    A = sp.lambdify(q, sp.Matrix([[sp.sympify(c).diff(w) for w in u] for c in constraints]).xreplace(values))
    q0 = np.zeros(len(q))
    q0[names.index(lean)] = lean_angle
    i = names.index(pitch)

    def residual(x):
        y = q0.copy()
        y[i] = x
        return fh(*y)

    q0[i] = brentq(residual, -0.5, 0.5)
    qd0 = np.zeros(len(q))
    qd0[names.index(rear_wheel)] = speed / radius
    free_idx = [names.index(n) for n in free]
    dep = [k for k in range(len(q)) if k not in free_idx]
    Av = np.array(A(*q0), float)
    qd0[dep] = np.linalg.solve(Av[:, dep], -Av[:, free_idx] @ qd0[free_idx])
    return q0, qd0, names, A, fh

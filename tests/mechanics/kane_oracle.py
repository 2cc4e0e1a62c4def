"""Numerical accelerations of a KanesMethod model and of a from_mechanics model at the same points
of C (the oracle side uses only sympy's KanesMethod output; no anholo code)."""

from __future__ import annotations

import random

import numpy as np
import sympy as sp
from scipy.optimize import brentq
from sympy.physics.mechanics import dynamicsymbols


def kane_points(KM, values, count, seed, spread=1.0):
    """``count`` points of C of the Kane model: ``(q, u, q̇, q̈)`` dicts keyed by name.

    Independent q and u random; dependent q solved from the configuration constraints (one
    dependent coordinate, by bracketing), dependent u from ``u_dep = A_rs u_ind``; ``(q̇, u̇)`` from
    ``mass_matrix_full · (q̇, u̇) = forcing_full``; ``q̈ = ∂q̇/∂q q̇ + ∂q̇/∂u u̇``.
    """
    t = dynamicsymbols._t
    q, u = list(KM.q), list(KM.u)
    p = sorted(values, key=str)
    pv = [values[s] for s in p]
    kdd = KM.kindiffdict()
    qdot = sp.Matrix([kdd[x.diff(t)] for x in q])
    n_ind = len(u) - len(KM._udep)
    Ars = KM._Ars if len(KM._udep) else sp.zeros(0, n_ind)
    f = sp.lambdify((q, u, p), [KM.mass_matrix_full, KM.forcing_full, qdot, qdot.jacobian(q), qdot.jacobian(u),
                                Ars], cse=True, modules="numpy")
    fh = None
    if len(KM._qdep):
        fh = sp.lambdify((q, p), KM._f_h[0], modules="numpy")
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        qv = [rng.uniform(-spread, spread) for _ in q]
        if fh is not None:
            k = len(q) - 1

            def g(x):
                qq = list(qv)
                qq[k] = x
                return float(fh(qq, pv))

            grid = np.linspace(-1.5, 1.5, 61)
            vals = [g(x) for x in grid]
            roots = [brentq(g, a, b) for a, b, fa, fb in zip(grid, grid[1:], vals, vals[1:]) if fa * fb < 0]
            if not roots:
                continue
            qv[k] = min(roots, key=abs)
        uind = [rng.uniform(-spread, spread) for _ in range(n_ind)]
        Ars_v = np.array(f(qv, uind + [0.0] * (len(u) - n_ind), pv)[5], float).reshape(len(u) - n_ind, n_ind)
        uv = uind + list(Ars_v @ np.array(uind))
        M, F, qd, Jq, Ju, _ = f(qv, uv, pv)
        x = np.linalg.solve(np.array(M, float), np.array(F, float).ravel())
        qd = np.array(qd, float).ravel()
        ud = x[len(q):]
        qdd = np.array(Jq, float) @ qd + np.array(Ju, float) @ ud
        name = lambda s: s.func.__name__
        out.append(({name(a): b for a, b in zip(q, qv)}, {name(a): b for a, b in zip(u, uv)},
                    {name(a): b for a, b in zip(q, qd)}, {name(a): b for a, b in zip(q, qdd)},
                    {name(a): b for a, b in zip(u, ud)}))
    return out


def multiplier_accelerations(L, q, qd, p, constraints, forces=None):
    """``q̈(q, q̇, p)`` of the coordinate multiplier method ``[[W, −Aᵀ], [A, 0]] [q̈; λ] = [F + Q; −(∂(A q̇)/∂q) q̇]``
    (``W = ∂²L/∂q̇²``, ``F = ∂L/∂q − ∂²L/∂q̇∂q q̇``, ``Q`` the generalized forces, default 0), evaluated
    numerically (compiled with lambdify)."""
    n, m = len(q), len(constraints)
    Lu = [L.diff(u) for u in qd]
    W = sp.Matrix(n, n, lambda A, B: Lu[A].diff(qd[B]))
    F = sp.Matrix([L.diff(q[A]) - sum(Lu[A].diff(q[B]) * qd[B] for B in range(n)) for A in range(n)])
    if forces is not None:
        F += sp.Matrix(list(forces))
    Amat = sp.Matrix(m, n, lambda a, A: constraints[a].diff(qd[A]))
    rc = sp.Matrix([-sum(c.diff(q[B]) * qd[B] for B in range(n)) for c in constraints])
    f = sp.lambdify((q, qd, p), [W, F, Amat, rc], cse=True, modules="numpy")

    def acc(qv, qdv, pv):
        Wv, Fv, Av, rv = (np.array(x, float) for x in f(qv, qdv, pv))
        K = np.block([[Wv, -Av.T], [Av, np.zeros((m, m))]])
        return np.linalg.solve(K, np.concatenate([Fv.ravel(), rv.ravel()]))[:n]

    return acc


def compare(model, KM, values, count=3, seed=0, spread=1.0, route="field", dependent=None):
    """Largest relative deviation of anholo's q̈ from KanesMethod's at ``count`` points of C.

    ``route="field"``: anholo's Γ_nh (natural accelerations); ``route="multipliers"``: the model's L and
    constraints through :func:`multiplier_accelerations` (checks the model, not anholo's field);
    ``route="maggi"``: anholo's Maggi equations (``dependent``: the coordinates solved for).
    """
    chart = model.chart
    q, qd, p = list(chart.coordinates), list(chart.velocities), list(chart.parameters)
    pv = [values[next(k for k in values if str(k) == s.name)] for s in p]
    if route == "field":
        acc = model.field().natural_accelerations(natural=True)
        fa = sp.lambdify((q, qd, p), [acc[x] for x in q], cse=True, modules="numpy")
    elif route == "form":  # the model's own multiplier form M ẋ = F, solved numerically
        M, F, states = model.multiplier_form()
        nlam = len(states) - 2 * len(q)
        fM = sp.lambdify((q, qd, p, states[2 * len(q):]), [M, F], cse=True, modules="numpy")

        def fa(qv, qdv, pv):
            Mv, Fv = (np.array(a, float) for a in fM(qv, qdv, pv, [0.0] * nlam))
            return np.linalg.solve(Mv, Fv.ravel())[len(q):2 * len(q)]
    elif route == "maggi":  # anholo's large-system route (Maggi's equations), evaluated numerically
        from anholo.dynamics.maggi import MaggiSystem
        ms = MaggiSystem(chart, model.lagrangian.natural_expr(), model.constraints, dependent=dependent)
        names = [x.name for x in q] + [x.name for x in qd] + [x.name for x in p]

        def fa(qv, qdv, pv):
            vals = dict(zip(names, list(qv) + list(qdv) + list(pv)))
            vals.update({v.name: vals[c.name + "_dot"] for v, c in zip(ms.free_velocities, ms.free_coordinates)})
            return ms.evaluate(vals)["q_ddot"]
    else:
        fa = multiplier_accelerations(model.lagrangian.natural_expr(), q, qd, p, list(model.constraints),
                                      list(model.forces) if model.has_forces else None)
    A = sp.Matrix([[c.diff(v) for v in qd] for c in model.constraints])
    fA = sp.lambdify((q, p), A, modules="numpy")
    rate = {}  # added wheel angles: q̇ = the speed named here
    for sname, e in model.speeds.items():
        if e in qd and chart.coordinates[qd.index(e)] in model.added:
            rate[chart.coordinates[qd.index(e)].name] = sname
    roots = [x.name for x in model.added if x.name not in rate]
    worst = 0.0
    rng = random.Random(seed + 1)
    for qv, uv, qdv, qddv, udv in kane_points(KM, values, count, seed, spread):
        qnum, qdnum, expect = [], [], {}
        for x in q:
            if x.name in qv:
                qnum.append(qv[x.name]); qdnum.append(qdv[x.name]); expect[x.name] = qddv[x.name]
            elif x.name in rate:
                qnum.append(rng.uniform(-3, 3)); qdnum.append(uv[rate[x.name]]); expect[x.name] = udv[rate[x.name]]
            else:
                qnum.append(rng.uniform(-3, 3)); qdnum.append(np.nan)
        # velocities of the root coordinates from the constraints (the others are Kane's)
        Av = np.array(fA(qnum, pv), float).reshape(len(model.constraints), len(q))
        unknown = [i for i, x in enumerate(q) if x.name in roots]
        known = [i for i in range(len(q)) if i not in unknown]
        b = -Av[:, known] @ np.array([qdnum[i] for i in known])
        sol, *_ = np.linalg.lstsq(Av[:, unknown], b, rcond=None)
        assert np.allclose(Av[:, unknown] @ sol, b, atol=1e-9), "Kane's state is not on anholo's C"
        for i, s in zip(unknown, sol):
            qdnum[i] = s
        got = dict(zip([x.name for x in q], np.array(fa(qnum, qdnum, pv), float)))
        for k, v in expect.items():
            worst = max(worst, abs(got[k] - v) / max(1.0, abs(v)))
    return worst

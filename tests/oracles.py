"""Independent computations used as oracles by the tests (no anholo code here).

* :func:`coordinate_accelerations` — the coordinate Euler–Lagrange equations
  ``W q̈ = ∂L/∂q − (∂²L/∂u∂q) u`` with ``W = ∂²L/∂u∂u``, solved numerically.
* :func:`random_points` — seeded random numeric points.
* :func:`constrained_coordinate_solution` — the coordinate multiplier method
  for constraints affine in the velocities, built by hand:
  ``[[W, -Aᵀ], [A, 0]] [q̈; λ] = [F; -(∂φ/∂q) u]``.
* :func:`lagranges_method_solution` — the same numbers from
  ``sympy.physics.mechanics.LagrangesMethod`` (multipliers in the convention
  ``E_A(L) = λ_a ∂φ_a/∂u^A``; LagrangesMethod's own sign is explained there).
* :func:`point_on_constraints` — a seeded random point satisfying affine
  constraints (dependent velocities solved for).
* :func:`carriage_density_divergence` — ``div(N Γ)/N`` of the two-wheeled carriage (Crampin & Mestdag
  2010, §7.2) on C in the coordinates ``(q, ψ̇1, ψ̇2)``, from its multiplier equations projected on D
  (Maggi 1896), differentiated here; :func:`max_at_random_points` evaluates it.
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
    """Numerical values of ``exprs`` at ``point`` (memoised evaluation, see tests/numeric.py)."""
    from numeric import evaluate

    return np.array([evaluate(e, point) for e in exprs])


def quasi_point(frame_rows, q, u, point, v_symbols):
    """Extend ``point`` (values of q, u) by v = (X^T)^{-1} u, solved numerically with numpy."""
    X = np.array(sp.Matrix(frame_rows).xreplace(point).evalf(), dtype=float)
    un = np.array([float(point[s]) for s in u])
    v = np.linalg.solve(X.T, un)
    out = dict(point)
    out.update({s: sp.Float(val, 20) for s, val in zip(v_symbols, v)})
    return out


# ---------------------------------------------------------------------------
# Constrained systems: the coordinate multiplier method (Lagrange–d'Alembert)
# ---------------------------------------------------------------------------
#
# Convention (THEORY §4 and §8): for constraints φ_a(q, u) = 0, affine in the
# velocities u = q̇, and E_A(L) := d/dt ∂L/∂u^A − ∂L/∂q^A,
#
#     E_A(L) = Σ_a λ_a ∂φ_a/∂u^A,        φ_a(q, q̇) = 0.
#
# The multipliers therefore depend on how the constraints are written (scaling
# φ_a by c scales λ_a by 1/c); both oracles below use the expressions as given.


def _numeric(expr_matrix, point, what):
    """Evaluate a sympy Matrix at ``point`` as a float numpy array, with a clear error."""
    value = expr_matrix.xreplace(point).evalf(30)
    left = set().union(*(e.free_symbols for e in value)) if len(value) else set()
    if left:
        raise ValueError(f"{what}: the point gives no value to {sorted(map(str, left))}")
    return np.array(value.tolist(), dtype=float)


def _check_affine(constraints, u):
    for k, c in enumerate(constraints):
        for A in u:
            for B in u:
                if sp.diff(c, A, B) != 0 and sp.simplify(sp.diff(c, A, B)) != 0:
                    raise ValueError(f"constraint {k} ({c}) is not affine in the velocities")


def constrained_coordinate_solution(L, q, u, constraints, point):
    """Accelerations and multipliers of the coordinate multiplier method, by hand.

    With ``W = ∂²L/∂u∂u``, ``F = ∂L/∂q − (∂²L/∂u∂q)·u`` and ``A = ∂φ/∂u``
    (row a = constraint a), solve numerically at ``point``

        [[W, −Aᵀ], [A, 0]] [q̈; λ] = [F; −(∂φ/∂q)·u],

    i.e. ``E_A(L) = Σ_a λ_a ∂φ_a/∂u^A`` together with the differentiated
    constraints ``dφ_a/dt = 0`` (constraints affine in u, no explicit time).

    Parameters
    ----------
    L : sympy expression in q, u and parameters.
    q, u : sequences of symbols (coordinates, velocities in the same order).
    constraints : sequence of expressions φ_a, required to vanish (may be empty).
    point : dict symbol -> number covering q, u and the parameters; it should lie
        on the constraints (not checked here; see :func:`point_on_constraints`).

    Returns
    -------
    (q̈, λ) : numpy float arrays of lengths n and m.
    """
    n = len(q)
    K, rhs = _multiplier_system(L, q, u, constraints)
    Kn = _numeric(K, point, "constrained_coordinate_solution")
    rn = _numeric(rhs, point, "constrained_coordinate_solution").reshape(-1)
    sol = np.linalg.solve(Kn, rn)
    return sol[:n], sol[n:]


def lagranges_method_solution(L, q, u, constraints, point):
    """The same numbers as :func:`constrained_coordinate_solution`, via sympy's LagrangesMethod.

    The plain symbols are replaced by ``dynamicsymbols`` (``q^A -> q^A(t)``,
    ``u^A -> dq^A/dt``), ``LagrangesMethod(L, qs, nonhol_coneqs=constraints)``
    forms the equations, and the augmented linear system (rows and columns
    n.. of ``mass_matrix_full``, rows n.. of ``forcing_full``: the dynamic
    equations and the differentiated constraints) is solved numerically at
    ``point`` for ``(q̈, lam)``.

    Sign convention of LagrangesMethod's multipliers ``lam`` (sympy 1.14; see
    sympy issue #30215, "LagrangesMethod stores the negative of the Jacobian of
    the constraints"), with ``A = ∂φ/∂q̇`` and ``lam_coeffs = −A``:

    * ``LagrangesMethod.eom`` is ``E(L) − lam_coeffs.T·lam = E(L) + Aᵀ·lam = 0``,
      i.e. ``E(L) = −Aᵀ lam``: *opposite* to our convention;
    * but ``mass_matrix = [m_d | lam_coeffs.T]`` with ``forcing = f_d`` encodes
      ``m_d q̈ − Aᵀ lam = f_d``, i.e. ``E(L) = +Aᵀ lam``: *our* convention.

    The two public descriptions disagree in the sign of the same ``lam_vec``.
    This oracle solves the mass-matrix form and fixes the sign at run time:
    the multiplier columns ``C`` of ``mass_matrix`` mean ``E(L) = −C·lam``; if
    ``C = −Aᵀ`` (sympy 1.14) then ``λ = lam``, if ``C = +Aᵀ`` then ``λ = −lam``.
    So the returned λ always satisfies ``E_A(L) = Σ_a λ_a ∂φ_a/∂u^A``.

    Returns
    -------
    (q̈, λ) : numpy float arrays of lengths n and m.
    """
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    q, u, constraints = list(q), list(u), list(constraints)
    n, m = len(q), len(constraints)
    t = dynamicsymbols._t
    qf = [dynamicsymbols(s.name) for s in q]
    qdf = [f.diff(t) for f in qf]
    to_dyn = dict(zip(q, qf))
    to_dyn.update(zip(u, qdf))
    Ld = sp.sympify(L).xreplace(to_dyn)
    cons = [sp.sympify(c).xreplace(to_dyn) for c in constraints]
    lm = LagrangesMethod(Ld, qf, nonhol_coneqs=cons if cons else None)
    lm.form_lagranges_equations()
    M = lm.mass_matrix_full[n:, n:]
    f = lm.forcing_full[n:, :]
    sign = 1
    if m:
        C = lm.mass_matrix[:, n:]
        At = sp.Matrix(cons).jacobian(qdf).T
        if (C + At).applyfunc(sp.simplify) == sp.zeros(n, m):
            sign = 1
        elif (C - At).applyfunc(sp.simplify) == sp.zeros(n, m):
            sign = -1
        else:  # pragma: no cover - a sympy change the oracle does not understand
            raise AssertionError("LagrangesMethod: unexpected multiplier columns in mass_matrix")
    back = {fq: point[s] for s, fq in zip(q, qf)}
    back.update({fd: point[s] for s, fd in zip(u, qdf)})
    back.update({k: v for k, v in point.items() if k not in set(q) | set(u)})
    Mn = _numeric(M, back, "lagranges_method_solution")
    fn = _numeric(f, back, "lagranges_method_solution").reshape(-1)
    sol = np.linalg.solve(Mn, fn)
    return sol[:n], sign * sol[n:]


def point_on_constraints(q, u, constraints, params, dependent, seed, low=-1.2, high=1.2):
    """A seeded random point on affine constraints ``φ_a(q, u) = 0``.

    Coordinates and independent velocities are uniform in ``(low, high)``;
    parameters that are positive symbols are uniform in ``(0.5, 1.5)`` (others
    in ``(low, high)``); the ``dependent`` velocities (a list of as many u
    symbols as constraints) are solved from the constraints, which are affine in
    them, in 30-digit arithmetic.

    Returns
    -------
    dict
        symbol -> sympy Float (30 digits) for every q, u and parameter.
    """
    rng = random.Random(seed)
    q, u, constraints, params, dependent = map(list, (q, u, constraints, params, dependent))
    if len(dependent) != len(constraints):
        raise ValueError(f"{len(constraints)} constraints but {len(dependent)} dependent velocities")
    point = {}
    for s in q:
        point[s] = sp.Float(rng.uniform(low, high), 30)
    for s in params:
        point[s] = sp.Float(rng.uniform(0.5, 1.5) if s.is_positive else rng.uniform(low, high), 30)
    for s in u:
        if s not in dependent:
            point[s] = sp.Float(rng.uniform(low, high), 30)
    if constraints:
        phi = sp.Matrix(constraints)
        A = phi.jacobian(dependent)
        b = -phi.xreplace(dict.fromkeys(dependent, 0))
        An = A.xreplace(point).evalf(30)
        bn = b.xreplace(point).evalf(30)
        if An.free_symbols or bn.free_symbols:
            raise ValueError(f"point_on_constraints: no value for {sorted(map(str, An.free_symbols | bn.free_symbols))}")
        if abs(np.linalg.det(np.array(An.tolist(), dtype=float))) < 1e-8:
            raise ValueError(f"the constraints cannot be solved for {dependent} at this point")
        sol = An.LUsolve(bn)
        for s, val in zip(dependent, sol):
            point[s] = sp.Float(val, 30)
    return point


# Concrete functions for the undefined A1, A2 of the crampin_mestdag_class file.
SEED004_FUNCTIONS = ("2 + cos(r2)", "r2^2 - r2")


def function_stand_ins(spec) -> dict:
    """{undefined function: concrete Lambda} for the crampin_mestdag_class file's A1, A2 (empty if none)."""
    if not spec.functions:
        return {}
    r2 = spec.coordinates[1]
    return {
        f: sp.Lambda(r2, sp.sympify(e.replace("^", "**"), locals={"r2": r2}))
        for f, e in zip(spec.functions, SEED004_FUNCTIONS)
    }


def concrete(spec):
    """(L, constraints) of a SystemSpec with the file's undefined functions replaced by concrete ones."""
    L, cons = spec.lagrangian, list(spec.constraints)
    repl = function_stand_ins(spec)
    if repl:
        L = L.subs(repl)
        cons = [c.subs(repl) for c in cons]
    return L, cons


def dependent_velocities(spec, cons, seed=0):
    """Velocities the constraints can be solved for at a random configuration (greedy by column)."""
    if not cons:
        return []
    probe = point_on_constraints(spec.coordinates, spec.velocities, [], spec.parameters, [], seed)
    A = np.array(sp.Matrix(cons).jacobian(spec.velocities).xreplace(probe).evalf().tolist(), dtype=float)
    chosen: list[int] = []
    for j in range(A.shape[1]):
        if np.linalg.matrix_rank(A[:, chosen + [j]], tol=1e-6) == len(chosen) + 1:
            chosen.append(j)
    assert len(chosen) == len(cons), "constraints not independent"
    return [spec.velocities[j] for j in chosen]


def multiplication_rule_solution(L, q, u, constraints, lam, point):
    """Vakonomic accelerations by the coordinate multiplication rule, built by hand.

    Euler–Lagrange equations of ``L̄ = L + λ_a φ_a(q, u)`` in ``(q, λ)`` with
    ``ω^a_A = ∂φ_a/∂u^A``:

        W q̈ + ωᵀ λ̇ = F − λ_a (∂ω^a_A/∂q^B u^B − ∂φ_a/∂q^A),   ω q̈ = −(∂φ/∂q)·u,

    ``W = ∂²L/∂u∂u``, ``F = ∂L/∂q − (∂²L/∂u∂q)·u``, solved numerically at ``point``
    (covering q, u, λ and parameters; on the constraints).  Returns ``(q̈, λ̇)``.
    """
    q, u, constraints, lam = list(q), list(u), list(constraints), list(lam)
    n, k = len(q), len(constraints)
    _check_affine(constraints, u)
    W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
    F = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n)) for A in range(n)])
    om = sp.Matrix(k, n, lambda a, A: sp.diff(constraints[a], u[A]))
    extra = sp.Matrix([sum(lam[a] * (sum(sp.diff(om[a, A], q[B]) * u[B] for B in range(n))
                                     - sp.diff(constraints[a], q[A])) for a in range(k)) for A in range(n)])
    rhs_c = sp.Matrix([-sum(sp.diff(c, q[B]) * u[B] for B in range(n)) for c in constraints])
    K = W.row_join(om.T).col_join(om.row_join(sp.zeros(k, k)))
    rhs = (F - extra).col_join(rhs_c)
    sol = np.linalg.solve(_numeric(K, point, "multiplication_rule_solution"),
                          _numeric(rhs, point, "multiplication_rule_solution").reshape(-1))
    return sol[:n], sol[n:]


# ---------------------------------------------------------------------------
# Nonlinear kinematic constraints (THEORY §8): Chetaev and multiplication rule
# ---------------------------------------------------------------------------


def nonlinear_constrained_solution(L, q, u, constraints, point, forces=None, beta=None, time=None):
    """Chetaev (or β-) equations for constraints φ(q, u, t) = 0, nonlinear in u, by hand.

    With ``W = ∂²L/∂u∂u``, ``F = ∂L/∂q − (∂²L/∂u∂q)·u − ∂²L/∂u∂t + F_nc``,
    ``J = ∂φ/∂u`` and ``β`` (default ``J``, the Chetaev rule), solve numerically

        [[W, −βᵀ], [J, 0]] [q̈; λ] = [F; −(∂φ/∂q)·u − ∂φ/∂t],

    i.e. ``E_A(L) = F_nc,A + λ_ν β_νA`` with the differentiated constraints.
    Returns ``(q̈, λ)`` as numpy arrays.
    """
    q, u, constraints = list(q), list(u), list(constraints)
    n, k = len(q), len(constraints)
    W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
    F = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n))
                   - (sp.diff(L, u[A], time) if time is not None else 0)
                   + (sp.sympify(forces[A]) if forces is not None else 0) for A in range(n)])
    J = sp.Matrix(k, n, lambda a, A: sp.diff(constraints[a], u[A]))
    B = J if beta is None else sp.Matrix(beta)
    rhs_c = sp.Matrix([-sum(sp.diff(c, q[C]) * u[C] for C in range(n)) - (sp.diff(c, time) if time is not None else 0)
                       for c in constraints])
    K = W.row_join(-B.T).col_join(J.row_join(sp.zeros(k, k)))
    sol = np.linalg.solve(_numeric(K, point, "nonlinear_constrained_solution"),
                          _numeric(F.col_join(rhs_c), point, "nonlinear_constrained_solution").reshape(-1))
    return sol[:n], sol[n:]


def nonlinear_multiplication_rule_solution(L, q, u, constraints, lam, point, time=None, forces=None):
    """Vakonomic ``E_A(L + λ_ν φ^ν) = Q_A`` for nonlinear φ, by hand (``Q = 0`` unless ``forces``): with ``L̄ = L + λφ``,

        [[∂²L̄/∂u∂u, Jᵀ], [J, 0]] [q̈; λ̇] = [∂L̄/∂q − (∂²L̄/∂u∂q)·u − ∂²L̄/∂u∂t + Q; −(∂φ/∂q)·u − ∂φ/∂t].

    Returns ``(q̈, λ̇)`` at ``point`` (covering q, u, λ, parameters).
    """
    q, u, constraints, lam = list(q), list(u), list(constraints), list(lam)
    n, k = len(q), len(constraints)
    Lb = L + sum(l * c for l, c in zip(lam, constraints))
    W = sp.Matrix(n, n, lambda A, B: sp.diff(Lb, u[A], u[B]))
    F = sp.Matrix([sp.diff(Lb, q[A]) - sum(sp.diff(Lb, u[A], q[B]) * u[B] for B in range(n))
                   - (sp.diff(Lb, u[A], time) if time is not None else 0)
                   + (sp.sympify(forces[A]) if forces is not None else 0) for A in range(n)])
    J = sp.Matrix(k, n, lambda a, A: sp.diff(constraints[a], u[A]))
    rhs_c = sp.Matrix([-sum(sp.diff(c, q[C]) * u[C] for C in range(n)) - (sp.diff(c, time) if time is not None else 0)
                       for c in constraints])
    K = W.row_join(J.T).col_join(J.row_join(sp.zeros(k, k)))
    sol = np.linalg.solve(_numeric(K, point, "nonlinear_multiplication_rule_solution"),
                          _numeric(F.col_join(rhs_c), point, "nonlinear_multiplication_rule_solution").reshape(-1))
    return sol[:n], sol[n:]


def point_on_nonlinear_constraints(q, u, constraints, params, dependent, seed, low=-1.2, high=1.2, extra=()):
    """A seeded random point on constraints φ(q, u) = 0 (nonlinear allowed): q, parameters, ``extra``
    symbols and the independent velocities at random, the ``dependent`` velocities by Newton's
    method (mpmath, 30 digits) from a random start.  Raises ValueError if Newton fails."""
    import mpmath

    rng = random.Random(seed)
    for _attempt in range(20):
        point = {}
        for s in list(q) + list(extra):
            point[s] = sp.Float(rng.uniform(low, high), 30)
        for s in params:
            point[s] = sp.Float(rng.uniform(0.5, 1.5) if s.is_positive else rng.uniform(low, high), 30)
        for s in u:
            if s not in dependent:
                point[s] = sp.Float(rng.uniform(low, high), 30)
        if not constraints:
            return point
        funcs = [sp.lambdify(list(dependent), sp.sympify(c).xreplace(point), "mpmath") for c in constraints]
        start = [rng.uniform(0.3, 1.3) * rng.choice((-1, 1)) for _ in dependent]
        try:
            with mpmath.workdps(30):
                if len(funcs) == 1:
                    root = mpmath.findroot(funcs[0], start[0])
                else:
                    root = mpmath.findroot(lambda *z: [f(*z) for f in funcs], start)
        except (ValueError, ZeroDivisionError):
            continue
        vals = [root] if len(dependent) == 1 else list(root)
        if any(abs(mpmath.im(v)) > 1e-20 for v in vals):
            continue
        for s, v in zip(dependent, vals):
            point[s] = sp.Float(mpmath.re(v), 30)
        return point
    raise ValueError("point_on_nonlinear_constraints: Newton's method failed")


# ---------------------------------------------------------------------------
# Numerical right-hand sides for scipy: the coordinate multiplier method and
# the coordinate multiplication rule, built by hand (linear constraints)
# ---------------------------------------------------------------------------


def coordinate_vector_fields(L, q, u, constraints, values):
    """Right-hand sides for ``scipy.integrate.solve_ivp`` built by hand, for constraints
    ``φ^ν = ω^ν_A(q) u^A`` and parameter ``values`` (dict symbol -> float).

    Returns ``(nonholonomic, vakonomic, multipliers)``:

    * ``nonholonomic(t, [q, u])``: ``W q̈ − ωᵀλ = F``, ``ω q̈ = −(∂φ/∂q) u``
      (``E_A(L) = λ_ν ω^ν_A``);
    * ``vakonomic(t, [q, u, μ])``: the multiplication rule ``E_A(L + μ_ν φ^ν) = 0``,
      i.e. ``W q̈ + ωᵀ μ̇ = F + μ_ν (∂_A ω^ν_B − ∂_B ω^ν_A) u^B``, ``ω q̈ = −(∂φ/∂q) u``;
    * ``multipliers(q, u)``: the nonholonomic λ at a state.
    """
    q, u, constraints = list(q), list(u), [sp.sympify(c) for c in constraints]
    n, k = len(q), len(constraints)
    L = sp.sympify(L).xreplace(values)
    constraints = [c.xreplace(values) for c in constraints]
    W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
    F = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n)) for A in range(n)])
    om = sp.Matrix(k, n, lambda a, A: sp.diff(constraints[a], u[A]))
    drift = sp.Matrix([-sum(sp.diff(c, q[B]) * u[B] for B in range(n)) for c in constraints])
    mu = sp.symbols(f"mu_oracle0:{k}")
    curl = sp.Matrix([sum(mu[a] * (sp.diff(om[a, B], q[A]) - sp.diff(om[a, A], q[B])) * u[B]
                          for a in range(k) for B in range(n)) for A in range(n)])
    args = list(q) + list(u)
    fW, fF, fom, fdr = (sp.lambdify(args, M, "numpy") for M in (W, F, om, drift))
    fcurl = sp.lambdify(args + list(mu), curl, "numpy")

    def solve(state, vak):
        x = state[: 2 * n]
        Wn = np.array(fW(*x), dtype=float)
        omn = np.array(fom(*x), dtype=float).reshape(k, n)
        rhs = np.array(fF(*x), dtype=float).reshape(-1)
        if vak:
            rhs = rhs + np.array(fcurl(*x, *state[2 * n:]), dtype=float).reshape(-1)
        K = np.block([[Wn, omn.T if vak else -omn.T], [omn, np.zeros((k, k))]])
        sol = np.linalg.solve(K, np.concatenate([rhs, np.array(fdr(*x), dtype=float).reshape(-1)]))
        return sol[:n], sol[n:]

    def nonholonomic(t, state):
        qdd, _ = solve(state, False)
        return np.concatenate([state[n:2 * n], qdd])

    def vakonomic(t, state):
        qdd, mudot = solve(state, True)
        return np.concatenate([state[n:2 * n], qdd, mudot])

    def multipliers(qv, uv):
        return solve(np.concatenate([qv, uv]), False)[1]

    return nonholonomic, vakonomic, multipliers


def _multiplier_system(L, q, u, constraints, forces=None):
    """``(K, rhs)`` of ``K [q̈; λ] = rhs``: ``[[W, −Aᵀ], [A, 0]]`` and ``[F + Q; −(∂φ/∂q)·u]``
    (:func:`constrained_coordinate_solution`)."""
    q, u, constraints = list(q), list(u), list(constraints)
    n, m = len(q), len(constraints)
    _check_affine(constraints, u)
    W = sp.Matrix(n, n, lambda A, B: sp.diff(L, u[A], u[B]))
    F = sp.Matrix([sp.diff(L, q[A]) - sum(sp.diff(L, u[A], q[B]) * u[B] for B in range(n)) for A in range(n)])
    if forces is not None:
        F = F + sp.Matrix(list(forces))
    if not m:
        return W, F
    Amat = sp.Matrix(m, n, lambda a, A: sp.diff(constraints[a], u[A]))
    rhs_c = sp.Matrix([-sum(sp.diff(c, q[B]) * u[B] for B in range(n)) for c in constraints])
    return W.row_join(-Amat.T).col_join(Amat.row_join(sp.zeros(m, m))), F.col_join(rhs_c)


def multiplier_ode(L, q, u, constraints=(), forces=None):
    """A ``solve_ivp`` right-hand side ``f(t, s)``, ``s = (q, u)``, of the coordinate multiplier equations
    (the same equations as :func:`constrained_coordinate_solution`, compiled once with ``sympy.lambdify``):

        [[W, −Aᵀ], [A, 0]] [q̈; λ] = [F + Q; −(∂φ/∂q)·u]

    with ``W = ∂²L/∂u∂u``, ``F = ∂L/∂q − (∂²L/∂u∂q)·u``, ``A = ∂φ/∂u`` and the generalised forces Q
    (default none).  L, the constraints and the forces must be numeric apart from q and u (substitute the
    parameters first).  Used as the independent oracle of the integrator tests and benchmarks."""
    q, u = list(q), list(u)
    n = len(q)
    K, rhs = _multiplier_system(L, q, u, constraints, forces)
    fK = sp.lambdify([q + u], K, "numpy")
    fr = sp.lambdify([q + u], rhs, "numpy")

    def f(t, s):
        sol = np.linalg.solve(np.asarray(fK(list(s)), dtype=float),
                              np.asarray(fr(list(s)), dtype=float).reshape(-1))
        return np.concatenate([s[n:], sol[:n]])

    return f


# --- the integrator tests' systems and their independent solutions ---------------------------------------
#: The contact oscillator of McLachlan & Perlmutter (2006): constraint dx + y dz = 0,
#: H = ½(|q̇|² + |q|² + ε x² z²).
CONTACT_OSCILLATOR = """
name = "Contact oscillator"
coordinates = ["x", "y", "z"]
parameters = ["eps"]
lagrangian = "(x_dot^2 + y_dot^2 + z_dot^2)/2 - (x^2 + y^2 + z^2 + eps*x^2*z^2)/2"
constraints = ["x_dot + y*z_dot"]
[values]
eps = 0.1
"""

#: The non-reversible test problem of Modin & Verdier (2020): the contact oscillator in the momenta
#: P = p − ∇S(q), S = cos z, i.e. L = ½|q̇|² + sin(z) ż − V (tests/numerics/test_modin_verdier.py).
MODIN_VERDIER = CONTACT_OSCILLATOR.replace('lagrangian = "', 'lagrangian = "sin(z)*z_dot + ').replace(
    "Contact oscillator", "Non-reversible contact oscillator (Modin & Verdier 2020)")


def contact_reference(q0, qd0, times, eps=0.1):
    """The contact oscillator by the coordinate multiplier method: λ(1, 0, y) on the right-hand side,
    λ from the differentiated constraint ẍ + ẏ ż + y z̈ = 0; ``(q, q̇)`` at ``times`` (DOP853, rtol 1e-13)."""
    def rhs(t, s):
        x, y, z, xd, yd, zd = s
        Vx, Vz = x + eps * x * z * z, z + eps * x * x * z
        lam = (Vx + y * Vz - yd * zd) / (1 + y * y)
        return [xd, yd, zd, -Vx + lam, -y, -Vz + lam * y]

    from scipy.integrate import solve_ivp

    sol = solve_ivp(rhs, (times[0], times[-1]), [*q0, *qd0], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=times)
    return sol.y[:3], sol.y[3:]


def contact_integral(q, qd, eps=0.1):
    """``H − H_y = ½(ẋ² + ż² + x² + z² + ε x² z²)`` of the contact oscillator (conserved; McLachlan &
    Perlmutter 2006), at the columns of ``q, q̇``."""
    x, y, z = q
    xd, yd, zd = qd
    return 0.5 * (xd ** 2 + zd ** 2 + x ** 2 + z ** 2 + eps * x ** 2 * z ** 2)


def sleigh_reference(times, q0, u0, w0, m=1.0, I=1.0, a=0.5, c=0.0, k=0.0, tau=None):
    """The Chaplygin sleigh in its body velocities (u forward, w = θ̇), written by hand from Newton's laws
    with the contact a behind the centre of mass: ``m(u̇ − a w²) = −c u``, ``(I + m a²) ẇ = τ(t) − k w −
    m a u w − c a² w`` (c, k viscous friction, τ a torque); rows ``x, y, θ, u, w`` at ``times``."""
    import math

    from scipy.integrate import solve_ivp

    def f(tt, s):
        x, y, th, u, w = s
        torque = tau(tt) if tau is not None else 0.0
        return [u * math.cos(th) - a * w * math.sin(th), u * math.sin(th) + a * w * math.cos(th), w,
                a * w**2 - c * u / m, (torque - k * w - m * a * u * w - c * a**2 * w) / (I + m * a**2)]

    sol = solve_ivp(f, (float(times[0]), float(times[-1])), [*q0, u0, w0], t_eval=times, rtol=1e-13, atol=1e-14,
                    method="DOP853")
    return sol.y


def polar_reference(t, q0, qdot0, m=1.0, k=1.0):
    """The particle in the plane under the central force −k/r² in polar coordinates (r, θ)."""
    from scipy.integrate import solve_ivp

    def f(_, s):
        r, th, rd, thd = s
        return [rd, thd, r * thd**2 - k / (m * r**2), -2 * rd * thd / r]

    sol = solve_ivp(f, (0, float(t[-1])), [*q0, *qdot0], t_eval=t, rtol=1e-12, atol=1e-12, method="DOP853")
    return sol.y


def rolling_disk_ode(m=1.0, r=0.5, g=9.81):
    """The thin rolling disk (coordinates x, y, yaw, lean, spin; the sympy.physics.mechanics rolling disc with
    Z-X-Y rotations) by :func:`multiplier_ode`: L written here from the centre's velocity and the rotational
    energy (moments m r²/4, m r²/2), the no-slip constraints ``ẋ = r cos(yaw) spin_dot``,
    ``ẏ = r sin(yaw) spin_dot``; the right-hand side of ``(q, q̇)``."""
    x, y, yaw, lean, spin = sp.symbols("x y yaw lean spin")
    xd, yd, yawd, leand, spind = sp.symbols("xd yd yawd leand spind")
    vc = (xd + r * (leand * sp.sin(yaw) * sp.cos(lean) + yawd * sp.cos(yaw) * sp.sin(lean)),
          yd - r * (leand * sp.cos(yaw) * sp.cos(lean) - yawd * sp.sin(yaw) * sp.sin(lean)),
          -r * leand * sp.sin(lean))
    L = m * sum(c**2 for c in vc) / 2 + m * r**2 * (leand**2 + 2 * (spind + yawd * sp.sin(lean))**2
                                                 + yawd**2 * sp.cos(lean)**2) / 8 - m * g * r * sp.cos(lean)
    return multiplier_ode(L, [x, y, yaw, lean, spin], [xd, yd, yawd, leand, spind],
                          [xd - r * sp.cos(yaw) * spind, yd - r * sp.sin(yaw) * spind])


# --- the two-wheeled carriage (Crampin & Mestdag 2010, section 7.2): its field on C, by hand ---------------
CARRIAGE_Q = sp.symbols("x y theta psi1 psi2")
CARRIAGE_U = sp.symbols("x_dot y_dot theta_dot psi1_dot psi2_dot")
CARRIAGE_PARAMETERS = sp.symbols("m m0 a J C R c")


def carriage_field_on_C():
    """``(q̇(q, ψ̇), ψ̈(q, ψ̇))``: ``q̇ = S(q) ψ̇`` solves the rolling constraints, and the multiplier equations
    ``W q̈ + (∂p/∂q) q̇ − ∂L/∂q = Aᵀ λ`` projected on the columns of S (``Sᵀ Aᵀ = 0``) give
    ``(Sᵀ W S) ψ̈ = −Sᵀ (W Ṡ ψ̇ + (∂p/∂q) q̇ − ∂L/∂q)`` (Maggi 1896)."""
    x, y, th, p1, p2 = Q = CARRIAGE_Q
    xd, yd, thd, p1d, p2d = U = CARRIAGE_U
    m, m0, a, J, C, R, c = CARRIAGE_PARAMETERS
    L = (m * (xd ** 2 + yd ** 2) / 2 + m0 * a * thd * (yd * sp.cos(th) - xd * sp.sin(th)) + J * thd ** 2 / 2
         + C * (p1d ** 2 + p2d ** 2) / 2)
    S = sp.Matrix([[R / 2 * sp.cos(th)] * 2, [R / 2 * sp.sin(th)] * 2, [-R / (2 * c), R / (2 * c)], [1, 0], [0, 1]])
    w = sp.Matrix([p1d, p2d])
    qdot = S * w
    on_C = dict(zip(U, qdot))
    W = sp.Matrix(5, 5, lambda i, j: sp.diff(L, U[i], U[j])).xreplace(on_C)
    p = sp.Matrix([sp.diff(L, u) for u in U])
    rest = (p.jacobian(Q) * sp.Matrix(U) - sp.Matrix([sp.diff(L, q) for q in Q])).xreplace(on_C)
    Sdot = sp.Matrix(5, 2, lambda i, j: sum(sp.diff(S[i, j], q) * f for q, f in zip(Q, qdot)))
    acc = (S.T * W * S).LUsolve(-S.T * (W * Sdot * w + rest))
    return list(qdot), [acc[0], acc[1]]


def carriage_density_divergence(N):
    """``div(N Γ) / N`` for the measure ``N dq dψ̇1 dψ̇2`` of the carriage (zero iff it is invariant)."""
    qdot, acc = carriage_field_on_C()
    Q, U = CARRIAGE_Q, CARRIAGE_U
    div = sum(sp.diff(N * f, q) for f, q in zip(qdot, Q)) + sum(sp.diff(N * g, v) for g, v in zip(acc, U[3:]))
    return div / N


def max_at_random_points(expr, count=8, seed=3):
    """The largest ``|expr|`` at ``count`` seeded random points, every symbol in (0.3, 1.8)."""
    rng = random.Random(seed)
    syms = sorted(expr.free_symbols, key=str)
    f = sp.lambdify(syms, expr, cse=True)
    return max(abs(float(f(*[rng.uniform(0.3, 1.8) for _ in syms]))) for _ in range(count))


def particle_integral_rates(texts, seeds=range(3)) -> list:
    """``dF/dt`` along the nonholonomic particle's motion (ż = y ẋ, L = |q̇|²/2; the coordinate multiplier
    method, :func:`constrained_coordinate_solution`) of each integral written as text in ``x, y, z`` and their
    ``_dot`` velocities, at seeded points of C: a list of floats (0 for an integral)."""
    q = sp.symbols("x y z", real=True)
    u = sp.symbols("x_dot y_dot z_dot", real=True)
    cons = [u[2] - q[1] * u[0]]
    L = (u[0] ** 2 + u[1] ** 2 + u[2] ** 2) / 2
    names = {s.name: s for s in q + u}
    rates = []
    for seed in seeds:
        pt = point_on_constraints(q, u, cons, [], [u[2]], seed)
        qdd, _ = constrained_coordinate_solution(L, q, u, cons, pt)
        for text in texts:
            F = sp.sympify(str(text), locals=names)
            rates.append(float(sum(sp.diff(F, s).xreplace(pt) * val
                                    for s, val in zip(q + u, [pt[s] for s in u] + list(qdd)))))
    return rates

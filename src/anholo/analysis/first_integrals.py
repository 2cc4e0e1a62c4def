"""First integrals of the nonholonomic field: the energy, the nonholonomic momentum equation, and
conserved quantities linear or quadratic in the velocities searched in an ansatz.

A function F on C is a first integral of Γ_nh iff ``Γ_nh(F) = 0`` on C (coordinates ``(q, v^α)``,
docs/nonholonomic.rst).

* Energy: ``E = v^i p_i − L`` restricted to C.  For linear constraints and a time-independent L
  without non-potential forces it is conserved (the constraint forces do no work on motions in D);
  ``dE/dt = Γ_nh(E)`` is reported in every case (the energy balance).
* Nonholonomic momentum equation (Bloch, Krishnaprasad, Marsden & Murray 1996): for a Lie group acting on Q whose generators ``ξ_a`` leave L and D invariant, every
  ``ξ = c^a(q) ξ_a`` with ``ξ(q) ∈ D_q`` (a section of the bundle ``𝔤^q``) gives the momentum
  ``J_ξ = (∂L/∂q̇^A) ξ^A``, and along Γ_nh

      d/dt J_ξ = (dc^a/dt) J_a,    J_a = (∂L/∂q̇^A) ξ_a^A.

  Proof: ``E_A(L) ξ^A = 0`` for ξ ∈ D, and ``ξ_a^C(L) = 0`` by invariance.  When the generators
  lie in D (c constant) J_ξ is conserved; when none does (𝔤^q = 0: Chaplygin systems) there is
  no equation.
* Ansatz search: ``F = Σ_α c_α(q) v^α`` (linear; ``+ U(q)`` when the constraints are affine) or
  ``Σ_{α≤β} c_αβ(q) v^α v^β + U(q)`` (quadratic; ``+ Σ_α c_α(q) v^α`` when the constraints are affine),
  and for affine constraints the polynomials of degree ≤ 2 in the velocities and the non-angular
  coordinates together (the Jacobi integral ``E − Ω J_z`` of a body on a turntable, Fassò & Sansonetto
  2016: :func:`search_jacobi_integrals`), the ``c`` in a linear ansatz ``Σ_j c_j b_j(q)``
  (:func:`~anholo.analysis.invariant_measure.product_function_ansatz`: one function per coordinate,
  trigonometric polynomials of the angles); ``Γ_nh(F) = 0`` is linear in the unknown constants and
  its coefficients give an exact linear system (as for the invariant measures,
  :mod:`anholo.analysis.invariant_measure`).  The numerical prefilter fixes generic values of the
  parameters, since the coefficients of an integral may depend on them (Jellett's integral of the
  Routh sphere, Routh 1905; the angular momentum of the Chaplygin ball about the contact point,
  Chaplygin 1903).  Every integral returned is checked by the zero test of ``Γ_nh(F)``.
  docs/invariants.rst.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import sympy as sp

from ..parsing import sympified
from ..algebra import size_exceeds, solve_generic, tidy, vanishes
from ..algebra.differentiation import diff_dag
from ..algebra.numeric import numerical_relations
from ..dynamics.nonholonomic import NonholonomicField
from .invariant_measure import (FunctionAnsatz, _angles, default_function_ansatz, fixed_parameters,
                                product_function_ansatz, solutions_in_span)

__all__ = ["energy_on_C", "energy_rate", "MomentumEquation", "momentum_equations", "FirstIntegral",
           "FirstIntegrals", "search_first_integrals", "search_jacobi_integrals", "integrals_in_span",
           "numerical_span_filter", "first_integrals"]


def energy_on_C(field_: NonholonomicField) -> sp.Expr:
    """``E = v^i p_i − L`` on C, a function of ``(q, v^α)``."""
    nh = field_.system
    L = nh.lagrangian.expr
    v = nh.bundle.quasi_velocities
    return nh.restrict(sp.Add(*[vi * diff_dag(L, vi) for vi in v]) - L)


def energy_rate(field_: NonholonomicField) -> sp.Expr:
    """``dE/dt = Γ_nh(E)`` on C (zero for linear constraints and a time-independent L)."""
    return field_(energy_on_C(field_))


@dataclass(frozen=True)
class MomentumEquation:
    """``d/dt J = rate`` for the momentum ``J = (∂L/∂q̇) · ξ`` of a section ``ξ = c^a ξ_a`` of 𝔤^q.

    ``coefficients`` are the ``c^a(q)``; ``momentum`` and ``rate`` are functions of ``(q, v^α)`` on C;
    ``conserved`` is True if the rate vanishes identically.
    """

    coefficients: tuple
    momentum: sp.Expr
    rate: sp.Expr
    conserved: bool

    def __str__(self):
        return f"d/dt ({self.momentum}) = {self.rate}"

    def to_dict(self) -> dict:
        return {"coefficients": [str(c) for c in self.coefficients], "momentum": str(self.momentum),
                "rate": str(self.rate), "conserved": self.conserved}


def momentum_equations(field_: NonholonomicField, generators) -> tuple:
    """The nonholonomic momentum equations (Bloch et al. 1996) for the infinitesimal symmetries
    ``generators`` (coordinate components ``ξ_a^A``; L and D must be invariant, not checked here).

    A basis of the sections ``c(q)`` of ``𝔤^q = {c : θ^b(c^a ξ_a) = 0 for the constrained b}`` is
    computed (generic kernel), and for each ``d/dt J_ξ = Γ_nh(c^a) J_a``.
    """
    nh = field_.system
    F, m, n = nh.frame, nh.m, nh.n
    xi = [tuple(sympified(e) for e in g) for g in generators]
    if not xi:
        return ()
    K = sp.Matrix(n - m, len(xi), lambda b, a: tidy(sp.Add(*[F.coframe[m + b, A] * xi[a][A] for A in range(n)])))
    sol = solve_generic(K, [0] * (n - m))
    Lq = nh._source_lagrangian.natural_expr()
    u = F.chart.velocities
    on_C = dict(zip(u, field_.velocity_field()))
    J = [nh.restrict(sp.Add(*[Lq.diff(u[A]).xreplace(on_C) * g[A] for A in range(n) if g[A] != 0])) for g in xi]
    out = []
    for d in sol.free_directions:
        c = [tidy(e) for e in d]
        momentum = sp.Add(*[ca * Ja for ca, Ja in zip(c, J) if ca != 0])
        rate = sp.Add(*[field_(ca) * Ja for ca, Ja in zip(c, J) if ca != 0 and not ca.is_number])
        out.append(MomentumEquation(tuple(c), momentum, rate, vanishes(rate)))
    return tuple(out)


@dataclass(frozen=True)
class FirstIntegral:
    """A function ``F(q, v^α)`` on C with ``Γ_nh(F) = 0``; ``natural`` is F in ``(q, q_dot)`` (valid on C)."""

    expr: sp.Expr
    natural: sp.Expr
    kind: str  # "energy", "momentum", "linear", "quadratic"

    def __str__(self):
        return f"{self.kind}: {self.natural}"


@dataclass(frozen=True)
class FirstIntegrals:
    """The result of :func:`first_integrals`: the integrals found (energy first when conserved), the
    energy rate ``dE/dt`` on C, the momentum equations, and the ansätze searched."""

    integrals: tuple
    energy: sp.Expr
    energy_rate: sp.Expr
    momentum: tuple
    searched: tuple
    complete: bool

    @property
    def energy_conserved(self) -> bool:
        return any(i.kind == "energy" for i in self.integrals)

    def __str__(self):
        lines = [str(i) for i in self.integrals] or ["no first integral found"]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"first_integrals": [str(i.natural) for i in self.integrals],
                "kinds": [i.kind for i in self.integrals],
                "energy_rate": str(self.energy_rate),
                "momentum_equations": [m.to_dict() for m in self.momentum],
                "searched": list(self.searched), "complete": self.complete}


def _monomials(v, degree: int) -> list:
    return [sp.Mul(*c) for c in itertools.combinations_with_replacement(v, degree)]


def search_first_integrals(field_: NonholonomicField, degree: int, ansatz: FunctionAnsatz) -> list:
    """A basis of the first integrals ``Σ_{|k| = degree} c_k(q) v^k`` (+ ``U(q)`` for degree 2, and for affine
    constraints ``+ U(q)`` for degree 1 and ``+ Σ_α c_α(q) v^α`` for degree 2), each ``c_k`` (and U) in
    ``ansatz``; a list of expressions in ``(q, v^α)``.

    With affine constraints ``q̇ = X_α v^α + β(q)`` the field does not preserve the degree in the velocities
    (``Γ_nh`` of a quadratic form has a part linear in v), so the quadratic ansatz holds the whole polynomial
    of degree 2: the moving energy ``E − J_Z`` of Fassò & Sansonetto (2016) has a linear part when the frame's
    affine part β differs from the symmetry Z by a vector of D."""
    v = field_.system.free_velocities
    affine = _affine(field_)
    terms = [b * mono for mono in _monomials(v, degree) for b in ansatz.basis]
    if degree == 2 and affine:
        terms += [b * mono for mono in _monomials(v, 1) for b in ansatz.basis]
    if degree == 2 or (degree == 1 and affine):
        terms += [b for b in ansatz.basis if b != 1]
    return integrals_in_span(field_, terms)


def search_jacobi_integrals(field_: NonholonomicField, ansatz: FunctionAnsatz, positions) -> list:
    """A basis of the first integrals that are polynomials of degree ≤ 2 in the velocities ``v^α`` and the
    coordinates ``positions`` together (no constant term), each monomial's coefficient in ``ansatz`` (functions
    of the remaining coordinates, e.g. the angles); a list of expressions in ``(q, v^α)``.

    The ansatz of the Jacobi integral of a body on a rotating support: for a table turning at the rate Ω the
    constraints are affine, ``q̇ = X_α v^α + Ω ξ(q)`` with ξ the rotation ``−y ∂_x + x ∂_y`` (linear in the
    positions), and when the rotation is a symmetry of L the moving energy ``E − Ω J_z`` (Jacobi 1842;
    Fassò & Sansonetto 2016) is conserved: a quadratic form in the velocities plus terms linear in the
    velocities with coefficients linear in the positions (``−Ω m (x ẏ − y ẋ)``) plus a quadratic potential
    (``−m Ω² (x² + y²)/2`` in the velocities of D).  Counting a position like a velocity makes all of them
    degree 2; unlike the product ansatz of degree 2 it needs no ``x²`` coefficient of a velocity monomial,
    so it stays small (14 unknowns for the vertical disk on a turntable, against 270)."""
    v = tuple(field_.system.free_velocities)
    variables = v + tuple(positions)
    monos = _monomials(variables, 1) + _monomials(variables, 2)
    return integrals_in_span(field_, [b * mono for mono in monos for b in ansatz.basis])


def integrals_in_span(field_: NonholonomicField, terms) -> list:
    """A basis of the first integrals ``F = Σ_j c_j t_j`` in the span of the functions ``terms`` of
    ``(q, v^α)`` over the constants (which may depend on the parameters): ``Γ_nh(F) = Σ_j c_j Γ_nh(t_j) = 0``
    identically in (q, v) is a linear system for the ``c_j``, prefiltered numerically and solved exactly
    (:func:`~anholo.analysis.invariant_measure.solutions_in_span`).  Constants are not returned."""
    terms = list(dict.fromkeys(terms))
    filtered = _numerical_relations(field_, terms)
    if filtered is None:  # the field cannot be evaluated numerically here: the prefilter on the exact columns
        return solutions_in_span(field_, terms, [field_(t) for t in terms])
    keep, nullity = filtered
    if not keep:
        return []
    terms = [terms[j] for j in keep]
    return solutions_in_span(field_, terms, [field_(t) for t in terms], prefilter=False)


#: Random points beyond the number of functions in the numerical prefilter (as in numerical_relations).
_EXTRA_POINTS = 6
#: Relative singular value (and relative size of a column) below which it counts as zero.
_TOLERANCE = 1e-9


def numerical_span_filter(field_: NonholonomicField, terms, seed: int = 29) -> list | None:
    """The indices of the functions ``terms`` of ``(q, v^α)`` that take part in some linear relation
    ``Σ_j c_j Γ_nh(t_j) = 0`` (constant ``c``) at random points of C, the parameters fixed at generic values
    (:func:`~anholo.analysis.invariant_measure.fixed_parameters`); ``[]`` if the columns look independent (no
    integral in the span), None if the field cannot be evaluated numerically (an undefined function, the time).

    ``Γ_nh(t_j)`` is not formed: at each point ``Γ_nh(t) = Σ_A ∂t/∂q^A q̇^A + Σ_α ∂t/∂v^α Γ^α`` from the
    values of the field (one generated function) and of the gradients of the terms (another): a search over
    hundreds of unknowns (the Chaplygin ball's linear ansatz of degree 2: 375) then costs a fraction of a
    second, and only the terms of the relations found go to the exact elimination."""
    out = _numerical_relations(field_, terms, seed)
    return None if out is None else out[0]


def _numerical_relations(field_: NonholonomicField, terms, seed: int = 29):
    """``(indices, nullity)`` of :func:`numerical_span_filter`, nullity the number of independent relations."""
    import numpy as np
    import symengine as se

    from ..algebra.codegen import expression_function
    from ..errors import SimulationError

    nh = field_.system
    q, v = tuple(nh.frame.chart.coordinates), tuple(nh.free_velocities)
    params = tuple(nh.frame.chart.parameters)
    qdot = [nh.restrict(e) for e in field_.velocity_field()]
    acc = [nh.restrict(e) for e in field_.accelerations[:len(v)]]
    variables = q + v
    allowed = set(variables) | set(params)
    grads, where = [], []
    sev = [se.Symbol(x.name) for x in variables]
    for j, t in enumerate(terms):
        t = sympified(t)
        if not t.free_symbols <= allowed:
            return None
        et = se.sympify(t)  # symengine: hundreds of small derivatives
        for i, (x, ex) in enumerate(zip(variables, sev)):
            if t.has(x):
                grads.append(et.diff(ex))
                where.append((j, i))
    exprs = qdot + acc
    if any(not sympified(e).free_symbols <= allowed for e in exprs):
        return None
    n_terms, points = len(terms), len(terms) + _EXTRA_POINTS
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.25, 1.3, (points, len(variables))) * rng.choice((-1.0, 1.0), (points, len(variables)))
    fixed = fixed_parameters(params)
    P = np.tile([float(fixed[p]) for p in params], (points, 1))
    args = np.hstack([X, P]) if params else X
    try:
        field_values = expression_function(list(variables + params), exprs).vector(args)
        grad_values = expression_function(list(variables + params), grads).vector(args) if grads else None
    except (SimulationError, TypeError, ValueError, RuntimeError, NotImplementedError):
        return None
    rates = np.asarray(field_values, dtype=float).reshape(points, len(exprs))  # q̇^A, then Γ^α
    M = np.zeros((points, n_terms))
    if grads:
        G = np.asarray(grad_values, dtype=float).reshape(points, len(grads))
        for k, (j, i) in enumerate(where):
            M[:, j] += G[:, k] * rates[:, i]
    if not np.all(np.isfinite(M)):
        return None
    scale = np.abs(M).max(axis=0)
    zero = scale <= _TOLERANCE * max(scale.max(), 1.0)
    keep = set(np.flatnonzero(zero).tolist())
    nullity = len(keep)
    rest = np.flatnonzero(~zero)
    if len(rest) > 1 or (len(rest) == 1 and not keep):
        _, sv, vh = np.linalg.svd(M[:, rest] / scale[rest], full_matrices=True)
        for k in range(len(rest)):
            if k < len(sv) and sv[k] > _TOLERANCE * sv[0]:
                continue
            nullity += 1
            r = np.abs(vh[k] / scale[rest])
            keep |= {int(rest[j]) for j in np.flatnonzero(r > 1e-7 * r.max())}
    return sorted(keep), nullity


def _affine(field_: NonholonomicField) -> bool:
    """True if ``q̇(q, v)`` has a part free of the velocities (affine constraints, e.g. a moving table):
    integrals linear in the velocities then carry a function ``U(q)`` as well (``E − Ω J_z``, Jacobi 1842)."""
    v = field_.system.free_velocities
    zero = {x: 0 for x in v}
    return any(sp.expand(e.xreplace(zero)) != 0 for e in field_.velocity_field())


def _independent(candidates: list, fixed: list, variables) -> list:
    """The candidates that are linearly independent (over the constants, which may depend on the
    parameters: these get fixed generic values) of ``fixed`` and of each other; ``variables``: the
    coordinates and velocities."""
    kept = list(fixed)
    out = []
    params = set().union(*(sp.sympify(e).free_symbols for e in kept + list(candidates))) - set(variables)
    values = fixed_parameters(sorted(params, key=sp.default_sort_key))
    for F in candidates:
        rel = numerical_relations([e.xreplace(values) for e in kept + [F]])
        if rel is not None and not rel:
            kept.append(F)
            out.append(F)
    return out


def first_integrals(field_: NonholonomicField, *, generators=(), max_degree: int = 2, quadratic: bool = True,
                    budget: float | None = 10.0) -> FirstIntegrals:
    """The energy, the momentum equations of ``generators`` and the integrals linear (and, with
    ``quadratic``, quadratic) in the velocities with coefficients in the product ansatz of degree
    0..``max_degree`` (:func:`~anholo.analysis.invariant_measure.product_function_ansatz`: with degree 2 it
    holds the coefficients of the Chaplygin ball's area integral ``(M, γ)`` and of the space components of
    its angular momentum about the contact point, Chaplygin 1903, Borisov & Mamaev 2002; with affine
    constraints a function ``U(q)`` is added, e.g. the centre of the circles of a sphere on a turntable).
    The linear ansätze are searched first, then the quadratic ones, each by increasing degree.

    Every integral returned satisfies ``Γ_nh(F) = 0`` (zero test).  ``budget``: seconds of CPU time; an
    ansatz is not started when its cost, predicted from the CPU time of the ansätze already searched
    (which grows about as the square of the number of unknowns), would exceed what is left (CPU time: the result does not depend on the machine's load);
    ``complete`` is then False."""
    start = time.process_time()
    nh = field_.system
    q, v = nh.frame.chart.coordinates, nh.free_velocities
    E = energy_on_C(field_)
    rate = field_(E)
    conserved = vanishes(rate)
    if conserved:
        rate = sp.S.Zero
    found, fixed = [], []
    if conserved:
        found.append(FirstIntegral(E, _natural_energy(nh), "energy"))
        fixed.append(E)
    momenta = momentum_equations(field_, generators)
    for me in momenta:
        if me.conserved and _independent([me.momentum], fixed, tuple(q) + tuple(v)):
            found.append(FirstIntegral(me.momentum, nh.to_natural(me.momentum), "momentum"))
            fixed.append(me.momentum)
    qdot = field_.velocity_field()
    used = [x for x in q if any(e.has(x) for e in tuple(qdot) + tuple(field_.accelerations))]
    angles = _angles(tuple(qdot) + tuple(field_.accelerations), q)
    searched, complete = [], True
    m, affine = len(v), _affine(field_)
    positions = [x for x in used if x not in angles]
    plan = [(1, d) for d in range(max_degree + 1)]
    if quadratic:
        if affine and positions:  # the Jacobi integral E − Ω J_z of a rotating support, cheap: before the rest
            plan.insert(1, ("jacobi", 0))
            if angles & set(used):  # trigonometric coefficients: only with angles
                plan.insert(max_degree + 2, ("jacobi", 1))
        plan += [(2, d) for d in range(max_degree + 1)]
    measured = []  # (unknowns, CPU seconds) of the ansätze searched
    variables = tuple(q) + tuple(v)
    for deg, d in plan:
        if deg == "jacobi":
            A = product_function_ansatz(sorted(angles & set(used), key=sp.default_sort_key), angles, d)
            nvar = m + len(positions)
            unknowns = len(A) * (nvar + nvar * (nvar + 1) // 2)
        else:
            A = product_function_ansatz(used, angles, d)
            unknowns = len(A) * (m if deg == 1 else m * (m + 1) // 2 + (m if affine else 0)) + (
                len(A) if deg == 2 or affine else 0)
        if budget is not None:
            left = budget - (time.process_time() - start)
            cost = _predicted(measured, unknowns)
            if left <= 0 or cost > left:
                complete = False
                continue
        if deg == "jacobi":
            searched.append("polynomials of degree <= 2 in the velocities v^alpha and the coordinates "
                            + ", ".join(str(x) for x in positions) + " together, coefficients in "
                            + (A.description if d == 0 else "trigonometric polynomials of degree <= "
                               f"{d} in " + ", ".join(str(x) for x in sorted(angles & set(used), key=sp.default_sort_key))))
        elif deg == 1:
            searched.append("linear in the velocities v^alpha" + (" plus U(q)" if affine else "")
                            + f", coefficients in {A.description}")
        else:
            searched.append("quadratic in the velocities v^alpha" + (" plus linear terms" if affine else "")
                            + f" plus U(q), coefficients in {A.description}")
        # not combinations of the energy and of products of the linear integrals found
        base = fixed + ([F1 * F2 for F1, F2 in itertools.combinations_with_replacement(
            [i.expr for i in found if i.kind in ("linear", "momentum")], 2)] if deg != 1 else [])
        t0 = time.process_time()
        candidates = (search_jacobi_integrals(field_, A, positions) if deg == "jacobi"
                      else search_first_integrals(field_, deg, A))
        # linear ones first: their products with the linear integrals join the base before the quadratic ones
        for F in sorted(candidates, key=lambda e: _kind(e, v) != "linear"):
            if not _independent([F], base, variables) or size_exceeds(F, 2000) or not vanishes(field_(F)):
                continue
            kind = _kind(F, v)
            if kind == "linear" and deg != 1:
                base += [F * i.expr for i in found if i.kind in ("linear", "momentum")] + [F * F]
            found.append(FirstIntegral(F, nh.to_natural(F), kind))
            fixed.append(F)
            base.append(F)
        measured.append((unknowns, time.process_time() - t0))
    return FirstIntegrals(tuple(found), E, rate, momenta, tuple(searched), complete)


def _kind(F, v) -> str:
    """"linear" or "quadratic": the degree of F in the velocities ``v``."""
    try:
        return "linear" if sp.Poly(F, *v).total_degree() <= 1 else "quadratic"
    except sp.PolynomialError:
        return "quadratic"


def _predicted(measured, unknowns: int) -> float:
    """CPU seconds an ansatz with ``unknowns`` unknowns is predicted to take (with a margin of 1.5), from
    ``(unknowns, seconds)`` of the ansätze searched: quadratic growth from those with at least 16 unknowns
    (the elimination), linear from the smaller ones (whose time is mostly the field's derivatives)."""
    return 1.5 * max([t * (unknowns / n) ** (2 if n >= 16 else 1) for n, t in measured], default=0.0)


def _natural_energy(nh) -> sp.Expr:
    """``Σ q̇^A ∂L/∂q̇^A − L`` in ``(q, q_dot)`` (the energy of the Lagrangian as written)."""
    L = nh._source_lagrangian.natural_expr()
    u = nh.frame.chart.velocities
    return tidy(sp.Add(*[x * L.diff(x) for x in u]) - L)

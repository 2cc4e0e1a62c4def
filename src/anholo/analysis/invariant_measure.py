"""Invariant measures of the nonholonomic field: the divergence of Γ_nh on C and densities N(q).

Γ_nh is a vector field on the constraint submanifold C with coordinates
``(q^A, v^α)`` (docs/nonholonomic.rst): ``q̇^A = X_j^A v^j|_C``, ``v̇^α = Γ^α(q, v)``.
A measure ``N(q) dq^1 ∧ … ∧ dq^n ∧ dv^1 ∧ … ∧ dv^m`` is invariant under its flow
(Liouville) iff ``div(N Γ_nh) = 0``, i.e.

    Γ_nh(N) + N div Γ_nh = 0,    div Γ_nh = Σ_A ∂q̇^A/∂q^A + Σ_α ∂Γ^α/∂v^α.

Unlike Hamiltonian fields, nonholonomic fields need not preserve any smooth measure
(Zenkov & Bloch 2003; Fedorov & Jovanović 2004); Chaplygin systems often preserve one
with a density depending on the shape only.  For the class of Crampin & Mestdag (2010),
§7.1, ``N = √(I₁ + Σ m_i A_i²)`` makes N Γ_nh divergence free, and N is constant iff
``Σ m_i A_i A_i′ = 0`` — exactly when the nonholonomic and vakonomic dynamics agree.
For the Chaplygin ball the classical density is a power of ``det(I + m r²(1 − γγᵀ))``
(Chaplygin 1903; Borisov & Mamaev 2001).

The search (:func:`search_invariant_density`) looks for ``N = B^k F`` with ``B`` one of
a few *base* functions — 1 and the determinant ``det g_αβ`` of the constrained kinetic
energy (``k = ±1/2, ±1``) — and ``F`` in a linear ansatz ``F = Σ c_j b_j(q)``:
dividing the Liouville condition by ``N`` and multiplying by ``B F`` gives

    B Γ(F) + F (k Γ(B) + B div Γ_nh) = 0,

linear in the unknown constants ``c_j``; it must vanish identically in (q, v), so its
coefficients (:func:`anholo.algebra.coefficients.coefficients_in`) give a linear
system solved exactly over ``QQ(parameters)`` (:func:`anholo.algebra.elimination.eliminate`).

When no such density is found, the exponential ansatz ``N = exp(c_A q^A) B^k`` (constant ``c_A``) is
searched: the Liouville condition divided by N,

    c_A q̇^A + k Γ(B)/B + div Γ_nh = 0,

is affine in the ``c_A`` and solved the same way.  It gives the density ``exp(κ(ψ1 + ψ2))``,
``κ = R³ a m0 / (2(2 C c² + J R²))``, of the two-wheeled carriage (Crampin & Mestdag 2010, §7.2), up to a
first integral.

Square roots of squares, ``Abs`` and ``sign`` (e.g. ``sqrt(1 - sin(x)^2) = |cos x|``) are handled on
the regions where their arguments keep a sign: there ``sign(f) = σ`` is a constant ``±1`` (its
derivative vanishes) and ``|f| = σ f``.  The search replaces each ``sign(f)`` by a symbol ``σ`` with
``σ² = 1``, ``|f|`` by ``σ f`` and ``δ(f)`` (sympy's ``d sign(f) = 2 δ(f)``) by 0, so that the
conditions are polynomial again; it solves over ``QQ(parameters, σ)`` and puts ``σ = sign(f)`` back
into the density, and a density found this way is checked on the field as written
(:func:`is_invariant_density`).  An expression the polynomial machinery still cannot take ends the
search of that ansatz with "not found", never an error.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.polys.polyerrors import PolynomialError

from ..errors import SimulationError

from ..parsing import sympified
from ..algebra import determinant, size_exceeds, tidy, vanishes
from ..algebra.coefficients import NotPolynomial, coefficients_in, vanishing_conditions
from ..algebra.codegen import expression_function
from ..algebra.differentiation import diff_dag
from ..algebra.elimination import Elimination, eliminate, linear_system
from ..algebra.numeric import numerical_relations
from ..algebra.printing import latex
from ..dynamics.nonholonomic import NonholonomicField, NonholonomicSystem

__all__ = ["divergence", "liouville_residual", "is_invariant_density", "FunctionAnsatz", "default_function_ansatz",
           "product_function_ansatz", "InvariantDensity", "search_invariant_density", "VelocityDensity",
           "search_velocity_density", "solutions_in_span"]


def _coordinate_velocities(field_: NonholonomicField) -> tuple:
    return field_.velocity_field()


def divergence(field_: NonholonomicField) -> sp.Expr:
    """``div Γ_nh = Σ_A ∂q̇^A/∂q^A + Σ_α ∂Γ^α/∂v^α`` in the coordinates ``(q, v^α)`` of C (a function of q, v^α).

    With ``Abs``/``sign`` in the system, the divergence is that of the regions where their arguments keep a
    sign: sympy's ``d sign(f) = 2 δ(f)`` terms (and their derivatives) are 0 there and are dropped."""
    s = field_.system
    q, v = s.frame.chart.coordinates, s.free_velocities
    qdot = field_.velocity_field()
    out = sp.Add(*[diff_dag(e, x) for e, x in zip(qdot, q) if e != 0])
    out += sp.Add(*[diff_dag(g, va) for g, va in zip(field_.accelerations, v) if g != 0])
    return _without_deltas(out)


def _without_deltas(expr) -> sp.Expr:
    """``expr`` with sympy's ``δ(f)`` (and its derivatives, from ``d sign(f) = 2 δ(f)``) set to 0: its value
    where the arguments of ``Abs``/``sign`` do not vanish."""
    deltas = expr.atoms(sp.DiracDelta)
    return expr.xreplace({d: sp.S.Zero for d in deltas}) if deltas else expr


def _along(field_: NonholonomicField, f) -> sp.Expr:
    """``Γ_nh(f)`` for a function of q only: ``q̇^A ∂f/∂q^A``."""
    q = field_.system.frame.chart.coordinates
    return sp.Add(*[qd * f.diff(x) for qd, x in zip(field_.velocity_field(), q) if qd != 0 and f.has(x)])


def liouville_residual(field_: NonholonomicField, density) -> sp.Expr:
    """``Γ_nh(N)/N + div Γ_nh``: zero iff ``N dq ∧ dv`` is invariant (for a density N(q))."""
    N = sympified(density)
    return _without_deltas(_along(field_, N) / N) + divergence(field_)


def is_invariant_density(field_: NonholonomicField, density) -> bool:
    """True if ``N(q) dq ∧ dv^1 ∧ … ∧ dv^m`` is invariant under Γ_nh (zero test of :func:`liouville_residual`)."""
    return vanishes(liouville_residual(field_, density))


@dataclass(frozen=True)
class FunctionAnsatz:
    """A linear ansatz ``F = Σ_j c_j b_j(q)`` for an unknown function of the coordinates.

    ``basis`` are the functions ``b_j``; ``description`` says in words what was searched.
    """

    basis: tuple
    description: str

    def __len__(self):
        return len(self.basis)


def _angles(exprs, coordinates) -> set:
    """Coordinates that occur inside a sine or cosine (or tan, …) of the expressions."""
    out = set()
    coords = set(coordinates)
    for e in exprs:
        for t in sympified(e).atoms(sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc):
            out |= t.args[0].free_symbols & coords
    return out


def default_function_ansatz(coordinates, angles, degree: int) -> FunctionAnsatz:
    """Products of at most ``degree`` factors among ``q`` (a coordinate that is not an angle) and
    ``sin q, cos q`` (an angle): the polynomials/trigonometric polynomials of that degree."""
    factors = []
    for q in coordinates:
        factors += [sp.sin(q), sp.cos(q)] if q in angles else [q]
    basis = [sp.S.One]
    for d in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(factors, d):
            basis.append(sp.Mul(*combo))
    names = ", ".join(str(q) for q in coordinates) or "none"
    what = "constants" if degree == 0 else (
        f"polynomials of degree <= {degree} in the coordinates {names} (sin and cos for the angles)")
    return FunctionAnsatz(tuple(dict.fromkeys(basis)), what)


def product_function_ansatz(coordinates, angles, degree: int) -> FunctionAnsatz:
    """Products over the coordinates of one factor each: ``1, q, …, q^degree`` for a coordinate that is not
    an angle, and for an angle the trigonometric polynomials of degree ≤ ``degree`` modulo
    ``cos² = 1 − sin²``: ``sin^b q`` (b ≤ degree) and ``cos q sin^b q`` (b < degree).  The degree is bounded
    per coordinate, not in total: the coefficients of rigid-body integrals such as ``sin²θ sin²ψ``
    (Chaplygin 1903) are in the ansatz of degree 2, and the functions are linearly independent."""
    options = []
    for q in coordinates:
        if q in angles:
            opts = [sp.sin(q) ** b * sp.cos(q) ** a for a in (0, 1) for b in range(degree + 1 - a)]
        else:
            opts = [q ** k for k in range(degree + 1)]
        options.append(opts)
    basis = [sp.Mul(*combo) for combo in itertools.product(*options)]
    names = ", ".join(str(q) for q in coordinates) or "none"
    what = ("constants" if degree == 0 else
            f"products of one function per coordinate of {names}: powers <= {degree} "
            f"(for an angle the trigonometric polynomials of degree <= {degree})")
    return FunctionAnsatz(tuple(dict.fromkeys(basis)), what)


def fixed_parameters(parameters, seed: int = 31) -> dict:
    """Generic rational values of the parameters, the same at every point: the numerical prefilter of an
    ansatz search looks for relations whose coefficients may depend on the parameters (Jellett's and
    Chaplygin's integrals, the carriage's density), which random parameters at every point would hide."""
    import random

    rng = random.Random(seed)
    return {p: sp.Rational(rng.randint(23, 97), rng.randint(11, 21)) for p in parameters}


@dataclass(frozen=True)
class InvariantDensity:
    """The result of :func:`search_invariant_density`.

    Attributes
    ----------
    density : sympy expression or None
        N(q), with ``N dq ∧ dv^1 ∧ … ∧ dv^m`` invariant (coordinates (q, v^α) of C in the
        nonholonomic system's adapted frame); None if none was found in the ansatz.
    divergence : sympy expression
        ``div Γ_nh`` in those coordinates.
    divergence_free : bool
        True if ``div Γ_nh = 0`` (the constant density).
    constant_density_conditions : tuple
        Conditions (expressions that must vanish, in the parameters and possibly in
        functions of the coordinates) under which ``div Γ_nh = 0``; empty if it vanishes.
    searched : tuple of str
        The ansätze searched, in order (the form ``B^k F`` and F's ansatz).
    family : str or None
        The ansatz in which the density was found.
    independent : int
        The number of free constants of the solution in that ansatz, after it was narrowed to
        the functions of one numerical relation (more than one: ratios of densities are first
        integrals).
    complete : bool
        False if the search stopped at its time budget before searching every ansatz.
    """

    density: object
    divergence: object
    divergence_free: bool
    constant_density_conditions: tuple
    searched: tuple
    family: str | None
    independent: int = 0
    complete: bool = True
    verified: bool = field(default=False)

    @property
    def found(self) -> bool:
        return self.density is not None

    def __str__(self):
        if self.density is None:
            return "no invariant density in the ansatz searched: " + "; ".join(self.searched)
        return f"invariant density N = {self.density} (found in {self.family})"

    def as_latex(self) -> str:
        if self.density is None:
            return r"\text{no invariant density found}"
        return rf"N = {latex(self.density)}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"

    def to_dict(self) -> dict:
        return {
            "density": None if self.density is None else str(self.density),
            "divergence_free": self.divergence_free,
            "constant_density_conditions": [str(c) for c in self.constant_density_conditions],
            "searched": list(self.searched),
            "family": self.family,
            "independent": self.independent,
            "complete": self.complete,
        }


def _functional(cond, coordinates) -> bool:
    """True if the coordinates occur in ``cond`` only inside undefined functions (a functional condition)."""
    coords = set(coordinates)
    inside = set()
    for f in cond.atoms(AppliedUndef, sp.Derivative):
        inside |= f.free_symbols & coords
    outside = cond.xreplace({f: sp.Dummy() for f in cond.atoms(AppliedUndef, sp.Derivative)}).free_symbols & coords
    return bool(inside) and not outside


@dataclass(frozen=True)
class _Signs:
    """``sign(f_i) → σ_i`` and ``|f_i| → σ_i f_i`` for the ``Abs``/``sign`` of some expressions, with
    ``σ_i² = 1`` (the module docstring); :meth:`back` puts ``σ_i = sign(f_i)`` back."""

    forward: dict
    symbols: tuple
    backward: dict

    @classmethod
    def of(cls, exprs) -> "_Signs":
        args, deltas = [], []
        for e in exprs:
            for a in sympified(e).atoms(sp.Abs, sp.sign, sp.DiracDelta):
                (deltas if isinstance(a, sp.DiracDelta) else args).append(a)
        args = list(dict.fromkeys(a.args[0] for a in args))
        sigma = tuple(sp.Dummy(f"sigma{i}") for i in range(len(args)))
        forward = {d: sp.S.Zero for d in deltas}  # sympy's d sign(f) = 2 δ(f): zero where f keeps a sign
        for f, s in zip(args, sigma):
            forward[sp.sign(f)] = s
            forward[sp.Abs(f)] = s * f
        return cls(forward, sigma, {s: sp.sign(f) for f, s in zip(args, sigma)})

    def __bool__(self):
        return bool(self.forward)

    def __call__(self, expr):
        """``expr`` with the signs replaced and ``σ^k = σ^(k mod 2)``."""
        if not self:
            return expr
        e = sympified(expr)
        for _ in range(3):  # nested Abs/sign: their arguments are replaced too
            e = e.xreplace(self.forward)
            if not e.atoms(sp.Abs, sp.sign, sp.DiracDelta):
                break
        sig = set(self.symbols)
        return e.replace(lambda x: x.is_Pow and x.base in sig and x.exp.is_Integer and not 0 <= x.exp <= 1,
                         lambda x: x.base ** (int(x.exp) % 2))

    def unit_free(self, expr):
        """``expr`` without its factors ``σ_i`` (units: ``σ c = 0`` iff ``c = 0``)."""
        if not self:
            return expr
        sig = set(self.symbols)
        return sp.Mul(*[f for f in sp.Mul.make_args(sp.factor_terms(expr))
                        if f not in sig and not (f.is_Pow and f.base in sig)])

    def back(self, expr):
        return sympified(expr).xreplace(self.backward) if self else expr


def constant_density_conditions(div, coordinates, velocities) -> tuple:
    """Conditions under which ``div Γ_nh`` vanishes identically: its coefficients as a polynomial in
    the velocities, split further in the coordinates unless these occur only in undefined functions.
    ``Abs``/``sign`` are constants ``±1`` on the regions where their arguments keep a sign (the module
    docstring); an expression the polynomial machinery cannot take gives no conditions."""
    signs = _Signs.of([div])
    out = []
    try:
        for c in vanishing_conditions([signs(div)], velocities):
            if c.free_symbols & set(coordinates) and not _functional(c, coordinates):
                out += vanishing_conditions([c], coordinates)
            else:
                out.append(c)
    except (NotPolynomial, PolynomialError):
        return ()
    return tuple(dict.fromkeys(signs.back(signs.unit_free(c)) for c in out))


#: Tree nodes above which det g_αβ is not tried as the factor B of a density.
_DET_SIZE = 400


def _bases(nh: NonholonomicSystem) -> list:
    """``(B, k, label)`` for the densities ``B^k F``: 1, then powers of det g_αβ (if it depends on q only)."""
    out = [(sp.S.One, sp.S.Zero, "N = F")]
    g = nh.hessian_D
    det = determinant(g) if g.shape[0] <= 4 else None
    # a large determinant is not worth its normal form (minutes of cancel for the n-trailer): no B = det g
    det = None if det is None or size_exceeds(det, _DET_SIZE) else tidy(_without_deltas(det))
    if det is not None and not (det.free_symbols & set(nh.free_velocities)) and (det.free_symbols & set(nh.frame.chart.coordinates)):
        for k in (sp.Rational(1, 2), sp.Rational(-1, 2), sp.S.One, sp.S.NegativeOne):
            out.append((det, k, f"N = det(g)^({k}) * F, g = the Hessian of L_c in v^alpha"))
    return out


def search_invariant_density(field_: NonholonomicField, ansatz: FunctionAnsatz | None = None, *,
                             max_degree: int = 1, budget: float | None = 20.0) -> InvariantDensity:
    """Search an invariant density ``N(q)`` of Γ_nh of the form ``B^k F`` (see the module docstring).

    Parameters
    ----------
    field_ : NonholonomicField
    ansatz : FunctionAnsatz, optional
        The ansatz for F; by default :func:`default_function_ansatz` of degree 0, then 1, …,
        ``max_degree`` in the coordinates the field depends on.
    max_degree : int
        Highest degree of the default ansatz.
    budget : float or None
        Seconds of CPU time after which no further ansatz is started (the result says ``complete=False``).
    """
    start = time.process_time()  # CPU time: the verdict does not depend on the machine's load
    nh = field_.system
    q, v = nh.frame.chart.coordinates, nh.free_velocities
    div = divergence(field_)
    small = not size_exceeds(div, 2000)
    div_free = vanishes(div)
    conds = () if div_free else (constant_density_conditions(tidy(div) if small else div, q, v) if small else ())
    qdot = field_.velocity_field()
    used = [x for x in q if any(e.has(x) for e in tuple(qdot) + tuple(field_.accelerations))]
    angles = _angles(tuple(qdot) + tuple(field_.accelerations) + tuple(nh.lagrangian.expr.atoms(sp.sin, sp.cos)), q)
    if ansatz is not None:
        ansaetze = [ansatz]
    else:
        ansaetze = [default_function_ansatz(used, angles, d) for d in range(max_degree + 1)]
    searched, complete = [], True
    if div_free:
        return InvariantDensity(sp.S.One, div, True, (), ("constants",), "constants", 1, True, True)
    for A in ansaetze:
        for B, k, label in _bases(nh):
            if budget is not None and time.process_time() - start > budget:
                complete = False
                break
            what = f"{label}, F in {A.description}"
            searched.append(what)
            found = _solve(field_, div, B, k, A, q, v)
            if found is None:
                continue
            F, count = found
            N = _normalised(F if k == 0 else sp.powdenest(B ** k, force=True) * F, q)
            ok = is_invariant_density(field_, N)
            if ok:
                return InvariantDensity(N, div, False, conds, tuple(searched), what, count, complete, True)
        if not complete:
            break
    if ansatz is None and complete:
        for B, k, label in _bases(nh):
            if budget is not None and time.process_time() - start > budget:
                complete = False
                break
            what = "exp(c_A q^A)" + ("" if k == 0 else f" * det(g)^({k})") + ", c_A constant"
            searched.append(what)
            N = _exponential(field_, div, B, k, q, v)
            if N is not None and is_invariant_density(field_, N):
                return InvariantDensity(N, div, False, conds, tuple(searched), what, 1, complete, True)
    return InvariantDensity(None, div, False, conds, tuple(searched), None, 0, complete, False)


def _exponential(field_, div, B, k, q, v):
    """``N = exp(c_A q^A) B^k`` with constant ``c_A`` solving ``c_A q̇^A + k Γ(B)/B + div Γ_nh = 0`` (the
    Liouville condition divided by N), or None.  The condition is affine in the ``c_A``: its coefficients
    in ``(q, v)`` give a linear system solved exactly; free constants are set to 0."""
    qdot = field_.velocity_field()
    c = [sp.Dummy(f"e{j}") for j in range(len(q))]
    weight = div if k == 0 else k * _along(field_, B) / B + div
    params = field_.system.frame.chart.parameters
    if not _affine_solvable(qdot, weight, params):  # no constants c_A at random points: no exact system needed
        return None
    signs = _Signs.of([weight])
    residual = sp.Add(*[cj * qd for cj, qd in zip(c, qdot) if qd != 0]) + signs(weight)
    try:
        coeffs = coefficients_in(residual, q, v)
        M, b = linear_system(coeffs, c)
        if M.rows == 0:
            return None
        elim = eliminate(M, b, c)
    except (NotPolynomial, PolynomialError):
        return None
    if elim.conditions:
        return None
    zero = {z: 0 for z in elim.free}
    exponent = sp.Add(*[tidy(signs.back(elim.solution[cj].xreplace(zero))) * x
                        for cj, x in zip(c, q) if cj in elim.solution])
    if exponent == 0:
        return None
    N = sp.exp(sp.factor(exponent))
    return N if k == 0 else sp.powdenest(B ** k, force=True) * N


def _affine_solvable(qdot, weight, parameters=(), seed: int = 5) -> bool:
    """False if no constants ``c_A`` make ``c_A q̇^A + weight`` vanish at random real points (a least-squares
    solve over ``n + 6`` points; the parameters at one random value for all points — the ``c_A`` may depend on
    them —, the other symbols uniform in (0.3, 0.9) at each point); True if they may (or if the expressions
    cannot be evaluated there: the exact elimination then decides)."""
    import random

    import numpy as np

    exprs = list(qdot) + [weight]
    syms = sorted(set().union(*(sp.sympify(e).free_symbols for e in exprs)), key=str)
    try:
        f = expression_function(syms, exprs)
        rng = random.Random(seed)
        fixed = {p: rng.uniform(0.3, 0.9) for p in parameters}
        rows = [f(*[fixed[x] if x in fixed else rng.uniform(0.3, 0.9) for x in syms]) for _ in range(len(qdot) + 6)]
        values = np.array(rows, dtype=float)
    except (TypeError, ValueError, SimulationError):  # e.g. an undefined function: no numerical test
        return True
    if not np.all(np.isfinite(values)):
        return True
    A, b = values[:, :-1], -values[:, -1]
    x, *_ = np.linalg.lstsq(A, b, rcond=None)
    return float(np.linalg.norm(A @ x - b)) <= 1e-8 * (1.0 + float(np.linalg.norm(b)))


def _normalised(N, coordinates) -> sp.Expr:
    """N without its constant factors (a density is defined up to one), tidied."""
    N = sp.factor(tidy(N)) if not size_exceeds(N, 400) else N
    coords = set(coordinates)
    kept = [f for f in sp.Mul.make_args(N) if f.free_symbols & coords]
    return sp.Mul(*kept) if kept else sp.S.One


def _solve(field_, div, B, k, A: FunctionAnsatz, q, v):
    """``(F, number of independent solutions)`` for ``B Γ(F) + F (k Γ(B) + B div) = 0`` in the ansatz, or None."""
    weight = div if k == 0 else k * _along(field_, B) / B + div
    columns = [_along(field_, b) + b * weight for b in A.basis]
    fixed = fixed_parameters(field_.system.frame.chart.parameters)  # F's coefficients may depend on them
    relations = numerical_relations([col.xreplace(fixed) for col in columns] if fixed else columns)
    if relations is not None and not relations:
        return None  # no solution at a generic point: the exact elimination is not needed
    if relations:  # narrow the ansatz to the functions of one relation
        r = relations[0]
        top = max(abs(x) for x in r)
        keep = [j for j, x in enumerate(r) if abs(x) > 1e-7 * top]
        A = FunctionAnsatz(tuple(A.basis[j] for j in keep), A.description)
        columns = [columns[j] for j in keep]
    if len(columns) == 1:  # one unknown: F = the basis function if its column vanishes identically
        return (A.basis[0], 1) if vanishes(columns[0]) else None
    c = [sp.Dummy(f"c{j}") for j in range(len(A))]
    signs = _Signs.of(columns)
    residual = sp.Add(*[cj * signs(col) for cj, col in zip(c, columns)])
    try:
        coeffs = coefficients_in(residual, q, v)
        M, b = linear_system(coeffs, c)
        if M.rows == 0:
            elim = Elimination({}, tuple(c), (), ())
        else:
            elim = eliminate(M, b, c)
    except (NotPolynomial, PolynomialError):
        return None
    if elim.conditions or not elim.free:
        return None
    first = elim.free[0]
    unit = {z: (1 if z == first else 0) for z in elim.free}
    values = {z: e.xreplace(unit) for z, e in elim.solution.items()}
    values.update(unit)
    sol = signs.back(sp.Add(*[values.get(cj, 0) * bj for cj, bj in zip(c, A.basis)]))
    if sol == 0:
        return None
    return tidy(sol), len(elim.free)


def solutions_in_span(field_: NonholonomicField, terms, columns, *, prefilter: bool = True) -> list:
    """A basis of the combinations ``Σ_j c_j t_j`` of ``terms`` (functions of ``(q, v^α)``) whose
    ``Σ_j c_j columns_j`` vanishes identically in (q, v), the ``c_j`` constants (possibly depending on the
    parameters).  A numerical test at generic fixed parameters first keeps only the terms that take part
    in some relation among the columns (:func:`~anholo.algebra.numeric.numerical_relations`); the
    coefficients in (q, v) of the rest give a linear system solved exactly (``prefilter=False``: the terms are
    already narrowed, e.g. by :func:`~anholo.analysis.first_integrals.numerical_span_filter`).  Constants are
    not returned."""
    nh = field_.system
    q, v = nh.frame.chart.coordinates, nh.free_velocities
    terms, columns = list(terms), list(columns)
    relations = None
    if prefilter:
        fixed = fixed_parameters(nh.frame.chart.parameters)
        relations = _all_relations([col.xreplace(fixed) for col in columns] if fixed else columns)
        if relations is not None and not relations:
            return []
    if relations:
        keep = sorted({j for r in relations for j, x in enumerate(r) if abs(x) > 1e-7 * max(abs(y) for y in r)})
        terms, columns = [terms[j] for j in keep], [columns[j] for j in keep]
    c = [sp.Dummy(f"c{j}") for j in range(len(terms))]
    try:
        coeffs = coefficients_in(sp.Add(*[cj * col for cj, col in zip(c, columns)]), q, v)
        M, b = linear_system(coeffs, c)
        elim = Elimination({}, tuple(c), (), ()) if M.rows == 0 else eliminate(M, b, c)
    except (NotPolynomial, PolynomialError):
        return []
    if elim.conditions:
        return []
    out = []
    for z in elim.free:
        unit = {w: (1 if w == z else 0) for w in elim.free}
        vals = {w: e.xreplace(unit) for w, e in elim.solution.items()}
        vals.update(unit)
        F = tidy(sp.Add(*[vals.get(cj, 0) * t for cj, t in zip(c, terms)]))
        if F != 0 and not F.is_number:
            out.append(F)
    return out


def _all_relations(columns: list):
    """The numerical relations among ``columns``, including those among the columns that do not vanish when
    some do (:func:`~anholo.algebra.numeric.numerical_relations` then returns the vanishing ones only); None if
    a column cannot be evaluated."""
    rel = numerical_relations(columns)
    if not rel or any(sum(1 for x in r if x != 0) != 1 for r in rel):
        return rel
    zero = {next(j for j, x in enumerate(r) if x != 0) for r in rel}
    rest = [j for j in range(len(columns)) if j not in zero]
    more = numerical_relations([columns[j] for j in rest]) if len(rest) > 1 else []
    if more is None:
        return None
    out = list(rel)
    for r in more:
        full = [0.0] * len(columns)
        for j, x in zip(rest, r):
            full[j] = x
        out.append(full)
    return out


@dataclass(frozen=True)
class VelocityDensity:
    """An invariant density ``N = |P|^k`` depending on the velocities (:func:`search_velocity_density`).

    ``factor`` is P (a polynomial in the ``v^α`` with coefficients in the function ansatz), ``exponent`` k,
    ``density`` ``P^k``, valid on each region where P keeps its sign (``|P|^k`` there); ``ansatz`` names the
    ansatz in which it was found."""

    factor: sp.Expr
    exponent: sp.Rational
    density: sp.Expr
    ansatz: str

    def __str__(self):
        return f"N = |{self.factor}|^({self.exponent}) on the regions where {self.factor} != 0 (ansatz: {self.ansatz})"


def search_velocity_density(field_: NonholonomicField, degree: int = 1, coefficient_degree: int = 0,
                            exponents=(-1, 1, sp.Rational(-1, 2), sp.Rational(1, 2), -2, 2)) -> tuple:
    """Invariant densities ``N(q, v) = |P|^k`` with ``P`` a polynomial of degree ≤ ``degree`` in the velocities
    ``v^α`` (coefficients in :func:`product_function_ansatz` of degree ``coefficient_degree``) and ``k`` in
    ``exponents``.  Liouville's condition ``Γ_nh(N) + N div Γ_nh = 0`` divided by ``|P|^(k−1)`` is

        k Γ_nh(P) + P div Γ_nh = 0,

    linear in P's unknown constants (a Darboux polynomial of Γ_nh with the cofactor ``−div Γ_nh / k``), solved
    by :func:`solutions_in_span`; each solution is checked by the zero test of ``Γ_nh(N)/N + div Γ_nh``.
    Densities independent of the velocities are left to :func:`search_invariant_density`, and P that are first
    integrals are skipped (they solve it only when ``div Γ_nh = 0``, and then any function of a first integral
    is a density).  A tuple of
    :class:`VelocityDensity`.

    The densities found this way are singular where P vanishes: the Chaplygin sleigh, which has no smooth
    invariant measure (Zenkov & Bloch 2003), has ``N = 1/|ω|`` (ω its angular velocity) on ``ω ≠ 0``.  Not part
    of ``anholo analyze`` (the report's block searches densities N(q))."""
    nh = field_.system
    q, v = nh.frame.chart.coordinates, tuple(nh.free_velocities)
    div = divergence(field_)
    qdot = field_.velocity_field()
    used = [x for x in q if any(e.has(x) for e in tuple(qdot) + tuple(field_.accelerations))]
    angles = _angles(tuple(qdot) + tuple(field_.accelerations), q)
    A = product_function_ansatz(used, angles, coefficient_degree)
    monos = [sp.S.One] + [sp.Mul(*c) for d in range(1, degree + 1) for c in itertools.combinations_with_replacement(v, d)]
    terms = list(dict.fromkeys(b * mono for mono in monos for b in A.basis))
    along = [field_(t) for t in terms]
    what = (f"N = |P|^k, P a polynomial of degree <= {degree} in the velocities with coefficients in {A.description}, "
            f"k in {', '.join(str(k) for k in exponents)}")
    out = []
    for k in exponents:
        k = sp.nsimplify(k)
        for P in solutions_in_span(field_, terms, [k * g + t * div for g, t in zip(along, terms)]):
            if not (P.free_symbols & set(v)):
                continue
            rate = field_(P)
            if vanishes(rate):  # P a first integral (then div Γ_nh = 0): any function of it times dq dv
                continue
            N = P ** k
            if vanishes(rate * k / P + div):
                out.append(VelocityDensity(P, k, N, what))
        if out:
            break
    return tuple(out)

"""Search of strongly consistent sections in a linear ansatz (Crampin & Mestdag 2010, Cor. 1).

``σ = σ0 + Σ_k c_k f_k`` with unknown constants ``c_k``: the strong residuals
``W_α(σ)``, ``S_b(σ)`` are affine in the ``c_k``; their coefficients of the
monomials in ``v^α`` and in the functions of q are extracted exactly
(:mod:`anholo.algebra.coefficients`), giving a linear system
(:mod:`anholo.algebra.elimination`) whose solutions are the working sections and
whose compatibility conditions are conditions on the parameters
(docs/consistency.rst).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import sympy as sp

from ..parsing import sympified
from ..algebra import size_exceeds, tidy, vanishes, xreplace_dag
from ..algebra.coefficients import NotPolynomial, coefficients_in
from ..algebra.conditions import condition_eq, condition_text
from ..algebra.elimination import Elimination, linear_system, solve_linear
from ..errors import SectionError
from ..dynamics.nonholonomic import NonholonomicSystem

from .sections import Section, check_linear, distinct_up_to_scale, parameter_factors, strong_residuals, weak_residuals

_PRESENT_LIMIT = 2000  # solutions larger than this (tree nodes) are reported untidied

__all__ = ["Ansatz", "polynomial_ansatz", "SectionFamily", "SectionSearch", "search_sections"]


# ---------------------------------------------------------------------------------------------
# Section search
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Ansatz:
    """A linear family of sections ``σ_a = σ0_a + Σ_k c_{a,k} f_{a,k}(q, v^α)`` (docs/consistency.rst).

    Parameters
    ----------
    system : NonholonomicSystem
    basis : sequence of sequences
        For each component a (n − m of them), the functions ``f_{a,k}``.
    offset : Section or sequence, optional
        The fixed part ``σ0`` (default 0), e.g. the section −p of a Chaplygin system.
    name : str, optional
        Label of the sections found; default ``"<offset name> + c"`` or ``"c"``.

    Attributes
    ----------
    unknowns : tuple of tuples of Symbol
        ``c_{a,k}``, named ``c<a>_<k>`` with the 1-based frame index a.
    """

    system: NonholonomicSystem
    basis: tuple
    offset: object = None
    name: str = None
    unknowns: tuple = None

    def __post_init__(self):
        nh = check_linear(self.system)
        k = nh.n - nh.m
        basis = tuple(tuple(sympified(f) for f in comp) for comp in self.basis)
        if len(basis) != k:
            raise SectionError(f"the ansatz needs a list of basis functions for each of the {k} components, "
                               f"got {len(basis)} lists.")
        offset = self.offset
        offset_name = None
        if offset is None:
            offset = (sp.S.Zero,) * k
        elif isinstance(offset, Section):
            offset_name = offset.name
            offset = offset.values
        offset = Section(nh, tuple(offset), offset_name or "offset").values
        for comp in basis:
            Section(nh, tuple(comp[:1]) * k if comp else (0,) * k)  # validates: functions of (q, v^α)
        taken = {s.name for e in list(offset) + [f for comp in basis for f in comp] for s in e.free_symbols}
        unknowns = []
        for a, comp in enumerate(basis):
            row = []
            for j in range(len(comp)):
                name = f"c{nh.m + a + 1}_{j + 1}"
                while name in taken:
                    name = "_" + name
                row.append(sp.Symbol(name, real=True))
            unknowns.append(tuple(row))
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "unknowns", tuple(unknowns))
        if self.name is None:
            object.__setattr__(self, "name", f"{offset_name} + c" if offset_name else "c")

    @property
    def all_unknowns(self) -> tuple:
        return tuple(c for row in self.unknowns for c in row)

    @property
    def values(self) -> tuple:
        """``σ_a`` with the unknown constants as symbols."""
        return tuple(o + sp.Add(*[c * f for c, f in zip(cs, fs)])
                     for o, cs, fs in zip(self.offset, self.unknowns, self.basis))

    def __str__(self):
        m = self.system.m
        return "; ".join(f"sigma{m + a + 1} = {s}" for a, s in enumerate(self.values))


def _monomials(variables, degree: int) -> list:
    out = []
    for d in range(degree + 1):
        for combo in itertools.combinations_with_replacement(variables, d):
            out.append(sp.Mul(*combo))
    return out


def polynomial_ansatz(nh: NonholonomicSystem, functions: Sequence = (1,), degree: int = 1,
                      offset=None, name: str | None = None) -> Ansatz:
    """Sections polynomial in the free quasi-velocities with coefficients from a list of functions of q.

    Every component gets the basis ``{f(q)·M(v)}`` for f in ``functions`` and M
    the monomials in ``v^1..v^m`` of degree 0..``degree``; the section is
    ``σ = offset + Σ c_k f_k`` with unknown constants ``c_k``.

    Examples
    --------
    >>> from anholo.system import System
    >>> nh = System.load("nonholonomic_particle").nonholonomic()
    >>> print(polynomial_ansatz(nh, degree=1))
    sigma3 = c3_1 + c3_2*v1 + c3_3*v2
    """
    check_linear(nh)
    if int(degree) != degree or degree < 0:
        raise SectionError(f"degree must be a non-negative integer, got {degree!r}.")
    fs = [sympified(f) for f in functions]
    mons = _monomials(nh.free_velocities, int(degree))
    basis = tuple(f * M for f in fs for M in mons)
    return Ansatz(nh, (basis,) * (nh.n - nh.m), offset, name)


@dataclass(frozen=True, eq=False)
class SectionFamily:
    """Strongly consistent sections found by :func:`search_sections`.

    Attributes
    ----------
    section : Section
        Its values contain the ``free_constants`` (arbitrary) and, if the family
        exists only for special parameter values, ``section.conditions`` lists them.
    free_constants : tuple of Symbol
    conditions : tuple of Eq
        The parameter values of this family (empty: for all parameter values).
    """

    section: Section
    free_constants: tuple
    conditions: tuple

    def __str__(self):
        free = f"; free constants {', '.join(map(str, self.free_constants))}" if self.free_constants else ""
        return f"{self.section}{free}"


@dataclass(frozen=True, eq=False)
class SectionSearch:
    """Result of :func:`search_sections`.

    Attributes
    ----------
    ansatz : Ansatz
    families : tuple of SectionFamily
        The strongly consistent sections of the ansatz: a family valid for all
        parameter values first (if any), then families for special parameter values.
    exists : bool or None
        True if a family exists for all parameter values, None if only for
        special values (``parameter_conditions``), False if none exists.
    parameter_conditions : tuple of tuple of Eq
        Alternatives of parameter conditions under which a section exists (when
        ``exists`` is None).
    equations : int
        Number of linear equations the residuals were reduced to.
    reason : str
    """

    ansatz: Ansatz
    families: tuple
    exists: bool | None
    parameter_conditions: tuple
    equations: int
    reason: str

    def __str__(self):
        lines = [f"section search {self.ansatz.name}: {self.reason}"]
        lines += [f"  {f}" for f in self.families]
        return "\n".join(lines)


def _choose_parameter(f, params, solve_for):
    cands = [p for p in (solve_for or params) if f.has(p)]
    if not cands:
        return None
    if solve_for:
        return cands[0]

    def degree(p):
        try:
            return sp.degree(f, p)
        except sp.PolynomialError:
            return 99

    return min(cands, key=lambda p: (degree(p), params.index(p)))


def _roots(f, p) -> list:
    """Real roots of ``f = 0`` for the parameter p (non-negative if p is declared positive)."""
    d = sp.Dummy(p.name, real=True)
    try:
        roots = sp.solve(f.xreplace({p: d}), d)
    except NotImplementedError:
        return []
    return [r for r in roots if not r.has(sp.I) and not (p.is_positive and r.is_negative)]


def _special_values(elim: Elimination, nh, params, solve_for) -> list:
    """Candidate parameter substitutions where a generically incompatible system may become solvable:
    zeros of the essential factors of the compatibility conditions and of the pivots."""
    factors = []
    for e in distinct_up_to_scale(list(elim.conditions) + list(elim.pivots)):  # multiples: same factors
        fs = parameter_factors(e, nh) or ()
        factors += [f for f in fs if f.free_symbols & set(params)]
    subs, seen = [], set()
    for f in sorted(set(factors), key=sp.default_sort_key):
        if solve_for and not f.free_symbols & set(solve_for):
            continue
        p = f if f.is_Symbol else _choose_parameter(f, params, solve_for)
        if p is None:
            continue
        for r in ([sp.S.Zero] if f.is_Symbol else _roots(f, p)):
            key = (p, r)
            if key not in seen:
                seen.add(key)
                subs.append({p: r})
    return subs


def search_sections(nh: NonholonomicSystem, ansatz: Ansatz, *, solve_for: Sequence = None) -> SectionSearch:
    """Strongly consistent sections in a linear ansatz (docs/consistency.rst; Cor. 1 of Crampin & Mestdag (2010)).

    The residuals ``W_α(σ)`` and ``S_b(σ)`` of :func:`strong_consistency` are
    affine in the unknown constants ``c_k`` of ``σ = σ0 + Σ c_k f_k``.  Each is
    reduced exactly to its coefficients (monomials in ``v^α``, in the coordinates
    and in ``sin``/``cos`` of them modulo ``sin² + cos² = 1``), a linear system
    ``M c = b`` whose entries depend on the parameters only.  It is solved at a
    generic parameter point (:func:`anholo.algebra.solve_generic`).  If that
    is incompatible, the numerators of its compatibility conditions are factored
    and each alternative (a parameter put to 0, or a factor solved for the
    parameter in ``solve_for`` — default: the parameter of lowest degree in it)
    is substituted and the system solved again.  Every family returned is
    verified by substitution into the residuals.

    Parameters
    ----------
    nh : NonholonomicSystem
    ansatz : Ansatz
        e.g. :func:`polynomial_ansatz`.
    solve_for : sequence of Symbol, optional
        Parameters to express the special parameter values by (e.g. ``[a]``).

    Raises
    ------
    SectionError
        If the residuals are not polynomial in the velocities and the functions
        of q after clearing denominators (choose another ansatz).
    """
    check_linear(nh)
    if not isinstance(ansatz, Ansatz) or ansatz.system is not nh:
        raise SectionError("the ansatz must be an Ansatz built on this NonholonomicSystem (see polynomial_ansatz).")
    params = list(nh.frame.chart.parameters)
    solve_for = [sympified(p) if not isinstance(p, str) else sp.Symbol(p, positive=True) for p in (solve_for or [])]
    unknown_params = [p for p in solve_for if p not in params]
    if unknown_params:
        raise SectionError(f"solve_for names {unknown_params}, which are not parameters of the system "
                           f"({', '.join(map(str, params)) or 'none'}).")
    values = ansatz.values
    residuals = weak_residuals(nh, values) + strong_residuals(nh, values)
    coeffs = []
    for r in residuals:
        try:
            coeffs += coefficients_in(r, nh.frame.chart.coordinates, nh.free_velocities)
        except NotPolynomial as exc:
            raise SectionError(
                "the consistency residuals of this ansatz are not polynomial in the velocities and the "
                f"functions of q ({exc}); use basis functions that are polynomials in the coordinates "
                "and in sines and cosines of them."
            ) from exc
    unknowns = ansatz.all_unknowns
    M, b = linear_system(coeffs, unknowns)
    candidates = []  # (substitution, elimination)
    generic = solve_linear(M, b, unknowns)
    if not generic.conditions:
        candidates.append(({}, generic))
    else:
        for sub in _special_values(generic, nh, params, solve_for):
            elim = solve_linear(M, b, unknowns, sub)
            if not elim.conditions:
                candidates.append((sub, elim))
    families = []
    for sub, elim in candidates:
        sol, free = elim.solution, elim.free
        vals = tuple(xreplace_dag(xreplace_dag(v, sol), sub) if sub else xreplace_dag(v, sol) for v in values)
        vals = tuple(tidy(v) if not size_exceeds(v, _PRESENT_LIMIT) else v for v in vals)
        conditions = tuple(condition_eq(p, val) for p, val in sub.items())
        check = {c: sp.Rational(k + 2, 7) for k, c in enumerate(free)}
        if sub and any(vanishes(xreplace_dag(sp.denom(sp.together(r)), sub)) for r in residuals
                       if not size_exceeds(r, 4 * _PRESENT_LIMIT)):
            continue  # a special value where the residuals are undefined (e.g. L not regular w.r.t. D there)
        test = [xreplace_dag(xreplace_dag(xreplace_dag(r, sol), check), sub) for r in residuals]
        if not all(vanishes(t) for t in test):
            continue  # not a solution after all (only verified families are reported)
        section = Section(nh, vals, ansatz.name, conditions)
        families.append(SectionFamily(section, free, conditions))
    if candidates and not candidates[0][0]:
        exists, reason = True, (f"strongly consistent sections of the form {ansatz.name} exist for all parameter "
                                f"values ({len(candidates[0][1].free)} free constants).")
    elif families:
        exists = None
        texts = [condition_text(f.conditions) for f in families]
        reason = f"strongly consistent sections of the form {ansatz.name} exist iff " + " or ".join(texts) + "."
    else:
        exists = False
        reason = f"no strongly consistent section of the form {ansatz.name} exists."
    return SectionSearch(ansatz, tuple(families), exists,
                         tuple(f.conditions for f in families) if exists is None else (), M.rows, reason)

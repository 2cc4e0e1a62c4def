"""The consistency block at scale (docs/consistency.rst; Crampin & Mestdag (2010), Cor. 1).

* Coefficient conditions that are rational multiples of each other are factored once
  (``distinct_up_to_scale``): the reduced list must have the same solutions, checked by a direct
  sympy solve written here, and the Routh sphere's zero-section verdict, decided through it, is
  checked against the coordinate multiplier method (``constrained_coordinate_solution``: σ = 0 is
  strongly consistent iff the constraint forces vanish, Cor. 1 with μ ≡ 0).
* The report's search of sections −p + c is not started when its number of unknowns predicts it
  cannot finish in its budget; the block says so and names the Python call.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution, point_on_constraints

from anholo.algebra.presentation import Presenter
from anholo.analysis import summaries
from anholo.analysis.consistency import strong_consistency, zero_section
from anholo.analysis.sections import distinct_up_to_scale
from anholo.analysis.summaries import ChaplyginSummary, SearchNotFinished
from anholo.system import System


def test_distinct_up_to_scale_drops_rational_multiples_only():
    a, b, c = sp.symbols("a b c", positive=True)
    exprs = [a * (b - 1), -2 * a * b + 2 * a, a * (b - 1) / 3, a * (b + 1), c * a * (b - 1), a * (b - 1)]
    kept = distinct_up_to_scale(exprs)
    # the multiples −2·e and e/3 and the repeat go; a·(b + 1) and c·e (not a rational multiple) stay
    assert len(kept) == 3
    assert kept[0] is exprs[0]
    assert any(sp.simplify(k - a * (b + 1)) == 0 for k in kept)
    assert any(sp.simplify(k - c * a * (b - 1)) == 0 for k in kept)
    # independent: the solution sets of "all vanish" agree (sympy's solve on both lists)
    def solutions(es):
        return {frozenset(s.items()) for s in sp.solve(es, [b, c], dict=True)}
    assert solutions(exprs) == solutions(kept)


def test_distinct_up_to_scale_keeps_non_multiples():
    x, y = sp.symbols("x y")
    exprs = [x + y, x + 2 * y, 2 * x + 2 * y + 1, x * y, 2 * x * y + sp.Rational(1, 3)]
    assert len(distinct_up_to_scale(exprs)) == len(exprs)


def _forces(S, sub, seed):
    """Constraint forces λ of the coordinate multiplier method at a random point on the constraints."""
    q, u = S.chart.coordinates, S.chart.velocities
    L = S.lagrangian.natural_expr().xreplace(sub)
    cons = [e.xreplace(sub) for e in S.constraints]
    params = [p for p in S.chart.parameters if p not in sub]
    dep = [u[q.index(sp.Symbol(n, real=True))] for n in ("x", "y")]
    pt = point_on_constraints(q, u, cons, params, dep, seed, low=-1.0, high=1.0)
    _, lam = constrained_coordinate_solution(L, q, u, cons, pt)
    return np.asarray(lam, dtype=float)


def test_routh_sphere_zero_section_verdict_against_coordinate_multipliers():
    S = System.load("routh_sphere")
    nh = S.nonholonomic()
    P = {p.name: p for p in S.chart.parameters}
    verdict = strong_consistency(nh, zero_section(nh))
    assert verdict.holds is None and len(verdict.conditions) == 1
    (alt,) = verdict.conditions
    sub = {}
    for eq in alt:  # e.g. s = 0 and I1 - I3 = 0: solve each for one of its parameters
        expr = eq.lhs - eq.rhs
        p = sorted(expr.free_symbols, key=str)[0]
        sub[p] = sp.solve(expr, p)[0].xreplace(sub)
    # the condition is s = 0 and I1 = I3 (the homogeneous ball), whichever way it is written
    assert P["s"].xreplace(sub) == 0
    assert sp.simplify((P["I1"] - P["I3"]).xreplace(sub)) == 0
    # independent oracle: σ = 0 is strongly consistent iff the constraint forces vanish on C
    for seed in (1, 2):
        assert np.allclose(_forces(S, sub, seed), 0, atol=1e-12)
    # and the condition is needed: each half of it alone leaves forces
    for partial in ({P["s"]: 0}, {P["I3"]: P["I1"]}, {}):
        assert not np.allclose(_forces(S, partial, 3), 0, atol=1e-6)


def test_momentum_search_not_started_when_its_unknowns_exceed_the_budget():
    system = System.load("two_wheeled_carriage")
    ch = system.chaplygin()
    unknowns = (ch.n - ch.m) * len(ch.default_ansatz())
    assert unknowns == 54 > summaries.UNKNOWNS_PER_SECOND * summaries.SEARCH_BUDGET
    block = ChaplyginSummary.of(ch, system.nonholonomic(), system, search_budget=summaries.SEARCH_BUDGET)
    assert isinstance(block.search, SearchNotFinished) and block.search.unknowns == 54
    text = "\n".join(block.text_lines(Presenter()))
    assert "search not started" in text and "ch.momentum_sections(ch.default_ansatz())" in text
    payload = block.payload(Presenter())["chaplygin"]["search"]
    assert payload["completed"] is False and payload["started"] is False
    assert [s.name for s in block.sections] == ["-p"]  # nothing unverified is passed on


def test_momentum_search_still_runs_below_the_threshold():
    """The knife edge's search (12 unknowns) is still run and decided (not skipped by the prediction)."""
    system = System.load("knife_edge")
    ch = system.chaplygin()
    unknowns = (ch.n - ch.m) * len(ch.default_ansatz())
    assert unknowns <= summaries.UNKNOWNS_PER_SECOND * summaries.SEARCH_BUDGET
    block = ChaplyginSummary.of(ch, system.nonholonomic(), system, search_budget=summaries.SEARCH_BUDGET)
    assert not isinstance(block.search, SearchNotFinished)
    assert block.search.sections == ()

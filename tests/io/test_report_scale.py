"""Reports of larger systems finish and stay small; optional searches stop at their CPU budget.

Oracles: the report's own completeness flag and sizes (generous bounds; the real
figures are measured by benchmarks/bench_implicit.py), and, for what the report
prints, the coordinate multiplier method (tests/oracles.py) at a random point of C
for the roller racer's nonholonomic accelerations.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp
from oracles import constrained_coordinate_solution, dependent_velocities, point_on_constraints

from anholo.algebra.budget import OverBudget, cpu_budget
from anholo.algebra.presentation import Presenter
from anholo.analysis.summaries import ChaplyginSummary, SearchNotFinished
from anholo.examples import load_example
from anholo.io.report import analyze
from anholo.system import System


@pytest.mark.slow
@pytest.mark.parametrize("name", ["roller_racer", "two_particles_perpendicular", "snakeboard", "chaplygin_ball"])
def test_large_report_finishes_small_and_complete(name):
    system = System.load(name)
    report = analyze(system, budget=None)
    assert report.complete
    text = report.to_text()
    assert len(text) < 100_000
    data = json.loads(report.to_json())
    assert len(json.dumps(data)) < 2_000_000
    # the JSON keeps every block the report computed, under its key
    assert {o.key for o in report.outcomes if o.note is None} <= set(data)
    if name == "roller_racer":
        # the JSON accelerations (with their shared subexpressions) are the right functions
        spec = load_example(name)
        nhj = data["nonholonomic"]
        names = {s.name: s for s in list(spec.coordinates) + list(spec.velocities) + list(spec.parameters)}
        sub = {}
        for k, e in nhj.get("cse", []):
            sub[sp.Symbol(k)] = sp.sympify(e, locals=names).xreplace(sub)
        qdd = {k: sp.sympify(v, locals=names).xreplace(sub) for k, v in nhj["q_ddot"].items()}
        dep = dependent_velocities(spec, list(spec.constraints))
        pt = point_on_constraints(spec.coordinates, spec.velocities, spec.constraints, spec.parameters, dep, 7)
        want, _ = constrained_coordinate_solution(spec.lagrangian, spec.coordinates, spec.velocities,
                                                  spec.constraints, pt)
        got = [complex(qdd[q.name].xreplace(pt).evalf()).real for q in spec.coordinates]
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-9)


def test_roller_racer_chaplygin_verdict_from_exact_coefficients():
    """σ = −p for the roller racer: the conditions returned make the residuals p_a R^a_αβ v^β vanish,
    and the residuals do not vanish at a generic parameter point (numerical evaluation at random
    points of C, independent of the coefficient extraction that produced the conditions)."""
    rng = np.random.default_rng(3)
    ch = System.load("roller_racer").chaplygin()
    verdict = ch.consistency()
    # the residuals vanish only for d1 = d2 = 0, values of parameters that enter the frame: excluded, as the
    # consistency module excludes them (one rule for both sections), so the verdict is "no"
    assert verdict.holds is False and not verdict.conditions
    P = {p.name: p for p in ch.frame.chart.parameters}
    assert {P["d1"], P["d2"]} <= set().union(*(e.free_symbols for row in ch.frame.vectors.tolist() for e in row))
    residuals = ch.chaplygin_condition()
    syms = sorted(set().union(*(r.free_symbols for r in residuals)), key=str)
    for special in (False, True):
        pt = {s: sp.Float(rng.uniform(0.3, 1.2)) for s in syms}
        if special:
            pt[P["d1"]] = pt[P["d2"]] = 0
        values = [abs(complex(r.xreplace(pt).evalf())) for r in residuals]
        assert (max(values) < 1e-9) is special


def test_search_over_its_budget_is_reported_not_lost(monkeypatch):
    import anholo.analysis.summaries as summaries

    monkeypatch.setattr(summaries, "UNKNOWNS_PER_SECOND", 10**6)  # started (not predicted over budget), then stopped
    system = System.load("two_wheeled_carriage")
    ch = system.chaplygin()
    block = ChaplyginSummary.of(ch, system.nonholonomic(), system, search_budget=0.01)
    assert isinstance(block.search, SearchNotFinished)
    assert "not finished within its budget" in "\n".join(block.text_lines(Presenter()))
    assert block.payload(Presenter())["chaplygin"]["search"]["completed"] is False


def test_cpu_budget_interrupts_and_restores():
    import signal

    with pytest.raises(OverBudget):
        with cpu_budget(0.05):
            while True:
                pass
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0
    with cpu_budget(5.0):
        x = sum(range(1000))
    assert x == 499500


def test_flow_block_over_its_budget_is_decided_numerically(monkeypatch):
    """An exact analysis of the flow that needs more than its CPU budget is decided at random points from
    the program of Γ_nh instead (its block says so); the other blocks are unaffected."""
    from anholo.analysis import flow_summaries
    from anholo.io import report as report_module

    def spin(nh, *args, **kwargs):
        while True:
            pass

    # generous enough that the exact invariant-measure block finishes inside it on a slow, loaded CI machine
    monkeypatch.setattr(report_module, "FLOW_BUDGET", 2.0)
    monkeypatch.setattr(flow_summaries.ControllabilitySummary, "of", classmethod(lambda cls, nh: spin(nh)))
    report = analyze(System.load("nonholonomic_particle"),
                     sections=["nonholonomic", "controllability", "invariant_measure"])
    assert report.complete and report.block("nonholonomic") is not None
    data = json.loads(report.to_json())
    assert data["controllability"]["decided"] == "numerical"
    assert data["controllability"]["growth_vector"] == [2, 3]  # ż = y ẋ: [X1, X2] = ∓∂z
    assert data["invariant_measure"]["decided"] == "exact"


def test_flow_block_over_both_budgets_says_how_to_compute_it(monkeypatch):
    """When the numerical decision does not finish either, the block is reported as not computed, with
    the Python call that computes it; the report counts as complete."""
    from anholo.analysis import flow_summaries
    from anholo.io import report as report_module

    def spin(nh, *args, **kwargs):
        while True:
            pass

    monkeypatch.setattr(report_module, "FLOW_BUDGET", 0.05)
    monkeypatch.setattr(flow_summaries.ControllabilitySummary, "of", classmethod(lambda cls, nh: spin(nh)))
    monkeypatch.setattr(flow_summaries.ControllabilitySummary, "of_maggi", classmethod(lambda cls, nh: spin(nh)),
                        raising=False)
    report = analyze(System.load("nonholonomic_particle"),
                     sections=["nonholonomic", "controllability", "invariant_measure"])
    assert report.complete and report.block("nonholonomic") is not None
    assert report.block("invariant_measure") is not None
    data = json.loads(report.to_json())
    stopped = data["controllability"]["not_computed"]
    assert "CPU-time budget of 0.05 s" in stopped and "flag_of(nh.frame, nh.m)" in stopped
    text = report.to_text()
    assert "controllability: not computed" in text and "Not computed:" in text
    assert "Not computed:" in report.to_latex()

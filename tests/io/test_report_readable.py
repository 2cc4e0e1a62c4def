"""Reports people read (issue #26): bounded lines, named shared subexpressions instead of placeholders,
cheap simplification of small equations, verdict text in LaTeX set by the LaTeX printer.

The oracles are independent of anholo's printing: the substitution of the ``where`` definitions back into
an equation is compared with the coordinate multiplier method (tests/oracles.py), and the collected Hamel
equations with the coordinate Euler–Lagrange equations written here with sympy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp

from anholo.algebra.presentation import Presenter, Shared
from anholo.algebra.printing import tex_text
from anholo.examples import example_names
from anholo.io.report import TEXT_WIDTH, Report, _wrapped, analyze
from anholo.system import System

#: Examples whose report takes a few seconds at most; the others run in the slow suite.
FAST = {"nonholonomic_particle", "rigid_body", "polar_particle", "appell_hamel", "chaplygin_sleigh",
        "spherical_pendulum", "rotating_knife_edge", "nonhomogeneous_counterexample"}
ALL = sorted(set(example_names()) | {"n_trailer_3"})
_REPORTS: dict = {}


def _report(name):
    if name not in _REPORTS:
        _REPORTS.clear()  # one report kept: the catalogue's would hold a lot of memory
        _REPORTS[name] = analyze(System.load(name))
    return _REPORTS[name]


def _cases():
    return [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in ALL]


# Python syntax that must not reach LaTeX: powers, products between names, Python calls and comparisons,
# the file's names of velocities, and budget notes in brackets on small systems; plain-text mathematics set
# as escaped text (``L\^{}``, ``Gamma\_nh``, ``4 $<$ 5``) and Python's booleans.  A Python call to run is
# code (``\texttt``), where underscores belong.
_PYTHON_IN_TEX = [re.compile(p) for p in (r"\*\*", r"[A-Za-z0-9_)]\*[A-Za-z0-9_(]", r"sqrt\(", r"<=", r">=",
                                           r"\\_dot", r"\\_ddot", r"Derivative\(", r"\\\^\{\}", r"\\_",
                                           r"\bTrue\b", r"\bFalse\b", r"\$<\$", r"\$>\$")]
_CODE = re.compile(r"\\texttt\{(?:[^{}]|\{\})*\}")


@pytest.mark.parametrize("name", _cases())
def test_every_example_reads_in_lines_of_at_most_120_characters_without_python_in_its_latex(name):
    report = _report(name)
    text = report.to_text()
    long = [line for line in text.splitlines() if len(line) > TEXT_WIDTH]
    assert not long, long[:2]
    large = getattr(report.system, "is_large", False)
    if not large:  # expressions too large for a line are named (where c1 = ...), never a placeholder
        assert "[expression" not in text
    tex = report.to_latex()
    leaks = [(p.pattern, line[:160]) for line in tex.splitlines() if not line.startswith("%")
             for p in _PYTHON_IN_TEX if p.search(_CODE.sub("", line))]
    assert not leaks, leaks[:3]
    if not large:
        assert "[expression" not in tex
    assert "Failed to print" not in tex and "Failed to print" not in text
    assert tex.count(r"\begin{align*}") == tex.count(r"\end{align*}")
    assert all(line.count("$") % 2 == 0 for line in tex.splitlines() if "\\$" not in line)


def _entries(lines):
    """``{name: text}`` of the equations ``name = text`` in wrapped report lines (continuation lines joined;
    ``where`` definitions included)."""
    out, current = {}, None
    start = re.compile(r"^\s*(?:where\s+)?([A-Za-z_][A-Za-z0-9_]*) = (.*)$")
    for line in lines:
        m = start.match(line)
        if m and not line.lstrip().startswith(("+", "-")):
            current = m.group(1)
            out[current] = m.group(2)
        elif current is not None and line.startswith("  ") and line.strip():
            out[current] += " " + line.strip()
        else:
            current = None
    return out


@pytest.mark.slow
def test_carriage_multipliers_printed_over_named_subexpressions_match_the_coordinate_multiplier_method():
    """The text report's λ (with its ``where`` definitions substituted back) against the coordinate
    multiplier method: W q̈ = F + Aᵀλ, A q̈ = −Ȧ u (tests/oracles.py), at a random point of C."""
    from oracles import constrained_coordinate_solution, point_on_constraints

    S = System.load("two_wheeled_carriage")
    report = analyze(S, sections=["nonholonomic"])
    # the default report shows the multipliers in their shortest cheap normal form (cancel), small enough
    # to print without names; without that refinement they are printed over named subexpressions
    refined = _entries(report.to_text().split("Multipliers of the constraints as written")[1].splitlines()[1:])
    text = Report(S, report.outcomes, Presenter(refine_limit=0), constrained=True).to_text()
    lines = text[text.index("Multipliers of the constraints as written"):].splitlines()[1:]
    entries = _entries(lines)
    # the carriage has a parameter c: the names are w1, w2, ...
    assert any(re.fullmatch(r"w\d+", k) for k in entries), "the large multiplier is printed over names"
    chart = S.chart
    names = {s.name: s for s in chart.coordinates + chart.velocities + chart.parameters}
    defs = {}
    for key in sorted((k for k in entries if re.fullmatch(r"w\d+", k)), key=lambda k: int(k[1:])):
        defs[sp.Symbol(key)] = sp.sympify(entries[key], locals=names).xreplace(defs)
    lam = [sp.sympify(entries[f"lambda{a}"], locals=names).xreplace(defs) for a in (1, 2, 3)]
    assert not any(e.free_symbols & set(defs) for e in lam)
    q, u, params = list(chart.coordinates), list(chart.velocities), list(chart.parameters)
    from test_report import _dependent

    for seed in (3, 11):
        pt = point_on_constraints(q, u, list(S.constraints), params, _dependent(S), seed, low=-1.0, high=1.0)
        _, expected = constrained_coordinate_solution(S.lagrangian.natural_expr(), q, u, list(S.constraints), pt)
        got = [float(sp.re(e.xreplace(pt).evalf(30))) for e in lam]
        np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-9)
        shown = [sp.sympify(refined[f"lambda{a}"], locals=names) for a in (1, 2, 3)]
        np.testing.assert_allclose([float(sp.re(e.xreplace(pt).evalf(30))) for e in shown], expected,
                                   rtol=1e-8, atol=1e-9)
        # the check can fail: a wrong sign of one definition changes the multipliers
        wrong = {k: (-v if k == max(defs, key=lambda s: int(s.name[1:])) else v) for k, v in defs.items()}
        lam_wrong = [sp.sympify(entries[f"lambda{a}"], locals=names) for a in (1, 2, 3)]
        bad = []
        for e in lam_wrong:
            for k in sorted(wrong, key=lambda s: -int(s.name[1:])):
                e = e.xreplace({k: wrong[k]})
            bad.append(float(sp.re(e.xreplace(defs).xreplace(pt).evalf(30))))
        assert not np.allclose(bad, expected, rtol=1e-8, atol=1e-9)

    # --full: every expression printed over names, no placeholder, lines still bounded
    full = Report(S, report.outcomes, Presenter(full=True), constrained=True).to_text()
    assert "[expression" not in full and "not printed" not in full
    assert max(map(len, full.splitlines())) <= TEXT_WIDTH


def test_shared_names_substitute_back_to_the_expression_and_repeat_once():
    x, y, z = sp.symbols("x y z")
    piece = sp.Add(*[(x + k * y) ** 2 / (1 + z ** 2 + k) for k in range(12)])
    expr = sp.sin(piece) * piece + sp.cos(piece + x) / (1 + piece ** 2)
    shared = Shared(per_expression=100)
    short = shared.abbreviate(expr, 60)
    assert shared.size(short) <= 60 + len(short.args) and short != expr
    back = short
    for name, body in reversed(shared.definitions):
        back = back.xreplace({name: body})
    assert sp.expand(back - expr) == 0
    bodies = [b for _, b in shared.definitions]
    assert len(bodies) == len(set(bodies))  # a subexpression that occurs three times has one name
    assert sum(1 for _, b in shared.definitions if b == piece) <= 1
    # over the per-expression budget: no names are kept and the presenter falls back to its note
    tight = Shared(per_expression=1)
    assert tight.abbreviate(expr, 20) is None and tight.definitions == []


def test_wrapping_breaks_prose_and_products_within_the_width():
    prose = "growth vector (2, 3) at a generic point: " + "word " * 60
    product = "  x_ddot = " + "*".join(f"sin(theta{k})" for k in range(40))
    for line in (prose, product):
        parts = _wrapped(line)
        assert len(parts) > 1 and all(len(p) <= TEXT_WIDTH for p in parts)
        assert "".join(p.strip() for p in parts).replace(" ", "") == line.strip().replace(" ", "")


def test_hamel_equations_of_the_particle_are_collected_in_the_accelerations():
    """The README's particle: (1 + y²) v̇1 = −y v1 v2 on C; against the coordinate Lagrange–d'Alembert
    equations written here (x_ddot = λ(−y)... with the constraint ż = y ẋ)."""
    text = analyze(System.load("nonholonomic_particle"), sections=["nonholonomic"]).to_text()
    block = text[text.index("Hamel equations on C"):].splitlines()[1:3]
    assert block[0].strip() == "(y**2 + 1)*v1_dot = -v1*v2*y", block
    # independent check: with v1 = x_dot, v2 = y_dot, z_dot = y x_dot the coordinate equations
    # x_ddot = -lam*y, y_ddot = 0, z_ddot = lam and z_ddot = y_dot x_dot + y x_ddot give the same v1_dot
    y, v1, v2, lam, a = sp.symbols("y v1 v2 lam a")
    sol = sp.solve([sp.Eq(a, -lam * y), sp.Eq(lam, v2 * v1 + y * a)], [a, lam], dict=True)[0]
    lhs, rhs = block[0].split(" = ")
    names = {"y": y, "v1": v1, "v2": v2, "v1_dot": sp.Symbol("v1_dot")}
    residual = sp.sympify(lhs, locals=names) - sp.sympify(rhs, locals=names)
    assert sp.simplify(residual.subs(sp.Symbol("v1_dot"), sol[a])) == 0
    assert sp.simplify(residual.subs(sp.Symbol("v1_dot"), sol[a] + 1)) != 0


def test_homogeneity_is_said_in_words():
    text = " ".join(analyze(System.load("nonhomogeneous_counterexample"), sections=["chetaev"]).to_text().split())
    assert "alpha_bar - alpha: " not in text
    assert "alpha_bar - alpha = x_dot**2, not 0 (" in text
    assert "): the constraints are not homogeneous of degree one" in text
    text = " ".join(analyze(System.load("appell_hamel"), sections=["chetaev"]).to_text().split())
    assert "alpha_bar - alpha = 0 (" in text and "): the constraints are homogeneous of degree one" in text


def test_verdict_text_is_set_by_the_latex_printer():
    assert tex_text("density N = sqrt(y**2 + 1)") == r"density $N = \sqrt{y^{2} + 1}$"
    assert tex_text("class (s_i_dot = A_i(r2)*r1_dot)") == r"class ($\dot{s}_{i} = \dot{r}_{1} A_{i}{\left(r_{2} \right)}$)"
    assert tex_text("iff a*m = 0 and x_dot*y = 0.") == r"iff $a m = 0$ and $\dot{x} y = 0$."
    assert tex_text("degree <= 1") == r"degree $\leq$ 1"
    # relations between names and numbers, the theory's index notation, code to run, upright words
    assert tex_text("iff a = 0 or m0 = 0; leaves of dimension 4 < 5") == \
        r"iff $a = 0$ or $m_{0} = 0$; leaves of dimension $4 < 5$"
    assert tex_text("p_a R^a_αβ v^β ≠ 0 on C: σ = −p fails") == \
        r"$p_{a} R^{a}_{\alpha\beta} v^{\beta} \neq 0$ on $C$: $\sigma = -p$ fails"
    assert tex_text("L^ = L - p_a v^a, equal to Gamma_nh on C") == \
        r"$\hat{L} = L - p_{a} v^{a}$, equal to $\Gamma_{\mathrm{nh}}$ on $C$"
    assert tex_text("the section -p + c (1)") == "the section $-p + c$ (1)"
    assert tex_text("powers of sin(lean)") == r"powers of $\sin{\left(\mathrm{lean} \right)}$"
    # code to run: in \texttt, with places before it and after its dots where a line may end ragged
    brk = r"\hfil\penalty50\hfilneg{}"
    assert tex_text("run ch.momentum_sections(x) in Python") == \
        rf"run {brk}\texttt{{ch.{brk}momentum\_sections(x)}} in Python"
    assert tex_text("does not apply - the constraints") == "does not apply - the constraints"
    # prose, paths and ranges are left as text
    assert tex_text("see docs/chaplygin.rst (Props. 5-6)") == "see docs/chaplygin.rst (Props. 5-6)"
    assert tex_text("__import__(os)*2") == r"\_\_import\_\_(os)*2"


def test_headings_set_the_distribution_as_mathematics():
    tex = analyze(System.load("nonholonomic_particle"), sections=["controllability"]).to_latex()
    assert r"\subsection{Controllability of $D$ (growth vector)}" in tex


def test_each_search_has_its_own_budget(monkeypatch):
    """The consistency block's search gets its whole budget even after a Chaplygin block that used more
    CPU time than that (the report used to give it only what the Chaplygin block left: 0 s)."""
    import time

    import anholo.analysis.consistency as report_module  # the report imports it when the block is computed
    from anholo.analysis.summaries import CONSISTENCY_SEARCH_BUDGET, ChaplyginSummary

    original, seen = ChaplyginSummary.of, []

    def slow_of(*args, **kwargs):
        t0 = time.process_time()
        while time.process_time() - t0 < 3.2:  # a Chaplygin search that used up a shared budget
            pass
        return original(*args, **kwargs)

    def spy(nh, sections, search_budget=None, **kwargs):
        seen.append(search_budget)
        return real(nh, sections, search_budget=search_budget, **kwargs)

    real = report_module.consistency_report
    monkeypatch.setattr(ChaplyginSummary, "of", staticmethod(slow_of))
    monkeypatch.setattr(report_module, "consistency_report", spy)
    rep = analyze(System.load("nonholonomic_particle"), sections=["chaplygin", "consistency"])
    assert seen == [CONSISTENCY_SEARCH_BUDGET]
    assert "an earlier search used it" not in rep.to_text()



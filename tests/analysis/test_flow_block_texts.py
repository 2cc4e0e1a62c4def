"""The text and LaTeX of the first-integrals and invariant-measure blocks.

* A search stopped at its CPU budget says so in one sentence naming the Python call that completes it; the call
  named is run here and its integrals are checked along the coordinate multiplier equations of ``ż = y ẋ``
  (tests/oracles.py), independently of anholo.
* The conditions for a constant density leave out the parameters that enter the frame or the constraints
  (read here from the system file, not from anholo): the carriage's ``R³ a m0 = 0`` reads ``a = 0 or m0 = 0``.
"""

import re
import tomllib
from pathlib import Path

import sympy as sp

import anholo
from anholo.algebra.presentation import Presenter
from anholo.analysis.flow_summaries import FirstIntegralsSummary, InvariantMeasureSummary
from anholo.system import System
from oracles import particle_integral_rates

STOPPED = re.compile(r"The search stopped at its CPU-time budget; run (anholo\.analysis\.first_integrals\.first_integrals"
                     r"\(field, budget=None\)) in Python to complete it\.")


def test_a_stopped_first_integrals_search_says_so_with_the_call_that_completes_it():
    nh = System.load("nonholonomic_particle").nonholonomic()
    stopped = FirstIntegralsSummary.of(nh, budget=0.0)  # no ansatz fits in no time
    assert stopped.result.complete is False
    text = "\n".join(stopped.text_lines(Presenter()))
    found = STOPPED.findall(text)
    assert len(found) == 1
    tex = "\n".join(stopped.latex_lines(Presenter()))
    # the call set as code, with places where the line may end (the LaTeX printer's business): read without them
    plain = re.sub(r"\\hfil\\penalty50\\hfilneg\{\}|\\allowbreak\{\}", "", tex)
    assert (r"The search stopped at its CPU-time budget; run \texttt{anholo.analysis.first\_integrals."
            r"first\_integrals(field, budget=None)}") in plain
    complete = FirstIntegralsSummary.of(nh, budget=None)
    assert complete.result.complete and not STOPPED.search("\n".join(complete.text_lines(Presenter())))
    assert "stopped at its CPU-time budget" not in "\n".join(complete.latex_lines(Presenter()))
    # the call named completes the search; what it finds is conserved along the multiplier equations
    res = eval(found[0], {"anholo": anholo, "field": nh.field()})  # noqa: S307 - the sentence's own call
    assert res.complete and len(res.integrals) == 2
    for rate in particle_integral_rates([i.natural for i in res.integrals]):
        assert abs(float(rate)) < 1e-12


def structural_parameters(name) -> set:
    """The parameters that occur in the frame or the constraints as the system file writes them."""
    with open(Path(anholo.__file__).parent / "examples" / f"{name}.toml", "rb") as fh:
        spec = tomllib.load(fh)
    params = {p: sp.Symbol(p) for p in spec.get("parameters", [])}
    written = [e for row in spec.get("frame", []) for e in row] + list(spec.get("constraints", []))
    out = set()
    for e in written:
        out |= sp.sympify(str(e).replace("^", "**"), locals=params).free_symbols & set(params.values())
    return out


def condition_factors(text: str, names: dict) -> list:
    """The factors of each ``lhs = 0`` of the conditions after "iff" in a line (a list of sets of symbols)."""
    out = []
    for line in text.splitlines():
        if " iff " not in line:
            continue
        rest = line.split(" iff ", 1)[1].split(" (", 1)[0].rstrip(".")
        for piece in re.split(r" or | and ", rest):
            lhs, _, rhs = piece.strip("() ").partition(" = ")
            if rhs.strip() != "0":
                continue
            try:
                e = sp.sympify(lhs, locals=names)
            except (sp.SympifyError, SyntaxError, TypeError):
                continue
            out.append({f.base if f.is_Pow else f for f in sp.Mul.make_args(sp.factor(e))})
    return out


def test_the_carriage_constant_density_conditions_leave_out_the_radius():
    nh = System.load("two_wheeled_carriage").nonholonomic()
    block = InvariantMeasureSummary.of(nh)
    p = Presenter()
    text = "\n".join(block.text_lines(p))
    assert "the constant density is invariant iff a = 0 or m0 = 0" in text
    structural = structural_parameters("two_wheeled_carriage")
    assert sp.Symbol("R") in structural and sp.Symbol("a") not in structural
    names = {s.name: s for s in nh.frame.chart.parameters}
    factors = condition_factors(text, names)
    assert factors and all(not ({str(x) for x in f} & {str(x) for x in structural}) for f in factors)
    assert {frozenset(str(x) for x in f) for f in factors} == {frozenset({"a"}), frozenset({"m0"})}
    # the conditions are those of div Γ_nh = 0: a = 0 or m0 = 0 makes the raw condition R³ a m0 vanish
    raw = block.result.constant_density_conditions
    assert all(c.xreplace({names["a"]: 0}) == 0 and c.xreplace({names["m0"]: 0}) == 0 for c in raw)
    assert block.payload(p)["invariant_measure"]["constant_density"] == "conditional"
    # the unfiltered condition names R: the check above can fail
    assert any(names["R"] in f for f in condition_factors("x iff " + " and ".join(f"{c} = 0" for c in raw), names))

"""Across the catalogue: the Summary lines of ``anholo analyze`` say what their blocks say.

For each system's default report (in-process): the controllability, invariant-measure and first-integrals
Summary lines against their blocks' JSON (growth vector, density — compared at random points —, the number
and kinds of integrals), and every condition after "iff" in the text report free of the parameters that
enter the frame or the constraints as the system file writes them (read here with tomllib and sympy, not
by anholo): the rule of the consistency, Chaplygin and invariant-measure verdicts.
"""

import random
import re
import tomllib
from pathlib import Path

import pytest
import sympy as sp
from sympy.core.function import AppliedUndef

import anholo
from anholo.io.report import analyze
from anholo.system import System

from analysis.test_flow_block_texts import condition_factors, structural_parameters

NAMES = sorted(p.stem for p in (Path(anholo.__file__).parent / "examples").glob("*.toml"))


def _same_function(a, b, symbols) -> bool:
    if a.atoms(AppliedUndef) or b.atoms(AppliedUndef):  # undefined functions of the coordinates: exactly
        return sp.simplify(a - b) == 0
    rng = random.Random(5)
    for _ in range(4):
        pt = {s: rng.uniform(0.3, 1.3) for s in symbols}
        x, y = complex(a.evalf(subs=pt)), complex(b.evalf(subs=pt))
        if abs(x - y) > 1e-9 * max(1.0, abs(x)):
            return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_summary_lines_agree_with_their_blocks(name):
    report = analyze(System.load(name))
    p = report.presenter
    checked = 0
    for o in report.outcomes:
        if o.failed or o.note is not None or o.stopped is not None or o.block is None:
            continue
        lines = o.block.summary()
        payload = o.block.payload(p)
        if o.key == "controllability":
            c = payload["controllability"]
            assert f"growth vector {c['growth_vector']}" in lines[0]
            assert ("not bracket generating" in lines[0]) == (not c["bracket_generating"])
            checked += 1
        elif o.key == "invariant_measure":
            m = payload["invariant_measure"]
            line = lines[0]
            if m["density"] is None:
                assert "none in the ansatz searched" in line
            elif m["divergence_free"]:
                assert "constant density" in line
            else:
                assert "density" in line and "none" not in line
                shown = re.search(r"density N = (.*?)( \(decided numerically\))?$", line)
                if shown and "det(" not in shown.group(1):
                    a, b = sp.sympify(shown.group(1)), sp.sympify(str(m["density"]))
                    assert _same_function(a, b, a.free_symbols | b.free_symbols), (line, m["density"])
            checked += 1
        elif o.key == "first_integrals":
            kinds = payload["first_integrals_details"]["kinds"]
            line = lines[0]
            assert len(payload["first_integrals"]) == len(kinds)
            if not kinds:
                assert "none" in line or "0 found" in line
            else:
                assert f"{len(kinds)} found ({', '.join(kinds)})" in line
            checked += 1
    assert checked >= 1 or not any(o.key == "first_integrals" and o.block is not None for o in report.outcomes)
    text = report.to_text()
    structural = {str(s) for s in structural_parameters(name)}
    with open(Path(anholo.__file__).parent / "examples" / f"{name}.toml", "rb") as fh:
        names = {s: sp.Symbol(s) for s in tomllib.load(fh).get("parameters", [])}
    for factors in condition_factors(text, names):
        assert not ({str(f) for f in factors} & structural), (name, factors)

"""``anholo analyze --json``: the controllability, invariant_measure and first_integrals blocks.

Oracles: the growth vector (2, 3) of the Heisenberg-type particle distribution (hand bracket:
[∂y, ∂x + y∂z] = ∂z); the density checked by direct coordinate differentiation of the
multiplier field of ``ż = y ẋ`` (v̇1 = −y v1 v2/(1 + y²), by hand); each first integral
differentiated along the coordinate multiplier method (tests/oracles.py).
"""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import sympy as sp

import anholo
from oracles import (CARRIAGE_PARAMETERS, CARRIAGE_Q, carriage_density_divergence, max_at_random_points,
                     particle_integral_rates)


def _analyze(name):
    out = subprocess.run([sys.executable, "-m", "anholo.cli", "analyze", name, "--json"], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_contract_nonholonomic_particle():
    d = _analyze("nonholonomic_particle")
    assert d["controllability"]["growth_vector"] == [2, 3] and d["controllability"]["bracket_generating"] is True
    x, y, z, v1, v2 = sp.symbols("x y z v1 v2")
    N = sp.sympify(d["invariant_measure"]["density"], locals={"y": y})
    # coordinates (x, y, z, v1, v2) of C: x' = v1, y' = v2, z' = y v1, v1' = -y v1 v2/(1 + y^2), v2' = 0
    flow = [(v1, x), (v2, y), (y * v1, z), (-y * v1 * v2 / (1 + y**2), v1)]
    assert sp.simplify(sum(sp.diff(N * f, s) for f, s in flow)) == 0
    assert isinstance(d["first_integrals"], list) and len(d["first_integrals"]) == 2
    for rate in particle_integral_rates(d["first_integrals"]):
        assert abs(float(rate)) < 1e-12


def test_contract_blocks_present_for_the_carriage():
    d = _analyze("two_wheeled_carriage")
    # θ − R(ψ2 − ψ1)/(2c) is constant along D (θ' = R(ψ2' − ψ1')/(2c)): leaves of dimension 4 < 5
    assert d["controllability"]["growth_vector"] == [2, 3, 4]
    assert d["controllability"]["bracket_generating"] is False
    # exp(κ(ψ1 + ψ2)) up to a first integral, found in the exponential ansatz (tests/analysis/test_exponential_density.py)
    assert "exp" in d["invariant_measure"]["found_in"]
    assert len(d["first_integrals"]) >= 1
    # the measure N dq dv1 dv2: by the system file's frame (X1, X2 have the d/dpsi components (1, 0), (0, 1), the
    # other vectors none), v1 = psi1_dot and v2 = psi2_dot on D, the coordinates of the oracle's measure
    with open(Path(anholo.__file__).parent / "examples" / "two_wheeled_carriage.toml", "rb") as fh:
        frame = tomllib.load(fh)["frame"]
    assert [row[3:] for row in frame] == [["1", "0"], ["0", "1"], ["0", "0"], ["0", "0"], ["0", "0"]]
    assert d["invariant_measure"]["measure"] == "N dq ∧ dv1 ∧ dv2 on C"
    names = {str(s): s for s in CARRIAGE_Q + CARRIAGE_PARAMETERS}
    N = sp.sympify(d["invariant_measure"]["density"], locals=names)
    assert N.free_symbols <= set(names.values())  # a density N(q)
    assert max_at_random_points(carriage_density_divergence(N)) < 1e-10  # div(N Γ_nh) = 0, by the oracle
    psi1 = CARRIAGE_Q[3]
    assert max_at_random_points(carriage_density_divergence(N * sp.exp(psi1 / 10))) > 1e-4  # the check can fail
    assert max_at_random_points(carriage_density_divergence(N ** 2)) > 1e-4


def test_text_and_latex_of_the_flow_blocks():
    """The blocks render in text and LaTeX (the values are checked through the JSON above)."""
    from anholo.io.report import analyze
    from anholo.system import System

    report = analyze(System.load("chaplygin_sleigh"), sections=["controllability", "invariant_measure",
                                                                 "first_integrals"])
    assert report.complete
    text, tex = report.to_text(), report.to_latex()
    assert "growth vector (2, 3)" in text and "no invariant density in the ansatz searched" in text
    assert "the constant density is not invariant" in text  # a = 0 changes the constraint, m = 0 makes L singular
    assert r"\subsection{Controllability of $D$ (growth vector)}" in tex and "operatorname{div}" in tex

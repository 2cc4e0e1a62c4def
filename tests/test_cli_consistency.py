"""The "consistency" block of ``anholo analyze --json`` (THEORY §6).

Oracle: the coordinate multiplier method (tests/oracles.py,
``constrained_coordinate_solution``): the zero section is strongly consistent iff
the multipliers vanish; for the nonholonomic particle they do not at a random point
of C, so with no other candidate section the verdict is ``strong: false``.
"""

import json

import numpy as np
import sympy as sp

from anholo.cli import main
from oracles import constrained_coordinate_solution, point_on_constraints


def test_json_consistency_block_of_the_particle(capsys):
    assert main(["analyze", "nonholonomic_particle", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    block = report["consistency"]
    assert set(block) == {"weak", "strong", "section", "reason", "decided"} and block["decided"] == "exact"
    x, y, z = sp.symbols("x y z", real=True)
    xd, yd, zd = sp.symbols("x_dot y_dot z_dot", real=True)
    L = (xd**2 + yd**2 + zd**2) / 2
    pt = point_on_constraints([x, y, z], [xd, yd, zd], [zd - y * xd], [], [zd], seed=4)
    _, lam = constrained_coordinate_solution(L, [x, y, z], [xd, yd, zd], [zd - y * xd], pt)
    assert not np.allclose(lam, 0)  # σ = 0 fails: μ ≠ 0
    assert block["weak"] is True and block["strong"] is False and block["section"] in ("-p", "0")  # −p: its [symmetry] table
    assert "0 fails" in block["reason"]


def test_text_report_has_consistency_section(capsys):
    assert main(["analyze", "nonholonomic_particle"]) == 0
    out = capsys.readouterr().out
    assert "Consistency of the nonholonomic and vakonomic dynamics" in out
    assert "strongly consistent: no (section -p)" in out and "section 0: fails" in out

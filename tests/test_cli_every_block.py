"""The JSON contract of ``anholo analyze``: every system, large or small, gets every block, and every block
says how its verdicts were decided.

Large systems (the rattleback: L and constraints above 5,000 tree nodes; the 4-trailer: its field's program
over the exact route's cost limit) take Maggi's route; the nonholonomic particle the exact route.  The
values inside the blocks are checked against independent computations in the analyses' own tests
(tests/analysis, tests/dynamics, tests/geometry); here: presence, shape, and the growth vectors known
from the literature (a rolling body on a plane: (3, 5); the n-trailer, a Goursat distribution: (2, 3, …, n + 3)).
"""

from __future__ import annotations

import json

import pytest

from anholo.cli import main

BLOCKS = ("vakonomic", "consistency", "first_integrals_details", "invariant_measure", "controllability")


def _report(capsys, name):
    assert main(["analyze", name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name, decided, growth", [
    ("nonholonomic_particle", "exact", [2, 3]),
    ("n_trailer_4", "numerical", [2, 3, 4, 5, 6, 7]),
    ("rattleback", "numerical", [3, 5]),
])
def test_every_block_and_how_it_was_decided(capsys, name, decided, growth):
    d = _report(capsys, name)
    for key in BLOCKS:
        assert key in d and "error" not in d[key] and "not_computed" not in d[key], key
        assert d[key]["decided"] in ("exact", "numerical")
        if d[key]["decided"] == "numerical":
            assert d[key]["points"] >= 1 and 0 < d[key]["tolerance"] < 1e-6
    assert "decided" not in d  # every decision sits in its block
    vak = d["vakonomic"]
    assert set(vak["q_ddot"]) == set(d["coordinates"]) and len(vak["lambda_dot"]) == len(vak["multipliers"])
    assert {"unknowns", "M", "F"} <= set(vak["implicit"])
    assert d["consistency"]["weak"] is True and d["consistency"]["strong"] in (True, False, None)
    assert isinstance(d["first_integrals"], list)
    assert "density" in d["invariant_measure"] and "divergence_free" in d["invariant_measure"]
    assert d["controllability"]["growth_vector"] == growth
    assert d["controllability"]["decided"] == decided
    assert d["nonholonomic"]["decided"] in ("exact", "numerical")
    assert d["euler_lagrange"]["decided"] in ("exact", "numerical")


def test_the_text_report_of_a_large_system_has_no_block_left_out(capsys):
    assert main(["analyze", "rattleback"]) == 0
    text = capsys.readouterr().out
    assert "not computed for a large system" not in text and "FAILED" not in text
    assert "decided numerically" in text


def test_a_block_that_does_not_apply_says_why(capsys):
    d = _report(capsys, "nonholonomic_particle")
    assert "linear" in d["chetaev"]["note"]
    d = _report(capsys, "rigid_body")
    assert all(d[key]["note"] == "the system has no constraints" for key in ("vakonomic", "consistency", "chetaev"))
    d = _report(capsys, "nonhomogeneous_counterexample")
    assert "chetaev" in d["vakonomic"]["note"] and "error" not in d["chetaev"]


@pytest.mark.parametrize("name", ["two_wheeled_carriage"])
def test_text_lines_fit_a_reader(capsys, name):
    """The header's Lagrangian is wider than 120 characters (the carriage's L had 3,426); the wrapped
    Lagrangian is the same expression once its lines are joined."""
    import sympy as sp

    assert main(["analyze", name]) in (0, 3)
    text = capsys.readouterr().out
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("L = "))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    assert max(len(line) for line in lines[start:end]) <= 120  # the header's Lagrangian
    if name == "two_wheeled_carriage":
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("L = "))
        joined = lines[start][4:]
        for line in lines[start + 1:]:
            if not line.startswith("    "):
                break
            joined += " " + line.strip()
        from anholo.system import System
        L = System.load(name).lagrangian.natural_expr()
        names = {s.name: s for s in L.free_symbols}
        assert sp.simplify(sp.sympify(joined, locals=names) - L) == 0


def test_a_symmetry_with_affine_constraints_gives_a_note_not_a_failure():
    """The disk on a turntable declares the rotations about the vertical as a symmetry, but its constraints are
    affine: the Chaplygin block does not apply (a Chaplygin system has linear constraints, Crampin & Mestdag
    2010), which the report says in a note, and the report is complete (exit status 0)."""
    from anholo.io.report import analyze
    from anholo.system import System

    report = analyze(System.load("disk_on_turntable"), sections=["chaplygin", "first_integrals"])
    assert report.complete
    block = report.to_dict()["chaplygin"]
    assert set(block) == {"note"} and "affine" in block["note"]

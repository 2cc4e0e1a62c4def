"""Hostile and malformed input: the command line's contract, for every input.

Oracle: the contract itself (exit 0 with a complete result, or exit 3 with a report whose failed
section says why, or exit 2 with exactly one line ``anholo: error: …`` on stderr — never a traceback,
never an internal error, never longer than the time limit), checked on (1) every reproducer of the
reliability issue and a corpus of parser attacks (tests/fuzz/corpus.py), (2) a fast seeded sample of
mutations of the bundled example files (tests/fuzz/mutator.py), each also read a second, independent
way (tomllib + SymPy's own parser) so that a silently different reading is caught, and (3) a few of
them through a real ``python -m anholo.cli`` subprocess.  The long campaign is
``tools/fuzz_campaign.py`` (and, smaller, the slow test at the end).
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import harness  # noqa: E402
from corpus import CASES, Case  # noqa: E402
from mutator import mutants  # noqa: E402

import anholo.cli  # noqa: E402,F401 - imported once: the children are forked from this process
import anholo.system  # noqa: E402,F401

TIMEOUT = 90.0


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_corpus(case, tmp_path):
    argv = harness.materialize(case, str(tmp_path))
    outcome = harness.run_cli(argv, timeout=TIMEOUT)
    problem = harness.check_case(case, outcome)
    assert problem is None, f"{case.id}: {problem}\nstderr: {outcome.stderr[-2000:]}"
    assert not os.path.exists("/tmp/anholo_pwned")


def _mutant_cases(count, seed):
    return [Case(id, tuple(argv), {"s.toml": text}, "any") for id, text, argv in mutants(count, seed)]


FAST_MUTANTS = _mutant_cases(60, seed=0)


@pytest.mark.parametrize("case", FAST_MUTANTS, ids=[c.id for c in FAST_MUTANTS])
def test_mutated_examples(case, tmp_path):
    argv = harness.materialize(case, str(tmp_path))
    outcome = harness.run_cli(argv, timeout=TIMEOUT)
    assert outcome.ok, f"{case.id}: {outcome.kind}: {outcome.detail}\n{case.files['s.toml']}"
    api, found = harness.run_api_reading(case.files["s.toml"], timeout=TIMEOUT)
    assert api.ok, f"{case.id}: the API call gave {api.kind}: {api.detail}"
    assert found == [], f"{case.id}: read differently from what is written: {found}"


SUBPROCESS_IDS = ["hash-comment", "set-m0-knife_edge", "n-trailer-huge", "simulate-points-huge",
                  "unknown-command", "fullwidth-x", "100000-digit-decimal"]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SUBPROCESS_IDS], ids=SUBPROCESS_IDS)
def test_real_command_line(case, tmp_path):
    argv = harness.materialize(case, str(tmp_path))
    outcome = harness.run_subprocess(argv, timeout=120)
    assert harness.check_case(case, outcome) is None, outcome.stderr[-2000:]
    assert outcome.stderr.count("\n") == 1 and outcome.stderr.startswith("anholo: error: ")


@pytest.mark.slow
def test_campaign_sample():
    """A few hundred more mutations (the full campaign is tools/fuzz_campaign.py)."""
    import tempfile

    bad = []
    for case in _mutant_cases(250, seed=11):
        with tempfile.TemporaryDirectory() as d:
            outcome = harness.run_cli(harness.materialize(case, d), timeout=TIMEOUT)
        api, found = harness.run_api_reading(case.files["s.toml"], timeout=TIMEOUT)
        if not outcome.ok or not api.ok or found:
            bad.append((case.id, outcome.kind, outcome.detail, found))
    assert bad == []

"""Hostile input to the Python API: generated strings and values of the wrong kind, given to every public
call that takes an expression or a list (tests/fuzz/api_inputs.py).

Oracle: the API's contract — each call returns, or raises an ``AnholoError``; never another exception
(a raw ``TypeError``/``AttributeError``/``RecursionError`` from inside), never code execution (a canary
file in a temporary folder and a canary attribute of :mod:`builtins` that the generated code strings
would create), never longer than ``PER_CASE`` seconds.  Cases run in batches in forked children
(tests/fuzz/harness.py): a per-case alarm ends a slow case, the batch timeout a hang inside C code.
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import harness  # noqa: E402
from api_inputs import CANARY_ATTRIBUTE, entries, inputs  # noqa: E402

import anholo  # noqa: E402,F401 - imported once: the children are forked from this process

PER_CASE = 10.0


class _Slow(BaseException):
    pass


def _alarm(signum, frame):
    raise _Slow()


def _run_batch(cases, canary):
    """In the child: every case, with its outcome when it breaks the contract."""
    from anholo.errors import AnholoError

    calls = entries()
    problems = []
    signal.signal(signal.SIGALRM, _alarm)
    for case_id, entry, value in cases:
        t0 = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, PER_CASE)
        try:
            result = calls[entry][1](value)
            if case_id.endswith("-clean") and entry in ("Lagrangian", "sympified"):
                why = _misread(value, result)
                if why:
                    problems.append((case_id, repr(value)[:200], why))
        except AnholoError:
            pass
        except _Slow:
            problems.append((case_id, repr(value)[:200], f"over {PER_CASE} s"))
        except BaseException as exc:  # noqa: BLE001 - what the fuzzer looks for
            problems.append((case_id, repr(value)[:200], f"{type(exc).__name__}: {str(exc)[:300]}"))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if os.path.exists(canary) or hasattr(builtins, CANARY_ATTRIBUTE):
            problems.append((case_id, repr(value)[:200], "CODE EXECUTED"))
            if os.path.exists(canary):
                os.remove(canary)
        if time.monotonic() - t0 > PER_CASE:
            problems.append((case_id, repr(value)[:200], f"took {time.monotonic() - t0:.1f} s"))
    return problems


def _misread(text: str, read) -> str | None:
    """Why ``read`` is not what the well-formed ``text`` says, by SymPy's own parser (the oracle: these texts
    are generated from a grammar of names and numbers only, so SymPy's eval-based parser may read them)."""
    import random

    import sympy as sp
    from mutator import _agree, _independent

    names = {n: sp.Symbol(n) for n in ("x", "y", "z", "x_dot", "y_dot", "z_dot", "m")}
    ours = sp.sympify(read).xreplace({s: names[s.name] for s in sp.sympify(read).free_symbols if s.name in names})
    if not _agree(ours, _independent(text, dict(names)), list(names.values()), random.Random(3)):
        return f"read {str(read)[:100]!r}"
    return None


def _campaign(count, seed, batch=100):
    problems, ran = [], 0
    with tempfile.TemporaryDirectory() as d:
        canary = os.path.join(d, "PWNED")
        cases = list(inputs(count, seed, canary))
        for start in range(0, len(cases), batch):
            chunk = cases[start:start + batch]
            status, _out, _err, tb, seconds = harness.run_in_child(_run_batch, (chunk, canary),
                                                                  timeout=PER_CASE * len(chunk) + 60)
            if tb is not None:
                problems.append((chunk[0][0], "", f"the batch failed: {tb.strip().splitlines()[-1]}"))
            elif status is None:
                problems.append((chunk[0][0], "", f"the batch hung ({seconds:.0f} s)"))
            else:
                problems.extend(status)
            ran += len(chunk)
            assert not os.path.exists(canary)
    return ran, problems


def test_api_fuzz_sample():
    ran, problems = _campaign(60, seed=1)
    assert ran == 60 and problems == []


def test_a_misreading_would_be_noticed():
    import sympy as sp

    x = sp.Symbol("x", real=True)
    assert _misread("x^2 + 1/3", x**2 + sp.Rational(1, 3)) is None
    assert _misread("x^2 + 1/3", x**2 + 0.333) is not None


def test_generated_inputs_include_code_strings_and_wrong_kinds():
    values = [v for _, _, v in inputs(300, seed=1, canary="/tmp/x")]
    assert sum(isinstance(v, str) and "__import__" in v for v in values) >= 10
    assert sum(not isinstance(v, str) for v in values) >= 40
    assert len({e for _, e, _ in inputs(300, seed=1, canary="/tmp/x")}) == len(entries())


@pytest.mark.slow
def test_api_fuzz_campaign():
    """2,000 generated inputs (seeded): the contract holds for every one."""
    ran, problems = _campaign(2000, seed=25)
    assert ran == 2000
    assert problems == [], "\n".join(map(str, problems[:20]))

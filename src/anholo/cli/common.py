"""What every command of the command line shares: the argument helpers, the one rule for values, time budgets
(counted from the command's start) and the one-line error text."""

from __future__ import annotations

import argparse  # noqa: F401
import os  # noqa: F401
import sys  # noqa: F401
import time  # noqa: F401
import warnings  # noqa: F401

from ..errors import AnholoError, AnholoWarning  # noqa: F401

def _parse_assignment(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    name, value = name.strip(), value.strip()
    if not name or not value:
        raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {text!r}")
    return name, value


_FIELDS = ("euler-lagrange", "nonholonomic", "vakonomic", "chetaev")
_SECTION_NAMES = ("frame", "euler_lagrange", "nonholonomic", "vakonomic", "consistency", "chaplygin", "chetaev")
_DEFAULT_BUDGET = 120.0
_VALUE_OPTIONS = ("--q0", "--qdot0", "--lambda0")
_SIMULATE_BUDGET = 600.0
_SWEEP_BUDGET = 3600.0
_MAX_BUDGET = 3.2e7  # a year: longer timers overflow the system's interval timer


def _budget(args, default: float) -> float:
    from ..errors import ReportError

    budget = default if args.budget is None else args.budget
    if not budget > 0 or budget > _MAX_BUDGET:
        raise ReportError(f"--budget must be a positive number of seconds up to {_MAX_BUDGET:g} (a year), got "
                          f"{args.budget}.")
    return budget


_COMMAND_START: list = []


def _started() -> float:
    """When the command started: a time budget counts from there (from ``import anholo`` for the console
    script, from the call of :func:`main` in a running Python)."""
    return _COMMAND_START[-1] if _COMMAND_START else time.monotonic()


def _within_budget(budget: float, command: str, run):
    """``run()`` under a wall-time budget: its result, or exit status 3 after one line on stderr."""
    from ..io.report import _deadline, _OverBudget

    def interrupted(exc) -> bool:  # the budget's interrupt, possibly wrapped by the code it interrupted
        seen = set()
        while exc is not None and id(exc) not in seen:
            if isinstance(exc, _OverBudget):
                return True
            seen.add(id(exc))
            exc = exc.__cause__ or exc.__context__
        return False

    try:
        with _deadline(max(budget - (time.monotonic() - _started()), 0.01)):
            return run()
    except BaseException as exc:
        if not interrupted(exc):
            raise
        print(f"anholo: error: {command}: not finished within the time budget of {budget:g} s (raise it with "
              "--budget SECONDS)", file=sys.stderr)
        return 3


def _join_negative_values(argv):
    """``--q0 -1,2`` → ``--q0=-1,2`` (argparse would read ``-1,2`` as an option)."""
    out, items = [], list(argv)
    for k, item in enumerate(items):
        if k > 0 and items[k - 1] in _VALUE_OPTIONS and item.startswith("-") and out and out[-1] == items[k - 1]:
            out[-1] = f"{out[-1]}={item}"
        else:
            out.append(item)
    return out


def _numbers(text, what: str, count: int, names) -> list:
    from ..errors import InitialStateError
    from ..io.validation import number_from_text

    items = [x.strip() for x in text.split(",")] if text.strip() else []
    if len(items) != count:
        raise InitialStateError(
            f"{what}: expected {count} comma-separated values ({', '.join(names)}), got {len(items)}: {text!r}."
        )
    return [float(number_from_text(x, f"{what} ({name})", InitialStateError)) for x, name in zip(items, names)]


def _assignments(args) -> dict:
    """``--set`` pairs as a dict: a parameter set twice is an error."""
    from ..io.validation import assignments

    return assignments(args.assignments)


def _numeric_parameters(system, numeric: dict) -> dict:
    """Numerical ``--set`` values of ``simulate``, checked by the rule of every parameter value (finite, real,
    the declared sign) and given as floats."""
    from ..errors import SimulationError
    from ..io.validation import check_parameter_value, number_from_text

    by_name = {p.name: p for p in system.chart.parameters}
    out = {}
    for name, text in numeric.items():
        where = f"--set {name}"
        if name not in by_name:
            listing = ", ".join(by_name) or "(none)"
            raise SimulationError(f"{where}: {name!r} is not a parameter of {system.name!r}. Parameters: {listing}.")
        value = check_parameter_value(by_name[name], number_from_text(text, where, SimulationError), where,
                                      SimulationError)
        out[name] = float(value)
    return out


def _run_setup(args) -> tuple:
    """The options every integrating command shares, checked by the one validation rule (``--t-end``,
    ``--rtol``, ``--atol``, ``--points``), and the system loaded with its ``--set`` values: symbolic ones
    substituted, numerical ones returned as floats (:func:`_numeric_parameters`); ``--rtol < 100 ε`` refused."""
    import numpy as np

    from ..errors import SimulationError
    from ..limits import check as check_limit
    from ..io.validation import check_option
    from ..system import System

    check_option(args.t_end, "--t-end", SimulationError, low=0, low_open=True)
    check_option(args.rtol, "--rtol", SimulationError, low=0, low_open=True, high=1)
    check_option(args.atol, "--atol", SimulationError, low=0)
    floor = 100 * np.finfo(float).eps
    if args.rtol < floor:
        raise SimulationError(f"--rtol {args.rtol:g} is below what double precision can deliver (100 x machine "
                              f"epsilon = {floor:.3g}); the step size would collapse - give --rtol 1e-13 or more.")
    check_option(args.points, "--points", SimulationError, low=2, integer=True)
    check_limit("points", args.points, "--points", f"{args.points} output times")
    numeric, symbolic = {}, {}
    for name, value in _assignments(args).items():
        try:
            float(value)
            numeric[name] = value
        except ValueError:
            symbolic[name] = value
    system = System.load(args.target, symbolic)
    return system, _numeric_parameters(system, numeric)


def _one_line(exc) -> str:
    """A message on one line, at most a few thousand characters (the line is for a person), with control
    characters shown escaped (:func:`anholo.errors.printable`: an echoed name cannot drive the terminal)."""
    from ..errors import printable

    text = printable(" ".join(str(exc).split()))
    return text if len(text) <= 3000 else text[:2990] + " ..."


def _wrapped_text(text: str) -> str:
    """``text`` with no line longer than the report's :data:`~anholo.io.report.TEXT_WIDTH` (120 characters), by
    the report's rule: a longer line continues on lines indented four spaces more, a list or a sentence broken
    after its ``; `` or ``, `` outside parentheses, an expression by :func:`anholo.io.report._wrapped` (before a
    `` + `` / `` - ``, else at a space).  The text commands print through it (``compare``, ``linearize``,
    ``cache``); JSON, CSV and LaTeX are never wrapped."""
    return "\n".join(out for line in text.split("\n") for out in _wrapped_line(line))


def _wrapped_line(line: str) -> list:
    from ..io.report import TEXT_WIDTH, _wrapped

    return _wrapped(line, cut=lambda rest, lo: _list_cut(rest, lo, TEXT_WIDTH))


def _list_cut(rest: str, lo: int, width: int):
    """Where to break ``rest``: just after the last ``; `` outside parentheses and brackets within the width and
    after ``lo``, else before the last parenthetical remark `` (…``, else after the last ``, ``; else None."""
    depth, semis, notes, commas = 0, [], [], []
    for i, c in enumerate(rest[:width]):
        if c in "([{":
            if depth == 0 and i > lo and rest[i - 1] == " ":
                notes.append(i)
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and i > lo and rest[i + 1:i + 2] == " ":
            if c == ";":
                semis.append(i + 1)
            elif c == ",":
                commas.append(i + 1)
    for found in (semis, notes, commas):
        if found:
            return found[-1]
    return None

"""The ``anholo`` command line: ``anholo analyze``, ``anholo examples``, ``anholo simulate``, ``anholo sweep``,
``anholo linearize``, ``anholo compare``.

Thin by design: it parses arguments, loads a system, calls the library and prints.  Every user error is
printed as ``anholo: error: …`` (exit status 2), never as a traceback.  One module per command that has
more than a few lines (:mod:`.simulate`, :mod:`.sweep`, :mod:`.linearize`); :mod:`.common` holds what
they share.
"""

from __future__ import annotations

import argparse
import os
import gc
import sys
import time
import warnings

from .. import __version__
from ..errors import AnholoError, AnholoWarning
from . import common
from .common import (  # noqa: F401
    _COMMAND_START, _DEFAULT_BUDGET, _FIELDS, _MAX_BUDGET, _SECTION_NAMES, _SIMULATE_BUDGET, _SWEEP_BUDGET,
    _VALUE_OPTIONS, _assignments, _budget, _join_negative_values, _numbers, _numeric_parameters, _one_line,
    _parse_assignment, _run_setup, _started, _within_budget,
)
from .cache import _add_cache_parser, _cmd_cache  # noqa: F401
from .linearize import _add_linearize_parser, _cmd_linearize  # noqa: F401
from .simulate import _add_simulate_parser, _cmd_simulate  # noqa: F401
from .sweep import _add_sweep_parser, _cmd_sweep  # noqa: F401

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line like every other error (``anholo: error: …``, exit 2)."""

    def error(self, message):
        command = self.prog.split()
        where = f"{' '.join(command[1:])}: " if len(command) > 1 else ""
        self.exit(2, f"anholo: error: {where}{' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="anholo",
        description="Nonholonomic mechanics in anholonomic frames: analyse a system file or bundled example.",
    )
    parser.add_argument("--version", action="version", version=f"anholo {__version__}")
    parser.add_argument("--limits", default=None, metavar="NAME=N[,NAME=N...]",
                        help="raise (or lower) the bounds on inputs: expression_chars, nesting, digits, exponent, "
                        "root_digits, expanded_terms, coordinates, trailers, points (see anholo.limits; also "
                        "the environment variable ANHOLO_LIMITS)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    an = sub.add_parser(
        "analyze",
        help="frame, structure functions, Hamel equations and Euler–Lagrange field of a system",
        description="Analyse a system given as a TOML file or the name of a bundled example.",
    )
    an.add_argument("target", metavar="FILE_OR_EXAMPLE", help="path of a system file, or an example name")
    fmt = an.add_mutually_exclusive_group()
    fmt.add_argument("--latex", action="store_true", help="print LaTeX instead of text")
    fmt.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    an.add_argument("--standalone", action="store_true",
                    help="with --latex: a complete document for pdflatex (amsmath, breqn: long equations broken "
                    "over lines) instead of a fragment")
    an.add_argument(
        "--set",
        dest="assignments",
        action="append",
        default=[],
        type=_parse_assignment,
        metavar="NAME=VALUE",
        help="substitute a parameter value before the analysis (repeatable)",
    )
    an.add_argument("--simplify", action="store_true", help="run sympy.simplify on every reported expression (slow)")
    an.add_argument("--sections", default=None, metavar="NAME[,NAME...]",
                    help="compute and print only these blocks: " + ", ".join(_SECTION_NAMES))
    an.add_argument("--full", action="store_true",
                    help="print every expression in text/LaTeX, whatever its size (JSON is always complete)")
    an.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                    help="time the whole analysis may take (default %g s); a block still running then is "
                    "reported as over the budget" % _DEFAULT_BUDGET)
    an.add_argument("--quiet", action="store_true", help="no progress messages on stderr")

    sub.add_parser("examples", help="list the bundled examples", description="List the bundled examples.")
    _add_compare_parser(sub)
    _add_simulate_parser(sub)
    _add_sweep_parser(sub)
    _add_linearize_parser(sub)
    _add_cache_parser(sub)
    return parser


def _cmd_examples(args, out) -> int:
    from ..examples import list_examples

    items = list_examples()
    width = max(len(name) for name, _ in items)
    for name, title in items:
        print(f"{name.ljust(width)}  {title}", file=out)
    return 0


def _cmd_analyze(args, out) -> int:
    """Exit status 0: the report is complete; 3: printed, but a block failed or ran out of time."""
    from ..errors import ReportError
    from ..io.report import analyze
    from ..system import System

    sections = None
    if args.sections is not None:
        sections = [s for s in args.sections.split(",") if s.strip()]
        if not sections:
            raise ReportError("--sections needs at least one name: " + ", ".join(_SECTION_NAMES))
    if args.standalone and not args.latex:
        raise ReportError("--standalone makes the LaTeX report a complete document; use it with --latex.")
    budget = _budget(args, _DEFAULT_BUDGET)
    started = _started()
    from ..io.report import _deadline, _OverBudget

    try:  # reading the file (its normal forms) is inside the budget too
        with _deadline(max(budget - (time.monotonic() - started), 0.0) + max(0.1 * budget, 1.0)):
            system = System.load(args.target, _assignments(args))
    except _OverBudget:
        raise ReportError(f"not finished within the time budget of {budget:g} s: reading {args.target} (the normal "
                          "forms of its expressions) did not finish (raise it with --budget SECONDS)") from None
    from ..io.progress import Progress

    with Progress("analyze", enabled=None if not args.quiet else False) as progress:
        report = analyze(system, simplify=args.simplify, sections=sections, full=args.full,
                         budget=max(budget - (time.monotonic() - started), 0.01), progress=progress)
    # printing is inside the budget too (what the blocks left, and a tenth more): no report hangs there
    printing = max(budget - (time.monotonic() - started), 0.0) + max(0.1 * budget, 1.0)
    try:
        with _deadline(printing):
            if args.json:
                text = report.to_json() + "\n"
            elif args.latex:
                from ..io.latex import latex_document

                text = latex_document(report) if args.standalone else report.to_latex()
            else:
                text = report.to_text()
    except _OverBudget:
        raise ReportError(f"not finished within the time budget of {budget:g} s: the report was computed, but "
                          "printing its expressions did not finish (raise it with --budget SECONDS, or use the "
                          "Python API: anholo.io.report.analyze)") from None
    print(text, file=out, end="")
    if report.interrupted:
        print("anholo: interrupted (Ctrl-C): the report has the sections computed before it", file=sys.stderr)
        return 130
    return 0 if report.complete else 3


def _add_compare_parser(sub) -> None:
    cmp = sub.add_parser(
        "compare",
        help="Chetaev/nonholonomic versus vakonomic dynamics of a constrained system, side by side",
        description="Compare the Chetaev (Lagrange-d'Alembert) and vakonomic equations of a system with "
        "constraints: accelerations, their difference at the same state, Frobenius data, where they agree.",
    )
    cmp.add_argument("target", metavar="FILE_OR_EXAMPLE", help="path of a system file, or an example name")
    cmp.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    cmp.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=VALUE", help="substitute a parameter value first (repeatable)")
    cmp.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    cmp.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                     help="time the comparison may take (default %g s)" % _DEFAULT_BUDGET)


def _cmd_compare(args, out) -> int:
    import json

    from ..analysis.comparison import compare_methods
    from ..errors import ConstraintError
    from ..system import System

    system = System.load(args.target, _assignments(args))
    if not system.constraints:
        raise ConstraintError(f"{args.target} has no constraints; add a 'constraints' field to compare methods.")
    from ..io.progress import Progress

    def run():
        with Progress("compare", enabled=None if not args.quiet else False) as progress:
            result = compare_methods(system.lagrangian, system.kinematic_constraints(), progress=progress)
        text = (json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n" if args.json else
                common._wrapped_text(f"{system.name}\n{'=' * len(system.name)}\n{result.to_text()}"))
        print(text, file=out, end="")
        return 0

    return _within_budget(_budget(args, _DEFAULT_BUDGET), "compare", run)


def main(argv=None, out=None) -> int:
    """Entry point of the ``anholo`` console script; returns the exit status."""
    from .. import _STARTED

    if argv is None:  # the console script's process: the modules' objects (sympy's, numpy's) are never garbage,
        gc.freeze()  # so no collection traverses them again; and fewer, larger young collections (the symbolic
        gc.set_threshold(10_000, 10, 10)  # work allocates millions of small objects, few of them in cycles)
    _COMMAND_START[:] = [_STARTED if argv is None else time.monotonic()]
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(sys.argv[1:] if argv is None else argv))
    from .. import limits

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AnholoWarning)
            try:
                text = args.limits if args.limits is not None else os.environ.get("ANHOLO_LIMITS", "")
                with limits.using(limits.parse_limits(text) if text.strip() else limits.current()):
                    if args.command == "examples":
                        return _cmd_examples(args, out)
                    if args.command == "compare":
                        return _cmd_compare(args, out)
                    if args.command == "simulate":
                        return _cmd_simulate(args, out)
                    if args.command == "sweep":
                        return _cmd_sweep(args, out)
                    if args.command == "linearize":
                        return _cmd_linearize(args, out)
                    if args.command == "cache":
                        return _cmd_cache(args, out)
                    return _cmd_analyze(args, out)
            finally:
                for w in caught:
                    if issubclass(w.category, AnholoWarning):
                        print(f"anholo: warning: {_one_line(w.message)}", file=sys.stderr)
    except AnholoError as exc:
        print(f"anholo: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("anholo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (``anholo analyze ... | head``): nothing more to say
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes stdout at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # a defect of anholo, not of the input: one line, the traceback on request
        if os.environ.get("ANHOLO_DEBUG"):
            raise
        print(f"anholo: internal error ({type(exc).__name__}: {_one_line(exc)[:300]}); this is a bug in anholo - "
              "please report it with the command; set ANHOLO_DEBUG=1 for the traceback", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``anholo`` command line: ``anholo analyze``, ``anholo examples``.

Thin by design: it parses arguments, loads a system, calls :func:`anholo.report.analyze`
and prints.  Every user error is printed as ``anholo: error: …`` (exit status 2),
never as a traceback.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .errors import AnholoError

__all__ = ["main"]


def _parse_assignment(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    name, value = name.strip(), value.strip()
    if not name or not value:
        raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {text!r}")
    return name, value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anholo",
        description="Nonholonomic mechanics in anholonomic frames: analyse a system file or bundled example.",
    )
    parser.add_argument("--version", action="version", version=f"anholo {__version__}")
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

    sub.add_parser("examples", help="list the bundled examples", description="List the bundled examples.")
    return parser


def _cmd_examples(args, out) -> int:
    from .examples import list_examples

    items = list_examples()
    width = max(len(name) for name, _ in items)
    for name, title in items:
        print(f"{name.ljust(width)}  {title}", file=out)
    return 0


def _cmd_analyze(args, out) -> int:
    from .report import analyze
    from .system import System

    assignments = dict(args.assignments)
    system = System.load(args.target, assignments)
    report = analyze(system, simplify=args.simplify)
    if args.json:
        print(report.to_json(), file=out)
    elif args.latex:
        print(report.to_latex(), file=out, end="")
    else:
        print(report.to_text(), file=out, end="")
    return 0


def main(argv=None, out=None) -> int:
    """Entry point of the ``anholo`` console script; returns the exit status."""
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "examples":
            return _cmd_examples(args, out)
        return _cmd_analyze(args, out)
    except AnholoError as exc:
        print(f"anholo: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("anholo: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

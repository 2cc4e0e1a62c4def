"""The ``anholo`` command line: ``anholo analyze``, ``anholo examples``, ``anholo simulate``.

Thin by design: it parses arguments, loads a system, calls :func:`anholo.io.report.analyze`
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
    return parser


_FIELDS = ("euler-lagrange", "nonholonomic", "vakonomic", "chetaev")
_SECTION_NAMES = ("frame", "euler_lagrange", "nonholonomic", "vakonomic", "consistency", "chaplygin", "chetaev")
_DEFAULT_BUDGET = 120.0
_VALUE_OPTIONS = ("--q0", "--qdot0", "--lambda0")


def _add_simulate_parser(sub) -> None:
    sim = sub.add_parser(
        "simulate",
        help="integrate a field of a system and write CSV and/or a figure",
        description="Integrate the Euler–Lagrange, nonholonomic, vakonomic or Chetaev field of a system from "
        "initial coordinates and natural velocities (comma-separated, in coordinate order; write "
        "--q0=-1,2 for values starting with a minus sign). Progress goes to stderr, a summary to stdout.",
    )
    sim.add_argument("target", metavar="FILE_OR_EXAMPLE", help="path of a system file, or an example name")
    sim.add_argument("--field", choices=_FIELDS, default=None,
                     help="the dynamics (default: nonholonomic for a system with constraints, else euler-lagrange)")
    sim.add_argument("--q0", required=True, metavar="A,B,...", help="initial coordinates")
    sim.add_argument("--qdot0", required=True, metavar="A,B,...",
                     help="initial natural velocities (must satisfy the constraints)")
    sim.add_argument("--lambda0", default=None, metavar="A,B,...",
                     help="vakonomic only: initial multipliers of the constraints as written (default 0)")
    sim.add_argument("--t-end", required=True, type=float, metavar="T", help="integrate over [0, T]")
    sim.add_argument("--method", default="DOP853",
                     help="solve_ivp method: DOP853 (default), RK45, RK23, Radau, BDF, LSODA")
    sim.add_argument("--rtol", type=float, default=1e-10, help="relative tolerance (default 1e-10)")
    sim.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (default 1e-12)")
    sim.add_argument("--points", type=int, default=1001, help="number of output times (default 1001)")
    sim.add_argument("--dependent", default=None, metavar="NAMES",
                     help="solve the constraints for these velocities (comma-separated coordinate names) when "
                     "building the adapted frame")
    sim.add_argument("--plot", default=None, metavar="OUT.png", help="save a figure (.png, .pdf or .svg)")
    sim.add_argument("--csv", default=None, metavar="OUT.csv",
                     help="write t, coordinates, <coordinate>_dot (and lambda1... for vakonomic runs)")
    sim.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=VALUE", help="parameter value (repeatable); overrides the file's [values]")
    sim.add_argument("--input", dest="inputs", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=EXPR", help="a control input of the file (inputs = [...]) as an expression in "
                     "the time t and the coordinates, e.g. --input tau=0.2*sin(t) (repeatable)")
    sim.add_argument("--quiet", action="store_true", help="no progress messages on stderr")


def _input_functions(assignments, compiled) -> dict:
    """``--input NAME=EXPR``: callables ``u(t, state)`` of the time ``t`` and the coordinates (the state's head)."""
    import sympy as sp

    from .io.expressions import parse_expression

    t = sp.Symbol("t", real=True)
    coords = [sp.Symbol(c, real=True) for c in compiled.coordinate_names]
    names = {"t": t, **{c.name: c for c in coords}}
    out = {}
    for name, text in assignments:
        expr = parse_expression(text, names, where=f"--input {name}")
        f = sp.lambdify([t] + coords, expr, "math")
        n = len(coords)
        out[name] = lambda tt, y, f=f, n=n: f(tt, *y[:n])
    return out


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
    from .errors import InitialStateError
    from .io.expressions import parse_expression

    items = [x.strip() for x in text.split(",")] if text.strip() else []
    if len(items) != count:
        raise InitialStateError(
            f"{what}: expected {count} comma-separated values ({', '.join(names)}), got {len(items)}: {text!r}."
        )
    out = []
    for x, name in zip(items, names):
        expr = parse_expression(x, {}, where=f"{what} ({name})")
        if not expr.is_number:
            raise InitialStateError(f"{what} ({name}): {x!r} is not a number.")
        out.append(float(expr))
    return out


def _cmd_simulate(args, out) -> int:
    import time

    from .errors import SimulationError
    from .system import System

    def say(message: str) -> None:
        if not args.quiet:
            print(f"anholo: {message}", file=sys.stderr, flush=True)

    numeric, symbolic = {}, {}
    for name, value in args.assignments:
        try:
            numeric[name] = float(value)
        except ValueError:
            symbolic[name] = value
    system = System.load(args.target, symbolic)
    from .numerics import compile_system, from_system, simulate

    field = args.field or ("nonholonomic" if system.has_constraints else "euler-lagrange")
    if args.lambda0 is not None and field != "vakonomic":
        raise SimulationError(f"--lambda0 is only used with --field vakonomic (this run: {field}).")
    if args.points < 2:
        raise SimulationError(f"--points must be at least 2, got {args.points}.")
    if args.t_end <= 0:
        raise SimulationError(f"--t-end must be positive, got {args.t_end:g}.")
    names = [q.name for q in system.chart.coordinates]
    dependent = None
    if args.dependent:
        dependent = [d.strip() for d in args.dependent.split(",") if d.strip()]
        quasi = [v.name for v in system.bundle.quasi_velocities]
        unknown = [d for d in dependent if d not in names and d not in quasi]
        if unknown:
            raise SimulationError(f"--dependent: {', '.join(unknown)} not coordinates or quasi-velocities; use some "
                                  f"of {', '.join(dict.fromkeys(names + quasi))}.")
        dependent = [quasi.index(d) if d in quasi else names.index(d) for d in dependent]
    q0 = _numbers(args.q0, "--q0", len(names), names)
    qdot0 = _numbers(args.qdot0, "--qdot0", len(names), [f"{q}_dot" for q in names])
    t0 = time.perf_counter()
    say(f"deriving the {field} field of {system.name!r} ...")
    ode = from_system(system, field, dependent=dependent)
    compiled = compile_system(ode)
    say(f"derived and compiled in {time.perf_counter() - t0:.2f} s; state ({', '.join(compiled.state_names)})")
    lambda0 = None
    if args.lambda0 is not None:
        lambda0 = _numbers(args.lambda0, "--lambda0", compiled.n_inputs, compiled.multiplier_names)
    traj = simulate(compiled, args.t_end, q0, qdot0, lambda0, parameters=numeric, method=args.method,
                    rtol=args.rtol, atol=args.atol, points=args.points, progress=not args.quiet,
                    inputs=_input_functions(args.inputs, compiled))
    say(f"integrated t in [0, {args.t_end:g}] with {traj.method}: {traj.nfev} evaluations, {traj.wall_time:.2f} s")
    if args.csv:
        try:
            traj.to_csv(args.csv)
        except OSError as exc:
            raise SimulationError(f"cannot write {args.csv}: {exc.strerror or exc}.") from exc
        say(f"wrote {args.csv}")
    if args.plot:
        from .plotting import save_figure, summary_figure

        save_figure(summary_figure(traj, title=f"{system.name}: {field}"), args.plot)
        say(f"wrote {args.plot}")
    drift = traj.energy_drift()
    res = traj.constraint_residuals()
    print(f"{system.name}: {field} field, t in [0, {args.t_end:g}], {len(traj.t)} points", file=out)
    width = max(len(n) for n in names + list(compiled.multiplier_names)) + 4
    print(f"  final state (t = {traj.t[-1]:g}):", file=out)
    for name, q, u in zip(names, traj.q[:, -1], traj.qdot[:, -1]):
        print(f"    {name.ljust(width)} {q:<22.12g} {(name + '_dot').ljust(width)} {u:.12g}", file=out)
    for name, lam in zip(compiled.multiplier_names, traj.multipliers[:, -1]):
        print(f"    {name.ljust(width)} {lam:.12g}", file=out)
    print(f"  max relative energy drift: {drift.max():.3g}", file=out)
    if res.size:
        print(f"  max |constraint residual|: {abs(res).max():.3g}", file=out)
    hol = traj.holonomic_residuals()
    if hol.size:
        print(f"  max |holonomic residual|: {abs(hol).max():.3g}", file=out)
    return 0


def _cmd_examples(args, out) -> int:
    from .examples import list_examples

    items = list_examples()
    width = max(len(name) for name, _ in items)
    for name, title in items:
        print(f"{name.ljust(width)}  {title}", file=out)
    return 0


def _cmd_analyze(args, out) -> int:
    """Exit status 0: the report is complete; 3: printed, but a block failed or ran out of time."""
    from .errors import ReportError
    from .io.report import analyze
    from .system import System

    sections = None
    if args.sections is not None:
        sections = [s for s in args.sections.split(",") if s.strip()]
        if not sections:
            raise ReportError("--sections needs at least one name: " + ", ".join(_SECTION_NAMES))
    budget = _DEFAULT_BUDGET if args.budget is None else args.budget
    if not budget > 0 or budget == float("inf"):
        raise ReportError(f"--budget must be a positive number of seconds, got {args.budget}.")
    assignments = dict(args.assignments)
    system = System.load(args.target, assignments)
    progress = None if args.quiet or not sys.stderr.isatty() else (
        lambda msg: print(f"anholo: {msg} ...", file=sys.stderr, flush=True))
    report = analyze(system, simplify=args.simplify, sections=sections, full=args.full, budget=budget,
                     progress=progress)
    if args.json:
        print(report.to_json(), file=out)
    elif args.latex:
        print(report.to_latex(), file=out, end="")
    else:
        print(report.to_text(), file=out, end="")
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


def _cmd_compare(args, out) -> int:
    import json

    from .analysis.comparison import compare_methods
    from .errors import ConstraintError
    from .system import System

    system = System.load(args.target, dict(args.assignments))
    if not system.constraints:
        raise ConstraintError(f"{args.target} has no constraints; add a 'constraints' field to compare methods.")
    result = compare_methods(system.lagrangian, system.kinematic_constraints())
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False), file=out)
    else:
        print(system.name, file=out)
        print("=" * len(system.name), file=out)
        print(result.to_text(), file=out, end="")
    return 0


def main(argv=None, out=None) -> int:
    """Entry point of the ``anholo`` console script; returns the exit status."""
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "examples":
            return _cmd_examples(args, out)
        if args.command == "compare":
            return _cmd_compare(args, out)
        if args.command == "simulate":
            return _cmd_simulate(args, out)
        return _cmd_analyze(args, out)
    except AnholoError as exc:
        print(f"anholo: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("anholo: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

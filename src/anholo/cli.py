"""The ``anholo`` command line: ``anholo analyze``, ``anholo examples``, ``anholo simulate``.

Thin by design: it parses arguments, loads a system, calls :func:`anholo.io.report.analyze`
and prints.  Every user error is printed as ``anholo: error: …`` (exit status 2),
never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

from . import __version__
from .errors import AnholoError, AnholoWarning

__all__ = ["main"]


def _parse_assignment(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    name, value = name.strip(), value.strip()
    if not name or not value:
        raise argparse.ArgumentTypeError(f"--set expects NAME=VALUE, got {text!r}")
    return name, value


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
                        "root_digits, expanded_terms, coordinates, trailers, points (see anholo.io.limits; also "
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
    return parser


_FIELDS = ("euler-lagrange", "nonholonomic", "vakonomic", "chetaev")
_SECTION_NAMES = ("frame", "euler_lagrange", "nonholonomic", "vakonomic", "consistency", "chaplygin", "chetaev")
_DEFAULT_BUDGET = 120.0
_VALUE_OPTIONS = ("--q0", "--qdot0", "--lambda0")
_SIMULATE_BUDGET = 600.0
_SWEEP_BUDGET = 3600.0
_MAX_BUDGET = 3.2e7  # a year: longer timers overflow the system's interval timer


def _budget(args, default: float) -> float:
    from .errors import ReportError

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
    from .io.report import _deadline, _OverBudget

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
                     help="solve_ivp method: DOP853 (default), RK45, RK23, Radau, BDF, LSODA; or the fixed-step "
                     "structure-preserving variational (discrete Lagrange-d'Alembert) or hamel, with --step")
    sim.add_argument("--step", type=float, default=None, metavar="H",
                     help="the fixed step of --method variational or hamel (docs/integrators.rst)")
    sim.add_argument("--rtol", type=float, default=1e-10, help="relative tolerance (default 1e-10)")
    sim.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (default 1e-12)")
    sim.add_argument("--points", type=int, default=1001, help="number of output times (default 1001)")
    sim.add_argument("--dependent", default=None, metavar="NAMES",
                     help="solve the constraints for these velocities (comma-separated coordinate names) when "
                     "building the adapted frame")
    sim.add_argument("--plot", default=None, metavar="OUT.png", help="save a figure (.png, .pdf or .svg)")
    sim.add_argument("--overlay", choices=_FIELDS, default=None, metavar="FIELD",
                     help="with --plot: also integrate this field from the same state (e.g. vakonomic, zero "
                     "initial multipliers) and draw both motions and their gap")
    sim.add_argument("--csv", default=None, metavar="OUT.csv",
                     help="write t, coordinates, <coordinate>_dot (and lambda1... for vakonomic runs)")
    sim.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=VALUE", help="parameter value (repeatable); overrides the file's [values]")
    sim.add_argument("--input", dest="inputs", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=EXPR", help="a control input of the file (inputs = [...]) as an expression in "
                     "the time t and the coordinates, e.g. --input tau=0.2*sin(t) (repeatable)")
    sim.add_argument("--stop-when", dest="stop_when", default=None, metavar="EXPR",
                     help="stop when this condition on t, the coordinates and <coordinate>_dot becomes true, "
                     "e.g. --stop-when \"abs(theta) > 1.5\" (a comparison; or an expression: stop where it "
                     "changes sign)")
    sim.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    sim.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                     help="time the derivation and integration may take (default %g s)" % _SIMULATE_BUDGET)


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
    from .io.validation import number_from_text

    items = [x.strip() for x in text.split(",")] if text.strip() else []
    if len(items) != count:
        raise InitialStateError(
            f"{what}: expected {count} comma-separated values ({', '.join(names)}), got {len(items)}: {text!r}."
        )
    return [float(number_from_text(x, f"{what} ({name})", InitialStateError)) for x, name in zip(items, names)]


def _assignments(args) -> dict:
    """``--set`` pairs as a dict: a parameter set twice is an error."""
    from .io.validation import assignments

    return assignments(args.assignments)


def _numeric_parameters(system, numeric: dict) -> dict:
    """Numerical ``--set`` values of ``simulate``, checked by the rule of every parameter value (finite, real,
    the declared sign) and given as floats."""
    from .errors import SimulationError
    from .io.validation import check_parameter_value, number_from_text

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


def _cmd_simulate(args, out) -> int:
    """Exit status 0: the run reached --t-end (or --stop-when); 3: it stopped early (a singular motion, a
    failure of the solver, a step size that collapsed, the time budget), 130: Ctrl-C.  A run that stops
    early writes what it computed (--csv up to the last accepted step, written atomically) and says on
    stderr where and why it stopped."""
    budget = _budget(args, _SIMULATE_BUDGET)
    from . import numerics  # noqa: F401 - imported before the clock starts (an interrupted import is not retried)

    args.deadline = _started() + budget  # the budget counts from the command's start
    return _within_budget(budget, "simulate", lambda: _simulate(args, out))


def _run_setup(args) -> tuple:
    """The options every integrating command shares, checked by the one validation rule (``--t-end``,
    ``--rtol``, ``--atol``, ``--points``), and the system loaded with its ``--set`` values: symbolic ones
    substituted, numerical ones returned as floats (:func:`_numeric_parameters`); ``--rtol < 100 ε`` refused."""
    import numpy as np

    from .errors import SimulationError
    from .io.limits import check as check_limit
    from .io.validation import check_option
    from .system import System

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


def _simulate_outputs(args) -> None:
    """Refuse, before any work, outputs that cannot be written as asked (:func:`~anholo.io.files.check_output_path`:
    the system file, a directory, a missing directory; --plot not .png/.pdf/.svg) and --overlay without --plot."""
    from .errors import SimulationError
    from .io.files import check_output_path

    inputs = [args.target] if os.path.isfile(args.target) else []
    if args.overlay and not args.plot:
        raise SimulationError("--overlay draws a second motion into the figure; give --plot OUT.png too.")
    if args.csv:
        check_output_path(args.csv, "--csv", inputs=inputs, error=SimulationError)
    if args.plot:
        check_output_path(args.plot, "--plot", inputs=inputs, suffixes=(".png", ".pdf", ".svg"),
                          error=SimulationError)
        if args.csv and os.path.abspath(args.csv) == os.path.abspath(args.plot):
            raise SimulationError(f"--csv and --plot are the same file {args.plot}; give two file names.")


def _stop_budget_timer() -> None:
    """Cancel the time budget's own timer once the integration is over (the budget covers the derivation and
    the integration; writing the results must not be cut short)."""
    import signal
    import threading

    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread() and getattr(
            signal.getsignal(signal.SIGALRM), "__qualname__", "").startswith("_deadline."):
        signal.setitimer(signal.ITIMER_REAL, 0)


def _simulate(args, out) -> int:
    import types

    from .errors import IntegrationError, SimulationError

    def say(message: str) -> None:
        if not args.quiet:
            print(f"anholo: {message}", file=sys.stderr, flush=True)

    _simulate_outputs(args)
    from .algebra.codegen import BUILD_NOTICES

    BUILD_NOTICES[:] = [say]

    system, numeric = _run_setup(args)
    from .numerics import compile_system, from_system, simulate
    from .numerics.events import stop_event

    field = args.field or ("nonholonomic" if system.has_constraints else "euler-lagrange")
    if args.lambda0 is not None and field != "vakonomic":
        raise SimulationError(f"--lambda0 is only used with --field vakonomic (this run: {field}).")
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
    structured = args.method in ("variational", "hamel")  # integrate the system itself at the fixed step
    if structured and field != ("nonholonomic" if system.has_constraints else "euler-lagrange"):
        raise SimulationError(f"--method {args.method} integrates the nonholonomic field; leave out --field {field}.")
    atlas = None
    if structured:  # the fixed-step schemes compile their own functions: no ODE field is derived
        compiled = types.SimpleNamespace(coordinate_names=tuple(names), multiplier_names=(), n_inputs=0)
    else:
        t0 = time.perf_counter()
        say(f"deriving the {field} field of {system.name!r} ...")
        ode = from_system(system, field, dependent=dependent)
        compiled = compile_system(ode)
        if (field == "nonholonomic" or (field == "euler-lagrange" and not system.has_constraints)) and not args.inputs:
            from .numerics.charts import ChartAtlas

            atlas = ChartAtlas(system)  # other charts, built only if the frame degenerates along the motion
            from .dynamics.maggi import MaggiSystem

            if isinstance(ode, MaggiSystem):  # a large system: Maggi's equations are the field's own chart
                atlas.adopt(ode, compiled)
        say(f"derived and compiled in {time.perf_counter() - t0:.2f} s; state ({', '.join(compiled.state_names)})")
    lambda0 = None
    if args.lambda0 is not None:
        lambda0 = _numbers(args.lambda0, "--lambda0", compiled.n_inputs, compiled.multiplier_names)
    failure = None  # why a run that stopped early stopped (IntegrationError, or the budget's interrupt)
    try:
        traj = simulate(system if structured else compiled, args.t_end, q0, qdot0, lambda0, parameters=numeric,
                        method=args.method, rtol=args.rtol, atol=args.atol, points=args.points,
                        progress=not args.quiet, inputs=_input_functions(args.inputs, compiled),
                        atlas=None if structured else atlas,
                        events=[stop_event(args.stop_when, compiled.coordinate_names)] if args.stop_when else None,
                        step=args.step, deadline=None if structured else getattr(args, "deadline", None))
    except BaseException as exc:  # a stop (IntegrationError) or the budget's SIGALRM: keep the motion computed
        traj, failure = getattr(exc, "partial", None), exc
        if traj is None or not isinstance(exc, IntegrationError) and isinstance(exc, (Exception, KeyboardInterrupt)):
            raise
    _stop_budget_timer()
    for note in traj.notes:
        say(note)
    t_reached = float(traj.t[-1]) if len(traj.t) else 0.0
    if traj.interrupted:
        say(f"{traj.message}; keeping the motion computed so far ({len(traj.t)} points)")
    elif failure is not None:
        say(f"stopped at t = {t_reached:.10g}; keeping the motion computed so far ({len(traj.t)} points)")
    elif args.stop_when and traj.message.startswith("stopped"):
        say(f"stopped at t = {traj.message.rsplit('= ', 1)[1]}: {args.stop_when}")
    say(f"integrated t in [0, {t_reached:g}] with {traj.method}: {traj.nfev} evaluations, {traj.wall_time:.2f} s")
    if args.csv:
        traj.to_csv(args.csv)
        say(f"wrote {args.csv}" + (f" (up to t = {t_reached:.10g}, where the run stopped)"
                                   if failure is not None or traj.interrupted else ""))
    if args.plot:
        from .plotting import comparison_figure, save_figure, summary_figure

        if args.overlay and failure is None and not traj.interrupted:
            second = simulate(compile_system(from_system(system, args.overlay, dependent=dependent)), args.t_end,
                              q0, qdot0, parameters=numeric, method=args.method, rtol=args.rtol, atol=args.atol,
                              points=args.points)
            fig = comparison_figure([traj, second], [field, args.overlay], title=system.name, units=system)
        else:
            fig = summary_figure(traj, title=f"{system.name}: {field}", units=system)
        save_figure(fig, args.plot)
        say(f"wrote {args.plot}")
    drift = traj.energy_drift()
    res = traj.constraint_residuals()
    print(f"{system.name}: {field} field, t in [0, {t_reached:g}], {len(traj.t)} points", file=out)
    if traj.interrupted or failure is not None or (args.stop_when and traj.message.startswith("stopped")):
        print(f"  {traj.message}", file=out)
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
    if failure is not None:
        why = (f"not finished within the time budget of {_budget(args, _SIMULATE_BUDGET):g} s (raise it with "
               "--budget SECONDS)") if not isinstance(failure, Exception) else _one_line(failure)
        print(f"anholo: error: simulate: stopped at t = {t_reached:.10g}: {why}", file=sys.stderr)
        return 3
    return 130 if traj.interrupted else 0


def _add_sweep_parser(sub) -> None:
    sw = sub.add_parser(
        "sweep",
        help="integrate a field over a grid of parameter values / initial values and tabulate monitors",
        description="One run per point of the grid of --param ranges (parameters, q0.<coordinate> or "
        "qdot0.<coordinate>); one row per run: the swept values, energy_drift (max relative energy change), "
        "constraint_residual (max |phi|), ... Runs in processes on this machine, or on a Dask cluster with "
        "--scheduler (same rows).",
    )
    sw.add_argument("target", metavar="FILE_OR_EXAMPLE", help="path of a system file, or an example name")
    sw.add_argument("--param", dest="ranges", action="append", required=True, metavar="NAME=START:STOP:NUM",
                    help="a swept parameter or initial value (q0.x, qdot0.theta); repeatable (cartesian grid)")
    sw.add_argument("--field", choices=_FIELDS, default=None,
                    help="the dynamics (default: nonholonomic for a system with constraints, else euler-lagrange)")
    sw.add_argument("--q0", required=True, metavar="A,B,...", help="base initial coordinates")
    sw.add_argument("--qdot0", required=True, metavar="A,B,...", help="base initial natural velocities")
    sw.add_argument("--t-end", required=True, type=float, metavar="T", help="integrate each run over [0, T]")
    sw.add_argument("--csv", default=None, metavar="OUT.csv", help="write the table as CSV")
    sw.add_argument("--parquet", default=None, metavar="OUT.parquet", help="write the table as Parquet (pyarrow)")
    sw.add_argument("--plot", default=None, metavar="OUT.png", help="save a figure of the monitors (.png/.pdf/.svg)")
    sw.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="run on the Dask cluster of this scheduler (e.g. tcp://host:8786); needs dask[distributed]")
    sw.add_argument("--workers", type=int, default=None, help="local worker processes (default: number of CPUs)")
    sw.add_argument("--gap", action="store_true",
                    help="nonholonomic runs: also integrate the vakonomic field (zero initial multipliers) and "
                    "add the column nh_vak_gap = max |q_nh - q_vak|")
    sw.add_argument("--points", type=int, default=201, help="output times per run for the monitors (default 201)")
    sw.add_argument("--method", default="DOP853", help="solve_ivp method (default DOP853)")
    sw.add_argument("--rtol", type=float, default=1e-10, help="relative tolerance (default 1e-10)")
    sw.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (default 1e-12)")
    sw.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                    metavar="NAME=VALUE", help="value of a parameter that is not swept (repeatable)")
    sw.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    sw.add_argument("--resume", action="store_true",
                    help="keep the rows of an earlier, interrupted run of the same sweep (read from --csv or its "
                    ".partial file) and run only the missing ones")
    sw.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                    help=f"stop after this many seconds of wall time, keeping the finished rows (default "
                    f"{_SWEEP_BUDGET:g})")


def _cmd_sweep(args, out) -> int:
    """Exit status 0: every run succeeded; 3: some runs failed (see status) or the budget ran out; 130:
    interrupted (Ctrl-C or SIGTERM).  Finished rows are never lost: with --csv each is appended to
    OUT.csv.partial as it finishes, and the table of the finished rows is written to OUT.csv at the end,
    whatever the end."""
    budget = _budget(args, _SWEEP_BUDGET)
    from . import numerics  # noqa: F401 - imported before the clock starts

    return _within_budget(budget, "sweep", lambda: _sweep(args, out))


def _sweep(args, out) -> int:
    import signal

    import numpy as np

    from .errors import SimulationError
    from .io.files import TableWriter, check_output_path, partial_path
    from .io.validation import check_parameter_value
    from .numerics import compile_system, from_system
    from .numerics.sweep import SweepResult, csv_cells, grid, parse_range, read_rows, sweep, sweep_columns

    ranges = dict(parse_range(r) for r in args.ranges)
    if len(ranges) != len(args.ranges):
        raise SimulationError("a name is given twice with --param; give each swept name once.")
    names_, points_ = grid(ranges)  # bounded by the limit 'runs' before anything is built
    inputs = [args.target] if os.path.exists(args.target) else []
    if args.csv:
        check_output_path(args.csv, "--csv", inputs=inputs, error=SimulationError)
    if args.parquet:
        check_output_path(args.parquet, "--parquet", inputs=inputs, error=SimulationError)
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise SimulationError("--parquet needs pyarrow, which is not installed; pip install pyarrow (or write "
                                  "--csv).") from None
    if args.plot:
        check_output_path(args.plot, "--plot", inputs=inputs, suffixes=(".png", ".pdf", ".svg"),
                          error=SimulationError)
    if args.resume and not args.csv:
        raise SimulationError("--resume reads the rows of the earlier run from its --csv table; give --csv OUT.csv.")
    system, numeric = _run_setup(args)
    by_name = {p.name: p for p in system.chart.parameters}
    for k, name in enumerate(names_):  # every swept value by the rule of --set (finite, real, declared sign)
        if name in by_name:
            for value in dict.fromkeys(point[k] for point in points_):
                check_parameter_value(by_name[name], value, f"--param {name}", SimulationError)
    field = args.field or ("nonholonomic" if system.has_constraints else "euler-lagrange")
    if args.gap and field != "nonholonomic":
        raise SimulationError(f"--gap compares the nonholonomic with the vakonomic motion; this run is {field}.")
    names = [q.name for q in system.chart.coordinates]
    q0 = _numbers(args.q0, "--q0", len(names), names)
    qdot0 = _numbers(args.qdot0, "--qdot0", len(names), [f"{q}_dot" for q in names])
    compiled = compile_system(from_system(system, field))
    other = compile_system(from_system(system, "vakonomic")) if args.gap else None
    columns = sweep_columns(names_, compiled.coordinate_names, other is not None)
    done = {}
    if args.resume:
        for path in (args.csv, partial_path(args.csv)):
            if os.path.exists(path):
                done.update(read_rows(path, columns))
    order = {tuple(p): i for i, p in enumerate(points_)}
    done = {k: v for k, v in done.items() if k in order}
    writer = TableWriter(args.csv, columns, SimulationError, rows=[csv_cells(r) for r in done.values()]) \
        if args.csv else None
    kept: list = list(done.values())

    def on_row(row):
        kept.append(row)
        if writer is not None:
            writer.add(csv_cells(row))

    def terminate(signum, frame):  # SIGTERM: stop like Ctrl-C (the workers are stopped, finished rows kept)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate) if hasattr(signal, "SIGTERM") else None
    show = not args.quiet and sys.stderr.isatty()
    result = None
    try:
        result = sweep(compiled, ranges, q0, qdot0, args.t_end, parameters=numeric, compare_with=other,
                       workers=args.workers, scheduler=args.scheduler, progress=show, points=args.points,
                       method=args.method, rtol=args.rtol, atol=args.atol, on_row=on_row, done=done)
    finally:  # whatever the end (a budget, a signal): the finished rows are written
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        rows = tuple(sorted(kept, key=lambda r: order[tuple(r[:len(names_)])]))
        if writer is not None:
            writer.finish(key=lambda cells: order[tuple(float(c) for c in cells[:len(names_)])])
        if args.parquet:
            SweepResult(names_, columns, rows, compiled.kind, compiled.name, float(args.t_end)).to_parquet(
                args.parquet)
        if result is None or not result.complete:
            for path in (args.csv, args.parquet):
                if path:
                    print(f"anholo: wrote the {len(rows)} finished rows of {len(points_)} to {path}"
                          + (f" (run the same command with --resume to finish)" if args.csv else ""),
                          file=sys.stderr)
    if args.plot:
        from .plotting import plot_sweep, save_figure

        save_figure(plot_sweep(result, units=system), args.plot)
    if len(result) <= 40:
        print(result, file=out, end="")
    else:
        drift, res = result.column("energy_drift"), result.column("constraint_residual")
        print(f"{result.system}: {result.kind} field, t in [0, {result.t_end:g}], {len(result)} runs "
              f"({result.failed} failed)", file=out)
        print(f"  max energy_drift: {np.nanmax(drift) if np.isfinite(drift).any() else float('nan'):.3g}", file=out)
        print(f"  max constraint_residual: {np.nanmax(res) if np.isfinite(res).any() else float('nan'):.3g}",
              file=out)
    if not result.complete:
        print(f"anholo: {result.interrupted}: {len(result)} of {len(points_)} runs finished", file=sys.stderr)
        return 130
    for path in (args.csv, args.parquet, args.plot):
        if path and not args.quiet:
            print(f"anholo: wrote {path}", file=sys.stderr)
    return 0 if not result.failed else 3


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
    if args.standalone and not args.latex:
        raise ReportError("--standalone makes the LaTeX report a complete document; use it with --latex.")
    budget = _budget(args, _DEFAULT_BUDGET)
    started = _started()
    system = System.load(args.target, _assignments(args))
    from .io.progress import Progress

    with Progress("analyze", enabled=None if not args.quiet else False) as progress:
        report = analyze(system, simplify=args.simplify, sections=sections, full=args.full,
                         budget=max(budget - (time.monotonic() - started), 0.01), progress=progress)
    from .io.report import _deadline, _OverBudget

    # printing is inside the budget too (what the blocks left, and a tenth more): no report hangs there
    printing = max(budget - (time.monotonic() - started), 0.0) + max(0.1 * budget, 1.0)
    try:
        with _deadline(printing):
            if args.json:
                text = report.to_json() + "\n"
            elif args.latex:
                from .io.latex import latex_document

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

    from .analysis.comparison import compare_methods
    from .errors import ConstraintError
    from .system import System

    system = System.load(args.target, _assignments(args))
    if not system.constraints:
        raise ConstraintError(f"{args.target} has no constraints; add a 'constraints' field to compare methods.")
    from .io.progress import Progress

    def run():
        with Progress("compare", enabled=None if not args.quiet else False) as progress:
            result = compare_methods(system.lagrangian, system.kinematic_constraints(), progress=progress)
        text = (json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n" if args.json else
                f"{system.name}\n{'=' * len(system.name)}\n{result.to_text()}")
        print(text, file=out, end="")
        return 0

    return _within_budget(_budget(args, _DEFAULT_BUDGET), "compare", run)


def _add_linearize_parser(sub) -> None:
    lin = sub.add_parser(
        "linearize",
        help="linearise a field about an equilibrium or a steady motion: A matrix and eigenvalues",
        description="Linearise the nonholonomic field on C (states: coordinates and free quasi-velocities "
        "v1, v2, ... of the adapted frame, see 'anholo analyze FILE --sections frame,nonholonomic') or the "
        "Euler-Lagrange field about a reference state, from the implicit form M v_dot = F; with --sweep, "
        "a table of eigenvalues over a range of a state (e.g. a speed), a quantity or a parameter. Without "
        "--states the coordinates the field does not depend on (ignorable: yaw, position, wheel angles) are "
        "dropped and, for a steady motion, velocities invariant under them are chosen, so that the "
        "eigenvalues are the growth rates of the steady motion (a relative equilibrium).",
    )
    lin.add_argument("target", metavar="FILE_OR_EXAMPLE", help="path of a system file, or an example name")
    lin.add_argument("--at", default="", metavar="NAME=VALUE,...",
                     help="the reference state (states not given are 0) and the inputs' values (default 0); NAME "
                     "is a state (coordinate or free quasi-velocity), a velocity by its coordinate (yaw_dot=-3), "
                     "a quantity of the file's [quantities] or of --define (speed=5), or an input")
    lin.add_argument("--define", dest="definitions", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=EXPR", help="a quantity for --at and --sweep, affine in the velocities, e.g. "
                     "--define 'v=WRrad*rear_wheel_dot' (repeatable; the file's [quantities] are defined too)")
    lin.add_argument("--states", default=None, metavar="NAME,...",
                     help="the states to linearise in (default: the coordinates that are not ignorable and the free "
                     "velocities); refused if their field depends on a dropped coordinate")
    lin.add_argument("--dependent", default=None, metavar="NAMES",
                     help="solve the constraints for the velocities of these coordinates (comma-separated "
                     "coordinate or quasi-velocity names), e.g. --dependent x,y for free angular rates")
    lin.add_argument("--sweep", default=None, metavar="NAME=START:STOP:COUNT",
                     help="a state, quantity (e.g. a speed) or parameter to sweep over COUNT values")
    lin.add_argument("--field", choices=("nonholonomic", "euler-lagrange"), default=None,
                     help="the dynamics (default: nonholonomic for a system with constraints)")
    lin.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=VALUE", help="parameter value (repeatable); overrides the file's [values]")
    lin.add_argument("--json", action="store_true", help="print a machine-readable JSON result")
    lin.add_argument("--plot", default=None, metavar="OUT.png", help="save the eigenvalues over the sweep")
    lin.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                     help=f"stop after this many seconds of wall time (default {_SIMULATE_BUDGET:g})")


def _linearize_setup(args):
    """The system, its field's source builder, the parameter values, and the --at / --sweep requests: states
    fixed by value, and quantities (``(name, expression, value)``) to be solved for free velocities."""
    import sympy as sp

    from .errors import DimensionError, InitialStateError
    from .examples import resolve_system
    from .io.expressions import parse_expression
    from .system import System

    spec = resolve_system(args.target)
    system = System.from_spec(spec)
    params = {str(k): v for k, v in (system.values or {}).items()}
    params.update(_numeric_parameters(system, _assignments(args)))
    field = args.field or ("nonholonomic" if system.constraints else "euler-lagrange")
    coords = [c.name for c in system.chart.coordinates]
    dependent = None
    if args.dependent is not None:
        if field != "nonholonomic":
            raise DimensionError("--dependent chooses the velocities solved from the constraints; it needs the "
                                 "nonholonomic field.")
        quasi = [v.name for v in system.bundle.quasi_velocities]
        dependent = [d.strip() for d in args.dependent.split(",") if d.strip()]
        unknown = [d for d in dependent if d not in coords and d not in quasi]
        if unknown:
            raise DimensionError(f"--dependent: {', '.join(unknown)} not coordinates or quasi-velocities; use some "
                                 f"of {', '.join(dict.fromkeys(coords + quasi))}.")
        if system.frame.is_coordinate_frame:
            dependent = [coords[quasi.index(d)] if d in quasi and d not in coords else d for d in dependent]

    def build(dep):
        if field != "nonholonomic":  # with forces (dissipation, inputs): the free field in Maggi's form carries them
            return system.lagrangian if system.forces is None else system.free_maggi()
        chosen = list(dep) if dep is not None else dependent
        return system.nonholonomic(dependent=chosen) if chosen is not None else system.nonholonomic()

    symbols = {s.name: s for s in system.chart.coordinates + system.chart.velocities + system.chart.parameters}
    quantities = dict(spec.quantities)
    for name, text in args.definitions:
        if not name.isidentifier() or name in symbols:
            raise InitialStateError(f"--define {name}: give a new name (not a coordinate, velocity or parameter).")
        quantities[name] = parse_expression(text, symbols, where=f"--define {name}")
    source = build(None)
    maggi = hasattr(source, "free_coordinates")
    free = [v.name for v in source.free_velocities] if field == "nonholonomic" else \
        [v.name for v in system.bundle.quasi_velocities]
    inputs = {w.name for w in system.inputs}

    def request(name: str):
        """('state', name) or ('quantity', expression) for a name of --at / --sweep, or None (a parameter)."""
        if name in coords:
            return ("state", name)
        if name in free:  # Maggi's free velocities are coordinate velocities: kept through a change of dependent
            if maggi:
                return ("quantity", sp.Symbol(f"{source.free_coordinates[free.index(name)].name}_dot", real=True))
            return ("state", name)
        if name in quantities:
            return ("quantity", quantities[name])
        if name.endswith("_dot") and name[:-4] in coords:
            return ("quantity", symbols[name])
        return None

    fixed, targets = {}, []
    for item in filter(None, (x.strip() for x in args.at.split(","))):
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq:
            raise InitialStateError(f"--at expects NAME=VALUE,..., got {item!r}.")
        number = _numbers(value, f"--at {name}", 1, [name])[0]
        if name in inputs:
            params[name] = number
            continue
        kind = request(name)
        if kind is None:
            raise InitialStateError(
                f"--at {name}: not a state, velocity, quantity or input of {system.name!r}; the states are "
                f"{', '.join(coords + free)}, velocities NAME_dot, quantities {', '.join(quantities) or '(none)'}.")
        if kind[0] == "state":
            fixed[name] = number
        else:
            targets.append((name, kind[1], number))
    for w in inputs:  # the inputs' reference values: --at NAME=VALUE, else 0 (B is the derivative there)
        params.setdefault(w, 0.0)
    return spec, system, field, build, source, params, fixed, targets, request


def _cmd_linearize(args, out) -> int:
    budget = _budget(args, _SIMULATE_BUDGET)
    if args.plot:  # before any work
        from .errors import InitialStateError
        from .io.files import check_output_path

        check_output_path(args.plot, "--plot", inputs=[args.target] if os.path.exists(args.target) else [],
                          suffixes=(".png", ".pdf", ".svg"), error=InitialStateError)
    return _within_budget(budget, "linearize", lambda: _linearize(args, out))


def _linearize(args, out) -> int:
    import json

    import numpy as np

    from .analysis.linearization import LinearizationProblem, _complex_text
    from .analysis.linear_problem import stability_criterion
    from .analysis.relative_equilibria import check_states, choose_states, reference_state
    from .errors import InitialStateError
    from .io.limits import check as check_limit

    spec, system, field, build, source, params, fixed, targets, request = _linearize_setup(args)
    hol = system.holonomic if field == "nonholonomic" else ()
    name, xs, sweep_kind = None, [], None
    if args.sweep:
        name, eq, rng = args.sweep.partition("=")
        name, parts = name.strip(), rng.split(":")
        if not eq or len(parts) != 3:
            raise InitialStateError(f"--sweep expects NAME=START:STOP:COUNT, got {args.sweep!r}.")
        start, stop = (_numbers(x, "--sweep", 1, [name])[0] for x in parts[:2])
        count = _numbers(parts[2], "--sweep COUNT", 1, ["COUNT"])[0]
        if not float(count).is_integer() or count < 1:
            raise InitialStateError(f"--sweep {name}: COUNT must be a positive integer, got {parts[2]!r}.")
        check_limit("runs", int(count), f"--sweep {name}", f"COUNT = {int(count)}")
        xs = np.linspace(start, stop, int(count))
        sweep_kind = request(name)
        if sweep_kind is None and name not in params:
            raise InitialStateError(f"--sweep {name}: not a state, velocity, quantity or parameter of {system.name!r}.")

    def reference(src, x=None):
        fix, tg, par = dict(fixed), [(e, v) for _, e, v in targets], dict(params)
        if name is not None:
            if sweep_kind is None:
                par[name] = float(x)
            elif sweep_kind[0] == "state":
                fix[name] = float(x)
            else:
                tg.append((sweep_kind[1], float(x)))
        return reference_state(src, fix, tg, par), par

    ref0, par0 = reference(source, xs[0] if name is not None else None)
    if args.states is not None:
        states = [x.strip() for x in args.states.split(",") if x.strip()]
        problem = LinearizationProblem(source, states, holonomic=hol)
        choice = check_states(source, [s.name for s in problem.states], ref0, par0, hol)
    else:
        source, choice, ref0 = choose_states(build, ref0, par0, hol, dependent_given=args.dependent is not None)
        problem = LinearizationProblem(source, choice.states, holonomic=hol)
    results = [problem.at(*reference(source, x)) for x in xs] if name is not None else \
        [problem.at(*reference(source))]
    units = _linearize_units(spec, source, [s.name for s in problem.states] + ([name] if name else []))
    if args.json:
        payload = {"field": field, "states": [s.name for s in problem.states], "sweep": name,
                   "values": [float(x) for x in xs], "results": [r.to_dict() for r in results],
                   "choice": choice.to_dict(), "units": units, "stability": stability_criterion()}
        print(json.dumps(payload, indent=2), file=out)
    elif name is None:
        at = ", ".join(x.strip().replace("=", " = ", 1) for x in args.at.split(",") if x.strip())
        print(f"{system.name}: {field} field linearised at " + (at or "the origin"), file=out)
        print(f"  {choice}", file=out)
        print(results[0], file=out)
        if not results[0].is_equilibrium:
            print("not an equilibrium of these states (rates " + ", ".join(f"{r:.3g}" for r in results[0].rates)
                  + "): the eigenvalues do not decide stability", file=out)
        else:
            print(f"linear verdict: {results[0].verdict} ({stability_criterion()})", file=out)
    else:
        label = name + (f" [{units[name]}]" if name in units else "")
        print(f"{system.name}: eigenvalues of the {field} field over {label}; {choice}; {stability_criterion()}",
              file=out)
        print(f"{label:>10}  verdict   eigenvalues", file=out)
        for x, r in zip(xs, results):
            print(f"{x:10.5g}  {r.verdict:<8}  " + ", ".join(_complex_text(e) for e in r.eigenvalues), file=out)
    if args.plot:
        from .plotting import eigenvalue_plot, save_figure
        fig = eigenvalue_plot(list(xs) if name else [0.0], results, name or "reference",
                              unit=units.get(name) if name else None, units=spec.units,
                              title=f"{system.name}: {', '.join(s.name for s in problem.states)}")
        print(f"figure written to {save_figure(fig, args.plot)}", file=out)
    return 0


def _linearize_units(spec, source, names) -> dict:
    """Units of the file's [units] for the names of a linearisation (a free velocity of Maggi's route has the
    unit of its coordinate's velocity)."""
    units = dict(getattr(spec, "units", {}) or {})
    out = {}
    free = {v.name: f.name for v, f in zip(getattr(source, "free_velocities", ()), getattr(source, "free_coordinates", ()))}
    for n in names:
        if n in units:
            out[n] = units[n]
        elif n in free and f"{free[n]}_dot" in units:
            out[n] = units[f"{free[n]}_dot"]
    return out


def main(argv=None, out=None) -> int:
    """Entry point of the ``anholo`` console script; returns the exit status."""
    from . import _STARTED

    _COMMAND_START[:] = [_STARTED if argv is None else time.monotonic()]
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(_join_negative_values(sys.argv[1:] if argv is None else argv))
    from .io import limits

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


def _one_line(exc) -> str:
    """A message on one line, at most a few thousand characters (the line is for a person), with control
    characters shown escaped (:func:`anholo.errors.printable`: an echoed name cannot drive the terminal)."""
    from .errors import printable

    text = printable(" ".join(str(exc).split()))
    return text if len(text) <= 3000 else text[:2990] + " ..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

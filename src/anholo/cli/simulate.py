"""``anholo simulate``: integrate a field from initial data; the motion computed is kept however the run ends."""

from __future__ import annotations

import argparse  # noqa: F401
import os  # noqa: F401
import sys  # noqa: F401
import time  # noqa: F401
import warnings  # noqa: F401

from .common import (  # noqa: F401
    _COMMAND_START, _DEFAULT_BUDGET, _FIELDS, _MAX_BUDGET, _SECTION_NAMES, _SIMULATE_BUDGET, _SWEEP_BUDGET,
    _VALUE_OPTIONS, _assignments, _budget, _join_negative_values, _numbers, _numeric_parameters, _one_line,
    _parse_assignment, _run_setup, _started, _within_budget,
)

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
                     "the time t, the coordinates, their velocities <q>_dot and the parameters, e.g. --input "
                     "tau=0.2*sin(t)-k*theta_dot (repeatable)")
    sim.add_argument("--stop-when", dest="stop_when", default=None, metavar="EXPR",
                     help="stop when this condition on t, the coordinates and <coordinate>_dot becomes true, "
                     "e.g. --stop-when \"abs(theta) > 1.5\" (a comparison; or an expression: stop where it "
                     "changes sign)")
    sim.add_argument("--chart", dest="charts", action="append", default=[], metavar="FILE",
                     help="another coordinate chart of the same holonomic system (a system file in its own "
                     "coordinates; repeatable, each with --to-base and --from-base): the run changes chart where "
                     "the file's coordinates degenerate (docs/simulation.rst)")
    sim.add_argument("--to-base", dest="to_base", action="append", default=[], metavar="E1;E2;...",
                     help="with --chart: the file's coordinates as expressions in the chart's, separated by ;")
    sim.add_argument("--from-base", dest="from_base", action="append", default=[], metavar="E1;E2;...",
                     help="with --chart: the chart's coordinates as expressions in the file's, separated by ;")
    sim.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    sim.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                     help="time the derivation and integration may take (default %g s)" % _SIMULATE_BUDGET)


def _inputs(assignments, compiled, structured: bool):
    """``--input NAME=EXPR`` for :func:`~anholo.numerics.integrate.simulate`: the expressions themselves (read by
    :func:`anholo.numerics.inputs.control_inputs`: the time ``t``, the coordinates, their velocities ``<q>_dot``
    and the parameters, as ``anholo sweep`` reads them; the fixed-step schemes read them at the midpoint of
    each step); None without inputs."""
    from ..errors import SimulationError

    given = {}
    for name, text in assignments:
        if name in given:
            raise SimulationError(f"--input {name} is given twice; give each input once.")
        given[name] = text
    if structured:
        return given or None
    if not given and not getattr(compiled, "control_names", ()):
        return None
    from ..numerics.inputs import control_inputs

    return control_inputs(compiled, given)  # an unknown or missing input, a bad expression: one line here


def _simulate_in_charts(args, out, system, numeric, field, q0, qdot0, say) -> int:
    """``--chart FILE --to-base ... --from-base ...``: the Euler–Lagrange field in an atlas of coordinate charts
    (:func:`~anholo.numerics.coordinate_charts.simulate_in_charts`); output as for one chart."""
    from ..errors import SimulationError
    from ..numerics.coordinate_charts import CoordinateChart, simulate_in_charts
    from ..system import System

    if not (len(args.charts) == len(args.to_base) == len(args.from_base)):
        raise SimulationError("give each --chart FILE with one --to-base and one --from-base (in the same order).")
    if field != "euler-lagrange" or system.has_constraints:
        raise SimulationError("--chart changes coordinate charts of a holonomic system without constraints "
                              "(the Euler–Lagrange field); this system has constraints or another --field.")
    extra = [a for a, v in (("--method", args.method not in ("DOP853",)), ("--stop-when", args.stop_when),
                            ("--input", args.inputs), ("--overlay", args.overlay), ("--dependent", args.dependent))
             if v]
    if extra:
        raise SimulationError(f"--chart does not combine with {', '.join(extra)}; leave them out.")
    from ..parsing import parse_expression

    charts = [CoordinateChart(system)]
    base_symbols = {c.name: c for c in (*system.chart.coordinates, *system.chart.parameters)}
    for path, to_b, from_b in zip(args.charts, args.to_base, args.from_base):
        other = System.load(path)
        symbols = {c.name: c for c in (*other.chart.coordinates, *other.chart.parameters)}
        to_e = tuple(parse_expression(e.strip(), symbols, where=f"--to-base of {path}") for e in to_b.split(";"))
        from_e = tuple(parse_expression(e.strip(), base_symbols, where=f"--from-base of {path}")
                       for e in from_b.split(";"))
        charts.append(CoordinateChart(other, to_e, from_e))
    say(f"integrating in an atlas of {len(charts)} charts ...")
    motion = simulate_in_charts(charts, args.t_end, q0, qdot0, points=args.points, parameters=numeric,
                                rtol=args.rtol, atol=args.atol)
    traj = motion.trajectory()
    for note in traj.notes:
        say(note)
    if traj.interrupted:
        say(f"{traj.message}; keeping the motion computed so far ({len(traj.t)} points)")
    say(f"integrated t in [0, {traj.t[-1]:g}] with DOP853 in {len(charts)} charts: {traj.nfev} evaluations, "
        f"{traj.wall_time:.2f} s")
    if args.csv:
        traj.to_csv(args.csv)
        say(f"wrote {args.csv}")
    if args.plot:
        from ..plotting import save_figure, summary_figure

        save_figure(summary_figure(traj, title=f"{system.name}: {field}", units=system), args.plot)
        say(f"wrote {args.plot}")
    names = [q.name for q in system.chart.coordinates]
    print(f"{system.name}: {field} field in {len(charts)} charts, t in [0, {traj.t[-1]:g}], {len(traj.t)} points; "
          f"{motion.message}", file=out)
    width = max(len(n) for n in names) + 4
    print(f"  final state (t = {traj.t[-1]:g}):", file=out)
    for name, q, u in zip(names, traj.q[:, -1], traj.qdot[:, -1]):
        print(f"    {name.ljust(width)} {q:<22.12g} {(name + '_dot').ljust(width)} {u:.12g}", file=out)
    print(f"  max relative energy drift: {traj.energy_drift().max():.3g}", file=out)
    return 130 if traj.interrupted else 0


def _cmd_simulate(args, out) -> int:
    """Exit status 0: the run reached --t-end (or --stop-when); 3: it stopped early (a singular motion, a
    failure of the solver, a step size that collapsed, the time budget), 130: Ctrl-C.  A run that stops
    early writes what it computed (--csv up to the last accepted step, written atomically) and says on
    stderr where and why it stopped."""
    budget = _budget(args, _SIMULATE_BUDGET)
    from .. import numerics  # noqa: F401 - imported before the clock starts (an interrupted import is not retried)

    args.deadline = _started() + budget  # the budget counts from the command's start
    return _within_budget(budget, "simulate", lambda: _simulate(args, out))


def _simulate_outputs(args) -> None:
    """Refuse, before any work, outputs that cannot be written as asked (:func:`~anholo.files.check_output_path`:
    the system file, a directory, a missing directory; --plot not .png/.pdf/.svg) and --overlay without --plot."""
    from ..errors import SimulationError
    from ..files import check_output_path

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

    from ..errors import IntegrationError, SimulationError

    def say(message: str) -> None:
        if not args.quiet:
            print(f"anholo: {message}", file=sys.stderr, flush=True)

    _simulate_outputs(args)
    from ..algebra.codegen import BUILD_NOTICES

    BUILD_NOTICES[:] = [say]

    system, numeric = _run_setup(args)
    from ..numerics import compile_system, from_system, simulate
    from ..numerics.events import stop_event

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
        dependent = [quasi.index(d) if d in quasi else d for d in dependent]  # a coordinate: read by the frame
    q0 = _numbers(args.q0, "--q0", len(names), names)
    qdot0 = _numbers(args.qdot0, "--qdot0", len(names), [f"{q}_dot" for q in names])
    structured = args.method in ("variational", "hamel")  # integrate the system itself at the fixed step
    if structured and field != ("nonholonomic" if system.has_constraints else "euler-lagrange"):
        raise SimulationError(f"--method {args.method} integrates the nonholonomic field; leave out --field {field}.")
    atlas = None
    if args.charts or args.to_base or args.from_base:
        return _simulate_in_charts(args, out, system, numeric, field, q0, qdot0, say)
    if structured:  # the fixed-step schemes compile their own functions: no ODE field is derived
        compiled = types.SimpleNamespace(coordinate_names=tuple(names), multiplier_names=(), n_inputs=0)
    else:
        t0 = time.perf_counter()
        say(f"deriving the {field} field of {system.name!r} ...")
        ode = from_system(system, field, dependent=dependent)
        compiled = compile_system(ode)
        if field == "nonholonomic" or (field == "euler-lagrange" and not system.has_constraints):
            from ..numerics.charts import ChartAtlas

            atlas = ChartAtlas(system)  # other charts, built only if the frame degenerates along the motion
            from ..dynamics.maggi import MaggiSystem

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
                        progress=not args.quiet, inputs=_inputs(args.inputs, compiled, structured),
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
        say(f"stopped at t = {traj.message.rsplit('= ', 1)[1].split()[0]}: {args.stop_when}")
    say(f"integrated t in [0, {t_reached:g}] with {traj.method}: {traj.nfev} evaluations, {traj.wall_time:.2f} s")
    if args.csv:
        traj.to_csv(args.csv)
        say(f"wrote {args.csv}" + (f" (up to t = {t_reached:.10g}, where the run stopped)"
                                   if failure is not None or traj.interrupted else ""))
    if args.plot:
        from ..plotting import comparison_figure, save_figure, summary_figure

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
    if structured or traj.interrupted or failure is not None or (args.stop_when and traj.message.startswith("stopped")):
        print(f"  {traj.message}", file=out)  # the fixed-step schemes' message names the scheme that ran
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

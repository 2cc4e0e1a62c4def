"""``anholo sweep``: one run per point of a grid; every finished row is kept on disk as it finishes."""

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
    sw.add_argument("--loop", choices=("auto", "compiled", "runs"), default="auto",
                    help="auto (default): integrate the runs together in the compiled loop (generated C, DOP853, "
                    "chunks of 64 runs per task) where a C compiler works, else one run at a time; compiled: insist "
                    "on the loop; runs: one scipy integration per run")
    sw.add_argument("--rtol", type=float, default=1e-10, help="relative tolerance (default 1e-10)")
    sw.add_argument("--atol", type=float, default=1e-12, help="absolute tolerance (default 1e-12)")
    sw.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                    metavar="NAME=VALUE", help="value of a parameter that is not swept (repeatable)")
    sw.add_argument("--input", dest="inputs", action="append", default=[], type=_parse_assignment,
                    metavar="NAME=EXPR", help="a control input of the file (inputs = [...]) as an expression in the "
                    "time t, the coordinates, their velocities <q>_dot and the parameters (each run's values), e.g. "
                    "--input tau=0.2*sin(t) (repeatable); compiled into the loop with the field")
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
    from .. import numerics  # noqa: F401 - imported before the clock starts

    return _within_budget(budget, "sweep", lambda: _sweep(args, out))


def _sweep(args, out) -> int:
    import signal

    import numpy as np

    from ..errors import SimulationError
    from ..files import TableWriter, check_output_path, partial_path
    from ..io.validation import check_parameter_value
    from ..numerics import compile_system, from_system
    from ..numerics.sweep import SweepResult, csv_cells, grid, parse_range, read_rows, sweep, sweep_columns

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
    given = {}
    for name, text in args.inputs:
        if name in given:
            raise SimulationError(f"--input {name} is given twice; give each input once.")
        given[name] = text
    from ..numerics.inputs import control_inputs

    inputs = control_inputs(compiled, given)  # an unknown or missing input, a bad expression: refused here
    columns = sweep_columns(names_, compiled.coordinate_names, other is not None)
    done = {}
    if args.csv:
        _settings(args, field, q0, qdot0, given, numeric)
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

    main_process = os.getpid()

    def terminate(signum, frame):  # SIGTERM: stop like Ctrl-C (the workers are stopped, finished rows kept)
        if os.getpid() != main_process:  # a worker forked before it reset the handler: end quietly
            os._exit(128 + signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate) if hasattr(signal, "SIGTERM") else None
    show = not args.quiet and sys.stderr.isatty()
    result = None
    try:
        result = sweep(compiled, ranges, q0, qdot0, args.t_end, parameters=numeric, compare_with=other,
                       workers=args.workers, scheduler=args.scheduler, progress=show, points=args.points,
                       method=args.method, rtol=args.rtol, atol=args.atol, on_row=on_row, done=done,
                       loop=args.loop, inputs=inputs)
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
        from ..plotting import plot_sweep, save_figure

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


def _settings(args, field, q0, qdot0, inputs, numeric) -> None:
    """Write ``OUT.csv.run.json``: what a row of ``OUT.csv`` depends on besides its swept values (the system,
    field, initial state, end time, inputs, fixed parameter values, method and tolerances).  With ``--resume``
    an existing record must be the same, else the earlier rows belong to another run and are refused (one
    line naming what differs) rather than mixed into this table."""
    import json

    from ..errors import SimulationError

    path = args.csv + ".run.json"
    record = {"system": os.path.abspath(args.target) if os.path.exists(args.target) else args.target,
              "field": field, "q0": [float(x) for x in q0], "qdot0": [float(x) for x in qdot0],
              "t_end": float(args.t_end), "inputs": {k: str(v) for k, v in sorted(inputs.items())},
              "set": {str(k): str(v) for k, v in sorted(_assignments(args).items())}, "method": args.method,
              "rtol": float(args.rtol), "atol": float(args.atol), "points": int(args.points),
              "gap": bool(args.gap)}
    if args.resume and os.path.exists(path):
        try:
            with open(path) as fh:
                earlier = json.load(fh)
        except (OSError, ValueError):
            earlier = None
        if isinstance(earlier, dict):
            differ = [k for k in record if earlier.get(k) != record[k]]
            if differ:
                raise SimulationError(f"{args.csv} holds the rows of a run with other settings ({', '.join(differ)} "
                                      f"differ; recorded in {path}); resume with the same command, or write another "
                                      "--csv.")
    with open(path, "w") as fh:
        json.dump(record, fh, indent=1)

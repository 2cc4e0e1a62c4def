"""Parameter sweeps: one integration per point of a grid of parameter values and/or initial values,
reduced to a row of monitors, on this machine (processes) or on a Dask cluster.

A sweep is a cartesian grid ``name = linspace(start, stop, num)`` over

* parameters of the system (``m``, ``g``, ...), and/or
* initial values, written ``q0.<coordinate>`` and ``qdot0.<coordinate>`` (they
  replace that entry of the base initial state ``q0``, ``qdot0``).

Each run integrates the field with :func:`~anholo.numerics.integrate.simulate` and
keeps one row (:class:`SweepResult`): the swept values, then

* ``energy_drift`` — ``max_t |E(t) − E(0)| / |E(0)|`` (absolute if ``E(0) = 0``), the
  relative change of the energy ``E_L = (∂L/∂q̇) q̇ − L`` over the run; for a
  conservative system with stationary linear constraints the exact value is 0
  (Bloch (2003)), so it measures the integrator's error;
* ``constraint_residual`` — ``max_{t,a} |φ_a(q, q̇)|`` for the constraints as written;
* with ``compare_with`` (the vakonomic field of the same system), ``nh_vak_gap`` —
  ``max_t max_A |q^A_nh(t) − q^A_vak(t)|`` between the nonholonomic motion and the
  vakonomic motion from the same state with zero initial multipliers
  (Cronström & Raita (2009); Crampin & Mestdag (2010), Thm. 2);
* the final coordinates ``<q>_end``, ``nfev`` and ``status`` (``"ok"`` or the one-line
  reason a run failed; its monitors are then NaN).

Runs are executed by :func:`anholo.numerics.batch.map_runs`: every row is the same
deterministic computation of the same generated code wherever it runs, so a sweep on a
Dask cluster gives the rows of the local sweep bit for bit.

Examples
--------
>>> from anholo.system import System
>>> from anholo.numerics.sweep import sweep
>>> res = sweep(System.load("spherical_pendulum"), {"g": (1.0, 9.81, 3)}, [0.8, 0.0], [0.0, 1.0], 1.0,
...             workers=1, field="euler-lagrange")
>>> res.names, len(res)
(('g',), 3)
>>> bool(res.column("energy_drift").max() < 1e-8)
True
"""

from __future__ import annotations

import csv
import html
import os
import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..errors import AnholoError, IntegrationError, SimulationError
from ..files import atomic_output
from ..limits import check as check_limit
from .batch import CHUNK, loop_eligible, loop_refusal, map_runs, run_loop_chunk
from .inputs import prepare_options, run_options
from .monitors import constraint_residuals, energy_drift
from .compile import CompiledSystem
from .integrate import as_compiled, simulate

__all__ = ["sweep", "grid", "parse_range", "SweepResult", "MONITORS", "read_rows", "csv_cells", "sweep_columns"]

#: The monitor columns every sweep has, after the swept names.
MONITORS = ("energy_drift", "constraint_residual")


def parse_range(text: str) -> tuple:
    """``"NAME=START:STOP:NUM"`` → ``(NAME, (START, STOP, NUM))``; ``NAME=VALUE`` is a single value.

    >>> parse_range("m=0.5:2:4")
    ('m', (0.5, 2.0, 4))
    """
    if "=" not in text:
        raise SimulationError(f"--param expects NAME=START:STOP:NUM, got {text!r}.")
    name, spec = (s.strip() for s in text.split("=", 1))
    parts = [s.strip() for s in spec.split(":")]
    if not name or len(parts) not in (1, 3) or not all(parts):
        raise SimulationError(f"--param expects NAME=START:STOP:NUM (or NAME=VALUE), got {text!r}.")
    try:
        if len(parts) == 1:
            return name, (float(parts[0]), float(parts[0]), 1)
        start, stop, num = float(parts[0]), float(parts[1]), parts[2]
        if not num.isdigit():
            raise ValueError
    except ValueError:
        raise SimulationError(f"--param {text!r}: START and STOP must be numbers and NUM a positive integer.") from None
    if int(num) < 1:
        raise SimulationError(f"--param {text!r}: NUM must be at least 1.")
    check_limit("runs", int(num), f"--param {name}", f"NUM = {num}")
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise SimulationError(f"--param {text!r}: START and STOP must be finite.")
    return name, (start, stop, int(num))


def grid(ranges: Mapping) -> tuple:
    """``(names, points)``: the cartesian grid of ``{name: (start, stop, num) or [values...]}``,
    the last name varying fastest."""
    names, axes = [], []
    total = 1
    for name, spec in ranges.items():
        if isinstance(spec, tuple) and len(spec) == 3 and isinstance(spec[2], (int, np.integer)) \
                and not isinstance(spec[2], bool):
            check_limit("runs", int(spec[2]), f"the sweep over {name}", f"{int(spec[2])} values")
            values = np.linspace(float(spec[0]), float(spec[1]), int(spec[2]))
        else:
            values = np.asarray(spec, dtype=float).ravel()
        if values.size == 0:
            raise SimulationError(f"the sweep over {name!r} has no values.")
        total *= values.size
        check_limit("runs", total, "the sweep", f"a grid of {total} runs")  # before the grid is built
        names.append(str(name))
        axes.append([float(v) for v in values])
    if not names:
        raise SimulationError("a sweep needs at least one swept name (e.g. --param m=0.5:2:4).")
    if len(set(names)) != len(names):
        raise SimulationError(f"a name is swept twice: {', '.join(names)}.")
    return tuple(names), [tuple(p) for p in itertools.product(*axes)]


@dataclass(frozen=True)
class SweepResult:
    """The table of a sweep: one row per run, columns ``names + MONITORS + extras``.

    Attributes
    ----------
    names : tuple of str
        The swept names (parameters, ``q0.<q>``, ``qdot0.<q>``), the first columns.
    columns : tuple of str
        All column names, in order.
    rows : tuple of tuples
        One per run, in grid order (the last swept name varies fastest).
    kind : str
        The field integrated.
    system : str
        The system's name.
    t_end : float
    planned : int
        Runs of the grid (0: as many as rows).  Fewer rows than planned: the sweep was interrupted
        (``interrupted`` says how); the rows are those that finished, in grid order.
    interrupted : str
        Empty for a complete sweep, else why it stopped (e.g. ``"interrupted (Ctrl-C)"``).
    """

    names: tuple
    columns: tuple
    rows: tuple
    kind: str = ""
    system: str = ""
    t_end: float = 0.0
    planned: int = 0
    interrupted: str = ""

    @property
    def complete(self) -> bool:
        """True if every run of the grid has a row."""
        return not self.interrupted and (not self.planned or len(self.rows) == self.planned)

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> np.ndarray:
        """One column as an array (``status`` as an object array)."""
        if name not in self.columns:
            raise SimulationError(f"{name!r} is not a column of this sweep; its columns are {', '.join(self.columns)}.")
        k = self.columns.index(name)
        values = [r[k] for r in self.rows]
        return np.array(values, dtype=object if name == "status" else float)

    @property
    def failed(self) -> int:
        """Number of runs that failed (``status != "ok"``)."""
        return sum(1 for r in self.rows if r[self.columns.index("status")] != "ok")

    def to_dict(self) -> dict:
        """``{column: [values...]}`` (JSON-ready; NaN stays a float NaN)."""
        return {c: [r[k] for r in self.rows] for k, c in enumerate(self.columns)}

    def to_csv(self, path) -> None:
        """Write the table as CSV; floats with ``repr`` (they read back bit for bit).  The file appears
        complete or not at all (:func:`~anholo.files.atomic_output`)."""
        with atomic_output(path, newline="", error=SimulationError) as fh:
            writer = csv.writer(fh)
            writer.writerow(self.columns)
            for row in self.rows:
                writer.writerow(csv_cells(row))

    def to_parquet(self, path) -> None:
        """Write the table as Parquet (needs pyarrow: ``pip install pyarrow``)."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise SimulationError("Parquet output needs pyarrow, which is not installed; pip install pyarrow "
                                  "(or write CSV).") from None
        table = pa.table({c: self.column(c).tolist() if c == "status" else self.column(c)
                          for c in self.columns})
        table = table.replace_schema_metadata({"anholo.system": self.system, "anholo.field": self.kind,
                                               "anholo.t_end": repr(self.t_end)})
        with atomic_output(path, "wb", error=SimulationError) as fh:
            pq.write_table(table, fh)

    # --- rendering ---------------------------------------------------------------------------
    def _cells(self) -> list:
        def cell(x):
            if isinstance(x, float):
                return "nan" if math.isnan(x) else f"{x:.6g}"
            return str(x)
        return [[cell(x) for x in row] for row in self.rows]

    def __str__(self) -> str:
        head = f"{self.system}: {self.kind} field, t in [0, {self.t_end:g}], {len(self)} runs"
        if self.failed:
            head += f" ({self.failed} failed)"
        if not self.complete:
            head += f"; {self.interrupted or 'stopped'}: {len(self)} of {self.planned} runs finished"
        cells = [r[:-1] + [r[-1] if len(r[-1]) <= 60 else r[-1][:57] + "..."] for r in self._cells()]
        widths = [max([len(c)] + [len(r[k]) for r in cells]) for k, c in enumerate(self.columns)]
        lines = [head, "  ".join(c.ljust(w) for c, w in zip(self.columns, widths)),
                 "  ".join("-" * w for w in widths)]
        lines += ["  ".join(x.ljust(w) for x, w in zip(r, widths)) for r in cells]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(x)}</td>" for x in r) + "</tr>" for r in self._cells())
        return (f"<p>{esc(self.system)}: {esc(self.kind)} field, t &isin; [0, {self.t_end:g}], {len(self)} runs</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def as_latex(self) -> str:
        """A ``tabular`` of the table (column names in ``\\texttt``)."""
        def tt(s):
            return r"\texttt{" + s.replace("_", r"\_") + "}"
        cols = "l" * len(self.columns)
        lines = [rf"\begin{{tabular}}{{{cols}}}", " & ".join(tt(c) for c in self.columns) + r" \\ \hline"]
        lines += [" & ".join(tt(x) if k == len(self.columns) - 1 else f"${x}$" for k, x in enumerate(r)) + r" \\"
                  for r in self._cells()]
        lines.append(r"\end{tabular}")
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        return self.as_latex()


def sweep_columns(names: Sequence, coordinates: Sequence, gap: bool = False) -> tuple:
    """The columns of a sweep's table: the swept names, the monitors, ``nh_vak_gap`` (with a comparison),
    ``<q>_end``, ``nfev``, ``status``."""
    return (tuple(names) + MONITORS + (("nh_vak_gap",) if gap else ()) + tuple(f"{c}_end" for c in coordinates)
            + ("nfev", "status"))


def csv_cells(row) -> list:
    """A row as CSV cells: floats by ``repr`` (read back bit for bit), the rest as text."""
    return [repr(float(x)) if isinstance(x, float) else x for x in row]


def read_rows(path, columns: Sequence) -> dict:
    """The rows of a sweep table written earlier (CSV, :meth:`SweepResult.to_csv` or a ``.partial``
    table), by their swept values: ``{values: row}``, to resume a sweep.  Refused if its columns are not
    ``columns`` (another sweep)."""
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return {}
        if tuple(header) != tuple(columns):
            raise SimulationError(f"{path} is the table of another sweep (its columns are {', '.join(header)}); "
                                  "resume needs the same swept names, field and monitors.")
        out = {}
        for cells in reader:
            if len(cells) != len(columns):
                continue  # a row cut by a crash: run again
            row = [c if name == "status" else (int(c) if name == "nfev" else float(c))
                   for name, c in zip(columns, cells)]
            out[tuple(row[:columns.index("energy_drift")])] = tuple(row)
        return out


class _Motion:
    """What the monitors read of a trajectory (:mod:`anholo.numerics.monitors`): a run of the compiled loop."""

    def __init__(self, system, t, q, qdot, p, nfev):
        self.system, self.t, self.q, self.qdot, self._p, self.nfev = system, t, q, qdot, tuple(p), nfev

    def energy_drift(self):
        return energy_drift(self)

    def constraint_residuals(self):
        return constraint_residuals(self)


def _reduce(traj, vak=None) -> tuple:
    """A trajectory's row after the swept values: ``(energy_drift, constraint_residual[, gap], q_end..., nfev,
    "ok")``."""
    drift = float(np.max(traj.energy_drift()))
    res = traj.constraint_residuals()
    residual = float(np.max(np.abs(res))) if res.size else 0.0
    monitors = [drift, residual]
    if vak is not None:
        monitors.append(float(np.max(np.abs(traj.q - vak.q))))
    return tuple(monitors) + tuple(float(x) for x in traj.q[:, -1]) + (int(traj.nfev), "ok")


def _failed(exc, n: int, gap: bool) -> tuple:
    why = " ".join(str(exc).split())
    if not isinstance(exc, AnholoError):
        why = f"the field cannot be evaluated at these values ({type(exc).__name__}: {why})"
    return (float("nan"),) * ((3 if gap else 2) + n) + (0, why)


def _row(shared, t_span, state, params, options) -> tuple:
    """Integrate one run and reduce it to ``(energy_drift, constraint_residual[, gap], q_end..., nfev, status)``."""
    compiled, other = shared
    try:
        traj = simulate(compiled, t_span, *state, parameters=params, **run_options(compiled, options, params))
        vak = simulate(other, t_span, *state[:2], parameters=params, **run_options(other, options, params)) \
            if other is not None else None
        return _reduce(traj, vak)
    except (AnholoError, ArithmeticError, ValueError) as exc:  # one bad point must not end the sweep
        return _failed(exc, compiled.n, other is not None)


def _loop_rows(shared, t_span, chunk, _params, options) -> list:
    """The rows of a chunk of runs integrated together by the compiled loop (:mod:`anholo.numerics.batch`)."""
    compiled, loop = shared
    rows = []
    for i, T, Y, p, status, nfev, why in run_loop_chunk(shared, t_span, chunk, None, options):
        try:
            if status < 0:
                raise why
            if status > 0:
                raise IntegrationError(why)
            with np.errstate(all="ignore"):  # the monitors need q, q̇ only (no multipliers, no Trajectory)
                q = Y[:compiled.n]
                light = _Motion(compiled, T, q, compiled.natural_velocities(Y, p, T), p, nfev)
                rows.append((i, _reduce(light)))
        except (AnholoError, ArithmeticError, ValueError) as exc:
            rows.append((i, _failed(exc, compiled.n, False)))
    return rows


def compiled_loop_wanted(route: str) -> bool:
    return route != "runs"


def _compiled(system, field):
    if isinstance(system, CompiledSystem) or field is None and not hasattr(system, "has_constraints"):
        return as_compiled(system)
    if hasattr(system, "has_constraints") and hasattr(system, "lagrangian"):  # a System
        from .ode import from_system

        field = field or ("nonholonomic" if system.has_constraints else "euler-lagrange")
        return as_compiled(from_system(system, field))
    return as_compiled(system)


def sweep(system, ranges: Mapping, q0: Sequence, qdot0: Sequence, t_end: float, *, field: str | None = None,
          parameters: Mapping | None = None, compare_with=None, workers: int | None = None, scheduler=None,
          progress: bool = False, progress_stream=None, points: int = 201, on_row=None, done=None,
          loop: str = "auto", **options) -> SweepResult:
    """Integrate a field at every point of a grid and tabulate the monitors (see the module docstring).

    Parameters
    ----------
    system : System, CompiledSystem, FirstOrderSystem or field
        A :class:`~anholo.system.System` is compiled for ``field`` (default: nonholonomic for a
        system with constraints, else euler-lagrange); compile once yourself for repeated sweeps.
    ranges : mapping
        ``{name: (start, stop, num)}`` or ``{name: [values...]}``; names are parameters,
        ``q0.<coordinate>`` or ``qdot0.<coordinate>``.
    q0, qdot0 : sequences
        The base initial state (natural velocities; swept entries replace its values).
    t_end : float
        Each run integrates over ``[0, t_end]``.
    parameters : mapping, optional
        Values of parameters that are not swept (over the system's ``[values]``).
    compare_with : CompiledSystem or field, optional
        The vakonomic field of the same system: adds the column ``nh_vak_gap``.
    workers : int, optional
        Processes on this machine (default: the number of CPUs; 1 runs in this process).
    scheduler : str or distributed.Client, optional
        Run on this Dask cluster (its scheduler address); the rows are the same.
    points : int
        Output times per run at which the monitors are evaluated (default 201).
    on_row : callable, optional
        ``on_row(row)`` is called with each row as its run finishes (in the order they finish): write
        rows there to keep them whatever happens later.
    done : mapping, optional
        Rows already computed, by their swept values (:func:`read_rows` of an earlier table): those
        runs are not run again (resume an interrupted sweep).
    loop : {"auto", "compiled", "runs"}
        ``auto``: the runs go through the compiled loop of :mod:`anholo.numerics.batch` where it applies (a C
        compiler, method DOP853, no ``compare_with``; chunks of :data:`~anholo.numerics.batch.CHUNK` runs per
        task), else one :func:`~anholo.numerics.integrate.simulate` per run; ``compiled`` insists on the loop,
        ``runs`` on the per-run route.  The two routes agree to the tolerance (the loop hits the output times
        exactly instead of interpolating); each gives the same rows wherever it runs.
    **options
        Passed to :func:`~anholo.numerics.integrate.simulate` (method, rtol, atol); ``inputs`` as for
        :func:`~anholo.numerics.batch.simulate_batch` (expressions go into the compiled loop).

    Returns
    -------
    SweepResult
        Interrupted by Ctrl-C, the rows of the runs that finished (``interrupted`` says so, the
        worker processes are stopped); any other interrupt (a time budget) propagates after
        ``on_row`` has seen every finished row.

    Raises
    ------
    SimulationError
        For a swept name that is neither a parameter nor ``q0.<q>`` / ``qdot0.<q>``, a bad
        range, or a Dask scheduler that cannot be reached.
    LimitError
        For a grid of more runs than the limit ``runs`` (:mod:`anholo.limits`).
    """
    loop_route = loop
    if loop_route not in ("auto", "compiled", "runs"):
        raise SimulationError(f"loop must be 'auto', 'compiled' or 'runs', got {loop_route!r}.")
    compiled = _compiled(system, field)
    other = None if compare_with is None else as_compiled(compare_with)
    if other is not None and other.coordinate_names != compiled.coordinate_names:
        raise SimulationError("compare_with must be a field of the same system (same coordinates).")
    names, points_ = grid(ranges)
    coords = compiled.coordinate_names
    base = dict(parameters or {})
    compiled.parameter_vector({k: v for k, v in base.items()} or None)  # unknown names fail here
    for name in names:
        if name.startswith(("q0.", "qdot0.")):
            coord = name.split(".", 1)[1]
            if coord not in coords:
                raise SimulationError(f"{name!r}: {coord!r} is not a coordinate; the coordinates are "
                                      f"{', '.join(coords)}.")
        elif name not in compiled.parameters:
            raise SimulationError(
                f"{name!r} is neither a parameter ({', '.join(compiled.parameters) or 'none'}) nor an initial "
                f"value q0.<coordinate> / qdot0.<coordinate> (coordinates {', '.join(coords)}).")
    q0 = [float(x) for x in q0]
    qdot0 = [float(x) for x in qdot0]
    if len(q0) != len(coords) or len(qdot0) != len(coords):
        raise SimulationError(f"q0 and qdot0 need {len(coords)} values each ({', '.join(coords)}).")
    runs = []
    for i, point in enumerate(points_):
        q, u, p = list(q0), list(qdot0), dict(base)
        for name, value in zip(names, point):
            if name.startswith("q0."):
                q[coords.index(name[3:])] = value
            elif name.startswith("qdot0."):
                u[coords.index(name[6:])] = value
            else:
                p[name] = value
        runs.append((i, (q, u), p))
    options = prepare_options(compiled, dict(options, points=int(points)))  # expression inputs read once
    columns = sweep_columns(names, coords, other is not None)
    rows: dict = {}
    for i, point in enumerate(points_):  # resumed rows
        hit = (done or {}).get(tuple(point))
        if hit is not None:
            rows[i] = tuple(hit)
    todo = [run for run in runs if run[0] not in rows]

    def finished(k, result):
        i = todo[k][0]
        rows[i] = tuple(points_[i]) + tuple(result)
        if on_row is not None:
            on_row(rows[i])

    interrupted = ""
    loop = loop_eligible(compiled, options, t_span=float(t_end)) if other is None and compiled_loop_wanted(loop_route) \
        else None
    if loop_route == "compiled" and loop is None:
        why = "a --gap comparison needs one simulate per run" if other is not None else \
            loop_refusal(compiled, options, t_span=float(t_end))
        raise SimulationError(f"loop='compiled' is not possible: {why}; use loop='runs' (or 'auto').")
    try:
        if loop is not None:  # chunks of runs through the compiled loop; each chunk returns its rows
            chunks = [todo[k:k + CHUNK] for k in range(0, len(todo), CHUNK)]
            position = {run[0]: k for k, run in enumerate(todo)}

            def chunk_done(c, rows_):
                for i, row in rows_:
                    finished(position[i], row)

            if workers is None and scheduler is None:
                workers = min(os.cpu_count() or 1, len(chunks))
            map_runs(_loop_rows, (compiled, loop), float(t_end), [(c, ch, None) for c, ch in enumerate(chunks)],
                     options, workers=workers, scheduler=scheduler, progress=progress,
                     progress_stream=progress_stream, label="sweep", on_result=chunk_done)
        else:
            map_runs(_row, (compiled, other), float(t_end), todo, options, workers=workers, scheduler=scheduler,
                     progress=progress, progress_stream=progress_stream, label="sweep", on_result=finished)
    except KeyboardInterrupt:
        interrupted = "interrupted (Ctrl-C)"
    return SweepResult(names, columns, tuple(rows[i] for i in sorted(rows)), compiled.kind, compiled.name,
                       float(t_end), planned=len(points_), interrupted=interrupted)

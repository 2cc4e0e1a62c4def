"""Many runs of one compiled field: over initial states and/or parameter values, in one compiled loop,
in processes or on Dask.

The runs are integrated by the compiled loop (:mod:`anholo.numerics.batch_loop`) — many runs advancing
together through the vectorised kernel of the field's generated C, projected onto holonomic constraints
after every step — in chunks (:data:`CHUNK` runs), each chunk in this process or in a worker, where

* a C compiler works (and ``ANHOLO_CODEGEN`` is not ``python``),
* the field's right-hand side comes from a straight-line program in this process (Maggi's route, or an
  exact-route field compiled here),
* the method is the default ``DOP853``, without events, dense output or other solver options, output times
  are given (``points`` or ``t_eval``, increasing, inside a forward ``t_span``), and holonomic constraints
  are projected (not ``project=False``), and
* control inputs, if the system has any, are given as expressions (:mod:`anholo.numerics.inputs`: a string
  or SymPy expression in the time ``t``, the coordinates, the velocities ``<q>_dot`` and the parameters, or
  a number): their definitions are compiled into the loop, before the rates.

A run gives the same numbers bit for bit in any chunk.  Otherwise each run is one
:func:`~anholo.numerics.integrate.simulate` — in particular where an input is a Python callable
``u(t, state)`` (the loop cannot call Python); expression inputs are then evaluated by generated Python with
each run's parameter values.

The compiled system is sent once to each worker (it pickles as its generated
source, :class:`~anholo.numerics.compile.CompiledSystem`); runs are distributed in
chunks with :class:`concurrent.futures.ProcessPoolExecutor` on this machine, or
with ``distributed.Client`` on a Dask cluster given its scheduler address
(:func:`map_runs`).  Every run is the same deterministic computation wherever it
executes, so the results do not depend on where they ran.  A progress bar (tqdm)
is written to stderr as chunks finish, if asked for.
"""

from __future__ import annotations

import os
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import AnholoError, IntegrationError, SimulationError
from .inputs import ControlInputs, prepare_options, run_options
from .integrate import as_compiled, simulate

__all__ = ["simulate_batch", "map_runs", "dask_client", "loop_eligible", "loop_refusal", "run_loop_chunk", "CHUNK"]

#: Runs per task of the compiled loop (a task is one call into C; Ctrl-C and progress act between tasks).
CHUNK = 64
_LOOP_OPTIONS = {"method", "rtol", "atol", "t_eval", "points", "constraint_tol", "max_step", "project", "progress",
                 "progress_stream", "inputs"}

_WORKER_SHARED = None


def _init_worker(shared) -> None:
    global _WORKER_SHARED
    _WORKER_SHARED = shared
    # Ctrl-C reaches the whole process group: the parent stops the workers (and keeps the finished runs);
    # a worker must not die on its own with a traceback of its own.  The parent stops a worker with SIGTERM:
    # its default action (a handler inherited from the parent, e.g. the command line's, would raise in the
    # worker and print a traceback).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_chunk(fn, chunk, t_span, options):
    return [(i, fn(_WORKER_SHARED, t_span, state, params, options)) for i, state, params in chunk]


def _run_chunk_with(shared, fn, chunk, t_span, options):
    return [(i, fn(shared, t_span, state, params, options)) for i, state, params in chunk]


def _simulate_one(compiled, t_span, state, params, options):
    return simulate(compiled, t_span, *state, parameters=params, **run_options(compiled, options, params))


def _runs(initial_states, parameters) -> list:
    states = [tuple(s) for s in initial_states]
    if any(len(s) not in (2, 3) for s in states):
        raise SimulationError("each initial state is (q0, qdot0) or (q0, qdot0, lambda0).")
    if parameters is None or isinstance(parameters, Mapping):
        params = [parameters] * len(states)
    else:
        params = list(parameters)
        if len(states) == 1:
            states = states * len(params)
        elif len(params) != len(states):
            raise SimulationError(
                f"{len(states)} initial states but {len(params)} parameter sets; give one of each per run, "
                "or a single initial state for a parameter sweep."
            )
    return [(i, s, p) for i, (s, p) in enumerate(zip(states, params))]


def dask_client(scheduler):
    """``(client, owned)``: a ``distributed.Client`` connected to ``scheduler`` (an address such as
    ``"tcp://10.0.0.1:8786"``, or a Client / LocalCluster given directly); ``owned`` is True if this
    function opened the connection (and the caller should close it)."""
    try:
        from distributed import Client
    except ImportError:
        raise SimulationError(
            "running on a Dask cluster needs dask.distributed, which is not installed; install it with "
            "pip install \"anholo[dask]\" (or pip install \"dask[distributed]\"), or leave out the scheduler "
            "to run on this machine."
        ) from None
    if isinstance(scheduler, Client):
        return scheduler, False
    if hasattr(scheduler, "scheduler_address"):  # a LocalCluster or another cluster object
        scheduler = scheduler.scheduler_address
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise SimulationError(f"a Dask scheduler is given by its address (e.g. tcp://host:8786), got {scheduler!r}.")
    try:
        return Client(scheduler.strip(), timeout="10s"), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise SimulationError(f"cannot connect to the Dask scheduler at {scheduler.strip()}: "
                              f"{' '.join(str(exc).split()) or type(exc).__name__}.") from None


class _Bar:
    """A tqdm progress bar on ``stream`` (``batch: done/total runs``), or nothing."""

    def __init__(self, total: int, enabled: bool, stream, label: str):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm  # a widget in Jupyter, text in a terminal

            self.bar = tqdm(total=total, file=stream or sys.stderr, desc=label, dynamic_ncols=True,
                            bar_format="{desc}: {n}/{total} runs |{bar}| {elapsed}<{remaining}")

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def map_runs(fn: Callable, shared, t_span, runs: Sequence, options: Mapping, *, workers: int | None = None,
             scheduler=None, progress: bool = False, progress_stream=None, label: str = "batch",
             on_result: Callable | None = None) -> list:
    """``[fn(shared, t_span, state, params, options) for each run]``, in the order of ``runs``.

    ``runs`` is a list of ``(index, state, params)``; ``fn`` must be a module-level function
    (it is pickled by reference) and ``shared`` picklable (it is sent once per worker).
    Without ``scheduler``: in this process (``workers=1``) or in a process pool of ``workers``
    processes (default: the number of CPUs), one run per task, so that every finished run is
    delivered at once.  With ``scheduler`` (an address or a ``distributed.Client``): ``shared``
    is scattered to every worker of the Dask cluster and the runs are submitted in chunks.

    ``on_result(position, value)`` is called in this process as each run finishes (in the order
    they finish; ``position`` is the run's place in ``runs``): a caller writes its rows there, so that
    an interrupt loses nothing finished.  On an interrupt (Ctrl-C, a signal handler that raises, a
    time budget) the pending runs are cancelled, the worker processes are stopped (terminated, then
    killed after 2 s: none outlives the call) and the exception propagates.
    """
    total = len(runs)
    results: list = [None] * total
    position = {run[0]: k for k, run in enumerate(runs)}
    options = dict(options)
    bar = _Bar(total, progress, progress_stream, label)

    def deliver(i, value):
        k = position[i]
        results[k] = value
        if on_result is not None:
            on_result(k, value)

    try:
        if scheduler is not None:
            client, owned = dask_client(scheduler)
            futures = []
            try:
                from distributed import as_completed as dask_completed

                nworkers = max(1, len(client.scheduler_info().get("workers", {})) or 1)
                size = max(1, total // (4 * nworkers))
                chunks = [runs[k:k + size] for k in range(0, total, size)]
                remote = client.scatter(shared, broadcast=True)
                futures = [client.submit(_run_chunk_with, remote, fn, chunk, t_span, options, pure=False)
                           for chunk in chunks]
                for fut in dask_completed(futures):
                    part = fut.result()
                    for i, value in part:
                        deliver(i, value)
                    bar.update(len(part))
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise
            finally:
                if owned:
                    client.close()
            return results
        workers = (os.cpu_count() or 1) if workers is None else int(workers)
        if workers < 1:
            raise SimulationError(f"workers must be at least 1, got {workers}.")
        if workers == 1 or total <= 1:
            for i, state, params in runs:
                deliver(i, fn(shared, t_span, state, params, options))
                bar.update(1)
            return results
        pool = ProcessPoolExecutor(max_workers=min(workers, total), initializer=_init_worker, initargs=(shared,))
        try:
            pending = {pool.submit(_run_chunk, fn, [run], t_span, options) for run in runs}
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    for i, value in fut.result():
                        deliver(i, value)
                bar.update(len(finished))
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)
        return results
    finally:
        bar.close()


def _stop(pool: ProcessPoolExecutor, grace: float = 2.0) -> None:
    """Cancel what has not started and stop the worker processes now (terminate, then kill after ``grace``
    seconds): an interrupted batch leaves no process behind."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        try:
            proc.terminate()
        except (OSError, AttributeError):
            pass
    for proc in processes:
        try:
            proc.join(grace)
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
        except (OSError, AttributeError, ValueError):
            pass


def loop_eligible(compiled, options: Mapping, *, require_times: bool = True, t_span=None):
    """The :class:`~anholo.numerics.batch_loop.CompiledLoop` for runs of ``compiled`` with these
    :func:`~anholo.numerics.integrate.simulate` options, or None where the runs take the per-run route
    (:func:`loop_refusal` says why)."""
    return _loop_choice(compiled, options, require_times, t_span)[0]


def loop_refusal(compiled, options: Mapping, *, require_times: bool = True, t_span=None) -> str:
    """Why runs of ``compiled`` with these options do not take the compiled loop (one line), or ``""``."""
    return _loop_choice(compiled, options, require_times, t_span)[1]


def _loop_choice(compiled, options, require_times, t_span) -> tuple:
    from ..algebra import codegen
    from .batch_loop import compiled_loop

    extra = sorted(k for k, v in options.items() if k not in _LOOP_OPTIONS and v is not None and v is not False)
    if extra:
        return None, f"the option(s) {', '.join(extra)} need one simulate per run"
    if options.get("method", "DOP853") != "DOP853":
        return None, f"the compiled loop integrates with DOP853, not {options.get('method')}"
    if require_times and options.get("t_eval") is None and options.get("points") is None:
        return None, "the compiled loop needs output times (points= or t_eval=)"
    if options.get("project", True) is False and compiled.holonomic_count:
        return None, "project=False with holonomic constraints needs one simulate per run"
    if t_span is not None:  # the loop integrates forward, with its output times inside the interval
        t0, t1, times = _output_times(t_span, options)
        if not t1 > t0 or np.any(np.diff(times) < 0) or times.size == 0 or times[0] < t0 or times[-1] > t1:
            return None, "the compiled loop integrates forward in time with increasing output times inside t_span"
    inputs = None
    if getattr(compiled, "control_names", ()):
        inputs = options.get("inputs")
        if not isinstance(inputs, ControlInputs):
            inputs = prepare_options(compiled, options)["inputs"]
        if not inputs.compilable:
            return None, (f"the input(s) {', '.join(inputs.callables)} are Python callables, which the compiled "
                          "loop cannot call; give them as expressions in t, the coordinates, <q>_dot and the "
                          "parameters (e.g. inputs={'tau': '0.2*sin(t)'})")
        if compiled.ode is None:
            return None, "the compiled loop of a system with inputs is generated from its field: compile it here"
    if codegen.chosen_backend() == "python" or codegen.find_compiler() is None:
        return None, "the compiled loop needs a C compiler (and ANHOLO_CODEGEN not 'python')"
    loop = compiled_loop(compiled, inputs)
    if loop is None:
        return None, "this field's right-hand side has no program in this process (compile the system here)"
    return loop, ""


def _output_times(t_span, options) -> tuple:
    t0, t1 = (0.0, float(t_span)) if np.ndim(t_span) == 0 else (float(t_span[0]), float(t_span[1]))
    if options.get("t_eval") is not None:
        times = np.asarray(options["t_eval"], float)
    elif options.get("points") is not None:
        times = np.linspace(t0, t1, int(options["points"]))
    else:
        times = np.array([t0, t1])
    return t0, t1, times


def run_loop_chunk(shared, t_span, chunk, _params, options) -> list:
    """Integrate the runs ``chunk`` = ``[(index, state, params), ...]`` by the compiled loop; returns per run
    ``(index, times, states (dim, N), parameter vector, status, nfev, why)``: status 0 (``why`` ""), a status
    of :data:`~anholo.numerics.batch_loop.STATUS_TEXT` (``why`` one line), or −1 (``why`` the exception raised
    by the initial data or parameter values)."""
    compiled, loop = shared
    t0, t1, times = _output_times(t_span, options)
    Y0, P, keep, out = [], [], [], []
    for i, state, params in chunk:
        try:
            p = compiled.parameter_vector(params)
            with np.errstate(all="ignore"):
                y0 = compiled.initial_state(*state, p=p, constraint_tol=options.get("constraint_tol", 1e-9), t0=t0)
        except (AnholoError, ArithmeticError, ValueError) as exc:
            out.append((i, None, None, None, -1, 0, exc))
            continue
        Y0.append(y0), P.append(p), keep.append(i)
    if keep:
        from .integrate import DEFAULT_ATOL, DEFAULT_RTOL
        res = loop.run(np.array(Y0), np.array(P), t0, t1, times, rtol=options.get("rtol", DEFAULT_RTOL),
                       atol=options.get("atol", DEFAULT_ATOL), max_step=options.get("max_step", np.inf))
        from .batch_loop import STATUS_TEXT
        for k, i in enumerate(keep):
            st = int(res["status"][k])
            why = "" if st == 0 else f"{STATUS_TEXT[st]} at t = {res['t_end'][k]:.10g}"
            out.append((i, times, res["y"][k].T, tuple(P[k]), st, int(res["nfev"][k]), why))
    order = {i: k for k, (i, _, _) in enumerate(chunk)}
    return sorted(out, key=lambda r: order[r[0]])


def _loop_task(shared, t_span, chunk, params, options):
    return run_loop_chunk(shared, t_span, chunk, params, options)


def _trajectory(compiled, T, Y, p, status, nfev, why, method="DOP853", inputs=None):
    from .integrate import _single
    if status != 0:
        raise IntegrationError(f"a run of the batch failed: {why}.")
    controls = inputs.functions(compiled, p) if isinstance(inputs, ControlInputs) else None  # for the multipliers
    return _single(compiled, T, Y, p, dict(zip(compiled.parameters, p)), controls, None, None, None, nfev, method,
                   0.0, "The solver successfully reached the end of the integration interval.")


def map_loop(compiled, loop, t_span, runs: Sequence, options: Mapping, *, workers=None, scheduler=None,
             progress=False, progress_stream=None, label="batch", on_chunk=None) -> list:
    """:func:`run_loop_chunk` over ``runs`` in chunks of :data:`CHUNK` (by :func:`map_runs`: in this process,
    worker processes or Dask); ``on_chunk(results)`` as each chunk finishes.  Returns the per-run results in
    the order of ``runs``."""
    chunks = [runs[k:k + CHUNK] for k in range(0, len(runs), CHUNK)]
    tasks = [(c, chunk, None) for c, chunk in enumerate(chunks)]
    if workers is None and scheduler is None:
        workers = min(os.cpu_count() or 1, len(chunks))
    options = {k: v for k, v in options.items() if k not in ("progress", "progress_stream")}
    done = map_runs(_loop_task, (compiled, loop), t_span, tasks, options, workers=workers, scheduler=scheduler,
                    progress=progress, progress_stream=progress_stream, label=label,
                    on_result=(lambda k, value: on_chunk(value)) if on_chunk is not None else None)
    return [r for part in done for r in part]


def simulate_batch(system, t_span, initial_states: Sequence, parameters=None, *, workers: int | None = None,
                   scheduler=None, progress: bool = False, progress_stream=None, loop: str = "auto",
                   **options) -> list:
    """Integrate one field from many initial states and/or parameter values.

    Parameters
    ----------
    system : CompiledSystem, FirstOrderSystem or field
        Compiled once (in this process).
    t_span : float or (t0, t1)
    initial_states : sequence of (q0, qdot0) or (q0, qdot0, lambda0)
        One per run; a single state is reused for every parameter set.
    parameters : mapping or sequence of mappings, optional
        Parameter values for all runs, or one mapping per run.
    workers : int, optional
        Worker processes on this machine (default: the number of CPUs); 1 runs in this process.
    scheduler : str or distributed.Client, optional
        Run on this Dask cluster instead (``workers`` is then ignored); the results are the same.
    progress : bool
        A progress bar ``batch: done/total runs`` on stderr (or ``progress_stream``).
    loop : {"auto", "compiled", "runs"}
        ``auto``: the compiled loop where it applies (module docstring), else one :func:`simulate` per run;
        ``compiled``: the compiled loop or SimulationError saying why not; ``runs``: one simulate per run.
    inputs : mapping, optional
        The control inputs of a system with ``inputs = [...]``: name → an expression (a string as the command
        line's ``--input`` reads it, a SymPy expression or a number) in the time ``t``, the coordinates, the
        natural velocities ``<q>_dot`` and the parameters (each run's values) — compiled into the loop
        (:mod:`anholo.numerics.inputs`) — or a Python callable ``u(t, state)``, which the compiled loop cannot
        call: runs with a callable input take one :func:`simulate` each (``loop="compiled"`` refuses them).
    **options
        Passed to :func:`~anholo.numerics.integrate.simulate` (method, rtol, points, …).

    Returns
    -------
    list of Trajectory, in the order of the runs.  Trajectories computed in worker
    processes carry a compiled system without its symbolic form (no momentum maps).

    Examples
    --------
    >>> from anholo.system import System
    >>> from anholo.numerics import compile_system, from_system
    >>> c = compile_system(from_system(System.load("spherical_pendulum"), "euler-lagrange"))
    >>> runs = simulate_batch(c, 1.0, [([0.5, 0.0], [0.0, w]) for w in (0.5, 1.0)], workers=1, points=2)
    >>> [round(float(r.q[1, -1]), 6) for r in runs] != [0.5, 1.0]  # φ advanced by different amounts
    True
    """
    compiled = as_compiled(system)
    runs = _runs(initial_states, parameters)
    if loop not in ("auto", "compiled", "runs"):
        raise SimulationError(f"loop must be 'auto', 'compiled' or 'runs', got {loop!r}.")
    options = prepare_options(compiled, options)  # the inputs read once (an error here, not in every run)
    cl, why = _loop_choice(compiled, options, True, t_span) if loop != "runs" else (None, "")
    if loop == "compiled" and cl is None:
        raise SimulationError(f"loop='compiled' is not possible: {why}; use loop='runs' (or 'auto').")
    if cl is not None:
        results = map_loop(compiled, cl, t_span, runs, options, workers=workers, scheduler=scheduler,
                           progress=progress, progress_stream=progress_stream)
        out = []
        for i, T, Y, p, status, nfev, why in results:
            if status < 0:
                raise why
            out.append(_trajectory(compiled, T, Y, p, status, nfev, f"run {i}: {why}", inputs=options.get("inputs")))
        return out
    return map_runs(_simulate_one, compiled, t_span, runs, options, workers=workers, scheduler=scheduler,
                    progress=progress, progress_stream=progress_stream)

"""Many runs of one compiled field: over initial states and/or parameter values, in processes or on Dask.

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

from ..errors import SimulationError
from .integrate import as_compiled, simulate

__all__ = ["simulate_batch", "map_runs", "dask_client"]

_WORKER_SHARED = None


def _init_worker(shared) -> None:
    global _WORKER_SHARED
    _WORKER_SHARED = shared
    # Ctrl-C reaches the whole process group: the parent stops the workers (and keeps the finished runs);
    # a worker must not die on its own with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_chunk(fn, chunk, t_span, options):
    return [(i, fn(_WORKER_SHARED, t_span, state, params, options)) for i, state, params in chunk]


def _run_chunk_with(shared, fn, chunk, t_span, options):
    return [(i, fn(shared, t_span, state, params, options)) for i, state, params in chunk]


def _simulate_one(compiled, t_span, state, params, options):
    return simulate(compiled, t_span, *state, parameters=params, **options)


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


def simulate_batch(system, t_span, initial_states: Sequence, parameters=None, *, workers: int | None = None,
                   scheduler=None, progress: bool = False, progress_stream=None, **options) -> list:
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
    return map_runs(_simulate_one, compiled, t_span, runs, options, workers=workers, scheduler=scheduler,
                    progress=progress, progress_stream=progress_stream)

"""Many runs of one compiled field: over initial states and/or parameter values, in processes.

The compiled system is sent once to each worker process (it pickles as its
generated source, :class:`~anholo.numerics.compile.CompiledSystem`); runs are
distributed in chunks with :class:`concurrent.futures.ProcessPoolExecutor`, and a
one-line progress indicator is written to stderr as chunks finish.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Mapping, Sequence

from ..errors import SimulationError
from .integrate import as_compiled, simulate

__all__ = ["simulate_batch"]

_WORKER_SYSTEM = None


def _init_worker(compiled) -> None:
    global _WORKER_SYSTEM
    _WORKER_SYSTEM = compiled


def _run_chunk(chunk, t_span, options):
    return [(i, simulate(_WORKER_SYSTEM, t_span, *state, parameters=params, **options)) for i, state, params in chunk]


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


def simulate_batch(system, t_span, initial_states: Sequence, parameters=None, *, workers: int | None = None,
                   progress: bool = False, progress_stream=None, **options) -> list:
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
        Worker processes (default: the number of CPUs); 1 runs in this process.
    progress : bool
        Write ``batch: done/total runs`` to stderr as runs finish.
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
    total = len(runs)
    stream = progress_stream or sys.stderr
    workers = os.cpu_count() or 1 if workers is None else int(workers)
    if workers < 1:
        raise SimulationError(f"workers must be at least 1, got {workers}.")
    results: list = [None] * total
    done = 0
    start = time.monotonic()

    def report():
        if progress:
            print(f"\rbatch: {done}/{total} runs ({time.monotonic() - start:.1f} s)", end="", file=stream, flush=True)

    if workers == 1 or total <= 1:
        for i, state, params in runs:
            results[i] = simulate(compiled, t_span, *state, parameters=params, **options)
            done += 1
            report()
    else:
        size = max(1, total // (4 * workers))
        chunks = [runs[k:k + size] for k in range(0, total, size)]
        with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(compiled,)) as pool:
            futures = [pool.submit(_run_chunk, chunk, t_span, options) for chunk in chunks]
            for fut in as_completed(futures):
                for i, traj in fut.result():
                    results[i] = traj
                    done += 1
                report()
    if progress:
        print(file=stream, flush=True)
    return results

"""CPU-time budgets for optional computations (a search inside a report block, an explicit solve).

``with cpu_budget(seconds): …`` raises :class:`OverBudget` inside the enclosed
computation once the process has spent ``seconds`` of CPU time in it (the
profiling interval timer, ``SIGPROF``).  CPU time, not wall time: the verdict does
not depend on how busy the machine is.  Only in the main thread and when no other
profiling timer runs; elsewhere the computation is not interrupted.  The
report's wall-clock budget (``SIGALRM``) is independent of it.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

__all__ = ["OverBudget", "cpu_budget"]


class OverBudget(BaseException):
    """Raised inside a computation that ran past its CPU-time budget (a BaseException, so that no
    ``except Exception`` inside the computation swallows it)."""


@contextmanager
def cpu_budget(seconds: float | None):
    """Interrupt the enclosed computation with :class:`OverBudget` after ``seconds`` of CPU time (None: no limit)."""
    usable = (seconds is not None and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread()
              and signal.getitimer(signal.ITIMER_PROF)[0] == 0)
    if not usable:
        yield
        return
    token = object()

    def _interrupt(signum, frame):
        raise OverBudget(token)

    previous = signal.signal(signal.SIGPROF, _interrupt)
    signal.setitimer(signal.ITIMER_PROF, max(float(seconds), 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)

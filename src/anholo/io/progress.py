"""Progress on stderr for long derivations (``anholo analyze``, ``anholo compare``), with tqdm.

A :class:`Progress` is a callable ``progress(message)`` that names the step now
running; it shows ``anholo <command>: <step> [step k, elapsed]`` on one line of
stderr, refreshed twice a second by a small thread (so the clock runs while sympy
works), and clears the line when done.  It is silent when stderr is not a terminal
(piped or redirected output stays clean) or when disabled (``--quiet``).
"""

from __future__ import annotations

import sys
import threading

__all__ = ["Progress"]


class Progress:
    """``with Progress("analyze") as progress: progress("Frame"); ...`` — see the module docstring.

    Parameters
    ----------
    label : str
        The command shown before each step.
    enabled : bool, optional
        Default: True exactly when ``stream`` is a terminal.
    stream : file, optional
        Default ``sys.stderr``.
    """

    def __init__(self, label: str, enabled: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self.label = label
        self.steps = 0
        self._bar = None
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        if self.enabled:
            from tqdm.auto import tqdm  # a widget in Jupyter, text in a terminal

            self._bar = tqdm(total=None, file=self.stream, leave=False, dynamic_ncols=True,
                             bar_format="anholo " + self.label + ": {desc} [step {n}, {elapsed}]")
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self):
        while not self._stop.wait(0.5):
            bar = self._bar
            if bar is not None:
                bar.refresh()

    def __call__(self, message: str) -> None:
        self.steps += 1
        if self._bar is not None:
            self._bar.set_description_str(str(message), refresh=False)
            self._bar.update(1)
            self._bar.refresh()  # every step is shown, however short

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.close()

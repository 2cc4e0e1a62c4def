"""Run one CLI call or API call in a forked child under a wall-time limit, and classify the outcome.

The oracle of the fuzzing suite is the command line contract itself (see the issue
"Reliability under bad and hostile input"): for every input, either exit status 0 (a
complete result), 3 (a report printed with a section that failed for a stated reason, e.g. over
its time budget), or 2 with exactly one line ``anholo: error: …`` on stderr — never a
traceback, never an internal error, never more than the configured time.

A child process is forked from the (already imported) interpreter for every input, so sympy
is imported once: a call costs what the computation costs, and a hang (even one inside a
C routine that no signal handler can interrupt) is ended by killing the child.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
import time
import traceback
from dataclasses import dataclass

_CTX = multiprocessing.get_context("fork")

#: Outcome kinds.
ACCEPTED, CLEAN_ERROR, TRACEBACK, HANG, BAD_ERROR, INTERNAL, OVER_BUDGET = (
    "accepted", "clean error", "traceback", "hang", "malformed error", "internal error", "over budget")


@dataclass(frozen=True)
class Outcome:
    kind: str
    status: int | None
    stdout: str
    stderr: str
    seconds: float
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.kind in (ACCEPTED, CLEAN_ERROR, OVER_BUDGET)


def _child(conn, func, args):
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    tb = None
    status = None
    try:
        status = func(*args)
    except SystemExit as exc:  # argparse
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - this is what we are looking for
        tb = traceback.format_exc()
    try:
        conn.send((status, out.getvalue()[-200_000:], err.getvalue()[-20_000:], tb))
    finally:
        conn.close()
        os._exit(0)


def run_in_child(func, args=(), timeout: float = 30.0):
    """``func(*args)`` in a forked child: (status, stdout, stderr, traceback or None, seconds), or
    None for the first four if the child did not finish within ``timeout`` seconds."""
    recv, send = _CTX.Pipe(duplex=False)
    t0 = time.monotonic()
    proc = _CTX.Process(target=_child, args=(send, func, args))
    proc.start()
    send.close()
    result = None
    if recv.poll(timeout):
        try:
            result = recv.recv()
        except EOFError:  # the child died (e.g. killed by the kernel for memory)
            result = (None, "", "", "the child process died without a result")
    seconds = time.monotonic() - t0
    if proc.is_alive():
        proc.kill()
    proc.join()
    recv.close()
    if result is None:
        return None, None, None, None, seconds
    return (*result, seconds)


def _cli(argv):
    from anholo.cli import main

    return main(list(argv))


def classify(status, stdout, stderr, tb, seconds, timeout) -> Outcome:
    if status is None and tb is None and stdout is None:
        return Outcome(HANG, None, "", "", seconds, f"no result within {timeout:g} s")
    if tb is not None:
        return Outcome(TRACEBACK, status, stdout, stderr, seconds, tb.strip().splitlines()[-1])
    if "Traceback (most recent call last)" in stderr:
        return Outcome(TRACEBACK, status, stdout, stderr, seconds, stderr.strip().splitlines()[-1])
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("anholo: warning:")]
    if status == 2:
        errors = [ln for ln in lines if ln.startswith("anholo: error: ")]
        others = [ln for ln in lines if not ln.startswith("anholo: ") or ln.startswith("anholo: error")]
        if len(errors) == 1 and len(others) == 1 and len(errors[0]) < 4000 and errors[0].isprintable():
            return Outcome(CLEAN_ERROR, status, stdout, stderr, seconds, errors[0])
        return Outcome(BAD_ERROR, status, stdout, stderr, seconds, stderr.strip()[:500])
    if "internal error (" in stdout or "internal error (" in stderr:
        where = (stdout + stderr).partition("internal error (")[2].partition(")")[0]
        return Outcome(INTERNAL, status, stdout, stderr, seconds, where[:300])
    if status == 0:
        if any(ln.startswith("anholo: error") for ln in lines):
            return Outcome(BAD_ERROR, status, stdout, stderr, seconds, "an error printed with exit 0")
        return Outcome(ACCEPTED, status, stdout, stderr, seconds)
    if status == 3:
        return Outcome(OVER_BUDGET, status, stdout, stderr, seconds, "a section failed or ran out of time")
    return Outcome(BAD_ERROR, status, stdout, stderr, seconds, f"exit status {status}")


def run_cli(argv, timeout: float = 30.0) -> Outcome:
    """``anholo ARGV`` in a forked child (in-process CLI: no new interpreter), classified."""
    status, out, err, tb, seconds = run_in_child(_cli, (tuple(argv),), timeout)
    return classify(status, out, err, tb, seconds, timeout)


def run_subprocess(argv, timeout: float = 60.0) -> Outcome:
    """``python -m anholo.cli ARGV`` in a new interpreter (the real command line), classified."""
    import subprocess

    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "anholo.cli", *argv], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return classify(None, None, None, None, time.monotonic() - t0, timeout)
    return classify(proc.returncode, proc.stdout, proc.stderr, None, time.monotonic() - t0, timeout)


def materialize(case, directory: str) -> list:
    """Write the case's files into ``directory``; the argv with ``{dir}`` replaced."""
    for name, text in case.files.items():
        mode, data = ("wb", text) if isinstance(text, bytes) else ("w", text)
        with open(os.path.join(directory, name), mode, **({} if mode == "wb" else {"encoding": "utf-8",
                                                                                   "errors": "surrogatepass"})) as fh:
            fh.write(data)
    return [a.replace("{dir}", directory) for a in case.argv]


def check_case(case, outcome: Outcome) -> str | None:
    """Why the outcome breaks the case's expectation (None if it does not)."""
    if not outcome.ok:
        return f"{outcome.kind}: {outcome.detail}"
    if case.expect == "ok" and outcome.kind != ACCEPTED:
        return f"expected a complete result, got {outcome.kind}: {outcome.detail or outcome.stderr[:300]}"
    if case.expect == "error" and outcome.kind != CLEAN_ERROR:
        return f"expected a clean error, got {outcome.kind} (exit {outcome.status})"
    if case.expect == "report" and outcome.kind not in (ACCEPTED, OVER_BUDGET):
        return f"expected a report, got {outcome.kind}: {outcome.detail}"
    if case.contains:
        text = outcome.detail if outcome.kind == CLEAN_ERROR else outcome.stdout
        if case.contains.lower() not in text.lower():
            return f"expected {case.contains!r} in {text[:300]!r}"
    return None


def _read_check(text: str, source: str):
    """In-process API call: parse the text with anholo, then compare with the independent reading."""
    from anholo.errors import AnholoError
    from anholo.io.systemfile import parse_system
    from mutator import misreadings

    try:
        spec = parse_system(text, source=source)
    except AnholoError:
        return 2, []
    return 0, misreadings(text, spec)


def run_api_reading(text: str, source: str = "<fuzz>", timeout: float = 30.0):
    """(Outcome of the API call ``parse_system(text)``, misreadings found by the oracle)."""
    status, out, err, tb, seconds = run_in_child(_read_check, (text, source), timeout)
    if tb is None and status is not None:
        status, found = status
        return classify(status if status == 0 else 0, out, err, None, seconds, timeout), found
    return classify(status, out, err, tb, seconds, timeout), []

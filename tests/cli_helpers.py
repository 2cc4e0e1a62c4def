"""Helpers shared by the simulation tests: running the command line in-process, reading its CSV, and
interrupting a compiled right-hand side after a number of calls (Ctrl-C at a chosen point)."""

from __future__ import annotations

import csv

import numpy as np


def run(capsys, *argv):
    """``(exit code, stdout, stderr)`` of ``anholo ARGV`` run in-process."""
    from anholo.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_csv(path):
    """The header and the float rows of a CSV file."""
    rows = list(csv.reader(open(path)))
    return rows[0], np.array(rows[1:], dtype=float)


def interrupt_after(monkeypatch, calls: int) -> None:
    """Make every compiled right-hand side (``CompiledSystem.rhs``) raise KeyboardInterrupt at its
    ``calls + 1``-th evaluation, counted over all of them (``monkeypatch.undo()`` restores it)."""
    from anholo.numerics import compile as compile_module

    real = compile_module.CompiledSystem.rhs
    count = {"n": 0}

    def rhs(self, p, inputs=None):
        f = real(self, p, inputs)

        def g(t, y):
            count["n"] += 1
            if count["n"] > calls:
                raise KeyboardInterrupt
            return f(t, y)

        return g

    monkeypatch.setattr(compile_module.CompiledSystem, "rhs", rhs)

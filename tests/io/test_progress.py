"""Progress on stderr (``anholo.io.progress``): shown on a terminal, silent when piped or with --quiet.

Oracle: the stream's contents — the names of the report blocks that ``analyze`` computes
(the titles of the blocks printed in the report itself) appear on a terminal stream and
nothing at all appears on a non-terminal stream or with ``--quiet``.
"""

import io
import sys

from anholo import cli
from anholo.analysis.comparison import compare_methods
from anholo.io.progress import Progress
from anholo.system import System


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(argv, stream, monkeypatch):
    monkeypatch.setattr(sys, "stderr", stream)
    out = io.StringIO()
    code = cli.main(argv, out=out)
    return code, out.getvalue()


def test_analyze_shows_each_block_on_a_terminal(monkeypatch):
    tty = _Terminal()
    code, report = _run(["analyze", "chaplygin_sleigh", "--sections", "frame,nonholonomic"], tty, monkeypatch)
    assert code == 0
    shown = tty.getvalue()
    assert "anholo analyze: Frame" in shown and "Nonholonomic" in shown
    assert shown.endswith("\r")  # the line is cleared at the end; the report itself is on stdout only
    assert "anholo analyze" not in report


def test_silent_when_piped_or_quiet(monkeypatch):
    piped = io.StringIO()
    assert _run(["analyze", "chaplygin_sleigh", "--sections", "frame"], piped, monkeypatch)[0] == 0
    assert piped.getvalue() == ""
    tty = _Terminal()
    assert _run(["analyze", "chaplygin_sleigh", "--sections", "frame", "--quiet"], tty, monkeypatch)[0] == 0
    assert tty.getvalue() == ""
    tty = _Terminal()
    assert _run(["compare", "nonholonomic_particle", "--quiet"], tty, monkeypatch)[0] == 0
    assert tty.getvalue() == ""


def test_compare_reports_its_steps():
    system = System.load("nonholonomic_particle")
    steps = []
    compare_methods(system.lagrangian, system.kinematic_constraints(), progress=steps.append)
    assert steps == ["Chetaev (Lagrange-d'Alembert) field", "vakonomic field", "difference of the accelerations on C",
                     "Frobenius data"]
    tty = _Terminal()
    with Progress("compare", stream=tty) as progress:
        for s in steps:
            progress(s)
    assert "anholo compare: Frobenius data [step 4" in tty.getvalue().replace("\r", "\n")

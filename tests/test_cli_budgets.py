"""Budgets and interrupts of analyze and linearize: every command stops within its budget (printing
included), Ctrl-C prints what was computed, absurd budgets are refused in one line."""

import time

import pytest

from anholo import cli
from anholo.io import report as report_module

HANG = '''
name = "deep exp"
coordinates = ["r"]
lagrangian = "r_dot^2/2 + exp(exp(exp(exp(exp(100)))))*r"
'''


def test_absurd_budget_is_one_line(capsys):
    for value in ("1e300", "inf", "0", "-1", "nan"):
        assert cli.main(["analyze", "nonholonomic_particle", "--budget", value]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--budget" in err


def test_numbers_too_large_to_evaluate_are_refused_when_read(tmp_path, capsys):
    path = tmp_path / "hang.toml"
    path.write_text(HANG)
    start = time.monotonic()
    assert cli.main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert "exp(exp(100))" in err and "digits" in err and time.monotonic() - start < 10


def test_reading_the_file_is_inside_the_budget(monkeypatch, capsys):
    """A file whose normal forms take long to compute: the budget stops it while it is read (before any
    block), counted from the start of the command."""
    from anholo.system import System

    def slow_load(*args, **kwargs):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(System, "load", slow_load)
    start = time.monotonic()
    code = cli.main(["analyze", "nonholonomic_particle", "--budget", "1"])
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 2 and "time budget of 1 s" in err and "reading" in err
    assert elapsed < 2.5  # the budget, and the tenth more (at least 1 s) that reading and printing may take


def test_ctrl_c_prints_the_sections_computed_before(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_module.VakonomicSummary, "of", interrupted)
    code = cli.main(["analyze", "nonholonomic_particle"])
    captured = capsys.readouterr()
    assert code == 130 and "interrupted" in captured.err
    text = captured.out
    assert "Nonholonomic (Lagrange-d'Alembert) dynamics" in text  # computed before the interrupt
    assert text.count(report_module.INTERRUPTED) >= 2  # the interrupted block and the ones after it


def test_ctrl_c_report_object_says_so(monkeypatch):
    from anholo.system import System

    monkeypatch.setattr(report_module.VakonomicSummary, "of",
                        lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    rep = report_module.analyze(System.load("nonholonomic_particle"))
    assert rep.interrupted and not rep.complete
    assert rep.block("nonholonomic") is not None and rep.block("vakonomic") is None


@pytest.mark.parametrize("extra, message", [(["--budget", "0.01"], "time budget"),
                                            (["--plot", "eig.xyz"], ".png")])
def test_linearize_budget_and_plot_checked(extra, message, capsys):
    code = cli.main(["linearize", "whipple_bicycle", "--sweep", "speed=0:10:3", *extra])
    assert code in (2, 3)
    assert message in capsys.readouterr().err

"""The CLI never prints a traceback: a defect of anholo is one line (exit 3), a closed pipe is quiet."""

import subprocess
import sys

import pytest

from anholo import cli


def test_internal_error_is_one_line(monkeypatch, capsys):
    def broken(args, out):
        raise RuntimeError("something\nunexpected")

    monkeypatch.setattr(cli, "_cmd_analyze", broken)
    monkeypatch.delenv("ANHOLO_DEBUG", raising=False)
    assert cli.main(["analyze", "nonholonomic_particle"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (RuntimeError: something unexpected)" in err
    assert "Traceback" not in err


def test_debug_variable_reraises(monkeypatch):
    def broken(args, out):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "_cmd_analyze", broken)
    monkeypatch.setenv("ANHOLO_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["analyze", "nonholonomic_particle"])


def test_closed_pipe_is_quiet():
    cmd = f"{sys.executable} -m anholo analyze whipple_bicycle --sections nonholonomic --json | head -c 20"
    res = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=300)
    assert res.stdout.startswith("{")
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr

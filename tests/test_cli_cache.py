"""``anholo cache``: the code cache's directory, its files by kind, and --clear (anholo's files only)."""

from __future__ import annotations

import subprocess
import sys

from anholo.cli import main
from anholo.numerics import compile_system
from anholo.system import System


def test_cache_lists_and_clears_only_anholos_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path))
    first = compile_system(System.load("n_trailer_1").maggi())  # a field program and a generated source
    (tmp_path / "anholo_0123456789abcdef01234567.so").write_bytes(b"\0" * 1000)
    foreign = tmp_path / "notes.txt"  # the directory may be shared: other files are never touched
    foreign.write_text("keep me")
    assert main(["cache"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"code cache {tmp_path}: 3 files")
    assert "compiled libraries 1" in line and "field programs 1" in line and "generated sources 1" in line
    assert main(["cache", "--clear"]) == 0
    assert "removed 3 files" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert main(["cache"]) == 0
    assert ": 0 files" in capsys.readouterr().out
    # what was removed is made again when needed, and gives the same source
    again = compile_system(System.load("n_trailer_1").maggi())
    assert again.source == first.source
    assert len(list(tmp_path.glob("maggi-*.json"))) == 2


def test_cache_command_line_is_short_and_errors_are_one_line(tmp_path):
    env = {"ANHOLO_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "anholo", "cache"], capture_output=True, text=True, env=env)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and 1 <= len(lines) <= 3 and "0 files" in lines[0]
    assert str(tmp_path) in out.stdout and max(map(len, lines)) <= 120
    bad = subprocess.run([sys.executable, "-m", "anholo", "cache", "--purge"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--purge" in bad.stderr

"""Every command the README shows, run as written: exit status 0, no text line wider than the report's 120
characters, no "[expression … not printed …]" placeholder.

The commands are read from README.md itself (its fenced blocks: lines starting with ``anholo ``, a line ending in
``\\`` continued on the next, ``pip … && anholo …`` reduced to the ``anholo`` part, comments after `` #`` dropped);
the placeholders ``FILE_OR_EXAMPLE`` and ``FILE`` stand for a bundled example (``rigid_body``), ``cache [--clear]``
is run as ``cache`` and ``cache --clear`` on a cache directory of the test's own, ``> FILE`` is dropped (the
output is captured).  JSON (complete expressions by design) and LaTeX (a document, broken by LaTeX) are not held
to the text width, but must not carry placeholders either.  Commands are run in a temporary directory (the
figures and CSV files they write go there).
"""

from __future__ import annotations

import io
import shlex

import pytest
from readme_helpers import readme_commands

WIDTH = 120
#: commands that take more than a few seconds (the catalogue's largest reports)
SLOW = ("analyze n_trailer_3", "analyze two_wheeled_carriage", "analyze rattleback", "linearize whipple_bicycle",
        "simulate vertical_rolling_disk",
        "analyze whipple_bicycle")


def _argv(command: str) -> list:
    command = command.split(" > ")[0]
    words = shlex.split(command)[1:]
    return ["rigid_body" if w in ("FILE_OR_EXAMPLE", "FILE") else w for w in words if w != "[--clear]"]


def _params():
    out = []
    for command in readme_commands():
        marks = [pytest.mark.slow] if any(s in command for s in SLOW) else []
        out.append(pytest.param(command, marks=marks, id=command[len("anholo "):][:60]))
    return out


def test_the_readme_has_its_commands():
    commands = readme_commands()
    assert len(commands) >= 20
    assert "anholo analyze rigid_body" in commands  # the set-up line, after "pip install . &&"
    assert any(c.startswith("anholo simulate vertical_rolling_disk") and "--plot disk.png" in c for c in commands)
    assert any(c.startswith("anholo cache") for c in commands)


def _check(argv, text):
    assert "[expression" not in text, next(line for line in text.splitlines() if "[expression" in line)
    if "--json" in argv or "--latex" in argv:
        return
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, f"{len(wide)} lines over {WIDTH} characters, e.g. ({len(wide[0])}): {wide[0][:200]}"


@pytest.mark.parametrize("command", _params())
def test_readme_command_prints_readable_text(command, tmp_path, monkeypatch):
    from anholo.cli import main

    monkeypatch.chdir(tmp_path)
    argv = _argv(command)
    runs = [argv]
    if argv[:1] == ["cache"]:
        monkeypatch.setenv("ANHOLO_CACHE", str(tmp_path / ("a-long-directory-name-" * 6)))
        (tmp_path / ("a-long-directory-name-" * 6)).mkdir()
        runs = [argv, argv + ["--clear"]]
    for args in runs:
        out = io.StringIO()
        assert main(args, out=out) == 0, args
        _check(args, out.getvalue())


def test_the_check_can_fail():
    with pytest.raises(AssertionError):
        _check(["compare", "x"], "a" * (WIDTH + 1))
    with pytest.raises(AssertionError):
        _check(["analyze", "x", "--json"], '"energy": "[expression with 3 distinct subexpressions, not printed"')
    _check(["analyze", "x", "--json"], "a" * (WIDTH + 1))

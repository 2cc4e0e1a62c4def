"""The commands the README shows (read by the tests that run them)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_commands() -> list:
    """The README's ``anholo ...`` commands, in order: lines of its fenced blocks (continued after a trailing
    ``\\``; ``pip ... && anholo ...`` reduced to the ``anholo`` part; comments after `` #`` dropped)."""
    text = README.read_text()
    commands = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            for part in line.split("&&"):
                part = re.split(r"\s+#", part.strip(), maxsplit=1)[0].strip()
                if part.startswith("anholo "):
                    commands.append(part)
    return commands

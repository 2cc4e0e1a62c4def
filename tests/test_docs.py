"""The documentation builds without warnings and its examples run.

Oracle: Sphinx itself.  The HTML build runs with -W (every warning is an
error), and the doctest builder runs the ``.. doctest::`` blocks of the pages
in docs/, whose expected outputs were obtained by running the code.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _sphinx(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    try:
        import sphinx  # noqa: F401
    except ImportError:
        pytest.skip("Sphinx is not installed (pip install -e '.[docs]')")
    return subprocess.run(
        [sys.executable, "-m", "sphinx", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def test_html_build_has_no_warnings(tmp_path):
    result = _sphinx("-W", "--keep-going", "-b", "html", str(DOCS), str(tmp_path / "html"), cwd=DOCS.parent)
    assert result.returncode == 0, (
        f"sphinx -W -b html failed (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
    )


def test_doctests_in_pages_pass(tmp_path):
    result = _sphinx("-b", "doctest", str(DOCS), str(tmp_path / "doctest"), cwd=DOCS.parent)
    assert result.returncode == 0, (
        f"sphinx -b doctest failed (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
    )
    ran = re.search(r"^\s*(\d+) tests?\s*$", result.stdout, re.MULTILINE)
    assert ran and int(ran.group(1)) > 0, f"no doctest was run:\n{result.stdout}"

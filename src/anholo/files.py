"""Output files that are never half-written and never overwrite an input.

Every table and figure anholo writes goes through :func:`atomic_output`: the data are written to a
temporary file in the same directory and renamed over the target only when complete
(``os.replace`` is atomic on POSIX and Windows), so an interrupted write leaves the previous
file intact and no truncated file that looks complete.  :func:`check_output_path` refuses, before
any computation, an output path that is one of the command's inputs (``--csv mine.toml`` would
overwrite the system file), a directory, a missing directory, or a suffix the writer cannot
produce.

This module is in the lowest layer (it knows only :mod:`anholo.errors`), so that the numerics
and the command line share it.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable

from anholo.errors import AnholoError

__all__ = ["atomic_output", "check_output_path", "partial_path"]


def partial_path(path) -> Path:
    """Where a table that is still being written lives: ``OUT.csv`` → ``OUT.csv.partial``."""
    path = Path(path)
    return path.with_name(path.name + ".partial")


@contextmanager
def atomic_output(path, mode: str = "w", error: type = AnholoError, **open_args):
    """``open(path, mode)`` written to a temporary file next to ``path`` and renamed to ``path`` when the
    block ends normally; on an exception (an interrupt included) the temporary file is removed and
    ``path`` is untouched.  An ``OSError`` becomes ``error`` with a one-line message.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with atomic_output(os.path.join(d, "t.csv")) as fh:
    ...     _ = fh.write("a,b\\n")
    >>> open(os.path.join(d, "t.csv")).read()
    'a,b\\n'
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
    except OSError as exc:
        raise error(f"cannot write {path}: {exc.strerror or exc}.") from None
    try:
        with os.fdopen(fd, mode, **open_args) as fh:
            yield fh
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise error(f"cannot write {path}: {exc.strerror or exc}.") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def check_output_path(path, option: str, *, inputs: Iterable = (), suffixes: Iterable | None = None,
                      error: type = AnholoError) -> Path:
    """Refuse, before any work, an output ``path`` given with ``option`` that cannot be written as asked:
    a suffix not in ``suffixes`` (e.g. ``(".png", ".pdf", ".svg")``), a directory, a file in a directory
    that does not exist, or one of the command's ``inputs`` (the system file).  Returns the path."""
    text = str(path)
    if not text.strip():
        raise error(f"{option}: give a file name.")
    path = Path(text)
    if suffixes is not None:
        allowed = tuple(s.lower() for s in suffixes)
        if path.suffix.lower() not in allowed:
            raise error(f"{option} {text}: use a file name ending in {', '.join(allowed[:-1])}"
                        f"{' or ' if len(allowed) > 1 else ''}{allowed[-1]}.")
    if path.is_dir():
        raise error(f"{option} {text} is a directory; give a file name.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise error(f"{option} {text}: the directory {parent} does not exist.")
    for source in inputs:
        if source is None:
            continue
        source = Path(source)
        try:
            same = path.exists() and source.exists() and os.path.samefile(path, source)
        except OSError:
            same = False
        if same or path.resolve() == source.resolve():
            raise error(f"{option} {text} is the input file {source}; writing there would destroy it - give "
                        "another file name.")
    return path


class TableWriter:
    """A table whose rows are kept on disk as they come: each row is appended to ``OUT.partial`` and
    flushed (a crash, a kill or a full disk loses at most the row being written), and :meth:`finish`
    writes the whole table in its final order to ``OUT`` (atomically) and removes the partial file.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> w = TableWriter(path, ["a", "b"])
    >>> w.add(["2", "x"]); w.add(["1", "y"])
    >>> open(path + ".partial").read().splitlines()
    ['a,b', '2,x', '1,y']
    >>> _ = w.finish(key=lambda row: row[0]); open(path).read().splitlines(), os.path.exists(path + ".partial")
    (['a,b', '1,y', '2,x'], False)
    """

    def __init__(self, path, columns, error: type = AnholoError, rows=()):
        import csv

        self.path, self.partial, self.error = Path(path), partial_path(path), error
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        try:
            self._fh = open(self.partial, "w", newline="")  # noqa: SIM115 - closed by finish()
        except OSError as exc:
            raise error(f"cannot write {self.partial}: {exc.strerror or exc}.") from None
        self._writer = csv.writer(self._fh)
        self._writer.writerow(self.columns)
        for row in self.rows:
            self._writer.writerow(row)
        self._fh.flush()

    def add(self, cells) -> None:
        """Append one row (a list of cells) and flush it to the partial file."""
        self.rows.append(list(cells))
        self._writer.writerow(list(cells))
        self._fh.flush()

    def finish(self, key=None) -> int:
        """Write the table (rows sorted by ``key`` if given) to its path, remove the partial file, and
        return the number of rows written."""
        import csv

        self._fh.close()
        rows = sorted(self.rows, key=key) if key is not None else self.rows
        with atomic_output(self.path, newline="", error=self.error) as fh:
            writer = csv.writer(fh)
            writer.writerow(self.columns)
            writer.writerows(rows)
        _remove(self.partial)
        return len(rows)

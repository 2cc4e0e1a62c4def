"""``anholo cache``: where the generated code is kept, how much of it, and clearing it.

The code cache (``$ANHOLO_CACHE``, else ``~/.cache/anholo/codegen``) holds the compiled C libraries of the
fields (:mod:`anholo.algebra.codegen`), the formed programs of large systems' fields
(:mod:`anholo.dynamics.maggi_field`) and their generated sources (:mod:`anholo.numerics.maggi_compile`),
each under a digest of what it was made from: an entry is never stale, but entries of older versions of
anholo or of edited systems accumulate.  Only files of those kinds are counted or removed (the directory
may be shared: ``ANHOLO_CACHE`` can name any directory)."""

from __future__ import annotations

from pathlib import Path

from .common import _wrapped_text

#: (kind, module holding its glob patterns as ``CACHE_FILES``)
_KINDS = (("compiled libraries", "anholo.algebra.codegen"), ("field programs", "anholo.dynamics.maggi_field"),
          ("generated sources", "anholo.numerics.maggi_compile"))


def _add_cache_parser(sub) -> None:
    c = sub.add_parser("cache", help="show or clear the cache of generated code",
                       description="Show the directory of the generated code (compiled libraries, formed programs "
                       "and generated sources of large systems), the number and size of its files; with --clear, "
                       "remove them (they are made again when needed).")
    c.add_argument("--clear", action="store_true", help="remove the cached files (only anholo's own)")


def cache_files(directory: Path) -> dict:
    """``{kind: [paths]}`` of anholo's files in ``directory``."""
    import importlib

    out = {}
    for kind, module in _KINDS:
        patterns = importlib.import_module(module).CACHE_FILES
        out[kind] = sorted({p for pattern in patterns for p in directory.glob(pattern) if p.is_file()})
    return out


def _size(paths) -> int:
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def _megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _cmd_cache(args, out) -> int:
    from ..algebra.codegen import cache_directory

    directory = cache_directory(required=False)
    if directory is None:
        print("code cache: no writable directory (set ANHOLO_CACHE to one); nothing is cached", file=out)
        return 0
    files = cache_files(directory)
    every = [p for paths in files.values() for p in paths]
    if args.clear:
        removed, freed, failed = 0, 0, 0
        for p in every:
            try:
                size = p.stat().st_size
                p.unlink()
                removed, freed = removed + 1, freed + size
            except OSError:
                failed += 1
        tail = f"; {failed} could not be removed" if failed else ""
        print(_wrapped_text(f"code cache {directory}: removed {removed} files ({_megabytes(freed)}){tail}"), file=out)
        return 0
    parts = ", ".join(f"{kind} {len(paths)} ({_megabytes(_size(paths))})" for kind, paths in files.items())
    print(_wrapped_text(f"code cache {directory}: {len(every)} files, {_megabytes(_size(every))}; {parts}"), file=out)
    return 0

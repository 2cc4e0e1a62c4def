"""Shared helpers of the numerics tests (no assertions here)."""

import functools

from anholo.examples import example_path
from anholo.io.systemfile import parse_system
from anholo.numerics import compile_system, from_system
from anholo.system import System


@functools.lru_cache(maxsize=None)
def compiled(name: str, field: str, assignments: tuple = (), signs: tuple = ()):
    """Compiled field of a bundled example (cached across the numerics tests); ``signs`` adds a ``[signs]``
    table, e.g. ``(("a", "nonnegative"),)`` before ``a = 0`` is assigned (parameters are positive)."""
    if not signs:
        return compile_system(from_system(System.load(name, dict(assignments)), field))
    table = "\n[signs]\n" + "".join(f'{k} = "{v}"\n' for k, v in signs)
    spec = parse_system(example_path(name).read_text() + table, source=name).substitute(dict(assignments))
    return compile_system(from_system(System.from_spec(spec), field))

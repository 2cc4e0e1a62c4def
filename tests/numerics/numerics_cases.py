"""Shared helpers of the numerics tests (no assertions here)."""

import functools

from anholo.numerics import compile_system, from_system
from anholo.system import System


@functools.lru_cache(maxsize=None)
def compiled(name: str, field: str, assignments: tuple = ()):
    """Compiled field of a bundled example (cached across the numerics tests)."""
    return compile_system(from_system(System.load(name, dict(assignments)), field))

"""Bundled example systems.

Each example is a system file (see :mod:`anholo.io.systemfile`) shipped with
the package; its name is the file stem, e.g. ``"rigid_body"`` for
``rigid_body.toml``.

>>> from anholo.examples import list_examples, load_example
>>> [name for name, title in list_examples()]  # doctest: +NORMALIZE_WHITESPACE
['nonholonomic_particle', 'polar_particle', 'rigid_body', 'spherical_pendulum']
>>> load_example("rigid_body").coordinates
(phi, theta, psi)
"""

from __future__ import annotations

import os
import tomllib
from importlib import resources
from importlib.resources.abc import Traversable

from anholo.errors import UnknownExampleError
from anholo.io.systemfile import SystemSpec, load_system_file, parse_system

__all__ = ["list_examples", "example_names", "example_path", "load_example", "resolve_system"]

_SUFFIX = ".toml"


def _files() -> list[Traversable]:
    root = resources.files(__name__)
    return sorted(
        (f for f in root.iterdir() if f.is_file() and f.name.endswith(_SUFFIX)),
        key=lambda f: f.name,
    )


def example_names() -> list[str]:
    """The names of the bundled examples, sorted.

    Examples
    --------
    >>> "rigid_body" in example_names()
    True
    """
    return [f.name[: -len(_SUFFIX)] for f in _files()]


def list_examples() -> list[tuple[str, str]]:
    """The bundled examples as ``(name, title)`` pairs, sorted by name.

    The title is the file's ``name`` field.

    Returns
    -------
    list of (str, str)

    Examples
    --------
    >>> dict(list_examples())["spherical_pendulum"]
    'Spherical pendulum'
    """
    out = []
    for f in _files():
        try:
            title = tomllib.loads(f.read_text(encoding="utf-8")).get("name", "")
        except tomllib.TOMLDecodeError:  # pragma: no cover - bundled files are valid
            title = "(malformed file)"
        out.append((f.name[: -len(_SUFFIX)], str(title)))
    return out


def _unknown(name: str, *, looked_for_file: bool) -> UnknownExampleError:
    names = ", ".join(example_names()) or "(none)"
    what = (
        f"{name!r} is neither an existing file nor a bundled example"
        if looked_for_file
        else f"{name!r} is not a bundled example"
    )
    return UnknownExampleError(
        f"{what}. Bundled examples: {names}. Give the path of a system file or one of these names."
    )


def example_path(name: str) -> Traversable:
    """The location of a bundled example file.

    Parameters
    ----------
    name : str
        An example name (file stem), e.g. ``"rigid_body"``.

    Returns
    -------
    importlib.resources.abc.Traversable
        A path-like object (a :class:`pathlib.Path` for an ordinary
        installation) with ``read_text``/``open``.

    Raises
    ------
    anholo.errors.UnknownExampleError
        No example has that name; the message lists the bundled names.

    Examples
    --------
    >>> example_path("polar_particle").name
    'polar_particle.toml'
    """
    for f in _files():
        if f.name == name + _SUFFIX:
            return f
    raise _unknown(name, looked_for_file=False)


def load_example(name: str) -> SystemSpec:
    """Load a bundled example.

    Parameters
    ----------
    name : str
        An example name (file stem), e.g. ``"nonholonomic_particle"``.

    Returns
    -------
    SystemSpec
        Its :attr:`~anholo.io.SystemSpec.source` is the example's file name.

    Raises
    ------
    anholo.errors.UnknownExampleError
        No example has that name; the message lists the bundled names.

    Examples
    --------
    >>> load_example("nonholonomic_particle").constraints
    (-x_dot*y + z_dot,)
    """
    path = example_path(name)
    return parse_system(path.read_text(encoding="utf-8"), source=str(path))


def resolve_system(name_or_path: str | os.PathLike[str]) -> SystemSpec:
    """Load a system given either a file path or a bundled example name.

    An existing file is loaded first; otherwise the argument is looked up
    among the bundled examples (a trailing ``.toml`` is ignored, so
    ``rigid_body.toml`` finds the example when no such file exists).

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A path to a system file, or an example name.

    Returns
    -------
    SystemSpec

    Raises
    ------
    anholo.errors.UnknownExampleError
        Neither an existing file nor a bundled example; the message lists
        the bundled names.
    anholo.errors.SystemFileError
        The file exists but is not a valid system file.

    Examples
    --------
    >>> resolve_system("spherical_pendulum").name
    'Spherical pendulum'
    """
    text = os.fspath(name_or_path)
    if os.path.isfile(text):
        return load_system_file(text)
    names = example_names()
    stem = text[: -len(_SUFFIX)] if text.endswith(_SUFFIX) else text
    if stem in names:
        return load_example(stem)
    raise _unknown(text, looked_for_file=True)

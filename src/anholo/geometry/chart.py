"""Coordinates on the configuration manifold Q (docs/theory.rst, Frames on Q).

A :class:`Chart` fixes the coordinate symbols ``q^A``, the symbols ``u^A`` of
the natural velocities (``q_dot``) and the parameters of a problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import sympy as sp

from ..errors import ArgumentError, DimensionError, printable
from .vector_field import VectorField

__all__ = ["Chart", "velocity_symbol"]


def velocity_symbol(q: sp.Symbol) -> sp.Symbol:
    """The natural velocity symbol of coordinate ``q``: a real symbol named ``q_dot``."""
    return sp.Symbol(f"{q.name}_dot", real=True)


def _as_symbols(items, what: str) -> tuple[sp.Symbol, ...]:
    if isinstance(items, str):
        items = items.replace(",", " ").split()
    elif isinstance(items, sp.Symbol):
        items = (items,)
    if items is None or isinstance(items, (bytes, dict, sp.Basic)) or not hasattr(items, "__iter__"):
        raise ArgumentError(f"{what}: expected a list of names or sympy Symbols (or one string \"x y\"), got "
                            f"{type(items).__name__} {printable(repr(items))[:60]}.")
    out = []
    for item in items:
        if isinstance(item, str):
            if not item.isidentifier():
                raise ArgumentError(f"{what}: {printable(repr(item))[:60]} is not a name; use letters, digits and "
                                    "underscores, starting with a letter.")
            item = sp.Symbol(item, real=True)
        if not isinstance(item, sp.Symbol):
            raise ArgumentError(f"{what}: expected sympy Symbols or names, got {printable(repr(item))[:60]} "
                                f"({type(item).__name__}).")
        out.append(item)
    if len(set(out)) != len(out):
        raise DimensionError(f"{what}: names must be distinct, got {[s.name for s in out]}.")
    return tuple(out)


@dataclass(frozen=True)
class Chart:
    """Coordinates ``q^1..q^n`` on Q, their velocities ``u^A`` and parameters.

    Parameters
    ----------
    coordinates : sequence of Symbol or str
        The coordinate functions ``q^A`` (a string ``"x y z"`` is accepted).
    velocities : sequence of Symbol, optional
        Natural velocity symbols ``u^A``; default ``q_dot`` (real).
    parameters : sequence of Symbol, optional
        Constant parameters (masses, lengths).  Informational: they are the
        symbols that numerics will ask values for.

    Examples
    --------
    >>> Chart("x y").velocities
    (x_dot, y_dot)
    """

    coordinates: tuple
    velocities: tuple = None
    parameters: tuple = ()

    def __post_init__(self):
        q = _as_symbols(self.coordinates, "coordinates")
        if not q:
            raise DimensionError("coordinates: a chart needs at least one coordinate.")
        object.__setattr__(self, "coordinates", q)
        if self.velocities is None:
            u = tuple(velocity_symbol(s) for s in q)
        else:
            u = _as_symbols(self.velocities, "velocities")
            if len(u) != len(q):
                raise DimensionError(
                    f"velocities: {len(u)} symbols given for {len(q)} coordinates; give one per coordinate."
                )
        object.__setattr__(self, "velocities", u)
        object.__setattr__(self, "parameters", _as_symbols(self.parameters, "parameters"))
        clash = set(q) & set(u) | (set(q) | set(u)) & set(self.parameters)
        if clash:
            raise DimensionError(f"chart: symbols used twice: {sorted(s.name for s in clash)}.")

    @property
    def dim(self) -> int:
        """The dimension n of Q."""
        return len(self.coordinates)

    def index(self, q: sp.Symbol | str) -> int:
        """Position of coordinate ``q`` (a Symbol or its name)."""
        for i, s in enumerate(self.coordinates):
            if s == q or s.name == q:
                return i
        raise DimensionError(f"{q!r} is not a coordinate of this chart {self.coordinates}.")

    def coordinate_field(self, A: int | sp.Symbol | str):
        """The coordinate vector field ``∂/∂q^A``."""
        a = A if isinstance(A, int) else self.index(A)
        return VectorField(self, tuple(sp.S.One if b == a else sp.S.Zero for b in range(self.dim)))

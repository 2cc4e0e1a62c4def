"""Constraints in the language of frames: quasi-velocities by name (docs/forces.rst).

In a frame ``X_i`` with quasi-velocities ``v^i = θ^i(q̇)`` a linear constraint is most
naturally written in the ``v^i`` (the Chaplygin sleigh: ``w − a ω = 0``, w the lateral
velocity of the centre of mass and ω the turning rate).  Such constraints are rewritten in
the natural velocities by ``v^i = θ^i_A(q) q̇^A`` (:func:`natural_constraints`).

When an adapted frame ``X'`` is built from a base frame with named quasi-velocities, its
quasi-velocities are named so that every name keeps its meaning (:func:`adapted_names`):
if ``θ'^i = θ^f`` (the new quasi-velocity *is* the base one, e.g. a free velocity whose
frame vector only gained dependent components, ``X'_α = X_f + c^d_α X_d``), ``v'^i``
gets the base name of ``v^f``; every other one gets a fresh name.  (The default names
``v1 … vn`` are positional labels and stay positional.)
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from ..algebra import tidy
from ..errors import ConstraintError
from ..geometry.frame import Frame
from ..parsing import as_expression, as_sequence
from ..geometry.tangent import TangentBundle

__all__ = ["natural_constraints", "dependent_indices", "adapted_names", "uses_default_names"]


def _names(bundle: TangentBundle) -> dict:
    chart = bundle.chart
    out = {s.name: s for s in chart.coordinates + chart.velocities + chart.parameters}
    out.update({s.name: s for s in bundle.quasi_velocities})
    return out


def natural_constraints(bundle: TangentBundle, constraints: Sequence) -> list:
    """Constraint expressions (or strings) that may use the quasi-velocities of ``bundle``, written in
    the natural velocities ``q̇`` (``v^i = θ^i_A q̇^A``); others are returned unchanged."""
    v = set(bundle.quasi_velocities)
    names = _names(bundle)
    out = []
    for a, c in enumerate(as_sequence(constraints, "constraints", what="constraint expressions")):
        if isinstance(c, str) and not any(s.name in c for s in v):
            out.append(c)  # read with the chart's names (and the time) by the constraints' own reader
            continue
        c = as_expression(c, names, where=f"constraints[{a}]")
        out.append(bundle.to_natural(c) if c.free_symbols & v else c)
    return out


def uses_default_names(bundle: TangentBundle) -> bool:
    """True if the quasi-velocities are the positional defaults ``v1 … vn``."""
    return tuple(s.name for s in bundle.quasi_velocities) == tuple(f"v{i + 1}" for i in range(bundle.dim))


def dependent_indices(bundle: TangentBundle, dependent=None, free=None):
    """Base indices to solve the constraints for, from quasi-velocity names (or indices, or coordinates
    for a coordinate base) given as ``dependent``, or as the complement of the ``free`` ones."""
    v = bundle.quasi_velocities
    by_name = {s.name: i for i, s in enumerate(v)}
    coord = {s.name for s in bundle.chart.coordinates}

    def index(item, strict=False):
        if isinstance(item, int):
            return item
        name = item.name if isinstance(item, sp.Symbol) else str(item)
        if name in by_name:
            return by_name[name]
        if name in coord and not strict:
            if not bundle.frame.is_coordinate_frame:
                raise ConstraintError(
                    f"{name!r} is a coordinate, and this system's velocities are the quasi-velocities of its frame "
                    f"({', '.join(map(str, v))}): name those, or take Maggi's equations in the coordinate "
                    f"velocities (System.maggi(dependent=[{name!r}])).")
            return item  # a coordinate of a coordinate base: the frame reads it
        raise ConstraintError(f"{name!r} is not a quasi-velocity of the frame ({', '.join(map(str, v))}); "
                              "name the dependent (or free) quasi-velocities by these names.")

    if free is not None:
        if dependent is not None:
            raise ConstraintError("give either the dependent or the free quasi-velocities, not both.")
        keep = {index(f, strict=True) for f in free}
        return tuple(i for i in range(len(v)) if i not in keep)
    if dependent is None:
        return None
    return tuple(index(d) for d in dependent)


def adapted_names(base: TangentBundle, frame: Frame) -> tuple:
    """Names of the quasi-velocities of ``frame`` (adapted, built from ``base.frame``) that keep their
    meaning (module docstring).  Positional (the base names in order) for default names."""
    old = base.quasi_velocities
    if uses_default_names(base) or frame == base.frame:
        return old
    n = len(old)
    # v'^i = (θ' X_baseᵀ)_ij v^j
    P = frame.coframe * base.frame.vectors.T
    names = [None] * n
    used = set()
    for i in range(n):
        row = [tidy(P[i, j]) for j in range(n)]
        hits = [j for j, e in enumerate(row) if e != 0]
        if len(hits) == 1 and row[hits[0]] == 1 and old[hits[0]] not in used:
            names[i] = old[hits[0]]
            used.add(old[hits[0]])
    taken = {s.name for s in used} | {s.name for s in old}
    taken |= {s.name for s in base.chart.coordinates + base.chart.velocities + base.chart.parameters}
    for prefix in ("v", "nu", "qv", "vq"):
        fresh = [f"{prefix}{i + 1}" for i in range(n)]
        if not (set(fresh) & taken):
            break
    return tuple(s if s is not None else sp.Symbol(fresh[i], real=True) for i, s in enumerate(names))

"""How a verdict was decided: exactly, or numerically at random points with a tolerance.

anholo decides identities ("the residuals of Cor. 1 vanish on C", "div Γ_nh = 0", "the energy is
conserved") and ranks (the growth vector of D) in one of two ways:

* **exactly** — in a normal form (the exact kernel, :mod:`anholo.algebra.kernel`), when that is
  affordable;
* **numerically** — the expressions, kept as straight-line programs (shared subexpressions,
  :class:`~anholo.algebra.program.Program`), are evaluated at ``N`` random points of their domain.
  An identity holds if every value is at most ``tolerance`` times the size of the terms it is made
  of; a value above that at one point proves it false (up to rounding).  A rank is the number of
  singular values above ``tolerance`` times the largest (SVD).  For the analytic expressions that
  occur here a nonzero expression vanishes at a random point with probability zero (the
  Schwartz–Zippel argument, Schwartz (1980), Zippel (1979)), so a numerical "holds" is wrong only
  if the identity holds to within the tolerance without holding.

:class:`Decision` records which of the two was used; every verdict of a report carries it
(``"decided": "exact" | "numerical"`` with ``"points"`` and ``"tolerance"`` in JSON).
:class:`Sampler` draws the random points of a program's domain and evaluates it there.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

__all__ = ["Decision", "EXACT", "Sampler", "NUMERICAL_POINTS", "NUMERICAL_TOLERANCE", "DomainError"]

#: Random points at which a numerical verdict is decided by default.
NUMERICAL_POINTS = 5
#: Relative tolerance of a numerical verdict (double precision; the terms of a residual are summed
#: with rounding errors of about 1e-16 times their size, so 1e-8 leaves eight digits of margin).
NUMERICAL_TOLERANCE = 1e-8


@dataclass(frozen=True)
class Decision:
    """How a verdict was reached.

    Attributes
    ----------
    how : str
        ``"exact"`` (normal forms) or ``"numerical"`` (random points).
    points : int or None
        The number of random points (numerical only).
    tolerance : float or None
        The relative tolerance (numerical only).

    Examples
    --------
    >>> Decision.numerical(5, 1e-8).to_dict()
    {'decided': 'numerical', 'points': 5, 'tolerance': 1e-08}
    >>> EXACT.to_dict()
    {'decided': 'exact'}
    >>> print(Decision.numerical(5, 1e-8))
    decided numerically at 5 random points (relative tolerance 1e-08)
    """

    how: str = "exact"
    points: int | None = None
    tolerance: float | None = None

    @classmethod
    def numerical(cls, points: int = NUMERICAL_POINTS, tolerance: float = NUMERICAL_TOLERANCE) -> "Decision":
        return cls("numerical", int(points), float(tolerance))

    @property
    def is_exact(self) -> bool:
        return self.how == "exact"

    def to_dict(self) -> dict:
        """``{"decided": …}`` and, if numerical, ``"points"`` and ``"tolerance"`` (JSON entries of a verdict)."""
        if self.is_exact:
            return {"decided": "exact"}
        return {"decided": "numerical", "points": self.points, "tolerance": self.tolerance}

    def __str__(self):
        if self.is_exact:
            return "decided exactly"
        return f"decided numerically at {self.points} random points (relative tolerance {self.tolerance:g})"


EXACT = Decision("exact")


class DomainError(ValueError):
    """No random point was found where every output of a program is a finite real number."""


class Sampler:
    """Random points of the domain of a straight-line program, and its values there.

    The program is compiled once (:meth:`Program.compile`); each point then costs one call.

    Parameters
    ----------
    program : Program
        Outputs as functions of ``program.args``.
    values : mapping, optional
        Fixed values for some arguments (by name): e.g. a system file's ``[values]``.  Other arguments
        are drawn uniformly from ``(0.3, 0.9)`` (the domain of square roots and logarithms of the
        catalogue's parameters and angles; a point where an output is not a finite real number — a
        square root of a negative number — is redrawn).
    seed : int
    """

    def __init__(self, program, values: Mapping | None = None, seed: int = 0, low: float = 0.3, high: float = 0.9):
        self.program = program
        self.names = [str(a) for a in program.args]
        self.values = {str(k): float(v) for k, v in (values or {}).items()}
        self.rng = random.Random(seed)
        self.low, self.high = low, high
        self._f = program.compile()

    def point(self) -> dict:
        """A random point (argument name → float), the fixed values kept."""
        return {a: self.values[a] if a in self.values else self.rng.uniform(self.low, self.high) for a in self.names}

    def at(self, point: Mapping) -> np.ndarray:
        """The outputs at ``point`` (name → number) as floats; DomainError outside the real domain."""
        try:
            out = self._f(*[float(point[a]) for a in self.names])
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            raise DomainError(str(exc)) from None
        arr = np.array([complex(x) for x in out])
        if not np.all(np.isfinite(arr)) or np.any(np.abs(arr.imag) > 1e-12 * (1 + np.abs(arr.real))):
            raise DomainError("an output is not a finite real number at this point")
        return arr.real

    def samples(self, count: int, tries: int = 20) -> list:
        """``[(point, outputs)]`` at ``count`` random points of the domain (each redrawn up to ``tries`` times)."""
        out = []
        for _ in range(count):
            for _ in range(tries):
                pt = self.point()
                try:
                    out.append((pt, self.at(pt)))
                    break
                except DomainError:
                    continue
            else:
                raise DomainError(f"no point of the real domain of the expressions found in {tries} random draws "
                                  f"of ({self.low}, {self.high}); give parameter values ([values]) in their domain")
        return out


def vanishes_at(values: Sequence, scales: Sequence, tolerance: float = NUMERICAL_TOLERANCE) -> bool:
    """True if every ``|value|`` is at most ``tolerance * max(1, scale)`` (the scale: the size of the terms)."""
    return all(abs(v) <= tolerance * max(1.0, abs(s)) for v, s in zip(values, scales)) and all(
        math.isfinite(v) for v in values)


def numerical_rank(matrix, tolerance: float = 1e-9) -> int:
    """The number of singular values above ``tolerance`` times the largest (0 for a zero matrix)."""
    a = np.asarray(matrix, dtype=float)
    if a.size == 0:
        return 0
    s = np.linalg.svd(a, compute_uv=False)
    return int(np.sum(s > tolerance * s[0])) if s[0] > 0 else 0


__all__ += ["vanishes_at", "numerical_rank"]

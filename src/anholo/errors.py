"""Exceptions raised by anholo.

Every user error raises a subclass of :class:`AnholoError` whose message says
what is wrong and how to fix it.  Internal failures are not wrapped: a raw
traceback from anholo means a bug in anholo.
"""

from __future__ import annotations

__all__ = [
    "AnholoError",
    "SingularFrameError",
    "DimensionError",
    "IrregularLagrangianError",
    "ConstraintError",
    "NonlinearConstraintError",
    "DependentConstraintsError",
    "FrameNotAdaptedError",
    "SystemFileError",
    "UnknownSymbolError",
    "UnknownExampleError",
]


class AnholoError(Exception):
    """Base class of all errors that anholo raises for bad input."""


class SingularFrameError(AnholoError):
    """The proposed frame (or coframe) is not pointwise independent."""


class DimensionError(AnholoError):
    """Shapes do not match: a frame that is not square, a vector with the
    wrong number of components, an index out of range."""


class IrregularLagrangianError(AnholoError):
    """The Lagrangian is not regular where regularity is required
    (its Hessian in the velocities, or a block of it, is singular)."""


class ConstraintError(AnholoError):
    """Constraints that cannot be used as given (base class of the specific
    constraint errors below; also raised for a constraint free of velocities)."""


class NonlinearConstraintError(ConstraintError):
    """A constraint is not linear (or affine) in the velocities where
    linearity is required."""


class DependentConstraintsError(ConstraintError):
    """The constraints are not independent: their one-forms have lower rank
    than their number."""


class FrameNotAdaptedError(ConstraintError):
    """A frame declared adapted to the constraints is not: its first m vectors
    do not span the constraint distribution D."""


class SystemFileError(AnholoError):
    """A system file is malformed: bad TOML, a missing or ill-typed field,
    or an expression that cannot be parsed."""


class UnknownSymbolError(SystemFileError):
    """An expression uses a name that is neither declared in the system
    file nor a standard function."""


class UnknownExampleError(AnholoError):
    """A name is neither an existing file nor a bundled example."""

"""Exceptions raised by anholo.

Every user error raises a subclass of :class:`AnholoError` whose message says
what is wrong and how to fix it.  Internal failures are not wrapped: a raw
traceback from anholo means a bug in anholo.
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "printable",
    "AnholoError",
    "ArgumentError",
    "SingularFrameError",
    "DimensionError",
    "IrregularLagrangianError",
    "ConstraintError",
    "NonlinearConstraintError",
    "DependentConstraintsError",
    "FrameNotAdaptedError",
    "UnsolvableConstraintsError",
    "SystemFileError",
    "UnknownSymbolError",
    "UnknownExampleError",
    "MechanicsModelError",
    "SectionError",
    "SymmetryError",
    "NonFreeActionError",
    "StructureConstantsError",
    "NonInvariantLagrangianError",
    "NonInvariantDistributionError",
    "NotPrincipalConnectionError",
    "ReductionError",
    "SimulationError",
    "MissingParameterError",
    "InitialStateError",
    "IntegrationError",
    "PlotError",
    "ReportError",
    "InputError",
    "HolonomicConstraintError",
    "ExpressionBudgetError",
    "LimitError",
    "NonFiniteExpressionError",
    "AnholoWarning",
]


def printable(text) -> str:
    r"""``text`` safe for a terminal: every control or invisible character (Unicode categories C*, Zl, Zp:
    ESC, BEL, CR, zero-width spaces, ...) written as its Python escape (``\x1b``, ``\u200b``), so that an
    echoed name or expression cannot move the cursor, set the window title or clear the screen.
    Tabs and line breaks are escaped too (callers that want lines split them first).

    >>> printable("ok\x1b]0;title\x07")
    'ok\\x1b]0;title\\x07'
    """
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        if category[0] == "C" or category in ("Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


class AnholoError(Exception):
    """Base class of all errors that anholo raises for bad input."""


class ArgumentError(AnholoError, TypeError):
    """A Python API call with an argument of the wrong kind: a string where a list is expected, a
    ``Chart`` where a ``Frame`` is, ``None``, a non-finite or complex number, an equation where an
    expression is; the message names the argument and what to pass instead.  (Also a ``TypeError``,
    which such a call used to raise.)"""


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


class UnsolvableConstraintsError(ConstraintError):
    """The constraints cannot be solved for the chosen dependent velocities
    (their Jacobian with respect to them is singular on the constraint set)."""


class SystemFileError(AnholoError):
    """A system file is malformed: bad TOML, a missing or ill-typed field,
    or an expression that cannot be parsed."""


class UnknownSymbolError(SystemFileError):
    """An expression uses a name that is neither declared in the system
    file nor a standard function."""


class UnknownExampleError(AnholoError):
    """A name is neither an existing file nor a bundled example."""


class MechanicsModelError(AnholoError):
    """A sympy.physics.mechanics model that cannot be turned into an anholo system as given
    (a speed without kinematic equation, an angular velocity that is not the derivative of its
    frame's orientation, a time-dependent model, constraints that leave the wrong number of
    degrees of freedom)."""


class SimulationError(AnholoError):
    """A field cannot be integrated as asked (base class of the numerics errors
    below; also raised for a field with undefined functions or an unknown option)."""


class MissingParameterError(SimulationError):
    """A parameter has no numerical value: give one (``parameters=`` or ``--set NAME=VALUE``)."""


class InitialStateError(SimulationError):
    """Initial data of the wrong length, or natural velocities that violate the constraints."""


class IntegrationError(SimulationError):
    """The integrator failed (a singular frame or Hessian along the motion, a blow-up)."""


class SymmetryError(AnholoError):
    """A declared symmetry (a Lie group action given by its fundamental vector
    fields) is inconsistent in itself or with the system (base class of the
    Chaplygin errors below)."""


class NonFreeActionError(SymmetryError):
    """The generators of a group action are not pointwise independent: the
    action is not free (or the generators are redundant)."""


class StructureConstantsError(SymmetryError):
    """The brackets of the generators are not constant combinations of them,
    or do not match the declared structure constants and left/right convention."""


class NonInvariantLagrangianError(SymmetryError):
    """The Lagrangian is not invariant under the declared group action
    (a complete lift of a generator does not annihilate it)."""


class NonInvariantDistributionError(SymmetryError):
    """The constraint distribution D is not invariant under the declared
    group action."""


class NotPrincipalConnectionError(SymmetryError):
    """D is not the horizontal distribution of a principal connection:
    D ⊕ (tangents to the orbits) ≠ TQ."""


class SectionError(AnholoError):
    """A section of the vakonomic problem (multipliers on C) or a section
    ansatz that cannot be used: wrong number of components, dependence on
    the constrained velocities, or residuals that are not polynomial."""


class PlotError(AnholoError):
    """A figure cannot be made or saved (matplotlib missing, an unknown file type)."""


class ReportError(AnholoError):
    """A report cannot be made as asked (an unknown section name), or a block of it does not
    apply to the system (e.g. consistency for affine constraints)."""


class InputError(AnholoError):
    """Forces or control inputs that cannot be used as given: a force list of the wrong length, an
    input that is also a parameter, dynamics that are not affine in the inputs, a missing input callable."""


class HolonomicConstraintError(ConstraintError):
    """A holonomic constraint ``f(q, t) = 0`` that cannot be used: it depends on velocities, is
    dependent on the others, or its surface cannot be reached from the given initial data."""


class ReductionError(SymmetryError):
    """A Chaplygin system cannot be reduced as asked: no shape coordinates, a quantity that does not
    descend to the shape space, or a reducing-multiplier test outside its hypotheses."""


class ExpressionBudgetError(AnholoError):
    """An expression asked for explicitly (e.g. accelerations solved out of ``M ẋ = F``) would exceed
    its size budget: use the implicit form, the numerical solution, or raise the budget."""


class LimitError(SystemFileError):
    """An input exceeds a resource limit (digits of a number, size or nesting of an expression,
    number of coordinates, ...; see :mod:`anholo.limits`); the message names the bound and how
    to raise it."""


class NonFiniteExpressionError(AnholoError):
    """A derived expression holds a literal ``nan``, ``zoo`` or ``oo``: a division by a symbolic zero (a
    square root, or a denominator, of the Lagrangian, a constraint or a force that vanishes identically
    where it is used, e.g. on the constraint set); the message names the expression and where it comes from."""


class UndefinedFunctionError(AnholoError):
    """An expression holds an undefined function (``A(r2)``) where only explicit expressions can be
    computed with (Maggi's route evaluates its programs numerically)."""


class AnholoWarning(UserWarning):
    """Something in the input is accepted but probably not what was meant (e.g. a ``[symmetry]``
    table that no analysis uses); the command line prints it as ``anholo: warning: …``."""

"""anholo — nonholonomic mechanics in the language of anholonomic frames.

The mathematics and its sign conventions are documented in the docs' theory
page (docs/theory.rst); every public function cites the formula it implements.
"""

import time as _time

_STARTED = _time.monotonic()  # a command's time budget counts from here (anholo.cli)

from .errors import (
    AnholoError,
    ConstraintError,
    DependentConstraintsError,
    DimensionError,
    FrameNotAdaptedError,
    IrregularLagrangianError,
    MechanicsModelError,
    NonlinearConstraintError,
    SingularFrameError,
    SystemFileError,
    UnknownExampleError,
    UnknownSymbolError,
    UnsolvableConstraintsError,
)
from .geometry import (
    Chart,
    Form,
    Frame,
    SecondOrderField,
    TangentBundle,
    TangentField,
    VectorField,
    exterior_derivative,
    interior_product,
    velocity_symbol,
    wedge,
)
from .algebra.implicit import ImplicitForm
from .constraints import KinematicConstraints, LinearConstraints
from .dynamics import (
    CartanSolution,
    DynamicsComparison,
    Forces,
    HamelEquations,
    Lagrangian,
    NonholonomicField,
    NonholonomicSystem,
    SectionField,
    VakonomicField,
    VakonomicSystem,
    compare_dynamics,
    solve_cartan_equation,
)

__version__ = "0.1.0"

# What a user calls first, importable from the top (``from anholo import System, simulate``), loaded on
# first use: the numerics (scipy) and the system files are not imported by ``import anholo``.
_LAZY = {
    "System": ("anholo.system", "System"),
    "simulate": ("anholo.numerics", "simulate"),
    "compile_system": ("anholo.numerics", "compile_system"),
    "Trajectory": ("anholo.numerics", "Trajectory"),
    "sweep": ("anholo.numerics.sweep", "sweep"),
    "linearize": ("anholo.analysis.linearization", "linearize"),
    "MaggiSystem": ("anholo.dynamics.maggi", "MaggiSystem"),
    "init_printing": ("anholo.algebra.printing", "init_printing"),
    "MechanicsModel": ("anholo.io.mechanics", "MechanicsModel"),
    "from_mechanics": ("anholo.io.mechanics", "from_mechanics"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'anholo' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AnholoError",
    "ConstraintError",
    "DependentConstraintsError",
    "FrameNotAdaptedError",
    "DimensionError",
    "IrregularLagrangianError",
    "MechanicsModelError",
    "NonlinearConstraintError",
    "SingularFrameError",
    "SystemFileError",
    "UnknownExampleError",
    "UnknownSymbolError",
    "UnsolvableConstraintsError",
    "Chart",
    "VectorField",
    "Frame",
    "TangentBundle",
    "TangentField",
    "SecondOrderField",
    "Form",
    "wedge",
    "exterior_derivative",
    "interior_product",
    "velocity_symbol",
    "Lagrangian",
    "HamelEquations",
    "CartanSolution",
    "solve_cartan_equation",
    "LinearConstraints",
    "KinematicConstraints",
    "NonholonomicSystem",
    "NonholonomicField",
    "DynamicsComparison",
    "compare_dynamics",
    "VakonomicSystem",
    "VakonomicField",
    "SectionField",
    "Forces",
    "MechanicsModel",
    "from_mechanics",
    "ImplicitForm",
    *_LAZY,
]

"""anholo — nonholonomic mechanics in the language of anholonomic frames.

The mathematics and its sign conventions are documented in the docs' theory
page (docs/theory.rst); every public function cites the formula it implements.
"""

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

from .io.mechanics import MechanicsModel, from_mechanics

__version__ = "0.1.0"

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
]

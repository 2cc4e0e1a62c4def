"""The fields of Lagrangian mechanics in frames: Euler–Lagrange (Hamel), Cartan, nonholonomic
(Lagrange–d'Alembert), vakonomic and Chetaev (docs/theory.rst)."""

from .cartan import CartanSolution, solve_cartan_equation
from .forces import Forces, control_affine
from .lagrangian import HamelEquations, Lagrangian
from .nonholonomic import DynamicsComparison, NonholonomicField, NonholonomicSystem, compare_dynamics
from .vakonomic import SectionField, VakonomicField, VakonomicSystem

__all__ = [
    "Lagrangian",
    "HamelEquations",
    "CartanSolution",
    "solve_cartan_equation",
    "NonholonomicSystem",
    "NonholonomicField",
    "DynamicsComparison",
    "compare_dynamics",
    "VakonomicSystem",
    "VakonomicField",
    "SectionField",
    "Forces",
    "control_affine",
]

"""Lagrangian dynamics in frames (THEORY §3 onwards)."""

from .cartan import CartanSolution, solve_cartan_equation
from .lagrangian import HamelEquations, Lagrangian

__all__ = ["Lagrangian", "HamelEquations", "CartanSolution", "solve_cartan_equation"]

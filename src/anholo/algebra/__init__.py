"""The expression engine: exact kernel, cheap normal forms, zero tests, exact linear algebra.

Layered bottom-up: :mod:`~anholo.algebra.expressions` (DAG utilities) and
:mod:`~anholo.algebra.numeric` (random-point zero tests) → :mod:`~anholo.algebra.kernel`
(the differential field of rational functions) → :mod:`~anholo.algebra.simplify`
(``tidy``, ``vanishes``) → :mod:`~anholo.algebra.linear` (determinants, inverses,
ranks, solves) → :mod:`~anholo.algebra.coefficients`, :mod:`~anholo.algebra.elimination`
and :mod:`~anholo.algebra.conditions` (the exact coefficient extraction, ansatz
elimination and parameter conditions shared by the searches of the analyses).
"""

from .expressions import dag_size, free_symbols, size_exceeds, xreplace_dag
from .linear import LinearSolution, adjugate, determinant, generic_rank, invert, solve_generic, solve_square
from .numeric import concrete_functions, numeric_value, numerically_zero, random_point
from .simplify import reduce_if_cheap, tidy, vanishes

__all__ = [
    "tidy",
    "vanishes",
    "size_exceeds",
    "determinant",
    "adjugate",
    "reduce_if_cheap",
    "invert",
    "free_symbols",
    "xreplace_dag",
    "random_point",
    "numeric_value",
    "concrete_functions",
    "numerically_zero",
    "generic_rank",
    "LinearSolution",
    "solve_generic",
    "solve_square",
]

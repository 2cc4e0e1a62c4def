"""What is computed from the fields: consistency of the nonholonomic and vakonomic dynamics
(sections, verdicts, the variational Lagrangian, the search of sections), Chaplygin systems,
the comparison of the methods for nonlinear constraints, Chetaev diagnostics, consistency
along one motion, invariant measures and first integrals (docs/consistency.rst, docs/chaplygin.rst,
docs/chetaev.rst, docs/invariants.rst)."""

from .chaplygin import ChaplyginSystem, ChaplyginVerdict, MomentumSection, MomentumSectionSearch
from .first_integrals import FirstIntegrals, momentum_equations
from .invariant_measure import InvariantDensity, divergence, is_invariant_density, search_invariant_density
from .chaplygin_symmetry import (
    EquivarianceCheck,
    FieldInvarianceCheck,
    VakonomicMomentumCheck,
    field_invariance,
    momentum_equivariance,
    multiplier_equivariance,
    vakonomic_momenta,
)
from .consistency import (
    ConsistencyReport,
    ConsistencyVerdict,
    consistency_report,
    strong_consistency,
    weak_consistency,
)
from .section_search import Ansatz, SectionFamily, SectionSearch, polynomial_ansatz, search_sections
from .sections import Section, zero_section
from .trajectory_consistency import SingleConstraintConsistency, TrajectoryConsistency, TrajectoryVerdict
from .variational import ConverseCheck, VariationalCheck, converse_check, variational_check, variational_lagrangian

__all__ = [
    "Section",
    "zero_section",
    "ConsistencyVerdict",
    "weak_consistency",
    "strong_consistency",
    "ConsistencyReport",
    "consistency_report",
    "variational_lagrangian",
    "VariationalCheck",
    "variational_check",
    "ConverseCheck",
    "converse_check",
    "Ansatz",
    "polynomial_ansatz",
    "SectionFamily",
    "SectionSearch",
    "search_sections",
    "ChaplyginSystem",
    "ChaplyginVerdict",
    "MomentumSection",
    "MomentumSectionSearch",
    "SingleConstraintConsistency",
    "divergence",
    "is_invariant_density",
    "InvariantDensity",
    "search_invariant_density",
    "FirstIntegrals",
    "momentum_equations",
    "TrajectoryConsistency",
    "TrajectoryVerdict",
    "EquivarianceCheck",
    "FieldInvarianceCheck",
    "VakonomicMomentumCheck",
    "momentum_equivariance",
    "multiplier_equivariance",
    "field_invariance",
    "vakonomic_momenta",
]

"""A mechanical system assembled from a system file: chart, frame, Hamel chart, Lagrangian.

Data flows one way: :class:`~anholo.io.systemfile.SystemSpec`
(pure data) → :class:`System` (geometry and dynamics objects) → results →
report.  Constraints are kept for the nonholonomic analysis.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import sympy as sp

from .analysis.chaplygin import ChaplyginSystem
from .constraints.kinematic import KinematicConstraints
from .constraints.linear import stationary_linear_constraints
from .dynamics.chetaev import ChetaevSystem
from .dynamics.lagrangian import Lagrangian
from .errors import AnholoError, AnholoWarning
from .dynamics.nonholonomic import NonholonomicSystem
from .examples import resolve_system
from .geometry.chart import Chart
from .geometry.frame import Frame
from .geometry.lie_group import LieGroupAction
from .geometry.tangent import TangentBundle

__all__ = ["System"]

_QUASI_PREFIXES = ("v", "w", "nu", "qv")


@dataclass(frozen=True, eq=False)
class System:
    """A Lagrangian system in a frame.

    Attributes
    ----------
    name : str
    chart : Chart
    frame : Frame
        The frame of the file, or the coordinate frame if the file gives none.
    bundle : TangentBundle
        Hamel chart; quasi-velocities ``v1..vn`` (another prefix if a coordinate
        or parameter already uses those names).
    lagrangian : Lagrangian
    constraints : tuple
        Constraint expressions in (q, q_dot) as written, each = 0.
    values : dict
        Default numerical values of parameters.
    """

    name: str
    chart: Chart
    frame: Frame
    bundle: TangentBundle
    lagrangian: Lagrangian
    constraints: tuple = ()
    values: dict = None
    time: sp.Symbol = None
    symmetry: dict = None

    @classmethod
    def from_spec(cls, spec) -> "System":
        """Build the geometry and dynamics objects of a :class:`SystemSpec`."""
        chart = Chart(spec.coordinates, velocities=spec.velocities, parameters=spec.parameters)
        frame = Frame(chart, spec.frame) if spec.frame is not None else Frame.coordinate(chart)
        taken = {s.name for s in chart.coordinates + chart.velocities + chart.parameters}
        taken |= {f.__name__ for f in getattr(spec, "functions", ())}
        if getattr(spec, "time", None) is not None:
            taken.add(spec.time.name)
        n = chart.dim
        # The first prefix whose names v1..vn (and their rates v1_dot..) are free; names are compared as
        # names (a parameter v1 and a quasi-velocity v1 would print alike whatever their assumptions).
        prefixes = itertools.chain(_QUASI_PREFIXES, (f"qv{k}_" for k in itertools.count(2)))
        for prefix in prefixes:
            names = [f"{prefix}{i + 1}" for i in range(n)]
            if not taken & (set(names) | {f"{x}_dot" for x in names}):
                break
        bundle = TangentBundle(frame, quasi_velocities=names)
        symmetry = getattr(spec, "symmetry", None)
        if symmetry:
            # Validated whether or not an analysis uses it: a wrong table is an error, not ignored.
            try:
                LieGroupAction(chart, symmetry["generators"], symmetry.get("structure_constants"),
                               symmetry.get("action", "left"))
            except AnholoError as exc:
                raise type(exc)(f"{spec.source}: [symmetry]: {exc}") from None
            if not spec.constraints:
                warnings.warn(AnholoWarning(
                    f"{spec.source}: [symmetry] is not used: the system has no constraints, and the symmetry "
                    "is used by the Chaplygin reduction of a constrained system only."), stacklevel=2)
        return cls(
            name=spec.name,
            chart=chart,
            frame=frame,
            bundle=bundle,
            lagrangian=Lagrangian(bundle, spec.lagrangian),
            constraints=tuple(spec.constraints),
            values=dict(spec.values),
            time=getattr(spec, "time", None),
            symmetry=getattr(spec, "symmetry", None),
        )

    def chaplygin(self):
        """The Chaplygin system (docs/chaplygin.rst) of the file's ``[symmetry]`` table, or None without one
        (or without constraints).

        Raises
        ------
        SymmetryError
            (its subclasses) if the declared action is not free, the Lagrangian or D is not
            invariant, or D is not a principal connection.
        """
        if not self.symmetry or not self.constraints:
            return None
        sym = self.symmetry
        action = LieGroupAction(self.chart, sym["generators"], sym.get("structure_constants"),
                                sym.get("action", "left"))
        return ChaplyginSystem(self.lagrangian, self.linear_constraints(), action)

    @property
    def has_constraints(self) -> bool:
        return bool(self.constraints)

    def linear_constraints(self):
        """The file's constraints as :class:`~anholo.constraints.linear.LinearConstraints`
        (see :func:`~anholo.constraints.linear.stationary_linear_constraints`).

        Raises
        ------
        ConstraintError
            If the constraints depend on the time.
        NonlinearConstraintError
            If a constraint is not linear or affine in the velocities.
        """
        return stationary_linear_constraints(self.chart, self.constraints, self.time)

    @property
    def is_time_dependent(self) -> bool:
        """True if some constraint depends explicitly on the declared time symbol."""
        return self.time is not None and any(self.time in sp.sympify(c).free_symbols for c in self.constraints)

    def kinematic_constraints(self):
        """The file's constraints as general kinematic constraints ``φ(q, q_dot) = 0``, linear or not
        (:class:`~anholo.constraints.kinematic.KinematicConstraints`, docs/chetaev.rst)."""
        return KinematicConstraints(self.chart, self.constraints, time=self.time)

    def chetaev(self):
        """The Chetaev problem (docs/chetaev.rst): L with the file's constraints and Chetaev displacements,
        in the file's frame (:class:`~anholo.dynamics.chetaev.ChetaevSystem`)."""
        return ChetaevSystem(self.lagrangian, self.kinematic_constraints())

    def nonholonomic(self, dependent=None):
        """The Lagrange–d'Alembert problem (docs/nonholonomic.rst): L with the file's constraints.

        The file's frame is used if it is adapted to the constraints; otherwise an
        adapted frame is built on it (see :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem`).
        """
        return NonholonomicSystem(self.lagrangian, self.linear_constraints(), dependent=dependent)

    @classmethod
    def load(cls, name_or_path: str, assignments: dict | None = None) -> "System":
        """Load a system file or bundled example, substituting ``assignments`` (``--set``)."""
        spec = resolve_system(name_or_path)
        if assignments:
            spec = spec.substitute(assignments)
        return cls.from_spec(spec)

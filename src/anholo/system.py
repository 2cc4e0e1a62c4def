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
from sympy.core.function import AppliedUndef

from .parsing import expanded_terms, sympified
from .constraints.kinematic import KinematicConstraints
from .constraints.linear import stationary_linear_constraints
from .dynamics.chetaev import ChetaevSystem
from .dynamics.forces import Forces
from .dynamics.lagrangian import Lagrangian
from .errors import AnholoError, AnholoWarning, ArgumentError, ReportError, printable
from .dynamics.maggi import LARGE_SYSTEM, MaggiSystem
from .dynamics.nonholonomic import NonholonomicSystem
from .algebra.engine import to_engine, to_sympy
from .algebra.expressions import free_symbols as dag_free_symbols, size_exceeds
from .algebra.printing import tex_text
from .examples import resolve_system
from .geometry.chart import Chart
from .geometry.frame import Frame
from .geometry.lie_group import LieGroupAction
from .geometry.tangent import TangentBundle

__all__ = ["System", "EXACT_ROUTE_PROGRAM_LIMIT"]

#: Shared definitions of the field's straight-line program (Maggi's implicit form with multipliers)
#: above which the constrained dynamics takes Maggi's route by default (:attr:`System.route`).  The
#: catalogue's examples have at most about 210 (the two-wheeled carriage; n_trailer_3: 184), the
#: n-trailer with four trailers about 300 (its exact report takes 9 s, Maggi's 1 s).
EXACT_ROUTE_PROGRAM_LIMIT = 250

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
    forces : Forces or None
        The file's ``forces``, ``frame_forces``, ``dissipation`` and ``inputs``
        (:class:`~anholo.dynamics.forces.Forces`), None without any.
    holonomic : tuple
        Holonomic constraints ``f(q, t) = 0`` as written; their time derivatives
        ``∂f/∂q^A q̇^A + ∂f/∂t`` are appended to ``constraints``.
    units : dict
        The file's ``[units]`` (name → unit string, display only: figures and tables).
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
    forces: Forces = None
    holonomic: tuple = ()
    units: dict = None

    def as_latex(self) -> str:
        """The header of the system as LaTeX: its Lagrangian and constraints (under the report's size budget)
        and its frame (``aligned``; for Jupyter, which shows it as the system's display)."""
        from .algebra.presentation import Presenter

        p = Presenter()
        rows = [rf"L &= {p.latex(self.lagrangian.natural_expr())}"]
        rows += [rf"0 &= {p.latex(c)}" for c in self.constraints]
        frame = self.frame.as_latex().replace("\\begin{aligned}\n", "").replace("\n\\end{aligned}", "")
        return (rf"\text{{{tex_text(self.name)}}}\quad q = ({', '.join(p.latex(q) for q in self.chart.coordinates)})"
                "\\\\\n\\begin{aligned}\n" + " \\\\\n".join(rows + [frame]) + "\n\\end{aligned}")

    def _repr_latex_(self):
        return "$\\displaystyle " + self.as_latex() + "$"

    @classmethod
    def from_spec(cls, spec) -> "System":
        """Build the geometry and dynamics objects of a :class:`SystemSpec`."""
        from .io.systemfile import SystemSpec

        if not isinstance(spec, SystemSpec):
            raise ArgumentError(f"System.from_spec: expected a SystemSpec (from anholo.io.systemfile.parse_system or "
                                f"load_system), got {type(spec).__name__}; System.load(name_or_path) reads a file.")
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
        if getattr(spec, "quasi_velocities", None):
            names = list(spec.quasi_velocities)
        bundle = TangentBundle(frame, quasi_velocities=names)
        time = getattr(spec, "time", None)
        holonomic = tuple(getattr(spec, "holonomic", ()))
        natural = _natural_in(bundle)
        symmetry = getattr(spec, "symmetry", None)
        if symmetry:
            # Validated whether or not an analysis uses it: a wrong table is an error, not ignored.
            try:
                LieGroupAction(chart, symmetry["generators"], symmetry.get("structure_constants"),
                               symmetry.get("action", "left"))
            except AnholoError as exc:
                raise type(exc)(f"{spec.source}: [symmetry]: {exc}") from None
            if not spec.constraints and not holonomic:
                warnings.warn(AnholoWarning(
                    f"{spec.source}: [symmetry] is not used: the system has no constraints, and the symmetry "
                    "is used by the Chaplygin reduction of a constrained system only."), stacklevel=2)
        # the cost of the field decides the route (System.route) before L is put in a normal form that
        # only the exact route uses
        tied = differentiated(chart, holonomic, time)
        size, large = None, None
        if spec.constraints and spec.frame is None and not time_dependent(spec):
            L_nat, cons = natural(spec.lagrangian), [natural(c) for c in spec.constraints]
            large = size_exceeds(sp.Tuple(L_nat, *cons, *tied), LARGE_SYSTEM)
            size = None if large else _field_program_size(chart, L_nat, cons)
        out = cls(
            name=spec.name,
            chart=chart,
            frame=frame,
            bundle=bundle,
            lagrangian=Lagrangian(bundle, spec.lagrangian,
                                  reduce=not large and (size is None or size <= EXACT_ROUTE_PROGRAM_LIMIT)),
            constraints=tuple(natural(c) for c in spec.constraints) + tied,
            values=dict(spec.values),
            time=time,
            symmetry=getattr(spec, "symmetry", None),
            forces=_forces_of(spec, chart, bundle, time, natural),
            holonomic=holonomic,
            units=dict(getattr(spec, "units", None) or {}),
        )
        if size is not None:
            out.__dict__["_program_size"] = size
        if large:
            out.__dict__["_is_large"] = True
        return out

    @property
    def inputs(self) -> tuple:
        """The control inputs declared by the file (``inputs = [...]``)."""
        return self.forces.inputs if self.forces is not None else ()

    @property
    def lagrangian_time(self):
        """The time symbol if the Lagrangian or the forces depend on it, else None."""
        if self.time is None:
            return None
        exprs = [self.lagrangian.expr] + (list(self.forces.total) if self.forces is not None else [])
        return self.time if any(self.time in sympified(e).free_symbols for e in exprs) else None

    def euler_lagrange_field(self):
        """The Euler–Lagrange field of L with the file's forces and time dependence (docs/forces.rst)."""
        return self.lagrangian.euler_lagrange_field(forces=self.forces, time=self.lagrangian_time)

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
        from .analysis.chaplygin import ChaplyginSystem  # the analyses are imported when used

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
        return self.time is not None and any(self.time in sympified(c).free_symbols for c in self.constraints)

    def kinematic_constraints(self):
        """The file's constraints as general kinematic constraints ``φ(q, q_dot) = 0``, linear or not
        (:class:`~anholo.constraints.kinematic.KinematicConstraints`, docs/chetaev.rst)."""
        return KinematicConstraints(self.chart, self.constraints, time=self.time)

    def chetaev(self):
        """The Chetaev problem (docs/chetaev.rst): L with the file's constraints and Chetaev displacements,
        in the file's frame (:class:`~anholo.dynamics.chetaev.ChetaevSystem`)."""
        forces = self.forces.total if self.forces is not None else None
        return ChetaevSystem(self.lagrangian, self.kinematic_constraints(), forces=forces)

    @property
    def is_large(self) -> bool:
        """True if L and the constraints together exceed :data:`~anholo.dynamics.maggi.LARGE_SYSTEM` tree
        nodes, or terms once multiplied out (:func:`~anholo.parsing.expanded_terms`, an upper estimate that
        costs one walk of the DAG): :meth:`nonholonomic` then uses Maggi's equations (no normal forms, no
        symbolic inversion).  The second measure is what the normal forms of the exact route pay, and does not
        depend on how the expressions are written: the Whipple bicycle's Lagrangian written body by body as
        sums of squares has 4,417 nodes with its constraints (the same function multiplied out across the
        frames 9,972), but 8,766 terms once multiplied out."""
        if "_is_large" not in self.__dict__:
            exprs = [self.lagrangian.expr, *(sympified(c) for c in self.constraints)]
            memo: dict = {}
            self.__dict__["_is_large"] = size_exceeds(sp.Tuple(*exprs), LARGE_SYSTEM) or sum(
                expanded_terms(e, LARGE_SYSTEM, memo) for e in exprs) > LARGE_SYSTEM
        return self.__dict__["_is_large"]

    @property
    def route(self) -> tuple:
        """``(route, reason)``: how :meth:`nonholonomic` (and the report) computes the constrained dynamics
        by default, chosen by cost.

        ``"maggi"`` (:class:`~anholo.dynamics.maggi.MaggiSystem`: shared subexpressions, no normal forms,
        verdicts decided at random points) when L and the constraints exceed
        :data:`~anholo.dynamics.maggi.LARGE_SYSTEM` tree nodes, or when the straight-line program of the
        field has more than :data:`EXACT_ROUTE_PROGRAM_LIMIT` shared definitions (the exact route's normal
        forms then cost seconds to minutes: 1.9x per trailer on the n-trailer); ``"exact"`` otherwise
        (closed forms), and always for constraints that are not linear, time-dependent ones, and systems
        with undefined functions (which only the exact route can treat)."""
        if "_route" not in self.__dict__:
            self.__dict__["_route"] = self._choose_route()
        return self.__dict__["_route"]

    def _choose_route(self) -> tuple:
        if self.is_large:
            return "maggi", (f"L and the constraints have more than {LARGE_SYSTEM} tree nodes")
        if not self.constraints or self.is_time_dependent:
            return "exact", ""
        exprs = [sympified(self.lagrangian.expr), *(sympified(c) for c in self.constraints)]
        if any(e.has(AppliedUndef) for e in exprs):
            return "exact", ""
        size = self.__dict__.get("_program_size")
        if size is None:
            size = _field_program_size(self.chart, self.lagrangian.natural_expr(), self.constraints)
        if size is None:
            return "exact", ""
        if size > EXACT_ROUTE_PROGRAM_LIMIT:
            return "maggi", (f"the field's straight-line program has {size} shared definitions (over "
                             f"{EXACT_ROUTE_PROGRAM_LIMIT}): closed forms would cost far more than the field; "
                             "System.load(FILE).nonholonomic(route='exact') in Python computes them")
        return "exact", ""

    def nonholonomic(self, dependent=None, route: str | None = None):
        """The Lagrange–d'Alembert problem (docs/nonholonomic.rst): L with the file's constraints.

        ``route="exact"``: :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem` — the file's frame
        is used if it is adapted to the constraints; otherwise an adapted frame is built on it, and
        every result is put in a small canonical form.  ``route="maggi"``:
        :class:`~anholo.dynamics.maggi.MaggiSystem` — Maggi's equations in coordinates, for large
        systems (a bicycle): the same field, its expressions shared and never normalised or inverted.
        By default the route of :attr:`route` (chosen by cost).
        """
        if route not in (None, "exact", "maggi"):
            raise ReportError(f"unknown route {route!r}; use 'exact' or 'maggi'.")
        if route == "maggi" or (route is None and self.route[0] == "maggi"):
            return self.maggi(dependent)
        if route is None and dependent is not None and self._coordinate_velocities(dependent):
            return self.maggi(dependent)  # coordinate velocities of a system written in another frame
        return NonholonomicSystem(self.lagrangian, self.linear_constraints(), dependent=dependent,
                                  forces=self.forces, time=self.lagrangian_time)

    def _coordinate_velocities(self, dependent) -> bool:
        """True if ``dependent`` names coordinates (their velocities ``q̇^P``) of a system whose frame is not the
        coordinate frame: Maggi's equations in the coordinate velocities take them as they are meant (the
        frame's own adapted frame solves for quasi-velocities, named by the frame's names)."""
        if self.frame.is_coordinate_frame:
            return False
        coords = {c.name for c in self.chart.coordinates}
        quasi = {v.name for v in self.bundle.quasi_velocities}
        names = [d.name if isinstance(d, sp.Symbol) else d for d in dependent]
        return bool(names) and all(isinstance(d, str) and d in coords and d not in quasi for d in names)

    def maggi(self, dependent=None) -> MaggiSystem:
        """The Lagrange–d'Alembert problem in Maggi's form (:class:`~anholo.dynamics.maggi.MaggiSystem`):
        L in the natural velocities, the file's constraints (with the derivatives of its holonomic
        constraints), its forces, and its quasi-velocity names for the free velocities."""
        if dependent is None and "_maggi" in self.__dict__:
            return self.__dict__["_maggi"]
        if dependent is None and self._symmetry_directions():
            try:  # X_a = the symmetry's generators: Maggi's section -p is then the Chaplygin one
                out = self.maggi(self._symmetry_directions())
                self.__dict__["_maggi"] = out
                return out
            except AnholoError:
                pass
        forces = self.forces.total if self.forces is not None else None
        time = self.time if self.time is not None and (self.lagrangian_time is not None or self.is_time_dependent) \
            else None
        out = MaggiSystem(self.chart, self.lagrangian.natural_expr(), self.constraints,
                           forces=forces, time=time, dependent=dependent, holonomic=self.holonomic,
                           quasi_velocities=self._maggi_names(), values=dict(self.values or {}), name=self.name,
                          inputs=tuple(self.inputs))
        if dependent is None:
            self.__dict__["_maggi"] = out
        return out

    def _symmetry_directions(self) -> tuple:
        """The coordinates ``q^P`` whose fields ``∂/∂q^P`` are the generators of the file's ``[symmetry]``
        (translations), when there are as many as constraints; else ``()``.  Maggi's route then takes
        their velocities as the dependent ones, so that its complement ``X_a = ∂/∂q^P`` is the symmetry's."""
        gens = (self.symmetry or {}).get("generators", ()) if self.symmetry else ()
        if not gens or len(gens) != len(self.constraints):
            return ()
        out = []
        for g in gens:
            comps = [sympified(c) for c in g]
            ones = [A for A, c in enumerate(comps) if c != 0]
            if len(ones) != 1 or comps[ones[0]] != 1:
                return ()
            out.append(self.chart.coordinates[ones[0]])
        return tuple(out) if len(set(out)) == len(out) else ()

    def free_maggi(self) -> MaggiSystem:
        """The free system (no constraints) in Maggi's form: the Euler–Lagrange field ``W q̈ = F`` of a large
        system in the natural velocities, with its forces."""
        forces = self.forces.total if self.forces is not None else None
        return MaggiSystem(self.chart, self.lagrangian.natural_expr(), (), forces=forces,
                           time=self.lagrangian_time, quasi_velocities=self._maggi_names())

    def _maggi_names(self) -> tuple:
        """Names of the free velocities of Maggi's route: the file's quasi-velocity names when its frame is
        the coordinate frame (they then are the natural velocities), fresh names otherwise."""
        if self.frame.is_coordinate_frame:
            return self.bundle.quasi_velocities
        taken = {s.name for s in self.chart.coordinates + self.chart.velocities + self.chart.parameters}
        taken |= {v.name for v in self.bundle.quasi_velocities}
        prefix = "u"
        while any(f"{prefix}{i + 1}" in taken or f"{prefix}{i + 1}_dot" in taken for i in range(self.chart.dim)):
            prefix += "u"
        return tuple(sp.Symbol(f"{prefix}{i + 1}", real=True) for i in range(self.chart.dim))

    @classmethod
    def load(cls, name_or_path: str, assignments: dict | None = None) -> "System":
        """Load a system file or bundled example, substituting ``assignments`` (``--set``)."""
        import os
        from collections.abc import Mapping

        if not isinstance(name_or_path, (str, os.PathLike)) or (isinstance(name_or_path, str) and not name_or_path):
            raise ArgumentError(f"System.load: expected a file path or an example name (a non-empty string), got "
                                f"{type(name_or_path).__name__} {printable(repr(name_or_path))[:60]}.")
        if assignments is not None and (not isinstance(assignments, Mapping)
                                        or not all(isinstance(k, str) for k in assignments)):
            raise ArgumentError(f"System.load: assignments must be a dict parameter name -> value, e.g. "
                                f"{{'m': 1}}, got {type(assignments).__name__} {printable(repr(assignments))[:60]}.")
        spec = resolve_system(name_or_path)
        if assignments:
            spec = spec.substitute(assignments)
        return cls.from_spec(spec)


def _field_program_size(chart: Chart, lagrangian, constraints) -> int | None:
    """Shared definitions of the straight-line program of Maggi's implicit form with multipliers for L and
    the constraints (the cost of the field; :attr:`System.route`), or None where Maggi's route does not
    apply (nonlinear constraints, undefined functions, …)."""
    exprs = [sympified(lagrangian), *(sympified(c) for c in constraints)]
    if any(e.has(AppliedUndef) for e in exprs):
        return None
    try:
        return len(MaggiSystem(chart, lagrangian, tuple(constraints)).program(multipliers=True).pairs)
    except (AnholoError, RuntimeError, TypeError, ValueError):
        return None


def time_dependent(spec) -> bool:
    """True if the spec declares a time that its constraints use."""
    t = getattr(spec, "time", None)
    return t is not None and any(t in sympified(c).free_symbols for c in spec.constraints)


def differentiated(chart: Chart, holonomic, time=None) -> tuple:
    """``df/dt = ∂f/∂q^A q̇^A + ∂f/∂t`` of holonomic constraints ``f(q, t) = 0``: the kinematic
    constraints that define their tangent distribution D (docs/forces.rst)."""
    out = []
    for f in holonomic:
        f = sympified(f)
        if size_exceeds(f, 80):  # a large f (a bicycle's front contact): differentiated by the engine
            fe = to_engine(f)
            df = sum((fe.diff(to_engine(q)) * to_engine(u) for q, u in zip(chart.coordinates, chart.velocities)),
                     to_engine(0))
            if time is not None:
                df += fe.diff(to_engine(time))
            symbols = chart.coordinates + chart.velocities + chart.parameters + ((time,) if time is not None else ())
            out.append(to_sympy(df, symbols))
            continue
        df = sp.Add(*[f.diff(q) * u for q, u in zip(chart.coordinates, chart.velocities)])
        if time is not None:
            df += f.diff(time)
        out.append(df)
    return tuple(out)


def _natural_in(bundle):
    """Expressions in the file's quasi-velocity names rewritten in ``q_dot`` (``v^i = θ^i_A q̇^A``)."""
    v = set(bundle.quasi_velocities)

    def natural(e):
        e = sympified(e)
        return bundle.to_natural(e) if dag_free_symbols([e]) & v else e

    return natural


def _forces_of(spec, chart, bundle, time, natural=lambda e: e):
    """The :class:`Forces` of a spec's ``forces``, ``frame_forces``, ``dissipation`` and ``inputs`` (or None)."""
    Q, FF = getattr(spec, "forces", None), getattr(spec, "frame_forces", None)
    R, inputs = getattr(spec, "dissipation", None), tuple(getattr(spec, "inputs", ()))
    if Q is None and FF is None and R is None and not inputs:
        return None
    total = [natural(e) for e in Q] if Q is not None else [sp.S.Zero] * chart.dim
    FF = None if FF is None else [natural(e) for e in FF]
    R = None if R is None else natural(R)
    if FF is not None:
        th = bundle.frame.coframe
        for A in range(chart.dim):
            total[A] += sp.Add(*[th[i, A] * FF[i] for i in range(chart.dim) if th[i, A] != 0])
    return Forces(chart, tuple(total), dissipation=R if R is not None else 0, inputs=inputs, time=time)

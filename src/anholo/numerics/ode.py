"""First-order systems: the common form in which every derived field is integrated.

A field of the library (Euler–Lagrange, nonholonomic, vakonomic, Chetaev) is, for
the numerics, a first-order system ``ds/dt = F(s)`` on its own state space, plus
what is needed to talk about it in natural terms.  :class:`FirstOrderSystem` is
that small protocol:

* ``state`` — the state symbols ``s`` and ``rates`` — the expressions ``F(s)``;
* ``natural_velocities`` — ``q̇^A`` as functions of the state;
* ``initial_state`` — the state as functions of natural initial data
  ``(q, q̇, λ')`` (``multiplier_inputs`` are the symbols ``λ'``, if any);
* ``multipliers`` — multiplier values along the motion, as functions of the state;
* ``parameters`` — the symbols that need numerical values (``values`` holds defaults);
* ``lagrangian`` and ``constraints`` in natural coordinates ``(q, q̇)``, for the
  monitors (energy, momentum maps, constraint residuals) and for checking
  that initial data satisfy the constraints.

Constructors (docs/theory.rst, sections on Lagrangian, nonholonomic and vakonomic dynamics):

* :func:`from_euler_lagrange` — state ``(q, v)``, ``q̇^A = X_i^A v^i``, ``v̇^i = Γ^i``
  (Prop. 1); ``v = θ(q) q̇``.
* :func:`from_nonholonomic` — state ``(q, v^α)`` on C, ``q̇^A = X_j^A v^j`` with
  ``v^a = β^a(q)``, ``v̇^α = Γ^α`` (Prop. 2); the constraints hold exactly along
  the motion because C is the state space (docs/theory.rst, *Nonholonomic dynamics*).  ``v^α = θ^α(q) q̇``.
* :func:`from_vakonomic` — state ``(q, v^α, λ)`` with the frame multipliers λ
  (docs/theory.rst, *Vakonomic dynamics*): ``v̇^α = B^α``, ``λ̇ = Λ``.  Initial data and the reported
  multipliers are those of the constraints *as written*, ``λ'`` with
  ``L + λ'_a φ_a``; ``λ_b = λ'_a M^a_b``, ``M^a_b = ω^a(X_b)``.

Any other field plugs in by building a :class:`FirstOrderSystem` (e.g. a Chetaev
field for nonlinear constraints, docs/theory.rst, *Nonlinear constraints and Chetaev's rule*).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

from ..algebra import invert
from ..algebra.expressions import free_symbols
from ..dynamics.chetaev import ChetaevSystem
from ..dynamics.forces import control_affine
from ..dynamics.maggi import MaggiSystem
from ..dynamics.nonholonomic import NonholonomicField
from ..dynamics.vakonomic import VakonomicField, VakonomicSystem
from ..errors import DimensionError, SimulationError
from ..parsing import sympified
from ..geometry.tangent import SecondOrderField

__all__ = [
    "FirstOrderSystem",
    "from_euler_lagrange",
    "from_nonholonomic",
    "from_vakonomic",
    "first_order_system",
    "regular_nonholonomic",
    "from_system",
    "FIELDS",
]

FIELDS = ("euler-lagrange", "nonholonomic", "vakonomic", "chetaev")


@dataclass(frozen=True, eq=False)
class FirstOrderSystem:
    """A field as a first-order system ``ds/dt = F(s)`` with its natural read-out.

    Attributes
    ----------
    kind : str
        ``"euler-lagrange"``, ``"nonholonomic"``, ``"vakonomic"``, ``"chetaev"`` or a user label.
    coordinates : tuple of Symbol
        The coordinates ``q^A``.
    velocities : tuple of Symbol
        The natural velocity symbols ``q̇^A`` (``q_dot``).
    state : tuple of Symbol
        The state ``s`` (starts with the coordinates).
    rates : tuple of Expr
        ``F(s) = ds/dt``, functions of the state and the parameters.
    natural_velocities : tuple of Expr
        ``q̇^A(s)``.
    initial_state : tuple of Expr
        ``s`` as functions of ``(q, q̇, multiplier_inputs)``.
    multiplier_inputs : tuple of Symbol
        Symbols of initial multipliers given by the user (vakonomic: ``λ'``).
    multipliers : tuple of Expr
        Multipliers along the motion, functions of the state (may be empty).
    multiplier_names : tuple of str
    lagrangian : Expr
        L in ``(q, q̇)``.
    constraints : tuple of Expr
        Constraint functions ``φ_a(q, q̇)`` as written (= 0 along constrained motions).
    parameters : tuple of Symbol
        Symbols other than state, time and inputs that the rates or read-outs use.
    values : dict
        Default parameter values ``{Symbol: float}`` (e.g. a system file's ``[values]``).
    name : str
        A title for reports and plots.
    time : Symbol or None
        The time symbol of time-dependent rates (default: a symbol named ``t``, if any).
    inputs : tuple of Symbol
        Control inputs ``u_k`` the rates (and multipliers) use; numerics take them as callables of
        ``(t, state)`` (docs/forces.rst).  The rates are then ``f_0 + Σ_k u_k g_k`` when the
        forces are affine in the inputs (:meth:`control_affine`).
    holonomic : tuple of Expr
        Holonomic constraints ``f(q, t) = 0`` the motion must stay on (their derivatives are among the
        ``constraints``); :func:`~anholo.numerics.simulate` projects onto them after every step.
    """

    kind: str
    coordinates: tuple
    velocities: tuple
    state: tuple
    rates: tuple
    natural_velocities: tuple
    initial_state: tuple
    lagrangian: sp.Expr
    constraints: tuple = ()
    multipliers: tuple = ()
    multiplier_names: tuple = ()
    multiplier_inputs: tuple = ()
    parameters: tuple = None
    values: dict = field(default_factory=dict)
    name: str = ""
    time: sp.Symbol = None
    inputs: tuple = ()
    holonomic: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs or ()))
        object.__setattr__(self, "holonomic", tuple(sympified(f, "a holonomic constraint") for f in (self.holonomic or ())))
        for attr in ("coordinates", "velocities", "state", "rates", "natural_velocities", "initial_state",
                     "constraints", "multipliers", "multiplier_inputs"):
            object.__setattr__(self, attr, tuple(sympified(e, attr) for e in getattr(self, attr)))
        object.__setattr__(self, "lagrangian", sympified(self.lagrangian, "the Lagrangian"))
        object.__setattr__(self, "multiplier_names", tuple(self.multiplier_names))
        n = len(self.coordinates)
        if len(self.velocities) != n or len(self.natural_velocities) != n:
            raise DimensionError(f"need {n} velocity symbols and {n} natural velocities, one per coordinate.")
        if len(self.rates) != len(self.state) or len(self.initial_state) != len(self.state):
            raise DimensionError(
                f"the state has {len(self.state)} symbols but {len(self.rates)} rates and "
                f"{len(self.initial_state)} initial-state expressions; give one of each per state symbol."
            )
        if len(self.multiplier_names) != len(self.multipliers):
            object.__setattr__(self, "multiplier_names",
                               tuple(f"lambda{a + 1}" for a in range(len(self.multipliers))))
        if self.parameters is None:
            known = (set(self.state) | set(self.coordinates) | set(self.velocities) | set(self.multiplier_inputs)
                     | set(self.inputs))
            exprs = (self.rates + self.natural_velocities + self.initial_state + self.multipliers
                     + self.constraints + self.holonomic + (self.lagrangian,))
            used = free_symbols(exprs)
            params = tuple(sorted((s for s in used - known if s != self.time and s.name != "t"),
                                  key=lambda s: s.name))
            object.__setattr__(self, "parameters", params)
        else:
            object.__setattr__(self, "parameters", tuple(self.parameters))
        object.__setattr__(self, "values", {_symbol_of(k, self.parameters): float(v) for k, v in
                                            dict(self.values).items() if _symbol_of(k, self.parameters) is not None})

    @property
    def dim(self) -> int:
        """Number of state variables."""
        return len(self.state)

    @property
    def n(self) -> int:
        """Number of coordinates."""
        return len(self.coordinates)

    @property
    def state_names(self) -> tuple:
        return tuple(s.name for s in self.state)

    @property
    def coordinate_names(self) -> tuple:
        return tuple(q.name for q in self.coordinates)

    def control_affine(self) -> tuple:
        """``(f_0, (g_1, …))`` with rates ``= f_0 + Σ_k u_k g_k`` (raises InputError if not affine)."""
        return control_affine(self.rates, self.inputs)

    def with_values(self, values: Mapping) -> "FirstOrderSystem":
        """The same system with other default parameter values (merged into the current ones)."""
        merged = dict(self.values)
        for k, v in values.items():
            s = _symbol_of(k, self.parameters)
            if s is not None:
                merged[s] = float(v)
        return _replace(self, values=merged)


def _replace(ode: FirstOrderSystem, **changes) -> FirstOrderSystem:
    import dataclasses

    return dataclasses.replace(ode, **changes)


def _symbol_of(key, parameters):
    if isinstance(key, sp.Symbol):
        return key if key in parameters else None
    for p in parameters:
        if p.name == key:
            return p
    return None


# --- constructors ------------------------------------------------------------------------------
def from_euler_lagrange(lagrangian, *, values: Mapping | None = None, name: str = "") -> FirstOrderSystem:
    """The Euler–Lagrange field of a :class:`~anholo.dynamics.lagrangian.Lagrangian` on ``(q, v)``.

    ``q̇^A = X_i^A v^i``, ``v̇^i = Γ^i`` (Prop. 1 of Crampin & Mestdag (2010); docs/theory.rst, *Lagrangian dynamics in a frame*); initial ``v = θ(q) q̇``.
    """
    return _el_system(lagrangian.euler_lagrange_field(), lagrangian.natural_expr(), values, name)


def _el_system(field_, lagrangian, values, name, constraints=()) -> FirstOrderSystem:
    b = field_.bundle
    F = b.frame
    X, th = F.vectors, F.coframe
    n = b.dim
    q, u, v = b.chart.coordinates, b.chart.velocities, b.quasi_velocities
    qdot = tuple(sp.Add(*[X[i, A] * v[i] for i in range(n) if X[i, A] != 0]) for A in range(n))
    v0 = tuple(sp.Add(*[th[i, A] * u[A] for A in range(n) if th[i, A] != 0]) for i in range(n))
    state = q + v + tuple(b.extra)
    rates = qdot + tuple(field_.accelerations) + tuple(field_.extra_rates)
    init = q + v0 + tuple(b.extra)
    return FirstOrderSystem("euler-lagrange", q, u, state, rates, qdot, init, lagrangian,
                            constraints=constraints, values=dict(values or {}), name=name)


def from_nonholonomic(field_, *, values: Mapping | None = None, name: str = "") -> FirstOrderSystem:
    """Γ_nh (a :class:`~anholo.dynamics.nonholonomic.NonholonomicField`) on ``(q, v^α)`` (docs/theory.rst, *Nonholonomic dynamics*).

    Rates ``q̇^A = X_j^A v^j`` (``v^a = β^a(q)`` on C) and ``v̇^α = Γ^α``; initial
    ``v^α = θ^α(q) q̇``.  Multipliers: those of the constraints as written,
    ``E_A(L) = λ_a ∂φ_a/∂q̇^A`` (:meth:`NonholonomicField.coordinate_multipliers`).
    """
    nh = field_.system
    F = nh.frame
    th = F.coframe
    q, u = F.chart.coordinates, F.chart.velocities
    va = nh.free_velocities
    n = nh.n
    qdot = field_.velocity_field()
    init = q + tuple(sp.Add(*[th[al, A] * u[A] for A in range(n) if th[al, A] != 0]) for al in range(nh.m))
    mult = field_.coordinate_multipliers(natural=False)
    L = _natural_lagrangian(nh)
    return FirstOrderSystem("nonholonomic", q, u, q + va, tuple(qdot) + tuple(field_.accelerations), qdot, init, L,
                            constraints=tuple(nh.constraints.expressions), multipliers=mult,
                            multiplier_names=tuple(f"lambda{a + 1}" for a in range(len(mult))),
                            values=dict(values or {}), name=name, **_forcing_of(nh))


def _forcing_of(nh) -> dict:
    """``time`` and ``inputs`` of a problem with forces (keyword arguments of FirstOrderSystem)."""
    forces = getattr(nh, "forces", None)
    return {"time": getattr(nh, "time", None), "inputs": forces.inputs if forces is not None else ()}


def _natural_lagrangian(nh) -> sp.Expr:
    """L in ``(q, q̇)`` as the user wrote it (the Lagrangian before the change to the adapted frame)."""
    source = getattr(nh, "_source_lagrangian", None) or nh.lagrangian
    return source.natural_expr()


def from_vakonomic(field_, *, values: Mapping | None = None, name: str = "") -> FirstOrderSystem:
    """The vakonomic field tangent to C (a :class:`~anholo.dynamics.vakonomic.VakonomicField`, docs/theory.rst, *Vakonomic dynamics*).

    State ``(q, v^α, λ)`` with the frame multipliers λ (components w.r.t. ``θ^a``):
    ``q̇^A = X_α^A v^α``, ``v̇^α = B^α``, ``λ̇_b = Λ_b``.  Initial multipliers and the
    reported ones are those of the multiplication rule ``L + λ'_a φ_a`` with the
    constraints as written: ``λ = λ' M``, ``λ' = λ M^{-1}`` with ``M^a_b = ω^a(X_b)``
    (the convention of :meth:`VakonomicField.in_written_multipliers`).
    """
    vak = field_.system
    nh = vak.constrained
    F = nh.frame
    th = F.coframe
    q, u = F.chart.coordinates, F.chart.velocities
    va, lam = nh.free_velocities, vak.multipliers
    n, m = nh.n, nh.m
    X = F.vectors
    vC = nh.velocities_on_C  # (v^α, β^a): affine constraints move q along X_a β^a too
    qdot = tuple(sp.Add(*[X[i, A] * vC[i] for i in range(n) if X[i, A] != 0 and vC[i] != 0]) for A in range(n))
    M = sp.Matrix(nh.form_matrix)
    written_in = tuple(sp.Symbol(f"{s.name}_written0", real=True) for s in lam)
    identity = M == sp.eye(M.rows)
    lam_frame0 = tuple(sp.Matrix([list(written_in)]) * M) if not identity else written_in
    lam_written = tuple(sp.Matrix([list(lam)]) * invert(M)) if not identity else lam
    init = q + tuple(sp.Add(*[th[al, A] * u[A] for A in range(n) if th[al, A] != 0]) for al in range(m)) + tuple(lam_frame0)
    L = _natural_lagrangian(nh)
    return FirstOrderSystem("vakonomic", q, u, q + va + lam, qdot + tuple(field_.accelerations) + tuple(field_.multiplier_rates),
                            qdot, init, L, constraints=tuple(nh.constraints.expressions),
                            multipliers=tuple(lam_written), multiplier_names=tuple(s.name for s in lam),
                            multiplier_inputs=written_in, values=dict(values or {}), name=name, **_forcing_of(nh))


def first_order_system(field_, *, lagrangian=None, values: Mapping | None = None, name: str = "") -> FirstOrderSystem:
    """The :class:`FirstOrderSystem` of any field the library derives (dispatch on its type).

    ``lagrangian`` (a :class:`~anholo.dynamics.lagrangian.Lagrangian`) is needed for a
    bare :class:`~anholo.geometry.tangent.SecondOrderField`; a :class:`FirstOrderSystem`
    is returned unchanged.  An object with a ``first_order_system()`` method (e.g. a
    Chetaev field) is asked for its own.
    """
    if isinstance(field_, FirstOrderSystem):
        return field_.with_values(values or {})
    if isinstance(field_, NonholonomicField):
        return from_nonholonomic(field_, values=values, name=name)
    if isinstance(field_, VakonomicField):
        return from_vakonomic(field_, values=values, name=name)
    if isinstance(field_, SecondOrderField):
        if lagrangian is None:
            raise DimensionError(
                "an Euler–Lagrange field alone does not carry its Lagrangian; call "
                "first_order_system(L.euler_lagrange_field(), lagrangian=L)."
            )
        return _el_system(field_, lagrangian.natural_expr(), values, name)
    if hasattr(field_, "first_order_system"):
        return _adapt(field_.first_order_system(), field_, values, name)
    raise DimensionError(
        f"cannot integrate a {type(field_).__name__}; pass a field of anholo (Euler–Lagrange, nonholonomic, "
        "vakonomic) or a FirstOrderSystem."
    )


# --- choosing a frame that is regular along motions -------------------------------------------------
def regular_nonholonomic(system, dependent=None):
    """The nonholonomic problem of a :class:`~anholo.system.System`, in a frame good for integration.

    The state ``(q, v^α)`` is only as good as the adapted frame.  The library's
    default adapted frame (:meth:`~anholo.geometry.frame.Frame.adapted_to_constraints`)
    already avoids the usual singularities: it prefers dependent velocities whose
    block of the constraint matrix has a constant determinant (``ẋ, ẏ`` for the
    rolling disks: ``∂θ, ∂φ + R cos θ ∂x + R sin θ ∂y``) and clears q-dependent
    denominators of the D vectors (knife edge: ``cos θ ∂x + sin θ ∂y``).  Given
    ``dependent`` velocities are honoured as they are.
    """
    return system.nonholonomic(dependent=dependent)


def from_system(system, field: str = "nonholonomic", *, dependent=None) -> FirstOrderSystem:
    """The first-order system of one of the fields of a :class:`~anholo.system.System`.

    ``field`` is one of :data:`FIELDS`: ``"euler-lagrange"`` (the constraints are
    ignored), ``"nonholonomic"``, ``"vakonomic"`` (both in the frame of
    :func:`regular_nonholonomic`, or solved for ``dependent`` velocities) or
    ``"chetaev"`` (nonlinear constraints, docs/theory.rst, *Nonlinear constraints and Chetaev's rule*; needs :mod:`anholo.dynamics.chetaev`).
    Default parameter values are the system's ``[values]``.

    Raises
    ------
    SimulationError
        For an unknown field, a constrained field of a system without constraints, or a
        field whose module is not available.
    """
    values = {p: v for p, v in (system.values or {}).items()}
    name = system.name
    if field == "euler-lagrange":
        if getattr(system, "forces", None) is None and getattr(system, "lagrangian_time", None) is None:
            return from_euler_lagrange(system.lagrangian, values=values, name=name)
        ode = _el_system(system.euler_lagrange_field(), system.lagrangian.natural_expr(), values, name)
        return _replace(ode, time=system.lagrangian_time, inputs=tuple(system.inputs), parameters=None)
    if field not in FIELDS:
        raise SimulationError(f"unknown field {field!r}; choose one of {', '.join(FIELDS)}.")
    if not system.has_constraints:
        raise SimulationError(
            f"{name!r} has no constraints, so the {field} field is its Euler–Lagrange field; use "
            "field 'euler-lagrange'."
        )
    holonomic = tuple(getattr(system, "holonomic", ()))
    if field == "chetaev":
        ode = _chetaev_system(system, values, name)
    else:
        nh = regular_nonholonomic(system, dependent=dependent)
        if isinstance(nh, MaggiSystem):
            if field != "nonholonomic":
                why = ("its dependent velocities are coordinate velocities of a system written in another frame; "
                       "name its quasi-velocities instead" if dependent is not None and not system.route[0] == "maggi"
                       else "it is a large system; the vakonomic field needs the exact route (Python API)")
                raise SimulationError(f"{name!r} is integrated in Maggi's equations (docs/implicit.rst), which give its "
                                      f"nonholonomic field only: {why}.")
            return nh  # compiled from its straight-line programs (anholo.numerics.compile.compile_system)
        elif field == "nonholonomic":
            ode = from_nonholonomic(nh.field(), values=values, name=name)
        else:
            ode = from_vakonomic(VakonomicSystem(nh).field(), values=values, name=name)
    if not holonomic:
        return ode
    return _replace(ode, holonomic=holonomic, time=ode.time or system.time, parameters=None,
                    values={**ode.values, **values})


def _chetaev_system(system, values, name) -> FirstOrderSystem:
    problem = system.chetaev() if hasattr(system, "chetaev") else ChetaevSystem(system.lagrangian, list(system.constraints))
    fld = problem.field()
    ode = _adapt(fld.first_order_system(), fld, values, name, lagrangian=system.lagrangian.natural_expr(),
                 constraints=tuple(system.constraints))
    inputs = tuple(getattr(system, "inputs", ()))
    return _replace(ode, inputs=inputs, parameters=None) if inputs else ode


def _adapt(other, field_, values, name, lagrangian=None, constraints=None) -> FirstOrderSystem:
    """A :class:`FirstOrderSystem` from another field's first-order system in natural state ``(q, q̇)``.

    Accepted: a :class:`FirstOrderSystem`, or any object with ``state`` (``q`` then ``q̇``),
    ``rhs``, and optionally ``time``, ``invariants`` (the constraints) and ``multipliers``
    (as :meth:`anholo.dynamics.chetaev.ChetaevField.first_order_system` returns).
    """
    if isinstance(other, FirstOrderSystem):
        return other.with_values(values or {})
    state = tuple(other.state)
    n = len(state) // 2
    if len(state) != 2 * n or not hasattr(other, "rhs"):
        raise DimensionError(f"cannot integrate {type(other).__name__}: expected a state (q, q_dot) and rhs.")
    if lagrangian is None:
        source = getattr(getattr(field_, "system", None), "natural_lagrangian", None)
        lagrangian = source() if callable(source) else source
    if lagrangian is None:
        raise DimensionError(f"cannot find the Lagrangian of {type(field_).__name__} for the energy monitor.")
    q, u = state[:n], state[n:]
    mult = tuple(getattr(other, "multipliers", ()))
    cons = tuple(constraints if constraints is not None else getattr(other, "invariants", ()))
    return FirstOrderSystem("chetaev", q, u, state, tuple(other.rhs), u, state, lagrangian, constraints=cons,
                            multipliers=mult, values=dict(values or {}), name=name,
                            time=getattr(other, "time", None))

"""Models from :mod:`sympy.physics.mechanics`: the objects its users write, as an anholo system.

:func:`from_mechanics` reads ``ReferenceFrame``\\ s, ``Point``\\ s with velocities, ``Particle``\\ s and
``RigidBody``\\ s, kinematic differential equations, velocity and holonomic constraints and loads
(from a :class:`~sympy.physics.mechanics.KanesMethod`, a :class:`~sympy.physics.mechanics.System`,
or given one by one) and returns a :class:`MechanicsModel`: a Lagrangian ``L = T − V`` on TQ in
the coordinate frame, linear velocity constraints ``ω^a_A(q) q̇^A = 0``, holonomic constraints
``f(q) = 0`` and the generalized forces ``Q_A`` of the non-potential loads.

The configuration manifold.  Lagrange–d'Alembert needs T as a function on all of TQ, the
derivative of positions and orientations (Bloch (2003) §1.3; Neimark & Fufaev (1972) Ch. I).
Kane's models often state less: the rolling disc of sympy's tests has no coordinates for the
contact point (its velocity is *set* to zero, the no-slip condition built into the velocity of
the disc's centre, Kane & Levinson (1985) §4.6), the bicycle has no angles for its wheels.
The model is completed, without changing its motions:

* a speed ``s`` without kinematic differential equation that is the rate of a frame B about an
  axis ``e`` fixed in a frame A (``ω_B/A = s e``, a wheel) gets an angle ``θ`` with ``θ̇ = s``
  (B = A rotated by θ about e; its orientation never enters T, only ``ω``);
* each connected tree of points gets the Cartesian position ``r_0`` (in the inertial frame N) of a
  root point — a point whose velocity in N is zero (a contact point, a pivot), else the first
  mass centre — so every mass centre ``P`` has a position ``r_P = r_0 + r_{P/0}(q)`` and the true
  velocity ``v_P = ṙ_0 + d/dt r_{P/0}``;
* the model's own velocities become constraints: ``v_P^{model}(q, q̇) − v_P = 0`` for every mass
  centre (for the disc: the rolling constraints); independent ones are kept (numerical rank at a
  random point), and a root coordinate whose velocity they force to vanish (the height of the
  contact point) is removed.

The speeds are replaced by ``u = g(q, q̇)``, solved from the kinematic differential equations;
the angular velocities the model sets are checked to be the derivatives of the orientations
(``ω̂ = Ṙ Rᵀ`` at random points).  T is then computed from the true velocities,
``T = Σ ½ m v_P·v_P + ½ ω_B·I_B·ω_B``; V is the potential of the forces that are constant in N
(``V = −F·r_P``, gravity) plus the bodies' ``potential_energy``; the other loads give
``Q_A = Σ F·∂v_P/∂q̇^A + Σ τ·∂ω_B/∂q̇^A`` (Kane's partial velocities, Kane & Levinson (1985) §4.4; at
a mass centre of the true velocity, at another point of the velocity the model states — a material
point such as a wheel's contact point).  On the constraint distribution D these are Kane's generalized
active forces, so Γ_nh (docs/nonholonomic.rst) and Kane's equations have the same solutions.

The way back: :attr:`MechanicsModel.mass_matrix_full` and :attr:`MechanicsModel.forcing_full`
(``M(x) ẋ = F(x)`` in the state ``x = (q, v^α)`` of Γ_nh, as KanesMethod and PyDy write it) and
:meth:`MechanicsModel.ode_function` (a numerical ``f(t, x)`` for :func:`scipy.integrate.solve_ivp`);
for large models :meth:`MechanicsModel.multiplier_form` (``W q̈ = F + Q + Aᵀλ``, ``A q̈ = −(∂φ/∂q) q̇``
in LagrangesMethod's layout), which needs no adapted frame.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ..algebra import dag_size, numeric_value, random_point, size_exceeds, tidy
from ..algebra.codegen import generate
from ..algebra.engine import to_engine
from ..algebra.printing import latex
from ..algebra.program import Program
from ..dynamics.lagrangian import Lagrangian
from ..dynamics.nonholonomic import NonholonomicSystem
from ..errors import ArgumentError, MechanicsModelError, printable
from .expressions import as_sequence, sympified
from sympy.core.function import AppliedUndef
from ..geometry.chart import Chart, velocity_symbol
from ..geometry.frame import Frame

__all__ = ["MechanicsModel", "from_mechanics"]

_TIDY_LIMIT = 3000
_RANK_TOL = 1e-8


def _mech():
    """The sympy.physics.mechanics module (imported on use: it is an optional, heavy import)."""
    import sympy.physics.mechanics as me

    return me


def _name(f) -> str:
    """``q1`` for the dynamic symbol ``q1(t)``."""
    return f.func.__name__ if isinstance(f, sp.core.function.AppliedUndef) else str(f)


def _vmap(vec, fn):
    """Apply ``fn`` to every component of a sympy Vector (or Dyadic-free vector expression)."""
    me = _mech()
    return me.Vector([(M.applyfunc(fn), F) for M, F in vec.args]) if vec.args else me.Vector(0)


def _vsub(vec, mapping: Mapping):
    return _vmap(vec, lambda e: e.xreplace(mapping))


@dataclass(frozen=True, eq=False)
class MechanicsModel:
    """A Lagrangian system read from a sympy.physics.mechanics model (:func:`from_mechanics`).

    Attributes
    ----------
    name : str
    chart : Chart
        Coordinates: the model's own, then added angles and root positions (see :attr:`added`).
    lagrangian : Lagrangian
        ``L = T − V`` in the coordinate frame (natural velocities ``q_dot``).
    kinetic_energy, potential_energy : sympy expressions in ``(q, q_dot)``
    constraints : tuple
        Independent linear velocity constraints ``ω^a_A(q) q̇^A = 0``, each = 0.
    holonomic : tuple
        Configuration constraints ``f(q) = 0`` of the model (their derivatives are among or
        implied by :attr:`constraints`).
    forces : tuple
        Generalized non-potential forces ``Q_A``, one per coordinate (zeros if there are none).
    speeds : dict
        ``{name of speed: expression in (q, q_dot)}``: the model's speeds ``u = g(q, q̇)``.
    added : dict
        ``{added coordinate: why}`` (wheel angles, root positions).
    dependent : tuple or None
        Coordinates whose velocities the constraints are solved for by default: the added root
        positions and the coordinates of the model's dependent speeds (Kane's choice), when these
        are as many as the constraints.
    symbols : dict
        ``{sympy object of the model: anholo symbol}`` (``q1(t) → q1``, ``q1'(t) → q1_dot``,
        parameters → real symbols of the same name).
    """

    name: str
    chart: Chart
    lagrangian: Lagrangian
    kinetic_energy: sp.Expr
    potential_energy: sp.Expr
    constraints: tuple
    holonomic: tuple
    forces: tuple
    speeds: dict
    added: dict
    symbols: dict = field(repr=False)
    values: dict = None
    dynamic_speeds: dict = field(default=None, repr=False)
    dependent: tuple = None

    # --- reading sympy expressions ------------------------------------------------------------
    def convert(self, expr) -> sp.Expr:
        """A sympy expression of the model (dynamic symbols, speeds) in the chart's symbols."""
        me = _mech()
        if isinstance(expr, me.Vector):
            return _vmap(expr, self.convert)
        return sp.sympify(expr).xreplace(self.dynamic_speeds or {}).xreplace(self.symbols)

    @cached_property
    def nonholonomic_constraints(self) -> tuple:
        """The velocity constraints not implied by the derivatives ``ḟ = ∂f/∂q q̇`` of the holonomic ones
        (what a system file lists under ``constraints`` beside ``holonomic``)."""
        if not self.holonomic:
            return self.constraints
        q, u = self.chart.coordinates, self.chart.velocities
        fdot = [sp.Add(*[f.diff(x) * v for x, v in zip(q, u)]) for f in self.holonomic]
        point = random_point(set(q) | set(self.chart.parameters), random.Random(4))
        kept = _independent(fdot + list(self.constraints), list(u), point)
        return tuple(c for c in kept[len(_independent(fdot, list(u), point)):])

    @property
    def has_forces(self) -> bool:
        return any(f != 0 for f in self.forces)

    # --- anholo objects -----------------------------------------------------------------------
    def nonholonomic(self, dependent=None) -> NonholonomicSystem:
        """The Lagrange–d'Alembert system (L, constraints, forces) in a frame adapted to D.

        Raises
        ------
        MechanicsModelError
            If the model has non-potential loads and this anholo has no forces in
            :class:`~anholo.dynamics.nonholonomic.NonholonomicSystem` yet.
        """
        dependent = self.dependent if dependent is None else dependent
        kwargs = {"dependent": dependent} if dependent is not None else {}
        if self.has_forces:
            if "forces" not in {f.name for f in dataclasses.fields(NonholonomicSystem)}:
                raise MechanicsModelError(
                    "the model has non-potential loads (generalized forces "
                    f"{[str(f) for f in self.forces]}) and this version of anholo's nonholonomic field "
                    "takes no forces; use the forces directly (MechanicsModel.forces) or remove those loads.")
            kwargs["forces"] = self.forces
        return NonholonomicSystem(self.lagrangian, list(self.constraints), **kwargs)

    @cached_property
    def _system(self) -> NonholonomicSystem:
        return self.nonholonomic()

    def field(self):
        """Γ_nh of :meth:`nonholonomic` (cached)."""
        return self._system.field()

    @property
    def states(self) -> tuple:
        """The state ``x = (q, v^α)`` of :attr:`mass_matrix_full` and :meth:`ode_function`."""
        return tuple(self.chart.coordinates) + tuple(self._system.free_velocities)

    @cached_property
    def _hamel_form(self) -> tuple:
        """``(M, F)`` with ``M_αβ v̇^β = F_α``: the constrained Hamel equations with ``v̇`` collected."""
        s = self._system
        vdot = s.bundle.quasi_velocity_rates[: s.m]
        zero = {d: 0 for d in vdot}
        M, F = [], []
        for eq in s.constrained_hamel_equations():
            M.append([eq.lhs.diff(d) for d in vdot])
            F.append(eq.rhs - eq.lhs.xreplace(zero))
        return sp.Matrix(M), sp.Matrix(F)

    @property
    def mass_matrix(self) -> sp.Matrix:
        """``g_αβ|_C = ∂²L_c/∂v^α∂v^β``: the mass matrix of the dynamic equations ``M v̇ = F``."""
        return self._hamel_form[0]

    @property
    def forcing(self) -> sp.Matrix:
        """``F_α = X_α^C(L)|_C − v^j X_j(∂L_c/∂v^α)`` (plus forces): the right side of ``M v̇ = F``."""
        return self._hamel_form[1]

    @property
    def mass_matrix_full(self) -> sp.Matrix:
        """``diag(1_n, M)`` for the state ``(q, v^α)`` (KanesMethod's ``mass_matrix_full``)."""
        n, m = self.chart.dim, self._system.m
        out = sp.zeros(n + m, n + m)
        out[:n, :n] = sp.eye(n)
        out[n:, n:] = self.mass_matrix
        return out

    @property
    def forcing_full(self) -> sp.Matrix:
        """``(q̇ = X_j v^j on C, F)`` (KanesMethod's ``forcing_full``)."""
        return sp.Matrix(list(self.field().velocity_field()) + list(self.forcing))

    def ode_function(self, values: Mapping | None = None, route: str = "field"):
        """``f(t, x) → ẋ`` for ``scipy.integrate.solve_ivp``.

        ``route="field"``: the state is :attr:`states` ``(q, v^α)`` and ``ẋ`` is Γ_nh.
        ``route="multipliers"``: the state is ``(q, q̇)`` and ``q̈`` is solved numerically from
        :meth:`multiplier_form` at each call (no symbolic field: usable for large models such as the
        bicycle; the constraints hold to the integrator's accuracy, as in any index-1 formulation).
        ``values`` maps parameter names or symbols to numbers (default: the model's values).

        Both routes are generated once per model by :func:`anholo.algebra.codegen.generate` (C built at run
        time where a compiler works, else Python), the parameters passed at run time: a new set of values
        costs no new code.  The multiplier route solves ``[[W, −Aᵀ], [A, 0]] (q̈, λ) = (F, r)`` inside the
        generated code (elimination with partial pivoting).
        """
        if route not in ("field", "multipliers"):
            raise MechanicsModelError(f"route={route!r}: use 'field' or 'multipliers'.")
        vals = self._values(values)
        try:
            p = [float(vals[s]) for s in self.chart.parameters]
        except TypeError:
            raise MechanicsModelError("ode_function needs numbers for every parameter; pass values={name: number}.") \
                from None
        fn, size = self._generated(route)
        g = fn.bind(p)
        if size == fn.size:
            return g

        def f(t, x):
            return g(t, x)[:size]

        return f

    def _generated(self, route: str) -> tuple:
        """``(GeneratedFunction, size)`` of :meth:`ode_function`'s route, generated once per model with the
        parameters as runtime arguments (:func:`anholo.algebra.codegen.generate`); ``size`` = the length of ẋ."""
        cache = self.__dict__.setdefault("_generated_cache", {})
        if route in cache:
            return cache[route]
        q, u = list(self.chart.coordinates), list(self.chart.velocities)
        params = [to_engine(s) for s in self.chart.parameters]
        if route == "multipliers":
            W, F, A, r = self._multiplier_parts
            n, k = len(q), A.rows
            K = sp.zeros(n + k, n + k)
            K[:n, :n] = W
            if k:
                K[:n, n:] = -A.T
                K[n:, :n] = A
            exprs = list(u) + list(K) + list(F) + list(r)
            state = q + u
            prog = Program.from_expressions([to_engine(s) for s in state] + params, [to_engine(e) for e in exprs])
            fn = generate(prog, [("y", [to_engine(s) for s in state]), ("p", params)], solve=(n, n + k))
            cache[route] = (fn, 2 * n)
        else:
            fld = self.field()
            exprs = list(fld.velocity_field()) + list(fld.accelerations)
            state = list(self.states)
            prog = Program.from_expressions([to_engine(s) for s in state] + params, [to_engine(e) for e in exprs])
            fn = generate(prog, [("y", [to_engine(s) for s in state]), ("p", params)])
            cache[route] = (fn, fn.size)
        return cache[route]

    @cached_property
    def _multiplier_parts(self) -> tuple:
        """``(W, F, A, r)``: ``W = ∂²L/∂q̇∂q̇``, ``F = ∂L/∂q − (∂²L/∂q̇∂q) q̇ + Q``, ``A = ∂φ/∂q̇``,
        ``r = −(∂φ/∂q) q̇`` (the differentiated constraints ``A q̈ = r``)."""
        L = self.lagrangian.natural_expr()
        q, u = self.chart.coordinates, self.chart.velocities
        n = len(q)
        Lu = [L.diff(v) for v in u]
        W = sp.Matrix(n, n, lambda a, b: Lu[a].diff(u[b]) if a <= b else 0)
        W = W + W.T - sp.diag(*[W[a, a] for a in range(n)])
        F = sp.Matrix([L.diff(q[a]) - sp.Add(*[Lu[a].diff(q[b]) * u[b] for b in range(n)]) + self.forces[a]
                       for a in range(n)])
        A = sp.Matrix(len(self.constraints), n, lambda a, b: self.constraints[a].diff(u[b]))
        r = sp.Matrix([-sp.Add(*[c.diff(q[b]) * u[b] for b in range(n)]) for c in self.constraints])
        return W, F, A, r

    def multiplier_form(self) -> tuple:
        """``(M, F, x)`` with ``M ẋ = F`` for the state ``x = (q, q̇, λ)``: the coordinate multiplier method
        of Lagrange–d'Alembert (LagrangesMethod's ``mass_matrix_full``/``forcing_full`` layout),

        ``[[1, 0, 0], [0, W, −Aᵀ], [0, A, 0]] (q̇, q̈, λ) = (q̇, ∂L/∂q − (∂²L/∂q̇∂q) q̇ + Q, −(∂φ/∂q) q̇)``,

        i.e. ``E_A(L) = Q_A + λ_a ∂φ_a/∂q̇^A`` with the constraints differentiated once (Neimark &
        Fufaev (1972) Ch. III; docs/theory.rst for the sign of λ).  It needs no adapted frame, so it is
        cheap for large models; its "λ-rows" are algebraic (the last block of ``ẋ`` is not a derivative).
        """
        W, F, A, r = self._multiplier_parts
        q, u = list(self.chart.coordinates), list(self.chart.velocities)
        n, k = len(q), A.rows
        lam = list(sp.symbols(f"lambda_1:{k + 1}", real=True)) if k else []
        M = sp.zeros(2 * n + k, 2 * n + k)
        M[:n, :n] = sp.eye(n)
        M[n:2 * n, n:2 * n] = W
        if k:
            M[n:2 * n, 2 * n:] = -A.T
            M[2 * n:, n:2 * n] = A
        rhs = sp.Matrix(u + list(F) + list(r))
        return M, rhs, tuple(q + u + lam)

    def _values(self, values) -> dict:
        given = dict(self.values or {})
        given.update(values or {})
        by_name = {p.name: p for p in self.chart.parameters}
        out = {}
        for k, v in given.items():
            name = k if isinstance(k, str) else getattr(k, "name", str(k))
            if name in by_name:
                out[by_name[name]] = sp.Float(v) if isinstance(v, float) else sympified(v, f"values[{name}]")
        missing = [p.name for p in self.chart.parameters if p not in out]
        if missing:
            raise MechanicsModelError(f"no values for the parameters {missing}; pass values={{name: number}}.")
        return out

    # --- output -------------------------------------------------------------------------------
    def to_toml(self, values: Mapping | None = None) -> str:
        """A system file (docs/systemfile.rst) for ``anholo analyze``.

        Keys: ``coordinates``, ``parameters``, ``lagrangian``, ``constraints``, and, when present,
        ``holonomic = ["f(q)", …]`` and ``forces = ["Q_1", …]`` (one per coordinate) and
        ``[values]`` (``[signs]`` marks parameters with negative values as ``real``).  With holonomic
        constraints, ``constraints`` lists :attr:`nonholonomic_constraints` (a file's holonomic
        constraints are differentiated into D by the reader).
        """

        def s(e):
            return str(e).replace("**", "^")

        def arr(items):
            return "[\n" + "".join(f'    "{s(e)}",\n' for e in items) + "]"

        lines = [f'name = "{self.name}"',
                 'description = "Built by anholo.from_mechanics from a sympy.physics.mechanics model."',
                 "coordinates = [" + ", ".join(f'"{q.name}"' for q in self.chart.coordinates) + "]",
                 "parameters = [" + ", ".join(f'"{p.name}"' for p in self.chart.parameters) + "]",
                 f'lagrangian = """\n{s(self.lagrangian.natural_expr())}\n"""']
        if self.nonholonomic_constraints:
            lines.append("constraints = " + arr(self.nonholonomic_constraints))
        if self.holonomic:
            lines.append("holonomic = " + arr(self.holonomic))
        if self.has_forces:
            lines.append("forces = " + arr(self.forces))
        vals = dict(self.values or {})
        vals.update(values or {})
        if vals:
            named = {(k if isinstance(k, str) else k.name): v for k, v in vals.items()}
            named = {k: v for k, v in named.items() if k in {p.name for p in self.chart.parameters}}
            negative = [k for k, v in named.items() if float(v) <= 0]
            if negative:
                lines.append("\n[signs]")
                lines += [f'{k} = "real"' for k in negative]
            lines.append("\n[values]")
            lines += [f"{k} = {float(v)!r}" for k, v in named.items()]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "coordinates": [q.name for q in self.chart.coordinates],
            "parameters": [p.name for p in self.chart.parameters],
            "added": {str(k): v for k, v in self.added.items()},
            "kinetic_energy": str(self.kinetic_energy),
            "potential_energy": str(self.potential_energy),
            "constraints": [str(c) for c in self.constraints],
            "holonomic": [str(c) for c in self.holonomic],
            "forces": [str(f) for f in self.forces],
            "speeds": {k: str(v) for k, v in self.speeds.items()},
        }

    def __str__(self):
        lines = [f"Model {self.name} from sympy.physics.mechanics: coordinates "
                 f"{', '.join(q.name for q in self.chart.coordinates)}"]
        lines += [f"  added {q}: {why}" for q, why in self.added.items()]
        lines.append(f"  T, V: {dag_size(self.kinetic_energy)}, {dag_size(self.potential_energy)} nodes")
        lines += [f"  constraint {_short(c)} = 0" for c in self.constraints]
        lines += [f"  holonomic {_short(c)} = 0" for c in self.holonomic]
        if self.has_forces:
            lines += [f"  Q_{q.name} = {_short(f)}" for q, f in zip(self.chart.coordinates, self.forces)]
        return "\n".join(lines)

    def as_latex(self) -> str:
        rows = [f"L &= {latex(self.lagrangian.natural_expr())}"]
        rows += [f"0 &= {latex(c)}" for c in self.constraints + self.holonomic]
        rows += [f"Q_{{{latex(q)}}} &= {latex(f)}" for q, f in zip(self.chart.coordinates, self.forces) if f != 0]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"


def _short(e, limit: int = 160) -> str:
    text = str(e)
    return text if len(text) <= limit else f"<expression of {dag_size(e)} nodes>"


# --- reading the model --------------------------------------------------------------------------

def _from_source(source, kw: dict) -> dict:
    """The keyword arguments of :func:`from_mechanics` read off a KanesMethod or a System."""
    me = _mech()
    if isinstance(source, me.KanesMethod):
        u = list(source.u)
        qd = list(source.q.diff(me.dynamicsymbols._t))
        kd = []
        if getattr(source, "_k_kqdot_implicit", None) is not None and len(source._k_kqdot_implicit):
            kd = list(source._k_kqdot_implicit * sp.Matrix(qd) + source._k_ku_implicit * sp.Matrix(u)
                      + source._f_k_implicit)
        vel = list(source._k_nh * sp.Matrix(u) + source._f_nh) if len(source._k_nh) else []
        out = dict(frame=source._inertial, coordinates=list(source.q), speeds=u, kd_eqs=kd,
                   velocity_constraints=vel, holonomic_constraints=list(source._f_h),
                   bodies=list(source.bodies or ()), loads=list(source.loads or ()),
                   independent_speeds=len(u) - len(vel), dependent_speeds=list(source._udep))
    elif isinstance(source, me.System):
        vel = list(source.nonholonomic_constraints)
        out = dict(frame=source.frame, coordinates=list(source.q), speeds=list(source.u), kd_eqs=list(source.kdes),
                   velocity_constraints=vel, holonomic_constraints=list(source.holonomic_constraints),
                   bodies=list(source.bodies),
                   loads=list(source.loads) + [ld for a in source.actuators for ld in a.to_loads()],
                   independent_speeds=len(source.u) - len(vel) - len(source.holonomic_constraints),
                   dependent_speeds=list(source.u_dep))
    else:
        raise MechanicsModelError(
            f"from_mechanics reads a KanesMethod, a System or a ReferenceFrame with keywords, not {type(source).__name__}.")
    for k, v in kw.items():
        if v is not None and (v != () if not isinstance(v, sp.Basic) else True):
            out[k] = v
    return out


def _checked_arguments(me, source, *, frame, bodies, loads, coordinates, speeds, kd_eqs, velocity_constraints,
                       holonomic_constraints, origin, name, values) -> dict:
    """The keyword arguments of :func:`from_mechanics` checked (an :class:`ArgumentError` naming the argument
    and what it takes), as tuples; a coordinate or speed given by name is ``dynamicsymbols(name)`` (the same
    object as the one the bodies' positions use, SymPy compares undefined functions by name)."""
    if source is not None and not isinstance(source, (me.ReferenceFrame, me.KanesMethod, me.System)):
        raise ArgumentError(f"from_mechanics: the first argument must be a KanesMethod, a System or the inertial "
                            f"ReferenceFrame, got {type(source).__name__} {printable(repr(source))[:60]}.")
    if frame is not None and not isinstance(frame, me.ReferenceFrame):
        raise ArgumentError(f"from_mechanics: frame= must be a ReferenceFrame (the inertial frame N), got "
                            f"{type(frame).__name__}.")
    if origin is not None and not isinstance(origin, me.Point):
        raise ArgumentError(f"from_mechanics: origin= must be a Point, got {type(origin).__name__}.")
    if not isinstance(name, str):
        raise ArgumentError(f"from_mechanics: name= must be a string, got {type(name).__name__}.")
    if values is not None and not isinstance(values, Mapping):
        raise ArgumentError(f"from_mechanics: values= must be a dict symbol or name -> number, got "
                            f"{type(values).__name__}.")
    out = {"frame": frame}
    t = me.dynamicsymbols._t
    for key, value in (("coordinates", coordinates), ("speeds", speeds)):
        items = []
        for i, item in enumerate(as_sequence(value, f"from_mechanics: {key}", what="dynamic symbols")):
            if isinstance(item, str):
                if not item.isidentifier():
                    raise ArgumentError(f"from_mechanics: {key}[{i}] = {printable(repr(item))[:60]} is not a name; "
                                        "give dynamicsymbols('q1') or its name 'q1'.")
                item = me.dynamicsymbols(item)
            if not (isinstance(item, AppliedUndef) and item.args == (t,)):
                raise ArgumentError(f"from_mechanics: {key}[{i}] must be a dynamic symbol (dynamicsymbols('q1')), "
                                    f"got {type(item).__name__} {printable(repr(item))[:60]}.")
            items.append(item)
        out[key] = tuple(items)
    for key, value in (("kd_eqs", kd_eqs), ("velocity_constraints", velocity_constraints),
                       ("holonomic_constraints", holonomic_constraints)):
        items = as_sequence(value, f"from_mechanics: {key}", what="SymPy expressions")
        for i, item in enumerate(items):
            if not isinstance(item, sp.Expr) and not (isinstance(item, (int, float)) and not isinstance(item, bool)):
                raise ArgumentError(f"from_mechanics: {key}[{i}] must be a SymPy expression in the dynamic symbols "
                                    f"(each = 0), got {type(item).__name__} {printable(repr(item))[:60]}.")
        out[key] = tuple(items)
    bodies = as_sequence(bodies, "from_mechanics: bodies", what="RigidBody or Particle objects")
    for i, body in enumerate(bodies):
        if not isinstance(body, (me.RigidBody, me.Particle)):
            raise ArgumentError(f"from_mechanics: bodies[{i}] must be a RigidBody or a Particle, got "
                                f"{type(body).__name__} {printable(repr(body))[:60]}.")
    out["bodies"] = bodies
    loads = as_sequence(loads, "from_mechanics: loads", what="(Point, force) or (ReferenceFrame, torque) pairs")
    for i, load in enumerate(loads):
        if not (isinstance(load, tuple) and len(load) == 2 and isinstance(load[0], (me.Point, me.ReferenceFrame))
                and isinstance(load[1], me.Vector)):
            raise ArgumentError(f"from_mechanics: loads[{i}] must be a pair (Point, force vector) or (ReferenceFrame, "
                                f"torque vector), got {printable(repr(load))[:80]}.")
    out["loads"] = loads
    return out


def from_mechanics(source=None, *, frame=None, bodies=(), loads=(), coordinates=(), speeds=(), kd_eqs=(),
                   velocity_constraints=(), holonomic_constraints=(), origin=None, name: str = "mechanics model",
                   values: Mapping | None = None) -> MechanicsModel:
    """An anholo model from sympy.physics.mechanics objects (see the module docstring).

    Parameters
    ----------
    source : KanesMethod, System or ReferenceFrame, optional
        A KanesMethod (its coordinates, speeds, kinematic differential equations, constraints, and the
        bodies and loads given to it or to ``kanes_equations``), a ``System``, or the inertial frame.
        Keywords override what the source says.
    frame : ReferenceFrame
        The inertial frame N (when ``source`` is not given).
    bodies : sequence of RigidBody / Particle
    loads : sequence of ``(Point, force)`` or ``(ReferenceFrame, torque)``
    coordinates : sequence of dynamic symbols
        All generalized coordinates (independent and dependent).
    speeds : sequence of dynamic symbols
        All generalized speeds.
    kd_eqs : sequence of expressions
        Kinematic differential equations, each = 0, linear in the speeds and in ``q̇``.
    velocity_constraints, holonomic_constraints : sequences of expressions, each = 0
    origin : Point, optional
        The root point whose Cartesian position is added to the coordinates (default: a point with
        zero velocity in N connected to the mass centres).
    name : str
    values : mapping, optional
        Parameter values (symbols or names → numbers), kept for :meth:`MechanicsModel.ode_function`
        and :meth:`MechanicsModel.to_toml`.

    Raises
    ------
    MechanicsModelError
        If the model cannot be completed to a configuration manifold (see the module docstring).

    Examples
    --------
    A particle in a vertical plane (gravity along −N.y; the Cartesian origin is fixed):

    >>> import sympy as sp
    >>> from sympy.physics.mechanics import ReferenceFrame, Point, Particle, dynamicsymbols
    >>> x, y = dynamicsymbols("x y")
    >>> m, g = sp.symbols("m g")
    >>> N = ReferenceFrame("N"); O = Point("O"); O.set_vel(N, 0)
    >>> P = O.locatenew("P", x*N.x + y*N.y)
    >>> model = from_mechanics(N, bodies=[Particle("p", P, m)], loads=[(P, -m*g*N.y)], coordinates=[x, y])
    >>> model.lagrangian.natural_expr()
    -g*m*y + m*(x_dot**2 + y_dot**2)/2
    """
    me = _mech()
    kw = _checked_arguments(me, source, frame=frame, bodies=bodies, loads=loads, coordinates=coordinates,
                            speeds=speeds, kd_eqs=kd_eqs, velocity_constraints=velocity_constraints,
                            holonomic_constraints=holonomic_constraints, origin=origin, name=name, values=values)
    expected, dep_speeds = None, ()
    if source is not None and not isinstance(source, me.ReferenceFrame):
        spec = _from_source(source, kw)
        expected = spec.pop("independent_speeds")
        dep_speeds = spec.pop("dependent_speeds")
    else:
        spec = dict(kw)
        if source is not None:
            spec["frame"] = source
    if spec["frame"] is None:
        raise MechanicsModelError("from_mechanics needs the inertial frame: from_mechanics(N, bodies=..., ...).")
    if not spec["bodies"]:
        raise MechanicsModelError("from_mechanics needs bodies (RigidBody or Particle): bodies=[...].")
    return _Builder(name=name, values=values, origin=origin, expected=expected, dependent_speeds=dep_speeds,
                    **spec).build()


class _Builder:
    """The steps of :func:`from_mechanics`, in the order of the module docstring."""

    def __init__(self, frame, bodies, loads, coordinates, speeds, kd_eqs, velocity_constraints,
                 holonomic_constraints, name, values, origin, expected, dependent_speeds=()):
        me = _mech()
        self.me, self.N, self.t = me, frame, me.dynamicsymbols._t
        self.bodies, self.loads = list(bodies), list(loads)
        self.q = list(coordinates)
        self.u = [s for s in speeds]
        self.kd = [sp.sympify(e) for e in kd_eqs]
        self.vel = [sp.sympify(e) for e in velocity_constraints]
        self.hol = [sp.sympify(e) for e in holonomic_constraints]
        self.name, self.values, self.origin, self.expected = name, values, origin, expected
        self.dependent_speeds = list(dependent_speeds)
        self.added = {}
        self.rng = random.Random(1)

    # --- symbols ------------------------------------------------------------------------------
    def _taken(self) -> set:
        names = {_name(q) for q in self.q} | {_name(s) for s in self.u} | {q.name for q in self.added}
        return names | {f"{n}_dot" for n in names}

    def _new_coordinate(self, preferred: str, fallback: str):
        taken = self._taken() | {s.name for s in self._parameter_names}
        nm = preferred if preferred not in taken else fallback
        while nm in taken:
            nm += "_"
        return self.me.dynamicsymbols(nm)

    @cached_property
    def _parameter_names(self) -> set:
        """Symbols of the model (masses, inertias, lengths in positions, loads), so added coordinates avoid them."""
        me = self.me

        def of_vector(v):
            return set().union(*(M.free_symbols for M, _F in v.args)) if v.args else set()

        out = set()
        for b in self.bodies:
            P = b.masscenter
            out |= sp.sympify(b.mass).free_symbols
            for X in self._tree(P):
                for v in X._pos_dict.values():
                    out |= of_vector(v)
            if isinstance(b, me.RigidBody):
                out |= set().union(*(sp.sympify(c).free_symbols for c, _a, _b in b.central_inertia.args))
        for load in self.loads:
            out |= of_vector(load[1])
        for e in self.kd + self.vel + self.hol:
            out |= e.free_symbols
        return {s for s in out if isinstance(s, sp.Symbol)} - {self.t}

    # --- speeds -------------------------------------------------------------------------------
    def _solve_kd(self) -> dict:
        """``u = g(q, q̇)`` from the kinematic differential equations (for the speeds they contain)."""
        if not self.kd:
            return {}
        s_kd = [s for s in self.u if any(e.has(s) for e in self.kd)]
        if len(s_kd) != len(self.kd):
            raise MechanicsModelError(
                f"the {len(self.kd)} kinematic differential equations contain {len(s_kd)} speeds "
                f"{[_name(s) for s in s_kd]}; give one equation per speed that has a coordinate.")
        A = sp.Matrix([[e.diff(s) for s in s_kd] for e in self.kd])
        if any(a.has(*s_kd) for a in A):
            raise MechanicsModelError("the kinematic differential equations are not linear in the speeds.")
        b = -sp.Matrix([e.xreplace({s: 0 for s in s_kd}) for e in self.kd])
        if A.is_diagonal():
            sol = [b[i] / A[i, i] for i in range(len(s_kd))]
        else:
            try:
                sol = list(A.LUsolve(b))
            except (ValueError, ZeroDivisionError):
                raise MechanicsModelError("the kinematic differential equations cannot be solved for the speeds "
                                          f"{[_name(s) for s in s_kd]}.") from None
        return dict(zip(s_kd, sol))

    def _dcm_known(self, F) -> bool:
        try:
            F.dcm(self.N)
            return True
        except ValueError:
            return False

    def _body_frames(self) -> list:
        return [b.frame for b in self.bodies if isinstance(b, self.me.RigidBody)]

    def _wheel_angles(self, umap: dict) -> None:
        """Speeds without kinematic equation: the rate ``s`` of a frame about an axis fixed in its parent."""
        left = [s for s in self.u if s not in umap]
        for B in self._body_frames():
            if not left or self._dcm_known(B):
                continue
            for A, w in B._ang_vel_dict.items():
                if A is B or not self._dcm_known(A):
                    continue
                comps = w.to_matrix(A)
                hit = [s for s in left if any(c.has(s) for c in comps)]
                if len(hit) != 1:
                    continue
                s = hit[0]
                axis = (comps / s).applyfunc(sp.simplify)
                if axis.has(self.t) or any(a.has(s) for a in axis):
                    continue
                nm = _name(s)
                theta = self._new_coordinate("q" + nm[1:] if nm.startswith("u") else f"{B.name}_angle",
                                             f"{B.name}_angle")
                umap[s] = theta.diff(self.t)
                self.q.append(theta)
                self.added[theta] = f"angle of {B.name} about an axis fixed in {A.name} (rate {nm})"
                left.remove(s)
                break
        if left:
            raise MechanicsModelError(
                f"the speeds {[_name(s) for s in left]} have no kinematic differential equation and are not the "
                "rate of a body's frame about an axis fixed in a frame with known orientation; give them "
                "coordinates (kd_eqs).")

    # --- points -------------------------------------------------------------------------------
    @staticmethod
    def _point(body):
        return body.masscenter

    def _tree(self, P) -> list:
        seen, todo = [P], [P]
        while todo:
            X = todo.pop(0)
            for Y in X._pos_dict:
                if Y not in seen:
                    seen.append(Y)
                    todo.append(Y)
        return seen

    def _roots(self) -> dict:
        """``{mass centre: root point}``; each connected tree of points has one root."""
        out, roots = {}, []
        for b in self.bodies:
            P = self._point(b)
            if P in out:
                continue
            tree = self._tree(P)
            if self.origin is not None and self.origin in tree:
                root = self.origin
            else:
                still = [X for X in tree if self.N in X._vel_dict and X._vel_dict[self.N] == self.me.Vector(0)]
                root = still[0] if still else P
            roots.append(root)
            for X in tree:
                out[X] = root
        return out

    def build(self) -> MechanicsModel:
        me, N, t = self.me, self.N, self.t
        umap = self._solve_kd()
        self._wheel_angles(umap)
        roots = self._roots()
        root_list = list(dict.fromkeys(roots.values()))
        names = ("x", "y", "z")
        r0 = {}
        for R in root_list:
            comps = []
            for k, c in enumerate(names):
                pre = c if len(root_list) == 1 else f"{R.name}_{c}"
                X = self._new_coordinate(pre, f"{R.name}_{c}")
                self.q.append(X)
                self.added[X] = f"{c}-coordinate of the point {R.name} in {N.name}"
                comps.append(X)
            r0[R] = comps[0] * N.x + comps[1] * N.y + comps[2] * N.z

        # symbols of the chart
        qs = self.q
        sym = {}
        for q in qs:
            sym[q.diff(t)] = velocity_symbol(sp.Symbol(_name(q), real=True))
            sym[q] = sp.Symbol(_name(q), real=True)
        self.sym = sym

        def conv(e):
            return sp.sympify(e).xreplace(umap).xreplace(sym)

        def vconv(v):
            return _vmap(v, conv)

        def true_velocity(P):
            R = roots[P]
            return vconv(r0[R].dt(N) + P.pos_from(R).dt(N))

        def position(P):
            R = roots[P]
            return vconv(r0[R] + P.pos_from(R))

        # the angular velocities the model sets must be the derivatives of the orientations
        self._check_angular_velocities(conv)

        T, cons = sp.S.Zero, []
        for b in self.bodies:
            P = self._point(b)
            v = true_velocity(P)
            T += conv(b.mass * v.dot(v)) / 2
            if isinstance(b, me.RigidBody):
                w = vconv(b.frame.ang_vel_in(N))
                T += conv(w.dot(b.central_inertia.dot(w))) / 2
            c = vconv(P.vel(N)) - v
            cons += [e for e in (conv(e) for e in c.to_matrix(N)) if e != 0]
        V = sp.S.Zero
        for b in self.bodies:
            V += conv(getattr(b, "potential_energy", 0) or 0)
        Q = [sp.S.Zero] * len(qs)
        qdots = [sym[q.diff(t)] for q in qs]
        mass_centres = {self._point(b) for b in self.bodies}
        state = set(qdots) | {sym[q] for q in qs}
        for load in self.loads:
            loc, vec = load[0], load[1]
            if isinstance(loc, me.ReferenceFrame):
                w = vconv(loc.ang_vel_in(N))
                tau = vconv(vec)
                for A, qd in enumerate(qdots):
                    Q[A] += conv(tau.dot(w.diff(qd, N)))
                continue
            F = vconv(vec)
            constant = not any(conv(e).free_symbols & state or conv(e).has(t) for e in F.to_matrix(N))
            if constant and loc in roots and (loc in mass_centres or self._consistent(loc, true_velocity, vconv, conv)):
                V -= conv(F.dot(position(loc)))
                continue
            # partial velocities: of the true velocity at a mass centre (equal to the model's on D, and
            # right off D too, where the multipliers live), of the model's velocity elsewhere (a material
            # point of a body, such as a wheel's contact point)
            v = true_velocity(loc) if loc in mass_centres else vconv(loc.vel(N))
            for A, qd in enumerate(qdots):
                Q[A] += conv(F.dot(v.diff(qd, N)))

        chart_q = [sym[q] for q in qs]
        velocity_cons = [conv(e) for e in self.vel]
        hol = [conv(e) for e in self.hol]
        hol_dot = [sp.Add(*[h.diff(qq) * qd for qq, qd in zip(chart_q, qdots)]) for h in hol]
        cons = sorted(cons, key=dag_size)
        candidates = velocity_cons + hol_dot + cons
        params = self._parameters(T, V, candidates, Q, hol, set(chart_q) | set(qdots))
        psub = {p: sp.Symbol(p.name, real=True) for p in params}
        T, V = T.xreplace(psub), V.xreplace(psub)
        candidates = [c.xreplace(psub) for c in candidates]
        Q = [f.xreplace(psub) for f in Q]
        hol = [h.xreplace(psub) for h in hol]
        point = random_point(set(chart_q) | set(psub.values()), self.rng)

        # independent constraints; root coordinates whose velocity they force to vanish are removed
        kept = _independent(candidates, qdots, point)
        root_syms = [sym[X] for R in root_list for X in self.q if X in self.added and "-coordinate" in self.added[X]]
        drop = [x for x in root_syms if _implied(kept, qdots, point, qdots[chart_q.index(x)])]
        if drop:
            zero = {x: 0 for x in drop}
            zero.update({qdots[chart_q.index(x)]: 0 for x in drop})
            T, V = T.xreplace(zero), V.xreplace(zero)
            idx = [i for i, x in enumerate(chart_q) if x not in drop]
            chart_q = [chart_q[i] for i in idx]
            qdots = [qdots[i] for i in idx]
            Q = [Q[i].xreplace(zero) for i in idx]
            kept = _independent([c.xreplace(zero) for c in kept], qdots, point)
            dropped_dyn = [q for q in self.q if sym[q] in drop]
            for q in dropped_dyn:
                self.added.pop(q)
            self.q = [q for q in self.q if sym[q] not in drop]
        # square roots (a contact point on an ellipsoid) make cancel's generators explode: kept as written
        kept = [tidy(c) if not size_exceeds(c, _TIDY_LIMIT) and not _has_roots(c) else c for c in kept]
        if any(c.xreplace({u: 0 for u in qdots}) != 0 and not _numerically_zero(c.xreplace({u: 0 for u in qdots}), point)
               for c in kept):
            raise MechanicsModelError("a velocity constraint has terms free of velocities (affine constraints, "
                                      "e.g. a moving support) — not read from sympy models yet.")
        for e in [T, V] + kept + Q:
            if e.has(t):
                raise MechanicsModelError("the model depends on the time explicitly (a driven support or a "
                                          "time-dependent load); from_mechanics reads autonomous models only.")
        n, k = len(chart_q), len(kept)
        if self.expected is not None and n - k != self.expected:
            raise MechanicsModelError(
                f"the model has {self.expected} independent speeds but its constraints leave {n - k} free velocities "
                f"on the {n} coordinates {[s.name for s in chart_q]}; check the velocity constraints.")
        chart = Chart(chart_q, velocities=qdots, parameters=sorted(psub.values(), key=lambda s: s.name))
        L = Lagrangian(Frame.coordinate(chart), T - V)
        speeds = {_name(s): conv(g).xreplace(psub) for s, g in umap.items()}
        dependent = [sym[X] for X in self.q if X in self.added and "-coordinate" in self.added[X]]
        dependent += [conv(umap[s]) for s in self.dependent_speeds if s in umap]
        dependent = [chart_q[qdots.index(d)] if d in qdots else d for d in dependent]
        dependent = tuple(dependent) if len(set(dependent)) == k and set(dependent) <= set(chart_q) else None
        symbols = dict(sym)
        symbols.update(psub)
        model = MechanicsModel(
            name=self.name, chart=chart, lagrangian=L, kinetic_energy=T, potential_energy=V,
            constraints=tuple(kept), holonomic=tuple(hol), forces=tuple(Q), speeds=speeds,
            added={sym[q]: why for q, why in self.added.items()}, symbols=symbols,
            values=_named_values(self.values), dynamic_speeds=dict(umap), dependent=dependent)
        return model

    def _consistent(self, P, true_velocity, vconv, conv) -> bool:
        """True if the model's velocity of P is the derivative of its position (at a random point)."""
        d = [conv(e) for e in (vconv(P.vel(self.N)) - true_velocity(P)).to_matrix(self.N)]
        syms = set().union(*(e.free_symbols for e in d))
        pt = random_point(syms, self.rng)
        return all(abs(numeric_value(e, pt)) < 1e-10 for e in d)

    def _check_angular_velocities(self, conv) -> None:
        """``ω_B`` as the model sets it equals ``(Ṙ Rᵀ)^∨`` (``R = N.dcm(B)``), at a random point, for the
        bodies' frames and the frames in which positions are written (their derivatives use ``ω``)."""
        t = self.t
        frames = list(self._body_frames())
        for b in self.bodies:
            for X in self._tree(b.masscenter):
                for v in X._pos_dict.values():
                    frames += [F for _M, F in v.args]
        for B in dict.fromkeys(frames):
            if not self._dcm_known(B):
                continue
            R = self.N.dcm(B)
            W = R.diff(t) * R.T
            true = [W[2, 1], W[0, 2], W[1, 0]]
            model = list(B.ang_vel_in(self.N).to_matrix(self.N))
            d = [conv(a - b) for a, b in zip(model, true)]
            syms = set().union(*(e.free_symbols for e in d))
            pt = random_point(syms, self.rng)
            if any(abs(numeric_value(e, pt)) > 1e-9 for e in d):
                raise MechanicsModelError(
                    f"the angular velocity of {B.name} in {self.N.name} is not the time derivative of its orientation "
                    "once the speeds are replaced by the kinematic differential equations; set it consistently.")

    def _parameters(self, T, V, cons, Q, hol, chart_symbols) -> list:
        out = set()
        for e in [T, V, *cons, *Q, *hol]:
            out |= sp.sympify(e).free_symbols
        out -= set(chart_symbols) | {self.t}
        return sorted(out, key=lambda s: s.name)


def _named_values(values) -> dict | None:
    if not values:
        return None
    return {(k if isinstance(k, str) else str(k)): v for k, v in values.items()}


def _numerically_zero(e, point) -> bool:
    syms = e.free_symbols - set(point)
    pt = dict(point)
    pt.update(random_point(syms, random.Random(3)))
    return abs(numeric_value(e, pt)) < 1e-10


def _rows(exprs, velocities, point) -> np.ndarray:
    """The coefficient rows ``∂φ/∂q̇`` at a random point (velocities set to random values too)."""
    syms = set().union(*(e.free_symbols for e in exprs)) - set(point) - set(velocities) if exprs else set()
    pt = dict(point)
    pt.update(random_point(syms, random.Random(7)))
    return np.array([[complex(numeric_value(e.diff(u), pt)).real for u in velocities] for e in exprs], float)


def _rank(M: np.ndarray) -> int:
    if M.size == 0:
        return 0
    s = np.linalg.svd(M, compute_uv=False)
    return int((s > _RANK_TOL * max(1.0, s[0])).sum())


def _independent(exprs, velocities, point) -> list:
    """A maximal independent sublist of the linear constraints ``exprs`` (greedy, in order)."""
    kept, rows = [], np.zeros((0, len(velocities)))
    for e in exprs:
        if e == 0:
            continue
        row = _rows([e], velocities, point)
        trial = np.vstack([rows, row])
        if _rank(trial) > rows.shape[0]:
            kept.append(e)
            rows = trial
    return kept


def _implied(kept, velocities, point, velocity) -> bool:
    """True if ``velocity = 0`` follows from the constraints ``kept``."""
    rows = _rows(kept, velocities, point) if kept else np.zeros((0, len(velocities)))
    unit = np.array([[1.0 if u == velocity else 0.0 for u in velocities]])
    return _rank(np.vstack([rows, unit])) == _rank(rows)


def _has_roots(expr) -> bool:
    """True if ``expr`` has a power with a non-integer exponent of a non-symbol (``(…)^(3/2)``)."""
    return any(not p.exp.is_Integer and not p.base.is_Symbol for p in expr.atoms(sp.Pow))

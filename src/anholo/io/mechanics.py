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
``T = Σ ½ m v_P·v_P + ½ ω_B·I_B·ω_B``, each body's term written in its own axes as a sum of squares
(not multiplied out: the structure of the bodies is what keeps the programs formed from L small); V is the potential of the forces that are constant in N
(``V = −F·r_P``, gravity) plus the bodies' ``potential_energy``; the other loads give
``Q_A = Σ F·∂v_P/∂q̇^A + Σ τ·∂ω_B/∂q̇^A`` (Kane's partial velocities, Kane & Levinson (1985) §4.4; at
a mass centre of the true velocity, at another point of the velocity the model states — a material
point such as a wheel's contact point).  On the constraint distribution D these are Kane's generalized
active forces, so Γ_nh (docs/nonholonomic.rst) and Kane's equations have the same solutions.

A ``LagrangesMethod`` states L itself: it is read as written (``V = −L|_{q̇=0}``), with its constraints in its
order (the derivatives of ``hol_coneqs``, then ``nonhol_coneqs``) and the generalized forces of its ``forcelist``.

The way back in the user's symbols: :meth:`MechanicsModel.in_user_symbols` (module
:mod:`anholo.io.mechanics_roundtrip`) gives the equations in the user's dynamic symbols and state, with
KanesMethod's (or LagrangesMethod's) ``mass_matrix_full``, ``forcing_full``, ``kindiffdict()``, ``rhs()``,
``linearize()``, and is accepted by ``pydy.System``.  In anholo's own state:
:attr:`MechanicsModel.mass_matrix_full` and :attr:`MechanicsModel.forcing_full`
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
from typing import Mapping

import sympy as sp
from sympy.core.function import AppliedUndef

from ..algebra import dag_size, random_point
from ..algebra.codegen import generate
from ..algebra.engine import to_engine
from ..algebra.printing import latex
from ..algebra.program import Program
from ..dynamics.lagrangian import Lagrangian
from ..dynamics.nonholonomic import NonholonomicSystem
from ..errors import ArgumentError, MechanicsModelError, printable
from ..geometry.chart import Chart
from ..parsing import as_sequence, sympified
from .mechanics_build import _Builder, _independent, _mech, _vmap, build_from_lagranges
from .mechanics_roundtrip import KaneForm, LagrangeForm, UserModel

__all__ = ["MechanicsModel", "from_mechanics", "KaneForm", "LagrangeForm"]


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
    signs : dict
        ``{parameter name: sign}`` for the parameters that are not known positive (the sign the user declared,
        ``"real"`` for a load symbol declared without one); :meth:`to_toml` writes them as ``[signs]``.
    user : UserModel
        The model as its user wrote it (dynamic symbols, speeds, kinematic differential equations,
        constraints), for :meth:`in_user_symbols`.
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
    signs: dict = None
    user: UserModel = field(default=None, repr=False)

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

    # --- the way back -------------------------------------------------------------------------
    def in_user_symbols(self):
        """The equations of motion in the user's own symbols and states, as sympy.physics.mechanics writes them.

        For a model with speeds (a KanesMethod, a System, or keywords with ``speeds``/``kd_eqs``) a
        :class:`~anholo.io.mechanics.KaneForm`: state ``(q, u)`` of the user's dynamic symbols,
        ``mass_matrix_full``/``forcing_full`` of KanesMethod's shape and meaning, ``kindiffdict()``,
        ``rhs()``, ``linearize()``; accepted by ``pydy.System``.  For a LagrangesMethod a
        :class:`~anholo.io.mechanics.LagrangeForm`: state ``(q, q̇, λ)`` in LagrangesMethod's layout.
        The coordinates anholo adds (contact points, wheel angles) are ignorable and left out of the state;
        their rates are ``KaneForm.added_rates``.  Cached.

        Raises
        ------
        MechanicsModelError
            If the model was given without speeds (keywords only): there is no user state to return to.
        """
        cached = self.__dict__.get("_user_form")
        if cached is not None:
            return cached
        if self.user is None or (self.user.form == "kane" and not self.user.u):
            raise MechanicsModelError("the model has no speeds of its own; give speeds= and kd_eqs= (or a KanesMethod "
                                      "or LagrangesMethod) to have it back in your symbols.")
        form = KaneForm(self) if self.user.form == "kane" else LagrangeForm(self)
        self.__dict__["_user_form"] = form
        return form

    # --- output -------------------------------------------------------------------------------
    def to_toml(self, values: Mapping | None = None) -> str:
        """A system file (docs/systemfile.rst) for ``anholo analyze``.

        Keys: ``coordinates``, ``parameters``, ``lagrangian``, ``constraints``, and, when present,
        ``holonomic = ["f(q)", …]`` and ``forces = ["Q_1", …]`` (one per coordinate), ``[signs]`` (the signs
        of :attr:`signs`: what the user declared, ``"real"`` for load symbols declared without a sign, and
        ``"real"`` for parameters given negative or zero values) and ``[values]``.  With holonomic
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
        named = {(k if isinstance(k, str) else k.name): v for k, v in vals.items()}
        named = {k: v for k, v in named.items() if k in {p.name for p in self.chart.parameters}}
        signs = dict(self.signs or {})
        for k, v in named.items():
            if float(v) <= 0 and signs.get(k) not in ("real", "negative", "nonpositive"):
                signs[k] = "real" if float(v) < 0 or signs.get(k) != "nonnegative" else "nonnegative"
        if signs:
            lines.append("\n[signs]")
            lines += [f'{k} = "{v}"' for k, v in sorted(signs.items())]
        if named:
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
            "signs": dict(self.signs or {}),
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

    def __getattr__(self, name):
        """What sympy.physics.mechanics and PyDy read from a KanesMethod (``q``, ``u``, ``_uaux``, ``kindiffdict``,
        ...) is in the user's own state ``(q, u)``, not in this model's ``(q̃, v)`` (whose ``mass_matrix``/
        ``forcing`` have another shape and meaning): a one-line error that names :meth:`in_user_symbols`, which
        returns that object (``pydy.System(model.in_user_symbols(), ...)``).  Other names are missing as usual."""
        if name in _USER_STATE_NAMES:
            raise _UserStateRequired(
                f"{type(self).__name__} has no {name!r}: it is written in anholo's state (q, v) - its mass_matrix and "
                f"forcing are not KanesMethod's; use model.in_user_symbols() (the equations in your q and u, with "
                f"{name!r}), e.g. pydy.System(model.in_user_symbols(), ...)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


#: Names a KanesMethod (or LagrangesMethod) has and PyDy or sympy's tools read, that a MechanicsModel does not:
#: the user's state and kinematics (KaneForm/LagrangeForm from :meth:`MechanicsModel.in_user_symbols` has them).
_USER_STATE_NAMES = frozenset({
    "q", "u", "kindiffdict", "rhs", "to_linearizer", "linearize", "added_rates", "mass_matrix_kin", "forcing_kin",
    "_q", "_u", "_uaux", "_qdot", "_udot", "_qdot_u_map", "_k_kqdot", "_f_k", "_k_ku", "_k_nh", "_f_nh", "_k_d",
    "_f_d", "_k_dnh", "_f_dnh", "_fr", "_frstar", "auxiliary_eqs", "bodies", "loads", "forcelist", "bodylist",
    "coneqs", "lam_vec", "_qdots", "_qdoubledots", "_lam_coeffs", "_term1", "_term2", "_term3", "_term4",
})


class _UserStateRequired(MechanicsModelError, AttributeError):
    """A name of the user's state asked of a :class:`MechanicsModel` (an AttributeError too, so ``hasattr`` and
    ``getattr(model, name, default)`` keep working)."""


def _short(e, limit: int = 160) -> str:
    text = str(e)
    return text if len(text) <= limit else f"<expression of {dag_size(e)} nodes>"


# --- reading the model --------------------------------------------------------------------------

def _from_source(source, kw: dict) -> dict:
    """The keyword arguments of :func:`from_mechanics` read off a KanesMethod or a System."""
    me = _mech()
    if isinstance(source, me.KanesMethod):
        explicit = getattr(source, "explicit_kinematics", True)
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
                   independent_speeds=len(u) - len(vel), dependent_speeds=list(source._udep),
                   dependent_coordinates=list(source._qdep), explicit_kinematics=explicit)
    elif isinstance(source, me.System):
        vel = list(source.nonholonomic_constraints)
        out = dict(frame=source.frame, coordinates=list(source.q), speeds=list(source.u), kd_eqs=list(source.kdes),
                   velocity_constraints=vel, holonomic_constraints=list(source.holonomic_constraints),
                   bodies=list(source.bodies),
                   loads=list(source.loads) + [ld for a in source.actuators for ld in a.to_loads()],
                   independent_speeds=len(source.u) - len(vel) - len(source.holonomic_constraints),
                   dependent_speeds=list(source.u_dep), dependent_coordinates=list(source.q_dep))
    else:
        raise MechanicsModelError(
            f"from_mechanics reads a KanesMethod, a LagrangesMethod, a System or a ReferenceFrame with keywords, not "
            f"{type(source).__name__}.")
    for k, v in kw.items():
        if v is not None and (v != () if not isinstance(v, sp.Basic) else True):
            out[k] = v
    return out


def _checked_arguments(me, source, *, frame, bodies, loads, coordinates, speeds, kd_eqs, velocity_constraints,
                       holonomic_constraints, origin, name, values) -> dict:
    """The keyword arguments of :func:`from_mechanics` checked (an :class:`ArgumentError` naming the argument
    and what it takes), as tuples; a coordinate or speed given by name is ``dynamicsymbols(name)`` (the same
    object as the one the bodies' positions use, SymPy compares undefined functions by name)."""
    sources = (me.ReferenceFrame, me.KanesMethod, me.LagrangesMethod, me.System)
    if source is not None and not isinstance(source, sources):
        raise ArgumentError(f"from_mechanics: the first argument must be a KanesMethod, a LagrangesMethod, a System or "
                            f"the inertial ReferenceFrame, got {type(source).__name__} {printable(repr(source))[:60]}.")
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
    source : KanesMethod, LagrangesMethod, System or ReferenceFrame, optional
        A KanesMethod (its coordinates, speeds, kinematic differential equations, constraints, and the
        bodies and loads given to it or to ``kanes_equations``), a LagrangesMethod (its Lagrangian,
        coordinates, ``hol_coneqs``, ``nonhol_coneqs`` and ``forcelist``; no keywords), a ``System``, or the
        inertial frame.  Keywords override what a KanesMethod or System says.
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
    if isinstance(source, me.LagrangesMethod):
        given = [k for k in ("frame", "coordinates", "speeds", "kd_eqs", "velocity_constraints",
                             "holonomic_constraints", "bodies", "loads")
                 if kw[k] is not None and (not isinstance(kw[k], (tuple, list)) or len(kw[k]))]
        if given or origin is not None:
            raise ArgumentError(f"from_mechanics: a LagrangesMethod carries its model; drop the keywords "
                                f"{given + (['origin'] if origin is not None else [])}.")
        return MechanicsModel(**build_from_lagranges(source, name, values))
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
    return MechanicsModel(**_Builder(name=name, values=values, origin=origin, expected=expected,
                                     dependent_speeds=dep_speeds, **spec).build())

"""States for linearising about a relative equilibrium: ignorable coordinates, invariant velocities.

A steady motion of a symmetric system — a rattleback spinning upright, a bicycle running straight — is
a *relative equilibrium*: some coordinates move (the yaw, the position on the ground, the wheel angles)
while the others and suitable velocities stay constant.  Its linearisation is the linearisation of the
*reduced* field, the field of the states ``z`` that remain when the moving coordinates ``q^d`` are
dropped, and it is meaningful only if the field of ``z`` does not depend on them:

    ∂ż/∂q^d = 0   for every dropped coordinate q^d            (the reduced field is defined),
    ż = 0          at the reference state                      (the reference is an equilibrium of it).

Then ``δż = A δz`` is the variational equation along the whole steady motion, and the eigenvalues of
``A`` decide its linear stability (Routh's reduction by ignorable coordinates; for nonholonomic
systems the velocities must themselves be invariant, e.g. body-frame quasi-velocities: Neimark & Fufaev
(1972), Bloch (2003), ch. 5; the rattleback: Kane & Levinson (1982), Garcia & Hubbard (1988); the
bicycle: Meijaard, Papadopoulos, Ruina & Schwab (2007)).  Whether the free velocities are invariant
depends on the choice of the dependent ones: for the rattleback, free ``ẋ, ẏ`` (the contact point's
velocity on the ground) rotate with the yaw, so their field depends on the yaw, which moves; free
angular rates (dependent ``ẋ, ẏ``) do not.

:func:`choose_states` finds the largest set of ignorable coordinates (the greatest fixed point of
"drop a coordinate if no kept state's rate depends on it"), decided numerically at the reference state
and at random states near it (:class:`~anholo.algebra.decision.Decision`); if the kept states are not
an equilibrium at the reference, it tries the velocities of ignorable coordinates as the dependent ones
(so that the free velocities are the remaining rates); :func:`check_states` refuses states chosen by
hand whose field depends on a dropped coordinate.  docs/implicit.rst, *Linearisation*.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import sympy as sp

from ..algebra.decision import NUMERICAL_POINTS, NUMERICAL_TOLERANCE, Decision, vanishes_at
from ..algebra.codegen import expression_function
from ..algebra.expressions import free_symbols
from ..errors import AnholoError, DimensionError, InitialStateError
from ..algebra.program import Program
from .linear_problem import LinearizationProblem

__all__ = ["StateChoice", "FieldSampler", "Kinematics", "choose_states", "check_states", "natural_velocities",
           "quantity_function", "reference_state"]

#: Absolute tolerance on the rates of the kept states at a reference state called an equilibrium.
EQUILIBRIUM_TOLERANCE = 1e-9


@dataclass(frozen=True)
class StateChoice:
    """The states of a linearisation and why.

    Attributes
    ----------
    states : tuple of str
        ``z``: kept coordinates and free velocities.
    dropped : tuple of str
        Coordinates the field of ``z`` does not depend on (ignorable; they may move at the reference).
    tied : tuple of str
        Coordinates tied to the kept ones by holonomic constraints (not states).
    dependent : tuple of str or None
        The coordinates whose velocities were solved from the constraints, if chosen here (else None:
        the source's own choice).
    equilibrium : bool
        True if ``ż = 0`` at the reference state.
    decision : Decision
        How the independence of the dropped coordinates was decided.
    """

    states: tuple
    dropped: tuple
    tied: tuple
    dependent: tuple | None
    equilibrium: bool
    decision: Decision

    def to_dict(self) -> dict:
        return {"states": list(self.states), "dropped": list(self.dropped), "tied": list(self.tied),
                "dependent": None if self.dependent is None else list(self.dependent),
                "equilibrium": self.equilibrium, **self.decision.to_dict()}

    def __str__(self):
        text = "states " + ", ".join(self.states)
        if self.dropped:
            text += "; ignorable coordinates dropped: " + ", ".join(self.dropped)
        if self.tied:
            text += "; tied by holonomic constraints: " + ", ".join(self.tied)
        if self.dependent is not None:
            text += "; dependent velocities: " + ", ".join(f"{d}_dot" for d in self.dependent)
        return text + f" ({self.decision})"


class FieldSampler:
    """The full Jacobian ``∂(q̇, v̇)/∂(q, v)`` of a field and its rates, at a reference state and at random
    states near it (every state moved by a uniform offset in ``(−spread, spread)``; a state where the field
    is undefined is redrawn).  Holonomic constraints are not imposed: the field is an expression off them too.
    """

    def __init__(self, source, reference: Mapping, parameters: Mapping, points: int = NUMERICAL_POINTS,
                 seed: int = 0, spread: float = 0.3):
        self.problem = LinearizationProblem(source, None, holonomic=())
        self.names = [s.name for s in self.problem.all_states]
        self.n = len(self.problem._coords)
        self.reference, self.parameters = dict(reference), dict(parameters)
        self.points = points
        at0 = self.problem.at(reference, parameters)
        self.rates = dict(zip(self.names, at0.rates))
        self.natural = {c: float(r) for c, r in zip(self.names[:self.n], at0.rates[:self.n])}
        rng = random.Random(seed)
        self.samples = [at0.A]
        for _ in range(points):
            for _try in range(20):
                pt = {s: float(reference.get(s, 0.0)) + rng.uniform(-spread, spread) for s in self.names}
                try:
                    self.samples.append(self.problem.at(pt, parameters).A)
                    break
                except AnholoError:
                    continue
            else:
                raise InitialStateError("the field is undefined at every random state tried near the reference "
                                        "state; choose another reference state.")

    @property
    def decision(self) -> Decision:
        return Decision.numerical(len(self.samples), NUMERICAL_TOLERANCE)

    def depends(self, rows: Sequence[str], column: str) -> float:
        """The largest ``|∂ż_r/∂column|`` over the samples at which it is not negligible (0.0 if it vanishes
        at every sample, relative to the size of each row's entries)."""
        j = self.names.index(column)
        worst = 0.0
        for J in self.samples:
            for r in rows:
                i = self.names.index(r)
                value, scale = J[i, j], np.abs(J[i]).max()
                if not vanishes_at([value], [scale]):
                    worst = max(worst, abs(value))
        return worst


def _tied(source, holonomic) -> tuple:
    """Coordinates fixed by the holonomic constraints (one per constraint): the dependent coordinates of
    Maggi's route among their symbols, else the last of their coordinates."""
    if not holonomic:
        return ()
    coords = _coordinates(source)
    syms = free_symbols(list(holonomic))
    involved = [c for c in coords if c in syms]
    dep = [c for c in getattr(source, "dependent_coordinates", ()) if c in involved]
    rest = [c for c in reversed(involved) if c not in dep]
    return tuple(c.name for c in (dep + rest)[:len(holonomic)])


def _ignorable(field: FieldSampler, protected: set, tied: tuple) -> list:
    """The largest set D of coordinates (not protected) on which no rate of a state outside D depends."""
    coords = field.names[:field.n]
    dropped = [c for c in coords if c not in protected and c not in tied]
    changed = True
    while changed:
        changed = False
        kept = [s for s in field.names if s not in dropped and s not in tied]
        for d in list(dropped):
            if field.depends(kept, d):
                dropped.remove(d)
                changed = True
                break
    return dropped


def _choice(source, reference, parameters, holonomic, dependent=None):
    field = FieldSampler(source, reference, parameters)
    tied = _tied(source, holonomic)
    protected = {s.name for s in free_symbols(list(holonomic))} if holonomic else set()
    dropped = _ignorable(field, protected, tied)
    states = tuple(s for s in field.names if s not in dropped and s not in tied)
    moving = {s: r for s, r in field.rates.items() if s in states and abs(r) > EQUILIBRIUM_TOLERANCE}
    return StateChoice(states, tuple(dropped), tied, dependent, not moving, field.decision), field, moving


class Kinematics:
    """``q̇ = X_α v^α + β`` (coordinate name → value) at a state ``(q, v^α)`` of a field, compiled once: the
    first ``n`` outputs of Maggi's program (pruned to them), or the exact route's frame components."""

    def __init__(self, source):
        self.coordinates = [c.name for c in _coordinates(source)]
        n = len(self.coordinates)
        if hasattr(source, "free_coordinates"):
            prog = source.program(multipliers=False)
            part = Program(prog.args, prog.pairs, prog.outputs[:n]).pruned()
            self.args = [str(a) for a in part.args]
            self._f = part.compile()
        else:
            if hasattr(source, "velocities_on_C"):
                X, vel = source.frame.vectors, source.velocities_on_C
            else:
                X, vel = source.bundle.frame.vectors, source.bundle.quasi_velocities
            kin = [sp.Add(*[X[j, A] * vel[j] for j in range(n)]) for A in range(n)]
            syms = sorted(free_symbols(kin), key=lambda s: s.name)
            self.args = [s.name for s in syms]
            self._f = expression_function(syms, kin)

    def __call__(self, state: Mapping, parameters: Mapping) -> dict:
        env = {**{str(k): float(v) for k, v in parameters.items()}, **{str(k): float(v) for k, v in state.items()}}
        try:
            out = self._f(*[env.get(a, 0.0) for a in self.args])
            if not np.all(np.isfinite(out)):  # generated code: IEEE nan/inf where undefined
                raise ValueError("undefined")
        except (ZeroDivisionError, ValueError, OverflowError):
            raise InitialStateError(f"the kinematics q_dot = X v are undefined at the state {dict(state)}; "
                                    "choose another reference state.") from None
        return {c: float(complex(x).real) for c, x in zip(self.coordinates, out)}


def natural_velocities(source, reference: Mapping, parameters: Mapping) -> dict:
    """``q̇`` (coordinate name → value) at a state ``(q, v^α)`` of the field: ``q̇ = X_α v^α + β``."""
    return Kinematics(source)(reference, parameters)


def _coordinates(source) -> tuple:
    if hasattr(source, "free_coordinates"):
        return tuple(source.chart.coordinates)
    if hasattr(source, "velocities_on_C"):
        return tuple(source.frame.chart.coordinates)
    return tuple(source.bundle.chart.coordinates)


def choose_states(build: Callable, reference: Mapping, parameters: Mapping, holonomic: Sequence = (),
                  dependent_given: bool = False, tries: int = 10):
    """States ``z`` in which the linearisation about the reference state is that of a (relative) equilibrium.

    The states are the coordinates that are not ignorable and the free velocities.  If they are not an
    equilibrium at the reference state and the dependent velocities were not given, the velocities of
    ``k`` ignorable coordinates are tried as the dependent ones (the contact point's velocity of a rolling
    body, the position of a vehicle): the free velocities are then rates of the remaining coordinates, as a
    relative equilibrium needs.  If none works, :class:`~anholo.errors.InitialStateError` names the state
    that moves.

    Parameters
    ----------
    build : callable
        ``build(dependent)`` gives the field's source (MaggiSystem or NonholonomicSystem) with the velocities
        of the coordinates named in ``dependent`` solved from the constraints, ``build(None)`` the default.
    reference : mapping
        The reference state in the default source's states (missing ones 0).
    parameters : mapping
        Parameter values.
    holonomic : sequence
        Holonomic constraints (their coordinates are not dropped; one per constraint is tied).
    dependent_given : bool
        True if ``build(None)`` is the user's choice of dependent velocities (then not changed).

    Returns
    -------
    tuple
        ``(source, choice, reference)``: the source used, the :class:`StateChoice`, and the reference state in
        that source's states (the same motion: the coordinates and the natural velocities are kept when the
        dependent velocities change; Maggi's free velocities are the velocities of the free coordinates).
    """
    source = build(None)
    choice, field, moving = _choice(source, reference, parameters, holonomic)
    if choice.equilibrium:
        return source, choice, dict(reference)
    k = len(_coordinates(source)) - len(getattr(source, "free_velocities", _coordinates(source)))
    if not dependent_given and k and hasattr(source, "free_velocities"):
        qdot = field.natural
        coords = [c.name for c in _coordinates(source)]
        for dep in itertools.islice(itertools.combinations(reversed(choice.dropped), k), tries):
            dep = tuple(sorted(dep, key=coords.index))
            try:
                other = build(dep)
                ref = {c: reference.get(c, 0.0) for c in coords}
                ref.update(_free_velocities_of(other, ref, qdot, parameters))
                new, _, _ = _choice(other, ref, parameters, holonomic, dependent=dep)
            except AnholoError:
                continue
            if new.equilibrium:
                return other, new, ref
    name, rate = max(moving.items(), key=lambda kv: abs(kv[1]))
    if name not in field.names[:field.n]:
        raise InitialStateError(
            f"the reference state is not an equilibrium of the states {', '.join(choice.states)}: the velocity "
            f"{name} changes at rate {rate:.6g} there, so the eigenvalues would not decide stability; give a "
            "reference state of a steady motion (every rate 0), or --states to linearise there anyway.")
    hint = f", e.g. --dependent {','.join(choice.dropped[-k:])}" if k and len(choice.dropped) >= k else ""
    raise InitialStateError(
        f"the reference state is not an equilibrium of the states {', '.join(choice.states)}: the coordinate {name} "
        f"changes at rate {rate:.6g} and the field depends on it, so the eigenvalues would not decide stability; "
        f"choose velocities invariant under the motion with --dependent NAMES{hint} (the velocities of ignorable "
        "coordinates), or another reference state, or the states with --states.")


def _free_velocities_of(source, coordinates: Mapping, qdot: Mapping, parameters: Mapping) -> dict:
    """The free velocities ``v^α`` of ``source`` for the natural velocities ``q̇`` at the coordinates (the same
    motion in another choice of dependent velocities).  Maggi's free velocities are the velocities of the
    free coordinates; on the exact route ``q̇ = X_α(q) v^α + β(q)`` is solved for ``v`` (least squares on the
    n equations, which ``q̇`` on the constraints satisfies exactly; a residual above round-off raises
    :class:`~anholo.errors.InitialStateError`)."""
    if hasattr(source, "free_coordinates"):
        return {v.name: qdot[f.name] for v, f in zip(source.free_velocities, source.free_coordinates)}
    names = [v.name for v in source.free_velocities]
    kin = Kinematics(source)
    base_state = {**coordinates, **{v: 0.0 for v in names}}
    base = kin(base_state, parameters)
    order = list(base)
    b = np.array([qdot[c] - base[c] for c in order])
    X = np.column_stack([[kin({**base_state, v: 1.0}, parameters)[c] - base[c] for c in order] for v in names])
    v, *_ = np.linalg.lstsq(X, b, rcond=None)
    if np.abs(X @ v - b).max() > 1e-9 * (1.0 + np.abs(b).max()):
        raise InitialStateError("the reference motion is not on the constraints of the other dependent velocities.")
    return dict(zip(names, (float(x) for x in v)))


def check_states(source, states: Sequence[str], reference: Mapping, parameters: Mapping,
                 holonomic: Sequence = ()) -> StateChoice:
    """Refuse states ``z`` whose field depends on a dropped coordinate (:class:`~anholo.errors.DimensionError`
    naming it), decided at the reference state and random states near it; return the :class:`StateChoice`.

    A dropped coordinate ``q^d`` (neither a state nor tied by a holonomic constraint) may move along the
    reference motion; if ``∂ż/∂q^d ≠ 0`` the matrix ``A`` in ``z`` changes along it and its eigenvalues are
    not growth rates.  A coordinate the field depends on is accepted only if it is at rest at the reference
    and ``∂q̇^d/∂z = 0`` there: then ``δq^d = 0`` is invariant under the linearised flow and ``A`` is its
    restriction (e.g. a pitch held by the time derivative of a holonomic constraint, at an upright state).
    """
    field = FieldSampler(source, reference, parameters)
    coords = field.names[:field.n]
    chosen = [str(s) for s in states]
    syms = {s.name for s in free_symbols(list(holonomic))} if holonomic else set()
    tied = tuple(c for c in coords if c not in chosen and c in syms)
    dropped = [c for c in coords if c not in chosen and c not in tied]
    J0 = field.samples[0]
    cols = [field.names.index(z) for z in chosen]
    for d in dropped:
        size = field.depends(chosen, d)
        if not size:
            continue
        rate = field.rates[d]
        row = J0[field.names.index(d)]
        excited = not vanishes_at(row[cols], [np.abs(row).max()] * len(cols))
        if abs(rate) <= EQUILIBRIUM_TOLERANCE and not excited:
            continue  # at rest, and not moved by δz to first order: δq^d = 0 is invariant, A is its block
        why = (f"{d} changes at rate {rate:.6g} at the reference" if abs(rate) > EQUILIBRIUM_TOLERANCE else
               f"{d} is moved by the states to first order")
        raise DimensionError(
            f"the field of the states {', '.join(chosen)} depends on the dropped coordinate {d} "
            f"(|d(rates)/d{d}| up to {size:.3g}; {why}), so A would not be a linearisation; add {d} to --states, "
            f"or choose velocities invariant under {d} with --dependent NAMES (e.g. the position coordinates), "
            "or omit --states to let anholo choose.")
    moving = [s for s in chosen if abs(field.rates[s]) > EQUILIBRIUM_TOLERANCE]
    return StateChoice(tuple(chosen), tuple(dropped), tied, None, not moving, field.decision)


def quantity_function(expr, source, parameters: Mapping) -> Callable:
    """A physical quantity ``e(q, q̇, v, p)`` (e.g. the forward speed ``WRrad*rear_wheel_dot``) as a function
    of a state ``(q, v^α)`` of the field: ``q̇ = X_α v^α + β`` numerically."""
    coords = _coordinates(source)
    names = [c.name for c in coords] + [f"{c.name}_dot" for c in coords] + [v.name for v in source.free_velocities]
    syms = sorted(free_symbols([expr]), key=lambda s: s.name)
    unknown = [s.name for s in syms if s.name not in names and s.name not in parameters]
    if unknown:
        raise DimensionError(f"the quantity {expr} uses {unknown[0]!r}, which is neither a coordinate, a velocity "
                             f"(NAME_dot), a free quasi-velocity ({', '.join(v.name for v in source.free_velocities)}) "
                             "nor a parameter with a value.")
    f = expression_function(syms, expr)
    cache = getattr(source, "_cache", None)  # Maggi's route: compiled once per system
    if isinstance(cache, dict):
        kinematics = cache.setdefault("linearization_kinematics", None) or Kinematics(source)
        cache["linearization_kinematics"] = kinematics
    else:
        kinematics = Kinematics(source)

    def value(state: Mapping) -> float:
        qdot = kinematics(state, parameters)
        env = {**{k: float(v) for k, v in parameters.items()}, **{c: float(state.get(c, 0.0)) for c in
                                                                   [c.name for c in coords]}}
        env.update({f"{c}_dot": v for c, v in qdot.items()})
        env.update({v.name: float(state.get(v.name, 0.0)) for v in source.free_velocities})
        return float(f(*[env[s.name] for s in syms]))
    return value


def reference_state(source, fixed: Mapping, targets: Sequence, parameters: Mapping) -> dict:
    """The reference state with the given states ``fixed`` and the quantities of ``targets`` (pairs ``(e, value)``,
    each ``e`` affine in the velocities: a natural velocity ``yaw_dot``, a speed ``WRrad*rear_wheel_dot``) at
    their values: the free velocities not fixed that they depend on are solved for, the others are 0.

    ``e`` is affine in ``q̇`` and ``v``, and ``q̇ = X_α v^α + β`` is affine in ``v``, so ``e(v) = e(0) + J v``:
    ``J`` is found by evaluating at unit velocities, and ``J_S v_S = value − e(0)`` is solved on the
    columns ``S`` of the velocities the targets depend on (as many as targets, ``J_S`` invertible).
    """
    ref = {str(k): float(v) for k, v in fixed.items()}
    if not targets:
        return ref
    names = {v.name for v in source.free_velocities}
    functions = []
    for expr, _ in targets:
        vel = [s for s in free_symbols([expr]) if s.name.endswith("_dot") or s.name in names]
        if not vel or sp.Poly(expr, *vel).total_degree() != 1:
            raise InitialStateError(f"{expr} is not affine in the velocities with a velocity in it; --at and --sweep "
                                    "give a reference motion by velocities or affine functions of them (a speed).")
        functions.append(quantity_function(expr, source, parameters))
    unknown = [v.name for v in source.free_velocities if v.name not in ref]
    base = {**ref, **{u: 0.0 for u in unknown}}
    e0 = np.array([f(base) for f in functions])
    J = np.array([[f({**base, u: 1.0}) for f in functions] for u in unknown]).T - e0[:, None] if unknown \
        else np.zeros((len(targets), 0))
    used = [j for j in range(len(unknown)) if np.abs(J[:, j]).max() > 1e-12 * max(1.0, np.abs(e0).max())]
    what = ", ".join(str(e) for e, _ in targets)
    if len(used) < len(targets) or (used and np.linalg.matrix_rank(J[:, used]) < len(targets)):
        raise InitialStateError(f"{what} cannot be set by the free velocities not given otherwise "
                                f"({', '.join(unknown) or 'none'}) at this state; give the free velocities "
                                f"({', '.join(sorted(names))}) by name, or other dependent velocities (--dependent).")
    if len(used) > len(targets):
        raise InitialStateError(f"{what} depends on the free velocities {', '.join(unknown[j] for j in used)}; give "
                                f"all but {len(targets)} of them with --at.")
    sol = np.linalg.solve(J[:, used], np.array([float(v) for _, v in targets]) - e0)
    return {**base, **{unknown[j]: float(x) for j, x in zip(used, sol)}}

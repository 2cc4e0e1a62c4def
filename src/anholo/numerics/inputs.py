"""Control inputs written as expressions of the time, the coordinates, the velocities and the parameters.

A system file's ``inputs = [...]`` enter its forces (docs/forces.rst); a run needs their values
``u_k(t, state)``.  Given as *expressions* — a string read by :func:`anholo.parsing.parse_expression` (the
parser of the command line's ``--input NAME=EXPR``; no code runs), a SymPy expression or a number — in

* the time ``t``,
* the coordinates ``q^A`` (by their names),
* the natural velocities ``q̇^A`` (written ``<q>_dot``, e.g. ``theta_dot``) and
* the parameters (by their names, with each run's values),

an input is the same function ``u_k = e_k(t, q, q̇(t, y), p)`` of the time and the state ``y`` of every field
of the system: ``q`` is the head of the state and ``q̇ = q̇(t, y)`` the field's own natural velocities (for
the nonholonomic field on the constraint distribution ``q̇ = X_α v^α``, for the Chetaev field the state's
velocities themselves).  Two evaluations of that one function:

* :meth:`ControlInputs.functions` — callables ``u(t, y)`` for one run of
  :func:`~anholo.numerics.integrate.simulate` (the parameters bound to the run's values, ``q̇`` from the
  compiled field's ``natural_velocities``);
* :meth:`ControlInputs.definitions` — the expressions ``e_k`` in the field's own symbols (``q̇`` replaced by
  the field's expressions of the state), which :mod:`anholo.numerics.batch_loop` prepends to the field's
  program as definitions: the compiled loop then evaluates the inputs in the generated C with the rates.

An input given as a Python callable stays a callable (one :func:`simulate` per run: the compiled loop cannot
call Python).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import sympy as sp

from ..errors import AnholoError, InputError, UnknownSymbolError

__all__ = ["ControlInputs", "control_inputs", "run_options", "prepare_options"]


def _names(coordinates, parameters) -> dict:
    t = sp.Symbol("t", real=True)
    out = {"t": t}
    out.update({c: sp.Symbol(c, real=True) for c in coordinates})
    out.update({f"{c}_dot": sp.Symbol(f"{c}_dot", real=True) for c in coordinates})
    out.update({p: sp.Symbol(p, real=True) for p in parameters})
    return out


def _check_functions(expr, where: str) -> None:
    from ..parsing import STANDARD_FUNCTIONS

    for f in expr.atoms(sp.Function):
        name = type(f).__name__
        if name not in STANDARD_FUNCTIONS:
            raise InputError(f"{where}: the function {name} cannot be evaluated in generated code; write the input "
                             f"with {', '.join(STANDARD_FUNCTIONS)} (or give a Python callable u(t, state)).")


@dataclass(frozen=True, eq=False)
class ControlInputs:
    """The control inputs of one system: expressions (module docstring) and/or Python callables.

    Attributes
    ----------
    order : tuple of str
        The system's inputs (``CompiledSystem.control_names``), in order.
    expressions : dict
        name → SymPy expression in the real symbols ``t``, the coordinates, ``<q>_dot`` and the parameters.
    callables : dict
        name → callable ``u(t, state)``.
    coordinates : tuple of str
        The coordinate names the expressions may use (with ``t`` and ``<q>_dot``).
    parameters : tuple of str
        The parameter names the expressions may use.
    """

    order: tuple
    expressions: dict
    callables: dict
    coordinates: tuple
    parameters: tuple
    _fn: object = field(default=None, repr=False)

    def __reduce__(self):  # the compiled evaluator is rebuilt where it is used
        return (ControlInputs, (self.order, self.expressions, self.callables, self.coordinates, self.parameters))

    @property
    def compilable(self) -> bool:
        """True if every input is an expression (the compiled loop can evaluate them)."""
        return not self.callables

    @property
    def key(self) -> str:
        """A digest of the expressions (the compiled loop of a field is kept per set of inputs)."""
        text = repr([(n, sp.srepr(self.expressions[n])) for n in self.order if n in self.expressions])
        return hashlib.sha256(text.encode()).hexdigest()

    def _symbols(self) -> tuple:
        names = _names(self.coordinates, self.parameters)
        n = len(self.coordinates)
        q = [names[c] for c in self.coordinates]
        qd = [names[f"{c}_dot"] for c in self.coordinates]
        p = [names[c] for c in self.parameters]
        return names["t"], q, qd, p, n

    def uses_velocities(self) -> bool:
        _, _, qd, _, _ = self._symbols()
        qd = set(qd)
        return any(e.free_symbols & qd for e in self.expressions.values())

    def _evaluator(self):
        """``f(t, q..., q̇..., p...) -> [e_k]`` over the expression inputs (generated Python, ``math``)."""
        if self._fn is None:
            from ..algebra.engine import to_engine
            from ..algebra.program import Program

            t, q, qd, p, _ = self._symbols()
            args = [to_engine(s) for s in (t, *q, *qd, *p)]
            names = [n for n in self.order if n in self.expressions]
            prog = Program.from_expressions(args, [to_engine(self.expressions[n]) for n in names])
            object.__setattr__(self, "_fn", (prog.compile(), names))
        return self._fn

    def functions(self, compiled, p, chart_p=None) -> dict:
        """name → callable ``u(t, state)`` for one run of ``compiled`` (a field of this system) with the parameter
        vector ``p`` (:func:`~anholo.numerics.integrate.simulate`'s ``inputs``).  ``chart_p``: the parameter
        vector of ``compiled`` when it is another chart of the system than the one ``p`` is ordered for (a
        change of chart, :mod:`anholo.numerics.switching`): the state is read in ``compiled``'s chart."""
        out = dict(self.callables)
        if not self.expressions:
            return out
        f, names = self._evaluator()
        n = len(self.coordinates)
        p = tuple(float(x) for x in p)
        cp = p if chart_p is None else tuple(float(x) for x in chart_p)
        if self.uses_velocities():
            def values(t, y, f=f, p=p, n=n, c=compiled, cp=cp):
                y = np.asarray(y, float)
                qd = c.natural_velocities(y.reshape(-1, 1), cp, t)[:, 0]
                return f(t, *y[:n], *qd, *p)
        else:
            def values(t, y, f=f, p=p, n=n):
                return f(t, *y[:n], *([0.0] * n), *p)

        for k, name in enumerate(names):
            out[name] = _Component(values, k)
        return out

    def definitions(self, ode) -> list:
        """The inputs of ``ode`` (a :class:`~anholo.numerics.ode.FirstOrderSystem` of this system), in the order
        of ``ode.inputs``, as symengine expressions in the field's own time (``t`` if it has none), state and
        parameters: ``q̇`` replaced by ``ode.natural_velocities``.  For the compiled loop: every input must be
        an expression."""
        from ..algebra.engine import to_engine

        t, q, qd, p, n = self._symbols()
        time = ode.time if ode.time is not None else sp.Symbol("t", real=True)
        if tuple(s.name for s in ode.state[:n]) != self.coordinates:
            raise InputError("the state of this field does not begin with the coordinates; give the inputs as "
                             "callables u(t, state).")
        own = {s.name: s for s in ode.parameters}
        swap = {t: time, **dict(zip(q, ode.state[:n])), **dict(zip(qd, ode.natural_velocities))}
        swap.update({s: own[s.name] for s in p if s.name in own})
        return [to_engine(self.expressions[u.name].xreplace(swap)) for u in ode.inputs]


class _Component:
    """The ``k``-th input of one run: ``values(t, y)[k]`` as a float (made where the run is integrated)."""

    def __init__(self, values, k: int):
        self.values, self.k = values, k

    def __call__(self, t, y):
        return float(self.values(t, y)[self.k])


def control_inputs(compiled, inputs) -> ControlInputs | None:
    """The control ``inputs`` of ``compiled`` (name or Symbol → expression string, SymPy expression, number or
    callable ``u(t, state)``) read once (module docstring), or None for a system without inputs given none.

    Raises
    ------
    InputError
        An input the system does not have, an input without a value, an expression in a name other than
        ``t``, the coordinates, ``<q>_dot`` and the parameters, a function without generated code.

    Examples
    --------
    The motor torque of the sleigh as a damping law; its nonholonomic state is ``(x, y, θ, u, w)`` with
    ``θ̇ = w/a`` (``a = 0.5``, ``k = 0.05`` by default):

    >>> from anholo.system import System
    >>> from anholo.numerics import compile_system, from_system
    >>> c = compile_system(from_system(System.load("sleigh_with_motor"), "nonholonomic"))
    >>> ci = control_inputs(c, {"tau": "0.2*sin(t) - k*theta_dot"})
    >>> ci.compilable
    True
    >>> tau = ci.functions(c, c.parameter_vector())["tau"]
    >>> round(tau(0.0, [0.0, 0.0, 0.0, 1.0, 0.5]), 12)  # -0.05 * (0.5 / 0.5)
    -0.05
    """
    if isinstance(inputs, ControlInputs):
        return inputs
    order = tuple(getattr(compiled, "control_names", ()))
    given = {}
    for k, v in dict(inputs or {}).items():
        name = k.name if isinstance(k, sp.Symbol) else str(k)
        if name not in order:
            raise InputError(f"{name!r} is not an input of this system; its inputs are {', '.join(order) or '(none)'}.")
        given[name] = v
    if not order:
        return None
    missing = [u for u in order if u not in given]
    if missing:
        raise InputError(f"no value for the input(s) {', '.join(missing)}; give them as inputs={{name: expression "
                         "in t, the coordinates, <q>_dot and the parameters, or a function of (t, state)} "
                         "(--input NAME=EXPR on the command line).")
    from ..parsing import as_expression, parse_expression

    coordinates, parameters = tuple(compiled.coordinate_names), tuple(compiled.parameters)
    names = _names(coordinates, parameters)
    expressions, callables = {}, {}
    for name in order:
        v = given[name]
        if callable(v) and not isinstance(v, sp.Basic):
            callables[name] = v
            continue
        where = f"input {name}"
        allowed = (f"an input is an expression in t, the coordinates ({', '.join(coordinates)}), their velocities "
                   f"<q>_dot and the parameters ({', '.join(parameters) or 'none'})")
        try:
            if isinstance(v, str):  # as the command line's --input reads it
                expr = parse_expression(v, names, where=where)
            expr = as_expression(expr if isinstance(v, str) else v, names, where=where, allow_unknown=False)
        except UnknownSymbolError as exc:
            text = " ".join(str(exc).split())
            hint = re.search(r" Did you mean '[^']*'\?", text)
            raise InputError(f"{text.split(' Declared names:')[0].split('; use the chart')[0]}"
                             f"{hint.group(0) if hint else ''} ({allowed}).") from None
        except AnholoError as exc:  # a syntax error, a construct outside the language: one line
            raise InputError(f"{' '.join(str(exc).split()).rstrip('.')} ({allowed}).") from None
        _check_functions(expr, where)
        expressions[name] = expr
    return ControlInputs(order, expressions, callables, coordinates, parameters)


def prepare_options(compiled, options: Mapping) -> dict:
    """``options`` of :func:`~anholo.numerics.integrate.simulate` with ``inputs`` read once (a
    :class:`ControlInputs`, picklable: it travels to worker processes with the options)."""
    options = dict(options)
    if options.get("inputs") is not None or getattr(compiled, "control_names", ()):
        options["inputs"] = control_inputs(compiled, options.get("inputs"))
    return options


def run_options(compiled, options: Mapping, params) -> dict:
    """``options`` for one :func:`simulate` run of ``compiled`` with the parameter values ``params``: expression
    inputs become callables with these parameter values."""
    ci = options.get("inputs")
    if not isinstance(ci, ControlInputs):
        return dict(options)
    return dict(options, inputs=ci.functions(compiled, compiled.parameter_vector(params)))

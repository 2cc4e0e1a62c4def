"""System files: mechanical systems described in TOML.

A system file declares coordinates, parameters and a Lagrangian, and
optionally a moving frame, linear constraints and default parameter values::

    name = "Free rigid body"
    description = "optional free text"
    coordinates = ["phi", "theta", "psi"]
    parameters = ["I1", "I2", "I3"]        # positive unless [signs] says otherwise (default [])
    functions = ["A1"]                     # undefined functions, used as A1(theta)
    lagrangian = "..."                     # the velocity of q is written q_dot
    frame = [["...", "...", "..."], ...]   # row i = components of X_i along d/dq^A
    constraints = ["z_dot - y*x_dot"]      # each expression = 0
    [values]                               # default values of parameters
    I1 = 2

Fields
------
name : string, required
    A one-line title.
description : string, optional
    Free text.
coordinates : array of strings, required
    The names of the configuration coordinates ``q^1 .. q^n``.  Each
    coordinate ``q`` gets a velocity ``q_dot``; coordinate names may not end
    in ``_dot``.  Coordinates and velocities are real symbols.
parameters : array of strings, optional
    Names of constant parameters (masses, lengths, ...), created as
    *positive* real symbols.
functions : array of strings, optional
    Names of undefined real functions (:class:`sympy.Function`), to be
    applied to coordinates or parameters, e.g. ``A1(theta)``.
lagrangian : string (or number), required
    An expression in the coordinates, velocities, parameters and functions.
frame : array of n arrays of n strings (or numbers), optional
    Row ``i`` (0-based, written ``frame[i]`` in messages) holds the components
    of the frame vector ``X_{i+1}`` in the coordinate basis
    ``d/dq^1 .. d/dq^n``.  Entries depend on coordinates and parameters
    only: velocities are not allowed.  Absent means the coordinate frame.
constraints : array of strings, optional
    Expressions, each required to vanish (``constraints[k]``, 0-based).
time : string, optional
    The name of the time (e.g. ``"t"``), which constraints, the Lagrangian, the
    forces and holonomic constraints may use.
inputs : array of strings, optional
    Names of control inputs ``u_k`` (real symbols), usable in ``forces``,
    ``frame_forces`` and constraints.
forces : array of n strings, optional
    Generalized non-potential forces ``Q_A``, one per coordinate in coordinate
    order, in ``q``, ``q_dot``, the time, parameters and inputs.
frame_forces : array of n strings, optional
    The same forces by their frame components ``F_i = <Q, X_i>`` (one per frame
    vector; with ``forces`` both are added).
dissipation : string, optional
    A Rayleigh dissipation function ``R(q, q_dot, t)``; it adds ``-dR/dq_dot^A``
    to the forces.
quasi_velocities : array of n strings, optional
    Names of the frame's quasi-velocities ``v^i = θ^i(q_dot)`` (default
    ``v1 .. vn``).  The Lagrangian, constraints and forces may use them
    (frame language: ``constraints = ["w - a*omega"]``); names keep their
    meaning when an adapted frame is built.
holonomic : array of strings, optional
    Configuration constraints ``f(q, t) = 0`` (no velocities); they are
    differentiated into kinematic constraints, and simulations are kept on
    the surface ``f = 0``.
values : table, optional
    Default numerical values of parameters (integers or decimals; decimals
    are stored exactly, ``9.81`` is ``981/100``).  A value must be finite and
    have the parameter's declared sign.
signs : table, optional
    The sign of a parameter: ``name = "positive" | "nonnegative" | "negative" |
    "nonpositive" | "real" | "nonzero"``; a parameter not listed is positive.
    The parameter's symbol carries the matching SymPy assumptions, and every
    value (``[values]``, ``--set``, :meth:`SystemSpec.substitute`) is checked
    against the sign by one rule (:mod:`anholo.io.validation`).
quantities : table, optional
    Named physical quantities, ``name = "expression"`` in the coordinates,
    velocities and parameters, e.g. the forward speed of a bicycle
    ``speed = "WRrad*rear_wheel_dot"``; ``anholo linearize --at`` and
    ``--sweep`` accept them (a reference motion by a physical quantity).
units : table, optional
    Units for display, ``name = "unit"`` for coordinates, velocities,
    parameters, inputs, quantities and the time (``t``, or the file's
    ``time`` name), e.g. ``rear_wheel_dot = "rad/s"``, ``speed = "m/s"``,
    ``t = "s"``; shown in tables and on plot axes.

Expressions follow :func:`anholo.parsing.parse_expression`: ``^``
and ``**`` are powers, decimals are exact, and the standard functions
(``sin``, ``cos``, ``exp``, ``sqrt``, ...) and constants ``pi`` and ``E`` are
available.  Names of coordinates, parameters and functions must be Python
identifiers that are neither Python keywords nor standard function or
constant names, and must all be distinct.

This module knows nothing about frames or dynamics: a :class:`SystemSpec` is
pure data.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import sympy as sp

from anholo.errors import SystemFileError, printable
from anholo.parsing import parse_expression
from anholo.io.validation import SIGNS, check_parameter_value, parameter_symbol
from anholo.io.systemfile_format import (KNOWN_FIELDS, VELOCITY_SUFFIX, _Reader,
                                          _float_to_rational, _is_number, _number, _toml_type,
                                          load_toml)

__all__ = [
    "KNOWN_FIELDS",
    "SystemSpec",
    "parse_system",
    "load_system_file",
]

@dataclass(frozen=True)
class SystemSpec:
    """A mechanical system read from a system file (pure data).

    Attributes
    ----------
    name, description : str
        Title and free text.
    coordinates : tuple of sympy.Symbol
        Real symbols ``q^1 .. q^n``.
    velocities : tuple of sympy.Symbol
        Real symbols ``q_dot``, in the same order as `coordinates`.
    parameters : tuple of sympy.Symbol
        Real symbols with the assumptions of their declared signs (positive by default).
    functions : tuple of sympy.FunctionClass
        Undefined real functions (``sympy.Function(name, real=True)``).
    lagrangian : sympy.Expr
    frame : tuple of tuple of sympy.Expr, or None
        ``frame[i][A]`` is the component of ``X_{i+1}`` along ``d/dq^A``;
        ``None`` means the coordinate frame.
    constraints : tuple of sympy.Expr
        Expressions required to vanish.
    values : Mapping[sympy.Symbol, sympy.Number]
        Default values of (some) parameters, exact numbers.
    source : str
        Where the specification was read from (a path or ``"<string>"``).
    time : sympy.Symbol or None
        The time symbol declared by ``time = "t"``, which constraints (only) may
        use; ``None`` if the file declares none.

    Examples
    --------
    >>> spec = parse_system('''
    ... name = "Oscillator"
    ... coordinates = ["x"]
    ... parameters = ["k"]
    ... lagrangian = "x_dot^2/2 - k*x^2/2"
    ... ''')
    >>> spec.coordinates, spec.velocities, spec.parameters
    ((x,), (x_dot,), (k,))
    >>> spec.substitute({"k": 4}).lagrangian
    -2*x**2 + x_dot**2/2
    """

    name: str
    description: str
    coordinates: tuple[sp.Symbol, ...]
    velocities: tuple[sp.Symbol, ...]
    parameters: tuple[sp.Symbol, ...]
    functions: tuple[Any, ...]
    lagrangian: sp.Expr
    frame: tuple[tuple[sp.Expr, ...], ...] | None
    constraints: tuple[sp.Expr, ...]
    values: Mapping[sp.Symbol, sp.Number] = field(default_factory=dict, hash=False)
    source: str = "<string>"
    time: sp.Symbol | None = None
    #: The ``[symmetry]`` table: ``{"generators": ((expr, ...), ...), "structure_constants":
    #: nested tuple or None, "action": "left" | "right"}``, or None (see :func:`parse_system`).
    symmetry: Mapping[str, Any] | None = field(default=None, hash=False)
    #: Control inputs (real symbols), generalized forces ``Q_A`` (or None), frame components
    #: ``F_i`` (or None), a Rayleigh dissipation function (or None) and holonomic constraints.
    inputs: tuple[sp.Symbol, ...] = ()
    forces: tuple[sp.Expr, ...] | None = None
    frame_forces: tuple[sp.Expr, ...] | None = None
    dissipation: sp.Expr | None = None
    holonomic: tuple[sp.Expr, ...] = ()
    #: Names of the frame's quasi-velocities (real symbols), or None for the default ``v1 .. vn``.
    quasi_velocities: tuple[sp.Symbol, ...] | None = None
    #: The ``[quantities]`` table (name → expression) and the ``[units]`` table (name → unit string).
    quantities: Mapping[str, sp.Expr] = field(default_factory=dict, hash=False)
    units: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # Keep the values read-only whatever mapping was passed.
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    # Mapping proxies cannot be pickled: store a plain dict instead.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["values"] = dict(self.values)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    @property
    def dimension(self) -> int:
        """The number of coordinates."""
        return len(self.coordinates)

    @property
    def has_loads(self) -> bool:
        """True if the file declares forces, frame forces, a dissipation function or inputs."""
        return (self.forces is not None or self.frame_forces is not None or self.dissipation is not None
                or bool(self.inputs))

    @property
    def names(self) -> dict[str, Any]:
        """Every declared name: coordinates, velocities, parameters, functions.

        Examples
        --------
        >>> spec = parse_system('name = "P"\\ncoordinates = ["x"]\\nlagrangian = "x_dot^2/2"')
        >>> spec.names
        {'x': x, 'x_dot': x_dot}
        """
        out: dict[str, Any] = {}
        for group in (self.coordinates, self.velocities, self.parameters):
            for sym in group:
                out[sym.name] = sym
        for func in self.functions:
            out[func.__name__] = func
        if self.time is not None:
            out[self.time.name] = self.time
        for sym in self.inputs:
            out[sym.name] = sym
        for sym in self.quasi_velocities or ():
            out[sym.name] = sym
        return out

    def substitute(self, assignments: Mapping[str, str | int | float]) -> SystemSpec:
        """Fix the values of some parameters.

        This is what the command line's ``--set NAME=VALUE`` does.

        Parameters
        ----------
        assignments : Mapping[str, str | int | float]
            Parameter name -> value.  A value is a number or an expression
            (parsed like the file's expressions) in the *other* parameters,
            e.g. ``{"I2": "I1", "g": 9.81}``.  Decimals are exact.

        Returns
        -------
        SystemSpec
            A new specification in which the parameters are replaced
            (simultaneously) in the Lagrangian, frame and constraints, and
            removed from `parameters` and `values`.

        Raises
        ------
        anholo.errors.SystemFileError
            A name that is not a declared parameter (the message lists the
            parameters), or a value that cannot be parsed or that refers to a
            parameter being set in the same call.

        Examples
        --------
        >>> spec = parse_system('''
        ... name = "Pendulum"
        ... coordinates = ["theta"]
        ... parameters = ["m", "l", "g"]
        ... lagrangian = "m*l^2*theta_dot^2/2 + m*g*l*cos(theta)"
        ... ''')
        >>> spec.substitute({"m": 1, "g": "2*l"}).lagrangian
        l**2*theta_dot**2/2 + 2*l**2*cos(theta)
        """
        by_name = {p.name: p for p in self.parameters}
        listing = ", ".join(by_name) if by_name else "(none)"
        setting = set(assignments)
        replacements: dict[sp.Symbol, sp.Expr] = {}
        for name, value in assignments.items():
            if name not in by_name:
                if name in self.names:
                    kind = "a coordinate or velocity" if isinstance(
                        self.names[name], sp.Symbol
                    ) else "a function"
                    what = f"'{name}' is {kind}, not a parameter"
                else:
                    what = f"'{name}' is not a parameter"
                raise SystemFileError(
                    f"{self.source}: cannot set {name}: {what} of {self.name!r}. "
                    f"Parameters: {listing}."
                )
            where = f"{self.source}: value of parameter {name!r}"
            if isinstance(value, bool):
                raise SystemFileError(
                    f"{where}: expected a number or an expression, got {value!r}."
                )
            if isinstance(value, int):
                expr: sp.Expr = sp.Integer(value)
            elif isinstance(value, float):
                expr = _float_to_rational(value, where)
            elif isinstance(value, sp.Expr):
                expr = value
            elif isinstance(value, str):
                try:
                    nonfinite = not math.isfinite(float(value))
                except ValueError:
                    nonfinite = False
                if nonfinite:
                    raise SystemFileError(f"{where}: {value.strip()!r} is not a finite number.")
                expr = parse_expression(value, by_name, where=where)
            else:
                raise SystemFileError(
                    f"{where}: expected a number or an expression string, "
                    f"got {type(value).__name__} {value!r}."
                )
            clash = sorted(
                (s.name for s in expr.free_symbols if s.name in setting and s in by_name.values()),
            )
            if clash:
                others = [n for n in by_name if n not in setting]
                raise SystemFileError(
                    f"{where}: {value!r} refers to {', '.join(clash)}, which is also being "
                    "set; use numbers or parameters that are not being set "
                    f"({', '.join(others) or 'none'})."
                )
            check_parameter_value(by_name[name], expr, where)
            replacements[by_name[name]] = expr

        def sub(e: sp.Expr) -> sp.Expr:
            return e.xreplace(replacements)

        return dataclasses.replace(
            self,
            parameters=tuple(p for p in self.parameters if p not in replacements),
            lagrangian=sub(self.lagrangian),
            frame=None
            if self.frame is None
            else tuple(tuple(sub(c) for c in row) for row in self.frame),
            constraints=tuple(sub(c) for c in self.constraints),
            values={p: v for p, v in self.values.items() if p not in replacements},
            symmetry=None if self.symmetry is None else {
                **self.symmetry, "generators": tuple(tuple(sub(c) for c in g) for g in self.symmetry["generators"])},
            forces=None if self.forces is None else tuple(sub(c) for c in self.forces),
            frame_forces=None if self.frame_forces is None else tuple(sub(c) for c in self.frame_forces),
            dissipation=None if self.dissipation is None else sub(self.dissipation),
            holonomic=tuple(sub(c) for c in self.holonomic),
            quantities={k: sub(e) for k, e in self.quantities.items()},
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description: every expression as a string.

        Expressions are printed with :func:`str`, which
        :func:`~anholo.parsing.parse_expression` reads back.

        Examples
        --------
        >>> spec = parse_system('name = "P"\\ncoordinates = ["x"]\\nlagrangian = "x_dot^2/2"')
        >>> spec.to_dict()["lagrangian"]
        'x_dot**2/2'
        """
        return {
            "name": self.name,
            "description": self.description,
            "coordinates": [str(q) for q in self.coordinates],
            "velocities": [str(v) for v in self.velocities],
            "parameters": [str(p) for p in self.parameters],
            "functions": [f.__name__ for f in self.functions],
            "lagrangian": str(self.lagrangian),
            "frame": None
            if self.frame is None
            else [[str(c) for c in row] for row in self.frame],
            "constraints": [str(c) for c in self.constraints],
            "values": {str(p): str(v) for p, v in self.values.items()},
            "source": self.source,
            "time": None if self.time is None else str(self.time),
            "inputs": [str(u) for u in self.inputs],
            "forces": None if self.forces is None else [str(c) for c in self.forces],
            "frame_forces": None if self.frame_forces is None else [str(c) for c in self.frame_forces],
            "dissipation": None if self.dissipation is None else str(self.dissipation),
            "holonomic": [str(c) for c in self.holonomic],
            "quasi_velocities": None if self.quasi_velocities is None else [str(v) for v in self.quasi_velocities],
            "quantities": {k: str(e) for k, e in self.quantities.items()},
            "units": dict(self.units),
        }

    def __str__(self) -> str:
        lines = [f"{self.name}  ({self.source})"]
        if self.description:
            lines.append(f"  {self.description.strip()}")
        lines.append("  coordinates: " + ", ".join(map(str, self.coordinates)))
        if self.parameters:
            lines.append("  parameters:  " + ", ".join(map(str, self.parameters)))
        if self.functions:
            lines.append("  functions:   " + ", ".join(f.__name__ for f in self.functions))
        lines.append(f"  L = {self.lagrangian}")
        if self.frame is None:
            lines.append("  frame: coordinate frame")
        else:
            lines.append("  frame:")
            basis = [f"d/d{q}" for q in self.coordinates]
            for i, row in enumerate(self.frame, start=1):
                terms = [f"({c})*{b}" for c, b in zip(row, basis) if c != 0]
                lines.append(f"    X{i} = " + (" + ".join(terms) if terms else "0"))
        if self.constraints:
            lines.append("  constraints:")
            lines.extend(f"    {c} = 0" for c in self.constraints)
        if self.holonomic:
            lines.append("  holonomic constraints:")
            lines.extend(f"    {c} = 0" for c in self.holonomic)
        if self.inputs:
            lines.append("  inputs: " + ", ".join(map(str, self.inputs)))
        if self.forces is not None:
            lines.append("  forces: " + ", ".join(f"Q_{q} = {c}" for q, c in zip(self.coordinates, self.forces)))
        if self.frame_forces is not None:
            lines.append("  frame forces: " + ", ".join(f"F_{i + 1} = {c}" for i, c in enumerate(self.frame_forces)))
        if self.dissipation is not None:
            lines.append(f"  dissipation: R = {self.dissipation}")
        if self.time is not None:
            lines.append(f"  time: {self.time}")
        if self.values:
            lines.append(
                "  values: " + ", ".join(f"{p} = {v}" for p, v in self.values.items())
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"SystemSpec(name={self.name!r}, coordinates={self.coordinates!r}, "
            f"parameters={self.parameters!r}, source={self.source!r})"
        )


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


def parse_system(text: str, source: str = "<string>") -> SystemSpec:
    """Parse the TOML text of a system file.

    Parameters
    ----------
    text : str
        The TOML document (see the module documentation for its fields).
    source : str, optional
        Where the text comes from; every error message starts with it and
        it is stored in :attr:`SystemSpec.source`.

    Returns
    -------
    SystemSpec

    Raises
    ------
    anholo.errors.SystemFileError
        Malformed TOML (the message gives line and column), a missing,
        unknown or ill-typed field, a bad or clashing name, a frame that is
        not n x n, a velocity in a frame entry, a bad [values] entry, or an
        expression that cannot be parsed.  Indices in messages
        (``frame[1][2]``, ``constraints[0]``) are 0-based.
    anholo.errors.UnknownSymbolError
        An expression uses an undeclared name.

    Examples
    --------
    >>> spec = parse_system('''
    ... name = "Particle in the plane"
    ... coordinates = ["r", "theta"]
    ... parameters = ["m", "k"]
    ... lagrangian = "m*(r_dot^2 + r^2*theta_dot^2)/2 + k/r"
    ... frame = [["1", "0"], ["0", "1/r"]]
    ... ''')
    >>> spec.frame
    ((1, 0), (0, 1/r))
    """
    if not isinstance(text, str):
        raise SystemFileError(f"{printable(source)}: expected the TOML text as a string, got {type(text).__name__}; "
                              "load_system_file(path) reads a file.")
    if text.startswith("\ufeff"):  # a byte-order mark, as some editors write it
        text = text[1:]
    if not isinstance(source, str):
        source = str(source)
    data = load_toml(text, source)
    reader = _Reader(data, source)
    reader.check_fields()
    name = reader.string("name")
    if not name.strip():
        raise reader.fail("name", 'the name is empty; write e.g. name = "Free rigid body".')
    description = reader.string("description", "")
    for key, text, allowed in (("name", name, ""), ("description", description, "\n\t")):
        bad = next((c for c in text if not c.isprintable() and c not in allowed and c != " "), None)
        if bad is not None:
            raise reader.fail(key, f"the control or invisible character U+{ord(bad):04X} in "
                              f"'{printable(text)[:80]}'; remove it (it would be sent to the terminal as it is).")
    coords, params, funcs = reader.declare()

    coordinates = tuple(sp.Symbol(q, real=True) for q in coords)
    velocities = tuple(sp.Symbol(q + VELOCITY_SUFFIX, real=True) for q in coords)
    signs = _read_signs(reader, params)
    parameters = tuple(parameter_symbol(p, signs.get(p, "positive")) for p in params)
    functions = tuple(sp.Function(f, real=True) for f in funcs)
    names: dict[str, Any] = {}
    for group in (coordinates, velocities, parameters):
        names.update((s.name, s) for s in group)
    names.update((f.__name__, f) for f in functions)

    time = reader.time(names)
    inputs = _read_inputs(reader, names)
    quasi = _read_quasi_velocities(reader, names, len(coords))
    lagrangian = reader.expression("lagrangian", data["lagrangian"], names, numbers=True)
    used_inputs = sorted(s.name for s in lagrangian.free_symbols & set(inputs))
    if used_inputs:
        raise reader.fail("lagrangian", f"uses the input {used_inputs[0]}; inputs enter through `forces` "
                          "(or constraints), not the Lagrangian.")
    frame = reader.frame(names, coords, velocities, ((quasi or (), "quasi-velocity"), (inputs, "input")))
    if time is not None:
        reader.time_free("frame", [c for row in (frame or ()) for c in row], time)
    forces = _read_force_list(reader, "forces", names, len(coords))
    frame_forces = _read_force_list(reader, "frame_forces", names, len(coords))
    dissipation = None
    if "dissipation" in data:
        dissipation = reader.expression("dissipation", data["dissipation"], names, numbers=True)
        if dissipation.free_symbols & set(inputs):
            raise reader.fail("dissipation", "depends on an input; write input forces into `forces`.")
    holonomic = _read_holonomic(reader, names, coordinates, velocities)
    constraints = reader.constraints(names)
    values = reader.values(parameters, coords)
    symmetry = _read_symmetry(reader, names, coords, velocities)
    quantities = _read_quantities(reader, names, inputs, time)
    units = _read_units(reader, {*names, *(s.name for s in inputs), *(s.name for s in quasi or ()),
                                 *((time.name,) if time is not None else ("t",)), *quantities})
    return SystemSpec(
        name=name,
        description=description,
        coordinates=coordinates,
        velocities=velocities,
        parameters=parameters,
        functions=functions,
        lagrangian=lagrangian,
        frame=frame,
        constraints=constraints,
        values=values,
        source=source,
        time=time,
        symmetry=symmetry,
        inputs=inputs,
        forces=forces,
        frame_forces=frame_forces,
        dissipation=dissipation,
        holonomic=holonomic,
        quasi_velocities=quasi,
        quantities=quantities,
        units=units,
    )


def _read_quasi_velocities(reader: _Reader, names: dict, n: int) -> tuple | None:
    """``quasi_velocities = ["u", "w", "omega"]``: n names of the frame's quasi-velocities (added to ``names``)."""
    if "quasi_velocities" not in reader.data:
        return None
    value = reader.data["quasi_velocities"]
    if not isinstance(value, list) or len(value) != n or not all(isinstance(v, str) for v in value):
        raise reader.fail("quasi_velocities", f"expected an array of {n} names, one per frame vector X_1..X_{n}; "
                          f"got {value!r}.")
    out = []
    for i, name in enumerate(value):
        reader.check_name("quasi_velocities", i, name)
        if name in names:
            raise reader.fail(f"quasi_velocities[{i}]", f"{name!r} is already declared; quasi-velocities need "
                              "their own names.")
        sym = sp.Symbol(name, real=True)
        names[name] = sym
        out.append(sym)
    return tuple(out)


def _read_inputs(reader: _Reader, names: dict) -> tuple:
    """``inputs = ["u1", ...]``: real symbols, added to ``names``."""
    if "inputs" not in reader.data:
        return ()
    value = reader.data["inputs"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise reader.fail("inputs", f'expected an array of names, got {value!r}; write e.g. inputs = ["tau"].')
    out = []
    for i, name in enumerate(value):
        reader.check_name("inputs", i, name)
        if name in names:
            raise reader.fail(f"inputs[{i}]", f"{name!r} is already declared; inputs need their own names.")
        sym = sp.Symbol(name, real=True)
        names[name] = sym
        out.append(sym)
    return tuple(out)


def _read_force_list(reader: _Reader, key: str, names, n: int) -> tuple | None:
    """``forces`` / ``frame_forces``: n expressions (one per coordinate / frame vector), or None."""
    if key not in reader.data:
        return None
    value = reader.data[key]
    what = "coordinate, in coordinate order" if key == "forces" else "frame vector X_1..X_n"
    if not isinstance(value, list) or len(value) != n:
        got = f"{len(value)} entries" if isinstance(value, list) else f"{_toml_type(value)} {value!r}"
        raise reader.fail(key, f"expected an array of {n} expressions, one per {what}; got {got}.")
    return tuple(reader.expression(f"{key}[{k}]", e, names, numbers=True) for k, e in enumerate(value))


def _read_holonomic(reader: _Reader, names, coordinates, velocities) -> tuple:
    """``holonomic = ["f(q, t)", ...]``: configuration constraints, free of velocities."""
    value = reader.data.get("holonomic", [])
    if not isinstance(value, list):
        raise reader.fail("holonomic", f'expected an array of strings, got {_toml_type(value)} {value!r}; '
                          'write e.g. holonomic = ["x^2 + y^2 - l^2"].')
    out = []
    for k, c in enumerate(value):
        expr = reader.expression(f"holonomic[{k}]", c, names, numbers=False)
        used = sorted(s.name for s in expr.free_symbols & set(velocities))
        if used:
            raise reader.fail(f"holonomic[{k}]", f"uses the velocity {used[0]}; holonomic constraints f(q, t) = 0 "
                              "depend on coordinates (and the time) only — put velocity constraints into "
                              "`constraints`.")
        if not expr.free_symbols & set(coordinates):
            raise reader.fail(f"holonomic[{k}]", f"{c!r} does not depend on the coordinates.")
        out.append(expr)
    return tuple(out)
def _read_quantities(reader: _Reader, names: dict, inputs, time) -> dict:
    """The ``[quantities]`` table: ``name = "expression"`` in coordinates, velocities and parameters."""
    table = reader.data.get("quantities", {})
    if not isinstance(table, dict):
        raise reader.fail("quantities", f'expected a table [quantities] with lines such as  speed = "r*phi_dot", '
                          f"got {_toml_type(table)} {table!r}.")
    taken = {*names, *(s.name for s in inputs), *((time.name,) if time is not None else ())}
    out = {}
    for key, text in table.items():
        reader.check_name("quantities", None, key)
        if key in taken:
            raise reader.fail(f"quantities.{key}", f"{key!r} is already a name of the system; choose another name.")
        if not isinstance(text, str) and not _is_number(text):
            raise reader.fail(f"quantities.{key}", f"expected an expression string, got {_toml_type(text)} {text!r}.")
        out[key] = reader.expression(f"quantities.{key}", text, {k: v for k, v in names.items()
                                                                  if isinstance(v, sp.Symbol)}, numbers=True)
    return out


def _read_units(reader: _Reader, known: set) -> dict:
    """The ``[units]`` table: ``name = "unit"`` for names of the system (display only)."""
    table = reader.data.get("units", {})
    if not isinstance(table, dict):
        raise reader.fail("units", f'expected a table [units] with lines such as  speed = "m/s", got '
                          f"{_toml_type(table)} {table!r}.")
    for key, unit in table.items():
        if key not in known:
            raise reader.fail(f"units.{key}", f"{key!r} is not a name of the system; [units] gives units of "
                              "coordinates, velocities (NAME_dot), parameters, inputs, quantities and the time.")
        if not isinstance(unit, str) or not unit.strip() or len(unit) > 40 or not unit.isprintable():
            raise reader.fail(f"units.{key}", f'expected a unit as a short string such as "m/s", got {unit!r}.')
    return {k: v.strip() for k, v in table.items()}


def _read_signs(reader: _Reader, params: list[str]) -> dict[str, str]:
    """The ``[signs]`` table: ``name = "positive" | "nonnegative" | "negative" | "nonpositive" | "real" |
    "nonzero"`` for parameters; a parameter not listed is positive."""
    table = reader.data.get("signs", {})
    if not isinstance(table, dict):
        raise reader.fail("signs", f"expected a table [signs] with lines such as  c = \"real\", got "
                          f"{_toml_type(table)} {table!r}.")
    for key, value in table.items():
        if key not in params:
            raise reader.fail(f"signs.{key}", f"{key!r} is not a declared parameter; [signs] gives the signs of "
                              f"parameters ({', '.join(params) or 'none declared'}).")
        if not isinstance(value, str) or value not in SIGNS:
            raise reader.fail(f"signs.{key}", f"expected one of {', '.join(repr(k) for k in SIGNS)}, got {value!r}.")
    return dict(table)


def _read_symmetry(reader: _Reader, names, coords, velocities) -> dict | None:
    """The ``[symmetry]`` table: a Lie group action by its fundamental vector fields.

    ``generators`` (required): an array of arrays of n expressions, row a = components
    of the fundamental field ``E_a`` along ``d/dq^1 .. d/dq^n`` (coordinates and
    parameters only); ``structure_constants`` (optional): ``c[d][a][b]`` with
    ``[e_a, e_b] = c^d_ab e_d``, numbers; ``action`` (optional): ``"left"``
    (default) or ``"right"`` — the convention ``[E_a, E_b] = ∓c^d_ab E_d``.
    """
    table = reader.data.get("symmetry")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise reader.fail("symmetry", f"expected a table [symmetry], got {_toml_type(table)} {table!r}.")
    unknown = sorted(set(table) - {"generators", "structure_constants", "action"})
    if unknown:
        raise reader.fail(f"symmetry.{unknown[0]}", "unknown key; [symmetry] has generators, "
                          "structure_constants (optional) and action (optional).")
    n = len(coords)
    gens = table.get("generators")
    if not isinstance(gens, list) or not gens or not all(isinstance(g, list) for g in gens):
        raise reader.fail("symmetry.generators", "expected a non-empty array of arrays, one per generator, each "
                          f"with {n} components along {', '.join('d/d' + q for q in coords)}.")
    rows = []
    for a, g in enumerate(gens):
        if len(g) != n:
            raise reader.fail(f"symmetry.generators[{a}]", f"expected {n} components, got {len(g)}.")
        row = []
        for A, entry in enumerate(g):
            where = f"symmetry.generators[{a}][{A}]"
            expr = reader.expression(where, entry, names, numbers=True)
            if expr.free_symbols & set(velocities):
                raise reader.fail(where, "generators depend on coordinates and parameters only, not velocities.")
            row.append(expr)
        rows.append(tuple(row))
    k = len(rows)
    consts = table.get("structure_constants")
    if consts is not None:
        ok = (isinstance(consts, list) and len(consts) == k
              and all(isinstance(r, list) and len(r) == k for r in consts)
              and all(isinstance(c, list) and len(c) == k and all(_is_number(e) for e in c)
                      for r in consts for c in r))
        if not ok:
            raise reader.fail("symmetry.structure_constants",
                              f"expected a {k}x{k}x{k} array of numbers c[d][a][b] (with [e_a, e_b] = c^d_ab e_d).")
        consts = tuple(tuple(tuple(_number(e, reader.source) for e in c) for c in r) for r in consts)
    action = table.get("action", "left")
    if action not in ("left", "right"):
        raise reader.fail("symmetry.action", f'expected "left" or "right", got {action!r}.')
    return {"generators": tuple(rows), "structure_constants": consts, "action": action}


def load_system_file(path: str | os.PathLike[str]) -> SystemSpec:
    """Read and parse a system file.

    Parameters
    ----------
    path : str or os.PathLike
        A TOML file (UTF-8).

    Returns
    -------
    SystemSpec
        With :attr:`~SystemSpec.source` set to `path`.

    Raises
    ------
    anholo.errors.SystemFileError
        The file cannot be read, or see :func:`parse_system`.

    Examples
    --------
    >>> spec = load_system_file("my_system.toml")  # doctest: +SKIP
    >>> spec.name  # doctest: +SKIP
    'Free rigid body'
    """
    source = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise SystemFileError(f"{source}: not a UTF-8 text file ({exc.reason}).") from None
    except OSError as exc:
        raise SystemFileError(
            f"{source}: cannot read system file: {exc.strerror or exc}."
        ) from None
    return parse_system(text, source=source)

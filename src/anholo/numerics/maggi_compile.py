"""Numerics of a large system: Maggi's equations compiled from their straight-line programs.

:func:`compile_maggi` gives the :class:`~anholo.numerics.compile.CompiledSystem` that
:func:`~anholo.numerics.simulate` integrates, for a :class:`~anholo.dynamics.maggi.MaggiSystem`: the
state is ``(q, v^α)`` with ``v^α = q̇^{f_α}``; the right-hand side is one generated function
(:mod:`anholo.algebra.codegen`: C built at run time where a compiler works, else Python with
:mod:`math`) that evaluates the shared definitions of ``q̇ = X_α v^α + β``, ``g`` and ``F`` once and
solves ``g v̇ = F`` inside by elimination with partial pivoting, the parameters passed at run time —
nothing symbolic is inverted, nothing is expanded (the PyDy design, Gede, Peterson, Sinha & Moore
2013).  ``ANHOLO_CODEGEN=python`` forces the pure-Python code.  The read-outs (natural velocities, multipliers of the constraints as
written, energy, constraints, holonomic constraints and their Jacobian for the projection) are
generated as elementwise numpy code from their own programs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Mapping

from ..algebra.codegen import c_text, find_compiler, python_source
from ..algebra.engine import se, to_engine
from ..algebra.program import Program
from ..dynamics.maggi import MaggiSystem
from .batch_loop import register_program

__all__ = ["maggi_source", "CACHE_FILES"]

#: The files of the code cache this module writes (the generated sources of large systems), as glob patterns.
CACHE_FILES = ("maggi-source-*.json",)


def maggi_source(nh: MaggiSystem, *, values: Mapping | None = None) -> dict:
    """The generated source and the metadata of the compiled nonholonomic field of a large system
    (keyword arguments of :class:`~anholo.numerics.compile.CompiledSystem`; module docstring).

    The source is kept in the code cache (``$ANHOLO_CACHE``, where the compiled library is kept too) under a
    digest of everything it is generated from (:func:`_source_key`): a second process reads it back with the
    field's program (milliseconds) instead of forming the program and the read-outs again (about half a
    second for the Whipple bicycle)."""
    path = _source_path(nh)
    stored = _read_source(path, nh) if path is not None else None
    if stored is None:
        stored = _form_source(nh)
        if path is not None:
            _write_source(path, stored)
    meta, prog = stored
    params, controls = meta["parameters"], meta.get("control_names", [])
    n, m = nh.n, nh.m
    time = [nh.time.name] if nh.time is not None else []
    groups_rhs = [("t", [se.Symbol(x) for x in time]), ("y", [se.Symbol(x) for x in meta["state_names"]]),
                  ("p", [se.Symbol(x) for x in params + controls])]
    # the program itself, for the compiled loop of many runs (anholo.numerics.batch_loop), in this process
    hol = [to_engine(f) for f in nh.holonomic]
    hol_program = Program.from_expressions(tuple(se.Symbol(x) for x in meta["coordinate_names"]), hol) if hol else None
    register_program(meta["source"], prog, groups_rhs, (n, m), hol_program, n)
    vals = {str(k): float(x) for k, x in (values or {}).items() if str(k) in params}
    return {"kind": "nonholonomic", "source": meta["source"], "parameters": tuple(params), "values": vals,
            "state_names": tuple(meta["state_names"]), "coordinate_names": tuple(meta["coordinate_names"]),
            "multiplier_names": tuple(meta["multiplier_names"]), "n_inputs": 0, "control_names": tuple(controls)}


def _source_key(nh: MaggiSystem) -> str:
    """A digest of what :func:`_form_source` reads: the inputs of the field's program (the Lagrangian,
    constraints and forces in symengine form, the split into free and dependent velocities), the system as
    written (its Lagrangian, constraints and holonomic constraints, names of coordinates, velocities and
    parameters), the compiler found, and the source of the modules that generate the code."""
    import importlib

    from ..algebra.codegen import find_compiler
    from ..dynamics.maggi_field import input_digest

    h = hashlib.sha256(input_digest(nh, False).encode())
    for module in (__name__, "anholo.algebra.codegen", "anholo.numerics.compile"):
        h.update(Path(importlib.import_module(module).__file__).read_bytes())
    chart = nh.chart
    written = (nh.lagrangian, *nh.holonomic, *nh.constraints)
    texts = [str(find_compiler()), *(str(to_engine(e)) for e in written), *(s.name for s in chart.coordinates),
             *(s.name for s in chart.velocities), *(s.name for s in chart.parameters),
             *(s.name for s in nh.free_velocities), *(c.name for c in nh.free_coordinates),
             *(c.name for c in nh.dependent_coordinates), str(nh.time)]
    h.update("\x00".join(texts).encode())
    return h.hexdigest()


def _source_path(nh: MaggiSystem) -> Path | None:
    from ..algebra.codegen import cache_directory

    directory = cache_directory(required=False)
    return directory / f"maggi-source-{_source_key(nh)}.json" if directory is not None else None


def _read_source(path: Path, nh: MaggiSystem):
    """``(meta, program)`` read from the cache, or None (absent, unreadable, or not this system's)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        meta = {key: data[key] for key in ("source", "parameters", "state_names", "coordinate_names",
                                           "multiplier_names", "control_names")}
        prog = Program.from_text(data["program"])
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None
    if len(meta["state_names"]) != nh.n + nh.m or not isinstance(meta["source"], str):
        return None
    return meta, prog


def _write_source(path: Path, stored) -> None:
    """Store ``(meta, program)`` unless the program's text does not give it back exactly
    (:meth:`~anholo.algebra.program.Program.to_text`)."""
    from ..algebra.codegen import store_json

    meta, prog = stored
    text = prog.to_text()
    if text is not None:
        store_json(path, {**meta, "program": text})


def _form_source(nh: MaggiSystem) -> tuple:
    """``(meta, program)``: the generated source (right-hand side and read-outs) and the field's program."""
    chart, m, n = nh.chart, nh.m, nh.n
    q = [s.name for s in chart.coordinates]
    u = [s.name for s in chart.velocities]
    v = [s.name for s in nh.free_velocities]
    prog = nh.program(multipliers=False)
    controls = [w.name for w in nh.inputs]
    params = [str(a) for a in prog.args[n + m:] if str(a) not in ("t", *controls)
              and (nh.time is None or str(a) != nh.time.name)]
    # parameters that only the read-outs use (e.g. the rod's length in a holonomic constraint whose derivative
    # does not involve it): runtime arguments too
    used = {str(x) for e in [nh.lagrangian, *nh.holonomic, *nh.constraints] for x in to_engine(e).free_symbols}
    params += [s.name for s in chart.parameters if s.name not in params and s.name in used]
    state = q + v
    time = [nh.time.name] if nh.time is not None else []
    # the right-hand side: one generated function (C where a compiler works, else Python) that evaluates
    # the program and solves g v̇ = F inside (anholo.algebra.codegen); the parameters are runtime arguments
    # control inputs are trailing run-time arguments of the same vector (their values change from call to call)
    groups = [("t", [se.Symbol(x) for x in time]), ("y", [se.Symbol(x) for x in state]),
              ("p", [se.Symbol(x) for x in params + controls])]
    c_src = c_text(prog, groups, (n, m)) if find_compiler() is not None else ""
    py_src = python_source(prog, groups, (n, m))
    src = [f"_RHS_C = {c_src!r}", f"_RHS_PY = {py_src!r}", "def make_rhs(p):",
           f"    f = _generated(_RHS_C, _RHS_PY, {n + m}, {n + m}, {len(params) + len(controls)})"]
    if controls:  # rhs(t, y, w): the inputs' values w after the parameters
        src += ["    p = list(p)", "    return lambda t, y, w: f(t, y, p + [float(x) for x in w])"]
    else:
        src += ["    return f.bind(p)"]
    # read-outs, elementwise on arrays
    pairs, res = nh.shared()
    readout = Program((), tuple(pairs), tuple(res["lambda_v"]))
    _, red = nh._base
    Xs = red["frame"]
    vs = [se.Symbol(x) for x in v]
    qdot = [sum((Xs[al * n + A] * vs[al] for al in range(m)), se.Integer(0)) for A in range(n)]
    dep = [q.index(c.name) for c in nh.dependent_coordinates]
    for a, Pc in enumerate(dep):
        qdot[Pc] = qdot[Pc] + red["beta"][a]
    base_pairs = tuple(nh._base[0])
    L = to_engine(nh.lagrangian)
    U = [se.Symbol(x) for x in u]
    energy = sum((uA * L.diff(uA) for uA in U), se.Integer(0)) - L
    hol = [to_engine(f) for f in nh.holonomic]
    Q = [se.Symbol(x) for x in q]
    t_sym = [se.Symbol(time[0])] if time else []
    groups_state = [("t", time), ("y", state), ("p", params)]
    groups_readout = [("t", time), ("y", state)] + ([("w", controls)] if controls else []) + [("p", params)]
    src += Program((), base_pairs, tuple(qdot)).function_source("natural_velocities", groups_state)
    src += readout.function_source("multipliers", groups_readout)
    src += ["def initial_state(q, u, lam, p):",
            f"    return ({''.join(f'q[{i}], ' for i in range(n))}"
            f"{''.join(f'u[{q.index(c.name)}], ' for c in nh.free_coordinates)})"]
    nat = [("t", time), ("q", q), ("u", u), ("p", params)]
    src += Program.from_expressions((), [energy]).function_source("energy", nat)
    src += Program.from_expressions((), [to_engine(c) for c in nh.constraints]).function_source("constraints", nat)
    src += [f"_n_constraints = {len(nh.constraints)}",
            f"_constraint_text = {_constraint_texts(nh.constraints)!r}"]
    if hol:
        groups = [("t", time), ("q", q), ("p", params)]
        src += Program.from_expressions((), hol).function_source("holonomic", groups)
        jac = [f.diff(x) for f in hol for x in Q]
        src += Program.from_expressions((), jac).function_source("holonomic_jacobian", groups)
        rate = [f.diff(t_sym[0]) for f in hol] if t_sym else [se.Integer(0)] * len(hol)
        src += Program.from_expressions((), rate).function_source("holonomic_rate", groups)
    src.append(f"_n_holonomic = {len(hol)}")
    meta = {"source": "\n".join(src) + "\n", "parameters": list(params), "state_names": list(state),
            "coordinate_names": list(q), "multiplier_names": [f"lambda{a + 1}" for a in range(n - m)],
            "control_names": controls}
    return meta, prog


def _constraint_texts(constraints, width: int = 80) -> tuple:
    """How messages name the constraints: as written when short (``-R*phi_dot*cos(theta) + x_dot``), else by
    number (a bicycle's contact constraints run to kilobytes)."""
    texts = [str(c) for c in constraints]
    return tuple(t if len(t) <= width else f"constraint {a + 1}" for a, t in enumerate(texts))

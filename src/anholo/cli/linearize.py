"""``anholo linearize``: linearisation about equilibria and relative equilibria, over a sweep of a reference."""

from __future__ import annotations

import argparse  # noqa: F401
import os  # noqa: F401
import sys  # noqa: F401
import time  # noqa: F401
import warnings  # noqa: F401

from .common import (  # noqa: F401
    _COMMAND_START, _DEFAULT_BUDGET, _FIELDS, _MAX_BUDGET, _SECTION_NAMES, _SIMULATE_BUDGET, _SWEEP_BUDGET,
    _VALUE_OPTIONS, _assignments, _budget, _join_negative_values, _numbers, _numeric_parameters, _one_line,
    _parse_assignment, _run_setup, _started, _within_budget, _wrapped_text,
)

def _add_linearize_parser(sub) -> None:
    lin = sub.add_parser(
        "linearize",
        help="linearise a field about an equilibrium or a steady motion: A matrix and eigenvalues",
        description="Linearise the nonholonomic field on C (states: coordinates and free quasi-velocities "
        "v1, v2, ... of the adapted frame, see 'anholo analyze FILE --sections frame,nonholonomic') or the "
        "Euler-Lagrange field about a reference state, from the implicit form M v_dot = F; with --sweep, "
        "a table of eigenvalues over a range of a state (e.g. a speed), a quantity or a parameter. Without "
        "--states the coordinates the field does not depend on (ignorable: yaw, position, wheel angles) are "
        "dropped and, for a steady motion, velocities invariant under them are chosen, so that the "
        "eigenvalues are the growth rates of the steady motion (a relative equilibrium).",
    )
    lin.add_argument("target", metavar="FILE_OR_EXAMPLE", help="path of a system file, or an example name")
    lin.add_argument("--at", default="", metavar="NAME=VALUE,...",
                     help="the reference state (states not given are 0) and the inputs' values (default 0); NAME "
                     "is a state (coordinate or free quasi-velocity), a velocity by its coordinate (yaw_dot=-3), "
                     "a quantity of the file's [quantities] or of --define (speed=5), or an input")
    lin.add_argument("--define", dest="definitions", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=EXPR", help="a quantity for --at and --sweep, affine in the velocities, e.g. "
                     "--define 'v=WRrad*rear_wheel_dot' (repeatable; the file's [quantities] are defined too)")
    lin.add_argument("--states", default=None, metavar="NAME,...",
                     help="the states to linearise in (default: the coordinates that are not ignorable and the free "
                     "velocities); refused if their field depends on a dropped coordinate")
    lin.add_argument("--dependent", default=None, metavar="NAMES",
                     help="solve the constraints for the velocities of these coordinates (comma-separated "
                     "coordinate or quasi-velocity names), e.g. --dependent x,y for free angular rates")
    lin.add_argument("--sweep", default=None, metavar="NAME=START:STOP:COUNT",
                     help="a state, quantity (e.g. a speed) or parameter to sweep over COUNT values")
    lin.add_argument("--field", choices=("nonholonomic", "euler-lagrange"), default=None,
                     help="the dynamics (default: nonholonomic for a system with constraints)")
    lin.add_argument("--set", dest="assignments", action="append", default=[], type=_parse_assignment,
                     metavar="NAME=VALUE", help="parameter value (repeatable); overrides the file's [values]")
    lin.add_argument("--json", action="store_true", help="print a machine-readable JSON result")
    lin.add_argument("--plot", default=None, metavar="OUT.png", help="save the eigenvalues over the sweep")
    lin.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                     help=f"stop after this many seconds of wall time (default {_SIMULATE_BUDGET:g})")


def _linearize_setup(args):
    """The system, its field's source builder, the parameter values, and the --at / --sweep requests: states
    fixed by value, and quantities (``(name, expression, value)``) to be solved for free velocities."""
    import sympy as sp

    from ..errors import DimensionError, InitialStateError
    from ..examples import resolve_system
    from ..parsing import parse_expression
    from ..system import System

    spec = resolve_system(args.target)
    system = System.from_spec(spec)
    params = {str(k): v for k, v in (system.values or {}).items()}
    params.update(_numeric_parameters(system, _assignments(args)))
    field = args.field or ("nonholonomic" if system.constraints else "euler-lagrange")
    coords = [c.name for c in system.chart.coordinates]
    dependent = None
    if args.dependent is not None:
        if field != "nonholonomic":
            raise DimensionError("--dependent chooses the velocities solved from the constraints; it needs the "
                                 "nonholonomic field.")
        quasi = [v.name for v in system.bundle.quasi_velocities]
        dependent = [d.strip() for d in args.dependent.split(",") if d.strip()]
        unknown = [d for d in dependent if d not in coords and d not in quasi]
        if unknown:
            raise DimensionError(f"--dependent: {', '.join(unknown)} not coordinates or quasi-velocities; use some "
                                 f"of {', '.join(dict.fromkeys(coords + quasi))}.")
        if system.frame.is_coordinate_frame:
            dependent = [coords[quasi.index(d)] if d in quasi and d not in coords else d for d in dependent]

    def build(dep):
        if field != "nonholonomic":  # with forces (dissipation, inputs): the free field in Maggi's form carries them
            return system.lagrangian if system.forces is None else system.free_maggi()
        chosen = list(dep) if dep is not None else dependent
        return system.nonholonomic(dependent=chosen) if chosen is not None else system.nonholonomic()

    symbols = {s.name: s for s in system.chart.coordinates + system.chart.velocities + system.chart.parameters}
    quantities = dict(spec.quantities)
    for name, text in args.definitions:
        if not name.isidentifier() or name in symbols:
            raise InitialStateError(f"--define {name}: give a new name (not a coordinate, velocity or parameter).")
        quantities[name] = parse_expression(text, symbols, where=f"--define {name}")
    source = build(None)
    maggi = hasattr(source, "free_coordinates")
    free = [v.name for v in source.free_velocities] if field == "nonholonomic" else \
        [v.name for v in system.bundle.quasi_velocities]
    inputs = {w.name for w in system.inputs}

    def request(name: str):
        """('state', name) or ('quantity', expression) for a name of --at / --sweep, or None (a parameter)."""
        if name in coords:
            return ("state", name)
        if name in free:  # Maggi's free velocities are coordinate velocities: kept through a change of dependent
            if maggi:
                return ("quantity", sp.Symbol(f"{source.free_coordinates[free.index(name)].name}_dot", real=True))
            return ("state", name)
        if name in quantities:
            return ("quantity", quantities[name])
        if name.endswith("_dot") and name[:-4] in coords:
            return ("quantity", symbols[name])
        return None

    fixed, targets = {}, []
    for item in filter(None, (x.strip() for x in args.at.split(","))):
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq:
            raise InitialStateError(f"--at expects NAME=VALUE,..., got {item!r}.")
        number = _numbers(value, f"--at {name}", 1, [name])[0]
        if name in inputs:
            params[name] = number
            continue
        kind = request(name)
        if kind is None:
            raise InitialStateError(
                f"--at {name}: not a state, velocity, quantity or input of {system.name!r}; the states are "
                f"{', '.join(coords + free)}, velocities NAME_dot, quantities {', '.join(quantities) or '(none)'}.")
        if kind[0] == "state":
            fixed[name] = number
        else:
            targets.append((name, kind[1], number))
    for w in inputs:  # the inputs' reference values: --at NAME=VALUE, else 0 (B is the derivative there)
        params.setdefault(w, 0.0)
    return spec, system, field, build, source, params, fixed, targets, request


def _cmd_linearize(args, out) -> int:
    budget = _budget(args, _SIMULATE_BUDGET)
    if args.plot:  # before any work
        from ..errors import InitialStateError
        from ..files import check_output_path

        check_output_path(args.plot, "--plot", inputs=[args.target] if os.path.exists(args.target) else [],
                          suffixes=(".png", ".pdf", ".svg"), error=InitialStateError)
    return _within_budget(budget, "linearize", lambda: _linearize(args, out))


def _linearize(args, out) -> int:
    import json

    import numpy as np

    from ..analysis.linearization import LinearizationProblem, _complex_text
    from ..analysis.linear_problem import follow_branches, stability_criterion
    from ..analysis.relative_equilibria import check_states, choose_states, reference_state
    from ..errors import AnholoError, InitialStateError
    from ..limits import check as check_limit

    spec, system, field, build, source, params, fixed, targets, request = _linearize_setup(args)
    hol = system.holonomic if field == "nonholonomic" else ()
    name, xs, sweep_kind = None, [], None
    if args.sweep:
        name, eq, rng = args.sweep.partition("=")
        name, parts = name.strip(), rng.split(":")
        if not eq or len(parts) != 3:
            raise InitialStateError(f"--sweep expects NAME=START:STOP:COUNT, got {args.sweep!r}.")
        start, stop = (_numbers(x, "--sweep", 1, [name])[0] for x in parts[:2])
        count = _numbers(parts[2], "--sweep COUNT", 1, ["COUNT"])[0]
        if not float(count).is_integer() or count < 1:
            raise InitialStateError(f"--sweep {name}: COUNT must be a positive integer, got {parts[2]!r}.")
        check_limit("runs", int(count), f"--sweep {name}", f"COUNT = {int(count)}")
        xs = np.linspace(start, stop, int(count))
        sweep_kind = request(name)
        if sweep_kind is None and name not in params:
            raise InitialStateError(f"--sweep {name}: not a state, velocity, quantity or parameter of {system.name!r}.")

    def reference(src, x=None):
        fix, tg, par = dict(fixed), [(e, v) for _, e, v in targets], dict(params)
        if name is not None:
            if sweep_kind is None:
                par[name] = float(x)
            elif sweep_kind[0] == "state":
                fix[name] = float(x)
            else:
                tg.append((sweep_kind[1], float(x)))
        return reference_state(src, fix, tg, par), par

    default = None  # dependent velocities chosen here when the file's default cannot carry the reference
    try:
        ref0, par0 = reference(source, xs[0] if name is not None else None)
    except AnholoError:
        # the default dependent velocities cannot carry the reference motion (a frame singular there, or a
        # requested velocity among the dependent ones): re-choose them as choose_states does, if not given
        found = None if args.dependent is not None or field != "nonholonomic" else \
            _dependent_carrying(system, build, source, lambda src: reference(src, xs[0] if name is not None else None))
        if found is None:
            raise
        default, source, (ref0, par0) = found
        build = (lambda b, d: (lambda dep: b(dep if dep is not None else d)))(build, default)
    if args.states is not None:
        states = [x.strip() for x in args.states.split(",") if x.strip()]
        problem = LinearizationProblem(source, states, holonomic=hol)
        choice = check_states(source, [s.name for s in problem.states], ref0, par0, hol)
    else:
        source, choice, ref0 = choose_states(build, ref0, par0, hol, dependent_given=args.dependent is not None)
        if default is not None and choice.dependent is None:
            import dataclasses

            choice = dataclasses.replace(choice, dependent=tuple(default))
        problem = LinearizationProblem(source, choice.states, holonomic=hol)
    results = follow_branches([problem.at(*reference(source, x)) for x in xs]) if name is not None else \
        [problem.at(*reference(source))]
    units = _linearize_units(spec, source, [s.name for s in problem.states] + ([name] if name else []))
    if args.json:
        payload = {"field": field, "states": [s.name for s in problem.states], "sweep": name,
                   "values": [float(x) for x in xs], "results": [r.to_dict() for r in results],
                   "choice": choice.to_dict(), "units": units, "stability": stability_criterion()}
        print(json.dumps(payload, indent=2), file=out)
    elif name is None:
        at = ", ".join(x.strip().replace("=", " = ", 1) for x in args.at.split(",") if x.strip())
        lines = [f"{system.name}: {field} field linearised at " + (at or "the origin"), f"  {choice}",
                 _with_units(str(results[0]), units)]
        if not results[0].is_equilibrium:
            lines.append("not an equilibrium of these states (rates " + ", ".join(f"{r:.3g}" for r in results[0].rates)
                         + "): the eigenvalues do not decide stability")
        else:
            lines.append(f"linear verdict: {results[0].verdict} ({stability_criterion()})")
        print(_wrapped_text("\n".join(lines)), file=out)
    else:
        label = name + (f" [{units[name]}]" if name in units else "")
        lines = [f"{system.name}: eigenvalues of the {field} field over {label}", f"  {choice}",
                 f"  {stability_criterion()}", "  each column of eigenvalues follows one branch over the sweep",
                 f"{label:>10}  verdict   eigenvalues"]
        for x, r in zip(xs, results):
            lines.extend(_row(f"{x:10.5g}  {r.verdict:<8}  ", [_complex_text(e) for e in r.eigenvalues]))
        print(_wrapped_text("\n".join(lines)), file=out)
    if args.plot:
        from ..plotting import eigenvalue_plot, save_figure
        fig = eigenvalue_plot(list(xs) if name else [0.0], results, name or "reference",
                              unit=units.get(name) if name else None, units=spec.units,
                              title=f"{system.name}: {', '.join(s.name for s in problem.states)}")
        print(f"figure written to {save_figure(fig, args.plot)}", file=out)
    return 0


def _row(head: str, cells: list) -> list:
    """A row of the sweep table: ``head`` and the cells joined by ``, ``, continued under the first cell when
    longer than the report's width."""
    from ..io.report import TEXT_WIDTH

    lines, line = [], head
    for k, cell in enumerate(cells):
        piece = cell + ("," if k < len(cells) - 1 else "")
        if line.strip() and len(line) > len(head) and len(line) + 1 + len(piece) > TEXT_WIDTH:
            lines.append(line)
            line = " " * len(head)
        line += (" " if len(line) > len(head) else "") + piece
    return lines + [line]


def _with_units(text: str, units: dict) -> str:
    """The linearisation's text with the units of its states (``A (states lean [rad], v3 [rad/s]):``)."""
    if not units:
        return text
    head, sep, rest = text.partition("):")
    if not head.startswith("A (states ") or not sep:
        return text
    names = head[len("A (states "):].split(", ")
    return "A (states " + ", ".join(n + (f" [{units[n]}]" if n in units else "") for n in names) + sep + rest


def _dependent_carrying(system, build, source, reference, tries: int = 12):
    """``(dependent, source, reference)`` for the first choice of dependent velocities (k coordinates whose
    velocities appear in the constraints, the last coordinates first) at which ``reference(source)`` succeeds,
    or None: the field is the same, only its free velocities change (docs/simulation.rst)."""
    import itertools

    from ..errors import AnholoError

    coords = [c.name for c in system.chart.coordinates]
    k = len(coords) - len(source.free_velocities)
    if not k:
        return None
    for dep in itertools.islice(itertools.combinations(reversed(coords), k), tries):
        dep = tuple(sorted(dep, key=coords.index))
        try:
            other = build(dep)
            return dep, other, reference(other)
        except AnholoError:
            continue
    return None


def _linearize_units(spec, source, names) -> dict:
    """Units of the file's [units] for the names of a linearisation: a name the table lists; a free velocity of
    Maggi's route has the unit of its coordinate's velocity; a quasi-velocity ``v^i`` of a frame has the unit of
    ``q̇^A`` for the components ``X_i^A`` that are pure numbers or functions of angles only (``q̇^A = v^i X_i^A +
    …``: e.g. ``X_3 = ∂/∂spin + r cos(yaw) ∂/∂x + …`` gives ``v3`` the unit rad/s of ``spin_dot``), when these
    agree; else none (docs/systemfiles.rst, ``[units]``)."""
    units = dict(getattr(spec, "units", {}) or {})
    out = {}
    free = {v.name: f.name for v, f in zip(getattr(source, "free_velocities", ()), getattr(source, "free_coordinates", ()))}
    rows = _frame_rows(source)
    for n in names:
        if n in units:
            out[n] = units[n]
        elif n in free and f"{free[n]}_dot" in units:
            out[n] = units[f"{free[n]}_dot"]
        elif n in rows:
            found = {_velocity_unit(q, units) for q, c in rows[n] if _dimensionless(c, units)}
            if len(found) == 1 and None not in found:
                out[n] = found.pop()
    return out


def _frame_rows(source) -> dict:
    """``{quasi-velocity name: [(coordinate name, component X_i^A), ...]}`` of the frame of a field's source (the
    adapted frame of a nonholonomic system, the frame of a Lagrangian), only its nonzero components."""
    if hasattr(source, "velocities_on_C") and hasattr(source, "frame"):
        frame, velocities = source.frame, list(source.velocities_on_C)
    elif hasattr(source, "bundle") and hasattr(source.bundle, "frame"):
        frame, velocities = source.bundle.frame, list(source.bundle.quasi_velocities)
    else:
        return {}
    X, coords = frame.vectors, [c.name for c in frame.chart.coordinates]
    out = {}
    for i, v in enumerate(velocities):
        if getattr(v, "is_Symbol", False):
            out[v.name] = [(coords[A], X[i, A]) for A in range(len(coords)) if X[i, A] != 0]
    return out


def _dimensionless(component, units: dict) -> bool:
    """A frame component that is a number or a function of angles only (coordinates in rad or deg)."""
    return all(units.get(s.name, "").strip() in ("rad", "deg") for s in component.free_symbols)


def _velocity_unit(q: str, units: dict):
    if f"{q}_dot" in units:
        return units[f"{q}_dot"]
    if q in units:
        return f"{units[q]}/{units.get('t', 's')}"
    return None

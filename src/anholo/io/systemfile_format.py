"""The system-file format: its fields, an example of each, and a reader that checks a parsed TOML
table field by field with errors that name the field (used by :mod:`anholo.io.systemfile`)."""

from __future__ import annotations

import difflib
import keyword
import math
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from typing import Any

import sympy as sp

from anholo.parsing import sympified
from anholo.errors import LimitError, SystemFileError, printable
from anholo import limits as _limits
from anholo.parsing import CONSTANTS, STANDARD_FUNCTIONS, parse_expression
from anholo.io.validation import check_parameter_value

#: The top-level keys (and tables) a system file may contain, in the order in
#: which they are documented.  Extend this tuple when the format grows.
KNOWN_FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "coordinates",
    "parameters",
    "functions",
    "lagrangian",
    "frame",
    "constraints",
    "time",
    "values",
    "symmetry",
    "inputs",
    "forces",
    "frame_forces",
    "dissipation",
    "holonomic",
    "quasi_velocities",
    "signs",
    "quantities",
    "units",
)

_REQUIRED_FIELDS: tuple[str, ...] = ("name", "coordinates", "lagrangian")

VELOCITY_SUFFIX = "_dot"


# ---------------------------------------------------------------------------
# The specification
# ---------------------------------------------------------------------------


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return "date/time"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float_to_rational(value: float, where: str) -> sp.Rational:
    """The exact rational a decimal stands for: a TOML float keeps the text written in the file
    (``1.00000000000000000001`` is that number, not the float64 1.0), a Python float its shortest repr."""
    if not math.isfinite(value):
        raise SystemFileError(f"{where}: {printable(getattr(value, 'text', repr(value)))} is not a finite number.")
    return sp.Rational(getattr(value, "text", None) or repr(value))


class _TomlFloat(float):
    """A TOML float that remembers its literal text (for exact decimals)."""

    text: str

    def __new__(cls, text: str):
        obj = super().__new__(cls, text)
        obj.text = text.replace("_", "")
        return obj

    def __repr__(self) -> str:
        return self.text


class _LongNumber(Exception):
    def __init__(self, text: str, digits: int):
        self.text, self.digits = text, digits


def _toml_float(text: str) -> float:
    """``parse_float`` hook of :func:`tomllib.loads`: the literal checked against the digits bound
    (as written, counting the exponent: ``1e10000`` has 10001 digits), kept as :class:`_TomlFloat`."""
    clean = text.replace("_", "").lower().lstrip("+-")
    if clean in ("inf", "nan"):
        return _TomlFloat(text)
    mantissa, _, exponent = clean.partition("e")
    if len(exponent) > 12:
        digits = 10 ** 12
    else:
        digits = sum(c.isdigit() for c in mantissa) + abs(int(exponent or "0"))
    if digits > _limits.current().digits:
        raise _LongNumber(text, digits)
    return _TomlFloat(text)


def _line_of(text: str, needle: str) -> str:
    at = text.find(needle)
    return f"line {text.count(chr(10), 0, at) + 1}" if at >= 0 else "somewhere"


def load_toml(text: str, source: str) -> dict:
    """The TOML document ``text`` as a dict, read exactly and within the limits (:mod:`anholo.limits`):
    floats keep their decimal text (exact), integers and floats have at most ``digits`` digits, arrays
    and tables are nested at most ``nesting`` deep; malformed TOML, a number too long or a nesting too deep
    is a :class:`SystemFileError` (:class:`LimitError`) naming the line or the key."""
    bound = _limits.current()
    try:
        data = tomllib.loads(text, parse_float=_toml_float)
    except tomllib.TOMLDecodeError as exc:
        raise SystemFileError(
            f"{source}: malformed TOML: {printable(exc)}. Fix the syntax at that position "
            '(strings need double quotes, e.g. lagrangian = "x_dot^2/2").'
        ) from None
    except _LongNumber as exc:
        _limits.check("digits", exc.digits, f"{source}: {_line_of(text, exc.text)}",
                      f"the number {printable(exc.text[:30])}{'...' if len(exc.text) > 30 else ''} "
                      f"(about {exc.digits} digits)")
        raise  # pragma: no cover - check raised
    except RecursionError:
        raise LimitError(f"{source}: the arrays or tables are nested too deeply to read (thousands of levels); "
                         "a system file needs at most a few levels.") from None
    except ValueError as exc:  # an integer beyond Python's int-to-string limit (4300 digits)
        longest = max(re.finditer(r"[0-9_]+", text), key=lambda m: len(m.group()), default=None)
        where = _line_of(text, longest.group()) if longest else "somewhere"
        raise LimitError(f"{source}: {where}: an integer of more than 4300 digits cannot be read (Python's bound "
                         f"for integers; anholo's limit is {bound.digits} digits): shorten the number.") from None
    _check_values(data, source, bound)
    return data


def _short(path: str) -> str:
    path = printable(path)
    return path if len(path) <= 60 else path[:55] + " ..."


def _check_values(data: dict, source: str, bound) -> None:
    """Every integer of ``data`` within the digits bound and every array/table within the nesting bound
    (the key path in the message), walked without recursion."""
    stack = [(data, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            items = [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        else:
            if isinstance(value, int) and not isinstance(value, bool):
                digits = _limits.digits_of(value)
                _limits.check("digits", digits, f"{source}: {_short(path)}", f"an integer of about {digits} digits")
            continue
        if depth > bound.nesting:
            _limits.check("nesting", depth, f"{source}: {_short(path) or 'the document'}",
                          "the nesting of arrays and tables")
        stack.extend((v, p, depth + 1) for p, v in items)


def _number(value: int | float, where: str) -> sp.Rational:
    if isinstance(value, int):
        return sp.Integer(value)
    return _float_to_rational(value, where)


class _Reader:
    def __init__(self, data: dict[str, Any], source: str) -> None:
        self.data = data
        self.source = source

    def fail(self, field_name: str, message: str) -> SystemFileError:
        return SystemFileError(f"{self.source}: {field_name}: {message}")

    # -- structure ------------------------------------------------------
    def check_fields(self) -> None:
        for key, value in self.data.items():
            if key in KNOWN_FIELDS:
                continue
            kind = "table" if isinstance(value, dict) else "field"
            shown = f"[{key}]" if kind == "table" else repr(key)
            close = difflib.get_close_matches(key, KNOWN_FIELDS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise SystemFileError(
                f"{self.source}: unknown {kind} {shown}.{hint} "
                f"Known fields: {', '.join(KNOWN_FIELDS)}."
            )
        for key in _REQUIRED_FIELDS:
            if key not in self.data:
                raise self.fail(key, f"missing required field; add e.g. {_EXAMPLES[key]}.")

    def string(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self.fail(
                key, f"expected a string, got {_toml_type(value)} {value!r}; write {key} = \"...\"."
            )
        return value

    def names_list(self, key: str) -> list[str]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(
                key,
                f"expected an array of strings (names), got {value!r}; "
                f"write e.g. {_EXAMPLES[key]}.",
            )
        return value

    # -- names ------------------------------------------------------------
    def check_name(self, key: str, index: int | None, name: str) -> None:
        where = key if index is None else f"{key}[{index}]"
        if not name.isidentifier():
            raise self.fail(
                where,
                f"{name!r} is not a valid name; use letters, digits and underscores, "
                "not starting with a digit (e.g. theta, x1, I_3).",
            )
        if unicodedata.normalize("NFKC", name) != name:
            raise self.fail(
                where,
                f"{name!r} is not in normal form; Python reads it as "
                f"{unicodedata.normalize('NFKC', name)!r}, use that spelling.",
            )
        if keyword.iskeyword(name):
            raise self.fail(where, f"{name!r} is a Python keyword; choose another name.")
        if name in STANDARD_FUNCTIONS:
            raise self.fail(
                where, f"{name!r} is the name of a standard function; choose another name."
            )
        if name in CONSTANTS:
            raise self.fail(
                where,
                f"{name!r} is a constant ({CONSTANTS[name]}); choose another name.",
            )

    def declare(self) -> tuple[list[str], list[str], list[str]]:
        coords = self.names_list("coordinates")
        params = self.names_list("parameters")
        funcs = self.names_list("functions")
        if not coords:
            raise self.fail("coordinates", "at least one coordinate is needed.")
        _limits.check("coordinates", len(coords), f"{self.source}: coordinates", f"{len(coords)} coordinates")
        seen: dict[str, str] = {}
        for key, group in (("coordinates", coords), ("parameters", params), ("functions", funcs)):
            for i, name in enumerate(group):
                self.check_name(key, i, name)
                if key == "coordinates" and name.endswith(VELOCITY_SUFFIX):
                    raise self.fail(
                        f"coordinates[{i}]",
                        f"{name!r} ends in {VELOCITY_SUFFIX!r}, which is reserved for "
                        "velocities (it would be ambiguous); rename the coordinate.",
                    )
                if name in seen:
                    other = seen[name]
                    if other.startswith(key):
                        what = f"{name!r} is listed twice (also {other})"
                    else:
                        what = f"{name!r} is already declared as {other}"
                    raise self.fail(f"{key}[{i}]", f"{what}; names must be distinct.")
                seen[name] = f"{key}[{i}]"
                if key == "coordinates":
                    seen[name + VELOCITY_SUFFIX] = f"the velocity of coordinates[{i}]"
        return coords, params, funcs

    # -- expressions --------------------------------------------------------
    def expression(self, where: str, value: Any, names: Mapping[str, Any], *, numbers: bool) -> sp.Expr:
        if numbers and _is_number(value):
            return _number(value, f"{self.source}: {where}")
        if not isinstance(value, str):
            allowed = "a string or a number" if numbers else "a string"
            raise self.fail(
                where, f"expected {allowed} (an expression), got {_toml_type(value)} {value!r}."
            )
        return parse_expression(value, names, where=f"{self.source}: {where}")

    def frame(
        self, names: Mapping[str, Any], coords: list[str], velocities: tuple[sp.Symbol, ...], others=()
    ) -> tuple[tuple[sp.Expr, ...], ...] | None:
        """The frame rows; ``others``: pairs (symbols, word) refused in its entries besides the velocities
        (quasi-velocities, inputs)."""
        if "frame" not in self.data:
            return None
        value = self.data["frame"]
        n = len(coords)
        shape = (
            f"expected {n} rows (one per frame vector X_1..X_{n}), each an array of {n} "
            f"components along {', '.join('d/d' + q for q in coords)}"
        )
        if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
            raise self.fail(
                "frame", f"expected an array of arrays; {shape}. Got {_toml_type(value)} {value!r}."
            )
        if len(value) != n:
            raise self.fail("frame", f"{shape}; got {len(value)} rows.")
        rows = []
        for i, row in enumerate(value):
            if len(row) != n:
                raise self.fail(
                    f"frame[{i}]", f"expected {n} entries (frame is n x n, n = {n}), got {len(row)}."
                )
            entries = []
            for j, entry in enumerate(row):
                where = f"frame[{i}][{j}]"
                expr = self.expression(where, entry, names, numbers=True)
                for symbols, word in ((velocities, "velocity"), *others):
                    used = sorted((expr.free_symbols & set(symbols)), key=str)
                    if used:
                        raise self.fail(
                            where,
                            f"the {word} {used[0]} appears in {printable(repr(entry))}; frame components "
                            "depend on coordinates and parameters only.",
                        )
                entries.append(expr)
            rows.append(tuple(entries))
        return tuple(rows)

    def time(self, names: dict[str, Any]) -> sp.Symbol | None:
        """The time symbol of ``time = "t"`` (added to ``names``), or None."""
        if "time" not in self.data:
            return None
        name = self.string("time")
        self.check_name("time", None, name)
        if name in names:
            raise self.fail("time", f"{name!r} is already declared; choose another name for the time.")
        symbol = sp.Symbol(name, real=True)
        names[name] = symbol
        return symbol

    def time_free(self, key: str, exprs: list, time: sp.Symbol) -> None:
        """The frame may not depend on time (the Lagrangian, forces and constraints may)."""
        if any(time in sympified(e).free_symbols for e in exprs):
            raise self.fail(
                key,
                f"depends on the time {time}; a frame must not depend on time "
                "(the Lagrangian, forces and constraints may).",
            )

    def constraints(self, names: Mapping[str, Any]) -> tuple[sp.Expr, ...]:
        value = self.data.get("constraints", [])
        if not isinstance(value, list):
            raise self.fail(
                "constraints",
                f"expected an array of strings, got {_toml_type(value)} {value!r}; "
                f"write e.g. {_EXAMPLES['constraints']}.",
            )
        return tuple(
            self.expression(f"constraints[{k}]", c, names, numbers=False)
            for k, c in enumerate(value)
        )

    def values(
        self, params: tuple[sp.Symbol, ...], coords: list[str]
    ) -> dict[sp.Symbol, sp.Rational]:
        table = self.data.get("values", {})
        if not isinstance(table, dict):
            raise self.fail(
                "values",
                f"expected a table, got {_toml_type(table)} {table!r}; write a [values] "
                "section with lines such as  m = 1.5",
            )
        by_name = {p.name: p for p in params}
        out: dict[sp.Symbol, sp.Rational] = {}
        for key, value in table.items():
            where = f"values.{key}"
            if key not in by_name:
                what = (
                    f"{key!r} is a coordinate, not a parameter"
                    if key in coords
                    else f"{key!r} is not a declared parameter"
                )
                raise self.fail(
                    where,
                    f"{what}; [values] gives default values of parameters "
                    f"({', '.join(by_name) or 'none declared'}).",
                )
            if not _is_number(value):
                raise self.fail(
                    where, f"expected a number, got {_toml_type(value)} {value!r}; write e.g. {key} = 1.5"
                )
            number = _number(value, f"{self.source}: {where}")
            check_parameter_value(by_name[key], number, f"{self.source}: {where}")
            out[by_name[key]] = number
        return {p: out[p] for p in params if p in out}


_EXAMPLES: Mapping[str, str] = {
    "name": 'name = "Free rigid body"',
    "coordinates": 'coordinates = ["x", "y"]',
    "parameters": 'parameters = ["m", "g"]',
    "functions": 'functions = ["A1"]',
    "lagrangian": 'lagrangian = "(x_dot^2 + y_dot^2)/2"',
    "constraints": 'constraints = ["z_dot - y*x_dot"]',
}

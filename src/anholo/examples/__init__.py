"""Bundled example systems.

Most examples are system files (see :mod:`anholo.io.systemfile`) shipped with
the package; their name is the file stem, e.g. ``"rigid_body"`` for
``rigid_body.toml``.  Families of examples are generated: ``n_trailer_<n>``
(:func:`n_trailer`, a car towing ``n`` trailers, any ``n >= 0``).  The
generators :func:`n_trailer` and :func:`crampin_mestdag_class` write the TOML text
of a system file and parse it with :func:`anholo.io.parse_system`, so a
generated system is validated exactly like a file.

>>> from anholo.examples import list_examples, load_example
>>> examples = dict(list_examples())
>>> examples["rigid_body"], examples["n_trailer_<n>"]
('Free rigid body', 'n-trailer system: a car towing n trailers (any n >= 0, e.g. n_trailer_2)')
>>> load_example("rigid_body").coordinates
(phi, theta, psi)
>>> load_example("n_trailer_1").coordinates
(x, y, theta0, theta1)
"""

from __future__ import annotations

import ast
import json
import operator
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from importlib.resources.abc import Traversable

import sympy as sp

from anholo.errors import UnknownExampleError

from anholo.parsing import CONSTANTS, STANDARD_FUNCTIONS, parse_expression
from anholo.limits import check as check_limit
from anholo.io.systemfile import VELOCITY_SUFFIX, SystemSpec, load_system_file, parse_system

__all__ = [
    "list_examples",
    "example_names",
    "example_path",
    "load_example",
    "resolve_system",
    "n_trailer",
    "n_trailer_toml",
    "crampin_mestdag_class",
    "crampin_mestdag_class_toml",
]

_SUFFIX = ".toml"

# Generated families: (listed name, title).  Names are resolved by
# _generated_example below.
_N_TRAILER_PREFIX = "n_trailer"
_N_TRAILER_LISTED = "n_trailer_<n>"
_N_TRAILER_TITLE = "n-trailer system: a car towing n trailers (any n >= 0, e.g. n_trailer_2)"
_FAMILIES: tuple[tuple[str, str], ...] = ((_N_TRAILER_LISTED, _N_TRAILER_TITLE),)
_N_TRAILER_NAME = re.compile(r"n_trailer_(0|[1-9][0-9]*)")


def _files() -> list[Traversable]:
    root = resources.files(__name__)
    return sorted(
        (f for f in root.iterdir() if f.is_file() and f.name.endswith(_SUFFIX)),
        key=lambda f: f.name,
    )


#: Bundled examples too large for the exact route (their nonholonomic field comes from Maggi's
#: equations, :mod:`anholo.dynamics.maggi`); ``example_names(large=False)`` leaves them out.
LARGE_EXAMPLES = frozenset({"rattleback", "whipple_bicycle", "whipple_bicycle_pitch_rate"})


def example_names(large: bool = True) -> list[str]:
    """The names of the bundled example files, sorted (without :data:`LARGE_EXAMPLES` if ``large`` is False).

    Generated families such as ``n_trailer_<n>`` are not included (see
    :func:`list_examples`).

    Examples
    --------
    >>> "rigid_body" in example_names()
    True
    """
    names = [f.name[: -len(_SUFFIX)] for f in _files()]
    return names if large else [n for n in names if n not in LARGE_EXAMPLES]


def list_examples() -> list[tuple[str, str]]:
    """The bundled examples as ``(name, title)`` pairs, sorted by name.

    The title is the file's ``name`` field.  A generated family is listed
    once, by its pattern: ``("n_trailer_<n>", "n-trailer system: ...")``.

    Returns
    -------
    list of (str, str)

    Examples
    --------
    >>> dict(list_examples())["spherical_pendulum"]
    'Spherical pendulum'
    >>> "n_trailer_<n>" in dict(list_examples())
    True
    """
    out = []
    for f in _files():
        try:
            title = tomllib.loads(f.read_text(encoding="utf-8")).get("name", "")
        except tomllib.TOMLDecodeError:  # pragma: no cover - bundled files are valid
            title = "(malformed file)"
        out.append((f.name[: -len(_SUFFIX)], str(title)))
    out.extend(_FAMILIES)
    return sorted(out)


def _listing() -> str:
    names = example_names() + [listed for listed, _ in _FAMILIES]
    return ", ".join(sorted(names)) or "(none)"


def _unknown(name: str, *, looked_for_file: bool) -> UnknownExampleError:
    what = (
        f"{name!r} is neither an existing file nor a bundled example"
        if looked_for_file
        else f"{name!r} is not a bundled example"
    )
    return UnknownExampleError(
        f"{what}. Bundled examples: {_listing()}. Give the path of a system file or one of "
        "these names (for n_trailer_<n> write the number, e.g. n_trailer_2)."
    )


def _generated_example(name: str, *, looked_for_file: bool) -> SystemSpec | None:
    """The generated example called `name`, or None if `name` names no family."""
    if not name.startswith(_N_TRAILER_PREFIX):
        return None
    match = _N_TRAILER_NAME.fullmatch(name)
    if match is None:
        what = (
            f"{name!r} is neither an existing file nor a bundled example"
            if looked_for_file
            else f"{name!r} is not a bundled example"
        )
        raise UnknownExampleError(
            f"{what}: the n-trailer examples are named n_trailer_<n> with n a non-negative "
            "integer written in decimal digits, e.g. n_trailer_0 (the car alone), "
            f"n_trailer_1, n_trailer_2. Bundled examples: {_listing()}."
        )
    digits = match.group(1)
    n = int(digits) if len(digits) <= 12 else 10**12
    check_limit("trailers", n, name, f"{'more than 10^12' if len(digits) > 12 else n} trailers")
    return n_trailer(n)


def example_path(name: str) -> Traversable:
    """The location of a bundled example file.

    Parameters
    ----------
    name : str
        An example name (file stem), e.g. ``"rigid_body"``.  Generated
        examples (``n_trailer_<n>``) have no file.

    Returns
    -------
    importlib.resources.abc.Traversable
        A path-like object (a :class:`pathlib.Path` for an ordinary
        installation) with ``read_text``/``open``.

    Raises
    ------
    anholo.errors.UnknownExampleError
        No example file has that name; the message lists the bundled names.

    Examples
    --------
    >>> example_path("polar_particle").name
    'polar_particle.toml'
    """
    for f in _files():
        if f.name == name + _SUFFIX:
            return f
    if _N_TRAILER_NAME.fullmatch(name):
        raise UnknownExampleError(
            f"{name!r} is a generated example and has no file; load it with "
            f"load_example({name!r}) or get its text from n_trailer_toml(n)."
        )
    raise _unknown(name, looked_for_file=False)


def load_example(name: str) -> SystemSpec:
    """Load a bundled example.

    Parameters
    ----------
    name : str
        An example name: a file stem, e.g. ``"nonholonomic_particle"``, or
        ``"n_trailer_<n>"`` with a number ``n >= 0``, e.g. ``"n_trailer_2"``.

    Returns
    -------
    SystemSpec
        Its :attr:`~anholo.io.SystemSpec.source` is the example's file name
        (for a generated example, e.g. ``"<generated n_trailer_2>"``).

    Raises
    ------
    anholo.errors.UnknownExampleError
        No example has that name; the message lists the bundled names.

    Examples
    --------
    >>> load_example("nonholonomic_particle").constraints
    (-x_dot*y + z_dot,)
    >>> len(load_example("n_trailer_2").constraints)
    3
    """
    for f in _files():
        if f.name == name + _SUFFIX:
            return parse_system(f.read_text(encoding="utf-8"), source=str(f))
    spec = _generated_example(name, looked_for_file=False)
    if spec is None:
        raise _unknown(name, looked_for_file=False)
    return spec


def resolve_system(name_or_path: str | os.PathLike[str]) -> SystemSpec:
    """Load a system given either a file path or a bundled example name.

    An existing file is loaded first; otherwise the argument is looked up
    among the bundled examples (a trailing ``.toml`` is ignored, so
    ``rigid_body.toml`` finds the example when no such file exists),
    including the generated ones such as ``n_trailer_2``.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A path to a system file, or an example name.

    Returns
    -------
    SystemSpec

    Raises
    ------
    anholo.errors.UnknownExampleError
        Neither an existing file nor a bundled example; the message lists
        the bundled names.
    anholo.errors.SystemFileError
        The file exists but is not a valid system file.

    Examples
    --------
    >>> resolve_system("spherical_pendulum").name
    'Spherical pendulum'
    >>> resolve_system("n_trailer_0").name
    'n-trailer system, n = 0 (the car alone)'
    """
    text = os.fspath(name_or_path)
    if os.path.isfile(text):
        return load_system_file(text)
    names = example_names()
    stem = text[: -len(_SUFFIX)] if text.endswith(_SUFFIX) else text
    if stem in names:
        return load_example(stem)
    spec = _generated_example(stem, looked_for_file=True)
    if spec is None:
        raise _unknown(text, looked_for_file=True)
    return spec


# ---------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string (JSON string syntax is valid TOML)."""
    return json.dumps(text, ensure_ascii=False)


def _toml_array(items: Sequence[str], indent: str = "") -> str:
    if not items:
        return "[]"
    inner = "".join(f"{indent}    {_toml_string(s)},\n" for s in items)
    return "[\n" + inner + indent + "]"


def _inline_array(items: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_string(s) for s in items) + "]"


def _toml_number(value: int | float | str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"a default value must be a number, got {value!r}")
    return str(value)


def _n_index(n) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n must be an integer (the number of trailers), got {n!r}") from None
    if n < 0:
        raise ValueError(f"n must be a non-negative integer (the number of trailers), got {n}")
    return n


def n_trailer_toml(n: int) -> str:
    """The system file (TOML text) of the n-trailer system.

    A car (a unicycle: mass ``m0``, moment of inertia ``J0``) with its axle
    midpoint at ``(x, y)`` and heading ``theta0`` tows ``n`` trailers with
    headings ``theta1 .. thetan``.  Trailer ``i`` is hitched at the midpoint
    of the previous axle and has its own axle at the distance ``d_i`` behind
    the hitch (on-axle hitching), so axle ``i`` is at

    ``(x_i, y_i) = (x - sum_{j<=i} d_j*cos(theta_j), y - sum_{j<=i} d_j*sin(theta_j))``

    (axle 0 is the car's, at ``(x, y)``).  No axle slips sideways:
    ``-x_i_dot*sin(theta_i) + y_i_dot*cos(theta_i) = 0``, written as
    ``-sin(theta_i)*x_dot + cos(theta_i)*y_dot - sum_{j<=i} d_j*cos(theta_i -
    theta_j)*theta_j_dot`` (n + 1 constraints).  Trailer ``i`` has its mass
    ``m_i`` at its axle and moment of inertia ``J_i`` about it:
    ``L = m0*(x_dot^2 + y_dot^2)/2 + J0*theta0_dot^2/2 +
    sum_i [m_i*(x_i_dot^2 + y_i_dot^2)/2 + J_i*theta_i_dot^2/2]``.

    Parameters
    ----------
    n : int
        The number of trailers, ``n >= 0``.

    Returns
    -------
    str
        TOML text in the format of :mod:`anholo.io.systemfile`; the
        parameters are ``m0, J0, m1, J1, d1, ..., mn, Jn, dn``.

    Raises
    ------
    TypeError, ValueError
        `n` is not a non-negative integer.

    Examples
    --------
    >>> print(n_trailer_toml(1))  # doctest: +ELLIPSIS
    name = "n-trailer system, n = 1"
    ...
    constraints = [
        "-sin(theta0)*x_dot + cos(theta0)*y_dot",
        "-sin(theta1)*x_dot + cos(theta1)*y_dot - d1*theta1_dot",
    ]
    ...
    """
    n = _n_index(n)
    coords = ["x", "y"] + [f"theta{i}" for i in range(n + 1)]
    params = ["m0", "J0"]
    for i in range(1, n + 1):
        params += [f"m{i}", f"J{i}", f"d{i}"]
    terms = ["m0*(x_dot^2 + y_dot^2)/2 + J0*theta0_dot^2/2"]
    for i in range(1, n + 1):
        sx = " + ".join(f"d{j}*sin(theta{j})*theta{j}_dot" for j in range(1, i + 1))
        cy = " + ".join(f"d{j}*cos(theta{j})*theta{j}_dot" for j in range(1, i + 1))
        terms.append(
            f"+ m{i}*((x_dot + {sx})^2\n     + (y_dot - ({cy}))^2)/2 + J{i}*theta{i}_dot^2/2"
        )
    constraints = ["-sin(theta0)*x_dot + cos(theta0)*y_dot"]
    for i in range(1, n + 1):
        c = f"-sin(theta{i})*x_dot + cos(theta{i})*y_dot"
        for j in range(1, i):
            c += f" - d{j}*cos(theta{i} - theta{j})*theta{j}_dot"
        c += f" - d{i}*theta{i}_dot"
        constraints.append(c)
    if n == 0:
        name = "n-trailer system, n = 0 (the car alone)"
    else:
        name = f"n-trailer system, n = {n}"
    description = (
        f"A car towing {n} trailer(s), on-axle hitching. The car is a unicycle with its "
        "axle midpoint at (x, y), heading theta0, mass m0 and moment of inertia J0. "
        "Trailer i (i = 1..n) has heading theta_i and is hitched at the midpoint of "
        "the previous axle; its own axle is at the distance d_i behind the hitch, so "
        "axle i is at (x_i, y_i) = (x - sum_{j<=i} d_j*cos(theta_j), "
        "y - sum_{j<=i} d_j*sin(theta_j)), where trailer i has its mass m_i and, about "
        "it, its moment of inertia J_i. No axle slips sideways: "
        "-x_i_dot*sin(theta_i) + y_i_dot*cos(theta_i) = 0 for i = 0..n, expanded to "
        "-sin(theta_i)*x_dot + cos(theta_i)*y_dot - sum_{j<=i} "
        "d_j*cos(theta_i - theta_j)*theta_j_dot = 0. Coordinate frame. Generated by "
        "anholo.examples.n_trailer_toml."
    )
    values = {"m0": 2, "J0": 1}
    for i in range(1, n + 1):
        values.update({f"m{i}": 1, f"J{i}": 0.5, f"d{i}": 1})
    lines = [
        f"name = {_toml_string(name)}",
        f"description = {_toml_string(description)}",
        "",
        f"coordinates = {_inline_array(coords)}",
        f"parameters = {_inline_array(params)}",
        '# axle i moves with (x_dot + sum_j d_j*sin(theta_j)*theta_j_dot,',
        '#                    y_dot - sum_j d_j*cos(theta_j)*theta_j_dot)',
        'lagrangian = """',
        *terms,
        '"""',
        "",
        f"constraints = {_toml_array(constraints)}",
        "",
        "[values]",
        *(f"{p} = {_toml_number(v)}" for p, v in values.items()),
        "",
    ]
    return "\n".join(lines)


def n_trailer(n: int) -> SystemSpec:
    """The n-trailer system (see :func:`n_trailer_toml`) as a :class:`~anholo.io.SystemSpec`.

    Also available by name: ``load_example("n_trailer_2")``,
    ``resolve_system("n_trailer_2")``, ``anholo analyze n_trailer_2``.

    Parameters
    ----------
    n : int
        The number of trailers, ``n >= 0``.

    Returns
    -------
    SystemSpec
        Coordinates ``(x, y, theta0, ..., thetan)``, ``n + 1`` constraints;
        its source is ``"<generated n_trailer_<n>>"``.

    Examples
    --------
    >>> spec = n_trailer(2)
    >>> spec.coordinates
    (x, y, theta0, theta1, theta2)
    >>> spec.parameters
    (m0, J0, m1, J1, d1, m2, J2, d2)
    >>> spec.constraints[2]
    -d1*theta1_dot*cos(theta1 - theta2) - d2*theta2_dot - x_dot*sin(theta2) + y_dot*cos(theta2)
    """
    n = _n_index(n)
    return parse_system(n_trailer_toml(n), source=f"<generated n_trailer_{n}>")


def _names_in(text: str) -> tuple[list[str], set[str]]:
    """Identifiers used in an expression, in order of appearance, and those called."""
    try:
        tree = ast.parse("(" + text.strip() + ")", mode="eval")
    except SyntaxError:
        return [], set()  # parse_system reports the error, quoting the expression
    used: list[str] = []
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
    nodes = sorted(
        (node for node in ast.walk(tree) if isinstance(node, ast.Name)),
        key=lambda node: (node.lineno, node.col_offset),
    )
    for node in nodes:
        if node.id not in used:
            used.append(node.id)
    return used, called


def _crampin_mestdag_parts(A, masses, functions):
    A = [A] if isinstance(A, str) or not isinstance(A, Iterable) else list(A)
    A = [a if isinstance(a, str) else str(a) for a in A]
    if not A:
        raise ValueError("A must list at least one function A_i(r2), e.g. ['R*cos(r2)', 'R*sin(r2)']")
    k = len(A)
    if masses is None:
        masses = [f"m{i}" for i in range(1, k + 1)]
    else:
        masses = [masses] if isinstance(masses, str) or not isinstance(masses, Iterable) else list(masses)
        masses = [m if isinstance(m, str) else str(m) for m in masses]
        if len(masses) != k:
            raise ValueError(f"A has {k} entries but masses has {len(masses)}; give one mass per s_i")
    functions = [functions] if isinstance(functions, str) else list(functions)
    coords = ["r1", "r2"] + [f"s{i}" for i in range(1, k + 1)]
    variables = set(coords) | {q + VELOCITY_SUFFIX for q in coords}
    reserved = variables | set(STANDARD_FUNCTIONS) | set(CONSTANTS) | set(functions)
    params = ["I1", "I2"]
    fields = [("masses", i, text, set()) for i, text in enumerate(masses)]
    fields += [("A", i, text, {"r2"}) for i, text in enumerate(A)]
    for key, i, text, allowed in fields:
        used, called = _names_in(text)
        bad = [name for name in used if name in variables - allowed]
        if bad:
            if key == "A":
                rule = "in this class A_i is a function of r2 (and of parameters) only"
            else:
                rule = "the masses are constants (expressions in parameters)"
            raise ValueError(f"{key}[{i}] = {text!r} depends on {', '.join(bad)}; {rule}.")
        for name in used:
            if name not in reserved and name not in called and name not in params:
                params.append(name)
    # Check the syntax here, so that errors name A[i] / masses[i].
    names = {p: sp.Symbol(p, positive=True) for p in params}
    names.update((f, sp.Function(f, real=True)) for f in functions)
    for key, i, text, allowed in fields:
        scope = dict(names)
        scope.update((q, sp.Symbol(q, real=True)) for q in allowed)
        parse_expression(text, scope, where=f"crampin_mestdag_class: {key}[{i}]")
    return A, masses, functions, coords, params


def crampin_mestdag_class_toml(
    A: Sequence[str] | str,
    masses: Sequence[str] | None = None,
    *,
    functions: Sequence[str] = (),
    values: Mapping[str, int | float] | None = None,
    name: str | None = None,
) -> str:
    """The system file (TOML text) of a member of the class of Crampin & Mestdag (2010), §7.1.

    Coordinates ``(r1, r2, s1, ..., sk)``, the constraints
    ``s_i_dot = A_i(r2)*r1_dot`` and
    ``L = (I1*r1_dot^2 + I2*r2_dot^2 + sum_i m_i*s_i_dot^2)/2``, with the
    Chaplygin frame ``X1 = d/dr1 + sum_i A_i(r2) d/ds_i``, ``X2 = d/dr2``,
    ``X_{2+i} = d/ds_i`` (see docs/theory.rst, *Worked examples*).

    Parameters
    ----------
    A : sequence of str
        The functions ``A_1, ..., A_k`` as expressions in ``r2`` (system-file
        syntax), e.g. ``["R*cos(r2)", "R*sin(r2)"]`` (vertical rolling disk),
        ``["tan(r2)"]`` (knife edge), ``["r2"]`` (nonholonomic particle).
        Any other name in them becomes a parameter (a positive symbol).
    masses : sequence of str, optional
        The coefficients ``m_i`` (expressions in parameters, e.g.
        ``["m", "m"]``); default: parameters ``m1, ..., mk``.
    functions : sequence of str, optional
        Names of undefined functions used in `A`, e.g. ``["A1"]`` for
        ``A = ["A1(r2)"]``.
    values : mapping, optional
        Default values of parameters; every parameter defaults to 1.
    name : str, optional
        The title; default ``"Crampin & Mestdag (2010) class, A = (...)"``.

    Returns
    -------
    str
        The parameters are ``I1, I2``, then the names in `masses`, then the
        other names in `A`, in order of appearance.

    Examples
    --------
    >>> print(crampin_mestdag_class_toml(["r2"]))  # doctest: +ELLIPSIS
    name = "Crampin & Mestdag (2010) class, A = (r2)"
    ...
    constraints = [
        "s1_dot - (r2)*r1_dot",
    ]
    ...
    """
    A, masses, functions, coords, params = _crampin_mestdag_parts(A, masses, functions)
    k = len(A)
    kinetic = " + ".join(
        ["I1*r1_dot^2", "I2*r2_dot^2"] + [f"({m})*s{i}_dot^2" for i, m in enumerate(masses, 1)]
    )
    frame_rows = [["1", "0"] + list(A)]
    for row in range(1, k + 2):
        frame_rows.append(["1" if col == row else "0" for col in range(k + 2)])
    constraints = [f"s{i}_dot - ({a})*r1_dot" for i, a in enumerate(A, 1)]
    defaults: dict[str, int | float | str] = dict.fromkeys(params, 1)
    defaults.update(values or {})
    title = name if name is not None else "Crampin & Mestdag (2010) class, A = (" + ", ".join(A) + ")"
    description = (
        "A member of the class of Crampin & Mestdag (2010), §7.1 (docs/theory.rst, *Worked examples*): "
        "coordinates (r1, r2, s1..s_k), L = (I1*r1_dot^2 + I2*r2_dot^2 + "
        "sum_i m_i*s_i_dot^2)/2, constraints s_i_dot = A_i(r2)*r1_dot, here with "
        f"A = ({', '.join(A)}) and masses ({', '.join(masses)}). Chaplygin for the "
        "translations in s; consistent (sigma = -p) iff sum_i m_i*A_i*A_i' = 0. "
        "Frame: X1 = d/dr1 + sum_i A_i d/ds_i, X2 = d/dr2, X_(2+i) = d/ds_i. "
        "Generated by anholo.examples.crampin_mestdag_class_toml."
    )
    frame = "[\n" + "".join(
        "    [" + ", ".join(_toml_string(e) for e in row) + "],\n" for row in frame_rows
    ) + "]"
    lines = [
        f"name = {_toml_string(title)}",
        f"description = {_toml_string(description)}",
        "",
        f"coordinates = {_inline_array(coords)}",
        f"parameters = {_inline_array(params)}",
    ]
    if functions:
        lines.append(f"functions = {_inline_array(functions)}")
    lines += [
        f"lagrangian = {_toml_string('(' + kinetic + ')/2')}",
        "",
        f"frame = {frame}",
        "",
        f"constraints = {_toml_array(constraints)}",
        "",
        "[values]",
        *(f"{p} = {_toml_number(v)}" for p, v in defaults.items()),
        "",
        "# Chaplygin symmetry: the translations in s (docs/theory.rst, *Chaplygin systems*)",
        "[symmetry]",
        "generators = [" + ", ".join(
            _inline_array(["1" if col == 2 + i else "0" for col in range(k + 2)]) for i in range(k)) + "]",
        "",
    ]
    return "\n".join(lines)


def crampin_mestdag_class(
    A: Sequence[str] | str,
    masses: Sequence[str] | None = None,
    *,
    functions: Sequence[str] = (),
    values: Mapping[str, int | float] | None = None,
    name: str | None = None,
) -> SystemSpec:
    """A member of the class of Crampin & Mestdag (2010), §7.1, as a :class:`~anholo.io.SystemSpec`.

    See :func:`crampin_mestdag_class_toml` for the system and the parameters.

    Raises
    ------
    ValueError
        `A` is empty, the number of masses differs from the number of
        functions, an ``A_i`` depends on a coordinate other than ``r2`` or
        on a velocity, or a mass depends on a coordinate or velocity.
    anholo.errors.SystemFileError
        An expression cannot be parsed (the message names ``A[i]`` or
        ``masses[i]`` and quotes it), or a value in `values` is not a
        positive number for a parameter.

    Examples
    --------
    >>> disk = crampin_mestdag_class(["R*cos(r2)", "R*sin(r2)"], masses=["m", "m"])
    >>> disk.parameters
    (I1, I2, m, R)
    >>> disk.constraints
    (-R*r1_dot*cos(r2) + s1_dot, -R*r1_dot*sin(r2) + s2_dot)
    >>> crampin_mestdag_class(["tan(r2)"]).lagrangian
    I1*r1_dot**2/2 + I2*r2_dot**2/2 + m1*s1_dot**2/2
    """
    text = crampin_mestdag_class_toml(A, masses, functions=functions, values=values, name=name)
    return parse_system(text, source="<generated crampin_mestdag_class>")

"""Generated hostile inputs for the Python API, and the entry points they are given to.

:func:`inputs` yields ``(id, entry, value)`` triples from a seed: ``entry`` names a public call that
takes an expression or a list (``ENTRIES``), ``value`` is a generated string (token soup, a random
expression with hostile insertions, a code-execution template that would touch the canary file or set
a builtins attribute) or a value of a wrong kind (``None``, a number, a list where an expression is, a
string where a list is, ``I``, ``oo``, an equation, a matrix, an arbitrary object).  The same seed gives
the same inputs.
"""

from __future__ import annotations

import random

import sympy as sp

CANARY_ATTRIBUTE = "ANHOLO_FUZZ_CANARY"

_NAMES = ["x", "y", "z", "x_dot", "y_dot", "z_dot", "m", "v1", "v3", "t", "tau", "I", "E", "pi", "oo", "nan", "zoo",
          "__import__", "os", "exec", "eval", "lambda", "open", "globals", "Symbol", "Function", "Integral", "S",
          "__class__", "__globals__", "__builtins__", "lambda0", "x_ddot", "ｘ", "𝐱", "é"]
_FUNCTIONS = ["sin", "cos", "tan", "log", "sqrt", "asin", "acos", "atan2", "exp", "Abs", "sign", "cosh", "atanh"]
_NUMBERS = ["0", "1", "2", "0.5", "1e308", "1e-400", "1e999", "10^400", "2^2^2^2^2", "99999999999999999999", "0x1F",
            "1_000", "-0", "3.", ".5", "1e", "1j", "(1/3)^(1/3)^(1/3)^(1/3)", "7"]
_PUNCT = ["(", ")", "[", "]", ",", ".", ":", "'", '"', "#", ";", "\n", "\x1b", "\u200b", "\x07", "\r", "**", "^",
          "+", "-", "*", "/", "//", "%", "@", "==", "<", "&", "|", "~", " ", "\\", "{", "}", "`", "$", "!"]
_TEMPLATES = [
    "__import__('pathlib').Path({canary!r}).touch()",
    "{e} + __import__('os').system('touch {canary}')",
    "exec('import builtins; builtins.{attr} = 1')",
    "eval('__import__(\"builtins\").__setattr__(\"{attr}\", 1)') + {e}",
    "(lambda: open({canary!r}, 'w'))()",
    "{e}.__class__.__init__.__globals__",
    "Symbol('x').func.__globals__['__builtins__']['exec']('open({canary!r}, \"w\")')",
    "globals().__setitem__('{attr}', 1)",
    "[c for c in ().__class__.__base__.__subclasses__()]",
    "{e} if open({canary!r}, 'w') else {e}",
    "{e}; import os",
    "f'{{open({canary!r}, \"w\")}}'",
]


def _expression(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice(_NAMES[:10] + _NUMBERS)
    if r < 0.55:
        op = rng.choice(["+", "-", "*", "/", "^", "**"])
        return f"{_expression(rng, depth + 1)} {op} {_expression(rng, depth + 1)}"
    if r < 0.8:
        f = rng.choice(_FUNCTIONS)
        args = ", ".join(_expression(rng, depth + 1) for _ in range(2 if f == "atan2" or rng.random() < 0.1 else 1))
        return f"{f}({args})"
    return f"({_expression(rng, depth + 1)})"


def _clean(rng: random.Random, depth: int = 0) -> str:
    """A well-formed expression in the declared names (x, y, z, their velocities, m) and small numbers."""
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice(["x", "y", "z", "x_dot", "y_dot", "z_dot", "m", "2", "1/3", "0.25"])
    if r < 0.75:
        op = rng.choice(["+", "-", "*", "/", "^2", "^"])
        if op == "^2":
            return f"({_clean(rng, depth + 1)})^2"
        if op == "^":
            return f"({_clean(rng, depth + 1)})^{rng.choice(['3', '(1/2)', '-1', '(1/3)^(1/3)'])}"
        return f"{_clean(rng, depth + 1)} {op} {_clean(rng, depth + 1)}"
    return f"{rng.choice(['sin', 'cos', 'exp', 'atan', 'sqrt', 'log'])}({_clean(rng, depth + 1)})"


def _string(rng: random.Random, canary: str) -> str:
    r = rng.random()
    if r < 0.25:
        return "".join(rng.choice(_NAMES + _FUNCTIONS + _NUMBERS + _PUNCT) for _ in range(rng.randint(1, 20)))
    if r < 0.5:
        return _clean(rng)
    if r < 0.7:
        e = _expression(rng)
        for _ in range(rng.randint(0, 2)):  # hostile insertions
            i = rng.randint(0, len(e))
            e = e[:i] + rng.choice(_PUNCT + _NAMES) + e[i:]
        return e
    return rng.choice(_TEMPLATES).format(canary=canary, attr=CANARY_ATTRIBUTE, e=_expression(rng, 2))


def _wrong_value(rng: random.Random):
    x = sp.Symbol("x")
    return rng.choice([None, 42, 3.5, float("nan"), float("inf"), True, [], [1], ["x", "y"], {"a": 1}, b"x_dot",
                       sp.I, sp.oo, sp.zoo, sp.nan, sp.Eq(x, 1), sp.Matrix([1, 2]), object(), (lambda: 1), (1, 2),
                       1 + 2j, sp.Symbol("x_dot"), sp.Symbol("x_dot", positive=True) ** 2, sp.Function("f")(x),
                       "abc", "", " ", "x_dot, y_dot", ["__import__('os')"], [[1, 0], [0, 1]]])


def entries():
    """name -> (kind, call) for the public calls under test (the result of "Lagrangian" and "sympified" is the
    expression read, compared with an independent reading for the well-formed inputs): ``kind`` is "expression" (the value is one
    expression) or "list" (the value is the list the call takes)."""
    from anholo import Chart, Forces, Frame, KinematicConstraints, Lagrangian, LinearConstraints
    from anholo import NonholonomicSystem, TangentBundle, VectorField
    from anholo.constraints.kinematic import CartesianPullback
    from anholo.dynamics.maggi import MaggiSystem
    from anholo.parsing import sympified
    from anholo.io.systemfile import parse_system

    C = Chart("x y z", parameters=["m"])
    F = Frame.coordinate(C)
    TQ = TangentBundle(F)
    L = Lagrangian(TQ, "(x_dot^2 + y_dot^2 + z_dot^2)/2")
    return {
        "Lagrangian": ("expression", lambda v: Lagrangian(TQ, v, reduce=False).natural_expr()),
        "Frame.entry": ("expression", lambda v: Frame(C, [[1, 0, 0], [0, 1, 0], [0, 0, v]])),
        "Frame.rows": ("list", lambda v: Frame(C, v)),
        "Frame.from_coframe": ("expression", lambda v: Frame.from_coframe(C, [[1, 0, 0], [0, 1, 0], [v, 0, 1]])),
        "VectorField": ("expression", lambda v: VectorField(C, [v, 0, 0])),
        "VectorField.call": ("expression", lambda v: VectorField(C, [1, 0, 0])(v)),
        "Forces": ("expression", lambda v: Forces(C, [v, 0, 0])),
        "Forces.list": ("list", lambda v: Forces(C, v)),
        "Forces.dissipation": ("expression", lambda v: Forces(C, [0, 0, 0], dissipation=v)),
        "LinearConstraints": ("expression", lambda v: LinearConstraints.from_expressions(C, [v])),
        "LinearConstraints.list": ("list", lambda v: LinearConstraints.from_expressions(C, v)),
        "KinematicConstraints": ("expression", lambda v: KinematicConstraints(C, [v])),
        "CartesianPullback": ("expression", lambda v: CartesianPullback(C, {"X": v})),
        "NonholonomicSystem": ("expression", lambda v: NonholonomicSystem(L, [v])),
        "NonholonomicSystem.forces": ("list", lambda v: NonholonomicSystem(L, ["z_dot - y*x_dot"], forces=v)),
        "MaggiSystem": ("expression", lambda v: MaggiSystem(C, v, ["z_dot - y*x_dot"])),
        "MaggiSystem.constraints": ("list", lambda v: MaggiSystem(C, "x_dot^2", v)),
        "parse_system": ("expression", lambda v: parse_system(
            f'name = "f"\ncoordinates = ["x", "y"]\nlagrangian = {_toml_string(v)}\n')),
        "sympified": ("expression", lambda v: sympified(v)),
    }


def _toml_string(v) -> str:
    if not isinstance(v, str):
        return repr(v)
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\x1b", "\\u001b") + '"'


def inputs(count: int, seed: int, canary: str):
    """``count`` triples ``(id, entry name, value)``."""
    rng = random.Random(seed)
    names = sorted(entries())
    for i in range(count):
        entry = rng.choice(names)
        r = rng.random()
        if r < 0.2:
            value, kind = _wrong_value(rng), "wrong"
        elif r < 0.35:
            value, kind = _clean(rng), "clean"
        else:
            value, kind = _string(rng, canary), "hostile"
        yield f"{seed}-{i}-{entry}-{kind}", entry, value

"""Straight-line programs: expressions with their shared subexpressions, differentiated and compiled.

A large derived quantity (the implicit form of a bicycle) is best kept as a *straight-line
program*: definitions ``t_1 = f_1(args)``, ``t_2 = f_2(args, t_1)``, … (common subexpressions)
and outputs written with them.  Such a program

* prints compactly (the ``"cse"`` lists of the JSON reports),
* is differentiated in forward mode without ever expanding a tree — the chain rule along the
  definitions, ``∂t_i/∂z = Σ_s ∂f_i/∂s · ∂s/∂z`` over the symbols ``s`` of ``f_i`` (Griewank &
  Walther's forward mode, applied symbolically), so the derivative costs a small multiple of the
  program — and
* compiles to one Python function of scalars (``math`` functions, one local per definition), the
  code generation of PyDy (Gede, Peterson, Sinha & Moore 2013) without a C compiler.

The expressions are symengine's (:mod:`anholo.algebra.engine`).  A program never holds a literal
``nan``, ``zoo`` or ``oo`` (symengine makes them from a division by a symbolic zero, e.g. ``1/sqrt(0)``,
``0*zoo``): construction raises :class:`~anholo.errors.NonFiniteExpressionError` naming the definition
or output, and the derivatives of ``Abs`` and ``sign`` are ``sign(f) df`` and ``0``
(:func:`~anholo.algebra.engine.engine_diff`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import NonFiniteExpressionError
from .engine import engine_cse, engine_diff, has_kinks, kink_derivative, nonfinite, printed, se, zero

__all__ = ["Program", "MATH_NAMESPACE", "ExpressionPrinter", "c_float", "pivoted_solve", "argument_locals"]


def argument_locals(groups, used=None) -> tuple:
    """``(names, unpack)`` for generated code: each symbol of ``groups`` (``[(argument name, symbols)]``) named by a
    local ``_<argument><i>`` (``"t"``: the time, a scalar every symbol of its group stands for), and the lines that
    unpack the arguments into them — for the groups with a symbol in ``used`` (all groups if None)."""
    names, unpack = {}, []
    for argname, symbols in groups:
        if argname == "t":
            names.update({str(s): "t" for s in symbols})
            continue
        local = [f"_{argname}{i}" for i in range(len(symbols))]
        names.update({str(s): x for s, x in zip(symbols, local)})
        if local and (used is None or any(str(s) in used for s in symbols)):
            unpack.append(", ".join(local) + ("," if len(local) == 1 else "") + f" = {argname}")
    return names, unpack


@dataclass(frozen=True)
class Program:
    """Outputs written with shared definitions, as functions of ``args``.

    Parameters
    ----------
    args : tuple of symengine Symbol
        The inputs (states, parameters).
    pairs : tuple of (Symbol, expression)
        The definitions, in order (a later one may use earlier names).
    outputs : tuple of expressions
        In ``args`` and the defined names.
    """

    args: tuple
    pairs: tuple
    outputs: tuple

    def __post_init__(self):
        for name, value in self.pairs:
            if nonfinite(value):
                raise NonFiniteExpressionError(
                    f"the shared subexpression {name} = {_short(value)} holds a non-finite constant (nan, zoo or "
                    "oo: a division by a symbolic zero, e.g. a square root whose argument vanishes identically); "
                    "rewrite the expression it comes from so that it is defined.")
        for i, out in enumerate(self.outputs):
            if nonfinite(out):
                raise NonFiniteExpressionError(
                    f"output {i} of the program, {_short(out)}, holds a non-finite constant (nan, zoo or oo: a "
                    "division by a symbolic zero); rewrite the expression it comes from so that it is defined.")

    @classmethod
    def derived(cls, args: Sequence, pairs: Sequence, outputs: Sequence) -> "Program":
        """A program whose definitions were derived from checked ones by differentiation (e.g. the Lie
        brackets of :func:`anholo.geometry.distribution.numerical_flag`): not walked again for non-finite
        constants (the walk costs as much as the derivation itself)."""
        out = object.__new__(cls)
        for name, value in (("args", tuple(args)), ("pairs", tuple(pairs)), ("outputs", tuple(outputs))):
            object.__setattr__(out, name, value)
        return out

    @classmethod
    def from_expressions(cls, args: Sequence, exprs: Sequence) -> "Program":
        """The program of ``exprs`` with their common subexpressions."""
        pairs, reduced = engine_cse(list(exprs)) if exprs else ([], [])
        return cls(tuple(args), tuple(pairs), tuple(reduced))

    def with_outputs(self, exprs: Sequence, prefix: str = "w") -> "Program":
        """A program with this one's definitions, the common subexpressions of ``exprs`` appended (named
        ``prefix0, prefix1, …``, avoiding every name in use) and ``exprs`` as its outputs.

        ``exprs`` may use this program's names.  Large trees given here become shared definitions, so
        that :meth:`derivatives` and :meth:`compile` work on small expressions."""
        pairs, reduced = engine_cse(list(exprs)) if exprs else ([], [])
        used = {str(a) for a, _ in self.pairs} | {str(a) for a in self.args}
        used |= {str(s) for e in exprs for s in e.free_symbols}
        fresh, count = {}, 0
        for name, _ in pairs:
            while f"{prefix}{count}" in used:
                count += 1
            fresh[name] = se.Symbol(f"{prefix}{count}")
            count += 1
        new = [(fresh[a], b.xreplace(fresh)) for a, b in pairs]
        return Program(self.args, tuple(self.pairs) + tuple(new), tuple(e.xreplace(fresh) for e in reduced))

    def derivatives(self, variables: Sequence) -> tuple:
        """``(program, jacobian)``: a program whose outputs are this one's followed by ``∂out_i/∂z_j``
        (row-major, ``jacobian = (len(outputs), len(variables))``), by forward mode along the definitions."""
        variables = list(variables)
        d: dict = {}  # symbol -> list of derivative expressions (None = zero)
        for j, z in enumerate(variables):
            d.setdefault(z, [None] * len(variables))[j] = se.Integer(1)
        new_pairs = list(self.pairs)
        kinks = has_kinks([e for _, e in self.pairs] + list(self.outputs))
        used = {str(a) for a, _ in self.pairs} | {str(a) for a in self.args}
        count = 0

        def fresh():
            nonlocal count
            while f"d{count}" in used:
                count += 1
            s = se.Symbol(f"d{count}")
            used.add(f"d{count}")
            return s

        def grad(expr):
            out = [None] * len(variables)
            for s in expr.free_symbols:
                ds = d.get(s)
                if ds is None:
                    continue
                partial = engine_diff(expr, s, kinks)
                if partial == 0:
                    continue
                for j, dz in enumerate(ds):
                    if dz is not None:
                        term = partial * dz
                        out[j] = term if out[j] is None else out[j] + term
            return out

        for name, value in self.pairs:
            g = grad(value)
            if any(x is not None for x in g):
                row = []
                for x in g:
                    if x is None or x == 0:
                        row.append(None)
                    else:
                        s = fresh()
                        new_pairs.append((s, x))
                        row.append(s)
                d[name] = row
        jac = []
        for out in self.outputs:
            jac.extend(zero if x is None else x for x in grad(out))
        return Program(self.args, tuple(new_pairs), tuple(self.outputs) + tuple(jac)), (len(self.outputs), len(variables))

    def printed(self, prefix: str = "cse") -> tuple:
        """``(pairs, outputs)`` as strings, the definitions named ``prefix0, prefix1, …``."""
        return printed(self.pairs, list(self.outputs), prefix)

    def size(self) -> int:
        return len(self.pairs)

    def to_text(self) -> dict | None:
        """``{"args", "pairs", "outputs"}`` as strings (JSON-ready), or None where the text does not give the
        program back exactly (:meth:`from_text`): a floating constant keeps 15 digits in its text, and a name
        such as ``I`` or ``E`` reads back as a constant."""
        data = {"args": [str(a) for a in self.args], "pairs": [[str(a), str(b)] for a, b in self.pairs],
                "outputs": [str(o) for o in self.outputs]}
        try:
            back = Program.from_text(data)
        except (ValueError, TypeError, RuntimeError, NonFiniteExpressionError):
            return None
        if back.args != tuple(self.args) or any(a != b for a, b in zip(back.pairs, self.pairs)) or any(
                a != b for a, b in zip(back.outputs, self.outputs)):
            return None
        return data

    @classmethod
    def from_text(cls, data: Mapping) -> "Program":
        """The program of :meth:`to_text`'s dictionary."""
        return cls(tuple(se.Symbol(a) for a in data["args"]),
                   tuple((se.Symbol(a), se.sympify(b)) for a, b in data["pairs"]),
                   tuple(se.sympify(o) for o in data["outputs"]))

    def pruned(self) -> "Program":
        """The same outputs with only the definitions they need."""
        needed = {s for o in self.outputs for s in o.free_symbols}
        keep = []
        for name, value in reversed(self.pairs):
            if name in needed:
                keep.append((name, value))
                needed |= value.free_symbols
        return Program.derived(self.args, tuple(reversed(keep)), self.outputs)  # checked: not again

    def evaluate(self, values) -> list:
        """The outputs at one point (``values``: argument name → number), without compiling: each needed
        definition is evaluated once, in order (cheaper than :meth:`compile` for a single point).  An output
        that is undefined at the point (a division by zero there) is ``nan``."""
        env = {se.Symbol(str(k)): se.RealDouble(float(v)) for k, v in values.items()}

        def num(e):
            hit = {s: env[s] for s in e.free_symbols if s in env}
            return e.xreplace(hit) if hit else e

        for name, value in self.pruned().pairs:
            env[name] = num(value)
        out = []
        for o in self.outputs:
            val = num(o)
            if val.free_symbols:
                raise ValueError(f"Program.evaluate: no value for {', '.join(sorted(map(str, val.free_symbols)))}")
            out.append(_complex(val))
        return out

    def body(self, names: Mapping, module: str = "") -> tuple:
        """``(lines, outputs)``: Python assignments ``_t<i> = …`` for the definitions and the outputs as
        source, the arguments printed as ``names[str(arg)]``; functions are ``module + name`` (e.g.
        ``"numpy."`` for code that works elementwise on arrays, ``""`` for the :data:`MATH_NAMESPACE`)."""
        pairs = self.pruned().pairs
        table = dict(names)
        for i, (n, _) in enumerate(pairs):
            table[str(n)] = f"_t{i}"
        printer = _Printer(table, module)
        lines = [f"_t{i} = {printer(value)}" for i, (_, value) in enumerate(pairs)]
        return lines, [printer(o) for o in self.outputs]

    def function_source(self, fname: str, groups: Sequence, module: str = "numpy.") -> list:
        """Source lines of ``def fname(<group names>):`` returning the tuple of the outputs (:meth:`body`):
        ``groups`` = ``[(argname, symbols)]`` in the order of the arguments, each argument unpacked into its
        symbols (``"t"``: the time, a scalar that every symbol of its group stands for); ``module`` as in
        :meth:`body` (``"numpy."``: elementwise on arrays of points).  The read-outs of compiled systems
        (:mod:`anholo.numerics.compile`, :mod:`anholo.numerics.maggi_compile`) are generated so.

        Raises
        ------
        SimulationError
            If the program uses a symbol that is in no group."""
        names, unpack = argument_locals(groups)
        pruned = self.pruned()
        defined = {str(a) for a, _ in pruned.pairs}
        stray = sorted({str(s) for e in [v for _, v in pruned.pairs] + list(pruned.outputs) for s in e.free_symbols}
                       - defined - set(names))
        if stray:
            from ..errors import SimulationError

            raise SimulationError(f"the expressions of {fname} use {', '.join(stray)}, which no argument of the "
                                  "generated function gives; give them values or declare them as parameters.")
        lines, outs = self.body(names, module)
        body = unpack + lines + ["return (" + "".join(o + ", " for o in outs) + ")"]
        return [f"def {fname}({', '.join(g[0] for g in groups)}):"] + ["    " + x for x in body]

    def compile(self):
        """``f(*values) -> list`` of the outputs as floats (Python code with ``math``; one local per definition).
        Compiled once per program (the callable is kept)."""
        if "_compiled" not in self.__dict__:
            self.__dict__["_compiled"] = self._compile()
        return self.__dict__["_compiled"]

    def _compile(self):
        lines, outs = self.body({str(a): f"a{i}" for i, a in enumerate(self.args)})
        source = ["def _program(" + ", ".join(f"a{i}" for i in range(len(self.args))) + "):"]
        source += ["    " + x for x in lines] + ["    return [" + ", ".join(outs) + "]"]
        namespace = dict(MATH_NAMESPACE)
        exec(compile("\n".join(source), "<anholo program>", "exec"), namespace)  # noqa: S102 - generated code
        return namespace["_program"]


def pivoted_solve(A: Sequence, b: Sequence, k: int) -> list:
    """``A⁻¹ b`` (``A`` row-major, ``k × k``) by Gaussian elimination with partial pivoting (the first largest
    entry of a column is its pivot; Golub & Van Loan (2013), Alg. 3.4.1), ``nan`` where a pivot is zero or not
    finite: the solve of the generated Python code (:mod:`anholo.algebra.codegen`), the operations of its C
    code in the same order."""
    A, b = list(A), list(b)
    for j in range(k):
        rj = j * k
        piv, best = j, abs(A[rj + j])
        for i in range(j + 1, k):
            if abs(A[i * k + j]) > best:
                piv, best = i, abs(A[i * k + j])
        if not best > 0.0 or best == math.inf:
            return [math.nan] * k
        if piv != j:
            rp = piv * k
            A[rj + j:rj + k], A[rp + j:rp + k] = A[rp + j:rp + k], A[rj + j:rj + k]
            b[j], b[piv] = b[piv], b[j]
        inv = 1.0 / A[rj + j]
        for i in range(j + 1, k):
            ri = i * k
            li = A[ri + j] * inv
            if li:
                for c in range(j + 1, k):
                    A[ri + c] -= li * A[rj + c]
                b[i] -= li * b[j]
    x = [0.0] * k
    for i in range(k - 1, -1, -1):
        ri, s = i * k, b[i]
        for c in range(i + 1, k):
            s -= A[ri + c] * x[c]
        x[i] = s / A[ri + i]
    return x


def _complex(val) -> complex:
    """A symengine number as a complex; ``nan`` for ``nan``, ``zoo``, ``±oo`` (undefined at the point)."""
    if nonfinite(val):
        return complex(float("nan"), 0.0)
    return complex(val)


def _short(e, limit: int = 160) -> str:
    text = str(e)
    return text if len(text) <= limit else text[:limit] + " ..."


_MATH = ("sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "exp", "log", "sqrt")


_RECIPROCAL = {"sec": "cos", "csc": "sin", "cot": "tan"}

#: The names generated code with ``module=""`` uses (``math`` functions).
MATH_NAMESPACE = {name: getattr(math, name) for name in _MATH}
MATH_NAMESPACE.update(sign=lambda x: math.copysign(1.0, x) if x else 0.0, Abs=abs, pi=math.pi, E=math.e, nan=math.nan,
                      floor=math.floor, ceiling=math.ceil,
                      Heaviside=lambda x, h: 1.0 if x > 0 else 0.0 if x < 0 else h if x == 0 else math.nan)


_C_FUNCS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
            "atan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh",
            "acosh": "acosh", "atanh": "atanh", "exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "fabs",
            "sign": "_sign", "pow": "pow", "max": "fmax", "min": "fmin", "floor": "floor", "ceiling": "ceil",
            "heaviside": "_heaviside"}
_NUMPY_NAMES = {"abs": "absolute", "atan2": "arctan2", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
                "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "max": "maximum", "min": "minimum",
                "ceiling": "ceil", "heaviside": "heaviside"}
#: sympy functions that symengine keeps as ``PyFunction`` and the generated code evaluates (by their names).
_PY_FUNCTIONS = {"Heaviside": "heaviside"}
#: Every function node the printer translates (symengine's lower-case class names): the functions above, the
#: reciprocals, Piecewise with its conditions, and the unevaluated derivatives of ``|f|`` and ``sign f``.
_TRANSLATED = (frozenset(_C_FUNCS) - {"pow"}) | frozenset(_RECIPROCAL) | {
    "piecewise", "derivative", "subs", "strictlessthan", "lessthan", "equality", "unequality", "and", "or", "not",
    "booleantrue", "booleanfalse"}
_KNOWN_TEXT = "elementary functions, Abs, sign, Max, Min, floor, ceiling, Heaviside, Piecewise"


def untranslated(e) -> str | None:
    """The name of the function at the node ``e`` if the generated code has no translation for it (e.g. an
    undefined function ``f(x)``, ``gamma``, ``DiracDelta``), else None — the one list every generator checks."""
    if isinstance(e, (se.Add, se.Mul, se.Pow, se.Symbol)) or e.is_Number or not e.is_Function:
        return None
    name = type(e).__name__.lower()
    if name == "pyfunction":
        return None if e.get_name() in _PY_FUNCTIONS else e.get_name()
    if name in _TRANSLATED:
        return None
    return e.get_name() if hasattr(e, "get_name") else type(e).__name__


def _no_translation(label: str):
    from ..errors import SimulationError

    return SimulationError(f"the function {label} has no numerical translation (known: {_KNOWN_TEXT}); rewrite it "
                           "with those, or give it a closed form (undefined functions: "
                           "anholo.algebra.numeric.concrete_functions).")


def c_float(x: float) -> str:
    """A double as a C literal (``repr``, with ``.0`` where it has no point or exponent)."""
    text = repr(float(x))
    return text if any(c in text for c in ".en") else text + ".0"


class ExpressionPrinter:
    """symengine expressions as source over local names: the one printer of every code generator.

    ``language``:

    * ``"python"``: Python floats, ``**`` powers, functions ``module + name`` (``module=""``: the
      :data:`MATH_NAMESPACE`; ``"numpy."``: elementwise on arrays);
    * ``"c"``: C ``double`` with ``math.h`` (``|x|`` as ``fabs``, ``sign`` as ``_sign``, ``pow``);
    * ``"cvec"``: C over GCC/Clang vector lanes (every function ``_v_<name>`` applied lane by lane, its
      constant arguments broadcast by ``_bc``; products, sums and quotients are the lane-wise IEEE operations, so a
      lane gives the bits of the ``"c"`` code at its point).

    Small integer powers are multiplied out (``x**3`` → ``x*x*x``), ``x**(1/2)`` is ``sqrt(x)`` and
    ``x**(-1/2)`` is ``1/sqrt(x)`` in every language; ``sec``, ``csc``, ``cot`` are reciprocals of
    ``cos``, ``sin``, ``tan``; the derivatives of ``|f|`` and ``sign f`` left unevaluated by a plain
    ``diff`` are ``sign(f) df`` and ``0`` (:func:`~anholo.algebra.engine.kink_derivative`).
    """

    def __init__(self, names: Mapping, module: str = "", language: str = "python"):
        self.names = names
        self.module = module
        self.language = language

    def number(self, x: float) -> str:
        return repr(float(x)) if self.language == "python" else c_float(x)

    def function(self, name: str, args: Sequence) -> str:
        """``name(args)`` for a lower-case symengine function name (``sin``, ``atan2``, ``abs``, ``sign``, …);
        ``max`` and ``min`` of several arguments as nested binary ones (numpy's ``maximum``, C's ``fmax``)."""
        if name in ("max", "min") and len(args) > 2 and (self.language != "python" or self.module):
            inner = (se.Max if name == "max" else se.Min)(*args[:-1])
            return self.function(name, [inner, args[-1]])
        if name not in _C_FUNCS:  # the one table of every language (never a name the generated code lacks)
            raise _no_translation(name)
        if self.language == "python":
            fname = _NUMPY_NAMES.get(name, name) if self.module else {"abs": "Abs", "heaviside": "Heaviside"}.get(
                name, name)
            return f"{self.module}{fname}(" + ", ".join(self(a) for a in args) + ")"
        if self.language == "c":
            return f"{_C_FUNCS[name]}(" + ", ".join(self(a) for a in args) + ")"
        return f"_v_{_C_FUNCS[name].lstrip('_')}(" + ", ".join(
            self(a) if a.free_symbols else f"_bc({self(a)})" for a in args) + ")"

    def piecewise(self, args: Sequence) -> str:
        """``Piecewise((v0, c0), (v1, c1), …)`` (symengine's flat ``args``): the first value whose condition
        holds, ``nan`` where none does — Python's conditional expression (only the chosen branch evaluated),
        ``numpy.select`` over arrays, C's ``?:``; not in the vector lanes (C has no lane-wise ``?:``)."""
        pairs = [(args[i], args[i + 1]) for i in range(0, len(args), 2)]
        if self.language == "cvec":
            from ..errors import SimulationError

            raise SimulationError("a Piecewise expression has no vectorised C translation; use the scalar code.")
        if self.language == "python" and self.module:
            return (f"{self.module}select([" + ", ".join(self.condition(c) for _, c in pairs) + "], ["
                    + ", ".join(self(v) for v, _ in pairs) + f"], {self.module}nan)")
        text = "nan" if self.language == "python" else "NAN"
        for v, c in reversed(pairs):
            text = (f"({self(v)} if {self.condition(c)} else {text})" if self.language == "python"
                    else f"(({self.condition(c)}) ? {self(v)} : {text})")
        return text

    def condition(self, c) -> str:
        """A relation (``<``, ``<=``, ``==``, ``!=``) or a combination of them (``And``, ``Or``, ``Not``)."""
        name = type(c).__name__
        ops = {"StrictLessThan": "<", "LessThan": "<=", "Equality": "==", "Unequality": "!="}
        if name in ops:
            return f"({self(c.args[0])} {ops[name]} {self(c.args[1])})"
        if name in ("BooleanTrue", "BooleanFalse"):
            truth = name == "BooleanTrue"
            return repr(truth) if self.language == "python" else str(int(truth))
        numpy = self.language == "python" and self.module
        if name in ("And", "Or"):
            parts = [self.condition(a) for a in c.args]
            if numpy:
                return f"{self.module}logical_{name.lower()}.reduce([" + ", ".join(parts) + "])"
            joiner = {"And": " and ", "Or": " or "}[name] if self.language == "python" else {"And": " && ",
                                                                                         "Or": " || "}[name]
            return "(" + joiner.join(parts) + ")"
        if name == "Not":
            inner = self.condition(c.args[0])
            return f"{self.module}logical_not({inner})" if numpy else (
                f"(not {inner})" if self.language == "python" else f"(!{inner})")
        from ..errors import SimulationError

        raise SimulationError(f"the condition {c} of a Piecewise expression has no translation (use <, <=, ==, !=, "
                              "And, Or, Not).")

    def __call__(self, e) -> str:
        if isinstance(e, se.Symbol):
            try:
                return self.names[str(e)]
            except KeyError:
                if self.language == "python":
                    raise
                from ..errors import SimulationError

                raise SimulationError(f"the generated code has no value for the symbol {e}; give it as a "
                                      "parameter or state of the program.") from None
        if e.is_Number:
            return self.number(float(e))
        if isinstance(e, se.Add):
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if isinstance(e, se.Mul):
            return "(" + "*".join(self(a) for a in e.args) + ")"
        if isinstance(e, se.Pow):
            base, ex = e.args
            if ex == se.Rational(1, 2):
                return self.function("sqrt", [base])
            if ex == se.Rational(-1, 2):
                return f"(1.0/{self.function('sqrt', [base])})"
            if ex.is_Integer and abs(int(ex)) <= 4:
                k = int(ex)
                b = self(base)
                body = "*".join([b] * abs(k))
                return f"({body})" if k > 0 else f"(1.0/({body}))"
            if self.language == "python":
                return f"({self(base)}**{self(ex)})"
            return self.function("pow", [base, ex]) if self.language == "cvec" else f"pow({self(base)}, {self(ex)})"
        if isinstance(e, (se.Derivative, se.Subs)):  # d|f|, d sign(f) left unevaluated by a plain diff
            return self(kink_derivative(e))
        name = type(e).__name__.lower()
        if name == "piecewise":
            return self.piecewise(e.args)
        if name == "pyfunction":  # a sympy function symengine keeps as it is (Heaviside)
            label = untranslated(e)
            if label is not None:
                raise _no_translation(label)
            return self.function(_PY_FUNCTIONS[e.get_name()], e.args)
        if name in _RECIPROCAL:  # sec, csc, cot: reciprocals of cos, sin, tan (neither math nor numpy has them)
            return f"(1.0/{self.function(_RECIPROCAL[name], e.args)})"
        if e == se.pi:
            if self.language == "python":
                return f"{self.module}pi"
            return self.number(math.pi)
        if e == se.E:
            if self.language == "python":
                return f"{self.module}e" if self.module else "E"
            return self.number(math.e)
        if e.is_Function or name in _MATH:
            return self.function(name, e.args)
        return self.number(float(e))


_Printer = ExpressionPrinter

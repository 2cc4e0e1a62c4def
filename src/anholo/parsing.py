"""Safe parsing of mathematical expressions written in system files.

The text of an expression is parsed with Python's :mod:`ast` module
(``mode="eval"``) and the syntax tree is converted to SymPy node by node.
Nothing is ever evaluated by Python: neither :func:`eval` nor
:func:`sympy.sympify` / :func:`sympy.parsing.sympy_parser.parse_expr` sees
the user's text, so an expression cannot import modules, access attributes
or run code.

The accepted language is small:

* integer literals (``2``) become :class:`sympy.Integer`; decimal literals
  (``0.5``, ``1e-3``) become the *exact* :class:`sympy.Rational` written
  (``0.5`` is ``1/2``, not a binary floating-point number); complex literals
  are rejected;
* names declared by the caller, plus the constants ``pi`` and ``E``;
* the binary operators ``+ - * / **`` and ``^``, which is accepted as a
  synonym of ``**`` because that is how researchers write powers (it is
  **not** exclusive-or, and it binds like ``**``: ``x^2 + 1`` is
  ``x**2 + 1`` and ``-x^2`` is ``-(x**2)``); unary ``+`` and ``-``;
  parentheses;
* calls of the standard functions listed in :data:`STANDARD_FUNCTIONS`
  and of functions declared by the caller (for example an undefined SymPy
  function ``A1 = sympy.Function("A1")``, used as ``A1(theta)``), with
  positional arguments only.

An expression may span several lines (as in a TOML multi-line string); line
breaks are treated as spaces.
"""

from __future__ import annotations

import ast
import difflib
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import sympy as sp

from anholo.errors import ArgumentError, LimitError, SystemFileError, UnknownSymbolError, printable
from anholo import limits as _limits

__all__ = [
    "parse_expression",
    "as_expression",
    "as_sequence",
    "as_expressions",
    "as_argument",
    "sympified",
    "chart_names",
    "STANDARD_FUNCTIONS",
    "CONSTANTS",
    "RESERVED_NAMES",
]

#: Standard functions usable in every expression, by name.
STANDARD_FUNCTIONS: Mapping[str, Any] = {
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "cot": sp.cot,
    "sec": sp.sec,
    "csc": sp.csc,
    "asin": sp.asin,
    "acos": sp.acos,
    "atan": sp.atan,
    "atan2": sp.atan2,
    "sinh": sp.sinh,
    "cosh": sp.cosh,
    "tanh": sp.tanh,
    "asinh": sp.asinh,
    "acosh": sp.acosh,
    "atanh": sp.atanh,
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
    "Abs": sp.Abs,
    "sign": sp.sign,
}

#: Numbers of positional arguments accepted by each standard function.
_GROWING = ("exp", "sinh", "cosh")  # functions of a number whose value may have too many digits to evaluate
_ARITIES: Mapping[str, tuple[int, ...]] = {
    name: (1,) for name in STANDARD_FUNCTIONS
} | {"atan2": (2,), "log": (1, 2)}

#: Named constants usable in every expression.
CONSTANTS: Mapping[str, sp.Expr] = {"pi": sp.pi, "E": sp.E}

#: Names that a system file may not declare (they already mean something).
RESERVED_NAMES: frozenset[str] = frozenset(STANDARD_FUNCTIONS) | frozenset(CONSTANTS)

# Guards against expressions that would make SymPy compute for ever: the bounds of
# anholo.limits (digits of every number, numerical exponents, roots of long numbers, nesting).
_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def shown(text: str, width: int = 80) -> str:
    """The text of an expression on one line, shortened to about ``width`` characters (for messages)."""
    one = printable(" ".join(str(text).split()))
    return one if len(one) <= width else one[: width - 5] + " ..."

_NODE_DESCRIPTIONS: Mapping[type, str] = {
    ast.Attribute: "attribute access ('.')",
    ast.Subscript: "indexing or slicing ('[...]')",
    ast.Compare: "comparisons",
    ast.BoolOp: "'and' / 'or'",
    ast.Lambda: "lambda expressions",
    ast.IfExp: "conditional expressions ('... if ... else ...')",
    ast.NamedExpr: "assignment expressions (':=')",
    ast.List: "lists",
    ast.Tuple: "tuples (a stray comma?)",
    ast.Set: "sets",
    ast.Dict: "dictionaries",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.JoinedStr: "strings",
    ast.FormattedValue: "strings",
    ast.Starred: "starred arguments ('*')",
    ast.Slice: "slices",
    ast.Await: "'await'",
    ast.Yield: "'yield'",
    ast.YieldFrom: "'yield'",
}

_BINOP_SYMBOLS: Mapping[type, str] = {
    ast.Mod: "%",
    ast.FloorDiv: "//",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
}


def _is_function(obj: Any) -> bool:
    """True for things that are called (``f(x)``), not used as values."""
    if isinstance(obj, (sp.FunctionClass, sp.Lambda)):
        return True
    return callable(obj) and not isinstance(obj, sp.Basic)


def _as_value(obj: Any, name: str) -> sp.Basic:
    if isinstance(obj, sp.Basic):
        return obj
    if isinstance(obj, bool):
        raise TypeError(f"names[{name!r}] is a bool, not a SymPy object")
    if isinstance(obj, int):
        return sp.Integer(obj)
    if isinstance(obj, float):
        return sp.Rational(repr(obj))
    raise TypeError(
        f"names[{name!r}] must be a SymPy object or a callable, got {type(obj).__name__}"
    )


class _Source:
    """The text as given, and the single-line text handed to :mod:`ast`.

    ``^`` is rewritten ``**`` and line breaks become spaces; ``index`` maps
    each character of the rewritten text back to the original text so that
    error messages point at what the user wrote.
    """

    def __init__(self, text: str) -> None:
        out: list[str] = []
        index: list[int] = []
        for i, c in enumerate(text):
            if c in "\r\n\f\v":
                out.append(" ")
                index.append(i)
            elif c == "^":
                out.extend("**")
                index.extend((i, i))
            else:
                out.append(c)
                index.append(i)
        rewritten = "".join(out)
        lead = len(rewritten) - len(rewritten.lstrip())
        stripped = rewritten.strip()
        self.text = text
        self.code = stripped
        self.code_bytes = stripped.encode("utf-8", "surrogatepass")
        self.index = index[lead : lead + len(stripped)]

    def position(self, char_index: int | None) -> str:
        """Human-readable position of a character of :attr:`code`."""
        if char_index is None or char_index >= len(self.index):
            return "at the end of the expression"
        char_index = max(char_index, 0)
        i = self.index[char_index]
        line = self.text.count("\n", 0, i) + 1
        col = i - (self.text.rfind("\n", 0, i) + 1) + 1
        if "\n" in self.text.strip():
            return f"at line {line}, column {col}"
        return f"at column {col}"

    def node_position(self, node: ast.AST) -> str:
        col = getattr(node, "col_offset", None)
        if col is None:
            return "somewhere"
        # ast offsets count UTF-8 bytes; convert to characters.
        chars = len(self.code.encode("utf-8")[:col].decode("utf-8", errors="ignore"))
        return self.position(chars)


class _Converter:
    def __init__(self, source: _Source, names: Mapping[str, Any], where: str) -> None:
        self.source = source
        self.names = names
        self.where = where
        self.depth = 0
        self.limits = _limits.current()

    # -- bounds ---------------------------------------------------------
    def limit(self, name: str, value: int, what: str, node: ast.AST | None = None) -> LimitError:
        bound = getattr(self.limits, name)
        pos = f" ({self.source.node_position(node)})" if node is not None else ""
        return LimitError(
            f'{self.where}: {what} in "{shown(self.source.text, 60)}"{pos} exceeds the limit of {bound} '
            f"({name}); raise it with anholo --limits {name}=N COMMAND … on the command line or "
            f"anholo.limits.raised_limits({name}=N) in Python.")

    def sized(self, value: sp.Basic, node: ast.AST) -> sp.Basic:
        """``value``, after checking the numbers among it and its arguments against the digits bound."""
        bound = self.limits.digits
        for x in (value, *value.args) if isinstance(value, sp.Basic) else ():
            if isinstance(x, sp.Rational):
                digits = max(_limits.digits_of(x.p), _limits.digits_of(x.q))
                if digits > bound:
                    raise self.limit("digits", digits, f"a number of about {digits} digits", node)
        return value

    # -- errors ---------------------------------------------------------
    def error(self, what: str, node: ast.AST | None = None) -> SystemFileError:
        pos = f" ({self.source.node_position(node)})" if node is not None else ""
        return SystemFileError(f'{self.where}: {what} in "{shown(self.source.text)}"{pos}.')

    def unknown(self, name: str, *, called: bool) -> UnknownSymbolError:
        declared = list(self.names)
        listing = ", ".join(declared) if declared else "(none)"
        candidates = declared + list(STANDARD_FUNCTIONS) + list(CONSTANTS)
        close = difflib.get_close_matches(name, candidates, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        if called:
            fix = (
                "Use a standard function ("
                + ", ".join(STANDARD_FUNCTIONS)
                + "), declare it under 'functions', or fix the spelling."
            )
        else:
            fix = "Declare it under 'parameters' (or 'coordinates') or fix the spelling."
        return UnknownSymbolError(
            f'{self.where}: unknown name {name!r} in "{shown(self.source.text)}". '
            f"Declared names: {listing}.{hint} {fix}"
        )

    # -- lookup ---------------------------------------------------------
    def lookup(self, name: str) -> Any:
        if name in self.names:
            return self.names[name]
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in STANDARD_FUNCTIONS:
            return STANDARD_FUNCTIONS[name]
        raise KeyError(name)

    # -- conversion -----------------------------------------------------
    def convert(self, node: ast.AST) -> sp.Basic:
        self.depth += 1
        try:
            if self.depth > self.limits.nesting:
                raise self.limit("nesting", self.depth, "the nesting of parentheses, calls and powers", node)
            return self.sized(self.convert_node(node), node)
        finally:
            self.depth -= 1

    def convert_node(self, node: ast.AST) -> sp.Basic:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            try:
                obj = self.lookup(node.id)
            except KeyError:
                raise self.unknown(node.id, called=False) from None
            if _is_function(obj):
                raise self.error(
                    f"'{node.id}' is a function; call it with arguments, e.g. {node.id}(x)",
                    node,
                )
            return _as_value(obj, node.id)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return -self.convert(node.operand)
            if isinstance(node.op, ast.UAdd):
                return self.convert(node.operand)
            op = "not" if isinstance(node.op, ast.Not) else "~"
            raise self.error(f"the operator '{op}' is not allowed", node)
        if isinstance(node, ast.Call):
            return self.call(node)
        description = _NODE_DESCRIPTIONS.get(type(node), f"'{type(node).__name__}' syntax")
        if isinstance(node, ast.Attribute):
            # Point at the dot rather than at the start of the object.
            node = ast.Constant(None, col_offset=node.value.end_col_offset)
        raise self.error(f"{description} cannot be used in an expression", node)

    def constant(self, node: ast.Constant) -> sp.Basic:
        value = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            raise self.error(f"'{value!r}' is not a number", node)
        if isinstance(value, (int, float)):
            # The code is one line: the node's offsets (UTF-8 bytes) slice it directly (ast.get_source_segment
            # splits the whole text at every call, which is quadratic in a long sum of numbers).
            literal = self.source.code_bytes[node.col_offset:node.end_col_offset].decode("utf-8", "replace")
            literal = literal.replace("_", "") or "0"
            if isinstance(value, int):  # decimal, or 0x / 0o / 0b
                digits = len(literal)
            else:
                mantissa, _, exponent = literal.lower().partition("e")
                digits = sum(c.isdigit() for c in mantissa) + abs(int(exponent or "0"))
            if digits > self.limits.digits:
                raise self.limit("digits", digits, f"the number {shown(literal, 40)} (about {digits} digits)", node)
            try:
                if isinstance(value, int):
                    return sp.Integer(int(literal, 0))
                return sp.Rational(literal)
            except ValueError:  # beyond Python's int-to-string bound (4300 digits) under a raised digits limit
                raise self.error(f"the number {shown(literal, 40)} has more digits than Python reads "
                                 "(4300)", node) from None
        if isinstance(value, complex):
            raise self.error(
                "complex literals are not allowed (expressions are real)", node
            )
        if isinstance(value, (str, bytes)):
            raise self.error("strings are not allowed", node)
        raise self.error(f"the literal {value!r} is not allowed", node)  # pragma: no cover

    def binop(self, node: ast.BinOp) -> sp.Basic:
        op = node.op
        if type(op) in _BINOP_SYMBOLS:
            sym = _BINOP_SYMBOLS[type(op)]
            raise self.error(f"the operator '{sym}' is not allowed", node)
        if isinstance(op, ast.BitXor):  # pragma: no cover - '^' is rewritten first
            op = ast.Pow()
        if isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            return self.chain(node)
        left = self.convert(node.left)
        right = self.convert(node.right)
        if isinstance(op, ast.Pow):
            self.check_power(left, right, node)
            return self.real(left**right, node)
        raise self.error(  # pragma: no cover - all operators handled above
            f"the operator {type(op).__name__} is not allowed", node
        )

    def chain(self, node: ast.BinOp) -> sp.Basic:
        """A left-associated chain ``a + b - c + …`` (or ``a * b / c * …``) as one flat sum (product):
        a flat sum of many terms is not nested, and is built in one step."""
        additive = isinstance(node.op, (ast.Add, ast.Sub))
        kinds = (ast.Add, ast.Sub) if additive else (ast.Mult, ast.Div)
        rights = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, kinds):
            rights.append((node.op, node.right))
            node = node.left
        terms = [self.convert(node)]
        for op, right in reversed(rights):
            value = self.convert(right)
            if isinstance(op, ast.Sub):
                value = -value
            elif isinstance(op, ast.Div):
                value = sp.Pow(value, -1)
            terms.append(value)
        return sp.Add(*terms) if additive else sp.Mul(*terms)

    def check_power(self, base: sp.Basic, exponent: sp.Basic, node: ast.AST) -> None:
        """Refuse a power whose evaluation would be huge or slow, before SymPy evaluates it."""
        if not isinstance(exponent, sp.Rational):
            return
        size = max(abs(exponent.p), exponent.q)
        if size > self.limits.exponent:
            raise self.limit("exponent", size, f"the exponent {shown(exponent, 40)}", node)
        if not base.is_number or base in (sp.S.Zero, sp.S.One, sp.S.NegativeOne):
            return
        if isinstance(base, sp.Rational):
            digits = max(_limits.digits_of(base.p), _limits.digits_of(base.q))
            if exponent.q != 1 and digits > self.limits.root_digits:
                raise self.limit("root_digits", digits, f"a root of a number of {digits} digits", node)
            result = digits * abs(exponent.p) // exponent.q
            if result > self.limits.digits + 1:
                raise self.limit("digits", result, f"the power {shown(base, 30)}^{shown(exponent, 30)} "
                                 f"(about {result} digits)", node)

    def call(self, node: ast.Call) -> sp.Basic:
        if not isinstance(node.func, ast.Name):
            raise self.error(
                "only named functions can be called (write e.g. sin(x))", node
            )
        name = node.func.id
        if node.keywords:
            raise self.error(f"keyword arguments are not allowed in the call of {name}", node)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.error(f"starred arguments are not allowed in the call of {name}", node)
        try:
            func = self.lookup(name)
        except KeyError:
            raise self.unknown(name, called=True) from None
        if not _is_function(func):
            raise self.error(
                f"'{name}' is not a function and cannot be called "
                f"(for a product write '{name}*(...)')",
                node,
            )
        nargs = len(node.args)
        if name not in self.names and name in _ARITIES and nargs not in _ARITIES[name]:
            expected = " or ".join(str(k) for k in _ARITIES[name])
            s = "" if _ARITIES[name] == (1,) else "s"
            raise self.error(
                f"{name} takes {expected} argument{s}, {nargs} given", node
            )
        args = [self.convert(arg) for arg in node.args]
        if name == "sqrt" and name not in self.names and args:
            self.check_power(args[0], sp.Rational(1, 2), node)
        if name == "log" and name not in self.names and len(args) == 2:
            base = args[1]
            if base.is_number and not (base.is_extended_positive and base != 1):
                raise self.error(f"the base {shown(base, 30)} of log(x, b) must be positive and not 1", node)
        if name in _GROWING and name not in self.names and args and args[0].is_number:
            self.check_growth(name, args[0], node)
        try:
            value = func(*args)
        except (TypeError, ValueError) as exc:
            raise self.error(f"cannot apply {name}: {exc}", node) from None
        return self.real(value, node) if name not in self.names else value

    def check_growth(self, name: str, arg: sp.Expr, node: ast.AST) -> None:
        """Refuse ``exp``/``sinh``/``cosh`` of a number whose value would have more digits than the limit
        (``exp(exp(100))`` has about 10^43 digits: SymPy would try to evaluate it, for ever).  Each argument was
        checked when it was read, so it is evaluated cheaply here."""
        try:
            magnitude = abs(complex(sp.N(arg, 15)))
        except (TypeError, ValueError, OverflowError):
            return
        digits = magnitude / 2.302585092994046  # log10(e^x) = x / ln 10
        if digits > self.limits.digits:
            raise self.limit("digits", int(min(digits, 10 ** 15)),
                             f"{name}({shown(arg, 30)}) (about {digits:.3g} digits)", node)

    def real(self, value: sp.Basic, node: ast.AST) -> sp.Basic:
        """``value``, refused if it is a number that is not real (``sqrt(-1)``, ``asin(2)``, ``log(-1)``,
        ``(-8)^(1/3)`` — SymPy's principal values are complex there): expressions are real."""
        if isinstance(value, sp.Expr) and value.is_number and value.is_extended_real is False and \
                not _scan(value)[1] & _NONFINITE:  # infinite or undefined: reported as such at the end
            raise self.error(f"{shown(value, 40)} is not a real number (expressions are real; SymPy's principal "
                             "value is complex there)", node)
        return value


def parse_expression(text: str, names: Mapping[str, Any], *, where: str) -> sp.Expr:
    """Parse a mathematical expression safely into a SymPy expression.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"m*(r_dot^2 + r^2*theta_dot^2)/2 + k/r"``.
        ``^`` is accepted as power (a synonym of ``**``).  Decimal literals
        are exact: ``0.5`` is ``Rational(1, 2)``.
    names : Mapping[str, sympy.Basic]
        The names the expression may use: symbols (used as values) and
        functions such as ``sympy.Function("A1")`` (used as ``A1(q)``).
        The constants ``pi`` and ``E`` and the standard functions in
        :data:`STANDARD_FUNCTIONS` are always available; a name in `names`
        takes precedence over them.
    where : str
        Where the text comes from, e.g. ``"constraints[0]"``; every error
        message starts with it.

    Returns
    -------
    sympy.Expr

    Raises
    ------
    anholo.errors.UnknownSymbolError
        The expression uses a name that is neither in `names` nor standard.
    anholo.errors.SystemFileError
        Empty text, a syntax error (the message gives the column), a
        construct outside the accepted language (attribute access, indexing,
        comparisons, strings, keyword arguments, ...), a call of something
        that is not a function, a function used as a value, a wrong number
        of arguments, or a result that is infinite or undefined (``1/0``).

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols("x y", real=True)
    >>> parse_expression("x^2 + 0.5*sin(y)", {"x": x, "y": y}, where="demo")
    x**2 + sin(y)/2
    >>> A = sp.Function("A")
    >>> parse_expression("A(x)*pi", {"x": x, "A": A}, where="demo")
    pi*A(x)
    """
    if not isinstance(text, str):
        raise SystemFileError(
            f"{where}: expected an expression as a string, got {type(text).__name__} {text!r}."
        )
    _check_text(text, where)
    source = _Source(text)
    if not source.code:
        raise SystemFileError(f"{where}: the expression is empty; write a formula, e.g. \"0\".")
    try:
        tree = ast.parse(source.code, mode="eval")
    except SyntaxError as exc:
        offset = exc.offset - 1 if exc.offset else None
        if exc.lineno is not None and exc.lineno > 1:  # pragma: no cover - single line
            offset = None
        msg = exc.msg or "invalid syntax"
        hint = ""
        if _looks_like_juxtaposition(source.code, offset, msg):
            hint = " (is a '*' missing? Products must be written explicitly, e.g. 2*x)"
        raise SystemFileError(
            f'{where}: cannot parse "{shown(text)}": {msg} {source.position(offset)}{hint}.'
        ) from None
    except (ValueError, MemoryError, RecursionError) as exc:
        raise SystemFileError(f'{where}: cannot parse "{shown(text)}": {exc}.') from None
    converter = _Converter(source, names, where)
    try:
        result = converter.convert(tree.body)
    except (RecursionError, MemoryError):
        raise SystemFileError(
            f'{where}: the expression "{shown(text)}" is too deeply nested.'
        ) from None
    terms = expanded_terms(result, converter.limits.expanded_terms, {})
    if terms > converter.limits.expanded_terms:
        raise converter.limit("expanded_terms", terms, "the number of terms once multiplied out (more than "
                              f"{converter.limits.expanded_terms})")
    if not isinstance(result, sp.Expr):  # pragma: no cover - only via odd `names`
        raise SystemFileError(
            f'{where}: "{shown(text)}" is not a mathematical expression (got {type(result).__name__}).'
        )
    if _scan(result)[1] - _NONFINITE:
        raise SystemFileError(f'{where}: "{shown(text)}" holds the imaginary unit; expressions are real.')
    if result.has(sp.zoo, sp.nan, sp.oo, sp.S.NegativeInfinity):
        raise SystemFileError(
            f'{where}: "{shown(text)}" evaluates to {shown(result, 40)}, which is infinite or undefined '
            "(a division by zero?)."
        )
    return result


def expanded_terms(expr: sp.Basic, cap: int, memo: dict) -> int:
    """An upper estimate (capped at ``cap + 1``) of the number of terms of ``expr`` multiplied out: a sum has
    the terms of its summands, a product the product of its factors', ``s^n`` (n a positive integer) the
    number C(t + n - 1, n) of monomials of degree n in the t terms of s; a function counts its arguments'."""
    if expr in memo:
        return memo[expr]
    if not expr.args:
        count = 1
    elif expr.is_Add:
        count = min(cap + 1, sum(expanded_terms(a, cap, memo) for a in expr.args))
    elif expr.is_Mul:
        count = 1
        for a in expr.args:
            count = min(cap + 1, count * expanded_terms(a, cap, memo))
    elif expr.is_Pow and expr.exp.is_Integer and expr.exp > 1:
        t, n = expanded_terms(expr.base, cap, memo), int(expr.exp)
        count = 1
        if t > 1:
            for i in range(1, n + 1):  # C(t + n - 1, n), stopped at the cap
                count = count * (t + i - 1) // i
                if count > cap:
                    break
        count = min(cap + 1, count)
    else:
        count = min(cap + 1, sum(expanded_terms(a, cap, memo) for a in expr.args))
    memo[expr] = count
    return count


def _check_text(text: str, where: str) -> None:
    """Refuse, before parsing, what would be read differently from what is written, and what is too long:
    ``#`` (Python would read the rest as a comment: ``"x_dot^2/2 # - k*x^2/2"`` would silently lose a
    term), identifiers that Python reads as other names (``ｘ_dot`` or ``𝐱`` are read as ``x_dot``, ``x``
    by NFKC normalization), and control characters."""
    _limits.check("expression_chars", len(text), where, f"an expression of {len(text)} characters")
    longest = max((len(m.group()) for m in re.finditer(r"[0-9_]{40,}", text)), default=0)
    if longest > _limits.current().digits:
        _limits.check("digits", longest, where, f"a number of {longest} digits")
    if "#" in text:
        raise SystemFileError(
            f'{where}: "#" inside an expression, in "{shown(text)}"; Python would read the rest of the line '
            "as a comment. Remove it (a TOML comment goes after the closing quote).")
    for ch in text:
        if ch in "\r\n\t\f\v":
            continue
        category = unicodedata.category(ch)
        if category[0] == "C" or category in ("Zl", "Zp"):
            raise SystemFileError(
                f"{where}: the invisible or control character U+{ord(ch):04X} in \"{shown(text)}\"; remove it.")
    if not text.isascii():
        for match in _IDENTIFIER.finditer(text):
            word = match.group()
            normal = unicodedata.normalize("NFKC", word)
            if normal != word:
                raise SystemFileError(
                    f"{where}: the name {word!r} in \"{shown(text)}\" is not written in plain characters; "
                    f"Python would read it as {normal!r}. Write {normal!r} if that is meant.")


def _looks_like_juxtaposition(code: str, offset: int | None, msg: str) -> bool:
    """Guess whether a syntax error comes from an implicit product (``2 x``)."""
    if "forgot a comma" in msg or "invalid decimal literal" in msg:
        return True
    if msg != "invalid syntax" or offset is None or offset >= len(code):
        return False
    before = code[:offset].rstrip()
    after = code[offset]
    return bool(before) and (before[-1].isalnum() or before[-1] in "_).") and (
        after.isalnum() or after in "_(."
    )


# --- the one reader of the Python API ---------------------------------------------------------------------


def _symbol_table(symbols) -> dict:
    """name -> symbol, from a mapping or a sequence of SymPy symbols."""
    if isinstance(symbols, Mapping):
        return dict(symbols)
    return {s.name: s for s in symbols}


def as_sequence(value, where: str, *, length: int | None = None, what: str = "expressions") -> tuple:
    """``value`` as a tuple: a list, tuple or other iterable that is not a string, a mapping or a single
    SymPy object; ``length`` (if given) is checked.  A string is refused (``forces="abc"`` would
    otherwise be read as three forces ``a, b, c``).

    Raises
    ------
    anholo.errors.ArgumentError
        ``value`` is a string, a mapping, ``None``, a number or another single object.
    anholo.errors.DimensionError
        The length differs from ``length``.
    """
    from anholo.errors import DimensionError

    if isinstance(value, (str, bytes, Mapping, sp.Basic)) or value is None or not hasattr(value, "__iter__"):
        kind = "a string" if isinstance(value, (str, bytes)) else type(value).__name__
        raise ArgumentError(f"{where}: expected a list of {what}, got {kind} {shown(repr(value), 60)}; "
                            f"pass a list, e.g. [{'...'}].")
    if isinstance(value, sp.MatrixBase):
        items = tuple(value)
    else:
        try:
            items = tuple(value)
        except TypeError as exc:  # an object with __iter__ that fails
            raise ArgumentError(f"{where}: expected a list of {what}, got {type(value).__name__} ({exc}).") from None
    if length is not None and len(items) != length:
        raise DimensionError(f"{where}: expected {length} {what}, got {len(items)}.")
    return items


def as_expression(value, symbols, *, where: str, allow_unknown: bool = True) -> sp.Expr:
    """One expression given to the Python API, read safely with the chart's own symbols.

    * a string is parsed by :func:`parse_expression` (never by ``sympify``: no code runs) with the names
      of ``symbols`` — ``"x_dot"`` is the chart's velocity symbol, an undeclared name is an
      :class:`~anholo.errors.UnknownSymbolError`;
    * a SymPy expression is kept, except that a symbol *named* like one of ``symbols`` but a different
      object (``Symbol("x_dot")`` without ``real=True``, which SymPy treats as another variable) is
      replaced by the chart's symbol of that name — without it, L would not depend on the chart's
      velocities and the equations would read ``0 = 0``.  With ``allow_unknown=False`` any other
      symbol is refused;
    * an ``int``, ``float`` or other real number becomes the SymPy number (a float keeps its value);
    * anything else — ``None``, a bool, a list, an equation ``Eq(a, b)``, a matrix, a complex,
      infinite or undefined number (``I``, ``oo``, ``nan``, ``zoo``) — is refused: expressions are real.

    Parameters
    ----------
    value : str, sympy.Expr or number
    symbols : sequence of sympy.Symbol, or mapping name -> sympy object
        The names the expression may use (a chart's coordinates, velocities and parameters, …).
    where : str
        Which argument this is (``"Lagrangian"``, ``"forces[2]"``); every message starts with it.

    Raises
    ------
    anholo.errors.ArgumentError
        A value of the wrong kind (message names it and what to pass).
    anholo.errors.SystemFileError
        A string that does not parse (see :func:`parse_expression`).
    anholo.errors.UnknownSymbolError
        A name that the chart does not declare.

    Examples
    --------
    >>> x, x_dot = sp.Symbol("x", real=True), sp.Symbol("x_dot", real=True)
    >>> e = as_expression(sp.Symbol("x_dot")**2/2, [x, x_dot], where="L")
    >>> e.free_symbols == {x_dot}
    True
    >>> as_expression("x_dot^2/2 - x", [x, x_dot], where="L") == x_dot**2/2 - x
    True
    """
    names = _symbol_table(symbols)
    if isinstance(value, str):
        try:
            expr = parse_expression(value, names, where=where)
        except UnknownSymbolError as exc:
            raise UnknownSymbolError(f"{exc} In Python: declare parameters with Chart(coordinates, "
                                     "parameters=[...]), or pass a SymPy expression.") from None
    elif isinstance(value, bool) or value is None:
        raise ArgumentError(f"{where}: expected an expression (a SymPy expression, a number or a string such as "
                            f"\"x_dot^2/2\"), got {value!r}.")
    elif isinstance(value, sp.Basic):
        if not isinstance(value, sp.Expr) or isinstance(value, sp.MatrixBase):
            raise ArgumentError(f"{where}: expected an expression, got {type(value).__name__} "
                                f"{shown(value, 60)}; an equation Eq(a, b) is written as the expression a - b.")
        expr = _by_name(value, names, where, allow_unknown)
    elif isinstance(value, (int, float)) or _is_real_number(value):
        from decimal import Decimal

        if isinstance(value, Decimal) and value.is_finite():
            _, digits, exponent = value.as_tuple()
            _limits.check("digits", len(digits) + abs(exponent), where, f"a number of {len(digits) + abs(exponent)} digits")
            expr = sp.Rational(str(value))  # a decimal is exact, as in a string
        else:
            expr = sp.sympify(value, strict=True)
            if isinstance(expr, sp.Rational):
                digits = max(_limits.digits_of(expr.p), _limits.digits_of(expr.q))
                _limits.check("digits", digits, where, f"a number of about {digits} digits")
    else:
        raise ArgumentError(f"{where}: expected an expression (a SymPy expression, a number or a string such as "
                            f"\"x_dot^2/2\"), got {type(value).__name__} {shown(repr(value), 60)}.")
    _, bad = _scan(expr)
    if bad & _NONFINITE:
        from anholo.errors import NonFiniteExpressionError

        raise NonFiniteExpressionError(f"{where} holds a non-finite constant (nan, zoo or oo) as written: "
                                       f"{shown(expr, 60)}; give a finite expression.")
    if bad:
        raise ArgumentError(f"{where}: {shown(expr, 60)} is complex (it holds I); expressions are real.")
    return expr


def as_argument(value, symbols, *, where: str) -> sp.Expr:
    """A function or factor passed to an operation (``X(f)``, ``f*X``): a SymPy expression is used as it is
    (no walk over it: these are called on large derived expressions), anything else is read by
    :func:`as_expression` (so a string is parsed safely, never executed)."""
    if isinstance(value, sp.Expr):
        return value
    return as_expression(value, symbols() if callable(symbols) else symbols, where=where)


_NONFINITE = frozenset({sp.zoo, sp.nan, sp.oo, sp.S.NegativeInfinity})
_BAD_ATOMS = _NONFINITE | {sp.I}


def _scan(expr: sp.Basic) -> tuple:
    """(the symbols of ``expr``, its atoms among ``zoo, nan, oo, -oo, I``) in one walk over the
    expression as a DAG (a shared subexpression is visited once)."""
    seen, symbols, bad = set(), set(), set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if e.is_Symbol:
            symbols.add(e)
        elif e in _BAD_ATOMS:
            bad.add(e)
        else:
            stack.extend(e.args)
    return symbols, bad


def _is_real_number(value) -> bool:
    """True for numbers other than int/float that SymPy converts exactly (numpy scalars, Fraction, Decimal)."""
    import numbers

    return isinstance(value, numbers.Real) or (isinstance(value, numbers.Number)
                                               and not isinstance(value, numbers.Complex))  # Decimal


def _by_name(expr: sp.Expr, names: Mapping[str, Any], where: str, allow_unknown: bool) -> sp.Expr:
    """``expr`` with its symbols that are named like one of ``names`` but are other objects replaced by them."""
    swap = {}
    for s in _scan(expr)[0]:
        if not isinstance(s, sp.Symbol):
            continue
        own = names.get(s.name)
        if own is None:
            if not allow_unknown:
                raise UnknownSymbolError(
                    f"{where}: the symbol {printable(s.name)!r} is not one of "
                    f"{', '.join(names) or '(none)'}; use the chart's symbols.")
            continue
        if own is not s and own != s:
            if not isinstance(own, sp.Symbol):
                raise ArgumentError(f"{where}: the symbol {printable(s.name)!r} has the name of "
                                    f"{printable(own)!r}, which is not a symbol; rename it.")
            swap[s] = own
    return expr.xreplace(swap) if swap else expr


def as_expressions(values, symbols, *, where: str, length: int | None = None,
                   what: str = "expressions", label=None) -> tuple:
    """A list of expressions given to the Python API: :func:`as_sequence` then :func:`as_expression` on each
    entry (``where[i]`` in messages, or ``label(i)``)."""
    names = _symbol_table(symbols)
    label = label or (lambda i: f"{where}[{i}]")
    return tuple(as_expression(e, names, where=label(i))
                 for i, e in enumerate(as_sequence(values, where, length=length, what=what)))


def chart_names(chart, *more) -> dict:
    """name -> symbol for a chart's coordinates, velocities and parameters, and the symbols ``more``
    (``None`` entries skipped)."""
    out = {s.name: s for s in (*chart.coordinates, *chart.velocities, *chart.parameters)}
    for group in more:
        if group is None:
            continue
        for s in (group,) if isinstance(group, sp.Basic) else group if hasattr(group, "__iter__") else ():
            if isinstance(s, sp.Symbol):
                out[s.name] = s
    return out


class _AnyName(Mapping):
    """Every identifier that is not a standard function or constant, as a real symbol of that name (for
    :func:`sympified`, which reads strings given to functions that have no chart of names at hand)."""

    def __getitem__(self, name):
        if name in STANDARD_FUNCTIONS or name in CONSTANTS:
            raise KeyError(name)
        return sp.Symbol(name, real=True)

    def __contains__(self, name):
        return isinstance(name, str) and name not in STANDARD_FUNCTIONS and name not in CONSTANTS

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


def sympified(value, where: str = "expression", names: Mapping[str, Any] | None = None) -> sp.Basic:
    """``sympy.sympify(value)`` without ever running code: a SymPy object is returned as it is; a string is
    parsed by :func:`parse_expression` (with ``names``; without them every identifier is a real symbol of
    that name); another value is converted only if SymPy knows it as a number or container
    (``sympify(strict=True)``), otherwise :class:`~anholo.errors.ArgumentError`."""
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, str):
        return parse_expression(value, _AnyName() if names is None else names, where=where)
    if isinstance(value, (list, tuple)):  # as sympify: a list of expressions, a tuple a sympy Tuple
        items = [sympified(v, f"{where}[{i}]", names) for i, v in enumerate(value)]
        return items if isinstance(value, list) else sp.Tuple(*items)
    try:
        return sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError, ValueError, AttributeError):
        raise ArgumentError(f"{where}: expected an expression (a SymPy expression, a number or a string), got "
                            f"{type(value).__name__} {shown(repr(value), 60)}.") from None

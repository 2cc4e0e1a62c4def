"""Readable LaTeX for anholo's symbols: ``x_dot`` → ``\\dot{x}``, ``v1_dot`` → ``\\dot{v}_{1}``."""

from __future__ import annotations

import ast
import operator
import re

import sympy as sp

from ..parsing import sympified

__all__ = ["latex", "dotted", "combination_latex", "symbol_latex_names", "EquationDisplay", "tex_text",
           "display_latex", "init_printing"]


def _dot_name(sym: sp.Symbol) -> str | None:
    name = sym.name
    for suffix, cmd in (("_ddot", r"\ddot"), ("_dot", r"\dot")):
        if name.endswith(suffix) and len(name) > len(suffix):
            base = sp.latex(sp.Symbol(name[: -len(suffix)]))
            m = re.match(r"^(\\?[A-Za-z]+)(.*)$", base)
            if m:
                return f"{cmd}{{{m.group(1)}}}{m.group(2)}"
            return f"{cmd}{{{base}}}"
    return None


def dotted(sym, order: int = 1) -> str:
    """LaTeX of the ``order``-th time derivative of a symbol, the accent on the letter only:
    ``dotted(psi1, 2)`` is ``\\ddot{\\psi}_{1}`` (not ``\\ddot{\\psi_{1}}``).

    >>> print(dotted(sp.Symbol("lambda1")))
    \\dot{\\lambda}_{1}
    """
    name = sym.name if isinstance(sym, sp.Symbol) else str(sym)
    return _dot_name(sp.Symbol(name + ("_ddot" if order == 2 else "_dot")))


def combination_latex(terms) -> str:
    """``Σ c_A e_A`` as LaTeX from ``[(c_A, tex(c_A), tex(e_A)), ...]`` (``tex(c_A)`` as printed, perhaps
    under a size budget): zero terms dropped, ``1`` and ``-1``
    not written, a sum in parentheses, a negative coefficient as a minus sign (``X = \\partial_x - y\\,
    \\partial_z``, never ``1\\,\\partial_x`` or ``+ -``).

    >>> x, y = sp.symbols("x y")
    >>> print(combination_latex([(1, "1", "a"), (-y, latex(-y), "b"), (x + y, latex(x + y), "c")]))
    a - y\\,b + \\left(x + y\\right)c
    """
    out = []
    for c, tex, basis in terms:
        c = sympified(c)
        if c == 0:
            continue
        sign = "+"
        if not c.is_Add and tex.startswith("-"):  # the printed coefficient (perhaps a budget note) is kept
            sign, c, tex = "-", -c, tex[1:].lstrip()
        if c == 1:
            body = basis
        elif c.is_Add:
            body = rf"\left({tex}\right){basis}"
        else:
            body = rf"{tex}\,{basis}"
        out.append((sign, body))
    if not out:
        return "0"
    first = ("-" if out[0][0] == "-" else "") + out[0][1]
    return first + "".join(f" {sign} {body}" for sign, body in out[1:])


def symbol_latex_names(expr) -> dict:
    """``symbol_names`` mapping for ``sympy.latex`` covering the dotted symbols in ``expr``."""
    names = {}
    for s in sympified(expr).free_symbols:
        if isinstance(s, sp.Symbol):
            tex = _dot_name(s)
            if tex:
                names[s] = tex
    return names


def latex(expr, **kwargs) -> str:
    """``sympy.latex`` with dotted velocity symbols rendered as ``\\dot{q}``; beyond 400 characters a
    fraction whose numerator is much wider than its denominator is written ``\\frac{1}{d}\\left(n\\right)``
    so that it can be broken over lines (breqn)."""
    expr = sympified(expr)
    names = symbol_latex_names(expr)
    names.update(kwargs.pop("symbol_names", {}))
    out = sp.latex(expr, symbol_names=names, **kwargs)
    if len(out) > _LONG and "long_frac_ratio" not in kwargs:
        # a long fraction as (1/denominator)(numerator), as in print: the numerator can break over lines
        out = sp.latex(expr, symbol_names=names, long_frac_ratio=1, **kwargs)
    return out


_LONG = 400  # characters of LaTeX beyond which long fractions are split


def _symbols_in(obj, found: set) -> set:
    """The sympy symbols in ``obj`` and in the lists, tuples, sets and dicts it is made of."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            _symbols_in(k, found), _symbols_in(v, found)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            _symbols_in(item, found)
    else:
        found |= {s for s in getattr(obj, "free_symbols", ()) if isinstance(s, sp.Symbol)}
    return found


def display_latex(obj, **options) -> str:
    """``sympy.latex`` of an expression, matrix or container of them with anholo's velocity names: the symbol
    ``x_dot`` as ``\\dot{x}`` (sympy alone writes ``x_{dot}``; its own convention is the name ``xdot``).

    >>> print(display_latex([sp.Symbol("x_dot") + 1, sp.Symbol("psi1_dot")]))
    \\left[ \\dot{x} + 1, \\  \\dot{\\psi}_{1}\\right]
    """
    names = {s: _dot_name(s) for s in _symbols_in(obj, set()) if _dot_name(s)}
    names.update(options.pop("symbol_names", {}))
    return sp.latex(obj, symbol_names=names, **options)


def init_printing(**options) -> None:
    """sympy's rich display (Jupyter: ``sympy.init_printing``) with :func:`display_latex`, so that raw sympy
    results (``L.expr``, ``L.momenta``) show ``x_dot`` as ẋ; ``options`` go to ``sympy.init_printing``."""
    options.setdefault("use_latex", "mathjax")  # LaTeX for the front end to typeset, no PNG renderings
    sp.init_printing(latex_printer=display_latex, **options)


class EquationDisplay:
    """Text and LaTeX renderings of a result from its ``equations()`` (a list of ``Eq``)."""

    def __str__(self):
        return "\n".join(f"{e.lhs} = {e.rhs}" for e in self.equations())

    def as_latex(self) -> str:
        """The equations as a LaTeX ``aligned`` block."""
        rows = [f"{latex(e.lhs)} &= {latex(e.rhs)}" for e in self.equations()]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def _repr_latex_(self):
        return "$" + self.as_latex() + "$"


_TEX_SPECIAL = (("\\", r"\textbackslash{}"), ("_", r"\_"), ("^", r"\^{}"), ("&", r"\&"), ("%", r"\%"),
                ("#", r"\#"), ("$", r"\$"), ("{", r"\{"), ("}", r"\}"), ("~", r"\~{}"))
_TEX_UNICODE = {"α": r"$\alpha$", "β": r"$\beta$", "γ": r"$\gamma$", "σ": r"$\sigma$", "μ": r"$\mu$",
                "λ": r"$\lambda$", "Γ": r"$\Gamma$", "θ": r"$\theta$", "ψ": r"$\psi$", "φ": r"$\varphi$",
                "≠": r"$\neq$", "≤": r"$\leq$", "≥": r"$\geq$", "−": "-", "–": "--", "—": "---", "⊕": r"$\oplus$",
                "∧": r"$\wedge$", "·": r"$\cdot$", "²": r"$^2$", "→": r"$\to$", "⇔": r"$\Leftrightarrow$",
                "<": r"$<$", ">": r"$>$", "|": r"$|$"}


_PAIRS = {"<=": r"$\leq$", ">=": r"$\geq$", "!=": r"$\neq$", "**": r"\textasciicircum{}"}
#: Functions a verdict's text may call (sympy's printed names); any other call is an undefined function.
_FUNCTIONS = {name: getattr(sp, name) for name in (
    "sqrt", "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "exp", "log", "Abs", "sign", "Derivative", "re", "im", "Min", "Max")}
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: operator.pow}


def _from_ast(node):
    """A sympy expression from the AST of printed sympy text: names, numbers, ``+ - * / **`` and calls only
    (anything else — attributes, subscripts, strings — raises ValueError: the text is not an expression)."""
    if isinstance(node, ast.Expression):
        return _from_ast(node.body)
    if isinstance(node, ast.Name):
        return sp.Symbol(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sp.Integer(node.value) if isinstance(node.value, int) else sp.Float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_from_ast(node.left), _from_ast(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _from_ast(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_from_ast(a) for a in node.args]
        f = _FUNCTIONS.get(node.func.id) or sp.Function(node.func.id)
        return f(*args)
    raise ValueError("not an expression")


def _span_end(s: str, i: int) -> int:
    """The end of the longest run from ``i`` that can be printed sympy text: names, numbers, operators,
    parentheses (inside which spaces and commas may occur) and `` + ``/`` - `` between operands."""
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        elif c.isalnum() or c in "_.*/+-":
            pass
        elif c == " " and depth > 0:
            pass
        elif c == "," and depth > 0:
            pass
        elif c == " " and s[j:j + 3] in (" + ", " - ") and j + 3 < len(s) and (s[j + 3].isalnum() or s[j + 3] in "(_"):
            j += 3
            continue
        else:
            break
        j += 1
    return j


def _math(span: str):
    """The LaTeX of ``span`` if it is an expression worth setting as mathematics (it has a product, a
    quotient, a power or a call of a standard function), else None."""
    if not any(x in span for x in ("*", "/")) and not re.search(r"\b(%s)\(" % "|".join(_FUNCTIONS), span):
        return None
    if "__" in span or len(span) > 20000:
        return None
    try:
        return latex(_from_ast(ast.parse(span, mode="eval")))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, RecursionError, AttributeError):
        return None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _plain_math(span: str):
    """The LaTeX of ``span`` if it parses as an expression at all (a number, a name), else None."""
    if not span or "__" in span:
        return None
    try:
        return latex(_from_ast(ast.parse(span, mode="eval")))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, RecursionError, AttributeError):
        return None


def tex_text(s: str) -> str:
    """Plain text (a verdict, a reason) safe in LaTeX text mode: specials escaped, Greek letters and
    mathematical signs as LaTeX commands (so that pdflatex needs no Unicode support), and the expressions
    in it (sympy's printed text, e.g. ``sqrt(y**2 + 1)``, ``a*m = 0``) set as mathematics through the LaTeX
    printer (``$\\sqrt{y^{2} + 1}$``, dotted velocities as ``\\dot{x}``) — no Python syntax is left.

    >>> print(tex_text("density N = sqrt(y**2 + 1) iff a*m = 0, degree <= 1"))
    density $N = \\sqrt{y^{2} + 1}$ iff $a m = 0$, degree $\\leq$ 1
    """
    s, out, i = str(s), [], 0
    while i < len(s):
        if (s[i].isalnum() or s[i] in "(_-") and (i == 0 or not (s[i - 1].isalnum() or s[i - 1] == "_")):
            end = _span_end(s, i)
            span = s[i:end].rstrip(".,;:")
            tex = _math(span) if span else None
            if tex is None and _NAME.fullmatch(span) and s.startswith(" = ", i + len(span)):
                rhs = s[i + len(span) + 3:_span_end(s, i + len(span) + 3)].rstrip(".,;:")
                rhs_tex = _math(rhs)
                if rhs_tex is not None:  # ``name = expression``: one formula
                    out.append(f"${_plain_math(span)} = {rhs_tex}$")
                    i += len(span) + 3 + len(rhs)
                    continue
            if tex is not None:
                i += len(span)
                if s.startswith(" = ", i):  # an equation: both sides in one formula
                    rhs = s[i + 3:_span_end(s, i + 3)].rstrip(".,;:")
                    rhs_tex = _plain_math(rhs)
                    if rhs_tex is not None:
                        tex, i = f"{tex} = {rhs_tex}", i + 3 + len(rhs)
                out.append(f"${tex}$")
                continue
        pair = s[i:i + 2]
        if pair in _PAIRS:
            out.append(_PAIRS[pair])
            i += 2
            continue
        ch = s[i]
        rep = next((b for a, b in _TEX_SPECIAL if a == ch), None)
        out.append(rep if rep is not None else _TEX_UNICODE.get(ch, ch))
        i += 1
    return "".join(out)

"""Readable LaTeX for anholo's symbols: ``x_dot`` → ``\\dot{x}``, ``v1_dot`` → ``\\dot{v}_{1}``."""

from __future__ import annotations

import ast
import functools
import operator
import re

import sympy as sp
from sympy.printing.conventions import split_super_sub
from sympy.printing.latex import translate

from ..parsing import sympified

__all__ = ["latex", "dotted", "combination_latex", "symbol_latex_names", "symbol_tex", "EquationDisplay", "tex_text",
           "display_latex", "init_printing"]


_ACCENTS = {"dot": r"\dot", "ddot": r"\ddot", "bar": r"\bar", "hat": r"\hat", "tilde": r"\tilde"}


def _part_tex(part: str) -> str:
    """One part of a name (its base or an index) in LaTeX: a letter, a number, a Greek name (``psi``) or a
    name with sympy's modifier (``xdot``) as sympy writes it; a word (``lean``, ``wheel``) upright as one
    symbol, ``\\mathrm{lean}`` (sympy sets it as a product of italic letters)."""
    tex = translate(part)
    if tex != part or len(part) <= 1 or part.isdigit() or not part.isalnum():
        return tex
    return r"\mathrm{%s}" % part


@functools.lru_cache(maxsize=4096)
def symbol_tex(name: str) -> str:
    """LaTeX of the symbol named ``name``: sympy's split into base, superscripts and subscripts, a trailing
    ``_dot``/``_ddot`` (and ``_bar``, ``_hat``, ``_tilde``) as an accent on the base letter only, a word
    upright as one symbol.  The one place where anholo's names get their LaTeX.

    >>> print(symbol_tex("psi1_ddot"), symbol_tex("lean_dot"), symbol_tex("rear_wheel"), symbol_tex("alpha_bar"))
    \\ddot{\\psi}_{1} \\dot{\\mathrm{lean}} \\mathrm{rear}_{\\mathrm{wheel}} \\bar{\\alpha}
    """
    if "__" in name.strip("_") or name.startswith("_") or not name:
        return sp.latex(sp.Symbol(name))
    base, sups, subs = split_super_sub(name)
    accents = []
    while subs and subs[-1] in _ACCENTS:
        accents.append(_ACCENTS[subs.pop()])
    tex = _part_tex(base)
    for accent in reversed(accents):
        tex = f"{accent}{{{tex}}}"
    if subs:
        tex += "_{%s}" % " ".join(_part_tex(x) for x in subs)
    if sups:
        tex += "^{%s}" % " ".join(_part_tex(x) for x in sups)
    return tex


def dotted(sym, order: int = 1) -> str:
    """LaTeX of the ``order``-th time derivative of a symbol, the accent on the letter only:
    ``dotted(psi1, 2)`` is ``\\ddot{\\psi}_{1}`` (not ``\\ddot{\\psi_{1}}``).

    >>> print(dotted(sp.Symbol("lambda1")))
    \\dot{\\lambda}_{1}
    """
    name = sym.name if isinstance(sym, sp.Symbol) else str(sym)
    return symbol_tex(name + ("_ddot" if order == 2 else "_dot"))


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
    """``symbol_names`` mapping for ``sympy.latex`` of the symbols in ``expr`` (:func:`symbol_tex`)."""
    return {s: symbol_tex(s.name) for s in sympified(expr).free_symbols if isinstance(s, sp.Symbol)}


def latex(expr, **kwargs) -> str:
    """``sympy.latex`` with dotted velocity symbols rendered as ``\\dot{q}``; beyond 400 characters a
    fraction whose numerator is much wider than its denominator is written ``\\frac{1}{d}\\left(n\\right)``
    so that it can be broken over lines (breqn)."""
    expr = sympified(expr)
    names = symbol_latex_names(expr)
    names.update(kwargs.pop("symbol_names", {}))
    _spaced_products(names, kwargs)
    out = sp.latex(expr, symbol_names=names, **kwargs)
    if len(out) > _LONG and "long_frac_ratio" not in kwargs:
        # a long fraction as (1/denominator)(numerator), as in print: the numerator can break over lines
        out = sp.latex(expr, symbol_names=names, long_frac_ratio=1, **kwargs)
    return out


_LONG = 400  # characters of LaTeX beyond which long fractions are split


def _spaced_products(names: dict, options: dict) -> None:
    r"""Products get a thin space between factors (``mul_symbol``) when a name is an upright word: sympy
    writes factors side by side, and ``\dot{\mathrm{lean}} \dot{\mathrm{spin}}`` would be typeset
    as one word."""
    if "mul_symbol" not in options and any(r"\mathrm{" in tex for tex in names.values()):
        options["mul_symbol"] = r"\,"


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
    names = {s: symbol_tex(s.name) for s in _symbols_in(obj, set())}
    names.update(options.pop("symbol_names", {}))
    _spaced_products(names, options)
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


_GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
          "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi",
          "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
          "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma",
          "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega"}
_GREEK_NAMES = frozenset(_GREEK.values()) | {"varphi", "vartheta", "varepsilon"}
_L = "A-Za-z" + "".join(_GREEK)  # letters of a name in a verdict's text
_WORD_START = re.compile(rf"(?<![{_L}0-9_\\^.])")
#: Index notation of the theory (``R^a_αβ``, ``p_a``, ``v^β``, ``L^`` for L̂): a name with indices.
_INDEXED = re.compile(rf"([{_L}]+)((?:[\^_][{_L}0-9]+)+|\^(?=[\s,.;:)]|$))")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.]\w)")
_IDENT = re.compile(rf"[{_L}][{_L}0-9]*(?:_[{_L}0-9]+)*")
#: Notations of the theory that are neither sympy's text nor a name with indices, and their LaTeX.
_NOTATIONS = tuple((re.compile(a), b) for a, b in (
    (r"exp\(c_A q\^A\)", r"\exp(c_A q^A)"), (r"det\(g\)\^([a-z])", r"\det(g)^{\1}"), (r"dq dv\b", r"dq\,dv"),
    (r"div(?= (?:Γ|Gamma)_nh)", r"\operatorname{div}")))
_RELATIONS = {"=": "=", "≠": r"\neq", "!=": r"\neq", "<=": r"\leq", ">=": r"\geq", "≤": r"\leq", "≥": r"\geq",
              "<": "<", ">": ">", "+": "+", "-": "-"}
_JOIN = re.compile(r" (=|≠|!=|<=|>=|≤|≥|<|>|\+|-) (?=\S)")
_CODE = re.compile(r"(?<=\brun )(\S.*?)(?= in Python\b)")


def _greek_names(name: str) -> str:
    return "".join(_GREEK.get(c, c) for c in name)


def _index_tex(idx: str) -> str:
    return "".join("\\" + _GREEK[c] if c in _GREEK else c for c in idx)


def _atom(s: str, i: int):
    """The mathematical atom of a verdict's text that starts at ``s[i]``: ``(end, tex, kind)`` with kind
    ``"strong"`` (set as mathematics even alone), ``"index"`` (index notation, which may follow another
    with a space between, as in ``p_a R^a_αβ v^β``), ``"weak"`` (a letter or number, mathematics only in a
    relation) or ``"word"`` (a name of several letters: only on the left of `` = ``); None if none starts
    there."""
    for pattern, tex in _NOTATIONS:
        m = pattern.match(s, i)
        if m:
            for k, group in enumerate(m.groups(), 1):
                tex = tex.replace(f"\\{k}", group)
            return m.end(), tex, "index"
    if s[i] == "-" and i + 1 < len(s) and (s[i + 1].isalnum() or s[i + 1] in _GREEK):  # a unary minus
        inner = _atom(s, i + 1)
        if inner is not None and inner[2] != "word":
            return inner[0], "-" + inner[1], "strong"
        return None
    end = _span_end(s, i)
    span = s[i:end].rstrip(".,;:")
    tex = _math(_greek_names(span)) if span else None
    if tex is not None:  # sympy's text of an expression with a product, quotient, power or call
        return i + len(span), tex, "strong"
    m = _INDEXED.match(s, i)
    if m and not m.group(0).startswith("_") and "__" not in m.group(0):
        base, rest = m.groups()
        if "^" not in rest:  # a name with subscripts (Gamma_nh, x_dot, rear_wheel): the symbol's LaTeX
            tex = symbol_tex(_greek_names(m.group(0)))
        elif rest == "^":
            tex = r"\hat{%s}" % _part_tex(_greek_names(base))
        else:
            tex = _part_tex(_greek_names(base)) + "".join(
                f"{x[0]}{{{_index_tex(x[1:])}}}" for x in re.findall(rf"[\^_][{_L}0-9]+", rest))
        end = m.end()
        if s.startswith("(", end):  # an argument list: theta^a(u), Gamma_nh(p_a)
            close = s.find(")", end)
            args = _inline(s[end + 1:close]) if close > 0 else None
            if args is not None:
                tex, end = f"{tex}({args})", close + 1
        return end, tex, "index"
    m = _NUMBER.match(s, i)
    if m:
        number = m.group(0)
        if "e" in number:  # 1e-08: 10^{-8}
            mantissa, exponent = number.split("e")
            tex = ("" if float(mantissa) == 1 else mantissa + r" \cdot ") + "10^{%d}" % int(exponent)
            return m.end(), tex, "strong"
        return m.end(), number, "weak"
    m = _IDENT.match(s, i)
    if not m:
        return None
    name = _greek_names(m.group(0))
    head = name.rstrip("0123456789")
    end, tex = m.end(), symbol_tex(name)
    if s.startswith("(", end):  # a function of its arguments: F(q)
        close = s.find(")", end)
        args = _inline(s[end + 1:close]) if close > 0 else None
        if args is not None and (len(head) == 1 or head in _GREEK_NAMES):
            return close + 1, rf"{tex}\left({args}\right)", "index"
    if head in _GREEK_NAMES:
        return end, tex, "strong"
    if len(head) == 1:
        if head in "AIa" or s[end:end + 1] == "." and s[end + 1:end + 2].isalpha():  # a word, or e.g., i.e.
            return end, tex, "letter"
        return end, tex, "strong" if head.isupper() else "weak"
    return end, tex, "word"


def _formula(s: str, i: int):
    """``(end, tex)`` of the longest formula from ``s[i]``: atoms joined by relations and signs
    (`` = ``, `` < ``, `` + ``, ...) and index notation by spaces; None where no atom starts."""
    first = _atom(s, i)
    if first is None:
        return None
    end, tex, kind = first
    parts, kinds = [tex], [kind]
    while True:
        m = _JOIN.match(s, end)
        if m:
            nxt = _atom(s, m.end())
            if nxt is not None and nxt[2] != "word" and (kinds[-1] != "word" or m.group(1) == "="):
                parts += [_RELATIONS[m.group(1)], nxt[1]]
                kinds.append(nxt[2])
                end = nxt[0]
                continue
        if kinds[-1] == "index" and s.startswith(" ", end):
            nxt = _atom(s, end + 1)
            if nxt is not None and nxt[2] == "index":
                parts.append(nxt[1])
                kinds.append(nxt[2])
                end = nxt[0]
                continue
        break
    if len(kinds) == 1 and kinds[0] in ("weak", "word", "letter"):
        return None  # a lone number, letter or word: text
    return end, " ".join(parts)


def _inline(s: str):
    """The LaTeX of a comma-separated list of formulas that makes up all of ``s`` (an argument list), else None."""
    out = []
    for item in s.split(","):
        item = item.strip()
        if not item:
            return None
        f = _formula(item, 0)
        if f is None:
            atom = _atom(item, 0)
            f = atom[:2] if atom is not None else None
        if f is None or f[0] != len(item):
            return None
        out.append(f[1])
    return ", ".join(out)


#: A place where a line may end ragged (``\hfil`` fills it) at no badness: a typewriter font's spaces do not
#: stretch, so a justified line that ends inside a long name cannot be filled otherwise (overfull by 35 pt).
_RAGGED_BREAK = r"\hfil\penalty50\hfilneg{}"


def _code_tex(code: str) -> str:
    """A Python statement as ``\\texttt``: specials escaped, breaks allowed before it and after dots, commas and
    semicolons, where the line may end ragged."""
    out = "".join(next((b for a, b in _TEX_SPECIAL if a == ch), ch) for ch in code)
    return _RAGGED_BREAK + r"\texttt{" + re.sub(r"([.;,])", r"\1" + _RAGGED_BREAK.replace("\\", "\\\\"), out) + "}"


def tex_text(s: str) -> str:
    """Plain text (a verdict, a reason) safe in LaTeX text mode: specials escaped, and the mathematics in it
    set as formulas — sympy's printed text (``sqrt(y**2 + 1)``, ``a*m = 0``) through the LaTeX printer, the
    theory's index notation (``p_a R^a_αβ v^β``, ``L^`` for L̂, ``Gamma_nh``) with its indices, names by
    :func:`symbol_tex` (``x_dot`` as ``\\dot{x}``, ``lean`` upright), relations between them (``a = 0``,
    ``4 < 5``, ``-p``) as one formula; a Python call to run (``run X in Python``) as ``\\texttt``.  No
    Python syntax is left, and pdflatex needs no Unicode support.

    >>> print(tex_text("density N = sqrt(y**2 + 1) iff a*m = 0, degree <= 1"))
    density $N = \\sqrt{y^{2} + 1}$ iff $a m = 0$, degree $\\leq$ 1
    >>> print(tex_text("p_a R^a_αβ v^β ≠ 0 on C: σ = −p fails iff a = 0 or m0 = 0"))
    $p_{a} R^{a}_{\\alpha\\beta} v^{\\beta} \\neq 0$ on $C$: $\\sigma = -p$ fails iff $a = 0$ or $m_{0} = 0$
    """
    pieces = _CODE.split(str(s).replace("−", "-"))
    return "".join(_code_tex(x) if k % 2 else _prose_tex(x) for k, x in enumerate(pieces))


def _prose_tex(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if _WORD_START.match(s, i) and (s[i].isalnum() or s[i] in "(-" or s[i] in _GREEK) and \
                (i == 0 or not (s[i - 1].isalnum() or s[i - 1] in "_^\\" or s[i - 1] in _GREEK)):
            f = _formula(s, i)
            if f is not None:
                out.append(f"${f[1]}$")
                i = f[0]
                continue
            m = _IDENT.match(s, i) or _NUMBER.match(s, i)
            if m and not s.startswith("__", i):  # a word or a lone number: as it is
                out.append("".join(_TEX_UNICODE.get(c, r"\_" if c == "_" else c) for c in m.group(0)))
                i = m.end()
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

"""Readable LaTeX for anholo's symbols: ``x_dot`` → ``\\dot{x}``, ``v1_dot`` → ``\\dot{v}_{1}``."""

from __future__ import annotations

import re

import sympy as sp

__all__ = ["latex", "symbol_latex_names", "EquationDisplay", "tex_text"]


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


def symbol_latex_names(expr) -> dict:
    """``symbol_names`` mapping for ``sympy.latex`` covering the dotted symbols in ``expr``."""
    names = {}
    for s in sp.sympify(expr).free_symbols:
        if isinstance(s, sp.Symbol):
            tex = _dot_name(s)
            if tex:
                names[s] = tex
    return names


def latex(expr, **kwargs) -> str:
    """``sympy.latex`` with dotted velocity symbols rendered as ``\\dot{q}``."""
    expr = sp.sympify(expr)
    names = symbol_latex_names(expr)
    names.update(kwargs.pop("symbol_names", {}))
    return sp.latex(expr, symbol_names=names, **kwargs)


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


def tex_text(s: str) -> str:
    """Plain text (a verdict, a reason) safe in LaTeX text mode: specials escaped, Greek letters and
    mathematical signs as LaTeX commands (so that pdflatex needs no Unicode support)."""
    out = []
    for ch in str(s):
        rep = next((b for a, b in _TEX_SPECIAL if a == ch), None)
        out.append(rep if rep is not None else _TEX_UNICODE.get(ch, ch))
    return "".join(out)

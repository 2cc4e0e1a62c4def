"""Presenting expressions under budgets: cheap normal forms, text, LaTeX, and JSON with shared subexpressions.

Derived expressions of real systems are DAGs whose trees can have millions of
nodes; printing such a tree costs minutes and gives nobody anything to read.
A :class:`Presenter` decides, per expression and cheaply (the size test stops
at its limit), what a report shows: small expressions once put through
:func:`~anholo.algebra.simplify.tidy` and printed in full; large ones replaced
by one line that gives their size and says how to get them.  JSON stays
complete: :func:`serialize` writes a block's expressions with shared
subexpressions (``"cse": [[name, expr], …]``, later definitions may use earlier
names) when they are large, so that every string is sympify-able and the file
stays small.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..io.expressions import sympified
from .engine import engine_cse, printed, to_engine_dag
from .expressions import dag_size, size_exceeds
from .printing import combination_latex, latex as _latex
from .simplify import tidy

__all__ = ["Presenter", "serialize", "CSE_PREFIX", "ReportBlock", "vector_text", "vector_latex", "align",
           "problem_latex"]

CSE_PREFIX = "cse"


@dataclass(frozen=True)
class Presenter:
    """How results print their expressions.

    Parameters
    ----------
    tidy_limit : int
        Expressions with at most this many tree nodes are put through ``tidy``
        (``cancel`` and reduction modulo ``sin² + cos² = 1``) before printing;
        larger ones are printed as derived (no blanket simplification).
    text_limit : int
        Expressions with more tree nodes are not printed in text or LaTeX; one
        line gives their size and :attr:`hint` (unless ``full``).
    simplify : bool
        Put every printed expression through ``sympy.simplify`` (slow; the
        report's time budget bounds it).
    full : bool
        Print every expression whatever its size.
    hint : str
        How to get an expression that was not printed.
    """

    tidy_limit: int = 300
    text_limit: int = 400
    simplify: bool = False
    full: bool = False
    hint: str = "complete in the JSON report (--json), or print it with --full"

    def present(self, expr) -> sp.Basic:
        """``expr`` in the form a report shows: tidied when small (simplified with ``simplify``)."""
        expr = sympified(expr)
        if not isinstance(expr, sp.Expr) or expr.is_Atom:
            return expr
        if self.simplify and (self.full or not size_exceeds(expr, 8 * self.text_limit)):
            return sp.simplify(expr)
        if not size_exceeds(expr, self.tidy_limit):
            return tidy(expr)
        return expr

    def fits(self, expr) -> bool:
        """True if ``expr`` is printed in full."""
        return self.full or not size_exceeds(sympified(expr), self.text_limit)

    def note(self, expr) -> str:
        """The line that stands for an expression too large to print."""
        return f"[expression with {dag_size(expr)} distinct subexpressions, not printed: {self.hint}]"

    def text(self, expr) -> str:
        """``expr`` as text, or the note if it is over the budget."""
        expr = self.present(expr)
        return str(expr) if self.fits(expr) else self.note(expr)

    def latex(self, expr) -> str:
        """``expr`` as LaTeX (dotted velocity names), or the note as ``\\text{…}``."""
        expr = self.present(expr)
        if self.fits(expr):
            return _latex(expr)
        return r"\text{" + self.note(expr).replace("_", r"\_").replace("--", "-{}-") + "}"


def _leaves(payload, out: list) -> None:
    if isinstance(payload, sp.Basic):
        out.append(payload)
    elif isinstance(payload, dict):
        for v in payload.values():
            _leaves(v, out)
    elif isinstance(payload, (list, tuple)):
        for v in payload:
            _leaves(v, out)


def _replace(payload, table: dict):
    if isinstance(payload, sp.Basic):
        return table[payload]
    if isinstance(payload, dict):
        return {k: _replace(v, table) for k, v in payload.items()}
    if isinstance(payload, (list, tuple)):
        return [_replace(v, table) for v in payload]
    return payload


def _json_text(expr) -> str:
    """``str(expr)``; for a large expression without sorting the terms: the same sympify-able text up to
    the order of sums and products (``str`` sorts every Add and Mul, which costs most of the time of a
    large JSON report)."""
    if not isinstance(expr, sp.Basic) or not size_exceeds(expr, 300):
        return str(expr)
    return sp.sstr(expr, order="none")


def serialize(payload, *, cse_above: int | None = 20000, reserved=()) -> object:
    """A JSON-able copy of ``payload`` (nested dicts and lists whose leaves are sympy objects or plain values).

    Every sympy leaf becomes its string (``str``: sympify-able with the file's
    names).  If ``payload`` is a dict and one of its expressions has more than
    ``cse_above`` tree nodes, the block's expressions are written with common
    subexpressions: the dict gets a key ``"cse"`` listing ``[name, expr]`` pairs
    in order (a later definition may use earlier names), and the expressions use
    those names.  Names are ``cse0, cse1, …`` (another prefix if one of
    ``reserved`` starts with it).
    """
    string = _json_text
    leaves: list = []
    _leaves(payload, leaves)
    big = cse_above is not None and isinstance(payload, dict) and any(
        isinstance(e, sp.Expr) and size_exceeds(e, cse_above) for e in leaves)
    if not big:
        return _replace(payload, {e: string(e) for e in leaves})
    prefix = CSE_PREFIX
    while any(str(r).startswith(prefix) for r in reserved):
        prefix = "_" + prefix
    exprs = list(dict.fromkeys(e for e in leaves if isinstance(e, sp.Expr)))
    cse, texts = _shared_texts(exprs, prefix)
    table = dict(zip(exprs, texts))
    table.update({e: string(e) for e in leaves if not isinstance(e, sp.Expr)})
    out = _replace(payload, table)
    out["cse"] = cse
    return out


def _shared_texts(exprs: list, prefix: str) -> tuple:
    """``(cse, texts)``: the common subexpressions of ``exprs`` as ``[[name, text], …]`` (names ``prefix0, …``)
    and the expressions as text using them.

    symengine finds and prints them (each distinct subexpression converted once: derived expressions are
    DAGs far smaller than their trees); sympy's ``cse`` and printer take over for what symengine cannot
    represent (an undefined function, a derivative, a piecewise expression)."""
    try:
        pairs, reduced = engine_cse(to_engine_dag(exprs))
    except (TypeError, RuntimeError, NotImplementedError):
        pairs, reduced = sp.cse(exprs, symbols=sp.numbered_symbols(prefix), optimizations=None, order="none")
        return [[str(name), _json_text(value)] for name, value in pairs], [_json_text(r) for r in reduced]
    return printed(pairs, reduced, prefix)


def vector_text(p: Presenter, components, coordinates) -> str:
    """``Σ X^A ∂/∂q^A`` as text (``d/dq`` notation), each component under the budget."""
    terms = []
    for c, q in zip(components, coordinates):
        if c == 0:
            continue
        if c == 1 or c == -1:
            terms.append(("- " if c == -1 else "+ ") + f"d/d{q}")
        elif getattr(c, "is_Atom", False) and not str(c).startswith("-"):
            terms.append(f"+ {c}*d/d{q}")
        else:
            terms.append(f"+ ({p.text(c)})*d/d{q}")
    text = " ".join(terms)
    return (text[2:] if text.startswith("+ ") else "-" + text[2:]) if terms else "0"


def vector_latex(p: Presenter, components, coordinates) -> str:
    """``Σ X^A ∂/∂q^A`` as LaTeX, each component under the budget."""
    return combination_latex([(c, p.latex(c), rf"\partial_{{{_latex(q)}}}") for c, q in zip(components, coordinates)
                              if c != 0])


class ReportBlock:
    """A result that renders itself as one block of a report (text, LaTeX, JSON).

    Subclasses give ``key`` (the JSON key of the block, also its name for
    ``--sections``), ``title``, and implement :meth:`payload` (the JSON entries,
    with sympy expressions as leaves), :meth:`text_lines` and :meth:`latex_lines`;
    :meth:`summary` gives the one-line verdicts a report prints first.  Every
    method takes the :class:`Presenter` that budgets the expressions.
    """

    key: str = ""
    title: str = ""

    def payload(self, p: Presenter) -> dict:
        """Top-level JSON entries of this block: ``{key: value}`` with sympy leaves."""
        raise NotImplementedError

    def text_lines(self, p: Presenter) -> list:
        raise NotImplementedError

    def latex_lines(self, p: Presenter) -> list:
        raise NotImplementedError

    def summary(self) -> list:
        """Short verdict lines (no large expressions)."""
        return []

    # --- the renderings a user meets ------------------------------------------------
    def to_dict(self, p: Presenter | None = None) -> dict:
        """The block's JSON entries, every expression as a sympify-able string."""
        p = p or Presenter(full=True)
        return {k: serialize(v, cse_above=None) for k, v in self.payload(p).items()}

    def as_text(self, p: Presenter | None = None) -> str:
        return "\n".join(self.text_lines(p or Presenter()))

    def as_latex(self, p: Presenter | None = None) -> str:
        return "\n".join(self.latex_lines(p or Presenter()))

    def __str__(self):
        return self.as_text()

    def _repr_latex_(self):
        body = self.as_latex()
        return body if body.lstrip().startswith("$") else "$\\displaystyle " + body.replace("\\begin{align*}", "\\begin{aligned}").replace("\\end{align*}", "\\end{aligned}") + "$"


def align(rows) -> list:
    """LaTeX lines of an ``align*`` environment with ``rows`` (already ``lhs &= rhs``)."""
    rows = list(rows)
    if not rows:
        return []
    return ["\\begin{align*}"] + [r + (" \\\\" if k < len(rows) - 1 else "") for k, r in enumerate(rows)] + ["\\end{align*}"]


def problem_latex(lagrangian, constraints) -> str:
    """A constrained problem as a LaTeX ``aligned`` block: ``L = …`` and ``0 = φ_a`` for each constraint,
    each expression tidied, or a note instead of an expression over the report's size budget."""
    p = Presenter()
    rows = [f"L &= {p.latex(lagrangian)}"] + [f"0 &= {p.latex(e)}" for e in constraints]
    return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"


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

import functools
import re
import time
from dataclasses import dataclass, field

import sympy as sp

from ..parsing import sympified
from .budget import OverBudget, cpu_budget
from .engine import engine_cse, printed, to_engine_dag
from .expressions import dag_size, size_exceeds
from .printing import combination_latex, latex as _latex
from .simplify import tidy

__all__ = ["Presenter", "Refinement", "Shared", "serialize", "CSE_PREFIX", "ReportBlock", "vector_text", "vector_latex", "align",
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
    refine_limit : int
        Expressions larger than ``tidy_limit`` but with at most this many tree nodes are
        offered to ``tidy`` and to ``cancel`` + ``factor_terms`` under a CPU budget
        (:class:`Refinement`); the shortest of the forms is shown.
    """

    tidy_limit: int = 300
    refine_limit: int = 4000
    text_limit: int = 400
    simplify: bool = False
    full: bool = False
    hint: str = "complete in the JSON report (--json), or print it with --full"
    shared: "Shared | None" = field(default=None, compare=False, hash=False)
    refinement: "Refinement" = field(default_factory=lambda: Refinement(), compare=False, hash=False)

    def present(self, expr) -> sp.Basic:
        """``expr`` in the form a report shows: tidied when small, the shortest of a few cheap normal
        forms when of medium size and the budget allows (simplified with ``simplify``)."""
        expr = sympified(expr)
        if not isinstance(expr, sp.Expr) or expr.is_Atom:
            return expr
        if self.simplify and (self.full or not size_exceeds(expr, 8 * self.text_limit)):
            return sp.simplify(expr)
        if not size_exceeds(expr, self.tidy_limit):
            return tidy(expr)
        if not size_exceeds(expr, self.refine_limit):
            return self.refinement.shortest(expr)
        return expr

    def equation(self, lhs, rhs, unknowns=None) -> tuple:
        """``lhs = rhs`` in the form a report shows, when it is small (at most half :attr:`refine_limit` nodes) and
        linear in its ``unknowns`` (by default its symbols ``*_dot``, the derivatives of the quasi-velocities
        of Hamel's equations): ``sum_i M_i(q, v) u_i = F(q, v)`` — the unknowns collected on the left, each
        coefficient with its common factors taken out (``factor_terms``), every other term on the right
        (``tidy``).  Larger or nonlinear equations are returned as they are (no simplification of large
        expressions)."""
        lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
        if size_exceeds(lhs, self.refine_limit // 2) or size_exceeds(rhs, self.refine_limit // 2):
            return lhs, rhs
        diff = lhs - rhs
        if unknowns is None:
            unknowns = [s for s in diff.free_symbols if s.name.endswith("_dot")]
        unknowns = sorted(unknowns, key=lambda s: s.name)
        if not unknowns:
            return lhs, rhs
        expanded = sp.expand(diff)
        parts = sp.collect(expanded, unknowns, evaluate=False)
        if any(k != 1 and k not in unknowns for k in parts) or any(
                c.has(*unknowns) for c in parts.values()):
            return lhs, rhs
        left = [(sp.factor_terms(tidy(parts[u])), u) for u in unknowns if u in parts]
        right = sp.factor_terms(tidy(-parts.get(sp.S.One, sp.S.Zero)))
        return left, right

    def equation_text(self, lhs, rhs) -> str:
        """``lhs = rhs`` as text, in the form of :meth:`equation` when it is small."""
        left, right = self.equation(lhs, rhs)
        if not isinstance(left, list):
            return f"{self.text(left)} = {self.text(right)}"
        terms = []
        for c, u in left:
            if c == 1 or c == -1:
                terms.append(("-" if c == -1 else "+") + f" {u}")
            elif c.is_Add:
                terms.append(f"+ ({c})*{u}")
            else:
                t = str(c)
                terms.append((f"- {t[1:]}" if t.startswith("-") else f"+ {t}") + f"*{u}")
        text = " ".join(terms)
        text = text[2:] if text.startswith("+ ") else "-" + text[2:]
        return f"{text} = {right}"

    def equation_latex(self, lhs, rhs) -> str:
        """``lhs &= rhs`` as LaTeX, in the form of :meth:`equation` when it is small."""
        left, right = self.equation(lhs, rhs)
        if not isinstance(left, list):
            return f"{self.latex(left)} &= {self.latex(right)}"
        return (combination_latex([(c, _latex(c), _latex(u)) for c, u in left]) + f" &= {_latex(right)}")

    def fits(self, expr) -> bool:
        """True if ``expr`` is printed in full."""
        return self.full or not size_exceeds(sympified(expr), self.text_limit)

    def note(self, expr) -> str:
        """The line that stands for an expression too large to print."""
        return f"[expression with {dag_size(expr)} distinct subexpressions, not printed: {self.hint}]"

    def _short(self, expr):
        """``expr`` itself if it is printed as it is, else its form over the names of :attr:`shared`
        (None if there is no :class:`Shared` table or the expression needs more names than it allows)."""
        small = not size_exceeds(expr, self.text_limit)
        if small:
            return _factored(expr)
        if self.full and self.shared is None:
            return expr
        if self.shared is None:
            return None
        return self.shared.abbreviate(expr, self.text_limit, full=self.full)

    def text(self, expr) -> str:
        """``expr`` as text: in full when small, over named shared subexpressions (``c1, c2, …``, defined
        under the block by the report) when large, or the note if even that is over the budget."""
        expr = self.present(expr)
        short = self._short(expr)
        return str(short) if short is not None else self.note(expr)

    def latex(self, expr) -> str:
        """``expr`` as LaTeX (dotted velocity names), over named shared subexpressions when large, or the
        note as ``\\text{…}``."""
        expr = self.present(expr)
        short = self._short(expr)
        if short is not None:
            return _latex(short)
        return r"\text{" + self.note(expr).replace("_", r"\_").replace("--", "-{}-") + "}"


class Refinement:
    """The medium-size expressions of one report, each put in the shortest of its cheap normal forms.

    An expression of a few hundred to a few thousand tree nodes (the carriage's vakonomic
    accelerations: 480 operations, 2,800 characters, of which ``cancel`` leaves 135) is offered to
    :func:`~anholo.algebra.simplify.tidy` (``cancel`` and reduction modulo ``sin² + cos² = 1``), and to
    ``cancel`` alone when tidy gains nothing (reducing modulo sin² + cos² = 1 can lengthen a
    quotient that ``cancel`` shortens), each under a CPU budget of :attr:`each` seconds, all of them under
    :attr:`total` seconds per report; the form with the fewest operations is shown (the expression as
    derived if no form is shorter or the budget is spent).  Results are remembered, so the text and the
    JSON of a block show the same form.
    """

    def __init__(self, each: float = 0.8, total: float = 2.0):
        self.each = each
        self.total = total
        self.spent = 0.0
        self._done: dict = {}

    def shortest(self, expr: sp.Expr) -> sp.Expr:
        """The shorter of ``expr`` and ``tidy(expr)`` or, when tidy gains nothing, of ``expr`` and
        ``cancel(expr)``, as far as the budget allows (the printer takes common factors out afterwards)."""
        if expr in self._done:
            return self._done[expr]
        best, best_ops = expr, sp.count_ops(expr)
        for form in (tidy, sp.cancel):
            allowed = min(self.each, self.total - self.spent)
            if allowed <= 0.01 or best is not expr:
                break  # cancel only where tidy gained nothing (it is slower, and tidy starts from it)
            start = time.process_time()
            try:
                with cpu_budget(allowed):
                    candidate = form(expr)
                    ops = sp.count_ops(candidate)
            except OverBudget:
                self.spent += time.process_time() - start
                break  # cancel costs more than tidy (which uses it): no second try after a timeout
            except (sp.PolynomialError, sp.polys.polyerrors.PolificationFailed, TypeError, ValueError,
                    RecursionError):
                candidate, ops = None, None
            self.spent += time.process_time() - start
            if candidate is not None and ops < best_ops:
                best, best_ops = candidate, ops
        self._done[expr] = best
        return best


def _factored(expr):
    """:func:`_factored_form`, remembered for the expressions a report prints more than once."""
    try:
        return _factored_cached(expr)
    except TypeError:  # unhashable (a mutable matrix): not remembered
        return _factored_form(expr)


@functools.lru_cache(maxsize=1024)
def _factored_cached(expr):
    return _factored_form(expr)


def _factored_form(expr):
    """``expr`` with the common factors of its sums taken out (``factor_terms``: ``(-a*x + b*x)/c`` is
    printed ``x*(-a + b)/c``) when that makes it shorter; a small expression only (no factorisation)."""
    if not isinstance(expr, sp.Expr) or expr.is_Atom:
        return expr
    try:
        short = sp.factor_terms(expr)
    except (TypeError, ValueError, RecursionError):
        return expr
    return short if sp.count_ops(short) < sp.count_ops(expr) else expr


class _TooMany(Exception):
    """An expression needs more new names than :attr:`Shared.per_expression`."""


class Shared:
    """Names for the large subexpressions of a report's expressions (``where c1 = …``).

    An expression of more than ``limit`` tree nodes is printed with its largest
    arguments replaced by names, each name defined once (its definition again
    at most ``limit`` nodes, over earlier names), as in the hand-written
    abbreviations of Kane & Levinson (1985) ("Dynamics: Theory and
    Applications", the ``Z_i`` of their computational notes): a subexpression
    that occurs in several equations gets one name.  The tree sizes are counted
    once per distinct subexpression (a DAG walk), so that derived expressions
    whose trees have millions of nodes cost only their distinct nodes.

    :meth:`pending` gives the definitions made since the last call (a report
    prints them under the block that introduced them).  Outside ``full`` an
    expression that would need more than ``per_expression`` new names, or bring the
    names of the report beyond ``total``, keeps the presenter's note instead (its
    complete form is in the JSON report, and ``--full`` prints it over names).
    """

    def __init__(self, prefix: str = "c", per_expression: int = 25, total: int = 40, smallest: int = 40):
        self.prefix = prefix
        self.per_expression = per_expression
        self.total = total
        self.smallest = smallest  # arguments of at most this many nodes are never named (but wide roots)
        self.root_nodes = 20
        self.names: dict = {}
        self.definitions: list = []  # (Symbol, expression over earlier names), in order
        self._shown = 0
        self._sizes: dict = {}
        self._budget = None

    def size(self, expr) -> int:
        """Tree nodes of ``expr`` (memoized per distinct subexpression)."""
        sizes = self._sizes
        if expr in sizes:
            return sizes[expr]
        stack = [(expr, False)]
        while stack:
            e, done = stack.pop()
            if e in sizes:
                continue
            if done:
                sizes[e] = 1 + sum(sizes[a] for a in e.args)
                continue
            stack.append((e, True))
            stack.extend((a, False) for a in e.args if a not in sizes)
        return sizes[expr]

    def abbreviate(self, expr, limit: int, full: bool = False):
        """``expr`` with its large arguments replaced by names (None if over :attr:`per_expression`)."""
        start, names = len(self.definitions), dict(self.names)
        self._budget = None if full else min(self.per_expression, self.total - len(self.definitions))
        try:
            return self._cut(expr, limit)
        except _TooMany:
            del self.definitions[start:]
            self.names = names
            return None

    def _cut(self, expr, limit):
        expr = self._name_roots(expr, limit)
        total = self.size(expr)
        if total <= limit or not expr.args:
            return expr
        args = list(expr.args)
        sizes = [self.size(a) for a in args]
        new = list(args)
        for i in sorted(range(len(args)), key=lambda i: -sizes[i]):
            if total <= limit or sizes[i] <= self.smallest:
                break
            new[i] = self._name(args[i], limit)
            total -= sizes[i] - 1
        return expr.func(*new)

    def _name_roots(self, expr, limit):
        """``expr`` with its proper subexpressions that are roots or reciprocals of sums (:meth:`_unbreakable`)
        replaced by names: one name each, however often it occurs."""
        found, seen, stack = [], set(), list(expr.args)
        while stack:
            e = stack.pop()
            if e in seen or not e.args:
                continue
            seen.add(e)
            if self._unbreakable(e):
                found.append(e)
            else:
                stack.extend(e.args)
        if not found:
            return expr
        return expr.xreplace({e: self._name(e, limit) for e in found})

    def _unbreakable(self, e) -> bool:
        """``(a + b + …)^p`` with ``p`` not a positive integer and more than :attr:`root_nodes` nodes: typeset as
        a root or the denominator of a fraction, which LaTeX (and breqn) cannot break over lines."""
        return (isinstance(e, sp.Pow) and isinstance(e.base, sp.Add) and not (e.exp.is_Integer and e.exp > 0)
                and self.size(e) > self.root_nodes)

    def _name(self, sub, limit):
        if sub in self.names:
            return self.names[sub]
        body = self._cut(sub, limit)
        if self._budget is not None:
            if self._budget <= 0:
                raise _TooMany()
            self._budget -= 1
        symbol = sp.Symbol(f"{self.prefix}{len(self.definitions) + 1}")
        self.names[sub] = symbol
        self.definitions.append((symbol, body))
        return symbol

    def pending(self) -> list:
        """The definitions ``(name, expression)`` made since the last call."""
        out = self.definitions[self._shown:]
        self._shown = len(self.definitions)
        return out

    @staticmethod
    def prefix_for(reserved) -> str:
        """A prefix for the names (``c``, else ``w``, ``z``, …) that is not a symbol of the system and makes
        no name of one with digits (the carriage's parameter ``c`` makes its names ``w1, w2, …``)."""
        for prefix in ("c", "w", "z", "cc", "ww"):
            taken = re.compile(re.escape(prefix) + r"[0-9]*$")  # c1 would be read as a name of the system
            if not any(taken.match(str(r)) for r in reserved):
                return prefix
        return "c_"


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


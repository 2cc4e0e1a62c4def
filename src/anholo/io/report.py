"""The report of ``anholo analyze``: it orders the blocks, applies the budgets and isolates failures.

Every block is a result object that renders itself (text, LaTeX, JSON entries:
:class:`~anholo.algebra.presentation.ReportBlock`): the frame and the
Euler–Lagrange field, the nonholonomic and vakonomic fields
(:mod:`anholo.dynamics.summaries`), the consistency verdict
(:class:`~anholo.analysis.consistency.ConsistencyReport`), the Chaplygin and
Chetaev analyses (:mod:`anholo.analysis.summaries`).  This module only decides
which blocks apply, computes them in order under a time budget, and prints:

* the verdicts and small results first (a summary), then each block;
* text in lines of at most :data:`TEXT_WIDTH` characters (a sum broken between its
  terms, prose between words);
* every expression under the :class:`~anholo.algebra.presentation.Presenter`'s
  size budget in full; a larger one over names of its large subexpressions,
  each defined once under the line that first uses it (``where c1 = …``,
  :class:`~anholo.algebra.presentation.Shared`); beyond the budget of names
  the block's large results are listed in one sentence with their sizes and
  how to get them (``--full`` prints every expression over names, ``--json``
  has them all);
* in LaTeX every expression, also inside the verdicts' text, through the LaTeX
  printer (:func:`~anholo.algebra.printing.tex_text`);
* each optional search (Chaplygin sections, consistency sections) under its own
  CPU-time budget, so that no verdict depends on the order of the blocks;
* a block that fails (or runs out of time) shows its error in its place, and the
  others are printed (:attr:`Report.complete` is False: ``anholo analyze`` exits 3).

JSON stays complete: every expression is a string sympify-able with the file's
names; a block whose expressions are large carries ``"cse": [[name, expr], …]``
(shared subexpressions, in order) and its expressions use those names.  A failed
block is ``{"error": "…"}``.
"""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace

import sympy as sp

from ..algebra.budget import OverBudget, cpu_budget
from ..algebra.engine import to_engine
from ..algebra.expressions import size_exceeds
from ..algebra.presentation import Presenter, Shared, align, serialize
from ..algebra.printing import latex as _latex, tex_text
from ..algebra.simplify import tidy
from ..dynamics.maggi import MaggiSystem
from ..dynamics.maggi_summary import (LargeChetaevSummary, LargeEulerLagrangeSummary, LargeVakonomicSummary,
                                      MaggiSummary)
from ..dynamics.summaries import EulerLagrangeSummary, FrameSummary, NonholonomicSummary, VakonomicSummary
from ..errors import AnholoError, NonlinearConstraintError, ReportError
from .latex import summary_tex

__all__ = ["analyze", "Report", "SECTIONS", "DEFAULT_BUDGET", "TITLES"]

#: The blocks of a report in order (their JSON keys; names for ``--sections``).
SECTIONS = ("frame", "euler_lagrange", "nonholonomic", "controllability", "invariant_measure", "first_integrals",
            "vakonomic", "consistency", "chaplygin", "chetaev")
#: The title of each block (the ``title`` of its summary class; the analyses are imported when their block
#: is computed, not to read a title).
TITLES = {"frame": "Frame and structure functions", "euler_lagrange": "Hamel equations and the Euler–Lagrange field",
          "nonholonomic": "Nonholonomic (Lagrange-d'Alembert) dynamics", "vakonomic": "Vakonomic dynamics",
          "consistency": "Consistency of the nonholonomic and vakonomic dynamics", "chaplygin": "Chaplygin system",
          "chetaev": "Chetaev dynamics (nonlinear constraints)",
          "controllability": "Controllability of D (growth vector)",
          "invariant_measure": "Invariant measure of the nonholonomic field",
          "first_integrals": "First integrals of the nonholonomic field"}
_ALIASES = {"hamel_equations": "euler_lagrange", "lagrangian_quasi": "euler_lagrange", "regular": "euler_lagrange"}
#: Seconds a whole report may take by default (``--budget`` raises it).
DEFAULT_BUDGET = 120.0
#: CPU seconds each analysis of the flow (controllability, invariant measure, first integrals) may take
#: in a report; one that needs more is reported as not computed, with the Python call that computes it.
#: Their results are optional extras: the report's verdicts must not wait for them.
FLOW_BUDGET = 3.0
#: CPU seconds each analysis of the flow may take on Maggi's route, where it is the only way to the block
#: (decided at random points; the 10-trailer's flag, the longest measured, takes about 8 s).
NUMERICAL_FLOW_BUDGET = 12.0
#: How to compute a flow block without a budget (said when the report stops one).
_FLOW_CALLS = {
    "controllability": "anholo.geometry.distribution.flag_of(nh.frame, nh.m)",
    "invariant_measure": "anholo.analysis.invariant_measure.search_invariant_density(nh.field(), budget=None)",
    "first_integrals": "anholo.analysis.first_integrals.first_integrals(nh.field(), budget=None)",
}


_NUMERICAL_CALLS = {
    "controllability": "anholo.geometry.distribution.numerical_flag(m)",
    "invariant_measure": "anholo.analysis.flow_numerical.numerical_invariant_density(m)",
    "first_integrals": "anholo.analysis.flow_integrals.numerical_first_integrals(m)",
}
_CHAPLYGIN_NOTE = ("on Maggi's route the Chaplygin analysis is made for a symmetry of translations of as many "
                   "coordinates as constraints (docs/chaplygin.rst); for this symmetry it is built on the exact "
                   "route's normal forms, and this system takes Maggi's route ({why}); compute it in Python with "
                   "System.load(FILE).chaplygin()")


class _NotApplicable(Exception):
    """A block that does not apply to this system (a result, not a failure)."""


class _Stopped(Exception):
    """An optional analysis stopped at its own CPU-time budget (not a failure: the report says how to
    compute it)."""


class _OverBudget(BaseException):
    """Raised by the timer inside a block that ran past the report's time budget (a BaseException,
    so that no ``except Exception`` inside a computation swallows it)."""


INTERRUPTED = "not computed: interrupted (Ctrl-C)"


@contextmanager
def _deadline(seconds):
    """Interrupt the enclosed computation after ``seconds`` (SIGALRM; only in the main thread and when
    no other interval timer runs — elsewhere the computation is not interrupted)."""
    usable = (seconds is not None and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread()
              and signal.getitimer(signal.ITIMER_REAL)[0] == 0)
    if not usable:
        yield
        return

    def _interrupt(signum, frame):
        raise _OverBudget()

    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class Outcome:
    """One block of a report: the result, or why there is none."""

    key: str
    title: str
    block: object = None
    error: str | None = None
    seconds: float = 0.0
    note: str | None = None  # why the block does not apply (not a failure)
    stopped: str | None = None  # an optional analysis stopped at its CPU budget, and how to compute it

    @property
    def failed(self) -> bool:
        return self.block is None and self.note is None and self.stopped is None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, AnholoError):
        return text or type(exc).__name__
    return f"internal error ({type(exc).__name__}: {text[:300]}); please report it"


class Report:
    """The result of :func:`analyze`: the system's header and its blocks, with three renderings."""

    def __init__(self, system, outcomes: list, presenter: Presenter, constrained: bool, skipped=None):
        self.system = system
        self.skipped = dict(skipped or {})  # block key -> why it does not apply to this system (JSON notes)
        self.outcomes = list(outcomes)
        self.presenter = presenter
        self.constrained = constrained
        self.render_errors: dict = {}  # block key -> why it could not be printed

    @property
    def interrupted(self) -> bool:
        """True if Ctrl-C stopped the report (the blocks before it are complete)."""
        return any(o.error == INTERRUPTED for o in self.outcomes)

    @property
    def complete(self) -> bool:
        """True if every block that applies was computed and printed (no failure, nothing over the budget)."""
        return not any(o.failed for o in self.outcomes) and not self.render_errors

    def _render(self, o, how):
        """``how(block)``, or None after recording why the block could not be rendered."""
        try:
            return how(o.block)
        except (Exception, RecursionError) as exc:
            self.render_errors[o.key] = _one_line(exc)
            return None

    def block(self, key: str):
        """The result object of a block (None if it failed or was not computed)."""
        for o in self.outcomes:
            if o.key == key:
                return o.block
        return None

    @property
    def sections(self) -> dict:
        """The computed blocks by key."""
        return {o.key: o.block for o in self.outcomes if o.block is not None}

    # --- JSON -----------------------------------------------------------------------
    def _header(self) -> dict:
        s = self.system
        return {
            "name": s.name,
            "coordinates": [q.name for q in s.chart.coordinates],
            "velocities": [u.name for u in s.chart.velocities],
            "parameters": [p.name for p in s.chart.parameters],
            "quasi_velocities": [v.name for v in s.bundle.quasi_velocities],
            "lagrangian": (str(to_engine(s.lagrangian.natural_expr())) if getattr(s, "is_large", False)
                           else str(self.presenter.present(self._lagrangian()))),
            **_loads_header(s),
        }

    def _reserved(self) -> set:
        s = self.system
        names = {x.name for x in s.chart.coordinates + s.chart.velocities + s.chart.parameters}
        return names | {v.name for v in s.bundle.quasi_velocities}

    def to_dict(self) -> dict:
        out = self._header()
        p, reserved = self.presenter, self._reserved()
        for o in self.outcomes:
            if o.note is not None:
                out[o.key] = {"note": o.note}
                continue
            if o.stopped is not None:
                out[o.key] = {"not_computed": o.stopped}
                continue
            if o.failed:
                out[o.key] = {"error": o.error}
                continue
            entries = self._render(o, lambda b: {k: serialize(v, reserved=reserved) for k, v in b.payload(p).items()})
            if entries is None:
                out[o.key] = {"error": "could not be written: " + self.render_errors[o.key]}
            else:
                out.update(entries)
        return self._notes(out)

    def _notes(self, out: dict) -> dict:
        for key, why in self.skipped.items():
            out.setdefault(key, {"note": why})
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    # --- text -----------------------------------------------------------------------
    def _wide(self, p: Presenter | None = None) -> Presenter:
        """The presenter for the Lagrangian of the header: what the user wrote is shown up to a larger size; on
        Maggi's route as written, without the refinement of medium-size expressions (on ``n_trailer_10`` it
        cost 0.8 s and shortened nothing: no normal forms on that route)."""
        p = p or self.presenter
        if getattr(self.system, "route", ("exact", ""))[0] != "exact" or getattr(self.system, "is_large", False):
            return replace(p, text_limit=5 * p.text_limit, refine_limit=p.tidy_limit)
        return replace(p, text_limit=5 * p.text_limit)

    def _lagrangian(self):
        """L in the natural velocities as the header shows it: derived through the frame, it can be a long
        nest of the frame's coefficients; when small (at most 3000 tree nodes) it is expanded and tidied,
        and the shorter of the two forms is shown (the user's L, e.g. the carriage's seven terms)."""
        if "_L" not in self.__dict__:
            L = self.system.lagrangian.natural_expr()
            route = getattr(self.system, "route", ("exact", ""))[0]
            if route == "exact" and not getattr(self.system, "is_large", False) and not size_exceeds(L, 3000):
                try:  # a normal form only where it is cheap (on n_trailer_8 it cost 7.8 s): never on Maggi's route
                    with cpu_budget(HEADER_TIDY_BUDGET):
                        short = tidy(sp.expand(L))
                    if sp.count_ops(short) < sp.count_ops(L):
                        L = short
                except OverBudget:
                    pass
            self.__dict__["_L"] = L
        return self.__dict__["_L"]

    def _shared(self) -> Presenter:
        """The report's presenter with a fresh table of named shared subexpressions (``where c1 = …``)."""
        return replace(self.presenter, shared=Shared(Shared.prefix_for(self._reserved())))

    @staticmethod
    def _with_where(lines: list, p: Presenter, indent: str = "  ") -> list:
        """``lines`` with the definitions of the names introduced since the last call (``where c1 = …``)
        inserted under the first line that uses each name (a name used only in another definition: under
        that definition's line)."""
        defs = p.shared.pending()
        if not defs:
            return lines
        word = {name: re.compile(rf"(?<![\w]){re.escape(str(name))}(?![\w])") for name, _ in defs}
        anchor: dict = {}
        for k in reversed(range(len(defs))):
            name = defs[k][0]
            at = next((i for i, line in enumerate(lines) if word[name].search(line)), None)
            if at is None:  # used only by a later definition: printed with it
                at = next((anchor[later[0]] for later in defs[k + 1:] if word[name].search(str(later[1]))),
                          len(lines) - 1)
            anchor[name] = at
        out = []
        for i, line in enumerate(lines):
            out.append(line)
            here = [(n, b) for n, b in defs if anchor[n] == i]
            lead = line[:len(line) - len(line.lstrip())] + indent
            out += [lead + ("where " if k == 0 else "      ") + f"{n} = {b}" for k, (n, b) in enumerate(here)]
        return out

    @staticmethod
    def _where_latex(p: Presenter) -> list:
        defs = p.shared.pending()
        return align((r"\text{where } " if k == 0 else r"\phantom{\text{where }} ")
                     + f"{_latex(name)} &= {_latex(body)}" for k, (name, body) in enumerate(defs))

    def _ordered(self) -> list:
        """Blocks in print order: for a constrained system the free Euler–Lagrange field comes last."""
        if not self.constrained:
            return self.outcomes
        return [o for o in self.outcomes if o.key != "euler_lagrange"] + [
            o for o in self.outcomes if o.key == "euler_lagrange"]

    def _title(self, o: Outcome) -> str:
        if o.key == "euler_lagrange" and self.constrained:
            return "Unconstrained dynamics: Hamel equations and Euler-Lagrange field of the free system"
        return o.title

    def summary_lines(self) -> list:
        out = []
        for o in self.outcomes:
            if o.failed:
                out.append(f"{o.key}: FAILED - {o.error}")
            elif o.note is not None:
                out.append(f"{o.key}: does not apply - {o.note}")
            elif o.stopped is not None:
                out.append(f"{o.key}: not computed - {o.stopped}")
            else:
                out += self._render(o, lambda b: b.summary()) or []
        return out

    def to_text(self) -> str:
        """The report as text: the header, the summary of verdicts, then each block; an expression over the
        size budget is printed over named shared subexpressions defined under its block (``where c1 = …``);
        no line is wider than :data:`TEXT_WIDTH` (longer ones continue, indented, on the next lines)."""
        s, p = self.system, self._shared()
        lines = [s.name, "=" * len(s.name), ""]
        lines.append("Coordinates: " + ", ".join(q.name for q in s.chart.coordinates))
        if s.chart.parameters:
            lines.append("Parameters:  " + ", ".join(x.name for x in s.chart.parameters))
        lines += self._with_where([f"L = {self._wide(p).text(self._lagrangian())}"], p)
        loads = _loads_header(s)
        if "forces" in loads:
            lines.append("Forces:      " + ", ".join(f"Q_{q.name} = {Q}" for q, Q in zip(s.chart.coordinates,
                                                                                         loads["forces"])))
        if "inputs" in loads:
            lines.append("Inputs:      " + ", ".join(loads["inputs"]))
        if "holonomic" in loads:
            lines.append("Holonomic:   " + ", ".join(f"{f} = 0" for f in loads["holonomic"])
                         + " (differentiated into the constraints)")
        summary = self.summary_lines()
        if summary:
            lines += ["", "Summary", "-------"] + [f"  {x}" for x in summary]
        for o in self._ordered():
            title = self._title(o)
            lines += ["", title, "-" * len(title)]
            if o.note is not None:
                lines.append(f"Does not apply: {o.note}")
            elif o.stopped is not None:
                lines.append(f"Not computed: {o.stopped}")
            elif o.failed:
                lines.append(f"FAILED: {o.error}")
            else:
                body = self._render(o, lambda b: b.text_lines(p))
                lines += (self._with_where(body, p) if body is not None
                          else [f"FAILED to print: {self.render_errors[o.key]}"])
        return "\n".join(out for line in _gathered(lines) for out in _wrapped(line)) + "\n"

    def __str__(self):
        return self.to_text()

    # --- LaTeX ----------------------------------------------------------------------
    def to_latex(self) -> str:
        """A LaTeX fragment: ``\\section`` for the system, ``\\subsection`` per block (needs amsmath)."""
        s, p = self.system, self._shared()
        esc = tex_text
        out = [f"% anholo report: {s.name} (a fragment; needs amsmath)", rf"\section{{{esc(s.name)}}}"]
        def names(symbols) -> str:  # one formula per name, so that a long list breaks between names
            return ", ".join(f"${p.latex(x)}$" for x in symbols)

        out.append(f"Coordinates {names(s.chart.coordinates)}"
                   + (f", parameters {names(s.chart.parameters)}" if s.chart.parameters else "") + ".")
        out += [r"\begin{align*}", f"L &= {self._wide(p).latex(self._lagrangian())}", r"\end{align*}"]
        out += self._where_latex(p)
        summary = self.summary_lines()
        if summary:
            out += [r"\subsection{Summary}", r"\begin{itemize}"] + [rf"\item {summary_tex(x)}" for x in summary] + [
                r"\end{itemize}"]
        for o in self._ordered():
            out.append(rf"\subsection{{{_heading_tex(self._title(o))}}}")
            if o.note is not None:
                out.append(rf"Does not apply: {esc(o.note)}")
            elif o.stopped is not None:
                out.append(rf"Not computed: {esc(o.stopped)}")
            elif o.failed:
                out.append(rf"\textbf{{Failed:}} {esc(o.error)}")
            else:
                body = self._render(o, lambda b: b.latex_lines(p))
                out += (_gathered_latex(body) if body is not None
                        else [rf"\textbf{{Failed to print:}} {esc(self.render_errors[o.key])}"])
                out += self._where_latex(p)
        return "\n".join(out) + "\n"

    def _repr_latex_(self):
        return self.to_latex()



#: CPU seconds the header may spend putting the Lagrangian in a short form (else it is shown as derived).
HEADER_TIDY_BUDGET = 1.0

#: Characters per line of the text report; longer lines (an expression under the size budget, or the
#: header's Lagrangian) continue on indented lines, broken between the terms of a sum.
TEXT_WIDTH = 120


_NOTE = r"\[expression with \d+ distinct subexpressions, not printed: [^\]]*\]"
_NOT_PRINTED = re.compile(r"^(\s*)(\S+|" + _NOTE + r") = \[expression with (\d+) distinct subexpressions, "
                          r"not printed: (.*)\]$")


_INLINE = re.compile(r"( =|:) \[expression with (\d+) distinct subexpressions, not printed: ([^\]]*)\]")
_TEX_INLINE = re.compile(r"\\text\{\[expression with (\d+) distinct subexpressions, not printed: ([^\]]*)\]\}")


def _gathered(lines: list) -> list:
    """Consecutive equations ``name = [expression … not printed: how]`` as one line that lists the names,
    their sizes and how to get them (a block of large results reads as one sentence, not a column of
    identical notes)."""
    out, run = [], []

    def flush():
        if run:
            sizes = [int(m.group(3)) for _, m in run]
            span = f"{min(sizes)}" if min(sizes) == max(sizes) else f"{min(sizes)} to {max(sizes)}"
            m = run[0][1]
            names = [x.group(2) if not x.group(2).startswith("[") else f"equation {k + 1}"
                     for k, (_, x) in enumerate(run)]
            out.append(f"{m.group(1)}{', '.join(names)}: not printed ({span} distinct "
                       f"subexpressions{' each' if len(run) > 1 else ''}): {m.group(4)}")
        run.clear()

    joined = []
    for line in lines:  # a note wrapped over lines (a long name or hint) is read whole
        if joined and "[expression with " in joined[-1] and joined[-1].count("[") > joined[-1].count("]"):
            joined[-1] = joined[-1] + " " + line.strip()
        else:
            joined.append(line)
    for line in joined:
        m = _NOT_PRINTED.match(line)
        if not m and "[expression with " in line:  # mentioned in a sentence: said in words
            line = _INLINE.sub(lambda x: (" is not printed here" if x.group(1) == " =" else ": not printed here")
                               + f" ({x.group(2)} distinct subexpressions): {x.group(3)}", line)
        if m and (not run or run[0][1].group(1) == m.group(1)):
            run.append((line, m))
            continue
        flush()
        if m:
            run.append((line, m))
        else:
            out.append(line)
    flush()
    return out


_TEX_NOT_PRINTED = re.compile(r"^(.*?) &= \\text\{\[expression with (\d+) distinct subexpressions, not printed: "
                              r"(.*)\]\}(?: \\\\)?$")


def _gathered_latex(lines: list) -> list:
    """A block's LaTeX with the rows ``lhs &= \\text{[expression … not printed …]}`` taken out of their
    ``align*`` and said in one sentence after it (as :func:`_gathered` does for the text)."""
    out, notes = [], []
    for line in lines:
        m = _TEX_NOT_PRINTED.match(line)
        if m:
            notes.append(m)
            continue
        line = _TEX_INLINE.sub(lambda x: rf"\text{{(not printed here: {x.group(1)} distinct subexpressions; "
                               rf"{x.group(2)})}}", line)
        if line == r"\end{align*}" and out:
            if out[-1] == r"\begin{align*}":
                out.pop()
            else:
                out[-1] = out[-1][:-3] if out[-1].endswith(r" \\") else out[-1]
                out.append(line)
            if notes:
                sizes = [int(n.group(2)) for n in notes]
                span = f"{min(sizes)}" if min(sizes) == max(sizes) else f"{min(sizes)} to {max(sizes)}"
                names = [f"${n.group(1)}$" if "[expression" not in n.group(1) else f"equation {k + 1}"
                         for k, n in enumerate(notes)]  # each its own formula: a line can break between them
                out.append(", ".join(names) + f": not printed ({span} distinct "
                           f"subexpressions{' each' if len(notes) > 1 else ''}): {notes[0].group(3)}.")
                notes = []
            continue
        out.append(line)
    return out


def _cut_at(rest: str, lo: int) -> int:
    """Where to break ``rest`` (longer than :data:`TEXT_WIDTH`): before a `` + ``/`` - `` at the shallowest
    depth of parentheses (the rightmost such in the second half of the line, else any after ``lo``), else
    after the last space, else after the last ``*``, ``/`` or ``(`` (a long product), else at the
    width."""
    width = TEXT_WIDTH
    depth, sums = 0, []
    for i, c in enumerate(rest[:width]):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c in "+-" and i > lo and rest[i - 1] == " " and rest[i + 1:i + 2] == " ":
            sums.append((depth, i - 1))
    for start in (width // 2, lo):
        here = [x for x in sums if x[1] >= start]
        if here:
            shallow = min(d for d, _ in here)
            return max(i for d, i in here if d == shallow)
    cut = rest.rfind(" ", lo, width)
    if cut > lo:
        return cut + 1
    cut = max(rest.rfind(c, lo, width - 1) for c in "*/(")
    return cut + 1 if cut > lo else width


def _wrapped(line: str, cut=None) -> list:
    """``line`` as lines of at most :data:`TEXT_WIDTH` characters, continuation lines indented four spaces
    more than the line: an expression is broken before `` + `` / `` - `` (else at a space or an operator),
    prose between words.  ``cut(rest, lo)``: another rule for where to break (the command line's lists); where
    it finds no place (None), the rest is wrapped by this rule."""
    if len(line) <= TEXT_WIDTH:
        return [line]
    lead = len(line) - len(line.lstrip())
    indent = " " * min(lead + 4, TEXT_WIDTH // 3)
    lo = max(len(indent), TEXT_WIDTH // 3)
    out, rest = [], line
    while len(rest) > TEXT_WIDTH:
        at = (cut or _cut_at)(rest, lo)
        if at is None:
            return out + _wrapped(rest)
        out.append(rest[:at].rstrip())
        rest = indent + rest[at:].lstrip()
    return out + [rest]


def _heading_tex(title: str) -> str:
    """A block's title in LaTeX: text escaped, the distribution D and Gamma_nh set as mathematics."""
    return summary_tex(title)


def _loads_header(system) -> dict:
    """Forces, inputs and holonomic constraints of a system for the JSON header (only those it has)."""
    out = {}
    forces = getattr(system, "forces", None)
    if forces is not None:
        out["forces"] = [str(Q) for Q in forces.total]
        if forces.inputs:
            out["inputs"] = [u.name for u in forces.inputs]
    if getattr(system, "holonomic", ()):
        out["holonomic"] = [str(to_engine(f)) if getattr(system, "is_large", False) else str(f)
                            for f in system.holonomic]
    return out


def _constraint_kind(system) -> str | None:
    """None (no constraints), "linear" (linear or affine in the velocities) or "nonlinear" (Chetaev's
    treatment; also for time-dependent constraints).  A constraint the file cannot state (e.g. one
    without velocities) raises the user error here, before any block."""
    if not system.constraints:
        return None
    if getattr(system, "is_large", False) or getattr(system, "route", ("exact", ""))[0] != "exact":
        # read (and checked) by Maggi's route, without normal forms
        try:
            system.nonholonomic()
            return "linear"
        except NonlinearConstraintError:
            return "nonlinear"  # Chetaev's equations in coordinates (LargeChetaevSummary) check them
    if not getattr(system, "is_time_dependent", False):
        try:
            system.linear_constraints()
            return "linear"
        except NonlinearConstraintError:
            pass
    system.kinematic_constraints()  # reads and checks them (independence on C), as the user wrote them
    return "nonlinear"


def _why_not(key: str, kind: str | None) -> str:
    """Why the block ``key`` does not apply to a system whose constraints are of ``kind`` (a JSON note)."""
    if key == "chetaev":
        if kind is None:
            return "the system has no constraints"
        return ("the constraints are linear (or affine) in the velocities: Chetaev's rule then gives the "
                "Lagrange-d'Alembert equations, in the nonholonomic block")
    if key == "chaplygin" and kind == "linear":
        return ("the system file declares no [symmetry]: give the group's generators to get the Chaplygin "
                "analysis (docs/chaplygin.rst)")
    if kind is None:
        return "the system has no constraints"
    return ("the constraints are not linear in the velocities (or depend on the time): their dynamics is "
            "Chetaev's, in the chetaev block")


def _selected(sections) -> tuple:
    if sections is None:
        return SECTIONS
    chosen = []
    for name in sections:
        key = _ALIASES.get(name.strip(), name.strip())
        if key not in SECTIONS:
            raise ReportError(f"unknown section {name.strip()!r}; the sections are {', '.join(SECTIONS)}.")
        chosen.append(key)
    return tuple(k for k in SECTIONS if k in chosen)


def analyze(system, *, simplify: bool = False, sections=None, full: bool = False,
            budget: float | None = DEFAULT_BUDGET, progress=None) -> Report:
    """The report of a system: its frame and Euler–Lagrange field (Prop. 1 of Crampin & Mestdag (2010));
    with linear constraints the nonholonomic field on C and its multipliers (Prop. 2), the vakonomic
    field (Prop. 3), the consistency verdict (Thm. 2, Cor. 1) and, with a declared symmetry, the
    Chaplygin analysis; with nonlinear constraints Chetaev's equations (docs/theory.rst).

    Parameters
    ----------
    system : System
    simplify : bool
        ``sympy.simplify`` every printed expression (slow).
    sections : iterable of str, optional
        Only these blocks (names in :data:`SECTIONS`); all that apply by default.
    full : bool
        Print every expression whatever its size (text and LaTeX).
    budget : float or None
        Seconds the whole report may take; a block still running then is reported as
        over the budget and the others are skipped likewise.  None: no limit.
    progress : callable, optional
        Called with a short message before each block (e.g. to print progress).

    Raises
    ------
    ReportError
        For an unknown section name.
    AnholoError
        If the constraints cannot be read (before any block is computed).
    """
    wanted = _selected(sections)
    presenter = Presenter(simplify=simplify, full=full)
    kind = _constraint_kind(system)
    applies = {"frame", "euler_lagrange"}
    if kind == "linear":
        applies |= {"nonholonomic", "vakonomic", "consistency", "controllability", "invariant_measure",
                    "first_integrals"}
        if getattr(system, "symmetry", None):
            applies.add("chaplygin")
    elif kind == "nonlinear":
        applies.add("chetaev")
    start = time.monotonic()
    cache: dict = {}

    def nh():
        if "nh" not in cache:
            cache["nh"] = system.nonholonomic()
        return cache["nh"]

    def maggi() -> bool:
        return isinstance(nh(), MaggiSystem)

    def exact_nh():
        """The exact route's problem (the Chaplygin analysis needs it)."""
        if maggi():
            raise _NotApplicable(_CHAPLYGIN_NOTE.format(why=system.route[1]))
        return nh()

    def chaplygin():
        if getattr(system, "forces", None) is not None or getattr(system, "lagrangian_time", None) is not None:
            raise _NotApplicable("the Chaplygin reduction is implemented for time-independent systems without "
                                 "non-potential forces")
        if maggi():
            directions = system._symmetry_directions() if hasattr(system, "_symmetry_directions") else ()
            if not directions or tuple(nh().dependent_coordinates) != tuple(sorted(
                    directions, key=system.chart.coordinates.index)):
                raise _NotApplicable(_CHAPLYGIN_NOTE.format(why=system.route[1]))
            from ..analysis.chaplygin_numerical import translation_chaplygin

            return translation_chaplygin(nh())
        if "chaplygin" not in cache:
            if exact_nh().constraints.is_affine:
                raise _NotApplicable("the constraints are affine (theta^a(u) = b^a(q)): a Chaplygin system has "
                                     "linear constraints whose distribution D is a principal connection "
                                     "(docs/chaplygin.rst); the symmetry still gives the momentum equations "
                                     "and the first integrals")
            from ..analysis.summaries import ChaplyginSummary

            ch = system.chaplygin()
            cache["chaplygin"] = None if ch is None else ChaplyginSummary.of(ch, exact_nh(), system)
        return cache["chaplygin"]

    def affine() -> bool:
        return exact_nh().constraints.is_affine

    def consistency():
        if maggi():
            if nh().is_affine:
                raise _NotApplicable("consistency is decided for linear constraints; these are affine")
            from ..analysis.consistency_numerical import numerical_consistency

            return numerical_consistency(nh())
        extra = ()
        if "chaplygin" in applies:
            try:
                block = chaplygin()
                extra = block.sections if block is not None else ()
            except (AnholoError, _NotApplicable):
                extra = ()
        if affine():
            raise _NotApplicable("consistency is decided for linear constraints; these are affine")
        # each search has its own CPU budget: what one block's search finds does not depend on which blocks
        # ran before it (a search stopped at its budget says so in its verdict)
        from ..analysis.consistency import consistency_report
        from ..analysis.sections import Section
        from ..analysis.summaries import CONSISTENCY_SEARCH_BUDGET

        return consistency_report(nh(), [Section(nh(), s.values, s.name, s.conditions) for s in extra],
                                  search_budget=CONSISTENCY_SEARCH_BUDGET)

    def vakonomic():
        return LargeVakonomicSummary.of(nh()) if maggi() else VakonomicSummary.of(nh())

    def flow(key, compute, numerical):
        """An analysis of the flow: exactly under its CPU budget (:data:`FLOW_BUDGET`), and decided at
        random points from the straight-line program of Γ_nh (Maggi's route) when the exact analysis
        does not finish in it or the system takes Maggi's route."""
        def run():
            if maggi():
                try:
                    with cpu_budget(NUMERICAL_FLOW_BUDGET):
                        return numerical(nh())
                except OverBudget:
                    raise _Stopped(f"not finished within its CPU-time budget of {NUMERICAL_FLOW_BUDGET:g} s; compute it in "
                                   f"Python with m = anholo.system.System.load(FILE).maggi(); {_NUMERICAL_CALLS[key]}") from None
            nh_ = nh()  # derived outside the budget: the field is the report's, not the analysis's
            nh_.field()
            try:
                with cpu_budget(FLOW_BUDGET):
                    return compute(nh_)
            except OverBudget:
                pass
            try:
                with cpu_budget(FLOW_BUDGET):
                    return numerical(system.maggi())
            except (OverBudget, AnholoError):
                raise _Stopped(f"not finished within its CPU-time budget of {FLOW_BUDGET:g} s; compute it in "
                               f"Python with nh = anholo.system.System.load(FILE).nonholonomic(); {_FLOW_CALLS[key]}") from None
        return run

    generators = (system.symmetry or {}).get("generators", ()) if getattr(system, "symmetry", None) else ()

    def flow_summary(name):  # the analyses of the flow, imported when their block is computed
        def get():
            from ..analysis import flow_summaries

            return getattr(flow_summaries, name)
        return get

    def chetaev():
        if getattr(system, "is_large", False):
            return LargeChetaevSummary.of(system)
        from ..analysis.summaries import ChetaevSummary

        return ChetaevSummary.of(system.chetaev(), tuple(system.constraints))

    controllability, measure, integrals = (flow_summary(name) for name in (
        "ControllabilitySummary", "InvariantMeasureSummary", "FirstIntegralsSummary"))

    builders = {
        "frame": lambda: FrameSummary(system.frame, tuple(system.bundle.quasi_velocities)),
        "euler_lagrange": lambda: LargeEulerLagrangeSummary.of(system.free_maggi(), constrained=kind is not None)
        if getattr(system, "is_large", False) or (kind == "linear" and maggi()) else EulerLagrangeSummary.of(system.lagrangian, constrained=kind is not None,
                                                          forces=getattr(system, "forces", None),
                                                          time=getattr(system, "lagrangian_time", None)),
        "nonholonomic": lambda: (MaggiSummary.of(nh(), tuple(system.constraints), system.route[1]) if maggi()
                                 else NonholonomicSummary.of(nh(), tuple(system.constraints))),
        "vakonomic": vakonomic,
        "consistency": consistency,
        "chaplygin": chaplygin,
        "chetaev": chetaev,
        "controllability": flow("controllability", lambda nh_: controllability().of(nh_),
                                lambda m: controllability().of_maggi(m)),
        "invariant_measure": flow("invariant_measure", lambda nh_: measure().of(nh_),
                                  lambda m: measure().of_maggi(m)),
        "first_integrals": flow("first_integrals", lambda nh_: integrals().of(nh_, generators=generators),
                                lambda m: integrals().of_maggi(m, generators=generators)),
    }
    titles = TITLES
    outcomes = []
    for key in wanted:
        if key not in applies:
            continue
        if progress is not None:
            progress(f"{titles[key]}")
        t0 = time.monotonic()
        left = None if budget is None else budget - (t0 - start)
        if left is not None and left <= 0:
            outcomes.append(Outcome(key, titles[key], error=f"not computed: the time budget of {budget:g} s "
                                    "was used up by earlier sections (raise it with --budget SECONDS)"))
            continue
        try:
            with _deadline(left):
                block = builders[key]()
        except KeyboardInterrupt:  # Ctrl-C: the blocks computed so far are the report, the rest is said so
            outcomes.append(Outcome(key, titles[key], seconds=time.monotonic() - t0, error=INTERRUPTED))
            outcomes += [Outcome(k, titles[k], error=INTERRUPTED) for k in wanted[wanted.index(key) + 1:]
                         if k in applies]
            break
        except _NotApplicable as exc:
            outcomes.append(Outcome(key, titles[key], note=str(exc)))
            continue
        except _Stopped as exc:
            outcomes.append(Outcome(key, titles[key], seconds=time.monotonic() - t0, stopped=str(exc)))
            continue
        except _OverBudget:
            outcomes.append(Outcome(key, titles[key], seconds=time.monotonic() - t0,
                                    error=f"not finished within the time budget of {budget:g} s "
                                    "(raise it with --budget SECONDS, or use the Python API)"))
            continue
        except RecursionError:
            outcomes.append(Outcome(key, titles[key], seconds=time.monotonic() - t0,
                                    error="the expressions are too deeply nested to process"))
            continue
        except Exception as exc:  # a block's failure is reported in its place; the others go on
            outcomes.append(Outcome(key, titles[key], seconds=time.monotonic() - t0, error=_one_line(exc)))
            continue
        if block is None:
            continue
        outcomes.append(Outcome(key, titles[key], block, seconds=time.monotonic() - t0))
    return Report(system, outcomes, presenter, constrained=kind is not None,
                  skipped={key: _why_not(key, kind) for key in wanted if key not in applies})

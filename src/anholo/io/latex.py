"""A compilable LaTeX document from a report (``anholo analyze --latex --standalone``).

:meth:`anholo.io.report.Report.to_latex` gives a fragment (``\\section`` for the system,
``\\subsection`` per block, ``align*`` for the equations; it needs amsmath) to
``\\input`` into a paper.  :func:`latex_document` wraps it into an article that
compiles as it is with pdflatex: amsmath, amssymb, geometry, and ``breqn`` for the
equations too long for a line — every ``align*`` block with a row longer than
``width`` characters of LaTeX is set as a ``dgroup*`` of ``dmath*`` rows, which
breqn breaks over several lines (Downes & Robertson, the breqn package).
"""

from __future__ import annotations

import re

from ..algebra.printing import tex_text

__all__ = ["latex_document", "break_long_equations", "summary_tex", "PREAMBLE"]

#: Packages the document uses (all in TeX Live's latex-base / latex-recommended / latex-extra).  Latin Modern
#: with T1 where it is installed, else Computer Modern in its own encoding: outline fonts either way (T1
#: without cm-super or lmodern gives bitmap fonts, and text that PDF readers cannot extract).
PREAMBLE = r"""\documentclass[11pt]{article}
\IfFileExists{lmodern.sty}{\usepackage{lmodern}\usepackage[T1]{fontenc}}{}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{breqn}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5ex}
\setlength{\emergencystretch}{3em}
"""

_NOTE = re.compile(r"\\text\{(\[.*\])\}")
_ALIGN = re.compile(r"\\begin\{align\*\}\n(.*?)\n\\end\{align\*\}", re.S)


def _visible(row: str) -> int:
    """A rough width of a row of LaTeX in glyphs: spacing, grouping and ``\\left``/``\\right`` dropped, each
    other command (``\\theta``, ``\\sin``) counted as two; a budget note counts as its text."""
    row = re.sub(r"\\(left|right|big|Big|frac|dot|ddot|mathrm|text)\b|[{}\s&]|\\,", "", row)
    return len(re.sub(r"\\[A-Za-z]+", "..", row))


_PAGE = 900  # glyphs of an equation that breqn can still set on one page (it cannot break across pages)


def _group_end(tex: str, start: int) -> int:
    """The index after the brace group that opens at ``tex[start] == "{"``."""
    depth = 0
    for i in range(start, len(tex)):
        depth += {"{": 1, "}": -1}.get(tex[i], 0)
        if depth == 0:
            return i + 1
    return len(tex)


def _top_terms(tex: str) -> list:
    """``tex`` split before its top-level `` + `` and `` - `` (outside braces and ``\\left``/``\\right``)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(tex):
        if tex.startswith(r"\left", i) and not tex.startswith(r"\leftarrow", i):
            depth, i = depth + 1, i + 5
            continue
        if tex.startswith(r"\right", i) and not tex.startswith(r"\rightarrow", i):
            depth, i = depth - 1, i + 6
            continue
        c = tex[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c in "+-" and 0 < i < len(tex) - 1 and tex[i - 1] == " " and tex[i + 1] == " ":
            parts.append(tex[start:i].strip())
            start = i
        i += 1
    parts.append(tex[start:].strip())
    return [x for x in parts if x]


_TERM = 72  # glyphs of one term that breqn cannot break (inside \\left( … \\right)): cut it open


def _segments(term: str) -> list:
    """``term`` as ``[(text, None) | (None, (inner, kind))]``: the text outside its top-level
    ``\\left( … \\right)`` groups, square roots ``\\sqrt{…}`` and long quotients ``\\frac{A}{B}`` (outside
    every brace group), and the insides of those (kind ``"("``, ``"sqrt"``, or ``"inv"`` for the ``B`` of a
    quotient, whose ``A`` is a group of its own or text), in order."""
    out, depth, i, start, opened = [], 0, 0, 0, None
    while i < len(term):
        if term.startswith(r"\left", i) and not term.startswith(r"\leftarrow", i):
            if depth == 0 and term.startswith(r"\left(", i):
                out.append((term[start:i], None))
                opened = i + len(r"\left(")
            depth, i = depth + 1, i + 5
            continue
        if term.startswith(r"\right", i) and not term.startswith(r"\rightarrow", i):
            depth -= 1
            if depth == 0 and opened is not None:
                if term.startswith(r"\right)", i):
                    out.append((None, (term[opened:i], "(")))
                    start, i, opened = i + len(r"\right)"), i + len(r"\right)"), None
                    continue
                start, opened = start, None  # another delimiter: the group stays text
            i += 6
            continue
        if depth == 0 and opened is None and term.startswith(r"\frac{", i):  # a long quotient: A (B)^{-1}
            mid = _group_end(term, i + len(r"\frac"))
            end = _group_end(term, mid)
            num, den = term[i + len(r"\frac{"):mid - 1], term[mid + 1:end - 1]
            if _visible(num) + _visible(den) > _TERM:
                out.append((term[start:i], None))
                if num.strip() != "1":
                    out.append((None, (num, "(")) if _visible(num) > _TERM // 2 else (num + " ", None))
                out.append((None, (den, "inv")))
                start = i = end
                continue
        if depth == 0 and opened is None and term.startswith(r"\sqrt{", i):  # a root: its radicand, as a group
            end = _group_end(term, i + len(r"\sqrt"))
            out.append((term[start:i], None))
            out.append((None, (term[i + len(r"\sqrt{"):end - 1], "sqrt")))
            start = i = end
            continue
        if opened is None:
            depth += {"{": 1, "}": -1}.get(term[i], 0)
        i += 1
    out.append((term[start:], None))
    return out


def _pieces(tex: str) -> list:
    """``tex`` as consecutive pieces that breqn can set: its top-level terms, and a term too long to set on
    a line cut open at each of its long ``\\left( … \\right)`` groups (written ``\\Bigl( … \\Bigr)``,
    which need not close in the same row; a long root ``\\sqrt{X}`` as ``\\Bigl( X \\Bigr)^{1/2}``, a long
    quotient ``\\frac{A}{B}`` as ``A \\Bigl( B \\Bigr)^{-1}``),
    recursively.  Joined with spaces, the pieces are ``tex``."""
    out = []
    for term in _top_terms(tex):
        if _visible(term) <= _TERM:
            out.append(term)
            continue
        current = ""
        for text, inner in _segments(term):
            if inner is None:
                current += text
                continue
            inner, kind = inner
            if _visible(inner) <= _TERM // 2:
                current += {"(": r"\left(" + inner + r"\right)", "sqrt": r"\sqrt{" + inner + "}",
                            "inv": r"\left(" + inner + r"\right)^{-1}"}[kind]
                continue
            inside = _pieces(inner)
            if _visible(current) > _TERM // 2:  # a long factor before the group: a row of its own
                out.append(current.strip())
                current = ""
            out.append(f"{current} \\Bigl( {inside[0]}".strip())
            out.extend(inside[1:])
            out[-1] += {"(": r" \Bigr)", "sqrt": r" \Bigr)^{1/2}", "inv": r" \Bigr)^{-1}"}[kind]
            current = ""
        if current.strip():
            out.append(current.strip())
    return out


def _over_a_page(lhs: str, rhs: str) -> list:
    """An equation too long for one line as several ``dmath*``: its pieces (:func:`_pieces`) gathered into
    rows of at most a page each (at most a line where a row is inside a group cut open)."""
    chunks, current = [], []
    for piece in _pieces(rhs):
        row = " ".join(current + [piece])
        limit = _TERM if ("Bigl" in row or "Bigr" in row) else _PAGE  # breqn breaks no line inside \Bigl( … \Bigr)
        if current and _visible(row) > limit:
            chunks.append(" ".join(current))
            current = []
        current.append(piece)
    chunks.append(" ".join(current))
    out = []
    for k, chunk in enumerate(chunks):
        text = (f"{lhs} = " if k == 0 else r"\quad ") + chunk
        out += [r"\begin{dmath*}", text, r"\end{dmath*}"]
    return out


def summary_tex(line: str) -> str:
    """A verdict line of the report's summary in LaTeX text (:func:`~anholo.algebra.printing.tex_text`: the
    symbols ``R^k_ij``, ``sigma``, ``Gamma_nh``, the distribution ``D``, ... set as mathematics)."""
    return tex_text(line)


def _side(x: str) -> str:
    note = _NOTE.fullmatch(x)
    return r"\textit{" + note.group(1) + "}" if note else f"${x}$"


def break_long_equations(fragment: str, width: int = 90) -> str:
    """``align*`` blocks with a row wider than ``width`` become ``dgroup*`` blocks of ``dmath*`` (breqn),
    which break long right-hand sides over lines; short blocks are kept as they are."""

    def replace(match):
        rows = [r.strip() for r in re.split(r"\s*\\\\\s*\n", match.group(1)) if r.strip()]
        sides = [r.partition("&=") for r in rows]
        # align* sets the widest left side next to the widest right side: that sum must fit; breqn's dgroup*
        # too, but it breaks a right side between its terms: the widest left side and the widest term must fit
        lhs = max((_visible(a) for a, sep, _ in sides if sep), default=0)
        if all(_visible(r) <= width for r in rows) and lhs + max(
                (_visible(b) for _, sep, b in sides if sep), default=0) <= width:
            return match.group(0)
        aligned = lhs + max((_visible(t) for _, sep, b in sides if sep for t in _top_terms(b.strip())), default=0)
        out, group = [], []

        def flush():  # rows aligned on their = where the widest sides fit side by side, else each on its own
            if group:
                out.extend([r"\begin{dgroup*}"] + group + [r"\end{dgroup*}"] if aligned <= width else group)
                group.clear()

        for row in rows:
            lhs, sep, rhs = (x.strip() for x in row.partition("&="))
            if not sep:
                lhs, rhs = row.replace("&", ""), None
            if _NOTE.fullmatch(lhs) or (rhs is not None and _NOTE.fullmatch(rhs)):
                flush()  # an expression over the size budget: its note is text, set as a paragraph
                out.append(r"\par\noindent " + " $=$ ".join(_side(x) for x in (lhs, rhs) if x is not None) + r"\par")
                continue
            if rhs is not None and (_visible(rhs) > _PAGE or any(_visible(t) > _TERM for t in _top_terms(rhs))):
                group += _over_a_page(lhs, rhs)
                continue
            group += [r"\begin{dmath*}", f"{lhs} = {rhs}" if rhs is not None else lhs, r"\end{dmath*}"]
        flush()
        return "\n".join(out)

    return _ALIGN.sub(replace, fragment)


def latex_document(report, title: str | None = None, width: int = 90) -> str:
    """A complete LaTeX document (see the module docstring) of a report, or of a fragment given as a string."""
    fragment = report if isinstance(report, str) else report.to_latex()
    name = title or (getattr(getattr(report, "system", None), "name", None) or "anholo report")
    body = _HEADING_BEFORE_GROUP.sub(r"\1\\leavevmode\n\2", break_long_equations(fragment, width))
    return (PREAMBLE + rf"\title{{{tex_text(name)}}}" + "\n" + r"\begin{document}" + "\n"
            + body + r"\end{document}" + "\n")


#: A run-in heading (``\paragraph``) on a line of its own before a breqn group: breqn's display does not
#: start the paragraph that would set the heading, so the heading was lost; ``\leavevmode`` starts it.
_HEADING_BEFORE_GROUP = re.compile(r"^(\\paragraph\{[^\n]*\})[ \t]*\n(\\begin\{(?:dgroup|dmath)\*\})", re.M)

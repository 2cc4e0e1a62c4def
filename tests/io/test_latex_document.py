"""The LaTeX report: a sectioned fragment with every block of the text report, and a standalone document
that pdflatex compiles.

Oracles: the text report of the same system (its block titles), and the LaTeX engine itself (pdflatex
from TeX Live, when installed: no error, and no line wider than the page).
"""

import re
import shutil
import subprocess

import pytest
import sympy as sp

from anholo import cli
from anholo.algebra.printing import combination_latex, dotted, latex
from anholo.io.latex import break_long_equations, latex_document
from anholo.io.report import analyze
from anholo.system import System


@pytest.fixture(scope="module")
def sleigh_report():
    return analyze(System.load("chaplygin_sleigh"))


def test_fragment_has_a_subsection_per_text_block(sleigh_report):
    text, tex = sleigh_report.to_text(), sleigh_report.to_latex()
    titles = [lines[i - 1] for lines in [text.splitlines()] for i, l in enumerate(lines)
              if l and set(l) == {"-"} and i > 0]
    assert titles and all(t != "Summary" or r"\subsection{Summary}" in tex for t in titles)
    subsections = re.findall(r"\\subsection\{(.*?)\}\n", tex)
    assert len(subsections) == len(titles)
    assert tex.count(r"\section{") == 1


def test_dotted_names_put_the_accent_on_the_letter():
    assert dotted(sp.Symbol("psi1"), 2) == r"\ddot{\psi}_{1}"
    assert dotted(sp.Symbol("lambda1")) == r"\dot{\lambda}_{1}"
    assert latex(sp.Symbol("theta_dot")) == r"\dot{\theta}"


def test_frame_latex_has_no_unit_coefficients_or_plus_minus():
    frame = System.load("two_wheeled_carriage").frame
    tex = frame.as_latex()
    assert r"1\," not in tex and "+ -" not in tex
    x, y = sp.symbols("x y")
    assert combination_latex([(-y, latex(-y), "a"), (x, "x", "b")]) == r"-y\,a + x\,b"


def test_long_rows_become_breqn_groups():
    row = " + ".join(f"a_{{{k}}} \\sin{{\\left(\\theta \\right)}}" for k in range(60))
    frag = "\\begin{align*}\nx &= " + row + " \\\\\ny &= 1\n\\end{align*}\n"
    out = break_long_equations(frag)
    assert out.count(r"\begin{dmath*}") == 2 and "&=" not in out
    short = "\\begin{align*}\nx &= 1\n\\end{align*}\n"
    assert break_long_equations(short) == short


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no LaTeX engine installed (texlive-latex-base)")
@pytest.mark.parametrize("example", ["chaplygin_sleigh", "nonholonomic_particle"])
def test_standalone_document_compiles(tmp_path, example, capsys):
    assert cli.main(["analyze", example, "--latex", "--standalone", "--quiet"]) == 0
    (tmp_path / "r.tex").write_text(capsys.readouterr().out)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "r.log").read_text(errors="replace")
    assert run.returncode == 0, log[-2000:]
    assert (tmp_path / "r.pdf").read_bytes()[:4] == b"%PDF"
    assert "Overfull \\hbox" not in log


def test_standalone_needs_latex(capsys):
    assert cli.main(["analyze", "chaplygin_sleigh", "--standalone"]) == 2
    assert "use it with --latex" in capsys.readouterr().err


def test_objects_met_in_jupyter_render_themselves():
    """Every result a user meets has a rich display; the LaTeX ones mention what they display."""
    from anholo.analysis.comparison import compare_methods
    from anholo.numerics import compile_system, from_system, simulate

    s = System.load("chaplygin_sleigh")
    latex_objects = [s, s.nonholonomic(), s.kinematic_constraints(), s.chetaev(), s.frame, s.lagrangian,
                     s.nonholonomic().field(), s.linear_constraints()]
    for obj in latex_objects:
        tex = obj._repr_latex_()
        assert tex.startswith("$") and tex.endswith("$"), type(obj).__name__
    assert r"\dot{\theta}" in s._repr_latex_() and r"\partial_{x}" in s._repr_latex_()
    assert "<pre>" in compare_methods(s.lagrangian, s.kinematic_constraints())._repr_html_()
    traj = simulate(compile_system(from_system(s, "nonholonomic")), 1.0, [0, 0, 0], [1, 0, 0], points=3)
    assert "<table>" in traj._repr_html_() and "energy drift" in traj._repr_html_()


def test_an_equation_longer_than_a_page_is_split_at_its_top_level_sum():
    terms = " + ".join(f"a_{{{k}}} \\left(x + \\frac{{y}}{{2}}\\right)^{{2}}" for k in range(300))
    frag = "\\begin{align*}\nL &= \\frac{1}{8 c^{2}} \\left(" + terms + "\\right)\n\\end{align*}\n"
    out = break_long_equations(frag)
    assert out.count(r"\begin{dmath*}") > 3
    assert out.count(r"\Bigl(") == 1 and out.count(r"\Bigr)") == 1
    assert out.count(r"\left(") == out.count(r"\right)") == 300  # no \left( ... \right) pair was cut
    for piece in re.findall(r"\\begin\{dmath\*\}\n(.*?)\n\\end\{dmath\*\}", out, re.S):
        assert piece.count("{") == piece.count("}")


def test_summary_lines_set_their_symbols_as_mathematics():
    from anholo.io.latex import summary_tex

    assert summary_tex("frame: anholonomic (4 nonzero R^k_ij, i < j)") == \
        r"frame: anholonomic (4 nonzero $R^{k}_{ij}$, $i < j$)"
    assert summary_tex("section sigma = -p; σ = 0") == r"section $\sigma = -p$; $\sigma = 0$"
    assert summary_tex("Controllability of D (growth vector)") == r"Controllability of $D$ (growth vector)"


def test_names_of_several_letters_are_upright_symbols_with_the_accent_on_the_name():
    """Oracle: the LaTeX written here by hand (ISO 80000-2: a name of several letters is set upright)."""
    from anholo.algebra.printing import symbol_tex

    lean, lean_dot, rear = sp.symbols("lean lean_dot rear_wheel_dot")
    assert latex(sp.sin(lean) * lean_dot) == r"\dot{\mathrm{lean}}\,\sin{\left(\mathrm{lean} \right)}"
    # words side by side would read as one word: products of them get thin spaces, products of letters none
    spin_dot, m, x = sp.symbols("spin_dot m x")
    assert latex(lean_dot * spin_dot) == r"\dot{\mathrm{lean}}\,\dot{\mathrm{spin}}"
    assert latex(2 * m * x) == "2 m x"
    assert latex(rear) == r"\dot{\mathrm{rear}}_{\mathrm{wheel}}"
    assert dotted(lean, 2) == r"\ddot{\mathrm{lean}}"
    # letters, indices and Greek names as sympy writes them
    assert [symbol_tex(n) for n in ("x", "m0", "psi1_dot", "Ifork11", "alpha_bar")] == \
        ["x", "m_{0}", r"\dot{\psi}_{1}", r"\mathrm{Ifork}_{11}", r"\bar{\alpha}"]
    tex = System.load("rolling_disk").frame.as_latex()
    assert r"\partial_{\mathrm{yaw}}" in tex and "{yaw}" not in tex.replace(r"\mathrm{yaw}", "")


def test_long_terms_are_cut_open_at_their_groups_and_nothing_is_lost():
    """A term breqn could not break (a long product, root or quotient) becomes pieces: the parentheses it
    opens are closed in order, every symbol of the expression appears in the pieces exactly as often as in
    the expression, and no piece is much longer than a line.  Oracle: sympy's LaTeX printer of the same
    expression (independent of the cutting)."""
    from anholo.io.latex import _TERM, _pieces, _visible

    a, b, c, x, y = sp.symbols("alpha beta gamma x y")
    long_sum = sum(sp.Symbol(f"p{i}") * sp.sin(x + i) for i in range(1, 25))
    exprs = [a * (long_sum + 1) * (long_sum - y), sp.sqrt(long_sum + b), (long_sum + c) / (long_sum * y + 3)]
    for e in exprs:
        tex = sp.latex(e)
        pieces = _pieces(tex)
        joined = " ".join(pieces)
        assert len(pieces) > 3
        assert joined.count(r"\Bigl(") == joined.count(r"\Bigr)")  # opened and closed in order
        depth = 0
        for piece in pieces:
            depth += piece.count(r"\Bigl(") - piece.count(r"\Bigr)")
            assert depth >= 0
        for name in ["alpha", "beta", "gamma", "y"] + [f"p_{{{i}}}" for i in range(1, 25)]:
            assert joined.count(name) == tex.count(name), name
        assert max(_visible(p) for p in pieces) <= 2 * _TERM
    # a short expression is left alone
    assert _pieces(sp.latex(a + b)) == [r"\alpha", r"+ \beta"]


_LATEX = shutil.which("pdflatex")
_PDFTOTEXT = shutil.which("pdftotext")
#: Points by which a line of the catalogue's documents may run into the margin (TeX's overfull boxes).  The
#: catalogue's widest is 4.2 pt (the Routh sphere's Hamel equations, a piece of a cut-open group); the
#: rolling disk's constrained Hamel equations were 46 pt (an align* sets its widest left side next to its
#: widest right side), n_trailer_3's list of expressions not printed 112 pt.
OVERFULL_PT = 10.0


def _compile(tex: str, tmp_path) -> tuple:
    (tmp_path / "r.tex").write_text(tex)
    run = subprocess.run([_LATEX, "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:]
    return run.stdout, tmp_path / "r.pdf"


def _pdf_text(pdf) -> str:
    """The PDF's text (pdftotext), normalised: compatibility forms (ligatures), quotes, and no spaces or
    dashes (line breaks and hyphenation differ from the source)."""
    text = subprocess.run([_PDFTOTEXT, str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return _normalised(text)


def _normalised(text: str) -> str:
    import unicodedata

    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    return re.sub(r"[\s\-\u2013\u2014]", "", text)


_HEADING = re.compile(r"\\(?:section|subsection|paragraph)\*?\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")


def _heading_words(tex: str) -> list:
    """The text of every heading (``\\section``, ``\\subsection``, ``\\paragraph``) outside its formulas."""
    out = []
    for m in _HEADING.finditer(tex):
        for piece in re.split(r"\$[^$]*\$", m.group(1)):
            piece = re.sub(r"\\[A-Za-z]+|[{}~]", "", piece.replace("--", "\u2013")).strip(" ,.;:()")
            if re.search(r"[A-Za-z]{2}", piece):
                out.append(piece)
    return out


@pytest.mark.skipif(_LATEX is None or _PDFTOTEXT is None, reason="no pdflatex or pdftotext on this machine")
def test_a_heading_before_a_breqn_group_is_typeset(tmp_path):
    """A run-in heading (\\paragraph) on its own line before a dgroup* was lost (breqn's display does not
    start the paragraph that sets it).  Oracle: the text of the PDF that pdflatex makes."""
    row = " + ".join(f"a_{{{k}}} \\sin{{\\left(\\theta \\right)}}" for k in range(40))
    frag = ("\\paragraph{Nonholonomic field and multipliers}\n\\begin{align*}\nx &= " + row
            + " \\\\\ny &= 1\n\\end{align*}\n\\paragraph{Hamel's equations}\n\\begin{align*}\nz &= " + row
            + "\n\\end{align*}\n")
    doc = latex_document(frag, title="t")
    assert doc.count(r"\begin{dgroup*}") == 2
    _, pdf = _compile(doc, tmp_path)
    text = _pdf_text(pdf)
    assert all(_normalised(h) in text for h in ("Nonholonomic field and multipliers", "Hamel's equations"))


def _catalogue():
    from anholo.examples import example_names

    return sorted(set(example_names()) | {"n_trailer_3"})


@pytest.mark.slow
@pytest.mark.skipif(_LATEX is None, reason="no pdflatex on this machine")
@pytest.mark.parametrize("name", _catalogue())
def test_every_example_compiles_into_pages_that_show_every_heading(name, tmp_path):
    """``anholo analyze NAME --latex --standalone`` for the whole catalogue.  Oracles: pdflatex (no error),
    TeX's own measurement of every line (no overfull box wider than OVERFULL_PT, none running off the bottom
    of a page), and the PDF's text (pdftotext): every heading of the document is on its pages."""
    tex = latex_document(analyze(System.load(name)))
    log, pdf = _compile(tex, tmp_path)
    widths = [float(w) for w in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)]
    assert max(widths, default=0) <= OVERFULL_PT, sorted(widths)[-3:]
    assert "Overfull \\vbox" not in log  # nothing runs off the bottom of a page
    if _PDFTOTEXT is not None:
        text = _pdf_text(pdf)
        headings = _heading_words(tex)
        assert headings and not [h for h in headings if _normalised(h) not in text]


@pytest.mark.skipif(_LATEX is None, reason="no LaTeX engine installed (texlive-latex-base)")
def test_sentences_with_a_call_to_run_fit_the_page(tmp_path):
    """The hints that name a Python call (a budgeted search that stopped) are set as code, whose spaces do not
    stretch: a justified line ending inside the call ran 35 pt into the margin (seen when CI's loaded machine
    stopped the first-integrals search).  Every such sentence the reports can print, each its own paragraph
    and inside a longer one, compiles without an overfull line."""
    from anholo.algebra.printing import tex_text
    from anholo.analysis.flow_summaries import _INTEGRALS_STOPPED, _STOPPED
    from anholo.io.latex import PREAMBLE

    sentences = [_INTEGRALS_STOPPED, "Searched: exp(c_A q^A) det(g)^k" + _STOPPED,
                 "The −p + c search was stopped at its budget of 3 s of CPU time; run "
                 "anholo.analysis.section_search.search_sections(system, degree=1, budget=None) in Python to "
                 "complete it."]
    body = "\n\n".join(tex_text(s) for s in sentences)
    log, pdf = _compile(PREAMBLE + "\\begin{document}\n" + body + "\n\\end{document}\n", tmp_path)
    widths = [float(w) for w in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)]
    assert max(widths, default=0.0) <= 1.0, widths
    if _PDFTOTEXT:
        # the whole call is on the page (pdftotext reads the typewriter underscore as a space)
        assert "anholo.analysis.firstintegrals.firstintegrals(field,budget=None)" in _pdf_text(pdf).replace("_", "")

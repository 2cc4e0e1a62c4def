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


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no LaTeX engine installed (texlive-latex-base)")
def test_carriage_document_fits_its_pages(tmp_path, capsys):
    """The two-wheeled carriage (Crampin & Mestdag (2010), Sect. 7.2): a Lagrangian over a page long."""
    assert cli.main(["analyze", "two_wheeled_carriage", "--latex", "--standalone", "--quiet"]) == 0
    (tmp_path / "r.tex").write_text(capsys.readouterr().out)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    log = (tmp_path / "r.log").read_text(errors="replace")
    assert run.returncode == 0, log[-2000:]
    assert "Overfull \\vbox" not in log  # nothing runs off the bottom of a page


def test_summary_lines_set_their_symbols_as_mathematics():
    from anholo.io.latex import summary_tex

    assert summary_tex("frame: anholonomic (4 nonzero R^k_ij, i < j)") == \
        r"frame: anholonomic (4 nonzero $R^k_{ij}$, $i < j$)"
    assert summary_tex("section sigma = -p; σ = 0") == r"section $\sigma$ = -p; $\sigma$ = 0"


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


@pytest.mark.slow
@pytest.mark.skipif(_LATEX is None, reason="no pdflatex on this machine")
@pytest.mark.parametrize("name", ["rattleback", "routh_sphere", "chaplygin_ball", "whipple_bicycle_pitch_rate"])
def test_large_reports_compile_without_lines_wider_than_a_page(name, tmp_path):
    """Oracle: pdflatex, and TeX's own measurement of every line (an overfull box wider than 300 pt is a row
    that runs a column off the page)."""
    (tmp_path / "r.tex").write_text(latex_document(analyze(System.load(name))))
    run = subprocess.run([_LATEX, "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:]
    widths = [float(w) for w in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", run.stdout)]
    assert max(widths, default=0) < 300, sorted(widths)[-3:]

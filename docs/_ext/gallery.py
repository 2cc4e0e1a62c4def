"""``.. gallery-script:: FILE.py`` — run a gallery script during the build and show it.

The directive puts on the page, in this order: the script's module docstring
(parsed as reStructuredText: the mathematics of the example), the figures the
script saves, what it prints, and its code (without the docstring) with a
download link.  For HTML builds the script is executed, as
``python FILE.py OUTDIR``, in this process; the figures it writes to ``OUTDIR``
(a directory in the build tree, never in the sources) are included.  A script
that raises fails the build.  Other builders (doctest, linkcheck, …) show the
docstring and the code only; ``tests/test_gallery.py`` runs the scripts and
checks what they claim.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import runpy
import shutil
import sys
import time
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

FIGURE_SUFFIXES = (".png", ".svg")
_BUILD = {"run_scripts": False}  # set when the builder is known (builder-inited)


def split_docstring(source: str) -> tuple[str, str]:
    """``(docstring, code after it)`` of a script's source."""
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=True) or ""
    if doc and tree.body and isinstance(tree.body[0], ast.Expr):
        rest = source.splitlines()[tree.body[0].end_lineno:]
        return doc, "\n".join(rest).strip("\n") + "\n"
    return doc, source


def run_script(script: Path, outdir: Path) -> tuple[str, list[Path], float]:
    """Run ``script`` as ``__main__`` with ``sys.argv = [script, outdir]``; its stdout, figures and run time."""
    if outdir.exists():
        shutil.rmtree(outdir)
    outdir.mkdir(parents=True)
    argv, buf = sys.argv, io.StringIO()
    start = time.perf_counter()
    try:
        sys.argv = [str(script), str(outdir)]
        with contextlib.redirect_stdout(buf):
            runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    elapsed = time.perf_counter() - start
    figures = sorted(p for p in outdir.iterdir() if p.suffix in FIGURE_SUFFIXES)
    return buf.getvalue(), figures, elapsed


class GalleryScript(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        rel, script = self.env.relfn2path(self.arguments[0], self.env.docname)
        script = Path(script)
        self.env.note_dependency(rel)
        doc, code = split_docstring(script.read_text(encoding="utf-8"))
        out: list[nodes.Node] = []
        if doc:
            container = nodes.container()
            self.state.nested_parse(StringList(doc.splitlines(), source=str(script)), self.content_offset, container)
            out += container.children
        if _BUILD["run_scripts"]:
            outdir = Path(self.env.doctreedir) / "gallery_figures" / script.stem
            try:
                stdout, figures, elapsed = run_script(script, outdir)
            except Exception as exc:  # the build must fail, with the script's error
                raise self.error(f"gallery script {script.name} failed: {type(exc).__name__}: {exc}") from exc
            logger.info(f"gallery: {script.name} ran in {elapsed:.1f} s")
            if not figures:
                raise self.error(f"gallery script {script.name} saved no figure in the output directory.")
            docdir = Path(self.env.srcdir, self.env.docname).parent
            for fig in figures:
                uri = os.path.relpath(fig, docdir).replace(os.sep, "/")
                out.append(nodes.image(uri=uri, alt=f"{script.stem}: {fig.stem}", width="100%"))
            if stdout.strip():
                out.append(nodes.rubric(text="Output"))
                out.append(nodes.literal_block(stdout, stdout, language="text"))
        out.append(nodes.rubric(text="Code"))
        block = nodes.literal_block(code, code, language="python")
        block["source"] = str(script)
        out.append(block)
        para = nodes.paragraph()
        self.state.nested_parse(
            StringList([f"Download the script: :download:`{script.name} <{self.arguments[0]}>` "
                        f"(run it as ``python {script.name} [OUTDIR]``)."]),
            self.content_offset, para)
        out += para.children
        return out


def _builder_inited(app):
    _BUILD["run_scripts"] = app.builder.format == "html"


def setup(app):
    app.add_directive("gallery-script", GalleryScript)
    app.connect("builder-inited", _builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

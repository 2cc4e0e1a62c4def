"""The research notebook runs top to bottom and uses rich display: its results come out as LaTeX
(``text/latex``, the objects' ``_repr_latex_`` and sympy's printer with dotted velocities), not only as text."""

import os
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "research_notebook.ipynb"


@pytest.mark.slow
def test_research_notebook_executes_with_latex_outputs():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {"PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel imports this checkout's anholo
    try:
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    latex = [o["data"]["text/latex"] for o in outputs if "text/latex" in o.get("data", {})]
    assert len(latex) >= 8, f"only {len(latex)} LaTeX outputs"
    text = "\n".join(latex)
    assert r"\dot{v}_{1}" in text and r"\dot{x}" in text and "_{dot}" not in text
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the comparison figure
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "strong consistency of the section -p: holds" in printed

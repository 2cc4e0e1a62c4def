"""Sphinx configuration for the anholo documentation.

Build the HTML pages with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
and run the examples of the narrative pages with ``python -m sphinx -b doctest docs docs/_build/doctest``.
"""

from __future__ import annotations

import os
import sys

# Document the source tree next to this file.  The package is imported from
# ../src, put first on the path, so the pages always describe this checkout
# (also when anholo is not installed, or an older copy is installed elsewhere).
_SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src"))
if os.path.isdir(_SRC):
    sys.path.insert(0, _SRC)

import anholo  # noqa: E402  (needs the path set above)

# The notebook (tutorial_notebook.ipynb) runs in a Jupyter kernel, a separate
# process: it finds this checkout through PYTHONPATH.
if os.path.isdir(_SRC):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH")) if p)

# -- Project -------------------------------------------------------------------------
project = "anholo"
author = "the anholo developers"
copyright = "the anholo developers"
version = release = anholo.__version__

# -- General -------------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 bundled into _static: formulas render offline
    "sphinx.ext.viewcode",
    "sphinx.ext.doctest",
    "sphinxcontrib.bibtex",  # references.bib, cited as :cite:t:`CrampinMestdag2010`
    "sphinx_gallery.gen_gallery",  # gallery/*.py -> auto_gallery/ (executed, thumbnails, .py/.ipynb)
    "myst_nb",  # executed Jupyter notebooks (tutorial_notebook.ipynb)
]
# The notebooks sphinx-gallery writes for download (auto_gallery/*.ipynb) are not pages.
exclude_patterns = ["_build", "gallery/GALLERY_HEADER.rst", "auto_gallery/*.ipynb", "jupyter_execute"]
nitpicky = False
# No warning is suppressed: the build runs with -W (every warning is an error).

# -- autodoc / napoleon --------------------------------------------------------------
# Intended: no members and no undocumented members unless a directive asks
# (api.rst asks with :members:).  That is autodoc's own default, so the two keys
# are left out on purpose: in Sphinx 7-9, "members": False would *replace* the
# :members: option of every directive (sphinx-doc/sphinx#9709), emptying the API
# page, and "undoc-members": False would *switch undocumented members on* (flag
# options ignore their value).  Check with the text builder before adding keys.
autodoc_default_options: dict[str, str | bool] = {}
autodoc_member_order = "bysource"
# A class's entry shows the class docstring and its __init__'s docstring (the
# constructor's Parameters), with the constructor's signature.
autoclass_content = "both"
autodoc_typehints = "none"  # the docstrings state the types in numpy style
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# "Attributes" sections become :ivar: fields: a property documented both in the
# class's Attributes section and by :members: would otherwise be described twice.
napoleon_use_ivar = True

# -- doctest -------------------------------------------------------------------------
# The doctest builder runs the ``.. doctest::`` blocks of the narrative pages.
# Plain ``>>>`` blocks (the examples in docstrings, which autodoc pulls into api.rst)
# are not run here: they are written for their own module's namespace and are
# run where they live, with ``python -m pytest --doctest-modules src/anholo``.
doctest_test_doctest_blocks = ""

# -- Bibliography (sphinxcontrib-bibtex) -------------------------------------------
# The papers of references.bib, listed on references.rst and cited by author and
# year: :cite:t:`CrampinMestdag2010` gives "Crampin and Mestdag [2010]".
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- Gallery (sphinx-gallery) --------------------------------------------------------
# Every script in gallery/ is executed at build time (an error fails the build);
# its figures become thumbnails and images, its printed output is shown in full,
# and the page offers the script as .py and as a Jupyter notebook.
# tests/test_gallery.py runs the same scripts and checks what they claim.
sphinx_gallery_conf = {
    "examples_dirs": "gallery",
    "gallery_dirs": "auto_gallery",
    "filename_pattern": r".*\.py$",  # execute every script, not only plot_*.py
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1e9,  # no timing lines: the pages stay the same from build to build
    "capture_repr": (),  # show what the scripts print, not the repr of their last expression
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "plot_gallery": "True",
    "write_computation_times": False,
    "run_stale_examples": True,  # run every script at every build: the pages show what this checkout computes
}

# -- Jupyter notebooks (myst-nb) ------------------------------------------------------
# The notebook is executed at every HTML build (an error fails the build).
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]  # $...$ and $$...$$ in the notebook's text

# -- HTML ----------------------------------------------------------------------------
html_theme = "alabaster"
html_theme_options = {
    "description": "Nonholonomic mechanics in anholonomic frames",
    "fixed_sidebar": True,
    "page_width": "1180px",
}
html_static_path = ["_static"]
html_css_files = ["anholo.css"]

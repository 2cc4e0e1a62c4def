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

# Local extensions: _ext/gallery.py runs the gallery scripts (docs/gallery/*.py) for the HTML pages.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

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
    "sphinx.ext.viewcode",
    "sphinx.ext.doctest",
    "gallery",
]
exclude_patterns = ["_build"]
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

# -- HTML ----------------------------------------------------------------------------
html_theme = "alabaster"
html_theme_options = {
    "description": "Nonholonomic mechanics in anholonomic frames",
    "fixed_sidebar": True,
}
html_static_path: list[str] = []

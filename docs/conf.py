"""Sphinx configuration of the scrapy-rfc9309 documentation (``make docs``)."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import scrapy_rfc9309  # noqa: E402

project = "scrapy-rfc9309"
author = "The scrapy-rfc9309 authors"
copyright = "The scrapy-rfc9309 authors"
release = scrapy_rfc9309.__version__
version = release

extensions = ["myst_parser", "sphinx.ext.doctest"]
source_suffix = {".md": "markdown"}
myst_enable_extensions = ["colon_fence"]
# Links to headings: [Status codes](robots-txt.md#status-codes).
myst_heading_anchors = 3
exclude_patterns = ["_build"]

# A block with no language (log lines, command output) is shown as plain text.
highlight_language = "none"

html_theme = "furo"
html_title = f"scrapy-rfc9309 {release}"
# custom.css: log lines wrap and long names in tables break, so that no
# page scrolls sideways in a 1280 px window.
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# Doctests (`sphinx-build -b doctest`, run by `make docs`): only the
# {doctest} / {testcode} blocks run; plain ```python blocks are settings
# fragments, checked to be valid Python by tests/test_docs.py.
doctest_test_doctest_blocks = ""
doctest_default_flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1

"""The robots.txt parser and matcher, and the readers of page-level signals.

Pure Python, no Scrapy: bytes -> numbered lines (:mod:`._lines`) -> groups
(:mod:`._groups`) -> a compiled per-agent matcher (:mod:`._matcher`), each
verdict carrying the line that decided it (RFC 9309 2.2). Page directives
(``<meta name="robots">``, ``X-Robots-Tag``, ``Robots-Tag``) and usage signals are read here
too. The modules are private; the names below are the subpackage's interface.
"""

from __future__ import annotations

from ._directives import PageDirectives
from ._dots import resolved_path
from ._matcher import Verdict
from ._page_directives import read_page_directives
from ._robotstxt import RobotsTxt
from ._usage import PARENTS, TDM_CATEGORIES, VALUES, VOCABULARY, Preference, Usage
from ._verdicts import ResolvedVerdict

__all__ = [
    "PARENTS",
    "TDM_CATEGORIES",
    "VALUES",
    "VOCABULARY",
    "PageDirectives",
    "Preference",
    "ResolvedVerdict",
    "RobotsTxt",
    "Usage",
    "Verdict",
    "read_page_directives",
    "resolved_path",
]

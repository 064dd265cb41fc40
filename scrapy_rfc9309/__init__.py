"""Scrapy obeys robots.txt exactly as RFC 9309 says.

The parser (:class:`RobotsTxt`, :class:`Verdict`) is pure Python and imports
no Scrapy; the Scrapy components are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._matcher import Verdict
from ._robotstxt import RobotsTxt

if TYPE_CHECKING:
    from ._addon import Addon
    from ._extension import RobotsTxtExtension
    from ._middleware import RobotsTxtMiddleware
    from ._queue import RobotsTxtPriorityQueue
    from ._robotparser import RFC9309RobotParser

__all__ = [
    "Addon",
    "RFC9309RobotParser",
    "RobotsTxt",
    "RobotsTxtExtension",
    "RobotsTxtMiddleware",
    "RobotsTxtPriorityQueue",
    "Verdict",
]

_SCRAPY_COMPONENTS = {
    "Addon": "._addon",
    "RFC9309RobotParser": "._robotparser",
    "RobotsTxtExtension": "._extension",
    "RobotsTxtMiddleware": "._middleware",
    "RobotsTxtPriorityQueue": "._queue",
}


def __getattr__(name: str) -> Any:
    module = _SCRAPY_COMPONENTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)

"""Scrapy obeys robots.txt exactly as RFC 9309 says.

The parser (:class:`RobotsTxt`, :class:`Verdict`) is pure Python and imports
no Scrapy; the Scrapy components are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._matcher import Verdict
from ._robotstxt import RobotsTxt
from ._usage import Preference, Usage

if TYPE_CHECKING:
    from ._addon import Addon
    from ._cache_policy import RobotsMetaCachePolicy
    from ._extension import RobotsTxtExtension
    from ._meta_middleware import RobotsMetaMiddleware
    from ._middleware import RobotsTxtMiddleware
    from ._queue import RobotsTxtPriorityQueue
    from ._robotparser import RFC9309RobotParser

    robots_parsed: Any

__version__ = "0.1.0"

__all__ = [
    "Addon",
    "Preference",
    "RFC9309RobotParser",
    "RobotsMetaCachePolicy",
    "RobotsMetaMiddleware",
    "RobotsTxt",
    "RobotsTxtExtension",
    "RobotsTxtMiddleware",
    "RobotsTxtPriorityQueue",
    "Usage",
    "Verdict",
    "robots_parsed",
]

_SCRAPY_COMPONENTS = {
    "Addon": "._addon",
    "RFC9309RobotParser": "._robotparser",
    "RobotsMetaCachePolicy": "._cache_policy",
    "RobotsMetaMiddleware": "._meta_middleware",
    "RobotsTxtExtension": "._extension",
    "RobotsTxtMiddleware": "._middleware",
    "RobotsTxtPriorityQueue": "._queue",
    "robots_parsed": "._compat",
}


def __getattr__(name: str) -> Any:
    module = _SCRAPY_COMPONENTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)

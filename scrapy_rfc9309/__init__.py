"""Scrapy obeys robots.txt exactly as RFC 9309 says.

Three layers, data flowing one way: :mod:`.parser` (bytes to a compiled
per-agent matcher; pure Python, no Scrapy), :mod:`.sites` (the pure site
table: outcomes, lifetimes, one fetch per site) and :mod:`.components` (the
Scrapy glue, imported on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .parser import Preference, RobotsTxt, Usage, Verdict

if TYPE_CHECKING:
    from .components import (
        Addon,
        RFC9309RobotParser,
        RobotsMetaCachePolicy,
        RobotsMetaMiddleware,
        RobotsTxtExtension,
        RobotsTxtMiddleware,
        RobotsTxtPriorityQueue,
        robots_sitemaps,
    )
    from .components.crawl._pacing_middleware import ClusterDelayMiddleware
    from .components.crawl._redis_queue import RobotsTxtRedisQueue as RobotsTxtRedisQueue

    robots_parsed: Any

__version__ = "0.1.0"

# ``RobotsTxtRedisQueue`` is public too, named as ``scrapy_rfc9309.RobotsTxtRedisQueue``
# (a setting's value, or an import by name), but not in ``__all__``: it needs
# scrapy-redis, and ``from scrapy_rfc9309 import *`` must work without it.
__all__ = [
    "Addon",
    "ClusterDelayMiddleware",
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
    "robots_sitemaps",
]

_SCRAPY_COMPONENTS = frozenset(
    {
        "Addon",
        "RFC9309RobotParser",
        "RobotsMetaCachePolicy",
        "RobotsMetaMiddleware",
        "RobotsTxtExtension",
        "RobotsTxtMiddleware",
        "RobotsTxtPriorityQueue",
        "robots_parsed",
        "robots_sitemaps",
    }
)


#: Public names whose module needs an optional package (scrapy-redis) or is loaded
#: only when named: each from its own module, imported on first use.
_OWN_MODULES = {
    "ClusterDelayMiddleware": ".components.crawl._pacing_middleware",
    "RobotsTxtRedisQueue": ".components.crawl._redis_queue",
}


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name in _OWN_MODULES:
        return getattr(import_module(_OWN_MODULES[name], __name__), name)
    if name not in _SCRAPY_COMPONENTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".components", __name__), name)

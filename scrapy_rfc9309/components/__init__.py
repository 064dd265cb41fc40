"""The Scrapy components: thin glue around the parser and the site table.

The downloader middleware that decides, the scheduler queue where requests
wait, the spider middleware for page directives, the cache policy, the
extension, the add-on and the ``scrapy robotstxt`` command. Settings are read
in one place (:mod:`._settings`).
"""

from __future__ import annotations

from ._addon import Addon
from ._compat import robots_parsed
from ._robotparser import RFC9309RobotParser
from .command._command import RobotsTxtCommand
from .crawl._middleware import RobotsTxtMiddleware
from .crawl._queue import RobotsTxtPriorityQueue
from .crawl._sitemaps import robots_sitemaps
from .extension._extension import RobotsTxtExtension
from .pages._cache_policy import RobotsMetaCachePolicy
from .pages._meta_middleware import RobotsMetaMiddleware

__all__ = [
    "Addon",
    "RFC9309RobotParser",
    "RobotsMetaCachePolicy",
    "RobotsMetaMiddleware",
    "RobotsTxtCommand",
    "RobotsTxtExtension",
    "RobotsTxtMiddleware",
    "RobotsTxtPriorityQueue",
    "robots_parsed",
    "robots_sitemaps",
]

"""``RFC9309RobotParser``: Scrapy's ``RobotParser`` interface over ``RobotsTxt``.

With it, ``ROBOTSTXT_PARSER = "scrapy_rfc9309.RFC9309RobotParser"`` gives
Scrapy's own middleware RFC 9309 semantics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser

from ..parser._agent import derive_product_token
from ..parser._lines import DEFAULT_MAX_SIZE
from ..parser._robotstxt import RobotsTxt
from .settings._settings import max_size_setting

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["RFC9309RobotParser"]


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class RFC9309RobotParser(RobotParser):
    """A Scrapy ``RobotParser`` that decides as RFC 9309 section 2 says.

    ``user_agent`` may be a whole User-Agent value: browser compatibility
    products are skipped (``Mozilla/5.0 (compatible; ExampleBot/0.1)`` obeys
    as ``ExampleBot``).
    """

    def __init__(self, robotstxt_body: bytes | str, max_size: int = DEFAULT_MAX_SIZE):
        self.robots = RobotsTxt.parse(robotstxt_body, max_size=max_size)

    @classmethod
    def from_robots(cls, robots: RobotsTxt) -> RFC9309RobotParser:
        """Wrap an already parsed file (as sent with ``signals.robots_parsed``)."""
        parser = cls.__new__(cls)
        parser.robots = robots
        return parser

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> RFC9309RobotParser:
        # Read and checked as the add-on reads it (2.5 or "big" stop the crawl,
        # not a 2-octet limit that would allow everything).
        max_size = max_size_setting(crawler.settings)
        return cls(robotstxt_body, max_size=max_size)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.robots.allowed(url=_text(url), agent=_agent(user_agent))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self.robots.crawl_delay(_agent(user_agent))


def _agent(user_agent: str | bytes) -> str:
    return derive_product_token(_text(user_agent)) or "*"

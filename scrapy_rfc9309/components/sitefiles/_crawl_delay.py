"""Each site's Crawl-delay, read from the robots.txt in force, told to those that apply it.

Crawl-delay is not part of RFC 9309, but is widely used. A site's delay is
read when its outcome comes into force (:class:`~._robotstxt_fetches.RobotsTxtFetches`),
whatever the body's source: downloaded, taken from the store one site at a
time or in a batch, or a stored copy kept in force while the site is
unreachable (RFC 9309 2.4). The extension listens (it floors the site's
download slot and tells the cluster pacer); nothing depends on a signal's
arguments. Found through the crawler (:func:`crawl_delay_listeners`); the
delay is the decision's (``sites._request_decision.asked_crawl_delay``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["CrawlDelayListener", "crawl_delay_listeners"]

#: The crawler attribute the listeners are kept in.
_ATTRIBUTE = "_robotstxt_crawl_delay_listeners"


class CrawlDelayListener(Protocol):
    """Applies the Crawl-delay of each site whose robots.txt comes into force."""

    def crawl_delay_in_force(self, site: str, delay: float | None) -> None:
        """``site``'s robots.txt in force asks ``delay`` seconds between requests
        (as written, uncapped); ``None``: it asks none (any more)."""


def crawl_delay_listeners(crawler: Crawler) -> list[CrawlDelayListener]:
    """The crawler's Crawl-delay listeners (a list to append to), made on first use."""
    listeners: list[CrawlDelayListener] | None = getattr(crawler, _ATTRIBUTE, None)
    if listeners is None:
        listeners = []
        setattr(crawler, _ATTRIBUTE, listeners)
    return listeners

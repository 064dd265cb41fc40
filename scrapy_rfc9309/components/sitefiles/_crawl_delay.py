"""Each site's Crawl-delay, read from the robots.txt in force, told to those that apply it.

Crawl-delay is not part of RFC 9309, but is widely used. A site's delay is
read when its outcome comes into force (:class:`~._robotstxt_fetches.RobotsTxtFetches`),
whatever the body's source: downloaded, taken from the store one site at a
time or in a batch, or a stored copy kept in force while the site is
unreachable (RFC 9309 2.4). The extension listens (it floors the site's
download slot and tells the cluster pacer); nothing depends on a signal's
arguments. Found through the crawler (:func:`crawl_delay_listeners`); the
delay is the decision's (``sites._request_decision.asked_crawl_delay``).

A site's delay is the longest its robots.txt asks of the tokens the crawl's
requests of it obey as (:class:`CrawlDelays`): the crawl's own and
``ROBOTSTXT_ALSO_OBEY``'s, and each token a request brings with its own
``User-Agent`` header, told again as such a request is allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ...sites._bounded import put_bounded
from ...sites._request_decision import asked_crawl_delay

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ...sites._outcome import SiteOutcome

__all__ = ["CrawlDelayListener", "CrawlDelays", "crawl_delay_listeners"]

#: Sites whose requests obeyed as another token than the crawl's, remembered;
#: beyond, the oldest are forgotten (their delay stays as told).
MAX_SITES_TRACKED = 100_000

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


class CrawlDelays:
    """Tells the listeners each site's Crawl-delay: the longest its robots.txt in
    force asks of the crawl's token, ``ROBOTSTXT_ALSO_OBEY``'s, and each token a
    request of the site obeyed as (its own ``User-Agent`` header)."""

    def __init__(self, crawler: Crawler, token: str, also_obey: tuple[str, ...]) -> None:
        self._crawler = crawler
        #: the token requests without a header of their own obey as
        self._token = token
        self._also = also_obey
        #: site -> the other tokens its delay was read for, and the delay told
        #: (only sites some request of which obeyed as another token)
        self._others: dict[str, tuple[frozenset[str], float | None]] = {}

    def in_force(self, site: str, outcome: SiteOutcome, token: str) -> None:
        """``outcome`` came into force for ``site``, fetched for a request obeying
        as ``token``: its delay told (the crawl's token's read too)."""
        listeners = crawl_delay_listeners(self._crawler)
        if not listeners:
            return
        others: frozenset[str] = frozenset() if token == self._token else frozenset((token,))
        delay = asked_crawl_delay(outcome, (self._token, *others, *self._also))
        self._others.pop(site, None)
        if others:
            put_bounded(self._others, site, (others, delay), MAX_SITES_TRACKED)
        for listener in listeners:
            listener.crawl_delay_in_force(site, delay)

    def obeyed_as(self, site: str, outcome: SiteOutcome, token: str) -> None:
        """A request of ``site`` obeying as ``token`` is allowed by ``outcome``: if
        its group asks a longer delay than told, the longer one is told."""
        if token == self._token:  # most requests: nothing looked up
            return
        known = self._others.get(site)
        if known is not None and token in known[0]:
            return
        listeners = crawl_delay_listeners(self._crawler)
        if not listeners:
            return
        tokens = (known[0] if known is not None else frozenset()) | {token}
        own = (self._token, *self._also)
        told = known[1] if known is not None else asked_crawl_delay(outcome, own)
        delay = asked_crawl_delay(outcome, (self._token, *tokens, *self._also))
        put_bounded(self._others, site, (tokens, delay), MAX_SITES_TRACKED)
        if delay is not None and (told is None or delay > told):
            for listener in listeners:
                listener.crawl_delay_in_force(site, delay)

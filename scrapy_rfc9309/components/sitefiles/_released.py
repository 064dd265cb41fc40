"""Requests released by a robots.txt fetch: decided by its copy, within a bound.

A request that waited for a site's fetch is decided by that fetch's outcome
even once it has expired (one download per need, never a loop), but only for
one lifetime past its expiry and never past 24 hours after its fetch
(RFC 9309 2.4, :func:`~scrapy_rfc9309.sites._sitetable.released_until`);
past the bound it waits for a new fetch, like a request never released.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...sites._sitetable import outlived

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ...sites._outcome import SiteOutcome
    from .._clock import Clock

__all__ = ["META_RELEASED", "ReleasedRequests"]

# the middleware's logger: these lines are documented under its name
logger = logging.getLogger("scrapy_rfc9309.middleware")

#: ``request.meta`` key: the ``expires_at`` of the outcome that released it
META_RELEASED = "_robotstxt_released"


class ReleasedRequests:
    """Which outcome released each request, and whether it may still decide it."""

    def __init__(
        self,
        crawler: Crawler,
        last_outcome: Callable[[str], SiteOutcome | None],
        clock: Clock,
        stats: Any,
    ) -> None:
        self.crawler = crawler
        #: ``site -> SiteOutcome | None``: the site's last outcome, fresh or not
        self._last = last_outcome
        self.clock = clock
        self.stats = stats
        #: site -> the outcome (its ``expires_at``) whose released requests were
        #: found past their bound: said once per outcome, forgotten once another
        #: outcome of the site is released
        self._outlived: dict[str, float] = {}

    def mark(self, site: str, request: Request) -> None:
        """``request`` waited for ``site``'s fetch, now settled: it is decided by
        that outcome, even once expired, within its bound."""
        outcome = self._last(site)
        if outcome is not None:
            request.meta[META_RELEASED] = outcome.expires_at

    def outcome(self, site: str, request: Request) -> SiteOutcome | None:
        """The outcome that released ``request`` (:meth:`mark`), if it is still
        the site's last and within its bound (RFC 9309 2.4); ``None`` past the
        bound: the request waits for a new fetch."""
        marker = request.meta.get(META_RELEASED)
        if marker is None:
            return None
        outcome = self._last(site)
        if outcome is None or outcome.expires_at != marker:
            return None
        now = self.clock.monotonic()
        if not outlived(outcome, now):
            return outcome
        if self._outlived.get(site) != marker:
            self._outlived[site] = marker
            self._say_outlived(site, outcome, now)
        return None

    def settled(self, site: str) -> None:
        """``site`` has a new last outcome: an outlived one is forgotten."""
        said = self._outlived.get(site)
        if said is not None:
            last = self._last(site)
            if last is None or last.expires_at != said:
                del self._outlived[site]

    def _say_outlived(self, site: str, outcome: SiteOutcome, now: float) -> None:
        """Once per outcome: requests its fetch released outlived it, so the
        site's robots.txt is fetched again before they are decided."""
        self.stats.inc_value("robotstxt/released_outlived")
        fetched = outcome.fetched_at
        logger.debug(
            "robots.txt of %s fetched again: requests that waited for its last fetch "
            "(%s) were not handed out within one lifetime past its expiry, at most "
            "24 h after the fetch (RFC 9309 2.4); the new copy decides them",
            site,
            "time not known" if fetched is None else f"{now - fetched:.1f} s ago",
            extra={"spider": self.crawler.spider},
        )

"""``DownloadSlots``: how many per-site file downloads may start now, and which wait for one.

Pure bookkeeping (the clock passed in, no Scrapy) for
:class:`~._file_fetches.FileFetches`: the downloads in flight, and three
lines of sites waiting for one, started in this order: those a request
waits for, those fetched ahead of need, the attempts of deferred sites
(HTTP: The Definitive Guide ch. 9). Robots.txt files that hang never keep
the others waiting long (RFC 9309 2.3.1.4 makes them unreachable after
``ROBOTSTXT_DOWNLOAD_TIMEOUT``): with a ``slow_factor`` above 1 (robots.txt:
:data:`SLOW_FACTOR`), a download unanswered after :data:`SLOW_AFTER` stops
counting against ``ROBOTSTXT_CONCURRENT_DOWNLOADS``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["SLOW_AFTER", "SLOW_FACTOR", "DownloadSlots"]

#: A download in flight this long (seconds) is *slow*: with a ``slow_factor``
#: above 1 it no longer counts against ``ROBOTSTXT_CONCURRENT_DOWNLOADS``, so
#: robots.txt files that hang never keep other sites' robots.txt waiting for
#: ``ROBOTSTXT_DOWNLOAD_TIMEOUT``.
SLOW_AFTER = 0.5
#: robots.txt downloads in flight, slow ones included, are at most this many
#: times ``ROBOTSTXT_CONCURRENT_DOWNLOADS``.
SLOW_FACTOR = 8

D = TypeVar("D")


class DownloadSlots(Generic[D]):
    """The downloads of one per-site file in flight (site -> its download ``D``)
    and the sites waiting for one, bounded by ``limit``
    (``ROBOTSTXT_CONCURRENT_DOWNLOADS``); slow downloads included, by
    ``slow_factor`` times ``limit`` (1: every download in flight counts)."""

    def __init__(self, limit: int, slow_factor: int = 1) -> None:
        self.limit = limit
        self.slow_factor = slow_factor
        #: site -> its download in flight (cancelled at close)
        self.in_flight: dict[str, D] = {}
        #: sites waited on whose fetch waits for a download
        self.waited: deque[str] = deque()
        #: sites fetched ahead of need whose fetch waits for a download, or for
        #: room in the file's table (ROBOTSTXT_CACHE_MAX_SITES)
        self.ahead: deque[str] = deque()
        #: deferred sites whose next attempt waits for a download
        self.retries: deque[str] = deque()
        #: site -> when its download started, for those in flight under
        #: SLOW_AFTER (in start order: the oldest first)
        self._young: dict[str, float] = {}
        #: deferred sites whose attempt is in flight
        self._retrying: set[str] = set()

    def free(self, now: float, *, retry: bool = False) -> bool:
        """Whether a download may start at ``now``: fewer than ``limit`` in flight
        under :data:`SLOW_AFTER`, fewer than ``slow_factor`` times as many in
        all, and, for an attempt of a deferred site (``retry``), fewer than half
        of ``limit`` such attempts in flight."""
        if len(self.in_flight) >= self.limit * self.slow_factor or self.young(now) >= self.limit:
            return False
        return not retry or len(self._retrying) < max(1, self.limit // 2)

    def young(self, now: float) -> int:
        """Downloads in flight that started less than :data:`SLOW_AFTER` before ``now``."""
        young = self._young
        cutoff = now - SLOW_AFTER
        while young:
            oldest = next(iter(young))
            if young[oldest] > cutoff:
                break
            del young[oldest]
        return len(young)

    def starting(self, site: str, now: float, *, retry: bool = False) -> None:
        """The site's download starts at ``now`` (call before it can end)."""
        self._young.pop(site, None)
        self._young[site] = now
        if retry:
            self._retrying.add(site)

    def done(self, site: str) -> None:
        """The site's download ended (or was never kept in flight)."""
        self.in_flight.pop(site, None)
        self._young.pop(site, None)
        self._retrying.discard(site)

    def waiting(self) -> bool:
        """Whether a site waits for a download."""
        return bool(self.waited or self.ahead or self.retries)

    def lines(self) -> Iterator[tuple[deque[str], bool, bool]]:
        """The lines of waiting sites in the order they start: (line, fetched
        ahead, attempt of a deferred site)."""
        yield self.waited, False, False
        yield self.ahead, True, False
        yield self.retries, False, True

    def clear(self) -> dict[str, D]:
        """Forget everything (the spider closes); the downloads that were in flight."""
        in_flight = dict(self.in_flight)
        self.in_flight.clear()
        self.waited.clear()
        self.ahead.clear()
        self.retries.clear()
        self._young.clear()
        self._retrying.clear()
        return in_flight

"""``ClusterPacer``: one per crawler, asks Redis whether a site's request may go now. Scrapy glue.

With a Redis store, a site's ``Crawl-delay`` (``ROBOTSTXT_CRAWL_DELAY``) and
``ROBOTSTXT_CLUSTER_DELAY`` (sites without one) are kept across every process
of the cluster through a per-site next-allowed time in Redis
(:class:`~scrapy_rfc9309.sites._cluster_clock.ClusterClock`). Our scheduler
queue asks :meth:`ClusterPacer.wait` before handing a request out, and keeps
it while it must wait; with another scheduler
:class:`~._pacing_middleware.ClusterDelayMiddleware` waits in the downloader.

Redis lost: one ERROR line, and the sites are spaced per process again (the
extension's Crawl-delay floor on the download slot, ``DOWNLOAD_DELAY``) until
Redis answers again, tried after :data:`RETRY_SECONDS`.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..sites._store import StoreError
from ._settings import ClusterDelaySettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..sites._cluster_clock import ClusterClock

__all__ = ["ClusterPacer", "cluster_pacer"]

logger = logging.getLogger("scrapy_rfc9309.store")

#: seconds Redis is left alone after a failure, then tried again
RETRY_SECONDS = 30.0
#: seconds one call may take (it is made on the reactor)
CALL_TIMEOUT = 1.0
#: sites whose Crawl-delay is remembered; beyond, the oldest are forgotten
MAX_SITES_TRACKED = 100_000

_ATTRIBUTE = "_robotstxt_cluster_pacer"


class ClusterPacer:
    """Whether a request of a site may be sent now, cluster-wide."""

    def __init__(self, crawler: Crawler, settings: ClusterDelaySettings, clock: ClusterClock):
        self.crawler = crawler
        self.settings = settings
        self._clock: ClusterClock | None = clock
        #: site -> its Crawl-delay (capped), set by the extension as robots.txt is parsed
        self._delays: dict[str, float] = {}
        #: our scheduler queue paces the requests it hands out (the middleware then does not)
        self.queue_paces = False
        self._down_until = 0.0

    def set_crawl_delay(self, site: str, delay: float | None) -> None:
        """``site``'s robots.txt asks ``delay`` seconds between requests (capped);
        ``None``: it asks none (any more)."""
        if delay is None:
            self._delays.pop(site, None)
            return
        if not self.settings.crawl_delay:
            return
        if site not in self._delays and len(self._delays) >= MAX_SITES_TRACKED:
            self._delays.pop(next(iter(self._delays)))
        self._delays[site] = delay

    def delay_for(self, site: str) -> float | None:
        """Seconds between ``site``'s requests across the cluster; ``None``: not paced."""
        return self._delays.get(site, self.settings.cluster_delay)

    def wait(self, site: str) -> float:
        """0.0: a request of ``site`` may go now (its turn is taken); else the
        seconds to wait before asking again."""
        delay = self.delay_for(site)
        clock = self._clock
        if not delay or clock is None:
            return 0.0
        if self._down_until and time.monotonic() < self._down_until:
            return 0.0
        try:
            left = clock.take(site, delay)
        except StoreError as exc:
            self._down_until = time.monotonic() + RETRY_SECONDS
            logger.error(
                "%s; sites are spaced per process (Crawl-delay, DOWNLOAD_DELAY) until it "
                "answers again (tried again in %d s)",
                exc,
                RETRY_SECONDS,
            )
            self._inc("robotstxt/cluster_delay/errors")
            return 0.0
        if self._down_until:
            self._down_until = 0.0
            logger.info("Redis at %s answers again: sites are spaced cluster-wide", clock.uri)
        if left > 0:
            self._inc("robotstxt/cluster_delay/wait_seconds", left)
        return left

    def count_waited(self) -> None:
        """A request waited for its site's turn (counted once per request)."""
        self._inc("robotstxt/cluster_delay/waited")

    def _inc(self, key: str, value: float = 1) -> None:
        stats: Any = self.crawler.stats
        if stats is not None:
            stats.inc_value(key, value)

    def close(self) -> None:
        if self._clock is not None:
            self._clock.close()
            self._clock = None


def cluster_pacer(crawler: Crawler) -> ClusterPacer | None:
    """The crawler's pacer, made at the first call; ``None`` when no site is
    paced cluster-wide (no Redis store, or neither ``ROBOTSTXT_CRAWL_DELAY`` nor
    ``ROBOTSTXT_CLUSTER_DELAY``)."""
    if hasattr(crawler, _ATTRIBUTE):
        found: ClusterPacer | None = getattr(crawler, _ATTRIBUTE)
        return found
    pacer = None
    settings = ClusterDelaySettings.from_settings(crawler.settings)
    if settings.cluster_delay and settings.redis_url is None:
        logger.warning(
            "ROBOTSTXT_CLUSTER_DELAY needs a Redis store (ROBOTSTXT_STORE_URI = 'redis://...'): "
            "ignored"
        )
    if settings.redis_url and (settings.crawl_delay or settings.cluster_delay):
        from ..sites._cluster_clock import ClusterClock

        clock = ClusterClock.open(settings.redis_url, settings.prefix, timeout=CALL_TIMEOUT)
        pacer = ClusterPacer(crawler, settings, clock)
        from scrapy import signals

        crawler.signals.connect(pacer.close, signal=signals.spider_closed)
    setattr(crawler, _ATTRIBUTE, pacer)
    return pacer

"""``RobotsTxtFetches``: each site's robots.txt fetch for one crawl, from launch to settling.

A fetch the site table has started is launched by
:class:`~._file_fetches.FileFetches` (single flight, at most
``ROBOTSTXT_CONCURRENT_DOWNLOADS``, cancelled at close); it reads a fresh
copy from the store, or downloads the file (:class:`~._fetcher.RobotsTxtFetcher`,
RFC 9309 2.3), and puts the outcome in force: the site is deferred while
unreachable (:class:`~._deferral.Deferrals`), or its requests are released.
The Crawl-delay of the robots.txt put in force, whatever its source, is told
to the crawl's listeners (:mod:`._crawl_delay`). In one-attempt mode
(:data:`~._fetch_mode.ONE_ATTEMPT`) there is no store, and an unreachable
site is not deferred: that attempt's outcome is the site's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from twisted.internet.defer import CancelledError, Deferred

from ...sites._outcome import Kind, SiteOutcome
from ...sites._site import robots_url
from ._download_slots import SLOW_FACTOR
from ._fetch_log import SiteCounts, internal_error, log_outcome, warn_refetched_evicted
from ._fetch_mode import CRAWL, FetchMode
from ._file_fetches import FileFetches

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ...sites._sitetable import SiteTable
    from .._clock import Clock
    from .._report import CrawlReport
    from ..record._crawl_record import CrawlRecord
    from ..settings._settings import RobotsTxtSettings
    from ..store._store_bridge import StoreBridge
    from ._crawl_delay import CrawlDelays
    from ._deferral import Deferrals
    from ._fetcher import RobotsTxtFetcher
    from ._set_aside import SetAside

__all__ = ["RobotsTxtFetches", "hand_back"]

# the middleware's logger: these lines are documented under its name
logger = logging.getLogger("scrapy_rfc9309.middleware")


def hand_back(waiters: list[Deferred[SiteOutcome | None]], outcome: SiteOutcome | None) -> None:
    """Give each request waiting for a site its outcome (``None``: closing)."""
    for waiter in waiters:
        waiter.callback(outcome)


class RobotsTxtFetches:
    """The robots.txt fetches of one crawl (RFC 9309 2.3, 2.4): launched by
    :attr:`launcher`, each settled in the site table it was started in."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        table: SiteTable[Deferred[SiteOutcome | None]],
        clock: Clock,
        *,
        fetcher: RobotsTxtFetcher,
        store: StoreBridge | None,
        report: CrawlReport,
        deferrals: Deferrals,
        set_aside: SetAside,
        release: Callable[[str], None],
        queued: Callable[[], bool],
        crawl_delays: CrawlDelays,
        record: CrawlRecord | None = None,
        mode: FetchMode = CRAWL,
    ) -> None:
        self.crawler = crawler
        #: tells each site's Crawl-delay as its outcome comes into force
        self._crawl_delays = crawl_delays
        #: how outcomes are kept, and whether an unreachable site is deferred
        self._mode = mode
        self.settings = settings
        assert crawler.stats is not None
        self.stats = crawler.stats
        self._table = table
        self.clock = clock
        self._fetcher = fetcher
        self._store = store
        self.report = report
        self.deferrals = deferrals
        self.set_aside = set_aside
        #: the site's requests go on (settled, not deferred)
        self._release = release
        #: whether our scheduler queue is in use: fetches ahead wait for room in the
        #: site table, and an unreachable site is deferred
        self._queued = queued
        #: ROBOTSTXT_RECORD_FILE: each copy put in force is recorded
        self._record = record
        #: the downloads in flight, and the sites waiting for one
        self.launcher = FileFetches(
            table,
            settings.concurrent_downloads,
            self._fetch,
            queued,
            slow_factor=SLOW_FACTOR,
            clock=clock,
        )
        #: per-site stats: each site once per crawl, whatever its refetches
        self._counts = SiteCounts(self.stats)
        #: whether a download caused by ROBOTSTXT_CACHE_MAX_SITES was warned about
        self._evictions_warned = False

    async def _fetch(self, site: str, request: Request | None) -> None:
        url = robots_url(site)
        stored = False
        copy = None  # a copy the store kept, offered to stay in force (RFC 9309 2.4)
        try:
            outcome = None
            # an attempt while deferred, not a cached copy that expired (RFC 9309 2.4)
            retrying = self._table.deferral(site) is not None
            if self._store is not None:  # a fresh copy in the store, or its lease taken
                outcome = await self._store.obtain(site, request, retrying=retrying)
                stored = outcome is not None
            if outcome is None:
                self.stats.inc_value("robotstxt/request_count")
                if retrying:
                    self.stats.inc_value("robotstxt/deferred/retries")
                elif self._table.stale(site) is not None:
                    self.stats.inc_value("robotstxt/refetch")
                elif self._table.evicted_fresh(site, self.clock.monotonic()):
                    self._refetched_evicted(site)
                outcome = await self._fetcher.fetch(url, request)
        except (CancelledError, asyncio.CancelledError):
            if self._store is not None:
                self._store.abandoned(site)
            logger.info("robots.txt download cancelled at close: %s", url)
            self.launcher.done(site)
            hand_back(self._table.abandon(site), None)
            self.set_aside.drop_site(site)
            return
        except Exception as exc:  # not an answer of the site: never pass it off as one
            now = self.clock.monotonic()
            outcome = internal_error(
                self.stats, self.crawler, exc, url, now + self.settings.unreachable_ttl, now
            )
        if (
            self._store is not None
            and outcome.kind is Kind.UNREACHABLE
            and self._table.is_pending(site)
            and self._table.stale(site) is None
        ):
            # RFC 9309 2.4: a copy the store kept (a restarted crawl) may stay in force
            copy = await self._store.last_copy(site, request)
            if copy is not None:
                self._table.offer_stale(site, copy.compact())
        self.launcher.done(site)
        if not self._table.is_pending(site):  # abandoned: the spider closed meanwhile
            if self._store is not None and not stored:
                self._store.fetched(site, outcome)
            return
        self._settle(site, outcome, url, stored, request, copy)

    def _tell_crawl_delay(self, site: str, outcome: SiteOutcome, request: Request | None) -> None:
        """Tell the crawl's listeners the Crawl-delay of the outcome now in force
        for ``site`` (:class:`~._crawl_delay.CrawlDelays`: of our product token,
        the page's, and ``ROBOTSTXT_ALSO_OBEY``'s, the longest)."""
        self._crawl_delays.in_force(site, outcome, self.settings.token_of(request))

    def _refetched_evicted(self, site: str) -> None:
        """``site``'s robots.txt is downloaded again only because the bound evicted
        its outcome while fresh: counted, and said once per crawl."""
        self.stats.inc_value("robotstxt/cache/refetched_evicted")
        if not self._evictions_warned:
            self._evictions_warned = True
            warn_refetched_evicted(site, self.settings.cache_max_sites)

    def _settle(
        self,
        site: str,
        outcome: SiteOutcome,
        url: str,
        stored: bool,
        request: Request | None = None,
        copy: SiteOutcome | None = None,
    ) -> None:
        """Put the outcome in force, defer the site or release its requests, and tell.

        ``request``: the page the fetch was made for (``None``: fetched ahead
        later, or an attempt of a deferred site). ``copy``: the copy the store
        kept, offered to stay in force if the fetch came back unreachable.
        """
        was_deferred = self._table.deferral(site) is not None
        settled = self._table.settle(site, outcome.compact() if self._mode.compact else outcome)
        if self._record is not None:  # the copy in force now, whatever its source
            self._record.robots_in_force(
                site, settled.outcome, None if settled.kept_stale else outcome
            )
        if not settled.kept_stale:
            self._tell_crawl_delay(site, outcome, request)
        elif copy is not None:  # the store's copy, in force now (RFC 9309 2.4)
            self._tell_crawl_delay(site, copy, request)
        # else: the copy this crawl held stays in force, and its Crawl-delay with it
        if self._store is not None and not stored:
            # saved and the lease released, off the reactor
            self._store.fetched(site, outcome, kept=settled.kept_stale)
        deferral = None
        if settled.outcome.kind is Kind.UNREACHABLE and self._mode.retry and self._queued():
            deferral = self.deferrals.defer(site, settled.outcome, was_deferred)
        elif was_deferred:
            self.deferrals.cancel(site)  # its deadline's timer
            self.deferrals.recovered(outcome, url)
        if settled.kept_stale:
            # RFC 9309 2.4: while unreachable, a copy cached earlier stays in use.
            logger.warning(
                "robots.txt unreachable (%s): %s; keeping the copy fetched earlier (RFC 9309 2.4)",
                outcome.detail,
                outcome.source or url,
            )
        else:
            self._counts.count(site, outcome.kind)
            self.report.fetched(site, outcome, now=self.clock.time())
            if deferral is not None:
                self.deferrals.log(outcome, url, site, deferral, first=not was_deferred)
            else:
                log_outcome(outcome, url, site, self.clock.monotonic(), again=self._mode.retry)
        if self._table.evictions:
            self.stats.set_value("robotstxt/cache/evicted", self._table.evictions)
        hand_back(settled.waiters, settled.outcome)
        if deferral is None:
            self._release(site)

"""``TdmRepSites``: each site's tdmrep.json for one crawl: fetched once, kept, let go at close.

tdmrep.json is a second table of the same kind as robots.txt's: the pure
:class:`~..sites._filetable.FileTable` (single flight: later requests wait
on the same download, each on its own Deferred; LRU-bounded by
``ROBOTSTXT_CACHE_MAX_SITES``; a site with requests still in our scheduler
queue is pinned, so its tdmrep.json is never evicted and fetched again), its
downloads launched by :class:`~._file_fetches.FileFetches` (at most
``ROBOTSTXT_CONCURRENT_DOWNLOADS`` at once, cancelled at close), each read by
:class:`~._tdmrep_fetcher.TdmRepFetcher`. With a store, each fetch that
settles is kept there too (``scrapy robotstxt --at`` decides from it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred

from ...parser._tdmrep import EMPTY_TDMREP, TDMREP_PATH, TdmRep
from ...sites._filetable import FileTable
from ...sites._sitetable import SiteState
from .._clock import Clock
from .._engine import file_slot
from ._file_download import dotted_name
from ._file_fetches import FileFetches
from ._tdmrep_fetcher import TdmRepFetched, TdmRepFetcher

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ..settings._settings import RobotsTxtSettings
    from ..store._store_bridge import StoreBridge
    from ._tdmrep_robots import TdmRepRobotsCheck

__all__ = ["FAILED_TDMREP", "KnownTdmRep", "TdmRepSites"]

logger = logging.getLogger("scrapy_rfc9309.usage")

#: What a site's tdmrep.json fetch came to when it failed for a reason of ours (an
#: internal error): its requests are dropped, never let through as "nothing stated".
FAILED_TDMREP = TdmRep()


class KnownTdmRep(NamedTuple):
    """A site's tdmrep.json rules as kept in the table, until ``expires_at``."""

    rules: TdmRep
    #: a monotonic time
    expires_at: float


#: A request waiting for a site's tdmrep.json (``None`` handed back: closing).
Waiter = Deferred[TdmRep | None]


class TdmRepSites:
    """Each site's tdmrep.json: fetched once (single flight), kept for its lifetime.

    A fetch runs on its own (not inside one request's ``process_request``), so
    it can start ahead of need (:meth:`prefetch`, from the scheduler queue)
    and be cancelled at close (:meth:`abandon_all`). At most
    ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` run at once; like robots.txt, they do
    not count against the pages' ``CONCURRENT_REQUESTS``.
    """

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        clock: Clock,
        on_settled: Callable[[str], None] | None = None,
        on_start: Callable[[], None] | None = None,
        details: dict[str, str] | None = None,
        bounded: Callable[[], bool] | None = None,
        store: StoreBridge | None = None,
        robots_check: TdmRepRobotsCheck | None = None,
    ) -> None:
        """``robots_check``: whether the site's robots.txt disallows its
        tdmrep.json to the crawler (RFC 9309 2.2.2; ``None``: not checked)."""
        self.crawler = crawler
        self._robots_check = robots_check
        #: ROBOTSTXT_STORE_URI: each fetch that settles is kept there too (``--at``)
        self._store = store
        self.settings = settings
        assert crawler.stats is not None
        self.stats = crawler.stats
        #: the crawl's time, handed down: each site's tdmrep.json is fresh by it
        self.clock = clock
        #: site -> what its last fetch came to (``HTTP 200, 2 rules``), when given
        #: (``scrapy robotstxt`` shows it; a crawl keeps none)
        self.details = details
        self._fetcher = TdmRepFetcher(crawler, settings, clock, details)
        self._table: FileTable[Waiter, KnownTdmRep] = FileTable(settings.cache_max_sites)
        self._fetches = FileFetches(
            self._table,
            settings.concurrent_downloads,
            self._run,
            bounded if bounded is not None else _unbounded,
            clock=self.clock,
        )
        #: told when a site's tdmrep.json is settled (the scheduler queue releases its requests)
        self._on_settled = on_settled
        #: told when a fetch starts (the middleware watches for a closing engine)
        self._on_start = on_start
        self._closing = False
        #: site -> the internal error of its last fetch, while FAILED_TDMREP is in force
        self.failures: dict[str, str] = {}

    def fresh(self, site: str) -> TdmRep | None:
        """The site's rules if known and fresh, else ``None``."""
        known = self._table.fresh(site, self.clock.monotonic())
        return None if known is None else known.rules

    def state(self, site: str) -> SiteState:
        """``READY`` (fresh), ``PENDING`` (a fetch in flight) or ``UNKNOWN``; O(1)."""
        if self._table.is_pending(site):
            return SiteState.PENDING
        if self._table.fresh(site, self.clock.monotonic()) is not None:
            return SiteState.READY
        return SiteState.UNKNOWN

    def has_pending(self) -> bool:
        return self._table.has_pending()

    def pin(self, site: str, requests: int = 1) -> None:
        """``requests`` of ``site`` are queued: its tdmrep.json is not evicted meanwhile."""
        self._table.pin(site, requests)

    def unpin(self, site: str) -> None:
        """A request of ``site`` left the queue; fetches ahead start if room freed."""
        if self._table.unpin(site) and self._fetches.has_waiting():
            self._fetches.start_waiting()

    def prefetch(self, site: str) -> None:
        """Start the site's fetch ahead of its requests, unless fresh or in flight."""
        if self.fresh(site) is None and self._table.start(site):
            self._launch(site, ahead=True)

    async def get(self, site: str) -> TdmRep | None:
        """The site's rules; downloads ``/.well-known/tdmrep.json`` once per lifetime.
        ``None``: the spider closed before it was fetched."""
        rules = self.fresh(site)
        if rules is not None:
            return rules
        waiter: Waiter = Deferred()
        first = not self._table.waited_on(site)
        # waiting before the fetch starts: a fetch that fails at once (an error raised
        # by a downloader middleware, on older Scrapy) settles before it returns
        if self._table.join(site, waiter):
            self._launch(site, ahead=False)
        elif first:  # fetched ahead, perhaps not started: wanted now
            self._fetches.wanted(site)
        return await maybe_deferred_to_future(waiter)

    def _launch(self, site: str, *, ahead: bool) -> None:
        if self._on_start is not None:
            self._on_start()
        if self._robots_check is not None:  # its robots.txt copy kept until it starts
            self._robots_check.keep(site)
        self._fetches.launch(site, None, ahead=ahead)

    async def _run(self, site: str, request: Request | None = None) -> None:
        fetched: TdmRepFetched | None = None
        check = self._robots_check
        refusal = None if check is None else check.refusal(site)
        if refusal is not None:  # RFC 9309 2.2.2: never fetched
            self._fetches.done(site)
            expires, rules = self._disallowed(site, refusal)
            self._settle(site, KnownTdmRep(rules, expires))
            return
        copies = None if self._store is None else self._store.tdmrep
        try:
            # a copy in force, from an earlier run or another process (which may
            # be fetching it now: its copy is waited for), or the lease taken
            stored = None if copies is None else await copies.obtain(site)
            if stored is not None:
                self._fetches.done(site)
                self._settle(site, self._stored(site, *stored))
                return
            with file_slot(self.crawler, "tdmrep.json", site) as slot:
                fetched = await self._fetcher.fetch(site, slot, self._is_closing)
        except (CancelledError, asyncio.CancelledError):  # said by abandon_all
            self._fetches.done(site)
            if copies is not None:
                copies.fetched(site, None, None)  # its lease given up
            for waiter in self._table.abandon(site):
                waiter.callback(None)
            return
        except Exception as exc:  # not an answer of the site: never pass it off as one
            self._fetches.done(site)
            expires, rules = self._internal_error(exc, site)
        else:
            self._fetches.done(site)
            self.failures.pop(site, None)
            expires, rules = fetched.expires, fetched.rules
        settled = self._settle(site, KnownTdmRep(rules, expires))
        if copies is None:
            return
        if settled and fetched is not None and fetched.kind is not None:
            record = fetched.record(  # an internal error is not kept
                site,
                now=self.clock.time(),
                monotonic_now=self.clock.monotonic(),
                max_size=self.settings.max_size,
            )
            copies.fetched(site, record, fetched.body)
        else:
            copies.fetched(site, None, None)  # nothing kept: its lease given up

    def _settle(self, site: str, known: KnownTdmRep) -> bool:
        """Put ``known`` in force for ``site`` and let its waiters go; ``False``
        when the fetch was abandoned meanwhile (the spider closed)."""
        if not self._table.is_pending(site):
            return False
        settled = self._table.settle(site, known)
        for waiter in settled.waiters:
            waiter.callback(known.rules)
        if self._on_settled is not None:
            self._on_settled(site)
        return True

    def _stored(self, site: str, rules: TdmRep, expires: float, detail: str) -> KnownTdmRep:
        """A stored copy put in force until ``expires`` (monotonic), counted in
        ``robotstxt/tdmrep/store_used``; nothing is downloaded."""
        self.stats.inc_value("robotstxt/tdmrep/store_used")
        if self.details is not None:
            self.details[site] = detail
        logger.debug("tdmrep.json of %s from the store: %s", site, detail)
        return KnownTdmRep(rules, expires)

    def _disallowed(self, site: str, refusal: str) -> tuple[float, TdmRep]:
        """The site's robots.txt disallows its tdmrep.json to the crawler: it is
        not fetched (RFC 9309 2.2.2), and states nothing, as a 404 would, for
        ``ROBOTSTXT_CACHE_TTL``. Counted in ``robotstxt/tdmrep/disallowed``."""
        self.stats.inc_value("robotstxt/tdmrep/disallowed")
        if self.details is not None:
            self.details[site] = f"not fetched: robots.txt disallows it: {refusal}"
        logger.info(
            "Not fetching %s%s: %s; it states nothing",
            site,
            TDMREP_PATH,
            refusal,
            extra={"spider": self.crawler.spider},
        )
        return self.clock.monotonic() + self.settings.cache_ttl, EMPTY_TDMREP

    def _is_closing(self) -> bool:
        return self._closing

    def _internal_error(self, exc: Exception, site: str) -> tuple[float, TdmRep]:
        """A failure that is not the site's answer (a bug, an incompatible component):
        logged at ERROR with its traceback, counted in ``robotstxt/internal_error``;
        the site's requests are dropped until ``ROBOTSTXT_UNREACHABLE_TTL`` has passed."""
        self.stats.inc_value("robotstxt/internal_error")
        if self.details is not None:
            self.details[site] = f"internal error: {dotted_name(exc)}: {exc}"
        logger.error(
            "Internal error while fetching %s%s; requests to its site are dropped "
            "(this is not the site's answer)",
            site,
            TDMREP_PATH,
            exc_info=exc,
            extra={"spider": self.crawler.spider},
        )
        self.failures[site] = f"{dotted_name(exc)}: {exc}"
        return self.clock.monotonic() + self.settings.unreachable_ttl, FAILED_TDMREP

    def abandon_all(self) -> None:
        """The spider closes: cancel every download (each said at INFO as it is
        cancelled: the cancellation may reach the download after the crawl has
        ended); its waiting requests are dropped."""
        self._closing = True
        for site in self._fetches.in_flight:
            logger.info("tdmrep.json download cancelled at close: %s", site + TDMREP_PATH)
        abandoned = self._table.abandon_all()
        waiting = sum(len(waiters) for _, waiters in abandoned)
        if waiting:
            logger.info(
                "Spider closing: dropping %d requests that waited on %d tdmrep.json downloads",
                waiting,
                len(abandoned),
            )
        for _, waiters in abandoned:
            for waiter in waiters:
                waiter.callback(None)
        self._fetches.cancel_all()


def _unbounded() -> bool:
    return False

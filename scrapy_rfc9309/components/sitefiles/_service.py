"""``SiteService``: each site's robots.txt for one crawler: fetched, kept, deferred, released.

The scheduler queue asks it what a site's requests can do (:meth:`SiteService.site_state`)
and has it fetch ahead (:meth:`SiteService.prefetch`); the middleware asks it
for a site's outcome (:meth:`SiteService.wait_for`) and has it decide
(:class:`~._decisions.RequestDecisions`). Each fetch, from its launch to its
settling, is run by :class:`~._robotstxt_fetches.RobotsTxtFetches`; while one
is pending, :class:`~._close_watchdog.CloseWatchdog` looks for a closing
engine. Found through the crawler
(:func:`site_service`), never through a registry. How it fetches is its
:class:`~._fetch_mode.FetchMode`: a crawl's, or ``scrapy robotstxt``'s one
live attempt per file.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Protocol

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from ...sites._outcome import Kind, SiteOutcome
from ...sites._request_decision import PENDING, asked_crawl_delay
from ...sites._site import WEB_SCHEMES, exempt_by_meta, site_of, site_of_web_url
from ...sites._sitetable import SiteState, SiteTable
from .._clock import Clock, clock_of
from .._enabled import addon_enabled
from .._engine import wake_engine
from .._per_crawler import kept_on
from .._report import report_for
from ..cluster._pacing import ClusterPacer, cluster_pacer
from ..record._crawl_record import crawl_record
from ..settings._crawler_settings import robotstxt_settings
from ..settings._setting_names import warn_unknown_settings
from ..store._store_bridge import open_bridge
from ._close_watchdog import CloseWatchdog
from ._crawl_delay import CrawlDelays
from ._decisions import RequestDecisions
from ._deferral import Deferrals
from ._fetch_log import log_start
from ._fetch_mode import CRAWL, FetchMode
from ._fetcher import RobotsTxtFetcher
from ._released import META_RELEASED, ReleasedRequests
from ._robotstxt_fetches import RobotsTxtFetches, hand_back
from ._set_aside import SetAside
from ._tdmrep_robots import TdmRepRobotsCheck
from ._usage_gate import TdmRepSites, UsageGate

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ..settings._settings import RobotsTxtSettings


__all__ = ["META_RELEASED", "SiteListener", "SiteService", "make_site_service_with", "site_service"]

# the middleware's logger: these lines are documented under its name
logger = logging.getLogger("scrapy_rfc9309.middleware")

#: The crawler attribute the service is kept in.
_ATTRIBUTE = "_robotstxt_site_service"
#: The crawler attribute of what makes its service, when not a crawl's (the command's).
_MAKER = "_robotstxt_site_service_maker"


def site_service(crawler: Crawler, *, create: bool = True) -> SiteService | None:
    """The crawler's :class:`SiteService`, created on first use (``create``);
    ``None`` when ``ROBOTSTXT_OBEY`` is off (or, without ``create``, when no
    component made one: the middleware is not enabled)."""
    service: SiteService | None = getattr(crawler, _ATTRIBUTE, None)
    if service is not None or not create:
        return service
    make: Callable[[], SiteService] | None = getattr(crawler, _MAKER, None)
    if make is None:  # a crawl's
        settings = robotstxt_settings(crawler)
        if not settings.obey:
            return None
        if not addon_enabled(crawler.settings):  # the add-on has checked the names
            warn_unknown_settings(crawler.settings)
        make = partial(SiteService, crawler, settings)
    return kept_on(crawler, _ATTRIBUTE, make)


def make_site_service_with(crawler: Crawler, make: Callable[[], SiteService]) -> None:
    """The crawler's service will be ``make()``'s, made when first asked for
    (``scrapy robotstxt``: its one-attempt service, shared by the middlewares;
    made as the crawl opens, once the crawler's stats exist)."""
    setattr(crawler, _MAKER, make)


def _usage_gate(service: SiteService) -> UsageGate:
    """The service's usage gate (``ROBOTSTXT_PURPOSES``): the tdmrep.json of each
    site a declared purpose needs, settled into the service."""
    return UsageGate(
        service.crawler,
        service.settings,
        service.report,
        service.clock,
        on_settled=partial(_tdmrep_settled, service),
        on_start=service._start_watchdog,
        # with our queue, tdmrep.json fetched ahead waits for room too (pins)
        bounded=lambda: bool(service._queues),
        store=service._store,
        details={} if service.mode.tdmrep_details else None,
        robots_check=TdmRepRobotsCheck(service.settings, service._table.stale),
    )


def _tdmrep_settled(service: SiteService, site: str) -> None:
    """``site``'s tdmrep.json is settled: its requests go on unless its
    robots.txt is still to be settled (pending, or unreachable and deferred:
    HTTP: The Definitive Guide ch. 9), which releases them itself. Released
    now, they would be decided by the unreachable copy and dropped, while the
    site is tried again."""
    state = service._table.state(site, service.clock.monotonic())
    if state not in (SiteState.PENDING, SiteState.DEFERRED):
        service.release(site)


class SiteListener(Protocol):
    """A scheduler queue holding requests of sites whose robots.txt is not settled."""

    def site_released(self, site: str) -> None:
        """The requests of ``site`` can be handed out (and decided) now."""

    def spider_closed(self) -> None:
        """The spider closed: requests still held are dropped (or kept in JOBDIR)."""


class SiteService:
    """Each site's robots.txt for one crawl (RFC 9309 2.3, 2.4): one fetch per
    site at a time, at most ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` in flight, kept
    in the bounded site table, deferred while unreachable, released to the
    scheduler queues once settled, and everything let go when the spider closes.

    ``mode``: how each site's files are fetched and kept (:data:`~._fetch_mode.CRAWL`,
    or ``scrapy robotstxt``'s :data:`~._fetch_mode.ONE_ATTEMPT`).
    """

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        clock: Clock | None = None,
        mode: FetchMode = CRAWL,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self.mode = mode
        #: the time and the timers of this crawl's site state (tests inject one)
        self.clock = clock or clock_of(crawler)
        assert crawler.stats is not None
        self.stats = crawler.stats
        #: each site's outcome and the fetch in flight; waiters are Deferreds
        self._table: SiteTable[Deferred[SiteOutcome | None]] = SiteTable(settings.cache_max_sites)
        #: requests released by a fetch: decided by its copy within a bound
        self._released = ReleasedRequests(crawler, self._table.stale, self.clock, self.stats)
        #: our scheduler queues (memory and disk), told when a site is settled
        self._queues: list[SiteListener] = []
        self.report = report_for(crawler)
        #: ROBOTSTXT_RECORD_FILE: every decision recorded (None: no record)
        self.record = crawl_record(crawler, self.clock) if mode.persist else None
        self._fetcher = RobotsTxtFetcher(crawler, settings, self.clock)
        #: one attempt: Scrapy's RetryMiddleware never retries it either
        self._fetcher.scrapy_retry = mode.retry
        #: with a Redis store: each site's requests spaced across the cluster
        #: (made when first asked for: by our queue, the cluster-delay
        #: middleware or the extension; a crawl with none of them has none)
        self._pacer: ClusterPacer | None = None
        self._pacer_made = False
        #: ROBOTSTXT_STORE_URI: outcomes kept across runs and processes (None: memory only)
        self._store = (
            open_bridge(crawler, settings, self._fetcher.parse_and_announce, self.clock)
            if mode.persist
            else None
        )
        #: ROBOTSTXT_PURPOSES: the usage gate, and the tdmrep.json of each site it needs
        self.usage = _usage_gate(self) if settings.purposes else None
        self.tdmrep: TdmRepSites | None = None if self.usage is None else self.usage.tdmrep
        #: each site's Crawl-delay, told as its robots.txt comes into force and
        #: as requests obeying as other tokens are allowed
        crawl_delays = CrawlDelays(crawler, settings.token_of(None), settings.also_obey)
        #: each request's decision, made once (the queue's pop, the middleware)
        self.decisions = RequestDecisions(settings, self.usage, crawl_delays)
        self.deferrals = Deferrals(
            self._table,
            settings,
            self.stats,
            retry=self._retry,
            release=self.release,
            give_up=self._give_up_retry,
            clock=self.clock,
        )
        self.set_aside = SetAside(
            crawler, settings, self.report, self._queues, self._table.is_pending, self._pending
        )
        #: each site's robots.txt fetch, from its launch to its settling
        self._fetches = RobotsTxtFetches(
            crawler,
            settings,
            self._table,
            self.clock,
            fetcher=self._fetcher,
            store=self._store,
            report=self.report,
            deferrals=self.deferrals,
            set_aside=self.set_aside,
            release=self.release,
            queued=lambda: bool(self._queues),
            record=self.record,
            mode=mode,
            crawl_delays=crawl_delays,
        )
        #: the robots.txt downloads in flight, and the sites waiting for one
        self._launcher = self._fetches.launcher
        #: site -> its robots.txt download in flight (cancelled at close)
        self._downloads = self._launcher.in_flight
        #: while a file is pending: a look for a closing engine, which lets all go
        self.watchdog = CloseWatchdog(
            crawler,
            self.clock,
            table=self._table,
            deferrals=self.deferrals,
            launcher=self._launcher,
            tdmrep=self.tdmrep,
            release_all=self.release_all,
        )
        crawler.signals.connect(self._on_spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.set_aside.on_spider_idle, signal=signals.spider_idle)
        if mode.start_lines:
            log_start(settings, crawler.settings)

    # -- looking up ------------------------------------------------------------------

    @property
    def pacer(self) -> ClusterPacer | None:
        """The crawl's cluster pacer, on the crawl's clock, made at the first
        call; ``None`` when no site is paced cluster-wide."""
        if not self._pacer_made:
            self._pacer_made = True
            self._pacer = cluster_pacer(self.crawler, self.clock)
        return self._pacer

    @property
    def fetcher(self) -> RobotsTxtFetcher:
        """The robots.txt fetcher of this service's downloads (``--lint``'s too)."""
        return self._fetcher

    def site_for(self, request: Request) -> str | None:
        """The site whose robots.txt governs ``request``; ``None``: not checked.

        Read from the URL each time (:func:`site_of` keeps the sites of recent
        authorities), not with Scrapy's ``urlparse_cached``, which would keep
        the parsed URL with a request waiting in the queue (~400 bytes each)."""
        url = request.url
        if "dont_obey_robotstxt" in request.meta and exempt_by_meta(request.meta, url):
            return None
        if url.startswith(WEB_SCHEMES):  # most: read without a further call
            return site_of_web_url(url)
        if url.startswith(("data:", "file:")):
            return None
        return site_of(url)

    def fresh(self, site: str) -> SiteOutcome | None:
        """The site's outcome if it is in force now."""
        return self._table.fresh(site, self.clock.monotonic())

    def site_state(self, site: str, request: Request | None = None) -> SiteState:
        """What a request of ``site`` can do now (O(1)). With a declared purpose
        that needs tdmrep.json, a site is ``READY`` once that is settled too.

        A ``request`` released by an outcome (:meth:`mark_released`) is
        ``READY`` while that outcome is the site's last, expired or not.
        """
        state = self._table.state(site, self.clock.monotonic())
        if (
            state is not SiteState.READY
            and request is not None
            and self._released.outcome(site, request) is not None
        ):
            state = SiteState.READY
        if state is SiteState.READY and self.tdmrep is not None:
            return self.tdmrep.state(site)
        return state

    def outcome_for(self, site: str, request: Request) -> SiteOutcome | None:
        """The outcome that decides ``request`` now: the site's fresh one, else
        the one that released it (:meth:`mark_released`) even if expired since;
        ``None``: it must wait for a fetch."""
        outcome = self.fresh(site)
        if outcome is None:  # a fresh one decides; its release is not looked at
            outcome = self._released.outcome(site, request)
        request.meta.pop(META_RELEASED, None)
        return outcome

    def refused_now(self, site: str, request: Request) -> bool:
        """Whether ``request``, its site ``READY``, is known now to be dropped
        before download (:meth:`~._decisions.RequestDecisions.decide`, kept for
        the middleware): such a request never takes its site's turn in the
        cluster. ``False`` when not known yet (its tdmrep.json is pending: the
        middleware decides it, and the turn is taken at send)."""
        outcome = self.fresh(site) or self._released.outcome(site, request)
        if outcome is None or outcome.kind is Kind.NOT_DOWNLOADABLE:
            return False
        decision = self.decisions.decide(outcome, site, request, keep=True)
        return not decision.fetch and decision.cause != PENDING

    def asks_crawl_delay(self, site: str, request: Request) -> bool:
        """Whether the site's robots.txt in force asks a Crawl-delay of
        ``request``'s tokens that the crawl honours (``ROBOTSTXT_CRAWL_DELAY``):
        the queue then lets one of its requests into the downloader at a time."""
        if not self.settings.crawl_delay:
            return False
        outcome = self._table.stale(site)
        if outcome is None or not outcome.has_crawl_delay():  # most files: no token looked up
            return False
        tokens = (self.decisions.token(request), *self.settings.also_obey)
        return asked_crawl_delay(outcome, tokens) is not None

    def mark_released(self, site: str, request: Request) -> None:
        """``request`` waited for ``site``'s fetch, now settled: it is decided by
        that outcome, within its bound (:class:`~._released.ReleasedRequests`)."""
        self._released.mark(site, request)

    def _pending(self, site: str) -> bool:
        """Whether the site's robots.txt or tdmrep.json is still to be settled."""
        tdmrep = self.tdmrep
        return self._table.is_pending(site) or (
            tdmrep is not None and tdmrep.state(site) is SiteState.PENDING
        )

    # -- for the scheduler queues ------------------------------------------------------

    def answers_due(self) -> bool:
        """Whether a robots.txt download that started less than
        :data:`~._download_slots.SLOW_AFTER` ago is in flight: its site's
        requests are likely ready soon (one in flight longer is slow, perhaps
        hanging, and is not waited for)."""
        return self._launcher.answers_due()

    def register(self, queue: SiteListener) -> None:
        self._queues.append(queue)
        # deferral in use: its back-off replaces Scrapy's retry of robots.txt
        self._fetcher.scrapy_retry = self.mode.retry and self.settings.unreachable_defer <= 0

    def unregister(self, queue: SiteListener) -> None:
        if queue in self._queues:
            self._queues.remove(queue)
        if not self._queues:
            self._fetcher.scrapy_retry = self.mode.retry

    def pin(self, site: str, requests: int = 1) -> None:
        """``requests`` of ``site`` are queued, to be handed out: its outcome is not
        evicted meanwhile (nor its tdmrep.json, when a declared purpose needs it)."""
        self._table.pin(site, requests)
        if self.tdmrep is not None:
            self.tdmrep.pin(site, requests)

    def unpin(self, site: str) -> None:
        """A request of ``site`` left the queue; fetches ahead start if room freed."""
        if self.tdmrep is not None:
            self.tdmrep.unpin(site)
        if self._table.unpin(site) and self._launcher.has_waiting():
            self._launcher.start_waiting()

    def prefetch(self, site: str, request: Request | None = None) -> None:
        """Start the site's robots.txt fetch ahead of its requests, unless one is in
        flight; once it is settled, its tdmrep.json's, when a declared purpose
        needs it (:meth:`release` starts it as robots.txt settles)."""
        if (
            self.tdmrep is not None
            and self._table.state(site, self.clock.monotonic()) is SiteState.READY
        ):
            self.tdmrep.prefetch(site)  # only the tdmrep.json was missing
            return
        if self._table.start(site):
            self._launch(site, request, ahead=True)

    def release(self, site: str) -> None:
        """``site`` is settled (or no longer deferred): its requests go on; its
        tdmrep.json, when a declared purpose needs it, is fetched now (after its
        robots.txt, which may disallow it)."""
        if self.tdmrep is not None:
            self.tdmrep.prefetch(site)
        self._released.settled(site)
        self.set_aside.give_back(site, mark=self.mark_released)
        for queue in self._queues:
            queue.site_released(site)
        if self._queues:
            wake_engine(self.crawler)

    # -- one fetch per site ------------------------------------------------------------

    async def wait_for(self, site: str, request: Request | None) -> SiteOutcome | None:
        """The site's outcome once fetched; ``None`` if the spider closed first.
        ``request``: the page it is wanted for (``None``: for no page, as
        ``scrapy robotstxt`` asks).

        Each waiting request gets its own Deferred: a result passed down one
        shared Deferred's chain reaches only its first waiter.
        """
        waiter: Deferred[SiteOutcome | None] = Deferred()
        first = not self._table.waited_on(site)
        if self._table.join(site, waiter):
            self._launch(site, request, ahead=False)
        elif first:  # fetched ahead, perhaps not started: wanted now
            self._launcher.wanted(site)
        return await maybe_deferred_to_future(waiter)

    def start_fetch(self, site: str, request: Request) -> None:
        """Start the site's fetch for a request set aside, unless one is in flight."""
        if self._table.start(site):
            self._launch(site, request, ahead=False)

    def _launch(self, site: str, request: Request | None, *, ahead: bool) -> None:
        """Start the download of a site whose fetch the table has just started,
        or queue it while ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` are in flight (or,
        ahead of need, while the site table has no room)."""
        self._start_watchdog()
        self._launcher.launch(site, request, ahead=ahead)

    def _retry(self, site: str) -> None:
        """A deferred site's attempt is due (HTTP: The Definitive Guide ch. 9): it
        starts after the first attempts waiting, within half the downloads."""
        if not self._table.start(site):
            return
        self._start_watchdog()
        self._launcher.retry(site)

    def _give_up_retry(self, site: str) -> bool:
        """The site's deferral ends while its attempt waits for a download: the
        attempt is not made (``True``); ``False``: it is downloading, and goes on."""
        if site in self._downloads:
            return False
        if self._table.is_pending(site):
            hand_back(self._table.abandon(site), self._table.stale(site))
        return True

    # -- closing -------------------------------------------------------------------------

    def _start_watchdog(self) -> None:
        self.watchdog.start()

    def release_all(self) -> None:
        """Drop every waiting request and cancel every robots.txt download
        (or put them back in a scheduler that keeps its queue)."""
        requeued = self.set_aside.requeue_at_close()
        abandoned = self._table.abandon_all()
        waiting = sum(len(waiters) for _, waiters in abandoned)
        if waiting and not requeued:  # none: robots.txt fetched ahead by our queue
            logger.info(
                "Spider closing: dropping %d requests that waited on %d robots.txt downloads",
                waiting,
                len(abandoned),
            )
        for _, waiters in abandoned:
            hand_back(waiters, None)
        self.deferrals.cancel_all()
        self._launcher.cancel_all()
        if self.tdmrep is not None:  # its downloads cancelled, its waiting requests dropped
            self.tdmrep.abandon_all()
        self.set_aside.drop()
        self.watchdog.stop()

    def drop_held_at_close(self) -> None:
        """Drop the requests our scheduler queues still hold (kept with ``JOBDIR``).

        Called from ``spider_closed`` by the extension before its close
        summary, so the summary counts them, and by this service; the
        second call finds nothing left."""
        self.set_aside.closed = True
        for queue in list(self._queues):
            queue.spider_closed()
        self.set_aside.drop()

    def _on_spider_closed(self) -> None:
        self.drop_held_at_close()
        self.release_all()

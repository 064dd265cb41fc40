"""``RobotsTxtMiddleware``: Scrapy obeys robots.txt as RFC 9309 section 2.3 says.

Thin glue: parsing and matching live in the pure modules; this module fetches
one robots.txt per site (scheme + host + port), holds that site's requests on
their own Deferreds until it is parsed (the per-site state lives in the pure
site table), then lets each through or drops it
with ``IgnoreRequest`` naming the deciding line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import CancelledError, Deferred

from ..sites._outcome import Decision, Kind, SiteOutcome
from ..sites._site import robots_url, site_of
from ..sites._sitetable import Deferral, SiteState, SiteTable
from ._engine import robots_download, wake_engine
from ._fetcher import RobotsTxtFetcher, dotted_name
from ._report import allowed_verdict, report_for
from ._settings import RFC_MIN_SIZE, RobotsTxtSettings, SettingError, identity_warning
from ._site_files import count_dropped_at_close, drop_at_close
from ._store_bridge import open_bridge
from ._usage_gate import TdmRepSites, UsageGate, warn_if_purposes_ignored

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["RobotsTxtMiddleware", "SiteListener", "middleware_for"]

logger = logging.getLogger("scrapy_rfc9309.middleware")

_T = TypeVar("_T")

BUILTIN_MIDDLEWARE = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
#: How often, while a robots.txt is being fetched, to look for a closing engine.
CLOSE_POLL_SECONDS = 0.1

_TOKEN_CACHE_SIZE = 256
#: Meta key of a request set aside and given back to a scheduler queue that is
#: not ours: its own ``dont_filter`` (the copy is scheduled with ``dont_filter``
#: set, so that no duplicate filter drops it), restored when it comes back.
_META_SET_ASIDE = "_robotstxt_set_aside"
_KIND_BITS = {kind: index for index, kind in enumerate(Kind)}


def _engine_is_closing(crawler: Crawler) -> bool:
    """Whether the engine is closing the spider.

    Scrapy has no signal for this: the engine waits for every request in
    progress before ``spider_closed``, and requests held here would hold the
    close. ``engine._slot.closing`` is what Scrapy's own engine status report
    reads; if it is missing the engine is treated as open.
    """
    engine = crawler.engine
    if engine is None or not engine.running:
        return True
    slot = getattr(engine, "_slot", None)
    return slot is not None and getattr(slot, "closing", None) is not None


def refuse_builtin_middleware(crawler: Crawler) -> None:
    """Stop the crawl if Scrapy's own robots.txt middleware is enabled too."""
    from scrapy.utils.conf import build_component_list

    enabled = build_component_list(crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
    names = {
        item if isinstance(item, str) else f"{item.__module__}.{item.__qualname__}"
        for item in enabled
    }
    if BUILTIN_MIDDLEWARE in names:
        raise SettingError(
            "scrapy_rfc9309.RobotsTxtMiddleware replaces Scrapy's built-in robots.txt "
            "middleware, and both are enabled. Disable the built-in one in settings.py:\n"
            f'    DOWNLOADER_MIDDLEWARES = {{"{BUILTIN_MIDDLEWARE}": None, '
            '"scrapy_rfc9309.RobotsTxtMiddleware": 100}\n'
            'or enable the add-on instead: ADDONS = {"scrapy_rfc9309.Addon": 100}'
        )


def _kept_for(outcome: SiteOutcome) -> str:
    """``600 s (Cache-Control: max-age=600)``: how long an outcome is used, and why."""
    seconds = max(0.0, outcome.expires_at - time.monotonic())
    return f"{round(seconds):d} s ({outcome.lifetime})" if outcome.lifetime else f"{seconds:.0f} s"


class RequestSetAside(IgnoreRequest):
    """Raised for a request set aside while its site's robots.txt (or tdmrep.json)
    is pending, beyond ``ROBOTSTXT_HELD_SHARE``: it leaves the downloader, and a
    copy is scheduled again once the site is settled.

    The request raised for has no errback any more (its copy keeps it), so Scrapy
    passes this on silently: no log line, no errback, no drop."""


class SiteListener(Protocol):
    """A scheduler queue holding requests of sites whose robots.txt is not settled."""

    def site_released(self, site: str) -> None:
        """The requests of ``site`` can be handed out (and decided) now."""

    def spider_closed(self) -> None:
        """The spider closed: requests still held are dropped (or kept in JOBDIR)."""


_MIDDLEWARES: WeakKeyDictionary[Any, RobotsTxtMiddleware] = WeakKeyDictionary()


def middleware_for(crawler: Any) -> RobotsTxtMiddleware | None:
    """The crawler's :class:`RobotsTxtMiddleware`, if one is enabled."""
    return _MIDDLEWARES.get(crawler)


class RobotsTxtMiddleware:
    """A drop-in replacement for Scrapy's ``RobotsTxtMiddleware`` (RFC 9309).

    With :class:`~scrapy_rfc9309.RobotsTxtPriorityQueue` as the scheduler
    queue, requests of a site whose robots.txt is not settled wait in the
    queue (taking none of the crawl's concurrency) and reach this middleware
    only once it is; the decision stays here. With any other queue they wait
    here, as with Scrapy's own middleware.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.settings = RobotsTxtSettings.from_settings(crawler.settings)
        if not self.settings.obey:
            warn_if_purposes_ignored(crawler, self.settings)
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        refuse_builtin_middleware(crawler)
        self.crawler = crawler
        self.stats = crawler.stats
        #: each site's outcome and the fetch in flight; waiters are Deferreds
        self._table: SiteTable[Deferred[SiteOutcome | None]] = SiteTable(
            self.settings.cache_max_sites
        )
        #: site -> its robots.txt download in flight (cancelled at close)
        self._downloads: dict[str, Deferred[None]] = {}
        #: sites whose fetch waits for one of ROBOTSTXT_CONCURRENT_DOWNLOADS
        self._backlog: deque[str] = deque()
        #: our scheduler queues (memory and disk), told when a site is settled
        self._queues: list[SiteListener] = []
        #: site -> the timer of its next attempt while deferred
        self._timers: dict[str, Any] = {}
        #: requests waiting here on a robots.txt or tdmrep.json
        self._held = 0
        #: site -> copies of its requests set aside beyond ROBOTSTXT_HELD_SHARE
        #: (only with other scheduler queues), scheduled again once it is settled
        self._aside: dict[str, list[Request]] = {}
        self._told_set_aside = False
        #: requests held here for their site's robots.txt (put back in a
        #: scheduler that keeps its queue when the spider closes)
        self._waiting: dict[Request, str] = {}
        #: held requests whose copy was put back in the scheduler at close
        self._requeued: set[Request] = set()
        #: spider_closed was sent: the scheduler is closed
        self._closed = False
        self._tokens: dict[bytes, str] = {}
        #: site -> the outcome kinds already counted for it (a bit per kind), so
        #: per-site stats count each site once per crawl, whatever its refetches
        self._counted: dict[str, int] = {}
        self._report = report_for(crawler)
        self._watchdog: Any = None
        self._fetcher = RobotsTxtFetcher(crawler, self.settings)
        #: ROBOTSTXT_STORE_URI: outcomes kept across runs and processes (None: memory only)
        self._store = open_bridge(crawler, self.settings, self._fetcher)
        self._usage = (
            UsageGate(
                crawler,
                self.settings,
                self._report,
                on_settled=self._release_to_queues,
                on_start=self._start_watchdog,
            )
            if self.settings.purposes
            else None
        )
        crawler.signals.connect(self._on_spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self._on_spider_idle, signal=signals.spider_idle)
        _MIDDLEWARES[crawler] = self
        if self.settings.max_size < RFC_MIN_SIZE:
            logger.warning(
                "ROBOTSTXT_MAX_SIZE is %d bytes: RFC 9309 2.5 asks for at least %d; "
                "rules past the limit are ignored",
                self.settings.max_size,
                RFC_MIN_SIZE,
            )
        logger.info("Obeying robots.txt (RFC 9309) as %s", self.settings.describe_token())
        if self.settings.auth_disallow:
            logger.info(
                "ROBOTSTXT_AUTH_DISALLOW: a robots.txt answering 401 or 403 disallows the "
                "whole site (HTTP: The Definitive Guide ch. 9; RFC 9309 2.3.1.3 allows it)"
            )
        if warning := identity_warning(crawler.settings):
            logger.warning(warning)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        return cls(crawler)

    # -- per request -----------------------------------------------------------

    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | None:
        """Let ``request`` through, or raise ``IgnoreRequest`` saying which line forbids it.

        With a scheduler queue that is not ours, a request of a site whose
        robots.txt is pending, beyond ``ROBOTSTXT_HELD_SHARE`` of
        ``CONCURRENT_REQUESTS`` already waiting here, is set aside instead
        (:meth:`_set_aside`) and decided when it comes back.
        """
        site = self.site_for(request)
        if site is None:
            return None
        if _META_SET_ASIDE in request.meta:  # a copy given back: its own dont_filter again
            request.dont_filter = bool(request.meta.pop(_META_SET_ASIDE))
        outcome = self._table.fresh(site, time.monotonic())
        if outcome is None:
            if self._must_set_aside(request):
                self._set_aside(site, request)
            self._waiting[request] = site
            try:
                outcome = await self._held_while(self._wait_for(site, request))
            finally:
                self._waiting.pop(request, None)
        if outcome is None:
            if request in self._requeued:  # its copy is in the scheduler for the next run
                self._requeued.discard(request)
                raise RequestSetAside(f"Put back in the scheduler: {robots_url(site)} pending")
            self._drop_at_close(site, request)
        else:
            decision = outcome.decide(request.url, self._token(request), site)
            if self._usage is not None and decision.allowed:  # ROBOTSTXT_PURPOSES declared
                tdmrep = self._tdmrep_sites()
                if tdmrep is None or tdmrep.fresh(site) is not None:
                    await self._usage.check(outcome, site, request, self._token(request))
                else:  # it waits for the site's tdmrep.json
                    if self._must_set_aside(request):
                        self._set_aside(site, request, tdmrep=tdmrep)
                    await self._held_while(
                        self._usage.check(outcome, site, request, self._token(request))
                    )
            self._apply(decision, site, request)
            if request.meta.get("robotstxt_explain"):  # opt-in: the deciding line when allowed
                request.meta["robotstxt_verdict"] = allowed_verdict(
                    outcome, request.url, self._token(request)
                )
        return None

    def site_for(self, request: Request, *, cached: bool = True) -> str | None:
        """The site whose robots.txt governs ``request``; ``None``: not checked.

        ``cached=False`` (the scheduler queue) does not keep the parsed URL
        with the request, as Scrapy's ``urlparse_cached`` does for as long as
        the request lives: a request waiting in the queue would carry it.
        """
        if request.meta.get("dont_obey_robotstxt"):
            return None
        if request.url.startswith(("data:", "file:")):
            return None
        return site_of(urlparse_cached(request) if cached else request.url)

    # -- bounded holding with other scheduler queues ---------------------------------

    async def _held_while(self, waiting: Coroutine[Any, Any, _T]) -> _T:
        """Await ``waiting``, counted as a request held here (``robotstxt/held/max``)."""
        self._held += 1
        self.stats.max_value("robotstxt/held/max", self._held)
        try:
            return await waiting
        finally:
            self._held -= 1

    def _must_set_aside(self, request: Request) -> bool:
        """Whether a request about to wait here is set aside instead.

        Only with a scheduler queue that is not ours (ours holds requests of
        pending sites itself), once ``held_max`` requests wait here. Requests
        that did not come from the scheduler (``callback=NO_CALLBACK``: media
        pipelines send them with ``engine.download_async``) always wait: their
        sender awaits their response.
        """
        limit = self.settings.held_max
        return (
            limit is not None
            and self._held >= limit
            and not self._queues
            and request.callback is not NO_CALLBACK
            and not _engine_is_closing(self.crawler)
        )

    def _set_aside(self, site: str, request: Request, tdmrep: TdmRepSites | None = None) -> None:
        """Free the request's place in the crawl's concurrency until its site is settled.

        A downloader middleware cannot hand a request back to the scheduler
        for later: a request returned is scheduled again at once, and when
        every scheduled request waits on a pending robots.txt the engine and
        the middleware pass the same requests back and forth. So a copy is
        kept here (with ``dont_filter`` set, so that no duplicate filter drops
        it when it is scheduled again; its own value travels in its meta) and
        the request is ended with :class:`RequestSetAside`; its errback is
        removed first (the copy keeps it), so Scrapy ends it silently. The
        copy is scheduled again (``engine.crawl``, its priority kept) once the
        site's robots.txt (or tdmrep.json) is settled, and decided then, as
        any request; it is dropped, counted, if the spider closes first.
        """
        copy = request.replace(dont_filter=True)
        copy.meta[_META_SET_ASIDE] = request.dont_filter
        # kept before the fetch starts: a fetch that fails at once settles the
        # site (and gives back its copies) before _launch returns
        self._aside.setdefault(site, []).append(copy)
        request.errback = None
        self.stats.inc_value("robotstxt/set_aside")
        if not self._told_set_aside:
            self._told_set_aside = True
            logger.info(
                "%d requests wait for robots.txt files (ROBOTSTXT_HELD_SHARE of "
                "CONCURRENT_REQUESTS); further requests of sites whose robots.txt is "
                "pending are set aside and scheduled again once it is fetched",
                self._held,
                extra={"spider": self.crawler.spider},
            )
        if tdmrep is not None:
            tdmrep.prefetch(site)
        elif self._table.start(site):
            self._launch(site, request)
        raise RequestSetAside(f"Set aside until the robots.txt of {site} is fetched")

    def _site_pending(self, site: str) -> bool:
        """Whether the site's robots.txt or tdmrep.json is still to be settled."""
        tdmrep = self._tdmrep_sites()
        return self._table.is_pending(site) or (
            tdmrep is not None and tdmrep.state(site) is SiteState.PENDING
        )

    def _give_back(self, site: str) -> None:
        """Schedule the copies set aside for ``site`` again; its outcome is known."""
        copies = self._aside.pop(site, None)
        if not copies:
            return
        engine = self.crawler.engine
        if engine is None or _engine_is_closing(self.crawler):
            self._drop_set_aside({site: copies})
            return
        for index, copy in enumerate(copies):
            try:
                engine.crawl(copy)
            except RuntimeError:  # no spider open any more: the crawl is closing
                self._drop_set_aside({site: copies[index:]})
                return

    def _on_spider_idle(self) -> None:
        """Keep the spider open while requests are set aside for a pending site.

        Between the end of a robots.txt download and its site's settling (the
        parse runs in slices) the downloader and the scheduler can both be
        empty; the copies are scheduled once it is settled.
        """
        for site in list(self._aside):
            if not self._site_pending(site):  # settled without a give-back: never wait for it
                self._give_back(site)
        if self._aside:
            raise DontCloseSpider

    def _requeue_at_close(self, *, held: bool = True) -> bool:
        """Put the requests held here and the copies set aside back in the
        scheduler, for the next run of a crawl whose scheduler keeps its queue
        (``JOBDIR``, ``SCHEDULER_PERSIST``); ``False``: it does not, or it is
        closed already, and they are dropped.

        Called while the engine closes, before Scrapy closes the scheduler
        (the engine waits for the requests held here first). Each goes back
        as a copy with ``dont_filter`` set, so that the duplicate filter of
        the next run does not drop it (its own value travels in its meta, as
        for a request set aside); the held request itself ends silently, as
        a request set aside does. Counted in ``robotstxt/requeued_at_close``.
        """
        engine = self.crawler.engine
        if not self.settings.keeps_queue or self._closed or engine is None:
            return False
        waiting = [
            request
            for request, site in self._waiting.items()
            if held
            and request.callback is not NO_CALLBACK  # its sender awaits it: dropped
            and request not in self._requeued
            and self._table.is_pending(site)  # abandoned next, so it ends with no outcome
        ]
        aside, self._aside = self._aside, {}
        copies = [copy for site_copies in aside.values() for copy in site_copies]
        for request in waiting:
            copy = request.replace(dont_filter=True)
            copy.meta[_META_SET_ASIDE] = request.dont_filter
            request.errback = None
            copies.append(copy)
            self._requeued.add(request)
        for copy in copies:
            engine.crawl(copy)
        if copies:
            self.stats.inc_value("robotstxt/requeued_at_close", len(copies))
            logger.info(
                "%d requests waiting for robots.txt put back in the scheduler for the next run",
                len(copies),
                extra={"spider": self.crawler.spider},
            )
        return True

    def _drop_set_aside(self, aside: dict[str, list[Request]] | None = None) -> None:
        """Drop copies set aside (all of them by default): the spider closes."""
        if aside is None:
            aside, self._aside = self._aside, {}
        if self.settings.keeps_queue and not self._closed and self.crawler.engine is not None:
            self._aside.update(aside)
            if self._requeue_at_close(held=False):
                return
        dropped = sum(len(copies) for copies in aside.values())
        if not dropped:
            return
        logger.info(
            "Spider closing: dropping %d requests set aside while their site's robots.txt "
            "(or tdmrep.json) was pending (%d sites)",
            dropped,
            len(aside),
            extra={"spider": self.crawler.spider},
        )
        for site, copies in aside.items():
            for copy in copies:
                count_dropped_at_close(
                    self.crawler, self._report, logger, site, robots_url(site), copy
                )

    # -- for the scheduler queue ------------------------------------------------

    def site_state(self, site: str) -> SiteState:
        """What a request of ``site`` can do now (O(1)). With a declared purpose
        that needs tdmrep.json, a site is ``READY`` once that is settled too."""
        state = self._table.state(site, time.monotonic())
        tdmrep = self._tdmrep_sites()
        if state is SiteState.READY and tdmrep is not None:
            return tdmrep.state(site)
        return state

    def prefetch(self, site: str, request: Request | None = None) -> None:
        """Start the site's robots.txt fetch ahead of its requests, unless one is in
        flight (and its tdmrep.json's, when a declared purpose needs it)."""
        tdmrep = self._tdmrep_sites()
        if tdmrep is not None:
            tdmrep.prefetch(site)
            if self._table.state(site, time.monotonic()) is SiteState.READY:
                return  # only the tdmrep.json was missing
        if self._table.start(site):
            self._launch(site, request)

    def _tdmrep_sites(self) -> TdmRepSites | None:
        return None if self._usage is None else self._usage.tdmrep

    def register(self, queue: SiteListener) -> None:
        self._queues.append(queue)
        # deferral in use: its back-off replaces Scrapy's retry of robots.txt
        self._fetcher.scrapy_retry = self.settings.unreachable_defer <= 0

    def unregister(self, queue: SiteListener) -> None:
        if queue in self._queues:
            self._queues.remove(queue)
        if not self._queues:
            self._fetcher.scrapy_retry = True

    def _release_to_queues(self, site: str) -> None:
        self._give_back(site)
        for queue in self._queues:
            queue.site_released(site)
        if self._queues:
            wake_engine(self.crawler)

    def _token(self, request: Request) -> str:
        if self.settings.user_agent_token:
            return self.settings.user_agent_token
        header = request.headers.get(b"User-Agent") or b""
        token = self._tokens.get(header)
        if token is None:
            token = self.settings.token_for_header(header)
            if len(self._tokens) < _TOKEN_CACHE_SIZE:
                self._tokens[header] = token
        return token

    def _apply(self, decision: Decision, site: str, request: Request) -> None:
        self._report.decided(site, decision.allowed)
        if decision.allowed:
            self.stats.inc_value("robotstxt/allowed")
            return
        self.stats.inc_value("robotstxt/forbidden")
        self.stats.inc_value(f"robotstxt/forbidden/{decision.cause}")
        verdict = decision.verdict
        if verdict is not None and verdict.line is not None and verdict.rule is not None:
            self._report.dropped_by_rule(site, verdict.line, verdict.rule)
        logger.debug("%s: %s", decision.reason, request, extra={"spider": self.crawler.spider})
        raise IgnoreRequest(decision.reason)

    def _drop_at_close(self, site: str, request: Request) -> None:
        drop_at_close(self.crawler, self._report, logger, site, robots_url(site), request)

    # -- one fetch per site ------------------------------------------------------

    async def _wait_for(self, site: str, request: Request) -> SiteOutcome | None:
        """The site's outcome once fetched; ``None`` if the spider closed first.

        Each waiting request gets its own Deferred: a result passed down one
        shared Deferred's chain reaches only its first waiter.
        """
        waiter: Deferred[SiteOutcome | None] = Deferred()
        if self._table.join(site, waiter):
            self._launch(site, request)
        return await maybe_deferred_to_future(waiter)

    def _launch(self, site: str, request: Request | None) -> None:
        """Start the download of a site whose fetch the table has just started,
        or queue it while ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` are in flight."""
        self._start_watchdog()
        if len(self._downloads) >= self.settings.concurrent_downloads:
            self._backlog.append(site)
            return
        download = deferred_from_coro(self._fetch(site, request))
        if not download.called:
            self._downloads[site] = download

    def _download_done(self, site: str) -> None:
        self._downloads.pop(site, None)
        limit = self.settings.concurrent_downloads
        while self._backlog and len(self._downloads) < limit:
            waiting = self._backlog.popleft()
            if self._table.is_pending(waiting) and waiting not in self._downloads:
                self._launch(waiting, None)

    async def _fetch(self, site: str, request: Request | None) -> None:
        url = robots_url(site)
        stored = False
        try:
            outcome = None
            if self._store is not None:  # a fresh copy in the store, or its lease taken
                outcome = await self._store.obtain(site, request)
                stored = outcome is not None
            if outcome is None:
                self.stats.inc_value("robotstxt/request_count")
                if self._table.deferral(site) is not None:
                    # an attempt while deferred, not a cached copy that expired (RFC 9309 2.4)
                    self.stats.inc_value("robotstxt/deferred/retries")
                elif self._table.stale(site) is not None:
                    self.stats.inc_value("robotstxt/refetch")
                with robots_download(self.crawler):
                    outcome = await self._fetcher.fetch(url, request)
        except (CancelledError, asyncio.CancelledError):
            if self._store is not None:
                self._store.abandoned(site)
            logger.info("robots.txt download cancelled at close: %s", url)
            self._download_done(site)
            self._hand_back(self._table.abandon(site), None)
            if site in self._aside:
                self._drop_set_aside({site: self._aside.pop(site)})
            return
        except Exception as exc:  # not an answer of the site: never pass it off as one
            outcome = self._internal_error(exc, url)
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
        self._download_done(site)
        if not self._table.is_pending(site):  # abandoned: the spider closed meanwhile
            if self._store is not None and not stored:
                self._store.fetched(site, outcome)
            return
        was_deferred = self._table.deferral(site) is not None
        settled = self._table.settle(site, outcome.compact())
        if self._store is not None and not stored:
            # saved and the lease released, off the reactor
            self._store.fetched(site, outcome, kept=settled.kept_stale)
        deferral = None
        if settled.outcome.kind is Kind.UNREACHABLE and self._queues:
            deferral = self._defer(site, settled.outcome, was_deferred)
        elif was_deferred:
            self.stats.inc_value("robotstxt/deferred/recovered")
            logger.info("robots.txt retrieved after deferral: %s", outcome.source or url)
        if settled.kept_stale:
            # RFC 9309 2.4: while unreachable, a copy cached earlier stays in use.
            logger.warning(
                "robots.txt unreachable (%s): %s; keeping the copy fetched earlier (RFC 9309 2.4)",
                outcome.detail,
                outcome.source or url,
            )
        elif deferral is not None:
            self._count_site(site, outcome.kind)
            self._report.fetched(site, outcome)
            self._log_deferral(outcome, url, site, deferral, first=not was_deferred)
        else:
            self._count_site(site, outcome.kind)
            self._report.fetched(site, outcome)
            self._log_outcome(outcome, url, site)
        if self._table.evictions:
            self.stats.set_value("robotstxt/cache/evicted", self._table.evictions)
        self._hand_back(settled.waiters, settled.outcome)
        if deferral is None:
            self._release_to_queues(site)

    # -- deferral of unreachable sites (with our scheduler queue) ------------------

    def _defer(self, site: str, outcome: SiteOutcome, was_deferred: bool) -> Deferral | None:
        """Keep the site's queued requests waiting while its robots.txt is unreachable.

        HTTP: The Definitive Guide ch. 9: on a temporary failure, defer visits
        until the robots.txt can be retrieved; RFC 9309 2.3.1.4 (complete
        disallow) holds meanwhile: nothing of the site is fetched. Tried again
        with a doubling back-off, never sooner than its ``Retry-After``, up to
        ``ROBOTSTXT_UNREACHABLE_DEFER`` seconds; ``None`` once that is over.
        """
        now = time.monotonic()
        asked = outcome.expires_at if outcome.retry_after else None
        limit = self.settings.unreachable_defer
        if asked is not None and self._table.refuse_deferral(site, now, limit, asked):
            # no attempt can come before the deadline: the requests are dropped now
            self.stats.inc_value("robotstxt/deferred/expired")
            logger.warning(
                "robots.txt unreachable (%s): %s asks to be tried again in %s s, after "
                "ROBOTSTXT_UNREACHABLE_DEFER (%g s) would end; the requests that wait for "
                "it are dropped now (RFC 9309 2.3.1.4)",
                outcome.detail,
                robots_url(site),
                f"{round(max(0.0, asked - now), 1):g}",
                limit,
            )
            return None
        deferral = self._table.defer(site, now, limit, asked)
        if deferral is None:
            if was_deferred:
                self._deferral_expired(site)
            return None
        if not was_deferred:
            self.stats.inc_value("robotstxt/deferred")
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor
        self._cancel_timer(site)
        self._timers[site] = reactor.callLater(
            max(0.0, deferral.due - now), self._deferral_due, site
        )
        return deferral

    def _deferral_due(self, site: str) -> None:
        self._timers.pop(site, None)
        deferral = self._table.deferral(site)
        if deferral is None:
            return
        if deferral.retry_at is not None and time.monotonic() < deferral.deadline:
            self.prefetch(site)
            return
        self._table.end_deferral(site)
        self._deferral_expired(site)
        self._release_to_queues(site)

    def _deferral_expired(self, site: str) -> None:
        self.stats.inc_value("robotstxt/deferred/expired")
        logger.warning(
            "robots.txt still unreachable after ROBOTSTXT_UNREACHABLE_DEFER (%g s): %s; "
            "the requests that waited for it are dropped (RFC 9309 2.3.1.4)",
            self.settings.unreachable_defer,
            robots_url(site),
        )

    def _cancel_timer(self, site: str) -> None:
        timer = self._timers.pop(site, None)
        if timer is not None and timer.active():
            timer.cancel()

    def _log_deferral(
        self, outcome: SiteOutcome, url: str, site: str, deferral: Deferral, *, first: bool
    ) -> None:
        now = time.monotonic()
        when = (
            f"tried again in {round(max(0.0, deferral.retry_at - now), 1):g} s"
            if deferral.retry_at is not None
            else "not tried again before then"
        )
        logger.log(
            logging.WARNING if first else logging.INFO,
            "robots.txt unreachable (%s): %s; requests to %s wait in the scheduler for at "
            "most %s s more (ROBOTSTXT_UNREACHABLE_DEFER; RFC 9309 2.3.1.4, HTTP: The "
            "Definitive Guide ch. 9), %s",
            outcome.detail,
            outcome.source or url,
            site,
            f"{round(max(0.0, deferral.deadline - now), 1):g}",
            when,
        )

    @staticmethod
    def _hand_back(
        waiters: list[Deferred[SiteOutcome | None]], outcome: SiteOutcome | None
    ) -> None:
        for waiter in waiters:
            waiter.callback(outcome)

    def _internal_error(self, exc: Exception, url: str) -> SiteOutcome:
        """A failure that is not the site's answer: a bug or an incompatible component.

        Logged at ERROR with its traceback and counted in
        ``robotstxt/internal_error``; the site is disallowed (nothing is
        known of its rules) and tried again after ``ROBOTSTXT_UNREACHABLE_TTL``.
        """
        self.stats.inc_value("robotstxt/internal_error")
        logger.error(
            "Internal error while fetching %s; requests to its site are dropped "
            "(this is not the site's answer)",
            url,
            exc_info=exc,
            extra={"spider": self.crawler.spider},
        )
        expires = time.monotonic() + self.settings.unreachable_ttl
        return SiteOutcome(Kind.INTERNAL_ERROR, None, f"{dotted_name(exc)}: {exc}", expires)

    def _count_site(self, site: str, kind: Kind) -> None:
        """Per-site stats: each site once per crawl in ``robotstxt/sites`` and per kind."""
        bit = 1 << _KIND_BITS[kind]
        seen = self._counted.get(site)
        if seen is None:
            self.stats.inc_value("robotstxt/sites")
            seen = 0
        if not seen & bit:
            self._counted[site] = seen | bit
            if kind is not Kind.INTERNAL_ERROR:  # that one counts each error
                self.stats.inc_value(f"robotstxt/{kind.value}")

    def _log_outcome(self, outcome: SiteOutcome, url: str, site: str) -> None:
        source = outcome.source or url
        if outcome.kind is Kind.UNREACHABLE:
            logger.warning(
                "robots.txt unreachable (%s): %s; requests to %s are dropped "
                "(RFC 9309 2.3.1.4), tried again in %s s",
                outcome.detail,
                source,
                site,
                f"{round(max(0.0, outcome.expires_at - time.monotonic()), 1):g}",
            )
        elif outcome.kind is Kind.RESTRICTED:
            logger.warning(
                "robots.txt answered %s: %s; requests to %s are dropped "
                "(ROBOTSTXT_AUTH_DISALLOW; HTTP: The Definitive Guide ch. 9)",
                outcome.detail,
                source,
                site,
            )
        elif outcome.kind is Kind.UNAVAILABLE:
            logger.debug(
                "robots.txt unavailable (%s): %s; everything allowed (RFC 9309 2.3.1.3); kept %s",
                outcome.detail,
                source,
                _kept_for(outcome),
            )
        elif outcome.kind is Kind.PARSED:
            logger.debug(
                "robots.txt parsed (%s): %s %r; kept %s",
                outcome.detail,
                source,
                outcome.robots,
                _kept_for(outcome),
            )

    def _start_watchdog(self) -> None:
        if self._watchdog is None:
            from twisted.internet import task

            self._watchdog = task.LoopingCall(self._release_if_closing)
            self._watchdog.start(CLOSE_POLL_SECONDS, now=False)

    def _stop_watchdog(self) -> None:
        if self._watchdog is not None:
            if self._watchdog.running:
                self._watchdog.stop()
            self._watchdog = None

    def _release_if_closing(self) -> None:
        tdmrep = self._tdmrep_sites()
        if (
            not self._downloads
            and not self._table.has_pending()
            and not self._timers
            and (tdmrep is None or not tdmrep.has_pending())
        ):
            self._stop_watchdog()
        elif _engine_is_closing(self.crawler):
            self._release_all()

    def _release_all(self) -> None:
        """Drop every waiting request and cancel every robots.txt download
        (or put them back in a scheduler that keeps its queue)."""
        requeued = self._requeue_at_close()
        abandoned = self._table.abandon_all()
        waiting = sum(len(waiters) for _, waiters in abandoned)
        if waiting and not requeued:  # none: robots.txt fetched ahead by our queue
            logger.info(
                "Spider closing: dropping %d requests that waited on %d robots.txt downloads",
                waiting,
                len(abandoned),
            )
        for _, waiters in abandoned:
            self._hand_back(waiters, None)
        self._backlog.clear()
        for site in list(self._timers):
            self._cancel_timer(site)
        self._table.end_all_deferrals()
        downloads, self._downloads = self._downloads, {}
        for download in downloads.values():
            download.cancel()
        tdmrep = self._tdmrep_sites()
        if tdmrep is not None:  # its downloads cancelled, its waiting requests dropped
            tdmrep.abandon_all()
        self._drop_set_aside()
        self._stop_watchdog()

    def drop_held_at_close(self) -> None:
        """Drop the requests our scheduler queues still hold (kept with ``JOBDIR``).

        Called from ``spider_closed`` by the extension before its close
        summary, so the summary counts them, and by this middleware; the
        second call finds nothing left."""
        self._closed = True
        for queue in list(self._queues):
            queue.spider_closed()
        self._drop_set_aside()

    def _on_spider_closed(self) -> None:
        self.drop_held_at_close()
        self._release_all()

"""Requests set aside while their site is pending, with a scheduler queue that is not ours.

With :class:`~scrapy_rfc9309.RobotsTxtPriorityQueue` requests of a pending
site wait in the queue; with any other queue they wait in the middleware,
and beyond ``ROBOTSTXT_HELD_SHARE`` of ``CONCURRENT_REQUESTS`` a copy is set
aside here and scheduled again once the site is settled. When the spider
closes, the copies (and the requests still held) are put back in a scheduler
that keeps its queue (``JOBDIR``, ``SCHEDULER_PERSIST``), or dropped, counted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from weakref import WeakSet

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http.request import NO_CALLBACK

from ...sites._site import robots_url
from .._engine import engine_is_closing, engine_of, watch_scheduler
from ..settings._settings import set_aside_max
from ._site_files import count_dropped_at_close

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from .._report import CrawlReport
    from ..settings._settings import RobotsTxtSettings

__all__ = ["RequestSetAside", "SetAside"]

# the middleware's logger: these lines are documented under its name
logger = logging.getLogger("scrapy_rfc9309.middleware")

#: Meta key of a request set aside and given back to a scheduler queue that is
#: not ours: its own ``dont_filter`` (the copy is scheduled with ``dont_filter``
#: set, so that no duplicate filter drops it), restored when it comes back.
META_SET_ASIDE = "_robotstxt_set_aside"


class RequestSetAside(IgnoreRequest):
    """Raised for a request set aside while its site's robots.txt (or tdmrep.json)
    is pending, beyond ``ROBOTSTXT_HELD_SHARE``: it leaves the downloader, and a
    copy is scheduled again once the site is settled.

    The request raised for has no errback any more (its copy keeps it), so Scrapy
    passes this on silently: no log line, no errback, no drop."""


class SetAside:
    """The copies set aside per site, and the requests held in the middleware."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        report: CrawlReport,
        queues: Sequence[Any],
        robots_pending: Callable[[str], bool],
        site_pending: Callable[[str], bool],
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self._report = report
        #: our scheduler queues (they hold requests themselves: nothing is set aside)
        self._queues = queues
        #: whether the site's robots.txt fetch is in flight
        self._robots_pending = robots_pending
        #: whether the site's robots.txt or tdmrep.json is still to be settled
        self._site_pending = site_pending
        #: site -> copies of its requests set aside, scheduled again once it is settled
        self._aside: dict[str, list[Request]] = {}
        #: how many copies ``_aside`` holds; at most ``ROBOTSTXT_SET_ASIDE_MAX``
        self._aside_count = 0
        self._aside_max = set_aside_max(crawler.settings)
        self._told = False
        #: requests held in the middleware for their site's robots.txt (put back in
        #: a scheduler that keeps its queue when the spider closes)
        self.waiting: dict[Request, str] = {}
        #: held requests whose copy was put back in the scheduler at close
        self._requeued: set[Request] = set()
        #: spider_closed was sent: the scheduler is closed
        self.closed = False
        #: the requests the scheduler handed out and not yet set aside: only they
        #: may be (``None``: not known, then requests sent with
        #: ``callback=NO_CALLBACK`` are told apart instead)
        self._scheduled: WeakSet[Request] | None = None
        crawler.signals.connect(self._say_if_queue_not_ours, signal=signals.spider_opened)

    def _say_if_queue_not_ours(self) -> None:
        """Once at start-up (the scheduler is open by then): with a queue that is
        not ours, robots.txt is not fetched ahead and unreachable sites are not deferred."""
        if self._queues:
            return
        if self.settings.held_max is not None:
            scheduled: WeakSet[Request] = WeakSet()
            if watch_scheduler(self.crawler, scheduled.add):
                self._scheduled = scheduled
        settings = self.crawler.settings
        defer_set = settings.getpriority("ROBOTSTXT_UNREACHABLE_DEFER") is not None
        logger.log(
            logging.WARNING if defer_set and self.settings.unreachable_defer > 0 else logging.INFO,
            "The scheduler does not use %s: robots.txt files are not "
            "fetched ahead, and ROBOTSTXT_UNREACHABLE_DEFER does not apply (an unreachable "
            "robots.txt drops its site's requests at once); requests wait in the middleware",
            _queue_left_out(settings),
            extra={"spider": self.crawler.spider},
        )

    @staticmethod
    def restore(request: Request) -> None:
        """A copy given back gets its own ``dont_filter`` again."""
        if META_SET_ASIDE in request.meta:
            request.dont_filter = bool(request.meta.pop(META_SET_ASIDE))

    def was_requeued(self, request: Request) -> bool:
        """Whether ``request``'s copy went back in the scheduler for the next run."""
        if request in self._requeued:
            self._requeued.discard(request)
            return True
        return False

    def must(self, request: Request, held: int) -> bool:
        """Whether a request about to wait in the middleware is set aside instead.

        Only with a scheduler queue that is not ours (ours holds requests of
        pending sites itself), once ``held_max`` requests wait there. Requests
        that did not come from the scheduler (media pipelines and extensions
        send them with ``engine.download_async``) always wait: their sender
        awaits their response. They are told apart by the scheduler's requests
        being watched as it hands them out; where it cannot be watched, by
        ``callback=NO_CALLBACK``. Past ``ROBOTSTXT_SET_ASIDE_MAX`` copies in
        memory, requests wait in the middleware again.
        """
        limit = self.settings.held_max
        scheduled = self._scheduled
        return (
            limit is not None
            and held >= limit
            and self._aside_count < self._aside_max
            and not self._queues
            and (request.callback is not NO_CALLBACK if scheduled is None else request in scheduled)
            and not engine_is_closing(self.crawler)
        )

    def keep(self, site: str, request: Request, held: int) -> None:
        """Free the request's place in the crawl's concurrency until its site is settled.

        A downloader middleware cannot hand a request back to the scheduler
        for later: a request returned is scheduled again at once, and when
        every scheduled request waits on a pending robots.txt the engine and
        the middleware pass the same requests back and forth. So a copy is
        kept here (with ``dont_filter`` set, so that no duplicate filter drops
        it when it is scheduled again; its own value travels in its meta) and
        the caller ends the request with :class:`RequestSetAside`; its errback
        is removed first (the copy keeps it), so Scrapy ends it silently. The
        copy is scheduled again (``engine.crawl``, its priority kept) once the
        site's robots.txt (or tdmrep.json) is settled, and decided then, as
        any request; it is dropped, counted, if the spider closes first.
        Call before the site's fetch starts: a fetch that fails at once
        settles the site (and gives back its copies) before it returns.
        """
        copy = request.replace(dont_filter=True)
        copy.meta[META_SET_ASIDE] = request.dont_filter
        self._aside.setdefault(site, []).append(copy)
        self._aside_count += 1
        request.errback = None
        stats = self.crawler.stats
        assert stats is not None
        stats.inc_value("robotstxt/set_aside")
        if not self._told:
            self._told = True
            logger.info(
                "%d requests wait for robots.txt files (ROBOTSTXT_HELD_SHARE of "
                "CONCURRENT_REQUESTS); further requests of sites whose robots.txt is "
                "pending are set aside and scheduled again once it is fetched",
                held,
                extra={"spider": self.crawler.spider},
            )

    def give_back(self, site: str, mark: Callable[[str, Request], None] | None = None) -> None:
        """Schedule the copies set aside for ``site`` again; its outcome is known
        (``mark``: each copy is decided by it, even once expired)."""
        copies = self._aside.pop(site, None)
        if not copies:
            return
        if mark is not None:
            for copy in copies:
                mark(site, copy)
        self._aside_count -= len(copies)
        engine = self.crawler.engine
        if engine is None or engine_is_closing(self.crawler):
            self.drop({site: copies})
            return
        for index, copy in enumerate(copies):
            try:
                engine.crawl(copy)
            except RuntimeError:  # no spider open any more: the crawl is closing
                self.drop({site: copies[index:]})
                return

    def drop_site(self, site: str) -> None:
        """The site's fetch was cancelled: its copies are dropped (or put back)."""
        if site in self._aside:
            copies = self._aside.pop(site)
            self._aside_count -= len(copies)
            self.drop({site: copies})

    def on_spider_idle(self) -> None:
        """Keep the spider open while requests are set aside for a pending site.

        Between the end of a robots.txt download and its site's settling (the
        parse runs in slices) the downloader and the scheduler can both be
        empty; the copies are scheduled once it is settled.
        """
        for site in list(self._aside):
            if not self._site_pending(site):  # settled without a give-back: never wait for it
                self.give_back(site)
        if self._aside:
            raise DontCloseSpider

    def requeue_at_close(self, *, held: bool = True) -> bool:
        """Put the requests held in the middleware and the copies set aside back
        in the scheduler, for the next run of a crawl whose scheduler keeps its
        queue (``JOBDIR``, ``SCHEDULER_PERSIST``); ``False``: it does not, or it
        is closed already, and they are dropped.

        Called while the engine closes, before Scrapy closes the scheduler
        (the engine waits for the requests held first). Each goes back as a
        copy with ``dont_filter`` set, so that the duplicate filter of the
        next run does not drop it (its own value travels in its meta, as for
        a request set aside); the held request itself ends silently, as a
        request set aside does. Counted in ``robotstxt/requeued_at_close``.
        """
        engine = self.crawler.engine
        if not self.settings.keeps_queue or self.closed or engine is None:
            return False
        waiting = [
            request
            for request, site in self.waiting.items()
            if held
            and request.callback is not NO_CALLBACK  # its sender awaits it: dropped
            and request not in self._requeued
            and self._robots_pending(site)  # abandoned next, so it ends with no outcome
        ]
        aside, self._aside = self._aside, {}
        self._aside_count = 0
        copies = [copy for site_copies in aside.values() for copy in site_copies]
        for request in waiting:
            copy = request.replace(dont_filter=True)
            copy.meta[META_SET_ASIDE] = request.dont_filter
            request.errback = None
            copies.append(copy)
            self._requeued.add(request)
        for copy in copies:
            engine.crawl(copy)
        if copies:
            stats = self.crawler.stats
            assert stats is not None
            stats.inc_value("robotstxt/requeued_at_close", len(copies))
            logger.info(
                "%d requests waiting for robots.txt put back in the scheduler for the next run",
                len(copies),
                extra={"spider": self.crawler.spider},
            )
        return True

    def drop(self, aside: dict[str, list[Request]] | None = None) -> None:
        """Drop copies set aside (all of them by default): the spider closes."""
        if aside is None:
            aside, self._aside = self._aside, {}
            self._aside_count = 0
        if self.settings.keeps_queue and not self.closed and engine_of(self.crawler) is not None:
            self._aside.update(aside)
            self._aside_count += sum(len(copies) for copies in aside.values())
            if self.requeue_at_close(held=False):
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


def _queue_left_out(settings: Any) -> str:
    """Our queue the scheduler does not use, and the setting that decided so:
    ``SCHEDULER_QUEUE_CLASS`` under scrapy-redis's scheduler,
    ``SCHEDULER_PRIORITY_QUEUE`` under Scrapy's, else ``SCHEDULER`` itself."""
    from scrapy.core.scheduler import Scheduler
    from scrapy.utils.misc import load_object

    from .._enabled import OUR_QUEUE, OUR_REDIS_QUEUE, is_scrapy_redis_scheduler

    scheduler = settings.get("SCHEDULER")
    if is_scrapy_redis_scheduler(scheduler):
        queue = _name(settings.get("SCHEDULER_QUEUE_CLASS"))
        return (
            f"{OUR_REDIS_QUEUE} (SCHEDULER_QUEUE_CLASS is {queue}, under scrapy-redis's SCHEDULER)"
        )
    try:
        scheduler_cls = load_object(scheduler) if isinstance(scheduler, str) else scheduler
    except (ImportError, ValueError, NameError):
        scheduler_cls = None
    if isinstance(scheduler_cls, type) and issubclass(scheduler_cls, Scheduler):
        queue = _name(settings.get("SCHEDULER_PRIORITY_QUEUE"))
        return f"{OUR_QUEUE} (SCHEDULER_PRIORITY_QUEUE is {queue})"
    return f"{OUR_QUEUE} (SCHEDULER is {_name(scheduler)}, not Scrapy's nor scrapy-redis's)"


def _name(component: Any) -> str:
    """A component setting as its import path (a class given as such too)."""
    if isinstance(component, type):
        return f"{component.__module__}.{component.__qualname__}"
    return str(component)

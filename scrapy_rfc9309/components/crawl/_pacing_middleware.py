"""``ClusterDelayMiddleware``: a request's turn in the cluster taken just before
it is downloaded, where it waits when its site's turn has not come. Scrapy glue.

The last downloader middleware (the add-on enables it at
:data:`~._addon.PACING_MIDDLEWARE_PRIORITY`, after every built-in one, the
HTTP cache included), so that the site's next allowed time counts from the
send: a request that spent time in the engine or in earlier middlewares after
the scheduler handed it out never comes closer than the delay to another
process's. Our scheduler queue keeps a request whose site's turn has not
come (it takes no concurrency, and other sites go on) and reserves the turn
as it hands one out; here the reservation is confirmed, and the request
waits only when another process was granted a turn meanwhile (a lost race,
``robotstxt/cluster_delay/lost_turns``). Another scheduler (scrapy-redis)
hands requests out itself, so they wait here for their site's turn, as a
request waits for Scrapy's own ``DOWNLOAD_DELAY``: in the downloader, taking
one of ``CONCURRENT_REQUESTS`` meanwhile.

A send is not an arrival (a busy process writes its request some time after
it confirmed its turn), so the site's answer moves its next turn again: at
``headers_received`` (the earliest sign that the site received the request),
or, for a download handler that sends no such signal, in
:meth:`ClusterDelayMiddleware.process_response`, the first to see the
response. From its send to its answer the request is in flight, and no
process is granted a turn of its site: a site slow to answer, or a request
written late, never has the next one arrive within the delay of it. A
request that fails is treated as answered at its failure (it may have
reached the site). Both calls to Redis are made off the reactor (the pacer's
threads): the request awaits its confirmation, and the push at the answer
runs behind it.

While Redis is lost, a request waits here until Redis answers (or until this
process's slot, after a long outage: :mod:`._pacing_outage`); if the spider
closes meanwhile, it is dropped (``robotstxt/forbidden/closing``), so that a
Redis that never answers again never holds the close.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from ...sites._site import exempt_by_meta, site_of
from .._clock import Clock
from .._engine import engine_is_closing
from .._report import report_for
from ..settings._start_up import never_disabled, start_up_errors_logged
from ..sitefiles._service import site_service

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["ClusterDelayMiddleware"]

logger = logging.getLogger("scrapy_rfc9309.middleware")


async def _sleep(clock: Clock, seconds: float) -> None:
    """Wait ``seconds`` of the crawl's ``clock``."""
    from twisted.internet.defer import Deferred

    waited: Deferred[None] = Deferred()
    clock.call_later(seconds, waited.callback, None)
    await maybe_deferred_to_future(waited)


def _slot_clock() -> Callable[[], float]:
    """The clock of Scrapy's download slots' ``lastseen``: ``time.monotonic``
    in the Scrapy versions whose downloader imports it, ``time.time`` before."""
    from scrapy.core import downloader

    clock = getattr(downloader, "monotonic", None)
    return clock if callable(clock) else time.time


class ClusterDelayMiddleware:
    """Waits for the site's turn (``ROBOTSTXT_CRAWL_DELAY``, ``ROBOTSTXT_CLUSTER_DELAY``
    with a Redis store) when our scheduler queue does not."""

    def __init__(self, crawler: Crawler) -> None:
        # NotConfigured without a message: Scrapy logs one at WARNING, and the
        # add-on enables this middleware in every crawl, most of which space
        # no site across a cluster
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        with never_disabled("ClusterDelayMiddleware"):
            service = site_service(crawler)
            pacer = None if service is None else service.pacer
        if pacer is None:
            raise NotConfigured
        self.pacer = pacer
        self.crawler = crawler
        assert service is not None
        #: the crawl's clock: the waits for a turn
        self._clock = service.clock
        #: the clock of Scrapy's download slots (which one depends on the version)
        self._slot_now = _slot_clock()
        from scrapy import signals

        crawler.signals.connect(self._headers_received, signal=signals.headers_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ClusterDelayMiddleware:
        with start_up_errors_logged():
            return cls(crawler)

    def _slot_wait(self, request: Request) -> float:
        """Seconds before this process's download slot of ``request`` lets it go
        (``DOWNLOAD_DELAY``, the Crawl-delay floor): waited before the turn is
        taken, not after (a timer fires late in a busy process)."""
        engine = self.crawler.engine
        downloader = getattr(engine, "downloader", None)
        slots = getattr(downloader, "slots", None)
        if downloader is None or not slots:
            return 0.0
        slot = slots.get(downloader.get_slot_key(request))
        delay = getattr(slot, "delay", 0.0)
        if slot is None or not delay:
            return 0.0
        since = self._slot_now() - float(slot.lastseen)
        # never longer than the delay itself, whatever the slot's clock says
        return min(float(delay), max(0.0, float(delay) - since))

    def _headers_received(self, request: Request) -> None:
        self.pacer.answered(request)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        self.pacer.answered(request)  # nothing when headers_received came first
        return response

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        self.pacer.answered(request)  # failed: no longer in flight, perhaps received

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if "dont_obey_robotstxt" in request.meta and exempt_by_meta(request.meta, request.url):
            return
        site = site_of(request.url)
        if site is None or not self.pacer.delay_for(site):
            return
        waited = False
        while True:
            local = self._slot_wait(request)
            if local > 0:  # this process's own delay first: the send follows the turn
                await _sleep(self._clock, local)
                continue
            wait = await maybe_deferred_to_future(self.pacer.at_send(site))  # off the reactor
            if wait <= 0:
                if waited:
                    self.pacer.ended_waiting(request)
                self.pacer.sent(request, site)
                return
            if self.pacer.unreachable and engine_is_closing(self.crawler):
                self._drop_at_close(request, site)
            if not waited:
                waited = True
                if self.pacer.queue_paces and not self.pacer.unreachable:
                    self.pacer.count_lost_turn()
                self.pacer.started_waiting(request)
            await _sleep(self._clock, wait)

    def _drop_at_close(self, request: Request, site: str) -> None:
        """The spider closes while ``request`` waits for a Redis that is lost:
        dropped, counted as the queue's requests dropped at close."""
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("robotstxt/forbidden")
            stats.inc_value("robotstxt/forbidden/closing")
        report_for(self.crawler).dropped_at_close(site)
        logger.info(
            "Spider closing: dropping %s, which waited for Redis to space its site "
            "cluster-wide (Redis lost)",
            request,
        )
        raise IgnoreRequest("the spider closed while the request waited for Redis")

"""``ClusterPacer``: one per crawler, asks Redis whether a site's request may go now. Scrapy glue.

With a Redis store, a site's ``Crawl-delay`` (``ROBOTSTXT_CRAWL_DELAY``) and
``ROBOTSTXT_CLUSTER_DELAY`` (sites without one) are kept across every process
of the cluster through a per-site next-allowed time in Redis
(:class:`~scrapy_rfc9309.sites._cluster_clock.ClusterClock`). Every call to
Redis is made off the reactor (:class:`~._pacing_thread.PacingThreads`):
each method that asks returns a ``Deferred``. Our scheduler
queue asks :meth:`ClusterPacer.wait` before handing a request out (the turn
reserved), and keeps it while it must wait;
:class:`~..crawl._pacing_middleware.ClusterDelayMiddleware`, the last downloader
middleware, asks :meth:`ClusterPacer.at_send` just before the download (the
reserved turn confirmed: the site's next time counts from the send), and
waits in the downloader when another process was granted a turn meanwhile,
or, with another scheduler, until the site's turn comes. When the site
answers (:meth:`ClusterPacer.answered`, the response's headers back), its
next time moves to at least the answer plus the delay: a send is not an
arrival, and the site received the request before it answered. Until then
the send is in flight in Redis, and no process is granted a turn of that
site (a failure ends it too, as an answer; at close, what is still in flight
is ended so).

Redis lost (a call fails, or takes longer than :data:`CALL_TIMEOUT`): one
ERROR line per outage (the store logs its own), and the paced sites'
requests are held, not sent (a process alone cannot know when the others
send), in our queue or in the middleware; Redis is tried again every
:data:`~._pacing_outage.RETRY_SECONDS` by a ping off the reactor, and the
shared clock used again at once when it answers. Held longer than
:data:`~._pacing_outage.HOLD_MAX_SECONDS`, a site's requests are sent in
this process's slots of the time (:mod:`._pacing_outage`: one slot of each
of the processes seen alive, their beats in Redis every
:data:`~._pacing_fallback.BEAT_SECONDS`). All of this is
:class:`~._pacing_fallback.ClockFallback`'s. Sites that are not paced go
on. Held requests are dropped at close, as the queue's other waiting
requests.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, DeferredList, succeed
from twisted.python.failure import Failure

from ...sites._bounded import put_bounded
from ...sites._store import StoreError
from ..settings._store_settings import ClusterDelaySettings
from ._pacing_fallback import ClockFallback
from ._pacing_thread import PacingThreads

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from ...sites._cluster_clock import ClusterClock
    from .._clock import Clock
    from ._pacing_fallback import InThread

__all__ = ["ClusterPacer", "cluster_pacer"]

logger = logging.getLogger("scrapy_rfc9309.store")

#: seconds one call may take (made off the reactor; longer, Redis is lost)
CALL_TIMEOUT = 1.0
#: sites whose Crawl-delay is remembered; beyond, the oldest are forgotten
MAX_SITES_TRACKED = 100_000
#: seconds the close waits at most for the sends still in flight to be ended in Redis
CLOSE_WAIT_SECONDS = 2.0

#: ``request.meta`` key: the request was counted in ``robotstxt/cluster_delay/waited``
META_WAITED = "_robotstxt_cluster_waited"
#: ``request.meta`` key: when (``time.monotonic()``) it was first told to wait for its turn
META_WAIT_SINCE = "_robotstxt_cluster_wait_since"
#: ``request.meta`` key: the site whose turn it was sent in and the token of
#: its send, until its answer
META_SENT = "_robotstxt_cluster_sent"


class ClusterPacer:
    """Whether a request of a site may be sent now, cluster-wide."""

    def __init__(
        self,
        crawler: Crawler,
        settings: ClusterDelaySettings,
        clock: ClusterClock,
        time: Clock,
        *,
        in_thread: InThread | None = None,
        scheduler: Any = None,
    ):
        self.crawler = crawler
        self.settings = settings
        self._clock: ClusterClock | None = clock
        #: the crawl's clock: how long requests waited for their turn
        self._time = time
        #: runs the calls to Redis off the reactor (injected in tests)
        self._threads: PacingThreads | None = None
        if in_thread is None:
            in_thread = self._threads = PacingThreads()
        self._in_thread: InThread = in_thread
        #: while Redis is lost (paced requests held), and its return
        self._fallback = ClockFallback(
            crawler,
            clock,
            time,
            self.delay_for,
            in_thread=in_thread,
            scheduler=scheduler,
            renewing=self._renewing,
        )
        #: the close's timer (an ``IReactorTime``; ``None``: the reactor)
        self._scheduler = scheduler
        #: site -> its Crawl-delay (capped), set by the extension as robots.txt is parsed
        self._delays: dict[str, float] = {}
        #: our scheduler queue paces the requests it hands out (the middleware then does not)
        self.queue_paces = False
        #: site -> the token of the turn the queue reserved for its request
        #: handed out, confirmed at send (:meth:`at_send`)
        self._reserved: dict[str, str] = {}
        #: site -> the token of the turn confirmed at send (:meth:`at_send`),
        #: until the request goes (:meth:`sent`)
        self._confirmed: dict[str, str] = {}
        #: site -> the token of its request sent and not yet answered (in flight
        #: in Redis: no process is granted the site's turn meanwhile) and when
        #: it was sent; renewed with each beat until its answer reaches Redis
        self._in_flight: dict[str, tuple[str, float]] = {}
        self._tokens = (f"{uuid.uuid4().hex[:12]}.{n}" for n in itertools.count())

    def set_crawl_delay(self, site: str, delay: float | None) -> None:
        """``site``'s robots.txt asks ``delay`` seconds between requests (capped);
        ``None``: it asks none (any more)."""
        if delay is None:
            self._delays.pop(site, None)
            return
        if not self.settings.crawl_delay:
            return
        put_bounded(self._delays, site, delay, MAX_SITES_TRACKED)

    def delay_for(self, site: str) -> float | None:
        """Seconds between ``site``'s requests across the cluster; ``None``: not paced."""
        return self._delays.get(site, self.settings.cluster_delay)

    def wait(self, site: str) -> Deferred[float]:
        """At the scheduler: fires with 0.0 when a request of ``site`` may be
        handed out now (its turn is reserved, confirmed by :meth:`at_send`);
        else with the seconds to wait before asking again."""
        delay = self.delay_for(site)
        clock = self._clock
        if not delay or clock is None:
            return succeed(0.0)
        token = next(self._tokens)

        def reserved(left: float) -> float:
            if left == 0:
                # the oldest never confirmed (dropped) are forgotten first
                put_bounded(self._reserved, site, token, MAX_SITES_TRACKED)
            return left

        return self._ask(clock.take, site, delay, token).addCallback(reserved)

    def at_send(self, site: str) -> Deferred[float]:
        """Just before a request of ``site`` is downloaded: fires with 0.0 when it
        may go now (the site's next turn counted from then); else with the
        seconds to wait (another process was granted a turn since the queue
        handed it out, or, with another scheduler, the site's turn has not
        come)."""
        delay = self.delay_for(site)
        clock = self._clock
        token = self._reserved.pop(site, "") or next(self._tokens)
        if not delay or clock is None:
            return succeed(0.0)

        def confirmed(left: float) -> float:
            if left == 0:
                self._confirmed[site] = token
            return left

        return self._ask(clock.send, site, delay, token).addCallback(confirmed)

    def sent(self, request: Request, site: str) -> None:
        """``request`` of ``site`` goes now, in the site's turn: in flight until
        its answer, which moves the site's next turn (:meth:`answered`)."""
        token = self._confirmed.pop(site, "")
        if self._clock is not None and self.delay_for(site):
            request.meta[META_SENT] = (site, token)
            if token:
                flight = (token, self._time.monotonic())
                put_bounded(self._in_flight, site, flight, MAX_SITES_TRACKED)
            self._fallback.remember(site)

    def _renewing(self) -> list[tuple[str, str]]:
        """The sends to renew in Redis with this beat (site, token): those not
        answered yet, for ``DOWNLOAD_TIMEOUT`` plus a margin at most (a request
        a later middleware replaced gets no answer: its send is left to expire)."""
        oldest = self._time.monotonic() - self.settings.flight
        flights = self._in_flight
        for site in [site for site, (_, since) in flights.items() if since < oldest]:
            del flights[site]
        return [(site, token) for site, (token, _) in flights.items()]

    def _landed(self, site: str, token: str) -> None:
        """The answer of ``site``'s send ``token`` reached Redis (or is left to the
        fallback): no longer renewed."""
        if self._in_flight.get(site, ("", 0.0))[0] == token:
            del self._in_flight[site]

    def answered(self, request: Request) -> None:
        """``request``'s site answered it (its response headers are back, or its
        response, when the download handler sends no ``headers_received``), or
        its download failed (it may have reached the site): no longer in
        flight, and the site's next turn not before the delay from now,
        cluster-wide (the site received the request before it answered). Once
        per request sent in its turn. The call is made off the reactor, after
        the site's calls asked before it and before those asked after it
        (:class:`~._pacing_thread.PacingThreads`)."""
        sent = request.meta.pop(META_SENT, None)
        if sent is None:
            return
        site, token = sent
        delay = self.delay_for(site)
        clock = self._clock
        if not delay or clock is None:
            self._landed(site, token)
            return
        self._fallback.remember(site)
        if self._fallback.lost:  # told when Redis answers again
            self._landed(site, token)
            self._fallback.unpushed(site, token)
            return

        def pushed(_: object) -> None:
            self._landed(site, token)

        def failed(failure: Failure) -> None:
            if self._clock is None:  # closed meanwhile: the close ended the flight
                return
            exc = failure.value
            if not isinstance(exc, StoreError):
                assert exc is not None
                raise exc  # not Redis's: not disguised as an outage (logged by Twisted)
            self._landed(site, token)
            self._fallback.failed(exc)
            self._fallback.unpushed(site, token)

        pushed_or_failed = self._in_thread(lambda: clock.answered(site, delay, token), site)
        pushed_or_failed.addCallbacks(pushed, failed)

    def start(self) -> None:
        """At the spider's opening: the processes alive counted, every few seconds."""
        self._fallback.start()

    @property
    def unreachable(self) -> bool:
        """Whether Redis is lost: paced requests are held until it answers."""
        return self._fallback.lost

    def _ask(
        self, call: Callable[[str, float, str], float], site: str, delay: float, token: str
    ) -> Deferred[float]:
        """``call`` to Redis, off the reactor; while Redis is lost, the request's
        wait without it (:class:`~._pacing_fallback.ClockFallback`: held, then
        in this process's slots). An error that is not Redis's is not caught."""
        wait = self._fallback.before_call(site, delay)
        if wait is not None:
            return succeed(wait)

        def failed(failure: Failure) -> float:
            exc = failure.value
            if self._clock is None:  # closed meanwhile (its connections too)
                return self._fallback.lost_wait(site, delay)
            if not isinstance(exc, StoreError):
                assert exc is not None
                raise exc  # not Redis's: not disguised as an outage
            self._fallback.failed(exc)
            return self._fallback.lost_wait(site, delay)

        asked: Deferred[float] = self._in_thread(lambda: call(site, delay, token), site)
        return asked.addErrback(failed)

    def started_waiting(self, request: Request) -> None:
        """``request`` is told to wait for its site's turn: counted in
        ``robotstxt/cluster_delay/waited`` once per request, and timed from the
        first time (:meth:`ended_waiting`)."""
        meta = request.meta
        meta.setdefault(META_WAIT_SINCE, self._time.monotonic())
        if not meta.get(META_WAITED):
            meta[META_WAITED] = True
            self._inc("robotstxt/cluster_delay/waited")

    def ended_waiting(self, request: Request) -> None:
        """``request`` is handed out (or sent) in its site's turn: the time since it
        was first told to wait is added to ``robotstxt/cluster_delay/wait_seconds``."""
        since = request.meta.pop(META_WAIT_SINCE, None)
        if since is not None:
            self._inc(
                "robotstxt/cluster_delay/wait_seconds", max(0.0, self._time.monotonic() - since)
            )

    def count_lost_turn(self) -> None:
        """A request handed out in its site's turn found, at send, another
        process's turn granted meanwhile (it waits in the downloader)."""
        self._inc("robotstxt/cluster_delay/lost_turns")

    def _inc(self, key: str, value: float = 1) -> None:
        stats: Any = self.crawler.stats
        if stats is not None:
            stats.inc_value(key, value)

    async def spider_closed(self) -> None:
        """``spider_closed``: :meth:`close`, waited for."""
        from scrapy.utils.defer import maybe_deferred_to_future

        await maybe_deferred_to_future(self.close())

    def close(self) -> Deferred[None]:
        """At the spider's close: the sends still in flight ended in Redis, off the
        reactor (:meth:`_end_flights`), then the threads stopped and the
        connections closed. The close waits for the ends at most
        :data:`CLOSE_WAIT_SECONDS`."""
        self._fallback.close()
        clock = self._clock
        if clock is None:
            return succeed(None)

        def closed(_: object) -> None:
            self._clock = None
            if self._threads is not None:
                self._threads.stop()
            clock.close()

        return self._end_flights(clock).addBoth(closed)

    def _end_flights(self, clock: ClusterClock) -> Deferred[None]:
        """The sends still in flight at close (a download cancelled, a request a
        later middleware replaced, an answer whose push is still on its
        thread) are ended as answered now, on their sites' threads (after
        what is asked there already), so that no other process waits for
        them until they expire. Fires once they are done, failed, or after
        :data:`CLOSE_WAIT_SECONDS`; Redis lost, they expire (unrenewed, within
        seconds)."""
        flights, self._in_flight = self._in_flight, {}
        if not flights or self._fallback.lost:
            return succeed(None)

        def end(site: str, token: str) -> Callable[[], float]:
            delay = self.delay_for(site) or 0.0
            return lambda: clock.answered(site, delay, token)

        ends = [self._in_thread(end(site, token), site) for site, (token, _) in flights.items()]
        done: Deferred[None] = Deferred()

        def over(_: object = None) -> None:
            if not done.called:
                done.callback(None)

        scheduler = self._scheduler
        if scheduler is None:
            from twisted.internet import reactor as scheduler
        timer = scheduler.callLater(CLOSE_WAIT_SECONDS, over)
        ended = DeferredList(ends, consumeErrors=True)
        ended.addBoth(over)
        ended.addBoth(lambda _: timer.cancel() if timer.active() else None)
        return done


def cluster_pacer(crawler: Crawler, time: Clock) -> ClusterPacer | None:
    """A pacer for the crawler, on the crawl's clock ``time`` (the site service
    makes the one each crawl has); ``None`` when no site is paced cluster-wide
    (no Redis store, or neither ``ROBOTSTXT_CRAWL_DELAY`` nor
    ``ROBOTSTXT_CLUSTER_DELAY``)."""
    pacer = None
    settings = ClusterDelaySettings.from_settings(crawler.settings)
    if settings.cluster_delay and settings.redis_url is None:
        logger.warning(
            "ROBOTSTXT_CLUSTER_DELAY needs a Redis store (ROBOTSTXT_STORE_URI = 'redis://...'): "
            "ignored"
        )
    if settings.redis_url and (settings.crawl_delay or settings.cluster_delay):
        # the redis package is there: StoreSettings checked it, naming the URI
        from ...sites._cluster_clock import ClusterClock

        clock = ClusterClock.open(settings.redis_url, settings.prefix, timeout=CALL_TIMEOUT)
        pacer = ClusterPacer(crawler, settings, clock, time)
        from scrapy import signals

        crawler.signals.connect(pacer.start, signal=signals.spider_opened)
        crawler.signals.connect(pacer.spider_closed, signal=signals.spider_closed)
    return pacer

"""``ClusterPacer``: one per crawler, asks Redis whether a site's request may go now. Scrapy glue.

With a Redis store, a site's ``Crawl-delay`` (``ROBOTSTXT_CRAWL_DELAY``) and
``ROBOTSTXT_CLUSTER_DELAY`` (sites without one) are kept across every process
of the cluster through a per-site next-allowed time in Redis
(:class:`~scrapy_rfc9309.sites._cluster_clock.ClusterClock`). Our scheduler
queue asks :meth:`ClusterPacer.wait` before handing a request out (the turn
reserved), and keeps it while it must wait;
:class:`~._pacing_middleware.ClusterDelayMiddleware`, the last downloader
middleware, asks :meth:`ClusterPacer.at_send` just before the download (the
reserved turn confirmed: the site's next time counts from the send), and
waits in the downloader when another process was granted a turn meanwhile,
or, with another scheduler, until the site's turn comes. When the site
answers (:meth:`ClusterPacer.answered`, the response's headers back), its
next time moves to at least the answer plus the delay: a send is not an
arrival, and the site received the request before it answered.

Redis lost (a call fails, or takes longer than :data:`CALL_TIMEOUT`): one
ERROR line per outage (the store logs its own), and the paced sites'
requests are held, not sent (a process alone cannot know when the others
send), in our queue or in the middleware; Redis is tried again every
:data:`~._pacing_outage.RETRY_SECONDS` by a ping off the reactor, and the
shared clock used again at once when it answers. Held longer than
:data:`~._pacing_outage.HOLD_MAX_SECONDS`, a site's requests are sent in
this process's slots of the time (:mod:`._pacing_outage`: one slot of each
of the processes seen alive, their beats in Redis every
:data:`BEAT_SECONDS`). Sites that are not paced go on. Held requests are
dropped at close, as the queue's other waiting requests.
"""

from __future__ import annotations

import itertools
import logging
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..sites._store import StoreError
from . import _pacing_outage
from ._clock import clock_of
from ._pacing_outage import HOLD_SECONDS, ClockOutage, slot_wait, still_due
from ._settings import ClusterDelaySettings

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

    from ..sites._cluster_clock import ClusterClock

    #: runs a blocking call off the reactor (``twisted.internet.threads.deferToThread``)
    InThread = Callable[[Callable[[], None]], Deferred[None]]

__all__ = ["ClusterPacer", "cluster_pacer"]

logger = logging.getLogger("scrapy_rfc9309.store")

#: seconds one call may take (it is made on the reactor)
CALL_TIMEOUT = 1.0
#: seconds between two beats of a process in Redis (the processes alive)
BEAT_SECONDS = 2.0
#: seconds a process is counted alive after its last beat
BEAT_LIFETIME = 10.0
#: sites whose Crawl-delay is remembered; beyond, the oldest are forgotten
MAX_SITES_TRACKED = 100_000

_ATTRIBUTE = "_robotstxt_cluster_pacer"
#: ``request.meta`` key: the request was counted in ``robotstxt/cluster_delay/waited``
META_WAITED = "_robotstxt_cluster_waited"
#: ``request.meta`` key: when (``time.monotonic()``) it was first told to wait for its turn
META_WAIT_SINCE = "_robotstxt_cluster_wait_since"
#: ``request.meta`` key: the site whose turn it was sent in, until its answer
META_SENT = "_robotstxt_cluster_sent"


class ClusterPacer:
    """Whether a request of a site may be sent now, cluster-wide."""

    def __init__(
        self,
        crawler: Crawler,
        settings: ClusterDelaySettings,
        clock: ClusterClock,
        *,
        in_thread: InThread | None = None,
    ):
        self.crawler = crawler
        self.settings = settings
        self._clock: ClusterClock | None = clock
        #: the crawl's clock (injected in tests)
        self._time = clock_of(crawler)
        self._now = self._time.monotonic
        self._in_thread = in_thread or _in_thread
        self._outage = ClockOutage(
            retry_seconds=_pacing_outage.RETRY_SECONDS,
            hold_max_seconds=_pacing_outage.HOLD_MAX_SECONDS,
        )
        self._probing = False
        #: this process among the processes alive (its beats in Redis): its rank
        #: and their number, as last read
        self._member = uuid.uuid4().hex
        self._rank, self._count = 0, 1
        self._beat_timer: Any = None
        #: site -> when this process last sent a request of it or had an answer
        #: (told to a Redis that answers again, in case it lost its times)
        self._last: dict[str, float] = {}
        #: site -> its Crawl-delay (capped), set by the extension as robots.txt is parsed
        self._delays: dict[str, float] = {}
        #: our scheduler queue paces the requests it hands out (the middleware then does not)
        self.queue_paces = False
        #: site -> the token of the turn the queue reserved for its request
        #: handed out, confirmed at send (:meth:`at_send`)
        self._reserved: dict[str, str] = {}
        self._tokens = (f"{uuid.uuid4().hex[:12]}.{n}" for n in itertools.count())

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
        """At the scheduler: 0.0: a request of ``site`` may be handed out now (its
        turn is reserved, confirmed by :meth:`at_send`); else the seconds to
        wait before asking again."""
        delay = self.delay_for(site)
        clock = self._clock
        if not delay or clock is None:
            return 0.0
        token = next(self._tokens)
        left = self._ask(clock.take, site, delay, token)
        if left == 0:
            if site not in self._reserved and len(self._reserved) >= MAX_SITES_TRACKED:
                self._reserved.pop(next(iter(self._reserved)))  # never confirmed (dropped)
            self._reserved[site] = token
        return left

    def at_send(self, site: str) -> float:
        """Just before a request of ``site`` is downloaded: 0.0: it may go now (the
        site's next turn counted from now); else the seconds to wait (another
        process was granted a turn since the queue handed it out, or, with
        another scheduler, the site's turn has not come)."""
        delay = self.delay_for(site)
        clock = self._clock
        token = self._reserved.pop(site, "")
        if not delay or clock is None:
            return 0.0
        return self._ask(clock.send, site, delay, token)

    def sent(self, request: Request, site: str) -> None:
        """``request`` of ``site`` goes now, in the site's turn: its answer moves
        the site's next turn (:meth:`answered`)."""
        if self._clock is not None and self.delay_for(site):
            request.meta[META_SENT] = site
            self._remember(site)

    def answered(self, request: Request) -> None:
        """``request``'s site answered it (its response headers are back, or its
        response, when the download handler sends no ``headers_received``): the
        site's next turn not before the delay from now, cluster-wide (the site
        received the request before it answered). Once per request sent in its
        turn; a request that fails gets none (its turn counts from its send)."""
        site = request.meta.pop(META_SENT, None)
        if site is None:
            return
        delay = self.delay_for(site)
        clock = self._clock
        if not delay or clock is None:
            return
        self._remember(site)
        if self._outage.lost:  # told when Redis answers again
            return
        try:
            clock.answered(site, delay)
        except StoreError as exc:
            self._failed(exc)

    def start(self) -> None:
        """The first beat (the processes alive read), then one every :data:`BEAT_SECONDS`."""
        self._beat()

    def _beat(self) -> None:
        self._beat_timer = None
        clock = self._clock
        if clock is None:
            return
        if not self._outage.lost:  # lost: the ping tries it
            try:
                self._rank, self._count = clock.beat(self._member, BEAT_LIFETIME)
            except StoreError as exc:
                self._failed(exc)
        self._beat_timer = self._time.call_later(BEAT_SECONDS, self._beat)

    @property
    def unreachable(self) -> bool:
        """Whether Redis is lost: paced requests are held until it answers."""
        return self._outage.lost

    def _ask(
        self, call: Callable[[str, float, str], float], site: str, delay: float, token: str
    ) -> float:
        """``call`` to Redis; while Redis is lost, :data:`HOLD_SECONDS` (the
        request held: one ERROR line per outage, Redis tried again off the
        reactor every :data:`~._pacing_outage.RETRY_SECONDS`)."""
        clock = self._clock
        assert clock is not None
        now = self._now()
        if self._outage.lost:
            self._try_again()
            if self._outage.lost:  # still (the ping answers later, from its thread)
                return self._lost_wait(site, delay, now)
        if self._outage.in_slots(now):  # just back: others may still send in their slots
            wait = self._slot_wait(site, delay, now)
            if wait > 0:
                return wait
        try:
            return call(site, delay, token)
        except StoreError as exc:
            self._failed(exc)
            return self._lost_wait(site, delay, self._now())

    def _lost_wait(self, site: str, delay: float, now: float) -> float:
        """Redis lost: :data:`HOLD_SECONDS` while the site is held, then the
        wait for this process's next slot (at most ``HOLD_SECONDS``, then asked
        again: Redis may be back)."""
        if self._outage.holding(now, delay):
            return HOLD_SECONDS
        wait = self._slot_wait(site, delay, now)
        return min(wait, HOLD_SECONDS)

    def _slot_wait(self, site: str, delay: float, now: float) -> float:
        """Seconds to this process's next slot for ``site`` at least ``delay``
        after its last send or answer here; 0.0: it may go now."""
        last = self._last.get(site)
        start = now if last is None else max(now, last + delay)
        wall = self._time.time() + (start - now)
        return (start - now) + slot_wait(wall, delay, self._rank, self._count)

    def _failed(self, exc: StoreError) -> None:
        clock = self._clock
        assert clock is not None
        if self._outage.failed(self._now()):  # still lost when tried again: no new ERROR
            logger.error(
                "%s; requests of sites paced cluster-wide (Crawl-delay, "
                "ROBOTSTXT_CLUSTER_DELAY) are held until it answers again (tried every %g s)",
                exc,
                self._outage.retry_seconds,
            )
        else:
            logger.debug("Redis at %s still failing: %s", clock.uri, exc)
        self._inc("robotstxt/cluster_delay/errors")

    def _try_again(self) -> None:
        """Redis lost: a ping off the reactor (a Redis that hangs must not hold
        it), once every :data:`~._pacing_outage.RETRY_SECONDS`."""
        clock = self._clock
        if clock is None or self._probing or not self._outage.try_due(self._now()):
            return
        self._probing = True
        probe = self._in_thread(clock.ping)
        probe.addCallbacks(self._ping_answered, self._ping_failed)

    def _ping_answered(self, _: object) -> None:
        self._probing = False
        clock = self._clock
        if clock is None:
            return
        now = self._now()
        # a Redis restarted empty lost the sites' next times: ours told again
        for site, left in list(still_due(self._last.items(), self.delay_for, now)):
            try:
                clock.answered(site, left)
            except StoreError as exc:
                self._failed(exc)
                return
        lost_for = self._outage.answered(now)
        if lost_for is not None:
            logger.info(
                "Redis at %s answers again after %.1f s: held requests are spaced cluster-wide",
                clock.uri,
                lost_for,
            )

    def _ping_failed(self, failure: Any) -> None:
        self._probing = False
        if self._clock is None:
            return
        exc = failure.value
        if not isinstance(exc, StoreError):
            exc = StoreError(f"Redis at {self._clock.uri}: {exc!r}")
        self._failed(exc)

    def _remember(self, site: str) -> None:
        last = self._last
        last.pop(site, None)  # the latest last: the oldest are forgotten first
        if len(last) >= MAX_SITES_TRACKED:
            last.pop(next(iter(last)))
        last[site] = self._now()

    def started_waiting(self, request: Request) -> None:
        """``request`` is told to wait for its site's turn: counted in
        ``robotstxt/cluster_delay/waited`` once per request, and timed from the
        first time (:meth:`ended_waiting`)."""
        meta = request.meta
        meta.setdefault(META_WAIT_SINCE, time.monotonic())
        if not meta.get(META_WAITED):
            meta[META_WAITED] = True
            self._inc("robotstxt/cluster_delay/waited")

    def ended_waiting(self, request: Request) -> None:
        """``request`` is handed out (or sent) in its site's turn: the time since it
        was first told to wait is added to ``robotstxt/cluster_delay/wait_seconds``."""
        since = request.meta.pop(META_WAIT_SINCE, None)
        if since is not None:
            self._inc("robotstxt/cluster_delay/wait_seconds", max(0.0, time.monotonic() - since))

    def count_lost_turn(self) -> None:
        """A request handed out in its site's turn found, at send, another
        process's turn granted meanwhile (it waits in the downloader)."""
        self._inc("robotstxt/cluster_delay/lost_turns")

    def _inc(self, key: str, value: float = 1) -> None:
        stats: Any = self.crawler.stats
        if stats is not None:
            stats.inc_value(key, value)

    def close(self) -> None:
        timer, self._beat_timer = self._beat_timer, None
        if timer is not None and timer.active():
            timer.cancel()
        if self._clock is not None:
            if not self._outage.lost:
                self._clock.leave(self._member)
            self._clock.close()
            self._clock = None


def _in_thread(call: Callable[[], None]) -> Deferred[None]:
    from twisted.internet.threads import deferToThread

    return deferToThread(call)


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

        crawler.signals.connect(pacer.start, signal=signals.spider_opened)
        crawler.signals.connect(pacer.close, signal=signals.spider_closed)
    setattr(crawler, _ATTRIBUTE, pacer)
    return pacer

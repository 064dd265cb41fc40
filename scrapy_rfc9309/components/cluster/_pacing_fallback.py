"""``ClockFallback``: what a crawler process does while the cluster clock (Redis)
is lost, and how it comes back to it. Scrapy glue around
:class:`~._pacing_outage.ClockOutage`.

It beats in Redis every :data:`BEAT_SECONDS`, off the reactor (the
processes alive, this one's rank among them), remembers when it last sent a paced site's request
or had its answer, and, once a call has failed: logs one ERROR line per
outage, holds the paced sites' requests, tries Redis every
:data:`~._pacing_outage.RETRY_SECONDS` with a ping made on a thread (a
Redis that hangs must not hold the reactor), past the hold sends them in
this process's slots, and, when Redis answers again, tells it the sites'
turns this process still knows of before the shared clock is used again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...sites._bounded import put_bounded
from ...sites._store import StoreError
from . import _pacing_outage
from ._pacing_outage import HOLD_SECONDS, ClockOutage, slot_wait, still_due

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

    from ...sites._cluster_clock import ClusterClock
    from .._clock import Clock

    #: runs a blocking call off the reactor (``twisted.internet.threads.deferToThread``,
    #: the pacer's :class:`~._pacing_thread.PacingThreads`), a site's calls in
    #: the order asked (the site its second argument)
    InThread = Callable[[Callable[[], Any], str], Deferred[Any]]

__all__ = ["BEAT_LIFETIME", "BEAT_SECONDS", "ClockFallback"]

logger = logging.getLogger("scrapy_rfc9309.store")

#: seconds between two beats of a process in Redis (the processes alive)
BEAT_SECONDS = 2.0
#: seconds a process is counted alive after its last beat
BEAT_LIFETIME = 10.0
#: sites whose last send is remembered; beyond, the oldest are forgotten
MAX_SITES_TRACKED = 100_000


class ClockFallback:
    """A process's side of an outage of the cluster clock (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        clock: ClusterClock,
        time: Clock,
        delay_for: Callable[[str], float | None],
        *,
        in_thread: InThread | None = None,
        scheduler: Any = None,
        renewing: Callable[[], list[tuple[str, str]]] = list,
    ) -> None:
        self.crawler = crawler
        #: the sends still in flight, renewed in Redis with each beat (site, token)
        self._renewing = renewing
        self._clock: ClusterClock | None = clock
        self._delay_for = delay_for
        #: the crawl's clock, handed down by the site service (injected in tests)
        self._time = time
        self._now = self._time.monotonic
        self._in_thread = in_thread or _in_thread
        #: the beats' timer (an ``IReactorTime``; ``None``: the reactor): real
        #: time, whatever the crawl's clock, as the other processes beat
        self._scheduler = scheduler
        self.outage = ClockOutage(
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
        #: site -> the token of a send answered while Redis was lost or failing
        #: (still in flight there: told when Redis answers again)
        self._unpushed: dict[str, str] = {}

    @property
    def lost(self) -> bool:
        """Whether Redis is lost: paced requests are held until it answers."""
        return self.outage.lost

    def start(self) -> None:
        """The first beat (the processes alive read), then one every :data:`BEAT_SECONDS`."""
        self._beat()

    def close(self) -> None:
        timer, self._beat_timer = self._beat_timer, None
        if timer is not None and timer.active():
            timer.cancel()
        if self._clock is not None and not self.outage.lost:
            self._clock.leave(self._member)
        self._clock = None

    def remember(self, site: str) -> None:
        """A request of ``site`` was sent or answered now."""
        self._last.pop(site, None)  # the latest last: the oldest are forgotten first
        put_bounded(self._last, site, self._now(), MAX_SITES_TRACKED)

    def unpushed(self, site: str, token: str) -> None:
        """The answer of ``site``'s send ``token`` did not reach Redis: told
        when Redis answers again."""
        if token:
            put_bounded(self._unpushed, site, token, MAX_SITES_TRACKED)

    def before_call(self, site: str, delay: float) -> float | None:
        """The seconds a request of ``site`` waits without asking Redis (lost, or
        just back while other processes may still send in their slots); 0.0:
        it goes now without asking; ``None``: Redis is to be asked."""
        now = self._now()
        if self.outage.lost:
            self._try_again()
            if self.outage.lost:  # still (the ping answers later, from its thread)
                return self.lost_wait(site, delay)
        if self.outage.in_slots(now):
            wait = self._slot_wait(site, delay, now)
            if wait > 0:
                return wait
        return None

    def lost_wait(self, site: str, delay: float) -> float:
        """Redis lost: :data:`~._pacing_outage.HOLD_SECONDS` while the site is
        held, then the wait for this process's next slot (at most
        ``HOLD_SECONDS``, then asked again: Redis may be back)."""
        now = self._now()
        if self.outage.holding(now, delay):
            return HOLD_SECONDS
        return min(self._slot_wait(site, delay, now), HOLD_SECONDS)

    def _slot_wait(self, site: str, delay: float, now: float) -> float:
        """Seconds to this process's next slot for ``site`` at least ``delay``
        after its last send or answer here; 0.0: it may go now."""
        last = self._last.get(site)
        start = now if last is None else max(now, last + delay)
        wall = self._time.time() + (start - now)
        return (start - now) + slot_wait(wall, delay, self._rank, self._count)

    def failed(self, exc: StoreError) -> None:
        """A call to Redis failed: the outage starts (one ERROR line) or goes on."""
        uri = self._clock.uri if self._clock is not None else "?"
        if self.outage.failed(self._now()):  # still lost when tried again: no new ERROR
            logger.error(
                "%s; requests of sites paced cluster-wide (Crawl-delay, "
                "ROBOTSTXT_CLUSTER_DELAY) are held until it answers again (tried every %g s)",
                exc,
                self.outage.retry_seconds,
            )
        else:
            logger.debug("Redis at %s still failing: %s", uri, exc)
        stats: Any = self.crawler.stats
        if stats is not None:
            stats.inc_value("robotstxt/cluster_delay/errors")

    def _beat(self) -> None:
        self._beat_timer = None
        clock = self._clock
        if clock is None:
            return
        if self.outage.lost:  # tried by a ping, paced requests or none: told when back
            self._try_again()
        else:
            member, flights = self._member, self._renewing()

            def beat_and_renew() -> tuple[int, int]:
                alive = clock.beat(member, BEAT_LIFETIME)
                if flights:
                    clock.renew(flights)
                return alive

            beat = self._in_thread(beat_and_renew, "")
            beat.addCallbacks(self._beaten, self._beat_failed)
        scheduler = self._scheduler
        if scheduler is None:
            from twisted.internet import reactor as scheduler
        self._beat_timer = scheduler.callLater(BEAT_SECONDS, self._beat)

    def _beaten(self, alive: tuple[int, int]) -> None:
        self._rank, self._count = alive

    def _beat_failed(self, failure: Any) -> None:
        if self._clock is None:  # closed meanwhile (its connections too)
            return
        exc = failure.value
        if not isinstance(exc, StoreError):
            raise exc  # not Redis's: not disguised as an outage (logged by Twisted)
        self.failed(exc)

    def _try_again(self) -> None:
        """Redis lost: a ping off the reactor (a Redis that hangs must not hold
        it), once every :data:`~._pacing_outage.RETRY_SECONDS`."""
        clock = self._clock
        if clock is None or self._probing or not self.outage.try_due(self._now()):
            return
        self._probing = True
        probe = self._in_thread(clock.ping, "")
        probe.addCallbacks(self._ping_answered, self._ping_failed)

    def _ping_answered(self, _: object) -> None:
        self._probing = False
        clock = self._clock
        if clock is None:
            return
        now = self._now()
        # a Redis restarted empty lost the sites' next times: ours told again;
        # and the answers it missed, so that their sends are no longer in flight
        due = dict(still_due(self._last.items(), self._delay_for, now))
        for site in self._unpushed.keys() - due.keys():
            due[site] = 0.0
        for site, left in due.items():
            try:
                clock.answered(site, left, self._unpushed.get(site, ""))
            except StoreError as exc:
                self.failed(exc)
                return
            self._unpushed.pop(site, None)
        lost_for = self.outage.answered(now)
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
        self.failed(exc)


def _in_thread(call: Callable[[], Any], site: str = "") -> Deferred[Any]:
    from twisted.internet.threads import deferToThread

    return deferToThread(call)

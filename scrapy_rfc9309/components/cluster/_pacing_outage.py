"""``ClockOutage``: whether the cluster clock (Redis) is lost, and when to try it
again. Pure (no Scrapy, no Redis, no clock of its own: every time is given).

While the clock is lost, a process does not know when the others send a
paced site's requests (``Crawl-delay`` asks it of the crawler; RFC 9309
2.2.4 leaves such records to crawlers), so:

* first it sends none: the requests are held, asked again every
  :data:`HOLD_SECONDS`, and Redis is tried again every :data:`RETRY_SECONDS`;
  when it answers, the shared clock is used again at once (a short stall,
  a restart, a fail-over: the site never sees more than one request per
  delay);
* after :data:`HOLD_MAX_SECONDS` (at least the delay) still lost, so that a
  crawl never waits for Redis for ever, each process sends a site's
  requests in its own share of the time only (:func:`slot_wait`): the time
  cut in slots of :data:`SLOT_FACTOR` times the delay, one slot of each
  ``count`` to each process by its rank among the processes alive (both
  read from Redis's beats while it answered), a request sent in the first
  ``SLOT_FACTOR - 1`` delays of its slot only. Two sends of different
  processes are then at least the delay apart, each process's at least
  ``count`` delays apart, with the machines' clocks in sync (NTP) and the
  same processes alive as last read. For :data:`GRACE_SECONDS` after Redis
  answers again, a process that was sending in its slots keeps to them (the
  others may not have seen Redis back yet).

A Redis that answers again keeps the sites' next allowed times (stopped,
then resumed) or has lost them (restarted empty): each process then tells
it when it last sent or had an answer from a site (:func:`still_due`), so
that its next turn is not granted within the delay of those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "GRACE_SECONDS",
    "HOLD_MAX_SECONDS",
    "HOLD_SECONDS",
    "RETRY_SECONDS",
    "ClockOutage",
    "slot_wait",
    "still_due",
]

#: seconds between two tries of a lost Redis
RETRY_SECONDS = 1.0
#: seconds a held request waits before it asks again
HOLD_SECONDS = 0.5
#: seconds a paced site's requests are held while Redis is lost (at least its
#: delay); then they are sent in this process's slots
HOLD_MAX_SECONDS = 30.0
#: a slot is this many delays long; requests are sent in its first
#: ``SLOT_FACTOR - 1`` delays (the rest keeps the next process's sends a delay away)
SLOT_FACTOR = 1.25
#: seconds after Redis answers again that a process which sent in its slots
#: (or nearly: another process may have seen the outage this much earlier)
#: keeps to them (every process tries Redis within ``RETRY_SECONDS`` + its
#: call timeout, and beats every 2 s)
GRACE_SECONDS = 3.0


@dataclass
class ClockOutage:
    """An outage of the cluster clock, timed on a monotonic clock."""

    retry_seconds: float = RETRY_SECONDS
    hold_max_seconds: float = HOLD_MAX_SECONDS
    #: when the outage was first seen; ``None``: the clock answers
    since: float | None = None
    #: when Redis may be tried again
    next_try: float = 0.0
    #: after an outage that reached the slots: until when they are kept
    grace_until: float = 0.0

    @property
    def lost(self) -> bool:
        return self.since is not None

    def holding(self, now: float, delay: float) -> bool:
        """Whether a site paced at ``delay`` is held at ``now`` (Redis lost for
        less than :attr:`hold_max_seconds`, or than the delay: a turn granted
        just before the outage was seen is still running)."""
        return self.since is not None and now < self.since + max(self.hold_max_seconds, delay)

    def in_slots(self, now: float) -> bool:
        """Whether requests are sent in this process's slots at ``now`` (Redis
        lost past the hold, or answering again for less than the grace)."""
        if self.since is None:
            return now < self.grace_until
        return now >= self.since + self.hold_max_seconds

    def failed(self, now: float) -> bool:
        """A call failed at ``now``; ``True`` when it starts an outage (the one
        ERROR line of the outage is logged then)."""
        first = self.since is None
        if first:
            self.since = now
        self.next_try = now + self.retry_seconds
        return first

    def try_due(self, now: float) -> bool:
        """Whether Redis, lost, may be tried again at ``now`` (the next try is
        then set :attr:`retry_seconds` later)."""
        if self.since is None or now < self.next_try:
            return False
        self.next_try = now + self.retry_seconds
        return True

    def answered(self, now: float) -> float | None:
        """Redis answered at ``now``: the outage's length in seconds, ``None``
        when there was none."""
        since, self.since = self.since, None
        if since is None:
            return None
        # others may still be in their slots (or were: every process beats,
        # so each sees an outage at most GRACE_SECONDS after another)
        if now >= since + self.hold_max_seconds - GRACE_SECONDS:
            self.grace_until = now + GRACE_SECONDS
        return max(0.0, now - since)


def slot_wait(wall: float, delay: float, rank: int, count: int) -> float:
    """Seconds from ``wall`` (Unix time) to the next send window of process
    ``rank`` of ``count`` for a site paced at ``delay``; 0.0: in it now. Slots
    are :data:`SLOT_FACTOR` delays long, process ``rank`` owns every
    ``count``-th one (``rank`` first), and sends in its first
    ``SLOT_FACTOR - 1`` delays."""
    count = max(1, count)
    length = delay * SLOT_FACTOR
    cycle = length * count
    into = (wall - (rank % count) * length) % cycle
    if into < length - delay:
        return 0.0
    return cycle - into


def still_due(
    last: Iterable[tuple[str, float]], delay_for: Callable[[str], float | None], now: float
) -> Iterator[tuple[str, float]]:
    """The sites whose delay since this process's last send or answer
    (``last``: site, when) has not passed at ``now``, with the seconds left."""
    for site, when in last:
        delay = delay_for(site)
        if delay:
            left = delay - (now - when)
            if left > 0:
                yield site, left

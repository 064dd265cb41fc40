"""``Clock``: the time and the timers the crawl's glue reads, one per crawler, injected in tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._per_crawler import kept_on

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["Clock", "clock_of", "use_clock"]

_ATTRIBUTE = "_robotstxt_clock"

#: The wall-clock time a manual clock starts at (2024-01-01T00:00:00Z).
MANUAL_EPOCH = 1_704_067_200.0


class Clock:
    """Monotonic time, wall-clock time and timers.

    By default ``time.monotonic``, ``time.time`` and the running Twisted
    reactor's ``callLater``. :meth:`manual` wraps Twisted's
    ``twisted.internet.task.Clock``: time moves only when it is advanced.
    """

    def __init__(
        self,
        scheduler: Any = None,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        #: an ``IReactorTime`` (``None``: the installed reactor, looked up when used)
        self.scheduler = scheduler
        #: seconds of a clock that never goes back (the site table's times): the
        #: function itself, called several times a request, so no method wraps it
        self.monotonic: Callable[[], float] = monotonic
        #: the Unix time (the store's and HTTP's times)
        self.time: Callable[[], float] = wall

    @classmethod
    def manual(cls, scheduler: Any, epoch: float = MANUAL_EPOCH) -> Clock:
        """A clock driven by ``scheduler`` (a ``twisted.internet.task.Clock``):
        its ``seconds()`` is the monotonic time, ``epoch`` plus it the wall time."""
        return cls(scheduler, monotonic=scheduler.seconds, wall=lambda: epoch + scheduler.seconds())

    def call_later(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn(*args)`` in ``seconds``; returns its ``IDelayedCall``."""
        scheduler = self.scheduler
        if scheduler is None:
            from twisted.internet import reactor as scheduler
        return scheduler.callLater(seconds, fn, *args)


def clock_of(crawler: Crawler) -> Clock:
    """The crawler's one :class:`Clock` (the real one unless :func:`use_clock` set
    another): every expiry and lifetime of its robots.txt and tdmrep.json outcomes
    is read from it, so a test can move the crawl's time on instead of waiting."""
    return kept_on(crawler, _ATTRIBUTE, Clock)


def use_clock(crawler: Crawler, clock: Clock) -> None:
    """Make ``clock`` the crawler's :class:`Clock`; before its crawl starts."""
    setattr(crawler, _ATTRIBUTE, clock)

"""``PacingThreads``: the threads that make a crawler's calls to the cluster
clock (Redis), off the reactor. Scrapy glue.

A paced request asks Redis for its turn at the scheduler, confirms it just
before its download and pushes the site's next turn at its answer. Made on
the reactor, each call would stop the whole crawl for a Redis round trip
(more when Redis is on another machine, up to the call's time-out when it
hangs). They run here instead, on a few daemon threads of their own (a
thread stuck in a hung call never holds the process's exit); the caller
gets a ``Deferred`` that fires on the reactor with the call's result.

Each thread is a lane that runs its calls in the order they were asked, and
a site's calls always take the same lane (by the site's hash): a site's
answer pushes its next turn in Redis before a later request of the same site
is confirmed there, as when the calls were made on the reactor one after the
other. Calls of different sites run side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

__all__ = ["MAX_THREADS", "PacingThreads"]

_T = TypeVar("_T")

#: calls to Redis made at once at most (each on its own connection): the lanes
MAX_THREADS = 4


def _daemon_thread(*args: Any, **kwargs: Any) -> threading.Thread:
    thread = threading.Thread(*args, **kwargs)
    thread.daemon = True
    return thread


class _PacingPool(ThreadPool):
    threadFactory = staticmethod(_daemon_thread)  # type: ignore[assignment]


class PacingThreads:
    """A few lanes (one thread each) for the cluster clock's calls, stopped at
    close (or at the reactor's shutdown, whichever comes first)."""

    def __init__(self, reactor: Any = None) -> None:
        if reactor is None:
            from twisted.internet import reactor
        self._reactor = reactor
        self._lanes = [
            _PacingPool(minthreads=0, maxthreads=1, name=f"robotstxt-pacing-{number}")
            for number in range(MAX_THREADS)
        ]
        for lane in self._lanes:
            lane.start()
        self._trigger: Any = reactor.addSystemEventTrigger("during", "shutdown", self._at_shutdown)

    def __call__(self, call: Callable[[], _T], site: str = "") -> Deferred[_T]:
        """``call()`` on the lane of ``site``, after the calls asked on it before;
        its result (or failure) on the reactor."""
        lane = self._lanes[hash(site) % len(self._lanes)]
        return deferToThreadPool(self._reactor, lane, call)

    def stop(self) -> None:
        """No more calls; the threads end once their current call is over (not
        waited for: a call to a Redis that hangs ends at its time-out)."""
        trigger, self._trigger = self._trigger, None
        if trigger is not None:
            self._reactor.removeSystemEventTrigger(trigger)
            self._stop_pool()

    def _at_shutdown(self) -> None:
        self._trigger = None
        self._stop_pool()

    def _stop_pool(self) -> None:
        for lane in self._lanes:
            if lane.started:
                # ThreadPool.stop joins its thread: a call stuck in a Redis that
                # hangs (until its time-out) must not hold the reactor meanwhile
                _daemon_thread(target=lane.stop, name="robotstxt-pacing-stop").start()

"""Waking the sites that wait for another process's robots.txt fetch as soon as
it is saved or given up (the store's release messages), polling kept. Scrapy glue.

A process that finds a site's lease held by another process looks at the
store again every ``POLL_SECONDS``; a store that can tell when a site is saved
or released (Redis pub/sub: :meth:`RedisStore.watch`) wakes that wait at once.
The messages arrive on the store's own thread and are handed to the reactor
only for the sites this crawl waits for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from .._clock import Clock

__all__ = ["ReleaseWakeups"]


class ReleaseWakeups:
    """Naps of sites waiting for another process's fetch, cut short by its release."""

    def __init__(self, store: Any, reactor: Any, clock: Clock) -> None:
        #: the messages come on the store's thread: handed to the reactor
        self._reactor = reactor
        #: the crawl's clock: the naps' timers
        self._clock = clock
        #: site -> the naps waiting for it (read by the store's thread: membership only)
        self._naps: dict[str, list[Deferred[None]]] = {}
        watch = getattr(store, "watch", None)
        #: whether the store tells this crawl when a site is released
        self.watching = bool(watch is not None and watch(self._from_store))

    def _from_store(self, site: str) -> None:
        """On the store's thread: a site was saved or released somewhere."""
        if site in self._naps:
            self._reactor.callFromThread(self._wake, site)

    def _wake(self, site: str) -> None:
        for nap in self._naps.pop(site, []):
            if not nap.called:
                nap.callback(None)

    async def nap(self, site: str, seconds: float) -> None:
        """Wait ``seconds``, or less if the site is released meanwhile."""
        nap: Deferred[None] = Deferred()

        def due() -> None:
            if not nap.called:
                nap.callback(None)

        timer = self._clock.call_later(seconds, due)
        self._naps.setdefault(site, []).append(nap)
        try:
            await maybe_deferred_to_future(nap)
        finally:
            if timer.active():
                timer.cancel()
            naps = self._naps.get(site)
            if naps is not None and nap in naps:
                naps.remove(nap)
                if not naps:
                    del self._naps[site]

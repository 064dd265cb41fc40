"""The robots.txt store's worker thread: every store call of a crawl runs on it,
off the reactor; it tracks the store's outages and the writes not finished,
and bounds the wait for them at close.

A store that fails costs one ERROR line per outage and the stat
``robotstxt/store/errors``; it is then left alone for a while (the calls
queued behind the failure fail at once instead of each paying the timeout).
That while is read from the crawl's clock (its ``monotonic``, handed down by
the site service), so a test moves it on instead of waiting it out.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from ...sites._store import RobotsStore, StoreError
from .._clock import Clock

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

__all__ = ["Skipped", "StoreWorker"]

logger = logging.getLogger("scrapy_rfc9309.store")

_T = TypeVar("_T")


class Skipped(StoreError):
    """A store call not made: the store is left alone after a failure, the caller
    stopped waiting for it, or the store was given up at close."""


def _daemon_thread(*args: Any, **kwargs: Any) -> threading.Thread:
    thread = threading.Thread(*args, **kwargs)
    thread.daemon = True  # a worker stuck in a hung call never holds the process's exit
    return thread


class _StorePool(ThreadPool):
    threadFactory = staticmethod(_daemon_thread)  # type: ignore[assignment]


def describe(exc: BaseException) -> str:
    """An error for a log line, never empty."""
    return str(exc) or type(exc).__name__


class StoreWorker:
    """One thread per store; outages; pending writes (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        store: RobotsStore,
        reactor: Any,
        retry_seconds: float,
        clock: Clock | None = None,
    ) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.store = store
        self.reactor = reactor
        #: after a failure, the store is left alone this long
        self.retry_seconds = retry_seconds
        #: the crawl's clock: its monotonic time (read on the worker thread too)
        #: times the outages' window, its timers the bound on the writes at close
        self.clock = clock or Clock(reactor)
        self._monotonic = self.clock.monotonic
        #: set at close: no new look-up or save is asked for
        self.closed = False
        #: set at close when the worker did not finish in time: nothing more runs on it
        self._abandoned = False
        #: monotonic time until which the store is left alone after a failure
        self._down_until = 0.0
        self._outage = False
        #: store writes not finished yet, and the records they save
        self._writes: set[Deferred[Any]] = set()
        self._pending_records = 0
        self._pool = _StorePool(minthreads=1, maxthreads=1, name="robotstxt-store")
        self._pool.start()
        self._shutdown_trigger: Any = reactor.addSystemEventTrigger(
            "during", "shutdown", self._stop_at_shutdown
        )

    def call(
        self,
        fn: Callable[..., _T],
        *args: Any,
        skip: bool = True,
        given_up: list[bool] | None = None,
    ) -> Deferred[_T]:
        """``fn(*args)`` on the worker; ``skip``: not made (:class:`Skipped`) while the
        store is left alone; ``given_up[0]`` set: not made (the caller stopped waiting)."""
        return deferToThreadPool(self.reactor, self._pool, self._guarded, skip, given_up, fn, *args)

    def _guarded(
        self, skip: bool, given_up: list[bool] | None, fn: Callable[..., _T], *args: Any
    ) -> _T:
        """On the worker: ``fn`` unless the store is to be left alone (``Skipped``).

        A failure marks the store down here, on the worker, so that the calls
        queued behind it fail at once instead of each paying the timeout.
        """
        if self._abandoned:
            raise Skipped("the store was given up at close")
        if given_up is not None and given_up[0]:
            raise Skipped("no longer waited for")
        if skip and self._monotonic() < self._down_until:
            raise Skipped("the store is left alone after a failure")
        try:
            return fn(*args)
        except Exception:
            self._down_until = max(self._down_until, self._monotonic() + self.retry_seconds)
            raise

    def available(self) -> bool:
        return not self.closed and self._monotonic() >= self._down_until

    def failed(self, what: str, exc: BaseException | None) -> None:
        """A store call failed: the crawl goes on from memory; one ERROR per outage.
        (``None``: a Twisted failure that carried no exception.)"""
        if exc is None:
            exc = RuntimeError("no error given")
        self.stats.inc_value("robotstxt/store/errors")
        self._down_until = self._monotonic() + self.retry_seconds
        if not self._outage:
            self._outage = True
            logger.error(
                "robots.txt store failed while %s: %s; going on without it (robots.txt "
                "kept in memory, fetched as without a store), tried again in %g s",
                what,
                describe(exc),
                self.retry_seconds,
                extra={"spider": self.crawler.spider},
            )
        else:
            logger.debug(
                "robots.txt store %s still failing (%s): %s", self.store.uri, what, describe(exc)
            )

    def worked(self) -> None:
        if self._outage:
            self._outage = False
            logger.info("robots.txt store %s works again", self.store.uri)

    def write(self, what: str, records: int, fn: Callable[..., Any], *args: Any) -> Deferred[Any]:
        """``fn(*args)`` on the worker, a write saving ``records`` records: waited for at
        close, counted in ``robotstxt/store/saved``, a failure reported. The
        returned Deferred fires (with ``None``) once it is over."""
        done = self.call(fn, *args)
        self._writes.add(done)
        self._pending_records += records

        def finished(result: Any) -> None:
            self._writes.discard(done)
            self._pending_records -= records
            if not isinstance(result, Failure):
                self.worked()
                if records:
                    self.stats.inc_value("robotstxt/store/saved", records)
            elif isinstance(result.value, Skipped):
                logger.debug("robots.txt store %s: not %s: %s", self.store.uri, what, result.value)
            else:
                self.failed(what, result.value)

        done.addBoth(finished)
        return done

    async def close(self, wait_seconds: float) -> None:
        """Close the store after the pending writes, waiting ``wait_seconds`` at most
        for them all together; past it the worker is given up (one ERROR)."""
        closing = self.call(self.store.close, skip=False)
        pending = [*self._writes, closing]
        # One bound for all pending writes together (not one per write): the
        # list is not cancelled at the bound, so no write reports a cancellation.
        finished: Deferred[Any] = DeferredList(pending, consumeErrors=True)
        bounded: Deferred[bool] = Deferred()

        def at_bound() -> None:
            if not bounded.called:
                bounded.callback(False)

        timer = self.clock.call_later(wait_seconds, at_bound)

        def all_done(_: Any) -> None:
            if not bounded.called:
                timer.cancel()
                bounded.callback(True)

        finished.addBoth(all_done)
        if await maybe_deferred_to_future(bounded):
            self._stop_pool()
            return
        # The worker is stuck in a call (Redis not answering): it is given up,
        # not joined; whatever is queued on it is not run.
        self._abandoned = True
        self.stats.inc_value("robotstxt/store/errors")
        logger.error(
            "robots.txt store %s did not answer within %g s at close: %d records not "
            "saved (%d store writes given up); closing without it",
            self.store.uri,
            wait_seconds,
            self._pending_records,
            len(self._writes),
            extra={"spider": self.crawler.spider},
        )
        self._stop_pool(join=False)

    def _stop_pool(self, *, join: bool = True) -> None:
        trigger, self._shutdown_trigger = self._shutdown_trigger, None
        if trigger is not None:
            self.reactor.removeSystemEventTrigger(trigger)
        if self._pool.started and join:
            self._pool.stop()

    def _stop_at_shutdown(self) -> None:
        self._shutdown_trigger = None
        if self._pool.started and not self._abandoned:
            self._pool.stop()

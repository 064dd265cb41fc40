"""The suite's real-process waits: the only place a test waits for time to pass.

A test about time moves a clock instead (``tests/clock.py``; the crawl's
``Clock``, the store worker's, the cluster clock's ``now``), and a test that
holds a store call open releases a gate when its condition holds
(``tests/gates.py``). What remains is waiting for another real process that
keeps its own time: a Redis server or a Redis Cluster coming up, a crawler
subprocess reaching a point or ending, a pub/sub message delivered, a Redis
key's own expiry, a child process's exit. For those:

- :func:`until`: poll a condition, off the reactor, at most ``timeout``
  seconds; a condition never met fails the test, saying what was waited for;
- :func:`until_async`: the same with the reactor running (the test's sites
  answer, the crawls go on meanwhile);
- :func:`hold`: the few negative checks of a real crawl ("nothing is fetched
  during N seconds"), each naming why it waits.

``tests/server.py``, ``tests/cluster_crawl.py`` and ``tests/redis_server.py``
(the real crawl's server and processes, and the Redis they start) keep waits of
their own; ``tests/test_layers.py`` checks that no other test module sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["hold", "until", "until_async"]

#: How often a condition is looked at again (seconds).
POLL_SECONDS = 0.02


def until(condition: Callable[[], object], timeout: float, what: str) -> None:
    """Wait, blocking, until ``condition()`` is true: at most ``timeout`` seconds,
    then an ``AssertionError`` naming ``what`` was waited for."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(POLL_SECONDS)


async def until_async(condition: Callable[[], object], timeout: float, what: str) -> None:
    """:func:`until` with the reactor running meanwhile."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await _pause(POLL_SECONDS)


async def hold(seconds: float, why: str) -> None:
    """Let a real crawl run ``seconds`` with the reactor running (``why``: what
    the test then checks did not happen, or happened, meanwhile)."""
    assert why, "say why the test holds"
    await _pause(seconds)


async def _pause(seconds: float) -> None:
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))

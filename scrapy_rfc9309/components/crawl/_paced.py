"""``PacedSites``: requests of settled sites waiting in the scheduler queue for
their site's turn in the cluster (Redis).

With a Redis store, each site's requests are spaced across the processes of
a cluster (:class:`~..cluster._pacing.ClusterPacer`). A request whose site's
next allowed time has not come waits here, in its site's line, pinning the
site's outcome; a timer sends the first of the line back to the queue's
ready requests when the time comes, to ask for the turn again. Redis is
asked off the reactor: the request asking waits here meanwhile, and once
granted it is the first request the queue hands out (its turn is
reserved). Scrapy glue, for :class:`~._queue.RobotsTxtPriorityQueue`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._engine import wake_engine
from ..cluster._pacing import META_WAIT_SINCE

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

    from ..cluster._pacing import ClusterPacer
    from ..sitefiles._service import SiteService

__all__ = ["PacedSites"]

logger = logging.getLogger("scrapy_rfc9309.queue")


class PacedSites:
    """Each paced site's line of requests, and the timer of its next turn."""

    def __init__(
        self,
        crawler: Crawler,
        robots: SiteService,
        pacer: ClusterPacer,
        ready: Callable[[Request], None],
    ) -> None:
        self._crawler = crawler
        self._robots = robots
        self._pacer = pacer
        pacer.queue_paces = True  # the queue spaces the requests, not the middleware
        #: where a request whose turn has come goes back (the queue's ready requests)
        self._ready = ready
        #: site -> requests of a READY site waiting for its turn, and its timer
        self._lines: dict[str, deque[Request]] = {}
        self._timers: dict[str, Any] = {}
        #: requests waiting in all lines
        self.count = 0
        #: sites whose first paced request is back in the queue to ask again
        self._trying: set[str] = set()
        #: site -> its request whose turn Redis is being asked for (off the reactor)
        self._asking: dict[str, Request] = {}
        #: requests whose turn Redis granted, with their sites: handed out first
        self._granted: deque[tuple[str, Request]] = deque()

    def turn(self, site: str, request: Request) -> bool:
        """Whether ``request`` (its site settled) may go now. Otherwise it waits
        here: in its site's line until the site's next allowed time, or while
        Redis is asked for its turn (off the reactor), after which it is
        handed out first (:meth:`granted`) or waits in the line."""
        line = self._lines.get(site)
        if site in self._asking or (line is not None and site not in self._trying):
            if line is None:
                line = self._lines[site] = deque()
            line.append(request)  # behind the site's first waiting request
            self._robots.pin(site)  # kept while it waits (unpinned when popped)
            self.count += 1
            self._pacer.started_waiting(request)
            return False
        self._trying.discard(site)
        self._asking[site] = request
        self._robots.pin(site)  # waiting for Redis: its outcome is kept
        self.count += 1
        self._pacer.wait(site).addCallbacks(
            self._answered,
            self._ask_failed,
            callbackArgs=(site, request),
            errbackArgs=(site, request),
        )
        if self._granted and self._granted[-1][1] is request:  # answered at once
            self._granted.pop()  # (Redis not asked): it goes now, not at the next pop
            self.count -= 1
            self._robots.unpin(site)
            return True
        return False

    def granted(self) -> Request | None:
        """A request whose turn Redis granted since the last pop (handed out
        before any other: its turn is reserved), its site unpinned; ``None``:
        none."""
        if not self._granted:
            return None
        site, request = self._granted.popleft()
        self.count -= 1
        self._robots.unpin(site)
        return request

    def _answered(self, wait: float, site: str, request: Request) -> None:
        """Redis answered the ask of ``request``'s turn: ``wait`` 0.0, it goes
        (handed out at the next pop); else it waits first in its site's line."""
        if self._asking.get(site) is not request:
            return  # taken out at close meanwhile
        del self._asking[site]
        line = self._lines.get(site)
        if wait <= 0:
            if line:  # the others wait for the next turn
                self._arm(site, self._pacer.delay_for(site) or 0.0)
            self._pacer.ended_waiting(request)
            self._granted.append((site, request))
            wake_engine(self._crawler)
            return
        if line is None:
            line = self._lines[site] = deque()
        line.appendleft(request)  # the first of its line (pinned and counted already)
        self._pacer.started_waiting(request)
        self._arm(site, wait)

    def _ask_failed(self, failure: Failure, site: str, request: Request) -> None:
        """Asking for ``request``'s turn failed with an error that is not Redis's
        (a bug): logged, and the request handed out; the pacing middleware
        still asks for its turn before it is sent."""
        logger.error(
            "Asking Redis for the turn of %s failed unexpectedly; handed out, its turn "
            "is asked before it is sent",
            request,
            exc_info=failure.value,
        )
        self._answered(0.0, site, request)

    def _arm(self, site: str, seconds: float) -> None:
        timer = self._timers.pop(site, None)
        if timer is not None and timer.active():
            timer.cancel()
        # on the crawl's clock, as every wait of the crawl
        self._timers[site] = self._robots.clock.call_later(max(0.0, seconds), self._turn_due, site)

    def _turn_due(self, site: str) -> None:
        """The site's next allowed time has come: its first waiting request goes
        back to the queue's ready requests to ask for the turn."""
        self._timers.pop(site, None)
        line = self._lines.get(site)
        if not line:
            self._lines.pop(site, None)
            return
        request = line.popleft()
        self.count -= 1
        if line:
            self._trying.add(site)
        else:
            del self._lines[site]
        self._ready(request)
        wake_engine(self._crawler)

    def take_all(self) -> list[tuple[str, Request]]:
        """Requests waiting for their site's turn, with their sites, taken out (at close)."""
        for timer in self._timers.values():
            if timer.active():
                timer.cancel()
        self._timers.clear()
        paced = [(site, request) for site, line in self._lines.items() for request in line]
        paced.extend(self._asking.items())
        paced.extend(self._granted)
        self._asking.clear()
        self._granted.clear()
        for _, request in paced:  # not sent: its wait is not counted (nor kept in JOBDIR)
            request.meta.pop(META_WAIT_SINCE, None)
        self._lines.clear()
        self.count = 0
        self._trying.clear()
        return paced

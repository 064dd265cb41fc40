"""``PacedSites``: requests of settled sites waiting in the scheduler queue for
their site's turn in the cluster (Redis).

With a Redis store, each site's requests are spaced across the processes of
a cluster (:class:`~..cluster._pacing.ClusterPacer`). A request whose site's
next allowed time has not come waits here, in its site's line, pinning the
site's outcome; a timer sends the first of the line back to the queue's
ready requests when the time comes, to ask for the turn again. Scrapy glue,
for :class:`~._queue.RobotsTxtPriorityQueue`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._engine import wake_engine
from ..cluster._pacing import META_WAIT_SINCE

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from ..cluster._pacing import ClusterPacer
    from ..sitefiles._service import SiteService

__all__ = ["PacedSites"]


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

    def turn(self, site: str, request: Request) -> bool:
        """Whether ``request`` (its site settled) may go now; otherwise it waits
        here, in its site's line, until the site's next allowed time."""
        line = self._lines.get(site)
        if line is not None and site not in self._trying:
            line.append(request)  # behind the site's first waiting request
            self._robots.pin(site)  # kept while it waits (unpinned when popped)
            self.count += 1
            self._pacer.started_waiting(request)
            return False
        trying = site in self._trying
        self._trying.discard(site)
        wait = self._pacer.wait(site)
        if wait <= 0:
            if line:  # the others wait for the next turn
                self._arm(site, self._pacer.delay_for(site) or 0.0)
            self._pacer.ended_waiting(request)
            return True
        if line is None:
            line = self._lines[site] = deque()
        self._robots.pin(site)  # waiting here: its outcome is kept (unpinned when popped)
        if trying:
            line.appendleft(request)
        else:
            line.append(request)
        self._pacer.started_waiting(request)
        self.count += 1
        self._arm(site, wait)
        return False

    def _arm(self, site: str, seconds: float) -> None:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor
        timer = self._timers.pop(site, None)
        if timer is not None and timer.active():
            timer.cancel()
        self._timers[site] = reactor.callLater(max(0.0, seconds), self._turn_due, site)

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
        for _, request in paced:  # not sent: its wait is not counted (nor kept in JOBDIR)
            request.meta.pop(META_WAIT_SINCE, None)
        self._lines.clear()
        self.count = 0
        self._trying.clear()
        return paced

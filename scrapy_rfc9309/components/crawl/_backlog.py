"""``SiteBacklogs``: a settled site's backlog handed out a few requests at a time.

Pure bookkeeping (no Scrapy): when a site's robots.txt settles (RFC 9309
2.3), the requests that waited for it are not handed out all at once. Each
site with a backlog has a *window*: how many of its requests may be in the
ready queue or in the downloader at once. It starts at one and grows by one,
up to the site's download-slot concurrency, only when nothing else is ready
to go and one of its requests came back since it last grew (as a TCP
congestion window grows per round trip, RFC 5681 3.1), and, for
:data:`GROWTH_HOLD` seconds after the window opened, only when no other
site's robots.txt answer is due (the caller says: their requests will be
ready in a moment), so a broad crawl
interleaves its sites as it would without robots.txt (one request of a host
in flight, its connection reused), and a crawl of a few sites still fills
their slots. A request that comes back (answered,
failed, or dropped anywhere) frees its place, and the next waiting request
takes it. Scrapy starts the next request of a busy download slot as a
response frees the slot, before that response's connection is back in
Twisted's pool: a backlog handed out at once opens a connection per request.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from itertools import count
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy import Request

__all__ = ["GROWTH_HOLD", "SiteBacklogs"]

#: Seconds after a site's window opens during which it does not grow while
#: other sites' robots.txt answers are due: the half second after which a
#: robots.txt download counts as slow (``_download_slots.SLOW_AFTER``), so
#: a stream of new sites never keeps a settled site at one request in flight.
GROWTH_HOLD = 0.5


class _Window:
    """One site's backlog and the requests of it let go."""

    __slots__ = ("answered", "limit", "opened", "out", "queued", "size", "waiting")

    #: arrival numbers: requests of equal priority go in arrival order
    arrivals = count()

    def __init__(self, limit: int, opened: float) -> None:
        #: the site's download-slot concurrency: the most ``size`` grows to
        self.limit = max(1, limit)
        #: when the window opened (its site settled), on the caller's clock
        self.opened = opened
        #: how many may be queued or out now
        self.size = 1
        #: requests not let go yet, by priority (the highest first), then arrival
        self.waiting: list[tuple[int, int, Request]] = []
        #: let go into the ready queue, not handed out yet
        self.queued: set[Request] = set()
        #: handed out, not back yet
        self.out: set[Request] = set()
        #: whether one of its requests came back since the window last grew
        self.answered = False

    def room(self) -> bool:
        return len(self.queued) + len(self.out) < self.size

    def wait(self, request: Request) -> None:
        heapq.heappush(self.waiting, (-request.priority, next(self.arrivals), request))

    def next(self) -> Request:
        return heapq.heappop(self.waiting)[2]

    def idle(self) -> bool:
        return not (self.waiting or self.queued or self.out)


class SiteBacklogs:
    """The sites whose backlog is handed out through a window (site -> window)."""

    def __init__(self) -> None:
        self._windows: dict[str, _Window] = {}
        #: the same dictionary, read-only for the queue: truthy while a window is
        #: open (tested several times a request, without a call to ``__bool__``)
        self.open: Mapping[str, object] = self._windows
        #: request let go (queued or out) -> its site
        self._site_of: dict[Request, str] = {}
        #: sites with a window, in turn: who grows next, who is checked next
        self._turns: deque[str] = deque()
        self._waiting = 0

    def __len__(self) -> int:
        """Requests waiting in windows (not in the ready queue)."""
        return self._waiting

    def __bool__(self) -> bool:
        return bool(self._windows)

    def __contains__(self, site: str) -> bool:
        return site in self._windows

    def start(self, site: str, requests: list[Request], limit: int, now: float) -> list[Request]:
        """``site``'s backlog ``requests`` wait in its window (opened at
        ``now`` with ``limit``, the site's slot concurrency); the ones to let
        go now."""
        window = self._windows.get(site)
        if window is None:
            window = self._windows[site] = _Window(limit, now)
            self._turns.append(site)  # a turn left from a window closed since is dropped
        for request in requests:
            window.wait(request)
        self._waiting += len(requests)
        return self._let_go(site, window)

    def add(self, site: str, request: Request) -> list[Request] | None:
        """A new request of ``site``: behind its backlog if it has one (the
        ones to let go now), else ``None``."""
        window = self._windows.get(site)
        if window is None:
            return None
        window.wait(request)
        self._waiting += 1
        return self._let_go(site, window)

    def handed_out(self, request: Request) -> None:
        """``request``, let go, left the ready queue for the downloader."""
        site = self._site_of.get(request)
        if site is not None:
            window = self._windows[site]
            window.queued.discard(request)
            window.out.add(request)

    def came_back(self, request: Request) -> list[Request]:
        """``request`` is back (or never went): the ones to let go in its place."""
        site = self._site_of.pop(request, None)
        if site is None:
            return []
        window = self._windows[site]
        if request in window.out:
            window.out.discard(request)
            window.answered = True
        window.queued.discard(request)
        return self._let_go(site, window)

    def grow(self, now: float, *, answers_due: bool = False) -> list[Request]:
        """Nothing else is ready: the next site in turn whose window is below
        its limit, and had a request come back since it last grew, lets one
        more go (none when no window may grow). A site settled while others
        are still pending would otherwise grow to its limit at once, each
        request let go on a connection of its own, just before the other
        sites' requests are ready. With ``answers_due`` (other sites'
        robots.txt answers are due), a window opened less than
        :data:`GROWTH_HOLD` before ``now`` does not grow: those sites'
        requests are ready in a moment, and a second request of this site
        now would open a second connection to its host."""
        held_since = now - GROWTH_HOLD if answers_due else None
        for _ in range(len(self._turns)):
            site, window = self._next_turn()
            if (
                window is None
                or not window.waiting
                or window.size >= window.limit
                or not window.answered
                or (held_since is not None and window.opened > held_since)
            ):
                continue
            window.size += 1
            window.answered = False
            return self._let_go(site, window)
        return []

    def check(self, gone: Callable[[Request], bool], sites: int | None = None) -> list[Request]:
        """The next ``sites`` windows in turn (all: ``None``): requests handed out that are
        ``gone`` (a downloader middleware dropped them, no signal says so)
        free their places; the ones to let go in their place."""
        freed: list[Request] = []
        turns = len(self._turns)
        for _ in range(turns if sites is None else min(sites, turns)):
            _, window = self._next_turn()
            if window is None:
                continue
            for request in [request for request in window.out if gone(request)]:
                freed.extend(self.came_back(request))
        return freed

    def take_all(self) -> Iterator[tuple[str, Request]]:
        """Every waiting request with its site, taken out (at close)."""
        for site, window in self._windows.items():
            for _, _, request in sorted(window.waiting):
                yield site, request
        self._windows.clear()
        self._site_of.clear()
        self._turns.clear()
        self._waiting = 0

    def _let_go(self, site: str, window: _Window) -> list[Request]:
        let_go: list[Request] = []
        while window.waiting and window.room():
            request = window.next()
            window.queued.add(request)
            self._site_of[request] = site
            let_go.append(request)
        self._waiting -= len(let_go)
        if window.idle():
            del self._windows[site]  # its turn is dropped when next due
        return let_go

    def _next_turn(self) -> tuple[str, _Window | None]:
        """The site whose turn it is, and its window (``None``: closed since,
        its turn dropped)."""
        site = self._turns.popleft()
        window = self._windows.get(site)
        if window is not None:
            self._turns.append(site)
        return site, window

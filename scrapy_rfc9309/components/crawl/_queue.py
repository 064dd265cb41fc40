"""``RobotsTxtPriorityQueue``: requests wait in the scheduler, not in the downloader.

A scheduler priority queue (``SCHEDULER_PRIORITY_QUEUE``) that does not hand
out a request whose site's robots.txt is not settled yet, so such a request
takes none of the crawl's concurrency (a request held in a downloader
middleware takes one of ``CONCURRENT_REQUESTS`` for as long as it waits), as
crawlers built for politeness keep a host's URLs in their frontier until its
robots.txt is known.

* **fetch ahead**: the first request of a new site starts its robots.txt
  download as it is scheduled, so by the time its pages are due the verdict
  is usually known;
* **priorities kept**: requests of settled sites are served by one
  :class:`scrapy.pqueues.ScrapyPriorityQueue`, in the users' priority order;
  a held request joins it, at its own priority, when its site settles;
* **O(1) per request**: a dict look-up of the site's state; no scan over the
  queued sites (each request is moved at most once per robots.txt fetch);
* **unreachable sites deferred**: while a site's robots.txt is unreachable
  (RFC 9309 2.3.1.4), its requests wait here, and it is tried again, for at
  most ``ROBOTSTXT_UNREACHABLE_DEFER`` seconds (HTTP: The Definitive Guide ch. 9);
* **JOBDIR**: with a disk queue every request is stored on disk as with
  Scrapy's queues; a request held because its site is pending is kept in
  memory and written back at close, so a resumed crawl finds it (its
  robots.txt is fetched again only if no longer cached).

* **pinned**: each request to be handed out pins its site's outcome in the
  site table (a held request from the moment its site is settled), so
  ``ROBOTSTXT_CACHE_MAX_SITES`` never evicts a site whose requests still
  wait (they would find it unknown, and fetch it again); fetches ahead stop
  while pinned sites fill the table, and resume as their requests leave. A
  pending site costs no pin: nothing of it can be evicted yet.
* **backlogs let go gradually**: the requests that waited for a site go
  back into the queue through its window (:class:`~._backlog.SiteBacklogs`):
  one at a time while other requests are ready, more (up to the site's
  download-slot concurrency) when nothing else is (and, for half a second
  after it settled, no other site's robots.txt answer is due:
  :meth:`~._service.SiteService.answers_due`), the next as one comes
  back, so the site's connection is reused rather than one opened per
  request.

The site states come from the crawler's :class:`~._service.SiteService`; the
decision stays in :class:`~scrapy_rfc9309.RobotsTxtMiddleware`: a request
handed out reaches it with its site's outcome fresh, and is let through or
dropped there. Without that middleware (``ROBOTSTXT_OBEY = False``) this is a
plain ``ScrapyPriorityQueue``.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.pqueues import ScrapyPriorityQueue

from ...sites._sitetable import SiteState
from .._engine import in_downloader, page_slot_concurrency, page_slot_delayed, wake_engine
from .._report import report_for
from ..settings._component_settings import page_delays_possible
from ..settings._start_up import start_up_errors_logged
from ..sitefiles._service import SiteService, site_service
from ._backlog import SiteBacklogs
from ._paced import PacedSites

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["RobotsTxtPriorityQueue"]

logger = logging.getLogger("scrapy_rfc9309.queue")

#: Requests a ``pop`` looks at and sets aside (their site pending) before it
#: answers ``None`` for now and asks the engine to come back after a reactor
#: turn: a resumed crawl or a burst of expired sites never holds the reactor
#: for long.
DIVERT_BUDGET = 1_000
#: Requests of settled sites a ``pop`` moves back into the queue in one go.
RELEASE_BUDGET = 10_000
#: Site backlogs a ``pop`` checks for requests dropped in the downloader's
#: middlewares (no signal says so), while other requests are ready.
CHECK_BUDGET = 1
#: Site backlogs a ``pop`` checks so when nothing is ready and every window is full.
GROW_CHECK_BUDGET = 64


#: The reason recorded for a request still held by the queue when the spider closed.
_CLOSED_HELD = "Dropped: the spider closed while it waited in the scheduler queue"


class RobotsTxtPriorityQueue:
    """A scheduler priority queue that withholds requests until their site's
    robots.txt is settled (RFC 9309 2.3), and fetches it ahead.

    Enabled by the add-on (``SCHEDULER_PRIORITY_QUEUE``, at add-on
    priority). Called by Scrapy's scheduler as any priority queue:
    ``from_crawler``, ``push``, ``pop``, ``peek``, ``close``, ``__len__``.
    """

    @classmethod
    def from_crawler(
        cls,
        crawler: Crawler,
        downstream_queue_cls: Any,
        key: str,
        startprios: Iterable[int] = (),
        *,
        start_queue_cls: Any = None,
    ) -> RobotsTxtPriorityQueue:
        with start_up_errors_logged():
            return cls(
                crawler, downstream_queue_cls, key, startprios, start_queue_cls=start_queue_cls
            )

    def __init__(
        self,
        crawler: Crawler,
        downstream_queue_cls: Any,
        key: str,
        startprios: Iterable[int] = (),
        *,
        start_queue_cls: Any = None,
    ) -> None:
        if isinstance(startprios, dict):
            raise ValueError(
                "RobotsTxtPriorityQueue cannot resume a crawl whose JOBDIR was written by "
                "another priority queue (DownloaderAwarePriorityQueue?); resume it with the "
                "SCHEDULER_PRIORITY_QUEUE it was started with"
            )
        self.crawler = crawler
        self.key = key
        extra = {} if start_queue_cls is None else {"start_queue_cls": start_queue_cls}
        #: requests that can be handed out, in priority order (on disk with JOBDIR)
        self._ready = ScrapyPriorityQueue(
            crawler, downstream_queue_cls, key, list(startprios), **extra
        )
        #: site -> requests waiting for its robots.txt, in arrival order: a lone
        #: request as itself, a list from the second on (a broad crawl holds
        #: one request on each of many sites, and a list costs ~90 bytes)
        self._held: dict[str, Request | list[Request]] = {}
        self._held_count = 0
        #: sites settled since, whose held requests go back to ``_ready``
        self._released: deque[str] = deque()
        #: the same sites, to pin each once (a site may be released twice: its
        #: robots.txt, then its tdmrep.json)
        #: with the number of their requests pinned then
        self._releasing: dict[str, int] = {}
        #: a disk queue stores every request it is given at once, so that
        #: requests that cannot be stored go to the memory queue instead
        self._persistent = bool(key)
        #: the crawler's site service, made by the middleware (``None``: not enabled)
        self._robots = site_service(crawler, create=False)
        if self._robots is not None:
            self._robots.register(self)
        #: with a Redis store: each site's requests spaced across the cluster,
        #: those of a READY site whose turn has not come waiting in its line
        pacer = None if self._robots is None else self._robots.pacer
        self._paced = (
            None
            if pacer is None or self._robots is None
            else PacedSites(crawler, self._robots, pacer, self._ready.push)
        )
        #: settled sites' backlogs, let go a few requests at a time
        self._backlogs = SiteBacklogs()
        #: the sites with a window open (truthy while one is)
        self._windows = self._backlogs.open
        #: DOWNLOAD_DELAY, AutoThrottle or DOWNLOAD_SLOTS may space a site's slot
        self._page_delays = page_delays_possible(crawler.settings, getattr(crawler, "spider", None))
        #: connected to ``request_left_downloader`` (while a backlog has a window)
        self._listening = False

    # -- the scheduler's calls ----------------------------------------------------

    def push(self, request: Request) -> None:
        robots = self._robots
        # the parsed URL is not kept with the request while it waits (it
        # would cost ~400 bytes per queued request)
        site = None if robots is None else robots.site_for(request)
        if robots is None or site is None:
            self._ready.push(request)
            return
        state = robots.site_state(site)
        if state is SiteState.UNKNOWN:
            robots.prefetch(site, request)  # fetch ahead
            state = SiteState.PENDING
        if state is SiteState.READY and not self._persistent:
            let_go = self._backlogs.add(site, request) if self._windows else None
            if let_go is None and self._one_at_a_time(site, request):
                # a spaced site: one request in the downloader at a time
                let_go = self._backlogs.start(site, [request], 1, robots.clock.monotonic())
            if let_go is not None:  # behind its site's backlog
                robots.pin(site)
                self._push_ready(let_go)
                if not self._listening:
                    self._follow_backlogs()
                return
        if state is SiteState.READY or self._persistent:
            # on disk now (it may fail to serialise: the scheduler then uses
            # its memory queue); set aside when popped if still not settled
            self._ready.push(request)
            robots.pin(site)  # to be handed out: its outcome is kept until then
        else:
            # held: pinned once its site is settled (site_released), so that a
            # pending site costs no pin (nothing of it can be evicted yet)
            self._hold(site, request)

    def pop(self) -> Request | None:
        request = self._pop()
        if bool(self._windows) is not self._listening:
            self._follow_backlogs()
        return request

    def _pop(self) -> Request | None:
        if self._released:
            self._move_released()
        robots = self._robots
        if robots is None:
            return self._ready.pop()
        if self._paced is not None:
            granted = self._paced.granted()  # its turn reserved in Redis: first
            if granted is not None:
                return granted
        backlogs = self._backlogs
        windows = self._windows
        if windows:
            self._push_ready(backlogs.check(self._gone, CHECK_BUDGET))
        for _ in range(DIVERT_BUDGET):
            request = self._ready.pop()
            if request is None:
                if not windows or not self._grow(robots):
                    return None
                continue
            site = robots.site_for(request)
            if site is None:
                return request
            state = robots.site_state(site, request)
            robots.unpin(site)  # out of _ready: handed out, or held until released
            if windows:
                backlogs.handed_out(request)
            if state is SiteState.READY:
                if (
                    self._paced is not None
                    # one the middleware drops is never sent: it takes no turn
                    and not robots.refused_now(site, request)
                    and not self._paced.turn(site, request)
                ):
                    continue  # waits for its site's turn in the cluster
                return request
            if state is SiteState.UNKNOWN:  # expired, evicted, or a resumed crawl
                robots.prefetch(site, request)
            self._hold(site, request)
        wake_engine(self.crawler)  # more may be ready: asked again after a reactor turn
        return None

    def peek(self) -> Request | None:
        """The next request of the settled sites (Scrapy's scheduler does not call this)."""
        return self._ready.peek()

    def close(self) -> list[int]:
        """Close the queue; with JOBDIR, held requests are written back first."""
        self._write_back_or_drop_held()
        if self._persistent and len(self._ready):
            logger.info(
                "Spider closed: %d scheduled requests kept in JOBDIR for the next run "
                "(those of sites whose robots.txt was pending included)",
                len(self._ready),
            )
        if self._robots is not None:
            self._robots.unregister(self)
        return self._ready.close()

    def spider_closed(self) -> None:
        """Scrapy's scheduler never closes its memory queue: held requests are
        dropped here, counted as dropped at close."""
        self._write_back_or_drop_held()

    def _write_back_or_drop_held(self) -> None:
        held = [request for requests in self._held.values() for request in _listed(requests)]
        paced = [] if self._paced is None else self._paced.take_all()
        held.extend(request for _, request in paced)
        waiting = list(self._backlogs.take_all())
        held.extend(request for _, request in waiting)
        paced.extend(waiting)
        if held and not self._persistent:
            report = report_for(self.crawler)  # the JSON report's per-site drops
            record = None if self._robots is None else self._robots.record
            for site, requests in self._held.items():
                for request in _listed(requests):
                    report.dropped_at_close(site)
                    if record is not None:
                        record.dropped_at_close(site, request, _CLOSED_HELD)
            for site, request in paced:
                report.dropped_at_close(site)
                if record is not None:
                    record.dropped_at_close(site, request, _CLOSED_HELD)
        self._held.clear()
        self._held_count = 0
        self._released.clear()
        self._releasing.clear()
        if held and self._persistent:
            for request in held:  # written back: the resumed crawl finds them
                self._ready.push(request)
        elif held:
            stats = self.crawler.stats
            if stats is not None:
                stats.inc_value("robotstxt/forbidden", len(held))
                stats.inc_value("robotstxt/forbidden/closing", len(held))
            logger.info(
                "Spider closed: dropping %d scheduled requests that waited for their site's "
                "robots.txt (or its tdmrep.json, with declared purposes, or its turn in the "
                "cluster)",
                len(held),
            )

    def __len__(self) -> int:
        paced = 0 if self._paced is None else self._paced.count
        return len(self._ready) + self._held_count + paced + len(self._backlogs)

    # -- settled sites' backlogs ----------------------------------------------------

    def _push_ready(self, requests: list[Request]) -> None:
        for request in requests:
            self._ready.push(request)

    def _follow_backlogs(self) -> None:
        """Hear of requests leaving the downloader (:meth:`_came_back`) only while
        a backlog has a window: every request sends ``request_left_downloader``,
        and each receiver costs each request a dispatch. A request let go from a
        window is pushed ready, then handed out by a later ``pop``, which connects
        first; a window closes only once none of its requests is out, so nothing
        is missed while disconnected. Changed only here, in ``push`` and ``pop``,
        never while the signal is being sent."""
        self._listening = not self._listening
        manager = self.crawler.signals
        change = manager.connect if self._listening else manager.disconnect
        change(self._came_back, signal=signals.request_left_downloader)

    def _came_back(self, request: Request, **_signal: Any) -> None:
        """A request left the downloader: the next of its site's backlog takes
        its place (the engine asks for it next). One that never reached it (a
        downloader middleware dropped or answered it) is found by ``check``.
        ``**_signal`` takes the signal's other arguments as they come (a
        receiver without it has them filtered for it on every request)."""
        if self._windows:
            self._push_ready(self._backlogs.came_back(request))

    def _gone(self, request: Request) -> bool:
        """Whether a handed-out ``request`` is no longer in the downloader
        (a downloader middleware dropped it, or it went another way)."""
        return not in_downloader(self.crawler, request)

    def _grow(self, robots: SiteService) -> bool:
        """Nothing else is ready: one window below its site's slot concurrency
        lets one more go, but, while robots.txt answers are due (other sites'
        requests will be ready in a moment), none opened in the last
        :data:`~._backlog.GROWTH_HOLD` seconds (grown now, it would open a
        second connection to its host, whose first is busy); if no window
        grows, more of them are checked for requests gone."""
        backlogs = self._backlogs
        grown = backlogs.grow(robots.clock.monotonic(), answers_due=robots.answers_due())
        freed = grown or backlogs.check(self._gone, GROW_CHECK_BUDGET)
        self._push_ready(freed)
        return bool(freed)

    # -- held requests ----------------------------------------------------------------

    def _hold(self, site: str, request: Request) -> None:
        held = self._held.get(site)
        if held is None:
            self._held[site] = request
        elif isinstance(held, list):
            held.append(request)
        else:
            self._held[site] = [held, request]
        self._held_count += 1

    def site_released(self, site: str) -> None:
        """The middleware settled ``site`` (or gave up deferring it): its held
        requests are pinned at once (another site settling before the next
        ``pop`` never evicts this outcome), and go back to ``_ready`` then."""
        held = self._held.get(site)
        if held is None or site in self._releasing:
            return
        self._releasing[site] = count = len(_listed(held))
        self._released.append(site)
        if self._robots is not None:
            self._robots.pin(site, count)

    def _move_released(self) -> None:
        """Held requests of the sites settled since the last ``pop`` go back to
        ``_ready``, interleaved across those sites (see :func:`interleaved`)."""
        batch: list[list[Request]] = []
        moved = 0
        now = self._robots.clock.monotonic() if self._robots is not None else 0.0
        while self._released and moved < RELEASE_BUDGET:
            site = self._released.popleft()
            pinned = self._releasing.pop(site, 0)
            held = self._held.pop(site, None)
            if held is None:
                continue
            requests = _listed(held)
            if self._robots is not None and len(requests) > pinned:  # held since
                self._robots.pin(site, len(requests) - pinned)
            if self._robots is not None:  # decided by the outcome that released them
                for request in requests:
                    self._robots.mark_released(site, request)
            self._held_count -= len(requests)
            moved += len(requests)
            if not self._persistent:  # let go through the site's window
                limit = (
                    1
                    if self._one_at_a_time(site, requests[0])
                    else page_slot_concurrency(self.crawler, requests[0])
                )
                requests = self._backlogs.start(site, requests, limit, now)
            batch.append(requests)
        for request in interleaved(batch):
            self._ready.push(request)

    def _one_at_a_time(self, site: str, request: Request) -> bool:
        """Whether ``site``'s requests go into the downloader one at a time: its
        download slot spaces them (a Crawl-delay, ``DOWNLOAD_DELAY``), so a
        request handed out waits there, already decided, for as long as those
        before it. One at a time, each is decided by the robots.txt in force
        when it goes, at most one delay before its download (RFC 9309 2.4: no
        copy is used past its lifetime by requests queued behind a long delay)."""
        robots = self._robots
        assert robots is not None
        return robots.asks_crawl_delay(site, request) or (
            self._page_delays and page_slot_delayed(self.crawler, request)
        )


def interleaved(batches: list[list[Request]]) -> Iterator[Request]:
    """The requests of several sites, one of each site in turn: the first of
    every site, then the second of every site, and so on.

    Sites that settle together (a store read at open, a burst of robots.txt
    answers) go back into the queue in the breadth-first order a broad crawl
    scheduled them in, rather than one site's backlog after another's: a
    site's backlog handed out in one run would fill its download slot
    (``CONCURRENT_REQUESTS_PER_DOMAIN``) at once, and each response freeing
    the slot starts the next request before its connection is back in
    Twisted's pool, so a new connection is opened per request and the
    surplus closed: a burst on one host, and a crawl that spends its CPU on
    connection set-up. Within a site the arrival order is kept.
    """
    if len(batches) == 1:
        yield from batches[0]
        return
    for row in zip_longest(*batches):
        for request in row:
            if request is not None:
                yield request


def _listed(held: Request | list[Request]) -> list[Request]:
    """The requests a site holds, as a list."""
    return held if isinstance(held, list) else [held]

"""``FileFetches``: the one launcher of a per-site file's downloads (robots.txt, tdmrep.json).

One download per site at a time (the table's single flight), at most
``limit`` (``ROBOTSTXT_CONCURRENT_DOWNLOADS``) at once, counted by
:class:`~._download_slots.DownloadSlots`; the others wait, those a request
waits on before those fetched ahead of need, before the attempts of deferred
sites (robots.txt only: at most half of ``limit`` of those at once). With our
scheduler queue (``bounded``), a fetch ahead of need also waits for room in
the file's table (``ROBOTSTXT_CACHE_MAX_SITES``), so that the values of sites
with queued requests (pinned, never evicted) stay bounded. When the spider
closes, every download in flight is cancelled. Scrapy glue around the pure
:class:`~..sites._filetable.FileTable`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro

from .._clock import Clock
from ._download_slots import DownloadSlots

if TYPE_CHECKING:
    from scrapy.http import Request
    from twisted.internet.defer import Deferred

    from ...sites._filetable import FileTable

__all__ = ["FileFetches"]

#: Runs one site's fetch to its end (settled, or abandoned at close).
Fetch = Callable[[str, "Request | None"], Coroutine[Any, Any, None]]


class FileFetches:
    """The downloads of one per-site file (robots.txt or tdmrep.json) for one crawl.

    ``slow_factor`` above 1 lets downloads unanswered after
    :data:`~._download_slots.SLOW_AFTER` stop counting against ``limit``, up
    to that many times ``limit`` in flight (robots.txt).
    """

    def __init__(
        self,
        table: FileTable[Any, Any],
        limit: int,
        fetch: Fetch,
        bounded: Callable[[], bool],
        *,
        slow_factor: int = 1,
        clock: Clock | None = None,
    ) -> None:
        self._table = table
        self._fetch = fetch
        #: whether fetches ahead of need wait for room in the table (our queue in use)
        self._bounded = bounded
        #: the time the downloads' starts are counted in
        self._clock = clock or Clock()
        self._slots: DownloadSlots[Deferred[None]] = DownloadSlots(limit, slow_factor)
        #: site -> its download in flight (cancelled at close)
        self.in_flight = self._slots.in_flight

    def __len__(self) -> int:
        """Downloads in flight."""
        return len(self.in_flight)

    def __contains__(self, site: str) -> bool:
        return site in self.in_flight

    def has_waiting(self) -> bool:
        """Whether fetches ahead of need wait (for a download, or for room)."""
        return bool(self._slots.ahead)

    def waiting(self) -> bool:
        """Whether a fetch waits for a download (or for room)."""
        return self._slots.waiting()

    def answers_due(self) -> bool:
        """Whether a download in flight started less than
        :data:`~._download_slots.SLOW_AFTER` ago: its answer is likely near
        (one older is slow, perhaps hanging)."""
        return self._slots.young(self._clock.monotonic()) > 0

    def launch(self, site: str, request: Request | None, *, ahead: bool) -> None:
        """Start the download of a site whose fetch the table has just started,
        or queue it while ``limit`` downloads are in flight (or, ahead of need,
        while the table has no room)."""
        if not self._may_start(site, ahead):
            (self._slots.ahead if ahead else self._slots.waited).append(site)
            return
        self._download(site, request)

    def retry(self, site: str) -> None:
        """Start the attempt of a deferred site whose fetch the table has just
        started (HTTP: The Definitive Guide ch. 9): after the first attempts
        waiting, within half of ``limit``."""
        slots = self._slots
        if slots.waited or slots.ahead or not self._may_start(site, False, retry=True):
            slots.retries.append(site)
            self.start_waiting()
        else:
            self._download(site, None, retry=True)

    def wanted(self, site: str) -> None:
        """A site fetched ahead of need is now waited on: its fetch, if not started,
        goes before those fetched ahead."""
        if site not in self.in_flight:
            self._slots.waited.append(site)
            self.start_waiting()

    def done(self, site: str) -> None:
        """The site's download ended: the fetches waiting start, as room allows."""
        self._slots.done(site)
        self.start_waiting()

    def start_waiting(self) -> None:
        """Start the fetches waiting, as downloads (and room) allow: those waited on
        first, then those fetched ahead, then the attempts of deferred sites."""
        table = self._table
        for backlog, ahead, retry in self._slots.lines():
            while backlog:
                site = backlog[0]
                if not table.is_pending(site) or site in self.in_flight:
                    backlog.popleft()  # settled, abandoned, or started meanwhile
                    continue
                if not self._may_start(site, ahead and not table.waited_on(site), retry=retry):
                    break
                backlog.popleft()
                self._download(site, None, retry=retry)

    def cancel_all(self) -> None:
        """The spider closes: nothing more starts, every download is cancelled."""
        for download in self._slots.clear().values():
            download.cancel()

    def _may_start(self, site: str, ahead: bool, *, retry: bool = False) -> bool:
        """Whether the site's download may start now (see :class:`DownloadSlots`)."""
        if not self._slots.free(self._clock.monotonic(), retry=retry):
            return False
        # with our queue, a fetch ahead waits for room in the table, so that the
        # values of sites with queued requests (never evicted) stay bounded
        return not (ahead and self._bounded()) or self._table.admits(site, len(self.in_flight))

    def _download(self, site: str, request: Request | None, *, retry: bool = False) -> None:
        self._slots.starting(site, self._clock.monotonic(), retry=retry)
        download = deferred_from_coro(self._fetch(site, request))
        if not download.called:
            self.in_flight[site] = download

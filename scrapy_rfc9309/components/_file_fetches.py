"""``FileFetches``: one per-site file's downloads in flight, their backlog, their cancel at close.

At most ``limit`` (``ROBOTSTXT_CONCURRENT_DOWNLOADS``) downloads of the file
run at once; the others wait, those a request waits on before those fetched
ahead of need. With our scheduler queue (``bounded``), a fetch ahead of need
also waits for room in the file's table (``ROBOTSTXT_CACHE_MAX_SITES``), so
that the values of sites with queued requests (pinned, never evicted) stay
bounded. When the spider closes, every download in flight is cancelled.
Scrapy glue around the pure :class:`~..sites._filetable.FileTable`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro

if TYPE_CHECKING:
    from scrapy.http import Request
    from twisted.internet.defer import Deferred

    from ..sites._filetable import FileTable

__all__ = ["FileFetches"]

#: Runs one site's fetch to its end (settled, or abandoned at close).
Fetch = Callable[[str, "Request | None"], Coroutine[Any, Any, None]]


class FileFetches:
    """The downloads of one per-site file (robots.txt or tdmrep.json) for one crawl."""

    def __init__(
        self,
        table: FileTable[Any, Any],
        limit: int,
        fetch: Fetch,
        bounded: Callable[[], bool],
    ) -> None:
        self._table = table
        self._limit = limit
        self._fetch = fetch
        #: whether fetches ahead of need wait for room in the table (our queue in use)
        self._bounded = bounded
        #: site -> its download in flight (cancelled at close)
        self._downloads: dict[str, Deferred[None]] = {}
        #: sites waited on whose fetch waits for one of ``limit`` downloads
        self._backlog: deque[str] = deque()
        #: sites fetched ahead of need whose fetch waits for a download, or for room
        #: in the table
        self._ahead: deque[str] = deque()

    def __len__(self) -> int:
        """Downloads in flight."""
        return len(self._downloads)

    def __contains__(self, site: str) -> bool:
        return site in self._downloads

    def has_waiting(self) -> bool:
        """Whether fetches ahead of need wait (for a download, or for room)."""
        return bool(self._ahead)

    def launch(self, site: str, request: Request | None, *, ahead: bool) -> None:
        """Start the download of a site whose fetch the table has just started,
        or queue it while ``limit`` downloads are in flight (or, ahead of need,
        while the table has no room)."""
        if not self._may_start(site, ahead):
            (self._ahead if ahead else self._backlog).append(site)
            return
        self._download(site, request)

    def wanted(self, site: str) -> None:
        """A site fetched ahead of need is now waited on: its fetch, if not started,
        goes before those fetched ahead."""
        if site not in self._downloads:
            self._backlog.append(site)
            self.start_waiting()

    def done(self, site: str) -> None:
        """The site's download ended: the fetches waiting start, as room allows."""
        self._downloads.pop(site, None)
        self.start_waiting()

    def start_waiting(self) -> None:
        """Start the fetches waiting, as downloads (and room) allow: those waited on first."""
        table = self._table
        for backlog, ahead in ((self._backlog, False), (self._ahead, True)):
            while backlog:
                site = backlog[0]
                if not table.is_pending(site) or site in self._downloads:
                    backlog.popleft()  # settled, abandoned, or started meanwhile
                    continue
                if not self._may_start(site, ahead and not table.waited_on(site)):
                    break
                backlog.popleft()
                self._download(site, None)

    def cancel_all(self) -> None:
        """The spider closes: nothing more starts, every download is cancelled."""
        self._backlog.clear()
        self._ahead.clear()
        downloads, self._downloads = self._downloads, {}
        for download in downloads.values():
            download.cancel()

    def _may_start(self, site: str, ahead: bool) -> bool:
        if len(self._downloads) >= self._limit:
            return False
        return not (ahead and self._bounded()) or self._table.admits(site, len(self._downloads))

    def _download(self, site: str, request: Request | None) -> None:
        download = deferred_from_coro(self._fetch(site, request))
        if not download.called:
            self._downloads[site] = download

"""``CloseWatchdog``: while a site's file is being fetched, a look for a closing engine.

Requests waiting on a robots.txt or tdmrep.json fetch (or on a deferred
site's next attempt) are in progress as Scrapy's engine counts them, so a
crawl asked to close (``CLOSESPIDER_*``, a signal) would wait for them. While
any is pending, the watchdog looks every :data:`CLOSE_POLL_SECONDS` on the
crawl's clock: a closing engine has everything let go (the service's
``release_all``); otherwise downloads turned slow let waiting ones start.
It stops itself once nothing is pending. Held by the
:class:`~._service.SiteService`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._engine import engine_is_closing

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from ...sites._sitetable import SiteTable
    from .._clock import Clock
    from ._deferral import Deferrals
    from ._file_fetches import FileFetches
    from ._tdmrep_sites import TdmRepSites

__all__ = ["CLOSE_POLL_SECONDS", "CloseWatchdog"]

#: How often, while a robots.txt is being fetched, to look for a closing engine.
CLOSE_POLL_SECONDS = 0.1


class CloseWatchdog:
    """Looks for a closing engine while a site's robots.txt or tdmrep.json is pending."""

    def __init__(
        self,
        crawler: Crawler,
        clock: Clock,
        *,
        table: SiteTable[Any],
        deferrals: Deferrals,
        launcher: FileFetches,
        tdmrep: TdmRepSites | None,
        release_all: Callable[[], None],
    ) -> None:
        self._crawler = crawler
        self._clock = clock
        self._table = table
        self._deferrals = deferrals
        self._launcher = launcher
        self._tdmrep = tdmrep
        self._release_all = release_all
        self._loop: Any = None

    def start(self) -> None:
        """Start looking (a fetch or a deferral has begun), unless already looking."""
        if self._loop is None:
            from twisted.internet import task

            self._loop = task.LoopingCall(self._look)
            if self._clock.scheduler is not None:
                self._loop.clock = self._clock.scheduler
            self._loop.start(CLOSE_POLL_SECONDS, now=False)

    def stop(self) -> None:
        if self._loop is not None:
            if self._loop.running:
                self._loop.stop()
            self._loop = None

    def _pending(self) -> bool:
        """Whether a download is in flight, a fetch pending or a site deferred."""
        tdmrep = self._tdmrep
        return (
            bool(self._launcher.in_flight)
            or self._table.has_pending()
            or bool(self._deferrals)
            or (tdmrep is not None and tdmrep.has_pending())
        )

    def _look(self) -> None:
        if not self._pending():
            self.stop()
        elif engine_is_closing(self._crawler):
            self._release_all()
        elif self._launcher.waiting():
            self._launcher.start_waiting()  # downloads turned slow: others may start

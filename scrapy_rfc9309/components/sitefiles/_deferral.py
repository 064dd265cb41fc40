"""Deferral of unreachable sites: their requests wait, their robots.txt is tried again on timers.

HTTP: The Definitive Guide ch. 9: on a temporary failure, defer visits until
the robots.txt can be retrieved; RFC 9309 2.3.1.4 (complete disallow) holds
meanwhile: nothing of the site is fetched. The back-off and the deadline are
kept in the pure site table; this module owns the timers and the log lines.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...sites._site import robots_url
from .._clock import Clock

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from ...sites._outcome import SiteOutcome
    from ...sites._sitetable import Deferral, SiteTable
    from ..settings._settings import RobotsTxtSettings

__all__ = ["Deferrals"]

# the middleware's logger: these lines are documented under its name
logger = logging.getLogger("scrapy_rfc9309.middleware")


class Deferrals:
    """The timers of the deferred sites: each calls ``retry`` (try again) when
    its attempt is due, or ``release`` (decide its requests) past its deadline."""

    def __init__(
        self,
        table: SiteTable[Any],
        settings: RobotsTxtSettings,
        stats: StatsCollector,
        *,
        retry: Callable[[str], None],
        release: Callable[[str], None],
        give_up: Callable[[str], bool],
        clock: Clock | None = None,
    ) -> None:
        #: the time and the timers (the crawl's :class:`Clock`)
        self.clock = clock or Clock()
        self._table = table
        self.settings = settings
        self.stats = stats
        self._retry = retry
        self._release = release
        #: ends the attempt of a site whose deadline passed while it waited for a
        #: download (``False``: it is downloading, and goes on)
        self._give_up = give_up
        #: site -> the timer of its next attempt while deferred
        self._timers: dict[str, Any] = {}

    def __bool__(self) -> bool:
        """Whether a timer is set."""
        return bool(self._timers)

    def defer(self, site: str, outcome: SiteOutcome, was_deferred: bool) -> Deferral | None:
        """Keep the site's queued requests waiting while its robots.txt is unreachable.

        Tried again with a doubling back-off, never sooner than its
        ``Retry-After``, up to ``ROBOTSTXT_UNREACHABLE_DEFER`` seconds; ``None``
        once that is over (HTTP: The Definitive Guide ch. 9; RFC 9309 2.3.1.4).
        """
        now = self.clock.monotonic()
        asked = outcome.expires_at if outcome.retry_after else None
        limit = self.settings.unreachable_defer
        if asked is not None and self._table.refuse_deferral(site, now, limit, asked):
            # no attempt can come before the deadline: the requests are dropped now
            self.stats.inc_value("robotstxt/deferred/expired")
            logger.warning(
                "robots.txt unreachable (%s): %s asks to be tried again in %s s, after "
                "ROBOTSTXT_UNREACHABLE_DEFER (%g s) would end; the requests that wait for "
                "it are dropped now (RFC 9309 2.3.1.4)",
                outcome.detail,
                robots_url(site),
                f"{round(max(0.0, asked - now), 1):g}",
                limit,
            )
            return None
        deferral = self._table.defer(site, now, limit, asked)
        if deferral is None:
            if was_deferred:
                self._expired(site)
            return None
        if not was_deferred:
            self.stats.inc_value("robotstxt/deferred")
        self.cancel(site)
        self._timers[site] = self.clock.call_later(max(0.0, deferral.due - now), self._due, site)
        return deferral

    def _due(self, site: str) -> None:
        self._timers.pop(site, None)
        deferral = self._table.deferral(site)
        if deferral is None:
            return
        now = self.clock.monotonic()
        if deferral.retry_at is not None and now < deferral.deadline:
            self._retry(site)
            if (
                self._table.deferral(site) is deferral
                and self._table.is_pending(site)
                and site not in self._timers  # none set by an attempt that ended at once
            ):
                # the deadline holds while the attempt waits for a download
                self._timers[site] = self.clock.call_later(
                    deferral.deadline - now, self._deadline_passed, site
                )
            return
        self._table.end_deferral(site)
        self._expired(site)
        self._release(site)

    def _deadline_passed(self, site: str) -> None:
        """The deadline came while the site's attempt waited for a download, or
        downloaded: the requests are dropped now (RFC 9309 2.3.1.4). An attempt
        not started is not made; one in flight goes on (within
        ``ROBOTSTXT_DOWNLOAD_TIMEOUT``), its outcome kept for later requests."""
        self._timers.pop(site, None)
        if self._table.deferral(site) is None:
            return
        self._give_up(site)
        self._table.end_deferral(site)
        self._expired(site)
        self._release(site)

    def _expired(self, site: str) -> None:
        self.stats.inc_value("robotstxt/deferred/expired")
        logger.warning(
            "robots.txt still unreachable after ROBOTSTXT_UNREACHABLE_DEFER (%g s): %s; "
            "the requests that waited for it are dropped (RFC 9309 2.3.1.4)",
            self.settings.unreachable_defer,
            robots_url(site),
        )

    def cancel(self, site: str) -> None:
        timer = self._timers.pop(site, None)
        if timer is not None and timer.active():
            timer.cancel()

    def cancel_all(self) -> None:
        """The spider closes: no site is tried again, none is deferred any more."""
        for site in list(self._timers):
            self.cancel(site)
        self._table.end_all_deferrals()

    def recovered(self, outcome: SiteOutcome, url: str) -> None:
        self.stats.inc_value("robotstxt/deferred/recovered")
        logger.info("robots.txt retrieved after deferral: %s", outcome.source or url)

    def log(
        self, outcome: SiteOutcome, url: str, site: str, deferral: Deferral, *, first: bool
    ) -> None:
        now = self.clock.monotonic()
        when = (
            f"tried again in {round(max(0.0, deferral.retry_at - now), 1):g} s"
            if deferral.retry_at is not None
            else "not tried again before then"
        )
        logger.log(
            logging.WARNING if first else logging.INFO,
            "robots.txt unreachable (%s): %s; requests to %s wait in the scheduler for at "
            "most %s s more (ROBOTSTXT_UNREACHABLE_DEFER; RFC 9309 2.3.1.4, HTTP: The "
            "Definitive Guide ch. 9), %s",
            outcome.detail,
            outcome.source or url,
            site,
            f"{round(max(0.0, deferral.deadline - now), 1):g}",
            when,
        )

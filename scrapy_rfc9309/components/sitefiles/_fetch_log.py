"""What the robots.txt fetches say: each settled fetch logged (worded per outcome
kind) and counted per site, internal errors, and the lines at start-up.

Logged as ``scrapy_rfc9309.middleware``, the logger these lines are documented under.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...sites._outcome import Kind, SiteOutcome
from ..settings._report_settings import identity_warning
from ..settings._settings import RFC_MIN_SIZE
from ._file_download import dotted_name

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

    from ..settings._settings import RobotsTxtSettings

__all__ = [
    "SiteCounts",
    "internal_error",
    "kept_for",
    "log_outcome",
    "log_start",
    "warn_refetched_evicted",
]

_KIND_BITS = {kind: index for index, kind in enumerate(Kind)}

logger = logging.getLogger("scrapy_rfc9309.middleware")


def kept_for(outcome: SiteOutcome, now: float) -> str:
    """``600 s (Cache-Control: max-age=600)``: how long an outcome is used from
    ``now`` (the crawl's monotonic time), and why."""
    seconds = max(0.0, outcome.expires_at - now)
    return f"{round(seconds):d} s ({outcome.lifetime})" if outcome.lifetime else f"{seconds:.0f} s"


def log_outcome(
    outcome: SiteOutcome, url: str, site: str, now: float, *, again: bool = True
) -> None:
    """One line for what the fetch of ``site``'s robots.txt (``url``) came to,
    ``now`` (the crawl's monotonic time). ``again``: an unreachable site is
    tried again once its outcome expires (``False``: ``scrapy robotstxt``'s one
    attempt, the last; no crawl runs, so the line says what a crawl would do)."""
    source = outcome.source or url
    if outcome.kind is Kind.UNREACHABLE and not again:
        logger.warning(
            "robots.txt unreachable (%s): %s; a crawl given this answer would drop requests to %s "
            "(RFC 9309 2.3.1.4); one attempt, not tried again",
            outcome.detail,
            source,
            site,
        )
    elif outcome.kind is Kind.UNREACHABLE:
        logger.warning(
            "robots.txt unreachable (%s): %s; requests to %s are dropped "
            "(RFC 9309 2.3.1.4), tried again in %s s",
            outcome.detail,
            source,
            site,
            f"{round(max(0.0, outcome.expires_at - now), 1):g}",
        )
    elif outcome.kind is Kind.RESTRICTED:
        logger.warning(
            "robots.txt answered %s: %s; %s (ROBOTSTXT_AUTH_DISALLOW; HTTP: The "
            "Definitive Guide ch. 9)",
            outcome.detail,
            source,
            f"requests to {site} are dropped"
            if again
            else f"a crawl given this answer would drop requests to {site}",
        )
    elif outcome.kind is Kind.UNAVAILABLE:
        logger.debug(
            "robots.txt unavailable (%s): %s; everything allowed (RFC 9309 2.3.1.3); kept %s",
            outcome.detail,
            source,
            kept_for(outcome, now),
        )
    elif outcome.kind is Kind.PARSED:
        logger.debug(
            "robots.txt parsed (%s): %s %r; kept %s",
            outcome.detail,
            source,
            outcome.robots,
            kept_for(outcome, now),
        )


def warn_refetched_evicted(site: str, max_sites: int) -> None:
    """The one WARNING of a crawl whose ``ROBOTSTXT_CACHE_MAX_SITES`` evicts outcomes
    still fresh (RFC 9309 2.4): each such site's next request downloads its
    robots.txt again."""
    logger.warning(
        "robots.txt of %s downloaded again: its outcome was evicted while still fresh, "
        "as this crawl goes through more sites than ROBOTSTXT_CACHE_MAX_SITES = %d keeps; "
        "each such download is counted in robotstxt/cache/refetched_evicted (said once). "
        "Raise ROBOTSTXT_CACHE_MAX_SITES, or set ROBOTSTXT_STORE_URI: a store serves "
        "evicted sites without a download",
        site,
        max_sites,
    )


def log_start(settings: RobotsTxtSettings, crawler_settings: BaseSettings) -> None:
    """The lines at start-up: the token obeyed, a size below RFC 9309's minimum,
    ``ROBOTSTXT_AUTH_DISALLOW``, and a crawler that does not say who it is."""
    if settings.max_size < RFC_MIN_SIZE:
        logger.warning(
            "ROBOTSTXT_MAX_SIZE is %d bytes: RFC 9309 2.5 asks for at least %d; "
            "rules past the limit are ignored",
            settings.max_size,
            RFC_MIN_SIZE,
        )
    logger.info("Obeying robots.txt (RFC 9309) as %s", settings.describe_token())
    if settings.auth_disallow:
        logger.info(
            "ROBOTSTXT_AUTH_DISALLOW: a robots.txt answering 401 or 403 disallows the "
            "whole site (HTTP: The Definitive Guide ch. 9; RFC 9309 2.3.1.3 allows it)"
        )
    if warning := identity_warning(crawler_settings):
        logger.warning(warning)


def internal_error(
    stats: StatsCollector,
    crawler: Crawler,
    exc: Exception,
    url: str,
    expires_at: float,
    fetched_at: float | None = None,
) -> SiteOutcome:
    """A failure that is not the site's answer: a bug or an incompatible component.

    Logged at ERROR with its traceback and counted in
    ``robotstxt/internal_error``; the site is disallowed (nothing is known of
    its rules) until ``expires_at`` (``ROBOTSTXT_UNREACHABLE_TTL`` from now).
    """
    stats.inc_value("robotstxt/internal_error")
    logger.error(
        "Internal error while fetching %s; requests to its site are dropped "
        "(this is not the site's answer)",
        url,
        exc_info=exc,
        extra={"spider": crawler.spider},
    )
    detail = f"{dotted_name(exc)}: {exc}"
    return SiteOutcome(Kind.INTERNAL_ERROR, None, detail, expires_at, fetched_at=fetched_at)


class SiteCounts:
    """Per-site stats: each site once per crawl in ``robotstxt/sites`` and once per
    outcome kind (``robotstxt/parsed``, ...), whatever its refetches."""

    __slots__ = ("_counted", "_stats")

    def __init__(self, stats: StatsCollector) -> None:
        self._stats = stats
        #: site -> the outcome kinds already counted for it, a bit per kind
        self._counted: dict[str, int] = {}

    def count(self, site: str, kind: Kind) -> None:
        bit = 1 << _KIND_BITS[kind]
        seen = self._counted.get(site)
        if seen is None:
            self._stats.inc_value("robotstxt/sites")
            seen = 0
        if not seen & bit:
            self._counted[site] = seen | bit
            if kind is not Kind.INTERNAL_ERROR:  # that one counts each error
                self._stats.inc_value(f"robotstxt/{kind.value}")

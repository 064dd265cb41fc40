"""The log line of each settled robots.txt fetch, worded per outcome kind.

Logged as ``scrapy_rfc9309.middleware``, the logger these lines are documented under.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ..sites._outcome import Kind

if TYPE_CHECKING:
    from ..sites._outcome import SiteOutcome

__all__ = ["kept_for", "log_outcome", "warn_refetched_evicted"]

logger = logging.getLogger("scrapy_rfc9309.middleware")


def kept_for(outcome: SiteOutcome) -> str:
    """``600 s (Cache-Control: max-age=600)``: how long an outcome is used, and why."""
    seconds = max(0.0, outcome.expires_at - time.monotonic())
    return f"{round(seconds):d} s ({outcome.lifetime})" if outcome.lifetime else f"{seconds:.0f} s"


def log_outcome(outcome: SiteOutcome, url: str, site: str) -> None:
    """One line for what the fetch of ``site``'s robots.txt (``url``) came to."""
    source = outcome.source or url
    if outcome.kind is Kind.UNREACHABLE:
        logger.warning(
            "robots.txt unreachable (%s): %s; requests to %s are dropped "
            "(RFC 9309 2.3.1.4), tried again in %s s",
            outcome.detail,
            source,
            site,
            f"{round(max(0.0, outcome.expires_at - time.monotonic()), 1):g}",
        )
    elif outcome.kind is Kind.RESTRICTED:
        logger.warning(
            "robots.txt answered %s: %s; requests to %s are dropped "
            "(ROBOTSTXT_AUTH_DISALLOW; HTTP: The Definitive Guide ch. 9)",
            outcome.detail,
            source,
            site,
        )
    elif outcome.kind is Kind.UNAVAILABLE:
        logger.debug(
            "robots.txt unavailable (%s): %s; everything allowed (RFC 9309 2.3.1.3); kept %s",
            outcome.detail,
            source,
            kept_for(outcome),
        )
    elif outcome.kind is Kind.PARSED:
        logger.debug(
            "robots.txt parsed (%s): %s %r; kept %s",
            outcome.detail,
            source,
            outcome.robots,
            kept_for(outcome),
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

"""The names of the settings: ours and Scrapy's robots.txt ones, and misspellings told.

Pure over the settings' names; a name that neither package reads is logged
at WARNING with the closest known one (:func:`warn_unknown_settings`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["KNOWN_SETTINGS", "unknown_setting_warnings", "warn_unknown_settings"]

logger = logging.getLogger("scrapy_rfc9309.settings")


#: Every setting name of this package, and Scrapy's own robots.txt settings: any
#: other ``ROBOTSTXT_*`` / ``ROBOTS_META_*`` name is a misspelling
#: (:func:`unknown_setting_warnings`).
KNOWN_SETTINGS = frozenset(
    {
        "ROBOTSTXT_ALSO_OBEY",
        "ROBOTSTXT_AUTH_DISALLOW",
        "ROBOTSTXT_CACHE_MAX_SITES",
        "ROBOTSTXT_CACHE_MIN_TTL",
        "ROBOTSTXT_CACHE_TTL",
        "ROBOTSTXT_CLUSTER_DELAY",
        "ROBOTSTXT_CONCURRENT_DOWNLOADS",
        "ROBOTSTXT_CRAWL_DELAY",
        "ROBOTSTXT_CRAWL_DELAY_MAX",
        "ROBOTSTXT_DOWNLOAD_TIMEOUT",
        "ROBOTSTXT_HELD_SHARE",
        "ROBOTSTXT_MAX_SIZE",
        "ROBOTSTXT_OBEY",
        "ROBOTSTXT_PARSER",
        "ROBOTSTXT_PURPOSES",
        "ROBOTSTXT_RECORD_FILE",
        "ROBOTSTXT_REPORT_FILE",
        "ROBOTSTXT_RETRY_AFTER_MAX",
        "ROBOTSTXT_SET_ASIDE_MAX",
        "ROBOTSTXT_STORE_ARCHIVE",
        "ROBOTSTXT_STORE_PREFIX",
        "ROBOTSTXT_STORE_URI",
        "ROBOTSTXT_SUMMARY_TOP_RULES",
        "ROBOTSTXT_UNREACHABLE_DEFER",
        "ROBOTSTXT_UNREACHABLE_TTL",
        "ROBOTSTXT_USER_AGENT",
        "ROBOTS_META_HTTPCACHE_POLICY",
        "ROBOTS_META_NOAI",
        "ROBOTS_META_NOINDEX",
        "ROBOTS_META_OBEY",
    }
)


#: The prefixes of the names :func:`unknown_setting_warnings` checks.
CHECKED_PREFIXES = ("ROBOTSTXT", "ROBOTS_META", "ROBOTS_TXT")


def unknown_setting_warnings(settings: BaseSettings) -> list[str]:
    """A warning for each ``ROBOTSTXT_*`` / ``ROBOTS_META_*`` setting name that is
    neither ours nor Scrapy's (a misspelling, such as ``ROBOTSTXT_CRAWLDELAY``,
    is otherwise ignored without a word), naming the closest known one."""
    from difflib import get_close_matches

    found = []
    for name in sorted(str(key) for key in settings):
        upper = name.upper()
        if not upper.startswith(CHECKED_PREFIXES) or name in KNOWN_SETTINGS:
            continue
        close = get_close_matches(upper, KNOWN_SETTINGS, n=1, cutoff=0.8)
        hint = f"; did you mean {close[0]}?" if close else ""
        found.append(
            f"Unknown setting {name} (value {settings.get(name)!r}): scrapy-rfc9309 and "
            f"Scrapy read no setting of that name, so it changes nothing{hint}"
        )
    return found


def warn_unknown_settings(settings: BaseSettings) -> None:
    """Log :func:`unknown_setting_warnings` at WARNING."""
    for message in unknown_setting_warnings(settings):
        logger.warning(message)

"""A crawler's robots.txt settings: read once, kept on the crawler, their warnings logged once.

Every component of a crawl takes its :class:`~._settings.RobotsTxtSettings`
from :func:`robotstxt_settings`: the first call reads them (pure) and logs
what the reading found (a token reduced, a lifetime raised, a purpose alias,
purposes nothing reads); the others take the same read. Kept on the crawler,
never in the module: each crawler of a process (two spiders in one
``CrawlerProcess``) says each warning once, however many of its components
read its settings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._per_crawler import kept_on
from ._settings import RobotsTxtSettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["log_setting_warnings", "purposes_note", "robotstxt_settings", "warnings_told"]

logger = logging.getLogger("scrapy_rfc9309.settings")
#: what declared purposes mean for the crawl is said under the usage logger
usage_logger = logging.getLogger("scrapy_rfc9309.usage")

#: The crawler attribute the read is kept in.
_ATTRIBUTE = "_robotstxt_settings_read"


class _CrawlerRead:
    """One crawler's read: the settings, once read, and the warnings already said."""

    __slots__ = ("settings", "told")

    def __init__(self) -> None:
        self.settings: RobotsTxtSettings | None = None
        #: warnings the crawler's run said before the crawl (``scrapy robotstxt``)
        self.told: frozenset[str] = frozenset()


def _read_of(crawler: Crawler) -> _CrawlerRead:
    return kept_on(crawler, _ATTRIBUTE, _CrawlerRead)


def robotstxt_settings(crawler: Crawler) -> RobotsTxtSettings:
    """The crawler's robots.txt settings, read at the first call (a
    :class:`~._setting_values.SettingError` when a value is invalid) and their
    warnings logged then; the same read at every later call."""
    read = _read_of(crawler)
    if read.settings is None:
        settings = RobotsTxtSettings.from_settings(crawler.settings)
        read.settings = settings
        log_setting_warnings(settings.warnings, told=read.told)
        note = purposes_note(settings)
        if note is not None and note[1] not in read.told:
            usage_logger.log(note[0], "%s", note[1])
    return read.settings


def warnings_told(crawler: Crawler, warnings: Iterable[str]) -> None:
    """The run that made ``crawler`` (``scrapy robotstxt``, which read the same
    settings for itself) has logged ``warnings``: its crawl does not say them again."""
    read = _read_of(crawler)
    read.told = read.told | frozenset(warnings)


def log_setting_warnings(warnings: Iterable[str], told: Iterable[str] = ()) -> None:
    """Log each of ``warnings`` once, at WARNING, unless already ``told``."""
    said = set(told)
    for message in warnings:
        if message not in said:
            said.add(message)
            logger.warning("%s", message)


def purposes_note(settings: RobotsTxtSettings) -> tuple[int, str] | None:
    """What declared purposes mean when nothing reads robots.txt (level and
    message), or ``None``: a WARNING when ``ROBOTSTXT_PURPOSES`` is set and both
    ``ROBOTSTXT_OBEY`` and ``ROBOTS_META_OBEY`` are off (nothing is dropped for
    them); an INFO when only ``ROBOTS_META_OBEY`` is on (only response headers
    and meta are read)."""
    if not settings.purposes or settings.obey:
        return None
    purposes = ", ".join(settings.purposes)
    if not settings.meta_obey:
        return (
            logging.WARNING,
            f"ROBOTSTXT_PURPOSES is set ({purposes}), but ROBOTSTXT_OBEY and "
            "ROBOTS_META_OBEY are both off: no usage preference is read and nothing is "
            "dropped for the declared purposes. Turn ROBOTSTXT_OBEY (or ROBOTS_META_OBEY) "
            "on, or remove ROBOTSTXT_PURPOSES",
        )
    # ROBOTS_META_OBEY alone: robots.txt and tdmrep.json are never fetched
    return (
        logging.INFO,
        f"Declared purposes: {purposes} (ROBOTSTXT_PURPOSES), but ROBOTSTXT_OBEY is off: "
        "only response headers and meta (Content-Usage, tdm-reservation) are read, after "
        "download; robots.txt and tdmrep.json preferences are not",
    )

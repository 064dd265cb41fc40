"""The files fetched per site apart from its pages: robots.txt and tdmrep.json. Scrapy glue.

Both are requested alike (:func:`file_request`): first in the downloader
(``DOWNLOAD_PRIORITY``), never filtered as duplicates or offsite, never
served from the HTTP cache, never redirected by Scrapy (redirects are
followed by the fetcher, RFC 9309 2.3.1.2), in a download slot of their own
(:func:`~._engine.file_slot_key`), so a file that hangs holds none of the
pages of its host. A page dropped because the spider closed before its
site's file was fetched is dropped alike too (:func:`drop_at_close`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK

from ..record._crawl_record import crawl_record

if TYPE_CHECKING:
    import logging

    from scrapy.crawler import Crawler

    from .._report import CrawlReport

__all__ = ["DOWNLOAD_PRIORITY", "count_dropped_at_close", "drop_at_close", "file_request"]

DOWNLOAD_PRIORITY = 1000


def file_request(
    url: str,
    slot: str,
    *,
    max_size: int,
    retry: bool,
    meta: Mapping[str, Any] | None = None,
    headers: Mapping[bytes, bytes] | None = None,
) -> Request:
    """The request of a site's robots.txt or tdmrep.json at ``url``.

    ``slot``: its own download slot (``meta["download_slot"]``), never the
    pages' slot of the host. ``max_size``: Scrapy's ``download_maxsize`` (0:
    the caller stops the download itself and keeps the part received).
    ``retry``: whether Scrapy's RetryMiddleware may retry it. ``meta`` and
    ``headers``: what the one file needs besides.
    """
    return Request(
        url,
        priority=DOWNLOAD_PRIORITY,
        callback=NO_CALLBACK,
        dont_filter=True,
        meta={
            "dont_obey_robotstxt": True,
            "dont_redirect": True,  # followed by the fetcher (5 hops, http(s)); no meta refresh
            "dont_cache": True,  # never served from HTTPCACHE past its own lifetime
            "allow_offsite": True,  # a redirect to another host is still followed
            "handle_httpstatus_all": True,  # every status is the fetcher's to read
            "download_maxsize": max_size,
            "download_warnsize": 0,
            # a slot of its own: never the pages' transfers of the host
            "download_slot": slot,
            **({} if retry else {"dont_retry": True}),
            **(meta or {}),
        },
        headers=dict(headers) if headers else None,
    )


def count_dropped_at_close(
    crawler: Crawler,
    report: CrawlReport,
    logger: logging.Logger,
    site: str,
    url: str,
    request: Request,
) -> str:
    """Count ``request`` as dropped because the spider closed before its site's
    file at ``url`` was fetched (``robotstxt/forbidden/closing``), log it at
    DEBUG by ``logger``, and give the reason."""
    assert crawler.stats is not None
    crawler.stats.inc_value("robotstxt/forbidden")
    crawler.stats.inc_value("robotstxt/forbidden/closing")
    report.dropped_at_close(site)
    reason = f"Dropped: the spider closed before {url} was fetched"
    record = crawl_record(crawler)
    if record is not None:
        record.dropped_at_close(site, request, reason)
    logger.debug("%s: %s", reason, request, extra={"spider": crawler.spider})
    return reason


def drop_at_close(
    crawler: Crawler,
    report: CrawlReport,
    logger: logging.Logger,
    site: str,
    url: str,
    request: Request,
) -> NoReturn:
    """Drop ``request``: the spider closed before its site's file at ``url`` was
    fetched. Counted in ``robotstxt/forbidden/closing``, logged at DEBUG by ``logger``."""
    raise IgnoreRequest(count_dropped_at_close(crawler, report, logger, site, url, request))

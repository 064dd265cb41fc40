"""``scrapy robotstxt``'s downloads, inside its one crawl: robots.txt, tdmrep.json, pages.

Each goes through the crawl's own components (the fetcher, the tdmrep.json
reader, Scrapy's downloader), so the command sees what a crawl would; a
failure that is not the site's answer is an error, never an outcome.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from scrapy import Spider
from twisted.internet.defer import CancelledError

from ...parser._robotstxt import RobotsTxt
from ...parser._tdmrep import TDMREP_PATH
from ...sites._outcome import DISALLOW_ALL, Kind, SiteOutcome
from ...sites._site import site_of
from ..settings._settings import RobotsTxtSettings
from ..sitefiles._fetcher import dotted_name, is_download_failure, is_not_downloadable
from ..sitefiles._file_download import download_within
from ._command_answer import (
    INTERNAL_ERROR,
    PageNotRead,
    PageRead,
    PageResult,
    TdmRepAnswer,
    no_site_reason,
)

__all__ = ["describe_download_error", "fetch_page", "fetch_tdmreps", "fetcher_spider", "read_file"]

logger = logging.getLogger("scrapy_rfc9309.command")


def fetcher_spider(
    settings: RobotsTxtSettings,
    found: dict[str, SiteOutcome],
    keys: list[str],
    targets: list[str],
    urls: list[str],
    pages: dict[str, PageResult] | None,
    token: str,
    tdmreps: dict[str, TdmRepAnswer] | None,
) -> type[Spider]:
    """A spider that fetches every robots.txt URL in ``targets`` into ``found`` (keyed
    by ``keys``); with ``tdmreps``, each site's tdmrep.json too (its robots.txt
    permitting); then, with ``pages``, each of ``urls`` that its outcome allows."""

    class FetchRobotsTxt(Spider):
        name = "robotstxt"

        async def start(self) -> AsyncIterator[Any]:
            from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
            from twisted.internet.defer import DeferredList

            from .._clock import Clock
            from ..sitefiles._fetcher import RobotsTxtFetcher

            fetcher = RobotsTxtFetcher(self.crawler, settings, Clock())  # the real time
            # one attempt: the answer says "unreachable" itself, with no "Gave up
            # retrying" ERROR from Scrapy's RetryMiddleware in the output
            fetcher.scrapy_retry = False

            async def one(key: str, url: str) -> None:
                try:
                    found[key] = await fetcher.fetch(url)
                except (CancelledError, asyncio.CancelledError) as error:
                    # not the site's answer, and no close of ours: said plainly
                    detail = f"download cancelled ({dotted_name(error)}), no answer"
                    found[key] = SiteOutcome(Kind.INTERNAL_ERROR, None, detail, 0.0, ((url, None),))
                except Exception:  # not the site's answer: an error, with its traceback
                    logger.exception("Internal error while fetching %s", url)

            await maybe_deferred_to_future(
                DeferredList(
                    [deferred_from_coro(one(k, u)) for k, u in zip(keys, targets, strict=True)]
                )
            )
            if tdmreps is not None:
                await fetch_tdmreps(self.crawler, settings, found, keys, tdmreps)
            if pages is not None:
                await maybe_deferred_to_future(
                    DeferredList(
                        [
                            deferred_from_coro(
                                fetch_page(
                                    self.crawler,
                                    u,
                                    found,
                                    token,
                                    pages,
                                    settings.also_obey,
                                    settings.page_download_timeout,
                                )
                            )
                            for u in urls
                        ]
                    )
                )
            return
            yield

    return FetchRobotsTxt


def describe_download_error(error: BaseException) -> str:
    """``ResponseNeverReceived: ConnectionLost: Connection to the other side was lost
    ...``: the exception's type and message, and those of the failures it wraps
    (Twisted's ``ResponseNeverReceived`` / ``ResponseFailed`` carry a list; a
    wrapper raised from another exception is described by that one)."""
    cause = error.__cause__
    if isinstance(cause, BaseException) and getattr(error, "reasons", None) is None:
        return describe_download_error(cause)  # Scrapy's wrapper of the download error
    reasons = getattr(error, "reasons", None)
    if isinstance(reasons, list) and reasons:
        inner = "; ".join(
            describe_download_error(value)
            for value in (getattr(reason, "value", reason) for reason in reasons[:3])
            if isinstance(value, BaseException)
        )
        if inner:
            return f"{type(error).__name__}: {inner}"
    message = str(error).strip()
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


async def fetch_page(
    crawler: Any,
    url: str,
    found: dict[str, SiteOutcome],
    token: str,
    pages: dict[str, PageResult],
    also: tuple[str, ...] = (),
    timeout: float = 0.0,
) -> None:
    """Fetch ``url`` if its robots.txt outcome allows it, and read its page-level
    directives for ``token`` (HTTP: The Definitive Guide ch. 9: the robots META
    tag; ``X-Robots-Tag``). A page robots.txt disallows is never fetched.
    ``also``: the ``ROBOTSTXT_ALSO_OBEY`` tokens, obeyed too, as a crawl does.
    ``timeout``: ``DOWNLOAD_TIMEOUT``, held whatever the download handler does."""
    from scrapy.http import Request
    from scrapy.http.request import NO_CALLBACK

    from ...parser._page_directives import read_page_directives
    from ...parser._usage_signals import read_usage_signals
    from ...sites._request_decision import DecisionPolicy, decide_request

    site = site_of(url) if "://" in url else None
    if site is None:
        pages[url] = PageNotRead(no_site_reason(url))
        return
    outcome = found.get("", found.get(site))
    if outcome is None:
        pages[url] = PageNotRead("robots.txt not fetched")
        return
    # the crawl's decision by robots.txt (the page itself is read for its signals)
    decision = decide_request(outcome, url, site, token, DecisionPolicy(also_obey=also))
    if not decision.fetch:
        pages[url] = PageNotRead(f"not fetched: {decision.reason}")
        return
    request = Request(url, callback=NO_CALLBACK, dont_filter=True)
    request.meta["dont_obey_robotstxt"] = True  # decided above, for this URL only
    # A redirect is not followed: its target may be another site, under other rules.
    request.meta["dont_redirect"] = True
    try:
        response = await download_within(crawler, request, timeout)
    except Exception as error:
        if is_not_downloadable(error):
            pages[url] = PageNotRead(f"not downloadable: {describe_download_error(error)}")
            return
        if not is_download_failure(error):  # not the site's answer: never disguised as one
            logger.exception("Internal error while fetching %s", url)
            pages[url] = PageNotRead(f"{INTERNAL_ERROR}: {describe_download_error(error)}")
            return
        pages[url] = PageNotRead(f"download failed: {describe_download_error(error)}", failed=True)
        return
    if 300 <= response.status < 400:
        location = (response.headers.get(b"Location") or b"").decode("latin-1")
        pages[url] = PageNotRead(
            f"HTTP {response.status} to {location!r}: a redirect is not followed",
            status=response.status,
        )
        return
    directives = read_page_directives(
        response.url, response.status, response.headers, response.body, token, also=also
    )
    unread: dict[str, frozenset[str]] = {}
    signals = read_usage_signals(response.status, response.headers, response.body, unread)
    pages[url] = PageRead(response.status, directives, tuple(signals), unread)


async def fetch_tdmreps(
    crawler: Any,
    settings: RobotsTxtSettings,
    found: dict[str, SiteOutcome],
    sites: list[str],
    tdmreps: dict[str, TdmRepAnswer],
) -> None:
    """Each site's ``/.well-known/tdmrep.json``, as the middleware reads it; a site
    whose robots.txt disallows everything is not asked."""
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet.defer import DeferredList

    from .._clock import Clock
    from ..sitefiles._usage_gate import TdmRepSites

    details: dict[str, str] = {}
    reader = TdmRepSites(crawler, settings, Clock(), details=details)  # the real time

    async def one(site: str) -> None:
        outcome = found.get(site)
        if outcome is None or outcome.kind in DISALLOW_ALL:
            tdmreps[site] = (None, "not fetched: robots.txt disallows the site")
            return
        try:
            rules = await reader.get(site)
        except Exception as error:  # not the site's answer: an error, with its traceback
            logger.exception("Internal error while fetching %s%s", site, TDMREP_PATH)
            tdmreps[site] = (None, f"{INTERNAL_ERROR}: {type(error).__name__}: {error}")
            return
        tdmreps[site] = (rules, details.get(site, "fetched"))

    await maybe_deferred_to_future(DeferredList([deferred_from_coro(one(s)) for s in sites]))


def read_file(path: Path, settings: RobotsTxtSettings) -> SiteOutcome | None:
    """A local robots.txt, read only up to ``ROBOTSTXT_MAX_SIZE`` (RFC 9309 2.5), as
    the middleware would: ``/dev/zero`` or a huge file costs no more than that."""
    try:
        with path.open("rb") as file:
            body = file.read(settings.max_size + 1)
    except OSError as error:
        print(f"error:       cannot read {path}: {error}", file=sys.stderr)
        return None
    robots = RobotsTxt.parse(body, max_size=settings.max_size)
    chain = ((str(path), None),)
    size = f"{len(body)} bytes" if len(body) <= settings.max_size else "over the size limit"
    return SiteOutcome(Kind.PARSED, robots, f"local file, {size}", 0.0, chain)

"""``scrapy robotstxt``'s downloads, inside its one crawl: robots.txt, tdmrep.json, pages.

Each site's robots.txt and tdmrep.json come from a
:class:`~..sitefiles._service.SiteService` of the command's crawl, the one a
crawl runs, in its one-attempt mode (:data:`~..sitefiles._fetch_mode.ONE_ATTEMPT`):
downloaded once, live (no store read, no deferral, no retry), redirects,
size limits, decompression and failures as in a crawl, each download logged
and announced (``robots_parsed``) as in a crawl. The pages (``--page``) go
through Scrapy's downloader. A failure that is not the site's answer is an
error, never an outcome.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Spider
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred, DeferredList

from ...parser._robotstxt import RobotsTxt
from ...sites._outcome import DISALLOW_ALL, Kind, SiteOutcome
from ...sites._request_decision import TDMREP_PENDING, DecisionPolicy
from ...sites._site import site_of
from ..settings._crawler_settings import warnings_told
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

if TYPE_CHECKING:
    from scrapy.crawler import Crawler, CrawlerRunnerBase

    from ..sitefiles._service import SiteService

__all__ = [
    "crawl_once",
    "describe_download_error",
    "fetch_page",
    "fetcher_spider",
    "lint_spider",
    "read_file",
]

logger = logging.getLogger("scrapy_rfc9309.command")


async def crawl_once(runner: CrawlerRunnerBase, spider: type[Spider], said: Iterable[str]) -> None:
    """Run ``spider``'s one crawl with ``runner``; ``said``: the settings' warnings
    the command has logged already (its crawl does not say them again)."""
    crawler = runner.create_crawler(spider)
    warnings_told(crawler, said)
    crawl = runner.crawl(crawler)
    await (maybe_deferred_to_future(crawl) if isinstance(crawl, Deferred) else crawl)


async def _all(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run ``coroutines`` side by side, until each has ended."""
    await maybe_deferred_to_future(DeferredList([deferred_from_coro(c) for c in coroutines]))


class _CommandSpider(Spider):
    """The spider of one of the command's crawls: its crawler's site service is a
    one-attempt one (made before Scrapy builds the middlewares, which then share
    it), and it keeps no record: a command run is no crawl, so it neither reads
    nor writes the store, and never adds to the project's
    ``ROBOTSTXT_RECORD_FILE``."""

    name = "robotstxt"
    #: the settings the command's answers are given by (the project's, with the
    #: purposes the command declares)
    service_settings: RobotsTxtSettings

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Any:
        from ..record._crawl_record import without_record
        from ..sitefiles._fetch_mode import ONE_ATTEMPT
        from ..sitefiles._service import SiteService, make_site_service_with

        without_record(crawler)
        settings = cls.service_settings
        make_site_service_with(crawler, lambda: SiteService(crawler, settings, mode=ONE_ATTEMPT))
        return super().from_crawler(crawler, *args, **kwargs)

    @property
    def service(self) -> SiteService:
        """The crawler's one-attempt site service."""
        from ..sitefiles._service import site_service

        service = site_service(self.crawler)
        assert service is not None
        return service


def fetcher_spider(
    settings: RobotsTxtSettings,
    found: dict[str, SiteOutcome],
    sites: list[str],
    urls: list[str],
    pages: dict[str, PageResult] | None,
    token: str,
    tdmreps: dict[str, TdmRepAnswer] | None,
) -> type[Spider]:
    """A spider that has a one-attempt :class:`SiteService` fetch each of ``sites``'
    robots.txt into ``found``; with ``tdmreps``, each site's tdmrep.json too (its
    robots.txt permitting); then, with ``pages``, each of ``urls`` that its
    outcome (in ``found``) allows. ``settings``: the project's, with the purposes
    the command declares (the service reads tdmrep.json when they need it)."""

    class FetchRobotsTxt(_CommandSpider):
        service_settings = settings

        async def start(self) -> AsyncIterator[Any]:
            if sites:
                service = self.service
                await _all(_site_files(service, site, found, tdmreps) for site in sites)
            if pages is not None:
                # downloaded when the crawl downloads it: never when robots.txt
                # refuses it (a rule, a Content-Usage line); a tdmrep.json
                # reservation only where the crawl lets the page lift it
                policy = settings.policy
                timeout = settings.page_download_timeout
                await _all(
                    fetch_page(self.crawler, url, found, token, pages, policy, timeout, tdmreps)
                    for url in urls
                )
            return
            yield

    return FetchRobotsTxt


async def _site_files(
    service: SiteService,
    site: str,
    found: dict[str, SiteOutcome],
    tdmreps: dict[str, TdmRepAnswer] | None,
) -> None:
    """``site``'s robots.txt outcome from ``service`` (absent: the spider closed
    first), then, with ``tdmreps``, its tdmrep.json rules in force, as the crawl
    decides by them; a site whose robots.txt disallows everything is not asked."""
    outcome = await service.wait_for(site, None)
    if outcome is None:
        return
    found[site] = outcome
    reader = service.tdmrep
    if tdmreps is None or reader is None:
        return
    if outcome.kind in DISALLOW_ALL:
        tdmreps[site] = (None, "not fetched: robots.txt disallows the site")
        return
    if await reader.get(site) is None:  # the spider closed first
        tdmreps[site] = (None, "not fetched")
        return
    rules = service.decisions.tdmrep_rules(site)
    detail = (reader.details or {}).get(site, "fetched")  # "internal error: ..." if ours
    # failed for a reason of ours (an unread one naming the error): kept, so that
    # the answer and --page drop the site's pages as the crawl does
    # (``internal_error``), never read as no rules
    tdmreps[site] = (None if rules is TDMREP_PENDING else rules, detail)


def lint_spider(
    settings: RobotsTxtSettings, url: str, found: dict[str, SiteOutcome]
) -> type[Spider]:
    """A spider that downloads the robots.txt at ``url`` (any URL ``--lint`` is
    given, not only a site's ``/robots.txt``) into ``found``, once, with the
    fetcher of the crawl's one-attempt site service."""

    class LintRobotsTxt(_CommandSpider):
        service_settings = settings

        async def start(self) -> AsyncIterator[Any]:
            # the one-attempt service's: no "Gave up retrying" ERROR from Scrapy's
            # RetryMiddleware in the output, the answer says "unreachable" itself
            fetcher = self.service.fetcher
            try:
                found[url] = await fetcher.fetch(url)
            except (CancelledError, asyncio.CancelledError) as error:
                # not the site's answer, and no close of ours: said plainly
                detail = f"download cancelled ({dotted_name(error)}), no answer"
                found[url] = SiteOutcome(Kind.INTERNAL_ERROR, None, detail, 0.0, ((url, None),))
            except Exception:  # not the site's answer: an error, with its traceback
                logger.exception("Internal error while fetching %s", url)
            return
            yield

    return LintRobotsTxt


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
    policy: DecisionPolicy,
    timeout: float = 0.0,
    tdmreps: dict[str, TdmRepAnswer] | None = None,
) -> None:
    """Fetch ``url`` if the crawl's decision downloads it, and read its page-level
    directives for ``token`` (HTTP: The Definitive Guide ch. 9: the robots META
    tag; ``X-Robots-Tag``) and its usage signals. A page a crawl drops before
    download is never fetched: one robots.txt disallows (RFC 9309 2.2.2), or
    whose usage preferences refuse a declared purpose before download (a
    robots.txt ``Content-Usage`` line; a tdmrep.json reservation when the page
    may not lift it). ``policy``: the crawl's (``ROBOTSTXT_ALSO_OBEY``, the
    purposes, whether pages decide). ``tdmreps``: each site's tdmrep.json rules
    in force. ``timeout``: ``DOWNLOAD_TIMEOUT``, held whatever the download
    handler does."""
    from scrapy.http import Request
    from scrapy.http.request import NO_CALLBACK

    from ...parser._page_directives import read_page_directives
    from ...parser._usage_signals import read_usage_signals
    from ...sites._request_decision import decide_request

    site = site_of(url) if "://" in url else None
    if site is None:
        pages[url] = PageNotRead(no_site_reason(url))
        return
    outcome = found.get("", found.get(site))
    if outcome is None:
        pages[url] = PageNotRead("robots.txt not fetched")
        return
    # the crawl's decision before download (the page itself is read for its signals)
    rules = (tdmreps or {}).get(site, (None, ""))[0] if policy.purposes else None
    decision = decide_request(outcome, url, site, token, policy, rules)
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
            pages[url] = PageNotRead(
                f"{INTERNAL_ERROR}: {describe_download_error(error)}", internal_error=True
            )
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
        response.url, response.status, response.headers, response.body, token, also=policy.also_obey
    )
    unread: dict[str, frozenset[str]] = {}
    signals = read_usage_signals(response.status, response.headers, response.body, unread)
    pages[url] = PageRead(response.status, directives, tuple(signals), unread)


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

"""``RobotsTxtFetcher``: download one robots.txt through Scrapy as RFC 9309 2.3 says.

Used by the middleware and by the ``scrapy robotstxt`` command, so both
apply the same rules:

* up to 5 redirects are followed, across hosts too (2.3.1.2); more means
  unavailable;
* 2xx: the body is parsed, the download stopped at ``ROBOTSTXT_MAX_SIZE``
  bytes and the part received used (2.5);
* 4xx other than 429: unavailable, everything allowed (2.3.1.3);
* 429, 5xx, DNS / connection / TLS errors, time-outs: unreachable,
  everything disallowed (2.3.1.4).

The request goes through the downloader middlewares (proxies, headers,
retries), but is never redirected by them, never served from the HTTP cache,
never dropped as offsite, and a meta refresh in its body is not followed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredLock
from w3lib.url import safe_url_string

from . import _compat
from ._outcome import Kind, SiteOutcome, kind_of_status
from ._robotparser import RFC9309RobotParser
from ._robotstxt import RobotsTxt

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ._settings import RobotsTxtSettings

__all__ = ["RobotsTxtFetcher"]

logger = logging.getLogger("scrapy_rfc9309.fetcher")

#: RFC 9309 2.3.1.2: follow at least five consecutive redirects.
MAX_REDIRECTS = 5
#: Parsing runs on the reactor thread in slices of at most about this long,
#: each followed by a reactor turn: a 500 KiB file never holds the reactor for
#: long. (Worker threads would: CPU-bound threads make the reactor queue for
#: the GIL at every system call.)
PARSE_SLICE_SECONDS = 0.005
DOWNLOAD_PRIORITY = 1000

#: The robots.txt URLs requested for one fetch, each with its HTTP status.
Chain = Sequence[tuple[str, "int | None"]]

_META_SIZE_LIMIT = "_robotstxt_max_size"
_META_RECEIVED = "_robotstxt_received"


def dotted_name(exc: BaseException) -> str:
    """``package.module.Class`` of an exception, for stats keys and logs."""
    kind = type(exc)
    return f"{kind.__module__}.{kind.__qualname__}"


class RobotsTxtFetcher:
    """Fetches and classifies robots.txt files for one crawler."""

    def __init__(self, crawler: Crawler, settings: RobotsTxtSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = crawler.stats
        self._parse_lock = DeferredLock()
        crawler.signals.connect(self._on_headers_received, signal=signals.headers_received)
        crawler.signals.connect(self._on_bytes_received, signal=signals.bytes_received)

    async def fetch(self, url: str, request: Request | None = None) -> SiteOutcome:
        """Download the robots.txt at ``url``; ``request`` is the page that needs it.

        Never raises for what the server or the network does: every failure is
        an outcome. Cancellation (at close) propagates.
        """
        assert self.crawler.engine is not None
        chain: list[tuple[str, int | None]] = []
        for hop in range(MAX_REDIRECTS + 1):
            try:
                response = await _compat.download(self.crawler, self._request(url))
            except IgnoreRequest as exc:
                chain.append((url, None))
                return self.unreachable(f"robots.txt request dropped: {exc}", chain)
            except Exception as exc:
                chain.append((url, None))
                self.stats.inc_value(f"robotstxt/exception_count/{dotted_name(exc)}")
                return self.unreachable(f"{dotted_name(exc)}: {exc}", chain)
            chain.append((url, response.status))
            self.stats.inc_value("robotstxt/response_count")
            self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            kind = kind_of_status(response.status)
            if kind is None:
                location = response.headers.get(b"Location")
                if not location:
                    return self._unavailable(f"HTTP {response.status} without Location", chain)
                if hop == MAX_REDIRECTS:
                    break
                url = urljoin(response.url, safe_url_string(location.decode("latin-1")))
                logger.debug("robots.txt redirected (%d) to %s", response.status, url)
                continue
            if kind is Kind.UNREACHABLE:
                return self.unreachable(f"HTTP {response.status}", chain)
            if kind is Kind.UNAVAILABLE:
                return self._unavailable(f"HTTP {response.status}", chain)
            return await self._parsed(response, request, chain)
        return self._unavailable(f"more than {MAX_REDIRECTS} redirects", chain)

    def _request(self, url: str) -> Request:
        return Request(
            url,
            priority=DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                "dont_obey_robotstxt": True,
                "dont_redirect": True,  # followed here, up to 5 hops; also no meta refresh
                "dont_cache": True,  # never served from HTTPCACHE past ROBOTSTXT_CACHE_TTL
                "allow_offsite": True,  # a redirect to another host is still followed
                "download_maxsize": 0,  # stopped at ROBOTSTXT_MAX_SIZE, the part kept
                "download_warnsize": 0,
                _META_SIZE_LIMIT: self.settings.max_size,
            },
        )

    def unreachable(self, detail: str, chain: Chain = ()) -> SiteOutcome:
        """An unreachable outcome (disallow all), tried again after its TTL."""
        expires = time.monotonic() + self.settings.unreachable_ttl
        return SiteOutcome(Kind.UNREACHABLE, None, detail, expires, tuple(chain))

    def _unavailable(self, detail: str, chain: Chain) -> SiteOutcome:
        expires = time.monotonic() + self.settings.cache_ttl
        return SiteOutcome(Kind.UNAVAILABLE, None, detail, expires, tuple(chain))

    async def _parsed(
        self, response: Response, request: Request | None, chain: Chain
    ) -> SiteOutcome:
        robots = await self._parse(response.body)
        if robots.truncated:
            self.stats.inc_value("robotstxt/truncated")
            logger.info(
                "robots.txt larger than ROBOTSTXT_MAX_SIZE (%d bytes), the rest ignored: %s",
                self.settings.max_size,
                response.url,
            )
        await _send_robots_parsed(
            self.crawler, RFC9309RobotParser.from_robots(robots), request or response.request
        )
        expires = time.monotonic() + self.settings.cache_ttl
        return SiteOutcome(Kind.PARSED, robots, f"HTTP {response.status}", expires, tuple(chain))

    async def _parse(self, body: bytes) -> RobotsTxt:
        """Parse, and compile the default agent's rules, in slices of the reactor's time.

        One file at a time: slices of several files in one reactor turn would
        add up to a long block again.
        """
        steps = RobotsTxt.parse_in_steps(
            body, max_size=self.settings.max_size, agent=self.settings.token_for(None)
        )
        await maybe_deferred_to_future(self._parse_lock.acquire())
        try:
            slice_ends = time.perf_counter() + PARSE_SLICE_SECONDS
            while True:
                try:
                    next(steps)
                except StopIteration as done:
                    return done.value
                if time.perf_counter() > slice_ends:
                    await _reactor_turn()
                    slice_ends = time.perf_counter() + PARSE_SLICE_SECONDS
        finally:
            self._parse_lock.release()

    def _on_headers_received(self, request: Request) -> None:
        if _META_SIZE_LIMIT in request.meta:
            request.meta[_META_RECEIVED] = 0

    def _on_bytes_received(self, data: bytes, request: Request) -> None:
        limit = request.meta.get(_META_SIZE_LIMIT)
        if limit is None:
            return
        received = request.meta.get(_META_RECEIVED, 0) + len(data)
        request.meta[_META_RECEIVED] = received
        if received > limit:
            raise StopDownload(fail=False)


async def _reactor_turn() -> None:
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, 0, lambda: None))


async def _send_robots_parsed(
    crawler: Crawler, parser: RFC9309RobotParser, request: Request | None
) -> None:
    await _compat.send_catch_log_async(
        crawler, _compat.ROBOTS_PARSED, robotparser=parser, request=request
    )

"""``RobotsTxtFetcher``: download one robots.txt through Scrapy as RFC 9309 2.3 says.

Used by the middleware and by the ``scrapy robotstxt`` command, so both
apply the same rules:

* up to 5 redirects are followed, across hosts too (2.3.1.2); more means
  unavailable; only ``http`` and ``https`` targets are followed, a redirect
  to ``file:``, ``data:``, ``ftp:``, ... is refused and means unavailable;
* 2xx: the body is parsed, the download stopped at ``ROBOTSTXT_MAX_SIZE``
  bytes and the part received used (2.5); a compressed body is decoded here,
  never by Scrapy's compression middleware, and only up to the same limit;
* 4xx other than 429: unavailable, everything allowed (2.3.1.3); 401 and
  403 disallow everything with ``ROBOTSTXT_AUTH_DISALLOW`` (HTTP: The
  Definitive Guide ch. 9);
* 429, 5xx, DNS / connection / TLS errors, time-outs: unreachable,
  everything disallowed (2.3.1.4); tried again after the ``Retry-After`` of
  a 429 or 503 (bounded by ``ROBOTSTXT_RETRY_AFTER_MAX``), else after
  ``ROBOTSTXT_UNREACHABLE_TTL``.

The download itself (request, redirects, failures by exception class) is the
loop every per-site file shares (:func:`~._file_download.download_file`);
this module says what its result means for robots.txt. Anything else that
goes wrong (a bug, an incompatible component) is not an answer of the site:
it is raised to the caller, which reports it as an internal error.

The request goes through the downloader middlewares (proxies, headers,
retries), but is never redirected by them, never served from the HTTP cache,
never dropped as offsite, and a meta refresh in its body is not followed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.http import Request, Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredLock

from ...parser._robotstxt import RobotsTxt
from ...sites._lifetime import headers_lifetime
from ...sites._outcome import Kind, SiteOutcome, kind_of_status
from ...sites._records import RETRY_AFTER_MIN
from ...sites._site import robots_url, site_of
from .. import _compat
from .._clock import Clock
from .._engine import file_slot, file_slot_key
from .._robotparser import RFC9309RobotParser
from ._decode import accept_encoding, decode_body
from ._file_download import (
    MAX_REDIRECTS,
    RETRY_AFTER_STATUSES,
    DownloadTimedOut,
    Ending,
    FileDownload,
    dotted_name,
    download_file,
    exception_key,
    is_download_failure,
    is_not_downloadable,
    retry_after_seconds,
    shown_target,
    unfollowable,
)
from ._robotstxt_downloader import META_ENCODING, META_SIZE_LIMIT, downloader_hooks
from ._site_files import file_request

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..settings._settings import RobotsTxtSettings

__all__ = [
    "MAX_REDIRECTS",
    "RETRY_AFTER_STATUSES",
    "RobotsTxtFetcher",
    "dotted_name",
    "is_download_failure",
    "is_not_downloadable",
    "retry_after_seconds",
    "robots_txt_request",
    "send_robots_parsed",
    "shown_target",
    "unfollowable",
]

logger = logging.getLogger("scrapy_rfc9309.fetcher")

#: Parsing runs on the reactor thread in slices of at most about this long,
#: each followed by a reactor turn: a 500 KiB file never holds the reactor for
#: long. (Worker threads would: CPU-bound threads make the reactor queue for
#: the GIL at every system call.)
PARSE_SLICE_SECONDS = 0.005

#: The robots.txt URLs requested for one fetch, each with its HTTP status.
Chain = Sequence[tuple[str, "int | None"]]


def _cut_at_last_line(body: bytes) -> bytes:
    """``body`` without its last, unfinished line (RFC 9309 2.5: never guess a cut line)."""
    end = max(body.rfind(b"\n"), body.rfind(b"\r"))
    return body[: end + 1]


_ACCEPT_ENCODING = accept_encoding()
#: The detail of a compressed robots.txt that decodes to no complete line.
_NO_LINE_DECODED = "compressed data cut before the first line ended"


class RobotsTxtFetcher:
    """Fetches and classifies robots.txt files for one crawler."""

    def __init__(self, crawler: Crawler, settings: RobotsTxtSettings, clock: Clock) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = crawler.stats
        #: the crawl's time, handed down by the site service: outcomes expire by it
        self.clock = clock
        self._parse_lock = DeferredLock()
        #: whether Scrapy's RetryMiddleware may retry a robots.txt download; off
        #: while unreachable sites are deferred (our back-off tries them again)
        self.scrapy_retry = True
        #: its requests in Scrapy's downloader: counted on top of the pages'
        #: concurrency, stopped at ROBOTSTXT_MAX_SIZE, their encoding set aside
        self._downloader = downloader_hooks(crawler)

    async def fetch(self, url: str, request: Request | None = None) -> SiteOutcome:
        """Download the robots.txt at ``url``; ``request`` is the page that needs it.

        Never raises for what the server or the network does: every such
        failure is an outcome. Anything else (a bug, an incompatible Scrapy)
        propagates, and so does cancellation (at close).
        """
        assert self.crawler.engine is not None
        with file_slot(self.crawler, "robots.txt", site_of(url) or url) as slot:
            self._downloader.listen(1)
            try:
                return await self._fetch(url, request, slot)
            finally:
                self._downloader.listen(-1)

    async def _fetch(self, url: str, request: Request | None, slot: str) -> SiteOutcome:
        download = await download_file(
            self.crawler,
            url,
            slot,
            name="robots.txt",
            logger=logger,
            stats_prefix="robotstxt",
            max_size=0,  # stopped at ROBOTSTXT_MAX_SIZE, the part kept (RobotsTxtDownloaderHooks)
            # RetryMiddleware as configured, but not past a Retry-After; none while
            # deferral tries again itself (HTTP: The Definitive Guide ch. 9)
            retry=self.scrapy_retry,
            # bounded even where a download handler ignores download_timeout (FTP)
            timeout=self.settings.download_timeout,
            clock=self.clock,
            meta={
                META_SIZE_LIMIT: self.settings.max_size,
                # ROBOTSTXT_DOWNLOAD_TIMEOUT: a robots.txt that hangs gives up
                # its place among the robots.txt downloads soon
                "download_timeout": self.settings.download_timeout,
            },
            # only what _parsed can decode within ROBOTSTXT_MAX_SIZE; a header set
            # here is kept by Scrapy's compression middleware
            headers={b"Accept-Encoding": _ACCEPT_ENCODING},
            # before Scrapy's downloader counts it in `active`, and as it leaves
            entering=self._downloader.count,
            leaving=self._downloader.uncount,
        )
        return await self._outcome(download, request)

    async def _outcome(self, download: FileDownload, request: Request | None) -> SiteOutcome:
        """What a robots.txt download means (RFC 9309 2.3.1.1 to 2.3.1.4)."""
        chain, ending, error, response = download.chain, download.ending, download.error, None
        answers = sum(1 for _, status in chain if status is not None)
        if answers:
            self.stats.inc_value("robotstxt/response_count", answers)
        if error is not None:
            if ending is Ending.DROPPED:
                return self.unreachable(f"robots.txt request dropped: {error}", chain)
            if ending is Ending.NOT_DOWNLOADABLE and len(chain) > 1:
                # the site's own URL answered (a redirect): the crawler cannot
                # follow it, as to a scheme it refuses; its pages are downloadable
                scheme = urlsplit(chain[-1][0]).scheme
                why = f"a {scheme}: URL this crawler cannot download"
                return self._refuse_redirect(chain[-1][0], why, chain[-2][1] or 0, chain)
            if ending is Ending.NOT_DOWNLOADABLE:
                return self.not_downloadable(error, chain)
            self.stats.inc_value(f"robotstxt/exception_count/{exception_key(error)}")
            if isinstance(error, DownloadTimedOut):  # "timed out after 10 s"
                return self.unreachable(str(error), chain)
            return self.unreachable(f"{dotted_name(error)}: {error}", chain)
        response = download.response
        assert response is not None
        if ending is Ending.NO_LOCATION:
            return self._unavailable(f"HTTP {response.status} without Location", chain)
        if ending is Ending.TOO_MANY_REDIRECTS:
            return self._unavailable(f"more than {MAX_REDIRECTS} redirects", chain)
        if ending is Ending.REDIRECT_REFUSED:
            return self._refuse_redirect(download.target, download.refused, response.status, chain)
        kind = kind_of_status(response.status, auth_disallow=self.settings.auth_disallow)
        if kind is Kind.UNREACHABLE:
            return self._unreachable_status(response, chain, download.retry_after)
        if kind is Kind.UNAVAILABLE or kind is Kind.RESTRICTED:
            return self._answered(kind, None, response, chain)
        return await self._parsed(response, request, chain)

    def _refuse_redirect(self, target: str, why: str, status: int, chain: Chain) -> SiteOutcome:
        """A redirect that is not followed (see :func:`unfollowable`): unavailable.

        Following one to another scheme would let any site make the crawler
        read a local file (``file:``), hang on a named pipe, or take rules
        from a ``data:`` URL; a malformed target is the site's answer, not
        an internal error.
        """
        self.stats.inc_value("robotstxt/redirect_refused")
        outcome = self._unavailable(f"HTTP {status} to {why}, refused", chain)
        logger.warning(
            "robots.txt redirect to %s refused (%s): a redirect is followed only to a "
            "well-formed http or https URL this crawler can download (RFC 9309 2.3.1.2); "
            "%s counts as unavailable (RFC 9309 2.3.1.3)",
            shown_target(target),
            why,
            outcome.source,
        )
        return outcome

    def _unreachable_status(
        self, response: Response, chain: Chain, wait: float | None
    ) -> SiteOutcome:
        """A 429 / 5xx: unreachable until its ``Retry-After`` (``wait``), if any, else
        its TTL."""
        detail = f"HTTP {response.status}"
        if wait is None:
            return self.unreachable(detail, chain)
        asked = wait
        wait = max(RETRY_AFTER_MIN, min(wait, self.settings.retry_after_max))
        self.stats.inc_value("robotstxt/retry_after")
        now = self.clock.monotonic()
        detail = f"{detail}, Retry-After {round(wait):d} s"
        if asked > wait:  # the site asked longer: said, so that no one reads it as the site's
            detail = f"{detail} (asked {round(asked):d} s, ROBOTSTXT_RETRY_AFTER_MAX)"
        return SiteOutcome(
            Kind.UNREACHABLE,
            None,
            detail,
            now + wait,
            tuple(chain),
            retry_after=True,
            fetched_at=now,
        )

    def not_downloadable(self, exc: Exception, chain: Chain) -> SiteOutcome:
        """No download handler for the robots.txt URL's scheme: the crawler's side,
        not the site's answer (never unreachable, never deferred). The site's
        requests go to Scrapy unchecked, which fails each with its own error;
        kept ``ROBOTSTXT_CACHE_TTL`` (the handlers do not change during a crawl)."""
        scheme = urlsplit(chain[0][0]).scheme if chain else ""
        self.stats.inc_value(f"robotstxt/exception_count/{exception_key(exc)}")
        logger.warning(
            "robots.txt not checked: this crawler cannot download %s: URLs (%s: %s); "
            "requests to %s go to Scrapy unchecked, which fails them",
            scheme,
            dotted_name(exc),
            exc,
            site_of(chain[0][0]) if chain else "?",
        )
        now = self.clock.monotonic()
        detail = f"{dotted_name(exc)}: {exc}"
        return SiteOutcome(
            Kind.NOT_DOWNLOADABLE,
            None,
            detail,
            now + self.settings.cache_ttl,
            tuple(chain),
            fetched_at=now,
        )

    def unreachable(self, detail: str, chain: Chain = ()) -> SiteOutcome:
        """An unreachable outcome (disallow all), tried again after its TTL."""
        now = self.clock.monotonic()
        expires = now + self.settings.unreachable_ttl
        return SiteOutcome(Kind.UNREACHABLE, None, detail, expires, tuple(chain), fetched_at=now)

    def _unavailable(self, detail: str, chain: Chain) -> SiteOutcome:
        """Unavailable without an answer to cache (redirects): kept ``ROBOTSTXT_CACHE_TTL``."""
        now = self.clock.monotonic()
        expires = now + self.settings.cache_ttl
        lifetime = "ROBOTSTXT_CACHE_TTL"
        return SiteOutcome(
            Kind.UNAVAILABLE, None, detail, expires, tuple(chain), lifetime, fetched_at=now
        )

    def _answered(
        self, kind: Kind, robots: RobotsTxt | None, response: Response, chain: Chain
    ) -> SiteOutcome:
        """An outcome the final response decided, kept as its cache directives say.

        RFC 9309 2.4 and HTTP: The Definitive Guide ch. 9: ``Cache-Control``
        and ``Expires`` set the lifetime, within ``ROBOTSTXT_CACHE_MIN_TTL``
        and ``ROBOTSTXT_CACHE_TTL`` (see ``_lifetime``).
        """
        lifetime = headers_lifetime(
            response.headers.getlist,
            now=self.clock.time(),
            max_ttl=self.settings.cache_ttl,
            min_ttl=self.settings.cache_min_ttl,
        )
        now = self.clock.monotonic()
        detail = f"HTTP {response.status}"
        return SiteOutcome(
            kind,
            robots,
            detail,
            now + lifetime.seconds,
            tuple(chain),
            lifetime.source,
            fetched_at=now,
        )

    async def _parsed(
        self, response: Response, request: Request | None, chain: Chain
    ) -> SiteOutcome:
        decoded = self._decoded_body(response)
        if decoded is None:
            return self.unreachable(_NO_LINE_DECODED, chain)
        body, cut = decoded
        # fetched for no page: sent with the robots.txt request (Scrapy's
        # downloader sets it on every response)
        made_for = request or response.request or Request(response.url)
        robots = await self.parse_and_announce(body, made_for)
        if robots.truncated or cut:
            self.stats.inc_value("robotstxt/truncated")
            logger.info(
                "robots.txt larger than ROBOTSTXT_MAX_SIZE (%d bytes), the rest ignored: %s",
                self.settings.max_size,
                response.url,
            )
        return self._answered(Kind.PARSED, robots, response, chain)

    def _decoded_body(self, response: Response) -> tuple[bytes, bool] | None:
        """The body to parse, decoded if compressed, and whether the size limit cut it.

        Decoding stops after ``ROBOTSTXT_MAX_SIZE`` + 1 bytes, so a small
        compressed body that decodes to gigabytes costs no more than a plain
        one; the parser then treats it as any body over the limit (RFC 9309
        2.5). A stream cut by the download limit is cut by the size limit too;
        a corrupt one keeps the lines decoded before the fault (a WARNING,
        ``robotstxt/encoding_broken``), and one that yields no complete line
        is unreachable, as a plain body cut short is (``None``; RFC 9309
        2.3.1.4, 2.5: never guess a cut line); a body that is not encoded as its
        ``Content-Encoding`` says at all is parsed as it is (a WARNING,
        ``robotstxt/encoding_mislabelled``).
        """
        meta = response.request.meta if response.request is not None else {}
        encodings = meta.get(META_ENCODING)
        if not encodings:
            return response.body, False
        decoded = decode_body(response.body, encodings, self.settings.max_size)
        if decoded.undecoded:
            logger.warning(
                "robots.txt in an encoding that cannot be decoded (%s), parsed as it is: %s",
                ", ".join(decoded.undecoded),
                response.url,
            )
        if decoded.broken and "download_stopped" in response.flags:
            return _cut_at_last_line(decoded.body), True  # cut by ROBOTSTXT_MAX_SIZE
        if decoded.broken and not decoded.body and not decoded.cut:
            # Content-Encoding says gzip (say) but the body is not: a common
            # server misconfiguration. The body is what the site meant.
            self.stats.inc_value("robotstxt/encoding_mislabelled")
            logger.warning(
                "robots.txt sent with Content-Encoding %s but not so encoded, parsed as it is: %s",
                ", ".join(encodings),
                response.url,
            )
            return response.body, False
        if decoded.broken and len(decoded.body) <= self.settings.max_size:
            self.stats.inc_value("robotstxt/encoding_broken")
            lines = _cut_at_last_line(decoded.body)
            if not lines:
                logger.warning(
                    "robots.txt compressed data cut or corrupt before its first line ended, "
                    "unreachable (RFC 9309 2.3.1.4): %s",
                    response.url,
                )
                return None
            logger.warning(
                "robots.txt compressed data cut or corrupt, the lines before the fault used: %s",
                response.url,
            )
            return lines, False
        return decoded.body, False

    async def parse_and_announce(
        self, body: bytes, request: Request | None, site: str | None = None
    ) -> RobotsTxt:
        """Parse a robots.txt body, downloaded or taken from the store, and send
        Scrapy's ``robots_parsed`` for ``request``: the one place both happen.
        A body taken for no page request (fetched ahead later, a deferred site's
        attempt) is sent with a request for ``site``'s robots.txt, as a download
        fetched ahead is."""
        robots = await self.parse(body)
        if request is None:
            assert site is not None
            request = robots_txt_request(site)
        await send_robots_parsed(self.crawler, RFC9309RobotParser.from_robots(robots), request)
        return robots

    async def parse(self, body: bytes) -> RobotsTxt:
        """Parse (up to ``ROBOTSTXT_MAX_SIZE``), and compile the default agent's rules,
        in slices of the reactor's time. Used for downloaded and stored bodies.

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
                    parsed: RobotsTxt = done.value
                    return parsed
                if time.perf_counter() > slice_ends:
                    await _reactor_turn()
                    slice_ends = time.perf_counter() + PARSE_SLICE_SECONDS
        finally:
            self._parse_lock.release()


async def _reactor_turn() -> None:
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, 0, lambda: None))


async def send_robots_parsed(
    crawler: Crawler, parser: RFC9309RobotParser, request: Request
) -> None:
    """Send Scrapy's ``robots_parsed`` signal for a robots.txt parsed for ``request``
    (a page that needed it, or the robots.txt request itself: never ``None``,
    Scrapy documents a Request)."""
    await _compat.send_catch_log_async(
        crawler, _compat.ROBOTS_PARSED, robotparser=parser, request=request
    )


def robots_txt_request(site: str) -> Request:
    """A request for ``site``'s robots.txt as the fetcher makes it: what
    ``robots_parsed`` carries for a stored copy taken with no page request
    (fetched ahead later, or an attempt of a deferred site), as a download
    fetched ahead carries its own request."""
    return file_request(
        robots_url(site), file_slot_key("robots.txt", site), max_size=0, retry=False
    )

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

Anything else that goes wrong (a bug, an incompatible component) is not an
answer of the site: it is raised to the caller, which reports it as an
internal error.

The request goes through the downloader middlewares (proxies, headers,
retries), but is never redirected by them, never served from the HTTP cache,
never dropped as offsite, and a meta refresh in its body is not followed.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import DeferredLock
from w3lib.url import safe_url_string

from ..parser._robotstxt import RobotsTxt
from ..sites._lifetime import headers_lifetime
from ..sites._outcome import Kind, SiteOutcome, kind_of_status
from ..sites._records import RETRY_AFTER_MIN
from ..sites._site import site_of
from . import _compat
from ._decode import accept_encoding, decode_body, split_encodings
from ._engine import add_to_total_concurrency, file_slot
from ._robotparser import RFC9309RobotParser
from ._site_files import file_request

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ._settings import RobotsTxtSettings

__all__ = ["RobotsTxtFetcher", "is_download_failure", "retry_after_seconds", "send_robots_parsed"]

logger = logging.getLogger("scrapy_rfc9309.fetcher")

#: RFC 9309 2.3.1.2: follow at least five consecutive redirects.
MAX_REDIRECTS = 5
#: Parsing runs on the reactor thread in slices of at most about this long,
#: each followed by a reactor turn: a 500 KiB file never holds the reactor for
#: long. (Worker threads would: CPU-bound threads make the reactor queue for
#: the GIL at every system call.)
PARSE_SLICE_SECONDS = 0.005

#: The robots.txt URLs requested for one fetch, each with its HTTP status.
Chain = Sequence[tuple[str, "int | None"]]

_META_SIZE_LIMIT = "_robotstxt_max_size"
_META_RECEIVED = "_robotstxt_received"
_META_ENCODING = "_robotstxt_content_encoding"

#: RFC 9309 2.3.1.2 speaks of HTTP redirects; Scrapy's own redirect
#: middleware follows no other scheme either.
FOLLOWED_SCHEMES = frozenset({"http", "https"})
#: Statuses whose ``Retry-After`` is honoured (RFC 9110 10.2.3, RFC 6585 4).
RETRY_AFTER_STATUSES = frozenset({429, 503})

#: Modules whose exceptions are download failures: the network, DNS, TLS,
#: time-outs, HTTP protocol errors, Scrapy's download handlers.
_NETWORK_MODULES = (
    "twisted.internet.error",
    "twisted.web",
    "twisted.names",
    "OpenSSL",
    "service_identity",
    "h2",
    "httpx",
    "httpcore",
    "scrapy.core.downloader",
    "scrapy.core.http2",
)
_SCRAPY_DOWNLOAD_ERRORS = frozenset(
    {
        "CannotResolveHostError",
        "DownloadConnectionRefusedError",
        "DownloadFailedError",
        "DownloadTimeoutError",
        "ResponseDataLossError",
        "UnsupportedURLSchemeError",
        "NotSupported",
    }
)
#: A refused redirect target is named in logs up to this many characters
#: (a ``data:`` URL carries its whole content).
_TARGET_SHOWN = 80


def is_download_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the network or the server failing, not a bug here.

    RFC 9309 2.3.1.4: network errors, DNS, TLS, time-outs and HTTP errors
    make a robots.txt unreachable. Everything else (``AttributeError``,
    ``TypeError``, ...) is an internal error and must not pass for one.
    Cancellation is neither: the spider is closing.
    """
    from twisted.internet.defer import CancelledError
    from twisted.internet.defer import TimeoutError as DeferTimeoutError

    if isinstance(exc, (CancelledError, StopDownload)):
        return False
    if isinstance(exc, (OSError, DeferTimeoutError)):  # sockets, ssl.SSLError, time-outs
        return True
    for kind in type(exc).__mro__:
        module = kind.__module__
        if module == "scrapy.exceptions" and kind.__name__ in _SCRAPY_DOWNLOAD_ERRORS:
            return True
        if any(module == name or module.startswith(name + ".") for name in _NETWORK_MODULES):
            return True
    return False


def retry_after_seconds(value: bytes | str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header value asks to wait (RFC 9110 10.2.3).

    Either delay-seconds (``120``) or an HTTP-date; ``None`` when absent or
    unreadable; a date in the past is ``0``. ``now`` is a Unix time.
    """
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return float(int(text[:12]))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds)


def unfollowable(url: str) -> str | None:
    """Why a robots.txt redirect target is not followed; ``None`` if it is.

    Only ``http`` and ``https`` URLs with a host and a valid port are
    followed (RFC 9309 2.3.1.2 speaks of HTTP redirects; Scrapy's own
    redirect middleware follows no other scheme); credentials in a target
    are refused too, so a redirect cannot make the crawler send them.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "a malformed URL"
    scheme = parts.scheme.lower()
    if scheme not in FOLLOWED_SCHEMES:
        return f"a {scheme}: URL" if scheme else "a URL without a scheme"
    if not parts.hostname:
        return "a URL without a host"
    if port == 0:
        return "a URL with port 0"
    if parts.username is not None or parts.password is not None:
        return "a URL with credentials"
    return None


def shown_target(url: str) -> str:
    """A redirect target as logged: cut at a length (a ``data:`` URL carries its content)."""
    return _shown(url)


def _shown(url: str) -> str:
    return url if len(url) <= _TARGET_SHOWN else url[:_TARGET_SHOWN] + "..."


def _cut_at_last_line(body: bytes) -> bytes:
    """``body`` without its last, unfinished line (RFC 9309 2.5: never guess a cut line)."""
    end = max(body.rfind(b"\n"), body.rfind(b"\r"))
    return body[: end + 1]


_ACCEPT_ENCODING = accept_encoding()


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
        #: whether Scrapy's RetryMiddleware may retry a robots.txt download; off
        #: while unreachable sites are deferred (our back-off tries them again)
        self.scrapy_retry = True
        #: robots.txt requests counted on top of the downloader's total concurrency
        self._counted: set[Request] = set()
        crawler.signals.connect(
            self._on_reached_downloader, signal=signals.request_reached_downloader
        )
        crawler.signals.connect(self._on_left_downloader, signal=signals.request_left_downloader)
        crawler.signals.connect(self._on_headers_received, signal=signals.headers_received)
        crawler.signals.connect(self._on_bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(self._on_response_downloaded, signal=signals.response_downloaded)

    async def fetch(self, url: str, request: Request | None = None) -> SiteOutcome:
        """Download the robots.txt at ``url``; ``request`` is the page that needs it.

        Never raises for what the server or the network does: every such
        failure is an outcome. Anything else (a bug, an incompatible Scrapy)
        propagates, and so does cancellation (at close).
        """
        assert self.crawler.engine is not None
        with file_slot(self.crawler, "robots.txt", site_of(url) or url) as slot:
            return await self._fetch(url, request, slot)

    async def _fetch(self, url: str, request: Request | None, slot: str) -> SiteOutcome:
        chain: list[tuple[str, int | None]] = []
        for hop in range(MAX_REDIRECTS + 1):
            hop_request = self._request(url, slot)
            self._count(hop_request)  # before Scrapy's downloader counts it in `active`
            try:
                response = await _compat.download(self.crawler, hop_request)
            except IgnoreRequest as exc:
                chain.append((url, None))
                return self.unreachable(f"robots.txt request dropped: {exc}", chain)
            except Exception as exc:
                if not is_download_failure(exc):
                    raise
                chain.append((url, None))
                self.stats.inc_value(f"robotstxt/exception_count/{dotted_name(exc)}")
                return self.unreachable(f"{dotted_name(exc)}: {exc}", chain)
            finally:
                self._uncount(hop_request)
            chain.append((url, response.status))
            self.stats.inc_value("robotstxt/response_count")
            self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            kind = kind_of_status(response.status, auth_disallow=self.settings.auth_disallow)
            if kind is None:
                location = response.headers.get(b"Location")
                if not location:
                    return self._unavailable(f"HTTP {response.status} without Location", chain)
                if hop == MAX_REDIRECTS:
                    break
                raw_target = location.decode("latin-1")
                try:
                    url = urljoin(response.url, safe_url_string(raw_target))
                except ValueError:  # "http://[bad/robots.txt": the site's answer, not a bug
                    url = raw_target
                why = unfollowable(url)
                if why is not None:
                    return self._refuse_redirect(url, why, response.status, chain)
                logger.debug("robots.txt redirected (%d) to %s", response.status, url)
                continue
            if kind is Kind.UNREACHABLE:
                return self._unreachable_status(response, chain)
            if kind is Kind.UNAVAILABLE or kind is Kind.RESTRICTED:
                return self._answered(kind, None, response, chain)
            return await self._parsed(response, request, chain)
        return self._unavailable(f"more than {MAX_REDIRECTS} redirects", chain)

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
            "robots.txt redirect to %s refused (%s): only well-formed http and https "
            "redirects are followed (RFC 9309 2.3.1.2); %s counts as unavailable "
            "(RFC 9309 2.3.1.3)",
            _shown(target),
            why,
            outcome.source,
        )
        return outcome

    def _unreachable_status(self, response: Response, chain: Chain) -> SiteOutcome:
        """A 429 / 5xx: unreachable until its ``Retry-After``, if any, else its TTL."""
        detail = f"HTTP {response.status}"
        wait = None
        if response.status in RETRY_AFTER_STATUSES:
            wait = retry_after_seconds(response.headers.get(b"Retry-After"))
        if wait is None:
            return self.unreachable(detail, chain)
        wait = max(RETRY_AFTER_MIN, min(wait, self.settings.retry_after_max))
        self.stats.inc_value("robotstxt/retry_after")
        expires = time.monotonic() + wait
        detail = f"{detail}, Retry-After {round(wait):d} s"
        return SiteOutcome(Kind.UNREACHABLE, None, detail, expires, tuple(chain), retry_after=True)

    def _request(self, url: str, slot: str) -> Request:
        return file_request(
            url,
            slot,
            max_size=0,  # stopped at ROBOTSTXT_MAX_SIZE, the part kept (_on_bytes_received)
            # RetryMiddleware as configured, but not past a Retry-After; none while
            # deferral tries again itself (HTTP: The Definitive Guide ch. 9)
            retry=self.scrapy_retry,
            meta={
                _META_SIZE_LIMIT: self.settings.max_size,
                # ROBOTSTXT_DOWNLOAD_TIMEOUT: a robots.txt that hangs gives up
                # its place among the robots.txt downloads soon
                "download_timeout": self.settings.download_timeout,
            },
            # only what _parsed can decode within ROBOTSTXT_MAX_SIZE; a header set
            # here is kept by Scrapy's compression middleware
            headers={b"Accept-Encoding": _ACCEPT_ENCODING},
        )

    def unreachable(self, detail: str, chain: Chain = ()) -> SiteOutcome:
        """An unreachable outcome (disallow all), tried again after its TTL."""
        expires = time.monotonic() + self.settings.unreachable_ttl
        return SiteOutcome(Kind.UNREACHABLE, None, detail, expires, tuple(chain))

    def _unavailable(self, detail: str, chain: Chain) -> SiteOutcome:
        """Unavailable without an answer to cache (redirects): kept ``ROBOTSTXT_CACHE_TTL``."""
        expires = time.monotonic() + self.settings.cache_ttl
        lifetime = "ROBOTSTXT_CACHE_TTL"
        return SiteOutcome(Kind.UNAVAILABLE, None, detail, expires, tuple(chain), lifetime)

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
            now=time.time(),
            max_ttl=self.settings.cache_ttl,
            min_ttl=self.settings.cache_min_ttl,
        )
        expires = time.monotonic() + lifetime.seconds
        detail = f"HTTP {response.status}"
        return SiteOutcome(kind, robots, detail, expires, tuple(chain), lifetime.source)

    async def _parsed(
        self, response: Response, request: Request | None, chain: Chain
    ) -> SiteOutcome:
        body, cut = self._decoded_body(response)
        robots = await self.parse(body)
        if robots.truncated or cut:
            self.stats.inc_value("robotstxt/truncated")
            logger.info(
                "robots.txt larger than ROBOTSTXT_MAX_SIZE (%d bytes), the rest ignored: %s",
                self.settings.max_size,
                response.url,
            )
        await send_robots_parsed(
            self.crawler, RFC9309RobotParser.from_robots(robots), request or response.request
        )
        return self._answered(Kind.PARSED, robots, response, chain)

    def _decoded_body(self, response: Response) -> tuple[bytes, bool]:
        """The body to parse, decoded if compressed, and whether the size limit cut it.

        Decoding stops after ``ROBOTSTXT_MAX_SIZE`` + 1 bytes, so a small
        compressed body that decodes to gigabytes costs no more than a plain
        one; the parser then treats it as any body over the limit (RFC 9309
        2.5). A stream cut by the download limit is cut by the size limit too;
        a corrupt one keeps the lines decoded before the fault (a WARNING,
        ``robotstxt/encoding_broken``); a body that is not encoded as its
        ``Content-Encoding`` says at all is parsed as it is (a WARNING,
        ``robotstxt/encoding_mislabelled``).
        """
        meta = response.request.meta if response.request is not None else {}
        encodings = meta.get(_META_ENCODING)
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
        if decoded.broken and not decoded.body:
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
            logger.warning(
                "robots.txt compressed data cut or corrupt, the lines before the fault used: %s",
                response.url,
            )
            return _cut_at_last_line(decoded.body), False
        return decoded.body, False

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
                    return done.value
                if time.perf_counter() > slice_ends:
                    await _reactor_turn()
                    slice_ends = time.perf_counter() + PARSE_SLICE_SECONDS
        finally:
            self._parse_lock.release()

    # -- robots.txt downloads on top of CONCURRENT_REQUESTS ------------------------

    def _count(self, request: Request) -> None:
        """While a robots.txt request is in Scrapy's downloader, it does not take
        one of the pages' ``CONCURRENT_REQUESTS``: the downloader's total
        concurrency is one higher.

        ``engine.download_async`` counts it in ``downloader.active`` (never held
        back by ``CONCURRENT_REQUESTS``, but counted in it), so the engine would
        take that many fewer pages while robots.txt files download. The limit is
        raised just before the request enters ``active`` (and again for a retry of
        it, when it reaches the downloader) and lowered as it leaves the
        downloader (``request_left_downloader``, while still in ``active``): the
        pages in flight never exceed ``CONCURRENT_REQUESTS``, whatever the
        parse, the redirects or the retries of robots.txt files do meanwhile;
        ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` bounds the robots.txt downloads.
        """
        if request not in self._counted and add_to_total_concurrency(self.crawler, 1):
            self._counted.add(request)

    def _uncount(self, request: Request) -> None:
        if request in self._counted:
            self._counted.discard(request)
            add_to_total_concurrency(self.crawler, -1)

    def _on_reached_downloader(self, request: Request) -> None:
        if _META_SIZE_LIMIT in request.meta:  # a robots.txt request (a retry of one)
            self._count(request)

    def _on_left_downloader(self, request: Request) -> None:
        self._uncount(request)

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

    def _on_response_downloaded(self, response: Response, request: Request) -> None:
        """Before the downloader middlewares see a robots.txt response.

        The ``Content-Encoding`` is taken off, so that Scrapy's compression
        middleware (which decodes without limit when ``download_maxsize`` is
        0) leaves the body alone; :meth:`_decoded_body` decodes it within
        ``ROBOTSTXT_MAX_SIZE``. A 429 / 503 with ``Retry-After`` is not
        retried by Scrapy's RetryMiddleware, which would ask again at once:
        the next attempt waits as long as the site asked.
        """
        if _META_SIZE_LIMIT not in request.meta:
            return
        encodings = response.headers.getlist(b"Content-Encoding")
        if encodings:
            del response.headers[b"Content-Encoding"]
            request.meta[_META_ENCODING] = split_encodings(encodings)
        if (
            response.status in RETRY_AFTER_STATUSES
            and retry_after_seconds(response.headers.get(b"Retry-After")) is not None
        ):
            request.meta["dont_retry"] = True


async def _reactor_turn() -> None:
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, 0, lambda: None))


async def send_robots_parsed(
    crawler: Crawler, parser: RFC9309RobotParser, request: Request | None
) -> None:
    """Send Scrapy's ``robots_parsed`` signal for a robots.txt parsed for ``request``."""
    await _compat.send_catch_log_async(
        crawler, _compat.ROBOTS_PARSED, robotparser=parser, request=request
    )

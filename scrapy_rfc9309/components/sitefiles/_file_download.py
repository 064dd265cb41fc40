"""One download loop for any per-site file (robots.txt, tdmrep.json): request, redirects, failures.

:func:`download_file` builds the request (:func:`~._site_files.file_request`),
follows up to 5 redirects itself (RFC 9309 2.3.1.2), only to well-formed
``http`` / ``https`` URLs without credentials (:func:`unfollowable`), and
classifies what ended the download by exception class: a download failure
(:func:`is_download_failure`: the network, the server, RFC 9309 2.3.1.4), a
URL this crawler cannot download (:func:`is_not_downloadable`: the
crawler's side), a request dropped by a downloader middleware, a file over
Scrapy's ``download_maxsize``, a download past its time bound
(:func:`download_within`, whatever the download handler does with
``download_timeout``). Anything else (a bug, an incompatible
component) is raised: never passed off as the site's answer. The result is
plain (:class:`FileDownload`); each file's reader says what it means
(:class:`~._fetcher.RobotsTxtFetcher` for robots.txt, RFC 9309 2.3.1.x;
:class:`~._tdmrep_fetcher.TdmRepFetcher` for tdmrep.json).
"""

from __future__ import annotations

import asyncio
import email.utils
import enum
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from scrapy.exceptions import IgnoreRequest, StopDownload
from w3lib.url import safe_url_string

from .. import _compat
from .._clock import Clock
from ._site_files import file_request

if TYPE_CHECKING:
    import logging

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

__all__ = [
    "FOLLOWED_SCHEMES",
    "MAX_REDIRECTS",
    "RETRY_AFTER_STATUSES",
    "DownloadTimedOut",
    "Ending",
    "FileDownload",
    "dotted_name",
    "download_file",
    "download_within",
    "is_download_failure",
    "is_not_downloadable",
    "retry_after_seconds",
    "shown_target",
    "size_cancelled",
    "unfollowable",
]

#: RFC 9309 2.3.1.2: follow at least five consecutive redirects.
MAX_REDIRECTS = 5
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
    "twisted.protocols.ftp",  # Scrapy's FTP download handler: the server failing
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
    }
)
#: Scrapy's exceptions for a URL this crawler cannot download at all: no download
#: handler for its scheme (``NotSupported``; ``UnsupportedURLSchemeError``, Scrapy
#: 2.14+, from a handler given a scheme it does not serve). The crawler's side,
#: not the site's: never "unreachable".
_SCRAPY_NOT_DOWNLOADABLE = frozenset({"NotSupported", "UnsupportedURLSchemeError"})
#: Seconds past a download's bound before :func:`download_within` cancels it:
#: Scrapy's own time-out (HTTP) comes first and is reported as such; the timer is
#: for download handlers that ignore ``download_timeout`` (FTP).
TIMEOUT_MARGIN = 1.0
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


def is_not_downloadable(exc: BaseException) -> bool:
    """Whether ``exc`` says this crawler cannot download the URL at all (no download
    handler for its scheme): a failure on the crawler's side, not the site's
    answer, so not a network failure (RFC 9309 2.3.1.4 speaks of the server)."""
    return any(
        kind.__module__ == "scrapy.exceptions" and kind.__name__ in _SCRAPY_NOT_DOWNLOADABLE
        for kind in type(exc).__mro__
    )


def size_cancelled(exc: BaseException) -> bool:
    """Whether Scrapy cancelled the download for going over ``download_maxsize``:
    ``DownloadCancelledError`` (Scrapy 2.14+) or Twisted's ``CancelledError``
    (which a cancel at close raises too: the caller tells them apart)."""
    from twisted.internet.defer import CancelledError

    return isinstance(exc, CancelledError) or any(
        kind.__module__ == "scrapy.exceptions" and kind.__name__ == "DownloadCancelledError"
        for kind in type(exc).__mro__
    )


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
    """Why a redirect target of a per-site file is not followed; ``None`` if it is.

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
    return url if len(url) <= _TARGET_SHOWN else url[:_TARGET_SHOWN] + "..."


def dotted_name(exc: BaseException) -> str:
    """``package.module.Class`` of an exception, for logs."""
    kind = type(exc)
    return f"{kind.__module__}.{kind.__qualname__}"


def exception_key(exc: BaseException) -> str:
    """The ``{exception class}`` of a ``.../exception_count/...`` stat, as
    Scrapy's own ``RobotsTxtMiddleware`` writes it (``<class
    'scrapy.exceptions.DownloadTimeoutError'>``), so that dashboards keyed on
    Scrapy's stats keep working. Our own time bound on a download
    (:class:`DownloadTimedOut`) counts as the timeout Scrapy's downloader
    raises in this Scrapy (:func:`downloader_timeout`)."""
    if isinstance(exc, DownloadTimedOut):
        return str(downloader_timeout())
    return str(type(exc))


def downloader_timeout() -> type[Exception]:
    """The exception Scrapy's downloader raises when ``DOWNLOAD_TIMEOUT``
    passes: ``scrapy.exceptions.DownloadTimeoutError`` (Scrapy 2.14+), else
    Twisted's ``TimeoutError``."""
    import scrapy.exceptions
    from twisted.internet.error import TimeoutError as TwistedTimeout

    found: type[Exception] = getattr(scrapy.exceptions, "DownloadTimeoutError", TwistedTimeout)
    return found


class Ending(enum.Enum):
    """What ended a file's download (see :class:`FileDownload`)."""

    #: A final answer (any status but 3xx): ``response``.
    ANSWERED = "answered"
    #: A 3xx without ``Location``: ``response``.
    NO_LOCATION = "no location"
    #: A redirect past :data:`MAX_REDIRECTS`: ``response`` (the last redirect).
    TOO_MANY_REDIRECTS = "too many redirects"
    #: A redirect not followed (:func:`unfollowable`): ``response``, ``target``, ``refused``.
    REDIRECT_REFUSED = "redirect refused"
    #: Scrapy cancelled it over ``download_maxsize``: ``error``.
    TOO_LARGE = "too large"
    #: A downloader middleware dropped it (``IgnoreRequest``): ``error``.
    DROPPED = "dropped"
    #: This crawler cannot download the URL (:func:`is_not_downloadable`): ``error``.
    NOT_DOWNLOADABLE = "not downloadable"
    #: The network or the server failed (:func:`is_download_failure`): ``error``.
    FAILED = "failed"


#: The URLs requested for one file, first to last, each with its HTTP status
#: (``None``: no response).
Chain = tuple[tuple[str, "int | None"], ...]


@dataclass(frozen=True, slots=True)
class FileDownload:
    """What one file's download came to (:func:`download_file`)."""

    ending: Ending
    chain: Chain
    #: the last response (every ending but a failure)
    response: Response | None = None
    #: the exception that ended it (a failure)
    error: Exception | None = None
    #: a refused redirect's target, and why it was refused
    target: str = ""
    refused: str = ""

    @property
    def cut(self) -> bool:
        """Whether the size limit cut the file: cancelled by Scrapy, or stopped by
        the caller's ``bytes_received`` handler (``download_stopped``)."""
        if self.ending is Ending.TOO_LARGE:
            return True
        return self.response is not None and "download_stopped" in self.response.flags

    @property
    def retry_after(self) -> float | None:
        """Seconds the final 429 / 503 asked to wait (``Retry-After``), unbounded;
        ``None`` when it asked nothing (RFC 9110 10.2.3)."""
        response = self.response
        if self.ending is not Ending.ANSWERED or response is None:
            return None
        if response.status not in RETRY_AFTER_STATUSES:
            return None
        return retry_after_seconds(response.headers.get(b"Retry-After"))


class DownloadTimedOut(TimeoutError):
    """A download went past its time bound and was cancelled (:func:`download_within`):
    the server did not answer in time (RFC 9309 2.3.1.4: unreachable)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:g} s")
        self.seconds = seconds


def _nothing(request: Request) -> None:
    pass


async def download_within(
    crawler: Crawler,
    request: Request,
    timeout: float,
    entering: Callable[[Request], None] = _nothing,
    clock: Clock | None = None,
) -> Response:
    """Download ``request`` through the crawl's engine, given up after ``timeout``
    seconds (plus :data:`TIMEOUT_MARGIN`) whatever the download handler does:
    Scrapy's FTP handler ignores ``download_timeout``, so a server that accepts
    and never answers would hold it until the server drops the connection.
    Raises :class:`DownloadTimedOut` then; ``timeout`` 0: no bound of ours.
    ``entering`` is told of the request in the same step as it goes to the
    engine (no other request can start in between). ``clock``: the crawl's
    (its timer gives up the download); ``None``: the installed reactor's."""
    if timeout <= 0:
        entering(request)
        return await _compat.download(crawler, request)
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet.defer import CancelledError

    timers = clock or Clock()

    async def enter() -> Response:
        entering(request)
        return await _compat.download(crawler, request)

    download: Any = deferred_from_coro(enter())
    expired: list[bool] = []

    def expire() -> None:
        expired.append(True)
        download.cancel()

    timer = timers.call_later(timeout + TIMEOUT_MARGIN, expire)
    try:
        response: Response = await maybe_deferred_to_future(download)
        return response
    except (CancelledError, asyncio.CancelledError):
        if expired:
            raise DownloadTimedOut(timeout) from None
        raise
    finally:
        if timer.active():
            timer.cancel()


def _never() -> bool:
    return False


async def download_file(
    crawler: Crawler,
    url: str,
    slot: str,
    *,
    name: str,
    logger: logging.Logger,
    stats_prefix: str,
    max_size: int,
    retry: bool,
    timeout: float,
    meta: Mapping[str, Any] | None = None,
    headers: Mapping[bytes, bytes] | None = None,
    closing: Callable[[], bool] = _never,
    entering: Callable[[Request], None] = _nothing,
    leaving: Callable[[Request], None] = _nothing,
    clock: Clock | None = None,
) -> FileDownload:
    """Download the file ``name`` at ``url`` in download slot ``slot``, following
    redirects (RFC 9309 2.3.1.2); every response counted in
    ``{stats_prefix}/response_status_count/{status}``.

    ``max_size``, ``retry``, ``meta``, ``headers``: the request's, as
    :func:`~._site_files.file_request` takes them. ``timeout``: seconds each
    request may take (:func:`download_within`). ``closing``: whether the
    caller is cancelling its downloads (a Twisted ``CancelledError`` is then
    the close, raised, not a file over ``download_maxsize``). ``entering`` and
    ``leaving``: told of each request (a redirect's too) as it goes to Scrapy's
    downloader and as its download ends, whatever the end. ``clock``: the
    crawl's (its timers bound each request). Never raises for what the server
    or the network does; anything else propagates, and so does cancellation.
    """
    assert crawler.stats is not None
    stats = crawler.stats
    chain: list[tuple[str, int | None]] = []
    response: Response | None = None
    for hop in range(MAX_REDIRECTS + 1):
        request = file_request(
            url, slot, max_size=max_size, retry=retry, meta=meta, headers=headers
        )
        try:
            response = await download_within(crawler, request, timeout, entering, clock)
        except IgnoreRequest as exc:
            chain.append((url, None))
            return FileDownload(Ending.DROPPED, tuple(chain), error=exc)
        except Exception as exc:
            if is_not_downloadable(exc):  # the crawler's side; its pages fail likewise
                chain.append((url, None))
                return FileDownload(Ending.NOT_DOWNLOADABLE, tuple(chain), error=exc)
            if isinstance(exc, DownloadTimedOut):  # the server's silence, even at close
                chain.append((url, None))
                return FileDownload(Ending.FAILED, tuple(chain), error=exc)
            if closing():
                raise
            if max_size and size_cancelled(exc):
                chain.append((url, None))
                return FileDownload(Ending.TOO_LARGE, tuple(chain), error=exc)
            if not is_download_failure(exc):
                raise
            chain.append((url, None))
            return FileDownload(Ending.FAILED, tuple(chain), error=exc)
        finally:
            leaving(request)
        status = response.status
        chain.append((url, status))
        stats.inc_value(f"{stats_prefix}/response_status_count/{status}")
        if not 300 <= status < 400:
            return FileDownload(Ending.ANSWERED, tuple(chain), response)
        location = response.headers.get(b"Location")
        if not location:
            return FileDownload(Ending.NO_LOCATION, tuple(chain), response)
        if hop == MAX_REDIRECTS:
            break
        raw_target = location.decode("latin-1")
        try:
            url = urljoin(response.url, safe_url_string(raw_target))
        except ValueError:  # "http://[bad/robots.txt": the site's answer, not a bug
            url = raw_target
        refused = unfollowable(url)
        if refused is not None:
            return FileDownload(
                Ending.REDIRECT_REFUSED, tuple(chain), response, target=url, refused=refused
            )
        logger.debug("%s redirected (%d) to %s", name, status, url)
    return FileDownload(Ending.TOO_MANY_REDIRECTS, tuple(chain), response)

"""robots.txt requests inside Scrapy's downloader, watched through its signals.

While a robots.txt request, or a tdmrep.json one, is in the downloader it is
counted on top of ``CONCURRENT_REQUESTS`` (the pages in flight keep their
number). A robots.txt request's download
is stopped at ``ROBOTSTXT_MAX_SIZE`` (RFC 9309 2.5), its ``Content-Encoding``
is set aside for the fetcher to decode within that limit, and a 429 / 503
with ``Retry-After`` is not retried at once by Scrapy's RetryMiddleware.
The signal handlers are connected only while a robots.txt download is in
flight. Scrapy glue; what a download means is the fetcher's
(:class:`~._fetcher.RobotsTxtFetcher`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import StopDownload
from scrapy.http import Request, Response

from .._engine import add_to_total_concurrency, downloader_of
from .._per_crawler import kept_on
from ._decode import split_encodings
from ._file_download import RETRY_AFTER_STATUSES, retry_after_seconds

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["META_ENCODING", "META_SIZE_LIMIT", "RobotsTxtDownloaderHooks", "downloader_hooks"]

#: ``request.meta`` keys of a robots.txt request (docs/reference/meta-keys.md):
#: the size limit, the bytes received so far, and the body's encodings
META_SIZE_LIMIT = "_robotstxt_max_size"
META_RECEIVED = "_robotstxt_received"
META_ENCODING = "_robotstxt_content_encoding"
#: The crawler's attribute keeping its :class:`RobotsTxtDownloaderHooks`.
_ATTRIBUTE = "_robotstxt_downloader_hooks"


def downloader_hooks(crawler: Crawler) -> RobotsTxtDownloaderHooks:
    """The crawler's one :class:`RobotsTxtDownloaderHooks`, shared by its
    robots.txt and tdmrep.json downloads (one count of the limit raised)."""
    return kept_on(crawler, _ATTRIBUTE, lambda: RobotsTxtDownloaderHooks(crawler))


class RobotsTxtDownloaderHooks:
    """The downloader signal handlers of one crawler's robots.txt requests."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        #: robots.txt requests counted on top of the downloader's total concurrency
        self._counted: set[Request] = set()
        #: robots.txt downloads in flight: the download signal handlers are
        #: connected while there is one (every page's download sends them)
        self._downloading = 0
        self._handlers = (
            (self._on_reached_downloader, signals.request_reached_downloader),
            (self._on_left_downloader, signals.request_left_downloader),
            (self._on_headers_received, signals.headers_received),
            (self._on_bytes_received, signals.bytes_received),
            (self._on_response_downloaded, signals.response_downloaded),
        )

    def listen(self, delta: int) -> None:
        """Count a robots.txt or tdmrep.json download in (1) or out (-1): the download signal
        handlers are connected as the first starts and disconnected as the
        last ends, so pages downloaded meanwhile only cost their dispatch."""
        self._downloading += delta
        if delta < 0:
            self._uncount_gone()
        if self._downloading == (1 if delta > 0 else 0):
            change = self.crawler.signals.connect if delta > 0 else self.crawler.signals.disconnect
            for handler, signal in self._handlers:
                change(handler, signal=signal)

    def count(self, request: Request) -> None:
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

    def uncount(self, request: Request) -> None:
        if request in self._counted:
            self._counted.discard(request)
            add_to_total_concurrency(self.crawler, -1)

    def _uncount_gone(self) -> None:
        """Uncount the requests no longer in the downloader's ``active``: a
        download cancelled (``ROBOTSTXT_DOWNLOAD_TIMEOUT``) while it waited in its
        slot's queue (a ``DOWNLOAD_DELAY`` before a retry) never reaches
        ``request_left_downloader``, and would keep the limit one higher, so
        that one page more than ``CONCURRENT_REQUESTS`` could be in flight."""
        if not self._counted:
            return
        active = getattr(downloader_of(self.crawler), "active", None)
        if not isinstance(active, set):
            return
        for request in [counted for counted in self._counted if counted not in active]:
            self.uncount(request)

    def _on_reached_downloader(self, request: Request) -> None:
        if META_SIZE_LIMIT in request.meta:  # a robots.txt request (a retry of one)
            self.count(request)

    def _on_left_downloader(self, request: Request) -> None:
        self.uncount(request)

    def _on_headers_received(self, request: Request) -> None:
        if META_SIZE_LIMIT in request.meta:
            request.meta[META_RECEIVED] = 0

    def _on_bytes_received(self, data: bytes, request: Request) -> None:
        limit = request.meta.get(META_SIZE_LIMIT)
        if limit is None:
            return
        received = request.meta.get(META_RECEIVED, 0) + len(data)
        request.meta[META_RECEIVED] = received
        if received > limit:
            raise StopDownload(fail=False)

    def _on_response_downloaded(self, response: Response, request: Request) -> None:
        """Before the downloader middlewares see a robots.txt response.

        The ``Content-Encoding`` is taken off, so that Scrapy's compression
        middleware (which decodes without limit when ``download_maxsize`` is
        0) leaves the body alone; the fetcher decodes it within
        ``ROBOTSTXT_MAX_SIZE``. A 429 / 503 with ``Retry-After`` is not
        retried by Scrapy's RetryMiddleware, which would ask again at once:
        the next attempt waits as long as the site asked.
        """
        if META_SIZE_LIMIT not in request.meta:
            return
        encodings = response.headers.getlist(b"Content-Encoding")
        if encodings:
            del response.headers[b"Content-Encoding"]
            request.meta[META_ENCODING] = split_encodings(encodings)
        if (
            response.status in RETRY_AFTER_STATUSES
            and retry_after_seconds(response.headers.get(b"Retry-After")) is not None
        ):
            request.meta["dont_retry"] = True

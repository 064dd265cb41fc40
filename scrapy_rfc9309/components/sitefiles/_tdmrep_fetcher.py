"""``TdmRepFetcher``: download and read one site's ``/.well-known/tdmrep.json``, as robots.txt is.

The download is the loop every per-site file shares
(:func:`~._file_download.download_file`: redirects followed up to 5 hops and
only to well-formed http(s) URLs, RFC 9309 2.3.1.2); Scrapy neither
redirects nor retries the request, and stops it at ``ROBOTSTXT_MAX_SIZE``
(``download_maxsize``). This module says what the result means for
tdmrep.json (W3C TDMRep community group report): its rules and how long
they are kept. Every answer without rules states nothing:

* a 2xx is read (:func:`~..parser._tdmrep.parse_tdmrep`) and kept as long as
  its ``Cache-Control`` / ``Expires`` say, within ``ROBOTSTXT_CACHE_MIN_TTL``
  and ``ROBOTSTXT_CACHE_TTL``; so is any other answer (a 4xx, a redirect not
  followed);
* a 429 / 5xx, a network error, a file over the size limit: nothing stated
  until ``ROBOTSTXT_UNREACHABLE_TTL`` (or the ``Retry-After`` of a 429 / 503,
  bounded by ``ROBOTSTXT_RETRY_AFTER_MAX``) has passed, as for robots.txt
  (RFC 9309 2.3.1.4);
* a redirect refused, a URL this crawler cannot download: nothing stated for
  ``ROBOTSTXT_CACHE_TTL``.

Anything else (a bug, an incompatible component) is raised to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ...parser._tdmrep import EMPTY_TDMREP, MAX_RULES, TDMREP_PATH, TdmRep, parse_tdmrep
from ...sites._lifetime import headers_lifetime
from ...sites._outcome import Kind
from ...sites._records import RETRY_AFTER_MIN
from ...sites._store import FetchRecord
from .._clock import Clock
from ._file_download import (
    MAX_REDIRECTS,
    Ending,
    FileDownload,
    dotted_name,
    download_file,
    exception_key,
    shown_target,
)
from ._robotstxt_downloader import downloader_hooks

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..settings._settings import RobotsTxtSettings

__all__ = ["TdmRepFetched", "TdmRepFetcher"]

logger = logging.getLogger("scrapy_rfc9309.usage")

#: Redirect chain of a download: (URL, status), ``None`` for no response.
_Chain = tuple[tuple[str, "int | None"], ...]


class TdmRepFetched(NamedTuple):
    """What one tdmrep.json fetch came to: its rules until ``expires`` (a
    monotonic time), and what a store keeps of it, as of a robots.txt fetch."""

    expires: float
    rules: TdmRep
    #: ``parsed`` (a 2xx, its body read), ``unavailable`` (another answer:
    #: nothing stated), ``unreachable`` (429, 5xx, a network error, too large);
    #: ``None``: not the site's answer (a URL this crawler cannot download), not kept
    kind: Kind | None = None
    #: what it came to (``HTTP 200, 2 rules``)
    detail: str = ""
    #: what set its lifetime (``Cache-Control: max-age=3600``), ``""``: a TTL setting
    lifetime: str = ""
    retry_after: bool = False
    #: the body read (a 2xx), as received up to ``ROBOTSTXT_MAX_SIZE``
    body: bytes | None = None
    chain: _Chain = ()

    def record(self, site: str, *, now: float, monotonic_now: float, max_size: int) -> FetchRecord:
        """The store's record of this fetch, made at wall-clock ``now`` (its expiry
        moved from the monotonic clock ``monotonic_now``) by a crawl whose
        ``ROBOTSTXT_MAX_SIZE`` is ``max_size``; the body's digest is the store's
        to make. Only a fetch with a ``kind`` is kept."""
        assert self.kind is not None
        return FetchRecord(
            site=site,
            fetched_at=now,
            chain=self.chain,
            kind=self.kind.value,
            detail=self.detail,
            lifetime=self.lifetime,
            expires_at=now + max(0.0, self.expires - monotonic_now),
            retry_after=self.retry_after,
            size=0 if self.body is None else len(self.body),
            sha256=None,
            status=self.chain[-1][1] if self.chain else None,
            truncated=False,  # a larger file is not read: unreachable, no body
            max_size=max_size,
        )


class TdmRepFetcher:
    """Downloads and reads tdmrep.json files for one crawler."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        clock: Clock,
        details: dict[str, str] | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        assert crawler.stats is not None
        self.stats = crawler.stats
        #: the crawl's time: tdmrep.json answers expire by it (tests move it on)
        self.clock = clock
        #: site -> what its last fetch came to (``HTTP 200, 2 rules``), when given
        #: (``scrapy robotstxt`` shows it; a crawl keeps none)
        self.details = details

    async def fetch(self, site: str, slot: str, closing: Callable[[], bool]) -> TdmRepFetched:
        """The site's rules, when they expire (a monotonic time), and what a store keeps."""
        self.stats.inc_value("robotstxt/tdmrep/request_count")
        # counted on top of CONCURRENT_REQUESTS only while in Scrapy's downloader,
        # as robots.txt is: the pages in flight keep their number
        hooks = downloader_hooks(self.crawler)
        hooks.listen(1)
        try:
            download = await download_file(
                self.crawler,
                site + TDMREP_PATH,
                slot,
                name="tdmrep.json",
                logger=logger,
                stats_prefix="robotstxt/tdmrep",
                max_size=self.settings.max_size,  # a larger file is not read: nothing stated
                retry=False,  # unreachable until ROBOTSTXT_UNREACHABLE_TTL
                timeout=self.settings.page_download_timeout,  # DOWNLOAD_TIMEOUT, as before
                closing=closing,
                entering=hooks.count,
                leaving=hooks.uncount,
                clock=self.clock,
            )
        finally:
            hooks.listen(-1)
        return self.read(site, download)

    def read(self, site: str, download: FileDownload) -> TdmRepFetched:
        """What a tdmrep.json download means: its rules, until when, and what a
        store keeps of it."""
        return self._read_download(site, download)._replace(chain=tuple(download.chain))

    def _read_download(self, site: str, download: FileDownload) -> TdmRepFetched:
        ending, error, url = download.ending, download.error, download.chain[-1][0]
        if error is not None:
            return self._failed(site, ending, error, url)
        response = download.response
        assert response is not None
        status = response.status
        if ending is Ending.NO_LOCATION:
            return self._nothing_stated(site, f"HTTP {status} without Location", response)
        if ending is Ending.TOO_MANY_REDIRECTS:
            return self._nothing_stated(site, f"more than {MAX_REDIRECTS} redirects", response)
        if ending is Ending.REDIRECT_REFUSED:
            return self._refuse_redirect(site, download.target, download.refused, status)
        if status == 429 or status >= 500:
            return self._unreachable_status(site, response, download.retry_after)
        if not 200 <= status < 300:
            return self._nothing_stated(site, f"HTTP {status}", response)
        return self._read(site, download.chain[0][0], response)

    def _failed(self, site: str, ending: Ending, error: Exception, url: str) -> TdmRepFetched:
        """No answer: dropped by a downloader middleware, not downloadable by this
        crawler, too large, or the network failed (RFC 9309 2.3.1.4)."""
        expires = self.clock.monotonic() + self.settings.unreachable_ttl

        def unreachable(detail: str) -> TdmRepFetched:
            self._detail(site, detail)
            return TdmRepFetched(expires, EMPTY_TDMREP, Kind.UNREACHABLE, detail)

        if ending is Ending.DROPPED:
            logger.debug("tdmrep.json request dropped: %s (%s)", url, error)
            return unreachable(f"not fetched: {error}; nothing stated")
        if ending is Ending.NOT_DOWNLOADABLE:  # the crawler's side; its pages fail likewise
            logger.debug("tdmrep.json not downloadable: %s (%s)", url, error)
            self._detail(site, f"not downloadable ({dotted_name(error)}); nothing stated")
            return TdmRepFetched(self.clock.monotonic() + self.settings.cache_ttl, EMPTY_TDMREP)
        self.stats.inc_value(f"robotstxt/tdmrep/exception_count/{exception_key(error)}")
        if ending is Ending.TOO_LARGE:
            # Scrapy cancels a download over download_maxsize (ROBOTSTXT_MAX_SIZE):
            # the file is too large to read, which states nothing either.
            why = f"larger than ROBOTSTXT_MAX_SIZE ({self.settings.max_size} bytes)"
            logger.info(
                "tdmrep.json %s, not read: %s; nothing stated for its site until "
                "ROBOTSTXT_UNREACHABLE_TTL has passed",
                why,
                url,
            )
            return unreachable(f"{why}: not read, nothing stated")
        logger.info(
            "tdmrep.json unreachable (%s): %s; nothing stated for its site until "
            "ROBOTSTXT_UNREACHABLE_TTL has passed",
            dotted_name(error),
            url,
        )
        return unreachable(f"unreachable ({dotted_name(error)}); nothing stated")

    def _lifetime(self, response: Response) -> tuple[float, str]:
        """When the answer expires (a monotonic time), and what set it."""
        lifetime = headers_lifetime(
            response.headers.getlist,
            now=self.clock.time(),
            max_ttl=self.settings.cache_ttl,
            min_ttl=self.settings.cache_min_ttl,
        )
        return self.clock.monotonic() + lifetime.seconds, lifetime.source

    def _nothing_stated(self, site: str, detail: str, response: Response) -> TdmRepFetched:
        """An answer without rules (a 4xx, a redirect not followed): kept as long as
        its cache directives say, like a robots.txt answer."""
        self._detail(site, f"{detail}: nothing stated")
        logger.debug("tdmrep.json (%s): %s, nothing stated", detail, response.url)
        expires, source = self._lifetime(response)
        return TdmRepFetched(
            expires, EMPTY_TDMREP, Kind.UNAVAILABLE, f"{detail}: nothing stated", source
        )

    def _refuse_redirect(self, site: str, target: str, why: str, status: int) -> TdmRepFetched:
        """A redirect to anything but a well-formed http(s) URL: not followed, as for
        robots.txt (RFC 9309 2.3.1.2); counted in ``robotstxt/tdmrep/redirect_refused``."""
        self.stats.inc_value("robotstxt/tdmrep/redirect_refused")
        logger.warning(
            "tdmrep.json redirect to %s refused (%s): only well-formed http and https "
            "redirects are followed; nothing stated for %s",
            shown_target(target),
            why,
            site,
        )
        detail = f"HTTP {status} to {why}, refused: nothing stated"
        self._detail(site, detail)
        expires = self.clock.monotonic() + self.settings.cache_ttl
        return TdmRepFetched(expires, EMPTY_TDMREP, Kind.UNAVAILABLE, detail, "ROBOTSTXT_CACHE_TTL")

    def _unreachable_status(
        self, site: str, response: Response, wait: float | None
    ) -> TdmRepFetched:
        """A 429 / 5xx: no preference until ``ROBOTSTXT_UNREACHABLE_TTL``, or the
        ``Retry-After`` of a 429 / 503 (``wait``, bounded), as for robots.txt (RFC
        9309 2.3.1.4)."""
        retry_after = wait is not None
        if wait is None:
            wait, until = self.settings.unreachable_ttl, "ROBOTSTXT_UNREACHABLE_TTL"
        else:
            wait = max(RETRY_AFTER_MIN, min(wait, self.settings.retry_after_max))
            until = f"its Retry-After ({round(wait):d} s)"
        logger.info(
            "tdmrep.json unreachable (HTTP %d): %s; nothing stated for its site until %s "
            "has passed",
            response.status,
            response.url,
            until,
        )
        detail = f"HTTP {response.status}: unreachable, nothing stated"
        self._detail(site, detail)
        expires = self.clock.monotonic() + wait
        return TdmRepFetched(
            expires, EMPTY_TDMREP, Kind.UNREACHABLE, detail, retry_after=retry_after
        )

    def _read(self, site: str, first: str, response: Response) -> TdmRepFetched:
        rules = parse_tdmrep(response.body)
        count = len(rules.rules)
        detail = f"HTTP {response.status}, {count} rule{'' if count == 1 else 's'}"
        if response.url != first:
            detail += f" (redirected to {response.url})"
        if rules.error and _is_html(response):
            # a soft 404 (a site's HTML page for any path): as a 404, nothing stated
            detail = f"HTTP {response.status}: an HTML page, not a tdmrep.json, nothing stated"
            logger.debug(
                "tdmrep.json is an HTML page (a soft 404): %s; nothing stated", response.url
            )
        elif rules.error:
            detail = f"HTTP {response.status}: could not be read ({rules.error}), nothing stated"
            logger.warning(
                "tdmrep.json could not be read (%s): %s; nothing stated for its site",
                rules.error,
                response.url,
            )
        if rules.past_limit:
            detail += f"; {rules.past_limit} past the first {MAX_RULES:,} not read"
            logger.info(
                "tdmrep.json has %d rules past the first %d, not read: %s",
                rules.past_limit,
                MAX_RULES,
                response.url,
            )
        if rules.ignored:
            detail += f"; {rules.ignored} stating nothing"
            logger.info(
                "tdmrep.json has %d entries that state nothing (no string location: not a "
                "rule; or a tdm-reservation neither 0 nor 1: the rule matches, unset): %s",
                rules.ignored,
                response.url,
            )
        self._detail(site, detail)
        logger.debug(
            "tdmrep.json (HTTP %d): %s, %d rule%s",
            response.status,
            response.url,
            count,
            "" if count == 1 else "s",
        )
        expires, source = self._lifetime(response)
        # the body as received (at most ROBOTSTXT_MAX_SIZE: a larger one is not
        # read), so that a stored copy gives these rules again
        return TdmRepFetched(expires, rules, Kind.PARSED, detail, source, body=response.body)

    def _detail(self, site: str, text: str) -> None:
        if self.details is not None:
            self.details[site] = text


def _is_html(response: Response) -> bool:
    """Whether ``response`` is an HTML page (its ``Content-Type``, or a body that
    opens with ``<``): what many sites answer for any missing path."""
    content_type = response.headers.get(b"Content-Type") or b""
    if b"html" in content_type.lower():
        return True
    return response.body.lstrip()[:1] == b"<"

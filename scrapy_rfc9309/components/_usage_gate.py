"""Declared purposes (``ROBOTSTXT_PURPOSES``) against a site's usage preferences.

Thin Scrapy glue over :mod:`._usage` and :mod:`._tdmrep`, used by the
robots.txt middleware only when purposes are declared: after a request is
allowed by robots.txt, its preferences (the robots.txt ``Content-Usage`` /
``Content-Signal`` lines of our groups, and the site's
``/.well-known/tdmrep.json`` when a declared purpose is text and data mining)
go to ``request.meta["usage"]``; a request whose preferences refuse a declared
purpose is dropped before download, like a Disallow.

tdmrep.json is fetched once per site (single flight: later requests wait on
the same download, each on its own Deferred), kept as long as a robots.txt
answer (``Cache-Control`` / ``Expires`` within ``ROBOTSTXT_CACHE_MIN_TTL`` and
``ROBOTSTXT_CACHE_TTL``), and tried again after ``ROBOTSTXT_UNREACHABLE_TTL``
when the server could not answer (meanwhile: no TDMRep preference).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin
from weakref import WeakSet

from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred
from w3lib.url import safe_url_string

from ..parser._tdmrep import EMPTY_TDMREP, MAX_RULES, TDMREP_PATH, TdmRep, parse_tdmrep
from ..parser._usage import Preference, needs_tdmrep
from ..parser._usage_decision import decide_usage, site_sources
from ..sites._lifetime import headers_lifetime
from ..sites._sitetable import SiteState
from . import _compat
from ._engine import file_slot, robots_download
from ._fetcher import (
    MAX_REDIRECTS,
    RETRY_AFTER_MIN,
    RETRY_AFTER_STATUSES,
    dotted_name,
    is_download_failure,
    is_not_downloadable,
    retry_after_seconds,
    shown_target,
    unfollowable,
)
from ._settings import page_signals_read, purposes_warning
from ._site_files import drop_at_close, file_request

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..sites._outcome import SiteOutcome
    from ._report import CrawlReport
    from ._settings import RobotsTxtSettings

__all__ = ["USAGE_META_KEY", "TdmRepSites", "UsageGate", "warn_if_purposes_ignored"]

logger = logging.getLogger("scrapy_rfc9309.usage")

#: What a site's tdmrep.json fetch came to when it failed for a reason of ours (an
#: internal error): its requests are dropped, never let through as "nothing stated".
FAILED_TDMREP = TdmRep()

#: Sites whose tdmrep.json findings are remembered as told (the oldest forgotten).
MAX_FINDINGS_TOLD = 10_000

#: ``request.meta`` / ``response.meta`` key of the :class:`~._usage.Usage` that applies.
USAGE_META_KEY = "usage"
#: ``request.meta`` key of the :class:`~._usage_decision.UsageSources` it was decided from.
USAGE_SOURCES_META_KEY = "_robotstxt_usage_sources"


class TdmRepSites:
    """Each site's tdmrep.json: fetched once (single flight), kept for its lifetime.

    A fetch runs on its own (not inside one request's ``process_request``), so
    it can start ahead of need (:meth:`prefetch`, from the scheduler queue)
    and be cancelled at close (:meth:`abandon_all`). At most
    ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` run at once; like robots.txt, they do
    not count against the pages' ``CONCURRENT_REQUESTS``.
    """

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        on_settled: Callable[[str], None] | None = None,
        on_start: Callable[[], None] | None = None,
        details: dict[str, str] | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = crawler.stats
        #: site -> what its last fetch came to (``HTTP 200, 2 rules``), when given
        #: (``scrapy robotstxt`` shows it; a crawl keeps none)
        self.details = details
        self._settled: OrderedDict[str, tuple[float, TdmRep]] = OrderedDict()
        #: site -> the requests waiting for its fetch (``None`` handed back: closing)
        self._pending: dict[str, list[Deferred[TdmRep | None]]] = {}
        #: site -> its download in flight (cancelled at close)
        self._downloads: dict[str, Deferred[None]] = {}
        #: sites whose fetch waits for one of ROBOTSTXT_CONCURRENT_DOWNLOADS
        self._backlog: deque[str] = deque()
        #: told when a site's tdmrep.json is settled (the scheduler queue releases its requests)
        self._on_settled = on_settled
        #: told when a fetch starts (the middleware watches for a closing engine)
        self._on_start = on_start
        self._closing = False
        #: site -> the internal error of its last fetch, while FAILED_TDMREP is in force
        self.failures: dict[str, str] = {}

    def fresh(self, site: str) -> TdmRep | None:
        """The site's rules if known and fresh, else ``None``."""
        settled = self._settled.get(site)
        if settled is not None and settled[0] > time.monotonic():
            self._settled.move_to_end(site)
            return settled[1]
        return None

    def state(self, site: str) -> SiteState:
        """``READY`` (fresh), ``PENDING`` (a fetch in flight) or ``UNKNOWN``; O(1)."""
        if site in self._pending:
            return SiteState.PENDING
        if self.fresh(site) is not None:
            return SiteState.READY
        return SiteState.UNKNOWN

    def has_pending(self) -> bool:
        return bool(self._pending)

    def prefetch(self, site: str) -> None:
        """Start the site's fetch ahead of its requests, unless fresh or in flight."""
        if site not in self._pending and self.fresh(site) is None:
            self._start(site)

    async def get(self, site: str) -> TdmRep | None:
        """The site's rules; downloads ``/.well-known/tdmrep.json`` once per lifetime.
        ``None``: the spider closed before it was fetched."""
        rules = self.fresh(site)
        if rules is not None:
            return rules
        waiter: Deferred[TdmRep | None] = Deferred()
        starts = site not in self._pending
        # waiting before the fetch starts: a fetch that fails at once (an error raised
        # by a downloader middleware, on older Scrapy) settles before _start returns
        self._pending.setdefault(site, []).append(waiter)
        if starts:
            self._start(site)
        return await maybe_deferred_to_future(waiter)

    def _start(self, site: str) -> None:
        self._pending.setdefault(site, [])
        if self._on_start is not None:
            self._on_start()
        if len(self._downloads) >= self.settings.concurrent_downloads:
            self._backlog.append(site)
            return
        download = deferred_from_coro(self._run(site))
        if not download.called:
            self._downloads[site] = download

    def _download_done(self, site: str) -> None:
        self._downloads.pop(site, None)
        while self._backlog and len(self._downloads) < self.settings.concurrent_downloads:
            waiting = self._backlog.popleft()
            if waiting in self._pending and waiting not in self._downloads:
                download = deferred_from_coro(self._run(waiting))
                if not download.called:
                    self._downloads[waiting] = download

    async def _run(self, site: str) -> None:
        try:
            with (
                robots_download(self.crawler),
                file_slot(self.crawler, "tdmrep.json", site) as slot,
            ):
                expires, rules = await self._fetch(site, slot)
        except (CancelledError, asyncio.CancelledError):
            logger.info("tdmrep.json download cancelled at close: %s", site + TDMREP_PATH)
            self._download_done(site)
            for waiter in self._pending.pop(site, []):
                waiter.callback(None)
            return
        except Exception as exc:  # not an answer of the site: never pass it off as one
            self._download_done(site)
            expires, rules = self._internal_error(exc, site)
        else:
            self._download_done(site)
            self.failures.pop(site, None)
        if site not in self._pending:  # abandoned: the spider closed meanwhile
            return
        self._settled[site] = (expires, rules)
        self._settled.move_to_end(site)
        while len(self._settled) > self.settings.cache_max_sites:
            self._settled.popitem(last=False)
        for waiter in self._pending.pop(site, []):
            waiter.callback(rules)
        if self._on_settled is not None:
            self._on_settled(site)

    def _internal_error(self, exc: Exception, site: str) -> tuple[float, TdmRep]:
        """A failure that is not the site's answer (a bug, an incompatible component):
        logged at ERROR with its traceback, counted in ``robotstxt/internal_error``;
        the site's requests are dropped until ``ROBOTSTXT_UNREACHABLE_TTL`` has passed."""
        self.stats.inc_value("robotstxt/internal_error")
        self._detail(site, f"internal error: {dotted_name(exc)}: {exc}")
        logger.error(
            "Internal error while fetching %s%s; requests to its site are dropped "
            "(this is not the site's answer)",
            site,
            TDMREP_PATH,
            exc_info=exc,
            extra={"spider": self.crawler.spider},
        )
        self.failures[site] = f"{dotted_name(exc)}: {exc}"
        return time.monotonic() + self.settings.unreachable_ttl, FAILED_TDMREP

    def abandon_all(self) -> None:
        """The spider closes: cancel every download; its waiting requests are dropped."""
        self._closing = True
        pending, self._pending = self._pending, {}
        waiting = sum(len(waiters) for waiters in pending.values())
        if waiting:
            logger.info(
                "Spider closing: dropping %d requests that waited on %d tdmrep.json downloads",
                waiting,
                len(pending),
            )
        for waiters in pending.values():
            for waiter in waiters:
                waiter.callback(None)
        self._backlog.clear()
        downloads, self._downloads = self._downloads, {}
        for download in downloads.values():
            download.cancel()

    async def _fetch(self, site: str, slot: str) -> tuple[float, TdmRep]:
        """Download and read the site's tdmrep.json, as a robots.txt is fetched.

        Redirects are followed here, up to 5 hops and only to well-formed http(s)
        URLs (RFC 9309 2.3.1.2, as for robots.txt); Scrapy neither redirects nor
        retries the request: a 429 / 5xx or a network error is unreachable (no
        preference) until ``ROBOTSTXT_UNREACHABLE_TTL`` (or the ``Retry-After`` of
        a 429 / 503, bounded by ``ROBOTSTXT_RETRY_AFTER_MAX``) has passed.
        """
        url = site + TDMREP_PATH
        first = url
        self.stats.inc_value("robotstxt/tdmrep/request_count")
        for hop in range(MAX_REDIRECTS + 1):
            unreachable = time.monotonic() + self.settings.unreachable_ttl
            try:
                response = await _compat.download(self.crawler, self._request(url, slot))
            except IgnoreRequest as exc:
                logger.debug("tdmrep.json request dropped: %s (%s)", url, exc)
                self._detail(site, f"not fetched: {exc}; nothing stated")
                return unreachable, EMPTY_TDMREP
            except Exception as exc:
                if is_not_downloadable(exc):  # the crawler's side; its pages fail likewise
                    logger.debug("tdmrep.json not downloadable: %s (%s)", url, exc)
                    self._detail(site, f"not downloadable ({dotted_name(exc)}); nothing stated")
                    return time.monotonic() + self.settings.cache_ttl, EMPTY_TDMREP
                if self._closing or (not is_download_failure(exc) and not _size_cancelled(exc)):
                    raise
                self.stats.inc_value(f"robotstxt/tdmrep/exception_count/{dotted_name(exc)}")
                if _size_cancelled(exc):
                    # Scrapy cancels a download over download_maxsize (ROBOTSTXT_MAX_SIZE):
                    # the file is too large to read, which states nothing either.
                    why = f"larger than ROBOTSTXT_MAX_SIZE ({self.settings.max_size} bytes)"
                    logger.info(
                        "tdmrep.json %s, not read: %s; nothing stated for its site until "
                        "ROBOTSTXT_UNREACHABLE_TTL has passed",
                        why,
                        url,
                    )
                    self._detail(site, f"{why}: not read, nothing stated")
                    return unreachable, EMPTY_TDMREP
                logger.info(
                    "tdmrep.json unreachable (%s): %s; nothing stated for its site until "
                    "ROBOTSTXT_UNREACHABLE_TTL has passed",
                    dotted_name(exc),
                    url,
                )
                self._detail(site, f"unreachable ({dotted_name(exc)}); nothing stated")
                return unreachable, EMPTY_TDMREP
            status = response.status
            self.stats.inc_value(f"robotstxt/tdmrep/response_status_count/{status}")
            if 300 <= status < 400 and status != 304:
                location = response.headers.get(b"Location")
                if not location:
                    return self._nothing_stated(site, f"HTTP {status} without Location", response)
                if hop == MAX_REDIRECTS:
                    break
                raw_target = location.decode("latin-1")
                try:
                    url = urljoin(response.url, safe_url_string(raw_target))
                except ValueError:  # a malformed target: the site's answer, not a bug
                    url = raw_target
                refused = unfollowable(url)
                if refused is not None:
                    return self._refuse_redirect(site, url, refused, status, response)
                logger.debug("tdmrep.json redirected (%d) to %s", status, url)
                continue
            if status == 429 or status >= 500:
                return self._unreachable_status(site, response)
            if not 200 <= status < 300:
                return self._nothing_stated(site, f"HTTP {status}", response)
            return self._read(site, first, response)
        return self._nothing_stated(site, f"more than {MAX_REDIRECTS} redirects", response)

    def _request(self, url: str, slot: str) -> Request:
        return file_request(
            url,
            slot,
            max_size=self.settings.max_size,  # a larger file is not read: nothing stated
            retry=False,  # unreachable until ROBOTSTXT_UNREACHABLE_TTL
        )

    def _lifetime(self, response: Response) -> float:
        lifetime = headers_lifetime(
            response.headers.getlist,
            now=time.time(),
            max_ttl=self.settings.cache_ttl,
            min_ttl=self.settings.cache_min_ttl,
        )
        return time.monotonic() + lifetime.seconds

    def _nothing_stated(self, site: str, detail: str, response: Response) -> tuple[float, TdmRep]:
        """An answer without rules (a 4xx, a redirect not followed): kept as long as
        its cache directives say, like a robots.txt answer."""
        self._detail(site, f"{detail}: nothing stated")
        logger.debug("tdmrep.json (%s): %s, nothing stated", detail, response.url)
        return self._lifetime(response), EMPTY_TDMREP

    def _refuse_redirect(
        self, site: str, target: str, why: str, status: int, response: Response
    ) -> tuple[float, TdmRep]:
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
        self._detail(site, f"HTTP {status} to {why}, refused: nothing stated")
        return time.monotonic() + self.settings.cache_ttl, EMPTY_TDMREP

    def _unreachable_status(self, site: str, response: Response) -> tuple[float, TdmRep]:
        """A 429 / 5xx: no preference until ``ROBOTSTXT_UNREACHABLE_TTL``, or the
        ``Retry-After`` of a 429 / 503 (bounded), as for robots.txt (RFC 9309 2.3.1.4)."""
        wait = None
        if response.status in RETRY_AFTER_STATUSES:
            wait = retry_after_seconds(response.headers.get(b"Retry-After"))
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
        self._detail(site, f"HTTP {response.status}: unreachable, nothing stated")
        return time.monotonic() + wait, EMPTY_TDMREP

    def _read(self, site: str, first: str, response: Response) -> tuple[float, TdmRep]:
        rules = parse_tdmrep(response.body)
        count = len(rules.rules)
        detail = f"HTTP {response.status}, {count} rule{'' if count == 1 else 's'}"
        if response.url != first:
            detail += f" (redirected to {response.url})"
        if rules.error:
            detail = f"HTTP {response.status}: could not be read ({rules.error}), nothing stated"
            logger.info(
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
            detail += f"; {rules.ignored} not rules, ignored"
            logger.info(
                "tdmrep.json has %d entries that are not rules (no string location, or a "
                "tdm-reservation neither 0 nor 1), ignored: %s",
                rules.ignored,
                response.url,
            )
        self._detail(site, detail)
        logger.debug("tdmrep.json (HTTP %d): %s, %d rules", response.status, response.url, count)
        return self._lifetime(response), rules

    def _detail(self, site: str, text: str) -> None:
        if self.details is not None:
            self.details[site] = text


class UsageGate:
    """Drops requests whose site-wide preferences refuse a declared purpose."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        report: CrawlReport,
        on_settled: Callable[[str], None] | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> None:
        self.purposes = settings.purposes
        self.stats = crawler.stats
        self.crawler = crawler
        self._report = report
        self.tdmrep = (
            TdmRepSites(crawler, settings, on_settled, on_start)
            if needs_tdmrep(self.purposes)
            else None
        )
        #: the page's signals are read after download (ROBOTS_META_OBEY and the
        #: meta middleware on): a tdmrep.json reservation, which they supersede,
        #: is decided there
        self._page_decides = page_signals_read(crawler.settings)
        #: site -> the tdmrep.json whose findings were logged (once per fetch)
        self._findings_told: dict[str, TdmRep] = {}
        logger.info(
            "Declared purposes: %s (ROBOTSTXT_PURPOSES); requests whose usage preferences "
            "refuse them are dropped",
            ", ".join(self.purposes),
        )

    async def check(self, outcome: SiteOutcome, site: str, request: Request, token: str) -> None:
        """Set ``request.meta["usage"]``; raise ``IgnoreRequest`` if a purpose is refused."""
        rules: TdmRep | None = None
        if self.tdmrep is not None:
            rules = await self.tdmrep.get(site)
            if rules is None:
                url = site + TDMREP_PATH
                drop_at_close(self.crawler, self._report, logger, site, url, request)
            elif rules is FAILED_TDMREP:
                self._drop_internal_error(site, request)
            elif rules.findings and self._findings_told.get(site) is not rules:
                self._tell_findings(site, rules)
        sources = site_sources(outcome.robots, request.url, token, rules)
        decision = decide_usage(sources, self.purposes)
        request.meta[USAGE_META_KEY] = decision.usage
        request.meta[USAGE_SOURCES_META_KEY] = sources  # the page's signals join after download
        refusal = decision.refusal
        if refusal is None or self._page_may_lift(decision.refusals):
            return
        self.stats.inc_value("robotstxt/forbidden")
        self.stats.inc_value("robotstxt/forbidden/usage")
        self._report.decided(site, False)
        self._report.dropped_by_usage(site, refusal.describe())
        where = outcome.source if refusal.line is not None else site + TDMREP_PATH
        policy = f"; tdm-policy {refusal.policy}" if refusal.policy else ""
        if refusal.line is not None:
            reason = (
                f"Forbidden by usage preference, robots.txt line {refusal.line}: "
                f'"{refusal.rule}" refuses {refusal.category} ({where})'
            )
        else:
            reason = (
                f"Forbidden by usage preference: {refusal.rule} refuses {refusal.category} "
                f"({where}{policy})"
            )
        logger.debug("%s: %s", reason, request, extra={"spider": self.crawler.spider})
        raise IgnoreRequest(reason)

    def _page_may_lift(self, refusals: dict[str, Preference]) -> bool:
        """Whether every refusal is tdmrep.json's alone, which the page's own
        ``tdm-reservation`` header or meta supersede (TDMRep final report,
        processing priority): with page directives read (``ROBOTS_META_OBEY``),
        such a request is downloaded and the page decides (its items are dropped
        unless it lifts the reservation); a robots.txt refusal always drops."""
        return self._page_decides and all(
            refused.source == TDMREP_PATH for refused in refusals.values()
        )

    def _tell_findings(self, site: str, rules: TdmRep) -> None:
        """What a site's tdmrep.json states less than its writer meant (a
        ``tdm-reservation`` that is not the integer 0 or 1, an entry that is no
        rule), at INFO, once per fetch (each fetch gives a new :class:`TdmRep`)."""
        if len(self._findings_told) >= MAX_FINDINGS_TOLD:
            self._findings_told.pop(next(iter(self._findings_told)))
        self._findings_told[site] = rules
        logger.info(
            "tdmrep.json of %s: %s",
            site,
            "; ".join(rules.findings),
            extra={"spider": self.crawler.spider},
        )

    def _drop_internal_error(self, site: str, request: Request) -> None:
        assert self.tdmrep is not None
        self.stats.inc_value("robotstxt/forbidden")
        self.stats.inc_value("robotstxt/forbidden/internal_error")
        self._report.decided(site, False)
        error = self.tdmrep.failures.get(site, "see the log")
        reason = (
            f"Dropped: internal error while fetching {site}{TDMREP_PATH} ({error}); "
            "this is not the site's answer"
        )
        logger.debug("%s: %s", reason, request, extra={"spider": self.crawler.spider})
        raise IgnoreRequest(reason)


_WARNED: WeakSet[Any] = WeakSet()


def warn_if_purposes_ignored(crawler: Crawler, settings: RobotsTxtSettings) -> None:
    """Warn once per crawl when ``ROBOTSTXT_PURPOSES`` is set and nothing reads it.

    Called by both middlewares as they turn themselves off (either may be the
    one enabled), so the warning shows whichever is listed. With only
    ``ROBOTS_META_OBEY`` on, an INFO line says that only response headers and
    meta are read.
    """
    message = purposes_warning(settings)
    if message is not None and crawler not in _WARNED:
        _WARNED.add(crawler)
        logger.warning(message)
    elif settings.purposes and not settings.obey and crawler not in _WARNED:
        # ROBOTS_META_OBEY alone: robots.txt and tdmrep.json are never fetched
        _WARNED.add(crawler)
        logger.info(
            "Declared purposes: %s (ROBOTSTXT_PURPOSES), but ROBOTSTXT_OBEY is off: only "
            "response headers and meta (Content-Usage, tdm-reservation) are read, after "
            "download; robots.txt and tdmrep.json preferences are not",
            ", ".join(settings.purposes),
        )


def _size_cancelled(exc: BaseException) -> bool:
    """Whether Scrapy cancelled the download for going over ``download_maxsize``:
    ``DownloadCancelledError`` (Scrapy 2.14+) or Twisted's ``CancelledError``."""
    from twisted.internet.defer import CancelledError

    return isinstance(exc, CancelledError) or type(exc).__name__ == "DownloadCancelledError"

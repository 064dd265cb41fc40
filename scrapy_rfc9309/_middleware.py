"""``RobotsTxtMiddleware``: Scrapy obeys robots.txt as RFC 9309 section 2.3 says.

Thin glue: parsing and matching live in the pure modules; this module fetches
one robots.txt per site (scheme + host + port), holds that site's requests on
their own Deferreds until it is parsed, then lets each through or drops it
with ``IgnoreRequest`` naming the deciding line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import CancelledError, Deferred

from ._cache import SiteCache
from ._fetcher import RobotsTxtFetcher, dotted_name
from ._outcome import DISALLOW_ALL, Decision, Kind, SiteOutcome
from ._report import allowed_verdict, report_for
from ._settings import RFC_MIN_SIZE, RobotsTxtSettings, SettingError, identity_warning
from ._site import robots_url, site_of
from ._usage_gate import UsageGate

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger("scrapy_rfc9309.middleware")

BUILTIN_MIDDLEWARE = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
#: How often, while a robots.txt is being fetched, to look for a closing engine.
CLOSE_POLL_SECONDS = 0.1

_TOKEN_CACHE_SIZE = 256
_KIND_BITS = {kind: index for index, kind in enumerate(Kind)}


def _engine_is_closing(crawler: Crawler) -> bool:
    """Whether the engine is closing the spider.

    Scrapy has no signal for this: the engine waits for every request in
    progress before ``spider_closed``, and requests held here would hold the
    close. ``engine._slot.closing`` is what Scrapy's own engine status report
    reads; if it is missing the engine is treated as open.
    """
    engine = crawler.engine
    if engine is None or not engine.running:
        return True
    slot = getattr(engine, "_slot", None)
    return slot is not None and getattr(slot, "closing", None) is not None


def refuse_builtin_middleware(crawler: Crawler) -> None:
    """Stop the crawl if Scrapy's own robots.txt middleware is enabled too."""
    from scrapy.utils.conf import build_component_list

    enabled = build_component_list(crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
    names = {
        item if isinstance(item, str) else f"{item.__module__}.{item.__qualname__}"
        for item in enabled
    }
    if BUILTIN_MIDDLEWARE in names:
        raise SettingError(
            "scrapy_rfc9309.RobotsTxtMiddleware replaces Scrapy's built-in robots.txt "
            "middleware, and both are enabled. Disable the built-in one in settings.py:\n"
            f'    DOWNLOADER_MIDDLEWARES = {{"{BUILTIN_MIDDLEWARE}": None, '
            '"scrapy_rfc9309.RobotsTxtMiddleware": 100}\n'
            'or enable the add-on instead: ADDONS = {"scrapy_rfc9309.Addon": 100}'
        )


def _kept_for(outcome: SiteOutcome) -> str:
    """``600 s (Cache-Control: max-age=600)``: how long an outcome is used, and why."""
    seconds = max(0.0, outcome.expires_at - time.monotonic())
    return f"{round(seconds):d} s ({outcome.lifetime})" if outcome.lifetime else f"{seconds:.0f} s"


class _Fetch:
    """One site's robots.txt download in flight and the requests waiting on it."""

    __slots__ = ("deferred", "site", "stale", "waiters")

    def __init__(self, site: str, stale: SiteOutcome | None) -> None:
        self.site = site
        self.stale = stale
        self.waiters: list[Deferred[SiteOutcome | None]] = []
        self.deferred: Deferred[None] | None = None


class RobotsTxtMiddleware:
    """A drop-in replacement for Scrapy's ``RobotsTxtMiddleware`` (RFC 9309)."""

    def __init__(self, crawler: Crawler) -> None:
        self.settings = RobotsTxtSettings.from_settings(crawler.settings)
        if not self.settings.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        refuse_builtin_middleware(crawler)
        self.crawler = crawler
        self.stats = crawler.stats
        self._cache = SiteCache(self.settings.cache_max_sites)
        self._fetches: dict[str, _Fetch] = {}
        self._tokens: dict[bytes, str] = {}
        #: site -> the outcome kinds already counted for it (a bit per kind), so
        #: per-site stats count each site once per crawl, whatever its refetches
        self._counted: dict[str, int] = {}
        self._report = report_for(crawler)
        self._watchdog: Any = None
        self._fetcher = RobotsTxtFetcher(crawler, self.settings)
        self._usage = (
            UsageGate(crawler, self.settings, self._report) if self.settings.purposes else None
        )
        crawler.signals.connect(self._on_spider_closed, signal=signals.spider_closed)
        if self.settings.max_size < RFC_MIN_SIZE:
            logger.warning(
                "ROBOTSTXT_MAX_SIZE is %d bytes: RFC 9309 2.5 asks for at least %d; "
                "rules past the limit are ignored",
                self.settings.max_size,
                RFC_MIN_SIZE,
            )
        logger.info("Obeying robots.txt (RFC 9309) as %s", self.settings.describe_token())
        if self.settings.auth_disallow:
            logger.info(
                "ROBOTSTXT_AUTH_DISALLOW: a robots.txt answering 401 or 403 disallows the "
                "whole site (HTTP: The Definitive Guide ch. 9; RFC 9309 2.3.1.3 allows it)"
            )
        if warning := identity_warning(crawler.settings):
            logger.warning(warning)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        return cls(crawler)

    # -- per request -----------------------------------------------------------

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        """Let ``request`` through, or raise ``IgnoreRequest`` saying which line forbids it."""
        if request.meta.get("dont_obey_robotstxt"):
            return
        if request.url.startswith(("data:", "file:")):
            return
        site = site_of(urlparse_cached(request))
        if site is None:
            return
        outcome = self._cache.get(site)
        if outcome is None or outcome.expires_at <= time.monotonic():
            outcome = await self._wait_for(site, request, outcome)
        if outcome is None:
            self._drop_at_close(site, request)
        else:
            decision = outcome.decide(request.url, self._token(request), site)
            if self._usage is not None and decision.allowed:  # ROBOTSTXT_PURPOSES declared
                await self._usage.check(outcome, site, request, self._token(request))
            self._apply(decision, site, request)
            if request.meta.get("robotstxt_explain"):  # opt-in: the deciding line when allowed
                request.meta["robotstxt_verdict"] = allowed_verdict(
                    outcome, request.url, self._token(request)
                )

    def _token(self, request: Request) -> str:
        if self.settings.user_agent_token:
            return self.settings.user_agent_token
        header = request.headers.get(b"User-Agent") or b""
        token = self._tokens.get(header)
        if token is None:
            token = self.settings.token_for_header(header)
            if len(self._tokens) < _TOKEN_CACHE_SIZE:
                self._tokens[header] = token
        return token

    def _apply(self, decision: Decision, site: str, request: Request) -> None:
        self._report.decided(site, decision.allowed)
        if decision.allowed:
            self.stats.inc_value("robotstxt/allowed")
            return
        self.stats.inc_value("robotstxt/forbidden")
        self.stats.inc_value(f"robotstxt/forbidden/{decision.cause}")
        verdict = decision.verdict
        if verdict is not None and verdict.line is not None and verdict.rule is not None:
            self._report.dropped_by_rule(site, verdict.line, verdict.rule)
        logger.debug("%s: %s", decision.reason, request, extra={"spider": self.crawler.spider})
        raise IgnoreRequest(decision.reason)

    def _drop_at_close(self, site: str, request: Request) -> None:
        self.stats.inc_value("robotstxt/forbidden")
        self.stats.inc_value("robotstxt/forbidden/closing")
        self._report.dropped_at_close(site)
        reason = f"Dropped: the spider closed before {robots_url(site)} was fetched"
        logger.debug("%s: %s", reason, request, extra={"spider": self.crawler.spider})
        raise IgnoreRequest(reason)

    # -- one fetch per site ------------------------------------------------------

    async def _wait_for(
        self, site: str, request: Request, stale: SiteOutcome | None
    ) -> SiteOutcome | None:
        """The site's outcome once fetched; ``None`` if the spider closed first.

        Each waiting request gets its own Deferred: a result passed down one
        shared Deferred's chain reaches only its first waiter.
        """
        fetch = self._fetches.get(site)
        if fetch is None:
            fetch = self._fetches[site] = _Fetch(site, stale)
            fetch.deferred = deferred_from_coro(self._fetch(fetch, request))
            self._start_watchdog()
        waiter: Deferred[SiteOutcome | None] = Deferred()
        fetch.waiters.append(waiter)
        return await maybe_deferred_to_future(waiter)

    def _release(self, fetch: _Fetch, outcome: SiteOutcome | None) -> None:
        if self._fetches.get(fetch.site) is fetch:
            del self._fetches[fetch.site]
        waiters, fetch.waiters = fetch.waiters, []
        for waiter in waiters:
            waiter.callback(outcome)

    async def _fetch(self, fetch: _Fetch, request: Request) -> None:
        url = robots_url(fetch.site)
        self.stats.inc_value("robotstxt/request_count")
        if fetch.stale is not None:
            self.stats.inc_value("robotstxt/refetch")
        try:
            outcome = await self._fetcher.fetch(url, request)
        except (CancelledError, asyncio.CancelledError):
            logger.info("robots.txt download cancelled at close: %s", url)
            self._release(fetch, None)
            return
        except Exception as exc:  # not an answer of the site: never pass it off as one
            outcome = self._internal_error(exc, url)
        stale = fetch.stale
        if outcome.kind is Kind.UNREACHABLE and stale and stale.kind not in DISALLOW_ALL:
            # RFC 9309 2.4: while unreachable, a copy cached earlier stays in use.
            logger.warning(
                "robots.txt unreachable (%s): %s; keeping the copy fetched earlier (RFC 9309 2.4)",
                outcome.detail,
                outcome.source or url,
            )
            stale.expires_at = outcome.expires_at
            outcome = stale
        else:
            self._count_site(fetch.site, outcome.kind)
            self._report.fetched(fetch.site, outcome)
            self._log_outcome(outcome, url, fetch.site)
        outcome = outcome.compact()
        self._cache.put(fetch.site, outcome)
        if self._cache.evictions:
            self.stats.set_value("robotstxt/cache/evicted", self._cache.evictions)
        self._release(fetch, outcome)

    def _internal_error(self, exc: Exception, url: str) -> SiteOutcome:
        """A failure that is not the site's answer: a bug or an incompatible component.

        Logged at ERROR with its traceback and counted in
        ``robotstxt/internal_error``; the site is disallowed (nothing is
        known of its rules) and tried again after ``ROBOTSTXT_UNREACHABLE_TTL``.
        """
        self.stats.inc_value("robotstxt/internal_error")
        logger.error(
            "Internal error while fetching %s; requests to its site are dropped "
            "(this is not the site's answer)",
            url,
            exc_info=exc,
            extra={"spider": self.crawler.spider},
        )
        expires = time.monotonic() + self.settings.unreachable_ttl
        return SiteOutcome(Kind.INTERNAL_ERROR, None, f"{dotted_name(exc)}: {exc}", expires)

    def _count_site(self, site: str, kind: Kind) -> None:
        """Per-site stats: each site once per crawl in ``robotstxt/sites`` and per kind."""
        bit = 1 << _KIND_BITS[kind]
        seen = self._counted.get(site)
        if seen is None:
            self.stats.inc_value("robotstxt/sites")
            seen = 0
        if not seen & bit:
            self._counted[site] = seen | bit
            if kind is not Kind.INTERNAL_ERROR:  # that one counts each error
                self.stats.inc_value(f"robotstxt/{kind.value}")

    def _log_outcome(self, outcome: SiteOutcome, url: str, site: str) -> None:
        source = outcome.source or url
        if outcome.kind is Kind.UNREACHABLE:
            logger.warning(
                "robots.txt unreachable (%s): %s; requests to %s are dropped "
                "(RFC 9309 2.3.1.4), tried again in %s s",
                outcome.detail,
                source,
                site,
                f"{round(max(0.0, outcome.expires_at - time.monotonic()), 1):g}",
            )
        elif outcome.kind is Kind.RESTRICTED:
            logger.warning(
                "robots.txt answered %s: %s; requests to %s are dropped "
                "(ROBOTSTXT_AUTH_DISALLOW; HTTP: The Definitive Guide ch. 9)",
                outcome.detail,
                source,
                site,
            )
        elif outcome.kind is Kind.UNAVAILABLE:
            logger.debug(
                "robots.txt unavailable (%s): %s; everything allowed (RFC 9309 2.3.1.3); kept %s",
                outcome.detail,
                source,
                _kept_for(outcome),
            )
        elif outcome.kind is Kind.PARSED:
            logger.debug(
                "robots.txt parsed (%s): %s %r; kept %s",
                outcome.detail,
                source,
                outcome.robots,
                _kept_for(outcome),
            )

    def _start_watchdog(self) -> None:
        if self._watchdog is None:
            from twisted.internet import task

            self._watchdog = task.LoopingCall(self._release_if_closing)
            self._watchdog.start(CLOSE_POLL_SECONDS, now=False)

    def _stop_watchdog(self) -> None:
        if self._watchdog is not None:
            if self._watchdog.running:
                self._watchdog.stop()
            self._watchdog = None

    def _release_if_closing(self) -> None:
        if not self._fetches:
            self._stop_watchdog()
        elif _engine_is_closing(self.crawler):
            self._release_all()

    def _release_all(self) -> None:
        """Drop every waiting request and cancel every robots.txt download."""
        fetches = list(self._fetches.values())
        if fetches:
            waiting = sum(len(fetch.waiters) for fetch in fetches)
            logger.info(
                "Spider closing: dropping %d requests that waited on %d robots.txt downloads",
                waiting,
                len(fetches),
            )
        for fetch in fetches:
            self._release(fetch, None)
            if fetch.deferred is not None:
                fetch.deferred.cancel()
        self._stop_watchdog()

    def _on_spider_closed(self) -> None:
        self._release_all()
        if self._usage is not None and self._usage.tdmrep is not None:
            self._usage.tdmrep.abandon_all()

"""``RobotsTxtMiddleware``: Scrapy obeys robots.txt as RFC 9309 section 2.3 says.

Thin glue that decides: each request waits for its site's outcome (from the
crawler's :class:`~._service.SiteService`, which fetches one robots.txt per
site: scheme + host + port), then is let through or dropped with
``IgnoreRequest`` naming the deciding line.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy.exceptions import IgnoreRequest, NotConfigured

from ...sites._outcome import Kind
from ...sites._request_decision import PENDING
from ...sites._site import robots_url
from .._enabled import refuse_builtin_middleware
from .._report import allowed_verdict
from ..settings._start_up import never_disabled, start_up_errors_logged
from ..sitefiles._service import SiteListener, SiteService, site_service
from ..sitefiles._set_aside import RequestSetAside
from ..sitefiles._site_files import drop_at_close
from ..sitefiles._usage_gate import USAGE_META_KEY, USAGE_SOURCES_META_KEY, TdmRepSites
from ._sitemaps import answer_from_copy

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from ...sites._request_decision import RequestDecision

__all__ = ["RequestSetAside", "RobotsTxtMiddleware", "SiteListener"]

logger = logging.getLogger("scrapy_rfc9309.middleware")
#: drops by usage preferences are logged under the usage logger, as documented
usage_logger = logging.getLogger("scrapy_rfc9309.usage")

_T = TypeVar("_T")


class RobotsTxtMiddleware:
    """A drop-in replacement for Scrapy's ``RobotsTxtMiddleware`` (RFC 9309).

    With :class:`~scrapy_rfc9309.RobotsTxtPriorityQueue` as the scheduler
    queue, requests of a site whose robots.txt is not settled wait in the
    queue (taking none of the crawl's concurrency) and reach this middleware
    only once it is; the decision stays here. With any other queue they wait
    here, as with Scrapy's own middleware.
    """

    def __init__(self, crawler: Crawler) -> None:
        with never_disabled("RobotsTxtMiddleware"):
            service = site_service(crawler)  # the crawler's settings, read once
        if service is None:
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        refuse_builtin_middleware(crawler)
        self.service: SiteService = service
        self.settings = service.settings
        self.crawler = crawler
        self.stats = service.stats
        #: the stats' ``inc_value``, looked up once (Scrapy's StatsCollector
        #: wraps each attribute it is asked for)
        self._count = self.stats.inc_value
        self._report = service.report
        self._aside = service.set_aside
        #: requests waiting here on a robots.txt or tdmrep.json
        self._held = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        with start_up_errors_logged():
            return cls(crawler)

    # -- per request -----------------------------------------------------------

    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | None:
        """Let ``request`` through, or raise ``IgnoreRequest`` saying which line forbids it.

        With a scheduler queue that is not ours, a request of a site whose
        robots.txt is pending, beyond ``ROBOTSTXT_HELD_SHARE`` of
        ``CONCURRENT_REQUESTS`` already waiting here, is set aside instead
        (:meth:`_set_aside`) and decided when it comes back.
        """
        service = self.service
        site = service.site_for(request)
        if site is None:
            return None
        aside = self._aside
        aside.restore(request)  # a copy given back: its own dont_filter again
        outcome = service.outcome_for(site, request)  # fresh, or the one that released it
        if outcome is None:
            if aside.must(request, self._held):
                self._set_aside(site, request)
            aside.waiting[request] = site
            try:
                outcome = await self._held_while(service.wait_for(site, request))
            finally:
                aside.waiting.pop(request, None)
        if outcome is None:
            if aside.was_requeued(request):  # its copy is in the scheduler for the next run
                raise RequestSetAside(f"Put back in the scheduler: {robots_url(site)} pending")
            self._drop_at_close(site, request)
        else:
            # a SitemapSpider's request for this robots.txt: answered from the copy
            answer = answer_from_copy(outcome, site, request, self.crawler.spider, self.stats)
            if answer is not None:
                return answer
            if outcome.kind is Kind.NOT_DOWNLOADABLE:  # Scrapy fails it with NotSupported
                self.stats.inc_value("robotstxt/passed_unchecked")  # never checked: not allowed
                return None
            decision = service.decisions.decide(outcome, site, request)
            if decision.cause == PENDING:  # a declared purpose waits for its tdmrep.json
                usage, tdmrep = service.usage, service.tdmrep
                assert usage is not None and tdmrep is not None
                if aside.must(request, self._held):
                    self._set_aside(site, request, tdmrep=tdmrep)
                await self._held_while(usage.wait_tdmrep(site, request))
                decision = service.decisions.decide(outcome, site, request)
            self._apply(decision, site, request)
            if request.meta.get("robotstxt_explain"):  # opt-in: the deciding line when allowed
                request.meta["robotstxt_verdict"] = allowed_verdict(
                    outcome, request.url, decision.token
                )
        return None

    # -- bounded holding with other scheduler queues ---------------------------------

    async def _held_while(self, waiting: Coroutine[Any, Any, _T]) -> _T:
        """Await ``waiting``, counted as a request held here (``robotstxt/held/max``)."""
        self._held += 1
        self.stats.max_value("robotstxt/held/max", self._held)
        try:
            return await waiting
        finally:
            self._held -= 1

    def _set_aside(self, site: str, request: Request, tdmrep: TdmRepSites | None = None) -> None:
        """Free the request's place in the crawl's concurrency until its site is
        settled (:meth:`~._set_aside.SetAside.keep`): a copy is scheduled again then."""
        self._aside.keep(site, request, self._held)
        if tdmrep is not None:
            tdmrep.prefetch(site)
        else:
            self.service.start_fetch(site, request)
        raise RequestSetAside(f"Set aside until the robots.txt of {site} is fetched")

    # -- the decision ---------------------------------------------------------------------

    def _apply(self, decision: RequestDecision, site: str, request: Request) -> None:
        """Let ``request`` through (its usage preferences in its meta), or drop it
        with a stat, a report entry, a log line and ``IgnoreRequest`` naming why."""
        self._report.decided(site, decision.fetch)
        record = self.service.record
        if record is not None:
            record.decided(decision, site, request, decision.tdmrep)
        usage = decision.usage
        if decision.fetch:
            self._count("robotstxt/allowed")
            if usage is not None:  # ROBOTSTXT_PURPOSES: the page's signals join them
                request.meta[USAGE_META_KEY] = usage[1].usage
                request.meta[USAGE_SOURCES_META_KEY] = usage[0]
            return
        assert decision.cause != PENDING
        self.stats.inc_value("robotstxt/forbidden")
        self.stats.inc_value(f"robotstxt/forbidden/{decision.cause}")
        if decision.agent is not None:  # refused by a ROBOTSTXT_ALSO_OBEY token's group
            self.stats.inc_value(f"robotstxt/forbidden/also_obey/{decision.agent}")
        verdict = decision.verdict
        if verdict is not None and verdict.line is not None and verdict.rule is not None:
            rule = verdict.rule
            if decision.agent is not None:
                rule = f"{rule} (for {decision.agent})"
            self._report.dropped_by_rule(site, verdict.line, rule)
        refusal = decision.refusal
        if decision.cause == "usage" and refusal is not None:
            self._report.dropped_by_usage(site, refusal.describe())
            usage_logger.debug("%s: %s", decision.reason, request, extra=self._spider)
        else:
            logger.debug("%s: %s", decision.reason, request, extra=self._spider)
        raise IgnoreRequest(decision.reason)

    @property
    def _spider(self) -> dict[str, Any]:
        return {"spider": self.crawler.spider}

    def _drop_at_close(self, site: str, request: Request) -> None:
        drop_at_close(self.crawler, self._report, logger, site, robots_url(site), request)

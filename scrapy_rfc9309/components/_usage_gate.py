"""Declared purposes (``ROBOTSTXT_PURPOSES``) against a site's usage preferences.

Thin Scrapy glue over :mod:`._usage` and :mod:`._tdmrep`, used by the
robots.txt middleware only when purposes are declared: after a request is
allowed by robots.txt, its preferences (the robots.txt ``Content-Usage`` /
``Content-Signal`` lines of our groups, and the site's
``/.well-known/tdmrep.json`` when a declared purpose is text and data mining,
from :class:`~._tdmrep_sites.TdmRepSites`) go to ``request.meta["usage"]``; a
request whose preferences refuse a declared purpose is dropped before
download, like a Disallow.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary, WeakSet

from scrapy.exceptions import IgnoreRequest

from ..parser._tdmrep import TDMREP_PATH, TdmRep
from ..parser._usage import Preference, needs_tdmrep
from ..parser._usage_decision import UsageDecision, UsageSources, decide_usage, site_sources
from ._settings import page_signals_read, purposes_warning
from ._site_files import drop_at_close
from ._tdmrep_sites import FAILED_TDMREP, TdmRepSites

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ..sites._outcome import SiteOutcome
    from ._report import CrawlReport
    from ._settings import RobotsTxtSettings

__all__ = ["USAGE_META_KEY", "TdmRepSites", "UsageGate", "warn_if_purposes_ignored"]

logger = logging.getLogger("scrapy_rfc9309.usage")

#: Sites whose tdmrep.json findings are remembered as told (the oldest forgotten).
MAX_FINDINGS_TOLD = 10_000

#: ``request.meta`` / ``response.meta`` key of the :class:`~._usage.Usage` that applies.
USAGE_META_KEY = "usage"
#: ``request.meta`` key of the :class:`~._usage_decision.UsageSources` it was decided from.
USAGE_SOURCES_META_KEY = "_robotstxt_usage_sources"


#: What a decision was made from (robots.txt, token, tdmrep.json), and the decision.
_Made = tuple["SiteOutcome", str, "TdmRep | None", tuple[UsageSources, UsageDecision]]


class UsageGate:
    """Drops requests whose site-wide preferences refuse a declared purpose."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        report: CrawlReport,
        on_settled: Callable[[str], None] | None = None,
        on_start: Callable[[], None] | None = None,
        bounded: Callable[[], bool] | None = None,
    ) -> None:
        self.purposes = settings.purposes
        self.stats = crawler.stats
        self.crawler = crawler
        self._report = report
        self.tdmrep = (
            TdmRepSites(crawler, settings, on_settled, on_start, bounded=bounded)
            if needs_tdmrep(self.purposes)
            else None
        )
        #: the page's signals are read after download (ROBOTS_META_OBEY and the
        #: meta middleware on): a tdmrep.json reservation, which they supersede,
        #: is decided there
        self._page_decides = page_signals_read(crawler.settings)
        #: site -> the tdmrep.json whose findings were logged (once per fetch)
        self._findings_told: dict[str, TdmRep] = {}
        #: request -> the decision made at the scheduler queue's pop
        #: (:meth:`refused_now`), with what it was made from; :meth:`check`
        #: takes it when made from the same robots.txt, token and tdmrep.json
        self._decided: WeakKeyDictionary[Request, _Made] = WeakKeyDictionary()
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
        sources, decision = self._decided_for(outcome, request, token, rules, pop=True)
        request.meta[USAGE_META_KEY] = decision.usage
        request.meta[USAGE_SOURCES_META_KEY] = sources  # the page's signals join after download
        refusal = decision.refusal
        if refusal is None or not self._refuses(decision):
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

    def refused_now(self, outcome: SiteOutcome, site: str, request: Request, token: str) -> bool:
        """Whether :meth:`check` will drop ``request`` (a purpose refused, or its
        site's tdmrep.json failed), from what is known now, with no side effect
        but the decision kept for :meth:`check` (a paced request's preferences
        are read once, however many times it waited for its turn); ``False``
        when its tdmrep.json is not known yet."""
        rules: TdmRep | None = None
        if self.tdmrep is not None:
            rules = self.tdmrep.fresh(site)
            if rules is None:
                return False
            if rules is FAILED_TDMREP:
                return True
        return self._refuses(self._decided_for(outcome, request, token, rules, pop=False)[1])

    def _decided_for(
        self,
        outcome: SiteOutcome,
        request: Request,
        token: str,
        rules: TdmRep | None,
        pop: bool,
    ) -> tuple[UsageSources, UsageDecision]:
        """The decision kept for ``request`` if made from these very files and
        token, else made now; kept (``pop`` false) or taken (``pop`` true)."""
        made = self._decided.pop(request, None) if pop else self._decided.get(request)
        if made is not None and made[0] is outcome and made[1] == token and made[2] is rules:
            return made[3]
        decided = self._decide(outcome, request, token, rules)
        if not pop:
            self._decided[request] = (outcome, token, rules, decided)
        return decided

    def _decide(
        self, outcome: SiteOutcome, request: Request, token: str, rules: TdmRep | None
    ) -> tuple[UsageSources, UsageDecision]:
        sources = site_sources(outcome.robots, request.url, token, rules)
        return sources, decide_usage(sources, self.purposes)

    def _refuses(self, decision: UsageDecision) -> bool:
        """Whether ``decision`` drops the request before download."""
        return decision.refusal is not None and not self._page_may_lift(decision.refusals)

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

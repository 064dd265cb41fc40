"""Declared purposes: each site's tdmrep.json, and the requests that wait for it.

Thin Scrapy glue, used only when purposes are declared. The decision itself
(robots.txt ``Content-Usage`` / ``Content-Signal`` lines of our groups, the
site's ``/.well-known/tdmrep.json``, against the declared purposes) is the
request's one decision (``sites._request_decision``), made by the site
service; this gate holds the tdmrep.json of each site that a purpose needs
(:class:`~._tdmrep_sites.TdmRepSites`), lets a request wait for it, and tells
what a file states less than its writer meant.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...parser._tdmrep import TDMREP_PATH, TdmRep
from ...parser._usage import needs_tdmrep
from ...sites._bounded import put_bounded
from ._site_files import drop_at_close
from ._tdmrep_sites import TdmRepSites

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from .._clock import Clock
    from .._report import CrawlReport
    from ..settings._settings import RobotsTxtSettings
    from ..store._store_bridge import StoreBridge
    from ._tdmrep_robots import TdmRepRobotsCheck

__all__ = ["USAGE_META_KEY", "TdmRepSites", "UsageGate"]

logger = logging.getLogger("scrapy_rfc9309.usage")

#: Sites whose tdmrep.json findings are remembered as told (the oldest forgotten).
MAX_FINDINGS_TOLD = 10_000

#: ``request.meta`` / ``response.meta`` key of the :class:`~._usage.Usage` that applies.
USAGE_META_KEY = "usage"
#: ``request.meta`` key of the :class:`~._usage_decision.UsageSources` it was decided from.
USAGE_SOURCES_META_KEY = "_robotstxt_usage_sources"


class UsageGate:
    """The tdmrep.json of each site a declared purpose needs, and its findings."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        report: CrawlReport,
        clock: Clock,
        on_settled: Callable[[str], None] | None = None,
        on_start: Callable[[], None] | None = None,
        bounded: Callable[[], bool] | None = None,
        store: StoreBridge | None = None,
        details: dict[str, str] | None = None,
        robots_check: TdmRepRobotsCheck | None = None,
    ) -> None:
        """``store``: where each site's tdmrep.json fetch is kept too (``None``: none);
        ``details``: where what each fetch came to is kept (``scrapy robotstxt``)."""
        self.purposes = settings.purposes
        self.crawler = crawler
        self._report = report
        self.tdmrep = (
            TdmRepSites(
                crawler,
                settings,
                clock,
                on_settled,
                on_start,
                details=details,
                bounded=bounded,
                store=store,
                robots_check=robots_check,
            )
            if needs_tdmrep(self.purposes)
            else None
        )
        #: site -> the tdmrep.json whose findings were logged (once per fetch)
        self._findings_told: dict[str, TdmRep] = {}
        logger.info(
            "Declared purposes: %s (ROBOTSTXT_PURPOSES); requests whose usage preferences "
            "refuse them are dropped",
            ", ".join(self.purposes),
        )

    async def wait_tdmrep(self, site: str, request: Request) -> None:
        """Wait until ``site``'s tdmrep.json is settled (downloaded once per
        lifetime); ``IgnoreRequest`` when the spider closes first."""
        assert self.tdmrep is not None
        if await self.tdmrep.get(site) is None:
            drop_at_close(self.crawler, self._report, logger, site, site + TDMREP_PATH, request)

    def tell_findings(self, site: str, rules: TdmRep) -> None:
        """What a site's tdmrep.json states less than its writer meant (a
        ``tdm-reservation`` that is not the integer 0 or 1, an entry that is no
        rule), at INFO, once per fetch (each fetch gives a new :class:`TdmRep`)."""
        if self._findings_told.get(site) is rules:
            return
        put_bounded(self._findings_told, site, rules, MAX_FINDINGS_TOLD)
        logger.info(
            "tdmrep.json of %s: %s",
            site,
            "; ".join(rules.findings),
            extra={"spider": self.crawler.spider},
        )

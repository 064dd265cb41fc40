"""``RobotsTxtExtension``: honours Crawl-delay per site and logs a close summary.

Crawl-delay is not part of RFC 9309, but is widely used. Unless
``ROBOTSTXT_CRAWL_DELAY`` is off, the Crawl-delay of the obeyed product
token becomes a floor on the delay of the site's downloader slot (capped by
``ROBOTSTXT_CRAWL_DELAY_MAX``), set as the site's robots.txt comes into
force, whatever its source (downloaded, from the store, a copy kept:
:mod:`._crawl_delay`). The floor is enforced each time a request
reaches the downloader and after each response, so AutoThrottle may raise
the delay but never lower it below the floor; jitter is turned off for such
slots, so no request is sent earlier than the site asked.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Request

from ...sites._bounded import put_bounded
from ...sites._site import robots_url
from .._engine import downloader_of, page_slot_key, url_slot_key
from .._report import CrawlReport, report_for
from ..settings._component_settings import httpcache_honours_noarchive
from ..settings._crawler_settings import robotstxt_settings
from ..settings._report_settings import ReportSettings
from ..settings._start_up import never_disabled, start_up_errors_logged
from ..sitefiles._crawl_delay import crawl_delay_listeners

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..cluster._pacing import ClusterPacer

__all__ = ["RobotsTxtExtension"]

logger = logging.getLogger("scrapy_rfc9309.extension")

#: Slots whose Crawl-delay is remembered; beyond, the oldest are forgotten.
MAX_SLOTS_TRACKED = 100_000


class RobotsTxtExtension:
    """Crawl-delay per site (on by default) and the robots.txt summary at close."""

    def __init__(self, crawler: Crawler) -> None:
        self.settings = robotstxt_settings(crawler)
        if not (self.settings.obey or self.settings.meta_obey):
            raise NotConfigured("ROBOTSTXT_OBEY and ROBOTS_META_OBEY are off")
        self.crawler = crawler
        self.report_settings = ReportSettings.from_settings(crawler.settings)
        self._floors: dict[str, float] = {}
        with never_disabled("RobotsTxtExtension"):  # it reads other components' settings
            self._noarchive_honoured = httpcache_honours_noarchive(crawler.settings)
        #: with ROBOTSTXT_CRAWL_DELAY off: the sites whose delay was said not applied
        self._not_applied: set[str] = set()
        if self.settings.obey:
            crawl_delay_listeners(crawler).append(self)
        #: whether the floors are kept on every download (connected at the first
        #: site asking a Crawl-delay: until then a page's download costs nothing here)
        self._enforcing = False
        crawler.signals.connect(self._log_summary, signal=signals.spider_closed)
        if self.report_settings.report_file:
            crawler.signals.connect(self._write_report, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtExtension:
        with start_up_errors_logged():
            return cls(crawler)

    # -- Crawl-delay -------------------------------------------------------------

    def crawl_delay_in_force(self, site: str, delay: float | None) -> None:
        """``site``'s robots.txt in force asks ``delay`` seconds (``None``: none), told
        by the site service whatever the copy's source (:mod:`._crawl_delay`): the
        floor of the site's page slot, and the site's delay across the cluster.
        With ``ROBOTSTXT_CRAWL_DELAY`` off, one INFO line per site says the delay
        is not applied."""
        if not self.settings.crawl_delay:
            self._say_not_applied(site, delay)
            return
        floor = None if not delay else min(delay, self.settings.crawl_delay_max)
        pacer = self._pacer()  # with a Redis store: kept across the cluster's processes too
        if pacer is not None:
            pacer.set_crawl_delay(site, floor)  # None: none any more
        downloader = downloader_of(self.crawler)
        if floor is None or downloader is None:
            # a slot's floor stays: the slot may be shared with another site of
            # the host (another port or scheme) that asks one
            return
        request = Request(robots_url(site))  # a URL of the site: its pages' slot
        key = page_slot_key(downloader, request)
        put_bounded(self._floors, key, floor, MAX_SLOTS_TRACKED)
        if not self._enforcing:
            self._enforcing = True
            self.crawler.signals.connect(self._enforce, signal=signals.request_reached_downloader)
            self.crawler.signals.connect(self._enforce, signal=signals.response_downloaded)
        logger.info(
            "Crawl-delay %s s for %s (robots.txt asks %s s; ROBOTSTXT_CRAWL_DELAY_MAX %s s)",
            floor,
            key,
            delay,
            self.settings.crawl_delay_max,
        )
        self._enforce(request=request)

    def _pacer(self) -> ClusterPacer | None:
        """The crawl's cluster pacer, the site service's (which tells this
        extension each site's Crawl-delay, so it exists by then)."""
        from ..sitefiles._service import site_service

        service = site_service(self.crawler, create=False)
        return None if service is None else service.pacer

    def _say_not_applied(self, site: str, delay: float | None) -> None:
        if not delay or site in self._not_applied:
            return
        if len(self._not_applied) >= MAX_SLOTS_TRACKED:
            self._not_applied.pop()
        self._not_applied.add(site)
        logger.info(
            "Crawl-delay %s s asked by %s not applied: ROBOTSTXT_CRAWL_DELAY is off",
            delay,
            robots_url(site),
        )

    def _enforce(self, request: Request, **kwargs: Any) -> None:
        """The floor of the slot ``request`` is in, and of its host's pages'
        slot when it is in another (``meta["download_slot"]``: one the spider
        chose, or the first host's kept on a redirect): that slot spaces it."""
        floors = self._floors
        if not floors:
            return
        downloader = self.crawler.engine.downloader
        key = downloader.get_slot_key(request)
        slot = downloader.slots.get(key)
        if slot is None:
            return
        floor = floors.get(key)
        own = url_slot_key(downloader, request)
        if own is not None and own != key:
            floor = max(floor or 0.0, floors.get(own) or 0.0) or None
        if floor is None:
            return
        if slot.delay < floor:
            slot.delay = floor
        if hasattr(slot, "jitter"):
            slot.jitter = 0.0
        else:  # Scrapy < 2.19
            slot.randomize_delay = False

    # -- the close summary ---------------------------------------------------------

    def _drop_held(self) -> None:
        """Requests still waiting in the scheduler queue are dropped before
        the summary and the report read the stats, so both count them."""
        from ..sitefiles._service import site_service

        robots = site_service(self.crawler, create=False)
        if robots is not None:
            robots.drop_held_at_close()

    def _log_summary(self) -> None:
        self._drop_held()
        stats = self.crawler.stats
        assert stats is not None
        get = stats.get_value
        parsed, unavailable, unreachable = (
            get(f"robotstxt/{kind}", 0) for kind in ("parsed", "unavailable", "unreachable")
        )
        sites = get("robotstxt/sites", parsed + unavailable + unreachable)
        restricted, internal = get("robotstxt/restricted", 0), get("robotstxt/internal_error", 0)
        not_downloadable = get("robotstxt/not_downloadable", 0)
        # a site counts once in each outcome it had during the crawl
        extra_kinds = (
            (f", {restricted} restricted: disallow all" if restricted else "")
            + (f", {internal} internal errors" if internal else "")
            + (
                f", {not_downloadable} not downloadable: passed to Scrapy unchecked"
                if not_downloadable
                else ""
            )
        )
        unchecked = get("robotstxt/passed_unchecked", 0)
        extra_drops = "".join(
            f", {get(f'robotstxt/forbidden/{cause}', 0)} {label}"
            for cause, label in (
                ("restricted", "restricted"),
                ("internal_error", "internal error"),
                ("usage", "by usage preferences"),
            )
            if get(f"robotstxt/forbidden/{cause}", 0)
        )
        lines = (
            []
            if not self.settings.obey
            else [
                f"robots.txt summary: {_plural(sites, 'site')} checked "
                f"({parsed} parsed, {unavailable} unavailable: allow all, "
                f"{_unreachable(unreachable, report_for(self.crawler).recoveries(), get)}"
                f"{extra_kinds}); "
                f"{_plural(get('robotstxt/allowed', 0), 'request')} allowed, "
                + (f"{unchecked} passed unchecked, " if unchecked else "")
                + f"{get('robotstxt/forbidden', 0)} dropped "
                f"({get('robotstxt/forbidden/rule', 0)} by rules, "
                f"{get('robotstxt/forbidden/unreachable', 0)} unreachable{extra_drops}, "
                f"{get('robotstxt/forbidden/closing', 0)} at close)"
            ]
        )
        pages = _page_level_summary(get, noarchive_honoured=self._noarchive_honoured)
        if pages:
            lines.append(pages)
        usage = _usage_summary(get, self.settings.purposes, robots_read=self.settings.obey)
        if usage:
            lines.append(usage)
            lines.extend(
                _top_usage_lines(report_for(self.crawler), self.report_settings.summary_top_rules)
            )
        top = report_for(self.crawler).top_rules(self.report_settings.summary_top_rules)
        if top:
            lines.append("Rules that dropped the most requests:")
            lines.extend(
                f"  {count:>6} x {site} line {line}: {rule!r}" for (site, line, rule), count in top
            )
        logger.info("\n".join(lines))

    # -- the JSON report ------------------------------------------------------------

    def _write_report(self, spider: Any, reason: str) -> None:
        path = self.report_settings.report_file
        assert path is not None
        self._drop_held()
        stats = self.crawler.stats
        assert stats is not None
        totals = {
            key: value
            for key, value in sorted(stats.get_stats().items())
            if key.startswith(("robotstxt/", "robotsmeta/"))
        }
        try:
            written = report_for(self.crawler).write_json(
                path,
                spider=spider.name,
                finish_reason=reason,
                finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                stats=totals,
            )
        except OSError as error:
            logger.error("Cannot write the robots.txt report (ROBOTSTXT_REPORT_FILE): %s", error)
            return
        logger.info("robots.txt report written to %s", written)


def _plural(count: int, noun: str) -> str:
    """``1 site``, ``2 sites``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _unreachable(count: int, recoveries: list[int], get: Any) -> str:
    """``2 unreachable: disallow all``: the sites whose robots.txt stayed
    unreachable, so that the counts add up to the sites checked (a site
    retrieved later counts in what it came to), then what became of the others:
    ``; 1 recovered after being unreachable (deferred, 3 attempts)``."""
    still = max(0, count - len(recoveries))
    text = f"{still} unreachable: disallow all"
    if not recoveries:
        return text
    how = "deferred, " if get("robotstxt/deferred", 0) else ""
    low, high = min(recoveries), max(recoveries)
    attempts = f"{low} attempts" if low == high else f"{low} to {high} attempts"
    return f"{text}; {len(recoveries)} recovered after being unreachable ({how}{attempts})"


def _page_level_summary(get: Any, *, noarchive_honoured: bool = False) -> str:
    """The page-level directives part of the close summary; ``""`` when none were met."""
    counts = {
        key: get(f"robotsmeta/{key}", 0)
        for key in (
            "pages/nofollow",
            "nofollow",
            "pages/noindex",
            "noindex",
            "noarchive",
        )
    }
    if not any(counts.values()):
        return ""
    parts = []  # a directive no page had is left out
    if counts["pages/nofollow"] or counts["nofollow"]:
        parts.append(
            f"{_plural(counts['pages/nofollow'], 'page')} nofollow "
            f"({_plural(counts['nofollow'], 'request')} not followed)"
        )
    if counts["pages/noindex"] or counts["noindex"]:
        parts.append(
            f"{_plural(counts['pages/noindex'], 'page')} noindex "
            f"({_plural(counts['noindex'], 'item')} dropped)"
        )
    if counts["noarchive"]:
        parts.append(
            f"{_plural(counts['noarchive'], 'page')} noarchive"
            + (" (never stored in or served from the HTTP cache)" if noarchive_honoured else "")
        )
    return "Page-level directives: " + ", ".join(parts)


def _usage_summary(get: Any, purposes: tuple[str, ...], robots_read: bool = True) -> str:
    """The declared-purposes line of the close summary; ``""`` without purposes.

    Counts are per request (dropped before download), per page (downloaded,
    then refusing a purpose: by its headers or meta, or by tdmrep.json, which
    the page may supersede) and per item; tdmrep.json
    downloads are counted per download (one per site, again when expired).
    """
    if not purposes:
        return ""
    requests = get("robotstxt/forbidden/usage", 0)
    pages = get("robotsmeta/pages/usage", 0)
    items = get("robotsmeta/usage", 0)
    tdmrep = get("robotstxt/tdmrep/request_count", 0)
    checked = (
        f"{_plural(requests, 'request')} dropped before download by a usage preference "
        "(robots.txt, tdmrep.json); "
        if robots_read
        else "robots.txt and tdmrep.json not read (ROBOTSTXT_OBEY is off); "
    )
    line = (
        f"Declared purposes ({', '.join(purposes)}; ROBOTSTXT_PURPOSES): {checked}"
        f"{_plural(pages, 'page')} refused a purpose once downloaded (by "
        f"{'its' if pages == 1 else 'their'} headers or meta, or tdmrep.json left to the "
        f"page; {_plural(items, 'item')} dropped)"
    )
    if tdmrep:
        line += f"; {_plural(tdmrep, 'tdmrep.json download')}"
    return line


def _top_usage_lines(report: CrawlReport, count: int) -> list[str]:
    """The preferences that dropped the most, each with its unit (requests or items)
    and its site; at most ``count`` (``ROBOTSTXT_SUMMARY_TOP_RULES``)."""
    ranked = report.top_usage(count)
    if not ranked:
        return []
    counts = [f"{_plural(n, unit)} dropped" for n, unit, _, _ in ranked]
    width = max(len(text) for text in counts)
    return ["Usage preferences that dropped the most:"] + [
        f"  {text:>{width}}: {site}: {preference}"
        for text, (_, _, site, preference) in zip(counts, ranked, strict=True)
    ]

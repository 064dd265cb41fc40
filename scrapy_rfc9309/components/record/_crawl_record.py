"""``CrawlRecord``: what the crawl tells its record (``ROBOTSTXT_RECORD_FILE``). Scrapy glue.

One per crawler, made by the first component that asks (:func:`crawl_record`)
and closed when the engine stops. It is told each robots.txt copy and
tdmrep.json put in force for a site, each request decided (with the copies
in force, named by the hashes of their lines), each request dropped at
close, and for a downloaded page its status, directives and usage signals,
and what the crawl dropped for them. The lines are built by
:mod:`scrapy_rfc9309.sites._record_lines` and written by
:class:`~._record_file.RecordFile`.
"""

from __future__ import annotations

import datetime
import logging
from importlib import metadata
from typing import TYPE_CHECKING, Any

from scrapy import signals

from ...sites._record_lines import (
    close_entry,
    header_entry,
    iso,
    request_entry,
    robots_entry,
    tdmrep_entry,
)
from .._clock import Clock
from ..settings._crawler_settings import robotstxt_settings
from ..settings._report_settings import record_file_setting
from ..settings._setting_values import SettingError
from ._record_file import SETTING, RecordFile, open_record_file

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ...parser._tdmrep import TdmRep
    from ...sites._outcome import SiteOutcome
    from ...sites._request_decision import RequestDecision, TdmRepUnread

__all__ = ["META_RECORD", "CrawlRecord", "crawl_record", "without_record"]

logger = logging.getLogger("scrapy_rfc9309.record")

#: The crawler attribute the record is kept in (``False``: none is kept).
_ATTRIBUTE = "_robotstxt_crawl_record"
#: Meta key of a downloaded request: the hash of its request line.
META_RECORD = "_robotstxt_record"
#: Copies remembered per site: requests released by an older copy are still
#: decided by it (``sites._sitetable.released_until``).
_COPIES_KEPT = 4


def crawl_record(crawler: Crawler, clock: Clock | None = None) -> CrawlRecord | None:
    """The crawler's record, opened on first use, its times read from ``clock``
    (the site service's; the real time when none is given); ``None`` when
    ``ROBOTSTXT_RECORD_FILE`` is unset. A path that cannot be written raises
    :class:`SettingError`."""
    record: CrawlRecord | bool | None = getattr(crawler, _ATTRIBUTE, None)
    if record is None:
        template = record_file_setting(crawler.settings)
        record = False if template is None else CrawlRecord(crawler, template, clock or Clock())
        setattr(crawler, _ATTRIBUTE, record)
    return record if isinstance(record, CrawlRecord) else None


def without_record(crawler: Crawler) -> None:
    """``crawler`` keeps no record, whatever ``ROBOTSTXT_RECORD_FILE`` says: the
    crawls of ``scrapy robotstxt``, which prove nothing a crawl did."""
    setattr(crawler, _ATTRIBUTE, False)


def record_path(template: str, spider_name: str, now: float) -> str:
    """``template`` with Scrapy's feed placeholders: ``%(name)s`` (the spider's
    name) and ``%(time)s`` (the start time, UTC, as Scrapy's feeds write it)."""
    moment = datetime.datetime.fromtimestamp(now, tz=datetime.timezone.utc)
    stamp = moment.replace(microsecond=0, tzinfo=None).isoformat().replace(":", "-")
    try:
        return template % {"name": spider_name, "time": stamp}
    except (KeyError, ValueError, TypeError) as error:
        raise SettingError(
            f"{SETTING} = {template!r}: a placeholder other than %(name)s and %(time)s ({error!r})"
        ) from None


def _version() -> str:
    try:
        return metadata.version("scrapy-rfc9309")
    except metadata.PackageNotFoundError:
        return "unknown"


class CrawlRecord:
    """The record of one crawl: a header, then one line per copy, request and page."""

    def __init__(self, crawler: Crawler, template: str, clock: Clock) -> None:
        settings = robotstxt_settings(crawler)
        self.clock = clock
        started = self.clock.time()
        spider = getattr(crawler.spider, "name", None) or "spider"
        path = record_path(template, str(spider), started)
        assert crawler.stats is not None
        stream, last = open_record_file(path)
        self.file = RecordFile(path, stream, crawler.stats, self.clock, last)
        #: site -> the copies put in force, newest last, each with its line's hash
        self._copies: dict[str, list[tuple[SiteOutcome, str]]] = {}
        #: site -> its tdmrep.json in force and its line's hash
        self._tdmreps: dict[str, tuple[TdmRep, str]] = {}
        self.file.add(
            header_entry(
                version=_version(),
                token=settings.token_for_header(None),
                policy=settings.policy,
                max_size=settings.max_size,
                auth_disallow=settings.auth_disallow,
                page={
                    "meta_obey": settings.meta_obey,
                    "noindex": settings.meta_noindex,
                    "noai": settings.meta_noai,
                },
                started=started,
                spider=str(spider),
            )
        )
        crawler.signals.connect(self.close, signal=signals.engine_stopped)
        logger.info("Recording every robots.txt decision in %s (%s)", path, SETTING)

    # -- copies in force -------------------------------------------------------------

    def robots_in_force(self, site: str, outcome: SiteOutcome, full: SiteOutcome | None) -> str:
        """``outcome`` (as the site table keeps it) is in force for ``site`` now;
        ``full``: the same as fetched, with its whole parsed file. Returns the
        hash of its line (written once per copy)."""
        known = self._copies.setdefault(site, [])
        for kept, digest in known:
            if kept is outcome:
                return digest
        source = full if full is not None else outcome
        robots = source.robots
        body = None
        truncated = False
        if robots is not None:
            body = robots._body()
            truncated = bool(getattr(robots, "truncated", False))
        digest = self.file.add(
            robots_entry(site, source, body, self._fetched_at(source), truncated)
        )
        known.append((outcome, digest))
        del known[:-_COPIES_KEPT]
        return digest

    def _fetched_at(self, outcome: SiteOutcome) -> float:
        """The wall-clock time of ``outcome``'s fetch (a stored copy's own, RFC 9309
        2.4), from its monotonic one; now when it is not known."""
        now = self.clock.time()
        fetched = outcome.fetched_at
        if fetched is None:
            return now
        return now - max(0.0, self.clock.monotonic() - fetched)

    def tdmrep_in_force(self, site: str, rules: TdmRep) -> str:
        """``rules`` is ``site``'s tdmrep.json in force; the hash of its line."""
        known = self._tdmreps.get(site)
        if known is not None and known[0] is rules:
            return known[1]
        digest = self.file.add(tdmrep_entry(site, rules, rules.source, self.clock.time()))
        self._tdmreps[site] = (rules, digest)
        return digest

    # -- requests --------------------------------------------------------------------

    def decided(
        self,
        decision: RequestDecision,
        site: str,
        request: Request,
        tdmrep: TdmRep | TdmRepUnread | None,
    ) -> None:
        """``request`` was decided (downloaded or dropped) as ``decision`` says."""
        copy = self.robots_in_force(site, decision.outcome, None)
        named: Any = None
        if tdmrep is not None:
            error = getattr(tdmrep, "error", None)
            if hasattr(tdmrep, "rules"):
                named = self.tdmrep_in_force(site, tdmrep)  # type: ignore[arg-type]
            else:
                named = {"error": error}
        entry = request_entry(
            decision,
            site=site,
            method=request.method,
            now=self.clock.time(),
            robots=copy,
            tdmrep=named,
        )
        digest = self.file.add(entry)
        if decision.fetch:
            request.meta[META_RECORD] = digest

    def dropped_at_close(self, site: str, request: Request, reason: str) -> None:
        """``request`` was dropped because the crawl closed before its site's
        robots.txt was settled: never decided by one."""
        self.file.add(
            {
                "type": "request",
                "time": iso(self.clock.time()),
                "url": request.url,
                "method": request.method,
                "site": site,
                "decision": "dropped",
                "cause": "closing",
                "reason": reason,
                "robots": None,
            }
        )

    # -- pages -----------------------------------------------------------------------

    def page(self, request: Request, entry: dict[str, Any]) -> None:
        """What a downloaded page said (status, directives, usage signals) and what
        the crawl does with it; tied to its request line."""
        self.file.add(
            {
                "type": "page",
                "time": iso(self.clock.time()),
                "request": request.meta.get(META_RECORD),
                **entry,
            }
        )

    def page_drop(self, page: str, what: str, target: str | None, why: str) -> None:
        """Something a page's callback gave was dropped for the page's signals:
        ``what`` is ``"link"`` (nofollow) or ``"item"`` (noindex, usage)."""
        self.file.add(
            {
                "type": "page_drop",
                "time": iso(self.clock.time()),
                "page": page,
                "what": what,
                "target": target,
                "why": why,
            }
        )

    def close(self) -> None:
        """The close line, the last lines written, the file closed; the chain's
        head logged (keep it elsewhere: it anchors the file)."""
        if self.file.closed:
            return
        self.file.add(close_entry(self.clock.time(), self.file.counts))
        head = self.file.chain.last
        self.file.close()
        logger.info(
            "Record %s closed: %d lines; the hash of its last line is %s "
            "(`scrapy robotstxt audit %s` checks it)",
            self.file.path,
            sum(self.file.counts.values()),
            head,
            self.file.path,
        )

"""What robots.txt did during one crawl: the close summary and the JSON report. Pure.

Stats hold the totals; this adds what stats cannot: which rule, on which
site and line, dropped how many requests, and one record per site (the
robots.txt URL chain, outcome, status, size, when it was fetched, requests
allowed and dropped), what a user attaches to a compliance report.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sites._outcome import Kind
from ._per_crawler import kept_on

if TYPE_CHECKING:
    from ..parser._matcher import Verdict
    from ..sites._outcome import SiteOutcome

__all__ = ["CrawlReport", "SiteRecord", "allowed_verdict", "report_for"]

#: Distinct (site, line, rule) triples remembered; beyond, only known ones count.
MAX_RULES_TRACKED = 10_000
#: Sites with a record; beyond, only known sites are counted (the stats keep the totals).
MAX_SITES_TRACKED = 100_000
#: Top rules listed per site in the JSON report.
TOP_RULES_PER_SITE = 10
REPORT_FORMAT = 1


class SiteRecord:
    """One site's robots.txt as the crawl met it (the last fetch), and its requests."""

    __slots__ = (
        "allowed",
        "chain",
        "dropped",
        "dropped_at_close",
        "failed",
        "fetched_at",
        "fetches",
        "lifetime",
        "outcome",
        "recovered_after",
        "size",
        "status",
    )

    def __init__(self) -> None:
        self.chain: tuple[tuple[str, int | None], ...] = ()
        self.outcome: str | None = None
        self.status: int | None = None
        self.size: int | None = None
        self.fetched_at: float | None = None
        self.fetches = 0
        self.lifetime: str | None = None
        self.allowed = 0
        self.dropped = 0
        self.dropped_at_close = 0
        #: unreachable fetches in a row so far (RFC 9309 2.3.1.4)
        self.failed = 0
        #: the attempts it took to retrieve the robots.txt after it was unreachable
        self.recovered_after: int | None = None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class CrawlReport:
    """Counts of dropped requests per deciding rule and per site, bounded in memory."""

    __slots__ = ("drops_by_rule", "drops_by_usage", "items_by_usage", "sites", "usage_stated_by")

    def __init__(self) -> None:
        self.drops_by_rule: Counter[tuple[str, int, str]] = Counter()
        self.sites: dict[str, SiteRecord] = {}
        #: (site, refusing preference) -> requests dropped before download (ROBOTSTXT_PURPOSES)
        self.drops_by_usage: Counter[tuple[str, str]] = Counter()
        #: (site, preference as stated, with its source) -> pages read with it in force
        #: (ROBOTSTXT_PURPOSES: every source, Content-Signal's ``use`` level included)
        self.usage_stated_by: Counter[tuple[str, str]] = Counter()
        #: (site, refusing preference) -> items dropped of responses that refuse a purpose
        self.items_by_usage: Counter[tuple[str, str]] = Counter()

    def item_dropped_by_usage(self, site: str, preference: str) -> None:
        """An item of a ``site`` response was dropped: ``preference`` refuses a purpose."""
        key = (site, preference)
        if key in self.items_by_usage or len(self.items_by_usage) < MAX_RULES_TRACKED:
            self.items_by_usage[key] += 1

    def usage_stated(self, site: str, preferences: Iterable[Any]) -> None:
        """A page of ``site`` was read with these usage ``preferences`` in force
        (each with its source: robots.txt, tdmrep.json, a header, meta)."""
        for preference in preferences:
            key = (site, preference.describe())
            if key in self.usage_stated_by or len(self.usage_stated_by) < MAX_RULES_TRACKED:
                self.usage_stated_by[key] += 1

    def top_usage(self, count: int) -> list[tuple[int, str, str, str]]:
        """The preferences that dropped the most: ``(count, "request" or "item", site,
        preference)``, most first; requests and items are counted apart, never summed."""
        if count <= 0:
            return []
        ranked = [(n, "request", site, text) for (site, text), n in self.drops_by_usage.items()]
        ranked += [(n, "item", site, text) for (site, text), n in self.items_by_usage.items()]
        ranked.sort(key=lambda entry: -entry[0])
        return ranked[:count]

    def dropped_by_usage(self, site: str, preference: str) -> None:
        """A request to ``site`` was dropped: ``preference`` refuses a declared purpose."""
        key = (site, preference)
        if key in self.drops_by_usage or len(self.drops_by_usage) < MAX_RULES_TRACKED:
            self.drops_by_usage[key] += 1

    def _site(self, site: str) -> SiteRecord | None:
        record = self.sites.get(site)
        if record is None and len(self.sites) < MAX_SITES_TRACKED:
            record = self.sites[site] = SiteRecord()
        return record

    def dropped_by_rule(self, site: str, line: int, rule: str) -> None:
        key = (site, line, rule)
        if key in self.drops_by_rule or len(self.drops_by_rule) < MAX_RULES_TRACKED:
            self.drops_by_rule[key] += 1

    def fetched(self, site: str, outcome: SiteOutcome, *, now: float | None = None) -> None:
        """A robots.txt fetch of ``site`` came to ``outcome`` (before it is compacted)."""
        record = self._site(site)
        if record is None:
            return
        record.fetches += 1
        record.chain = outcome.chain
        record.outcome = outcome.kind.value
        record.status = outcome.chain[-1][1] if outcome.chain else None
        body = getattr(outcome.robots, "body", None)
        record.size = len(body) if isinstance(body, bytes) else None
        record.fetched_at = time.time() if now is None else now
        record.lifetime = outcome.lifetime or None
        if outcome.kind is Kind.UNREACHABLE:
            record.failed += 1
        elif record.failed:
            record.recovered_after, record.failed = record.failed + 1, 0

    def decided(self, site: str, allowed: bool) -> None:
        """A request to ``site`` was let through or dropped after a check."""
        record = self._site(site)
        if record is not None:
            if allowed:
                record.allowed += 1
            else:
                record.dropped += 1

    def dropped_at_close(self, site: str) -> None:
        record = self._site(site)
        if record is not None:
            record.dropped_at_close += 1

    def recoveries(self) -> list[int]:
        """For each site whose robots.txt was retrieved after being unreachable
        (and is not unreachable again), the attempts it took, the last included."""
        return [
            record.recovered_after
            for record in self.sites.values()
            if record.recovered_after is not None and not record.failed
        ]

    def top_rules(self, count: int) -> list[tuple[tuple[str, int, str], int]]:
        return self.drops_by_rule.most_common(count) if count > 0 else []

    def as_json(self, *, top_rules: int = TOP_RULES_PER_SITE) -> dict[str, Any]:
        """The report as JSON-ready data: one record per site, sites sorted."""
        rules_by_site: dict[str, list[dict[str, Any]]] = {}
        for (site, line, rule), count in self.drops_by_rule.most_common():
            rules = rules_by_site.setdefault(site, [])
            if len(rules) < top_rules:
                rules.append({"line": line, "rule": rule, "dropped": count})
        usage_by_site: dict[str, list[dict[str, Any]]] = {}
        for (site, preference), count in self.drops_by_usage.most_common():
            usage_by_site.setdefault(site, []).append(
                {"preference": preference, "requests_dropped": count}
            )
        for (site, preference), count in self.items_by_usage.most_common():
            usage_by_site.setdefault(site, []).append(
                {"preference": preference, "items_dropped": count}
            )
        stated_by_site: dict[str, list[dict[str, Any]]] = {}
        for (site, preference), count in self.usage_stated_by.most_common():
            stated_by_site.setdefault(site, []).append({"preference": preference, "pages": count})
        usage_sites = sorted((set(usage_by_site) | set(stated_by_site)) - set(self.sites))
        return {
            "format": REPORT_FORMAT,
            "sites": [
                {
                    "site": site,
                    "robots_txt": [{"url": url, "status": status} for url, status in record.chain],
                    "outcome": record.outcome,
                    "status": record.status,
                    "size": record.size,
                    "fetched_at": _iso(record.fetched_at),
                    "fetches": record.fetches,
                    "lifetime": record.lifetime,
                    "requests_allowed": record.allowed,
                    "requests_dropped": record.dropped + record.dropped_at_close,
                    "requests_dropped_at_close": record.dropped_at_close,
                    "top_rules": rules_by_site.get(site, []),
                    "usage_dropped": usage_by_site.get(site, []),
                    "usage_stated": stated_by_site.get(site, []),
                }
                for site, record in sorted(self.sites.items())
            ]
            + [
                {
                    "site": site,
                    "usage_dropped": usage_by_site.get(site, []),
                    "usage_stated": stated_by_site.get(site, []),
                }
                for site in usage_sites
            ],
        }

    def write_json(self, path: str | os.PathLike[str], **extra: Any) -> Path:
        """Write :meth:`as_json` (plus ``extra`` top-level keys) to ``path`` atomically."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = {**extra, **self.as_json()}
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would create it, not mkstemp's 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2, ensure_ascii=False)
                out.write("\n")
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def allowed_verdict(outcome: SiteOutcome, url: str, token: str) -> Verdict:
    """The verdict (deciding line, or none) of a request ``outcome`` lets through.

    For ``meta["robotstxt_explain"]``: a full check, done only when asked.
    """
    from ..parser._matcher import ALLOWED_BY_DEFAULT

    if outcome.robots is None:
        return ALLOWED_BY_DEFAULT
    return outcome.robots.check(url=url, agent=token)


#: The crawler attribute the report is kept in.
_ATTRIBUTE = "_robotstxt_report"


def report_for(crawler: Any) -> CrawlReport:
    """The one report of ``crawler``, kept on it, shared by the middleware and the extension."""
    return kept_on(crawler, _ATTRIBUTE, CrawlReport)

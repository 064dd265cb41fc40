"""What robots.txt did during one crawl: the data of the close summary. Pure.

Stats hold the totals; this adds what stats cannot: which rule, on which
site and line, dropped how many requests.
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from weakref import WeakKeyDictionary

__all__ = ["CrawlReport", "report_for"]

#: Distinct (site, line, rule) triples remembered; beyond, only known ones count.
MAX_RULES_TRACKED = 10_000


class CrawlReport:
    """Counts of dropped requests per deciding rule, bounded in memory."""

    __slots__ = ("drops_by_rule",)

    def __init__(self) -> None:
        self.drops_by_rule: Counter[tuple[str, int, str]] = Counter()

    def dropped_by_rule(self, site: str, line: int, rule: str) -> None:
        key = (site, line, rule)
        if key in self.drops_by_rule or len(self.drops_by_rule) < MAX_RULES_TRACKED:
            self.drops_by_rule[key] += 1

    def top_rules(self, count: int) -> list[tuple[tuple[str, int, str], int]]:
        return self.drops_by_rule.most_common(count)


_REPORTS: WeakKeyDictionary[Any, CrawlReport] = WeakKeyDictionary()


def report_for(crawler: Any) -> CrawlReport:
    """The one report of ``crawler``, shared by the middleware and the extension."""
    report = _REPORTS.get(crawler)
    if report is None:
        report = _REPORTS[crawler] = CrawlReport()
    return report

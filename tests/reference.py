"""Straightforward readings to compare the parser's fast paths with: the
groups of a body read line by line with ``scan`` and ``read_line`` only
(RFC 9309 2.1, 2.2.1, 2.2.4), as the parser read them before its lines were
split in C."""

from __future__ import annotations

from scrapy_rfc9309.parser._groups import Group, Grouping, _agent_token, _crawl_delay, _warn_rule
from scrapy_rfc9309.parser._lines import Warnings, read_line, scan


def reference_grouping(body: bytes, warnings: Warnings) -> Grouping:
    """Every line through :func:`read_line`, in one pass."""
    groups: list[Group] = []
    by_token: dict[str, list[int]] = {}
    sitemaps: list[str] = []
    current: Group | None = None
    rules_started = False
    pattern_count = 0
    usage_count = 0
    for number, line in enumerate(scan(body), 1):
        read = read_line(line, number, warnings)
        if read is None:
            continue
        key, value = read
        if key in ("disallow", "allow"):
            if current is None:
                warnings.add(number, "rule before any user-agent line ignored")
                continue
            rules_started = True
            current.rules.append((key == "allow", value, number))
            if value:
                pattern_count += 1
                if value[:1] not in (b"/", b"*"):
                    _warn_rule(number, value, warnings)
        elif key == "user-agent":
            if current is None or rules_started:
                current = Group()
                groups.append(current)
                rules_started = False
            token = _agent_token(number, value, warnings)
            current.agents.append((number, token))
            if token:
                indexes = by_token.setdefault(token, [])
                if not indexes or indexes[-1] != len(groups) - 1:
                    indexes.append(len(groups) - 1)
        elif key == "sitemap":
            if value:
                sitemaps.append(value.decode("utf-8", "replace"))
        elif key == "crawl-delay":
            delay = _crawl_delay(number, value, warnings)
            if current is None:
                warnings.add(number, "crawl-delay before any user-agent line ignored")
            elif delay is not None and (current.crawl_delay is None or delay > current.crawl_delay):
                current.crawl_delay = delay
        elif key in ("content-usage", "content-signal"):
            if current is None:
                warnings.add(number, f"{key} before any user-agent line ignored")
            else:
                current.usage_lines = [*(current.usage_lines or ()), number]
                usage_count += 1
    return Grouping(body, groups, by_token, tuple(sitemaps), pattern_count, usage_count)


def assert_same_grouping(body: bytes) -> None:
    """The parser's groups, rules, sitemaps and warnings are the reference's."""
    from scrapy_rfc9309.parser._groups import group_all, group_steps
    from scrapy_rfc9309.parser._steps import run_to_end

    reference_warnings = Warnings()
    reference = reference_grouping(body, reference_warnings)
    for group in (group_all, lambda b, w: run_to_end(group_steps(b, w))):
        ours_warnings = Warnings()
        ours = group(body, ours_warnings)
        _assert_same(body, ours, ours_warnings, reference, reference_warnings)


def _assert_same(
    body: bytes,
    ours: Grouping,
    ours_warnings: Warnings,
    reference: Grouping,
    reference_warnings: Warnings,
) -> None:
    assert ours.groups == reference.groups, body
    assert ours.by_token == reference.by_token, body
    assert ours.sitemaps == reference.sitemaps, body
    assert ours.pattern_count == reference.pattern_count, body
    assert ours.usage_count == reference.usage_count, body
    assert ours_warnings.items == reference_warnings.items, body

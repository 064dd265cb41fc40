"""Lint a robots.txt as site owners' checkers do (``scrapy robotstxt --lint``). Pure.

The findings are the parser's own warnings (each lenient reading and each
ignored line) plus checks of what search engines accept:

* a rule before any user-agent line is ignored (RFC 9309 2.1: rules belong
  to a group; the parser reports it);
* several ``User-agent: *`` groups: RFC 9309 2.2.1 merges them, but some
  checkers and crawlers read only the first;
* a rule longer than :data:`MAX_RULE_LENGTH` characters, or more than
  :data:`MAX_RULES` rules in the file: search engines ignore the rest;
* a relative ``Sitemap`` URL: RFC 9309 2.2.4 and sitemaps.org ask for an
  absolute URL.

Findings are ``(line, message)``, sorted by line.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ._groups import WILDCARD_AGENT
from ._lines import printable, read_line, scan
from ._robotstxt import RobotsTxt

__all__ = ["MAX_RULES", "MAX_RULE_LENGTH", "lint"]

#: Longest rule value (characters) that search engines read in full.
MAX_RULE_LENGTH = 1024
#: Rules per file that search engines read; the rest are ignored.
MAX_RULES = 2048


def lint(robots: RobotsTxt) -> list[tuple[int, str]]:
    """All findings for ``robots``, sorted by line (stable: parser warnings first)."""
    findings = list(robots.warnings)
    findings.extend(_duplicate_wildcard_groups(robots))
    findings.extend(_directive_checks(robots))
    return sorted(findings, key=lambda finding: finding[0])


def _duplicate_wildcard_groups(robots: RobotsTxt) -> list[tuple[int, str]]:
    groups = robots.groups_for(WILDCARD_AGENT)
    if len(groups) < 2:
        return []
    lines = [
        next(number for number, token in group.agents if token == WILDCARD_AGENT)
        for group in groups
    ]
    first = lines[0]
    return [
        (
            number,
            f"another 'User-agent: *' group (the first is at line {first}): RFC 9309 2.2.1 "
            "merges them, but some crawlers read only the first; merge them into one",
        )
        for number in lines[1:]
    ]


def _directives(robots: RobotsTxt) -> list[tuple[int, str, bytes]]:
    """``(line, key, value)`` of each directive line, comments and blanks skipped."""
    found = []
    for number, line in enumerate(scan(robots.body), 1):
        read = read_line(line, number, None)
        if read is not None:
            found.append((number, read[0], read[1]))
    return found


def _group_checks(directives: list[tuple[int, str, bytes]]) -> list[tuple[int, str]]:
    """What site owners misread about groups (RFC 9309 2.1, 2.2.4).

    * a record such as ``Crawl-delay`` between two user-agent lines does not
      end a group: the rules after the second apply to both agents (a file
      that gives 13 bots a Crawl-delay each, then ``User-agent: Yandex`` and
      ``Disallow: /``, disallows the whole site to all 14);
    * several ``Crawl-delay`` lines in one group: the first is used.
    """
    findings: list[tuple[int, str]] = []
    start = 0  # the group's first user-agent line; 0 before any
    has_rules, between, delay = False, 0, 0
    for number, key, _ in directives:
        if key == "user-agent":
            if not start or has_rules:
                start, has_rules, between, delay = number, False, 0, 0
            elif between:
                findings.append(
                    (
                        number,
                        f"this user-agent line joins the group of line {start}: the record "
                        f"at line {between} does not end a group (RFC 9309 2.2.4), so the "
                        "rules that follow apply to every agent named since; give each agent "
                        "its own rules if that is not what you mean",
                    )
                )
                between = 0
        elif not start:
            continue
        elif key in ("allow", "disallow"):
            has_rules = True
        else:
            if not has_rules:
                between = between or number
            if key == "crawl-delay":
                if delay:
                    findings.append(
                        (
                            number,
                            f"another Crawl-delay in the group of line {start}: the first "
                            f"(line {delay}) is used",
                        )
                    )
                delay = delay or number
    return findings


def _directive_checks(robots: RobotsTxt) -> list[tuple[int, str]]:
    directives = _directives(robots)
    findings = _group_checks(directives)
    in_group = False
    rules = 0
    for number, key, value in directives:
        if key == "user-agent":
            in_group = True
        elif key in ("allow", "disallow") and in_group:
            rules += 1
            if rules == MAX_RULES + 1:
                findings.append(
                    (
                        number,
                        f"more than {MAX_RULES} rules: search engines ignore this rule "
                        "and every one after it",
                    )
                )
            length = len(value.decode("utf-8", "replace"))
            if length > MAX_RULE_LENGTH:
                findings.append(
                    (
                        number,
                        f"rule of {length} characters: search engines read at most "
                        f"{MAX_RULE_LENGTH}",
                    )
                )
        elif key == "sitemap" and value:
            url = value.decode("utf-8", "replace")
            parts = urlsplit(url)
            if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
                findings.append(
                    (
                        number,
                        f"Sitemap {printable(value[:80])!r} is not an absolute http(s) URL "
                        "(RFC 9309 2.2.4)",
                    )
                )
    return findings

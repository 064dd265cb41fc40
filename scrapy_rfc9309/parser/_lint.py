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
  absolute URL;
* ``Content-Usage`` / ``Content-Signal`` lines (AIPREF attach draft,
  Content Signals Policy) that state less than their writer meant: an
  unknown category, a value other than the signal's own (``y`` / ``n``,
  ``yes`` / ``no``), a member that is not ``name=value``, a path read
  leniently or not at all, a category stated twice (on one line, or for the
  same path in one group: the most restrictive is used).

Findings are ``(line, message)``, sorted by line.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ._groups import WILDCARD_AGENT
from ._lines import printable, read_line, scan
from ._matcher import is_url, rule_pattern
from ._robotstxt import RobotsTxt
from ._usage import _MAX_MEMBERS, _MEMBER, VALUES, VOCABULARY, split_usage_value

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
    findings.extend(_usage_checks(directives))
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


_USAGE_KEYS = {"content-usage": "Content-Usage", "content-signal": "Content-Signal"}


def _usage_checks(directives: list[tuple[int, str, bytes]]) -> list[tuple[int, str]]:
    """Findings on ``Content-Usage`` / ``Content-Signal`` lines (see the module doc)."""
    findings: list[tuple[int, str]] = []
    start, has_rules = 0, False
    #: (group start, signal, path, category) -> the line that stated it first
    stated: dict[tuple[int, str, bytes | None, str], int] = {}
    for number, key, value in directives:
        if key == "user-agent":
            if not start or has_rules:
                start, has_rules = number, False
            continue
        if key in ("allow", "disallow"):
            has_rules = True
            continue
        name = _USAGE_KEYS.get(key)
        if name is None:
            continue
        if not start:  # the parser reports it: outside any group, ignored
            continue
        path, rest = split_usage_value(value)
        findings.extend((number, f"{name}: {text}") for text in _usage_path_checks(path))
        on_line: set[str] = set()
        members = rest.decode("utf-8", "replace").split(",", _MAX_MEMBERS)[:_MAX_MEMBERS]
        if not rest.strip():
            findings.append((number, f"{name}: no preference stated (e.g. train-ai=n)"))
            continue
        for member in members:
            text = _usage_member_check(key, member)
            if isinstance(text, str):
                findings.append((number, f"{name}: {text}"))
                continue
            if text is None:
                continue
            category, written = text
            if category in on_line:
                findings.append(
                    (
                        number,
                        f"{name}: {written!r} is stated twice on this line; the most "
                        "restrictive value is used",
                    )
                )
                continue
            on_line.add(category)
            first = stated.setdefault((start, key, path, category), number)
            if first != number:
                where = "every path" if path is None else f"path {printable(path[:80])!r}"
                findings.append(
                    (
                        number,
                        f"{name}: {written!r} for {where} is already stated at line {first} "
                        f"in the group of line {start}; the most restrictive value is used",
                    )
                )
    return findings


def _usage_path_checks(path: bytes | None) -> list[str]:
    """How the path of a usage line is read, when it is not as written."""
    if path is None:
        return []
    shown = printable(path[:80])
    if is_url(path):
        read = rule_pattern(path)
        if read == "/":
            return [f"path {shown!r} names only a host: the line matches no path"]
        return [f"path {shown!r} is a URL: read as its path {read!r} (as Allow/Disallow do)"]
    if path[:1] not in (b"/", b"*"):
        return [f"path {shown!r} does not start with '/': read as {'/' + shown!r}"]
    return []


def _usage_member_check(key: str, member: str) -> tuple[str, str] | str | None:
    """``(category, name)`` of a good member; else the finding (``None``: blank)."""
    text = member.strip()
    if not text:
        return None
    match = _MEMBER.match(text.lower())
    shown = printable(text[:80].encode("utf-8", "replace"))
    if match is None or match.group(2) is None:
        return f"{shown!r} is not name=value; ignored"
    name, value = match.group(1), match.group(2).strip('"')
    category = VOCABULARY.get((key, name))
    if category is None:
        known = ", ".join(sorted(written for signal, written in VOCABULARY if signal == key))
        return f"unknown category {name!r} (known: {known}); ignored"
    allowed = VALUES[key]
    if value not in allowed:
        return f"value {value!r} of {name} is not {' or '.join(allowed)}; ignored"
    return category, name

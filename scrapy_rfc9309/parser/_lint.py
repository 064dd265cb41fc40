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
  Content Signals Policy) that state less than their writer meant: a
  Content-Usage value that is not an RFC 9651 Dictionary (the reason named:
  nothing on the line is known), an unknown label, a value other than the
  signal's own (the Token ``y`` / ``n``, ``yes`` / ``no``), a member that is
  not ``name=value``, a first word that looks like a path but does not start
  with ``/``, a category stated twice (on one line: Content-Usage uses the
  last; or for the same path in one group: the most restrictive is used);
* user-agent lines separated only by usage lines: RFC 9309 groups them
  together (this parser's reading), the attach draft's grammar (``rule =/
  content-usage``) would start a new group;
* Crawl-delay lines whose value merging changed: the longest Crawl-delay of a
  group (and of every group naming the agent) applies to each of its agents.

Findings are ``(line, message)``, sorted by line.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import http_sf

from ._groups import WILDCARD_AGENT, _crawl_delay
from ._lines import BOM_IGNORED, Warnings, printable, read_line, scan
from ._robotstxt import RobotsTxt
from ._rule_forms import is_url, rule_pattern
from ._usage import SPEC_VERSIONS, USE_KEY, USE_LEVELS, VALUES, VOCABULARY
from ._usage_index import split_usage_value
from ._usage_values import _MAX_MEMBERS, _MEMBER, read_content_usage

__all__ = ["MAX_RULES", "MAX_RULE_LENGTH", "lint"]

#: Longest rule value (characters) that search engines read in full.
MAX_RULE_LENGTH = 1024
#: Rules per file that search engines read; the rest are ignored.
MAX_RULES = 2048


def lint(robots: RobotsTxt) -> list[tuple[int, str]]:
    """All findings for ``robots``, sorted by line (stable: parser warnings first).

    A UTF-8 byte order mark is no finding: the file is UTF-8 (RFC 9309 2.2), and
    a BOM before its first line is read as nothing (Google's robots.txt
    specification says so too)."""
    findings = [warning for warning in robots.warnings if warning != (1, BOM_IGNORED)]
    findings.extend(_duplicate_wildcard_groups(robots))
    findings.extend(_crawl_delay_across_groups(robots))
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
      ``Disallow: /``, disallows the whole site to all 14); when only
      ``Content-Usage`` lines separate them, the AIPREF attach grammar (``rule
      =/ content-usage``) would read a new group there;
    * several ``Crawl-delay`` lines in one group: the longest applies to each
      of its agents, which the findings say where it is not the agent's own.
    """
    findings: list[tuple[int, str]] = []
    group = _GroupDelays()
    for number, key, value in directives:
        if key == "user-agent":
            if not group.start or group.has_rules:
                findings.extend(group.findings())
                group = _GroupDelays(number)
            elif group.between:
                findings.append((number, group.joined_message(number)))
                group.between, group.usage_only = 0, True
            group.agent(number, value)
        elif not group.start:
            continue
        elif key in ("allow", "disallow"):
            group.has_rules = True
        else:
            if not group.has_rules:
                group.between = group.between or number
                group.usage_only = group.usage_only and key == "content-usage"
            if key == "crawl-delay":
                delay = _crawl_delay(number, value, Warnings())
                if delay is not None:
                    group.delay(number, delay)
    findings.extend(group.findings())
    return findings


_ATTACH = next(spec.version for spec in SPEC_VERSIONS if "attach" in spec.version)


class _GroupDelays:
    """One group's user-agent lines, in runs, and the Crawl-delay lines each run
    (or, after the rules, the whole group) is addressed to."""

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self.has_rules = False
        #: the first record between two user-agent lines, and whether every such
        #: record was a Content-Usage line
        self.between = 0
        self.usage_only = True
        #: runs of user-agent lines: ``(line, name)`` each, and their own delays
        self.runs: list[tuple[list[tuple[int, str]], list[tuple[int, float]]]] = []
        self.after_rules: list[tuple[int, float]] = []
        self.last_was_agent = False

    def agent(self, number: int, value: bytes) -> None:
        name = printable(value[:60])
        if not self.runs or not self.last_was_agent:
            self.runs.append(([], []))
        self.runs[-1][0].append((number, name))
        self.last_was_agent = True

    def delay(self, number: int, delay: float) -> None:
        if self.has_rules or not self.runs:
            self.after_rules.append((number, delay))
        else:
            self.runs[-1][1].append((number, delay))
        self.last_was_agent = False

    def joined_message(self, number: int) -> str:
        self.last_was_agent = False
        if self.usage_only:
            return (
                f"this user-agent line joins the group of line {self.start}: the Content-Usage "
                f"line at line {self.between} does not end a group (RFC 9309 2.2.4, as this "
                f"parser reads it), but the AIPREF attach grammar ({_ATTACH}: rule =/ "
                "content-usage) makes it a rule, after which this line would start a new "
                "group; give each agent its own rules if that is not what you mean"
            )
        return (
            f"this user-agent line joins the group of line {self.start}: the record "
            f"at line {self.between} does not end a group (RFC 9309 2.2.4), so the "
            "rules that follow apply to every agent named since; give each agent "
            "its own rules if that is not what you mean"
        )

    def findings(self) -> list[tuple[int, str]]:
        lines = sorted([*(d for run in self.runs for d in run[1]), *self.after_rules])
        if not lines:
            return []
        longest_line, longest = max(lines, key=lambda item: (item[1], -item[0]))
        found: list[tuple[int, str]] = []
        first = lines[0][0]
        for number, delay in lines:
            if number == first:
                if delay < longest:
                    found.append(
                        (
                            number,
                            f"Crawl-delay {delay:g} is not used: the group of line "
                            f"{self.start} has a longer one, {longest:g} s at line "
                            f"{longest_line}, and the longest Crawl-delay of a group applies "
                            "to each of its agents",
                        )
                    )
                continue
            found.append(
                (
                    number,
                    f"another Crawl-delay in the group of line {self.start}: the longest, "
                    f"{longest:g} s (line {longest_line}), applies to each of its agents",
                )
            )
        if len(self.runs) > 1:
            for agents, own in self.runs:
                asked = max((d for _, d in [*own, *self.after_rules]), default=None)
                if asked == longest:
                    continue
                said = "none" if asked is None else f"{asked:g} s"
                found.extend(
                    (
                        number,
                        f"user-agent {name!r} waits {longest:g} s (Crawl-delay at line "
                        f"{longest_line}), not {said} as the lines addressed to it ask: "
                        f"user-agent lines separated only by Crawl-delay lines share the "
                        f"group of line {self.start} (RFC 9309 2.2.4), and the longest "
                        "Crawl-delay of a group applies to each of its agents",
                    )
                    for number, name in agents
                )
        return found


def _crawl_delay_across_groups(robots: RobotsTxt) -> list[tuple[int, str]]:
    """Several groups for one agent with different Crawl-delays: RFC 9309 2.2.1
    merges them, and the longest applies."""
    findings: list[tuple[int, str]] = []
    for token in sorted(robots.tokens):
        groups = [g for g in robots.groups_for(token) if g.crawl_delay is not None]
        if len(groups) < 2:
            continue
        longest = max(groups, key=lambda g: g.crawl_delay or 0.0)
        assert longest.crawl_delay is not None
        where = next(number for number, name in longest.agents if name == token)
        for group in groups:
            if group.crawl_delay is not None and group.crawl_delay < longest.crawl_delay:
                number = next(number for number, name in group.agents if name == token)
                findings.append(
                    (
                        number,
                        f"user-agent {token!r} also has the group of line {where}, whose "
                        f"Crawl-delay {longest.crawl_delay:g} s is longer than this group's "
                        f"{group.crawl_delay:g} s: RFC 9309 2.2.1 merges an agent's groups, "
                        "and the longest Crawl-delay is used",
                    )
                )
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
        findings.extend((number, f"{name}: {text}") for text in _usage_path_checks(path, rest))
        if not rest.strip():
            findings.append((number, f"{name}: no preference stated (e.g. train-ai=n)"))
            continue
        if key == "content-usage":
            stated_here, texts = _content_usage_checks(rest)
        else:
            stated_here, texts = _content_signal_checks(rest)
        findings.extend((number, f"{name}: {text}") for text in texts)
        for category, written in stated_here:
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


_VOCAB = next(spec.version for spec in SPEC_VERSIONS if "vocab" in spec.version)


def _content_usage_checks(rest: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """``(category, name)`` a Content-Usage value states, and the findings: the
    reason it is no RFC 9651 Dictionary, unknown labels, values other than the
    Token ``y`` / ``n``, keys stated twice (the last applies)."""
    reading = read_content_usage(rest)
    if reading.error:
        return [], [
            f"{reading.error}: no preference on this line is known ({_VOCAB}: a value "
            "that does not parse leaves every preference unknown)"
        ]
    known = ", ".join(sorted(w for signal, w in VOCABULARY if signal == "content-usage"))
    texts: list[str] = []
    for key, why in reading.ignored:
        if why == "unknown label":
            texts.append(f"unknown label {key!r} (the vocabulary's: {known}); ignored")
        else:
            texts.append(f"{key}: {why}; its preference is unknown")
    twice: list[str] = []

    def duplicate(key: str, where: str) -> None:
        if where == "dictionary" and key not in twice:
            twice.append(key)

    http_sf.parse(rest.strip(b" \t"), tltype="dictionary", on_duplicate_key=duplicate)
    texts.extend(
        f"{key!r} is stated twice on this line; the last is used (RFC 9651 Dictionary)"
        for key in twice
    )
    names = {
        category: key for (signal, key), category in VOCABULARY.items() if signal == "content-usage"
    }
    return [(category, names[category]) for category, _ in reading.preferences], texts


def _content_signal_checks(rest: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """``(category, name)`` a Content-Signal value states, and the findings."""
    texts: list[str] = []
    found: list[tuple[str, str]] = []
    on_line: set[str] = set()
    members = rest.decode("utf-8", "replace").split(",", _MAX_MEMBERS)[:_MAX_MEMBERS]
    for member in members:
        text = _usage_member_check("content-signal", member)
        if isinstance(text, str):
            texts.append(text)
            continue
        if text is None:
            continue
        category, written = text
        if category in on_line:
            texts.append(
                f"{written!r} is stated twice on this line; the most restrictive value is used"
            )
            continue
        on_line.add(category)
        found.append((category, written))
    return found, texts


def _usage_path_checks(path: bytes | None, rest: bytes) -> list[str]:
    """How the path of a usage line is read: a first word that looks like a path
    but does not start with ``/`` is no path (AIPREF attach: a path starts with
    ``/``), and the line states nothing."""
    if path is not None:
        return []
    first = rest.split(None, 1)[0] if rest.strip() else b""
    if not (first[:1] == b"*" or is_url(first) or (b"/" in first and b"=" not in first)):
        return []
    shown = printable(first[:80])
    if not is_url(first):
        hint = f"write {'/' + shown.lstrip('/')!r}"
    elif rule_pattern(first) == "/":
        hint = "it names only a host; write a path on this site's own host"
    else:
        hint = f"write its path {rule_pattern(first)!r}"
    return [f"{shown!r} is not a path: a path starts with '/' ({_ATTACH}); {hint}"]


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
    if key == "content-signal" and name == USE_KEY:
        if value in USE_LEVELS:
            return None  # read and reported, enforced nowhere (Content Signals Policy)
        return f"value {value!r} of use is not {', '.join(USE_LEVELS)}; ignored"
    category = VOCABULARY.get((key, name))
    if category is None:
        names = {written for signal, written in VOCABULARY if signal == key}
        if key == "content-signal":
            names.add(USE_KEY)
        known = ", ".join(sorted(names))
        return f"unknown category {name!r} (known: {known}); ignored"
    allowed = VALUES[key]
    if value not in allowed:
        return f"value {value!r} of {name} is not {' or '.join(allowed)}; ignored"
    return category, name

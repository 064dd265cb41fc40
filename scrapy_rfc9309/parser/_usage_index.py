"""robots.txt's usage lines: each group's ``Content-Usage`` / ``Content-Signal``
lines, read and matched per product token (RFC 9309 2.2.1, 2.2.2). Pure.

A line's value is read by ``_usage_values``; a path-scoped line (AIPREF
attach: ``Content-Usage: /ai-ok/ train-ai=y``) matches as Allow / Disallow do,
compiled by the same matcher (:class:`~._matcher.AgentMatcher`): per category
the longest matching path decides, a line without a path is the least
specific, and ``n`` wins a tie.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ._encoding import canonical_path
from ._lines import printable, read_line, scan
from ._matcher import AgentMatcher
from ._rulekey import key_allows, key_line
from ._usage import NO_PREFERENCES, USE_KEY, USE_LEVELS, Preference, Usage
from ._usage_values import content_signal_use, parse_content_usage

__all__ = [
    "MAX_RECORDS",
    "Record",
    "UsageIndex",
    "parse_usage_line",
    "split_usage_value",
    "usage_index_of",
]


class Record(NamedTuple):
    """One Content-Usage / Content-Signal line of a group, as read."""

    line: int
    rule: str
    #: the path pattern as written (``None``: no path, every path); compiled by
    #: the Allow / Disallow compiler (:class:`~._matcher.AgentMatcher`)
    path: bytes | None
    preferences: tuple[tuple[str, bool], ...]
    #: Content-Signal's ``use`` level (:data:`USE_LEVELS`), else ``None``
    use: str | None = None


def split_usage_value(value: bytes) -> tuple[bytes | None, bytes]:
    """``[path] preferences``: the path pattern as written (or ``None``) and the rest.

    AIPREF attach: the first word is a path only when the value starts with
    ``/`` (``Content-Usage: /ai-ok/ train-ai=y``); any other value is the
    preferences whole (so ``ai-ok/ train-ai=y`` is no Dictionary and states
    nothing; the linter says so).
    """
    stripped = value.strip(b" \t")
    if stripped[:1] != b"/":
        return None, stripped
    parts = stripped.split(None, 1)
    return parts[0], parts[1] if len(parts) > 1 else b""


def parse_usage_line(key: str, value: bytes, line: int, rule: str) -> Record | None:
    """A robots.txt ``Content-Usage`` / ``Content-Signal`` line's value, read.

    ``[path] preferences`` (see :func:`split_usage_value`); the path is
    matched as an Allow / Disallow pattern (RFC 9309 2.2.2), by the same
    compiler and matcher. ``None`` when it states nothing known.
    """
    path, rest = split_usage_value(value)
    text = rest.decode("utf-8", "replace")
    preferences = parse_content_usage(text, key)
    use = content_signal_use(text) if key == "content-signal" else None
    if not preferences and use is None:
        return None
    return Record(line, rule, path, tuple(preferences), use)


class _Compiled(NamedTuple):
    """One token's usage lines, ready for checks: per category, the lines without
    a path (most restrictive first) and a rule matcher of the path-scoped ones."""

    general: dict[str, Preference]
    #: category -> matcher whose rule "allows" where the line says ``n`` (so that
    #: ``n`` wins a tie, as allow does for rules), and the lines by number
    scoped: dict[str, AgentMatcher]
    by_line: dict[int, Record]


class UsageIndex:
    """Each group's usage lines, and which groups govern which token (RFC 9309 2.2.1).

    Built from a parsed file only when it has usage lines; kept by the site
    cache next to the compiled rules. A group's records are stored once,
    however many agents name it; at most :data:`MAX_RECORDS` lines are read.
    Path-scoped lines are compiled per token on first use, by the Allow /
    Disallow compiler (one :class:`~._matcher.AgentMatcher` per category).
    """

    __slots__ = ("_by_group", "_by_token", "_compiled")

    def __init__(
        self, by_group: dict[int, tuple[Record, ...]], by_token: dict[str, list[int]]
    ) -> None:
        self._by_group = by_group
        #: token (lower case, ``*`` for the fallback) -> its groups with usage lines
        self._by_token = by_token
        self._compiled: dict[str, _Compiled] = {}

    def records(self, token: str) -> list[Record]:
        by_group = self._by_group
        return [record for index in self._by_token.get(token, ()) for record in by_group[index]]

    def _compile(self, token: str) -> _Compiled:
        compiled = self._compiled.get(token)
        if compiled is not None:
            return compiled
        general: dict[str, Preference] = {}
        scoped_rules: dict[str, list[tuple[bool, bytes, int]]] = {}
        by_line: dict[int, Record] = {}
        for record in self.records(token):
            by_line[record.line] = record
            stated = [
                Preference(category, allowed, "robots.txt", record.line, record.rule)
                for category, allowed in record.preferences
            ]
            if record.use is not None:
                stated.append(
                    Preference(
                        USE_KEY, True, "robots.txt", record.line, record.rule, None, record.use
                    )
                )
            for preference in stated:
                category = preference.category
                if record.path is None:
                    current = general.get(category)
                    if current is None or preference.narrower(current):
                        general[category] = preference
                else:
                    # the matcher's "allow" is the narrower reading, which wins a tie
                    narrow = not preference.allowed or preference.level == USE_LEVELS[0]
                    scoped_rules.setdefault(category, []).append((narrow, record.path, record.line))
        scoped = {category: AgentMatcher(rules) for category, rules in scoped_rules.items()}
        compiled = _Compiled(general, scoped, by_line)
        if token in self._by_token:  # bounded: one entry per token of the file
            self._compiled[token] = compiled
        return compiled

    def usage(self, url: str, token: str) -> Usage:
        """The preferences of ``token``'s groups for ``url``: per category the
        longest matching path, as for Allow / Disallow (RFC 9309 2.2.2), ``n``
        winning a tie; a line without a path is the least specific."""
        if token not in self._by_token:
            return NO_PREFERENCES
        compiled = self._compile(token)
        found = dict(compiled.general)
        if compiled.scoped:
            path = canonical_path(url)
            for category, matcher in compiled.scoped.items():
                key = matcher.decide(path)
                if key is None:
                    continue
                record = compiled.by_line[key_line(key)]
                if category == USE_KEY:
                    found[category] = Preference(
                        category, True, "robots.txt", record.line, record.rule, None, record.use
                    )
                    continue
                found[category] = Preference(
                    category, not key_allows(key), "robots.txt", record.line, record.rule
                )
        return Usage(found)


#: Usage lines read per file; a robots.txt rarely has more than a few.
MAX_RECORDS = 1000


def usage_index_of(
    body: bytes, usage_lines: Sequence[list[int] | None], by_token: Mapping[str, list[int]]
) -> UsageIndex:
    """The usage records of each group (RFC 9309 2.2.1, 2.2.4), from what it
    reads of a grouping: the body, each group's usage line numbers, and the
    groups of each product token."""
    wanted: dict[int, int] = {}
    for index, lines in enumerate(usage_lines):
        for number in lines or ():
            if len(wanted) < MAX_RECORDS:
                wanted[number] = index
    found: dict[int, list[Record]] = {}
    last: int = max(wanted, default=0)
    for number, line in enumerate(scan(body), 1):
        if number > last:
            break
        group_index = wanted.get(number)
        if group_index is None:
            continue
        read = read_line(line, number, None)
        if read is None:
            continue
        raw_key, colon, value = line
        rule = printable((raw_key + colon + value).strip(b" \t"))
        record = parse_usage_line(read[0], read[1], number, rule)
        if record is not None:
            found.setdefault(group_index, []).append(record)
    by_group = {index: tuple(records) for index, records in found.items()}
    by_token = {
        token: kept
        for token, indexes in by_token.items()
        if (kept := [index for index in indexes if index in by_group])
    }
    return UsageIndex(by_group, by_token)

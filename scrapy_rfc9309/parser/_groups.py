"""Directive lines to groups (RFC 9309 2.1 and 2.2.1). Pure, no Scrapy import.

A group is a run of user-agent lines followed by rules; it ends at the next
user-agent line that follows a rule, or at the end of the file. Sitemap,
Crawl-delay and unknown lines never end a group nor a run of user-agent lines
(RFC 9309 2.2.4). Rules before the first user-agent line are ignored.
A group's Crawl-delay is the longest of its valid Crawl-delay lines: user-agent
lines separated only by Crawl-delay lines form one group, and no agent of it
waits less than a line addressed to it asks.

Groups are kept once, whatever the number of agents naming them: an index maps
each product token to its groups, so 2,000 user-agent lines over 2,000 rules
cost 2,000 index entries, not four million rule copies. A group keeps its
rules as read (allow, value, line), so the first matcher compiled takes them
with no look-up. A parsed file then drops the whole grouping, keeping its
token index, and groups the body again if asked for more
(``RobotsTxt._groups``).

Comments are removed in C (one ``re.sub`` over a slice of lines, unless
most of its lines have one: then each line is cut) and lines split in C
(``bytes.split``); the common line ("Disallow: /x") costs one
``partition`` and one dict look-up in Python, as does a key read before in
any file ("Host: x", misspelt keys: :func:`~._lines.key_reading`) and a
plain user-agent name; any other line is read as
:func:`~scrapy_rfc9309.parser._lines.scan` reads it.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter

from ._agent import is_valid_token, product_token
from ._lines import EXACT_KEYS, Warnings, key_reading, printable, read_line, split_line
from ._rule_forms import Rule, is_url, rule_pattern
from ._steps import Steps
from ._usage_index import MAX_RECORDS
from ._usage_values import MAX_MEMBERS

__all__ = ["WILDCARD_AGENT", "Group", "Grouping", "group_all", "group_steps"]

WILDCARD_AGENT = "*"
_PLAIN_NAME = re.compile(rb"[A-Za-z0-9_.-]+")
# A comment: from "#" to the line's end (RFC 9309 2.2), removed from a
# slice of lines in one pass in C before the lines are read, when the slice
# has few: each removal costs about what a search of two lines for one does.
_COMMENT = re.compile(rb"#[^\n]*")
#: User-agent values already read as one plain product name ("Googlebot"),
#: by their octets, up to :data:`_AGENTS_KEPT` (real files name the same
#: few agents; emptied when full, so a file of junk names keeps them no
#: longer than the next such file): a look-up, not a match, a decode and a
#: ``lower``.
_PLAIN_AGENTS: dict[bytes, str] = {}
_AGENTS_KEPT = 4096
_AGENT_KEPT_LENGTH = 64


def _split_lines(chunk: bytes) -> tuple[list[bytes], bool]:
    """The lines of ``chunk``, and whether they may hold a comment (else
    their comments were removed in one pass in C, or there were none)."""
    comments = chunk.count(b"#")
    if not comments:
        return chunk.split(b"\n"), False
    if comments * 5 < chunk.count(b"\n") * 2:  # on fewer than 2 lines in 5
        return _COMMENT.sub(b"", chunk).split(b"\n"), False
    return chunk.split(b"\n"), True  # on most lines: cut line by line


_line_of_rule = itemgetter(2)


@dataclass(slots=True)
class Group:
    """One group: its user-agent lines as ``(line, token)``, its rules as
    read (``(allow, value, line)``, in file order), and its Crawl-delay (the
    longest of its lines)."""

    agents: list[tuple[int, str]] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None
    #: line numbers of its Content-Usage / Content-Signal lines (``None``: none)
    usage_lines: list[int] | None = None

    @property
    def rule_lines(self) -> array[int]:
        """The line numbers of its rules."""
        return array("I", map(_line_of_rule, self.rules))


@dataclass(slots=True)
class Grouping:
    """All groups of a file, the token index and the file-wide sitemaps."""

    body: bytes
    groups: list[Group]
    by_token: dict[str, list[int]]
    sitemaps: tuple[str, ...]
    #: Rules with a pattern (an empty ``Disallow:`` matches nothing), in any group.
    pattern_count: int = 0
    #: Content-Usage / Content-Signal lines in groups.
    usage_count: int = 0

    def groups_for(self, token: str) -> list[Group]:
        """The groups that govern ``token`` (lower case), merged in file order.

        RFC 9309 2.2.1: exact, case-insensitive match of the product token;
        else the ``*`` groups; else none (everything allowed).
        """
        return [self.groups[index] for index in self._indexes_for(token)]

    def _indexes_for(self, token: str) -> list[int]:
        """The indexes of the groups that govern ``token`` (see :meth:`groups_for`)."""
        indexes = self.by_token.get(token) if token and token != WILDCARD_AGENT else None
        return indexes or self.by_token.get(WILDCARD_AGENT, [])

    def allows_everything(self) -> bool:
        """No rule with a pattern, no usage line and no Crawl-delay in any group."""
        return (
            self.pattern_count == 0
            and self.usage_count == 0
            and all(group.crawl_delay is None for group in self.groups)
        )

    def rules_for(self, token: str) -> list[Rule]:
        """The rules of :meth:`groups_for` ``token``, in file order: the one
        group's own list when one group governs it (most files; read, never
        changed: a copy costs the first decision a few percent), else a new
        list of them all."""
        indexes = self._indexes_for(token)
        if len(indexes) == 1:
            return self.groups[indexes[0]].rules
        return self.rules([self.groups[index] for index in indexes])

    def rules(self, groups: Iterable[Group]) -> list[Rule]:
        """The rules of ``groups`` in file order of each group (a new list)."""
        rules: list[Rule] = []
        for group in groups:
            rules += group.rules
        return rules


def _agent_token(number: int, raw: bytes, warnings: Warnings) -> str:
    if _PLAIN_NAME.fullmatch(raw):  # most lines: "Googlebot", already one product name
        token = raw.decode("ascii").lower()
        if len(raw) <= _AGENT_KEPT_LENGTH:
            if len(_PLAIN_AGENTS) >= _AGENTS_KEPT:
                _PLAIN_AGENTS.clear()
            _PLAIN_AGENTS[raw] = token
        return token
    value = raw.decode("utf-8", "replace")
    if value == WILDCARD_AGENT:
        return WILDCARD_AGENT
    token = product_token(value)
    if len(token) > 1 and token.endswith(WILDCARD_AGENT):
        # LENIENT(agent-glob): "Googlebot*" is a leftover glob; Google reads
        # it as "Googlebot". Only the trailing star goes; matching stays exact.
        token = token.rstrip(WILDCARD_AGENT)
        if is_valid_token(token):
            warnings.add(number, f"user-agent {value[:60]!r} read as product token {token!r}")
            return token
    if not is_valid_token(token):
        warnings.add(number, f"user-agent {value[:60]!r} is not a product token")
    elif len(token) != len(value):
        # LENIENT(agent-suffix): "Googlebot/2.1" or "Googlebot News" read as "Googlebot".
        warnings.add(number, f"user-agent {value[:60]!r} read as product token {token!r}")
    return token


def _crawl_delay(number: int, raw: bytes, warnings: Warnings) -> float | None:
    try:
        delay = float(raw)
    except ValueError:
        delay = math.nan
    if math.isfinite(delay) and delay >= 0:
        return delay
    warnings.add(number, f"crawl-delay {printable(raw[:30])!r} is not a number of seconds")
    return None


#: Octets scanned between two steps (a few milliseconds at most).
_CHUNK = 65_536


def group_steps(body: bytes, warnings: Warnings) -> Steps[Grouping]:
    """Split a prepared body into lines and fold them into groups (RFC 9309
    2.1, 2.2.1, 2.2.4), in steps of about :data:`_CHUNK` octets (see ``_steps``).

    Comments are removed (see :func:`_split_lines`) and lines split in C; a
    line whose key is spelt as most files spell it ("Disallow: /x") is read
    with one ``partition`` and one dict look-up, any other line as
    :func:`scan` reads it (:func:`read_line`).
    """
    fold = _Fold(warnings)
    start, size = 0, len(body)
    while True:
        end = body.find(b"\n", start + _CHUNK)
        if end < 0:
            end = size
        fold.lines(*_split_lines(body[start:end]))
        start = end + 1
        if start >= size:
            return fold.grouping(body)
        yield


def group_all(body: bytes, warnings: Warnings) -> Grouping:
    """:func:`group_steps` in one go, without the step machinery."""
    fold = _Fold(warnings)
    fold.lines(*_split_lines(body))
    return fold.grouping(body)


class _Fold:
    """The state of a grouping between two slices of lines."""

    __slots__ = (
        "by_token",
        "current",
        "groups",
        "number",
        "pattern_count",
        "rules_started",
        "sitemaps",
        "usage_count",
        "warnings",
    )

    def __init__(self, warnings: Warnings) -> None:
        self.groups: list[Group] = []
        self.by_token: dict[str, list[int]] = {}
        self.sitemaps: list[str] = []
        self.current: Group | None = None
        self.rules_started = False
        self.pattern_count = 0
        self.number = 0
        self.usage_count = 0
        self.warnings = warnings

    def grouping(self, body: bytes) -> Grouping:
        return Grouping(
            body,
            self.groups,
            self.by_token,
            tuple(self.sitemaps),
            self.pattern_count,
            self.usage_count,
        )

    def lines(self, texts: list[bytes], comments: bool) -> None:
        """Fold the next lines (no LF in them) into the groups; ``comments``:
        whether any of them may hold one (else none is looked for)."""
        groups, by_token, warnings = self.groups, self.by_token, self.warnings
        current, rules_started = self.current, self.rules_started
        add_rule = None if current is None else current.rules.append
        pattern_count, number = self.pattern_count, self.number
        usage_count = self.usage_count
        exact_keys, plain_agents = EXACT_KEYS, _PLAIN_AGENTS
        for text in texts:
            number += 1
            raw_key, colon, value = text.partition(b":")
            key = exact_keys.get(raw_key) if colon else None
            if key is not None:  # the common line: "Disallow: /x"
                if comments:
                    comment = value.find(b"#")
                    if comment >= 0:
                        value = value[:comment]
                value = value.strip(b" \t")
            else:
                if not text or text[0] == 35:  # blank, or a comment from its first octet
                    continue
                if comments:
                    comment = text.find(b"#")
                    if comment >= 0:
                        text = text[:comment]
                        raw_key, colon, value = text.partition(b":")
                if text[0] == 32 or text[0] == 9:  # "  Disallow: /x": blanks first
                    raw_key, colon, value = text.lstrip(b" \t").partition(b":")
                    key = exact_keys.get(raw_key) if colon else None
                if key is None and colon and raw_key:  # "Host: x", "Dissallow: /x"
                    key, message = key_reading(raw_key)
                    if message is not None:
                        warnings.add(number, message)
                    if key is None:
                        continue
                if key is not None:
                    value = value.strip(b" \t")
                else:
                    line = split_line(text)
                    if not line[0]:
                        continue  # blank
                    read = read_line(line, number, warnings)
                    if read is None:
                        continue
                    key, value = read
            if key == "disallow" or key == "allow":
                if add_rule is None:
                    warnings.add(number, "rule before any user-agent line ignored")
                    continue
                rules_started = True
                add_rule((key == "allow", value, number))
                if value:
                    pattern_count += 1
                    if value[0] != 47 and value[0] != 42:  # neither "/" nor "*"
                        _warn_rule(number, value, warnings)
            elif key == "user-agent":
                if current is None or rules_started:
                    current = Group()
                    groups.append(current)
                    add_rule = current.rules.append
                    rules_started = False
                token = (
                    WILDCARD_AGENT
                    if value == b"*"
                    else plain_agents.get(value) or _agent_token(number, value, warnings)
                )
                current.agents.append((number, token))
                if token:
                    indexes = by_token.setdefault(token, [])
                    if not indexes or indexes[-1] != len(groups) - 1:
                        indexes.append(len(groups) - 1)
            elif key == "sitemap":
                if value:
                    self.sitemaps.append(value.decode("utf-8", "replace"))
            elif key == "crawl-delay":
                delay = _crawl_delay(number, value, warnings)
                if current is None:
                    warnings.add(number, "crawl-delay before any user-agent line ignored")
                elif delay is not None and (
                    current.crawl_delay is None or delay > current.crawl_delay
                ):
                    current.crawl_delay = delay
            elif key == "content-usage" or key == "content-signal":
                if current is None:
                    warnings.add(number, f"{key} before any user-agent line ignored")
                else:
                    if current.usage_lines is None:
                        current.usage_lines = [number]
                    else:
                        current.usage_lines.append(number)
                    usage_count += 1
                    _warn_usage_limits(key, number, value, usage_count, warnings)
        self.current, self.rules_started = current, rules_started
        self.pattern_count, self.number = pattern_count, number
        self.usage_count = usage_count


def _warn_usage_limits(key: str, number: int, value: bytes, count: int, warnings: Warnings) -> None:
    """What the usage reader leaves out, said at the line: the lines past
    :data:`~._usage_index.MAX_RECORDS` and the members of a Content-Signal line past
    :data:`~._usage_values.MAX_MEMBERS` (a Content-Usage value is read whole)."""
    name = "Content-Usage" if key == "content-usage" else "Content-Signal"
    if count == MAX_RECORDS + 1:
        warnings.add(
            number,
            f"{name}: more than {MAX_RECORDS:,} usage lines; this one and the rest are ignored",
        )
    if key == "content-signal" and value.count(b",") >= MAX_MEMBERS:
        warnings.add(
            number,
            f"{name}: more than {MAX_MEMBERS} members; only the first {MAX_MEMBERS} are read",
        )


def _warn_rule(number: int, value: bytes, warnings: Warnings) -> None:
    if not is_url(value):
        message = f"rule {printable(value[:60])!r} does not start with '/'"
    elif rule_pattern(value) != "/":
        message = f"rule {printable(value[:60])!r} is a URL: its path is used"
    else:
        message = f"rule {printable(value[:60])!r} names a host: ignored"
    warnings.add(number, message)

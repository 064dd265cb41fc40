"""Usage preferences: what content may be used for (AI training, search, ...). Pure.

No Scrapy import. Reads the signals sites publish next to robots.txt rules:

* IETF AIPREF (draft-ietf-aipref-attach-04/-05, vocabulary of
  draft-ietf-aipref-vocab-05): ``Content-Usage: train-ai=n`` lines in robots.txt
  groups, optionally path-scoped (``Content-Usage: /ai-ok/ train-ai=y``), and
  the ``Content-Usage`` HTTP response header; values ``y`` / ``n``;
* Cloudflare's Content Signals Policy: ``Content-Signal: search=yes,
  ai-train=no`` lines in robots.txt groups; values ``yes`` / ``no``;
* TDMRep (W3C community group final report): ``tdm-reservation: 1`` (header,
  ``<meta name="tdm-reservation">``, or a ``/.well-known/tdmrep.json`` entry)
  reserves text and data mining rights.

The vocabularies are drafts: every name the signals use is mapped to a
category in ONE table, :data:`VOCABULARY`, and categories nest as
:data:`PARENTS` says. A purpose without a stated preference takes its
parent's (AIPREF vocab: "otherwise, check the parent"). Several preferences
for one category combine to the most restrictive: ``n`` beats ``y``.

Path-scoped robots.txt lines match as Allow / Disallow do (RFC 9309 2.2.2):
per category, the longest matching path decides; a line without a path
matches every path and is the least specific; among equally long matches
``n`` wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ._encoding import canonical_path
from ._lines import printable, read_line, scan
from ._matcher import AgentMatcher, is_url
from ._rulekey import key_allows, key_line

if TYPE_CHECKING:
    from ._groups import Grouping

__all__ = [
    "CATEGORIES",
    "PARENTS",
    "TDM_CATEGORIES",
    "VOCABULARY",
    "Preference",
    "Usage",
    "UsageIndex",
    "build_usage_index",
    "needs_tdmrep",
    "parse_content_usage",
    "parse_usage_line",
    "response_usage",
    "usage_index_of",
]

#: Category -> the broader category it nests in (AIPREF vocab: train-genai
#: is part of train-ai, every use is automated processing, ``bots``).
PARENTS: dict[str, str | None] = {
    "bots": None,
    "train-ai": "bots",
    "train-genai": "train-ai",
    "search": "bots",
    "ai-input": "bots",
}
#: The purposes a crawl may declare (``ROBOTSTXT_PURPOSES``).
CATEGORIES = frozenset(PARENTS)

#: THE mapping table: (signal, name as written) -> category. Drafts move: edit here.
VOCABULARY: dict[tuple[str, str], str] = {
    # IETF AIPREF vocabulary (Content-Usage line and header)
    ("content-usage", "bots"): "bots",
    ("content-usage", "train-ai"): "train-ai",
    ("content-usage", "train-genai"): "train-genai",
    ("content-usage", "search"): "search",
    # Cloudflare Content Signals Policy (Content-Signal line)
    ("content-signal", "search"): "search",
    ("content-signal", "ai-train"): "train-ai",
    ("content-signal", "ai-input"): "ai-input",
}
#: Values each signal writes, and whether they allow.
VALUES: dict[str, dict[str, bool]] = {
    "content-usage": {"y": True, "n": False},
    "content-signal": {"yes": True, "no": False},
}
#: TDMRep: ``tdm-reservation: 1`` refuses text and data mining, read as these categories.
TDM_CATEGORIES = ("train-ai", "ai-input")

#: Members read per preference list (a robots.txt line, a header); the rest are
#: ignored, and a robots.txt line with more gets a warning.
MAX_MEMBERS = _MAX_MEMBERS = 64
_MEMBER = re.compile(r"\s*([a-z*][a-z0-9_.*-]*)\s*(?:=\s*([^,;\s]*))?\s*(?:;[^,]*)?\Z")


def _chain(category: str) -> list[str]:
    chain: list[str] = []
    current: str | None = category
    while current is not None and current not in chain:
        chain.append(current)
        current = PARENTS.get(current)
    return chain


def needs_tdmrep(purposes: Iterable[str]) -> bool:
    """Whether a TDMRep reservation can refuse one of ``purposes``."""
    return any(category in TDM_CATEGORIES for purpose in purposes for category in _chain(purpose))


@dataclass(frozen=True, slots=True)
class Preference:
    """One stated preference: a category, ``y`` / ``n``, and where it was stated."""

    category: str
    allowed: bool
    #: ``robots.txt``, ``Content-Usage header``, ``tdm-reservation header``, ...
    source: str
    #: the robots.txt line number (``None`` for other sources)
    line: int | None = None
    #: the line or header as written
    rule: str = ""

    @property
    def value(self) -> str:
        return "y" if self.allowed else "n"

    def describe(self) -> str:
        where = f"{self.source} line {self.line}" if self.line is not None else self.source
        return f'{self.category}={self.value} ({where}: "{self.rule}")'


@dataclass(frozen=True, slots=True)
class Usage:
    """The preferences that apply to one URL, per category, and where each came from."""

    preferences: Mapping[str, Preference] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.preferences)

    def get(self, category: str) -> Preference | None:
        return self.preferences.get(category)

    def applicable(self, purpose: str) -> Preference | None:
        """The preference that governs ``purpose``: its own, else its parent's."""
        for category in _chain(purpose):
            preference = self.preferences.get(category)
            if preference is not None:
                return preference
        return None

    def refusal(self, purposes: Iterable[str]) -> Preference | None:
        """The first preference that refuses one of ``purposes``, else ``None``."""
        for purpose in purposes:
            preference = self.applicable(purpose)
            if preference is not None and not preference.allowed:
                return preference
        return None

    def merged(self, other: Usage) -> Usage:
        """Both sets of preferences; per category the most restrictive (``n``) wins."""
        if not other.preferences:
            return self
        if not self.preferences:
            return other
        combined = dict(self.preferences)
        for category, preference in other.preferences.items():
            mine = combined.get(category)
            if mine is None or (mine.allowed and not preference.allowed):
                combined[category] = preference
        return Usage(combined)

    def as_dict(self) -> dict[str, dict[str, object]]:
        return {
            category: {
                "value": preference.value,
                "source": preference.source,
                "line": preference.line,
                "rule": preference.rule,
            }
            for category, preference in sorted(self.preferences.items())
        }


NO_PREFERENCES = Usage()


def parse_content_usage(text: str, signal: str = "content-usage") -> list[tuple[str, bool]]:
    """``(category, allowed)`` of a preference list: ``train-ai=n, search=y``.

    An RFC 9651 dictionary as AIPREF writes it (``Content-Signal`` writes
    ``yes`` / ``no``): unknown names, parameters and values other than the
    signal's own are ignored, as the vocabulary asks. Never raises.
    """
    values = VALUES[signal]
    found: list[tuple[str, bool]] = []
    for member in text.split(",", _MAX_MEMBERS)[:_MAX_MEMBERS]:
        match = _MEMBER.match(member.lower())
        if match is None or match.group(2) is None:
            continue
        category = VOCABULARY.get((signal, match.group(1)))
        allowed = values.get(match.group(2).strip('"'))
        if category is not None and allowed is not None:
            found.append((category, allowed))
    return found


class Record(NamedTuple):
    """One Content-Usage / Content-Signal line of a group, as read."""

    line: int
    rule: str
    #: the path pattern as written (``None``: no path, every path); compiled by
    #: the Allow / Disallow compiler (:class:`~._matcher.AgentMatcher`)
    path: bytes | None
    preferences: tuple[tuple[str, bool], ...]


def split_usage_value(value: bytes) -> tuple[bytes | None, bytes]:
    """``[path] preferences``: the path pattern as written (or ``None``) and the rest.

    The first word is a path when it reads as an Allow / Disallow value would
    (RFC 9309 2.2.2): it starts with ``/`` or ``*``, or (the rules' lenient
    readings, see ``rule_pattern``) it is an http(s) URL, or it holds a ``/``
    and no ``=`` (``ai-ok/``, read as ``/ai-ok/``).
    """
    stripped = value.strip(b" \t")
    parts = stripped.split(None, 1)
    if not parts:
        return None, b""
    first = parts[0]
    if first[:1] in (b"/", b"*") or is_url(first) or (b"/" in first and b"=" not in first):
        return first, parts[1] if len(parts) > 1 else b""
    return None, stripped


def parse_usage_line(key: str, value: bytes, line: int, rule: str) -> Record | None:
    """A robots.txt ``Content-Usage`` / ``Content-Signal`` line's value, read.

    ``[path] preferences`` (see :func:`split_usage_value`); the path is
    matched as an Allow / Disallow pattern (RFC 9309 2.2.2), by the same
    compiler and matcher. ``None`` when it states nothing known.
    """
    path, rest = split_usage_value(value)
    preferences = parse_content_usage(rest.decode("utf-8", "replace"), key)
    if not preferences:
        return None
    return Record(line, rule, path, tuple(preferences))


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
            for category, allowed in record.preferences:
                if record.path is None:
                    current = general.get(category)
                    if current is None or (current.allowed and not allowed):
                        general[category] = Preference(
                            category, allowed, "robots.txt", record.line, record.rule
                        )
                else:
                    scoped_rules.setdefault(category, []).append(
                        (not allowed, record.path, record.line)
                    )
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
                found[category] = Preference(
                    category, not key_allows(key), "robots.txt", record.line, record.rule
                )
        return Usage(found)


#: Usage lines read per file; a robots.txt rarely has more than a few.
MAX_RECORDS = 1000


def build_usage_index(grouping: Grouping) -> UsageIndex:
    """The usage records of each group, from the body (RFC 9309 2.2.1, 2.2.4)."""
    usage_lines = [group.usage_lines for group in grouping.groups]
    return usage_index_of(grouping.body, usage_lines, grouping.by_token)


def usage_index_of(
    body: bytes, usage_lines: Sequence[list[int] | None], by_token: Mapping[str, list[int]]
) -> UsageIndex:
    """:func:`build_usage_index` from what it reads of a grouping: the body,
    each group's usage line numbers, and the groups of each product token."""
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


def response_usage(signals: Iterable[tuple[str, str]]) -> Usage:
    """The preferences a response states (see ``read_usage_signals``): per category
    the most restrictive. ``tdm-reservation: 1`` refuses :data:`TDM_CATEGORIES`."""
    usage = NO_PREFERENCES
    for source, value in signals:
        text = value.strip()
        if source.startswith("Content-Usage"):
            stated = parse_content_usage(text)
        else:
            reserved = _header_reservation(text)
            if reserved is None:
                continue
            stated = [(category, not reserved) for category in TDM_CATEGORIES]
        rule = f"{source.replace(' header', '')}: {text[:200]}"
        if source.startswith("<meta"):
            rule = f'{source[:-1]} content="{text[:200]}">'
        usage = usage.merged(
            Usage(
                {category: Preference(category, ok, source, None, rule) for category, ok in stated}
            )
        )
    return usage


def _header_reservation(text: str) -> bool | None:
    """A ``tdm-reservation`` header or meta value: ``1`` (also ``1.0``, ``true``)
    reserves, ``0`` (``0.0``) does not; anything else states nothing, never
    a permission (as :func:`~._tdmrep.reservation_value` reads tdmrep.json)."""
    text = text.strip().strip('"').lower()
    if text in ("1", "1.0", "true"):
        return True
    if text in ("0", "0.0"):
        return False
    return None

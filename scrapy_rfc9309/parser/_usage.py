"""Usage preferences: what content may be used for (AI training, search, ...). Pure.

No Scrapy import. Reads the signals sites publish next to robots.txt rules,
as the versions in :data:`SPEC_VERSIONS` say (the one place to change when
they move):

* IETF AIPREF: ``Content-Usage: train-ai=n`` lines in robots.txt groups
  (attach draft: ``rule =/ content-usage``), path-scoped when the value starts
  with ``/`` (``Content-Usage: /ai-ok/ train-ai=y``), and the ``Content-Usage``
  HTTP response header. The value is an RFC 9651 Dictionary, parsed by
  ``http_sf``: of duplicated keys the last applies, a value other than the
  Token ``y`` or ``n`` leaves the preference unknown, parameters are ignored,
  and a value that does not parse leaves every preference unknown. The
  vocabulary (draft -08) has three categories, ``train-ai``, ``ai-use`` and
  ``search``; "no term nests within another", unknown labels are ignored, and
  "Search now overrides any usage that falls into other categories, including
  AI Training and AI Use": a declared ``search`` is governed by ``search``
  alone (:meth:`Usage.refusal`);
* Cloudflare's Content Signals Policy: ``Content-Signal: search=yes,
  ai-train=no`` lines in robots.txt groups and the ``Content-Signal`` response
  header, read with its own values ``yes`` / ``no`` (not an RFC 9651 parse;
  any other value, ``ai-train=disallow``, states nothing); ``ai-train`` is
  ``train-ai``, ``search`` is ``search``, ``ai-input`` is ``ai-use``; its
  ``use`` key (``immediate``, ``reference``, ``full``) is read and reported
  (:data:`USE_LEVELS`), never enforced;
* TDMRep (W3C community group final report): ``tdm-reservation: 1`` (header,
  ``<meta name="tdm-reservation">``, or a ``/.well-known/tdmrep.json`` entry)
  reserves text and data mining rights, read as :data:`TDM_CATEGORIES`.

Every name the signals use maps to a category in ONE table, :data:`VOCABULARY`.
Path-scoped robots.txt lines match as Allow / Disallow do (RFC 9309 2.2.2):
per category, the longest matching path decides; a line without a path
matches every path and is the least specific; among equally long matches
``n`` wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import http_sf

from ._encoding import canonical_path
from ._lines import printable, read_line, scan
from ._matcher import AgentMatcher
from ._rulekey import key_allows, key_line

__all__ = [
    "CATEGORIES",
    "PARENTS",
    "PURPOSE_ALIASES",
    "RETIRED_PURPOSES",
    "SPEC_VERSIONS",
    "TDM_CATEGORIES",
    "USE_KEY",
    "USE_LEVELS",
    "VOCABULARY",
    "Preference",
    "Spec",
    "Usage",
    "UsageIndex",
    "content_signal_use",
    "needs_tdmrep",
    "parse_content_usage",
    "parse_usage_line",
    "read_content_usage",
    "response_usage",
    "unread_usage",
    "usage_index_of",
]


class Spec(NamedTuple):
    """One specification the usage signals are read as: its name, the exact
    version followed, and where it is published."""

    name: str
    version: str
    url: str


#: THE versions followed. Drafts move: change them here (and the table of
#: docs/usage.md, which a test holds to this one).
SPEC_VERSIONS: tuple[Spec, ...] = (
    Spec(
        "AIPREF vocabulary",
        "draft-ietf-aipref-vocab-08",
        "https://datatracker.ietf.org/doc/draft-ietf-aipref-vocab/08/",
    ),
    Spec(
        "AIPREF attachment (robots.txt, HTTP header)",
        "draft-ietf-aipref-attach-05",
        "https://datatracker.ietf.org/doc/draft-ietf-aipref-attach/05/",
    ),
    Spec(
        "TDM Reservation Protocol (TDMRep)",
        "TDMRep Final Community Group Report",
        "https://www.w3.org/community/reports/tdmrep/",
    ),
    Spec(
        "Cloudflare Content Signals",
        "Content Signals Policy, with the use key and the Content-Signal header (2026-11)",
        "https://contentsignals.org/",
    ),
    # Not usage signals, but texts followed beside them: the Robots-Tag header
    # (``_page_directives``) and the tags lint names known but unsupported (``_lines``).
    Spec(
        "Robots-Tag header (page-level directives)",
        "draft-illyes-repext-03",
        "https://datatracker.ietf.org/doc/draft-illyes-repext/03/",
    ),
    Spec(
        "Google's robots.txt parser (known but unsupported tags, for --lint)",
        "google/robotstxt, robots.cc of 2026-02-19",
        "https://github.com/google/robotstxt",
    ),
)

#: The purposes a crawl may declare (``ROBOTSTXT_PURPOSES``): the AIPREF
#: vocabulary's categories (draft-ietf-aipref-vocab-08: AI Training, AI Use, Search).
CATEGORIES = frozenset({"train-ai", "ai-use", "search"})
#: Names earlier vocabulary drafts (or this package) had, and what replaced them.
#: Declared purposes read as another category, with a WARNING: ``ai-input``
#: (Content-Signal's key, and this package's purpose before AIPREF vocab -08
#: named the category) is declared as ``ai-use``, the category it maps to.
PURPOSE_ALIASES: dict[str, str] = {"ai-input": "ai-use"}
RETIRED_PURPOSES: dict[str, str] = {
    "train-genai": "use train-ai (the vocabulary no longer has train-genai)",
    "bots": "declare the specific purposes instead: train-ai, search "
    "(the vocabulary no longer has bots)",
}
#: Kept for callers of earlier versions: no category nests in another
#: (AIPREF vocab: "no term nests within another"), so none has a parent.
PARENTS: dict[str, str | None] = dict.fromkeys(sorted(CATEGORIES))

#: THE mapping table: (signal, name as written) -> category. Drafts move: edit here.
VOCABULARY: dict[tuple[str, str], str] = {
    # IETF AIPREF vocabulary (Content-Usage line and header)
    ("content-usage", "train-ai"): "train-ai",
    ("content-usage", "ai-use"): "ai-use",
    ("content-usage", "search"): "search",
    # Cloudflare Content Signals Policy (Content-Signal line and header)
    ("content-signal", "search"): "search",
    ("content-signal", "ai-train"): "train-ai",
    ("content-signal", "ai-input"): "ai-use",
}
#: Values each signal writes, and whether they allow (``content-usage``: the
#: RFC 9651 Tokens ``y`` and ``n``).
VALUES: dict[str, dict[str, bool]] = {
    "content-usage": {"y": True, "n": False},
    "content-signal": {"yes": True, "no": False},
}
#: Content Signals Policy: the ``use`` key's levels, narrowest first ("Interact,
#: but store and reuse nothing." / "Index, excerpt, and link back." / "Summarize
#: and reproduce."). Read and reported (a :class:`Preference` of category
#: :data:`USE_KEY` with its ``level``), never enforced: the policy maps no level
#: to a category or to a purpose a crawler declares.
USE_LEVELS = ("immediate", "reference", "full")
USE_KEY = "use"
#: TDMRep: ``tdm-reservation: 1`` refuses text and data mining, read as these categories.
TDM_CATEGORIES = ("train-ai", "ai-use")

#: Members of a Content-Signal line read; the rest are ignored, and a robots.txt
#: line with more gets a warning. (Content-Usage is a Dictionary read whole.)
MAX_MEMBERS = _MAX_MEMBERS = 64
_MEMBER = re.compile(r"\s*([a-z*][a-z0-9_.*-]*)\s*(?:=\s*([^,;\s]*))?\s*(?:;[^,]*)?\Z")


def needs_tdmrep(purposes: Iterable[str]) -> bool:
    """Whether a TDMRep reservation can refuse one of ``purposes``."""
    return any(purpose in TDM_CATEGORIES for purpose in purposes)


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
    #: TDMRep's ``tdm-policy``: the URL of the rights holder's policy (``None``: none stated)
    policy: str | None = None
    #: Content-Signal's ``use`` level (:data:`USE_LEVELS`) of a :data:`USE_KEY`
    #: preference, which refuses nothing (``allowed`` is true); else ``None``
    level: str | None = None

    @property
    def value(self) -> str:
        if self.level is not None:
            return self.level
        return "y" if self.allowed else "n"

    def narrower(self, other: Preference) -> bool:
        """Whether this preference restricts more than ``other`` (of the same
        category): ``n`` before ``y``; of ``use`` levels, the narrowest."""
        return _rank(self) < _rank(other)

    def describe(self) -> str:
        where = f"{self.source} line {self.line}" if self.line is not None else self.source
        policy = f", policy {self.policy}" if self.policy else ""
        return f'{self.category}={self.value} ({where}: "{self.rule}"{policy})'


def _rank(preference: Preference) -> tuple[bool, int]:
    level = preference.level
    return preference.allowed, USE_LEVELS.index(level) if level in USE_LEVELS else 0


@dataclass(frozen=True, slots=True)
class Usage:
    """The preferences that apply to one URL, per category, and where each came from."""

    preferences: Mapping[str, Preference] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.preferences)

    def get(self, category: str) -> Preference | None:
        return self.preferences.get(category)

    def applicable(self, purpose: str) -> Preference | None:
        """The preference stated for ``purpose`` itself (no category nests in
        another: AIPREF vocab), else ``None``."""
        return self.preferences.get(purpose)

    def refusal(self, purposes: Iterable[str]) -> Preference | None:
        """The first preference that refuses one of ``purposes``, else ``None``.

        Each purpose is governed by its own category only: no term nests in
        another, and (draft-ietf-aipref-vocab-08) "Search now overrides any
        usage that falls into other categories, including AI Training and AI
        Use", so ``train-ai=n`` or ``ai-use=n`` never refuses ``search``.
        """
        for purpose in purposes:
            preference = self.preferences.get(purpose)
            if preference is not None and not preference.allowed:
                return preference
        return None

    def merged(self, other: Usage) -> Usage:
        """Preferences of two sources (robots.txt and a page, say): per category
        the most restrictive (``n``) wins."""
        if not other.preferences:
            return self
        if not self.preferences:
            return other
        combined = dict(self.preferences)
        for category, preference in other.preferences.items():
            mine = combined.get(category)
            if mine is None or preference.narrower(mine):
                combined[category] = preference
        return Usage(combined)

    def as_dict(self) -> dict[str, dict[str, object]]:
        found: dict[str, dict[str, object]] = {}
        for category, preference in sorted(self.preferences.items()):
            entry: dict[str, object] = {
                "value": preference.value,
                "source": preference.source,
                "line": preference.line,
                "rule": preference.rule,
            }
            if preference.policy is not None:
                entry["policy"] = preference.policy
            if preference.level is not None:
                entry["level"] = preference.level
            found[category] = entry
        return found


NO_PREFERENCES = Usage()


class ContentUsage(NamedTuple):
    """A ``Content-Usage`` value read as an RFC 9651 Dictionary (AIPREF vocab)."""

    #: ``(category, allowed)`` of each known category with the Token ``y`` or ``n``
    preferences: tuple[tuple[str, bool], ...]
    #: why the value is not a Dictionary (``""``: it is); then nothing is known
    error: str = ""
    #: ``(key, why)`` of each member that states nothing: an unknown label, or a
    #: value other than the Token ``y`` / ``n`` (for the linter)
    ignored: tuple[tuple[str, str], ...] = ()


def read_content_usage(value: bytes | str) -> ContentUsage:
    """A ``Content-Usage`` value (robots.txt line or header), as the AIPREF
    vocabulary reads it: an RFC 9651 Dictionary parsed by ``http_sf``.

    The last of duplicated keys applies (RFC 9651 4.2.2); a member whose value
    is not the Token ``y`` or ``n`` (a String ``"n"``, a bare key, which is
    boolean true) leaves that preference unknown; parameters are ignored;
    unknown labels are ignored; a value that does not parse (an uppercase
    key, a trailing comma) leaves every preference unknown. Never raises.
    """
    data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value
    try:
        parsed = http_sf.parse(data, tltype="dictionary")
    except ValueError as exc:  # http_sf.StructuredFieldError, a ValueError
        return ContentUsage((), f"not an RFC 9651 Dictionary: {str(exc)[:120]}")
    assert isinstance(parsed, dict)
    found: list[tuple[str, bool]] = []
    ignored: list[tuple[str, str]] = []
    for key, member in parsed.items():
        category = VOCABULARY.get(("content-usage", key))
        if category is None:
            ignored.append((key, "unknown label"))
            continue
        item = member[0] if isinstance(member, tuple) else member
        allowed = (
            VALUES["content-usage"].get(str(item)) if isinstance(item, http_sf.Token) else None
        )
        if allowed is None:
            ignored.append((key, f"value {_sf_kind(item)} is not the Token y or n"))
            continue
        found.append((category, allowed))
    return ContentUsage(tuple(found), "", tuple(ignored))


def _sf_kind(item: object) -> str:
    """How an RFC 9651 bare item reads, for a finding."""
    if item is True:
        return "boolean true (a key without a value)"
    if isinstance(item, bool):
        return "boolean false"
    if isinstance(item, http_sf.Token):
        return f"Token {str(item)[:40]!r}"
    if isinstance(item, str):
        return f"String {item[:40]!r}"
    if isinstance(item, list):
        return "an Inner List"
    return f"{type(item).__name__} {str(item)[:40]!r}"


def parse_content_usage(text: str, signal: str = "content-usage") -> list[tuple[str, bool]]:
    """``(category, allowed)`` of a preference list: ``train-ai=n, search=y``.

    ``Content-Usage``: see :func:`read_content_usage`. ``Content-Signal``
    (Cloudflare) keeps its own reading: comma-separated ``name=yes`` / ``no``,
    unknown names, parameters and other values ignored (a name stated twice:
    the most restrictive, as before). Never raises.
    """
    if signal == "content-usage":
        return list(read_content_usage(text).preferences)
    values = VALUES[signal]
    found: list[tuple[str, bool]] = []
    for name, value in _signal_members(text):
        category = VOCABULARY.get((signal, name))
        allowed = values.get(value)
        if category is not None and allowed is not None:
            found.append((category, allowed))
    return found


def _signal_members(text: str) -> list[tuple[str, str]]:
    """``(name, value)`` of each ``name=value`` member of a Content-Signal value
    (lower case, quotes stripped; at most :data:`MAX_MEMBERS`)."""
    found: list[tuple[str, str]] = []
    for member in text.split(",", _MAX_MEMBERS)[:_MAX_MEMBERS]:
        match = _MEMBER.match(member.lower())
        if match is not None and match.group(2) is not None:
            found.append((match.group(1), match.group(2).strip('"')))
    return found


def content_signal_use(text: str) -> str | None:
    """The ``use`` level a Content-Signal value states (``use=reference``), else
    ``None``: a value other than :data:`USE_LEVELS` states nothing; of several,
    the narrowest (as of ``yes`` / ``no``, the most restrictive). Never raises."""
    levels = [value for name, value in _signal_members(text) if name == USE_KEY]
    known = [level for level in levels if level in USE_LEVELS]
    return min(known, key=USE_LEVELS.index) if known else None


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


#: TDMRep's ``tdm-policy`` sources of a response (``read_usage_signals``), the
#: meta first: "The values of `tdm-reservation` and `tdm-policy` found here
#: [HTML metadata] supercede previous values" (the header's).
TDM_POLICY_SOURCES = ('<meta name="tdm-policy">', "tdm-policy header")
#: Characters of a ``tdm-policy`` kept (as of a tdmrep.json rule's): a URL
MAX_POLICY_CHARS = 2000


def tdm_policy_value(value: str) -> str | None:
    """A ``tdm-policy`` header or meta value as kept: stripped, at most
    :data:`MAX_POLICY_CHARS`, control characters escaped (it is logged);
    ``None`` when empty."""
    text = value.strip()[:MAX_POLICY_CHARS]
    if not text:
        return None
    return text if text.isprintable() else repr(text)[1:-1]


def with_tdm_policy(usage: Usage, policy: str | None) -> Usage:
    """``usage`` with TDMRep's ``policy`` on each reservation (a refusal): it goes
    with ``tdm-reservation: 1`` only ("TDM rights are reserved. If a TDM Policy
    is set, TDM Agents MAY use it"; with ``0``, "TDM Agents SHOULD NOT process
    `tdm-policy`"). ``None``: ``usage`` unchanged."""
    preferences = usage.preferences
    if policy is None or all(p.allowed or p.policy == policy for p in preferences.values()):
        return usage
    return Usage(
        {
            category: p if p.allowed else replace(p, policy=policy)
            for category, p in preferences.items()
        }
    )


def response_usage(signals: Iterable[tuple[str, str]]) -> Usage:
    """The preferences a response states (see ``read_usage_signals``).

    ``Content-Usage`` field lines are combined into one value before parsing
    (RFC 9651 4.2), so the last of a key applies across lines too; a
    ``tdm-reservation`` of ``1`` refuses :data:`TDM_CATEGORIES`, ``0`` allows
    them; a ``tdm-policy`` (the meta's, else the header's; the first stated of
    each) goes with the reservations (:func:`with_tdm_policy`). Between the
    header and the TDMRep signals, the most restrictive wins.
    """
    usage = NO_PREFERENCES
    usage_lines: list[tuple[str, str]] = []
    signal_lines: list[tuple[str, str]] = []
    policies: dict[str, str] = {}
    for source, value in signals:
        text = value.strip()
        if source.startswith("Content-Usage"):
            if text:
                usage_lines.append((source, text))
            continue
        if source.startswith("Content-Signal"):
            if text:
                signal_lines.append((source, text))
            continue
        if source in TDM_POLICY_SOURCES:
            policy = tdm_policy_value(text)
            if policy is not None:
                policies.setdefault(source, policy)
            continue
        reserved = _header_reservation(text)
        if reserved is None:
            continue
        rule = f"{source.replace(' header', '')}: {text[:200]}"
        if source.startswith("<meta"):
            rule = f'{source[:-1]} content="{text[:200]}">'
        usage = usage.merged(_stated(source, rule, [(c, not reserved) for c in TDM_CATEGORIES]))
    if policies:
        policy = next(policies[source] for source in TDM_POLICY_SOURCES if source in policies)
        usage = with_tdm_policy(usage, policy)
    if usage_lines:
        source = usage_lines[0][0]
        text = ", ".join(text for _, text in usage_lines)
        rule = f"{source.replace(' header', '')}: {text[:200]}"
        usage = usage.merged(_stated(source, rule, read_content_usage(text).preferences))
    if signal_lines:
        usage = usage.merged(_content_signal_header(signal_lines))
    return usage


def _content_signal_header(lines: Sequence[tuple[str, str]]) -> Usage:
    """The ``Content-Signal`` response header, read as the robots.txt line is
    (:func:`parse_content_usage`, its own ``yes`` / ``no`` reading, and the
    ``use`` level): several field lines are one comma-separated list; a name
    stated twice, the most restrictive."""
    source = lines[0][0]
    text = ", ".join(text for _, text in lines)
    rule = f"{source.replace(' header', '')}: {text[:200]}"
    stated = Usage()
    for category, allowed in parse_content_usage(text, "content-signal"):
        stated = stated.merged(_stated(source, rule, [(category, allowed)]))
    use = content_signal_use(text)
    if use is not None:
        level = Preference(USE_KEY, True, source, None, rule, None, use)
        stated = stated.merged(Usage({USE_KEY: level}))
    return stated


#: The categories each usage header can state (``read_usage_signals``'s sources):
#: a header read only in part may refuse any of them past the limit.
HEADER_CATEGORIES: dict[str, tuple[str, ...]] = {
    "Content-Usage header": tuple(
        sorted(
            {category for (signal, _), category in VOCABULARY.items() if signal == "content-usage"}
        )
    ),
    "Content-Signal header": tuple(
        sorted(
            {category for (signal, _), category in VOCABULARY.items() if signal == "content-signal"}
        )
    ),
    "tdm-reservation header": TDM_CATEGORIES,
}


def unread_usage(truncated: Mapping[str, Iterable[str]]) -> Usage:
    """Refusals assumed for usage headers read only in part (fail closed).

    ``truncated``: each header source that met a reading limit, with the
    limits' names (``read_usage_signals``). A value past the limit was not
    read, and may refuse any category its header can state
    (:data:`HEADER_CATEGORIES`): each of them is read as refused, so that a
    declared purpose is never allowed by what was not read. A ``tdm-policy``
    header states no preference: its limits refuse nothing.
    """
    preferences: dict[str, Preference] = {}
    for source, limits in truncated.items():
        named = ", ".join(sorted(limits))
        rule = f"{source.replace(' header', '')}: read only in part ({named} reached), refused"
        for category in HEADER_CATEGORIES.get(source, ()):
            preferences.setdefault(category, Preference(category, False, source, None, rule))
    return Usage(preferences) if preferences else NO_PREFERENCES


def _stated(source: str, rule: str, stated: Iterable[tuple[str, bool]]) -> Usage:
    return Usage(
        {category: Preference(category, ok, source, None, rule) for category, ok in stated}
    )


def _header_reservation(text: str) -> bool | None:
    """A ``tdm-reservation`` header or meta value: ``1`` reserves, ``0`` does
    not; TDMRep: "Other values are considered protocol errors", read as unset
    (never a permission), as :func:`~._tdmrep.reservation_value` reads tdmrep.json."""
    text = text.strip()
    if text == "1":
        return True
    if text == "0":
        return False
    return None

"""A compiled, per-agent rule matcher (RFC 9309 2.2.2 and 2.2.3).

Pure, no Scrapy import. The most specific rule wins: the one with the most
octets in its (normalised) pattern; on a tie, ``allow`` wins. ``*`` matches
any run of octets, a final ``$`` anchors the end; ``%2A`` and ``%24`` in a
rule stand for a literal ``*`` and ``$``.

A group's rules are sorted by kind as they are compiled (``_rule_tables``);
this module holds the matcher they become and its checks.

What one check costs:

* a path that starts with none of the literal prefixes (the text before any
  ``*``) of the disallow rules is allowed after one C-level
  ``str.startswith(tuple)``, kept when a matcher has up to 64 such prefixes,
  none of them ``/``; most crawled URLs end there;
* up to 64 rules already in canonical form (``/private/``, ``/*.pdf$``),
  and up to 256 with fewer ``*`` than half their number, all plain
  prefixes or at most 16 with a ``*`` or a ``$``, are not compiled at
  first but scanned as written: a check tests
  every rule's text with one ``str.startswith(tuple)``; a path that starts
  with none of them (most crawled URLs) is then decided by the rules with
  a ``*`` or a ``$`` alone, each tried with a left-to-right ``str.find``
  scan, or, in a group of up to 16 plain prefixes, allowed with no more
  work (see :attr:`AgentMatcher.plain_prefixes`); any other path tries
  every rule.
  The rules are compiled once the scan's checks have tried eight times as
  many rules as there are (about what compiling them costs), so a site
  checked a few times never pays for an index and one checked often pays
  for its scan at most about what the index costs;
* more than 64 rules, all in canonical form and mostly wildcards (the
  hostile files of tens of thousands of ``/*abcdefgh*.php$``), are indexed
  by C-level operations over their joined values (``_globs``) for the first
  32 checks, with no Python step per rule; the next check compiles them as
  below;
* plain-prefix rules live in a prefix index (``_prefixes``): a few tried
  one by one, a dict probed once per distinct pattern length, or for
  hundreds one sorted string searched with ``bisect``; the cost does not
  grow with their number. Rules that only add a final ``*`` (``/private*``)
  have a prefix index of their own, as they are one octet more specific;
* ``$``-anchored rules without ``*`` are one dict probe on the whole path;
* a few wildcard rules are tried most specific first, stopping as soon as
  none left can beat the best match; many are indexed by their literal
  prefix, by 3 octets of their longest piece, or by that piece when it is
  only one or two octets long (an anchored rule so, by its last piece,
  looked up at the path's end, unless more than 1,024 rules share that
  end and their longest pieces, of two octets, spread them), so only rules
  that can match are tried, the
  selected buckets merged best first. A try starts with a substring test of
  the rule's longest piece; then comes a left-to-right scan with
  ``str.find`` (linear, no backtracking). The cost grows with the number of
  candidates: with many rules of one- or two-octet pieces most of them can
  be; at worst every wildcard rule is tried once.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from heapq import merge
from itertools import islice
from typing import Any, NamedTuple

from ._globs import GlobIndex
from ._prefixes import DictPrefixes, FewPrefixes, SortedPrefixes, prefix_index
from ._rule_forms import (
    Rule,
    all_glob,
    all_plain,
    canonical_rules,
    dollars_end,
    few_wildcards,
    plain_form,
)
from ._rule_tables import RuleTables, disallow_shortcut
from ._rulekey import RuleKey
from ._scan import RuleScan
from ._steps import STEP, Steps, run_to_end
from ._wildcards import (
    GRAM,
    Entry,
    Lazy,
    Wildcard,
    compile_lazy,
    index_wildcards,
    wildcard_matches,
)

__all__ = ["ALLOWING_ALL", "AgentMatcher", "Rule", "Verdict"]

# Up to this many wildcard rules, a best-first scan beats probing an index.
_SCAN_LIMIT = 16
# Up to this many rules, all canonical, a matcher scans them as written for
# its first checks, then compiles them (see ``_scan.SCAN_CHECKS``): a site
# checked a few times never pays for an index.
_FEW_RULES = 64
# More rules than _FEW_RULES, up to this many, are scanned so too when their
# values hold fewer "*" than half as many as rules (else, mostly wildcards,
# they are indexed in C) and all are plain prefixes, or at most
# _SCAN_WILDCARDS of them have a "*" or a "$". A check of a path that
# starts with a rule's text (one ``str.startswith(tuple)``) tries every
# rule; any other path, only those with a "*" or a "$" (see ``_scan``).
_SCAN_RULES = 256
_SCAN_WILDCARDS = 16
# Up to this many plain rules, a scan's test of them all in C costs about
# what the compiled matcher's disallow shortcut does (0.50 against 0.44 us
# a check with 15 rules, 0.61 against 0.43 with 64): a path that starts with
# none is let go at once, with no charge to the scan (AgentMatcher.plain_prefixes).
_PLAIN_SHORTCUT = 16
# Many canonical rules, mostly wildcards, are indexed in C (``_globs``) for
# this many checks, then compiled: a site checked a few times never pays for
# the compiled index, one checked often gets its cheaper checks (and, with
# up to 256 rules, the disallow shortcut).
_INDEXED_CHECKS = 32
# Up to this many rules, a matcher keeps the literal prefixes of its
# disallow rules, so that most allowed paths take one C-level test.
_DENY_FROM = 256


class Verdict(NamedTuple):
    """The outcome of a check and the rule (with its line) that decided it.

    ``line`` and ``rule`` are ``None`` when no rule matched (RFC 9309 2.2.2:
    then the URI is allowed).
    """

    allowed: bool
    line: int | None = None
    rule: str | None = None


ALLOWED_BY_DEFAULT = Verdict(True)

_Key = RuleKey


class AgentMatcher:
    """The rules that apply to one product token, compiled for fast checks."""

    __slots__ = (
        "_compiled",
        "_end_index",
        "_exact",
        "_first",
        "_globs_index",
        "_gram_index",
        "_plain",
        "_prefix_index",
        "_prefix_lengths",
        "_scan",
        "_short_index",
        "_starred",
        "heads",
        "needles",
        "plain_prefixes",
        "rule_count",
    )
    _plain: FewPrefixes | DictPrefixes | SortedPrefixes
    _starred: FewPrefixes | DictPrefixes | SortedPrefixes | None
    _exact: dict[str, _Key]
    _scan: list[Wildcard] | None
    _prefix_index: dict[str, tuple[Entry, ...]]
    _gram_index: dict[str, tuple[Entry, ...]]
    _short_index: dict[str, tuple[Entry, ...]]
    _end_index: dict[str, tuple[Entry, ...]]
    _prefix_lengths: list[int]
    _compiled: dict[_Key, Wildcard]
    #: Few rules in canonical form scanned as written for the first checks
    #: (``None``: not so, or compiled since).
    _first: RuleScan | None
    #: Many canonical rules, mostly wildcards, indexed in C (``None``: not so).
    _globs_index: GlobIndex | None
    #: With :attr:`deny`: the longest piece of each disallow rule that starts
    #: with a wildcard (``/*?``, ``*.pdf$``); a path must also contain none.
    needles: tuple[str, ...]
    #: :attr:`deny` by the octet after their leading ``/``, for a check to
    #: look up: ``path[1:2]`` not a key, or the path starting with none of
    #: that key's prefixes (a str, or a tuple of several), is a path that
    #: starts with no disallow prefix. ``None``: no such shortcut.
    heads: dict[str, str | tuple[str, ...]] | None
    #: A scan of up to _PLAIN_SHORTCUT plain-prefix rules (see
    #: :meth:`decide`): every rule's text, so that a path that starts with
    #: none, one test in C, is decided by no rule without a check, as
    #: :attr:`heads` lets a compiled matcher's path go, at about the same
    #: cost. ``None``: not so.
    plain_prefixes: tuple[str, ...] | None
    rule_count: int

    def __init__(self, rules: Iterable[Rule]) -> None:
        if isinstance(rules, list):
            # A few searches in C over the joined values prove every rule a
            # canonical plain prefix, or canonical with wildcards: then no
            # index is built before it pays, and no deny shortcut either (a
            # scan starts with one ``str.startswith(tuple)``).
            count = len(rules)
            # Up to _FEW_RULES rules (most groups), the proofs alone: counting
            # the stars first measured 2% more at the median file.
            if count <= _FEW_RULES:
                # In C: allow flags, values, lines (a Rule is a 3-tuple: not checked,
                # which costs a third more).
                columns = list(zip(*rules, strict=False))
                joined = b"\n".join(columns[1]) if rules else b""
                if all_plain(joined):
                    self._scan_of(joined, rules, columns, plain=True)
                    return
                if all_glob(joined):
                    self._scan_of(joined, rules, columns, plain=False)
                    return
                # Some rule not in canonical form ("private/", an escape, a
                # URL): the group written in it, then scanned alike.
                if self._scan_written_canonical(rules, few=False):
                    return
            else:
                scannable = count <= _SCAN_RULES
                if scannable:
                    columns = list(zip(*rules, strict=False))
                    joined = b"\n".join(columns[1])
                else:
                    joined = b"\n".join([rule[1] for rule in rules])
                stars = joined.count(b"*")
                if stars * 2 >= count:
                    # Mostly wildcard rules, all canonical: indexed in C
                    # (_globs), unless a "$" stands inside a rule (a literal
                    # one, which no key of that index holds).
                    if all_glob(joined) and dollars_end(joined):
                        self._index_of(joined, rules)
                        return
                elif scannable:
                    if all_plain(joined):
                        self._scan_of(joined, rules, columns, plain=True)
                        return
                    if all_glob(joined):
                        if few_wildcards(joined, stars, _SCAN_WILDCARDS):
                            self._scan_of(joined, rules, columns, plain=False)
                            return
                    elif self._scan_written_canonical(rules, few=True):
                        return
        self._compile(rules)

    def _scan_written_canonical(self, rules: list[Rule], few: bool) -> bool:
        """Scan ``rules``, not all in canonical form, written in it (see
        :func:`~._rule_forms.canonical_rules`), if they have a text in it
        and, when ``few``, all are plain prefixes or few have wildcards;
        else ``False``."""
        canonical = canonical_rules(rules)
        if canonical is None:
            return False
        rules, joined = canonical
        plain = plain_form(joined)
        if few and not plain and not few_wildcards(joined, joined.count(b"*"), _SCAN_WILDCARDS):
            return False
        self._scan_of(joined, rules, list(zip(*rules, strict=False)), plain=plain)
        return True

    def _scan_of(
        self, joined: bytes, rules: list[Rule], columns: list[tuple[Any, ...]], plain: bool
    ) -> None:
        """Keep canonical rules as written to scan them: no key, no index
        (see :class:`~._scan.RuleScan`)."""
        scan = self._first = RuleScan(joined, rules, columns, plain)
        self._globs_index = None
        self.rule_count = len(scan.texts)
        self._no_shortcut()
        if plain and len(scan.texts) <= _PLAIN_SHORTCUT:
            self.plain_prefixes = scan.any

    def _index_of(self, joined: bytes, rules: list[Rule]) -> None:
        """Many canonical rules, mostly wildcards: kept as written, indexed
        by C-level operations (see ``_globs``)."""
        text = joined.decode("ascii")
        if b"\n\n" in joined or joined[:1] == b"\n" or joined[-1:] == b"\n":
            # Empty rules match nothing (RFC 9309 2.2.2).
            rules = [rule for rule in rules if rule[1]]
            text = "\n".join(filter(None, text.split("\n")))
        self._globs_index = GlobIndex(text, rules)
        self._first = None
        self.rule_count = len(rules)
        self._no_shortcut()

    def _compile(self, rules: Iterable[Rule]) -> None:
        self._globs_index = None
        tables = RuleTables()
        tables.add(rules)
        if tables.wildcards or tables.lazy:
            run_to_end(self._finish(tables))
        else:  # most files: prefix rules only
            self._set_prefixes(tables)
            self._scan, self._compiled = [], {}
            self._prefix_index = self._gram_index = self._short_index = self._end_index = {}
            self._prefix_lengths = []

    @classmethod
    def compile_steps(cls, rules: Iterable[Rule]) -> Steps[AgentMatcher]:
        """Compile ``rules`` in steps of :data:`STEP` rules (see ``_steps``)."""
        if isinstance(rules, list) and len(rules) <= _SCAN_RULES:
            return cls(rules)  # scanned at first, or less than a step's worth
        matcher = cls.__new__(cls)
        matcher._globs_index = None
        tables = RuleTables()
        iterator = iter(rules)
        while tables.add(islice(iterator, STEP)) == STEP:
            yield
        yield from matcher._finish(tables)
        return matcher

    def _finish(self, tables: RuleTables) -> Steps[None]:
        wildcards, lazy = tables.wildcards, tables.lazy
        if len(wildcards) + len(lazy) <= _SCAN_LIMIT:
            wildcards += map(compile_lazy, lazy)
            lazy = tables.lazy = []  # compiled once: disallow_shortcut reads them from wildcards
        self._compiled = {}
        self._set_prefixes(tables)
        if not lazy and len(wildcards) <= _SCAN_LIMIT:
            self._scan = sorted(wildcards, reverse=True)
            self._prefix_index = self._gram_index = self._short_index = self._end_index = {}
        else:
            self._scan = None
            indexes = yield from index_wildcards(wildcards, lazy)
            self._prefix_index, self._gram_index, self._short_index, self._end_index = indexes
        self._prefix_lengths = sorted({len(prefix) for prefix in self._prefix_index})

    def _set_prefixes(self, tables: RuleTables) -> None:
        self._first = None  # compiled: nothing of a scan is kept
        self.rule_count = tables.count
        if tables.count <= _DENY_FROM:
            self._shortcut(*disallow_shortcut(tables))
        else:
            self._no_shortcut()
        self._plain = prefix_index(tables.plain)
        self._starred = prefix_index(tables.starred, bonus=1) if tables.starred else None
        self._exact = tables.exact

    def _no_shortcut(self) -> None:
        self.needles, self.heads, self.plain_prefixes = (), None, None

    def _shortcut(self, deny: tuple[str, ...] | None, needles: tuple[str, ...]) -> None:
        """Keep the disallow shortcut (see :attr:`deny`) in its look-up form."""
        if deny is None or not all(prefix[:1] == "/" and len(prefix) > 1 for prefix in deny):
            self._no_shortcut()
            return
        heads: dict[str, list[str]] = {}
        for prefix in deny:  # by the octet after "/": a one-character str, shared
            heads.setdefault(prefix[1], []).append(prefix)
        self.needles, self.plain_prefixes = needles, None
        self.heads = {
            head: prefixes[0] if len(prefixes) == 1 else tuple(prefixes)
            for head, prefixes in heads.items()
        }

    @property
    def deny(self) -> tuple[str, ...] | None:
        """The literal prefixes (before any ``*``) of the disallow rules, when
        there are few: a path that starts with none of them is allowed
        whatever else matches (RFC 9309 2.2.2). ``None``: no such shortcut."""
        heads = self.heads
        if heads is None:
            return None
        return tuple(
            sorted(
                prefix
                for prefixes in heads.values()
                for prefix in ((prefixes,) if isinstance(prefixes, str) else prefixes)
            )
        )

    def decide(self, path: str) -> _Key | None:
        """The deciding rule for a path in canonical form (see ``normalize``).

        ``None`` if no rule matches; else the compiled rule: see
        :func:`key_allows` and :func:`key_line`.
        """
        first = self._first
        if first is not None:
            if first.budget > 0:
                return first.decide(path)
            self._compile(first.rules())
        if self._globs_index is not None:
            if self._globs_index.checks < _INDEXED_CHECKS:
                return self._globs_index.decide(path)
            self._compile(self._globs_index.rules())
        best = self._plain.longest(path)
        if self._starred is not None:
            found = self._starred.longest(path)
            if found is not None and (best is None or found > best):
                best = found
        if self._exact:
            found = self._exact.get(path)
            if found is not None and (best is None or found > best):
                best = found
        if self._scan is not None:
            scan: Iterable[Entry] = self._scan  # few wildcards: best first, stop when beaten
        elif self._prefix_index or self._gram_index or self._short_index or self._end_index:
            scan = self._candidates(path)
        else:
            return best
        floor = -1 if best is None else best
        for entry in scan:
            if entry.key < floor:
                break
            if isinstance(entry, Lazy):
                compiled = self._compiled.get(entry.key)
                if compiled is None:
                    compiled = self._compiled[entry.key] = compile_lazy(entry)
                entry = compiled
            key, prefix, pieces, anchored, needle = entry
            if needle in path and wildcard_matches(prefix, pieces, anchored, path):
                return key
        return best

    def _candidates(self, path: str) -> Iterable[Entry]:
        """The indexed wildcard rules that could match ``path``, best first.

        Each bucket is sorted best first when compiled; many candidates are
        merged lazily, so a check that finds its rule early stops early.
        """
        buckets: list[tuple[Entry, ...]] = []
        lengths = self._prefix_lengths
        prefixes = self._prefix_index
        for length in lengths[: bisect_right(lengths, len(path))]:
            bucket = prefixes.get(path[:length])
            if bucket:
                buckets.append(bucket)
        grams = self._gram_index
        if len(grams) < len(path):
            buckets.extend(bucket for gram, bucket in grams.items() if gram in path)
        else:
            found = {path[i : i + GRAM] for i in range(len(path) - GRAM + 1)}
            buckets.extend(grams[gram] for gram in found if gram in grams)
        shorts = self._short_index
        if len(shorts) < 2 * len(path):
            buckets.extend(bucket for piece, bucket in shorts.items() if piece in path)
        elif shorts:
            found = {path[i : i + size] for size in (1, 2) for i in range(len(path) - size + 1)}
            buckets.extend(shorts[piece] for piece in found if piece in shorts)
        ends = self._end_index
        if ends:
            for end in {path[-1:], path[-2:]}:
                bucket = ends.get(end)
                if bucket:
                    buckets.append(bucket)
        if len(buckets) == 1:
            return buckets[0]
        if sum(len(bucket) for bucket in buckets) <= _SCAN_LIMIT * 4:
            return sorted((rule for bucket in buckets for rule in bucket), reverse=True)
        return merge(*buckets, reverse=True)


def _allowing_all() -> AgentMatcher:
    """A matcher of no rule, compiled: its checks change nothing in it."""
    matcher = AgentMatcher.__new__(AgentMatcher)
    matcher._compile(())
    return matcher


#: The matcher of every agent of a file whose rules have no pattern (RFC
#: 9309 2.2.2: an empty ``Disallow:`` matches nothing, so everything is
#: allowed): one shared instance, built once (here, once ``_allowing_all`` and the
#: rest are defined), that no check changes.
ALLOWING_ALL = _allowing_all()

"""Longest plain-prefix match over many patterns (RFC 9309 2.2.2). Pure.

Three indexes with one method, :meth:`longest`, both independent of the number
of patterns in their cost per check:

* :class:`FewPrefixes`: up to :data:`FEW` patterns tried longest first;
* :class:`DictPrefixes`: a dict probed at the distinct lengths of the
  patterns that start like the path; the fastest, about 120 bytes per pattern;
* :class:`SortedPrefixes`: the patterns sorted in one string, found with
  ``bisect``; about 12 bytes plus the pattern's length per pattern, for files
  with thousands of rules.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import accumulate
from operator import itemgetter

from ._rulekey import RuleKey, key_allows, key_line, key_offset, low_bits, pack, with_specificity

__all__ = ["DictPrefixes", "FewPrefixes", "SortedPrefixes", "prefix_index"]

#: From this many plain patterns on, the compact index is used.
SORTED_FROM = 256
#: Up to this many, patterns are tried one by one.
FEW = 6


class FewPrefixes:
    """A few patterns, tried longest first: the cheapest to build, and as
    fast to search as the dict for up to :data:`FEW` patterns."""

    __slots__ = ("_patterns",)

    def __init__(self, table: dict[str, RuleKey]) -> None:
        # A longer pattern has a larger key: key order is longest first.
        self._patterns = sorted(table.items(), key=itemgetter(1), reverse=True)

    def longest(self, path: str) -> RuleKey | None:
        """The key of the longest pattern that is a prefix of ``path``."""
        for pattern, key in self._patterns:
            if path.startswith(pattern):
                return key
        return None


class DictPrefixes:
    """Patterns in a dict, probed at the lengths of the patterns whose
    second character is the path's (patterns start with ``/``), longest
    first.

    Kept small: the lengths are found by that one character (a string the
    interpreter shares), equal tuples of lengths are one tuple, and a key's
    specificity is its pattern's length plus ``bonus``, so when no key has
    low bits of its caller's, each is kept as ``line << 1 | allow`` (a small
    int; those below 257 are shared by the interpreter) and rebuilt on its
    first match (then remembered: at most one per pattern)."""

    __slots__ = ("_bonus", "_empty", "_hits", "_lengths_by_second", "_small", "_table")
    _lengths_by_second: dict[str, tuple[int, ...]]
    _hits: dict[str, RuleKey] | None

    def __init__(self, table: dict[str, RuleKey], bonus: int = 0) -> None:
        # The empty pattern (from "Disallow: *") is a prefix of every path.
        self._empty = table.get("")
        self._bonus = bonus
        self._small = not any(map(key_offset, table.values()))
        self._hits = None
        self._table = (
            {pattern: key_line(key) << 1 | key_allows(key) for pattern, key in table.items()}
            if self._small
            else table
        )
        by_second: dict[str, list[int]] = {}
        for pattern in sorted(table, key=len, reverse=True):
            if pattern:  # "/" and other one-character patterns: under ""
                lengths = by_second.setdefault(pattern[1:2], [])
                if not lengths or lengths[-1] != len(pattern):
                    lengths.append(len(pattern))
        shared: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._lengths_by_second = {
            second: shared.setdefault(kept, kept)
            for second, kept in zip(by_second, map(tuple, by_second.values()), strict=True)
        }

    def longest(self, path: str) -> RuleKey | None:
        """The key of the longest pattern that is a prefix of ``path``."""
        table = self._table
        size = len(path)
        for length in self._lengths_by_second.get(path[1:2], ()):
            if length <= size:
                head = path[:length]
                found = table.get(head)
                if found is not None:
                    return self._key(head, found)
        # One-character patterns (such as "/") are under "".
        if 1 in self._lengths_by_second.get("", ()):
            head = path[:1]
            found = table.get(head)
            if found is not None:
                return self._key(head, found)
        return self._empty

    def _key(self, pattern: str, kept: int) -> RuleKey:
        """The key of ``pattern``, from what the table keeps; remembered, so
        a rule that decides many checks is rebuilt once."""
        if not self._small:
            return kept
        hits = self._hits
        if hits is None:
            hits = self._hits = {}
        else:
            key = hits.get(pattern)
            if key is not None:
                return key
        key = pack(len(pattern) + self._bonus, bool(kept & 1), kept >> 1)
        hits[pattern] = key
        return key


class SortedPrefixes:
    """Patterns sorted in one string; a key's specificity is not stored but
    is its pattern's length plus ``bonus`` (the same for every pattern)."""

    __slots__ = ("_blob", "_bonus", "_lows", "_starts")

    def __init__(self, table: dict[str, RuleKey], bonus: int = 0) -> None:
        self._bonus = bonus
        patterns = sorted(table)
        self._blob = "".join(patterns)
        self._starts = array("I", accumulate(map(len, patterns), initial=0))
        # The specificity follows from the pattern's length: kept once, in the blob.
        mask = low_bits(-1)
        self._lows = array("Q", [table[pattern] & mask for pattern in patterns])

    def _pattern(self, index: int) -> str:
        return self._blob[self._starts[index] : self._starts[index + 1]]

    def longest(self, path: str) -> RuleKey | None:
        """The key of the longest pattern that is a prefix of ``path``.

        The largest pattern not above the query is the answer if it is a
        prefix of it; otherwise the answer is a prefix of their common
        prefix, which becomes the query. Each round shortens the query.
        """
        query, high = path, len(self._lows)
        while high:
            index = bisect_right(range(high), query, key=self._pattern) - 1
            if index < 0:
                return None
            candidate = self._pattern(index)
            if query.startswith(candidate):
                return with_specificity(len(candidate) + self._bonus, self._lows[index])
            common = 0
            for mine, theirs in zip(candidate, query, strict=False):
                if mine != theirs:
                    break
                common += 1
            # No common octet: only the empty pattern, sorted first, can remain.
            query, high = query[:common], index
        return None


def prefix_index(
    table: dict[str, RuleKey], bonus: int = 0
) -> FewPrefixes | DictPrefixes | SortedPrefixes:
    """The index that suits ``table``'s size.

    Every key's specificity must be its pattern's length plus ``bonus``, so
    that the longest pattern is also the most specific.
    """
    if len(table) <= FEW:
        return FewPrefixes(table)
    if len(table) >= SORTED_FROM:
        return SortedPrefixes(table, bonus)
    return DictPrefixes(table, bonus)

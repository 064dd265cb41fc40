"""Many rules in canonical form, indexed by C-level operations (RFC 9309 2.2.2). Pure.

A hostile robots.txt can hold tens of thousands of wildcard rules
(``/*abcdefgh*.php$``, ``/*a*b*cd$``). A loop in Python over them (split,
classify, key, index) costs microseconds a rule, most of a file's parse;
here the rules, proved canonical by the caller (stars and a final ``$``, no
escape to normalise), are kept as written and indexed without a Python step
per rule: one ``re.findall`` over the joined values gives each rule an index
key (strings only, no tuple a rule), one C-level ``map`` appends each rule
to its key's list (no sort), and a rule's specificity is its length.

A rule's index key is a string that any path it matches contains (with a
final ``$`` standing for the path's end):

* its literal prefix (the text before the first ``*``) when that is longer
  than ``/`` (``/shop*.pdf`` under ``/shop``), found at the path's start;
* else, for an anchored rule whose first piece (text between stars) is
  shorter than 3 octets, its last piece of 1 or 2 octets and the ``$``
  (``/*a*bc$`` under ``bc$``): only paths that end with it;
* else the first 2 or 3 octets of its first piece of 2 octets or more
  (``/*abcdefgh*.php$`` under ``abc``);
* else two one-octet pieces in order (``/*a*b*c`` under ``a*b``): paths
  with an ``a`` before a ``b``;
* else a one-octet piece (``/*a`` under ``a``);
* else (``/*``, ``*``, ``/*$``) a key every path looks up.

Past ``SHARED_END`` rules under one key, a bucket keeps one rule a pattern
and its rules, unless under their literal prefix, are keyed again, each by
the piece of it that the fewest rules hold (``_spread``): 18,681 rules
``/*abcdefgh*q1`` ... all keyed ``abc`` would all be tried for
``/abcdefgh``.

A check looks up the path's prefixes (at the lengths of the rules'
prefixes), its substrings of the key lengths present (1 to 3 octets), its
last 1 and 2 octets with ``$`` and, when such keys exist, its ordered pairs
of distinct octets (at most one a pair of the path's alphabet, found from
each octet's first and last place); the rules found are sorted by
specificity, then file order, and tried most specific first, each matched from its text
(greedy, left to right, no split kept), until one matches; of the same
specificity, only a rule that would win the RFC 9309 2.2.2 tie (allow,
then the earliest line) is tried after it. Keys only narrow the
candidates: a rule that shares a key with a path is still matched in full,
so the verdicts are the plain scan's.

Cost of a check: O(p + a^2) look-ups for a path of p octets over an
alphabet of a distinct octets (a is at most the canonical set's size, so
linear in p), then O(c log c) to sort its c candidates and O(c * p) to try
them; c is at most the number of rules, so at worst every rule is tried
once: linear in the rules (and in the path for each).
"""

from __future__ import annotations

import re
from array import array
from collections import defaultdict, deque
from itertools import chain, repeat
from operator import add, itemgetter

from ._glob import matches
from ._rulekey import LINE_BITS, LINE_MAX, OFFSET_BITS, RuleKey
from ._spread import SHARED_END, least_shared
from ._steps import run_to_end

__all__ = ["SHARED_END", "GlobIndex"]

# A literal octet of a piece (neither "*" nor "$" nor a line's end).
_C = r"[^*$\n]"
# One match per line, which is the line's key (strings only: no tuple a
# rule). The first alternative that applies places the match, the group
# then takes the key there: the literal prefix (at the line's start); else,
# when the first piece is shorter than 3 octets, an anchored rule's last
# piece of 1 or 2 octets with its "$"; else the first 2 or 3 octets of the
# first piece of 2 or more; else two one-octet pieces in order ("a*b");
# else a one-octet piece; else nothing. Each run goes over its line once
# and back at most once (lookaheads are bounded), so linear in the rules.
_KEYS = re.compile(
    rf"^(?:(?=/{_C})"
    rf"|(?=[^\n]*\$$)(?![^*\n]*\*{_C}{{3}})[^\n]*\*(?={_C}{{1,2}}\$$)"
    rf"|[^\n]*?\*(?={_C}{{2}})"
    rf"|[^\n]*?\*(?={_C}\*{_C})"
    rf"|[^\n]*?\*(?={_C})"
    rf"|)(^/{_C}+|{_C}{{1,2}}\$$|{_C}{{2,3}}|{_C}\*{_C}|{_C}|)",
    re.MULTILINE,
)
# Among the keys found: those a path's substrings are looked up for (and
# literal prefixes of 1 to 3 octets, looked up so too), and the prefixes.
_GRAM_KEYS = re.compile(r"^[^*$\n]{1,3}$", re.MULTILINE)
_PREFIX_KEYS = re.compile(r"^/[^*$\n]+$", re.MULTILINE)


def _distinct(bucket: list[int], texts: list[str], allows: bytes) -> list[int]:
    """The rules of ``bucket`` (in file order) less those whose text a
    better one has (one line written over and over): RFC 9309 2.2.2, of the
    same pattern the allow rule, then the earliest line, always wins, so the
    others never decide, and a check would try every copy."""
    chosen: dict[str, int] = {}
    for index in bucket:
        known = chosen.setdefault(texts[index], index)
        if allows[index] and not allows[known]:
            chosen[texts[index]] = index
    return sorted(chosen.values())


def _key_again(buckets: defaultdict[str, list[int]], shared: list[str], texts: list[str]) -> None:
    """The rules of the ``shared`` buckets (more than ``SHARED_END`` rules
    each) keyed again, each by its least shared piece where fewer rules
    hold it (see ``_spread``), then in file order again. Not a rule under
    its literal prefix (``/zq*htm*ab`` under ``/zq``), which only paths that
    start with it look up; under a key that starts with ``/`` a rule may
    instead be there by a piece (``/*/abcdefgh*q1`` under ``/ab``)."""
    rules: list[int] = []
    homes: list[str] = []
    shares: list[int] = []
    for key in shared:
        bucket = buckets.pop(key)
        if key[:1] == "/":  # its rules that start with it are there by their prefix
            stay: list[int] = []
            moving: list[int] = []
            for index in bucket:
                (stay if texts[index].startswith(key) else moving).append(index)
            if stay:
                buckets[key] = stay
            bucket = moving
        rules += bucket
        homes += [key] * len(bucket)
        shares += [len(bucket) + len(buckets.get(key, ()))] * len(bucket)
    if not rules:
        return
    sizes = {key: len(bucket) for key, bucket in buckets.items()}
    keys = run_to_end(least_shared(list(map(texts.__getitem__, rules)), homes, shares, sizes))
    for index, new, home in zip(rules, keys, homes, strict=True):
        buckets[home if new is None else new].append(index)
    for grown in {new for new in keys if new is not None} | set(homes):
        if grown in buckets:  # a home all of whose rules moved is gone
            buckets[grown].sort()  # file order again


#: One allow/disallow line as read: allow, its value as written, its line.
Rule = tuple[bool, bytes, int]


class GlobIndex:
    """Non-empty rules in canonical form (``text``: their values joined by LF,
    one per rule of ``rules``), indexed by key; :meth:`decide` gives the
    deciding rule's key."""

    __slots__ = (
        "_allows",
        "_buckets",
        "_lengths",
        "_lines",
        "_pairs",
        "_prefix_sizes",
        "_sizes",
        "_suffixes",
        "_texts",
        "checks",
    )

    def __init__(self, text: str, rules: list[Rule]) -> None:
        # Each rule's allow flag and line in one octet and four (lines fit in
        # 31 bits, see ``_rulekey``): the values are the texts, kept once.
        self._allows = bytes(map(itemgetter(0), rules))
        self._lines = array("I", map(itemgetter(2), rules))
        self._texts = texts = text.split("\n")
        keys = _KEYS.findall(text)
        # Each key's rules in file order, appended in C (no Python step a rule).
        buckets: defaultdict[str, list[int]] = defaultdict(list)
        deque(map(list.append, map(buckets.__getitem__, keys), range(len(keys))), maxlen=0)
        shared = [key for key, bucket in buckets.items() if len(bucket) > SHARED_END]
        for key in shared:
            buckets[key] = _distinct(buckets[key], texts, self._allows)
        shared = [key for key in shared if len(buckets[key]) > SHARED_END]
        _key_again(buckets, shared, texts)
        # Tuples (no room kept for more): built in C.
        self._buckets = dict(zip(buckets, map(tuple, buckets.values()), strict=True))
        self._lengths = array("I", map(len, texts))
        # What a check looks up, from the keys present (each once).
        found = "\n".join(self._buckets)
        self._prefix_sizes = sorted(set(map(len, _PREFIX_KEYS.findall(found))))
        self._sizes = tuple(sorted(set(map(len, _GRAM_KEYS.findall(found)))))
        self._suffixes = "$" in found
        self._pairs = "*" in found
        #: How many checks this index has decided.
        self.checks = 0

    def rules(self) -> list[Rule]:
        """The rules as read (allow, value, line), to compile them otherwise."""
        return list(
            zip(map(bool, self._allows), map(str.encode, self._texts), self._lines, strict=True)
        )

    def _candidates(self, path: str) -> list[int]:
        """The rules that share a key with ``path``, most specific first,
        then in file order."""
        size = len(path)
        wanted = {path[:length] for length in self._prefix_sizes if length <= size}
        for length in self._sizes:
            if length == 1:
                wanted.update(path)
            elif length == 2:
                wanted.update(map(add, path, path[1:]))
            else:
                wanted.update(map(add, map(add, path, path[1:]), path[2:]))
        if self._suffixes:  # "b$", "ab$": the path ends with the rule's last piece
            ended = path + "$"
            wanted.update((ended[-2:], ended[-3:]))
        if self._pairs:
            # "a*b": an octet, then another later (or the same one again);
            # at most one look-up per two distinct octets of the path.
            first = dict(zip(reversed(path), range(size - 1, -1, -1), strict=True))
            last = dict(zip(path, range(size), strict=True))
            wanted.update([a + "*" + b for a, i in first.items() for b, j in last.items() if i < j])
        wanted.add("")
        # In file order, then most specific first (a stable sort): of the
        # same specificity the earliest line is tried first, so once one
        # matches, the later ones lose the tie without being matched (an
        # allow rule is still tried: it would win it).
        found = sorted(chain.from_iterable(map(self._buckets.get, wanted, repeat(()))))
        found.sort(key=self._lengths.__getitem__, reverse=True)
        return found

    def decide(self, path: str) -> RuleKey | None:
        """The key of the most specific rule matching ``path`` (see ``_rulekey``).

        Linear: O(p + a^2) look-ups, then at most every rule tried once, each
        in O(p) (p: the path's octets, a: its distinct octets; see above)."""
        self.checks += 1
        lengths, texts, allows, lines = self._lengths, self._texts, self._allows, self._lines
        best = -1
        level = -1
        for index in self._candidates(path):
            length = lengths[index]
            if length < level:
                break
            if length == level:
                # A tie: tried only if it would win it (allow, then the earlier line).
                key = (
                    (length << 1 | allows[index]) << LINE_BITS | (LINE_MAX - lines[index])
                ) << OFFSET_BITS
                if key <= best:
                    continue
            if matches(texts[index], path):
                key = (
                    (length << 1 | allows[index]) << LINE_BITS | (LINE_MAX - lines[index])
                ) << OFFSET_BITS
                level, best = length, max(best, key)
        return None if best < 0 else best

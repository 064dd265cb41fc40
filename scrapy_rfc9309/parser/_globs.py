"""Many rules in canonical form, indexed by C-level operations (RFC 9309 2.2.2). Pure.

A hostile robots.txt can hold tens of thousands of wildcard rules
(``/*abcdefgh*.php$``). A loop in Python over them (split, classify, key,
index) costs microseconds a rule, most of a file's parse; here the rules,
proved canonical by the caller (stars and a final ``$``, no escape to
normalise), are kept as written and indexed without a Python step per rule:
one ``re.findall`` over the joined values gives each rule an index key, one
``sorted`` orders the rules by key, two ``dict(zip(...))`` say where each
key's rules are in that order, and a rule's specificity is its length.

A rule's index key is a string that any path it matches contains:

* its literal prefix (the text before the first ``*``) when that is longer
  than ``/`` (``/shop*.pdf`` under ``/shop``), found at the path's start;
* else the first 2 or 3 octets of its first piece (text between stars) of 2
  octets or more (``/*abcdefgh*.php$`` under ``abc``);
* else its first piece of one octet (``/*a*b$`` under ``a``);
* else (``/*``, ``*``, ``/*$``) the empty string: a candidate for every path.

A check looks up the path's prefixes (at the lengths of the rules'
prefixes) and its substrings of 1 to 3 octets in two dicts (where each
key's rules start and end in the sorted order, built in C); the rules
found are tried most specific first, each split into pieces on its first
try (then kept), until one matches; rules of the same specificity are all
tried, so that the RFC 9309 2.2.2 tie-breaks (allow wins, then the
earliest line) hold. Keys only narrow the candidates: a rule that shares a
key with a path is still matched in full, so the verdicts are the plain
scan's. The cost of a check grows with its candidates; at worst every rule
is tried once (linear).
"""

from __future__ import annotations

import re
from itertools import chain
from operator import itemgetter

from ._rulekey import LINE_BITS, LINE_MAX, OFFSET_BITS, RuleKey

__all__ = ["GlobIndex"]

# One match per line (every alternative starts at a line start, the last is
# empty), each group a candidate key; tried at most three times a line, so
# linear in the joined rules.
_KEYS = re.compile(
    r"^(?:(/[^*$\n]+)|[^\n]*?\*([^*$\n]{2,3})|[^\n]*?\*([^*$\n])|)",
    re.MULTILINE,
)

#: A rule split for matching: prefix, pieces after each ``*``, anchored.
_Split = tuple[str, tuple[str, ...], bool]


def _split(text: str) -> _Split:
    """A canonical rule as (prefix, pieces, anchored); a final ``$`` anchors."""
    anchored = text[-1] == "$"
    prefix, *pieces = (text[:-1] if anchored else text).split("*")
    if anchored and pieces and not pieces[-1]:
        return prefix, (*filter(None, pieces), ""), True  # "/a*$": "" always ends the path
    return prefix, tuple(filter(None, pieces)), anchored


def _matches(split: _Split, path: str) -> bool:
    """Greedy left-to-right glob match (leftmost occurrence of each piece):
    linear, never backtracks, exact for ``*``-only patterns."""
    prefix, pieces, anchored = split
    if not path.startswith(prefix):
        return False
    position = len(prefix)
    last = ""
    if anchored:
        if not pieces:
            return len(path) == position
        pieces, last = pieces[:-1], pieces[-1]
    for piece in pieces:
        found = path.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    if anchored:
        return len(path) - len(last) >= position and path.endswith(last)
    return True


class GlobIndex:
    """Non-empty rules in canonical form (``texts``, with their ``allows`` and
    ``lines``), indexed by key; :meth:`decide` gives the deciding rule's key."""

    __slots__ = (
        "_allows",
        "_ends",
        "_lengths",
        "_lines",
        "_order",
        "_prefix_sizes",
        "_sizes",
        "_splits",
        "_starts",
        "_texts",
        "checks",
    )

    def __init__(self, texts: list[str], allows: list[bool], lines: list[int]) -> None:
        self._texts, self._allows, self._lines = texts, allows, lines
        found = _KEYS.findall("\n".join(texts))
        keys = list(map("".join, found))
        order = sorted(range(len(keys)), key=keys.__getitem__)
        self._order = order
        ordered = list(map(keys.__getitem__, order))
        # Where each key's rules start and end in ``order``: two dicts built
        # in C (a later item overwrites an earlier one).
        count = len(ordered)
        self._starts = dict(zip(reversed(ordered), range(count - 1, -1, -1), strict=True))
        self._ends = dict(zip(ordered, range(1, count + 1), strict=True))
        self._lengths = list(map(len, texts))
        self._prefix_sizes = sorted(set(map(len, set(map(itemgetter(0), found)))) - {0})
        # The lengths of the other keys (1 to 3): the path's substrings looked up.
        sizes = set(map(len, set(map(itemgetter(1), found))))
        if any(map(itemgetter(2), found)):
            sizes.add(1)
        self._sizes = tuple(sorted(sizes - {0}))
        self._splits: dict[int, _Split] = {}
        #: How many checks this index has decided.
        self.checks = 0

    def rules(self) -> list[tuple[bool, bytes, int]]:
        """The rules as read (allow, value, line), to compile them otherwise."""
        return [
            (allow, text.encode("ascii"), line)
            for text, allow, line in zip(self._texts, self._allows, self._lines, strict=True)
        ]

    def _candidates(self, path: str) -> list[int]:
        """The rules that share a key with ``path``, most specific first."""
        starts, ends, order = self._starts, self._ends, self._order
        size = len(path)
        wanted = {path[:length] for length in self._prefix_sizes if length <= size}
        for length in self._sizes:
            if length == 1:
                wanted.update(path)
            else:
                wanted.update(path[i : i + length] for i in range(size - length + 1))
        wanted.add("")
        slices = [order[starts[key] : ends[key]] for key in wanted if key in starts]
        found = list(chain.from_iterable(slices))
        found.sort(key=self._lengths.__getitem__, reverse=True)
        return found

    def decide(self, path: str) -> RuleKey | None:
        """The key of the most specific rule matching ``path`` (see ``_rulekey``)."""
        self.checks += 1
        lengths, splits, texts = self._lengths, self._splits, self._texts
        best: RuleKey | None = None
        level = -1
        for index in self._candidates(path):
            length = lengths[index]
            if length < level:
                break
            split = splits.get(index)
            if split is None:
                split = splits[index] = _split(texts[index])
            if _matches(split, path):
                level = length
                key = (
                    (length << 1 | self._allows[index]) << LINE_BITS
                    | (LINE_MAX - self._lines[index])
                ) << OFFSET_BITS
                if best is None or key > best:
                    best = key
        return best

"""Rules that too many share one index key, keyed again by their least shared piece.

Both wildcard indexes (``_globs`` for a file's first checks, ``_wildcards``
once compiled) file a rule under one string that any path it matches holds
(RFC 9309 2.2.2: a rule's literal text must appear in the path, in order).
The string is chosen by the rule's shape alone, so a hostile file can give
thousands of rules the same one (``/*abcdefgh*q1`` ... ``/*abcdefgh*q18681``
all under ``abc``): a path that holds it makes every rule a candidate, each
failing only at its last piece. Such rules are keyed again here
by the string of theirs that the fewest rules hold: 3 octets of a literal
run (the text between two ``*``, cut from its start in pieces of 3), else a
whole run of 2 octets; counted over the rules keyed again and the index's
other keys, in C (one ``re.findall`` a rule, one ``Counter``, one ``min``):
about 1 us a rule, paid only by buckets of more than ``SHARED_END`` rules.
A rule keeps its key where no string of its own is held by fewer rules than
share that key now.

Pure, no Scrapy import.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import chain

from ._steps import STEP, Steps

__all__ = ["least_shared"]

# A literal run ("*" and "$" end one) in pieces of 3 octets from its start
# (a rest of 1 or 2 left out): any of them is in every path the rule
# matches. Every overlapping 3 octets would cost about three times as much
# (64 against 25 ms for 22,000 rules) for a little more choice.
_GRAMS = re.compile(r"[^*$\n]{3}")
# A literal run of exactly 2 octets ("/*ab*cd$": "ab", "cd").
_RUNS_OF_TWO = re.compile(r"(?<![^*$\n])[^*$\n]{2}(?![^*$\n])")


def least_shared(
    texts: Sequence[str], shares: Sequence[int], sizes: Mapping[str, int]
) -> Steps[list[str | None]]:
    """For each rule (``texts``: its pattern as written, or its prefix and
    pieces joined by ``*``), the string to key it by instead of the key it
    shares now with ``shares[i]`` rules; ``None`` to keep that key. In steps
    of :data:`STEP` rules (see ``_steps``).

    ``sizes``: how many rules each other key of the index holds, added to
    the count of the same string here. A rule's string is the one of its
    3-octet pieces held by the fewest (one ``min`` in C), or, when no run of
    it is 3 octets long, of its 2-octet runs; it is taken only if fewer
    rules hold it than share the rule's key now. Linear in the octets of
    ``texts``.
    """
    grams: list[list[str]] = []
    for start in range(0, len(texts), STEP):
        if start:
            yield
        chunk = texts[start : start + STEP]
        found = list(map(_GRAMS.findall, chunk))
        if not all(found):
            found = [
                own or _RUNS_OF_TWO.findall(text) for own, text in zip(found, chunk, strict=True)
            ]
        grams += found
    yield
    counts = Counter(chain.from_iterable(grams))
    for key in sizes.keys() & counts.keys():
        counts[key] += sizes[key]
    least = partial(min, key=counts.__getitem__, default=None)
    chosen: list[str | None] = []
    for start in range(0, len(grams), STEP):
        yield
        chosen += map(least, grams[start : start + STEP])
    return [
        None if key is None or counts[key] >= share else key
        for key, share in zip(chosen, shares, strict=True)
    ]

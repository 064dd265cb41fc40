"""Rules that too many share one index key, keyed again by their least shared piece.

Both wildcard indexes (``_globs`` for a file's first checks, ``_wildcards``
once compiled) file a rule under one string that any path it matches holds
(RFC 9309 2.2.2: a rule's literal text must appear in the path, in order).
The string is chosen by the rule's shape alone, so a hostile file can give
thousands of rules the same one (``/*abcdefgh*q1`` ... ``/*abcdefgh*q18681``
all under ``abc``): a path that holds it makes every rule a candidate, each
failing only at its last piece. Such rules are keyed again here by the
string of theirs that the fewest rules hold: 3 octets of a literal run (the
text between two ``*``, cut from its start in pieces of 3) or a whole run of
2 octets, read from the rule's first and last 48 octets; counted over the
rules keyed again and the index's other keys, in C (one ``re.findall`` a
rule, one ``Counter``, one ``min``): about 1.5 us a short rule, 6 us one
of 450 octets, paid only by buckets of more than :data:`SHARED_END` rules.
A rule keeps its key unless a string of its own is held by fewer rules than
share that key now, and unless the bucket it would make holds more than
``SHARED_END`` rules and more than half the rule's share: keying again
makes no big bucket but by splitting one at least in two. Which strings
paths hold is not known here, so a rare key is worth as much as a common
one: were a rare key's rules (``/*zqx*htm*...`` x 15,000, under ``zqx``)
moved whole to a string they all hold but common in paths (``htm``),
``/index.htm`` would try all of them, where it tried none; and were
20,000 rules under ``htm`` (``/*htm*qzk*...``) kept there because their
least shared pieces are held by 1,300 each, it would try all 20,000.

The new key is looked up anywhere in a path. So the callers never key
again the rules under a literal prefix (``/shop*...``), which only a path
that starts with it looks up: 21,300 rules ``/zq*htm*...`` moved to ``htm``
would all be tried for ``/index.htm``, which tries none under ``/zq``.

Pure, no Scrapy import.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import chain

from ._steps import STEP, Steps

__all__ = ["ENDS_READ", "SHARED_END", "least_shared"]

# The strings a rule may be keyed by, read in one pass: 3 octets of a literal
# run ("*" and "$" end one), cut from its start in pieces of 3 (a rest of 1 or
# 2 left out), or a whole run of 2 octets ("/*ab*cd$": "ab", "cd"). Any of
# them is in every path the rule matches. Every overlapping 3 octets would
# cost about three times as much for a little more choice.
_CANDIDATES = re.compile(r"[^*$\n]{3}|(?<![^*$\n])[^*$\n]{2}(?![^*$\n])")
#: A bucket of more rules than this keeps one rule a pattern (copies never
#: decide) and, unless under a literal prefix, its rules are keyed again
#: here; a bucket of more is made only by splitting one at least in two.
SHARED_END = 1024
# The count of a string no rule is moved to.
_NEVER = 1 << 62
#: Octets read at each end of a rule (its candidates come from there only), so
#: that a rule of long runs costs what a short one does.
ENDS_READ = 48


def _ends(text: str) -> str:
    """A rule's first and last :data:`ENDS_READ` octets, a ``*`` between (no
    candidate spans the cut; one cut inside a run is still part of it)."""
    if len(text) <= 2 * ENDS_READ:
        return text
    return f"{text[:ENDS_READ]}*{text[-ENDS_READ:]}"


def least_shared(
    texts: Sequence[str],
    homes: Sequence[str],
    shares: Sequence[int],
    sizes: Mapping[str, int],
) -> Steps[list[str | None]]:
    """For each rule (``texts``: its pattern as written, or its prefix and
    pieces joined by ``*``), the string to key it by instead of the key it
    is under now (``homes``), which ``shares[i]`` rules share; ``None`` to
    keep that key. In steps of :data:`STEP` rules (see ``_steps``), each
    reading at most ``2 * ENDS_READ`` octets a rule.

    ``sizes``: how many rules each other key of the index holds, added to
    the count of the same string here. A rule's string is the one of its
    candidates (3 octets of a literal run, or a whole run of 2) held by the
    fewest (one ``min`` in C), never a key being keyed again (``homes``);
    it is taken only if fewer rules hold it than share the rule's key now,
    and if the bucket it then makes (the rules moved there and those there)
    holds at most :data:`SHARED_END` rules or at most half the rule's
    share. A rule that stays only makes a new key's bucket smaller. Linear
    in the rules.
    """
    candidates: list[list[str]] = []
    counts: Counter[str] = Counter()
    for start in range(0, len(texts), STEP):
        if start:
            yield
        found = list(map(_CANDIDATES.findall, map(_ends, texts[start : start + STEP])))
        counts.update(chain.from_iterable(found))
        candidates += found
    yield
    for key in sizes.keys() & counts.keys():
        counts[key] += sizes[key]
    # A home keeps its rules that stay: never a new key, whose bucket as
    # made would not count them.
    for key in counts.keys() & set(homes):
        counts[key] = _NEVER
    least = partial(min, key=counts.__getitem__, default=None)
    chosen: list[str | None] = []
    for start in range(0, len(candidates), STEP):
        yield
        chosen += map(least, candidates[start : start + STEP])
    yield
    moved = [
        None if key is None or counts[key] >= share else key
        for key, share in zip(chosen, shares, strict=True)
    ]
    # Each new key's bucket as made: the rules moved there and those there.
    made = Counter(moved)
    for key in sizes.keys() & made.keys():
        made[key] += sizes[key]
    yield
    return [
        None if key is None or SHARED_END < made[key] > share // 2 else key
        for key, share in zip(moved, shares, strict=True)
    ]

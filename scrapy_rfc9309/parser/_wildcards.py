"""Wildcard rules compiled and indexed (RFC 9309 2.2.2 and 2.2.3). Pure.

A rule with a ``*`` or a final ``$`` is split into its literal prefix and
the pieces after each ``*`` (:func:`compile_pattern`); a big file's
canonical ones wait as :class:`Lazy` until a check first tries them.
:func:`index_wildcards` files them under a string any path they match
contains, so a check of ``AgentMatcher`` tries only the
rules that can match.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ._encoding import normalize
from ._glob import pieces_follow
from ._rulekey import RuleKey
from ._spread import SHARED_END, least_shared
from ._steps import STEP, Steps

__all__ = [
    "GRAM",
    "Entry",
    "Lazy",
    "Wildcard",
    "canonical_text",
    "compile_lazy",
    "compile_pattern",
    "index_wildcards",
    "wildcard_matches",
]

# The length of the key a rule of a long enough piece is indexed under.
GRAM = 3
# A pattern already in canonical form, stars and dollars included.
_CANONICAL_GLOB = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]*")


class Wildcard(NamedTuple):
    """A compiled wildcard rule: ``prefix``, then ``pieces`` in order, after
    each ``*``; when ``anchored`` the last piece must end the path. ``needle``
    is its longest piece, which any path it matches contains."""

    key: RuleKey
    prefix: str
    pieces: tuple[str, ...]
    anchored: bool
    needle: str


class Lazy(NamedTuple):
    """A wildcard rule indexed but not yet split into pieces: most of a big
    file's wildcard rules are never a candidate, so they are compiled on the
    first check that tries them (then kept)."""

    key: RuleKey
    pattern: bytes


Entry = Wildcard | Lazy


def wildcard_matches(prefix: str, pieces: tuple[str, ...], anchored: bool, path: str) -> bool:
    """Whether a compiled rule matches ``path`` (see :mod:`._glob`)."""
    if not path.startswith(prefix):
        return False
    if anchored:
        return pieces_follow(path, len(prefix), pieces[:-1], pieces[-1])
    return pieces_follow(path, len(prefix), pieces, None)


def compile_pattern(value: str) -> tuple[str, tuple[str, ...], bool, int]:
    """Split a rule value into (prefix, pieces after each ``*``, anchored, length)."""
    anchored = value.endswith("$")
    if anchored:
        value = value[:-1]
    if _CANONICAL_GLOB.fullmatch(value):  # no escape to normalise: the common case
        parts = value.split("*")
        specificity = len(value) + anchored
    else:
        # each piece in canonical form: "%2A" and "%24" stand for a literal "*" and "$"
        parts = [normalize(part) for part in value.split("*")]
        specificity = sum(len(part) for part in parts) + (len(parts) - 1) + anchored
    pieces = tuple(part for part in parts[1:] if part)
    if anchored and len(parts) > 1 and not parts[-1]:
        pieces += ("",)  # "/a*$": the star reaches the end, which always holds
    return parts[0], pieces, anchored, specificity


def canonical_text(value: str) -> str | None:
    """``value`` written in the form a check's path takes, as
    :func:`compile_pattern` reads it: each piece between stars normalised
    (see ``normalize``), the stars and a final ``$`` kept, so its length is
    the rule's specificity (RFC 9309 2.2.2). ``None`` when no text says it:
    a ``%2A`` or a final ``%24`` that normalises to a literal ``*`` or ``$``,
    which the text would read as a wildcard."""
    anchored = value.endswith("$")
    if anchored:
        value = value[:-1]
    if not _CANONICAL_GLOB.fullmatch(value):
        parts = [normalize(part) for part in value.split("*")]
        if any("*" in part for part in parts):
            return None
        value = "*".join(parts)
        if not anchored and value.endswith("$"):
            return None
    return value + "$" if anchored else value


def compile_lazy(lazy: Lazy) -> Wildcard:
    """A rule kept as written, split into its pieces on the first check that tries it."""
    prefix, pieces, anchored, _ = compile_pattern(lazy.pattern.decode("ascii"))
    return Wildcard(lazy.key, prefix, pieces, anchored, max(pieces, key=len, default=""))


def index_wildcards(
    wildcards: list[Wildcard], lazy: list[Lazy]
) -> Steps[tuple[dict[str, tuple[Entry, ...]], ...]]:
    """Index wildcard rules so that a check tries only those that can match.

    A rule with a literal prefix beyond ``/`` goes under that prefix; else
    under the last 3 octets of its longest piece, which any path it
    matches contains; else under that
    piece when it is one or two octets long, or, when anchored, under its
    last piece, which ends any path it matches (see :func:`_place_short`);
    else, with no piece at all, under its prefix. O(1) per rule; each
    bucket is sorted best first, and past ``SHARED_END`` rules holds one
    rule a pattern (see :func:`_best_first`), whose rules are then keyed
    again by their least shared piece (see :func:`_key_again`).
    """
    by_prefix: dict[str, list[Entry]] = {}
    by_gram: dict[str, list[Entry]] = {}
    # Rules whose longest piece is one or two octets: (rule, piece, last
    # piece of an anchored rule or "").
    short: list[tuple[Entry, str, str]] = []
    for count, wildcard in enumerate(wildcards, 1):
        if count % STEP == 0:
            yield
        needle = wildcard.needle
        if len(wildcard.prefix) > 1 or not needle:
            by_prefix.setdefault(wildcard.prefix, []).append(wildcard)
        elif len(needle) >= GRAM:
            by_gram.setdefault(needle[-GRAM:], []).append(wildcard)
        else:
            short.append((wildcard, needle, wildcard.pieces[-1] if wildcard.anchored else ""))
    for start in range(0, len(lazy), STEP):
        if start:
            yield
        for entry in lazy[start : start + STEP]:
            parts = entry.pattern.decode("ascii").removesuffix("$").split("*")
            if len(parts[0]) > 1:
                by_prefix.setdefault(parts[0], []).append(entry)
                continue
            needle = max(parts[1:], key=len)  # a piece, not the prefix "/"
            if len(needle) >= GRAM:
                by_gram.setdefault(needle[-GRAM:], []).append(entry)
            else:  # a lazy rule ends with a piece (see ``_rule_tables.RuleTables.add``)
                short.append((entry, needle, parts[-1] if entry.pattern[-1] == 36 else ""))
    by_short, by_end = yield from _place_short(short)
    yield from _key_again(by_gram, by_short)
    return tuple(
        {key: _best_first(bucket) for key, bucket in index.items()}
        for index in (by_prefix, by_gram, by_short, by_end)
    )


def _best_first(bucket: list[Entry]) -> tuple[Entry, ...]:
    """A bucket sorted best first, a tuple (no room kept for more).

    Past ``SHARED_END`` rules, a rule whose pattern a better one has (one
    line written over and over) is dropped: RFC 9309 2.2.2, of the same
    pattern the allow rule, then the earliest line, always wins, so the
    others never decide, and a check would try every copy.
    """
    ordered = sorted(bucket, reverse=True)
    if len(ordered) <= SHARED_END:
        return tuple(ordered)
    distinct: dict[object, Entry] = {}
    for entry in ordered:
        if isinstance(entry, Lazy):
            distinct.setdefault(entry.pattern, entry)
        else:
            distinct.setdefault((entry.prefix, entry.pieces, entry.anchored), entry)
    return tuple(distinct.values())  # in the order first seen: best first


def _text(entry: Entry) -> str:
    """A rule's literal runs joined by ``*`` (its pattern, for a lazy one)."""
    if isinstance(entry, Lazy):
        return entry.pattern.decode("ascii")
    return "*".join((entry.prefix, *entry.pieces))


def _key_again(
    by_gram: dict[str, list[Entry]],
    by_short: dict[str, list[Entry]],
) -> Steps[None]:
    """Rules of a bucket of more than ``SHARED_END`` patterns keyed again,
    each by its least shared 3 octets (under :data:`GRAM`) or run of 2
    (as a short piece), where fewer rules hold it (see ``_spread``): a path
    that holds their shared key would try them all. Not those under a
    literal prefix, which only paths that start with it look up."""
    entries: list[Entry] = []
    shares: list[int] = []
    homes: list[tuple[dict[str, list[Entry]], str]] = []
    for index in (by_gram, by_short):
        for key in [key for key, bucket in index.items() if len(bucket) > SHARED_END]:
            bucket = list(_best_first(index.pop(key)))  # one rule a pattern
            if len(bucket) <= SHARED_END:
                index[key] = bucket
                continue
            entries += bucket
            shares += [len(bucket)] * len(bucket)
            homes += [(index, key)] * len(bucket)
    if not entries:
        return
    yield
    sizes = {key: len(bucket) for index in (by_gram, by_short) for key, bucket in index.items()}
    keys = yield from least_shared(
        list(map(_text, entries)), [home for _, home in homes], shares, sizes
    )
    for count, (entry, new, (index, home)) in enumerate(zip(entries, keys, homes, strict=True)):
        if count % STEP == 0:
            yield
        if new is None:
            index.setdefault(home, []).append(entry)
        else:
            (by_gram if len(new) == GRAM else by_short).setdefault(new, []).append(entry)


def _place_short(
    short: list[tuple[Entry, str, str]],
) -> Steps[tuple[dict[str, list[Entry]], dict[str, list[Entry]]]]:
    """Rules of one- or two-octet pieces (``/*a*bc$``), by piece and by end.

    Such a rule goes under its longest piece, which a check looks up once
    for each of the path's octets (and pairs of them); an anchored one goes
    under its last piece instead, which a check looks up only at the path's
    end (one path in 36 or in 1,296 ends so, where most paths hold a given
    octet). Unless more than ``SHARED_END`` rules share that end, and the
    rule's longest piece is another of two octets, which fewer rules share:
    thousands of rules that all end ``za$`` would all be tried for every
    path that ends so, where their pieces spread them; so the first
    checks' index keys them too (``_globs``).
    """
    pieces: dict[str, int] = {}
    ends: dict[str, int] = {}
    for _, needle, end in short:
        pieces[needle] = pieces.get(needle, 0) + 1
        if end:
            ends[end] = ends.get(end, 0) + 1
    yield
    by_short: dict[str, list[Entry]] = {}
    by_end: dict[str, list[Entry]] = {}
    for count, (entry, needle, end) in enumerate(short, 1):
        if count % STEP == 0:
            yield
        if end and (
            ends[end] <= SHARED_END
            or len(needle) < 2
            or needle == end
            or pieces[needle] >= ends[end]  # the piece would not spread them
        ):
            by_end.setdefault(end, []).append(entry)
        else:
            by_short.setdefault(needle, []).append(entry)
    return by_short, by_end

"""Which form a group's rules are in, proved in C over their joined values
(RFC 9309 2.2.2 and 2.2.3, RFC 3986 2.1 and 6.2.2). Pure, no Scrapy import.

A matcher scans rules as written when every one is in canonical form (the
form a check's path takes), and indexes them in C when most are wildcards:
these proofs say which, without a Python step per rule. Rules not in that
form are written in it (:func:`canonical_rules`), each as the compiler
reads it, so they are scanned alike.
"""

from __future__ import annotations

import re

from ._encoding import path_of
from ._wildcards import canonical_text

__all__ = [
    "GLOB_CANONICAL",
    "PLAIN_CANONICAL",
    "Rule",
    "all_glob",
    "all_plain",
    "canonical_rules",
    "dollars_end",
    "few_wildcards",
    "is_url",
    "names_a_host",
    "plain_form",
    "rule_pattern",
    "wild_indexes",
]

#: One allow/disallow line as read: allow, its value as written, its line.
Rule = tuple[bool, bytes, int]

# A rule already in canonical form, stars and dollars included.
GLOB_CANONICAL = re.compile(rb"[/*][A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]*")
# A rule that is already a canonical plain prefix: no escape, star or dollar.
PLAIN_CANONICAL = re.compile(rb"/[A-Za-z0-9\-._~!&'()+,;=:@/?\[\]]*")

# The values of a group joined by LF, tested in C for the forms a matcher
# can scan as written: an octet outside the canonical set (RFC 3986
# unreserved, sub-delims, ":@/?[]"), a value that starts with neither "/"
# nor (for wildcard rules) "*", or a star before a plain prefix's end. The
# octets are tested by deleting the allowed ones (``bytes.translate``, about
# three times cheaper than a regex character class); each other pattern
# starts with a literal, which the regex engine searches for fast; one
# alternation over every octet was 7x slower.
_PLAIN_OCTETS = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!&'()+,;=:@/?[]\n*"
)
_GLOB_OCTETS = _PLAIN_OCTETS + b"$"
# Values written in canonical form keep their escapes ("%5B"): read as
# written, as a path in that form is.
_CANONICAL_OCTETS = _GLOB_OCTETS + b"%"
_BAD_START_PLAIN = re.compile(rb"\n[^/\n]")
_BAD_START_GLOB = re.compile(rb"\n[^/*\n]")
_STAR_INSIDE = re.compile(rb"\*(?!\n|\Z)")


def all_plain(joined: bytes) -> bool:
    """Whether every value in ``joined`` is empty or a canonical plain prefix
    (a final ``*`` allowed, as in ``/private/*``)."""
    return (
        joined[:1] in (b"/", b"\n", b"")
        and not joined.translate(None, _PLAIN_OCTETS)
        and _BAD_START_PLAIN.search(joined) is None
        and (b"*" not in joined or _STAR_INSIDE.search(joined) is None)
    )


def all_glob(joined: bytes) -> bool:
    """Whether every value in ``joined`` is empty or in canonical form with
    its stars and dollars (``/*.pdf$``, ``*?``)."""
    return (
        joined[:1] in (b"/", b"*", b"\n", b"")
        and not joined.translate(None, _GLOB_OCTETS)
        and _BAD_START_GLOB.search(joined) is None
    )


def canonical_rules(rules: list[Rule]) -> tuple[list[Rule], bytes] | None:
    """``rules`` with each value written as the compiler reads it (see
    :func:`rule_pattern` and :func:`~._wildcards.canonical_text`; empty
    values and URLs naming a host dropped, as it drops them), and those
    values joined by LF; ``None`` when a value has no such text."""
    kept: list[Rule] = []
    written = GLOB_CANONICAL.fullmatch
    for rule in rules:
        raw = rule[1]
        if written(raw):  # most of them: in canonical form already
            kept.append(rule)
            continue
        if not raw:
            continue  # RFC 9309 2.2.2: an empty pattern matches nothing
        allow, line = rule[0], rule[2]
        pattern = rule_pattern(raw)
        if names_a_host(raw, pattern):
            continue
        text = canonical_text(pattern)
        if text is None or not text.isascii():
            return None
        kept.append((allow, text.encode("ascii"), line))
    joined = b"\n".join([rule[1] for rule in kept])
    if (
        joined[:1] not in (b"/", b"*", b"")
        or joined.translate(None, _CANONICAL_OCTETS)
        or _BAD_START_GLOB.search(joined)
    ):
        return None
    return kept, joined


def plain_form(joined: bytes) -> bool:
    """Whether values in canonical form (see :func:`canonical_rules`) are
    all plain prefixes, each starting with ``/``, a final ``*`` allowed (as
    :func:`all_plain` proves for values as written)."""
    return (
        b"$" not in joined
        and joined[:1] != b"*"
        and b"\n*" not in joined
        and (b"*" not in joined or _STAR_INSIDE.search(joined) is None)
    )


def dollars_end(joined: bytes) -> bool:
    """Whether every ``$`` in ``joined`` ends its value (RFC 9309 2.2.3: only
    there does it anchor; elsewhere it is a literal octet)."""
    if b"$" not in joined:  # most groups: one search in C
        return True
    return joined.count(b"$") == joined.count(b"$\n") + joined.endswith(b"$")


def is_url(value: bytes) -> bool:
    """Whether a rule's value is written as an http(s) URL."""
    return value[:8].lower().startswith((b"http://", b"https://"))


def names_a_host(value: bytes, pattern: str) -> bool:
    """Whether a rule's value, read as ``pattern`` (see :func:`rule_pattern`),
    is a URL naming only a host: dropped, by the compiler and by
    :func:`canonical_rules` alike."""
    return pattern == "/" and value[0] != 47


def rule_pattern(value: bytes) -> str:
    """The pattern a rule's value stands for, before normalisation.

    A URL that names only a host (``Disallow: http://search.example.com/``)
    stands for ``"/"`` here and is dropped by the compiler: a robots.txt
    governs its own host only, and that host may be another one.
    """
    pattern = value.decode("utf-8", "surrogateescape")
    if pattern and not pattern.startswith(("/", "*")):
        if is_url(value):
            # LENIENT(rule-url): "Disallow: https://www.example.com/shop/" means
            # the path (and query) of that URL, "/shop/".
            path = path_of(pattern)
            return "/" if path.rstrip("*$") == "/" else path
        # LENIENT(rule-without-slash): "Disallow: private/" read as "/private/".
        return "/" + pattern
    return pattern


def few_wildcards(joined: bytes, stars: int, most: int) -> bool:
    """Whether at most ``most`` of the values in ``joined``, which hold
    ``stars`` stars, have a ``*`` or a ``$``."""
    if stars + joined.count(b"$") <= most:
        return True
    return len(wild_indexes(joined, most + 1)) <= most


def wild_indexes(joined: bytes, limit: int) -> tuple[int, ...]:
    """The indexes of the lines of ``joined`` that have a ``*`` or a ``$``
    (the first ``limit`` of them), found in C: ``bytes.find`` for the next of
    each, the line ends counted between two finds, the finds going on from
    the next line."""
    indexes: list[int] = []
    index = previous = 0
    star, dollar = joined.find(b"*"), joined.find(b"$")
    while star >= 0 or dollar >= 0:
        start = star if dollar < 0 or 0 <= star < dollar else dollar
        index += joined.count(b"\n", previous, start)
        indexes.append(index)
        if len(indexes) == limit:
            break
        previous = start
        end = joined.find(b"\n", start)
        if end < 0:
            break
        if star < end:
            star = joined.find(b"*", end)
        if dollar < end:
            dollar = joined.find(b"$", end)
    return tuple(indexes)

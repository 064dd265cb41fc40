"""A compiled rule as one int (RFC 9309 2.2.2: which rule wins). Pure.

A compiled file then holds no per-rule object that the garbage collector
must walk: full collections over a big crawl's heap were the longest reactor
stalls. Bits, high to low: specificity (the pattern's length in octets),
allow (bit 63), ``LINE_MAX - line`` (31 bits), and 32 low bits for the
caller's use (0 unless given). Comparing two keys compares (specificity,
allow wins a tie, earlier line first), so ``max`` picks the RFC 9309 2.2.2
winner. Below the
specificity a key fits in 64 bits (``low_bits``), for ``array("Q")``.
"""

from __future__ import annotations

__all__ = [
    "ALLOW_BIT",
    "LINE_BITS",
    "LINE_MAX",
    "MAX_BODY_SIZE",
    "OFFSET_BITS",
    "RuleKey",
    "key_allows",
    "key_line",
    "key_offset",
    "low_bits",
    "pack",
    "with_specificity",
]

RuleKey = int

_OFFSET_BITS = 32
_LINE_BITS = 31
_ALLOW_BIT = _OFFSET_BITS + _LINE_BITS
_SPECIFICITY_SHIFT = _ALLOW_BIT + 1
_OFFSET_MAX = (1 << _OFFSET_BITS) - 1
_LINE_MAX = (1 << _LINE_BITS) - 1
_LOW_MASK = (1 << _SPECIFICITY_SHIFT) - 1
#: The layout, for callers that pack or test keys inline (see :func:`pack`).
ALLOW_BIT = _ALLOW_BIT
LINE_BITS = _LINE_BITS
LINE_MAX = _LINE_MAX
OFFSET_BITS = _OFFSET_BITS

#: The largest body a key can point into (its lines then fit in 31 bits too).
MAX_BODY_SIZE = 1 << _LINE_BITS


def pack(specificity: int, allow: bool, line: int, offset: int = 0) -> RuleKey:
    # One shift of a sum: cheaper than or-ing three shifted big integers.
    return (
        ((specificity << 1 | allow) << _LINE_BITS | (_LINE_MAX - line)) << _OFFSET_BITS
    ) | offset


def low_bits(key: RuleKey) -> int:
    """The key without its specificity: 64 bits."""
    return key & _LOW_MASK


def with_specificity(specificity: int, low: int) -> RuleKey:
    return (specificity << _SPECIFICITY_SHIFT) | low


def key_allows(key: RuleKey) -> bool:
    return bool((key >> _ALLOW_BIT) & 1)


def key_line(key: RuleKey) -> int:
    return _LINE_MAX - ((key >> _OFFSET_BITS) & _LINE_MAX)


def key_offset(key: RuleKey) -> int:
    return key & _OFFSET_MAX

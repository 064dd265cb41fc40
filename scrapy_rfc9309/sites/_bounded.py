"""Dictionaries kept to a bound, the oldest entry forgotten first. Pure.

Per-site state a long crawl keeps (Crawl-delays told, turns reserved, sends
in flight, ...) must not grow with the number of sites met: each such
dictionary holds at most a bound, and a new key past it forgets the entry
put in first (dictionaries keep insertion order).
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["put_bounded"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def put_bounded(mapping: dict[_K, _V], key: _K, value: _V, limit: int) -> None:
    """``mapping[key] = value``; a key not in ``mapping`` while it holds ``limit``
    entries first forgets the oldest."""
    if key not in mapping and len(mapping) >= limit:
        mapping.pop(next(iter(mapping)))
    mapping[key] = value

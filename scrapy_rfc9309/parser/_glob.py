"""Matching one rule's ``*`` pieces and final ``$`` along a path (RFC 9309 2.2.3). Pure.

Greedy, left to right: each piece is taken at its leftmost occurrence after
the one before, which is optimal for ``*``-only patterns, so no other
alignment is ever tried; linear in the path, never backtracks.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["matches", "matches_after", "pieces_follow"]


def pieces_follow(path: str, position: int, pieces: Iterable[str], end: str | None) -> bool:
    """Whether ``pieces`` occur in ``path`` in order from ``position`` and,
    when ``end`` is not ``None`` (a final ``$``), ``path`` ends with ``end``
    after the last of them."""
    for piece in pieces:
        found = path.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return end is None or (len(path) - len(end) >= position and path.endswith(end))


def matches_after(text: str, star: int, path: str) -> bool:
    """Whether a rule in canonical form, ``text``, with its first ``*`` at
    ``star`` matches ``path``, which starts with the text before that star
    (the caller's test)."""
    if text[-1] == "$":
        pieces = text[star + 1 : -1].split("*")
        end = pieces.pop()
        # The end first: an anchored rule fails there more often than not.
        return path.endswith(end) and pieces_follow(path, star, pieces, end)
    return pieces_follow(path, star, text[star + 1 :].split("*"), None)


def matches(text: str, path: str) -> bool:
    """Whether a rule in canonical form (a plain prefix, ``*`` pieces, a final
    ``$``), ``text``, matches ``path``."""
    star = text.find("*")
    if star < 0:  # a prefix, or the whole path when it ends with "$"
        return path == text[:-1] if text[-1:] == "$" else path.startswith(text)
    return path.startswith(text[:star]) and matches_after(text, star, path)

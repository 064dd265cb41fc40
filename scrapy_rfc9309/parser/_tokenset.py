"""The product tokens that have groups in a parsed file, kept small. Pure.

Once a parsed file drops its groups, what it needs of its token index is
whether a token has groups of its own (RFC 9309 2.2.1: else the ``*``
groups govern it). Most files name only ``*``; a few tokens are a tuple;
more are kept as one string, so a file of many groups keeps no string per
token; very many (a hostile file) are a dict, so that ``in`` stays one
look-up.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from ._groups import WILDCARD_AGENT

__all__ = ["TokenSet", "token_set"]

_SEPARATOR = "\n"  # in no token: lines are split on it


class TokenSet(Collection[str]):
    """Tokens (at least one, none empty) joined in one string; ``in`` is
    one C-level search of it."""

    __slots__ = ("_joined",)

    def __init__(self, tokens: Collection[str]) -> None:
        self._joined = _SEPARATOR + _SEPARATOR.join(tokens) + _SEPARATOR

    def __contains__(self, token: object) -> bool:
        return (
            isinstance(token, str)
            and token != ""
            and _SEPARATOR not in token
            and _SEPARATOR + token + _SEPARATOR in self._joined
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined[1:-1].split(_SEPARATOR))

    def __len__(self) -> int:
        return self._joined.count(_SEPARATOR) - 1

    def __repr__(self) -> str:
        return f"TokenSet({list(self)!r})"


_ONLY_WILDCARD: tuple[str, ...] = (WILDCARD_AGENT,)
#: Up to this many tokens, a tuple (searched one by one) is kept.
_FEW = 8
#: Tokens longer than this in all are kept in a dict: an ``in`` that
#: searches one string stays under a microsecond, whatever the file (a
#: hostile one names thousands of agents).
_JOINED_LIMIT = 4096


def token_set(tokens: Collection[str]) -> Collection[str]:
    """``tokens`` in a small form that answers ``in``: the one shared tuple
    for a file that names only ``*`` (most files), a tuple for a few, a
    :class:`TokenSet` for more, a dict (no values) for very many."""
    if len(tokens) > _FEW:
        if sum(map(len, tokens)) > _JOINED_LIMIT:
            return dict.fromkeys(tokens)
        return TokenSet(tokens)
    if len(tokens) == 1 and WILDCARD_AGENT in tokens:
        return _ONLY_WILDCARD
    return tuple(tokens)  # built four times faster than a TokenSet

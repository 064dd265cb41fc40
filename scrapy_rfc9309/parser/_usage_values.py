"""A usage signal's value read: ``Content-Usage`` and ``Content-Signal``. Pure.

The same reading serves a robots.txt line (``_usage_index``), a response
header (``_response_usage``) and the linter: ``Content-Usage`` is an RFC 9651
Dictionary parsed by ``http_sf`` (AIPREF vocabulary); ``Content-Signal``
(Cloudflare's Content Signals Policy) keeps its own ``yes`` / ``no`` reading
and its ``use`` level. Names map to categories by ``_usage.VOCABULARY``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import http_sf

from ._usage import USE_KEY, USE_LEVELS, VALUES, VOCABULARY

__all__ = [
    "MAX_MEMBERS",
    "ContentUsage",
    "content_signal_use",
    "parse_content_usage",
    "read_content_usage",
]

#: Members of a Content-Signal line read; the rest are ignored, and a robots.txt
#: line with more gets a warning. (Content-Usage is a Dictionary read whole.)
MAX_MEMBERS = _MAX_MEMBERS = 64
_MEMBER = re.compile(r"\s*([a-z*][a-z0-9_.*-]*)\s*(?:=\s*([^,;\s]*))?\s*(?:;[^,]*)?\Z")


class ContentUsage(NamedTuple):
    """A ``Content-Usage`` value read as an RFC 9651 Dictionary (AIPREF vocab)."""

    #: ``(category, allowed)`` of each known category with the Token ``y`` or ``n``
    preferences: tuple[tuple[str, bool], ...]
    #: why the value is not a Dictionary (``""``: it is); then nothing is known
    error: str = ""
    #: ``(key, why)`` of each member that states nothing: an unknown label, or a
    #: value other than the Token ``y`` / ``n`` (for the linter)
    ignored: tuple[tuple[str, str], ...] = ()


def read_content_usage(value: bytes | str) -> ContentUsage:
    """A ``Content-Usage`` value (robots.txt line or header), as the AIPREF
    vocabulary reads it: an RFC 9651 Dictionary parsed by ``http_sf``.

    The last of duplicated keys applies (RFC 9651 4.2.2); a member whose value
    is not the Token ``y`` or ``n`` (a String ``"n"``, a bare key, which is
    boolean true) leaves that preference unknown; parameters are ignored;
    unknown labels are ignored; a value that does not parse (an uppercase
    key, a trailing comma) leaves every preference unknown. Never raises.
    """
    data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value
    try:
        parsed = http_sf.parse(data, tltype="dictionary")
    except ValueError as exc:  # http_sf.StructuredFieldError, a ValueError
        return ContentUsage((), f"not an RFC 9651 Dictionary: {str(exc)[:120]}")
    assert isinstance(parsed, dict)
    found: list[tuple[str, bool]] = []
    ignored: list[tuple[str, str]] = []
    for key, member in parsed.items():
        category = VOCABULARY.get(("content-usage", key))
        if category is None:
            ignored.append((key, "unknown label"))
            continue
        item = member[0] if isinstance(member, tuple) else member
        allowed = (
            VALUES["content-usage"].get(str(item)) if isinstance(item, http_sf.Token) else None
        )
        if allowed is None:
            ignored.append((key, f"value {_sf_kind(item)} is not the Token y or n"))
            continue
        found.append((category, allowed))
    return ContentUsage(tuple(found), "", tuple(ignored))


def _sf_kind(item: object) -> str:
    """How an RFC 9651 bare item reads, for a finding."""
    if item is True:
        return "boolean true (a key without a value)"
    if isinstance(item, bool):
        return "boolean false"
    if isinstance(item, http_sf.Token):
        return f"Token {str(item)[:40]!r}"
    if isinstance(item, str):
        return f"String {item[:40]!r}"
    if isinstance(item, list):
        return "an Inner List"
    return f"{type(item).__name__} {str(item)[:40]!r}"


def parse_content_usage(text: str, signal: str = "content-usage") -> list[tuple[str, bool]]:
    """``(category, allowed)`` of a preference list: ``train-ai=n, search=y``.

    ``Content-Usage``: see :func:`read_content_usage`. ``Content-Signal``
    (Cloudflare) keeps its own reading: comma-separated ``name=yes`` / ``no``,
    unknown names, parameters and other values ignored (a name stated twice:
    the most restrictive, as before). Never raises.
    """
    if signal == "content-usage":
        return list(read_content_usage(text).preferences)
    values = VALUES[signal]
    found: list[tuple[str, bool]] = []
    for name, value in _signal_members(text):
        category = VOCABULARY.get((signal, name))
        allowed = values.get(value)
        if category is not None and allowed is not None:
            found.append((category, allowed))
    return found


def _signal_members(text: str) -> list[tuple[str, str]]:
    """``(name, value)`` of each ``name=value`` member of a Content-Signal value
    (lower case, quotes stripped; at most :data:`MAX_MEMBERS`)."""
    found: list[tuple[str, str]] = []
    for member in text.split(",", _MAX_MEMBERS)[:_MAX_MEMBERS]:
        match = _MEMBER.match(member.lower())
        if match is not None and match.group(2) is not None:
            found.append((match.group(1), match.group(2).strip('"')))
    return found


def content_signal_use(text: str) -> str | None:
    """The ``use`` level a Content-Signal value states (``use=reference``), else
    ``None``: a value other than :data:`USE_LEVELS` states nothing; of several,
    the narrowest (as of ``yes`` / ``no``, the most restrictive). Never raises."""
    levels = [value for name, value in _signal_members(text) if name == USE_KEY]
    known = [level for level in levels if level in USE_LEVELS]
    return min(known, key=USE_LEVELS.index) if known else None

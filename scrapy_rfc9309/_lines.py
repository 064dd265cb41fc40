"""Bytes to numbered directive lines: the lexer of RFC 9309 section 2.2.

No Scrapy import and no I/O. Each line of the file becomes at most one
:class:`Line` carrying its 1-based line number, so every later verdict can
name the line that decided it.

Departures from the RFC grammar that real files need are marked in the code
one way only: a comment ``LENIENT(<id>)`` at the place, and a warning
``(line, message)`` for the user. The test suite checks that every id is
exercised (``tests/test_leniency.py``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["DEFAULT_MAX_SIZE", "KNOWN_DIRECTIVES", "Line", "Warnings", "split_lines"]

#: RFC 9309 section 2.5: the parsing limit MUST be at least 500 KiB.
DEFAULT_MAX_SIZE = 512_000

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t"
_BLANKS = re.compile(r"[ \t]+")  # RFC 9309 2.2 WS: space and tab only

#: Canonical directive names (RFC 9309 2.2 plus the common extensions).
KNOWN_DIRECTIVES = frozenset({"user-agent", "allow", "disallow", "sitemap", "crawl-delay"})

#: LENIENT(misspelling): common misspellings (RFC 9309 2.2.4 allows this),
#: the set Google's reference parser accepts and a few seen in the corpus.
_MISSPELLINGS = {
    "useragent": "user-agent",
    "user agent": "user-agent",
    "user_agent": "user-agent",
    "user-agents": "user-agent",
    "dissallow": "disallow",
    "dissalow": "disallow",
    "disalow": "disallow",
    "diasllow": "disallow",
    "disallaw": "disallow",
    "dis-allow": "disallow",
    "site-map": "sitemap",
    "sitemaps": "sitemap",
    "crawldelay": "crawl-delay",
    "crawl_delay": "crawl-delay",
}


class Line(NamedTuple):
    """One directive line: ``number`` is 1-based, ``key`` canonical lower case.

    ``value`` may hold lone surrogates for invalid UTF-8 octets; ``text`` is
    the line as written (comment and outer blanks removed), always printable.
    """

    number: int
    key: str
    value: str
    text: str


class Warnings:
    """Collects ``(line, message)`` lint findings, one per lenient reading."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[int, str]] = []

    def add(self, line: int, message: str) -> None:
        self.items.append((line, message))


def _canonical_key(raw_key: str) -> str:
    key = " ".join(_BLANKS.split(raw_key.lower().strip(" \t")))
    return _MISSPELLINGS.get(key, key)


def _decode(raw: bytes, number: int, warnings: Warnings) -> tuple[str, str]:
    """Decode one line as UTF-8 (RFC 9309 2.3): ``(text, printable text)``.

    Invalid bytes become lone surrogates (``surrogateescape``) so the matcher
    can percent-encode the original octets instead of dropping them; the
    printable text shows them as ``\\xNN``.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        # LENIENT(invalid-utf8): the file MUST be UTF-8; keep the octets.
        warnings.add(number, "invalid UTF-8: octets kept as percent-encoded bytes")
        return raw.decode("utf-8", "surrogateescape"), raw.decode("utf-8", "backslashreplace")
    return text, text


def _directive(raw: bytes, number: int, warnings: Warnings) -> Line | None:
    """Read one physical line (already without its line end) as a directive."""
    hash_at = raw.find(b"#")
    if hash_at >= 0:
        raw = raw[:hash_at]
    if b"\x00" in raw:
        # LENIENT(nul): NUL is not a UTF8-char-noctl; UTF-16 files are mostly NULs.
        warnings.add(number, "NUL bytes ignored")
        raw = raw.replace(b"\x00", b"")
    raw = raw.strip(_WHITESPACE)
    if not raw:
        return None
    text, printable = _decode(raw, number, warnings)
    colon = text.find(":")
    if colon >= 0:
        raw_key, value = text[:colon], text[colon + 1 :]
    else:
        parts = _BLANKS.split(text, maxsplit=1)
        key = _canonical_key(parts[0])
        if len(parts) != 2 or key not in KNOWN_DIRECTIVES:
            warnings.add(number, f"not a directive, ignored: {printable[:80]!r}")
            return None
        # LENIENT(missing-colon): "Disallow /tmp" read as "Disallow: /tmp".
        warnings.add(number, f"missing ':' after {parts[0]!r}")
        raw_key, value = parts
    key = _canonical_key(raw_key)
    if key not in KNOWN_DIRECTIVES:
        warnings.add(number, f"unknown directive {raw_key.strip()[:40]!r} ignored")
        return None
    if key != " ".join(_BLANKS.split(raw_key.lower().strip(" \t"))):
        warnings.add(number, f"misspelt directive {raw_key.strip()!r} read as {key!r}")
    return Line(number, key, value.strip(" \t"), printable)


def split_lines(body: bytes, max_size: int, warnings: Warnings) -> tuple[list[Line], bool]:
    """Split ``body`` into directive lines; return them and whether it was cut.

    Only the first ``max_size`` octets are read (RFC 9309 2.5). Lines end at
    CR, LF or CRLF and at nothing else (RFC 9309 2.2 ``NL``).
    """
    truncated = len(body) > max_size
    if truncated:
        body = body[:max_size]
    if body.startswith(_BOM):
        # LENIENT(bom): a UTF-8 byte order mark before the first line.
        warnings.add(1, "UTF-8 byte order mark ignored")
        body = body[len(_BOM) :]
    physical = body.splitlines()  # bytes.splitlines: only CR, LF and CRLF end a line
    if truncated and physical and not body.endswith((b"\n", b"\r")):
        # The last line was cut by the size limit: a cut rule could widen or
        # narrow what it covers, so it is dropped rather than guessed at.
        warnings.add(len(physical), f"line cut by the {max_size}-byte parse limit, ignored")
        physical.pop()
    lines = []
    for number, raw in enumerate(physical, 1):
        line = _directive(raw, number, warnings)
        if line is not None:
            lines.append(line)
    return lines, truncated

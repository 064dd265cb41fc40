"""Bytes to numbered directive lines: the lexer of RFC 9309 section 2.2.

No Scrapy import and no I/O. :func:`prepare` turns a body into canonical
bytes (size limit, BOM, line ends, NUL); :func:`scan` then splits a slice of
it into one ``(key, colon, value)`` triple per line, blank and comment lines
included, in one regex pass in C, so a line's number is its position and the
common line ("Disallow: /x") costs one dict look-up in Python
(:func:`read_line`). :func:`line_text` shows a line again for a verdict.

Departures from the RFC grammar that real files need are marked in the code
one way only: a comment ``LENIENT(<id>)`` at the place, and a warning
``(line, message)`` for the user. ``tests/test_leniency.py`` checks that every
id is exercised.
"""

from __future__ import annotations

import re
from array import array

__all__ = [
    "BOM_IGNORED",
    "DEFAULT_MAX_SIZE",
    "EXACT_KEYS",
    "Line",
    "Warnings",
    "key_reading",
    "line_start",
    "line_starts",
    "line_text",
    "prepare",
    "printable",
    "read_line",
    "scan",
    "split_line",
]

#: RFC 9309 section 2.5: the parsing limit MUST be at least 500 KiB.
DEFAULT_MAX_SIZE = 512_000

_BOM = b"\xef\xbb\xbf"
#: The warning for a UTF-8 byte order mark: a reading, not a mistake of the file
#: (a linter leaves it out).
BOM_IGNORED = "UTF-8 byte order mark ignored"
_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
_BLANKS = re.compile(rb"[ \t]+")  # RFC 9309 2.2 WS: space and tab only
# Every line, in one match each: optional blanks, then the key up to a colon
# or a comment (captured), the colon (captured) and the value up to a comment
# (captured); blank and comment lines match with empty groups. Each step has
# one way to match, so the scan is linear.
_LINE = re.compile(rb"^[ \t]*(?:([^ \t\n#][^:#\n]*)(?:(:)([^#\n]*))?)?[^\n]*", re.MULTILINE)

_INVALID_OCTET = re.compile("[\udc80-\udcff]")

_CANONICAL = {
    b"user-agent": "user-agent",
    b"allow": "allow",
    b"disallow": "disallow",
    b"sitemap": "sitemap",
    b"crawl-delay": "crawl-delay",
    # Usage preferences (IETF AIPREF attach draft; Cloudflare Content Signals):
    # other records, RFC 9309 2.2.4, read by ``_usage``; they never end a group.
    b"content-usage": "content-usage",
    b"content-signal": "content-signal",
}
#: The spellings real files use most, read with one dict look-up.
EXACT_KEYS = {
    spelling: key
    for key in _CANONICAL.values()
    for spelling in {
        key.encode(),
        key.title().encode(),
        key.capitalize().encode(),
        key.upper().encode(),
    }
}

#: LENIENT(misspelling): common misspellings (RFC 9309 2.2.4 allows this):
#: the set Google's reference parser accepts and a few seen in real files.
_MISSPELT = {
    b"useragent": "user-agent",
    b"user agent": "user-agent",
    b"user_agent": "user-agent",
    b"user-agents": "user-agent",
    b"dissallow": "disallow",
    b"dissalow": "disallow",
    b"disalow": "disallow",
    b"diasllow": "disallow",
    b"disallaw": "disallow",
    b"dis-allow": "disallow",
    b"site-map": "sitemap",
    b"sitemaps": "sitemap",
    b"crawldelay": "crawl-delay",
    b"crawl_delay": "crawl-delay",
}


#: Keys google/robotstxt (robots.cc, 2026-02-19) lists as known but unsupported,
#: chosen from what HTTP Archive finds in real files. Those this parser reads
#: (``content-signal``, ``content-usage``, ``crawl-delay``) stay read; the others
#: are ignored as any other record (RFC 9309 2.2.4), with one finding that names
#: them so, not "unknown directive".
KNOWN_UNSUPPORTED = frozenset(
    {
        b"clean-param",
        b"content-signal",
        b"content-usage",
        b"crawl-delay",
        b"domain",
        b"host",
        b"noarchive",
        b"nofollow",
        b"noindex",
        b"request-rate",
        b"revisit-after",
        b"visit-time",
    }
)


#: One line as scanned: raw key, ``b":"`` or ``b""``, raw value.
Line = tuple[bytes, bytes, bytes]


class Warnings:
    """Collects ``(line, message)`` lint findings, one per lenient reading.

    At most ``limit`` are kept, so junk input cannot grow them without bound.
    """

    __slots__ = ("items", "limit")

    def __init__(self, limit: int = 1000) -> None:
        self.items: list[tuple[int, str]] = []
        self.limit = limit

    @property
    def full(self) -> bool:
        return len(self.items) > self.limit

    def add(self, line: int, message: str) -> None:
        if len(self.items) < self.limit:
            self.items.append((line, message))
        elif len(self.items) == self.limit:
            self.items.append((line, "more warnings not shown"))


def printable(raw: bytes) -> str:
    """Bytes as text for messages: invalid UTF-8 shown as ``\\xNN``."""
    return raw.decode("utf-8", "backslashreplace")


def _line_of(body: bytes, offset: int) -> int:
    return body.count(b"\n", 0, offset) + 1


def prepare(body: bytes, max_size: int, warnings: Warnings) -> tuple[bytes, bool]:
    """Canonical bytes to scan, and whether the body was cut at ``max_size``.

    Only the first ``max_size`` octets are read (RFC 9309 2.5); lines end at
    CR, LF or CRLF and at nothing else (RFC 9309 2.2 ``NL``), all turned to LF.
    """
    truncated = len(body) > max_size
    if truncated:
        body = body[:max_size]
    if body[:2] in _UTF16_BOMS:
        body = _from_utf16(body, warnings)
    if truncated:
        last_end = max(body.rfind(b"\n"), body.rfind(b"\r"))
        if last_end < len(body) - 1:
            # A cut rule could widen or narrow what it covers: drop, don't guess.
            body = body[: last_end + 1]
            line = _line_of(body.replace(b"\r\n", b"\n").replace(b"\r", b"\n"), len(body))
            warnings.add(line, f"line cut by the {max_size}-byte parse limit, ignored")
    if body.startswith(_BOM):
        # LENIENT(bom): a UTF-8 byte order mark before the first line.
        warnings.add(1, BOM_IGNORED)
        body = body[len(_BOM) :]
    if b"\r" in body:
        body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\x00" in body:
        # LENIENT(nul): NUL is not a UTF8-char-noctl; UTF-16 files are mostly NULs.
        _warn_nul_lines(body, warnings)
        body = body.replace(b"\x00", b"")
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            _warn_invalid_utf8(body, warnings)
    return body, truncated


#: Lines that held NUL bytes named one by one; past them, one warning says
#: the rest (a UTF-16 file without a byte order mark has one on every line,
#: which would fill the warnings and hide every other finding).
_NUL_LINES_NAMED = 20


def _warn_nul_lines(body: bytes, warnings: Warnings) -> None:
    """One warning at each of the first :data:`_NUL_LINES_NAMED` lines that
    held NUL bytes (read as if they were not there), then one for the rest:
    a step per line, not per NUL."""
    number, counted_to, named = 1, 0, 0
    at = body.find(b"\x00")
    while at >= 0 and not warnings.full:
        number += body.count(b"\n", counted_to, at)
        counted_to = at
        if named == _NUL_LINES_NAMED:
            warnings.add(number, "NUL bytes ignored on this line and later ones")
            return
        warnings.add(number, "NUL bytes ignored")
        named += 1
        end = body.find(b"\n", at)
        if end < 0:
            break
        at = body.find(b"\x00", end)


def _from_utf16(body: bytes, warnings: Warnings) -> bytes:
    """A UTF-16 body with its byte order mark, as UTF-8 without it.

    RFC 9309 2.3: the file MUST be UTF-8. The size limit was applied to the
    octets read; an odd last octet becomes U+FFFD on a line that is then cut.
    """
    codec = _UTF16_BOMS[body[:2]]
    # LENIENT(utf16-bom): a UTF-16 body (LE or BE) with a byte order mark is
    # decoded; read as UTF-8, the mark hides the first line and NULs split the rest.
    warnings.add(1, f"{codec.upper()} body with a byte order mark decoded as UTF-16")
    return body[2:].decode(codec, "replace").encode("utf-8")


def _warn_invalid_utf8(body: bytes, warnings: Warnings) -> None:
    # LENIENT(invalid-utf8): the file MUST be UTF-8 (RFC 9309 2.3); invalid
    # octets are kept and percent-encoded, never dropped.
    text = body.decode("utf-8", "surrogateescape")
    number, counted_to, last_warned = 1, 0, 0
    for match in _INVALID_OCTET.finditer(text):
        if warnings.full:
            break
        number += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        if number != last_warned:
            warnings.add(number, "invalid UTF-8: octets kept as percent-encoded bytes")
            last_warned = number


#: What each key as written before a colon reads as (see :func:`key_reading`),
#: up to :data:`_READINGS_KEPT` keys of up to 64 octets (emptied when full):
#: real files repeat the same few unknown or misspelt keys ("Host",
#: "Noindex", "Clean-param").
_READINGS: dict[bytes, tuple[str | None, str | None]] = {}
_READINGS_KEPT = 4096
_READING_KEPT_LENGTH = 64


def key_reading(raw_key: bytes) -> tuple[str | None, str | None]:
    """The directive a key as written before a colon names (``None``: none,
    the line is ignored), and the warning it is worth (``None``: none), for
    a key not in :data:`EXACT_KEYS`. RFC 9309 2.2.4: other records are
    ignored; LENIENT(misspelling) reads common misspellings."""
    reading = _READINGS.get(raw_key)
    if reading is None:
        reading = _reading(raw_key)
        if len(raw_key) <= _READING_KEPT_LENGTH:
            if len(_READINGS) >= _READINGS_KEPT:
                _READINGS.clear()  # a file of junk keys is kept no longer than the next
            _READINGS[raw_key] = reading
    return reading


def _reading(raw_key: bytes) -> tuple[str | None, str | None]:
    lowered = raw_key.rstrip(b" \t").lower()
    key = _CANONICAL.get(lowered)
    if key is not None:
        return key, None
    spaced = b" ".join(_BLANKS.split(lowered))
    key = _CANONICAL.get(spaced) or _MISSPELT.get(spaced)
    if key is None:
        if spaced in KNOWN_UNSUPPORTED:
            return None, (
                f"known but unsupported directive {printable(raw_key[:40])!r} ignored "
                "(as in Google's reference parser)"
            )
        return None, f"unknown directive {printable(raw_key[:40])!r} ignored"
    return key, f"misspelt directive {printable(raw_key)!r} read as {key!r}"


def _key(raw_key: bytes, number: int, warnings: Warnings | None) -> str | None:
    key, message = key_reading(raw_key)
    if warnings is not None and message is not None:
        warnings.add(number, message)
    return key


def _read(content: bytes, number: int, warnings: Warnings | None) -> tuple[str, bytes] | None:
    """``(key, value)`` of one line's content (comment removed), or ``None``."""
    colon = content.find(b":")
    if colon >= 0:
        key = _key(content[:colon], number, warnings)
        return None if key is None else (key, content[colon + 1 :].strip(b" \t"))
    parts = _BLANKS.split(content.rstrip(b" \t"), maxsplit=1)
    key = _key(parts[0], number, None) if len(parts) == 2 else None
    if warnings is not None:
        if key is None:
            warnings.add(number, f"not a directive, ignored: {printable(content[:80])!r}")
        else:
            # LENIENT(missing-colon): "Disallow /tmp" read as "Disallow: /tmp".
            warnings.add(number, f"missing ':' after {printable(parts[0])!r}")
    return None if key is None else (key, parts[1])


def scan(body: bytes, start: int = 0, end: int | None = None) -> list[Line]:
    """One :data:`Line` per line of ``body[start:end]``, which must start a
    line and end before a LF (or at the end of the body)."""
    return _LINE.findall(body, start, len(body) if end is None else end)


def split_line(text: bytes) -> Line:
    """One line (no LF in it) as :func:`scan` reads it."""
    match = _LINE.match(text)
    assert match is not None  # every string matches
    key, colon, value = match.groups(b"")
    return key, colon, value


def read_line(line: Line, number: int, warnings: Warnings | None) -> tuple[str, bytes] | None:
    """``(canonical key, value)`` of a scanned line; ``None`` for a line that
    is blank, a comment or not a directive (warned about, with ``number``)."""
    raw_key, colon, value = line
    if colon:
        key = EXACT_KEYS.get(raw_key)
        if key is not None:  # the common case: "Disallow: /x"
            return key, value.strip(b" \t")
        return _read(raw_key + colon + value, number, warnings)
    if not raw_key:
        return None
    return _read(raw_key.rstrip(b" \t"), number, warnings)


def line_starts(body: bytes) -> array[int]:
    """The offset of each line's first octet (line ``n`` at index ``n - 1``)."""
    starts = array("I", [0])
    find = body.find
    position = find(b"\n")
    while position >= 0:
        starts.append(position + 1)
        position = find(b"\n", position + 1)
    return starts


def line_start(body: bytes, line: int) -> int:
    """The offset of line ``line``'s first octet (1-based); one ``find`` per
    line before it, in C, for a single look-up (see :func:`line_starts`)."""
    position = 0
    find = body.find
    for _ in range(line - 1):
        position = find(b"\n", position) + 1
    return position


def line_text(body: bytes, start: int) -> str:
    """The line starting at ``start`` as written, comment and outer blanks removed."""
    end = len(body)
    for stop in (b"\n", b"#"):
        found = body.find(stop, start, end)
        if found >= 0:
            end = found
    return printable(body[start:end].strip(b" \t"))

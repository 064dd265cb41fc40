"""The robots ``<meta>`` tags of an HTML page's head, read in one bounded pass. Pure.

HTTP: The Definitive Guide ch. 9: ``<meta name="robots" content="noindex,
nofollow">`` in a page's head, also addressed to one robot by name
(``<meta name="examplebot">``). :func:`read_head` scans at most
:data:`~._directives.MAX_HEAD_BYTES` of the body (a UTF-16 or UTF-32 body is
decoded first, :func:`ascii_compatible_head`), in one linear pass over a
lower-cased copy; comments, scripts, styles, templates and text elements are
skipped; a tag is read over at most :data:`~._directives.MAX_TAG_BYTES` and
:data:`~._directives.MAX_TAG_ATTRIBUTES` attributes, and at most
:data:`~._directives.MAX_META_TAGS` places where ``robots`` or a token occur
are looked at. What each tag says goes to a :class:`~._directives.Collector`.
"""

from __future__ import annotations

import html
import re
import zlib

from ._directives import (
    LIMIT_HEAD,
    LIMIT_META_TAGS,
    LIMIT_TAG_ATTRIBUTES,
    LIMIT_TAG_BYTES,
    MAX_HEAD_BYTES,
    MAX_META_TAGS,
    MAX_TAG_ATTRIBUTES,
    MAX_TAG_BYTES,
    Collector,
)

__all__ = ["ascii_compatible_head", "head_of_body", "is_html", "read_head"]

# Searched in a lower-cased copy, case-sensitively (much faster than IGNORECASE),
# each by its own pattern: a literal prefix lets the engine skip to it quickly.
_FIRST_CHUNK = 8 * 1024
_EVENT_MARGIN = 16  # longer than any event's text
_NONE_LEFT = -2
_TAG_NAME_END = b" \t\r\n\f/>"
_END = rb"(?=[\s/>])"  # a tag at the very end of the window ends nothing
_HEAD_END = re.compile(rb"</head" + _END)
_BODY = re.compile(rb"<body" + _END)
_COMMENT = re.compile(rb"<!--")
_SCRIPT = re.compile(rb"<script" + _END)
_STYLE = re.compile(rb"<style" + _END)
_TEMPLATE = re.compile(rb"<template" + _END)
#: Text elements whose content is text, not markup (a "<body" or "<meta" in a
#: title is text): skipped to their end tag.
_TEXT_ELEMENTS = (b"title", b"textarea", b"xmp", b"noembed", b"noframes", b"iframe")
_TEXT = re.compile(rb"<(?:" + b"|".join(_TEXT_ELEMENTS) + rb")" + _END)
_WANTED_ATTRIBUTES = frozenset({b"name", b"content"})
#: A numeric character reference, or a named one that stands for a character
#: a product token may hold (``_``, ``.``): looked for in the lower-cased head.
_REFERENCE_NEEDLES = (b"&#", b"&lowbar;", b"&underbar;", b"&period;")
_HEAD_EVENT_PATTERNS = (_HEAD_END, _BODY, _COMMENT, _SCRIPT, _STYLE, _TEMPLATE, _TEXT)
#: Any of them (the first chunk only: see :func:`_next_event`).
_ANY_EVENT = re.compile(
    rb"<(?:!--|(?:/head|body)"
    + _END
    + rb"|(?:script|style|template|"
    + b"|".join(_TEXT_ELEMENTS)
    + rb")"
    + _END
    + rb")"
)
#: What ends each skipped part, by the text of its event (the head's end and
#: ``<body`` end the reading).
_CLOSING = {
    b"<!--": re.compile(rb"-->"),
    b"<script": re.compile(rb"</script"),
    b"<style": re.compile(rb"</style"),
    b"<template": re.compile(rb"</template"),
    **{b"<" + name: re.compile(rb"</" + name) for name in _TEXT_ELEMENTS},
}
#: One attribute of a tag, or its end (group 1): the name (2) and a double-
#: quoted (3), single-quoted (4) or unquoted (5) value. Never matches empty.
_ATTRIBUTE = re.compile(
    rb"""[\s/]*(?:(>)|([^\s/>][^\s/>=]*)"""
    rb"""(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'](?:[^\s/>]|/(?!>))*)))?)""",
)


#: Byte order marks of encodings that are not ASCII-compatible (UTF-32 first: its
#: little-endian mark starts with UTF-16's).
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
#: Every byte order mark, UTF-8's too: most bodies start with none, told in one test.
_ANY_BOM = (b"\xef\xbb\xbf", *(bom for bom, _ in _BOMS))
#: Declared charsets that are not ASCII-compatible, and the codec read without a BOM
#: (the WHATWG Encoding Standard reads the "utf-16" label as little-endian).
_WIDE_CHARSETS = {
    "utf-16": "utf-16-le",
    "utf-16le": "utf-16-le",
    "utf-16be": "utf-16-be",
    "utf-32": "utf-32-le",
    "utf-32le": "utf-32-le",
    "utf-32be": "utf-32-be",
}
_CHARSET = re.compile(r"charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)


def ascii_compatible_head(body: bytes, content_type: str | None) -> bytes:
    """At most :data:`MAX_HEAD_BYTES` of ``body``, as UTF-8 when it is UTF-16 or
    UTF-32 (a byte order mark, or the charset of ``content_type``): the head's
    tags are then found as in any other page. Other bodies are returned as they
    are (ASCII-compatible encodings need no decoding to find the tags)."""
    head = body[:MAX_HEAD_BYTES]
    if head.startswith(_ANY_BOM):
        if head.startswith(b"\xef\xbb\xbf"):
            return head  # a UTF-8 byte order mark wins over the declared charset
        codec = next((name for bom, name in _BOMS if head.startswith(bom)), None)
    else:
        codec = None
    if codec is None and content_type and "=" in content_type:  # "charset=" needs one
        declared = _CHARSET.search(content_type)
        if declared is not None:
            codec = _WIDE_CHARSETS.get(declared.group(1).lower())
    if codec is None:
        return head
    return head.decode(codec, "replace").encode("utf-8", "replace")[:MAX_HEAD_BYTES]


def is_html(content_type: str | None, body: bytes) -> bool:
    if content_type:
        kind = content_type.lower()
        return "html" in kind
    start = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    return start[:1] == b"<"


def head_of_body(body: bytes, content_encoding: str | None = None) -> bytes:
    """At most :data:`MAX_HEAD_BYTES` of ``body``, gzip / deflate decoded.

    For callers that see a body before Scrapy decompresses it (the HTTP
    cache). Other encodings (br, zstd) and broken data give ``b""``.
    """
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return body[:MAX_HEAD_BYTES]
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return b""
    for wbits in (47, -15) if encoding == "deflate" else (31,):
        try:
            return zlib.decompressobj(wbits).decompress(body, MAX_HEAD_BYTES)
        except zlib.error:
            continue
    return b""


class _Lower:
    """A lower-cased copy of the head, made in growing chunks (8 KiB, then four
    times more each time a search runs off its end): most heads end early."""

    __slots__ = ("full", "text", "window")

    def __init__(self, window: bytes) -> None:
        self.window = window
        self.text = window[:_FIRST_CHUNK].lower()
        self.full = len(self.text) == len(window)

    def grow(self) -> bool:
        if self.full:
            return False
        self.text = self.window[: len(self.text) * 4].lower()
        self.full = len(self.text) == len(self.window)
        return True

    def search(self, pattern: re.Pattern[bytes], pos: int) -> re.Match[bytes] | None:
        """The first match at or after ``pos``, growing the copy as needed: a
        match that touches the end of a partial copy is looked for again."""
        while True:
            match = pattern.search(self.text, pos)
            if match is not None and (self.full or match.end() < len(self.text)):
                return match
            if not self.grow():
                return None


def _meta_attributes(
    low: bytes, start: int, original: bytes | None = None
) -> tuple[dict[bytes, bytes], int, str | None]:
    """The ``name`` and ``content`` attributes of the tag whose name ends at
    ``start``; where the tag ends; the limit met, if any. ``original``: the
    window ``low`` is the lower-cased copy of (same offsets); values are then
    taken from it, as written.

    A tag is read over at most :data:`MAX_TAG_BYTES` and
    :data:`MAX_TAG_ATTRIBUTES` attributes (one regular-expression match
    each); a tag not closed by then, or by the end of ``low``, ends at ``-1``.
    """
    limit = min(len(low), start + MAX_TAG_BYTES)
    attributes: dict[bytes, bytes] = {}
    pos = start
    for count in range(MAX_TAG_ATTRIBUTES + 1):
        match = _ATTRIBUTE.match(low, pos, limit)
        if match is None:
            break
        close, name, double, single, bare = match.groups()
        if close is not None:  # ">": the end of the tag
            return attributes, match.end(), None
        if count == MAX_TAG_ATTRIBUTES:
            return attributes, -1, LIMIT_TAG_ATTRIBUTES
        if name in _WANTED_ATTRIBUTES and name not in attributes:  # the first wins, as in HTML
            attributes[name] = double if double is not None else single or bare or b""
            if original is not None:
                group = 3 if double is not None else 4 if single is not None else 5
                begin, end = match.span(group)
                attributes[name] = original[begin:end] if begin >= 0 else b""
        pos = match.end()
    return attributes, -1, LIMIT_TAG_BYTES if limit == start + MAX_TAG_BYTES else None


class _HeadState:
    """Where the reading of a head is, and what it met."""

    __slots__ = (
        "collector",
        "events",
        "last_meta",
        "low",
        "needles",
        "next_needle",
        "parsed",
        "references",
        "scanned",
        "searched",
        "seen",
        "tokens",
    )

    def __init__(self, window: bytes, tokens: frozenset[str], collector: Collector) -> None:
        self.low = _Lower(window)
        #: the names a ``<meta name>`` addresses us by, besides ``robots``
        self.tokens = tokens
        self.collector = collector
        self.needles = tuple(
            {b"robots", *(token.encode("ascii", "ignore") for token in tokens)} - {b""}
        )
        #: What an attribute name written with character references contains
        #: (``r&#111;bots``, ``my&lowbar;bot``): each place is read only when it
        #: is in a ``<meta>`` tag not read yet (not counted in MAX_META_TAGS).
        self.references = _REFERENCE_NEEDLES
        #: the next match of each head event pattern, and how far it was searched
        self.events: list[re.Match[bytes] | None] = [None] * len(_HEAD_EVENT_PATTERNS)
        self.searched = [0] * len(_HEAD_EVENT_PATTERNS)
        self.seen = 0  # places where a needle occurs, looked at
        self.scanned = 0  # "<meta" was looked for before this offset
        self.last_meta = -1  # the last "<meta" found before ``scanned``
        self.parsed = -1  # the end of the last tag read
        self.next_needle = -1  # where robots or the token occurs next, once looked for

    def needles_after(self, pos: int) -> bool:
        """Whether ``robots``, the token or a reference occurs in the window at or after ``pos``
        (``pos`` never goes back: each byte is searched once)."""
        if self.next_needle >= pos:
            return True
        if self.next_needle == _NONE_LEFT:
            return False
        while self.low.grow():
            pass
        text = self.low.text
        needles = self.needles + self.references
        found = [at for at in (text.find(needle, pos) for needle in needles) if at >= 0]
        self.next_needle = min(found) if found else _NONE_LEFT
        return bool(found)


def _names_a_needle(low: bytes, tokens: frozenset[str]) -> bool:
    """Whether the lower-cased ``low`` holds a needle :meth:`_HeadState.needles_after`
    looks for: ``robots``, one of ``tokens`` or a character reference."""
    if b"robots" in low:
        return True
    if b"&" in low and any(reference in low for reference in _REFERENCE_NEEDLES):
        return True
    for token in tokens:
        needle = token.encode("ascii", "ignore")
        if needle and needle in low:
            return True
    return False


def _next_event(state: _HeadState, pos: int) -> re.Match[bytes] | None:
    """The first head event (:data:`_HEAD_EVENT_PATTERNS`) at or after ``pos``.

    Each pattern is searched only up to the first event found so far, and
    again only once its last match is passed, or past where its last search
    stopped: each byte is looked at a bounded number of times per pattern.
    """
    low = state.low
    if pos < _FIRST_CHUNK - _EVENT_MARGIN:
        # In the first chunk (where nearly every head ends), one pattern for all
        # events: its cost grows with the number of "<", so it is kept to 8 KiB.
        text = low.text
        until = min(len(text), _FIRST_CHUNK)
        found = _ANY_EVENT.search(text, pos, until)
        if found is not None and (
            until == len(low.window) or found.start() < until - _EVENT_MARGIN
        ):
            return found
        if found is None and until == len(low.window):
            return None
    if not state.needles_after(pos):
        return None  # nothing more to read: the events do not matter
    events = state.events
    searched = state.searched
    while True:
        text = low.text
        best: re.Match[bytes] | None = None
        for index, pattern in enumerate(_HEAD_EVENT_PATTERNS):
            found = events[index]
            if found is not None and found.start() < pos:
                found = events[index] = None
                searched[index] = pos
            if found is None:
                since = max(pos, searched[index] - _EVENT_MARGIN)
                until = len(text) if best is None else best.start() + _EVENT_MARGIN
                if since < until:
                    found = events[index] = pattern.search(text, since, until)
                    searched[index] = max(searched[index], until)
            if found is not None and (best is None or found.start() < best.start()):
                best = found
        if low.full or (best is not None and best.start() < len(text) - _EVENT_MARGIN):
            return best  # no event can start before it in the rest of the window
        low.grow()


def read_head(
    window: bytes, tokens: frozenset[str], collector: Collector, *, cut: bool = False
) -> None:
    """The ``<meta name="robots">`` and ``<meta name="<token>">`` tags of the head
    (``tokens``: lower-case names).

    The head ends at ``</head>`` or ``<body``; ``<meta>`` tags after it are
    ignored, as search engines do. Comments, scripts, styles and templates
    are skipped, and so are elements whose content is text (``<title>``,
    ``<textarea>``, ...): a ``<body`` there is not the body. Linear with a
    small constant: the window is lower-cased in
    growing chunks; the events (head end, comment, script, ...) are found by
    :func:`_next_event`; between skipped parts only the places where
    ``robots`` or the token occur are looked at (other meta tags cost
    nothing), and once neither occurs further on, the reading stops.
    ``cut``: the body goes on past ``window``; a head that has not ended
    within it is recorded as truncated (:data:`LIMIT_HEAD`).
    """
    if not cut and len(window) <= _FIRST_CHUNK and not _names_a_needle(window.lower(), tokens):
        # a short page (one chunk) naming neither robots nor the token, with
        # no character reference: nothing to read (no reading state made)
        return
    state = _HeadState(window, tokens, collector)
    pos = 0
    while True:
        event = _next_event(state, pos)
        if state.next_needle != _NONE_LEFT:
            _read_metas(state, pos, event.start() if event is not None else len(state.low.text))
        if event is None:
            break
        closing_pattern = _CLOSING.get(event.group())
        if closing_pattern is None:  # </head> or <body>
            return
        closing = state.low.search(closing_pattern, event.end())
        if closing is None:  # an unclosed comment, script, style or template
            if cut:
                collector.truncated.add(LIMIT_HEAD)
            return
        pos = closing.end()
    # The end of the window, or no robots / token left in it: did the head end?
    text = state.low.text
    if cut and not (state.low.full and (_HEAD_END.search(text, pos) or _BODY.search(text, pos))):
        collector.truncated.add(LIMIT_HEAD)


def _read_metas(state: _HeadState, start: int, end: int) -> None:
    """The relevant ``<meta>`` tags of ``low[start:end]`` (lower-cased; no comment or script)."""
    low = state.low.text
    words = len(state.needles)
    needles = state.needles + state.references
    pos = start
    # The next place of each word, searched again only once passed: linear.
    nexts = [low.find(needle, pos, end) for needle in needles]
    while True:
        for index, found in enumerate(nexts):
            if 0 <= found < pos:
                nexts[index] = low.find(needles[index], pos, end)
        hit = min((found for found in nexts if found >= 0), default=-1)
        if hit < 0:
            return
        # A reference counts as a place only in a tag read (below), so that
        # "&amp;" in links and descriptions does not use up MAX_META_TAGS.
        reference = all(found != hit for found in nexts[:words])
        if not reference:
            if state.seen >= MAX_META_TAGS:
                state.collector.truncated.add(LIMIT_META_TAGS)
                return
            state.seen += 1
        pos = hit + 1
        # The "<meta" this place is in: looked for back to where the last look
        # stopped (each byte once), and at most MAX_TAG_BYTES back.
        floor = max(start, hit - MAX_TAG_BYTES)
        tag = low.rfind(b"<meta", max(floor, state.scanned), hit)
        if tag < 0 and state.last_meta >= floor:
            tag = state.last_meta
        state.scanned = max(state.scanned, hit)
        if tag < 0:
            continue
        state.last_meta = tag
        if tag < state.parsed or (tag + 5 < len(low) and low[tag + 5] not in _TAG_NAME_END):
            continue  # a tag read already, or <metadata>
        if reference:
            if state.seen >= MAX_META_TAGS:
                state.collector.truncated.add(LIMIT_META_TAGS)
                return
            state.seen += 1
        while True:
            attributes, tag_end, limit = _meta_attributes(low, tag + 5)
            if tag_end >= 0 or limit is not None or not state.low.grow():
                break
            low = state.low.text  # the tag goes on past the lower-cased copy: grow it
        if limit is not None:
            state.collector.truncated.add(limit)
        if tag_end < 0:
            # Not closed within the limits: in HTML the tag goes on to the next
            # ">", and "<meta" or a name in it are attribute text.
            close = low.find(b">", tag + 5, end)
            if close < 0:
                return
            state.parsed = pos = close + 1
            continue
        state.parsed = tag_end
        if tag_end <= hit:
            continue  # the word is after the tag
        pos = max(pos, tag_end)
        name = attributes.get(b"name")
        content = attributes.get(b"content")
        if name is None or content is None:
            continue
        name_text = name.decode("latin-1")
        if "&" in name_text:  # r&#111;bots: an HTML parser decodes it (bounded: one tag)
            name_text = html.unescape(name_text).lower()
        name_text = name_text.strip()
        if name_text != "robots" and name_text not in state.tokens:
            continue
        source = f'<meta name="{name_text}">'
        if name_text in state.collector.verbatim:  # a URL: its case matters (one tag re-read)
            content = _meta_attributes(low, tag + 5, state.low.window)[0].get(b"content", b"")
            value = html.unescape(content.decode("utf-8", "replace")).strip()
            state.collector.add_all([value] if value else [], source)
            continue
        text = html.unescape(content.decode("utf-8", "replace"))
        state.collector.add_all(state.collector.split(text), source)

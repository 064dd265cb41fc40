"""Page-level robots directives: the robots META tag and ``X-Robots-Tag``.

Pure: no Scrapy import. HTTP: The Definitive Guide ch. 9 ("Robot META
directives") describes ``<meta name="robots" content="noindex,nofollow">`` in a
page's head, with NOINDEX, NOFOLLOW, INDEX, FOLLOW, NOARCHIVE, ALL and NONE,
case-insensitive, also addressed to one robot by name. Search engines carry
the same directives in the ``X-Robots-Tag`` response header (also for
non-HTML responses), optionally addressed to one agent
(``X-Robots-Tag: examplebot: noindex``), and add ``unavailable_after: <date>``.

:func:`read_page_directives` returns the directives that apply to one product
token and where each came from. Reading never raises and is bounded: only the
head of an HTML body is scanned (at most :data:`MAX_HEAD_BYTES`), in one
linear pass; a ``<meta>`` tag is read over at most :data:`MAX_TAG_BYTES`, and
at most :data:`MAX_META_TAGS` places where ``robots`` or the token occur are
looked at.
"""

from __future__ import annotations

import html
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = [
    "MAX_HEAD_BYTES",
    "PageDirectives",
    "head_of_body",
    "parse_date",
    "read_page_directives",
    "read_usage_signals",
]

#: Bytes of an HTML body scanned for the head's ``<meta>`` tags.
MAX_HEAD_BYTES = 256 * 1024
#: Bytes of one ``<meta ...>`` tag read for its attributes.
MAX_TAG_BYTES = 4096
#: Places where ``robots`` or the token occur in the head looked at per page.
MAX_META_TAGS = 256
#: ``X-Robots-Tag`` header values read per response, and bytes read of each.
MAX_HEADER_VALUES = 64
MAX_HEADER_BYTES = 8192

NOINDEX = "noindex"
NOFOLLOW = "nofollow"
NOARCHIVE = "noarchive"
UNAVAILABLE_AFTER = "unavailable_after"

#: Directive names that take a value after a colon (Google's robots meta
#: documentation): ``name: value`` with one of these names is a directive,
#: never an agent name.
VALUE_DIRECTIVES = frozenset(
    {UNAVAILABLE_AFTER, "max-snippet", "max-image-preview", "max-video-preview"}
)
#: Permissive directives and the restrictive ones that override them
#: (the most restrictive wins).
_OVERRIDDEN_BY = {
    "index": (NOINDEX,),
    "follow": (NOFOLLOW,),
    "all": (NOINDEX, NOFOLLOW),
}

#: Searched in a lower-cased copy, case-sensitively (much faster than IGNORECASE).
_HEAD_EVENTS = re.compile(rb"<(?:(/head|body|script|style|template)|(!--))")
_FIRST_CHUNK = 8 * 1024
_TAG_NAME_END = b" \t\r\n\f/>"
_AFTER_CLOSING_TAG = {
    b"script": re.compile(rb"</script"),
    b"style": re.compile(rb"</style"),
    b"template": re.compile(rb"</template"),
}
_ATTRIBUTE = re.compile(
    rb"""[\s/]*([^\s/>=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'][^\s>]*)))?""",
)
_AGENT_PREFIX = re.compile(r"\s*([A-Za-z_-][A-Za-z0-9_.-]*)\s*:\s*(.*)\Z", re.DOTALL)
_DIRECTIVE_START = re.compile(r"\s*[A-Za-z_-][A-Za-z0-9_.-]*\s*(?::|\Z)")
_ISO_8601 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?\Z",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PageDirectives:
    """The robots directives that apply to one agent for one response.

    ``directives``: lower-case names (``noindex``, ``nofollow``, ``noarchive``,
    permissive ones such as ``index`` unless overridden, unknown ones such as
    ``max-snippet:50`` or ``noai`` as written, lower-cased); ``none`` adds
    ``noindex`` and ``nofollow``, a past ``unavailable_after`` adds ``noindex``.
    ``sources``: for each directive, where it came from, such as
    ``'<meta name="robots">'`` or ``'X-Robots-Tag: examplebot'``.
    """

    directives: frozenset[str] = frozenset()
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    url: str = ""

    @property
    def nofollow(self) -> bool:
        return NOFOLLOW in self.directives

    @property
    def noindex(self) -> bool:
        return NOINDEX in self.directives

    @property
    def noarchive(self) -> bool:
        return NOARCHIVE in self.directives

    def source_of(self, directive: str) -> str:
        """Where ``directive`` came from, for a log line: ``'<meta name="robots">'``."""
        return ", ".join(self.sources.get(directive, ())) or "unknown"

    def describe(self) -> list[str]:
        """One line per directive with its sources, sorted: ``'noindex (X-Robots-Tag)'``."""
        return [f"{name} ({self.source_of(name)})" for name in sorted(self.directives)]


EMPTY = PageDirectives()


# -- directive lists --------------------------------------------------------------------


def split_directives(content: str) -> list[str]:
    """A comma-separated directive list, lower-cased and stripped.

    A date after ``unavailable_after:`` may hold commas (``Friday,
    25-Jun-10 15:00:00 PST``, ``Wed, 25 Jun 2010 ...``): pieces after it that
    do not start like a directive name are joined back to it.
    """
    result: list[str] = []
    for piece in content.split(","):
        text = piece.strip()
        if not text:
            continue
        if result and UNAVAILABLE_AFTER + ":" in result[-1] and not _DIRECTIVE_START.match(text):
            result[-1] = f"{result[-1]}, {text.lower()}"
            continue
        result.append(_normalise(text))
    return result


def _normalise(directive: str) -> str:
    """``Max-Snippet : 50`` -> ``max-snippet:50``; ``unavailable_after: X`` keeps one blank."""
    name, colon, value = directive.partition(":")
    name = name.strip().lower()
    if not colon:
        return " ".join(name.split())
    value = value.strip().lower()
    return f"{name}: {value}" if name == UNAVAILABLE_AFTER else f"{name}:{value}"


def parse_date(value: str) -> datetime | None:
    """An ``unavailable_after`` date: RFC 822 / RFC 850 / asctime or ISO 8601; ``None`` if not one.

    A date without a time zone is read as UTC.
    """
    text = value.strip()[:100]
    if not text:
        return None
    match = _ISO_8601.match(text)
    if match:
        year, month, day, hour, minute, second, zone = match.groups()
        try:
            parsed = datetime(
                int(year),
                int(month),
                int(day),
                int(hour or 0),
                int(minute or 0),
                int(second or 0),
                tzinfo=timezone.utc,
            )
        except ValueError:
            return None
        if zone and zone.upper() != "Z":
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            offset = int(digits[:2]) * 60 + int(digits[2:4] or 0)
            parsed -= sign * timedelta(minutes=offset)
        return parsed
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


class _Collector:
    """Directives and their sources, combined over several tags and headers."""

    __slots__ = ("now", "sources")

    def __init__(self, now: datetime | None) -> None:
        self.sources: dict[str, list[str]] = {}
        self.now = now

    def add(self, directive: str, source: str) -> None:
        where = self.sources.setdefault(directive, [])
        if source not in where:
            where.append(source)

    def add_all(self, directives: Iterable[str], source: str) -> None:
        for directive in directives:
            self.add(directive, source)
            if directive == "none":
                self.add(NOINDEX, source)
                self.add(NOFOLLOW, source)
            elif directive.startswith(UNAVAILABLE_AFTER + ":"):
                when = parse_date(directive.partition(":")[2])
                now = self.now or datetime.now(timezone.utc)
                if when is not None and when <= now:
                    self.add(NOINDEX, f"{source} ({UNAVAILABLE_AFTER})")

    def result(self, url: str) -> PageDirectives:
        if not self.sources:
            return PageDirectives(url=url) if url else EMPTY
        sources = {
            name: tuple(where)
            for name, where in self.sources.items()
            if not any(strict in self.sources for strict in _OVERRIDDEN_BY.get(name, ()))
        }
        return PageDirectives(frozenset(sources), sources, url)


# -- X-Robots-Tag -------------------------------------------------------------------------


def _header_values(headers: Any, name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive) in ``headers``.

    ``headers``: a mapping of names to a value or a list of values (Scrapy's
    ``Headers``, a ``dict``), or an iterable of ``(name, value)`` pairs;
    names and values bytes or str.
    """
    found: list[str] = []
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:  # Scrapy's Headers: case-insensitive already
        for item in getlist(name)[:MAX_HEADER_VALUES]:
            raw = item[:MAX_HEADER_BYTES]
            found.append(raw.decode("latin-1") if isinstance(raw, bytes) else str(raw))
        return found
    wanted = name.lower()
    pairs = headers.items() if hasattr(headers, "items") else headers
    for key, value in pairs:
        key_text = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if key_text.lower() != wanted:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if len(found) >= MAX_HEADER_VALUES:
                return found
            raw = item[:MAX_HEADER_BYTES]
            found.append(raw.decode("latin-1") if isinstance(raw, bytes) else str(raw))
    return found


def _read_header(value: str, token: str, collector: _Collector) -> None:
    """One ``X-Robots-Tag`` value: ``noindex, nofollow`` or ``examplebot: noindex, ...``.

    An ``agent:`` prefix addresses the directives after it (up to the next
    prefix) to that agent only; they apply when it is our token
    (case-insensitive). ``name: value`` with a name of :data:`VALUE_DIRECTIVES`
    is a directive, not an agent.
    """
    agent: str | None = None
    for piece in split_directives(value):
        match = _AGENT_PREFIX.match(piece)
        if match and match.group(1) not in VALUE_DIRECTIVES and match.group(2)[:1].isalpha():
            agent = match.group(1)
            piece = _normalise(match.group(2))
        if agent is None:
            collector.add_all([piece], "X-Robots-Tag")
        elif agent == token:
            collector.add_all([piece], f"X-Robots-Tag: {agent}")


# -- the HTML head -------------------------------------------------------------------------


def _is_html(content_type: str | None, body: bytes) -> bool:
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


def _meta_attributes(window: bytes, start: int) -> tuple[dict[bytes, bytes], int]:
    """The attributes of the tag whose name ends at ``start``; and where it ends."""
    limit = min(len(window), start + MAX_TAG_BYTES)
    attributes: dict[bytes, bytes] = {}
    pos = start
    while pos < limit:
        while pos < limit and window[pos] in b" \t\r\n\f/":
            pos += 1
        if pos >= limit or window[pos] == 0x3E:  # ">"
            return attributes, pos + 1
        match = _ATTRIBUTE.match(window, pos, limit)
        if match is None or match.end() == pos:
            pos += 1
            continue
        name = match.group(1).lower()
        value = match.group(2)
        if value is None:
            value = match.group(3)
        if value is None:
            value = match.group(4) or b""
        attributes.setdefault(name, value)
        pos = match.end()
    return attributes, limit


def _read_head(window: bytes, token: str, collector: _Collector) -> None:
    """The ``<meta name="robots">`` and ``<meta name="<token>">`` tags of the head.

    The head ends at ``</head>`` or ``<body``; ``<meta>`` tags after it are
    ignored, as search engines do. Comments, scripts, styles and templates
    are skipped. Linear: the window is lower-cased in growing chunks (8 KiB,
    then four times more each time the head goes on), searched with
    case-sensitive patterns, and between skipped parts only the places where
    ``robots`` or the token occur are looked at (other meta tags cost nothing).
    """
    needles = tuple({b"robots", token.encode("ascii", "ignore")} - {b""})
    seen = [0]
    size = min(len(window), _FIRST_CHUNK)
    low = window[:size].lower()
    start = search_from = 0
    while True:
        event = _HEAD_EVENTS.search(low, search_from)
        after = event.end() if event else 0
        end: int | re.Match[bytes] | None = None
        if event is not None and after < len(low):
            if event.group(1) and low[after] not in _TAG_NAME_END:
                search_from = after  # <bodyx>, <scripts>: not the tag
                continue
            if event.group(2):  # <!--
                end = low.find(b"-->", after)
                end = None if end < 0 else end
            else:
                closing = _AFTER_CLOSING_TAG.get(event.group(1))
                end = closing.search(low, after) if closing else -1
        if end is None and size < len(window):  # the chunk ends in the head: grow it
            size = min(len(window), size * 4)
            low = window[:size].lower()
            continue
        _read_metas(
            low, start, event.start() if event else len(low), token, needles, collector, seen
        )
        if end is None or end == -1:  # end of the window, or </head> / <body>
            return
        start = search_from = end + 3 if isinstance(end, int) else end.end()


def _read_metas(
    low: bytes,
    start: int,
    end: int,
    token: str,
    needles: tuple[bytes, ...],
    collector: _Collector,
    seen: list[int],
) -> None:
    """The relevant ``<meta>`` tags of ``low[start:end]`` (lower-cased; no comment or script)."""
    pos = start
    # The next place of each word, searched again only once passed: linear.
    nexts = [low.find(needle, pos, end) for needle in needles]
    while seen[0] < MAX_META_TAGS:
        for index, found in enumerate(nexts):
            if 0 <= found < pos:
                nexts[index] = low.find(needles[index], pos, end)
        hit = min((found for found in nexts if found >= 0), default=-1)
        if hit < 0:
            return
        seen[0] += 1
        pos = hit + 1
        tag = low.rfind(b"<meta", max(start, hit - MAX_TAG_BYTES), hit)
        if tag < 0 or (tag + 5 < len(low) and low[tag + 5] not in _TAG_NAME_END):
            continue  # not in a meta tag, or <metadata>
        attributes, tag_end = _meta_attributes(low, tag + 5)
        if tag_end <= hit:
            continue  # the word is after the tag
        pos = max(pos, tag_end)
        name = attributes.get(b"name")
        content = attributes.get(b"content")
        if name is None or content is None:
            continue
        name_text = name.decode("latin-1").strip()
        if name_text != "robots" and name_text != token:
            continue
        text = html.unescape(content.decode("utf-8", "replace"))
        collector.add_all(split_directives(text), f'<meta name="{name_text}">')


# -- the whole response ---------------------------------------------------------------------


def read_page_directives(
    url: str,
    status: int,
    headers: Any,
    body: bytes | None,
    token: str,
    *,
    now: datetime | None = None,
) -> PageDirectives:
    """The robots directives addressed to ``token`` by a response, and their sources.

    * every ``X-Robots-Tag`` header (any response, HTML or not): plain, or
      ``<token>: ...`` for our token only, compared case-insensitively;
    * for an HTML body (a ``Content-Type`` with ``html``, or none and a body
      starting with ``<``), ``<meta name="robots">`` and ``<meta
      name="<token>">`` in the head, names case-insensitive;
    * the body of a redirect (3xx), 204 or 304 is not read.

    Several tags and headers combine and the most restrictive wins
    (HTTP: The Definitive Guide ch. 9): ``index`` is dropped when ``noindex``
    is present, ``follow`` when ``nofollow`` is, ``all`` when either is.
    ``unavailable_after: <date>`` adds ``noindex`` once ``now`` (default: the
    current time) is past the date. Never raises on content; reads at most
    :data:`MAX_HEAD_BYTES` of the body.
    """
    collector = _Collector(now)
    agent = token.strip().lower()
    try:
        for value in _header_values(headers, "X-Robots-Tag"):
            _read_header(value, agent, collector)
        if body and not (300 <= status < 400 or status in (204, 304)):
            content_type = next(iter(_header_values(headers, "Content-Type")), None)
            if _is_html(content_type, body):
                _read_head(body[:MAX_HEAD_BYTES], agent, collector)
    except (AttributeError, TypeError, ValueError):  # malformed headers object
        pass
    return collector.result(url)


# -- usage signals (declared purposes) ------------------------------------------------------

#: Response headers that carry usage preferences, and the source name each gets.
USAGE_HEADERS = (
    ("Content-Usage", "Content-Usage header"),
    ("tdm-reservation", "tdm-reservation header"),
)
TDM_META = "tdm-reservation"


class _NamedMeta(_Collector):
    """Keeps the content of ``<meta name="<name>">`` tags only."""

    __slots__ = ("found", "name")

    def __init__(self, name: str) -> None:
        super().__init__(None)
        self.name = f'<meta name="{name}">'
        self.found: list[str] = []

    def add_all(self, directives: Iterable[str], source: str) -> None:
        if source == self.name:
            self.found.extend(directives)


def read_usage_signals(status: int, headers: Any, body: bytes | None) -> list[tuple[str, str]]:
    """``(source, value)`` of each usage signal of a response, in order.

    The ``Content-Usage`` header (IETF AIPREF attach draft), the
    ``tdm-reservation`` header and, in an HTML head, ``<meta
    name="tdm-reservation" content="1">`` (TDMRep). Bounded as
    :func:`read_page_directives`; never raises on content.
    """
    found: list[tuple[str, str]] = []
    try:
        for name, source in USAGE_HEADERS:
            found.extend((source, value) for value in _header_values(headers, name))
        if body and not (300 <= status < 400 or status in (204, 304)):
            content_type = next(iter(_header_values(headers, "Content-Type")), None)
            if _is_html(content_type, body):
                collector = _NamedMeta(TDM_META)
                _read_head(body[:MAX_HEAD_BYTES], TDM_META, collector)
                found.extend((f'<meta name="{TDM_META}">', value) for value in collector.found)
    except (AttributeError, TypeError, ValueError):  # malformed headers object
        pass
    return found

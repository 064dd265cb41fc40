"""Page-level robots directives: their values, limits and how they combine. Pure.

HTTP: The Definitive Guide ch. 9 ("Robot META directives") names NOINDEX,
NOFOLLOW, INDEX, FOLLOW, NOARCHIVE, ALL and NONE, case-insensitive; search
engines add ``unavailable_after: <date>`` and directives with a value
(``max-snippet:50``). A :class:`Collector` gathers what the ``X-Robots-Tag``
headers (``_page_directives``) and the head's ``<meta>`` tags
(``_html_head``) say, with each directive's source, and combines them into
one :class:`PageDirectives`: the most restrictive wins. The limits of the
reading are named here, so that a result can say which were met.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

__all__ = [
    "EMPTY",
    "KNOWN_DIRECTIVES",
    "LENIENT_EMPTY_PARAMETER",
    "LENIENT_SEMICOLON",
    "LENIENT_SPACE",
    "LIMIT_HEAD",
    "LIMIT_HEADER_BYTES",
    "LIMIT_HEADER_VALUES",
    "LIMIT_META_TAGS",
    "LIMIT_TAG_ATTRIBUTES",
    "LIMIT_TAG_BYTES",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_VALUES",
    "MAX_HEAD_BYTES",
    "MAX_META_TAGS",
    "MAX_TAG_ATTRIBUTES",
    "MAX_TAG_BYTES",
    "NOARCHIVE",
    "NOFOLLOW",
    "NOINDEX",
    "ROBOTS_TAG_IGNORED",
    "UNAVAILABLE_AFTER",
    "VALUE_DIRECTIVES",
    "Collector",
    "PageDirectives",
    "normalise_directive",
    "parse_date",
    "spaced_directives",
    "split_directives",
]

#: Bytes of an HTML body scanned for the head's ``<meta>`` tags.
MAX_HEAD_BYTES = 256 * 1024
#: Bytes of one ``<meta ...>`` tag read for its attributes.
MAX_TAG_BYTES = 4096
#: Places where ``robots`` or the token occur in the head looked at per page.
MAX_META_TAGS = 128
#: Attributes of one ``<meta ...>`` tag read (real ones have two to four).
MAX_TAG_ATTRIBUTES = 16
#: ``X-Robots-Tag`` (and ``Robots-Tag``) header values read per response, and
#: bytes read of each: draft-illyes-repext-03, "The parsing limit MUST be at
#: least 8 kibibytes".
MAX_HEADER_VALUES = 64
MAX_HEADER_BYTES = 8192

#: The names of the limits, as recorded in :attr:`PageDirectives.truncated`.
LIMIT_HEAD = "MAX_HEAD_BYTES"
LIMIT_TAG_BYTES = "MAX_TAG_BYTES"
LIMIT_TAG_ATTRIBUTES = "MAX_TAG_ATTRIBUTES"
LIMIT_META_TAGS = "MAX_META_TAGS"
LIMIT_HEADER_VALUES = "MAX_HEADER_VALUES"
LIMIT_HEADER_BYTES = "MAX_HEADER_BYTES"
#: LENIENT(meta-semicolon): ``noindex; nofollow`` read as ``noindex, nofollow``.
LENIENT_SEMICOLON = "meta-semicolon"
#: LENIENT(meta-space): ``noindex nofollow`` read as ``noindex, nofollow`` (every
#: word a known directive).
LENIENT_SPACE = "meta-space"
#: LENIENT(robots-tag-empty-parameter): ``Robots-Tag: *;noindex, ExampleBot;`` (the
#: draft's own example) read without the ``;`` that no parameter follows, which
#: RFC 9651 does not allow.
LENIENT_EMPTY_PARAMETER = "robots-tag-empty-parameter"
#: Not lenient, but said as the lenient forms are: a ``Robots-Tag`` value that is
#: no Structured Fields List was ignored whole (RFC 9651: a field that fails
#: parsing is ignored), so a page's log line says why its header stated nothing.
ROBOTS_TAG_IGNORED = "robots-tag-unparsed"

NOINDEX = "noindex"
NOFOLLOW = "nofollow"
NOARCHIVE = "noarchive"
UNAVAILABLE_AFTER = "unavailable_after"

#: Directives without a value that a blank may separate (LENIENT(meta-space)):
#: HTTP: The Definitive Guide ch. 9's and those search engines document.
KNOWN_DIRECTIVES = frozenset(
    {
        "all",
        "follow",
        "index",
        "indexifembedded",
        "noarchive",
        "nocache",
        "nofollow",
        "noimageindex",
        "noindex",
        "none",
        "noodp",
        "nosnippet",
        "notranslate",
        "noydir",
    }
)
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
    ``truncated``: the names of the limits the reading met (``MAX_HEAD_BYTES``,
    ``MAX_TAG_BYTES``, ``MAX_TAG_ATTRIBUTES``, ``MAX_META_TAGS``,
    ``MAX_HEADER_VALUES``, ``MAX_HEADER_BYTES``): content past them was not
    read, so a directive there was not seen. ``lenient``: the ``LENIENT``
    readings used (``meta-semicolon``, ``meta-space``). ``url``: the response's
    (``""`` in :data:`EMPTY`, which every response that states nothing shares).
    """

    directives: frozenset[str] = frozenset()
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    url: str = ""
    truncated: frozenset[str] = frozenset()
    lenient: frozenset[str] = frozenset()

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


#: What a response that states nothing gives (most do).
EMPTY = PageDirectives()


# -- directive lists --------------------------------------------------------------------


def split_directives(content: str, lenient: set[str] | None = None) -> list[str]:
    """A comma-separated directive list, lower-cased and stripped.

    A date after ``unavailable_after:`` may hold commas (``Friday,
    25-Jun-10 15:00:00 PST``, ``Wed, 25 Jun 2010 ...``): pieces after it that
    do not start like a directive name are joined back to it. A semicolon
    separates too (``noindex; nofollow``, seen in the wild); ``lenient``, if
    given, gets :data:`LENIENT_SEMICOLON` when one was read.
    """
    if ";" in content:
        # LENIENT(meta-semicolon): Google's syntax is a comma-separated list;
        # "noindex; nofollow" is common enough, and means what it says.
        content = content.replace(";", ",")
        if lenient is not None:
            lenient.add(LENIENT_SEMICOLON)
    result: list[str] = []
    for piece in content.split(","):
        text = piece.strip()
        if not text:
            continue
        if result and UNAVAILABLE_AFTER + ":" in result[-1] and not _DIRECTIVE_START.match(text):
            result[-1] = f"{result[-1]}, {text.lower()}"
            continue
        result.extend(spaced_directives(normalise_directive(text), lenient))
    return result


def spaced_directives(directive: str, lenient: set[str] | None) -> list[str]:
    """``noindex nofollow`` -> ``["noindex", "nofollow"]`` when every word is a
    :data:`KNOWN_DIRECTIVES` name; anything else stays one (unknown) directive."""
    words = directive.split(" ")
    if len(words) < 2 or not all(word in KNOWN_DIRECTIVES for word in words):
        return [directive]
    # LENIENT(meta-space): the syntax is comma-separated, but "noindex nofollow"
    # is common in the wild, and means what it says when each word is a directive.
    if lenient is not None:
        lenient.add(LENIENT_SPACE)
    return words


def normalise_directive(directive: str) -> str:
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


class Collector:
    """Directives and their sources, combined over several tags and headers."""

    __slots__ = ("lenient", "now", "sources", "truncated")
    #: ``<meta name>`` names whose content is one value as written (case kept, not split)
    verbatim: frozenset[str] = frozenset()

    def __init__(self, now: datetime | None) -> None:
        self.sources: dict[str, list[str]] = {}
        self.now = now
        self.truncated: set[str] = set()
        self.lenient: set[str] = set()

    def split(self, content: str) -> list[str]:
        return split_directives(content, self.lenient)

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
        """What was read from ``url``; :data:`EMPTY` (no URL) when it states nothing,
        as most pages do: no object is made for them."""
        if not (self.sources or self.truncated or self.lenient):
            return EMPTY
        sources = {
            name: tuple(where)
            for name, where in self.sources.items()
            if not any(strict in self.sources for strict in _OVERRIDDEN_BY.get(name, ()))
        }
        return PageDirectives(
            frozenset(sources), sources, url, frozenset(self.truncated), frozenset(self.lenient)
        )

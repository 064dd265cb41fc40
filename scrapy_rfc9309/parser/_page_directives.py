"""Page-level robots directives of one response: ``X-Robots-Tag`` and the robots META tag.

Pure: no Scrapy import. HTTP: The Definitive Guide ch. 9 ("Robot META
directives") describes ``<meta name="robots" content="noindex,nofollow">`` in a
page's head, also addressed to one robot by name. Search engines carry the
same directives in the ``X-Robots-Tag`` response header (also for non-HTML
responses), optionally addressed to one agent (``X-Robots-Tag: examplebot:
noindex``).

:func:`read_page_directives` returns the directives that apply to one product
token and where each came from: the headers read here (at most
:data:`~._directives.MAX_HEADER_VALUES` values of
:data:`~._directives.MAX_HEADER_BYTES`), the head by ``_html_head``, the
values and their combining by ``_directives``. Reading never raises and is
bounded; :attr:`~._directives.PageDirectives.truncated` names the limits
met, so that the caller can say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ._directives import (
    LIMIT_HEADER_BYTES,
    LIMIT_HEADER_VALUES,
    MAX_HEAD_BYTES,
    MAX_HEADER_BYTES,
    MAX_HEADER_VALUES,
    VALUE_DIRECTIVES,
    Collector,
    PageDirectives,
    normalise_directive,
    spaced_directives,
)
from ._html_head import ascii_compatible_head, is_html, read_head

__all__ = ["header_values", "read_page_directives"]

_AGENT_PREFIX = re.compile(r"\s*([A-Za-z_-][A-Za-z0-9_.-]*)\s*:\s*(.*)\Z", re.DOTALL)


def header_values(headers: Any, name: str, truncated: set[str] | None = None) -> list[str]:
    """Every value of header ``name`` (case-insensitive) in ``headers``.

    ``headers``: a mapping of names to a value or a list of values (Scrapy's
    ``Headers``, a ``dict``), or an iterable of ``(name, value)`` pairs;
    names and values bytes or str. At most :data:`MAX_HEADER_VALUES` values
    of :data:`MAX_HEADER_BYTES` each; ``truncated``, if given, gets the name
    of a limit met.
    """
    found: list[str] = []
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:  # Scrapy's Headers: case-insensitive already
        values = getlist(name)
    else:
        wanted = name.lower()
        values = []
        pairs = headers.items() if hasattr(headers, "items") else headers
        for key, value in pairs:
            key_text = key.decode("latin-1") if isinstance(key, bytes) else str(key)
            if key_text.lower() == wanted:
                values.extend(value if isinstance(value, (list, tuple)) else [value])
    if len(values) > MAX_HEADER_VALUES and truncated is not None:
        truncated.add(LIMIT_HEADER_VALUES)
    for item in values[:MAX_HEADER_VALUES]:
        if len(item) > MAX_HEADER_BYTES and truncated is not None:
            truncated.add(LIMIT_HEADER_BYTES)
        raw = item[:MAX_HEADER_BYTES]
        found.append(raw.decode("latin-1") if isinstance(raw, bytes) else str(raw))
    return found


def _read_header(value: str, agents: frozenset[str], collector: Collector) -> None:
    """One ``X-Robots-Tag`` value: ``noindex, nofollow`` or ``examplebot: noindex, ...``.

    An ``agent:`` prefix addresses the directives after it (up to the next
    prefix) to that agent only; they apply when it is one of our ``agents``
    (lower-case; compared case-insensitively). ``name: value`` with a name of
    :data:`VALUE_DIRECTIVES` is a directive, not an agent.
    """
    agent: str | None = None
    for piece in collector.split(value):
        match = _AGENT_PREFIX.match(piece)
        pieces = [piece]
        if match and match.group(1) not in VALUE_DIRECTIVES and match.group(2)[:1].isalpha():
            agent = match.group(1)
            ours = collector.lenient if agent in agents else None
            pieces = spaced_directives(normalise_directive(match.group(2)), ours)
        if agent is None:
            collector.add_all(pieces, "X-Robots-Tag")
        elif agent in agents:
            collector.add_all(pieces, f"X-Robots-Tag: {agent}")


def read_page_directives(
    url: str,
    status: int,
    headers: Any,
    body: bytes | None,
    token: str,
    *,
    now: datetime | None = None,
    also: Iterable[str] = (),
) -> PageDirectives:
    """The robots directives addressed to ``token`` by a response, and their sources.

    ``also`` (``ROBOTSTXT_ALSO_OBEY``): further tokens whose directives apply
    too (``<meta name="GPTBot">``, ``X-Robots-Tag: CCBot: nofollow``).

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
    collector = Collector(now)
    agents = frozenset({token.strip().lower(), *(name.strip().lower() for name in also)})
    try:
        for value in header_values(headers, "X-Robots-Tag", collector.truncated):
            _read_header(value, agents, collector)
        if body and not (300 <= status < 400 or status in (204, 304)):
            content_type = next(iter(header_values(headers, "Content-Type")), None)
            head = ascii_compatible_head(body, content_type)
            if is_html(content_type, head):
                cut = len(body) > MAX_HEAD_BYTES
                read_head(head, agents, collector, cut=cut)
    except (AttributeError, TypeError, ValueError):  # malformed headers object
        pass
    return collector.result(url)

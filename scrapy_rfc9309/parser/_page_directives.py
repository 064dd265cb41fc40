"""Page-level robots directives of one response: ``X-Robots-Tag``, ``Robots-Tag``, robots META.

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

import http_sf

from ._directives import (
    LENIENT_EMPTY_PARAMETER,
    LIMIT_HEADER_BYTES,
    LIMIT_HEADER_VALUES,
    MAX_HEAD_BYTES,
    MAX_HEADER_BYTES,
    MAX_HEADER_VALUES,
    ROBOTS_TAG_IGNORED,
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
    if getlist is not None and _keys_title_cased(headers):
        # Scrapy's Headers: a dict of title-cased names to lists of values;
        # read from its own entry (``getlist`` raises and catches KeyError
        # for each header absent, as most of these are)
        values = dict.get(headers, _title_key(name)) or []
    elif getlist is not None:  # another case-insensitive mapping
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
        raw = item
        if len(item) > MAX_HEADER_BYTES:
            if truncated is not None:
                truncated.add(LIMIT_HEADER_BYTES)
            # cut after the last whole member (comma-separated, in every header
            # read here): a member past the limit is not read, never read in part
            # (``nosnippet`` cut to ``nosnippe``, ``max-snippet=500`` to ``=50``)
            raw = item[:MAX_HEADER_BYTES]
            comma = raw.rfind(b"," if isinstance(raw, bytes) else ",")
            raw = raw[: max(comma, 0)]
        found.append(raw.decode("latin-1") if isinstance(raw, bytes) else str(raw))
    return found


#: For each type of headers mapping with ``getlist``: whether it is a ``dict``
#: that keeps each name as its title-cased bytes (Scrapy's ``Headers``).
_TITLE_CASED: dict[type, bool] = {}


def _keys_title_cased(headers: Any) -> bool:
    kind = type(headers)
    known = _TITLE_CASED.get(kind)
    if known is None:
        normkey = getattr(headers, "normkey", None)
        try:
            known = (
                isinstance(headers, dict)
                and normkey is not None
                and normkey("x-robots-TAG") == b"X-Robots-Tag"
            )
        except Exception:  # an unusual mapping: read through getlist
            known = False
        _TITLE_CASED[kind] = known
    return known


_TITLE_KEYS: dict[str, bytes] = {}


def _title_key(name: str) -> bytes:
    """``X-Robots-Tag`` as Scrapy's ``Headers`` keep it (``str.title``, in bytes)."""
    key = _TITLE_KEYS.get(name)
    if key is None:
        key = name.title().encode("latin-1")
        if len(_TITLE_KEYS) < 64:  # the few names read here
            _TITLE_KEYS[name] = key
    return key


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


_EMPTY_PARAMETER = re.compile(r";[ \t]*(?=,|\Z)")


def _read_robots_tag(values: list[str], agents: frozenset[str], collector: Collector) -> None:
    """The ``Robots-Tag`` field (draft-illyes-repext-03): "a List as defined in
    {{STRUCTURED-FIELD-VALUES}}. Each member of the List is an Item representing
    a product token. Rules ... are defined as Parameters of that Item."

    Its field lines are one List (RFC 9651 4.2), parsed by ``http_sf``; a
    member ``*`` or one of our ``agents`` (compared case-insensitively) gives
    its parameters as directives: ``noindex`` (a key alone, boolean true), or
    ``max-snippet:50`` (a key with a value); a key set to false (``?0``) states
    nothing. The directives of every member that applies are added, so the
    union of all restrictive rules applies. A value that does not parse is
    ignored whole (RFC 9651: a field that fails parsing is ignored), except
    for a ``;`` that no parameter follows (LENIENT(robots-tag-empty-parameter),
    the draft's own example writes ``ExampleBot;``).
    """
    text = ", ".join(value.strip() for value in values if value.strip())
    if not text:
        return
    data = text.encode("latin-1", "replace")
    try:
        parsed = http_sf.parse(data, tltype="list")
    except ValueError:  # http_sf.StructuredFieldError, a ValueError
        repaired = _EMPTY_PARAMETER.sub("", text)
        if repaired == text:
            collector.lenient.add(ROBOTS_TAG_IGNORED)  # told in the page's log line
            return
        try:
            parsed = http_sf.parse(repaired.encode("latin-1", "replace"), tltype="list")
        except ValueError:
            collector.lenient.add(ROBOTS_TAG_IGNORED)
            return
        collector.lenient.add(LENIENT_EMPTY_PARAMETER)
    assert isinstance(parsed, list)
    for member in parsed:
        if not isinstance(member, tuple) or len(member) != 2:
            continue
        item, parameters = member[0], member[1]
        if not isinstance(item, (http_sf.Token, str)) or not isinstance(parameters, dict):
            continue  # an Inner List, a number: no product token
        agent = str(item).strip().lower()
        if agent != "*" and agent not in agents:
            continue
        source = "Robots-Tag" if agent == "*" else f"Robots-Tag: {agent}"
        directives = [
            directive
            for key, value in parameters.items()
            if (directive := _parameter_directive(str(key), value)) is not None
        ]
        collector.add_all(directives, source)


def _parameter_directive(key: str, value: object) -> str | None:
    """One ``Robots-Tag`` parameter as a directive: ``noindex`` (boolean true),
    ``max-snippet:50`` (a value); ``None`` for false (``?0``) or a Byte Sequence."""
    if value is True:
        return key
    if value is False or isinstance(value, bytes):
        return None
    return normalise_directive(f"{key}:{value}")


#: The agents each ``(token, also)`` reads directives for (the tokens a crawl
#: obeys as: few; bounded for a spider that rotates its User-Agent).
_AGENTS: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}
_AGENTS_KEPT = 1024


def _agents_of(token: str, also: Iterable[str]) -> frozenset[str]:
    """``token`` and the ``also`` tokens, stripped and lower-cased."""
    key = (token, also) if isinstance(also, tuple) else None
    agents = None if key is None else _AGENTS.get(key)
    if agents is None:
        agents = frozenset({token.strip().lower(), *(name.strip().lower() for name in also)})
        if key is not None:
            if len(_AGENTS) >= _AGENTS_KEPT:
                _AGENTS.clear()
            _AGENTS[key] = agents
    return agents


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
    * the ``Robots-Tag`` field (draft-illyes-repext-03), a Structured Fields
      List: ``*;noindex;nosnippet, examplebot;nofollow`` (see
      :func:`_read_robots_tag`), read beside ``X-Robots-Tag``, whose legacy
      name the draft says implementers "SHOULD also support";
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
    agents = _agents_of(token, also)
    try:
        # Scrapy's Headers: a header absent (most pages) is told without a call
        title_cased = hasattr(headers, "getlist") and _keys_title_cased(headers)
        if not title_cased or dict.__contains__(headers, b"X-Robots-Tag"):
            for value in header_values(headers, "X-Robots-Tag", collector.truncated):
                _read_header(value, agents, collector)
        if not title_cased or dict.__contains__(headers, b"Robots-Tag"):
            robots_tag = header_values(headers, "Robots-Tag", collector.truncated)
            if robots_tag:
                _read_robots_tag(robots_tag, agents, collector)
        if body and not (300 <= status < 400 or status in (204, 304)):
            content_type = next(iter(header_values(headers, "Content-Type")), None)
            head = ascii_compatible_head(body, content_type)
            if is_html(content_type, head):
                cut = len(body) > MAX_HEAD_BYTES
                read_head(head, agents, collector, cut=cut)
    except (AttributeError, TypeError, ValueError):  # malformed headers object
        pass
    return collector.result(url)

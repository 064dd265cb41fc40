"""A response's usage signals, as written: its usage headers and ``<meta>`` tags. Pure.

They say what the content may be used for (AI training, text and data
mining): the ``Content-Usage`` header (IETF AIPREF), the ``Content-Signal``
header (Cloudflare's Content Signals Policy), TDMRep's
``tdm-reservation`` and ``tdm-policy`` headers and ``<meta>`` tags. Only
read here; ``_usage``, ``_tdmrep`` and ``_usage_decision`` give them
meaning.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._directives import Collector
from ._html_head import ascii_compatible_head, is_html, read_head
from ._page_directives import header_values

__all__ = ["TDM_META", "TDM_POLICY_META", "USAGE_HEADERS", "USAGE_META", "read_usage_signals"]

#: Response headers that carry usage preferences, and the source name each gets.
USAGE_HEADERS = (
    ("Content-Usage", "Content-Usage header"),
    # Cloudflare's Content Signals Policy, sent as a response header too
    ("Content-Signal", "Content-Signal header"),
    ("tdm-reservation", "tdm-reservation header"),
    ("tdm-policy", "tdm-policy header"),
)
TDM_META = "tdm-reservation"
#: TDMRep's ``<meta name="tdm-policy" content="https://...">``: the policy URL
TDM_POLICY_META = "tdm-policy"
#: The ``<meta name>`` usage signals read (lower case), each a source ``<meta name="...">``
USAGE_META = (TDM_META, TDM_POLICY_META)


class _NamedMeta(Collector):
    """Keeps the content of ``<meta name="<name>">`` tags of some names only, in order."""

    __slots__ = ("found", "names")
    #: a URL: read as written (case kept, not split at commas)
    verbatim = frozenset({TDM_POLICY_META})

    def __init__(self, names: Iterable[str]) -> None:
        super().__init__(None)
        self.names = frozenset(f'<meta name="{name}">' for name in names)
        self.found: list[tuple[str, str]] = []

    def add_all(self, directives: Iterable[str], source: str) -> None:
        if source in self.names:
            self.found.extend((source, directive) for directive in directives)


def read_usage_signals(
    status: int,
    headers: Any,
    body: bytes | None,
    truncated: dict[str, frozenset[str]] | None = None,
) -> list[tuple[str, str]]:
    """``(source, value)`` of each usage signal of a response, in order.

    The ``Content-Usage`` header (IETF AIPREF attach draft), the
    ``Content-Signal`` header (Content Signals Policy), the
    ``tdm-reservation`` and ``tdm-policy`` headers and, in an HTML head,
    ``<meta name="tdm-reservation" content="1">`` and ``<meta
    name="tdm-policy" content="https://...">`` (TDMRep; the policy's content
    as written: case kept, not split at commas). Bounded as
    :func:`read_page_directives` (headers: at most
    :data:`~._directives.MAX_HEADER_VALUES` values of
    :data:`~._directives.MAX_HEADER_BYTES` each); ``truncated``, if given,
    gets the source of each header that met a limit, with the limits' names
    (``{"Content-Usage header": {"MAX_HEADER_VALUES"}}``): what lies past them
    was not read (see :func:`~._response_usage.unread_usage`). Never raises on content.
    """
    found: list[tuple[str, str]] = []
    try:
        for name, source in USAGE_HEADERS:
            limits: set[str] = set()
            found.extend((source, value) for value in header_values(headers, name, limits))
            if limits and truncated is not None:
                truncated[source] = frozenset(limits)
        if body and not (300 <= status < 400 or status in (204, 304)):
            content_type = next(iter(header_values(headers, "Content-Type")), None)
            head = ascii_compatible_head(body, content_type)
            if is_html(content_type, head):
                collector = _NamedMeta(USAGE_META)
                read_head(head, frozenset(USAGE_META), collector)
                found.extend(collector.found)
    except (AttributeError, TypeError, ValueError):  # malformed headers object
        pass
    return found

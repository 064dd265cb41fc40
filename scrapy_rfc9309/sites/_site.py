"""Sites: scheme + host + port (RFC 9309 2.3: the robots.txt of an authority).

Pure, no Scrapy import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import ParseResult, SplitResult, urlsplit

__all__ = ["WEB_SCHEMES", "exempt_by_meta", "robots_url", "site_of", "site_of_web_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}


#: Sites already read, by the URL's ``scheme://authority`` as written, up to
#: :data:`_SITES_KEPT` (emptied when full): a crawl asks for the site of each
#: request several times (queue, middleware, page directives), and most
#: requests share their authority with many others.
_SITES: dict[str, str | None] = {}
_SITES_KEPT = 4096
_SITE_KEPT_LENGTH = 256
_NOT_KEPT = object()
#: Where an ``http(s)://`` URL's authority ends (RFC 3986 3.2), and the
#: characters ``urlsplit`` removes or reads differently, which the memo leaves
#: to the full reading.
_AUTHORITY_ENDS = ("/", "?", "#")
#: The prefixes of the URLs :func:`site_of_web_url` reads.
WEB_SCHEMES = ("http://", "https://")
_UNUSUAL = frozenset("\t\r\n\\ ")


def site_of(url: str | SplitResult | ParseResult) -> str | None:
    """``scheme://host:port`` of ``url``, normalised; ``None`` if it has no host
    (or is not a URL at all: ``http://[::1`` never raises).

    The host is lower-cased and loses a trailing dot; the port is always
    given, so ``http://Example.com./`` and ``http://example.com:80/`` are one
    site, while ``http://`` and ``https://`` of a host are two.
    """
    if isinstance(url, str) and url.startswith(WEB_SCHEMES):
        return site_of_web_url(url)
    return _site_of(url)


def site_of_web_url(url: str) -> str | None:
    """:func:`site_of` a URL that starts with one of :data:`WEB_SCHEMES`, kept by
    its ``scheme://authority`` (for callers that have told its scheme already)."""
    start = 7 if url[4] == ":" else 8  # after "http://" or "https://"
    end = len(url)
    for char in _AUTHORITY_ENDS:
        found = url.find(char, start)
        if 0 <= found < end:
            end = found
    prefix = url[:end]
    site = _SITES.get(prefix, _NOT_KEPT)
    if site is not _NOT_KEPT:
        return site  # type: ignore[return-value]
    if len(prefix) > _SITE_KEPT_LENGTH or not _UNUSUAL.isdisjoint(prefix):
        return _site_of(url)  # read whole, as it comes
    site = _site_of(prefix)
    if len(_SITES) >= _SITES_KEPT:
        _SITES.clear()  # a crawl of many sites keeps the latest, not all
    _SITES[prefix] = site
    return site


def _site_of(url: str | SplitResult | ParseResult) -> str | None:
    try:
        parts = urlsplit(url) if isinstance(url, str) else url
        host = parts.hostname
    except ValueError:  # "Invalid IPv6 URL"
        return None
    if not host:
        return None
    host = host.rstrip(".")
    if ":" in host:
        host = f"[{host}]"
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return None
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
        if port is None:
            return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def robots_url(site: str) -> str:
    """The URL of the site's robots.txt, without a default port."""
    parts = urlsplit(site)
    netloc = parts.netloc
    if parts.port is not None and parts.port == _DEFAULT_PORTS.get(parts.scheme):
        netloc = netloc.rsplit(":", 1)[0]
    return f"{parts.scheme}://{netloc}/robots.txt"


def exempt_by_meta(meta: Mapping[str, Any], url: str) -> bool:
    """Whether a request of ``url`` with ``meta`` is not checked against robots.txt:
    ``meta["dont_obey_robotstxt"]``, on the site it was sent to. Scrapy's
    RedirectMiddleware copies the meta to the request it follows: one
    redirected to another site (``meta["redirect_urls"]``, the first URL's
    site) is checked, as that site never exempted it."""
    if not meta.get("dont_obey_robotstxt"):
        return False
    sent_to = meta.get("redirect_urls")
    if not sent_to or not isinstance(sent_to, list) or not isinstance(sent_to[0], str):
        return True
    return site_of(sent_to[0]) == site_of(url)

"""Sites: scheme + host + port (RFC 9309 2.3: the robots.txt of an authority).

Pure, no Scrapy import.
"""

from __future__ import annotations

from urllib.parse import ParseResult, SplitResult, urlsplit

__all__ = ["robots_url", "site_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}


def site_of(url: str | SplitResult | ParseResult) -> str | None:
    """``scheme://host:port`` of ``url``, normalised; ``None`` if it has no host
    (or is not a URL at all: ``http://[::1`` never raises).

    The host is lower-cased and loses a trailing dot; the port is always
    given, so ``http://Example.com./`` and ``http://example.com:80/`` are one
    site, while ``http://`` and ``https://`` of a host are two.
    """
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

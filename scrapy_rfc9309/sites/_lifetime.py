"""How long a fetched robots.txt may be used: HTTP cache directives within bounds. Pure.

RFC 9309 2.4: crawlers may use standard HTTP caching (RFC 9111) for the
robots.txt, but SHOULD NOT use a cached version for more than 24 hours unless
it is unreachable. HTTP: The Definitive Guide ch. 9: robots should take note
of ``Cache-Control`` and ``Expires`` on the robots.txt response, and should
not refetch it before every access, which would double the load on servers.

So the lifetime is the response's freshness lifetime (RFC 9111 4.2.1:
``s-maxage``, else ``max-age``, else ``Expires`` minus ``Date``; ``no-store``
and ``no-cache`` mean none), less its ``Age`` (4.2.3), never above
``ROBOTSTXT_CACHE_TTL`` and never below ``ROBOTSTXT_CACHE_MIN_TTL``. Without
any directive it is ``ROBOTSTXT_CACHE_TTL``. No Scrapy import, no clock: the
current time is passed in.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["Lifetime", "cache_directives", "cache_lifetime", "headers_lifetime"]

# One directive: a token name, then an optional token or quoted-string value.
_DIRECTIVE = re.compile(r'\s*([^\s=,;"]+)\s*(?:=\s*(?:"([^"]*)"|([^\s,;"]*)))?\s*(?:,|$)')
_MAX_HEADER = 4096


class Lifetime(NamedTuple):
    """Seconds a robots.txt may be used, and what set them (for logs and reports)."""

    seconds: float
    source: str


def cache_directives(value: str) -> dict[str, str | None]:
    """``Cache-Control`` directives, lower-cased names (RFC 9111 5.2); first one wins."""
    directives: dict[str, str | None] = {}
    for match in _DIRECTIVE.finditer(value[:_MAX_HEADER]):
        name = match.group(1).lower()
        if name not in directives:
            quoted, token = match.group(2), match.group(3)
            directives[name] = quoted if quoted is not None else token
    return directives


def _seconds(value: str | None) -> int | None:
    """A delta-seconds value (RFC 9111 1.2.2); ``None`` if not one."""
    if value is None or not (value.isascii() and value.isdigit()):
        return None
    return int(value[:12])


def _http_date(value: str | None) -> float | None:
    """An HTTP-date as a Unix time; ``None`` if absent or not a date."""
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip()[:64])
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return when.timestamp()


def _freshness(
    cache_control: str | None, expires: str | None, date: str | None, now: float
) -> tuple[float, str] | None:
    """The response's own freshness lifetime and its source; ``None`` if it sets none."""
    directives = cache_directives(cache_control) if cache_control else {}
    for name in ("no-store", "no-cache"):
        if name in directives:
            return 0.0, f"Cache-Control: {name}"
    for name in ("s-maxage", "max-age"):
        seconds = _seconds(directives.get(name))
        if seconds is not None:
            return float(seconds), f"Cache-Control: {name}={seconds}"
    if expires is not None:
        expires_at = _http_date(expires)
        if expires_at is None:  # RFC 9111 5.3: an invalid date means already expired
            return 0.0, "Expires (invalid: already expired)"
        origin = _http_date(date)
        return max(0.0, expires_at - (now if origin is None else origin)), "Expires"
    return None


def cache_lifetime(
    *,
    cache_control: str | None,
    expires: str | None,
    date: str | None,
    age: str | None,
    now: float,
    max_ttl: float,
    min_ttl: float,
) -> Lifetime:
    """How long a robots.txt response may be used (RFC 9309 2.4, RFC 9111 4.2).

    ``now`` is a Unix time (to compare with ``Expires`` and ``Date``);
    ``max_ttl`` is ``ROBOTSTXT_CACHE_TTL``, ``min_ttl`` is
    ``ROBOTSTXT_CACHE_MIN_TTL`` (not above ``max_ttl``).
    """
    fresh = _freshness(cache_control, expires, date, now)
    if fresh is None:
        return Lifetime(max_ttl, "ROBOTSTXT_CACHE_TTL (no cache directive)")
    seconds, source = fresh
    current_age = _seconds(age.strip() if age else None)
    if current_age and seconds > 0:
        seconds = max(0.0, seconds - current_age)
        source = f"{source}, Age: {current_age}"
    if seconds > max_ttl:
        return Lifetime(max_ttl, f"{source}, capped by ROBOTSTXT_CACHE_TTL (RFC 9309 2.4)")
    floor = min(min_ttl, max_ttl)
    if seconds < floor:
        return Lifetime(floor, f"{source}, raised to ROBOTSTXT_CACHE_MIN_TTL")
    return Lifetime(seconds, source)


def headers_lifetime(
    getlist: Callable[[bytes], list[bytes]], *, now: float, max_ttl: float, min_ttl: float
) -> Lifetime:
    """:func:`cache_lifetime` of a response's headers, given as their ``getlist``
    (Scrapy's ``Headers.getlist``): several lines of one header are joined."""

    def header(name: bytes) -> str | None:
        values = getlist(name)
        return ", ".join(value.decode("latin-1") for value in values) if values else None

    return cache_lifetime(
        cache_control=header(b"Cache-Control"),
        expires=header(b"Expires"),
        date=header(b"Date"),
        age=header(b"Age"),
        now=now,
        max_ttl=max_ttl,
        min_ttl=min_ttl,
    )

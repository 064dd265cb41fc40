"""Stored robots.txt fetches for tests: one factory of :class:`FetchRecord` values.

A record as a crawl of this version saves it after a robots.txt answered with
HTTP 200 and parsed (RFC 9309 2.3.1.1): its chain, status, body size and
digest, whether the size limit cut it, and that limit. Each test says only
what it is about: the site, the fetch time, the body, the lifetime.
"""

from __future__ import annotations

import hashlib

from scrapy_rfc9309.sites._store import FetchRecord

#: the site of a record when a test names none
SITE = "http://example.com:80"
#: a day, the longest lifetime RFC 9309 2.4 lets a copy be used for
DAY = 86_400.0


def fetch_record(
    fetched_at: float,
    body: bytes,
    *,
    site: str = SITE,
    expires_in: float = DAY,
) -> FetchRecord:
    """``site``'s robots.txt, ``body``, fetched at ``fetched_at`` (wall clock) with
    HTTP 200 and kept ``expires_in`` seconds, as a ``Cache-Control: max-age``
    said; saved by a crawl whose ``ROBOTSTXT_MAX_SIZE`` was the default."""
    return FetchRecord(
        site=site,
        fetched_at=fetched_at,
        chain=((f"{site}/robots.txt", 200),),
        kind="parsed",
        detail="HTTP 200",
        lifetime=f"Cache-Control: max-age={expires_in:.0f}",
        expires_at=fetched_at + expires_in,
        retry_after=False,
        size=len(body),
        sha256=hashlib.sha256(body).hexdigest(),
        status=200,
        truncated=False,
        max_size=512_000,
    )

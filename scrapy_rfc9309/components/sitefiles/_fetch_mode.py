"""``FetchMode``: how a site service gets each site's files: as a crawl, or one live attempt.

A crawl (:data:`CRAWL`) takes a fresh copy from the store when it has one,
saves each fetch there and in its record, defers an unreachable site and tries it again
(``ROBOTSTXT_UNREACHABLE_DEFER``), and keeps each outcome compacted.
``scrapy robotstxt`` (:data:`ONE_ATTEMPT`) asks for a live answer: each
site's robots.txt and tdmrep.json downloaded once, now, with no store read
or written, no record and no retry, the outcome of that one attempt classified as in a
crawl (RFC 9309 2.3.1.1 to 2.3.1.4), and kept whole so that the answer can
quote the file. Pure data, handed to the service when it is made.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CRAWL", "ONE_ATTEMPT", "FetchMode"]


@dataclass(frozen=True)
class FetchMode:
    """How a :class:`~._service.SiteService` fetches and keeps each site's files."""

    #: with ``ROBOTSTXT_STORE_URI``: a fresh stored copy is used instead of a
    #: download, and each fetch is saved; with ``ROBOTSTXT_RECORD_FILE``: each
    #: copy put in force is recorded; ``False``: neither is opened
    persist: bool = True
    #: an unreachable site is deferred and tried again, and Scrapy's
    #: RetryMiddleware retries as configured; ``False``: one attempt, its
    #: outcome final
    retry: bool = True
    #: outcomes kept compacted (a crawl's many sites); ``False``: whole, with
    #: the file's body, its groups and its warnings
    compact: bool = True
    #: what each tdmrep.json fetch came to (``HTTP 200, 2 rules``) is kept
    tdmrep_details: bool = False
    #: the crawl's lines at start-up are logged (the token obeyed, the identity
    #: warning); ``False``: the command, which says its own, does not repeat them
    start_lines: bool = True


#: A crawl's site service.
CRAWL = FetchMode()
#: ``scrapy robotstxt``'s: one live download of each file, nothing stored.
ONE_ATTEMPT = FetchMode(
    persist=False, retry=False, compact=False, tdmrep_details=True, start_lines=False
)

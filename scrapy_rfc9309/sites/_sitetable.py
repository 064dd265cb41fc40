"""The site table: each site's robots.txt outcome and the fetch in flight. Pure.

One state machine per site (scheme + host + port, RFC 9309 2.3), with the
current time passed in, so every rule is testable without a reactor. Look
up, single flight, the bound and pins are every per-site file's
(:class:`~._filetable.FileTable`); robots.txt adds stale copies and deferral:

* **look up**: a settled outcome is used until it expires (RFC 9309 2.4);
* **single flight**: the first caller that finds no fresh outcome starts the
  fetch; later callers join it as waiters, and every waiter gets the outcome
  exactly once, when the fetch settles or is abandoned;
* **stale copy**: when a refetch comes back unreachable, the copy fetched
  earlier stays in use (RFC 9309 2.4: "If the crawler cannot retrieve the
  file ... it MAY continue to use the cached version"), until the unreachable
  outcome's own expiry;
* **bounded**: settled outcomes beyond ``max_sites`` are evicted least
  recently used first; a fetch in flight is never evicted, nor a site
  *pinned* by requests still queued for it (they would find it unknown and
  fetch it again): fetches ahead of need start only while pinned settled
  sites leave room (:meth:`SiteTable.has_room`), so the bound holds;
* **released requests**: the requests a fetch released are decided by its
  outcome even once it has expired (no download loop), for one lifetime
  more, never past 24 h after the fetch (:func:`released_until`); then
  they wait for a new fetch;
* **deferral** (HTTP: The Definitive Guide ch. 9: on a temporary failure,
  defer visits until the robots.txt can be retrieved): while a site's
  robots.txt is unreachable, its requests may wait instead of being dropped,
  with attempts spaced by a doubling back-off (never sooner than the site's
  ``Retry-After``), up to a deadline set when the deferral starts; RFC 9309
  2.3.1.4 (assume complete disallow) holds meanwhile, as nothing is fetched.

No Scrapy import, no I/O, no clock of its own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeVar

from ._filetable import FileTable, Settled
from ._outcome import DISALLOW_ALL, Kind, SiteOutcome

__all__ = ["Deferral", "Settled", "SiteState", "SiteTable", "backoff", "outlived", "released_until"]

#: The first attempt after an unreachable robots.txt, in seconds, while its
#: site is deferred; each further attempt waits twice as long, up to
#: :data:`BACKOFF_MAX`.
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0


def backoff(attempt: int) -> float:
    """Seconds before the next attempt after the ``attempt``-th unreachable one (1-based)."""
    return min(BACKOFF_MAX, BACKOFF_FIRST * 2.0 ** min(max(attempt - 1, 0), 32))


class SiteState(enum.Enum):
    """What a request of a site can do now (see :meth:`SiteTable.state`)."""

    #: A fresh outcome is in force: the request can be decided.
    READY = "ready"
    #: A fetch is in flight (or waiting for a download slot): wait for it.
    PENDING = "pending"
    #: Unreachable, tried again later: wait (HTTP: The Definitive Guide ch. 9).
    DEFERRED = "deferred"
    #: Nothing fresh and nothing in flight: a fetch must start.
    UNKNOWN = "unknown"


@dataclass(slots=True)
class Deferral:
    """A site whose requests wait while its robots.txt is unreachable."""

    #: No request waits past this time: they are then decided (dropped, 2.3.1.4).
    deadline: float
    #: Unreachable attempts so far.
    attempts: int = 0
    #: When to try again; ``None``: no attempt fits before the deadline.
    retry_at: float | None = None

    @property
    def due(self) -> float:
        """When the caller must act: try again, or end the deferral."""
        return self.deadline if self.retry_at is None else self.retry_at


W = TypeVar("W")


#: The lifetime of a copy kept in force while its robots.txt is unreachable.
KEPT_LIFETIME = "the copy fetched earlier, kept while unreachable (RFC 9309 2.4)"


def keep_stale_copy(stale: SiteOutcome | None, fetched: SiteOutcome) -> SiteOutcome | None:
    """The earlier copy to keep in force instead of ``fetched``, if any.

    RFC 9309 2.4: while the robots.txt is unreachable, a copy cached earlier
    may still be used; an earlier outcome that disallows everything
    (unreachable, restricted, an internal error) is no copy. The kept
    copy lives as long as the unreachable outcome would have: it is tried
    again as soon.
    """
    if fetched.kind is not Kind.UNREACHABLE or stale is None:
        return None
    if stale.kind in DISALLOW_ALL:  # unreachable, restricted, an internal error
        return None
    return SiteOutcome(
        stale.kind,
        stale.robots,
        stale.detail,
        fetched.expires_at,
        stale.chain,
        KEPT_LIFETIME,
        sitemaps=stale.sitemaps,
        fetched_at=fetched.fetched_at,
    )


#: RFC 9309 2.4: a crawler SHOULD NOT use a cached robots.txt for more than 24
#: hours (unless it is unreachable), counted from its fetch.
RFC_MAX_AGE = 86_400.0
#: The least time, past its expiry, an outcome still decides the requests its
#: fetch released: with a lifetime of 0 s they are handed out and decided by
#: it, not sent back for a download each (no loop).
RELEASED_GRACE_MIN = 1.0


def released_until(expires_at: float, fetched_at: float | None) -> float:
    """Until when an outcome decides the requests its fetch released, expired or not.

    Requests that waited for a fetch are decided by its outcome even once it
    has expired, so that a short lifetime costs one download per need, never a
    loop; but not for ever (RFC 9309 2.4): for one lifetime past its expiry
    (``expires_at - fetched_at``, at least :data:`RELEASED_GRACE_MIN`), never
    past :data:`RFC_MAX_AGE` after its fetch, and never before its own expiry
    (a ``ROBOTSTXT_CACHE_TTL`` above 24 h keeps it that long, as it does a
    fresh one). A fetch time not known (``None``) counts as a lifetime of 0 s.
    Past this time the requests wait for a new fetch and are decided by it.
    """
    fetched = expires_at if fetched_at is None else min(fetched_at, expires_at)
    grace = max(expires_at - fetched, RELEASED_GRACE_MIN)
    return max(expires_at, min(expires_at + grace, fetched + RFC_MAX_AGE))


def outlived(outcome: SiteOutcome, now: float) -> bool:
    """Whether the requests ``outcome``'s fetch released are past
    :func:`released_until` at ``now``: they wait for a new fetch."""
    return now >= released_until(outcome.expires_at, outcome.fetched_at)


class SiteTable(FileTable[W, SiteOutcome]):
    """site -> settled outcome (LRU-bounded) and site -> fetch in flight, with
    robots.txt's stale copies (RFC 9309 2.4) and deferral of unreachable sites."""

    __slots__ = ("_deferrals", "_exhausted")

    def __init__(self, max_sites: int) -> None:
        super().__init__(max_sites)
        self._deferrals: dict[str, Deferral] = {}
        #: Sites whose deferral ran out while unreachable: not deferred again
        #: until their robots.txt is retrieved, so the bound holds whatever the
        #: unreachable outcome's lifetime.
        self._exhausted: set[str] = set()

    # -- looking up ----------------------------------------------------------------

    def offer_stale(self, site: str, copy: SiteOutcome) -> None:
        """A copy of the site's robots.txt from elsewhere (a store, after a restart)
        for the fetch in flight to keep if it comes back unreachable (RFC 9309
        2.4); the copy this table holds, if any, comes first."""
        if site in self._pending and self._pending[site] is None:
            self._pending[site] = copy

    def state(self, site: str, now: float) -> SiteState:
        """What a request of ``site`` can do at ``now``; O(1), marks the site used."""
        if site in self._pending:
            return SiteState.PENDING
        if site in self._deferrals:
            return SiteState.DEFERRED
        if self.fresh(site, now) is not None:
            return SiteState.READY
        return SiteState.UNKNOWN

    # -- single flight ---------------------------------------------------------------

    def settle(self, site: str, outcome: SiteOutcome) -> Settled[W, SiteOutcome]:
        """The fetch of ``site`` came to ``outcome``: store it (or keep the earlier
        copy, RFC 9309 2.4), hand back the waiters; a retrieved robots.txt ends
        the site's deferral.

        Raises ``KeyError`` if no fetch of ``site`` is in flight.
        """
        settled = super().settle(site, outcome)
        if settled.outcome.kind is not Kind.UNREACHABLE:
            self._deferrals.pop(site, None)
            self._exhausted.discard(site)
        return settled

    def _kept_copy(self, stale: SiteOutcome | None, fetched: SiteOutcome) -> SiteOutcome | None:
        return keep_stale_copy(stale, fetched)

    # -- deferral of unreachable sites --------------------------------------------

    def defer(
        self, site: str, now: float, limit: float, asked_until: float | None = None
    ) -> Deferral | None:
        """After an unreachable outcome of ``site`` was settled at ``now``: defer.

        Starts a deferral (its deadline ``limit`` seconds from ``now``) or
        continues the current one, and sets the next attempt: after the
        back-off, and never before ``asked_until`` (the site's ``Retry-After``).
        An attempt that would come after the deadline is not made. ``None``:
        no deferral (``limit`` is 0, or the deadline has passed; it is ended).
        """
        deferral = self._deferrals.get(site)
        if deferral is None:
            if limit <= 0 or site in self._exhausted:
                return None
            deferral = self._deferrals[site] = Deferral(now + limit)
        if now >= deferral.deadline:
            del self._deferrals[site]
            self._exhausted.add(site)
            return None
        deferral.attempts += 1
        retry_at = now + backoff(deferral.attempts)
        if asked_until is not None:
            retry_at = max(retry_at, asked_until)
        deferral.retry_at = retry_at if retry_at < deferral.deadline else None
        return deferral

    def refuse_deferral(self, site: str, now: float, limit: float, asked_until: float) -> bool:
        """Whether ``site``'s ``Retry-After`` (``asked_until``) falls at or past the
        deadline its deferral has (or would have, starting at ``now``): no attempt
        can come within it, so waiting is pointless. The deferral is then ended
        (the site is not deferred again until its robots.txt is retrieved), and
        its requests are decided (dropped, RFC 9309 2.3.1.4) at once."""
        deferral = self._deferrals.get(site)
        if deferral is None:
            if limit <= 0 or site in self._exhausted:
                return False
            deadline = now + limit
        else:
            deadline = deferral.deadline
        if asked_until < deadline:
            return False
        self.end_deferral(site)
        return True

    def deferral(self, site: str) -> Deferral | None:
        return self._deferrals.get(site)

    def end_deferral(self, site: str) -> Deferral | None:
        """Stop deferring ``site`` (its deadline passed): its requests are decided,
        and it is not deferred again until its robots.txt is retrieved."""
        self._exhausted.add(site)
        return self._deferrals.pop(site, None)

    def end_all_deferrals(self) -> list[str]:
        """Stop deferring every site (the spider closes)."""
        sites, self._deferrals = list(self._deferrals), {}
        return sites

"""The site table: each site's robots.txt outcome and the fetch in flight. Pure.

One state machine per site (scheme + host + port, RFC 9309 2.3), with the
current time passed in, so every rule is testable without a reactor:

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
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from ._outcome import DISALLOW_ALL, Kind, SiteOutcome

__all__ = ["Deferral", "Settled", "SiteState", "SiteTable", "backoff"]

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


@dataclass(frozen=True, slots=True)
class Settled(Generic[W]):
    """What settling a fetch came to."""

    #: The outcome now in force: the new one, or the stale copy kept.
    outcome: SiteOutcome
    #: Everyone who waited on the fetch, in the order they joined.
    waiters: list[W]
    #: Whether an unreachable refetch left the earlier copy in use (RFC 9309 2.4).
    kept_stale: bool


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
    )


class SiteTable(Generic[W]):
    """site -> settled outcome (LRU-bounded) and site -> fetch in flight."""

    __slots__ = (
        "_deferrals",
        "_exhausted",
        "_pending",
        "_pinned_settled",
        "_pins",
        "_settled",
        "_waiters",
        "evictions",
        "max_sites",
    )

    def __init__(self, max_sites: int) -> None:
        if max_sites < 1:
            raise ValueError(f"max_sites must be at least 1, got {max_sites}")
        self.max_sites = max_sites
        self.evictions = 0
        self._settled: OrderedDict[str, SiteOutcome] = OrderedDict()
        #: site -> the copy its fetch in flight may replace (``None``: no earlier
        #: copy). Nothing else per pending site: a broad crawl that schedules
        #: its first requests at once has every site pending.
        self._pending: dict[str, SiteOutcome | None] = {}
        #: site -> who waits for its fetch in flight, in the order they joined;
        #: an entry only once someone waits (a fetch ahead of need has none)
        self._waiters: dict[str, list[W]] = {}
        self._deferrals: dict[str, Deferral] = {}
        #: Sites whose deferral ran out while unreachable: not deferred again
        #: until their robots.txt is retrieved, so the bound holds whatever the
        #: unreachable outcome's lifetime.
        self._exhausted: set[str] = set()
        #: site -> requests still queued for it (its outcome is not evicted)
        self._pins: dict[str, int] = {}
        #: how many settled sites are pinned
        self._pinned_settled = 0

    # -- looking up ----------------------------------------------------------------

    def fresh(self, site: str, now: float) -> SiteOutcome | None:
        """The site's outcome if it has not expired at ``now``; marks it recently used."""
        outcome = self._settled.get(site)
        if outcome is None or outcome.expires_at <= now:
            return None
        self._settled.move_to_end(site)
        return outcome

    def stale(self, site: str) -> SiteOutcome | None:
        """The site's outcome, expired or not (without marking it used)."""
        return self._settled.get(site)

    def offer_stale(self, site: str, copy: SiteOutcome) -> None:
        """A copy of the site's robots.txt from elsewhere (a store, after a restart)
        for the fetch in flight to keep if it comes back unreachable (RFC 9309
        2.4); the copy this table holds, if any, comes first."""
        if site in self._pending and self._pending[site] is None:
            self._pending[site] = copy

    def is_pending(self, site: str) -> bool:
        return site in self._pending

    def has_pending(self) -> bool:
        """Whether any fetch is in flight (O(1))."""
        return bool(self._pending)

    def state(self, site: str, now: float) -> SiteState:
        """What a request of ``site`` can do at ``now``; O(1), marks the site used."""
        if site in self._pending:
            return SiteState.PENDING
        if site in self._deferrals:
            return SiteState.DEFERRED
        if self.fresh(site, now) is not None:
            return SiteState.READY
        return SiteState.UNKNOWN

    @property
    def pending_sites(self) -> list[str]:
        return list(self._pending)

    def waiting(self) -> int:
        """How many waiters all fetches in flight have."""
        return sum(len(waiters) for waiters in self._waiters.values())

    # -- single flight ---------------------------------------------------------------

    def join(self, site: str, waiter: W) -> bool:
        """Wait for the site's fetch; ``True`` when the caller must start it.

        Call after :meth:`fresh` found nothing fresh. Exactly one caller per
        fetch gets ``True``; every waiter is handed back once, by
        :meth:`settle` or :meth:`abandon`.
        """
        started = site not in self._pending
        if started:
            self._pending[site] = self._settled.get(site)
        waiters = self._waiters.get(site)
        if waiters is None:
            self._waiters[site] = [waiter]
        else:
            waiters.append(waiter)
        return started

    def start(self, site: str) -> bool:
        """Start the site's fetch with nobody waiting yet (a fetch ahead of
        need); ``False`` if one is already in flight."""
        if site in self._pending:
            return False
        self._pending[site] = self._settled.get(site)
        return True

    def settle(self, site: str, outcome: SiteOutcome) -> Settled[W]:
        """The fetch of ``site`` came to ``outcome``: store it, hand back the waiters.

        Raises ``KeyError`` if no fetch of ``site`` is in flight.
        """
        stale = self._pending.pop(site)
        waiters = self._waiters.pop(site, [])
        kept = keep_stale_copy(stale, outcome)
        in_force = outcome if kept is None else kept
        if in_force.kind is not Kind.UNREACHABLE:
            self._deferrals.pop(site, None)
            self._exhausted.discard(site)
        if site not in self._settled and site in self._pins:
            self._pinned_settled += 1
        self._settled[site] = in_force
        self._settled.move_to_end(site)
        self._evict()
        return Settled(in_force, waiters, kept is not None)

    def _evict(self) -> None:
        """Evict the least recently used unpinned outcomes beyond ``max_sites``."""
        settled = self._settled
        while len(settled) > self.max_sites and len(settled) > self._pinned_settled:
            oldest = next(iter(settled))
            if oldest in self._pins:  # still awaited: kept, looked at again last
                settled.move_to_end(oldest)
                continue
            settled.popitem(last=False)
            self.evictions += 1

    # -- pins: requests still queued for a site -------------------------------------

    def pin(self, site: str) -> None:
        """A request of ``site`` was queued: its outcome is kept until it is handed out."""
        count = self._pins.get(site, 0)
        self._pins[site] = count + 1
        if not count and site in self._settled:
            self._pinned_settled += 1

    def unpin(self, site: str) -> bool:
        """A request of ``site`` left the queue; ``True`` when none is left (the
        site no longer takes room: its outcome may be evicted)."""
        count = self._pins.get(site)
        if count is None:
            return False
        if count > 1:
            self._pins[site] = count - 1
            return False
        del self._pins[site]
        if site in self._settled:
            self._pinned_settled -= 1
            self._evict()
        return True

    def pins(self, site: str) -> int:
        """Requests still queued for ``site``."""
        return self._pins.get(site, 0)

    def has_room(self, in_flight: int) -> bool:
        """Whether one more site may be fetched ahead of need: the pinned settled
        sites plus the ``in_flight`` fetches stay below ``max_sites``, so settling
        them never leaves more pinned outcomes than the bound."""
        return self._pinned_settled + in_flight < self.max_sites

    def admits(self, site: str, in_flight: int) -> bool:
        """Whether a fetch of ``site`` ahead of need may start now: it takes no new
        room (a pinned site already settled, fetched again), or there is room."""
        return (site in self._pins and site in self._settled) or self.has_room(in_flight)

    def waited_on(self, site: str) -> bool:
        """Whether someone waits for the site's fetch (not only fetched ahead)."""
        return site in self._waiters

    def abandon(self, site: str) -> list[W]:
        """Give up the site's fetch (cancelled): its waiters, nothing stored."""
        self._pending.pop(site, None)
        return self._waiters.pop(site, [])

    def abandon_all(self) -> list[tuple[str, list[W]]]:
        """Give up every fetch in flight (the spider closes)."""
        pending, self._pending = self._pending, {}
        waiters, self._waiters = self._waiters, {}
        return [(site, waiters.get(site, [])) for site in pending]

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

    def __len__(self) -> int:
        """Settled sites held."""
        return len(self._settled)

    def __contains__(self, site: str) -> bool:
        return site in self._settled

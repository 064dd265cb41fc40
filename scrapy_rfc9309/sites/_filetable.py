"""``FileTable``: each site's settled value of one per-site file, and the fetch in flight. Pure.

The rules every per-site file (robots.txt, tdmrep.json) is kept by, with the
current time passed in, so they are testable without a reactor:

* **look up**: a settled value is used until it expires (RFC 9309 2.4);
* **single flight**: the first caller that finds no fresh value starts the
  fetch; later callers join it as waiters, and every waiter is handed back
  exactly once, when the fetch settles or is abandoned;
* **bounded**: settled values beyond ``max_sites`` are evicted least
  recently used first; a fetch in flight is never evicted, nor a site
  *pinned* by requests still queued for it (they would find it unknown and
  fetch it again): fetches ahead of need start only while pinned settled
  sites leave room (:meth:`FileTable.has_room`), so the bound holds;
* **evictions remembered**: the last ``EVICTIONS_REMEMBERED * max_sites``
  evictions are kept as the site's hash -> its value's expiry (about 140
  bytes each), so a fetch that only an eviction made necessary is told
  (:meth:`FileTable.evicted_fresh`): a bound too small for the sites a crawl
  rotates through costs a download per request.

robots.txt's table (:class:`~._sitetable.SiteTable`) adds its stale copies
and deferral on top. No Scrapy import, no I/O, no clock of its own.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = ["EVICTIONS_REMEMBERED", "Expiring", "FileTable", "Settled"]

#: Evictions remembered, per site of ``max_sites``: a crawl rotating through up
#: to ``EVICTIONS_REMEMBERED + 1`` times the bound has its refetches told.
EVICTIONS_REMEMBERED = 4


class Expiring(Protocol):
    """A settled value: in force until ``expires_at`` (a monotonic time)."""

    @property
    def expires_at(self) -> float: ...


W = TypeVar("W")
V = TypeVar("V", bound=Expiring)


@dataclass(frozen=True, slots=True)
class Settled(Generic[W, V]):
    """What settling a fetch came to."""

    #: The value now in force: the new one, or the stale copy kept.
    outcome: V
    #: Everyone who waited on the fetch, in the order they joined.
    waiters: list[W]
    #: Whether an unreachable refetch left the earlier copy in use (RFC 9309 2.4).
    kept_stale: bool


class FileTable(Generic[W, V]):
    """site -> settled value (LRU-bounded, pins) and site -> fetch in flight (waiters ``W``)."""

    __slots__ = (
        "_evicted",
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
        self._settled: OrderedDict[str, V] = OrderedDict()
        #: site -> the copy its fetch in flight may replace (``None``: no earlier
        #: copy). Nothing else per pending site: a broad crawl that schedules
        #: its first requests at once has every site pending.
        self._pending: dict[str, V | None] = {}
        #: site -> who waits for its fetch in flight, in the order they joined;
        #: an entry only once someone waits (a fetch ahead of need has none)
        self._waiters: dict[str, list[W]] = {}
        #: site -> requests still queued for it (its value is not evicted)
        self._pins: dict[str, int] = {}
        #: how many settled sites are pinned
        self._pinned_settled = 0
        #: hash(site) -> when its evicted value would have expired, the last
        #: ``EVICTIONS_REMEMBERED * max_sites`` evictions (the oldest forgotten first)
        self._evicted: OrderedDict[int, float] = OrderedDict()

    # -- looking up ----------------------------------------------------------------

    def fresh(self, site: str, now: float) -> V | None:
        """The site's value if it has not expired at ``now``; marks it recently used."""
        value = self._settled.get(site)
        if value is None or value.expires_at <= now:
            return None
        self._settled.move_to_end(site)
        return value

    def stale(self, site: str) -> V | None:
        """The site's value, expired or not (without marking it used)."""
        return self._settled.get(site)

    def is_pending(self, site: str) -> bool:
        return site in self._pending

    def has_pending(self) -> bool:
        """Whether any fetch is in flight (O(1))."""
        return bool(self._pending)

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

    def settle(self, site: str, value: V) -> Settled[W, V]:
        """The fetch of ``site`` came to ``value``: store it, hand back the waiters.

        Raises ``KeyError`` if no fetch of ``site`` is in flight.
        """
        stale = self._pending.pop(site)
        waiters = self._waiters.pop(site, [])
        kept = self._kept_copy(stale, value)
        in_force = value if kept is None else kept
        if site not in self._settled and site in self._pins:
            self._pinned_settled += 1
        self._settled[site] = in_force
        self._settled.move_to_end(site)
        if self._evicted:
            self._evicted.pop(hash(site), None)
        self._evict()
        return Settled(in_force, waiters, kept is not None)

    def _kept_copy(self, stale: V | None, fetched: V) -> V | None:
        """The earlier copy to keep in force instead of ``fetched``: none here."""
        return None

    def _evict(self) -> None:
        """Evict the least recently used unpinned values beyond ``max_sites``."""
        settled = self._settled
        while len(settled) > self.max_sites and len(settled) > self._pinned_settled:
            oldest = next(iter(settled))
            if oldest in self._pins:  # still awaited: kept, looked at again last
                settled.move_to_end(oldest)
                continue
            _, value = settled.popitem(last=False)
            self.evictions += 1
            evicted = self._evicted
            evicted[hash(oldest)] = value.expires_at
            if len(evicted) > EVICTIONS_REMEMBERED * self.max_sites:
                evicted.popitem(last=False)

    def evicted_fresh(self, site: str, now: float) -> bool:
        """Whether ``site``'s value was evicted (by the bound) while it would still be
        in force at ``now``: fetching it again is a cost of the bound, not of its
        lifetime (RFC 9309 2.4). Forgets the eviction: asked once per fetch."""
        expires_at = self._evicted.pop(hash(site), None) if self._evicted else None
        return expires_at is not None and expires_at > now

    # -- pins: requests still queued for a site -------------------------------------

    def pin(self, site: str, requests: int = 1) -> None:
        """``requests`` of ``site`` were queued: its value is kept until they are
        handed out."""
        count = self._pins.get(site, 0)
        self._pins[site] = count + requests
        if not count and site in self._settled:
            self._pinned_settled += 1

    def unpin(self, site: str) -> bool:
        """A request of ``site`` left the queue; ``True`` when none is left (the
        site no longer takes room: its value may be evicted)."""
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
        them never leaves more pinned values than the bound."""
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

    def __len__(self) -> int:
        """Settled sites held."""
        return len(self._settled)

    def __contains__(self, site: str) -> bool:
        return site in self._settled

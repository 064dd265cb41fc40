"""A bounded per-site cache of robots.txt outcomes (RFC 9309 2.4). Pure.

Least recently used sites are evicted beyond ``max_sites``; an entry is
fresh until its ``expires_at``, after which the caller fetches again but may
still read the stale entry (RFC 9309 2.4: keep the cached copy while the
robots.txt is unreachable).
"""

from __future__ import annotations

from collections import OrderedDict

from ._outcome import SiteOutcome

__all__ = ["SiteCache"]


class SiteCache:
    """site -> :class:`SiteOutcome`, LRU-bounded."""

    __slots__ = ("_entries", "evictions", "max_sites")

    def __init__(self, max_sites: int) -> None:
        self._entries: OrderedDict[str, SiteOutcome] = OrderedDict()
        self.max_sites = max_sites
        self.evictions = 0

    def get(self, site: str) -> SiteOutcome | None:
        """The entry for ``site``, fresh or stale, marked as recently used."""
        outcome = self._entries.get(site)
        if outcome is not None:
            self._entries.move_to_end(site)
        return outcome

    def put(self, site: str, outcome: SiteOutcome) -> None:
        self._entries[site] = outcome
        self._entries.move_to_end(site)
        while len(self._entries) > self.max_sites:
            self._entries.popitem(last=False)
            self.evictions += 1

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, site: str) -> bool:
        return site in self._entries

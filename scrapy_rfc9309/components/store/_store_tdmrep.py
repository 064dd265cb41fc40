"""A crawl's tdmrep.json copies in the robots.txt store: the copy in force read
before a download, the lease on the download, the fetch kept. Scrapy glue.

When ``ROBOTSTXT_PURPOSES`` makes the crawl read a site's
``/.well-known/tdmrep.json`` (W3C TDMRep), the store keeps each fetch of it,
as it keeps a robots.txt fetch (RFC 9309 2.4: a cached copy may be used for
its lifetime). Before a download, the newest copy still in force is used.
Otherwise the process takes the store's lease on that download (the key
``tdmrep.json <site>``: the leases of robots.txt are keyed by the site), so
that processes of a cluster reaching a site together download it once:
while another process holds the lease, the store is looked at every
:data:`POLL_SECONDS` (woken at once when the store tells of its release)
until that process's copy appears or the lease can be taken. The lease is
given up after the fetch's copy is saved, so a process that waited finds it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.utils.defer import maybe_deferred_to_future

from ...sites._records import ReaderLimits, answer_of, exact_iso_time, stored_tdmrep_rules
from ._store_worker import Skipped

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

    from ...parser._tdmrep import TdmRep
    from ...sites._store import FetchRecord
    from .._clock import Clock
    from ._store_saves import StoreSaves
    from ._store_wakeups import ReleaseWakeups
    from ._store_worker import StoreWorker

    #: a copy in force: its rules, the monotonic time until which they hold, and
    #: what it came to (``stored copy fetched at T: HTTP 200, 2 rules``)
    StoredTdmRep = tuple[TdmRep, float, str]

__all__ = ["POLL_SECONDS", "TdmRepCopies", "lease_key"]

logger = logging.getLogger("scrapy_rfc9309.store")

#: While another process holds a site's tdmrep.json lease, its copy is looked for
#: this often (sooner when the store tells of the lease's release).
POLL_SECONDS = 0.5


def lease_key(site: str) -> str:
    """The store's lease key of ``site``'s tdmrep.json download (a robots.txt
    download's is the site itself)."""
    return f"tdmrep.json {site}"


class TdmRepCopies:
    """One crawl's tdmrep.json copies and leases in the store (see the module docstring)."""

    def __init__(
        self,
        worker: StoreWorker,
        saves: StoreSaves,
        wakeups: ReleaseWakeups,
        *,
        limits: ReaderLimits,
        holder: str,
        lease_seconds: float,
        clock: Clock,
        stats: StatsCollector,
        count_bad_record: Callable[[], None],
    ) -> None:
        self._worker = worker
        self._saves = saves
        self._wakeups = wakeups
        self._limits = limits
        self._holder = holder
        self._lease_seconds = lease_seconds
        #: the crawl's time: a copy's remaining lifetime is read by it
        self._clock = clock
        self._stats = stats
        self._count_bad_record = count_bad_record
        #: sites whose tdmrep.json lease this process holds
        self._held: set[str] = set()

    async def obtain(self, site: str) -> StoredTdmRep | None:
        """The site's copy in force in the store; ``None``: download it now, with
        the lease on its download taken (or a store that does not answer: the
        crawl then downloads it, as without a store). While another process
        holds the lease, waits for its copy, at most until the lease expires
        (``robotstxt/tdmrep/store_waited``, once per site and wait)."""
        key = lease_key(site)
        waited = False
        while self._worker.available():
            stored = await self.in_force(site)
            if stored is not None:
                return stored
            taken = await self._take(key)
            if taken is None:
                return None
            if taken:  # a copy saved just before: used, the lease given up
                stored = await self.in_force(site)
                if stored is not None:
                    self._saves.tdmrep(None, None, key)
                    return stored
                self._held.add(site)
                return None
            if not waited:
                waited = True
                self._stats.inc_value("robotstxt/tdmrep/store_waited")
                logger.debug(
                    "tdmrep.json of %s is being fetched by another process; waiting for it", site
                )
            await self._wakeups.nap(key, POLL_SECONDS)
        return None

    async def _take(self, key: str) -> bool | None:
        """Whether this process now holds the lease ``key``; ``None``: the store
        did not answer."""
        try:
            taken = await maybe_deferred_to_future(
                self._worker.call(
                    self._worker.store.acquire, key, self._holder, self._lease_seconds
                )
            )
        except Skipped:
            return None
        except Exception as exc:  # the store failed: said once per outage, the crawl goes on
            self._worker.failed("taking a tdmrep.json lease", exc)
            return None
        self._worker.worked()
        return bool(taken)

    async def in_force(self, site: str) -> StoredTdmRep | None:
        """The site's newest tdmrep.json copy in the store, when this crawl may use
        it now: its rules, the monotonic time until which they hold, and what it
        came to. ``None``: no copy, one past its lifetime or distrusted (counted in
        ``robotstxt/store/bad_record``), or a store that does not answer."""
        if not self._worker.available():
            return None
        now = self._clock.time()
        try:
            found = await maybe_deferred_to_future(
                self._worker.call(self._worker.store.tdmrep_at, site, now)
            )
        except Skipped:
            return None
        except Exception as exc:  # the store failed: said once per outage, the crawl goes on
            self._worker.failed("reading a tdmrep.json copy", exc)
            return None
        if found is None:
            return None
        record, body = found
        answer = answer_of(record, body, site, self._limits, now=now)
        if answer.problem is not None:
            self._count_bad_record()
            return None
        if answer.usable_until <= now:
            return None
        detail = f"stored copy fetched at {exact_iso_time(record.fetched_at)}: {record.detail}"
        expires = answer.expires_on(wall=now, monotonic=self._clock.monotonic())
        return stored_tdmrep_rules(answer), expires, detail

    def fetched(self, site: str, record: FetchRecord | None, body: bytes | None) -> None:
        """The download of ``site``'s tdmrep.json ended: what it came to kept
        (``None``: nothing to keep, an internal error or a URL the crawler
        cannot download), so that ``--at`` decides from it as the crawl did,
        then its lease given up (off the reactor, with the robots.txt saves).
        A store that fails meanwhile keeps none (the crawl goes on)."""
        release = lease_key(site) if site in self._held else None
        self._held.discard(site)
        if record is not None and not self._worker.available():
            record = None
        if record is not None or release is not None:
            self._saves.tdmrep(record, body, release)

    def close(self) -> None:
        """At close: the leases still held given up (their downloads cancelled)."""
        for site in list(self._held):
            self.fetched(site, None, None)

"""The robots.txt store's save path for a crawl: what each fetch came to saved,
and its lease given up, off the reactor, the fetches finished together saved
in one store call (the tdmrep.json fetches finished with them in a second).

The record keeps what was fetched (final status, the body as received up to
``ROBOTSTXT_MAX_SIZE``, whether that cut it, the limit used), so that each
crawl reading it derives its own answer (see ``sites._records``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred

from ...parser._robotstxt import RobotsTxt
from ...sites._outcome import Kind, SiteOutcome
from ...sites._records import dated_ahead, record_of
from ...sites._records import iso_time as utc_iso
from ...sites._sitetable import KEPT_LIFETIME
from ...sites._store import FetchRecord, RobotsStore
from .._clock import Clock

if TYPE_CHECKING:
    from ._store_worker import StoreWorker

__all__ = ["COPY_SEARCH_LIMIT", "StoreSaves", "last_copy_of", "utc_iso"]

#: Records of a site looked through, newest first, for a copy to keep in force
#: while its robots.txt is unreachable.
COPY_SEARCH_LIMIT = 50
#: Record kinds that are a copy of the site's robots.txt (RFC 9309 2.4): a
#: parsed file, or a 4xx (allow all); not an answer that disallows everything.
_COPY_KINDS = frozenset({Kind.PARSED.value, Kind.UNAVAILABLE.value})

_Pending = tuple[str, "FetchRecord | None", "bytes | None", bool]


def last_copy_of(
    store: RobotsStore, site: str, now: float | None = None
) -> tuple[FetchRecord, bytes | None] | None:
    """On the worker: the newest record of the site that is a copy of its
    robots.txt (RFC 9309 2.4), with its body; ``None``: none kept. A record
    dated after ``now`` (the wall clock; ``sites._records.dated_ahead``) is
    passed over: it cannot be trusted, and would hide the copies before it."""
    for record in store.history(site, COPY_SEARCH_LIMIT):
        if now is not None and dated_ahead(record, now):
            continue
        if record.kind in _COPY_KINDS:
            return store.at(site, record.fetched_at)
    return None


def kept_record(
    store: RobotsStore, site: str, fetched: FetchRecord
) -> tuple[FetchRecord, bytes | None]:
    """On the worker: the record of an unreachable fetch after which the copy
    fetched earlier stayed in force (RFC 9309 2.4): that copy (its kind, status,
    body and size limit, from the store), with this fetch's time, chain and
    lifetime, and a detail naming both. ``--at`` then gives the verdict the
    crawl applied. Without a copy in the store, the fetch as it came."""
    copy = last_copy_of(store, site, fetched.fetched_at)
    if copy is None:
        return fetched, None
    kept, body = copy
    return (
        fetched._replace(
            kind=kept.kind,
            detail=f"{fetched.detail}; the copy fetched at {utc_iso(kept.fetched_at)} "
            "kept in force (RFC 9309 2.4)",
            lifetime=KEPT_LIFETIME,
            retry_after=False,
            size=kept.size,
            sha256=kept.sha256,
            status=kept.status,
            truncated=kept.truncated,
            max_size=kept.max_size,
        ),
        body,
    )


class StoreSaves:
    """One crawl's saves to a store (see the module docstring)."""

    def __init__(self, worker: StoreWorker, holder: str, max_size: int, clock: Clock) -> None:
        self.worker = worker
        self.store: RobotsStore = worker.store
        self.holder = holder
        #: the crawl's ``ROBOTSTXT_MAX_SIZE``, kept with each record
        self.max_size = max_size
        self._reactor = worker.reactor
        #: the crawl's time: the record's fetch time and lifetime are read from it
        self.clock = clock
        #: fetches waiting for the next batch save: (site, record, body, lease held)
        self._to_save: list[_Pending] = []
        #: tdmrep.json fetches waiting for the next batch save: (record, body)
        self._tdmrep_to_save: list[tuple[FetchRecord, bytes | None]] = []
        #: the tdmrep.json leases to give up once the saves before them are made
        self._tdmrep_to_release: list[str] = []
        self._save_due: Any = None
        self._save_busy = False

    def fetched(
        self, site: str, outcome: SiteOutcome, *, save: bool, held: bool, kept: bool
    ) -> None:
        """Save what the fetch of ``site`` came to (``save``), and give its lease up
        (``held``). ``kept``: the fetch was unreachable and the copy fetched earlier
        stays in force; the record saved is that copy's (:func:`kept_record`)."""
        robots = outcome.robots
        body = robots.body if isinstance(robots, RobotsTxt) else None
        record = None
        if save:
            record = record_of(
                site,
                outcome,
                None,  # hashed off the reactor, by the store
                now=self.clock.time(),
                monotonic_now=self.clock.monotonic(),
                max_size=self.max_size,
            )
            if body is not None:
                record = record._replace(size=len(body))
        if kept and record is not None:  # rare: its own worker call, the copy read there
            self.worker.write("saving a record", 1, self._save_kept, site, record, held)
            return
        self.later(site, record, body, held)

    def _save_kept(self, site: str, record: FetchRecord, held: bool) -> None:
        """On the worker: the kept copy's record saved, the lease given up."""
        record, body = kept_record(self.store, site, record)
        self.store.save_many([(record, body)], [site] if held else [], self.holder)

    def tdmrep(
        self, record: FetchRecord | None, body: bytes | None, release: str | None = None
    ) -> None:
        """Keep a tdmrep.json fetch (``None``: nothing to keep), then give the lease
        ``release`` up (another process waits for the copy), with the next batch
        of saves (a store that does not batch: one worker call)."""
        tdmreps = [] if record is None else [(record, body)]
        releases = [] if release is None else [release]
        if not (self.store.batches or self.store.pipelines):
            what = "saving a tdmrep.json record" if tdmreps else "releasing a lease"
            self.worker.write(what, 0, self._save_batch, [], tdmreps, releases)
            return
        self._tdmrep_to_save.extend(tdmreps)
        self._tdmrep_to_release.extend(releases)
        if not self._save_busy and self._save_due is None:
            self._save_due = self._reactor.callLater(0, self._send_saves)

    def later(self, site: str, record: FetchRecord | None, body: bytes | None, held: bool) -> None:
        """Save (and give the lease up) off the reactor: with a batching store, the
        fetches finished in one reactor turn, or while the previous batch was on the
        worker, in one worker call and one transaction (a pipelining store: a few
        round trips)."""
        if not (self.store.batches or self.store.pipelines):
            what = "saving a record" if record is not None else "releasing a lease"
            self.worker.write(
                what, int(record is not None), self._save_batch, [(site, record, body, held)]
            )
            return
        self._to_save.append((site, record, body, held))
        if not self._save_busy and self._save_due is None:
            self._save_due = self._reactor.callLater(0, self._send_saves)

    def _send_saves(self) -> None:
        self._save_due = None
        batch, self._to_save = self._to_save, []
        tdmreps, self._tdmrep_to_save = self._tdmrep_to_save, []
        releases, self._tdmrep_to_release = self._tdmrep_to_release, []
        if not batch and not tdmreps and not releases:
            return
        records = sum(1 for item in batch if item[1] is not None)
        what = "saving a record" if records or tdmreps else "releasing a lease"
        done: Deferred[Any] = self.worker.write(
            what, records, self._save_batch, batch, tdmreps, releases
        )
        self._save_busy = True

        def finished(_: Any) -> None:
            self._save_busy = False
            waiting = self._to_save or self._tdmrep_to_save or self._tdmrep_to_release
            if waiting and self._save_due is None and not self.worker.closed:
                self._save_due = self._reactor.callLater(0, self._send_saves)

        done.addBoth(finished)

    def _save_batch(
        self,
        batch: list[_Pending],
        tdmreps: list[tuple[FetchRecord, bytes | None]] | None = None,
        releases: list[str] | None = None,
    ) -> None:
        """On the worker: one store call (the store hashes the bodies, off the
        reactor), one for the tdmrep.json fetches, then the tdmrep.json leases
        given up (after the copies another process waits for are saved)."""
        records = [(record, body) for _site, record, body, _held in batch if record is not None]
        release = [site for site, _record, _body, held in batch if held]
        if records or release:
            self.store.save_many(records, release, self.holder)
        if tdmreps:
            self.store.save_tdmrep_many(tdmreps)
        for key in releases or ():
            self.store.release(key, self.holder)

    def flush(self) -> None:
        """At close: the pending saves sent now, before the store closes."""
        if self._save_due is not None:
            self._save_due.cancel()
            self._save_due = None
        if self._to_save or self._tdmrep_to_save or self._tdmrep_to_release:
            self._send_saves()

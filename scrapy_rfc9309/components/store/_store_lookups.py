"""The robots.txt store's look-up path for a crawl: whether a site has a fresh
record in the store, else its lease taken, the sites met together asked in one
store call.

A store that batches (SQLite) is asked for the sites met in one reactor turn,
or while the previous batch was on the worker, in one call. The look-up and
lease of the sites met in a reactor turn (at most :data:`INLINE_SITES` per
turn) are made on the reactor with the store's non-waiting connection, which
never waits for a lock (a few hundredths of a millisecond a site); when it
meets one (another process writing, the worker saving), that batch goes to
the worker. A small store's fresh records are read once at open, and the
spider's first requests wait for that read (at most
:data:`PRELOAD_WAIT_SECONDS`). A store that pipelines (Redis) is asked for
the sites met together likewise, in one call of a few round trips, each
site's look-up given up past the store's own timeout; any other store one
site at a time, each call bounded likewise.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from ...sites._records import ReaderLimits, usable_until
from ...sites._store import FetchRecord, Looked, RobotsStore, StoreBusy, StoreError
from .._clock import Clock
from ._store_worker import Skipped, StoreWorker

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["INLINE_SITES", "PRELOAD_MAX_SITES", "PRELOAD_WAIT_SECONDS", "StoreLookups"]

logger = logging.getLogger("scrapy_rfc9309.store")

#: A store of at most this many sites has its fresh records read once at open.
PRELOAD_MAX_SITES = 5_000
#: Longest the spider's opening waits for the records read at open (beyond
#: it the crawl starts and the sites met meanwhile wait for the read).
PRELOAD_WAIT_SECONDS = 10.0
#: At most this many sites are looked up (and leased) on the reactor per turn:
#: the rest wait for the next turn, so one call stays well under a millisecond.
INLINE_SITES = 8
#: A look-up is given up this long past the store's own timeout.
_WAIT_MARGIN = 0.25

_Stored = tuple[FetchRecord, "bytes | None"]


class StoreLookups:
    """One crawl's look-ups in a store (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        worker: StoreWorker,
        limits: ReaderLimits,
        holder: str,
        lease_seconds: float,
        clock: Clock,
    ) -> None:
        self.crawler = crawler
        #: the crawl's time, handed down: a stored record is fresh by it
        self.clock = clock
        self.worker = worker
        self.store: RobotsStore = worker.store
        self.limits = limits
        self.holder = holder
        self.lease_seconds = lease_seconds
        self._reactor = worker.reactor
        #: a look-up is given up when not answered within the store's own
        #: timeout (``None``: waited for)
        self._wait_limit = self.store.timeout
        #: sites waiting for the next batch look-up, and what each is answered on
        self._lookups: dict[str, Deferred[Looked]] = {}
        #: sites waiting for the next look-up on the worker
        self._worker_lookups: dict[str, Deferred[Looked]] = {}
        self._look_busy = False
        self._look_due: Any = None
        #: the store's fresh records, read once at open (a small store)
        self._snapshot: dict[str, _Stored] = {}
        self._preloading = False
        self._preload_started = 0.0
        self._preload_waiters: list[Deferred[None]] = []
        #: the store's non-waiting connection, used on the reactor (``None``: none)
        self._inline: RobotsStore | None = None
        if not self.store.batches:
            return
        try:
            self._inline = self.store.non_waiting()
        except StoreError as exc:
            logger.debug("robots.txt store %s: no non-waiting connection: %s", self.store.uri, exc)
        if not self._empty():
            self._preloading = True
            self._preload_started = self.clock.monotonic()
            self.worker.call(self._read_fresh).addBoth(self._preloaded)
            crawler.signals.connect(self._spider_opening, signal=signals.spider_opened)

    def fresh(self, record: FetchRecord) -> bool:
        """Whether a stored record is still within its lifetime for this crawl."""
        return usable_until(record, self.limits) > self.clock.time()

    def _empty(self) -> bool:
        """A store known to keep no site (a new one): nothing to read at open."""
        if self._inline is None:
            return False
        try:
            return self._inline.site_count() == 0
        except StoreError:  # busy or failing: read at open on the worker, as without
            return False

    # -- the records read at open --------------------------------------------------

    def _read_fresh(self) -> dict[str, _Stored]:
        """On the worker, first of all: the store's fresh records (a small store)."""
        return self.store.fresh_records(PRELOAD_MAX_SITES, self.fresh)

    async def _spider_opening(self) -> None:
        """``spider_opened``: the spider's first requests wait for the records read
        at open (at most :data:`PRELOAD_WAIT_SECONDS`).

        Their sites are then known when the requests are scheduled, and they
        are handed out in the order the spider gave them, as in a crawl
        without a store. Scheduled before, every site's requests would wait
        for the read and go back into the queue a few sites at a time, each
        site's backlog in one run: a burst on each host in turn.
        """
        if not self._preloading:
            return
        opened: Deferred[None] = Deferred()
        waiter: Deferred[None] = Deferred()
        self._preload_waiters.append(waiter)

        def read(_: Any) -> None:
            if not opened.called:
                timer.cancel()
                opened.callback(None)

        def too_long() -> None:
            logger.info(
                "robots.txt store: its records still being read after %g s; the crawl "
                "starts, and the sites met meanwhile wait for the read",
                PRELOAD_WAIT_SECONDS,
            )
            opened.callback(None)

        timer = self.clock.call_later(PRELOAD_WAIT_SECONDS, too_long)
        waiter.addCallback(read)
        await maybe_deferred_to_future(opened)

    def _preloaded(self, result: Any) -> None:
        self._preloading = False
        if isinstance(result, Failure):
            if not isinstance(result.value, Skipped):
                self.worker.failed("reading its records at open", result.value)
        elif isinstance(result, dict):
            self._snapshot = result
            logger.info(
                "robots.txt store: %d sites with a fresh record read at open in %.2f s",
                len(result),
                self.clock.monotonic() - self._preload_started,
            )
        waiters, self._preload_waiters = self._preload_waiters, []
        for waiter in waiters:
            waiter.callback(None)

    async def from_snapshot(self, site: str) -> _Stored | None:
        """The site's record read at open, if still fresh."""
        if self._preloading:
            waiter: Deferred[None] = Deferred()
            self._preload_waiters.append(waiter)
            await maybe_deferred_to_future(waiter)
        found = self._snapshot.pop(site, None)
        if found is None or not self.fresh(found[0]):
            return None
        return found

    # -- look-ups --------------------------------------------------------------------

    async def look(self, site: str) -> Looked:
        """The site's fresh record, else its lease taken (``"lease"``), else
        ``"held"`` by another holder. ``Skipped``, ``StoreError``: not known."""
        if self.store.batches:
            return await maybe_deferred_to_future(self._look_batched(site))
        if self.store.pipelines:
            return await self._within_limit(site, self._look_batched(site))
        given_up = [False]
        call = self.worker.call(self._look_one, site, given_up=given_up)
        return await self._within_limit(site, call, given_up)

    def _look_one(self, site: str) -> Looked:
        """On the worker: one site's look-up."""
        result = self.store.look_many([site], self.holder, self.lease_seconds, self.fresh)
        if site not in result:  # a store breaking its contract: same as a failure
            raise StoreError(f"no answer for {site}")
        return result[site]

    async def _within_limit(
        self, site: str, call: Deferred[Looked], given_up: list[bool] | None = None
    ) -> Looked:
        """The site's look-up (``call``), given up (``Skipped``) when the worker does
        not answer within the store's timeout: a call in flight delays the ones
        behind it at most that long. A lease the given-up call still takes is
        given back."""
        if self._wait_limit is None:
            return await maybe_deferred_to_future(call)
        result: Deferred[Looked] = Deferred()
        limit = self._wait_limit

        def give_up() -> None:
            if given_up is not None:
                given_up[0] = True
            exc = Skipped(f"Redis at {self.store.uri} did not answer within {limit:g} s")
            if self.worker.available():  # no failure came back yet: this is one
                self.worker.failed("looking up a site", exc)
            result.errback(exc)

        # a little past the store's own timeout: the call in flight fails first
        timer = self.clock.call_later(limit + _WAIT_MARGIN, give_up)

        def done(value: Any) -> None:
            if not result.called:
                timer.cancel()
                if isinstance(value, Failure):
                    result.errback(value)
                else:
                    result.callback(value)
            elif isinstance(value, tuple) and value[0] == "lease":
                self.worker.write(
                    "releasing a lease", 0, self.store.save_many, [], [site], self.holder
                )
            elif isinstance(value, Failure) and not isinstance(value.value, Skipped):
                self.worker.failed("looking up a site", value.value)

        call.addBoth(done)
        return await maybe_deferred_to_future(result)

    def _look_batched(self, site: str) -> Deferred[Looked]:
        """The site's look-up, made with the others met in the same reactor turn,
        or while the previous batch was on the worker, in one worker call: the
        sites met at crawl start do not queue behind each other one round trip
        (and one transaction) each."""
        waiting = self._lookups.get(site) or self._worker_lookups.get(site)
        if waiting is not None:  # asked twice in one batch: the second asks again after
            later: Deferred[Looked] = Deferred()

            def again(result: Any) -> Any:
                self._reactor.callLater(0, lambda: self._look_batched(site).chainDeferred(later))
                return result

            waiting.addBoth(again)
            return later
        answer: Deferred[Looked] = Deferred()
        self._lookups[site] = answer
        if (self._inline is not None or not self._look_busy) and self._look_due is None:
            self._look_due = self._reactor.callLater(0, self._send_lookups)
        return answer

    def _send_lookups(self) -> None:
        self._look_due = None
        if self._inline is not None and self._lookups and not self.worker.closed:
            self._look_inline(self._inline)
        else:
            self._worker_lookups.update(self._lookups)
            self._lookups = {}
        if self._worker_lookups and not self._look_busy:
            self._send_to_worker()

    def _look_inline(self, inline: RobotsStore) -> None:
        """On the reactor: :data:`INLINE_SITES` of the waiting sites looked up and
        leased with the non-waiting connection; the rest in the next turn. A lock
        met (:class:`StoreBusy`) sends the batch to the worker, and so does a fresh
        record (its body is read there)."""
        sites = list(self._lookups)[:INLINE_SITES]
        batch = {site: self._lookups.pop(site) for site in sites}
        if self._lookups:
            self._look_due = self._reactor.callLater(0, self._send_lookups)
        if not self.worker.available():
            for answer in batch.values():
                answer.errback(Skipped("the store is left alone after a failure"))
            return
        try:
            result = inline.look_many(sites, self.holder, self.lease_seconds, self.fresh, False)
            missing = [site for site in sites if site not in result]
            if missing:  # a store breaking its contract: same as a failure
                raise StoreError(f"no answer for {len(missing)} sites, such as {missing[0]}")
        except StoreBusy as exc:
            logger.debug(
                "robots.txt store %s busy, looked up on its worker: %s", self.store.uri, exc
            )
            self._worker_lookups.update(batch)
            return
        except Exception as exc:
            for answer in batch.values():
                answer.errback(Failure(exc))  # type: ignore[no-untyped-call]
            return
        for site, answer in batch.items():
            state, found = result[site]
            if state == "fresh" and found is None:  # the body is read on the worker
                self._worker_lookups[site] = answer
            else:
                answer.callback((state, found))

    def _send_to_worker(self) -> None:
        batch, self._worker_lookups = self._worker_lookups, {}
        if not batch:
            return
        if self.worker.closed:  # the store closes (or closed) meanwhile: fetched without it
            for answer in batch.values():
                answer.errback(Skipped("the store is closed"))
            return
        self._look_busy = True
        call = self.worker.call(self._look_many, list(batch))

        def done(result: Any) -> None:
            self._look_busy = False
            for site, answer in batch.items():
                if isinstance(result, Failure):
                    answer.errback(result)
                else:
                    answer.callback(result[site])
            if (self._lookups or self._worker_lookups) and self._look_due is None:
                self._look_due = self._reactor.callLater(0, self._send_lookups)

        call.addBoth(done)

    def _look_many(self, sites: list[str]) -> dict[str, Looked]:
        """On the worker: the look-up of many sites in one store call."""
        result = self.store.look_many(sites, self.holder, self.lease_seconds, self.fresh)
        missing = [site for site in sites if site not in result]
        if missing:  # a store breaking its contract: same as a failure
            raise StoreError(f"no answer for {len(missing)} sites, such as {missing[0]}")
        return result

    async def take_lease(self, site: str) -> bool:
        """Take the site's lease; True also when the store cannot be asked (the
        site is then fetched without it)."""
        try:
            taken = await maybe_deferred_to_future(
                self.worker.call(self.store.acquire, site, self.holder, self.lease_seconds)
            )
        except Skipped:
            return True  # fetched without the store
        except Exception as exc:
            self.worker.failed("taking a lease", exc)
            return True  # fetched without the store
        return bool(taken)

    async def tell_waiting(self, site: str) -> None:
        """One INFO line per site after a while: who holds its lease, until when
        (as the store says: a lease it cannot read is said to be so, not guessed)."""
        lease = None
        try:
            lease = await maybe_deferred_to_future(self.worker.call(self.store.lease_of, site))
        except Exception as exc:
            logger.debug(
                "robots.txt store %s: reading the lease of %s: %s", self.store.uri, site, exc
            )
        if lease is None:
            logger.info(
                "waiting for another process fetching robots.txt of %s; its lease could "
                "not be read (gone, or without a usable expiry), looking again",
                site,
            )
            return
        holder, left = lease
        logger.info(
            "waiting for another process (%s) fetching robots.txt of %s; lease expires in %d s",
            holder,
            site,
            max(0, round(left)),
        )

    def close(self) -> None:
        """At close: the non-waiting connection is closed."""
        if self._look_due is not None and not self._lookups and not self._worker_lookups:
            self._look_due.cancel()
            self._look_due = None
        inline, self._inline = self._inline, None
        if inline is not None:
            try:
                inline.close()
            except StoreError as exc:
                logger.debug("robots.txt store %s: %s", self.store.uri, exc)

"""The robots.txt store seen from the crawl: the in-memory site table's back end.

With ``ROBOTSTXT_STORE_URI`` set, a site that is neither fresh in memory nor
being fetched is first looked up in the store: a record still fresh by the
wall clock is used without a download (RFC 9309 2.4: a cached robots.txt may
be used; HTTP: The Definitive Guide ch. 9: robots should not refetch it
before every access), across restarts and across processes sharing the
store. Otherwise the process takes the store's lease on the site's fetch,
downloads the file, saves the outcome and gives the lease up; while another
process holds the lease, the store is polled until its record appears or the
lease can be taken.

Every store call runs on one worker thread per store (the SQLite connection
is used on that thread only); results come back on the reactor, which never
waits for the store. One exception, for a store that offers a non-waiting
connection (SQLite): the look-up and lease of the sites met in a reactor
turn (at most :data:`INLINE_SITES` per turn) are made on the reactor with
that connection, which never waits for a lock (a few hundredths of a
millisecond a site); when it meets one (another process writing, the worker
saving), that batch goes to the worker as before. A site not in the store is
then fetched at once instead of after a worker round trip, which waits for
the interpreter lock while the reactor is busy.

The store's times are wall-clock (``time.time()``), the site table's
monotonic: converted here. A store that fails mid-crawl costs
one ERROR line per outage and the stat ``robotstxt/store/errors``; the crawl
goes on from memory (sites are fetched as without a store) and the store is
tried again after :data:`RETRY_SECONDS`.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import logging
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from ..parser._robotstxt import RobotsTxt
from ..sites._outcome import Kind, SiteOutcome
from ..sites._sitetable import KEPT_LIFETIME
from ..sites._store import (
    SETTING,
    FetchRecord,
    RobotsStore,
    StoreBusy,
    StoreError,
    open_store,
)
from ._settings import SettingError, StoreSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ._fetcher import RobotsTxtFetcher
    from ._settings import RobotsTxtSettings

__all__ = ["POLL_SECONDS", "RETRY_SECONDS", "StoreBridge", "open_bridge"]

logger = logging.getLogger("scrapy_rfc9309.store")

_T = TypeVar("_T")

#: While another process holds a site's lease, its record is looked for this often.
POLL_SECONDS = 0.5
#: After this long waiting on another process's lease, one INFO line says who holds it.
WAIT_NOTICE_SECONDS = 5.0
#: After a store failure, the store is left alone this long.
RETRY_SECONDS = 30.0
#: At close, pending store writes are waited for at most this long in all.
CLOSE_WAIT_SECONDS = 10.0
#: A store of at most this many sites has its fresh records read once at open.
PRELOAD_MAX_SITES = 5_000
#: Records of a site looked through, newest first, for a copy to keep in force
#: while its robots.txt is unreachable.
COPY_SEARCH_LIMIT = 50
#: Record kinds that are a copy of the site's robots.txt (RFC 9309 2.4): a
#: parsed file, or a 4xx (allow all); not an answer that disallows everything.
_COPY_KINDS = frozenset({Kind.PARSED.value, Kind.UNAVAILABLE.value})
#: Longest the spider's opening waits for the records read at open (beyond
#: it the crawl starts and the sites met meanwhile wait for the read).
PRELOAD_WAIT_SECONDS = 10.0


#: At most this many sites are looked up (and leased) on the reactor per turn:
#: the rest wait for the next turn, so one call stays well under a millisecond.
INLINE_SITES = 8

#: A look-up is given up this long past the store's own timeout.
_WAIT_MARGIN = 0.25


class _Skipped(StoreError):
    """A store call not made: the store is left alone after a failure, the caller
    stopped waiting for it, or the store was given up at close."""


def _daemon_thread(*args: Any, **kwargs: Any) -> threading.Thread:
    thread = threading.Thread(*args, **kwargs)
    thread.daemon = True  # a worker stuck in a hung call never holds the process's exit
    return thread


class _StorePool(ThreadPool):
    threadFactory = staticmethod(_daemon_thread)  # type: ignore[assignment]


def _describe(exc: BaseException) -> str:
    """An error for a log line, never empty."""
    return str(exc) or type(exc).__name__


def utc_iso(unix: float) -> str:
    """``2026-11-22T04:03:03Z``: a Unix time as UTC ISO 8601, for logs and the command."""
    try:
        moment = datetime.datetime.fromtimestamp(unix, tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{unix!r} (Unix time)"
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def record_of(site: str, outcome: SiteOutcome, body: bytes | None, now: float) -> FetchRecord:
    """The archive's record of a fetch that came to ``outcome`` (monotonic expiry) at
    wall-clock ``now``."""
    remaining = outcome.expires_at - time.monotonic()
    return FetchRecord(
        site=site,
        fetched_at=now,
        chain=tuple(outcome.chain),
        kind=outcome.kind.value,
        detail=outcome.detail,
        lifetime=outcome.lifetime,
        expires_at=now + max(0.0, remaining),
        retry_after=outcome.retry_after,
        size=0 if body is None else len(body),
        sha256=None if body is None else hashlib.sha256(body).hexdigest(),
    )


def usable_until(record: FetchRecord, settings: RobotsTxtSettings) -> float:
    """The Unix time until which a stored record may be used: its own ``expires_at``,
    never later than ``fetched_at`` plus the current settings' limit for its kind.

    RFC 9309 2.4: a cached robots.txt is not used for more than 24 hours (or the
    configured TTL), counted from when it was fetched, not from when a later run
    read it. The limits are the fetcher's: ``ROBOTSTXT_CACHE_TTL`` for parsed,
    unavailable and restricted answers, ``ROBOTSTXT_UNREACHABLE_TTL`` for an
    unreachable one, ``ROBOTSTXT_RETRY_AFTER_MAX`` for one with ``Retry-After``.
    A record of an unknown kind gets the shortest of them.
    """
    from ._fetcher import RETRY_AFTER_MIN

    try:
        kind: Kind | None = Kind(record.kind)
    except ValueError:
        kind = None
    if kind is Kind.UNREACHABLE:
        limit = (
            max(RETRY_AFTER_MIN, settings.retry_after_max)
            if record.retry_after
            else settings.unreachable_ttl
        )
    elif kind in (Kind.PARSED, Kind.UNAVAILABLE, Kind.RESTRICTED):
        limit = settings.cache_ttl
    else:
        limit = min(settings.cache_ttl, settings.unreachable_ttl, settings.retry_after_max)
    try:
        return float(min(record.expires_at, record.fetched_at + limit))
    except TypeError:
        return float("-inf")


def open_bridge(
    crawler: Crawler, settings: RobotsTxtSettings, fetcher: RobotsTxtFetcher
) -> StoreBridge | None:
    """The store ``ROBOTSTXT_STORE_URI`` names, opened at start-up; ``None`` when unset.

    A bad URI or a store that cannot be opened (corrupt, locked, unwritable)
    raises :class:`SettingError` naming the setting: the crawl does not start.
    """
    store_settings = StoreSettings.from_settings(crawler.settings)
    if store_settings.uri is None:
        return None
    try:
        store = open_store(
            store_settings.uri,
            data_dir=store_settings.data_dir,
            redis_url=store_settings.redis_url,
            redis_prefix=store_settings.redis_prefix,
        )
    except ValueError as exc:
        message = str(exc)
        if not message.startswith(SETTING):  # not ours: the system refused the name
            message = (
                f"{SETTING} = {without_password(store_settings.uri)!r}: the robots.txt "
                f"store cannot be opened: {message}"
            )
        raise SettingError(message) from None
    except StoreError as exc:
        raise SettingError(
            f"{SETTING} = {without_password(store_settings.uri)!r}: the robots.txt store "
            f"cannot be opened: {exc}"
        ) from None
    logger.info("robots.txt store: %s", store.uri)
    return StoreBridge(crawler, settings, store, fetcher, store_settings.lease_seconds)


class StoreBridge:
    """One crawl's use of a :class:`RobotsStore`, off the reactor thread."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        store: RobotsStore,
        fetcher: RobotsTxtFetcher,
        lease_seconds: float,
    ) -> None:
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor
        self._reactor = reactor
        self.crawler = crawler
        self.stats = crawler.stats
        self.settings = settings
        self.store = store
        self._fetcher = fetcher
        self.lease_seconds = lease_seconds
        #: who holds a lease, across processes and hosts
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        #: a store call is given up (the site fetched locally) when not answered
        #: within the store's own timeout (``None``: waited for)
        self._wait_limit: float | None = getattr(store, "timeout", None)
        #: set at close when the worker did not finish in time: nothing more runs on it
        self._abandoned = False
        #: store writes saving a record, not finished yet
        self._saving: set[Deferred[Any]] = set()
        #: a store with batch calls (``look_many``, ``save_many``): the sites met
        #: in one reactor turn are looked up, and the fetches finished in one turn
        #: saved, in one worker call (one transaction) each, not one call per site
        self._batched = callable(getattr(store, "look_many", None)) and callable(
            getattr(store, "save_many", None)
        )
        #: sites waiting for the next batch look-up, and what each is answered on
        self._lookups: dict[str, Deferred[tuple[str, tuple[FetchRecord, bytes | None] | None]]] = {}
        #: sites waiting for the next look-up on the worker
        self._worker_lookups: dict[
            str, Deferred[tuple[str, tuple[FetchRecord, bytes | None] | None]]
        ] = {}
        self._look_busy = False
        self._look_due: Any = None
        #: fetches waiting for the next batch save: (site, record, body, lease held)
        self._to_save: list[tuple[str, FetchRecord | None, bytes | None, bool]] = []
        self._save_due: Any = None
        self._save_busy = False
        #: records in batch saves not finished yet
        self._saving_records = 0
        #: the store's fresh records, read once at open (a small store): the sites
        #: met at crawl start are answered without a worker round trip each
        self._snapshot: dict[str, tuple[FetchRecord, bytes | None]] = {}
        self._preloading = False
        self._preload_started = 0.0
        self._preload_waiters: list[Deferred[None]] = []
        self._pool = _StorePool(minthreads=1, maxthreads=1, name="robotstxt-store")
        self._pool.start()
        self._shutdown_trigger: Any = reactor.addSystemEventTrigger(
            "during", "shutdown", self._stop_at_shutdown
        )
        #: sites whose lease this process holds
        self._held: set[str] = set()
        #: store writes not finished yet
        self._writes: set[Deferred[Any]] = set()
        #: monotonic time until which the store is left alone after a failure
        self._down_until = 0.0
        self._outage = False
        self._closed = False
        crawler.signals.connect(self.close, signal=signals.spider_closed)
        #: the store's non-waiting connection, used on the reactor (``None``: none)
        self._inline: Any = None
        opener = getattr(store, "non_waiting", None)
        if self._batched and callable(opener):
            try:
                self._inline = opener()
            except StoreError as exc:
                logger.debug("robots.txt store %s: no non-waiting connection: %s", store.uri, exc)
        if self._batched and callable(getattr(store, "fresh_records", None)) and not self._empty():
            self._preloading = True
            self._preload_started = time.monotonic()
            self._call(self._read_fresh).addBoth(self._preloaded)
            crawler.signals.connect(self._spider_opening, signal=signals.spider_opened)

    def _empty(self) -> bool:
        """A store known to keep no site (a new one): nothing to read at open."""
        if self._inline is None:
            return False
        try:
            return int(self._inline.site_count()) == 0
        except StoreError:  # busy or failing: read at open on the worker, as without
            return False

    # -- calls on the worker thread ----------------------------------------------

    def _call(
        self,
        fn: Callable[..., _T],
        *args: Any,
        skip: bool = True,
        given_up: list[bool] | None = None,
    ) -> Deferred[_T]:
        return deferToThreadPool(
            self._reactor, self._pool, self._guarded, skip, given_up, fn, *args
        )

    def _guarded(
        self, skip: bool, given_up: list[bool] | None, fn: Callable[..., _T], *args: Any
    ) -> _T:
        """On the worker: ``fn`` unless the store is to be left alone (``_Skipped``).

        A failure marks the store down here, on the worker, so that the calls
        queued behind it fail at once instead of each paying the timeout.
        """
        if self._abandoned:
            raise _Skipped("the store was given up at close")
        if given_up is not None and given_up[0]:
            raise _Skipped("no longer waited for")
        if skip and time.monotonic() < self._down_until:
            raise _Skipped("the store is left alone after a failure")
        try:
            return fn(*args)
        except Exception:
            self._down_until = max(self._down_until, time.monotonic() + RETRY_SECONDS)
            raise

    async def _within_limit(self, site: str) -> tuple[str, tuple[FetchRecord, bytes | None] | None]:
        """The site's look-up, given up (``_Skipped``) when the worker does not answer
        within the store's timeout: a call in flight delays the ones behind it at
        most that long. A lease the given-up call still takes is given back."""
        given_up = [False]
        call = self._call(self._look, site, given_up=given_up)
        if self._wait_limit is None:
            return await maybe_deferred_to_future(call)
        result: Deferred[tuple[str, tuple[FetchRecord, bytes | None] | None]] = Deferred()

        limit = self._wait_limit

        def give_up() -> None:
            given_up[0] = True
            exc = _Skipped(f"Redis at {self.store.uri} did not answer within {limit:g} s")
            if self.available():  # no failure came back yet: this is one
                self._failed("looking up a site", exc)
            result.errback(exc)

        # a little past the store's own timeout: the call in flight fails first
        timer = self._reactor.callLater(limit + _WAIT_MARGIN, give_up)

        def done(value: Any) -> None:
            if not result.called:
                timer.cancel()
                if isinstance(value, Failure):
                    result.errback(value)
                else:
                    result.callback(value)
            elif isinstance(value, tuple) and value[0] == "lease":
                self._write("releasing a lease", self._save_and_release, site, None, None, True)
            elif isinstance(value, Failure) and not isinstance(value.value, _Skipped):
                self._failed("looking up a site", value.value)

        call.addBoth(done)
        return await maybe_deferred_to_future(result)

    def available(self) -> bool:
        return not self._closed and time.monotonic() >= self._down_until

    def _failed(self, what: str, exc: BaseException) -> None:
        """A store call failed: the crawl goes on from memory; one ERROR per outage."""
        self.stats.inc_value("robotstxt/store/errors")
        self._down_until = time.monotonic() + RETRY_SECONDS
        if not self._outage:
            self._outage = True
            logger.error(
                "robots.txt store failed while %s: %s; going on without it (robots.txt "
                "kept in memory, fetched as without a store), tried again in %g s",
                what,
                _describe(exc),
                RETRY_SECONDS,
                extra={"spider": self.crawler.spider},
            )
        else:
            logger.debug(
                "robots.txt store %s still failing (%s): %s", self.store.uri, what, _describe(exc)
            )

    def _worked(self) -> None:
        if self._outage:
            self._outage = False
            logger.info("robots.txt store %s works again", self.store.uri)

    # -- before a fetch ----------------------------------------------------------------

    def _look(self, site: str) -> tuple[str, tuple[FetchRecord, bytes | None] | None]:
        """On the worker: the site's fresh record, else its lease (one trip)."""
        found = self.store.current(site)
        if found is not None and usable_until(found[0], self.settings) > time.time():
            return "fresh", found
        if self.store.acquire(site, self.holder, self.lease_seconds):
            # Another process may have saved the site and given its lease up
            # between the two calls: looked at again, under the lease.
            again = self.store.current(site)
            if again is not None and usable_until(again[0], self.settings) > time.time():
                self.store.release(site, self.holder)
                return "fresh", again
            return "lease", again or found
        return "held", found

    def _read_fresh(self) -> dict[str, tuple[FetchRecord, bytes | None]]:
        """On the worker, first of all: the store's fresh records (a small store)."""
        found: dict[str, tuple[FetchRecord, bytes | None]] = self.store.fresh_records(  # type: ignore[attr-defined]
            PRELOAD_MAX_SITES, lambda record: usable_until(record, self.settings) > time.time()
        )
        return found

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

        timer = self._reactor.callLater(PRELOAD_WAIT_SECONDS, too_long)
        waiter.addCallback(read)
        await maybe_deferred_to_future(opened)

    def _preloaded(self, result: Any) -> None:
        self._preloading = False
        if isinstance(result, Failure):
            if not isinstance(result.value, _Skipped):
                self._failed("reading its records at open", result.value)
        elif isinstance(result, dict):
            self._snapshot = result
            logger.info(
                "robots.txt store: %d sites with a fresh record read at open in %.2f s",
                len(result),
                time.monotonic() - self._preload_started,
            )
        waiters, self._preload_waiters = self._preload_waiters, []
        for waiter in waiters:
            waiter.callback(None)

    async def _from_snapshot(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        """The site's record read at open, if still fresh."""
        if self._preloading:
            waiter: Deferred[None] = Deferred()
            self._preload_waiters.append(waiter)
            await maybe_deferred_to_future(waiter)
        found = self._snapshot.pop(site, None)
        if found is None or usable_until(found[0], self.settings) <= time.time():
            return None
        return found

    def _look_batched(
        self, site: str
    ) -> Deferred[tuple[str, tuple[FetchRecord, bytes | None] | None]]:
        """The site's look-up (as :meth:`_look`), made with the others met in the
        same reactor turn, or while the previous batch was on the worker, in one
        worker call: the sites met at crawl start do not queue behind each other
        one round trip (and one transaction) each."""
        waiting = self._lookups.get(site) or self._worker_lookups.get(site)
        if waiting is not None:  # asked twice in one batch: the second asks again after
            later: Deferred[tuple[str, tuple[FetchRecord, bytes | None] | None]] = Deferred()

            def again(result: Any) -> Any:
                self._reactor.callLater(0, lambda: self._look_batched(site).chainDeferred(later))
                return result

            waiting.addBoth(again)
            return later
        answer: Deferred[tuple[str, tuple[FetchRecord, bytes | None] | None]] = Deferred()
        self._lookups[site] = answer
        if (self._inline is not None or not self._look_busy) and self._look_due is None:
            self._look_due = self._reactor.callLater(0, self._send_lookups)
        return answer

    def _send_lookups(self) -> None:
        self._look_due = None
        if self._inline is not None and self._lookups and not self._closed:
            self._look_inline()
        else:
            self._worker_lookups.update(self._lookups)
            self._lookups = {}
        if self._worker_lookups and not self._look_busy:
            self._send_to_worker()

    def _look_inline(self) -> None:
        """On the reactor: :data:`INLINE_SITES` of the waiting sites looked up and
        leased with the non-waiting connection; the rest in the next turn. A lock
        met (:class:`StoreBusy`) sends the batch to the worker, and so does a fresh
        record (its body is read there)."""
        sites = list(self._lookups)[:INLINE_SITES]
        batch = {site: self._lookups.pop(site) for site in sites}
        if self._lookups:
            self._look_due = self._reactor.callLater(0, self._send_lookups)
        if not self.available():
            for answer in batch.values():
                answer.errback(_Skipped("the store is left alone after a failure"))
            return
        try:
            result: dict[str, tuple[str, tuple[FetchRecord, bytes | None] | None]] = (
                self._inline.look_many(
                    sites,
                    self.holder,
                    self.lease_seconds,
                    lambda record: usable_until(record, self.settings) > time.time(),
                    False,
                )
            )
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
                answer.errback(Failure(exc))
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
        if self._closed:  # the store closes (or closed) meanwhile: fetched without it
            for answer in batch.values():
                answer.errback(_Skipped("the store is closed"))
            return
        self._look_busy = True
        call = self._call(self._look_many, list(batch))

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

    def _look_many(
        self, sites: list[str]
    ) -> dict[str, tuple[str, tuple[FetchRecord, bytes | None] | None]]:
        """On the worker: :meth:`_look` for many sites in one store call."""
        result: dict[str, tuple[str, tuple[FetchRecord, bytes | None] | None]] = (
            self.store.look_many(  # type: ignore[attr-defined]
                sites,
                self.holder,
                self.lease_seconds,
                lambda record: usable_until(record, self.settings) > time.time(),
            )
        )
        missing = [site for site in sites if site not in result]
        if missing:  # a store breaking its contract: same as a failure
            raise StoreError(f"no answer for {len(missing)} sites, such as {missing[0]}")
        return result

    async def obtain(self, site: str, request: Request | None) -> SiteOutcome | None:
        """The site's outcome from the store, without a download; ``None``: fetch it now.

        ``None`` comes with the site's lease taken, or with the store unusable
        (failed, closed): the site is then fetched as without a store. While
        another process holds the lease, waits for its record (polling every
        :data:`POLL_SECONDS`, never blocking the reactor), at most until its
        lease expires.
        """
        waited = False
        told = False
        started = time.monotonic()
        if self._batched and self.available():
            found = await self._from_snapshot(site)
            if found is not None:
                outcome = await self._outcome_of(site, *found, request)
                if outcome is not None:
                    return outcome
                if await self._take_lease(site):  # a record that cannot be used: fetched
                    self._held.add(site)
                    return None
        while self.available():
            try:
                if self._batched:
                    state, found = await maybe_deferred_to_future(self._look_batched(site))
                else:
                    state, found = await self._within_limit(site)
            except _Skipped as exc:  # the store left alone: fetched locally at once
                logger.debug("robots.txt store not asked about %s: %s", site, exc)
                return None
            except StoreError as exc:
                self._failed("looking up a site", exc)
                return None
            except Exception as exc:  # a store breaking its contract: same as a failure
                self._failed("looking up a site", exc)
                return None
            self._worked()
            if state == "fresh" and found is not None:
                outcome = await self._outcome_of(site, *found, request)
                if outcome is not None:
                    return outcome
                state = "lease" if await self._take_lease(site) else "held"
            if state == "lease":
                self._held.add(site)
                return None
            if not waited:
                waited = True
                self.stats.inc_value("robotstxt/store/waited")
                logger.debug(
                    "robots.txt of %s is being fetched by another process; waiting for it", site
                )
            if not told and time.monotonic() - started >= WAIT_NOTICE_SECONDS:
                told = True
                await self._tell_waiting(site)
            await _sleep(POLL_SECONDS)
        return None

    async def _tell_waiting(self, site: str) -> None:
        """One INFO line per site after a while: who holds its lease, until when."""
        lease_of = getattr(self.store, "lease_of", None)
        lease = None
        if callable(lease_of):
            try:
                lease = await maybe_deferred_to_future(self._call(lease_of, site))
            except Exception as exc:
                logger.debug(
                    "robots.txt store %s: reading the lease of %s: %s", self.store.uri, site, exc
                )
        holder, left = lease if lease else ("unknown", self.lease_seconds)
        logger.info(
            "waiting for another process (%s) fetching robots.txt of %s; lease expires in %d s",
            holder,
            site,
            max(0, round(left)),
        )

    async def _take_lease(self, site: str) -> bool:
        try:
            taken = await maybe_deferred_to_future(
                self._call(self.store.acquire, site, self.holder, self.lease_seconds)
            )
        except _Skipped:
            return True  # fetched without the store
        except Exception as exc:
            self._failed("taking a lease", exc)
            return True  # fetched without the store
        return bool(taken)

    async def _outcome_of(
        self,
        site: str,
        record: FetchRecord,
        body: bytes | None,
        request: Request | None,
        *,
        count: bool = True,
    ) -> SiteOutcome | None:
        """The outcome a stored record stands for; ``None`` if it cannot be used.

        Store contents are not trusted: a record of an unknown kind, a parsed
        one without its body, or one of another site is not used (the site is
        fetched); its lifetime is never longer than the settings allow now.
        """
        try:
            kind = Kind(record.kind)
        except ValueError:
            kind = Kind.INTERNAL_ERROR
        if (
            record.site != site
            or kind is Kind.INTERNAL_ERROR
            or (kind is Kind.PARSED and body is None)
        ):
            logger.warning(
                "robots.txt store %s: the record of %s cannot be used (%s, %s); fetching it",
                self.store.uri,
                site,
                record.kind,
                "no body" if body is None else f"{len(body)} bytes",
            )
            return None
        now = time.time()
        remaining = usable_until(record, self.settings) - now
        robots = None
        if kind is Kind.PARSED and body is not None:
            robots = await self._fetcher._parse(body)
            from ._fetcher import _send_robots_parsed
            from ._robotparser import RFC9309RobotParser

            await _send_robots_parsed(self.crawler, RFC9309RobotParser.from_robots(robots), request)
        outcome = SiteOutcome(
            kind,
            robots,
            record.detail,
            time.monotonic() + max(0.0, remaining),
            record.chain,
            record.lifetime,
            retry_after=record.retry_after,
        )
        if not count:
            return outcome
        self.stats.inc_value("robotstxt/store/loaded")
        logger.debug(
            "robots.txt for %s from the store, fetched at %s, expires in %s s",
            site,
            utc_iso(record.fetched_at),
            f"{round(max(0.0, remaining)):d}",
        )
        return outcome

    async def last_copy(self, site: str, request: Request | None) -> SiteOutcome | None:
        """The newest copy of the site's robots.txt the store keeps, expired or not;
        ``None`` if it keeps none (or fails).

        RFC 9309 2.4: while the robots.txt is unreachable, a crawler may keep
        using a copy cached earlier. Asked when a fetch comes back unreachable
        and this process holds no earlier copy (a restarted crawl): the copy
        is the newest record that is one (a parsed file, or a 4xx: allow all;
        not an unreachable or restricted answer). Its lifetime is the
        unreachable answer's, as for a copy held in memory.
        """
        if not self.available():
            return None
        try:
            found = await maybe_deferred_to_future(self._call(self._read_last_copy, site))
        except _Skipped:
            return None
        except Exception as exc:
            self._failed("reading an earlier copy", exc)
            return None
        if found is None:
            return None
        return await self._outcome_of(site, *found, request, count=False)

    def _read_last_copy(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        """On the worker: the newest record of the site that is a copy, with its body."""
        for record in self.store.history(site, COPY_SEARCH_LIMIT):
            if record.kind in _COPY_KINDS:
                return self.store.at(site, record.fetched_at)
        return None

    def _kept_record(self, site: str, fetched: FetchRecord) -> tuple[FetchRecord, bytes | None]:
        """On the worker: the record of an unreachable fetch after which the copy
        fetched earlier stayed in force (RFC 9309 2.4): that copy (its kind and
        body, from the store), with this fetch's time, chain and lifetime, and a
        detail naming both. ``--at`` then gives the verdict the crawl applied.
        Without a copy in the store, the fetch as it came."""
        copy = self._read_last_copy(site)
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
            ),
            body,
        )

    def _save_kept_and_release(
        self, site: str, record: FetchRecord | None, body: bytes | None, held: bool
    ) -> None:
        """On the worker: :meth:`_save_and_release` of the kept copy's record."""
        if record is not None:
            record, body = self._kept_record(site, record)
        self._save_and_release(site, record, body, held)

    # -- after a fetch -------------------------------------------------------------

    def fetched(self, site: str, outcome: SiteOutcome, *, kept: bool = False) -> None:
        """Save what the fetch of ``site`` came to, then give its lease up (off the reactor).

        An internal error, or a site this crawler cannot download, is not the site's
        answer: it is not saved. ``kept``:
        the fetch was unreachable and the copy fetched earlier stays in force;
        the record saved is that copy's (:meth:`_kept_record`).
        """
        robots = outcome.robots
        body = robots.body if isinstance(robots, RobotsTxt) else None
        now = time.time()
        save = outcome.kind not in (Kind.INTERNAL_ERROR, Kind.NOT_DOWNLOADABLE) and self.available()
        held = site in self._held
        self._held.discard(site)
        if not save and not held:
            return
        record = record_of(site, outcome, None, now) if save else None
        if record is not None and body is not None:
            record = record._replace(size=len(body))
        if kept and record is not None:  # rare: its own worker call, the copy read there
            self._write("saving a record", self._save_kept_and_release, site, record, None, held)
            return
        self._save_later(site, record, body, held)

    def abandoned(self, site: str) -> None:
        """The fetch of ``site`` was cancelled (the spider closes): its lease is given up."""
        if site in self._held:
            self._held.discard(site)
            self._save_later(site, None, None, True)

    def _save_later(
        self, site: str, record: FetchRecord | None, body: bytes | None, held: bool
    ) -> None:
        """Save (and give the lease up) off the reactor: with a batching store, the
        fetches finished in one reactor turn, or while the previous batch was on the
        worker, in one worker call and one transaction."""
        if not self._batched:
            what = "saving a record" if record is not None else "releasing a lease"
            self._write(what, self._save_and_release, site, record, body, held)
            return
        self._to_save.append((site, record, body, held))
        if not self._save_busy and self._save_due is None:
            self._save_due = self._reactor.callLater(0, self._send_saves)

    def _send_saves(self) -> None:
        self._save_due = None
        batch, self._to_save = self._to_save, []
        if not batch:
            return
        records = sum(1 for item in batch if item[1] is not None)
        what = "saving a record" if records else "releasing a lease"
        done = self._call(self._save_batch, batch)
        self._writes.add(done)
        self._saving_records += records
        self._save_busy = True

        def finished(result: Any) -> None:
            self._writes.discard(done)
            self._saving_records -= records
            self._save_busy = False
            if self._to_save and self._save_due is None and not self._closed:
                self._save_due = self._reactor.callLater(0, self._send_saves)
            if not isinstance(result, Failure):
                self._worked()
                if records:
                    self.stats.inc_value("robotstxt/store/saved", records)
            elif isinstance(result.value, _Skipped):
                logger.debug("robots.txt store %s: not %s: %s", self.store.uri, what, result.value)
            else:
                self._failed(what, result.value)

        done.addBoth(finished)

    def _save_batch(self, batch: list[tuple[str, FetchRecord | None, bytes | None, bool]]) -> None:
        """On the worker: hash the bodies (not on the reactor), then one store call."""
        records = [
            (
                record
                if body is None
                else record._replace(sha256=hashlib.sha256(body).hexdigest()),
                body,
            )
            for _site, record, body, _held in batch
            if record is not None
        ]
        release = [site for site, _record, _body, held in batch if held]
        self.store.save_many(records, release, self.holder)  # type: ignore[attr-defined]

    def _save_and_release(
        self, site: str, record: FetchRecord | None, body: bytes | None, held: bool
    ) -> None:
        """On the worker: save (hashing the body here, not on the reactor), then release."""
        try:
            if record is not None:
                if body is not None:
                    record = record._replace(sha256=hashlib.sha256(body).hexdigest())
                self.store.save(record, body)
        except StoreError:
            # The store failed (locked beyond its wait, say): giving the lease up
            # would wait as long again, so a write waits the store's bound once.
            # The lease expires, or is taken over at once by a crawl of this
            # host once this process has ended.
            raise
        except Exception:
            if held:  # the lease is still given up; the save's error is the one reported
                with contextlib.suppress(Exception):
                    self.store.release(site, self.holder)
            raise
        if held:
            self.store.release(site, self.holder)

    def _write(self, what: str, fn: Callable[..., None], *args: Any) -> None:
        saving = args[1] is not None
        done = self._call(fn, *args)
        self._writes.add(done)
        if saving:
            self._saving.add(done)

        def ok(_: Any) -> None:
            self._writes.discard(done)
            self._saving.discard(done)
            self._worked()
            if saving:
                self.stats.inc_value("robotstxt/store/saved")

        def failed(failure: Any) -> None:
            self._writes.discard(done)
            self._saving.discard(done)
            if isinstance(failure.value, _Skipped):
                logger.debug("robots.txt store %s: not %s: %s", self.store.uri, what, failure.value)
            else:
                self._failed(what, failure.value)

        done.addCallbacks(ok, failed)

    # -- at close ------------------------------------------------------------------

    async def close(self) -> None:
        """Finish the pending writes (waiting :data:`CLOSE_WAIT_SECONDS` at most), close."""
        if self._closed:
            return
        self._closed = True
        for site in list(self._held):
            self.abandoned(site)
        if self._save_due is not None:
            self._save_due.cancel()
            self._save_due = None
        if self._inline is not None:
            inline, self._inline = self._inline, None
            try:
                inline.close()
            except StoreError as exc:
                logger.debug("robots.txt store %s: %s", self.store.uri, exc)
        if self._to_save:  # the pending saves go before the store closes
            self._send_saves()
        closing = self._call(self.store.close, skip=False)
        pending = [*self._writes, closing]
        # One bound for all pending writes together (not one per write): the
        # list is not cancelled at the bound, so no write reports a cancellation.
        finished: Deferred[Any] = DeferredList(pending, consumeErrors=True)
        bounded: Deferred[bool] = Deferred()

        def at_bound() -> None:
            if not bounded.called:
                bounded.callback(False)

        timer = self._reactor.callLater(CLOSE_WAIT_SECONDS, at_bound)

        def all_done(_: Any) -> None:
            if not bounded.called:
                timer.cancel()
                bounded.callback(True)

        finished.addBoth(all_done)
        if await maybe_deferred_to_future(bounded):
            self._stop_pool()
            return
        # The worker is stuck in a call (Redis not answering): it is given up,
        # not joined; whatever is queued on it is not run.
        self._abandoned = True
        self.stats.inc_value("robotstxt/store/errors")
        logger.error(
            "robots.txt store %s did not answer within %g s at close: %d records not "
            "saved (%d store writes given up); closing without it",
            self.store.uri,
            CLOSE_WAIT_SECONDS,
            len(self._saving) + self._saving_records,
            len(self._writes),
            extra={"spider": self.crawler.spider},
        )
        self._stop_pool(join=False)

    def _stop_pool(self, *, join: bool = True) -> None:
        trigger, self._shutdown_trigger = self._shutdown_trigger, None
        if trigger is not None:
            self._reactor.removeSystemEventTrigger(trigger)
        if self._pool.started and join:
            self._pool.stop()

    def _stop_at_shutdown(self) -> None:
        self._shutdown_trigger = None
        if self._pool.started and not self._abandoned:
            self._pool.stop()


async def _sleep(seconds: float) -> None:
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))


def without_password(uri: str) -> str:
    """``uri`` for messages: a password in it (``redis://:secret@host``) replaced by ``***``."""
    scheme, sep, rest = uri.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return uri
    credentials, _, host = rest.partition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else f"{scheme}://***@{host}"

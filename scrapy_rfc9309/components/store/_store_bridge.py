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

A stored record is obeyed with this crawl's settings, not those of the crawl
that saved it (``sites._records``). The look-ups are made by
``_store_lookups``, the saves by ``_store_saves``, every store call on the
worker thread of ``_store_worker``. The store's times are wall-clock
(``time.time()``), the site table's monotonic: converted here. A store that
fails mid-crawl costs one ERROR line per outage and the stat
``robotstxt/store/errors``; the crawl goes on from memory (sites are fetched
as without a store) and the store is tried again after :data:`RETRY_SECONDS`.

Store contents are not trusted: a record that cannot be used (malformed, a
body that does not match its digest, dated after this crawl's clock, of
another site, ...) costs its site a fetch, never the store: one WARNING
each and ``robotstxt/store/bad_record``; so does a lease whose expiry cannot
be trusted (given the lease time by the store).
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future

from ...sites._outcome import Kind, SiteOutcome
from ...sites._records import ReaderLimits, answer_of
from ...sites._records import usable_until as _usable_until
from ...sites._store import FetchRecord, RobotsStore, StoreError
from ...sites._store_uri import SETTING, BadStoreURI, without_password
from .._clock import Clock
from ..settings._setting_values import SettingError
from ..settings._store_settings import StoreSettings
from ._store_lookups import INLINE_SITES, PRELOAD_MAX_SITES, PRELOAD_WAIT_SECONDS, StoreLookups
from ._store_saves import COPY_SEARCH_LIMIT, StoreSaves, last_copy_of, utc_iso
from ._store_tdmrep import TdmRepCopies
from ._store_wakeups import ReleaseWakeups
from ._store_worker import Skipped, StoreWorker

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from ...parser._robotstxt import RobotsTxt
    from ..settings._settings import RobotsTxtSettings

    #: parse a stored body and announce it (``robots_parsed``) for a request, or
    #: for the site's robots.txt when none: the fetcher's, as for a downloaded one
    ParseBody = Callable[[bytes, "Request | None", str], Awaitable[RobotsTxt]]

__all__ = [
    "BAD_RECORD_STAT",
    "COPY_SEARCH_LIMIT",
    "INLINE_SITES",
    "POLL_SECONDS",
    "PRELOAD_MAX_SITES",
    "PRELOAD_WAIT_SECONDS",
    "RETRY_SECONDS",
    "StoreBridge",
    "open_bridge",
    "usable_until",
    "utc_iso",
]

logger = logging.getLogger("scrapy_rfc9309.store")

#: While another process holds a site's lease, its record is looked for this often.
POLL_SECONDS = 0.5
#: After this long waiting on another process's lease, one INFO line says who holds it.
WAIT_NOTICE_SECONDS = 5.0
#: After a store failure, the store is left alone this long.
RETRY_SECONDS = 30.0
#: At close, pending store writes are waited for at most this long in all.
CLOSE_WAIT_SECONDS = 10.0
#: The stat counting the stored records (and leases) not trusted.
BAD_RECORD_STAT = "robotstxt/store/bad_record"


def usable_until(record: FetchRecord, settings: RobotsTxtSettings) -> float:
    """The Unix time until which a stored record may be used with ``settings``
    (see ``sites._records.usable_until``)."""
    return _usable_until(record, ReaderLimits.of(settings))


def open_bridge(
    crawler: Crawler, settings: RobotsTxtSettings, parse: ParseBody, clock: Clock
) -> StoreBridge | None:
    """The store ``ROBOTSTXT_STORE_URI`` names, opened at start-up; ``None`` when unset.

    A bad URI or a store that cannot be opened (corrupt, locked, unwritable)
    raises :class:`SettingError` naming the setting: the crawl does not start.
    """
    store_settings = StoreSettings.from_settings(crawler.settings)
    if store_settings.uri is None:
        return None
    try:
        store = store_settings.open()
    except BadStoreURI as exc:  # its message names the setting
        raise SettingError(str(exc)) from None
    except (ValueError, StoreError) as exc:  # the system refused the name, or the store failed
        raise SettingError(
            f"{SETTING} = {without_password(store_settings.uri)!r}: the robots.txt store "
            f"cannot be opened: {exc}"
        ) from None
    logger.info("robots.txt store: %s", store.uri)
    return StoreBridge(crawler, settings, store, parse, store_settings.lease_seconds, clock)


class StoreBridge:
    """One crawl's use of a :class:`RobotsStore`, off the reactor thread."""

    def __init__(
        self,
        crawler: Crawler,
        settings: RobotsTxtSettings,
        store: RobotsStore,
        parse: ParseBody,
        lease_seconds: float,
        clock: Clock,
    ) -> None:
        from twisted.internet import reactor

        self.crawler = crawler
        self.stats = crawler.stats
        self.settings = settings
        #: the crawl's time: a stored record's remaining lifetime is read by it
        self.clock = clock
        #: the limits a stored record is read with: this crawl's
        self.limits = ReaderLimits.of(settings)
        self.store = store
        self._parse = parse
        self.lease_seconds = lease_seconds
        #: who holds a lease, across processes and hosts
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        #: sites whose lease this process holds
        self._held: set[str] = set()
        self._worker = StoreWorker(crawler, store, reactor, RETRY_SECONDS, clock)
        # told on the thread that read the record: counted on the reactor's
        store.report_bad_records(
            lambda _site, _problem: reactor.callFromThread(self._count_bad_record)
        )
        self._saves = StoreSaves(self._worker, self.holder, settings.max_size, clock)
        crawler.signals.connect(self.close, signal=signals.spider_closed)
        self._lookups = StoreLookups(
            crawler, self._worker, self.limits, self.holder, lease_seconds, clock
        )
        #: waits for another process's fetch, woken when the store says it ended
        self._wakeups = ReleaseWakeups(store, reactor, clock)
        #: the sites' tdmrep.json copies and the leases on their downloads
        self.tdmrep = TdmRepCopies(
            self._worker,
            self._saves,
            self._wakeups,
            limits=self.limits,
            holder=self.holder,
            lease_seconds=lease_seconds,
            clock=clock,
            stats=self.stats,
            count_bad_record=self._count_bad_record,
        )

    def _count_bad_record(self) -> None:
        self.stats.inc_value(BAD_RECORD_STAT)

    def available(self) -> bool:
        """Whether the store is asked now (not closed, not left alone after a failure)."""
        return self._worker.available()

    # -- before a fetch ----------------------------------------------------------------

    async def obtain(
        self, site: str, request: Request | None, *, retrying: bool = False
    ) -> SiteOutcome | None:
        """The site's outcome from the store, without a download; ``None``: fetch it now.

        ``None`` comes with the site's lease taken, or with the store unusable
        (failed, closed): the site is then fetched as without a store. While
        another process holds the lease, waits for its record (polling every
        :data:`POLL_SECONDS`, never blocking the reactor), at most until its
        lease expires.

        ``retrying``: the site is deferred and this is its next attempt (HTTP:
        The Definitive Guide ch. 9): a stored unreachable record is no answer
        to it (it may be the very one the deferral waits to see replaced), so
        the site is fetched; another process's fresher reachable record is used.
        """
        waited = False
        told = False
        #: records found unusable already (each told once while waiting)
        refused: set[tuple[float, str | None]] = set()
        started = self.clock.monotonic()
        if self.store.batches and self.available():
            found = await self._lookups.from_snapshot(site)
            if found is not None and not (retrying and _unreachable(found[0])):
                outcome = await self._outcome_of(site, *found, request, refused=refused)
                if outcome is not None:
                    return outcome
                if await self._lookups.take_lease(site):  # a record not used: fetched
                    self._held.add(site)
                    return None
        while self.available():
            try:
                state, looked = await self._lookups.look(site)
            except Skipped as exc:  # the store left alone: fetched locally at once
                logger.debug("robots.txt store not asked about %s: %s", site, exc)
                return None
            except Exception as exc:  # a store breaking its contract: same as a failure
                self._worker.failed("looking up a site", exc)
                return None
            self._worker.worked()
            if state == "fresh" and looked is not None and retrying and _unreachable(looked[0]):
                state = "lease" if await self._lookups.take_lease(site) else "held"
            elif state == "fresh" and looked is not None:
                outcome = await self._outcome_of(site, *looked, request, refused=refused)
                if outcome is not None:
                    return outcome
                state = "lease" if await self._lookups.take_lease(site) else "held"
            if state == "lease":
                self._held.add(site)
                return None
            if not waited:
                waited = True
                self.stats.inc_value("robotstxt/store/waited")
                logger.debug(
                    "robots.txt of %s is being fetched by another process; waiting for it", site
                )
            if not told and self.clock.monotonic() - started >= WAIT_NOTICE_SECONDS:
                told = True
                await self._lookups.tell_waiting(site)
            await self._wakeups.nap(site, POLL_SECONDS)
        return None

    async def _outcome_of(
        self,
        site: str,
        record: FetchRecord,
        body: bytes | None,
        request: Request | None,
        *,
        count: bool = True,
        refused: set[tuple[float, str | None]] | None = None,
    ) -> SiteOutcome | None:
        """The outcome a stored record stands for to this crawl; ``None`` if it
        cannot be used (the site is then fetched).

        Store contents are not trusted: a record of an unknown kind, a parsed
        one without its body, one of another site, or one dated after this
        crawl's clock (``sites._records.dated_ahead``) is not used: one WARNING
        and ``robotstxt/store/bad_record`` (once per record in ``refused``, the
        records met already while this site waits). A record
        saved with other settings is read with this crawl's (``sites._records``):
        its lifetime is never longer than they allow, a 401/403 follows
        ``ROBOTSTXT_AUTH_DISALLOW``, and a body cut at a smaller
        ``ROBOTSTXT_MAX_SIZE`` is fetched again (RFC 9309 2.5).
        """
        answer = answer_of(record, body, site, self.limits, now=self.clock.time())
        if answer.problem is not None:
            seen = (record.fetched_at, record.sha256)
            if answer.damaged and refused is not None and seen in refused:
                pass  # told already while this site waits
            elif answer.damaged:
                if refused is not None:
                    refused.add(seen)
                self.stats.inc_value(BAD_RECORD_STAT)
                logger.warning(
                    "robots.txt store %s: the record of %s cannot be used (%s, %s, %s); "
                    "fetching it",
                    self.store.uri,
                    site,
                    record.kind,
                    "no body" if body is None else f"{len(body)} bytes",
                    answer.problem,
                )
            else:
                self.stats.inc_value("robotstxt/store/refetched")
                logger.debug(
                    "robots.txt store %s: the record of %s not used: %s; fetching it",
                    self.store.uri,
                    site,
                    answer.problem,
                )
            return None
        remaining = answer.usable_until - self.clock.time()
        robots = None
        if answer.kind is Kind.PARSED and answer.body is not None:
            # parsed and announced (robots_parsed) as a downloaded body is
            robots = await self._parse(answer.body, request, site)
        # its times on the monotonic clock, its age counted from its own fetch
        outcome = answer.outcome_now(
            robots, wall=self.clock.time(), monotonic=self.clock.monotonic()
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
            found = await maybe_deferred_to_future(
                self._worker.call(last_copy_of, self.store, site, self.clock.time())
            )
        except Skipped:
            return None
        except Exception as exc:
            self._worker.failed("reading an earlier copy", exc)
            return None
        if found is None:
            return None
        return await self._outcome_of(site, *found, request, count=False)

    # -- after a fetch -------------------------------------------------------------

    def fetched(self, site: str, outcome: SiteOutcome, *, kept: bool = False) -> None:
        """Save what the fetch of ``site`` came to, then give its lease up (off the reactor).

        An internal error, or a site this crawler cannot download, is not the site's
        answer: it is not saved. ``kept``:
        the fetch was unreachable and the copy fetched earlier stays in force;
        the record saved is that copy's.
        """
        save = outcome.kind not in (Kind.INTERNAL_ERROR, Kind.NOT_DOWNLOADABLE) and self.available()
        held = site in self._held
        self._held.discard(site)
        if save or held:
            self._saves.fetched(site, outcome, save=save, held=held, kept=kept)

    def abandoned(self, site: str) -> None:
        """The fetch of ``site`` was cancelled (the spider closes): its lease is given up."""
        if site in self._held:
            self._held.discard(site)
            self._saves.later(site, None, None, True)

    # -- at close ------------------------------------------------------------------

    async def close(self) -> None:
        """Finish the pending writes (waiting :data:`CLOSE_WAIT_SECONDS` at most), close."""
        if self._worker.closed:
            return
        self._worker.closed = True
        for site in list(self._held):
            self.abandoned(site)
        self.tdmrep.close()
        self._lookups.close()
        self._saves.flush()  # the pending saves go before the store closes
        await self._worker.close(CLOSE_WAIT_SECONDS)


def _unreachable(record: FetchRecord) -> bool:
    """Whether a stored record says the robots.txt was unreachable (RFC 9309 2.3.1.4)."""
    return record.kind == Kind.UNREACHABLE.value

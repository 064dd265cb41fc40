"""The Redis robots.txt store: one store shared by every crawler process of a cluster. Pure.

RFC 9309 2.4 lets a crawler cache a robots.txt; HTTP: The Definitive Guide
ch. 9 asks robots not to fetch it again before every access. A cluster of
crawler processes (scrapy-redis, or any set of processes crawling the same
sites) shares one Redis here, so that a site's robots.txt is downloaded once
for all of them, and every process reads the same version of it.

Keys, all under a prefix (``ROBOTSTXT_STORE_PREFIX``, default ``robotstxt:``)
so that several projects share one Redis, the site between braces (a Redis
Cluster hash tag: a site's keys share a slot, so that each call touches one
slot and the store works on Redis Cluster):

* ``{prefix}current:{<site>}``: the site's latest record (JSON), expiring by
  itself :data:`EXPIRY_GRACE` seconds after the record's own expiry;
* ``{prefix}archive:{<site>}``: the site's records, a sorted set scored by
  ``fetched_at`` (``history`` and ``at`` read it), the last N only with
  ``ROBOTSTXT_STORE_ARCHIVE = N``, none with ``"off"``;
* ``{prefix}bodies:{<site>}``: the site's distinct bodies, a hash of sha256 ->
  zlib-compressed body, those no kept record names removed at each save;
* ``{prefix}tdmrep:{<site>}`` and ``{prefix}tdmrep-bodies:{<site>}``: the
  site's tdmrep.json fetches and their bodies, kept as its archive is
  (``_redis_tdmrep``; a store written before they existed has none);
* ``{prefix}lease:{<site>}``: the process fetching the site's robots.txt,
  taken with ``SET key holder NX PX ms`` (an expired lease is gone, so the
  next ``SET NX`` takes it over), given up by a compare-and-delete script.

A save and a lease given up publish the site on ``{prefix}released:{site}``,
so that processes waiting for the site look again at once (polling remains
the fall-back). Keys of the first layout (``{prefix}current:{site}``,
``{prefix}archive:{site}``, ``{prefix}body:{sha256}``, without braces) are
still read, never written: they expire with nothing, delete them once every
record has been fetched again.

Every failure of Redis (refused connection, timeout, lost connection, an
error reply) raises ``StoreError``; the client reconnects by itself on the
next call once Redis is back. Store contents are not trusted: a record or a
body that does not decode, or whose digest does not match, is skipped with a
WARNING (the site is then fetched again and a good record saved over it); a
lease without expiry is given one (``_redis_leases``).

This module saves and looks up; the store composes the connection
(``_redis_connection``), the record layout and checked reads
(``_redis_records``), the leases (``_redis_leases``), the archive read
back (``_redis_archive``) and the Lua scripts sent by their digest
(``_redis_scripts``).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import redis

from ._redis_archive import RedisArchive
from ._redis_connection import DEFAULT_TIMEOUT, connect, public_uri
from ._redis_connection import cluster_client as cluster_client  # kept importable from here
from ._redis_connection import cluster_enabled as cluster_enabled
from ._redis_leases import RedisLeases
from ._redis_records import RedisKeys, RedisRecords, save_arguments
from ._redis_scripts import Scripts
from ._redis_tdmrep import RedisTdmRep
from ._store import (
    BadRecords,
    FetchRecord,
    Looked,
    RobotsStore,
    StoreError,
    describe_error,
)

__all__ = ["DEFAULT_PREFIX", "RedisStore", "open_redis_store", "public_uri"]

logger = logging.getLogger("scrapy_rfc9309.store")

_T = TypeVar("_T")

#: ``ROBOTSTXT_STORE_PREFIX``'s default.
DEFAULT_PREFIX = "robotstxt:"
#: seconds a current record is kept past its own expiry, then Redis drops it
EXPIRY_GRACE = 86_400.0

#: Save a record: ``KEYS`` current, archive, bodies (one site: one slot);
#: ``ARGV`` the record (JSON), its fetch time, its sha256 ('' without body),
#: the compressed body, the archive kept (-1 all, 0 none, N the last N), the
#: current key's time to live (ms), the site's channel and the site. The body is
#: written whether or not its sha256 is there already (a damaged one is
#: repaired). Bodies no kept record names are removed; without an archive the
#: bodies expire with the current record.
_SAVE = """
local sha, keep = ARGV[3], tonumber(ARGV[5])
if sha ~= '' then
    redis.call('HSET', KEYS[3], sha, ARGV[4])
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[6])
if keep ~= 0 then
    redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
end
if keep > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -keep - 1)
end
if keep == 0 then
    redis.call('DEL', KEYS[2])
end
if keep >= 0 then
    local wanted = {}
    if sha ~= '' then
        wanted[sha] = true
    end
    if keep > 0 then
        for _, raw in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
            local ok, record = pcall(cjson.decode, raw)
            if ok and type(record) == 'table' and type(record['sha256']) == 'string' then
                wanted[record['sha256']] = true
            end
        end
    end
    for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
        if not wanted[field] then
            redis.call('HDEL', KEYS[3], field)
        end
    end
    if keep == 0 then
        redis.call('PEXPIRE', KEYS[3], ARGV[6])
    end
end
redis.call('PUBLISH', ARGV[7], ARGV[8])
return 1
"""


class RedisStore(RobotsStore):
    """A robots.txt store in Redis (see the module docstring)."""

    #: look-ups and saves of many sites pipelined (:meth:`look_many`, :meth:`save_many`)
    pipelines = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = DEFAULT_TIMEOUT,
        client: redis.Redis | None = None,
        archive: int | None = None,
    ) -> None:
        """``archive`` (``ROBOTSTXT_STORE_ARCHIVE``): records kept per site, the
        current one included; ``None``: all, ``0``: none beyond the current one."""
        self.uri = public_uri(url)
        self.prefix = prefix
        self.archive = archive
        #: called with a site when another process saved it or gave its lease up
        self._listener: Any = None
        #: closed on purpose: the listener's lost connection is no news
        self._closing = False
        #: a Redis Cluster (found at open): scripts are not pipelined there
        self._redis, self.cluster = connect(url, timeout, client)
        self._keys = RedisKeys(prefix)
        #: where the records and leases not trusted are told
        self._bad = BadRecords(self.uri)
        #: every script, run by its digest (``_redis_scripts``)
        self._scripts = scripts = Scripts(self._redis)
        self._records = RedisRecords(self._redis, scripts, self._keys, self._bad, self.cluster)
        self._leases = RedisLeases(self._redis, scripts, self._keys, self._bad, self.cluster)
        self._archive = RedisArchive(self._redis, self._records, archive)
        self._tdmrep = RedisTdmRep(
            self._redis, scripts, self._keys, self._records, archive, EXPIRY_GRACE
        )
        self._save = scripts.register(_SAVE)

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        try:
            return fn()
        except StoreError:
            raise
        except (redis.RedisError, OSError, MemoryError) as exc:
            # the class, and the message bounded and printable (a failed pipeline
            # command is quoted with its arguments: compressed bodies)
            detail = describe_error(exc)
            raise StoreError(f"Redis at {self.uri}: {what} failed: {detail}") from exc

    # -- the RobotsStore interface ---------------------------------------------------------

    def current(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        return self._call("reading the current record", lambda: self._records.current(site))

    def save(self, record: FetchRecord, body: bytes | None) -> None:
        self._call("saving a record", lambda: self._save_pipelined([(record, body)], (), ""))

    def _save_args(self, record: FetchRecord, body: bytes | None) -> tuple[list[str], list[Any]]:
        # kept until EXPIRY_GRACE past its expiry, and at least that long after
        # this save (a copy kept in force may have expired long ago)
        _, args = save_arguments(record, body, EXPIRY_GRACE, self.archive)
        site = record.site
        keys = [self._keys.current(site), self._keys.archive(site), self._keys.bodies(site)]
        return keys, [*args, self._keys.channel(site), site]

    def _save_pipelined(
        self,
        records: Sequence[tuple[FetchRecord, bytes | None]],
        release: Iterable[str],
        holder: str,
    ) -> None:
        """Saves and leases given up in one round trip (a pipeline; each save one
        script, atomic on its site's slot, sent by its digest: ``_redis_scripts``)."""
        if self.cluster:  # Redis Cluster does not pipeline scripts: one call each there
            for record, body in records:
                keys, args = self._save_args(record, body)
                self._save(keys=keys, args=args)
            for site in release:
                self._leases.release(site, holder)
            return
        pipe = self._scripts.pipeline()
        for record, body in records:
            keys, args = self._save_args(record, body)
            self._scripts.queue(pipe, self._save, keys, args)
        for site in release:
            self._leases.release(site, holder, pipe)
        self._scripts.execute(pipe)

    def save_many(
        self,
        records: Sequence[tuple[FetchRecord, bytes | None]],
        release: Iterable[str],
        holder: str,
    ) -> None:
        """Save ``records`` and give up ``holder``'s leases on ``release``, pipelined."""
        self._call("saving a record", lambda: self._save_pipelined(records, list(release), holder))

    def look_many(
        self,
        sites: Sequence[str],
        holder: str,
        seconds: float,
        fresh: Callable[[FetchRecord], bool],
        bodies: bool = True,
    ) -> dict[str, Looked]:
        """The current records of ``sites`` with their bodies read in one round
        trip (a pipeline); then, for those without a fresh one, the leases taken,
        renewed or found held in one (a lease whose holder is gone is taken over
        site by site) and the records of the sites leased read again in one, as
        :meth:`~RobotsStore.look_found` does for one site."""
        unique = list(dict.fromkeys(sites))

        def run() -> dict[str, Looked]:
            found = self._records.current_many(unique)
            looked: dict[str, Looked] = {}
            need = []
            for site in unique:
                stored = found[site]
                if stored is not None and fresh(stored[0]):
                    looked[site] = ("fresh", stored)
                else:
                    need.append(site)
            taken = self._acquire_many(need, holder, seconds)
            # read again (told already: a record that cannot be used is not told twice)
            again = self._records.current_many([site for site in need if taken[site]], False)
            release = []
            for site in need:
                if not taken[site]:
                    looked[site] = ("held", found[site])
                elif (now := again[site]) is not None and fresh(now[0]):
                    release.append(site)
                    looked[site] = ("fresh", now)
                else:
                    looked[site] = ("lease", again[site] or found[site])
            if release:
                self._save_pipelined((), release, holder)
            return looked

        return self._call("reading the current records", run)

    def _acquire_many(self, sites: Sequence[str], holder: str, seconds: float) -> dict[str, bool]:
        """``holder``'s leases on ``sites`` taken in one round trip (renewed when
        ours, taken over when its holder is gone), as :meth:`acquire` does."""
        return self._leases.acquire_many(sites, holder, seconds)

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        return self._call("reading the history", lambda: self._archive.history(site, limit))

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        return self._call("reading the archive", lambda: self._archive.at(site, when))

    def save_tdmrep_many(self, records: Sequence[tuple[FetchRecord, bytes | None]]) -> None:
        self._call(
            "saving a tdmrep.json record", lambda: self._tdmrep.save_many(records, self.cluster)
        )

    def tdmrep_history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        return self._call("reading the history", lambda: self._tdmrep.history(site, limit))

    def tdmrep_at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        return self._call("reading the archive", lambda: self._tdmrep.at(site, when))

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        return self._call("taking a lease", lambda: self._leases.acquire(site, holder, seconds))

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""
        return self._call("reading a lease", lambda: self._leases.lease_of(site))

    def release(self, site: str, holder: str) -> None:
        self._call("releasing a lease", lambda: self._leases.release(site, holder))

    def report_bad_records(self, listener: Callable[[str, str], None] | None) -> None:
        """Tell ``listener(site, problem)`` of each record or lease not trusted."""
        self._bad.listener = listener

    def watch(self, callback: Callable[[str], None]) -> bool:
        """Call ``callback(site)``, on a thread of its own, each time a process
        saves a site's record or gives its lease up (Redis pub/sub), until
        :meth:`close`; ``False``: not subscribed (the caller polls). Each message
        is one site saved or released anywhere in the cluster."""
        if self._listener is not None:
            return True
        pattern = re.sub(r"([\\*?\[\]])", r"\\\1", self._keys.channel("")) + "*"

        def deliver(message: dict[str, Any]) -> None:
            data = message.get("data")
            if isinstance(data, bytes):
                callback(data.decode("utf-8", "replace"))

        def lost(exc: BaseException, pubsub: Any, thread: Any) -> None:
            if not self._closing:  # at close the connection is gone on purpose: nothing lost
                logger.debug("Redis at %s: no more release messages (%s); polling", self.uri, exc)
            thread.stop()
            with contextlib.suppress(Exception):
                pubsub.close()

        try:
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            pubsub.psubscribe(**{pattern: deliver})
            self._listener = pubsub.run_in_thread(
                sleep_time=1.0, daemon=True, exception_handler=lost
            )
        except (redis.RedisError, OSError) as exc:
            logger.debug("Redis at %s: cannot subscribe (%s); polling", self.uri, exc)
            return False
        return True

    @property
    def timeout(self) -> float | None:
        """How long one Redis call may wait for an answer (seconds; ``None``: no limit)."""
        pool = getattr(self._redis, "connection_pool", None)
        if pool is None:  # Redis Cluster: each node's pool, made alike
            pool = self._redis.get_nodes()[0].redis_connection.connection_pool
        value = pool.connection_kwargs.get("socket_timeout")
        return None if value is None else float(value)

    def close(self) -> None:
        self._closing = True
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.stop()
        self._call("closing", self._redis.close)

    def __repr__(self) -> str:
        return f"<RedisStore {self.uri} prefix={self.prefix!r}>"


def open_redis_store(
    url: str, *, prefix: str = DEFAULT_PREFIX, archive: int | None = None
) -> RedisStore:
    """The store at ``url`` (``redis://`` or ``rediss://``); ``StoreError`` when Redis
    cannot be reached."""
    return RedisStore(url, prefix=prefix, archive=archive)

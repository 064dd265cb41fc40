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
WARNING (the site is then fetched again and a good record saved over it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import re
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ._store import (
    FetchRecord,
    Looked,
    RobotsStore,
    StoreError,
    describe_error,
    holder_is_gone,
)

__all__ = ["DEFAULT_PREFIX", "RedisStore", "open_redis_store", "public_uri"]

logger = logging.getLogger("scrapy_rfc9309.store")

_T = TypeVar("_T")

#: ``ROBOTSTXT_STORE_PREFIX``'s default.
DEFAULT_PREFIX = "robotstxt:"
#: Seconds to connect, and to wait for a reply, unless the URL says otherwise
#: (``?socket_timeout=...&socket_connect_timeout=...``): a Redis that hangs
#: fails a call instead of holding it forever.
DEFAULT_TIMEOUT = 5.0
#: the largest body decompressed from Redis (hostile or damaged contents)
_MAX_BODY = 64 * 1024 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
#: how many archive entries ``at`` reads past undecodable ones
_AT_SCAN = 16
#: seconds a current record is kept past its own expiry, then Redis drops it
EXPIRY_GRACE = 86_400.0

#: Take the lease if it is the holder's own (renewing it); ``SET NX PX`` has
#: already failed, so another holder may have it.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 1
end
return 0
"""
#: Take a lease over from a holder known to be gone (compare-and-swap on the holder).
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""
#: Give the lease up only if the holder holds it (compare-and-delete), and say so
#: on ``ARGV[2]`` (the site's channel) with ``ARGV[3]`` (the site).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1
end
return 0
"""
#: Save a record: ``KEYS`` current, archive, bodies (one site: one slot);
#: ``ARGV`` the record (JSON), its fetch time, its sha256 ('' without body),
#: the compressed body, the archive kept (-1 all, 0 none, N the last N), the
#: current key's time to live (ms), the site's channel and the site. Bodies no
#: kept record names are removed; without an archive the bodies expire with
#: the current record.
_SAVE = """
local sha, keep = ARGV[3], tonumber(ARGV[5])
if sha ~= '' then
    redis.call('HSETNX', KEYS[3], sha, ARGV[4])
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


def public_uri(url: str) -> str:
    """``url`` for logs: without user name, password or query (which may hold a password)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return f"{url.split('://', 1)[0]}://(unreadable address)"
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))


def _encode(record: FetchRecord) -> str:
    return json.dumps(
        {
            "site": record.site,
            "fetched_at": record.fetched_at,
            "chain": [[url, status] for url, status in record.chain],
            "kind": record.kind,
            "detail": record.detail,
            "lifetime": record.lifetime,
            "expires_at": record.expires_at,
            "retry_after": bool(record.retry_after),
            "size": record.size,
            "sha256": record.sha256,
            "status": record.status,
            "truncated": record.truncated,
            "max_size": record.max_size,
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a string: {value!r}")
    return value


def _optional_int(data: dict[str, Any], key: str) -> int | None:
    """An added field (absent from a record saved by an earlier version: ``None``)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"bad {key} {value!r}")
    return value


def _optional_bool(data: dict[str, Any], key: str) -> bool | None:
    """An added field (absent from a record saved by an earlier version: ``None``)."""
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"bad {key} {value!r}")
    return value


def _decode(raw: bytes | str, site: str) -> FetchRecord:
    """A record read from Redis; ``ValueError`` unless it is a well-formed record of ``site``."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    chain = []
    for step in data["chain"]:
        if not isinstance(step, list) or len(step) != 2:
            raise ValueError(f"bad chain step {step!r}")
        url, status = step
        if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
            raise ValueError(f"bad status {status!r}")
        chain.append((_text(url), status))
    size = data["size"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"bad size {size!r}")
    sha = data["sha256"]
    if sha is not None and not (isinstance(sha, str) and _SHA256.match(sha)):
        raise ValueError(f"bad sha256 {sha!r}")
    if not isinstance(data["retry_after"], bool):
        raise ValueError(f"bad retry_after {data['retry_after']!r}")
    record = FetchRecord(
        site=_text(data["site"]),
        fetched_at=_number(data["fetched_at"]),
        chain=tuple(chain),
        kind=_text(data["kind"]),
        detail=_text(data["detail"]),
        lifetime=_text(data["lifetime"]),
        expires_at=_number(data["expires_at"]),
        retry_after=data["retry_after"],
        size=size,
        sha256=sha,
        status=_optional_int(data, "status"),
        truncated=_optional_bool(data, "truncated"),
        max_size=_optional_int(data, "max_size"),
    )
    if record.site != site:
        raise ValueError(f"a record of {record.site!r} under the key of {site!r}")
    return record


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
        try:
            self._redis: Any = client or redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                # One quick retry on a connection error: a connection that
                # Redis closed (a restart) is replaced; a Redis that is down
                # fails the call at once, one that hangs after one timeout.
                retry=Retry(
                    ExponentialBackoff(cap=0.2, base=0.05),
                    1,
                    supported_errors=(redis.ConnectionError,),
                ),
            )
        except (ValueError, TypeError) as exc:
            raise StoreError(f"cannot read the Redis address {self.uri}: {exc}") from exc
        try:
            self._redis.ping()
        except (redis.AuthenticationError, redis.exceptions.NoPermissionError) as exc:
            # Redis answered: a missing or wrong password (or user without the
            # right) is not an unreachable Redis.
            self._redis.close()
            raise StoreError(f"Redis at {self.uri} refused the credentials: {exc}") from exc
        except redis.ResponseError as exc:
            self._redis.close()
            if str(exc).startswith(("NOAUTH", "WRONGPASS", "NOPERM")):
                raise StoreError(f"Redis at {self.uri} refused the credentials: {exc}") from exc
            raise StoreError(f"Redis at {self.uri} answered with an error: {exc}") from exc
        except (redis.RedisError, OSError) as exc:
            self._redis.close()
            raise StoreError(f"cannot reach Redis at {self.uri}: {exc}") from exc
        #: a Redis Cluster (found at open): scripts are not pipelined there
        self.cluster = client is None and cluster_enabled(self._redis)
        if self.cluster:
            self._redis.close()
            self._redis = cluster_client(url, timeout, self.uri)
        self._renew = self._redis.register_script(_RENEW)
        self._release = self._redis.register_script(_RELEASE)
        self._take_over = self._redis.register_script(_TAKE_OVER)
        self._save = self._redis.register_script(_SAVE)

    # -- keys ------------------------------------------------------------------------

    def _current_key(self, site: str) -> str:
        return f"{self.prefix}current:{{{site}}}"

    def _archive_key(self, site: str) -> str:
        return f"{self.prefix}archive:{{{site}}}"

    def _bodies_key(self, site: str) -> str:
        return f"{self.prefix}bodies:{{{site}}}"

    def _lease_key(self, site: str) -> str:
        return f"{self.prefix}lease:{{{site}}}"

    def _channel(self, site: str) -> str:
        return f"{self.prefix}released:{site}"

    # the first layout (no hash tags), still read
    def _old_current_key(self, site: str) -> str:
        return f"{self.prefix}current:{site}"

    def _old_archive_key(self, site: str) -> str:
        return f"{self.prefix}archive:{site}"

    def _old_body_key(self, sha: str) -> str:
        return f"{self.prefix}body:{sha}"

    # -- plumbing --------------------------------------------------------------------

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

    def _decoded(self, raw: Any, site: str) -> FetchRecord | None:
        if raw is None:
            return None
        try:
            return _decode(raw, site)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            logger.warning(
                "Redis at %s: a record of %s does not decode (%s); ignored", self.uri, site, exc
            )
            return None

    def _body(self, record: FetchRecord, data: Any = None) -> tuple[bool, bytes | None]:
        """(usable, body): the record's body (``data``: as read already, compressed),
        checked against its size and digest."""
        if record.sha256 is None:
            return True, None
        if data is None:
            data = self._redis.hget(self._bodies_key(record.site), record.sha256)
        if data is None:  # the first layout
            data = self._redis.get(self._old_body_key(record.sha256))
        problem = "is missing"
        if isinstance(data, bytes):
            try:
                decompressor = zlib.decompressobj()
                body = decompressor.decompress(data, min(record.size, _MAX_BODY) + 1)
            except zlib.error as exc:
                problem = f"does not decompress ({exc})"
            else:
                if len(body) == record.size and hashlib.sha256(body).hexdigest() == record.sha256:
                    return True, body
                problem = "does not match its size and digest"
        logger.warning(
            "Redis at %s: the robots.txt body %s of %s %s; the record is ignored",
            self.uri,
            record.sha256[:12],
            record.site,
            problem,
        )
        return False, None

    def _with_body(self, record: FetchRecord | None) -> tuple[FetchRecord, bytes | None] | None:
        if record is None:
            return None
        usable, body = self._body(record)
        return (record, body) if usable else None

    # -- the RobotsStore interface ---------------------------------------------------------

    def current(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        def run() -> tuple[FetchRecord, bytes | None] | None:
            raw = self._redis.get(self._current_key(site))
            if raw is None:  # the first layout
                raw = self._redis.get(self._old_current_key(site))
            return self._with_body(self._decoded(raw, site))

        return self._call("reading the current record", run)

    def save(self, record: FetchRecord, body: bytes | None) -> None:
        self._call("saving a record", lambda: self._save_pipelined([(record, body)], (), ""))

    def _save_args(self, record: FetchRecord, body: bytes | None) -> tuple[list[str], list[Any]]:
        sha = None if body is None else hashlib.sha256(body).hexdigest()
        kept = record._replace(sha256=sha, size=0 if body is None else len(body))
        # kept until EXPIRY_GRACE past its expiry, and at least that long after
        # this save (a copy kept in force may have expired long ago)
        left = kept.expires_at - time.time()
        keep_for = EXPIRY_GRACE + (min(left, 10 * 365 * 86_400.0) if left > 0 else 0.0)
        site = record.site
        keys = [self._current_key(site), self._archive_key(site), self._bodies_key(site)]
        args: list[Any] = [
            _encode(kept),
            kept.fetched_at,
            sha or "",
            b"" if body is None else zlib.compress(body, 6),
            -1 if self.archive is None else self.archive,
            max(1, math.ceil(keep_for * 1000)),
            self._channel(site),
            site,
        ]
        return keys, args

    def _save_pipelined(
        self,
        records: Sequence[tuple[FetchRecord, bytes | None]],
        release: Iterable[str],
        holder: str,
    ) -> None:
        """Saves and leases given up in one round trip (a pipeline; each save one
        script, atomic on its site's slot)."""
        # Redis Cluster does not pipeline scripts: one call each there
        pipe = None if self.cluster else self._redis.pipeline(transaction=False)
        target = self._redis if pipe is None else pipe
        for record, body in records:
            keys, args = self._save_args(record, body)
            self._save(keys=keys, args=args, client=target)
        for site in release:
            self._release(
                keys=[self._lease_key(site)],
                args=[holder, self._channel(site), site],
                client=target,
            )
        if pipe is not None:
            pipe.execute()

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
        """The current records of ``sites`` and their bodies read in two round
        trips (pipelines); then, for those without a fresh one, the leases taken
        in one (``SET NX``; a lease found taken is renewed or taken over site by
        site) and the records of the sites leased read again, as
        :meth:`~RobotsStore.look_found` does for one site."""
        unique = list(dict.fromkeys(sites))

        def run() -> dict[str, Looked]:
            found = self._current_many(unique)
            looked: dict[str, Looked] = {}
            need = []
            for site in unique:
                stored = found[site]
                if stored is not None and fresh(stored[0]):
                    looked[site] = ("fresh", stored)
                else:
                    need.append(site)
            taken = self._acquire_many(need, holder, seconds)
            again = self._current_many([site for site in need if taken[site]])
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

    def _current_many(
        self, sites: Sequence[str]
    ) -> dict[str, tuple[FetchRecord, bytes | None] | None]:
        """The current records of ``sites`` with their bodies: two round trips."""
        if not sites:
            return {}
        pipe = self._redis.pipeline(transaction=False)
        for site in sites:
            pipe.get(self._current_key(site))
            pipe.get(self._old_current_key(site))
        raws = pipe.execute()
        records: dict[str, FetchRecord | None] = {}
        for number, site in enumerate(sites):
            raw = raws[2 * number] if raws[2 * number] is not None else raws[2 * number + 1]
            records[site] = self._decoded(raw, site)
        with_body = [
            (site, kept.sha256)
            for site, kept in records.items()
            if kept is not None and kept.sha256 is not None
        ]
        data: dict[str, Any] = {}
        if with_body:
            pipe = self._redis.pipeline(transaction=False)
            for site, sha in with_body:
                pipe.hget(self._bodies_key(site), sha)
            answers = pipe.execute()
            data = {site: raw for (site, _), raw in zip(with_body, answers, strict=True)}
        result: dict[str, tuple[FetchRecord, bytes | None] | None] = {}
        for site, found in records.items():
            if found is None:
                result[site] = None
                continue
            usable, body = self._body(found, data.get(site))
            result[site] = (found, body) if usable else None
        return result

    def _acquire_many(self, sites: Sequence[str], holder: str, seconds: float) -> dict[str, bool]:
        """``holder``'s leases on ``sites`` taken in one round trip where free; a
        lease found taken is asked again site by site (renewed when ours, taken
        over when its holder is gone), as :meth:`acquire` does."""
        if not sites:
            return {}
        ms = max(1, math.ceil(seconds * 1000))
        pipe = self._redis.pipeline(transaction=False)
        for site in sites:
            pipe.set(self._lease_key(site), holder, nx=True, px=ms)
        answers = pipe.execute()
        return {
            site: bool(answer) or self.acquire(site, holder, seconds)
            for site, answer in zip(sites, answers, strict=True)
        }

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        def run() -> list[FetchRecord]:
            count = max(0, int(limit))
            if not count:
                return []
            raws = self._archive_entries(site, "+inf", count)
            records = (self._decoded(raw, site) for raw in raws)
            kept = [record for record in records if record is not None]
            if not kept and self.archive == 0:  # no archive: the current record alone
                current = self._decoded(self._current_raw(site), site)
                kept = [] if current is None else [current]
            return kept

        return self._call("reading the history", run)

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        def run() -> tuple[FetchRecord, bytes | None] | None:
            for raw in self._archive_entries(site, when, _AT_SCAN):
                found = self._with_body(self._decoded(raw, site))
                if found is not None:
                    return found
            if self.archive == 0:  # no archive: the current record, if fetched by then
                current = self._with_body(self._decoded(self._current_raw(site), site))
                if current is not None and current[0].fetched_at <= when:
                    return current
            return None

        return self._call("reading the archive", run)

    def _current_raw(self, site: str) -> Any:
        raw = self._redis.get(self._current_key(site))
        return raw if raw is not None else self._redis.get(self._old_current_key(site))

    def _archive_entries(self, site: str, until: float | str, count: int) -> list[Any]:
        """The newest ``count`` archive entries fetched at or before ``until``, of
        both layouts, newest first."""
        scored: list[tuple[float, Any]] = []
        for key in (self._archive_key(site), self._old_archive_key(site)):
            rows = self._redis.zrevrangebyscore(
                key, until, "-inf", start=0, num=count, withscores=True
            )
            scored.extend((float(score), raw) for raw, score in cast("list[Any]", rows))
        scored.sort(key=lambda row: row[0], reverse=True)
        return [raw for _, raw in scored[:count]]

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        def run() -> bool:
            key = self._lease_key(site)
            ms = max(1, math.ceil(seconds * 1000))
            if self._redis.set(key, holder, nx=True, px=ms):
                return True
            if self._renew(keys=[key], args=[holder, ms]):
                return True
            other = self._redis.get(key)
            if other is None:
                return False
            old = other.decode("utf-8", "replace") if isinstance(other, bytes) else str(other)
            if holder_is_gone(old):  # a killed process of this host
                return bool(self._take_over(keys=[key], args=[other, holder, ms]))
            return False

        return self._call("taking a lease", run)

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""

        def run() -> tuple[str, float] | None:
            key = self._lease_key(site)
            other = self._redis.get(key)
            left = self._redis.pttl(key)
            if other is None or not isinstance(left, int) or left <= 0:
                return None
            text = other.decode("utf-8", "replace") if isinstance(other, bytes) else str(other)
            return text, left / 1000

        return self._call("reading a lease", run)

    def release(self, site: str, holder: str) -> None:
        self._call(
            "releasing a lease",
            lambda: self._release(
                keys=[self._lease_key(site)], args=[holder, self._channel(site), site]
            ),
        )

    def watch(self, callback: Callable[[str], None]) -> bool:
        """Call ``callback(site)``, on a thread of its own, each time a process
        saves a site's record or gives its lease up (Redis pub/sub), until
        :meth:`close`; ``False``: not subscribed (the caller polls). Each message
        is one site saved or released anywhere in the cluster."""
        if self._listener is not None:
            return True
        pattern = re.sub(r"([\\*?\[\]])", r"\\\1", self._channel("")) + "*"

        def deliver(message: dict[str, Any]) -> None:
            data = message.get("data")
            if isinstance(data, bytes):
                callback(data.decode("utf-8", "replace"))

        def lost(exc: BaseException, pubsub: Any, thread: Any) -> None:
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
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.stop()
        self._call("closing", self._redis.close)

    def __repr__(self) -> str:
        return f"<RedisStore {self.uri} prefix={self.prefix!r}>"


def cluster_enabled(client: Any) -> bool:
    """Whether the Redis ``client`` talks to is a node of a Redis Cluster."""
    try:
        info = client.info("cluster")
    except (redis.RedisError, OSError):  # not allowed to ask: taken for one server
        return False
    return bool(isinstance(info, dict) and info.get("cluster_enabled") == 1)


def cluster_client(url: str, timeout: float, uri: str) -> Any:
    """A Redis Cluster client from one node's address (the others are discovered)."""
    from redis.cluster import RedisCluster

    try:
        return RedisCluster.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    except (redis.RedisError, OSError, ValueError, TypeError) as exc:
        raise StoreError(f"cannot reach the Redis Cluster at {uri}: {exc}") from exc


def open_redis_store(
    url: str, *, prefix: str = DEFAULT_PREFIX, archive: int | None = None
) -> RedisStore:
    """The store at ``url`` (``redis://`` or ``rediss://``); ``StoreError`` when Redis
    cannot be reached."""
    return RedisStore(url, prefix=prefix, archive=archive)

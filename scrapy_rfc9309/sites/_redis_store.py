"""The Redis robots.txt store: one store shared by every crawler process of a cluster. Pure.

RFC 9309 2.4 lets a crawler cache a robots.txt; HTTP: The Definitive Guide
ch. 9 asks robots not to fetch it again before every access. A cluster of
crawler processes (scrapy-redis, or any set of processes crawling the same
sites) shares one Redis here, so that a site's robots.txt is downloaded once
for all of them, and every process reads the same version of it.

Keys, all under a prefix (``ROBOTSTXT_STORE_PREFIX``, default ``robotstxt:``)
so that several projects share one Redis:

* ``{prefix}current:{site}``: the site's latest record (JSON);
* ``{prefix}archive:{site}``: every record of the site, a sorted set scored
  by ``fetched_at`` (``history`` and ``at`` read it);
* ``{prefix}body:{sha256}``: each distinct body once, zlib-compressed;
* ``{prefix}lease:{site}``: the process fetching the site's robots.txt,
  taken with ``SET key holder NX PX ms`` (an expired lease is gone, so the
  next ``SET NX`` takes it over), given up by a compare-and-delete script.

Every failure of Redis (refused connection, timeout, lost connection, an
error reply) raises ``StoreError``; the client reconnects by itself on the
next call once Redis is back. Store contents are not trusted: a record or a
body that does not decode, or whose digest does not match, is skipped with a
WARNING (the site is then fetched again and a good record saved over it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import zlib
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ._store import FetchRecord, RobotsStore, StoreError, describe_error, holder_is_gone

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
#: Give the lease up only if the holder holds it (compare-and-delete).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
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

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = DEFAULT_TIMEOUT,
        client: redis.Redis | None = None,
    ) -> None:
        self.uri = public_uri(url)
        self.prefix = prefix
        try:
            self._redis: redis.Redis = client or redis.Redis.from_url(
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
        self._renew = self._redis.register_script(_RENEW)
        self._release = self._redis.register_script(_RELEASE)
        self._take_over = self._redis.register_script(_TAKE_OVER)
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

    # -- keys ------------------------------------------------------------------------

    def _current_key(self, site: str) -> str:
        return f"{self.prefix}current:{site}"

    def _archive_key(self, site: str) -> str:
        return f"{self.prefix}archive:{site}"

    def _body_key(self, sha: str) -> str:
        return f"{self.prefix}body:{sha}"

    def _lease_key(self, site: str) -> str:
        return f"{self.prefix}lease:{site}"

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

    def _body(self, record: FetchRecord) -> tuple[bool, bytes | None]:
        """(usable, body): the record's body, checked against its size and digest."""
        if record.sha256 is None:
            return True, None
        data = self._redis.get(self._body_key(record.sha256))
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
            return self._with_body(self._decoded(raw, site))

        return self._call("reading the current record", run)

    def save(self, record: FetchRecord, body: bytes | None) -> None:
        def run() -> None:
            sha = None if body is None else hashlib.sha256(body).hexdigest()
            kept = record._replace(sha256=sha, size=0 if body is None else len(body))
            encoded = _encode(kept)
            pipe = self._redis.pipeline(transaction=True)
            if body is not None and sha is not None:
                pipe.set(self._body_key(sha), zlib.compress(body, 6), nx=True)
            pipe.set(self._current_key(record.site), encoded)
            pipe.zadd(self._archive_key(record.site), {encoded: kept.fetched_at})
            pipe.execute()

        self._call("saving a record", run)

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        def run() -> list[FetchRecord]:
            count = max(0, int(limit))
            if not count:
                return []
            raws = self._redis.zrevrange(self._archive_key(site), 0, count - 1)
            records = (self._decoded(raw, site) for raw in cast("list[Any]", raws))
            return [record for record in records if record is not None]

        return self._call("reading the history", run)

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        def run() -> tuple[FetchRecord, bytes | None] | None:
            raws = self._redis.zrevrangebyscore(
                self._archive_key(site), when, "-inf", start=0, num=_AT_SCAN
            )
            for raw in cast("list[Any]", raws):
                found = self._with_body(self._decoded(raw, site))
                if found is not None:
                    return found
            return None

        return self._call("reading the archive", run)

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
            lambda: self._release(keys=[self._lease_key(site)], args=[holder]),
        )

    @property
    def timeout(self) -> float | None:
        """How long one Redis call may wait for an answer (seconds; ``None``: no limit)."""
        value = self._redis.connection_pool.connection_kwargs.get("socket_timeout")
        return None if value is None else float(value)

    def close(self) -> None:
        self._call("closing", self._redis.close)

    def __repr__(self) -> str:
        return f"<RedisStore {self.uri} prefix={self.prefix!r}>"


def open_redis_store(url: str, *, prefix: str = DEFAULT_PREFIX) -> RedisStore:
    """The store at ``url`` (``redis://`` or ``rediss://``); ``StoreError`` when Redis
    cannot be reached."""
    return RedisStore(url, prefix=prefix)

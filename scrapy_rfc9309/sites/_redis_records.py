"""A site's records in Redis: their keys, their JSON form, and reading them back checked. Pure.

The key layout (see :mod:`._redis_store`) puts a site's keys under the
store's prefix, the site between braces (a Redis Cluster hash tag); keys of
the first layout (no braces, one ``body:{sha256}`` key per body) are still
read. Store contents are not trusted: a record or a body that does not
decode, or whose digest does not match, is skipped with a WARNING, told to
the store's :class:`~._store.BadRecords` (the site is then fetched again and
a good record saved over it).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import zlib
from collections.abc import Sequence
from typing import Any

from ._redis_scripts import Scripts
from ._store import BadRecords, FetchRecord

__all__ = ["RedisKeys", "RedisRecords", "decode_record", "encode_record", "save_arguments"]

#: the largest body decompressed from Redis (hostile or damaged contents)
_MAX_BODY = 64 * 1024 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")

#: A site's current record (``KEYS[1]``) and the body it names in the bodies
#: hash (``KEYS[2]``), in one call: {} without a record, {record} without a
#: body found, else {record, its sha256 as read here, the compressed body}.
#: The record is checked in Python; the body is used only if the sha256 read
#: there is this one.
_CURRENT = """
local raw = redis.call('GET', KEYS[1])
if not raw then
    return {}
end
local ok, record = pcall(cjson.decode, raw)
if ok and type(record) == 'table' and type(record['sha256']) == 'string' then
    local body = redis.call('HGET', KEYS[2], record['sha256'])
    if body then
        return {raw, record['sha256'], body}
    end
end
return {raw}
"""


class RedisKeys:
    """The names of a site's keys under ``prefix``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def current(self, site: str) -> str:
        return f"{self.prefix}current:{{{site}}}"

    def archive(self, site: str) -> str:
        return f"{self.prefix}archive:{{{site}}}"

    def bodies(self, site: str) -> str:
        return f"{self.prefix}bodies:{{{site}}}"

    def tdmrep(self, site: str) -> str:
        """The site's tdmrep.json archive (a sorted set scored by ``fetched_at``)."""
        return f"{self.prefix}tdmrep:{{{site}}}"

    def tdmrep_bodies(self, site: str) -> str:
        """The bodies of the site's tdmrep.json archive (sha256 -> compressed body)."""
        return f"{self.prefix}tdmrep-bodies:{{{site}}}"

    def lease(self, site: str) -> str:
        return f"{self.prefix}lease:{{{site}}}"

    def channel(self, site: str) -> str:
        return f"{self.prefix}released:{site}"

    # the first layout (no hash tags), still read
    def old_current(self, site: str) -> str:
        return f"{self.prefix}current:{site}"

    def old_archive(self, site: str) -> str:
        return f"{self.prefix}archive:{site}"

    def old_body(self, sha: str) -> str:
        return f"{self.prefix}body:{sha}"


def encode_record(record: FetchRecord) -> str:
    """``record`` as the JSON text kept in Redis."""
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


def decode_record(raw: bytes | str, site: str) -> FetchRecord:
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


class RedisRecords:
    """Reads a site's records and their bodies from Redis, checked (see the module
    docstring). Redis errors are the caller's to report."""

    def __init__(
        self, client: Any, scripts: Scripts, keys: RedisKeys, bad: BadRecords, cluster: bool
    ) -> None:
        """``cluster``: a Redis Cluster client (scripts are not pipelined there)."""
        self._redis = client
        self._scripts = scripts
        self.keys = keys
        self.bad = bad
        self._cluster = cluster
        self._current = scripts.register(_CURRENT)

    def decoded(self, raw: Any, site: str, report: bool = True) -> FetchRecord | None:
        """The record ``raw`` (``None``: no record, or one that does not decode,
        told when ``report``)."""
        if raw is None:
            return None
        try:
            return decode_record(raw, site)
        except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as exc:
            if report:
                shown = str(exc) if len(str(exc)) <= 200 else str(exc)[:200] + "..."
                self.bad.record(site, f"it does not decode: {type(exc).__name__}: {shown}")
            return None

    def body(
        self,
        record: FetchRecord,
        data: Any = None,
        report: bool = True,
        key: str | None = None,
        read: bool = False,
    ) -> tuple[bool, bytes | None]:
        """(usable, body): the record's body (``data``: as read already, compressed;
        ``read``: the hash was read already, ``None`` its answer), checked against
        its size and digest (one that is not told when ``report``); ``key``: the
        hash it is kept in (``None``: the robots.txt bodies)."""
        if record.sha256 is None:
            return True, None
        if data is None and not read:
            data = self._redis.hget(key or self.keys.bodies(record.site), record.sha256)
        if data is None and key is None:  # the first layout
            data = self._redis.get(self.keys.old_body(record.sha256))
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
        if report:
            self.bad.record(record.site, f"its body {record.sha256[:12]} {problem}")
        return False, None

    def with_body(
        self, record: FetchRecord | None, key: str | None = None
    ) -> tuple[FetchRecord, bytes | None] | None:
        """``record`` with its body (kept in ``key``; ``None``: the robots.txt
        bodies); ``None`` without a record or a usable body."""
        if record is None:
            return None
        usable, body = self.body(record, key=key)
        return (record, body) if usable else None

    def current_raw(self, site: str) -> Any:
        """The site's current record as kept (either layout); ``None``: none."""
        raw = self._redis.get(self.keys.current(site))
        return raw if raw is not None else self._redis.get(self.keys.old_current(site))

    def current(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        """The site's current record with its body (one round trip)."""
        return self.current_many([site])[site]

    def current_many(
        self, sites: Sequence[str], report: bool = True
    ) -> dict[str, tuple[FetchRecord, bytes | None] | None]:
        """The current records of ``sites`` with their bodies, in one round trip (a
        pipeline: ``_CURRENT`` and the first layout's key for each site; a record
        that cannot be used told when ``report``). On a Redis Cluster, one call
        per site (scripts are not pipelined there)."""
        if not sites:
            return {}
        pipe = self._scripts.pipeline()
        for site in sites:
            if not self._cluster:
                self._scripts.queue(pipe, self._current, self._current_keys(site), ())
            pipe.get(self.keys.old_current(site))
        if self._cluster:
            olds = pipe.execute()
            answers = [self._current(keys=self._current_keys(site)) for site in sites]
        else:
            both = self._scripts.execute(pipe)
            answers, olds = both[0::2], both[1::2]
        return {
            site: self._read(site, answer, old, report)
            for site, answer, old in zip(sites, answers, olds, strict=True)
        }

    def _current_keys(self, site: str) -> list[str]:
        return [self.keys.current(site), self.keys.bodies(site)]

    def _read(
        self, site: str, answer: Any, old: Any, report: bool
    ) -> tuple[FetchRecord, bytes | None] | None:
        """The site's record with its body from ``_CURRENT``'s ``answer`` (``old``:
        the first layout's record, read when there is none of this one)."""
        found = self.decoded(answer[0] if answer else old, site, report)
        if found is None:
            return None
        if not answer:  # the first layout's record: its body is read now
            usable, body = self.body(found, report=report)
        else:
            body_read = len(answer) == 3 and answer[1] == (found.sha256 or "").encode()
            data = answer[2] if body_read else None
            usable, body = self.body(found, data, report, read=len(answer) == 1)
        return (found, body) if usable else None


def save_arguments(
    record: FetchRecord, body: bytes | None, grace: float, archive: int | None
) -> tuple[FetchRecord, list[Any]]:
    """What a save script is given for ``record`` and its ``body`` (robots.txt's
    or tdmrep.json's): the record as kept (its body's SHA-256 and size), then
    the arguments: the encoded record, its fetch time, the SHA-256, the body
    compressed, the archive's bound (-1: none) and how long the keys are kept
    (ms): ``grace`` past the record's expiry, and at least ``grace`` from now (a
    copy kept in force may have expired long ago)."""
    sha = None if body is None else hashlib.sha256(body).hexdigest()
    kept = record._replace(sha256=sha, size=0 if body is None else len(body))
    left = kept.expires_at - time.time()
    keep_for = grace + (min(left, 10 * 365 * 86_400.0) if left > 0 else 0.0)
    return kept, [
        encode_record(kept),
        kept.fetched_at,
        sha or "",
        b"" if body is None else zlib.compress(body, 6),
        -1 if archive is None else archive,
        max(1, math.ceil(keep_for * 1000)),
    ]

"""The Redis store's tdmrep.json copies: each site's fetches saved, trimmed and read back. Pure.

W3C TDMRep: a site's ``/.well-known/tdmrep.json`` says which of its resources
reserve text and data mining rights. Its fetches are kept as the robots.txt
fetches are (the same record form, bounded by ``ROBOTSTXT_STORE_ARCHIVE``),
under the site's hash tag, so that ``scrapy robotstxt --at`` decides a
purpose from the copy in force at a time:

* ``{prefix}tdmrep:{<site>}``: the site's tdmrep.json records, a sorted set
  scored by ``fetched_at``; the last N with ``ROBOTSTXT_STORE_ARCHIVE = N``,
  the newest alone with ``"off"`` (then expiring a day past its lifetime, as
  a current robots.txt record does);
* ``{prefix}tdmrep-bodies:{<site>}``: their distinct bodies (sha256 ->
  zlib-compressed body), those no kept record names removed at each save.

A store written before these keys existed has none: it answers as one that
kept no tdmrep.json. Entries that do not decode, or whose body does not
match its digest, are passed over (one WARNING each).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ._redis_records import RedisKeys, RedisRecords, save_arguments
from ._redis_scripts import Scripts
from ._store import FetchRecord

__all__ = ["RedisTdmRep"]

#: how many entries ``at`` reads past undecodable ones
_AT_SCAN = 16

#: Save a tdmrep.json record: ``KEYS`` its archive and bodies (one slot);
#: ``ARGV`` the record (JSON), its fetch time, its sha256 ('' without body), the
#: compressed body, the archive kept (-1 all, 0 the newest only, N the last N)
#: and, with 0, the keys' time to live (ms). Bodies no kept record names go.
_SAVE = """
local sha, keep = ARGV[3], tonumber(ARGV[5])
if sha ~= '' then
    redis.call('HSET', KEYS[2], sha, ARGV[4])
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if keep >= 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -math.max(keep, 1) - 1)
    local wanted = {}
    for _, raw in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
        local ok, record = pcall(cjson.decode, raw)
        if ok and type(record) == 'table' and type(record['sha256']) == 'string' then
            wanted[record['sha256']] = true
        end
    end
    for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
        if not wanted[field] then
            redis.call('HDEL', KEYS[2], field)
        end
    end
end
if keep == 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[6])
    redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
return 1
"""


class RedisTdmRep:
    """A store's tdmrep.json archive in Redis (see the module docstring); Redis
    errors are the caller's to report."""

    def __init__(
        self,
        client: Any,
        scripts: Scripts,
        keys: RedisKeys,
        records: RedisRecords,
        archive: int | None,
        grace: float,
    ) -> None:
        """``archive``: records kept per site (``None``: all, ``0``: the newest
        only, expiring ``grace`` seconds past its own expiry)."""
        self._redis = client
        self._keys = keys
        self._records = records
        self.archive = archive
        self._grace = grace
        self._scripts = scripts
        self._save = scripts.register(_SAVE)

    def save_many(self, records: Sequence[tuple[FetchRecord, bytes | None]], cluster: bool) -> None:
        """Each record appended to its site's archive, one script each (atomic on
        the site's slot), pipelined unless on a Redis Cluster."""
        pipe = None if cluster else self._scripts.pipeline()
        for record, body in records:
            _, args = save_arguments(record, body, self._grace, self.archive)
            site = record.site
            keys = [self._keys.tdmrep(site), self._keys.tdmrep_bodies(site)]
            if pipe is None:
                self._save(keys=keys, args=args)
            else:
                self._scripts.queue(pipe, self._save, keys, args)
        if pipe is not None:
            self._scripts.execute(pipe)

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        """The site's tdmrep.json records, newest first, at most ``limit``."""
        count = max(0, int(limit))
        if not count:
            return []
        decoded = (self._records.decoded(raw, site) for raw in self._entries(site, "+inf", count))
        return [record for record in decoded if record is not None]

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        """The site's tdmrep.json record in force at ``when`` (the last fetched by
        then that can be used), with its body."""
        key = self._keys.tdmrep_bodies(site)
        for raw in self._entries(site, when, _AT_SCAN):
            found = self._records.with_body(self._records.decoded(raw, site), key)
            if found is not None:
                return found
        return None

    def _entries(self, site: str, until: float | str, count: int) -> list[Any]:
        rows = self._redis.zrevrangebyscore(
            self._keys.tdmrep(site), until, "-inf", start=0, num=count
        )
        return list(cast("list[Any]", rows))

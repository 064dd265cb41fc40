"""The Redis store's archive read back: a site's past records, and the one in force at a time. Pure.

Each site's archive is a sorted set scored by ``fetched_at``
(``{prefix}archive:{<site>}``, and ``{prefix}archive:<site>`` of the first
layout, both read), written by the store's saves and kept to the last N
records with ``ROBOTSTXT_STORE_ARCHIVE = N``. With the archive ``"off"``
(``0``), the current record alone stands for the site's history. Entries
that do not decode are skipped (:class:`~._redis_records.RedisRecords`).
"""

from __future__ import annotations

from typing import Any, cast

from ._redis_records import RedisRecords
from ._store import FetchRecord

__all__ = ["RedisArchive"]

#: how many archive entries ``at`` reads past undecodable ones
_AT_SCAN = 16


class RedisArchive:
    """Reads a site's archive (see the module docstring); Redis errors are the
    caller's to report."""

    def __init__(self, client: Any, records: RedisRecords, archive: int | None) -> None:
        """``archive``: records kept per site (``None``: all, ``0``: none)."""
        self._redis = client
        self._records = records
        self.archive = archive

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        """The site's records, newest first, at most ``limit``."""
        count = max(0, int(limit))
        if not count:
            return []
        records = self._records
        raws = self._entries(site, "+inf", count)
        decoded = (records.decoded(raw, site) for raw in raws)
        kept = [record for record in decoded if record is not None]
        if not kept and self.archive == 0:  # no archive: the current record alone
            current = records.decoded(records.current_raw(site), site)
            kept = [] if current is None else [current]
        return kept

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        """The site's record in force at ``when`` (the last fetched by then), with its body."""
        records = self._records
        for raw in self._entries(site, when, _AT_SCAN):
            found = records.with_body(records.decoded(raw, site))
            if found is not None:
                return found
        if self.archive == 0:  # no archive: the current record, if fetched by then
            current = records.with_body(records.decoded(records.current_raw(site), site))
            if current is not None and current[0].fetched_at <= when:
                return current
        return None

    def _entries(self, site: str, until: float | str, count: int) -> list[Any]:
        """The newest ``count`` archive entries fetched at or before ``until``, of
        both layouts, newest first."""
        keys = self._records.keys
        scored: list[tuple[float, Any]] = []
        for key in (keys.archive(site), keys.old_archive(site)):
            rows = self._redis.zrevrangebyscore(
                key, until, "-inf", start=0, num=count, withscores=True
            )
            scored.extend((float(score), raw) for raw, score in cast("list[Any]", rows))
        scored.sort(key=lambda row: row[0], reverse=True)
        return [raw for _, raw in scored[:count]]

"""The SQLite robots.txt store: one file, shared by the processes that open it. Pure.

Tables: ``current`` (each site's latest fetch), ``archive`` (every fetch),
``bodies`` (each distinct body once, keyed by its sha256, zlib-compressed),
``leases`` (who is fetching a site's robots.txt, until when) and
``tdmrep_archive`` (each site's tdmrep.json fetches, as ``archive``). Write-ahead
logging lets readers go on while a process writes; every write is one
``BEGIN IMMEDIATE`` transaction, so a lease is taken atomically across
processes sharing the file. Waiting on another process's lock is bounded by
a busy timeout; past it, as for a corrupt file or an unwritable directory,
the call raises ``StoreError``.

A connection is made on the thread that opens the store and used on it only
(the Scrapy glue runs every call on one worker thread per store). A second
connection (:meth:`SQLiteStore.non_waiting`) never waits for a lock (busy
timeout 0: :class:`StoreBusy` at once), never checkpoints the write-ahead log
and never syncs to disk on commit, so that its short look-ups can be made
on the crawl's event loop, falling back to the waiting connection when busy.

Rows are not trusted (``_sqlite_file``): a record that does not read as one,
or whose body does not decompress or does not match its size and digest,
is not used (one WARNING, and the listener of :meth:`report_bad_records`
told): its site is answered as one without a record (its lease taken), and
every other site of the same read is answered as usual.

This module saves and looks up; the store composes the file
(``_sqlite_file``: opening, tables, rows), the leases (``_sqlite_leases``)
and the archive (``_sqlite_archive``: read back and trimmed).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ._sqlite_archive import EXPIRY_GRACE as EXPIRY_GRACE  # kept importable from here
from ._sqlite_archive import SQLiteArchive, trim_tdmrep
from ._sqlite_file import (
    TDMREP_COLUMNS,
    BadRow,
    checked_body,
    has_table,
    is_busy,
    open_file,
    read_body,
    record_of,
    write,
)
from ._sqlite_leases import CHUNK, SQLiteLeases
from ._store import BadRecords, FetchRecord, Looked, RobotsStore, StoreBusy, StoreError

__all__ = ["SQLiteStore", "StoreBusy"]

_T = TypeVar("_T")
#: records that cannot be used, met by a read: (site, what is wrong), told after it
_Bad = list[tuple[str, str]]

#: seconds a call waits for another process's write lock before ``StoreError``
BUSY_TIMEOUT = 5.0


class SQLiteStore(RobotsStore):
    """A robots.txt store in a SQLite file (see the module docstring)."""

    #: look-ups and saves of many sites are one transaction each
    batches = True

    def __init__(
        self,
        path: str,
        *,
        busy_timeout: float | None = None,
        clock: Callable[[], float] = time.time,
        read_only: bool = False,
        non_waiting: bool = False,
        archive: int | None = None,
    ) -> None:
        """``read_only``: for reports (``scrapy robotstxt history``, ``--at``): the
        file is opened ``mode=ro`` and never made; a missing one is a
        ``StoreError`` saying there is no store at its path. ``non_waiting``: see
        :meth:`non_waiting` (the file is not made, its tables are not checked).
        ``archive`` (``ROBOTSTXT_STORE_ARCHIVE``): records kept per site, the
        current one included (``None``: all; ``0``: the current one only);
        a store opened for writing is pruned at once (:meth:`prune`)."""
        self.archive = archive
        self.pruned_at_open: dict[str, int] = {}
        if busy_timeout is None:
            busy_timeout = BUSY_TIMEOUT
        if non_waiting:
            busy_timeout = 0.0
        #: a non-waiting connection: a lock met is :class:`StoreBusy`
        self.waits = not non_waiting
        self.path = os.path.abspath(path)
        self.uri = f"sqlite:///{self.path}"
        self._clock = clock
        #: where the records and leases not trusted are told
        self._bad = BadRecords(self.uri)
        self._db, self._columns = open_file(
            self.path, busy_timeout, read_only=read_only, non_waiting=non_waiting
        )
        self._leases = SQLiteLeases(self._db, clock, self._bad)
        self._archive = SQLiteArchive(self._db, self._columns, archive, clock, self._bad)
        #: the tdmrep.json fetches (``None``: a file of an earlier version, read-only)
        self._tdmrep = (
            SQLiteArchive(self._db, TDMREP_COLUMNS, archive, clock, self._bad, "tdmrep_archive")
            if has_table(self._db, "tdmrep_archive")
            else None
        )
        if read_only or non_waiting:
            return
        try:
            #: what the prune at open removed (by table)
            self.pruned_at_open = self._archive.prune()
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreError(f"cannot open the robots.txt store {self.path}: {exc}") from exc

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        try:
            return fn()
        except StoreError:
            raise
        except sqlite3.OperationalError as exc:
            if not self.waits and is_busy(exc):
                raise StoreBusy(f"robots.txt store {self.path}: {what}: {exc}") from exc
            raise StoreError(f"robots.txt store {self.path}: {what} failed: {exc}") from exc
        except (sqlite3.Error, OSError, zlib.error, ValueError, TypeError, MemoryError) as exc:
            raise StoreError(f"robots.txt store {self.path}: {what} failed: {exc}") from exc

    def site_count(self) -> int:
        """How many sites have a current record."""

        def run() -> int:
            row = self._db.execute("SELECT COUNT(*) FROM current").fetchone()
            return 0 if row is None else int(row[0])

        return self._call("counting the sites", run)

    def non_waiting(self) -> SQLiteStore:
        """A second connection to the same file that never waits: busy timeout 0 (a
        lock held by another process, or by this store's own connection writing,
        is :class:`StoreBusy` at once, nothing changed), no checkpoint of the
        write-ahead log (``wal_autocheckpoint = 0``: this connection's commits
        stay short; the waiting connection checkpoints), no sync on commit. For
        :meth:`look_many` on a thread that must not wait."""
        store = SQLiteStore(self.path, clock=self._clock, non_waiting=True)
        store.report_bad_records(self._bad.listener)
        return store

    def report_bad_records(self, listener: Callable[[str, str], None] | None) -> None:
        """Tell ``listener(site, problem)`` of each record or lease not trusted."""
        self._bad.listener = listener

    @staticmethod
    def _record(site: str, row: Sequence[object], bad: _Bad | None) -> FetchRecord | None:
        """The record of ``site`` a row stands for; ``None`` when it does not read as
        one (noted in ``bad``, to be told)."""
        try:
            return record_of(tuple(row))
        except BadRow as exc:
            if bad is not None:
                bad.append((site, str(exc)))
            return None

    def _with_body(
        self, record: FetchRecord, bad: _Bad | None
    ) -> tuple[FetchRecord, bytes | None] | None:
        """``record`` with its body checked; ``None`` when the body does not
        decompress or does not match its size and digest (noted in ``bad``)."""
        try:
            return record, read_body(self._db, record)
        except BadRow as exc:
            if bad is not None:
                bad.append((record.site, str(exc)))
            return None

    def _tell(self, bad: _Bad) -> None:
        for site, problem in bad:
            self._bad.record(site, problem)

    def current(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        def run() -> tuple[FetchRecord, bytes | None] | None:
            row = self._db.execute(
                f"SELECT {self._columns} FROM current c JOIN archive a ON a.id = c.archive_id "
                "WHERE c.site = ?",
                (site,),
            ).fetchone()
            bad: _Bad = []
            record = None if row is None else self._record(site, row, bad)
            found = None if record is None else self._with_body(record, bad)
            self._tell(bad)
            return found

        return self._call("reading the current record", run)

    def fresh_records(
        self, limit: int, fresh: Callable[[FetchRecord], bool]
    ) -> dict[str, tuple[FetchRecord, bytes | None]]:
        """Every site's current record that is ``fresh``, with its body, in one read;
        nothing (``{}``) when the store keeps more than ``limit`` sites. A record
        that cannot be used (a bad row, a body that does not match its digest) is
        left out (its site's look-up reports it)."""

        def run() -> dict[str, tuple[FetchRecord, bytes | None]]:
            row = self._db.execute("SELECT COUNT(*) FROM current").fetchone()
            if row is None or int(row[0]) > limit:
                return {}
            rows = self._db.execute(
                f"SELECT {self._columns}, b.data FROM current c "
                "JOIN archive a ON a.id = c.archive_id "
                "LEFT JOIN bodies b ON b.sha256 = a.sha256"
            ).fetchall()
            found: dict[str, tuple[FetchRecord, bytes | None]] = {}
            for *columns, data in rows[: limit + 1]:
                record = self._record("", columns, None)
                if record is None or not fresh(record):
                    continue
                if record.sha256 is not None and data is None:
                    continue
                try:
                    body = None if data is None else checked_body(data, record)
                except BadRow:
                    continue
                found[record.site] = (record, body)
            return found

        return self._call("reading the current records", run)

    def save(self, record: FetchRecord, body: bytes | None) -> None:
        self.save_many([(record, body)], (), "")

    def save_many(
        self,
        records: Sequence[tuple[FetchRecord, bytes | None]],
        release: Iterable[str],
        holder: str,
    ) -> None:
        """Save ``records`` (as :meth:`save` does each) and give up ``holder``'s leases
        on the ``release`` sites, in one transaction: one commit for a batch of
        fetches. Bodies are hashed and compressed before the write lock is taken."""

        def run() -> None:
            rows = _prepared(records)
            with write(self._db) as db:
                for record, body, sha, data in rows:
                    cursor = _insert(db, "archive", record, body, sha, data)
                    db.execute(
                        "INSERT INTO current (site, archive_id) VALUES (?, ?) "
                        "ON CONFLICT(site) DO UPDATE SET archive_id = excluded.archive_id",
                        (record.site, cursor.lastrowid),
                    )
                for site in dict.fromkeys(record.site for record, *_ in rows):
                    self._archive.trim(db, site)
                for site in release:
                    self._leases.release_in(db, site, holder)

        self._call("saving a record", run)

    def save_tdmrep_many(self, records: Sequence[tuple[FetchRecord, bytes | None]]) -> None:
        """Append tdmrep.json fetches to their sites' tdmrep.json archive, in one
        transaction, trimmed as ``archive`` says (the newest always kept)."""

        def run() -> None:
            rows = _prepared(records)
            with write(self._db) as db:
                for record, body, sha, data in rows:
                    _insert(db, "tdmrep_archive", record, body, sha, data)
                for site in dict.fromkeys(record.site for record, *_ in rows):
                    trim_tdmrep(db, site, self.archive)

        self._call("saving a tdmrep.json record", run)

    def tdmrep_history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        tdmrep = self._tdmrep
        if tdmrep is None:
            return []
        return self._call("reading the history", lambda: tdmrep.history(site, limit))

    def tdmrep_at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        tdmrep = self._tdmrep
        if tdmrep is None:
            return None
        return self._call("reading the archive", lambda: tdmrep.at(site, when))

    def prune(self, now: float | None = None) -> dict[str, int]:
        """Drop what the store no longer needs: current records expired more than
        :data:`EXPIRY_GRACE` ago (their archive rows stay, as the archive setting
        says), archive rows beyond ``archive`` per site, and bodies no row names.
        Counts of what was removed, by table."""
        return self._call("pruning", lambda: self._archive.prune(now))

    def _current_of(self, sites: Sequence[str], bad: _Bad | None) -> dict[str, FetchRecord]:
        """The current records of ``sites`` (those that have one that reads as a
        record: a bad row is noted in ``bad`` and left out), in few queries."""
        found: dict[str, FetchRecord] = {}
        for start in range(0, len(sites), CHUNK):
            chunk = list(sites[start : start + CHUNK])
            marks = ", ".join("?" * len(chunk))
            for row in self._db.execute(
                f"SELECT c.site, {self._columns} FROM current c "
                "JOIN archive a ON a.id = c.archive_id "
                f"WHERE c.site IN ({marks})",
                chunk,
            ):
                site = str(row[0])
                record = self._record(site, row[1:], bad)
                if record is not None:
                    found[site] = record
        return found

    def look_many(
        self,
        sites: Sequence[str],
        holder: str,
        seconds: float,
        fresh: Callable[[FetchRecord], bool],
        bodies: bool = True,
    ) -> dict[str, Looked]:
        """For each site: ``("fresh", (record, body))`` when its current record is
        ``fresh`` (``("fresh", None)`` without ``bodies``: nothing decompressed,
        the record to be read with a later call); else ``("lease", None)`` with
        ``holder``'s lease on its fetch taken for ``seconds``; else
        ``("held", None)``: another live holder has it.

        One read for all the sites, then one transaction for the leases of those
        without a fresh record (their records read again under the write lock, so
        a record another process saved meanwhile is used, not fetched again). A
        record that cannot be used (a bad row, a body that does not match its
        digest) is told once (once the look-up is done: not when it meets a lock
        and is made again) and its site leased, as one without a record.
        """

        def run() -> dict[str, Looked]:
            result: dict[str, Looked] = {}
            bad: _Bad = []
            records = self._current_of(sites, bad)
            rest = []
            distrusted: set[str] = set()
            for site in dict.fromkeys(sites):
                record = records.get(site)
                if record is not None and fresh(record):
                    if not bodies:
                        result[site] = ("fresh", None)
                        continue
                    found = self._with_body(record, bad)
                    if found is not None:
                        result[site] = ("fresh", found)
                        continue
                    distrusted.add(site)
                rest.append(site)
            if not rest:
                self._tell(bad)
                return result
            now = self._clock()
            with write(self._db) as db:
                records = self._current_of(rest, None)
                leases = self._leases.leases_of(rest)
                for site in rest:
                    record = records.get(site)
                    if record is not None and site not in distrusted and fresh(record):
                        found = self._with_body(record, bad) if bodies else None
                        if found is not None or not bodies:
                            result[site] = ("fresh", found)
                            continue
                    if self._leases.held(db, site, leases.get(site), holder, now, seconds):
                        result[site] = ("held", None)
                        continue
                    self._leases.take(db, site, holder, now + seconds)
                    result[site] = ("lease", None)
            self._tell(bad)
            return result

        return self._call("looking up sites", run)

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        return self._call("reading the history", lambda: self._archive.history(site, limit))

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        return self._call("reading the archive", lambda: self._archive.at(site, when))

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        return self._call("taking a lease", lambda: self._leases.acquire(site, holder, seconds))

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""
        return self._call("reading a lease", lambda: self._leases.lease_of(site))

    def release(self, site: str, holder: str) -> None:
        self._call("releasing a lease", lambda: self._leases.release(site, holder))

    def close(self) -> None:
        try:
            self._db.close()
        except sqlite3.Error as exc:
            raise StoreError(f"robots.txt store {self.path}: closing failed: {exc}") from exc

    def __repr__(self) -> str:
        return f"<SQLiteStore {self.path}>"


_Row = tuple[FetchRecord, "bytes | None", "str | None", "bytes | None"]


def _prepared(records: Sequence[tuple[FetchRecord, bytes | None]]) -> list[_Row]:
    """Each record with its body, the body's digest and its compressed form, made
    before the write lock is taken (the digest and size kept are the body's own)."""
    rows: list[_Row] = []
    for record, body in records:
        sha = record.sha256
        data = None if body is None else zlib.compress(body, 6)
        if body is not None:
            sha = hashlib.sha256(body).hexdigest()
            record = record._replace(size=len(body))
        rows.append((record, body, sha, data))
    return rows


def _insert(
    db: sqlite3.Connection,
    table: str,
    record: FetchRecord,
    body: bytes | None,
    sha: str | None,
    data: bytes | None,
) -> sqlite3.Cursor:
    """Within a write: ``record`` appended to ``table`` (``archive`` or
    ``tdmrep_archive``), its body kept once by its sha256."""
    if body is not None and sha is not None:
        # a body found damaged is written again (same sha256: the good bytes over
        # the bad), not kept damaged for good
        db.execute(
            "INSERT INTO bodies (sha256, size, data) VALUES (?, ?, ?) "
            "ON CONFLICT (sha256) DO UPDATE SET size = excluded.size, data = excluded.data",
            (sha, len(body), data),
        )
    return db.execute(
        f"INSERT INTO {table} (site, fetched_at, chain, kind, detail, lifetime, "
        "expires_at, retry_after, size, sha256, status, truncated, max_size) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.site,
            record.fetched_at,
            json.dumps([list(step) for step in record.chain]),
            record.kind,
            record.detail,
            record.lifetime,
            record.expires_at,
            int(record.retry_after),
            record.size,
            sha if body is not None else None,
            record.status,
            None if record.truncated is None else int(record.truncated),
            record.max_size,
        ),
    )

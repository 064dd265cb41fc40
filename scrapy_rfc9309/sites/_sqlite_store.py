"""The SQLite robots.txt store: one file, shared by the processes that open it. Pure.

Tables: ``current`` (each site's latest fetch), ``archive`` (every fetch),
``bodies`` (each distinct body once, keyed by its sha256, zlib-compressed)
and ``leases`` (who is fetching a site's robots.txt, until when). Write-ahead
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
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from ._store import FetchRecord, Looked, RobotsStore, StoreBusy, StoreError, holder_is_gone

__all__ = ["SQLiteStore", "StoreBusy"]

_T = TypeVar("_T")

#: seconds a call waits for another process's write lock before ``StoreError``
BUSY_TIMEOUT = 5.0
#: sites per ``IN (...)`` query (well under SQLite's limit on parameters)
_CHUNK = 500
#: the largest body decompressed from the file (hostile or damaged contents)
_MAX_BODY = 64 * 1024 * 1024
#: seconds a current record is kept past its own expiry; pruned after
EXPIRY_GRACE = 86_400.0
#: SQLite's primary result codes for "another connection holds the lock"
_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED


def _is_busy(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _BUSY_CODES
    text = str(exc).lower()
    return "locked" in text or "busy" in text


_SCHEMA = """
CREATE TABLE IF NOT EXISTS bodies (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS archive (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    site TEXT NOT NULL,
    fetched_at REAL NOT NULL,
    chain TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    lifetime TEXT NOT NULL,
    expires_at REAL NOT NULL,
    retry_after INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT REFERENCES bodies(sha256),
    status INTEGER,
    truncated INTEGER,
    max_size INTEGER
);
CREATE INDEX IF NOT EXISTS archive_site_time ON archive (site, fetched_at);
CREATE INDEX IF NOT EXISTS archive_sha256 ON archive (sha256);
CREATE TABLE IF NOT EXISTS current (
    site TEXT PRIMARY KEY,
    archive_id INTEGER NOT NULL REFERENCES archive(id)
);
CREATE TABLE IF NOT EXISTS leases (
    site TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until REAL NOT NULL
);
"""

#: this store's tables; a file with others is refused
_TABLES = frozenset({"bodies", "archive", "current", "leases"})

_COLUMNS = (
    "a.site, a.fetched_at, a.chain, a.kind, a.detail, a.lifetime, "
    "a.expires_at, a.retry_after, a.size, a.sha256"
)
#: columns added to ``archive`` since the first version (what the reader's
#: settings need, see ``_records``); a file without them gets them at open
_ADDED_COLUMNS = (("status", "INTEGER"), ("truncated", "INTEGER"), ("max_size", "INTEGER"))


def _chain_of(text: str) -> tuple[tuple[str, int | None], ...]:
    """The chain column back as a tuple; a damaged one reads as no chain."""
    try:
        items = json.loads(text)
        return tuple(
            (str(url), status if isinstance(status, int) else None) for url, status in items
        )
    except (ValueError, TypeError):
        return ()


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _record(row: tuple[Any, ...]) -> FetchRecord:
    site, fetched_at, chain, kind, detail, lifetime, expires_at, retry, size, sha = row[:10]
    status, truncated, max_size = row[10:13] if len(row) >= 13 else (None, None, None)
    return FetchRecord(
        site=str(site),
        fetched_at=float(fetched_at),
        chain=_chain_of(str(chain)),
        kind=str(kind),
        detail=str(detail),
        lifetime=str(lifetime),
        expires_at=float(expires_at),
        retry_after=bool(retry),
        size=int(size),
        sha256=None if sha is None else str(sha),
        status=_optional_int(status),
        truncated=None if _optional_int(truncated) is None else bool(truncated),
        max_size=_optional_int(max_size),
    )


def _open_read_only(path: str, timeout: float) -> sqlite3.Connection:
    """Open the store at ``path`` for reading only (reports), never making it.

    A store in write-ahead-log mode needs its ``-shm`` file, which SQLite makes
    next to the store even to read it; in a directory this process cannot
    write to (an archive on read-only media) that fails, and the file is then
    opened ``immutable``: read as it is on disk, without the changes still in
    a ``-wal`` file left beside it (a crawl that closed normally leaves none).
    """
    uri = pathlib.Path(path).as_uri()

    def connect(options: str) -> sqlite3.Connection:
        return sqlite3.connect(
            f"{uri}?{options}",
            uri=True,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
        )

    db: sqlite3.Connection | None = None
    try:
        db = connect("mode=ro")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        if db is not None:
            db.close()
        if os.access(os.path.dirname(path), os.W_OK):
            raise
        db = connect("mode=ro&immutable=1")
    return db


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
        #: the archive columns read (the added ones as NULL in a file without them)
        self._columns = _COLUMNS + ", NULL, NULL, NULL"
        directory = os.path.dirname(self.path)
        try:
            if read_only:
                if not os.path.isfile(self.path):
                    raise StoreError(f"no store at {self.path}")
                self._db = _open_read_only(self.path, busy_timeout)
            elif non_waiting:
                if not os.path.isfile(self.path):
                    raise StoreError(f"no store at {self.path}")
                self._db = sqlite3.connect(
                    self.path, timeout=0.0, isolation_level=None, check_same_thread=False
                )
            else:
                os.makedirs(directory, exist_ok=True)
                self._db = sqlite3.connect(
                    self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
                )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the robots.txt store {self.path}: {exc}") from exc
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            self._refuse_foreign()
            if read_only:
                self._check()
                self._find_columns()
                return
            if non_waiting:
                self._find_columns()
                mode = self._db.execute("PRAGMA journal_mode").fetchone()
                if not mode or str(mode[0]).lower() != "wal":
                    raise StoreError(f"the robots.txt store {self.path} is not in WAL mode")
                # no fsync on commit (a lease lost in a power cut is only a lease)
                self._db.execute("PRAGMA synchronous = NORMAL")
                # the waiting connection checkpoints the log, never this one
                self._db.execute("PRAGMA wal_autocheckpoint = 0")
                return
            mode = self._db.execute("PRAGMA journal_mode = WAL").fetchone()
            if not mode or str(mode[0]).lower() != "wal":
                raise StoreError(f"the robots.txt store {self.path} cannot use write-ahead logging")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._write() as db:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                have = self._archive_columns()
                for name, kind in _ADDED_COLUMNS:  # a store made by an earlier version
                    if name not in have:
                        db.execute(f"ALTER TABLE archive ADD COLUMN {name} {kind}")
            self._check()
            self._find_columns()
            #: what the prune at open removed (by table)
            self.pruned_at_open = self._prune()
        except StoreError:
            self._db.close()
            raise
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreError(f"cannot open the robots.txt store {self.path}: {exc}") from exc

    def _refuse_foreign(self) -> None:
        """A SQLite file of another program (tables that are not this store's) is
        not written to: ``StoreError`` at start-up."""
        names = {
            str(row[0])
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        foreign = sorted(names - _TABLES)
        if foreign:
            shown = ", ".join(foreign[:5])
            raise StoreError(
                f"{self.path} is a SQLite database of another program (tables {shown}); "
                "name a file of its own for the robots.txt store"
            )

    def _archive_columns(self) -> set[str]:
        return {str(row[1]) for row in self._db.execute("PRAGMA table_info(archive)")}

    def _find_columns(self) -> None:
        """Read the added columns if the file has them (one written by an earlier
        version and opened read-only has not: its records read as before)."""
        if {name for name, _kind in _ADDED_COLUMNS} <= self._archive_columns():
            added = ", ".join(f"a.{name}" for name, _kind in _ADDED_COLUMNS)
            self._columns = f"{_COLUMNS}, {added}"

    def _check(self) -> None:
        """A quick look at the file's structure, so that a damaged file fails at start-up."""
        row = self._db.execute("PRAGMA quick_check").fetchone()
        if not row or row[0] != "ok":
            raise StoreError(f"the robots.txt store {self.path} is damaged: {row and row[0]}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: the write lock is taken first."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):  # never left open (holding the write lock)
                db.execute("ROLLBACK")
            raise

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        try:
            return fn()
        except StoreError:
            raise
        except sqlite3.OperationalError as exc:
            if not self.waits and _is_busy(exc):
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
        return SQLiteStore(self.path, clock=self._clock, non_waiting=True)

    def _body(self, sha: str | None) -> bytes | None:
        if sha is None:
            return None
        row = self._db.execute("SELECT data FROM bodies WHERE sha256 = ?", (sha,)).fetchone()
        if row is None:
            return None
        return self._decompress(bytes(row[0]), sha)

    def _decompress(self, data: bytes, sha: str | None) -> bytes:
        decompressor = zlib.decompressobj()
        body = decompressor.decompress(data, _MAX_BODY)
        if decompressor.unconsumed_tail:
            raise StoreError(f"robots.txt store {self.path}: body {(sha or '')[:12]} is too large")
        return body

    def current(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        def run() -> tuple[FetchRecord, bytes | None] | None:
            row = self._db.execute(
                f"SELECT {self._columns} FROM current c JOIN archive a ON a.id = c.archive_id "
                "WHERE c.site = ?",
                (site,),
            ).fetchone()
            if row is None:
                return None
            record = _record(row)
            return record, self._body(record.sha256)

        return self._call("reading the current record", run)

    def fresh_records(
        self, limit: int, fresh: Callable[[FetchRecord], bool]
    ) -> dict[str, tuple[FetchRecord, bytes | None]]:
        """Every site's current record that is ``fresh``, with its body, in one read;
        nothing (``{}``) when the store keeps more than ``limit`` sites. A record
        whose body cannot be read is left out (its site's look-up reports it)."""

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
                record = _record(tuple(columns))
                if not fresh(record) or (record.sha256 is not None and data is None):
                    continue
                try:
                    body = None if data is None else self._decompress(bytes(data), record.sha256)
                except (zlib.error, StoreError):
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
            rows = []
            for record, body in records:
                sha = record.sha256
                if body is not None and sha is None:
                    sha = hashlib.sha256(body).hexdigest()
                data = None if body is None else zlib.compress(body, 6)
                rows.append((record, body, sha, data))
            with self._write() as db:
                for record, body, sha, data in rows:
                    if body is not None and sha is not None:
                        db.execute(
                            "INSERT OR IGNORE INTO bodies (sha256, size, data) VALUES (?, ?, ?)",
                            (sha, len(body), data),
                        )
                    cursor = db.execute(
                        "INSERT INTO archive (site, fetched_at, chain, kind, detail, lifetime, "
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
                    db.execute(
                        "INSERT INTO current (site, archive_id) VALUES (?, ?) "
                        "ON CONFLICT(site) DO UPDATE SET archive_id = excluded.archive_id",
                        (record.site, cursor.lastrowid),
                    )
                if self.archive is not None:
                    for site in dict.fromkeys(record.site for record, *_ in rows):
                        _trim_site(db, site, max(1, self.archive))
                for site in release:
                    db.execute("DELETE FROM leases WHERE site = ? AND holder = ?", (site, holder))

        self._call("saving a record", run)

    def prune(self, now: float | None = None) -> dict[str, int]:
        """Drop what the store no longer needs: current records expired more than
        :data:`EXPIRY_GRACE` ago (their archive rows stay, as the archive setting
        says), archive rows beyond ``archive`` per site, and bodies no row names.
        Counts of what was removed, by table."""
        return self._call("pruning", lambda: self._prune(now))

    def _prune(self, now: float | None = None) -> dict[str, int]:
        cutoff = (self._clock() if now is None else now) - EXPIRY_GRACE
        with self._write() as db:
            current = db.execute(
                "DELETE FROM current WHERE archive_id IN "
                "(SELECT id FROM archive WHERE expires_at < ?)",
                (cutoff,),
            ).rowcount
            archive = 0
            if self.archive is not None:
                archive = db.execute(
                    "DELETE FROM archive WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() "
                    "OVER (PARTITION BY site ORDER BY fetched_at DESC, id DESC) AS n "
                    "FROM archive) WHERE n > ?) AND id NOT IN (SELECT archive_id FROM current)",
                    (max(1, self.archive),),
                ).rowcount
                if self.archive == 0:  # no archive: rows of no current record go
                    archive += db.execute(
                        "DELETE FROM archive WHERE id NOT IN (SELECT archive_id FROM current)"
                    ).rowcount
            bodies = db.execute(
                "DELETE FROM bodies WHERE NOT EXISTS "
                "(SELECT 1 FROM archive WHERE archive.sha256 = bodies.sha256)"
            ).rowcount
        return {"current": current, "archive": archive, "bodies": bodies}

    def _current_of(self, sites: Sequence[str]) -> dict[str, FetchRecord]:
        """The current records of ``sites`` (those that have one), in few queries."""
        found: dict[str, FetchRecord] = {}
        for start in range(0, len(sites), _CHUNK):
            chunk = list(sites[start : start + _CHUNK])
            marks = ", ".join("?" * len(chunk))
            for row in self._db.execute(
                f"SELECT c.site, {self._columns} FROM current c "
                "JOIN archive a ON a.id = c.archive_id "
                f"WHERE c.site IN ({marks})",
                chunk,
            ):
                found[str(row[0])] = _record(row[1:])
        return found

    def _leases_of(self, sites: Sequence[str]) -> dict[str, tuple[str, float]]:
        leases: dict[str, tuple[str, float]] = {}
        for start in range(0, len(sites), _CHUNK):
            chunk = list(sites[start : start + _CHUNK])
            marks = ", ".join("?" * len(chunk))
            for site, holder, until in self._db.execute(
                f"SELECT site, holder, until FROM leases WHERE site IN ({marks})", chunk
            ):
                leases[str(site)] = (str(holder), float(until))
        return leases

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
        a record another process saved meanwhile is used, not fetched again).
        """

        def run() -> dict[str, Looked]:
            result: dict[str, Looked] = {}
            records = self._current_of(sites)
            rest = []
            for site in dict.fromkeys(sites):
                record = records.get(site)
                if record is not None and fresh(record):
                    body = (record, self._body(record.sha256)) if bodies else None
                    result[site] = ("fresh", body)
                else:
                    rest.append(site)
            if not rest:
                return result
            now = self._clock()
            with self._write() as db:
                records = self._current_of(rest)
                leases = self._leases_of(rest)
                for site in rest:
                    record = records.get(site)
                    if record is not None and fresh(record):
                        result[site] = (
                            "fresh",
                            (record, self._body(record.sha256)) if bodies else None,
                        )
                        continue
                    lease = leases.get(site)
                    if (
                        lease is not None
                        and lease[0] != holder
                        and lease[1] > now
                        and not holder_is_gone(lease[0])  # a killed process of this host
                    ):
                        result[site] = ("held", None)
                        continue
                    db.execute(
                        "INSERT INTO leases (site, holder, until) VALUES (?, ?, ?) "
                        "ON CONFLICT(site) DO UPDATE SET holder = excluded.holder, "
                        "until = excluded.until",
                        (site, holder, now + seconds),
                    )
                    result[site] = ("lease", None)
            return result

        return self._call("looking up sites", run)

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        def run() -> list[FetchRecord]:
            rows = self._db.execute(
                f"SELECT {self._columns} FROM archive a WHERE a.site = ? "
                "ORDER BY a.fetched_at DESC, a.id DESC LIMIT ?",
                (site, max(0, int(limit))),
            ).fetchall()
            return [_record(row) for row in rows]

        return self._call("reading the history", run)

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        def run() -> tuple[FetchRecord, bytes | None] | None:
            row = self._db.execute(
                f"SELECT {self._columns} FROM archive a WHERE a.site = ? AND a.fetched_at <= ? "
                "ORDER BY a.fetched_at DESC, a.id DESC LIMIT 1",
                (site, when),
            ).fetchone()
            if row is None:
                return None
            record = _record(row)
            return record, self._body(record.sha256)

        return self._call("reading the archive", run)

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        def run() -> bool:
            now = self._clock()
            with self._write() as db:
                row = db.execute(
                    "SELECT holder, until FROM leases WHERE site = ?", (site,)
                ).fetchone()
                if (
                    row is not None
                    and row[0] != holder
                    and float(row[1]) > now
                    and not holder_is_gone(str(row[0]))  # a killed process of this host
                ):
                    return False
                db.execute(
                    "INSERT INTO leases (site, holder, until) VALUES (?, ?, ?) "
                    "ON CONFLICT(site) DO UPDATE SET holder = excluded.holder, "
                    "until = excluded.until",
                    (site, holder, now + seconds),
                )
                return True

        return self._call("taking a lease", run)

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""

        def run() -> tuple[str, float] | None:
            row = self._db.execute(
                "SELECT holder, until FROM leases WHERE site = ?", (site,)
            ).fetchone()
            if row is None or float(row[1]) <= self._clock():
                return None
            return str(row[0]), float(row[1]) - self._clock()

        return self._call("reading a lease", run)

    def release(self, site: str, holder: str) -> None:
        def run() -> None:
            with self._write() as db:
                db.execute("DELETE FROM leases WHERE site = ? AND holder = ?", (site, holder))

        self._call("releasing a lease", run)

    def close(self) -> None:
        try:
            self._db.close()
        except sqlite3.Error as exc:
            raise StoreError(f"robots.txt store {self.path}: closing failed: {exc}") from exc

    def __repr__(self) -> str:
        return f"<SQLiteStore {self.path}>"


def _trim_site(db: sqlite3.Connection, site: str, keep: int) -> None:
    """Drop the site's archive rows beyond its newest ``keep`` (never its current
    one), and the bodies no row names any more."""
    shas = [
        row[0]
        for row in db.execute(
            "SELECT DISTINCT sha256 FROM archive WHERE site = ? AND sha256 IS NOT NULL "
            "AND id NOT IN (SELECT id FROM archive WHERE site = ? "
            "ORDER BY fetched_at DESC, id DESC LIMIT ?)",
            (site, site, keep),
        )
    ]
    db.execute(
        "DELETE FROM archive WHERE site = ? AND id NOT IN (SELECT id FROM archive WHERE site = ? "
        "ORDER BY fetched_at DESC, id DESC LIMIT ?) "
        "AND id NOT IN (SELECT archive_id FROM current WHERE site = ?)",
        (site, site, keep, site),
    )
    for sha in shas:
        db.execute(
            "DELETE FROM bodies WHERE sha256 = ? AND NOT EXISTS "
            "(SELECT 1 FROM archive WHERE archive.sha256 = ?)",
            (sha, sha),
        )

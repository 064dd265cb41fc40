"""The SQLite store's file: its tables, a row read back as a record, and opening it checked. Pure.

Opening makes the tables (or adds the columns an earlier version lacked),
refuses a SQLite file of another program and a damaged one, and finds
which columns a file written by an earlier version has. Each distinct body
is kept once, zlib-compressed, and decompressed within a bound (hostile or
damaged contents). Every write is one ``BEGIN IMMEDIATE`` transaction
(:func:`write`).

Rows are not trusted: a row that does not read as a record (a number that is
not one, a chain that is not JSON, a digest that is not one) or a body that
does not decompress, or does not match its size and digest, is
:class:`BadRow`: that record is not used, the rest of the read goes on.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import re
import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from ._store import FetchRecord, NoStore, StoreError

__all__ = [
    "TDMREP_COLUMNS",
    "UNNAMED_BODY",
    "BadRow",
    "checked_body",
    "has_table",
    "is_busy",
    "open_file",
    "read_body",
    "record_of",
    "write",
]

#: the largest body decompressed from the file (hostile or damaged contents)
_MAX_BODY = 64 * 1024 * 1024
#: SQLite's primary result codes for "another connection holds the lock"
_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
#: characters of a bad value a message shows
_SHOWN = 40


class BadRow(ValueError):
    """A stored row that cannot be used as a record: damaged or hostile contents
    (the message says what is wrong)."""


def is_busy(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _BUSY_CODES
    text = str(exc).lower()
    return "locked" in text or "busy" in text


#: the columns of an archive of fetches: robots.txt's (``archive``) and
#: tdmrep.json's (``tdmrep_archive``) alike
_ARCHIVE_COLUMNS = """
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
"""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS bodies (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS archive ({_ARCHIVE_COLUMNS});
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
CREATE TABLE IF NOT EXISTS tdmrep_archive ({_ARCHIVE_COLUMNS});
CREATE INDEX IF NOT EXISTS tdmrep_site_time ON tdmrep_archive (site, fetched_at);
CREATE INDEX IF NOT EXISTS tdmrep_sha256 ON tdmrep_archive (sha256);
"""

#: this store's tables; a file with others is refused (``tdmrep_archive``: each
#: site's tdmrep.json fetches, added after the first version; a file without it
#: gets it when a crawl opens it)
_TABLES = frozenset({"bodies", "archive", "current", "leases", "tdmrep_archive"})
#: a body is kept while a row of either archive names it
UNNAMED_BODY = (
    "NOT EXISTS (SELECT 1 FROM archive WHERE archive.sha256 = bodies.sha256) "
    "AND NOT EXISTS (SELECT 1 FROM tdmrep_archive t WHERE t.sha256 = bodies.sha256)"
)

_COLUMNS = (
    "a.site, a.fetched_at, a.chain, a.kind, a.detail, a.lifetime, "
    "a.expires_at, a.retry_after, a.size, a.sha256"
)
#: columns added to ``archive`` since the first version (what the reader's
#: settings need, see ``_records``); a file without them gets them at open
_ADDED_COLUMNS = (("status", "INTEGER"), ("truncated", "INTEGER"), ("max_size", "INTEGER"))
#: the tdmrep.json archive's columns, read as ``archive``'s (made with every column)
TDMREP_COLUMNS = _COLUMNS + "".join(f", a.{name}" for name, _kind in _ADDED_COLUMNS)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRow(f"{name} {_shown(value)} is not a number")
    if not math.isfinite(value):
        raise BadRow(f"{name} {_shown(value)} is not a finite number")
    return float(value)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise BadRow(f"{name} {_shown(value)} is not text")
    return value


def _optional_int(value: Any, name: str, largest: int | None = None) -> int | None:
    """An added column (NULL in a record saved before it was kept)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRow(f"{name} {_shown(value)} is not a count")
    if largest is not None and value > largest:
        raise BadRow(f"{name} {_shown(value)} is out of range")
    return value


def _chain_of(text: Any) -> tuple[tuple[str, int | None], ...]:
    """The chain column back as a tuple (URLs and statuses)."""
    try:
        items = json.loads(_text(text, "chain"))
    except (ValueError, RecursionError) as exc:
        raise BadRow(f"chain {_shown(text)} is not JSON") from exc
    if not isinstance(items, list):
        raise BadRow(f"chain {_shown(text)} is not a list")
    chain = []
    for step in items:
        if not (isinstance(step, list) and len(step) == 2 and isinstance(step[0], str)):
            raise BadRow(f"chain step {_shown(step)} is not [URL, status]")
        url, status = step
        if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
            raise BadRow(f"chain status {_shown(status)} is not a number")
        chain.append((url, status))
    return tuple(chain)


def record_of(row: tuple[Any, ...]) -> FetchRecord:
    """The record a row of ``archive`` (the columns :func:`open_file` names) stands
    for; :class:`BadRow` when it does not read as one."""
    site, fetched_at, chain, kind, detail, lifetime, expires_at, retry, size, sha = row[:10]
    status, truncated, max_size = row[10:13] if len(row) >= 13 else (None, None, None)
    if sha is not None and not (isinstance(sha, str) and _SHA256.match(sha)):
        raise BadRow(f"sha256 {_shown(sha)} is not a SHA-256 digest")
    if retry not in (0, 1) or isinstance(retry, float):
        raise BadRow(f"retry_after {_shown(retry)} is not 0 or 1")
    flag = _optional_int(truncated, "truncated", 1)
    return FetchRecord(
        site=_text(site, "site"),
        fetched_at=_number(fetched_at, "fetched_at"),
        chain=_chain_of(chain),
        kind=_text(kind, "kind"),
        detail=_text(detail, "detail"),
        lifetime=_text(lifetime, "lifetime"),
        expires_at=_number(expires_at, "expires_at"),
        retry_after=bool(retry),
        size=int(_optional_int(size, "size") or 0),
        sha256=sha,
        status=_optional_int(status, "status"),
        truncated=None if flag is None else bool(flag),
        max_size=_optional_int(max_size, "max_size"),
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


def open_file(
    path: str, busy_timeout: float, *, read_only: bool, non_waiting: bool
) -> tuple[sqlite3.Connection, str]:
    """(connection, the archive columns to read) of the store at ``path``; see
    :class:`~._sqlite_store.SQLiteStore` for ``read_only`` and ``non_waiting``.
    A file opened for writing is made, with its tables, in write-ahead-log mode.
    ``StoreError`` when it cannot be used."""
    directory = os.path.dirname(path)
    try:
        if read_only:
            if not os.path.isfile(path):
                raise NoStore(f"no store at {path}")
            db = _open_read_only(path, busy_timeout)
        elif non_waiting:
            if not os.path.isfile(path):
                raise NoStore(f"no store at {path}")
            db = sqlite3.connect(path, timeout=0.0, isolation_level=None, check_same_thread=False)
        else:
            os.makedirs(directory, exist_ok=True)
            db = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the robots.txt store {path}: {exc}") from exc
    try:
        return db, _prepare(db, path, busy_timeout, read_only=read_only, non_waiting=non_waiting)
    except StoreError:
        db.close()
        raise
    except sqlite3.Error as exc:
        db.close()
        raise StoreError(f"cannot open the robots.txt store {path}: {exc}") from exc


def _prepare(
    db: sqlite3.Connection, path: str, busy_timeout: float, *, read_only: bool, non_waiting: bool
) -> str:
    """Set the connection up and check the file; the archive columns to read."""
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    _refuse_foreign(db, path)
    if read_only:
        _check(db, path)
        return _columns_of(db)
    if non_waiting:
        columns = _columns_of(db)
        mode = db.execute("PRAGMA journal_mode").fetchone()
        if not mode or str(mode[0]).lower() != "wal":
            raise StoreError(f"the robots.txt store {path} is not in WAL mode")
        # no fsync on commit (a lease lost in a power cut is only a lease)
        db.execute("PRAGMA synchronous = NORMAL")
        # the waiting connection checkpoints the log, never this one
        db.execute("PRAGMA wal_autocheckpoint = 0")
        return columns
    mode = db.execute("PRAGMA journal_mode = WAL").fetchone()
    if not mode or str(mode[0]).lower() != "wal":
        raise StoreError(f"the robots.txt store {path} cannot use write-ahead logging")
    db.execute("PRAGMA synchronous = NORMAL")
    with write(db):
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        have = _archive_columns(db)
        for name, kind in _ADDED_COLUMNS:  # a store made by an earlier version
            if name not in have:
                db.execute(f"ALTER TABLE archive ADD COLUMN {name} {kind}")
    _check(db, path)
    return _columns_of(db)


def _refuse_foreign(db: sqlite3.Connection, path: str) -> None:
    """A SQLite file of another program (tables that are not this store's) is
    not written to: ``StoreError`` at start-up."""
    names = {
        str(row[0])
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    foreign = sorted(names - _TABLES)
    if foreign:
        shown = ", ".join(foreign[:5])
        raise StoreError(
            f"{path} is a SQLite database of another program (tables {shown}); "
            "name a file of its own for the robots.txt store"
        )


def has_table(db: sqlite3.Connection, name: str) -> bool:
    """Whether the file has the table ``name`` (one written by an earlier version
    and opened read-only may lack one added since)."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def _archive_columns(db: sqlite3.Connection) -> set[str]:
    return {str(row[1]) for row in db.execute("PRAGMA table_info(archive)")}


def _columns_of(db: sqlite3.Connection) -> str:
    """The archive columns read: the added ones if the file has them (one written
    by an earlier version and opened read-only has not: its records read as
    before, the added columns as NULL)."""
    if {name for name, _kind in _ADDED_COLUMNS} <= _archive_columns(db):
        added = ", ".join(f"a.{name}" for name, _kind in _ADDED_COLUMNS)
        return f"{_COLUMNS}, {added}"
    return _COLUMNS + ", NULL, NULL, NULL"


def _check(db: sqlite3.Connection, path: str) -> None:
    """A quick look at the file's structure, so that a damaged file fails at start-up."""
    row = db.execute("PRAGMA quick_check").fetchone()
    if not row or row[0] != "ok":
        raise StoreError(f"the robots.txt store {path} is damaged: {row and row[0]}")


@contextmanager
def write(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction: the write lock is taken first."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):  # never left open (holding the write lock)
            db.execute("ROLLBACK")
        raise


def read_body(db: sqlite3.Connection, record: FetchRecord) -> bytes | None:
    """The body of ``record``, checked (:func:`checked_body`); ``None``: no body,
    or none kept (``sites._records`` then refuses a parsed record without one)."""
    if record.sha256 is None:
        return None
    row = db.execute("SELECT data FROM bodies WHERE sha256 = ?", (record.sha256,)).fetchone()
    if row is None:
        return None
    return checked_body(row[0], record)


def checked_body(data: Any, record: FetchRecord) -> bytes:
    """The body of ``record`` from its kept ``data`` (compressed), decompressed
    within a bound and checked against the record's size and digest;
    :class:`BadRow` otherwise (damaged or hostile contents)."""
    name = f"its body {(record.sha256 or '')[:12]}"
    if not isinstance(data, bytes):
        raise BadRow(f"{name} is not a blob")
    try:
        decompressor = zlib.decompressobj()
        body = decompressor.decompress(data, min(record.size, _MAX_BODY) + 1)
    except zlib.error as exc:
        raise BadRow(f"{name} does not decompress ({exc})") from None
    if len(body) != record.size or hashlib.sha256(body).hexdigest() != record.sha256:
        raise BadRow(f"{name} does not match its size and digest")
    return body

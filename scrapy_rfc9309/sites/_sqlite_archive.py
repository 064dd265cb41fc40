"""The SQLite store's archive: past records read back, and trimmed as the setting says. Pure.

Every fetch saved is a row of ``archive`` (the ``current`` table names each
site's latest one). ``ROBOTSTXT_STORE_ARCHIVE = N`` keeps the last N rows
per site (the current one always), ``0`` (``"off"``) the current one only;
bodies no row names are dropped with the rows. The tdmrep.json fetches
(``tdmrep_archive``) are read back alike and kept by the same rule: the
newest row of a site stands for its current record. A row that cannot be used (see
``_sqlite_file``) is passed over, told to the store's :class:`~._store.BadRecords`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ._sqlite_file import UNNAMED_BODY, BadRow, read_body, record_of, write
from ._store import BadRecords, FetchRecord

__all__ = ["EXPIRY_GRACE", "SQLiteArchive", "drop_unnamed", "prune_tdmrep", "trim_tdmrep"]

#: seconds a current record is kept past its own expiry; pruned after
EXPIRY_GRACE = 86_400.0
#: how many archive rows ``at`` reads past rows that cannot be used
_AT_SCAN = 16


class SQLiteArchive:
    """Reads and trims the archive of a store's connection (see the module
    docstring); SQLite errors are the caller's to report."""

    def __init__(
        self,
        db: sqlite3.Connection,
        columns: str,
        archive: int | None,
        clock: Callable[[], float],
        bad: BadRecords,
        table: str = "archive",
    ) -> None:
        """``columns``: the archive columns read (``a.``); ``archive``: records kept
        per site, the current one included (``None``: all); ``bad``: where a row
        that cannot be used is told; ``table``: the archive read back
        (``tdmrep_archive``: the tdmrep.json fetches, read alike)."""
        self._table = table
        self._db = db
        self._bad = bad
        self._columns = columns
        self.archive = archive
        self._clock = clock

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        """The site's records that can be used, newest first, at most ``limit``."""
        rows = self._db.execute(
            f"SELECT {self._columns} FROM {self._table} a WHERE a.site = ? "
            "ORDER BY a.fetched_at DESC, a.id DESC LIMIT ?",
            (site, max(0, int(limit))),
        ).fetchall()
        return [record for record in map(self._record, rows) if record is not None]

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        """The site's record in force at ``when`` (the last fetched by then that can
        be used), with its body."""
        rows = self._db.execute(
            f"SELECT {self._columns} FROM {self._table} a "
            "WHERE a.site = ? AND a.fetched_at <= ? "
            "ORDER BY a.fetched_at DESC, a.id DESC LIMIT ?",
            (site, when, _AT_SCAN),
        ).fetchall()
        for row in rows:
            record = self._record(row)
            if record is None:
                continue
            try:
                return record, read_body(self._db, record)
            except BadRow as exc:
                self._bad.record(record.site, str(exc))
        return None

    def _record(self, row: tuple[object, ...]) -> FetchRecord | None:
        try:
            return record_of(row)
        except BadRow as exc:
            self._bad.record(str(row[0]), str(exc))
            return None

    def prune(self, now: float | None = None) -> dict[str, int]:
        """Drop current records expired more than :data:`EXPIRY_GRACE` ago, archive
        rows beyond ``archive`` per site, and bodies no row names; counts by table."""
        cutoff = (self._clock() if now is None else now) - EXPIRY_GRACE
        with write(self._db) as db:
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
            tdmrep = prune_tdmrep(db, self.archive, cutoff)
            bodies = db.execute(f"DELETE FROM bodies WHERE {UNNAMED_BODY}").rowcount
        return {"current": current, "archive": archive, "tdmrep": tdmrep, "bodies": bodies}

    def trim(self, db: sqlite3.Connection, site: str) -> None:
        """Within a save's transaction: drop the site's rows beyond the archive kept
        (never its current one), and the bodies no row names any more."""
        if self.archive is None:
            return
        keep = max(1, self.archive)
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
            "DELETE FROM archive WHERE site = ? AND id NOT IN (SELECT id FROM archive "
            "WHERE site = ? ORDER BY fetched_at DESC, id DESC LIMIT ?) "
            "AND id NOT IN (SELECT archive_id FROM current WHERE site = ?)",
            (site, site, keep, site),
        )
        drop_unnamed(db, shas)


def drop_unnamed(db: sqlite3.Connection, shas: list[str]) -> None:
    """Within a write: the bodies of ``shas`` that no row of either archive names."""
    for sha in shas:
        db.execute(f"DELETE FROM bodies WHERE sha256 = ? AND {UNNAMED_BODY}", (sha,))


def prune_tdmrep(db: sqlite3.Connection, archive: int | None, cutoff: float) -> int:
    """Within a write: the tdmrep.json rows beyond ``archive`` per site (the newest
    always kept, as robots.txt's current record); with ``archive`` 0 (``"off"``),
    the newest too once it expired before ``cutoff``, as a current record goes.
    How many rows went."""
    if archive is None:
        return 0
    removed = db.execute(
        "DELETE FROM tdmrep_archive WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() "
        "OVER (PARTITION BY site ORDER BY fetched_at DESC, id DESC) AS n "
        "FROM tdmrep_archive) WHERE n > ?)",
        (max(1, archive),),
    ).rowcount
    if archive == 0:
        removed += db.execute("DELETE FROM tdmrep_archive WHERE expires_at < ?", (cutoff,)).rowcount
    return int(removed)


def trim_tdmrep(db: sqlite3.Connection, site: str, archive: int | None) -> None:
    """Within a save's transaction: the site's tdmrep.json rows beyond ``archive``
    (the newest always kept), and the bodies no row names any more."""
    if archive is None:
        return
    keep = max(1, archive)
    shas = [
        str(row[0])
        for row in db.execute(
            "SELECT DISTINCT sha256 FROM tdmrep_archive WHERE site = ? AND sha256 IS NOT NULL "
            "AND id NOT IN (SELECT id FROM tdmrep_archive WHERE site = ? "
            "ORDER BY fetched_at DESC, id DESC LIMIT ?)",
            (site, site, keep),
        )
    ]
    db.execute(
        "DELETE FROM tdmrep_archive WHERE site = ? AND id NOT IN (SELECT id FROM "
        "tdmrep_archive WHERE site = ? ORDER BY fetched_at DESC, id DESC LIMIT ?)",
        (site, site, keep),
    )
    drop_unnamed(db, shas)

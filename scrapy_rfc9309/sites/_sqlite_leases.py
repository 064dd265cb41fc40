"""The SQLite store's leases: which process fetches a site's robots.txt, until when. Pure.

A lease is a row of ``leases`` (site, holder, until), taken in a
``BEGIN IMMEDIATE`` transaction so that one process at a time holds it
across the processes sharing the file; an expired lease, or one whose holder
is known to be gone (a killed process of this host), is taken over.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from ._sqlite_file import write
from ._store import holder_is_gone

__all__ = ["SQLiteLeases"]

#: sites per ``IN (...)`` query (well under SQLite's limit on parameters)
CHUNK = 500


class SQLiteLeases:
    """Takes, reads and gives up leases on a store's connection (see the module
    docstring); SQLite errors are the caller's to report."""

    def __init__(self, db: sqlite3.Connection, clock: Callable[[], float]) -> None:
        self._db = db
        self._clock = clock

    @staticmethod
    def held(lease: tuple[str, float] | None, holder: str, now: float) -> bool:
        """Whether ``lease`` (holder, until) keeps ``holder`` out at ``now``."""
        return (
            lease is not None
            and lease[0] != holder
            and lease[1] > now
            and not holder_is_gone(lease[0])  # a killed process of this host
        )

    @staticmethod
    def take(db: sqlite3.Connection, site: str, holder: str, until: float) -> None:
        """Within a write transaction: ``holder``'s lease on ``site`` until ``until``."""
        db.execute(
            "INSERT INTO leases (site, holder, until) VALUES (?, ?, ?) "
            "ON CONFLICT(site) DO UPDATE SET holder = excluded.holder, "
            "until = excluded.until",
            (site, holder, until),
        )

    def leases_of(self, sites: Sequence[str]) -> dict[str, tuple[str, float]]:
        """The leases (holder, until) of ``sites``, in few queries."""
        leases: dict[str, tuple[str, float]] = {}
        for start in range(0, len(sites), CHUNK):
            chunk = list(sites[start : start + CHUNK])
            marks = ", ".join("?" * len(chunk))
            for site, holder, until in self._db.execute(
                f"SELECT site, holder, until FROM leases WHERE site IN ({marks})", chunk
            ):
                leases[str(site)] = (str(holder), float(until))
        return leases

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        """Whether ``holder`` now holds the site's lease for ``seconds``."""
        now = self._clock()
        with write(self._db) as db:
            row = db.execute("SELECT holder, until FROM leases WHERE site = ?", (site,)).fetchone()
            if row is not None and self.held((str(row[0]), float(row[1])), holder, now):
                return False
            self.take(db, site, holder, now + seconds)
            return True

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""
        row = self._db.execute(
            "SELECT holder, until FROM leases WHERE site = ?", (site,)
        ).fetchone()
        if row is None or float(row[1]) <= self._clock():
            return None
        return str(row[0]), float(row[1]) - self._clock()

    def release(self, site: str, holder: str) -> None:
        """Give ``holder``'s lease on ``site`` up."""
        with write(self._db) as db:
            self.release_in(db, site, holder)

    @staticmethod
    def release_in(db: sqlite3.Connection, site: str, holder: str) -> None:
        """Within a write transaction: give ``holder``'s lease on ``site`` up."""
        db.execute("DELETE FROM leases WHERE site = ? AND holder = ?", (site, holder))

"""The SQLite store's leases: which process fetches a site's robots.txt, until when. Pure.

A lease is a row of ``leases`` (site, holder, until), taken in a
``BEGIN IMMEDIATE`` transaction so that one process at a time holds it
across the processes sharing the file; an expired lease, or one whose holder
is known to be gone (a killed process of this host), is taken over.

A lease's expiry is not trusted: one that is not a time, or lies further
ahead than the lease time asked for plus ``FUTURE_SKEW_SECONDS`` (a skewed
clock, a damaged row: the site would be waited for until then), is given the
lease time from now (one WARNING), then expires as any other.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence

from ._records import FUTURE_SKEW_SECONDS, iso_time
from ._sqlite_file import write
from ._store import BadRecords, holder_is_gone

__all__ = ["SQLiteLeases"]

#: sites per ``IN (...)`` query (well under SQLite's limit on parameters)
CHUNK = 500

#: a lease as read: (holder, until); ``until`` as stored, not trusted yet
_Lease = tuple[str, object]


class SQLiteLeases:
    """Takes, reads and gives up leases on a store's connection (see the module
    docstring); SQLite errors are the caller's to report."""

    def __init__(self, db: sqlite3.Connection, clock: Callable[[], float], bad: BadRecords) -> None:
        self._db = db
        self._clock = clock
        self._bad = bad

    def held(
        self,
        db: sqlite3.Connection,
        site: str,
        lease: _Lease | None,
        holder: str,
        now: float,
        seconds: float,
    ) -> bool:
        """Within a write transaction: whether ``lease`` (holder, until) keeps
        ``holder`` out at ``now``; an expiry not trusted is first given ``seconds``
        from ``now`` (:meth:`trusted_until`)."""
        if lease is None or lease[0] == holder:
            return False
        if holder_is_gone(lease[0]):  # a killed process of this host
            return False
        return self.trusted_until(db, site, lease, now, seconds) > now

    def trusted_until(
        self, db: sqlite3.Connection, site: str, lease: _Lease, now: float, seconds: float
    ) -> float:
        """Within a write transaction: when ``lease`` expires. One whose expiry is
        not a time, or lies more than ``seconds`` + ``FUTURE_SKEW_SECONDS`` ahead,
        is given ``seconds`` from ``now`` (stored; one WARNING)."""
        holder, until = lease
        if isinstance(until, (int, float)) and not isinstance(until, bool):
            if math.isfinite(until) and until <= now + seconds + FUTURE_SKEW_SECONDS:
                return float(until)
            problem = f"held by {holder} until {iso_time(until)}, beyond any lease time"
        else:
            problem = f"held by {holder} has an expiry that is not a time ({until!r:.40})"
        db.execute("UPDATE leases SET until = ? WHERE site = ?", (now + seconds, site))
        self._bad.lease(site, problem, f"it now expires in {seconds:g} s, then is taken over")
        return now + seconds

    @staticmethod
    def take(db: sqlite3.Connection, site: str, holder: str, until: float) -> None:
        """Within a write transaction: ``holder``'s lease on ``site`` until ``until``."""
        db.execute(
            "INSERT INTO leases (site, holder, until) VALUES (?, ?, ?) "
            "ON CONFLICT(site) DO UPDATE SET holder = excluded.holder, "
            "until = excluded.until",
            (site, holder, until),
        )

    def leases_of(self, sites: Sequence[str]) -> dict[str, _Lease]:
        """The leases (holder, until as stored) of ``sites``, in few queries."""
        leases: dict[str, _Lease] = {}
        for start in range(0, len(sites), CHUNK):
            chunk = list(sites[start : start + CHUNK])
            marks = ", ".join("?" * len(chunk))
            for site, holder, until in self._db.execute(
                f"SELECT site, holder, until FROM leases WHERE site IN ({marks})", chunk
            ):
                leases[str(site)] = (str(holder), until)
        return leases

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        """Whether ``holder`` now holds the site's lease for ``seconds``."""
        now = self._clock()
        with write(self._db) as db:
            row = db.execute("SELECT holder, until FROM leases WHERE site = ?", (site,)).fetchone()
            lease = None if row is None else (str(row[0]), row[1])
            if self.held(db, site, lease, holder, now, seconds):
                return False
            self.take(db, site, holder, now + seconds)
            return True

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""
        row = self._db.execute(
            "SELECT holder, until FROM leases WHERE site = ?", (site,)
        ).fetchone()
        if row is None:
            return None
        until, now = row[1], self._clock()
        if isinstance(until, bool) or not isinstance(until, (int, float)):
            return None  # not trusted: given a time at the next look-up
        if not math.isfinite(until) or until <= now:
            return None
        return str(row[0]), float(until) - now

    def release(self, site: str, holder: str) -> None:
        """Give ``holder``'s lease on ``site`` up."""
        with write(self._db) as db:
            self.release_in(db, site, holder)

    @staticmethod
    def release_in(db: sqlite3.Connection, site: str, holder: str) -> None:
        """Within a write transaction: give ``holder``'s lease on ``site`` up."""
        db.execute("DELETE FROM leases WHERE site = ? AND holder = ?", (site, holder))

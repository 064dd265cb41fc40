"""Keeping robots.txt fetches across runs and processes: the store interface. Pure.

RFC 9309 2.4: a crawler may cache a robots.txt (for up to 24 hours unless it
is unreachable); HTTP: The Definitive Guide ch. 9: robots should not refetch
the file before every access. A store keeps each site's latest fetch so that
a restarted crawl, or another process crawling the same sites, uses it
instead of downloading it again, and keeps every fetch in an archive (what a
site's robots.txt said at a given time).

No Scrapy, no Twisted: every call blocks, and the Scrapy glue makes them off
the reactor thread. ``_store_uri.open_store`` opens the store
``ROBOTSTXT_STORE_URI`` names.

The store keeps each site's ``/.well-known/tdmrep.json`` fetches too (W3C
TDMRep, read when a declared purpose needs it), in an archive of their own
with the same record form and the same bounds (``ROBOTSTXT_STORE_ARCHIVE``),
so that ``scrapy robotstxt --at`` decides those purposes as the crawl did.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

__all__ = [
    "BadRecords",
    "FetchRecord",
    "Looked",
    "NoStore",
    "RobotsStore",
    "StoreBusy",
    "StoreError",
]

logger = logging.getLogger("scrapy_rfc9309.store")


class StoreError(Exception):
    """The store failed: disk, lock, corrupt file, connection. Nothing else escapes a store."""


class NoStore(StoreError):
    """A store opened read-only (a report) that does not exist: none was ever
    written there, and a report never makes one."""


class StoreBusy(StoreError):
    """A store connection that never waits met a lock (another process's or
    connection's write, a checkpoint): nothing was changed; the call can be
    made again on a connection that waits."""


class FetchRecord(NamedTuple):
    """One robots.txt (or tdmrep.json) fetch as the archive keeps it (all times are Unix times)."""

    #: ``"https://example.com:443"`` as ``sites._site.site_of`` gives
    site: str
    #: wall clock, ``time.time()``
    fetched_at: float
    #: URLs requested and their statuses (RFC 9309 2.3.1.2 redirects)
    chain: tuple[tuple[str, int | None], ...]
    #: ``Kind.value``: parsed / unavailable / unreachable / restricted / internal_error
    kind: str
    #: ``"HTTP 404"``, ``"ConnectError"``, ...
    detail: str
    #: what set the expiry (``"Cache-Control: max-age=3600"``, ...)
    lifetime: str
    #: wall clock
    expires_at: float
    retry_after: bool
    #: bytes of body kept (after decoding, at most ``ROBOTSTXT_MAX_SIZE``)
    size: int
    #: hex digest of the body; ``None`` when no body
    sha256: str | None
    #: the final HTTP status (the response that decided ``kind``); ``None``: no
    #: response, or a record saved before this was kept
    status: int | None = None
    #: whether the body was cut at ``max_size`` (RFC 9309 2.5); ``None``: not known
    #: (a record saved before this was kept)
    truncated: bool | None = None
    #: the ``ROBOTSTXT_MAX_SIZE`` of the crawl that fetched it; ``None``: not known
    max_size: int | None = None


#: A look-up's answer for one site: ``("fresh", (record, body))`` (or
#: ``("fresh", None)``: the body to be read by a later call), ``("lease", ...)``:
#: the caller now holds the site's lease, ``("held", ...)``: another holder has it.
Looked = tuple[str, "tuple[FetchRecord, bytes | None] | None"]


@runtime_checkable
class RobotsStore(Protocol):
    """Where robots.txt fetches are kept; every method may raise ``StoreError``.

    A store subclasses this class: the batch operations the crawl uses
    (:meth:`look_many`, :meth:`save_many`, :meth:`fresh_records`,
    :meth:`non_waiting`, :meth:`lease_of`, :attr:`timeout`) have a default
    here made of the single-site methods, which a store overrides when it can
    do better (one transaction for many sites).
    """

    #: for logs, without credentials
    uri: str
    #: Whether :meth:`look_many` and :meth:`save_many` make one transaction for
    #: many sites (the crawl then batches the sites met together); a store that
    #: does not is asked one site at a time, each call bounded by :attr:`timeout`.
    batches: bool = False
    #: Whether :meth:`look_many` and :meth:`save_many` ask for many sites in a
    #: few round trips (not one transaction): the crawl then batches the sites
    #: met together too, each batch's look-up bounded by :attr:`timeout`.
    pipelines: bool = False

    @property
    def timeout(self) -> float | None:
        """How long one call may wait for an answer (seconds); ``None``: not bounded."""
        return None

    def current(self, site: str) -> tuple[FetchRecord, bytes | None] | None:
        """The latest record of the site, with its body (``None`` when none); expired or not."""
        ...

    def save(self, record: FetchRecord, body: bytes | None) -> None:
        """Make ``record`` the site's current record and append it to the archive.

        The body is kept once per sha256 (content-addressed, compressed).
        """
        ...

    def history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        """The site's records, newest first."""
        ...

    def at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        """The record in force at ``when``: the newest ``fetched_at <= when``."""
        ...

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        """Take the lease on the site's fetch for ``seconds``.

        True if ``holder`` now holds it (it was free, expired or already its
        own); atomic across processes. The fetch happens only under a lease.
        """
        ...

    def release(self, site: str, holder: str) -> None:
        """Give the lease up, only if ``holder`` holds it."""
        ...

    def close(self) -> None: ...

    # -- tdmrep.json copies: a store that keeps none answers as one with none ------

    def save_tdmrep_many(self, records: Sequence[tuple[FetchRecord, bytes | None]]) -> None:
        """Append each tdmrep.json fetch (its record and body) to its site's tdmrep.json
        archive, kept as ``ROBOTSTXT_STORE_ARCHIVE`` says; this default keeps none."""

    def tdmrep_history(self, site: str, limit: int = 100) -> list[FetchRecord]:
        """The site's tdmrep.json records, newest first; this default: none."""
        return []

    def tdmrep_at(self, site: str, when: float) -> tuple[FetchRecord, bytes | None] | None:
        """The site's tdmrep.json record in force at ``when`` (the newest
        ``fetched_at <= when``), with its body; ``None``: none kept."""
        return None

    # -- batch operations: defaults made of the single-site ones -------------------

    def look_many(
        self,
        sites: Sequence[str],
        holder: str,
        seconds: float,
        fresh: Callable[[FetchRecord], bool],
        bodies: bool = True,
    ) -> dict[str, Looked]:
        """For each site: ``("fresh", (record, body))`` when its current record is
        ``fresh``; else ``("lease", ...)`` with ``holder``'s lease on its fetch
        taken for ``seconds``; else ``("held", ...)``: another holder has it.

        This default asks one site at a time; the record is read again once the
        lease is taken, so a record another process saved meanwhile is used.
        ``bodies`` is a hint (a store may answer ``("fresh", None)`` without it).
        """
        return {
            site: self.look_found(site, self.current(site), holder, seconds, fresh)
            for site in dict.fromkeys(sites)
        }

    def look_found(
        self,
        site: str,
        found: tuple[FetchRecord, bytes | None] | None,
        holder: str,
        seconds: float,
        fresh: Callable[[FetchRecord], bool],
    ) -> Looked:
        """What :meth:`look_many` answers for ``site`` whose current record is
        ``found``: it, when fresh; else the lease taken (the record read again
        once taken: another process may have saved one meanwhile); else held."""
        if found is not None and fresh(found[0]):
            return ("fresh", found)
        if not self.acquire(site, holder, seconds):
            return ("held", found)
        again = self.current(site)
        if again is not None and fresh(again[0]):
            self.release(site, holder)
            return ("fresh", again)
        return ("lease", again or found)

    def save_many(
        self,
        records: Sequence[tuple[FetchRecord, bytes | None]],
        release: Iterable[str],
        holder: str,
    ) -> None:
        """Save ``records`` (as :meth:`save` does each), then give up ``holder``'s
        leases on the ``release`` sites. This default saves one at a time; a save
        that fails other than with ``StoreError`` still gives the leases up (a
        ``StoreError`` does not: the store would make the release wait as long)."""
        try:
            for record, body in records:
                self.save(record, body)
        except StoreError:
            raise
        except Exception:
            for site in release:
                try:
                    self.release(site, holder)
                except Exception:  # the save's error is the one reported
                    break
            raise
        for site in release:
            self.release(site, holder)

    def fresh_records(
        self, limit: int, fresh: Callable[[FetchRecord], bool]
    ) -> dict[str, tuple[FetchRecord, bytes | None]]:
        """Every site's current record that is ``fresh``, with its body, in one read;
        ``{}`` when the store keeps more than ``limit`` sites, or (this default)
        cannot read them all at once."""
        return {}

    def non_waiting(self) -> RobotsStore | None:
        """A second connection whose calls never wait for a lock (:class:`StoreBusy`
        at once), for look-ups made where nothing may wait; ``None``: none."""
        return None

    def site_count(self) -> int | None:
        """How many sites have a current record; ``None``: not known cheaply."""
        return None

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``:
        nobody, or not known."""
        return None

    def report_bad_records(self, listener: Callable[[str, str], None]) -> None:
        """Tell ``listener(site, problem)`` (on the thread that read it) of each
        stored record or lease read from now on that cannot be trusted, beyond
        the WARNING the store logs for it; this default tells of none."""


class BadRecords:
    """Where a store says it met a stored record or lease it cannot trust (a
    malformed row, a body that does not decompress or does not match its
    digest, JSON that does not decode, a lease without a usable expiry): one
    WARNING each, and the listener told (a crawl counts them)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.listener: Callable[[str, str], None] | None = None

    def record(self, site: str, problem: str) -> None:
        """A record of ``site`` not used because ``problem``."""
        logger.warning(
            "robots.txt store %s: the record of %s cannot be used (%s); ignored "
            "(a crawl fetches the site's robots.txt again)",
            self.uri,
            site,
            problem,
        )
        self._tell(site, problem)

    def lease(self, site: str, problem: str, done: str) -> None:
        """The lease of ``site`` not trusted as it was because ``problem``; ``done``:
        what the store did about it."""
        logger.warning("robots.txt store %s: the lease on %s %s; %s", self.uri, site, problem, done)
        self._tell(site, problem)

    def _tell(self, site: str, problem: str) -> None:
        if self.listener is not None:
            self.listener(site, problem)


#: Characters of an error message a log line shows (the start and the end kept).
ERROR_SHOWN = 300


def describe_error(exc: BaseException, limit: int = ERROR_SHOWN) -> str:
    """``Class: message`` for a log line: printable and at most about ``limit``
    characters, never empty.

    A store's error may quote what it was sent (redis-py names a failed
    pipeline command with its arguments: compressed bodies); characters that
    are not printable are escaped, and a long message keeps its start and its
    end (where the server's own words are).
    """
    text = str(exc)
    if len(text) > 4 * limit:  # escaping grows a text at most fourfold
        text = text[: 2 * limit] + text[-2 * limit :]
    shown = "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
    if len(shown) > limit:
        half = limit // 2
        shown = f"{shown[:half]} ... {shown[-half:]}"
    name = type(exc).__name__
    return f"{name}: {shown}" if shown else name


def holder_is_gone(holder: str) -> bool:
    """Whether a lease holder (``host:pid:tag``) is a process of this host that no
    longer exists, so its lease can be taken over at once instead of waiting for
    it to expire. A holder of another host, or one that cannot be read, is not."""
    host, sep, _tag = holder.rpartition(":")
    host, sep2, pid_text = host.rpartition(":")
    if not (sep and sep2) or host != socket.gethostname():
        return False
    if not (pid_text.isascii() and pid_text.isdigit()) or len(pid_text) > 9:
        return False
    pid = int(pid_text)
    if pid <= 0 or pid == os.getpid():
        return False
    return not _process_alive(pid)


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs (POSIX).

    A zombie (exited, not yet reaped by its parent) passes ``kill(pid, 0)``
    but holds nothing: on Linux its ``/proc/<pid>/stat`` state is ``Z``, and
    it counts as gone. On Windows no check is made (signal 0 there is
    ``CTRL_C_EVENT``, which would interrupt the process): the lease expires.
    """
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by another user; or not ours to ask
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """Linux ``/proc/<pid>/stat``: the state after the command name is ``Z``
    (the name, in parentheses, may hold anything: read after its last ``)``).
    ``False`` where there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read(4096)
    except OSError:
        return False
    fields = text[text.rfind(b")") + 1 :].split()
    return bool(fields) and fields[0] == b"Z"

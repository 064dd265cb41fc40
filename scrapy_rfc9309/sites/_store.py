"""Keeping robots.txt fetches across runs and processes: the store interface. Pure.

RFC 9309 2.4: a crawler may cache a robots.txt (for up to 24 hours unless it
is unreachable); HTTP: The Definitive Guide ch. 9: robots should not refetch
the file before every access. A store keeps each site's latest fetch so that
a restarted crawl, or another process crawling the same sites, uses it
instead of downloading it again, and keeps every fetch in an archive (what a
site's robots.txt said at a given time).

No Scrapy, no Twisted: every call blocks, and the Scrapy glue makes them off
the reactor thread. ``open_store`` reads ``ROBOTSTXT_STORE_URI``.
"""

from __future__ import annotations

import importlib
import os
import socket
from typing import NamedTuple, Protocol, runtime_checkable

__all__ = ["FetchRecord", "RobotsStore", "StoreBusy", "StoreError", "open_store"]

SETTING = "ROBOTSTXT_STORE_URI"


class StoreError(Exception):
    """The store failed: disk, lock, corrupt file, connection. Nothing else escapes a store."""


class StoreBusy(StoreError):
    """A store connection that never waits met a lock (another process's or
    connection's write, a checkpoint): nothing was changed; the call can be
    made again on a connection that waits."""


class FetchRecord(NamedTuple):
    """One robots.txt fetch as the archive keeps it (all times are Unix times)."""

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


@runtime_checkable
class RobotsStore(Protocol):
    """Where robots.txt fetches are kept; every method may raise ``StoreError``."""

    #: for logs, without credentials
    uri: str

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


def open_store(
    uri: str,
    *,
    data_dir: str,
    redis_url: str | None = None,
    redis_prefix: str | None = None,
    read_only: bool = False,
) -> RobotsStore:
    """The store ``ROBOTSTXT_STORE_URI`` names.

    ``sqlite:///abs/path`` or ``sqlite:///rel/path`` (relative: under
    ``data_dir``, the project's ``.scrapy`` data directory); ``redis://...``,
    ``rediss://...``, or ``redis`` (scrapy-redis's ``REDIS_URL``, passed in as
    ``redis_url``). Anything else: ``ValueError`` naming the setting. A store
    that cannot be opened: ``StoreError``.

    SQLite paths follow SQLAlchemy's spelling: three slashes then a relative
    path, four slashes for an absolute one. A Redis backend module provides
    ``open_redis_store(url) -> RobotsStore`` (or a ``RedisStore(url)`` class);
    ``redis_prefix`` (``ROBOTSTXT_STORE_PREFIX``) is passed to it as ``prefix=``.
    A SQLite URI takes no query string or fragment (``?mode=ro`` would be part
    of the file name): ``ValueError``. ``read_only`` (reports): a SQLite file is opened
    read-only and never made.
    """
    text = uri.strip() if isinstance(uri, str) else uri
    if not isinstance(text, str) or not text:
        raise ValueError(
            f"{SETTING} must be a store URI such as 'sqlite:///robots.db', got {uri!r}"
        )
    if text.startswith("sqlite://"):
        rest = text[len("sqlite://") :]
        if not rest.startswith("/") or len(rest) < 2:
            raise ValueError(
                f"{SETTING}: {uri!r} is not a SQLite URI; write sqlite:///relative/path "
                "(under the project data directory) or sqlite:////absolute/path"
            )
        path = rest[1:]
        if "?" in path or "#" in path:
            raise ValueError(
                f"{SETTING}: {uri!r}: a SQLite URI takes no query string or fragment "
                "(options such as ?mode=ro are not supported); write sqlite:///path only"
            )
        if "\x00" in path:
            raise ValueError(f"{SETTING}: {uri!r}: a file name cannot hold a NUL character")
        if not os.path.isabs(path):
            path = os.path.join(data_dir, path)
        from ._sqlite_store import SQLiteStore

        return SQLiteStore(path, read_only=read_only)
    if text == "redis" or text.startswith(("redis://", "rediss://")):
        if text == "redis":
            if not redis_url:
                raise ValueError(
                    f"{SETTING} = 'redis' uses scrapy-redis's REDIS_URL, which is not set"
                )
            text = redis_url
        try:
            module = importlib.import_module("scrapy_rfc9309.sites._redis_store")
        except ImportError as exc:
            raise StoreError(
                f"{SETTING} names a Redis store, which needs the redis package: "
                f"pip install scrapy-rfc9309[redis] ({exc})"
            ) from exc
        opener = getattr(module, "open_redis_store", None) or module.RedisStore
        # ROBOTSTXT_STORE_PREFIX: the start of the store's keys (None: the default)
        store: RobotsStore = (
            opener(text) if redis_prefix is None else opener(text, prefix=redis_prefix)
        )
        return store
    raise ValueError(
        f"{SETTING}: {uri!r} is not a store URI; use sqlite:///path or redis://host:port/db"
    )

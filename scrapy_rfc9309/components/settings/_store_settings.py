"""The store's and the cluster's settings: where robots.txt is kept, and the shared delay.

``ROBOTSTXT_STORE_URI`` and the settings opening a store needs
(:class:`StoreSettings`), and the cluster-wide delay (:class:`ClusterDelaySettings`),
read at start-up; an invalid value raises :class:`~._setting_values.SettingError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from ...sites._store_uri import is_redis_uri, needs_data_dir, open_store, without_password
from ._setting_values import SettingError, read_delay_bound, read_number
from ._settings import crawl_delay_on

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from ...sites._store import RobotsStore

__all__ = ["ClusterDelaySettings", "StoreSettings", "store_archive"]


#: Seconds a send is kept in flight in Redis past ``DOWNLOAD_TIMEOUT``: the
#: answer's call to Redis, made after the response, on a lane of its own.
FLIGHT_MARGIN = 10.0
#: Seconds a lease on a site's fetch outlives ``DOWNLOAD_TIMEOUT``.
STORE_LEASE_MARGIN = 30.0


@dataclass(frozen=True)
class StoreSettings:
    """``ROBOTSTXT_STORE_URI`` and what opening the store needs, read at start-up."""

    #: ``None``: no store, robots.txt outcomes are kept in memory only
    uri: str | None
    #: the project's ``.scrapy`` data directory (relative SQLite paths go there)
    data_dir: str
    #: scrapy-redis's ``REDIS_URL`` (for ``ROBOTSTXT_STORE_URI = "redis"``)
    redis_url: str | None
    #: seconds a lease on a site's fetch lasts: ``DOWNLOAD_TIMEOUT`` + 30
    lease_seconds: float
    #: ``ROBOTSTXT_STORE_PREFIX``: the Redis store's keys start with it
    redis_prefix: str = "robotstxt:"
    #: ``ROBOTSTXT_STORE_ARCHIVE``: records kept per site, the current one
    #: included; ``None``: all (``"all"``), ``0``: the current one only (``"off"``)
    archive: int | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings, uri: str | None = None) -> StoreSettings:
        """``uri``: a store named elsewhere (``scrapy robotstxt --store``), read
        with the project's other store settings instead of ``ROBOTSTXT_STORE_URI``."""
        raw = uri if uri else settings.get("ROBOTSTXT_STORE_URI")
        if raw is not None and not isinstance(raw, str):
            raise SettingError(
                f"ROBOTSTXT_STORE_URI must be a URI such as 'sqlite:///robots.db', got {raw!r}"
            )
        uri = raw.strip() if raw else None
        # The store's other settings are checked whether or not a store is
        # named: a bad value stops the crawl now, not once a store is added.
        archive, prefix = store_archive(settings), _store_prefix(settings)
        if not uri:  # no store: nothing else is read, the crawl is as before
            return cls(uri=None, data_dir="", redis_url=None, lease_seconds=0.0)
        redis_url = settings.get("REDIS_URL")
        timeout = read_number(settings, "DOWNLOAD_TIMEOUT", 180.0, integer=False)
        _check_redis_client(uri)
        return cls(
            uri=uri,
            data_dir=_data_dir(uri),
            redis_url=str(redis_url) if redis_url else None,
            lease_seconds=timeout + STORE_LEASE_MARGIN,
            redis_prefix=prefix,
            archive=archive,
        )

    def open(self, *, read_only: bool = False) -> RobotsStore:
        """The store :attr:`uri` names (:func:`~scrapy_rfc9309.sites._store_uri.open_store`),
        with the project's data directory, ``REDIS_URL`` and prefix: what the
        crawl, ``prune``, ``--at`` / ``history`` and the command's look at the
        store's copy each open. ``read_only``: a SQLite file is opened read-only
        and never made, and nothing is pruned (the archive limit applies to a
        store opened for writing). Raises as ``open_store`` does."""
        if self.uri is None:
            raise ValueError("no store: ROBOTSTXT_STORE_URI is not set")
        return open_store(
            self.uri,
            data_dir=self.data_dir,
            redis_url=self.redis_url,
            redis_prefix=self.redis_prefix,
            read_only=read_only,
            archive=None if read_only else self.archive,
        )


def _check_redis_client(uri: str) -> None:
    """A Redis store needs the ``redis`` package (the ``[redis]`` extra): said at
    start-up, naming the setting and what to install, before any component
    (the store, the cluster pacer, the command) imports it."""
    if not is_redis_uri(uri):
        return
    try:
        import redis  # noqa: F401 (the store imports it)
    except ImportError as exc:
        raise SettingError(
            f"ROBOTSTXT_STORE_URI = {without_password(uri)!r} names a Redis store, which "
            "needs the redis package: pip install redis (the [redis] extra of "
            f"scrapy-rfc9309) ({exc})"
        ) from None


def _data_dir(uri: str) -> str:
    """The project's ``.scrapy`` data directory, located only for a SQLite file
    named by a relative path (``""`` for every other store).

    Scrapy locates it from ``scrapy.cfg``; a project run from
    ``SCRAPY_SETTINGS_MODULE`` alone has none, and Scrapy's ``data_path`` then
    raises ``NotConfigured``, which would make Scrapy disable the components
    that read this setting (robots.txt silently not obeyed): a
    :class:`SettingError` naming the setting stops the crawl instead.
    """
    from scrapy.utils.project import data_path

    if not needs_data_dir(uri):
        return ""
    try:
        return data_path(".")
    except (NotConfigured, OSError) as exc:
        raise SettingError(
            f"ROBOTSTXT_STORE_URI = {uri!r} names a SQLite file by a relative path, which "
            f"goes in the project's data directory, but that directory cannot be located "
            f"({exc}). Write an absolute path (sqlite:////var/lib/crawl/robots.db), or run "
            "the crawl from a project with a scrapy.cfg"
        ) from None


#: ``ROBOTSTXT_STORE_PREFIX``'s default.
DEFAULT_STORE_PREFIX = "robotstxt:"


def store_archive(settings: BaseSettings) -> int | None:
    """``ROBOTSTXT_STORE_ARCHIVE``: ``"all"`` (the default: every fetch kept),
    ``"off"`` (the current record of each site only: ``0``), or a positive
    integer N (each site's last N records, the current one included)."""
    raw = settings.get("ROBOTSTXT_STORE_ARCHIVE")
    if raw is None:
        return None
    text = raw.strip().lower() if isinstance(raw, str) else raw
    if text == "all":
        return None
    if text == "off":
        return 0
    if isinstance(text, str) and text.isascii() and text.isdigit():
        text = int(text)
    if isinstance(text, bool) or not isinstance(text, int) or not 1 <= text <= 1_000_000:
        raise SettingError(
            "ROBOTSTXT_STORE_ARCHIVE must be 'all', 'off' or a number of records to keep "
            f"per site (1 to 1000000), got {raw!r}"
        )
    return text


def _store_prefix(settings: BaseSettings) -> str:
    """``ROBOTSTXT_STORE_PREFIX``: the start of every key of the Redis store, so that
    several projects share one Redis."""
    raw = settings.get("ROBOTSTXT_STORE_PREFIX")
    if raw is None:
        return DEFAULT_STORE_PREFIX
    if not isinstance(raw, str):
        raise SettingError(f"ROBOTSTXT_STORE_PREFIX must be a string, got {raw!r}")
    return raw


@dataclass(frozen=True)
class ClusterDelaySettings:
    """Spacing a site's requests across the processes of a cluster, read at start-up."""

    #: the Redis that keeps each site's next allowed time (the store's); ``None``: off
    redis_url: str | None
    #: ``ROBOTSTXT_STORE_PREFIX``
    prefix: str
    #: ``ROBOTSTXT_CRAWL_DELAY``: a site's Crawl-delay is kept cluster-wide
    crawl_delay: bool
    #: ``ROBOTSTXT_CLUSTER_DELAY``: seconds between a site's requests for sites
    #: without a Crawl-delay; ``None``: none
    cluster_delay: float | None
    #: seconds a send is kept in flight in Redis (renewed with each beat) without
    #: its answer at most (no process is granted the site's turn meanwhile):
    #: ``DOWNLOAD_TIMEOUT`` (180 s when 0, no time-out) and :data:`FLIGHT_MARGIN`
    flight: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ClusterDelaySettings:
        raw = settings.get("ROBOTSTXT_CLUSTER_DELAY")
        cluster_delay = None
        if raw is not None:
            cluster_delay = read_delay_bound(settings, "ROBOTSTXT_CLUSTER_DELAY", 0.0) or None
        crawl_delay = crawl_delay_on(settings)
        store = StoreSettings.from_settings(settings)
        url = store.redis_url if store.uri == "redis" else store.uri
        if not (url and url.startswith(("redis://", "rediss://"))):
            url = None
        timeout = read_number(settings, "DOWNLOAD_TIMEOUT", 180.0, integer=False)
        return cls(
            redis_url=url,
            prefix=store.redis_prefix,
            crawl_delay=crawl_delay,
            cluster_delay=cluster_delay,
            flight=(timeout if timeout > 0 else 180.0) + FLIGHT_MARGIN,
        )

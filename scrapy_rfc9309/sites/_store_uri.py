"""The store ``ROBOTSTXT_STORE_URI`` names, opened: SQLite or Redis.

No Scrapy, no Twisted. The store interface is ``_store``'s; this module
reads a URI and opens the backend it names (the Redis one only when asked,
as it needs the optional ``redis`` package).
"""

from __future__ import annotations

import importlib
import os

from ._store import RobotsStore, StoreError

__all__ = [
    "SETTING",
    "BadStoreURI",
    "is_redis_uri",
    "needs_data_dir",
    "open_store",
    "without_password",
]

SETTING = "ROBOTSTXT_STORE_URI"


class BadStoreURI(ValueError):
    """``ROBOTSTXT_STORE_URI`` is not a store URI this package reads; the message
    names the setting."""


def without_password(uri: str) -> str:
    """``uri`` for messages: a password in it (``redis://:secret@host``) replaced by ``***``."""
    scheme, sep, rest = uri.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return uri
    credentials, _, host = rest.partition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else f"{scheme}://***@{host}"


def is_redis_uri(uri: str) -> bool:
    """Whether ``uri`` names a Redis store (``redis``, ``redis://``, ``rediss://``)."""
    text = uri.strip()
    return text == "redis" or text.startswith(("redis://", "rediss://"))


def needs_data_dir(uri: str) -> bool:
    """Whether ``uri`` names a SQLite file by a relative path, which
    :func:`open_store` places under the project's data directory: the only
    store that needs it located."""
    text = uri.strip()
    if not text.startswith("sqlite:///"):
        return False
    path = text[len("sqlite:///") :]
    return bool(path) and not os.path.isabs(path)


def open_store(
    uri: str,
    *,
    data_dir: str,
    redis_url: str | None = None,
    redis_prefix: str | None = None,
    read_only: bool = False,
    archive: int | None = None,
) -> RobotsStore:
    """The store ``ROBOTSTXT_STORE_URI`` names.

    ``sqlite:///abs/path`` or ``sqlite:///rel/path`` (relative: under
    ``data_dir``, the project's ``.scrapy`` data directory); ``redis://...``,
    ``rediss://...``, or ``redis`` (scrapy-redis's ``REDIS_URL``, passed in as
    ``redis_url``). Anything else: :class:`BadStoreURI` (a ``ValueError``) naming
    the setting. A store
    that cannot be opened: ``StoreError``.

    SQLite paths follow SQLAlchemy's spelling: three slashes then a relative
    path, four slashes for an absolute one. A Redis backend module provides
    ``open_redis_store(url) -> RobotsStore`` (or a ``RedisStore(url)`` class);
    ``redis_prefix`` (``ROBOTSTXT_STORE_PREFIX``) is passed to it as ``prefix=``.
    A SQLite URI takes no query string or fragment (``?mode=ro`` would be part
    of the file name): :class:`BadStoreURI`. ``read_only`` (reports): a SQLite file is opened
    read-only and never made. ``archive`` (``ROBOTSTXT_STORE_ARCHIVE``): records
    kept per site, the current one included (``None``: all; ``0``: the current one).
    """
    text = uri.strip() if isinstance(uri, str) else uri
    if not isinstance(text, str) or not text:
        raise BadStoreURI(
            f"{SETTING} must be a store URI such as 'sqlite:///robots.db', got {uri!r}"
        )
    if text.startswith("sqlite://"):
        rest = text[len("sqlite://") :]
        if not rest.startswith("/") or len(rest) < 2:
            raise BadStoreURI(
                f"{SETTING}: {uri!r} is not a SQLite URI; write sqlite:///relative/path "
                "(under the project data directory) or sqlite:////absolute/path"
            )
        path = rest[1:]
        if "?" in path or "#" in path:
            raise BadStoreURI(
                f"{SETTING}: {uri!r}: a SQLite URI takes no query string or fragment "
                "(options such as ?mode=ro are not supported); write sqlite:///path only"
            )
        if "\x00" in path:
            raise BadStoreURI(f"{SETTING}: {uri!r}: a file name cannot hold a NUL character")
        if not os.path.isabs(path):
            path = os.path.join(data_dir, path)
        from ._sqlite_store import SQLiteStore

        return SQLiteStore(path, read_only=read_only, archive=archive)
    if text == "redis" or text.startswith(("redis://", "rediss://")):
        if text == "redis":
            if not redis_url:
                raise BadStoreURI(
                    f"{SETTING} = 'redis' uses scrapy-redis's REDIS_URL, which is not set"
                )
            text = redis_url
        try:
            module = importlib.import_module("scrapy_rfc9309.sites._redis_store")
        except ImportError as exc:
            raise StoreError(
                f"{SETTING} names a Redis store, which needs the redis package: "
                f"pip install redis (the [redis] extra of scrapy-rfc9309) ({exc})"
            ) from exc
        opener = getattr(module, "open_redis_store", None) or module.RedisStore
        # ROBOTSTXT_STORE_PREFIX: the start of the store's keys (None: the default)
        options: dict[str, object] = {} if redis_prefix is None else {"prefix": redis_prefix}
        if archive is not None:
            options["archive"] = archive
        store: RobotsStore = opener(text, **options)
        return store
    raise BadStoreURI(
        f"{SETTING}: {uri!r} is not a store URI; use sqlite:///path or redis://host:port/db"
    )

"""Connecting to Redis (one server or a Redis Cluster) for the robots.txt store. Pure.

Every failure to connect is a ``StoreError`` saying why: an address that
does not read, credentials refused, an error reply, or a Redis that cannot
be reached. The address is shown without user name, password or query
(:func:`public_uri`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ._store import StoreError

__all__ = ["DEFAULT_TIMEOUT", "cluster_client", "cluster_enabled", "connect", "public_uri"]

#: Seconds to connect, and to wait for a reply, unless the URL says otherwise
#: (``?socket_timeout=...&socket_connect_timeout=...``): a Redis that hangs
#: fails a call instead of holding it forever.
DEFAULT_TIMEOUT = 5.0


def public_uri(url: str) -> str:
    """``url`` for logs: without user name, password or query (which may hold a password)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return f"{url.split('://', 1)[0]}://(unreadable address)"
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))


def connect(url: str, timeout: float, client: redis.Redis | None = None) -> tuple[Any, bool]:
    """(client, cluster): a client of the Redis at ``url`` that answered a ping, and
    whether it is a Redis Cluster (then a cluster client); ``client``: the one to
    use instead (never taken for a cluster). ``StoreError`` when it cannot be used."""
    uri = public_uri(url)
    try:
        connection: Any = client or redis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # One quick retry on a connection error: a connection that
            # Redis closed (a restart) is replaced; a Redis that is down
            # fails the call at once, one that hangs after one timeout.
            retry=Retry(
                ExponentialBackoff(cap=0.2, base=0.05),
                1,
                supported_errors=(redis.ConnectionError,),
            ),
        )
    except (ValueError, TypeError) as exc:
        raise StoreError(f"cannot read the Redis address {uri}: {exc}") from exc
    try:
        connection.ping()
    except (redis.AuthenticationError, redis.exceptions.NoPermissionError) as exc:
        # Redis answered: a missing or wrong password (or user without the
        # right) is not an unreachable Redis.
        connection.close()
        raise StoreError(f"Redis at {uri} refused the credentials: {exc}") from exc
    except redis.ResponseError as exc:
        connection.close()
        if str(exc).startswith(("NOAUTH", "WRONGPASS", "NOPERM")):
            raise StoreError(f"Redis at {uri} refused the credentials: {exc}") from exc
        raise StoreError(f"Redis at {uri} answered with an error: {exc}") from exc
    except (redis.RedisError, OSError) as exc:
        connection.close()
        raise StoreError(f"cannot reach Redis at {uri}: {exc}") from exc
    cluster = client is None and cluster_enabled(connection)
    if cluster:
        connection.close()
        connection = cluster_client(url, timeout, uri)
    return connection, cluster


def cluster_enabled(client: Any) -> bool:
    """Whether the Redis ``client`` talks to is a node of a Redis Cluster."""
    try:
        info = client.info("cluster")
    except (redis.RedisError, OSError):  # not allowed to ask: taken for one server
        return False
    return bool(isinstance(info, dict) and info.get("cluster_enabled") == 1)


def cluster_client(url: str, timeout: float, uri: str) -> Any:
    """A Redis Cluster client from one node's address (the others are discovered)."""
    from redis.cluster import RedisCluster

    try:
        return RedisCluster.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    except (redis.RedisError, OSError, ValueError, TypeError) as exc:
        raise StoreError(f"cannot reach the Redis Cluster at {uri}: {exc}") from exc

"""A per-site next-allowed-time kept in Redis, so that a cluster of crawler
processes spaces a site's requests as one crawler would. Pure (no Scrapy).

``Crawl-delay`` is not part of RFC 9309; a site that asks for it asks it of
the crawler, not of each of its processes. Each site has a key,
``{prefix}next:{<site>}`` (the site between braces: a Redis Cluster hash tag,
so that a site's keys share a slot), holding the earliest time (Redis's own
clock, in milliseconds) at which the next request of the site may be sent.
One Lua script reads and moves it, atomic across every process::

    if now >= next then next = now + delay; return 0 else return next - now

so that grants are at least ``delay`` apart whatever the number of
processes. Redis's clock is used, not the processes': their clocks need not
agree. A key expires by itself a second after its time has passed.

The turn counts from the send, not from the grant: a turn granted with a
token (:meth:`ClusterClock.take` at the scheduler, a reservation) is
confirmed with it just before the request is sent
(:meth:`ClusterClock.send`), which moves the site's next time to ``send +
delay``. ``{prefix}turn:{<site>}`` holds the token of the last turn granted
while it is not confirmed: a confirmation whose token is still there is the
site's latest turn (nobody was granted one since: the send goes at once);
otherwise (a later turn was granted meanwhile, or none reserved) the send
asks for a turn of its own, as a grant does.

A send is not an arrival: a busy process writes its request some time after
its confirmation. So when the site answers a request
(:meth:`ClusterClock.answered`, its response headers back), the site's next
time moves to at least ``answer + delay``, and a turn granted before and not
yet confirmed is withdrawn (its confirmation then asks for a turn of its own,
and waits)::

    if now + delay > next then next = now + delay; del turn

The site received the request before answering it, so every later grant
comes at least the delay after its arrival at the site.

Every failure of Redis raises ``StoreError`` (the caller then spaces requests
per process, as without a cluster).
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import redis

from ._store import StoreError

__all__ = ["MAX_DELAY_MS", "ClusterClock", "delay_key", "delay_ms", "turn_key"]

#: The longest delay kept in Redis: a day (``ROBOTSTXT_CRAWL_DELAY_MAX`` and
#: ``ROBOTSTXT_CLUSTER_DELAY`` are bounded by it at start-up). Redis takes
#: ``PX`` in whole milliseconds, up to a 64-bit integer: a delay of 1e300 s
#: would fail the script at every request.
MAX_DELAY_MS = 86_400_000

#: ``KEYS[1]``: the site's next allowed time, ``KEYS[2]``: the token of its
#: turn not yet confirmed; ``ARGV[1]``: the delay in ms, ``ARGV[2]``: a token
#: (``''``: none), ``ARGV[3]``: ``'1'`` to confirm the turn of that token at
#: send. Returns 0 when the request may go now (the next time moved ``delay``
#: past now), else the milliseconds left to wait. ``redis.call('TIME')``
#: before a write needs effects replication, the default since Redis 5 (and
#: the only mode from 7).
_TURN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local delay = tonumber(ARGV[1])
local token = ARGV[2]
if ARGV[3] == '1' and token ~= '' and redis.call('GET', KEYS[2]) == token then
    redis.call('DEL', KEYS[2])
    if now + delay > nxt then
        redis.call('SET', KEYS[1], now + delay, 'PX', delay + 1000)
    end
    return 0
end
if now >= nxt then
    redis.call('SET', KEYS[1], now + delay, 'PX', delay + 1000)
    if ARGV[3] ~= '1' and token ~= '' then
        redis.call('SET', KEYS[2], token, 'PX', delay + 1000)
    else
        redis.call('DEL', KEYS[2])
    end
    return 0
end
return nxt - now
"""

#: ``KEYS`` as :data:`_TURN`; ``ARGV[1]``: the delay in ms. A request of the
#: site was answered now: its next time moved to at least ``now + delay``, a
#: turn granted before and not confirmed withdrawn. Returns 1 when it moved.
_ANSWERED = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local delay = tonumber(ARGV[1])
if now + delay > nxt then
    redis.call('SET', KEYS[1], now + delay, 'PX', delay + 1000)
    redis.call('DEL', KEYS[2])
    return 1
end
return 0
"""


def delay_ms(delay: float) -> int:
    """``delay`` seconds as the whole milliseconds the scripts take: at least 1,
    at most :data:`MAX_DELAY_MS`; a non-finite delay (never valid) is the most."""
    if not math.isfinite(delay) or delay * 1000 >= MAX_DELAY_MS:
        return MAX_DELAY_MS
    return max(1, math.ceil(delay * 1000))


def delay_key(prefix: str, site: str) -> str:
    """The key of ``site``'s next allowed time (hash-tagged on the site)."""
    return f"{prefix}next:{{{site}}}"


def turn_key(prefix: str, site: str) -> str:
    """The key of the token of ``site``'s turn granted and not yet confirmed."""
    return f"{prefix}turn:{{{site}}}"


class ClusterClock:
    """Per-site next-allowed times in one Redis (see the module docstring)."""

    def __init__(self, client: Any, prefix: str, uri: str) -> None:
        self._redis = client
        self.prefix = prefix
        self.uri = uri
        self._turn = client.register_script(_TURN)
        self._answered = client.register_script(_ANSWERED)

    @classmethod
    def open(cls, url: str, prefix: str, *, timeout: float = 1.0) -> ClusterClock:
        """A clock on the Redis at ``url``; calls fail after ``timeout`` seconds
        (they are made on the reactor: a Redis that hangs must not hold it long)."""
        from ._redis_connection import cluster_client, cluster_enabled, public_uri

        uri = public_uri(url)
        try:
            client: Any = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except (ValueError, TypeError) as exc:
            raise StoreError(f"cannot read the Redis address {uri}: {exc}") from exc
        if cluster_enabled(client):  # the site's key names its slot (hash tag)
            client.close()
            client = cluster_client(url, timeout, uri)
        return cls(client, prefix, uri)

    def take(self, site: str, delay: float, token: str = "") -> float:
        """0.0: a request of ``site`` may be sent now (the next one not before
        ``delay`` seconds); else the seconds to wait before asking again. With
        a ``token``, the turn is reserved for :meth:`send` to confirm."""
        return self._call(site, delay, token, "0")

    def send(self, site: str, delay: float, token: str = "") -> float:
        """Just before a request of ``site`` is sent: 0.0 when it may go now, its
        turn then counted from now (the turn reserved with ``token``, when no
        other turn was granted since, or a turn free now); else the seconds to
        wait before asking again."""
        return self._call(site, delay, token, "1")

    def answered(self, site: str, delay: float, token: str = "") -> float:
        """A request of ``site`` was answered now (the site received it): its next
        request not before ``delay`` seconds from now, a turn granted before and
        not yet confirmed withdrawn. Always 0.0 (``token`` is unused: the
        signature of :meth:`take`)."""
        ms = delay_ms(delay)
        keys = [delay_key(self.prefix, site), turn_key(self.prefix, site)]
        try:
            self._answered(keys=keys, args=[ms])
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(
                f"Redis at {self.uri}: moving a site's turn past an answer failed: {detail}"
            ) from exc
        return 0.0

    def _call(self, site: str, delay: float, token: str, confirm: str) -> float:
        ms = delay_ms(delay)
        keys = [delay_key(self.prefix, site), turn_key(self.prefix, site)]
        try:
            left = self._turn(keys=keys, args=[ms, token, confirm])
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(f"Redis at {self.uri}: taking a site's turn failed: {detail}") from exc
        return max(0, int(left)) / 1000

    def close(self) -> None:
        with contextlib.suppress(redis.RedisError, OSError):
            self._redis.close()

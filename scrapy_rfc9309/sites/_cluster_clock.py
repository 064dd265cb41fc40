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
(:class:`ClusterClock` takes a ``now`` of its own for tests: the scripts then
read the time from their arguments, and a test moves it on instead of
waiting; a key's expiry stays Redis's, and no decision waits for one.)

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

And until the answer, no other turn: a confirmed send leaves its token in
``{prefix}flight:{<site>}`` until its answer (or its failure) takes it out,
and no turn is granted or confirmed while it is there (the wait told is at
least the delay). Without it, a process that wrote its request late, or a
site slow to answer, let another process's turn go at ``send + delay``:
before the answer moved the time, perhaps just after the arrival. The token
lives a few seconds (the ``flight`` the clock is opened with), renewed by
its process with each beat while the request is out
(:meth:`ClusterClock.renew`): a process that dies with a request in flight
holds its site cluster-wide that long at most.

Each process also beats in ``{prefix}alive`` (a sorted set: a process's token
scored by the end of its last beat's lifetime, Redis's clock; those past it
removed), which tells it how many processes are alive and
its rank among them: while Redis is lost, a process that has held its paced
requests long enough sends them in its own share of the time only
(:mod:`scrapy_rfc9309.components.cluster._pacing_outage`).

Every failure of Redis raises ``StoreError`` (the caller then holds the paced
requests, see :mod:`scrapy_rfc9309.components.cluster._pacing`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import redis

from ._store import StoreError

__all__ = [
    "DEFAULT_FLIGHT",
    "MAX_DELAY_MS",
    "ClusterClock",
    "alive_key",
    "delay_key",
    "delay_ms",
    "flight_key",
    "turn_key",
]

#: Seconds a send's token stays in flight without being renewed, by default
#: (its process renews it with each beat, every 2 s, while the request is out).
DEFAULT_FLIGHT = 10.0

#: The longest delay kept in Redis: a day (``ROBOTSTXT_CRAWL_DELAY_MAX`` and
#: ``ROBOTSTXT_CLUSTER_DELAY`` are bounded by it at start-up). Redis takes
#: ``PX`` in whole milliseconds, up to a 64-bit integer: a delay of 1e300 s
#: would fail the script at every request.
MAX_DELAY_MS = 86_400_000

#: ``KEYS[1]``: the site's next allowed time, ``KEYS[2]``: the token of its
#: turn not yet confirmed, ``KEYS[3]``: the token of its request sent and not
#: yet answered; ``ARGV[1]``: the delay in ms, ``ARGV[2]``: a token
#: (``''``: none), ``ARGV[3]``: ``'1'`` to confirm the turn of that token at
#: send, ``ARGV[4]``: the time now in ms (``''``: Redis's own, ``TIME``),
#: ``ARGV[5]``: how long a send's token stays in flight at most, in ms.
#: Returns 0 when the request may go now (the next time moved ``delay``
#: past now; at send, the token in flight), else the milliseconds left to
#: wait. ``redis.call('TIME')`` before a write needs effects replication, the
#: default since Redis 5 (and the only mode from 7).
_TURN = """
local now = tonumber(ARGV[4])
if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local delay = tonumber(ARGV[1])
local token = ARGV[2]
local confirm = ARGV[3] == '1'
if redis.call('EXISTS', KEYS[3]) == 1 then
    return math.max(nxt - now, delay)
end
if confirm and token ~= '' and redis.call('GET', KEYS[2]) == token then
    redis.call('DEL', KEYS[2])
    if now + delay > nxt then
        redis.call('SET', KEYS[1], now + delay, 'PX', delay + 1000)
    end
    redis.call('SET', KEYS[3], token, 'PX', tonumber(ARGV[5]))
    return 0
end
if now >= nxt then
    redis.call('SET', KEYS[1], now + delay, 'PX', delay + 1000)
    if not confirm and token ~= '' then
        redis.call('SET', KEYS[2], token, 'PX', delay + 1000)
    else
        redis.call('DEL', KEYS[2])
    end
    if confirm and token ~= '' then
        redis.call('SET', KEYS[3], token, 'PX', tonumber(ARGV[5]))
    end
    return 0
end
return nxt - now
"""

#: ``KEYS`` as :data:`_TURN`; ``ARGV[1]``: the delay in ms, ``ARGV[2]``: the
#: time now in ms (``''``: Redis's ``TIME``), ``ARGV[3]``: the token of the
#: send answered (``''``: none). A request of the site was answered now: its
#: token no longer in flight, its next time moved to at least ``now + delay``,
#: a turn granted before and not confirmed withdrawn. Returns 1 when it moved.
_ANSWERED = """
local now = tonumber(ARGV[2])
if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if ARGV[3] ~= '' and redis.call('GET', KEYS[3]) == ARGV[3] then
    redis.call('DEL', KEYS[3])
end
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


#: ``KEYS[1]``: a site's flight key; ``ARGV[1]``: the token of a send, ``ARGV[2]``:
#: its new lifetime in ms. The send still in flight lives on; another's is left alone.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
return 0
"""


#: ``KEYS[1]``: the processes alive (tokens scored by the end of their last
#: beat's lifetime); ``ARGV[1]``: this process's token, ``ARGV[2]``: the
#: lifetime of its beat in ms, ``ARGV[3]``: the time now in ms (``''``:
#: Redis's ``TIME``). Returns ``{rank, count}``: this process's rank
#: (0-based, by token) among the processes alive, and their number.
_BEAT = """
local now = tonumber(ARGV[3])
if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
end
local alive = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(alive)
local rank = 0
for i, token in ipairs(alive) do
    if token == ARGV[1] then rank = i - 1 end
end
return {rank, #alive}
"""


def alive_key(prefix: str) -> str:
    """The key of the processes alive (a sorted set of tokens by last beat)."""
    return f"{prefix}alive"


def delay_key(prefix: str, site: str) -> str:
    """The key of ``site``'s next allowed time (hash-tagged on the site)."""
    return f"{prefix}next:{{{site}}}"


def turn_key(prefix: str, site: str) -> str:
    """The key of the token of ``site``'s turn granted and not yet confirmed."""
    return f"{prefix}turn:{{{site}}}"


def flight_key(prefix: str, site: str) -> str:
    """The key of the token of ``site``'s request sent and not yet answered."""
    return f"{prefix}flight:{{{site}}}"


def _keys(prefix: str, site: str) -> list[str]:
    """The keys of ``site`` the scripts read and move."""
    return [delay_key(prefix, site), turn_key(prefix, site), flight_key(prefix, site)]


class ClusterClock:
    """Per-site next-allowed times in one Redis (see the module docstring)."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        uri: str,
        *,
        now: Callable[[], float] | None = None,
        flight: float = DEFAULT_FLIGHT,
    ) -> None:
        self._redis = client
        self.prefix = prefix
        self.uri = uri
        #: the longest a send's token stays in flight (ms): the longest a
        #: download may last, and a margin
        self._flight_ms = delay_ms(flight)
        #: the time in seconds the scripts are given (``None``: they read Redis's ``TIME``,
        #: the cluster's one clock)
        self._now = now
        self._turn = client.register_script(_TURN)
        self._answered = client.register_script(_ANSWERED)
        self._beat = client.register_script(_BEAT)
        self._renew = client.register_script(_RENEW)

    @classmethod
    def open(
        cls,
        url: str,
        prefix: str,
        *,
        timeout: float = 1.0,
        now: Callable[[], float] | None = None,
        flight: float = DEFAULT_FLIGHT,
    ) -> ClusterClock:
        """A clock on the Redis at ``url``; calls fail after ``timeout`` seconds
        (a Redis that hangs is then seen lost; the crawl calls them off the reactor).
        ``now``: the time in seconds the scripts decide by (a test's manual
        clock); ``None``, Redis's own. ``flight``: the longest a send stays in
        flight without its answer (seconds)."""
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
        return cls(client, prefix, uri, now=now, flight=flight)

    def _now_ms(self) -> int | str:
        """The scripts' time argument: whole milliseconds, ``''`` for Redis's ``TIME``."""
        return "" if self._now is None else round(self._now() * 1000)

    def take(self, site: str, delay: float, token: str = "") -> float:
        """0.0: a request of ``site`` may be sent now (the next one not before
        ``delay`` seconds); else the seconds to wait before asking again. With
        a ``token``, the turn is reserved for :meth:`send` to confirm."""
        return self._call(site, delay, token, "0")

    def send(self, site: str, delay: float, token: str = "") -> float:
        """Just before a request of ``site`` is sent: 0.0 when it may go now, its
        turn then counted from now (the turn reserved with ``token``, when no
        other turn was granted since, or a turn free now) and ``token`` in
        flight until :meth:`answered` with it; else the seconds to wait before
        asking again."""
        return self._call(site, delay, token, "1")

    def answered(self, site: str, delay: float, token: str = "") -> float:
        """A request of ``site`` was answered now (the site received it): its next
        request not before ``delay`` seconds from now, a turn granted before and
        not yet confirmed withdrawn, and the send of ``token`` no longer in
        flight (``''``: none named). Always 0.0."""
        ms = delay_ms(delay)
        keys = _keys(self.prefix, site)
        try:
            self._answered(keys=keys, args=[ms, self._now_ms(), token])
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(
                f"Redis at {self.uri}: moving a site's turn past an answer failed: {detail}"
            ) from exc
        return 0.0

    def beat(self, token: str, lifetime: float) -> tuple[int, int]:
        """This process (``token``) is alive for ``lifetime`` seconds: its rank
        among the processes alive (by token, 0-based) and their number."""
        ms = delay_ms(lifetime)
        try:
            rank, count = self._beat(
                keys=[alive_key(self.prefix)], args=[token, ms, self._now_ms()]
            )
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(
                f"Redis at {self.uri}: counting the processes alive failed: {detail}"
            ) from exc
        return int(rank), max(1, int(count))

    def renew(self, flights: list[tuple[str, str]]) -> None:
        """The sends of this process still in flight (site, token) live on for the
        clock's ``flight`` from now (made with each beat)."""
        try:
            for site, token in flights:
                self._renew(keys=[flight_key(self.prefix, site)], args=[token, self._flight_ms])
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(
                f"Redis at {self.uri}: renewing a request in flight failed: {detail}"
            ) from exc

    def leave(self, token: str) -> None:
        """This process (``token``) ends: no longer counted alive (best effort)."""
        with contextlib.suppress(redis.RedisError, OSError):
            self._redis.zrem(alive_key(self.prefix), token)

    def ping(self) -> None:
        """Whether Redis answers (made off the reactor while it is lost)."""
        try:
            self._redis.ping()
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(f"Redis at {self.uri}: still not answering: {detail}") from exc

    def _call(self, site: str, delay: float, token: str, confirm: str) -> float:
        ms = delay_ms(delay)
        keys = _keys(self.prefix, site)
        try:
            left = self._turn(keys=keys, args=[ms, token, confirm, self._now_ms(), self._flight_ms])
        except (redis.RedisError, OSError) as exc:
            detail = str(exc) or type(exc).__name__
            raise StoreError(f"Redis at {self.uri}: taking a site's turn failed: {detail}") from exc
        return max(0, int(left)) / 1000

    def close(self) -> None:
        with contextlib.suppress(redis.RedisError, OSError):
            self._redis.close()

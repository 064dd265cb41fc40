"""The Redis store's leases: which process fetches a site's robots.txt, taken atomically. Pure.

A lease is ``{prefix}lease:{<site>}``, taken with ``SET key holder NX PX ms``
(an expired lease is gone, so the next ``SET NX`` takes it over) or renewed
by its holder, in one script that also says who holds it otherwise (a batch
of sites: one pipeline, one round trip); taken over from a holder known to
be gone (a killed process of this host); and given up by a
compare-and-delete script that publishes the site on
``{prefix}released:{site}``, so that processes waiting for the site look
again at once.

A lease's expiry is not trusted: a lease key without one (written by hand, or
by another program: ``SET NX PX`` never makes one) would keep the site waited
for forever, and one further ahead than the lease time asked for plus
``FUTURE_SKEW_SECONDS`` nearly so; so would a key of another type under a
lease's name (``SET NX`` never takes it over). Such a lease, found held by
another, is given the lease time from now by the same script (one WARNING),
then expires as any other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ._records import FUTURE_SKEW_SECONDS
from ._redis_records import RedisKeys
from ._redis_scripts import Scripts
from ._store import BadRecords, holder_is_gone

__all__ = ["RedisLeases"]

#: Take the lease (``KEYS[1]``) for ``ARGV[1]`` for ``ARGV[2]`` ms: free, or the
#: holder's own (renewed). Held by another, or a key of another type (not a
#: lease: ``SET NX`` never takes it over), a lease without expiry, or one
#: further ahead than ``ARGV[3]`` ms, is given ``ARGV[2]`` ms. The answer:
#: {1 taken, 0 held by another, -1 a key of another type; the other holder
#: ('' unless 0); the ``PTTL`` the lease had when given an expiry here, else -3}.
#: One round trip for what took three (renew, read the holder, bound).
_ACQUIRE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {1, '', -3}
end
local function bound()
    local left = redis.call('PTTL', KEYS[1])
    if left == -1 or left > tonumber(ARGV[3]) then
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return left
    end
    return -3
end
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' then
    return {-1, '', bound()}
end
local other = redis.call('GET', KEYS[1])
if other == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, '', -3}
end
return {0, other, bound()}
"""
#: Take a lease over from a holder known to be gone (compare-and-swap on the holder).
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""
#: Give the lease up only if the holder holds it (compare-and-delete), and say so
#: on ``ARGV[2]`` (the site's channel) with ``ARGV[3]`` (the site).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1
end
return 0
"""


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


class RedisLeases:
    """Takes, reads and gives up leases (see the module docstring); Redis errors
    are the caller's to report."""

    def __init__(
        self, client: Any, scripts: Scripts, keys: RedisKeys, bad: BadRecords, cluster: bool
    ) -> None:
        """``cluster``: a Redis Cluster client (scripts are not pipelined there)."""
        self._redis = client
        self._scripts = scripts
        self._keys = keys
        self._bad = bad
        self._cluster = cluster
        self._acquire = scripts.register(_ACQUIRE)
        self._release = scripts.register(_RELEASE)
        self._take_over = scripts.register(_TAKE_OVER)

    def _acquire_args(self, site: str, holder: str, seconds: float) -> tuple[list[str], list[Any]]:
        ms = _ms(seconds)
        return [self._keys.lease(site)], [holder, ms, ms + _ms(FUTURE_SKEW_SECONDS)]

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        """Whether ``holder`` now holds the site's lease for ``seconds``."""
        keys, args = self._acquire_args(site, holder, seconds)
        return self._taken(site, holder, seconds, self._acquire(keys=keys, args=args))

    def _taken(self, site: str, holder: str, seconds: float, answer: Any) -> bool:
        """Whether ``holder`` holds the site's lease, from the ``_ACQUIRE`` script's
        ``answer``: a holder known to be gone (a killed process of this host) is
        taken over; a lease not trusted is told."""
        code, other, left = answer
        if code == 1:
            return True
        if code == -1:  # a key of another type: held by nobody, until it expires
            self._told(site, "is a key of another type, not a lease, and", left, seconds)
            return False
        old = other.decode("utf-8", "replace") if isinstance(other, bytes) else str(other)
        if holder_is_gone(old):
            key = self._keys.lease(site)
            return bool(self._take_over(keys=[key], args=[other, holder, _ms(seconds)]))
        self._told(site, f"held by {old}", left, seconds)
        return False

    def _told(self, site: str, what: str, left: Any, seconds: float) -> None:
        """The lease on ``site`` (``what``: who holds it) told when the script gave it
        ``seconds`` from now (``left``: the ``PTTL`` it had: -1 none, or further
        ahead than ``seconds`` + ``FUTURE_SKEW_SECONDS``; -3: left as it was)."""
        if not isinstance(left, int) or left == -3 or left == -2:
            return
        problem = (
            f"{what} had no expiry"
            if left == -1
            else f"{what} would last {left / 1000:.0f} s more, beyond any lease time"
        )
        self._bad.lease(site, problem, f"it now expires in {seconds:g} s, then is taken over")

    def acquire_many(self, sites: Sequence[str], holder: str, seconds: float) -> dict[str, bool]:
        """``holder``'s leases on ``sites``, taken, renewed or found held in one
        round trip (a pipeline of ``_ACQUIRE``; only a take-over from a holder
        gone costs one more). On a Redis Cluster the free ones are taken in one
        pipeline (``SET NX``), the others asked one at a time."""
        if not sites:
            return {}
        if self._cluster:
            return self._acquire_many_on_cluster(sites, holder, seconds)
        pipe = self._scripts.pipeline()
        for site in sites:
            keys, args = self._acquire_args(site, holder, seconds)
            self._scripts.queue(pipe, self._acquire, keys, args)
        answers = self._scripts.execute(pipe)
        return {
            site: self._taken(site, holder, seconds, answer)
            for site, answer in zip(sites, answers, strict=True)
        }

    def _acquire_many_on_cluster(
        self, sites: Sequence[str], holder: str, seconds: float
    ) -> dict[str, bool]:
        pipe = self._redis.pipeline(transaction=False)
        for site in sites:
            pipe.set(self._keys.lease(site), holder, nx=True, px=_ms(seconds))
        answers = pipe.execute()
        return {
            site: bool(answer) or self.acquire(site, holder, seconds)
            for site, answer in zip(sites, answers, strict=True)
        }

    def lease_of(self, site: str) -> tuple[str, float] | None:
        """Who holds the site's lease and for how many more seconds; ``None``: nobody."""
        key = self._keys.lease(site)
        if self._redis.type(key) not in (b"string", "string"):
            return None  # none, or a key of another type: held by nobody
        other = self._redis.get(key)
        left = self._redis.pttl(key)
        if other is None or not isinstance(left, int) or left <= 0:
            return None
        text = other.decode("utf-8", "replace") if isinstance(other, bytes) else str(other)
        return text, left / 1000

    def release(self, site: str, holder: str, pipe: Any = None) -> None:
        """Give ``holder``'s lease on ``site`` up (``pipe``: a pipeline to queue it on,
        run with ``Scripts.execute``)."""
        keys = [self._keys.lease(site)]
        args = [holder, self._keys.channel(site), site]
        if pipe is None:
            self._release(keys=keys, args=args)
        else:
            self._scripts.queue(pipe, self._release, keys, args)

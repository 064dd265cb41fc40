"""The Redis store's leases: which process fetches a site's robots.txt, taken atomically. Pure.

A lease is ``{prefix}lease:{<site>}``, taken with ``SET key holder NX PX ms``
(an expired lease is gone, so the next ``SET NX`` takes it over), renewed by
its holder, taken over from a holder known to be gone (a killed process of
this host), and given up by a compare-and-delete script that publishes the
site on ``{prefix}released:{site}``, so that processes waiting for the site
look again at once.

A lease's expiry is not trusted: a lease key without one (written by hand, or
by another program: ``SET NX PX`` never makes one) would keep the site waited
for forever, and one further ahead than the lease time asked for plus
``FUTURE_SKEW_SECONDS`` nearly so; so would a key of another type under a
lease's name (``SET NX`` never takes it over). Such a lease, found held by
another, is given the lease time from now (one WARNING), then expires as any
other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ._records import FUTURE_SKEW_SECONDS
from ._redis_records import RedisKeys
from ._store import BadRecords, holder_is_gone

__all__ = ["RedisLeases"]

#: Take the lease if it is the holder's own (renewing it); ``SET NX PX`` has
#: already failed, so another holder may have it. -1: the key is not a string
#: (not a lease: written by another program).
_RENEW = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'string' and kind ~= 'none' then
    return -1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 1
end
return 0
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


#: Give a lease without expiry (``PTTL`` -1), or one further ahead than
#: ``ARGV[2]`` ms, the expiry ``ARGV[1]`` ms; the ``PTTL`` it had then, else -3.
_BOUND = """
local left = redis.call('PTTL', KEYS[1])
if left == -1 or left > tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    return left
end
return -3
"""


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


class RedisLeases:
    """Takes, reads and gives up leases (see the module docstring); Redis errors
    are the caller's to report."""

    def __init__(self, client: Any, keys: RedisKeys, bad: BadRecords) -> None:
        self._redis = client
        self._keys = keys
        self._bad = bad
        self._bound = client.register_script(_BOUND)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._take_over = client.register_script(_TAKE_OVER)

    def acquire(self, site: str, holder: str, seconds: float) -> bool:
        """Whether ``holder`` now holds the site's lease for ``seconds``."""
        key = self._keys.lease(site)
        ms = _ms(seconds)
        if self._redis.set(key, holder, nx=True, px=ms):
            return True
        renewed = self._renew(keys=[key], args=[holder, ms])
        if renewed == -1:  # a key of another type: held by nobody, until it expires
            self._bounded(site, key, "is a key of another type, not a lease, and", seconds)
            return False
        if renewed:
            return True
        other = self._redis.get(key)
        if other is None:
            return False
        old = other.decode("utf-8", "replace") if isinstance(other, bytes) else str(other)
        if holder_is_gone(old):  # a killed process of this host
            return bool(self._take_over(keys=[key], args=[other, holder, ms]))
        self._bounded(site, key, f"held by {old}", seconds)
        return False

    def _bounded(self, site: str, key: str, what: str, seconds: float) -> None:
        """The lease on ``site`` (``what``: who holds it) given ``seconds`` from now if
        it had no expiry, or one further ahead than ``seconds`` +
        ``FUTURE_SKEW_SECONDS``."""
        ms = _ms(seconds)
        left = self._bound(keys=[key], args=[ms, ms + _ms(FUTURE_SKEW_SECONDS)])
        if not isinstance(left, int) or left == -3 or left == -2:
            return
        problem = (
            f"{what} had no expiry"
            if left == -1
            else f"{what} would last {left / 1000:.0f} s more, beyond any lease time"
        )
        self._bad.lease(site, problem, f"it now expires in {seconds:g} s, then is taken over")

    def acquire_many(
        self,
        sites: Sequence[str],
        holder: str,
        seconds: float,
        acquire: Callable[[str, str, float], bool] | None = None,
    ) -> dict[str, bool]:
        """``holder``'s leases on ``sites`` taken in one round trip where free; a
        lease found taken is asked again site by site with ``acquire`` (default
        :meth:`acquire`: renewed when ours, taken over when its holder is gone)."""
        if not sites:
            return {}
        again = acquire or self.acquire
        ms = _ms(seconds)
        pipe = self._redis.pipeline(transaction=False)
        for site in sites:
            pipe.set(self._keys.lease(site), holder, nx=True, px=ms)
        answers = pipe.execute()
        return {
            site: bool(answer) or again(site, holder, seconds)
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

    def release(self, site: str, holder: str, client: Any = None) -> None:
        """Give ``holder``'s lease on ``site`` up (``client``: a pipeline to queue it on)."""
        self._release(
            keys=[self._keys.lease(site)],
            args=[holder, self._keys.channel(site), site],
            client=client,
        )

"""``RobotsTxtRedisQueue``: a scrapy-redis queue whose requests wait in Redis
until their site's robots.txt is settled. Scrapy glue.

scrapy-redis shares one request queue between the processes of a cluster.
With its own queues, a request of a site whose robots.txt is pending reaches
our middleware, which holds it or sets a copy aside in the process's memory:
a process that dies loses those copies. This queue (``SCHEDULER_QUEUE_CLASS``,
set by the add-on when ``SCHEDULER`` is scrapy-redis's) keeps them in Redis,
as our in-memory queue keeps them in the scheduler (RFC 9309 2.3: the site's
pages are not fetched before its robots.txt is known):

* requests of settled sites are in scrapy-redis's priority queue (the sorted
  set ``key``, by priority), handed out as scrapy-redis hands them out;
* a request of a site this process has not settled goes to the site's waiting
  list ``{key}:waiting:{site}`` (a sorted set by priority), and the site to
  ``{key}:waiting`` (a sorted set scored by the time until which the process
  that put it there deals with it); its robots.txt fetch starts (fetch ahead);
* once the site is settled here (downloaded, or read from the robots.txt
  store), its waiting list is moved into the queue: the sites settled since
  the last pop in one Lua script, sent with the next pop in its own round
  trip (or after :data:`MOVE_SECONDS`, when no pop comes before);
* a site whose time in ``{key}:waiting`` has passed (the process that took it
  died, or could not settle it) is taken over by the next process that looks
  (every :data:`SCAN_SECONDS`), which settles it in turn and moves its list.

* a request popped from the queue whose site this process has not settled
  yet (another process settled it) waits in this process's memory while the
  site is settled here (read from the store, or downloaded), at most as many
  requests as the process downloads at once (``CONCURRENT_REQUESTS``, at most
  :data:`PARK_MAX`) for at most :data:`PARK_SECONDS`; past either it goes to
  its site's waiting list, as above. Sending it back to Redis and
  popping it again would cost two round trips on the reactor thread.

While Redis does not answer, ``pop`` hands out nothing and ``__len__`` tells
the last length it had (at least one), so the engine asks again on its timers
and the process stays open: one WARNING, then one INFO line once Redis
answers (:class:`~._redis_silence.RedisSilence`), where scrapy-redis's own
queue lets each failed call out as a traceback. A request popped
just before Redis stopped answering is kept in memory, never lost.

So a process holds in memory only what it is downloading and, briefly, a
bounded number of requests popped while their site is being settled (a
process that dies loses those, as it loses its downloads), and the queue's
length counts the sites waiting, so that idle processes keep asking for
work (they do not close) while requests wait in Redis.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError as RedisResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from scrapy_redis.queue import PriorityQueue

from ...sites._sitetable import SiteState
from .._clock import Clock
from .._engine import wake_engine
from ..sitefiles._service import site_service
from ._redis_silence import RedisSilence

__all__ = ["RobotsTxtRedisQueue"]

logger = logging.getLogger("scrapy_rfc9309.queue")

#: Seconds a process deals with a site it put in ``{key}:waiting`` before
#: another may take it over.
CLAIM_SECONDS = 3.0
#: Seconds between two looks at ``{key}:waiting`` for sites to take over.
SCAN_SECONDS = 1.0
#: Requests a ``pop`` moves back to waiting lists before it answers ``None``.
DIVERT_BUDGET = 100
#: Sites taken over in one look.
SCAN_BATCH = 100
#: Requests popped while their site is being settled here, kept in memory at most
#: (and never more than the process's ``CONCURRENT_REQUESTS``).
PARK_MAX = 256
#: Seconds such a request waits in memory before it goes to its site's waiting list.
PARK_SECONDS = 1.0
#: Seconds a settled site's waiting list waits for the next pop to be moved
#: with it; then it is moved alone (the engine pops no more while it is busy).
MOVE_SECONDS = 0.05
#: Sites whose waiting lists one script moves at most (the rest: the next).
MOVE_BATCH = 256

#: Move sites' waiting lists into the queue: ``KEYS`` queue, index, then the
#: waiting list of each site of ``ARGV``, in order. Returns how many requests moved.
#: Sent as text (``EVAL``), not by digest: ``EVALSHA`` inside the pop's
#: ``MULTI`` can meet ``NOSCRIPT`` (a restarted or flushed Redis), and redis-py's
#: cure asks ``SCRIPT EXISTS`` first, a round trip more on every such pop. A
#: batch of up to MOVE_BATCH sites moves at most once per site settled, so the
#: text's few hundred bytes cost no round trip.
_MOVE = """
local moved = 0
for i, site in ipairs(ARGV) do
    local rows = redis.call('ZRANGE', KEYS[i + 2], 0, -1, 'WITHSCORES')
    for j = 1, #rows, 2 do
        redis.call('ZADD', KEYS[1], rows[j + 1], rows[j])
    end
    moved = moved + #rows / 2
    redis.call('DEL', KEYS[i + 2])
    redis.call('ZREM', KEYS[2], site)
end
return moved
"""
#: Take over the sites of ``KEYS[1]`` whose time has passed: ``ARGV`` now,
#: the new time, how many at most. Returns the sites taken over and how many
#: sites wait in all (one round trip for both).
_CLAIM = """
local sites = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, site in ipairs(sites) do
    redis.call('ZADD', KEYS[1], ARGV[2], site)
end
return {sites, redis.call('ZCARD', KEYS[1])}
"""


class RobotsTxtRedisQueue(PriorityQueue):  # type: ignore[misc,unused-ignore]
    """scrapy-redis's priority queue, withholding requests of sites whose
    robots.txt is not settled in Redis (see the module docstring)."""

    def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None) -> None:
        super().__init__(server, spider, key, serializer)
        self.crawler = spider.crawler
        self._index = f"{self.key}:waiting"
        self._claim = server.register_script(_CLAIM)
        #: sites whose waiting list this process moves once it settles them
        self._waiting: set[str] = set()
        #: settled sites whose waiting list is to be moved (with the next pop), in order
        self._to_move: dict[str, None] = {}
        self._move_timer: Any = None
        self._next_scan = 0.0
        self._wake: Any = None
        #: site -> requests popped while it is being settled here (in memory, bounded)
        self._parked: dict[str, list[Any]] = {}
        self._parked_count = 0
        self._park_timers: dict[str, Any] = {}
        #: parked requests whose site has settled: handed out before the next pop
        self._unparked: deque[Any] = deque()
        #: the crawler's site service (``None``: robots.txt not obeyed, a plain queue)
        self._robots = site_service(self.crawler, create=False)
        if self._robots is not None:
            self._robots.register(self)
        #: the crawl's clock (the site service's): the claims' times and the timers
        self._clock = Clock() if self._robots is None else self._robots.clock
        #: Redis not answering the pops and the lengths: said once, nothing handed out
        self._silence = RedisSilence(self._clock)

    def _list_key(self, site: str) -> str:
        return f"{self.key}:waiting:{site}"

    # -- scrapy-redis's calls ---------------------------------------------------------

    def push(self, request: Any) -> None:
        robots = self._robots
        site = None if robots is None else robots.site_for(request)
        if robots is None or site is None:
            super().push(request)
            return
        state = robots.site_state(site)
        if state is SiteState.READY:
            super().push(request)
            return
        self._to_wait(site, [request], state)

    def pop(self, timeout: int = 0) -> Any:
        robots = self._robots
        if robots is None:
            return super().pop(timeout)
        if self._unparked:
            return self._unparked.popleft()
        try:
            request = self._pop_settled(robots, timeout)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            self._silence.failed(exc, "handing out a request")
            return None
        self._silence.answered()
        return request

    def _pop_settled(self, robots: Any, timeout: int) -> Any:
        """The next request whose site is settled here; those of sites settled
        elsewhere wait in memory or go to their site's waiting list meanwhile."""
        for _ in range(DIVERT_BUDGET):
            request = self._pop_one(timeout)
            if request is None:
                break
            site = robots.site_for(request)
            if site is None:
                return request
            state = robots.site_state(site)
            if state is SiteState.READY:
                return request
            # settled elsewhere: settled here first, in memory while it is quick
            if not self._park(site, request, state):
                try:
                    self._to_wait(site, [request], state)
                except (RedisConnectionError, RedisTimeoutError):
                    self._keep(site, request)  # popped: never lost, tried again later
                    raise
            if self._unparked:
                return self._unparked.popleft()
        self._scan()
        return None

    def __len__(self) -> int:
        """Requests ready, plus one per site whose requests wait (so that the
        scheduler has pending requests, and the process stays open, while any wait)."""
        held = self._parked_count + len(self._unparked)
        pipe = self.server.pipeline(transaction=False)  # one round trip, not two
        pipe.zcard(self.key)
        pipe.zcard(self._index)
        try:
            ready, waiting = pipe.execute()
        except (RedisConnectionError, RedisTimeoutError) as exc:
            self._silence.failed(exc, "counting its requests")
            # what waits in Redis cannot be told: the process stays open
            return max(self._silence.length, 1) + held
        self._silence.answered()
        self._silence.length = int(ready) + int(waiting)
        return self._silence.length + held

    def _pop_one(self, timeout: int) -> Any:
        """scrapy-redis's pop, with the moves of the settled sites' waiting lists
        first in the same round trip (and transaction) when there are some."""
        if not self._to_move:
            return super().pop(timeout)
        sites = list(itertools.islice(self._to_move, MOVE_BATCH))
        pipe = self.server.pipeline()  # MULTI/EXEC, as scrapy-redis's pop
        pipe.execute_command("EVAL", _MOVE, 2 + len(sites), *self._move_keys(sites), *sites)
        pipe.zrange(self.key, 0, 0).zremrangebyrank(self.key, 0, 0)
        try:
            moved, popped, _ = pipe.execute(raise_on_error=False)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            self._silence.move_failed(sites, exc)
            raise  # pop says it once and hands out nothing
        if isinstance(moved, Exception):  # the script failed (not Redis's silence)
            self._silence.move_refused(sites, moved)  # the request popped is handed out
        else:
            self._moved(sites, int(moved), popping=True)
        if isinstance(popped, Exception):
            raise popped
        return self._decode_request(popped[0]) if popped else None

    def clear(self) -> None:
        sites = self.server.zrange(self._index, 0, -1)
        keys = [self._list_key(_text(site)) for site in sites]
        self.server.delete(self.key, self._index, *keys)

    # -- the site service's calls -----------------------------------------------------

    def site_released(self, site: str) -> None:
        """``site`` is settled here: its waiting list goes into the queue.

        Called from the site service when a robots.txt settles, never to fail
        it: the move is sent with the next pop, in its round trip, for every
        site settled since (or alone after :data:`MOVE_SECONDS`, when no pop
        comes). When Redis does not answer, the requests stay in their waiting
        list in Redis (nothing is lost), with one WARNING, and the move is
        tried again at the next pop (or by any process, once the site's time in
        ``{key}:waiting`` has passed). Its requests parked in memory are
        handed out first."""
        parked = self._parked.pop(site, None)
        if parked is not None:
            self._parked_count -= len(parked)
            self._unparked.extend(parked)
            timer = self._park_timers.pop(site, None)
            if timer is not None and timer.active():
                timer.cancel()
        if site not in self._waiting:
            self._silence.moved(site)
            return
        self._to_move[site] = None
        if self._move_timer is None or not self._move_timer.active():
            self._move_timer = self._clock.call_later(MOVE_SECONDS, self._move_now)

    def _move_keys(self, sites: list[str]) -> list[str]:
        return [self.key, self._index, *(self._list_key(site) for site in sites)]

    def _move_now(self, *, closing: bool = False) -> None:
        """No pop came within :data:`MOVE_SECONDS` of a site settling (or the
        spider closes): the waiting lists are moved on their own, one script
        for :data:`MOVE_BATCH` sites."""
        self._move_timer = None
        while self._to_move:
            sites = list(itertools.islice(self._to_move, MOVE_BATCH))
            try:
                moved = self.server.eval(_MOVE, 2 + len(sites), *self._move_keys(sites), *sites)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                self._silence.move_failed(sites, exc)
                return
            except RedisResponseError as exc:  # the script failed: tried again at the next pop
                self._silence.move_refused(sites, exc)
                return
            self._moved(sites, int(moved))
            if not closing and self._to_move:  # the next batch after a reactor turn
                self._move_timer = self._clock.call_later(0, self._move_now)
                return

    def _moved(self, sites: list[str], moved: int, *, popping: bool = False) -> None:
        for site in sites:
            self._to_move.pop(site, None)
            self._waiting.discard(site)
            self._silence.moved(site)
        logger.debug(
            "%s requests of %d sites back in the queue: their robots.txt is settled",
            moved,
            len(sites),
        )
        if moved and not popping:  # moved on their own: the engine is asked to pop
            wake_engine(self.crawler)

    def spider_closed(self) -> None:
        """With ``SCHEDULER_PERSIST``, the requests kept in memory go back to Redis
        (the queue, or their site's waiting list), where the waiting lists stay;
        without it, scrapy-redis has cleared the queue and the lists (the
        scheduler closes before ``spider_closed``), and they are dropped too."""
        if self._wake is not None and self._wake.active():
            self._wake.cancel()
        if self._move_timer is not None and self._move_timer.active():
            self._move_timer.cancel()
        for timer in self._park_timers.values():
            if timer.active():
                timer.cancel()
        robots = self._robots
        if robots is None or not robots.settings.keeps_queue:
            kept = self._parked_count + len(self._unparked)
            if kept:
                logger.debug("%d requests popped from the queue dropped at close", kept)
            self._parked.clear()
            self._park_timers.clear()
            self._parked_count = 0
            self._unparked.clear()
            self._unregister()
            return
        self._move_now(closing=True)  # not moved: another process takes them over later
        for site in list(self._parked):
            self._unpark(site, closing=True)
        try:
            while self._unparked:
                super().push(self._unparked[0])
                self._unparked.popleft()
        except (RedisConnectionError, RedisTimeoutError) as exc:
            logger.warning(
                "Redis did not answer at close (%s): %d requests popped from the queue "
                "are not put back",
                exc,
                len(self._unparked),
            )
            self._unparked.clear()
        self._unregister()

    def _unregister(self) -> None:
        if self._robots is not None:
            self._robots.unregister(self)

    # -- waiting lists ----------------------------------------------------------------

    def _park(self, site: str, request: Any, state: SiteState) -> bool:
        """Keep ``request`` (popped, its site not settled here) in memory while its
        site is settled, within what the process downloads at once (so no pop
        takes a cluster's shared requests into one process); ``False``: no room."""
        robots = self._robots
        assert robots is not None
        if self._parked_count >= min(PARK_MAX, robots.settings.park_max):
            return False
        if state is SiteState.UNKNOWN:
            robots.prefetch(site, request)  # a read from the store, or a download
        if robots.site_state(site) is SiteState.READY:  # settled at once
            self._unparked.append(request)
            return True
        self._keep(site, request)
        return True

    def _keep(self, site: str, request: Any) -> None:
        """Keep ``request`` in memory until its site settles, or :data:`PARK_SECONDS`."""
        parked = self._parked.get(site)
        if parked is None:
            parked = self._parked[site] = []
            self._unpark_later(site)
        parked.append(request)
        self._parked_count += 1

    def _unpark(self, site: str, *, closing: bool = False) -> None:
        """``site`` is not settled after :data:`PARK_SECONDS` (or the spider
        closes): its requests kept in memory go to its waiting list in Redis.
        When Redis does not answer they stay in memory and are tried again
        after the same wait; at close they are lost, said in a WARNING."""
        self._park_timers.pop(site, None)
        parked = self._parked.pop(site, None)
        if not parked:
            return
        self._parked_count -= len(parked)
        robots = self._robots
        assert robots is not None
        try:
            self._to_wait(site, parked, robots.site_state(site))
        except (RedisConnectionError, RedisTimeoutError) as exc:
            if closing:
                logger.warning(
                    "Redis did not answer at close (%s): %d requests of %s popped from the "
                    "queue are not put back",
                    exc,
                    len(parked),
                    site,
                )
                return
            logger.warning(
                "Redis did not answer (%s): %d requests of %s stay in this process's memory "
                "until it does (tried again in %s s)",
                exc,
                len(parked),
                site,
                PARK_SECONDS,
            )
            self._parked[site] = parked
            self._parked_count += len(parked)
            self._unpark_later(site)

    def _unpark_later(self, site: str) -> None:
        """:meth:`_unpark` ``site`` after :data:`PARK_SECONDS`."""
        self._park_timers[site] = self._clock.call_later(PARK_SECONDS, self._unpark, site)

    def _to_wait(self, site: str, requests: list[Any], state: SiteState) -> None:
        assert self._robots is not None
        pipe = self.server.pipeline(transaction=False)
        for request in requests:
            pipe.execute_command(
                "ZADD", self._list_key(site), -request.priority, self._encode_request(request)
            )
        pipe.execute_command("ZADD", self._index, self._clock.time() + CLAIM_SECONDS, site)
        pipe.execute()
        self._waiting.add(site)
        if state is SiteState.UNKNOWN:
            self._robots.prefetch(site, requests[0])  # fetch ahead
        if self._robots.site_state(site) is SiteState.READY:  # settled at once
            self.site_released(site)
        self._wake_later()

    def _scan(self) -> None:
        """Take over the sites whose time in ``{key}:waiting`` has passed."""
        now = self._clock.time()
        if now < self._next_scan:
            return
        self._next_scan = now + SCAN_SECONDS
        robots = self._robots
        assert robots is not None
        claimed, waiting = self._claim(
            keys=[self._index], args=[now, now + CLAIM_SECONDS, SCAN_BATCH]
        )
        for raw in claimed or ():
            site = _text(raw)
            self._waiting.add(site)
            state = robots.site_state(site)
            if state is SiteState.UNKNOWN:
                robots.prefetch(site)
            if robots.site_state(site) is SiteState.READY:
                self.site_released(site)
        if waiting:
            self._wake_later()

    def _wake_later(self) -> None:
        """Ask the engine for requests again after :data:`SCAN_SECONDS` (an idle
        engine otherwise asks every 5 s), while sites wait."""
        if self._wake is not None and self._wake.active():
            return
        self._wake = self._clock.call_later(SCAN_SECONDS, wake_engine, self.crawler)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

"""The cluster's calls to Redis in the request path stay off the reactor thread,
or are batched with calls it makes anyway.

``Crawl-delay`` is not part of RFC 9309 (its section 2.2.4 leaves such
records to crawlers); kept across a cluster, each paced request asks Redis
for its site's turn, confirms it at the send and moves it at the answer. A
call on the reactor thread stops the whole crawl for a Redis round trip
(longer with Redis on another machine). And with scrapy-redis's queue, the
requests of a site not settled yet wait in Redis (RFC 9309 2.3) until its
robots.txt is: the moves of several sites' waiting lists go in one script,
sent with the next pop. Real ``redis-server``, real crawls against local
sites, asserting on what the sites' server saw and on what Redis ran.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
import redis
from scrapy import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.defer import Deferred

from scrapy_rfc9309.components.crawl._paced import PacedSites
from scrapy_rfc9309.sites._cluster_clock import ClusterClock

from .conftest import crawl
from .redis_server import RedisServer
from .server import delayed, text
from .test_cluster_delay import ADDON, page_gaps
from .test_redis_store import cluster_settings

#: the clock's calls a paced request makes
PACED_CALLS = ("take", "send", "answered", "beat")
SITE_URL = "http://a.example"


@pytest.fixture
def clock_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Each call of the cluster clock to Redis: its name and the thread it ran
    on (the real call is made)."""
    calls: list[tuple[str, int]] = []
    for name in PACED_CALLS:
        real = getattr(ClusterClock, name)

        def spy(self: ClusterClock, *args: Any, _name: str = name, _real: Any = real) -> Any:
            calls.append((_name, threading.get_ident()))
            return _real(self, *args)

        monkeypatch.setattr(ClusterClock, name, spy)
    return calls


def scrapy_redis(server: RedisServer) -> dict[str, Any]:
    """scrapy-redis's scheduler and duplicate filter (the add-on sets its queue)."""
    name = f"q-{uuid.uuid4().hex[:8]}"
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_KEY": f"{name}:requests",
        "SCHEDULER_DUPEFILTER_KEY": f"{name}:dupefilter",
        "REDIS_URL": server.url,
    }


@pytest.mark.parametrize("queue", ["ours", "scrapy-redis"])
@deferred_f_from_coro_f
async def test_paced_requests_ask_redis_off_the_reactor(
    sites: Any,
    redis_server: RedisServer,
    prefix: str,
    clock_calls: list[tuple[str, int]],
    queue: str,
) -> None:
    """``Crawl-delay: 0.3``, 4 pages: every turn asked, confirmed and moved at
    the answer, and the process's beat, runs on another thread than the
    reactor's (each used to stop the crawl for a Redis round trip), and the
    pages still arrive at least the delay apart."""
    if queue == "scrapy-redis":
        pytest.importorskip("scrapy_redis")
    reactor_thread = threading.get_ident()
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 0.3\n")}, default=text("page")
    )
    more = scrapy_redis(redis_server) if queue == "scrapy-redis" else {}
    settings = cluster_settings(
        redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, DOWNLOAD_DELAY=0, **ADDON, **more
    )
    paths = [f"/p{n}" for n in range(4)]
    await crawl([site.url(path) for path in paths], settings)
    assert sorted(p for p in site.hits if p != "/robots.txt") == paths
    assert min(page_gaps(site)) >= 0.29
    names = {name for name, _ in clock_calls}
    # our queue reserves the turn at the scheduler; with scrapy-redis's, the
    # middleware asks for it at the send
    assert names == (
        {"take", "send", "answered", "beat"} if queue == "ours" else {"send", "answered", "beat"}
    )
    on_reactor = [name for name, thread in clock_calls if thread == reactor_thread]
    assert on_reactor == []


class Monitor:
    """Redis's ``MONITOR`` on a thread: every command it ran, in order, those a
    script ran marked ``lua``."""

    def __init__(self, server: RedisServer) -> None:
        self._client = redis.Redis.from_url(server.url)
        self._monitor = self._client.monitor()
        self._monitor.__enter__()  # MONITOR sent before the thread starts
        self.commands: list[tuple[bool, str]] = []
        self._stop = f"monitor-stop-{uuid.uuid4().hex}"
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for command in self._monitor.listen():
            sent = str(command["command"])
            if self._stop in sent:
                return
            self.commands.append((command.get("client_type") == "lua", sent))

    def stop(self) -> None:
        self._client.get(self._stop)
        self._thread.join(10)
        self._monitor.__exit__(None, None, None)
        self._client.close()

    def sent(self, command: str) -> int:
        """How many times ``command`` (its whole text) was sent (not run by a script)."""
        return sum(not lua and text == command for lua, text in self.commands)

    def moves(self, index: str) -> list[tuple[bool, int]]:
        """Each script sent that took sites out of the waiting index ``index``:
        whether it went inside a ``MULTI``/``EXEC`` block (with a pop: no round
        trip of its own), and how many sites it took out."""
        scripts: list[list[Any]] = []
        in_multi = False
        current: list[Any] | None = None
        for lua, command in self.commands:
            if lua:
                if current is not None and command.startswith(f"ZREM {index} "):
                    current[1] += 1
                continue
            current = None
            if command == "MULTI":
                in_multi = True
            elif command == "EXEC":
                in_multi = False
            elif command.startswith("EVAL"):
                current = [in_multi, 0]
                scripts.append(current)
        return [(in_multi, sites) for in_multi, sites in scripts if sites]


@pytest.fixture
def monitor(redis_server: RedisServer) -> Iterator[Monitor]:
    watching = Monitor(redis_server)
    yield watching
    watching.stop()


@deferred_f_from_coro_f
async def test_2_3_settled_sites_waiting_lists_move_with_the_next_pop(
    sites: Any, redis_server: RedisServer, prefix: str, monitor: Monitor
) -> None:
    """6 sites whose robots.txt answers after 0.3 s: their requests wait in Redis
    (RFC 9309 2.3) meanwhile; once the sites are settled, their waiting lists go
    back to the queue in scripts sent with the next pop, in its ``MULTI``/``EXEC``
    block (each site's took a round trip of its own on the reactor), or, when no
    pop comes soon, in one script for all; every page is fetched once. A
    look for sites to take over counts the sites waiting in the same script
    (it took one more round trip)."""
    pytest.importorskip("scrapy_redis")
    mocks = [
        sites(
            routes={"/robots.txt": delayed(0.3, text(b"User-agent: *\nDisallow: /private\n"))},
            default=text("page"),
        )
        for _ in range(6)
    ]
    queue = scrapy_redis(redis_server)
    settings = cluster_settings(redis_server, prefix, **ADDON, **queue)
    paths = ["/a", "/b", "/private"]
    await crawl([mock.url(path) for mock in mocks for path in paths], settings)
    for mock in mocks:
        assert mock.hits.count("/robots.txt") == 1
        assert sorted(p for p in mock.hits if p != "/robots.txt") == ["/a", "/b"]
    moves = monitor.moves(f"{queue['SCHEDULER_QUEUE_KEY']}:waiting")
    assert sum(sites for _, sites in moves) == 6  # each site's list moved once
    alone = [sites for with_pop, sites in moves if not with_pop]
    assert len(alone) <= 1, moves  # at most once, all sites then pending together
    key = queue["SCHEDULER_QUEUE_KEY"]
    # the queue's length asks both in one pipeline; a look asked the index alone too
    assert monitor.sent(f"ZCARD {key}:waiting") == monitor.sent(f"ZCARD {key}") > 0


class StubPacer:
    """The pacer's side :class:`PacedSites` uses; each ask answered by the test."""

    queue_paces = False

    def __init__(self) -> None:
        self.asks: list[Deferred[float]] = []

    def wait(self, site: str) -> Deferred[float]:
        self.asks.append(Deferred())
        return self.asks[-1]

    def delay_for(self, site: str) -> float:
        return 1.0

    def started_waiting(self, request: Request) -> None:
        pass

    def ended_waiting(self, request: Request) -> None:
        pass


class StubRobots:
    def __init__(self) -> None:
        from twisted.internet import task

        from scrapy_rfc9309.components._clock import Clock

        self.pins = 0
        #: the crawl's clock: a manual one (the turns' timers fire only when moved)
        self.time = task.Clock()
        self.clock = Clock.manual(self.time)

    def pin(self, site: str, requests: int = 1) -> None:
        self.pins += requests

    def unpin(self, site: str) -> None:
        self.pins -= 1


def paced_sites() -> tuple[PacedSites, StubPacer, StubRobots, list[Request]]:
    pacer, robots = StubPacer(), StubRobots()
    ready: list[Request] = []
    crawler = SimpleNamespace(engine=None)  # no engine to wake
    sites = PacedSites(cast(Any, crawler), cast(Any, robots), cast(Any, pacer), ready.append)
    return sites, pacer, robots, ready


def test_a_request_waits_while_its_turn_is_asked_then_goes_first() -> None:
    """While Redis is asked (off the reactor), the request is not handed out and
    the site's next request waits behind it; granted, it is the first handed
    out, the other waits for the next turn; every pin given back."""
    sites, pacer, robots, _ = paced_sites()
    first, second = Request(SITE_URL + "/1"), Request(SITE_URL + "/2")
    assert not sites.turn(SITE_URL, first)
    assert not sites.turn(SITE_URL, second)
    assert len(pacer.asks) == 1  # one ask at a time per site
    assert sites.granted() is None
    assert sites.count == 2
    pacer.asks[0].callback(0.0)
    assert sites.granted() is first
    assert sites.granted() is None
    assert sites.count == 1
    assert [request for _, request in sites.take_all()] == [second]
    assert robots.pins == 1  # the second's, given back by the queue at close


def test_a_turn_not_come_puts_the_request_first_in_its_line() -> None:
    """Told to wait 0.4 s, the request goes back first in its site's line; it
    returns to the queue's ready requests when the crawl's clock (here a manual
    one) has moved on 0.4 s, not before, and not by real time."""
    sites, pacer, robots, ready = paced_sites()
    first, second = Request(SITE_URL + "/1"), Request(SITE_URL + "/2")
    assert not sites.turn(SITE_URL, first)
    assert not sites.turn(SITE_URL, second)
    pacer.asks[0].callback(0.4)
    assert sites.granted() is None
    robots.time.advance(0.39)
    assert ready == []
    robots.time.advance(0.02)
    assert ready == [first]  # back to ask for its turn
    assert [request for _, request in sites.take_all()] == [second]


def test_an_ask_failing_with_a_bug_is_logged_and_the_request_handed_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Not Redis's failure (those are the pacer's outage): one ERROR with the
    error, and the request is handed out (the middleware asks for its turn
    at the send), never lost."""
    sites, pacer, _, _ = paced_sites()
    request = Request(SITE_URL + "/1")
    assert not sites.turn(SITE_URL, request)
    with caplog.at_level(logging.ERROR, logger="scrapy_rfc9309.queue"):
        pacer.asks[0].errback(RuntimeError("a bug"))
    assert sites.granted() is request
    [error] = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert "failed unexpectedly" in error.getMessage()
    assert error.exc_info is not None and "a bug" in str(error.exc_info[1])


@deferred_f_from_coro_f
async def test_a_sites_calls_run_in_the_order_asked_other_sites_beside_them() -> None:
    """A site's calls to the cluster clock run one after the other in the order
    asked (its answer's push reaches Redis before a later request of the same
    site is confirmed), while another site's call runs meanwhile."""
    from scrapy.utils.defer import maybe_deferred_to_future

    from scrapy_rfc9309.components.cluster._pacing_thread import MAX_THREADS, PacingThreads

    threads = PacingThreads()
    site = "http://a.example:80"
    other = next(
        name
        for name in (f"http://s{n}.example:80" for n in range(1000))
        if hash(name) % MAX_THREADS != hash(site) % MAX_THREADS
    )
    release = threading.Event()
    ran: list[str] = []

    def slow_answer() -> None:
        assert release.wait(10), "never released"
        ran.append("answered")

    try:
        first = threads(slow_answer, site)
        second = threads(lambda: ran.append("send"), site)
        await maybe_deferred_to_future(threads(lambda: ran.append("other site"), other))
        assert ran == ["other site"]  # the site's second call waits for its first
        release.set()
        await maybe_deferred_to_future(first)
        await maybe_deferred_to_future(second)
        assert ran == ["other site", "answered", "send"]
    finally:
        release.set()
        threads.stop()

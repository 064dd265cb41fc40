"""scrapy-redis with the robots-aware Redis queue: requests of a site whose
robots.txt is not settled wait in Redis (RFC 9309 2.3: none of the site's
pages is fetched before its robots.txt is known), not in a process's memory.

Real ``redis-server``, real crawler processes (``tests/cluster_crawl.py``)
sharing one scrapy-redis queue and duplicate filter. Skipped without
scrapy-redis (not a dependency of the package).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from .redis_server import RedisServer, require_redis_server
from .server import Route, text
from .test_redis_store import CrawlerProc
from .waiting import hold, until_async

pytest.importorskip("scrapy_redis")

ROBOTS = b"User-agent: *\nDisallow: /private\n"
PAGES = [f"/page/{n}" for n in range(12)]
PRIVATE = [f"/private/{n}" for n in range(4)]


class Held:
    """``route``, its answers held until :meth:`release`; after it, at once."""

    def __init__(self, route: Route) -> None:
        self.route = route
        self.waiting: list[Any] = []
        self.released = False

    def __call__(self, request: Any) -> Any:
        from twisted.web import server

        if self.released:
            return self.route(request)
        self.waiting.append(request)
        return server.NOT_DONE_YET

    def release(self) -> None:
        self.released = True
        for request in self.waiting:
            if request.finished or request._disconnected:
                continue
            body = self.route(request)
            if isinstance(body, bytes):
                request.write(body)
                request.finish()


def scrapy_redis_settings(server: RedisServer, name: str) -> dict[str, Any]:
    return {
        "ADDONS": {"scrapy_rfc9309.Addon": 100},
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_KEY": f"{name}:requests",
        "SCHEDULER_DUPEFILTER_KEY": f"{name}:dupefilter",
        "SCHEDULER_PERSIST": True,  # one process closing leaves the others' queue
        "REDIS_URL": server.url,
        "USER_AGENT": "ClusterBot/1.0 (+https://example.com/bot)",
        "CONCURRENT_REQUESTS": 2,
        "DOWNLOAD_TIMEOUT": 10,
        "RETRY_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "DEBUG",
    }


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_3_pending_sites_wait_in_redis_and_survive_a_killed_process(
    sites: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Three processes on one scrapy-redis queue; one process is killed (SIGKILL)
    once every request waits in Redis for the site's robots.txt, which answers
    1.5 s later (and at once from then on): the survivors fetch every allowed
    page exactly once, none of the disallowed ones, and then finish by themselves."""
    robots = Held(text(ROBOTS))
    site = sites(routes={"/robots.txt": robots}, default=text("page"))
    urls = [site.url(path) for path in PAGES + PRIVATE]
    name = f"q-{uuid.uuid4().hex[:8]}"
    settings = scrapy_redis_settings(redis_server, name)
    procs = [
        CrawlerProc(
            tmp_path, f"crawler{n}", urls, settings, barrier=[str(tmp_path), 3], dont_filter=False
        )
        for n in range(3)
    ]
    client = redis.Redis.from_url(redis_server.url)
    await until_async(
        lambda: len(list(tmp_path.glob("*.ready"))) == 3, 60, "the crawler processes to start"
    )

    def in_redis() -> tuple[int, int]:
        waiting = client.zcard(f"{name}:requests:waiting")
        lists = sum(client.zcard(k) for k in client.scan_iter(f"{name}:requests:waiting:*"))
        return waiting, lists

    # until every request waits in Redis (all of them in Redis, none in memory)
    await until_async(lambda: in_redis() == (1, len(urls)), 30, "every request to wait in Redis")
    procs[0].kill()
    assert [p for p in site.hits if p != "/robots.txt"] == []
    await hold(1.5, "the survivors fetch no page while the robots.txt is held")
    assert [p for p in site.hits if p != "/robots.txt"] == []
    robots.release()
    results = [await proc.finished(timeout=60) for proc in procs[1:]]
    fetched = [p for p in site.hits if p != "/robots.txt"]
    assert sorted(fetched) == sorted(PAGES)  # each exactly once, none disallowed
    assert client.zcard(f"{name}:requests") == 0
    assert client.zcard(f"{name}:requests:waiting") == 0
    for result in results:
        assert result["stats"].get("robotstxt/set_aside", 0) == 0
        assert result["stats"].get("log_count/ERROR", 0) == 0
    survivors = [url for result in results for url in result["fetched"]]
    assert sorted(survivors) == sorted(site.url(p) for p in PAGES)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_3_redis_down_as_a_robots_txt_settles_loses_no_request(
    sites: Any, tmp_path: Path
) -> None:
    """Every request waits in Redis for the site's robots.txt; Redis stops, then
    the robots.txt is served (so the move of its waiting list fails), and Redis
    starts again with what it held (an append-only file) once the crawler has
    said so: one WARNING names the site and says its requests stay in Redis, no
    'Unhandled error in Deferred' and no CRITICAL line, and every allowed page
    is fetched exactly once, none disallowed."""
    from twisted.internet import task

    # an append-only file kept at each write: what Redis held is there when it is back
    durable = ("--appendonly", "yes", "--appendfsync", "always")
    server = RedisServer(tmp_path / "redis", require_redis_server(), durable).start()
    robots = Held(text(ROBOTS))
    site = sites(routes={"/robots.txt": robots}, default=text("page"))
    urls = [site.url(path) for path in PAGES[:4] + PRIVATE[:1]]
    name = f"q-{uuid.uuid4().hex[:8]}"
    proc = CrawlerProc(
        tmp_path, "crawler0", urls, scrapy_redis_settings(server, name), dont_filter=False
    )
    client = redis.Redis.from_url(server.url)

    def in_redis() -> tuple[int, int]:
        return client.zcard(f"{name}:requests:waiting"), client.zcard(
            f"{name}:requests:waiting:{site.origin}"
        )

    try:
        # every start request is in Redis (Scrapy stops a crawl whose start
        # requests cannot be scheduled: not what this test is about)
        await until_async(lambda: in_redis() == (1, len(urls)), 30, "every request in Redis")
        client.close()
        server.stop()  # SIGTERM: Redis writes its file and exits
        released = time.monotonic()
        robots.release()

        def back_once_told() -> None:
            """Redis back once the crawler said the move failed (at most 15 s on)."""
            if "stay in Redis" in proc.log_text() or time.monotonic() - released > 15:
                watch.stop()
                server.start()

        watch = task.LoopingCall(back_once_told)
        watch.start(0.05, now=False)
        result = await proc.finished(timeout=60)
    finally:
        server.stop(kill=True)
    log = proc.log_text()
    assert "Unhandled error in Deferred" not in log
    # the engine's calls of the queue while Redis is down: said, not CRITICAL tracebacks
    assert "CRITICAL" not in log, log[log.index("CRITICAL") :][:2000]
    warnings = [line for line in log.splitlines() if "WARNING" in line and "stay in Redis" in line]
    assert len(warnings) == 1, warnings
    assert site.origin in warnings[0]
    fetched = [p for p in site.hits if p != "/robots.txt"]
    assert sorted(fetched) == sorted(PAGES[:4])  # each exactly once, none disallowed
    assert sorted(result["fetched"]) == sorted(site.url(p) for p in PAGES[:4])


def test_the_addon_sets_the_queue_only_for_scrapy_redis() -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components._addon import Addon
    from scrapy_rfc9309.components._enabled import OUR_REDIS_QUEUE

    settings = Settings({"SCHEDULER": "scrapy_redis.scheduler.Scheduler"})
    Addon().update_settings(settings)
    assert settings.get("SCHEDULER_QUEUE_CLASS") == OUR_REDIS_QUEUE
    mine = Settings({"SCHEDULER": "scrapy_redis.scheduler.Scheduler"})
    mine.set("SCHEDULER_QUEUE_CLASS", "scrapy_redis.queue.FifoQueue", "project")
    Addon().update_settings(mine)
    assert mine.get("SCHEDULER_QUEUE_CLASS") == "scrapy_redis.queue.FifoQueue"  # yours wins
    plain = Settings()
    Addon().update_settings(plain)
    assert plain.get("SCHEDULER_QUEUE_CLASS") != OUR_REDIS_QUEUE


@deferred_f_from_coro_f
async def test_2_3_requests_popped_before_their_site_is_settled_here_wait_in_memory(
    sites: Any, redis_server: RedisServer
) -> None:
    """Another process settled a site (its robots.txt is in the Redis store) and
    its requests are in the shared queue: this process pops them before it has
    settled the site, keeps them in memory while it reads the site's copy from
    the store (8, within the 16 it downloads at once), and hands them out then.
    None goes back to Redis (two round trips each: to the site's waiting list
    and popped again): no ZADD at all.
    Only disallowed pages are dropped; robots.txt is downloaded once."""
    from scrapy import Request
    from scrapy_redis.queue import PriorityQueue

    from .conftest import RecordingSpider, crawl

    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    name = f"q-{uuid.uuid4().hex[:8]}"
    settings = {
        **scrapy_redis_settings(redis_server, name),
        "ROBOTSTXT_STORE_URI": redis_server.url,
        "ROBOTSTXT_STORE_PREFIX": f"{name}-store:",
        "ROBOTSTXT_CRAWL_DELAY": False,  # no cluster pacer: its heartbeat is a ZADD
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": 16,  # room in memory for the 8 (see the test below)
    }
    first, _ = await crawl([site.url("/first")], settings)  # settles the site, stores it
    assert first.fetched == [site.url("/first")]
    client = redis.Redis.from_url(redis_server.url)
    producer = RecordingSpider()
    queue = PriorityQueue(client, producer, f"{name}:requests")
    paths = [*PAGES[:6], *PRIVATE[:2]]
    for path in paths:  # as another process that settled the site queues them
        queue.push(
            Request(site.url(path), producer.parse, errback=producer.failed, dont_filter=True)
        )
    client.config_resetstat()
    second, _ = await crawl([], settings)
    zadds = int(client.info("commandstats").get("cmdstat_zadd", {}).get("calls", 0))
    assert sorted(second.fetched) == sorted(site.url(p) for p in PAGES[:6])
    assert sorted(second.dropped) == sorted(site.url(p) for p in PRIVATE[:2])
    assert site.count("/robots.txt") == 1
    assert zadds == 0
    assert client.zcard(f"{name}:requests") == 0


@deferred_f_from_coro_f
async def test_2_3_requests_popped_for_a_slow_robots_txt_go_to_redis_after_a_second(
    sites: Any, redis_server: RedisServer
) -> None:
    """The same, but the site's robots.txt is slow to answer (it answers once the
    popped requests are back in Redis): after ``PARK_SECONDS`` the requests kept
    in memory go to the site's waiting list, so no more than a second's worth of
    them is ever in a process's memory; they are fetched once it answers."""
    from scrapy import Request
    from scrapy_redis.queue import PriorityQueue
    from twisted.internet import task

    from scrapy_rfc9309.components.crawl._redis_queue import PARK_SECONDS

    from .conftest import RecordingSpider, crawl

    name = f"q-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(redis_server.url)
    robots = Held(text(ROBOTS))
    site = sites(routes={"/robots.txt": robots}, default=text("page"))

    def in_redis() -> int:
        return sum(client.zcard(k) for k in client.scan_iter(f"{name}:requests:waiting:*"))

    def release_when_in_redis() -> None:
        if in_redis() == len(PAGES[:4]) and not robots.released:
            robots.release()

    producer = RecordingSpider()
    queue = PriorityQueue(client, producer, f"{name}:requests")
    for path in PAGES[:4]:
        queue.push(Request(site.url(path), producer.parse, errback=producer.failed))
    watcher = task.LoopingCall(release_when_in_redis)
    watcher.start(0.05)
    try:
        settings = {**scrapy_redis_settings(redis_server, name), "LOG_LEVEL": "INFO"}
        started = time.monotonic()
        spider, _ = await crawl([], settings)
    finally:
        watcher.stop()
    assert robots.released  # only once all of them were back in Redis
    assert sorted(spider.fetched) == sorted(site.url(p) for p in PAGES[:4])
    assert time.monotonic() - started >= PARK_SECONDS
    assert client.zcard(f"{name}:requests") == 0


def _queue_with_a_settled_site(server: RedisServer, name: str) -> tuple[Any, str]:
    """A crawler's ``RobotsTxtRedisQueue`` on ``server`` (the add-on, scrapy-redis's
    scheduler), and a site whose robots.txt is in force in its site service."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309 import RobotsTxtMiddleware
    from scrapy_rfc9309.components.crawl._redis_queue import RobotsTxtRedisQueue
    from scrapy_rfc9309.parser._robotstxt import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    crawler = get_crawler(Spider, scrapy_redis_settings(server, name))
    crawler.spider = crawler._create_spider("q")
    service = RobotsTxtMiddleware.from_crawler(crawler).service
    site = "http://settled.test:80"  # a site is scheme, host and port
    now = service.clock.monotonic()
    outcome = SiteOutcome(Kind.PARSED, RobotsTxt.parse(ROBOTS), "HTTP 200", now + 3600)
    service._table.start(site)  # as a fetch does: pending, then settled
    service._table.settle(site, outcome.compact())
    client = redis.Redis.from_url(server.url, socket_connect_timeout=1, socket_timeout=1)
    return RobotsTxtRedisQueue(client, crawler.spider, f"{name}:requests"), site


def test_2_3_redis_silent_the_queue_hands_out_nothing_and_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis stops answering: the queue's ``pop`` hands out nothing and its length
    keeps the process open (scrapy-redis's own queue lets each failed call out of
    the engine's timers as a CRITICAL traceback), with one WARNING for the
    outage; once Redis is back, one INFO line, and the request that waited in
    Redis is handed out."""
    import logging

    from scrapy import Request

    durable = ("--appendonly", "yes", "--appendfsync", "always")
    server = RedisServer(tmp_path / "redis", require_redis_server(), durable).start()
    try:
        queue, site = _queue_with_a_settled_site(server, f"q-{uuid.uuid4().hex[:8]}")
        queue.push(Request(f"{site}/page", dont_filter=True))
        server.stop()
        with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.queue"):
            assert queue.pop() is None
            assert len(queue) >= 1  # what waits in Redis cannot be told: kept open
            assert queue.pop() is None
            server.start()
            popped = queue.pop()
        assert popped is not None and popped.url == f"{site}/page"
        assert len(queue) == 0
    finally:
        server.stop(kill=True)
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    silent = [m for level, m in said if level == "WARNING" and "did not answer the queue" in m]
    assert len(silent) == 1, said
    assert "no request is handed out until it answers" in silent[0]
    assert [m for level, m in said if level == "INFO" and "answers the queue again" in m]


def test_2_3_a_request_popped_as_redis_stops_answering_is_kept_in_memory(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request popped whose site this process has not settled, with no room left
    in memory, goes to its site's waiting list; when Redis fails right then, the
    request is kept in memory (counted in the queue's length, tried again
    later), never lost."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from scrapy import Request
    from scrapy_redis.queue import PriorityQueue

    from scrapy_rfc9309.components.crawl import _redis_queue

    name = f"q-{uuid.uuid4().hex[:8]}"
    queue, _ = _queue_with_a_settled_site(redis_server, name)
    other = "http://unsettled.test"
    PriorityQueue.push(queue, Request(f"{other}/page", dont_filter=True))  # as another process
    monkeypatch.setattr(_redis_queue, "PARK_MAX", 0)  # no room in memory: to Redis

    def silent(*args: Any, **kwargs: Any) -> None:
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(queue, "_to_wait", silent)
    assert queue.pop() is None
    kept = [request.url for requests in queue._parked.values() for request in requests]
    assert kept == [f"{other}/page"]
    assert len(queue) == 1
    queue.spider_closed()  # its timers cancelled


def test_2_3_a_move_script_failing_in_redis_loses_no_popped_request(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The move of a settled site's waiting list fails inside Redis (a key of
    another type under the list's name): the request popped in the same round
    trip is handed out all the same, and one ERROR names the site (not again at
    the next pops, which try the move again). Once a move of the site succeeds,
    a later failure of its move is an ERROR again."""
    import logging

    from scrapy import Request

    name = f"q-{uuid.uuid4().hex[:8]}"
    queue, site = _queue_with_a_settled_site(redis_server, name)
    queue.push(Request(f"{site}/ready", dont_filter=True))
    broken = "http://broken.test:80"
    client = redis.Redis.from_url(redis_server.url)
    client.set(f"{name}:requests:waiting:{broken}", "not a sorted set")
    queue._waiting.add(broken)  # its requests were listed by this process
    queue.site_released(broken)  # settled: its list is moved with the next pop
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.queue"):
        popped = queue.pop()
        assert queue.pop() is None
    assert popped is not None and popped.url == f"{site}/ready"
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and broken in errors[0], errors
    assert "CRITICAL" not in [r.levelname for r in caplog.records]
    # mended: the next pop's move succeeds; broken again later, said again
    client.delete(f"{name}:requests:waiting:{broken}")
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.queue"):
        assert queue.pop() is None
        assert broken not in queue._to_move
        client.set(f"{name}:requests:waiting:{broken}", "not a sorted set")
        queue._waiting.add(broken)
        queue.site_released(broken)
        assert queue.pop() is None
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and broken in errors[0], errors
    queue.spider_closed()  # its timers cancelled


def test_2_3_a_pop_keeps_no_more_shared_requests_in_memory_than_the_process_downloads(
    redis_server: RedisServer,
) -> None:
    """Ten requests of a site another process settled are in the shared queue,
    the site being settled in this process: a pop keeps in memory only as many
    as this process downloads at once (``CONCURRENT_REQUESTS`` 2); the other
    eight go to the site's waiting list in Redis, moved back into the shared
    queue once the site is settled here, for any process to take. (A pop kept
    all of them, so one process took a cluster's shared requests and the others
    went idle.)"""
    from scrapy import Request
    from scrapy_redis.queue import PriorityQueue

    name = f"q-{uuid.uuid4().hex[:8]}"
    queue, _ = _queue_with_a_settled_site(redis_server, name)
    other = "http://settled-elsewhere.test:80"
    queue._robots._table.start(other)  # its robots.txt being read here (from the store)
    for n in range(10):  # as another process that settled the site queues them
        PriorityQueue.push(queue, Request(f"{other}/page/{n}", dont_filter=True))
    client = redis.Redis.from_url(redis_server.url)
    try:
        assert queue.pop() is None
        parked = [r for requests in queue._parked.values() for r in requests]
        assert len(parked) == 2
        assert client.zcard(f"{name}:requests:waiting:{other}") == 8
        assert client.zcard(f"{name}:requests") == 0
    finally:
        queue.spider_closed()  # its timers cancelled; the two kept go back to Redis
    assert client.zcard(f"{name}:requests:waiting:{other}") == 10

"""A site's pages arrive at its server at least its ``Crawl-delay`` apart across
a cluster, even when a process sends its request late after its turn.

``Crawl-delay`` is not part of RFC 9309 (a non-standard extension its section
2.2.4 leaves to crawlers); a site that asks for it asks it of the crawler. A
turn confirmed just before the send is not an arrival: a busy process writes
its request later. The site's answer therefore moves its next turn to at
least the answer plus the delay. Real ``redis-server``, real crawler
processes (``tests/cluster_crawl.py``), asserting on when the site's server
saw each page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet import task

from scrapy_rfc9309.components._enabled import PACING_MIDDLEWARE_PRIORITY
from scrapy_rfc9309.sites._cluster_clock import ClusterClock, flight_key

from .redis_server import RedisServer
from .server import delayed, text
from .test_cluster_delay import ADDON, PAGES, page_gaps
from .test_redis_store import CrawlerProc, cluster_settings

SITE = "http://a.example:80"


def test_answer_moves_the_next_turn_and_withdraws_an_earlier_grant(
    redis_server: RedisServer, prefix: str
) -> None:
    """The Lua script: a turn reserved before another request's answer is not
    confirmed at once (it waits a delay from the answer); an answer never
    moves the site's next time earlier. A's send names no token (none in
    flight: a grant can come before its answer). The scripts decide by a
    manual clock (``now``), moved on instead of waited for."""
    now = task.Clock()
    now.advance(1_000.0)
    clock = ClusterClock.open(redis_server.url, prefix, now=now.seconds)
    other = ClusterClock.open(redis_server.url, prefix, now=now.seconds)  # another process
    try:
        assert clock.send(SITE, 0.05) == 0.0  # a's turn
        now.advance(0.049)
        assert other.take(SITE, 0.05, "b") == 0.001  # within the delay of a's send
        now.advance(0.001)
        assert other.take(SITE, 0.05, "b") == 0.0  # reserved at the scheduler
        now.advance(0.01)
        assert clock.answered(SITE, 2.0) == 0.0  # a answered later than b's grant
        now.advance(0.5)
        assert other.send(SITE, 0.05, "b") == 1.5  # withdrawn: b waits a delay from a's answer
        clock.answered(SITE, 0.05)  # a shorter push: the later time stays
        assert other.take(SITE, 0.05, "c") == 1.5
    finally:
        clock.close()
        other.close()


def test_no_turn_while_a_send_is_in_flight(redis_server: RedisServer, prefix: str) -> None:
    """The Lua script: from a confirmed send to its answer no turn of the site is
    granted or confirmed, however long past the delay (the wait told is at
    least the delay); its answer ends the flight and the next turn is a delay
    after it. An answer naming another token ends nothing. The flight lives
    as long as the clock was told (``flight``), in Redis's own time."""
    now = task.Clock()
    now.advance(1_000.0)
    clock = ClusterClock.open(redis_server.url, prefix, now=now.seconds, flight=30.0)
    other = ClusterClock.open(redis_server.url, prefix, now=now.seconds, flight=30.0)
    client = redis.Redis.from_url(redis_server.url)
    try:
        assert clock.take(SITE, 0.05, "a") == 0.0
        assert clock.send(SITE, 0.05, "a") == 0.0
        assert 29_000 < client.pttl(flight_key(prefix, SITE)) <= 30_000
        now.advance(5.0)  # a slow answer, or a send written late
        assert other.take(SITE, 0.05, "b") == 0.05
        assert other.send(SITE, 0.05, "b") == 0.05
        clock.answered(SITE, 0.05, "x")  # not a's token: a stays in flight
        assert other.send(SITE, 0.05, "b") == 0.05
        clock.answered(SITE, 0.05, "a")
        assert other.send(SITE, 0.05, "b") == 0.05  # a delay from a's answer
        now.advance(0.05)
        assert other.send(SITE, 0.05, "b") == 0.0  # b in flight now
        assert client.get(flight_key(prefix, SITE)) == b"b"
        assert clock.take(SITE, 0.05, "c") == 0.05
        assert clock.take("http://b.example:80", 0.05, "d") == 0.0  # other sites go on
    finally:
        clock.close()
        other.close()
        client.close()


def test_a_send_in_flight_lives_a_few_seconds_unless_renewed(
    redis_server: RedisServer, prefix: str
) -> None:
    """A confirmed send's token lives the clock's ``flight`` (10 s by default):
    its process renews it with each beat while the request is out, so that a
    process that dies holds the site that long at most. A renewal names its
    token: another send's is left alone."""
    client = redis.Redis.from_url(redis_server.url)
    clock = ClusterClock.open(redis_server.url, prefix)
    other = ClusterClock.open(redis_server.url, prefix)
    key = flight_key(prefix, SITE)
    try:
        assert clock.send(SITE, 0.05, "a") == 0.0
        assert 9_000 < client.pttl(key) <= 10_000
        client.pexpire(key, 3_000)  # time passes
        other.renew([(SITE, "b")])  # not its send
        assert client.pttl(key) <= 3_000
        clock.renew([(SITE, "a")])
        assert 9_000 < client.pttl(key) <= 10_000
        assert client.get(key) == b"a"
    finally:
        clock.close()
        other.close()
        client.close()


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_crawl_delay_counts_from_the_answer_when_a_send_is_late(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """Two processes, 3 pages each, ``Crawl-delay: 0.5``; in one, each request
    reaches the site 0.3 s after its turn was confirmed (a busy process), and
    the site takes 0.4 s to answer. The site receives every page at least 0.5 s
    after the one before: counted from the confirmations alone, the other
    process's next page came 0.2 s after a late one (before its answer could
    move the site's turn), and it came so when that answer's push reached
    Redis late (a loaded machine)."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 0.5\n")},
        default=delayed(0.4, text("page")),
    )
    settings = cluster_settings(redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, **ADDON)
    late = {
        **settings,
        "DOWNLOADER_MIDDLEWARES": {
            "tests.cluster_crawl.SlowAfterConfirm": PACING_MIDDLEWARE_PRIORITY + 1
        },
        "SLOW_AFTER_CONFIRM_SECONDS": 0.3,
    }
    procs = [
        CrawlerProc(
            tmp_path,
            f"crawler{n}",
            [site.url(path) for path in PAGES[n:6:2]],
            late if n == 0 else settings,
            barrier=[str(tmp_path), 2],
        )
        for n in range(2)
    ]
    results = [await proc.finished() for proc in procs]
    assert sorted(p for p in site.hits if p != "/robots.txt") == sorted(PAGES[:6])
    gaps = page_gaps(site)
    # Redis counts whole milliseconds
    assert min(gaps) >= 0.499, gaps
    for result in results:
        assert result["stats"].get("log_count/ERROR", 0) == 0

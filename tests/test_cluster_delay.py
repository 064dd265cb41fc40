"""Crawl-delay kept across the processes of a cluster (a Redis store).

``Crawl-delay`` is not part of RFC 9309; a site that asks for it asks it of
the crawler. With a Redis store, each site's next allowed time is kept in
Redis, so that the site receives its pages at least that far apart whatever
the number of processes. Real ``redis-server``, real crawler processes
(``tests/cluster_crawl.py``), asserting on when the site's server saw each page.
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.cluster import _pacing_outage
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.sites._cluster_clock import MAX_DELAY_MS, ClusterClock, delay_key, delay_ms

from .conftest import crawl
from .redis_server import RedisServer, require_redis_server
from .server import text
from .test_redis_store import CrawlerProc, cluster_settings

PAGES = [f"/page/{number}" for number in range(12)]
#: the add-on: our queue, the extension (Crawl-delay) and the pacing middleware
ADDON = {"ADDONS": {"scrapy_rfc9309.Addon": 100}, "DOWNLOADER_MIDDLEWARES": {}}


def page_gaps(site: Any) -> list[float]:
    """Seconds between the pages' arrivals at the site's server, in order."""
    times = sorted(
        t for path, t in zip(site.hits, site.hit_times, strict=True) if path != "/robots.txt"
    )
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def test_cluster_clock_grants_a_site_once_per_delay(redis_server: RedisServer, prefix: str) -> None:
    """The Lua script: a second request of the site within the delay is told how
    long to wait; another site is not; the key is hash-tagged on the site."""
    clock = ClusterClock.open(redis_server.url, prefix)
    other = ClusterClock.open(redis_server.url, prefix)  # another process
    try:
        assert clock.take("http://a.example:80", 2.0) == 0.0
        left = other.take("http://a.example:80", 2.0)
        assert 1.5 < left <= 2.0
        assert other.take("http://b.example:80", 2.0) == 0.0
        key = delay_key(prefix, "http://a.example:80")
        assert key == prefix + "next:{http://a.example:80}"
        assert 2000 < redis.Redis.from_url(redis_server.url).pttl(key) <= 3000  # expires
    finally:
        clock.close()
        other.close()


@pytest.mark.parametrize("delay", [1e300, float("inf"), float("nan"), 86_400.0])
def test_a_huge_or_non_finite_delay_is_capped_at_a_day_before_redis(
    redis_server: RedisServer, prefix: str, delay: float
) -> None:
    """The clock's scripts take whole milliseconds: a delay of 1e300 s (or one
    that is not finite) is kept as a day, never an error of the script."""
    assert delay_ms(delay) == MAX_DELAY_MS == 86_400_000
    clock = ClusterClock.open(redis_server.url, prefix)
    try:
        assert clock.take("http://a.example:80", delay) == 0.0
        assert 86_000 < clock.take("http://a.example:80", delay) <= 86_400
        assert clock.answered("http://a.example:80", delay) == 0.0
        pttl = redis.Redis.from_url(redis_server.url).pttl(delay_key(prefix, "http://a.example:80"))
        assert 86_000_000 < pttl <= MAX_DELAY_MS + 1000
    finally:
        clock.close()


@deferred_f_from_coro_f
async def test_crawl_delay_1e300_with_a_cap_past_a_day_stops_the_crawl_at_start(
    sites: Any, redis_server: RedisServer, prefix: str
) -> None:
    """``ROBOTSTXT_CRAWL_DELAY_MAX = 1e308`` would let ``Crawl-delay: 1e300``
    reach the cluster clock: the crawl stops at start-up naming the setting,
    nothing fetched (the clock itself caps what reaches Redis: the test above)."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 1e300\n")}, default=text("page")
    )
    settings = cluster_settings(redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, **ADDON)
    with pytest.raises(SettingError, match="ROBOTSTXT_CRAWL_DELAY_MAX") as error:
        await crawl([site.url("/page/0")], {**settings, "ROBOTSTXT_CRAWL_DELAY_MAX": 1e308})
    assert "at most 86400 seconds" in str(error.value)
    assert site.hits == []


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_crawl_delay_kept_across_three_processes(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """Three processes, ``Crawl-delay: 0.5``, 2 pages each: the site receives its
    6 pages at least 0.4 s apart (without the cluster: three at a time)."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 0.5\n")}, default=text("page")
    )
    settings = cluster_settings(redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, **ADDON)
    procs = [
        CrawlerProc(
            tmp_path,
            f"crawler{n}",
            [site.url(path) for path in PAGES[:6][n::3]],
            settings,
            barrier=[str(tmp_path), 3],
        )
        for n in range(3)
    ]
    results = [await proc.finished() for proc in procs]
    assert sorted(p for p in site.hits if p != "/robots.txt") == sorted(PAGES[:6])
    gaps = page_gaps(site)
    assert min(gaps) >= 0.4, gaps
    stats = [result["stats"] for result in results]
    assert sum(s.get("robotstxt/cluster_delay/waited", 0) for s in stats) >= 3
    assert sum(s.get("robotstxt/cluster_delay/wait_seconds", 0) for s in stats) > 0
    for s in stats:
        assert s.get("log_count/ERROR", 0) == 0


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_turn_counts_from_the_send_not_from_the_scheduler(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """Two processes, 3 pages each, ``Crawl-delay: 0.5``; in one, each request is
    held 0.35 s between the scheduler and the download (a slow middleware of the
    project). The site still receives its pages at least the delay apart: a turn counts
    from the send (taken at the scheduler, the held request would arrive 0.15 s
    after the other process's next one)."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 0.5\n")}, default=text("page")
    )
    settings = cluster_settings(redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, **ADDON)
    slow = {
        **settings,
        "DOWNLOADER_MIDDLEWARES": {"tests.cluster_crawl.SlowAfterPop": 500},
        "SLOW_AFTER_POP_SECONDS": 0.35,
    }
    procs = [
        CrawlerProc(
            tmp_path,
            f"crawler{n}",
            [site.url(path) for path in PAGES[n:6:2]],
            slow if n == 0 else settings,
            barrier=[str(tmp_path), 2],
        )
        for n in range(2)
    ]
    results = [await proc.finished() for proc in procs]
    assert sorted(p for p in site.hits if p != "/robots.txt") == sorted(PAGES[:6])
    gaps = page_gaps(site)
    assert min(gaps) >= 0.45, gaps
    for result in results:
        assert result["stats"].get("log_count/ERROR", 0) == 0


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_cluster_delay_with_another_queue_waits_in_the_downloader(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """``ROBOTSTXT_CLUSTER_DELAY`` for a site without Crawl-delay, with Scrapy's
    own priority queue (not ours): the requests wait in the downloader, and the
    site still receives its pages at least the delay apart across two processes."""
    site = sites(routes={"/robots.txt": text(b"User-agent: *\nDisallow:\n")}, default=text("page"))
    settings = cluster_settings(
        redis_server,
        prefix,
        ROBOTSTXT_CLUSTER_DELAY=0.5,
        **ADDON,
        SCHEDULER_PRIORITY_QUEUE="scrapy.pqueues.ScrapyPriorityQueue",
    )
    procs = [
        CrawlerProc(
            tmp_path,
            f"crawler{n}",
            [site.url(path) for path in PAGES[n:6:2]],
            settings,
            barrier=[str(tmp_path), 2],
        )
        for n in range(2)
    ]
    results = [await proc.finished() for proc in procs]
    assert sorted(p for p in site.hits if p != "/robots.txt") == sorted(PAGES[:6])
    gaps = page_gaps(site)
    assert min(gaps) >= 0.4, gaps
    assert sum(r["stats"].get("robotstxt/cluster_delay/waited", 0) for r in results) >= 3


async def crawl_losing_redis(
    sites: Any, tmp_path: Path, robots: bytes, urls: list[str], **extra: Any
) -> tuple[Any, Any, Any]:
    """A crawl with the add-on and a Redis store whose server is killed as the
    site's robots.txt (``robots``) is served: the site, the spider, the stats."""
    server = RedisServer(tmp_path / "redis", require_redis_server()).start()

    def stop_redis(request: Any) -> bytes:
        server.stop(kill=True)
        return robots

    site = sites(routes={"/robots.txt": stop_redis}, default=text("page"))
    settings = cluster_settings(server, "lost:", ROBOTSTXT_CRAWL_DELAY=True, **extra, **ADDON)
    try:
        spider, stats = await crawl([site.url(url) for url in urls], settings, allow_errors=True)
    finally:
        server.stop(kill=True)
    return site, spider, stats


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_redis_lost_for_good_holds_then_sends_in_slots_with_one_error(
    sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis gone after start-up, for good: one ERROR line; the site's pages are
    held (1 s here, 30 s in a crawl), then sent in this process's slots (the one
    process alive: every slot), still at least the Crawl-delay apart (1 s: the
    server in this process, on a loaded machine, may read a request 0.2 s after
    it was sent), and all fetched: the crawl never waits for Redis for ever."""
    monkeypatch.setattr(_pacing_outage, "HOLD_MAX_SECONDS", 1.0)
    with caplog.at_level(logging.INFO):
        site, spider, stats = await crawl_losing_redis(
            sites, tmp_path, b"User-agent: *\nCrawl-delay: 1\n", PAGES[:3]
        )
    assert sorted(spider.fetched) == sorted(site.url(path) for path in PAGES[:3])
    errors = [
        r for r in caplog.records if r.levelno >= logging.ERROR and "site's turn" in r.getMessage()
    ]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert stats.get("robotstxt/cluster_delay/errors", 0) >= 1  # each try of Redis counted
    assert min(page_gaps(site)) >= 0.7

"""Crawl-delay applies whatever the source of the robots.txt in force.

``Crawl-delay`` is not part of RFC 9309; a site that asks for it asks it of
the crawler, and a copy taken from the store (RFC 9309 2.4: a cached copy may
be used) asks it as much as a download. Sites fetched ahead beyond
``ROBOTSTXT_CONCURRENT_DOWNLOADS`` start later, with no request of their own,
and the store answers several of them in one look-up (the Redis store's
pipelined batch, or a SQLite store too large to be read at open): each process still
spaces their pages. Real ``redis-server`` and SQLite, real crawler processes
(``tests/cluster_crawl.py``), asserting on when each site's server saw its pages.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import BASE_SETTINGS
from .redis_server import RedisServer
from .server import MockSite, text
from .test_redis_store import CrawlerProc, cluster_settings

#: the sites' Crawl-delay (without it, a site's pages arrive 0.000 s apart)
DELAY = 0.5
ROBOTS = f"User-agent: *\nCrawl-delay: {DELAY}\n".encode()
#: one site per loopback address: each its own download slot in Scrapy
HOSTS = [f"127.0.0.{n}" for n in range(2, 6)]
#: arrivals may be this much closer than the delay (timers, a loaded machine)
SLACK = 0.2
#: the add-on: our queue, the extension (Crawl-delay) and the pacing middleware
ADDON = {"ADDONS": {"scrapy_rfc9309.Addon": 100}, "DOWNLOADER_MIDDLEWARES": {}}
#: two fetches at a time: the sites after the first two start with no request of theirs
FEW_DOWNLOADS = {"ROBOTSTXT_CRAWL_DELAY": True, "ROBOTSTXT_CONCURRENT_DOWNLOADS": 2}


def page_times(site: MockSite, after: int = 0) -> list[float]:
    """When the site's server received its pages, from its ``after``-th hit on."""
    return sorted(
        t
        for path, t in zip(site.hits[after:], site.hit_times[after:], strict=True)
        if path != "/robots.txt"
    )


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def make_sites(sites: Any) -> list[MockSite]:
    return [
        sites(host=host, routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
        for host in HOSTS
    ]


async def fill_store(urls: list[str], settings: dict[str, Any]) -> None:
    """One crawl (in this process) that downloads each site's robots.txt into the store."""
    from .conftest import crawl

    _, stats = await crawl(urls, settings)
    assert stats.get("robotstxt/store/loaded", 0) == 0


def check_delays(all_sites: list[MockSite], offsets: list[int], pages: int) -> None:
    """Each site received its ``pages`` pages after ``offsets``, the delay apart."""
    for site, after in zip(all_sites, offsets, strict=True):
        times = page_times(site, after)
        assert len(times) == pages, site.hits[after:]
        assert min(gaps(times)) >= DELAY - SLACK, (site.origin, gaps(times))


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_crawl_delay_of_copies_taken_from_redis_in_a_batch(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """A Redis store that holds four sites' robots.txt (``Crawl-delay: 0.5``), two
    processes taking them from it, two at a time: each site's pages arrive at
    least the delay apart (every process applies it, and tells the cluster),
    no robots.txt is downloaded again, and no signal handler fails."""
    all_sites = make_sites(sites)
    settings = cluster_settings(redis_server, prefix, **ADDON, **FEW_DOWNLOADS)
    await fill_store([site.url("/") for site in all_sites], settings)
    offsets = [len(site.hits) for site in all_sites]
    procs = [
        CrawlerProc(
            tmp_path,
            f"crawler{n}",
            [site.url(f"/page/{n}/{page}") for page in range(2) for site in all_sites],
            settings,
            barrier=[str(tmp_path), 2],
        )
        for n in range(2)
    ]
    results = [await proc.finished() for proc in procs]
    for result in results:
        stats = result["stats"]
        assert stats.get("robotstxt/store/loaded") == len(all_sites), stats
        assert stats.get("robotstxt/request_count", 0) == 0, stats
    for site in all_sites:
        assert site.count("/robots.txt") == 1  # the filler's download only
    check_delays(all_sites, offsets, pages=4)
    for result in results:
        assert result["stats"].get("log_count/ERROR", 0) == 0, result["stats"]


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_crawl_delay_of_copies_read_from_sqlite_after_a_restart(
    sites: Any, tmp_path: Path
) -> None:
    """A crawl restarted on a SQLite store that holds four sites' robots.txt
    (``Crawl-delay: 0.5``), too many to be read at open: looked up in batches,
    two sites at a time. No robots.txt
    downloaded, each site's pages at least the delay apart, no signal handler
    failing (RFC 9309 2.4: the stored copy is used as the downloaded one)."""
    all_sites = make_sites(sites)
    settings = {
        **BASE_SETTINGS,
        **ADDON,
        **FEW_DOWNLOADS,
        "ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.sqlite'}",
    }
    await fill_store([site.url("/") for site in all_sites], settings)
    offsets = [len(site.hits) for site in all_sites]
    urls = [site.url(f"/page/{page}") for page in range(3) for site in all_sites]
    # a store holding more sites than are read at open: looked up in batches
    restarted = CrawlerProc(tmp_path, "restarted", urls, settings, preload_max_sites=2)
    result = await restarted.finished()
    stats = result["stats"]
    assert stats.get("robotstxt/store/loaded") == len(all_sites), stats
    assert stats.get("robotstxt/request_count", 0) == 0, stats
    for site in all_sites:
        assert site.count("/robots.txt") == 1
    check_delays(all_sites, offsets, pages=3)
    assert stats.get("log_count/ERROR", 0) == 0, stats


@deferred_f_from_coro_f
async def test_robots_parsed_of_a_stored_copy_taken_for_no_page_carries_its_request(
    sites: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scrapy documents ``robots_parsed``'s ``request`` as a Request: a copy
    taken from the store for no page (fetched ahead after the first two) is
    sent with the request of the site's robots.txt, never ``None``."""
    from scrapy.http import Request
    from scrapy.utils.test import get_crawler

    import scrapy_rfc9309
    from scrapy_rfc9309.components import _compat
    from scrapy_rfc9309.components.store import _store_lookups

    from .conftest import RecordingSpider, crawl

    all_sites = [
        sites(host=host, routes={"/robots.txt": text(b"User-agent: *\nDisallow: /x\n")})
        for host in HOSTS
    ]
    settings = {
        **BASE_SETTINGS,
        **ADDON,
        "ROBOTSTXT_CONCURRENT_DOWNLOADS": 2,
        "ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.sqlite'}",
    }
    await crawl([site.url("/x") for site in all_sites], settings)
    monkeypatch.setattr(_store_lookups, "PRELOAD_MAX_SITES", 2)  # looked up in batches
    crawler = get_crawler(RecordingSpider, settings)
    received: list[Any] = []

    def on_parsed(request: Any) -> None:
        received.append(request)

    crawler.signals.connect(on_parsed, signal=scrapy_rfc9309.robots_parsed)
    await _compat.crawl(crawler, urls=[site.url("/x") for site in all_sites])
    assert crawler.stats is not None
    assert crawler.stats.get_value("robotstxt/store/loaded") == len(all_sites)
    assert len(received) == len(all_sites)
    assert all(isinstance(request, Request) for request in received), received
    urls = {request.url for request in received}
    for site in all_sites:
        assert urls & {site.url("/x"), site.url("/robots.txt")}, urls


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_crawl_delay_of_a_stored_copy_kept_in_force_while_unreachable(
    sites: Any, tmp_path: Path
) -> None:
    """RFC 9309 2.4: a crawl restarted after the stored copy expired, its site's
    robots.txt now unreachable (503), keeps that copy in force, and its
    Crawl-delay with it: the pages arrive at least the delay apart."""
    from .clock import SkippingClock
    from .conftest import crawl
    from .server import sequence, status, with_headers

    site = sites(
        host=HOSTS[0],
        routes={
            "/robots.txt": sequence(
                with_headers(text(ROBOTS), Cache_Control="max-age=1"), status(503)
            )
        },
        default=text("page"),
    )
    settings = {
        **ADDON,
        "ROBOTSTXT_CRAWL_DELAY": True,
        "ROBOTSTXT_CACHE_MIN_TTL": 0,
        "ROBOTSTXT_UNREACHABLE_DEFER": 0,
        "ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.sqlite'}",
    }
    await crawl([site.url("/")], settings)
    after = len(site.hits)
    clock = SkippingClock()
    clock.skip(1.2)  # the stored copy expires
    spider, _ = await crawl([site.url(f"/page/{page}") for page in range(3)], settings, clock=clock)
    assert site.count("/robots.txt") == 2  # fetched again: 503, the stored copy kept
    assert len(spider.fetched) == 3
    times = page_times(site, after)
    assert min(gaps(times)) >= DELAY - SLACK, gaps(times)


def test_crawl_delay_of_the_tokens_obeyed_is_the_longest() -> None:
    """Our token's Crawl-delay and ``ROBOTSTXT_ALSO_OBEY``'s: the longest applies;
    a zero delay, or none, asks nothing; a cached (compacted) copy asks the same."""
    from scrapy_rfc9309.parser._robotstxt import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome
    from scrapy_rfc9309.sites._request_decision import asked_crawl_delay

    def outcome(body: bytes | None) -> SiteOutcome:
        robots = None if body is None else RobotsTxt.parse(body)
        return SiteOutcome(Kind.PARSED if body else Kind.UNAVAILABLE, robots, "", 0.0)

    parsed = outcome(
        b"User-agent: *\nDisallow: /a\nCrawl-delay: 0.5\n"
        b"User-agent: GPTBot\nDisallow: /b\nCrawl-delay: 2\n"
        b"User-agent: ZeroBot\nDisallow: /c\nCrawl-delay: 0\n"
    )
    for copy in (parsed, parsed.compact()):
        assert asked_crawl_delay(copy, ["ExampleBot"]) == 0.5
        assert asked_crawl_delay(copy, ["ExampleBot", "GPTBot"]) == 2
        assert asked_crawl_delay(copy, ["ZeroBot"]) is None
    assert asked_crawl_delay(outcome(None), ["ExampleBot"]) is None
    assert asked_crawl_delay(outcome(b"User-agent: *\nDisallow: /x\n"), ["A"]) is None

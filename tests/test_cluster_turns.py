"""A site's turns in the cluster (a Redis store, ``ROBOTSTXT_CRAWL_DELAY``) go
to the requests that are sent, and the stats say how long requests waited.

``Crawl-delay`` is not part of RFC 9309; a request its site's robots.txt
disallows (RFC 9309 2.2.2) is never sent, so it must not use up one of the
site's turns. Real ``redis-server``, real crawls against a local site,
asserting on when the site's server saw each page.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.cluster import _pacing_outage
from scrapy_rfc9309.sites._outcome import SiteOutcome

from .conftest import crawl
from .redis_server import RedisServer
from .server import status, text
from .test_cluster_delay import ADDON, crawl_losing_redis
from .test_redis_store import cluster_settings


def page_times(site: Any) -> list[float]:
    """When the site's server saw each page (robots.txt left out), in order."""
    return sorted(
        t
        for path, t in zip(site.hits, site.hit_times, strict=True)
        if path not in ("/robots.txt", "/.well-known/tdmrep.json")
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("refusal", "more", "stat"),
    [
        pytest.param(b"Disallow: /private/", {}, "rule", id="rfc9309-2.2.2-disallow"),
        pytest.param(
            b"Content-Usage: /private/ train-ai=n",
            {"ROBOTSTXT_PURPOSES": ["train-ai"]},
            "usage",
            id="content-usage-refused",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_2_2_2_refused_requests_take_no_cluster_turn(
    sites: Any,
    redis_server: RedisServer,
    prefix: str,
    refusal: bytes,
    more: dict[str, Any],
    stat: str,
) -> None:
    """``Crawl-delay: 1``; pages p0, five refused ``/private/*`` (a Disallow, or
    a usage preference refusing a declared purpose), p1: the refused ones are
    dropped without taking the site's turn, so p1 arrives one delay after p0
    (each used to cost a full delay: p1 came 6 s later)."""
    site = sites(
        routes={
            "/robots.txt": text(b"User-agent: *\n" + refusal + b"\nCrawl-delay: 1\n"),
            "/.well-known/tdmrep.json": status(404),
        },
        default=text("page"),
    )
    paths = ["/p0", *(f"/private/{n}" for n in range(5)), "/p1"]
    settings = cluster_settings(
        redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, DOWNLOAD_DELAY=0, **ADDON, **more
    )
    spider, stats = await crawl([site.url(path) for path in paths], settings)
    pages = sorted(p for p in site.hits if p not in ("/robots.txt", "/.well-known/tdmrep.json"))
    assert pages == ["/p0", "/p1"]
    assert len(spider.dropped) == 5
    assert stats.get(f"robotstxt/forbidden/{stat}") == 5
    first, second = page_times(site)
    assert 0.8 <= second - first < 2.0, second - first


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_2_2_a_paced_request_is_matched_once(
    sites: Any, redis_server: RedisServer, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RFC 9309 2.2.2 under a cluster Crawl-delay: the queue decides each request
    at pop (a refused one takes no turn) and the middleware takes that decision,
    the site's robots.txt unchanged since: one match per request, allowed or
    refused (each was matched twice)."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nDisallow: /private/\nCrawl-delay: 0.2\n")},
        default=text("page"),
    )
    matched: list[str] = []
    decide = SiteOutcome.decide

    def counted(self: SiteOutcome, url: str, *args: Any, **kwargs: Any) -> Any:
        matched.append(url)
        return decide(self, url, *args, **kwargs)

    monkeypatch.setattr(SiteOutcome, "decide", counted)
    settings = cluster_settings(
        redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, DOWNLOAD_DELAY=0, **ADDON
    )
    urls = [site.url(path) for path in ("/p0", "/private/a", "/p1", "/p2", "/private/b")]
    spider, stats = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(site.url(p) for p in ("/p0", "/p1", "/p2"))
    assert len(spider.dropped) == 2
    assert stats.get("robotstxt/cluster_delay/waited") == 2  # paced: p1 and p2 waited
    assert sorted(matched) == sorted(urls)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_content_usage_of_a_paced_request_is_decided_once(
    sites: Any, redis_server: RedisServer, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Usage preferences under a cluster Crawl-delay, as robots.txt rules: the
    queue reads them at pop (a refused request takes no turn) and the
    middleware takes that decision: one decision per request allowed by its
    rules, refused or not (each was decided at every pop, then again)."""
    from scrapy_rfc9309.parser._usage_decision import site_sources
    from scrapy_rfc9309.sites import _request_decision

    site = sites(
        routes={
            "/robots.txt": text(
                b"User-agent: *\nDisallow: /private/\nContent-Usage: /ai/ train-ai=n\n"
                b"Crawl-delay: 0.2\n"
            ),
        },
        default=text("page"),
    )
    decided: list[str] = []

    def counted(robots: Any, url: str, *args: Any, **kwargs: Any) -> Any:
        decided.append(url)
        return site_sources(robots, url, *args, **kwargs)

    monkeypatch.setattr(_request_decision, "site_sources", counted)
    settings = cluster_settings(
        redis_server,
        prefix,
        ROBOTSTXT_CRAWL_DELAY=True,
        DOWNLOAD_DELAY=0,
        ROBOTSTXT_PURPOSES=["train-ai"],
        **ADDON,
    )
    paths = ("/p0", "/ai/a", "/p1", "/private/a", "/p2", "/ai/b")
    spider, stats = await crawl([site.url(path) for path in paths], settings)
    assert sorted(spider.fetched) == sorted(site.url(p) for p in ("/p0", "/p1", "/p2"))
    assert stats.get("robotstxt/forbidden/usage") == 2
    assert stats.get("robotstxt/forbidden/rule") == 1
    assert stats.get("robotstxt/cluster_delay/waited") == 2  # paced: p1 and p2 waited
    allowed_by_rules = [site.url(p) for p in paths if not p.startswith("/private/")]
    assert sorted(decided) == sorted(allowed_by_rules)


def test_2_2_2_the_decision_at_pop_is_not_reused_once_robots_txt_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RFC 9309 2.2.2: the middleware takes the queue's decision only when it was
    made on the outcome in force now; a robots.txt fetched again in between (a
    new outcome) decides the request afresh, by what it says."""
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309.components.sitefiles._service import site_service
    from scrapy_rfc9309.parser import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind

    def outcome(body: bytes) -> SiteOutcome:
        return SiteOutcome(Kind.PARSED, RobotsTxt.parse(body), "HTTP 200", 1e12)

    service = site_service(get_crawler(Spider, {"ROBOTSTXT_OBEY": True}))
    assert service is not None
    site = "http://example.com"
    request = Request(f"{site}/private/a")
    old = outcome(b"User-agent: *\nAllow: /\n")
    new = outcome(b"User-agent: *\nDisallow: /private/\n")
    monkeypatch.setattr(service, "fresh", lambda _site: old)
    assert not service.refused_now(site, request)
    assert not service.decisions.decide(new, site, request).fetch  # decided afresh
    assert not service.refused_now(site, request)
    matched: list[str] = []
    decide = SiteOutcome.decide

    def counted(self: SiteOutcome, url: str, *args: Any, **kwargs: Any) -> Any:
        matched.append(url)
        return decide(self, url, *args, **kwargs)

    monkeypatch.setattr(SiteOutcome, "decide", counted)
    assert service.decisions.decide(old, site, request).fetch  # the queue's decision, taken
    assert matched == []
    assert not service.decisions.decide(new, site, request).fetch  # taken once only
    assert matched == [request.url]


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_wait_stats_count_requests_and_the_time_they_waited(
    sites: Any, redis_server: RedisServer, prefix: str
) -> None:
    """``Crawl-delay: 0.5``, five pages in one process: four of them wait for
    their turn (0.5, 1, 1.5, 2 s): ``waited`` is 4 (each request once), and
    ``wait_seconds`` the time they spent waiting (about 5 s), not the Redis
    answers of the first request in the site's line."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 0.5\n")}, default=text("page")
    )
    settings = cluster_settings(
        redis_server, prefix, ROBOTSTXT_CRAWL_DELAY=True, DOWNLOAD_DELAY=0, **ADDON
    )
    urls = [site.url(f"/page/{n}") for n in range(5)]
    spider, stats = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(urls)
    times = page_times(site)
    assert times[-1] - times[0] >= 1.8
    assert stats.get("robotstxt/cluster_delay/waited") == 4
    # the pages' own spacing is the lower bound of the time the last four waited
    expected = sum(t - times[0] for t in times[1:])
    assert expected * 0.8 <= stats["robotstxt/cluster_delay/wait_seconds"] <= expected + 2.0


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_redis_lost_one_error_per_outage_while_retried(
    sites: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis gone after start-up and still gone when tried again (every 0.2 s
    here, 1 s in a crawl): the cluster delay logs one ERROR for the outage,
    not one per try (the store likewise: one per component); every try counts
    in ``robotstxt/cluster_delay/errors``."""
    monkeypatch.setattr(_pacing_outage, "RETRY_SECONDS", 0.2)
    monkeypatch.setattr(_pacing_outage, "HOLD_MAX_SECONDS", 0.5)
    paths = [f"/page/{n}" for n in range(5)]
    with caplog.at_level(logging.INFO):
        site, spider, stats = await crawl_losing_redis(
            sites, tmp_path, b"User-agent: *\nCrawl-delay: 0.3\n", paths, CONCURRENT_REQUESTS=1
        )
    assert sorted(spider.fetched) == sorted(site.url(path) for path in paths)
    turn_errors = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and "site's turn" in r.getMessage()
    ]
    assert len(turn_errors) == 1, turn_errors
    assert stats.get("robotstxt/cluster_delay/errors", 0) >= 2
    store_errors = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and "robots.txt store failed" in r.getMessage()
    ]
    assert len(store_errors) <= 1, store_errors


@deferred_f_from_coro_f
async def test_start_up_line_names_scheduler_queue_class_under_scrapy_redis(
    sites: Any, redis_server: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """scrapy-redis's SCHEDULER with the user's own ``SCHEDULER_QUEUE_CLASS``:
    the start-up line says that setting left our Redis queue out (not
    ``SCHEDULER_PRIORITY_QUEUE``, which scrapy-redis never reads)."""
    pytest.importorskip("scrapy_redis")
    site = sites(routes={"/robots.txt": text(b"User-agent: *\nAllow: /\n")}, default=text("page"))
    settings = cluster_settings(
        redis_server,
        prefix,
        **ADDON,
        SCHEDULER="scrapy_redis.scheduler.Scheduler",
        SCHEDULER_QUEUE_CLASS="scrapy_redis.queue.FifoQueue",
        DUPEFILTER_CLASS="scrapy_redis.dupefilter.RFPDupeFilter",
        SCHEDULER_QUEUE_KEY=f"{prefix}requests",
        SCHEDULER_DUPEFILTER_KEY=f"{prefix}dupefilter",
        REDIS_URL=redis_server.url,
    )
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, _ = await crawl([site.url("/a")], settings)
    assert spider.fetched == [site.url("/a")]
    [note] = [r.getMessage() for r in caplog.records if "not fetched ahead" in r.getMessage()]
    assert (
        "does not use scrapy_rfc9309.RobotsTxtRedisQueue (SCHEDULER_QUEUE_CLASS is "
        "scrapy_redis.queue.FifoQueue, under scrapy-redis's SCHEDULER)" in note
    ), note
    assert "SCHEDULER_PRIORITY_QUEUE" not in note

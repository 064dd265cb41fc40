"""A robots.txt lifetime of 0 s means "fetch again for the next request that
needs it", never a download loop (RFC 9309 2.4): the requests that waited for a
fetch are decided by that fetch's outcome, even once it has expired. Real
crawls against the local test server, with the lifetimes set to 0 directly
(no settings floor in the way), counting the robots.txt downloads it served."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

from .clock import SkippingClock
from .conftest import crawl
from .server import status, text, with_headers

PAGE = text("<html>page</html>", content_type=b"text/html")
OURS = "scrapy_rfc9309.RobotsTxtPriorityQueue"
PLAIN = "scrapy.pqueues.ScrapyPriorityQueue"
RULES = "User-agent: *\nDisallow: /no\n"


@pytest.fixture
def zero_lifetimes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every robots.txt outcome expires as it is settled: the settings read with
    ``ROBOTSTXT_CACHE_TTL``, ``ROBOTSTXT_CACHE_MIN_TTL`` and
    ``ROBOTSTXT_UNREACHABLE_TTL`` of 0, whatever floor the settings apply."""
    read = RobotsTxtSettings.from_settings.__func__  # type: ignore[attr-defined]

    def zero(cls: type[RobotsTxtSettings], settings: Any) -> RobotsTxtSettings:
        return dataclasses.replace(
            read(cls, settings), cache_ttl=0.0, cache_min_ttl=0.0, unreachable_ttl=0.0
        )

    monkeypatch.setattr(RobotsTxtSettings, "from_settings", classmethod(zero))


def loop_guard() -> dict[str, Any]:
    # a looping crawl is stopped, so that the test fails instead of hanging
    return {"CLOSESPIDER_TIMEOUT": 10, "LOG_LEVEL": "INFO"}


@pytest.mark.usefixtures("zero_lifetimes")
@pytest.mark.parametrize(
    ("queue", "concurrency", "most"),
    # One download per need, at most one per request: how many needs there are
    # depends on how many batches Scrapy feeds the start requests in (each batch
    # waits for one fetch; a batch arriving after a fetch settled is a need of
    # its own), which varies with the reactor and the machine's load. A loop
    # downloads thousands of times within CLOSESPIDER_TIMEOUT.
    [(OURS, 16, 21), (PLAIN, 16, 21), (PLAIN, 2, 21)],
    ids=["our-queue", "another-queue", "another-queue-set-aside"],
)
@deferred_f_from_coro_f
async def test_2_4_a_zero_lifetime_fetches_once_per_need_never_in_a_loop(
    sites, queue: str, concurrency: int, most: int
) -> None:
    site = sites(routes={"/robots.txt": text(RULES)}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(20)] + [site.url("/no")]
    spider, stats = await crawl(
        urls,
        {"SCHEDULER_PRIORITY_QUEUE": queue, "CONCURRENT_REQUESTS": concurrency, **loop_guard()},
    )
    assert stats["finish_reason"] == "finished"
    assert sorted(spider.fetched) == sorted(urls[:-1])  # every allowed page
    assert list(spider.dropped) == [site.url("/no")]
    # one download per need, never a loop
    assert 1 <= site.count("/robots.txt") <= most


@pytest.mark.usefixtures("zero_lifetimes")
@pytest.mark.parametrize(
    ("queue", "most"),
    # with another queue no deferral: each request reaching the middleware after
    # a fetch settled is a need of its own, at most one download each; with our
    # queue 2 on an idle machine (the deferral's attempts), but on a loaded one
    # a request popped between them is a need of its own too: never more
    # downloads than requests (a loop would be unbounded)
    [(OURS, 10), (PLAIN, 10)],
    ids=["our-queue", "another-queue"],
)
@deferred_f_from_coro_f
async def test_2_3_1_4_a_zero_unreachable_lifetime_defers_and_drops_without_a_loop(
    sites, queue: str, most: int
) -> None:
    """An unreachable robots.txt whose outcome expires at once: with our queue
    its requests are deferred (tried again on the back-off, 1 s then 2 s) and
    dropped at ROBOTSTXT_UNREACHABLE_DEFER; with another queue dropped at once."""
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(10)]
    clock = SkippingClock(eager=3)  # the back-offs and the deadline without the wait
    spider, stats = await crawl(
        urls,
        {
            "SCHEDULER_PRIORITY_QUEUE": queue,
            "CONCURRENT_REQUESTS": 2,
            "ROBOTSTXT_UNREACHABLE_DEFER": 2.5,
            **loop_guard(),
        },
        clock=clock,
    )
    assert stats["finish_reason"] == "finished"
    assert spider.fetched == []
    assert sorted(spider.dropped) == sorted(urls)
    assert 1 <= site.count("/robots.txt") <= most
    if queue == OURS:  # deferred, then dropped at ROBOTSTXT_UNREACHABLE_DEFER
        assert stats["robotstxt/deferred/expired"] == 1


@deferred_f_from_coro_f
async def test_2_4_max_age_0_without_a_floor_fetches_once_per_need(sites) -> None:
    """``Cache-Control: max-age=0`` with ``ROBOTSTXT_CACHE_MIN_TTL = 0``: the lifetime
    the site asked, and still no loop."""
    robots = with_headers(text(RULES), Cache_Control="max-age=0")
    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(20)]
    spider, stats = await crawl(
        urls, {"SCHEDULER_PRIORITY_QUEUE": OURS, "ROBOTSTXT_CACHE_MIN_TTL": 0, **loop_guard()}
    )
    assert stats["finish_reason"] == "finished"
    assert sorted(spider.fetched) == sorted(urls)
    # at most one download per request (per need; see above), never a loop
    assert 1 <= site.count("/robots.txt") <= len(urls)

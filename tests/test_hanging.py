"""Many robots.txt that hang never stall healthy sites (RFC 9309 2.3.1.4; HTTP:
The Definitive Guide ch. 9): each robots.txt download has a deadline of its own
(``ROBOTSTXT_DOWNLOAD_TIMEOUT``), downloads that hang stop counting against
``ROBOTSTXT_CONCURRENT_DOWNLOADS``, first attempts go ahead of the attempts of
deferred sites, the deferral's deadline holds while an attempt waits for a
download, and pages in flight never exceed ``CONCURRENT_REQUESTS``. Real crawls
against the local test server, asserting on what it served, and when."""

from __future__ import annotations

import logging
import time
from typing import Any, ClassVar

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl
from .server import delayed, hang, status, text

OURS = "scrapy_rfc9309.RobotsTxtPriorityQueue"
PLAIN = "scrapy.pqueues.ScrapyPriorityQueue"
RULES = "User-agent: *\nDisallow: /no\n"


def counted(route: Any, gauge: dict[str, int]) -> Any:
    """``route``, with the pages in flight at the server counted in ``gauge``
    (``now``, and the most at once in ``max``)."""

    def wrapped(request: Any) -> Any:
        gauge["now"] += 1
        gauge["max"] = max(gauge["max"], gauge["now"])

        def done(_: Any) -> None:
            gauge["now"] -= 1

        request.notifyFinish().addBoth(done)
        return route(request)

    return wrapped


def pages(site: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if path != "/robots.txt"]


def robots(site: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if path == "/robots.txt"]


def hanging_sites(sites: Any, gauge: dict[str, int]) -> tuple[list[Any], list[Any], list[str]]:
    """40 sites x 3 pages, the robots.txt of every fourth hanging; the URLs
    breadth first (the first page of every site, then the second, ...)."""
    page = counted(delayed(0.05, text("<html>page</html>", content_type=b"text/html")), gauge)
    every = [
        sites(routes={"/robots.txt": hang() if index % 4 == 0 else text(RULES)}, default=page)
        for index in range(40)
    ]
    hung = every[::4]
    healthy = [site for index, site in enumerate(every) if index % 4]
    urls = [site.url(f"/p{n}") for n in range(3) for site in every]
    return hung, healthy, urls


@deferred_f_from_coro_f
async def test_2_3_1_4_hanging_robots_txt_never_stall_healthy_sites_and_deferral_holds(
    sites, caplog: pytest.LogCaptureFixture
) -> None:
    """10 of 40 robots.txt hang, 4 robots.txt downloads at a time: the healthy
    sites' pages are all fetched within ~1-2 s, each hanging robots.txt gives up
    after ROBOTSTXT_DOWNLOAD_TIMEOUT (1 s, not DOWNLOAD_TIMEOUT), its site is
    deferred and its requests dropped at ROBOTSTXT_UNREACHABLE_DEFER (1.5 s, an
    attempt in flight then or not), and at most 4 pages are in flight."""
    gauge = {"now": 0, "max": 0}
    hung, healthy, urls = hanging_sites(sites, gauge)
    caplog.set_level(logging.WARNING, logger="scrapy_rfc9309.middleware")
    started = time.monotonic()
    wall = time.time() - started  # a log record's time -> the server's clock
    spider, stats = await crawl(
        urls,
        {
            "SCHEDULER_PRIORITY_QUEUE": OURS,
            "CONCURRENT_REQUESTS": 4,
            "DOWNLOAD_TIMEOUT": 5,
            "ROBOTSTXT_DOWNLOAD_TIMEOUT": 1,
            "ROBOTSTXT_CONCURRENT_DOWNLOADS": 4,
            "ROBOTSTXT_UNREACHABLE_DEFER": 1.5,
            "LOG_LEVEL": "INFO",
        },
    )
    healthy_urls = [url for url in urls if not any(url.startswith(s.origin) for s in hung)]
    assert sorted(spider.fetched) == sorted(healthy_urls)
    assert sorted(spider.dropped) == sorted(set(urls) - set(healthy_urls))
    last_healthy = max(t for site in healthy for t in pages(site))
    # 90 pages of 0.05 s, 4 at a time, take 1.1 s; a hanging robots.txt in the
    # way would cost 5 s (DOWNLOAD_TIMEOUT; 11 s in all before this was fixed)
    assert last_healthy - started < 3.5
    assert all(pages(site) == [] for site in hung)
    # each site's deferral ends 1.5 s after its first unreachable answer (its
    # first download timed out after 1 s), an attempt in flight then or not
    expired = [
        record
        for record in caplog.records
        if "still unreachable after ROBOTSTXT_UNREACHABLE_DEFER" in record.getMessage()
    ]
    assert len(expired) == 10 == stats["robotstxt/deferred/expired"]
    began = [
        record
        for record in caplog.records
        if "wait in the scheduler for at most 1.5 s more" in record.getMessage()
    ]
    for site in hung:
        # the deferral is measured from the crawl's own first unreachable answer,
        # not from the server's arrival time: on a loaded machine the connection
        # itself may take part of the 1 s download deadline
        (record,) = [r for r in expired if site.origin in r.getMessage()]
        first = min(r.created for r in began if site.origin in r.getMessage())
        assert first < robots(site)[0] + wall + 1.5  # 1 s, not DOWNLOAD_TIMEOUT (5 s)
        deferred = record.created - first
        assert 1.5 - 0.1 < deferred < 1.5 + 0.5, deferred
    assert stats["robotstxt/forbidden/unreachable"] == 30
    assert gauge["max"] <= 4


@pytest.mark.parametrize("queue", [OURS, PLAIN], ids=["our-queue", "another-queue"])
@deferred_f_from_coro_f
async def test_2_3_pages_in_flight_never_exceed_concurrent_requests(sites, queue: str) -> None:
    """60 sites whose robots.txt are large enough to take parsing time, with a
    small site table (ROBOTSTXT_CACHE_MAX_SITES = 8): robots.txt downloads come
    on top of CONCURRENT_REQUESTS only while in the downloader, so the pages in
    flight at the server never exceed CONCURRENT_REQUESTS."""
    gauge = {"now": 0, "max": 0}
    page = counted(delayed(0.05, text("<html>page</html>", content_type=b"text/html")), gauge)
    big = RULES + "".join(f"Disallow: /x{n}/*/y$\n" for n in range(1000))
    many = [sites(routes={"/robots.txt": text(big)}, default=page) for _ in range(60)]
    urls = [site.url(f"/p{n}") for n in range(3) for site in many]
    spider, _ = await crawl(
        urls,
        {
            "SCHEDULER_PRIORITY_QUEUE": queue,
            "CONCURRENT_REQUESTS": 4,
            "ROBOTSTXT_CACHE_MAX_SITES": 8,
            "LOG_LEVEL": "INFO",
        },
    )
    assert sorted(spider.fetched) == sorted(urls)
    assert gauge["max"] <= 4


@deferred_f_from_coro_f
async def test_http_guide_ch9_an_attempt_waiting_for_a_download_past_the_deadline_is_not_made(
    sites, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One robots.txt download at a time (ROBOTSTXT_CONCURRENT_DOWNLOADS = 1), 6
    robots.txt that hang, ROBOTSTXT_UNREACHABLE_DEFER = 0.6 s: a deferred site's
    attempt waits behind the first attempts of the others, its deadline passes
    while it waits, and it is not made: the requests are dropped at the
    deadline (RFC 9309 2.3.1.4), never after another download. Every time is
    half the code's (a download timeout of 0.5 s, a first back-off of 0.5 s, a
    download slow after 0.25 s), so the crawl plays out as with 1 s, 1 s and
    0.5 s, twice as fast."""
    from scrapy_rfc9309.components.sitefiles import _download_slots
    from scrapy_rfc9309.sites import _sitetable

    monkeypatch.setattr(_sitetable, "BACKOFF_FIRST", _sitetable.BACKOFF_FIRST / 2)
    monkeypatch.setattr(_download_slots, "SLOW_AFTER", _download_slots.SLOW_AFTER / 2)
    page = text("<html>page</html>", content_type=b"text/html")
    hung = [sites(routes={"/robots.txt": hang()}, default=page) for _ in range(6)]
    urls = [site.url(f"/p{n}") for n in range(2) for site in hung]
    caplog.set_level(logging.WARNING, logger="scrapy_rfc9309.middleware")
    started = time.monotonic()
    wall = time.time() - started
    spider, stats = await crawl(
        urls,
        {
            "SCHEDULER_PRIORITY_QUEUE": OURS,
            "DOWNLOAD_TIMEOUT": 0.5,
            "ROBOTSTXT_DOWNLOAD_TIMEOUT": 0.5,
            "ROBOTSTXT_CONCURRENT_DOWNLOADS": 1,
            "ROBOTSTXT_UNREACHABLE_DEFER": 0.6,
            "LOG_LEVEL": "INFO",
        },
    )
    assert spider.fetched == [] and sorted(spider.dropped) == sorted(urls)
    assert stats["robotstxt/deferred/expired"] == 6
    for site in hung:
        messages = [(r.getMessage(), r.created - wall) for r in caplog.records]
        # the first unreachable answer (when the time-out fired: later than 0.5 s
        # after the first attempt on a loaded machine) and the deferral
        answered = min(
            when
            for message, when in messages
            if site.origin in message and "wait in the scheduler" in message
        )
        assert answered >= robots(site)[0] + 0.45  # the time-out (0.5 s) gave it
        deadline = answered + 0.6
        assert all(hit < deadline + 0.1 for hit in robots(site)), "attempt past the deadline"
        (expired,) = [
            when
            for message, when in messages
            if site.origin in message and "still unreachable" in message
        ]
        assert expired < deadline + 0.4  # at the deadline


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, 10.0),  # Scrapy's DOWNLOAD_TIMEOUT is 180 s
        ({"DOWNLOAD_TIMEOUT": 4}, 4.0),
        ({"DOWNLOAD_TIMEOUT": 4, "ROBOTSTXT_DOWNLOAD_TIMEOUT": 2.5}, 2.5),
        ({"ROBOTSTXT_DOWNLOAD_TIMEOUT": 30}, 30.0),
    ],
)
def test_robots_txt_download_timeout_defaults_to_10_s_or_download_timeout(
    settings: dict[str, Any], expected: float
) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    assert RobotsTxtSettings.from_settings(Settings(settings)).download_timeout == expected


@pytest.mark.parametrize("value", [0, -1, "soon"])
def test_invalid_robots_txt_download_timeout_names_the_setting(value: Any) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._setting_values import SettingError
    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    with pytest.raises(SettingError, match="ROBOTSTXT_DOWNLOAD_TIMEOUT"):
        RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_DOWNLOAD_TIMEOUT": value}))


@deferred_f_from_coro_f
async def test_robots_txt_request_carries_its_download_timeout(sites) -> None:
    """The robots.txt request's ``download_timeout`` is ROBOTSTXT_DOWNLOAD_TIMEOUT:
    a robots.txt that hangs gives up after 1 s, with DOWNLOAD_TIMEOUT 30 s."""
    hung = sites(routes={"/robots.txt": hang()}, default=text("page"))
    started = time.monotonic()
    spider, stats = await crawl(
        [hung.url("/p")],
        {
            "SCHEDULER_PRIORITY_QUEUE": PLAIN,
            "DOWNLOAD_TIMEOUT": 30,
            "ROBOTSTXT_DOWNLOAD_TIMEOUT": 1,
            "LOG_LEVEL": "INFO",
        },
    )
    assert time.monotonic() - started < 5
    assert list(spider.dropped) == [hung.url("/p")]
    assert stats["robotstxt/forbidden/unreachable"] == 1


def test_a_download_is_young_for_slow_after_seconds_then_slow() -> None:
    """``DownloadSlots.young``, the clock passed in: a download in flight
    counts as young (its answer likely near) for ``SLOW_AFTER`` seconds from
    its start, then as slow; one that ended is neither. The queue grows no
    settled site's window while any robots.txt download is young."""
    from scrapy_rfc9309.components.sitefiles._download_slots import SLOW_AFTER, DownloadSlots

    slots: DownloadSlots[object] = DownloadSlots(limit=4, slow_factor=8)
    slots.starting("a", now=10.0)
    slots.starting("b", now=10.2)
    assert slots.young(10.0) == 2
    assert slots.young(10.0 + SLOW_AFTER - 0.01) == 2
    assert slots.young(10.0 + SLOW_AFTER) == 1  # "a" is slow now (perhaps hanging)
    slots.done("b")
    assert slots.young(10.3) == 0
    slots.starting("c", now=11.0)
    assert slots.young(11.0 + SLOW_AFTER + 1) == 0


class ConcurrencyAtClose:
    """An extension keeping the downloader's total concurrency as the spider closes."""

    seen: ClassVar[list[int]] = []

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> ConcurrencyAtClose:
        return cls(crawler)

    def closed(self) -> None:
        ConcurrencyAtClose.seen.append(self.crawler.engine.downloader.total_concurrency)


@deferred_f_from_coro_f
async def test_2_3_a_robots_txt_retry_cancelled_in_its_slot_queue_is_never_sent(
    sites,
) -> None:
    """A robots.txt answering 503 is retried by Scrapy's RetryMiddleware; its slot's
    delay (2 s, no jitter) holds the retry in the slot's queue, where
    ROBOTSTXT_DOWNLOAD_TIMEOUT (0.2 s, given up 1.2 s after the first send)
    cancels it. Another site's page keeps the crawl open past the delay.

    The retry stayed in Scrapy's queue and was sent when the delay ended, a
    request the site got and nobody read (RetryMiddleware then logged its
    503 as an error). It had also raised the downloader's total concurrency as
    it reached the downloader, and never left it (no ``request_left_downloader``):
    one page more than CONCURRENT_REQUESTS for the rest of the crawl. Both are
    undone as the fetch ends."""
    site = sites(routes={"/robots.txt": status(503)}, default=text("page"))
    other = sites(routes={"/robots.txt": text("")}, default=delayed(2.6, text("page")))
    ConcurrencyAtClose.seen = []
    # "jitter" (Scrapy 2.14+) and "randomize_delay" (before): the delay is 2 s
    no_jitter = {"delay": 2, "jitter": 0, "randomize_delay": False}
    _, stats = await crawl(
        [site.url("/a"), other.url("/slow")],
        {
            "SCHEDULER_PRIORITY_QUEUE": PLAIN,
            "CONCURRENT_REQUESTS": 4,
            "RETRY_ENABLED": True,
            "RETRY_TIMES": 1,
            "DOWNLOAD_SLOTS": {f"robots.txt {site.origin}": no_jitter},
            "ROBOTSTXT_DOWNLOAD_TIMEOUT": 0.2,
            "ROBOTSTXT_UNREACHABLE_DEFER": 0,
            "EXTENSIONS": {f"{__name__}.ConcurrencyAtClose": 0},
        },
    )
    assert other.count("/slow") == 1  # the crawl was open until after the delay
    assert site.count("/robots.txt") == 1, site.hits  # the retry was never sent
    assert stats["robotstxt/forbidden/unreachable"] == 1
    assert ConcurrencyAtClose.seen == [4]


@pytest.mark.parametrize("queue", [OURS, PLAIN], ids=["our-queue", "another-queue"])
@deferred_f_from_coro_f
async def test_2_3_tdmrep_json_downloads_leave_pages_in_flight_at_concurrent_requests(
    sites, queue: str
) -> None:
    """A declared purpose fetches each site's tdmrep.json (30 sites, each
    answering after 0.1 s) while pages of settled sites wait: the pages in flight
    at the server never exceed CONCURRENT_REQUESTS (2). The limit was raised for
    the whole of each tdmrep.json fetch, also after its response had left the
    downloader, and the engine took one page more then."""
    gauge = {"now": 0, "max": 0}
    page = counted(delayed(0.05, text("<html>page</html>", content_type=b"text/html")), gauge)
    tdmrep = delayed(0.1, text("[]", content_type=b"application/json"))
    many = [
        sites(routes={"/robots.txt": text(RULES), "/.well-known/tdmrep.json": tdmrep}, default=page)
        for _ in range(30)
    ]
    urls = [site.url(f"/p{n}") for n in range(4) for site in many]
    spider, _ = await crawl(
        urls,
        {
            "SCHEDULER_PRIORITY_QUEUE": queue,
            "CONCURRENT_REQUESTS": 2,
            "ROBOTSTXT_PURPOSES": ["train-ai"],
        },
    )
    assert sorted(spider.fetched) == sorted(urls)
    assert all(site.count("/.well-known/tdmrep.json") == 1 for site in many)
    assert gauge["max"] <= 2, gauge

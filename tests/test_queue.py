"""Requests wait in the scheduler, not in the downloader (RFC 9309 2.3, 2.3.1.4;
HTTP: The Definitive Guide ch. 9): real crawls against the local test server,
asserting on what the server was asked, and when."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components._clock import Clock, use_clock

from .clock import SkippingClock, skipping
from .conftest import BASE_SETTINGS, RecordingSpider, crawl
from .server import Held, delayed, hang, sequence, status, text

PAGE = text("<html>page</html>", content_type=b"text/html")
OURS = "scrapy_rfc9309.RobotsTxtPriorityQueue"
QUEUE = {"SCHEDULER_PRIORITY_QUEUE": OURS}
PLAIN = "scrapy.pqueues.ScrapyPriorityQueue"


def page_times(site: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if path != "/robots.txt"]


def robots_times(site: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if path == "/robots.txt"]


def stall_sites(sites: Any) -> tuple[Any, list[Any], list[str]]:
    """A site whose robots.txt never answers and 10 healthy sites; the URLs: 64
    pages of the hung site first, then 3 pages of each healthy site."""
    hung = sites(routes={"/robots.txt": hang()}, default=PAGE)
    healthy = [
        sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /no\n")}, default=PAGE)
        for _ in range(10)
    ]
    urls = [hung.url(f"/p{i}") for i in range(64)]
    urls += [site.url(f"/p{i}") for i in range(3) for site in healthy]
    return hung, healthy, urls


async def stalled_crawl(sites: Any, settings: dict[str, Any]) -> tuple[Any, list[Any], dict]:
    """64 pages of a site whose robots.txt never answers, scheduled first, then
    10 healthy sites; the hung robots.txt times out after 1 s (unless
    ``settings`` say otherwise)."""
    hung, healthy, urls = stall_sites(sites)
    spider, stats = await crawl(
        urls,
        {
            "CONCURRENT_REQUESTS": 16,
            "DOWNLOAD_TIMEOUT": 1,
            "ROBOTSTXT_UNREACHABLE_DEFER": 0,
            **settings,
        },
    )
    assert len(spider.fetched) == 30  # every healthy page
    assert len(spider.dropped) == 64  # every page of the hung site, dropped as unreachable
    assert stats["robotstxt/forbidden/unreachable"] == 64
    return hung, healthy, stats


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_3_a_hung_robots_txt_stalls_nothing_requests_wait_in_the_scheduler(
    sites,
) -> None:
    """The healthy sites' 30 pages are all fetched before the hung robots.txt
    times out (3 s: time for 30 pages on a loaded machine; were they waiting
    behind it, they would all come after)."""
    hung, healthy, _ = await stalled_crawl(sites, {**QUEUE, "DOWNLOAD_TIMEOUT": 3})
    hung_until = robots_times(hung)[0] + 3  # its download timed out then
    last_page = max(t for site in healthy for t in page_times(site))
    assert last_page < hung_until, "the healthy sites waited for the hung robots.txt"
    assert hung.count("/p0") == 0


@deferred_f_from_coro_f
async def test_2_3_fetch_ahead_robots_txt_requested_before_the_sites_first_page_is_due(
    sites,
) -> None:
    """With one request at a time, site B's robots.txt is fetched while site
    A's slow page is being downloaded, long before B's page can be dequeued
    (A's page answers once B's robots.txt was asked for, 5 s at most: without
    the fetch ahead, B's robots.txt would come after it)."""
    a_slow = Held(lambda: b.count("/robots.txt") >= 1, text("slow page"))
    a = sites(routes={"/robots.txt": status(404), "/slow": a_slow})
    # B's robots.txt answers later than A's, so A's slow page goes first
    b = sites(routes={"/robots.txt": delayed(0.3, status(404))}, default=PAGE)
    spider, _ = await crawl([a.url("/slow"), b.url("/page")], {"CONCURRENT_REQUESTS": 1, **QUEUE})
    assert spider.fetched == [a.url("/slow"), b.url("/page")]
    (a_slow_answered,) = a_slow.answered
    assert robots_times(b)[0] < a_slow_answered  # during A's slow page
    assert page_times(b)[0] >= a_slow_answered


class PrioritySpider(Spider):
    name = "priorities"

    def __init__(self, urls: list[tuple[str, int]] = (), **kwargs: Any) -> None:  # type: ignore[assignment]
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.fetched: list[str] = []

    async def start(self) -> Any:
        for url, priority in self.urls:
            yield Request(url, self.parse, priority=priority, dont_filter=True)

    def parse(self, response: Any) -> None:
        self.fetched.append(response.url)


@deferred_f_from_coro_f
async def test_priorities_are_kept_for_requests_that_waited(sites) -> None:
    """Requests held while robots.txt downloads come out by their priority."""
    site = sites(routes={"/robots.txt": delayed(0.3, status(404))}, default=PAGE)
    urls = [(site.url(f"/p{priority}"), priority) for priority in (1, 5, 3, 9, 2)]
    settings = {**BASE_SETTINGS, "CONCURRENT_REQUESTS": 1, **QUEUE}
    crawler = get_crawler(PrioritySpider, settings)
    await _compat.crawl(crawler, urls=urls)
    assert isinstance(crawler.spider, PrioritySpider)
    assert crawler.spider.fetched == [site.url(f"/p{p}") for p in (9, 5, 3, 2, 1)]
    assert [path for path in site.hits if path != "/robots.txt"] == [
        f"/p{p}" for p in (9, 5, 3, 2, 1)
    ]


@deferred_f_from_coro_f
async def test_http_guide_ch9_503_twice_then_200_defers_then_fetches_every_page(
    sites, fast_backoff
) -> None:
    site = sites(
        routes={
            "/robots.txt": sequence(
                status(503), status(503), text("User-agent: *\nDisallow: /no\n")
            )
        },
        default=PAGE,
    )
    urls = [site.url(f"/p{i}") for i in range(5)] + [site.url("/no")]
    spider, stats = await crawl(urls, QUEUE)
    assert sorted(spider.fetched) == sorted(urls[:5])
    assert "Forbidden by robots.txt line 2" in spider.dropped[site.url("/no")]
    assert site.count("/robots.txt") == 3
    third_robots = robots_times(site)[2]
    assert all(t > third_robots for t in page_times(site)), "a page was fetched before the 200"
    assert stats["robotstxt/deferred"] == 1
    assert stats["robotstxt/deferred/recovered"] == 1
    assert "robotstxt/forbidden/unreachable" not in stats


@pytest.mark.parametrize("defer", [0, 0.5])
@deferred_f_from_coro_f
async def test_2_3_1_4_deferral_is_bounded_then_requests_are_dropped(
    sites, fast_backoff, defer: float
) -> None:
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(4)]
    started = time.monotonic()
    spider, stats = await crawl(urls, {**QUEUE, "ROBOTSTXT_UNREACHABLE_DEFER": defer})
    assert time.monotonic() - started < defer + 8  # generous: a heartbeat is 5 s
    assert spider.fetched == []
    assert len(spider.dropped) == 4
    assert all("unreachable" in reason for reason in spider.dropped.values())
    assert stats["robotstxt/forbidden/unreachable"] == 4
    assert page_times(site) == []
    if defer:
        assert site.count("/robots.txt") >= 2  # tried again while deferred
        assert stats["robotstxt/deferred/expired"] == 1
    else:
        assert site.count("/robots.txt") == 1
        assert "robotstxt/deferred" not in stats


@deferred_f_from_coro_f
async def test_http_guide_ch9_deferral_replaces_scrapy_retry_one_download_per_attempt(
    sites, fast_backoff
) -> None:
    """While unreachable sites are deferred, Scrapy's RetryMiddleware does not
    retry robots.txt as well (HTTP: The Definitive Guide ch. 9: our back-off
    tries it again): a 503 robots.txt is downloaded once per attempt, and no
    "Gave up retrying" ERROR is logged."""
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(3)]
    spider, stats = await crawl(
        urls,
        {**QUEUE, "RETRY_ENABLED": True, "RETRY_TIMES": 2, "ROBOTSTXT_UNREACHABLE_DEFER": 0.5},
    )
    assert spider.fetched == [] and page_times(site) == []
    attempts = 1 + stats["robotstxt/deferred/retries"]
    assert attempts >= 2
    assert site.count("/robots.txt") == attempts  # not (1 + RETRY_TIMES) per attempt
    assert "retry/count" not in stats and "log_count/ERROR" not in stats


@deferred_f_from_coro_f
async def test_http_guide_ch9_retry_after_past_the_deferral_drops_at_once(sites, caplog) -> None:
    """A 503 asking for 30 s with ROBOTSTXT_UNREACHABLE_DEFER = 5: no attempt
    fits within the deferral, so the requests are dropped at once (counted in
    robotstxt/deferred/expired, with a WARNING saying why), not after 5 s."""
    from .server import retry_after

    site = sites(routes={"/robots.txt": retry_after(503, "30")}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(3)]
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, stats = await crawl(urls, {**QUEUE, "ROBOTSTXT_UNREACHABLE_DEFER": 5})
    assert time.monotonic() - started < 4
    assert spider.fetched == [] and len(spider.dropped) == 3
    assert site.count("/robots.txt") == 1 and page_times(site) == []
    assert stats["robotstxt/deferred/expired"] == 1
    assert stats["robotstxt/forbidden/unreachable"] == 3
    assert any("asks to be tried again in 30 s" in r.getMessage() for r in caplog.records)


@deferred_f_from_coro_f
async def test_jobdir_pause_and_resume_loses_no_request(sites, tmp_path, caplog) -> None:
    """Paused while a robots.txt hangs: its site's requests wait in the queue,
    are written to JOBDIR (an INFO line says how many are kept for the next
    run, none says 0 are dropped), and the resumed crawl fetches that robots.txt
    again (nothing is cached across processes) and then every page."""
    site = sites(routes={"/robots.txt": hang()}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(6)] + [site.url("/no")]
    settings = {
        **QUEUE,
        "JOBDIR": str(tmp_path / "job"),
        "DOWNLOAD_TIMEOUT": 60,
        "CLOSESPIDER_TIMEOUT": 0.5,
    }
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, stats = await crawl(urls, settings, dont_filter=False)
    assert stats["finish_reason"] == "closespider_timeout"
    assert spider.fetched == [] and spider.dropped == {}
    messages = [r.getMessage() for r in caplog.records]
    assert any("7 scheduled requests kept in JOBDIR for the next run" in m for m in messages)
    assert not any("dropping 0 requests" in m for m in messages)
    assert page_times(site) == []
    assert "robotstxt/forbidden/closing" not in stats  # kept, not dropped

    site.routes["/robots.txt"] = text("User-agent: *\nDisallow: /no\n")
    robots_before = site.count("/robots.txt")
    settings.pop("CLOSESPIDER_TIMEOUT")
    spider, stats = await crawl(urls, settings, dont_filter=False)
    assert sorted(spider.fetched) == sorted(urls[:6])
    assert list(spider.dropped) == [site.url("/no")]
    assert site.count("/robots.txt") - robots_before == 1
    assert sorted(path for path in site.hits if path != "/robots.txt") == sorted(
        f"/p{i}" for i in range(6)
    )


@deferred_f_from_coro_f
async def test_closing_drops_requests_waiting_in_the_queue_and_counts_them(sites) -> None:
    site = sites(routes={"/robots.txt": hang()}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(10)]
    started = time.monotonic()
    spider, stats = await crawl(
        urls, {**QUEUE, "DOWNLOAD_TIMEOUT": 120, "CLOSESPIDER_TIMEOUT": 0.5}
    )
    assert time.monotonic() - started < 10  # not the 120 s download timeout
    assert spider.fetched == []
    assert stats["robotstxt/forbidden/closing"] == 10
    assert stats["finish_reason"] == "closespider_timeout"


@deferred_f_from_coro_f
async def test_robots_txt_downloads_in_flight_are_bounded(sites) -> None:
    many = [
        sites(routes={"/robots.txt": delayed(0.2, status(404))}, default=PAGE) for _ in range(6)
    ]
    spider, _ = await crawl(
        [site.url("/") for site in many],
        {**QUEUE, "ROBOTSTXT_CONCURRENT_DOWNLOADS": 2},
    )
    assert len(spider.fetched) == 6
    starts = sorted(robots_times(site)[0] for site in many)
    # at most 2 at a time: the 3rd starts only after the 1st answered (0.2 s)
    assert starts[2] - starts[0] >= 0.15


def test_addon_installs_the_queue_and_a_users_own_queue_wins() -> None:
    from scrapy.utils.test import get_crawler as make

    crawler = make(RecordingSpider, {"ADDONS": {"scrapy_rfc9309.Addon": 100}})
    crawler._apply_settings()
    assert crawler.settings["SCHEDULER_PRIORITY_QUEUE"] == OURS
    crawler = make(
        RecordingSpider,
        {"ADDONS": {"scrapy_rfc9309.Addon": 100}, "SCHEDULER_PRIORITY_QUEUE": PLAIN},
    )
    crawler._apply_settings()
    assert crawler.settings["SCHEDULER_PRIORITY_QUEUE"] == PLAIN


def _queue_notes(caplog: Any) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "RobotsTxtPriorityQueue" in r.getMessage()]


@deferred_f_from_coro_f
async def test_a_queue_not_ours_is_said_once_at_start_up(sites, caplog) -> None:
    """With the user's own SCHEDULER_PRIORITY_QUEUE, no fetch ahead and no deferral:
    said once (INFO; WARNING when ROBOTSTXT_UNREACHABLE_DEFER is set), never with ours."""
    site = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await crawl([site.url("/a"), site.url("/b")], {"SCHEDULER_PRIORITY_QUEUE": PLAIN})
    [note] = _queue_notes(caplog)
    assert note.levelno == logging.INFO
    assert f"SCHEDULER_PRIORITY_QUEUE is {PLAIN}" in note.getMessage()
    assert "ROBOTSTXT_UNREACHABLE_DEFER does not apply" in note.getMessage()
    assert "not fetched ahead" in note.getMessage()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        settings = {"SCHEDULER_PRIORITY_QUEUE": PLAIN, "ROBOTSTXT_UNREACHABLE_DEFER": 60}
        await crawl([site.url("/a")], settings)
    assert [note.levelno for note in _queue_notes(caplog)] == [logging.WARNING]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await crawl([site.url("/a")], QUEUE)
    assert _queue_notes(caplog) == []


@deferred_f_from_coro_f
async def test_robots_txt_downloads_do_not_take_the_pages_concurrency(sites) -> None:
    """With one request at a time, site B's page is fetched while site A's
    robots.txt (answering once B's page was fetched, 5 s at most) is still
    downloading."""
    robots = Held(lambda: bool(page_times(b)), status(404))
    a = sites(routes={"/robots.txt": robots}, default=PAGE)
    b = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    spider, _ = await crawl([a.url("/a"), b.url("/b")], {"CONCURRENT_REQUESTS": 1, **QUEUE})
    assert sorted(spider.fetched) == sorted([a.url("/a"), b.url("/b")])
    (a_answered,) = robots.answered
    assert page_times(b)[0] < a_answered


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROBOTSTXT_UNREACHABLE_DEFER", -1),
        ("ROBOTSTXT_UNREACHABLE_DEFER", "soon"),
        ("ROBOTSTXT_CONCURRENT_DOWNLOADS", 0),
    ],
)
def test_invalid_scheduling_settings_name_the_setting(name: str, value: Any) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._setting_values import SettingError
    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    with pytest.raises(SettingError, match=name):
        RobotsTxtSettings.from_settings(Settings({name: value}))


class _StubRobots:
    """The site service's side of the queue, with sites settled by hand."""

    def __init__(self) -> None:
        self.states: dict[str, Any] = {}
        self.looked_up = 0
        self.prefetched: list[str] = []
        self.queues: list[Any] = []
        self.pins: dict[str, int] = {}
        self.clock = Clock()
        self.pacer = None  # no cluster

    def asks_crawl_delay(self, site: str, request: Any) -> bool:
        """No Crawl-delay: the sites' requests go out as the windows allow."""
        return False

    def answers_due(self) -> bool:
        """No robots.txt download under way (sites are settled by hand)."""
        return False

    def pin(self, site: str, requests: int = 1) -> None:
        self.pins[site] = self.pins.get(site, 0) + requests

    def unpin(self, site: str) -> None:
        self.pins[site] -= 1

    def site_for(self, request: Request, *, cached: bool = True) -> str:
        return request.url.split("/", 3)[2]

    def site_state(self, site: str, request: Any = None) -> Any:
        from scrapy_rfc9309.sites._sitetable import SiteState

        self.looked_up += 1
        return self.states.get(site, SiteState.UNKNOWN)

    def prefetch(self, site: str, request: Any = None) -> None:
        from scrapy_rfc9309.sites._sitetable import SiteState

        self.prefetched.append(site)
        self.states[site] = SiteState.PENDING

    def register(self, queue: Any) -> None:
        self.queues.append(queue)

    def mark_released(self, site: str, request: Any) -> None:
        pass

    def settle(self, site: str) -> None:
        from scrapy_rfc9309.sites._sitetable import SiteState

        self.states[site] = SiteState.READY
        for queue in self.queues:
            queue.site_released(site)


def test_queue_costs_two_lookups_per_request_with_many_sites_and_keeps_priorities() -> None:
    """No scan over the queued sites: each request's site is looked up once
    when pushed and once when popped, with 20,000 sites queued."""
    from scrapy.squeues import FifoMemoryQueue

    from scrapy_rfc9309.components.crawl._queue import RobotsTxtPriorityQueue

    crawler = get_crawler(Spider)
    robots = _StubRobots()
    crawler._robotstxt_site_service = robots  # type: ignore[attr-defined]
    queue = RobotsTxtPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")
    count = 20_000
    for index in range(count):
        queue.push(Request(f"http://s{index}.test/", priority=index % 3))
    assert len(queue) == count and queue.pop() is None  # every site pending
    assert robots.prefetched == [f"s{index}.test" for index in range(count)]  # fetched ahead
    for index in range(count):
        robots.settle(f"s{index}.test")
    popped = [queue.pop() for _ in range(count)]
    assert queue.pop() is None and len(queue) == 0
    priorities = [request.priority for request in popped if request is not None]
    assert priorities == sorted(priorities, reverse=True)  # users' priorities kept
    assert robots.looked_up == 2 * count
    assert set(robots.pins.values()) == {0}  # each site pinned while its request was queued


@pytest.mark.parametrize("memory_queue", ["FifoMemoryQueue", "LifoMemoryQueue"])
def test_sites_settled_together_are_handed_out_interleaved_as_scheduled(memory_queue: str) -> None:
    """Requests of sites that settle in one go (a store read, a burst of robots.txt
    answers) are handed out one site after another, as a broad crawl scheduled
    them, not each site's backlog in one run (which fills the site's download
    slot at once: a burst on one host, a new connection per request); a site's
    own requests keep their order."""
    from scrapy import squeues

    from scrapy_rfc9309.components.crawl._queue import RobotsTxtPriorityQueue

    crawler = get_crawler(Spider)
    robots = _StubRobots()
    crawler._robotstxt_site_service = robots  # type: ignore[attr-defined]
    queue = RobotsTxtPriorityQueue.from_crawler(crawler, getattr(squeues, memory_queue), "")
    hosts = ["a.test", "b.test", "c.test"]
    for page in range(4):
        for host in hosts:
            queue.push(Request(f"http://{host}/{page}"))
    assert queue.pop() is None  # every site pending
    for host in hosts:
        robots.settle(host)
    popped = [queue.pop() for _ in range(12)]
    urls = [request.url for request in popped if request is not None]
    assert len(urls) == 12 and queue.pop() is None
    for host in hosts:  # each site's backlog let go in arrival order, whatever the queue
        pages = [url.rsplit("/", 1)[1] for url in urls if f"//{host}/" in url]
        assert pages == ["0", "1", "2", "3"]


def _held_bytes_per_site(queue_path: str, count: int) -> float:
    """tracemalloc growth per site while ``count`` requests, one per new site,
    are pushed into the queue at ``queue_path`` (the requests built before),
    with the real middleware and site table, every robots.txt download slot
    busy (each site pending, waiting in the download backlog)."""
    import gc
    import tracemalloc

    from scrapy.squeues import FifoMemoryQueue
    from scrapy.utils.misc import load_object
    from twisted.internet.defer import Deferred

    from scrapy_rfc9309.components.crawl._middleware import RobotsTxtMiddleware
    from scrapy_rfc9309.components.sitefiles._download_slots import SLOW_FACTOR

    crawler = get_crawler(Spider, {**BASE_SETTINGS, "ADDONS": {"scrapy_rfc9309.Addon": 100}})
    middleware = RobotsTxtMiddleware(crawler).service
    # every download slot busy, slow downloads included
    limit = middleware.settings.concurrent_downloads * SLOW_FACTOR
    middleware._downloads.update({f"busy{n}": Deferred() for n in range(limit)})
    middleware._start_watchdog = lambda: None  # type: ignore[method-assign]
    queue = load_object(queue_path).from_crawler(crawler, FifoMemoryQueue, "")
    requests = [Request(f"http://s{n}.test:8080/page.html") for n in range(count)]
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for request in requests:
            queue.push(request)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(queue) == count
    assert middleware._table.has_pending() is (queue_path == OURS)  # each site pending
    return (end - start) / count


def test_queue_keeps_little_per_pending_site() -> None:
    """A broad crawl schedules one request on each of many new sites: every
    site is pending at once. What the queue, the site table and the download
    backlog keep per such site, beyond what Scrapy's own queue keeps for the
    request, stays under 160 bytes (the site's name, an entry in the queue's
    and in the site table's dict, its place in the download backlog): no list
    for a lone request (180 bytes with one) or for a fetch nobody waits on
    yet (220 with one), no parsed URL kept with the waiting request (about
    700 bytes with all three)."""
    count = 20_000
    plain = _held_bytes_per_site(PLAIN, count)
    ours = _held_bytes_per_site(OURS, count)
    assert ours - plain < 160, (ours, plain)


@deferred_f_from_coro_f
async def test_2_3_1_4_deferral_honours_retry_after(sites, fast_backoff) -> None:
    """A 503 asking for 1 s: the deferred site is not asked again sooner."""
    from .server import retry_after

    site = sites(routes={"/robots.txt": sequence(retry_after(503, "1"), status(404))}, default=PAGE)
    clock = SkippingClock(eager=2)  # the wait it asks for without the wait
    site.now = clock.monotonic  # its robots.txt requests timed by the crawl's clock
    spider, stats = await crawl([site.url("/a"), site.url("/b")], QUEUE, clock=clock)
    assert sorted(spider.fetched) == sorted([site.url("/a"), site.url("/b")])
    first, second = robots_times(site)
    assert second - first >= 0.95  # the back-off alone would have asked after 0.2 s
    assert stats["robotstxt/retry_after"] == 1
    assert stats["robotstxt/deferred/recovered"] == 1


class TickSpider(Spider):
    """Requests keep arriving: each ``/tick`` page of the ticker site (slow to
    answer) yields the next tick and one page of ``target``, until ``ticks``.
    Records when each page of ``target`` was yielded and when it was fetched
    or dropped (by the crawl's clock, as the test server's log)."""

    name = "ticks"

    def __init__(
        self,
        ticker: str = "",
        target: str = "",
        ticks: int = 0,
        now: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.ticker, self.target, self.ticks = ticker, target, ticks
        self.now = now
        self.yielded: dict[str, float] = {}
        self.fetched: dict[str, float] = {}
        self.dropped: dict[str, tuple[float, str]] = {}

    async def start(self) -> Any:
        yield self.page(0)
        yield Request(f"{self.ticker}/tick?1", self.tick, dont_filter=True, cb_kwargs={"n": 1})

    def page(self, n: int) -> Request:
        url = f"{self.target}/p{n}"
        self.yielded[url] = self.now()
        return Request(url, self.parse, errback=self.failed, dont_filter=True)

    def tick(self, response: Any, n: int) -> Any:
        yield self.page(n)
        if n < self.ticks:
            yield Request(
                f"{self.ticker}/tick?{n + 1}", self.tick, dont_filter=True, cb_kwargs={"n": n + 1}
            )

    def parse(self, response: Any) -> None:
        self.fetched[response.url] = self.now()

    def failed(self, failure: Any) -> None:
        self.dropped[failure.request.url] = (self.now(), str(failure.value))


async def tick_crawl(
    target: Any, ticker: Any, ticks: int, settings: dict[str, Any], clock: Clock | None = None
) -> tuple[TickSpider, dict[str, Any]]:
    crawler = get_crawler(TickSpider, {**BASE_SETTINGS, **QUEUE, **settings})
    if clock is not None:
        use_clock(crawler, clock)
        target.now = clock.monotonic
    now = time.monotonic if clock is None else clock.monotonic
    await _compat.crawl(crawler, ticker=ticker.origin, target=target.origin, ticks=ticks, now=now)
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    assert stats.get("log_count/ERROR", 0) == 0
    spider = crawler.spider
    assert isinstance(spider, TickSpider)
    return spider, stats


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_http_guide_ch9_a_deferral_that_ran_out_does_not_start_again(
    sites, fast_backoff
) -> None:
    """503 for good, ROBOTSTXT_UNREACHABLE_DEFER 1 s (back-off 0.2 s, 0.4 s),
    the unreachable outcome kept 0.5 s: requests of the site keep arriving for
    2 s after the deferral ran out. Each is dropped at once as unreachable
    (RFC 9309 2.3.1.4), and the robots.txt is tried three times during the
    deferral, then once per ROBOTSTXT_UNREACHABLE_TTL at most: no new deferral
    starts."""
    clock = SkippingClock()
    bad = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    tick = skipping(clock, 0.15, after=0.01, route=PAGE)
    ticker = sites(routes={"/robots.txt": status(404), "/tick": tick})
    spider, stats = await tick_crawl(
        bad,
        ticker,
        20,
        {"ROBOTSTXT_UNREACHABLE_DEFER": 1, "ROBOTSTXT_UNREACHABLE_TTL": 0.5},
        clock,
    )
    assert spider.fetched == {} and page_times(bad) == []
    assert len(spider.dropped) == 21
    assert all("unreachable" in reason for _, reason in spider.dropped.values())
    assert stats["robotstxt/forbidden/unreachable"] == 21
    assert stats["robotstxt/deferred"] == 1
    assert stats["robotstxt/deferred/expired"] == 1
    tries = robots_times(bad)
    deadline = tries[0] + 1
    # at 0 s, then after the 0.2 s and 0.4 s back-offs (the next, 0.8 s later, is past it)
    assert len([t for t in tries if t < deadline]) == 3
    late = [url for url, at in spider.yielded.items() if at > deadline + 0.1]
    assert len(late) >= 10, "the crawl did not go on past the deferral"
    for url in late:
        waited = spider.dropped[url][0] - spider.yielded[url]
        assert waited < 0.5, f"{url} waited {waited:.2f} s: a new deferral started"
    after = [t for t in tries if t >= deadline]
    span = max(spider.yielded.values()) - deadline
    assert len(after) <= span / 0.5 + 2  # one per ROBOTSTXT_UNREACHABLE_TTL, no back-off


@deferred_f_from_coro_f
async def test_2_4_refetch_counts_expired_copies_deferral_retries_apart(
    sites, fast_backoff
) -> None:
    """``robotstxt/refetch`` means a cached outcome expired and was fetched
    again (RFC 9309 2.4); attempts while deferred (HTTP: The Definitive Guide
    ch. 9) are ``robotstxt/deferred/retries``."""
    clock = SkippingClock()
    site = sites(
        routes={"/robots.txt": sequence(status(503), text("User-agent: *\nAllow: /\n"))},
        default=PAGE,
    )
    tick = skipping(clock, 0.15, after=0.01, route=PAGE)
    ticker = sites(routes={"/robots.txt": status(404), "/tick": tick})
    spider, stats = await tick_crawl(
        site, ticker, 12, {"ROBOTSTXT_CACHE_TTL": 0.5, "ROBOTSTXT_CACHE_MIN_TTL": 0}, clock
    )
    assert len(spider.fetched) == 13 and spider.dropped == {}
    downloads, ticker_downloads = site.count("/robots.txt"), ticker.count("/robots.txt")
    assert stats["robotstxt/request_count"] == downloads + ticker_downloads
    assert stats["robotstxt/deferred/retries"] == 1  # the 200 after the 503
    assert stats["robotstxt/deferred/recovered"] == 1
    # every other download after each site's first: its copy expired (0.5 s)
    assert downloads - 2 >= 1
    assert stats["robotstxt/refetch"] == (downloads - 2) + (ticker_downloads - 1)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_3_a_hung_robots_txt_takes_no_page_slot_with_one_request_per_domain(
    sites,
) -> None:
    """CONCURRENT_REQUESTS_PER_DOMAIN = 1: the hung robots.txt and the healthy
    sites share a host (127.0.0.1, other ports), so Scrapy would give them one
    download slot, held 2 s (DOWNLOAD_TIMEOUT). The robots.txt has a slot of its
    own: the healthy pages are done within 1 s of the same crawl without the hung
    site."""
    settings = {"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_TIMEOUT": 2, **QUEUE}
    healthy_only = [
        sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /no\n")}, default=PAGE)
        for _ in range(10)
    ]
    started = time.monotonic()
    spider, _ = await crawl(
        [site.url(f"/p{i}") for i in range(3) for site in healthy_only], settings
    )
    assert len(spider.fetched) == 30
    baseline = max(t for site in healthy_only for t in page_times(site)) - started
    started = time.monotonic()
    hung, healthy, _ = await stalled_crawl(sites, settings)
    last_page = max(t for site in healthy for t in page_times(site)) - started
    assert last_page < baseline + 1, (
        f"healthy pages done after {last_page:.2f} s, {baseline:.2f} s without the hung site"
    )
    assert hung.count("/p0") == 0


@deferred_f_from_coro_f
async def test_close_summary_and_report_count_requests_dropped_from_the_queue(
    sites, caplog, tmp_path
) -> None:
    """Closed while 10 requests wait in the queue for a hung robots.txt: the
    queue drops them before the close summary and the JSON report are
    written, so the summary, the report and the stats agree."""
    import json
    import logging

    site = sites(routes={"/robots.txt": hang()}, default=PAGE)
    report = tmp_path / "report.json"
    settings = {
        **QUEUE,
        "DOWNLOAD_TIMEOUT": 120,
        "CLOSESPIDER_TIMEOUT": 0.5,
        "ROBOTSTXT_REPORT_FILE": str(report),
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0},
    }
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, stats = await crawl([site.url(f"/p{i}") for i in range(10)], settings)
    assert spider.fetched == [] and page_times(site) == []
    assert stats["robotstxt/forbidden"] == stats["robotstxt/forbidden/closing"] == 10
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    assert "0 requests allowed, 10 dropped (" in summary
    assert "10 at close)" in summary
    record = next(r for r in json.loads(report.read_text())["sites"] if r["site"] == site.origin)
    assert record["requests_dropped_at_close"] == 10
    assert json.loads(report.read_text())["stats"]["robotstxt/forbidden/closing"] == 10


@deferred_f_from_coro_f
async def test_2_3_1_4_with_another_scheduler_queue_requests_wait_in_the_middleware(
    sites,
) -> None:
    """With a queue that is not ours (Scrapy's ScrapyPriorityQueue), requests
    wait in the middleware as with Scrapy's own: no deferral, an unreachable
    robots.txt drops its site's requests at once (RFC 9309 2.3.1.4), and the
    crawl ends under either reactor (nothing is sent back to the scheduler)."""
    bad = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    good = sites(routes={"/robots.txt": delayed(0.3, status(404))}, default=PAGE)
    urls = [bad.url(f"/p{i}") for i in range(5)] + [good.url(f"/p{i}") for i in range(5)]
    started = time.monotonic()
    spider, stats = await crawl(urls, {"SCHEDULER_PRIORITY_QUEUE": PLAIN})
    assert time.monotonic() - started < 5  # not ROBOTSTXT_UNREACHABLE_DEFER (300 s)
    assert sorted(spider.fetched) == sorted(urls[5:])
    assert sorted(spider.dropped) == sorted(urls[:5])
    assert bad.count("/robots.txt") == 1 and page_times(bad) == []
    assert stats["robotstxt/forbidden/unreachable"] == 5
    assert "robotstxt/deferred" not in stats
    # the good site's pages waited in the middleware, then went: none before its robots.txt
    assert min(page_times(good)) >= robots_times(good)[0] + 0.3


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_a_bounded_cache_fetches_each_robots_txt_once_while_its_requests_wait(
    sites,
) -> None:
    """60 sites x 3 pages, scheduled breadth first while the robots.txt files
    are slow, with ROBOTSTXT_CACHE_MAX_SITES = 20: a site whose requests still
    wait in the queue is never evicted (they would find it unknown and fetch
    its robots.txt again), and sites beyond the bound wait in the queue,
    unfetched, until room frees (RFC 9309 2.4: one robots.txt per site for
    its lifetime)."""
    # slow enough that every start request is scheduled before a robots.txt
    # settles, however busy the machine (Scrapy feeds start requests lazily)
    rules = delayed(1.0, text("User-agent: *\nDisallow: /no\n"))
    many = [sites(routes={"/robots.txt": rules}, default=PAGE) for _ in range(60)]
    urls = [site.url(f"/p{page}") for page in range(3) for site in many]
    spider, stats = await crawl(urls, {**QUEUE, "ROBOTSTXT_CACHE_MAX_SITES": 20})
    assert sorted(spider.fetched) == sorted(urls)  # every allowed page
    assert [site.count("/robots.txt") for site in many] == [1] * 60
    assert stats["robotstxt/request_count"] == 60


def test_2_3_a_site_released_before_the_engine_is_made_hands_out_its_requests() -> None:
    """RFC 9309 2.3: requests held for their site's robots.txt are handed out once
    it is settled, even when it settles before Scrapy has made the engine
    (Scrapy 2.19 raises on ``crawler.engine`` until then; the wake-up that asks
    the engine to pop again is then nothing to do)."""
    from scrapy.squeues import FifoMemoryQueue

    from scrapy_rfc9309 import RobotsTxtMiddleware
    from scrapy_rfc9309.components._engine import downloader_of, engine_is_closing, wake_engine
    from scrapy_rfc9309.components.crawl._queue import RobotsTxtPriorityQueue
    from scrapy_rfc9309.parser._robotstxt import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    crawler = get_crawler(Spider, {**BASE_SETTINGS, "ADDONS": {"scrapy_rfc9309.Addon": 100}})
    crawler.spider = crawler._create_spider("early")
    service = RobotsTxtMiddleware.from_crawler(crawler).service
    queue = RobotsTxtPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")
    site = "http://early.test:80"
    service._table.start(site)  # its robots.txt in flight
    queue.push(Request(f"{site}/page", dont_filter=True))
    assert queue.pop() is None  # held for its robots.txt
    now = service.clock.monotonic()
    outcome = SiteOutcome(Kind.PARSED, RobotsTxt.parse(b"User-agent: *\n"), "HTTP 200", now + 60)
    service._table.settle(site, outcome.compact())
    service.release(site)
    popped = queue.pop()
    assert popped is not None and popped.url == f"{site}/page"
    wake_engine(crawler)  # no engine yet: nothing to wake, nothing raised
    assert downloader_of(crawler) is None
    assert engine_is_closing(crawler)  # no engine running

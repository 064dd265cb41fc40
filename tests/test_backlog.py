"""A settled site's backlog handed out through its window (RFC 9309 2.3:
requests wait for their site's robots.txt), with real crawls against a
local server counting the TCP connections it accepted."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl
from .server import delayed, hang, slow, status, text

PAGE = text("<html>page</html>", content_type=b"text/html")
ROBOTS = text("User-agent: *\nDisallow: /private\n")
QUEUE = {"SCHEDULER_PRIORITY_QUEUE": "scrapy_rfc9309.RobotsTxtPriorityQueue"}


class DropSomePages:
    """A downloader middleware that drops the pages whose path ends in ``drop``."""

    def process_request(self, request: Request, spider: Any = None) -> None:
        if request.url.endswith("drop"):
            raise IgnoreRequest("dropped by another middleware")


@pytest.mark.parametrize(
    "slot",
    [
        {"CONCURRENT_REQUESTS_PER_DOMAIN": 2},
        {"CONCURRENT_REQUESTS_PER_IP": 2},
        {
            "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
            "AUTOTHROTTLE_ENABLED": True,
            "AUTOTHROTTLE_START_DELAY": 0.01,
            "AUTOTHROTTLE_MAX_DELAY": 0.02,
        },
    ],
    ids=["per-domain", "per-ip", "autothrottle"],
)
@deferred_f_from_coro_f
async def test_rfc9309_2_3_backlog_behind_slow_robots_txt_reuses_connections(
    sites, slot: dict[str, Any]
) -> None:
    """40 pages wait 0.3 s for robots.txt; let go at most the slot's
    concurrency (2) at once, the next as one comes back, they use about 2
    connections (Scrapy starts the next request of a full slot before the
    previous connection is back in the pool: one per page if all let go)."""
    site = sites(routes={"/robots.txt": delayed(0.3, status(404))}, default=PAGE)
    urls = [site.url(f"/p{index}") for index in range(40)]
    settings = {**QUEUE, "CONCURRENT_REQUESTS": 16, **slot}
    spider, _ = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(urls)
    assert site.connections <= 2 + 2, site.connections  # slot concurrency, robots.txt's, one spare


@deferred_f_from_coro_f
async def test_rfc9309_2_3_backlog_requests_dropped_or_failing_never_stall_the_site(
    sites,
) -> None:
    """With a window of one (slot concurrency 1), backlog pages dropped by
    another downloader middleware, disallowed by robots.txt (RFC 9309 2.2.2)
    or answered 500 free their place: every other page is fetched, at once."""
    robots = delayed(0.3, text("User-agent: *\nDisallow: /no\n"))
    site = sites(routes={"/robots.txt": robots, "/fail": status(500)}, default=PAGE)
    ok = [site.url(f"/p{index}") for index in range(10)]
    urls = [*[site.url(f"/{index}drop") for index in range(5)], site.url("/no"), site.url("/fail")]
    urls += ok
    settings = {
        **QUEUE,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOADER_MIDDLEWARES": {"tests.test_backlog.DropSomePages": 50},
        "RETRY_ENABLED": False,
    }
    started = time.monotonic()
    spider, _ = await crawl(urls, settings)
    assert set(ok) <= set(spider.fetched)
    assert site.url("/no") in spider.dropped
    assert time.monotonic() - started < 4  # no wait for the engine's 5 s heartbeat
    assert site.count("/fail") == 1
    assert not any(url.endswith("drop") for url in spider.fetched)


class LeftDownloaderWatch:
    """An extension noting, as each request leaves the downloader, whether the
    queue is listening to that signal, and whether it still is at close."""

    seen: ClassVar[list[bool]] = []
    at_close: ClassVar[list[bool]] = []

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals

        self.crawler = crawler
        crawler.signals.connect(self.left, signal=signals.request_left_downloader)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> LeftDownloaderWatch:
        return cls(crawler)

    def _queue_listens(self) -> bool:
        from pydispatch.dispatcher import getAllReceivers, liveReceivers
        from scrapy import signals

        receivers = liveReceivers(
            getAllReceivers(self.crawler.signals.sender, signals.request_left_downloader)
        )
        return any(getattr(r, "__name__", "") == "_came_back" for r in receivers)

    def left(self, request: Any) -> None:
        self.seen.append(self._queue_listens())

    def closed(self) -> None:
        self.at_close.append(self._queue_listens())


@deferred_f_from_coro_f
async def test_rfc9309_2_3_queue_hears_requests_leave_the_downloader_while_a_window_opens(
    sites,
) -> None:
    """Every request that leaves the downloader sends ``request_left_downloader``;
    the queue listens to it only while a backlog window is open (40 pages
    behind a slow robots.txt, let go two at a time), so a crawl whose sites
    are settled pays no dispatch to the queue per request (it stops listening at
    its next pop once the last window closed). The window still
    moves on each answer: every page is fetched over about two connections."""
    LeftDownloaderWatch.seen, LeftDownloaderWatch.at_close = [], []
    site = sites(routes={"/robots.txt": delayed(0.3, status(404))}, default=PAGE)
    urls = [site.url(f"/p{index}") for index in range(40)]
    settings = {
        **QUEUE,
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
        "EXTENSIONS": {"tests.test_backlog.LeftDownloaderWatch": 0},
    }
    spider, _ = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(urls)
    assert site.connections <= 2 + 2, site.connections
    seen = LeftDownloaderWatch.seen
    assert not seen[0]  # the robots.txt request: no window yet
    assert any(seen), "the queue never listened while its window was open"
    assert LeftDownloaderWatch.at_close == [False]  # the window closed: it listens no more


async def _broad_crawl(sites: Any, delays: list[float], pages: int = 5) -> list[int]:
    """A site per delay, its robots.txt answering after that delay; its
    ``pages`` scheduled breadth-first at 64 concurrent, every one fetched:
    the TCP connections each site's server accepted."""
    servers = [
        sites(routes={"/robots.txt": delayed(delay, ROBOTS)}, default=PAGE) for delay in delays
    ]
    urls = [site.url(f"/p{page}") for page in range(pages) for site in servers]
    spider, _ = await crawl(urls, {**QUEUE, "CONCURRENT_REQUESTS": 64})
    assert sorted(spider.fetched) == sorted(urls)
    return [site.connections for site in servers]


@pytest.mark.parametrize("stagger", [0.0, 0.02], ids=["together", "staggered"])
@deferred_f_from_coro_f
async def test_rfc9309_2_3_broad_crawl_behind_slow_robots_txt_opens_few_connections_per_site(
    sites, stagger: float
) -> None:
    """20 sites x 5 pages scheduled breadth-first, each site's robots.txt
    answering after 0.3 s (or site k's after 0.2 + k x ``stagger`` s): a
    settled site's window grows by one only after one of its requests came
    back, so a site that settles while the others are still pending does
    not send its 5 pages at once, each on a new connection (about 5 per
    site before), but about 2 (its robots.txt's, reused, and one more)."""
    delays = [0.3 if not stagger else 0.2 + k * stagger for k in range(20)]
    opened = await _broad_crawl(sites, delays)
    assert sum(opened) <= 3 * len(delays), opened


@deferred_f_from_coro_f
async def test_rfc9309_2_3_no_window_grows_while_robots_txt_answers_are_due(
    sites, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 sites x 5 pages, site k's robots.txt answering after 0.1 + k x
    0.015 s (all well within the time after which a robots.txt download
    counts as slow, and a window may grow whatever is due: both raised from
    0.5 s to 2 s here, so that a loaded machine, stretching the crawl, does
    not pass them): while other sites' robots.txt are on their way, no
    settled site's window grows (their requests will be ready in a moment),
    so a site's pages do not go two at a time, each pair opening a second
    connection. About one connection a site, two for the last few: 22 to
    33 in all, 25 to 33 with two busy processes on two cores; 46 to 57
    when the windows grew meanwhile (measured idle and so loaded)."""
    from scrapy_rfc9309.components.crawl import _backlog
    from scrapy_rfc9309.components.sitefiles import _download_slots

    monkeypatch.setattr(_backlog, "GROWTH_HOLD", 2.0)
    monkeypatch.setattr(_download_slots, "SLOW_AFTER", 2.0)
    delays = [0.1 + k * 0.015 for k in range(20)]
    opened = await _broad_crawl(sites, delays)
    assert sum(opened) <= 2 * len(delays), opened


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_rfc9309_2_3_a_hanging_robots_txt_holds_no_window_for_long(sites) -> None:
    """A robots.txt that never answers is waited for only while it is young
    (0.5 s): the site settled meanwhile then grows its window to its slot's
    concurrency (4) as its pages (0.25 s each) come back, instead of
    fetching its 12 pages one at a time (2.75 s from the first to the last)."""
    healthy = sites(routes={"/robots.txt": status(404)}, default=slow(0.25, b"page"))
    hung = sites(routes={"/robots.txt": hang()}, default=PAGE)
    urls = [hung.url("/p"), *(healthy.url(f"/p{index}") for index in range(12))]
    settings = {
        **QUEUE,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
        "ROBOTSTXT_DOWNLOAD_TIMEOUT": 2,
        "ROBOTSTXT_UNREACHABLE_DEFER": 0,
    }
    spider, _ = await crawl(urls, settings)
    pages = [url for url in urls[1:] if url in spider.fetched]
    assert len(pages) == 12
    hits = zip(healthy.hits, healthy.hit_times, strict=True)
    times = [when for path, when in hits if path != "/robots.txt"]
    # one at a time takes 2.75 s at least (11 pages of 0.25 s after the first): the
    # bound leaves a loaded machine the margin below that
    assert times[-1] - times[0] < 2.6, [round(when - times[0], 2) for when in times]


def test_rfc9309_2_3_a_window_waits_for_due_answers_only_in_its_first_half_second() -> None:
    """``SiteBacklogs.grow``, the clock passed in: while other sites'
    robots.txt answers are due, a window opened less than ``GROWTH_HOLD``
    (0.5 s) ago does not grow; with none due, or once older, it does (one
    more request let go after one came back, up to its limit)."""
    from scrapy_rfc9309.components.crawl._backlog import GROWTH_HOLD, SiteBacklogs

    backlogs = SiteBacklogs()
    requests = [Request(f"http://a.test/{number}") for number in range(6)]
    first = backlogs.start("http://a.test", requests, limit=4, now=10.0)
    assert len(first) == 1

    def answer(request: Request) -> list[Request]:
        backlogs.handed_out(request)
        return backlogs.came_back(request)

    second = answer(first[0])
    assert len(second) == 1  # its place taken; the window is still one
    assert backlogs.grow(10.2, answers_due=True) == []
    grown = backlogs.grow(10.2, answers_due=False)
    assert len(grown) == 1
    assert backlogs.grow(10.2, answers_due=False) == []  # nothing came back since it grew
    answer(second[0])
    assert backlogs.grow(10.0 + GROWTH_HOLD - 0.01, answers_due=True) == []
    assert len(backlogs.grow(10.0 + GROWTH_HOLD, answers_due=True)) == 1


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_rfc9309_2_3_new_sites_arriving_never_keep_a_settled_site_at_one_request(
    sites,
) -> None:
    """Eight more sites whose robots.txt answer after 0.4 s each, one download
    at a time (``ROBOTSTXT_CONCURRENT_DOWNLOADS = 1``): for 3.2 s an answer
    is always due. The site settled first waits for them only in its first
    half second, then grows its window to its slot's concurrency (4) as its
    12 pages (0.25 s each) come back, instead of 2.75 s one at a time."""
    in_flight = {"now": 0, "most": 0, "answered": 0}
    page = slow(0.25, b"page")

    def counted(request: Any) -> Any:
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])

        def done(_: Any) -> None:
            in_flight["now"] -= 1
            in_flight["answered"] += 1

        request.notifyFinish().addBoth(done)
        return page(request)

    healthy = sites(routes={"/robots.txt": status(404)}, default=counted)
    others = [sites(routes={"/robots.txt": delayed(0.4, ROBOTS)}, default=PAGE) for _ in range(8)]
    urls = [*(healthy.url(f"/p{index}") for index in range(12))]
    urls += [site.url("/p") for site in others]
    settings = {**QUEUE, "CONCURRENT_REQUESTS_PER_DOMAIN": 4, "ROBOTSTXT_CONCURRENT_DOWNLOADS": 1}
    spider, _ = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(urls)
    assert in_flight["answered"] == 12
    # kept at one request, at most one page would ever be in flight at the
    # server (measured there, not timed: a loaded machine stretches both ways)
    assert in_flight["most"] >= 3, in_flight


@pytest.mark.parametrize(
    ("settings", "spider_delay", "possible"),
    [
        ({}, None, False),
        ({"DOWNLOAD_DELAY": 0.5}, None, True),
        ({}, 2, True),
        ({"AUTOTHROTTLE_ENABLED": True}, None, True),
        ({"DOWNLOAD_SLOTS": {"a.example": {"concurrency": 2}}}, None, False),
        ({"DOWNLOAD_SLOTS": {"a.example": {"delay": 1}}}, None, True),
    ],
)
def test_rfc9309_2_4_page_delays_possible_names_every_way_scrapy_spaces_a_slot(
    settings: dict[str, Any], spider_delay: float | None, possible: bool
) -> None:
    """The queue looks up a request's download slot (to let a spaced site's
    requests into the downloader one at a time) only when some setting can space
    a slot; a Crawl-delay is checked on its own."""
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._component_settings import page_delays_possible

    spider = type("S", (), {} if spider_delay is None else {"download_delay": spider_delay})()
    assert page_delays_possible(Settings(settings), spider) is possible

"""With a scheduler or queue that is not ours, requests wait in the middleware,
at most ``ROBOTSTXT_HELD_SHARE`` of ``CONCURRENT_REQUESTS`` at once; the others
are set aside and scheduled again once their site's robots.txt is settled
(RFC 9309 2.3: nothing of a site is fetched before its robots.txt is known).
Real crawls against the local test server, asserting on what it served, and when.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from typing import Any, ClassVar

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components.crawl._middleware import RequestSetAside

from .conftest import BASE_SETTINGS
from .server import Held, delayed, hang, status, text
from .test_queue import stall_sites

PAGE = text("<html>page</html>", content_type=b"text/html")
PLAIN = {"SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"}
FIFO = {"SCHEDULER": "tests.test_fallback.FifoScheduler"}


def page_times(site: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if path != "/robots.txt"]


def robots_times(site: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if path == "/robots.txt"]


class KeptFingerprints:
    """A duplicate filter whose fingerprints outlive the crawl (SCHEDULER_PERSIST)."""

    seen: ClassVar[set[bytes]] = set()

    def __init__(self, crawler: Any) -> None:
        self.fingerprinter = crawler.request_fingerprinter

    def request_seen(self, request: Request) -> bool:
        fingerprint = self.fingerprinter.fingerprint(request)
        if fingerprint in self.seen:
            return True
        self.seen.add(fingerprint)
        return False


class FifoScheduler:
    """A scheduler without priority queues (as scrapy-redis's): one FIFO in
    memory, Scrapy's duplicate filter in front of it."""

    #: the queue kept across runs with SCHEDULER_PERSIST (as scrapy-redis keeps it)
    kept: ClassVar[deque[Request]] = deque()

    def __init__(self, dupefilter: Any, persist: bool = False) -> None:
        self.df = dupefilter
        self.persist = persist
        self.queue: deque[Request] = FifoScheduler.kept if persist else deque()

    @classmethod
    def from_crawler(cls, crawler: Any) -> FifoScheduler:
        from scrapy.dupefilters import RFPDupeFilter

        persist = crawler.settings.getbool("SCHEDULER_PERSIST")
        if persist:  # fingerprints kept across runs too, as scrapy-redis keeps them
            return cls(KeptFingerprints(crawler), persist)
        return cls(RFPDupeFilter.from_crawler(crawler), persist)

    def open(self, spider: Any) -> None:
        return None

    def close(self, reason: str) -> None:
        return None

    def has_pending_requests(self) -> bool:
        return bool(self.queue)

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            return False
        self.queue.append(request)
        return True

    def next_request(self) -> Request | None:
        return self.queue.popleft() if self.queue else None

    def __len__(self) -> int:
        return len(self.queue)


class CountingSpider(Spider):
    """Records every callback and every errback call, in order (a request
    called back twice, or called back and errbacked, shows up twice)."""

    name = "counting"

    def __init__(self, urls: list[str] = (), dont_filter: bool = True, **kwargs: Any):  # type: ignore[assignment]
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.dont_filter = dont_filter
        self.fetched: list[str] = []
        self.fetched_dont_filter: list[bool] = []
        self.fetched_meta_keys: set[str] = set()
        self.errbacks: list[tuple[str, Any]] = []

    async def start(self) -> Any:
        for url in self.urls:
            yield Request(url, self.parse, errback=self.failed, dont_filter=self.dont_filter)

    def parse(self, response: Any) -> None:
        self.fetched.append(response.url)
        self.fetched_dont_filter.append(response.request.dont_filter)
        self.fetched_meta_keys.update(response.meta)

    def failed(self, failure: Any) -> None:
        self.errbacks.append((failure.request.url, failure.value))


async def run(
    urls: list[str], settings: dict[str, Any], stop_after: float | None = None, **kwargs: Any
) -> tuple[CountingSpider, dict[str, Any]]:
    """A crawl; ``stop_after``: seconds after which it is stopped as Ctrl-C does."""
    crawler = get_crawler(CountingSpider, {**BASE_SETTINGS, **settings})
    if stop_after is not None:
        from scrapy.utils.defer import deferred_from_coro
        from twisted.internet import reactor as _reactor

        reactor: Any = _reactor

        def stop() -> Any:  # Crawler.stop_async since Scrapy 2.14, stop() before
            if hasattr(crawler, "stop_async"):
                return deferred_from_coro(crawler.stop_async())
            return crawler.stop()

        reactor.callLater(stop_after, stop)
    await _compat.crawl(crawler, urls=urls, **kwargs)
    assert crawler.stats is not None
    spider = crawler.spider
    assert isinstance(spider, CountingSpider)
    stats = crawler.stats.get_stats()
    assert stats.get("log_count/ERROR", 0) == 0, "the crawl logged errors"
    return spider, stats


def assert_none_lost(spider: CountingSpider, stats: dict[str, Any], scheduled: int) -> None:
    """Every scheduled request ended once: a response, a drop with a stat and its
    errback called, or a drop at close of a copy set aside (counted; it had left
    Scrapy, which calls no errback for it, as for requests still scheduled)."""
    for _, error in spider.errbacks:
        assert type(error) is IgnoreRequest, f"an errback saw {error!r}"
    held_at_close = sum("spider closed" in str(error) for _, error in spider.errbacks)
    aside_at_close = stats.get("robotstxt/forbidden/closing", 0) - held_at_close
    assert len(spider.fetched) + len(spider.errbacks) + aside_at_close == scheduled
    assert stats.get("robotstxt/forbidden", 0) == len(spider.errbacks) + aside_at_close
    every = spider.fetched + [url for url, _ in spider.errbacks]
    assert len(set(every)) == len(every), "a request ended twice"


@pytest.mark.slow
@pytest.mark.parametrize("settings", [PLAIN, FIFO], ids=["ScrapyPriorityQueue", "fifo-scheduler"])
@deferred_f_from_coro_f
async def test_2_3_another_queue_a_hung_robots_txt_holds_a_bounded_share_and_stalls_nothing(
    sites, settings: dict[str, Any]
) -> None:
    """64 pages of a site whose robots.txt never answers, scheduled first, then
    10 healthy sites x 3 pages; CONCURRENT_REQUESTS = 16, so at most 8 wait in
    the middleware. The healthy sites are served before the hung robots.txt
    times out (2 s); the hung site's pages are all dropped as unreachable
    (RFC 9309 2.3.1.4) when it does, each errback called once, with the
    robots.txt verdict, never with the exception that set it aside."""
    hung, healthy, urls = stall_sites(sites)
    spider, stats = await run(urls, {"CONCURRENT_REQUESTS": 16, "DOWNLOAD_TIMEOUT": 2, **settings})
    assert sorted(spider.fetched) == sorted(urls[64:])
    hung_until = robots_times(hung)[0] + 2  # its download timed out then
    last_page = max(t for site in healthy for t in page_times(site))
    assert last_page < hung_until - 0.5, "the healthy sites waited for the hung robots.txt"
    assert page_times(hung) == []
    assert sorted(url for url, _ in spider.errbacks) == sorted(urls[:64])
    assert all("unreachable" in str(error) for _, error in spider.errbacks)
    assert stats["robotstxt/forbidden/unreachable"] == 64
    assert stats["robotstxt/held/max"] <= 8  # ROBOTSTXT_HELD_SHARE 0.5 of 16
    assert stats["robotstxt/set_aside"] >= 56
    assert hung.count("/robots.txt") == 1
    assert all(site.count("/robots.txt") == 1 for site in healthy)
    assert_none_lost(spider, stats, len(urls))


@deferred_f_from_coro_f
async def test_2_3_set_aside_pages_go_after_their_robots_txt_decided_by_its_rules(sites) -> None:
    """A robots.txt answering once the other site's 5 pages are fetched (5 s at
    most): 40 pages of its site scheduled first, then the other site;
    CONCURRENT_REQUESTS = 4 (2 held at most). The other site's pages are fetched
    before that answer (were they stuck behind the slow site's, the answer would
    come at 5 s and they after it); no page of the slow site is fetched before
    its robots.txt answered, each is asked once; the disallowed ones reach their
    errback once, with the deciding rule (RFC 9309 2.2.2), and the duplicate
    filter drops none of the copies scheduled again (``dont_filter`` restored on
    them)."""
    fast = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    robots = Held(lambda: len(page_times(fast)) >= 5, text("User-agent: *\nDisallow: /private\n"))
    slow = sites(routes={"/robots.txt": robots}, default=PAGE)
    urls = [slow.url(f"/private/{i}") for i in range(20)] + [
        slow.url(f"/ok/{i}") for i in range(20)
    ]
    urls += [fast.url(f"/p{i}") for i in range(5)]
    spider, stats = await run(urls, {"CONCURRENT_REQUESTS": 4, **FIFO}, dont_filter=False)
    (answered,) = robots.answered
    assert sorted(spider.fetched) == sorted(urls[20:])
    assert min(page_times(slow)) >= answered
    assert max(page_times(fast)) < answered, "the other site waited for the slow robots.txt"
    assert sorted(p for p in slow.hits if p != "/robots.txt") == sorted(
        f"/ok/{i}" for i in range(20)
    )
    assert sorted(url for url, _ in spider.errbacks) == sorted(urls[:20])
    assert all('line 2: "Disallow: /private"' in str(error) for _, error in spider.errbacks)
    assert stats["robotstxt/forbidden/rule"] == 20
    assert stats["robotstxt/allowed"] == 25  # one verdict per request
    assert stats["robotstxt/held/max"] <= 2
    assert stats["robotstxt/set_aside"] >= 30
    assert not any(spider.fetched_dont_filter)  # their own dont_filter, not the copy's
    assert "_robotstxt_set_aside" not in spider.fetched_meta_keys
    assert_none_lost(spider, stats, len(urls))


@deferred_f_from_coro_f
async def test_2_3_every_request_set_aside_the_spider_waits_for_its_robots_txt(sites) -> None:
    """CONCURRENT_REQUESTS = 2: one request waits in the middleware (0.5 of 2),
    every other page is set aside; the spider stays open until the pages are
    scheduled again, and fetches them all. (With CONCURRENT_REQUESTS = 1 the
    request held takes the only place: no other reaches the middleware.)"""
    body = "User-agent: *\n" + "".join(f"Disallow: /x{i}\n" for i in range(20_000))
    site = sites(routes={"/robots.txt": delayed(0.5, text(body))}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(5)]
    spider, stats = await run(urls, {"CONCURRENT_REQUESTS": 2, **PLAIN})
    assert sorted(spider.fetched) == sorted(urls)
    assert stats["robotstxt/set_aside"] >= 1
    assert stats["robotstxt/held/max"] == 1
    assert_none_lost(spider, stats, len(urls))


@deferred_f_from_coro_f
async def test_tdmrep_json_pending_sets_aside_beyond_the_share_too(sites) -> None:
    """A declared purpose that needs the site's tdmrep.json, answering after
    1 s: requests waiting for it count as held too, the others are set aside
    and decided once it is fetched (the reserved ones dropped, with their
    errback, the others fetched; none before the tdmrep.json answered)."""
    tdmrep = text(
        '[{"location": "/reserved/*", "tdm-reservation": 1}]', content_type=b"application/json"
    )
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": delayed(1.0, tdmrep),
        },
        default=PAGE,
    )
    urls = [site.url(f"/reserved/{n}") for n in range(20)]
    urls += [site.url(f"/free/{n}") for n in range(20)]
    settings = {"CONCURRENT_REQUESTS": 4, "ROBOTSTXT_PURPOSES": ["train-ai"], **PLAIN}
    spider, stats = await run(urls, settings)
    hits = list(zip(site.hits, site.hit_times, strict=True))
    answered = next(t for p, t in hits if "tdmrep" in p) + 1
    assert sorted(spider.fetched) == sorted(urls[20:])
    assert min(t for p, t in hits if p.startswith("/free/")) >= answered - 0.05
    assert not any(p.startswith("/reserved/") for p in site.hits)
    assert site.count("/.well-known/tdmrep.json") == 1
    assert sorted(url for url, _ in spider.errbacks) == sorted(urls[:20])
    assert all("tdmrep.json" in str(error) for _, error in spider.errbacks)
    assert stats["robotstxt/forbidden/usage"] == 20
    assert stats["robotstxt/held/max"] <= 2
    assert stats["robotstxt/set_aside"] >= 30
    assert_none_lost(spider, stats, len(urls))


class DownloadingSpider(Spider):
    """Downloads a page of another site from its callback, as media pipelines do
    (``engine.download_async``, ``callback=NO_CALLBACK``): never scheduled."""

    name = "downloading"

    def __init__(self, page: str = "", other: str = "", held: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.page, self.other, self.held = page, other, held
        self.statuses: list[int] = []

    async def start(self) -> Any:
        if self.held:
            yield Request(self.held, self.parse_held, priority=1)
        yield Request(self.page, self.parse)

    def parse_held(self, response: Any) -> None:
        return None

    async def parse(self, response: Any) -> Any:
        from scrapy.http.request import NO_CALLBACK

        other = await _compat.download(self.crawler, Request(self.other, callback=NO_CALLBACK))
        self.statuses.append(other.status)
        return
        yield


@deferred_f_from_coro_f
async def test_2_3_a_download_that_was_not_scheduled_waits_and_is_never_set_aside(sites) -> None:
    """CONCURRENT_REQUESTS = 2, one request may wait in the middleware, and one
    does (``/c``): a page downloaded with ``engine.download_async`` waits for
    its robots.txt (0.5 s) all the same, and its sender gets the response;
    set aside, it would never reach its sender."""
    first = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    other = sites(routes={"/robots.txt": delayed(0.5, status(404))}, default=PAGE)
    crawler = get_crawler(DownloadingSpider, {**BASE_SETTINGS, "CONCURRENT_REQUESTS": 2, **PLAIN})
    await _compat.crawl(crawler, page=first.url("/a"), other=other.url("/b"), held=other.url("/c"))
    assert crawler.stats is not None and isinstance(crawler.spider, DownloadingSpider)
    stats = crawler.stats.get_stats()
    assert stats.get("log_count/ERROR", 0) == 0
    assert crawler.spider.statuses == [200]
    assert page_times(other)[0] >= robots_times(other)[0] + 0.5 - 0.05
    assert stats["robotstxt/set_aside"] == 1  # the scheduled page /a only
    assert stats["robotstxt/held/max"] == 2  # /c, and /b beyond the share


@deferred_f_from_coro_f
async def test_closing_drops_set_aside_requests_counts_them_in_summary_and_report(
    sites, caplog, tmp_path
) -> None:
    """Closed (CLOSESPIDER_TIMEOUT) while a robots.txt hangs: the requests held
    and those set aside are all dropped, counted in robotstxt/forbidden/closing,
    in the close summary and in the JSON report, with a log line; the crawl
    does not wait for the 120 s download time-out."""
    site = sites(routes={"/robots.txt": hang()}, default=PAGE)
    report = tmp_path / "report.json"
    settings = {
        **PLAIN,
        "CONCURRENT_REQUESTS": 4,
        "DOWNLOAD_TIMEOUT": 120,
        "CLOSESPIDER_TIMEOUT": 0.5,
        "ROBOTSTXT_REPORT_FILE": str(report),
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0},
    }
    urls = [site.url(f"/p{i}") for i in range(10)]
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, stats = await run(urls, settings)
    assert time.monotonic() - started < 10
    assert spider.fetched == [] and page_times(site) == []
    assert stats["robotstxt/set_aside"] == 8  # 2 held (0.5 of 4)
    assert stats["robotstxt/forbidden"] == stats["robotstxt/forbidden/closing"] == 10
    assert len(spider.errbacks) == 2  # the held ones; the set-aside copies had left Scrapy
    messages = [r.getMessage() for r in caplog.records]
    assert any("dropping 8 requests set aside" in m for m in messages)
    summary = next(m for m in messages if "robots.txt summary" in m)
    assert "10 dropped (" in summary and "10 at close)" in summary
    record = next(r for r in json.loads(report.read_text())["sites"] if r["site"] == site.origin)
    assert record["requests_dropped_at_close"] == 10
    assert_none_lost(spider, stats, len(urls))


@pytest.mark.parametrize(
    ("settings", "stopped"),
    [(PLAIN, False), (PLAIN, True), (FIFO, False)],
    ids=["ScrapyPriorityQueue", "ScrapyPriorityQueue-stopped", "fifo-scheduler"],
)
@deferred_f_from_coro_f
async def test_2_3_closed_with_jobdir_held_and_set_aside_requests_go_back_to_the_scheduler(
    sites, caplog, tmp_path, settings: dict[str, Any], stopped: bool
) -> None:
    """Closed while a robots.txt hangs, with a scheduler that keeps its queue
    (JOBDIR; SCHEDULER_PERSIST for scrapy-redis): the requests held here and
    the copies set aside are put back in the scheduler before it closes
    (RFC 9309 2.3: none fetched before the robots.txt is known), none dropped;
    the resumed crawl, whose duplicate filter remembers them, serves every
    page exactly once."""
    slow = sites(routes={"/robots.txt": hang()}, default=PAGE)
    fast = sites(default=PAGE)
    slow_urls = [slow.url(f"/p{i}") for i in range(10)]
    fast_urls = [fast.url(f"/f{i}") for i in range(3)]
    job = {
        **settings,
        "JOBDIR": str(tmp_path / "job"),
        "CONCURRENT_REQUESTS": 4,
        "DOWNLOAD_TIMEOUT": 60,
        "CLOSESPIDER_TIMEOUT": 0 if stopped else 1.5,  # stopped: as by Ctrl-C
    }
    if settings is FIFO:  # a scheduler of its own keeps its queue: scrapy-redis's setting
        job = {**job, "JOBDIR": None, "SCHEDULER_PERSIST": True}
        FifoScheduler.kept.clear()
        KeptFingerprints.seen.clear()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, stats = await run(
            fast_urls + slow_urls, job, stop_after=1.5 if stopped else None, dont_filter=False
        )
    assert stats["finish_reason"] == ("shutdown" if stopped else "closespider_timeout")
    assert page_times(slow) == [] and spider.errbacks == []
    assert "robotstxt/forbidden/closing" not in stats
    assert stats["robotstxt/requeued_at_close"] == 10
    messages = [r.getMessage() for r in caplog.records]
    assert "10 requests waiting for robots.txt put back in the scheduler for the next run" in (
        messages
    )

    slow.routes["/robots.txt"] = text("User-agent: *\nDisallow: /p9\n")
    spider, stats = await run(
        fast_urls + slow_urls, {**job, "CLOSESPIDER_TIMEOUT": 0}, dont_filter=False
    )
    pages = sorted(path for path in slow.hits if path != "/robots.txt")
    assert pages == sorted(f"/p{i}" for i in range(9))  # each once; /p9 disallowed
    assert sorted(path for path in fast.hits if path != "/robots.txt") == sorted(
        f"/f{i}" for i in range(3)
    )
    assert all(not dont_filter for dont_filter in spider.fetched_dont_filter)


@deferred_f_from_coro_f
async def test_2_3_our_queue_holds_and_sets_aside_nothing(sites) -> None:
    """With RobotsTxtPriorityQueue requests of pending sites wait in the queue:
    none is held in the middleware, none set aside."""
    slow = sites(routes={"/robots.txt": delayed(0.5, status(404))}, default=PAGE)
    urls = [slow.url(f"/p{i}") for i in range(20)]
    spider, stats = await run(
        urls,
        {
            "CONCURRENT_REQUESTS": 4,
            "SCHEDULER_PRIORITY_QUEUE": "scrapy_rfc9309.RobotsTxtPriorityQueue",
        },
    )
    assert sorted(spider.fetched) == sorted(urls)
    assert "robotstxt/set_aside" not in stats
    assert "robotstxt/held/max" not in stats


def test_set_aside_is_an_ignore_request() -> None:
    """Scrapy passes an IgnoreRequest without errback on silently (no log line)."""
    assert issubclass(RequestSetAside, IgnoreRequest)


@pytest.mark.parametrize("value", [0, -0.5, 1.5, "half", True])
def test_invalid_held_share_names_the_setting(value: Any) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._setting_values import SettingError
    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    with pytest.raises(SettingError, match="ROBOTSTXT_HELD_SHARE"):
        RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_HELD_SHARE": value}))


@pytest.mark.parametrize(
    ("share", "concurrent", "held"),
    [(0.5, 16, 8), (1, 16, 16), (0.3, 10, 3), (0.5, 1, 1), (0.01, 16, 1), (0.5, 0, None)],
)
def test_held_share_of_concurrent_requests(share: float, concurrent: int, held: int | None) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    settings = Settings({"ROBOTSTXT_HELD_SHARE": share, "CONCURRENT_REQUESTS": concurrent})
    assert RobotsTxtSettings.from_settings(settings).held_max == held


@deferred_f_from_coro_f
async def test_2_3_set_aside_copies_bounded_by_robotstxt_set_aside_max(sites) -> None:
    """``ROBOTSTXT_SET_ASIDE_MAX = 5``: at most 5 copies wait in memory; past it,
    requests wait in the middleware (beyond ``ROBOTSTXT_HELD_SHARE``), and every
    request is still decided once by the robots.txt that answered after 1 s."""
    slow = sites(
        routes={"/robots.txt": delayed(1.0, text("User-agent: *\nDisallow: /private\n"))},
        default=PAGE,
    )
    urls = [slow.url(f"/private/{i}") for i in range(10)] + [
        slow.url(f"/ok/{i}") for i in range(10)
    ]
    spider, stats = await run(
        urls, {"CONCURRENT_REQUESTS": 4, "ROBOTSTXT_SET_ASIDE_MAX": 5, **FIFO}, dont_filter=False
    )
    assert sorted(spider.fetched) == sorted(urls[10:])
    assert sorted(url for url, _ in spider.errbacks) == sorted(urls[:10])
    assert stats["robotstxt/set_aside"] <= 5
    assert stats["robotstxt/held/max"] > 2  # past the bound: held in the middleware
    assert_none_lost(spider, stats, len(urls))


class CallbackDownloadingSpider(Spider):
    """``/a``'s callback downloads ``other`` with ``engine.download_async`` and a
    plain ``Request`` (no ``callback=NO_CALLBACK``), as many extensions do."""

    name = "downloading"

    def __init__(self, page: str = "", other: str = "", held: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.page, self.other, self.held = page, other, held
        self.answers: list[Any] = []
        self.parsed: list[str] = []

    async def start(self) -> Any:
        yield Request(self.held, self.parse_held, priority=1)
        yield Request(self.page, self.parse_page)

    def parse_held(self, response: Any) -> None:
        return None

    def parse(self, response: Any) -> None:  # the default callback
        self.parsed.append(response.url)

    async def parse_page(self, response: Any) -> Any:
        try:
            other = await _compat.download(self.crawler, Request(self.other))
            self.answers.append(other.status)
        except Exception as error:
            self.answers.append(repr(error))
        return
        yield


@deferred_f_from_coro_f
async def test_2_3_a_download_async_request_with_a_callback_reaches_its_sender(sites) -> None:
    """Another scheduler queue, ``CONCURRENT_REQUESTS = 2`` (one may wait in the
    middleware, ``/c`` does): ``/b``, downloaded by a callback with
    ``engine.download_async``, must wait for its robots.txt and reach its sender."""
    first = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    other = sites(routes={"/robots.txt": delayed(0.5, status(404))}, default=PAGE)
    crawler = get_crawler(
        CallbackDownloadingSpider, {**BASE_SETTINGS, "CONCURRENT_REQUESTS": 2, **PLAIN}
    )
    await _compat.crawl(crawler, page=first.url("/a"), other=other.url("/b"), held=other.url("/c"))
    spider = crawler.spider
    assert isinstance(spider, CallbackDownloadingSpider)
    assert spider.parsed == []  # not handed to the spider's callback instead
    assert spider.answers == [200]

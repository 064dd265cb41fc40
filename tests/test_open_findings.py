"""Problems found by an audit and not fixed yet, each reproduced by a real crawl.

Each test is marked ``xfail(strict=True)``: it fails today because of the
problem its reason names, and fails the suite as soon as a fix makes it pass,
so that the mark is taken off with the fix.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat

from .conftest import BASE_SETTINGS, UNSET, crawl
from .server import delayed, redirect, status, text

PAGE = text("<html>page</html>", content_type=b"text/html")
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}
PLAIN = {"SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"}


class DownloadingSpider(Spider):
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
    crawler = get_crawler(DownloadingSpider, {**BASE_SETTINGS, "CONCURRENT_REQUESTS": 2, **PLAIN})
    await _compat.crawl(crawler, page=first.url("/a"), other=other.url("/b"), held=other.url("/c"))
    spider = crawler.spider
    assert isinstance(spider, DownloadingSpider)
    assert spider.parsed == []  # not handed to the spider's callback instead
    assert spider.answers == [200]


class AgentsSpider(Spider):
    """The first URL with its User-Agent; the others, with theirs, once it is back."""

    name = "agents"

    def __init__(self, urls: list[tuple[str, str]] = (), **kwargs: Any):  # type: ignore[assignment]
        super().__init__(**kwargs)
        self.urls = list(urls)

    async def start(self) -> Any:
        url, agent = self.urls[0]
        yield Request(url, self.parse_first, headers={"User-Agent": agent}, dont_filter=True)

    def parse_first(self, response: Any) -> Any:
        for url, agent in self.urls[1:]:
            yield Request(url, headers={"User-Agent": agent}, dont_filter=True)

    def parse(self, response: Any) -> None:
        return None


@pytest.mark.xfail(
    strict=True,
    reason="RobotsTxtFetches._tell_crawl_delay (sitefiles/_robotstxt_fetches.py) reads "
    "the Crawl-delay for the token of the request that started the fetch only: "
    "later requests obeying as another token whose group asks a delay are not spaced",
)
@deferred_f_from_coro_f
async def test_crawl_delay_of_each_requests_own_token_is_honoured(sites) -> None:
    """``/first`` is sent as OtherBot (no Crawl-delay for it); the pages sent
    then as MyBot, whose group asks ``Crawl-delay: 0.6``, are 0.6 s apart."""
    robots = "User-agent: mybot\nCrawl-delay: 0.6\nDisallow: /nothing\n\nUser-agent: *\nDisallow:\n"
    site = sites(routes={"/robots.txt": text(robots)}, default=PAGE)
    urls = [(site.url("/first"), "OtherBot/1.0")]
    urls += [(site.url(f"/p{i}"), "MyBot/1.0") for i in range(4)]
    settings = {**BASE_SETTINGS, **ADDON_ONLY, "ROBOTSTXT_OBEY": True, "DOWNLOADER_MIDDLEWARES": {}}
    crawler = get_crawler(AgentsSpider, settings)
    await _compat.crawl(crawler, urls=urls)
    times = [t for p, t in zip(site.hits, site.hit_times, strict=True) if p.startswith("/p")]
    gaps = [later - earlier for earlier, later in pairwise(times)]
    assert len(gaps) == 3
    assert min(gaps) >= 0.55, gaps


@deferred_f_from_coro_f
async def test_2_3_dont_obey_robotstxt_does_not_follow_a_redirect_to_another_site(sites) -> None:
    """A request sent with ``dont_obey_robotstxt`` to one site, redirected by it to
    another site's disallowed page: that page is not downloaded."""
    other = sites(
        host="127.0.0.2",
        routes={"/robots.txt": text("User-agent: *\nDisallow: /private\n")},
        default=PAGE,
    )
    site = sites(routes={"/api": redirect(other.url("/private/y"))}, default=PAGE)
    _, stats = await crawl([site.url("/api")], ADDON_ONLY, meta={"dont_obey_robotstxt": True})
    assert other.count("/private/y") == 0, other.hits
    assert stats["robotstxt/forbidden/rule"] == 1


@deferred_f_from_coro_f
async def test_2_3_1_2_robots_txt_redirected_to_a_scheme_not_downloadable(sites) -> None:
    """An http site's robots.txt redirects to https, which this crawl cannot
    download: its http pages are not passed unchecked."""
    site = sites(default=PAGE)
    site.routes["/robots.txt"] = redirect(site.url("/r").replace("http://", "https://"))
    _, stats = await crawl(
        [site.url("/private/a")], {"DOWNLOAD_HANDLERS": {"https": None}}, allow_errors=True
    )
    assert "robotstxt/passed_unchecked" not in stats, site.hits
    assert stats["robotstxt/redirect_refused"] == 1  # unavailable (RFC 9309 2.3.1.3)

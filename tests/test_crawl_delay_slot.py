"""Crawl-delay applies to a site's pages whatever download slot they are sent
in (a slot named in ``meta["download_slot"]``, or the one a redirect from
another host carries), and whatever product token each is sent as."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat

from .conftest import ADDON_ONLY, BASE_SETTINGS, crawl
from .server import redirect, text

PAGE = text("<html>page</html>", content_type=b"text/html")
DELAYED = "User-agent: *\nCrawl-delay: 0.6\n"


def _gaps(site: Any, paths: set[str]) -> list[float]:
    times = [t for path, t in zip(site.hits, site.hit_times, strict=True) if path in paths]
    return [later - earlier for earlier, later in pairwise(times)]


@deferred_f_from_coro_f
async def test_crawl_delay_holds_for_pages_reached_by_a_redirect_from_another_host(sites) -> None:
    """Scrapy keeps a redirected request's ``download_slot`` (its first host's):
    the pages of the site redirected to are still spaced by its Crawl-delay."""
    target = sites(host="127.0.0.2", routes={"/robots.txt": text(DELAYED)}, default=PAGE)
    origin = sites(routes={"/robots.txt": text("User-agent: *\nAllow: /\n")})
    paths = {f"/p{i}" for i in range(4)}
    for path in paths:
        origin.routes["/r" + path] = redirect(target.url(path))
    await crawl([origin.url("/r" + p) for p in sorted(paths)], ADDON_ONLY)
    gaps = _gaps(target, paths)
    assert len(gaps) == 3
    assert min(gaps) >= 0.55, gaps


@deferred_f_from_coro_f
async def test_crawl_delay_holds_in_a_download_slot_named_in_meta(sites) -> None:
    """``meta["download_slot"]`` names the slot the spider's requests share: the
    site's Crawl-delay still spaces its pages."""
    site = sites(routes={"/robots.txt": text(DELAYED)}, default=PAGE)
    paths = {f"/p{i}" for i in range(4)}
    await crawl([site.url(p) for p in sorted(paths)], ADDON_ONLY, meta={"download_slot": "shared"})
    gaps = _gaps(site, paths)
    assert len(gaps) == 3
    assert min(gaps) >= 0.55, gaps


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


class _Told:
    """A Crawl-delay listener keeping what it was told."""

    def __init__(self) -> None:
        self.told: list[tuple[str, float | None]] = []

    def crawl_delay_in_force(self, site: str, delay: float | None) -> None:
        self.told.append((site, delay))


def test_the_delay_told_is_the_longest_of_the_tokens_requests_obey_as() -> None:
    """The site's delay is the longest its robots.txt asks of the crawl's token
    (MyBot), ``ROBOTSTXT_ALSO_OBEY``'s (none here) and each token a request of
    it obeyed as; told again only when a new token's is longer. A request
    obeying as the crawl's token looks nothing up."""
    from scrapy_rfc9309.components.sitefiles._crawl_delay import (
        CrawlDelays,
        crawl_delay_listeners,
    )
    from scrapy_rfc9309.parser._robotstxt import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    robots = RobotsTxt.parse(
        b"User-agent: mybot\nCrawl-delay: 1\nDisallow: /a\n\n"
        b"User-agent: slowbot\nCrawl-delay: 3\nDisallow: /b\n\n"
        b"User-agent: fastbot\nCrawl-delay: 0.5\nDisallow: /c\n"
    )
    outcome = SiteOutcome(Kind.PARSED, robots, "HTTP 200", 0.0)
    crawler = get_crawler(Spider)
    listener = _Told()
    crawl_delay_listeners(crawler).append(listener)
    delays = CrawlDelays(crawler, "MyBot", ())
    site = "http://a.example:80"
    delays.in_force(site, outcome, "FastBot")  # fetched for a request sent as FastBot
    assert listener.told == [(site, 1.0)]  # the crawl's token's is the longer
    delays.obeyed_as(site, outcome, "MyBot")
    delays.obeyed_as(site, outcome, "FastBot")
    assert listener.told == [(site, 1.0)]
    delays.obeyed_as(site, outcome, "SlowBot")
    assert listener.told == [(site, 1.0), (site, 3.0)]
    delays.obeyed_as(site, outcome, "SlowBot")  # told once
    delays.in_force(site, outcome, "MyBot")  # fetched again: as read for the crawl's token
    assert listener.told[-1] == (site, 1.0)
    delays.obeyed_as(site, outcome, "SlowBot")
    assert listener.told[-1] == (site, 3.0)

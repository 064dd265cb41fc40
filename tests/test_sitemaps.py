"""``SitemapSpider`` with ``sitemap_urls = [".../robots.txt"]`` through the add-on: the
robots.txt fetched for the rules is the one its ``Sitemap`` lines (RFC 9309 2.2.4)
are read from, downloaded once; and ``robots_sitemaps`` for any spider."""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Spider
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309 import robots_sitemaps
from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.parser import RobotsTxt
from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

from .conftest import BASE_SETTINGS, UNSET
from .server import redirect, status, text

ADDON: dict[str, Any] = {
    **BASE_SETTINGS,
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}
PAGE = text("<html>page</html>", content_type=b"text/html")


def sitemap(*urls: str) -> Any:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>',
        content_type=b"application/xml",
    )


class SitemapRecorder(SitemapSpider):
    """A ``SitemapSpider`` as Scrapy documents it, recording the pages it parsed."""

    name = "sitemaps"

    def __init__(self, urls: list[str] = (), **kwargs: Any) -> None:  # type: ignore[assignment]
        self.sitemap_urls = list(urls)
        super().__init__(**kwargs)
        self.fetched: list[str] = []

    def parse(self, response: Any) -> None:
        self.fetched.append(response.url)


async def sitemap_crawl(urls: list[str], **settings: Any) -> tuple[SitemapRecorder, dict]:
    merged = {key: value for key, value in {**ADDON, **settings}.items() if value is not UNSET}
    crawler = get_crawler(SitemapRecorder, merged)
    await _compat.crawl(crawler, urls=urls)
    assert crawler.stats is not None and isinstance(crawler.spider, SitemapRecorder)
    stats = crawler.stats.get_stats()
    assert stats.get("log_count/ERROR", 0) == 0
    return crawler.spider, stats


@deferred_f_from_coro_f
async def test_2_2_4_sitemap_spider_reads_the_robots_txt_fetched_once(sites, caplog) -> None:
    """One robots.txt download for the rules and the Sitemap lines; the sitemap's
    entries checked as any request (RFC 9309 2.2.2), a disallowed one dropped."""
    site = sites(default=PAGE)
    site.routes["/robots.txt"] = text(
        f"User-agent: *\nDisallow: /private\nSitemap: {site.url('/sitemap.xml')}\n"
    )
    site.routes["/sitemap.xml"] = sitemap(site.url("/a"), site.url("/private/b"))
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309"):
        spider, stats = await sitemap_crawl([site.url("/robots.txt")])
    assert site.count("/robots.txt") == 1
    assert site.count("/sitemap.xml") == 1
    assert spider.fetched == [site.url("/a")]
    assert "/private/b" not in site.hits
    assert stats["robotstxt/forbidden/rule"] == 1
    assert stats["robotstxt/answered_from_copy"] == 1
    assert 'Forbidden by robots.txt line 2: "Disallow: /private"' in caplog.text


@deferred_f_from_coro_f
async def test_2_2_4_a_file_sitemap_of_a_remote_robots_txt_is_refused(
    sites, tmp_path, caplog
) -> None:
    """A remote robots.txt naming ``file:///...`` as a Sitemap must not make the
    crawler read a local file: the SitemapSpider follows the http sitemap only,
    the local file's URL is never requested, and the refusal is logged (WARNING
    naming the site and the URL) and counted."""
    site = sites(default=PAGE)
    local = tmp_path / "local-sitemap.xml"
    local.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{site.url('/read-from-a-local-file')}</loc></url></urlset>"
    )
    site.routes["/robots.txt"] = text(
        f"User-agent: *\nDisallow:\nSitemap: {local.as_uri()}\n"
        f"Sitemap: {site.url('/sitemap.xml')}\n"
    )
    site.routes["/sitemap.xml"] = sitemap(site.url("/a"))
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await sitemap_crawl([site.url("/robots.txt")])
    assert spider.fetched == [site.url("/a")]
    assert "/read-from-a-local-file" not in site.hits
    assert site.count("/sitemap.xml") == 1
    assert stats["robotstxt/sitemap_refused"] == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(local.as_uri() in m and site.origin in m for m in warnings), warnings


@deferred_f_from_coro_f
async def test_2_3_1_2_sitemap_spider_after_a_redirect_reads_relative_sitemaps(sites) -> None:
    """The answer stands at the URL the file was read from, after redirects
    (RFC 9309 2.3.1.2), so a relative Sitemap resolves as a download would."""
    site = sites(default=PAGE)
    site.routes["/robots.txt"] = redirect("/real/robots.txt")
    site.routes["/real/robots.txt"] = text("User-agent: *\nDisallow:\nSitemap: maps/one.xml\n")
    site.routes["/real/maps/one.xml"] = sitemap(site.url("/a"))
    spider, _ = await sitemap_crawl([site.url("/robots.txt")])
    assert (site.count("/robots.txt"), site.count("/real/robots.txt")) == (1, 1)
    assert site.count("/real/maps/one.xml") == 1
    assert spider.fetched == [site.url("/a")]


@deferred_f_from_coro_f
async def test_2_3_1_3_sitemap_spider_gets_the_404_of_an_unavailable_robots_txt(sites) -> None:
    """An unavailable robots.txt (RFC 9309 2.3.1.3): the spider gets its 404, as
    from a download (Scrapy ignores it), and no sitemap."""
    site = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    spider, stats = await sitemap_crawl([site.url("/robots.txt")])
    assert site.hits == ["/robots.txt"]
    assert spider.fetched == []
    assert stats["robotstxt/answered_from_copy"] == 1
    assert stats["httperror/response_ignored_status_count/404"] == 1


@deferred_f_from_coro_f
async def test_2_3_1_4_sitemap_spider_request_dropped_when_unreachable(sites) -> None:
    """An unreachable robots.txt (RFC 9309 2.3.1.4): not answered, dropped as every
    request of the site."""
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    spider, stats = await sitemap_crawl([site.url("/robots.txt")], ROBOTSTXT_UNREACHABLE_DEFER=0)
    assert site.hits == ["/robots.txt"]
    assert spider.fetched == []
    assert stats["robotstxt/forbidden/unreachable"] == 1
    assert "robotstxt/answered_from_copy" not in stats


class ReadsSitemaps(Spider):
    """A plain spider that asks for its site's sitemaps from a callback."""

    name = "reads"

    def __init__(self, url: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url = url
        self.found: list[list[str]] = []

    async def start(self) -> Any:
        from scrapy import Request

        yield Request(self.url, self.parse)

    async def parse(self, response: Any) -> None:
        self.found.append(await robots_sitemaps(self.crawler, response.url))
        other = response.url.replace("127.0.0.1", "localhost")
        self.found.append(await robots_sitemaps(self.crawler, other))


@deferred_f_from_coro_f
async def test_2_2_4_robots_sitemaps_from_the_copy_or_fetched_once(sites) -> None:
    """``robots_sitemaps``: the site's http(s) Sitemap URLs, absolute (a
    ``file:`` one refused); the robots.txt of a site not yet fetched is fetched
    once (one per site, RFC 9309 2.3)."""
    site = sites(default=PAGE)
    site.routes["/robots.txt"] = text(
        "Sitemap: /a.xml\nSitemap: file:///etc/hostname\nSitemap: https://e.com/b.xml\n"
    )
    crawler = get_crawler(ReadsSitemaps, {key: v for key, v in ADDON.items() if v is not UNSET})
    await _compat.crawl(crawler, url=site.url("/page"))
    spider = crawler.spider
    assert isinstance(spider, ReadsSitemaps)
    expected = [site.url("/a.xml"), "https://e.com/b.xml"]
    localhost = site.url("/a.xml").replace("127.0.0.1", "localhost")
    assert spider.found == [expected, [localhost, "https://e.com/b.xml"]]
    assert site.hits == ["/robots.txt", "/page", "/robots.txt"]  # once per site


def test_2_2_4_sitemaps_kept_when_the_outcome_is_compacted() -> None:
    """A cached site keeps its Sitemap lines, a file that forbids nothing too, and
    many of them compressed."""
    few = RobotsTxt.parse(b"User-agent: *\nDisallow:\nSitemap: /s.xml\n")
    few.matcher("Bot")  # the groups are dropped once a matcher is compiled
    kept = SiteOutcome(Kind.PARSED, few, "HTTP 200", 0.0).compact()
    assert kept.robots is None and kept.sitemaps == ("/s.xml",)
    many = [f"https://e.com/s{i}.xml" for i in range(2000)]
    body = "".join(f"Sitemap: {url}\n" for url in many).encode()
    kept = SiteOutcome(Kind.PARSED, RobotsTxt.parse(body), "HTTP 200", 0.0).compact()
    assert kept.sitemaps == tuple(many)
    assert isinstance(kept._sitemaps, bytes) and len(kept._sitemaps) < len(body) // 4

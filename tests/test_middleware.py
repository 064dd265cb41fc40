"""RobotsTxtMiddleware in real Scrapy crawls against real local HTTP servers
(RFC 9309 2.3 and 2.4; DESIGN.md sections 2 to 4)."""

from __future__ import annotations

from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl
from .server import text

PAGE = text("<html>page</html>", content_type=b"text/html")


@deferred_f_from_coro_f
async def test_2_3_1_1_parsed_rules_decide_and_name_their_line(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /private\n")}, default=PAGE)
    spider, stats = await crawl(
        [site.url("/public"), site.url("/private/a"), site.url("/private/b")]
    )
    assert spider.fetched == [site.url("/public")]
    assert set(spider.dropped) == {site.url("/private/a"), site.url("/private/b")}
    message = spider.dropped[site.url("/private/a")]
    assert message == (
        f'Forbidden by robots.txt line 2: "Disallow: /private" ({site.url("/robots.txt")})'
    )
    assert site.count("/robots.txt") == 1
    assert site.count("/private/a") == 0
    assert stats["robotstxt/request_count"] == 1
    assert stats["robotstxt/response_count"] == 1
    assert stats["robotstxt/response_status_count/200"] == 1
    assert stats["robotstxt/parsed"] == 1
    assert stats["robotstxt/allowed"] == 1
    assert stats["robotstxt/forbidden"] == 2
    assert stats["robotstxt/forbidden/rule"] == 2

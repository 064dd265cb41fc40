"""RobotsMetaMiddleware and RobotsMetaCachePolicy in real crawls against a real local
server: page-level directives (HTTP: The Definitive Guide ch. 9, robots META tag;
``X-Robots-Tag``)."""

from __future__ import annotations

import gzip
import logging
from typing import Any

import pytest
from scrapy import Request, Spider, signals
from scrapy.http import TextResponse
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.parser._directives import (
    MAX_HEAD_BYTES,
    MAX_HEADER_BYTES,
    MAX_HEADER_VALUES,
    MAX_TAG_ATTRIBUTES,
    MAX_TAG_BYTES,
)

from .conftest import BASE_SETTINGS, UNSET
from .server import html_page, page_with_headers, text

param = pytest.param
AGENT = "ExampleBot/1.0 (+https://example.com/bot)"
PLAIN = text("<html><body>plain</body></html>", content_type=b"text/html")
ALLOW_ALL = text("User-agent: *\nDisallow: /private\n")
MW = "scrapy_rfc9309.RobotsMetaMiddleware"
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "SPIDER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}


class MetaSpider(Spider):
    """Fetches ``urls``; for each response records ``robots_meta``, yields one item
    and a request for each link of the page (``response.css``, as spiders do)."""

    name = "meta"

    def __init__(self, urls: list[str] = (), link_meta: dict[str, Any] | None = None, **kw: Any):  # type: ignore[assignment]
        super().__init__(**kw)
        self.urls = list(urls)
        self.link_meta = link_meta or {}
        self.seen: dict[str, Any] = {}

    async def start(self) -> Any:
        for url in self.urls:
            yield Request(url, self.parse, dont_filter=True)

    def parse(self, response: Any) -> Any:
        self.seen[response.url] = response.meta.get("robots_meta", "absent")
        yield {"url": response.url}
        if isinstance(response, TextResponse):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse, meta=dict(self.link_meta))


class AsyncMetaSpider(MetaSpider):
    name = "meta-async"

    async def parse(self, response: Any) -> Any:
        for output in MetaSpider.parse(self, response):
            yield output


async def meta_crawl(
    urls: list[str], settings: dict[str, Any] | None = None, spider: type = MetaSpider, **kw: Any
) -> tuple[MetaSpider, list[str], dict[str, Any]]:
    """A real crawl: the spider, the URLs of the scraped items, the final stats."""
    merged = {
        "USER_AGENT": AGENT,
        "SPIDER_MIDDLEWARES": {MW: 950},  # by hand; ADDON_ONLY leaves it to the add-on
        **BASE_SETTINGS,
        **(settings or {}),
    }
    crawler = get_crawler(spider, {k: v for k, v in merged.items() if v is not UNSET})
    items: list[str] = []

    def scraped(item: Any) -> None:  # a named function: signals hold weak references
        items.append(item["url"])

    crawler.signals.connect(scraped, signal=signals.item_scraped)
    await _compat.crawl(crawler, urls=urls, **kw)
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    assert stats.get("log_count/ERROR", 0) == 0, "the crawl logged errors"
    assert isinstance(crawler.spider, MetaSpider)
    return crawler.spider, items, stats


def page(head: str) -> Any:
    return text(html_page(head, ["/next"]), content_type=b"text/html")


def headers(*lines: tuple[bytes, bytes], content_type: bytes = b"text/html") -> Any:
    return page_with_headers(html_page("", ["/next"]), list(lines), content_type)


XRT = b"X-Robots-Tag"
PAST = "Friday, 25-Jun-10 15:00:00 PST"  # RFC 850
FUTURE = "2999-06-25T15:00:00Z"  # ISO 8601
NOFOLLOW = {"nofollow"}
NOINDEX = {"noindex"}
BOTH = {"noindex", "nofollow"}

# (route of /page, links followed, item kept, robots_meta)
FORMS = [
    param(page(""), True, True, set(), id="ch9-no-directives"),
    param(page('<meta name="robots" content="nofollow">'), False, True, NOFOLLOW, id="ch9-meta"),
    param(page('<meta name="robots" content="noindex">'), True, False, NOINDEX, id="ch9-noindex"),
    param(page('<meta name="examplebot" content="nofollow">'), False, True, NOFOLLOW, id="ch9-tok"),
    param(
        page('<meta name="otherbot" content="noindex, nofollow">'), True, True, set(), id="other"
    ),
    param(
        page('<meta name="robots" content="none">'), False, False, {"none", *BOTH}, id="ch9-none"
    ),
    param(page('<meta name="robots" content="all">'), True, True, {"all"}, id="ch9-all"),
    param(
        page('<meta name="r&#111;bots" content="nofollow">'),
        False,
        True,
        NOFOLLOW,
        id="ch9-meta-character-reference",
    ),
    param(
        page('<meta name="examplebo&#x74;" content="&#110;oindex">'),
        True,
        False,
        NOINDEX,
        id="ch9-tok-character-references",
    ),
    param(
        page('<META NAME="ROBOTS" CONTENT="NOINDEX,NOFOLLOW">'), False, False, BOTH, id="ch9-upper"
    ),
    param(
        page(
            '<meta name="robots" content="index, follow"><meta name="ExampleBot" content="noindex">'
        ),
        True,
        False,
        {"follow", "noindex"},
        id="ch9-several-tags-most-restrictive-wins",
    ),
    param(
        page('<meta name="robots" content="max-snippet:50, NoAI">'),
        True,
        True,
        {"max-snippet:50", "noai"},
        id="unknown-kept-lower-case",
    ),
    param(
        text(
            html_page("", ["/next"], '<meta name="robots" content="nofollow">'), 200, b"text/html"
        ),
        True,
        True,
        set(),
        id="meta-outside-head-ignored",
    ),
    param(headers((XRT, b"nofollow")), False, True, NOFOLLOW, id="x-robots-tag"),
    param(
        headers((XRT, b"ExampleBot: noindex"), (XRT, b"otherbot: nofollow")),
        True,
        False,
        NOINDEX,
        id="x-robots-tag-addressed",
    ),
    param(
        headers((XRT, b"noarchive"), (XRT, b"nofollow, noindex")),
        False,
        False,
        {"noarchive", *BOTH},
        id="x-robots-tag-several-lines",
    ),
    param(
        headers((XRT, f"unavailable_after: {PAST}".encode())),
        True,
        False,
        {"unavailable_after: " + PAST.lower(), "noindex"},
        id="unavailable-after-past",
    ),
    param(
        headers((XRT, f"unavailable_after: {FUTURE}".encode())),
        True,
        True,
        {"unavailable_after: " + FUTURE.lower()},
        id="unavailable-after-future",
    ),
    param(
        page_with_headers(b"%PDF-1.4\n\x00\x01", [(XRT, b"noindex")], b"application/pdf"),
        False,  # no links in a PDF
        False,
        NOINDEX,
        id="x-robots-tag-on-pdf",
    ),
    param(
        page_with_headers(
            b"%PDF-1.4\n",
            [(XRT, b"otherbot: noarchive"), (XRT, b"EXAMPLEBOT: noindex")],
            b"application/pdf",
        ),
        False,
        False,
        NOINDEX,
        id="x-robots-tag-addressed-on-pdf",
    ),
    param(
        page_with_headers(
            b"%PDF-1.4 <meta name=robots content=noindex>", [], content_type=b"application/pdf"
        ),
        False,
        True,
        set(),
        id="pdf-body-not-read-as-html",
    ),
    param(
        page_with_headers(
            b"\x80\xff<meta name=robots content='nofollow,\x80\xff'><a href=/next>\x80</head>"
        ),
        False,
        True,
        {"nofollow", "\ufffd\ufffd"},
        id="undecodable-bytes",
    ),
]


@pytest.mark.parametrize(("route", "followed", "kept", "directives"), FORMS)
@pytest.mark.parametrize("spider", [MetaSpider, AsyncMetaSpider], ids=["sync", "async"])
@deferred_f_from_coro_f
async def test_page_directives(sites, route, followed, kept, directives, spider) -> None:
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": route}, default=PLAIN)
    seen, items, stats = await meta_crawl([site.url("/page")], spider=spider)
    assert seen.seen[site.url("/page")] == frozenset(directives)
    assert site.count("/page") == 1
    assert site.count("/next") == (1 if followed else 0)
    assert (site.url("/page") in items) is kept
    assert stats.get("robotsmeta/nofollow", 0) == (1 if "nofollow" in directives else 0)
    assert stats.get("robotsmeta/pages/nofollow", 0) == (1 if "nofollow" in directives else 0)
    assert stats.get("robotsmeta/noindex", 0) == (0 if kept else 1)
    assert stats.get("robotsmeta/noarchive", 0) == (1 if "noarchive" in directives else 0)


@deferred_f_from_coro_f
async def test_ch9_nofollow_page_is_fetched_its_links_are_not(sites, caplog) -> None:
    head = '<meta name="robots" content="nofollow">'
    route = text(html_page(head, ["/a", "/b", "/c"]), content_type=b"text/html")
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": route}, default=PLAIN)
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.meta"):
        _, items, stats = await meta_crawl([site.url("/page")])
    assert site.hits == ["/robots.txt", "/page"]
    assert items == [site.url("/page")]
    assert stats["robotsmeta/nofollow"] == 3  # requests dropped
    assert stats["robotsmeta/pages/nofollow"] == 1
    messages = [r.getMessage() for r in caplog.records if "Not following" in r.getMessage()]
    assert len(messages) == 3
    assert f"<GET {site.url('/a')}> from {site.url('/page')}: nofollow" in messages[0]
    assert '<meta name="robots">' in messages[0]


@deferred_f_from_coro_f
async def test_ch9_nofollow_log_names_the_header(sites, caplog) -> None:
    site = sites(
        routes={"/robots.txt": ALLOW_ALL, "/page": headers((XRT, b"examplebot: nofollow"))},
        default=PLAIN,
    )
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.meta"):
        await meta_crawl([site.url("/page")])
    message = next(r.getMessage() for r in caplog.records if "Not following" in r.getMessage())
    assert "nofollow (X-Robots-Tag: examplebot)" in message


@deferred_f_from_coro_f
async def test_nofollow_lets_dont_obey_robotstxt_requests_through(sites) -> None:
    site = sites(
        routes={"/robots.txt": ALLOW_ALL, "/page": page('<meta name="robots" content="none">')},
        default=PLAIN,
    )
    _, items, stats = await meta_crawl([site.url("/page")], link_meta={"dont_obey_robotstxt": True})
    assert site.count("/next") == 1
    assert items == [site.url("/next")]  # the noindex page's item is still dropped
    assert "robotsmeta/nofollow" not in stats
    assert stats["robotsmeta/noindex"] == 1


@deferred_f_from_coro_f
async def test_noindex_keep_keeps_items_and_exposes_the_directive(sites) -> None:
    site = sites(
        routes={"/robots.txt": ALLOW_ALL, "/page": page('<meta name="robots" content="noindex">')},
        default=PLAIN,
    )
    spider, items, stats = await meta_crawl([site.url("/page")], {"ROBOTS_META_NOINDEX": "keep"})
    assert sorted(items) == [site.url("/next"), site.url("/page")]
    assert spider.seen[site.url("/page")] == frozenset({"noindex"})
    assert "robotsmeta/noindex" not in stats
    assert stats["robotsmeta/pages/noindex"] == 1


@pytest.mark.parametrize(
    ("settings", "warned"),
    [
        param({"ROBOTS_META_OBEY": False}, False, id="ROBOTS_META_OBEY-false"),
        param({"ROBOTSTXT_OBEY": False}, True, id="default-follows-ROBOTSTXT_OBEY"),
    ],
)
@deferred_f_from_coro_f
async def test_off_obeys_nothing(sites, caplog, settings, warned) -> None:
    """Off, the middleware reads nothing. Turned off by ``ROBOTS_META_OBEY`` itself,
    one INFO line says so; off only because ``ROBOTSTXT_OBEY`` is, Scrapy's
    WARNING "Disabled ..." names why."""
    site = sites(
        routes={"/robots.txt": ALLOW_ALL, "/page": page('<meta name="robots" content="none">')},
        default=PLAIN,
    )
    with caplog.at_level("INFO"):
        spider, items, stats = await meta_crawl([site.url("/page")], settings)
    disabled = [
        r
        for r in caplog.records
        if "Disabled scrapy_rfc9309.RobotsMetaMiddleware" in r.getMessage()
    ]
    assert bool(disabled) is warned
    told = [
        r for r in caplog.records if "Page-level robots directives are not read" in r.getMessage()
    ]
    assert bool(told) is not warned
    assert site.count("/next") == 1
    assert sorted(items) == [site.url("/next"), site.url("/page")]
    assert spider.seen[site.url("/page")] == "absent"
    assert not any(key.startswith("robotsmeta/") for key in stats)


@deferred_f_from_coro_f
async def test_meta_obey_on_without_robotstxt(sites) -> None:
    site = sites(default=PLAIN, routes={"/page": page('<meta name="robots" content="nofollow">')})
    settings = {"ROBOTSTXT_OBEY": False, "ROBOTS_META_OBEY": True}
    _, _, stats = await meta_crawl([site.url("/page")], settings)
    assert site.hits == ["/page"]  # no robots.txt, page-level directives obeyed
    assert stats["robotsmeta/nofollow"] == 1


@deferred_f_from_coro_f
async def test_addon_enables_the_spider_middleware_and_the_token_setting(sites) -> None:
    head = '<meta name="examplebot" content="noindex"><meta name="custombot" content="nofollow">'
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": page(head)}, default=PLAIN)
    spider, items, stats = await meta_crawl(
        [site.url("/page")], {**ADDON_ONLY, "ROBOTSTXT_USER_AGENT": "CustomBot"}
    )
    assert spider.seen[site.url("/page")] == frozenset({"nofollow"})  # obeys as CustomBot
    assert site.count("/next") == 0
    assert items == [site.url("/page")]
    assert stats["robotsmeta/nofollow"] == 1


@deferred_f_from_coro_f
async def test_close_summary_adds_page_level_counts(sites, caplog) -> None:
    site = sites(
        routes={"/robots.txt": ALLOW_ALL, "/page": page('<meta name="robots" content="none">')},
        default=PLAIN,
    )
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await meta_crawl([site.url("/page")], ADDON_ONLY)
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    assert summary.endswith(
        "Page-level directives: 1 page nofollow (1 request not followed), "
        "1 page noindex (1 item dropped)"
    )  # no "0 pages noarchive": a directive no page had is left out
    assert "noarchive" not in summary and "never stored" not in summary
    assert "; 1 request allowed, 0 dropped" in summary


@deferred_f_from_coro_f
async def test_close_summary_of_page_level_directives_without_robotstxt(sites, caplog) -> None:
    site = sites(default=PLAIN, routes={"/page": page('<meta name="robots" content="nofollow">')})
    settings = {
        "ROBOTSTXT_OBEY": False,
        "ROBOTS_META_OBEY": True,
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 100},
    }
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await meta_crawl([site.url("/page")], settings)
    messages = [r.getMessage() for r in caplog.records]
    assert any("Page-level directives: 1 page nofollow" in m for m in messages)
    assert not any("robots.txt summary" in m for m in messages)


@deferred_f_from_coro_f
async def test_ch9_noarchive_without_our_cache_policy_is_warned_about(sites, tmp_path, caplog):
    site = sites(default=PLAIN, routes={"/page": page('<meta name="robots" content="noarchive">')})
    settings = {
        "ROBOTSTXT_OBEY": False,
        "ROBOTS_META_OBEY": True,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 100},
    }
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await meta_crawl([site.url("/page")], settings)
    assert "does not honour noarchive" in caplog.text
    summary = next(m.getMessage() for m in caplog.records if "Page-level" in m.getMessage())
    assert summary.endswith("Page-level directives: 1 page noarchive")
    assert "nofollow" not in summary and "noindex" not in summary  # omitted: none


@pytest.mark.parametrize("storage", ["Filesystem", "Dbm"])
@deferred_f_from_coro_f
async def test_ch9_noarchive_is_not_stored_by_the_http_cache(sites, tmp_path, storage) -> None:
    links = ["/kept", "/header-noarchive"]
    site = sites(
        routes={
            "/robots.txt": ALLOW_ALL,
            "/page": text(
                html_page('<meta name="robots" content="NOARCHIVE">', links), 200, b"text/html"
            ),
            "/header-noarchive": page_with_headers(b"<p>x</p>", [(XRT, b"examplebot: noarchive")]),
            "/kept": PLAIN,
        }
    )
    settings = {
        **ADDON_ONLY,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "HTTPCACHE_STORAGE": f"scrapy.extensions.httpcache.{storage}CacheStorage",
    }
    _, first_items, first = await meta_crawl([site.url("/page")], settings)
    assert first["robotsmeta/noarchive"] == 2
    site.hits.clear()
    _, items, second = await meta_crawl([site.url("/page")], settings)
    # robots.txt is never served from the cache; the two noarchive pages are fetched again
    assert sorted(site.hits) == ["/header-noarchive", "/page", "/robots.txt"]
    assert second["httpcache/hit"] == 1  # /kept
    assert second["robotsmeta/noarchive"] == 2
    assert sorted(items) == sorted(first_items)  # noarchive does not drop anything


@deferred_f_from_coro_f
async def test_cache_policy_wraps_the_configured_policy(sites, tmp_path) -> None:
    # RFC2616Policy does not store "Cache-Control: no-store"; the wrapper keeps that.
    site = sites(
        routes={
            "/robots.txt": ALLOW_ALL,
            "/page": page_with_headers(
                html_page("", ["/no-store"]), [(b"Cache-Control", b"max-age=60")]
            ),
            "/no-store": page_with_headers(b"<p>x</p>", [(b"Cache-Control", b"no-store")]),
        }
    )
    settings = {
        **ADDON_ONLY,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "HTTPCACHE_POLICY": "scrapy.extensions.httpcache.RFC2616Policy",
    }
    await meta_crawl([site.url("/page")], settings)
    site.hits.clear()
    await meta_crawl([site.url("/page")], settings)
    assert site.hits == ["/robots.txt", "/no-store"]


@pytest.mark.parametrize(
    ("name", "value"),
    [("ROBOTS_META_NOINDEX", "delete"), ("ROBOTS_META_OBEY", "maybe")],
)
@deferred_f_from_coro_f
async def test_bad_settings_stop_the_crawl_naming_the_setting(sites, name, value) -> None:
    site = sites(default=PLAIN)
    merged = {**BASE_SETTINGS, **ADDON_ONLY, name: value}
    with pytest.raises(SettingError, match=name):
        crawler = get_crawler(MetaSpider, {k: v for k, v in merged.items() if v is not UNSET})
        await _compat.crawl(crawler, urls=[site.url("/page")])
    assert site.hits == []


@deferred_f_from_coro_f
async def test_ch9_noarchive_in_a_gzip_page_is_not_cached(sites, tmp_path, caplog) -> None:
    # The HTTP cache sees the body before Scrapy decompresses it.
    body = gzip.compress(html_page('<meta name="robots" content="noarchive">', ["/kept"]))
    route = page_with_headers(body, [(b"Content-Encoding", b"gzip")])
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": route, "/kept": PLAIN})
    settings = {**ADDON_ONLY, "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path)}
    with caplog.at_level(logging.DEBUG):
        await meta_crawl([site.url("/page")], settings)
    assert any("['noarchive']" in r.getMessage() for r in caplog.records)  # the Crawled line
    assert any(
        f"Not storing {site.url('/page')} in the HTTP cache: noarchive" in r.getMessage()
        for r in caplog.records
    )
    site.hits.clear()
    _, items, stats = await meta_crawl([site.url("/page")], settings)
    assert sorted(site.hits) == ["/page", "/robots.txt"]
    assert sorted(items) == [site.url("/kept"), site.url("/page")]
    assert stats["robotsmeta/noarchive"] == 1


@pytest.mark.parametrize(
    "route",
    [
        param(page('<meta name="robots" content="noarchive">'), id="meta"),
        param(headers((XRT, b"examplebot: noarchive")), id="x-robots-tag"),
        param(
            page_with_headers(
                gzip.compress(html_page('<meta name="robots" content="noarchive">', ["/next"])),
                [(b"Content-Encoding", b"gzip")],
            ),
            id="meta-gzip",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_ch9_noarchive_page_stored_before_is_not_served_from_the_cache(
    sites, tmp_path, caplog, route
) -> None:
    """HTTP: The Definitive Guide ch. 9 (NOARCHIVE): a copy stored by an earlier run
    without the add-on is never served once the add-on is on; the page is downloaded
    again (and not stored), while other pages still come from the cache."""
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/noarchive": route}, default=PLAIN)
    cache = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "cache")}
    first_run = {**cache, "ROBOTS_META_OBEY": False, "SPIDER_MIDDLEWARES": {}}
    _, _, first = await meta_crawl([site.url("/noarchive")], first_run)
    assert first["httpcache/store"] == 2  # /noarchive and /next, without the add-on
    site.hits.clear()
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309"):
        spider, items, second = await meta_crawl([site.url("/noarchive")], {**ADDON_ONLY, **cache})
    assert sorted(site.hits) == ["/noarchive", "/robots.txt"]  # /next from the cache
    assert second["httpcache/hit"] == 1
    assert "httpcache/store" not in second  # the new download is not stored either
    assert spider.seen[site.url("/noarchive")] == frozenset({"noarchive"})
    assert sorted(items) == [site.url("/next"), site.url("/noarchive")]
    assert "Not serving " + site.url("/noarchive") + " from the HTTP cache" in caplog.text
    summary = next(r.getMessage() for r in caplog.records if "Page-level" in r.getMessage())
    assert summary.endswith(
        "Page-level directives: 1 page noarchive (never stored in or served from the HTTP cache)"
    )
    site.hits.clear()
    await meta_crawl([site.url("/noarchive")], {**ADDON_ONLY, **cache})
    assert sorted(site.hits) == ["/noarchive", "/robots.txt"]  # never served, run after run


@deferred_f_from_coro_f
async def test_ch9_noindex_drop_is_logged(sites, caplog) -> None:
    site = sites(
        routes={"/robots.txt": ALLOW_ALL, "/page": headers((XRT, b"noindex"))}, default=PLAIN
    )
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.meta"):
        await meta_crawl([site.url("/page")])
    assert any(
        f"Dropped an item of {site.url('/page')}: noindex (X-Robots-Tag;" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.parametrize(
    ("values", "obey", "noindex"),
    [
        param({}, False, "drop", id="defaults-robotstxt-off"),
        param({"ROBOTSTXT_OBEY": True}, True, "drop", id="default-follows-robotstxt"),
        param({"ROBOTSTXT_OBEY": True, "ROBOTS_META_OBEY": False}, False, "drop", id="off"),
        param({"ROBOTS_META_OBEY": "1", "ROBOTS_META_NOINDEX": " KEEP "}, True, "keep", id="on"),
    ],
)
def test_settings_are_read_in_one_place(values: dict[str, Any], obey: bool, noindex: str) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    read = RobotsTxtSettings.from_settings(Settings(values))
    assert (read.meta_obey, read.meta_noindex) == (obey, noindex)


def test_sync_output_path_drops_like_the_async_one() -> None:
    # Scrapy uses process_spider_output_async when the chain is asynchronous and
    # process_spider_output otherwise; both drop the same outputs.
    from scrapy.http import HtmlResponse

    from scrapy_rfc9309 import RobotsMetaMiddleware

    crawler = get_crawler(MetaSpider, {"ROBOTSTXT_OBEY": True, "USER_AGENT": AGENT})
    try:
        crawler.stats.open_spider()
    except TypeError:  # Scrapy < 2.14 wants the spider
        crawler.stats.open_spider(MetaSpider())
    middleware = RobotsMetaMiddleware.from_crawler(crawler)
    request = Request("http://x.test/page")
    response = HtmlResponse(
        request.url,
        body=b'<head><meta name="robots" content="none">',
        headers={"X-Robots-Tag": "examplebot: noarchive"},
        request=request,
    )
    middleware.process_spider_input(response)
    assert response.meta["robots_meta"] == {"none", "noindex", "nofollow", "noarchive"}
    kept_request = Request("http://x.test/b", meta={"dont_obey_robotstxt": True})
    outputs = [Request("http://x.test/a"), kept_request, {"item": 1}]
    assert list(middleware.process_spider_output(response, outputs)) == [kept_request]
    other = HtmlResponse(
        "http://x.test/plain", body=b"<p>x</p>", request=Request("http://x.test/p")
    )
    middleware.process_spider_input(other)
    assert list(middleware.process_spider_output(other, outputs)) == outputs
    assert crawler.stats.get_value("robotsmeta/nofollow") == 1


# -- the limits of the reading: content past them is not read, and the user is told -------

ROBOTS_NOFOLLOW = '<meta name="robots" content="nofollow">'


def _long_head_page() -> bytes:
    # The head goes on past MAX_HEAD_BYTES; its robots META tag comes after.
    filler = "<link rel=preload href=/x.css>" * (MAX_HEAD_BYTES // 30 + 10)
    return html_page(filler + ROBOTS_NOFOLLOW, ["/next"])


def _many_places_page() -> bytes:
    # MAX_META_TAGS places where "robots" occurs come before the robots META tag.
    names = "".join(f'<meta name="description" content="robots {i}">' for i in range(300))
    return html_page(names + ROBOTS_NOFOLLOW, ["/next"])


LIMITS = [
    param(text(_long_head_page(), content_type=b"text/html"), "MAX_HEAD_BYTES", id="head-bytes"),
    param(
        page('<meta name="robots" data-x="' + "x" * MAX_TAG_BYTES + '" content="nofollow">'),
        "MAX_TAG_BYTES",
        id="tag-bytes",
    ),
    param(
        page('<meta name="robots" ' + "data-x " * MAX_TAG_ATTRIBUTES + 'content="nofollow">'),
        "MAX_TAG_ATTRIBUTES",
        id="tag-attributes",
    ),
    param(text(_many_places_page(), content_type=b"text/html"), "MAX_META_TAGS", id="meta-tags"),
    param(
        headers(*[(XRT, b"max-snippet:1")] * MAX_HEADER_VALUES, (XRT, b"nofollow")),
        "MAX_HEADER_VALUES",
        id="header-values",
    ),
    param(
        headers((XRT, b"max-snippet:1, " + b" " * MAX_HEADER_BYTES + b", nofollow")),
        "MAX_HEADER_BYTES",
        id="header-bytes",
    ),
]


@pytest.mark.parametrize(("route", "limit"), LIMITS)
@deferred_f_from_coro_f
async def test_a_directive_past_a_limit_is_not_obeyed_and_the_user_is_told(
    sites, caplog, route, limit
) -> None:
    """The reading is bounded (hostile pages); a nofollow past the bound is not seen,
    counted in ``robotsmeta/truncated`` and logged naming the page and the limit
    (INFO for the first page of each limit, then DEBUG)."""
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": route, "/page2": route}, default=PLAIN)
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.meta"):
        spider, _, stats = await meta_crawl([site.url("/page"), site.url("/page2")])
    assert site.count("/page") == site.count("/page2") == 1
    assert site.count("/next") == 1  # the links were followed (once: dupefilter)
    assert "nofollow" not in spider.seen[site.url("/page")]
    assert stats["robotsmeta/truncated"] == 2
    assert "robotsmeta/nofollow" not in stats
    told = [r for r in caplog.records if "only in part" in r.getMessage()]
    assert len(told) == 2
    assert sorted(r.levelno for r in told) == [logging.DEBUG, logging.INFO]
    for record in told:
        assert limit in record.getMessage()
    assert {site.url("/page"), site.url("/page2")} == {
        url
        for r in told
        for url in (site.url("/page"), site.url("/page2"))
        if url in r.getMessage()
    }


@deferred_f_from_coro_f
async def test_a_page_within_the_limits_is_not_reported_as_truncated(sites, caplog) -> None:
    # 30 KB page, a head of a few KiB: nothing is cut.
    head = "<script>" + "var x = '<meta>';" * 2000 + "</script>" + ROBOTS_NOFOLLOW
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": page(head)}, default=PLAIN)
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.meta"):
        _, _, stats = await meta_crawl([site.url("/page")])
    assert stats["robotsmeta/nofollow"] == 1
    assert "robotsmeta/truncated" not in stats
    assert "only in part" not in caplog.text


@pytest.mark.parametrize(
    "route",
    [
        param(
            page('<meta name="robots" content="noindex; nofollow">'), id="lenient-meta-semicolon"
        ),
        param(headers((XRT, b"examplebot: noindex; nofollow")), id="lenient-meta-semicolon-header"),
        param(page('<meta name="robots" content="noindex nofollow">'), id="lenient-meta-space"),
        param(headers((XRT, b"examplebot: noindex nofollow")), id="lenient-meta-space-header"),
    ],
)
@deferred_f_from_coro_f
async def test_semicolon_separated_directives_are_obeyed_and_told(
    sites, caplog, route, request
) -> None:
    """LENIENT(meta-semicolon), LENIENT(meta-space): ``noindex; nofollow`` and
    ``noindex nofollow`` read as a list (the syntax is comma-separated); said once per
    crawl at INFO, then at DEBUG."""
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": route, "/page2": route}, default=PLAIN)
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.meta"):
        spider, items, stats = await meta_crawl([site.url("/page"), site.url("/page2")])
    assert spider.seen[site.url("/page")] == frozenset({"noindex", "nofollow"})
    assert site.count("/next") == 0
    assert items == []
    assert stats["robotsmeta/nofollow"] == 2
    told = [r for r in caplog.records if "leniently" in r.getMessage()]
    assert sorted(r.levelno for r in told) == [logging.DEBUG, logging.INFO]
    assert ("meta-space" if "space" in request.node.callspec.id else "meta-semicolon") in told[
        0
    ].getMessage()


class SelectorSpider(MetaSpider):
    """Records whether the response reached the callback with a selector built."""

    name = "meta-selector"

    def parse(self, response: Any) -> Any:
        self.seen["selector built before the callback"] = response._cached_selector is not None
        yield from super().parse(response)


@deferred_f_from_coro_f
async def test_reading_does_not_build_the_selector(sites) -> None:
    """The page is parsed once, by the spider's own ``response.css``: reading the
    directives builds no selector (Scrapy caches one per response)."""
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/page": page(ROBOTS_NOFOLLOW)}, default=PLAIN)
    spider, _, stats = await meta_crawl([site.url("/page")], spider=SelectorSpider)
    assert spider.seen[site.url("/page")] == frozenset({"nofollow"})
    assert spider.seen["selector built before the callback"] is False
    assert stats["robotsmeta/nofollow"] == 1

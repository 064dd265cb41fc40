"""Start-up: settings validated in one place, the agent token, the conflict
with Scrapy's built-in middleware, and the robots_parsed signal."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

import scrapy_rfc9309
from scrapy_rfc9309 import RFC9309RobotParser
from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

from .conftest import BASE_SETTINGS, BUILTIN, RecordingSpider, crawl
from .server import status, text

PAGE = text("<html>page</html>", content_type=b"text/html")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROBOTSTXT_MAX_SIZE", -1),
        ("ROBOTSTXT_MAX_SIZE", "big"),
        ("ROBOTSTXT_CACHE_TTL", -5),
        ("ROBOTSTXT_UNREACHABLE_TTL", "soon"),
        ("ROBOTSTXT_CACHE_MAX_SITES", 0),
        ("ROBOTSTXT_CRAWL_DELAY_MAX", float("nan")),
        # at most a day, as ROBOTSTXT_CLUSTER_DELAY: the cluster clock keeps it in Redis
        ("ROBOTSTXT_CRAWL_DELAY_MAX", float("inf")),
        ("ROBOTSTXT_CRAWL_DELAY_MAX", 1e308),
        ("ROBOTSTXT_CRAWL_DELAY_MAX", 86_401),
        ("ROBOTSTXT_USER_AGENT", "/1.0"),
        ("ROBOTSTXT_USER_AGENT", "(+https://example.com/bot)"),
        ("ROBOTSTXT_RETRY_AFTER_MAX", -1),
        ("ROBOTSTXT_AUTH_DISALLOW", "maybe"),
        ("ROBOTSTXT_CRAWL_DELAY", "maybe"),
        ("ROBOTSTXT_CACHE_MIN_TTL", -1),
        # no product name in it, or not a string (DESIGN: stops the crawl)
        ("ROBOTSTXT_USER_AGENT", "   "),
        ("ROBOTSTXT_USER_AGENT", 42),
        # a whole number is not cut: 2.5 sites is no size
        ("ROBOTSTXT_CACHE_MAX_SITES", 2.5),
        ("ROBOTSTXT_MAX_SIZE", 600_000.5),
        ("ROBOTSTXT_MAX_SIZE", True),
        ("ROBOTSTXT_CACHE_MAX_SITES", -5),
    ],
)
def test_invalid_settings_name_the_setting(name: str, value: Any) -> None:
    with pytest.raises(SettingError, match=name) as error:
        RobotsTxtSettings.from_settings(Settings({name: value}))
    assert repr(value) in str(error.value)  # the value is named too


@pytest.mark.parametrize("value", ["some", -2, 0, 2.5, True])
def test_the_store_s_settings_are_checked_without_a_store(value: Any) -> None:
    """A bad ROBOTSTXT_STORE_ARCHIVE stops the crawl whether or not a store
    is named, not only once ``ROBOTSTXT_STORE_URI`` is added."""
    from scrapy_rfc9309.components.settings._store_settings import StoreSettings

    with pytest.raises(SettingError, match="ROBOTSTXT_STORE_ARCHIVE"):
        StoreSettings.from_settings(Settings({"ROBOTSTXT_STORE_ARCHIVE": value}))


@pytest.mark.parametrize(
    ("name", "value", "read"),
    [
        ("ROBOTSTXT_MAX_SIZE", "600000", 600_000),
        ("ROBOTSTXT_MAX_SIZE", "600000.0", 600_000),  # as -s ROBOTSTXT_MAX_SIZE=600000.0 gives it
        ("ROBOTSTXT_MAX_SIZE", 600_000.0, 600_000),
        ("ROBOTSTXT_USER_AGENT", "", None),
        ("ROBOTSTXT_USER_AGENT", None, None),
    ],
)
def test_valid_settings_in_their_other_spellings(name: str, value: Any, read: Any) -> None:
    """A whole number written as a string or a float is that number; an
    empty ROBOTSTXT_USER_AGENT is unset, as Scrapy's own middleware reads it."""
    settings = RobotsTxtSettings.from_settings(Settings({name: value}))
    attribute = "max_size" if name == "ROBOTSTXT_MAX_SIZE" else "user_agent_token"
    assert getattr(settings, attribute) == read


@deferred_f_from_coro_f
async def test_invalid_setting_stops_the_crawl_at_start(sites) -> None:
    site = sites(default=PAGE)
    with pytest.raises(SettingError, match="ROBOTSTXT_MAX_SIZE"):
        await crawl([site.url("/")], {"ROBOTSTXT_MAX_SIZE": -1})
    assert site.hits == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROBOTSTXT_OBEY", ["yes"]),
        ("ROBOTSTXT_OBEY", {"on": True}),
        ("ROBOTSTXT_AUTH_DISALLOW", [1]),
        ("ROBOTSTXT_CRAWL_DELAY", {}),
        ("ROBOTS_META_OBEY", ["no"]),
        ("ROBOTSTXT_MAX_SIZE", 0),
        ("ROBOTSTXT_MAX_SIZE", 1023),
    ],
)
@deferred_f_from_coro_f
async def test_unusable_setting_stops_the_crawl_at_start_naming_it(
    sites, name: str, value: Any
) -> None:
    """A list or dict for a boolean setting, or a ROBOTSTXT_MAX_SIZE that would
    ignore every robots.txt (0; RFC 9309 2.5 asks for 500 KiB), stop the
    crawl at start-up naming the setting and the value, nothing fetched."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")}, default=PAGE)
    with pytest.raises(SettingError, match=name) as error:
        await crawl([site.url("/private")], {name: value})
    assert repr(value) in str(error.value)
    assert site.hits == []


@pytest.mark.parametrize("cache", [True, False], ids=["cache_on", "cache_off"])
@deferred_f_from_coro_f
async def test_unloadable_meta_httpcache_policy_stops_the_crawl_naming_it(
    sites, tmp_path, cache: bool
) -> None:
    """A ROBOTS_META_HTTPCACHE_POLICY that cannot be loaded stops the crawl at
    start-up naming it, whether Scrapy's HTTP cache is on or off."""
    site = sites(default=PAGE)
    settings = {
        "HTTPCACHE_ENABLED": cache,
        "HTTPCACHE_DIR": str(tmp_path),
        "HTTPCACHE_POLICY": "scrapy_rfc9309.RobotsMetaCachePolicy",
        "ROBOTS_META_HTTPCACHE_POLICY": "no",
    }
    with pytest.raises(SettingError, match="ROBOTS_META_HTTPCACHE_POLICY") as error:
        await crawl([site.url("/")], settings)
    assert "'no'" in str(error.value)
    assert site.hits == []


@pytest.mark.parametrize("name", ["ROBOTSTXT_CACHE_TTL", "ROBOTSTXT_UNREACHABLE_TTL"])
@deferred_f_from_coro_f
async def test_a_ttl_below_one_second_is_raised_to_it_with_a_warning(
    sites, caplog, name: str
) -> None:
    """A robots.txt kept 0 s would be downloaded for every request (RFC 9309
    2.4 caching): the floor is 1 s, said once at start-up."""
    robots = text("User-agent: *\nDisallow: /x\n") if "CACHE" in name else status(503)
    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    followups = {site.url("/a"): [site.url("/b"), site.url("/c")]}
    if "UNREACHABLE" in name:
        other = sites(default=PAGE)
        followups = {other.url("/a"): [site.url("/b"), site.url("/c")]}
        urls = [site.url("/first"), other.url("/a")]
    else:
        urls = [site.url("/a")]
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        await crawl(urls, {name: 0}, followups=followups)
    assert site.count("/robots.txt") == 1
    warnings = [r.getMessage() for r in caplog.records if r.getMessage().startswith(name)]
    assert warnings == [
        f"{name} is 0 s: raised to 1 s (a robots.txt kept less would be "
        "downloaded again for every request)"
    ]


@deferred_f_from_coro_f
async def test_a_cache_ttl_over_24_hours_warns_naming_rfc_9309_2_4(sites, caplog) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, _ = await crawl([site.url("/a"), site.url("/x")], {"ROBOTSTXT_CACHE_TTL": 172_800})
    assert spider.fetched == [site.url("/a")]
    [warning] = [r for r in caplog.records if "ROBOTSTXT_CACHE_TTL" in r.getMessage()]
    assert warning.levelno == logging.WARNING
    assert "RFC 9309 2.4" in warning.getMessage()


@deferred_f_from_coro_f
async def test_builtin_middleware_enabled_too_is_refused(sites) -> None:
    site = sites(default=PAGE)
    both = {BUILTIN: 100, "scrapy_rfc9309.RobotsTxtMiddleware": 101}
    with pytest.raises(SettingError, match="both are enabled") as error:
        await crawl([site.url("/")], {"DOWNLOADER_MIDDLEWARES": both})
    assert "scrapy_rfc9309.Addon" in str(error.value)
    assert site.hits == []


@deferred_f_from_coro_f
async def test_obey_off_disables_the_middleware(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")}, default=PAGE)
    spider, stats = await crawl([site.url("/a")], {"ROBOTSTXT_OBEY": False})
    assert spider.fetched == [site.url("/a")]
    assert site.hits == ["/a"]
    assert not [key for key in stats if key.startswith("robotstxt/")]


def test_small_max_size_warns_that_it_departs_from_the_rfc(caplog) -> None:
    from scrapy_rfc9309 import RobotsTxtMiddleware

    crawler = get_crawler(RecordingSpider, {**BASE_SETTINGS, "ROBOTSTXT_MAX_SIZE": 10_000})
    with caplog.at_level(logging.WARNING):
        RobotsTxtMiddleware(crawler)
    assert "RFC 9309 2.5" in caplog.text


@pytest.mark.parametrize(
    ("settings", "header", "token"),
    [
        ({}, "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://example.com/bot)", "ExampleBot"),
        ({}, "Scrapy/2.19 (+https://scrapy.org)", "Scrapy"),
        ({"ROBOTSTXT_USER_AGENT": "OtherBot"}, "Scrapy/2.19 (+https://scrapy.org)", "OtherBot"),
    ],
)
@deferred_f_from_coro_f
async def test_2_2_1_agent_token_from_setting_or_user_agent(
    sites, settings: dict[str, Any], header: str, token: str
) -> None:
    robots = f"User-agent: *\nDisallow: /\n\nUser-agent: {token}\nDisallow: /private\n"
    site = sites(routes={"/robots.txt": text(robots)}, default=PAGE)
    spider, _ = await crawl(
        [site.url("/public"), site.url("/private")], {**settings, "USER_AGENT": header}
    )
    assert spider.fetched == [site.url("/public")]


def test_start_up_log_names_the_token_and_its_source(caplog) -> None:
    from scrapy_rfc9309 import RobotsTxtMiddleware

    agent = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://example.com/bot)"
    crawler = get_crawler(RecordingSpider, {**BASE_SETTINGS, "USER_AGENT": agent})
    with caplog.at_level(logging.INFO):
        RobotsTxtMiddleware(crawler)
    assert "as 'ExampleBot' (derived from USER_AGENT" in caplog.text


def test_a_user_agent_in_default_request_headers_is_the_one_obeyed() -> None:
    """DefaultHeadersMiddleware sets it before UserAgentMiddleware: it is what sites see."""
    headers = {"DEFAULT_REQUEST_HEADERS": {"User-Agent": "ExampleBot/2 (+https://e.com)"}}
    settings = RobotsTxtSettings.from_settings(Settings({**headers, "USER_AGENT": "Other/1"}))
    assert settings.token_for(None) == "ExampleBot"


@deferred_f_from_coro_f
async def test_robots_parsed_signal_carries_an_rfc9309_parser(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    crawler = get_crawler(RecordingSpider, BASE_SETTINGS)
    received: list[tuple[Any, Any]] = []

    def on_parsed(robotparser: Any, request: Any) -> None:
        received.append((robotparser, request))

    crawler.signals.connect(on_parsed, signal=scrapy_rfc9309.robots_parsed)
    await _compat.crawl(crawler, urls=[site.url("/x"), site.url("/y")])
    assert len(received) == 1
    parser, request = received[0]
    assert isinstance(parser, RFC9309RobotParser)
    assert not parser.allowed(site.url("/x"), "Scrapy/2.19")
    assert request.url in (site.url("/x"), site.url("/y"))


@deferred_f_from_coro_f
async def test_robots_txt_never_served_from_httpcache(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    cache = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path)}
    await crawl([site.url("/y")], cache)
    await crawl([site.url("/y")], cache)
    assert site.count("/robots.txt") == 2
    assert site.count("/y") == 1  # the page itself did come from the cache


@deferred_f_from_coro_f
async def test_scrapy_builtin_middleware_with_our_parser(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    settings = {
        "DOWNLOADER_MIDDLEWARES": {},
        "ROBOTSTXT_PARSER": "scrapy_rfc9309.RFC9309RobotParser",
    }
    spider, _ = await crawl([site.url("/x"), site.url("/y")], settings)
    assert spider.fetched == [site.url("/y")]


class _OwnMetaMiddleware(scrapy_rfc9309.RobotsMetaMiddleware):
    """A project's subclass of the page-directives middleware."""


@pytest.mark.parametrize(
    ("spider_middlewares", "meta_obey", "expected"),
    [
        ({"scrapy_rfc9309.RobotsMetaMiddleware": 950}, True, True),
        ({_OwnMetaMiddleware: 950}, True, True),
        ({f"{__name__}._OwnMetaMiddleware": 950}, True, True),
        ({"scrapy_rfc9309.RobotsMetaMiddleware": None}, True, False),
        ({}, True, False),
        ({"scrapy_rfc9309.RobotsMetaMiddleware": 950}, False, False),
        ({"no.such.Middleware": 950}, True, False),
    ],
)
def test_page_signals_are_read_only_where_the_meta_middleware_runs(
    spider_middlewares: dict[Any, Any], meta_obey: bool, expected: bool
) -> None:
    """A page's usage signals can supersede a tdmrep.json reservation only
    when ``ROBOTS_META_OBEY`` is on and ``RobotsMetaMiddleware``, or a
    subclass, is in ``SPIDER_MIDDLEWARES`` (named by path or by class)."""
    from scrapy_rfc9309.components.settings._component_settings import page_signals_read

    settings = Settings({"SPIDER_MIDDLEWARES": spider_middlewares, "ROBOTS_META_OBEY": meta_obey})
    assert page_signals_read(settings) is expected


@pytest.mark.parametrize("value", [2.5, "big", 100])
def test_rfc9309_robot_parser_under_scrapy_s_middleware_reads_the_size_as_the_add_on(
    value: Any,
) -> None:
    """RFC 9309 2.5: with Scrapy's own middleware and ``ROBOTSTXT_PARSER =
    "scrapy_rfc9309.RFC9309RobotParser"``, a ROBOTSTXT_MAX_SIZE the add-on
    refuses is refused too, naming it, not read as a 2-octet limit that
    would allow everything."""
    crawler = get_crawler(RecordingSpider, {"ROBOTSTXT_MAX_SIZE": value})
    with pytest.raises(SettingError, match="ROBOTSTXT_MAX_SIZE"):
        RFC9309RobotParser.from_crawler(crawler, b"User-agent: *\nDisallow: /\n")
    crawler = get_crawler(RecordingSpider, {"ROBOTSTXT_MAX_SIZE": "600000"})
    parser = RFC9309RobotParser.from_crawler(crawler, b"User-agent: *\nDisallow: /\n")
    assert not parser.allowed("https://example.com/a", "ExampleBot")

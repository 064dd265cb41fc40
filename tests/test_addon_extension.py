"""The add-on and the extension (Crawl-delay, close summary) in real crawls."""

from __future__ import annotations

import logging
from itertools import pairwise
from typing import Any, ClassVar

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components.settings._setting_values import SettingError

from .conftest import BASE_SETTINGS, BUILTIN, UNSET, RecordingSpider, crawl
from .server import text

PAGE = text("<html>page</html>", content_type=b"text/html")
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}


@deferred_f_from_coro_f
async def test_addon_replaces_the_builtin_middleware(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    spider, stats = await crawl([site.url("/x"), site.url("/y")], ADDON_ONLY)
    assert spider.fetched == [site.url("/y")]
    assert "line 2" in spider.dropped[site.url("/x")]
    assert site.count("/robots.txt") == 1  # not fetched a second time by the built-in one
    assert stats["robotstxt/forbidden/rule"] == 1


@deferred_f_from_coro_f
async def test_addon_leaves_the_users_robotstxt_obey_setting_alone(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")}, default=PAGE)
    spider, _ = await crawl([site.url("/x")], {**ADDON_ONLY, "ROBOTSTXT_OBEY": False})
    assert spider.fetched == [site.url("/x")]
    assert site.count("/robots.txt") == 0


def _gaps(site: Any, paths: set[str]) -> list[float]:
    times = [t for path, t in zip(site.hits, site.hit_times, strict=True) if path in paths]
    return [later - earlier for earlier, later in pairwise(times)]


CRAWL_DELAY_ROBOTS = "User-agent: *\nCrawl-delay: 0.6\nDisallow: /private\n"


@deferred_f_from_coro_f
async def test_crawl_delay_spaces_requests_to_the_site_by_default(sites, caplog) -> None:
    """Crawl-delay is honoured unless turned off (as Nutch and StormCrawler do),
    with no setting at all."""
    site = sites(routes={"/robots.txt": text(CRAWL_DELAY_ROBOTS)}, default=PAGE)
    paths = {f"/p{i}" for i in range(4)}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.extension"):
        await crawl([site.url(p) for p in sorted(paths)], ADDON_ONLY)
    gaps = _gaps(site, paths)
    assert len(gaps) == 3
    assert min(gaps) >= 0.55, gaps
    assert any("Crawl-delay 0.6 s for" in r.getMessage() for r in caplog.records)


@deferred_f_from_coro_f
async def test_crawl_delay_turned_off_says_so_once_per_site(sites, caplog) -> None:
    """``ROBOTSTXT_CRAWL_DELAY = False``: the site is crawled at full speed, and
    one INFO line per site names the delay not applied and the setting."""
    site = sites(routes={"/robots.txt": text(CRAWL_DELAY_ROBOTS)}, default=PAGE)
    paths = {f"/p{i}" for i in range(4)}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.extension"):
        await crawl(
            [site.url(p) for p in sorted(paths)], {**ADDON_ONLY, "ROBOTSTXT_CRAWL_DELAY": False}
        )
    assert max(_gaps(site, paths)) < 0.5  # paced, each gap would be at least 0.55 s
    said = [r.getMessage() for r in caplog.records if "not applied" in r.getMessage()]
    assert said == [
        f"Crawl-delay 0.6 s asked by {site.url('/robots.txt')} not applied: "
        "ROBOTSTXT_CRAWL_DELAY is off"
    ]


@deferred_f_from_coro_f
async def test_crawl_delay_holds_with_autothrottle_and_is_capped(sites) -> None:
    robots = "User-agent: *\nCrawl-delay: 30\n"
    site = sites(routes={"/robots.txt": text(robots)}, default=PAGE)
    paths = {f"/p{i}" for i in range(3)}
    settings = {
        **ADDON_ONLY,
        "ROBOTSTXT_CRAWL_DELAY": True,
        "ROBOTSTXT_CRAWL_DELAY_MAX": 0.6,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": 0.01,
        "AUTOTHROTTLE_MAX_DELAY": 0.05,
    }
    await crawl([site.url(p) for p in sorted(paths)], settings)
    gaps = _gaps(site, paths)
    assert min(gaps) >= 0.55, gaps
    assert max(gaps) < 5, gaps  # capped by ROBOTSTXT_CRAWL_DELAY_MAX, not 30 s


@deferred_f_from_coro_f
async def test_close_summary_names_outcomes_and_top_rules(sites, caplog) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    gone = sites(routes={"/robots.txt": text("", status=503)})
    urls = [site.url("/x1"), site.url("/x2"), site.url("/y"), gone.url("/a")]
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        # the unreachable site's request is dropped at once, not deferred
        await crawl(urls, {**ADDON_ONLY, "ROBOTSTXT_UNREACHABLE_DEFER": 0})
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    assert "2 sites checked (1 parsed, 0 unavailable: allow all, 1 unreachable" in summary
    assert "; 1 request allowed, 3 dropped (2 by rules, 1 unreachable" in summary
    assert f"2 x {site.origin} line 2: 'Disallow: /x'" in summary


class ReenablesBuiltin(RecordingSpider):
    """Scrapy's own robots.txt middleware enabled in the spider's custom_settings."""

    custom_settings: ClassVar[dict[str, Any]] = {"DOWNLOADER_MIDDLEWARES": {BUILTIN: 100}}  # type: ignore[misc]


@deferred_f_from_coro_f
async def test_addon_refuses_the_builtin_middleware_enabled_in_custom_settings(sites) -> None:
    """custom_settings are read before add-ons (Scrapy 2.13 to 2.19): the add-on does not
    silently turn the built-in middleware off again; the crawl stops saying both are on."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    settings = {k: v for k, v in {**BASE_SETTINGS, **ADDON_ONLY}.items() if v is not UNSET}
    crawler = get_crawler(ReenablesBuiltin, settings)
    with pytest.raises(SettingError, match="both are enabled") as error:
        await _compat.crawl(crawler, urls=[site.url("/x")])
    assert "custom_settings" in str(error.value)
    assert "enable the add-on" not in str(error.value)  # it is enabled: the entry is the fix
    assert site.hits == []


@deferred_f_from_coro_f
async def test_a_plain_crawl_with_the_addon_logs_no_warning(sites, caplog) -> None:
    """The add-on enables components that turn themselves off when not needed (the
    cluster-wide delay without a Redis store): they say nothing at WARNING, so a
    healthy crawl under a named User-Agent logs no WARNING at all."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /private\n")}, default=PAGE)
    settings = {**ADDON_ONLY, "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)"}
    with caplog.at_level(logging.WARNING):
        spider, stats = await crawl([site.url("/x"), site.url("/private/y")], settings)
    assert spider.fetched == [site.url("/x")]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "log_count/WARNING" not in stats


@pytest.mark.parametrize(
    ("robots", "enforcing"),
    [("User-agent: *\nDisallow: /private\n", False), (CRAWL_DELAY_ROBOTS, True)],
    ids=["no-crawl-delay", "crawl-delay"],
)
@deferred_f_from_coro_f
async def test_crawl_delay_floors_are_kept_on_downloads_only_once_a_site_asks_one(
    sites, robots: str, enforcing: bool
) -> None:
    """Crawl-delay is on by default: the extension keeps each spaced slot's floor
    on every download (two signal handlers per page), but connects them only at
    the first site that asks a Crawl-delay; a crawl of sites that ask none pays
    nothing per page for it."""
    from scrapy_rfc9309.components.extension._extension import RobotsTxtExtension

    site = sites(routes={"/robots.txt": text(robots)}, default=PAGE)
    spider, _ = await crawl([site.url("/a"), site.url("/b")], ADDON_ONLY)
    assert sorted(spider.fetched) == [site.url("/a"), site.url("/b")]
    (extension,) = [
        ext for ext in spider.crawler.extensions.middlewares if isinstance(ext, RobotsTxtExtension)
    ]
    assert extension._enforcing is enforcing

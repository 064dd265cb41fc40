"""After a crawl and at start-up: the close summary's top rules, the JSON report,
the opt-in deciding line of allowed requests, the crawler's identity (HTTP: The
Definitive Guide ch. 9), and the private Scrapy attributes the code relies on."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import pytest
from scrapy import Request
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309 import Verdict
from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components.settings._report_settings import ReportSettings, identity_warning
from scrapy_rfc9309.components.settings._setting_values import SettingError

from .clock import SkippingClock
from .conftest import ADDON_ONLY, BASE_SETTINGS, UNSET, RecordingSpider, crawl
from .server import delayed, redirect, sequence, status, text

PAGE = text("<html>page</html>", content_type=b"text/html")
ROBOTS = "User-agent: *\nDisallow: /a\nDisallow: /b\nAllow: /b/open\nDisallow: /c\n"


def _summary(caplog: Any) -> str:
    return next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())


@deferred_f_from_coro_f
async def test_summary_top_rules_setting(sites, caplog) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    urls = [site.url(p) for p in ("/a1", "/a2", "/a3", "/b1", "/b2", "/c1", "/d")]
    settings = {**ADDON_ONLY, "ROBOTSTXT_SUMMARY_TOP_RULES": 2}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await crawl(urls, settings)
    summary = _summary(caplog)
    assert f"3 x {site.origin} line 2: 'Disallow: /a'" in summary
    assert f"2 x {site.origin} line 3: 'Disallow: /b'" in summary
    assert "line 5" not in summary  # only the top 2
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await crawl(urls, {**ADDON_ONLY, "ROBOTSTXT_SUMMARY_TOP_RULES": 0})
    assert "6 dropped (6 by rules" in _summary(caplog)
    assert "Rules that dropped" not in _summary(caplog)


@deferred_f_from_coro_f
async def test_report_file_has_one_record_per_site(sites, tmp_path) -> None:
    """What a compliance report needs: chain, outcome, status, size, when, counts, rules."""
    site = sites(routes={"/robots.txt": redirect("/real"), "/real": text(ROBOTS)}, default=PAGE)
    missing = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    gone = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    path = tmp_path / "out" / "robots-report.json"
    urls = [site.url("/a1"), site.url("/a2"), site.url("/b/open"), missing.url("/x")]
    urls.append(gone.url("/y"))
    # ROBOTSTXT_UNREACHABLE_DEFER 0: the 503 site's request is dropped at once
    settings = {**ADDON_ONLY, "ROBOTSTXT_REPORT_FILE": str(path), "ROBOTSTXT_UNREACHABLE_DEFER": 0}
    await crawl(urls, settings)
    report = json.loads(path.read_text())
    assert report["spider"] == "recording"
    assert report["finish_reason"] == "finished"
    assert report["stats"]["robotstxt/forbidden/rule"] == 2
    records = {record["site"]: record for record in report["sites"]}
    parsed = records[site.origin]
    assert parsed["robots_txt"] == [
        {"url": site.url("/robots.txt"), "status": 301},
        {"url": site.url("/real"), "status": 200},
    ]
    assert (parsed["outcome"], parsed["status"], parsed["size"]) == ("parsed", 200, len(ROBOTS))
    assert parsed["fetched_at"].endswith("Z")
    assert (parsed["requests_allowed"], parsed["requests_dropped"]) == (1, 2)
    assert parsed["top_rules"] == [{"line": 2, "rule": "Disallow: /a", "dropped": 2}]
    assert records[missing.origin]["outcome"] == "unavailable"
    assert records[missing.origin]["status"] == 404
    assert records[missing.origin]["requests_allowed"] == 1
    assert records[gone.origin]["outcome"] == "unreachable"
    assert records[gone.origin]["requests_dropped"] == 1
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # readable as any file written


@deferred_f_from_coro_f
async def test_no_report_file_by_default(sites, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    await crawl([site.url("/a")], ADDON_ONLY)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("settings", "name"),
    [
        ({"ROBOTSTXT_SUMMARY_TOP_RULES": -1}, "ROBOTSTXT_SUMMARY_TOP_RULES"),
        ({"ROBOTSTXT_SUMMARY_TOP_RULES": "many"}, "ROBOTSTXT_SUMMARY_TOP_RULES"),
        ({"ROBOTSTXT_REPORT_FILE": " "}, "ROBOTSTXT_REPORT_FILE"),
        ({"ROBOTSTXT_REPORT_FILE": 3}, "ROBOTSTXT_REPORT_FILE"),
        ({"ROBOTSTXT_REPORT_FILE": "/"}, "ROBOTSTXT_REPORT_FILE"),
    ],
)
def test_bad_report_settings_name_the_setting(settings: dict[str, Any], name: str) -> None:
    with pytest.raises(SettingError, match=name):
        ReportSettings.from_settings(Settings(settings))


def test_report_settings_defaults() -> None:
    assert ReportSettings.from_settings(Settings()) == ReportSettings(5, None)


class ExplainingSpider(RecordingSpider):
    """Asks for the deciding line of allowed requests and records it."""

    verdicts: dict[str, Any]

    def make(self, url: str) -> Request:
        request = super().make(url)
        request.meta["robotstxt_explain"] = True
        return request

    def parse(self, response: Any) -> Any:
        self.verdicts = getattr(self, "verdicts", {})
        self.verdicts[response.url] = response.meta.get("robotstxt_verdict")
        yield from super().parse(response)


@deferred_f_from_coro_f
async def test_2_2_2_explain_meta_gives_the_deciding_line_of_allowed_requests(sites) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    crawler = get_crawler(ExplainingSpider, BASE_SETTINGS)
    await _compat.crawl(crawler, urls=[site.url("/b/open"), site.url("/d"), site.url("/a")])
    spider = crawler.spider
    assert isinstance(spider, ExplainingSpider)
    assert spider.verdicts == {
        site.url("/b/open"): Verdict(True, 4, "Allow: /b/open"),
        site.url("/d"): Verdict(True, None, None),
    }
    assert "line 2" in spider.dropped[site.url("/a")]


@deferred_f_from_coro_f
async def test_no_verdict_in_meta_unless_asked(sites) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    crawler = get_crawler(ExplainingSpider, BASE_SETTINGS)
    crawler.spidercls.make = RecordingSpider.make  # type: ignore[attr-defined]
    await _compat.crawl(crawler, urls=[site.url("/b/open")])
    assert crawler.spider.verdicts == {site.url("/b/open"): None}  # type: ignore[union-attr]


SCRAPY_UA = "Scrapy/2.19.0 (+https://scrapy.org)"


@pytest.mark.parametrize(
    ("settings", "warns"),
    [
        ({"ROBOTSTXT_OBEY": True, "USER_AGENT": SCRAPY_UA}, True),
        ({"ROBOTSTXT_OBEY": True, "USER_AGENT": "Scrapy/2.13.4 (+https://scrapy.org)"}, True),
        ({"ROBOTSTXT_OBEY": False, "USER_AGENT": SCRAPY_UA}, False),
        ({"ROBOTSTXT_OBEY": True, "USER_AGENT": "ExampleBot/1.0 (+https://e.com/bot)"}, False),
        ({"ROBOTSTXT_OBEY": True, "USER_AGENT": "Scrapy/2.19 (+https://e.com/about)"}, False),
    ],
)
def test_identity_warning_under_scrapys_default_user_agent(settings, warns) -> None:
    """HTTP: The Definitive Guide ch. 9: robots identify themselves and their operator."""
    warning = identity_warning(Settings(settings))
    assert (warning is not None) == warns
    if warning:
        assert "USER_AGENT = " in warning
        assert "ROBOTSTXT_USER_AGENT" in warning
        assert "+https://" in warning  # a contact URL in the example


@deferred_f_from_coro_f
async def test_identity_warning_once_at_start_up(sites, caplog) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        await crawl([site.url("/d"), site.url("/e")], {**ADDON_ONLY, "USER_AGENT": UNSET})
    warnings = [r for r in caplog.records if "default USER_AGENT" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].name == "scrapy_rfc9309.middleware"
    caplog.clear()
    named = {**ADDON_ONLY, "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)"}
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        await crawl([site.url("/d")], named)
    assert not [r for r in caplog.records if "default USER_AGENT" in r.getMessage()]


class InspectingSpider(RecordingSpider):
    """Looks at the engine's private state the middleware and extension rely on."""

    seen: dict[str, Any]

    def parse(self, response: Any) -> Any:
        engine = self.crawler.engine
        downloader = engine.downloader
        key = downloader.get_slot_key(response.request)
        slot = downloader.slots.get(key)
        self.seen = {
            "engine_slot": getattr(engine, "_slot", None),
            "closing": getattr(getattr(engine, "_slot", None), "closing", "missing"),
            "download_slot": slot,
            "delay": getattr(slot, "delay", None),
            "jitter_or_randomize": hasattr(slot, "jitter") or hasattr(slot, "randomize_delay"),
        }
        yield from super().parse(response)


@deferred_f_from_coro_f
async def test_private_scrapy_attributes_the_code_relies_on(sites) -> None:
    """``engine._slot.closing`` (closing drops waiting requests at once) and the
    downloader's slots with ``delay`` and ``jitter`` / ``randomize_delay`` (Crawl-delay)
    exist in every supported Scrapy."""
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    crawler = get_crawler(InspectingSpider, BASE_SETTINGS)
    await _compat.crawl(crawler, urls=[site.url("/d")])
    seen = crawler.spider.seen  # type: ignore[union-attr]
    assert seen["engine_slot"] is not None
    assert seen["closing"] is None  # an attribute, unset while the spider runs
    assert seen["download_slot"] is not None
    assert isinstance(seen["delay"], float)
    assert seen["jitter_or_randomize"]


def test_report_is_bounded_and_json(monkeypatch, tmp_path) -> None:
    """Hostile crawls (many sites, many rules) cannot grow the report without bound."""
    from scrapy_rfc9309.components import _report
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    monkeypatch.setattr(_report, "MAX_SITES_TRACKED", 3)
    monkeypatch.setattr(_report, "MAX_RULES_TRACKED", 2)
    report = _report.CrawlReport()
    chain = (("http://a/robots.txt", 301), ("http://b/robots.txt", None))
    for n in range(10):
        site = f"http://s{n}:80"
        report.fetched(site, SiteOutcome(Kind.UNREACHABLE, None, "x", 0.0, chain), now=0.0)
        report.decided(site, allowed=n % 2 == 0)
        report.dropped_by_rule(site, n, f"Disallow: /{n}")
        report.dropped_at_close(site)
    data = report.as_json()
    assert [record["site"] for record in data["sites"]] == [
        "http://s0:80",
        "http://s1:80",
        "http://s2:80",
    ]
    assert data["sites"][1]["robots_txt"][1] == {"url": "http://b/robots.txt", "status": None}
    assert data["sites"][1]["status"] is None
    assert data["sites"][1]["fetched_at"] == "1970-01-01T00:00:00Z"
    assert data["sites"][1]["requests_dropped"] == 2
    assert sum(len(record["top_rules"]) for record in data["sites"]) == 2
    written = report.write_json(tmp_path / "r.json", spider="s")
    assert json.loads(written.read_text())["spider"] == "s"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_identity_warning_with_robotstxt_user_agent_names_the_token() -> None:
    settings = Settings(
        {"ROBOTSTXT_OBEY": True, "USER_AGENT": SCRAPY_UA, "ROBOTSTXT_USER_AGENT": "OtherBot"}
    )
    warning = identity_warning(settings)
    assert warning is not None
    assert "USER_AGENT = 'OtherBot/1.0 (+https://example.com/bot)'" in warning
    assert "bind every one" not in warning


@deferred_f_from_coro_f
async def test_summary_says_a_deferred_site_recovered(sites, caplog) -> None:
    """A robots.txt unreachable twice, then retrieved (HTTP: The Definitive Guide
    ch. 9 deferral; RFC 9309 2.3.1.4 meanwhile): the summary says what happened,
    not "disallow all"."""
    robots = sequence(status(503), status(503), text(ROBOTS))
    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    clock = SkippingClock(eager=5)  # the back-offs (1 s, 2 s) without the wait
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        _, stats = await crawl([site.url("/a1"), site.url("/d")], ADDON_ONLY, clock=clock)
    assert clock.skipped > 2  # the crawl's time went by the back-offs, not the test
    assert stats["robotstxt/deferred/recovered"] == 1
    summary = _summary(caplog)
    # the counts add up to the sites checked: the site counts in what it came to
    assert (
        "1 site checked (1 parsed, 0 unavailable: allow all, 0 unreachable: disallow all; "
        "1 recovered after being unreachable (deferred, 3 attempts))"
    ) in summary


@deferred_f_from_coro_f
async def test_report_file_stats_include_page_level_counts(sites, tmp_path) -> None:
    """The JSON report's stats hold the robotsmeta/* counts the summary shows."""
    page = text('<html><meta name="robots" content="nofollow">x</html>', content_type=b"text/html")
    site = sites(routes={"/robots.txt": text(ROBOTS), "/n": page}, default=PAGE)
    path = tmp_path / "report.json"
    _, stats = await crawl(
        [site.url("/n")],
        {**ADDON_ONLY, "ROBOTSTXT_REPORT_FILE": str(path)},
        followups={site.url("/n"): [site.url("/d")]},
    )
    report = json.loads(path.read_text())
    meta = {key: value for key, value in stats.items() if key.startswith("robotsmeta/")}
    assert meta.get("robotsmeta/nofollow") == 1, stats
    assert {k: v for k, v in report["stats"].items() if k.startswith("robotsmeta/")} == meta


@pytest.mark.parametrize(("bound", "thrashing"), [(1, True), (100, False)])
@deferred_f_from_coro_f
async def test_2_4_a_cache_bound_that_evicts_fresh_robots_txt_warns_once(
    sites, caplog, bound: int, thrashing: bool
) -> None:
    """RFC 9309 2.4: a robots.txt is used for its lifetime. Two sites, each page
    leading to the site's next one, under a bound of 1: the first site's page is
    slow, so the second site settles meanwhile and evicts the first while fresh,
    and its next page costs a download. Memory stays bounded, so the downloads
    happen, but never silently: counted, and one WARNING naming
    ROBOTSTXT_CACHE_MAX_SITES, its value and the fixes."""
    first = sites(routes={"/robots.txt": text(ROBOTS)}, default=delayed(0.5, PAGE))
    second = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    many = [first, second]
    followups = {site.url("/p/a"): [site.url("/p/b")] for site in many}
    settings = {**ADDON_ONLY, "ROBOTSTXT_CACHE_MAX_SITES": bound, "LOG_LEVEL": "INFO"}
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await crawl(
            [site.url("/p/a") for site in many], settings, followups=followups
        )
    assert len(spider.fetched) == 4
    served = sum(site.count("/robots.txt") for site in many)
    assert served == stats["robotstxt/request_count"]
    warnings = [r.getMessage() for r in caplog.records if "CACHE_MAX_SITES" in r.getMessage()]
    if not thrashing:
        assert served == 2
        assert "robotstxt/cache/refetched_evicted" not in stats
        assert warnings == []
        return
    # the first site's next page costs a download (the second's may, as timing goes)
    assert first.count("/robots.txt") == 2
    assert served in (3, 4)
    assert stats["robotstxt/cache/refetched_evicted"] == served - 2
    [warning] = warnings
    assert f"ROBOTSTXT_CACHE_MAX_SITES = {bound}" in warning
    assert "Raise ROBOTSTXT_CACHE_MAX_SITES" in warning
    assert "ROBOTSTXT_STORE_URI" in warning


@deferred_f_from_coro_f
async def test_summary_lists_a_site_scrapy_cannot_download_and_never_counts_it_allowed(
    sites, caplog
) -> None:
    """A scheme with no download handler (``htp:``) is not the site's answer (RFC
    9309 2.3.1.4 speaks of the server): its requests go to Scrapy unchecked. The
    summary lists the site under its own outcome, and its request is counted as
    passed unchecked, never as allowed."""
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=PAGE)
    bad = f"htp://127.0.0.1:{site.port.getHost().port}/x"
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        spider, stats = await crawl([bad, site.url("/ok")], ADDON_ONLY, allow_errors=True)
    assert "Unsupported URL scheme 'htp'" in spider.dropped[bad]
    assert spider.fetched == [site.url("/ok")]
    assert stats["robotstxt/not_downloadable"] == 1
    assert stats["robotstxt/passed_unchecked"] == 1
    assert stats["robotstxt/allowed"] == 1  # only the page that was checked
    summary = _summary(caplog)
    assert (
        "2 sites checked (1 parsed, 0 unavailable: allow all, 0 unreachable: disallow all, "
        "1 not downloadable: passed to Scrapy unchecked); "
        "1 request allowed, 1 passed unchecked, 0 dropped"
    ) in summary

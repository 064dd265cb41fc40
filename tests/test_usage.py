"""Usage preferences: IETF AIPREF ``Content-Usage`` (attach / vocab drafts), Cloudflare's
``Content-Signal`` and TDMRep, in the parser and in real crawls with ``ROBOTSTXT_PURPOSES``."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider, signals
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309 import RobotsTxt
from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings
from scrapy_rfc9309.parser._compact import CompactRobots
from scrapy_rfc9309.parser._directives import MAX_HEADER_BYTES, MAX_HEADER_VALUES
from scrapy_rfc9309.parser._lint import lint
from scrapy_rfc9309.parser._response_usage import response_usage, unread_usage
from scrapy_rfc9309.parser._tdmrep import parse_tdmrep
from scrapy_rfc9309.parser._usage import (
    CATEGORIES,
    NO_PREFERENCES,
    RETIRED_PURPOSES,
    TDM_CATEGORIES,
    USE_LEVELS,
    VOCABULARY,
    Preference,
    needs_tdmrep,
)
from scrapy_rfc9309.parser._usage_decision import UsageSources, decide_usage
from scrapy_rfc9309.parser._usage_index import MAX_RECORDS
from scrapy_rfc9309.parser._usage_signals import read_usage_signals
from scrapy_rfc9309.parser._usage_values import content_signal_use, parse_content_usage

from .conftest import BASE_SETTINGS
from .profiles import examples
from .server import html_page, page_with_headers, sequence, status, text, with_headers

# draft-ietf-aipref-attach, robots.txt example (a group-wide preference and a
# path-scoped one that overrides it for its paths).
ATTACH_EXAMPLE = b"""User-Agent: *
Allow: /
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
"""
# Cloudflare Content Signals Policy, as its robots.txt writes it.
SIGNALS_EXAMPLE = b"""User-Agent: *
Content-Signal: search=yes, ai-train=no
Allow: /
"""


def prefs(robots: RobotsTxt, url: str, agent: str = "ExampleBot") -> dict[str, str]:
    return {c: p.value for c, p in robots.usage(url=url, agent=agent).preferences.items()}


def test_aipref_attach_example_longest_path_wins() -> None:
    robots = RobotsTxt.parse(ATTACH_EXAMPLE)
    assert prefs(robots, "https://example.com/page") == {"train-ai": "n"}
    assert prefs(robots, "/ai-ok/page") == {"train-ai": "y"}
    usage = robots.usage(url="/ai-ok/x", agent="ExampleBot")
    preference = usage.get("train-ai")
    assert preference is not None
    assert (preference.line, preference.rule) == (4, "Content-Usage: /ai-ok/ train-ai=y")
    assert usage.refusal(["train-ai"]) is None
    refusal = robots.usage(url="/x", agent="ExampleBot").refusal(["train-ai"])
    assert refusal is not None and refusal.line == 3


def test_content_signal_maps_ai_train_to_train_ai() -> None:
    robots = RobotsTxt.parse(SIGNALS_EXAMPLE)
    assert prefs(robots, "/a") == {"search": "y", "train-ai": "n"}
    assert VOCABULARY[("content-signal", "ai-train")] == "train-ai"


def test_rfc9309_2_2_4_usage_lines_never_end_a_group_and_are_not_unknown() -> None:
    body = b"User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n"
    robots = RobotsTxt.parse(body)
    assert robots.warnings == ()  # not unknown directives
    # ... but site owners are told that the usage line did not end a group
    assert [(line, "joins the group of line 1" in text) for line, text in lint(robots)] == [
        (3, True)
    ]
    assert len(robots.groups_for("a")) == 1
    assert prefs(robots, "/", "b") == {"train-ai": "n"}  # same group as a
    assert not robots.allowed(url="/x", agent="a")


def test_rfc9309_2_2_1_agent_groups_as_for_rules() -> None:
    body = (
        b"User-agent: *\nDisallow: /p\nContent-Usage: train-ai=n\n\n"
        b"User-agent: ExampleBot\nDisallow: /x\n"
    )
    robots = RobotsTxt.parse(body)
    assert prefs(robots, "/", "OtherBot") == {"train-ai": "n"}
    assert prefs(robots, "/", "ExampleBot/1.0") == {}  # its own group states nothing


def test_equally_long_paths_most_restrictive_wins() -> None:
    body = b"User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n, search=y\n"
    assert prefs(RobotsTxt.parse(body), "/a/b") == {"train-ai": "n", "search": "y"}


def test_unknown_names_values_and_parameters_are_ignored() -> None:
    assert parse_content_usage("train-ai=n;x=1, foo=n, search=maybe, search") == [
        ("train-ai", False)
    ]
    assert parse_content_usage("search=yes, ai-input=no", "content-signal") == [
        ("search", True),
        ("ai-use", False),
    ]


def test_no_usage_lines_cost_nothing_and_a_usage_only_file_is_kept_by_the_cache() -> None:
    plain = RobotsTxt.parse(b"User-agent: *\nDisallow:\n")
    assert plain.usage_index() is None and plain.allows_everything
    only = RobotsTxt.parse(b"User-agent: *\nContent-Usage: train-ai=n\n")
    assert not only.allows_everything
    compact = CompactRobots(only)
    assert compact.usage(url="/x", agent="bot").refusal(["train-ai"]) is not None


def test_response_signals_header_and_tdm_meta() -> None:
    headers = {"Content-Usage": "train-ai=n, search=y", "Content-Type": "text/html"}
    body = html_page('<meta name="tdm-reservation" content="1">')
    found = read_usage_signals(200, headers, body)
    assert ("Content-Usage header", "train-ai=n, search=y") in found
    usage = response_usage(found)
    assert usage.refusal(["search"]) is None
    assert usage.refusal(["ai-use"]) is not None  # from the TDMRep meta only
    assert response_usage(read_usage_signals(200, {"tdm-reservation": "1"}, b"")).refusal(
        ["train-ai"]
    )


def test_tdmrep_json_specific_location_first() -> None:
    """TDMRep final report: "The most specific match is the first in sequence"."""
    rules = parse_tdmrep(
        b'[{"location": "/news/*", "tdm-reservation": 1}, {"location": "/", "tdm-reservation": 0}]'
    )
    assert rules.usage("/news/a").refusal(["train-ai"]) is not None
    assert rules.usage("/about").refusal(["train-ai"]) is None
    assert parse_tdmrep(b"{not json").rules == ()
    assert needs_tdmrep(["train-ai"]) and needs_tdmrep(["ai-use"])
    assert not needs_tdmrep(["search"])


@pytest.mark.parametrize(
    ("location", "url", "reserved"),
    [
        ("/caf%C3%A9/*", "/café/x", True),
        ("/a%2fb", "/a%2Fb/c", True),
        ("/*.pdf$", "/x.pdfx", False),
        ("https://e.com/news/", "/news/a", True),
        ("", "/anything", True),
    ],
    ids=["utf8", "encoded-slash", "anchored", "url", "empty-whole-site"],
)
def test_2_2_2_tdmrep_locations_match_as_allow_and_disallow_rules(
    location: str, url: str, reserved: bool
) -> None:
    """tdmrep.json locations go through the robots.txt rule matcher (RFC 9309 2.2.2)."""
    rules = parse_tdmrep(json.dumps([{"location": location, "tdm-reservation": 1}]).encode())
    assert (rules.usage(url).refusal(["train-ai"]) is not None) is reserved


def test_purposes_setting_is_validated() -> None:
    from scrapy.settings import Settings

    read = RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_PURPOSES": ["train-ai", "search"]}))
    assert read.purposes == ("train-ai", "search")
    assert RobotsTxtSettings.from_settings(Settings({})).purposes == ()
    with pytest.raises(SettingError, match=r"ROBOTSTXT_PURPOSES.*known: .*train-ai"):
        RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_PURPOSES": ["ai-training"]}))


# -- real crawls ------------------------------------------------------------------------

ROBOTS = text("User-agent: *\nAllow: /\nContent-Usage: /no-ai/ train-ai=n\n")
PAGE = text(html_page(), content_type=b"text/html")


class ItemSpider(Spider):
    name = "usage"

    def __init__(self, urls: list[str] = (), **kw: Any) -> None:  # type: ignore[assignment]
        super().__init__(**kw)
        self.urls = list(urls)
        self.usage: dict[str, Any] = {}
        self.dropped: dict[str, str] = {}

    async def start(self) -> Any:
        for url in self.urls:
            yield Request(url, self.parse, errback=self.failed, dont_filter=True)

    def parse(self, response: Any) -> Any:
        self.usage[response.url] = response.meta.get("usage")
        yield {"url": response.url}

    def failed(self, failure: Any) -> None:
        self.dropped[failure.request.url] = str(failure.value)


async def usage_crawl(
    urls: list[str], settings: dict[str, Any]
) -> tuple[ItemSpider, list[str], Any]:
    merged = {
        **BASE_SETTINGS,
        "SPIDER_MIDDLEWARES": {"scrapy_rfc9309.RobotsMetaMiddleware": 950},
        **settings,
    }
    crawler = get_crawler(ItemSpider, merged)
    items: list[str] = []

    def scraped(item: Any) -> None:
        items.append(item["url"])

    crawler.signals.connect(scraped, signal=signals.item_scraped)
    await _compat.crawl(crawler, urls=urls)
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    assert stats.get("log_count/ERROR", 0) == 0
    assert isinstance(crawler.spider, ItemSpider)
    return crawler.spider, items, stats


@deferred_f_from_coro_f
async def test_robots_txt_refusal_drops_before_download(sites) -> None:
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    urls = [site.url("/no-ai/a"), site.url("/ok")]
    spider, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert site.count("/no-ai/a") == 0 and site.count("/ok") == 1
    assert items == [site.url("/ok")]
    assert 'line 3: "Content-Usage: /no-ai/ train-ai=n"' in spider.dropped[site.url("/no-ai/a")]
    assert stats["robotstxt/forbidden/usage"] == 1
    assert spider.usage[site.url("/ok")] is not None
    assert site.count("/.well-known/tdmrep.json") == 1  # train-ai is text and data mining


@deferred_f_from_coro_f
async def test_without_purposes_nothing_changes(sites) -> None:
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    spider, items, stats = await usage_crawl([site.url("/no-ai/a")], {})
    assert site.count("/no-ai/a") == 1 and items == [site.url("/no-ai/a")]
    assert site.count("/.well-known/tdmrep.json") == 0
    assert "robotstxt/forbidden/usage" not in stats
    assert spider.usage[site.url("/no-ai/a")] is None


@deferred_f_from_coro_f
async def test_search_purpose_needs_no_tdmrep_and_is_not_refused(sites) -> None:
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    _, items, _ = await usage_crawl([site.url("/no-ai/a")], {"ROBOTSTXT_PURPOSES": ["search"]})
    assert items == [site.url("/no-ai/a")]
    assert site.count("/.well-known/tdmrep.json") == 0


@deferred_f_from_coro_f
async def test_header_and_meta_refusals_drop_items(sites) -> None:
    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/header": page_with_headers(html_page(), [(b"Content-Usage", b"train-ai=n")]),
        "/tdm-header": page_with_headers(html_page(), [(b"tdm-reservation", b"1")]),
        "/tdm-meta": text(
            html_page('<meta name="tdm-reservation" content="1">'), content_type=b"text/html"
        ),
        "/ok": page_with_headers(html_page(), [(b"Content-Usage", b"train-ai=y")]),
    }
    site = sites(routes=routes)
    urls = [site.url(path) for path in ("/header", "/tdm-header", "/tdm-meta", "/ok")]
    spider, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert all(site.count(path) == 1 for path in ("/header", "/tdm-header", "/tdm-meta", "/ok"))
    assert items == [site.url("/ok")]
    assert stats["robotsmeta/usage"] == 3
    assert spider.usage[site.url("/header")].get("train-ai").source == "Content-Usage header"


@deferred_f_from_coro_f
async def test_usage_headers_past_a_reading_limit_refuse_fail_closed(sites, caplog) -> None:
    """A ``Content-Usage`` refusal past the header limits (the 65th line, or past
    8 KiB of one value) is not read: the header is counted in
    ``robotsmeta/truncated``, logged, and refuses the declared purpose (fail
    closed), as the X-Robots-Tag limits are reported; a page within the
    limits keeps its items."""
    many = [(b"Content-Usage", b"search=y")] * MAX_HEADER_VALUES + [
        (b"Content-Usage", b"train-ai=n")
    ]
    long_value = b"search=y, " + b"x=y, " * (MAX_HEADER_BYTES // 5) + b"train-ai=n"
    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/many": page_with_headers(html_page(), many),
        "/long": page_with_headers(html_page(), [(b"Content-Usage", long_value)]),
        "/within": page_with_headers(html_page(), many[:MAX_HEADER_VALUES]),
    }
    site = sites(routes=routes)
    urls = [site.url(path) for path in ("/many", "/long", "/within")]
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.meta"):
        spider, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert all(site.count(path) == 1 for path in ("/many", "/long", "/within"))
    assert items == [site.url("/within")]
    assert stats["robotsmeta/truncated"] == 2
    assert stats["robotsmeta/usage"] == 2
    refusal = spider.usage[site.url("/many")].get("train-ai")
    assert (refusal.allowed, refusal.source) == (False, "Content-Usage header")
    assert "MAX_HEADER_VALUES reached" in refusal.rule
    assert "MAX_HEADER_BYTES reached" in spider.usage[site.url("/long")].get("train-ai").rule
    logged = [r.getMessage() for r in caplog.records if "only in part" in r.getMessage()]
    assert any(
        site.url("/many") in line
        and "MAX_HEADER_VALUES (Content-Usage header)" in line
        and "fail closed" in line
        for line in logged
    ), logged
    assert any("MAX_HEADER_BYTES (Content-Usage header)" in line for line in logged), logged


def test_unread_usage_headers_refuse_what_they_can_state() -> None:
    """Pure: a header read only in part refuses the categories its signal can
    state; tdm-policy states none; within the limits nothing is assumed."""
    headers = [("Content-Usage", "search=y")] * (MAX_HEADER_VALUES + 1)
    headers += [("tdm-reservation", "0")] * (MAX_HEADER_VALUES + 1)
    headers += [("tdm-policy", "https://p.example/")] * (MAX_HEADER_VALUES + 1)
    unread: dict[str, frozenset[str]] = {}
    signals = read_usage_signals(200, headers, b"", unread)
    assert unread == {
        "Content-Usage header": frozenset({"MAX_HEADER_VALUES"}),
        "tdm-reservation header": frozenset({"MAX_HEADER_VALUES"}),
        "tdm-policy header": frozenset({"MAX_HEADER_VALUES"}),
    }
    sources = UsageSources().with_page(signals, unread)
    decision = decide_usage(sources, ["train-ai", "search", "ai-use"])
    assert set(decision.refusals) == {"train-ai", "search", "ai-use"}
    assert decision.refusals["search"].source == "Content-Usage header"
    assert decision.refusals["ai-use"].source == "Content-Usage header"  # ai-use=n may be there
    tdm_only = unread_usage({"tdm-reservation header": ["MAX_HEADER_VALUES"]})
    assert set(tdm_only.preferences) == {"train-ai", "ai-use"}
    assert unread_usage({"tdm-policy header": ["MAX_HEADER_BYTES"]}) is NO_PREFERENCES
    within: dict[str, frozenset[str]] = {}
    read_usage_signals(200, headers[:MAX_HEADER_VALUES], b"", within)
    assert within == {}


@deferred_f_from_coro_f
async def test_tdmrep_json_fetched_once_per_site_and_obeyed(sites) -> None:
    tdmrep = text(
        '[{"location": "/reserved/*", "tdm-reservation": 1}]', content_type=b"application/json"
    )
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": tdmrep,
        },
        default=PAGE,
    )
    urls = [site.url(f"/reserved/{n}") for n in range(5)] + [
        site.url(f"/free/{n}") for n in range(5)
    ]
    # page directives not read: nothing can supersede the file (TDMRep processing
    # priority), so its reservation drops before download
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTS_META_OBEY": False}
    spider, items, stats = await usage_crawl(urls, settings)
    assert site.count("/.well-known/tdmrep.json") == 1
    assert not any(hit.startswith("/reserved/") for hit in site.hits)
    assert sorted(items) == sorted(site.url(f"/free/{n}") for n in range(5))
    assert stats["robotstxt/forbidden/usage"] == 5
    assert "tdmrep.json" in spider.dropped[site.url("/reserved/0")]


@deferred_f_from_coro_f
async def test_tdmrep_json_reservation_decided_by_the_page_when_it_is_read(sites) -> None:
    """TDMRep final report, processing priority: the page's header or meta
    supersede tdmrep.json, so with page directives read (ROBOTS_META_OBEY) a
    reserved page is downloaded and its items dropped, not the request."""
    tdmrep = text(
        '[{"location": "/reserved/*", "tdm-reservation": 1}]', content_type=b"application/json"
    )
    routes = {"/robots.txt": text("User-agent: *\nAllow: /\n"), "/.well-known/tdmrep.json": tdmrep}
    site = sites(routes=routes, default=PAGE)
    urls = [site.url(f"/reserved/{n}") for n in range(3)]
    _, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert items == [] and all(site.count(f"/reserved/{n}") == 1 for n in range(3))
    assert "robotstxt/forbidden/usage" not in stats
    assert stats["robotsmeta/pages/usage"] == 3 and stats["robotsmeta/usage"] == 3


def test_command_explains_usage_text_and_json() -> None:
    from scrapy_rfc9309.components.command._command import explain, explain_url
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    robots = RobotsTxt.parse(ATTACH_EXAMPLE)
    lines, _ = explain(robots, "https://e.com/ai-ok/x", "ExampleBot")
    assert 'usage:       train-ai=y by line 4: "Content-Usage: /ai-ok/ train-ai=y"' in lines
    outcome = SiteOutcome(Kind.PARSED, robots, "HTTP 200", 0.0)
    answer = explain_url(outcome, "https://e.com/x", "ExampleBot")
    assert answer["usage"] == {
        "train-ai": {
            "value": "n",
            "source": "robots.txt",
            "line": 3,
            "rule": "Content-Usage: train-ai=n",
        }
    }
    plain, _ = explain(RobotsTxt.parse(b"User-agent: *\nDisallow: /p\n"), "/x", "ExampleBot")
    assert "usage:       robots.txt states none (Content-Usage, Content-Signal)" in plain


@deferred_f_from_coro_f
async def test_command_process_shows_usage(tmp_path) -> None:
    from .test_command import json_lines, scrapy

    robots = tmp_path / "robots.txt"
    robots.write_bytes(SIGNALS_EXAMPLE)
    output, code = await scrapy("https://e.com/a", "--file", str(robots), cwd=tmp_path)
    assert code == 0, output
    assert 'usage:       train-ai=n by line 2: "Content-Signal: search=yes, ai-train=no"' in output
    output, _ = await scrapy("https://e.com/a", "--file", str(robots), "--json", cwd=tmp_path)
    assert json_lines(output)[0]["usage"]["search"]["value"] == "y"


@deferred_f_from_coro_f
async def test_close_summary_and_json_report_include_usage(sites, tmp_path, caplog) -> None:
    report = tmp_path / "report.json"
    routes = {
        "/robots.txt": ROBOTS,
        "/header": page_with_headers(html_page(), [(b"Content-Usage", b"train-ai=n")]),
    }
    site = sites(routes=routes, default=PAGE)
    settings = {
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0},
        "ROBOTSTXT_REPORT_FILE": str(report),
    }
    with caplog.at_level("INFO"):
        await usage_crawl([site.url("/no-ai/a"), site.url("/header")], settings)
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    lines = summary.splitlines()
    # the drop causes add up to the requests dropped
    assert "1 dropped (0 by rules, 0 unreachable, 1 by usage preferences, 0 at close)" in lines[0]
    assert lines[1] == (
        "Declared purposes (train-ai; ROBOTSTXT_PURPOSES): 1 request dropped before download "
        "by a usage preference (robots.txt, tdmrep.json); 1 page refused a purpose once "
        "downloaded (by its headers or meta, or tdmrep.json left to the page; 1 item "
        "dropped); 1 tdmrep.json download"
    )
    # requests and items are counted apart, each with its unit and site
    assert lines[2:] == [
        "Usage preferences that dropped the most:",
        f"  1 request dropped: {site.origin}: train-ai=n (robots.txt line 3: "
        '"Content-Usage: /no-ai/ train-ai=n")',
        f"     1 item dropped: {site.origin}: train-ai=n (Content-Usage header: "
        '"Content-Usage: train-ai=n")',
    ]
    data = json.loads(report.read_text())
    (record,) = [entry for entry in data["sites"] if entry["site"] == site.origin]
    assert {
        "preference": 'train-ai=n (Content-Usage header: "Content-Usage: train-ai=n")',
        "items_dropped": 1,
    } in record["usage_dropped"]
    assert any(entry.get("requests_dropped") == 1 for entry in record["usage_dropped"])


_USAGE_LINE = st.sampled_from(
    [
        b"Content-Usage: train-ai=n",
        b"Content-Usage: /a train-ai=y",
        b"Content-Usage: /a* search=n, train-genai=y",
        b"content-signal: /a$ ai-train=no, search=yes",
        b"Content-Signal: ai-input=no",
        b"User-agent: *",
        b"User-agent: ExampleBot",
        b"Disallow: /a",
        b"Content-Usage: =,;\xff",
    ]
)


@settings(max_examples=examples(150), deadline=None)
@given(
    lines=st.lists(st.one_of(_USAGE_LINE, st.binary(max_size=40)), max_size=20),
    path=st.sampled_from(["/", "/a", "/ab", "/a$", "/b/a"]),
)
def test_usage_never_raises_and_the_cached_form_agrees(lines: list[bytes], path: str) -> None:
    robots = RobotsTxt.parse(b"\n".join(lines))
    compact = CompactRobots(robots)
    for agent in ("ExampleBot", "OtherBot"):
        usage = robots.usage(url=path, agent=agent)
        assert usage == compact.usage(url=path, agent=agent)
        for preference in usage.preferences.values():
            assert preference.line is not None and preference.rule.lower().startswith("content-")


@given(st.text(max_size=200))
def test_header_values_never_raise(value: str) -> None:
    parse_content_usage(value)
    parse_content_usage(value, "content-signal")
    response_usage([("Content-Usage header", value), ("tdm-reservation header", value)])
    parse_tdmrep(value.encode("utf-8", "surrogatepass"))


def test_hostile_many_usage_lines_are_bounded() -> None:
    body = b"User-agent: *\n" + b"Content-Usage: /*a*b*c*d train-ai=n\n" * 50_000
    robots = RobotsTxt.parse(body)
    index = robots.usage_index()
    assert index is not None
    assert len(index.records("*")) == MAX_RECORDS
    assert robots.usage(url="/" + "a" * 5000, agent="bot").preferences == {}


@deferred_f_from_coro_f
async def test_unreachable_tdmrep_json_states_nothing(sites) -> None:
    from .server import status

    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/.well-known/tdmrep.json": status(503),
    }
    site = sites(routes=routes, default=PAGE)
    urls = [site.url(f"/p/{n}") for n in range(4)]
    _, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["ai-use"]})
    assert sorted(items) == sorted(urls)
    assert (
        site.count("/.well-known/tdmrep.json") == 1
    )  # tried again after ROBOTSTXT_UNREACHABLE_TTL
    assert stats["robotstxt/tdmrep/response_status_count/503"] == 1


@deferred_f_from_coro_f
async def test_hanging_tdmrep_json_holds_requests_at_most_a_download_timeout(sites) -> None:
    from .server import hang

    routes = {"/robots.txt": text("User-agent: *\nAllow: /\n"), "/.well-known/tdmrep.json": hang()}
    site = sites(routes=routes, default=PAGE)
    urls = [site.url(f"/p/{n}") for n in range(3)]
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "DOWNLOAD_TIMEOUT": 1}
    _, items, stats = await usage_crawl(urls, settings)
    assert sorted(items) == sorted(urls)  # no TDMRep preference: nothing refused
    assert any(key.startswith("robotstxt/tdmrep/exception_count/") for key in stats)


@deferred_f_from_coro_f
async def test_a_tdmrep_json_over_the_size_limit_states_nothing_and_loses_no_request(sites):
    big = b"[" + b'{"location": "/x", "tdm-reservation": 0},' * 20_000 + b"{}]"
    routes = {
        "/robots.txt": text("User-agent: *\nAllow: /\n"),
        "/.well-known/tdmrep.json": text(big),
    }
    site = sites(routes=routes, default=PAGE)
    urls = [site.url(f"/p/{n}") for n in range(4)]
    _, items, _ = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["ai-use"]})
    assert sorted(items) == sorted(urls)  # every request fetched: nothing stated
    assert site.count("/.well-known/tdmrep.json") == 1


# -- tdmrep.json waits in the scheduler; closing drops its waiters ------------------------

QUEUE = {"SCHEDULER_PRIORITY_QUEUE": "scrapy_rfc9309.RobotsTxtPriorityQueue"}
ALLOW_ALL = text("User-agent: *\nAllow: /\n")


def _times(site: Any, wanted: Any) -> list[float]:
    return [t for path, t in zip(site.hits, site.hit_times, strict=True) if wanted(path)]


def _is_page(path: str) -> bool:
    return path not in ("/robots.txt", "/.well-known/tdmrep.json")


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [4, 1])
@deferred_f_from_coro_f
async def test_2_3_a_slow_tdmrep_json_stalls_no_other_site_requests_wait_in_the_scheduler(
    sites, concurrency: int
) -> None:
    """RFC 9309 2.3 (as for robots.txt): site A's tdmrep.json answers only once
    site B's 24 pages are all fetched (5 s at most); A's 32 pages, scheduled
    first, wait in the scheduler queue, not in the downloader, so B's pages are
    all fetched before that answer, with 4 requests at a time, or 1 (the
    tdmrep.json download itself takes none of CONCURRENT_REQUESTS). Were B's
    pages stuck behind A's, the answer would come at 5 s and B's pages after it."""
    from .server import Held

    fast = sites(routes={"/robots.txt": ALLOW_ALL}, default=PAGE)
    tdm = Held(
        lambda: len(_times(fast, _is_page)) >= 24,
        text("[]", content_type=b"application/json"),
    )
    slow_tdm = sites(
        routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": tdm}, default=PAGE
    )
    urls = [slow_tdm.url(f"/a{n}") for n in range(32)] + [fast.url(f"/b{n}") for n in range(24)]
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "CONCURRENT_REQUESTS": concurrency, **QUEUE}
    _, items, stats = await usage_crawl(urls, settings)
    assert sorted(items) == sorted(urls)  # nothing reserved: every page fetched
    (tdm_answered,) = tdm.answered
    fast_pages = _times(fast, _is_page)
    assert len(fast_pages) == 24
    assert max(fast_pages) < tdm_answered, "site B waited for site A's tdmrep.json"
    assert min(_times(slow_tdm, _is_page)) >= tdm_answered  # A's pages after its answer
    assert slow_tdm.count("/.well-known/tdmrep.json") == fast.count("/.well-known/tdmrep.json") == 1
    assert "robotstxt/forbidden/closing" not in stats


@deferred_f_from_coro_f
async def test_2_4_a_bounded_cache_fetches_each_tdmrep_json_once_while_its_requests_wait(
    sites,
) -> None:
    """30 sites x 3 pages, scheduled breadth first while the tdmrep.json files are
    slow, with ROBOTSTXT_CACHE_MAX_SITES = 10: as for robots.txt (RFC 9309 2.4), a
    site whose requests still wait in the queue never has its tdmrep.json evicted
    (they would find it unknown and fetch it again), and sites beyond the bound wait,
    unfetched, until room frees: one tdmrep.json per site for its lifetime."""
    from .server import delayed

    # slow enough that every start request is scheduled first (see test_queue)
    tdmrep = delayed(1.0, text("[]", content_type=b"application/json"))
    many = [
        sites(routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": tdmrep}, default=PAGE)
        for _ in range(30)
    ]
    urls = [site.url(f"/p{page}") for page in range(3) for site in many]
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTSTXT_CACHE_MAX_SITES": 10, **QUEUE}
    _, items, stats = await usage_crawl(urls, settings)
    assert sorted(items) == sorted(urls)  # nothing reserved: every page fetched
    assert [site.count("/.well-known/tdmrep.json") for site in many] == [1] * 30
    assert stats["robotstxt/tdmrep/request_count"] == 30
    assert "robotstxt/forbidden/closing" not in stats


@pytest.mark.slow
@pytest.mark.parametrize("queue", [QUEUE, {}], ids=["scheduler_queue", "other_queue"])
@deferred_f_from_coro_f
async def test_2_3_a_hung_tdmrep_json_takes_no_page_slot_with_one_request_per_domain(
    sites, queue: dict[str, str]
) -> None:
    """RFC 9309 2.3 (as for robots.txt), CONCURRENT_REQUESTS_PER_DOMAIN = 1: site A's
    tdmrep.json never answers; site B is the same host (127.0.0.1, another port), so
    Scrapy would give A's tdmrep.json and B's pages one download slot. The tdmrep.json
    downloads in a slot of its own: B's 12 pages are all served while it hangs."""
    from .server import hang

    hung = sites(
        routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": hang()}, default=PAGE
    )
    healthy = sites(routes={"/robots.txt": ALLOW_ALL}, default=PAGE)
    urls = [hung.url(f"/a{n}") for n in range(4)] + [healthy.url(f"/b{n}") for n in range(12)]
    settings = {
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_TIMEOUT": 1.5,
        **queue,
    }
    _, items, stats = await usage_crawl(urls, settings)
    assert sorted(items) == sorted(urls)  # no answer: nothing stated, every page fetched
    (tdm_asked,) = _times(hung, lambda path: path == "/.well-known/tdmrep.json")
    healthy_pages = _times(healthy, _is_page)
    assert len(healthy_pages) == 12
    assert max(healthy_pages) < tdm_asked + 1, "site B's pages waited for A's tdmrep.json"
    # A's pages after the time-out (1.5 s from the request's start, sent a little before)
    assert min(_times(hung, _is_page)) >= tdm_asked + 1
    assert stats["robotstxt/tdmrep/request_count"] == 2


@deferred_f_from_coro_f
async def test_2_3_robots_txt_and_tdmrep_json_slots_are_forgotten_once_downloaded(sites) -> None:
    """Each site's robots.txt and tdmrep.json download in slots of their own
    (``robots.txt <site>``, ``tdmrep.json <site>``), which the downloader forgets
    once the download ends: slots never outnumber the downloads in flight."""
    tdmrep = text('[{"location": "/", "tdm-reservation": 0}]', content_type=b"application/json")
    served = [
        sites(routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": tdmrep}, default=PAGE)
        for _ in range(3)
    ]
    crawler = get_crawler(ItemSpider, {**BASE_SETTINGS, "ROBOTSTXT_PURPOSES": ["train-ai"]})
    used: set[str] = set()
    left: list[str] = []

    def sent(request: Any, spider: Any) -> None:
        used.add(request.meta.get("download_slot") or "")

    def closed(spider: Any) -> None:
        assert crawler.engine is not None
        left.extend(key for key in crawler.engine.downloader.slots if " " in key)

    crawler.signals.connect(sent, signal=signals.request_reached_downloader)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    await _compat.crawl(crawler, urls=[site.url(f"/p/{n}") for site in served for n in range(3)])
    assert crawler.stats is not None and crawler.stats.get_value("item_scraped_count") == 9
    for site in served:
        assert {f"robots.txt {site.origin}", f"tdmrep.json {site.origin}"} <= used
        assert site.count("/.well-known/tdmrep.json") == 1
    assert left == []


@pytest.mark.parametrize("queue", [QUEUE, {}], ids=["scheduler_queue", "other_queue"])
@deferred_f_from_coro_f
async def test_closing_cancels_tdmrep_json_downloads_and_drops_their_requests(
    sites, caplog, queue: dict[str, str]
) -> None:
    """Hostile input: a tdmrep.json that never answers holds no close. At close its
    download is cancelled and every request that waited for it is dropped, counted
    in ``robotstxt/forbidden/closing`` and logged (none is fetched without its answer)."""
    import time

    from .server import hang

    routes = {"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": hang()}
    site = sites(routes=routes, default=PAGE)
    urls = [site.url(f"/p/{n}") for n in range(6)]
    settings = {
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "DOWNLOAD_TIMEOUT": 120,
        "CLOSESPIDER_TIMEOUT": 0.5,
        **queue,
    }
    started = time.monotonic()
    with caplog.at_level("INFO"):
        spider, items, stats = await usage_crawl(urls, settings)
    assert time.monotonic() - started < 10  # not the 120 s download timeout
    assert items == [] and [path for path in site.hits if _is_page(path)] == []
    assert stats["robotstxt/forbidden/closing"] == 6
    assert stats["finish_reason"] == "closespider_timeout"
    messages = [record.getMessage() for record in caplog.records]
    assert any("tdmrep.json download cancelled at close" in m for m in messages)
    if not queue:  # they waited in the middleware: each is dropped with its reason
        assert any("dropping 6 requests that waited on 1 tdmrep.json" in m for m in messages)
        assert all("tdmrep.json was fetched" in reason for reason in spider.dropped.values())


@pytest.mark.parametrize(
    ("obey", "meta_obey", "warned"),
    [(False, False, True), (False, True, False), (True, False, False)],
    ids=["both_off", "meta_on", "robots_on"],
)
@deferred_f_from_coro_f
async def test_purposes_with_nothing_to_read_them_warn_at_start(
    sites, caplog, obey: bool, meta_obey: bool, warned: bool
) -> None:
    """ROBOTSTXT_PURPOSES with both ROBOTSTXT_OBEY and ROBOTS_META_OBEY off would be
    silently ignored: one WARNING at start-up names the three settings."""
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    settings = {
        "ADDONS": {"scrapy_rfc9309.Addon": 100},
        "ROBOTSTXT_OBEY": obey,
        "ROBOTS_META_OBEY": meta_obey,
        "ROBOTSTXT_PURPOSES": ["train-ai"],
    }
    with caplog.at_level("WARNING"):
        _, items, _ = await usage_crawl([site.url("/no-ai/a")], settings)
    found = [
        record
        for record in caplog.records
        if "ROBOTSTXT_PURPOSES" in record.getMessage() and record.levelname == "WARNING"
    ]
    if not warned:
        assert found == []
        return
    assert len(found) == 1  # once, though both middlewares turned themselves off
    message = found[0].getMessage()
    assert "ROBOTSTXT_PURPOSES is set (train-ai)" in message
    assert "ROBOTSTXT_OBEY and ROBOTS_META_OBEY are both off" in message
    assert items == [site.url("/no-ai/a")]  # indeed nothing was dropped


# -- path-scoped usage lines match exactly as Allow / Disallow (RFC 9309 2.2.2) ---------

# draft-ietf-aipref-attach-05: a path only when the value starts with "/".
_PATTERN_START = st.sampled_from(["/", "/*", "/a", "/%61"])
_PATTERN_PIECE = st.sampled_from(
    ["a", "b", "/", "*", "$", "%2A", "%24", "%61", "%2f", "%", "é", "?", "&", ".", "~", ","]
)
_PATH_PIECE = st.sampled_from(
    ["a", "b", "/", "*", "$", "%2A", "%24", "%61", "%2F", "é", "%C3%A9", "?", "&", ".", "~"]
)


@settings(max_examples=examples(400), deadline=None)
@given(
    patterns=st.lists(
        st.tuples(_PATTERN_START, st.lists(_PATTERN_PIECE, max_size=6).map("".join)).map("".join),
        min_size=1,
        max_size=3,
    ),
    values=st.lists(st.booleans(), min_size=3, max_size=3),
    path=st.tuples(st.just("/"), st.lists(_PATH_PIECE, max_size=8).map("".join)).map("".join),
)
def test_2_2_2_path_scoped_usage_lines_match_as_allow_and_disallow_rules(
    patterns: list[str], values: list[bool], path: str
) -> None:
    """A ``Content-Usage: <pattern> train-ai=n`` line matches the paths that
    ``Allow: <pattern>`` does (``y``: ``Disallow``), with the same winner: the
    longest match, and ``n`` where ``Allow`` wins a tie. Percent-encoding, ``*``
    and ``$`` included; paths start with ``/`` (draft-ietf-aipref-attach-05).
    Paths a server resolves to another (``//a``, ``/./a``) are left out: for
    them access is also checked on the resolved path (``LENIENT(dot-segments)``,
    stricter than RFC 9309), which usage lines are not."""
    from scrapy_rfc9309.parser._dots import needs_resolving

    assume(not needs_resolving(path))
    usage_lines, rule_lines = [], []
    for pattern, allowed in zip(patterns, values, strict=False):
        usage_lines.append(f"Content-Usage: {pattern} train-ai={'y' if allowed else 'n'}")
        rule_lines.append(f"{'Disallow' if allowed else 'Allow'}: {pattern}")
    usage_file = RobotsTxt.parse("User-agent: *\n" + "\n".join(usage_lines) + "\n")
    rules_file = RobotsTxt.parse("User-agent: *\n" + "\n".join(rule_lines) + "\n")
    verdict = rules_file.check(url=path, agent="ExampleBot")
    preference = usage_file.usage(url=path, agent="ExampleBot").get("train-ai")
    if verdict.line is None:
        assert preference is None
    else:
        assert preference is not None
        assert preference.line == verdict.line
        assert preference.allowed is not verdict.allowed
    assert CompactRobots(usage_file).usage(url=path, agent="ExampleBot").get("train-ai") == (
        preference
    )


@pytest.mark.parametrize(
    ("line", "url", "refused"),
    [
        ("Content-Usage: /a%2fb train-ai=n", "/a%2Fb", True),
        ("Content-Usage: /caf%C3%A9 train-ai=n", "/café", True),
        ("Content-Usage: /*.pdf$ train-ai=n", "/x/y.pdf", True),
        ("Content-Usage: /*.pdf$ train-ai=n", "/x/y.pdfx", False),
        ("Content-Usage: https://e.com/shop/ train-ai=n", "/shop/a", False),
        ("Content-Usage: https://other.example.com train-ai=n", "/x", False),
        ("Content-Usage: shop/ train-ai=n", "/shop/a", False),
        ("Content-Usage: *.pdf train-ai=n", "/x.pdf", False),
    ],
    ids=[
        "encoded-slash",
        "utf8",
        "anchored",
        "anchored-end",
        "url",
        "url-host-only",
        "no-slash",
        "star",
    ],
)
def test_2_2_2_path_scoped_usage_line_examples(line: str, url: str, refused: bool) -> None:
    """draft-ietf-aipref-attach-05 (robots.txt): a path only when the value starts
    with ``/`` ("Content-Usage: /ai-ok/ train-ai=y"). A URL, ``shop/`` or ``*.pdf``
    first is no path: the value is then no RFC 9651 Dictionary, and states nothing."""
    robots = RobotsTxt.parse(f"User-agent: *\n{line}\n")
    refusal = robots.usage(url=url, agent="ExampleBot").refusal(["train-ai"])
    assert (refusal is not None) is refused


# -- lint: usage lines that state less than their writer meant ---------------------------

LINTED_USAGE = """User-agent: *
Content-Usage: train-ai=n, ai-train=n, search=maybe, junk
Content-Usage: /x train-ai=y, train-ai=n
Content-Usage: https://e.com/shop/ train-ai=n
Content-Usage: https://other.example train-ai=n
Content-Usage: ai-ok/ train-ai=y
Content-Signal: ai-train=no, search=y
Content-Usage: train-ai=y
Content-Usage: /x
Disallow: /p
Content-Usage: /x search=n
Content-Signal: search=yes, ai-input=no
"""


def test_lint_flags_bad_usage_lines_with_their_line_numbers() -> None:
    """Unknown category, bad value, malformed member or path, duplicate category (on
    one line, or for one path in one group); good lines (11, 12) are not flagged."""
    findings = lint(RobotsTxt.parse(LINTED_USAGE))
    not_a_dictionary = (
        "no preference on this line is known (draft-ietf-aipref-vocab-08: a value that does "
        "not parse leaves every preference unknown)"
    )
    assert findings == [
        (
            2,
            "Content-Usage: unknown label 'ai-train' (the vocabulary's: ai-use, search, train-ai); "
            "ignored",
        ),
        (
            2,
            "Content-Usage: search: value Token 'maybe' is not the Token y or n; its preference "
            "is unknown",
        ),
        (
            2,
            "Content-Usage: unknown label 'junk' (the vocabulary's: ai-use, search, train-ai); "
            "ignored",
        ),
        (
            3,
            "Content-Usage: 'train-ai' is stated twice on this line; the last is used "
            "(RFC 9651 Dictionary)",
        ),
        (
            4,
            "Content-Usage: 'https://e.com/shop/' is not a path: a path starts with '/' "
            "(draft-ietf-aipref-attach-05); write its path '/shop/'",
        ),
        (
            4,
            "Content-Usage: not an RFC 9651 Dictionary: 'https' should be followed by '=', "
            f"not ':' at position 5: {not_a_dictionary}",
        ),
        (
            5,
            "Content-Usage: 'https://other.example' is not a path: a path starts with '/' "
            "(draft-ietf-aipref-attach-05); it names only a host; write a path on this "
            "site's own host",
        ),
        (
            5,
            "Content-Usage: not an RFC 9651 Dictionary: 'https' should be followed by '=', "
            f"not ':' at position 5: {not_a_dictionary}",
        ),
        (
            6,
            "Content-Usage: 'ai-ok/' is not a path: a path starts with '/' "
            "(draft-ietf-aipref-attach-05); write '/ai-ok/'",
        ),
        (
            6,
            "Content-Usage: not an RFC 9651 Dictionary: 'ai-ok' should be followed by '=', "
            f"not '/' at position 5: {not_a_dictionary}",
        ),
        (7, "Content-Signal: value 'y' of search is not yes or no; ignored"),
        (
            8,
            "Content-Usage: 'train-ai' for every path is already stated at line 2 in the "
            "group of line 1; the most restrictive value is used",
        ),
        (9, "Content-Usage: no preference stated (e.g. train-ai=n)"),
    ]
    assert lint(RobotsTxt.parse(ATTACH_EXAMPLE)) == []
    assert lint(RobotsTxt.parse(SIGNALS_EXAMPLE)) == []


@deferred_f_from_coro_f
async def test_command_lint_reports_usage_lines(tmp_path) -> None:
    from .test_command import json_lines, scrapy

    robots = tmp_path / "robots.txt"
    robots.write_text(LINTED_USAGE)
    output, _ = await scrapy("--lint", str(robots), cwd=tmp_path)
    lines = [line for line in output.splitlines() if line.startswith(str(robots))]
    assert [line.split(":")[1] for line in lines] == [
        "2",
        "2",
        "2",
        "3",
        "4",
        "4",
        "5",
        "5",
        "6",
        "6",
        "7",
        "8",
        "9",
    ]
    assert "unknown label 'ai-train'" in lines[0]
    output, _ = await scrapy("--lint", str(robots), "--json", cwd=tmp_path)
    (data,) = json_lines(output)
    assert [finding["line"] for finding in data["findings"]][:3] == [2, 2, 2]


# -- scrapy robotstxt with declared purposes ----------------------------------------------

COMMAND_ROBOTS = text("User-agent: *\nAllow: /\nContent-Usage: /no-ai/ train-ai=n\n")
COMMAND_TDMREP = text('[{"location": "/news/*", "tdm-reservation": 1}]')


@deferred_f_from_coro_f
async def test_command_purpose_reads_tdmrep_json_and_exits_4_on_a_refusal(sites, tmp_path) -> None:
    """``--purpose train-ai``: the site's tdmrep.json is read (once, whatever the
    number of URLs), shown, and a refusal from it or from robots.txt exits 4."""
    from scrapy_rfc9309.components.command._command import EXIT_USAGE_REFUSED

    from .test_command import scrapy

    routes = {"/robots.txt": COMMAND_ROBOTS, "/.well-known/tdmrep.json": COMMAND_TDMREP}
    site = sites(routes=routes)
    output, code = await scrapy(site.url("/news/a"), "--purpose", "train-ai", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    assert f"tdmrep.json: {site.url('/.well-known/tdmrep.json')} (HTTP 200, 1 rule)" in output
    assert 'usage:       train-ai=n by tdmrep.json: location "/news/*", tdm-reservation 1' in output
    assert (
        'purposes:    train-ai: REFUSED, train-ai=n by tdmrep.json: location "/news/*", '
        "tdm-reservation 1" in output
    )
    # TDMRep: the page may supersede the file; the answer says so, and that this
    # crawl (no page middleware here) drops the request before download
    assert "supersedes tdmrep.json (TDMRep)" in output
    assert "so it drops the request before download" in output
    output, code = await scrapy(site.url("/no-ai/x"), "--purpose", "train-ai", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    assert "supersedes tdmrep.json" not in output  # a robots.txt line: no page lifts it
    # robots.txt allows it, and the crawl drops it all the same: said so
    assert "crawl:       DROPPED before download: a usage preference refuses" in output
    assert (
        'purposes:    train-ai: REFUSED, train-ai=n by robots.txt line 3: "Content-Usage: '
        '/no-ai/ train-ai=n"' in output
    )
    before = site.count("/.well-known/tdmrep.json")
    urls = [site.url("/free"), site.url("/other")]
    output, code = await scrapy(*urls, "--purpose", "train-ai", cwd=tmp_path)
    assert code == 0, output
    assert output.count("purposes:    train-ai: not refused") == 2
    assert site.count("/.well-known/tdmrep.json") == before + 1  # once per site


@deferred_f_from_coro_f
async def test_command_uses_the_projects_purposes_and_reads_tdmrep_only_when_needed(
    sites, tmp_path
) -> None:
    from scrapy_rfc9309.components.command._command import EXIT_ERROR, EXIT_USAGE_REFUSED

    from .test_command import json_lines, scrapy

    routes = {"/robots.txt": COMMAND_ROBOTS, "/.well-known/tdmrep.json": COMMAND_TDMREP}
    site = sites(routes=routes)
    url = site.url("/news/a")
    output, code = await scrapy(url, "-s", "ROBOTSTXT_PURPOSES=ai-use", "--json", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    (answer,) = json_lines(output)
    assert answer["purposes"] == ["ai-use"]
    assert answer["refused"]["source"] == "/.well-known/tdmrep.json"
    assert answer["tdmrep"] == {
        "url": site.url("/.well-known/tdmrep.json"),
        "detail": "HTTP 200, 1 rule",
    }
    assert answer["usage"]["ai-use"]["value"] == "n"
    fetched = site.count("/.well-known/tdmrep.json")
    output, code = await scrapy(url, "--purpose", "search", cwd=tmp_path)
    assert code == 0 and "purposes:    search: not refused" in output
    output, code = await scrapy(url, cwd=tmp_path)  # no purpose declared: as before
    assert code == 0 and "purposes:" not in output
    assert site.count("/.well-known/tdmrep.json") == fetched  # search needs no TDMRep
    output, code = await scrapy(url, "--purpose", "ai-training", cwd=tmp_path)
    assert code == EXIT_ERROR and "unknown purpose 'ai-training'" in output


@deferred_f_from_coro_f
async def test_close_summary_names_the_purposes_even_when_nothing_was_refused(
    sites, caplog
) -> None:
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    extension = {"EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0}}
    with caplog.at_level("INFO"):
        await usage_crawl([site.url("/ok")], {"ROBOTSTXT_PURPOSES": ["search"], **extension})
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    assert summary.splitlines()[1:] == [
        "Declared purposes (search; ROBOTSTXT_PURPOSES): 0 requests dropped before download "
        "by a usage preference (robots.txt, tdmrep.json); 0 pages refused a purpose once "
        "downloaded (by their headers or meta, or tdmrep.json left to the page; 0 items "
        "dropped)"
    ]
    caplog.clear()
    with caplog.at_level("INFO"):
        await usage_crawl([site.url("/ok")], extension)
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    assert "Declared purposes" not in summary and "Usage preferences" not in summary


# -- tdmrep.json lifetime, and Content-Signal in a real crawl -----------------------------


@pytest.mark.parametrize(
    ("route", "settings_"),
    [
        (
            "max-age",
            {"ROBOTSTXT_CACHE_MIN_TTL": 0},
        ),
        ("unreachable", {"ROBOTSTXT_UNREACHABLE_TTL": 1}),
    ],
    ids=["cache_control_max_age", "unreachable_ttl"],
)
@deferred_f_from_coro_f
async def test_tdmrep_json_kept_for_its_lifetime_then_fetched_again(
    sites, route: str, settings_: dict[str, Any]
) -> None:
    """tdmrep.json follows robots.txt's lifetime rules: kept for its ``Cache-Control``
    max-age (RFC 9309 2.4, within ROBOTSTXT_CACHE_MIN_TTL / _TTL), or, when the
    server could not answer, for ROBOTSTXT_UNREACHABLE_TTL; then fetched again."""
    from .clock import SkippingClock, skipping
    from .conftest import crawl
    from .server import status, with_headers

    clock = SkippingClock()
    tdmrep = (
        with_headers(text("[]", content_type=b"application/json"), **{"Cache-Control": "max-age=1"})
        if route == "max-age"
        else status(503)
    )
    routes = {
        "/robots.txt": ALLOW_ALL,
        "/.well-known/tdmrep.json": tdmrep,
        "/slow": skipping(clock, 1.5, route=text("<html>slow</html>", content_type=b"text/html")),
    }
    site = sites(routes=routes, default=PAGE)
    first, later = site.url("/slow"), site.url("/later")
    spider, _ = await crawl(
        [first, site.url("/p1")],
        {"ROBOTSTXT_PURPOSES": ["train-ai"], **settings_},
        followups={first: [later]},
        clock=clock,
    )
    assert sorted(spider.fetched) == sorted([first, site.url("/p1"), later])
    assert site.count("/.well-known/tdmrep.json") == 2  # once, then again after 1 s
    assert site.hits[-2:] == ["/.well-known/tdmrep.json", "/later"]  # refetched first


@deferred_f_from_coro_f
async def test_content_signal_line_refuses_before_download_in_a_real_crawl(sites) -> None:
    """Cloudflare's Content-Signal (ai-train=no is train-ai=n) in robots.txt: the refused
    path is never downloaded; search stays allowed."""
    robots = text(
        "User-agent: *\nContent-Signal: search=yes, ai-train=no\n"
        "Content-Signal: /open/ ai-train=yes\nAllow: /\n"
    )
    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    urls = [site.url("/closed"), site.url("/open/a")]
    spider, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert site.count("/closed") == 0 and site.count("/open/a") == 1
    assert items == [site.url("/open/a")]
    assert 'line 2: "Content-Signal: search=yes, ai-train=no"' in spider.dropped[urls[0]]
    assert stats["robotstxt/forbidden/usage"] == 1
    _, items, _ = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["search"]})
    assert sorted(items) == sorted(urls)


class BreaksTdmRep:
    """A downloader middleware with a bug that shows only on tdmrep.json requests."""

    def process_request(self, request: Any, spider: Any = None) -> None:
        if request.url.endswith("/.well-known/tdmrep.json"):
            raise AttributeError("'NoneType' object has no attribute 'simulated'")


@pytest.mark.parametrize("queue", [QUEUE, {}], ids=["scheduler_queue", "other_queue"])
@deferred_f_from_coro_f
async def test_internal_error_fetching_tdmrep_json_drops_and_is_reported_as_one(
    sites, caplog, queue: dict[str, str]
) -> None:
    """A bug is not the site's answer: never read as "nothing stated" (which would let
    every request through), nor retried in a loop. Logged once at ERROR with its
    traceback; the site's requests are dropped, counted as internal errors."""
    import logging

    from .conftest import crawl

    site = sites(routes={"/robots.txt": ALLOW_ALL}, default=PAGE)
    middlewares = {
        **BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"],
        f"{__name__}.BreaksTdmRep": 50,
    }
    urls = [site.url(f"/p/{n}") for n in range(3)]
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "DOWNLOADER_MIDDLEWARES": middlewares}
    with caplog.at_level(logging.WARNING):
        spider, stats = await crawl(urls, {**settings, **queue}, allow_errors=True)
    assert spider.fetched == [] and [path for path in site.hits if _is_page(path)] == []
    assert all("internal error" in reason for reason in spider.dropped.values())
    assert len(spider.dropped) == 3
    assert stats["robotstxt/internal_error"] == 1
    assert stats["robotstxt/forbidden/internal_error"] == 3
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None


@deferred_f_from_coro_f
async def test_tdmrep_json_downloads_in_flight_are_bounded(sites) -> None:
    """At most ROBOTSTXT_CONCURRENT_DOWNLOADS tdmrep.json downloads at once, as for robots.txt."""
    from .server import delayed

    many = [
        sites(
            routes={
                "/robots.txt": ALLOW_ALL,
                "/.well-known/tdmrep.json": delayed(0.3, text("[]")),
            },
            default=PAGE,
        )
        for _ in range(6)
    ]
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTSTXT_CONCURRENT_DOWNLOADS": 2, **QUEUE}
    _, items, _ = await usage_crawl([site.url("/") for site in many], settings)
    assert len(items) == 6
    starts = sorted(
        _times(site, lambda path: path == "/.well-known/tdmrep.json")[0] for site in many
    )
    # at most 2 at a time: the 3rd starts only after the 1st answered (0.3 s)
    assert starts[2] - starts[0] >= 0.25


# -- tdmrep.json read as robots.txt is: redirects, retries, limits, values ---------------

RESERVE_ALL = text('[{"location": "/*", "tdm-reservation": 1}]', content_type=b"application/json")


@deferred_f_from_coro_f
async def test_2_3_1_2_a_redirected_tdmrep_json_is_followed_and_obeyed(sites, caplog) -> None:
    """RFC 9309 2.3.1.2 (as for robots.txt): a 301 to the file is followed."""
    from .server import redirect

    routes = {
        "/robots.txt": ALLOW_ALL,
        "/.well-known/tdmrep.json": redirect("/tdm/rules.json"),
        "/tdm/rules.json": RESERVE_ALL,
    }
    site = sites(routes=routes, default=PAGE)
    urls = [site.url(f"/p/{n}") for n in range(3)]
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTS_META_OBEY": False}
    spider, items, stats = await usage_crawl(urls, settings)
    assert items == [] and not any(hit.startswith("/p/") for hit in site.hits)
    assert site.count("/.well-known/tdmrep.json") == 1 and site.count("/tdm/rules.json") == 1
    assert stats["robotstxt/forbidden/usage"] == 3
    assert "tdmrep.json" in spider.dropped[urls[0]]


@deferred_f_from_coro_f
async def test_2_3_1_2_tdmrep_json_redirects_at_most_five_hops_and_only_http(sites, caplog) -> None:
    from .server import redirect

    hops = {f"/r{n}": redirect(f"/r{n + 1}") for n in range(6)}
    routes = {
        "/robots.txt": ALLOW_ALL,
        "/.well-known/tdmrep.json": redirect("/r0"),
        **hops,
        "/r6": RESERVE_ALL,
    }
    site = sites(routes=routes, default=PAGE)
    other = sites(
        routes={
            "/robots.txt": ALLOW_ALL,
            "/.well-known/tdmrep.json": redirect("file:///etc/passwd"),
        },
        default=PAGE,
    )
    urls = [site.url("/p"), other.url("/p")]
    caplog.set_level("INFO", logger="scrapy_rfc9309")
    _, items, stats = await usage_crawl(urls, {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert sorted(items) == sorted(urls)  # nothing stated by either
    assert site.count("/r4") == 1 and site.count("/r5") == 0 and site.count("/r6") == 0
    assert stats["robotstxt/tdmrep/redirect_refused"] == 1
    assert "tdmrep.json redirect to file:///etc/passwd refused (a file: URL)" in caplog.text


@deferred_f_from_coro_f
async def test_command_follows_a_redirected_tdmrep_json(sites, tmp_path) -> None:
    from scrapy_rfc9309.components.command._command import EXIT_USAGE_REFUSED

    from .server import redirect
    from .test_command import scrapy

    routes = {
        "/robots.txt": ALLOW_ALL,
        "/.well-known/tdmrep.json": redirect("/tdm/rules.json"),
        "/tdm/rules.json": RESERVE_ALL,
    }
    site = sites(routes=routes)
    output, code = await scrapy(site.url("/a"), "--purpose", "train-ai", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    assert f"(HTTP 200, 1 rule (redirected to {site.url('/tdm/rules.json')}))" in output
    assert "HTTP 301" not in output


@pytest.mark.parametrize(
    ("value", "reserved"),
    [
        ("1", True),
        ("true", None),
        ("1.0", None),
        ('"1"', None),
        ("0", False),
        ("false", None),
        ("2", None),
        ('"yes"', None),
        ("null", None),
    ],
)
def test_tdm_reservation_only_the_integers_0_and_1_state_anything(
    value: str, reserved: bool | None
) -> None:
    """TDMRep final report: tdm-reservation is 0 or 1; "Other values are considered
    protocol errors. In such a case the TDM Agents MUST consider that the value of
    tdm-reservation is unset": ``true``, ``1.0``, ``"1"`` state nothing (each with a
    finding), and never a permission."""
    rules = parse_tdmrep(f'[{{"location": "/*", "tdm-reservation": {value}}}]'.encode())
    preference = rules.usage("https://e.com/a").get("train-ai")
    assert (None if preference is None else not preference.allowed) is reserved
    assert rules.ignored == (reserved is None)
    assert len(rules.findings) == (reserved is None)
    if reserved is None:
        assert "is not the integer 0 or 1" in rules.findings[0]
    # A header value is text: "1" and "0" (a quoted "1" is read as the header 1).
    header = response_usage([("tdm-reservation header", value.strip('"'))]).get("train-ai")
    meta = response_usage([('<meta name="tdm-reservation">', value.strip('"'))]).get("ai-use")
    for stated in (header, meta):
        if value.strip('"') in ("1", "0"):
            assert stated is not None and stated.allowed is (value.strip('"') == "0")
        else:
            assert stated is None


@deferred_f_from_coro_f
async def test_tdmrep_json_true_reserves_nothing_in_a_real_crawl(sites, caplog) -> None:
    """TDMRep final report: values other than 0 and 1 "are considered protocol
    errors" (unset): ``"tdm-reservation": true`` refuses nothing, said at INFO."""
    routes = {
        "/robots.txt": ALLOW_ALL,
        "/.well-known/tdmrep.json": text('[{"location": "/*", "tdm-reservation": true}]'),
    }
    site = sites(routes=routes, default=PAGE)
    caplog.set_level(logging.INFO, logger="scrapy_rfc9309")
    _, items, stats = await usage_crawl([site.url("/p")], {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert items == [site.url("/p")] and site.count("/p") == 1
    assert "robotstxt/forbidden/usage" not in stats
    assert any(
        "state nothing" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO
    )


@deferred_f_from_coro_f
async def test_unreadable_and_oversized_tdmrep_json_are_logged_with_why(sites, caplog) -> None:
    from scrapy_rfc9309.parser._tdmrep import MAX_RULES

    broken = sites(
        routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": text('[{"location": "/')},
        default=PAGE,
    )
    big = sites(
        routes={
            "/robots.txt": ALLOW_ALL,
            "/.well-known/tdmrep.json": text(
                b"[" + b'{"location": "/x", "tdm-reservation": 0},' * 2000 + b"{}]"
            ),
        },
        default=PAGE,
    )
    many = sites(
        routes={
            "/robots.txt": ALLOW_ALL,
            "/.well-known/tdmrep.json": text(
                "[" + ",".join(['{"location": "/x", "tdm-reservation": 0}'] * (MAX_RULES + 5)) + "]"
            ),
        },
        default=PAGE,
    )
    urls = [s.url(f"/p/{n}") for s in (broken, big, many) for n in range(2)]
    caplog.set_level("INFO", logger="scrapy_rfc9309")
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "ROBOTSTXT_MAX_SIZE": 50_000}
    _, items, _ = await usage_crawl(urls, settings)
    assert sorted(items) == sorted(urls)
    messages = [r.getMessage() for r in caplog.records if r.name == "scrapy_rfc9309.usage"]
    unreadable = [m for m in messages if "could not be read (not valid JSON" in m]
    assert len(unreadable) == 1 and broken.url("/.well-known/tdmrep.json") in unreadable[0]
    assert any(
        "tdmrep.json larger than ROBOTSTXT_MAX_SIZE (50000 bytes), not read" in m for m in messages
    )
    assert any(f"5 rules past the first {MAX_RULES}, not read" in m for m in messages)


def test_a_single_tdmrep_json_object_is_no_array_of_rules() -> None:
    """TDMRep final report: the file is an array of rules; a lone object is
    malformed, and states nothing (as a file that is not JSON)."""
    single = parse_tdmrep(b'{"location": "/*", "tdm-reservation": 1}')
    assert single.rules == () and single.matcher is None
    assert single.error == "a single JSON object, not an array of rules"
    assert single.usage("https://e.com/a") is NO_PREFERENCES
    assert parse_tdmrep(b'[{"location": "/*", "tdm-reservation": 1}]').error == ""


@deferred_f_from_coro_f
async def test_a_single_object_tdmrep_json_states_nothing_with_a_warning(sites, caplog) -> None:
    """A real crawl: a tdmrep.json that is one object, not an array, reserves
    nothing (the page's items are kept) and is logged as unreadable at WARNING."""
    routes = {
        "/robots.txt": ALLOW_ALL,
        "/.well-known/tdmrep.json": text(
            '{"location": "/*", "tdm-reservation": 1}', content_type=b"application/json"
        ),
    }
    site = sites(routes=routes, default=PAGE)
    caplog.set_level(logging.INFO, logger="scrapy_rfc9309")
    _, items, stats = await usage_crawl([site.url("/p")], {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert items == [site.url("/p")] and site.count("/p") == 1
    assert site.count("/.well-known/tdmrep.json") == 1
    assert "robotstxt/forbidden/usage" not in stats
    warned = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == "scrapy_rfc9309.usage"
    ]
    assert warned == [
        "tdmrep.json could not be read (a single JSON object, not an array of rules): "
        f"{site.url('/.well-known/tdmrep.json')}; nothing stated for its site"
    ]


@deferred_f_from_coro_f
async def test_a_soft_404_tdmrep_json_is_no_file_and_no_warning(sites, caplog, tmp_path) -> None:
    """Many sites answer any missing path with an HTML page and a 200: such a
    tdmrep.json states nothing, as a 404, with no WARNING for every site of a
    broad crawl; the command says what it was."""
    from .test_command import scrapy

    html = text("<!doctype html><title>Not found</title>", content_type=b"text/html")
    site = sites(routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": html}, default=PAGE)
    caplog.set_level(logging.INFO, logger="scrapy_rfc9309")
    _, items, _ = await usage_crawl([site.url("/p")], {"ROBOTSTXT_PURPOSES": ["train-ai"]})
    assert items == [site.url("/p")]
    assert not [
        r for r in caplog.records if r.levelno >= logging.WARNING and "tdmrep" in r.getMessage()
    ]
    output, code = await scrapy(site.url("/a"), "--purpose", "train-ai", cwd=tmp_path)
    assert code == 0, output
    assert "(HTTP 200: an HTML page, not a tdmrep.json, nothing stated)" in output


@deferred_f_from_coro_f
async def test_command_says_why_a_tdmrep_json_could_not_be_read(sites, tmp_path) -> None:
    from .test_command import scrapy

    routes = {"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": text("{not json")}
    site = sites(routes=routes)
    output, code = await scrapy(site.url("/a"), "--purpose", "train-ai", cwd=tmp_path)
    assert code == 0, output
    assert "(HTTP 200: could not be read (not valid JSON: " in output


@deferred_f_from_coro_f
async def test_2_3_1_4_tdmrep_json_503_is_not_retried_by_scrapy_and_is_logged(
    sites, caplog
) -> None:
    """RFC 9309 2.3.1.4 as for robots.txt: one request, the package's own log line
    and stat, no RetryMiddleware "Gave up retrying" ERROR."""
    from .server import hang, status

    down = sites(
        routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": status(503)}, default=PAGE
    )
    slow = sites(
        routes={"/robots.txt": ALLOW_ALL, "/.well-known/tdmrep.json": hang()}, default=PAGE
    )
    caplog.set_level("INFO", logger="scrapy_rfc9309")
    settings = {"ROBOTSTXT_PURPOSES": ["train-ai"], "DOWNLOAD_TIMEOUT": 1, "RETRY_ENABLED": True}
    _, items, stats = await usage_crawl([down.url("/p"), slow.url("/p")], settings)
    assert sorted(items) == sorted([down.url("/p"), slow.url("/p")])
    assert down.count("/.well-known/tdmrep.json") == 1
    assert slow.count("/.well-known/tdmrep.json") == 1
    assert stats["robotstxt/tdmrep/response_status_count/503"] == 1
    assert "retry/count" not in stats
    assert any(
        r.name == "scrapy_rfc9309.usage" and "tdmrep.json unreachable (HTTP 503)" in r.getMessage()
        for r in caplog.records
    )


def test_2_2_4_usage_lines_past_the_limits_are_warned_and_linted() -> None:
    from scrapy_rfc9309.parser._usage_values import MAX_MEMBERS

    many = b"Content-Usage: train-ai=n\n" * (MAX_RECORDS + 1)
    wide = b"Content-Signal: " + b", ".join([b"search=yes"] * (MAX_MEMBERS + 1)) + b"\n"
    robots = RobotsTxt.parse(b"User-agent: *\nAllow: /\n" + wide + many)
    warnings = dict(robots.warnings)
    assert (
        warnings[3]
        == f"Content-Signal: more than {MAX_MEMBERS} members; only the first {MAX_MEMBERS} are read"
    )
    assert "more than 1,000 usage lines" in warnings[3 + MAX_RECORDS]
    assert (3 + MAX_RECORDS, warnings[3 + MAX_RECORDS]) in lint(robots)
    assert len(robots.warnings) == 2


@deferred_f_from_coro_f
async def test_meta_only_purposes_say_so_at_start_and_the_summary_claims_no_robots_txt(
    sites, caplog
) -> None:
    """ROBOTSTXT_OBEY off, ROBOTS_META_OBEY on: headers and meta only; robots.txt and
    tdmrep.json are neither fetched nor claimed as checked."""
    routes = {
        "/robots.txt": ROBOTS,
        "/.well-known/tdmrep.json": RESERVE_ALL,
        "/a": page_with_headers(html_page(), [(b"Content-Usage", b"train-ai=n")]),
        "/b": page_with_headers(html_page(), [(b"Content-Usage", b"train-ai=n")]),
    }
    site = sites(routes=routes, default=PAGE)
    settings = {
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "ROBOTSTXT_OBEY": False,
        "ROBOTS_META_OBEY": True,
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0},
    }
    with caplog.at_level("INFO"):
        _, items, _ = await usage_crawl([site.url("/a"), site.url("/b"), site.url("/c")], settings)
    assert items == [site.url("/c")]
    assert site.count("/robots.txt") == 0 and site.count("/.well-known/tdmrep.json") == 0
    messages = [r.getMessage() for r in caplog.records]
    assert any(
        "ROBOTSTXT_OBEY is off: only response headers and meta" in m and r.levelname == "INFO"
        for m, r in zip(messages, caplog.records, strict=True)
    )
    (summary,) = [m for m in messages if "Declared purposes (train-ai" in m]
    assert "dropped before download" not in summary
    assert "robots.txt and tdmrep.json not read (ROBOTSTXT_OBEY is off)" in summary
    assert (
        "2 pages refused a purpose once downloaded (by their headers or meta, or tdmrep.json "
        "left to the page; 2 items dropped)"
    ) in summary


@deferred_f_from_coro_f
async def test_command_empty_purpose_is_a_usage_error_and_only_refused_purposes_are_named(
    sites, tmp_path
) -> None:
    from scrapy_rfc9309.components.command._command import EXIT_ERROR, EXIT_USAGE_REFUSED

    from .test_command import json_lines, scrapy

    routes = {"/robots.txt": COMMAND_ROBOTS, "/.well-known/tdmrep.json": COMMAND_TDMREP}
    site = sites(routes=routes)
    output, code = await scrapy(
        site.url("/no-ai/x"), "--purpose", "", "-s", "ROBOTSTXT_PURPOSES=train-ai", cwd=tmp_path
    )
    assert code == EXIT_ERROR and "--purpose: no purpose named" in output, output
    output, code = await scrapy(site.url("/no-ai/x"), "--purpose", "train-ai,search", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    assert (
        'purposes:    train-ai: REFUSED, train-ai=n by robots.txt line 3: "Content-Usage: '
        '/no-ai/ train-ai=n", search: not refused' in output
    )
    output, code = await scrapy(
        site.url("/no-ai/x"), "--purpose", "search", "--purpose", "ai-use", "--json", cwd=tmp_path
    )
    (answer,) = json_lines(output)
    assert code == 0 and answer["refused"] is None and "refusals" not in answer


# -- the current specifications (SPEC_VERSIONS) --------------------------------------------


def _header(value: str, *more: str) -> dict[str, str]:
    signals = [("Content-Usage header", text) for text in (value, *more)]
    return {c: p.value for c, p in response_usage(signals).preferences.items()}


def _line(value: str) -> dict[str, str]:
    return prefs(RobotsTxt.parse(f"User-agent: *\nContent-Usage: {value}\n"), "/x")


def test_vocab_no_term_nests_and_unknown_labels_are_ignored() -> None:
    """draft-ietf-aipref-vocab-08: the categories are train-ai and search; "no term
    nests within another", and unknown labels MUST be ignored: ``bots=n`` (an
    earlier draft's parent of every category) refuses nothing, nor does
    ``train-genai=n`` (no longer a category)."""
    for read in (_header, _line):
        assert read("bots=n") == {}
        assert read("train-genai=n") == {}
        assert read("bots=n, search=y") == {"search": "y"}
    usage = response_usage([("Content-Usage header", "bots=n")])
    assert usage.refusal(["train-ai", "search", "ai-use"]) is None


def test_vocab_dictionary_last_duplicate_key_applies() -> None:
    """draft-ietf-aipref-vocab-08 reads the value as an RFC 9651 Dictionary, where
    "when duplicate Dictionary keys are encountered, all but the last instance are
    ignored" (RFC 9651 4.2.2): ``train-ai=n, train-ai=y`` allows."""
    for read in (_header, _line):
        assert read("train-ai=n, train-ai=y") == {"train-ai": "y"}
        assert read("train-ai=y, train-ai=n") == {"train-ai": "n"}


def test_vocab_draft_example_leaves_every_preference_unknown() -> None:
    """draft-ietf-aipref-vocab-08's example ``train-ai=y, train-ai, search=n,
    search="n"``: the last ``train-ai`` is a bare key (boolean true, not the
    Token y or n) and the last ``search`` a String: every preference unknown."""
    value = 'train-ai=y, train-ai, search=n, search="n"'
    assert _header(value) == {}
    assert _line(value) == {}
    assert parse_content_usage(value) == []


def test_vocab_parameters_are_ignored() -> None:
    """draft-ietf-aipref-vocab-08: parameters on a member are ignored."""
    assert _header("train-ai=n;q=1, search=y;x") == {"train-ai": "n", "search": "y"}


@pytest.mark.parametrize(
    "value",
    ["Train-AI=n", "train-ai=n,", "train-ai=n search=y", "train-ai=n, ,search=y", "train-ai=é"],
    ids=["uppercase-key", "trailing-comma", "no-comma", "empty-member", "non-ascii"],
)
def test_vocab_a_value_that_does_not_parse_leaves_everything_unknown(value: str) -> None:
    """draft-ietf-aipref-vocab-08: a Content-Usage value that is not an RFC 9651
    Dictionary (uppercase keys included) leaves every preference unknown; the
    linter names the reason at the robots.txt line."""
    assert _header(value) == {}
    robots = RobotsTxt.parse(f"User-agent: *\nContent-Usage: {value}\n")
    assert prefs(robots, "/x") == {}
    (finding,) = [text for line, text in lint(robots) if line == 2]
    assert finding.startswith("Content-Usage: not an RFC 9651 Dictionary: ")


def test_vocab_several_header_field_lines_are_one_dictionary() -> None:
    """RFC 9651 4.2: field lines are combined into one value before parsing, so
    the last ``train-ai`` of the last Content-Usage line applies."""
    assert _header("train-ai=n", "search=y, train-ai=y") == {"train-ai": "y", "search": "y"}
    assert _header("train-ai=n", "") == {"train-ai": "n"}  # an empty line adds nothing


def test_attach_robots_txt_path_only_when_the_value_starts_with_a_slash() -> None:
    """draft-ietf-aipref-attach-05: robots.txt grammar ``rule =/ content-usage``, a
    path only when the value starts with ``/`` ("Content-Usage: /ai-ok/ train-ai=y")."""
    robots = RobotsTxt.parse(b"User-agent: *\nContent-Usage: /ai-ok/ train-ai=y\n")
    assert prefs(robots, "/ai-ok/a") == {"train-ai": "y"}
    assert prefs(robots, "/other") == {}
    assert _line("ai-ok/ train-ai=y") == {}  # no path, and no Dictionary either


def test_content_signal_keeps_its_own_reading_and_ai_input_is_ai_use() -> None:
    """Cloudflare Content Signals Policy: ``Content-Signal: search=yes, ai-input=no,
    ai-train=no``; ``ai-train`` is train-ai, ``search`` is search, ``ai-input`` is
    the AIPREF vocabulary's ``ai-use`` (draft-ietf-aipref-vocab-08: "using an asset
    as input to a generative AI model"); values yes / no."""
    robots = RobotsTxt.parse(
        b"User-agent: *\nContent-Signal: search=yes, ai-input=no, ai-train=no\n"
    )
    assert prefs(robots, "/") == {"search": "y", "ai-use": "n", "train-ai": "n"}
    assert VOCABULARY[("content-signal", "ai-input")] == "ai-use"
    assert ("content-usage", "ai-input") not in VOCABULARY
    assert lint(robots) == []


@pytest.mark.parametrize(
    ("name", "replacement"),
    [("train-genai", "use train-ai"), ("bots", "declare the specific purposes instead")],
)
def test_purposes_setting_refuses_retired_names_saying_what_replaced_them(
    name: str, replacement: str
) -> None:
    """draft-ietf-aipref-vocab-08 has train-ai and search only ("no term nests
    within another"): ``train-genai`` and ``bots`` are refused at start-up."""
    from scrapy.settings import Settings

    with pytest.raises(
        SettingError, match=rf"'{name}' is no longer a usage category: {replacement}"
    ):
        RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_PURPOSES": [name, "search"]}))


def test_spec_versions_table_is_the_documented_table() -> None:
    """The versions followed are named in one table (SPEC_VERSIONS); the
    documentation's usage page names each."""
    from pathlib import Path

    from scrapy_rfc9309.parser._usage import SPEC_VERSIONS

    page = Path(__file__).parent.parent / "docs" / "usage.md"
    if not page.exists():
        pytest.skip("run from a copy of the tests, without docs/")
    text = page.read_text(encoding="utf-8")
    assert {spec.version for spec in SPEC_VERSIONS} >= {
        "draft-ietf-aipref-vocab-08",
        "draft-ietf-aipref-attach-05",
        "draft-illyes-repext-03",
    }
    for spec in SPEC_VERSIONS:
        assert f"| {spec.name} | {spec.version} | {spec.url} |" in text, spec


def test_lint_says_where_usage_lines_group_differently_from_the_attach_grammar() -> None:
    """RFC 9309 2.2.4 (this parser's grouping): a Content-Usage line does not end a
    group; draft-ietf-aipref-attach-05's robots.txt grammar has ``rule =/
    content-usage``, under which the next user-agent line starts a new group."""
    body = b"User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n"
    robots = RobotsTxt.parse(body)
    assert prefs(robots, "/", "b") == {"train-ai": "n"}  # one group, as RFC 9309 reads it
    (finding,) = lint(robots)
    assert finding[0] == 3
    assert "rule =/ content-usage" in finding[1] and "draft-ietf-aipref-attach-05" in finding[1]


def test_tdmrep_the_first_matching_rule_in_file_order_decides() -> None:
    """TDMRep final report: "The most specific match found MUST be used. The most
    specific match is the first in sequence." ``/`` listed first matches ``/news/a``
    first: unreserved (before: the longest location, ``/news/``, reserved it)."""
    rules = parse_tdmrep(
        b'[{"location": "/", "tdm-reservation": 0}, {"location": "/news/", "tdm-reservation": 1}]'
    )
    preference = rules.usage("/news/a").get("train-ai")
    assert preference is not None and preference.allowed
    assert preference.rule == 'location "/", tdm-reservation 0'


def test_tdmrep_an_unset_first_match_states_nothing() -> None:
    """TDMRep final report: a value other than 0 or 1 is "considered unset": the
    first matching rule decides, and it states nothing (no later rule is read)."""
    rules = parse_tdmrep(
        b'[{"location": "/a", "tdm-reservation": "1"}, {"location": "/", "tdm-reservation": 1}]'
    )
    assert rules.usage("/a/x") == NO_PREFERENCES
    assert rules.usage("/b").refusal(["train-ai"]) is not None
    assert rules.ignored == 1 and "entry 1" in rules.findings[0]


def test_tdmrep_policy_is_carried() -> None:
    """TDMRep final report: ``tdm-policy`` is the URL of the rights holder's policy;
    it is carried in the Preference (and its description, and the JSON form)."""
    rules = parse_tdmrep(
        b'[{"location": "/", "tdm-reservation": 1, "tdm-policy": "https://e.com/policy.json"}]'
    )
    usage = rules.usage("/x")
    refusal = usage.refusal(["ai-use"])
    assert refusal is not None and refusal.policy == "https://e.com/policy.json"
    assert "policy https://e.com/policy.json" in refusal.describe()
    assert usage.as_dict()["train-ai"]["policy"] == "https://e.com/policy.json"
    assert Preference("search", True, "robots.txt").policy is None


# -- the texts of late 2026: vocab-08's ai-use, Content Signals' use and header ---------------


@pytest.mark.parametrize(
    "read",
    [pytest.param(_header, id="header"), pytest.param(_line, id="robots-txt")],
)
def test_vocab_08_ai_use_is_a_category(read: Any) -> None:
    """draft-ietf-aipref-vocab-08 adds the AI Use category, label ``ai-use``:
    "using an asset as input to a generative AI model, where the asset is not
    directly provided by the user". ``Content-Usage: ai-use=n`` (robots.txt line
    and header alike) refuses it; it nests in nothing (``train-ai=n`` leaves it
    unknown)."""
    assert read("ai-use=n") == {"ai-use": "n"}
    assert read("train-ai=n") == {"train-ai": "n"}
    assert read("ai-use=n, train-ai=y") == {"ai-use": "n", "train-ai": "y"}
    assert {"train-ai", "ai-use", "search"} == CATEGORIES
    assert VOCABULARY[("content-usage", "ai-use")] == "ai-use"


def test_vocab_08_search_overrides_ai_training_and_ai_use() -> None:
    """draft-ietf-aipref-vocab-08: "Search now overrides any usage that falls into
    other categories, including AI Training and AI Use." A declared ``search`` is
    governed by ``search`` alone: ``train-ai=n, ai-use=n, search=y`` allows it and
    refuses the other two; ``search=n`` refuses it."""
    usage = response_usage([("Content-Usage header", "train-ai=n, ai-use=n, search=y")])
    decision = decide_usage(UsageSources(header=usage), ["search", "train-ai", "ai-use"])
    assert set(decision.refusals) == {"train-ai", "ai-use"}
    assert usage.refusal(["search"]) is None
    refused = response_usage([("Content-Usage header", "search=n, train-ai=y, ai-use=y")])
    assert refused.refusal(["search"]) is not None


def test_ai_use_is_declarable_and_ai_input_is_declared_as_ai_use() -> None:
    """``ai-use`` is declared in ROBOTSTXT_PURPOSES (the settings check takes the
    vocabulary's categories); ``ai-input``, Content-Signal's key and this package's
    earlier purpose, is declared as ``ai-use``, the category it maps to, with a
    WARNING; TDMRep's reservation refuses train-ai and ai-use."""
    from scrapy.settings import Settings

    read = RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_PURPOSES": "ai-use, search"}))
    assert read.purposes == ("ai-use", "search")
    assert read.warnings == ()
    aliased = RobotsTxtSettings.from_settings(
        Settings({"ROBOTSTXT_PURPOSES": ["ai-input", "ai-use"]})
    )
    assert aliased.purposes == ("ai-use",)
    # reading is pure: the warning is on the result, logged by the crawler's read
    assert [w for w in aliased.warnings if "'ai-input' is Content-Signal's name" in w]
    assert "ai-input" not in RETIRED_PURPOSES
    assert TDM_CATEGORIES == ("train-ai", "ai-use") and needs_tdmrep(["ai-use"])


def test_content_signal_use_key_is_read_and_reported_never_enforced() -> None:
    """Cloudflare's Content Signals Policy: the ``use`` key, ``immediate`` ("Interact,
    but store and reuse nothing."), ``reference`` ("Index, excerpt, and link back.")
    or ``full`` ("Summarize and reproduce."), as managed files write it:
    ``Content-Signal: search=yes,ai-train=no,use=reference``. It is read (a
    ``use`` preference with its level, line and rule) and refuses no purpose."""
    robots = RobotsTxt.parse(
        b"User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\n"
        b"Content-Signal: /live/ use=immediate\n"
    )
    assert prefs(robots, "/x") == {"search": "y", "train-ai": "n", "use": "reference"}
    assert prefs(robots, "/live/x")["use"] == "immediate"
    usage = robots.usage(url="/x", agent="ExampleBot")
    level = usage.get("use")
    assert level is not None and (level.line, level.level) == (2, "reference")
    assert usage.as_dict()["use"]["value"] == "reference"
    assert usage.refusal(sorted(CATEGORIES - {"train-ai"})) is None
    assert USE_LEVELS == ("immediate", "reference", "full")
    assert content_signal_use("use=full, use=immediate") == "immediate"  # the narrowest
    assert content_signal_use("use=everything") is None  # not a level: states nothing
    assert lint(robots) == []
    (finding,) = lint(RobotsTxt.parse(b"User-agent: *\nContent-Signal: use=all\n"))
    assert finding == (
        2,
        "Content-Signal: value 'all' of use is not immediate, reference, full; ignored",
    )
    (finding,) = lint(RobotsTxt.parse(b"User-agent: *\nContent-Signal: reuse=yes\n"))
    assert "(known: ai-input, ai-train, search, use)" in finding[1]


def test_content_signal_response_header_is_read_like_the_robots_txt_line() -> None:
    """The Content Signals Policy's ``Content-Signal`` sent as a response header
    (``content-signal: ai-train=yes, search=yes, ai-input=yes``) is read as the
    robots.txt line is; a non-standard value (``ai-train=disallow``) is not one of
    the policy's ``yes`` / ``no``: it states nothing (unknown, not a refusal)."""
    headers = [
        ("Content-Signal", "ai-train=disallow, search=yes"),
        ("Content-Signal", "ai-input=no, use=reference"),
    ]
    signals = read_usage_signals(200, headers, b"")
    assert ("Content-Signal header", "ai-train=disallow, search=yes") in signals
    usage = response_usage(signals)
    assert {c: p.value for c, p in usage.preferences.items()} == {
        "search": "y",
        "ai-use": "n",
        "use": "reference",
    }
    refusal = usage.refusal(["train-ai", "ai-use"])
    assert refusal is not None and refusal.category == "ai-use"
    assert refusal.source == "Content-Signal header"
    assert (
        refusal.rule == "Content-Signal: ai-train=disallow, search=yes, ai-input=no, use=reference"
    )
    assert response_usage([("Content-Signal header", "ai-train=disallow")]) == NO_PREFERENCES
    line = RobotsTxt.parse(b"User-agent: *\nContent-Signal: ai-train=disallow, ai-input=no\n")
    assert prefs(line, "/") == {"ai-use": "n"}
    # a header read only in part refuses what it can state (fail closed)
    unread = unread_usage({"Content-Signal header": ["MAX_HEADER_VALUES"]})
    assert set(unread.preferences) == {"train-ai", "ai-use", "search"}


#: A robots.txt and pages that use each late-2026 form: vocab-08's ai-use on a path,
#: Content-Signal's use key, google/robotstxt's known-but-unsupported Host; the
#: Content-Signal response header (with a non-standard value) and Robots-Tag.
LATE_2026_ROBOTS = (
    "User-agent: *\n"
    "Allow: /\n"
    "Content-Usage: /cu/ ai-use=n\n"  # 3
    "Content-Signal: search=yes, ai-train=no, use=reference\n"  # 4
    "Host: example.com\n"  # 5
)
LATE_2026_ROUTES = {
    "/robots.txt": text(LATE_2026_ROBOTS),
    # Content-Signal header: ai-input=no refuses ai-use; Robots-Tag: noindex for us
    "/signal": page_with_headers(
        html_page(),
        [
            (b"Content-Signal", b"ai-train=disallow, ai-input=no, use=immediate"),
            (b"Robots-Tag", b"*;nosnippet, examplebot;noindex"),
        ],
    ),
    # a non-standard value refuses nothing; nosnippet only
    "/ok": page_with_headers(
        html_page(), [(b"Content-Signal", b"ai-train=disallow"), (b"Robots-Tag", b"*;nosnippet")]
    ),
    # Robots-Tag noindex alone, addressed to us (the draft's own example form)
    "/noindex": page_with_headers(
        html_page(), [(b"Robots-Tag", b"*;noarchive, ExampleBot;noindex")]
    ),
}


class DirectivesSpider(ItemSpider):
    def parse(self, response: Any) -> Any:
        self.directives = {**getattr(self, "directives", {})}
        self.directives[response.url] = response.meta.get("robots_meta")
        yield from super().parse(response)


@deferred_f_from_coro_f
async def test_late_2026_forms_crawl_and_command_agree(sites, tmp_path, caplog) -> None:
    """``scrapy robotstxt --page --purpose ai-use`` and a real crawl agree on a
    robots.txt and pages that use each new form: ``Content-Usage: /cu/ ai-use=n``
    (draft-ietf-aipref-vocab-08's AI Use) drops /cu/a before download; the
    ``Content-Signal`` response header's ``ai-input=no`` refuses ai-use after it
    (its ``ai-train=disallow`` states nothing); Content-Signal's ``use`` level is
    reported, never enforced; ``Robots-Tag`` (draft-illyes-repext-03) ``noindex``
    drops items as X-Robots-Tag's does, ``nosnippet`` is read; lint names ``Host``
    a known but unsupported tag (google/robotstxt)."""
    from scrapy_rfc9309.components.command._command import EXIT_USAGE_REFUSED

    from .test_command import PAGES_READ, json_lines, scrapy

    site = sites(routes=LATE_2026_ROUTES)
    urls = [site.url(path) for path in ("/cu/a", "/signal", "/ok", "/noindex")]
    report = tmp_path / "report.json"
    settings = {
        "ROBOTSTXT_PURPOSES": ["ai-use"],
        "ROBOTSTXT_USER_AGENT": "ExampleBot",
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 0},
        "ROBOTSTXT_REPORT_FILE": str(report),
    }
    merged = {**BASE_SETTINGS, "SPIDER_MIDDLEWARES": {"scrapy_rfc9309.RobotsMetaMiddleware": 950}}
    crawler = get_crawler(DirectivesSpider, {**merged, **settings})
    items: list[str] = []

    def scraped(item: Any) -> None:  # held here: signal receivers are weak references
        items.append(item["url"])

    crawler.signals.connect(scraped, signal=signals.item_scraped)
    with caplog.at_level("INFO"):
        await _compat.crawl(crawler, urls=urls)
    spider = crawler.spider
    assert isinstance(spider, DirectivesSpider) and crawler.stats is not None
    stats = crawler.stats.get_stats()
    # what the server served: /cu/a never
    assert [site.count(path) for path in ("/cu/a", "/signal", "/ok", "/noindex")] == [0, 1, 1, 1]
    assert items == [site.url("/ok")]
    assert 'line 3: "Content-Usage: /cu/ ai-use=n"' in spider.dropped[site.url("/cu/a")]
    assert stats["robotstxt/forbidden/usage"] == 1
    assert stats["robotsmeta/pages/usage"] == 1 and stats["robotsmeta/usage"] == 1
    assert stats["robotsmeta/pages/noindex"] == 2 and stats["robotsmeta/noindex"] == 1
    assert spider.directives[site.url("/signal")] == {"noindex", "nosnippet"}
    assert spider.directives[site.url("/ok")] == {"nosnippet"}
    assert spider.directives[site.url("/noindex")] == {"noindex", "noarchive"}
    ok, signal = spider.usage[site.url("/ok")], spider.usage[site.url("/signal")]
    assert ok.as_dict()["use"]["value"] == "reference" and ok.get("ai-use") is None
    assert signal.get("ai-use").source == "Content-Signal header"
    assert signal.get("use").value == "immediate"  # the narrowest stated
    assert "train-ai" in ok.as_dict()  # robots.txt's ai-train=no; the header's disallow: nothing
    # the close summary and the JSON report name both refusals with their sources
    summary = next(r.getMessage() for r in caplog.records if "robots.txt summary" in r.getMessage())
    by_header = 'ai-use=n (Content-Signal header: "Content-Signal: ai-train=disallow, ai-input=no'
    assert f'{site.origin}: ai-use=n (robots.txt line 3: "Content-Usage: /cu/ ai-use=n")' in summary
    assert f"1 item dropped: {site.origin}: {by_header}" in summary
    (record,) = [e for e in json.loads(report.read_text())["sites"] if e["site"] == site.origin]
    assert any(entry["preference"].startswith(by_header) for entry in record["usage_dropped"])
    # and every source's statements the pages were read with, Content-Signal's use level too
    stated = {entry["preference"]: entry["pages"] for entry in record["usage_stated"]}
    assert any(text.startswith("use=immediate (Content-Signal header") for text in stated)
    assert any(text.startswith("use=reference (robots.txt line") for text in stated)
    assert any(text.startswith(by_header) for text in stated)

    args = ("--agent", "ExampleBot", "--page", "--purpose", "ai-use", *PAGES_READ)
    output, code = await scrapy(*urls, *args, "--json", cwd=tmp_path)
    assert code == EXIT_USAGE_REFUSED, output
    cu, page_signal, page_ok, page_noindex = json_lines(output)
    assert cu["cause"] == "usage" and cu["refused"]["line"] == 3
    assert page_signal["refused"]["source"] == "Content-Signal header"
    assert page_signal["usage"]["use"]["value"] == "immediate"
    assert page_signal["usage_sources"]["robots_txt"]["use"]["value"] == "reference"
    assert page_signal["usage_sources"]["header"]["use"]["value"] == "immediate"
    assert page_signal["page"]["sources"] == {
        "noindex": ["Robots-Tag: examplebot"],
        "nosnippet": ["Robots-Tag"],
    }
    assert page_ok["refused"] is None and page_ok["usage"]["use"]["value"] == "reference"
    assert page_ok["page"]["directives"] == ["nosnippet"]
    assert page_noindex["page"]["directives"] == ["noarchive", "noindex"]
    # the crawl's items are the pages the command finds neither refused nor noindex
    kept = [
        answer["url"]
        for answer in (cu, page_signal, page_ok, page_noindex)
        if answer["refused"] is None
        and answer["cause"] != "usage"
        and "noindex" not in answer["page"]["directives"]
    ]
    assert kept == items

    output, code = await scrapy(site.url("/signal"), *args, cwd=tmp_path)
    assert "directive:   noindex (Robots-Tag: examplebot)" in output, output
    assert 'usage:       use=reference by line 4: "Content-Signal: search=yes' in output
    assert "usage:       use=immediate by the page: Content-Signal: " in output
    assert "ai-use: REFUSED, ai-use=n by Content-Signal header" in output

    output, _ = await scrapy("--lint", site.url("/robots.txt"), cwd=tmp_path)
    assert "5: known but unsupported directive 'Host' ignored" in output, output
    assert "unknown directive" not in output


@deferred_f_from_coro_f
async def test_2_3_1_4_a_deferred_site_s_requests_wait_while_its_tdmrep_json_settles(
    sites,
) -> None:
    """RFC 9309 2.3.1.4 with HTTP: The Definitive Guide ch. 9's deferral: a
    robots.txt answering 503 (``Retry-After: 1``), then 200, with a declared
    purpose. The site's tdmrep.json settles while its robots.txt is deferred:
    its requests go on waiting for robots.txt (they were handed out then,
    decided by the unreachable copy and dropped), and are fetched once it is
    retrieved."""
    robots = sequence(with_headers(status(503), Retry_After="1"), ALLOW_ALL)
    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    _, items, stats = await usage_crawl(
        [site.url("/")], {"ROBOTSTXT_PURPOSES": ["train-ai"], **QUEUE}
    )
    assert items == [site.url("/")]
    assert site.count("/robots.txt") == 2 and site.count("/") == 1
    assert "robotstxt/forbidden/unreachable" not in stats
    assert stats["robotstxt/deferred"] == 1

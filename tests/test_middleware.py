"""RobotsTxtMiddleware in real Scrapy crawls against real local HTTP servers
(RFC 9309 2.3 and 2.4): fetch rules, settings and stats."""

from __future__ import annotations

import logging
import time

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .clock import SkippingClock, skipping
from .conftest import BUILTIN, crawl
from .server import endless, hang, redirect, status, text

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


@deferred_f_from_coro_f
async def test_2_3_one_download_for_100_concurrent_requests_each_checked(sites) -> None:
    # Scrapy 2.19's built-in middleware lets all but the first waiter through here.
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")}, default=PAGE)
    urls = [site.url(f"/page/{i}") for i in range(100)]
    spider, stats = await crawl(urls, {"CONCURRENT_REQUESTS": 100})
    assert spider.fetched == []
    assert len(spider.dropped) == 100
    assert site.hits == ["/robots.txt"]
    assert stats["robotstxt/forbidden"] == 100
    assert stats["robotstxt/request_count"] == 1


@deferred_f_from_coro_f
async def test_2_3_two_ports_are_two_sites(sites) -> None:
    first = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /a\n")}, default=PAGE)
    second = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /b\n")}, default=PAGE)
    urls = [first.url("/a"), first.url("/b"), second.url("/a"), second.url("/b")]
    spider, stats = await crawl(urls)
    assert sorted(spider.fetched) == sorted([first.url("/b"), second.url("/a")])
    assert first.count("/robots.txt") == 1
    assert second.count("/robots.txt") == 1
    assert stats["robotstxt/request_count"] == 2


@deferred_f_from_coro_f
async def test_2_3_1_3_4xx_is_unavailable_allow_all_and_body_ignored(sites) -> None:
    robots = status(404, b"User-agent: *\nDisallow: /\n")
    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    spider, stats = await crawl([site.url("/a"), site.url("/b")])
    assert sorted(spider.fetched) == [site.url("/a"), site.url("/b")]
    assert stats["robotstxt/unavailable"] == 1
    assert stats["robotstxt/response_status_count/404"] == 1
    assert stats["robotstxt/allowed"] == 2
    assert "robotstxt/forbidden" not in stats


@pytest.mark.parametrize("code", [500, 503, 429])
@deferred_f_from_coro_f
async def test_2_3_1_4_5xx_and_429_are_unreachable_disallow_all(sites, code: int) -> None:
    site = sites(routes={"/robots.txt": status(code)}, default=PAGE)
    spider, stats = await crawl([site.url("/a"), site.url("/b")])
    assert spider.fetched == []
    assert site.hits == ["/robots.txt"]
    message = spider.dropped[site.url("/a")]
    assert f"robots.txt unreachable (HTTP {code}) at {site.url('/robots.txt')}" in message
    assert stats["robotstxt/unreachable"] == 1
    assert stats["robotstxt/forbidden/unreachable"] == 2
    assert stats["robotstxt/forbidden"] == 2


def _redirect_chain(site, hops: int) -> None:
    for hop in range(hops):
        source = "/robots.txt" if hop == 0 else f"/hop{hop}"
        site.routes[source] = redirect(site.url(f"/hop{hop + 1}"))
    site.routes[f"/hop{hops}"] = text("User-agent: *\nDisallow: /private\n")


@deferred_f_from_coro_f
async def test_2_3_1_2_five_redirects_are_followed(sites) -> None:
    site = sites(default=PAGE)
    _redirect_chain(site, 5)
    spider, stats = await crawl([site.url("/private"), site.url("/public")])
    assert spider.fetched == [site.url("/public")]
    assert site.count("/hop5") == 1
    assert stats["robotstxt/response_status_count/301"] == 5
    assert stats["robotstxt/parsed"] == 1


@deferred_f_from_coro_f
async def test_2_3_1_2_six_redirects_mean_unavailable(sites) -> None:
    site = sites(default=PAGE)
    _redirect_chain(site, 6)
    spider, stats = await crawl([site.url("/private")])
    assert spider.fetched == [site.url("/private")]
    assert site.count("/hop6") == 0
    assert site.count("/hop5") == 1
    assert stats["robotstxt/unavailable"] == 1


@deferred_f_from_coro_f
async def test_2_3_1_2_cross_host_redirect_followed_despite_allowed_domains(sites) -> None:
    target = sites(host="127.0.0.2", routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")})
    site = sites(routes={"/robots.txt": redirect(target.url("/robots.txt"))}, default=PAGE)
    urls = [site.url("/x"), site.url("/y"), target.url("/offsite-page")]
    spider, stats = await crawl(urls, allowed_domains=["127.0.0.1"], dont_filter=False)
    assert spider.fetched == [site.url("/y")]
    assert stats["offsite/filtered"] == 1  # ordinary requests to 127.0.0.2 are offsite
    assert target.hits == ["/robots.txt"]
    assert "robots.txt line 2" in spider.dropped[site.url("/x")]


@deferred_f_from_coro_f
async def test_meta_refresh_in_robots_txt_is_not_followed(sites) -> None:
    html = b'<html><head><meta http-equiv="refresh" content="0;url=/elsewhere"></head></html>'
    site = sites(
        routes={
            "/robots.txt": text(html, content_type=b"text/html"),
            "/elsewhere": text("User-agent: *\nDisallow: /\n"),
        },
        default=PAGE,
    )
    spider, _ = await crawl([site.url("/a")])
    assert spider.fetched == [site.url("/a")]
    assert site.count("/elsewhere") == 0


@deferred_f_from_coro_f
async def test_2_5_large_file_is_cut_at_max_size_and_the_part_received_used(sites) -> None:
    body = b"User-agent: *\nDisallow: /early\n" + b"# filler\n" * 120_000 + b"Disallow: /late\n"
    assert len(body) > 1_048_576
    site = sites(routes={"/robots.txt": text(body)}, default=PAGE)
    spider, stats = await crawl([site.url("/early"), site.url("/late")])
    assert spider.fetched == [site.url("/late")]
    assert stats["robotstxt/truncated"] == 1
    assert stats["robotstxt/parsed"] == 1
    assert stats["robotstxt/forbidden/rule"] == 1


@deferred_f_from_coro_f
async def test_2_5_endless_body_is_stopped_at_the_limit(sites) -> None:
    site = sites(routes={"/robots.txt": endless()}, default=PAGE)
    spider, stats = await crawl(
        [site.url("/private"), site.url("/public")], {"ROBOTSTXT_MAX_SIZE": 600_000}
    )
    assert spider.fetched == [site.url("/public")]
    assert stats["robotstxt/truncated"] == 1
    assert "robotstxt/unreachable" not in stats


@deferred_f_from_coro_f
async def test_2_3_1_4_closed_port_is_unreachable_with_scrapy_s_exception_stat(sites) -> None:
    """The exception stat keeps the key Scrapy's own middleware writes for
    the same failure, so dashboards keyed on Scrapy's stats keep working."""
    site = sites()
    url = site.url("/page")
    site.stop()
    spider, stats = await crawl([url])
    assert spider.fetched == []
    assert "robots.txt unreachable" in spider.dropped[url]
    keys = [key for key in stats if key.startswith("robotstxt/exception_count/")]
    assert len(keys) == 1
    assert stats["robotstxt/unreachable"] == 1
    builtin = {"DOWNLOADER_MIDDLEWARES": {BUILTIN: 100, "scrapy_rfc9309.RobotsTxtMiddleware": None}}
    _, scrapy_stats = await crawl([url], builtin, allow_errors=True)  # it logs the failure
    assert [key for key in scrapy_stats if key.startswith("robotstxt/exception_count/")] == keys
    assert keys[0].startswith("robotstxt/exception_count/<class '")


@deferred_f_from_coro_f
async def test_2_3_1_4_server_that_never_answers_times_out_unreachable(sites) -> None:
    site = sites(routes={"/robots.txt": hang()}, default=PAGE)
    spider, stats = await crawl([site.url("/a")], {"DOWNLOAD_TIMEOUT": 0.5})
    assert spider.fetched == []
    assert stats["robotstxt/unreachable"] == 1
    assert any("TimeoutError" in key for key in stats if "exception_count" in key)


@deferred_f_from_coro_f
async def test_closing_releases_waiting_requests_at_once(sites) -> None:
    site = sites(routes={"/robots.txt": hang()}, default=PAGE)
    urls = [site.url(f"/p{i}") for i in range(10)]
    started = time.monotonic()
    # all 10 wait in the middleware (no scheduler queue of ours in these settings;
    # ROBOTSTXT_HELD_SHARE 1: none is set aside)
    settings = {"DOWNLOAD_TIMEOUT": 120, "CLOSESPIDER_TIMEOUT": 0.5, "ROBOTSTXT_HELD_SHARE": 1}
    spider, stats = await crawl(urls, settings)
    assert time.monotonic() - started < 10  # not the 120 s download timeout
    assert spider.fetched == []
    assert len(spider.dropped) == 10
    assert stats["robotstxt/forbidden/closing"] == 10
    assert stats["robotstxt/forbidden"] == 10
    assert stats["finish_reason"] == "closespider_timeout"


@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_and_data_urls_pass_untouched(sites) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /\n")}, default=PAGE)
    spider, stats = await crawl([site.url("/a")], meta={"dont_obey_robotstxt": True})
    assert spider.fetched == [site.url("/a")]
    assert site.count("/robots.txt") == 0
    spider, stats = await crawl(["data:,hello"])
    assert spider.fetched == ["data:,hello"]
    assert "robotstxt/request_count" not in stats


@deferred_f_from_coro_f
async def test_2_4_result_refetched_after_cache_ttl(sites) -> None:
    clock = SkippingClock()

    def change_rules() -> None:
        site.routes["/robots.txt"] = text("User-agent: *\nDisallow: /c\n")

    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nDisallow: /b\n"),
            "/slow": skipping(clock, 1.6, then=change_rules),
        },
        default=PAGE,
    )
    followups = {site.url("/slow"): [site.url("/b")]}
    spider, stats = await crawl(
        [site.url("/slow")], {"ROBOTSTXT_CACHE_TTL": 1}, followups=followups, clock=clock
    )
    assert site.count("/robots.txt") == 2
    assert stats["robotstxt/refetch"] == 1
    assert site.url("/b") in spider.fetched  # the new rules allow /b


@deferred_f_from_coro_f
async def test_2_4_unreachable_refetch_keeps_the_cached_copy(sites) -> None:
    clock = SkippingClock()
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nDisallow: /private\n"),
            "/slow": skipping(
                clock, 1.6, then=lambda: site.routes.update({"/robots.txt": status(503)})
            ),
        },
        default=PAGE,
    )
    followups = {site.url("/slow"): [site.url("/public"), site.url("/private")]}
    spider, stats = await crawl(
        [site.url("/slow")], {"ROBOTSTXT_CACHE_TTL": 1}, followups=followups, clock=clock
    )
    assert site.count("/robots.txt") == 2
    assert site.url("/public") in spider.fetched
    assert "line 2" in spider.dropped[site.url("/private")]
    assert "robotstxt/unreachable" not in stats


@deferred_f_from_coro_f
async def test_2_3_1_4_unreachable_tried_again_after_its_ttl(sites) -> None:
    clock = SkippingClock()
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    recovered = {"/robots.txt": text("User-agent: *\n")}
    other = sites(
        routes={"/slow": skipping(clock, 1.6, then=lambda: site.routes.update(recovered))}
    )
    followups = {other.url("/slow"): [site.url("/a")]}
    spider, stats = await crawl(
        [site.url("/first"), other.url("/slow")],
        {"ROBOTSTXT_UNREACHABLE_TTL": 1},
        followups=followups,
        clock=clock,
    )
    assert site.url("/first") in spider.dropped
    assert site.url("/a") in spider.fetched
    assert site.count("/robots.txt") == 2
    assert stats["robotstxt/unreachable"] == 1
    assert stats["robotstxt/parsed"] == 1


@deferred_f_from_coro_f
async def test_cache_is_bounded_least_recently_used_first(sites) -> None:
    rules = text("User-agent: *\nDisallow: /x\n")
    a, b, c = (sites(routes={"/robots.txt": rules}, default=PAGE) for _ in range(3))
    followups = {a.url("/1"): [b.url("/1")], b.url("/1"): [c.url("/1")], c.url("/1"): [a.url("/2")]}
    spider, stats = await crawl(
        [a.url("/1")], {"ROBOTSTXT_CACHE_MAX_SITES": 2}, followups=followups
    )
    assert spider.fetched == [a.url("/1"), b.url("/1"), c.url("/1"), a.url("/2")]
    assert a.count("/robots.txt") == 2  # evicted when c came in, fetched again for /2
    assert b.count("/robots.txt") == 1
    assert stats["robotstxt/cache/evicted"] == 2
    assert stats["robotstxt/request_count"] == 4


def test_outcomes_that_forbid_nothing_keep_no_copy_of_the_file() -> None:
    from scrapy_rfc9309 import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    for body, kept in [
        (b"User-agent: *\nDisallow:\n", False),
        (b"# nothing\n", False),
        (b"User-agent: *\nCrawl-delay: 3\n", True),
        (b"User-agent: bot\nDisallow: /x\n", True),
    ]:
        outcome = SiteOutcome(Kind.PARSED, RobotsTxt.parse(body), "HTTP 200", 0.0).compact()
        assert (outcome.robots is not None) is kept, body
        assert outcome.decide("http://e.com/x", "other", "http://e.com:80").allowed


def test_the_compact_form_a_cache_keeps_gives_the_same_verdicts() -> None:
    from scrapy_rfc9309 import RobotsTxt
    from scrapy_rfc9309.parser._compact import CompactRobots

    body = (
        b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private\r\nAllow: /private/pub\r\n"
        b"\r\nUser-agent: OtherBot\r\nDisallow: /*.pdf$\r\n"
    )
    robots = RobotsTxt.parse(body)
    robots.check(url="/", agent="Scrapy")  # compiled before, as the fetcher does
    compact = CompactRobots(robots)
    for agent in ("Scrapy", "OtherBot", "otherbot/2.0"):  # OtherBot compiled afterwards
        for url in ("/private/x", "/private/pub/y", "/a.pdf", "/robots.txt", "/"):
            assert compact.check(url=url, agent=agent) == robots.check(url=url, agent=agent)


@deferred_f_from_coro_f
async def test_2_3_1_4_each_unreachable_fetch_is_logged_and_the_site_counted_once(
    sites, caplog
) -> None:
    clock = SkippingClock()
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    other = sites(routes={"/slow": skipping(clock, 1.6)})
    followups = {other.url("/slow"): [site.url("/again")]}
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await crawl(
            [site.url("/first"), other.url("/slow")],
            {"ROBOTSTXT_UNREACHABLE_TTL": 1},
            followups=followups,
            clock=clock,
        )
    assert set(spider.dropped) == {site.url("/first"), site.url("/again")}
    assert site.count("/robots.txt") == 2
    assert stats["robotstxt/request_count"] == 3  # two for site, one for other
    assert stats["robotstxt/unreachable"] == 1  # sites, not downloads
    assert stats["robotstxt/sites"] == 2
    warnings = [
        r.getMessage() for r in caplog.records if "robots.txt unreachable" in r.getMessage()
    ]
    assert len(warnings) == 2, warnings


def test_our_own_download_time_bound_counts_as_scrapy_s_download_timeout() -> None:
    """The exception stat of a download cut by the package's own bound is
    the key Scrapy's middleware writes for a download timeout in this
    Scrapy (``DownloadTimeoutError`` since Scrapy 2.14, Twisted's
    ``TimeoutError`` before), so one crawl never counts timeouts under two keys."""
    import scrapy.exceptions
    from twisted.internet.error import TimeoutError as TwistedTimeout

    from scrapy_rfc9309.components.sitefiles._file_download import DownloadTimedOut, exception_key

    scrapy_s = getattr(scrapy.exceptions, "DownloadTimeoutError", TwistedTimeout)
    assert exception_key(DownloadTimedOut(1.0)) == str(scrapy_s)
    assert exception_key(ConnectionRefusedError()) == str(ConnectionRefusedError)


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
    _, stats = await crawl([site.url("/api")], {}, meta={"dont_obey_robotstxt": True})
    assert other.count("/private/y") == 0, other.hits
    assert stats["robotstxt/forbidden/rule"] == 1

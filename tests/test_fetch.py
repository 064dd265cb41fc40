"""The robots.txt fetch against hostile and broken servers, in real crawls: redirects
to other schemes (RFC 9309 2.3.1.2), compression bombs (2.5), internal errors
(not 2.3.1.4), Retry-After, 401/403 (2.3.1.3 or HTTP: The Definitive Guide ch. 9),
per-site stats and redirect chains in messages."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309 import robots_parsed

from .clock import SkippingClock, skipping
from .conftest import BASE_SETTINGS, crawl
from .server import compressed, encoded, gzip_bomb, redirect, retry_after, status, text

PAGE = text("<html>page</html>", content_type=b"text/html")
MIB = 1 << 20


class ParsedBodies:
    """An extension that records the body of every robots.txt parsed in a crawl."""

    bodies: list[bytes] = []  # noqa: RUF012 - reset by each test

    def __init__(self, crawler: Any) -> None:
        crawler.signals.connect(self._parsed, signal=robots_parsed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> ParsedBodies:
        return cls(crawler)

    def _parsed(self, robotparser: Any, request: Any) -> None:
        ParsedBodies.bodies.append(robotparser.robots.body)


RECORD_BODIES = {"EXTENSIONS": {f"{__name__}.ParsedBodies": 0}}


@pytest.fixture
def parsed_bodies() -> list[bytes]:
    ParsedBodies.bodies = []
    return ParsedBodies.bodies


# -- redirects to other schemes (RFC 9309 2.3.1.2) ----------------------------------


@deferred_f_from_coro_f
async def test_2_3_1_2_redirect_to_a_file_url_is_refused(
    sites, tmp_path, caplog, parsed_bodies
) -> None:
    secret = tmp_path / "robots.txt"
    secret.write_text("User-agent: *\nDisallow: /\n# LOCAL-FILE-CONTENT-7f3a\n")
    site = sites(routes={"/robots.txt": redirect(secret.as_uri())}, default=PAGE)
    with caplog.at_level(logging.DEBUG):
        spider, stats = await crawl([site.url("/a"), site.url("/b")], RECORD_BODIES)
    assert sorted(spider.fetched) == [site.url("/a"), site.url("/b")]  # unavailable: allow all
    assert parsed_bodies == []
    assert site.hits.count("/robots.txt") == 1
    assert stats["robotstxt/redirect_refused"] == 1
    assert stats["robotstxt/unavailable"] == 1
    assert "robotstxt/parsed" not in stats
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # the target as logged: cut past 80 characters (a pytest-xdist worker's tmp_path is long)
    shown = secret.as_uri()[:80]
    assert any(shown in message and "refused" in message for message in warnings)
    assert "LOCAL-FILE-CONTENT" not in caplog.text


@deferred_f_from_coro_f
async def test_2_3_1_2_redirect_to_a_data_url_is_refused(sites, caplog, parsed_bodies) -> None:
    payload = "User-agent:%20*%0ADisallow:%20/%0A%23" + "x" * 100 + "DATA-URL-TAIL-91c2"
    site = sites(routes={"/robots.txt": redirect(f"data:text/plain,{payload}")}, default=PAGE)
    with caplog.at_level(logging.DEBUG):
        spider, stats = await crawl([site.url("/a")], RECORD_BODIES)
    assert spider.fetched == [site.url("/a")]
    assert parsed_bodies == []
    assert stats["robotstxt/redirect_refused"] == 1
    assert stats["robotstxt/unavailable"] == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("redirect to data:text/plain," in message for message in warnings)
    assert "DATA-URL-TAIL" not in caplog.text


@deferred_f_from_coro_f
async def test_2_3_1_2_https_redirect_is_still_followed(sites) -> None:
    target = sites(host="127.0.0.2", routes={"/r.txt": text("User-agent: *\nDisallow: /x\n")})
    site = sites(routes={"/robots.txt": redirect(target.url("/r.txt"))}, default=PAGE)
    spider, stats = await crawl([site.url("/x"), site.url("/y")])
    assert spider.fetched == [site.url("/y")]
    assert "robotstxt/redirect_refused" not in stats


# -- chains in messages ---------------------------------------------------------------


@deferred_f_from_coro_f
async def test_2_3_1_2_drop_message_names_the_whole_redirect_chain(sites) -> None:
    target = sites(host="127.0.0.2", routes={"/rules.txt": text("User-agent: *\nDisallow: /x\n")})
    site = sites(default=PAGE)
    site.routes["/robots.txt"] = redirect(site.url("/moved"), 302)
    site.routes["/moved"] = redirect(target.url("/rules.txt"), 301)
    spider, _ = await crawl([site.url("/x")])
    chain = (
        f"{site.url('/robots.txt')} -> {site.url('/moved')} (302) -> {target.url('/rules.txt')} "
        "(301)"
    )
    assert (
        spider.dropped[site.url("/x")]
        == f'Forbidden by robots.txt line 2: "Disallow: /x" ({chain})'
    )


@deferred_f_from_coro_f
async def test_2_3_1_4_unreachable_warning_names_the_redirect_chain(sites, caplog) -> None:
    site = sites(default=PAGE)
    site.routes["/robots.txt"] = redirect(site.url("/down"))
    site.routes["/down"] = status(500)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, _ = await crawl([site.url("/a")])
    chain = f"{site.url('/robots.txt')} -> {site.url('/down')} (301)"
    assert chain in spider.dropped[site.url("/a")]
    assert any(chain in r.getMessage() and "unreachable" in r.getMessage() for r in caplog.records)


# -- compression bombs (RFC 9309 2.5) ---------------------------------------------------

BOMB_HEAD = b"User-agent: *\nDisallow: /private\n"
BOMB_TAIL = b"\nDisallow: /late\n"


@deferred_f_from_coro_f
async def test_2_5_gzip_bomb_is_decoded_only_up_to_the_limit(sites, parsed_bodies) -> None:
    bomb = gzip_bomb(BOMB_HEAD, b"Disallow: /filler\n", 200 * MIB, BOMB_TAIL)
    assert len(bomb) < 512_000  # all of it is downloaded: the decoding is what is bounded
    site = sites(routes={"/robots.txt": encoded(bomb, "gzip")}, default=PAGE)
    urls = [site.url("/private"), site.url("/late"), site.url("/public")]
    spider, stats = await crawl(urls, RECORD_BODIES)
    assert sorted(spider.fetched) == [site.url("/late"), site.url("/public")]
    assert site.count("/robots.txt") == 1
    assert stats["robotstxt/parsed"] == 1
    assert stats["robotstxt/truncated"] == 1
    [body] = parsed_bodies
    assert 500_000 < len(body) <= 512_000
    assert body.startswith(BOMB_HEAD)
    assert "httpcompression/response_bytes" not in stats  # Scrapy decoded nothing


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
@deferred_f_from_coro_f
async def test_2_5_every_encoding_is_bounded(sites, parsed_bodies, encoding: str) -> None:
    body = BOMB_HEAD + b"Disallow: /filler\n" * (20 * MIB // 18) + BOMB_TAIL
    site = sites(routes={"/robots.txt": compressed(body, encoding)}, default=PAGE)
    spider, stats = await crawl(
        [site.url("/private"), site.url("/late")], {**RECORD_BODIES, "ROBOTSTXT_MAX_SIZE": 600_000}
    )
    assert spider.fetched == [site.url("/late")]
    assert stats["robotstxt/truncated"] == 1
    [parsed] = parsed_bodies
    assert 599_900 < len(parsed) <= 600_000  # the cut line is dropped
    assert "httpcompression/response_bytes" not in stats


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate", "br", "zstd"])
@deferred_f_from_coro_f
async def test_2_3_1_1_compressed_robots_txt_is_parsed(sites, encoding: str) -> None:
    body = b"User-agent: *\nDisallow: /private\n"
    route = compressed(body, "gzip" if encoding == "x-gzip" else encoding)
    if encoding == "x-gzip":
        import gzip

        route = encoded(gzip.compress(body), "x-gzip")
    site = sites(routes={"/robots.txt": route}, default=PAGE)
    spider, stats = await crawl([site.url("/private"), site.url("/public")])
    assert spider.fetched == [site.url("/public")]
    assert "line 2" in spider.dropped[site.url("/private")]
    assert "robotstxt/truncated" not in stats


@deferred_f_from_coro_f
async def test_2_5_cut_compressed_body_keeps_the_complete_lines(sites) -> None:
    import gzip

    data = gzip.compress(b"User-agent: *\nDisallow: /a\nDisallow: /b-and-more\n" * 50)
    site = sites(routes={"/robots.txt": encoded(data[: len(data) // 2], "gzip")}, default=PAGE)
    spider, stats = await crawl([site.url("/a"), site.url("/c")])
    assert spider.fetched == [site.url("/c")]
    assert stats["robotstxt/encoding_broken"] == 1
    assert "robotstxt/truncated" not in stats  # a corrupt stream is not a size cut
    assert stats["robotstxt/parsed"] == 1


@pytest.mark.parametrize("cut_at", ["in-first-line", "in-gzip-header"])
@deferred_f_from_coro_f
async def test_2_3_1_4_compressed_body_cut_before_its_first_line_is_unreachable(
    sites, caplog, cut_at: str
) -> None:
    """No complete line decoded is not an empty file (allow all for 24 hours):
    like a plain body cut short, the robots.txt is unreachable (RFC 9309
    2.3.1.4; 2.5: never guess a cut line)."""
    import gzip
    import random

    first_line = "# " + "".join(random.Random(7).choices("abcdefghij0123456789", k=4000))
    data = gzip.compress(f"{first_line}\nUser-agent: *\nDisallow: /private\n".encode())
    cut = data[: len(data) // 2] if cut_at == "in-first-line" else data[:5]
    site = sites(routes={"/robots.txt": encoded(cut, "gzip")}, default=PAGE)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await crawl([site.url("/private/x"), site.url("/c")])
    assert spider.fetched == []
    assert site.hits == ["/robots.txt"]
    assert stats["robotstxt/unreachable"] == 1
    assert "robotstxt/parsed" not in stats
    assert "robotstxt/encoding_mislabelled" not in stats
    assert "cut or corrupt before its first line ended" in caplog.text


@deferred_f_from_coro_f
async def test_2_3_1_1_a_plain_body_sent_as_gzip_is_parsed_as_it_is(sites, caplog) -> None:
    """A common misconfiguration: the rules are what the site meant, not nothing."""
    body = b"User-agent: *\nDisallow: /private/\n"
    site = sites(routes={"/robots.txt": encoded(body, "gzip")}, default=PAGE)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await crawl([site.url("/private/x"), site.url("/c")])
    assert spider.fetched == [site.url("/c")]
    assert stats["robotstxt/encoding_mislabelled"] == 1
    assert "robotstxt/truncated" not in stats
    assert "not so encoded, parsed as it is" in caplog.text


@pytest.mark.parametrize(
    "target",
    [
        "http://[bad/robots.txt",
        "http://127.0.0.1:99999/robots.txt",
        "http://127.0.0.1:abc/robots.txt",
        "https://",
        "http://user:pw@127.0.0.1:9/robots.txt",
    ],
)
@deferred_f_from_coro_f
async def test_2_3_1_2_a_malformed_redirect_is_the_sites_answer_not_an_error(
    sites, caplog, target
) -> None:
    site = sites(routes={"/robots.txt": redirect(target, 302)}, default=PAGE)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await crawl([site.url("/a")])  # the crawl logs no ERROR
    assert spider.fetched == [site.url("/a")]  # unavailable: everything allowed
    assert stats["robotstxt/redirect_refused"] == 1
    assert "robotstxt/internal_error" not in stats
    assert "refused" in caplog.text


@deferred_f_from_coro_f
async def test_2_3_1_1_compressed_robots_txt_is_decoded_even_without_scrapy_compression(
    sites,
) -> None:
    seen: list[bytes] = []
    gzip_route = compressed(b"User-agent: *\nDisallow: /x\n", "gzip")

    def robots(request: Any) -> Any:
        seen.append(request.getHeader(b"Accept-Encoding") or b"")
        return gzip_route(request)

    site = sites(routes={"/robots.txt": robots}, default=PAGE)
    spider, _ = await crawl([site.url("/x"), site.url("/y")], {"COMPRESSION_ENABLED": False})
    assert spider.fetched == [site.url("/y")]
    from scrapy_rfc9309.components.sitefiles._decode import accept_encoding

    assert seen == [accept_encoding()]  # only what can be decoded within the limit
    assert b"gzip" in seen[0]


# -- internal errors are not "unreachable" --------------------------------------------


class BreaksRobotsTxt:
    """A downloader middleware with a bug that shows only on robots.txt requests."""

    def process_request(self, request: Any, spider: Any = None) -> None:
        if request.url.endswith("/robots.txt"):
            raise AttributeError("'NoneType' object has no attribute 'simulated'")


@deferred_f_from_coro_f
async def test_internal_error_is_reported_as_one(sites, caplog) -> None:
    site = sites(routes={"/robots.txt": text("User-agent: *\n")}, default=PAGE)
    middlewares = {
        **BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"],
        f"{__name__}.BreaksRobotsTxt": 50,
    }
    with caplog.at_level(logging.WARNING):
        spider, stats = await crawl(
            [site.url("/a"), site.url("/b")],
            {"DOWNLOADER_MIDDLEWARES": middlewares},
            allow_errors=True,
        )
    assert spider.fetched == []
    assert site.hits == []
    message = spider.dropped[site.url("/a")]
    assert "internal error" in message and "AttributeError" in message
    assert "unreachable" not in message
    assert stats["robotstxt/internal_error"] == 1
    assert stats["robotstxt/forbidden/internal_error"] == 2
    assert stats["robotstxt/forbidden"] == 2
    assert "robotstxt/unreachable" not in stats
    assert not any(key.startswith("robotstxt/exception_count/") for key in stats)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and "Internal error" in r.msg]
    assert len(errors) == 1
    assert errors[0].exc_info is not None  # with its traceback


@deferred_f_from_coro_f
async def test_internal_error_in_the_parser_is_reported_as_one(sites, monkeypatch) -> None:
    from scrapy_rfc9309 import RobotsTxt

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("simulated parser bug")

    monkeypatch.setattr(RobotsTxt, "parse_in_steps", broken)
    site = sites(routes={"/robots.txt": text("User-agent: *\n")}, default=PAGE)
    spider, stats = await crawl([site.url("/a")], allow_errors=True)
    assert spider.fetched == []
    assert site.hits == ["/robots.txt"]
    assert "internal error" in spider.dropped[site.url("/a")]
    assert stats["robotstxt/internal_error"] == 1
    assert stats["log_count/ERROR"] >= 1
    assert "robotstxt/unreachable" not in stats


# -- Retry-After --------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_2_3_1_4_retry_after_seconds_is_honoured_even_with_retries_on(sites) -> None:
    answers = [retry_after(429, "1"), text("User-agent: *\n")]
    clock = SkippingClock()
    times: list[float] = []  # the crawl's time of each robots.txt request

    def first_429_then_200(request: Any) -> Any:
        route = answers[1] if times else answers[0]
        times.append(clock.monotonic())
        return route(request)

    site = sites(routes={"/robots.txt": first_429_then_200}, default=PAGE)
    other = sites(routes={"/slow": skipping(clock, 1.6)})
    spider, stats = await crawl(
        [site.url("/first"), other.url("/slow")],
        {"RETRY_ENABLED": True, "RETRY_TIMES": 2},
        followups={other.url("/slow"): [site.url("/again")]},
        clock=clock,
    )
    assert len(times) == 2  # RetryMiddleware did not ask again at once
    assert times[1] - times[0] >= 0.95  # and the next attempt waited as asked
    assert site.url("/first") in spider.dropped
    assert "Retry-After 1 s" in spider.dropped[site.url("/first")]
    assert site.url("/again") in spider.fetched
    assert stats["robotstxt/retry_after"] == 1


@deferred_f_from_coro_f
async def test_2_3_1_4_retry_after_date_is_bounded_by_the_maximum(sites) -> None:
    far = "Fri, 31 Dec 2100 23:59:59 GMT"
    clock = SkippingClock()
    site = sites(routes={"/robots.txt": retry_after(503, far)}, default=PAGE)
    other = sites(routes={"/slow": skipping(clock, 2.0)})
    spider, stats = await crawl(
        [site.url("/first"), other.url("/slow")],
        {"ROBOTSTXT_RETRY_AFTER_MAX": 1},
        followups={other.url("/slow"): [site.url("/again")]},
        clock=clock,
    )
    assert site.count("/robots.txt") == 2  # after 1 s, not in 2100
    assert set(spider.dropped) == {site.url("/first"), site.url("/again")}
    assert stats["robotstxt/unreachable"] == 1
    # the wait said as kept, and that the site asked longer
    assert "Retry-After 1 s (asked " in spider.dropped[site.url("/first")]
    assert "ROBOTSTXT_RETRY_AFTER_MAX" in spider.dropped[site.url("/first")]


@deferred_f_from_coro_f
async def test_2_3_1_4_without_retry_after_scrapy_retries_as_configured(sites) -> None:
    site = sites(routes={"/robots.txt": status(503)}, default=PAGE)
    spider, stats = await crawl(
        [site.url("/a")], {"RETRY_ENABLED": True, "RETRY_TIMES": 2}, allow_errors=True
    )  # Scrapy logs its "Gave up retrying" at ERROR
    assert site.count("/robots.txt") == 3
    assert stats["robotstxt/unreachable"] == 1
    assert spider.fetched == []


@pytest.mark.parametrize("value", ["soon", "-5", ""])
@deferred_f_from_coro_f
async def test_2_3_1_4_an_unreadable_retry_after_leaves_scrapy_retries_on(sites, value) -> None:
    site = sites(routes={"/robots.txt": retry_after(503, value)}, default=PAGE)
    spider, stats = await crawl(
        [site.url("/a")], {"RETRY_ENABLED": True, "RETRY_TIMES": 2}, allow_errors=True
    )
    assert site.count("/robots.txt") == 3  # retried as configured, not left for 600 s
    assert "robotstxt/retry_after" not in stats
    assert spider.fetched == []


# -- 401 and 403: both readings ---------------------------------------------------------


@pytest.mark.parametrize("code", [401, 403])
@deferred_f_from_coro_f
async def test_2_3_1_3_401_403_are_unavailable_by_default(sites, code: int) -> None:
    site = sites(routes={"/robots.txt": status(code)}, default=PAGE)
    spider, stats = await crawl([site.url("/a"), site.url("/b")])
    assert sorted(spider.fetched) == [site.url("/a"), site.url("/b")]
    assert stats["robotstxt/unavailable"] == 1
    assert "robotstxt/restricted" not in stats


@pytest.mark.parametrize("code", [401, 403])
@deferred_f_from_coro_f
async def test_http_guide_ch9_401_403_disallow_all_when_asked(sites, caplog, code: int) -> None:
    site = sites(routes={"/robots.txt": status(code)}, default=PAGE)
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, stats = await crawl(
            [site.url("/a"), site.url("/b")], {"ROBOTSTXT_AUTH_DISALLOW": True}
        )
    assert spider.fetched == []
    assert site.hits == ["/robots.txt"]
    message = spider.dropped[site.url("/a")]
    assert f"HTTP {code}" in message and "ROBOTSTXT_AUTH_DISALLOW" in message
    assert stats["robotstxt/restricted"] == 1
    assert stats["robotstxt/forbidden/restricted"] == 2
    assert stats["robotstxt/forbidden"] == 2
    assert "robotstxt/unavailable" not in stats
    assert any(f"answered HTTP {code}" in r.getMessage() for r in caplog.records)


@deferred_f_from_coro_f
async def test_auth_disallow_leaves_other_4xx_unavailable(sites) -> None:
    site = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    spider, stats = await crawl([site.url("/a")], {"ROBOTSTXT_AUTH_DISALLOW": True})
    assert spider.fetched == [site.url("/a")]
    assert stats["robotstxt/unavailable"] == 1


# -- per-site stats and the summary -------------------------------------------------


@deferred_f_from_coro_f
async def test_per_site_stats_count_each_site_once_despite_evictions(sites) -> None:
    a = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    b = sites(routes={"/robots.txt": status(404)}, default=PAGE)
    followups = {a.url("/1"): [b.url("/1")], b.url("/1"): [a.url("/2")], a.url("/2"): [b.url("/2")]}
    spider, stats = await crawl(
        [a.url("/1")], {"ROBOTSTXT_CACHE_MAX_SITES": 1}, followups=followups
    )
    assert len(spider.fetched) == 4
    assert a.count("/robots.txt") == 2 and b.count("/robots.txt") == 2
    assert stats["robotstxt/request_count"] == 4
    assert stats["robotstxt/unavailable"] == 2
    assert stats["robotstxt/sites"] == 2


@deferred_f_from_coro_f
async def test_summary_says_1_site(sites, caplog) -> None:
    clock = SkippingClock()
    site = sites(
        routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n"), "/a": skipping(clock, 1.6)},
        default=PAGE,
    )
    settings = {"EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 100}, "ROBOTSTXT_CACHE_TTL": 1}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309"):
        await crawl(
            [site.url("/a")], settings, followups={site.url("/a"): [site.url("/x")]}, clock=clock
        )
    assert site.count("/robots.txt") == 2  # fetched twice, one site
    assert "robots.txt summary: 1 site checked (1 parsed," in caplog.text


# -- ROBOTSTXT_USER_AGENT as Scrapy accepts it ----------------------------------------


@deferred_f_from_coro_f
async def test_2_2_1_user_agent_setting_is_reduced_to_its_product_token(sites, caplog) -> None:
    site = sites(
        routes={"/robots.txt": text("User-agent: ReduceBot\nDisallow: /x\n")}, default=PAGE
    )
    value = "ReduceBot/1.0 (+https://example.com/reduce-test)"
    settings = {
        "ROBOTSTXT_USER_AGENT": value,
        "EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": 1},
    }
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309"):
        spider, _ = await crawl([site.url("/x"), site.url("/y")], settings)
    assert spider.fetched == [site.url("/y")]
    reduced = [r for r in caplog.records if "ROBOTSTXT_USER_AGENT" in r.getMessage()]
    assert len(reduced) == 1  # once, though the middleware and the extension both read it
    assert "'ReduceBot'" in reduced[0].getMessage()


# -- nothing is lost --------------------------------------------------------------------


class _Broken:
    def process_request(self, request: Any, spider: Any = None) -> None:
        if request.url.startswith(_Broken.prefix) and request.url.endswith("/robots.txt"):
            raise KeyError("simulated")

    prefix = ""


@deferred_f_from_coro_f
async def test_3_every_request_to_hostile_sites_is_downloaded_or_dropped(sites, tmp_path) -> None:
    (tmp_path / "local").write_text("User-agent: *\nDisallow: /\n")
    bomb = gzip_bomb(BOMB_HEAD, b"Disallow: /filler\n", 200 * MIB, BOMB_TAIL)
    routes = [
        encoded(bomb, "gzip"),
        redirect((tmp_path / "local").as_uri()),
        redirect("data:,User-agent:%20*%0ADisallow:%20/"),
        retry_after(429, "5"),
        status(403),
        status(503),
        text("User-agent: *\n"),  # its robots.txt request hits the bug below
    ]
    hostile = [sites(routes={"/robots.txt": route}, default=PAGE) for route in routes]
    _Broken.prefix = hostile[-1].origin
    urls = [
        site.url(f"/{path}/{i}") for site in hostile for path in ("private", "p") for i in range(5)
    ]
    middlewares = {**BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"], f"{__name__}._Broken": 50}
    spider, stats = await crawl(
        urls,
        {"ROBOTSTXT_AUTH_DISALLOW": True, "DOWNLOADER_MIDDLEWARES": middlewares},
        allow_errors=True,
    )
    assert len(spider.fetched) + len(spider.dropped) == len(urls) == 70
    assert stats["robotstxt/allowed"] + stats["robotstxt/forbidden"] == 70
    causes = ("rule", "unreachable", "restricted", "internal_error", "closing")
    assert sum(stats.get(f"robotstxt/forbidden/{cause}", 0) for cause in causes) == len(
        spider.dropped
    )
    assert stats["robotstxt/sites"] == 7
    assert all(site.count("/robots.txt") <= 1 for site in hostile)
    assert stats["robotstxt/forbidden/rule"] == 5  # the bomb's /private
    assert stats["robotstxt/forbidden/restricted"] == 10
    assert stats["robotstxt/forbidden/internal_error"] == 10
    assert stats["robotstxt/forbidden/unreachable"] == 20


@deferred_f_from_coro_f
async def test_2_3_1_4_an_ftp_server_that_drops_the_connection_is_unreachable_not_a_bug() -> None:
    """RFC 9309 2.3.1.4: a robots.txt whose server fails (here an FTP server that
    closes the connection, through Scrapy's FTP download handler) is unreachable:
    the site's requests are dropped as such, never as an internal error."""
    from twisted.internet import protocol
    from twisted.internet import reactor as _reactor

    reactor: Any = _reactor

    class Closer(protocol.Protocol):
        def connectionMade(self) -> None:
            assert self.transport is not None
            reactor.callLater(0.1, self.transport.loseConnection)  # type: ignore[misc]

    factory = protocol.ServerFactory()
    factory.protocol = Closer
    port = reactor.listenTCP(0, factory, interface="127.0.0.1")
    try:
        url = f"ftp://127.0.0.1:{port.getHost().port}/x"
        spider, stats = await crawl([url], {"ROBOTSTXT_UNREACHABLE_DEFER": 0})
    finally:
        port.stopListening()
    assert "robotstxt/internal_error" not in stats
    assert stats["robotstxt/forbidden/unreachable"] == 1
    assert "unreachable" in spider.dropped[url]


@deferred_f_from_coro_f
async def test_2_3_1_4_an_ftp_server_that_never_answers_is_unreachable_after_the_timeout(
    sites,
) -> None:
    """RFC 9309 2.3.1.4: a robots.txt server that accepts and never answers (through
    Scrapy's FTP handler, which ignores download_timeout) makes the site
    unreachable after ROBOTSTXT_DOWNLOAD_TIMEOUT: its request is dropped as such,
    not held until the server drops the connection (here after 20 s)."""
    import time

    from .server import silent_server

    port = silent_server(drop_after=20.0)
    other = sites(routes={"/robots.txt": text("User-agent: *\nAllow: /\n")}, default=PAGE)
    try:
        url = f"ftp://127.0.0.1:{port.getHost().port}/x"
        started = time.monotonic()
        spider, stats = await crawl(
            [url, other.url("/ok")],
            {"ROBOTSTXT_DOWNLOAD_TIMEOUT": 0.5, "ROBOTSTXT_UNREACHABLE_DEFER": 0},
        )
        took = time.monotonic() - started
    finally:
        port.stopListening()
    assert took < 10, took
    assert spider.fetched == [other.url("/ok")]
    assert "robotstxt/internal_error" not in stats
    assert stats["robotstxt/forbidden/unreachable"] == 1
    assert "robots.txt unreachable (timed out after 0.5 s)" in spider.dropped[url]


@deferred_f_from_coro_f
async def test_2_3_1_4_the_download_bound_runs_on_the_crawls_clock(sites) -> None:
    """RFC 9309 2.3.1.4: the bound on a robots.txt download is a timer of the
    crawl's clock, as every other wait of the crawl: a server that never
    answers (through Scrapy's FTP handler, which ignores download_timeout) is
    unreachable once the crawl's clock has passed ROBOTSTXT_DOWNLOAD_TIMEOUT
    (30 s here, skipped), not after 30 real seconds."""
    import time

    from twisted.internet import reactor as installed

    from .server import silent_server

    reactor: Any = installed
    port = silent_server(drop_after=60.0)
    clock = SkippingClock()
    reactor.callLater(0.5, clock.skip, 31.0)
    try:
        url = f"ftp://127.0.0.1:{port.getHost().port}/x"
        started = time.monotonic()
        spider, stats = await crawl(
            [url], {"ROBOTSTXT_DOWNLOAD_TIMEOUT": 30, "ROBOTSTXT_UNREACHABLE_DEFER": 0}, clock=clock
        )
        took = time.monotonic() - started
    finally:
        port.stopListening()
    assert took < 10, took
    assert stats["robotstxt/forbidden/unreachable"] == 1
    assert "robots.txt unreachable (timed out after 30 s)" in spider.dropped[url]


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

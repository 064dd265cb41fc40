"""How long a robots.txt is used: HTTP cache directives within bounds (RFC 9309
2.4; RFC 9111 4.2; HTTP: The Definitive Guide ch. 9). Pure units, then real
crawls against the local test server, counting its robots.txt downloads."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.sites._lifetime import cache_directives, cache_lifetime

from .clock import SkippingClock, skipping
from .conftest import crawl
from .profiles import examples
from .server import text, with_headers

NOW = 1_800_000_000.0
DAY = 86_400.0


def lifetime(
    cache_control: str | None = None,
    expires: str | None = None,
    date: str | None = None,
    age: str | None = None,
    max_ttl: float = DAY,
    min_ttl: float = 60.0,
) -> tuple[float, str]:
    return tuple(  # type: ignore[return-value]
        cache_lifetime(
            cache_control=cache_control,
            expires=expires,
            date=date,
            age=age,
            now=NOW,
            max_ttl=max_ttl,
            min_ttl=min_ttl,
        )
    )


def http_date(unix: float) -> str:
    return email.utils.formatdate(unix, usegmt=True)


def test_2_4_no_cache_directive_means_the_configured_ttl() -> None:
    assert lifetime() == (DAY, "ROBOTSTXT_CACHE_TTL (no cache directive)")


def test_rfc9111_max_age_sets_the_lifetime() -> None:
    assert lifetime("public, max-age=3600") == (3600.0, "Cache-Control: max-age=3600")
    assert lifetime('MAX-AGE="120"')[0] == 120.0  # case-insensitive, quoted value


def test_rfc9111_s_maxage_wins_over_max_age() -> None:
    assert lifetime("max-age=100, s-maxage=900") == (900.0, "Cache-Control: s-maxage=900")


def test_rfc9111_age_is_subtracted() -> None:
    seconds, source = lifetime("max-age=3600", age="600")
    assert seconds == 3000.0 and "Age: 600" in source


def test_rfc9111_expires_minus_date() -> None:
    seconds, source = lifetime(expires=http_date(NOW + 7200), date=http_date(NOW + 10))
    assert seconds == 7190.0 and source == "Expires"
    assert lifetime(expires=http_date(NOW + 7200))[0] == 7200.0  # no Date: now
    assert lifetime("max-age=300", expires=http_date(NOW + 7200))[0] == 300.0


def test_http_guide_ch9_no_cache_and_max_age_0_are_raised_to_the_floor() -> None:
    """Refetching before every access would double the load on the server."""
    for directive in ("no-cache", "no-store", "max-age=0", "private, no-cache=set-cookie"):
        seconds, source = lifetime(directive, min_ttl=600)
        assert seconds == 600.0, directive
        assert "raised to ROBOTSTXT_CACHE_MIN_TTL" in source
    seconds, source = lifetime(expires="0", min_ttl=30)  # RFC 9111 5.3: invalid = expired
    assert seconds == 30.0 and "invalid" in source


def test_2_4_never_beyond_the_configured_ttl() -> None:
    seconds, source = lifetime("max-age=31536000")
    assert seconds == DAY and "capped by ROBOTSTXT_CACHE_TTL" in source
    assert lifetime(expires=http_date(NOW + 10 * DAY))[0] == DAY


def test_the_floor_is_never_above_the_ttl() -> None:
    assert lifetime("max-age=0", max_ttl=5, min_ttl=600)[0] == 5.0


def test_cache_directives_are_read_one_way() -> None:
    assert cache_directives('no-cache, max-age=60, x="a,b", max-age=9') == {
        "no-cache": None,
        "max-age": "60",
        "x": "a,b",
    }


@given(
    cache_control=st.one_of(st.none(), st.text(max_size=80)),
    expires=st.one_of(st.none(), st.text(max_size=40)),
    date=st.one_of(st.none(), st.text(max_size=40)),
    age=st.one_of(st.none(), st.text(max_size=12)),
)
@settings(max_examples=examples(300), deadline=None)
def test_hostile_headers_never_raise_and_stay_in_bounds(
    cache_control: str | None, expires: str | None, date: str | None, age: str | None
) -> None:
    seconds, source = lifetime(cache_control, expires, date, age, max_ttl=1000, min_ttl=10)
    assert 10.0 <= seconds <= 1000.0 and source


ROBOTS = "User-agent: *\nDisallow: /private\n"


@deferred_f_from_coro_f
async def test_2_4_a_short_max_age_is_honoured_in_a_crawl(sites) -> None:
    clock = SkippingClock()
    site = sites(
        routes={
            "/robots.txt": with_headers(text(ROBOTS), Cache_Control="max-age=1"),
            "/slow": skipping(clock, 1.5),
        },
        default=text("page"),
    )
    followups = {site.url("/slow"): [site.url("/after")]}
    spider, stats = await crawl(
        [site.url("/slow")], {"ROBOTSTXT_CACHE_MIN_TTL": 0}, followups=followups, clock=clock
    )
    assert site.url("/after") in spider.fetched
    assert site.count("/robots.txt") == 2  # expired after 1 s: fetched again
    assert stats["robotstxt/refetch"] == 1


@deferred_f_from_coro_f
async def test_2_4_an_expires_header_is_honoured_in_a_crawl(sites) -> None:
    def robots(request: Any) -> bytes:
        request.setHeader(b"Date", http_date(time.time()).encode())
        request.setHeader(b"Expires", http_date(time.time() + 1).encode())
        return ROBOTS.encode()

    clock = SkippingClock()
    site = sites(
        routes={"/robots.txt": robots, "/slow": skipping(clock, 2.2)}, default=text("page")
    )
    followups = {site.url("/slow"): [site.url("/after")]}
    await crawl(
        [site.url("/slow")], {"ROBOTSTXT_CACHE_MIN_TTL": 0}, followups=followups, clock=clock
    )
    assert site.count("/robots.txt") == 2


@pytest.mark.parametrize("directive", ["no-cache", "max-age=0"])
@deferred_f_from_coro_f
async def test_http_guide_ch9_no_cache_is_not_a_download_per_request(sites, directive) -> None:
    clock = SkippingClock()
    site = sites(
        routes={
            "/robots.txt": with_headers(text(ROBOTS), Cache_Control=directive),
            "/slow": skipping(clock, 1.0),
        },
        default=text("page"),
    )
    followups = {site.url("/slow"): [site.url(f"/p{i}") for i in range(5)]}
    spider, _ = await crawl([site.url("/slow")], followups=followups, clock=clock)
    assert len(spider.fetched) == 6
    assert site.count("/robots.txt") == 1  # the default floor keeps it 600 s

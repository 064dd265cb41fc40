"""How long an expired robots.txt copy still decides the requests its fetch
released (RFC 9309 2.4): one lifetime past its expiry, never past 24 h after
its fetch; then one fetch for the next request that needs it, and still no
download loop. Unit tests of the bound with the clock passed in, and real
crawls against the local test server whose robots.txt changes midway."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.web import server

from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome
from scrapy_rfc9309.sites._records import ReaderLimits, answer_of
from scrapy_rfc9309.sites._site import site_of
from scrapy_rfc9309.sites._sitetable import (
    RELEASED_GRACE_MIN,
    RFC_MAX_AGE,
    keep_stale_copy,
    outlived,
    released_until,
)
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore

from .conftest import crawl
from .records import fetch_record
from .server import MockSite, delayed, text

HOUR = 3600.0
DAY = 24 * HOUR


def copy(fetched_at: float | None, lifetime: float, kind: Kind = Kind.PARSED) -> SiteOutcome:
    expires = (fetched_at or 0.0) + lifetime
    return SiteOutcome(kind, None, "HTTP 200", expires, fetched_at=fetched_at)


# -- the bound, the clock passed in ---------------------------------------------------


@pytest.mark.parametrize(
    ("lifetime", "until"),
    [
        (1.0, 1000.0 + 2.0),  # one lifetime past its expiry
        (600.0, 1000.0 + 1200.0),
        (12 * HOUR, 1000.0 + DAY),  # exactly 24 h after its fetch
        (20 * HOUR, 1000.0 + DAY),  # capped: never past 24 h after its fetch
        (DAY, 1000.0 + DAY),  # the default lifetime: no time past its expiry
        (0.0, 1000.0 + RELEASED_GRACE_MIN),  # a lifetime of 0 s: the least grace (no loop)
        (0.25, 1000.0 + 0.25 + RELEASED_GRACE_MIN),
    ],
    ids=["1s", "10min", "12h", "20h-capped", "24h", "0s-floor", "quarter-second-floor"],
)
def test_2_4_a_released_copy_decides_for_one_lifetime_past_expiry_at_most_24h(
    lifetime: float, until: float
) -> None:
    outcome = copy(1000.0, lifetime)
    assert released_until(outcome.expires_at, outcome.fetched_at) == pytest.approx(until)
    assert not outlived(outcome, now=until - 0.001)
    assert outlived(outcome, now=until)
    assert outlived(outcome, now=until + DAY)


def test_2_4_a_lifetime_over_24h_is_never_cut_short_for_released_requests() -> None:
    """``ROBOTSTXT_CACHE_TTL`` above 24 h (warned about at start-up): released
    requests are decided by the copy as long as fresh ones are, no longer."""
    outcome = copy(0.0, 2 * DAY)
    assert released_until(outcome.expires_at, outcome.fetched_at) == 2 * DAY
    assert not outlived(outcome, now=2 * DAY - 1)
    assert outlived(outcome, now=2 * DAY)


def test_2_4_a_copy_without_a_fetch_time_gets_the_least_grace() -> None:
    outcome = SiteOutcome(Kind.PARSED, None, "HTTP 200", 500.0)
    assert released_until(outcome.expires_at, None) == 500.0 + RELEASED_GRACE_MIN


def test_2_4_a_fetch_time_after_the_expiry_counts_as_a_lifetime_of_0() -> None:
    """A damaged time (fetched after it expired) never widens the bound."""
    assert released_until(100.0, 5000.0) == 100.0 + RELEASED_GRACE_MIN


def test_2_4_the_24h_cap_counts_from_the_fetch_of_a_stored_copy() -> None:
    """A copy from the store fetched 23 h ago with 1 h left: released requests
    may use it until 24 h after that fetch, not one lifetime more."""
    now = 10 * DAY
    outcome = SiteOutcome(Kind.PARSED, None, "HTTP 200", now + HOUR, fetched_at=now - 23 * HOUR)
    assert released_until(outcome.expires_at, outcome.fetched_at) == now + HOUR
    assert outlived(outcome, now + HOUR)


def test_2_4_a_copy_kept_while_unreachable_counts_from_the_unreachable_fetch() -> None:
    """The earlier copy kept in force (RFC 9309 2.4, unreachable) takes the
    unreachable answer's expiry and fetch time: its bound is that answer's."""
    stale = copy(0.0, 600.0)
    unreachable = SiteOutcome(Kind.UNREACHABLE, None, "HTTP 503", 5000.0 + 600.0, fetched_at=5000.0)
    kept = keep_stale_copy(stale, unreachable)
    assert kept is not None and kept.fetched_at == 5000.0
    assert released_until(kept.expires_at, kept.fetched_at) == 5000.0 + 1200.0


def test_2_4_a_stored_copy_keeps_the_age_of_its_own_fetch() -> None:
    """Read back 23 h after its fetch (wall clock), a stored copy's fetch time on
    the crawl's monotonic clock is 23 h ago, not the moment it was read: its
    released requests are decided by it until 24 h after that fetch."""
    site = "http://example.com:80"
    wall, monotonic = 1_800_000_000.0, 500.0
    record = fetch_record(wall - 23 * HOUR, b"User-agent: *\n", site=site, expires_in=DAY)
    limits = ReaderLimits(
        cache_ttl=DAY,
        unreachable_ttl=600.0,
        retry_after_max=DAY,
        max_size=500_000,
        auth_disallow=False,
    )
    outcome = answer_of(record, b"User-agent: *\n", site, limits).outcome_now(
        None, wall=wall, monotonic=monotonic
    )
    assert outcome.fetched_at == pytest.approx(monotonic - 23 * HOUR)
    assert outcome.expires_at == pytest.approx(monotonic + HOUR)
    assert released_until(outcome.expires_at, outcome.fetched_at) == pytest.approx(monotonic + HOUR)


def test_2_4_a_stored_copy_dated_ahead_of_now_counts_as_fetched_now() -> None:
    """A record whose fetch time is ahead of the wall clock never widens the
    bound: its age counts as 0."""
    site = "http://example.com:80"
    record = fetch_record(2_000.0, b"User-agent: *\n", site=site, expires_in=600.0)
    limits = ReaderLimits(
        cache_ttl=DAY,
        unreachable_ttl=600.0,
        retry_after_max=DAY,
        max_size=500_000,
        auth_disallow=False,
    )
    answer = answer_of(record, b"User-agent: *\n", site, limits)
    outcome = answer.outcome_now(None, wall=1_000.0, monotonic=10.0)
    assert outcome.fetched_at == 10.0


def test_2_4_the_fetch_time_survives_compaction() -> None:
    outcome = copy(42.0, 10.0)
    assert outcome.compact().fetched_at == 42.0
    assert RFC_MAX_AGE == DAY


# -- real crawls: robots.txt changes to Disallow: / while a backlog is fetched ------------

TTL = 1.0
DELAY = 0.25
PAGES = 16
#: the page whose download changes the site's robots.txt to ``Disallow: /``
FLIP_AT = "/p3"
OURS = "scrapy_rfc9309.RobotsTxtPriorityQueue"
PLAIN = "scrapy.pqueues.ScrapyPriorityQueue"


#: how long the server takes to answer robots.txt: every start request is
#: queued by then, and released by the fetch
ROBOTS_WAIT = 0.3


class ChangingSite:
    """A site whose robots.txt allows everything but ``/no`` until the page
    :data:`FLIP_AT` is served, and disallows everything from then on."""

    def __init__(self, sites: Any) -> None:
        self.flipped_at: float | None = None
        #: when each robots.txt answer was sent
        self.answered: list[float] = []
        self.site: MockSite = sites(
            routes={"/robots.txt": delayed(ROBOTS_WAIT, self._robots), FLIP_AT: self._flip},
            default=self._page,
        )

    def _robots(self, request: server.Request) -> bytes | int:
        self.answered.append(self.site.now())
        rules = "Disallow: /no" if self.flipped_at is None else "Disallow: /"
        return text(f"User-agent: *\n{rules}\n")(request)

    def _page(self, request: server.Request) -> bytes | int:
        return text("<html>page</html>", content_type=b"text/html")(request)

    def _flip(self, request: server.Request) -> bytes | int:
        self.flipped_at = self.site.now()
        return self._page(request)

    def log(self) -> list[tuple[float, str]]:
        """What the server was asked for, when (its own request log)."""
        return list(zip(self.site.hit_times, self.site.hits, strict=True))


@pytest.mark.parametrize(
    ("queue", "settings", "lag"),
    [
        # our queue hands a site's backlog out one request at a time (the slot's
        # concurrency): each is decided at most one DOWNLOAD_DELAY before its download
        (OURS, {"CONCURRENT_REQUESTS_PER_DOMAIN": 1}, 1.5 * DELAY),
        # another queue: beyond ROBOTSTXT_HELD_SHARE the requests are set aside and
        # scheduled again, released, once the robots.txt is settled; two at a time
        # in the downloader, each decided at most two delays before its download
        (PLAIN, {"CONCURRENT_REQUESTS": 2}, 3 * DELAY),
    ],
    ids=["our-queue", "another-queue-set-aside"],
)
@deferred_f_from_coro_f
async def test_2_4_released_requests_past_the_bound_wait_for_the_new_robots_txt(
    sites: Any, caplog: pytest.LogCaptureFixture, queue: str, settings: dict[str, Any], lag: float
) -> None:
    """``ROBOTSTXT_CACHE_TTL = 1`` and pages paced 0.25 s apart: one fetch
    releases all 16 requests, a 4 s backlog. The site changes its robots.txt to
    ``Disallow: /`` after the 4th page. The released requests are decided by the
    first copy for its lifetime plus as long again (2 s from its fetch), then the
    next one waits for a new fetch, whose ``Disallow: /`` drops the rest: no page
    is downloaded past the bound while the current robots.txt disallows it, and
    the robots.txt downloads stay few (no loop)."""
    changing = ChangingSite(sites)
    site = changing.site
    urls = [site.url(f"/p{i}") for i in range(PAGES)]
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.middleware"):
        spider, stats = await crawl(
            urls,
            {
                "SCHEDULER_PRIORITY_QUEUE": queue,
                "ROBOTSTXT_CACHE_TTL": TTL,
                "DOWNLOAD_DELAY": DELAY,
                "CLOSESPIDER_TIMEOUT": 15,  # a loop fails the test instead of hanging it
                **settings,
            },
        )
    assert stats["finish_reason"] == "finished"
    log = changing.log()
    assert changing.flipped_at is not None
    first_copy = changing.answered[0]
    # the first copy decides until one lifetime past its expiry; a page
    # downloaded later was decided at most ``lag`` earlier (plus a margin for a
    # loaded machine): none comes after that while Disallow: / is served
    bound = first_copy + 2 * TTL
    late = [
        (round(when - first_copy, 2), path)
        for when, path in log
        if path != "/robots.txt" and when > changing.flipped_at and when > bound + lag + 0.5
    ]
    assert late == []
    # robots.txt fetched again, for the released requests that outlived the first copy
    assert len(changing.answered) >= 2
    assert stats["robotstxt/released_outlived"] >= 1
    said = [r.getMessage() for r in caplog.records if "requests that waited" in r.getMessage()]
    assert said and said[0].startswith(f"robots.txt of {site.origin} fetched again")
    # the rest is decided by the new copy: dropped by Disallow: /
    assert spider.dropped
    assert all('"Disallow: /"' in reason for reason in spider.dropped.values())
    assert len(spider.fetched) + len(spider.dropped) == PAGES
    # no loop: each fetch decides the requests released for 2 s at least
    assert site.count("/robots.txt") <= 4


@deferred_f_from_coro_f
async def test_2_4_a_stored_copy_decides_released_requests_until_24h_after_its_fetch(
    sites: Any, tmp_path: Path
) -> None:
    """The default 24 h: a copy in the store fetched 24 h less 2.5 s ago (it
    allows everything) releases a backlog paced 0.25 s apart, while the site now
    serves ``Disallow: /``. The copy decides only until 24 h after its own fetch
    (not one lifetime after it was read); then robots.txt is downloaded once and
    the new copy drops the rest. (A declared purpose makes every request wait
    for the site's tdmrep.json too, answered after 0.3 s: all of them are
    queued by then, and released together.)"""
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nDisallow: /\n"),
            "/.well-known/tdmrep.json": delayed(ROBOTS_WAIT, text("not found", 404)),
        },
        default=text("<html>page</html>", content_type=b"text/html"),
    )
    key = site_of(site.origin + "/")
    assert key is not None
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    body = b"User-agent: *\nAllow: /\n"
    left = 2.5
    started = time.monotonic()
    store.save(fetch_record(time.time() - (DAY - left), body, site=key, expires_in=DAY), body)
    store.close()
    urls = [site.url(f"/p{i}") for i in range(PAGES)]
    spider, stats = await crawl(
        urls,
        {
            "SCHEDULER_PRIORITY_QUEUE": OURS,
            "ROBOTSTXT_STORE_URI": f"sqlite:///{path}",
            "ROBOTSTXT_PURPOSES": ["train-ai"],
            "DOWNLOAD_DELAY": DELAY,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "CLOSESPIDER_TIMEOUT": 15,
            "LOG_LEVEL": "INFO",
        },
    )
    assert stats["finish_reason"] == "finished"
    assert stats["robotstxt/store/loaded"] == 1
    # no page downloaded after the stored copy turned 24 h old (``left`` after
    # ``started``), but one decided just before (at most 1.5 delays earlier)
    pages = [
        when for when, path in zip(site.hit_times, site.hits, strict=True) if path != "/robots.txt"
    ]
    assert pages and max(pages) <= started + left + 1.5 * DELAY + 0.5
    assert site.count("/robots.txt") == 1  # downloaded once the copy was too old
    assert stats["robotstxt/released_outlived"] == 1
    assert spider.dropped and all('"Disallow: /"' in r for r in spider.dropped.values())
    assert len(spider.fetched) + len(spider.dropped) == PAGES


@deferred_f_from_coro_f
async def test_2_4_a_spaced_site_s_requests_wait_undecided_in_the_queue_not_in_its_slot(
    sites: Any,
) -> None:
    """A spider that follows links: ``/p0`` links to 15 pages, all pushed while
    the site's copy is fresh, with ``DOWNLOAD_DELAY`` spacing them 0.25 s apart
    and Scrapy's default concurrency. Handed out at once they would all be
    decided by that copy and wait in Scrapy's download slot for 4 s, long past
    its lifetime (RFC 9309 2.4) and the site's switch to ``Disallow: /``. Our
    queue lets one request of a spaced site into the downloader at a time, so
    each is decided by the robots.txt in force when it goes: no page is
    downloaded past the last allowing copy's bound while ``Disallow: /`` is
    served."""
    changing = ChangingSite(sites)
    site = changing.site
    first = site.url("/p0")
    links = [site.url(f"/p{i}") for i in range(1, PAGES)]
    spider, stats = await crawl(
        [first],
        {
            "SCHEDULER_PRIORITY_QUEUE": OURS,
            "ROBOTSTXT_CACHE_TTL": TTL,
            "DOWNLOAD_DELAY": DELAY,
            "CLOSESPIDER_TIMEOUT": 15,
        },
        followups={first: links},
    )
    assert stats["finish_reason"] == "finished"
    assert changing.flipped_at is not None
    allowing = [when for when in changing.answered if when < changing.flipped_at]
    bound = max(allowing) + 2 * TTL
    late = [
        (round(when - changing.flipped_at, 2), path)
        for when, path in changing.log()
        if path != "/robots.txt" and when > changing.flipped_at and when > bound + 2 * DELAY
    ]
    assert late == []
    assert spider.dropped  # the rest, by the new copy
    assert all('"Disallow: /"' in reason for reason in spider.dropped.values())
    assert len(spider.fetched) + len(spider.dropped) == PAGES
    assert site.count("/robots.txt") <= 4  # no loop

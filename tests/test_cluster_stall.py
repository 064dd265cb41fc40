"""A cluster whose Redis stalls holds its paced sites: it never speeds them up.

``Crawl-delay`` is not part of RFC 9309 (its section 2.2.4 leaves other
records to crawlers); a site that asks for it asks it of the crawler, not of
each of its processes. When the cluster clock in Redis cannot be reached,
each process alone does not know when the others send, so a paced site's
requests are held until Redis answers again (tried every second), then
spaced by the shared clock at once. Real ``redis-server`` stopped with
SIGSTOP mid-crawl, real crawler processes (``tests/cluster_crawl.py``),
asserting on when the site's server saw each page.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from scrapy import Request, Spider
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from twisted.internet import reactor as _reactor
from twisted.internet import task
from twisted.internet.defer import Deferred, maybeDeferred

from scrapy_rfc9309.components._clock import Clock, use_clock
from scrapy_rfc9309.components.cluster._pacing import ClusterPacer
from scrapy_rfc9309.components.cluster._pacing_outage import (
    HOLD_SECONDS,
    ClockOutage,
    slot_wait,
    still_due,
)
from scrapy_rfc9309.components.settings._store_settings import ClusterDelaySettings
from scrapy_rfc9309.sites._cluster_clock import ClusterClock
from scrapy_rfc9309.sites._store import StoreError

from .redis_server import RedisServer, require_redis_server
from .server import text
from .test_cluster_delay import ADDON, PAGES, crawl_losing_redis, page_gaps
from .test_redis_store import CrawlerProc, cluster_settings

reactor: Any = _reactor

#: seconds Redis stays stopped (SIGSTOP) in the crawl test
STALL_SECONDS = 2.0


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["sigstop", "killed-restarted-empty"])
@deferred_f_from_coro_f
async def test_redis_stopped_mid_crawl_holds_a_paced_site(
    sites: Any, tmp_path: Path, fault: str
) -> None:
    """Two processes, ``Crawl-delay: 0.5``, 3 pages each; Redis is stopped (SIGSTOP,
    or killed and started again empty) for 2 s as the second page arrives (the
    processes see it lost: its calls fail). No two pages reach the site less
    than 0.45 s apart (each process pacing on its own sent two at a time,
    0.000 s apart, for 30 s), and every page is downloaded, none dropped."""
    server = RedisServer(tmp_path / "redis", require_redis_server()).start()
    pages = {"count": 0}

    def page(request: Any) -> bytes:
        pages["count"] += 1
        if pages["count"] == 2:  # mid-crawl: Redis stops answering, then comes back
            if fault == "sigstop":
                server.freeze()
                reactor.callLater(STALL_SECONDS, server.thaw)
            else:
                server.stop(kill=True)
                reactor.callLater(STALL_SECONDS, server.start)
        return b"page"

    site = sites(routes={"/robots.txt": text(b"User-agent: *\nCrawl-delay: 0.5\n")}, default=page)
    settings = cluster_settings(server, "stall:", ROBOTSTXT_CRAWL_DELAY=True, **ADDON)
    try:
        procs = [
            CrawlerProc(
                tmp_path,
                f"crawler{n}",
                [site.url(path) for path in PAGES[n:6:2]],
                settings,
                barrier=[str(tmp_path), 2],
            )
            for n in range(2)
        ]
        results = [await proc.finished() for proc in procs]
    finally:
        server.thaw()
        server.stop(kill=True)
    assert sorted(p for p in site.hits if p != "/robots.txt") == sorted(PAGES[:6])
    gaps = page_gaps(site)
    assert min(gaps) >= 0.45, gaps
    fetched = [url for result in results for url in result["fetched"]]
    assert sorted(fetched) == sorted(site.url(path) for path in PAGES[:6])
    for result in results:
        assert result["dropped"] == {}
        assert result["stats"].get("robotstxt/forbidden", 0) == 0
        assert result["stats"].get("robotstxt/cluster_delay/errors", 0) >= 1  # the stall was seen


@pytest.mark.slow
@pytest.mark.parametrize(
    ("queue", "where"),
    [
        pytest.param({}, "scheduler", id="our-queue"),
        pytest.param(
            {"SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"},
            "downloader",
            id="another-queue",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_requests_held_for_a_lost_redis_are_dropped_at_close(
    sites: Any, tmp_path: Path, queue: dict[str, Any], where: str
) -> None:
    """Redis gone for good as the robots.txt (``Crawl-delay: 1``) is served, the
    spider closed 3 s later (``CLOSESPIDER_TIMEOUT``), within the hold: the
    held pages (in our queue, or in the pacing middleware with another
    scheduler) are dropped and counted, none sent and none left hanging."""
    paths = PAGES[:3]
    site, spider, stats = await crawl_losing_redis(
        sites, tmp_path, b"User-agent: *\nCrawl-delay: 1\n", paths,
        CLOSESPIDER_TIMEOUT=3, **queue,
    )  # fmt: skip
    assert [p for p in site.hits if p != "/robots.txt"] == []
    assert spider.fetched == []
    assert stats.get("robotstxt/forbidden/closing") == len(paths), where
    assert stats.get("robotstxt/forbidden") == len(paths)
    assert stats.get("finish_reason") == "closespider_timeout"


# -- the fallback's logic, on an injected clock ------------------------------------------

SITE = "http://a.example:80"


class FakeClusterClock:
    """A :class:`~scrapy_rfc9309.sites._cluster_clock.ClusterClock` that answers
    (every turn free, ``rank`` of ``count`` alive) or fails (``lost``)."""

    uri = "redis://fake"

    def __init__(self, rank: int = 0, count: int = 1) -> None:
        self.lost = False
        self.rank, self.count = rank, count
        self.calls: list[tuple[str, ...]] = []
        #: the tokens of the turns confirmed at send
        self.sent: list[str] = []

    def _answer(self, *call: Any) -> None:
        self.calls.append(tuple(str(part) for part in call))
        if self.lost:
            raise StoreError("Redis at redis://fake: timed out")

    def take(self, site: str, delay: float, token: str = "") -> float:
        self._answer("take", site)
        return 0.0

    def send(self, site: str, delay: float, token: str = "") -> float:
        self._answer("send", site)
        self.sent.append(token)
        return 0.0

    def answered(self, site: str, delay: float, token: str = "") -> float:
        self._answer("answered", site, round(delay, 3), token)
        return 0.0

    def beat(self, token: str, lifetime: float) -> tuple[int, int]:
        self._answer("beat")
        return self.rank, self.count

    def renew(self, flights: list[tuple[str, str]]) -> None:
        self._answer("renew", *(part for flight in flights for part in flight))

    def ping(self) -> None:
        self._answer("ping")

    def leave(self, token: str) -> None:
        pass

    def close(self) -> None:
        pass


def synchronous(call: Callable[[], None], site: str = "") -> Deferred[None]:
    """Runs a ping at once (in a crawl: on a thread, off the reactor)."""
    return maybeDeferred(call)


def fired(answer: Deferred[float]) -> float:
    """The result of an ask answered at once (Redis asked on the test's thread)."""
    results: list[float] = []
    answer.addCallback(results.append)
    assert results, "not answered at once"
    return results[0]


def paced(
    fake: FakeClusterClock,
    start: float = 1000.0,
    cluster_delay: float | None = None,
    in_thread: Callable[..., Deferred[Any]] | None = None,
) -> tuple[ClusterPacer, task.Clock, Any]:
    """A pacer on ``fake`` with a manual clock (``start``: its Unix time at 0),
    ``Crawl-delay: 1`` for :data:`SITE` (with ``cluster_delay``: that
    ``ROBOTSTXT_CLUSTER_DELAY`` alone), beaten once; its crawler's stats."""
    scheduler = task.Clock()
    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": True})
    crawler.stats = MemoryStatsCollector(crawler)
    time = Clock.manual(scheduler, epoch=start)
    use_clock(crawler, time)
    settings = ClusterDelaySettings(
        redis_url="redis://fake",
        prefix="t:",
        crawl_delay=cluster_delay is None,
        cluster_delay=cluster_delay,
        flight=190.0,
    )
    pacer = ClusterPacer(
        crawler,
        settings,
        cast(Any, fake),
        time,
        in_thread=in_thread or synchronous,
        scheduler=scheduler,
    )
    if cluster_delay is None:
        pacer.set_crawl_delay(SITE, 1.0)
    pacer.start()
    return pacer, scheduler, crawler.stats


def test_outage_holds_a_paced_site_and_tries_redis_every_second(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis lost: the site's requests wait (never 0.0, which sent them), one
    ERROR line, a ping once per second; answering again, the shared clock is
    asked at once."""
    fake = FakeClusterClock()
    pacer, scheduler, stats = paced(fake)
    assert fired(pacer.wait(SITE)) == 0.0
    fake.lost = True
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.store"):
        assert fired(pacer.at_send(SITE)) == HOLD_SECONDS  # the failed call: held
        for _ in range(8):  # 2 s of re-asks
            scheduler.advance(0.25)
            assert fired(pacer.wait(SITE)) == HOLD_SECONDS
            assert fired(pacer.at_send(SITE)) == HOLD_SECONDS
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "held until it answers again (tried every 1 s)" in errors[0].getMessage()
    pings = [call for call in fake.calls if call[0] == "ping"]
    assert len(pings) == 2  # one a second, not one per re-ask
    assert pacer.unreachable
    fake.lost = False
    scheduler.advance(1.0)
    fake.calls.clear()
    assert fired(pacer.wait(SITE)) == 0.0  # this re-ask pings, Redis answers: asked at once
    assert not pacer.unreachable
    assert fake.calls == [("ping",), ("take", SITE)]
    assert stats.get_value("robotstxt/cluster_delay/errors") == 3  # the call and 2 pings


def test_an_outage_met_by_the_beat_is_told_over_with_no_paced_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis lost at a beat (the processes alive counted every 2 s), no paced
    request asking: the beats ping it, and once it answers one INFO line says
    so (it was said only when a paced request asked, so a crawl with no paced
    site never heard Redis was back)."""
    from scrapy_rfc9309.components.cluster._pacing_fallback import BEAT_SECONDS

    fake = FakeClusterClock()
    pacer, scheduler, _ = paced(fake)
    fake.lost = True
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.store"):
        scheduler.advance(BEAT_SECONDS)  # the beat fails: the outage starts
        assert pacer.unreachable
        fake.lost = False
        scheduler.advance(BEAT_SECONDS)  # the next beat pings: Redis answers
    assert not pacer.unreachable
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in said if level == "ERROR"] == ["ERROR"]
    assert [m for level, m in said if level == "INFO" and "answers again" in m], said
    scheduler.advance(BEAT_SECONDS)
    assert fake.calls[-1] == ("beat",)  # beating again


def test_cluster_delay_alone_is_held_too() -> None:
    """``ROBOTSTXT_CLUSTER_DELAY`` alone (no Crawl-delay, not
    ``ROBOTSTXT_CRAWL_DELAY``): while Redis is lost its sites are held as well
    (they were sent with no delay at all)."""
    fake = FakeClusterClock()
    pacer, scheduler, _ = paced(fake, cluster_delay=2.0)
    assert pacer.delay_for(SITE) == 2.0
    assert fired(pacer.wait(SITE)) == 0.0
    fake.lost = True
    for _ in range(10):
        scheduler.advance(0.5)
        assert fired(pacer.wait(SITE)) == HOLD_SECONDS
        assert fired(pacer.at_send(SITE)) == HOLD_SECONDS


def test_a_redis_back_empty_is_told_this_process_s_last_answer() -> None:
    """``Crawl-delay: 3``: answered at 0.5 s, Redis lost at 1 s, back at 2 s
    (restarted empty, say): it is told that the site's next turn is 1.5 s
    away (3 s from the answer), before any turn is asked."""
    fake = FakeClusterClock()
    pacer, scheduler, _ = paced(fake)
    pacer.set_crawl_delay(SITE, 3.0)
    request = Request(SITE + "/p")
    assert fired(pacer.at_send(SITE)) == 0.0
    pacer.sent(request, SITE)
    scheduler.advance(0.5)
    pacer.answered(request)
    fake.lost = True
    scheduler.advance(0.5)
    assert fired(pacer.wait(SITE)) == HOLD_SECONDS
    fake.lost = False
    fake.calls.clear()
    scheduler.advance(1.0)
    assert fired(pacer.wait(SITE)) == 0.0  # the ping answers
    # its answer reached Redis before the outage: no send of it in flight there
    assert fake.calls == [("ping",), ("answered", SITE, "1.5", ""), ("take", SITE)]


def two_sites_sent(pacer: ClusterPacer) -> tuple[Request, Request]:
    """A request of :data:`SITE` and one of another site (``Crawl-delay: 1``
    both), each sent in its turn."""
    pacer.set_crawl_delay("http://b.example:80", 1.0)
    requests = Request(SITE + "/p"), Request("http://b.example:80/q")
    for request in requests:
        site = request.url.rsplit("/", 1)[0]
        assert fired(pacer.at_send(site)) == 0.0
        pacer.sent(request, site)
    return requests


def test_close_ends_the_sends_still_in_flight() -> None:
    """A request sent and never answered (its download cancelled, or replaced by
    a later middleware): at close its send is ended in Redis as answered, so
    that no other process waits for it to expire; one answered is not told
    again."""
    fake = FakeClusterClock()
    pacer, _, _ = paced(fake)
    answered, _ = two_sites_sent(pacer)
    pacer.answered(answered)
    fake.calls.clear()
    pacer.close()
    assert fake.calls == [("answered", "http://b.example:80", "1.0", fake.sent[1])]


def test_each_beat_renews_the_sends_in_flight_until_their_answer() -> None:
    """A send's token lives a few seconds in Redis: each beat (every 2 s) renews
    the sends still in flight, and no longer once its answer reached Redis;
    nor past DOWNLOAD_TIMEOUT plus a margin (190 s here: a request a later
    middleware replaced gets no answer, and its send is left to expire)."""
    from scrapy_rfc9309.components.cluster._pacing_fallback import BEAT_SECONDS

    fake = FakeClusterClock()
    pacer, scheduler, _ = paced(fake)
    answered, _ = two_sites_sent(pacer)
    fake.calls.clear()
    scheduler.advance(BEAT_SECONDS)
    a, b = fake.sent
    assert ("renew", SITE, a, "http://b.example:80", b) in fake.calls
    pacer.answered(answered)
    fake.calls.clear()
    scheduler.advance(BEAT_SECONDS)
    assert ("renew", "http://b.example:80", b) in fake.calls
    scheduler.advance(190.0)
    fake.calls.clear()
    scheduler.advance(BEAT_SECONDS)
    assert [call for call in fake.calls if call[0] == "renew"] == []


def test_a_push_still_on_its_thread_at_close_is_ended_by_the_close() -> None:
    """The spider closes while an answer's push is still on its thread: the close
    ends that send in Redis itself, off the reactor too (it was never cleared,
    and held the site for every other process until it expired), before the
    connections are closed; and the push failing then, on a connection the
    close shut, is not an error."""
    fake = FakeClusterClock()
    calls: list[Deferred[Any]] = []

    def on_thread(call: Callable[[], Any], site: str = "") -> Deferred[Any]:
        if len(calls) == 2:  # the answer's push (after the turn and the beat): not run yet
            calls.append(Deferred())
            return calls[-1]
        calls.append(maybeDeferred(call))
        return calls[-1]

    pacer, _, _ = paced(fake, in_thread=on_thread)
    request = Request(SITE + "/p")
    assert fired(pacer.at_send(SITE)) == 0.0
    pacer.sent(request, SITE)
    (token,) = fake.sent
    pacer.answered(request)
    push = calls[2]
    assert not push.called
    fake.calls.clear()
    closed = pacer.close()
    assert closed.called  # the end ran at once here (in a crawl: on a thread)
    assert fake.calls == [("answered", SITE, "1.0", token)]
    assert len(calls) == 4  # the end went through the threads, not the reactor
    failures: list[Any] = []
    push.errback(ValueError("I/O operation on closed file"))
    push.addErrback(failures.append)
    assert failures == []


def test_an_answer_redis_missed_ends_its_send_in_flight_when_redis_is_back() -> None:
    """``Crawl-delay: 1``: sent at 0, answered at 0.5 while Redis fails (the push
    lost), Redis back at 1.5 s: it is told that answer, with the send's token,
    before any turn is asked, so that the send is no longer in flight there
    (no process waits for it to expire)."""
    fake = FakeClusterClock()
    pacer, scheduler, _ = paced(fake)
    request = Request(SITE + "/p")
    assert fired(pacer.at_send(SITE)) == 0.0
    pacer.sent(request, SITE)
    (token,) = fake.sent
    assert token
    scheduler.advance(0.5)
    fake.lost = True
    pacer.answered(request)  # the push fails: the outage starts
    assert pacer.unreachable
    scheduler.advance(1.0)
    fake.lost = False
    fake.calls.clear()
    assert fired(pacer.wait(SITE)) == 0.0  # the ping answers
    assert fake.calls == [("ping",), ("answered", SITE, "0.0", token), ("take", SITE)]


def test_held_past_the_hold_sends_in_its_own_slot_only() -> None:
    """Redis lost for good, process 1 of 2 alive: held 30 s (never sent), then
    sent only in its slots (1.25 s each, every other one its own, the first
    0.25 s of each), so never within 1 s of process 0's, and its own sends at
    least 2 delays apart."""
    fake = FakeClusterClock(rank=1, count=2)
    pacer, scheduler, _ = paced(fake)
    fake.lost = True
    assert fired(pacer.wait(SITE)) == HOLD_SECONDS
    for _ in range(int(29.5 / 0.05)):
        scheduler.advance(0.05)
        assert fired(pacer.wait(SITE)) > 0  # held
    scheduler.advance(0.5)
    sends: list[float] = []
    for step in range(400):  # 20 s
        scheduler.advance(0.05)
        if fired(pacer.at_send(SITE)) == 0.0:
            wall = 1000.0 + scheduler.seconds()
            assert (wall - 1.25) % 2.5 < 0.25 + 1e-6, (step, wall)
            sends.append(wall)
            pacer.sent(Request(SITE + f"/{step}"), SITE)
    assert len(sends) >= 7
    assert min(b - a for a, b in itertools.pairwise(sends)) >= 2.0


def test_after_an_outage_that_reached_the_slots_keeps_them_for_the_grace() -> None:
    """Redis answers again after an outage long enough for the slots: for
    3 s more the process sends only in its slots (another process may not have
    seen Redis back yet, and sends in its own), asking Redis in them; then at
    every turn Redis grants."""
    fake = FakeClusterClock(rank=0, count=2)
    pacer, scheduler, _ = paced(fake)
    fake.lost = True
    assert fired(pacer.wait(SITE)) == HOLD_SECONDS
    scheduler.advance(31.0)  # a beat's ping fails at the end of it
    fake.lost = False
    scheduler.advance(1.0)  # the next ping due
    fired(pacer.wait(SITE))  # the ping answers
    assert not pacer.unreachable
    granted = []
    for _ in range(50):  # 2.5 s of the grace
        scheduler.advance(0.05)
        if fired(pacer.wait(SITE)) == 0.0:
            granted.append(1000.0 + scheduler.seconds())
    assert granted
    assert all(wall % 2.5 < 0.25 + 1e-6 for wall in granted), granted
    scheduler.advance(1.0)
    fake.calls.clear()
    assert fired(pacer.wait(SITE)) == 0.0  # the grace over: Redis alone decides
    assert fake.calls == [("take", SITE)]


def test_a_short_outage_asks_redis_at_once_when_it_answers() -> None:
    """An outage shorter than the hold: no grace, no slots after it."""
    outage = ClockOutage(retry_seconds=1.0, hold_max_seconds=30.0)
    assert outage.failed(10.0)
    assert not outage.failed(11.0)  # the same outage
    assert outage.holding(39.9, 1.0) and not outage.in_slots(39.9)
    assert outage.answered(15.0) == 5.0
    assert not outage.in_slots(15.0) and not outage.holding(15.0, 1.0)


def test_an_outage_near_the_hold_keeps_the_slots_for_the_grace() -> None:
    """Answering again after 28 s, within the 3 s another process may have seen
    the outage earlier (and be sending in its slots): the slots are kept 3 s."""
    outage = ClockOutage(retry_seconds=1.0, hold_max_seconds=30.0)
    outage.failed(0.0)
    assert outage.answered(28.0) == 28.0
    assert outage.in_slots(30.9) and not outage.in_slots(31.0)


def test_a_delay_longer_than_the_hold_is_held_for_the_delay() -> None:
    """A site paced at 60 s is held 60 s, not 30: a turn granted just before the
    outage was seen may still be running."""
    outage = ClockOutage(retry_seconds=1.0, hold_max_seconds=30.0)
    outage.failed(0.0)
    assert outage.holding(59.0, 60.0)
    assert not outage.holding(59.0, 1.0)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("delay", [0.3, 1.0, 7.5])
def test_slots_of_different_processes_never_send_within_a_delay(count: int, delay: float) -> None:
    """Each of ``count`` processes sends a site's requests as soon as its slots
    let it (and its own last send is a delay old), each late by up to the
    window's end: merged, the sends are at least the delay apart."""
    sends: list[float] = []
    for rank in range(count):
        now, last = 5000.0 + 0.37 * rank, -1e9
        while now < 5000.0 + 40 * delay * count:
            now = max(now, last + delay)
            now += slot_wait(now, delay, rank, count)
            sends.append(now)
            last = now
            now += 0.001
    sends.sort()
    gaps = [b - a for a, b in itertools.pairwise(sends)]
    assert min(gaps) >= delay - 1e-9
    assert len(sends) >= 30  # never held for ever


def test_still_due_lists_the_sites_within_their_delay() -> None:
    last = [("http://a:80", 10.0), ("http://b:80", 8.0), ("http://c:80", 10.0)]
    delays = {"http://a:80": 1.0, "http://b:80": 1.0}
    assert list(still_due(last, delays.get, 10.25)) == [("http://a:80", 0.75)]


def test_beats_count_the_processes_alive_and_rank_them(
    redis_server: RedisServer, prefix: str
) -> None:
    """The Lua script of the beats, on a real Redis: each process learns its
    rank (by token) and the number alive; one silent past its beat's lifetime
    is no longer counted; one that leaves, at once. The script decides by a
    manual clock (``now``), moved on instead of waited for."""
    now = task.Clock()
    now.advance(1_000.0)
    clock = ClusterClock.open(redis_server.url, prefix, now=now.seconds)
    try:
        assert clock.beat("a", 10.0) == (0, 1)
        assert clock.beat("b", 0.2) == (1, 2)
        assert clock.beat("c", 10.0) == (2, 3)
        now.advance(0.2)
        assert clock.beat("c", 10.0) == (2, 3)  # b's beat lives until then
        now.advance(0.001)
        assert clock.beat("c", 10.0) == (1, 2)  # b silent for longer than 0.2 s
        clock.leave("a")
        assert clock.beat("c", 10.0) == (0, 1)
        clock.ping()
    finally:
        clock.close()

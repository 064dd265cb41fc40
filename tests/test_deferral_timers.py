"""The deferral timers (HTTP: The Definitive Guide ch. 9; RFC 9309 2.3.1.4) on an
injected clock: Twisted's ``task.Clock`` is advanced, no real time passes. The
same behaviour in real crawls: tests/test_queue.py."""

from __future__ import annotations

from typing import Any

from scrapy.settings import Settings
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from twisted.internet import task

from scrapy_rfc9309.components._clock import MANUAL_EPOCH, Clock
from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings
from scrapy_rfc9309.components.sitefiles._deferral import Deferrals
from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome
from scrapy_rfc9309.sites._sitetable import SiteTable

SITE = "http://a.example:80"


class Harness:
    """A site table, its deferral timers on a manual clock, and what they called."""

    def __init__(self, defer: float, **settings: Any) -> None:
        self.ticks = task.Clock()
        self.clock = Clock.manual(self.ticks)
        self.table: SiteTable[Any] = SiteTable(100)
        values = {"ROBOTSTXT_UNREACHABLE_DEFER": defer, **settings}
        self.stats = MemoryStatsCollector(get_crawler())
        self.retried: list[float] = []
        self.released: list[float] = []
        self.deferrals = Deferrals(
            self.table,
            RobotsTxtSettings.from_settings(Settings(values)),
            self.stats,
            retry=lambda site: self.retried.append(self.ticks.seconds()),
            release=lambda site: self.released.append(self.ticks.seconds()),
            give_up=lambda site: True,
            clock=self.clock,
        )

    def unreachable(self, retry_after: float | None = None) -> Any:
        """Settle an unreachable fetch of the site now and defer it."""
        now = self.clock.monotonic()
        was_deferred = self.table.deferral(SITE) is not None
        self.table.start(SITE)
        expires = now + (retry_after if retry_after is not None else 60)
        outcome = SiteOutcome(
            Kind.UNREACHABLE, None, "HTTP 503", expires, retry_after=retry_after is not None
        )
        self.table.settle(SITE, outcome)
        return self.deferrals.defer(SITE, outcome, was_deferred)

    def run_until(self, seconds: float) -> None:
        """Advance the clock to ``seconds``; each attempt due fails again."""
        while self.ticks.seconds() < seconds:
            self.ticks.advance(0.25)
            while len(self.retried) > self.attempts_made:
                self.attempts_made += 1
                self.unreachable()

    attempts_made = 0


def test_manual_clock_reads_the_twisted_clock() -> None:
    ticks = task.Clock()
    clock = Clock.manual(ticks)
    fired: list[float] = []
    clock.call_later(2, lambda: fired.append(clock.monotonic()))
    ticks.advance(1.5)
    assert fired == [] and clock.monotonic() == 1.5 and clock.time() == MANUAL_EPOCH + 1.5
    ticks.advance(0.5)
    assert fired == [2.0]


def test_http_guide_ch9_back_off_doubles_then_the_deferral_ends_at_its_deadline() -> None:
    """ROBOTSTXT_UNREACHABLE_DEFER = 10: attempts after 1, 2 and 4 s of back-off
    (at 1, 3 and 7 s); the next (8 s later) would pass the deadline, so none is
    made and the requests are released (dropped) at the deadline, 10 s."""
    h = Harness(10)
    first = h.unreachable()
    assert first is not None and first.retry_at == 1.0 and first.deadline == 10.0
    assert h.stats.get_value("robotstxt/deferred") == 1
    h.run_until(20)
    assert h.retried == [1.0, 3.0, 7.0]
    assert h.released == [10.0]
    assert h.stats.get_value("robotstxt/deferred/expired") == 1
    assert h.table.deferral(SITE) is None
    assert not h.deferrals  # no timer left


def test_2_3_1_4_retry_after_delays_the_attempt_past_the_back_off() -> None:
    """A 503 asking for 3 s: tried again at 3 s, not after the 1 s back-off."""
    h = Harness(10)
    h.unreachable(retry_after=3)
    h.ticks.advance(2.9)
    assert h.retried == []
    h.ticks.advance(0.1)
    assert h.retried == [3.0]


def test_2_3_1_4_retry_after_past_the_deadline_releases_at_once() -> None:
    """A 503 asking for 30 s while ROBOTSTXT_UNREACHABLE_DEFER is 5: no deferral,
    no timer; counted as expired at once."""
    h = Harness(5)
    assert h.unreachable(retry_after=30) is None
    assert not h.deferrals
    assert h.stats.get_value("robotstxt/deferred/expired") == 1
    h.ticks.advance(60)
    assert h.retried == [] and h.released == []


def test_a_deferral_that_ran_out_does_not_start_again() -> None:
    """Once a site's deferral ended, a later unreachable outcome is not deferred."""
    h = Harness(2)
    h.unreachable()
    h.run_until(5)
    assert h.retried == [1.0] and h.released == [2.0]
    assert h.unreachable() is None
    h.ticks.advance(60)
    assert h.retried == [1.0] and h.released == [2.0]


def test_cancel_all_stops_every_timer() -> None:
    h = Harness(10)
    h.unreachable()
    assert h.deferrals
    h.deferrals.cancel_all()
    h.ticks.advance(60)
    assert h.retried == [] and h.released == [] and h.table.deferral(SITE) is None

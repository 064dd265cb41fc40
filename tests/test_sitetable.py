"""The site table's rules (RFC 9309 2.3, 2.4), with the clock passed in: no
reactor, no crawl. Unit tests for each rule, and a stateful property test
over any interleaving of look-ups, joins, settles, expiries and evictions."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from scrapy_rfc9309.sites._filetable import EVICTIONS_REMEMBERED
from scrapy_rfc9309.sites._outcome import DISALLOW_ALL, Kind, SiteOutcome
from scrapy_rfc9309.sites._sitetable import (
    BACKOFF_MAX,
    SiteState,
    SiteTable,
    backoff,
    keep_stale_copy,
)

from .profiles import examples

A, B = "http://a:80", "http://b:80"


def outcome(kind: Kind, expires_at: float, detail: str = "HTTP 200") -> SiteOutcome:
    return SiteOutcome(kind, None, detail, expires_at)


def test_2_4_an_outcome_is_fresh_until_it_expires() -> None:
    table: SiteTable[str] = SiteTable(10)
    assert table.join(A, "w1")
    table.settle(A, outcome(Kind.PARSED, expires_at=100.0))
    assert table.fresh(A, now=99.9) is not None
    assert table.fresh(A, now=100.0) is None
    assert table.stale(A) is not None


def test_single_flight_one_fetch_many_waiters_each_handed_back_once() -> None:
    table: SiteTable[str] = SiteTable(10)
    starts = [table.join(A, f"w{i}") for i in range(5)]
    assert starts == [True, False, False, False, False]
    assert table.is_pending(A) and table.waiting() == 5
    settled = table.settle(A, outcome(Kind.UNAVAILABLE, 50.0, "HTTP 404"))
    assert settled.waiters == ["w0", "w1", "w2", "w3", "w4"]
    assert not table.is_pending(A)
    with pytest.raises(KeyError):
        table.settle(A, outcome(Kind.PARSED, 60.0))


def test_fetch_ahead_starts_once_and_later_requests_join_it() -> None:
    table: SiteTable[str] = SiteTable(10)
    assert table.start(A)
    assert not table.start(A)
    assert not table.join(A, "w")
    assert table.settle(A, outcome(Kind.PARSED, 10.0)).waiters == ["w"]


@pytest.mark.parametrize("earlier", [Kind.PARSED, Kind.UNAVAILABLE])
def test_2_4_unreachable_refetch_keeps_the_earlier_copy(earlier: Kind) -> None:
    table: SiteTable[str] = SiteTable(10)
    table.join(A, "w")
    first = table.settle(A, outcome(earlier, 10.0)).outcome
    assert table.fresh(A, now=11.0) is None
    assert table.join(A, "w2")
    settled = table.settle(A, outcome(Kind.UNREACHABLE, 611.0, "HTTP 503"))
    assert settled.kept_stale
    assert settled.outcome.kind is earlier and settled.outcome.detail == first.detail
    assert settled.outcome.expires_at == 611.0  # tried again as soon as unreachable would be
    assert table.fresh(A, now=600.0) is settled.outcome


def test_2_4_a_copy_offered_from_a_store_is_kept_when_unreachable_the_tables_own_first() -> None:
    """A restarted crawl: the table holds no copy, the store offers one while the
    fetch is in flight; the table's own copy, when it has one, comes first."""
    table: SiteTable[str] = SiteTable(10)
    stored = outcome(Kind.PARSED, 1.0, "HTTP 200 (stored)")
    table.offer_stale(A, stored)  # no fetch in flight: nothing to offer it to
    assert table.start(A)
    table.offer_stale(A, stored)
    settled = table.settle(A, outcome(Kind.UNREACHABLE, 611.0, "HTTP 503"))
    assert settled.kept_stale and settled.outcome.detail == "HTTP 200 (stored)"
    assert settled.outcome.expires_at == 611.0
    assert table.start(A)
    table.offer_stale(A, outcome(Kind.UNAVAILABLE, 1.0, "HTTP 404 (stored)"))
    kept = table.settle(A, outcome(Kind.UNREACHABLE, 900.0, "HTTP 503")).outcome
    assert kept.detail == "HTTP 200 (stored)"  # the table's own copy
    assert table.start(B)
    table.offer_stale(B, stored)
    assert table.settle(B, outcome(Kind.PARSED, 50.0, "HTTP 200 (new)")).outcome.detail == (
        "HTTP 200 (new)"
    )


def test_2_3_1_4_unreachable_without_an_earlier_copy_is_in_force() -> None:
    table: SiteTable[str] = SiteTable(10)
    table.join(A, "w")
    settled = table.settle(A, outcome(Kind.UNREACHABLE, 5.0, "HTTP 500"))
    assert not settled.kept_stale and settled.outcome.kind is Kind.UNREACHABLE
    # An earlier unreachable outcome is no copy to keep.
    assert keep_stale_copy(settled.outcome, outcome(Kind.UNREACHABLE, 9.0)) is None
    for earlier in (Kind.RESTRICTED, Kind.INTERNAL_ERROR):  # they disallow all too
        assert keep_stale_copy(outcome(earlier, 1.0), outcome(Kind.UNREACHABLE, 9.0)) is None
    assert keep_stale_copy(outcome(Kind.PARSED, 1.0), outcome(Kind.PARSED, 9.0)) is None


def test_least_recently_used_sites_are_evicted_never_a_fetch_in_flight() -> None:
    table: SiteTable[str] = SiteTable(2)
    for site in (A, B):
        table.join(site, "w")
        table.settle(site, outcome(Kind.PARSED, 100.0))
    assert table.fresh(A, now=0.0) is not None  # A is now the most recently used
    table.join("http://c:80", "w")
    assert table.is_pending("http://c:80") and len(table) == 2
    table.settle("http://c:80", outcome(Kind.PARSED, 100.0))
    assert A in table and B not in table and table.evictions == 1


def test_2_4_a_site_evicted_while_fresh_is_told_when_fetched_again() -> None:
    """RFC 9309 2.4: an outcome is used for its lifetime; one fetched again only
    because the bound evicted it is told apart (once), and the record of evictions
    stays within ``max_sites`` entries."""
    table: SiteTable[str] = SiteTable(2)
    remembered = EVICTIONS_REMEMBERED * 2
    sites = [f"http://s{i}:80" for i in range(remembered + 4)]
    for site in sites:
        table.start(site)
        table.settle(site, outcome(Kind.PARSED, expires_at=100.0))
    assert table.evictions == remembered + 2
    assert len(table._evicted) == remembered  # only the last evictions
    assert not table.evicted_fresh(sites[0], now=1.0)  # forgotten: beyond the record
    assert table.evicted_fresh(sites[3], now=1.0)  # in force until 100 s, asked at 1 s
    assert not table.evicted_fresh(sites[3], now=1.0)  # told once
    assert not table.evicted_fresh(sites[2], now=100.0)  # expired anyway: a plain refetch
    assert not table.evicted_fresh(sites[-1], now=1.0)  # never evicted
    table.start(sites[4])
    table.settle(sites[4], outcome(Kind.PARSED, expires_at=200.0))  # back in the table
    assert not table.evicted_fresh(sites[4], now=1.0)


def test_a_site_settled_again_is_no_longer_an_eviction() -> None:
    table: SiteTable[str] = SiteTable(1)
    for site in (A, B, A):  # A evicted by B, then settled again (from a store, say)
        table.start(site)
        table.settle(site, outcome(Kind.PARSED, expires_at=100.0))
    assert not table.evicted_fresh(A, now=1.0)
    assert table.evicted_fresh(B, now=1.0)


def test_abandon_hands_back_waiters_and_stores_nothing() -> None:
    table: SiteTable[str] = SiteTable(10)
    table.join(A, "a1")
    table.join(A, "a2")
    table.join(B, "b1")
    assert table.abandon(A) == ["a1", "a2"]
    assert table.abandon(A) == []
    assert table.abandon_all() == [(B, ["b1"])]
    assert len(table) == 0 and table.pending_sites == []


def test_max_sites_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_sites"):
        SiteTable(0)


def test_state_says_what_a_request_can_do() -> None:
    table: SiteTable[str] = SiteTable(10)
    assert table.state(A, now=0.0) is SiteState.UNKNOWN
    table.start(A)
    assert table.state(A, now=0.0) is SiteState.PENDING and table.has_pending()
    table.settle(A, outcome(Kind.PARSED, 10.0))
    assert table.state(A, now=5.0) is SiteState.READY
    assert table.state(A, now=10.0) is SiteState.UNKNOWN  # expired: fetch again (2.4)
    assert not table.has_pending()


def test_http_guide_ch9_deferral_backs_off_and_ends_at_its_deadline() -> None:
    table: SiteTable[str] = SiteTable(10)
    table.start(A)
    table.settle(A, outcome(Kind.UNREACHABLE, 600.0, "HTTP 503"))
    first = table.defer(A, now=0.0, limit=10.0)
    assert first is not None and first.deadline == 10.0 and first.retry_at == 1.0
    assert table.state(A, now=0.5) is SiteState.DEFERRED
    # each further attempt waits twice as long
    table.start(A)
    assert table.state(A, now=1.0) is SiteState.PENDING
    table.settle(A, outcome(Kind.UNREACHABLE, 601.0, "HTTP 503"))
    second = table.defer(A, now=1.0, limit=10.0)
    assert second is first and second.retry_at == 3.0 and second.deadline == 10.0
    # an attempt that would come after the deadline is not made
    table.start(A)
    table.settle(A, outcome(Kind.UNREACHABLE, 603.0, "HTTP 503"))
    third = table.defer(A, now=7.0, limit=10.0)
    assert third is not None and third.retry_at is None and third.due == 10.0
    # past the deadline the deferral ends: the unreachable outcome decides (2.3.1.4)
    table.start(A)
    table.settle(A, outcome(Kind.UNREACHABLE, 610.0, "HTTP 503"))
    assert table.defer(A, now=10.0, limit=10.0) is None
    assert table.state(A, now=10.0) is SiteState.READY
    fresh = table.fresh(A, now=10.0)
    assert fresh is not None and fresh.kind is Kind.UNREACHABLE


def test_http_guide_ch9_a_deferral_that_ran_out_does_not_start_again() -> None:
    """Past ROBOTSTXT_UNREACHABLE_DEFER the requests are dropped, even when the
    unreachable outcome expires before the deadline and is fetched again."""
    for end in ("deadline", "timer"):
        table: SiteTable[str] = SiteTable(10)
        table.start(A)
        table.settle(A, outcome(Kind.UNREACHABLE, 1.0, "HTTP 503"))
        assert table.defer(A, now=0.0, limit=5.0) is not None
        if end == "timer":
            table.end_deferral(A)
        else:
            table.start(A)
            table.settle(A, outcome(Kind.UNREACHABLE, 7.0, "HTTP 503"))
            assert table.defer(A, now=6.0, limit=5.0) is None
        table.start(A)  # the short-lived unreachable outcome is fetched again
        table.settle(A, outcome(Kind.UNREACHABLE, 9.0, "HTTP 503"))
        assert table.defer(A, now=8.0, limit=5.0) is None, end
        # once retrieved, the earlier outage no longer counts
        table.start(A)
        table.settle(A, outcome(Kind.PARSED, 20.0))
        table.start(A)
        settled = table.settle(A, outcome(Kind.UNREACHABLE, 30.0, "HTTP 503"))
        assert settled.kept_stale  # the parsed copy decides (RFC 9309 2.4): nothing to defer


def test_deferral_honours_retry_after_and_ends_when_retrieved() -> None:
    table: SiteTable[str] = SiteTable(10)
    table.start(A)
    table.settle(A, outcome(Kind.UNREACHABLE, 30.0, "HTTP 503, Retry-After 30 s"))
    deferral = table.defer(A, now=0.0, limit=300.0, asked_until=30.0)
    assert deferral is not None and deferral.retry_at == 30.0  # never sooner than asked
    table.start(A)
    table.settle(A, outcome(Kind.PARSED, 1000.0))
    assert table.deferral(A) is None and table.state(A, now=31.0) is SiteState.READY
    assert table.defer(B, now=0.0, limit=0.0) is None  # ROBOTSTXT_UNREACHABLE_DEFER = 0


def test_http_guide_ch9_retry_after_past_the_deadline_ends_the_deferral_at_once() -> None:
    """A Retry-After at or past the deadline: no attempt can come within it, so
    the site is not deferred (its requests are dropped now, RFC 9309 2.3.1.4),
    nor deferred again until its robots.txt is retrieved."""
    table: SiteTable[str] = SiteTable(10)
    table.start(A)
    table.settle(A, outcome(Kind.UNREACHABLE, 400.0, "HTTP 503, Retry-After 400 s"))
    assert table.refuse_deferral(A, now=0.0, limit=300.0, asked_until=400.0)
    assert table.deferral(A) is None
    assert table.defer(A, now=1.0, limit=300.0) is None  # not deferred again
    # within the deadline: deferred as usual
    table.start(B)
    table.settle(B, outcome(Kind.UNREACHABLE, 30.0, "HTTP 503, Retry-After 30 s"))
    assert not table.refuse_deferral(B, now=0.0, limit=300.0, asked_until=30.0)
    assert table.defer(B, now=0.0, limit=300.0, asked_until=30.0) is not None
    # a deferral under way: its own deadline (300) counts, not a new one
    assert table.refuse_deferral(B, now=290.0, limit=300.0, asked_until=300.0)
    assert table.deferral(B) is None
    assert not table.refuse_deferral("http://c:80", now=0.0, limit=0.0, asked_until=9.0)


def test_2_4_a_pinned_site_is_never_evicted_and_is_evicted_once_unpinned() -> None:
    """Requests still queued for a site pin its outcome: evicting it would make
    them fetch its robots.txt again (RFC 9309 2.4: one copy per lifetime)."""
    table: SiteTable[str] = SiteTable(1)
    table.pin(A)
    table.start(A)
    table.settle(A, outcome(Kind.PARSED, expires_at=100.0))
    table.start(B)
    table.settle(B, outcome(Kind.PARSED, expires_at=100.0))
    assert A in table and B not in table  # B evicted, A kept though older
    table.pin(A)
    assert table.pins(A) == 2
    assert not table.unpin(A) and A in table  # one request still queued
    assert table.unpin(A)  # the last one left
    assert A in table and len(table) == 1
    assert not table.unpin(A)  # unpinning an unpinned site changes nothing


def test_2_4_unpinning_evicts_what_pinned_sites_kept_beyond_the_bound() -> None:
    table: SiteTable[str] = SiteTable(2)
    for site in ("s1", "s2", "s3"):
        table.pin(site)
        table.start(site)
        table.settle(site, outcome(Kind.PARSED, expires_at=100.0))
    assert len(table) == 3  # all pinned: over the bound until one is unpinned
    table.unpin("s2")
    assert len(table) == 2 and "s2" not in table and table.evictions == 1


def test_fetch_ahead_room_counts_pinned_settled_sites_and_fetches_in_flight() -> None:
    """Fetches ahead of need stop while pinned settled sites and fetches in flight
    fill ``max_sites``; a pinned settled site fetched again takes no new room."""
    table: SiteTable[str] = SiteTable(2)
    assert table.has_room(in_flight=1) and not table.has_room(in_flight=2)
    table.pin(A)
    table.start(A)
    assert table.has_room(in_flight=1)  # pending: counted as in flight by the caller
    table.settle(A, outcome(Kind.PARSED, expires_at=100.0))
    assert table.has_room(in_flight=0) and not table.has_room(in_flight=1)
    assert table.admits(A, in_flight=5)  # its refetch adds nothing
    assert not table.admits(B, in_flight=1)
    table.unpin(A)
    assert table.has_room(in_flight=1) and not table.admits(A, in_flight=2)


def test_waited_on_tells_a_fetch_someone_waits_for_from_one_ahead_of_need() -> None:
    table: SiteTable[str] = SiteTable(2)
    table.start(A)
    assert not table.waited_on(A)
    assert not table.join(A, "w")
    assert table.waited_on(A)


def test_backoff_doubles_up_to_its_maximum() -> None:
    assert [backoff(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 8.0]
    assert backoff(50) == backoff(10_000) == BACKOFF_MAX


SITES = st.sampled_from(["http://a:80", "http://b:80", "http://c:80", "https://a:443"])
KINDS = st.sampled_from(list(Kind))


class SiteTableMachine(RuleBasedStateMachine):
    """Any interleaving keeps one fetch per site and never loses a waiter."""

    def __init__(self) -> None:
        super().__init__()
        self.table: SiteTable[int] = SiteTable(2)
        self.now = 0.0
        self.next_waiter = 0
        self.in_flight: dict[str, list[int]] = {}
        self.handed_back: list[int] = []
        self.last: dict[str, SiteOutcome] = {}
        #: The copy each fetch in flight may keep: what was held when it started.
        self.held_at_start: dict[str, SiteOutcome | None] = {}
        #: site -> requests queued for it (pins)
        self.pins: dict[str, int] = {}
        #: pinned sites whose outcome the table holds: never evicted
        self.must_hold: set[str] = set()

    @rule(site=SITES)
    def request(self, site: str) -> None:
        if self.table.fresh(site, self.now) is not None:
            return
        waiter = self.next_waiter
        self.next_waiter += 1
        started = self.table.join(site, waiter)
        assert started == (site not in self.in_flight), "exactly one fetch per site"
        if started:
            self.held_at_start[site] = self.table.stale(site)
        self.in_flight.setdefault(site, []).append(waiter)

    @rule(site=SITES)
    def fetch_ahead(self, site: str) -> None:
        started = self.table.start(site)
        assert started == (site not in self.in_flight)
        if started:
            self.held_at_start[site] = self.table.stale(site)
        self.in_flight.setdefault(site, [])

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data(), kind=KINDS, lifetime=st.floats(0.5, 50.0))
    def settle(self, data: st.DataObject, kind: Kind, lifetime: float) -> None:
        site = data.draw(st.sampled_from(sorted(self.in_flight)))
        before = self.held_at_start.pop(site)  # even if evicted since
        settled = self.table.settle(site, outcome(kind, self.now + lifetime))
        assert settled.waiters == self.in_flight.pop(site)
        self.handed_back.extend(settled.waiters)
        keeps = kind is Kind.UNREACHABLE and before is not None and before.kind not in DISALLOW_ALL
        assert settled.kept_stale == keeps
        assert settled.outcome.expires_at == self.now + lifetime
        self.last[site] = settled.outcome
        if self.pins.get(site):
            self.must_hold.add(site)

    @rule(site=SITES)
    def pin(self, site: str) -> None:
        self.table.pin(site)
        self.pins[site] = self.pins.get(site, 0) + 1
        if site in self.table:
            self.must_hold.add(site)

    @precondition(lambda self: any(self.pins.values()))
    @rule(data=st.data())
    def unpin(self, data: st.DataObject) -> None:
        site = data.draw(st.sampled_from(sorted(s for s, n in self.pins.items() if n)))
        self.pins[site] -= 1
        assert self.table.unpin(site) == (self.pins[site] == 0)
        if not self.pins[site]:
            self.must_hold.discard(site)

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data())
    def abandon(self, data: st.DataObject) -> None:
        site = data.draw(st.sampled_from(sorted(self.in_flight)))
        assert self.table.abandon(site) == self.in_flight.pop(site)
        del self.held_at_start[site]

    @precondition(lambda self: self.last)
    @rule(data=st.data(), limit=st.sampled_from([0.0, 5.0, 60.0]))
    def defer(self, data: st.DataObject, limit: float) -> None:
        site = data.draw(st.sampled_from(sorted(self.last)))
        if site in self.in_flight or self.last[site].kind is not Kind.UNREACHABLE:
            return
        deferral = self.table.defer(site, self.now, limit)
        if deferral is not None:
            assert deferral.deadline > self.now
            assert deferral.retry_at is None or self.now < deferral.retry_at < deferral.deadline

    @rule(seconds=st.floats(0.0, 30.0))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    @invariant()
    def one_fetch_per_site_and_no_waiter_lost(self) -> None:
        assert sorted(self.table.pending_sites) == sorted(self.in_flight)
        assert self.table.waiting() == sum(len(w) for w in self.in_flight.values())
        assert len(self.table) <= max(2, len(self.must_hold))
        assert all(site in self.table for site in self.must_hold), "a pinned site evicted"
        assert len(set(self.handed_back)) == len(self.handed_back)

    @invariant()
    def the_state_agrees_with_the_table(self) -> None:
        for site in ("http://a:80", "http://b:80", "http://c:80", "https://a:443"):
            state = self.table.state(site, self.now)
            if site in self.in_flight:
                assert state is SiteState.PENDING
            elif self.table.deferral(site) is not None:
                assert state is SiteState.DEFERRED
            else:
                assert (state is SiteState.READY) == (self.table.fresh(site, self.now) is not None)

    @invariant()
    def a_fresh_outcome_is_the_last_settled(self) -> None:
        for site, last in self.last.items():
            fresh = self.table.fresh(site, self.now)
            if fresh is not None:
                assert fresh is last and fresh.expires_at > self.now


TestSiteTableMachine = SiteTableMachine.TestCase
TestSiteTableMachine.settings = settings(
    max_examples=examples(150), stateful_step_count=40, deadline=None
)


def test_2_4_any_file_table_keeps_a_pinned_site_past_its_bound() -> None:
    """The table tdmrep.json is kept in (any value with ``expires_at``): single
    flight, the LRU bound, and pins as for robots.txt (RFC 9309 2.4)."""
    from typing import NamedTuple

    from scrapy_rfc9309.sites._filetable import FileTable

    class Known(NamedTuple):
        rules: str
        expires_at: float

    table: FileTable[str, Known] = FileTable(1)
    assert table.join(A, "w") and not table.join(A, "w2")
    table.pin(A)
    assert table.settle(A, Known("a", 100.0)).waiters == ["w", "w2"]
    assert not table.has_room(0)  # A pinned fills the bound: fetches ahead wait
    assert table.start(B)
    table.settle(B, Known("b", 100.0))
    assert table.fresh(A, now=1.0) == Known("a", 100.0)  # pinned: not evicted
    assert B not in table and table.evictions == 1  # the unpinned one went
    assert table.unpin(A) and A in table  # within the bound: kept, now evictable
    assert table.fresh(A, now=100.0) is None  # expired

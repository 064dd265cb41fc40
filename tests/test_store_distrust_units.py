"""The checks by which the robots.txt stores distrust what they read, as units
(RFC 9309 2.4): a record dated after the reader's clock, a SQLite row that does
not read as a record, a body that does not match its digest, a lease whose
expiry cannot be trusted. The crawls are in ``test_store_distrust``.
"""

from __future__ import annotations

import hashlib
import logging
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
import redis

from scrapy_rfc9309.sites._records import (
    FUTURE_SKEW_SECONDS,
    ReaderLimits,
    answer_of,
    dated_ahead,
)
from scrapy_rfc9309.sites._redis_store import RedisStore
from scrapy_rfc9309.sites._sqlite_file import BadRow, checked_body, record_of
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore

from .records import fetch_record
from .redis_server import RedisServer
from .test_store_distrust import ALLOW_ALL, HOLDER, ROBOTS, YEAR, raw_sqlite

# -- the checks, pure ----------------------------------------------------------------

SITE = "http://example.com:80"
LIMITS = ReaderLimits(
    max_size=512_000, auth_disallow=False, cache_ttl=86_400.0, unreachable_ttl=600.0,
    retry_after_max=3_600.0,
)  # fmt: skip
NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("fetched_at", "ahead"),
    [
        (NOW - 10, False),
        (NOW, False),
        (NOW + FUTURE_SKEW_SECONDS, False),
        (NOW + FUTURE_SKEW_SECONDS + 1, True),
        (NOW + YEAR, True),
        (float("inf"), True),
        (float("nan"), True),
    ],
)
def test_2_4_a_record_dated_after_the_clock_plus_the_skew_is_not_trusted(
    fetched_at: float, ahead: bool
) -> None:
    record = fetch_record(fetched_at, ROBOTS, site=SITE)
    assert dated_ahead(record, NOW) is ahead
    answer = answer_of(record, ROBOTS, SITE, LIMITS, now=NOW)
    assert answer.damaged is ahead and (answer.problem is not None) is ahead
    if ahead:
        assert answer.problem is not None and "after this crawl's clock" in answer.problem
    # a report at a past time (--at) does not check the date
    assert answer_of(record, ROBOTS, SITE, LIMITS).problem is None


GOOD_ROW: tuple[Any, ...] = (
    SITE, NOW, '[["http://example.com/robots.txt", 200]]', "parsed", "HTTP 200", "24 h",
    NOW + 3600, 0, len(ROBOTS), hashlib.sha256(ROBOTS).hexdigest(), 200, 0, 512_000,
)  # fmt: skip


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        (1, "abc", "fetched_at 'abc' is not a number"),
        (6, "abc", "expires_at 'abc' is not a number"),
        (6, b"\x00", "is not a number"),
        (1, float("inf"), "not a finite number"),
        (2, "[not json", "is not JSON"),
        (2, '{"a": 1}', "is not a list"),
        (2, '[["u", "200"]]', "chain status"),
        (3, 7, "kind 7 is not text"),
        (7, "yes", "retry_after"),
        (8, -1, "size -1 is not a count"),
        (9, "xyz", "is not a SHA-256 digest"),
        (10, "200", "status '200' is not a count"),
        (11, 2, "truncated 2 is out of range"),
    ],
)
def test_2_4_sqlite_a_malformed_row_is_a_bad_row(column: int, value: Any, says: str) -> None:
    assert record_of(GOOD_ROW).sha256 == GOOD_ROW[9]
    row = list(GOOD_ROW)
    row[column] = value
    with pytest.raises(BadRow, match=says.replace("[", r"\[").replace("(", r"\(")):
        record_of(tuple(row))


def test_2_4_sqlite_a_body_is_checked_against_its_size_and_digest() -> None:
    record = record_of(GOOD_ROW)
    assert checked_body(zlib.compress(ROBOTS), record) == ROBOTS
    with pytest.raises(BadRow, match="does not match its size and digest"):
        checked_body(zlib.compress(ALLOW_ALL), record)  # same size, other digest
    with pytest.raises(BadRow, match="does not match its size and digest"):
        checked_body(zlib.compress(ROBOTS * 1000), record)  # read no further than its size
    with pytest.raises(BadRow, match="does not decompress"):
        checked_body(b"not zlib", record)
    with pytest.raises(BadRow, match="is not a blob"):
        checked_body("text", record)


def test_2_4_sqlite_look_many_answers_every_other_site_of_a_batch(tmp_path: Path) -> None:
    """One malformed row in a batch: that site is leased (told to the listener),
    the others answered from the store."""
    store = SQLiteStore(str(tmp_path / "robots.db"))
    told: list[tuple[str, str]] = []
    store.report_bad_records(lambda site, problem: told.append((site, problem)))
    now = time.time()
    sites = [f"http://s{n}.test:80" for n in range(3)]
    for site in sites:
        store.save(fetch_record(now, ROBOTS, site=site), ROBOTS)
    raw_sqlite(tmp_path, "UPDATE archive SET fetched_at = 'abc' WHERE site = ?", sites[1])
    try:
        looked = store.look_many(sites, "me:1:a", 30.0, lambda record: True)
        assert [looked[site][0] for site in sites] == ["fresh", "lease", "fresh"]
        assert told == [(sites[1], "fetched_at 'abc' is not a number")]
        assert store.history(sites[1]) == [] and len(told) == 2
        assert store.current(sites[1]) is None and len(told) == 3
        assert set(store.fresh_records(10, lambda record: True)) == {sites[0], sites[2]}
        assert len(told) == 3  # left out unsaid: the site's look-up tells it
    finally:
        store.close()


def test_2_4_redis_a_lease_without_expiry_is_given_the_lease_time(
    redis_server: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore(redis_server.url, prefix=prefix)
    client = redis.Redis.from_url(redis_server.url)
    key = f"{prefix}lease:{{{SITE}}}"
    try:
        client.set(key, HOLDER)
        assert store.lease_of(SITE) is None  # no expiry: no time left to tell
        caplog.set_level(logging.WARNING, logger="scrapy_rfc9309.store")
        assert store.acquire(SITE, "me:1:a", 5.0) is False
        assert 0 < client.pttl(key) <= 5000
        lease = store.lease_of(SITE)
        assert lease is not None and lease[0] == HOLDER and 0 < lease[1] <= 5.0
        assert "had no expiry; it now expires in 5 s" in caplog.text
        client.set(key, HOLDER, px=int(YEAR * 1000))  # a year: beyond any lease time
        assert store.acquire(SITE, "me:1:a", 5.0) is False
        assert 0 < client.pttl(key) <= 5000
        client.set(key, HOLDER, px=3000)  # a lease as taken: left as it is
        assert store.acquire(SITE, "me:1:a", 5.0) is False
        assert 2000 < client.pttl(key) <= 3000
        client.delete(key)
        client.hset(key, "not", "a lease")  # another type, without expiry: no error
        assert store.acquire(SITE, "me:1:a", 5.0) is False
        assert 0 < client.pttl(key) <= 5000 and store.lease_of(SITE) is None
        assert "is a key of another type, not a lease, and had no expiry" in caplog.text
        client.delete(key)
        assert store.acquire(SITE, "me:1:a", 5.0) is True
    finally:
        client.close()
        store.close()


def test_2_4_sqlite_a_lease_a_year_ahead_is_given_the_lease_time(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "robots.db"))
    try:
        assert store.acquire(SITE, HOLDER, YEAR)
        assert store.acquire(SITE, "me:1:a", 5.0) is False
        lease = store.lease_of(SITE)
        assert lease is not None and lease[0] == HOLDER and 0 < lease[1] <= 5.0
        assert store.acquire(SITE, HOLDER, 50.0)  # within 5 s + the skew (60 s): kept
        assert store.acquire(SITE, "me:1:a", 5.0) is False
        lease = store.lease_of(SITE)
        assert lease is not None and lease[1] > 45.0
    finally:
        store.close()

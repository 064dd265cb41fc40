"""The robots.txt stores distrust what they read (RFC 9309 2.4: a cached copy is
used only within its lifetime, counted from its fetch).

A record dated after the reader's clock, a SQLite body that does not match its
digest, a malformed row or record, and a lease whose expiry cannot be trusted
each cost one site a fetch (or a wait of one lease time), never the store: the
other sites of the same read are served from it. Real crawls on 127.0.0.1
against real SQLite files and a real redis-server, asserting on what the test
servers served. The checks themselves, pure, are in ``test_store_distrust_units``.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.settings import _store_settings
from scrapy_rfc9309.components.store import _store_bridge, _store_lookups
from scrapy_rfc9309.components.store._store_saves import utc_iso
from scrapy_rfc9309.sites._redis_store import RedisStore
from scrapy_rfc9309.sites._site import site_of
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore
from scrapy_rfc9309.sites._store import FetchRecord, RobotsStore

from .conftest import crawl
from .records import fetch_record
from .redis_server import RedisServer
from .server import MockSite, text

#: what every test site serves: /private is disallowed
ROBOTS = b"User-agent: *\nDisallow: /private\n"
#: a stored copy that allows everything, of the same size as ROBOTS
ALLOW_ALL = b"User-agent: *\nDisallow:         \n"
YEAR = 365 * 86_400.0
HOLDER = "elsewhere.example:4242:cafe"
#: ahead of the clock, within the skew allowed (``sites._records.FUTURE_SKEW_SECONDS``, 60 s)
WITHIN_SKEW = 30.0
BAD = "robotstxt/store/bad_record"


def site_key(site: MockSite) -> str:
    key = site_of(site.origin + "/")
    assert key is not None
    return key


def make_sites(sites: Any, count: int) -> list[MockSite]:
    return [sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page")) for _ in range(count)]


def sqlite_settings(tmp_path: Path) -> dict[str, Any]:
    return {"ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.db'}"}


def redis_settings(server: RedisServer, prefix: str) -> dict[str, Any]:
    return {"ROBOTSTXT_STORE_URI": server.url, "ROBOTSTXT_STORE_PREFIX": prefix}


def sqlite_opener(tmp_path: Path) -> Callable[[], RobotsStore]:
    return lambda: SQLiteStore(str(tmp_path / "robots.db"))


def redis_opener(server: RedisServer, prefix: str) -> Callable[[], RobotsStore]:
    return lambda: RedisStore(server.url, prefix=prefix)


def save(opener: Callable[[], RobotsStore], *records: tuple[FetchRecord, bytes]) -> None:
    store = opener()
    try:
        for record, body in records:
            store.save(record, body)
    finally:
        store.close()


def raw_sqlite(tmp_path: Path, sql: str, *args: Any) -> None:
    connection = sqlite3.connect(tmp_path / "robots.db")
    try:
        with connection:
            connection.execute(sql, args)
    finally:
        connection.close()


def robots_fetches(many: list[MockSite]) -> list[int]:
    return [site.count("/robots.txt") for site in many]


# -- item 4: a record dated in the future (RFC 9309 2.4) ---------------------------


async def check_a_record_dated_in_the_future_is_fetched_again(
    sites: Any,
    opener: Callable[[], RobotsStore],
    settings: dict[str, Any],
    uri_part: str,
    caplog: Any,
) -> None:
    """A record fetched a year ahead, allowing everything, is not obeyed: the
    site's robots.txt is fetched again and /private is not; a WARNING names the
    site, the store and the date. A record a few seconds ahead (within the skew
    allowed) is used."""
    ahead, near = make_sites(sites, 2)
    future = time.time() + YEAR
    save(
        opener,
        (fetch_record(future, ALLOW_ALL, site=site_key(ahead)), ALLOW_ALL),
        (fetch_record(time.time() + WITHIN_SKEW, ROBOTS, site=site_key(near)), ROBOTS),
    )
    urls = [ahead.url("/a"), ahead.url("/private/1"), near.url("/a"), near.url("/private/1")]
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(urls, settings)
    assert robots_fetches([ahead, near]) == [1, 0]
    assert ahead.count("/private/1") == 0 and near.count("/private/1") == 0
    assert sorted(spider.fetched) == sorted([ahead.url("/a"), near.url("/a")])
    assert stats[BAD] == 1 and stats["robotstxt/store/loaded"] == 1
    assert stats["robotstxt/store/saved"] == 1
    (warning,) = [m for m in caplog.messages if "cannot be used" in m]
    assert site_key(ahead) in warning and uri_part in warning
    assert utc_iso(future) in warning and "after this crawl's clock" in warning
    # the record saved by the fetch is the site's current one: the next crawl uses it
    spider, stats = await crawl(urls[:2], settings)
    assert robots_fetches([ahead]) == [1] and stats["robotstxt/store/loaded"] == 1
    assert ahead.count("/private/1") == 0


@deferred_f_from_coro_f
async def test_2_4_sqlite_a_record_dated_in_the_future_is_fetched_again(
    sites, tmp_path, caplog
) -> None:
    await check_a_record_dated_in_the_future_is_fetched_again(
        sites, sqlite_opener(tmp_path), sqlite_settings(tmp_path), str(tmp_path), caplog
    )


@deferred_f_from_coro_f
async def test_2_4_redis_a_record_dated_in_the_future_is_fetched_again(
    sites, redis_server, prefix, caplog
) -> None:
    await check_a_record_dated_in_the_future_is_fetched_again(
        sites,
        redis_opener(redis_server, prefix),
        redis_settings(redis_server, prefix),
        redis_server.url.split("//")[1],
        caplog,
    )


# -- item 5: bad bodies and malformed rows cost their site, never the store ---------


@pytest.mark.parametrize("read", ["at_open", "look_ups"])
@deferred_f_from_coro_f
async def test_2_4_sqlite_bad_records_cost_their_site_a_fetch_not_the_store(
    sites, tmp_path, caplog, monkeypatch, read
) -> None:
    """Four sites stored, three damaged by hand: a body replaced by another of the
    same size (an allow-all one: its digest does not match), ``expires_at =
    'abc'``, a body that is not zlib. Each damaged site's robots.txt is fetched
    again and its /private is not; the sound site is served from the store (no
    robots.txt request), whether the records are read at open or looked up
    (``at_open``, ``look_ups``); one WARNING and one count per bad record, no
    store error."""
    if read == "look_ups":
        monkeypatch.setattr(_store_lookups, "PRELOAD_MAX_SITES", 0)
    digest, number, zlib_, sound = make_sites(sites, 4)
    now = time.time()
    # each site's own body (its robots.txt plus a comment), so that each is damaged alone
    bodies = [ROBOTS, *(ROBOTS + f"# {n}\n".encode() for n in range(3))]
    many = [digest, number, zlib_, sound]
    save(
        sqlite_opener(tmp_path),
        *(
            (fetch_record(now, body, site=site_key(s)), body)
            for s, body in zip(many, bodies, strict=True)
        ),
    )
    raw_sqlite(tmp_path, "UPDATE bodies SET data = ? WHERE sha256 = ?",
               zlib.compress(ALLOW_ALL), hashlib.sha256(bodies[0]).hexdigest())  # fmt: skip
    raw_sqlite(tmp_path, "UPDATE archive SET expires_at = 'abc' WHERE site = ?", site_key(number))
    raw_sqlite(tmp_path, "UPDATE bodies SET data = ? WHERE sha256 = ?",
               b"not zlib", hashlib.sha256(bodies[2]).hexdigest())  # fmt: skip
    urls = [site.url(path) for site in many for path in ("/a", "/private/1")]
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(urls, sqlite_settings(tmp_path))
    assert robots_fetches(many) == [1, 1, 1, 0]  # the sound one served from the store
    assert [site.count("/private/1") for site in many] == [0, 0, 0, 0]
    assert sorted(spider.fetched) == sorted(site.url("/a") for site in many)
    assert "robotstxt/store/errors" not in stats
    assert stats[BAD] == 3 and stats["robotstxt/store/loaded"] == 1
    assert stats["robotstxt/store/saved"] == 3
    warnings = [m for m in caplog.messages if "cannot be used" in m]
    assert len(warnings) == 3, warnings
    assert any(
        "does not match its size and digest" in m and site_key(digest) in m for m in warnings
    )
    assert any("expires_at 'abc' is not a number" in m and site_key(number) in m for m in warnings)
    assert any("does not decompress" in m and site_key(zlib_) in m for m in warnings)
    # the good bodies saved by the fetches repair the damaged ones (same sha256):
    # the next crawl takes every site from the store, with no WARNING
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        _, again = await crawl(urls, sqlite_settings(tmp_path))
    assert robots_fetches(many) == [1, 1, 1, 0]
    assert again["robotstxt/store/loaded"] == 4 and BAD not in again
    assert not [m for m in caplog.messages if "cannot be used" in m]


@deferred_f_from_coro_f
async def test_2_4_redis_bad_records_cost_their_site_a_fetch_not_the_store(
    sites, redis_server, prefix, caplog
) -> None:
    """Redis: a record whose fetch time is an integer too large for a float, one
    that is not JSON, a body that does not match its digest: each site fetched
    again, the sound site served from the store in the same batch."""
    huge, not_json, digest, sound = make_sites(sites, 4)
    opener = redis_opener(redis_server, prefix)
    now = time.time()
    save(
        opener,
        *((fetch_record(now, ROBOTS, site=site_key(s)), ROBOTS) for s in (huge, digest, sound)),
    )
    client = redis.Redis.from_url(redis_server.url)
    current = client.get(f"{prefix}current:{{{site_key(huge)}}}")
    assert isinstance(current, bytes)
    fetched = f'"fetched_at":{now}'.encode()
    assert fetched in current
    client.set(
        f"{prefix}current:{{{site_key(huge)}}}",
        current.replace(fetched, b'"fetched_at":1' + b"0" * 400),
    )
    client.set(f"{prefix}current:{{{site_key(not_json)}}}", b"\xff not json")
    client.hset(
        f"{prefix}bodies:{{{site_key(digest)}}}",
        hashlib.sha256(ROBOTS).hexdigest(),
        zlib.compress(ALLOW_ALL),
    )
    client.close()
    many = [huge, not_json, digest, sound]
    urls = [site.url(path) for site in many for path in ("/a", "/private/1")]
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(urls, redis_settings(redis_server, prefix))
    assert robots_fetches(many) == [1, 1, 1, 0]
    assert [site.count("/private/1") for site in many] == [0, 0, 0, 0]
    assert sorted(spider.fetched) == sorted(site.url("/a") for site in many)
    assert "robotstxt/store/errors" not in stats
    assert stats[BAD] == 3 and stats["robotstxt/store/loaded"] == 1
    warnings = [m for m in caplog.messages if "cannot be used" in m]
    assert len(warnings) == 3, warnings
    # the damaged body was written again by the fetch (same sha256): repaired
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        _, again = await crawl(urls, redis_settings(redis_server, prefix))
    assert robots_fetches(many) == [1, 1, 1, 0]
    assert again["robotstxt/store/loaded"] == 4 and BAD not in again
    assert not [m for m in caplog.messages if "cannot be used" in m]
    assert any("OverflowError" in m and site_key(huge) in m for m in warnings)


# -- item 6: a lease whose expiry cannot be trusted ------------------------------------


def short_leases(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Leases of 2 s (``DOWNLOAD_TIMEOUT`` 2, no margin); the INFO line about a
    long wait after 0.5 s, the store asked every 0.1 s."""
    monkeypatch.setattr(_store_settings, "STORE_LEASE_MARGIN", 0.0)
    monkeypatch.setattr(_store_bridge, "WAIT_NOTICE_SECONDS", 0.5)
    monkeypatch.setattr(_store_bridge, "POLL_SECONDS", 0.1)
    return {"DOWNLOAD_TIMEOUT": 2}


def unblock_after(seconds: float, action: Callable[[], None]) -> Any:
    """Run ``action`` in ``seconds`` (before the fix the crawl waits forever: this
    bounds the test, whose time then shows the wait)."""
    from twisted.internet import reactor as _reactor

    reactor: Any = _reactor
    return reactor.callLater(seconds, action)


async def check_a_lease_not_trusted_is_waited_one_lease_time(
    sites: Any,
    settings: dict[str, Any],
    unblock: Callable[[], None],
    caplog: Any,
    holder: str | None = HOLDER,
) -> None:
    """``holder``: who the lease names (``None``: a key that is not a lease)."""
    (site,) = make_sites(sites, 1)
    timer = unblock_after(15.0, unblock)
    started = time.monotonic()
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.store"):
            spider, stats = await crawl([site.url("/a"), site.url("/private/1")], settings)
    finally:
        if timer.active():
            timer.cancel()
    elapsed = time.monotonic() - started
    assert elapsed < 8.0, elapsed  # one lease time (2 s), not forever
    assert site.count("/robots.txt") == 1 and site.count("/private/1") == 0
    assert spider.fetched == [site.url("/a")]
    assert "robotstxt/store/errors" not in stats
    assert stats[BAD] == 1 and stats["robotstxt/store/saved"] == 1
    (warning,) = [m for m in caplog.messages if "the lease on" in m]
    assert site_key(site) in warning and (holder or "not a lease") in warning
    assert "it now expires in 2 s, then is taken over" in warning
    told = [m for m in caplog.messages if m.startswith("waiting for another process")]
    assert told, caplog.messages
    assert "unknown" not in told[0]
    if holder is None:
        assert "its lease could not be read" in told[0]
        return
    assert f"({holder})" in told[0]
    assert "lease expires in 2 s" in told[0] or "lease expires in 1 s" in told[0]


@pytest.mark.parametrize("kind", ["string", "hash"])
@deferred_f_from_coro_f
async def test_2_4_redis_a_lease_without_expiry_is_given_one(
    sites, redis_server, prefix, caplog, monkeypatch, kind
) -> None:
    """A Redis lease key without expiry (TTL -1) held by a process of another host
    (or a hash under the lease's name, not a lease): given the lease time (2 s
    here), then taken over; the crawl ends in seconds, the log names the holder
    and the real time left (or says the lease could not be read)."""
    settings = {**redis_settings(redis_server, prefix), **short_leases(monkeypatch)}
    client = redis.Redis.from_url(redis_server.url)
    site_holder: list[str] = []

    def unblock() -> None:
        client.delete(f"{prefix}lease:{{{site_holder[0]}}}")

    real_sites = sites

    def sites_then_lease(**kwargs: Any) -> MockSite:
        made: MockSite = real_sites(**kwargs)
        site_holder.append(site_key(made))
        if kind == "string":
            client.set(f"{prefix}lease:{{{site_key(made)}}}", HOLDER)
        else:
            client.hset(f"{prefix}lease:{{{site_key(made)}}}", "holder", HOLDER)
        assert client.ttl(f"{prefix}lease:{{{site_key(made)}}}") == -1
        return made

    try:
        await check_a_lease_not_trusted_is_waited_one_lease_time(
            sites_then_lease, settings, unblock, caplog, HOLDER if kind == "string" else None
        )
    finally:
        client.close()


@pytest.mark.parametrize("until", ["abc", "a year ahead"])
@deferred_f_from_coro_f
async def test_2_4_sqlite_a_lease_not_a_time_or_a_year_ahead_is_given_the_lease_time(
    sites, tmp_path, caplog, monkeypatch, until
) -> None:
    """A SQLite lease row whose expiry is not a time, or lies a year ahead, held by a
    process of another host: given the lease time (2 s here), then taken over."""
    settings = {**sqlite_settings(tmp_path), **short_leases(monkeypatch)}
    keys: list[str] = []

    def unblock() -> None:
        raw_sqlite(tmp_path, "DELETE FROM leases")

    def sites_then_lease(**kwargs: Any) -> MockSite:
        made: MockSite = sites(**kwargs)
        keys.append(site_key(made))
        store = SQLiteStore(str(tmp_path / "robots.db"))
        store.close()
        value: Any = "abc" if until == "abc" else time.time() + YEAR
        raw_sqlite(tmp_path, "INSERT INTO leases (site, holder, until) VALUES (?, ?, ?)",
                   site_key(made), HOLDER, value)  # fmt: skip
        return made

    await check_a_lease_not_trusted_is_waited_one_lease_time(
        sites_then_lease, settings, unblock, caplog
    )

"""The store keeps tdmrep.json copies (W3C TDMRep) as it keeps robots.txt copies.

Units of the SQLite store against a real file and of the Redis store against
a real redis-server: each site's tdmrep.json fetches archived with the same
record form, read back by time (the copy in force at a time), bounded by
``ROBOTSTXT_STORE_ARCHIVE`` and pruned by the same rule as robots.txt copies
(RFC 9309 2.4 for how long a copy is kept), a malformed record passed over;
a store of an earlier version (no tdmrep.json records) opens and answers
"none kept". Then ``scrapy robotstxt history``, ``prune`` and ``--at`` on them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.command._command_store import NOT_STORED, stored_tdmrep
from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings
from scrapy_rfc9309.parser._tdmrep import TdmRep
from scrapy_rfc9309.sites._redis_store import RedisStore
from scrapy_rfc9309.sites._sqlite_archive import EXPIRY_GRACE
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore
from scrapy_rfc9309.sites._store import FetchRecord

from .command_runner import robotstxt
from .redis_server import RedisServer
from .test_store_readers import old_store_file

SITE = "http://example.com:80"
T0 = 1_800_000_000.0
RESERVED = b'[{"location": "/", "tdm-reservation": 1}]'
OPEN = b'[{"location": "/", "tdm-reservation": 0}]'
ROBOTS = b"User-agent: *\nDisallow: /private\n"


def tdmrep(
    fetched_at: float = T0,
    body: bytes | None = RESERVED,
    *,
    kind: str = "parsed",
    site: str = SITE,
    expires_in: float = 3600.0,
) -> FetchRecord:
    return FetchRecord(
        site=site,
        fetched_at=fetched_at,
        chain=((f"{site[:-3]}/.well-known/tdmrep.json", 200 if body else 503),),
        kind=kind,
        detail="HTTP 200, 1 rule" if body else "HTTP 503: unreachable, nothing stated",
        lifetime="ROBOTSTXT_CACHE_TTL (no cache directive)",
        expires_at=fetched_at + expires_in,
        retry_after=False,
        size=0 if body is None else len(body),
        sha256=None if body is None else hashlib.sha256(body).hexdigest(),
        status=200 if body else 503,
        truncated=False,
        max_size=512_000,
    )


def robots(fetched_at: float = T0, body: bytes = ROBOTS) -> FetchRecord:
    return tdmrep(fetched_at, body)._replace(
        chain=(("http://example.com/robots.txt", 200),), detail="HTTP 200"
    )


# -- SQLite ------------------------------------------------------------------------


def test_sqlite_keeps_tdmrep_copies_apart_from_robots_txt(tmp_path: Path) -> None:
    """The copy in force at a time is the newest fetched by then; robots.txt's
    archive and current record are not touched by them."""
    store = SQLiteStore(str(tmp_path / "robots.db"))
    try:
        store.save(robots(T0), ROBOTS)
        store.save_tdmrep_many([(tdmrep(T0), RESERVED)])
        store.save_tdmrep_many([(tdmrep(T0 + 100, None, kind="unreachable"), None)])
        store.save_tdmrep_many([(tdmrep(T0 + 200, OPEN), OPEN)])
        assert store.tdmrep_at(SITE, T0 - 1) is None
        assert store.tdmrep_at(SITE, T0 + 50) == (tdmrep(T0), RESERVED)
        at_100 = store.tdmrep_at(SITE, T0 + 150)
        assert at_100 is not None and at_100[0].kind == "unreachable" and at_100[1] is None
        assert store.tdmrep_at(SITE, T0 + 300) == (tdmrep(T0 + 200, OPEN), OPEN)
        assert [r.fetched_at for r in store.tdmrep_history(SITE)] == [T0 + 200, T0 + 100, T0]
        assert [r.fetched_at for r in store.history(SITE)] == [T0]
        assert store.current(SITE) == (robots(T0), ROBOTS)
    finally:
        store.close()


def test_sqlite_archive_setting_bounds_tdmrep_copies_and_prune_drops_them(
    tmp_path: Path,
) -> None:
    """``ROBOTSTXT_STORE_ARCHIVE = 2``: a site's last two copies; ``"off"``: the
    newest only, dropped a day past its lifetime (as a current record), with the
    bodies no record names. A body shared with a robots.txt copy stays."""
    path = str(tmp_path / "robots.db")
    store = SQLiteStore(path, archive=2)
    try:
        for number in range(4):
            body = b'[{"location": "/%d", "tdm-reservation": 1}]' % number
            store.save_tdmrep_many([(tdmrep(T0 + number, body), body)])
        assert [r.fetched_at for r in store.tdmrep_history(SITE)] == [T0 + 3, T0 + 2]
    finally:
        store.close()
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT COUNT(*) FROM bodies").fetchone() == (2,)
    raw.close()
    store = SQLiteStore(path, archive=0, clock=lambda: T0)
    try:
        assert [r.fetched_at for r in store.tdmrep_history(SITE)] == [T0 + 3]
        # the same bytes as a robots.txt body, whose record is current longer
        store.save(robots(T0, RESERVED)._replace(expires_at=T0 + 10 * 86_400), RESERVED)
        store.save_tdmrep_many([(tdmrep(T0 + 4), RESERVED)])
        assert [r.fetched_at for r in store.tdmrep_history(SITE)] == [T0 + 4]
        assert store.prune(now=T0 + 4 + 3600 + EXPIRY_GRACE - 1)["tdmrep"] == 0
        removed = store.prune(now=T0 + 4 + 3600 + EXPIRY_GRACE + 1)
        assert removed["tdmrep"] == 1
        assert store.tdmrep_history(SITE) == []
    finally:
        store.close()
    raw = sqlite3.connect(path)
    # the robots.txt record (current, kept by the archive rule) still names it
    assert raw.execute("SELECT COUNT(*) FROM bodies").fetchone() == (1,)
    raw.close()


def test_sqlite_a_malformed_tdmrep_record_is_passed_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A row whose time is not a number, or whose body does not match its digest,
    is not used (one WARNING each): the copy before it is in force."""
    path = str(tmp_path / "robots.db")
    store = SQLiteStore(path)
    store.save_tdmrep_many([(tdmrep(T0), RESERVED), (tdmrep(T0 + 10, OPEN), OPEN)])
    store.close()
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("UPDATE tdmrep_archive SET chain = 'not json' WHERE fetched_at = ?", (T0 + 10,))
    raw.close()
    reader = SQLiteStore(path, read_only=True)
    try:
        with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
            assert reader.tdmrep_at(SITE, T0 + 20) == (tdmrep(T0), RESERVED)
    finally:
        reader.close()
    assert "is not JSON" in caplog.text


def test_sqlite_a_store_of_an_earlier_version_keeps_no_tdmrep_and_gets_the_table(
    tmp_path: Path,
) -> None:
    """A file without ``tdmrep_archive``: read-only (``--at``, ``history``) it
    answers "none kept"; opened by a crawl it gets the table, its records kept."""
    path = old_store_file(tmp_path / "old.db")
    reader = SQLiteStore(str(path), read_only=True)
    try:
        assert reader.tdmrep_at(SITE, T0) is None
        assert reader.tdmrep_history(SITE) == []
        assert reader.current(SITE) is not None
    finally:
        reader.close()
    store = SQLiteStore(str(path))
    try:
        store.save_tdmrep_many([(tdmrep(T0), RESERVED)])
        assert store.tdmrep_at(SITE, T0) == (tdmrep(T0), RESERVED)
        assert store.current(SITE) is not None
    finally:
        store.close()


# -- Redis --------------------------------------------------------------------------


@pytest.fixture
def redis_store(redis_server: RedisServer, prefix: str) -> Iterator[RedisStore]:
    opened = RedisStore(redis_server.url, prefix=prefix)
    yield opened
    opened.close()


def test_redis_keeps_tdmrep_copies_under_their_own_keys(
    redis_store: RedisStore, redis_server: RedisServer, prefix: str
) -> None:
    redis_store.save(robots(T0), ROBOTS)
    redis_store.save_tdmrep_many([(tdmrep(T0), RESERVED), (tdmrep(T0 + 200, OPEN), OPEN)])
    assert redis_store.tdmrep_at(SITE, T0 - 1) is None
    assert redis_store.tdmrep_at(SITE, T0 + 50) == (tdmrep(T0), RESERVED)
    assert redis_store.tdmrep_at(SITE, T0 + 300) == (tdmrep(T0 + 200, OPEN), OPEN)
    assert [r.fetched_at for r in redis_store.tdmrep_history(SITE)] == [T0 + 200, T0]
    assert redis_store.current(SITE) == (robots(T0), ROBOTS)
    client = redis.Redis.from_url(redis_server.url)
    assert client.zcard(f"{prefix}tdmrep:{{{SITE}}}") == 2
    assert client.hlen(f"{prefix}tdmrep-bodies:{{{SITE}}}") == 2
    client.close()


def test_redis_archive_setting_bounds_tdmrep_copies(redis_server: RedisServer, prefix: str) -> None:
    """``ROBOTSTXT_STORE_ARCHIVE = 1``: the newest copy and its body alone;
    ``"off"``: the newest, its keys expiring a day past its lifetime."""
    store = RedisStore(redis_server.url, prefix=prefix, archive=1)
    client = redis.Redis.from_url(redis_server.url)
    try:
        store.save_tdmrep_many([(tdmrep(T0), RESERVED), (tdmrep(T0 + 1, OPEN), OPEN)])
        assert [r.fetched_at for r in store.tdmrep_history(SITE)] == [T0 + 1]
        assert client.hkeys(f"{prefix}tdmrep-bodies:{{{SITE}}}") == [
            hashlib.sha256(OPEN).hexdigest().encode()
        ]
        assert client.ttl(f"{prefix}tdmrep:{{{SITE}}}") == -1
    finally:
        store.close()
    store = RedisStore(redis_server.url, prefix=prefix, archive=0)
    other = "http://other.example:80"
    try:
        now = time.time()
        store.save_tdmrep_many([(tdmrep(now - 5, site=other), OPEN)])
        store.save_tdmrep_many([(tdmrep(now, site=other), RESERVED)])
        assert [r.fetched_at for r in store.tdmrep_history(other)] == [now]
        ttl = client.ttl(f"{prefix}tdmrep:{{{other}}}")
        assert 3600 + 86_400 - 60 < ttl <= 3600 + 86_400
        assert client.ttl(f"{prefix}tdmrep-bodies:{{{other}}}") == ttl
        assert client.hlen(f"{prefix}tdmrep-bodies:{{{other}}}") == 1
    finally:
        store.close()
        client.close()


def test_redis_a_malformed_tdmrep_entry_is_passed_over_and_an_old_store_has_none(
    redis_store: RedisStore, redis_server: RedisServer, prefix: str
) -> None:
    assert redis_store.tdmrep_at(SITE, T0) is None  # keys of an earlier version: none
    assert redis_store.tdmrep_history(SITE) == []
    redis_store.save_tdmrep_many([(tdmrep(T0), RESERVED)])
    client = redis.Redis.from_url(redis_server.url)
    client.zadd(f"{prefix}tdmrep:{{{SITE}}}", {b"{not json": T0 + 5})
    client.close()
    assert redis_store.tdmrep_at(SITE, T0 + 10) == (tdmrep(T0), RESERVED)


# -- the command ----------------------------------------------------------------------


def test_at_uses_no_tdmrep_copy_dated_after_its_clock(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A copy fetched after the reader's clock (plus 60 s) cannot be trusted (a
    skewed clock or a damaged record, RFC 9309 2.4): ``--at`` says so and decides
    from robots.txt alone; no copy at all: "not kept"."""
    store = SQLiteStore(str(tmp_path / "robots.db"))
    settings = RobotsTxtSettings.from_settings(Settings({}))
    ahead = time.time() + 3600
    try:
        assert stored_tdmrep(store, SITE, ahead, settings) == (None, NOT_STORED)
        store.save_tdmrep_many([(tdmrep(ahead), RESERVED)])
        with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.command"):
            rules, detail = stored_tdmrep(store, SITE, ahead + 10, settings)
        assert rules is None and "cannot be used (dated " in detail and NOT_STORED in detail
        assert "tdmrep.json record of http://example.com:80" in caplog.text
        past = time.time() - 100
        store.save_tdmrep_many([(tdmrep(past), RESERVED)])
        rules, detail = stored_tdmrep(store, SITE, past + 1, settings)
        rule = rules.rule_for("http://example.com/x") if isinstance(rules, TdmRep) else None
        assert rule is not None and rule.reserved is True
        assert detail.startswith("stored copy fetched at ") and "HTTP 200, 1 rule" in detail
    finally:
        store.close()


def test_at_a_tdmrep_copy_past_its_lifetime_gives_way_to_the_next_or_says_so(
    tmp_path: Path,
) -> None:
    """RFC 9309 2.4, for tdmrep.json: at a TIME where the newest copy is past its
    lifetime, a crawl would have fetched it again and its requests waited for
    that copy. ``--at`` takes the next copy fetched while the robots.txt copy in
    force was (``until``), and says so; with none, it keeps the old copy and
    says it was past its lifetime then. Between the robots.txt fetch and the
    first tdmrep.json fetch, the first copy decides, as the crawl waited for it."""
    store = SQLiteStore(str(tmp_path / "robots.db"))
    settings = RobotsTxtSettings.from_settings(Settings({}))
    past = time.time() - 10_000
    try:
        store.save_tdmrep_many([(tdmrep(past, OPEN, expires_in=100), OPEN)])
        when = past + 500  # the copy expired 400 s before
        rules, detail = stored_tdmrep(store, SITE, when, settings, until=when + 1000)
        assert "past its lifetime at" in detail, detail
        store.save_tdmrep_many([(tdmrep(when + 5), RESERVED)])
        rules, detail = stored_tdmrep(store, SITE, when, settings, until=when + 1000)
        assert detail.startswith("not yet fetched at "), detail
        rule = rules.rule_for("http://example.com/x") if isinstance(rules, TdmRep) else None
        assert rule is not None and rule.reserved is True
        # a copy fetched after the robots.txt copy's lifetime is not the one waited for
        rules, detail = stored_tdmrep(store, SITE, when, settings, until=when + 1)
        assert "past its lifetime at" in detail, detail
        first = past - 1000  # before the first tdmrep.json copy: the first decides
        rules, detail = stored_tdmrep(store, SITE, first, settings, until=past + 50)
        assert detail.startswith("not yet fetched at ") and "past its" not in detail, detail
    finally:
        store.close()


@deferred_f_from_coro_f
async def test_history_lists_tdmrep_copies_and_prune_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    now = time.time()
    store.save(robots(now - 10), ROBOTS)
    store.save_tdmrep_many([(tdmrep(now - 9), RESERVED)])
    store.save_tdmrep_many([(tdmrep(now - 8), OPEN)])
    store.close()
    uri = f"sqlite:///{path}"
    output, code = await robotstxt(
        "history", "http://example.com/", "--json", "--store", uri, cwd=tmp_path
    )
    assert code == 0, output
    entries = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [(e["file"], e["sha256"]) for e in entries] == [
        ("robots.txt", hashlib.sha256(ROBOTS).hexdigest()),
        ("tdmrep.json", hashlib.sha256(OPEN).hexdigest()),
        ("tdmrep.json", hashlib.sha256(RESERVED).hexdigest()),
    ]
    assert entries[1]["tdmrep_json"] == [
        {"url": "http://example.com/.well-known/tdmrep.json", "status": 200}
    ]
    output, code = await robotstxt(
        "prune", "--store", uri, "-s", "ROBOTSTXT_STORE_ARCHIVE=1", cwd=tmp_path
    )
    assert code == 0, output
    assert "0 archive records, 1 bodies, 1 tdmrep.json records" in output


def purpose_settings(tmp_path: Path, request: Any, backend: str) -> dict[str, Any]:
    """A crawl declaring the purpose ``train-ai``, with a SQLite or Redis store."""
    settings: dict[str, Any] = {
        "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
        "ROBOTSTXT_PURPOSES": ["train-ai"],
        "ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.db'}",
    }
    if backend == "redis":
        server = request.getfixturevalue("redis_server")
        settings["ROBOTSTXT_STORE_URI"] = server.url
        settings["ROBOTSTXT_STORE_PREFIX"] = request.getfixturevalue("prefix")
    return settings


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_2_4_a_later_crawl_takes_tdmrep_json_from_the_store_while_in_force(
    sites, tmp_path, request, backend: str
) -> None:
    """RFC 9309 2.4 (a cached copy used for its lifetime), for W3C TDMRep's
    tdmrep.json as for robots.txt: a second crawl with the same store takes the
    copy in force instead of downloading it again, and decides by it as the
    first did; once the copy is past its lifetime (the crawl's clock moved two
    days on), it is downloaded again."""
    from .clock import SkippingClock
    from .conftest import crawl
    from .server import text

    tdmrep = json.dumps([{"location": "/tdm/*", "tdm-reservation": 1}])
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": text(tdmrep, content_type=b"application/json"),
        },
        default=text("page"),
    )
    urls = [site.url("/tdm/a"), site.url("/free")]
    # with Redis, another process of a cluster reads it as a later run does
    settings = purpose_settings(tmp_path, request, backend)
    for run in (1, 2):
        spider, stats = await crawl(urls, settings)
        assert spider.fetched == [site.url("/free")], run  # /tdm/a reserved, both runs
        assert site.count("/.well-known/tdmrep.json") == 1, run
        assert stats.get("robotstxt/tdmrep/store_used", 0) == (run - 1)
    clock = SkippingClock()
    clock.skip(2 * 86400)
    spider, stats = await crawl(urls, settings, clock=clock)
    assert spider.fetched == [site.url("/free")]
    assert site.count("/.well-known/tdmrep.json") == 2  # past its lifetime: fetched again
    assert stats.get("robotstxt/tdmrep/store_used", 0) == 0


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_2_4_crawls_sharing_a_store_download_a_tdmrep_json_once(
    sites, tmp_path, request, backend: str
) -> None:
    """Two crawls started together on one store (two processes of a cluster,
    here two crawlers of one process, each with its own lease holder), the
    site's tdmrep.json answering after 1 s: one crawl downloads it under the
    store's lease, the other waits for its copy and decides by it (RFC 9309
    2.4: a cached copy used for its lifetime; W3C TDMRep). Each downloaded it
    before."""
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet.defer import gatherResults

    from .conftest import crawl
    from .server import delayed, text

    tdmrep = json.dumps([{"location": "/tdm/*", "tdm-reservation": 1}])
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": delayed(
                1.0, text(tdmrep, content_type=b"application/json")
            ),
        },
        default=text("page"),
    )
    urls = [site.url("/tdm/a"), site.url("/free")]
    settings = purpose_settings(tmp_path, request, backend)
    both = await maybe_deferred_to_future(
        gatherResults(
            [deferred_from_coro(crawl(urls, settings)) for _ in range(2)], consumeErrors=True
        )
    )
    assert site.count("/.well-known/tdmrep.json") == 1
    for spider, _ in both:
        assert spider.fetched == [site.url("/free")]  # /tdm/a reserved, in both crawls
    waited = sorted(stats.get("robotstxt/tdmrep/store_waited", 0) for _, stats in both)
    used = sorted(stats.get("robotstxt/tdmrep/store_used", 0) for _, stats in both)
    assert waited == [0, 1]
    assert used == [0, 1]


@deferred_f_from_coro_f
async def test_a_crawl_closing_while_it_downloads_a_tdmrep_json_gives_its_lease_up(
    sites, tmp_path
) -> None:
    """The spider closes (``CLOSESPIDER_TIMEOUT``) while the site's tdmrep.json
    hangs: its download is cancelled and the store's lease on it given up, so
    that another process reaching the site does not wait for the lease to
    expire (``DOWNLOAD_TIMEOUT`` + 30 s)."""
    from scrapy_rfc9309.components.store._store_tdmrep import lease_key

    from .conftest import crawl
    from .server import hang, text

    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/.well-known/tdmrep.json": hang(),
        },
        default=text("page"),
    )
    path = tmp_path / "robots.db"
    _, stats = await crawl(
        [site.url("/a")],
        {
            "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
            "ROBOTSTXT_PURPOSES": ["train-ai"],
            "ROBOTSTXT_STORE_URI": f"sqlite:///{path}",
            "CLOSESPIDER_TIMEOUT": 1,
        },
    )
    assert site.count("/.well-known/tdmrep.json") == 1
    assert stats.get("finish_reason") == "closespider_timeout"
    store = SQLiteStore(str(path))
    try:
        assert store.lease_of(lease_key(site.origin)) is None
    finally:
        store.close()

"""The robots.txt store: robots.txt across runs and processes, and the archive
(RFC 9309 2.4: a crawler may use a cached robots.txt, for up to 24 hours
unless unreachable; HTTP: The Definitive Guide ch. 9: robots should not
refetch it before every access, and should honour its cache directives).

Units of the SQLite store against a real file in ``tmp_path``, then real
crawls on 127.0.0.1 against the same file, asserting on the test server's
request log.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future

from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore
from scrapy_rfc9309.sites._store import FetchRecord, RobotsStore, StoreError
from scrapy_rfc9309.sites._store_uri import open_store

from .clock import SkippingClock
from .conftest import RecordingSpider, crawl
from .gates import Gate
from .server import sequence, status, text, unreachable_for, with_headers
from .waiting import until, until_async

SITE = "http://example.com:80"
T0 = 1_800_000_000.0
ROBOTS_V1 = b"User-agent: *\nDisallow: /private\n"
ROBOTS_V2 = b"User-agent: *\nAllow: /\n\nUser-agent: *\nDisallow: /secret\n"


def age_store(path: Path, seconds: float) -> None:
    """Every record of the SQLite store at ``path`` made ``seconds`` older: as if
    that much time had passed since its fetch (the store's times are wall-clock)."""
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute(
                "UPDATE archive SET fetched_at = fetched_at - ?, expires_at = expires_at - ?",
                (seconds, seconds),
            )
    finally:
        connection.close()


def record(
    fetched_at: float = T0,
    *,
    site: str = SITE,
    kind: str = "parsed",
    expires_in: float = 3600.0,
    body: bytes | None = ROBOTS_V1,
) -> FetchRecord:
    import hashlib

    return FetchRecord(
        site=site,
        fetched_at=fetched_at,
        chain=(("http://example.com/robots.txt", 200),),
        kind=kind,
        detail="HTTP 200",
        lifetime="Cache-Control: max-age=3600",
        expires_at=fetched_at + expires_in,
        retry_after=False,
        size=0 if body is None else len(body),
        sha256=None if body is None else hashlib.sha256(body).hexdigest(),
    )


@pytest.fixture
def db(tmp_path: Path) -> Any:
    store = SQLiteStore(str(tmp_path / "robots.db"))
    yield store
    store.close()


# -- the SQLite store, as a unit --------------------------------------------------


def test_2_4_store_is_a_robots_store(db: SQLiteStore) -> None:
    assert isinstance(db, RobotsStore)
    assert db.uri.startswith("sqlite:///") and db.uri.endswith("robots.db")


def test_2_4_save_then_current_gives_the_latest_record_and_its_body(db: SQLiteStore) -> None:
    assert db.current(SITE) is None
    db.save(record(T0), ROBOTS_V1)
    db.save(record(T0 + 100, body=ROBOTS_V2), ROBOTS_V2)
    found = db.current(SITE)
    assert found is not None
    assert found[0] == record(T0 + 100, body=ROBOTS_V2)
    assert found[1] == ROBOTS_V2
    assert db.current("http://other.example:80") is None


def test_2_4_history_is_newest_first_and_limited(db: SQLiteStore) -> None:
    for step in range(5):
        db.save(record(T0 + step), ROBOTS_V1)
    history = db.history(SITE)
    assert [entry.fetched_at for entry in history] == [T0 + 4, T0 + 3, T0 + 2, T0 + 1, T0]
    assert [entry.fetched_at for entry in db.history(SITE, limit=2)] == [T0 + 4, T0 + 3]
    assert db.history("http://other.example:80") == []


def test_2_4_at_gives_the_record_in_force_then(db: SQLiteStore) -> None:
    db.save(record(T0), ROBOTS_V1)
    db.save(record(T0 + 100, body=ROBOTS_V2), ROBOTS_V2)
    assert db.at(SITE, T0 - 1) is None
    assert db.at(SITE, T0) == (record(T0), ROBOTS_V1)
    assert db.at(SITE, T0 + 50) == (record(T0), ROBOTS_V1)
    assert db.at(SITE, T0 + 100) == (record(T0 + 100, body=ROBOTS_V2), ROBOTS_V2)


def test_2_4_a_record_without_body_keeps_none(db: SQLiteStore) -> None:
    missing = record(T0, kind="unavailable", body=None)
    db.save(missing, None)
    assert db.current(SITE) == (missing, None)


def test_2_4_identical_bodies_are_kept_once_compressed(db: SQLiteStore, tmp_path: Path) -> None:
    big = b"User-agent: *\n" + b"Disallow: /a-long-repeated-path\n" * 2000
    db.save(record(T0, body=big), big)
    db.save(record(T0 + 10, body=big), big)
    db.save(record(T0 + 20, site="http://b.example:80", body=big), big)
    raw = sqlite3.connect(str(tmp_path / "robots.db"))
    try:
        ((bodies, stored),) = raw.execute("SELECT count(*), sum(length(data)) FROM bodies")
        (archived,) = raw.execute("SELECT count(*) FROM archive").fetchone()
    finally:
        raw.close()
    assert bodies == 1 and archived == 3
    assert stored < len(big) // 10  # zlib-compressed
    assert db.at(SITE, T0 + 15) == (record(T0 + 10, body=big), big)


def test_2_4_leases_acquire_expire_release(tmp_path: Path) -> None:
    clock = [T0]
    store = SQLiteStore(str(tmp_path / "robots.db"), clock=lambda: clock[0])
    try:
        assert store.acquire(SITE, "a", 10)
        assert store.acquire(SITE, "a", 10)  # already its own
        assert not store.acquire(SITE, "b", 10)
        assert store.acquire("http://other.example:80", "b", 10)  # per site
        store.release(SITE, "b")  # not its holder: no effect
        assert not store.acquire(SITE, "b", 10)
        clock[0] += 11  # expired
        assert store.acquire(SITE, "b", 10)
        assert not store.acquire(SITE, "a", 10)
        store.release(SITE, "b")
        assert store.acquire(SITE, "a", 10)
    finally:
        store.close()


def test_2_4_two_connections_share_records_and_leases(tmp_path: Path) -> None:
    """Two processes sharing the file: two connections, each its own BEGIN IMMEDIATE."""
    one = SQLiteStore(str(tmp_path / "robots.db"))
    two = SQLiteStore(str(tmp_path / "robots.db"))
    try:
        assert one.acquire(SITE, "process-1", 60)
        assert not two.acquire(SITE, "process-2", 60)
        one.save(record(T0), ROBOTS_V1)
        assert two.current(SITE) == (record(T0), ROBOTS_V1)
        one.release(SITE, "process-1")
        assert two.acquire(SITE, "process-2", 60)
        assert not one.acquire(SITE, "process-1", 60)
    finally:
        one.close()
        two.close()


def test_2_4_a_lease_is_taken_by_one_of_many_processes(tmp_path: Path) -> None:
    """Real processes racing for one lease: exactly one wins."""
    import subprocess

    path = str(tmp_path / "robots.db")
    SQLiteStore(path).close()
    code = (
        "import sys\n"
        "from scrapy_rfc9309.sites._sqlite_store import SQLiteStore\n"
        "s = SQLiteStore(sys.argv[1])\n"
        "print(s.acquire('http://example.com:80', sys.argv[2], 60))\n"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, path, f"p{index}"], stdout=subprocess.PIPE, text=True
        )
        for index in range(4)
    ]
    answers = [run.communicate(timeout=60)[0].strip() for run in runs]
    assert sorted(answers) == ["False", "False", "False", "True"]


def test_2_4_a_corrupt_file_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "robots.db"
    path.write_bytes(b"this is not a SQLite database\n" * 200)
    with pytest.raises(StoreError, match=r"robots\.db"):
        SQLiteStore(str(path))


def test_2_4_a_database_locked_beyond_the_busy_timeout_raises_store_error(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "robots.db")
    SQLiteStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        store = SQLiteStore.__new__(SQLiteStore)
        with pytest.raises(StoreError, match="locked"):
            store.__init__(path, busy_timeout=0.2)  # type: ignore[misc]
    finally:
        other.execute("ROLLBACK")
        other.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_2_4_an_unwritable_directory_raises_store_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(StoreError):
            SQLiteStore(str(locked / "robots.db"))
    finally:
        locked.chmod(stat.S_IRWXU)


def test_2_4_a_directory_that_cannot_be_made_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    with pytest.raises(StoreError, match="cannot open"):
        SQLiteStore(str(tmp_path / "a-file" / "robots.db"))


def test_2_4_open_store_paths_and_bad_uris(tmp_path: Path) -> None:
    relative = open_store("sqlite:///sub/robots.db", data_dir=str(tmp_path))
    relative.close()
    assert (tmp_path / "sub" / "robots.db").exists()
    absolute = open_store(f"sqlite:///{tmp_path}/abs.db", data_dir="/nonexistent")
    absolute.close()
    assert (tmp_path / "abs.db").exists()
    for bad in (
        "",
        "robots.db",
        "sqlite://",
        "sqlite:///",
        "mysql://host/db",
        "redis",
        "sqlite:///a\x00b.db",
    ):
        with pytest.raises(ValueError, match="ROBOTSTXT_STORE_URI"):
            open_store(bad, data_dir=str(tmp_path))


# -- real crawls against a SQLite file -------------------------------------------------


def store_settings(path: Path, **extra: Any) -> dict[str, Any]:
    return {"ROBOTSTXT_STORE_URI": f"sqlite:///{path}", **extra}


@deferred_f_from_coro_f
async def test_2_4_a_restarted_crawl_uses_the_stored_robots_txt(sites, tmp_path, caplog) -> None:
    """RFC 9309 2.4 / HTTP: The Definitive Guide ch. 9: not downloaded again on restart."""
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    settings = store_settings(tmp_path / "robots.db")
    urls = [site.url("/a"), site.url("/private/b")]
    spider, stats = await crawl(urls, settings)
    assert site.count("/robots.txt") == 1
    assert spider.fetched == [site.url("/a")]
    assert stats["robotstxt/store/saved"] == 1
    assert "robotstxt/store/loaded" not in stats
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(urls, settings)
    assert site.count("/robots.txt") == 1  # no second download
    assert site.count("/private/b") == 0
    assert spider.fetched == [site.url("/a")]
    assert "line 2" in spider.dropped[site.url("/private/b")]
    assert stats["robotstxt/store/loaded"] == 1
    assert "robotstxt/request_count" not in stats
    assert any(
        "from the store, fetched at" in message and site.origin.split("//")[1] in message
        for message in caplog.messages
    )


@deferred_f_from_coro_f
async def test_2_4_short_cache_control_lifetimes_hold_across_restarts(sites, tmp_path) -> None:
    """RFC 9111 / RFC 9309 2.4: a max-age of 60 s is used 60 s, by the next run
    too (the store's records made older, not waited for)."""
    site = sites(
        routes={
            "/robots.txt": with_headers(
                sequence(text(ROBOTS_V1), text(ROBOTS_V2)), Cache_Control="max-age=60"
            )
        },
        default=text("page"),
    )
    settings = store_settings(tmp_path / "robots.db", ROBOTSTXT_CACHE_MIN_TTL=0)
    started = time.time()
    await crawl([site.url("/a")], settings)
    stored = time.time()  # the copy was fetched before this
    spider, stats = await crawl([site.url("/private/b")], settings)
    assert time.time() - started < 60, "too slow a machine for this test"
    assert site.count("/robots.txt") == 1
    assert stats["robotstxt/store/loaded"] == 1
    assert site.url("/private/b") in spider.dropped
    age_store(tmp_path / "robots.db", stored + 60.2 - time.time())  # 60.2 s after the fetch
    spider, stats = await crawl([site.url("/private/b")], settings)
    assert site.count("/robots.txt") == 2  # expired: fetched again
    assert spider.fetched == [site.url("/private/b")]  # by the new rules
    assert "robotstxt/store/loaded" not in stats
    assert stats["robotstxt/store/saved"] == 1


@deferred_f_from_coro_f
async def test_2_4_an_expired_record_is_refetched(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    origin = site.origin.replace("http://", "http://") + ""
    from scrapy_rfc9309.sites._site import site_of

    key = site_of(origin + "/")
    assert key is not None
    old = record(time.time() - 7200, site=key, expires_in=3600, body=b"User-agent: *\nAllow: /\n")
    store.save(old, b"User-agent: *\nAllow: /\n")
    store.close()
    spider, stats = await crawl([site.url("/private/x")], store_settings(path))
    assert site.count("/robots.txt") == 1
    assert site.url("/private/x") in spider.dropped  # the new copy's rules, not the old
    assert "robotstxt/store/loaded" not in stats
    reopened = SQLiteStore(str(path))
    try:
        assert len(reopened.history(key)) == 2
    finally:
        reopened.close()


async def run_command(*args: str, cwd: Path) -> tuple[str, int]:
    from .test_command import scrapy

    return await scrapy(*args, cwd=cwd)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_archive_history_and_at_after_the_robots_txt_changed(sites, tmp_path) -> None:
    """The archive keeps both versions; --at between them explains by the old line."""
    site = sites(
        routes={
            "/robots.txt": with_headers(
                sequence(text(ROBOTS_V1), text(ROBOTS_V2)), Cache_Control="max-age=1"
            )
        },
        default=text("page"),
    )
    path = tmp_path / "robots.db"
    settings = store_settings(path, ROBOTSTXT_CACHE_MIN_TTL=0)
    await crawl([site.url("/private/x")], settings)
    age_store(path, 1.3)  # fetched 1.3 s ago: expired 0.3 s ago
    between = time.time() - 0.1  # after it expired, before the next fetch
    await crawl([site.url("/private/x")], settings)
    assert site.count("/robots.txt") == 2
    uri = f"sqlite:///{path}"

    output, code = await run_command("history", site.url("/any"), "--store", uri, cwd=tmp_path)
    assert code == 0, output
    lines = output.strip().splitlines()
    assert len(lines) == 2, output
    import hashlib

    assert hashlib.sha256(ROBOTS_V2).hexdigest()[:12] in lines[0]  # newest first
    assert hashlib.sha256(ROBOTS_V1).hexdigest()[:12] in lines[1]
    assert "parsed" in lines[1] and f"{len(ROBOTS_V1)} bytes" in lines[1]
    assert "Cache-Control: max-age=1" in lines[1]
    assert f"{site.url('/robots.txt')} (200)" in lines[1]

    output, code = await run_command(
        "history", site.url("/"), "--store", uri, "--json", cwd=tmp_path
    )
    entries = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [entry["sha256"] for entry in entries] == [
        hashlib.sha256(ROBOTS_V2).hexdigest(),
        hashlib.sha256(ROBOTS_V1).hexdigest(),
    ]
    assert entries[1]["fetched_at"].endswith("Z") and entries[1]["size"] == len(ROBOTS_V1)
    assert entries[1]["robots_txt"] == [{"url": site.url("/robots.txt"), "status": 200}]

    output, code = await run_command(
        site.url("/private/x"), "--at", str(between), "--store", uri, cwd=tmp_path
    )
    assert code == 1, output  # disallowed, as the command's exit codes say
    assert 'DISALLOWED by line 2: "Disallow: /private"' in output
    assert "stored:      fetched at" in output
    # the old copy (max-age=1) had expired by `between`: said so, not "in force"
    import re

    assert re.search(r"; expired \d+ s before that time \(\d{4}-", output), output
    assert site.count("/robots.txt") == 2  # no download

    # whole seconds: over 1 s after the second fetch, whenever within this second it was
    iso_now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 2))
    output, code = await run_command(
        site.url("/private/x"), site.url("/secret/y"), "--at", iso_now, "--store", uri,
        "--json", cwd=tmp_path,
    )  # fmt: skip
    answers = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [(a["verdict"], a["line"]) for a in answers] == [("allowed", 2), ("disallowed", 5)]
    assert [a["within_lifetime"] for a in answers] == [False, False]  # max-age=1, >1 s later
    assert all(a["expires_at"].endswith("Z") for a in answers)
    assert code == 1, output

    output, code = await run_command(
        site.url("/private/x"), "--at", "2001-01-01T00:00:00Z", "--store", uri, cwd=tmp_path
    )
    assert code == 2, output
    assert "the store has no copy of" in output
    output, code = await run_command(site.url("/x"), "--at", "yesterday", cwd=tmp_path)
    assert code == 2 and "--at" in output, output
    output, code = await run_command(site.url("/x"), "--at", str(between), cwd=tmp_path)
    assert code == 2 and "ROBOTSTXT_STORE_URI" in output, output
    assert site.count("/robots.txt") == 2


@deferred_f_from_coro_f
async def test_2_4_a_corrupt_store_stops_the_crawl_at_start_up(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    path.write_bytes(b"\x00garbage, not SQLite\n" * 500)
    with pytest.raises(SettingError, match=r"ROBOTSTXT_STORE_URI.*cannot be opened"):
        await crawl([site.url("/a")], store_settings(path))
    assert site.hits == []


@deferred_f_from_coro_f
async def test_2_4_a_locked_store_stops_the_crawl_at_start_up(sites, tmp_path, monkeypatch) -> None:
    from scrapy_rfc9309.sites import _sqlite_store

    monkeypatch.setattr(_sqlite_store, "BUSY_TIMEOUT", 0.2)
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    SQLiteStore(str(path)).close()
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SettingError, match=r"ROBOTSTXT_STORE_URI.*locked"):
            await crawl([site.url("/a")], store_settings(path))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert site.hits == []


@deferred_f_from_coro_f
async def test_2_4_a_bad_store_uri_stops_the_crawl_at_start_up(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    for bad in ("mysql://db/robots", "robots.db", 42):
        with pytest.raises(SettingError, match="ROBOTSTXT_STORE_URI"):
            await crawl([site.url("/a")], {"ROBOTSTXT_STORE_URI": bad})
    assert site.hits == []


@deferred_f_from_coro_f
async def test_2_4_a_store_failing_mid_crawl_the_crawl_goes_on_from_memory(
    sites, tmp_path, monkeypatch, caplog
) -> None:
    """One ERROR, the stat, and every request downloaded or dropped as without a store."""
    from scrapy_rfc9309.sites import _sqlite_store

    monkeypatch.setattr(_sqlite_store, "BUSY_TIMEOUT", 0.2)
    path = tmp_path / "robots.db"
    SQLiteStore(str(path)).close()
    locker = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)

    def robots_then_lock(request: Any) -> bytes:
        locker.execute("BEGIN EXCLUSIVE")  # the store fails from now on
        return ROBOTS_V1

    one = sites(routes={"/robots.txt": robots_then_lock}, default=text("page"))
    two = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    followups = {one.url("/a"): [two.url("/c"), two.url("/private/d")]}
    try:
        with caplog.at_level(logging.DEBUG):
            spider, stats = await crawl(
                [one.url("/a"), one.url("/private/b")],
                store_settings(path),
                allow_errors=True,
                followups=followups,
            )
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert sorted(spider.fetched) == sorted([one.url("/a"), two.url("/c")])
    assert sorted(spider.dropped) == sorted([one.url("/private/b"), two.url("/private/d")])
    assert one.count("/robots.txt") == 1 and two.count("/robots.txt") == 1
    assert stats["log_count/ERROR"] == 1
    assert stats["robotstxt/store/errors"] >= 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "robots.txt store" in errors[0].getMessage()
    assert "robotstxt/store/saved" not in stats


@deferred_f_from_coro_f
async def test_2_4_two_crawls_sharing_a_store_download_robots_txt_once(sites, tmp_path) -> None:
    """Two crawlers (two lease holders) at once: one fetches, the other waits for its record."""
    from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
    from twisted.internet.defer import DeferredList

    from .server import delayed

    site = sites(routes={"/robots.txt": delayed(1.0, text(ROBOTS_V1))}, default=text("page"))
    settings = store_settings(tmp_path / "robots.db")
    results = await maybe_deferred_to_future(
        DeferredList(
            [
                deferred_from_coro(crawl([site.url("/a"), site.url("/private/b")], settings)),
                deferred_from_coro(crawl([site.url("/c"), site.url("/private/d")], settings)),
            ],
            fireOnOneErrback=True,
        )
    )
    stats = [result[1][1] for result in results]
    assert site.count("/robots.txt") == 1, (site.hits, stats)
    assert sorted(s.get("robotstxt/store/waited", 0) for s in stats) == [0, 1], stats
    assert sorted(s.get("robotstxt/store/loaded", 0) for s in stats) == [0, 1]
    assert site.count("/private/b") == site.count("/private/d") == 0
    assert site.count("/a") == site.count("/c") == 1


def _site_key(origin: str) -> str:
    from scrapy_rfc9309.sites._site import site_of

    key = site_of(origin + "/")
    assert key is not None
    return key


@deferred_f_from_coro_f
async def test_2_4_hostile_store_contents_are_not_used(sites, tmp_path, caplog) -> None:
    """A stored record of an unknown kind, or parsed without a body: fetched instead."""
    bogus = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    bodiless = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    now = time.time()
    store.save(record(now, site=_site_key(bogus.origin), kind="allow-everything"), ROBOTS_V1)
    store.save(record(now, site=_site_key(bodiless.origin), body=None), None)
    store.close()
    urls = [bogus.url("/private/a"), bodiless.url("/private/b"), bogus.url("/c")]
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(urls, store_settings(path))
    assert bogus.count("/robots.txt") == 1 and bodiless.count("/robots.txt") == 1
    assert spider.fetched == [bogus.url("/c")]
    assert sorted(spider.dropped) == sorted(urls[:2])
    assert "robotstxt/store/loaded" not in stats
    assert sum("cannot be used" in message for message in caplog.messages) == 2


@deferred_f_from_coro_f
async def test_2_4_a_damaged_body_in_the_store_costs_its_site_a_fetch_not_the_store(
    sites, tmp_path
) -> None:
    """A body that is not zlib: that record is not used (WARNING, counted), the
    site fetched; no store error (the store stays in use)."""
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    store.save(record(time.time(), site=_site_key(site.origin)), ROBOTS_V1)
    store.close()
    raw = sqlite3.connect(str(path))
    raw.execute("UPDATE bodies SET data = ?", (b"not zlib at all",))
    raw.commit()
    raw.close()
    spider, stats = await crawl([site.url("/a"), site.url("/private/b")], store_settings(path))
    assert site.count("/robots.txt") == 1  # fetched again
    assert spider.fetched == [site.url("/a")]
    assert list(spider.dropped) == [site.url("/private/b")]
    assert "robotstxt/store/errors" not in stats
    assert stats["robotstxt/store/bad_record"] == 1 and stats["robotstxt/store/saved"] == 1


@deferred_f_from_coro_f
async def test_2_4_pending_store_writes_are_finished_at_close(
    sites, tmp_path, monkeypatch, gate
) -> None:
    """A save still under way when the spider closes is waited for (bounded), then
    the store closed: the save is held until the store's close has begun."""
    from scrapy_rfc9309.components.store._store_worker import StoreWorker

    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    saving = SQLiteStore.save_many
    closing = StoreWorker.close
    closed: list[str] = []
    at_close = gate("the store's close begins")

    def slow_save(self: SQLiteStore, *args: Any) -> None:
        at_close.wait()
        saving(self, *args)

    async def close_worker(self: StoreWorker, wait_seconds: float) -> None:
        at_close.open()
        await closing(self, wait_seconds)

    def close(self: SQLiteStore) -> None:
        if self.waits:  # the worker's connection (the non-waiting one closes first)
            closed.append(self.path)
        self._db.close()

    monkeypatch.setattr(SQLiteStore, "save_many", slow_save)
    monkeypatch.setattr(SQLiteStore, "close", close)
    monkeypatch.setattr(StoreWorker, "close", close_worker)
    spider, stats = await crawl([site.url("/a")], store_settings(path))
    assert spider.fetched == [site.url("/a")]
    assert stats["robotstxt/store/saved"] == 1
    assert closed == [str(path)]
    monkeypatch.undo()
    store = SQLiteStore(str(path))
    try:
        found = store.current(_site_key(site.origin))
    finally:
        store.close()
    assert found is not None and found[1] == ROBOTS_V1


@deferred_f_from_coro_f
async def test_2_3_1_4_a_stored_unreachable_answer_holds_until_it_expires(sites, tmp_path) -> None:
    """Another run found the robots.txt unreachable (503) a moment ago: every URL stays
    disallowed (RFC 9309 2.3.1.4) until that answer expires, without asking again."""
    from .server import status

    site = sites(routes={"/robots.txt": status(503)}, default=text("page"))
    path = tmp_path / "robots.db"
    settings = store_settings(path, ROBOTSTXT_UNREACHABLE_TTL=600)
    spider, stats = await crawl([site.url("/a")], settings)
    assert site.count("/robots.txt") == 1 and site.count("/a") == 0
    site.routes["/robots.txt"] = text(ROBOTS_V1)
    spider, stats = await crawl([site.url("/a"), site.url("/b")], settings)
    assert site.count("/robots.txt") == 1  # not asked again
    assert site.count("/a") == site.count("/b") == 0
    assert "unreachable" in spider.dropped[site.url("/a")]
    assert stats["robotstxt/store/loaded"] == 1
    store = SQLiteStore(str(path))
    try:
        (latest,) = store.history(_site_key(site.origin))
    finally:
        store.close()
    assert latest.kind == "unreachable" and latest.detail == "HTTP 503"
    assert latest.sha256 is None and latest.size == 0
    assert 590 < latest.expires_at - latest.fetched_at <= 600


@deferred_f_from_coro_f
async def test_command_store_errors_do_not_show_the_password(tmp_path) -> None:
    output, code = await run_command(
        "history",
        "http://127.0.0.1/",
        "--store",
        "redis://:hunter2@127.0.0.1:9/0?socket_timeout=0.5",
        cwd=tmp_path,
    )
    assert code == 2, output
    assert "cannot be opened" in output
    assert "hunter2" not in output
    assert "redis://:***@127.0.0.1:9/0" in output


@deferred_f_from_coro_f
async def test_2_4_a_stored_copy_is_capped_by_the_current_ttl_from_its_fetch(
    sites, tmp_path
) -> None:
    """RFC 9309 2.4: a copy stored with max-age=3600 is not used past the current
    ROBOTSTXT_CACHE_TTL counted from when it was fetched, whatever it says and
    however often the crawl is restarted."""
    site = sites(
        routes={
            "/robots.txt": with_headers(
                sequence(text(ROBOTS_V1), text(ROBOTS_V2)), Cache_Control="max-age=3600"
            )
        },
        default=text("page"),
    )
    path = tmp_path / "robots.db"
    started = time.time()
    await crawl([site.url("/a")], store_settings(path))
    assert site.count("/robots.txt") == 1
    stored = time.time()  # the copy was fetched before this
    short = store_settings(path, ROBOTSTXT_CACHE_TTL=60, ROBOTSTXT_CACHE_MIN_TTL=0)
    spider, stats = await crawl([site.url("/private/b")], short)
    assert time.time() - started < 60, "too slow a machine for this test"
    assert site.count("/robots.txt") == 1  # still within 60 s of its fetch
    assert stats["robotstxt/store/loaded"] == 1
    age_store(path, stored + 60.2 - time.time())  # 60.2 s after the fetch
    spider, stats = await crawl([site.url("/private/b")], short)
    assert site.count("/robots.txt") == 2  # older than ROBOTSTXT_CACHE_TTL: downloaded again
    assert spider.fetched == [site.url("/private/b")]  # by the new rules
    assert "robotstxt/store/loaded" not in stats


async def run_scrapy(*args: str, cwd: Path) -> tuple[str, int]:
    """``scrapy ARGS`` (a crawl) in a thread, so the reactor keeps serving the sites."""
    from .test_command import run_scrapy as run

    return await run(*args, cwd=cwd)


SPIDER = """
import scrapy


class StoreSpider(scrapy.Spider):
    name = "store"
    start_urls = [{url!r}]
    custom_settings = {{
        "ADDONS": {{"scrapy_rfc9309.Addon": 100}},
        "ROBOTSTXT_OBEY": True,
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_STORE_URI": {store!r},
        "DOWNLOAD_TIMEOUT": 120,
    }}

    def parse(self, response):
        pass
"""


@pytest.mark.slow
@pytest.mark.parametrize("in_project", [False, True], ids=["outside", "inside"])
@deferred_f_from_coro_f
async def test_2_4_the_command_finds_a_relative_store_where_the_crawl_wrote_it(
    sites, tmp_path, in_project
) -> None:
    """``sqlite:///robots.db`` is the same file for ``scrapy runspider`` and for
    ``scrapy robotstxt history``, inside a project (its data directory) and
    outside one (``./.scrapy``)."""
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    if in_project:
        (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
        (tmp_path / "proj").mkdir()
        (tmp_path / "proj" / "__init__.py").write_text("")
        (tmp_path / "proj" / "settings.py").write_text("")
    (tmp_path / "sp.py").write_text(SPIDER.format(url=site.url("/a"), store="sqlite:///robots.db"))
    output, code = await run_scrapy("runspider", "sp.py", cwd=tmp_path)
    assert code == 0, output
    assert site.count("/robots.txt") == 1 and site.count("/a") == 1
    assert (tmp_path / ".scrapy" / "robots.db").is_file()
    assert not (tmp_path / "robots.db").exists()
    output, code = await run_command(
        "history", site.url("/"), "--store", "sqlite:///robots.db", cwd=tmp_path
    )
    assert code == 0, output
    assert "parsed" in output and f"{len(ROBOTS_V1)} bytes" in output


@deferred_f_from_coro_f
async def test_2_4_reports_never_make_a_store(tmp_path) -> None:
    """``history`` and ``--at`` open the store read-only: a mistyped name is
    reported ("no store at PATH", exit 2) and no file is left behind."""
    for args in (
        ("history", "http://127.0.0.1/"),
        ("http://127.0.0.1/x", "--at", "2026-01-01T00:00:00Z"),
    ):
        output, code = await run_command(*args, "--store", "sqlite:///nope.db", cwd=tmp_path)
        assert code == 2, output
        assert f"no store at {tmp_path / '.scrapy' / 'nope.db'}" in output
        assert not (tmp_path / ".scrapy" / "nope.db").exists()
        assert not list(tmp_path.rglob("nope.db*"))


def test_2_4_a_query_string_in_a_sqlite_uri_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="takes no query string"):
        open_store("sqlite:///robots.db?mode=ro", data_dir=str(tmp_path))
    with pytest.raises(ValueError, match="or fragment"):
        open_store("sqlite:///robots.db#x", data_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


@deferred_f_from_coro_f
async def test_2_4_a_sqlite_file_of_another_program_is_refused_at_start_up(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "app.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    other.commit()
    other.close()
    with pytest.raises(SettingError, match=r"another program.*users"):
        await crawl([site.url("/a")], store_settings(path))
    assert site.count("/robots.txt") == 0
    check = sqlite3.connect(path)
    try:
        tables = {row[0] for row in check.execute("SELECT name FROM sqlite_master")}
    finally:
        check.close()
    assert tables == {"users"}  # nothing added to it


@pytest.mark.parametrize("reaped", [True, False], ids=["reaped", "zombie"])
@deferred_f_from_coro_f
async def test_2_4_the_lease_of_a_killed_crawl_is_taken_over_at_once(
    sites, tmp_path, reaped: bool
) -> None:
    """A crawl killed (SIGKILL) while downloading a robots.txt leaves its lease in
    the store; the next crawl on the same host sees that the holder's process is
    gone and fetches the robots.txt at once instead of waiting out the lease
    (DOWNLOAD_TIMEOUT + 30 s). A killed process its parent has not reaped yet
    (a zombie) is gone too, though ``kill(pid, 0)`` still finds it."""
    import signal
    import subprocess

    from .server import hang

    site = sites(routes={"/robots.txt": sequence(hang(), text(ROBOTS_V1))}, default=text("page"))
    path = tmp_path / "robots.db"
    (tmp_path / "sp.py").write_text(SPIDER.format(url=site.url("/a"), store=f"sqlite:///{path}"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "runspider", "sp.py"],
        cwd=str(tmp_path),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await until_async(
            lambda: site.count("/robots.txt") >= 1, 60, "the first crawl's robots.txt download"
        )
    finally:
        process.send_signal(signal.SIGKILL)
        if reaped:
            process.wait()
    try:
        if not reaped:
            until(lambda: _is_zombie(process.pid), 10, "the killed child to exit")
        store = SQLiteStore(str(path))
        try:
            lease = store.lease_of(_site_key(site.origin))
        finally:
            store.close()
        assert lease is not None and f":{process.pid}:" in lease[0] and lease[1] > 100
        started = time.monotonic()
        spider, stats = await crawl([site.url("/private/b"), site.url("/a")], store_settings(path))
        assert time.monotonic() - started < 10  # not the 150 s lease
    finally:
        process.wait()
    # taken over at the first look: nothing waited for (docs/store.md: robotstxt/store/waited)
    assert "robotstxt/store/waited" not in stats
    assert site.count("/robots.txt") == 2  # fetched again by this crawl
    assert spider.fetched == [site.url("/a")]
    assert stats["robotstxt/store/saved"] == 1


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_a_long_wait_on_another_process_is_told_at_info(
    sites, tmp_path, caplog, monkeypatch
) -> None:
    """A lease held by a process of another host is waited out; after
    WAIT_NOTICE_SECONDS of waiting (5 s; 0.5 s here), one INFO line names the
    holder and when its lease expires."""
    from scrapy_rfc9309.components.store import _store_bridge

    monkeypatch.setattr(_store_bridge, "WAIT_NOTICE_SECONDS", 0.5)
    monkeypatch.setattr(_store_bridge, "POLL_SECONDS", 0.1)
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    try:
        assert store.acquire(_site_key(site.origin), "elsewhere.example:4242:cafe", 2.0)
    finally:
        store.close()
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.store"):
        spider, _stats = await crawl([site.url("/a"), site.url("/b")], store_settings(path))
    assert site.count("/robots.txt") == 1  # after the lease expired
    assert sorted(spider.fetched) == [site.url("/a"), site.url("/b")]
    told = [m for m in caplog.messages if m.startswith("waiting for another process")]
    assert len(told) == 1, caplog.messages
    assert "(elsewhere.example:4242:cafe)" in told[0] and _site_key(site.origin) in told[0]
    assert "lease expires in 2 s" in told[0] or "lease expires in 1 s" in told[0]


def _is_zombie(pid: int) -> bool:
    """Whether process ``pid`` (a child not reaped) has exited: Linux ``/proc`` state ``Z``."""
    return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")
def test_2_4_a_zombie_holder_is_gone() -> None:
    """An exited child its parent has not reaped passes ``kill(pid, 0)`` but
    holds nothing: its lease is taken over at once."""
    import socket
    import subprocess

    from scrapy_rfc9309.sites._store import holder_is_gone

    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        until(lambda: _is_zombie(zombie.pid), 10, "the child to exit")
        os.kill(zombie.pid, 0)  # still there for signal 0
        assert holder_is_gone(f"{socket.gethostname()}:{zombie.pid}:abcd1234")
    finally:
        zombie.wait()


@deferred_f_from_coro_f
async def test_2_4_a_failed_store_is_left_alone_for_the_retry_delay_of_the_crawls_clock(
    tmp_path, caplog
) -> None:
    """RFC 9309 2.4: after a store failure, the calls are not made (``Skipped``) for
    the retry delay, as read from the crawl's monotonic clock (a manual one here:
    no wait), then the store is asked again."""
    from scrapy.utils.test import get_crawler
    from twisted.internet import reactor, task

    from scrapy_rfc9309.components._clock import Clock
    from scrapy_rfc9309.components.store._store_worker import Skipped, StoreWorker

    now = task.Clock()
    crawler = get_crawler()
    assert crawler.stats is not None
    clock = Clock.manual(now)
    worker = StoreWorker(crawler, SQLiteStore(str(tmp_path / "r.db")), reactor, 30.0, clock)
    made: list[int] = []

    def broken() -> None:
        raise StoreError("disk full")

    try:
        with pytest.raises(StoreError, match="disk full"):
            await maybe_deferred_to_future(worker.call(broken))
        with caplog.at_level(logging.ERROR, logger="scrapy_rfc9309.store"):
            worker.failed("saving a record", StoreError("disk full"))
        assert "tried again in 30 s" in caplog.text
        assert not worker.available()
        with pytest.raises(Skipped):
            await maybe_deferred_to_future(worker.call(made.append, 1))
        now.advance(29.9)
        assert not worker.available()
        with pytest.raises(Skipped):
            await maybe_deferred_to_future(worker.call(made.append, 2))
        now.advance(0.1)
        assert worker.available()
        await maybe_deferred_to_future(worker.call(made.append, 3))
        assert made == [3]
        assert crawler.stats.get_value("robotstxt/store/errors") == 1
    finally:
        await worker.close(5.0)


def test_2_4_no_pid_check_on_windows(monkeypatch) -> None:
    """On Windows, signal 0 is CTRL_C_EVENT: no process is signalled, a lease
    of a gone process is waited out."""
    import socket
    import subprocess

    from scrapy_rfc9309.sites import _store

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    signalled: list[int] = []
    holder = f"{socket.gethostname()}:{ended.pid}:abcd1234"
    with monkeypatch.context() as patch:  # undone before pytest reports (pathlib reads os.name)
        patch.setattr("scrapy_rfc9309.sites._store.os.name", "nt")
        patch.setattr("scrapy_rfc9309.sites._store.os.kill", lambda pid, sig: signalled.append(pid))
        gone = _store.holder_is_gone(holder)
    assert not gone
    assert signalled == []
    assert _store.holder_is_gone(holder)  # on POSIX: gone


def test_2_4_only_a_gone_process_of_this_host_loses_its_lease_early() -> None:
    import socket
    import subprocess

    from scrapy_rfc9309.sites._store import holder_is_gone

    here = socket.gethostname()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert holder_is_gone(f"{here}:{ended.pid}:abcd1234")
    assert not holder_is_gone(f"{here}:{os.getpid()}:abcd1234")  # this process
    assert not holder_is_gone(f"{here}:1:abcd1234")  # alive (init), maybe not ours
    assert not holder_is_gone(f"elsewhere.example:{ended.pid}:abcd1234")  # another host
    for garbage in ("", "x", f"{here}::x", f"{here}:-5:x", f"{here}:99999999999:x", "a:b:c"):
        assert not holder_is_gone(garbage)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_a_write_on_a_locked_store_waits_5_s_at_most(
    sites, tmp_path, caplog, monkeypatch
) -> None:
    """Another process holds the SQLite write lock when the robots.txt is saved:
    the save waits the store's busy timeout (5 s; 1.5 s here) once, then one
    ERROR; the crawl goes on."""
    from scrapy_rfc9309.sites import _sqlite_store

    monkeypatch.setattr(_sqlite_store, "BUSY_TIMEOUT", 1.5)
    path = tmp_path / "robots.db"
    SQLiteStore(str(path)).close()
    locker = sqlite3.connect(path, isolation_level=None)
    body = text(ROBOTS_V1)

    def robots_then_lock(request: Any) -> Any:
        locker.execute("BEGIN IMMEDIATE")  # held until the test ends
        return body(request)

    site = sites(routes={"/robots.txt": robots_then_lock}, default=text("page"))
    started = time.monotonic()
    try:
        spider, stats = await crawl([site.url("/a")], store_settings(path), allow_errors=True)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    elapsed = time.monotonic() - started
    assert site.count("/robots.txt") == 1 and spider.fetched == [site.url("/a")]
    assert stats["robotstxt/store/errors"] == 1
    assert any("robots.txt store failed while" in m for m in caplog.messages)
    # 1.5 s, not 1.5 s for the save and 1.5 s more to release (3 s and more: the
    # bound leaves a loaded machine all the margin below that)
    assert elapsed < 3.0, elapsed


@deferred_f_from_coro_f
async def test_command_at_refuses_times_beyond_year_9999(tmp_path) -> None:
    """Each value read by ``--at``'s parser; one command run says it, exit 2."""
    from scrapy.exceptions import UsageError

    from scrapy_rfc9309.components.command._command_store import parse_time

    for when in ("99999999999999", "inf", "nan", "1e300"):
        with pytest.raises(UsageError, match="not a time between the years 1 and 9999"):
            parse_time(when)
    output, code = await run_command(
        "http://127.0.0.1/x", "--at", "1e300", "--store", "sqlite:///nope.db", cwd=tmp_path
    )
    assert code == 2, output
    assert "not a time between the years 1 and 9999" in output, output


# -- batches: the store's cost on the crawl -------------------------------------------


def test_2_4_look_many_answers_fresh_leased_and_held_sites_in_one_call(
    db: SQLiteStore, tmp_path: Path
) -> None:
    """One call for many sites: a fresh record with its body, a lease taken for a site
    without one (or with an expired one), ``held`` for a live lease of another holder."""
    now = time.time()
    fresh_site, stale_site, new_site, busy_site = (f"http://s{n}.test:80" for n in range(4))
    db.save(record(now, site=fresh_site), ROBOTS_V1)
    db.save(record(now - 7200, site=stale_site, expires_in=60), ROBOTS_V2)
    other = SQLiteStore(str(tmp_path / "robots.db"))
    try:
        assert other.acquire(busy_site, "otherhost:1:other", 60)
    finally:
        other.close()
    answers = db.look_many(
        [fresh_site, stale_site, new_site, busy_site],
        "thishost:2:this",
        30,
        lambda found: found.expires_at > time.time(),
    )
    assert answers[fresh_site][0] == "fresh"
    found = answers[fresh_site][1]
    assert found is not None and found[0].site == fresh_site and found[1] == ROBOTS_V1
    assert answers[stale_site] == ("lease", None) and answers[new_site] == ("lease", None)
    assert answers[busy_site] == ("held", None)
    assert db.lease_of(new_site) is not None and db.lease_of(new_site)[0] == "thishost:2:this"  # type: ignore[index]
    assert not db.acquire(stale_site, "otherhost:1:other", 30)  # taken by the batch


def test_2_4_save_many_saves_records_and_gives_leases_up_in_one_transaction(
    db: SQLiteStore,
) -> None:
    sites = [f"http://s{n}.test:80" for n in range(3)]
    for site in sites:
        assert db.acquire(site, "me", 60)
    db.save_many(
        [(record(T0, site=sites[0]), ROBOTS_V1), (record(T0, site=sites[1], body=None), None)],
        sites,
        "me",
    )
    first, second = db.current(sites[0]), db.current(sites[1])
    assert first is not None and first[1] == ROBOTS_V1
    assert second is not None and second[1] is None
    assert db.current(sites[2]) is None
    assert all(db.lease_of(site) is None for site in sites)


def test_2_4_fresh_records_reads_a_small_store_at_once(db: SQLiteStore) -> None:
    now = time.time()
    db.save(record(now, site="http://a.test:80"), ROBOTS_V1)
    db.save(record(now - 7200, site="http://b.test:80", expires_in=60), ROBOTS_V2)
    db.save(record(now, site="http://c.test:80", body=None, kind="unavailable"), None)

    def fresh(found: FetchRecord) -> bool:
        return found.expires_at > time.time()

    found = db.fresh_records(10, fresh)
    assert sorted(found) == ["http://a.test:80", "http://c.test:80"]
    assert found["http://a.test:80"][1] == ROBOTS_V1 and found["http://c.test:80"][1] is None
    assert db.fresh_records(2, fresh) == {}  # more sites than the limit: none read


def _no_non_waiting(self: SQLiteStore) -> SQLiteStore:
    raise StoreError("no non-waiting connection here")


def _count_calls(monkeypatch: Any, name: str, first_waits: Gate | None = None) -> list[int]:
    """How many sites (or records) each call of ``SQLiteStore.<name>`` was given; the
    first call waits for ``first_waits`` to open (a busy worker)."""
    sizes: list[int] = []
    original = getattr(SQLiteStore, name)

    def counted(self: SQLiteStore, items: Any, *args: Any) -> Any:
        sizes.append(len(items))
        if len(sizes) == 1 and first_waits is not None:
            first_waits.wait()
        return original(self, items, *args)

    monkeypatch.setattr(SQLiteStore, name, counted)
    return sizes


@deferred_f_from_coro_f
async def test_2_4_the_sites_met_at_crawl_start_are_looked_up_and_saved_in_batches(
    sites, tmp_path, monkeypatch, gate
) -> None:
    """RFC 9309 2.4 store, cost: the sites met while the store's worker is busy are
    looked up (and their leases taken) in one store call, and the fetches finished
    meanwhile saved in one, not one worker round trip and one transaction per site
    (the look-ups all made on the worker: no non-waiting connection). The worker's
    first look-up is held until every site was asked for, its first save until
    every fetch was handed to the store."""
    from scrapy_rfc9309.components.store._store_lookups import StoreLookups
    from scrapy_rfc9309.components.store._store_saves import StoreSaves

    many = [sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page")) for _ in range(12)]
    monkeypatch.setattr(SQLiteStore, "non_waiting", _no_non_waiting)
    all_asked = gate("every site looked up")
    all_fetched = gate("every fetch handed to the store")
    looked = _count_calls(monkeypatch, "look_many", all_asked)
    saved = _count_calls(monkeypatch, "save_many", all_fetched)
    asked: set[str] = set()
    fetched: set[str] = set()
    look, keep = StoreLookups.look, StoreSaves.fetched

    async def counted_look(self: StoreLookups, site: str) -> Any:
        asked.add(site)
        if len(asked) == len(many):  # the look-up is queued in this reactor turn
            all_asked.open()
        return await look(self, site)

    def counted_fetch(self: StoreSaves, site: str, *args: Any, **kwargs: Any) -> None:
        keep(self, site, *args, **kwargs)
        fetched.add(site)
        if len(fetched) == len(many):
            all_fetched.open()

    monkeypatch.setattr(StoreLookups, "look", counted_look)
    monkeypatch.setattr(StoreSaves, "fetched", counted_fetch)
    urls = [site.url(path) for path in ("/a", "/private/b") for site in many]
    spider, stats = await crawl(urls, store_settings(tmp_path / "robots.db"))
    assert all(site.count("/robots.txt") == 1 for site in many)
    assert sorted(spider.fetched) == sorted(site.url("/a") for site in many)
    assert sum(looked) == 12 and len(looked) <= 6, looked
    assert sum(saved) == 12 and len(saved) <= 6, saved
    assert stats["robotstxt/store/saved"] == 12


@deferred_f_from_coro_f
async def test_2_4_a_restarted_crawl_reads_a_small_store_once_at_open(
    sites, tmp_path, monkeypatch
) -> None:
    """RFC 9309 2.4: the stored copies are used on restart, read in one call at open:
    no per-site look-up, no download."""
    many = [sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page")) for _ in range(5)]
    settings = store_settings(tmp_path / "robots.db")
    urls = [site.url(path) for path in ("/a", "/private/b") for site in many]
    await crawl(urls, settings)
    looked = _count_calls(monkeypatch, "look_many")
    read: list[int] = []
    monkeypatch.setattr(SQLiteStore, "fresh_records", _sized(SQLiteStore.fresh_records, read))
    _spider, stats = await crawl(urls, settings)
    assert all(site.count("/robots.txt") == 1 for site in many)  # not downloaded again
    assert all(site.count("/private/b") == 0 for site in many)
    assert stats["robotstxt/store/loaded"] == 5
    assert looked == [] and read == [5]


def _sized(original: Any, calls: list[int]) -> Any:
    def counted(self: SQLiteStore, limit: int, fresh: Any) -> Any:
        found = original(self, limit, fresh)
        calls.append(len(found))
        return found

    return counted


def _slow_on_worker(monkeypatch: Any, held: Gate | None = None) -> list[tuple[bool, int, str]]:
    """``SQLiteStore.look_many`` held on a waiting connection (the worker's: a worker
    held off the interpreter lock) until ``held`` opens; each call logged as (waits,
    sites, outcome)."""
    calls: list[tuple[bool, int, str]] = []
    original = SQLiteStore.look_many

    def look_many(self: SQLiteStore, sites: Any, *args: Any) -> Any:
        waits = getattr(self, "waits", True)
        if waits and held is not None:
            held.wait()
        try:
            found = original(self, sites, *args)
        except StoreError as exc:
            calls.append((waits, len(sites), type(exc).__name__))
            raise
        calls.append((waits, len(sites), "answered"))
        return found

    monkeypatch.setattr(SQLiteStore, "look_many", look_many)
    return calls


@deferred_f_from_coro_f
async def test_2_4_a_new_store_does_not_delay_the_first_robots_txt_fetch(
    sites, tmp_path, monkeypatch, gate
) -> None:
    """RFC 9309 2.4 store, cost: a site not in the store is looked up and leased on
    the reactor with a connection that never waits, so its robots.txt is fetched
    at once even while the store's worker is stuck: a look-up on the worker is
    held until every robots.txt was served (one needed first never is: the gate
    gives up and the test fails)."""
    robots = text(ROBOTS_V1)
    served: list[bytes] = []
    every_robots_txt = gate("every robots.txt served", timeout=5.0)

    def counted(request: Any) -> bytes | int:
        served.append(request.uri)
        if len(served) == len(many):
            every_robots_txt.open()
        return robots(request)

    many = [sites(routes={"/robots.txt": counted}, default=text("page")) for _ in range(4)]
    calls = _slow_on_worker(monkeypatch, every_robots_txt)
    urls = [site.url(path) for path in ("/a", "/private/b") for site in many]
    spider, stats = await crawl(urls, store_settings(tmp_path / "robots.db"))
    assert all(site.count("/robots.txt") == 1 for site in many)
    assert sorted(spider.fetched) == sorted(site.url("/a") for site in many)
    assert all(site.count("/private/b") == 0 for site in many)
    assert calls and all(not waits for waits, _n, _ in calls), calls  # none on the worker
    assert stats["robotstxt/store/saved"] == 4
    assert "robotstxt/store/errors" not in stats
    store = SQLiteStore(str(tmp_path / "robots.db"))
    try:
        assert all(store.current(_site_key(site.origin)) is not None for site in many)
        assert store._db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
    finally:
        store.close()


@deferred_f_from_coro_f
async def test_2_4_a_locked_store_at_look_up_falls_back_to_the_worker(
    sites, tmp_path, monkeypatch
) -> None:
    """RFC 9309 2.4 store: another process holds the write lock (``BEGIN IMMEDIATE``)
    when a site is looked up: the reactor's non-waiting connection gives up at once
    (nothing waits on the reactor), the look-up is made again on the worker, which
    waits for the lock; the robots.txt is fetched once, saved, the lease given up."""
    from twisted.internet import reactor as _reactor

    from scrapy_rfc9309.components.store._store_bridge import StoreBridge

    reactor: Any = _reactor
    path = tmp_path / "robots.db"
    calls = _slow_on_worker(monkeypatch)
    locker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    unlocked: list[Any] = []
    opened = StoreBridge.__init__

    def locked_once_open(self: StoreBridge, *args: Any) -> None:
        opened(self, *args)  # the store opened: another process takes the write lock
        locker.execute("BEGIN IMMEDIATE")
        unlocked.append(reactor.callLater(0.5, locker.execute, "ROLLBACK"))

    monkeypatch.setattr(StoreBridge, "__init__", locked_once_open)
    site = sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page"))
    try:
        spider, stats = await crawl([site.url("/a"), site.url("/private/b")], store_settings(path))
    finally:
        if unlocked and unlocked[0].active():
            unlocked[0].cancel()
            locker.execute("ROLLBACK")
        locker.close()
    assert len(unlocked) == 1
    assert calls[:2] == [(False, 1, "StoreBusy"), (True, 1, "answered")], calls
    assert site.count("/robots.txt") == 1 and site.count("/private/b") == 0
    assert spider.fetched == [site.url("/a")]
    assert stats["robotstxt/store/saved"] == 1
    assert "robotstxt/store/errors" not in stats
    store = SQLiteStore(str(path))
    try:
        found = store.current(_site_key(site.origin))
        assert found is not None and found[1] == ROBOTS_V1
        assert store._db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
    finally:
        store.close()


def test_2_4_the_non_waiting_connection_never_waits_nor_checkpoints(db: SQLiteStore) -> None:
    """RFC 9309 2.4 store, cost: the connection used on the reactor gives up at once
    on a lock held elsewhere (``StoreBusy``, nothing changed), leaves checkpoints
    to the waiting connection, and answers leases as ``look_many`` does, without
    reading bodies."""
    from scrapy_rfc9309.sites._sqlite_store import StoreBusy

    db.save(record(time.time()), ROBOTS_V1)
    quick = db.non_waiting()
    try:
        assert quick._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        assert quick._db.execute("PRAGMA busy_timeout").fetchone()[0] == 0
        assert db._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] > 0
        fresh = lambda found: found.expires_at > time.time()  # noqa: E731
        db._db.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        with pytest.raises(StoreBusy):
            quick.look_many(["http://other.example:80"], "me", 30.0, fresh, False)
        assert time.monotonic() - started < 0.5
        db._db.execute("ROLLBACK")
        assert db.lease_of("http://other.example:80") is None
        answers = quick.look_many([SITE, "http://other.example:80"], "me", 30.0, fresh, False)
        assert answers == {SITE: ("fresh", None), "http://other.example:80": ("lease", None)}
        assert db.lease_of("http://other.example:80") is not None
    finally:
        quick.close()


def test_2_4_reports_read_a_store_in_a_folder_they_cannot_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive on read-only media: SQLite cannot make the ``-shm`` file a
    read-only open of a write-ahead-log store needs, so the store is read as it
    is on disk (``immutable``) instead of being reported as unreadable."""
    path = tmp_path / "robots.db"
    store = SQLiteStore(str(path))
    store.save(record(), ROBOTS_V1)
    store.close()
    real_connect = sqlite3.connect

    def read_only_folder(target: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = real_connect(target, *args, **kwargs)
        if "mode=ro" in str(target) and "immutable=1" not in str(target):
            db.close()  # what SQLite does when it cannot make the -shm file
            return real_connect(f"file:{tmp_path}/missing/x.db?mode=ro", uri=True)
        return db

    monkeypatch.setattr("scrapy_rfc9309.sites._sqlite_store.sqlite3.connect", read_only_folder)
    monkeypatch.setattr("scrapy_rfc9309.sites._sqlite_store.os.access", lambda *_: False)
    reader = SQLiteStore(str(path), read_only=True)
    try:
        assert [kept.site for kept in reader.history(SITE)] == [SITE]
    finally:
        reader.close()


class _StartTimedSpider(RecordingSpider):
    """Records when the crawl asked it for its first requests; opens the gate
    ``opened`` when it is opened (``spider_opened``)."""

    name = "start-timed"
    started_at = 0.0
    opened = Gate("the spider opened")

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(cls.opened.open, signal=signals.spider_opened)
        return spider

    async def start(self) -> Any:
        type(self).started_at = time.time()
        async for request in super().start():
            yield request


@deferred_f_from_coro_f
async def test_2_4_a_restarted_crawl_starts_once_the_stores_records_are_read(
    sites, tmp_path, monkeypatch, caplog, gate
) -> None:
    """RFC 9309 2.4: the spider's first requests are asked for after the store's
    records are read at open (a read still under way when the spider opens,
    here), so every site is known when its requests are scheduled and they are
    served in the spider's order, as without a store (scheduled before, they
    would wait for the read and go back into the queue a few sites at a time)."""
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309.components import _compat

    from .conftest import BASE_SETTINGS

    many = [sites(routes={"/robots.txt": text(ROBOTS_V1)}, default=text("page")) for _ in range(3)]
    settings = store_settings(tmp_path / "robots.db", CONCURRENT_REQUESTS=1)
    await crawl([site.url("/first") for site in many], settings)
    original = SQLiteStore.fresh_records
    _StartTimedSpider.opened = gate("the spider opened")

    def slow(self: SQLiteStore, *args: Any) -> Any:
        _StartTimedSpider.opened.wait()  # still reading when the spider opens
        return original(self, *args)

    monkeypatch.setattr(SQLiteStore, "fresh_records", slow)
    urls = [site.url(f"/{page}") for page in range(4) for site in many]
    caplog.set_level(logging.INFO, logger="scrapy_rfc9309")
    crawler = get_crawler(_StartTimedSpider, {**BASE_SETTINGS, **settings})
    await _compat.crawl(crawler, urls=urls)
    read = [r for r in caplog.records if "3 sites with a fresh record read at open" in r.message]
    assert len(read) == 1
    assert _StartTimedSpider.started_at >= read[0].created
    served = sorted(
        (when, site.url(path))
        for site in many
        for path, when in zip(site.hits, site.hit_times, strict=True)
        if path != "/first" and path != "/robots.txt"
    )
    assert [url for _, url in served] == urls  # the spider's order
    assert all(site.count("/robots.txt") == 1 for site in many)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_a_restarted_crawl_keeps_the_stored_copy_while_unreachable(
    sites, tmp_path, caplog
) -> None:
    path = tmp_path / "robots.db"
    await check_stored_copy_kept_while_unreachable(
        sites, tmp_path, caplog, store_settings(path), ["--store", f"sqlite:///{path}"]
    )


async def check_stored_copy_kept_while_unreachable(
    sites: Any, tmp_path: Path, caplog: Any, settings: dict[str, Any], options: list[str]
) -> None:
    """RFC 9309 2.4: a crawl restarted after the stored copy expired, its robots.txt
    now unreachable (503), keeps using that copy (as a crawl keeps its copy in
    memory): its rules decide, nothing is disallowed wholesale. The archive's
    new record is the copy kept in force, with the 503 named, so ``--at``
    gives the verdict the crawl applied; a later restart within that record's
    lifetime uses it without a download."""
    import hashlib

    site = sites(
        routes={
            "/robots.txt": sequence(
                with_headers(text(ROBOTS_V1), Cache_Control="max-age=1"), status(503)
            )
        },
        default=text("page"),
    )
    settings = {**settings, "ROBOTSTXT_CACHE_MIN_TTL": 0, "ROBOTSTXT_UNREACHABLE_DEFER": 0}
    await crawl([site.url("/a")], settings)
    clock = SkippingClock()
    clock.skip(1.2)  # the stored copy expires
    caplog.set_level(logging.WARNING, logger="scrapy_rfc9309")
    urls = [site.url("/a"), site.url("/private/b")]
    spider, stats = await crawl(urls, settings, clock=clock)
    assert site.count("/robots.txt") == 2  # fetched again: 503
    assert spider.fetched == [site.url("/a")]  # the kept copy allows it
    assert "line 2" in spider.dropped[site.url("/private/b")]  # and disallows this
    assert stats.get("robotstxt/sites/unreachable", 0) == 0
    assert any("keeping the copy fetched earlier" in r.message for r in caplog.records)

    output, code = await run_command("history", site.url("/"), *options, "--json", cwd=tmp_path)
    entries = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [entry["outcome"] for entry in entries] == ["parsed", "parsed"], output
    assert entries[0]["sha256"] == hashlib.sha256(ROBOTS_V1).hexdigest()
    assert entries[0]["robots_txt"] == [{"url": site.url("/robots.txt"), "status": 503}]
    assert "kept in force (RFC 9309 2.4)" in entries[0]["detail"]
    output, code = await run_command(
        site.url("/private/b"), *options, "--at", str(clock.time()), cwd=tmp_path
    )
    assert code == 1 and 'DISALLOWED by line 2: "Disallow: /private"' in output, output

    spider, stats = await crawl(urls, settings, clock=clock)  # within the kept record's lifetime
    assert site.count("/robots.txt") == 2 and stats["robotstxt/store/loaded"] == 1
    assert spider.fetched == [site.url("/a")]


@deferred_f_from_coro_f
async def test_http_guide_ch9_a_deferral_retry_downloads_never_reads_back_its_503(
    sites, tmp_path, fast_backoff
) -> None:
    """HTTP: The Definitive Guide ch. 9 (defer while unreachable) with a store:
    five sites answer 503 for 0.5 s (back-off 0.2 s), then their robots.txt. The 503 saved in
    the store is no answer to the deferral's own retry (it would come back at
    every attempt until ROBOTSTXT_UNREACHABLE_DEFER ran out, every page
    dropped): each retry downloads, and the pages are fetched once it is back."""
    many = [
        sites(routes={"/robots.txt": unreachable_for(0.5, text(ROBOTS_V1))}, default=text("page"))
        for _ in range(5)
    ]
    urls = [site.url(f"/p{page}") for site in many for page in range(2)]
    settings = store_settings(
        tmp_path / "store.db",
        SCHEDULER_PRIORITY_QUEUE="scrapy_rfc9309.RobotsTxtPriorityQueue",
        ROBOTSTXT_UNREACHABLE_DEFER=30,
    )
    started = time.monotonic()
    spider, stats = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(urls)  # none dropped as unreachable
    assert time.monotonic() - started < 15  # not the 30 s of ROBOTSTXT_UNREACHABLE_DEFER
    for site in many:
        assert 2 <= site.count("/robots.txt") <= 4  # 503, a retry or two, then 200
    assert stats["robotstxt/deferred/recovered"] == 5
    assert "robotstxt/forbidden/unreachable" not in stats


def test_store_errors_are_described_printable_and_bounded() -> None:
    """A store error quoting binary arguments (a compressed body) is shown
    escaped, its start and end kept, with its class."""
    from scrapy_rfc9309.sites._store import describe_error

    message = "Command # 1 (SET k x\x9c\x00\x1b" + "\x07" * 5000 + ") caused error: OOM"
    shown = describe_error(RuntimeError(message), limit=200)
    assert shown.startswith("RuntimeError: Command # 1 (SET k x")
    assert shown.endswith("caused error: OOM")
    assert shown.isprintable() and len(shown) < 250
    assert describe_error(TimeoutError()) == "TimeoutError"


@deferred_f_from_coro_f
async def test_rfc9309_2_3_1_4_history_of_an_unreachable_copy_says_the_same_in_text_and_json(
    sites, tmp_path
) -> None:
    """An unreachable robots.txt is kept ``ROBOTSTXT_UNREACHABLE_TTL``: ``history``
    says so in its text and in ``--json`` alike (``--json`` said ``null``)."""
    site = sites(routes={"/robots.txt": status(503)}, default=text("page"))
    path = tmp_path / "robots.db"
    await crawl([site.url("/a")], store_settings(path), allow_errors=True)
    uri = f"sqlite:///{path}"
    output, code = await run_command("history", site.url("/"), "--store", uri, cwd=tmp_path)
    assert code == 0, output
    assert "kept 600 s: ROBOTSTXT_UNREACHABLE_TTL" in output
    output, code = await run_command(
        "history", site.url("/"), "--store", uri, "--json", cwd=tmp_path
    )
    (entry,) = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert (entry["outcome"], entry["lifetime"]) == ("unreachable", "ROBOTSTXT_UNREACHABLE_TTL")

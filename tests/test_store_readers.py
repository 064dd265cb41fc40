"""A stored robots.txt is obeyed with the settings of the crawl that reads it, not
of the crawl that saved it (RFC 9309 2.4: a cached copy may be used; 2.5: the
size limit; HTTP: The Definitive Guide ch. 9: 401/403 with
``ROBOTSTXT_AUTH_DISALLOW``).

Real crawls in sequence on 127.0.0.1 against one real SQLite file, asserting on
what the test server served; the same checks run against Redis in
``test_redis_store``. Then the pure conversion and the SQLite file of an earlier
version (records without the added fields).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.sites._outcome import Kind
from scrapy_rfc9309.sites._records import ReaderLimits, answer_of
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore
from scrapy_rfc9309.sites._store import FetchRecord

from .conftest import crawl
from .server import status, text

#: the smallest ROBOTSTXT_MAX_SIZE a crawl accepts (a smaller one is refused at start-up)
SMALL_SIZE = 1024
#: the rule comes after byte 1,024: a crawl with ROBOTSTXT_MAX_SIZE = 1024 never sees it
LONG_ROBOTS = b"User-agent: *\nDisallow: /" + b"x" * 1100 + b"\nDisallow: /private\n"


def sqlite_settings(tmp_path: Path) -> dict[str, Any]:
    return {"ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.db'}"}


async def check_a_body_cut_shorter_than_the_readers_limit_is_fetched_again(
    sites: Any, store: dict[str, Any]
) -> None:
    """RFC 9309 2.5: crawl A (``ROBOTSTXT_MAX_SIZE = 1024``) stores a body cut before
    the rule; crawl B (default size) would read the rule: it fetches the file again
    and drops ``/private/b``. Crawl C (size 1024 again) uses B's full copy, cut at its
    own limit: ``/private/b`` allowed, no download."""
    site = sites(routes={"/robots.txt": text(LONG_ROBOTS)}, default=text("page"))
    url = site.url("/private/b")
    spider, stats = await crawl([url], {**store, "ROBOTSTXT_MAX_SIZE": SMALL_SIZE})
    assert spider.fetched == [url]  # A never saw the rule
    assert stats["robotstxt/store/saved"] == 1
    spider, stats = await crawl([url], store)
    assert site.count("/robots.txt") == 2  # B fetched it again
    assert site.count("/private/b") == 1  # only A's
    assert url in spider.dropped
    assert stats["robotstxt/store/refetched"] == 1
    assert "robotstxt/store/loaded" not in stats
    spider, stats = await crawl([url], {**store, "ROBOTSTXT_MAX_SIZE": SMALL_SIZE})
    assert site.count("/robots.txt") == 2  # C used B's copy
    assert stats["robotstxt/store/loaded"] == 1
    assert spider.fetched == [url] and site.count("/private/b") == 2


async def check_a_stored_403_follows_the_readers_auth_disallow(
    sites: Any, store: dict[str, Any]
) -> None:
    """HTTP: The Definitive Guide ch. 9 / RFC 9309 2.3.1.3: crawl A stores a 403 as
    unavailable (allow all); crawl B with ``ROBOTSTXT_AUTH_DISALLOW = True`` uses the
    stored answer as restricted and drops the page; crawl C without it fetches it."""
    site = sites(routes={"/robots.txt": status(403)}, default=text("page"))
    url = site.url("/b")
    spider, _ = await crawl([url], store)
    assert spider.fetched == [url]
    spider, stats = await crawl([url], {**store, "ROBOTSTXT_AUTH_DISALLOW": True})
    assert site.count("/robots.txt") == 1  # B used the stored answer
    assert stats["robotstxt/store/loaded"] == 1
    assert url in spider.dropped and site.count("/b") == 1
    spider, stats = await crawl([url], store)
    assert site.count("/robots.txt") == 1 and stats["robotstxt/store/loaded"] == 1
    assert spider.fetched == [url] and site.count("/b") == 2


@deferred_f_from_coro_f
async def test_2_5_sqlite_a_body_cut_at_a_smaller_size_is_fetched_again(sites, tmp_path) -> None:
    await check_a_body_cut_shorter_than_the_readers_limit_is_fetched_again(
        sites, sqlite_settings(tmp_path)
    )
    store = SQLiteStore(str(tmp_path / "robots.db"))
    try:
        newest, first = store.history(next(iter(_sites(store))), 2)
    finally:
        store.close()
    assert (first.truncated, first.max_size, first.status) == (True, SMALL_SIZE, 200)
    assert (newest.truncated, newest.max_size) == (False, 512_000)


@deferred_f_from_coro_f
async def test_2_3_1_3_sqlite_a_stored_403_follows_the_readers_auth_disallow(
    sites, tmp_path
) -> None:
    await check_a_stored_403_follows_the_readers_auth_disallow(sites, sqlite_settings(tmp_path))


@deferred_f_from_coro_f
async def test_2_3_1_3_at_reads_a_stored_403_with_the_commands_settings(sites, tmp_path) -> None:
    """``scrapy robotstxt URL --at`` derives the verdict as the crawl does: a stored
    403 is disallowed with ``-s ROBOTSTXT_AUTH_DISALLOW=True``, allowed without."""
    from .test_store import run_command

    site = sites(routes={"/robots.txt": status(403)}, default=text("page"))
    settings = sqlite_settings(tmp_path)
    await crawl([site.url("/b")], settings)
    uri, now = settings["ROBOTSTXT_STORE_URI"], str(time.time() + 1)
    args = [site.url("/b"), "--at", now, "--store", uri, "--json"]
    output, _ = await run_command(*args, cwd=tmp_path)
    assert _answer(output)[:2] == ("allowed", "unavailable"), output
    output, _ = await run_command(*args, "-s", "ROBOTSTXT_AUTH_DISALLOW=True", cwd=tmp_path)
    assert _answer(output)[:2] == ("disallowed", "restricted"), output
    assert site.count("/robots.txt") == 1  # no download


def _answer(output: str) -> tuple[str, str]:
    (line,) = [line for line in output.splitlines() if line.startswith("{")]
    answer = json.loads(line)
    return answer["verdict"], answer["outcome"]


def _sites(store: SQLiteStore) -> list[str]:
    return [str(row[0]) for row in store._db.execute("SELECT site FROM current")]


# -- the conversion, pure ----------------------------------------------------------

SITE = "http://example.com:80"
LIMITS = ReaderLimits(
    max_size=512_000,
    auth_disallow=False,
    cache_ttl=86_400.0,
    unreachable_ttl=600.0,
    retry_after_max=3_600.0,
)


def stored(kind: str = "parsed", body: bytes | None = b"User-agent: *\n", **fields: Any) -> Any:
    values: dict[str, Any] = {
        "site": SITE,
        "fetched_at": 1_000.0,
        "chain": ((f"{SITE}/robots.txt", 200),),
        "kind": kind,
        "detail": "HTTP 200",
        "lifetime": "",
        "expires_at": 5_000.0,
        "retry_after": False,
        "size": 0 if body is None else len(body),
        "sha256": None if body is None else hashlib.sha256(body).hexdigest(),
    }
    values.update(fields)
    return FetchRecord(**values)


@pytest.mark.parametrize(
    ("fields", "limit", "usable"),
    [
        ({"truncated": True, "max_size": 100}, 512_000, False),  # the reader reads further
        ({"truncated": True, "max_size": 512_000}, 100, True),  # cut again, at 100
        ({"truncated": False, "max_size": 100}, 512_000, True),  # the whole file
        ({}, 512_000, True),  # an earlier version's record: as saved
    ],
)
def test_2_5_a_body_cut_at_a_smaller_limit_cannot_serve_the_reader(
    fields: dict[str, Any], limit: int, usable: bool
) -> None:
    limits = ReaderLimits(limit, False, 86_400.0, 600.0, 3_600.0)
    answer = answer_of(stored(**fields), b"User-agent: *\n", SITE, limits)
    assert (answer.problem is None) is usable
    assert not answer.damaged


@pytest.mark.parametrize("kind", ["unavailable", "restricted"])
@pytest.mark.parametrize("auth_disallow", [False, True])
def test_2_3_1_3_a_stored_401_403_is_the_readers_to_classify(
    kind: str, auth_disallow: bool
) -> None:
    limits = ReaderLimits(512_000, auth_disallow, 86_400.0, 600.0, 3_600.0)
    for code in (401, 403):
        answer = answer_of(stored(kind, None, status=code), None, SITE, limits)
        assert answer.kind is (Kind.RESTRICTED if auth_disallow else Kind.UNAVAILABLE)
    # an earlier version's record (no status): as saved
    assert answer_of(stored(kind, None), None, SITE, limits).kind is Kind(kind)
    # a 404 is not an authorization answer
    assert answer_of(stored(kind, None, status=404), None, SITE, limits).kind is Kind(kind)


def test_2_4_damaged_records_are_not_used() -> None:
    assert answer_of(stored(site="http://other:80"), b"", SITE, LIMITS).damaged
    assert answer_of(stored("nonsense"), b"", SITE, LIMITS).damaged
    assert answer_of(stored(), None, SITE, LIMITS).damaged


# -- a SQLite file of an earlier version ---------------------------------------------

_OLD_ARCHIVE = """
CREATE TABLE bodies (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE archive (
    id INTEGER PRIMARY KEY AUTOINCREMENT, site TEXT NOT NULL, fetched_at REAL NOT NULL,
    chain TEXT NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL, lifetime TEXT NOT NULL,
    expires_at REAL NOT NULL, retry_after INTEGER NOT NULL, size INTEGER NOT NULL,
    sha256 TEXT REFERENCES bodies(sha256)
);
CREATE TABLE current (site TEXT PRIMARY KEY, archive_id INTEGER NOT NULL);
CREATE TABLE leases (site TEXT PRIMARY KEY, holder TEXT NOT NULL, until REAL NOT NULL);
INSERT INTO archive (site, fetched_at, chain, kind, detail, lifetime, expires_at,
    retry_after, size, sha256)
VALUES ('http://example.com:80', 1000.0, '[["http://example.com/robots.txt", 403]]',
    'unavailable', 'HTTP 403', '', 4102444800.0, 0, 0, NULL);
INSERT INTO current (site, archive_id) VALUES ('http://example.com:80', 1);
"""


def old_store_file(path: Path) -> Path:
    """A SQLite store file as an earlier version wrote it (``_OLD_ARCHIVE``), at ``path``."""
    old = sqlite3.connect(path)
    old.executescript(_OLD_ARCHIVE)
    old.execute("PRAGMA journal_mode = WAL")
    old.close()
    return path


def test_2_4_a_store_of_an_earlier_version_opens_and_reads_as_before(tmp_path: Path) -> None:
    """A store file without the added columns: read-only (reports) it reads as
    before; opened by a crawl it gets the columns, its records kept as they were."""
    path = old_store_file(tmp_path / "old.db")
    reader = SQLiteStore(str(path), read_only=True)
    try:
        found = reader.current(SITE)
    finally:
        reader.close()
    assert found is not None and found[0].status is None and found[0].kind == "unavailable"
    store = SQLiteStore(str(path))
    try:
        record, _ = store.current(SITE) or (None, None)
        assert record is not None and (record.status, record.truncated, record.max_size) == (
            None,
            None,
            None,
        )
        # read with ROBOTSTXT_AUTH_DISALLOW: as saved (the status is not known)
        limits = ReaderLimits(512_000, True, 86_400.0, 600.0, 3_600.0)
        assert answer_of(record, None, SITE, limits).kind is Kind.UNAVAILABLE
        store.save(stored(fetched_at=2_000.0, status=200, truncated=True, max_size=100), b"x")
        newest = store.current(SITE)
        assert newest is not None
        assert (newest[0].status, newest[0].truncated, newest[0].max_size) == (200, True, 100)
    finally:
        store.close()

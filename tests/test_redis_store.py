"""The Redis robots.txt store against a real ``redis-server``.

RFC 9309 2.4 (a robots.txt is cached, and used while fresh) across the
processes of a cluster: one store, one lease per site's fetch, an archive of
every fetch. The server is started by the tests on a free port of 127.0.0.1
in a temporary directory; without ``redis-server`` the tests are skipped,
except under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.sites._redis_store import (
    DEFAULT_PREFIX,
    RedisStore,
    open_redis_store,
    public_uri,
)
from scrapy_rfc9309.sites._store import FetchRecord, StoreError
from scrapy_rfc9309.sites._store_uri import open_store

from .clock import SkippingClock, skipping
from .conftest import BASE_SETTINGS, SIGNAL_HANDLER_ERROR, crawl
from .redis_server import RedisServer, require_redis_server
from .server import delayed, hang, sequence, text, unreachable_for
from .waiting import until, until_async

SITE = "http://127.0.0.1:8001"
BODY = b"User-agent: *\nDisallow: /private\n" + b"# a comment line\n" * 200


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test alone (to be stopped and started by it)."""
    binary = require_redis_server()
    with RedisServer(tmp_path / "redis", binary) as server:
        yield server


@pytest.fixture
def store(redis_server: RedisServer, prefix: str) -> Iterator[RedisStore]:
    opened = RedisStore(redis_server.url, prefix=prefix)
    yield opened
    opened.close()


def record(
    fetched_at: float = 1_000.0,
    body: bytes | None = BODY,
    site: str = SITE,
    kind: str = "parsed",
    **fields: object,
) -> FetchRecord:
    values: dict[str, object] = {
        "site": site,
        "fetched_at": fetched_at,
        "chain": ((f"{site}/robots.txt", 200),),
        "kind": kind,
        "detail": "HTTP 200",
        "lifetime": "RFC 9309 2.4: 24 hours",
        "expires_at": fetched_at + 86_400,
        "retry_after": False,
        "size": 0 if body is None else len(body),
        "sha256": None if body is None else hashlib.sha256(body).hexdigest(),
    }
    values.update(fields)
    return FetchRecord(**values)  # type: ignore[arg-type]


def raw_client(server: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(server.url)


def key(prefix: str, kind: str, site: str = SITE) -> str:
    """A site's key: the site between braces (a Redis Cluster hash tag)."""
    return f"{prefix}{kind}:{{{site}}}"


# -- records, bodies, archive (RFC 9309 2.4) ---------------------------------------------


def test_2_4_saved_record_is_current_with_its_body(store: RedisStore) -> None:
    assert store.current(SITE) is None
    saved = record()
    store.save(saved, BODY)
    assert store.current(SITE) == (saved, BODY)


def test_2_4_record_without_body(store: RedisStore) -> None:
    saved = record(body=None, kind="unavailable", detail="HTTP 404")
    store.save(saved, None)
    assert store.current(SITE) == (saved, None)


def test_2_4_what_each_reader_needs_is_kept_and_old_records_still_read(
    store: RedisStore, redis_server: RedisServer, prefix: str
) -> None:
    """The final status, whether the body was cut and the size limit used are kept
    (each reader derives its answer with its own settings); a record of an earlier
    version, without them, reads as before (``None``)."""
    saved = record(status=200, truncated=True, max_size=100)
    store.save(saved, BODY)
    assert store.current(SITE) == (saved, BODY)
    older = json.loads(raw_client(redis_server).get(key(prefix, "current")) or b"{}")
    for name in ("status", "truncated", "max_size"):
        del older[name]
    raw_client(redis_server).set(key(prefix, "current"), json.dumps(older))
    found = store.current(SITE)
    assert found is not None
    assert (found[0].status, found[0].truncated, found[0].max_size) == (None, None, None)


def test_2_4_current_is_the_last_saved_even_with_an_earlier_clock(store: RedisStore) -> None:
    """Clocks of a cluster's machines differ: the last save wins, not the largest time."""
    store.save(record(fetched_at=2_000.0), BODY)
    later = record(fetched_at=1_999.0, body=b"User-agent: *\nAllow: /\n")
    store.save(later, b"User-agent: *\nAllow: /\n")
    assert store.current(SITE) == (later, b"User-agent: *\nAllow: /\n")


def test_2_4_bodies_kept_once_per_sha256_compressed(
    store: RedisStore, redis_server: RedisServer, prefix: str
) -> None:
    """A site's bodies are kept once per content, in a hash of the site's own
    (one slot per site on Redis Cluster)."""
    for number in range(3):
        store.save(record(fetched_at=1_000.0 + number), BODY)
    client = raw_client(redis_server)
    assert [k.decode() for k in client.scan_iter(f"{prefix}bod*")] == [key(prefix, "bodies")]
    sha = hashlib.sha256(BODY).hexdigest()
    assert client.hkeys(key(prefix, "bodies")) == [sha.encode()]
    kept = client.hget(key(prefix, "bodies"), sha)
    assert isinstance(kept, bytes)
    assert len(kept) < len(BODY) / 5
    assert zlib.decompress(kept) == BODY


def test_2_4_history_newest_first_with_limit(store: RedisStore) -> None:
    saved = [record(fetched_at=1_000.0 + n, detail=f"HTTP 200 #{n}") for n in range(5)]
    for item in (saved[2], saved[0], saved[4], saved[1], saved[3]):
        store.save(item, BODY)
    assert store.history(SITE) == saved[::-1]
    assert store.history(SITE, limit=2) == [saved[4], saved[3]]
    assert store.history(SITE, limit=0) == []
    assert store.history("http://other.test:80") == []


def test_2_4_at_gives_the_record_in_force(store: RedisStore) -> None:
    first = record(fetched_at=1_000.0)
    second_body = b"User-agent: *\nDisallow: /\n"
    second = record(fetched_at=2_000.0, body=second_body)
    store.save(first, BODY)
    store.save(second, second_body)
    assert store.at(SITE, 999.0) is None
    assert store.at(SITE, 1_000.0) == (first, BODY)
    assert store.at(SITE, 1_999.5) == (first, BODY)
    assert store.at(SITE, 2_000.0) == (second, second_body)
    assert store.at(SITE, 1e12) == (second, second_body)


def test_2_4_save_records_the_body_it_kept(store: RedisStore) -> None:
    """The digest and size saved are those of the body given, whatever the record said."""
    store.save(record(sha256="0" * 64, size=3), BODY)
    found = store.current(SITE)
    assert found is not None
    assert found[0].sha256 == hashlib.sha256(BODY).hexdigest()
    assert found[0].size == len(BODY)
    assert found[1] == BODY


# -- the key prefix ----------------------------------------------------------------------


def test_prefix_keeps_projects_apart(redis_server: RedisServer, prefix: str) -> None:
    one = RedisStore(redis_server.url, prefix=f"{prefix}one:")
    two = RedisStore(redis_server.url, prefix=f"{prefix}two:")
    try:
        one.save(record(), BODY)
        assert two.current(SITE) is None
        assert two.history(SITE) == []
        assert one.acquire(SITE, "a", 30)
        assert two.acquire(SITE, "b", 30)
        keys = {key.decode() for key in raw_client(redis_server).scan_iter(f"{prefix}*")}
        assert keys and all(
            name.startswith(f"{prefix}one:") for name in keys - {key(f"{prefix}two:", "lease")}
        )
        assert key(f"{prefix}one:", "current") in keys
        assert key(f"{prefix}one:", "archive") in keys
    finally:
        one.close()
        two.close()


def test_default_prefix(redis_server: RedisServer) -> None:
    store = open_redis_store(redis_server.url)
    try:
        assert store.prefix == DEFAULT_PREFIX == "robotstxt:"
        site = f"http://{uuid.uuid4().hex}.test:80"
        store.save(record(site=site), BODY)
        assert raw_client(redis_server).exists(key("robotstxt:", "current", site))
    finally:
        store.close()


# -- the lease ---------------------------------------------------------------------------


def test_lease_one_holder_at_a_time(store: RedisStore) -> None:
    assert store.acquire(SITE, "a", 30)
    assert not store.acquire(SITE, "b", 30)
    assert store.acquire(SITE, "a", 30)  # its own: renewed
    store.release(SITE, "b")  # not b's: no effect
    assert not store.acquire(SITE, "b", 30)
    store.release(SITE, "a")
    assert store.acquire(SITE, "b", 30)
    assert not store.acquire(SITE, "a", 30)


def test_lease_taken_over_when_expired(store: RedisStore, redis_server: RedisServer) -> None:
    """A holder that died (never released) loses the lease when it expires (Redis's
    own expiry of the key: waited for until Redis says the key is gone)."""
    assert store.acquire(SITE, "dead", 0.2)
    assert not store.acquire(SITE, "b", 30)
    lease, client = key(store.prefix, "lease"), raw_client(redis_server)
    until(lambda: client.pttl(lease) == -2, 5, "Redis to expire the lease")
    assert store.acquire(SITE, "b", 30)
    store.release(SITE, "dead")  # the late holder cannot free b's lease
    assert not store.acquire(SITE, "c", 30)


def test_lease_renewal_extends_it(store: RedisStore, redis_server: RedisServer) -> None:
    assert store.acquire(SITE, "a", 0.5)
    assert store.acquire(SITE, "a", 60)
    ttl = raw_client(redis_server).pttl(key(store.prefix, "lease"))
    assert 50_000 < ttl <= 60_000


def test_lease_is_atomic_across_clients(redis_server: RedisServer, prefix: str) -> None:
    """Twelve clients (own connections) race for one site: exactly one wins."""
    stores = [RedisStore(redis_server.url, prefix=prefix) for _ in range(12)]
    start = threading.Barrier(len(stores))
    won: list[str] = []

    def race(number: int) -> None:
        start.wait()
        if stores[number].acquire(SITE, f"holder-{number}", 30):
            won.append(f"holder-{number}")

    threads = [threading.Thread(target=race, args=(n,)) for n in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for opened in stores:
        opened.close()
    assert len(won) == 1


# -- hostile store contents --------------------------------------------------------------


def test_hostile_record_is_ignored(
    store: RedisStore, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    client = raw_client(redis_server)
    for garbage in (b"\xff\xfe not json", b"[1, 2]", b'{"site": 1}', b"9" * 10_000):
        client.set(key(store.prefix, "current"), garbage)
        with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
            assert store.current(SITE) is None
    assert "does not decode" in caplog.text
    # a record of another site under this site's key is not this site's
    other = record(site="http://other.test:80")
    store.save(other, BODY)
    current = client.get(key(store.prefix, "current", other.site))
    assert current is not None
    client.set(key(store.prefix, "current"), current)
    assert store.current(SITE) is None


def test_hostile_body_is_ignored(
    store: RedisStore, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    client = raw_client(redis_server)
    store.save(record(), BODY)
    bodies, sha = key(store.prefix, "bodies"), hashlib.sha256(BODY).hexdigest()
    bomb = zlib.compress(b"x" * 50_000_000, 9)  # 50 MB behind a 50 KB value
    cases = [b"not zlib", zlib.compress(b"User-agent: *\nDisallow:\n"), bomb]
    with caplog.at_level(logging.WARNING, logger="scrapy_rfc9309.store"):
        for damaged in cases:
            client.hset(bodies, sha, damaged)
            assert store.current(SITE) is None
            assert store.at(SITE, 1e12) is None
        client.delete(bodies)
        assert store.current(SITE) is None
    assert "does not decompress" in caplog.text
    assert "does not match its size and digest" in caplog.text
    assert "is missing" in caplog.text


def test_hostile_archive_entries_are_skipped(store: RedisStore, redis_server: RedisServer) -> None:
    good = record(fetched_at=1_000.0)
    store.save(good, BODY)
    raw_client(redis_server).zadd(
        f"{store.prefix}archive:{SITE}", {b"garbage": 1_500.0, b'{"x": 1}': 1_600.0}
    )
    assert store.history(SITE) == [good]
    assert store.at(SITE, 2_000.0) == (good, BODY)


# -- faults: StoreError, reconnection, start-up --------------------------------------------


def test_redis_lost_raises_store_error_then_reconnects(own_redis: RedisServer) -> None:
    store = RedisStore(own_redis.url, prefix="t:")
    try:
        store.save(record(), BODY)
        own_redis.stop(kill=True)
        calls = [
            lambda: store.current(SITE),
            lambda: store.save(record(fetched_at=2_000.0), BODY),
            lambda: store.history(SITE),
            lambda: store.at(SITE, 1e12),
            lambda: store.acquire(SITE, "a", 30),
            lambda: store.release(SITE, "a"),
        ]
        for call in calls:
            started = time.monotonic()
            with pytest.raises(StoreError, match=r"Redis at redis://127\.0\.0\.1:\d+/0: "):
                call()
            assert time.monotonic() - started < 3
        own_redis.start()  # same port, empty (no persistence)
        assert store.current(SITE) is None
        store.save(record(), BODY)
        assert store.current(SITE) == (record(), BODY)
        assert store.acquire(SITE, "a", 30)
    finally:
        store.close()


def test_redis_that_never_answers_times_out() -> None:
    """A Redis that accepts connections but hangs fails the call within the timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    try:
        started = time.monotonic()
        with pytest.raises(StoreError, match="cannot reach Redis"):
            RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.5)
        assert time.monotonic() - started < 5
    finally:
        listener.close()


def test_unreachable_at_start_up_is_a_store_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StoreError, match=rf"cannot reach Redis at redis://127\.0\.0\.1:{port}/3"):
        open_store(f"redis://127.0.0.1:{port}/3", data_dir=str(tmp_path))


def test_open_store_dispatches_redis_uris(redis_server: RedisServer, tmp_path: Path) -> None:
    for uri, url in ((redis_server.url, None), ("redis", redis_server.url)):
        opened = open_store(uri, data_dir=str(tmp_path), redis_url=url)
        try:
            assert isinstance(opened, RedisStore)
            assert opened.uri == redis_server.url
        finally:
            opened.close()


def test_uri_for_logs_has_no_credentials() -> None:
    assert public_uri("redis://user:secret@h.example:6380/2?password=x") == (
        "redis://h.example:6380/2"
    )
    assert public_uri("rediss://:secret@[::1]:6379/0") == "rediss://[::1]:6379/0"
    assert "secret" not in public_uri("redis://:secret@h:notaport/0")


def test_bad_address_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        RedisStore("redis://:secret@127.0.0.1:notaport/0")
    assert "secret" not in str(caught.value)


# -- a cluster: crawler processes sharing one Redis ----------------------------------------

ROOT = Path(__file__).resolve().parent.parent
ROBOTS = b"User-agent: *\nDisallow: /private\n"
PAGES = [f"/page/{number}" for number in range(4)]


class CrawlerProc:
    """A crawler process (``tests/cluster_crawl.py``) and what it reported."""

    def __init__(self, directory: Path, name: str, urls: list[str], settings: dict[str, Any],
                 **config: Any) -> None:  # fmt: skip
        directory.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.log = directory / f"{name}.log"
        self.output = directory / f"{name}.json"
        self.ready = directory / f"{name}.ready"
        config_path = directory / f"{name}.config.json"
        config_path.write_text(
            json.dumps(
                {
                    "urls": urls,
                    "settings": {**settings, "LOG_FILE": str(self.log)},
                    "output": str(self.output),
                    "ready": str(self.ready),
                    **config,
                }
            )
        )
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.cluster_crawl", str(config_path)],
            cwd=directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(directory / f"{name}.stderr", "wb"),  # noqa: SIM115
        )

    async def finished(self, timeout: float = 90) -> dict[str, Any]:
        try:
            await until_async(
                lambda: self.process.poll() is not None, timeout, f"{self.name} to end"
            )
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        assert self.process.returncode == 0, self.log_text()[-3000:]
        log = self.log_text()
        assert SIGNAL_HANDLER_ERROR not in log, log[log.index(SIGNAL_HANDLER_ERROR) :][:3000]
        result: dict[str, Any] = json.loads(self.output.read_text())
        return result

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no clean-up, the lease is left in Redis
        self.process.wait()

    def log_text(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        stderr = self.log.with_suffix(".stderr")
        return text + (stderr.read_text(errors="replace") if stderr.exists() else "")


def cluster_settings(server: RedisServer, prefix: str, **more: Any) -> dict[str, Any]:
    return {
        **BASE_SETTINGS,
        "USER_AGENT": "ClusterBot/1.0 (+https://example.com/bot)",
        "ROBOTSTXT_STORE_URI": server.url,
        "ROBOTSTXT_STORE_PREFIX": prefix,
        **more,
    }


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_three_processes_download_each_robots_txt_once(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """Three crawler processes over the same three sites, at the same time: each
    site's robots.txt is downloaded once for all of them (the site's server log),
    the other two take it from Redis, and all three obey it."""
    mocks = [
        sites(routes={"/robots.txt": delayed(1.0, text(ROBOTS))}, default=text("page"))
        for _ in range(3)
    ]
    urls = [mock.url(path) for mock in mocks for path in [*PAGES, "/private"]]
    settings = cluster_settings(redis_server, prefix)
    procs = [
        CrawlerProc(tmp_path, f"crawler{n}", urls, settings, barrier=[str(tmp_path), 3])
        for n in range(3)
    ]
    results = [await proc.finished() for proc in procs]
    for mock in mocks:
        assert mock.count("/robots.txt") == 1
        assert mock.count("/private") == 0
        for path in PAGES:
            assert mock.count(path) == 3
    for result in results:
        assert sorted(result["fetched"]) == sorted(u for u in urls if not u.endswith("/private"))
        assert len(result["dropped"]) == 3
        assert result["stats"].get("log_count/ERROR", 0) == 0
    stats = [result["stats"] for result in results]
    assert sum(s.get("robotstxt/request_count", 0) for s in stats) == 3
    assert sum(s.get("robotstxt/store/loaded", 0) for s in stats) == 6
    assert sum(s.get("robotstxt/store/saved", 0) for s in stats) == 3
    # at the same time: some waited for the download of another
    assert sum(s.get("robotstxt/store/waited", 0) for s in stats) >= 2


@deferred_f_from_coro_f
async def test_2_4_killed_fetcher_lease_taken_over_at_once(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """The process fetching a site's robots.txt is killed (SIGKILL) mid-download:
    the other, on the same host, sees that the lease holder's process is gone and
    takes the fetch over at once (compare-and-swap on the holder), not when the
    dead process's lease (DOWNLOAD_TIMEOUT + the margin) expires."""
    mock = sites(routes={"/robots.txt": sequence(hang(), text(ROBOTS))}, default=text("page"))
    urls = [mock.url(path) for path in [*PAGES, "/private"]]
    settings = cluster_settings(redis_server, prefix, DOWNLOAD_TIMEOUT=30)
    # Both processes start at once, then wait at their gate: the first is let
    # go, then, once its robots.txt download has begun, the second.
    gates = {name: tmp_path / f"gate-{name}" for name in ("first", "second")}
    procs = {
        name: CrawlerProc(tmp_path, name, urls, settings, lease_margin=0, barrier=[str(gate), 1])
        for name, gate in gates.items()
    }
    first, second = procs["first"], procs["second"]
    await until_async(lambda: first.ready.exists() and second.ready.exists(), 60, "the crawlers")
    for gate in gates.values():
        gate.mkdir()
    (gates["first"] / "go.ready").touch()
    await until_async(lambda: mock.count("/robots.txt") == 1, 60, "the first robots.txt request")
    (gates["second"] / "go.ready").touch()
    await until_async(
        lambda: "is being fetched by another process" in second.log_text(),
        60,
        "the second crawler to find the lease held",
    )
    assert mock.count("/robots.txt") == 1  # the second waits: the first holds the lease
    first.kill()
    result = await second.finished()
    assert mock.count("/robots.txt") == 2
    # the second download soon after the kill, long before the first's lease (30 s)
    first_at = mock.hit_times[_nth(mock.hits, "/robots.txt", 1)]
    assert mock.hit_times[_nth(mock.hits, "/robots.txt", 2)] - first_at < 15
    assert sorted(result["fetched"]) == sorted(u for u in urls if not u.endswith("/private"))
    assert list(result["dropped"]) == [mock.url("/private")]
    assert result["stats"]["robotstxt/store/waited"] == 1
    assert result["stats"]["robotstxt/request_count"] == 1


def _nth(items: list[str], value: str, n: int) -> int:
    """The index of the ``n``-th ``value`` in ``items`` (1-based)."""
    return [index for index, item in enumerate(items) if item == value][n - 1]


@deferred_f_from_coro_f
async def test_2_4_redis_lost_mid_crawl_falls_back_then_reconnects(
    sites: Any, own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis stops mid-crawl: one ERROR line and the stat, the sites met meanwhile are
    fetched locally (no request lost); Redis back and the store's retry delay
    over (the crawl's clock moved on past it, not waited for), the store is
    used again."""
    from scrapy_rfc9309.components.store import _store_bridge

    clock = SkippingClock()

    def stop_redis(request: Any) -> bytes:
        own_redis.stop(kill=True)
        return b"redis stopped"

    control = sites(
        routes={
            "/robots.txt": text(ROBOTS),
            # once the first site's record is saved (its write runs on the worker)
            "/stop": delayed(0.5, stop_redis),
            # the same port, empty; the crawl's clock past the store's retry delay
            "/start": skipping(
                clock,
                _store_bridge.RETRY_SECONDS,
                then=own_redis.start,
                route=text("redis started"),
                after=0.1,
            ),
        },
        default=text("page"),
    )
    during = [sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page")) for _ in range(2)]
    after = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    during_urls = [mock.url(path) for mock in during for path in [*PAGES, "/private"]]
    after_urls = [after.url(path) for path in [*PAGES, "/private"]]
    followups = {
        control.url("/page/0"): [control.url("/stop")],
        control.url("/stop"): [*during_urls, control.url("/start")],
        control.url("/start"): after_urls,
    }
    prefix = "lost:"
    settings = {
        "ROBOTSTXT_STORE_URI": own_redis.url,
        "ROBOTSTXT_STORE_PREFIX": prefix,
        # one request at a time, in the order sent: the phases do not overlap
        "CONCURRENT_REQUESTS": 1,
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(
            [control.url("/page/0")], settings, allow_errors=True, followups=followups, clock=clock
        )
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert errors[0].name == "scrapy_rfc9309.store"
    assert own_redis.url in errors[0].getMessage()
    assert f"robots.txt store {own_redis.url} works again" in caplog.text
    expected = [control.url("/page/0"), control.url("/stop"), control.url("/start")]
    expected += [url for url in during_urls + after_urls if not url.endswith("/private")]
    assert sorted(spider.fetched) == sorted(expected)
    assert sorted(spider.dropped) == sorted(u for u in during_urls + after_urls if "private" in u)
    for mock in [*during, after]:
        assert mock.count("/robots.txt") == 1
    assert stats["log_count/ERROR"] == 1
    assert stats["robotstxt/store/errors"] >= 1
    # saved before Redis stopped (lost with it: no persistence), and after it came back
    client = redis.Redis.from_url(own_redis.url)
    assert client.exists(key(prefix, "current", after.origin))
    for mock in during:
        assert not client.exists(key(prefix, "current", mock.origin))
    assert stats["robotstxt/store/saved"] == 2


@deferred_f_from_coro_f
async def test_redis_unreachable_at_start_up_stops_the_crawl(sites: Any) -> None:
    """No Redis at the address: the crawl does not start, and says why, naming the setting."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    mock = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    with pytest.raises(SettingError) as caught:
        await crawl(
            [mock.url("/page/0")], {"ROBOTSTXT_STORE_URI": f"redis://:pw@127.0.0.1:{port}/0"}
        )
    message = str(caught.value)
    assert "ROBOTSTXT_STORE_URI" in message
    assert f"cannot reach Redis at redis://127.0.0.1:{port}/0" in message
    assert "pw" not in message
    assert mock.hits == []


@deferred_f_from_coro_f
async def test_2_4_record_saved_between_look_up_and_lease_is_used(
    sites: Any, redis_server: RedisServer, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process saves the site's robots.txt and gives its lease up just after
    this one found no record, just before it takes the lease: the record is used,
    not downloaded a second time."""
    from scrapy_rfc9309.sites import _redis_store

    mock = sites(routes={"/robots.txt": text("User-agent: *\nAllow: /\n")}, default=text("page"))
    site = mock.origin
    other = RedisStore(redis_server.url, prefix=prefix)

    class Racing(RedisStore):
        def _acquire_many(self, sites_: Any, holder: str, seconds: float) -> dict[str, bool]:
            if site in sites_ and not other.history(site):  # the other process, just in time
                assert other.acquire(site, "other", 30)
                now = time.time()
                other.save(
                    record(fetched_at=now, site=site, expires_at=now + 3600, body=ROBOTS), ROBOTS
                )
                other.release(site, "other")
            return super()._acquire_many(sites_, holder, seconds)

    monkeypatch.setattr(
        _redis_store, "open_redis_store", lambda url, prefix: Racing(url, prefix=prefix)
    )
    settings = {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix}
    try:
        spider, stats = await crawl([mock.url("/page/0"), mock.url("/private")], settings)
    finally:
        other.close()
    assert mock.count("/robots.txt") == 0
    assert spider.fetched == [mock.url("/page/0")]  # the other process's robots.txt obeyed
    assert list(spider.dropped) == [mock.url("/private")]
    assert stats["robotstxt/store/loaded"] == 1


@deferred_f_from_coro_f
async def test_2_4_archive_in_redis_read_by_the_command(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    """``scrapy robotstxt history`` and ``--at`` read what a crawl stored in Redis,
    under the project's ROBOTSTXT_STORE_PREFIX, without downloading anything."""
    from .test_command import scrapy

    mock = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    settings = {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix}
    await crawl([mock.url("/page/0")], settings)
    options = ["-s", f"ROBOTSTXT_STORE_URI={redis_server.url}"]
    options += ["-s", f"ROBOTSTXT_STORE_PREFIX={prefix}"]
    output, code = await scrapy("history", mock.url("/"), "--json", *options, cwd=tmp_path)
    assert code == 0, output
    entries = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [entry["sha256"] for entry in entries] == [hashlib.sha256(ROBOTS).hexdigest()]
    output, code = await scrapy(
        mock.url("/private"), "--at", str(time.time()), *options, cwd=tmp_path
    )
    assert code == 1, output
    assert 'DISALLOWED by line 2: "Disallow: /private"' in output
    # another project's prefix: nothing stored there
    output, code = await scrapy(
        "history", mock.url("/"), "-s", f"ROBOTSTXT_STORE_URI={redis_server.url}", cwd=tmp_path
    )
    assert hashlib.sha256(ROBOTS).hexdigest()[:12] not in output
    assert mock.count("/robots.txt") == 1
    # the site changed its file: a live answer names the copy a crawl obeys now
    mock.routes["/robots.txt"] = text("User-agent: *\nAllow: /\n")
    output, code = await scrapy(mock.url("/private"), "--json", *options, cwd=tmp_path)
    assert code == 0, output
    (answer,) = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    copy = answer["store_copy"]
    assert (copy["sha256"], copy["verdict"]) == (hashlib.sha256(ROBOTS).hexdigest(), "disallowed")
    assert mock.count("/robots.txt") == 2


@deferred_f_from_coro_f
async def test_2_4_a_restarted_crawl_keeps_the_copy_in_redis_while_unreachable(
    sites: Any, redis_server: RedisServer, prefix: str, tmp_path: Path, caplog: Any
) -> None:
    """RFC 9309 2.4, as with SQLite: the copy Redis kept stays in force while the
    robots.txt is unreachable, and the archive says so."""
    from .test_store import check_stored_copy_kept_while_unreachable

    settings = {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix}
    options = ["-s", f"ROBOTSTXT_STORE_URI={redis_server.url}"]
    options += ["-s", f"ROBOTSTXT_STORE_PREFIX={prefix}"]
    await check_stored_copy_kept_while_unreachable(sites, tmp_path, caplog, settings, options)


@deferred_f_from_coro_f
async def test_2_5_redis_a_body_cut_at_a_smaller_size_is_fetched_again(
    sites: Any, redis_server: RedisServer, prefix: str
) -> None:
    """RFC 9309 2.5, as with SQLite: a record is read with the reader's size limit."""
    from .test_store_readers import (
        check_a_body_cut_shorter_than_the_readers_limit_is_fetched_again,
    )

    settings = {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix}
    await check_a_body_cut_shorter_than_the_readers_limit_is_fetched_again(sites, settings)


@deferred_f_from_coro_f
async def test_2_3_1_3_redis_a_stored_403_follows_the_readers_auth_disallow(
    sites: Any, redis_server: RedisServer, prefix: str
) -> None:
    """As with SQLite: a stored 403 is restricted for a reader with ``ROBOTSTXT_AUTH_DISALLOW``."""
    from .test_store_readers import check_a_stored_403_follows_the_readers_auth_disallow

    settings = {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix}
    await check_a_stored_403_follows_the_readers_auth_disallow(sites, settings)


# -- settings and the test fixture itself ---------------------------------------------------


def test_store_prefix_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._store_settings import StoreSettings

    monkeypatch.chdir(tmp_path)
    uri = {"ROBOTSTXT_STORE_URI": "redis://127.0.0.1:1/0"}
    assert StoreSettings.from_settings(Settings(uri)).redis_prefix == "robotstxt:"
    chosen = Settings({**uri, "ROBOTSTXT_STORE_PREFIX": "shop:robots:"})
    assert StoreSettings.from_settings(chosen).redis_prefix == "shop:robots:"
    with pytest.raises(SettingError, match="ROBOTSTXT_STORE_PREFIX must be a string"):
        StoreSettings.from_settings(Settings({**uri, "ROBOTSTXT_STORE_PREFIX": 5}))


def test_missing_redis_server_skips_locally_and_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("tests.redis_server.shutil.which", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="redis-server is not installed"):
        require_redis_server()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the Redis store tests"):
        require_redis_server()


@deferred_f_from_coro_f
async def test_2_4_redis_that_hangs_mid_crawl_times_out_and_falls_back(
    sites: Any, own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis stops answering (SIGSTOP) mid-crawl: the store call fails after the
    timeout set in the URI (``?socket_timeout=``), and the site is fetched locally."""
    import signal

    def freeze(request: Any) -> bytes:
        assert own_redis.process is not None
        own_redis.process.send_signal(signal.SIGSTOP)
        return b"redis frozen"

    control = sites(routes={"/robots.txt": text(ROBOTS), "/freeze": freeze}, default=text("page"))
    other = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    followups = {
        control.url("/page/0"): [control.url("/freeze")],
        control.url("/freeze"): [other.url("/page/0"), other.url("/private")],
    }
    uri = f"{own_redis.url}?socket_timeout=0.5&socket_connect_timeout=0.5"
    try:
        started = time.monotonic()
        with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.store"):
            spider, stats = await crawl(
                [control.url("/page/0")],
                {"ROBOTSTXT_STORE_URI": uri, "CONCURRENT_REQUESTS": 1},
                allow_errors=True,
                followups=followups,
            )
        elapsed = time.monotonic() - started
    finally:
        assert own_redis.process is not None
        own_redis.process.send_signal(signal.SIGCONT)
    assert sorted(spider.fetched) == sorted(
        [control.url("/page/0"), control.url("/freeze"), other.url("/page/0")]
    )
    assert list(spider.dropped) == [other.url("/private")]
    assert other.count("/robots.txt") == 1
    assert stats["log_count/ERROR"] == 1
    assert stats["robotstxt/store/errors"] >= 1
    assert "Timeout" in caplog.text or "timed out" in caplog.text
    assert elapsed < 4  # not the default 5 s timeout


@deferred_f_from_coro_f
async def test_2_4_redis_frozen_sites_met_meanwhile_fetched_within_one_timeout(
    sites: Any, own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis frozen (SIGSTOP): the first store call pays the timeout and declares the
    outage; the look-ups queued behind it fail at once instead of each paying the
    timeout in turn, so all the sites met meanwhile are fetched within about one
    timeout (RFC 9309 2.4: the crawl goes on from its own downloads)."""
    frozen_at: list[float] = []

    def freeze(request: Any) -> bytes:
        own_redis.freeze()
        frozen_at.append(time.monotonic())
        return b"redis frozen"

    control = sites(routes={"/robots.txt": text(ROBOTS), "/freeze": freeze}, default=text("page"))
    during = [sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page")) for _ in range(5)]
    followups = {
        control.url("/page/0"): [control.url("/freeze")],
        control.url("/freeze"): [mock.url("/page/0") for mock in during],
    }
    timeout = 1.0
    uri = f"{own_redis.url}?socket_timeout={timeout}&socket_connect_timeout={timeout}"
    try:
        with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.store"):
            spider, stats = await crawl(
                [control.url("/page/0")],
                {"ROBOTSTXT_STORE_URI": uri},
                allow_errors=True,
                followups=followups,
            )
        ended = time.monotonic()
    finally:
        own_redis.thaw()
    assert sorted(spider.fetched) == sorted(
        [control.url("/page/0"), control.url("/freeze")] + [m.url("/page/0") for m in during]
    )
    for mock in during:
        assert mock.count("/robots.txt") == 1
    assert stats["log_count/ERROR"] == 1
    # five sites, each paying the timeout in turn, would take 5 s
    assert ended - frozen_at[0] < 2.5 * timeout
    # the outage's follow-up lines say what failed
    assert "still failing (saving a record): \n" not in caplog.text


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_redis_frozen_at_close_the_wait_is_bounded_in_total(
    sites: Any, own_redis: RedisServer, tmp_path: Path
) -> None:
    """Redis frozen (SIGSTOP) while records are being saved, with a store timeout far
    longer than the close wait: the process exits once the close wait is over (not
    after each write's timeout), with one ERROR saying how many records were not
    saved."""

    def freeze(request: Any) -> bytes:
        own_redis.freeze()
        return b"redis frozen"

    # looked up and leased before the freeze; their robots.txt arrive after it, and
    # their records are then saved into a frozen Redis
    control = sites(
        # once the control site's own record is saved
        routes={"/robots.txt": text(ROBOTS), "/freeze": delayed(0.5, freeze)},
        default=text("page"),
    )
    mocks = [
        sites(routes={"/robots.txt": delayed(1.0, text(ROBOTS))}, default=text("page"))
        for _ in range(3)
    ]
    urls = [control.url("/freeze")] + [mock.url("/page/0") for mock in mocks]
    uri = f"{own_redis.url}?socket_timeout=30&socket_connect_timeout=30"
    settings = {
        **BASE_SETTINGS,
        "ROBOTSTXT_STORE_URI": uri,
        "ROBOTSTXT_STORE_PREFIX": "frozen:",
    }
    close_wait = 1.0
    try:
        started = time.monotonic()
        proc = CrawlerProc(tmp_path, "frozen", urls, settings, close_wait_seconds=close_wait)
        result = await proc.finished(timeout=60)
        elapsed = time.monotonic() - started
    finally:
        own_redis.thaw()
    log = proc.log_text()
    assert sorted(result["fetched"]) == sorted(urls), log[-3000:]
    assert "records not saved" in log, log[-3000:]
    errors = [line for line in log.splitlines() if "] ERROR: " in line]
    assert len(errors) == 1, errors
    assert "did not answer within 1 s at close: 3 records not saved" in errors[0]
    # one store call hangs 30 s; the close gives up after 1 s and the process ends
    assert elapsed < 20, log[-3000:]


def test_wrong_or_missing_password_is_not_called_unreachable(tmp_path: Path) -> None:
    """Redis answers but refuses the credentials: said so, not "cannot reach"."""
    require_redis_server()
    server = RedisServer(tmp_path / "auth", extra_args=("--requirepass", "s3cret"))
    with server:
        for url in [server.url, server.url.replace("redis://", "redis://:wrong@")]:
            with pytest.raises(StoreError) as caught:
                RedisStore(url, prefix="auth:")
            message = str(caught.value)
            assert "refused the credentials" in message, message
            assert "cannot reach" not in message
            assert "wrong" not in message  # the password is never shown
        RedisStore(server.url.replace("redis://", "redis://:s3cret@"), prefix="auth:").close()


@deferred_f_from_coro_f
async def test_http_guide_ch9_a_deferral_retry_downloads_never_reads_back_its_503(
    sites: Any, redis_server: RedisServer, prefix: str
) -> None:
    """HTTP: The Definitive Guide ch. 9 with a Redis store: the 503 saved there
    is no answer to the deferral's own retry; each retry downloads, and the
    pages are fetched once the robots.txt is back (not dropped after
    ROBOTSTXT_UNREACHABLE_DEFER)."""
    clock = SkippingClock(eager=5)  # the back-offs (1 s, 2 s) without the wait
    many = [
        sites(
            routes={"/robots.txt": unreachable_for(1.5, text(BODY), now=clock.monotonic)},
            default=text("page"),
        )
        for _ in range(5)
    ]
    urls = [site.url(f"/p{page}") for site in many for page in range(2)]
    settings = {
        "ROBOTSTXT_STORE_URI": redis_server.url,
        "ROBOTSTXT_STORE_PREFIX": prefix,
        "SCHEDULER_PRIORITY_QUEUE": "scrapy_rfc9309.RobotsTxtPriorityQueue",
        "ROBOTSTXT_UNREACHABLE_DEFER": 30,
    }
    started = clock.monotonic()
    spider, stats = await crawl(urls, settings, clock=clock)
    assert sorted(spider.fetched) == sorted(urls)
    assert clock.monotonic() - started < 15  # not the 30 s of ROBOTSTXT_UNREACHABLE_DEFER
    assert stats["robotstxt/deferred/recovered"] == 5
    assert "robotstxt/forbidden/unreachable" not in stats


@deferred_f_from_coro_f
async def test_redis_out_of_memory_error_line_is_printable_and_bounded(
    sites: Any, own_redis: RedisServer, caplog: Any
) -> None:
    """Redis refusing a save (``maxmemory`` reached) quotes the failed pipeline
    command with its arguments, a compressed body among them: the ERROR line
    names the exception class, escapes what is not printable, and stays short.
    The crawl goes on from memory (RFC 9309 2.4: the rules still obeyed)."""
    robots = text(BODY)

    def full_once_leased(request: Any) -> Any:  # the lease is taken: the save is refused
        raw_client(own_redis).config_set("maxmemory", 1)
        return robots(request)

    mock = sites(routes={"/robots.txt": full_once_leased}, default=text("page"))
    settings = {"ROBOTSTXT_STORE_URI": own_redis.url, "ROBOTSTXT_STORE_PREFIX": "oom:"}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.store"):
        spider, stats = await crawl(
            [mock.url("/page"), mock.url("/private/x")], settings, allow_errors=True
        )
    assert spider.fetched == [mock.url("/page")]
    [error] = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "OutOfMemoryError: " in error or "ResponseError: " in error
    assert "maxmemory" in error  # the server's own words, at the end, are kept
    # the save is one Lua script (the body among its arguments): its line is named
    assert "saving a record" in error and "user_script" in error
    assert error.isprintable()
    assert len(error) < 700
    assert stats["robotstxt/store/errors"] >= 1


def test_closing_a_watched_store_logs_no_lost_messages(
    redis_server: RedisServer, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """At close the release-message listener's connection goes on purpose: no
    "no more release messages (I/O operation on closed file.)" line."""
    watched = RedisStore(redis_server.url, prefix=prefix)
    assert watched.watch(lambda site: None)
    thread = watched._listener
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309.store"):
        watched.close()
        thread.join(5)  # the listener wakes within its 1 s poll and ends
    assert not thread.is_alive()
    assert not [r for r in caplog.records if "no more release messages" in r.getMessage()]

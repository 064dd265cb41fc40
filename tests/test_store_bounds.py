"""A bounded robots.txt store (RFC 9309 2.4: a cached copy is used within its
lifetime; past it the store need not keep it): ``ROBOTSTXT_STORE_ARCHIVE``,
current records that expire by themselves, Redis keys hash-tagged per site
(Redis Cluster), pipelined calls and release messages (pub/sub).
"""

from __future__ import annotations

import hashlib
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.components.settings._store_settings import StoreSettings
from scrapy_rfc9309.components.store import _store_bridge
from scrapy_rfc9309.sites._redis_store import EXPIRY_GRACE, RedisStore
from scrapy_rfc9309.sites._sqlite_store import SQLiteStore

from .conftest import crawl
from .records import SITE, fetch_record
from .redis_server import RedisServer, require_redis_server
from .server import text
from .waiting import until

HOUR = 3600.0


def bodies(count: int) -> list[bytes]:
    return [f"User-agent: *\nDisallow: /v{n}\n".encode() for n in range(count)]


def key(prefix: str, kind: str, site: str = SITE) -> str:
    return f"{prefix}{kind}:{{{site}}}"


# -- the setting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("all", None), ("ALL", None), ("off", 0), (3, 3), ("12", 12)],
)
def test_store_archive_setting(value: Any, expected: int | None) -> None:
    settings = Settings({"ROBOTSTXT_STORE_URI": "sqlite:///x.db"})
    if value is not None:
        settings.set("ROBOTSTXT_STORE_ARCHIVE", value)
    assert StoreSettings.from_settings(settings).archive == expected


@pytest.mark.parametrize("value", [0, -1, "none", 2.5, True, "", [3]])
def test_store_archive_setting_refused_at_start_up(value: Any) -> None:
    settings = Settings({"ROBOTSTXT_STORE_URI": "sqlite:///x.db", "ROBOTSTXT_STORE_ARCHIVE": value})
    with pytest.raises(SettingError, match="ROBOTSTXT_STORE_ARCHIVE"):
        StoreSettings.from_settings(settings)


# -- SQLite ----------------------------------------------------------------------------------


def test_2_4_sqlite_keeps_the_last_n_records_per_site(tmp_path: Path) -> None:
    now = time.time()
    store = SQLiteStore(str(tmp_path / "r.db"), archive=2)
    try:
        for number, body in enumerate(bodies(5)):
            store.save(fetch_record(now + number, body), body)
        store.save(fetch_record(now, bodies(1)[0], site="http://other.test:80"), bodies(1)[0])
        assert [r.fetched_at for r in store.history(SITE)] == [now + 4, now + 3]
        assert len(store.history("http://other.test:80")) == 1
        kept = {row[0] for row in store._db.execute("SELECT sha256 FROM bodies")}
        # v0 stays: the other site's record names it
        assert kept == {hashlib.sha256(b).hexdigest() for b in [*bodies(5)[3:], bodies(1)[0]]}
    finally:
        store.close()


def test_2_4_sqlite_archive_off_keeps_the_current_record_only(tmp_path: Path) -> None:
    now = time.time()
    store = SQLiteStore(str(tmp_path / "r.db"), archive=0)
    try:
        for number, body in enumerate(bodies(3)):
            store.save(fetch_record(now + number, body), body)
        assert [r.fetched_at for r in store.history(SITE)] == [now + 2]
        assert store.current(SITE) == (fetch_record(now + 2, bodies(3)[2]), bodies(3)[2])
        assert store._db.execute("SELECT COUNT(*) FROM bodies").fetchone() == (1,)
    finally:
        store.close()


def test_2_4_sqlite_expired_current_records_pruned_at_open(tmp_path: Path) -> None:
    """A current record past its lifetime by more than a day goes when the store
    opens (the archive keeps it, as ``ROBOTSTXT_STORE_ARCHIVE`` says)."""
    path = str(tmp_path / "r.db")
    now = time.time()
    store = SQLiteStore(path)
    old, fresh = bodies(2)
    store.save(fetch_record(now - 3 * 86_400, old), old)  # expired two days ago
    store.save(fetch_record(now, fresh, site="http://fresh.test:80"), fresh)
    store.close()
    store = SQLiteStore(path)
    try:
        assert store.current(SITE) is None
        assert len(store.history(SITE)) == 1  # the archive ("all") keeps it
        assert store.current("http://fresh.test:80") is not None
    finally:
        store.close()
    store = SQLiteStore(path, archive=0)  # archive off: the record and its body go
    try:
        assert store.history(SITE) == []
        assert store._db.execute("SELECT COUNT(*) FROM bodies").fetchone() == (1,)
        assert store.prune() == {"current": 0, "archive": 0, "tdmrep": 0, "bodies": 0}
    finally:
        store.close()


# -- Redis -----------------------------------------------------------------------------------


def test_2_4_redis_keeps_the_last_n_records_and_their_bodies(
    redis_server: RedisServer, prefix: str
) -> None:
    now = time.time()
    store = RedisStore(redis_server.url, prefix=prefix, archive=2)
    client = redis.Redis.from_url(redis_server.url)
    try:
        for number, body in enumerate(bodies(5)):
            store.save(fetch_record(now + number, body), body)
        assert [r.fetched_at for r in store.history(SITE)] == [now + 4, now + 3]
        shas = {
            f.decode() if isinstance(f, bytes) else f for f in client.hkeys(key(prefix, "bodies"))
        }
        assert shas == {hashlib.sha256(b).hexdigest() for b in bodies(5)[3:]}
        assert client.pttl(key(prefix, "bodies")) == -1  # the archive needs them
    finally:
        store.close()


def test_2_4_redis_archive_off_and_current_records_expire(
    redis_server: RedisServer, prefix: str
) -> None:
    """Without an archive, the current record and its body expire a day after the
    record's lifetime; ``history`` and ``at`` answer with the current record."""
    now = time.time()
    store = RedisStore(redis_server.url, prefix=prefix, archive=0)
    client = redis.Redis.from_url(redis_server.url)
    try:
        for number, body in enumerate(bodies(3)):
            store.save(fetch_record(now + number, body, expires_in=HOUR), body)
        assert not client.exists(key(prefix, "archive"))
        assert [r.fetched_at for r in store.history(SITE)] == [now + 2]
        kept = fetch_record(now + 2, bodies(3)[2], expires_in=HOUR)
        assert store.at(SITE, now + 10) == (kept, bodies(3)[2])
        assert store.at(SITE, now) is None
        expected = (HOUR + EXPIRY_GRACE) * 1000
        for name in ("current", "bodies"):
            assert expected - 60_000 < client.pttl(key(prefix, name)) <= expected + 10_000
        assert client.hlen(key(prefix, "bodies")) == 1
    finally:
        store.close()


def test_2_4_redis_reads_records_of_the_first_key_layout(
    redis_server: RedisServer, prefix: str
) -> None:
    """Keys written before the hash-tagged layout are still read (not written)."""
    now = time.time()
    body = bodies(1)[0]
    old = fetch_record(now - 10, body)
    client = redis.Redis.from_url(redis_server.url)
    from scrapy_rfc9309.sites._redis_records import encode_record as _encode

    client.set(f"{prefix}current:{SITE}", _encode(old))
    client.zadd(f"{prefix}archive:{SITE}", {_encode(old): old.fetched_at})
    client.set(f"{prefix}body:{old.sha256}", zlib.compress(body))
    store = RedisStore(redis_server.url, prefix=prefix)
    try:
        assert store.current(SITE) == (old, body)
        found = store.look_many([SITE], "me", 30, lambda r: True)
        assert found == {SITE: ("fresh", (old, body))}
        newer = fetch_record(now, body)
        store.save(newer, body)
        assert [r.fetched_at for r in store.history(SITE)] == [now, now - 10]
        assert store.current(SITE) == (newer, body)
    finally:
        store.close()


def test_2_4_redis_look_many_and_save_many_pipelined(
    redis_server: RedisServer, prefix: str
) -> None:
    now = time.time()
    store = RedisStore(redis_server.url, prefix=prefix)
    sites = [f"http://s{n}.test:80" for n in range(50)]
    body = bodies(1)[0]
    try:
        looked = store.look_many(sites, "me", 30, lambda r: True)
        assert {state for state, _ in looked.values()} == {"lease"}
        store.save_many([(fetch_record(now, body, site=s), body) for s in sites], sites, "me")
        looked = store.look_many(sites, "other", 30, lambda r: True)
        assert all(state == "fresh" for state, _ in looked.values())
        assert store.lease_of(sites[0]) is None  # given up with the save
    finally:
        store.close()


def _until_listening(url: str, store: RedisStore, heard: list[str]) -> None:
    """Until ``store``'s listener hears a message published through ``url`` (its
    subscription reached Redis; pub/sub delivery is Redis's, on its own time)."""
    client = redis.Redis.from_url(url)
    try:

        def heard_probe() -> bool:
            client.publish(store._keys.channel(PROBE), PROBE)
            return PROBE in heard

        until(heard_probe, 5, "the listener's subscription")
    finally:
        client.close()


#: the site a probe message names (``_until_listening``)
PROBE = "http://probe.test:80"


def test_2_4_redis_release_messages_reach_watchers(redis_server: RedisServer, prefix: str) -> None:
    """A save and a lease given up are published; another process's store hears them."""
    heard: list[str] = []
    event = threading.Event()
    listener = RedisStore(redis_server.url, prefix=prefix)
    writer = RedisStore(redis_server.url, prefix=prefix)

    def hear(site: str) -> None:
        heard.append(site)
        if site != PROBE:
            event.set()

    try:
        assert listener.watch(hear)
        _until_listening(redis_server.url, listener, heard)
        body = bodies(1)[0]
        writer.save(fetch_record(time.time(), body), body)
        assert event.wait(5)
        event.clear()
        assert writer.acquire("http://b.test:80", "w", 30)
        writer.release("http://b.test:80", "w")
        assert event.wait(5)
        assert [site for site in heard if site != PROBE] == [SITE, "http://b.test:80"]
    finally:
        listener.close()
        writer.close()


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_a_waiting_crawl_is_woken_by_the_release_message(
    sites: Any, redis_server: RedisServer, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the site's lease and saves its record 1 s later: the
    crawl waiting for it uses it at once, not at its next poll (30 s here)."""
    monkeypatch.setattr(_store_bridge, "POLL_SECONDS", 30.0)
    site = sites(routes={"/robots.txt": text(b"User-agent: *\nDisallow: /x\n")}, default=text("p"))
    from scrapy_rfc9309.sites._site import site_of

    name = site_of(site.origin + "/")
    assert name is not None
    other = RedisStore(redis_server.url, prefix=prefix)
    assert other.acquire(name, "elsewhere.example:1:cafe", 60)
    body = b"User-agent: *\nDisallow: /private\n"

    # the other process saves once this crawl waits for it (its first nap under
    # way: only the message can wake it), not after a fixed second that a slow
    # start-up may outlast
    waiting = threading.Event()
    from twisted.internet import reactor as _reactor

    from scrapy_rfc9309.components.store._store_wakeups import ReleaseWakeups

    reactor: Any = _reactor

    nap = ReleaseWakeups.nap

    async def noted_nap(self: Any, site_name: str, seconds: float) -> None:
        reactor.callLater(0, waiting.set)  # once the nap below is registered
        await nap(self, site_name, seconds)

    monkeypatch.setattr(ReleaseWakeups, "nap", noted_nap)

    def fetch_elsewhere() -> None:
        assert waiting.wait(15)
        other.save_many(
            [(fetch_record(time.time(), body, site=name), body)], [name], "elsewhere.example:1:cafe"
        )

    thread = threading.Thread(target=fetch_elsewhere)
    thread.start()
    started = time.monotonic()
    try:
        spider, stats = await crawl(
            [site.url("/a"), site.url("/private")],
            {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix},
        )
    finally:
        thread.join()
        other.close()
    assert time.monotonic() - started < 10
    assert site.count("/robots.txt") == 0
    assert spider.fetched == [site.url("/a")]
    assert stats["robotstxt/store/waited"] == 1


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_the_prune_subcommand(tmp_path: Path) -> None:
    """``scrapy robotstxt prune --store URI``: expired current records, archive
    records beyond ``ROBOTSTXT_STORE_ARCHIVE`` and unnamed bodies go."""
    from .test_command import scrapy

    path = tmp_path / "r.db"
    now = time.time()
    store = SQLiteStore(str(path))
    for number, body in enumerate(bodies(3)):
        store.save(fetch_record(now + number, body), body)
    old = bodies(4)[3]
    store.save(fetch_record(now - 3 * 86_400, old, site="http://old.test:80"), old)
    store.close()
    output, code = await scrapy(
        "prune", "--store", f"sqlite:///{path}", "-s", "ROBOTSTXT_STORE_ARCHIVE=1", cwd=tmp_path
    )
    assert code == 0, output
    assert "removed 1 expired current records, 2 archive records, 2 bodies" in output
    store = SQLiteStore(str(path), read_only=True)
    try:
        assert len(store.history(SITE)) == 1
        assert store.current("http://old.test:80") is None
    finally:
        store.close()


# -- Redis Cluster ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[RedisServer]]:
    """Three ``redis-server --cluster-enabled yes`` nodes on loopback ports, joined
    with ``redis-cli --cluster create`` (no replicas)."""
    import shutil
    import subprocess

    binary = require_redis_server()
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not installed")
    base = tmp_path_factory.mktemp("cluster")
    nodes: list[RedisServer] = []
    try:
        for number in range(3):
            args = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
            nodes.append(RedisServer(base / f"node{number}", binary, extra_args=args).start())
        created = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes),
             "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert created.returncode == 0, created.stdout + created.stderr
        # each node says the cluster is up only once gossip told it every slot:
        # a node asked before answers CLUSTERDOWN
        clients = [redis.Redis.from_url(node.url) for node in nodes]
        until(
            lambda: all(c.cluster("info").get("cluster_state") == "ok" for c in clients),
            20,
            "every node of the cluster",
        )
        for client in clients:
            client.close()
        yield nodes
    finally:
        for node in nodes:
            node.stop(kill=True)


@pytest.mark.slow
def test_2_4_the_store_on_redis_cluster(redis_cluster: list[RedisServer], prefix: str) -> None:
    """Every call touches one slot (the site's hash tag): saves, look-ups, the
    archive, leases, release messages and the cluster-wide delay all work on a
    three-node Redis Cluster, the sites spread over its nodes."""
    from scrapy_rfc9309.sites._cluster_clock import ClusterClock

    store = RedisStore(redis_cluster[0].url, prefix=prefix, archive=2)
    other = RedisStore(redis_cluster[1].url, prefix=prefix)
    clock = ClusterClock.open(redis_cluster[2].url, prefix)
    heard: list[str] = []
    try:
        assert store.cluster and other.cluster
        assert other.watch(heard.append)
        _until_listening(redis_cluster[0].url, other, heard)
        now = time.time()
        sites = [f"http://s{n}.test:80" for n in range(30)]
        looked = store.look_many(sites, "me", 30, lambda r: True)
        assert {state for state, _ in looked.values()} == {"lease"}
        assert not other.acquire(sites[0], "you", 30)
        for number, body in enumerate(bodies(3)):
            store.save_many(
                [(fetch_record(now + number, body, site=s), body) for s in sites], sites, "me"
            )
        looked = other.look_many(sites, "you", 30, lambda r: True)
        assert all(state == "fresh" for state, _ in looked.values())
        assert [r.fetched_at for r in other.history(sites[7])] == [now + 2, now + 1]
        assert other.at(sites[7], now + 1.5) == (
            fetch_record(now + 1, bodies(3)[1], site=sites[7]),
            bodies(3)[1],
        )
        assert clock.take(sites[3], 5) == 0.0 and clock.take(sites[3], 5) > 4
        counts = [redis.Redis.from_url(node.url).dbsize() for node in redis_cluster]
        assert all(counts), counts  # spread over the three nodes
        until(lambda: set(heard) >= set(sites), 5, "every site's release message")
        assert set(heard) - {PROBE} == set(sites)
    finally:
        store.close()
        other.close()
        clock.close()


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_2_4_crawls_share_a_redis_cluster_store(
    sites: Any, redis_cluster: list[RedisServer], prefix: str
) -> None:
    """A crawl saves to the cluster through one node; the next, through another
    node, loads it without a download, and keeps its Crawl-delay cluster-wide."""
    site = sites(
        routes={"/robots.txt": text(b"User-agent: *\nDisallow: /private\nCrawl-delay: 0.5\n")},
        default=text("page"),
    )
    urls = [site.url("/a"), site.url("/b"), site.url("/private")]
    for node in redis_cluster[:2]:
        spider, stats = await crawl(
            urls,
            {
                "ROBOTSTXT_STORE_URI": node.url,
                "ROBOTSTXT_STORE_PREFIX": prefix,
                "ROBOTSTXT_CRAWL_DELAY": True,
                "ADDONS": {"scrapy_rfc9309.Addon": 100},
                "DOWNLOADER_MIDDLEWARES": {},
            },
        )
        assert sorted(spider.fetched) == urls[:2]
    assert site.count("/robots.txt") == 1
    assert stats["robotstxt/store/loaded"] == 1
    assert stats.get("robotstxt/cluster_delay/waited", 0) >= 1

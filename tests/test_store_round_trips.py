"""A burst of sites goes to the robots.txt store in batches, not one site at a time.

RFC 9309 2.4 lets a crawler cache a robots.txt; with a store shared by a
cluster, every site the crawl meets is looked up (and its lease taken) and
every fetch saved. Sites met together (start requests, a queue fetching
ahead) are asked in one batch: with Redis, a few pipelined round trips for
the batch, whatever its size. Counted on a real ``redis-server``: by the
store's own connection (:class:`Counting`: each command or pipeline sent is
one round trip), or, for a crawl, with ``INFO stats``
``total_reads_processed`` (one per read of the server: a pipeline is one, or
a few when long).
"""

from __future__ import annotations

import time
from typing import Any

import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.sites._redis_store import RedisStore

from .conftest import crawl
from .records import fetch_record
from .redis_server import RedisServer
from .server import text


class Counting(redis.Connection):
    """A connection that counts what it sends: one command or one pipeline each
    time, then waits for the answer (a round trip)."""

    sent = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).sent += 1
        super().send_packed_command(command, check_health)


def counted_store(url: str, prefix: str) -> tuple[RedisStore, type[Counting]]:
    """A store whose round trips are counted (its own :class:`Counting` class)."""
    counter = type("Counter", (Counting,), {"sent": 0})
    pool = redis.ConnectionPool.from_url(url, connection_class=counter)
    return RedisStore(url, prefix=prefix, client=redis.Redis(connection_pool=pool)), counter


def reads(client: Any) -> int:
    """Requests the server has read so far (this call's own ``INFO`` counted)."""
    return int(client.info("stats")["total_reads_processed"])


def test_2_4_redis_look_many_takes_the_leases_of_a_burst_in_a_few_round_trips(
    redis_server: RedisServer, prefix: str
) -> None:
    """30 sites unknown to the store: their records read, their leases taken
    and their records read again in a few round trips, not three per site; a
    second look-up finds them fresh, and their saves are one round trip."""
    store, counter = counted_store(redis_server.url, prefix)
    sites = [f"http://s{n}.test:80" for n in range(30)]
    try:
        store.look_many(["http://warm.test:80"], "me", 30, lambda r: True)  # connection, scripts
        before = counter.sent
        looked = store.look_many(sites, "me", 30, lambda r: True)
        assert {state for state, _ in looked.values()} == {"lease"}
        assert counter.sent - before == 3  # records, leases, records again
        now = 1_700_000_000.0
        before = counter.sent
        store.save_many(
            [(fetch_record(now, b"User-agent: *\n", site=s), None) for s in sites], sites, "me"
        )
        assert counter.sent - before == 1
        before = counter.sent
        looked = store.look_many(sites, "other", 30, lambda r: True)
        assert all(state == "fresh" for state, _ in looked.values())
        assert counter.sent - before == 1
    finally:
        store.close()


def test_2_4_redis_leases_held_by_another_process_are_asked_in_one_round_trip(
    redis_server: RedisServer, prefix: str
) -> None:
    """20 sites whose leases another live process holds: their records read and
    their leases found held in two round trips for the batch, not three more
    per site (renew, read the holder, bound its expiry); the holder keeps them."""
    store, counter = counted_store(redis_server.url, prefix)
    other = RedisStore(redis_server.url, prefix=prefix)
    sites = [f"http://held{n}.test:80" for n in range(20)]
    try:
        assert all(
            other.look_many(sites, "other", 30, lambda r: True)[s][0] == "lease" for s in sites
        )
        store.look_many(["http://warm.test:80"], "me", 30, lambda r: True)  # connection, scripts
        before = counter.sent
        looked = store.look_many(sites, "me", 30, lambda r: True)
        assert {state for state, _ in looked.values()} == {"held"}
        assert counter.sent - before == 2, counter.sent - before
        assert {other.lease_of(site)[0] for site in sites} == {"other"}  # type: ignore[index]
    finally:
        store.close()
        other.close()


def test_2_4_redis_records_and_bodies_of_a_batch_are_read_in_one_round_trip(
    redis_server: RedisServer, prefix: str
) -> None:
    """20 sites saved with their robots.txt bodies: a batch look-up reads their
    records and bodies in one round trip (not one for the records, one for the
    bodies), and a save with leases given up is one too (no ``SCRIPT EXISTS``
    before it); after ``SCRIPT FLUSH`` the scripts are loaded again by
    themselves and the same calls give the same answers."""
    store, counter = counted_store(redis_server.url, prefix)
    sites = [f"http://body{n}.test:80" for n in range(20)]
    now = time.time()
    bodies = {site: f"User-agent: *\nDisallow: /{n}\n".encode() for n, site in enumerate(sites)}
    try:
        store.look_many(sites, "me", 30, lambda r: True)  # connection, scripts, leases
        before = counter.sent
        store.save_many(
            [(fetch_record(now, bodies[s], site=s), bodies[s]) for s in sites], sites, "me"
        )
        assert counter.sent - before == 1
        for flushed in (False, True):
            if flushed:
                redis.Redis.from_url(redis_server.url).script_flush()
            before = counter.sent
            looked = store.look_many(sites, "other", 30, lambda r: True)
            assert {site: body for site, (_, (_, body)) in looked.items()} == bodies  # type: ignore[misc]
            assert {state for state, _ in looked.values()} == {"fresh"}
            # after a flush: NOSCRIPT, the scripts loaded, the pipeline's scripts again
            assert counter.sent - before == (3 if flushed else 1)
        before = counter.sent
        assert store.current(sites[0]) == (looked[sites[0]][1][0], bodies[sites[0]])  # type: ignore[index]
        assert counter.sent - before == 1
    finally:
        store.close()


@deferred_f_from_coro_f
async def test_2_4_a_crawl_asks_redis_for_a_burst_of_sites_in_batches(
    sites: Any, redis_server: RedisServer, prefix: str
) -> None:
    """A crawl whose 12 start requests are on 12 sites: their look-ups, leases and
    saves reach Redis in batches: beyond what a crawl of one site costs (the
    connections, the subscription), fewer than three round trips per other site
    however the start requests fall into batches (a busy machine feeds them in
    smaller batches; one site at a time: about five per site)."""
    servers = [
        sites(
            routes={"/robots.txt": text(b"User-agent: *\nDisallow: /private\n")},
            default=text("page"),
        )
        for _ in range(6)
    ]
    hosts = ("127.0.0.1", "localhost")
    urls = [server.url("/page").replace("127.0.0.1", host) for server in servers for host in hosts]
    client = redis.Redis.from_url(redis_server.url)
    used = []
    try:
        for batch, name in ((urls[:1], "one"), (urls, "all")):
            settings = {
                "ROBOTSTXT_STORE_URI": redis_server.url,
                "ROBOTSTXT_STORE_PREFIX": prefix + name,
            }
            before = reads(client)
            spider, stats = await crawl(batch, settings)
            used.append(reads(client) - before - 1)
            assert sorted(spider.fetched) == sorted(batch)
            assert stats.get("robotstxt/store/saved") == len(batch)
    finally:
        client.close()
    assert used[1] - used[0] < 3 * (len(urls) - 1), used

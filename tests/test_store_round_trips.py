"""A burst of sites goes to the robots.txt store in batches, not one site at a time.

RFC 9309 2.4 lets a crawler cache a robots.txt; with a store shared by a
cluster, every site the crawl meets is looked up (and its lease taken) and
every fetch saved. Sites met together (start requests, a queue fetching
ahead) are asked in one batch: with Redis, a few pipelined round trips for
the batch, whatever its size. Counted on a real ``redis-server`` with
``INFO stats`` ``total_reads_processed`` (one per request the server reads:
a pipeline is one).
"""

from __future__ import annotations

from typing import Any

import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.sites._redis_store import RedisStore

from .conftest import crawl
from .records import fetch_record
from .redis_server import RedisServer
from .server import text


def reads(client: Any) -> int:
    """Requests the server has read so far (this call's own ``INFO`` counted)."""
    return int(client.info("stats")["total_reads_processed"])


def test_2_4_redis_look_many_takes_the_leases_of_a_burst_in_a_few_round_trips(
    redis_server: RedisServer, prefix: str
) -> None:
    """30 sites unknown to the store: their records read, their leases taken
    and their records read again in a few round trips, not three per site; a
    second look-up finds them fresh, and their saves are one round trip."""
    client = redis.Redis.from_url(redis_server.url)
    store = RedisStore(redis_server.url, prefix=prefix)
    sites = [f"http://s{n}.test:80" for n in range(30)]
    try:
        store.look_many(["http://warm.test:80"], "me", 30, lambda r: True)  # connection, scripts
        before = reads(client)
        looked = store.look_many(sites, "me", 30, lambda r: True)
        leased = reads(client) - before - 1
        assert {state for state, _ in looked.values()} == {"lease"}
        assert leased <= 4, leased
        now = 1_700_000_000.0
        before = reads(client)
        store.save_many(
            [(fetch_record(now, b"User-agent: *\n", site=s), None) for s in sites], sites, "me"
        )
        assert reads(client) - before - 1 < len(sites) // 3
        before = reads(client)
        looked = store.look_many(sites, "other", 30, lambda r: True)
        assert all(state == "fresh" for state, _ in looked.values())
        assert reads(client) - before - 1 <= 3
    finally:
        store.close()
        client.close()


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

"""A scrapy-redis cluster sharing robots.txt through Redis: run this spider in
several processes at once (``scrapy runspider cluster_spider.py``).

scrapy-redis shares the request queue and the duplicate filter between the
processes; ``ROBOTSTXT_STORE_URI = "redis"`` makes scrapy-rfc9309 keep
robots.txt in the same Redis (scrapy-redis's ``REDIS_URL``), so each site's
robots.txt is downloaded by one process for the whole cluster. Needs
``pip install 'scrapy-rfc9309[redis]' scrapy-redis``; see docs/cluster.md,
"Running a scrapy-redis cluster locally", for the commands (run from a
directory of its own: from ``example_project/``, Scrapy would also read the
demo project's settings, ``scrapy.cfg``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from scrapy.http import Response
from scrapy_redis.spiders import RedisSpider


class ClusterSpider(RedisSpider):
    """Follows the links of the sites whose start URLs are pushed to ``cluster:start_urls``."""

    name = "cluster"
    redis_key = "cluster:start_urls"
    redis_batch_size = 1  # one start URL per process at a time
    custom_settings = {  # noqa: RUF012 - Scrapy's own spelling
        "ADDONS": {"scrapy_rfc9309.Addon": 100},
        # scrapy-redis: one queue and one duplicate filter for all the processes
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        # scrapy-rfc9309: robots.txt kept in the same Redis, under its own prefix
        "ROBOTSTXT_STORE_URI": "redis",
        "ROBOTSTXT_STORE_PREFIX": "cluster-demo:robotstxt:",
        # a slow, polite crawl, so that every process gets a share of the work
        "DOWNLOAD_DELAY": 0.5,
        # every process takes 2 requests at a time from the shared queue, so that
        # each process gets pages of every site, not all the pages of one: the
        # sites' robots.txt are then shared (one process downloads each, the
        # others load it from Redis). SCHEDULER_QUEUE_CLASS is left to the add-on:
        # scrapy_rfc9309.RobotsTxtRedisQueue, where requests of sites whose
        # robots.txt is pending wait in Redis (a queue class set here would turn it off)
        "CONCURRENT_REQUESTS": 2,
        # each process ends after 10 s without work (the demo ends by itself)
        "MAX_IDLE_TIME_BEFORE_CLOSE": 10,
        # without it, the first process to close clears the shared queue and
        # duplicate filter (scrapy-redis) while the others crawl on, and they fetch
        # pages again; with it the keys stay in Redis: delete cluster:* before
        # running again on the same Redis
        "SCHEDULER_PERSIST": True,
        "USER_AGENT": "ClusterDemoBot/1.0 (+https://example.com/bot)",
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
    }

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        self.logger.info("Fetched %s", response.url)
        yield {"url": response.url, "title": response.css("title::text").get()}
        yield from response.follow_all(css="a")

"""One crawler process of a cluster, for the Redis store's tests.

``python -m tests.cluster_crawl CONFIG.json`` runs a real Scrapy crawl
(``CrawlerProcess``) of ``config["urls"]`` with ``config["settings"]`` and
writes what it saw to ``config["output"]`` (JSON: fetched URLs, dropped URLs,
final stats). With ``config["ready"]`` it writes that file once its spider
starts, then, with ``config["barrier"]`` (a directory and a count), waits
until that many processes are ready before sending its requests, so that
the processes of a test really run at the same time.

``config["lease_margin"]`` and ``config["retry_seconds"]`` shorten the
store's lease margin (past ``DOWNLOAD_TIMEOUT``) and its retry delay after a
failure, so that the tests take seconds instead of minutes;
``config["close_wait_seconds"]`` the store's wait for its writes at close;
``config["preload_max_sites"]`` the size of a store whose records are read at
open (a store holding more sites is looked up site by site, in batches);
``config["dont_filter"] = False`` lets a shared duplicate filter (scrapy-redis)
keep one of the requests the processes all send.

:class:`SlowAfterPop`, enabled in a process's ``DOWNLOADER_MIDDLEWARES``,
holds each request ``SLOW_AFTER_POP_SECONDS`` after the scheduler handed it
out (a busy engine or a slow middleware of the project).
:class:`SlowAfterConfirm`, enabled after the add-on's pacing middleware,
holds each request ``SLOW_AFTER_CONFIRM_SECONDS`` after its site's turn was
confirmed (a busy process that writes its request late).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


class SlowAfterPop:
    """A downloader middleware that holds each request a while before passing it on."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    @classmethod
    def from_crawler(cls, crawler: Any) -> SlowAfterPop:
        return cls(crawler.settings.getfloat("SLOW_AFTER_POP_SECONDS"))

    async def process_request(self, request: Any, spider: Any = None) -> None:
        if not request.meta.get("dont_obey_robotstxt"):
            await _sleep(self.seconds)


class SlowAfterConfirm(SlowAfterPop):
    """:class:`SlowAfterPop` placed after ``ClusterDelayMiddleware``: the request
    reaches the site ``SLOW_AFTER_CONFIRM_SECONDS`` after its turn was confirmed."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> SlowAfterConfirm:
        return cls(crawler.settings.getfloat("SLOW_AFTER_CONFIRM_SECONDS"))


async def _sleep(seconds: float) -> None:
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))


def main(config_path: str) -> None:
    config = json.loads(Path(config_path).read_text())
    from scrapy import Request, Spider
    from scrapy.crawler import CrawlerProcess

    from scrapy_rfc9309.components.settings import _store_settings
    from scrapy_rfc9309.components.store import _store_bridge, _store_lookups

    if "lease_margin" in config:
        _store_settings.STORE_LEASE_MARGIN = float(config["lease_margin"])
    if "retry_seconds" in config:
        _store_bridge.RETRY_SECONDS = float(config["retry_seconds"])
    if "close_wait_seconds" in config:
        _store_bridge.CLOSE_WAIT_SECONDS = float(config["close_wait_seconds"])
    if "preload_max_sites" in config:
        _store_lookups.PRELOAD_MAX_SITES = int(config["preload_max_sites"])
    result: dict[str, Any] = {"fetched": [], "dropped": {}}

    class ClusterSpider(Spider):
        name = "cluster"

        async def start(self) -> Any:
            if config.get("ready"):
                Path(config["ready"]).write_text(str(time.time()))
            barrier = config.get("barrier")
            if barrier:
                directory, count = Path(barrier[0]), int(barrier[1])
                deadline = time.monotonic() + 60
                while len(list(directory.glob("*.ready"))) < count:
                    if time.monotonic() > deadline:
                        raise RuntimeError("the other crawler processes did not start")
                    await _sleep(0.02)
            dont_filter = config.get("dont_filter", True)
            for url in config["urls"]:
                yield Request(url, self.parse, errback=self.failed, dont_filter=dont_filter)

        def parse(self, response: Any) -> None:
            result["fetched"].append(response.url)

        def failed(self, failure: Any) -> None:
            result["dropped"][failure.request.url] = str(failure.value)

    process = CrawlerProcess(config["settings"], install_root_handler=True)
    crawler = process.create_crawler(ClusterSpider)
    process.crawl(crawler)
    process.start()
    assert crawler.stats is not None
    result["stats"] = {
        key: value if isinstance(value, (int, float, str)) else str(value)
        for key, value in crawler.stats.get_stats().items()
    }
    Path(config["output"]).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])

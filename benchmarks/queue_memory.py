"""What the scheduler queue keeps per pending site, measured in units (no crawl).

The fast measure behind (b) with the queue: N sites, one request each, pushed
into ``RobotsTxtPriorityQueue`` (with the middleware's site table, every
site's robots.txt fetch started, and all ``ROBOTSTXT_CONCURRENT_DOWNLOADS``
busy, so every site is pending and waits in the download backlog, as when a
broad crawl schedules its first requests) and, in the same run, into
Scrapy's ``ScrapyPriorityQueue`` over its memory queue, where they wait
without the queue. The requests are built before measuring: what is counted
is what holding them costs, as ``tracemalloc`` sees it (GC on), per site.

Usage::

    python benchmarks/queue_memory.py [--sites N] [--top K]
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from typing import Any


def _crawler() -> Any:
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    class Bench(Spider):
        name = "bench"

    return get_crawler(Bench, {"ADDONS": {"scrapy_rfc9309.Addon": 100}, "LOG_LEVEL": "ERROR"})


def _requests(sites: int) -> list[Any]:
    from scrapy import Request

    return [
        Request(f"http://s{site}.test:8080/bench-page/0.html", dont_filter=True)
        for site in range(sites)
    ]


def measure(kind: str, sites: int, top: int = 0) -> float:
    """Bytes per site that holding one pending request of each site costs."""
    from scrapy.pqueues import ScrapyPriorityQueue
    from scrapy.squeues import FifoMemoryQueue
    from twisted.internet.defer import Deferred

    from scrapy_rfc9309.components.crawl._middleware import RobotsTxtMiddleware
    from scrapy_rfc9309.components.crawl._queue import RobotsTxtPriorityQueue
    from scrapy_rfc9309.components.sitefiles._download_slots import SLOW_FACTOR

    crawler = _crawler()
    middleware = RobotsTxtMiddleware(crawler).service
    # every robots.txt download slot busy, slow downloads included: each new
    # site waits in the backlog
    limit = middleware.settings.concurrent_downloads * SLOW_FACTOR
    middleware._downloads.update({f"busy{n}": Deferred() for n in range(limit)})
    middleware._start_watchdog = lambda: None  # type: ignore[method-assign]
    queue: Any
    if kind == "queue":
        queue = RobotsTxtPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")
    else:
        queue = ScrapyPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")
    requests = _requests(sites)
    gc.collect()
    tracemalloc.start(1)
    before = tracemalloc.take_snapshot()
    start, _ = tracemalloc.get_traced_memory()
    for request in requests:
        queue.push(request)
    gc.collect()
    end, _ = tracemalloc.get_traced_memory()
    if top:
        after = tracemalloc.take_snapshot()
        print(f"  {kind}: largest growth by line")
        for stat in after.compare_to(before, "lineno")[:top]:
            print(f"    {stat.size_diff / sites:8.1f} B/site  {stat.traceback}")
    tracemalloc.stop()
    assert len(queue) == sites
    return (end - start) / sites


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=100_000)
    parser.add_argument("--top", type=int, default=0, help="show the K largest growths by line")
    args = parser.parse_args()
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    print(
        f"queue memory in units: {args.sites} pending sites, one request each "
        "(tracemalloc growth while pushing, requests built before)"
    )
    plain = measure("plain", args.sites, args.top)
    ours = measure("queue", args.sites, args.top)
    print(f"    ScrapyPriorityQueue      {plain:8.1f} B per site")
    print(f"    RobotsTxtPriorityQueue   {ours:8.1f} B per site (site table and backlog included)")
    print(f"    queue's own cost         {ours - plain:8.1f} B per pending site")


if __name__ == "__main__":
    main()

"""What the add-on's components cost each request, without the network.

A real crawler with the add-on (``get_crawler``; its engine not started) and
its components built as Scrapy builds them: the scheduler queue
(``RobotsTxtPriorityQueue``), the downloader middleware
(``RobotsTxtMiddleware``), the page-directive spider middleware
(``RobotsMetaMiddleware``). SITES sites, each robots.txt a corpus file parsed
and put in force beforehand (its download and parse are not counted here:
crawl benchmark (a) counts them); then PAGES requests per site, sites
interleaved, each pushed, popped, passed through the middleware and its
response (the small HTML page of benchmark (a)) through the spider
middleware, the path a crawl takes. Microseconds per request for each
step, the median of rounds (GC on), and their sum: the add-on's own work per
page that (a) measures as a share of a crawl.

With ``--pending``, every request waits for its site's robots.txt, as in
(a), where each site's pages are scheduled before its robots.txt answers:
each round puts every site's fetch in flight, pushes every request (held by
the queue), settles each site and releases its requests (``settle``: the
site service's ``release``, per request), then pops them. Each request's
``request_left_downloader`` is sent as Scrapy's downloader sends it (``left
downloader``: Scrapy's dispatch, and the queue's receiver while a settled
site's backlog is let go a few requests at a time).

Usage: ``python benchmarks/request_path.py [--sites N] [--pages N] [--rounds N]
[--profile FILE] [--pending] [--skip STEP ...]``. Nothing leaves the process.
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from crawl import PAGE, bench_path, corpus_missing, pick_robots  # noqa: E402

AGENT = "Scrapy/2.19 (+https://scrapy.org)"
STEPS = ("push", "settle", "pop", "middleware", "page directives", "left downloader")


def build(sites: int) -> tuple[Any, Any, Any, list[str]]:
    """The crawler's queue, middleware and spider middleware, and the sites, each
    with its robots.txt in force."""
    from scrapy import Spider
    from scrapy.squeues import FifoMemoryQueue
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309 import RobotsMetaMiddleware, RobotsTxtMiddleware
    from scrapy_rfc9309.components.crawl._queue import RobotsTxtPriorityQueue
    from scrapy_rfc9309.parser._robotstxt import RobotsTxt
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    crawler = get_crawler(
        Spider,
        {
            "ADDONS": {"scrapy_rfc9309.Addon": 100},
            "USER_AGENT": AGENT,
            "LOG_LEVEL": "ERROR",
            "ROBOTSTXT_CRAWL_DELAY": False,
        },
    )
    crawler.spider = crawler._create_spider("bench")
    middleware = RobotsTxtMiddleware.from_crawler(crawler)
    meta = RobotsMetaMiddleware.from_crawler(crawler)
    queue = RobotsTxtPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")
    service = middleware.service
    names = []
    now = service.clock.monotonic()
    for number, path in enumerate(pick_robots("throughput", sites)):
        site = f"http://s{number}.test:8080"
        robots = RobotsTxt.parse(Path(path).read_bytes())
        outcome = SiteOutcome(Kind.PARSED, robots, "HTTP 200", now + 86400, fetched_at=now)
        service._table.start(site)  # as a fetch does: pending, then settled
        service._table.settle(site, outcome.compact())
        names.append(site)
    return queue, middleware, meta, names


def one_round(
    queue: Any,
    middleware: Any,
    meta: Any,
    sites: list[str],
    pages: int,
    skip: frozenset[str] = frozenset(),
    pending: bool = False,
) -> list[float]:
    """Seconds per request of each step over ``pages`` x ``len(sites)`` requests.
    ``skip``: steps left out (``queue``, ``middleware``, ``page directives``), the
    requests and responses still made: an instruction count of a step is the
    difference between the runs with and without it. ``pending``: every
    request pushed while its site's robots.txt is in flight (see ``--pending``)."""
    from scrapy import Request, signals
    from scrapy.http import HtmlResponse

    requests = [
        Request(f"{site}{bench_path(page)}", headers={"User-Agent": AGENT}, dont_filter=True)
        for page in range(pages)
        for site in sites
    ]
    spent = [0.0] * len(STEPS)
    clock = time.perf_counter
    held = pending and "queue" not in skip
    if held:  # every site's fetch in flight, its requests pushed and held
        service = middleware.service
        now = service.clock.monotonic()
        outcomes = {site: service._table.fresh(site, now) for site in sites}
        for site in sites:
            service._table.start(site)
        started = clock()
        for request in requests:
            queue.push(request)
        spent[0] = clock() - started
        started = clock()
        for site in sites:  # as a fetch settles: in force, its requests released
            service._table.settle(site, outcomes[site])
            service.release(site)
        spent[1] = clock() - started
    for request in requests:
        started = clock()
        if "queue" not in skip and not held:
            queue.push(request)
        pushed = clock()
        if "queue" not in skip:
            request = queue.pop()
            assert request is not None
        popped = clock()
        if "middleware" not in skip:
            coroutine = middleware.process_request(request)
            try:
                coroutine.send(None)
            except StopIteration:
                pass
            else:  # pragma: no cover - every site's robots.txt is in force
                raise AssertionError("the request waited")
        passed = clock()
        response = HtmlResponse(
            request.url, body=PAGE, headers={"Content-Type": "text/html"}, request=request
        )
        read_from = clock()
        if "page directives" not in skip:
            meta.process_spider_input(response)
        read = clock()
        middleware.crawler.signals.send_catch_log(
            signal=signals.request_left_downloader,
            request=request,
            spider=middleware.crawler.spider,
        )
        left = clock()
        spent[0] += pushed - started
        spent[2] += popped - pushed
        spent[3] += passed - popped
        spent[4] += read - read_from
        spent[5] += left - read
    return [total / len(requests) for total in spent]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", default="", help="write a cProfile of one round here")
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["queue", "middleware", "page directives"],
        help="steps left out (the requests and responses still made)",
    )
    parser.add_argument(
        "--pending",
        action="store_true",
        help="every request pushed while its site's robots.txt is in flight, as in (a)",
    )
    args = parser.parse_args()
    if (missing := corpus_missing()) is not None:  # said before any crawler is made
        print(missing, file=sys.stderr)
        return 2
    # LOG_LEVEL is Scrapy's logging's, which this script does not start: the
    # start-up lines (Scrapy's default User-Agent, as in (a)) are left out here
    logging.getLogger("scrapy_rfc9309").setLevel(logging.ERROR)
    gc.enable()
    queue, middleware, meta, sites = build(args.sites)
    one_round(queue, middleware, meta, sites, 2, pending=args.pending)  # warm
    if args.profile:
        import cProfile

        profile = cProfile.Profile()
        profile.runcall(one_round, queue, middleware, meta, sites, args.pages, pending=args.pending)
        profile.dump_stats(args.profile)
    rounds = [
        one_round(queue, middleware, meta, sites, args.pages, frozenset(args.skip), args.pending)
        for _ in range(args.rounds)
    ]
    waited = "; each request waited for its robots.txt (--pending)" if args.pending else ""
    print(f"python {sys.version.split()[0]}; {args.sites} sites x {args.pages} pages{waited}")
    total = 0.0
    for index, step in enumerate(STEPS):
        if step == "settle" and not args.pending:
            continue  # nothing waits: nothing is settled
        median = statistics.median(r[index] for r in rounds) * 1e6
        total += median
        print(f"    {step:<16} {median:6.1f} us per request")
    print(f"    {'all':<16} {total:6.1f} us per request (medians of {args.rounds} round(s))")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

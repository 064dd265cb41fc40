"""Page-level directives benchmark: what reading the robots META tag and
``X-Robots-Tag`` costs, in one run.

1. reading: ``read_page_directives`` on the 30 KB page of the crawl benchmark
   (a head of 4.7 KB, ``<meta name="robots">`` near its end), on the same
   page without a robots META tag, and on a 30 KB page whose head is 16 KiB;
   microseconds per page, the median of rounds (GC on);
2. hostile heads (``tests/hostile_pages.py``: 256 KiB of ``<meta`` without
   ``>``, of attributes, of unclosed comments and scripts, ...): milliseconds
   per page, the worst of them against the goal (< 5 ms);
3. the middleware: ``process_spider_input`` + ``process_spider_output`` of
   ``RobotsMetaMiddleware`` on a real ``HtmlResponse`` of the 30 KB page, per
   page; set against the crawler CPU per page of a crawl without it, this
   gives the expected cost as a share of a crawl;
4. the crawl (``--crawl``): ``benchmarks/crawl.py page-directives``, the add-on
   with ``ROBOTS_META_OBEY`` on against off (no spider middleware then), 30 KB
   pages read with ``response.css``, the two crawls of each pair at once,
   medians of the paired ratios; goal >= 0.97.

Usage: ``python benchmarks/meta.py [--rounds N] [--crawl] [--sites N] [--pages N]``.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from crawl import html_page_30k  # noqa: E402

from scrapy_rfc9309.parser._page_directives import read_page_directives  # noqa: E402
from tests.hostile_pages import hostile_heads  # noqa: E402

HTML = {"Content-Type": "text/html; charset=utf-8"}
AGENT = "Scrapy/2.19 (+https://scrapy.org)"
HOSTILE_GOAL_MS = 5.0
CRAWL_GOAL = 0.97


def per_call(function: Callable[[], Any], rounds: int, calls: int) -> float:
    """Seconds per call: the median of ``rounds`` rounds of ``calls`` calls (GC on)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            function()
        times.append((time.perf_counter() - started) / calls)
    return statistics.median(times)


def pages() -> dict[str, bytes]:
    page = html_page_30k()
    without = page.replace(b'<meta name="robots" content="index, follow, max-snippet:-1">', b"")
    long_head = page.replace(b"</head>", b"<style>" + b"p{margin:0}\n" * 1400 + b"</style></head>")
    return {
        "30 KB page, robots META tag": page,
        "30 KB page, no robots META tag": without,
        "46 KB page, 20 KiB head": long_head,
    }


def reading(rounds: int) -> None:
    print(f"\n1. reading one page (median of {rounds} rounds)")
    for name, body in pages().items():
        cost = per_call(
            lambda b=body: read_page_directives("u", 200, HTML, b, "scrapy"), rounds, 2000
        )
        print(f"    {name:<34} {cost * 1e6:>7.1f} us")


def hostile(rounds: int) -> None:
    print(f"\n2. hostile heads of 256 KiB (median of {rounds} rounds)")
    worst = ("", 0.0)
    for name, body in hostile_heads().items():
        cost = per_call(lambda b=body: read_page_directives("u", 200, HTML, b, "scrapy"), rounds, 5)
        worst = max(worst, (name, cost), key=lambda pair: pair[1])
        print(f"    {name:<26} {cost * 1e3:>6.2f} ms")
    print(f"    worst: {worst[0]}, {worst[1] * 1e3:.2f} ms (goal < {HOSTILE_GOAL_MS:.0f} ms)")


def middleware_cost(rounds: int) -> float:
    """Seconds of the middleware per page of the 30 KB page, less building the response."""
    from scrapy import Spider
    from scrapy.http import HtmlResponse, Request
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309 import RobotsMetaMiddleware

    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": True, "USER_AGENT": AGENT})
    assert crawler.stats is not None
    try:
        crawler.stats.open_spider()  # type: ignore[call-arg]
    except TypeError:  # Scrapy < 2.14 wants the spider
        crawler.stats.open_spider(Spider("bench"))
    middleware = RobotsMetaMiddleware.from_crawler(crawler)
    body = html_page_30k()
    item = {"url": "http://s1.test/p/1"}

    def response() -> Any:
        request = Request("http://s1.test/p/1", headers={"User-Agent": AGENT})
        return HtmlResponse(request.url, body=body, request=request, headers=HTML)

    def with_middleware() -> None:
        page = response()
        middleware.process_spider_input(page)
        for _ in middleware.process_spider_output(page, [item]):
            pass

    built = per_call(response, rounds, 2000)
    return per_call(with_middleware, rounds, 2000) - built


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--crawl", action="store_true", help="also run the paired crawls")
    parser.add_argument("--sites", type=int, default=20)
    parser.add_argument("--pages", type=int, default=150)
    parser.add_argument("--crawl-rounds", type=int, default=8)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    reading(args.rounds)
    hostile(args.rounds)
    cost = middleware_cost(args.rounds)
    print(
        f"\n3. the middleware, per 30 KB page: {cost * 1e6:.1f} us (median of {args.rounds} rounds)"
    )
    if args.crawl:
        from crawl import page_directives

        result = page_directives(args.sites, args.pages, args.crawl_rounds)
        cpu_off = result["cpu_us"]["meta-off"] * 1e-6
        print(
            f"    against {cpu_off * 1e6:.0f} us of crawler CPU per page without it: "
            f"expected on / off {1 - cost / cpu_off:.3f} (goal >= {CRAWL_GOAL})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

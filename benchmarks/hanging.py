"""Crawl benchmark (h): many robots.txt that hang, against the same crawl without them.

Run through ``python benchmarks/crawl.py hanging``. Sites are ports of
127.0.0.1, all served by one Twisted server in a process of its own; the
robots.txt of every fourth site never answers. Each crawl runs in a process
of its own with the add-on at its default settings, except
``ROBOTSTXT_UNREACHABLE_DEFER`` (given: the default, 300 s, would make the
crawl last 5 minutes). Measured: when the last healthy page came, the longest
deferral of a hanging site (from its first robots.txt time-out to the drop of
its pages), the whole crawl, and the most pages in flight at the server.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from server_process import ServerProcess

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PAGE = b"<html><head><title>bench</title></head><body>bench</body></html>"
RULES = b"User-agent: *\nDisallow: /private\n"
#: Seconds a page takes to answer.
PAGE_DELAY = 0.01


def hanging(index: int) -> bool:
    """Whether site ``index``'s robots.txt hangs: every fourth one."""
    return index % 4 == 0


# -- the server process ----------------------------------------------------------------


def serve(count: str, port_file: str) -> None:
    """``count`` sites on as many ports; the control port (``/inflight``: the
    pages in flight now and at most since the last ``/reset``; ``/robots``:
    when each site's robots.txt was first asked for) is written to ``port_file``,
    the sites' ports to ``ports`` beside it."""
    from twisted.internet import reactor
    from twisted.web import resource, server

    gauge = {"now": 0, "max": 0}
    first_robots: dict[int, float] = {}

    class Site(resource.Resource):
        isLeaf = True

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

        def render_GET(self, request: Any) -> bytes | int:
            if request.path == b"/robots.txt":
                first_robots.setdefault(self.index, time.monotonic())
                if hanging(self.index):
                    return server.NOT_DONE_YET
                request.setHeader(b"Content-Type", b"text/plain")
                return RULES
            gauge["now"] += 1
            gauge["max"] = max(gauge["max"], gauge["now"])
            request.notifyFinish().addBoth(lambda _: gauge.__setitem__("now", gauge["now"] - 1))

            def answer() -> None:  # 10 ms later, so that pages in flight overlap
                if not request.finished and not request._disconnected:
                    request.setHeader(b"Content-Type", b"text/html")
                    request.write(PAGE)
                    request.finish()

            reactor.callLater(PAGE_DELAY, answer)
            return server.NOT_DONE_YET

    class Control(resource.Resource):
        isLeaf = True

        def render_GET(self, request: Any) -> bytes:
            if request.path == b"/reset":
                gauge["max"] = gauge["now"]
                first_robots.clear()
            if request.path == b"/robots":
                return json.dumps(first_robots).encode()
            return json.dumps(gauge).encode()

    ports = [
        reactor.listenTCP(0, server.Site(Site(index)), interface="127.0.0.1", backlog=256)
        for index in range(int(count))
    ]
    folder = Path(port_file).parent
    (folder / "ports").write_text("\n".join(str(port.getHost().port) for port in ports))
    control = reactor.listenTCP(0, server.Site(Control()), interface="127.0.0.1")
    Path(port_file).write_text(str(control.getHost().port))
    reactor.run()


class Server(ServerProcess):
    def __init__(self, count: int) -> None:
        super().__init__()
        self.start(__file__, str(count), str(self.port_file))
        self.ports = [int(port) for port in (self.folder / "ports").read_text().split()]

    def ask(self, path: str) -> Any:
        from urllib.request import urlopen

        with urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as answer:
            return json.loads(answer.read())


# -- the crawl process -------------------------------------------------------------------


def crawl(options: dict[str, Any]) -> None:
    """One crawl of ``options["ports"]`` x ``options["pages"]`` (breadth first);
    prints, as JSON, the time of each healthy page and of each dropped page."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    ports: list[int] = options["ports"]
    settings: dict[str, Any] = {
        "ADDONS": {"scrapy_rfc9309.Addon": 100},
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "USER_AGENT": "BenchBot/1.0 (+https://example.com/bot)",
        **options.get("settings", {}),
    }
    result: dict[str, Any] = {"pages": [], "dropped": {}}

    class Bench(Spider):
        name = "bench"

        async def start(self) -> Any:
            for page in range(options["pages"]):  # sites interleaved, as in a broad crawl
                for port in ports:
                    yield Request(
                        f"http://127.0.0.1:{port}/page/{page}.html",
                        callback=self.parse,
                        errback=self.dropped,
                        dont_filter=True,
                    )

        def parse(self, response: Any) -> None:
            result["pages"].append(time.monotonic())

        def dropped(self, failure: Any) -> None:
            port = failure.request.url.split(":")[2].split("/")[0]
            result["dropped"].setdefault(port, []).append(time.monotonic())

    def opened() -> None:
        result["started"] = time.monotonic()

    def closed() -> None:
        result["ended"] = time.monotonic()

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(Bench)
    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler)
    process.start()
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    result["robots_requests"] = stats.get("robotstxt/request_count", 0)
    print(json.dumps(result))


def run_crawl(options: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    out = subprocess.run(
        [sys.executable, __file__, "crawl", json.dumps(options)],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the driver ----------------------------------------------------------------------------


def run(sites: int = 2000, pages: int = 3, defer: float = 30.0) -> None:
    """(h): ``sites`` x ``pages``, a quarter of the robots.txt hanging, against
    the healthy sites alone."""
    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    robots_timeout = RobotsTxtSettings.from_settings(_scrapy_settings()).download_timeout
    print(
        f"\n(h) hanging: {sites} sites x {pages} pages on ports of 127.0.0.1, the robots.txt "
        f"of every fourth hanging; default settings (ROBOTSTXT_DOWNLOAD_TIMEOUT "
        f"{robots_timeout:g} s), ROBOTSTXT_UNREACHABLE_DEFER = {defer:g}"
    )
    server = Server(sites)
    try:
        settings = {"ROBOTSTXT_UNREACHABLE_DEFER": defer}
        healthy_ports = [port for index, port in enumerate(server.ports) if not hanging(index)]
        figures: dict[str, dict[str, Any]] = {}
        for label, ports in (("without", healthy_ports), ("with", server.ports)):
            server.ask("/reset")
            result = run_crawl({"ports": ports, "pages": pages, "settings": settings})
            started = result["started"]
            assert len(result["pages"]) == len(healthy_ports) * pages, "a healthy page missing"
            first = {int(index): at for index, at in server.ask("/robots").items()}
            deferrals = [
                max(times) - (first[server.ports.index(int(port))] + robots_timeout)
                for port, times in result["dropped"].items()
            ]
            figures[label] = {
                "last_healthy": max(result["pages"]) - started,
                "crawl": result["ended"] - started,
                "max_in_flight": server.ask("/inflight")["max"],
                "longest_deferral": max(deferrals, default=0.0),
                "dropped": sum(len(times) for times in result["dropped"].values()),
                "robots_requests": result["robots_requests"],
            }
        for label, fig in figures.items():
            print(
                f"    {label + ' hanging sites':<22} "
                f"last healthy page {fig['last_healthy']:6.2f} s, "
                f"crawl {fig['crawl']:6.2f} s, pages in flight at most {fig['max_in_flight']}, "
                f"robots.txt downloads {fig['robots_requests']}, dropped {fig['dropped']}"
            )
        with_, without = figures["with"], figures["without"]
        gap = with_["last_healthy"] - without["last_healthy"]
        ratio = with_["last_healthy"] / without["last_healthy"]
        print(f"    last healthy page: {gap:+.2f} s with the hanging sites ({ratio:.2f}x)")
        print(
            f"    longest deferral {with_['longest_deferral']:.2f} s "
            f"(ROBOTSTXT_UNREACHABLE_DEFER {defer:g} s, plus at most one attempt in flight)"
        )
    finally:
        server.close()


def _scrapy_settings() -> Any:
    from scrapy.settings import Settings

    return Settings()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "crawl":
        crawl(json.loads(sys.argv[2]))

"""Cluster benchmark: 1, 2 and 4 crawler processes, a shared Redis store against none.

The processes of a cluster share the crawl (as with scrapy-redis's shared
queue, the pages are dealt out: page k of site n goes to process
(n * pages + k) mod P), so every process meets every site. Without a store
each process downloads each site's robots.txt itself (P downloads per site);
with ``ROBOTSTXT_STORE_URI`` naming one Redis, one process downloads it and
the others take it from Redis (waiting for it while it downloads).

Sites: hosts ``s<N>.test`` resolved to 127.0.0.1 (``crawl.LoopbackResolver``),
one local Twisted server answering for all of them; every robots.txt
answers after 100 to 300 ms (a realistic round trip, fixed per site), pages
at once. A real ``redis-server`` is started on a free port in a temporary
directory (``tests/redis_server.py``); each crawl uses its own key prefix.
Nothing leaves 127.0.0.1.

Measured per configuration (P processes, store or none), in the same run,
in rounds that each run every configuration: pages per second (all pages of
all processes over the wall time from the first spider opening to the last
page), and robots.txt downloads per site (counted by the server). Printed:
the medians, and the median of the paired ratios store / none per P.

With ``--politeness``: 1, 2, 4 and 8 processes over the same sites whose
robots.txt asks ``Crawl-delay`` (``ROBOTSTXT_CRAWL_DELAY``, the shared Redis
store): the server records when each page arrives, and the benchmark prints,
per number of processes, the smallest gap between two arrivals at a site
(against the delay), the highest rate a site saw (pages per second over
its closest two arrivals, and over any window of ``Crawl-delay`` x 4) against
the limit 1 / Crawl-delay, the robots.txt downloads per site, and the Redis
memory per site after the crawl (``MEMORY USAGE`` of one site's keys, and
the ``INFO memory`` used_memory growth over the crawl divided by the sites).

With ``--stall``: 4 processes (``--processes``) over sites whose robots.txt
asks ``Crawl-delay`` (1 s unless ``--crawl-delay``), the shared Redis store;
once the crawl is under way (every site has had a page), Redis is stopped
(SIGSTOP) for 5 s (``--stall-seconds``), then let go on (SIGCONT). Printed per
site: its pages, the most that arrived at the server within any window of
one Crawl-delay (the goal: 1), the smallest gap between two arrivals, and
the pages that arrived while Redis was stopped.

With ``--versus-scrapy-redis``: the add-on in a scrapy-redis cluster against
plain scrapy-redis, on the same crawl (``--sites`` x ``--pages``, 100 x 10
unless given, about 8 minutes in all on 2 cores; 100 x 30, the crawl of record,
takes about three times as long; robots.txt answering after 100 to
300 ms, or at once with ``--instant-robots``, pages at once). 1, 2 and 4
processes share one scrapy-redis queue and duplicate filter
(``SCHEDULER = "scrapy_redis.scheduler.Scheduler"``, keys of their own per
crawl); each process yields its share of the pages once (the same dealing
as above), after every process has opened (a barrier of files). Two ways:
``plain``, scrapy-redis alone (no add-on, ``ROBOTSTXT_OBEY`` False), and
``addon``, the add-on with its ``RobotsTxtRedisQueue`` (which it sets for
scrapy-redis's scheduler) and the Redis store (``ROBOTSTXT_STORE_URI`` on
the same Redis), ``ROBOTSTXT_CRAWL_DELAY`` False so that both crawl at full
speed. Each with Redis on 127.0.0.1 directly, and behind ``latency_proxy.py``
(``--latency-ms``, 2 unless given): a TCP proxy in a thread of the driver
that passes every chunk on 2 ms late in each direction, in order. Every
configuration runs once per round (``--rounds``, 2 unless given), in the
opposite order each round, GC on. Measured per run: pages per second (all
pages over the time from the barrier's release, every spider open, to the
last page), robots.txt downloads per site (counted by the server), Redis
commands per page (``CONFIG RESETSTAT`` before, ``INFO commandstats`` after:
the calls of every command over the pages; the driver's own left out), and,
through the proxy, Redis round trips per page (the clients' request bursts
at the proxy: a pipeline or ``MULTI``/``EXEC`` block is one round trip and
several commands), and CPU per page: the CPU time of every crawler process
(all its threads, from the barrier's release to its crawl's end) and of
Redis (``INFO cpu``), over the pages: what the cluster pays in machines
(on cores shared by more processes than they have, it grows with the
sharing too), of it the crawlers' time in the kernel (system calls, which
callgrind does not count), and the crawler processes' context switches per
page (their threads', given up or taken from them: ``getrusage``). Printed: the
medians; per size and latency, the median of the rounds' paired ratios
add-on / plain against the goal (at least 0.9), and of plain / add-on in
CPU per page;
the add-on's commands and round trips per page against plain's and the goal
(at most one round trip per request beyond plain scrapy-redis's own, which
makes several: its pop, push and duplicate filter are one each), with its 5
most called commands.
``--sizes`` chooses the numbers of processes (``4``, or ``1,2,4``, the
default). With ``--instructions`` as well: each configuration once, Redis
direct, every crawler process under callgrind (``valgrind``), counted from
the barrier's release to its crawl's end: instructions per page, which do
not move with the load or the sharing of the cores, and their ratio plain /
add-on against the goal.
With ``--profile FILE`` as well: one run of the add-on at 2 processes,
Redis direct, process 0 under cProfile (its reactor thread: the store's
worker thread is not in it), and the first callers, outside redis-py, of
its Redis round trips on that thread.

Usage::

    python benchmarks/cluster.py [--sites N] [--pages N] [--rounds N]
    python benchmarks/cluster.py --politeness [--sites N] [--pages N] [--crawl-delay S]
    python benchmarks/cluster.py --stall [--sites N] [--pages N] [--crawl-delay S]
    python benchmarks/cluster.py --versus-scrapy-redis [--sites N] [--pages N] [--rounds N]
        [--latency-ms MS] [--proxy-only | --direct-only] [--instant-robots]
        [--sizes 1,2,4] [--instructions | --profile FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawl import callgrind_control, callgrind_total
from server_process import ServerProcess

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROCESSES = (1, 2, 4)
POLITE_PROCESSES = (1, 2, 4, 8)
ROBOTS = b"User-agent: *\nDisallow: /private\n"
PAGE = b"<html><head><title>bench</title></head><body>bench</body></html>"


def robots_delay(site: int) -> float:
    """100 to 300 ms, spread over the sites (fixed per site, the same in every run)."""
    return 0.1 + (site * 37 % 201) / 1000


# -- the site server (its own process) -----------------------------------------------


def serve(port_file: Path, crawl_delay: str = "", instant: str = "") -> None:
    """Every ``s<N>.test``: its robots.txt after :func:`robots_delay` (at once with
    ``instant``), pages at once.
    ``/_count`` (any host) answers the robots.txt downloads per site so far, as JSON,
    ``/_times`` the pages' arrival times per site, and ``/_reset`` forgets them.
    ``crawl_delay``: the robots.txt asks it (``Crawl-delay``)."""
    from collections import Counter

    from twisted.internet import reactor
    from twisted.web import resource, server

    counts: Counter[str] = Counter()
    times: dict[str, list[float]] = {}
    robots = ROBOTS + (f"Crawl-delay: {crawl_delay}\n".encode() if crawl_delay else b"")

    class Sites(resource.Resource):
        isLeaf = True

        def render_GET(self, request: Any) -> bytes | int:
            host = (request.getHeader(b"host") or b"").decode().split(":")[0]
            if request.path == b"/_count":
                return json.dumps(dict(counts)).encode()
            if request.path == b"/_times":
                return json.dumps(times).encode()
            if request.path == b"/_reset":
                counts.clear()
                times.clear()
                return b"ok"
            if request.path == b"/robots.txt":
                counts[host] += 1

                def answer() -> None:
                    if not request.finished and not request._disconnected:
                        request.setHeader(b"Content-Type", b"text/plain")
                        request.write(robots)
                        request.finish()

                if instant:
                    request.setHeader(b"Content-Type", b"text/plain")
                    return robots
                site = int(host[1:-5]) if host.startswith("s") and host.endswith(".test") else 0
                reactor.callLater(robots_delay(site), answer)
                return server.NOT_DONE_YET
            times.setdefault(host, []).append(time.time())
            request.setHeader(b"Content-Type", b"text/html")
            return PAGE

    port = reactor.listenTCP(0, server.Site(Sites()), interface="127.0.0.1", backlog=1024)
    port_file.write_text(str(port.getHost().port))
    reactor.run()


# -- one crawler process of the cluster -------------------------------------------------


def crawl(config: dict[str, Any]) -> None:
    """One process of the cluster: its share of the pages; prints a JSON result."""
    from scrapy import Request, Spider, signals
    from scrapy.crawler import CrawlerProcess

    port, sites, pages = config["port"], config["sites"], config["pages"]
    index, count = config["index"], config["processes"]
    addon = (
        {"ADDONS": {"scrapy_rfc9309.Addon": 100}}
        if config.get("addon", True)
        else {"ROBOTSTXT_OBEY": False}
    )
    settings: dict[str, Any] = {
        **addon,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "RETRY_ENABLED": False,
        "COOKIES_ENABLED": False,
        "MEMUSAGE_ENABLED": False,
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "DNS_RESOLVER": "crawl.LoopbackResolver",
        "DOWNLOAD_TIMEOUT": 30,
        "USER_AGENT": "BenchBot/1.0 (+https://example.com/bot)",
        **config.get("settings", {}),
    }
    barrier = config.get("barrier")
    dont_filter = config.get("dont_filter", True)
    counted = bool(config.get("callgrind"))
    # under callgrind every process starts tens of times slower
    patience = 1200.0 if counted else 120.0
    result: dict[str, Any] = {"fetched": 0, "dropped": 0}
    #: usage() at the barrier's release (empty: no barrier)
    released: dict[str, float] = {}

    def usage() -> dict[str, float]:
        """The process's CPU (every thread's, the store's worker's too), the part
        of it in the kernel (system calls), and its threads' context switches."""
        used = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "cpu_s": used.ru_utime + used.ru_stime,
            "kernel_s": used.ru_stime,
            "switches": used.ru_nvcsw + used.ru_nivcsw,
        }

    class Share(Spider):
        name = "share"

        async def start(self) -> Any:
            if barrier:  # every process open before any sends (a shared queue)
                await wait_for_all(Path(barrier), index, count, patience)
                if counted:  # under valgrind --instr-atstart=no: counted from here
                    callgrind_control("on")
                result["released"] = time.time()
                released.update(usage())
            for page in range(pages):  # sites interleaved, as in a broad crawl
                for site in range(sites):
                    if (site * pages + page) % count == index:
                        yield Request(
                            f"http://s{site}.test:{port}/page/{page}",
                            callback=self.parse,
                            errback=self.failed,
                            dont_filter=dont_filter,
                        )

        def parse(self, response: Any) -> None:
            result["fetched"] += 1
            result["last"] = time.time()

        def failed(self, failure: Any) -> None:
            result["dropped"] += 1
            result["last"] = time.time()

    def opened() -> None:
        result["opened"] = time.time()

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(Share)
    crawler.signals.connect(opened, signal=signals.spider_opened)
    process.crawl(crawler)
    if config.get("profile") and index == 0:  # the reactor thread (not the store's worker)
        import cProfile

        profile = cProfile.Profile()
        profile.runcall(process.start)
        profile.dump_stats(config["profile"])
    else:
        process.start()
    if counted and released:  # counted until here
        callgrind_control("off")
    if released:  # from the barrier's release to the crawl's end
        result.update({name: value - released[name] for name, value in usage().items()})
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    result["stats"] = {k: v for k, v in stats.items() if k.startswith("robotstxt/store")}
    result["errors"] = stats.get("log_count/ERROR", 0)
    print(json.dumps(result))


async def wait_for_all(folder: Path, index: int, count: int, patience: float = 120.0) -> None:
    """Say this process is ready (a file in ``folder``), then wait for ``count`` of
    them, at most ``patience`` seconds."""
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet import reactor, task

    (folder / f"{index}.ready").write_text("")
    deadline = time.monotonic() + patience
    while len(list(folder.glob("*.ready"))) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the other crawler processes did not start")
        await maybe_deferred_to_future(task.deferLater(reactor, 0.01, lambda: None))


# -- the driver ----------------------------------------------------------------------


class SiteServer(ServerProcess):
    def __init__(self, crawl_delay: float | None = None, *, instant: bool = False) -> None:
        super().__init__()
        extra = ["" if crawl_delay is None else str(crawl_delay)]
        self.start(__file__, str(self.port_file), *extra, "1" if instant else "")

    def get(self, path: str) -> bytes:
        from urllib.request import urlopen

        with urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as response:
            data: bytes = response.read()
            return data


def run_cluster(
    server: SiteServer, processes: int, sites: int, pages: int, store_settings: dict[str, Any]
) -> dict[str, float]:
    """P crawler processes at once; pages/s and robots.txt downloads per site."""
    server.get("/_reset")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    running = []
    for index in range(processes):
        config = {
            "port": server.port,
            "sites": sites,
            "pages": pages,
            "index": index,
            "processes": processes,
            "settings": store_settings,
        }
        running.append(
            subprocess.Popen(
                [sys.executable, __file__, "crawl", json.dumps(config)],
                cwd=HERE,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    results = collect(running)
    fetched = sum(r["fetched"] for r in results)
    dropped = sum(r["dropped"] for r in results)
    errors = sum(r["errors"] for r in results)
    if fetched != sites * pages or dropped or errors:
        raise SystemExit(f"lost pages: {fetched} fetched, {dropped} dropped, {errors} errors")
    started = min(r["opened"] for r in results)
    ended = max(r["last"] for r in results)
    counts = json.loads(server.get("/_count"))
    return {
        "pages_per_s": fetched / (ended - started),
        "robots_per_site": sum(counts.values()) / sites,
        "loaded": sum(r["stats"].get("robotstxt/store/loaded", 0) for r in results),
    }


def collect(running: list[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    """The JSON results of the crawler processes, once they have ended."""
    results = []
    for proc in running:
        out, _ = proc.communicate(timeout=3600)
        if proc.returncode:
            raise SystemExit(f"a crawler process failed ({proc.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def start_processes(
    server: SiteServer, processes: int, config: dict[str, Any]
) -> list[subprocess.Popen[str]]:
    """The crawler processes; with ``config["callgrind"]`` (a folder), each under
    callgrind, counting from the barrier's release, into ``{index}.callgrind`` there."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    counted = config.get("callgrind")

    def command(index: int) -> list[str]:
        crawler = [sys.executable, __file__, "crawl", json.dumps({**config, "index": index})]
        if not counted:
            return crawler
        out = Path(counted) / f"{index}.callgrind"
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        log = f"--log-file={out.with_suffix('.log')}"  # valgrind's own lines
        return [*valgrind, f"--callgrind-out-file={out}", log, *crawler]

    return [
        subprocess.Popen(
            command(index),
            cwd=HERE,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for index in range(processes)
    ]


def max_rates(times: list[float], window: float) -> tuple[float, float]:
    """A site's highest rate (pages/s): over its closest two arrivals, and over
    any window of ``window`` seconds (pages in it minus one, over ``window``)."""
    times = sorted(times)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    closest = 1 / min(gaps) if gaps and min(gaps) > 0 else float("inf") if gaps else 0.0
    most = 0
    start = 0
    for end, arrival in enumerate(times):
        while arrival - times[start] > window:
            start += 1
        most = max(most, end - start)
    return closest, most / window


def politeness(args: argparse.Namespace) -> int:
    """Crawl-delay kept across 1, 2, 4 and 8 processes (see the module docstring)."""
    import redis as redis_client

    from tests.redis_server import RedisServer

    delay = args.crawl_delay
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.sites} sites x "
        f"{args.pages} pages dealt out to the processes; Crawl-delay {delay} s "
        f"(limit {1 / delay:.2f} pages/s per site); shared Redis store"
    )
    print(
        f"\n{'processes':>9} {'smallest gap s':>15} {'max rate (closest pair)':>24} "
        f"{'max rate (window)':>18} {'limit':>6} {'robots.txt/site':>16} {'wall s':>7}"
    )
    memory: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        client = redis_client.Redis.from_url(redis.url)
        server = SiteServer(crawl_delay=delay)
        try:
            for processes in POLITE_PROCESSES:
                server.get("/_reset")
                prefix = f"polite-{uuid.uuid4().hex[:8]}:"
                before = int(client.info("memory")["used_memory"])
                config = {
                    "port": server.port,
                    "sites": args.sites,
                    "pages": args.pages,
                    "processes": processes,
                    "settings": {
                        "ROBOTSTXT_STORE_URI": redis.url,
                        "ROBOTSTXT_STORE_PREFIX": prefix,
                        "ROBOTSTXT_CRAWL_DELAY": True,
                    },
                }
                started = time.time()
                results = collect(start_processes(server, processes, config))
                wall = time.time() - started
                fetched = sum(r["fetched"] for r in results)
                if fetched != args.sites * args.pages:
                    raise SystemExit(f"lost pages: {fetched} fetched")
                times = json.loads(server.get("/_times"))
                rates = [max_rates(t, delay * 4) for t in times.values()]
                gaps = [b - a for t in times.values() for a, b in itertools.pairwise(sorted(t))]
                counts = json.loads(server.get("/_count"))
                print(
                    f"{processes:>9} {min(gaps, default=0.0):15.3f} "
                    f"{max(r[0] for r in rates):24.2f} "
                    f"{max(r[1] for r in rates):18.2f} {1 / delay:6.2f} "
                    f"{sum(counts.values()) / args.sites:16.2f} {wall:7.1f}"
                )
                if processes == POLITE_PROCESSES[-1]:
                    site = f"http://s0.test:{server.port}"
                    keys = [
                        f"{prefix}{kind}:{{{site}}}"
                        for kind in ("current", "archive", "bodies", "next")
                    ]
                    usage = {key.split(":")[1]: client.memory_usage(key) or 0 for key in keys}
                    after = int(client.info("memory")["used_memory"])
                    memory.append(
                        f"Redis memory per site: MEMORY USAGE {sum(usage.values())} bytes "
                        f"({', '.join(f'{k} {v}' for k, v in usage.items())}); used_memory "
                        f"growth over the crawl / sites: {(after - before) / args.sites:.0f} bytes"
                    )
        finally:
            server.close()
    print("\n".join(["", *memory]))
    return 0


def most_in_window(times: list[float], window: float) -> int:
    """The most arrivals within any ``window`` seconds (two arrivals less than
    ``window`` apart share one)."""
    times = sorted(times)
    most = 0
    start = 0
    for end, arrival in enumerate(times):
        while arrival - times[start] >= window:
            start += 1
        most = max(most, end - start + 1)
    return most


def stall(args: argparse.Namespace) -> int:
    """Redis stopped mid-crawl (see the module docstring)."""
    from tests.redis_server import RedisServer

    delay = args.crawl_delay or 1.0
    processes = args.processes
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {processes} processes; "
        f"{args.sites} sites x {args.pages} pages dealt out to them; Crawl-delay {delay} s; "
        f"shared Redis store stopped (SIGSTOP) for {args.stall_seconds} s mid-crawl"
    )
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        server = SiteServer(crawl_delay=delay)
        try:
            server.get("/_reset")
            config = {
                "port": server.port,
                "sites": args.sites,
                "pages": args.pages,
                "processes": processes,
                "settings": {
                    "ROBOTSTXT_STORE_URI": redis.url,
                    "ROBOTSTXT_STORE_PREFIX": f"stall-{uuid.uuid4().hex[:8]}:",
                    "ROBOTSTXT_CRAWL_DELAY": True,
                },
            }
            started = time.time()
            running = start_processes(server, processes, config)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # under way: every site has had a page
                seen = json.loads(server.get("/_times"))
                if len(seen) == args.sites and min(len(t) for t in seen.values()) >= 2:
                    break
                time.sleep(0.1)
            stopped = time.time()
            redis.freeze()
            time.sleep(args.stall_seconds)
            redis.thaw()
            resumed = time.time()
            results = collect(running)
            wall = time.time() - started
            times = json.loads(server.get("/_times"))
        finally:
            redis.thaw()
            server.close()
    fetched = sum(r["fetched"] for r in results)
    dropped = sum(r["dropped"] for r in results)
    print(
        f"{fetched} pages fetched, {dropped} dropped, {sum(r['errors'] for r in results)} "
        f"ERROR lines; Redis stopped {stopped - started:.1f} s into the crawl; wall {wall:.1f} s"
    )
    print(
        f"\n{'site':>6} {'pages':>6} {'most in one Crawl-delay':>24} {'smallest gap s':>15} "
        f"{'pages while stopped':>20}"
    )
    worst = 0
    for host in sorted(times, key=lambda h: int(h[1:-5])):
        arrivals = sorted(times[host])
        most = most_in_window(arrivals, delay)
        worst = max(worst, most)
        gaps = [b - a for a, b in itertools.pairwise(arrivals)]
        during = sum(stopped <= t < resumed for t in arrivals)
        print(
            f"{host.split('.')[0]:>6} {len(arrivals):6} {most:24} "
            f"{min(gaps, default=0.0):15.3f} {during:20}"
        )
    print(f"\nmost requests to one site within one Crawl-delay: {worst} (goal: 1)")
    return 0 if worst <= 1 and fetched == args.sites * args.pages else 1


# -- --versus-scrapy-redis: the add-on against plain scrapy-redis --------------------

VERSUS_MODES = ("plain", "addon")
#: commands the driver sends between runs (not the crawl's)
DRIVER_COMMANDS = frozenset({"info", "config|resetstat", "config", "flushall"})


def versus_settings(mode: str, redis_url: str, name: str) -> dict[str, Any]:
    """One shared scrapy-redis queue and duplicate filter (keys under ``name``);
    the add-on: its ``RobotsTxtRedisQueue`` (set by the add-on for scrapy-redis's
    scheduler) and the Redis store on the same Redis, Crawl-delay off."""
    settings = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_KEY": f"{name}:requests",
        "SCHEDULER_DUPEFILTER_KEY": f"{name}:dupefilter",
        "SCHEDULER_PERSIST": True,  # a process that ends leaves the others' queue
        "REDIS_URL": redis_url,
    }
    if mode == "addon":
        settings |= {
            "ROBOTSTXT_STORE_URI": redis_url,
            "ROBOTSTXT_STORE_PREFIX": f"{name}:store:",
            "ROBOTSTXT_CRAWL_DELAY": False,
        }
    return settings


def run_versus(
    server: SiteServer,
    client: Any,
    redis_url: str,
    proxy: Any,
    processes: int,
    mode: str,
    args: argparse.Namespace,
    profile: str = "",
    counted: bool = False,
) -> dict[str, Any]:
    """One crawl by ``processes`` processes sharing one scrapy-redis queue; its
    figures; ``counted``: each process under callgrind, its instructions too."""
    server.get("/_reset")
    client.config_resetstat()
    if proxy is not None:
        proxy.reset()
    redis_cpu = redis_cpu_s(client)
    name = f"vs-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as barrier, tempfile.TemporaryDirectory() as grind:
        config = {
            "port": server.port,
            "sites": args.sites,
            "pages": args.pages,
            "processes": processes,
            "addon": mode == "addon",
            "settings": versus_settings(mode, redis_url, name),
            "barrier": barrier,
            "dont_filter": False,  # the shared duplicate filter sees every request
            "profile": profile,
            "callgrind": grind if counted else "",
        }
        results = collect(start_processes(server, processes, config))
        instructions = sum(callgrind_total(f) for f in Path(grind).glob("*.callgrind"))
    redis_cpu = redis_cpu_s(client) - redis_cpu
    commands = {
        key.removeprefix("cmdstat_"): int(value["calls"])
        for key, value in client.info("commandstats").items()
    }
    for command in DRIVER_COMMANDS:
        commands.pop(command, None)
    client.flushall()
    fetched = sum(r["fetched"] for r in results)
    dropped = sum(r["dropped"] for r in results)
    errors = sum(r["errors"] for r in results)
    if fetched != args.sites * args.pages or dropped or errors:
        raise SystemExit(
            f"{mode}, {processes} processes: lost pages: {fetched} fetched, "
            f"{dropped} dropped, {errors} errors"
        )
    started = min(r["released"] for r in results)
    ended = max(r["last"] for r in results if "last" in r)  # a process may get no page
    counts = json.loads(server.get("/_count"))
    print(
        f"  {mode}, {processes} process(es), {'via the proxy' if proxy else 'direct'}: "
        f"{fetched / (ended - started):.0f} pages/s",
        file=sys.stderr,
    )
    return {
        "pages_per_s": fetched / (ended - started),
        "robots_per_site": sum(counts.values()) / args.sites,
        "pages": fetched,
        # what the cluster pays in machines: its crawlers' CPU and Redis's, a page
        "cpu_ms_per_page": (sum(r["cpu_s"] for r in results) + redis_cpu) * 1000 / fetched,
        "redis_cpu_ms_per_page": redis_cpu * 1000 / fetched,
        "switches_per_page": sum(r["switches"] for r in results) / fetched,
        "kernel_ms_per_page": sum(r["kernel_s"] for r in results) * 1000 / fetched,
        "first_process_pages": results[0]["fetched"],
        "commands": commands,
        "round_trips": None if proxy is None else proxy.bursts,
        "kinds": {} if proxy is None else dict(proxy.kinds),
        "instructions_per_page": instructions / fetched,
        "store": {
            name: sum(r["stats"].get(f"robotstxt/store/{name}", 0) for r in results)
            for name in ("loaded", "waited", "saved")
        },
    }


#: The crawl of record (sites, pages a site): the goals are for its size.
RECORD_SIZE = (100, 30)


def size_note(args: argparse.Namespace) -> None:
    """Say so when the crawl is not the crawl of record's size."""
    if (args.sites, args.pages) != RECORD_SIZE:
        print(
            f"note: the goals are for the crawl of record, {RECORD_SIZE[0]} sites x "
            f"{RECORD_SIZE[1]} pages; a crawl of another size pays each site's robots.txt "
            "over another number of pages"
        )


def versus_instructions(args: argparse.Namespace) -> int:
    """The add-on against plain scrapy-redis in instructions: each configuration
    once, Redis direct, every crawler process under callgrind (the count does not
    depend on the machine's load or on the cores the processes share)."""
    import redis as redis_client
    from crawl import callgrind_found

    from tests.redis_server import RedisServer

    if not callgrind_found():
        return 2
    print(
        f"python {sys.version.split()[0]}; {args.sites} sites x {args.pages} pages, one "
        "scrapy-redis queue shared by the processes; robots.txt answering "
        f"{'at once' if args.instant_robots else 'after 100-300 ms'}, pages at once; "
        "Crawl-delay off; Redis on 127.0.0.1, directly; each configuration once, every "
        "crawler process under callgrind, counted from the barrier's release to its "
        "crawl's end (every thread, GC included; Redis's own CPU not counted)"
    )
    size_note(args)
    figures: dict[int, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        client = redis_client.Redis.from_url(redis.url)
        server = SiteServer(instant=args.instant_robots)
        try:
            for processes in args.sizes:
                for mode in VERSUS_MODES:
                    figure = run_versus(
                        server, client, redis.url, None, processes, mode, args, counted=True
                    )
                    figures.setdefault(processes, {})[mode] = figure
        finally:
            server.close()
    print(
        f"\n{'processes':>9} {'mode':>6} {'M instructions/page':>20} "
        f"{'robots.txt/site':>16} {'store: loaded':>14} {'waited':>7}"
    )
    for processes, modes in figures.items():
        for mode, figure in modes.items():
            store = figure["store"]
            print(
                f"{processes:>9} {mode:>6} {figure['instructions_per_page'] / 1e6:20.3f} "
                f"{figure['robots_per_site']:16.2f} {store['loaded']:14} {store['waited']:7}"
            )
    print("\nplain scrapy-redis / add-on, instructions per page (as pages/s would be, CPU-bound)")
    for processes, modes in figures.items():
        ratio = modes["plain"]["instructions_per_page"] / modes["addon"]["instructions_per_page"]
        verdict = "met" if ratio >= 0.9 else "NOT met"
        print(f"{versus_label(0.0, processes)}{ratio:.3f}  (goal >= 0.9: {verdict})")
    return 0


def redis_cpu_s(client: Any) -> float:
    """The CPU seconds Redis has used so far (``INFO cpu``: its main thread and the rest)."""
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def versus(args: argparse.Namespace) -> int:
    """The add-on against plain scrapy-redis (see the module docstring)."""
    import redis as redis_client
    from latency_proxy import LatencyProxy

    from tests.redis_server import RedisServer

    latencies = (
        (args.latency_ms,)
        if args.proxy_only
        else (0.0,)
        if args.direct_only
        else (0.0, args.latency_ms)
    )
    proxied = f"through a proxy adding {args.latency_ms:g} ms each way"
    where = (
        "directly only"
        if args.direct_only
        else f"only {proxied}"
        if args.proxy_only
        else f"directly and {proxied}"
    )
    configs = [(ms, p, mode) for ms in latencies for p in args.sizes for mode in VERSUS_MODES]
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, GC on; {args.sites} sites x "
        f"{args.pages} pages, one scrapy-redis queue shared by the processes; robots.txt "
        f"answering {'at once' if args.instant_robots else 'after 100-300 ms'}, pages at "
        f"once; Crawl-delay off; Redis on 127.0.0.1, "
        f"{where}; {args.rounds} "
        f"rounds of every configuration (the order turned each round)"
    )
    size_note(args)
    figures: dict[tuple[float, int, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        client = redis_client.Redis.from_url(redis.url)
        proxy = LatencyProxy(redis.port, args.latency_ms / 1000)
        server = SiteServer(instant=args.instant_robots)
        try:
            for round_ in range(args.rounds):
                for ms, processes, mode in configs if round_ % 2 == 0 else configs[::-1]:
                    via = proxy if ms else None
                    url = proxy.url if ms else redis.url
                    figure = run_versus(server, client, url, via, processes, mode, args)
                    figures.setdefault((ms, processes, mode), []).append(figure)
        finally:
            server.close()
            proxy.close()
    print_versus(figures, latencies)
    return 0


def per_page(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Each Redis command's calls per page over ``runs``."""
    pages = sum(r["pages"] for r in runs)
    total: dict[str, int] = {}
    for run in runs:
        for command, calls in run["commands"].items():
            total[command] = total.get(command, 0) + calls
    return {command: calls / pages for command, calls in total.items()}


def paired(
    figures: dict[tuple[float, int, str], list[dict[str, Any]]],
    ms: float,
    processes: int,
    ratio: Callable[[dict[str, Any], dict[str, Any]], float],
) -> list[float]:
    """Each round's ``ratio(addon_run, plain_run)`` at one latency and size."""
    pairs = zip(figures[(ms, processes, "addon")], figures[(ms, processes, "plain")], strict=True)
    return [ratio(addon, plain) for addon, plain in pairs]


def versus_label(ms: float, processes: int) -> str:
    return f"  {ms:g} ms, {processes} process{'es' if processes > 1 else '  '}: "


def rounds_of(ratios: list[float]) -> str:
    return f"rounds: {', '.join(f'{r:.3f}' for r in ratios)}"


def print_versus(
    figures: dict[tuple[float, int, str], list[dict[str, Any]]], latencies: tuple[float, ...]
) -> None:
    sizes = sorted({processes for _, processes, _ in figures})
    print(
        f"\n{'latency':>7} {'processes':>9} {'mode':>6} {'pages/s':>8} "
        f"{'robots.txt/site':>16} {'commands/page':>14} {'round trips/page':>17} "
        f"{'CPU ms/page':>12} {'of it Redis':>12} {'kernel ms':>9} {'switches/page':>14}"
    )
    for ms in latencies:
        for processes in sizes:
            for mode in VERSUS_MODES:
                runs = figures[(ms, processes, mode)]
                trips = [r["round_trips"] / r["pages"] for r in runs if r["round_trips"]]
                print(
                    f"{ms:5g} ms {processes:>9} {mode:>6} "
                    f"{statistics.median(r['pages_per_s'] for r in runs):8.0f} "
                    f"{statistics.median(r['robots_per_site'] for r in runs):16.2f} "
                    f"{sum(per_page(runs).values()):14.2f} "
                    f"{f'{statistics.median(trips):.2f}' if trips else '-':>17} "
                    f"{statistics.median(r['cpu_ms_per_page'] for r in runs):12.3f} "
                    f"{statistics.median(r['redis_cpu_ms_per_page'] for r in runs):12.3f} "
                    f"{statistics.median(r['kernel_ms_per_page'] for r in runs):9.3f} "
                    f"{statistics.median(r['switches_per_page'] for r in runs):14.2f}"
                )
    print("\nadd-on / plain scrapy-redis, pages/s (median of the rounds' paired ratios)")
    for ms in latencies:
        for processes in sizes:
            ratios = paired(
                figures, ms, processes, lambda a, b: a["pages_per_s"] / b["pages_per_s"]
            )
            ratio = statistics.median(ratios)
            goal = f"goal >= 0.9: {'met' if ratio >= 0.9 else 'NOT met'}; "
            print(f"{versus_label(ms, processes)}{ratio:.3f}  ({goal}{rounds_of(ratios)})")
    print(
        "(the table's figures are each configuration's medians; each ratio is the "
        "median of the rounds' own ratios)"
    )
    print(
        "\nplain scrapy-redis / add-on, CPU per page (the crawlers' and Redis's: what the "
        "cluster pays in machines, whatever the cores it shares; median of the paired ratios)"
    )
    for ms in latencies:
        for processes in sizes:
            ratios = paired(
                figures, ms, processes, lambda a, b: b["cpu_ms_per_page"] / a["cpu_ms_per_page"]
            )
            median = statistics.median(ratios)
            print(f"{versus_label(ms, processes)}{median:.3f}  ({rounds_of(ratios)})")
    print(
        "\nRedis per page, the add-on (goal: at most 1 round trip per request on average "
        "beyond plain scrapy-redis's own; commands from INFO commandstats, round trips "
        "counted at the proxy as the clients' request bursts: a pipeline or MULTI/EXEC "
        "is one; pooled over the rounds, where the table gives their medians)"
    )
    for ms in latencies:
        for processes in sizes:
            runs = figures[(ms, processes, "addon")]
            commands = per_page(runs)
            plain = sum(per_page(figures[(ms, processes, "plain")]).values())
            top = sorted(commands.items(), key=lambda item: -item[1])[:5]
            line = (
                f"  {ms:g} ms, {processes} process{'es' if processes > 1 else '  '}: "
                f"commands {sum(commands.values()):.2f} (plain {plain:.2f})"
            )
            if runs[0]["round_trips"] is not None:
                trips = sum(r["round_trips"] for r in runs) / sum(r["pages"] for r in runs)
                plain_runs = figures[(ms, processes, "plain")]
                plain_trips = sum(r["round_trips"] for r in plain_runs) / sum(
                    r["pages"] for r in plain_runs
                )
                added = trips - plain_trips
                line += (
                    f"; round trips {trips:.2f} (plain {plain_trips:.2f}; added by the "
                    f"add-on {added:.2f}, goal <= 1: {'met' if added <= 1 else 'NOT met'})"
                )
            print(line)
            print("      top 5: " + ", ".join(f"{c} {n:.2f}" for c, n in top))
            if runs[0]["round_trips"] is not None:
                added_kinds = kinds_added(runs, figures[(ms, processes, "plain")])
                print("      round trips added, by first command: " + added_kinds)


def script_names() -> dict[str, str]:
    """The first 8 digits of the SHA1 of each Lua script of the package: its name."""
    import hashlib
    import importlib

    names = {}
    for module_name in (
        "scrapy_rfc9309.components.crawl._redis_queue",
        "scrapy_rfc9309.sites._cluster_clock",
        "scrapy_rfc9309.sites._redis_leases",
        "scrapy_rfc9309.sites._redis_records",
        "scrapy_rfc9309.sites._redis_store",
        "scrapy_rfc9309.sites._redis_tdmrep",
    ):
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, str) and "redis.call" in value:
                sha = hashlib.sha1(value.encode()).hexdigest()[:8]
                names[sha] = f"{module_name.rsplit('.', 1)[1]}.{name}"
    return names


def kinds_added(addon: list[dict[str, Any]], plain: list[dict[str, Any]]) -> str:
    """The round trips per page the add-on makes beyond plain scrapy-redis's, by
    their first command (scripts named), the largest first."""
    names = script_names()

    def per_page(runs: list[dict[str, Any]]) -> dict[str, float]:
        pages = sum(r["pages"] for r in runs)
        total: dict[str, int] = {}
        for run in runs:
            for kind, count in run["kinds"].items():
                if kind.startswith("EVALSHA "):
                    kind = names.get(kind.split()[1], kind)
                total[kind] = total.get(kind, 0) + count
        return {kind: count / pages for kind, count in total.items()}

    ours, theirs = per_page(addon), per_page(plain)
    added = {kind: ours.get(kind, 0.0) - theirs.get(kind, 0.0) for kind in ours.keys() | theirs}
    ranked = sorted(added.items(), key=lambda item: -abs(item[1]))
    return ", ".join(f"{kind} {value:+.2f}" for kind, value in ranked if abs(value) >= 0.01)


def versus_profile(args: argparse.Namespace) -> int:
    """The add-on at 2 processes, Redis direct, process 0 under cProfile: where its
    Redis calls on the reactor thread come from."""
    import redis as redis_client

    from tests.redis_server import RedisServer

    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        client = redis_client.Redis.from_url(redis.url)
        server = SiteServer()
        try:
            figure = run_versus(
                server, client, redis.url, None, 2, "addon", args, profile=args.profile
            )
        finally:
            server.close()
    print(
        f"add-on, 2 processes, {args.sites} sites x {args.pages} pages: "
        f"{figure['pages_per_s']:.0f} pages/s; process 0's profile in {args.profile}"
    )
    print_redis_callers(args.profile, figure["first_process_pages"])
    return 0


def print_redis_callers(path: str, pages: int) -> None:
    """The first callers outside redis-py of its round trips on the profiled (reactor)
    thread: ``Redis.execute_command`` (one command) and ``Pipeline.execute``; for a
    caller in scrapy-redis, its own callers too."""
    import pstats

    import redis.client

    entries = {
        (redis.client.__file__, fn.__code__.co_firstlineno, fn.__name__)
        for fn in (redis.client.Redis.execute_command, redis.client.Pipeline.execute)
    }
    table: Any = pstats.Stats(path).stats  # type: ignore[attr-defined]
    inside = f"{os.sep}redis{os.sep}"
    found: dict[tuple[str, int, str], dict[str, int]] = {}
    for entry in entries:
        if entry not in table:
            continue
        todo = [(entry, caller, edge[1]) for caller, edge in table[entry][4].items()]
        seen = set()
        while todo:
            callee, caller, calls = todo.pop()
            if (callee, caller) in seen:
                continue
            seen.add((callee, caller))
            if inside in caller[0] and caller in table:  # redis-py itself: go up
                todo.extend((caller, up, edge[1]) for up, edge in table[caller][4].items())
                continue
            kind = "pipeline" if entry[2] == "execute" else "command"
            row = found.setdefault(caller, {})
            row[kind] = row.get(kind, 0) + calls
    print(f"\nRedis round trips on the reactor thread of process 0 ({pages} pages), by caller")
    for caller, kinds in sorted(found.items(), key=lambda item: -sum(item[1].values())):
        what = ", ".join(f"{n} {kind}s ({n / pages:.2f}/page)" for kind, n in kinds.items())
        print(f"  {where_of(caller)}: {what}")
        if f"{os.sep}scrapy_redis{os.sep}" in caller[0] and caller in table:
            for up, edge in sorted(table[caller][4].items(), key=lambda item: -item[1][1]):
                print(f"      called {edge[1]} times by {where_of(up)}")


def where_of(function: tuple[str, int, str]) -> str:
    """``file:line name`` of a profiled function, the file short."""
    path = function[0].split(f"site-packages{os.sep}")[-1].replace(str(ROOT) + os.sep, "")
    return f"{path}:{function[1]} {function[2]}"


def at_least_one(text: str) -> int:
    """An argument that is a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def process_counts(text: str) -> tuple[int, ...]:
    """``--sizes``: distinct numbers of processes, each at least 1 (``4``, ``1,2,4``)."""
    try:
        counts = tuple(at_least_one(part.strip()) for part in text.split(","))
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (give such as 4 or 1,2,4)") from None
    if len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"a number of processes given twice: {text!r}")
    return counts


#: Options of ``--versus-scrapy-redis`` only (their defaults say "not given").
VERSUS_ONLY = ("latency_ms", "direct_only", "instant_robots", "proxy_only", "sizes")
#: Options that ``--instructions`` (each configuration once, Redis direct) has no use for.
NOT_COUNTED = ("latency_ms", "proxy_only", "rounds", "profile")


def parse_args() -> argparse.Namespace:
    """The command line, checked: an option given where it does nothing is an error."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=at_least_one, default=100)
    parser.add_argument(
        "--pages",
        type=at_least_one,
        default=None,
        help="pages per site (8; --versus-scrapy-redis: 10)",
    )
    parser.add_argument(
        "--rounds", type=at_least_one, default=None, help="3 (--versus-scrapy-redis: 2)"
    )
    parser.add_argument(
        "--politeness", action="store_true", help="Crawl-delay across 1, 2, 4, 8 processes"
    )
    parser.add_argument("--crawl-delay", type=float, default=None, help="0.5 s; --stall: 1 s")
    parser.add_argument(
        "--stall", action="store_true", help="Redis stopped (SIGSTOP) for a while mid-crawl"
    )
    parser.add_argument("--stall-seconds", type=float, default=5.0)
    parser.add_argument(
        "--processes", type=at_least_one, default=4, help="--stall: crawler processes"
    )
    parser.add_argument(
        "--versus-scrapy-redis",
        action="store_true",
        help="the add-on against plain scrapy-redis, one shared queue",
    )
    parser.add_argument(
        "--latency-ms", type=float, default=None, help="--versus-scrapy-redis: added each way (2)"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--direct-only",
        action="store_true",
        help="--versus-scrapy-redis: only the runs with Redis direct (no proxy)",
    )
    where.add_argument(
        "--proxy-only",
        action="store_true",
        help="--versus-scrapy-redis: only the runs behind the proxy (round trips counted)",
    )
    parser.add_argument(
        "--instant-robots",
        action="store_true",
        help="--versus-scrapy-redis: robots.txt answering at once (the add-on's CPU alone)",
    )
    parser.add_argument(
        "--sizes",
        type=process_counts,
        default=None,
        help="--versus-scrapy-redis: the numbers of processes, such as 4 or 1,2 (1,2,4)",
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument(
        "--instructions",
        action="store_true",
        help="--versus-scrapy-redis: each configuration once under callgrind, Redis direct "
        "(instructions per page; needs valgrind)",
    )
    how.add_argument(
        "--profile",
        default="",
        help="--versus-scrapy-redis: profile the add-on at 2 processes into this file",
    )
    args = parser.parse_args()
    given = [name for name in (*VERSUS_ONLY, "instructions", "profile") if _given(args, name)]
    if given and not args.versus_scrapy_redis:
        parser.error(f"{_options(given)}: only with --versus-scrapy-redis")
    if args.instructions and (pointless := [n for n in NOT_COUNTED if _given(args, n)]):
        parser.error(f"{_options(pointless)}: not with --instructions (once each, Redis direct)")
    args.latency_ms = 2.0 if args.latency_ms is None else args.latency_ms
    args.sizes = PROCESSES if args.sizes is None else args.sizes
    return args


def _given(args: argparse.Namespace, name: str) -> bool:
    return getattr(args, name) not in (None, False, "")


def _options(names: list[str]) -> str:
    return ", ".join("--" + name.replace("_", "-") for name in names)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(Path(sys.argv[2]), *sys.argv[3:5])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "crawl":
        crawl(json.loads(sys.argv[2]))
        return 0
    args = parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.redis_server import redis_server_binary

    if redis_server_binary() is None:
        print("redis-server not found (apt-get install redis-server)", file=sys.stderr)
        return 2
    if args.versus_scrapy_redis:
        args.pages = 10 if args.pages is None else args.pages
        args.rounds = 2 if args.rounds is None else args.rounds
        try:
            import scrapy_redis  # noqa: F401
        except ImportError:
            print("scrapy-redis not found (pip install scrapy-redis)", file=sys.stderr)
            return 2
        if args.instructions:
            return versus_instructions(args)
        return versus_profile(args) if args.profile else versus(args)
    args.pages = 8 if args.pages is None else args.pages
    args.rounds = 3 if args.rounds is None else args.rounds
    if args.stall:
        return stall(args)
    if args.crawl_delay is None:
        args.crawl_delay = 0.5
    if args.politeness:
        return politeness(args)
    from tests.redis_server import RedisServer

    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.sites} sites x "
        f"{args.pages} pages dealt out to the processes; robots.txt answering after "
        f"100-300 ms; {args.rounds} rounds"
    )
    figures: dict[tuple[int, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        server = SiteServer()
        try:
            for _ in range(args.rounds):
                for processes in PROCESSES:
                    for mode in ("store", "none"):
                        store = (
                            {
                                "ROBOTSTXT_STORE_URI": redis.url,
                                "ROBOTSTXT_STORE_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:",
                            }
                            if mode == "store"
                            else {}
                        )
                        figure = run_cluster(server, processes, args.sites, args.pages, store)
                        figures.setdefault((processes, mode), []).append(figure)
        finally:
            server.close()
    print(f"\n{'processes':>9} {'store':>6} {'pages/s':>8} {'robots.txt/site':>16}")
    for processes in PROCESSES:
        for mode in ("store", "none"):
            runs = figures[(processes, mode)]
            print(
                f"{processes:>9} {mode:>6} "
                f"{statistics.median(r['pages_per_s'] for r in runs):8.0f} "
                f"{statistics.median(r['robots_per_site'] for r in runs):16.2f}"
            )
    print("\nstore / none (median of the paired ratios of each round)")
    for processes in PROCESSES:
        pairs = zip(figures[(processes, "store")], figures[(processes, "none")], strict=True)
        speed, robots = [], []
        for store_run, none_run in pairs:
            speed.append(store_run["pages_per_s"] / none_run["pages_per_s"])
            robots.append(store_run["robots_per_site"] / none_run["robots_per_site"])
        print(
            f"    {processes} process{'es' if processes > 1 else '  '}: pages/s "
            f"{statistics.median(speed):.3f}, robots.txt downloads {statistics.median(robots):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

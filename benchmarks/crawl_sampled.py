"""Where (a)'s time goes: the crawls of benchmark (a), sampled.

Each round runs the crawl of ``crawl.py throughput`` (SITES x PAGES pages,
the same local server and corpus files) once in each mode (``off``,
``floor``, ``ours``, ``builtin``; the order turned each round). Each crawl
reports its pages per second, its CPU per page, the asyncio loop's turns
per page, the garbage collector's time and young collections, its peak
RSS and the most requests its scheduler held at once. With ``py-spy``
installed (``pip install py-spy``; not a dependency), each crawl runs
under ``py-spy record --nonblocking`` (a sampling profiler in another
process: the crawl is not slowed), and the share of its samples spent in
the handler's frames (``scrapy_rfc9309``; ``floor_components`` for
``floor``; Scrapy's ``robotstxt`` middleware and Protego for ``builtin``) is
printed, with its outermost frames that took the most (samples outside
the reactor's loop left out). Everything a handler's frame calls counts
in its frames; what Scrapy does for it outside them (its robots.txt
downloads) does not. Its own work is that, less what its frames wrap (a
spider middleware's ``process_spider_output`` iterates the spider's
callback and the middlewares after it inside its own frame).

With ``--native``, py-spy also reads the C stack (``py-spy record
--native``, which pauses the crawl at each sample: its pages per second are
then not the figures, its shares are). A sample in CPython's garbage
collector (``gc_collect_main``) is then told apart: a collection runs in
whatever frame allocated last, so a handler's frames can hold a full
collection of the whole crawl's objects (tens of milliseconds) by chance.
Each handler's share is then its own work with garbage collection left out
too. Ours is also split by role: the page directives (``components/pages``) and the
robots.txt handling (everything else: queue, middleware, fetches).

Usage: ``python benchmarks/crawl_sampled.py [--sites N] [--pages N]
[--rounds N] [--rate HZ] [--native]``. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from crawl import ROOT, Server, pick_robots  # noqa: E402

MODES = ("off", "floor", "ours", "builtin")
#: How each mode's robots.txt handler's frames are told apart (py-spy's file names).
MARKERS = {
    "off": ("scrapy_rfc9309",),
    "floor": ("floor_components",),
    "ours": ("scrapy_rfc9309",),
    "builtin": ("downloadermiddlewares/robotstxt.py", "protego"),
}
OPTIONS = {"loop_turns": True, "gc_time": True, "scheduler_peak": True}
#: Frames of the chain a spider middleware's output wraps (the spider's
#: callback, Scrapy's scraper and spider middlewares): not the handler's work.
WRAPPED = ("crawl.py:3", "crawl.py:4", "spidermiddlewares/", "core/spidermw.py", "core/scraper.py")
#: A sample in CPython's garbage collector (seen with ``--native`` only).
IN_GC = "gc_collect_main"
#: The reactor's loop (asyncio's, or Twisted's own): samples outside it are
#: start-up and shut-down, left out.
IN_LOOP = ("run_forever", "mainLoop")


def sampled_crawl(
    mode: str, port: int, sites: int, pages: int, rate: int, out: Path, native: bool = False
) -> Any:
    """One crawl of ``crawl.py``, under py-spy when it is installed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    command = [sys.executable, str(HERE / "crawl.py"), "crawl", mode, str(port), str(sites)]
    command += [str(pages), json.dumps(OPTIONS)]
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if Path(spy).exists():
        how = "--native" if native else "--nonblocking"
        command = [spy, "record", how, "-r", str(rate), "-f", "raw", "-o", str(out),
                   "--", *command]  # fmt: skip
    done = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True, check=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1])


def handler_share(samples: Path, markers: tuple[str, ...]) -> dict[str, Any]:
    """What a crawl's samples (in the reactor's loop) say of its handler (a
    frame naming one of ``markers``): ``share``, the samples with one of its
    frames; ``own``, those neither in the garbage collector nor in the chain
    its frames wrap (:data:`WRAPPED`); ``gc``, all samples in the garbage
    collector (``--native`` only); ``pages``, the ``own`` samples of the page
    directives; ``top``, its outermost frames taking the most ``own`` samples."""
    total = mine = own = pages = in_gc = 0
    frames: collections.Counter[str] = collections.Counter()
    for line in samples.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        calls = stack.split(";")
        if not count.isdigit() or not any(loop in call for call in calls for loop in IN_LOOP):
            continue
        weight = int(count)
        total += weight
        collecting = any(IN_GC in call for call in calls)
        in_gc += weight if collecting else 0
        handler = [
            index
            for index, call in enumerate(calls)
            if ".py:" in call and any(marker in call for marker in markers)
        ]
        if not handler:
            continue
        mine += weight
        wrapped = any(marker in call for call in calls[handler[-1] + 1 :] for marker in WRAPPED)
        if collecting or wrapped:
            continue
        own += weight
        outermost = calls[handler[0]]
        if "components/pages/" in outermost:
            pages += weight
        frames[outermost.split(" (")[0]] += weight
    if not total:
        return {"share": 0.0, "own": 0.0, "gc": 0.0, "pages": 0.0, "top": []}
    return {
        "share": mine / total,
        "own": own / total,
        "gc": in_gc / total,
        "pages": pages / total,
        "top": frames.most_common(6),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", type=int, default=400, help="py-spy samples per second")
    parser.add_argument(
        "--native",
        action="store_true",
        help="read the C stack too (the garbage collector told apart; the crawl is paused "
        "at each sample, so its pages per second are not the figures)",
    )
    args = parser.parse_args()
    server = Server(pick_robots("throughput", args.sites))
    rows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    folder = Path(tempfile.mkdtemp(prefix="crawl-sampled-"))
    try:
        for round_ in range(args.rounds):
            order = MODES[round_ % len(MODES) :] + MODES[: round_ % len(MODES)]
            for mode in order:
                out = folder / f"{mode}-{round_}.txt"
                result = sampled_crawl(
                    mode, server.port, args.sites, args.pages, args.rate, out, args.native
                )
                pages = result["fetched"]
                assert pages == args.sites * args.pages, result
                shares = handler_share(out, MARKERS[mode]) if out.exists() else None
                rows[mode].append(
                    {
                        "rate": pages / result["elapsed_to_last_response"],
                        "cpu": result["cpu_s"] * 1000 / pages,
                        "turns": result["loop_turns"] / pages,
                        "gc": sum(result["gc_s"]),
                        "young": result["gc_runs"][0],
                        "rss": result["rss_peak_kib"] / 1024,
                        "queued": result.get("scheduler_peak", 0),
                        "shares": shares,
                    }
                )
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    sampled = any(row["shares"] is not None for runs in rows.values() for row in runs)
    print(
        f"(a) sampled: {args.sites} sites x {args.pages} pages, {args.rounds} round(s) (medians)"
        + (", the C stack read (--native)" if args.native else "")
        + ("" if sampled else "; py-spy not found: the crawls ran unsampled (pip install py-spy)")
    )
    for mode in MODES:
        runs = rows[mode]

        def median(key: str, runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(run[key] for run in runs)

        read = [run["shares"] for run in runs if run["shares"] is not None]
        sampled = ""
        if read:

            def share(key: str, read: list[dict[str, Any]] = read) -> float:
                return statistics.median(shares[key] for shares in read)

            sampled = (
                f", {share('share'):.1%} of samples in its frames, {share('own'):.1%} its own work"
            )
            if args.native:
                sampled += f" (GC {share('gc'):.1%} of the loop's samples)"
            if mode == "ours":
                sampled += (
                    f"; page directives {share('pages'):.1%}, "
                    f"robots.txt handling {share('own') - share('pages'):.1%}"
                )
        print(
            f"    {mode:<8} {median('rate'):5.0f} pages/s, {median('cpu'):.3f} ms CPU a page, "
            f"{median('turns'):.2f} loop turns a page, GC {median('gc'):.2f} s "
            f"({median('young'):.0f} young), {median('rss'):.0f} MB, "
            f"scheduler at most {median('queued'):.0f}{sampled}"
        )
        last = runs[-1]["shares"]
        if mode != "off" and last is not None and last["top"]:
            top = ", ".join(f"{name} {count}" for name, count in last["top"])
            print(f"        its own work's outermost frames (last round): {top}")
    if args.native:
        print(
            "    (--native pauses each crawl at every sample: the pages per second, CPU "
            "and ratios are not figures; the shares are)"
        )
    for other in ("off", "floor", "builtin"):
        ratios = [o["rate"] / t["rate"] for o, t in zip(rows["ours"], rows[other], strict=True)]
        cpu = [t["cpu"] / o["cpu"] for o, t in zip(rows["ours"], rows[other], strict=True)]
        print(
            f"    ours / {other:<8} {statistics.median(ratios):.3f} pages/s, "
            f"{statistics.median(cpu):.3f} by CPU a page"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
printed, with its outermost frames that took the most, start-up imports left
out. Everything a handler's frame calls counts as its own; what Scrapy does
for it outside them (its robots.txt downloads, the garbage collector) does
not.

Usage: ``python benchmarks/crawl_sampled.py [--sites N] [--pages N]
[--rounds N] [--rate HZ]``. Nothing leaves 127.0.0.1.
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


def sampled_crawl(mode: str, port: int, sites: int, pages: int, rate: int, out: Path) -> Any:
    """One crawl of ``crawl.py``, under py-spy when it is installed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
    command = [sys.executable, str(HERE / "crawl.py"), "crawl", mode, str(port), str(sites)]
    command += [str(pages), json.dumps(OPTIONS)]
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if Path(spy).exists():
        command = [spy, "record", "--nonblocking", "-r", str(rate), "-f", "raw", "-o", str(out),
                   "--", *command]  # fmt: skip
    done = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True, check=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1])


def handler_share(samples: Path, markers: tuple[str, ...]) -> tuple[float, list[tuple[str, int]]]:
    """The share of the samples (start-up imports left out) with a frame of the
    handler (a frame naming one of ``markers``), and its outermost frames that
    took the most."""
    total = 0
    ours = 0
    frames: collections.Counter[str] = collections.Counter()
    for line in samples.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        calls = stack.split(";")
        if any("importlib" in call for call in calls):
            continue
        total += int(count)
        mine = [call for call in calls if any(marker in call for marker in markers)]
        if mine:
            ours += int(count)
            frames[mine[0].split(" (")[0]] += int(count)
    return (ours / total if total else 0.0), frames.most_common(6)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", type=int, default=400, help="py-spy samples per second")
    args = parser.parse_args()
    server = Server(pick_robots("throughput", args.sites))
    rows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    folder = Path(tempfile.mkdtemp(prefix="crawl-sampled-"))
    try:
        for round_ in range(args.rounds):
            order = MODES[round_ % len(MODES) :] + MODES[: round_ % len(MODES)]
            for mode in order:
                out = folder / f"{mode}-{round_}.txt"
                result = sampled_crawl(mode, server.port, args.sites, args.pages, args.rate, out)
                pages = result["fetched"]
                assert pages == args.sites * args.pages, result
                share, top = handler_share(out, MARKERS[mode]) if out.exists() else (None, [])
                rows[mode].append(
                    {
                        "rate": pages / result["elapsed_to_last_response"],
                        "cpu": result["cpu_s"] * 1000 / pages,
                        "turns": result["loop_turns"] / pages,
                        "gc": sum(result["gc_s"]),
                        "young": result["gc_runs"][0],
                        "rss": result["rss_peak_kib"] / 1024,
                        "queued": result.get("scheduler_peak", 0),
                        "share": share,
                        "top": top,
                    }
                )
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    sampled = any(row["share"] is not None for runs in rows.values() for row in runs)
    print(
        f"(a) sampled: {args.sites} sites x {args.pages} pages, {args.rounds} rounds (medians)"
        + ("" if sampled else "; py-spy not found: the crawls ran unsampled (pip install py-spy)")
    )
    for mode in MODES:
        runs = rows[mode]

        def median(key: str, runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(run[key] for run in runs)

        shares = [run["share"] for run in runs if run["share"] is not None]
        sampled = f", {statistics.median(shares):.1%} of samples in its frames" if shares else ""
        print(
            f"    {mode:<8} {median('rate'):5.0f} pages/s, {median('cpu'):.3f} ms CPU a page, "
            f"{median('turns'):.2f} loop turns a page, GC {median('gc'):.2f} s "
            f"({median('young'):.0f} young), {median('rss'):.0f} MB, "
            f"scheduler at most {median('queued'):.0f}{sampled}"
        )
        if mode != "off" and runs[-1]["top"]:
            top = ", ".join(f"{name} {count}" for name, count in runs[-1]["top"])
            print(f"        its frames taking the most samples (last round): {top}")
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

"""Store benchmark: the crawl with a SQLite robots.txt store against the in-memory crawl.

Same sites, same run, each crawl in its own process (``crawl.py``'s server
and crawl process: every ``s<N>.test`` host on 127.0.0.1, the corpus files
as robots.txt). Each round runs, back to back:

* ``memory`` - the add-on, no store (the default);
* ``cold``   - the add-on with ``ROBOTSTXT_STORE_URI`` on a new SQLite file:
  every site looked up, leased, fetched and saved;
* ``warm``   - the same again on the file ``cold`` filled: every robots.txt
  taken from the store, none downloaded.

Printed: pages per second of each (median over rounds), the medians of the
paired ratios ``cold / memory`` and ``warm / memory`` (goal >= 0.95), and the
longest reactor block of each (a 5 ms ``LoopingCall`` probe's worst
lateness, as in ``crawl.py``'s measure c), with the median of the paired
differences from the in-memory crawl: what the store adds (its calls run on
a worker thread, so it should add nothing beyond noise), and the TCP
connections the server accepted during each crawl (median): a crawl that
hands out one host's backlog in a run opens a connection per request.
GC on. Nothing leaves 127.0.0.1.

Usage::

    python benchmarks/store.py [--sites N] [--pages N] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl import Server, corpus_missing, pick_robots, run_crawl

MODES = ("memory", "cold", "warm")


def one_round(server: Server, sites: int, pages: int, directory: Path) -> dict[str, dict[str, Any]]:
    uri = f"sqlite:///{directory / 'robots.db'}"
    results = {}
    for mode in MODES:
        options: dict[str, Any] = {}
        if mode != "memory":
            options["settings"] = {"ROBOTSTXT_STORE_URI": uri}
        before = server.connections()
        result = run_crawl("ours", server.port, sites, pages, **options)
        result["connections"] = server.connections() - before
        assert result.get("fetched", 0) == sites * pages, (mode, result)
        result["rate"] = result["fetched"] / result["elapsed_to_last_response"]
        results[mode] = result
    return results


def store(sites: int, pages: int, rounds: int) -> None:
    print(
        f"\nstore: {sites} sites x {pages} pages, SQLite store against in memory, "
        f"{rounds} paired rounds"
    )
    server = Server(pick_robots("throughput", sites))
    try:
        runs = []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as directory:
                runs.append(one_round(server, sites, pages, Path(directory)))
        for mode in MODES:
            rate = statistics.median(run[mode]["rate"] for run in runs)
            block = max(run[mode]["max_block_ms"] for run in runs)
            opened = statistics.median(run[mode]["connections"] for run in runs)
            print(
                f"    {mode:<7} {rate:>8.0f} pages/s   longest reactor block {block:>6.1f} ms"
                f"   {opened:>6.0f} connections"
            )
        for mode in ("cold", "warm"):
            ratio = statistics.median(run[mode]["rate"] / run["memory"]["rate"] for run in runs)
            print(f"    {mode} / memory  {ratio:.3f}  (median of paired ratios; goal >= 0.95)")
        for mode in ("cold", "warm"):
            extra = statistics.median(
                run[mode]["max_block_ms"] - run["memory"]["max_block_ms"] for run in runs
            )
            print(
                f"    {mode}: longest reactor block minus the in-memory crawl's, "
                f"median of paired rounds: {extra:+.1f} ms"
            )
    finally:
        server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if (missing := corpus_missing()) is not None:
        print(missing, file=sys.stderr)
        return 2
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    store(args.sites, args.pages, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Parser benchmark: scrapy_rfc9309.RobotsTxt against Protego, in one run.

Measures on the real-world corpus (``../shared/corpus``, or
``$ROBOTSTXT_CORPUS``), alternating the two parsers over several rounds:

* parse throughput (MB/s) over every corpus file;
* ``allowed()`` throughput over the real URLs of ``urls/anubhav_bench``;
* retained memory per parsed file (tracemalloc), after parsing and after one
  check (our matcher is compiled on first use);
* three hostile files: many agents in one group, 20,000 wildcard rules.

Protego is given bodies decoded as Scrapy decodes them (``utf-8``, errors
ignored), which is the work Scrapy does before calling it.

Usage: ``python benchmarks/parser.py [--rounds N]``. Prints ratios (ours vs
Protego, higher is better for us); no network.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from protego import Protego

from scrapy_rfc9309 import RobotsTxt

CORPUS = Path(
    os.environ.get("ROBOTSTXT_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus")
)
AGENT = "ExampleBot"


def load_corpus() -> tuple[list[bytes], list[tuple[bytes, list[str]]]]:
    files = sorted(p for p in CORPUS.glob("*/*.txt") if p.parent.name != "urls")
    bodies = [path.read_bytes() for path in files]
    with_urls = []
    for url_file in sorted((CORPUS / "urls" / "anubhav_bench").glob("*.txt")):
        robots = CORPUS / "anubhav_bench" / url_file.name
        urls = [u for u in url_file.read_text(errors="replace").splitlines() if u.strip()]
        if robots.exists() and urls:
            with_urls.append((robots.read_bytes(), urls))
    return bodies, with_urls


def protego_parse(body: bytes) -> Protego:
    return Protego.parse(body.decode("utf-8", errors="ignore"))


def ours_parse(body: bytes) -> RobotsTxt:
    return RobotsTxt.parse(body)


def best_of(
    rounds: int, ours: Callable[[], object], theirs: Callable[[], object]
) -> tuple[float, float]:
    """Best wall time of each, alternating so both see the same machine state."""
    ours_times, theirs_times = [], []
    for _ in range(rounds):
        for call, times in ((ours, ours_times), (theirs, theirs_times)):
            gc.collect()
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
    return min(ours_times), min(theirs_times)


def retained_bytes(build: Callable[[], list[object]]) -> int:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return after - before


def report(name: str, ours: float, theirs: float, unit: str, higher_is_better: bool) -> None:
    """One line: both figures and the ratio, where above 1 means ours is better."""
    ratio = ours / theirs if higher_is_better else theirs / ours
    print(
        f"{name:<44} ours {ours:>12,.1f} {unit:<10} "
        f"protego {theirs:>12,.1f} {unit:<10} ratio {ratio:>7.2f}x"
    )


def hostile_files() -> dict[str, bytes]:
    rng = random.Random(9309)
    names = ["".join(rng.choice("abcdefgh") for _ in range(10)) for _ in range(2000)]
    agents = "".join(f"User-agent: bot-{name}\n" for name in names)
    rules = "".join(f"Disallow: /p{i}/\n" for i in range(2000))
    words = ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(20_000)]
    wildcards = "User-agent: *\n" + "".join(f"Disallow: /*{w}*.php$\n" for w in words)
    return {
        "2,000 agents x 2,000 rules": (agents + rules).encode(),
        "20,000 wildcard rules": wildcards.encode()[:512_000],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}; set ROBOTSTXT_CORPUS", file=sys.stderr)
        return 2
    bodies, with_urls = load_corpus()
    total_mb = sum(len(b) for b in bodies) / 1e6
    url_count = sum(len(urls) for _, urls in with_urls)
    sites = len(with_urls)
    print(f"corpus: {len(bodies)} files, {total_mb:.1f} MB; {sites} sites with {url_count} URLs")
    print(f"python {sys.version.split()[0]}, rounds {args.rounds} (best of each)\n")

    ours_t, theirs_t = best_of(
        args.rounds,
        lambda: [ours_parse(b) for b in bodies],
        lambda: [protego_parse(b) for b in bodies],
    )
    report("parse throughput", total_mb / ours_t, total_mb / theirs_t, "MB/s", True)

    ours_parsed = [(ours_parse(b), urls) for b, urls in with_urls]
    theirs_parsed = [(protego_parse(b), urls) for b, urls in with_urls]
    for robots, urls in ours_parsed:  # compile the matcher, as a crawl does on its first request
        robots.allowed(url=urls[0], agent=AGENT)
    for robots, urls in theirs_parsed:
        robots.can_fetch(urls[0], AGENT)

    def ours_checks() -> None:
        for robots, urls in ours_parsed:
            for url in urls:
                robots.allowed(url=url, agent=AGENT)

    def theirs_checks() -> None:
        for robots, urls in theirs_parsed:
            for url in urls:
                robots.can_fetch(url, AGENT)

    ours_t, theirs_t = best_of(args.rounds, ours_checks, theirs_checks)
    report(
        "allowed() throughput", url_count / ours_t / 1e3, url_count / theirs_t / 1e3, "k/s", True
    )

    agreements = sum(
        ours.allowed(url=url, agent=AGENT) == theirs.can_fetch(url, AGENT)
        for (ours, urls), (theirs, _) in zip(ours_parsed, theirs_parsed, strict=True)
        for url in urls
    )
    print(f"{'(verdicts equal to Protego on real URLs)':<44} {agreements / url_count:.2%}")

    def ours_kept() -> list[object]:
        return [ours_parse(b) for b in bodies]

    def ours_kept_compiled() -> list[object]:
        kept = [ours_parse(b) for b in bodies]
        for robots in kept:
            robots.allowed(url="/", agent=AGENT)
        return kept

    def theirs_kept() -> list[object]:
        kept = [protego_parse(b) for b in bodies]
        for robots in kept:
            robots.can_fetch("/", AGENT)
        return kept

    def theirs_kept_parsed() -> list[object]:
        return [protego_parse(b) for b in bodies]

    def per_file_kb(build: Callable[[], list[object]]) -> float:
        return retained_bytes(build) / len(bodies) / 1e3

    ours_kb, theirs_kb = per_file_kb(ours_kept), per_file_kb(theirs_kept_parsed)
    report("retained memory per file (parsed)", ours_kb, theirs_kb, "KB", False)
    ours_kb, theirs_kb = per_file_kb(ours_kept_compiled), per_file_kb(theirs_kept)
    report("retained memory per file (after a check)", ours_kb, theirs_kb, "KB", False)

    print()
    urls = [f"/p{i}/{'abcdefgh'[i % 8]}x.php" for i in range(200)]
    for name, body in hostile_files().items():
        ours_t, theirs_t = best_of(1, lambda b=body: ours_parse(b), lambda b=body: protego_parse(b))
        report(f"hostile parse: {name}", ours_t * 1e3, theirs_t * 1e3, "ms", False)
        ours_robots, theirs_robots = ours_parse(body), protego_parse(body)
        ours_robots.allowed(url="/", agent="bot")
        ours_t, theirs_t = best_of(
            1,
            lambda r=ours_robots: [r.allowed(url=u, agent="bot") for u in urls],
            lambda r=theirs_robots: [r.can_fetch(u, "bot") for u in urls],
        )
        report(
            f"hostile check: {name}",
            ours_t / len(urls) * 1e6,
            theirs_t / len(urls) * 1e6,
            "us/check",
            False,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Where the first decision per site goes, phase by phase, at the median file size.

The first decision is ``RobotsTxt.parse(body).allowed(url=..., agent=...)``
on a site's robots.txt (parse, the agent's matcher, one check); ``parser.py``
compares it with Protego over the corpus, this script splits it. For the 200
files around the corpus's median size it times each phase alone (CPU time,
GC on, the best of 5 x 100 calls per file) and prints the median over the
files; a phase's cost is the difference between two cumulative timings where
it cannot be called alone. Protego's parse and check are timed the same way.

Usage: ``python benchmarks/first_decision.py``; reads the corpus as
``parser.py`` does (``$ROBOTSTXT_CORPUS``); no network.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from parser import (
    AGENT,
    FIRST_URL,
    GOALS,
    LIMIT,
    corpus_missing,
    load_corpus,
    protego_parse,
    verdict,
)

from scrapy_rfc9309 import RobotsTxt
from scrapy_rfc9309.parser._groups import group_all
from scrapy_rfc9309.parser._lines import EXACT_KEYS, Warnings, prepare
from scrapy_rfc9309.parser._matcher import AgentMatcher, Rule


def best_us(call: Callable[[], object], calls: int = 100, rounds: int = 5) -> float:
    """Least CPU time of one call, in microseconds."""
    least = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(calls):
            call()
        least = min(least, (time.process_time() - started) / calls)
    return least * 1e6


def loop_floor(body: bytes) -> int:
    """The least a reading of the lines in a Python loop costs: the lines
    split in C, then for each one ``partition`` at the colon and one dict
    look-up of its key, nothing kept (RFC 9309 2.2: every line is read)."""
    found = 0
    keys = EXACT_KEYS
    for text in body.split(b"\n"):
        key = keys.get(text.partition(b":")[0])
        if key is not None:
            found += 1
    return found


def phases(body: bytes) -> dict[str, float]:
    """The cumulative timings of one file, turned into phases."""
    prepared = prepare(body, LIMIT, Warnings())[0]
    grouping = group_all(prepared, Warnings())
    rules: list[Rule] = grouping.rules_for(AGENT.lower())
    parsed = protego_parse(body)

    def parse_and_matcher() -> None:
        RobotsTxt.parse(body).matcher(AGENT)

    def first() -> None:
        RobotsTxt.parse(body).allowed(url=FIRST_URL, agent=AGENT)

    prepare_us = best_us(lambda: prepare(body, LIMIT, Warnings()))
    grouping_us = best_us(lambda: group_all(prepared, Warnings()))
    parse_us = best_us(lambda: RobotsTxt.parse(body))
    rules_us = best_us(lambda: grouping.rules_for(AGENT.lower()))
    matcher_us = best_us(lambda: AgentMatcher(rules))
    with_matcher_us = best_us(parse_and_matcher)
    first_us = best_us(first)
    return {
        "prepare: size limit, byte order marks, line ends, NUL, ASCII test": prepare_us,
        "grouping: lines split in C, then the Python loop over the lines": grouping_us,
        "the rest of parse (argument checks, the RobotsTxt object)": parse_us
        - prepare_us
        - grouping_us,
        "the agent's rules collected": rules_us,
        "the matcher (AgentMatcher of those rules)": matcher_us,
        "the rest of matcher() (token look-up, allows_everything, groups dropped)": (
            with_matcher_us - parse_us - rules_us - matcher_us
        ),
        "the first check (URL to canonical path, a scan of the rules)": first_us - with_matcher_us,
        "ours in all": first_us,
        "floor: any Python loop over the lines (split in C, a partition and a look-up)": (
            best_us(lambda: loop_floor(body))
        ),
        "Protego: parse": best_us(lambda: protego_parse(body)),
        "Protego: a check once parsed": best_us(lambda: parsed.can_fetch(FIRST_URL, AGENT)),
        "Protego in all": best_us(lambda: protego_parse(body).can_fetch(FIRST_URL, AGENT)),
    }


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    if (missing := corpus_missing()) is not None:
        print(missing, file=sys.stderr)
        return 2
    bodies = sorted(load_corpus()[0], key=len)
    middle = len(bodies) // 2
    band = bodies[middle - 100 : middle + 100]
    print(f"{len(band)} files of {len(band[0]):,} to {len(band[-1]):,} octets (median band)")
    timings = [phases(body) for body in band]
    medians = {name: statistics.median(timing[name] for timing in timings) for name in timings[0]}
    for name, median in medians.items():
        print(f"  {name:<76} {median:6.1f} us")
    allowed = medians["Protego in all"] / GOALS["first"]
    name = f"what {GOALS['first']:g}x allows ours in all (Protego in all / {GOALS['first']:g})"
    print(f"  {name:<76} {allowed:6.1f} us")
    ratio = medians["Protego in all"] / medians["ours in all"]
    name = "Protego in all / ours in all (the medians above)"
    print(f"  {name:<76} {ratio:6.2f}x {verdict(ratio, GOALS['first'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
